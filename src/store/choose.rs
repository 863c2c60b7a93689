//! Choosing a codec per partition and column, by statistics and sampling.
//!
//! After BtrBlocks (Kuschewski et al., SIGMOD 2023): cheap statistics come
//! from one pass over the whole partition (min, max, gcd, run count, the
//! line through the first and last rows), and the schemes whose size
//! depends on the data in detail (ALP's exponent and exceptions, FSST's
//! ratio, delta and residual widths) are estimated on a sample of
//! [`SAMPLE_RUNS`] runs of [`SAMPLE_RUN_ROWS`] consecutive rows spread
//! evenly over the partition, scaled to its row count.
//!
//! # The rule
//! Candidates are listed fastest to scan first (see each `choose_*`). The
//! chosen codec is **the first in that order whose estimated size is at
//! most the smallest estimate plus 10%** (`size · 10 <= smallest · 11`): a
//! faster codec wins unless a slower one saves more than about a tenth of
//! the bytes. A codec whose estimate is zero bytes (an exact line) is
//! verified on the whole partition before it is trusted.
//!
//! The result, a [`Choice`], names the codec and keeps every estimate (for
//! `.schema` and EXPLAIN); the caller then encodes with that codec and
//! falls back to the plain codec of the type if the encoder declines
//! (`Alp::encode`, `Fsst::encode` return `None` when they do not pay on
//! the whole partition).

use std::ops::Range;

use super::alp::{Alp, EXCEPTION_BYTES, encode_digits};
use super::alp_codes::code_bytes;
use super::bitmap::Bitmap;
use super::column::ColumnData;
use super::column::{Column, gcd};
use super::delta::ANCHOR_ROWS;
use super::fsst::{BLOCK_ROWS, Fsst};
use super::hexpoint::HexPoints;
use super::linear::Linear;
use super::rle::Rle;
use super::single::{Single, Split};
use super::stats::{FloatStats, IntStats};

/// Runs of consecutive rows in a sample (as BtrBlocks: 10 × 64).
pub const SAMPLE_RUNS: usize = 10;
/// Rows per sampled run.
pub const SAMPLE_RUN_ROWS: usize = 64;
/// Bytes an RLE run costs (an 8-byte value and a u32 end).
const RUN_BYTES: usize = 12;

/// A codec the chooser can name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CodecKind {
    /// One value for the whole partition (`ColumnData::Const`).
    Const,
    /// Integers as offsets from the minimum with a gcd scale
    /// (`ColumnData::Offset`).
    Offset,
    /// Integers as u8/u16 codes into the partition's sorted distinct values
    /// (`ColumnData::IntDict`).
    IntDict,
    /// [`Linear`]: `base + step·row` plus residuals.
    Linear,
    /// [`super::Delta`]: deltas with anchors.
    Delta,
    /// [`Rle`] of the values (integers, timestamps or floats).
    Rle,
    /// Plain f64 (`ColumnData::Float`).
    Float,
    /// [`Alp`] digits plus exceptions.
    Alp,
    /// [`Single`]: f32 values as front dictionary codes and tail bits.
    Single,
    /// A sorted dictionary with u8/u16 codes (`ColumnData::Dict`).
    Dict,
    /// A sorted dictionary whose codes are run-length encoded
    /// (`Rle<i64>` of the codes).
    DictRle,
    /// Strings back to back (`ColumnData::Packed`).
    Packed,
    /// [`super::HexPoints`]: hex EWKB points as two ALP coordinate columns.
    HexPoints,
    /// [`Fsst`]-compressed strings.
    Fsst,
}

impl CodecKind {
    /// Short name for `.schema` and EXPLAIN.
    #[cfg(feature = "internals")]
    pub fn name(self) -> &'static str {
        match self {
            CodecKind::Const => "const",
            CodecKind::Offset => "offset",
            CodecKind::IntDict => "int-dict",
            CodecKind::Linear => "linear",
            CodecKind::Delta => "delta",
            CodecKind::Rle => "rle",
            CodecKind::Float => "f64",
            CodecKind::Alp => "alp",
            CodecKind::Single => "f32",
            CodecKind::Dict => "dict",
            CodecKind::DictRle => "dict+rle",
            CodecKind::Packed => "packed",
            CodecKind::HexPoints => "hex-points",
            CodecKind::Fsst => "fsst",
        }
    }
}

/// One candidate's estimated size for the whole partition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Candidate {
    /// The codec.
    pub codec: CodecKind,
    /// Estimated heap bytes of the codec's data (validity not included).
    pub bytes: usize,
}

/// The codec chosen for one partition's column, with every estimate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choice {
    /// The chosen codec.
    pub codec: CodecKind,
    /// Its estimated heap bytes.
    pub bytes: usize,
    /// Every applicable candidate, fastest to scan first.
    pub candidates: Vec<Candidate>,
    /// For floats: the ALP exponent found on the sample (what
    /// [`Alp::encode_with_exponent`] takes), `None` otherwise.
    pub alp_exponent: Option<i8>,
    /// For floats: the split of [`Single`] found on the sample (what
    /// [`Single::encode_with`] takes), when it was a candidate.
    pub single_split: Option<Split>,
    /// For integers: the distinct values, ascending, when an integer
    /// dictionary was a candidate (what the encoder codes against).
    pub int_dict_values: Option<Vec<i64>>,
}

/// Applies the rule of the module docs to candidates listed fastest first.
fn pick(candidates: Vec<Candidate>) -> Choice {
    let smallest = candidates.iter().map(|c| c.bytes).min().unwrap_or(0);
    let chosen = candidates
        .iter()
        .find(|c| c.bytes.saturating_mul(10) <= smallest.saturating_mul(11))
        .copied()
        .unwrap_or(Candidate {
            codec: CodecKind::Const,
            bytes: 0,
        });
    Choice {
        codec: chosen.codec,
        bytes: chosen.bytes,
        candidates,
        alp_exponent: None,
        single_split: None,
        int_dict_values: None,
    }
}

/// The sampled row ranges of a partition of `len` rows: [`SAMPLE_RUNS`]
/// runs of [`SAMPLE_RUN_ROWS`] (see [`sample_runs`]).
pub fn sample_ranges(len: usize) -> Vec<Range<usize>> {
    sample_runs(len, SAMPLE_RUNS, SAMPLE_RUN_ROWS)
}

/// `runs` runs of `run_rows` consecutive rows evenly spread over `len`
/// rows, the first at row 0 and the last ending at `len`; one range of all
/// rows when the runs would cover them.
pub fn sample_runs(len: usize, runs: usize, run_rows: usize) -> Vec<Range<usize>> {
    if len <= runs * run_rows {
        return std::iter::once(0..len).collect();
    }
    (0..runs)
        .map(|r| {
            let start = (len - run_rows) * r / (runs - 1).max(1);
            start..start + run_rows
        })
        .collect()
}

/// Bytes per code for codes up to `max` (as `Codes::pack`).
fn width_bytes(max: u128) -> usize {
    match max {
        0..=0xFF => 1,
        0x100..=0xFFFF => 2,
        0x1_0000..=0xFFFF_FFFF => 4,
        _ => 8,
    }
}

/// Chooses among const, offset, linear, delta and RLE for integers or
/// timestamps (values at NULL rows are ignored).
///
/// Speed order: const, linear (exact), offset, integer dictionary, RLE,
/// linear (residuals), delta. Full-pass statistics: min, max, gcd
/// (offset), run count (RLE), the distinct count up to the most that could
/// pay (integer dictionary: only when offsets take 2 bytes or more);
/// sampled: linear residual width, delta width.
#[cfg(any(test, feature = "internals"))]
pub fn choose_ints(values: &[i64], validity: Option<&Bitmap>) -> Choice {
    match super::stats::int_stats(values, validity) {
        Some(stats) => choose_ints_with(values, validity, &stats).0,
        None => pick(vec![Candidate {
            codec: CodecKind::Const,
            bytes: 0,
        }]),
    }
}

/// [`choose_ints`] given the statistics of `values` (which the encoder
/// also makes its zone map and offsets from, so the partition is read
/// once for all three); also returns the exact line when one was verified
/// on the whole partition, so it is not encoded again.
pub(crate) fn choose_ints_with(
    values: &[i64],
    validity: Option<&Bitmap>,
    stats: &IntStats,
) -> (Choice, Option<Linear>) {
    let len = values.len();
    let valid = |i: usize| validity.is_none_or(|v| v.get(i));
    let IntStats {
        first_row: first,
        last_row: last,
        min,
        max,
        scale,
        runs,
        ..
    } = *stats;
    if min == max {
        let choice = pick(vec![Candidate {
            codec: CodecKind::Const,
            bytes: 0,
        }]);
        return (choice, None);
    }
    let offset = width_bytes((max as i128 - min as i128) as u128 / scale.max(1) as u128) * len;
    let samples = sample_ranges(len);

    // Linear: the line through the first and last valid rows, residuals on
    // the sample.
    let step = if last > first {
        let rise = values[last] as i128 - values[first] as i128;
        let run = (last - first) as i128;
        (2 * rise + run * rise.signum()) / (2 * run)
    } else {
        0
    };
    let (mut rmin, mut rmax) = (i128::MAX, i128::MIN);
    for i in samples.iter().cloned().flatten().filter(|&i| valid(i)) {
        let r = values[i] as i128 - values[first] as i128 - step * (i as i128 - first as i128);
        rmin = rmin.min(r);
        rmax = rmax.max(r);
    }
    let mut candidates = Vec::new();
    let mut exact_line = None;
    let linear_bytes = if rmin >= rmax {
        // Zero on the sample: verify on the whole partition.
        exact_line = Linear::encode(values, validity);
        exact_line.as_ref().map(Linear::heap_bytes)
    } else {
        Some(width_bytes((rmax - rmin) as u128) * len)
    };
    if linear_bytes == Some(0) {
        candidates.push(Candidate {
            codec: CodecKind::Linear,
            bytes: 0,
        });
    }
    candidates.push(Candidate {
        codec: CodecKind::Offset,
        bytes: offset,
    });
    let distinct = int_dict_values(values, validity, offset, &samples);
    if let Some(d) = &distinct {
        candidates.push(Candidate {
            codec: CodecKind::IntDict,
            bytes: width_bytes(d.len().saturating_sub(1) as u128) * len + 8 * d.len(),
        });
    }
    candidates.push(Candidate {
        codec: CodecKind::Rle,
        bytes: runs * RUN_BYTES,
    });
    if let Some(bytes) = linear_bytes.filter(|&b| b > 0) {
        candidates.push(Candidate {
            codec: CodecKind::Linear,
            bytes,
        });
    }
    // Delta: widths of the deltas inside sampled runs.
    let (mut dmin, mut dmax) = (i128::MAX, i128::MIN);
    let mut deltas = Vec::new();
    for r in &samples {
        for i in r.start + 1..r.end {
            if valid(i) && valid(i - 1) {
                let d = values[i] as i128 - values[i - 1] as i128;
                dmin = dmin.min(d);
                dmax = dmax.max(d);
                deltas.push(d);
            }
        }
    }
    if dmin <= dmax {
        // A spread past u64 is not worth a common factor.
        let dscale = deltas
            .iter()
            .try_fold(0u64, |g, &d| {
                u64::try_from(d - dmin).ok().map(|x| gcd(g, x))
            })
            .unwrap_or(1)
            .max(1) as u128;
        candidates.push(Candidate {
            codec: CodecKind::Delta,
            bytes: width_bytes((dmax - dmin) as u128 / dscale) * len
                + len.div_ceil(ANCHOR_ROWS) * 8,
        });
    }
    let choice = pick(candidates);
    let linear = exact_line.filter(|_| choice.codec == CodecKind::Linear);
    let choice = Choice {
        int_dict_values: distinct.filter(|_| choice.codec == CodecKind::IntDict),
        ..choice
    };
    (choice, linear)
}

/// The distinct values of an integer dictionary, ascending, or `None` when
/// it could not win against offsets of `offset` bytes: by the rule of the
/// module docs it must be smaller by a tenth, with u8 codes under u16
/// offsets or u16 codes under wider ones and 8 bytes per distinct value.
/// The count stops at the most that could win, so a column of many
/// distinct values costs at most that many hash inserts; when that bound
/// is below the sample's size, the sample is counted first, and a column
/// whose values set more hashed bits than that bound
/// ([`hashed_bits_set`]) is ruled out without a hash set.
fn int_dict_values(
    values: &[i64],
    validity: Option<&Bitmap>,
    offset: usize,
    samples: &[Range<usize>],
) -> Option<Vec<i64>> {
    let len = values.len();
    let width = offset / len.max(1);
    let (code_bytes, most) = match width {
        0 | 1 => return None,
        2 => (1, 1 << 8),
        _ => (2, 1 << 16),
    };
    // (code_bytes · len + 8 · d) · 11 <= offset · 10.
    let cap = (offset * 10 / 11).checked_sub(code_bytes * len)? / 8;
    let cap = cap.min(most);
    let valid = |i: usize| validity.is_none_or(|v| v.get(i));
    let sampled: usize = samples.iter().map(|r| r.len()).sum();
    if cap < sampled {
        let rows = samples.iter().cloned().flatten().filter(|&i| valid(i));
        distinct_at_most(rows.map(|i| values[i]), cap)?;
    }
    if hashed_bits_set(values, validity, cap) > cap {
        return None;
    }
    let set = distinct_at_most((0..len).filter(|&i| valid(i)).map(|i| values[i]), cap)?;
    let mut sorted: Vec<i64> = set.into_iter().collect();
    sorted.sort_unstable();
    Some(sorted)
}

/// A lower bound on the distinct valid values, exact enough to rule out
/// more than `cap` of them cheaply: each value sets one bit, picked by a
/// multiplicative hash (Knuth's, TAOCP vol. 3 §6.4), of a table of at least
/// `4 · cap` bits (at most 32 KiB, so it stays in the L1 cache); equal
/// values set the same bit and collisions only make fewer bits, so the
/// set bits never exceed the distinct count. With `d` distinct values
/// about `m · (1 - e^(-d/m))` bits of `m` are set: past `cap` once `d` is
/// about `1.3 · cap`, so a column of mostly distinct values (random
/// timestamps: every partition of them) is ruled out at a bit per row
/// instead of `cap` hash-set inserts. NULL rows count as the first valid
/// value, which sets a bit anyway.
fn hashed_bits_set(values: &[i64], validity: Option<&Bitmap>, cap: usize) -> usize {
    let log = (4 * cap.max(16)).next_power_of_two().trailing_zeros();
    let mut table = vec![0u64; (1usize << log) / 64];
    let slot = |x: i64| ((x as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - log)) as usize;
    let Some(first) = (0..values.len()).find(|&i| validity.is_none_or(|v| v.get(i))) else {
        return 0;
    };
    let fill = values[first];
    for (w, block) in values.chunks(64).enumerate() {
        let mut bits = validity.map_or(u64::MAX, |v| v.word(w));
        for &v in block {
            let x = if bits & 1 == 1 { v } else { fill };
            bits >>= 1;
            let s = slot(x);
            table[s / 64] |= 1 << (s % 64);
        }
    }
    table.iter().map(|w| w.count_ones() as usize).sum()
}

/// The distinct values, or `None` once there are more than `cap`.
fn distinct_at_most(
    values: impl Iterator<Item = i64>,
    cap: usize,
) -> Option<hashbrown::HashSet<i64>> {
    // Sized for the cap at once (at most 65,536 values): no rehash while
    // counting up to it.
    let mut seen = hashbrown::HashSet::with_capacity(cap + 1);
    for v in values {
        if seen.insert(v) && seen.len() > cap {
            return None;
        }
    }
    Some(seen)
}

/// Chooses among const, f64, ALP, f32 ([`Single`]) and RLE for floats
/// (values at NULL rows are ignored).
///
/// Speed order: const, f64, ALP, f32, RLE. Full-pass statistics: min, max
/// (for ALP's digit range), run count; sampled: ALP's exponent and
/// exception rate, and f32's split (tail bits, front dictionary size) and
/// exception rate, tried only when ALP's estimate is not already within
/// the 10% of 4 bytes a row that f32 could at best take.
#[cfg(any(test, feature = "internals"))]
pub fn choose_floats(values: &[f64], validity: Option<&Bitmap>) -> Choice {
    match super::stats::float_stats(values, validity) {
        Some(stats) => choose_floats_with(values, validity, &stats),
        None => pick(vec![Candidate {
            codec: CodecKind::Const,
            bytes: 0,
        }]),
    }
}

/// [`choose_floats`] given the statistics of `values` (which the encoder
/// also makes its zone map from).
pub(crate) fn choose_floats_with(
    values: &[f64],
    validity: Option<&Bitmap>,
    stats: &FloatStats,
) -> Choice {
    let len = values.len();
    let valid = |i: usize| validity.is_none_or(|v| v.get(i));
    if stats.constant {
        return pick(vec![Candidate {
            codec: CodecKind::Const,
            bytes: 0,
        }]);
    }
    let mut candidates = vec![Candidate {
        codec: CodecKind::Float,
        bytes: 8 * len,
    }];
    // ALP: the exponent and exception rate of the sample; the digit range of
    // the whole partition's finite min and max.
    let sample: Vec<f64> = sample_ranges(len)
        .into_iter()
        .flatten()
        .filter(|&i| valid(i))
        .map(|i| values[i])
        .collect();
    let mut alp_exponent = None;
    if let Some(alp) = Alp::encode(&sample, None) {
        let e = alp.exponent();
        alp_exponent = Some(e);
        let exception_share = alp.exceptions().0.len() as f64 / sample.len().max(1) as f64;
        let (lo, hi) = stats
            .finite
            .unwrap_or((f64::INFINITY, f64::NEG_INFINITY));
        // The extremes may be exceptions themselves: fall back to the
        // sample's range then.
        let range = match (encode_digits(lo, e), encode_digits(hi, e)) {
            (Some(a), Some(b)) => (b - a) as u128,
            _ => alp.max_code() as u128,
        };
        let exceptions = (exception_share * len as f64).ceil() as usize;
        candidates.push(Candidate {
            codec: CodecKind::Alp,
            bytes: code_bytes(u64::try_from(range).unwrap_or(u64::MAX), len)
                + exceptions * EXCEPTION_BYTES,
        });
    }
    // f32: only when ALP does not already take a third of f64 or less (the
    // f32 codes then rarely win by the 10% the rule asks).
    let mut single_split = None;
    let alp_bytes = candidates
        .iter()
        .find(|c| c.codec == CodecKind::Alp)
        .map(|c| c.bytes);
    if alp_bytes.is_none_or(|b| b * 3 > 8 * len)
        && let Some((split, bytes)) = Single::plan(&sample, len)
    {
        single_split = Some(split);
        candidates.push(Candidate {
            codec: CodecKind::Single,
            bytes,
        });
    }
    candidates.push(Candidate {
        codec: CodecKind::Rle,
        bytes: stats.runs * RUN_BYTES,
    });
    let choice = pick(candidates);
    Choice {
        alp_exponent,
        single_split: single_split.filter(|_| choice.codec == CodecKind::Single),
        ..choice
    }
}

/// Chooses among const, dictionary, dictionary with RLE codes, packed, hex
/// points and FSST for strings (values at NULL rows are ignored).
///
/// Speed order: const, dict, dict+RLE, packed, hex points, FSST. The
/// dictionary and packed sizes are exact (the plain encoder,
/// `Column::encode_strings_plain`, is run in full); the run count is a full
/// pass; hex points are encoded in full when the sample is all points;
/// FSST's ratio is measured on the sample (trained and compressed there),
/// plus one length byte per row, the anchors and the symbol table.
#[cfg(feature = "internals")]
pub fn choose_strings(values: &[&str], validity: Option<&Bitmap>) -> Choice {
    let baseline = Column::encode_strings_plain(values, validity.cloned());
    choose_strings_for(&baseline, values).0
}

/// [`choose_strings`] given the plain encoding `baseline` of `values`
/// (which the loader has already made), so nothing is encoded twice; also
/// returns the hex points when they were encoded to be measured. `values`
/// is read only when the baseline is packed.
pub(crate) fn choose_strings_for(
    baseline: &Column,
    values: &[&str],
) -> (Choice, Option<HexPoints>) {
    let len = baseline.len;
    let validity = baseline.validity.as_ref();
    let valid = |i: usize| validity.is_none_or(|v| v.get(i));
    let baseline_bytes =
        baseline.heap_bytes() - baseline.validity.as_ref().map_or(0, Bitmap::heap_bytes);
    let mut candidates = Vec::new();
    match &baseline.data {
        ColumnData::Dict { dict, codes } => {
            candidates.push(Candidate {
                codec: CodecKind::Dict,
                bytes: baseline_bytes,
            });
            let runs = crate::store::with_codes!(codes, c => run_count_codes(c, validity));
            candidates.push(Candidate {
                codec: CodecKind::DictRle,
                bytes: dict.heap_bytes() + runs * RUN_BYTES,
            });
            return (pick(candidates), None);
        }
        ColumnData::Packed(_) => candidates.push(Candidate {
            codec: CodecKind::Packed,
            bytes: baseline_bytes,
        }),
        _ => {
            return (
                pick(vec![Candidate {
                    codec: CodecKind::Const,
                    bytes: 0,
                }]),
                None,
            );
        }
    }
    debug_assert_eq!(values.len(), len);
    let sample: Vec<&str> = sample_ranges(len)
        .into_iter()
        .flatten()
        .filter(|&i| valid(i))
        .map(|i| values[i])
        .collect();
    let mut points = None;
    if HexPoints::encode(&sample, None).is_some()
        && let Some(p) = HexPoints::encode(values, validity)
    {
        candidates.push(Candidate {
            codec: CodecKind::HexPoints,
            bytes: p.heap_bytes(),
        });
        points = Some(p);
    }
    let sample_raw: usize = sample.iter().map(|s| s.len()).sum();
    if sample_raw > 0
        && let Some(f) = Fsst::encode_unchecked(&sample, None)
    {
        let compressed = f.heap_bytes() - f.table_bytes();
        let total_raw: usize = (0..len)
            .filter(|&i| valid(i))
            .map(|i| values[i].len())
            .sum();
        let ratio = compressed as f64 / (sample_raw + sample.len()) as f64;
        let bytes = (ratio * (total_raw + len) as f64) as usize
            + len.div_ceil(BLOCK_ROWS) * 4
            + f.table_bytes();
        candidates.push(Candidate {
            codec: CodecKind::Fsst,
            bytes,
        });
    }
    (pick(candidates), points)
}

/// Runs of codes in the valid rows (NULLs continue the current run).
fn run_count_codes<T: super::Code>(codes: &[T], validity: Option<&Bitmap>) -> usize {
    match validity {
        None => {
            let changes = codes.windows(2).filter(|w| w[0] != w[1]).count();
            usize::from(!codes.is_empty()) + changes
        }
        Some(v) => {
            let mut runs = 0;
            let mut prev: Option<T> = None;
            for (i, &c) in codes.iter().enumerate() {
                if v.get(i) && prev != Some(c) {
                    runs += 1;
                    prev = Some(c);
                }
            }
            runs
        }
    }
}

/// `Rle::encode` for dictionary codes, for callers that chose
/// [`CodecKind::DictRle`].
pub fn dict_code_runs(codes: &super::Codes, validity: Option<&Bitmap>) -> Option<Rle<i64>> {
    let ids: Vec<i64> = (0..codes.len()).map(|i| codes.get(i) as i64).collect();
    Rle::encode(&ids, validity)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{Delta, Fsst};
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// The true heap bytes of encoding `values` with `codec`.
    fn actual_int_bytes(codec: CodecKind, values: &[i64]) -> usize {
        match codec {
            CodecKind::Const => 0,
            CodecKind::Offset => {
                let c = Column::encode_ints_plain(crate::types::DataType::Int, values, None);
                c.heap_bytes()
            }
            CodecKind::Linear => Linear::encode(values, None).unwrap().heap_bytes(),
            CodecKind::Delta => Delta::encode(values, None).unwrap().heap_bytes(),
            CodecKind::Rle => Rle::encode(values, None).unwrap().heap_bytes(),
            CodecKind::IntDict => {
                let mut sorted = values.to_vec();
                sorted.sort_unstable();
                sorted.dedup();
                super::super::encode::int_dict(values, None, sorted)
            }
            .map(|data| Column {
                    data,
                    ..Column::all_null(crate::types::DataType::Int, values.len())
                })
                .unwrap()
                .heap_bytes(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn rule_prefers_the_faster_codec_within_ten_percent() {
        let c = |codec, bytes| Candidate { codec, bytes };
        let choice = pick(vec![c(CodecKind::Float, 1000), c(CodecKind::Alp, 910)]);
        assert_eq!(choice.codec, CodecKind::Float);
        let choice = pick(vec![c(CodecKind::Float, 1000), c(CodecKind::Alp, 900)]);
        assert_eq!(choice.codec, CodecKind::Alp);
        let choice = pick(vec![c(CodecKind::Offset, 0), c(CodecKind::Rle, 0)]);
        assert_eq!(choice.codec, CodecKind::Offset);
    }

    #[test]
    fn integer_shapes_get_their_codec() {
        let mut rng = ChaCha8Rng::seed_from_u64(13);
        let n = 65_536;
        let rows: Vec<i64> = (1..=n).collect();
        let mut t = 1_400_000_000_000_000i64;
        let pickups: Vec<i64> = (0..n)
            .map(|_| {
                t += rng.gen_range(0..20) * 1_000_000;
                t
            })
            .collect();
        let days: Vec<i64> = (0..n).map(|i| i / 5000).collect();
        let noise: Vec<i64> = (0..n).map(|_| rng.gen_range(0..1000)).collect();
        // Census tracts: 2,000 seven-digit ids (u32 offsets, u16 codes).
        let tracts: Vec<i64> = (0..2000)
            .map(|_| rng.gen_range(1_000_000..6_000_000))
            .collect();
        let tract_rows: Vec<i64> = (0..n).map(|_| tracts[rng.gen_range(0..2000)]).collect();
        // 60 values over a range that needs u16 offsets: u8 codes.
        let puma_ids: Vec<i64> = (0..60).map(|_| rng.gen_range(3700..4200)).collect();
        let pumas: Vec<i64> = (0..n).map(|_| puma_ids[rng.gen_range(0..60)]).collect();
        // 5,000 distinct values over a u16 range: no narrower codes.
        let wide: Vec<i64> = (0..n).map(|_| rng.gen_range(0..5000) * 13).collect();
        let cases: [(&[i64], CodecKind); 8] = [
            (&rows, CodecKind::Linear),
            (&pickups, CodecKind::Delta),
            (&days, CodecKind::Rle),
            (&noise, CodecKind::Offset),
            (&tract_rows, CodecKind::IntDict),
            (&pumas, CodecKind::IntDict),
            (&wide, CodecKind::Offset),
            (&[5, 5, 5], CodecKind::Const),
        ];
        for (values, expected) in cases {
            let choice = choose_ints(values, None);
            assert_eq!(choice.codec, expected, "{:?}", choice.candidates);
            // Estimates are close to the real sizes.
            for cand in &choice.candidates {
                let actual = actual_int_bytes(cand.codec, values);
                assert!(
                    cand.bytes.abs_diff(actual) <= actual / 4 + 64,
                    "{:?} estimated {} actual {actual}",
                    cand.codec,
                    cand.bytes
                );
            }
        }
    }

    #[test]
    fn float_shapes_get_their_codec() {
        let mut rng = ChaCha8Rng::seed_from_u64(14);
        let n = 65_536;
        let money: Vec<f64> = (0..n)
            .map(|_| rng.gen_range(0..100_000) as f64 / 100.0)
            .collect();
        let weather: Vec<f64> = (0..n).map(|i| (i / 4000) as f64 / 100.0).collect();
        let random: Vec<f64> = (0..n).map(|_| rng.r#gen::<f64>()).collect();
        // Float32 coordinates written as doubles, some zero (as the real
        // sample has them).
        let coordinates: Vec<f64> = (0..n)
            .map(|i| {
                if i % 40 == 0 {
                    0.0
                } else {
                    rng.gen_range(-74.1f32..-73.7) as f64
                }
            })
            .collect();
        for (values, expected) in [
            (&money, CodecKind::Alp),
            (&weather, CodecKind::Rle),
            (&random, CodecKind::Float),
            (&coordinates, CodecKind::Single),
        ] {
            let choice = choose_floats(values, None);
            assert_eq!(choice.codec, expected, "{:?}", choice.candidates);
        }
        // The f32 estimate is close to the encoded size.
        let choice = choose_floats(&coordinates, None);
        let single = Single::encode_with(&coordinates, None, choice.single_split.unwrap()).unwrap();
        assert!(choice.bytes.abs_diff(single.heap_bytes()) <= single.heap_bytes() / 10);
        assert!(single.heap_bytes() * 10 < 30 * n, "{}", single.heap_bytes());
        let alp = Alp::encode(&money, None).unwrap();
        let estimate = choose_floats(&money, None).bytes;
        assert!(estimate.abs_diff(alp.heap_bytes()) <= alp.heap_bytes() / 10);
        let nulls = Bitmap::new(3, false);
        assert_eq!(
            choose_floats(&[1.0, 2.0, 3.0], Some(&nulls)).codec,
            CodecKind::Const
        );
    }

    #[test]
    fn string_shapes_get_their_codec() {
        let mut rng = ChaCha8Rng::seed_from_u64(15);
        let n = 20_000;
        let hex: Vec<String> = (0..n)
            .map(|_| {
                let lon: f64 = -74.0 + rng.r#gen::<f64>() * 0.3;
                let bytes = lon.to_le_bytes();
                let h: String = bytes.iter().map(|b| format!("{b:02X}")).collect();
                format!("0101000020E6100000{h}{h}")
            })
            .collect();
        let names: Vec<String> = (0..n)
            .map(|_| format!("name-{}", rng.gen_range(0..50)))
            .collect();
        let runs: Vec<String> = (0..n)
            .map(|i| ["green", "yellow"][i / 3000 % 2].to_string())
            .collect();
        for (owned, expected) in [
            (&hex, CodecKind::HexPoints),
            (&names, CodecKind::Dict),
            (&runs, CodecKind::DictRle),
        ] {
            let values: Vec<&str> = owned.iter().map(String::as_str).collect();
            let choice = choose_strings(&values, None);
            assert_eq!(choice.codec, expected, "{:?}", choice.candidates);
        }
        // Hex with a varying header is not a point column: FSST.
        let texts: Vec<String> = hex
            .iter()
            .enumerate()
            .map(|(i, h)| format!("{}{h}", i % 7))
            .collect();
        let values: Vec<&str> = texts.iter().map(String::as_str).collect();
        let choice = choose_strings(&values, None);
        assert_eq!(choice.codec, CodecKind::Fsst, "{:?}", choice.candidates);
        let f = Fsst::encode(&values, None).unwrap();
        let estimate = choice.bytes;
        assert!(
            estimate.abs_diff(f.heap_bytes()) <= f.heap_bytes() / 5,
            "{estimate} vs {}",
            f.heap_bytes()
        );
        // Mostly empty strings (ClickBench's SearchPhrase): a sample of
        // few bytes is not charged a whole symbol table, so FSST still
        // wins over packing.
        let words = [
            "airport", "berlin", "cheap", "flights", "hotel", "london", "map", "paris",
            "rent", "sale", "taxi", "train", "weather", "what", "where", "who",
        ];
        let phrases: Vec<String> = (0..n)
            .map(|_| {
                if rng.gen_bool(0.85) {
                    String::new()
                } else {
                    let mut w = || words[rng.gen_range(0..words.len())];
                    format!("{} {} {}", w(), w(), w())
                }
            })
            .collect();
        let values: Vec<&str> = phrases.iter().map(String::as_str).collect();
        let choice = choose_strings(&values, None);
        assert_eq!(choice.codec, CodecKind::Fsst, "{:?}", choice.candidates);
    }

    #[test]
    fn hashed_bits_bound_the_distinct_count_from_below() {
        let mut rng = ChaCha8Rng::seed_from_u64(16);
        let n = 65_536;
        let random: Vec<i64> = (0..n).map(|_| rng.r#gen()).collect();
        let seconds: Vec<i64> = (0..n)
            .map(|_| 1_400_000_000_000_000 + rng.gen_range(0..31_536_000i64) * 1_000_000)
            .collect();
        let pool: Vec<i64> = (0..3000).map(|_| rng.r#gen()).collect();
        let few: Vec<i64> = (0..n).map(|_| pool[rng.gen_range(0..3000)]).collect();
        let extremes: Vec<i64> = (0..n)
            .map(|_| [i64::MIN, i64::MAX, 0, -1][rng.gen_range(0..4)])
            .collect();
        let halves = Bitmap::from_fn(n, |_| rng.gen_bool(0.5));
        for values in [&random, &seconds, &few, &extremes] {
            for validity in [None, Some(&halves)] {
                let valid: hashbrown::HashSet<i64> = (0..n)
                    .filter(|&i| validity.is_none_or(|v| v.get(i)))
                    .map(|i| values[i])
                    .collect();
                for cap in [0, 3, 256, 4000, 43_194, 65_536] {
                    let bits = hashed_bits_set(values, validity, cap);
                    assert!(bits <= valid.len(), "{bits} > {}", valid.len());
                }
            }
        }
        // Mostly distinct values are ruled out at the bound the chooser
        // uses for u16 codes under u64 offsets.
        let cap = (8 * n * 10 / 11 - 2 * n) / 8;
        assert!(hashed_bits_set(&random, None, cap) > cap);
        assert!(hashed_bits_set(&seconds, None, cap) > cap);
        assert!(hashed_bits_set(&few, None, cap) <= 3000);
        assert_eq!(hashed_bits_set(&[], None, cap), 0);
        assert_eq!(choose_ints(&random, None).codec, CodecKind::Offset);
        assert_eq!(choose_ints(&few, None).codec, CodecKind::IntDict);
    }

    #[test]
    fn samples_cover_the_partition_evenly() {
        assert_eq!(sample_ranges(100), vec![0..100]);
        let r = sample_ranges(65_536);
        assert_eq!(r.len(), SAMPLE_RUNS);
        assert_eq!(r[0], 0..64);
        assert_eq!(r[SAMPLE_RUNS - 1].end, 65_536);
        assert!(r.windows(2).all(|w| w[0].end <= w[1].start));
    }
}
