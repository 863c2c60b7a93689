//! Parsing a span of records with `csv-core` into a [`Batch`] of unescaped
//! field bytes, checking widths and UTF-8 and inferring column kinds.

use std::path::Path;

use csv_core::{ReadRecordResult, Reader};

use super::build::ColumnBuilder;
use super::scan::Span;
use crate::error::{Error, Result};

/// The fields of a span of records, parsed once and kept for encoding.
///
/// # Invariants
/// `buf` holds every field's bytes (quotes removed, `""` unescaped) back to
/// back and is valid UTF-8; `ends` holds `rows * width` end offsets into
/// `buf`, row-major and non-decreasing, so field `k` is
/// `buf[ends[k - 1]..ends[k]]` (from 0 for `k == 0`).
#[derive(Debug)]
pub(crate) struct Batch {
    /// Field bytes back to back.
    pub buf: Vec<u8>,
    /// End offset of every field in `buf`.
    pub ends: Vec<u32>,
    /// Number of records.
    pub rows: usize,
    /// Each column's kind over this batch, with its parsed values.
    pub columns: Vec<ColumnBuilder>,
}

/// Reads the records of an input one at a time with `csv-core`.
pub(crate) struct Records<'a> {
    input: &'a [u8],
    pos: usize,
    reader: Reader,
    started: bool,
    ends: Vec<usize>,
}

impl<'a> Records<'a> {
    /// A reader over `input`, which starts at a record boundary.
    pub(crate) fn new(input: &'a [u8], expected_width: usize) -> Records<'a> {
        Records {
            input,
            pos: 0,
            reader: Reader::new(),
            started: false,
            ends: vec![0; expected_width.max(1) + 1],
        }
    }

    /// Parses the next record, appending its field bytes to `out` at
    /// `*out_pos` (which it advances). Returns the input offset the record
    /// starts from (possibly at blank lines before it) and its field count;
    /// the fields' end offsets, relative to where the record's bytes begin in
    /// `out`, are then [`Records::ends`]`[..count]`.
    ///
    /// `out` must be at least one byte longer than the input: unescaping never
    /// makes a field longer.
    pub(crate) fn next(
        &mut self,
        out: &mut [u8],
        out_pos: &mut usize,
    ) -> Result<Option<(usize, usize)>> {
        let start = self.pos;
        let mut fields = 0;
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
                &mut out[*out_pos..],
                &mut self.ends[fields..],
            );
            self.pos += nin;
            *out_pos += nout;
            fields += nend;
            match res {
                ReadRecordResult::InputEmpty => {}
                ReadRecordResult::OutputFull => {
                    return Err(Error::Internal("csv output buffer too small".into()));
                }
                ReadRecordResult::OutputEndsFull => {
                    let n = self.ends.len() * 2;
                    self.ends.resize(n, 0);
                }
                ReadRecordResult::Record => return Ok(Some((start, fields))),
                ReadRecordResult::End => return Ok(None),
            }
        }
    }

    /// End offsets of the last record's fields (see [`Records::next`]).
    pub(crate) fn ends(&self) -> &[usize] {
        &self.ends
    }
}

/// Parses one record from the start of `input` into owned field bytes;
/// `None` when the input holds no record.
pub(crate) fn first_record(input: &[u8]) -> Result<Option<Vec<Vec<u8>>>> {
    let mut out = vec![0u8; input.len() + 1];
    let mut out_pos = 0;
    let mut records = Records::new(input, 16);
    let Some((_, n)) = records.next(&mut out, &mut out_pos)? else {
        return Ok(None);
    };
    let mut fields = Vec::with_capacity(n);
    let mut s = 0;
    for &e in &records.ends()[..n] {
        fields.push(out[s..e].to_vec());
        s = e;
    }
    Ok(Some(fields))
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
/// values.
///
/// # Errors
/// [`Error::Csv`] for a record of the wrong width (at its first missing or
/// extra field) or a field that is not UTF-8, naming the record's line;
/// [`Error::NotSupported`] when the span holds 4 GiB or more of text.
pub(crate) fn parse_span(data: &[u8], span: &Span, width: usize, origin: &Path) -> Result<Batch> {
    let input = &data[span.start..span.end];
    if input.len() >= u32::MAX as usize {
        return Err(Error::NotSupported(format!(
            "a partition of {} bytes of text (the limit is 4 GiB); load with fewer rows per partition",
            input.len()
        )));
    }
    let mut buf = vec![0u8; input.len() + 1];
    let mut out_pos = 0;
    let mut ends: Vec<u32> = Vec::with_capacity(span.records * width);
    let mut columns: Vec<ColumnBuilder> = (0..width)
        .map(|_| ColumnBuilder::new(span.records))
        .collect();
    let mut records = Records::new(input, width);
    let mut rows = 0;
    loop {
        let record_out = out_pos;
        let Some((start, n)) = records.next(&mut buf, &mut out_pos)? else {
            break;
        };
        if n != width {
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
        let mut s = record_out;
        for (column, &e) in columns.iter_mut().zip(&records.ends()[..n]) {
            let e = record_out + e;
            column.observe(rows, &buf[s..e]);
            ends.push(e as u32);
            s = e;
        }
        rows += 1;
    }
    buf.truncate(out_pos);
    if let Err(e) = std::str::from_utf8(&buf) {
        let k = ends.partition_point(|&x| x as usize <= e.valid_up_to());
        let (row, column) = (k / width.max(1), k % width.max(1) + 1);
        let line = record_line(input, span.line, row)?;
        return Err(csv_error(origin, line, column as u64, "invalid utf-8"));
    }
    Ok(Batch {
        buf,
        ends,
        rows,
        columns,
    })
}

/// Line on which record `index` (0-based) of `input` starts.
fn record_line(input: &[u8], first_line: u64, index: usize) -> Result<u64> {
    let mut out = vec![0u8; input.len() + 1];
    let mut records = Records::new(input, 16);
    for _ in 0..index {
        let mut out_pos = 0;
        records.next(&mut out, &mut out_pos)?;
    }
    let mut out_pos = 0;
    let start = records.next(&mut out, &mut out_pos)?.map_or(0, |(s, _)| s);
    Ok(line_at(input, first_line, start))
}
