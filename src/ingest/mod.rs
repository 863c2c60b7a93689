//! CSV and gzipped CSV to an encoded [`Table`].
//!
//! # Input
//! - Plain or gzip-compressed text; gzip is recognised by its magic bytes
//!   `1f 8b` whatever the file is called, and may have several members. A
//!   UTF-8 byte order mark at the start is skipped.
//! - RFC 4180 records as read by `csv-core` with its defaults: `,` between
//!   fields, `"` quotes with `""` inside quotes for a quote, and `\n`, `\r\n`
//!   or `\r` ending a record. Empty lines are skipped (so a one-column file
//!   cannot hold a NULL row written as an empty line). Every record must have
//!   as many fields as the header (or as the first record without one).
//! - Every field must be UTF-8.
//!
//! # Values
//! An empty field is NULL. A quoted empty field `""` is NULL too: once the
//! quotes are removed the two cannot be told apart. Column types are inferred
//! from every value in the file (see the rules in `infer.rs`, summarised on
//! [`load_csv_bytes`]); a column with no value at all is a string column of
//! NULLs.
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
//! The input is read (and inflated, for gzip) on a thread of its own, in
//! pieces of a MiB, while the current rayon pool parses. The reading thread
//! finds record boundaries (`scan`: newlines with `memchr` where there is
//! no quote or carriage return, else a scan that tracks quotes) and cuts
//! the records into spans of exactly `partition_rows` records (`source`),
//! each handed to the pool as soon as it is complete, at most four ahead.
//! A worker parses its span (`parse`: fields split eight bytes at a time,
//! `csv-core` for records with quoted fields), with one builder per column
//! (`build`) inferring the narrowest type and keeping the parsed integers,
//! floats or timestamps, or interning the text of a column that is a
//! string from its first value on, and encodes the span at once as a
//! partition with those types (`encode`); the span's buffer then goes back
//! to the reading thread. Once every span is in, the types are merged, and
//! the rare column whose type in a span differs from the merged one is
//! encoded again: integers widened to floats, or the span's text read again
//! from the input (a file or bytes; input that cannot be read twice, such
//! as a pipe, keeps every span's text instead) and parsed as strings.
//! Errors are reported for the first bad record in file order (an input
//! that cannot be read or inflated first); nothing is returned on error.

mod build;
mod encode;
mod infer;
mod parse;
mod progress;
mod scan;
mod source;

use std::collections::HashSet;
use std::io::{BufRead, BufReader, Cursor};
use std::path::Path;
use std::sync::Mutex;

use rayon::prelude::*;

use self::infer::Kind;
use self::parse::{csv_error, first_record, parse_span};
use self::progress::Progress;
use self::source::{BufferPool, Cutter, Input, Span, Unterminated};
use std::sync::Arc;

use crate::control::{CancelToken, MemoryBudget, ProgressFn};
use crate::error::{Error, Result};
use crate::store::{Column, Field, Partition, Table};

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
    /// Show a progress bar (rows/s) on stderr when it is a terminal and the
    /// load takes longer than a second.
    pub progress: bool,
    /// The field delimiter; `None` detects it from the first lines (`,`
    /// `;` tab `|`; a `.tsv` name means tab).
    pub delimiter: Option<u8>,
    /// The quote character (default `"`).
    pub quote: u8,
    /// A field equal to this text (unquoted) is NULL too, besides an
    /// unquoted empty field.
    pub null_string: Option<String>,
    /// Longest record (line) in bytes; a longer one fails the load naming
    /// file, line and size (default [`DEFAULT_MAX_LINE_BYTES`]).
    pub max_line_bytes: usize,
    /// Replace a table of the same name (the [`crate::Database`] refuses to
    /// otherwise).
    pub replace: bool,
    /// Polled between spans: a cancelled load stops with
    /// [`Error::Cancelled`] and keeps nothing.
    pub cancel: Option<CancelToken>,
    /// Receives [`crate::Progress`] reports in bytes of the input read.
    pub on_progress: Option<ProgressFn>,
    /// The budget the loaded table's bytes count against.
    pub memory: Option<Arc<MemoryBudget>>,
}

impl Default for LoadOptions {
    fn default() -> Self {
        LoadOptions {
            header: true,
            columns: None,
            partition_rows: DEFAULT_PARTITION_ROWS,
            progress: false,
            delimiter: None,
            quote: b'"',
            null_string: None,
            max_line_bytes: DEFAULT_MAX_LINE_BYTES,
            replace: false,
            cancel: None,
            on_progress: None,
            memory: None,
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
            .field("cancel", &self.cancel)
            .field("on_progress", &self.on_progress.is_some())
            .field("memory", &self.memory)
            .finish_non_exhaustive()
    }
}

/// Loads a plain or gzipped CSV file (gzip detected by its magic bytes) into
/// a table named `table_name`, using the current rayon pool.
///
/// # Errors
/// [`Error::Io`] if the file cannot be read; [`Error::Csv`] naming file, line
/// and column for malformed input. Nothing is returned on error.
pub fn load_csv(path: &Path, table_name: &str, options: &LoadOptions) -> Result<Table> {
    let open = || -> Result<BufReader<std::fs::File>> {
        let file = std::fs::File::open(path).map_err(|source| Error::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Ok(BufReader::with_capacity(1 << 16, file))
    };
    let source = open()?;
    // A regular file can be read again; a pipe's text must be kept.
    let regular = source.get_ref().metadata().is_ok_and(|m| m.is_file());
    load_from(source, regular.then_some(&open), path, table_name, options)
}

/// Like [`load_csv`] for file contents already in memory; `origin` names the
/// source in error messages.
///
/// Types: an integer is `-`? digits without a leading zero (except `0`
/// itself) that fits in i64; a float has a `.` or an exponent and is finite
/// (`nan`, `inf` are not floats); a timestamp is `YYYY-MM-DD`,
/// `YYYY-MM-DD HH:MM:SS[.f]` or `YYYY-MM-DDTHH:MM:SS[.f][Z]`. A column of
/// integers and floats is float; any other mix is string.
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
///   names whose count does not match the header.
/// - [`Error::NotSupported`] for a partition of 4 GiB of text or more.
pub fn load_csv_bytes(
    bytes: Vec<u8>,
    origin: &Path,
    table_name: &str,
    options: &LoadOptions,
) -> Result<Table> {
    let reopen = || Ok(Cursor::new(&bytes[..]));
    load_from(
        Cursor::new(&bytes[..]),
        Some(&reopen),
        origin,
        table_name,
        options,
    )
}

/// One span, parsed and encoded with the types it has on its own.
struct Encoded {
    rows: usize,
    columns: Vec<Column>,
    kinds: Vec<Kind>,
    /// Where the span's text is in the input.
    offset: u64,
    len: usize,
    /// The span's text, when the input cannot be read again, in case a
    /// column must be read again as text.
    bytes: Option<Vec<u8>>,
}

/// What the reading thread found after the last span.
struct Finish {
    unterminated: Option<Unterminated>,
    total_bytes: u64,
}

/// Spans read ahead of the parsers at most.
const SPANS_AHEAD: usize = 4;

/// Loads from `source` (see the module docs for the design); `reopen`
/// opens it again from its start when a span must be read a second time
/// (without it every span's text is kept until the end instead).
fn load_from<R: BufRead + Send>(
    source: R,
    reopen: Option<&(impl Fn() -> Result<R> + Sync)>,
    origin: &Path,
    table_name: &str,
    options: &LoadOptions,
) -> Result<Table> {
    let progress = Progress::new(options.progress);
    let input = Input::open(source, origin)?;
    let mut cutter = Cutter::new(input, origin)?;
    let names = match column_names(&mut cutter, origin, options) {
        Ok(names) => names,
        Err(e) => {
            // A broken gzip stream further on is what the caller hears of.
            if cutter.is_gzip() {
                cutter.drain()?;
            }
            return Err(e);
        }
    };
    let width = names.len();
    let per_span = options.partition_rows.max(1);
    let pool = BufferPool::default();
    let keep_bytes = reopen.is_none();
    if !keep_bytes {
        cutter.reuse_buffers(pool.clone());
    }

    progress.rows_phase("loading", None);
    let results: Mutex<Vec<(usize, Result<Encoded>)>> = Mutex::new(Vec::new());
    let process = |span: Span| {
        let Span {
            index,
            offset,
            bytes,
            line,
            records,
        } = span;
        let encoded = parse_span(&bytes, line, records, width, origin).and_then(|batch| {
            let rows = batch.rows;
            encode::encode_batch(batch, &bytes).map(|(columns, kinds)| Encoded {
                rows,
                columns,
                kinds,
                offset,
                len: bytes.len(),
                bytes: None,
            })
        });
        let encoded = match encoded {
            Ok(mut e) if keep_bytes => {
                e.bytes = Some(bytes);
                Ok(e)
            }
            other => {
                if let Ok(mut p) = pool.lock()
                    && p.len() < 2 * SPANS_AHEAD
                {
                    p.push(bytes);
                }
                other
            }
        };
        progress.inc(records as u64);
        if let Ok(mut r) = results.lock() {
            r.push((index, encoded));
        }
    };
    let finish: Result<Finish> = std::thread::scope(|scope| {
        let (tx, rx) = std::sync::mpsc::sync_channel::<Span>(SPANS_AHEAD);
        let reader = scope.spawn(move || -> Result<Finish> {
            loop {
                match cutter.next_span(per_span)? {
                    Ok(Some(span)) => {
                        if tx.send(span).is_err() {
                            return Err(Error::Internal("the parsers stopped".into()));
                        }
                    }
                    Ok(None) => {
                        return Ok(Finish {
                            unterminated: None,
                            total_bytes: cutter.total_bytes(),
                        });
                    }
                    Err(u) => {
                        return Ok(Finish {
                            unterminated: Some(u),
                            total_bytes: cutter.total_bytes(),
                        });
                    }
                }
            }
        });
        // Every worker takes the next span as soon as it is free, so the
        // pool stays busy while the input is still being read.
        rx.into_iter().par_bridge().for_each(process);
        reader
            .join()
            .unwrap_or_else(|_| Err(Error::Internal("the reading thread panicked".into())))
    });
    drop(pool);
    let finish = finish?;
    let mut results = results
        .into_inner()
        .map_err(|_| Error::Internal("a parsing task panicked".into()))?;
    results.sort_unstable_by_key(|(index, _)| *index);
    let mut encoded = results
        .into_iter()
        .map(|(_, r)| r)
        .collect::<Result<Vec<Encoded>>>()?;
    if let Some(u) = finish.unterminated {
        return Err(unterminated_error(&u, origin));
    }

    let kinds = encoded.iter().fold(vec![Kind::Empty; width], |mut acc, e| {
        for (a, &k) in acc.iter_mut().zip(&e.kinds) {
            *a = a.merge(k);
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
        source::reread(Input::open(reopen()?, origin)?, origin, &mut wanted)?;
        let mut texts = texts.into_iter();
        for (e, _) in encoded.iter_mut().zip(&needs).filter(|(_, n)| **n) {
            e.bytes = texts.next();
        }
    }
    let conformed: Vec<Result<Partition>> = encoded
        .into_par_iter()
        .map(|mut e| {
            let bytes = e.bytes.take().unwrap_or_default();
            encode::conform(&mut e.columns, &e.kinds, &kinds, &bytes)?;
            Ok(Partition {
                rows: e.rows,
                first_row: 0,
                columns: e.columns,
            })
        })
        .collect();
    let mut partitions = conformed.into_iter().collect::<Result<Vec<Partition>>>()?;
    let mut first_row = 0;
    for p in &mut partitions {
        p.first_row = first_row;
        first_row += p.rows;
    }

    let fields = names
        .into_iter()
        .zip(&kinds)
        .map(|(name, k)| Field {
            name,
            dtype: k.data_type(),
        })
        .collect();
    Ok(Table {
        name: table_name.to_string(),
        fields,
        partitions,
        source_bytes: finish.total_bytes,
    })
}

/// Reads the header (when there is one) and settles the column names,
/// leaving `cutter` at the first data record.
fn column_names<R: BufRead>(
    cutter: &mut Cutter<'_, R>,
    origin: &Path,
    options: &LoadOptions,
) -> Result<Vec<String>> {
    let raw: Vec<String> = if options.header {
        let record = match cutter.first_record(true)? {
            Ok(Some(record)) => record,
            Ok(None) => return Err(csv_error(origin, 1, 1, "empty file (no header)")),
            Err(u) => return Err(unterminated_error(&u, origin)),
        };
        let fields = first_record(&record)?.unwrap_or_default();
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
        let width = first_record(&record)?.map_or(0, |f| f.len());
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
fn unterminated_error(u: &Unterminated, origin: &Path) -> Error {
    let column = match first_record(&u.bytes) {
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
