//! One pass of statistics over a partition's integers or floats, shared by
//! the chooser, the encoders and the zone map.
//!
//! # Why one pass, and branch-free
//! The encoders used to read a column several times before writing a byte:
//! the chooser's statistics, the zone map, then the plain codec's own
//! minimum and maximum, each skipping NULL rows with a branch per row. On a
//! column that is NULL at random rows (half of them, say) every one of
//! those branches is a coin toss for the CPU. Here a column is read once,
//! 64 rows (one validity word) at a time: a block without NULLs is read as
//! plain values (the compiler vectorizes the minimum and maximum), a block
//! of NULLs is skipped, and a mixed block gives each NULL row the value of
//! the valid row before it (a select, not a branch). That value changes
//! none of the statistics: it is already counted in the minimum, the
//! maximum and the common factor, and a NULL continues the current run as
//! [`super::Rle`] has it.
//!
//! [`ExactDivisor`] divides by a common factor known to divide the value
//! (the offsets of a column of whole seconds in microseconds) with one
//! multiplication instead of a division per row.

use super::bitmap::Bitmap;
use super::column::{ZoneMap, gcd};
use crate::types::{DataType, Value};

/// The first valid row of `len` rows, `None` when none is.
fn first_valid(len: usize, validity: Option<&Bitmap>) -> Option<usize> {
    let Some(v) = validity else {
        return (len > 0).then_some(0);
    };
    (0..len.div_ceil(64)).find_map(|w| {
        let word = v.word(w);
        (word != 0).then(|| 64 * w + word.trailing_zeros() as usize)
    })
}

/// The last valid row of `len` rows, `None` when none is.
fn last_valid(len: usize, validity: Option<&Bitmap>) -> Option<usize> {
    let Some(v) = validity else {
        return len.checked_sub(1);
    };
    (0..len.div_ceil(64)).rev().find_map(|w| {
        let word = v.word(w);
        (word != 0).then(|| 64 * w + 63 - word.leading_zeros() as usize)
    })
}

/// Statistics of the valid integers of a partition, from one pass
/// ([`int_stats`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct IntStats {
    /// The first valid row.
    pub first_row: usize,
    /// The last valid row.
    pub last_row: usize,
    /// Smallest valid value.
    pub min: i64,
    /// Largest valid value.
    pub max: i64,
    /// Greatest common divisor of the differences between valid values (0
    /// when all are equal). The differences from the first valid value
    /// have the same divisor as those from the minimum.
    pub scale: u64,
    /// Runs of equal valid values, NULL rows not breaking them.
    pub runs: usize,
    /// Whether the values ascend; never with a validity bitmap.
    pub sorted: bool,
    /// NULL rows (unset bits of the validity).
    pub null_count: usize,
}

impl IntStats {
    /// The zone map these statistics give a column of `dtype` (Int or
    /// Timestamp).
    pub fn zone(&self, dtype: DataType) -> ZoneMap {
        let wrap = |v: i64| Value::from_integer(v, dtype);
        ZoneMap {
            min: wrap(self.min),
            max: wrap(self.max),
            null_count: self.null_count,
            sorted: self.sorted,
        }
    }
}

/// Minimum, maximum, run count and ascent of 64 (or fewer) rows, NULL
/// rows (clear bits of `word`) taking the value of the valid row before
/// them; `prev` is that value on entry and the last row's on exit.
#[inline(always)]
fn int_block(
    block: &[i64],
    word: u64,
    prev: &mut i64,
    min: &mut i64,
    max: &mut i64,
    runs: &mut usize,
    descents: &mut usize,
) {
    let full = if block.len() == 64 {
        u64::MAX
    } else {
        (1u64 << block.len()) - 1
    };
    if word & full == full {
        let (mut lo, mut hi) = (*min, *max);
        for &x in block {
            lo = lo.min(x);
            hi = hi.max(x);
        }
        (*min, *max) = (lo, hi);
        let mut changes = usize::from(block[0] != *prev);
        let mut down = usize::from(block[0] < *prev);
        for w in block.windows(2) {
            changes += usize::from(w[0] != w[1]);
            down += usize::from(w[1] < w[0]);
        }
        *runs += changes;
        *descents += down;
        *prev = block[block.len() - 1];
    } else if word & full != 0 {
        let mut bits = word;
        let mut p = *prev;
        for &v in block {
            let x = if bits & 1 == 1 { v } else { p };
            bits >>= 1;
            *min = (*min).min(x);
            *max = (*max).max(x);
            *runs += usize::from(x != p);
            p = x;
        }
        *prev = p;
    }
}

/// The common factor of the differences `v - first` over the valid `v`
/// (0 when all are equal), stopping at 1. Each row costs one divisibility
/// test by the factor so far ([`ExactDivisor::divides`]); Euclid runs only
/// when it fails.
fn int_scale(values: &[i64], validity: Option<&Bitmap>, first: i64) -> u64 {
    let mut scale = 0u64;
    let mut divisor: Option<ExactDivisor> = None;
    for (w, block) in values.chunks(64).enumerate() {
        let word = validity.map_or(u64::MAX, |v| v.word(w));
        if word == 0 {
            continue;
        }
        let mut bits = word;
        for &v in block {
            // A NULL row counts as `first`: a difference of 0.
            let x = if bits & 1 == 1 { v } else { first };
            bits >>= 1;
            // |x - first| < 2^64 always fits.
            let d = (x as i128 - first as i128).unsigned_abs() as u64;
            let divides = match &divisor {
                Some(e) => e.divides(d),
                None => d == 0,
            };
            if !divides {
                scale = gcd(scale, d);
                if scale == 1 {
                    return 1;
                }
                divisor = Some(ExactDivisor::new(scale));
            }
        }
    }
    scale
}

/// [`IntStats`] of `values` (values at NULL rows are ignored) in one pass
/// (and a second for the common factor, which stops once it is 1: after a
/// few rows for most columns); `None` when no row is valid.
pub(crate) fn int_stats(values: &[i64], validity: Option<&Bitmap>) -> Option<IntStats> {
    let len = values.len();
    let first_row = first_valid(len, validity)?;
    let last_row = last_valid(len, validity)?;
    let first = values[first_row];
    let (mut min, mut max, mut runs, mut descents) = (first, first, 1usize, 0usize);
    let mut prev = first;
    for (w, block) in values.chunks(64).enumerate() {
        let word = validity.map_or(u64::MAX, |v| v.word(w));
        int_block(
            block,
            word,
            &mut prev,
            &mut min,
            &mut max,
            &mut runs,
            &mut descents,
        );
    }
    let valid = validity.map_or(len, Bitmap::count_ones);
    Some(IntStats {
        first_row,
        last_row,
        min,
        max,
        scale: if min == max {
            0
        } else {
            int_scale(values, validity, first)
        },
        runs,
        sorted: validity.is_none() && descents == 0,
        null_count: len - valid,
    })
}

/// Statistics of the valid floats of a partition, from one pass
/// ([`float_stats`]). Minimum and maximum follow [`crate::types::cmp_f64`]
/// (NaN above everything, `0.0` and `-0.0` equal, the first of equal
/// values kept).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct FloatStats {
    /// The first valid value.
    pub first: f64,
    /// Smallest valid value.
    pub min: f64,
    /// Largest valid value.
    pub max: f64,
    /// Smallest and largest finite valid values (`None` when none is
    /// finite).
    pub finite: Option<(f64, f64)>,
    /// Whether every valid value has the bits of the first.
    pub constant: bool,
    /// Runs of valid values with equal bits, NULL rows not breaking them.
    pub runs: usize,
    /// Whether the values ascend under `cmp_f64`; never with a validity
    /// bitmap.
    pub sorted: bool,
    /// NULL rows.
    pub null_count: usize,
}

impl FloatStats {
    /// The zone map these statistics give a float column.
    pub fn zone(&self) -> ZoneMap {
        ZoneMap {
            min: Value::Float(self.min),
            max: Value::Float(self.max),
            null_count: self.null_count,
            sorted: self.sorted,
        }
    }
}

/// [`FloatStats`] of `values` (values at NULL rows are ignored); `None`
/// when no row is valid. One branch-free pass under plain `<`, which is
/// `cmp_f64`'s order when no value is NaN; a column with a NaN is read
/// again under `cmp_f64` itself. Infinities are looked for in the same
/// pass; only a column that has one is read again for its finite range.
pub(crate) fn float_stats(values: &[f64], validity: Option<&Bitmap>) -> Option<FloatStats> {
    let len = values.len();
    let first = values[first_valid(len, validity)?];
    let (mut min, mut max, mut prev) = (first, first, first);
    let (mut runs, mut descents) = (1usize, 0usize);
    let mut special = false;
    for (w, block) in values.chunks(64).enumerate() {
        let word = validity.map_or(u64::MAX, |v| v.word(w));
        if word == 0 {
            continue;
        }
        let mut bits = word;
        let mut p = prev;
        for &v in block {
            let x = if bits & 1 == 1 { v } else { p };
            bits >>= 1;
            special |= !x.is_finite();
            min = if x < min { x } else { min };
            max = if x > max { x } else { max };
            runs += usize::from(x.to_bits() != p.to_bits());
            descents += usize::from(x < p);
            p = x;
        }
        prev = p;
    }
    let valid = validity.map_or(len, Bitmap::count_ones);
    let mut stats = FloatStats {
        first,
        min,
        max,
        finite: first.is_finite().then_some((min, max)),
        constant: runs == 1,
        runs,
        sorted: validity.is_none() && descents == 0,
        null_count: len - valid,
    };
    if special {
        slow_float_order(values, validity, &mut stats);
    }
    Some(stats)
}

/// The order statistics of [`float_stats`] for a column holding NaN or an
/// infinity: `cmp_f64` for the minimum, maximum and ascent, and the finite
/// range on its own.
#[cold]
fn slow_float_order(values: &[f64], validity: Option<&Bitmap>, stats: &mut FloatStats) {
    use crate::types::cmp_f64;
    let valid = |i: usize| validity.is_none_or(|v| v.get(i));
    let (mut min, mut max) = (stats.first, stats.first);
    let mut finite: Option<(f64, f64)> = None;
    let mut sorted = validity.is_none();
    let mut prev = f64::NEG_INFINITY;
    for (i, &v) in values.iter().enumerate() {
        if !valid(i) {
            continue;
        }
        if cmp_f64(v, min).is_lt() {
            min = v;
        }
        if cmp_f64(v, max).is_gt() {
            max = v;
        }
        sorted &= cmp_f64(v, prev).is_ge();
        prev = v;
        if v.is_finite() {
            finite = Some(match finite {
                None => (v, v),
                Some((lo, hi)) => (
                    if cmp_f64(v, lo).is_lt() { v } else { lo },
                    if cmp_f64(v, hi).is_gt() { v } else { hi },
                ),
            });
        }
    }
    stats.min = min;
    stats.max = max;
    stats.sorted = sorted;
    stats.finite = finite;
}

/// Division by a constant `d` of values it divides exactly, and the test
/// for that, each one multiplication: `d = 2^k · o` with `o` odd, and `o`'s
/// inverse modulo 2^64 (Newton's iteration). `x` is a multiple of `d`
/// exactly when its low `k` bits are clear and `(x >> k) · o⁻¹ mod 2^64`
/// is at most `(2^64 - 1) / o`, and that product is then `x / d`
/// (H. S. Warren, *Hacker's Delight*, 2nd ed., §10-16 "Exact division by
/// constants" and §10-17 "Test for zero remainder"; Granlund and
/// Montgomery, PLDI 1994).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ExactDivisor {
    shift: u32,
    inverse: u64,
    limit: u64,
}

impl ExactDivisor {
    /// The divisor `d`.
    ///
    /// # Panics
    /// If `d` is 0.
    pub fn new(d: u64) -> ExactDivisor {
        assert!(d != 0, "division by zero");
        let shift = d.trailing_zeros();
        let odd = d >> shift;
        // Each step doubles the correct low bits: 3 (odd·odd ≡ 1 mod 8 for
        // x = odd) → 6 → 12 → 24 → 48 → 96.
        let mut inverse = odd;
        for _ in 0..5 {
            inverse = inverse.wrapping_mul(2u64.wrapping_sub(odd.wrapping_mul(inverse)));
        }
        debug_assert_eq!(odd.wrapping_mul(inverse), 1);
        ExactDivisor {
            shift,
            inverse,
            limit: u64::MAX / odd,
        }
    }

    /// Whether `x` is a multiple of the divisor.
    #[inline(always)]
    pub fn divides(&self, x: u64) -> bool {
        let low = (1u64 << self.shift) - 1;
        x & low == 0 && (x >> self.shift).wrapping_mul(self.inverse) <= self.limit
    }

    /// `x / d` for an `x` that [`ExactDivisor::divides`] (anything for
    /// another `x`).
    #[inline(always)]
    pub fn div_exact(&self, x: u64) -> u64 {
        (x >> self.shift).wrapping_mul(self.inverse)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::cmp_f64;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// The statistics as the row-by-row loops that came before computed
    /// them.
    fn int_oracle(values: &[i64], validity: Option<&Bitmap>) -> Option<IntStats> {
        let valid: Vec<usize> = (0..values.len())
            .filter(|&i| validity.is_none_or(|v| v.get(i)))
            .collect();
        let (&first_row, &last_row) = (valid.first()?, valid.last()?);
        let first = values[first_row];
        let vals: Vec<i64> = valid.iter().map(|&i| values[i]).collect();
        let scale = vals.iter().fold(0u64, |g, &v| {
            gcd(g, (v as i128 - first as i128).unsigned_abs() as u64)
        });
        Some(IntStats {
            first_row,
            last_row,
            min: *vals.iter().min()?,
            max: *vals.iter().max()?,
            scale,
            runs: 1 + vals.windows(2).filter(|w| w[0] != w[1]).count(),
            sorted: validity.is_none() && vals.windows(2).all(|w| w[0] <= w[1]),
            null_count: values.len() - vals.len(),
        })
    }

    fn bitmaps(n: usize, rng: &mut ChaCha8Rng) -> Vec<Option<Bitmap>> {
        vec![
            None,
            Some(Bitmap::from_fn(n, |_| rng.gen_bool(0.5))),
            Some(Bitmap::from_fn(n, |i| i % 64 != 3)),
            Some(Bitmap::from_fn(n, |i| i >= n / 2)),
            Some(Bitmap::from_fn(n, |i| i < 5)),
            Some(Bitmap::new(n, false)),
            Some(Bitmap::new(n, true)),
            Some(Bitmap::from_fn(n, |i| i % 1000 != 7).compact()),
        ]
    }

    #[test]
    fn int_stats_match_the_row_by_row_loops() {
        let mut rng = ChaCha8Rng::seed_from_u64(34);
        let n = 1000;
        let columns: Vec<Vec<i64>> = vec![
            (0..n as i64).collect(),
            (0..n as i64).rev().collect(),
            (0..n).map(|_| rng.gen_range(0..100)).collect(),
            (0..n).map(|_| rng.gen_range(0..50) * 1_000_000).collect(),
            (0..n).map(|i| (i / 90) as i64 * 6).collect(),
            (0..n)
                .map(|_| [i64::MIN, i64::MAX, 0, -1][rng.gen_range(0..4)])
                .collect(),
            (0..n).map(|_| [i64::MIN, i64::MAX][rng.gen_range(0..2)]).collect(),
            vec![7; n],
            (0..n).map(|_| rng.r#gen()).collect(),
        ];
        for values in &columns {
            for len in [0, 1, 2, 63, 64, 65, 200, n] {
                let values = &values[..len];
                for validity in bitmaps(len, &mut rng) {
                    let v = validity.as_ref();
                    assert_eq!(int_stats(values, v), int_oracle(values, v), "{len} {v:?}");
                }
            }
        }
    }

    #[test]
    fn float_stats_match_cmp_f64() {
        let mut rng = ChaCha8Rng::seed_from_u64(35);
        let n = 500;
        let specials = [
            f64::NAN,
            -f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            0.0,
            -0.0,
            f64::MIN_POSITIVE,
            f64::MAX,
            f64::MIN,
        ];
        let money: Vec<f64> = (0..n).map(|_| rng.gen_range(0..10_000) as f64 / 100.0).collect();
        let mut columns = vec![money.clone(), vec![1.5; n], vec![0.0; n]];
        for &s in &specials {
            let mut c = money.clone();
            for _ in 0..5 {
                c[rng.gen_range(0..n)] = s;
            }
            columns.push(c);
        }
        columns.push((0..n).map(|_| specials[rng.gen_range(0..specials.len())]).collect());
        columns.push((0..n).map(|i| if i % 2 == 0 { 0.0 } else { -0.0 }).collect());
        columns.push((0..n).map(|i| i as f64 / 4.0).collect());
        for values in &columns {
            for len in [0, 1, 2, 64, 65, n] {
                let values = &values[..len];
                for validity in bitmaps(len, &mut rng) {
                    let v = validity.as_ref();
                    let valid: Vec<f64> = (0..len)
                        .filter(|&i| v.is_none_or(|b| b.get(i)))
                        .map(|i| values[i])
                        .collect();
                    let got = float_stats(values, v);
                    let Some(&first) = valid.first() else {
                        assert!(got.is_none());
                        continue;
                    };
                    let got = got.unwrap();
                    let pick = |better: &dyn Fn(f64, f64) -> bool, of: &[f64]| {
                        of.iter().copied().fold(None, |m: Option<f64>, x| match m {
                            Some(m) if !better(x, m) => Some(m),
                            _ => Some(x),
                        })
                    };
                    let min = pick(&|x, m| cmp_f64(x, m).is_lt(), &valid).unwrap();
                    let max = pick(&|x, m| cmp_f64(x, m).is_gt(), &valid).unwrap();
                    assert_eq!(got.min.to_bits(), min.to_bits(), "{valid:?}");
                    assert_eq!(got.max.to_bits(), max.to_bits(), "{valid:?}");
                    let finite: Vec<f64> = valid.iter().copied().filter(|x| x.is_finite()).collect();
                    let expected = pick(&|x, m| cmp_f64(x, m).is_lt(), &finite)
                        .zip(pick(&|x, m| cmp_f64(x, m).is_gt(), &finite));
                    assert_eq!(
                        got.finite.map(|(a, b)| (a.to_bits(), b.to_bits())),
                        expected.map(|(a, b)| (a.to_bits(), b.to_bits()))
                    );
                    let runs = 1 + valid
                        .windows(2)
                        .filter(|w| w[0].to_bits() != w[1].to_bits())
                        .count();
                    assert_eq!(got.runs, runs);
                    assert_eq!(got.constant, runs == 1);
                    assert_eq!(got.first.to_bits(), first.to_bits());
                    let sorted = v.is_none() && valid.windows(2).all(|w| cmp_f64(w[1], w[0]).is_ge());
                    assert_eq!(got.sorted, sorted, "{valid:?}");
                    assert_eq!(got.null_count, len - valid.len());
                }
            }
        }
    }

    #[test]
    fn exact_divisors_divide_and_test_exactly() {
        let mut rng = ChaCha8Rng::seed_from_u64(36);
        let mut divisors = vec![
            1u64,
            2,
            3,
            6,
            7,
            10,
            1000,
            1_000_000,
            86_400_000_000,
            1 << 63,
            u64::MAX,
        ];
        for _ in 0..200 {
            let top = 1u64 << rng.gen_range(1..64);
            divisors.push(rng.gen_range(1..top));
        }
        for d in divisors {
            let e = ExactDivisor::new(d);
            let quotients = [0u64, 1, 2, 12345, u64::MAX / d, u64::MAX / d / 2];
            for q in quotients.into_iter().filter(|&q| q <= u64::MAX / d) {
                let x = q * d;
                assert!(e.divides(x), "{d} {x}");
                assert_eq!(e.div_exact(x), q, "{d} {x}");
            }
            for _ in 0..200 {
                let x: u64 = rng.r#gen::<u64>() >> rng.gen_range(0..64);
                assert_eq!(e.divides(x), x.is_multiple_of(d), "{d} {x}");
            }
            for x in [u64::MAX, u64::MAX - 1, d.wrapping_add(1), d.wrapping_sub(1)] {
                assert_eq!(e.divides(x), x.is_multiple_of(d), "{d} {x}");
            }
        }
    }
}
