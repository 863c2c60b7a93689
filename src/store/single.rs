//! Doubles that hold single-precision values: the f32 bits, their front
//! dictionary-coded and their tail bit-packed.
//!
//! Real data is often stored in single precision upstream and written out
//! as doubles: every coordinate of the real 2013 taxi sample
//! (`-73.937767028808594`, `40.758480072021484`) is an f32 printed with 17
//! digits. ALP cannot take such values (they are not short decimals), so
//! they cost 8 bytes a row as f64. Narrowed to f32 they are exact, and the
//! f32 bits of a column clustered in a small range share their front bits
//! (sign, exponent, the top of the mantissa).
//!
//! # Format
//! After ALP-RD (Afroozeh, Kuffó, Boncz, "ALP: Adaptive Lossless
//! floating-Point Compression", SIGMOD 2023, §3.4: "real doubles" split
//! into front bits coded by a dictionary of at most 8 entries and tail
//! bits stored as they are), applied to the f32 bits of the values rather
//! than to the f64 bits, and made order-preserving:
//! - each value that narrows to a finite f32 exactly (bit for bit, so
//!   `-0.0` stays `-0.0`) is mapped to its *ordered bits*: the f32 bits
//!   with the sign bit flipped for a positive value and every bit flipped
//!   for a negative one, so that unsigned order is value order;
//! - the ordered bits split into a front (the top `32 − R` bits) and a
//!   tail (the low `R` bits). The partition's most frequent fronts (at most
//!   [`MAX_FRONTS`]) form a dictionary sorted ascending, and a row's code
//!   is `index << R | tail`: code order is value order, so a comparison
//!   with a constant is one code range ([`Single::code_predicate`]), as
//!   for ALP;
//! - codes are [`AlpCodes`] (bit-packed when that saves a quarter);
//! - every other row (a value that is not an exact f32, NaN, an infinity,
//!   or a front left out of the dictionary) is an exception: its row and
//!   f64 value, compared and decoded in f64.
//!
//! `R` and the dictionary size are chosen on a sample to minimize the
//! bytes (codes plus exceptions); the dictionary is then counted on the
//! whole partition. On the sample's coordinates: 17-bit tails and a
//! 2-entry dictionary, 19 bits (2.4 bytes) a row instead of 8.

use std::ops::Range;

use super::alp::EXCEPTION_BYTES;
use super::alp_codes::{AlpCodes, code_bytes, with_code_runs};
use super::bitmap::Bitmap;
use super::cmp::{CmpOp, CodePredicate, partition_point};
use super::codes::Code;
use crate::store::with_codes;
use crate::types::cmp_f64;

/// Most dictionary entries for the fronts (4 bits of code).
pub const MAX_FRONTS: usize = 16;
/// Fewest and most tail bits tried.
const TAIL_BITS: Range<u32> = 8..32;
/// Ordered bits of the most negative and the largest finite f32: a front
/// whose whole span of codes lies between them decodes only to finite
/// values, so code order stays value order under [`cmp_f64`].
const FINITE_ORDERED: (u32, u32) = (0x0080_0000, 0xFF7F_FFFF);

/// The ordered bits of an f32: unsigned order is value order (`-0.0` just
/// below `0.0`).
#[inline]
fn ordered(f: f32) -> u32 {
    let b = f.to_bits();
    if b & 0x8000_0000 != 0 { !b } else { b | 0x8000_0000 }
}

/// The f32 of ordered bits (the inverse of [`ordered`]).
#[inline]
fn unordered(o: u32) -> f32 {
    f32::from_bits(if o & 0x8000_0000 != 0 {
        o & 0x7FFF_FFFF
    } else {
        !o
    })
}

/// The ordered bits of `x` when it is a finite f32 exactly, bit for bit.
#[inline]
fn narrow(x: f64) -> Option<u32> {
    let f = x as f32;
    (f.is_finite() && (f as f64).to_bits() == x.to_bits()).then(|| ordered(f))
}

/// True when every code of front `front` with `tail` tail bits decodes to
/// a finite value.
fn front_is_finite(front: u32, tail: u32) -> bool {
    let lo = (front as u64) << tail;
    let hi = lo | ((1u64 << tail) - 1);
    lo >= FINITE_ORDERED.0 as u64 && hi <= FINITE_ORDERED.1 as u64
}

/// How a partition is split: tail bits and the most dictionary entries,
/// found on a sample by [`Single::plan`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Split {
    /// Bits of the tail (`R`), in `8..32`.
    pub tail_bits: u32,
    /// Most entries of the front dictionary (1, 2, 4, 8 or 16).
    pub max_fronts: usize,
}

/// Floats that are f32 values, as order-preserving codes (a front
/// dictionary index and tail bits) plus exceptions; see the module docs.
///
/// # Invariants
/// - `fronts` ascends, has 1 to [`MAX_FRONTS`] entries, each passing
///   [`front_is_finite`]; codes are at most `max_code`, whose front index
///   is below `fronts.len()`.
/// - `exception_rows` ascends; those rows' values are `exception_values`.
/// - For every other valid row, the code decodes ([`Single::decode_code`])
///   to the value bit for bit. NULL and exception rows hold code 0.
#[derive(Debug, Clone, PartialEq)]
pub struct Single {
    len: usize,
    tail_bits: u32,
    fronts: Vec<u32>,
    max_code: u64,
    codes: AlpCodes,
    exception_rows: Vec<u32>,
    exception_values: Vec<f64>,
}

/// The bytes [`Single`] would take for `len` rows with `fronts` entries of
/// `tail_bits` tails and `exceptions` exceptions.
fn size(len: usize, tail_bits: u32, fronts: usize, exceptions: usize) -> usize {
    let max_code = ((fronts.max(1) as u64 - 1) << tail_bits) | ((1u64 << tail_bits) - 1);
    code_bytes(max_code, len) + fronts * 4 + exceptions * EXCEPTION_BYTES
}

/// Counts of each front of `ordered` values with `tail` tail bits, most
/// frequent first (ties: smaller front first), only finite-spanning fronts.
fn front_counts(ordered: impl Iterator<Item = u32>, tail: u32) -> Vec<(u32, usize)> {
    let mut counts: hashbrown::HashMap<u32, usize> = hashbrown::HashMap::new();
    for o in ordered {
        *counts.entry(o >> tail).or_default() += 1;
    }
    let mut v: Vec<(u32, usize)> = counts
        .into_iter()
        .filter(|&(f, _)| front_is_finite(f, tail))
        .collect();
    v.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    v
}

impl Single {
    /// Chooses the split on `sample` (values of valid rows) for a partition
    /// of `len` rows; returns it with the estimated bytes, or `None` when
    /// fewer than half the sample's values are exact f32s.
    pub fn plan(sample: &[f64], len: usize) -> Option<(Split, usize)> {
        let narrowed: Vec<u32> = sample.iter().filter_map(|&x| narrow(x)).collect();
        if narrowed.is_empty() || narrowed.len() * 2 < sample.len() {
            return None;
        }
        let scale = |k: usize| (k * len).div_ceil(sample.len());
        let mut best: Option<(Split, usize)> = None;
        for tail_bits in TAIL_BITS {
            let counts = front_counts(narrowed.iter().copied(), tail_bits);
            let mut d = 1;
            while d <= MAX_FRONTS {
                let kept: usize = counts.iter().take(d).map(|c| c.1).sum();
                let exceptions = scale(sample.len() - kept);
                let bytes = size(len, tail_bits, d.min(counts.len().max(1)), exceptions);
                if best.is_none_or(|(_, b)| bytes < b) {
                    best = Some((
                        Split {
                            tail_bits,
                            max_fronts: d,
                        },
                        bytes,
                    ));
                }
                if d >= counts.len() {
                    break;
                }
                d *= 2;
            }
        }
        best
    }

    /// Encodes a partition's floats, choosing the split on a sample (as the
    /// chooser does); values at rows where `validity` is false are ignored.
    /// `None` as [`Single::encode_with`].
    pub fn encode(values: &[f64], validity: Option<&Bitmap>) -> Option<Single> {
        let valid = |i: usize| validity.is_none_or(|v| v.get(i));
        let sample: Vec<f64> = super::choose::sample_ranges(values.len())
            .into_iter()
            .flatten()
            .filter(|&i| valid(i))
            .map(|i| values[i])
            .collect();
        let (split, _) = Self::plan(&sample, values.len())?;
        Self::encode_with(values, validity, split)
    }

    /// Encodes a partition's floats with a given split (from
    /// [`Single::plan`]). Returns `None` when the result is not smaller than
    /// plain f64 (8 bytes a row), when no valid value is an exact f32, when
    /// `values.len()` exceeds `u32::MAX`, or for a split out of range.
    ///
    /// # Panics
    /// Debug builds assert that `validity` has `values.len()` bits.
    pub fn encode_with(values: &[f64], validity: Option<&Bitmap>, split: Split) -> Option<Single> {
        debug_assert!(validity.is_none_or(|v| v.len() == values.len()));
        let len = values.len();
        let tail_bits = split.tail_bits;
        if len > u32::MAX as usize || !TAIL_BITS.contains(&tail_bits) || split.max_fronts == 0 {
            return None;
        }
        let valid = |i: usize| validity.is_none_or(|v| v.get(i));
        let narrowed = || {
            values
                .iter()
                .enumerate()
                .filter(|&(i, _)| valid(i))
                .filter_map(|(_, &x)| narrow(x))
        };
        let mut fronts: Vec<u32> = front_counts(narrowed(), tail_bits)
            .into_iter()
            .take(split.max_fronts.min(MAX_FRONTS))
            .map(|(f, _)| f)
            .collect();
        if fronts.is_empty() {
            return None;
        }
        fronts.sort_unstable();
        // Front → index, by binary search in at most 16 entries.
        let mask = (1u64 << tail_bits) - 1;
        let code_of = |o: u32| -> Option<u64> {
            let k = fronts.binary_search(&(o >> tail_bits)).ok()?;
            Some(((k as u64) << tail_bits) | (o as u64 & mask))
        };
        let mut exception_rows = Vec::new();
        let mut exception_values = Vec::new();
        let mut codes = Vec::with_capacity(len);
        let mut max_code = 0;
        for (i, &x) in values.iter().enumerate() {
            if !valid(i) {
                codes.push(0);
                continue;
            }
            match narrow(x).and_then(code_of) {
                Some(c) => {
                    max_code = max_code.max(c);
                    codes.push(c);
                }
                None => {
                    exception_rows.push(i as u32);
                    exception_values.push(x);
                    codes.push(0);
                }
            }
        }
        let bytes = code_bytes(max_code, len)
            + fronts.len() * 4
            + exception_rows.len() * EXCEPTION_BYTES;
        if bytes >= 8 * len {
            return None;
        }
        Some(Single {
            len,
            tail_bits,
            fronts,
            max_code,
            codes: AlpCodes::pack(codes.into_iter(), max_code),
            exception_rows,
            exception_values,
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

    /// The largest code of a non-exception valid row: codes are in
    /// `0..=max_code`.
    pub fn max_code(&self) -> u64 {
        self.max_code
    }

    /// One code per row; 0 at NULL and exception rows. Read them a batch
    /// at a time ([`AlpCodes::for_each`] and friends).
    pub fn codes(&self) -> &AlpCodes {
        &self.codes
    }

    /// The exception rows (ascending) and their values.
    pub fn exceptions(&self) -> (&[u32], &[f64]) {
        (&self.exception_rows, &self.exception_values)
    }

    /// Bits of each code's tail.
    pub fn tail_bits(&self) -> u32 {
        self.tail_bits
    }

    /// The front dictionary, ascending.
    pub fn fronts(&self) -> &[u32] {
        &self.fronts
    }

    /// The value code `code` stands for (any code up to
    /// [`Single::max_code`]); monotone in the code under [`cmp_f64`].
    #[inline]
    pub fn decode_code(&self, code: u64) -> f64 {
        decode(&self.fronts, self.tail_bits, code)
    }

    /// The value at row `i` (whatever it is at a NULL row).
    ///
    /// # Panics
    /// If `i >= len`.
    pub fn get(&self, i: usize) -> f64 {
        match self.exception_rows.binary_search(&(i as u32)) {
            Ok(k) => self.exception_values[k],
            Err(_) => self.decode_code(self.codes.get(i)),
        }
    }

    /// Appends the values of rows `range` to `out`.
    ///
    /// # Panics
    /// If the range is out of bounds.
    pub fn decode_range(&self, range: Range<usize>, out: &mut Vec<f64>) {
        out.reserve(range.len());
        let start = out.len();
        let (fronts, tail) = (self.fronts.as_slice(), self.tail_bits);
        with_code_runs!(&self.codes, range.clone(), |_at, c| {
            out.extend(c.iter().map(|x| decode(fronts, tail, x.to_u64())));
        });
        let first = self
            .exception_rows
            .partition_point(|&r| (r as usize) < range.start);
        for k in first..self.exception_rows.len() {
            let row = self.exception_rows[k] as usize;
            if row >= range.end {
                break;
            }
            out[start + row - range.start] = self.exception_values[k];
        }
    }

    /// Appends the values of the rows in `selection` (ascending) to `out`.
    ///
    /// # Panics
    /// If a row is out of bounds; debug builds assert the order.
    pub fn decode_selection(&self, selection: &[u32], out: &mut Vec<f64>) {
        debug_assert!(selection.windows(2).all(|w| w[0] < w[1]));
        out.reserve(selection.len());
        let start = out.len();
        let (fronts, tail) = (self.fronts.as_slice(), self.tail_bits);
        match &self.codes {
            AlpCodes::Bytes(codes) => with_codes!(codes, c => out.extend(
                selection.iter().map(|&i| decode(fronts, tail, c[i as usize].to_u64()))
            )),
            AlpCodes::Bits(p) => {
                let mut buf = [0u64; super::UNPACK_ROWS];
                for rows in selection.chunks(super::UNPACK_ROWS) {
                    let codes = &mut buf[..rows.len()];
                    p.unpack_rows(rows, codes);
                    out.extend(codes.iter().map(|&x| decode(fronts, tail, x)));
                }
            }
        }
        let mut k = 0;
        for (j, &row) in selection.iter().enumerate() {
            while k < self.exception_rows.len() && self.exception_rows[k] < row {
                k += 1;
            }
            if k == self.exception_rows.len() {
                break;
            }
            if self.exception_rows[k] == row {
                out[start + j] = self.exception_values[k];
            }
        }
    }

    /// Heap bytes held (codes, fronts, exceptions).
    pub fn heap_bytes(&self) -> usize {
        self.codes.heap_bytes()
            + self.fronts.len() * 4
            + self.exception_rows.len() * 4
            + self.exception_values.len() * 8
    }

    /// The codes of non-exception rows whose value satisfies `value op c`
    /// under [`cmp_f64`]'s order (NaN above everything, `-0.0 == 0.0`).
    ///
    /// Exact whatever `c` is (a double between two f32s, NaN, an
    /// infinity): the bounds are found by binary search over
    /// `0..=max_code` with [`Single::decode_code`] itself, which is
    /// monotone. Exception and NULL rows are handled apart (see
    /// [`Single::filter`]).
    pub fn code_predicate(&self, op: CmpOp, c: f64) -> CodePredicate {
        let count = self.max_code + 1;
        let lt = partition_point(0, count, |code| {
            cmp_f64(self.decode_code(code), c).is_ge()
        });
        let le = partition_point(lt, count, |code| {
            cmp_f64(self.decode_code(code), c).is_gt()
        });
        op.predicate(lt, le, count)
    }

    /// Evaluates `value op c` on every row, as mask words (bit `j` of word
    /// `w` is row `64·w + j`; NULL rows and bits past `len` are 0).
    /// Exception rows are compared in f64 with [`cmp_f64`].
    pub fn filter(&self, op: CmpOp, c: f64, validity: Option<&Bitmap>) -> Vec<u64> {
        let pred = self.code_predicate(op, c);
        let (lo, span) = (
            pred.codes.start,
            pred.codes.end.saturating_sub(pred.codes.start),
        );
        let mut words = Vec::with_capacity(self.len.div_ceil(64));
        self.codes.block_masks(
            0..self.len,
            |x| (x.wrapping_sub(lo) < span) != pred.negated,
            &mut words,
        );
        for (&row, &x) in self.exception_rows.iter().zip(&self.exception_values) {
            let (w, b) = (row as usize / 64, row as usize % 64);
            let hit = op.holds(cmp_f64(x, c)) as u64;
            words[w] = (words[w] & !(1 << b)) | (hit << b);
        }
        if let Some(v) = validity {
            v.and_into(&mut words);
        }
        words
    }
}

/// The value of `code` under `fronts` and `tail` tail bits.
#[inline]
fn decode(fronts: &[u32], tail: u32, code: u64) -> f64 {
    let front = fronts[(code >> tail) as usize];
    let o = ((front as u64) << tail) | (code & ((1u64 << tail) - 1));
    unordered(o as u32) as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// Taxi-like coordinates as f32, with zeros, a few values that are not
    /// f32s, NaN, infinities, -0.0 and NULLs.
    fn column(rng: &mut ChaCha8Rng, len: usize) -> (Vec<f64>, Bitmap) {
        let mut valid = Bitmap::new(len, true);
        let values = (0..len)
            .map(|i| match i % 101 {
                3 => 0.0,
                4 => -0.0,
                5 => 0.1 + 0.2,
                6 => f64::NAN,
                7 => f64::INFINITY,
                8 => f64::NEG_INFINITY,
                9 => {
                    valid.set(i, false);
                    123.0
                }
                10 => 40.5,
                _ => rng.gen_range(-74.3f32..-73.7) as f64,
            })
            .collect();
        (values, valid)
    }

    fn bits(v: &[f64]) -> Vec<u64> {
        v.iter().map(|x| x.to_bits()).collect()
    }

    #[test]
    fn values_round_trip_bit_for_bit() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        for len in [1, 7, 64, 65, 1000, 5000] {
            let (values, valid) = column(&mut rng, len);
            let Some(s) = Single::encode(&values, Some(&valid)) else {
                assert!(len < 100, "{len} rows not encoded");
                continue;
            };
            let mut out = Vec::new();
            s.decode_range(0..len, &mut out);
            let keep = |v: &[f64]| -> Vec<u64> {
                (0..len)
                    .filter(|&i| valid.get(i))
                    .map(|i| v[i].to_bits())
                    .collect()
            };
            assert_eq!(keep(&out), keep(&values));
            for i in (0..len).filter(|&i| valid.get(i)) {
                assert_eq!(s.get(i).to_bits(), values[i].to_bits(), "row {i}");
            }
            let sel: Vec<u32> = (0..len as u32).filter(|r| r % 3 != 1).collect();
            let mut picked = Vec::new();
            s.decode_selection(&sel, &mut picked);
            for (j, &r) in sel.iter().enumerate() {
                if valid.get(r as usize) {
                    assert_eq!(picked[j].to_bits(), values[r as usize].to_bits());
                }
            }
            let mut mid = Vec::new();
            s.decode_range(len / 3..len, &mut mid);
            assert_eq!(bits(&mid)[..], bits(&out)[len / 3..]);
        }
    }

    #[test]
    fn coordinates_take_under_three_bytes_a_row() {
        let mut rng = ChaCha8Rng::seed_from_u64(2);
        let lon: Vec<f64> = (0..65_536)
            .map(|i| {
                if i % 50 == 0 {
                    0.0
                } else {
                    rng.gen_range(-74.3f32..-73.7) as f64
                }
            })
            .collect();
        let s = Single::encode(&lon, None).unwrap();
        assert!(s.heap_bytes() * 10 < 30 * lon.len(), "{}", s.heap_bytes());
        assert!(s.exceptions().0.is_empty());
    }

    #[test]
    fn filters_agree_with_f64_comparisons() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let (values, valid) = column(&mut rng, 3000);
        let s = Single::encode(&values, Some(&valid)).unwrap();
        let some = values[20];
        let next_up = f64::from_bits(some.to_bits() + 1);
        let f32_up = f32::from_bits((some as f32).to_bits() + 1) as f64;
        let constants = [
            some,
            next_up,
            f32_up,
            -74.0,
            -73.9,
            -80.0,
            0.0,
            -0.0,
            40.5,
            0.1 + 0.2,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            1e300,
            -1e300,
        ];
        let ops = [
            CmpOp::Eq,
            CmpOp::Ne,
            CmpOp::Lt,
            CmpOp::Le,
            CmpOp::Gt,
            CmpOp::Ge,
        ];
        for &c in &constants {
            for op in ops {
                let words = s.filter(op, c, Some(&valid));
                for (i, &x) in values.iter().enumerate() {
                    let want = valid.get(i) && op.holds(cmp_f64(x, c));
                    let got = words[i / 64] >> (i % 64) & 1 == 1;
                    assert_eq!(got, want, "row {i}: {x} {op:?} {c}");
                }
            }
        }
    }

    #[test]
    fn values_that_are_not_f32_are_declined() {
        let v: Vec<f64> = (0..1000).map(|i| i as f64 * 0.1 + 1e-9).collect();
        assert!(Single::encode(&v, None).is_none());
    }

    #[test]
    fn code_order_is_value_order_across_signs() {
        let mut rng = ChaCha8Rng::seed_from_u64(4);
        let v: Vec<f64> = (0..4000)
            .map(|_| rng.gen_range(-2.0f32..2.0) as f64)
            .collect();
        let s = Single::encode(&v, None).unwrap();
        let step = (s.max_code() / 5000).max(1);
        let mut prev = s.decode_code(0);
        for c in (step..=s.max_code()).step_by(step as usize) {
            for code in [c - 1, c] {
                let x = s.decode_code(code);
                assert!(cmp_f64(prev, x).is_le(), "code {code}: {prev} then {x}");
                prev = x;
            }
        }
    }
}
