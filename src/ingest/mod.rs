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
//! The whole (decompressed) input is held in memory. One sequential pass
//! (`scan`) finds record boundaries with `memchr`, tracking quotes, and cuts
//! the records into spans of exactly `partition_rows` records. Phase 1 parses
//! every span in parallel with `csv-core`, checking widths and UTF-8; per
//! column a builder (`build`) infers the narrowest type and keeps the parsed
//! integers, floats or timestamps, or the text of a column that is a string
//! from its first value. The per-span types are merged. Phase 2 encodes
//! every span in parallel into the store's columns with the final types,
//! from the kept values (integers widened to floats where the final type is
//! float); a column that ends up a string but whose text phase 1 did not
//! keep (e.g. `0`/`1` in one span and `N`/`Y` in another) is parsed again
//! from the input for that span. Both phases run on the current rayon pool.
//! Errors are reported for the first bad record in file order; nothing is
//! returned on error.

mod build;
mod encode;
mod infer;
mod parse;
mod progress;
mod scan;

use std::collections::HashSet;
use std::io::Read;
use std::path::Path;

use flate2::read::MultiGzDecoder;
use rayon::prelude::*;

use self::infer::Kind;
use self::parse::{Batch, csv_error, first_record, parse_span};
use self::progress::Progress;
use self::scan::{Next, Scanner, split};
use crate::error::{Error, Result};
use crate::store::{Field, Partition, Table};

/// Default rows per partition.
pub const DEFAULT_PARTITION_ROWS: usize = 1 << 16;

/// How to read a CSV file.
#[derive(Debug, Clone)]
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
}

impl Default for LoadOptions {
    fn default() -> Self {
        LoadOptions {
            header: true,
            columns: None,
            partition_rows: DEFAULT_PARTITION_ROWS,
            progress: false,
        }
    }
}

/// Loads a plain or gzipped CSV file (gzip detected by its magic bytes) into
/// a table named `table_name`, using the current rayon pool.
///
/// # Errors
/// [`Error::Io`] if the file cannot be read; [`Error::Csv`] naming file, line
/// and column for malformed input. Nothing is returned on error.
pub fn load_csv(path: &Path, table_name: &str, options: &LoadOptions) -> Result<Table> {
    let bytes = std::fs::read(path).map_err(|source| Error::Io {
        path: path.to_path_buf(),
        source,
    })?;
    load_csv_bytes(bytes, path, table_name, options)
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
    let progress = Progress::new(options.progress);
    let data = decompress(bytes, origin, &progress)?;
    let source_bytes = data.len() as u64;
    let bom = if data.starts_with(b"\xef\xbb\xbf") {
        3
    } else {
        0
    };
    let mut scanner = Scanner::new(&data, bom);

    let names = column_names(&data, &mut scanner, origin, options)?;
    let width = names.len();

    progress.rows_phase("scanning", None);
    let (spans, unterminated) = split(&mut scanner, options.partition_rows, |n| {
        progress.inc(n as u64)
    });
    let total_rows: usize = spans.iter().map(|s| s.records).sum();

    progress.rows_phase("parsing", Some(total_rows as u64));
    let parsed: Vec<Result<Batch>> = spans
        .par_iter()
        .map(|span| {
            let batch = parse_span(&data, span, width, origin)?;
            if batch.rows != span.records {
                return Err(Error::Internal(format!(
                    "record scan found {} records at line {}, the parser {}",
                    span.records, span.line, batch.rows
                )));
            }
            progress.inc(batch.rows as u64);
            Ok(batch)
        })
        .collect();
    let batches = parsed.into_iter().collect::<Result<Vec<Batch>>>()?;
    if let Some(Next::Unterminated {
        start, quote_line, ..
    }) = unterminated
    {
        return Err(unterminated_error(&data, start, quote_line, origin));
    }

    let kinds = batches.iter().fold(vec![Kind::Empty; width], |mut acc, b| {
        for (a, c) in acc.iter_mut().zip(&b.columns) {
            *a = a.merge(c.kind);
        }
        acc
    });

    progress.rows_phase("encoding", Some(total_rows as u64));
    let encoded: Vec<Result<Partition>> = batches
        .into_par_iter()
        .zip(&spans)
        .map(|(batch, span)| {
            let rows = batch.rows;
            let columns = encode::encode_batch(batch, &kinds, &data, span)?;
            progress.inc(rows as u64);
            Ok(Partition {
                rows,
                first_row: 0,
                columns,
            })
        })
        .collect();
    let mut partitions = encoded.into_iter().collect::<Result<Vec<Partition>>>()?;
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
        source_bytes,
    })
}

/// The input itself, or its decompressed contents when it starts with the
/// gzip magic bytes.
fn decompress(bytes: Vec<u8>, origin: &Path, progress: &Progress) -> Result<Vec<u8>> {
    if !bytes.starts_with(&[0x1f, 0x8b]) {
        return Ok(bytes);
    }
    progress.bytes_phase("decompressing");
    // The trailer's ISIZE is the size mod 2^32 of the last member: a hint.
    let hint = bytes
        .len()
        .checked_sub(4)
        .and_then(|at| bytes.get(at..))
        .and_then(|t| t.try_into().ok())
        .map_or(0, |t: [u8; 4]| u32::from_le_bytes(t) as usize)
        .clamp(bytes.len(), bytes.len().saturating_mul(64));
    let mut out = Vec::with_capacity(hint);
    let mut reader = CountingReader {
        inner: MultiGzDecoder::new(&bytes[..]),
        progress,
    };
    reader.read_to_end(&mut out).map_err(|e| Error::Io {
        path: origin.to_path_buf(),
        source: std::io::Error::new(e.kind(), format!("corrupt gzip stream: {e}")),
    })?;
    Ok(out)
}

/// Reports the bytes read through it as progress.
struct CountingReader<'a, R> {
    inner: R,
    progress: &'a Progress,
}

impl<R: Read> Read for CountingReader<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.progress.inc(n as u64);
        Ok(n)
    }
}

/// Reads the header (when there is one) and settles the column names,
/// leaving `scanner` at the first data record.
fn column_names(
    data: &[u8],
    scanner: &mut Scanner<'_>,
    origin: &Path,
    options: &LoadOptions,
) -> Result<Vec<String>> {
    let raw: Vec<String> = if options.header {
        let start = match scanner.next_record() {
            Next::Record { start, .. } => start,
            Next::Unterminated {
                start, quote_line, ..
            } => return Err(unterminated_error(data, start, quote_line, origin)),
            Next::End => return Err(csv_error(origin, 1, 1, "empty file (no header)")),
        };
        let fields = first_record(&data[start..scanner.pos()])?.unwrap_or_default();
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
        let mut peek = scanner.clone();
        let start = match peek.next_record() {
            Next::Record { start, .. } | Next::Unterminated { start, .. } => start,
            Next::End => return Err(csv_error(origin, 1, 1, "empty file (no records)")),
        };
        let width = first_record(&data[start..peek.pos()])?.map_or(0, |f| f.len());
        vec![String::new(); width]
    };
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

/// The error for a record starting at `start` whose quoted field opened on
/// `quote_line` runs to the end of the input; that field is the record's
/// last, so its number is the record's field count.
fn unterminated_error(data: &[u8], start: usize, quote_line: u64, origin: &Path) -> Error {
    let column = match first_record(&data[start..]) {
        Ok(Some(fields)) => fields.len().max(1),
        Ok(None) => 1,
        Err(e) => return e,
    };
    csv_error(
        origin,
        quote_line,
        column as u64,
        "unterminated quoted field",
    )
}

#[cfg(test)]
mod tests;
