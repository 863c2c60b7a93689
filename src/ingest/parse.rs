//! Parsing a span of records with `csv-core`, checking widths and UTF-8,
//! into per-column builders that infer kinds and keep values.

use std::path::Path;

use csv_core::{ReadRecordResult, Reader};

use super::build::{ColumnBuilder, Texts};
use super::scan::Span;
use crate::error::{Error, Result};

/// A span of records after phase 1.
#[derive(Debug)]
pub(crate) struct Batch {
    /// Number of records.
    pub rows: usize,
    /// Each column's kind over this span, with its parsed values or text.
    pub columns: Vec<ColumnBuilder>,
}

/// Reads the records of an input one at a time with `csv-core`.
pub(crate) struct Records<'a> {
    input: &'a [u8],
    pos: usize,
    reader: Reader,
    started: bool,
    out: Vec<u8>,
    ends: Vec<usize>,
    fields: usize,
}

impl<'a> Records<'a> {
    /// A reader over `input`, which starts at a record boundary.
    pub(crate) fn new(input: &'a [u8], expected_width: usize) -> Records<'a> {
        Records {
            input,
            pos: 0,
            reader: Reader::new(),
            started: false,
            out: vec![0; 4096],
            ends: vec![0; expected_width.max(1) + 1],
            fields: 0,
        }
    }

    /// Parses the next record; returns the input offset it starts from
    /// (possibly at blank lines before it) and its field count, or `None` at
    /// the end. Its fields are then [`Records::field`].
    pub(crate) fn next(&mut self) -> Result<Option<(usize, usize)>> {
        let start = self.pos;
        let (mut nout_total, mut fields) = (0, 0);
        loop {
            // csv-core strips a UTF-8 byte order mark from the first input
            // it sees; the caller strips the file's own, and a chunk in the
            // middle of a file must keep its bytes, so the first call gets a
            // single byte (too short to be stripped).
            let limit = if self.started {
                self.input.len()
            } else {
                (self.pos + 1).min(self.input.len())
            };
            self.started = true;
            let (res, nin, nout, nend) = self.reader.read_record(
                &self.input[self.pos..limit],
                &mut self.out[nout_total..],
                &mut self.ends[fields..],
            );
            self.pos += nin;
            nout_total += nout;
            fields += nend;
            match res {
                ReadRecordResult::InputEmpty => {}
                ReadRecordResult::OutputFull => {
                    let n = self.out.len() * 2;
                    self.out.resize(n, 0);
                }
                ReadRecordResult::OutputEndsFull => {
                    let n = self.ends.len() * 2;
                    self.ends.resize(n, 0);
                }
                ReadRecordResult::Record => {
                    self.fields = fields;
                    return Ok(Some((start, fields)));
                }
                ReadRecordResult::End => return Ok(None),
            }
        }
    }

    /// Field `i` (quotes removed) of the last record read.
    #[inline]
    pub(crate) fn field(&self, i: usize) -> &[u8] {
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.out[start..self.ends[i]]
    }

    /// Number of fields of the last record read.
    pub(crate) fn len(&self) -> usize {
        self.fields
    }
}

/// Parses one record from the start of `input` into owned field bytes;
/// `None` when the input holds no record.
pub(crate) fn first_record(input: &[u8]) -> Result<Option<Vec<Vec<u8>>>> {
    let mut records = Records::new(input, 16);
    if records.next()?.is_none() {
        return Ok(None);
    }
    Ok(Some(
        (0..records.len())
            .map(|i| records.field(i).to_vec())
            .collect(),
    ))
}

/// 1-based line on which the record starting at or after `offset` (skipping
/// blank lines) begins, given that `input` begins on line `first_line`.
pub(crate) fn line_at(input: &[u8], first_line: u64, offset: usize) -> u64 {
    let mut first_byte = offset;
    while first_byte < input.len() && matches!(input[first_byte], b'\r' | b'\n') {
        first_byte += 1;
    }
    first_line + memchr::memchr_iter(b'\n', &input[..first_byte]).count() as u64
}

/// A CSV error at `line`, field `column`.
pub(crate) fn csv_error(
    origin: &Path,
    line: u64,
    column: u64,
    message: impl Into<String>,
) -> Error {
    Error::Csv {
        path: origin.to_path_buf(),
        line,
        column,
        message: message.into(),
    }
}

/// Parses the records of `data[span.start..span.end]`, each of which must
/// have `width` fields, inferring each column's kind and keeping its parsed
/// values or text.
///
/// # Errors
/// [`Error::Csv`] for a record of the wrong width (at its first missing or
/// extra field) or a field that is not UTF-8, naming the record's line,
/// whichever comes first; [`Error::NotSupported`] when the span holds 4 GiB
/// or more of text.
pub(crate) fn parse_span(data: &[u8], span: &Span, width: usize, origin: &Path) -> Result<Batch> {
    let input = &data[span.start..span.end];
    if input.len() >= u32::MAX as usize {
        return Err(Error::NotSupported(format!(
            "a partition of {} bytes of text (the limit is 4 GiB); load with fewer rows per partition",
            input.len()
        )));
    }
    let mut columns: Vec<ColumnBuilder> = (0..width)
        .map(|_| ColumnBuilder::new(span.records))
        .collect();
    let mut records = Records::new(input, width);
    let mut rows = 0;
    while let Some((start, n)) = records.next()? {
        if n != width {
            if let Some(e) = utf8_error(input, span, &columns, origin)? {
                return Err(e);
            }
            let line = line_at(input, span.line, start);
            return Err(csv_error(
                origin,
                line,
                n.min(width) as u64 + 1,
                format!("expected {width} fields, found {n}"),
            ));
        }
        if rows == span.records {
            return Err(Error::Internal(format!(
                "the record scan found {} records at line {}, the parser more",
                span.records, span.line
            )));
        }
        for (c, column) in columns.iter_mut().enumerate() {
            column.observe(rows, records.field(c));
        }
        rows += 1;
    }
    if let Some(e) = utf8_error(input, span, &columns, origin)? {
        return Err(e);
    }
    Ok(Batch { rows, columns })
}

/// The error for the first field (by row, then column) that is not UTF-8.
fn utf8_error(
    input: &[u8],
    span: &Span,
    columns: &[ColumnBuilder],
    origin: &Path,
) -> Result<Option<Error>> {
    let first = columns
        .iter()
        .enumerate()
        .filter_map(|(c, b)| b.first_invalid_row().map(|row| (row, c)))
        .min();
    let Some((row, c)) = first else {
        return Ok(None);
    };
    let line = record_line(input, span.line, row)?;
    Ok(Some(csv_error(origin, line, c as u64 + 1, "invalid utf-8")))
}

/// The texts of columns `wanted` (indexes, ascending) of every record of
/// `data[span.start..span.end]`, which phase 1 has already checked.
pub(crate) fn span_texts(
    data: &[u8],
    span: &Span,
    width: usize,
    wanted: &[usize],
) -> Result<Vec<Texts>> {
    let input = &data[span.start..span.end];
    let mut texts: Vec<Texts> = wanted
        .iter()
        .map(|_| Texts {
            bytes: Vec::new(),
            ends: Vec::with_capacity(span.records),
        })
        .collect();
    let mut records = Records::new(input, width);
    while records.next()?.is_some() {
        for (t, &c) in texts.iter_mut().zip(wanted) {
            t.push(records.field(c));
        }
    }
    Ok(texts)
}

/// Line on which record `index` (0-based) of `input` starts.
fn record_line(input: &[u8], first_line: u64, index: usize) -> Result<u64> {
    let mut records = Records::new(input, 16);
    for _ in 0..index {
        records.next()?;
    }
    let start = records.next()?.map_or(0, |(s, _)| s);
    Ok(line_at(input, first_line, start))
}
