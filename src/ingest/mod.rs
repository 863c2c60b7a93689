//! CSV and gzipped CSV to an encoded [`Table`].
//!
//! # Input
//! - Plain or gzip-compressed text; gzip is recognised by its magic bytes
//!   `1f 8b` whatever the file is called, and may have several members. A
//!   UTF-8 byte order mark at the start is skipped.
//! - RFC 4180 records as read by `csv-core`: a delimiter between fields
//!   ([`LoadOptions::delimiter`], else detected among `,` `;` tab `|` from
//!   the first records, see `dialect.rs`), quotes ([`LoadOptions::quote`],
//!   `"` by default) doubled inside quotes for a quote, and `\n`, `\r\n` or
//!   `\r` ending a record. Empty lines are skipped (so a one-column file
//!   cannot hold a NULL row written as an empty line). Every record must
//!   have as many fields as the header (or as the first record without
//!   one); when it has not, the error suggests a delimiter that fits.
//! - Every field must be UTF-8.
//!
//! # Values
//! PostgreSQL COPY's rule: an unquoted empty field is NULL, and so is an
//! unquoted [`LoadOptions::null_string`]; a quoted field never is, so `""`
//! is the empty string (as DuckDB reads with `allow_quoted_nulls =
//! false`). The empty string is a string, so a `""`
//! in a column of numbers makes it a string column, as in DuckDB. Column
//! types are inferred from every value in the file (see the rules in
//! `infer.rs`, summarised on [`load_csv_bytes`]); a column with no value at
//! all is a string column of NULLs.
//!
//! # Limits
//! A record (and so any field) longer than [`LoadOptions::max_line_bytes`]
//! fails the load, naming its line and the field in which the limit is
//! passed (`x.csv:1:1: record longer than 64.0 MiB (raise
//! --max-line-size)`), as soon as that much of it has been read: an input
//! without line breaks (`/dev/zero`, a 1 GB one-line file) stops there,
//! holding about the limit in memory. Blank lines are passed without being
//! kept.
//!
//! # Notes on types
//! A string column whose values are nearly all numbers (or nearly all
//! timestamps) says why in its [`Field::note`]: when at most a tenth of its
//! non-NULL values are not numbers (or not timestamps), the note counts
//! them and shows the first, e.g. `typed as string because of 1 value of
//! 10,000,000 (line 10000001: "2500000x")` (the value shortened to 40
//! characters). Each span counts its columns' misfits as it parses (a
//! string column per distinct text where it interns them); the counts are
//! added up in file order.
//!
//! # Column names
//! From the header, or [`LoadOptions::columns`], or `column_1`, `column_2`, …
//! when there is neither. An empty (or all-blank) name becomes `column_N`,
//! `N` being its 1-based position. A name already taken gets the first free
//! suffix `_2`, `_3`, … (`a,a,a` becomes `a`, `a_2`, `a_3`); suffixes avoid
//! every name of the header, so `a,a,a_2` becomes `a`, `a_3`, `a_2`.
//!
//! # Empty input
//! A file with no record at all (empty, or only blank lines) is an error
//! when a header is expected, or when neither a header nor column names are
//! given (there is nothing to name the columns). A header without records,
//! or an empty file with [`LoadOptions::columns`] and no header, loads as a
//! table of zero rows and zero partitions whose columns are all strings.
//!
//! # Design
//! The workers of the current rayon pool read the input themselves, one at
//! a time: a free worker takes the reader (a lock), reads (and inflates,
//! for gzip) in pieces of a MiB, finds record boundaries (`scan`: newlines
//! with `memchr` where there is no quote or carriage return, else a scan
//! that tracks quotes) and cuts the next span of exactly `partition_rows`
//! records (`source`), then hands the reader on and parses while another
//! worker reads. Nothing is read ahead. Input that can be read at an offset
//! (a plain file, or bytes in memory) keeps no span's text: the reader
//! drops the records it has counted a piece of 256 to 512 KiB at a time
//! ([`source::Piece`]), and the worker reads each piece again (`pread`)
//! into a buffer of its own as it parses it, copying the texts a string
//! column keeps (`parse::parse_pieces`); a span whose pieces do not parse
//! (a bad record, or a quote that splits a UTF-8 character) is read whole
//! and parsed as below, which names the error. So the text in memory is a
//! piece per worker and the reader's. Gzip (inflated once) and pipes (read
//! once) keep each span's text in a buffer, the worker's last span's, paged
//! in once. A worker parses its span (`parse`: fields split eight bytes at a time,
//! `csv-core` for records with quoted fields), with one builder per column
//! (`build`) inferring the narrowest type and keeping the parsed integers,
//! floats or timestamps, or interning the text of a column that is a
//! string from its first value on, and encodes the span at once as a
//! partition with those types (`encode`); the span's buffer then takes its
//! next span. When the input's size is known (a file or bytes; for gzip,
//! the text is projected from the file's size and the text inflated per
//! byte read so far), each string column of the partition also goes to
//! the table-wide dictionary being built for it
//! ([`crate::store::TableDictBuilder`]), which keeps only codes for a
//! column whose strings repeat across the table; a column it has measured
//! is recoded straight from the parsed strings, without encoding it
//! first. Once every span is in, the types are merged, and
//! the rare column whose type in a span differs from the merged one is
//! encoded again: integers widened to floats, or the span's text read again
//! from the input (a file or bytes; input that cannot be read twice, such
//! as a pipe, keeps every span's text instead) and parsed as strings.
//!
//! # Errors, cancelling and progress
//! A cancelled load ([`LoadOptions::cancel`], polled by the worker reading
//! before each piece and by the parsers every few thousand records) stops
//! with [`Error::Cancelled`]. Otherwise the error reported is an input
//! that cannot be read or inflated, else the first bad record in file
//! order (spans after a bad one are not parsed). Nothing is returned on
//! error. The worker reading reports the bytes read so far to
//! [`LoadOptions::on_progress`]; the library draws nothing.
//!
//! # Memory
//! Each partition's bytes are reserved against [`LoadOptions::memory`] as
//! soon as it is encoded, so a table that will not fit stops the load
//! early with [`Error::MemoryLimit`] (and stops every other part of it);
//! the reservation, brought to the final table's size, is handed on in
//! [`Loaded::memory`].
//!
//! Besides the table, a load holds each worker's parsed values for one
//! span and its text: a piece (256 to 512 KiB) per worker and the
//! reader's for a plain file or bytes, whose spans are read again a piece
//! at a time; a span per worker for gzip and pipes (each worker reads its
//! next span into the buffer of its last, so no span is read ahead and no
//! buffer is paged in twice). [`Loaded::peak_bytes`] reports what the
//! process's resident memory rose by at the load's highest. Against issue
//! 30's bound, 1.3 times the table plus a span of text per thread, with 2
//! threads (`katydid-bench --load-peak FILE --threads 2`, 65,536 rows a
//! span; three to six runs each on a shared 2-core machine at load 3-4):
//!
//! | file (rows)        | table    | bound    | peak        | spans kept |
//! |--------------------|----------|----------|-------------|------------|
//! | taxi (2M)          | 111.5 MB | 197 MB   | 164-174 MB  | 235-244 MB |
//! | taxi-f32 (2M)      | 108.6 MB | 198 MB   | 163-172 MB  | 241-244 MB |
//! | taxi (1M)          | 56.9 MB  | 127 MB   | 113-115 MB  | 178-180 MB |
//! | taxi, gzip (2M)    | 111.5 MB | 197 MB   | 213 MB      | 238 MB     |
//!
//! ("spans kept": before pieces, with mimalloc's 10 ms purge delay; the
//! binaries now purge at once during loads, see `cli/src/alloc.rs`: with
//! pieces and 10 ms, taxi peaks at 194-205 MB, the pages freed with each
//! span's parsed values not yet returned.) Of the 2M-row taxi load's live
//! heap at its peak (a counting allocator around the system's), 165 MB,
//! the table is 111.5 MB and the two workers' parsed values about 24 MB
//! each: 8 MB of floats, 4 MB of integers (32 bits while they fit), 3 MB
//! of interned strings' ids and 8 MB of `pickup` and `dropoff`, nearly
//! unique hex points copied per row. Gzip still keeps a span of text per
//! worker (its text is inflated once, in order), so it is above the bound.
//! The figures below are from before pieces (spans kept for every input):
//!
//! | file (rows)               | CSV B/row | table   | peak    | was     |
//! |---------------------------|-----------|---------|---------|---------|
//! | taxi (2M, 51 columns)     | 404       | 111 MB  | 237 MB  | 445 MB  |
//! | shapes (1M, 13 columns)   | 98        | 39.0 MB | 98 MB   | 182 MB  |
//! | hits (1M, 25 columns)     | 313       | 152 MB  | 277 MB  | 418 MB  |
//! | shapes (10M)              | 99        | 370 MB  | 481 MB  | 547 MB  |
//! | taxi-f32 (10M)            | 434       | 541 MB  | 704 MB  | 926 MB  |
//!
//! (taxi-f32 at 10M "was": its four float32 coordinate columns as f64,
//! 778 MB of table, before the f32 codec, `store::Single`. With 8 threads
//! its peak is 1,008 MB: the parsed values and encoders' buffers of a
//! worker, about 30 MB beside its 28 MB span of text, are not yet within
//! the 1.3× bound at that many workers.
//! Shapes at 10M "was": its three string columns of 10,000 to a million
//! distinct strings held in FSST or partition dictionaries until the
//! table-wide dictionaries were made after the load; see
//! [`crate::store::TableDictBuilder`]. The others' "was": a reading thread
//! holding a finished span and a spare buffer
//! besides the workers', and mimalloc 3, which returns freed memory to the
//! system only a second later; the binaries now use mimalloc 2, see
//! `cli/Cargo.toml`, then with its default 10 ms purge delay during loads
//! and a second while queries run, see `cli/src/alloc.rs`.) Of taxi's 126 MB
//! above the table, the two spans of
//! text are 53 MB, the parsed values about 20 MB a worker (integers in 32
//! bits while they fit) plus the interned strings (a nearly unique
//! column such as the hex points of `pickup` and `dropoff` stops being
//! interned after 4,096 rows, see `store::dictionary_unlikely`), and the
//! rest the encoders' transient buffers and what the allocator keeps.
//!
//! The 10M-row loads are within issue 30's bound, 1.3 times the table plus
//! one span of text per worker (taxi-f32: 704 MB against 760 MB); at 1M
//! rows they are not, at the default span or at a small one
//! (`katydid-bench --load-peak FILE --threads 2 [--partition-rows N]`,
//! the files from `katydid generate taxi-f32 --rows 1000000 --out FILE`;
//! the peaks of two or three runs):
//!
//! | file (rows, rows a span)  | table   | peak       | bound   |
//! |---------------------------|---------|------------|---------|
//! | taxi-f32 (1M, 65,536)     | 55.5 MB | 176-186 MB | 129 MB  |
//! | taxi-f32 (1M, 8,192)      | 56.5 MB | 103-109 MB | 81 MB   |
//! | taxi (1M, 65,536)         | 56.9 MB | 169-174 MB | 127 MB  |
//! | taxi (1M, 8,192)          | 57.9 MB | 106-111 MB | 82 MB   |
//!
//! The bound leaves 0.3 times the table, 17 MB here, for what the load
//! holds besides the table and the spans. At 65,536 rows a span each
//! worker's parsed values alone are 20 MB beside its 28 MB of text. At
//! 8,192 rows, the live bytes (a counting allocator around mimalloc) at
//! the peak, the end of the last spans, are 86 MB: the table's 59 MB, 6
//! MB more that `store::table_dictionaries` saves after the load, and 21
//! MB of the two workers' spans (3.5 MB of text each), parsed values and
//! encoders' buffers; the other 15-20 MB of the peak is memory freed but
//! not yet returned by the allocator. mimalloc's purge delay at 0 during
//! loads brings the peak within 4-8 MB of the live bytes, but doubles the
//! page faults (8% more CPU time; the binaries now pay it, pieces having
//! saved more, see above). `cli/tests/load_peak.rs` checks the
//! bound at 10M rows (ignored by default: minutes and 4 GB of temporary
//! files).

pub mod arrow;
mod build;
mod dialect;
mod encode;
mod infer;
mod parse;
pub mod parquet;
mod peak;
mod progress;
mod scan;
mod source;

use std::collections::HashSet;
use std::io::{BufRead, BufReader, Cursor};
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use rayon::prelude::*;

use self::build::{Census, ColumnBuilder};
use self::dialect::{Dialect, Syntax, sniff, tab_separated_name};
use self::infer::Kind;
use self::parse::{Context, csv_error, first_record, parse_span};
use self::progress::{Reporter, Stop};
use self::encode::SpanText;
use self::source::{BufferPool, Cutter, Input, Piece, Span, Unterminated};
use std::sync::Arc;

use crate::control::{CancelToken, MemoryBudget, ProgressFn, Reservation};
use crate::error::{Error, Result};
use crate::store::{Column, Field, Partition, Table};
use crate::types::TimestampFormat;

/// Default rows per partition.
pub const DEFAULT_PARTITION_ROWS: usize = 1 << 16;

/// Default longest record: 64 MiB.
pub const DEFAULT_MAX_LINE_BYTES: usize = 64 << 20;

/// The most columns a table may have. Each column costs a builder of a few
/// hundred bytes per partition being parsed before any value is read, so
/// without a bound a line of a million commas asks for gigabytes.
pub const MAX_COLUMNS: usize = 100_000;

/// How to read a CSV file.
#[derive(Clone)]
pub struct LoadOptions {
    /// The first record is a header of column names (default true).
    pub header: bool,
    /// Column names to use instead of (or, without a header, in place of) the
    /// header's; must match the record width.
    pub columns: Option<Vec<String>>,
    /// Rows per partition (default [`DEFAULT_PARTITION_ROWS`]); 0 is taken
    /// as 1.
    pub partition_rows: usize,
    /// The field delimiter, an ASCII character; `None` detects it from the
    /// first records (the first of `,` `;` tab `|` that splits them all into
    /// the same number of fields, more than one; else `,`), and a name
    /// ending in `.tsv` or `.tsv.gz` means tab.
    pub delimiter: Option<u8>,
    /// The quote character, ASCII (default `"`).
    pub quote: u8,
    /// An unquoted field equal to this text is NULL too, besides an
    /// unquoted empty field (`NA`, `\N`); a quoted one is text.
    pub null_string: Option<String>,
    /// Longest record (line) in bytes; a longer one fails the load naming
    /// file, line and size (default [`DEFAULT_MAX_LINE_BYTES`]).
    pub max_line_bytes: usize,
    /// Replace a table of the same name (the [`crate::Database`] refuses to
    /// otherwise).
    pub replace: bool,
    /// Skip malformed records (the wrong number of fields, text that is not
    /// UTF-8) instead of failing the load; the load's notices say how many
    /// and give the first lines (DuckDB's `ignore_errors`). Spans are then
    /// kept in memory until the load ends instead of being read again.
    pub ignore_errors: bool,
    /// Layouts in strftime notation to read timestamps in besides ISO
    /// 8601, tried in order (DuckDB's `timestampformat` and `dateformat`):
    /// with `%m/%d/%Y %H:%M`, a column of `09/01/2013 10:00` is a
    /// timestamp column. A layout without a time of day gives midnight.
    /// A field that matches no layout is text, as without one; a field
    /// that reads as a number stays a number.
    pub timestamp_formats: Vec<Arc<TimestampFormat>>,
    /// Polled by the worker reading before each piece it reads and by the
    /// parsers every few thousand records: a cancelled load stops within
    /// milliseconds with [`Error::Cancelled`] and keeps nothing.
    pub cancel: Option<CancelToken>,
    /// Receives [`crate::Progress`] reports in [`crate::ProgressUnit::Bytes`]:
    /// bytes of the input read so far (compressed bytes for gzip) of its
    /// size (0 for a pipe), at most every 50 ms, from the worker reading,
    /// the last when the whole input is read.
    pub on_progress: Option<ProgressFn>,
    /// The budget the loaded table's bytes count against: each partition
    /// is reserved as it is encoded, so a load that would pass the limit
    /// stops early with [`Error::MemoryLimit`] (`load needs more than 1.2
    /// GiB for table "trips" after 1,200,000 rows (limit 1.0 GiB)`) and
    /// keeps nothing; the reservation is handed on with the table.
    pub memory: Option<Arc<MemoryBudget>>,
    /// Arrow and Parquet input: leave out the columns of a type katydid
    /// cannot load (lists, structs, maps, …), with a notice naming each,
    /// instead of failing the load (default false). CSV ignores it.
    pub skip_unsupported: bool,
}

impl Default for LoadOptions {
    fn default() -> Self {
        LoadOptions {
            header: true,
            columns: None,
            partition_rows: DEFAULT_PARTITION_ROWS,
            delimiter: None,
            quote: b'"',
            null_string: None,
            max_line_bytes: DEFAULT_MAX_LINE_BYTES,
            replace: false,
            ignore_errors: false,
            timestamp_formats: Vec::new(),
            cancel: None,
            on_progress: None,
            memory: None,
            skip_unsupported: false,
        }
    }
}

impl std::fmt::Debug for LoadOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoadOptions")
            .field("header", &self.header)
            .field("columns", &self.columns)
            .field("partition_rows", &self.partition_rows)
            .field("delimiter", &self.delimiter)
            .field("quote", &self.quote)
            .field("null_string", &self.null_string)
            .field("max_line_bytes", &self.max_line_bytes)
            .field("replace", &self.replace)
            .field("ignore_errors", &self.ignore_errors)
            .field("timestamp_formats", &self.timestamp_formats)
            .field("cancel", &self.cancel)
            .field("on_progress", &self.on_progress.is_some())
            .field("memory", &self.memory)
            .field("skip_unsupported", &self.skip_unsupported)
            .finish_non_exhaustive()
    }
}

/// A loaded table and what the load found out on the way.
#[derive(Debug)]
pub struct Loaded {
    /// The table.
    pub table: Table,
    /// What the user should know, one sentence each, e.g. `column trip_id:
    /// typed as string because of 1 value of 10,000,000 (line 10000001:
    /// "2500000x")` (each also in its [`Field::note`]).
    pub notices: Vec<String>,
    /// The load's peak memory in bytes: the highest resident memory of the
    /// process while it ran, above what was resident when it started (on
    /// Linux, from `/proc/self/status`; `None` elsewhere).
    pub peak_bytes: Option<usize>,
    /// The table's bytes held against [`LoadOptions::memory`] (exactly
    /// [`Table::heap_bytes`]), when a budget was given: hand it on with the
    /// table so that it is not counted twice.
    pub memory: Option<Reservation>,
}

/// Loads a plain or gzipped CSV file (gzip detected by its magic bytes) into
/// a table named `table_name`, using the current rayon pool; a regular file
/// that starts with the Parquet magic `PAR1` is read as Parquet
/// ([`parquet::load_parquet`]).
///
/// # Errors
/// As [`load_bytes`], plus [`Error::Io`] if the file cannot be opened or
/// read. Nothing is returned on error.
pub fn load_file(path: &Path, table_name: &str, options: &LoadOptions) -> Result<Loaded> {
    let open = || -> Result<BufReader<std::fs::File>> {
        let file = std::fs::File::open(path).map_err(|source| Error::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Ok(BufReader::with_capacity(1 << 16, file))
    };
    let source = open()?;
    // A regular file can be read again; a pipe's text must be kept.
    let metadata = source.get_ref().metadata().ok();
    let regular = metadata.as_ref().is_some_and(|m| m.is_file());
    // Parquet is known by its magic bytes (only a regular file is peeked
    // at: a pipe's bytes would be lost).
    if regular && parquet::is_parquet(path) {
        drop(source);
        return parquet::load_parquet(
            &[path.to_path_buf()],
            table_name,
            options,
            &parquet::ParquetOptions::default(),
        );
    }
    let size = metadata.filter(|m| m.is_file()).map_or(0, |m| m.len());
    let positional = regular.then(|| std::fs::File::open(path).ok()).flatten();
    let read_at = |offset: u64, out: &mut [u8]| -> std::io::Result<()> {
        match &positional {
            Some(file) => read_exact_at(file, offset, out),
            None => Err(std::io::ErrorKind::Unsupported.into()),
        }
    };
    load_from_at(
        source,
        regular.then_some(&open),
        (cfg!(unix) && positional.is_some()).then_some(&read_at),
        size,
        path,
        table_name,
        options,
    )
}

/// Fills `out` from `file` at `offset`, leaving the file's position alone.
#[cfg(unix)]
fn read_exact_at(file: &std::fs::File, offset: u64, out: &mut [u8]) -> std::io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file, out, offset)
}

/// Elsewhere spans are kept in memory rather than read again.
#[cfg(not(unix))]
fn read_exact_at(_: &std::fs::File, _: u64, _: &mut [u8]) -> std::io::Result<()> {
    Err(std::io::ErrorKind::Unsupported.into())
}

/// Like [`load_file`] for file contents already in memory; `origin` names
/// the source in error messages.
///
/// Types: an integer is `-`? digits without a leading zero (except `0`
/// itself) that fits in i64 (a longer one is a float); a float has a `.` or
/// an exponent, or is `nan`, `inf` or `infinity` in any case with an
/// optional `-`; a timestamp is `YYYY-MM-DD`, `YYYY-MM-DD HH:MM:SS[.f]` or
/// `YYYY-MM-DDTHH:MM:SS[.f][Z]`. A column of integers and floats is float;
/// any other mix is string, and says why in [`Field::note`] when at most a
/// tenth of its values made it so (see the module docs).
///
/// # Errors
/// - [`Error::Io`] naming `origin` for a corrupt or truncated gzip stream.
/// - [`Error::Csv`] with 1-based physical line (newlines inside quotes
///   count) and field number: a record with the wrong field count
///   (`expected 16 fields, found 15`, at the first missing or extra field,
///   on the line where the record starts); a quoted field still open at the
///   end of the input (`unterminated quoted field`, on the line of the
///   opening quote); a field that is not UTF-8 (`invalid utf-8`, on the line
///   where its record starts); an empty file (see the module docs); column
///   names whose count does not match the header; a record longer than
///   [`LoadOptions::max_line_bytes`] (`record longer than 64.0 MiB (raise
///   --max-line-size)`, at the field where it passes the limit); more than
///   [`MAX_COLUMNS`] columns (on line 1).
/// - [`Error::NotSupported`] for a partition of 4 GiB of text or more.
/// - [`Error::Cancelled`] when [`LoadOptions::cancel`] is cancelled.
pub fn load_bytes(
    bytes: Vec<u8>,
    origin: &Path,
    table_name: &str,
    options: &LoadOptions,
) -> Result<Loaded> {
    let reopen = || Ok(Cursor::new(&bytes[..]));
    let read_at = |offset: u64, out: &mut [u8]| -> std::io::Result<()> {
        let start = usize::try_from(offset).unwrap_or(usize::MAX);
        let text = start
            .checked_add(out.len())
            .and_then(|end| bytes.get(start..end))
            .ok_or(std::io::ErrorKind::UnexpectedEof)?;
        out.copy_from_slice(text);
        Ok(())
    };
    load_from_at(
        Cursor::new(&bytes[..]),
        Some(&reopen),
        Some(&read_at),
        bytes.len() as u64,
        origin,
        table_name,
        options,
    )
}

/// [`load_file`]'s table.
///
/// # Errors
/// As [`load_file`].
pub fn load_csv(path: &Path, table_name: &str, options: &LoadOptions) -> Result<Table> {
    load_file(path, table_name, options).map(|l| l.table)
}

/// [`load_bytes`]'s table.
///
/// # Errors
/// As [`load_bytes`].
#[cfg(feature = "internals")]
pub fn load_csv_bytes(
    bytes: Vec<u8>,
    origin: &Path,
    table_name: &str,
    options: &LoadOptions,
) -> Result<Table> {
    load_bytes(bytes, origin, table_name, options).map(|l| l.table)
}

/// One span, parsed and encoded with the types it has on its own.
struct Encoded {
    rows: usize,
    columns: Vec<Column>,
    kinds: Vec<Kind>,
    census: Vec<Census>,
    /// Where the span's text is in the input.
    offset: u64,
    len: usize,
    /// The span's text, when the input cannot be read again, in case a
    /// column must be read again as text.
    bytes: Option<Vec<u8>>,
}

/// What the reader found after the last span.
struct Finish {
    unterminated: Option<Unterminated>,
    total_bytes: u64,
}

/// The reading side of a load, shared by the workers: each reads its next
/// span itself, under the lock, so the text in memory is one span per
/// worker (a span of 65,536 taxi rows is 26 MB) and nothing is read ahead.
struct Reading<'o, R: BufRead> {
    cutter: Cutter<'o, R>,
    /// How the input ended, once it has (or failed).
    finish: Option<Result<Finish>>,
}

/// The error a load ends with, of all that its parts met: the caller's
/// cancel first, then what stopped the whole load (the memory limit), then
/// the reader's (a file that cannot be read), then the first bad
/// record in file order.
fn load_error(
    stop: &Stop,
    results: &mut [(usize, Result<Encoded>)],
    finish: Result<Finish>,
) -> Result<Finish> {
    if stop.cancelled() {
        return Err(Error::Cancelled);
    }
    results.sort_unstable_by_key(|(index, _)| *index);
    let take = |r: &mut Result<Encoded>| std::mem::replace(r, Err(Error::Cancelled)).err();
    if let Some((_, r)) = results
        .iter_mut()
        .find(|(_, r)| matches!(r, Err(Error::MemoryLimit { .. })))
    {
        return Err(take(r).unwrap_or(Error::Cancelled));
    }
    let mut errors = results.iter_mut().filter(|(_, r)| r.is_err());
    match finish {
        Ok(finish) => match errors.find(|(_, r)| !matches!(r, Err(Error::Cancelled))) {
            Some((_, r)) => Err(take(r).unwrap_or(Error::Cancelled)),
            None => Ok(finish),
        },
        // A record too long to read comes after every span handed over,
        // so an error in one of them is earlier in the file.
        Err(e @ Error::Csv { .. }) => Err(errors.next().and_then(|(_, r)| take(r)).unwrap_or(e)),
        Err(e) => Err(e),
    }
}

/// Loads from `source`, of `total` bytes (0 when unknown; see the module
/// docs for the design); `reopen` opens it again from its start when a span
/// must be read a second time (without it every span's text is kept until
/// the end instead).
#[cfg(test)]
fn load_from<R: BufRead + Send>(
    source: R,
    reopen: Option<&(impl Fn() -> Result<R> + Sync)>,
    total: u64,
    origin: &Path,
    table_name: &str,
    options: &LoadOptions,
) -> Result<Loaded> {
    load_from_at(source, reopen, None, total, origin, table_name, options)
}

/// Reads `out.len()` bytes of the input's text at an offset (`read_exact_at`
/// of a file).
type ReadAt<'a> = &'a (dyn Fn(u64, &mut [u8]) -> std::io::Result<()> + Sync);

/// [`load_from`] where the input can also be read at an offset with
/// `read_at` (a plain file, bytes in memory): the spans' text is then not
/// kept but read again a piece at a time by the worker parsing it (see
/// [`Cutter::stream_pieces`]). Gzip input ignores `read_at`.
fn load_from_at<R: BufRead + Send>(
    source: R,
    reopen: Option<&(impl Fn() -> Result<R> + Sync)>,
    read_at: Option<ReadAt<'_>>,
    total: u64,
    origin: &Path,
    table_name: &str,
    options: &LoadOptions,
) -> Result<Loaded> {
    let start = Instant::now();
    // Skipped records make a span's rows differ from the file's text there:
    // spans are kept, never read again.
    let reopen = reopen.filter(|_| !options.ignore_errors);
    let meter = peak::PeakMeter::start();
    let stop = Stop::new(options.cancel.clone());
    stop.check()?;
    let input = Input::open(source, origin)?;
    let reporter = Reporter::new(options.on_progress.clone(), total, start);
    let mut cutter = Cutter::new(input, origin, reporter, stop.clone())?;
    let (sample, complete) = cutter.sample();
    let sniffed = sniff(sample, complete, options.quote);
    let delimiter = match options.delimiter {
        Some(d) => d,
        None if tab_separated_name(origin) => b'\t',
        None => sniffed.choose(),
    };
    let dialect = dialect_of(options, delimiter)?;
    let hint = sniffed.hint(delimiter);
    cutter.set_syntax(dialect.syntax);
    cutter.set_max_record_bytes(options.max_line_bytes.max(1));
    let names = match column_names(&mut cutter, origin, options, &dialect) {
        Ok(names) => names,
        Err(e) => {
            // A broken gzip stream further on is what the caller hears of
            // (but a record too long to read ends the load at once).
            if cutter.is_gzip() && !cutter.too_long_seen() && !matches!(e, Error::Cancelled) {
                cutter.drain()?;
            }
            return Err(e);
        }
    };
    let width = names.len();
    let cx = Context {
        origin,
        dialect: &dialect,
        width,
        stop: &stop,
        hint: hint.as_deref(),
        formats: (!options.timestamp_formats.is_empty())
            .then(|| options.timestamp_formats.clone().into()),
    };
    let per_span = options.partition_rows.max(1);
    let pool = BufferPool::default();
    let keep_bytes = reopen.is_none();
    // Text that can be read at an offset is not kept: each worker reads
    // its span again a piece at a time as it parses it.
    let read_at = read_at.filter(|_| !keep_bytes && !cutter.is_gzip());
    if read_at.is_some() {
        cutter.stream_pieces(source::PIECE_BYTES);
    } else if !keep_bytes {
        cutter.reuse_buffers(pool.clone());
    }

    // Table-wide dictionaries are built as partitions are encoded when the
    // table's rows can be projected from the input's size (a file or
    // bytes; for gzip, as the text inflated so far per byte read
    // projects it); otherwise (a pipe) after the load.
    let dicts = (total > 0).then(|| crate::store::TableDictBuilder::new(width, total as usize));
    let results: Mutex<Vec<(usize, Result<Encoded>)>> = Mutex::new(Vec::new());
    // The table's bytes so far, and its rows.
    let memory = options
        .memory
        .as_ref()
        .map(|budget| Mutex::new(Reservation::empty(budget, "load")));
    let rows_done = AtomicUsize::new(0);
    let reserve = |columns: &[Column], rows: usize| -> Result<()> {
        let rows = rows_done.fetch_add(rows, Ordering::Relaxed) + rows;
        let Some(memory) = &memory else {
            return Ok(());
        };
        let bytes = columns.iter().map(Column::heap_bytes).sum();
        let mut memory = memory
            .lock()
            .map_err(|_| Error::Internal("a parsing task panicked".into()))?;
        memory.grow(bytes, || {
            format!(
                "table \"{table_name}\" after {} rows",
                thousands(rows as u64)
            )
        })
    };
    // Spans after the first bad one need no parsing.
    let first_bad = AtomicUsize::new(usize::MAX);
    // Lines of the records `ignore_errors` skipped.
    let skipped: Mutex<Vec<u64>> = Mutex::new(Vec::new());
    // A worker's span buffer, once parsed, is where its next span is read.
    let recycle = |bytes: Vec<u8>| (!keep_bytes).then_some(bytes);
    let process = |span: Span, piece_buf: &mut Vec<u8>| -> Option<Vec<u8>> {
        let Span {
            index,
            offset,
            bytes,
            line,
            records,
            pieces,
        } = span;
        if stop.stopped() || index > first_bad.load(Ordering::Relaxed) {
            return recycle(bytes);
        }
        let mut spare = None;
        // A span cut into pieces is parsed a piece at a time, read again
        // from the input; it is read whole only when that fails (to name
        // the error) or meets a field whose quotes split a character.
        let read_piece = |piece: &Piece, out: &mut [u8]| -> Result<()> {
            let read_at = read_at.ok_or_else(|| Error::Internal("no input to read at".into()))?;
            read_at(offset + piece.start as u64, out).map_err(|source| Error::Io {
                path: origin.to_path_buf(),
                source,
            })
        };
        let text = SpanText::Pieces(&pieces, &read_piece);
        let (bytes, pieced) = if pieces.is_empty() {
            (bytes, None)
        } else {
            match parse::parse_pieces(&pieces, records, &cx, piece_buf, read_piece) {
                Ok(Some(batch)) => (bytes, Some(Ok(batch))),
                Ok(None) => match text.read_all() {
                    Ok(all) => (all, None),
                    Err(e) => (bytes, Some(Err(e))),
                },
                Err(e) => (bytes, Some(Err(e))),
            }
        };
        let from_pieces = pieced.is_some();
        // Parsed once; with `ignore_errors`, a span with a malformed record
        // is parsed again without its bad records.
        let (bytes, parsed) = match pieced {
            Some(parsed) => (Vec::new(), parsed),
            None => match parse_span(&bytes, line, records, &cx) {
                Err(Error::Csv { .. }) if options.ignore_errors => {
                    match parse::drop_bad_records(&bytes, line, &cx) {
                        Ok((kept_bytes, kept, lines)) => {
                            if let Ok(mut s) = skipped.lock() {
                                s.extend(lines);
                            }
                            let parsed = parse_span(&kept_bytes, line, kept, &cx);
                            (kept_bytes, parsed)
                        }
                        Err(e) => {
                            if let Ok(mut r) = results.lock() {
                                r.push((index, Err(e)));
                            }
                            stop.fail();
                            return recycle(bytes);
                        }
                    }
                }
                parsed => (bytes, parsed),
            },
        };
        let text = if from_pieces {
            text
        } else {
            SpanText::Whole(&bytes)
        };
        let span_len = text.len();
        let encoded = parsed.and_then(|mut batch| {
            batch.columns.iter_mut().for_each(ColumnBuilder::finish);
            let rows = batch.rows;
            let mut span =
                encode::encode_batch(batch, text, line, &cx, dicts.as_ref().map(|d| (d, index)))?;
            // What two columns hold alike is stored once.
            crate::store::share_repeated(&mut span.columns);
            if let Some(dicts) = &dicts {
                dicts.absorb(&mut span.columns, rows, span_len, index);
            }
            reserve(&span.columns, rows)?;
            Ok(Encoded {
                rows,
                columns: span.columns,
                kinds: span.kinds,
                census: span.census,
                offset,
                len: span_len,
                bytes: None,
            })
        });
        let encoded = match encoded {
            Ok(mut e) if keep_bytes => {
                e.bytes = Some(bytes);
                Ok(e)
            }
            other => {
                spare = recycle(bytes);
                match &other {
                    Err(Error::Cancelled | Error::MemoryLimit { .. }) => stop.fail(),
                    Err(_) => {
                        first_bad.fetch_min(index, Ordering::Relaxed);
                    }
                    Ok(_) => {}
                }
                other
            }
        };
        if let Ok(mut r) = results.lock() {
            r.push((index, encoded));
        }
        spare
    };
    let reading = Mutex::new(Reading {
        cutter,
        finish: None,
    });
    // The next span, read into `spare` (the buffer of the worker's last
    // span) when there is one; `None` once the input has ended or failed.
    let next = |spare: Option<Vec<u8>>| -> Option<Span> {
        let mut reading = reading.lock().ok()?;
        if reading.finish.is_some() {
            return None;
        }
        if let (Some(bytes), Ok(mut p)) = (spare, pool.lock()) {
            p.push(bytes);
        }
        let cutter = &mut reading.cutter;
        let finish = match cutter.next_span(per_span) {
            Ok(Ok(Some(span))) => {
                if let (Some(dicts), true) = (&dicts, cutter.is_gzip()) {
                    let ratio = cutter.total_bytes() as f64 / cutter.source_bytes().max(1) as f64;
                    dicts.set_input_bytes((total as f64 * ratio) as usize);
                }
                return Some(span);
            }
            Ok(Ok(None)) => Ok(Finish {
                unterminated: None,
                total_bytes: cutter.total_bytes(),
            }),
            Ok(Err(u)) => Ok(Finish {
                unterminated: Some(u),
                total_bytes: cutter.total_bytes(),
            }),
            Err(e) => Err(e),
        };
        reading.finish = Some(finish);
        None
    };
    // Every worker of the pool reads a span, parses and encodes it, and
    // reads the next: one reads while the others parse.
    rayon::broadcast(|_| {
        let (mut spare, mut piece_buf) = (None, Vec::new());
        while let Some(span) = next(spare.take()) {
            spare = process(span, &mut piece_buf);
        }
    });
    drop(pool);
    let finish = match reading.into_inner() {
        Ok(Reading {
            finish: Some(finish),
            ..
        }) => finish,
        _ => Err(Error::Internal("the reading worker panicked".into())),
    };
    let mut results = results
        .into_inner()
        .map_err(|_| Error::Internal("a parsing task panicked".into()))?;
    let finish = load_error(&stop, &mut results, finish)?;
    let mut encoded = results
        .into_iter()
        .map(|(_, r)| r)
        .collect::<Result<Vec<Encoded>>>()?;
    // With `ignore_errors`, a quoted field that never closes makes its
    // record (the rest of the input) one malformed row.
    let mut unclosed = None;
    if let Some(u) = finish.unterminated {
        if !options.ignore_errors {
            return Err(unterminated_error(&u, origin, &dialect));
        }
        unclosed = Some(u.quote_line);
    }

    let kinds = encoded.iter().fold(vec![Kind::Empty; width], |mut acc, e| {
        for (a, &k) in acc.iter_mut().zip(&e.kinds) {
            *a = a.merge(k);
        }
        acc
    });
    let census = encoded
        .iter_mut()
        .fold(vec![Census::default(); width], |mut acc, e| {
            for (a, c) in acc.iter_mut().zip(std::mem::take(&mut e.census)) {
                a.merge(&c);
            }
            acc
        });
    // Spans with a column that is text elsewhere need their text again.
    let needs: Vec<bool> = encoded
        .iter()
        .map(|e| {
            e.bytes.is_none()
                && (0..width).any(|c| {
                    kinds[c] == Kind::Str && !matches!(e.kinds[c], Kind::Str | Kind::Empty)
                })
        })
        .collect();
    if let (true, Some(reopen)) = (needs.contains(&true), reopen) {
        let mut texts: Vec<Vec<u8>> = vec![Vec::new(); needs.iter().filter(|&&n| n).count()];
        let mut wanted: Vec<(u64, usize, &mut Vec<u8>)> = encoded
            .iter()
            .zip(&needs)
            .filter(|(_, n)| **n)
            .zip(texts.iter_mut())
            .map(|((e, _), text)| (e.offset, e.len, text))
            .collect();
        source::reread(Input::open(reopen()?, origin)?, origin, &mut wanted, &stop)?;
        let mut texts = texts.into_iter();
        for (e, _) in encoded.iter_mut().zip(&needs).filter(|(_, n)| **n) {
            e.bytes = texts.next();
        }
    }
    let conformed: Vec<Result<Partition>> = encoded
        .into_par_iter()
        .map(|mut e| {
            stop.check()?;
            let bytes = e.bytes.take().unwrap_or_default();
            encode::conform(&mut e.columns, &e.kinds, &kinds, &bytes, &cx)?;
            // A column conformed again may now share, or no longer share.
            crate::store::share_repeated(&mut e.columns);
            Ok(Partition {
                rows: e.rows,
                first_row: 0,
                columns: e.columns,
            })
        })
        .collect();
    if stop.cancelled() {
        return Err(Error::Cancelled);
    }
    let mut partitions = conformed.into_iter().collect::<Result<Vec<Partition>>>()?;
    if let Some(dicts) = dicts {
        dicts.finish(&mut partitions);
    }
    crate::store::share_dictionaries(&mut partitions);
    crate::store::table_dictionaries(&mut partitions);
    let mut first_row = 0;
    for p in &mut partitions {
        p.first_row = first_row;
        first_row += p.rows;
    }

    let fields: Vec<Field> = names
        .into_iter()
        .zip(&kinds)
        .zip(&census)
        .map(|((name, &k), c)| Field {
            name,
            dtype: k.data_type(),
            note: inference_note(k, c),
        })
        .collect();
    let mut notices: Vec<String> = fields
        .iter()
        .filter_map(|f| Some(format!("column {}: {}", f.name, f.note.as_ref()?)))
        .collect();
    let mut skipped = skipped.into_inner().unwrap_or_default();
    skipped.extend(unclosed);
    if let Some(line) = unclosed {
        notices.push(format!(
            "line {line} opens a quoted field that never closes: the rest of the input is skipped"
        ));
    }
    if !skipped.is_empty() {
        skipped.sort_unstable();
        let first: Vec<String> = skipped.iter().take(5).map(u64::to_string).collect();
        notices.push(format!(
            "skipped {} malformed row{} (line{} {}{})",
            thousands(skipped.len() as u64),
            if skipped.len() == 1 { "" } else { "s" },
            if skipped.len() == 1 { "" } else { "s" },
            first.join(", "),
            if skipped.len() > 5 { ", …" } else { "" }
        ));
    }
    let table = Table {
        name: table_name.to_string(),
        fields,
        partitions,
        source_bytes: finish.total_bytes,
        source_format: crate::store::SourceFormat::Csv,
    };
    // Columns encoded again (integers widened to floats) changed size.
    let memory = match memory {
        Some(m) => {
            let mut m = m
                .into_inner()
                .map_err(|_| Error::Internal("a parsing task panicked".into()))?;
            m.resize(table.heap_bytes(), || {
                format!(
                    "table \"{table_name}\" ({} rows)",
                    thousands(table.rows() as u64)
                )
            })?;
            Some(m)
        }
        None => None,
    };
    Ok(Loaded {
        table,
        notices,
        peak_bytes: meter.and_then(|m| m.peak_bytes()),
        memory,
    })
}

/// The dialect `options` ask for, with `delimiter` (given or detected).
///
/// # Errors
/// [`Error::NotSupported`] for a delimiter or quote that is not ASCII, is a
/// line break, or is both.
fn dialect_of(options: &LoadOptions, delimiter: u8) -> Result<Dialect> {
    let syntax = Syntax {
        delimiter,
        quote: options.quote,
    };
    let bad = |b: u8| !b.is_ascii() || b == b'\n' || b == b'\r';
    if bad(syntax.delimiter) || bad(syntax.quote) || syntax.delimiter == syntax.quote {
        return Err(Error::NotSupported(format!(
            "delimiter {:?} with quote {:?}: each must be one ASCII character other than a line break, and they must differ",
            syntax.delimiter as char, syntax.quote as char
        )));
    }
    Ok(Dialect {
        syntax,
        null_string: options
            .null_string
            .as_ref()
            .map(|n| n.as_bytes().to_vec().into_boxed_slice()),
    })
}

/// The note for a column of kind `kind` whose values are counted in
/// `census`: a string column of which at most a tenth of the values keep
/// it from being numbers (or timestamps) says how many and which first.
fn inference_note(kind: Kind, census: &Census) -> Option<String> {
    if kind != Kind::Str {
        return None;
    }
    // On a tie, numbers are named.
    let misfits = census.misfits.iter().min_by_key(|m| m.count)?;
    if misfits.count == 0 || misfits.count.saturating_mul(10) > census.values {
        return None;
    }
    let first = misfits.first.as_ref()?;
    Some(format!(
        "typed as string because of {} value{} of {} (line {}: {:?})",
        thousands(misfits.count),
        if misfits.count == 1 { "" } else { "s" },
        thousands(census.values),
        first.line,
        first.text
    ))
}

/// `n` with `,` between groups of three digits: `10,000,000`.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Reads the header (when there is one) and settles the column names,
/// leaving `cutter` at the first data record.
fn column_names<R: BufRead>(
    cutter: &mut Cutter<'_, R>,
    origin: &Path,
    options: &LoadOptions,
    dialect: &Dialect,
) -> Result<Vec<String>> {
    let raw: Vec<String> = if options.header {
        let record = match cutter.first_record(true)? {
            Ok(Some(record)) => record,
            Ok(None) => return Err(csv_error(origin, 1, 1, "empty file (no header)")),
            Err(u) => return Err(unterminated_error(&u, origin, dialect)),
        };
        let fields = first_record(&record, dialect)?.unwrap_or_default();
        let mut header = Vec::with_capacity(fields.len());
        for (i, f) in fields.into_iter().enumerate() {
            let name = String::from_utf8(f)
                .map_err(|_| csv_error(origin, 1, i as u64 + 1, "invalid utf-8"))?;
            header.push(name);
        }
        match &options.columns {
            Some(names) if names.len() != header.len() => {
                return Err(csv_error(
                    origin,
                    1,
                    names.len().min(header.len()) as u64 + 1,
                    format!(
                        "{} column names given but the header has {} fields",
                        names.len(),
                        header.len()
                    ),
                ));
            }
            Some(names) => names.clone(),
            None => header,
        }
    } else if let Some(names) = &options.columns {
        if names.is_empty() {
            return Err(csv_error(origin, 1, 1, "no column names given"));
        }
        names.clone()
    } else {
        let record = match cutter.first_record(false)? {
            Ok(Some(record)) => record,
            Err(u) => u.bytes,
            Ok(None) => return Err(csv_error(origin, 1, 1, "empty file (no records)")),
        };
        let width = first_record(&record, dialect)?.map_or(0, |f| f.len());
        vec![String::new(); width]
    };
    if raw.len() > MAX_COLUMNS {
        return Err(csv_error(
            origin,
            1,
            MAX_COLUMNS as u64 + 1,
            format!(
                "{} columns, more than the {MAX_COLUMNS} a table may have",
                raw.len()
            ),
        ));
    }
    Ok(unique_names(raw))
}

/// Names every column and makes the names unique (see the module docs).
fn unique_names(raw: Vec<String>) -> Vec<String> {
    let reserved: HashSet<String> = raw
        .iter()
        .filter(|n| !n.trim().is_empty())
        .cloned()
        .collect();
    let mut used: HashSet<String> = HashSet::with_capacity(raw.len());
    let mut out = Vec::with_capacity(raw.len());
    for (i, name) in raw.into_iter().enumerate() {
        let (base, generated) = if name.trim().is_empty() {
            (format!("column_{}", i + 1), true)
        } else {
            (name, false)
        };
        let taken = |n: &str| used.contains(n) || (generated && reserved.contains(n));
        let name = if taken(&base) {
            (2..)
                .map(|k| format!("{base}_{k}"))
                .find(|n| !used.contains(n) && !reserved.contains(n))
                .unwrap_or_default()
        } else {
            base
        };
        used.insert(name.clone());
        out.push(name);
    }
    out
}

/// The error for a record whose quoted field runs to the end of the
/// input; that field is the record's last, so its number is the record's
/// field count.
fn unterminated_error(u: &Unterminated, origin: &Path, dialect: &Dialect) -> Error {
    let column = match first_record(&u.bytes, dialect) {
        Ok(Some(fields)) => fields.len().max(1),
        Ok(None) => 1,
        Err(e) => return e,
    };
    csv_error(
        origin,
        u.quote_line,
        column as u64,
        "unterminated quoted field",
    )
}

#[cfg(test)]
mod tests;
