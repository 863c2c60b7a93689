//! The digit codes of an [`Alp`] column: byte-width [`Codes`] or
//! [`BitPacked`], by a rule biased toward scan speed.
//!
//! # Design: when to bit-pack
//! Codes that need `b` bits are bit-packed only when that saves at least
//! 25% per code over the byte width `w` that [`Codes::pack`] would use
//! (`4·b <= 3·w`): u32 codes needing at most 24 bits, u16 codes at most
//! 12, u8 codes at most 6, u64 codes at most 48; and only when the packed
//! bytes, with their 8 bytes of padding, are fewer (a handful of rows stay
//! at byte width). Byte-width codes are read
//! in place; bit-packed ones are unpacked a batch at a time, which costs a
//! few instructions per code, so a saving below a quarter is not worth it.
//! Coordinates with six decimals (17–21 bits) and cents up to a few
//! thousand dollars (17–20 bits) go from 4 bytes to about 2.5.
//!
//! # Reading codes
//! Kernels never read a bit-packed code per row through a dynamic width:
//! [`AlpCodes::for_each`], [`AlpCodes::for_each_selected`] and
//! [`AlpCodes::block_masks`] (and, inside the store, `with_code_runs!`)
//! hand them slices of byte-width codes in place, or of bit-packed codes
//! unpacked [`UNPACK_ROWS`] at a time by a kernel specialized for the
//! width.
//!
//! [`Alp`]: super::Alp

use std::ops::Range;

use super::bitpacked::{BitPacked, bits_for};
use super::codes::{Code, Codes};
use crate::store::with_codes;

/// Codes unpacked per batch (a multiple of 64, so 64-row blocks of a run
/// that starts at a multiple of 64 stay aligned): 2 KiB on the stack,
/// zeroed once per call, so a call for a few rows stays cheap.
pub const UNPACK_ROWS: usize = 256;

/// ALP digit codes (`digits - base`) in one of two layouts; see the module
/// docs for the rule that picks one.
#[derive(Debug, Clone, PartialEq)]
pub enum AlpCodes {
    /// One u8/u16/u32/u64 per code, read in place.
    Bytes(Codes),
    /// Codes at the exact bit width of the largest, unpacked a batch at a
    /// time.
    Bits(BitPacked),
}

/// Bytes per code that [`Codes::pack`] uses for codes up to `max`.
pub(super) fn width_bytes(max: u64) -> usize {
    if max <= u8::MAX_U64 {
        1
    } else if max <= u16::MAX_U64 {
        2
    } else if max <= u32::MAX_U64 {
        4
    } else {
        8
    }
}

/// Heap bytes of `len` codes up to `max` bit-packed (with the padding).
fn packed_bytes(max: u64, len: usize) -> usize {
    (len * bits_for(max) as usize).div_ceil(64) * 8 + 8
}

/// Whether `len` codes up to `max` are bit-packed: when that saves at
/// least a quarter of each code's bits and the padding does not eat the
/// saving (see the module docs).
pub fn packs_bits(max: u64, len: usize) -> bool {
    let bytes = len * width_bytes(max);
    4 * bits_for(max) as usize <= 3 * 8 * width_bytes(max) && packed_bytes(max, len) < bytes
}

/// Heap bytes of `len` codes up to `max` in the layout [`AlpCodes::pack`]
/// picks.
pub fn code_bytes(max: u64, len: usize) -> usize {
    if packs_bits(max, len) {
        packed_bytes(max, len)
    } else {
        len * width_bytes(max)
    }
}

/// Runs `$body` over the codes of rows `$range` a run at a time, with `$c`
/// a typed slice of the codes of rows `$at..$at + $c.len()`: the whole
/// range in place for byte-width codes (monomorphised per width), batches
/// of [`UNPACK_ROWS`] unpacked ones (`&[u64]`) for bit-packed codes. Runs
/// start at `$range.start` and, but for the last, hold a multiple of 64
/// codes. `$body` is a statement block; it may run several times.
macro_rules! with_code_runs {
    ($codes:expr, $range:expr, |$at:ident, $c:ident| $body:block) => {{
        let range: std::ops::Range<usize> = $range;
        match $codes {
            $crate::store::AlpCodes::Bytes(codes) => $crate::store::with_codes!(codes, v => {
                let $at = range.start;
                let $c = &v[range];
                $body
            }),
            $crate::store::AlpCodes::Bits(p) => {
                let mut buf = [0u64; $crate::store::UNPACK_ROWS];
                let mut next = range.start;
                while next < range.end {
                    let n = (range.end - next).min($crate::store::UNPACK_ROWS);
                    p.unpack(next, &mut buf[..n]);
                    let $at = next;
                    let $c: &[u64] = &buf[..n];
                    $body
                    next += n;
                }
            }
        }
    }};
}
pub(crate) use with_code_runs;

/// Bit `j` set when `pred` holds for code `j` of at most 64 codes
/// ([`crate::kernel::block_mask`]: simple predicates vectorize).
#[inline]
fn mask_of<T: Code>(codes: &[T], pred: impl Fn(u64) -> bool) -> u64 {
    crate::kernel::block_mask(codes, |x| pred(x.to_u64()))
}

impl AlpCodes {
    /// Packs `values` (each `<= max`) bit-packed or at byte width, by the
    /// rule of the module docs.
    ///
    /// # Panics
    /// Debug builds assert every value is `<= max`.
    pub fn pack(values: impl ExactSizeIterator<Item = u64>, max: u64) -> AlpCodes {
        if packs_bits(max, values.len()) {
            AlpCodes::Bits(BitPacked::pack(values, max))
        } else {
            AlpCodes::Bytes(Codes::pack(values, max))
        }
    }

    /// Number of codes.
    pub fn len(&self) -> usize {
        match self {
            AlpCodes::Bytes(c) => c.len(),
            AlpCodes::Bits(p) => p.len(),
        }
    }

    /// True when there are no codes.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Code `i`, for the odd row (scans use the batch readers).
    ///
    /// # Panics
    /// If `i >= len` (bit-packed: debug builds only).
    #[inline]
    pub fn get(&self, i: usize) -> u64 {
        match self {
            AlpCodes::Bytes(c) => c.get(i),
            AlpCodes::Bits(p) => p.get(i),
        }
    }

    /// Heap bytes held.
    pub fn heap_bytes(&self) -> usize {
        match self {
            AlpCodes::Bytes(c) => c.heap_bytes(),
            AlpCodes::Bits(p) => p.heap_bytes(),
        }
    }

    /// The width for EXPLAIN and `.schema`: `u8` … `u64` at byte width,
    /// `b<bits>` (e.g. `b20`) bit-packed.
    pub fn width_name(&self) -> String {
        match self {
            AlpCodes::Bytes(c) => c.width_name().to_string(),
            AlpCodes::Bits(p) => format!("b{}", p.bits()),
        }
    }

    /// Calls `f(row, code)` for every row of `range`, in order.
    ///
    /// # Panics
    /// If the range is out of bounds.
    #[inline]
    pub fn for_each(&self, range: Range<usize>, mut f: impl FnMut(usize, u64)) {
        with_code_runs!(self, range, |at, c| {
            for (k, x) in c.iter().enumerate() {
                f(at + k, x.to_u64());
            }
        });
    }

    /// Calls `f(j, code)` for the `j`-th row of `selection`, in order.
    ///
    /// # Panics
    /// If a row is out of bounds (bit-packed: debug builds only; release
    /// builds may read padding for a row just past the end).
    #[inline]
    pub fn for_each_selected(&self, selection: &[u32], mut f: impl FnMut(usize, u64)) {
        match self {
            AlpCodes::Bytes(codes) => with_codes!(codes, v => {
                for (j, &r) in selection.iter().enumerate() {
                    f(j, v[r as usize].to_u64());
                }
            }),
            AlpCodes::Bits(p) => {
                let mut buf = [0u64; UNPACK_ROWS];
                for (b, rows) in selection.chunks(UNPACK_ROWS).enumerate() {
                    let codes = &mut buf[..rows.len()];
                    p.unpack_rows(rows, codes);
                    for (k, &x) in codes.iter().enumerate() {
                        f(b * UNPACK_ROWS + k, x);
                    }
                }
            }
        }
    }

    /// The mask of rows `range` (at most 64): bit `j` is `pred(code)` of row
    /// `range.start + j`. For a filter that runs a 64-row block at a time.
    ///
    /// # Panics
    /// If the range is out of bounds; debug builds assert it holds at most
    /// 64 rows.
    #[inline]
    pub fn block_mask(&self, range: Range<usize>, pred: impl Fn(u64) -> bool) -> u64 {
        debug_assert!(range.len() <= 64);
        match self {
            AlpCodes::Bytes(codes) => with_codes!(codes, v => mask_of(&v[range], pred)),
            AlpCodes::Bits(p) => {
                let mut buf = [0u64; 64];
                let codes = &mut buf[..range.len()];
                p.unpack(range.start, codes);
                mask_of(codes, pred)
            }
        }
    }

    /// Appends one mask word per 64 rows of `range` to `out`: bit `j` of
    /// the `w`-th word is `pred(code)` of row `range.start + 64·w + j`, and
    /// bits past `range.end` are 0. Branch-free, so simple predicates
    /// vectorize.
    ///
    /// # Panics
    /// If the range is out of bounds.
    #[inline]
    pub fn block_masks(&self, range: Range<usize>, pred: impl Fn(u64) -> bool, out: &mut Vec<u64>) {
        with_code_runs!(self, range, |_at, c| {
            out.extend(c.chunks(64).map(|block| mask_of(block, &pred)));
        });
    }
}
