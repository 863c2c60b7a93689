//! Statistical accumulators: variance and standard deviation, covariance,
//! correlation and linear regression, quantiles and the mode.
//!
//! # Design
//! Moments are kept per group as a count, a mean and a sum of squared
//! deviations, updated with Welford's method (Welford, "Note on a method
//! for calculating corrected sums of squares and products",
//! Technometrics 1962) and merged across partitions with the pairwise
//! formula of Chan, Golub and LeVeque ("Algorithms for computing the sample
//! variance", 1983); the co-moments of two arguments the same way. Both are
//! numerically stable where a sum of squares minus a squared sum is not.
//!
//! Quantiles and the mode are holistic: each group keeps its values (moved,
//! not copied, when partials merge), and the answer is found once, after
//! the last merge, by selection (`select_nth_unstable`, expected linear
//! time) for a quantile, and by sorting the group's values for the mode.

use std::any::Any;
use std::cmp::Ordering;

use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::exec::vector::{Array, Data};
use crate::plan::AggFunc;
use crate::types::{DataType, MICROS_PER_DAY, Value, cmp_f64};

use super::accumulator::{
    Accumulator, Buckets, Gids, Input, downcast, resize, split_vec, take_vec,
};

/// `x` of input row `j` as a float, `None` when NULL.
#[inline]
fn f64_at(a: &Array<'_>, j: usize) -> Option<f64> {
    if a.validity.as_ref().is_some_and(|v| !v.get(j)) {
        return None;
    }
    match &a.data {
        Data::Int(v) => Some(v[j] as f64),
        Data::Float(v) => Some(v[j]),
        Data::Bool(b) => Some(b.get(j) as u8 as f64),
        Data::Str(_) => None,
    }
}

/// The float value of a constant input, `None` when NULL or not a number.
fn scalar_f64(v: &Value) -> Option<f64> {
    match v {
        Value::Int(i) | Value::Timestamp(i) | Value::Date(i) | Value::Interval(i) => {
            Some(*i as f64)
        }
        Value::HugeInt(i) => Some(*i as f64),
        Value::Float(x) => Some(*x),
        Value::Bool(b) => Some(*b as u8 as f64),
        Value::Null | Value::Str(_) => None,
    }
}

/// Calls `f(group, x)` for every non-NULL input value.
fn each_f64(input: Input<'_, '_>, gids: Gids<'_>, mut f: impl FnMut(usize, f64)) -> Result<()> {
    match input {
        Input::Array(a) => {
            for j in 0..gids.len() {
                if let Some(x) = f64_at(a, j) {
                    f(gids.get(j), x);
                }
            }
        }
        Input::Scalar(v) => {
            if let Some(x) = scalar_f64(v) {
                for j in 0..gids.len() {
                    f(gids.get(j), x);
                }
            }
        }
        _ => return Err(Error::Internal("statistical aggregate input".into())),
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// var_samp, var_pop, stddev_samp, stddev_pop

/// Count, mean and sum of squared deviations of one group's values.
#[derive(Debug, Clone, Copy, Default)]
struct Moment {
    n: u64,
    mean: f64,
    m2: f64,
}

impl Moment {
    #[inline]
    fn add(&mut self, x: f64) {
        self.n += 1;
        let d = x - self.mean;
        self.mean += d / self.n as f64;
        self.m2 += d * (x - self.mean);
    }

    fn merge(&mut self, o: &Moment) {
        if o.n == 0 {
            return;
        }
        if self.n == 0 {
            *self = *o;
            return;
        }
        let (na, nb) = (self.n as f64, o.n as f64);
        let n = na + nb;
        let d = o.mean - self.mean;
        self.mean += d * nb / n;
        self.m2 += o.m2 + d * d * na * nb / n;
        self.n += o.n;
    }
}

/// `var_samp`, `var_pop`, `stddev_samp` or `stddev_pop` per group.
pub(super) struct Moments {
    func: AggFunc,
    states: Vec<Moment>,
}

impl Moments {
    pub(super) fn new(func: AggFunc) -> Moments {
        Moments {
            func,
            states: Vec::new(),
        }
    }
}

impl Accumulator for Moments {
    fn update(&mut self, input: Input<'_, '_>, gids: Gids<'_>, groups: usize) -> Result<()> {
        resize(&mut self.states, groups, Moment::default());
        let states = &mut self.states;
        each_f64(input, gids, |g, x| states[g].add(x))
    }

    fn take(&mut self, idx: &[u32]) -> Box<dyn Accumulator> {
        Box::new(Moments {
            func: self.func,
            states: take_vec(&mut self.states, idx),
        })
    }

    fn split(&mut self, buckets: &Buckets) -> Vec<Box<dyn Accumulator>> {
        let func = self.func;
        split_vec(&mut self.states, buckets)
            .into_iter()
            .map(|states| Box::new(Moments { func, states }) as Box<dyn Accumulator>)
            .collect()
    }

    fn merge(&mut self, other: Box<dyn Accumulator>, into: &[u32], groups: usize) -> Result<()> {
        let other = downcast::<Moments>(other)?;
        resize(&mut self.states, groups, Moment::default());
        for (s, &g) in other.states.iter().zip(into) {
            self.states[g as usize].merge(s);
        }
        Ok(())
    }

    fn value(&self, g: usize) -> Value {
        moment_value(self.func, self.states.get(g).copied().unwrap_or_default())
    }

    fn heap_bytes(&self) -> usize {
        self.states.capacity() * std::mem::size_of::<Moment>()
    }

    fn into_any(self: Box<Self>) -> Box<dyn Any> {
        self
    }
}

// ---------------------------------------------------------------------------
// covar_samp, covar_pop, corr, regr_slope, regr_intercept, regr_r2

/// The answer of `func` (a variance or standard deviation) of moments `m`.
fn moment_value(func: AggFunc, m: Moment) -> Value {
    let var = match func {
        AggFunc::VarSamp | AggFunc::StddevSamp if m.n >= 2 => m.m2 / (m.n - 1) as f64,
        AggFunc::VarPop | AggFunc::StddevPop if m.n >= 1 => m.m2 / m.n as f64,
        _ => return Value::Null,
    };
    // Rounding can leave a tiny negative sum of squares.
    let var = var.max(0.0);
    Value::Float(match func {
        AggFunc::StddevSamp | AggFunc::StddevPop => var.sqrt(),
        _ => var,
    })
}

/// Count, means, sums of squared deviations and the sum of co-deviations
/// of one group's pairs `(y, x)`.
#[derive(Debug, Clone, Copy, Default)]
struct CoMoment {
    n: u64,
    mean_y: f64,
    mean_x: f64,
    m2_y: f64,
    m2_x: f64,
    c: f64,
}

impl CoMoment {
    #[inline]
    fn add(&mut self, y: f64, x: f64) {
        self.n += 1;
        let n = self.n as f64;
        let dx = x - self.mean_x;
        let dy = y - self.mean_y;
        self.mean_x += dx / n;
        self.mean_y += dy / n;
        self.m2_x += dx * (x - self.mean_x);
        self.m2_y += dy * (y - self.mean_y);
        self.c += dx * (y - self.mean_y);
    }

    fn merge(&mut self, o: &CoMoment) {
        if o.n == 0 {
            return;
        }
        if self.n == 0 {
            *self = *o;
            return;
        }
        let (na, nb) = (self.n as f64, o.n as f64);
        let n = na + nb;
        let dx = o.mean_x - self.mean_x;
        let dy = o.mean_y - self.mean_y;
        let w = na * nb / n;
        self.mean_x += dx * nb / n;
        self.mean_y += dy * nb / n;
        self.m2_x += o.m2_x + dx * dx * w;
        self.m2_y += o.m2_y + dy * dy * w;
        self.c += o.c + dx * dy * w;
        self.n += o.n;
    }

    /// The aggregate `func` of these pairs.
    fn finish(&self, func: AggFunc) -> Value {
        let n = self.n as f64;
        let v = match func {
            _ if self.n == 0 => return Value::Null,
            AggFunc::CovarPop => self.c / n,
            AggFunc::CovarSamp if self.n >= 2 => self.c / (n - 1.0),
            AggFunc::Corr => self.c / (self.m2_x * self.m2_y).sqrt(),
            // 0/0 is NaN for a constant x, as DuckDB gives.
            AggFunc::RegrSlope => self.c / self.m2_x,
            AggFunc::RegrIntercept if self.m2_x != 0.0 => {
                self.mean_y - self.c / self.m2_x * self.mean_x
            }
            AggFunc::RegrR2 if self.m2_x != 0.0 => {
                if self.m2_y == 0.0 {
                    1.0
                } else {
                    self.c * self.c / (self.m2_x * self.m2_y)
                }
            }
            _ => return Value::Null,
        };
        Value::Float(v)
    }
}

/// An aggregate of pairs per group (see [`AggFunc::takes_pair`]).
pub(super) struct CoMoments {
    func: AggFunc,
    states: Vec<CoMoment>,
}

impl CoMoments {
    pub(super) fn new(func: AggFunc) -> CoMoments {
        CoMoments {
            func,
            states: Vec::new(),
        }
    }
}

/// The float value of input row `j` (`None` when NULL), for either shape of
/// input.
#[inline]
fn input_f64(input: &Input<'_, '_>, j: usize) -> Option<f64> {
    match input {
        Input::Array(a) => f64_at(a, j),
        Input::Scalar(v) => scalar_f64(v),
        _ => None,
    }
}

impl Accumulator for CoMoments {
    /// Only sizes the states (a NULL offered to an empty aggregate): the
    /// values come in pairs, through [`Accumulator::update_pair`].
    fn update(&mut self, input: Input<'_, '_>, gids: Gids<'_>, groups: usize) -> Result<()> {
        if !matches!(input, Input::Scalar(Value::Null)) && gids.len() > 0 {
            return Err(Error::Internal(format!(
                "{}() takes two arguments",
                self.func.name()
            )));
        }
        resize(&mut self.states, groups, CoMoment::default());
        Ok(())
    }

    fn update_pair(
        &mut self,
        y: Input<'_, '_>,
        x: Input<'_, '_>,
        gids: Gids<'_>,
        groups: usize,
    ) -> Result<()> {
        if !matches!(y, Input::Array(_) | Input::Scalar(_))
            || !matches!(x, Input::Array(_) | Input::Scalar(_))
        {
            return Err(Error::Internal("pair aggregate input".into()));
        }
        resize(&mut self.states, groups, CoMoment::default());
        for j in 0..gids.len() {
            if let (Some(yv), Some(xv)) = (input_f64(&y, j), input_f64(&x, j)) {
                self.states[gids.get(j)].add(yv, xv);
            }
        }
        Ok(())
    }

    fn take(&mut self, idx: &[u32]) -> Box<dyn Accumulator> {
        Box::new(CoMoments {
            func: self.func,
            states: take_vec(&mut self.states, idx),
        })
    }

    fn split(&mut self, buckets: &Buckets) -> Vec<Box<dyn Accumulator>> {
        let func = self.func;
        split_vec(&mut self.states, buckets)
            .into_iter()
            .map(|states| Box::new(CoMoments { func, states }) as Box<dyn Accumulator>)
            .collect()
    }

    fn merge(&mut self, other: Box<dyn Accumulator>, into: &[u32], groups: usize) -> Result<()> {
        let other = downcast::<CoMoments>(other)?;
        resize(&mut self.states, groups, CoMoment::default());
        for (s, &g) in other.states.iter().zip(into) {
            self.states[g as usize].merge(s);
        }
        Ok(())
    }

    fn value(&self, g: usize) -> Value {
        self.states
            .get(g)
            .copied()
            .unwrap_or_default()
            .finish(self.func)
    }

    fn heap_bytes(&self) -> usize {
        self.states.capacity() * std::mem::size_of::<CoMoment>()
    }

    fn into_any(self: Box<Self>) -> Box<dyn Any> {
        self
    }
}

// ---------------------------------------------------------------------------
// quantile_cont, quantile_disc, median, mode

/// A value a holistic aggregate keeps: ordered, and turned back into a
/// [`Value`] of the argument's type.
pub(super) trait Sample: Clone + Send + Sync + 'static {
    /// Total order (floats by [`cmp_f64`], strings by bytes).
    fn order(&self, other: &Self) -> Ordering;
    /// The value, of type `dtype`.
    fn to_value(&self, dtype: DataType) -> Value;
    /// As a float, for interpolation; `None` for strings.
    fn as_f64(&self) -> Option<f64>;
    /// Appends the non-NULL values of input row range `0..rows` (each with
    /// its group) to `push`.
    fn each(input: Input<'_, '_>, gids: Gids<'_>, push: impl FnMut(usize, Self)) -> Result<()>;
}

impl Sample for i64 {
    fn order(&self, other: &Self) -> Ordering {
        self.cmp(other)
    }
    fn to_value(&self, dtype: DataType) -> Value {
        match dtype {
            DataType::Bool => Value::Bool(*self != 0),
            _ => Value::from_integer(*self, dtype),
        }
    }
    fn as_f64(&self) -> Option<f64> {
        Some(*self as f64)
    }
    fn each(input: Input<'_, '_>, gids: Gids<'_>, mut push: impl FnMut(usize, i64)) -> Result<()> {
        match input {
            Input::Array(a) => {
                let valid = |j: usize| a.validity.as_ref().is_none_or(|v| v.get(j));
                match &a.data {
                    Data::Int(v) => {
                        for (j, &x) in v.iter().enumerate().take(gids.len()) {
                            if valid(j) {
                                push(gids.get(j), x);
                            }
                        }
                    }
                    Data::Bool(b) => {
                        for j in 0..gids.len() {
                            if valid(j) {
                                push(gids.get(j), b.get(j) as i64);
                            }
                        }
                    }
                    _ => return Err(Error::Internal("quantile of unexpected type".into())),
                }
            }
            Input::Scalar(
                Value::Int(x) | Value::Timestamp(x) | Value::Date(x) | Value::Interval(x),
            ) => {
                for j in 0..gids.len() {
                    push(gids.get(j), *x);
                }
            }
            Input::Scalar(Value::Bool(b)) => {
                for j in 0..gids.len() {
                    push(gids.get(j), *b as i64);
                }
            }
            Input::Scalar(_) => {}
            _ => return Err(Error::Internal("quantile input".into())),
        }
        Ok(())
    }
}

impl Sample for f64 {
    fn order(&self, other: &Self) -> Ordering {
        cmp_f64(*self, *other)
    }
    fn to_value(&self, _: DataType) -> Value {
        Value::Float(*self)
    }
    fn as_f64(&self) -> Option<f64> {
        Some(*self)
    }
    fn each(input: Input<'_, '_>, gids: Gids<'_>, push: impl FnMut(usize, f64)) -> Result<()> {
        each_f64(input, gids, push)
    }
}

impl Sample for Box<str> {
    fn order(&self, other: &Self) -> Ordering {
        self.as_bytes().cmp(other.as_bytes())
    }
    fn to_value(&self, _: DataType) -> Value {
        Value::str(self)
    }
    fn as_f64(&self) -> Option<f64> {
        None
    }
    fn each(
        input: Input<'_, '_>,
        gids: Gids<'_>,
        mut push: impl FnMut(usize, Box<str>),
    ) -> Result<()> {
        match input {
            Input::Array(a) => {
                let Data::Str(s) = &a.data else {
                    return Err(Error::Internal("mode of unexpected type".into()));
                };
                for j in 0..gids.len() {
                    if a.validity.as_ref().is_none_or(|v| v.get(j)) {
                        push(gids.get(j), s.get(j).into());
                    }
                }
            }
            Input::Scalar(Value::Str(x)) => {
                for j in 0..gids.len() {
                    push(gids.get(j), x.as_ref().into());
                }
            }
            Input::Scalar(_) => {}
            _ => return Err(Error::Internal("mode input".into())),
        }
        Ok(())
    }
}

/// A quantile or the mode per group, over the group's values kept whole.
pub(super) struct Holistic<T: Sample> {
    func: AggFunc,
    /// The argument's type (the result's, but for an interpolated integer).
    dtype: DataType,
    values: Vec<Vec<T>>,
    /// Each group's answer, once [`Accumulator::finish`] found them.
    answers: Vec<Value>,
}

impl<T: Sample> Holistic<T> {
    pub(super) fn new(func: AggFunc, dtype: DataType) -> Holistic<T> {
        Holistic {
            func,
            dtype,
            values: Vec::new(),
            answers: Vec::new(),
        }
    }

    fn with(&self, values: Vec<Vec<T>>) -> Box<dyn Accumulator> {
        Box::new(Holistic {
            func: self.func,
            dtype: self.dtype,
            values,
            answers: Vec::new(),
        })
    }
}

/// The answer of `func` over `v` (reordered in place), of argument type
/// `dtype`; NULL when `v` is empty.
fn holistic_answer<T: Sample>(func: AggFunc, dtype: DataType, v: &mut [T]) -> Value {
    if v.is_empty() {
        return Value::Null;
    }
    let n = v.len();
    match func {
        AggFunc::QuantileDisc(q) => {
            // The first value whose share of values at or below it is at
            // least q (SQL's percentile_disc).
            let k = ((q.get() * n as f64).ceil() as usize).clamp(1, n) - 1;
            let (_, x, _) = v.select_nth_unstable_by(k, T::order);
            x.to_value(dtype)
        }
        AggFunc::QuantileDiscDesc(q) => {
            // The same position counted from the largest value (DuckDB's
            // percentile_disc … ORDER BY x DESC).
            let k = ((q.get() * n as f64).ceil() as usize).clamp(1, n);
            let (_, x, _) = v.select_nth_unstable_by(n - k, T::order);
            x.to_value(dtype)
        }
        AggFunc::QuantileCont(q) => {
            let pos = q.get() * (n - 1) as f64;
            let lo = (pos.floor() as usize).min(n - 1);
            let (_, x, above) = v.select_nth_unstable_by(lo, T::order);
            let x = x.clone();
            let frac = pos - lo as f64;
            let (Some(a), true) = (x.as_f64(), frac > 0.0 && !above.is_empty()) else {
                return interpolated(x.as_f64(), &x, dtype);
            };
            let next = above
                .iter()
                .min_by(|p, q| p.order(q))
                .and_then(Sample::as_f64)
                .unwrap_or(a);
            let at = a + (next - a) * frac;
            interpolated(Some(at), &x, dtype)
        }
        _ => {
            // The mode: the longest run in order, the first of equal ones.
            v.sort_unstable_by(T::order);
            let (mut best, mut best_len) = (0, 0);
            let mut i = 0;
            while i < n {
                let mut j = i + 1;
                while j < n && v[j].order(&v[i]).is_eq() {
                    j += 1;
                }
                if j - i > best_len {
                    (best, best_len) = (i, j - i);
                }
                i = j;
            }
            v[best].to_value(dtype)
        }
    }
}

/// A continuous quantile's value `at` of a column of type `dtype`: a
/// timestamp stays a timestamp (rounded to the microsecond), a number is a
/// float; `x` is the value below it, for a string (never interpolated).
fn interpolated<T: Sample>(at: Option<f64>, x: &T, dtype: DataType) -> Value {
    match (at, dtype) {
        (Some(at), DataType::Timestamp) => Value::Timestamp(at.round() as i64),
        (Some(at), _) => Value::Float(at),
        (None, _) => x.to_value(dtype),
    }
}

impl<T: Sample> Accumulator for Holistic<T> {
    fn update(&mut self, input: Input<'_, '_>, gids: Gids<'_>, groups: usize) -> Result<()> {
        resize(&mut self.values, groups, Vec::new());
        let values = &mut self.values;
        T::each(input, gids, |g, x| values[g].push(x))
    }

    fn take(&mut self, idx: &[u32]) -> Box<dyn Accumulator> {
        let values = take_vec(&mut self.values, idx);
        self.with(values)
    }

    fn split(&mut self, buckets: &Buckets) -> Vec<Box<dyn Accumulator>> {
        split_vec(&mut self.values, buckets)
            .into_iter()
            .map(|values| self.with(values))
            .collect()
    }

    fn merge(&mut self, other: Box<dyn Accumulator>, into: &[u32], groups: usize) -> Result<()> {
        let other = downcast::<Holistic<T>>(other)?;
        resize(&mut self.values, groups, Vec::new());
        for (v, &g) in other.values.into_iter().zip(into) {
            let mine = &mut self.values[g as usize];
            if mine.is_empty() {
                *mine = v;
            } else {
                mine.extend(v);
            }
        }
        Ok(())
    }

    fn finish(&mut self) {
        let (func, dtype) = (self.func, self.dtype);
        self.answers = self
            .values
            .par_iter_mut()
            .map(|v| holistic_answer(func, dtype, v))
            .collect();
    }

    fn value(&self, g: usize) -> Value {
        if let Some(v) = self.answers.get(g) {
            return v.clone();
        }
        let mut v = self.values.get(g).cloned().unwrap_or_default();
        holistic_answer(self.func, self.dtype, &mut v)
    }

    fn heap_bytes(&self) -> usize {
        self.values.capacity() * 24
            + self
                .values
                .iter()
                .map(|v| v.capacity() * std::mem::size_of::<T>())
                .sum::<usize>()
    }

    fn into_any(self: Box<Self>) -> Box<dyn Any> {
        self
    }
}

/// The answer of `func` over one window frame's values, NULLs skipped as
/// the grouped accumulators skip them: `x` the first argument's values in
/// frame order, `y` the second's (the pair aggregates' `x`, `arg_min`'s
/// and `arg_max`'s key); `dtype` the first argument's type, `separator`
/// `string_agg`'s.
///
/// Recomputed from the frame's values each call (Welford moments, a
/// selection for a quantile, a sort for the mode): linear in the frame
/// (the mode n log n).
pub fn frame_answer(
    func: AggFunc,
    dtype: DataType,
    x: &[&Value],
    y: &[&Value],
    separator: &str,
) -> Value {
    match func {
        AggFunc::VarSamp | AggFunc::VarPop | AggFunc::StddevSamp | AggFunc::StddevPop => {
            let mut m = Moment::default();
            x.iter()
                .filter_map(|v| scalar_f64(v))
                .for_each(|v| m.add(v));
            moment_value(func, m)
        }
        _ if func.takes_pair() => {
            let mut m = CoMoment::default();
            for (a, b) in x.iter().zip(y) {
                if let (Some(a), Some(b)) = (scalar_f64(a), scalar_f64(b)) {
                    m.add(a, b);
                }
            }
            m.finish(func)
        }
        // Between two dates lies a time of day: the continuous quantile
        // of dates is a timestamp, as the grouped path makes it.
        AggFunc::QuantileCont(_) if dtype == DataType::Date => {
            let mut v: Vec<i64> = x
                .iter()
                .filter_map(|v| match v {
                    Value::Date(d) => d.checked_mul(MICROS_PER_DAY),
                    _ => None,
                })
                .collect();
            holistic_answer(func, DataType::Timestamp, &mut v)
        }
        AggFunc::QuantileCont(_)
        | AggFunc::QuantileDisc(_)
        | AggFunc::QuantileDiscDesc(_)
        | AggFunc::Mode => match dtype {
            DataType::Float => {
                let mut v: Vec<f64> = x.iter().filter_map(|v| v.as_f64()).collect();
                holistic_answer(func, dtype, &mut v)
            }
            DataType::Str => {
                let mut v: Vec<Box<str>> = x
                    .iter()
                    .filter_map(|v| match v {
                        Value::Str(s) => Some(Box::from(&**s)),
                        _ => None,
                    })
                    .collect();
                holistic_answer(func, dtype, &mut v)
            }
            _ => {
                let mut v: Vec<i64> = x
                    .iter()
                    .filter_map(|v| match v {
                        Value::Int(i)
                        | Value::Timestamp(i)
                        | Value::Date(i)
                        | Value::Interval(i) => Some(*i),
                        Value::Bool(b) => Some(i64::from(*b)),
                        _ => None,
                    })
                    .collect();
                holistic_answer(func, dtype, &mut v)
            }
        },
        AggFunc::ArgMin | AggFunc::ArgMax => {
            // Of the rows where both are non-NULL, the best key; of tied
            // keys the smallest argument.
            let mut best: Option<(&Value, &Value)> = None;
            for (a, k) in x.iter().zip(y) {
                if a.is_null() || k.is_null() {
                    continue;
                }
                let better = match best {
                    None => true,
                    Some((ba, bk)) => {
                        let o = k.total_cmp(bk);
                        let o = if func == AggFunc::ArgMin {
                            o
                        } else {
                            o.reverse()
                        };
                        o.is_lt() || (o.is_eq() && a.total_cmp(ba).is_lt())
                    }
                };
                if better {
                    best = Some((a, k));
                }
            }
            best.map_or(Value::Null, |(a, _)| (*a).clone())
        }
        AggFunc::StringAgg { .. } => {
            let mut out: Option<String> = None;
            for v in x.iter().filter(|v| !v.is_null()) {
                let s = match out.as_mut() {
                    Some(s) => {
                        s.push_str(separator);
                        s
                    }
                    None => out.insert(String::new()),
                };
                match v {
                    Value::Str(t) => s.push_str(t),
                    v => s.push_str(&v.to_string()),
                }
            }
            out.map_or(Value::Null, |s| Value::str(&s))
        }
        _ => Value::Null,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::expr::Fraction;

    fn q(f: f64) -> Fraction {
        Fraction::new(f).unwrap()
    }

    #[test]
    fn quantiles_follow_sql_positions() {
        let cont = |f: f64, v: &[i64]| {
            holistic_answer(AggFunc::QuantileCont(q(f)), DataType::Int, &mut v.to_vec())
        };
        let disc = |f: f64, v: &[i64]| {
            holistic_answer(AggFunc::QuantileDisc(q(f)), DataType::Int, &mut v.to_vec())
        };
        assert_eq!(cont(0.5, &[4, 1, 3, 2]), Value::Float(2.5));
        assert_eq!(cont(0.3, &[4, 1, 3, 2]), Value::Float(1.9));
        assert_eq!(cont(1.0, &[4, 1, 3, 2]), Value::Float(4.0));
        assert_eq!(disc(0.3, &[4, 1, 3, 2]), Value::Int(2));
        assert_eq!(disc(0.0, &[4, 1, 3, 2]), Value::Int(1));
        assert_eq!(disc(0.5, &[2, 1]), Value::Int(1));
        assert_eq!(cont(0.5, &[]), Value::Null);
        let mode = holistic_answer(AggFunc::Mode, DataType::Int, &mut [3i64, 1, 3, 1, 2]);
        assert_eq!(mode, Value::Int(1));
    }

    #[test]
    fn descending_discrete_quantiles_count_from_the_largest() {
        // DuckDB 2.0 over 1..=10: percentile_disc(f) WITHIN GROUP (ORDER
        // BY x DESC) for f = 0, 0.1, 0.25, 0.5, 0.6, 0.75, 1.
        let ten: Vec<i64> = (1..=10).collect();
        for (f, want) in [
            (0.0, 10),
            (0.1, 10),
            (0.25, 8),
            (0.5, 6),
            (0.6, 5),
            (0.75, 3),
            (1.0, 1),
        ] {
            let got = holistic_answer(
                AggFunc::QuantileDiscDesc(q(f)),
                DataType::Int,
                &mut ten.clone(),
            );
            assert_eq!(got, Value::Int(want), "f = {f}");
        }
        let none: &mut [i64] = &mut [];
        let empty = holistic_answer(AggFunc::QuantileDiscDesc(q(0.5)), DataType::Int, none);
        assert_eq!(empty, Value::Null);
    }

    #[test]
    fn merged_moments_equal_one_pass() {
        let xs: Vec<f64> = (0..100)
            .map(|i| (i * 37 % 101) as f64 * 0.5 + 1e6)
            .collect();
        let mut whole = Moment::default();
        xs.iter().for_each(|&x| whole.add(x));
        let (mut a, mut b) = (Moment::default(), Moment::default());
        xs[..30].iter().for_each(|&x| a.add(x));
        xs[30..].iter().for_each(|&x| b.add(x));
        a.merge(&b);
        assert_eq!(a.n, whole.n);
        assert!((a.m2 - whole.m2).abs() <= 1e-9 * whole.m2);
        assert!((a.mean - whole.mean).abs() <= 1e-9 * whole.mean);
    }
}
