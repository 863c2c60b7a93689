//! Run-length encoding: a column in long runs as run values and run ends.
//!
//! The taxi weather columns are constant per day and `cab_type` comes in
//! runs; the iot `time` column repeats each timestamp once per truck. A
//! run costs one value and one u32 end, so a partition of `r` runs costs
//! `r · (size_of::<T>() + 4)` bytes whatever its row count.
//!
//! # Format
//! Run `k` covers rows `ends[k-1]..ends[k]` (`ends[-1] = 0`) and holds
//! `values[k]`; adjacent runs differ ([`RunValue::same`]). NULL rows
//! continue the current run (leading NULLs join the first), so they never
//! split runs; the validity bitmap stays with the column.
//!
//! # Kernels, a run at a time
//! [`Rle::filter_ranges`] returns the row ranges whose value satisfies a
//! comparison (adjacent matching runs merged); [`Rle::runs`] hands a
//! group-by one key and one row range per run; [`Rle::count_valid`],
//! [`Rle::sum_i128`] / [`Rle::sum_f64`], [`Rle::min`] and [`Rle::max`] work
//! on run lengths and values. `T` is `i64` for integers, timestamps and
//! dictionary codes, `f64` for floats.

use std::cmp::Ordering;
use std::ops::Range;

use super::bitmap::Bitmap;
use super::cmp::{CmpOp, mask_from_ranges};
use crate::types::cmp_f64;

/// A value a run can hold.
pub trait RunValue: Copy + std::fmt::Debug + Send + Sync + 'static {
    /// Whether two rows belong to one run (bit equality for floats, so
    /// `0.0` and `-0.0` stay apart and decode exactly).
    fn same(a: Self, b: Self) -> bool;
    /// The SQL order: integers by value, floats by [`cmp_f64`].
    fn order(a: Self, b: Self) -> Ordering;
}

impl RunValue for i64 {
    #[inline]
    fn same(a: i64, b: i64) -> bool {
        a == b
    }
    #[inline]
    fn order(a: i64, b: i64) -> Ordering {
        a.cmp(&b)
    }
}

impl RunValue for f64 {
    #[inline]
    fn same(a: f64, b: f64) -> bool {
        a.to_bits() == b.to_bits()
    }
    #[inline]
    fn order(a: f64, b: f64) -> Ordering {
        cmp_f64(a, b)
    }
}

/// A partition's column as runs.
///
/// # Invariants
/// `values.len() == ends.len()`; `ends` strictly increasing, the last equal
/// to `len`.
#[derive(Debug, Clone, PartialEq)]
pub struct Rle<T> {
    values: Vec<T>,
    ends: Vec<u32>,
}

impl<T: RunValue> Rle<T> {
    /// Encodes a partition's values; rows where `validity` is false join the
    /// current run. `None` when no row is valid or `values.len()` exceeds
    /// `u32::MAX`.
    pub fn encode(values: &[T], validity: Option<&Bitmap>) -> Option<Rle<T>> {
        let len = values.len();
        if len > u32::MAX as usize {
            return None;
        }
        let valid = |i: usize| validity.is_none_or(|v| v.get(i));
        let first = (0..len).find(|&i| valid(i))?;
        let mut runs = Rle {
            values: vec![values[first]],
            ends: Vec::new(),
        };
        for (i, &v) in values.iter().enumerate().skip(first + 1) {
            if valid(i) && !T::same(v, *runs.values.last()?) {
                runs.ends.push(i as u32);
                runs.values.push(v);
            }
        }
        runs.ends.push(len as u32);
        Some(runs)
    }

    /// Number of runs in `values` (NULLs counted as values), for estimating
    /// the size of a sample without encoding it.
    pub fn count_runs(values: &[T]) -> usize {
        1 + values.windows(2).filter(|w| !T::same(w[0], w[1])).count()
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.ends.last().map_or(0, |&e| e as usize)
    }

    /// True when there are no rows.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Number of runs.
    pub fn run_count(&self) -> usize {
        self.values.len()
    }

    /// The run values, in row order.
    pub fn values(&self) -> &[T] {
        &self.values
    }

    /// Each run's value and rows, in row order: what a group-by consumes
    /// (one key per run) and what filters and sums iterate.
    pub fn runs(&self) -> impl Iterator<Item = (T, Range<usize>)> + '_ {
        self.values.iter().enumerate().map(|(k, &v)| {
            let start = if k == 0 { 0 } else { self.ends[k - 1] as usize };
            (v, start..self.ends[k] as usize)
        })
    }

    /// The end (one past the last row) of each run, strictly increasing.
    pub fn ends(&self) -> &[u32] {
        &self.ends
    }

    /// The run that holds row `i`.
    #[inline]
    pub fn run_of(&self, i: usize) -> usize {
        self.ends.partition_point(|&e| e as usize <= i)
    }

    /// The value at row `i`.
    ///
    /// # Panics
    /// If `i >= len`.
    pub fn get(&self, i: usize) -> T {
        self.values[self.run_of(i)]
    }

    /// Appends the values of rows `range` to `out`.
    pub fn decode_range(&self, range: Range<usize>, out: &mut Vec<T>) {
        if range.is_empty() {
            return;
        }
        let mut k = self.run_of(range.start);
        let mut i = range.start;
        while i < range.end {
            let end = (self.ends[k] as usize).min(range.end);
            out.extend(std::iter::repeat_n(self.values[k], end - i));
            i = end;
            k += 1;
        }
    }

    /// Appends the values of the rows in `selection` (ascending) to `out`.
    pub fn decode_selection(&self, selection: &[u32], out: &mut Vec<T>) {
        debug_assert!(selection.windows(2).all(|w| w[0] < w[1]));
        let mut k = 0;
        for &row in selection {
            while self.ends[k] <= row {
                k += 1;
            }
            out.push(self.values[k]);
        }
    }

    /// Heap bytes held: one value and one u32 end per run.
    pub fn heap_bytes(&self) -> usize {
        self.values.len() * (size_of::<T>() + 4)
    }

    /// The rows whose value satisfies `value op c`, as ascending disjoint
    /// ranges (matching neighbours merged), NULL rows included: AND the
    /// validity, or use [`Rle::filter`].
    pub fn filter_ranges(&self, op: CmpOp, c: T) -> Vec<Range<usize>> {
        let mut out: Vec<Range<usize>> = Vec::new();
        for (v, rows) in self.runs() {
            if op.holds(T::order(v, c)) {
                match out.last_mut() {
                    Some(last) if last.end == rows.start => last.end = rows.end,
                    _ => out.push(rows),
                }
            }
        }
        out
    }

    /// Evaluates `value op c` on every row, as mask words (bit `j` of word
    /// `w` is row `64·w + j`; NULL rows are 0).
    pub fn filter(&self, op: CmpOp, c: T, validity: Option<&Bitmap>) -> Vec<u64> {
        mask_from_ranges(self.len(), &self.filter_ranges(op, c), validity)
    }

    /// Valid rows in `rows`.
    pub fn count_valid(rows: Range<usize>, validity: Option<&Bitmap>) -> u64 {
        match validity {
            None => rows.len() as u64,
            Some(v) => rows.filter(|&i| v.get(i)).count() as u64,
        }
    }

    fn extreme(&self, validity: Option<&Bitmap>, want: Ordering) -> Option<T> {
        let mut best: Option<T> = None;
        for (v, rows) in self.runs() {
            if Self::count_valid(rows, validity) > 0 && best.is_none_or(|b| T::order(v, b) == want)
            {
                best = Some(v);
            }
        }
        best
    }

    /// Smallest valid value (first of equals), `None` when all rows are NULL.
    pub fn min(&self, validity: Option<&Bitmap>) -> Option<T> {
        self.extreme(validity, Ordering::Less)
    }

    /// Largest valid value (first of equals).
    pub fn max(&self, validity: Option<&Bitmap>) -> Option<T> {
        self.extreme(validity, Ordering::Greater)
    }
}

impl Rle<i64> {
    /// Exact sum over the valid rows (`Σ value · valid rows of its run`) and
    /// their count.
    pub fn sum_i128(&self, validity: Option<&Bitmap>) -> (i128, u64) {
        let mut total = 0i128;
        let mut count = 0u64;
        for (v, rows) in self.runs() {
            let n = Self::count_valid(rows, validity);
            total += v as i128 * n as i128;
            count += n;
        }
        (total, count)
    }
}

impl Rle<f64> {
    /// Sum over the valid rows as `Σ value · n` per run in f64: one rounding
    /// per run instead of one per row, so it may differ from a row-by-row
    /// f64 sum in the last bits (within the documented float tolerance).
    pub fn sum_f64(&self, validity: Option<&Bitmap>) -> (f64, u64) {
        let mut total = 0.0;
        let mut count = 0u64;
        for (v, rows) in self.runs() {
            let n = Self::count_valid(rows, validity);
            if n > 0 {
                total += v * n as f64;
                count += n;
            }
        }
        (total, count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn runs_of<T: Copy>(rng: &mut ChaCha8Rng, len: usize, pick: impl Fn(usize) -> T) -> Vec<T> {
        let mut out = Vec::with_capacity(len);
        while out.len() < len {
            let v = pick(rng.gen_range(0..6));
            let n = rng.gen_range(1..200).min(len - out.len());
            out.extend(std::iter::repeat_n(v, n));
        }
        out
    }

    fn validity(rng: &mut ChaCha8Rng, len: usize, case: usize) -> Option<Bitmap> {
        (case % 3 == 1)
            .then(|| Bitmap::from_bools(&(0..len).map(|_| rng.gen_bool(0.85)).collect::<Vec<_>>()))
    }

    fn valid(v: &Option<Bitmap>, i: usize) -> bool {
        v.as_ref().is_none_or(|b| b.get(i))
    }

    fn check<T: RunValue>(values: &[T], validity: &Option<Bitmap>, constants: &[T]) -> Rle<T> {
        let r = Rle::encode(values, validity.as_ref()).unwrap();
        assert_eq!(r.len(), values.len());
        for (i, &v) in values.iter().enumerate() {
            if valid(validity, i) {
                assert!(T::same(r.get(i), v));
            }
        }
        let mid = values.len() / 3;
        let mut out = Vec::new();
        r.decode_range(mid..values.len(), &mut out);
        let sel: Vec<u32> = (0..values.len() as u32).step_by(7).collect();
        let mut picked = Vec::new();
        r.decode_selection(&sel, &mut picked);
        for (j, i) in (mid..values.len()).enumerate() {
            if valid(validity, i) {
                assert!(T::same(out[j], values[i]));
            }
        }
        for (j, &i) in sel.iter().enumerate() {
            if valid(validity, i as usize) {
                assert!(T::same(picked[j], values[i as usize]));
            }
        }
        let present: Vec<T> = (0..values.len())
            .filter(|&i| valid(validity, i))
            .map(|i| values[i])
            .collect();
        let first_by = |want: Ordering| {
            present
                .iter()
                .copied()
                .fold(None, |b: Option<T>, v| match b {
                    Some(b) if T::order(v, b) != want => Some(b),
                    _ => Some(v),
                })
        };
        let same = |a: Option<T>, b: Option<T>| match (a, b) {
            (Some(a), Some(b)) => T::same(a, b),
            (a, b) => a.is_none() && b.is_none(),
        };
        assert!(same(r.min(validity.as_ref()), first_by(Ordering::Less)));
        assert!(same(r.max(validity.as_ref()), first_by(Ordering::Greater)));
        for &c in constants {
            for op in CmpOp::ALL {
                let words = r.filter(op, c, validity.as_ref());
                for (i, &v) in values.iter().enumerate() {
                    let bit = (words[i / 64] >> (i % 64)) & 1 == 1;
                    let holds = op.holds(T::order(v, c)) && valid(validity, i);
                    assert_eq!(bit, holds, "{v:?} {op:?} {c:?}");
                }
                let ranges = r.filter_ranges(op, c);
                assert!(ranges.windows(2).all(|w| w[0].end < w[1].start));
            }
        }
        // A group-by over runs sees every row once, in order.
        let mut next = 0;
        for (v, rows) in r.runs() {
            assert_eq!(rows.start, next);
            assert!(
                rows.clone()
                    .all(|i| !valid(validity, i) || T::same(values[i], v))
            );
            next = rows.end;
        }
        assert_eq!(next, values.len());
        r
    }

    #[test]
    fn integer_runs_round_trip_and_kernels_match_the_oracle() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        for case in 0..40 {
            let len = rng.gen_range(1..3000);
            let values = runs_of(&mut rng, len, |k| [i64::MIN, -5, 0, 7, 9, i64::MAX][k]);
            let validity = validity(&mut rng, len, case);
            let r = check(&values, &validity, &[i64::MIN, -6, -5, 0, 8, 9, i64::MAX]);
            let present: Vec<i64> = (0..len)
                .filter(|&i| valid(&validity, i))
                .map(|i| values[i])
                .collect();
            if present.is_empty() {
                continue;
            }
            let sum: i128 = present.iter().map(|&v| v as i128).sum();
            assert_eq!(r.sum_i128(validity.as_ref()), (sum, present.len() as u64));
        }
    }

    #[test]
    fn float_runs_keep_signed_zero_and_nan() {
        let mut rng = ChaCha8Rng::seed_from_u64(8);
        for case in 0..30 {
            let len = rng.gen_range(1..2000);
            let values = runs_of(&mut rng, len, |k| [0.0, -0.0, f64::NAN, 1.5, -2.25, 0.1][k]);
            let validity = validity(&mut rng, len, case);
            let r = check(
                &values,
                &validity,
                &[0.0, -0.0, f64::NAN, 1.5, 1.0, f64::NEG_INFINITY],
            );
            let (sum, count) = r.sum_f64(validity.as_ref());
            let present: Vec<f64> = (0..len)
                .filter(|&i| valid(&validity, i))
                .map(|i| values[i])
                .collect();
            assert_eq!(count, present.len() as u64);
            let naive: f64 = present.iter().fold(0.0, |a, &v| a + v);
            assert!(
                sum.to_bits() == naive.to_bits()
                    || (sum.is_nan() && naive.is_nan())
                    || (sum - naive).abs() <= 1e-9 * naive.abs(),
                "{sum} {naive}"
            );
        }
    }

    #[test]
    fn long_runs_cost_bytes_per_run() {
        let values: Vec<i64> = (0..65_536).map(|i| i / 1000).collect();
        let r = Rle::encode(&values, None).unwrap();
        assert_eq!(r.run_count(), 66);
        assert_eq!(r.heap_bytes(), 66 * 12);
        assert_eq!(Rle::count_runs(&values), 66);
    }
}
