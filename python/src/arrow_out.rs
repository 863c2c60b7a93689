//! katydid's query results as Arrow record batches.
//!
//! # Layout
//! A result column of type integer becomes `Int64`, float `Float64`,
//! timestamp `Timestamp(Microsecond, None)` (katydid's timestamps are
//! microseconds since the epoch without a time zone), string `Utf8` and
//! boolean `Boolean`; NULLs go into the validity bitmap. A column holding a
//! value of another type than the one it declares (which no query should
//! produce) is given as `Utf8` of the values' text, as the REPL shows it,
//! rather than failing; a string column with more than 2 GiB of text in one
//! batch is `LargeUtf8`.
//!
//! # Design
//! The engine hands a result over row-major ([`QueryResult::rows`]); each
//! column is gathered here straight into Arrow buffers, columns and batches
//! side by side on rayon's global pool, without a Python object per value.
//! Batches hold [`BATCH_ROWS`] rows (the last fewer), katydid's partition
//! size. Each column is gathered in its declared layout, optimistically; a
//! column that does not fit it in some batch is gathered again in the next
//! wider layout, a second pass only in those rare cases.

use std::sync::Arc;

use arrow_array::builder::{
    BooleanBuilder, GenericStringBuilder, LargeStringBuilder, StringBuilder,
};
use arrow_array::{
    ArrayRef, BooleanArray, Float64Array, Int64Array, OffsetSizeTrait, RecordBatch,
    RecordBatchOptions, TimestampMicrosecondArray,
};
use arrow_buffer::{NullBufferBuilder, ScalarBuffer};
use arrow_schema::{ArrowError, DataType as ArrowType, Field, Schema, SchemaRef, TimeUnit};
use katydid::{DataType, QueryResult, Value};
use rayon::prelude::*;

/// Rows in one record batch (the last may have fewer).
pub const BATCH_ROWS: usize = 1 << 16;

/// How one result column is laid out in Arrow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Layout {
    Int,
    Float,
    Timestamp,
    Bool,
    /// Strings, or any column whose values do not all fit its type (their
    /// text).
    Text,
    /// Text of more than `i32::MAX` bytes in some batch.
    LargeText,
}

impl Layout {
    fn arrow_type(self) -> ArrowType {
        match self {
            Layout::Int => ArrowType::Int64,
            Layout::Float => ArrowType::Float64,
            Layout::Timestamp => ArrowType::Timestamp(TimeUnit::Microsecond, None),
            Layout::Bool => ArrowType::Boolean,
            Layout::Text => ArrowType::Utf8,
            Layout::LargeText => ArrowType::LargeUtf8,
        }
    }

    /// The layout to try when a column does not fit this one.
    fn wider(self) -> Layout {
        match self {
            Layout::Text | Layout::LargeText => Layout::LargeText,
            _ => Layout::Text,
        }
    }
}

/// A result's Arrow schema and its rows as record batches (none for an
/// empty result).
#[derive(Debug, Clone)]
pub struct ArrowResult {
    /// One nullable field per result column, named as the column.
    pub schema: SchemaRef,
    /// The rows in result order.
    pub batches: Vec<RecordBatch>,
}

/// Converts `result` to Arrow, gathering each column of each batch on
/// rayon's pool.
///
/// # Errors
/// An [`ArrowError`] if a batch cannot be assembled (a bug here: lengths
/// and types are consistent by construction).
pub fn to_arrow(result: &QueryResult) -> Result<ArrowResult, ArrowError> {
    let width = result.columns.len();
    let mut layouts: Vec<Layout> = (0..width)
        .map(|c| match result.types.get(c) {
            Some(DataType::Int | DataType::Null) => Layout::Int,
            Some(DataType::Float) => Layout::Float,
            Some(DataType::Timestamp) => Layout::Timestamp,
            Some(DataType::Bool) => Layout::Bool,
            Some(DataType::Str) | None => Layout::Text,
        })
        .collect();
    let starts: Vec<usize> = (0..result.rows.len()).step_by(BATCH_ROWS).collect();
    // arrays[c][b]: column c of batch b. A column whose values do not fit
    // its layout in some batch is gathered again, whole, in the next
    // wider layout (any type -> Utf8 -> LargeUtf8); at most twice.
    let mut arrays: Vec<Vec<Option<ArrayRef>>> = vec![vec![None; starts.len()]; width];
    loop {
        arrays
            .par_iter_mut()
            .enumerate()
            .flat_map(|(c, column)| {
                let layout = layouts[c];
                column
                    .par_iter_mut()
                    .enumerate()
                    .map(move |(b, slot)| (c, b, slot, layout))
            })
            .filter(|(_, _, slot, _)| slot.is_none())
            .for_each(|(c, b, slot, layout)| {
                let end = result.rows.len().min(starts[b] + BATCH_ROWS);
                *slot = gather(&result.rows[starts[b]..end], c, layout);
            });
        let mut settled = true;
        for (c, column) in arrays.iter_mut().enumerate() {
            if column.iter().any(Option::is_none) {
                settled = false;
                layouts[c] = layouts[c].wider();
                column.iter_mut().for_each(|slot| *slot = None);
            }
        }
        if settled {
            break;
        }
    }
    let fields: Vec<Field> = result
        .columns
        .iter()
        .zip(&layouts)
        .map(|(name, layout)| Field::new(name.clone(), layout.arrow_type(), true))
        .collect();
    let schema: SchemaRef = Arc::new(Schema::new(fields));
    let batches = (0..starts.len())
        .map(|b| {
            let columns: Vec<ArrayRef> = arrays
                .iter_mut()
                .map(|column| {
                    column[b].take().ok_or_else(|| {
                        ArrowError::ComputeError("a result column was not converted".into())
                    })
                })
                .collect::<Result<_, _>>()?;
            let rows = result.rows.len().min(starts[b] + BATCH_ROWS) - starts[b];
            RecordBatch::try_new_with_options(
                schema.clone(),
                columns,
                &RecordBatchOptions::new().with_row_count(Some(rows)),
            )
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(ArrowResult { schema, batches })
}

/// Bytes a value takes in a `Utf8` column: a string's own, else an estimate
/// of its text (numbers and timestamps are short), to size the buffer.
fn text_len(value: &Value) -> usize {
    match value {
        Value::Null => 0,
        Value::Str(s) => s.len(),
        _ => 32,
    }
}

static NULL: Value = Value::Null;

/// Value `c` of `row`; NULL past its end.
fn cell_of(row: &[Value], c: usize) -> &Value {
    row.get(c).unwrap_or(&NULL)
}

/// Column `c` of `rows` as an Arrow array of `layout`, or `None` when a
/// value does not fit it (a value of another type; more text than `Utf8`
/// addresses).
fn gather(rows: &[Vec<Value>], c: usize, layout: Layout) -> Option<ArrayRef> {
    let cell = |row| cell_of(row, c);
    Some(match layout {
        Layout::Int | Layout::Timestamp => {
            let mut values = Vec::with_capacity(rows.len());
            let mut nulls = NullBufferBuilder::new(rows.len());
            for row in rows {
                match (layout, cell(row)) {
                    (Layout::Int, Value::Int(v)) | (Layout::Timestamp, Value::Timestamp(v)) => {
                        values.push(*v);
                        nulls.append_non_null();
                    }
                    (_, Value::Null) => {
                        values.push(0);
                        nulls.append_null();
                    }
                    _ => return None,
                }
            }
            let values = ScalarBuffer::from(values);
            if layout == Layout::Int {
                Arc::new(Int64Array::new(values, nulls.finish()))
            } else {
                Arc::new(TimestampMicrosecondArray::new(values, nulls.finish()))
            }
        }
        Layout::Float => {
            let mut values = Vec::with_capacity(rows.len());
            let mut nulls = NullBufferBuilder::new(rows.len());
            for row in rows {
                match cell(row) {
                    Value::Float(v) => {
                        values.push(*v);
                        nulls.append_non_null();
                    }
                    Value::Int(v) => {
                        values.push(*v as f64);
                        nulls.append_non_null();
                    }
                    Value::Null => {
                        values.push(0.0);
                        nulls.append_null();
                    }
                    _ => return None,
                }
            }
            Arc::new(Float64Array::new(
                ScalarBuffer::from(values),
                nulls.finish(),
            ))
        }
        Layout::Bool => {
            let mut builder = BooleanBuilder::with_capacity(rows.len());
            for row in rows {
                match cell(row) {
                    Value::Bool(b) => builder.append_value(*b),
                    Value::Null => builder.append_null(),
                    _ => return None,
                }
            }
            let array: BooleanArray = builder.finish();
            Arc::new(array)
        }
        Layout::Text => {
            let bytes: usize = rows.iter().map(|r| text_len(cell(r))).sum();
            if bytes > i32::MAX as usize {
                return None;
            }
            let mut builder = StringBuilder::with_capacity(rows.len(), bytes);
            append_text(&mut builder, rows, c);
            Arc::new(builder.finish())
        }
        Layout::LargeText => {
            let bytes: usize = rows.iter().map(|r| text_len(cell(r))).sum();
            let mut builder = LargeStringBuilder::with_capacity(rows.len(), bytes);
            append_text(&mut builder, rows, c);
            Arc::new(builder.finish())
        }
    })
}

/// Appends column `c` of `rows` as text: strings as they are, other values
/// as the REPL shows them.
fn append_text<O: OffsetSizeTrait>(
    builder: &mut GenericStringBuilder<O>,
    rows: &[Vec<Value>],
    c: usize,
) {
    for row in rows {
        match cell_of(row, c) {
            Value::Null => builder.append_null(),
            Value::Str(s) => builder.append_value(s),
            other => builder.append_value(other.to_string()),
        }
    }
}
