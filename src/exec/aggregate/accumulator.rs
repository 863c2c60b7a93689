//! Accumulators: the state of one aggregate for every group, updated a
//! batch at a time.
//!
//! # Design
//! In the spirit of DataFusion's `GroupsAccumulator`: an accumulator holds
//! one state per group id (dense, from 0) in typed vectors, and
//! [`Accumulator::update`] folds a batch of input values given the group id
//! of each row — one dispatch per batch on the input's physical type, then a
//! monomorphic loop. Partials of different partitions combine with
//! [`Accumulator::take`] (move out the states of some groups, for the
//! radix-partitioned merge) and [`Accumulator::merge`]. Each aggregate is
//! written once, generic over its value type, and works for every group-key
//! shape.
//!
//! Per-group distinct sets and HyperLogLog sketches start small (a short
//! vector; sparse register pairs) and grow only for groups that see many
//! values.

use hashbrown::HashSet;
use rayon::prelude::*;
use std::any::Any;

use crate::error::{Error, Result};
use crate::kernel::hash::{canonical_f64_bits, hash_f64, hash_i64, hash_str128, mix64};
use crate::plan::{AggCall, AggFunc, Expr};
use crate::store::with_codes;
use crate::store::{Code, Column, ColumnData};
use crate::types::{DataType, Value, cmp_f64};

use super::distinct::{DistinctKey, DistinctSet};
use super::hll::{HyperLogLog, pair_of, update_dense};
use super::ordered::{ArgExtreme, StringAgg};
use super::statistics::{CoMoments, Holistic, Moments};
use crate::exec::codecs::{self, GroupSums};
use crate::exec::vector::{Array, Data, Rows, Strs};

/// Which group each input row belongs to.
#[derive(Debug, Clone, Copy)]
pub enum Gids<'g> {
    /// Every row is in group 0 (a global aggregate, or one group in the
    /// partition); `n` rows.
    Single(usize),
    /// Row `j` is in group `ids[j]`.
    Ids(&'g [u32]),
}

impl Gids<'_> {
    /// Number of rows.
    pub fn len(&self) -> usize {
        match self {
            Gids::Single(n) => *n,
            Gids::Ids(ids) => ids.len(),
        }
    }

    /// The rows an idempotent fold (min, max, a distinct set or sketch)
    /// needs to see a value that is the same at every row: one row of a
    /// single group, every row otherwise (perf: `min(EventDate)` over 10M
    /// rows, constant in most partitions, offered the constant 65,536
    /// times per partition).
    fn idempotent_len(&self) -> usize {
        match self {
            Gids::Single(n) => (*n).min(1),
            Gids::Ids(ids) => ids.len(),
        }
    }

    /// The group of row `j`.
    #[inline]
    pub(super) fn get(&self, j: usize) -> usize {
        match self {
            Gids::Single(_) => 0,
            Gids::Ids(ids) => ids[j] as usize,
        }
    }
}

/// The values an accumulator folds, at the selected rows.
#[derive(Clone, Copy)]
pub enum Input<'x, 'a> {
    /// Rows only (`count(*)`).
    Rows,
    /// Evaluated values.
    Array(&'x Array<'a>),
    /// The same value at every row.
    Scalar(&'x Value),
    /// A plain column, read from its codec in place.
    Column(&'x Column, Rows<'x>),
}

/// The state of one aggregate for every group of a partial.
pub trait Accumulator: Send + Sync {
    /// Folds a batch: input row `j` belongs to group `gids[j]`; the groups
    /// are `0..groups` (states grow to fit).
    ///
    /// # Errors
    /// An input the accumulator does not take (a bug in the caller).
    fn update(&mut self, input: Input<'_, '_>, gids: Gids<'_>, groups: usize) -> Result<()>;

    /// Folds a batch of pairs, for an aggregate that
    /// [takes a pair](AggFunc::takes_pair): row `j` of `y` and of `x`
    /// belong to group `gids[j]`.
    ///
    /// # Errors
    /// An accumulator of one argument (a bug in the caller).
    fn update_pair(
        &mut self,
        _y: Input<'_, '_>,
        _x: Input<'_, '_>,
        _gids: Gids<'_>,
        _groups: usize,
    ) -> Result<()> {
        Err(Error::Internal(
            "a pair offered to an aggregate of one argument".into(),
        ))
    }

    /// Says that the next updates of this single-group accumulator bring
    /// `rows` rows in all (a partition's, batch after batch), so that a
    /// state can be sized once from what the first batch shows.
    fn expect_rows(&mut self, _rows: usize) {}

    /// Moves the states of groups `idx` (in that order) out into a new
    /// accumulator of the same kind; the states left behind are empty.
    fn take(&mut self, idx: &[u32]) -> Box<dyn Accumulator>;

    /// Moves every group's state out into one accumulator per bucket:
    /// group `g` goes to bucket `buckets.of()[g]`, after the groups before
    /// it of the same bucket. The same as [`Accumulator::take`] of each
    /// bucket's ascending groups, but in one pass over the states: taking 128 buckets' groups one bucket at
    /// a time read every state's cache line about eight times (perf of
    /// shapes `computed_key_mod`: `take` was a fifth of the query). The
    /// states left behind are empty.
    fn split(&mut self, buckets: &Buckets) -> Vec<Box<dyn Accumulator>> {
        buckets.lists().iter().map(|idx| self.take(idx)).collect()
    }

    /// Folds `other` (an accumulator of the same kind) into this one: its
    /// group `i` into group `into[i]`; the groups are `0..groups`.
    ///
    /// # Errors
    /// `other` of another kind (a bug).
    fn merge(&mut self, other: Box<dyn Accumulator>, into: &[u32], groups: usize) -> Result<()>;

    /// Checks that every group's final value can be represented; call it
    /// once before reading [`Accumulator::value`].
    ///
    /// # Errors
    /// A final value that cannot be represented (no accumulator has one
    /// today: an integer sum past i64 is a [`Value::HugeInt`]).
    fn check(&self) -> Result<()> {
        Ok(())
    }

    /// Completes work [`Accumulator::merge`] left for later, such as
    /// distinct sets merged per group in parallel; call it once after the
    /// last merge and before [`Accumulator::value`]. Without it, values
    /// are still right, only slower to read.
    fn finish(&mut self) {}

    /// The final value of group `g`, read one group at a time so a top-n
    /// over groups finishes only the groups it keeps. A group the states
    /// never grew to reads as empty (count 0, else NULL). Meaningful only
    /// after [`Accumulator::check`] succeeded.
    fn value(&self, g: usize) -> Value;

    /// Group `g`'s value when it is a non-NULL integer read without
    /// building a [`Value`] (a count, an integer sum), else `None` (read
    /// [`Accumulator::value`]): a top-n over groups compares most groups on
    /// it alone. Some exactly when `value(g)` is that `Value::Int`.
    fn int_value(&self, _g: usize) -> Option<i64> {
        None
    }

    /// Heap bytes held, for the memory budget.
    fn heap_bytes(&self) -> usize;

    /// The accumulator as `Any`, for [`Accumulator::merge`] to recover its
    /// concrete type.
    fn into_any(self: Box<Self>) -> Box<dyn Any>;
}

/// `other` as the concrete accumulator `T`.
///
/// # Errors
/// An accumulator of another kind (a bug).
pub(super) fn downcast<T: 'static>(other: Box<dyn Accumulator>) -> Result<Box<T>> {
    other
        .into_any()
        .downcast::<T>()
        .map_err(|_| Error::Internal("merging accumulators of different kinds".into()))
}

/// Grows the states `v` to `groups`, new ones `fill`.
pub(super) fn resize<T: Clone>(v: &mut Vec<T>, groups: usize, fill: T) {
    if v.len() < groups {
        v.resize(groups, fill);
    }
}

/// The states of groups `idx` moved out, in that order; defaults are
/// left behind.
pub(super) fn take_vec<T: Clone + Default>(v: &mut [T], idx: &[u32]) -> Vec<T> {
    idx.iter()
        .map(|&i| std::mem::take(&mut v[i as usize]))
        .collect()
}

/// Bucket numbers of a partial's groups (rows), with how many fall in each
/// bucket: what a radix split deals states out by.
pub struct Buckets {
    of: Vec<u16>,
    counts: Vec<usize>,
}

impl Buckets {
    /// Row `i` in bucket `of[i]`, of `buckets` buckets (each number below
    /// it, at most 2^16).
    pub fn new(of: Vec<u16>, buckets: usize) -> Buckets {
        let mut counts = vec![0usize; buckets];
        for &b in &of {
            counts[b as usize] += 1;
        }
        Buckets { of, counts }
    }

    /// How many rows fall in each bucket.
    pub fn counts(&self) -> &[usize] {
        &self.counts
    }

    /// The rows of each bucket, ascending.
    pub fn lists(&self) -> Vec<Vec<u32>> {
        let mut out: Vec<Vec<u32>> = self.counts.iter().map(|&c| Vec::with_capacity(c)).collect();
        for (g, &b) in self.of.iter().enumerate() {
            out[b as usize].push(g as u32);
        }
        out
    }

    /// The bucket of each row, in order.
    pub fn of(&self) -> &[u16] {
        &self.of
    }

    /// `items` dealt into a vector per bucket in one pass: item `i` goes
    /// to bucket `of[i]`; items past the rows are dropped. Each vector is
    /// allocated once, to its count, and filled without a growth check:
    /// with the growth path inlined, each push reloaded the vector's fields
    /// and the split of shapes `computed_key_mod` ran a fifth slower.
    pub fn scatter<T>(&self, items: impl IntoIterator<Item = T>) -> Vec<Vec<T>> {
        let mut out: Vec<Vec<T>> = self.counts.iter().map(|&c| Vec::with_capacity(c)).collect();
        for (x, &b) in items.into_iter().zip(&self.of) {
            let v = &mut out[b as usize];
            // Always true: `counts` was counted from `of`.
            if v.len() < v.capacity() {
                v.push(x);
            }
        }
        out
    }
}

/// [`Accumulator::split`] of one state vector: `v` emptied into a vector
/// per bucket (states the vector never grew to are defaults).
pub(super) fn split_vec<T: Default>(v: &mut Vec<T>, buckets: &Buckets) -> Vec<Vec<T>> {
    let states = std::mem::take(v)
        .into_iter()
        .chain(std::iter::repeat_with(T::default));
    buckets.scatter(states)
}

/// Validity of input row `j`.
#[inline]
fn valid_at(a: &Array<'_>, j: usize) -> bool {
    a.validity.as_ref().is_none_or(|v| v.get(j))
}

/// A new accumulator for `call`.
///
/// # Errors
/// An aggregate without an argument where one is needed (a bug).
pub fn new_accumulator(call: &AggCall) -> Result<Box<dyn Accumulator>> {
    let arg = call.arg.as_ref().map(Expr::dtype);
    let need = || Error::Internal(format!("{} without argument", call.func.name()));
    Ok(match call.func {
        AggFunc::CountStar => Box::new(Count::default()),
        AggFunc::Count => Box::new(Count::default()),
        AggFunc::Sum | AggFunc::Avg => {
            let avg = call.func == AggFunc::Avg;
            match arg.ok_or_else(need)? {
                DataType::Int => Box::new(Sum::<i128>::new(avg)),
                _ => Box::new(Sum::<f64>::new(avg)),
            }
        }
        AggFunc::Min | AggFunc::Max => {
            let min = call.func == AggFunc::Min;
            match arg.ok_or_else(need)? {
                DataType::Float => Box::new(MinMax::<f64>::new(min, DataType::Float)),
                DataType::Str => Box::new(MinMax::<Option<Box<str>>>::new(min, DataType::Str)),
                DataType::Bool => Box::new(MinMax::<i64>::new(min, DataType::Bool)),
                t => Box::new(MinMax::<i64>::new(min, t)),
            }
        }
        AggFunc::CountDistinct => match arg.ok_or_else(need)? {
            DataType::Str => Box::new(Distinct::<u128>::default()),
            _ => Box::new(Distinct::<u64>::default()),
        },
        AggFunc::ApproxCountDistinct => Box::new(Approx::default()),
        AggFunc::VarSamp | AggFunc::VarPop | AggFunc::StddevSamp | AggFunc::StddevPop => {
            Box::new(Moments::new(call.func))
        }
        AggFunc::CovarSamp
        | AggFunc::CovarPop
        | AggFunc::Corr
        | AggFunc::RegrSlope
        | AggFunc::RegrIntercept
        | AggFunc::RegrR2 => Box::new(CoMoments::new(call.func)),
        AggFunc::StringAgg { .. } => Box::new(StringAgg::new(
            call.func,
            call.separator.clone().unwrap_or_else(|| ",".into()),
            call.arg2.is_some(),
        )),
        AggFunc::ArgMin | AggFunc::ArgMax => Box::new(ArgExtreme::new(call.func)),
        AggFunc::QuantileCont(_)
        | AggFunc::QuantileDisc(_)
        | AggFunc::QuantileDiscDesc(_)
        | AggFunc::Mode => match arg.ok_or_else(need)? {
            DataType::Float => Box::new(Holistic::<f64>::new(call.func, DataType::Float)),
            DataType::Str => Box::new(Holistic::<Box<str>>::new(call.func, DataType::Str)),
            t => Box::new(Holistic::<i64>::new(call.func, t)),
        },
    })
}

// ---------------------------------------------------------------------------
// count(*), count(x)

/// Rows (or non-NULL values) per group.
#[derive(Default)]
struct Count {
    counts: Vec<u64>,
}

impl Count {
    /// Group `g`'s count (0 for a group the counts never grew to).
    fn count(&self, g: usize) -> i64 {
        self.counts.get(g).map_or(0, |&c| c as i64)
    }
}

impl Accumulator for Count {
    fn update(&mut self, input: Input<'_, '_>, gids: Gids<'_>, groups: usize) -> Result<()> {
        resize(&mut self.counts, groups, 0);
        let c = &mut self.counts;
        match (input, gids) {
            (Input::Rows, Gids::Single(n)) => c[0] += n as u64,
            (Input::Rows, Gids::Ids(ids)) => {
                for &g in ids {
                    c[g as usize] += 1;
                }
            }
            (Input::Scalar(v), _) => {
                if !v.is_null() {
                    return self.update(Input::Rows, gids, groups);
                }
            }
            (Input::Array(a), _) => match &a.validity {
                None => return self.update(Input::Rows, gids, groups),
                Some(v) => {
                    for j in 0..gids.len() {
                        c[gids.get(j)] += v.get(j) as u64;
                    }
                }
            },
            (Input::Column(col, rows), _) => match col.packed_validity() {
                None => return self.update(Input::Rows, gids, groups),
                Some(v) => {
                    let v: &crate::store::Bitmap = &v;
                    for j in 0..gids.len() {
                        c[gids.get(j)] += v.get(rows.row(j)) as u64;
                    }
                }
            },
        }
        Ok(())
    }

    fn take(&mut self, idx: &[u32]) -> Box<dyn Accumulator> {
        Box::new(Count {
            counts: take_vec(&mut self.counts, idx),
        })
    }

    fn split(&mut self, buckets: &Buckets) -> Vec<Box<dyn Accumulator>> {
        split_vec(&mut self.counts, buckets)
            .into_iter()
            .map(|counts| Box::new(Count { counts }) as Box<dyn Accumulator>)
            .collect()
    }

    fn merge(&mut self, other: Box<dyn Accumulator>, into: &[u32], groups: usize) -> Result<()> {
        let other = downcast::<Count>(other)?;
        resize(&mut self.counts, groups, 0);
        for (c, &g) in other.counts.iter().zip(into) {
            self.counts[g as usize] += c;
        }
        Ok(())
    }

    fn value(&self, g: usize) -> Value {
        Value::Int(self.count(g))
    }

    fn int_value(&self, g: usize) -> Option<i64> {
        Some(self.count(g))
    }

    fn heap_bytes(&self) -> usize {
        self.counts.capacity() * 8
    }

    fn into_any(self: Box<Self>) -> Box<dyn Any> {
        self
    }
}

// ---------------------------------------------------------------------------
// sum(x), avg(x)

/// A running sum: exact `i128` for integers, `f64` for floats.
trait SumType: Copy + Default + Send + Sync + 'static + std::ops::AddAssign {
    fn from_i64(v: i64) -> Self;
    fn from_f64(v: f64) -> Self;
    fn finish(self, count: u64, avg: bool) -> Result<Value>;
    /// `base · count + scale · code_sum`, exactly for integers.
    fn from_offsets(base: i64, scale: u64, count: u64, code_sum: u128) -> Self;
    /// An integer sum that fits i64; `None` for floats.
    fn to_i64(self) -> Option<i64>;
    /// The sum with an exact decimal part `digits · 10^exponent` added:
    /// one rounding of the decimal, then the float part (integer sums
    /// never have one).
    fn plus_decimal(self, digits: i128, exponent: i8) -> Self;
}

/// `digits · 10^exponent` as the nearest f64 (one rounding).
fn decimal_f64(digits: i128, exponent: i8) -> f64 {
    crate::store::DecimalSum {
        digits,
        exponent,
        count: 0,
    }
    .to_f64()
}

/// `10^(from - to)` when `from >= to` and it fits an i64.
fn pow10_between(from: i8, to: i8) -> Option<i64> {
    let shift = u32::try_from(i32::from(from) - i32::from(to)).ok()?;
    10i64.checked_pow(shift)
}

impl SumType for i128 {
    #[inline]
    fn from_i64(v: i64) -> Self {
        v as i128
    }
    #[inline]
    fn from_f64(v: f64) -> Self {
        v as i128
    }
    fn finish(self, count: u64, avg: bool) -> Result<Value> {
        Ok(if count == 0 {
            Value::Null
        } else if avg {
            Value::Float(self as f64 / count as f64)
        } else {
            // Exact past i64 too, as DuckDB's HUGEINT sums are.
            Value::from_i128(self)
        })
    }
    fn from_offsets(base: i64, scale: u64, count: u64, code_sum: u128) -> Self {
        base as i128 * count as i128 + scale as i128 * code_sum as i128
    }
    fn to_i64(self) -> Option<i64> {
        i64::try_from(self).ok()
    }
    fn plus_decimal(self, _: i128, _: i8) -> Self {
        self
    }
}

impl SumType for f64 {
    #[inline]
    fn from_i64(v: i64) -> Self {
        v as f64
    }
    #[inline]
    fn from_f64(v: f64) -> Self {
        v
    }
    fn finish(self, count: u64, avg: bool) -> Result<Value> {
        Ok(if count == 0 {
            Value::Null
        } else if avg {
            Value::Float(self / count as f64)
        } else {
            Value::Float(self)
        })
    }
    fn from_offsets(base: i64, scale: u64, count: u64, code_sum: u128) -> Self {
        (i128::from_offsets(base, scale, count, code_sum)) as f64
    }
    fn to_i64(self) -> Option<i64> {
        None
    }
    fn plus_decimal(self, digits: i128, exponent: i8) -> Self {
        if digits == 0 {
            self
        } else {
            decimal_f64(digits, exponent) + self
        }
    }
}

/// `sum` or `avg`: a sum and a count of non-NULL values per group, and
/// for floats the exact decimal part of the ALP partitions: the unscaled
/// sum of their digits (Afroozeh et al., SIGMOD 2023) at one power of ten
/// for all groups, so that a money column sums exactly to the cent across
/// partitions and is scaled once, at the end. `decimals` is empty until an
/// ALP partition comes; the f64 `sums` then hold only the other rows (and
/// any group whose digits would pass an i64: about 9.2e16 in cents).
struct Sum<S: SumType> {
    sums: Vec<S>,
    counts: Vec<u64>,
    decimals: Vec<i64>,
    exponent: i8,
    avg: bool,
}

impl<S: SumType> Sum<S> {
    fn new(avg: bool) -> Sum<S> {
        Sum {
            sums: Vec::new(),
            counts: Vec::new(),
            decimals: Vec::new(),
            exponent: 0,
            avg,
        }
    }

    /// Makes room for `groups` decimals of digits at `10^exponent`, and
    /// returns the factor that brings such digits to the accumulator's
    /// power of ten, which drops to `exponent` when that is smaller (the
    /// digits kept are scaled up once). Digits that would pass an i64
    /// move into the float sums; `None` then for the incoming digits too.
    fn align(&mut self, exponent: i8, groups: usize) -> Option<i64> {
        if self.decimals.is_empty() {
            self.exponent = exponent;
        } else if exponent < self.exponent {
            match pow10_between(self.exponent, exponent) {
                Some(f) if self.decimals.iter().all(|d| d.checked_mul(f).is_some()) => {
                    self.decimals.iter_mut().for_each(|d| *d *= f);
                    self.exponent = exponent;
                }
                _ => {
                    let e = self.exponent;
                    for (s, d) in self.sums.iter_mut().zip(&mut self.decimals) {
                        *s += S::from_f64(decimal_f64(i128::from(std::mem::take(d)), e));
                    }
                    self.exponent = exponent;
                }
            }
        }
        resize(&mut self.decimals, groups, 0);
        pow10_between(exponent, self.exponent)
    }

    /// Adds `digits · 10^exponent` (brought to the accumulator's power of
    /// ten by `factor`, from [`Sum::align`]) to group `g`; past an i64 it
    /// goes to the float sum instead.
    #[inline]
    fn add_digits(&mut self, g: usize, digits: i128, exponent: i8, factor: Option<i64>) {
        let sum = factor
            .zip(i64::try_from(digits).ok())
            .and_then(|(f, d)| d.checked_mul(f))
            .and_then(|d| self.decimals[g].checked_add(d));
        match sum {
            Some(d) => self.decimals[g] = d,
            None => self.sums[g] += S::from_f64(decimal_f64(digits, exponent)),
        }
    }

    /// Group `g`'s sum, its decimal part included.
    fn total(&self, g: usize) -> Option<S> {
        let d = self.decimals.get(g).copied().unwrap_or(0);
        self.sums
            .get(g)
            .map(|&s| s.plus_decimal(i128::from(d), self.exponent))
    }

    #[inline]
    fn add_all<T: Copy>(
        &mut self,
        values: &[T],
        gids: Gids<'_>,
        valid: impl Fn(usize) -> bool,
        conv: impl Fn(T) -> S,
        all_valid: bool,
    ) {
        let (s, c) = (&mut self.sums, &mut self.counts);
        match (gids, all_valid) {
            (Gids::Single(_), true) => {
                // Eight independent running sums: one chain of f64 adds
                // waits four cycles per row on the one before. Floats then
                // round in another order than row by row, as the merge of
                // partitions already does (within the reference's
                // tolerance); integer sums are exact either way.
                let mut lanes = [S::default(); 8];
                let chunks = values.chunks_exact(8);
                let rest = chunks.remainder();
                for chunk in chunks {
                    for (lane, &x) in lanes.iter_mut().zip(chunk) {
                        *lane += conv(x);
                    }
                }
                let mut acc = S::default();
                for lane in lanes {
                    acc += lane;
                }
                for &x in rest {
                    acc += conv(x);
                }
                s[0] += acc;
                c[0] += values.len() as u64;
            }
            (Gids::Ids(ids), true) => {
                for (&g, &x) in ids.iter().zip(values) {
                    s[g as usize] += conv(x);
                    c[g as usize] += 1;
                }
            }
            (Gids::Single(_), false) => {
                // As above, skipping NULLs (a dimension join's gathered
                // column is NULL where a row has no partner).
                let mut lanes = [S::default(); 8];
                let mut n = 0u64;
                for (j, &x) in values.iter().enumerate() {
                    if valid(j) {
                        lanes[j % 8] += conv(x);
                        n += 1;
                    }
                }
                let mut acc = S::default();
                for lane in lanes {
                    acc += lane;
                }
                s[0] += acc;
                c[0] += n;
            }
            (Gids::Ids(ids), false) => {
                for (j, (&g, &x)) in ids.iter().zip(values).enumerate() {
                    if valid(j) {
                        s[g as usize] += conv(x);
                        c[g as usize] += 1;
                    }
                }
            }
        }
    }
}

impl<S: SumType> Accumulator for Sum<S> {
    fn update(&mut self, input: Input<'_, '_>, gids: Gids<'_>, groups: usize) -> Result<()> {
        resize(&mut self.sums, groups, S::default());
        resize(&mut self.counts, groups, 0);
        match input {
            Input::Array(a) => {
                let all = a.validity.is_none();
                match &a.data {
                    Data::Int(v) => self.add_all(v, gids, |j| valid_at(a, j), S::from_i64, all),
                    Data::Float(v) => self.add_all(v, gids, |j| valid_at(a, j), S::from_f64, all),
                    _ => return Err(Error::Internal("sum of a non-number".into())),
                }
            }
            Input::Scalar(v) => {
                let x = match v {
                    Value::Int(i) => S::from_i64(*i),
                    Value::Float(f) => S::from_f64(*f),
                    _ => return Ok(()),
                };
                // Repeated addition, to round exactly as a row-by-row sum
                // would.
                for j in 0..gids.len() {
                    let g = gids.get(j);
                    self.sums[g] += x;
                    self.counts[g] += 1;
                }
            }
            Input::Column(col, rows) => {
                let validity = col.packed_validity();
                let valid = |j: usize| validity.as_deref().is_none_or(|b| b.get(rows.row(j)));
                let all = col.validity.is_none();
                match &col.data {
                    ColumnData::Float(v) => match rows.sel {
                        None => self.add_all(&v[..], gids, valid, S::from_f64, all),
                        Some(sel) => {
                            let vals: Vec<f64> = sel.iter().map(|&r| v[r as usize]).collect();
                            self.add_all(&vals, gids, valid, S::from_f64, all)
                        }
                    },
                    ColumnData::Single(f) => {
                        // f32 codes: the rows decoded once, then summed as
                        // f64 rows are (same order, validity read in
                        // place rather than gathered per batch).
                        let mut vals = Vec::with_capacity(rows.len);
                        match rows.range() {
                            Some(r) => f.decode_range(r, &mut vals),
                            None => f.decode_selection(rows.sel.unwrap_or_default(), &mut vals),
                        }
                        self.add_all(&vals, gids, valid, S::from_f64, all)
                    }
                    ColumnData::Offset { base, scale, codes }
                        if matches!(gids, Gids::Ids(_)) && groups > rows.len / 2 =>
                    {
                        // About a row per group (a near-unique key): each
                        // row's value straight into its group, without the
                        // per-group code sums below, whose zeroed arrays
                        // and pass over every group cost as much as the
                        // rows (perf: a tenth of `u % 2000000` grouped).
                        with_codes!(codes, k => for j in 0..gids.len() {
                            if valid(j) {
                                let g = gids.get(j);
                                let code = k[rows.row(j)].to_u64() as u128;
                                self.sums[g] += S::from_offsets(*base, *scale, 1, code);
                                self.counts[g] += 1;
                            }
                        });
                    }
                    ColumnData::Offset { base, scale, codes } => {
                        // Sum codes per group, then base·count + scale·sum:
                        // the offset codec is sum-preserving.
                        let n = groups;
                        let mut code_sums = vec![0u128; n];
                        let mut counts = vec![0u64; n];
                        with_codes!(codes, k => match (rows.sel, all, gids) {
                            (None, true, Gids::Single(_)) => {
                                let mut acc = 0u128;
                                for &x in k.iter() {
                                    acc += x.to_u64() as u128;
                                }
                                code_sums[0] += acc;
                                counts[0] += k.len() as u64;
                            }
                            (None, true, Gids::Ids(ids)) => {
                                for (&g, &x) in ids.iter().zip(k.iter()) {
                                    code_sums[g as usize] += x.to_u64() as u128;
                                    counts[g as usize] += 1;
                                }
                            }
                            _ => {
                                for j in 0..gids.len() {
                                    if valid(j) {
                                        let g = gids.get(j);
                                        code_sums[g] += k[rows.row(j)].to_u64() as u128;
                                        counts[g] += 1;
                                    }
                                }
                            }
                        });
                        for g in 0..n {
                            if counts[g] > 0 {
                                self.sums[g] +=
                                    S::from_offsets(*base, *scale, counts[g], code_sums[g]);
                                self.counts[g] += counts[g];
                            }
                        }
                    }
                    ColumnData::Alp(a) if matches!(gids, Gids::Ids(_)) && groups > rows.len / 2 => {
                        // About a row per group (a key shared by many
                        // partitions' rows, `aggregate::shared`): each
                        // row's digits straight into its group, exact as
                        // the per-group digit sums below, whose arrays of
                        // every group were zeroed and read per batch (perf
                        // of db-benchmark q5: a fifth of the query).
                        let Gids::Ids(ids) = gids else {
                            unreachable!("matched above");
                        };
                        let (base, exponent) = (i128::from(a.base()), a.exponent());
                        let factor = self.align(exponent, groups);
                        codecs::for_each_alp_code(a, rows, |j, _, code| {
                            if valid(j) {
                                let g = ids[j] as usize;
                                self.add_digits(g, base + i128::from(code), exponent, factor);
                                self.counts[g] += 1;
                            }
                        });
                        // Exception rows hold code 0: their digits out,
                        // their values in.
                        let (exc_rows, exc_values) = a.exceptions();
                        for (&row, &x) in exc_rows.iter().zip(exc_values) {
                            let Some(j) = codecs::selected_at(rows, row) else {
                                continue;
                            };
                            if j < ids.len() && valid(j) {
                                let g = ids[j] as usize;
                                self.add_digits(g, -base, exponent, factor);
                                self.sums[g] += S::from_f64(x);
                            }
                        }
                    }
                    _ if codecs::sums_in_place(col) => {
                        let ids = match gids {
                            Gids::Ids(ids) => Some(ids),
                            Gids::Single(_) => None,
                        };
                        match codecs::group_sums(col, rows, ids, groups) {
                            GroupSums::Ints {
                                base,
                                counts,
                                offsets,
                            } => {
                                for (g, (&n, &o)) in counts.iter().zip(&offsets).enumerate() {
                                    if n > 0 {
                                        self.sums[g] += S::from_offsets(base, 1, n, o);
                                        self.counts[g] += n;
                                    }
                                }
                            }
                            GroupSums::Floats { sums, counts } => {
                                for (g, (&x, &n)) in sums.iter().zip(&counts).enumerate() {
                                    if n > 0 {
                                        self.sums[g] += S::from_f64(x);
                                        self.counts[g] += n;
                                    }
                                }
                            }
                            GroupSums::Decimals {
                                digits,
                                exponent,
                                exceptions,
                                counts,
                            } => {
                                let factor = self.align(exponent, groups);
                                for (g, &n) in counts.iter().enumerate() {
                                    if n > 0 {
                                        if let Some(&x) = exceptions.get(g) {
                                            self.sums[g] += S::from_f64(x);
                                        }
                                        self.add_digits(g, digits[g], exponent, factor);
                                        self.counts[g] += n;
                                    }
                                }
                            }
                        }
                    }
                    _ => {
                        return Err(Error::Internal(
                            "sum read in place from an unsupported codec".into(),
                        ));
                    }
                }
            }
            Input::Rows => return Err(Error::Internal("sum without values".into())),
        }
        Ok(())
    }

    fn take(&mut self, idx: &[u32]) -> Box<dyn Accumulator> {
        let decimals = if self.decimals.is_empty() {
            Vec::new()
        } else {
            resize(&mut self.decimals, self.sums.len(), 0);
            take_vec(&mut self.decimals, idx)
        };
        Box::new(Sum {
            sums: take_vec(&mut self.sums, idx),
            counts: take_vec(&mut self.counts, idx),
            decimals,
            exponent: self.exponent,
            avg: self.avg,
        })
    }

    fn split(&mut self, buckets: &Buckets) -> Vec<Box<dyn Accumulator>> {
        let sums = split_vec(&mut self.sums, buckets);
        let rows = split_vec(&mut self.counts, buckets);
        let decimals = if self.decimals.is_empty() {
            sums.iter().map(|_| Vec::new()).collect()
        } else {
            split_vec(&mut self.decimals, buckets)
        };
        sums.into_iter()
            .zip(rows)
            .zip(decimals)
            .map(|((sums, counts), decimals)| {
                Box::new(Sum {
                    sums,
                    counts,
                    decimals,
                    exponent: self.exponent,
                    avg: self.avg,
                }) as Box<dyn Accumulator>
            })
            .collect()
    }

    fn merge(&mut self, other: Box<dyn Accumulator>, into: &[u32], groups: usize) -> Result<()> {
        let other = downcast::<Sum<S>>(other)?;
        resize(&mut self.sums, groups, S::default());
        resize(&mut self.counts, groups, 0);
        let factor = (!other.decimals.is_empty()).then(|| self.align(other.exponent, groups));
        for (i, &g) in into.iter().enumerate() {
            if other.counts[i] > 0 {
                self.sums[g as usize] += other.sums[i];
                self.counts[g as usize] += other.counts[i];
                if let (Some(factor), Some(&d)) = (factor, other.decimals.get(i))
                    && d != 0
                {
                    self.add_digits(g as usize, i128::from(d), other.exponent, factor);
                }
            }
        }
        Ok(())
    }

    fn check(&self) -> Result<()> {
        for (g, &c) in self.counts.iter().enumerate() {
            if let Some(s) = self.total(g) {
                s.finish(c, self.avg)?;
            }
        }
        Ok(())
    }

    fn value(&self, g: usize) -> Value {
        match (self.total(g), self.counts.get(g)) {
            (Some(s), Some(&c)) => s.finish(c, self.avg).unwrap_or(Value::Null),
            _ => Value::Null,
        }
    }

    fn int_value(&self, g: usize) -> Option<i64> {
        match (self.sums.get(g), self.counts.get(g)) {
            (Some(&s), Some(&c)) if c > 0 && !self.avg => s.to_i64(),
            _ => None,
        }
    }

    fn heap_bytes(&self) -> usize {
        self.sums.capacity() * std::mem::size_of::<S>()
            + self.counts.capacity() * 8
            + self.decimals.capacity() * 8
    }

    fn into_any(self: Box<Self>) -> Box<dyn Any> {
        self
    }
}

// ---------------------------------------------------------------------------
// min(x), max(x)

/// A value type `min`/`max` keep per group.
trait Extremum: Clone + Default + Send + 'static {
    /// True if `new` should replace `old` (strictly better: ties keep the
    /// first value seen, in load order).
    fn better(new: &Self, old: &Self, min: bool) -> bool;
    fn to_value(&self, dtype: DataType) -> Value;
}

impl Extremum for i64 {
    #[inline]
    fn better(new: &i64, old: &i64, min: bool) -> bool {
        if min { new < old } else { new > old }
    }
    fn to_value(&self, dtype: DataType) -> Value {
        match dtype {
            DataType::Bool => Value::Bool(*self != 0),
            _ => Value::from_integer(*self, dtype),
        }
    }
}

impl Extremum for f64 {
    #[inline]
    fn better(new: &f64, old: &f64, min: bool) -> bool {
        let o = cmp_f64(*new, *old);
        if min { o.is_lt() } else { o.is_gt() }
    }
    fn to_value(&self, _: DataType) -> Value {
        Value::Float(*self)
    }
}

impl Extremum for Option<Box<str>> {
    #[inline]
    fn better(new: &Self, old: &Self, min: bool) -> bool {
        match (new, old) {
            (Some(n), Some(o)) => {
                let c = n.as_bytes().cmp(o.as_bytes());
                if min { c.is_lt() } else { c.is_gt() }
            }
            _ => false,
        }
    }
    fn to_value(&self, _: DataType) -> Value {
        self.as_deref().map_or(Value::Null, Value::str)
    }
}

/// `min` or `max` per group; `seen` marks groups with a value.
struct MinMax<T: Extremum> {
    best: Vec<T>,
    seen: Vec<bool>,
    min: bool,
    dtype: DataType,
}

impl<T: Extremum> MinMax<T> {
    fn new(min: bool, dtype: DataType) -> MinMax<T> {
        MinMax {
            best: Vec::new(),
            seen: Vec::new(),
            min,
            dtype,
        }
    }

    /// [`Accumulator::split`] of the states.
    fn split_states(&mut self, buckets: &Buckets) -> Vec<Box<dyn Accumulator>>
    where
        MinMax<T>: Accumulator,
    {
        let best = split_vec(&mut self.best, buckets);
        let seen = split_vec(&mut self.seen, buckets);
        best.into_iter()
            .zip(seen)
            .map(|(best, seen)| {
                Box::new(MinMax {
                    best,
                    seen,
                    min: self.min,
                    dtype: self.dtype,
                }) as Box<dyn Accumulator>
            })
            .collect()
    }

    #[inline]
    fn offer(&mut self, g: usize, x: T) {
        if !self.seen[g] {
            self.seen[g] = true;
            self.best[g] = x;
        } else if T::better(&x, &self.best[g], self.min) {
            self.best[g] = x;
        }
    }
}

/// Offers every valid value of a typed buffer.
macro_rules! offer_all {
    ($self:ident, $values:expr, $gids:expr, $valid:expr, $conv:expr) => {{
        let values = $values;
        for j in 0..$gids.len() {
            if $valid(j) {
                let g = $gids.get(j);
                $self.offer(g, $conv(&values[j]));
            }
        }
    }};
}

impl Accumulator for MinMax<i64> {
    fn update(&mut self, input: Input<'_, '_>, gids: Gids<'_>, groups: usize) -> Result<()> {
        resize(&mut self.best, groups, 0);
        resize(&mut self.seen, groups, false);
        match input {
            Input::Array(a) => match &a.data {
                Data::Int(v) => {
                    if let (Gids::Single(_), None) = (gids, &a.validity) {
                        let m = if self.min {
                            v.iter().min()
                        } else {
                            v.iter().max()
                        };
                        if let Some(&m) = m {
                            self.offer(0, m);
                        }
                    } else {
                        offer_all!(self, v, gids, |j| valid_at(a, j), |x: &i64| *x)
                    }
                }
                Data::Bool(b) => {
                    for j in 0..gids.len() {
                        if valid_at(a, j) {
                            self.offer(gids.get(j), b.get(j) as i64);
                        }
                    }
                }
                _ => return Err(Error::Internal("min/max of unexpected type".into())),
            },
            Input::Scalar(v) => {
                let x = match v {
                    Value::Int(i) | Value::Timestamp(i) | Value::Date(i) | Value::Interval(i) => *i,
                    Value::Bool(b) => *b as i64,
                    _ => return Ok(()),
                };
                for j in 0..gids.idempotent_len() {
                    self.offer(gids.get(j), x);
                }
            }
            _ => return Err(Error::Internal("min/max input".into())),
        }
        Ok(())
    }

    fn take(&mut self, idx: &[u32]) -> Box<dyn Accumulator> {
        Box::new(MinMax {
            best: take_vec(&mut self.best, idx),
            seen: take_vec(&mut self.seen, idx),
            min: self.min,
            dtype: self.dtype,
        })
    }

    fn split(&mut self, buckets: &Buckets) -> Vec<Box<dyn Accumulator>> {
        self.split_states(buckets)
    }

    fn merge(&mut self, other: Box<dyn Accumulator>, into: &[u32], groups: usize) -> Result<()> {
        let other = downcast::<MinMax<i64>>(other)?;
        resize(&mut self.best, groups, 0);
        resize(&mut self.seen, groups, false);
        for (i, &g) in into.iter().enumerate() {
            if other.seen[i] {
                self.offer(g as usize, other.best[i]);
            }
        }
        Ok(())
    }

    fn value(&self, g: usize) -> Value {
        extremum_value(&self.best, &self.seen, self.dtype, g)
    }

    fn heap_bytes(&self) -> usize {
        self.best.capacity() * 9
    }

    fn into_any(self: Box<Self>) -> Box<dyn Any> {
        self
    }
}

/// Group `g`'s extremum, NULL when it saw no value.
fn extremum_value<T: Extremum>(best: &[T], seen: &[bool], dtype: DataType, g: usize) -> Value {
    match (best.get(g), seen.get(g)) {
        (Some(b), Some(true)) => b.to_value(dtype),
        _ => Value::Null,
    }
}

impl Accumulator for MinMax<f64> {
    fn update(&mut self, input: Input<'_, '_>, gids: Gids<'_>, groups: usize) -> Result<()> {
        resize(&mut self.best, groups, 0.0);
        resize(&mut self.seen, groups, false);
        match input {
            Input::Array(a) => match &a.data {
                Data::Float(v) => offer_all!(self, v, gids, |j| valid_at(a, j), |x: &f64| *x),
                Data::Int(v) => offer_all!(self, v, gids, |j| valid_at(a, j), |x: &i64| *x as f64),
                _ => return Err(Error::Internal("min/max of unexpected type".into())),
            },
            Input::Scalar(v) => {
                if let Some(x) = v.as_f64() {
                    for j in 0..gids.idempotent_len() {
                        self.offer(gids.get(j), x);
                    }
                }
            }
            _ => return Err(Error::Internal("min/max input".into())),
        }
        Ok(())
    }

    fn take(&mut self, idx: &[u32]) -> Box<dyn Accumulator> {
        Box::new(MinMax {
            best: take_vec(&mut self.best, idx),
            seen: take_vec(&mut self.seen, idx),
            min: self.min,
            dtype: self.dtype,
        })
    }

    fn split(&mut self, buckets: &Buckets) -> Vec<Box<dyn Accumulator>> {
        self.split_states(buckets)
    }

    fn merge(&mut self, other: Box<dyn Accumulator>, into: &[u32], groups: usize) -> Result<()> {
        let other = downcast::<MinMax<f64>>(other)?;
        resize(&mut self.best, groups, 0.0);
        resize(&mut self.seen, groups, false);
        for (i, &g) in into.iter().enumerate() {
            if other.seen[i] {
                self.offer(g as usize, other.best[i]);
            }
        }
        Ok(())
    }

    fn value(&self, g: usize) -> Value {
        extremum_value(&self.best, &self.seen, self.dtype, g)
    }

    fn heap_bytes(&self) -> usize {
        self.best.capacity() * 9
    }

    fn into_any(self: Box<Self>) -> Box<dyn Any> {
        self
    }
}

impl MinMax<Option<Box<str>>> {
    /// Offers a borrowed string, allocating only when it wins.
    #[inline]
    fn offer_str(&mut self, g: usize, x: &str) {
        let wins = match &self.best[g] {
            None => true,
            Some(old) => {
                let c = x.as_bytes().cmp(old.as_bytes());
                if self.min { c.is_lt() } else { c.is_gt() }
            }
        };
        if wins || !self.seen[g] {
            self.seen[g] = true;
            self.best[g] = Some(x.into());
        }
    }
}

impl Accumulator for MinMax<Option<Box<str>>> {
    fn update(&mut self, input: Input<'_, '_>, gids: Gids<'_>, groups: usize) -> Result<()> {
        resize(&mut self.best, groups, None);
        resize(&mut self.seen, groups, false);
        match input {
            Input::Array(a) => match &a.data {
                Data::Str(Strs::Coded { entries, codes }) if entries.len() < codes.len() => {
                    // Best entry per group by code first, strings compared
                    // only when a group's code changes.
                    let mut best_code: Vec<Option<u32>> = vec![None; groups];
                    for (j, &c) in codes.iter().enumerate() {
                        if !valid_at(a, j) {
                            continue;
                        }
                        let g = gids.get(j);
                        match best_code[g] {
                            None => best_code[g] = Some(c),
                            Some(b) if b != c => {
                                let o = entries
                                    .get(c as usize)
                                    .as_bytes()
                                    .cmp(entries.get(b as usize).as_bytes());
                                if (self.min && o.is_lt()) || (!self.min && o.is_gt()) {
                                    best_code[g] = Some(c);
                                }
                            }
                            _ => {}
                        }
                    }
                    for (g, c) in best_code.into_iter().enumerate() {
                        if let Some(c) = c {
                            self.offer_str(g, entries.get(c as usize));
                        }
                    }
                }
                Data::Str(s) => {
                    for j in 0..gids.len() {
                        if valid_at(a, j) {
                            self.offer_str(gids.get(j), s.get(j));
                        }
                    }
                }
                _ => return Err(Error::Internal("min/max of unexpected type".into())),
            },
            Input::Scalar(Value::Str(s)) => {
                for j in 0..gids.idempotent_len() {
                    self.offer_str(gids.get(j), s);
                }
            }
            Input::Scalar(_) => {}
            _ => return Err(Error::Internal("min/max input".into())),
        }
        Ok(())
    }

    fn take(&mut self, idx: &[u32]) -> Box<dyn Accumulator> {
        Box::new(MinMax {
            best: take_vec(&mut self.best, idx),
            seen: take_vec(&mut self.seen, idx),
            min: self.min,
            dtype: self.dtype,
        })
    }

    fn split(&mut self, buckets: &Buckets) -> Vec<Box<dyn Accumulator>> {
        self.split_states(buckets)
    }

    fn merge(&mut self, other: Box<dyn Accumulator>, into: &[u32], groups: usize) -> Result<()> {
        let mut other = downcast::<MinMax<Option<Box<str>>>>(other)?;
        resize(&mut self.best, groups, None);
        resize(&mut self.seen, groups, false);
        for (i, &g) in into.iter().enumerate() {
            if other.seen[i] {
                let g = g as usize;
                let x = other.best[i].take();
                if !self.seen[g] || Extremum::better(&x, &self.best[g], self.min) {
                    self.seen[g] = true;
                    self.best[g] = x;
                }
            }
        }
        Ok(())
    }

    fn value(&self, g: usize) -> Value {
        extremum_value(&self.best, &self.seen, self.dtype, g)
    }

    fn heap_bytes(&self) -> usize {
        self.best.capacity() * 17
            + self
                .best
                .iter()
                .map(|s| s.as_ref().map_or(0, |s| s.len()))
                .sum::<usize>()
    }

    fn into_any(self: Box<Self>) -> Box<dyn Any> {
        self
    }
}

// ---------------------------------------------------------------------------
// count(DISTINCT x)

/// [`hash_str128`] of every row's string. Codes into a dictionary longer
/// than the batch (a table-wide one) read the dictionary's kept hashes by
/// code instead of each row's entry.
fn str_hashes128(s: &Strs<'_>) -> Vec<u128> {
    if let Strs::Coded { entries, codes } = s
        && let Some(d) = entries.dictionary()
        && d.len() > codes.len()
    {
        let hashes = d.hashes(hash_str128);
        return codes.iter().map(|&c| hashes[c as usize]).collect();
    }
    s.map(hash_str128)
}

/// A key for the distinct set of every value kind of an input.
trait DistinctInput: DistinctKey {
    /// The keys of a batch's rows (`None` for rows not to count).
    fn keys(a: &Array<'_>) -> Result<Vec<Self>>;
    fn scalar(v: &Value) -> Option<Self>;
}

impl DistinctInput for u64 {
    fn keys(a: &Array<'_>) -> Result<Vec<u64>> {
        Ok(match &a.data {
            Data::Int(v) => v.iter().map(|&x| x as u64).collect(),
            Data::Float(v) => v.iter().map(|&x| canonical_f64_bits(x)).collect(),
            Data::Bool(b) => (0..b.len()).map(|i| b.get(i) as u64).collect(),
            Data::Str(_) => {
                return Err(Error::Internal(
                    "string keys in a 64-bit distinct set".into(),
                ));
            }
        })
    }
    fn scalar(v: &Value) -> Option<u64> {
        Some(match v {
            Value::Int(i) | Value::Timestamp(i) | Value::Date(i) | Value::Interval(i) => *i as u64,
            Value::Float(f) => canonical_f64_bits(*f),
            Value::Bool(b) => *b as u64,
            _ => return None,
        })
    }
}

impl DistinctInput for u128 {
    fn keys(a: &Array<'_>) -> Result<Vec<u128>> {
        match &a.data {
            Data::Str(s) => Ok(str_hashes128(s)),
            _ => Err(Error::Internal(
                "non-string keys in a string distinct set".into(),
            )),
        }
    }
    fn scalar(v: &Value) -> Option<u128> {
        match v {
            Value::Str(s) => Some(hash_str128(s)),
            _ => None,
        }
    }
}

/// Exact distinct values per group.
///
/// A merge moves a partial's set into a group that has none and leaves the
/// others pending; [`Accumulator::finish`] then merges each group's
/// pending sets, groups in parallel (perf: with 1,980 groups, below the
/// radix split, merging `count(DISTINCT UserID)` sets one group after
/// another on one thread was a quarter of ClickBench's query 9).
#[derive(Default)]
struct Distinct<K: DistinctKey> {
    sets: Vec<DistinctSet<K>>,
    /// `(group, set)` still to merge into `sets[group]`.
    pending: Vec<(u32, DistinctSet<K>)>,
    /// Rows the single group's next batches bring in all (see
    /// [`Accumulator::expect_rows`]); 0 once used.
    expected_rows: usize,
}

impl<K: DistinctInput> Accumulator for Distinct<K> {
    fn expect_rows(&mut self, rows: usize) {
        self.expected_rows = rows;
    }

    fn update(&mut self, input: Input<'_, '_>, gids: Gids<'_>, groups: usize) -> Result<()> {
        if self.sets.len() < groups {
            self.sets.resize_with(groups, DistinctSet::default);
        }
        match input {
            Input::Array(a) => {
                let keys = K::keys(a)?;
                if let Gids::Single(n) = gids {
                    self.sets[0].reserve(n.min(1 << 16));
                }
                for (j, &k) in keys.iter().enumerate() {
                    if valid_at(a, j) {
                        self.sets[gids.get(j)].insert(k);
                    }
                }
                if let Gids::Single(n) = gids
                    && self.expected_rows > n
                {
                    // Room for the keys the first batch predicts, at once
                    // (perf of ClickBench q5, `count(DISTINCT UserID)`:
                    // rehashing at each doubling was a quarter of it).
                    let set = &mut self.sets[0];
                    let projected =
                        crate::store::projected_distinct(n, set.len(), self.expected_rows);
                    set.reserve(((projected * 1.1) as usize).saturating_sub(set.len()));
                }
                self.expected_rows = 0;
            }
            Input::Scalar(v) => {
                if let Some(k) = K::scalar(v) {
                    for j in 0..gids.idempotent_len() {
                        self.sets[gids.get(j)].insert(k);
                    }
                }
            }
            Input::Column(col, rows) => {
                let ColumnData::IntDict { values, codes } = &col.data else {
                    return Err(Error::Internal("distinct read from another codec".into()));
                };
                let keys: Vec<Option<K>> =
                    values.iter().map(|&x| K::scalar(&Value::Int(x))).collect();
                let validity = col.packed_validity();
                let valid = |i: usize| validity.as_deref().is_none_or(|b| b.get(i));
                match gids {
                    // One set: each code present adds its value once.
                    Gids::Single(_) => {
                        let mut seen = vec![false; values.len()];
                        with_codes!(codes, c => for j in 0..rows.len {
                            let i = rows.row(j);
                            if valid(i) {
                                seen[c[i].to_usize()] = true;
                            }
                        });
                        // The entries are distinct: a first set needs no
                        // hashing (see `DistinctSet::Unique`).
                        let present = keys.iter().zip(&seen).filter_map(|(k, s)| k.filter(|_| *s));
                        let set = &mut self.sets[0];
                        if set.is_empty() {
                            *set = DistinctSet::Unique(present.collect());
                        } else {
                            // Room for them all at once (growing by
                            // doubling was 18 % of q5).
                            set.reserve(seen.iter().filter(|s| **s).count());
                            present.for_each(|k| set.insert(k));
                        }
                    }
                    // Each (group, code) pair once, then each group's
                    // values, distinct as the codes are (perf
                    // of ClickBench q9, `count(DISTINCT UserID)` by
                    // RegionID: a row at a time into its group's own set,
                    // each growing from empty, was 70 % of the query).
                    //
                    // A value mostly occurs in one group (a user's region):
                    // the first group of each code is kept in an array, and
                    // only pairs with another group go to the table.
                    Gids::Ids(ids) => {
                        const NONE: u32 = u32::MAX;
                        let mut first = vec![NONE; values.len()];
                        let mut pairs: HashSet<u64> = HashSet::new();
                        with_codes!(codes, c => for (j, &g) in ids.iter().enumerate() {
                            let i = rows.row(j);
                            let code = c[i].to_usize();
                            if valid(i) && let Some(f) = first.get_mut(code) {
                                if *f == NONE {
                                    *f = g;
                                } else if *f != g {
                                    pairs.insert((u64::from(g) << 32) | code as u64);
                                }
                            }
                        });
                        let mut per_group: Vec<Vec<K>> = Vec::new();
                        per_group.resize_with(groups, Vec::new);
                        let firsts = first
                            .iter()
                            .enumerate()
                            .filter(|(_, g)| **g != NONE)
                            .map(|(code, &g)| (u64::from(g) << 32) | code as u64);
                        for pair in firsts.chain(pairs) {
                            if let (Some(values), Some(Some(k))) = (
                                per_group.get_mut((pair >> 32) as usize),
                                keys.get(pair as u32 as usize),
                            ) {
                                values.push(*k);
                            }
                        }
                        for (set, values) in self.sets.iter_mut().zip(per_group) {
                            if values.is_empty() {
                                continue;
                            }
                            if set.is_empty() {
                                *set = DistinctSet::Unique(values);
                            } else {
                                set.reserve(values.len());
                                values.into_iter().for_each(|k| set.insert(k));
                            }
                        }
                    }
                }
            }
            _ => return Err(Error::Internal("distinct input".into())),
        }
        Ok(())
    }

    fn take(&mut self, idx: &[u32]) -> Box<dyn Accumulator> {
        self.finish();
        Box::new(Distinct {
            sets: take_vec(&mut self.sets, idx),
            pending: Vec::new(),
            expected_rows: 0,
        })
    }

    fn merge(&mut self, other: Box<dyn Accumulator>, into: &[u32], groups: usize) -> Result<()> {
        let mut other = downcast::<Distinct<K>>(other)?;
        other.finish();
        if self.sets.len() < groups {
            self.sets.resize_with(groups, DistinctSet::default);
        }
        for (set, &g) in other.sets.into_iter().zip(into) {
            if set.is_empty() {
                continue;
            }
            let here = &mut self.sets[g as usize];
            if here.is_empty() {
                *here = set;
            } else {
                self.pending.push((g, set));
            }
        }
        Ok(())
    }

    fn finish(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        let mut per_group: Vec<Vec<DistinctSet<K>>> = Vec::new();
        per_group.resize_with(self.sets.len(), Vec::new);
        for (g, set) in self.pending.drain(..) {
            per_group[g as usize].push(set);
        }
        self.sets
            .par_iter_mut()
            .zip(per_group)
            .for_each(|(set, more)| more.into_iter().for_each(|m| set.merge(m)));
    }

    fn value(&self, g: usize) -> Value {
        let Some(set) = self.sets.get(g) else {
            return Value::Int(0);
        };
        let pending = self.pending.iter().filter(|(p, _)| *p as usize == g);
        if pending.clone().next().is_none() {
            return Value::Int(set.len() as i64);
        }
        // Not finished: merge a copy (correct, only slow).
        let mut all = set.clone();
        pending.for_each(|(_, s)| all.merge(s.clone()));
        Value::Int(all.len() as i64)
    }

    fn heap_bytes(&self) -> usize {
        self.sets.capacity() * std::mem::size_of::<DistinctSet<K>>()
            + self.sets.iter().map(DistinctSet::heap_bytes).sum::<usize>()
            + self.pending.capacity() * std::mem::size_of::<(u32, DistinctSet<K>)>()
            + self
                .pending
                .iter()
                .map(|(_, s)| s.heap_bytes())
                .sum::<usize>()
    }

    fn into_any(self: Box<Self>) -> Box<dyn Any> {
        self
    }
}

// ---------------------------------------------------------------------------
// approx_count_distinct(x)

/// A HyperLogLog sketch per group, and the (group, register and rank)
/// pairs of rows not yet folded into them.
///
/// Rows of many groups (GROUP BY g1000: 65 rows a group in a partition)
/// append one pair each to a flat list instead of a small vector per
/// group; the merge folds the list into the merged groups' sketches, and
/// the split deals it out by bucket. perf of shapes
/// `approx_distinct_per_group`: growing and freeing 1,000 small vectors
/// per partition (the allocator a tenth of the query) and pushing into
/// them (`insert_hash` 17%) took more than the merge of the sketches.
#[derive(Default)]
struct Approx {
    sketches: Vec<HyperLogLog>,
    /// `(group, hll::pair_of(hash))` of rows not in `sketches` yet.
    pending: Vec<(u32, u32)>,
}

fn approx_hashes(a: &Array<'_>) -> Vec<u64> {
    match &a.data {
        Data::Int(v) => v.iter().map(|&x| hash_i64(x)).collect(),
        Data::Float(v) => v.iter().map(|&x| hash_f64(x)).collect(),
        // The low half of the 128-bit hash, as `hll::hash_value`.
        Data::Str(s) => str_hashes128(s).into_iter().map(|h| h as u64).collect(),
        Data::Bool(b) => (0..b.len())
            .map(|i| mix64(b.get(i) as u64 ^ 0xAAAA))
            .collect(),
    }
}

impl Approx {
    /// Folds the pending pairs into the sketches.
    fn fold_pending(&mut self) {
        for (g, pair) in std::mem::take(&mut self.pending) {
            self.sketches[g as usize].insert_pair(pair);
        }
    }
}

impl Accumulator for Approx {
    fn update(&mut self, input: Input<'_, '_>, gids: Gids<'_>, groups: usize) -> Result<()> {
        if self.sketches.len() < groups {
            self.sketches.resize_with(groups, HyperLogLog::default);
        }
        match input {
            Input::Array(a) => {
                let hashes = approx_hashes(a);
                if let (Gids::Single(n), true) = (gids, gids.len() >= 1 << 12) {
                    // One group of many rows: dense registers, tight loop.
                    let regs = self.sketches[0].dense_mut();
                    for (j, &h) in hashes.iter().enumerate().take(n) {
                        if valid_at(a, j) {
                            update_dense(regs, h);
                        }
                    }
                } else {
                    self.pending.reserve(hashes.len());
                    for (j, &h) in hashes.iter().enumerate() {
                        if valid_at(a, j) {
                            self.pending.push((gids.get(j) as u32, pair_of(h)));
                        }
                    }
                }
            }
            Input::Scalar(v) => {
                if !v.is_null() {
                    let h = super::hll::hash_value(v);
                    for j in 0..gids.idempotent_len() {
                        self.sketches[gids.get(j)].insert_hash(h);
                    }
                }
            }
            _ => return Err(Error::Internal("approx_count_distinct input".into())),
        }
        Ok(())
    }

    fn take(&mut self, idx: &[u32]) -> Box<dyn Accumulator> {
        self.fold_pending();
        Box::new(Approx {
            sketches: take_vec(&mut self.sketches, idx),
            pending: Vec::new(),
        })
    }

    fn split(&mut self, buckets: &Buckets) -> Vec<Box<dyn Accumulator>> {
        // Group g becomes group `within[g]` of its bucket.
        let mut next = vec![0u32; buckets.counts().len()];
        let within: Vec<u32> = buckets
            .of()
            .iter()
            .map(|&b| {
                let g = next[b as usize];
                next[b as usize] += 1;
                g
            })
            .collect();
        let of = buckets.of();
        let pending = std::mem::take(&mut self.pending);
        let by_bucket = Buckets::new(
            pending.iter().map(|&(g, _)| of[g as usize]).collect(),
            next.len(),
        );
        let pending = by_bucket.scatter(
            pending
                .into_iter()
                .map(|(g, pair)| (within[g as usize], pair)),
        );
        split_vec(&mut self.sketches, buckets)
            .into_iter()
            .zip(pending)
            .map(|(sketches, pending)| {
                Box::new(Approx { sketches, pending }) as Box<dyn Accumulator>
            })
            .collect()
    }

    fn merge(&mut self, other: Box<dyn Accumulator>, into: &[u32], groups: usize) -> Result<()> {
        let other = downcast::<Approx>(other)?;
        if self.sketches.len() < groups {
            self.sketches.resize_with(groups, HyperLogLog::default);
        }
        for (s, &g) in other.sketches.into_iter().zip(into) {
            self.sketches[g as usize].merge_owned(s);
        }
        for (g, pair) in other.pending {
            self.sketches[into[g as usize] as usize].merge_pair(pair);
        }
        Ok(())
    }

    fn finish(&mut self) {
        self.fold_pending();
    }

    fn value(&self, g: usize) -> Value {
        let Some(sketch) = self.sketches.get(g) else {
            return Value::Int(0);
        };
        let estimate = if self.pending.is_empty() {
            sketch.estimate()
        } else {
            // Not finished: this group's pending pairs folded into a copy.
            let mut s = sketch.clone();
            for &(_, pair) in self.pending.iter().filter(|p| p.0 as usize == g) {
                s.insert_pair(pair);
            }
            s.estimate()
        };
        Value::Int(estimate.round() as i64)
    }

    fn heap_bytes(&self) -> usize {
        self.sketches.capacity() * std::mem::size_of::<HyperLogLog>()
            + self.pending.capacity() * std::mem::size_of::<(u32, u32)>()
            + self
                .sketches
                .iter()
                .map(HyperLogLog::heap_bytes)
                .sum::<usize>()
    }

    fn into_any(self: Box<Self>) -> Box<dyn Any> {
        self
    }
}

/// Whether an aggregate can read column `col` in place (without decoding it
/// into an array first).
pub fn reads_in_place(func: AggFunc, col: &Column) -> bool {
    match func {
        AggFunc::Count => true,
        AggFunc::Sum | AggFunc::Avg => match &col.data {
            ColumnData::Float(_) | ColumnData::Single(_) => true,
            ColumnData::Offset { .. } => col.dtype == DataType::Int,
            _ => codecs::sums_in_place(col),
        },
        // An integer dictionary's distinct values are known: each code
        // present is one value (taxi's census tracts, ClickBench's UserID).
        AggFunc::CountDistinct => matches!(col.data, ColumnData::IntDict { .. }),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::borrow::Cow;

    fn call(func: AggFunc, dtype: DataType) -> AggCall {
        AggCall {
            func,
            arg: Some(Expr::Column {
                index: 0,
                name: "x".into(),
                dtype,
            }),
            arg2: None,
            separator: None,
            dtype: func.result_type(dtype),
        }
    }

    /// The values of the 7 groups the test uses (and a check that an
    /// integer read directly is the same value).
    fn finish(acc: &dyn Accumulator) -> Vec<Value> {
        acc.check().unwrap();
        for g in 0..7 {
            if let Some(x) = acc.int_value(g) {
                assert_eq!(Value::Int(x), acc.value(g), "group {g}");
            }
        }
        (0..7).map(|g| acc.value(g)).collect()
    }

    #[test]
    fn take_and_merge_equal_one_pass() {
        // Values 0..100 into 7 groups, in one pass, versus two halves taken
        // apart by group and merged back in another order.
        let values: Vec<i64> = (0..100).map(|i| (i * 37) % 23 - 5).collect();
        let gids: Vec<u32> = (0..100).map(|i| (i % 7) as u32).collect();
        let array = Array::new(DataType::Int, Data::Int(values.clone()));
        let floats = Array::new(
            DataType::Float,
            Data::Float(Cow::Owned(values.iter().map(|&x| x as f64 / 4.0).collect())),
        );
        for (func, dtype) in [
            (AggFunc::Count, DataType::Int),
            (AggFunc::Sum, DataType::Int),
            (AggFunc::Avg, DataType::Float),
            (AggFunc::Min, DataType::Int),
            (AggFunc::Max, DataType::Float),
            (AggFunc::CountDistinct, DataType::Int),
            (AggFunc::ApproxCountDistinct, DataType::Int),
        ] {
            let input = if dtype == DataType::Float {
                &floats
            } else {
                &array
            };
            let c = call(func, dtype);
            let mut whole = new_accumulator(&c).unwrap();
            whole
                .update(Input::Array(input), Gids::Ids(&gids), 7)
                .unwrap();
            let expected = finish(&*whole);

            let (a_in, b_in) = (
                input.take(&(0..50).collect::<Vec<_>>()),
                input.take(&(50..100).collect::<Vec<_>>()),
            );
            let mut a = new_accumulator(&c).unwrap();
            a.update(Input::Array(&a_in), Gids::Ids(&gids[..50]), 7)
                .unwrap();
            let mut b = new_accumulator(&c).unwrap();
            b.update(Input::Array(&b_in), Gids::Ids(&gids[50..]), 7)
                .unwrap();
            // Groups of b renumbered: group g of b becomes group 6 - g.
            let moved = b.take(&[0, 1, 2, 3, 4, 5, 6]);
            let mut merged = new_accumulator(&c).unwrap();
            merged.merge(moved, &[6, 5, 4, 3, 2, 1, 0], 7).unwrap();
            let back = merged.take(&[6, 5, 4, 3, 2, 1, 0]);
            a.merge(back, &[0, 1, 2, 3, 4, 5, 6], 7).unwrap();
            // Values read before `finish` (merging what is pending on the
            // fly) and after it agree, and a merge after a finish too.
            assert_eq!(finish(&*a), expected, "{func:?}");
            a.finish();
            assert_eq!(finish(&*a), expected, "{func:?} finished");
            let mut again = new_accumulator(&c).unwrap();
            again
                .update(Input::Array(input), Gids::Ids(&gids), 7)
                .unwrap();
            a.merge(again, &[0, 1, 2, 3, 4, 5, 6], 7).unwrap();
            a.finish();
            let counted_twice: Vec<Value> = match func {
                AggFunc::Count | AggFunc::Sum => {
                    let mut twice = new_accumulator(&c).unwrap();
                    for _ in 0..2 {
                        twice
                            .update(Input::Array(input), Gids::Ids(&gids), 7)
                            .unwrap();
                    }
                    finish(&*twice)
                }
                // The same values again: averages, extremes and distinct
                // counts stay.
                _ => expected.clone(),
            };
            assert_eq!(finish(&*a), counted_twice, "{func:?} merged twice");
        }
    }

    #[test]
    fn split_deals_each_group_to_its_bucket_as_take_does() {
        // 7 groups (the last without rows) into 4 buckets (one left
        // empty): each bucket's accumulator holds the same
        // values as `take` of that bucket's groups, in group order.
        let values: Vec<i64> = (0..60).map(|i| (i * 41) % 29 - 9).collect();
        let gids: Vec<u32> = (0..60).map(|i| (i % 6) as u32).collect();
        let array = Array::new(DataType::Int, Data::Int(values));
        let buckets = Buckets::new(vec![2, 0, 2, 2, 0, 1, 0], 4);
        assert_eq!(buckets.counts(), &[3, 1, 3, 0]);
        let lists = buckets.lists();
        assert_eq!(lists, vec![vec![1, 4, 6], vec![5], vec![0, 2, 3], vec![]]);
        for func in [
            AggFunc::Count,
            AggFunc::Sum,
            AggFunc::Avg,
            AggFunc::Min,
            AggFunc::Max,
            AggFunc::CountDistinct,
            AggFunc::ApproxCountDistinct,
        ] {
            let c = call(func, DataType::Int);
            let mut a = new_accumulator(&c).unwrap();
            a.update(Input::Array(&array), Gids::Ids(&gids), 7).unwrap();
            let mut b = new_accumulator(&c).unwrap();
            b.update(Input::Array(&array), Gids::Ids(&gids), 7).unwrap();
            let split = a.split(&buckets);
            assert_eq!(split.len(), 4, "{func:?}");
            for (part, list) in split.iter().zip(&lists) {
                let taken = b.take(list);
                let values = |acc: &dyn Accumulator| -> Vec<Value> {
                    acc.check().unwrap();
                    (0..list.len()).map(|g| acc.value(g)).collect()
                };
                assert_eq!(values(&**part), values(&*taken), "{func:?} {list:?}");
            }
        }
        let items: Vec<Vec<char>> = buckets.scatter("abcdefgh".chars());
        assert_eq!(
            items,
            vec![vec!['b', 'e', 'g'], vec!['f'], vec!['a', 'c', 'd'], vec![]]
        );
    }
}
