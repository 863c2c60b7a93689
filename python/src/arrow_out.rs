//! katydid's query results as Arrow record batches.
//!
//! # Layout
//! A result column of type integer becomes `Int64`, float `Float64`,
//! timestamp `Timestamp(Microsecond, None)` (katydid's timestamps are
//! microseconds since the epoch without a time zone), string `Utf8` and
//! boolean `Boolean`; NULLs go into the validity bitmap. A column holding a
//! value of another type than the one it declares (which no query should
//! produce) is given as `Utf8` of the values' text, as the REPL shows it,
//! rather than failing.
//!
//! # Design
//! The engine hands a result over row-major ([`QueryResult::rows`]); each
//! column is gathered here straight into Arrow buffers, columns and batches
//! side by side on rayon's global pool, without a Python object per value.
//! Batches hold at most [`BATCH_ROWS`] rows and at most [`BATCH_TEXT_BYTES`]
//! bytes of text in any one string column, so `Utf8`'s 32-bit offsets never
//! overflow.

use std::sync::Arc;

use arrow_array::builder::{BooleanBuilder, StringBuilder};
use arrow_array::{
    ArrayRef, BooleanArray, Float64Array, Int64Array, RecordBatch, RecordBatchOptions,
    TimestampMicrosecondArray,
};
use arrow_buffer::{NullBufferBuilder, ScalarBuffer};
use arrow_schema::{ArrowError, DataType as ArrowType, Field, Schema, SchemaRef, TimeUnit};
use katydid::{DataType, QueryResult, Value};
use rayon::prelude::*;

/// Most rows in one record batch.
pub const BATCH_ROWS: usize = 1 << 20;

/// Most bytes of text one string column may hold in one batch (a GiB, half
/// of what `Utf8`'s `i32` offsets address).
pub const BATCH_TEXT_BYTES: usize = 1 << 30;

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
}

impl Layout {
    fn arrow_type(self) -> ArrowType {
        match self {
            Layout::Int => ArrowType::Int64,
            Layout::Float => ArrowType::Float64,
            Layout::Timestamp => ArrowType::Timestamp(TimeUnit::Microsecond, None),
            Layout::Bool => ArrowType::Boolean,
            Layout::Text => ArrowType::Utf8,
        }
    }

    /// Whether `value` can be stored in this layout without turning it
    /// into text (NULL always can; an integer can in a float column).
    fn holds(self, value: &Value) -> bool {
        matches!(
            (self, value),
            (_, Value::Null)
                | (Layout::Int, Value::Int(_))
                | (Layout::Float, Value::Float(_) | Value::Int(_))
                | (Layout::Timestamp, Value::Timestamp(_))
                | (Layout::Bool, Value::Bool(_))
                | (Layout::Text, _)
        )
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
    let layouts: Vec<Layout> = (0..width)
        .into_par_iter()
        .map(|c| {
            let declared = match result.types.get(c) {
                Some(DataType::Int) => Layout::Int,
                Some(DataType::Float) => Layout::Float,
                Some(DataType::Timestamp) => Layout::Timestamp,
                Some(DataType::Bool) => Layout::Bool,
                Some(DataType::Str) | None => Layout::Text,
            };
            let fits = result
                .rows
                .iter()
                .all(|row| row.get(c).is_none_or(|v| declared.holds(v)));
            if fits { declared } else { Layout::Text }
        })
        .collect();
    let fields: Vec<Field> = result
        .columns
        .iter()
        .zip(&layouts)
        .map(|(name, layout)| Field::new(name.clone(), layout.arrow_type(), true))
        .collect();
    let schema: SchemaRef = Arc::new(Schema::new(fields));
    let bounds = batch_bounds(result, &layouts);
    let batches = bounds
        .par_iter()
        .map(|&(start, end)| {
            let rows = &result.rows[start..end];
            let columns: Vec<ArrayRef> = layouts
                .par_iter()
                .enumerate()
                .map(|(c, layout)| gather(rows, c, *layout))
                .collect();
            RecordBatch::try_new_with_options(
                schema.clone(),
                columns,
                &RecordBatchOptions::new().with_row_count(Some(rows.len())),
            )
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(ArrowResult { schema, batches })
}

/// Splits the rows into `(start, end)` ranges of at most [`BATCH_ROWS`]
/// rows and [`BATCH_TEXT_BYTES`] of text per string column (a single
/// longer value still gets a batch of its own).
fn batch_bounds(result: &QueryResult, layouts: &[Layout]) -> Vec<(usize, usize)> {
    let rows = result.rows.len();
    let text: Vec<usize> = (0..layouts.len())
        .filter(|&c| layouts[c] == Layout::Text)
        .collect();
    let mut bounds = Vec::new();
    let mut start = 0;
    if text.is_empty() {
        while start < rows {
            let end = rows.min(start + BATCH_ROWS);
            bounds.push((start, end));
            start = end;
        }
        return bounds;
    }
    let mut bytes = vec![0usize; text.len()];
    for (i, row) in result.rows.iter().enumerate() {
        let lens = text.iter().map(|&c| row.get(c).map_or(0, text_len));
        let over = lens
            .clone()
            .zip(&bytes)
            .any(|(len, used)| used + len > BATCH_TEXT_BYTES);
        if i > start && (i - start == BATCH_ROWS || over) {
            bounds.push((start, i));
            start = i;
            bytes.iter_mut().for_each(|b| *b = 0);
        }
        for (len, used) in lens.zip(bytes.iter_mut()) {
            *used += len;
        }
    }
    if start < rows {
        bounds.push((start, rows));
    }
    bounds
}

/// Bytes a value takes in a `Utf8` column: a string's own, else an upper
/// bound of its text (numbers and timestamps are short).
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

/// Column `c` of `rows` as an Arrow array of `layout` (every value of the
/// column fits it).
fn gather(rows: &[Vec<Value>], c: usize, layout: Layout) -> ArrayRef {
    let cell = |row| cell_of(row, c);
    match layout {
        Layout::Int | Layout::Timestamp => {
            let mut values = Vec::with_capacity(rows.len());
            let mut nulls = NullBufferBuilder::new(rows.len());
            for row in rows {
                match cell(row) {
                    Value::Int(v) | Value::Timestamp(v) => {
                        values.push(*v);
                        nulls.append_non_null();
                    }
                    _ => {
                        values.push(0);
                        nulls.append_null();
                    }
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
                    _ => {
                        values.push(0.0);
                        nulls.append_null();
                    }
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
                    _ => builder.append_null(),
                }
            }
            let array: BooleanArray = builder.finish();
            Arc::new(array)
        }
        Layout::Text => {
            let bytes: usize = rows.iter().map(|r| text_len(cell(r))).sum();
            let mut builder = StringBuilder::with_capacity(rows.len(), bytes);
            for row in rows {
                match cell(row) {
                    Value::Null => builder.append_null(),
                    Value::Str(s) => builder.append_value(s),
                    other => builder.append_value(other.to_string()),
                }
            }
            Arc::new(builder.finish())
        }
    }
}
