//! Group keys within a partition: every key becomes a dense code per
//! selected row with a known cardinality, and codes decode back into typed
//! key columns.
//!
//! # Design
//! - An offset-encoded integer key uses its packed codes in place; a
//!   dictionary string key its dictionary codes; a key constant over the
//!   partition has one code. NULL gets a code of its own (0, the others
//!   shifted up by one).
//! - An evaluated key is re-coded: integers in a narrow range (or integral
//!   floats) as offsets from their minimum; anything else through a local
//!   dictionary, a hash table from the typed value (`i64`, float bits, or
//!   string bytes by XXH3) to a dense code, never through [`Value`].
//! - Codes decode into [`Array`]s: dictionary strings stay coded against the
//!   partition's dictionary (borrowed), so the merge hashes each distinct
//!   string once.

use std::borrow::Cow;
use std::sync::Arc;

use hashbrown::HashTable;

use crate::error::Result;
use crate::exec::ExecOptions;
use crate::kernel::hash::{canonical_f64_bits, hash_str, mix64};
use crate::plan::Expr;
use crate::store::with_codes;
use crate::store::{
    Bitmap, Code, Codes, ColumnData, Dictionary, Fsst, Partition, projected_distinct,
};
use crate::types::{DataType, Value};

use crate::exec::vector::{Array, Data, Datum, Rows, Strs, eval};

/// How codes turn back into key values.
pub enum Decoder<'a> {
    /// Every code is this value (of the key's type).
    Const(Value, DataType),
    /// `base + (code - nullable) · scale`; code 0 is NULL when `nullable`.
    Offset {
        /// Smallest value.
        base: i64,
        /// Stride.
        scale: u64,
        /// Int or Timestamp.
        dtype: DataType,
        /// Code 0 is NULL.
        nullable: bool,
    },
    /// An integer dictionary: `values[code - nullable]`.
    IntDict {
        /// The distinct values, ascending.
        values: &'a [i64],
        /// Int or Timestamp.
        dtype: DataType,
        /// Code 0 is NULL.
        nullable: bool,
    },
    /// Integral floats: `base + (code - nullable)`.
    FloatOffset {
        /// Smallest value.
        base: f64,
        /// Code 0 is NULL.
        nullable: bool,
    },
    /// A dictionary's entries; code 0 is NULL when `nullable`.
    Dict {
        /// The dictionary.
        dict: &'a Dictionary,
        /// Code 0 is NULL.
        nullable: bool,
    },
    /// A local dictionary: code `c` is row `c` of `values` (NULL where the
    /// array's validity says so).
    Values(Array<'a>),
    /// Code `c` is row `c` of the evaluated key, a group per row: unlike
    /// [`Decoder::Values`], two codes may decode to the same value, so the
    /// partial's groups are not distinct ([`Decoder::repeats`]).
    Rows(Array<'a>),
    /// Dense codes of the keys present, mapped back to the inner codes.
    Remapped {
        /// The decoder of the original codes.
        inner: Box<Decoder<'a>>,
        /// Original code of each dense code.
        codes: Vec<u64>,
    },
}

impl<'a> Decoder<'a> {
    /// The key column of the groups whose codes are `codes` (consuming the
    /// decoder, so a local dictionary can become the column uncopied).
    pub fn decode(self, codes: &[u64]) -> Array<'a> {
        match self {
            // Every code in order (a local dictionary's groups all seen):
            // the values are the key column as they are, not copied.
            Decoder::Values(values) | Decoder::Rows(values)
                if values.len() == codes.len()
                    && codes.iter().enumerate().all(|(i, &c)| c == i as u64) =>
            {
                values
            }
            other => other.decode_ref(codes),
        }
    }

    /// Whether two codes may decode to equal keys (a group per row).
    pub fn repeats(&self) -> bool {
        match self {
            Decoder::Rows(_) => true,
            Decoder::Remapped { inner, .. } => inner.repeats(),
            _ => false,
        }
    }

    /// [`Decoder::decode`], copying.
    fn decode_ref(&self, codes: &[u64]) -> Array<'a> {
        let n = codes.len();
        let nulls = |nullable: bool| -> Option<Bitmap> {
            (nullable && codes.contains(&0)).then(|| Bitmap::from_fn(n, |i| codes[i] != 0))
        };
        match self {
            Decoder::Const(v, dtype) => Array::repeat(*dtype, v, n),
            Decoder::Offset {
                base,
                scale,
                dtype,
                nullable,
            } => {
                let shift = *nullable as u64;
                Array {
                    dtype: *dtype,
                    data: Data::Int(
                        codes
                            .iter()
                            .map(|&c| {
                                base.wrapping_add(
                                    c.saturating_sub(shift).wrapping_mul(*scale) as i64
                                )
                            })
                            .collect(),
                    ),
                    validity: nulls(*nullable),
                }
            }
            Decoder::IntDict {
                values,
                dtype,
                nullable,
            } => {
                let shift = *nullable as u64;
                Array {
                    dtype: *dtype,
                    data: Data::Int(
                        codes
                            .iter()
                            .map(|&c| values[c.saturating_sub(shift) as usize])
                            .collect(),
                    ),
                    validity: nulls(*nullable),
                }
            }
            Decoder::FloatOffset { base, nullable } => {
                let shift = *nullable as u64;
                Array {
                    dtype: DataType::Float,
                    data: Data::Float(Cow::Owned(
                        codes
                            .iter()
                            .map(|&c| base + c.saturating_sub(shift) as f64)
                            .collect(),
                    )),
                    validity: nulls(*nullable),
                }
            }
            Decoder::Dict { dict, nullable } => {
                let shift = *nullable as u64;
                Array {
                    dtype: DataType::Str,
                    data: Data::Str(Strs::Coded {
                        entries: Arc::new(Strs::Dict(dict)),
                        codes: codes
                            .iter()
                            .map(|&c| c.saturating_sub(shift) as u32)
                            .collect(),
                    }),
                    validity: nulls(*nullable),
                }
            }
            Decoder::Values(values) | Decoder::Rows(values) => {
                let idx: Vec<u32> = codes.iter().map(|&c| c as u32).collect();
                values.take(&idx)
            }
            Decoder::Remapped { inner, codes: map } => {
                let orig: Vec<u64> = codes.iter().map(|&c| map[c as usize]).collect();
                inner.decode_ref(&orig)
            }
        }
    }
}

/// Where a key's per-row codes come from.
pub enum KeySource<'a> {
    /// The key is constant over the rows (code 0).
    Const,
    /// A column's packed codes, read in place; with a validity bitmap, NULL
    /// is code 0 and every other code is shifted up by one.
    Packed {
        /// The codes.
        codes: &'a Codes,
        /// The column's validity, packed (see [`Bitmap::dense`]).
        validity: Option<Cow<'a, Bitmap>>,
    },
    /// Codes computed for the selected rows.
    Computed(Vec<u64>),
}

/// One group key of a partition: its codes, their number, and how to
/// decode them.
pub struct KeyCodes<'a> {
    /// Per-row codes.
    pub source: KeySource<'a>,
    /// Codes are `0..card`.
    pub card: u64,
    /// Codes back to values.
    pub decoder: Decoder<'a>,
    /// For EXPLAIN.
    pub how: String,
}

impl<'a> KeyCodes<'a> {
    /// A group per row: row `i` has code `i`, its key `values` row `i`
    /// (see [`Decoder::Rows`]); `how` for EXPLAIN.
    fn per_row(values: Array<'a>, how: String) -> KeyCodes<'a> {
        let n = values.len();
        KeyCodes {
            source: KeySource::Computed((0..n as u64).collect()),
            card: n.max(1) as u64,
            how,
            decoder: Decoder::Rows(values),
        }
    }

    /// False for a key constant over the rows.
    pub fn varies(&self) -> bool {
        !matches!(self.source, KeySource::Const)
    }

    /// `acc[j] = acc[j] · card + code(j)` for every selected row `j`: one
    /// pass per key builds the mixed-radix combined key.
    pub fn combine_into(&self, acc: &mut [u64], rows: Rows<'_>) {
        let card = self.card;
        match &self.source {
            KeySource::Const => {}
            KeySource::Computed(codes) => {
                for (a, c) in acc.iter_mut().zip(codes) {
                    *a = *a * card + c;
                }
            }
            KeySource::Packed {
                codes,
                validity: None,
            } => with_codes!(codes, c => match rows.sel {
                None => {
                    for (a, x) in acc.iter_mut().zip(c.iter()) {
                        *a = *a * card + x.to_u64();
                    }
                }
                Some(sel) => {
                    for (a, &r) in acc.iter_mut().zip(sel) {
                        *a = *a * card + c[r as usize].to_u64();
                    }
                }
            }),
            KeySource::Packed {
                codes,
                validity: Some(b),
            } => with_codes!(codes, c => {
                let b: &Bitmap = b;
                for (j, a) in acc.iter_mut().enumerate() {
                    let r = rows.row(j);
                    let code = if b.get(r) { c[r].to_u64() + 1 } else { 0 };
                    *a = *a * card + code;
                }
            }),
        }
    }

    /// The per-row codes as a vector.
    pub fn codes(&self, rows: Rows<'_>) -> Vec<u64> {
        let mut out = vec![0u64; rows.len];
        self.combine_into(&mut out, rows);
        out
    }
}

fn constant<'a>(v: Value, expr: &Expr) -> KeyCodes<'a> {
    KeyCodes {
        source: KeySource::Const,
        card: 1,
        decoder: Decoder::Const(v, expr.dtype()),
        how: format!("{expr}: constant in partition"),
    }
}

/// The codes of key `expr` at the selected rows of `part`.
///
/// # Errors
/// Evaluation errors of the key.
pub fn key_codes<'a>(
    expr: &Expr,
    part: &'a Partition,
    rows: Rows<'_>,
    opts: &ExecOptions,
) -> Result<KeyCodes<'a>> {
    if let Expr::Literal { value, .. } = expr {
        return Ok(constant(value.clone(), expr));
    }
    if let Expr::Column { index, name, dtype } = expr {
        let col = &part.columns[*index];
        let nullable = col.validity.is_some();
        let shift = nullable as u64;
        let packed = |codes| KeySource::Packed {
            codes,
            validity: col.packed_validity(),
        };
        match &col.data {
            ColumnData::Offset { base, scale, codes }
                if col
                    .zone
                    .int_span()
                    .is_some_and(|r| r / scale < u64::MAX - 1) =>
            {
                let range = col.zone.int_span().unwrap_or(0) / scale;
                return Ok(KeyCodes {
                    source: packed(codes),
                    card: range.saturating_add(1 + shift),
                    decoder: Decoder::Offset {
                        base: *base,
                        scale: *scale,
                        dtype: *dtype,
                        nullable,
                    },
                    how: format!("{name}: {} offset codes", codes.width_name()),
                });
            }
            ColumnData::IntDict { values, codes } => {
                return Ok(KeyCodes {
                    source: packed(codes),
                    card: values.len() as u64 + shift,
                    decoder: Decoder::IntDict {
                        values,
                        dtype: *dtype,
                        nullable,
                    },
                    how: format!("{name}: {} integer dictionary codes", codes.width_name()),
                });
            }
            ColumnData::Dict { dict, codes } => {
                return Ok(KeyCodes {
                    source: packed(codes),
                    card: dict.len() as u64 + shift,
                    decoder: Decoder::Dict { dict, nullable },
                    how: format!("{name}: {} dictionary codes", codes.width_name()),
                });
            }
            ColumnData::DictRuns { dict, .. } => {
                if let Some(codes) = crate::exec::codecs::dict_run_key_codes(col, rows) {
                    return Ok(KeyCodes {
                        source: KeySource::Computed(codes),
                        card: dict.len() as u64 + shift,
                        decoder: Decoder::Dict { dict, nullable },
                        how: format!("{name}: run-length dictionary codes"),
                    });
                }
            }
            _ => {}
        }
    }
    if let Some(k) = alp_floor_key(expr, part, rows) {
        return Ok(k);
    }
    if let Some(k) = fsst_key(expr, part, rows, opts.grouping_probe_rows) {
        return Ok(k);
    }
    let a = match eval(expr, part, rows)? {
        Datum::Scalar(v) => return Ok(constant(v, expr)),
        Datum::Array(a) => a,
    };
    Ok(recode(a, expr, opts.grouping_probe_rows))
}

/// What [`key_codes`] will make of `expr` in `part`, from the codecs
/// alone (EXPLAIN, no row read): the shape line, the detail, and the code
/// count when the key is codes with a bound known now (`None` when the
/// codes are made from the rows).
pub fn key_shape(expr: &Expr, part: &Partition) -> (String, String, Option<u64>) {
    if let Expr::Literal { value, .. } = expr {
        return (
            format!("group key {expr}: constant"),
            value.to_string(),
            Some(1),
        );
    }
    if let Expr::Column { index, name, .. } = expr {
        let col = &part.columns[*index];
        let nulls = u64::from(col.validity.is_some());
        let codes = |kind: &str| {
            col.code_count().map(|n| {
                (
                    format!("group key {name}: {kind} codes"),
                    format!("{}, {} codes", col.encoding_name(), n.saturating_add(nulls)),
                    Some(n.saturating_add(nulls)),
                )
            })
        };
        let coded = match &col.data {
            ColumnData::Const(_) => codes("constant"),
            ColumnData::Offset { .. } => codes("offset"),
            ColumnData::IntDict { .. } => codes("integer dictionary"),
            ColumnData::Dict { .. } => codes("dictionary"),
            ColumnData::DictRuns { .. } => codes("run-length dictionary"),
            ColumnData::Fsst(_) => Some((
                format!("group key {name}: FSST compressed bytes hashed to dense codes"),
                col.encoding_name(),
                None,
            )),
            _ => None,
        };
        if let Some(shape) = coded {
            return shape;
        }
    }
    (
        format!("group key {expr}: evaluated, then coded from the values present"),
        String::new(),
        None,
    )
}

/// An FSST string column as a group key, grouped on its compressed bytes:
/// equal strings have equal codes within a partition, so a hash table on
/// the codes gives each distinct string a dense code, and only one copy of
/// each is decoded (for the key values), from the compressed bytes kept.
/// ClickBench's GROUP BY URL decoded every row before, more than a third
/// of the query. NULL is a code of its own (its bytes are those of "").
/// `None` for other columns.
fn fsst_key<'a>(
    expr: &Expr,
    part: &'a Partition,
    rows: Rows<'_>,
    probe_rows: usize,
) -> Option<KeyCodes<'a>> {
    let Expr::Column { index, name, .. } = expr else {
        return None;
    };
    let col = &part.columns[*index];
    let ColumnData::Fsst(f) = &col.data else {
        return None;
    };
    let n = rows.len;
    let validity = col.packed_validity();
    let valid = |r: usize| validity.as_deref().is_none_or(|b| b.get(r));
    // The compressed bytes of each code's string.
    let mut first_bytes: Vec<&'a [u8]> = Vec::new();
    // The row each code was first met at (for its decoded length).
    let mut first_rows: Vec<u32> = Vec::new();
    let mut null_code: Option<u64> = None;
    // Compressed strings of at most 7 bytes (most of them, for short text)
    // are their own key: the bytes as an integer, the length in the top
    // byte, so a probe compares the entry alone, reads no other array and
    // hashes with two multiplies (perf: with 48k distinct strings per
    // partition, the compare's second random read was most of this loop).
    // Longer ones hash by XXH3 and compare their bytes.
    let mut short: HashTable<(u64, u32)> = HashTable::with_capacity(n.min(LOCAL_DICTIONARY_START));
    let mut long: HashTable<(u64, u32)> = HashTable::new();
    let mut codes = Vec::with_capacity(n);
    // Set when the first rows say the strings are nearly all distinct
    // (as for numbers, see `local_dictionary`): the rest is skipped.
    let mut per_row = false;
    // Compressed bytes of the rows probed so far.
    let mut probed_bytes = 0usize;
    let mut add = |r: usize, bytes: &'a [u8]| {
        if per_row {
            return;
        }
        if codes.len() == probe_rows {
            // Compressed strings longer than a word on average are wide.
            let wide = probed_bytes > 8 * probe_rows;
            if skips_grouping(codes.len(), first_bytes.len(), n, wide) {
                per_row = true;
                return;
            }
        }
        probed_bytes += bytes.len();
        if !valid(r) {
            let c = *null_code.get_or_insert_with(|| {
                first_bytes.push(&[]);
                first_rows.push(r as u32);
                first_bytes.len() as u64 - 1
            });
            codes.push(c);
            return;
        }
        let seen = codes.len();
        let code = if bytes.len() < 8 {
            // The length in the top byte, above the at most 7 bytes.
            let key = short_word(bytes) | (bytes.len() as u64) << 56;
            let found = short.find(mix64(key), |e| e.0 == key).map(|e| e.1);
            found.unwrap_or_else(|| {
                let g = first_bytes.len() as u32;
                first_bytes.push(bytes);
                first_rows.push(r as u32);
                insert_local(&mut short, (key, g), seen, n, |e| mix64(e.0));
                g
            })
        } else {
            let h = xxhash_rust::xxh3::xxh3_64(bytes);
            // NULL's code is never in the table, so a match is a string.
            let found = long.find(h, |e| e.0 == h && first_bytes[e.1 as usize] == bytes);
            found.map(|e| e.1).unwrap_or_else(|| {
                let g = first_bytes.len() as u32;
                first_bytes.push(bytes);
                first_rows.push(r as u32);
                insert_local(&mut long, (h, g), seen, n, |e| e.0);
                g
            })
        };
        codes.push(code as u64);
    };
    each_compressed(f, rows, &mut add);
    if per_row {
        // A group per row: every row's string decoded, NULL where invalid.
        let mut all: Vec<&'a [u8]> = Vec::with_capacity(n);
        let mut all_rows: Vec<u32> = Vec::with_capacity(n);
        let mut ok: Vec<bool> = Vec::with_capacity(n);
        each_compressed(f, rows, |r, bytes| {
            let v = valid(r);
            ok.push(v);
            all.push(if v { bytes } else { &[] });
            all_rows.push(r as u32);
        });
        let mut batch = crate::store::StringBatch::new();
        f.decode_compressed(&all, &all_rows, &mut batch);
        let values = Array {
            dtype: DataType::Str,
            data: Data::Str(Strs::Owned(crate::exec::codecs::string_buffer(batch))),
            validity: ok.contains(&false).then(|| Bitmap::from_bools(&ok)),
        };
        return Some(KeyCodes::per_row(
            values,
            format!(
                "{name}: FSST, nearly every row a new value: a group per row, grouped at the merge"
            ),
        ));
    }
    debug_assert_eq!(codes.len(), n, "a code per selected row");
    let distinct = first_bytes.len();
    // Each code's string, decoded from the compressed bytes kept for it.
    let mut batch = crate::store::StringBatch::new();
    f.decode_compressed(&first_bytes, &first_rows, &mut batch);
    let values = Array {
        dtype: DataType::Str,
        data: Data::Str(Strs::Owned(crate::exec::codecs::string_buffer(batch))),
        validity: null_code.map(|c| Bitmap::from_fn(distinct, |g| g as u64 != c)),
    };
    Some(KeyCodes {
        source: KeySource::Computed(codes),
        card: distinct.max(1) as u64,
        how: format!("{name}: FSST codes hashed compressed, local dictionary of {distinct} values"),
        decoder: Decoder::Values(values),
    })
}

/// `g(row, compressed bytes)` for each of `rows` of `f`, in order.
fn each_compressed<'s>(f: &'s Fsst, rows: Rows<'_>, g: impl FnMut(usize, &'s [u8])) {
    match rows.range() {
        Some(range) => f.for_each_compressed(range, g),
        // Not a range, so a selection (ascending, as every selection is).
        None => f.for_each_selected(rows.sel.unwrap_or_default(), g),
    }
}

/// `floor(x)` over an ALP column with decimals (`exponent = -k < 0`) and no
/// exceptions: the key codes come straight from the digits as
/// `⌊(base + code) / 10^k⌋ - lo`, no float decoded. Exact: a row's value
/// is the f64 nearest `d / 10^k` with `|d| < 2^51`, whose fractional part is
/// a multiple of `10^-k`, at least `10^-k` from the next integer, while the
/// f64 spacing there is below `10^-k / 2`; so rounding never reaches an
/// integer the decimal does not. `None` for anything else, or when the
/// floors span more codes than the evaluated path would accept.
fn alp_floor_key<'a>(expr: &Expr, part: &'a Partition, rows: Rows<'_>) -> Option<KeyCodes<'a>> {
    let Expr::Call {
        func: crate::plan::Func::Floor,
        args,
        ..
    } = expr
    else {
        return None;
    };
    let [Expr::Column { index, .. }] = &args[..] else {
        return None;
    };
    let col = &part.columns[*index];
    let ColumnData::Alp(a) = &col.data else {
        return None;
    };
    if a.exponent() >= 0 || !a.exceptions().0.is_empty() {
        return None;
    }
    let p = 10i64.checked_pow(u32::from(a.exponent().unsigned_abs()))?;
    let base = a.base();
    let lo = base.div_euclid(p);
    let hi = base
        .checked_add(i64::try_from(a.max_code()).ok()?)?
        .div_euclid(p);
    let n = rows.len;
    let range = (hi - lo) as u64;
    if !dense_enough(range as u128, n) {
        return None;
    }
    let nullable = col.validity.is_some();
    let shift = nullable as u64;
    let validity = col.packed_validity();
    let valid = |r: usize| validity.as_deref().is_none_or(|b| b.get(r));
    let mut codes: Vec<u64> = Vec::with_capacity(n);
    crate::exec::codecs::for_each_alp_code(a, rows, |_, r, c| {
        codes.push(if valid(r) {
            ((base + c as i64).div_euclid(p) - lo) as u64 + shift
        } else {
            0
        });
    });
    Some(KeyCodes {
        source: KeySource::Computed(codes),
        card: range + 1 + shift,
        decoder: Decoder::FloatOffset {
            base: lo as f64,
            nullable,
        },
        how: format!(
            "{expr}: from ALP digits (no float decoded), range {} codes",
            range + 1
        ),
    })
}

/// Whether key values spanning `range + 1` codes are coded by offset from
/// the smallest over `n` rows: at most twice the rows (or 2^17).
fn dense_enough(range: u128, n: usize) -> bool {
    range < (n as u128).max(1 << 16) * 2
}

/// Re-codes evaluated key values densely.
fn recode<'a>(a: Array<'a>, expr: &Expr, probe_rows: usize) -> KeyCodes<'a> {
    let n = a.len();
    let nullable = a.validity.is_some();
    let shift = nullable as u64;
    let valid = |i: usize| a.validity.as_ref().is_none_or(|v| v.get(i));
    match &a.data {
        Data::Int(v) => {
            let (mut lo, mut hi) = (i64::MAX, i64::MIN);
            for (i, &x) in v.iter().enumerate() {
                if valid(i) {
                    lo = lo.min(x);
                    hi = hi.max(x);
                }
            }
            let range = (hi as i128 - lo as i128) as u128;
            if lo <= hi && dense_enough(range, n) {
                let codes = (0..n)
                    .map(|i| {
                        if valid(i) {
                            (v[i] as u64).wrapping_sub(lo as u64) + shift
                        } else {
                            0
                        }
                    })
                    .collect();
                return KeyCodes {
                    source: KeySource::Computed(codes),
                    card: range as u64 + 1 + shift,
                    decoder: Decoder::Offset {
                        base: lo,
                        scale: 1,
                        dtype: a.dtype,
                        nullable,
                    },
                    how: format!("{expr}: evaluated, integer range {} codes", range + 1),
                };
            }
        }
        Data::Float(v) => {
            let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
            let mut integral = true;
            for (i, &x) in v.iter().enumerate() {
                if valid(i) {
                    integral &= x.fract() == 0.0 && x.abs() <= 9.0e15;
                    lo = lo.min(x);
                    hi = hi.max(x);
                }
            }
            if integral && lo <= hi && dense_enough((hi - lo) as u128, n) {
                let codes = (0..n)
                    .map(|i| {
                        if valid(i) {
                            (v[i] - lo) as u64 + shift
                        } else {
                            0
                        }
                    })
                    .collect();
                return KeyCodes {
                    source: KeySource::Computed(codes),
                    card: (hi - lo) as u64 + 1 + shift,
                    decoder: Decoder::FloatOffset { base: lo, nullable },
                    how: format!(
                        "{expr}: evaluated, integral floats, range {} codes",
                        (hi - lo) as u64 + 1
                    ),
                };
            }
        }
        _ => {}
    }
    let Some((codes, first_rows)) = local_dictionary(&a, probe_rows) else {
        return KeyCodes::per_row(
            a,
            format!(
                "{expr}: evaluated, nearly every row a new value: a group per row, grouped at the merge"
            ),
        );
    };
    let distinct = first_rows.len();
    let values = a.take(&first_rows);
    KeyCodes {
        source: KeySource::Computed(codes),
        card: distinct.max(1) as u64,
        how: format!("{expr}: evaluated, local hash dictionary of {distinct} values"),
        decoder: Decoder::Values(values),
    }
}

/// The bytes of `b` (at most 8) as a little-endian integer, zero-padded,
/// from two overlapping loads instead of a copy: a variable-length copy
/// into a word then read whole stalls on store forwarding (perf annotate:
/// half of the per-row loop of [`fsst_key`]).
#[inline]
fn short_word(b: &[u8]) -> u64 {
    let n = b.len();
    debug_assert!(n <= 8);
    let at = |i: usize| u64::from(b[i]) << (8 * i);
    match n {
        0 => 0,
        1..=3 => at(0) | at(n / 2) | at(n - 1),
        _ => {
            let lo = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
            let hi = u32::from_le_bytes([b[n - 4], b[n - 3], b[n - 2], b[n - 1]]);
            u64::from(lo) | (u64::from(hi) << (8 * (n - 4)))
        }
    }
}

/// Inserts `entry`, new to `table`, after `seen` of `n` rows, growing the
/// table as [`grow_local`] does.
#[inline]
fn insert_local<E>(
    table: &mut HashTable<E>,
    entry: E,
    seen: usize,
    n: usize,
    hasher: impl Fn(&E) -> u64,
) {
    grow_local(table, seen, n, &hasher);
    table.insert_unique(hasher(&entry), entry, hasher);
}

/// Rows of a batch a local dictionary starts with room for.
pub(super) const LOCAL_DICTIONARY_START: usize = 1024;

/// Makes room in a full `table` after `seen` of `n` rows: for every row
/// still to come when most rows so far were new keys (a high-cardinality
/// key then rehashes once, not at each of six doublings; perf showed
/// rehashing at a tenth of a 1M-group GROUP BY), else by doubling.
pub(super) fn grow_local<E>(
    table: &mut HashTable<E>,
    seen: usize,
    n: usize,
    hasher: impl Fn(&E) -> u64,
) {
    if table.len() < table.capacity() {
        return;
    }
    let more = if table.len() * 2 >= seen {
        n - seen
    } else {
        table.len()
    };
    table.reserve(more.max(1), hasher);
}

/// Whether `seen` rows holding `distinct` keys predict a partition of
/// `rows` rows whose keys are mostly distinct ([`projected_distinct`],
/// uniform draws), so that grouping it saves the merge little: at least
/// 60% of the rows for keys of up to 8 bytes (numbers, packed key tuples,
/// short strings), 90% for `wide` ones (long strings, which a local
/// grouping decodes and copies once per distinct value rather than per
/// row). Skewed keys repeat sooner and keep their grouping.
///
/// The bars come from A/B runs at 10M rows: at 60%, ClickBench q16
/// (UserID, 89% distinct in a partition) ran 0.65x, q17 0.80x, q18 0.64x
/// and shapes group_s100k (short strings, 73%) 0.91x; long URLs and titles
/// at 60% made q37 and q38 1.14x, so wide keys keep 90%.
pub(super) fn skips_grouping(seen: usize, distinct: usize, rows: usize, wide: bool) -> bool {
    let share = if wide { 0.9 } else { 0.6 };
    projected_distinct(seen, distinct, rows) >= share * rows as f64
}

/// A dense code per row by hashing the typed values (NULL is a value of
/// its own), and the first row of each code.
///
/// `None` when the values are numbers and nearly all distinct in the
/// partition, as [`skips_grouping`] judges from the first
/// [`ExecOptions::grouping_probe_rows`] rows. Grouping within the partition would then
/// only build a hash table as large as the rows for the merge to build
/// again (DataFusion skips partial aggregation on similar evidence; perf:
/// the local dictionary was a fifth of `GROUP BY u % 2000000`, its merge
/// another).
fn local_dictionary(a: &Array<'_>, probe_rows: usize) -> Option<(Vec<u64>, Vec<u32>)> {
    let n = a.len();
    let valid = |i: usize| a.validity.as_ref().is_none_or(|v| v.get(i));
    let mut first: Vec<u32> = Vec::new();
    let mut null_code: Option<u64> = None;
    // Entries hold what a probe compares (the key's bits, or a string's
    // hash) next to the code, so a probe reads no other array.
    let mut table: HashTable<(u64, u32)> = HashTable::with_capacity(n.min(LOCAL_DICTIONARY_START));
    let mut codes = Vec::with_capacity(n);
    // `bits(i)` is a 64-bit stand-in for the value that equality can use
    // (exact for numbers); strings compare their bytes on a hash match.
    macro_rules! by_bits {
        ($bits:expr) => {{
            let bits = $bits;
            for i in 0..n {
                if i == probe_rows && skips_grouping(i, first.len(), n, false) {
                    return None;
                }
                if !valid(i) {
                    let c = *null_code.get_or_insert_with(|| {
                        first.push(i as u32);
                        first.len() as u64 - 1
                    });
                    codes.push(c);
                    continue;
                }
                let k = bits(i);
                let h = mix64(k);
                let code = match table.find(h, |e| e.0 == k) {
                    Some(&(_, g)) => g as u64,
                    None => {
                        let g = first.len() as u32;
                        first.push(i as u32);
                        grow_local(&mut table, i, n, |e| mix64(e.0));
                        table.insert_unique(h, (k, g), |e| mix64(e.0));
                        g as u64
                    }
                };
                codes.push(code);
            }
        }};
    }
    match &a.data {
        Data::Int(v) => by_bits!(|i: usize| v[i] as u64),
        Data::Float(v) => by_bits!(|i: usize| canonical_f64_bits(v[i])),
        Data::Bool(b) => by_bits!(|i: usize| b.get(i) as u64),
        Data::Str(s) => {
            // Per entry first for coded strings (equal entries merge).
            let hashes: Vec<u64> = s.map(hash_str);
            for (i, &h) in hashes.iter().enumerate() {
                if !valid(i) {
                    let c = *null_code.get_or_insert_with(|| {
                        first.push(i as u32);
                        first.len() as u64 - 1
                    });
                    codes.push(c);
                    continue;
                }
                let x = s.get(i);
                // NULL's code is never in the table, so a match is a string.
                let found = table.find(h, |e| e.0 == h && s.get(first[e.1 as usize] as usize) == x);
                let code = match found {
                    Some(&(_, g)) => g as u64,
                    None => {
                        let g = first.len() as u32;
                        first.push(i as u32);
                        grow_local(&mut table, i, n, |e| e.0);
                        table.insert_unique(h, (h, g), |e| e.0);
                        g as u64
                    }
                };
                codes.push(code);
            }
        }
    }
    Some((codes, first))
}

/// Keys whose codes span more than this are not re-densified.
const DENSIFY_MAX_CARD: u64 = 1 << 20;

/// Rows whose codes [`dense_in_head`] reads first.
const DENSIFY_PROBE_ROWS: usize = 4096;

/// Whether the first [`DENSIFY_PROBE_ROWS`] rows already hold codes of more
/// than half of the key's range, so that [`densify`] would decline after
/// decoding every row. Only for partitions of at least four times that
/// many rows and ranges of at most 64k codes (an 8 KiB bitmap). perf of
/// shapes `sparse_three_keys` (three keys, each with all of its 500 codes
/// in every partition): `densify` decoded every row's codes three times
/// only to decline, 11% of the query.
fn dense_in_head(k: &KeyCodes<'_>, rows: Rows<'_>) -> bool {
    if rows.len < 4 * DENSIFY_PROBE_ROWS || k.card > 1 << 16 {
        return false;
    }
    let first: Vec<u32>;
    let head = match rows.sel {
        Some(sel) => Rows::some(&sel[..DENSIFY_PROBE_ROWS]),
        None => {
            first = (0..DENSIFY_PROBE_ROWS as u32).collect();
            Rows::run(&first)
        }
    };
    let mut bits = vec![0u64; (k.card as usize).div_ceil(64)];
    for c in k.codes(head) {
        if let Some(w) = bits.get_mut((c / 64) as usize) {
            *w |= 1 << (c % 64);
        }
    }
    let present: u64 = bits.iter().map(|w| u64::from(w.count_ones())).sum();
    present * 2 > k.card
}

/// Replaces a key's codes by dense ranks of the codes present in the rows
/// when fewer than half of its code range occurs: packed codes span the
/// partition's min..max, but a column such as a PUMA code uses a few dozen
/// values of a range of hundreds, and dense ranks can turn a hashed key
/// space into a fixed array. Returns whether it did.
pub fn densify(k: &mut KeyCodes<'_>, rows: Rows<'_>) -> bool {
    if !k.varies() || k.card > DENSIFY_MAX_CARD || matches!(k.decoder, Decoder::Remapped { .. }) {
        return false;
    }
    if dense_in_head(k, rows) {
        return false;
    }
    let mut codes = k.codes(rows);
    let present = if k.card <= codes.len() as u64 * 4 {
        // A range near the rows: a rank per code, one load a row.
        let mut rank = vec![u32::MAX; k.card as usize];
        for &c in &codes {
            rank[c as usize] = 0;
        }
        let mut present = Vec::new();
        for (c, r) in rank.iter_mut().enumerate() {
            if *r == 0 {
                *r = present.len() as u32;
                present.push(c as u64);
            }
        }
        if present.len() as u64 * 2 > k.card {
            return false;
        }
        for c in codes.iter_mut() {
            *c = u64::from(rank[*c as usize]);
        }
        present
    } else {
        // A range much wider than the rows: a bit per code marks those
        // present, and a code's rank is the set bits before it (a prefix
        // count per word plus a popcount). A u32 rank per code there was a
        // 4 MiB array zeroed per partition for a key such as CounterID
        // spanning 2^20 codes (callgrind: a third of ClickBench q28).
        let mut bits = vec![0u64; (k.card as usize).div_ceil(64)];
        for &c in &codes {
            bits[(c / 64) as usize] |= 1 << (c % 64);
        }
        let mut before = Vec::with_capacity(bits.len());
        let mut count = 0u64;
        for w in &bits {
            before.push(count as u32);
            count += u64::from(w.count_ones());
        }
        if count * 2 > k.card {
            return false;
        }
        let mut present = Vec::with_capacity(count as usize);
        for (w, &word) in bits.iter().enumerate() {
            let mut b = word;
            while b != 0 {
                present.push(w as u64 * 64 + u64::from(b.trailing_zeros()));
                b &= b - 1;
            }
        }
        for c in codes.iter_mut() {
            let w = (*c / 64) as usize;
            let below = bits[w] & ((1u64 << (*c % 64)) - 1);
            *c = u64::from(before[w]) + u64::from(below.count_ones());
        }
        present
    };
    k.source = KeySource::Computed(codes);
    k.card = present.len().max(1) as u64;
    let inner = std::mem::replace(&mut k.decoder, Decoder::Const(Value::Null, DataType::Int));
    k.decoder = Decoder::Remapped {
        inner: Box::new(inner),
        codes: present,
    };
    true
}

#[cfg(test)]
mod tests {
    use super::{short_word, skips_grouping};

    /// Keys from 2M values (about 1 repeat in 2,048 rows) skip grouping a
    /// 65,536-row partition; keys from 100k values (about 21 repeats, 73%
    /// of the partition's rows distinct) skip it when narrow and keep it
    /// when wide; keys from 20k values (about 95 repeats, 28%) and constant
    /// keys keep it.
    #[test]
    fn grouping_is_skipped_only_for_mostly_unique_keys() {
        let rows = 65_536;
        for wide in [false, true] {
            assert!(skips_grouping(2048, 2048, rows, wide));
            assert!(skips_grouping(2048, 2047, rows, wide));
            assert!(!skips_grouping(2048, 2048 - 95, rows, wide));
            assert!(!skips_grouping(2048, 1, rows, wide));
            // A small partition needs fewer distinct keys to be mostly
            // distinct.
            assert!(skips_grouping(2048, 2048 - 21, 4096, wide));
        }
        assert!(skips_grouping(2048, 2048 - 21, rows, false));
        assert!(!skips_grouping(2048, 2048 - 21, rows, true));
    }

    /// Every length from 0 to 8 gives the bytes zero-padded, whatever they
    /// are (zero bytes included, which padding must not confuse with
    /// length: the table keeps the length in the key's top byte).
    #[test]
    fn short_words_are_the_bytes_zero_padded() {
        let samples: [&[u8]; 4] = [
            &[0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08],
            &[0xFF, 0x00, 0xFE, 0x00, 0xFD, 0x00, 0xFC, 0x00],
            &[0x00; 8],
            &[0x80, 0x7F, 0x41, 0x42, 0x43, 0x44, 0x45, 0x46],
        ];
        for bytes in samples {
            for n in 0..=8 {
                let mut padded = [0u8; 8];
                padded[..n].copy_from_slice(&bytes[..n]);
                assert_eq!(
                    short_word(&bytes[..n]),
                    u64::from_le_bytes(padded),
                    "{:?}",
                    &bytes[..n]
                );
            }
        }
    }
}
