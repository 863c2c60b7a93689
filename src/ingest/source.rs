//! Reading the input piece by piece (inflating it when it is gzip) and
//! cutting it into spans of whole records, so that parsing can start before
//! the whole file is read.
//!
//! # Design
//! A [`Cutter`] owns a buffer that starts at a record boundary. It reads the
//! input in pieces of [`READ_SIZE`] bytes into the buffer and counts the
//! records: up to the next `"` or `\r` every non-empty line is a record, so
//! only newlines are looked for (`memchr`); a record with a quote or a
//! carriage return is walked by a partial [`Scanner`] (which reports a
//! record cut by the end of the data read so far as incomplete). Once the
//! buffer holds `per_span` records it hands them over as a [`Span`] and
//! keeps the bytes after them (less than a piece and a record) in a small
//! carry buffer; before the next span is read they move into a buffer with
//! room for a span, one handed back to the pool when there is one (so the
//! text in memory is the spans being parsed, each in a buffer paged in
//! once, plus the carry).

use std::io::{BufRead, Read};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use flate2::bufread::MultiGzDecoder;

use super::dialect::{Syntax, quoted_fields};
use super::parse::csv_error;
use super::progress::{Reporter, Stop};
use super::scan::{Next, Scanner};
use crate::control::format_bytes;
use crate::error::{Error, Result};

/// Bytes read from the input at a time.
pub(crate) const READ_SIZE: usize = 1 << 20;

/// Bytes of whole records a streaming cutter hands over at a time (see
/// [`Cutter::stream_pieces`]): a piece is at most twice this and a record.
pub(crate) const PIECE_BYTES: usize = 256 << 10;

/// The most the first span's buffer reserves from its estimate (the first
/// lines' mean length times the span's records): 64 MiB, a 65,536-row span
/// of 1 KiB lines. Larger spans grow their buffer as they fill.
const FIRST_SPAN_ESTIMATE_MAX: usize = 64 << 20;

/// A run of whole records cut from the input.
#[derive(Debug)]
pub(crate) struct Span {
    /// Position of the span in the input (0 for the first).
    pub index: usize,
    /// Offset of `bytes[0]` in the text (after inflating).
    pub offset: u64,
    /// The text: `records` records from a record boundary, plus any blank
    /// lines around them.
    pub bytes: Vec<u8>,
    /// 1-based line at `bytes[0]`.
    pub line: u64,
    /// Number of records.
    pub records: usize,
    /// When the cutter streams ([`Cutter::stream_pieces`]): `bytes` is
    /// empty and the span's text is these pieces, back to back from
    /// `offset`, each of whole records, for the worker to read again from
    /// the input where it is stored.
    pub pieces: Vec<Piece>,
}

/// A run of whole records of a span whose text the cutter did not keep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Piece {
    /// Offset of the piece's first byte from the span's start.
    pub start: usize,
    /// Bytes of text.
    pub len: usize,
    /// Records in the piece.
    pub records: usize,
    /// 1-based line of the piece's first byte.
    pub line: u64,
}

/// A record whose quoted field runs to the end of the input.
#[derive(Debug)]
pub(crate) struct Unterminated {
    /// The record from its first byte to the end of the input.
    pub bytes: Vec<u8>,
    /// 1-based line of the opening quote.
    pub quote_line: u64,
}

/// A reader that counts the bytes read through it and remembers whether
/// the reader it wraps failed, so that a failing file can be told from a
/// corrupt gzip stream.
struct Watched<R> {
    inner: R,
    failed: Arc<AtomicBool>,
    read: Arc<AtomicU64>,
}

impl<R: BufRead> Read for Watched<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let r = self.inner.read(buf);
        match &r {
            Ok(n) => {
                self.read.fetch_add(*n as u64, Ordering::Relaxed);
            }
            Err(_) => self.failed.store(true, Ordering::Relaxed),
        }
        r
    }
}

impl<R: BufRead> BufRead for Watched<R> {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        let r = self.inner.fill_buf();
        if r.is_err() {
            self.failed.store(true, Ordering::Relaxed);
        }
        r
    }

    fn consume(&mut self, amount: usize) {
        self.read.fetch_add(amount as u64, Ordering::Relaxed);
        self.inner.consume(amount);
    }
}

/// The input as text: plain, or inflated when it starts with the gzip
/// magic bytes `1f 8b`.
pub(crate) struct Input<R: BufRead> {
    reader: InputReader<R>,
    source_failed: Arc<AtomicBool>,
    source_read: Arc<AtomicU64>,
}

enum InputReader<R: BufRead> {
    Plain(Watched<R>),
    Gzip(Box<MultiGzDecoder<Watched<R>>>),
}

impl<R: BufRead> Input<R> {
    /// Opens `source`, looking at its first bytes for the gzip magic.
    ///
    /// # Errors
    /// [`Error::Io`] naming `origin` when `source` cannot be read.
    pub(crate) fn open(mut source: R, origin: &Path) -> Result<Input<R>> {
        let head = source.fill_buf().map_err(|e| io_error(origin, e))?;
        let gzip = head.starts_with(&[0x1f, 0x8b]);
        let source_failed = Arc::new(AtomicBool::new(false));
        let source_read = Arc::new(AtomicU64::new(0));
        let watched = Watched {
            inner: source,
            failed: source_failed.clone(),
            read: source_read.clone(),
        };
        let reader = if gzip {
            InputReader::Gzip(Box::new(MultiGzDecoder::new(watched)))
        } else {
            InputReader::Plain(watched)
        };
        Ok(Input {
            reader,
            source_failed,
            source_read,
        })
    }

    /// Bytes of the source read so far (compressed bytes for gzip).
    pub(crate) fn source_bytes(&self) -> u64 {
        self.source_read.load(Ordering::Relaxed)
    }

    /// True when the input is gzip-compressed.
    pub(crate) fn is_gzip(&self) -> bool {
        matches!(self.reader, InputReader::Gzip(_))
    }

    /// Reads at most `limit` more bytes onto the end of `buf`; returns how
    /// many (0 at the end of the input).
    fn read_into(&mut self, buf: &mut Vec<u8>, limit: usize, origin: &Path) -> Result<usize> {
        let result = match &mut self.reader {
            InputReader::Plain(r) => r.take(limit as u64).read_to_end(buf),
            InputReader::Gzip(r) => r.take(limit as u64).read_to_end(buf),
        };
        result.map_err(|e| match &self.reader {
            InputReader::Gzip(_) if !self.source_failed.load(Ordering::Relaxed) => Error::Io {
                path: origin.to_path_buf(),
                source: std::io::Error::new(e.kind(), format!("corrupt gzip stream: {e}")),
            },
            _ => io_error(origin, e),
        })
    }
}

fn io_error(origin: &Path, source: std::io::Error) -> Error {
    Error::Io {
        path: origin.to_path_buf(),
        source,
    }
}

/// Reads the text `input[offset..offset + len]` of each of `wanted`
/// (ascending by offset, not overlapping) into its buffer, from an input
/// opened again.
///
/// # Errors
/// [`Error::Io`] when the input cannot be read; [`Error::Internal`] when it
/// is shorter than before (it changed while loading); [`Error::Cancelled`]
/// when `stop` says so.
pub(crate) fn reread<R: BufRead>(
    mut input: Input<R>,
    origin: &Path,
    wanted: &mut [(u64, usize, &mut Vec<u8>)],
    stop: &Stop,
) -> Result<()> {
    let mut pos = 0u64;
    let mut skip = Vec::new();
    for (offset, len, buf) in wanted.iter_mut() {
        while pos < *offset {
            stop.check()?;
            skip.clear();
            let n = input.read_into(
                &mut skip,
                (*offset - pos).min(READ_SIZE as u64) as usize,
                origin,
            )?;
            if n == 0 {
                return Err(Error::Internal(format!(
                    "{} changed while loading",
                    origin.display()
                )));
            }
            pos += n as u64;
        }
        buf.clear();
        while buf.len() < *len {
            stop.check()?;
            let n = input.read_into(buf, (*len - buf.len()).min(READ_SIZE), origin)?;
            if n == 0 {
                return Err(Error::Internal(format!(
                    "{} changed while loading",
                    origin.display()
                )));
            }
        }
        pos += *len as u64;
    }
    Ok(())
}

/// Walks the records of an input read piece by piece.
pub(crate) struct Cutter<'o, R: BufRead> {
    input: Input<R>,
    origin: &'o Path,
    /// Unconsumed text; `buf[begin..]` starts at a record boundary.
    buf: Vec<u8>,
    /// The small buffer that takes the text after a span when it is cut.
    carry: Vec<u8>,
    begin: usize,
    /// 1-based line at `buf[begin]`.
    begin_line: u64,
    /// Scan position (a record boundary) and its line.
    pos: usize,
    line: u64,
    /// Records in `buf[begin..pos]`.
    records: usize,
    eof: bool,
    /// Bytes of text read so far.
    total: u64,
    spans: usize,
    /// Bytes per span so far, to size the next buffer.
    last_span_len: usize,
    /// Bytes to read at a time.
    read_size: usize,
    /// Where progress goes, and when to stop.
    reporter: Reporter,
    stop: Stop,
    /// Buffers to reuse (already paged in) instead of allocating.
    pool: Option<BufferPool>,
    /// Delimiter and quote of the records.
    syntax: Syntax,
    /// Longest record allowed, in bytes (without its line break).
    max_record_bytes: usize,
    /// A record longer than that was met.
    too_long_seen: bool,
    /// When streaming: the bytes of text after which the records scanned
    /// are handed over as a piece and dropped from the buffer.
    piece_bytes: Option<usize>,
    /// The pieces of the span being cut, and the text offset of its
    /// first byte once one is handed over.
    pieces: Vec<Piece>,
    span_offset: u64,
    /// Records and bytes of the span in its pieces so far.
    piece_records: usize,
    piece_start: usize,
}

/// Span buffers handed back after use, for the next spans.
pub(crate) type BufferPool = std::sync::Arc<std::sync::Mutex<Vec<Vec<u8>>>>;

impl<'o, R: BufRead> Cutter<'o, R> {
    /// A cutter at the start of `input`, skipping a UTF-8 byte order mark,
    /// that reports the bytes it reads to `reporter` and stops when `stop`
    /// says so.
    ///
    /// # Errors
    /// [`Error::Io`] when the input cannot be read or inflated;
    /// [`Error::Cancelled`] when stopped.
    pub(crate) fn new(
        input: Input<R>,
        origin: &'o Path,
        reporter: Reporter,
        stop: Stop,
    ) -> Result<Cutter<'o, R>> {
        let mut cutter = Cutter {
            input,
            origin,
            buf: Vec::with_capacity(READ_SIZE),
            carry: Vec::new(),
            begin: 0,
            begin_line: 1,
            pos: 0,
            line: 1,
            records: 0,
            eof: false,
            total: 0,
            spans: 0,
            last_span_len: 0,
            read_size: READ_SIZE,
            reporter,
            stop,
            pool: None,
            syntax: Syntax::default(),
            max_record_bytes: usize::MAX,
            too_long_seen: false,
            piece_bytes: None,
            pieces: Vec::new(),
            span_offset: 0,
            piece_records: 0,
            piece_start: 0,
        };
        while cutter.buf.len() < 3 && !cutter.eof {
            cutter.fill()?;
        }
        if cutter.buf.starts_with(b"\xef\xbb\xbf") {
            (cutter.begin, cutter.pos) = (3, 3);
        }
        Ok(cutter)
    }

    /// Cuts records of the given syntax (before the first record is read).
    pub(crate) fn set_syntax(&mut self, syntax: Syntax) {
        self.syntax = syntax;
    }

    /// Fails on a record longer than `bytes` (without its line break),
    /// before reading more than about `bytes` of it.
    pub(crate) fn set_max_record_bytes(&mut self, bytes: usize) {
        self.max_record_bytes = bytes;
    }

    /// The text read so far from the first record on, and whether it is
    /// the whole input: after [`Cutter::new`], the input's first piece.
    pub(crate) fn sample(&self) -> (&[u8], bool) {
        (&self.buf[self.begin..], self.eof)
    }

    /// True once a record longer than the limit was met.
    pub(crate) fn too_long_seen(&self) -> bool {
        self.too_long_seen
    }

    /// Keeps no span's text: records are scanned and dropped a piece of
    /// about `piece_bytes` at a time, and each span is handed over as its
    /// [`Piece`]s for the worker parsing it to read again from an input
    /// that can be read at an offset (a file, bytes in memory). The text
    /// in memory is then a piece per worker rather than a span.
    pub(crate) fn stream_pieces(&mut self, piece_bytes: usize) {
        let piece_bytes = piece_bytes.max(1);
        self.piece_bytes = Some(piece_bytes);
        // A piece is handed over after the read that passes its size: at
        // most twice that (and a record) then.
        self.read_size = self.read_size.min(piece_bytes);
    }

    /// Takes the buffers for new spans from `pool` when it has one.
    pub(crate) fn reuse_buffers(&mut self, pool: BufferPool) {
        self.pool = Some(pool);
    }

    /// Bytes of text read so far (after inflating).
    pub(crate) fn total_bytes(&self) -> u64 {
        self.total
    }

    /// Bytes of the source read so far (compressed bytes for gzip).
    pub(crate) fn source_bytes(&self) -> u64 {
        self.input.source_bytes()
    }

    /// True when the input is gzip-compressed.
    pub(crate) fn is_gzip(&self) -> bool {
        self.input.is_gzip()
    }

    /// Reads the next piece of the input onto the buffer.
    ///
    /// # Errors
    /// [`Error::Io`] when the input cannot be read or inflated;
    /// [`Error::Cancelled`] when the load is stopped.
    fn fill(&mut self) -> Result<()> {
        self.stop.check()?;
        let n = self
            .input
            .read_into(&mut self.buf, self.read_size, self.origin)?;
        self.total += n as u64;
        self.eof = n == 0;
        self.reporter.read(self.input.source_bytes(), self.eof);
        Ok(())
    }

    /// The next record after the scan position, reading as needed; blank
    /// lines before it are passed. With `compact`, blank lines at the start
    /// of a span are dropped from the buffer, which stays bounded however
    /// many there are.
    ///
    /// # Errors
    /// [`Error::Io`] when the input cannot be read or inflated;
    /// [`Error::Csv`] for a record longer than the limit.
    fn scan(&mut self, compact: bool) -> Result<Next> {
        loop {
            let mut scanner =
                Scanner::partial(&self.buf, self.pos, self.line, self.eof, self.syntax);
            let next = scanner.next_record();
            (self.pos, self.line) = (scanner.pos(), scanner.line());
            match next {
                Next::Incomplete => {
                    if self.buf.len() - self.pos > self.max_record_bytes {
                        return Err(self.too_long(self.pos, self.line));
                    }
                    if compact && self.records == 0 && self.pos >= READ_SIZE {
                        self.buf.drain(..self.pos);
                        (self.begin, self.pos, self.begin_line) = (0, 0, self.line);
                    }
                    self.fill()?;
                }
                Next::Record { start, line } => {
                    let mut end = self.pos;
                    while end > start && matches!(self.buf[end - 1], b'\n' | b'\r') {
                        end -= 1;
                    }
                    if end - start > self.max_record_bytes {
                        return Err(self.too_long(start, line));
                    }
                    return Ok(next);
                }
                next => return Ok(next),
            }
        }
    }

    /// The error for a record starting at `buf[start]`, on line `line`, that
    /// is longer than the limit; it names the field in which the limit is
    /// passed.
    fn too_long(&mut self, start: usize, line: u64) -> Error {
        self.too_long_seen = true;
        let end = self.buf.len().min(
            start
                .saturating_add(self.max_record_bytes)
                .saturating_add(1),
        );
        let mut fields = Vec::new();
        quoted_fields(&self.buf[start..end], self.syntax, &mut fields);
        csv_error(
            self.origin,
            line,
            fields.len() as u64,
            format!(
                "record longer than {} (raise --max-line-size)",
                format_bytes(self.max_record_bytes)
            ),
        )
    }

    /// The first record's text (ending at its terminator), consumed when
    /// `consume`; `Ok(Err(unterminated))` when its quoted field never
    /// closes, `Ok(Ok(None))` when there is no record.
    ///
    /// # Errors
    /// [`Error::Io`] when the input cannot be read or inflated;
    /// [`Error::Csv`] for a record longer than the limit.
    pub(crate) fn first_record(
        &mut self,
        consume: bool,
    ) -> Result<std::result::Result<Option<Vec<u8>>, Unterminated>> {
        let (pos, line) = (self.pos, self.line);
        let found = match self.scan(consume)? {
            Next::Record { start, .. } => Ok(Some(self.buf[start..self.pos].to_vec())),
            Next::Unterminated {
                start, quote_line, ..
            } => Err(Unterminated {
                bytes: self.buf[start..].to_vec(),
                quote_line,
            }),
            Next::End | Next::Incomplete => Ok(None),
        };
        if consume {
            if matches!(found, Ok(Some(_))) {
                (self.begin, self.begin_line) = (self.pos, self.line);
            }
        } else {
            (self.pos, self.line) = (pos, line);
        }
        Ok(found)
    }

    /// Reads the rest of the input, discarding it: what a stream error
    /// further on would be, before an error found at its start is reported.
    ///
    /// # Errors
    /// [`Error::Io`] when the input cannot be read or inflated.
    pub(crate) fn drain(&mut self) -> Result<()> {
        while !self.eof {
            self.buf.clear();
            (self.begin, self.pos) = (0, 0);
            self.fill()?;
        }
        Ok(())
    }

    /// The next span of `per_span` records (fewer at the end of the input),
    /// `Ok(Err(_))` for a record whose quoted field runs to the end of the
    /// input (after the spans before it), or `Ok(Ok(None))` at the end.
    ///
    /// # Errors
    /// [`Error::Io`] when the input cannot be read or inflated;
    /// [`Error::Csv`] for a record longer than the limit.
    pub(crate) fn next_span(
        &mut self,
        per_span: usize,
    ) -> Result<std::result::Result<Option<Span>, Unterminated>> {
        let per_span = per_span.max(1);
        if self.piece_bytes.is_none() {
            self.make_room(per_span);
        }
        loop {
            if self
                .piece_bytes
                .is_some_and(|bytes| self.pos - self.begin >= bytes)
            {
                self.hand_over_piece();
            }
            if self.skip_plain_lines(per_span)? {
                return Ok(Ok(Some(self.cut())));
            }
            match self.scan(true)? {
                Next::Record { .. } => {
                    self.records += 1;
                    if self.records == per_span {
                        return Ok(Ok(Some(self.cut())));
                    }
                }
                Next::End | Next::Incomplete => {
                    return Ok(Ok((self.records > 0).then(|| self.cut())));
                }
                Next::Unterminated {
                    start,
                    line,
                    quote_line,
                } => {
                    if self.records > 0 {
                        // Hand over the spans before it first; the scan
                        // meets this record again next time.
                        (self.pos, self.line) = (start, line);
                        return Ok(Ok(Some(self.cut())));
                    }
                    return Ok(Err(Unterminated {
                        bytes: self.buf[start..].to_vec(),
                        quote_line,
                    }));
                }
            }
        }
    }

    /// Counts the records of the text after the scan position up to the
    /// first quote or `\r`: there every record is a line and every
    /// non-empty line a record, so only newlines need finding. Stops after
    /// the `per_span`-th record (returning true) or at the last newline.
    ///
    /// # Errors
    /// [`Error::Csv`] for a line longer than the limit.
    fn skip_plain_lines(&mut self, per_span: usize) -> Result<bool> {
        let from = self.pos;
        let rest = &self.buf[from..];
        let plain = memchr::memchr2(self.syntax.quote, b'\r', rest).unwrap_or(rest.len());
        let mut line_start = from;
        for k in memchr::memchr_iter(b'\n', &rest[..plain]) {
            let end = from + k;
            if end > line_start {
                if end - line_start > self.max_record_bytes {
                    self.pos = line_start;
                    return Err(self.too_long(line_start, self.line));
                }
                self.records += 1;
            }
            self.line += 1;
            line_start = end + 1;
            if self.records == per_span {
                break;
            }
        }
        self.pos = line_start;
        Ok(self.records == per_span)
    }

    /// Before a span of `per_span` records is read: moves the text not
    /// handed over yet into a buffer with room for a span (the next span is
    /// likely as long as the longest so far; the first, as long as
    /// `per_span` lines of the text read so far), so that the buffer rarely
    /// grows (and copies, leaving freed copies behind) while filling: a
    /// buffer handed back to the pool (already paged in), else a new one.
    /// The small buffer it was in becomes the carry again.
    fn make_room(&mut self, per_span: usize) {
        let expected = if self.last_span_len > 0 {
            self.last_span_len
        } else {
            let text = &self.buf[self.begin..];
            match memchr::memchr_iter(b'\n', text).count() {
                _ if self.eof => 0,
                0 => 0,
                // A few long lines must not reserve gigabytes: past the cap
                // the buffer grows as the text comes.
                lines => (text.len() / lines)
                    .saturating_mul(per_span)
                    .min(FIRST_SPAN_ESTIMATE_MAX),
            }
        };
        let room = expected
            .saturating_add(expected / 8)
            .saturating_add(self.read_size);
        if self.buf.capacity() >= room {
            return;
        }
        let mut big = self
            .pool
            .as_ref()
            .and_then(|p| p.lock().ok()?.pop())
            .unwrap_or_default();
        big.clear();
        big.reserve_exact(room);
        big.extend_from_slice(&self.buf[self.begin..]);
        self.pos -= self.begin;
        self.begin = 0;
        self.carry = std::mem::replace(&mut self.buf, big);
    }

    /// When streaming: records `buf[begin..pos]` (whole records) as the
    /// span's next piece and drops it from the buffer.
    fn hand_over_piece(&mut self) {
        let len = self.pos - self.begin;
        if len == 0 {
            return;
        }
        // Blank lines before the span's first record are dropped.
        let blank = self.records == self.piece_records && self.pieces.is_empty();
        if blank {
            self.buf.drain(..self.pos);
            (self.begin, self.pos, self.begin_line) = (0, 0, self.line);
            return;
        }
        if self.pieces.is_empty() {
            self.span_offset = self.total - self.buf.len() as u64 + self.begin as u64;
        }
        self.pieces.push(Piece {
            start: self.piece_start,
            len,
            records: self.records - self.piece_records,
            line: self.begin_line,
        });
        self.piece_start += len;
        self.piece_records = self.records;
        self.buf.drain(..self.pos);
        (self.begin, self.pos, self.begin_line) = (0, 0, self.line);
    }

    /// Hands over `buf[begin..pos]` as a span and keeps the rest in the
    /// carry buffer (when streaming, as the span's last piece, keeping the
    /// rest in the buffer).
    fn cut(&mut self) -> Span {
        if self.piece_bytes.is_some() {
            self.hand_over_piece();
            let pieces = std::mem::take(&mut self.pieces);
            let span = Span {
                index: self.spans,
                offset: self.span_offset,
                bytes: Vec::new(),
                line: pieces.first().map_or(self.line, |p| p.line),
                records: self.records,
                pieces,
            };
            self.spans += 1;
            (self.records, self.piece_records, self.piece_start) = (0, 0, 0);
            return span;
        }
        let len = self.pos - self.begin;
        self.last_span_len = self.last_span_len.max(len);
        let mut rest = std::mem::take(&mut self.carry);
        rest.clear();
        rest.extend_from_slice(&self.buf[self.pos..]);
        let offset = self.total - self.buf.len() as u64 + self.begin as u64;
        self.buf.truncate(self.pos);
        let mut bytes = std::mem::replace(&mut self.buf, rest);
        if self.begin > 0 {
            bytes.drain(..self.begin);
        }
        let span = Span {
            index: self.spans,
            offset,
            bytes,
            line: self.begin_line,
            records: self.records,
            pieces: Vec::new(),
        };
        self.spans += 1;
        (self.begin, self.pos, self.begin_line, self.records) = (0, 0, self.line, 0);
        span
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    /// Spans as (text, line, records), and the unterminated tail's
    /// (text, quote line).
    type Cuts = (Vec<(String, u64, usize)>, Option<(String, u64)>);

    /// [`Cuts`] of `text` read in pieces of `read_size` bytes.
    fn cut(text: &str, per_span: usize, read_size: usize) -> Cuts {
        let origin = Path::new("t.csv");
        let input = Input::open(Cursor::new(text.as_bytes().to_vec()), origin).unwrap();
        let reporter = Reporter::new(None, 0, std::time::Instant::now());
        let mut cutter = Cutter::new(input, origin, reporter, Stop::default()).unwrap();
        cutter.read_size = read_size;
        let mut spans = Vec::new();
        loop {
            match cutter.next_span(per_span).unwrap() {
                Ok(Some(span)) => {
                    assert_eq!(span.index, spans.len());
                    spans.push((
                        String::from_utf8(span.bytes).unwrap(),
                        span.line,
                        span.records,
                    ))
                }
                Ok(None) => return (spans, None),
                Err(u) => {
                    return (
                        spans,
                        Some((String::from_utf8(u.bytes).unwrap(), u.quote_line)),
                    );
                }
            }
        }
    }

    /// The same from a scan of the whole text at once.
    fn reference(text: &str, per_span: usize) -> Cuts {
        let mut scanner = Scanner::partial(text.as_bytes(), 0, 1, true, Syntax::default());
        let mut spans = Vec::new();
        let (mut begin, mut begin_line, mut records) = (0, 1, 0);
        loop {
            let next = scanner.next_record();
            match next {
                Next::Record { .. } => {
                    records += 1;
                    if records == per_span {
                        spans.push((text[begin..scanner.pos()].to_string(), begin_line, records));
                        (begin, begin_line, records) = (scanner.pos(), scanner.line(), 0);
                    }
                }
                Next::End | Next::Incomplete => {
                    if records > 0 {
                        spans.push((text[begin..].to_string(), begin_line, records));
                    }
                    return (spans, None);
                }
                Next::Unterminated {
                    start, quote_line, ..
                } => {
                    if records > 0 {
                        spans.push((text[begin..start].to_string(), begin_line, records));
                    }
                    return (spans, Some((text[start..].to_string(), quote_line)));
                }
            }
        }
    }

    /// Texts the cutter tests split: blank lines, CR and CRLF line ends,
    /// quoted line breaks and doubled quotes, an unclosed quote, nothing.
    const CUT_TEXTS: [&str; 8] = [
        "1\n2\n\n3\n4\n5\n6\n7",
        "a,b\n1,2\n3,4\n",
        "a,b\r\n1,2\r\n\r\n3,4\r\n",
        "x\r1\r\r2\n",
        "\"a\nb\",c\nd,\"e\"\"\nf\"\n\n\ng,h\n",
        "1,2\n\"3\n4,5\n",
        "\n\n\nx\n\n",
        "",
    ];

    #[test]
    fn spans_hold_exact_record_counts_whatever_the_read_size() {
        // Also a quote inside an unquoted field.
        for text in CUT_TEXTS.into_iter().chain(["ab\"c\nd\"e\nf\n"]) {
            for per_span in [1, 2, 3, 100] {
                let expected = reference(text, per_span);
                for read_size in [1, 2, 3, 5, 64] {
                    assert_eq!(
                        cut(text, per_span, read_size),
                        expected,
                        "{text:?} per {per_span} read {read_size}"
                    );
                }
            }
        }
        let (spans, _) = cut("1\n2\n\n3\n4\n5\n6\n7", 3, 2);
        let lines: Vec<u64> = spans.iter().map(|s| s.1).collect();
        assert_eq!(lines, [1, 5, 8]);
    }

    /// [`Cuts`] of `text` read in pieces of `read_size` bytes by a cutter
    /// that streams pieces of `piece_bytes`, each span's text put together
    /// from its pieces' places in `text`, which must be contiguous, of
    /// whole records, and start on the lines they say.
    fn cut_streaming(text: &str, per_span: usize, read_size: usize, piece_bytes: usize) -> Cuts {
        let origin = Path::new("t.csv");
        let input = Input::open(Cursor::new(text.as_bytes().to_vec()), origin).unwrap();
        let reporter = Reporter::new(None, 0, std::time::Instant::now());
        let mut cutter = Cutter::new(input, origin, reporter, Stop::default()).unwrap();
        cutter.read_size = read_size;
        cutter.stream_pieces(piece_bytes);
        let mut spans = Vec::new();
        loop {
            match cutter.next_span(per_span).unwrap() {
                Ok(Some(span)) => {
                    assert!(span.bytes.is_empty());
                    assert!(!span.pieces.is_empty());
                    let mut joined = String::new();
                    let mut records = 0;
                    for p in &span.pieces {
                        assert_eq!(p.start, joined.len());
                        let at = span.offset as usize + p.start;
                        let piece = &text[at..at + p.len];
                        let (expected, ..) = reference(piece, usize::MAX);
                        let counted: usize = expected.iter().map(|s| s.2).sum();
                        assert_eq!(counted, p.records, "{piece:?}");
                        let line = 1 + text[..at].bytes().filter(|&b| b == b'\n').count() as u64;
                        if !text[..at].contains('\r') {
                            assert_eq!(p.line, line, "{piece:?}");
                        }
                        joined.push_str(piece);
                        records += p.records;
                    }
                    assert_eq!(records, span.records);
                    spans.push((joined, span.line, span.records))
                }
                Ok(None) => return (spans, None),
                Err(u) => {
                    return (
                        spans,
                        Some((String::from_utf8(u.bytes).unwrap(), u.quote_line)),
                    );
                }
            }
        }
    }

    /// `cuts` with the blank lines before each span's first record left
    /// out (a streaming cutter may drop them).
    fn without_leading_blanks((mut spans, tail): Cuts) -> Cuts {
        for (span, line, _) in &mut spans {
            let rest = span.trim_start_matches(['\r', '\n']);
            let blank = &span[..span.len() - rest.len()];
            *line += (blank.matches('\n').count() + blank.matches('\r').count()
                - blank.matches("\r\n").count()) as u64;
            *span = rest.to_string();
        }
        (spans, tail)
    }

    #[test]
    fn streamed_pieces_make_up_the_same_spans() {
        // Also a byte order mark.
        for text in CUT_TEXTS.into_iter().chain(["\u{feff}a\nb\n"]) {
            for per_span in [1, 2, 3, 100] {
                let expected =
                    without_leading_blanks(reference(text.trim_start_matches('\u{feff}'), per_span));
                for read_size in [1, 2, 5, 64] {
                    for piece_bytes in [1, 3, 1000] {
                        assert_eq!(
                            without_leading_blanks(cut_streaming(
                                text,
                                per_span,
                                read_size,
                                piece_bytes
                            )),
                            expected,
                            "{text:?} per {per_span} read {read_size} pieces of {piece_bytes}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn a_byte_order_mark_is_skipped() {
        let (spans, _) = cut("\u{feff}a\nb\n", 1, 1);
        assert_eq!(spans[0], ("a\n".to_string(), 1, 1));
    }
}
