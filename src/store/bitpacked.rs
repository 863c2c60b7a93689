//! Bit-packed codes: each code in exactly as many bits as the largest
//! needs, instead of the next of 8/16/32/64.
//!
//! A coordinate with six decimals spanning 0.3 degrees needs 19 bits: 4
//! bytes as [`Codes`], 2.4 bytes bit-packed. [`BitPacked`] stores ALP's
//! digit codes when that saves enough (see [`super::AlpCodes`]); the
//! executor reads them a batch at a time through [`BitPacked::unpack`] and
//! [`BitPacked::unpack_rows`], never through [`BitPacked::get`] per row.
//!
//! # Format
//! Code `i` occupies bits `i·bits .. (i+1)·bits` of a little-endian bit
//! stream (least significant bit first), kept as bytes. Eight bytes of
//! zero padding past the last code let every read load eight bytes at the
//! code's first byte without a bounds branch.
//!
//! # Performance
//! Unpacking is specialized per width: [`BitPacked::unpack`] dispatches
//! once per call to a kernel whose width `B` is a constant, so shifts and
//! masks are immediates. Eight consecutive codes span exactly `B` bytes, so
//! within a group of eight every code's byte offset and shift are constants
//! too: one unaligned 8-byte load, a shift and a mask per code (for
//! `B <= 56`, where `shift + B <= 63`; wider codes take a second load).
//! That is about 4.7 instructions per code under callgrind (four per code
//! plus a bounds check and loop test per group), against well under one
//! for a vectorized pass over byte-width codes: the remaining cost of a
//! bit-packed scan. [`BitPacked::for_each`] runs a small closure inside
//! the loop instead (a sum: no store, no second pass); consumers that
//! vectorize (masks, decoding) are faster over the unpacked buffer.
//! FastLanes (Afroozeh and Boncz, VLDB 2023) interleaves 1,024 codes
//! across 16 lanes so unpacking vectorizes at tens of codes per
//! nanosecond; that layout is the next step.
//!
//! [`Codes`]: super::Codes

use std::ops::Range;

use super::bitmap::Bitmap;
use super::cmp::CodePredicate;

/// Codes of one width in `1..=64` bits, packed back to back.
///
/// # Invariants
/// `bytes.len() == (len · bits).div_ceil(64) · 8 + 8`; bits past the last
/// code are zero; every code is `<= max_code` given to [`BitPacked::pack`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BitPacked {
    len: usize,
    bits: u32,
    bytes: Vec<u8>,
}

/// Bits needed for codes up to `max` (at least 1).
pub fn bits_for(max: u64) -> u32 {
    (64 - max.leading_zeros()).max(1)
}

/// Widest codes the one-load kernels read: `shift (<= 7) + B <= 63`.
const ONE_LOAD_MAX_BITS: usize = 56;

/// The eight bytes at `at`, little-endian.
#[inline(always)]
fn load(bytes: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(bytes[at..at + 8].try_into().expect("eight bytes"))
}

/// Code `i` at width `bits` (any of `1..=64`).
#[inline(always)]
fn code_at(bytes: &[u8], bits: usize, i: usize) -> u64 {
    let at = i * bits;
    let (byte, shift) = (at / 8, (at % 8) as u32);
    let mask = u64::MAX >> (64 - bits);
    let low = load(bytes, byte) >> shift;
    if bits <= ONE_LOAD_MAX_BITS {
        return low & mask;
    }
    // The ninth byte's contribution; shifting by 64 would overflow, so
    // split it into two shifts.
    let high = ((bytes[byte + 8] as u64) << 1) << (63 - shift);
    (low | high) & mask
}

/// Codes `start..start + out.len()` at the constant width `B <= 56`.
fn unpack_run<const B: usize>(bytes: &[u8], start: usize, out: &mut [u64]) {
    let mask = u64::MAX >> (64 - B);
    let end = start + out.len();
    let (mut i, mut k) = (start, 0);
    // One at a time up to a multiple of 8 ...
    while i < end && !i.is_multiple_of(8) {
        out[k] = code_at(bytes, B, i);
        i += 1;
        k += 1;
    }
    // ... then groups of eight codes, which span exactly `B` bytes: every
    // offset and shift below is a constant.
    let groups = (end - i) / 8;
    if groups > 0 {
        let src = &bytes[i / 8 * B..][..groups * B + 8];
        for (g, dst) in out[k..k + groups * 8].chunks_exact_mut(8).enumerate() {
            let group = &src[g * B..][..B + 8];
            for (j, d) in dst.iter_mut().enumerate() {
                let at = j * B;
                *d = (load(group, at / 8) >> (at % 8)) & mask;
            }
        }
        i += groups * 8;
        k += groups * 8;
    }
    while i < end {
        out[k] = code_at(bytes, B, i);
        i += 1;
        k += 1;
    }
}

/// Calls `f(code)` for codes `range`, in order, at the constant width
/// `B <= 56`. Inlined into each caller, so `f` runs inside the unpacking
/// loop: no intermediate buffer.
#[inline(always)]
fn fold_run<const B: usize>(bytes: &[u8], range: Range<usize>, mut f: impl FnMut(u64)) {
    let mask = u64::MAX >> (64 - B);
    let (mut i, end) = (range.start, range.end);
    // One at a time up to a multiple of 8 ...
    while i < end && !i.is_multiple_of(8) {
        f(code_at(bytes, B, i));
        i += 1;
    }
    // ... then groups of eight codes, which span exactly `B` bytes: every
    // offset and shift below is a constant.
    let groups = (end - i) / 8;
    if groups > 0 {
        let all = &bytes[i / 8 * B..][..groups * B + 8];
        for g in 0..groups {
            let group = &all[g * B..][..B + 8];
            for j in 0..8 {
                let at = j * B;
                f((load(group, at / 8) >> (at % 8)) & mask);
            }
        }
        i += groups * 8;
    }
    while i < end {
        f(code_at(bytes, B, i));
        i += 1;
    }
}

/// Calls `f(code)` for the code of each of `rows`, in order, at the
/// constant width `B <= 56`.
#[inline(always)]
fn fold_rows<const B: usize>(bytes: &[u8], rows: &[u32], mut f: impl FnMut(u64)) {
    for &r in rows {
        f(code_at(bytes, B, r as usize));
    }
}

/// Runs `$body` with `$B` a constant equal to `$bits` (`1..=56`): one
/// monomorphic copy of `$body` per width, chosen once per call.
macro_rules! with_width {
    ($bits:expr, $B:ident => $body:expr) => {
        with_width!(@ $bits, $B, $body; 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22
            23 24 25 26 27 28 29 30 31 32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51
            52 53 54 55 56)
    };
    (@ $bits:expr, $B:ident, $body:expr; $($b:literal)*) => {
        match $bits {
            $($b => {
                const $B: usize = $b;
                $body
            })*
            _ => unreachable!("width past the one-load kernels"),
        }
    };
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
        let bytes = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        BitPacked { len, bits, bytes }
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
        self.bytes.len()
    }

    /// Code `i`: for the odd row; scans use [`BitPacked::unpack`].
    ///
    /// # Panics
    /// If `i >= len` (debug builds; release builds may return a padding
    /// code for `i` just past the end).
    #[inline]
    pub fn get(&self, i: usize) -> u64 {
        debug_assert!(i < self.len);
        code_at(&self.bytes, self.bits as usize, i)
    }

    /// Writes codes `start..start + out.len()` into `out`.
    ///
    /// # Panics
    /// If the range is out of bounds.
    pub fn unpack(&self, start: usize, out: &mut [u64]) {
        assert!(
            start + out.len() <= self.len,
            "codes {start}..{} past {}",
            start + out.len(),
            self.len
        );
        let bits = self.bits as usize;
        if bits <= ONE_LOAD_MAX_BITS {
            with_width!(bits, B => unpack_run::<B>(&self.bytes, start, out));
        } else {
            for (k, d) in out.iter_mut().enumerate() {
                *d = code_at(&self.bytes, bits, start + k);
            }
        }
    }

    /// Writes the code of row `rows[j]` into `out[j]`.
    ///
    /// # Panics
    /// If the lengths differ; if a row is out of bounds (debug builds;
    /// release builds may read padding for a row just past the end).
    pub fn unpack_rows(&self, rows: &[u32], out: &mut [u64]) {
        assert_eq!(rows.len(), out.len(), "rows and output differ in length");
        debug_assert!(rows.iter().all(|&r| (r as usize) < self.len));
        let mut k = 0;
        self.for_each_row(rows, |c| {
            out[k] = c;
            k += 1;
        });
    }

    /// Calls `f(code)` for codes `range`, in order, unpacking as it goes:
    /// the width is dispatched once, and `f` is inlined into a loop whose
    /// width is a constant.
    ///
    /// # Panics
    /// If the range is out of bounds.
    #[inline]
    pub fn for_each(&self, range: Range<usize>, mut f: impl FnMut(u64)) {
        assert!(range.end <= self.len, "range {range:?} past {}", self.len);
        let bits = self.bits as usize;
        if bits <= ONE_LOAD_MAX_BITS {
            with_width!(bits, B => fold_run::<B>(&self.bytes, range, &mut f))
        } else {
            range.for_each(|i| f(code_at(&self.bytes, bits, i)));
        }
    }

    /// Calls `f(code)` for the code of each of `rows`, in order (the
    /// width dispatched once, as in [`BitPacked::for_each`]).
    ///
    /// # Panics
    /// If a row is out of bounds (debug builds; release builds may read
    /// padding for a row just past the end).
    #[inline]
    pub fn for_each_row(&self, rows: &[u32], mut f: impl FnMut(u64)) {
        debug_assert!(rows.iter().all(|&r| (r as usize) < self.len));
        let bits = self.bits as usize;
        if bits <= ONE_LOAD_MAX_BITS {
            with_width!(bits, B => fold_rows::<B>(&self.bytes, rows, &mut f))
        } else {
            rows.iter()
                .for_each(|&r| f(code_at(&self.bytes, bits, r as usize)));
        }
    }

    /// Appends codes `range` to `out`.
    ///
    /// # Panics
    /// If the range is out of bounds.
    pub fn unpack_range(&self, range: Range<usize>, out: &mut Vec<u64>) {
        assert!(range.end <= self.len, "range {range:?} past {}", self.len);
        let start = out.len();
        out.resize(start + range.len(), 0);
        self.unpack(range.start, &mut out[start..]);
    }

    /// Mask words (bit `j` of word `w` is row `64·w + j`) of the codes that
    /// match `pred`, ANDed with `validity`.
    pub fn filter(&self, pred: &CodePredicate, validity: Option<&Bitmap>) -> Vec<u64> {
        let lo = pred.codes.start;
        let width = pred.codes.end.saturating_sub(lo);
        let flip = if pred.negated { u64::MAX } else { 0 };
        let mut words = vec![0u64; self.len.div_ceil(64)];
        let mut block = [0u64; 64];
        for (w, word) in words.iter_mut().enumerate() {
            let start = w * 64;
            let n = (self.len - start).min(64);
            let codes = &mut block[..n];
            self.unpack(start, codes);
            let bits = crate::kernel::block_mask(codes, |c| c.wrapping_sub(lo) < width);
            let live = crate::kernel::low_bits(n);
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
                // Every start and length around the groups of eight.
                for start in (0..len.min(20)).chain(len.saturating_sub(20)..len) {
                    for n in [0, 1, 7, 8, 9, 17, 64] {
                        let n = n.min(len - start);
                        let mut out = vec![u64::MAX; n];
                        p.unpack(start, &mut out);
                        assert_eq!(out, values[start..start + n], "bits {bits} {start}+{n}");
                        let mut seen = vec![];
                        p.for_each(start..start + n, |c| seen.push(c));
                        assert_eq!(seen, values[start..start + n], "bits {bits} fold {start}+{n}");
                    }
                }
                let rows: Vec<u32> = (0..len as u32).filter(|r| r % 3 != 1).collect();
                let mut out = vec![0; rows.len()];
                p.unpack_rows(&rows, &mut out);
                let want: Vec<u64> = rows.iter().map(|&r| values[r as usize]).collect();
                assert_eq!(out, want, "bits {bits} rows");
                let mut seen = vec![];
                p.for_each_row(&rows, |c| seen.push(c));
                assert_eq!(seen, want, "bits {bits} fold rows");
                let mut seen = vec![];
                p.for_each(len / 3..len, |c| seen.push(c));
                assert_eq!(seen, values[len / 3..], "bits {bits} fold tail");
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
