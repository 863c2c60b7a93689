//! Linear: integers that follow a line, `base + step · row`, plus narrow
//! residuals.
//!
//! Row numbers (`taxi.trip_id`, `numbers.a`) and regular series cost
//! **zero bytes per row**: with every residual zero, the codec is three
//! integers. A series with jitter stores its residuals as offsets from the
//! smallest one, in the narrowest width ([`Codes::pack`]).
//!
//! # Format
//! Row `i` is `base + step·i + residual[i]` with `residual[i]` a code (0
//! when `residuals` is `None`). The arithmetic never leaves i64: `base` and
//! `step` are chosen so that the sum is exact in i128 and fits i64 for every
//! row, so i64 wrapping arithmetic and i128 arithmetic agree.
//!
//! # Choosing the line
//! `step` is the slope between the first and the last valid row, rounded to
//! the nearest integer; `base` then absorbs the smallest residual. This is
//! exact for row numbers and close for evenly spaced series; the chooser
//! ([`super::choose_ints`]) compares the residual width with plain offsets.
//!
//! # Kernels
//! With no residuals the values are monotone in the row, so a comparison
//! is a row range ([`Linear::row_predicate`]) and the sum is closed-form;
//! otherwise comparisons and min/max decode a batch at a time.

use std::ops::Range;

use super::bitmap::Bitmap;
use super::cmp::{CmpOp, CodePredicate, mask_by_batches, partition_point};
use super::codes::{Code, Codes};
use crate::store::with_codes;

/// Integers of one partition as a line plus residuals.
///
/// # Invariants
/// For every valid row, `base + step·i + code(i)` computed in i128 is the
/// value (so it fits i64). NULL rows hold code 0.
#[derive(Debug, Clone, PartialEq)]
pub struct Linear {
    len: usize,
    base: i64,
    step: i64,
    residuals: Option<Codes>,
}

/// The smallest and largest residual `v[i] - v[0] - step·i` of rows
/// without NULLs, computed in i64 (a branch-free loop the compiler can
/// unroll, instead of i128 per row); `None` when some step of the
/// computation overflowed, and the caller computes in i128.
fn residual_range_i64(values: &[i64], step: i64) -> Option<(i64, i64)> {
    let &first = values.first()?;
    let (mut min, mut max) = (i64::MAX, i64::MIN);
    let mut overflow = false;
    for (i, &v) in values.iter().enumerate() {
        let (rise, o1) = v.overflowing_sub(first);
        let (along, o2) = step.overflowing_mul(i as i64);
        let (r, o3) = rise.overflowing_sub(along);
        overflow |= o1 | o2 | o3;
        min = min.min(r);
        max = max.max(r);
    }
    (!overflow).then_some((min, max))
}

impl Linear {
    /// Encodes a partition's integers (or timestamps); values at rows where
    /// `validity` is false are ignored.
    ///
    /// Returns `None` when no row is valid, when `values.len()` exceeds
    /// `u32::MAX`, or when the residuals would not fit u64 codes.
    pub fn encode(values: &[i64], validity: Option<&Bitmap>) -> Option<Linear> {
        let len = values.len();
        if len > u32::MAX as usize {
            return None;
        }
        let valid = |i: usize| validity.is_none_or(|v| v.get(i));
        let first = (0..len).find(|&i| valid(i))?;
        let last = (0..len).rev().find(|&i| valid(i))?;
        let step: i128 = if last > first {
            let rise = values[last] as i128 - values[first] as i128;
            let run = (last - first) as i128;
            // Nearest integer, ties away from zero.
            (2 * rise + run * rise.signum()) / (2 * run)
        } else {
            0
        };
        let step = i64::try_from(step).ok()?;
        let line = |i: usize| values[first] as i128 + step as i128 * (i as i128 - first as i128);
        if validity.is_none()
            && let Some((min, max)) = residual_range_i64(values, step)
        {
            // Every residual fit i64 as computed, so they are exact.
            let range = (max as i128 - min as i128) as u64;
            let base = i64::try_from(line(0) + min as i128).ok()?;
            let residuals = (range > 0).then(|| {
                let first = values[0];
                Codes::pack(
                    values.iter().enumerate().map(|(i, &v)| {
                        let r = v
                            .wrapping_sub(first)
                            .wrapping_sub(step.wrapping_mul(i as i64));
                        r.wrapping_sub(min) as u64
                    }),
                    range,
                )
            });
            return Some(Linear {
                len,
                base,
                step,
                residuals,
            });
        }
        let (mut min, mut max) = (i128::MAX, i128::MIN);
        for (i, &v) in values.iter().enumerate() {
            if valid(i) {
                let r = v as i128 - line(i);
                min = min.min(r);
                max = max.max(r);
            }
        }
        let range = u64::try_from(max - min).ok()?;
        let base = i64::try_from(line(0) + min).ok()?;
        let residuals = (range > 0).then(|| {
            Codes::pack(
                values.iter().enumerate().map(|(i, &v)| {
                    if valid(i) {
                        (v as i128 - line(i) - min) as u64
                    } else {
                        0
                    }
                }),
                range,
            )
        });
        Some(Linear {
            len,
            base,
            step,
            residuals,
        })
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when there are no rows.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The value the line gives row 0 (before its residual).
    pub fn base(&self) -> i64 {
        self.base
    }

    /// The slope per row.
    pub fn step(&self) -> i64 {
        self.step
    }

    /// The residual codes, `None` when the values are exactly the line.
    pub fn residuals(&self) -> Option<&Codes> {
        self.residuals.as_ref()
    }

    /// True when every row is on the line (no residual bytes).
    pub fn is_exact(&self) -> bool {
        self.residuals.is_none()
    }

    #[inline]
    fn line(&self, i: usize) -> i64 {
        self.base.wrapping_add(self.step.wrapping_mul(i as i64))
    }

    /// The value at row `i` (whatever it is at a NULL row).
    ///
    /// # Panics
    /// If `i >= len` and there are residuals.
    #[inline]
    pub fn get(&self, i: usize) -> i64 {
        let r = self.residuals.as_ref().map_or(0, |c| c.get(i));
        self.line(i).wrapping_add(r as i64)
    }

    /// Appends the values of rows `range` to `out`.
    pub fn decode_range(&self, range: Range<usize>, out: &mut Vec<i64>) {
        let (base, step) = (self.base, self.step);
        let line = move |i: usize| base.wrapping_add(step.wrapping_mul(i as i64));
        match &self.residuals {
            None => out.extend(range.map(line)),
            Some(codes) => with_codes!(codes, c => out.extend(
                c[range.clone()]
                    .iter()
                    .zip(range)
                    .map(|(r, i)| line(i).wrapping_add(r.to_u64() as i64)),
            )),
        }
    }

    /// Appends the values of the rows in `selection` to `out`.
    pub fn decode_selection(&self, selection: &[u32], out: &mut Vec<i64>) {
        out.extend(selection.iter().map(|&i| self.get(i as usize)));
    }

    /// Heap bytes held: the residuals only.
    pub fn heap_bytes(&self) -> usize {
        self.residuals.as_ref().map_or(0, Codes::heap_bytes)
    }

    /// For an exact line: the rows whose value satisfies `value op c`, as a
    /// predicate on row numbers (a range, or its complement for `<>`).
    /// `None` when there are residuals (use [`Linear::filter`]).
    pub fn row_predicate(&self, op: CmpOp, c: i64) -> Option<CodePredicate> {
        if self.residuals.is_some() {
            return None;
        }
        let n = self.len as u64;
        let value = |i: u64| self.base as i128 + self.step as i128 * i as i128;
        let c = c as i128;
        if self.step >= 0 {
            let lt = partition_point(0, n, |i| value(i) >= c);
            let le = partition_point(lt, n, |i| value(i) > c);
            Some(op.predicate(lt, le, n))
        } else {
            // Decreasing: rows `0..gt` are above c, `gt..ge` equal it.
            let gt = partition_point(0, n, |i| value(i) <= c);
            let ge = partition_point(gt, n, |i| value(i) < c);
            let (codes, negated) = match op {
                CmpOp::Eq => (gt..ge, false),
                CmpOp::Ne => (gt..ge, true),
                CmpOp::Lt => (ge..n, false),
                CmpOp::Le => (gt..n, false),
                CmpOp::Gt => (0..gt, false),
                CmpOp::Ge => (0..ge, false),
            };
            Some(CodePredicate { codes, negated })
        }
    }

    /// Evaluates `value op c` on every row, as mask words (bit `j` of word
    /// `w` is row `64·w + j`; NULL rows are 0).
    pub fn filter(&self, op: CmpOp, c: i64, validity: Option<&Bitmap>) -> Vec<u64> {
        mask_by_batches(
            self.len,
            |r, out| self.decode_range(r, out),
            |v: i64| op.holds(v.cmp(&c)),
            validity,
        )
    }

    /// Exact sum over the valid rows, and their count. Closed-form without
    /// NULLs: `n·base + step·n(n-1)/2 + Σ residuals`.
    pub fn sum(&self, validity: Option<&Bitmap>) -> (i128, u64) {
        match validity {
            None => {
                let n = self.len as i128;
                let residuals: i128 = self.residuals.as_ref().map_or(
                    0,
                    |codes| with_codes!(codes, c => c.iter().map(|r| r.to_u64() as i128).sum()),
                );
                (
                    n * self.base as i128 + self.step as i128 * (n * (n - 1) / 2) + residuals,
                    self.len as u64,
                )
            }
            Some(v) => {
                let mut total = 0i128;
                for i in 0..self.len {
                    if v.get(i) {
                        total += self.get(i) as i128;
                    }
                }
                (total, v.count_ones() as u64)
            }
        }
    }

    /// Smallest valid value (`None` when every row is NULL).
    pub fn min(&self, validity: Option<&Bitmap>) -> Option<i64> {
        self.extreme(validity, false)
    }

    /// Largest valid value.
    pub fn max(&self, validity: Option<&Bitmap>) -> Option<i64> {
        self.extreme(validity, true)
    }

    fn extreme(&self, validity: Option<&Bitmap>, largest: bool) -> Option<i64> {
        if self.len == 0 {
            return None;
        }
        if self.residuals.is_none() && validity.is_none() {
            let (a, b) = (self.get(0), self.get(self.len - 1));
            return Some(if largest { a.max(b) } else { a.min(b) });
        }
        let valid = |i: usize| validity.is_none_or(|v| v.get(i));
        let values = (0..self.len).filter(|&i| valid(i)).map(|i| self.get(i));
        if largest { values.max() } else { values.min() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn cases() -> Vec<(Vec<i64>, Option<Bitmap>)> {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let mut out: Vec<(Vec<i64>, Option<Bitmap>)> = vec![
            ((1..=1000).collect(), None),
            ((0..1000).map(|i| 5_000_000 - 7 * i).collect(), None),
            (vec![42; 100], None),
            (vec![i64::MIN, i64::MAX], None),
            (vec![i64::MAX, i64::MIN, 0], None),
            (vec![i64::MIN, 0, i64::MAX], None),
            (vec![9], None),
            (vec![], None),
        ];
        for case in 0..30 {
            let len = rng.gen_range(1..3000);
            let step = [0, 1, -3, 1_000_000, 17][case % 5];
            let jitter = [0, 0, 5, 300, 1 << 40][case % 5];
            let values: Vec<i64> = (0..len as i64)
                .map(|i| 1000 + step * i + rng.gen_range(-jitter..=jitter))
                .collect();
            let validity = (case % 3 == 2).then(|| {
                Bitmap::from_bools(&(0..len).map(|_| rng.gen_bool(0.8)).collect::<Vec<_>>())
            });
            out.push((values, validity));
        }
        out
    }

    fn valid(v: &Option<Bitmap>, i: usize) -> bool {
        v.as_ref().is_none_or(|b| b.get(i))
    }

    #[test]
    fn row_numbers_cost_no_bytes() {
        let rows: Vec<i64> = (1..=65_536).collect();
        let l = Linear::encode(&rows, None).unwrap();
        assert!(l.is_exact());
        assert_eq!((l.base(), l.step(), l.heap_bytes()), (1, 1, 0));
        let jitter: Vec<i64> = (0..1000).map(|i| i * 60 + i % 3).collect();
        let l = Linear::encode(&jitter, None).unwrap();
        assert_eq!(l.residuals().unwrap().width_name(), "u8");
    }

    /// The i64 residual loop (no NULLs) encodes exactly what the i128 loop
    /// (taken when a validity is given, here with every bit set) does,
    /// including lines whose residuals overflow i64 on the way.
    #[test]
    fn the_i64_residual_path_agrees_with_i128() {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let mut columns: Vec<Vec<i64>> = cases()
            .into_iter()
            .filter(|(_, v)| v.is_none())
            .map(|(c, _)| c)
            .collect();
        columns.extend([
            vec![i64::MAX - 3, i64::MAX, i64::MIN, i64::MAX - 1],
            vec![i64::MIN, i64::MIN + 5, 0, i64::MIN + 9],
            vec![0, i64::MAX / 2, i64::MAX - 1],
            vec![0, i64::MIN / 2 + 1, i64::MIN + 2, 7],
            (0..100).map(|i| i64::MIN + i * (1 << 56)).collect(),
            (0..100).map(|i| i64::MAX - i * (1 << 56) + (i % 2)).collect(),
            (0..500)
                .map(|_| [i64::MIN, i64::MAX, 0][rng.gen_range(0..3)])
                .collect(),
            (0..500).map(|_| rng.r#gen()).collect(),
        ]);
        for values in columns {
            let all = Bitmap::new(values.len(), true);
            assert_eq!(
                Linear::encode(&values, None),
                Linear::encode(&values, Some(&all)),
                "{values:?}"
            );
        }
    }

    #[test]
    fn round_trips_and_kernels_match_the_oracle() {
        let mut rng = ChaCha8Rng::seed_from_u64(4);
        for (values, validity) in cases() {
            let Some(l) = Linear::encode(&values, validity.as_ref()) else {
                // Only an empty column or a line beyond i64 has no encoding.
                let extreme = values.iter().any(|&v| v == i64::MIN || v == i64::MAX);
                assert!(values.is_empty() || extreme, "{values:?}");
                continue;
            };
            for (i, &v) in values.iter().enumerate() {
                if valid(&validity, i) {
                    assert_eq!(l.get(i), v);
                }
            }
            let a = rng.gen_range(0..=values.len());
            let b = rng.gen_range(a..=values.len());
            let mut out = Vec::new();
            l.decode_range(a..b, &mut out);
            let sel: Vec<u32> = (a as u32..b as u32).filter(|i| i % 3 == 0).collect();
            let mut picked = Vec::new();
            l.decode_selection(&sel, &mut picked);
            for (j, i) in (a..b).enumerate() {
                if valid(&validity, i) {
                    assert_eq!(out[j], values[i]);
                }
            }
            for (j, &i) in sel.iter().enumerate() {
                if valid(&validity, i as usize) {
                    assert_eq!(picked[j], values[i as usize]);
                }
            }
            let present: Vec<i64> = (0..values.len())
                .filter(|&i| valid(&validity, i))
                .map(|i| values[i])
                .collect();
            let sum: i128 = present.iter().map(|&v| v as i128).sum();
            assert_eq!(l.sum(validity.as_ref()), (sum, present.len() as u64));
            assert_eq!(l.min(validity.as_ref()), present.iter().copied().min());
            assert_eq!(l.max(validity.as_ref()), present.iter().copied().max());
            let mut constants = vec![i64::MIN, i64::MAX, 0];
            for k in 0..12 {
                let v = values[k * values.len() / 12];
                constants.extend([v.saturating_sub(1), v, v.saturating_add(1)]);
            }
            for c in constants {
                for op in CmpOp::ALL {
                    let words = l.filter(op, c, validity.as_ref());
                    let pred = l.row_predicate(op, c);
                    assert_eq!(pred.is_some(), l.is_exact());
                    for (i, &v) in values.iter().enumerate() {
                        let holds = op.holds(v.cmp(&c));
                        let bit = (words[i / 64] >> (i % 64)) & 1 == 1;
                        assert_eq!(bit, holds && valid(&validity, i), "{v} {op:?} {c}");
                        if let Some(p) = &pred
                            && valid(&validity, i)
                        {
                            assert_eq!(p.matches(i as u64), holds, "{v} {op:?} {c}");
                        }
                    }
                }
            }
        }
    }
}
