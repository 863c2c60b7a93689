//! Turning a parsed [`Batch`] into the encoded columns of one partition.
//!
//! A span is encoded as soon as it is parsed, each column with the kind it
//! has in that span; once every span is parsed and the columns' final kinds
//! are known, [`conform`] re-encodes the few columns whose kind in a span
//! differs from the final one.

use rayon::prelude::*;

use super::build::{Census, ColumnBuilder, Strings, Texts, Values};
use super::dialect::Syntax;
use super::infer::Kind;
use super::parse::{Batch, Context, span_text, span_texts};
use super::scan::{Next, Scanner};
use super::source::Piece;
use crate::error::{Error, Result};
use crate::store::{Bitmap, Column, Decoded, TableDictBuilder};
use crate::types::{DataType, MICROS_PER_DAY};

/// What one column of the partition is encoded from.
enum Source {
    /// What phase 1 kept (values, or text for a string column).
    Built(Box<ColumnBuilder>),
    /// Text parsed again for a column that became a string late.
    Reparsed(Texts),
}

/// One span's partition as encoded with the kinds its columns have in it.
pub(crate) struct SpanColumns {
    /// The encoded columns.
    pub columns: Vec<Column>,
    /// Each column's kind in this span (a column with no value is an
    /// all-NULL string column of kind [`Kind::Empty`]).
    pub kinds: Vec<Kind>,
    /// Each column's census, misfits placed on their lines.
    pub census: Vec<Census>,
}

/// A piece's text: `read(piece, out)` fills `out`, `piece.len` bytes.
pub(crate) type ReadPiece<'a> = &'a dyn Fn(&Piece, &mut [u8]) -> Result<()>;

/// The text of the span a batch was parsed from.
#[derive(Clone, Copy)]
pub(crate) enum SpanText<'a> {
    /// All of it, in memory; kept texts may be ranges of it.
    Whole(&'a [u8]),
    /// Its pieces, read again when needed (the batch keeps no range of
    /// them, see [`super::parse::parse_pieces`]).
    Pieces(&'a [Piece], ReadPiece<'a>),
}

impl SpanText<'_> {
    /// Bytes of text.
    pub(crate) fn len(&self) -> usize {
        match self {
            SpanText::Whole(b) => b.len(),
            SpanText::Pieces(pieces, _) => pieces.last().map_or(0, |p| p.start + p.len),
        }
    }

    /// All of the text.
    ///
    /// # Errors
    /// What reading a piece fails with.
    pub(crate) fn read_all(&self) -> Result<Vec<u8>> {
        match self {
            SpanText::Whole(b) => Ok(b.to_vec()),
            SpanText::Pieces(pieces, read) => {
                let mut all = vec![0; self.len()];
                for p in *pieces {
                    let out = all
                        .get_mut(p.start..p.start + p.len)
                        .ok_or_else(|| Error::Internal("pieces out of order".into()))?;
                    read(p, out)?;
                }
                Ok(all)
            }
        }
    }
}

/// Encodes a batch parsed from the text `span` (whose fields parsing
/// found to be UTF-8, and which starts on line `line`) as one partition's
/// columns, each column with the kind it has in this span. Numeric and
/// timestamp columns reuse the values phase 1 parsed, string columns the
/// text it kept; a string column whose text phase 1 did not keep (it
/// turned into a string after other values) is parsed again from the
/// span's text (a span in pieces is read whole for it), and the first
/// misfits' lines are found in it (in the pieces holding them). The
/// columns are encoded in parallel on the current rayon pool.
///
/// # Errors
/// [`Error::Internal`] if phase 1 left a column in an inconsistent state;
/// what reading a piece fails with.
pub(crate) fn encode_batch(
    batch: Batch,
    span: SpanText<'_>,
    line: u64,
    cx: &Context,
    dicts: Option<(&TableDictBuilder, usize)>,
) -> Result<SpanColumns> {
    let Batch { rows, columns } = batch;
    let width = columns.len();
    let kinds: Vec<Kind> = columns.iter().map(|c| c.kind).collect();
    let wanted: Vec<usize> = (0..width)
        .filter(|&c| kinds[c] == Kind::Str && columns[c].strings.is_none())
        .collect();
    // A span read in pieces is read whole again only for a column to
    // parse again (rare); its kept texts are copies, so they need none.
    let read;
    let input: &[u8] = match span {
        SpanText::Whole(b) => b,
        SpanText::Pieces(..) if !wanted.is_empty() => {
            read = span.read_all()?;
            &read
        }
        SpanText::Pieces(..) => &[],
    };
    let span_bytes = span.len();
    let mut census: Vec<Census> = columns.iter().map(|c| c.census(input)).collect();
    match span {
        SpanText::Pieces(pieces, read) if input.is_empty() => {
            place_misfits_in_pieces(&mut census, pieces, read, cx.dialect.syntax)?;
        }
        _ => place_misfits(&mut census, input, line, cx.dialect.syntax),
    }
    // Per-row texts are slices of the span's text, or copies where it has
    // none.
    let per_row = !wanted.is_empty()
        || columns
            .iter()
            .any(|c| matches!(c.strings, Some(Strings::Texts(_))));
    let text = if per_row { span_text(input) } else { None };
    let mut reparsed = if wanted.is_empty() {
        Vec::new()
    } else {
        span_texts(input, rows, cx, &wanted, text.is_some())?
    }
    .into_iter();
    let text = text.unwrap_or("");
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
                Ok(Source::Built(Box::new(column)))
            }
        })
        .collect::<Result<_>>()?;
    let encoded = sources
        .into_par_iter()
        .enumerate()
        .map(|(c, source)| {
            cx.stop.check()?;
            let direct = dicts
                .filter(|(d, _)| kinds[c] == Kind::Str && d.direct(c))
                .map(|(dicts, index)| Direct {
                    dicts,
                    column: c,
                    input_bytes: span_bytes,
                    index,
                });
            encode_column(source, rows, text, direct)
        })
        .collect::<Result<Vec<Column>>>()?;
    Ok(SpanColumns {
        columns: encoded,
        kinds,
        census,
    })
}

/// Sets the line of every first misfit in `census`, from its row in the
/// span text `input` that starts on line `line`: one scan of the records
/// up to the last such row.
fn place_misfits(census: &mut [Census], input: &[u8], line: u64, syntax: Syntax) {
    let mut rows: Vec<usize> = census
        .iter()
        .flat_map(|c| c.misfits.iter().filter_map(|m| Some(m.first.as_ref()?.row)))
        .collect();
    if rows.is_empty() {
        return;
    }
    rows.sort_unstable();
    rows.dedup();
    let lines = record_lines(input, line, &rows, syntax);
    assign_lines(census, &rows, &lines);
}

/// The lines on which records `rows` (ascending) of `input`, text starting
/// on line `line`, start: one scan up to the last.
fn record_lines(input: &[u8], line: u64, rows: &[usize], syntax: Syntax) -> Vec<u64> {
    let mut lines = Vec::with_capacity(rows.len());
    let mut scanner = Scanner::partial(input, 0, line, true, syntax);
    let mut record = 0;
    'rows: for &row in rows {
        loop {
            match scanner.next_record() {
                Next::Record { line, .. } => {
                    record += 1;
                    if record > row {
                        lines.push(line);
                        continue 'rows;
                    }
                }
                _ => break 'rows,
            }
        }
    }
    lines
}

/// Sets each first misfit's line from `lines[k]`, the line of `rows[k]`.
fn assign_lines(census: &mut [Census], rows: &[usize], lines: &[u64]) {
    for c in census {
        for m in c.misfits.iter_mut().filter_map(|m| m.first.as_mut()) {
            if let Ok(k) = rows.binary_search(&m.row) {
                m.line = lines.get(k).copied().unwrap_or(0);
            }
        }
    }
}

/// [`place_misfits`] for a span read in pieces: each piece holding a first
/// misfit is read again.
///
/// # Errors
/// What reading a piece fails with.
fn place_misfits_in_pieces(
    census: &mut [Census],
    pieces: &[Piece],
    read: ReadPiece<'_>,
    syntax: Syntax,
) -> Result<()> {
    let mut rows: Vec<usize> = census
        .iter()
        .flat_map(|c| c.misfits.iter().filter_map(|m| Some(m.first.as_ref()?.row)))
        .collect();
    if rows.is_empty() {
        return Ok(());
    }
    rows.sort_unstable();
    rows.dedup();
    let mut lines = vec![0; rows.len()];
    let (mut first_row, mut k) = (0, 0);
    let mut text = Vec::new();
    for piece in pieces {
        let end_row = first_row + piece.records;
        let here = rows[k..].iter().take_while(|&&r| r < end_row).count();
        if here > 0 {
            text.resize(piece.len, 0);
            read(piece, &mut text)?;
            let relative: Vec<usize> = rows[k..k + here].iter().map(|r| r - first_row).collect();
            let found = record_lines(&text, piece.line, &relative, syntax);
            lines[k..k + found.len()].copy_from_slice(&found);
            k += here;
        }
        if k == rows.len() {
            break;
        }
        first_row = end_row;
    }
    assign_lines(census, &rows, &lines);
    Ok(())
}

/// A string column to be recoded straight into its table-wide dictionary
/// ([`TableDictBuilder::recode_strings`]): column `column` of the span read
/// `index`th, from `input_bytes` bytes.
#[derive(Clone, Copy)]
struct Direct<'a> {
    dicts: &'a TableDictBuilder,
    column: usize,
    input_bytes: usize,
    index: usize,
}

impl Direct<'_> {
    /// The column of `distinct[ids[i]]`, recoded, unless its column closed.
    fn recode(&self, distinct: &[&str], ids: &[u32], validity: Option<&Bitmap>) -> Option<Column> {
        self.dicts.recode_strings(
            self.column,
            distinct,
            ids,
            validity.cloned(),
            self.input_bytes,
            self.index,
        )
    }

    /// The column of the strings `values` (one per row, any at NULL rows),
    /// recoded, unless its column closed.
    fn recode_values(&self, values: &[&str], validity: Option<&Bitmap>) -> Option<Column> {
        self.dicts.recode_values(
            self.column,
            values,
            validity.cloned(),
            self.input_bytes,
            self.index,
        )
    }
}

/// Encodes the texts of a string column from the span text `text`.
fn encode_texts(texts: &Texts, rows: usize, text: &str, direct: Option<Direct>) -> Result<Column> {
    let mut values: Vec<&str> = Vec::with_capacity(rows);
    let mut validity: Option<Bitmap> = None;
    for &row in texts.null_rows() {
        validity
            .get_or_insert_with(|| Bitmap::new(rows, true))
            .set(row as usize, false);
    }
    let ok = texts.for_each_str(text, |_, s| {
        values.push(s);
    });
    if !ok {
        return Err(Error::Internal("text is not utf-8 after validation".into()));
    }
    if values.len() != rows {
        return Err(Error::Internal(format!(
            "{} texts for {rows} rows",
            values.len()
        )));
    }
    if let Some(column) = direct.and_then(|d| d.recode_values(&values, validity.as_ref())) {
        return Ok(column);
    }
    Ok(Column::encode_strings(&values, validity))
}

fn encode_column(
    source: Source,
    rows: usize,
    input: &str,
    direct: Option<Direct>,
) -> Result<Column> {
    let column = match source {
        Source::Reparsed(texts) => encode_texts(&texts, rows, input, direct)?,
        Source::Built(c) => match (c.kind, c.values) {
            (Kind::Empty, _) => Column::all_null(DataType::Str, rows),
            (Kind::Str, _) => match c.strings {
                Some(Strings::Interned(interned)) => {
                    let (distinct, ids) = interned.parts();
                    let distinct = distinct.ok_or_else(|| {
                        Error::Internal("text is not utf-8 after validation".into())
                    })?;
                    match direct.and_then(|d| d.recode(&distinct, ids, c.validity.as_ref())) {
                        Some(column) => column,
                        None => Column::encode_string_ids(&distinct, ids, c.validity),
                    }
                }
                Some(Strings::Texts(texts)) => encode_texts(&texts, rows, input, direct)?,
                None => return Err(Error::Internal("a string column without text".into())),
            },
            (kind @ (Kind::Int | Kind::Timestamp | Kind::Date), values @ (Values::Ints(_) | Values::Small(_))) => {
                let v = values.into_ints().unwrap_or_default();
                Column::encode_ints(kind.data_type(), &v, c.validity)
            }
            (Kind::Float, Values::Floats(v)) => Column::encode_floats(v, c.validity),
            (kind, _) => {
                return Err(Error::Internal(format!(
                    "a {kind:?} column without its values"
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

/// Re-encodes the columns of a partition whose kind in its span,
/// `local[c]`, differs from the final kind `kinds[c]` (merging only widens,
/// see [`Kind::merge`]): a column without values becomes all NULL of the
/// final type, integers become floats (`as` rounds to nearest, ties to
/// even: what parsing the integer's text as a float gives), and a column
/// that is text in another span is parsed again from the span text `input`
/// as text.
///
/// # Errors
/// [`Error::Internal`] for a change of kind that merging cannot make.
pub(crate) fn conform(
    columns: &mut [Column],
    local: &[Kind],
    kinds: &[Kind],
    input: &[u8],
    cx: &Context,
) -> Result<()> {
    let width = kinds.len();
    let rows = columns.first().map_or(0, |c| c.len);
    let changed: Vec<usize> = (0..width).filter(|&c| local[c] != kinds[c]).collect();
    let wanted: Vec<usize> = changed
        .iter()
        .copied()
        .filter(|&c| kinds[c] == Kind::Str && local[c] != Kind::Empty)
        .collect();
    let (text, mut texts) = if wanted.is_empty() {
        ("", Vec::new().into_iter())
    } else {
        let text = span_text(input);
        let texts = span_texts(input, rows, cx, &wanted, text.is_some())?;
        (text.unwrap_or(""), texts.into_iter())
    };
    for c in changed {
        let column = &mut columns[c];
        *column = match (local[c], kinds[c]) {
            (Kind::Empty, kind) => Column::all_null(kind.data_type(), rows),
            (_, Kind::Str) => {
                let t = texts
                    .next()
                    .ok_or_else(|| Error::Internal("missing reparsed text".into()))?;
                encode_texts(&t, rows, text, None)?
            }
            (Kind::Int, Kind::Float) => {
                let mut floats: Vec<f64> = ints_of(column)?.into_iter().map(|x| x as f64).collect();
                if let Some(v) = &column.validity {
                    for i in v.zeros() {
                        if let Some(f) = floats.get_mut(i) {
                            *f = 0.0;
                        }
                    }
                }
                Column::encode_floats(floats, column.validity.take())
            }
            (Kind::Date, Kind::Timestamp) => {
                // A span of dates in a column with timestamps elsewhere:
                // each date is its midnight.
                let micros: Vec<i64> = dates_of(column)?
                    .into_iter()
                    .map(|d| d.saturating_mul(MICROS_PER_DAY))
                    .collect();
                Column::encode_ints(DataType::Timestamp, &micros, column.validity.take())
            }
            (from, to) => {
                return Err(Error::Internal(format!(
                    "a {from:?} span in a {to:?} column"
                )));
            }
        };
    }
    Ok(())
}

/// The days of an encoded date column (some value at NULL rows).
fn dates_of(column: &Column) -> Result<Vec<i64>> {
    match column.decode_range(0..column.len) {
        Decoded::Ints(v) if column.dtype == DataType::Date => Ok(v),
        _ => Err(Error::Internal(format!(
            "a date column encoded as {}",
            column.encoding_name()
        ))),
    }
}

/// The integers of an encoded integer column (some value at NULL rows),
/// whatever its codec.
fn ints_of(column: &Column) -> Result<Vec<i64>> {
    match column.decode_range(0..column.len) {
        Decoded::Ints(v) if column.dtype == DataType::Int => Ok(v),
        _ => Err(Error::Internal(format!(
            "an integer column encoded as {}",
            column.encoding_name()
        ))),
    }
}
