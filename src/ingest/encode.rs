//! Turning a parsed [`Batch`] into the encoded columns of one partition,
//! once every column's final kind is known.

use rayon::prelude::*;

use super::build::{ColumnBuilder, Texts, Values};
use super::infer::Kind;
use super::parse::{Batch, span_texts};
use super::scan::Span;
use crate::error::{Error, Result};
use crate::store::{Bitmap, Column};
use crate::types::DataType;

/// What one column of the partition is encoded from.
enum Source {
    /// What phase 1 kept (values, or text for a string column).
    Built(ColumnBuilder),
    /// Text parsed again for a column that became a string late.
    Reparsed(Texts),
}

/// Encodes a batch as one partition's columns, column `c` with final kind
/// `kinds[c]` (a [`Kind::Empty`] column becomes an all-NULL string column).
/// Numeric and timestamp columns reuse the values phase 1 parsed, string
/// columns the text it kept; a string column whose text phase 1 did not keep
/// (its values in this span looked numeric, or turned into strings late) is
/// parsed again from `data[span.start..span.end]`. The columns are encoded
/// in parallel on the current rayon pool.
///
/// # Errors
/// [`Error::Internal`] if phase 1 left a column in a state the final kind
/// cannot come from, which merging rules out.
pub(crate) fn encode_batch(
    batch: Batch,
    kinds: &[Kind],
    data: &[u8],
    span: &Span,
) -> Result<Vec<Column>> {
    let Batch { rows, columns } = batch;
    let width = kinds.len();
    let wanted: Vec<usize> = (0..width)
        .filter(|&c| {
            kinds[c] == Kind::Str && columns[c].kind != Kind::Empty && columns[c].text.is_none()
        })
        .collect();
    let mut reparsed = if wanted.is_empty() {
        Vec::new()
    } else {
        span_texts(data, span, width, &wanted)?
    }
    .into_iter();
    let sources: Vec<Source> = columns
        .into_iter()
        .enumerate()
        .map(|(c, column)| {
            if wanted.contains(&c) {
                reparsed
                    .next()
                    .map(Source::Reparsed)
                    .ok_or_else(|| Error::Internal("missing reparsed text".into()))
            } else {
                Ok(Source::Built(column))
            }
        })
        .collect::<Result<_>>()?;
    sources
        .into_par_iter()
        .zip(kinds)
        .map(|(source, &kind)| encode_column(source, kind, rows))
        .collect()
}

/// Encodes the texts of a string column; empty texts are NULL.
fn encode_texts(texts: &Texts, rows: usize) -> Result<Column> {
    let all = std::str::from_utf8(&texts.bytes)
        .map_err(|e| Error::Internal(format!("text is not utf-8 after validation: {e}")))?;
    let mut values = Vec::with_capacity(rows);
    let mut validity: Option<Bitmap> = None;
    let mut start = 0;
    for (row, &end) in texts.ends.iter().enumerate() {
        let end = end as usize;
        let text = all
            .get(start..end)
            .ok_or_else(|| Error::Internal("field is not on a char boundary".into()))?;
        if text.is_empty() {
            validity
                .get_or_insert_with(|| Bitmap::new(rows, true))
                .set(row, false);
        }
        values.push(text);
        start = end;
    }
    Ok(Column::encode_strings(&values, validity))
}

fn encode_column(source: Source, kind: Kind, rows: usize) -> Result<Column> {
    let column = match source {
        Source::Reparsed(texts) => encode_texts(&texts, rows)?,
        Source::Built(c) => match (kind, c.kind, c.values) {
            (Kind::Empty, ..) => Column::all_null(DataType::Str, rows),
            (_, Kind::Empty, _) => Column::all_null(kind.data_type(), rows),
            (Kind::Str, Kind::Str, _) => match &c.text {
                Some(texts) => encode_texts(texts, rows)?,
                None => return Err(Error::Internal("a string column without text".into())),
            },
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
