//! Delta: nearly sorted integers and timestamps as differences from the
//! previous row, with an absolute anchor every [`ANCHOR_ROWS`] rows.
//!
//! A partition of taxi pickups spans weeks (offsets need u32) while
//! consecutive pickups are seconds apart (deltas fit u8). Deltas are stored
//! frame-of-reference style: `(delta - delta_base) / scale` in the narrowest
//! width, `scale` being the gcd of those differences (whole seconds in
//! microseconds give scale 10^6), so a column whose rows go slightly
//! backwards still packs narrowly.
//!
//! # Format
//! Row `i` is `anchors[i / ANCHOR_ROWS]` when `i` is a multiple of
//! [`ANCHOR_ROWS`], else row `i - 1` plus `delta_base + scale · codes[i]`
//! (wrapping i64 arithmetic, so any i64 sequence encodes). NULL rows repeat
//! the previous value (delta 0), so they cost no range.
//!
//! # Random access and kernels
//! `get(i)` sums at most `ANCHOR_ROWS - 1` deltas from its anchor; ranges
//! and selections decode from the nearest anchor. There is no kernel on
//! the codes themselves (a delta says nothing about the value without its
//! prefix): comparisons, sums and min/max decode a batch of
//! [`super::BATCH_ROWS`] rows at a time, which costs about as much as
//! reading offsets. Choose delta for memory, not for scan speed.

use std::ops::Range;

use super::bitmap::Bitmap;
use super::cmp::{BATCH_ROWS, CmpOp, mask_by_batches};
use super::codes::{Code, Codes};
use super::column::gcd;
use crate::store::with_codes;

/// Rows between absolute anchors: `get` costs at most this many additions,
/// and anchors cost `8 / ANCHOR_ROWS` bytes per row (1/16).
pub const ANCHOR_ROWS: usize = 128;

/// Integers of one partition as deltas with anchors.
///
/// # Invariants
/// `anchors.len() == len.div_ceil(ANCHOR_ROWS)`; `codes.len() == len`; the
/// code at an anchor row is 0 and unused.
#[derive(Debug, Clone, PartialEq)]
pub struct Delta {
    len: usize,
    anchors: Vec<i64>,
    delta_base: i64,
    scale: u64,
    codes: Codes,
}

impl Delta {
    /// Encodes a partition's integers or timestamps; values at rows where
    /// `validity` is false are ignored. `None` when no row is valid.
    pub fn encode(values: &[i64], validity: Option<&Bitmap>) -> Option<Delta> {
        let len = values.len();
        let valid = |i: usize| validity.is_none_or(|v| v.get(i));
        let first = (0..len).find(|&i| valid(i))?;
        // The values with NULL rows carrying the previous (or first) value.
        let mut prev = values[first];
        let filled: Vec<i64> = (0..len)
            .map(|i| {
                if valid(i) {
                    prev = values[i];
                }
                prev
            })
            .collect();
        let delta = |i: usize| filled[i].wrapping_sub(filled[i - 1]);
        let deltas = (1..len).filter(|i| i % ANCHOR_ROWS != 0).map(delta);
        let delta_base = deltas.clone().min().unwrap_or(0);
        let mut scale = 0u64;
        let mut range = 0u64;
        for d in deltas {
            let off = d.wrapping_sub(delta_base) as u64;
            range = range.max(off);
            if scale != 1 {
                scale = gcd(scale, off);
            }
        }
        let scale = scale.max(1);
        let codes = Codes::pack(
            (0..len).map(|i| {
                if i % ANCHOR_ROWS == 0 {
                    0
                } else {
                    delta(i).wrapping_sub(delta_base) as u64 / scale
                }
            }),
            range / scale,
        );
        let anchors = filled.iter().step_by(ANCHOR_ROWS).copied().collect();
        Some(Delta {
            len,
            anchors,
            delta_base,
            scale,
            codes,
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

    /// The delta codes (one per row; 0 at anchor rows).
    pub fn codes(&self) -> &Codes {
        &self.codes
    }

    /// The value at row `i` (at a NULL row, the previous valid value).
    ///
    /// # Panics
    /// If `i >= len`.
    pub fn get(&self, i: usize) -> i64 {
        let anchor = i / ANCHOR_ROWS * ANCHOR_ROWS;
        let (base, scale) = (self.delta_base, self.scale);
        with_codes!(&self.codes, c => c[anchor + 1..=i].iter().fold(
            self.anchors[i / ANCHOR_ROWS],
            |v, d| v.wrapping_add(base.wrapping_add(d.to_u64().wrapping_mul(scale) as i64)),
        ))
    }

    /// Appends the values of rows `range` to `out`, decoding from the anchor
    /// at or before `range.start`.
    ///
    /// # Panics
    /// If the range is out of bounds.
    pub fn decode_range(&self, range: Range<usize>, out: &mut Vec<i64>) {
        if range.is_empty() {
            return;
        }
        let (base, scale) = (self.delta_base, self.scale);
        with_codes!(&self.codes, c => {
            let mut i = range.start;
            while i < range.end {
                let k = i / ANCHOR_ROWS;
                let anchor = k * ANCHOR_ROWS;
                let end = (anchor + ANCHOR_ROWS).min(range.end);
                let mut v = self.anchors[k];
                for d in &c[anchor + 1..i.max(anchor + 1)] {
                    v = v.wrapping_add(base.wrapping_add(d.to_u64().wrapping_mul(scale) as i64));
                }
                if i == anchor {
                    out.push(v);
                    i += 1;
                }
                for d in &c[i..end] {
                    v = v.wrapping_add(base.wrapping_add(d.to_u64().wrapping_mul(scale) as i64));
                    out.push(v);
                }
                i = end;
            }
        })
    }

    /// Appends the values of the rows in `selection` (ascending) to `out`.
    pub fn decode_selection(&self, selection: &[u32], out: &mut Vec<i64>) {
        debug_assert!(selection.windows(2).all(|w| w[0] < w[1]));
        // Decode each touched anchor block once.
        let mut block: Vec<i64> = Vec::with_capacity(ANCHOR_ROWS);
        let mut block_index = usize::MAX;
        for &row in selection {
            let row = row as usize;
            let k = row / ANCHOR_ROWS;
            if k != block_index {
                block.clear();
                let start = k * ANCHOR_ROWS;
                self.decode_range(start..(start + ANCHOR_ROWS).min(self.len), &mut block);
                block_index = k;
            }
            out.push(block[row % ANCHOR_ROWS]);
        }
    }

    /// Heap bytes held: codes and anchors.
    pub fn heap_bytes(&self) -> usize {
        self.codes.heap_bytes() + self.anchors.len() * 8
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

    /// Calls `f` on each batch of decoded values with its first row.
    fn for_each_batch(&self, mut f: impl FnMut(usize, &[i64])) {
        let mut batch = Vec::with_capacity(BATCH_ROWS);
        for start in (0..self.len).step_by(BATCH_ROWS) {
            batch.clear();
            self.decode_range(start..(start + BATCH_ROWS).min(self.len), &mut batch);
            f(start, &batch);
        }
    }

    /// Exact sum over the valid rows, and their count.
    pub fn sum(&self, validity: Option<&Bitmap>) -> (i128, u64) {
        let mut total = 0i128;
        let mut count = 0u64;
        self.for_each_batch(|start, batch| {
            for (j, &v) in batch.iter().enumerate() {
                if validity.is_none_or(|b| b.get(start + j)) {
                    total += v as i128;
                    count += 1;
                }
            }
        });
        (total, count)
    }

    /// Smallest valid value (`None` when every row is NULL).
    pub fn min(&self, validity: Option<&Bitmap>) -> Option<i64> {
        self.fold_valid(validity, i64::min)
    }

    /// Largest valid value.
    pub fn max(&self, validity: Option<&Bitmap>) -> Option<i64> {
        self.fold_valid(validity, i64::max)
    }

    fn fold_valid(&self, validity: Option<&Bitmap>, f: fn(i64, i64) -> i64) -> Option<i64> {
        let mut acc: Option<i64> = None;
        self.for_each_batch(|start, batch| {
            for (j, &v) in batch.iter().enumerate() {
                if validity.is_none_or(|b| b.get(start + j)) {
                    acc = Some(acc.map_or(v, |a| f(a, v)));
                }
            }
        });
        acc
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn cases() -> Vec<(Vec<i64>, Option<Bitmap>)> {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let mut out: Vec<(Vec<i64>, Option<Bitmap>)> = vec![
            (vec![i64::MIN, i64::MAX, i64::MIN, 0, -1], None),
            (vec![3], None),
            ((0..1000).map(|i| i * 1_000_000).collect(), None),
        ];
        for case in 0..30 {
            let len = rng.gen_range(1..2000);
            let mut t = 1_400_000_000_000_000i64;
            let back = [0, 5, 300][case % 3];
            let values: Vec<i64> = (0..len)
                .map(|_| {
                    t += rng.gen_range(0..30) * 1_000_000;
                    t - rng.gen_range(0..=back) * 1_000_000
                })
                .collect();
            let validity = (case % 4 == 3).then(|| {
                Bitmap::from_bools(&(0..len).map(|_| rng.gen_bool(0.9)).collect::<Vec<_>>())
            });
            out.push((values, validity));
        }
        out
    }

    fn valid(v: &Option<Bitmap>, i: usize) -> bool {
        v.as_ref().is_none_or(|b| b.get(i))
    }

    #[test]
    fn nearly_sorted_seconds_pack_into_bytes() {
        let mut t = 0i64;
        let values: Vec<i64> = (0..65_536)
            .map(|i| {
                t += (i % 7) * 1_000_000;
                t - (i % 2) * 3_000_000
            })
            .collect();
        let d = Delta::encode(&values, None).unwrap();
        assert_eq!(d.codes().width_name(), "u8");
        assert!(d.heap_bytes() < values.len() * 2);
    }

    #[test]
    fn round_trips_and_kernels_match_the_oracle() {
        let mut rng = ChaCha8Rng::seed_from_u64(6);
        for (values, validity) in cases() {
            let d = Delta::encode(&values, validity.as_ref()).unwrap();
            for (i, &v) in values.iter().enumerate() {
                if valid(&validity, i) {
                    assert_eq!(d.get(i), v, "row {i}");
                }
            }
            for _ in 0..10 {
                let a = rng.gen_range(0..=values.len());
                let b = rng.gen_range(a..=values.len());
                let mut out = vec![];
                d.decode_range(a..b, &mut out);
                assert_eq!(out.len(), b - a);
                let sel: Vec<u32> = (a as u32..b as u32).filter(|_| rng.gen_bool(0.2)).collect();
                let mut picked = vec![];
                d.decode_selection(&sel, &mut picked);
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
            }
            let present: Vec<i64> = (0..values.len())
                .filter(|&i| valid(&validity, i))
                .map(|i| values[i])
                .collect();
            let sum: i128 = present.iter().map(|&v| v as i128).sum();
            assert_eq!(d.sum(validity.as_ref()), (sum, present.len() as u64));
            assert_eq!(d.min(validity.as_ref()), present.iter().copied().min());
            assert_eq!(d.max(validity.as_ref()), present.iter().copied().max());
            for k in 0..5 {
                let c = values[k * values.len() / 5];
                for op in CmpOp::ALL {
                    let words = d.filter(op, c, validity.as_ref());
                    for (i, &v) in values.iter().enumerate() {
                        let bit = (words[i / 64] >> (i % 64)) & 1 == 1;
                        assert_eq!(bit, op.holds(v.cmp(&c)) && valid(&validity, i));
                    }
                }
            }
        }
    }
}
