//! Arrow record batches to an encoded [`Table`]: the importer behind
//! [`crate::Database::load_arrow`] (a pyarrow table, any
//! [`RecordBatchReader`]) and the Parquet reader (`parquet.rs`).
//!
//! # Types
//! Each Arrow column becomes one katydid column of the type its Arrow type
//! maps to ([`katydid_type`]); katydid has no date, decimal, boolean or
//! narrow numeric types of its own, so:
//!
//! | Arrow                                   | katydid                              |
//! |-----------------------------------------|--------------------------------------|
//! | Int8/16/32/64, UInt8/16/32/64           | integer (a UInt64 above `i64::MAX` is an error) |
//! | Float16/32/64                           | float (a Float32 as its shortest decimal, `0.1f32` is `0.1`) |
//! | Decimal32/64/128/256 with scale ≤ 0, precision ≤ 18 | integer                   |
//! | other decimals                          | float: the double nearest the decimal (exact up to 15 significant digits, which the ALP codec keeps as exact decimal digits; longer ones are rounded and a notice says so) |
//! | Date32, Date64                          | date (days since the epoch; a Date64 off midnight is its day) |
//! | Timestamp (s, ms, µs, ns; any zone)     | timestamp in µs of the UTC instant (ns rounded down to the µs) |
//! | Utf8, LargeUtf8, Utf8View, Dictionary of those | string                        |
//! | Binary, LargeBinary, BinaryView         | string, when every value is UTF-8    |
//! | Boolean                                 | string `true` / `false` (as a CSV of those loads) |
//! | Null                                    | string, all NULL                     |
//!
//! Dictionaries of any supported value type load as their values. Other
//! types (list, struct, map, union, time of day, duration, interval,
//! fixed-size binary) fail the load with an error naming the column, or are
//! left out with [`LoadOptions::skip_unsupported`] (and a notice says so).
//!
//! # Design
//! The batches are cut (zero-copy slices) into partitions of exactly
//! [`LoadOptions::partition_rows`] rows, the last one shorter. The workers
//! of the current rayon pool take turns at the reader (a lock): a worker
//! takes the next partition's batches, lets the reader go, and converts and
//! encodes that partition's columns in parallel with the same encoders as
//! the CSV load (`Column::encode_ints`, `encode_floats`,
//! `encode_strings`), so codecs, zone maps and dictionaries are the CSV
//! load's. Each partition is reserved against [`LoadOptions::memory`] as
//! it is encoded; once all are in, equal dictionaries are shared and
//! table-wide dictionaries made as after a CSV load from a pipe.
//!
//! # Errors, cancelling and progress
//! The reader's own errors end the load as [`Error::Io`] naming `origin`;
//! a value that cannot be converted (a UInt64 past `i64::MAX`, a timestamp
//! past the year 294,247, a non-UTF-8 binary) as [`Error::Io`] naming
//! `origin` and the column. [`LoadOptions::cancel`] is polled before each
//! batch and each column; [`LoadOptions::on_progress`] hears the rows read
//! so far ([`crate::ProgressUnit::Rows`], of an unknown total). Nothing is
//! returned on error.

use std::borrow::Cow;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    ArrowPrimitiveType, Date32Type, Date64Type, Decimal32Type, Decimal64Type, Decimal128Type,
    Decimal256Type, Float16Type, Float32Type, Float64Type, Int8Type, Int16Type, Int32Type,
    Int64Type, TimestampMicrosecondType, TimestampMillisecondType, TimestampNanosecondType,
    TimestampSecondType, UInt8Type, UInt16Type, UInt32Type, UInt64Type,
};
use arrow_array::{Array, RecordBatch, RecordBatchReader};
use arrow_schema::{DataType as ArrowType, Schema, TimeUnit};
use rayon::prelude::*;

use super::progress::Stop;
use super::{LoadOptions, Loaded, peak, thousands, unique_names};
use crate::control::{Progress, ProgressUnit, Reservation};
use crate::error::{Error, Result};
use crate::store::{Bitmap, Column, ColumnData, Dictionary, EntryIds, Field, Partition, Table};
use crate::types::{DataType, Value, format_timestamp};

/// Microseconds in a day.
const DAY_MICROS: i64 = 86_400_000_000;

/// The katydid type an Arrow type loads as (see the module docs), or `None`
/// when katydid cannot load it.
pub fn katydid_type(arrow: &ArrowType) -> Option<DataType> {
    use ArrowType as A;
    Some(match arrow {
        A::Int8 | A::Int16 | A::Int32 | A::Int64 => DataType::Int,
        A::UInt8 | A::UInt16 | A::UInt32 | A::UInt64 => DataType::Int,
        A::Float16 | A::Float32 | A::Float64 => DataType::Float,
        A::Decimal32(p, s) | A::Decimal64(p, s) | A::Decimal128(p, s) | A::Decimal256(p, s) => {
            if *s <= 0 && i32::from(*p) - i32::from(*s) <= 18 {
                DataType::Int
            } else {
                DataType::Float
            }
        }
        A::Date32 | A::Date64 => DataType::Date,
        A::Timestamp(_, _) => DataType::Timestamp,
        A::Utf8 | A::LargeUtf8 | A::Utf8View => DataType::Str,
        A::Binary | A::LargeBinary | A::BinaryView => DataType::Str,
        A::Boolean | A::Null => DataType::Str,
        A::Dictionary(_, values) => katydid_type(values)?,
        _ => return None,
    })
}

/// The type two sources of one column load as together (DuckDB's
/// `union_by_name` widening): equal types stay, integers and floats make
/// floats, dates and timestamps timestamps, any other mix makes strings.
pub fn widen(a: DataType, b: DataType) -> DataType {
    match (a, b) {
        _ if a == b => a,
        (DataType::Int, DataType::Float) | (DataType::Float, DataType::Int) => DataType::Float,
        (DataType::Date, DataType::Timestamp) | (DataType::Timestamp, DataType::Date) => {
            DataType::Timestamp
        }
        _ => DataType::Str,
    }
}

/// The error for a type katydid cannot load, naming the column.
pub(crate) fn unsupported(name: &str, arrow: &ArrowType) -> Error {
    let what = match arrow {
        ArrowType::List(_)
        | ArrowType::LargeList(_)
        | ArrowType::ListView(_)
        | ArrowType::LargeListView(_)
        | ArrowType::FixedSizeList(_, _)
        | ArrowType::Struct(_)
        | ArrowType::Map(_, _)
        | ArrowType::Union(_, _) => "a nested type",
        _ => "a type katydid does not load",
    };
    Error::NotSupported(format!(
        "column \"{name}\" has type {arrow}, {what}; leave it out with skip_unsupported (`--skip-unsupported`, read_parquet(…, skip_unsupported => true)) to load the other columns"
    ))
}

/// One column of the table being loaded: where it is in the Arrow schema
/// and the type it loads as.
#[derive(Debug, Clone)]
pub(crate) struct Target {
    /// Index in the Arrow schema.
    pub source: usize,
    /// The katydid type.
    pub dtype: DataType,
}

/// A notice for a column of Arrow type `arrow` whose values may load
/// rounded: a decimal of more than 15 significant digits that loads as a
/// float (a double holds 15 to 17 digits; katydid has no exact decimal
/// type). `None` for every other type, which loads exactly.
pub(crate) fn rounding_notice(name: &str, arrow: &ArrowType) -> Option<String> {
    use ArrowType as A;
    let (A::Decimal32(p, s) | A::Decimal64(p, s) | A::Decimal128(p, s) | A::Decimal256(p, s)) =
        arrow
    else {
        return None;
    };
    (*p > 15 && katydid_type(arrow) == Some(DataType::Float)).then(|| {
        format!(
            "column {name}: DECIMAL({p},{s}) loads as the nearest double; values of more than \
             15 significant digits, and sums past about 16, are rounded (katydid has no exact \
             decimal type)"
        )
    })
}

/// The columns of `schema` that load, and notices for those left out or
/// loaded rounded ([`rounding_notice`]).
///
/// # Errors
/// [`Error::NotSupported`] naming the first column whose type katydid
/// cannot load, unless `skip_unsupported`.
pub(crate) fn targets(
    schema: &Schema,
    skip_unsupported: bool,
) -> Result<(Vec<Target>, Vec<String>, Vec<String>)> {
    let mut targets = Vec::new();
    let mut names = Vec::new();
    let mut notices = Vec::new();
    for (i, field) in schema.fields().iter().enumerate() {
        match katydid_type(field.data_type()) {
            Some(dtype) => {
                targets.push(Target { source: i, dtype });
                names.push(field.name().clone());
                notices.extend(rounding_notice(field.name(), field.data_type()));
            }
            None if skip_unsupported => notices.push(format!(
                "column {}: left out (type {} is not supported)",
                field.name(),
                field.data_type()
            )),
            None => return Err(unsupported(field.name(), field.data_type())),
        }
    }
    Ok((targets, names, notices))
}

/// The rows of one column of a partition, converted, before encoding.
enum Values<'a> {
    Ints(Vec<i64>),
    Floats(Vec<f64>),
    Texts(Vec<Cow<'a, str>>),
}

impl Values<'_> {
    fn with_capacity(dtype: DataType, rows: usize) -> Self {
        match dtype {
            DataType::Int | DataType::Timestamp | DataType::Date | DataType::Interval => {
                Values::Ints(Vec::with_capacity(rows))
            }
            DataType::Float => Values::Floats(Vec::with_capacity(rows)),
            DataType::Str | DataType::Bool | DataType::Null => {
                Values::Texts(Vec::with_capacity(rows))
            }
        }
    }
}

/// A conversion failure of one value, before the caller names the file and
/// column.
type Convert<T> = std::result::Result<T, String>;

/// Appends the values of `array` (NULL rows get any value) to `out` as the
/// type `to`, converting where the types differ (see [`widen`]).
fn append<'a>(array: &'a dyn Array, to: DataType, out: &mut Values<'a>) -> Convert<()> {
    let from = katydid_type(array.data_type())
        .ok_or_else(|| format!("type {} is not supported", array.data_type()))?;
    match (from, to, out) {
        (DataType::Int, DataType::Int, Values::Ints(v))
        | (DataType::Timestamp, DataType::Timestamp, Values::Ints(v))
        | (DataType::Date, DataType::Date, Values::Ints(v)) => ints(array, v),
        (DataType::Date, DataType::Timestamp, Values::Ints(v)) => {
            let mut days = Vec::with_capacity(array.len());
            ints(array, &mut days)?;
            v.extend(days.into_iter().map(|d| d.saturating_mul(DAY_MICROS)));
            Ok(())
        }
        (DataType::Float, DataType::Float, Values::Floats(v)) => floats(array, v),
        (DataType::Int, DataType::Float, Values::Floats(v)) => {
            let mut i = Vec::with_capacity(array.len());
            ints(array, &mut i)?;
            v.extend(i.into_iter().map(|x| x as f64));
            Ok(())
        }
        (DataType::Str, DataType::Str, Values::Texts(v)) => texts(array, v),
        (_, DataType::Str, Values::Texts(v)) => {
            // A number or timestamp in a column that is text elsewhere: its
            // text as katydid prints it.
            let mut inner = Values::with_capacity(from, array.len());
            append(array, from, &mut inner)?;
            let value = |x: Value| Cow::Owned(x.to_string());
            match inner {
                Values::Ints(i) if from == DataType::Timestamp => {
                    v.extend(i.into_iter().map(|t| Cow::Owned(format_timestamp(t))));
                }
                Values::Ints(i) if from == DataType::Date => {
                    v.extend(i.into_iter().map(|d| value(Value::Date(d))));
                }
                Values::Ints(i) => v.extend(i.into_iter().map(|x| value(Value::Int(x)))),
                Values::Floats(f) => v.extend(f.into_iter().map(|x| value(Value::Float(x)))),
                Values::Texts(t) => v.extend(t),
            }
            Ok(())
        }
        (from, to, _) => Err(format!("cannot load {from} values into a {to} column")),
    }
}

/// Appends integers, timestamps (µs), dates (days) and integral decimals
/// as i64.
fn ints(array: &dyn Array, out: &mut Vec<i64>) -> Convert<()> {
    fn prim<T: ArrowPrimitiveType>(
        array: &dyn Array,
        out: &mut Vec<i64>,
        f: impl Fn(T::Native) -> Option<i64>,
        what: &str,
    ) -> Convert<()> {
        let a = array.as_primitive::<T>();
        let start = out.len();
        out.extend(a.values().iter().map(|&x| f(x).unwrap_or(i64::MIN)));
        // Only valid rows can fail; NULL rows hold whatever they hold.
        if let Some(row) = out[start..]
            .iter()
            .enumerate()
            .position(|(i, &x)| x == i64::MIN && a.is_valid(i) && f(a.value(i)).is_none())
        {
            return Err(format!("{what} {:?} is out of range", a.value(row)));
        }
        Ok(())
    }
    let some = |x: i64| Some(x);
    use ArrowType as A;
    match array.data_type() {
        A::Int8 => prim::<Int8Type>(array, out, |x| some(x.into()), "value"),
        A::Int16 => prim::<Int16Type>(array, out, |x| some(x.into()), "value"),
        A::Int32 => prim::<Int32Type>(array, out, |x| some(x.into()), "value"),
        A::Int64 => prim::<Int64Type>(array, out, some, "value"),
        A::UInt8 => prim::<UInt8Type>(array, out, |x| some(x.into()), "value"),
        A::UInt16 => prim::<UInt16Type>(array, out, |x| some(x.into()), "value"),
        A::UInt32 => prim::<UInt32Type>(array, out, |x| some(x.into()), "value"),
        A::UInt64 => prim::<UInt64Type>(array, out, |x| i64::try_from(x).ok(), "unsigned value"),
        A::Date32 => prim::<Date32Type>(array, out, |d| some(d.into()), "date"),
        A::Date64 => prim::<Date64Type>(array, out, |ms| some(ms.div_euclid(86_400_000)), "date"),
        A::Timestamp(TimeUnit::Second, _) => {
            prim::<TimestampSecondType>(array, out, |s| s.checked_mul(1_000_000), "timestamp")
        }
        A::Timestamp(TimeUnit::Millisecond, _) => {
            prim::<TimestampMillisecondType>(array, out, |ms| ms.checked_mul(1000), "timestamp")
        }
        A::Timestamp(TimeUnit::Microsecond, _) => {
            prim::<TimestampMicrosecondType>(array, out, some, "timestamp")
        }
        A::Timestamp(TimeUnit::Nanosecond, _) => prim::<TimestampNanosecondType>(
            array,
            out,
            |ns| some(ns.div_euclid(1000)),
            "timestamp",
        ),
        A::Decimal32(_, s) => {
            let s = *s;
            prim::<Decimal32Type>(array, out, |x| scaled_int(x.into(), s), "decimal")
        }
        A::Decimal64(_, s) => {
            let s = *s;
            prim::<Decimal64Type>(array, out, |x| scaled_int(x.into(), s), "decimal")
        }
        A::Decimal128(_, s) => {
            let s = *s;
            prim::<Decimal128Type>(array, out, |x| scaled_int(x, s), "decimal")
        }
        A::Decimal256(_, s) => {
            let s = *s;
            prim::<Decimal256Type>(array, out, |x| scaled_int(x.to_i128()?, s), "decimal")
        }
        A::Dictionary(_, _) => {
            let d = array.as_any_dictionary();
            let mut values = Vec::with_capacity(d.values().len());
            ints(d.values().as_ref(), &mut values)?;
            out.extend(
                d.normalized_keys()
                    .into_iter()
                    .map(|k| values.get(k).copied().unwrap_or(0)),
            );
            Ok(())
        }
        A::Null => {
            out.extend(std::iter::repeat_n(0, array.len()));
            Ok(())
        }
        other => Err(format!("type {other} does not load as integers")),
    }
}

/// An integral decimal's value: `digits · 10^-scale` with `scale <= 0`,
/// when it fits in i64.
fn scaled_int(digits: i128, scale: i8) -> Option<i64> {
    let factor = 10i128.checked_pow(u32::from(scale.unsigned_abs()))?;
    i64::try_from(digits.checked_mul(factor)?).ok()
}

/// Powers of ten that are exact doubles.
const EXACT_POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// The double nearest `digits · 10^-scale`: one correctly rounded division
/// when both operands are exact doubles (IEEE 754 rounds a quotient
/// correctly), else the decimal's text parsed (also correctly rounded).
fn decimal_f64(digits: i128, scale: i8) -> f64 {
    if digits.unsigned_abs() <= 1 << 53
        && let Some(&p) = EXACT_POW10.get(usize::from(scale.unsigned_abs()))
    {
        return if scale >= 0 {
            digits as f64 / p
        } else {
            digits as f64 * p
        };
    }
    decimal_text_f64(&digits.to_string(), scale)
}

/// `digits · 10^-scale` parsed from its text, `digits` an integer's text.
fn decimal_text_f64(digits: &str, scale: i8) -> f64 {
    format!("{digits}e{}", -i32::from(scale))
        .parse()
        .unwrap_or(f64::NAN)
}

/// Appends floats and non-integral decimals as f64.
fn floats(array: &dyn Array, out: &mut Vec<f64>) -> Convert<()> {
    use ArrowType as A;
    match array.data_type() {
        A::Float64 => out.extend_from_slice(array.as_primitive::<Float64Type>().values()),
        // The shortest decimal that reads back as the same f32, as a
        // double: `0.1f32` is 0.1, not 0.10000000149011612.
        A::Float32 => out.extend(
            array
                .as_primitive::<Float32Type>()
                .values()
                .iter()
                .map(|&x| f32_as_decimal(x)),
        ),
        A::Float16 => out.extend(
            array
                .as_primitive::<Float16Type>()
                .values()
                .iter()
                .map(|x| f32_as_decimal(x.to_f32())),
        ),
        A::Decimal32(_, s) => out.extend(
            array
                .as_primitive::<Decimal32Type>()
                .values()
                .iter()
                .map(|&x| decimal_f64(x.into(), *s)),
        ),
        A::Decimal64(_, s) => out.extend(
            array
                .as_primitive::<Decimal64Type>()
                .values()
                .iter()
                .map(|&x| decimal_f64(x.into(), *s)),
        ),
        A::Decimal128(_, s) => out.extend(
            array
                .as_primitive::<Decimal128Type>()
                .values()
                .iter()
                .map(|&x| decimal_f64(x, *s)),
        ),
        A::Decimal256(_, s) => out.extend(
            array
                .as_primitive::<Decimal256Type>()
                .values()
                .iter()
                .map(|x| decimal_text_f64(&x.to_string(), *s)),
        ),
        A::Dictionary(_, _) => {
            let d = array.as_any_dictionary();
            let mut values = Vec::with_capacity(d.values().len());
            floats(d.values().as_ref(), &mut values)?;
            out.extend(
                d.normalized_keys()
                    .into_iter()
                    .map(|k| values.get(k).copied().unwrap_or(0.0)),
            );
        }
        other => return Err(format!("type {other} does not load as floats")),
    }
    Ok(())
}

/// An f32 as the double of its shortest round-trip decimal.
pub(super) fn f32_as_decimal(x: f32) -> f64 {
    if x.is_finite() {
        x.to_string().parse().unwrap_or(f64::from(x))
    } else {
        f64::from(x)
    }
}

/// Appends strings, UTF-8 binaries and booleans as text.
fn texts<'a>(array: &'a dyn Array, out: &mut Vec<Cow<'a, str>>) -> Convert<()> {
    use ArrowType as A;
    let len = array.len();
    let text = |i: usize, bytes: &'a [u8]| -> Convert<Cow<'a, str>> {
        match std::str::from_utf8(bytes) {
            Ok(s) => Ok(Cow::Borrowed(s)),
            Err(_) if array.is_null(i) => Ok(Cow::Borrowed("")),
            Err(_) => Err(format!("row {} is not UTF-8 text", thousands(i as u64 + 1))),
        }
    };
    match array.data_type() {
        A::Utf8 => {
            let a = array.as_string::<i32>();
            out.extend((0..len).map(|i| Cow::Borrowed(a.value(i))));
        }
        A::LargeUtf8 => {
            let a = array.as_string::<i64>();
            out.extend((0..len).map(|i| Cow::Borrowed(a.value(i))));
        }
        A::Utf8View => {
            let a = array.as_string_view();
            out.extend((0..len).map(|i| Cow::Borrowed(a.value(i))));
        }
        A::Binary => {
            let a = array.as_binary::<i32>();
            for i in 0..len {
                out.push(text(i, a.value(i))?);
            }
        }
        A::LargeBinary => {
            let a = array.as_binary::<i64>();
            for i in 0..len {
                out.push(text(i, a.value(i))?);
            }
        }
        A::BinaryView => {
            let a = array.as_binary_view();
            for i in 0..len {
                out.push(text(i, a.value(i))?);
            }
        }
        A::Boolean => {
            let a = array.as_boolean();
            out.extend((0..len).map(|i| Cow::Borrowed(if a.value(i) { "true" } else { "false" })));
        }
        A::Null => out.extend(std::iter::repeat_n(Cow::Borrowed(""), len)),
        A::Dictionary(_, _) => {
            let d = array.as_any_dictionary();
            let mut values = Vec::new();
            texts_of_values(d.values().as_ref(), &mut values)?;
            out.extend(d.normalized_keys().into_iter().map(|k| {
                values
                    .get(k)
                    .map_or(Cow::Borrowed(""), |v: &Cow<'a, str>| v.clone())
            }));
        }
        other => return Err(format!("type {other} does not load as text")),
    }
    Ok(())
}

/// The texts of a dictionary's values (strings, or numbers as text).
fn texts_of_values<'a>(values: &'a dyn Array, out: &mut Vec<Cow<'a, str>>) -> Convert<()> {
    let mut v = Values::Texts(Vec::new());
    append(values, DataType::Str, &mut v)?;
    if let Values::Texts(t) = v {
        *out = t;
    }
    Ok(())
}

/// The validity of `arrays` placed end to end (`rows` in all), `None` when
/// no row is NULL.
fn validity(arrays: &[&dyn Array], rows: usize) -> Option<Bitmap> {
    let nulls: Vec<_> = arrays.iter().map(|a| a.logical_nulls()).collect();
    if nulls.iter().all(|n| n.as_ref().is_none_or(|n| n.null_count() == 0)) {
        return None;
    }
    if let [Some(only)] = nulls.as_slice() {
        // One piece (a partition inside one batch): its bits 64 at a time
        // (perf of a 10M-row register: setting the NULL bits one by one
        // was 3% of it).
        let bits = only.inner();
        let words: Vec<u64> = bits
            .inner()
            .bit_chunks(bits.offset(), bits.len())
            .iter_padded()
            .collect();
        return Some(Bitmap::from_words(words, rows));
    }
    let mut bitmap = Bitmap::new(rows, true);
    let mut at = 0;
    for (a, n) in arrays.iter().zip(&nulls) {
        if let Some(n) = n {
            for i in (0..a.len()).filter(|&i| n.is_null(i)) {
                bitmap.set(at + i, false);
            }
        }
        at += a.len();
    }
    Some(bitmap)
}

/// Encodes one column of a partition from its pieces `arrays` (placed end
/// to end, `rows` in all) as the type `dtype`.
///
/// # Errors
/// A message naming the value that cannot be converted (the caller names
/// the file and column).
fn encode_column(
    arrays: &[&dyn Array],
    rows: usize,
    dtype: DataType,
    hint: &DictHint,
) -> Convert<Column> {
    let validity = validity(arrays, rows);
    if validity.as_ref().is_some_and(Bitmap::none_set) {
        return Ok(Column::all_null(dtype, rows));
    }
    if dtype == DataType::Str
        && let Some((distinct, ids)) = short_view_ids(arrays, validity.as_ref())
            .or_else(|| dictionary_ids(arrays, validity.as_ref()))
    {
        let reuse = hint.lock().ok().and_then(|h| h.clone());
        let column = Column::encode_string_ids_reusing(&distinct, &ids, validity, reuse.as_ref());
        if let ColumnData::Dict { dict, .. } | ColumnData::DictRuns { dict, .. } = &column.data
            && reuse.as_ref().is_none_or(|r| !Arc::ptr_eq(r, dict))
            && let Ok(mut h) = hint.lock()
        {
            *h = Some(Arc::clone(dict));
        }
        return Ok(column);
    }
    let mut values = Values::with_capacity(dtype, rows);
    for a in arrays {
        append(*a, dtype, &mut values)?;
    }
    Ok(match values {
        Values::Ints(v) => Column::encode_ints(dtype, &v, validity),
        Values::Floats(v) => Column::encode_floats(v, validity),
        Values::Texts(t) => {
            let refs: Vec<&str> = t.iter().map(|s| s.as_ref()).collect();
            Column::encode_strings(&refs, validity)
        }
    })
}

/// The strings of `arrays` (placed end to end) as distinct strings and one
/// id per row (0 at NULL rows), when every piece is `Utf8View` and every
/// valid row holds at most 12 bytes, else `None`. Such a view is the
/// string itself (its length, then its bytes; Arrow's columnar format),
/// so rows are told apart by one 128-bit key instead of hashing and
/// comparing their bytes (perf of registering a 10M-row Polars frame,
/// whose strings are views: string hashing and `memcmp` were a quarter of
/// it). The bytes past the length are masked off, so a producer that does
/// not zero them cannot make one string two entries.
fn short_view_ids<'a>(
    arrays: &[&'a dyn Array],
    validity: Option<&Bitmap>,
) -> Option<(Vec<&'a str>, Vec<u32>)> {
    let pieces: Vec<&'a arrow_array::StringViewArray> = arrays
        .iter()
        .map(|a| a.as_string_view_opt())
        .collect::<Option<_>>()?;
    let rows = arrays.iter().map(|a| a.len()).sum();
    let mut ids = Vec::with_capacity(rows);
    let mut distinct: Vec<&'a str> = Vec::new();
    let mut seen: hashbrown::HashMap<u128, u32> = hashbrown::HashMap::new();
    let mut at = 0;
    for piece in pieces {
        for (i, &view) in piece.views().iter().enumerate() {
            if validity.is_some_and(|v| !v.get(at + i)) {
                ids.push(0);
                continue;
            }
            let len = view as u32;
            if len > 12 {
                return None;
            }
            let key = if len == 12 {
                view
            } else {
                view & ((1u128 << (32 + 8 * len)) - 1)
            };
            let next = distinct.len() as u32;
            let id = *seen.entry(key).or_insert_with(|| {
                distinct.push(piece.value(i));
                next
            });
            ids.push(id);
        }
        at += piece.len();
    }
    (!distinct.is_empty()).then_some((distinct, ids))
}

/// The strings of `arrays` (placed end to end) as distinct strings and one
/// id per row (0 at NULL rows), when every piece is a dictionary of
/// strings (`Utf8`, `LargeUtf8` or `Utf8View` values without NULLs), else
/// `None`. A row costs one lookup of its key in a table of the piece's
/// values; only the values some valid row uses are hashed, once per
/// piece, so a Parquet dictionary page (or a pandas/Polars categorical)
/// becomes katydid's dictionary without hashing every row's string. Equal
/// values, within a dictionary or across pieces, get one id, as
/// [`Column::encode_string_ids`] requires.
fn dictionary_ids<'a>(
    arrays: &[&'a dyn Array],
    validity: Option<&Bitmap>,
) -> Option<(Vec<&'a str>, Vec<u32>)> {
    use ArrowType as A;
    let rows = arrays.iter().map(|a| a.len()).sum();
    let mut ids: Vec<u32> = Vec::with_capacity(rows);
    let mut entries = EntryIds::default();
    let mut at = 0;
    for piece in arrays {
        let d = piece.as_any_dictionary_opt()?;
        let values = d.values();
        if values.null_count() > 0 {
            return None;
        }
        let value: Box<dyn Fn(usize) -> &'a str + 'a> = match values.data_type() {
            A::Utf8 => {
                let v = values.as_string::<i32>();
                Box::new(move |k| v.value(k))
            }
            A::LargeUtf8 => {
                let v = values.as_string::<i64>();
                Box::new(move |k| v.value(k))
            }
            A::Utf8View => {
                let v = values.as_string_view();
                Box::new(move |k| v.value(k))
            }
            _ => return None,
        };
        entries.source(values.len());
        let mut add = |i: usize, k: usize| -> Option<()> {
            if validity.is_some_and(|v| !v.get(at + i)) {
                ids.push(0);
                return Some(());
            }
            ids.push(entries.id(k, &value)?);
            Some(())
        };
        // Parquet's dictionaries have i32 keys: read in place.
        if let Some(d32) = piece.as_dictionary_opt::<Int32Type>() {
            for (i, &k) in d32.keys().values().iter().enumerate() {
                add(i, usize::try_from(k).unwrap_or(usize::MAX))?;
            }
        } else {
            for (i, k) in d.normalized_keys().into_iter().enumerate() {
                add(i, k)?;
            }
        }
        at += piece.len();
    }
    let distinct = entries.into_distinct();
    (!distinct.is_empty()).then_some((distinct, ids))
}

/// The dictionary a string column's last partition took, offered to the
/// next ([`Column::encode_string_ids_reusing`]): partitions of a column of
/// names mostly hold the same ones, and then share one dictionary from the
/// start instead of each allocating its own.
pub(crate) type DictHint = Mutex<Option<Arc<Dictionary>>>;

/// One [`DictHint`] per column of a load.
pub(crate) fn dict_hints(columns: usize) -> Vec<DictHint> {
    (0..columns).map(|_| Mutex::new(None)).collect()
}

/// One partition's columns in table order from `batches` (placed end to
/// end): column `c` is `sources[c]`'s array of each batch (`None`: the
/// column is not in that batch, all NULL there), loaded as `dtypes[c]`.
/// The columns are encoded in parallel on the current rayon pool; a string
/// column takes the dictionary of `hints[c]` when it holds the same
/// strings, and offers its own there.
///
/// # Errors
/// [`Error::Io`] naming `origin` and the column for a value that cannot be
/// converted; [`Error::Cancelled`] when `stop` says so.
pub(crate) fn encode_partition(
    batches: &[RecordBatch],
    sources: &[Vec<Option<usize>>],
    dtypes: &[DataType],
    names: &[String],
    origin: &Path,
    stop: &Stop,
    hints: &[DictHint],
) -> Result<Vec<Column>> {
    let rows: usize = batches.iter().map(RecordBatch::num_rows).sum();
    let nulls: Vec<arrow_array::ArrayRef> = batches
        .iter()
        .map(|b| arrow_array::new_null_array(&ArrowType::Null, b.num_rows()))
        .collect();
    (0..dtypes.len())
        .into_par_iter()
        .map(|c| {
            stop.check()?;
            let arrays: Vec<&dyn Array> = batches
                .iter()
                .zip(&nulls)
                .zip(&sources[c])
                .map(|((b, n), s)| match s {
                    Some(i) => b.column(*i).as_ref(),
                    None => n.as_ref(),
                })
                .collect();
            encode_column(&arrays, rows, dtypes[c], &hints[c])
                .map_err(|message| value_error(origin, &names[c], &message))
        })
        .collect()
}

/// A value of column `column` of `origin` that cannot be loaded.
pub(crate) fn value_error(origin: &Path, column: &str, message: &str) -> Error {
    invalid_data(origin, format!("column \"{column}\": {message}"))
}

/// An input that is not what it claims to be, as [`Error::Io`] naming it.
pub(crate) fn invalid_data(origin: &Path, message: String) -> Error {
    Error::Io {
        path: origin.to_path_buf(),
        source: std::io::Error::new(std::io::ErrorKind::InvalidData, message),
    }
}

/// Table-wide finishing of a load from encoded partitions in table order:
/// shared and table-wide dictionaries, first rows, fields, and the memory
/// reservation brought to the table's size.
pub(crate) fn finish_table(
    mut partitions: Vec<Partition>,
    names: Vec<String>,
    dtypes: &[DataType],
    table_name: &str,
    source: (crate::store::SourceFormat, u64),
    memory: Option<Reservation>,
) -> Result<(Table, Option<Reservation>)> {
    let (source_format, source_bytes) = source;
    crate::store::share_dictionaries(&mut partitions);
    crate::store::table_dictionaries(&mut partitions);
    let mut first_row = 0;
    for p in &mut partitions {
        p.first_row = first_row;
        first_row += p.rows;
    }
    let fields = unique_names(names)
        .into_iter()
        .zip(dtypes)
        .map(|(name, &dtype)| Field {
            name,
            dtype,
            note: None,
        })
        .collect();
    let table = Table {
        name: table_name.to_string(),
        fields,
        partitions,
        source_bytes,
        source_format,
    };
    let memory = match memory {
        Some(mut m) => {
            m.resize(table.heap_bytes(), || {
                format!(
                    "table \"{table_name}\" ({} rows)",
                    thousands(table.rows() as u64)
                )
            })?;
            Some(m)
        }
        None => None,
    };
    Ok((table, memory))
}

/// Reserves the bytes of partitions as they are encoded, against the load's
/// budget (if any).
pub(crate) struct Reserver<'a> {
    memory: Option<Mutex<Reservation>>,
    rows: AtomicUsize,
    table_name: &'a str,
}

impl<'a> Reserver<'a> {
    pub(crate) fn new(options: &LoadOptions, table_name: &'a str) -> Reserver<'a> {
        Reserver {
            memory: options
                .memory
                .as_ref()
                .map(|budget| Mutex::new(Reservation::empty(budget, "load"))),
            rows: AtomicUsize::new(0),
            table_name,
        }
    }

    /// Reserves a partition of `rows` rows holding `columns`.
    ///
    /// # Errors
    /// [`Error::MemoryLimit`] when the table so far passes the limit.
    pub(crate) fn reserve(&self, columns: &[Column], rows: usize) -> Result<()> {
        let rows = self.rows.fetch_add(rows, Ordering::Relaxed) + rows;
        let Some(memory) = &self.memory else {
            return Ok(());
        };
        let bytes = columns.iter().map(Column::heap_bytes).sum();
        let mut memory = memory
            .lock()
            .map_err(|_| Error::Internal("an encoding task panicked".into()))?;
        memory.grow(bytes, || {
            format!(
                "table \"{}\" after {} rows",
                self.table_name,
                thousands(rows as u64)
            )
        })
    }

    /// The reservation, for [`finish_table`].
    pub(crate) fn into_reservation(self) -> Result<Option<Reservation>> {
        self.memory
            .map(|m| {
                m.into_inner()
                    .map_err(|_| Error::Internal("an encoding task panicked".into()))
            })
            .transpose()
    }
}

/// The error a parallel load ends with, of the results of its partitions
/// (by index): the caller's cancel first, then the memory limit, then the
/// first other error in table order.
pub(crate) fn first_error<T>(stop: &Stop, results: &mut Vec<(usize, Result<T>)>) -> Result<()> {
    if stop.cancelled() {
        return Err(Error::Cancelled);
    }
    results.sort_unstable_by_key(|(index, _)| *index);
    let pick = |results: &mut Vec<(usize, Result<T>)>, f: &dyn Fn(&Error) -> bool| {
        let at = results
            .iter()
            .position(|(_, r)| r.as_ref().err().is_some_and(f))?;
        results.swap_remove(at).1.err()
    };
    if let Some(e) = pick(results, &|e| matches!(e, Error::MemoryLimit { .. })) {
        return Err(e);
    }
    if let Some(e) = pick(results, &|e| !matches!(e, Error::Cancelled)) {
        return Err(e);
    }
    if let Some(e) = pick(results, &|_| true) {
        return Err(e);
    }
    Ok(())
}

/// The reading side of [`load_arrow`]: the reader and the rows of a batch
/// not yet handed out.
struct Reading<R> {
    reader: R,
    pending: Option<RecordBatch>,
    next_index: usize,
    rows_read: u64,
    done: bool,
    error: Option<Error>,
}

/// Loads the batches of `reader` into a table named `table_name`, using the
/// current rayon pool (see the module docs). `origin` names the input in
/// error messages. Uses [`LoadOptions::partition_rows`],
/// `skip_unsupported`, `cancel`, `on_progress` and `memory`; the CSV
/// options are ignored.
///
/// # Errors
/// [`Error::NotSupported`] naming a column of a type katydid does not load
/// (unless [`LoadOptions::skip_unsupported`]); [`Error::Io`] naming
/// `origin` for a reader's error or a value that cannot be converted;
/// [`Error::Cancelled`]; [`Error::MemoryLimit`]. Nothing is returned on
/// error.
pub fn load_arrow<R: RecordBatchReader + Send>(
    reader: R,
    origin: &Path,
    table_name: &str,
    options: &LoadOptions,
) -> Result<Loaded> {
    let start = Instant::now();
    let meter = peak::PeakMeter::start();
    let stop = Stop::new(options.cancel.clone());
    stop.check()?;
    let schema = reader.schema();
    let (targets, names, notices) = targets(&schema, options.skip_unsupported)?;
    let dtypes: Vec<DataType> = targets.iter().map(|t| t.dtype).collect();
    let per_partition = options.partition_rows.max(1);
    let reserver = Reserver::new(options, table_name);
    let hints = dict_hints(dtypes.len());
    let reading = Mutex::new(Reading {
        reader,
        pending: None,
        next_index: 0,
        rows_read: 0,
        done: false,
        error: None,
    });
    let results: Mutex<Vec<(usize, Result<Partition>)>> = Mutex::new(Vec::new());
    let report = |done: u64| {
        if let Some(to) = &options.on_progress {
            to(Progress {
                phase: crate::control::Phase::Load,
                unit: ProgressUnit::Rows,
                done,
                total: 0,
                elapsed: start.elapsed(),
            });
        }
    };
    // The next partition's batches, cut to `per_partition` rows.
    let next = || -> Option<(usize, Vec<RecordBatch>)> {
        let mut r = reading.lock().ok()?;
        let mut batches = Vec::new();
        let mut rows = 0;
        while rows < per_partition && !r.done {
            if stop.stopped() {
                r.done = true;
                break;
            }
            let batch = match r.pending.take() {
                Some(b) => b,
                None => match r.reader.next() {
                    Some(Ok(b)) => {
                        r.rows_read += b.num_rows() as u64;
                        report(r.rows_read);
                        b
                    }
                    Some(Err(e)) => {
                        r.error = Some(invalid_data(origin, e.to_string()));
                        r.done = true;
                        stop.fail();
                        break;
                    }
                    None => {
                        r.done = true;
                        break;
                    }
                },
            };
            if batch.num_columns() != schema.fields().len() {
                r.error = Some(invalid_data(
                    origin,
                    format!(
                        "a batch of {} columns in a stream of {}",
                        batch.num_columns(),
                        schema.fields().len()
                    ),
                ));
                r.done = true;
                stop.fail();
                break;
            }
            let take = (per_partition - rows).min(batch.num_rows());
            if take < batch.num_rows() {
                r.pending = Some(batch.slice(take, batch.num_rows() - take));
            }
            if take > 0 {
                batches.push(batch.slice(0, take));
                rows += take;
            }
        }
        if rows == 0 {
            return None;
        }
        let index = r.next_index;
        r.next_index += 1;
        Some((index, batches))
    };
    rayon::broadcast(|_| {
        while let Some((index, batches)) = next() {
            let rows = batches.iter().map(RecordBatch::num_rows).sum();
            let sources: Vec<Vec<Option<usize>>> = targets
                .iter()
                .map(|t| vec![Some(t.source); batches.len()])
                .collect();
            let encoded = encode_partition(
                &batches, &sources, &dtypes, &names, origin, &stop, &hints,
            )
                .and_then(|mut columns| {
                    crate::store::share_repeated(&mut columns);
                    reserver.reserve(&columns, rows)?;
                    Ok(Partition {
                        rows,
                        first_row: 0,
                        columns,
                    })
                });
            if encoded.is_err() {
                stop.fail();
            }
            if let Ok(mut r) = results.lock() {
                r.push((index, encoded));
            }
        }
    });
    let reading = reading
        .into_inner()
        .map_err(|_| Error::Internal("the reading worker panicked".into()))?;
    report(reading.rows_read);
    let mut results = results
        .into_inner()
        .map_err(|_| Error::Internal("an encoding task panicked".into()))?;
    if stop.cancelled() {
        return Err(Error::Cancelled);
    }
    if let Some(e) = reading.error {
        return Err(e);
    }
    first_error(&stop, &mut results)?;
    let partitions: Vec<Partition> = results
        .into_iter()
        .map(|(_, r)| r)
        .collect::<Result<_>>()?;
    let (table, memory) = finish_table(
        partitions,
        names,
        &dtypes,
        table_name,
        (crate::store::SourceFormat::Arrow, 0),
        reserver.into_reservation()?,
    )?;
    Ok(Loaded {
        table,
        notices,
        peak_bytes: meter.and_then(|m| m.peak_bytes()),
        memory,
    })
}
