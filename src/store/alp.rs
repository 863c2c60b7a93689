//! ALP: decimal floats stored as small integers.
//!
//! After "ALP: Adaptive Lossless floating-Point Compression" (Afroozeh,
//! Kuffó, Boncz, SIGMOD 2023). Most floats in analytic data were decimals
//! before they were parsed (money with two decimals, coordinates with six),
//! so each one is `digits · 10^exponent` for a small integer `digits`.
//!
//! # Format
//! Row `i` of an [`Alp`] is `decode(base + codes[i])` where
//! `decode(d) = d · 10^exponent` computed as **one** correctly rounded IEEE
//! operation: `d as f64 * 10^e` when `exponent = e >= 0`, `d as f64 / 10^e`
//! when `exponent = -e < 0` (`10^e` is exact in f64 for `e <= 22`, and
//! `|d| < 2^51` is exact too). The codes are offsets from the minimum,
//! kept as [`AlpCodes`]: bit-packed at the width of the largest when that
//! saves at least 25% over the narrowest of u8/u16/u32/u64 (e.g. u32 codes
//! needing at most 24 bits), else at that byte width. Values that
//! do not round-trip bit for bit (NaN, ±inf, -0.0, values with too many
//! digits) are *exceptions*: their rows (ascending u32) and f64 values are
//! kept aside, and their code is 0.
//!
//! # Design: one exponent instead of the paper's (e, f)
//! The paper decodes with two multiplications by `10^f` and by the inexact
//! `10^-e`, so pairs (e, f) with the same difference decode differently and
//! it searches all of them. Decoding with one correctly rounded operation
//! makes every pair with the same `f - e` identical, so the search is over
//! the single `exponent = f - e` in `-18..=18`. It buys two properties the
//! kernels rely on:
//! - the value is *the nearest f64 to the decimal* `digits · 10^exponent`,
//!   so sums of digits are exact sums of the decimals (money to the cent);
//! - `decode` is monotone in `d`, so comparisons run on codes.
//!
//! The division is slower than the paper's multiplication (a few cycles per
//! value, still vectorized); scans that only compare, sum or group never
//! decode.
//!
//! # Choosing the exponent (sampling, as the paper)
//! Up to [`SAMPLE_RUNS`] runs of [`SAMPLE_RUN_ROWS`] consecutive rows spread
//! over the partition are encoded with every exponent; each is scored by its
//! estimated size (the codes' bytes as [`AlpCodes`] would store them + 12
//! bytes per exception). The best
//! [`FULL_CANDIDATES`] exponents are then scored on a wider sample
//! ([`WIDE_RUNS`] runs of [`WIDE_RUN_ROWS`] rows) and the smallest wins
//! (ties go to the larger exponent, i.e. fewer digits). The encoding itself
//! is still checked on every row: values that do not round-trip become
//! exceptions, and ALP is declined when it is not smaller than f64.
//!
//! # Kernels
//! All exact against a decode-then-compute oracle (the unit tests check it):
//! [`Alp::code_predicate`] / [`Alp::filter`] (comparisons against any f64,
//! even one that does not encode, found by binary search over codes with
//! `decode` itself, under [`cmp_f64`]'s order), [`Alp::sum`] (an exact i128
//! sum of digits), [`Alp::min`] / [`Alp::max`], [`Alp::floor`] /
//! [`Alp::ceil`] / [`Alp::round`] (on the digits, agreeing bit for bit with
//! `plan::eval`), and group keys ([`Alp::group_keys`]).
//!
//! ALP's second scheme for "real doubles" (ALP-RD) is not implemented: the
//! only full-precision floats in our workloads are `kv.value` (53 random
//! mantissa bits, where ALP-RD saves at most 1–2 bytes of 8) and the iot
//! readings are decimals; such columns stay f64.

use std::cmp::Ordering;
use std::ops::Range;

use super::alp_codes::{AlpCodes, UNPACK_ROWS, code_bytes, with_code_runs};
use super::bitmap::Bitmap;
use super::choose::sample_runs;
use super::cmp::{CmpOp, CodePredicate, partition_point};
use super::codes::Code;
use crate::store::with_codes;
use crate::types::cmp_f64;

/// Runs of consecutive rows sampled to rank exponents.
pub const SAMPLE_RUNS: usize = 8;
/// Rows per sampled run.
pub const SAMPLE_RUN_ROWS: usize = 32;
/// Exponents, best on the sample first, that are scored again on the wider
/// second sample.
pub const FULL_CANDIDATES: usize = 2;
/// Runs of consecutive rows in the second, wider sample (of
/// [`WIDE_RUN_ROWS`] rows each): 2,048 rows, 3% of a default partition.
/// Scoring the finalists on every row instead was a third of the time ALP
/// took to load the taxi table (perf), for the same choices there.
pub const WIDE_RUNS: usize = 32;
/// Rows per run of the wider sample.
pub const WIDE_RUN_ROWS: usize = 64;
/// Smallest and largest exponent tried.
pub const MIN_EXPONENT: i8 = -18;
/// See [`MIN_EXPONENT`].
pub const MAX_EXPONENT: i8 = 18;
/// Digits must satisfy `|d| < MAX_DIGITS` (2^51): exact in f64, and small
/// enough that the fast rounding and the rounding kernels are exact.
pub const MAX_DIGITS: i64 = 1 << 51;
/// Bytes an exception costs (a u32 row and an f64 value).
pub const EXCEPTION_BYTES: usize = 12;

const POW10: [f64; 19] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18,
];
const POW10_I64: [i64; 19] = [
    1,
    10,
    100,
    1_000,
    10_000,
    100_000,
    1_000_000,
    10_000_000,
    100_000_000,
    1_000_000_000,
    10_000_000_000,
    100_000_000_000,
    1_000_000_000_000,
    10_000_000_000_000,
    100_000_000_000_000,
    1_000_000_000_000_000,
    10_000_000_000_000_000,
    100_000_000_000_000_000,
    1_000_000_000_000_000_000,
];

/// `d · 10^exponent`, correctly rounded (one IEEE operation on exact
/// operands when `|d| < 2^53` and `|exponent| <= 22`).
#[inline(always)]
pub fn decode_digits(d: i64, exponent: i8) -> f64 {
    if exponent >= 0 {
        d as f64 * POW10[exponent as usize]
    } else {
        d as f64 / POW10[exponent.unsigned_abs() as usize]
    }
}

/// Round to nearest (ties to even) by the magic-number trick of the paper;
/// exact for `|x| < 2^51`.
#[inline(always)]
fn fast_round(x: f64) -> f64 {
    const MAGIC: f64 = 6_755_399_441_055_744.0; // 2^52 + 2^51
    (x + MAGIC) - MAGIC
}

/// The digits `d` with `decode_digits(d, exponent)` bit-identical to `x`, if
/// there are any with `|d| < MAX_DIGITS`.
#[inline(always)]
pub fn encode_digits(x: f64, exponent: i8) -> Option<i64> {
    let scaled = if exponent >= 0 {
        x / POW10[exponent as usize]
    } else {
        x * POW10[exponent.unsigned_abs() as usize]
    };
    if scaled.is_nan() || scaled.abs() >= MAX_DIGITS as f64 {
        return None;
    }
    let d = fast_round(scaled) as i64;
    (d.abs() < MAX_DIGITS && decode_digits(d, exponent).to_bits() == x.to_bits()).then_some(d)
}

/// [`encode_digits`] of each value of `block` as floats: `rounded[j]` the
/// digits (an integer below 2^51 in magnitude when `fits[j]`), `fits[j]`
/// whether `encode_digits` gives `Some` (the scaled value and its digits
/// below [`MAX_DIGITS`], and the digits decoding to `block[j]` bit for
/// bit). The same operations without a branch or an integer conversion,
/// so a block is a vector loop; `NEG` is `exponent < 0` (scaling
/// multiplies, decoding divides).
#[inline(always)]
fn encode_block<const NEG: bool>(
    block: &[f64],
    exponent: i8,
    rounded: &mut [f64],
    fits: &mut [bool],
) {
    let p = POW10[exponent.unsigned_abs() as usize];
    let limit = MAX_DIGITS as f64;
    for ((&x, r), f) in block.iter().zip(rounded.iter_mut()).zip(fits.iter_mut()) {
        let scaled = if NEG { x * p } else { x / p };
        let digits = fast_round(scaled);
        let back = if NEG { digits / p } else { digits * p };
        *r = digits;
        *f = (scaled.abs() < limit) & (digits.abs() < limit) & (back.to_bits() == x.to_bits());
    }
}

/// Estimated bytes of `values` under `exponent`: codes plus exceptions.
fn estimate(values: impl Iterator<Item = f64>, exponent: i8) -> usize {
    let (mut n, mut exceptions) = (0usize, 0usize);
    let (mut min, mut max) = (i64::MAX, i64::MIN);
    for x in values {
        n += 1;
        match encode_digits(x, exponent) {
            Some(d) => {
                min = min.min(d);
                max = max.max(d);
            }
            None => exceptions += 1,
        }
    }
    let codes = if min > max {
        0
    } else {
        code_bytes((max - min) as u64, n)
    };
    codes + exceptions * EXCEPTION_BYTES
}

/// Rounds `x` half away from zero to `digits` decimals exactly as
/// `plan::eval::round_f64` does (the unit tests hold the two together).
fn round_f64_like_eval(x: f64, digits: i32) -> f64 {
    if digits == 0 {
        return x.round();
    }
    let p = 10f64.powi(digits);
    let y = (x * p).round() / p;
    if y.is_finite() { y } else { x }
}

/// Floats of one partition as ALP digits plus exceptions.
///
/// # Invariants
/// - `exception_rows` is strictly ascending, each `< len`, and every
///   exception row's code is 0; `exception_values[k]` is the value of row
///   `exception_rows[k]`.
/// - For every other row, `decode_digits(base + code, exponent)` is the
///   value, bit for bit, and `|base + code| < MAX_DIGITS`.
/// - NULL rows (per the validity passed to [`Alp::encode`]) hold code 0 and
///   are never exceptions; kernels that aggregate take the same validity.
#[derive(Debug, Clone, PartialEq)]
pub struct Alp {
    len: usize,
    exponent: i8,
    base: i64,
    max_code: u64,
    codes: AlpCodes,
    exception_rows: Vec<u32>,
    exception_values: Vec<f64>,
    /// Group key of each exception (see [`Alp::group_keys`]).
    exception_keys: Vec<u64>,
    /// Values of the group keys past `max_code`, in key order.
    extra_key_values: Vec<f64>,
}

/// An exact sum of ALP digits: the decimal `digits · 10^exponent`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DecimalSum {
    /// Sum of the digits of the rows summed.
    pub digits: i128,
    /// Power of ten the digits are scaled by.
    pub exponent: i8,
    /// Rows summed.
    pub count: u64,
}

impl DecimalSum {
    /// The sum as the f64 nearest to the exact decimal (one rounding).
    pub fn to_f64(self) -> f64 {
        let e = self.exponent;
        if self.digits.unsigned_abs() < 1 << 53 {
            decode_digits(self.digits as i64, e)
        } else {
            // Rust's float parsing is correctly rounded.
            format!("{}e{}", self.digits, e)
                .parse::<f64>()
                .unwrap_or(f64::NAN)
        }
    }

    /// Adds another sum of the same exponent (partial aggregates merge).
    ///
    /// # Panics
    /// Debug builds assert the exponents match.
    pub fn merge(&mut self, other: &DecimalSum) {
        debug_assert_eq!(self.exponent, other.exponent);
        self.digits += other.digits;
        self.count += other.count;
    }
}

/// The sum of an ALP column over some rows: the exact decimal part plus the
/// exceptions, summed in f64 in row order.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AlpSum {
    /// Exact sum of the non-exception rows.
    pub decimal: DecimalSum,
    /// f64 sum of the exception rows, in row order (0.0 when none).
    pub exceptions: f64,
    /// Exception rows summed.
    pub exception_count: u64,
}

impl AlpSum {
    /// The total as one f64: the decimal part rounded once, plus the
    /// exceptions when there are any (then two roundings, and a NaN or
    /// infinity among them decides the result as IEEE addition does).
    pub fn to_f64(self) -> f64 {
        if self.exception_count == 0 {
            self.decimal.to_f64()
        } else {
            self.decimal.to_f64() + self.exceptions
        }
    }
}

impl Alp {
    /// Encodes a partition's floats; values at rows where `validity` is
    /// false are ignored (they hold code 0).
    ///
    /// Returns `None` when ALP is not smaller than plain f64 (8 bytes per
    /// row), when no row is valid, or when `values.len()` exceeds `u32::MAX`.
    ///
    /// # Panics
    /// Debug builds assert that `validity` has `values.len()` bits.
    pub fn encode(values: &[f64], validity: Option<&Bitmap>) -> Option<Alp> {
        debug_assert!(validity.is_none_or(|v| v.len() == values.len()));
        let len = values.len();
        if len > u32::MAX as usize {
            return None;
        }
        let valid = |i: usize| validity.is_none_or(|v| v.get(i));
        let exponent = choose_exponent(values, &valid)?;
        Self::encode_with_exponent(values, validity, exponent)
    }

    /// Encodes a partition's floats with a given exponent (one the caller
    /// found on a sample, as [`super::choose_floats`] does), skipping the
    /// search of [`Alp::encode`]; the same `None` cases, and `None` for an
    /// exponent outside `MIN_EXPONENT..=MAX_EXPONENT`.
    ///
    /// # Panics
    /// Debug builds assert that `validity` has `values.len()` bits.
    pub fn encode_with_exponent(
        values: &[f64],
        validity: Option<&Bitmap>,
        exponent: i8,
    ) -> Option<Alp> {
        debug_assert!(validity.is_none_or(|v| v.len() == values.len()));
        let len = values.len();
        if len > u32::MAX as usize || !(MIN_EXPONENT..=MAX_EXPONENT).contains(&exponent) {
            return None;
        }
        let mut min = i64::MAX;
        let mut max = i64::MIN;
        let mut exception_rows = Vec::new();
        let mut exception_values = Vec::new();
        let mut digits: Vec<i64> = Vec::with_capacity(len);
        // A validity word per 64 rows, no branch on it per row: every row
        // of a block is encoded by the branch-free `encode_block` (which
        // the compiler vectorizes, two divisions at a time), a NULL row's
        // digits are then replaced by the marker (a select) and only a
        // valid row that does not round-trip (rare) takes the branch to
        // the exceptions.
        let mut rounded = [0f64; 64];
        let mut fits = [false; 64];
        for (w, block) in values.chunks(64).enumerate() {
            let (r, f) = (&mut rounded[..block.len()], &mut fits[..block.len()]);
            if exponent < 0 {
                encode_block::<true>(block, exponent, r, f);
            } else {
                encode_block::<false>(block, exponent, r, f);
            }
            let mut bits = validity.map_or(u64::MAX, |v| v.word(w));
            for (j, &x) in block.iter().enumerate() {
                let valid = bits & 1 == 1;
                bits >>= 1;
                if valid & !f[j] {
                    exception_rows.push((64 * w + j) as u32);
                    exception_values.push(x);
                }
                // |r| < 2^51 is an integer, so the cast is exact.
                let d = if valid & f[j] { r[j] as i64 } else { i64::MIN };
                min = min.min(if d == i64::MIN { i64::MAX } else { d });
                max = max.max(d);
                digits.push(d);
            }
        }
        Self::from_digits(
            len,
            exponent,
            &digits,
            min,
            max,
            exception_rows,
            exception_values,
        )
    }

    /// Builds from digits (`i64::MIN` marks NULL and exception rows) and the
    /// digit range; `None` when not smaller than f64.
    fn from_digits(
        len: usize,
        exponent: i8,
        digits: &[i64],
        min: i64,
        max: i64,
        exception_rows: Vec<u32>,
        exception_values: Vec<f64>,
    ) -> Option<Alp> {
        let (base, max_code) = if min > max {
            (0, 0)
        } else {
            (min, (max - min) as u64)
        };
        let size = code_bytes(max_code, len) + exception_rows.len() * EXCEPTION_BYTES;
        if size >= len * 8 {
            return None;
        }
        let codes = AlpCodes::pack(
            digits
                .iter()
                .map(|&d| if d == i64::MIN { 0 } else { (d - base) as u64 }),
            max_code,
        );
        let mut alp = Alp {
            len,
            exponent,
            base,
            max_code,
            codes,
            exception_rows,
            exception_values,
            exception_keys: Vec::new(),
            extra_key_values: Vec::new(),
        };
        alp.assign_exception_keys();
        Some(alp)
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when there are no rows.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The power of ten the digits are scaled by: row value is
    /// `(base + code) · 10^exponent`.
    pub fn exponent(&self) -> i8 {
        self.exponent
    }

    /// The smallest digits of a non-exception valid row (0 when none).
    pub fn base(&self) -> i64 {
        self.base
    }

    /// The largest code of a non-exception valid row: codes are in
    /// `0..=max_code`.
    pub fn max_code(&self) -> u64 {
        self.max_code
    }

    /// One code per row (`digits - base`); 0 at NULL and exception rows.
    /// Read them a batch at a time ([`AlpCodes::for_each`] and friends).
    pub fn codes(&self) -> &AlpCodes {
        &self.codes
    }

    /// The exception rows (ascending) and their values.
    pub fn exceptions(&self) -> (&[u32], &[f64]) {
        (&self.exception_rows, &self.exception_values)
    }

    /// The value code `code` stands for.
    #[inline]
    pub fn decode_code(&self, code: u64) -> f64 {
        decode_digits(self.base.wrapping_add(code as i64), self.exponent)
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
        // Sized once: bit-packed codes decode run by run, and growing by
        // doubling copied the output again (callgrind: 14% of a top-n).
        out.reserve(range.len());
        let start = out.len();
        let (base, exponent) = (self.base, self.exponent);
        with_code_runs!(&self.codes, range.clone(), |_at, c| {
            decode_into(c, base, exponent, out);
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
        let (base, exponent) = (self.base, self.exponent);
        match &self.codes {
            AlpCodes::Bytes(codes) => with_codes!(codes, c => out.extend(
                selection.iter().map(|&i| decode_digits(base.wrapping_add(c[i as usize].to_u64() as i64), exponent))
            )),
            AlpCodes::Bits(p) => {
                let mut buf = [0u64; UNPACK_ROWS];
                for rows in selection.chunks(UNPACK_ROWS) {
                    let codes = &mut buf[..rows.len()];
                    p.unpack_rows(rows, codes);
                    decode_into(codes, base, exponent, out);
                }
            }
        }
        if self.exception_rows.is_empty() {
            return;
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

    /// Heap bytes held (codes, exceptions and their group keys).
    pub fn heap_bytes(&self) -> usize {
        self.codes.heap_bytes()
            + self.exception_rows.len() * 4
            + self.exception_values.len() * 8
            + self.exception_keys.len() * 8
            + self.extra_key_values.len() * 8
    }

    /// The codes of non-exception rows whose value satisfies `value op c`
    /// under [`cmp_f64`]'s order (NaN above everything, `-0.0 == 0.0`).
    ///
    /// Exact whatever `c` is, also when it does not encode: the bounds are
    /// found by binary search over `0..=max_code` with [`Alp::decode_code`]
    /// itself, which is monotone. Exception rows (and NULL rows) must be
    /// handled apart: see [`Alp::filter`].
    pub fn code_predicate(&self, op: CmpOp, c: f64) -> CodePredicate {
        let count = self.max_code + 1;
        let lt = partition_point(0, count, |code| {
            cmp_f64(self.decode_code(code), c) != Ordering::Less
        });
        let le = partition_point(lt, count, |code| {
            cmp_f64(self.decode_code(code), c) == Ordering::Greater
        });
        op.predicate(lt, le, count)
    }

    /// Evaluates `value op c` on every row, as mask words (bit `j` of word
    /// `w` is row `64·w + j`; NULL rows and bits past `len` are 0). Exception
    /// rows are compared in f64 with [`cmp_f64`].
    pub fn filter(&self, op: CmpOp, c: f64, validity: Option<&Bitmap>) -> Vec<u64> {
        let pred = self.code_predicate(op, c);
        let mut words = mask_words(&self.codes, &pred);
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

    /// Sum over the valid rows: exact for the non-exception rows.
    pub fn sum(&self, validity: Option<&Bitmap>) -> AlpSum {
        // Every row's code, then the NULL rows' codes taken back out: one
        // branch-free pass whatever the validity.
        let mut code_sum = 0u128;
        match &self.codes {
            AlpCodes::Bytes(codes) => with_codes!(codes, c => code_sum = sum_codes(c)),
            AlpCodes::Bits(p) => {
                // Bit-packed codes have at most 48 bits: 2048 sum within a
                // u64. Summed as they are unpacked, with no buffer.
                for at in (0..self.len).step_by(2048) {
                    let mut s = 0u64;
                    p.for_each(at..(at + 2048).min(self.len), |c| s += c);
                    code_sum += s as u128;
                }
            }
        }
        if let Some(v) = validity {
            for row in v.zeros() {
                code_sum -= self.codes.get(row) as u128;
            }
        }
        let valid_rows = validity.map_or(self.len, |v| v.count_ones()) as u64;
        let exception_count = self.exception_rows.len() as u64;
        let count = valid_rows - exception_count;
        let digits = code_sum as i128 + self.base as i128 * count as i128;
        AlpSum {
            decimal: DecimalSum {
                digits,
                exponent: self.exponent,
                count,
            },
            exceptions: self.exception_values.iter().fold(0.0, |a, &x| a + x),
            exception_count,
        }
    }

    /// Smallest valid value under [`cmp_f64`] (`None` when every row is
    /// NULL). Among equal values (`0.0`, `-0.0`) the first row's wins.
    pub fn min(&self, validity: Option<&Bitmap>) -> Option<f64> {
        self.extreme(validity, Ordering::Less)
    }

    /// Largest valid value under [`cmp_f64`] (NaN is the largest).
    pub fn max(&self, validity: Option<&Bitmap>) -> Option<f64> {
        self.extreme(validity, Ordering::Greater)
    }

    fn extreme(&self, validity: Option<&Bitmap>, want: Ordering) -> Option<f64> {
        let mut best: Option<(f64, usize)> = None;
        let mut consider = |x: f64, row: usize| {
            best = match best {
                None => Some((x, row)),
                Some((b, r)) => match cmp_f64(x, b) {
                    o if o == want => Some((x, row)),
                    Ordering::Equal if row < r => Some((x, row)),
                    _ => Some((b, r)),
                },
            };
        };
        // The codes between exceptions, a segment at a time.
        let mut start = 0usize;
        let bounds = self
            .exception_rows
            .iter()
            .map(|&r| r as usize)
            .chain(std::iter::once(self.len));
        for end in bounds {
            let mut found = None;
            with_code_runs!(&self.codes, start..end, |at, c| {
                extreme_code(c, at, validity, want, &mut found);
            });
            if let Some((code, row)) = found {
                consider(self.decode_code(code), row);
            }
            start = end + 1;
        }
        for (&row, &x) in self.exception_rows.iter().zip(&self.exception_values) {
            consider(x, row as usize);
        }
        best.map(|(x, _)| x)
    }

    /// `floor(x)` of every row as a new column, bit-identical to f64
    /// `floor`. The digits are divided once (an identity when the exponent is
    /// already `>= 0`); exceptions are floored in f64.
    pub fn floor(&self) -> Option<Alp> {
        self.map_digits(0, |d, k| d.div_euclid(POW10_I64[k]), f64::floor)
    }

    /// `ceil(x)` of every row as a new column, bit-identical to f64 `ceil`
    /// (a negative value above -1 becomes the exception -0.0, as in f64).
    pub fn ceil(&self) -> Option<Alp> {
        self.map_digits(0, |d, k| -(-d).div_euclid(POW10_I64[k]), f64::ceil)
    }

    /// `round(x, decimals)` (half away from zero) of every row as a new
    /// column, bit-identical to `plan::eval::round_f64`.
    ///
    /// On the digits: with `k = -exponent - decimals` digits dropped, the
    /// result is `d / 10^k` rounded half away from zero. Away from exact
    /// ties this equals the f64 formula `(x·10^d).round() / 10^d` because
    /// `|d| < 2^51` keeps the product's error below half a unit; at an exact
    /// decimal tie (`…5`) the f64 formula may round the other way (1.005 is
    /// 1.00499… in binary), so those rows are computed in f64 like the
    /// exceptions. `None` for `decimals` outside `0..=18` (the caller falls
    /// back to f64) or when the result is not smaller than f64.
    pub fn round(&self, decimals: i64) -> Option<Alp> {
        let decimals = i32::try_from(decimals)
            .ok()
            .filter(|d| (0..=18).contains(d))?;
        if self.exponent as i32 >= -decimals {
            // Already at most `decimals` decimals: the f64 formula returns
            // x itself when x·10^d stays below 2^52 (an exact integer then).
            let scale = 10i128.pow((self.exponent as i32 + decimals) as u32);
            let largest = self
                .base
                .unsigned_abs()
                .max(self.base.wrapping_add(self.max_code as i64).unsigned_abs())
                as i128;
            if largest.checked_mul(scale).is_none_or(|p| p >= 1 << 52) {
                return None;
            }
            let mut out = self.clone();
            out.exception_values = self
                .exception_values
                .iter()
                .map(|&x| round_f64_like_eval(x, decimals))
                .collect();
            out.assign_exception_keys();
            return Some(out);
        }
        let k = (-(self.exponent as i32) - decimals) as usize;
        let half = 5 * POW10_I64[k - 1];
        let f64_op = |x: f64| round_f64_like_eval(x, decimals);
        let exponent = -decimals as i8;
        self.map_rows(exponent, f64_op, |d| {
            let r = d % POW10_I64[k];
            if r.abs() == half {
                return None; // an exact tie: computed in f64
            }
            let q = d / POW10_I64[k];
            Some(if r.abs() > half { q + d.signum() } else { q })
        })
    }

    /// A floor/ceil-like map to exponent `max(exponent, target)`.
    fn map_digits(
        &self,
        target: i8,
        on_digits: impl Fn(i64, usize) -> i64,
        f64_op: impl Fn(f64) -> f64,
    ) -> Option<Alp> {
        if self.exponent >= target {
            let mut out = self.clone();
            out.exception_values = self.exception_values.iter().map(|&x| f64_op(x)).collect();
            out.assign_exception_keys();
            return Some(out);
        }
        let k = (target - self.exponent) as usize;
        self.map_rows(target, f64_op, |d| Some(on_digits(d, k)))
    }

    /// Maps every non-exception row's digits with `on_digits` (`None`:
    /// compute that row in f64), exceptions with `f64_op`, to a new column
    /// at `exponent`. A zero result from negative digits is f64's -0.0 and
    /// becomes an exception.
    fn map_rows(
        &self,
        exponent: i8,
        f64_op: impl Fn(f64) -> f64,
        on_digits: impl Fn(i64) -> Option<i64>,
    ) -> Option<Alp> {
        let mut digits = Vec::with_capacity(self.len);
        let (mut min, mut max) = (i64::MAX, i64::MIN);
        let mut exception_rows = Vec::new();
        let mut exception_values = Vec::new();
        let mut next_exception = 0;
        let mut codes = Vec::with_capacity(self.len);
        self.codes.for_each(0..self.len, |_, c| codes.push(c));
        for (i, &code) in codes.iter().enumerate() {
            if self.exception_rows.get(next_exception) == Some(&(i as u32)) {
                exception_rows.push(i as u32);
                exception_values.push(f64_op(self.exception_values[next_exception]));
                next_exception += 1;
                digits.push(i64::MIN);
                continue;
            }
            let d = self.base.wrapping_add(code as i64);
            let mapped = match on_digits(d) {
                Some(0) if d < 0 => None,
                Some(n) => Some(n),
                None => encode_digits(f64_op(decode_digits(d, self.exponent)), exponent),
            };
            match mapped {
                Some(n) => {
                    min = min.min(n);
                    max = max.max(n);
                    digits.push(n);
                }
                None => {
                    exception_rows.push(i as u32);
                    exception_values.push(f64_op(decode_digits(d, self.exponent)));
                    digits.push(i64::MIN);
                }
            }
        }
        // NULL rows also hold code 0 here: their digits were `base`, mapped
        // like any other; the caller keeps the validity.
        Self::from_digits(
            self.len,
            exponent,
            &digits,
            min,
            max,
            exception_rows,
            exception_values,
        )
    }

    /// Gives each exception the group key of the code whose value equals it
    /// under [`cmp_f64`], or a new key past `max_code`.
    fn assign_exception_keys(&mut self) {
        let count = self.max_code + 1;
        let mut extra: Vec<f64> = Vec::new();
        let mut keys = Vec::with_capacity(self.exception_values.len());
        for &x in &self.exception_values {
            let lt = partition_point(0, count, |code| {
                cmp_f64(self.decode_code(code), x) != Ordering::Less
            });
            let key = if lt < count && cmp_f64(self.decode_code(lt), x) == Ordering::Equal {
                lt
            } else {
                match extra.iter().position(|&e| cmp_f64(e, x) == Ordering::Equal) {
                    Some(p) => count + p as u64,
                    None => {
                        extra.push(x);
                        count + extra.len() as u64 - 1
                    }
                }
            };
            keys.push(key);
        }
        self.exception_keys = keys;
        self.extra_key_values = extra;
    }

    /// Number of distinct group keys: keys are in `0..group_key_count()`.
    pub fn group_key_count(&self) -> u64 {
        self.max_code + 1 + self.extra_key_values.len() as u64
    }

    /// Appends the group key of each row in `range` to `out`.
    ///
    /// Two rows get the same key exactly when their values are equal under
    /// [`cmp_f64`] (so `0.0` and `-0.0` share a key, and all NaNs share one).
    /// A non-exception row's key is its code (order-preserving); an
    /// exception's key is the equal code's, or one past `max_code`. NULL
    /// rows get key 0: the caller masks them with the validity.
    pub fn group_keys(&self, range: Range<usize>, out: &mut Vec<u64>) {
        let start = out.len();
        with_code_runs!(&self.codes, range.clone(), |_at, c| {
            out.extend(c.iter().map(|x| x.to_u64()));
        });
        let first = self
            .exception_rows
            .partition_point(|&r| (r as usize) < range.start);
        for k in first..self.exception_rows.len() {
            let row = self.exception_rows[k] as usize;
            if row >= range.end {
                break;
            }
            out[start + row - range.start] = self.exception_keys[k];
        }
    }

    /// The value of group key `key` (for `0.0`/`-0.0` sharing a code, the
    /// code's value).
    ///
    /// # Panics
    /// If `key >= group_key_count()`.
    pub fn group_key_value(&self, key: u64) -> f64 {
        if key <= self.max_code {
            self.decode_code(key)
        } else {
            self.extra_key_values[(key - self.max_code - 1) as usize]
        }
    }
}

/// The exponent with the smallest estimated size, by sampling (see the
/// module docs); `None` when no row is valid.
fn choose_exponent(values: &[f64], valid: &dyn Fn(usize) -> bool) -> Option<i8> {
    let len = values.len();
    let sample_of = |runs: Vec<Range<usize>>| -> Vec<f64> {
        runs.into_iter()
            .flatten()
            .filter(|&i| valid(i))
            .map(|i| values[i])
            .collect()
    };
    let mut sample = sample_of(sample_runs(len, SAMPLE_RUNS, SAMPLE_RUN_ROWS));
    if sample.is_empty() {
        // Sparse validity: fall back to the first valid rows.
        sample = (0..len)
            .filter(|&i| valid(i))
            .take(SAMPLE_RUN_ROWS)
            .map(|i| values[i])
            .collect();
        if sample.is_empty() {
            return None;
        }
    }
    let mut ranked: Vec<(usize, i8)> = (MIN_EXPONENT..=MAX_EXPONENT)
        .map(|e| (estimate(sample.iter().copied(), e), e))
        .collect();
    // Smallest first; among equal sizes the larger exponent (fewer digits).
    ranked.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
    let wide = sample_of(sample_runs(len, WIDE_RUNS, WIDE_RUN_ROWS));
    let wide = if wide.is_empty() { sample } else { wide };
    ranked
        .iter()
        .take(FULL_CANDIDATES)
        .map(|&(_, e)| (estimate(wide.iter().copied(), e), e))
        .min_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)))
        .map(|(_, e)| e)
}

fn decode_into<T: Code>(codes: &[T], base: i64, exponent: i8, out: &mut Vec<f64>) {
    // Two loops so the operation is hoisted out and each vectorizes.
    if exponent >= 0 {
        let p = POW10[exponent as usize];
        out.extend(
            codes
                .iter()
                .map(|c| base.wrapping_add(c.to_u64() as i64) as f64 * p),
        );
    } else {
        let p = POW10[exponent.unsigned_abs() as usize];
        out.extend(
            codes
                .iter()
                .map(|c| base.wrapping_add(c.to_u64() as i64) as f64 / p),
        );
    }
}

fn mask_words(codes: &AlpCodes, pred: &CodePredicate) -> Vec<u64> {
    // `lo <= c < hi` as one unsigned compare: `c - lo < hi - lo` (wrapping).
    let lo = pred.codes.start;
    let width = pred.codes.end.saturating_sub(lo);
    let negated = pred.negated;
    let mut words = Vec::with_capacity(codes.len().div_ceil(64));
    codes.block_masks(
        0..codes.len(),
        |c| (c.wrapping_sub(lo) < width) != negated,
        &mut words,
    );
    // Bits past the last row are 0: `block_masks` sets none there.
    words
}

/// Sum of `codes`.
fn sum_codes<T: Code>(codes: &[T]) -> u128 {
    // Codes are below 2^52, so 2048 of them sum within a u64.
    codes
        .chunks(2048)
        .map(|chunk| chunk.iter().map(|c| c.to_u64()).sum::<u64>() as u128)
        .sum()
}

/// Folds the smallest (`want == Less`) or largest code over the valid rows
/// `at..at + codes.len()` into `best` (code, first row); runs come in row
/// order, so an equal code never replaces the best.
fn extreme_code<T: Code>(
    codes: &[T],
    at: usize,
    validity: Option<&Bitmap>,
    want: Ordering,
    best: &mut Option<(u64, usize)>,
) {
    let mut run_best: Option<(T, usize)> = None;
    for (k, &c) in codes.iter().enumerate() {
        if validity.is_some_and(|v| !v.get(at + k)) {
            continue;
        }
        if run_best.is_none_or(|(b, _)| c.cmp(&b) == want) {
            run_best = Some((c, at + k));
        }
    }
    if let Some((c, row)) = run_best {
        let c = c.to_u64();
        if best.is_none_or(|(b, _)| c.cmp(&b) == want) {
            *best = Some((c, row));
        }
    }
}

#[cfg(test)]
mod tests;
