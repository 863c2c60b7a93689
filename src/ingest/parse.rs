//! Parsing a span of records, checking widths and UTF-8, into per-column
//! builders that infer kinds and keep values.
//!
//! # Design
//! The fast path walks the span field by field: an unquoted field runs to
//! the next `,`, `\n` or `\r`, found eight bytes at a time (SWAR: a
//! zero-byte test on the word XORed with each separator, "Bit Twiddling
//! Hacks", Sean Eron Anderson), and is handed to its builder in place,
//! without a copy. Numbers and timestamps are ASCII by their syntax; any
//! other field is checked for UTF-8 by its builder (interned texts once per
//! distinct text). A record with a field that starts with `"` is finished
//! by `csv-core`, whose record grammar the record scan follows.
//!
//! An unquoted field that is empty or the null string is NULL, a quoted
//! one never is (see `dialect`). `csv-core` removes the quotes, so a record
//! it parsed with a field that could be NULL is looked at once more to see
//! which of its fields were quoted. Anything
//! unusual (a record of the wrong width, bytes that are not UTF-8) sends
//! the whole span down the slow path, which parses every record with
//! `csv-core` and finds the first error exactly as before.

use std::path::Path;

use csv_core::{ReadRecordResult, Reader};

use super::build::{ColumnBuilder, Texts};
use super::infer::Formats;
use super::dialect::{Dialect, quoted_fields};
use super::progress::Stop;
use super::source::Piece;
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
    dialect: &'a Dialect,
    started: bool,
    out: Vec<u8>,
    ends: Vec<usize>,
    fields: usize,
    /// Which fields of the last record are NULL.
    nulls: Vec<bool>,
    quoted: Vec<bool>,
}

/// Field `i` of a record `csv-core` wrote to `out` with field ends `ends`.
#[inline]
fn field_of<'o>(out: &'o [u8], ends: &[usize], i: usize) -> &'o [u8] {
    let start = if i == 0 { 0 } else { ends[i - 1] };
    &out[start..ends[i]]
}

/// Sets `nulls[i]` for each field `i` of a record parsed from the text
/// `raw` into `out` and `ends`: true when the field is unquoted and empty or
/// the null string. The text is looked at again (for which fields are
/// quoted) only when some field's value could be NULL.
fn mark_nulls(
    dialect: &Dialect,
    raw: &[u8],
    out: &[u8],
    ends: &[usize],
    nulls: &mut Vec<bool>,
    quoted: &mut Vec<bool>,
) {
    nulls.clear();
    let mut any = false;
    for i in 0..ends.len() {
        let null = dialect.is_null_text(field_of(out, ends, i));
        any |= null;
        nulls.push(null);
    }
    if any {
        quoted_fields(raw, dialect.syntax, quoted);
        for (null, &q) in nulls.iter_mut().zip(quoted.iter()) {
            *null &= !q;
        }
    }
}

/// Doubles whichever csv-core output buffer `res` says is full.
fn grow(res: &ReadRecordResult, out: &mut Vec<u8>, ends: &mut Vec<usize>) {
    match res {
        ReadRecordResult::OutputFull => out.resize(out.len() * 2, 0),
        ReadRecordResult::OutputEndsFull => ends.resize(ends.len() * 2, 0),
        _ => {}
    }
}

impl<'a> Records<'a> {
    /// A reader over `input`, which starts at a record boundary.
    pub(crate) fn new(input: &'a [u8], expected_width: usize, dialect: &'a Dialect) -> Records<'a> {
        Records {
            input,
            pos: 0,
            reader: dialect.syntax.reader(),
            dialect,
            started: false,
            out: vec![0; 4096],
            ends: vec![0; expected_width.max(1) + 1],
            fields: 0,
            nulls: Vec::new(),
            quoted: Vec::new(),
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
                ReadRecordResult::OutputFull | ReadRecordResult::OutputEndsFull => {
                    grow(&res, &mut self.out, &mut self.ends)
                }
                ReadRecordResult::Record => {
                    self.fields = fields;
                    mark_nulls(
                        self.dialect,
                        &self.input[start..self.pos],
                        &self.out,
                        &self.ends[..fields],
                        &mut self.nulls,
                        &mut self.quoted,
                    );
                    return Ok(Some((start, fields)));
                }
                ReadRecordResult::End => return Ok(None),
            }
        }
    }

    /// Field `i` (quotes removed) of the last record read.
    #[inline]
    pub(crate) fn field(&self, i: usize) -> &[u8] {
        field_of(&self.out, &self.ends, i)
    }

    /// Field `i` of the last record read, `None` when it is NULL.
    #[inline]
    pub(crate) fn value(&self, i: usize) -> Option<&[u8]> {
        (!self.nulls[i]).then(|| self.field(i))
    }

    /// Number of fields of the last record read.
    pub(crate) fn len(&self) -> usize {
        self.fields
    }
}

/// For [`crate::LoadOptions::ignore_errors`]: the records of `input` (a span
/// starting on line `line`) that have `cx.width` fields and are UTF-8,
/// copied in order, how many they are, and the lines of the records left
/// out.
///
/// # Errors
/// [`Error::Cancelled`] when the load is stopped.
pub(crate) fn drop_bad_records(
    input: &[u8],
    line: u64,
    cx: &Context,
) -> Result<(Vec<u8>, usize, Vec<u64>)> {
    let mut reader = Records::new(input, cx.width, cx.dialect);
    let mut out = Vec::with_capacity(input.len());
    let (mut kept, mut dropped) = (0, Vec::new());
    while let Some((start, n)) = reader.next()? {
        if (kept + dropped.len()) % STOP_EVERY_ROWS == STOP_EVERY_ROWS - 1 {
            cx.stop.check()?;
        }
        let raw = &input[start..reader.pos];
        if n == cx.width && std::str::from_utf8(raw).is_ok() {
            out.extend_from_slice(raw);
            if !matches!(raw.last(), Some(b'\n' | b'\r')) {
                out.push(b'\n');
            }
            kept += 1;
        } else {
            dropped.push(line_at(input, line, start));
        }
    }
    Ok((out, kept, dropped))
}

/// Parses one record from the start of `input` into owned field bytes;
/// `None` when the input holds no record.
pub(crate) fn first_record(input: &[u8], dialect: &Dialect) -> Result<Option<Vec<Vec<u8>>>> {
    let mut records = Records::new(input, 16, dialect);
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

/// The separators that end an unquoted field: the delimiter and line
/// breaks.
#[inline]
fn is_separator(b: u8, delimiter: u8) -> bool {
    b == delimiter || b == b'\n' || b == b'\r'
}

/// Index of the first `delimiter`, `\n` or `\r` in `b` at or after `i`, or
/// `b.len()`.
#[inline]
fn find_separator(b: &[u8], mut i: usize, delimiter: u8) -> usize {
    const LO: u64 = u64::from_le_bytes([1; 8]);
    const HI: u64 = u64::from_le_bytes([0x80; 8]);
    // High bit set in each byte of `w` equal to `c`; bits above the lowest
    // match may be false positives, the lowest one is exact.
    #[inline(always)]
    fn matches(w: u64, c: u8) -> u64 {
        let x = w ^ (LO * c as u64);
        x.wrapping_sub(LO) & !x & HI
    }
    while let Some(word) = b.get(i..i + 8) {
        let w = u64::from_le_bytes(word.try_into().unwrap_or_default());
        let m = matches(w, delimiter) | matches(w, b'\n') | matches(w, b'\r');
        if m != 0 {
            return i + (m.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while i < b.len() && !is_separator(b[i], delimiter) {
        i += 1;
    }
    i
}

/// Finishes records with quoted fields with `csv-core`.
struct Quoted<'d> {
    reader: Reader,
    dialect: &'d Dialect,
    out: Vec<u8>,
    ends: Vec<usize>,
    nulls: Vec<bool>,
    quoted: Vec<bool>,
}

impl<'d> Quoted<'d> {
    fn new(dialect: &'d Dialect) -> Quoted<'d> {
        Quoted {
            reader: dialect.syntax.reader(),
            dialect,
            out: vec![0; 4096],
            ends: vec![0; 64],
            nulls: Vec::new(),
            quoted: Vec::new(),
        }
    }

    /// Parses the rest of a record from the start of `input` (the start of
    /// a field); returns the bytes consumed and the number of fields, which
    /// are then [`Quoted::value`].
    fn parse(&mut self, input: &[u8]) -> (usize, usize) {
        let (used, fields) = self.parse_fields(input);
        mark_nulls(
            self.dialect,
            &input[..used],
            &self.out,
            &self.ends[..fields],
            &mut self.nulls,
            &mut self.quoted,
        );
        (used, fields)
    }

    fn parse_fields(&mut self, input: &[u8]) -> (usize, usize) {
        let (mut pos, mut nout_total, mut fields) = (0, 0, 0);
        loop {
            let (res, nin, nout, nend) = self.reader.read_record(
                &input[pos..],
                &mut self.out[nout_total..],
                &mut self.ends[fields..],
            );
            pos += nin;
            nout_total += nout;
            fields += nend;
            match res {
                ReadRecordResult::InputEmpty => {
                    if pos == input.len() && nin == 0 && nout == 0 && nend == 0 {
                        // Already told the input ended: nothing more comes.
                        return (pos, fields);
                    }
                }
                ReadRecordResult::OutputFull | ReadRecordResult::OutputEndsFull => {
                    grow(&res, &mut self.out, &mut self.ends)
                }
                ReadRecordResult::Record | ReadRecordResult::End => return (pos, fields),
            }
        }
    }

    /// Field `i` of the record parsed last, `None` when it is NULL.
    fn value(&self, i: usize) -> Option<&[u8]> {
        (!self.nulls[i]).then(|| field_of(&self.out, &self.ends, i))
    }
}

/// Records between two looks at whether the load was stopped.
const STOP_EVERY_ROWS: usize = 4096;

/// Calls `each(column, row, field, at)` for every field of every record of
/// `input` (text from a record boundary on, UTF-8), `field` having its
/// quotes removed (`None` for a NULL field) and being `input[at..]` when
/// `at` is given. Returns false (after calling `each` for some fields)
/// unless `input` holds exactly `records` records of `width` fields, or
/// when `stop` says so.
pub(crate) fn split_fields(
    input: &[u8],
    width: usize,
    records: usize,
    dialect: &Dialect,
    stop: &Stop,
    mut each: impl FnMut(usize, usize, Option<&[u8]>, Option<u32>),
) -> bool {
    let n = input.len();
    let mut pos = 0;
    let mut quoted: Option<Quoted> = None;
    let (delimiter, quote) = (dialect.syntax.delimiter, dialect.syntax.quote);
    for row in 0..records {
        if row % STOP_EVERY_ROWS == STOP_EVERY_ROWS - 1 && stop.stopped() {
            return false;
        }
        while pos < n && matches!(input[pos], b'\n' | b'\r') {
            pos += 1;
        }
        if pos == n {
            return false;
        }
        let mut c = 0;
        loop {
            if pos < n && input[pos] == quote {
                let q = quoted.get_or_insert_with(|| Quoted::new(dialect));
                let (used, fields) = q.parse(&input[pos..]);
                if c + fields != width {
                    return false;
                }
                for i in 0..fields {
                    each(c + i, row, q.value(i), None);
                }
                pos += used;
                break;
            }
            let end = find_separator(input, pos, delimiter);
            let field = &input[pos..end];
            if dialect.is_null_text(field) {
                each(c, row, None, None);
            } else {
                each(c, row, Some(field), Some(pos as u32));
            }
            c += 1;
            if end < n && input[end] == delimiter {
                if c == width {
                    return false;
                }
                pos = end + 1;
            } else {
                if c != width {
                    return false;
                }
                pos = (end + 1).min(n);
                break;
            }
        }
    }
    while pos < n && matches!(input[pos], b'\n' | b'\r') {
        pos += 1;
    }
    pos == n
}

/// What every span of one load is parsed with.
pub(crate) struct Context<'a> {
    /// The input's name for error messages.
    pub origin: &'a Path,
    /// Delimiter, quote and null string.
    pub dialect: &'a Dialect,
    /// Fields per record.
    pub width: usize,
    /// When to give up.
    pub stop: &'a Stop,
    /// What to suggest when a record has the wrong number of fields (a
    /// delimiter that seems to fit better).
    pub hint: Option<&'a str>,
    /// Timestamp layouts besides ISO 8601.
    pub formats: Formats,
}

/// Parses the records of a span, `input`, which starts at a record boundary
/// on line `line` and holds `records` records, each of which must have
/// `cx.width` fields, inferring each column's kind and keeping its parsed
/// values or text.
///
/// # Errors
/// [`Error::Csv`] for a record of the wrong width (at its first missing or
/// extra field) or a field that is not UTF-8, naming the record's line,
/// whichever comes first; [`Error::NotSupported`] when the span holds 4 GiB
/// or more of text; [`Error::Cancelled`] when the load is stopped.
pub(crate) fn parse_span(input: &[u8], line: u64, records: usize, cx: &Context) -> Result<Batch> {
    let width = cx.width;
    check_span_len(input.len())?;
    let mut columns: Vec<ColumnBuilder> = (0..width).map(|_| ColumnBuilder::new(records, cx.formats.clone())).collect();
    if split_fields(
        input,
        width,
        records,
        cx.dialect,
        cx.stop,
        |c, row, field, at| match field {
            Some(field) => columns[c].observe(row, field, at),
            None => columns[c].observe_null(row),
        },
    ) {
        // Every field was checked for UTF-8 on the way, except kept
        // per-row text, for which the whole span is checked.
        let checks: Option<Vec<bool>> = columns.iter().map(ColumnBuilder::utf8_ok).collect();
        let valid = match checks {
            Some(checks) => !checks.contains(&false),
            None => {
                columns.iter().all(|c| c.utf8_ok() != Some(false))
                    && std::str::from_utf8(input).is_ok()
            }
        };
        if valid {
            return Ok(Batch {
                rows: records,
                columns,
            });
        }
    }
    cx.stop.check()?;
    parse_span_slow(input, line, records, cx)
}

/// Refuses a span of 4 GiB of text or more (its offsets are 32 bits).
///
/// # Errors
/// [`Error::NotSupported`] naming the span's size.
fn check_span_len(bytes: usize) -> Result<()> {
    if bytes >= u32::MAX as usize {
        return Err(Error::NotSupported(format!(
            "a partition of {bytes} bytes of text (the limit is 4 GiB); load with fewer rows per partition"
        )));
    }
    Ok(())
}

/// [`parse_span`] for a span whose text is read a piece at a time:
/// `read(piece, out)` fills `out` (`piece.len` bytes) with its text, so the
/// text in memory is one piece, not the span. Every kept text is copied
/// (none is a range of the span's text). `Ok(None)` when a piece is not
/// UTF-8 as a whole or a record does not fit (the caller then parses the
/// whole span's text with [`parse_span`], which names the error or keeps
/// the fields whose quotes split a character).
///
/// # Errors
/// What `read` fails with; [`Error::NotSupported`] for a span of 4 GiB of
/// text or more; [`Error::Cancelled`] when the load is stopped (looked at
/// before each piece).
pub(crate) fn parse_pieces(
    pieces: &[Piece],
    records: usize,
    cx: &Context,
    buf: &mut Vec<u8>,
    read: impl Fn(&Piece, &mut [u8]) -> Result<()>,
) -> Result<Option<Batch>> {
    let width = cx.width;
    check_span_len(pieces.iter().map(|p| p.len).sum())?;
    let mut columns: Vec<ColumnBuilder> = (0..width)
        .map(|_| ColumnBuilder::new(records, cx.formats.clone()))
        .collect();
    let mut first_row = 0;
    for piece in pieces {
        if buf.len() < piece.len {
            buf.resize(piece.len, 0);
        }
        let text = &mut buf[..piece.len];
        cx.stop.check()?;
        read(piece, text)?;
        let text = &*text;
        // A piece of UTF-8 has every field UTF-8 (quotes are ASCII).
        let fits = std::str::from_utf8(text).is_ok()
            && split_fields(
                text,
                width,
                piece.records,
                cx.dialect,
                cx.stop,
                |c, row, field, _| match field {
                    Some(field) => columns[c].observe(first_row + row, field, None),
                    None => columns[c].observe_null(first_row + row),
                },
            );
        if !fits {
            cx.stop.check()?;
            return Ok(None);
        }
        first_row += piece.records;
    }
    if first_row != records || columns.iter().any(|c| c.utf8_ok() == Some(false)) {
        return Ok(None);
    }
    Ok(Some(Batch {
        rows: records,
        columns,
    }))
}

/// [`parse_span`] record by record with `csv-core`, reporting the first
/// error.
fn parse_span_slow(input: &[u8], line: u64, records: usize, cx: &Context) -> Result<Batch> {
    let (width, origin) = (cx.width, cx.origin);
    let mut columns: Vec<ColumnBuilder> = (0..width).map(|_| ColumnBuilder::new(records, cx.formats.clone())).collect();
    let mut reader = Records::new(input, width, cx.dialect);
    let mut rows = 0;
    while let Some((start, n)) = reader.next()? {
        if n != width {
            if let Some(e) = utf8_error(input, line, &columns, cx)? {
                return Err(e);
            }
            let line = line_at(input, line, start);
            let hint = cx.hint.map(|h| format!(" ({h})")).unwrap_or_default();
            return Err(csv_error(
                origin,
                line,
                n.min(width) as u64 + 1,
                format!("expected {width} fields, found {n}{hint}"),
            ));
        }
        if rows % STOP_EVERY_ROWS == STOP_EVERY_ROWS - 1 {
            cx.stop.check()?;
        }
        if rows == records {
            return Err(Error::Internal(format!(
                "the record scan found {records} records at line {line}, the parser more"
            )));
        }
        for (c, column) in columns.iter_mut().enumerate() {
            match reader.value(c) {
                Some(field) => column.observe(rows, field, None),
                None => column.observe_null(rows),
            }
        }
        rows += 1;
    }
    if let Some(e) = utf8_error(input, line, &columns, cx)? {
        return Err(e);
    }
    if rows != records {
        return Err(Error::Internal(format!(
            "the record scan found {records} records at line {line}, the parser {rows}"
        )));
    }
    Ok(Batch { rows, columns })
}

/// The error for the first field (by row, then column) that is not UTF-8.
fn utf8_error(
    input: &[u8],
    line: u64,
    columns: &[ColumnBuilder],
    cx: &Context,
) -> Result<Option<Error>> {
    let first = columns
        .iter()
        .enumerate()
        .filter_map(|(c, b)| b.first_invalid_row(input).map(|row| (row, c)))
        .min();
    let Some((row, c)) = first else {
        return Ok(None);
    };
    let line = record_line(input, line, row, cx.dialect)?;
    Ok(Some(csv_error(
        cx.origin,
        line,
        c as u64 + 1,
        "invalid utf-8",
    )))
}

/// The texts of columns `wanted` (indexes, ascending) of every record of
/// `input`, a span of `records` records that [`parse_span`] has accepted.
/// With `in_place`, a field that is a slice of `input` is kept as its
/// range; without it, every field is copied (for a span whose bytes are
/// not UTF-8 as a whole, though each field is: see [`span_text`]).
pub(crate) fn span_texts(
    input: &[u8],
    records: usize,
    cx: &Context,
    wanted: &[usize],
    in_place: bool,
) -> Result<Vec<Texts>> {
    let (width, dialect) = (cx.width, cx.dialect);
    let mut slot = vec![usize::MAX; width];
    for (k, &c) in wanted.iter().enumerate() {
        slot[c] = k;
    }
    let fresh = || -> Vec<Texts> {
        wanted
            .iter()
            .map(|_| Texts::with_capacity(records))
            .collect()
    };
    let mut texts = fresh();
    let fast = split_fields(
        input,
        width,
        records,
        dialect,
        cx.stop,
        |c, _, field, at| {
            if let Some(t) = texts.get_mut(slot[c]) {
                match field {
                    Some(field) => t.push(field, at.filter(|_| in_place)),
                    None => t.push_null(),
                }
            }
        },
    );
    if fast {
        return Ok(texts);
    }
    cx.stop.check()?;
    let mut texts = fresh();
    let mut reader = Records::new(input, width, dialect);
    while reader.next()?.is_some() {
        for (t, &c) in texts.iter_mut().zip(wanted) {
            match reader.value(c) {
                Some(field) => t.push(field, None),
                None => t.push_null(),
            }
        }
    }
    Ok(texts)
}

/// The text of a span [`parse_span`] has accepted, for slicing fields kept
/// in place; `None` when its bytes are not UTF-8 although every field is,
/// which happens when a quote splits a character (`"\xf0\x9f\x98"\x88"`
/// is the field `😈"`). Fields of such a span are never kept in place:
/// `parse_span` checks the whole span for those, and its record-by-record
/// path copies every field.
pub(crate) fn span_text(input: &[u8]) -> Option<&str> {
    std::str::from_utf8(input).ok()
}

/// Line on which record `index` (0-based) of `input` starts.
pub(crate) fn record_line(
    input: &[u8],
    first_line: u64,
    index: usize,
    dialect: &Dialect,
) -> Result<u64> {
    let mut records = Records::new(input, 16, dialect);
    for _ in 0..index {
        records.next()?;
    }
    let start = records.next()?.map_or(0, |(s, _)| s);
    Ok(line_at(input, first_line, start))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One field as (column, row, text, offset).
    type Found = (usize, usize, String, Option<u32>);

    /// Every field of `input`, or None.
    fn fields(input: &str, width: usize, records: usize) -> Option<Vec<Found>> {
        let mut out = Vec::new();
        split_fields(
            input.as_bytes(),
            width,
            records,
            &Dialect::default(),
            &Stop::default(),
            |c, r, f, at| {
                let f = f.map_or("<null>".to_string(), |f| {
                    String::from_utf8(f.to_vec()).unwrap()
                });
                out.push((c, r, f, at))
            },
        )
        .then_some(out)
    }

    /// The fields of every record as `csv-core` reads them.
    fn reference(input: &str, width: usize) -> Vec<Vec<String>> {
        let dialect = Dialect::default();
        let mut records = Records::new(input.as_bytes(), width, &dialect);
        let mut out = Vec::new();
        while records.next().unwrap().is_some() {
            out.push(
                (0..records.len())
                    .map(|i| {
                        records.value(i).map_or("<null>".to_string(), |f| {
                            String::from_utf8(f.to_vec()).unwrap()
                        })
                    })
                    .collect(),
            );
        }
        out
    }

    #[test]
    fn separators_are_found_in_words_and_tails() {
        for text in [
            "",
            "a",
            "abcdefgh",
            "abcdefghijklmnop,",
            "abcdefg\n",
            "ab\rcd",
            "é,",
        ] {
            let b = text.as_bytes();
            let expected = b
                .iter()
                .position(|&c| is_separator(c, b','))
                .unwrap_or(b.len());
            assert_eq!(find_separator(b, 0, b','), expected, "{text:?}");
        }
        // Every start offset, every separator position.
        let base = b"0123456789abcdefghijklmnopqrstuv".to_vec();
        for at in 0..base.len() {
            for (sep, delimiter) in [(b',', b','), (b'\n', b','), (b'\r', b';'), (b'\t', b'\t')] {
                let mut b = base.clone();
                b[at] = sep;
                for from in 0..=at {
                    assert_eq!(find_separator(&b, from, delimiter), at);
                }
                assert_eq!(find_separator(&b, at + 1, delimiter), b.len());
            }
        }
    }

    #[test]
    fn fields_match_csv_core() {
        let cases = [
            ("a,b,c\n1,2,3\n", 3),
            ("a,b\r\n\r\n1,2\r\n", 2),
            ("a,b\r1,2\r", 2),
            ("a,\n,b\n", 2),
            ("a,", 2),
            ("x,\"q,\"\"uote\"\"\nline\",y\n1,2,3", 3),
            ("\"\",\"\"\n", 2),
            ("ab\"c,d\ne\",f\n", 2),
            ("\"a\"x\"y,z\n", 2),
            ("1,\"2\"\n3,4", 2),
            ("é,ü\n\n\n", 2),
        ];
        for (text, width) in cases {
            let expected = reference(text, width);
            let got = fields(text, width, expected.len()).unwrap_or_else(|| panic!("{text:?}"));
            let mut rebuilt = vec![Vec::new(); expected.len()];
            for (c, r, f, at) in got {
                assert_eq!(rebuilt[r].len(), c);
                if let Some(at) = at {
                    assert_eq!(
                        &text.as_bytes()[at as usize..at as usize + f.len()],
                        f.as_bytes()
                    );
                }
                rebuilt[r].push(f);
            }
            assert_eq!(rebuilt, expected, "{text:?}");
        }
    }

    #[test]
    fn quoted_empty_fields_are_values_on_both_paths() {
        let text = ",\"\",a\n\"\",,\"\"\nb,\"x\",\n";
        let null = "<null>".to_string();
        let e = String::new;
        let expected = vec![
            vec![null.clone(), e(), "a".to_string()],
            vec![e(), null.clone(), e()],
            vec!["b".to_string(), "x".to_string(), null.clone()],
        ];
        // csv-core record by record.
        assert_eq!(reference(text, 3), expected);
        // The splitter (records 2 and 3 finish in csv-core).
        let mut rebuilt = vec![Vec::new(); 3];
        for (_, r, f, _) in fields(text, 3, 3).unwrap() {
            rebuilt[r].push(f);
        }
        assert_eq!(rebuilt, expected);
    }

    #[test]
    fn wrong_widths_and_counts_are_refused() {
        assert!(fields("a,b\n1\n", 2, 2).is_none());
        assert!(fields("a,b\n1,2,3\n", 2, 2).is_none());
        assert!(fields("a,\"b\",c\n", 2, 1).is_none());
        assert!(fields("a,b\n1,2\n", 2, 1).is_none());
        assert!(fields("a,b\n", 2, 2).is_none());
        assert!(fields("a,b\n\n\r\n", 2, 1).is_some());
    }
}
