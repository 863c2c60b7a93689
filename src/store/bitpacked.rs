//! Bit-packed codes: each code in exactly as many bits as the largest
//! needs, instead of the next of 8/16/32/64.
//!
//! A coordinate with six decimals spanning 0.3 degrees needs 19 bits: 4
//! bytes as [`Codes`], 2.4 bytes bit-packed. [`BitPacked`] is the storage
//! the other codecs' codes (ALP digits, offsets, residuals, dictionary
//! codes) can move to once the executor reads codes through
//! [`BitPacked::unpack_range`] a batch at a time.
//!
//! # Format
//! Code `i` occupies bits `i·bits .. (i+1)·bits` of the little-endian
//! stream of u64 words (least significant bit first), so it spans at most
//! two words. One zero word of padding at the end lets every read load two
//! words without a bounds branch.
//!
//! # Performance
//! A plain shift-and-mask layout, decoded a value at a time (about a
//! nanosecond per code). FastLanes (Afroozeh and Boncz, VLDB 2023)
//! interleaves 1,024 codes across 16 lanes so unpacking vectorizes at tens
//! of codes per nanosecond; that layout is the next step if unpacking shows
//! up in profiles.
//!
//! [`Codes`]: super::Codes

use std::ops::Range;

use super::bitmap::Bitmap;
use super::cmp::CodePredicate;

/// Codes of one width in `1..=64` bits, packed back to back.
///
/// # Invariants
/// `words.len() == (len · bits).div_ceil(64) + 1`; bits past the last code
/// are zero; every code is `<= max_code`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BitPacked {
    len: usize,
    bits: u32,
    words: Vec<u64>,
}

/// Bits needed for codes up to `max` (at least 1).
pub fn bits_for(max: u64) -> u32 {
    (64 - max.leading_zeros()).max(1)
}

impl BitPacked {
    /// Packs `values` at the width of `max`.
    ///
    /// # Panics
    /// Debug builds assert every value is `<= max`.
    pub fn pack(values: impl ExactSizeIterator<Item = u64>, max: u64) -> BitPacked {
        let len = values.len();
        let bits = bits_for(max);
        let mut words = vec![0u64; (len * bits as usize).div_ceil(64) + 1];
        for (i, v) in values.enumerate() {
            debug_assert!(v <= max);
            let at = i * bits as usize;
            let (w, shift) = (at / 64, at % 64);
            words[w] |= v << shift;
            if shift + bits as usize > 64 {
                words[w + 1] |= v >> (64 - shift);
            }
        }
        BitPacked { len, bits, words }
    }

    /// Number of codes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when there are no codes.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bits per code.
    pub fn bits(&self) -> u32 {
        self.bits
    }

    /// Heap bytes held.
    pub fn heap_bytes(&self) -> usize {
        self.words.len() * 8
    }

    /// Code `i`.
    ///
    /// # Panics
    /// If `i >= len` (debug builds; release builds may return a padding
    /// code for `i` just past the end).
    #[inline]
    pub fn get(&self, i: usize) -> u64 {
        debug_assert!(i < self.len);
        let at = i * self.bits as usize;
        let (w, shift) = (at / 64, (at % 64) as u32);
        let mask = u64::MAX >> (64 - self.bits);
        // The high word's contribution; shifting by 64 would overflow, so
        // split it into two shifts.
        let high = (self.words[w + 1] << 1) << (63 - shift);
        ((self.words[w] >> shift) | high) & mask
    }

    /// Appends codes `range` to `out`.
    ///
    /// # Panics
    /// If the range is out of bounds.
    pub fn unpack_range(&self, range: Range<usize>, out: &mut Vec<u64>) {
        assert!(range.end <= self.len, "range {range:?} past {}", self.len);
        out.extend(range.map(|i| self.get(i)));
    }

    /// Mask words (bit `j` of word `w` is row `64·w + j`) of the codes that
    /// match `pred`, ANDed with `validity`.
    pub fn filter(&self, pred: &CodePredicate, validity: Option<&Bitmap>) -> Vec<u64> {
        let lo = pred.codes.start;
        let width = pred.codes.end.saturating_sub(lo);
        let flip = if pred.negated { u64::MAX } else { 0 };
        let mut words = vec![0u64; self.len.div_ceil(64)];
        for (w, word) in words.iter_mut().enumerate() {
            let start = w * 64;
            let n = (self.len - start).min(64);
            let mut bits = 0u64;
            for j in 0..n {
                bits |= ((self.get(start + j).wrapping_sub(lo) < width) as u64) << j;
            }
            let live = if n == 64 { u64::MAX } else { (1u64 << n) - 1 };
            *word = (bits ^ flip) & live & validity.map_or(u64::MAX, |v| v.word(w));
        }
        words
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::CmpOp;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn every_width_round_trips() {
        let mut rng = ChaCha8Rng::seed_from_u64(16);
        for bits in 1..=64u32 {
            let max = if bits == 64 {
                u64::MAX
            } else {
                (1u64 << bits) - 1
            };
            for len in [0, 1, 63, 64, 65, 1000] {
                let mut values: Vec<u64> = (0..len).map(|_| rng.r#gen::<u64>() & max).collect();
                if len > 0 {
                    values[0] = max;
                }
                let p = BitPacked::pack(values.iter().copied(), max);
                assert_eq!(p.bits(), bits);
                assert_eq!(p.len(), len);
                assert_eq!(p.heap_bytes(), ((len * bits as usize).div_ceil(64) + 1) * 8);
                for (i, &v) in values.iter().enumerate() {
                    assert_eq!(p.get(i), v, "bits {bits} row {i}");
                }
                let mut out = vec![];
                p.unpack_range(len / 3..len, &mut out);
                assert_eq!(out, values[len / 3..]);
            }
        }
        assert_eq!(bits_for(0), 1);
        assert_eq!(bits_for(300_000), 19);
    }

    #[test]
    fn filter_matches_the_predicate() {
        let mut rng = ChaCha8Rng::seed_from_u64(17);
        let values: Vec<u64> = (0..1000).map(|_| rng.gen_range(0..600)).collect();
        let p = BitPacked::pack(values.iter().copied(), 599);
        let validity = Bitmap::from_bools(&(0..1000).map(|i| i % 5 != 0).collect::<Vec<_>>());
        for (lt, le) in [(0, 0), (10, 20), (300, 300), (0, 600), (599, 600)] {
            for op in CmpOp::ALL {
                let pred = op.predicate(lt, le, 600);
                for v in [None, Some(&validity)] {
                    let words = p.filter(&pred, v);
                    for (i, &c) in values.iter().enumerate() {
                        let bit = (words[i / 64] >> (i % 64)) & 1 == 1;
                        assert_eq!(bit, pred.matches(c) && v.is_none_or(|v| v.get(i)));
                    }
                }
            }
        }
    }
}
