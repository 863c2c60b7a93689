//! Turning a parsed [`Batch`] into the encoded columns of one partition,
//! once every column's final type is known.

use rayon::prelude::*;

use super::infer::{IntText, Kind, parse_float, parse_int, parse_timestamp_bytes};
use super::parse::Batch;
use crate::error::{Error, Result};
use crate::store::{Bitmap, Column};
use crate::types::DataType;

/// One column's values while a batch is read row by row.
enum Builder<'a> {
    Ints {
        dtype: DataType,
        values: Vec<i64>,
        validity: Option<Bitmap>,
    },
    Floats {
        values: Vec<f64>,
        validity: Option<Bitmap>,
    },
    Strs {
        values: Vec<&'a str>,
        validity: Option<Bitmap>,
    },
    /// A column with no value anywhere in the table.
    Null,
}

fn set_null(validity: &mut Option<Bitmap>, rows: usize, row: usize) {
    validity
        .get_or_insert_with(|| Bitmap::new(rows, true))
        .set(row, false);
}

fn mismatch(field: &str, dtype: DataType) -> Error {
    Error::Internal(format!(
        "field {field:?} does not parse as the inferred type {dtype}"
    ))
}

impl<'a> Builder<'a> {
    fn new(kind: Kind, rows: usize) -> Builder<'a> {
        match kind {
            Kind::Empty => Builder::Null,
            Kind::Int | Kind::Timestamp => Builder::Ints {
                dtype: kind.data_type(),
                values: Vec::with_capacity(rows),
                validity: None,
            },
            Kind::Float => Builder::Floats {
                values: Vec::with_capacity(rows),
                validity: None,
            },
            Kind::Str => Builder::Strs {
                values: Vec::with_capacity(rows),
                validity: None,
            },
        }
    }

    #[inline]
    fn push(&mut self, rows: usize, row: usize, field: &'a str) -> Result<()> {
        match self {
            Builder::Ints {
                dtype,
                values,
                validity,
            } => {
                let v = if field.is_empty() {
                    set_null(validity, rows, row);
                    0
                } else if *dtype == DataType::Int {
                    match parse_int(field.as_bytes()) {
                        IntText::Int(v) => v,
                        _ => return Err(mismatch(field, *dtype)),
                    }
                } else {
                    parse_timestamp_bytes(field.as_bytes())
                        .ok_or_else(|| mismatch(field, *dtype))?
                };
                values.push(v);
            }
            Builder::Floats { values, validity } => {
                let v = if field.is_empty() {
                    set_null(validity, rows, row);
                    0.0
                } else {
                    parse_float(field.as_bytes()).ok_or_else(|| mismatch(field, DataType::Float))?
                };
                values.push(v);
            }
            Builder::Strs { values, validity } => {
                if field.is_empty() {
                    set_null(validity, rows, row);
                }
                values.push(field);
            }
            Builder::Null => {}
        }
        Ok(())
    }

    fn finish(self, rows: usize) -> Column {
        match self {
            Builder::Ints {
                dtype,
                values,
                validity,
            } => Column::encode_ints(dtype, &values, validity),
            Builder::Floats { values, validity } => Column::encode_floats(values, validity),
            Builder::Strs { values, validity } => Column::encode_strings(&values, validity),
            Builder::Null => Column::all_null(DataType::Str, rows),
        }
    }
}

/// Encodes a batch as one partition's columns, column `c` with final kind
/// `kinds[c]` (an [`Kind::Empty`] column becomes an all-NULL string column).
/// The columns are encoded in parallel on the current rayon pool.
///
/// # Errors
/// [`Error::Internal`] if a field does not parse as its column's kind, which
/// inference rules out.
pub(crate) fn encode_batch(batch: &Batch, kinds: &[Kind]) -> Result<Vec<Column>> {
    let rows = batch.rows;
    let width = kinds.len();
    let text = std::str::from_utf8(&batch.buf)
        .map_err(|e| Error::Internal(format!("batch is not utf-8 after validation: {e}")))?;
    let mut builders: Vec<Builder<'_>> = kinds.iter().map(|&k| Builder::new(k, rows)).collect();
    let mut start = 0usize;
    for (row, ends) in batch.ends.chunks_exact(width.max(1)).enumerate() {
        for (builder, &end) in builders.iter_mut().zip(ends) {
            let end = end as usize;
            let field = text
                .get(start..end)
                .ok_or_else(|| Error::Internal("field is not on a char boundary".into()))?;
            builder.push(rows, row, field)?;
            start = end;
        }
    }
    Ok(builders.into_par_iter().map(|b| b.finish(rows)).collect())
}
