//! One column of one partition: its codec, validity and zone map.

use std::sync::{Arc, OnceLock};

use hashbrown::HashMap;

use super::alp::Alp;
use super::single::Single;
use super::bitmap::Bitmap;
use super::codes::{Code, Codes};
use super::delta::Delta;
use super::fsst::Fsst;
use super::hexpoint::HexPoints;
use super::linear::Linear;
use super::rle::Rle;
use super::stats::{ExactDivisor, FloatStats, IntStats, float_stats, int_stats};
use crate::types::{DataType, Value};

/// A sorted set of distinct strings; a dictionary code is an index into it.
///
/// # Invariants
/// `values` is strictly increasing by bytes, so comparing codes compares the
/// strings: the codec is order-preserving, which is what lets `<`, `>=` and
/// `BETWEEN` run on codes.
#[derive(Debug, Clone)]
pub struct Dictionary {
    values: Vec<Arc<str>>,
    /// A 128-bit hash of every entry, made by the first
    /// [`Dictionary::hashes`] call and kept.
    hashes: OnceLock<Box<[u128]>>,
}

impl PartialEq for Dictionary {
    fn eq(&self, other: &Dictionary) -> bool {
        self.values == other.values
    }
}

impl Dictionary {
    /// Builds a dictionary from distinct strings in any order.
    pub fn from_distinct(mut values: Vec<Arc<str>>) -> Dictionary {
        values.sort_unstable_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
        values.dedup();
        Dictionary {
            values,
            hashes: OnceLock::new(),
        }
    }

    /// `hash(entry)` of every entry, in code order: computed by the first
    /// call and kept (16 bytes an entry, counted by
    /// [`Dictionary::heap_bytes`] from then on), so every caller must pass
    /// the same function. For a table-wide dictionary read a row at a time,
    /// where hashing each row's entry meant a cache miss per row into the
    /// entries' scattered strings (perf of shapes distinct_per_group,
    /// `count(DISTINCT s100k)`: 1.4× its time with FSST).
    pub fn hashes(&self, hash: fn(&str) -> u128) -> &[u128] {
        self.hashes
            .get_or_init(|| self.values.iter().map(|s| hash(s)).collect())
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// The string with code `code`.
    pub fn get(&self, code: usize) -> &Arc<str> {
        &self.values[code]
    }

    /// All entries in code order.
    pub fn values(&self) -> &[Arc<str>] {
        &self.values
    }

    /// The code of `s`, if present.
    pub fn code_of(&self, s: &str) -> Option<u64> {
        self.values
            .binary_search_by(|v| v.as_bytes().cmp(s.as_bytes()))
            .ok()
            .map(|i| i as u64)
    }

    /// Number of entries strictly less than `s` by bytes: the code `s` would
    /// get if inserted. `code < lower_bound(s)` is exactly `string < s`.
    pub fn lower_bound(&self, s: &str) -> u64 {
        self.values.partition_point(|v| v.as_bytes() < s.as_bytes()) as u64
    }

    /// Number of entries `<= s` by bytes. `code < upper_bound(s)` is exactly
    /// `string <= s`.
    pub fn upper_bound(&self, s: &str) -> u64 {
        self.values
            .partition_point(|v| v.as_bytes() <= s.as_bytes()) as u64
    }

    /// Heap bytes held (string bytes plus one pointer-and-length per entry).
    pub fn heap_bytes(&self) -> usize {
        self.values.iter().map(|s| s.len() + 16).sum::<usize>()
            + self.values.len() * 16
            + self.hashes.get().map_or(0, |h| h.len() * 16)
    }
}

/// `dict`'s heap bytes over the number of columns holding it.
fn dictionary_share(dict: &Arc<Dictionary>) -> usize {
    dict.heap_bytes() / Arc::strong_count(dict)
}

/// Strings stored back to back, for high-cardinality text where a dictionary
/// would not be smaller.
///
/// # Invariants
/// `offsets` has `len + 1` entries, non-decreasing, the last equal to
/// `text.len()`, each at a character boundary; row `i` is
/// `text[offsets[i]..offsets[i + 1]]`. Keeping the text as one `String`
/// makes reading a row a slice (two boundary checks), not a UTF-8
/// validation.
#[derive(Debug, Clone, PartialEq)]
pub struct PackedStrings {
    offsets: Codes,
    text: String,
}

impl PackedStrings {
    /// Packs the strings in order.
    pub fn new<'a>(values: impl Iterator<Item = &'a str>) -> PackedStrings {
        let mut text = String::new();
        let mut offsets = vec![0u64];
        for s in values {
            text.push_str(s);
            offsets.push(text.len() as u64);
        }
        // The table keeps this text; drop the doubling's slack.
        text.shrink_to_fit();
        let max = text.len() as u64;
        PackedStrings {
            offsets: Codes::pack(offsets.into_iter(), max),
            text,
        }
    }

    /// Number of strings.
    pub fn len(&self) -> usize {
        self.offsets.len() - 1
    }

    /// True when there are no strings.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// String `i`.
    #[inline]
    pub fn get(&self, i: usize) -> &str {
        let (a, b) = (
            self.offsets.get(i) as usize,
            self.offsets.get(i + 1) as usize,
        );
        self.text.get(a..b).unwrap_or_default()
    }

    /// Heap bytes held.
    pub fn heap_bytes(&self) -> usize {
        self.text.len() + self.offsets.heap_bytes()
    }

    /// The bytes of string `i`.
    #[inline]
    pub fn bytes_of(&self, i: usize) -> &[u8] {
        &self.text.as_bytes()[self.offsets.get(i) as usize..self.offsets.get(i + 1) as usize]
    }

    /// The rows among `sel` (all rows when `None`) whose string's length in
    /// bytes satisfies `pred` (offsets only, no text read).
    pub fn select_by_len(&self, sel: Option<&[u32]>, pred: impl Fn(usize) -> bool) -> Vec<u32> {
        crate::store::with_codes!(&self.offsets, o => {
            let len = |i: usize| o[i + 1].to_usize() - o[i].to_usize();
            match sel {
                None => crate::kernel::select_where(&o[1..], None, |_| true)
                    .into_iter()
                    .filter(|&i| pred(len(i as usize)))
                    .collect(),
                Some(sel) => sel.iter().copied().filter(|&i| pred(len(i as usize))).collect(),
            }
        })
    }

    /// The rows among `sel` (all rows when `None`) whose string satisfies
    /// `pred`, in order; reads offsets and text in place.
    pub fn select(&self, sel: Option<&[u32]>, pred: impl Fn(&str) -> bool) -> Vec<u32> {
        crate::store::with_codes!(&self.offsets, o => {
            let text = self.text.as_str();
            let at = |i: usize| text.get(o[i].to_usize()..o[i + 1].to_usize()).unwrap_or_default();
            match sel {
                None => (0..self.len() as u32).filter(|&i| pred(at(i as usize))).collect(),
                Some(sel) => sel.iter().copied().filter(|&i| pred(at(i as usize))).collect(),
            }
        })
    }
}

/// How a column's values are laid out in one partition (the codec).
#[derive(Debug, Clone, PartialEq)]
pub enum ColumnData {
    /// Every non-NULL row holds this value (NULL when every row is NULL).
    Const(Value),
    /// Integer or timestamp: row `i` is `base + codes[i] * scale` (wrapping
    /// arithmetic on i64, so the full i64 range fits in u64 codes). `scale`
    /// is the greatest common divisor of the offsets from the minimum, so
    /// whole-second timestamps (microseconds) pack a day into 17 bits.
    /// Order-preserving and sum-preserving:
    /// `sum = count * base + scale * sum(codes)`.
    Offset {
        /// The partition minimum.
        base: i64,
        /// The stride between representable values (at least 1).
        scale: u64,
        /// Offsets from `base`, in units of `scale`.
        codes: Codes,
    },
    /// Integers or timestamps with few distinct values over a wide range:
    /// row `i` is `values[codes[i]]`, codes u8 or u16 (0 at NULL rows).
    /// `values` holds the partition's distinct values, ascending, so codes
    /// keep the values' order as [`Dictionary`] codes do, and a comparison
    /// with a constant is a code range. Census tract ids (seven digits,
    /// about 2,000 per partition) take u16 codes where offsets need u32.
    IntDict {
        /// The partition's distinct values, ascending (at most 65,536).
        values: Arc<[i64]>,
        /// One code per row.
        codes: Codes,
    },
    /// Floats, one f64 per row.
    Float(Arc<Vec<f64>>),
    /// Dictionary-encoded strings: row `i` is `dict[codes[i]]`; codes are u8
    /// or u16, or u32 into a table-wide dictionary (see
    /// [`super::table_dictionaries`], which shares one `dict` among every
    /// partition, each using some of its entries). Order-preserving (see
    /// [`Dictionary`]).
    Dict {
        /// The partition's distinct strings (or the table's), sorted.
        dict: Arc<Dictionary>,
        /// One code per row.
        codes: Codes,
    },
    /// Strings stored back to back.
    Packed(PackedStrings),
    /// Integers or timestamps on a line `base + step·row` plus residuals
    /// (row numbers cost nothing). See [`Linear`].
    Linear(Linear),
    /// Nearly sorted integers or timestamps as deltas from the previous row
    /// with an anchor every 128 rows. See [`Delta`].
    Delta(Box<Delta>),
    /// Integers or timestamps in long runs: run values and ends. See
    /// [`Rle`]; NULL rows continue the current run.
    Runs(Rle<i64>),
    /// Decimal floats as ALP digits plus exceptions. Order-preserving on
    /// the codes of non-exception rows, and digit sums are exact decimal
    /// sums. See [`Alp`].
    Alp(Arc<Alp>),
    /// Floats in long runs (run values compared bit for bit). See [`Rle`].
    FloatRuns(Rle<f64>),
    /// Floats that are single-precision values (real coordinates) as
    /// order-preserving codes: a front dictionary index and the tail bits
    /// of the f32, plus exceptions. See [`Single`].
    Single(Arc<Single>),
    /// Dictionary-encoded strings whose codes come in long runs: run `k`
    /// holds code `runs.values()[k]` (an index into `dict`).
    DictRuns {
        /// The partition's distinct strings, sorted.
        dict: Arc<Dictionary>,
        /// The codes, run-length encoded.
        runs: Rle<i64>,
    },
    /// High-cardinality strings compressed with a per-partition FSST
    /// symbol table. See [`Fsst`].
    Fsst(Box<Fsst>),
    /// Hex EWKB points stored as two coordinate columns. See [`HexPoints`].
    HexPoints(Box<HexPoints>),
}

/// Minimum and maximum of a column in a partition, for skipping partitions.
#[derive(Debug, Clone, PartialEq)]
pub struct ZoneMap {
    /// Smallest non-NULL value, NULL if there is none.
    pub min: Value,
    /// Largest non-NULL value (NaN counts as largest), NULL if there is none.
    pub max: Value,
    /// Number of NULL rows.
    pub null_count: usize,
    /// True when there are no NULLs and values never decrease from row to
    /// row: what lets a lookup binary-search instead of scan.
    pub sorted: bool,
}

impl ZoneMap {
    /// `max - min` of an integer or timestamp zone map, as u64 (wrapping,
    /// so the full i64 range fits); `None` for other types or no values.
    pub fn int_span(&self) -> Option<u64> {
        match (&self.min, &self.max) {
            (Value::Int(a) | Value::Timestamp(a) | Value::Date(a) | Value::Interval(a), Value::Int(b) | Value::Timestamp(b) | Value::Date(b) | Value::Interval(b)) => {
                Some((*b as u64).wrapping_sub(*a as u64))
            }
            _ => None,
        }
    }
}

/// One column of one partition.
///
/// # Invariants
/// `validity` is `Some` only when at least one row is NULL; a set bit means
/// the row is valid. The codec holds some arbitrary value at NULL rows.
#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    /// The logical type (same in every partition of a table).
    pub dtype: DataType,
    /// Row count.
    pub len: usize,
    /// The codec and its data.
    pub data: ColumnData,
    /// Non-NULL mask, present only if the partition has a NULL.
    pub validity: Option<Bitmap>,
    /// Min/max, null count and sortedness.
    pub zone: ZoneMap,
}

/// Offset codes `(v - base) / scale` of `values` in the narrowest width
/// that holds `max_code`, 0 at NULL rows; `scale` divides every valid
/// value's offset (1 or more). A validity word is read once per 64 rows
/// and masks each code, so no row branches.
fn offset_codes(
    values: &[i64],
    validity: Option<&Bitmap>,
    base: i64,
    scale: u64,
    max_code: u64,
) -> Codes {
    fn fill<T: Code>(
        values: &[i64],
        validity: Option<&Bitmap>,
        code: impl Fn(i64) -> u64,
    ) -> Vec<T> {
        let mut out = Vec::with_capacity(values.len());
        match validity {
            None => out.extend(values.iter().map(|&v| T::from_u64(code(v)))),
            Some(valid) => {
                for (w, block) in values.chunks(64).enumerate() {
                    let mut bits = valid.word(w);
                    out.extend(block.iter().map(|&v| {
                        let keep = (bits & 1).wrapping_neg();
                        bits >>= 1;
                        T::from_u64(code(v) & keep)
                    }));
                }
            }
        }
        out
    }
    fn pack(
        values: &[i64],
        validity: Option<&Bitmap>,
        max_code: u64,
        code: impl Fn(i64) -> u64,
    ) -> Codes {
        if max_code <= u8::MAX_U64 {
            Codes::U8(fill(values, validity, code))
        } else if max_code <= u16::MAX_U64 {
            Codes::U16(fill(values, validity, code))
        } else if max_code <= u32::MAX_U64 {
            Codes::U32(fill(values, validity, code))
        } else {
            Codes::U64(fill(values, validity, code))
        }
    }
    let offset = move |v: i64| (v as u64).wrapping_sub(base as u64);
    if scale <= 1 {
        pack(values, validity, max_code, offset)
    } else {
        let divisor = ExactDivisor::new(scale);
        pack(values, validity, max_code, move |v| divisor.div_exact(offset(v)))
    }
}

/// The indices of `strings` in ascending byte order (ties in input order).
///
/// Each string is keyed by its first 16 bytes, zero padded, as a
/// big-endian u128, and the keys are sorted first: one integer comparison
/// instead of a `memcmp` call, the sort's cost for the short strings of
/// most dictionaries (perf of registering a Polars frame with a column of
/// 5,000 names: sorting each partition's dictionary through `memcmp` was a
/// tenth of that column's time). Strings are compared in full only when
/// their keys are equal. A smaller key never belongs to a larger string:
/// the first differing byte within 16 decides both orders, and where one
/// string ends inside the 16 bytes its padding is 0, not above the other's
/// byte there, so the shorter (a prefix, smaller by bytes) never gets a
/// larger key.
pub(crate) fn byte_order(strings: &[&str]) -> Vec<u32> {
    let key = |s: &str| {
        let bytes = s.as_bytes();
        let mut buf = [0u8; 16];
        let n = bytes.len().min(16);
        buf[..n].copy_from_slice(&bytes[..n]);
        u128::from_be_bytes(buf)
    };
    let mut keyed: Vec<(u128, u32)> = strings
        .iter()
        .enumerate()
        .map(|(i, s)| (key(s), i as u32))
        .collect();
    keyed.sort_unstable_by(|a, b| {
        a.0.cmp(&b.0).then_with(|| {
            strings[a.1 as usize]
                .as_bytes()
                .cmp(strings[b.1 as usize].as_bytes())
                .then(a.1.cmp(&b.1))
        })
    });
    keyed.into_iter().map(|(_, i)| i).collect()
}

/// Greatest common divisor (Euclid); `gcd(0, x) == x`.
pub(crate) fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// Strings with at most this many distinct values in a partition may be
/// dictionary-encoded (codes fit in u16).
pub const MAX_DICTIONARY_LEN: usize = 1 << 16;

/// Valid rows a string encoder reads before it judges, from them alone,
/// whether a dictionary can pay (see [`dictionary_unlikely`]).
pub const DICTIONARY_PROBE_ROWS: usize = 4096;

/// The distinct values expected among `rows` rows, projected from a sample
/// of `seen` rows (the first ones) that held `distinct` distinct values;
/// at most `rows`.
///
/// # Algorithm
/// Rows are taken as uniform draws: `n` draws from `D` values show
/// `D·(1 − e^(−n/D))` distinct ones in expectation. That is solved for `D`
/// by bisection (`D` infinite when no value repeated), and the partition's
/// count is the same expectation at `rows` draws. Skewed values repeat
/// sooner than uniform ones, so skew lowers the estimate. Used by the
/// string encoders ([`dictionary_unlikely`]) and by the group-by's choice
/// to skip grouping a nearly unique key.
pub fn projected_distinct(seen: usize, distinct: usize, rows: usize) -> f64 {
    if seen == 0 || distinct >= seen {
        return rows as f64;
    }
    let draws = |d: f64, n: f64| d * -(-n / d).exp_m1();
    let (n, k) = (seen as f64, distinct.max(1) as f64);
    // draws(D, n) increases with D from ~1 toward n.
    let (mut lo, mut hi) = (k, k);
    while draws(hi, n) < k && hi < 1e15 {
        lo = hi;
        hi *= 2.0;
    }
    for _ in 0..60 {
        let mid = 0.5 * (lo + hi);
        if draws(mid, n) < k {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    draws(hi, rows as f64).min(rows as f64)
}

/// Whether a partition's strings are estimated to make a dictionary at
/// least a quarter larger than packing them, judged from the first
/// [`DICTIONARY_PROBE_ROWS`] valid rows: they held `distinct` distinct
/// strings of `bytes` bytes in all; the partition has `rows` rows. Partitions
/// shorter than two probes are never judged early (`false`).
///
/// The partition's distinct count comes from [`projected_distinct`]; the
/// dictionary's size (`Σ (len + 32)` per entry plus one code per row) is
/// compared with the packed size at the sample's average length. Encoders
/// that find the dictionary unlikely pack the column without hashing the
/// rest of it (nearly unique texts such as ids and WKB points); the others
/// decide exactly once every row is in.
pub fn dictionary_unlikely(distinct: usize, bytes: usize, rows: usize) -> bool {
    let n = DICTIONARY_PROBE_ROWS;
    if rows < 2 * n || distinct == 0 || distinct > n {
        return false;
    }
    let projected = projected_distinct(n, distinct, rows);
    if projected > MAX_DICTIONARY_LEN as f64 {
        return true;
    }
    let average = bytes as f64 / n as f64;
    let code_bytes = if projected <= 256.0 { 1.0 } else { 2.0 };
    let dictionary = projected * (average + 32.0) + code_bytes * rows as f64;
    let packed = packed_size((average * rows as f64) as usize, rows) as f64;
    dictionary >= 1.25 * packed
}

/// [`dictionary_unlikely`] on the first [`DICTIONARY_PROBE_ROWS`] valid
/// rows of `distinct[ids[i]]`, as [`Column::encode_strings_plain`] judges
/// them while it hashes.
fn probe_finds_dictionary_unlikely(
    distinct: &[&str],
    ids: &[u32],
    valid: impl Fn(usize) -> bool,
) -> bool {
    if ids.len() < 2 * DICTIONARY_PROBE_ROWS {
        return false;
    }
    let mut first_seen = Bitmap::new(distinct.len(), false);
    let (mut seen, mut bytes, mut count) = (0, 0, 0);
    for (i, &id) in ids.iter().enumerate() {
        if seen == DICTIONARY_PROBE_ROWS {
            break;
        }
        if !valid(i) {
            continue;
        }
        seen += 1;
        let id = id as usize;
        bytes += distinct.get(id).map_or(0, |s| s.len());
        if id < first_seen.len() && !first_seen.get(id) {
            first_seen.set(id, true);
            count += 1;
        }
    }
    seen == DICTIONARY_PROBE_ROWS && dictionary_unlikely(count, bytes, ids.len())
}

/// Bytes of `len` strings of `total_bytes` bytes packed back to back: the
/// bytes plus `len + 1` offsets of 2, 4 or 8 bytes.
fn packed_size(total_bytes: usize, len: usize) -> usize {
    let offset_bytes = if total_bytes <= u16::MAX as usize {
        2
    } else if total_bytes <= u32::MAX as usize {
        4
    } else {
        8
    };
    total_bytes + offset_bytes * (len + 1)
}

/// `validity` when some row is NULL, packed: encoders read it row by row
/// (a column's validity may already be sparse when it is encoded again;
/// [`super::share_repeated`] compacts it afterwards).
fn normalize_validity(validity: Option<Bitmap>) -> Option<Bitmap> {
    validity
        .filter(|v| v.count_ones() < v.len())
        .map(|v| v.dense().into_owned())
}

/// The zone map of the strings `distinct[ids[i]]`, taken as
/// [`Column::encode_string_ids_plain`] takes them (every entry of
/// `distinct` the value of a valid row), without sorting `distinct`.
pub(crate) fn string_ids_zone(distinct: &[&str], ids: &[u32], validity: Option<&Bitmap>) -> ZoneMap {
    let validity = validity.filter(|v| v.count_ones() < v.len());
    let min = distinct.iter().min_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
    let max = distinct.iter().max_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
    let sorted = validity.is_none()
        && ids
            .windows(2)
            .all(|w| w[0] == w[1] || distinct[w[1] as usize] >= distinct[w[0] as usize]);
    ZoneMap {
        min: min.map_or(Value::Null, |s| Value::str(s)),
        max: max.map_or(Value::Null, |s| Value::str(s)),
        null_count: validity.map_or(0, |v| v.len() - v.count_ones()),
        sorted,
    }
}

impl Column {
    /// A column of `len` NULLs.
    pub fn all_null(dtype: DataType, len: usize) -> Column {
        Column {
            dtype,
            len,
            data: ColumnData::Const(Value::Null),
            validity: (len > 0).then(|| Bitmap::new(len, false)),
            zone: ZoneMap {
                min: Value::Null,
                max: Value::Null,
                null_count: len,
                sorted: len == 0,
            },
        }
    }

    /// `len` rows of `value` (of type `dtype`, not NULL), NULL where
    /// `validity` has an unset bit (every row valid when `None`).
    pub fn constant(dtype: DataType, value: Value, len: usize, validity: Option<Bitmap>) -> Column {
        let validity = normalize_validity(validity);
        let null_count = validity.as_ref().map_or(0, |v| len - v.count_ones());
        if null_count == len {
            return Column::all_null(dtype, len);
        }
        Column {
            dtype,
            len,
            data: ColumnData::Const(value.clone()),
            validity,
            zone: ZoneMap {
                min: value.clone(),
                max: value,
                null_count,
                sorted: null_count == 0,
            },
        }
    }

    /// Strings as `codes` into `values`, which are distinct, ascending by
    /// bytes and each the value of at least one valid row (the codes at
    /// NULL rows, unset bits of `validity`, are any valid code): a
    /// dictionary column, or a constant for one value.
    ///
    /// # Panics
    /// If `values` is empty or a code is not below its length.
    pub fn from_sorted_dictionary(
        values: Vec<Arc<str>>,
        codes: Codes,
        validity: Option<Bitmap>,
    ) -> Column {
        let len = codes.len();
        let validity = normalize_validity(validity);
        let min = Value::Str(values[0].clone());
        let max = Value::Str(values[values.len() - 1].clone());
        if values.len() == 1 {
            return Column::constant(DataType::Str, min, len, validity);
        }
        let null_count = validity.as_ref().map_or(0, |v| len - v.count_ones());
        let mut sorted = null_count == 0;
        if sorted {
            super::with_codes!(&codes, c => {
                sorted = c.windows(2).all(|w| w[0] <= w[1]);
            });
        }
        Column {
            dtype: DataType::Str,
            len,
            data: ColumnData::Dict {
                dict: Arc::new(Dictionary {
                    values,
                    hashes: OnceLock::new(),
                }),
                codes,
            },
            validity,
            zone: ZoneMap {
                min,
                max,
                null_count,
                sorted,
            },
        }
    }

    /// Encodes integers (`dtype` Int) or timestamps (`dtype` Timestamp, in
    /// microseconds) as offsets from the partition minimum in the narrowest
    /// width, or as a constant. Values at NULL rows are ignored.
    ///
    /// The plain codec of integers: what [`Column::encode_ints`] falls back
    /// to and measures the compressed codecs against.
    pub fn encode_ints_plain(dtype: DataType, values: &[i64], validity: Option<Bitmap>) -> Column {
        debug_assert!(matches!(dtype, DataType::Int | DataType::Timestamp | DataType::Date | DataType::Interval));
        let validity = normalize_validity(validity);
        match int_stats(values, validity.as_ref()) {
            Some(stats) => Column::offsets_with(dtype, values, validity, &stats),
            None => Column::all_null(dtype, values.len()),
        }
    }

    /// [`Column::encode_ints_plain`] given the statistics of `values` (at
    /// least one row valid). The codes are written without a branch per
    /// row: 0 at NULL rows by a mask, and divided by the common factor
    /// with [`ExactDivisor`] (a multiplication) when it is not 1.
    pub(super) fn offsets_with(
        dtype: DataType,
        values: &[i64],
        validity: Option<Bitmap>,
        stats: &IntStats,
    ) -> Column {
        let validity = normalize_validity(validity);
        let zone = stats.zone(dtype);
        let (min, max, scale) = (stats.min, stats.max, stats.scale);
        let data = if min == max {
            ColumnData::Const(zone.min.clone())
        } else {
            let range = (max as u64).wrapping_sub(min as u64);
            ColumnData::Offset {
                base: min,
                scale,
                codes: offset_codes(values, validity.as_ref(), min, scale, range / scale),
            }
        };
        Column {
            dtype,
            len: values.len(),
            data,
            validity,
            zone,
        }
    }

    /// Encodes floats as f64, or as a constant. Values at NULL rows are
    /// ignored. The plain codec of floats (see [`Column::encode_floats`]).
    pub fn encode_floats_plain(values: Vec<f64>, validity: Option<Bitmap>) -> Column {
        let validity = normalize_validity(validity);
        match float_stats(&values, validity.as_ref()) {
            Some(stats) => Column::floats_with(values, validity, &stats),
            None => Column::all_null(DataType::Float, values.len()),
        }
    }

    /// [`Column::encode_floats_plain`] given the statistics of `values` (at
    /// least one row valid).
    pub(super) fn floats_with(
        values: Vec<f64>,
        validity: Option<Bitmap>,
        stats: &FloatStats,
    ) -> Column {
        let validity = normalize_validity(validity);
        let len = values.len();
        let data = if stats.min.to_bits() == stats.max.to_bits() {
            ColumnData::Const(Value::Float(stats.min))
        } else {
            ColumnData::Float(Arc::new(values))
        };
        Column {
            dtype: DataType::Float,
            len,
            data,
            validity,
            zone: stats.zone(),
        }
    }

    /// Encodes strings: as a constant when all equal, dictionary-encoded with
    /// u8/u16 codes when that is smaller, else packed. Values at NULL rows are
    /// ignored. The plain codecs of strings (see [`Column::encode_strings`]).
    ///
    /// The dictionary is chosen when it has at most [`MAX_DICTIONARY_LEN`]
    /// entries and `Σ (len + 32)` over its entries plus one code per row is
    /// less than the packed size (the bytes plus one 2-, 4- or 8-byte offset
    /// per row and one more).
    ///
    /// # Algorithm
    /// One pass hashes each valid value once, giving it an id in order of
    /// first appearance; it stops early (and the column is packed) as soon
    /// as the distinct values seen so far make a dictionary at least as
    /// large as packing, or when the first [`DICTIONARY_PROBE_ROWS`] valid
    /// rows make one unlikely to pay ([`dictionary_unlikely`]; then the
    /// packed layout is chosen without the exact count). Otherwise the ids
    /// are encoded as [`Column::encode_string_ids_plain`] does, which judges
    /// the same probe the same way (here it is not judged twice).
    pub fn encode_strings_plain(values: &[&str], validity: Option<Bitmap>) -> Column {
        let validity = normalize_validity(validity);
        let len = values.len();
        let valid = |i: usize| validity.as_ref().is_none_or(|v| v.get(i));
        let total_bytes: usize = values
            .iter()
            .enumerate()
            .filter(|&(i, _)| valid(i))
            .map(|(_, s)| s.len())
            .sum();
        let packed_bytes = packed_size(total_bytes, len);

        let mut index: HashMap<&str, u32> = HashMap::new();
        let mut distinct: Vec<&str> = Vec::new();
        let mut ids: Vec<u32> = Vec::with_capacity(len);
        let mut dict_bytes = 0usize;
        let (mut seen, mut seen_bytes) = (0usize, 0usize);
        for (i, &s) in values.iter().enumerate() {
            if !valid(i) {
                ids.push(0);
                continue;
            }
            seen += 1;
            seen_bytes += s.len();
            let next = distinct.len() as u32;
            let id = *index.entry(s).or_insert_with(|| {
                distinct.push(s);
                dict_bytes += s.len() + 32;
                next
            });
            ids.push(id);
            if id == next
                && distinct.len() >= 2
                && (distinct.len() > MAX_DICTIONARY_LEN || dict_bytes + len >= packed_bytes)
            {
                // Even with one-byte codes the dictionary cannot be smaller.
                return Self::packed_column(values, validity);
            }
            if seen == DICTIONARY_PROBE_ROWS && dictionary_unlikely(distinct.len(), seen_bytes, len)
            {
                return Self::packed_column(values, validity);
            }
        }
        drop(index);
        Self::string_ids_plain(&distinct, &ids, validity, true, None)
    }

    /// Encodes the strings `distinct[ids[i]]` exactly as
    /// [`Column::encode_strings_plain`] would: `distinct` holds distinct strings
    /// in any order, each the value of at least one valid row; `ids` has one
    /// entry per row (any id below `distinct.len()` at NULL rows).
    ///
    /// # Algorithm
    /// The codec follows from the counts alone. For a dictionary the
    /// distinct values are sorted once and a permutation table maps ids to
    /// sorted codes, so no string is looked up per row.
    ///
    /// # Panics
    /// If an id is not below `distinct.len()`.
    pub fn encode_string_ids_plain(
        distinct: &[&str],
        ids: &[u32],
        validity: Option<Bitmap>,
    ) -> Column {
        Self::string_ids_plain(distinct, ids, validity, false, None)
    }

    /// [`Column::encode_string_ids_plain`], taking `reuse` as the column's
    /// dictionary when it holds exactly the sorted distinct strings (one
    /// comparison per entry), instead of allocating each entry again: the
    /// partitions of an imported column mostly hold the same names, and
    /// 5,000 names allocated per partition, then freed again when
    /// [`super::share_dictionaries`] makes them one copy, were a fifth of
    /// registering such a column (perf). The column is the same either
    /// way; only the dictionary's allocation is shared.
    pub fn encode_string_ids_plain_reusing(
        distinct: &[&str],
        ids: &[u32],
        validity: Option<Bitmap>,
        reuse: Option<&Arc<Dictionary>>,
    ) -> Column {
        Self::string_ids_plain(distinct, ids, validity, false, reuse)
    }

    /// [`Column::encode_string_ids_plain`]; `probed` when the caller
    /// already found the dictionary likely on the probe's rows
    /// ([`Column::encode_strings_plain`]), so they are not read again.
    fn string_ids_plain(
        distinct: &[&str],
        ids: &[u32],
        validity: Option<Bitmap>,
        probed: bool,
        reuse: Option<&Arc<Dictionary>>,
    ) -> Column {
        let validity = normalize_validity(validity);
        let len = ids.len();
        if distinct.is_empty() {
            return Column::all_null(DataType::Str, len);
        }
        let valid = |i: usize| validity.as_ref().is_none_or(|v| v.get(i));
        let null_count = validity.as_ref().map_or(0, |v| len - v.count_ones());
        let total_bytes: usize = ids
            .iter()
            .enumerate()
            .filter(|&(i, _)| valid(i))
            .map(|(_, &id)| distinct[id as usize].len())
            .sum();
        let dict_len = distinct.len();
        let dict_bytes: usize = distinct.iter().map(|s| s.len() + 32).sum();
        let code_bytes = if dict_len <= 256 { 1 } else { 2 };
        let dictionary = dict_len == 1
            || (dict_len <= MAX_DICTIONARY_LEN
                && dict_bytes + code_bytes * len < packed_size(total_bytes, len)
                && (probed || !probe_finds_dictionary_unlikely(distinct, ids, valid)));
        if !dictionary {
            // No need to sort the values.
            let zone = string_ids_zone(distinct, ids, validity.as_ref());
            return Column {
                dtype: DataType::Str,
                len,
                data: ColumnData::Packed(PackedStrings::new(
                    ids.iter()
                        .enumerate()
                        .map(|(i, &id)| if valid(i) { distinct[id as usize] } else { "" }),
                )),
                validity,
                zone,
            };
        }
        let order = byte_order(distinct);
        // `rank[id]` is the sorted code of `id`.
        let mut rank = vec![0u32; dict_len];
        for (code, &id) in order.iter().enumerate() {
            rank[id as usize] = code as u32;
        }
        let mut sorted = validity.is_none();
        if sorted {
            let mut prev = 0;
            for &id in ids {
                let r = rank[id as usize];
                sorted &= r >= prev;
                prev = r;
            }
        }
        let min = Value::str(distinct[order[0] as usize]);
        let max = Value::str(distinct[order[dict_len - 1] as usize]);
        let data = if dict_len == 1 {
            ColumnData::Const(min.clone())
        } else {
            let codes = if dict_len <= 256 {
                Codes::U8(ids.iter().map(|&id| rank[id as usize] as u8).collect())
            } else {
                Codes::U16(ids.iter().map(|&id| rank[id as usize] as u16).collect())
            };
            let same = |d: &&Arc<Dictionary>| {
                d.values.len() == dict_len
                    && order
                        .iter()
                        .zip(d.values.iter())
                        .all(|(&id, v)| distinct[id as usize] == &**v)
            };
            let dict = match reuse.filter(same) {
                Some(d) => Arc::clone(d),
                None => Arc::new(Dictionary {
                    values: order
                        .iter()
                        .map(|&id| Arc::from(distinct[id as usize]))
                        .collect(),
                    hashes: OnceLock::new(),
                }),
            };
            ColumnData::Dict { codes, dict }
        };
        Column {
            dtype: DataType::Str,
            len,
            data,
            validity,
            zone: ZoneMap {
                min,
                max,
                null_count,
                sorted,
            },
        }
    }

    /// Packs strings (already known to have at least two distinct values
    /// and not to fit a smaller dictionary), with `""` at NULL rows.
    fn packed_column(values: &[&str], validity: Option<Bitmap>) -> Column {
        let len = values.len();
        let valid = |i: usize| validity.as_ref().is_none_or(|v| v.get(i));
        let null_count = validity.as_ref().map_or(0, |v| len - v.count_ones());
        let mut min: Option<&str> = None;
        let mut max: Option<&str> = None;
        let mut sorted = validity.is_none();
        let mut prev: &str = "";
        for (i, &s) in values.iter().enumerate() {
            if valid(i) {
                if min.is_none_or(|m| s.as_bytes() < m.as_bytes()) {
                    min = Some(s);
                }
                if max.is_none_or(|m| s.as_bytes() > m.as_bytes()) {
                    max = Some(s);
                }
                sorted &= s.as_bytes() >= prev.as_bytes();
                prev = s;
            }
        }
        let data = ColumnData::Packed(PackedStrings::new(
            values
                .iter()
                .enumerate()
                .map(|(i, s)| if valid(i) { *s } else { "" }),
        ));
        Column {
            dtype: DataType::Str,
            len,
            data,
            validity,
            zone: ZoneMap {
                min: Value::str(min.unwrap_or_default()),
                max: Value::str(max.unwrap_or_default()),
                null_count,
                sorted,
            },
        }
    }

    /// How many distinct codes the column's codec can hold in this
    /// partition, when each row is one code of a small code space that
    /// maps back to values: 1 for a constant, the entries of a dictionary
    /// (string or integer, plain or in runs), `span / scale + 1` for
    /// offsets. `None` for codecs whose rows are not such codes (floats,
    /// packed or FSST strings, lines, deltas, runs of values, ALP, points).
    /// A join looks each code up once instead of each row when this is
    /// small (`compose::dimension`).
    pub fn code_count(&self) -> Option<u64> {
        match &self.data {
            ColumnData::Const(_) => Some(1),
            ColumnData::Offset { scale, .. } => self
                .zone
                .int_span()
                .map(|span| (span / (*scale).max(1)).saturating_add(1)),
            ColumnData::IntDict { values, .. } => Some(values.len() as u64),
            ColumnData::Dict { dict, .. } | ColumnData::DictRuns { dict, .. } => {
                Some(dict.len() as u64)
            }
            ColumnData::Float(_)
            | ColumnData::Packed(_)
            | ColumnData::Linear(_)
            | ColumnData::Delta(_)
            | ColumnData::Runs(_)
            | ColumnData::Alp(_)
            | ColumnData::FloatRuns(_)
            | ColumnData::Single(_)
            | ColumnData::Fsst(_)
            | ColumnData::HexPoints(_) => None,
        }
    }

    /// The validity in the packed layout (borrowed when it is, else
    /// unpacked; see [`Bitmap::dense`]): what a loop that tests row after
    /// row reads, once per partition. `None` when no row is NULL.
    pub fn packed_validity(&self) -> Option<std::borrow::Cow<'_, Bitmap>> {
        self.validity.as_ref().map(Bitmap::dense)
    }

    /// True when row `i` is not NULL (a binary search when the validity is
    /// sparse: loops take [`Column::packed_validity`] first).
    #[inline]
    pub fn is_valid(&self, i: usize) -> bool {
        self.validity.as_ref().is_none_or(|v| v.get(i))
    }

    /// The decoded value at row `i` (the reference path; kernels never call
    /// this per row).
    pub fn value(&self, i: usize) -> Value {
        if !self.is_valid(i) {
            return Value::Null;
        }
        match &self.data {
            ColumnData::Const(v) => v.clone(),
            ColumnData::Offset { base, scale, codes } => {
                let v = base.wrapping_add(codes.get(i).wrapping_mul(*scale) as i64);
                Value::from_integer(v, self.dtype)
            }
            ColumnData::IntDict { values, codes } => self.int_value(values[codes.get(i) as usize]),
            ColumnData::Float(values) => Value::Float(values[i]),
            ColumnData::Dict { dict, codes } => Value::Str(dict.get(codes.get(i) as usize).clone()),
            ColumnData::Packed(p) => Value::str(p.get(i)),
            ColumnData::Linear(l) => self.int_value(l.get(i)),
            ColumnData::Delta(d) => self.int_value(d.get(i)),
            ColumnData::Runs(r) => self.int_value(r.get(i)),
            ColumnData::Alp(a) => Value::Float(a.get(i)),
            ColumnData::FloatRuns(r) => Value::Float(r.get(i)),
            ColumnData::Single(f) => Value::Float(f.get(i)),
            ColumnData::DictRuns { dict, runs } => {
                Value::Str(dict.get(runs.get(i) as usize).clone())
            }
            ColumnData::Fsst(f) => Value::str(&f.get(i)),
            ColumnData::HexPoints(p) => Value::str(&p.get(i)),
        }
    }

    /// An integer of this column's type as a [`Value`].
    fn int_value(&self, v: i64) -> Value {
        Value::from_integer(v, self.dtype)
    }

    /// Short name of the codec for EXPLAIN and `.schema`, e.g. `offset u8`,
    /// `int dict u16`, `dict u16`, `const`, `f64`, `packed`, `linear`, `delta u8`, `rle`,
    /// `alp u16`, `f32 b19`, `dict+rle`, `fsst`, `hex points alp`, with `+nulls` when a
    /// validity bitmap is present.
    pub fn encoding_name(&self) -> String {
        let base = match &self.data {
            ColumnData::Const(Value::Null) => "null".to_string(),
            ColumnData::Const(_) => "const".to_string(),
            ColumnData::Offset { codes, scale, .. } if *scale > 1 => {
                format!("offset {} ×{scale}", codes.width_name())
            }
            ColumnData::Offset { codes, .. } => format!("offset {}", codes.width_name()),
            ColumnData::IntDict { codes, .. } => format!("int dict {}", codes.width_name()),
            ColumnData::Float(_) => "f64".to_string(),
            ColumnData::Dict { codes, .. } => format!("dict {}", codes.width_name()),
            ColumnData::Packed(_) => "packed".to_string(),
            ColumnData::Linear(l) => match l.residuals() {
                None => "linear".to_string(),
                Some(r) => format!("linear+{}", r.width_name()),
            },
            ColumnData::Delta(d) => format!("delta {}", d.codes().width_name()),
            ColumnData::Runs(_) | ColumnData::FloatRuns(_) => "rle".to_string(),
            ColumnData::Alp(a) => format!("alp {}", a.codes().width_name()),
            ColumnData::Single(f) => format!("f32 {}", f.codes().width_name()),
            ColumnData::DictRuns { .. } => "dict+rle".to_string(),
            ColumnData::Fsst(_) => "fsst".to_string(),
            ColumnData::HexPoints(p) => format!("hex points {}", p.coords_name()),
        };
        if self.validity.is_some() && !matches!(self.data, ColumnData::Const(Value::Null)) {
            base + "+nulls"
        } else {
            base
        }
    }

    /// Heap bytes held by codec and validity. A dictionary or validity
    /// bitmap shared with other columns (see [`super::share_dictionaries`],
    /// [`super::share_repeated`]) counts its share: its bytes over the
    /// number of holders.
    pub fn heap_bytes(&self) -> usize {
        let data = match &self.data {
            ColumnData::Const(_) => 16,
            ColumnData::Offset { codes, .. } => codes.heap_bytes(),
            ColumnData::IntDict { values, codes } => values.len() * 8 + codes.heap_bytes(),
            ColumnData::Float(v) => v.len() * 8,
            ColumnData::Dict { dict, codes } => dictionary_share(dict) + codes.heap_bytes(),
            ColumnData::Packed(p) => p.heap_bytes(),
            ColumnData::Linear(l) => l.heap_bytes(),
            ColumnData::Delta(d) => d.heap_bytes(),
            ColumnData::Runs(r) => r.heap_bytes(),
            ColumnData::Alp(a) => a.heap_bytes(),
            ColumnData::FloatRuns(r) => r.heap_bytes(),
            ColumnData::Single(f) => f.heap_bytes(),
            ColumnData::DictRuns { dict, runs } => dictionary_share(dict) + runs.heap_bytes(),
            ColumnData::Fsst(f) => f.heap_bytes(),
            ColumnData::HexPoints(p) => p.heap_bytes(),
        };
        data + self.validity.as_ref().map_or(0, Bitmap::heap_bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::cmp_f64;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn decode(c: &Column) -> Vec<Value> {
        (0..c.len).map(|i| c.value(i)).collect()
    }

    #[test]
    fn ints_use_offsets_from_minimum_in_narrowest_width() {
        let cases: Vec<(Vec<i64>, &str)> = vec![
            (vec![256, 258, 511], "offset u8"),
            (vec![-199, 4031, 40], "offset u16"),
            (vec![0, 1, 100_001], "offset u32"),
            (vec![i64::MIN, 0, i64::MAX], "offset u64"),
            (vec![7, 7, 7], "const"),
            (vec![1_000_000, 2_000_000, 61_000_000], "offset u8 ×1000000"),
        ];
        for (values, encoding) in cases {
            let c = Column::encode_ints_plain(DataType::Int, &values, None);
            assert_eq!(c.encoding_name(), encoding);
            let expected: Vec<Value> = values.iter().map(|&v| Value::Int(v)).collect();
            assert_eq!(decode(&c), expected);
            assert_eq!(c.zone.min, Value::Int(*values.iter().min().unwrap()));
            assert_eq!(c.zone.max, Value::Int(*values.iter().max().unwrap()));
        }
    }

    #[test]
    fn nulls_get_a_bitmap_only_when_present() {
        let c = Column::encode_ints_plain(
            DataType::Int,
            &[1, 0, 2],
            Some(Bitmap::from_bools(&[true, false, true])),
        );
        assert_eq!(c.encoding_name(), "offset u8+nulls");
        assert_eq!(decode(&c), vec![Value::Int(1), Value::Null, Value::Int(2)]);
        assert_eq!(c.zone.null_count, 1);
        assert!(!c.zone.sorted);
        let c = Column::encode_ints_plain(DataType::Int, &[1, 2], Some(Bitmap::new(2, true)));
        assert!(c.validity.is_none());
        assert!(c.zone.sorted);
        let c = Column::encode_floats_plain(vec![0.0, 0.0], Some(Bitmap::new(2, false)));
        assert_eq!(decode(&c), vec![Value::Null, Value::Null]);
        assert_eq!(c.zone.min, Value::Null);
    }

    #[test]
    fn strings_pick_dictionary_or_packed() {
        let few: Vec<&str> = (0..1000).map(|i| ["aa", "bb", "cc"][i % 3]).collect();
        let c = Column::encode_strings_plain(&few, None);
        assert_eq!(c.encoding_name(), "dict u8");
        assert_eq!(c.value(4), Value::str("bb"));
        let owned: Vec<String> = (0..1000).map(|i| format!("unique-{i}")).collect();
        let many: Vec<&str> = owned.iter().map(String::as_str).collect();
        let c = Column::encode_strings_plain(&many, None);
        assert_eq!(c.encoding_name(), "packed");
        assert_eq!(c.value(999), Value::str("unique-999"));
        assert_eq!(c.zone.min, Value::str("unique-0"));
        let c = Column::encode_strings_plain(&["😈", "😈"], None);
        assert_eq!(c.encoding_name(), "const");
    }

    /// The codec the documented size rule picks, computed naively.
    fn expected_string_codec(values: &[&str], valid: &[bool]) -> &'static str {
        let mut distinct: Vec<&str> = (0..values.len())
            .filter(|&i| valid[i])
            .map(|i| values[i])
            .collect();
        let total: usize = distinct.iter().map(|s| s.len()).sum();
        distinct.sort_unstable();
        distinct.dedup();
        let offset_bytes = if total <= 65535 { 2 } else { 4 };
        let packed = total + offset_bytes * (values.len() + 1);
        let dict: usize = distinct.iter().map(|s| s.len() + 32).sum();
        let code = if distinct.len() <= 256 { 1 } else { 2 };
        match distinct.len() {
            0 => "null",
            1 => "const",
            n if n <= MAX_DICTIONARY_LEN && dict + code * values.len() < packed => {
                if code == 1 {
                    "dict u8"
                } else {
                    "dict u16"
                }
            }
            _ => "packed",
        }
    }

    #[test]
    fn byte_order_sorts_by_bytes() {
        let mut rng = ChaCha8Rng::seed_from_u64(37);
        let alphabet = ["", "a", "b", "\0", "\u{7f}", "é", "zone ", "0123456789abcdef"];
        for _ in 0..300 {
            let n = rng.gen_range(0..60);
            let owned: Vec<String> = (0..n)
                .map(|_| {
                    (0..rng.gen_range(0..5))
                        .map(|_| alphabet[rng.gen_range(0..alphabet.len())])
                        .collect()
                })
                .collect();
            let strings: Vec<&str> = owned.iter().map(String::as_str).collect();
            let mut expected: Vec<u32> = (0..n as u32).collect();
            expected.sort_by(|&a, &b| strings[a as usize].as_bytes().cmp(strings[b as usize].as_bytes()));
            assert_eq!(byte_order(&strings), expected, "{strings:?}");
        }
    }

    #[test]
    fn float_zone_maps_follow_cmp_f64() {
        let specials = [
            0.0,
            -0.0,
            1.5,
            -2.0,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            7.0,
        ];
        let mut state = 0x1234_5678_9abc_def1u64;
        for case in 0..2000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let len = (state % 7) as usize;
            let values: Vec<f64> = (0..len)
                .map(|i| specials[(state >> (3 * i + 8)) as usize % specials.len()])
                .collect();
            let valid: Vec<bool> = (0..len)
                .map(|i| case % 3 != 0 || (state >> (i + 40)) & 1 == 1)
                .collect();
            let c = Column::encode_floats_plain(values.clone(), Some(Bitmap::from_bools(&valid)));
            // The reference: the first of equal values under cmp_f64.
            let present: Vec<f64> = (0..len).filter(|&i| valid[i]).map(|i| values[i]).collect();
            let mut min: Option<f64> = None;
            let mut max: Option<f64> = None;
            for &v in &present {
                if min.is_none_or(|m| cmp_f64(v, m).is_lt()) {
                    min = Some(v);
                }
                if max.is_none_or(|m| cmp_f64(v, m).is_gt()) {
                    max = Some(v);
                }
            }
            let bits = |v: &Value| match v {
                Value::Float(f) => Some(f.to_bits()),
                _ => None,
            };
            assert_eq!(
                bits(&c.zone.min),
                min.map(f64::to_bits),
                "{values:?} {valid:?}"
            );
            assert_eq!(
                bits(&c.zone.max),
                max.map(f64::to_bits),
                "{values:?} {valid:?}"
            );
            let sorted =
                present.len() == len && present.windows(2).all(|w| cmp_f64(w[1], w[0]).is_ge());
            assert_eq!(c.zone.sorted, sorted, "{values:?} {valid:?}");
        }
    }

    #[test]
    fn strings_match_a_naive_encoder() {
        // A small deterministic generator (xorshift) for varied inputs.
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for case in 0..300 {
            let len = (next() % 700) as usize;
            let cardinality = 1 + (next() % [2, 10, 300, 5000][case % 4]) as usize;
            let width = (next() % 40) as usize;
            let null_every = [0, 2, 7][case % 3];
            let owned: Vec<String> = (0..len)
                .map(|_| {
                    let k = next() as usize % cardinality;
                    format!("{k:0width$}")
                })
                .collect();
            let values: Vec<&str> = owned.iter().map(String::as_str).collect();
            let valid: Vec<bool> = (0..len)
                .map(|i| null_every == 0 || i % null_every != 1)
                .collect();
            let c = Column::encode_strings_plain(&values, Some(Bitmap::from_bools(&valid)));
            let name = c.encoding_name();
            let base = name.strip_suffix("+nulls").unwrap_or(&name);
            assert_eq!(base, expected_string_codec(&values, &valid), "case {case}");
            let expected: Vec<Value> = (0..len)
                .map(|i| {
                    if valid[i] {
                        Value::str(values[i])
                    } else {
                        Value::Null
                    }
                })
                .collect();
            assert_eq!(decode(&c), expected, "case {case}");
            let present: Vec<&str> = (0..len).filter(|&i| valid[i]).map(|i| values[i]).collect();
            let min = present.iter().min().map_or(Value::Null, |s| Value::str(s));
            let max = present.iter().max().map_or(Value::Null, |s| Value::str(s));
            assert_eq!((&c.zone.min, &c.zone.max), (&min, &max), "case {case}");
            let sorted = present.len() == len && present.windows(2).all(|w| w[0] <= w[1]);
            assert_eq!(c.zone.sorted, sorted, "case {case}");
            assert_eq!(c.zone.null_count, len - present.len());
        }
    }

    #[test]
    fn string_ids_encode_like_strings() {
        let distinct = ["pear", "apple", "fig", ""];
        let cases: Vec<(Vec<u32>, Vec<bool>)> = vec![
            (
                (0..900).map(|i| [0, 1, 2, 1][i % 4]).collect(),
                vec![true; 900],
            ),
            (
                (0..900).map(|i| [3, 1, 2, 1][i % 4]).collect(),
                vec![true; 900],
            ),
            (vec![1; 50], vec![true; 50]),
            (vec![0, 1, 2], vec![true, true, true]),
            (
                (0..300).map(|i| (i % 3) as u32).collect(),
                (0..300).map(|i| i % 5 != 0).collect(),
            ),
            (vec![1, 1, 2, 2], vec![true; 4]),
        ];
        for (ids, valid) in cases {
            let used: Vec<u32> = {
                let mut u: Vec<u32> = (0..ids.len())
                    .filter(|&i| valid[i])
                    .map(|i| ids[i])
                    .collect();
                u.sort_unstable();
                u.dedup();
                u
            };
            // Only the entries some valid row uses, renumbered.
            let entries: Vec<&str> = used.iter().map(|&id| distinct[id as usize]).collect();
            let renumbered: Vec<u32> = ids
                .iter()
                .map(|id| used.iter().position(|u| u == id).unwrap_or(0) as u32)
                .collect();
            let strings: Vec<&str> = ids.iter().map(|&id| distinct[id as usize]).collect();
            let validity = Some(Bitmap::from_bools(&valid));
            let a = Column::encode_string_ids_plain(&entries, &renumbered, validity.clone());
            let b = Column::encode_strings_plain(&strings, validity);
            assert_eq!(a.encoding_name(), b.encoding_name());
            assert_eq!(decode(&a), decode(&b));
            assert_eq!(a.zone, b.zone);
        }
    }

    #[test]
    fn the_probe_gives_up_on_a_dictionary_only_for_nearly_unique_strings() {
        let n = DICTIONARY_PROBE_ROWS;
        // All distinct, 40 bytes each: packing wins by far.
        assert!(dictionary_unlikely(n, 40 * n, 65_536));
        // Repeats among the first rows: a few hundred distinct values.
        assert!(!dictionary_unlikely(300, 40 * n, 65_536));
        // About 20,000 distinct over the partition, 8 bytes each: the
        // dictionary is larger, but not by a quarter, so the exact count
        // decides.
        assert!(!dictionary_unlikely(3_700, 8 * n, 65_536));
        // Short partitions are never judged early.
        assert!(!dictionary_unlikely(n, 40 * n, 2 * n - 1));
    }

    #[test]
    fn string_ids_encode_like_strings_when_the_probe_decides() {
        // Distinct first rows that repeat later (the probe packs a column
        // a dictionary would have held), nearly unique rows, and repeats
        // from the start; each with NULLs before and within the probe.
        let texts: Vec<String> = (0..3 * DICTIONARY_PROBE_ROWS)
            .map(|i| format!("https://example.com/page/{i:08}"))
            .collect();
        let len = 3 * DICTIONARY_PROBE_ROWS;
        let cases: Vec<Vec<usize>> = vec![
            (0..len).map(|i| i % 5_000).collect(),
            (0..len).map(|i| i - i % 17 / 16).collect(),
            (0..len).map(|i| i * 7 % 401).collect(),
        ];
        for (k, ids) in cases.into_iter().enumerate() {
            let valid: Vec<bool> = (0..len).map(|i| i % 11 != 3 && i != 0).collect();
            let mut entries: Vec<&str> = Vec::new();
            let mut index: HashMap<usize, u32> = HashMap::new();
            let renumbered: Vec<u32> = ids
                .iter()
                .zip(&valid)
                .map(|(&id, &ok)| {
                    if !ok {
                        return 0;
                    }
                    *index.entry(id).or_insert_with(|| {
                        entries.push(&texts[id]);
                        entries.len() as u32 - 1
                    })
                })
                .collect();
            let strings: Vec<&str> = ids.iter().map(|&id| texts[id].as_str()).collect();
            let validity = Some(Bitmap::from_bools(&valid));
            let a = Column::encode_string_ids_plain(&entries, &renumbered, validity.clone());
            let b = Column::encode_strings_plain(&strings, validity);
            let expected = ["packed+nulls", "packed+nulls", "dict u16+nulls"][k];
            assert_eq!(a.encoding_name(), expected, "case {k}");
            assert_eq!(b.encoding_name(), expected, "case {k}");
            assert_eq!(decode(&a), decode(&b));
            assert_eq!(a.zone, b.zone);
        }
    }

    #[test]
    fn strings_beyond_the_dictionary_limit_have_exact_zone_maps() {
        // More distinct values than a dictionary may hold, the smallest and
        // the largest last: the zone map must still see them.
        let mut owned: Vec<String> = (0..MAX_DICTIONARY_LEN + 10)
            .map(|i| format!("m{i:06}"))
            .collect();
        owned.push("a".into());
        owned.push("z".into());
        let values: Vec<&str> = owned.iter().map(String::as_str).collect();
        let c = Column::encode_strings_plain(&values, None);
        assert_eq!(c.encoding_name(), "packed");
        assert_eq!(c.zone.min, Value::str("a"));
        assert_eq!(c.zone.max, Value::str("z"));
        // Few distinct values repeated: a dictionary whose codes follow the
        // sorted order, not the order of appearance.
        let values: Vec<&str> = ["b", "c", "a", "b", "a", "c", "c", "c", "c"].repeat(100);
        let c = Column::encode_strings_plain(&values, None);
        let ColumnData::Dict { dict, codes } = &c.data else {
            panic!("{}", c.encoding_name())
        };
        assert_eq!(
            dict.values().iter().map(|s| &**s).collect::<Vec<_>>(),
            ["a", "b", "c"]
        );
        assert_eq!(
            (0..9).map(|i| codes.get(i)).collect::<Vec<_>>(),
            [1, 2, 0, 1, 0, 2, 2, 2, 2]
        );
    }

    #[test]
    fn dictionary_bounds_follow_byte_order() {
        let d = Dictionary::from_distinct(vec!["b".into(), "d".into(), "B".into()]);
        assert_eq!(d.values().len(), 3);
        assert_eq!(d.code_of("b"), Some(1));
        assert_eq!(d.code_of("c"), None);
        assert_eq!(d.lower_bound("c"), 2);
        assert_eq!(d.lower_bound("d"), 2);
        assert_eq!(d.upper_bound("d"), 3);
        assert_eq!(d.lower_bound("A"), 0);
    }
}
