//! Query results as Arrow record batches ([`crate::Database::query_arrow`]).
//!
//! # Layout
//! A result column of type integer becomes `Int64`, float `Float64`,
//! timestamp `Timestamp(Microsecond, None)` (microseconds since the epoch,
//! no time zone, as katydid keeps them), date `Date32` (days since the
//! epoch, narrowed from katydid's i64: a date past ±5.8 million years is
//! an error), interval `Duration(Microsecond)`, string `Utf8` (`LargeUtf8` past
//! 2 GiB of text in the column), boolean `Boolean`, and a column of
//! NULL's type `Int64` (all NULL); NULLs are the validity bitmap. An
//! integer column holding a sum past i64 ([`Value::HugeInt`]) becomes
//! `Decimal128(38, 0)`, exact. A column holding values of another type
//! than it declares (no query should make one) becomes the `Utf8` of the
//! values' text, as the REPL shows them, rather than failing. Fields are
//! nullable and named as the result's columns. The rows come in batches
//! of at most [`BATCH_ROWS`] rows (none for an empty result): a scan's are
//! its partitions' selected rows, those of consecutive partitions together
//! while they fit; other results' are [`BATCH_ROWS`] rows (the last fewer),
//! zero-copy slices of one array per column.
//!
//! # Design
//! A plan that is a scan (filter and projection: no aggregate, ORDER BY,
//! LIMIT or OFFSET, the results that are big) runs straight to owned
//! columns, a piece per partition (`exec::execute_pieces`), whose buffers
//! become a batch's without a copy: integer, float and timestamp buffers are moved, strings hand
//! over their one byte buffer and have their offsets narrowed to `i32`,
//! validity and boolean bitmaps share their 64-bit words (katydid's bit
//! `i` is bit `i % 64` of word `i / 64`, Arrow's layout on little-endian
//! machines). Every other statement (aggregates, sorts, composed queries,
//! EXPLAIN …) gives few rows, or rows that exist only as rows: they are
//! gathered column by column from [`QueryResult::rows`], on rayon's pool.
//! [`ArrowResult::rows`] goes back to [`Value`]s for the row-wise API.

use std::ops::Range;
use std::sync::Arc;
use std::time::Duration;

use arrow_array::builder::NullBufferBuilder;
use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, Decimal128Type, DurationMicrosecondType, Float64Type, Int64Type,
    TimestampMicrosecondType,
};
use arrow_array::{
    Array as _, ArrayRef, BooleanArray, Date32Array, Decimal128Array, DurationMicrosecondArray,
    Float64Array, GenericStringArray, Int64Array, OffsetSizeTrait, RecordBatch, RecordBatchOptions,
    TimestampMicrosecondArray,
};
use arrow_buffer::{BooleanBuffer, Buffer, NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow_schema::{DataType as ArrowType, Field, Schema, SchemaRef, TimeUnit};
use rayon::prelude::*;

use crate::engine::QueryResult;
use crate::error::{Error, Result};
use crate::exec::vector::{Array, Data, StrBuf, Strs};
use crate::store::Bitmap;
use crate::types::{DataType, Value};

/// Rows in one record batch of an [`ArrowResult`] (the last may have
/// fewer): katydid's partition size.
pub const BATCH_ROWS: usize = 1 << 16;

/// The result of one statement as Arrow record batches
/// ([`crate::Database::query_arrow`]; layout in the module docs).
#[derive(Debug, Clone)]
pub struct ArrowResult {
    /// One nullable field per result column, named as the column.
    pub schema: SchemaRef,
    /// The rows in result order, at most [`BATCH_ROWS`] a batch; no batch
    /// when there is no row.
    pub batches: Vec<RecordBatch>,
    /// The katydid type of each column (as [`QueryResult::types`]).
    pub types: Vec<DataType>,
    /// Rows in all the batches.
    pub rows: usize,
    /// Table rows the query read (after partition skipping).
    pub rows_scanned: usize,
    /// Wall time from SQL text to the batches.
    pub elapsed: Duration,
}

impl ArrowResult {
    /// Output column names.
    pub fn columns(&self) -> Vec<String> {
        self.schema
            .fields()
            .iter()
            .map(|f| f.name().clone())
            .collect()
    }

    /// A row-wise result as Arrow (the rows are gathered column by column,
    /// in parallel); `rows_scanned` and `elapsed` are kept.
    ///
    /// # Errors
    /// [`Error::Internal`] if a batch cannot be assembled (a bug: lengths
    /// and types agree by construction).
    pub fn from_rows(result: &QueryResult) -> Result<ArrowResult> {
        let types = result.types.clone();
        let columns: Vec<ArrayRef> = types
            .par_iter()
            .enumerate()
            .map(|(c, &dtype)| column_of_rows(dtype, &result.rows, c))
            .collect::<Result<_>>()?;
        let (schema, batches) = batches(&result.columns, columns, result.rows.len())?;
        Ok(ArrowResult {
            schema,
            batches,
            types,
            rows: result.rows.len(),
            rows_scanned: result.rows_scanned,
            elapsed: result.elapsed,
        })
    }

    /// Rows `range` (clamped to the result) as values, as
    /// [`crate::Database::query`] gives them: `Int64` as [`Value::Int`],
    /// `Decimal128` as [`Value::Int`] or [`Value::HugeInt`], `Float64`,
    /// timestamps, strings and booleans as theirs, NULL as [`Value::Null`].
    pub fn rows(&self, range: Range<usize>) -> Vec<Vec<Value>> {
        let end = range.end.min(self.rows);
        let start = range.start.min(end);
        let mut out: Vec<Vec<Value>> = Vec::with_capacity(end - start);
        let mut first = 0;
        for batch in &self.batches {
            let n = batch.num_rows();
            let (a, b) = (start.max(first), end.min(first + n));
            if a < b {
                let at = out.len();
                out.extend((a..b).map(|_| Vec::with_capacity(batch.num_columns())));
                for column in batch.columns() {
                    for (row, i) in out[at..].iter_mut().zip(a - first..b - first) {
                        row.push(value_at(column.as_ref(), i));
                    }
                }
            }
            first += n;
            if first >= end {
                break;
            }
        }
        out
    }

    /// The whole result row-major, as [`crate::Database::query`] returns
    /// it.
    pub fn to_query_result(&self) -> QueryResult {
        QueryResult {
            columns: self.columns(),
            types: self.types.clone(),
            rows: self.rows(0..self.rows),
            rows_scanned: self.rows_scanned,
            elapsed: self.elapsed,
        }
    }
}

/// Value `i` of an array this module made.
fn value_at(array: &dyn arrow_array::Array, i: usize) -> Value {
    if array.is_null(i) {
        return Value::Null;
    }
    match array.data_type() {
        ArrowType::Int64 => Value::Int(array.as_primitive::<Int64Type>().value(i)),
        ArrowType::Float64 => Value::Float(array.as_primitive::<Float64Type>().value(i)),
        ArrowType::Timestamp(TimeUnit::Microsecond, _) => {
            Value::Timestamp(array.as_primitive::<TimestampMicrosecondType>().value(i))
        }
        ArrowType::Date32 => Value::Date(i64::from(array.as_primitive::<Date32Type>().value(i))),
        ArrowType::Duration(TimeUnit::Microsecond) => {
            Value::Interval(array.as_primitive::<DurationMicrosecondType>().value(i))
        }
        ArrowType::Decimal128(_, _) => {
            Value::from_i128(array.as_primitive::<Decimal128Type>().value(i))
        }
        ArrowType::Utf8 => Value::str(array.as_string::<i32>().value(i)),
        ArrowType::LargeUtf8 => Value::str(array.as_string::<i64>().value(i)),
        ArrowType::Boolean => Value::Bool(array.as_boolean().value(i)),
        _ => Value::Null,
    }
}

/// The schema of `columns` (named `names`) and the columns cut into
/// batches of [`BATCH_ROWS`] rows (zero-copy slices).
fn batches(
    names: &[String],
    columns: Vec<ArrayRef>,
    rows: usize,
) -> Result<(SchemaRef, Vec<RecordBatch>)> {
    let fields: Vec<Field> = names
        .iter()
        .zip(&columns)
        .map(|(name, c)| Field::new(name.clone(), c.data_type().clone(), true))
        .collect();
    let schema: SchemaRef = Arc::new(Schema::new(fields));
    let batches = (0..rows)
        .step_by(BATCH_ROWS)
        .map(|start| {
            let len = BATCH_ROWS.min(rows - start);
            RecordBatch::try_new_with_options(
                schema.clone(),
                columns.iter().map(|c| c.slice(start, len)).collect(),
                &RecordBatchOptions::new().with_row_count(Some(len)),
            )
            .map_err(internal)
        })
        .collect::<Result<Vec<_>>>()?;
    Ok((schema, batches))
}

/// An Arrow error, which only a bug here can cause.
fn internal(e: arrow_schema::ArrowError) -> Error {
    Error::Internal(format!("arrow result: {e}"))
}

/// A scan's columns as an [`ArrowResult`]'s schema and batches:
/// `pieces[c][p]` is column `c` (of type `types[c]`) of the `p`-th
/// partition with selected rows, `rows` rows in all. Consecutive pieces
/// are grouped up to [`BATCH_ROWS`] rows, each group a batch: a group of
/// one piece (a whole partition) is moved into Arrow, a group of several
/// joined first. Groups are converted in parallel.
///
/// # Errors
/// [`Error::Internal`] if a batch cannot be assembled (a bug).
pub(crate) fn from_pieces(
    names: &[String],
    types: &[DataType],
    pieces: Vec<Vec<Array<'static>>>,
    rows: usize,
) -> Result<(SchemaRef, Vec<RecordBatch>)> {
    let lens: Vec<usize> = pieces
        .first()
        .map(|p| p.iter().map(Array::len).collect())
        .unwrap_or_default();
    if lens.iter().sum::<usize>() == 0 {
        // No row (or no column): the columns' types from empty arrays.
        let columns = types
            .iter()
            .map(|&t| column_of_array(t, Array::concat(t, Vec::new())))
            .collect::<Result<Vec<_>>>()?;
        return batches(names, columns, rows);
    }
    let mut groups: Vec<usize> = Vec::new();
    let (mut count, mut total) = (0, 0);
    for &n in &lens {
        if count > 0 && total + n > BATCH_ROWS {
            groups.push(count);
            (count, total) = (0, 0);
        }
        count += 1;
        total += n;
    }
    groups.push(count);
    let mut columns: Vec<std::vec::IntoIter<Array<'static>>> =
        pieces.into_iter().map(Vec::into_iter).collect();
    let work: Vec<Vec<Vec<Array<'static>>>> = groups
        .iter()
        .map(|&g| {
            columns
                .iter_mut()
                .map(|c| c.by_ref().take(g).collect())
                .collect()
        })
        .collect();
    let converted: Vec<Vec<ArrayRef>> = work
        .into_par_iter()
        .map(|group| {
            group
                .into_iter()
                .zip(types)
                .map(|(parts, &t)| column_of_array(t, Array::concat(t, parts)))
                .collect::<Result<Vec<_>>>()
        })
        .collect::<Result<_>>()?;
    let first: Vec<ArrowType> = converted[0].iter().map(|a| a.data_type().clone()).collect();
    if converted
        .iter()
        .any(|g| g.iter().zip(&first).any(|(a, t)| a.data_type() != t))
    {
        // A column laid out differently in two batches (one batch's
        // strings past 2 GiB; values not of the column's type): through
        // values, so that every batch has the schema.
        let mut values: Vec<Vec<Value>> = Vec::with_capacity(rows);
        for g in &converted {
            let n = g.first().map_or(0, |a| a.len());
            values.extend((0..n).map(|i| g.iter().map(|a| value_at(a.as_ref(), i)).collect()));
        }
        let columns = types
            .par_iter()
            .enumerate()
            .map(|(c, &t)| column_of_rows(t, &values, c))
            .collect::<Result<Vec<_>>>()?;
        return batches(names, columns, values.len());
    }
    let fields: Vec<Field> = names
        .iter()
        .zip(first)
        .map(|(name, t)| Field::new(name.clone(), t, true))
        .collect();
    let schema: SchemaRef = Arc::new(Schema::new(fields));
    let batches = converted
        .into_iter()
        .map(|columns| {
            let n = columns.first().map_or(0, |a| a.len());
            RecordBatch::try_new_with_options(
                schema.clone(),
                columns,
                &RecordBatchOptions::new().with_row_count(Some(n)),
            )
            .map_err(internal)
        })
        .collect::<Result<Vec<_>>>()?;
    Ok((schema, batches))
}

/// A bitmap's bits as an Arrow boolean buffer (the same packed words).
fn boolean_buffer(bits: &Bitmap) -> BooleanBuffer {
    let len = bits.len();
    let words: Vec<u64> = (0..len.div_ceil(64)).map(|w| bits.word(w)).collect();
    BooleanBuffer::new(Buffer::from_vec(words), 0, len)
}

/// Dates (days since the epoch) as Arrow's `Date32` values.
///
/// # Errors
/// A date whose day count does not fit an i32.
fn date32s(days: &[i64]) -> Result<ScalarBuffer<i32>> {
    let narrowed: Option<Vec<i32>> = days.iter().map(|&d| i32::try_from(d).ok()).collect();
    narrowed
        .map(ScalarBuffer::from)
        .ok_or_else(|| Error::Execution("a date past the range of Arrow's Date32".into()))
}

/// One whole result column as an Arrow array, its buffers moved where the
/// layouts agree.
fn column_of_array(dtype: DataType, array: Array<'static>) -> Result<ArrayRef> {
    let nulls = array
        .validity
        .as_ref()
        .map(|v| NullBuffer::new(boolean_buffer(v)));
    Ok(match (dtype, array.data) {
        (DataType::Timestamp, Data::Int(v)) => {
            Arc::new(TimestampMicrosecondArray::new(ScalarBuffer::from(v), nulls))
        }
        (DataType::Date, Data::Int(v)) => Arc::new(Date32Array::new(date32s(&v)?, nulls)),
        (DataType::Interval, Data::Int(v)) => {
            Arc::new(DurationMicrosecondArray::new(ScalarBuffer::from(v), nulls))
        }
        (DataType::Int | DataType::Null, Data::Int(v)) => {
            Arc::new(Int64Array::new(ScalarBuffer::from(v), nulls))
        }
        (DataType::Float, Data::Float(v)) => {
            Arc::new(Float64Array::new(ScalarBuffer::from(v.into_owned()), nulls))
        }
        (DataType::Float, Data::Int(v)) => {
            let v: Vec<f64> = v.into_iter().map(|x| x as f64).collect();
            Arc::new(Float64Array::new(ScalarBuffer::from(v), nulls))
        }
        (DataType::Bool, Data::Bool(b)) => Arc::new(BooleanArray::new(boolean_buffer(&b), nulls)),
        (DataType::Str, Data::Str(s)) => {
            let buf = match s {
                Strs::Owned(b) => b,
                other => other.to_buf(),
            };
            string_array(buf, nulls)?
        }
        (dtype, data) => {
            // Any other pairing (a NULL constant's buffer under a typed
            // column): through values, rare.
            let a = Array {
                dtype,
                data,
                validity: array.validity,
            };
            let rows: Vec<Vec<Value>> = (0..a.len()).map(|i| vec![a.value(i)]).collect();
            column_of_rows(dtype, &rows, 0)?
        }
    })
}

/// Strings as `Utf8` with the buffer's bytes (moved) and its offsets
/// narrowed, or `LargeUtf8` when the bytes pass `i32::MAX`.
fn string_array(buf: StrBuf, nulls: Option<NullBuffer>) -> Result<ArrayRef> {
    let (offsets, bytes) = buf.into_parts();
    let bytes = Buffer::from_vec(bytes.into_bytes());
    if i32::try_from(bytes.len()).is_ok() {
        let offsets: Vec<i32> = offsets.iter().map(|&o| o as i32).collect();
        string_of::<i32>(offsets, bytes, nulls)
    } else {
        let offsets: Vec<i64> = offsets.iter().map(|&o| o as i64).collect();
        string_of::<i64>(offsets, bytes, nulls)
    }
}

/// A string array of `offsets` into `bytes` (at least one offset).
fn string_of<O: OffsetSizeTrait>(
    mut offsets: Vec<O>,
    bytes: Buffer,
    nulls: Option<NullBuffer>,
) -> Result<ArrayRef> {
    if offsets.is_empty() {
        offsets.push(O::usize_as(0));
    }
    let offsets = OffsetBuffer::new(ScalarBuffer::from(offsets));
    Ok(Arc::new(
        GenericStringArray::<O>::try_new(offsets, bytes, nulls).map_err(internal)?,
    ))
}

/// How a column of rows is laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Layout {
    /// Every value is of the column's type (or NULL).
    Declared,
    /// An integer column with a sum past i64: `Decimal128(38, 0)`.
    Decimal,
    /// Some value of another type: the values' text.
    Text,
}

/// Column `c` of `rows` (a missing value is NULL) as an Arrow array of
/// `dtype`'s layout (see the module docs).
fn column_of_rows(dtype: DataType, rows: &[Vec<Value>], c: usize) -> Result<ArrayRef> {
    static NULL: Value = Value::Null;
    fn at(row: &[Value], c: usize) -> &Value {
        row.get(c).unwrap_or(&NULL)
    }
    let mut layout = Layout::Declared;
    for row in rows {
        let fits = matches!(
            (dtype, at(row, c)),
            (_, Value::Null)
                | (DataType::Int | DataType::Null, Value::Int(_))
                | (DataType::Timestamp, Value::Timestamp(_))
                | (DataType::Date, Value::Date(_))
                | (DataType::Interval, Value::Interval(_))
                | (DataType::Float, Value::Float(_) | Value::Int(_))
                | (DataType::Bool, Value::Bool(_))
                | (DataType::Str, Value::Str(_))
        );
        if fits {
            continue;
        }
        if matches!(
            (dtype, at(row, c)),
            (DataType::Int | DataType::Null, Value::HugeInt(_))
        ) {
            layout = Layout::Decimal;
        } else {
            layout = Layout::Text;
            break;
        }
    }
    let n = rows.len();
    let mut nulls = NullBufferBuilder::new(n);
    for row in rows {
        nulls.append(!at(row, c).is_null());
    }
    let nulls = nulls.finish();
    Ok(match (layout, dtype) {
        (Layout::Text, _) | (Layout::Declared, DataType::Str) => {
            let bytes = rows
                .iter()
                .map(|r| match at(r, c) {
                    Value::Str(s) => s.len(),
                    Value::Null => 0,
                    _ => 24,
                })
                .sum();
            let mut buf = StrBuf::with_capacity_bytes(n, bytes);
            for row in rows {
                match at(row, c) {
                    Value::Null => buf.push(""),
                    Value::Str(s) => buf.push(s),
                    other => buf.push_with(|out| {
                        use std::fmt::Write;
                        let _ = write!(out, "{other}");
                    }),
                }
            }
            string_array(buf, nulls)?
        }
        (Layout::Decimal, _) => {
            let values: Vec<i128> = rows
                .iter()
                .map(|r| at(r, c).as_i128().unwrap_or(0))
                .collect();
            Arc::new(
                Decimal128Array::new(ScalarBuffer::from(values), nulls)
                    .with_precision_and_scale(38, 0)
                    .map_err(internal)?,
            )
        }
        (Layout::Declared, DataType::Float) => {
            let values: Vec<f64> = rows
                .iter()
                .map(|r| match at(r, c) {
                    Value::Float(f) => *f,
                    Value::Int(i) => *i as f64,
                    _ => 0.0,
                })
                .collect();
            Arc::new(Float64Array::new(ScalarBuffer::from(values), nulls))
        }
        (Layout::Declared, DataType::Bool) => {
            let values =
                BooleanBuffer::collect_bool(n, |i| matches!(at(&rows[i], c), Value::Bool(true)));
            Arc::new(BooleanArray::new(values, nulls))
        }
        (
            Layout::Declared,
            DataType::Int
            | DataType::Null
            | DataType::Timestamp
            | DataType::Date
            | DataType::Interval,
        ) => {
            let values: Vec<i64> = rows
                .iter()
                .map(|r| match at(r, c) {
                    Value::Int(v) | Value::Timestamp(v) | Value::Date(v) | Value::Interval(v) => *v,
                    _ => 0,
                })
                .collect();
            if dtype == DataType::Date {
                return Ok(Arc::new(Date32Array::new(date32s(&values)?, nulls)));
            }
            let values = ScalarBuffer::from(values);
            if dtype == DataType::Timestamp {
                Arc::new(TimestampMicrosecondArray::new(values, nulls))
            } else if dtype == DataType::Interval {
                Arc::new(DurationMicrosecondArray::new(values, nulls))
            } else {
                Arc::new(Int64Array::new(values, nulls))
            }
        }
    })
}
