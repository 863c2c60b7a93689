//! Turning a parsed [`Batch`] into the encoded columns of one partition,
//! once every column's final kind is known.

use rayon::prelude::*;

use super::build::{ColumnBuilder, Values};
use super::infer::Kind;
use super::parse::Batch;
use crate::error::{Error, Result};
use crate::store::{Bitmap, Column};
use crate::types::DataType;

/// What one column of the partition is encoded from.
enum Source<'a> {
    /// The values phase 1 parsed, widened to the final kind if need be.
    Parsed(ColumnBuilder),
    /// The field texts, for a string column.
    Text {
        values: Vec<&'a str>,
        validity: Option<Bitmap>,
    },
}

/// Encodes a batch as one partition's columns, column `c` with final kind
/// `kinds[c]` (a [`Kind::Empty`] column becomes an all-NULL string column).
/// Numeric and timestamp columns reuse the values phase 1 parsed; string
/// columns are cut from the batch's text. The columns are encoded in
/// parallel on the current rayon pool.
///
/// # Errors
/// [`Error::Internal`] if phase 1 left a column in a state the final kind
/// cannot come from, which merging rules out.
pub(crate) fn encode_batch(batch: Batch, kinds: &[Kind]) -> Result<Vec<Column>> {
    let Batch {
        buf,
        ends,
        rows,
        columns,
    } = batch;
    let width = kinds.len();
    let string_columns: Vec<usize> = (0..width).filter(|&c| kinds[c] == Kind::Str).collect();
    let mut texts: Vec<(Vec<&str>, Option<Bitmap>)> = Vec::new();
    if !string_columns.is_empty() {
        let text = std::str::from_utf8(&buf)
            .map_err(|e| Error::Internal(format!("batch is not utf-8 after validation: {e}")))?;
        texts = string_columns
            .iter()
            .map(|_| (Vec::with_capacity(rows), None))
            .collect();
        for row in 0..rows {
            for (&c, (values, validity)) in string_columns.iter().zip(texts.iter_mut()) {
                let k = row * width + c;
                let start = if k == 0 { 0 } else { ends[k - 1] as usize };
                let field = text
                    .get(start..ends[k] as usize)
                    .ok_or_else(|| Error::Internal("field is not on a char boundary".into()))?;
                if field.is_empty() {
                    validity
                        .get_or_insert_with(|| Bitmap::new(rows, true))
                        .set(row, false);
                }
                values.push(field);
            }
        }
    }
    let mut texts = texts.into_iter();
    let sources: Vec<Source<'_>> = columns
        .into_iter()
        .zip(kinds)
        .map(|(column, &kind)| match kind {
            Kind::Str => {
                let (values, validity) = texts.next().unwrap_or_default();
                Source::Text { values, validity }
            }
            _ => Source::Parsed(column),
        })
        .collect();
    sources
        .into_par_iter()
        .zip(kinds)
        .map(|(source, &kind)| encode_column(source, kind, rows))
        .collect()
}

fn encode_column(source: Source<'_>, kind: Kind, rows: usize) -> Result<Column> {
    let column = match source {
        Source::Text { values, validity } => Column::encode_strings(&values, validity),
        Source::Parsed(c) => match (kind, c.kind, c.values) {
            (Kind::Empty, ..) => Column::all_null(DataType::Str, rows),
            (_, Kind::Empty, _) => Column::all_null(kind.data_type(), rows),
            (Kind::Int | Kind::Timestamp, local, Values::Ints(v)) if local == kind => {
                Column::encode_ints(kind.data_type(), &v, c.validity)
            }
            (Kind::Float, Kind::Float, Values::Floats(v)) => Column::encode_floats(v, c.validity),
            (Kind::Float, Kind::Int, Values::Ints(v)) => {
                // `as` rounds to nearest, ties to even: what parsing the
                // integer's text as a float gives.
                Column::encode_floats(v.into_iter().map(|x| x as f64).collect(), c.validity)
            }
            (kind, local, _) => {
                return Err(Error::Internal(format!(
                    "a {local:?} span in a {kind:?} column"
                )));
            }
        },
    };
    if column.len != rows {
        return Err(Error::Internal(format!(
            "encoded {} rows of {rows}",
            column.len
        )));
    }
    Ok(column)
}
