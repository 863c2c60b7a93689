//! `COPY (SELECT …) TO 'file' (FORMAT …)` and `COPY table TO 'file'`:
//! query results written to a CSV, JSON or Parquet file.
//!
//! # Syntax (DuckDB's)
//! `COPY ( query ) TO 'path' [WITH] [( option [value] [, …] )]` or
//! `COPY table TO 'path' …`. Options: `FORMAT csv | json | parquet` (else
//! from the extension: `.parquet`, `.json`/`.ndjson`/`.jsonl`, anything
//! else CSV), `HEADER [true | false]` (CSV, default true), `DELIMITER ','`
//! (also `DELIM`, `SEP`; CSV), `COMPRESSION snappy | zstd | gzip | lz4 |
//! uncompressed` (Parquet, default snappy as DuckDB writes).
//!
//! # Design
//! The statement is recognised here, before the SQL parser: its query is
//! the text between the parentheses, handed to the parser with everything
//! before it blanked out, so positions in errors are those of the whole
//! statement. The rows stream from the query ([`crate::RowSink`]) into a
//! file beside the target (`.name.katydid-tmp`), renamed over the target
//! only once every row is written: a failed or cancelled COPY leaves the
//! target as it was. A scan (no aggregate, ORDER BY or LIMIT) copied to
//! Parquet skips the rows: the engine hands [`FileSink::write_batch`] the
//! Arrow batches of 16 partitions at a time (`crate::arrow_out`'s layout,
//! which is this module's Parquet schema).
//!
//! # Formats
//! CSV as RFC 4180 (fields holding the delimiter, a quote or a line break
//! quoted, quotes doubled); NULL is an empty field and the empty string
//! `""`, so katydid reads the file back as it was. JSON is one object per
//! line (DuckDB's `COPY … (FORMAT json)`), NULL and non-finite floats as
//! `null`, timestamps as strings. Parquet columns are INT64, DOUBLE,
//! TIMESTAMP (µs, not adjusted to UTC), BOOLEAN and UTF8 strings, one row
//! group per 1,048,576 rows (the writer's default).

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::builder::{
    BooleanBuilder, Date32Builder, DurationMicrosecondBuilder, Float64Builder, Int64Builder,
    StringBuilder, TimestampMicrosecondBuilder,
};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType as ArrowType, Field, Schema, TimeUnit};
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;

use crate::engine::RowSink;
use crate::error::{Error, Result};
use crate::types::{DataType, Value};

/// A file format [`crate::Database::copy_to`] writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CopyFormat {
    /// Comma-separated (or [`CopyOptions::delimiter`]) text.
    Csv,
    /// One JSON object per line.
    Json,
    /// Apache Parquet.
    Parquet,
}

impl CopyFormat {
    /// The format a file name implies: `.parquet`, `.json` (`.ndjson`,
    /// `.jsonl`), else CSV.
    pub fn of_path(path: &Path) -> CopyFormat {
        let ext = path
            .extension()
            .map(|e| e.to_string_lossy().to_ascii_lowercase())
            .unwrap_or_default();
        match ext.as_str() {
            "parquet" => CopyFormat::Parquet,
            "json" | "ndjson" | "jsonl" => CopyFormat::Json,
            _ => CopyFormat::Csv,
        }
    }
}

/// How [`crate::Database::copy_to`] writes a file.
#[derive(Debug, Clone, PartialEq)]
pub struct CopyOptions {
    /// The format; `None` follows the file name ([`CopyFormat::of_path`]).
    pub format: Option<CopyFormat>,
    /// CSV: a first line of column names (default true).
    pub header: bool,
    /// CSV: the field delimiter, one ASCII character (default `,`).
    pub delimiter: u8,
    /// Parquet: `snappy` (default), `zstd`, `gzip`, `lz4` or
    /// `uncompressed`, any case.
    pub compression: Option<String>,
}

impl Default for CopyOptions {
    fn default() -> Self {
        CopyOptions {
            format: None,
            header: true,
            delimiter: b',',
            compression: None,
        }
    }
}

/// A `COPY … TO` statement, recognised.
#[derive(Debug)]
pub(crate) struct CopyStatement {
    /// The query: the statement's text with everything but the query
    /// blanked, so offsets are the statement's.
    pub query: String,
    /// The target file.
    pub path: PathBuf,
    /// How to write it.
    pub options: CopyOptions,
}

/// The statement's text from `at` past whitespace and comments.
fn skip_ws(sql: &str, mut at: usize) -> usize {
    let b = sql.as_bytes();
    loop {
        while at < b.len() && b[at].is_ascii_whitespace() {
            at += 1;
        }
        if sql[at..].starts_with("--") {
            at = sql[at..].find('\n').map_or(sql.len(), |n| at + n + 1);
        } else if sql[at..].starts_with("/*") {
            at = sql[at + 2..]
                .find("*/")
                .map_or(sql.len(), |n| at + 2 + n + 2);
        } else {
            return at;
        }
    }
}

/// A word (letters, digits, `_`) at `at`, and where it ends.
fn word(sql: &str, at: usize) -> (&str, usize) {
    let end = sql[at..]
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .map_or(sql.len(), |n| at + n);
    (&sql[at..end], end)
}

/// A quoted string (`'…'` with `''` for a quote, or `"…"`) at `at`: its
/// text and where it ends.
fn quoted(sql: &str, at: usize) -> Option<(String, usize)> {
    let q = sql[at..]
        .chars()
        .next()
        .filter(|c| *c == '\'' || *c == '"')?;
    let mut out = String::new();
    let mut i = at + 1;
    loop {
        let n = sql[i..].find(q)?;
        out.push_str(&sql[i..i + n]);
        i += n + 1;
        if sql[i..].starts_with(q) {
            out.push(q);
            i += 1;
        } else {
            return Some((out, i));
        }
    }
}

/// The position just after the parenthesis that closes the one at `open`,
/// skipping quotes and comments.
fn closing(sql: &str, open: usize) -> Option<usize> {
    let b = sql.as_bytes();
    let mut depth = 0usize;
    let mut i = open;
    while i < b.len() {
        match b[i] {
            b'(' => depth += 1,
            b')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            b'\'' | b'"' => {
                i = quoted(sql, i)?.1;
                continue;
            }
            b'-' if sql[i..].starts_with("--") => {
                i = sql[i..].find('\n').map_or(sql.len(), |n| i + n);
                continue;
            }
            b'/' if sql[i..].starts_with("/*") => {
                i = sql[i + 2..].find("*/").map_or(sql.len(), |n| i + 2 + n + 2);
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// `COPY … TO …` when `sql` is one (`None` for any other statement).
///
/// # Errors
/// [`Error::Parse`] at the place the statement goes wrong.
pub(crate) fn parse(sql: &str) -> Option<Result<CopyStatement>> {
    let at = skip_ws(sql, 0);
    let (first, after) = word(sql, at);
    if !first.eq_ignore_ascii_case("copy") {
        return None;
    }
    Some(parse_copy(sql, after))
}

fn parse_error(at: usize, message: impl Into<String>) -> Error {
    Error::Parse {
        offset: at,
        message: message.into(),
    }
}

fn parse_copy(sql: &str, after_copy: usize) -> Result<CopyStatement> {
    let at = skip_ws(sql, after_copy);
    let (query, rest) = if sql[at..].starts_with('(') {
        let end = closing(sql, at).ok_or_else(|| parse_error(at, "unclosed parenthesis"))?;
        let mut query = " ".repeat(at + 1);
        query.push_str(&sql[at + 1..end - 1]);
        (query, end)
    } else {
        let (name, end) = match quoted(sql, at) {
            Some((name, end)) if sql[at..].starts_with('"') => (name, end),
            _ => {
                let (w, end) = word(sql, at);
                (w.to_string(), end)
            }
        };
        if name.is_empty() {
            return Err(parse_error(
                at,
                "expected a table name or (query) after COPY, such as COPY (SELECT …) TO 'out.csv'",
            ));
        }
        let query = format!("SELECT * FROM \"{}\"", name.replace('"', "\"\""));
        (query, end)
    };
    let at = skip_ws(sql, rest);
    let (to, after_to) = word(sql, at);
    if !to.eq_ignore_ascii_case("to") {
        return Err(parse_error(
            at,
            "expected TO 'file' (COPY … FROM is not supported: load a file with .load or FROM 'file')",
        ));
    }
    let at = skip_ws(sql, after_to);
    let Some((path, end)) = quoted(sql, at).filter(|_| sql[at..].starts_with('\'')) else {
        return Err(parse_error(
            at,
            "expected the file to write, as a string such as 'out.parquet'",
        ));
    };
    if path.is_empty() {
        return Err(parse_error(at, "the file name is empty"));
    }
    let mut options = CopyOptions::default();
    let mut at = skip_ws(sql, end);
    let (w, after_with) = word(sql, at);
    if w.eq_ignore_ascii_case("with") {
        at = skip_ws(sql, after_with);
    }
    if sql[at..].starts_with('(') {
        let close = closing(sql, at).ok_or_else(|| parse_error(at, "unclosed parenthesis"))?;
        parse_options(sql, at + 1, close - 1, &mut options)?;
        at = skip_ws(sql, close);
    }
    if sql[at..].starts_with(';') {
        at = skip_ws(sql, at + 1);
    }
    if at < sql.len() {
        return Err(parse_error(at, "unexpected text after the COPY statement"));
    }
    Ok(CopyStatement {
        query,
        path: PathBuf::from(path),
        options,
    })
}

/// The options between `from` and `to` (the parentheses' inside).
fn parse_options(sql: &str, from: usize, to: usize, options: &mut CopyOptions) -> Result<()> {
    let mut at = skip_ws(sql, from);
    while at < to {
        let (name, after) = word(sql, at);
        if name.is_empty() {
            return Err(parse_error(at, "expected an option name such as FORMAT"));
        }
        let name_at = at;
        at = skip_ws(sql, after);
        // The value: a word, a quoted string, or none (HEADER alone).
        let value: Option<(String, usize)> = if at < to && sql[at..].starts_with(['\'', '"']) {
            let (v, end) = quoted(sql, at).ok_or_else(|| parse_error(at, "unclosed quote"))?;
            let v_at = at;
            at = skip_ws(sql, end);
            Some((v, v_at))
        } else if at < to && !sql[at..].starts_with(',') {
            let (v, end) = word(sql, at);
            let v_at = at;
            at = skip_ws(sql, end);
            Some((v.to_string(), v_at))
        } else {
            None
        };
        let need = |what: &str| -> Result<(String, usize)> {
            value
                .clone()
                .ok_or_else(|| parse_error(at, format!("{name} needs {what}")))
        };
        match name.to_ascii_lowercase().as_str() {
            "format" => {
                let (v, v_at) = need("a format: csv, json or parquet")?;
                options.format = Some(match v.to_ascii_lowercase().as_str() {
                    "csv" => CopyFormat::Csv,
                    "json" | "ndjson" => CopyFormat::Json,
                    "parquet" => CopyFormat::Parquet,
                    _ => {
                        return Err(parse_error(
                            v_at,
                            format!("unknown format {v:?} (use csv, json or parquet)"),
                        ));
                    }
                });
            }
            "header" => {
                options.header = match value.as_ref().map(|(v, _)| v.to_ascii_lowercase()) {
                    None => true,
                    Some(v) if v == "true" || v == "1" || v == "on" => true,
                    Some(v) if v == "false" || v == "0" || v == "off" => false,
                    Some(_) => {
                        return Err(parse_error(name_at, "HEADER needs true or false"));
                    }
                };
            }
            "delimiter" | "delim" | "sep" => {
                let (v, v_at) = need("one character, such as ','")?;
                let v = if v == "\\t" { "\t".to_string() } else { v };
                if v.len() != 1 || !v.is_ascii() || v == "\n" || v == "\r" || v == "\"" {
                    return Err(parse_error(
                        v_at,
                        format!(
                            "the delimiter must be one ASCII character other than a quote or line break, found {v:?}"
                        ),
                    ));
                }
                options.delimiter = v.as_bytes()[0];
            }
            "compression" | "codec" => {
                let (v, v_at) = need("a codec: snappy, zstd, gzip, lz4 or uncompressed")?;
                compression(&v).map_err(|m| parse_error(v_at, m))?;
                options.compression = Some(v);
            }
            _ => {
                return Err(parse_error(
                    name_at,
                    format!(
                        "unknown COPY option \"{name}\" (use FORMAT, HEADER, DELIMITER or COMPRESSION)"
                    ),
                ));
            }
        }
        if at < to && sql[at..].starts_with(',') {
            at = skip_ws(sql, at + 1);
        } else if at < to {
            return Err(parse_error(at, "expected , or ) after a COPY option"));
        }
    }
    Ok(())
}

/// The Parquet codec named `name`.
fn compression(name: &str) -> std::result::Result<Compression, String> {
    Ok(match name.to_ascii_lowercase().as_str() {
        "snappy" => Compression::SNAPPY,
        "zstd" => Compression::ZSTD(Default::default()),
        "gzip" => Compression::GZIP(Default::default()),
        "lz4" | "lz4_raw" => Compression::LZ4_RAW,
        "uncompressed" | "none" => Compression::UNCOMPRESSED,
        _ => {
            return Err(format!(
                "unknown compression {name:?} (use snappy, zstd, gzip, lz4 or uncompressed)"
            ));
        }
    })
}

/// Where a file is written before it replaces `path`.
fn temporary(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!(".{name}.katydid-tmp"))
}

/// The writer of one format.
enum Writer {
    Text(BufWriter<File>),
    Parquet(Option<Box<ArrowWriter<File>>>),
}

/// A [`RowSink`] writing the rows to a file (see the module docs): call
/// [`FileSink::finish`] once the statement has succeeded, to put the file
/// in place; dropping it otherwise removes what was written.
pub(crate) struct FileSink {
    path: PathBuf,
    temp: PathBuf,
    format: CopyFormat,
    options: CopyOptions,
    writer: Option<Writer>,
    columns: Vec<String>,
    types: Vec<DataType>,
    rows: u64,
    done: bool,
}

impl FileSink {
    /// A sink that will write `path` as `options` say.
    pub(crate) fn new(path: &Path, options: &CopyOptions) -> FileSink {
        FileSink {
            path: path.to_path_buf(),
            temp: temporary(path),
            format: options.format.unwrap_or_else(|| CopyFormat::of_path(path)),
            options: options.clone(),
            writer: None,
            columns: Vec::new(),
            types: Vec::new(),
            rows: 0,
            done: false,
        }
    }

    fn io(&self, source: std::io::Error) -> Error {
        Error::Io {
            path: self.path.clone(),
            source,
        }
    }

    fn parquet_error(&self, e: parquet::errors::ParquetError) -> Error {
        self.io(std::io::Error::other(e.to_string()))
    }

    /// True when the file is Parquet (written from Arrow batches).
    pub(crate) fn is_parquet(&self) -> bool {
        self.format == CopyFormat::Parquet
    }

    /// Writes one Arrow batch of the result (after [`RowSink::start`]) to a
    /// Parquet file: the columns as the rows' batches would make them
    /// (`crate::arrow_out`'s layout is this file's).
    ///
    /// # Errors
    /// [`Error::Io`] naming the target when it cannot be written;
    /// [`Error::Internal`] for a batch of other types than the result's.
    pub(crate) fn write_batch(&mut self, batch: &RecordBatch) -> Result<()> {
        let batch = RecordBatch::try_new(self.schema(), batch.columns().to_vec())
            .map_err(|e| Error::Internal(format!("COPY batch: {e}")))?;
        self.rows += batch.num_rows() as u64;
        let result = match &mut self.writer {
            Some(Writer::Parquet(Some(w))) => w.write(&batch),
            _ => return Err(Error::Internal("COPY batch before start".into())),
        };
        result.map_err(|e| self.parquet_error(e))
    }

    /// Finishes the file and moves it over the target; the rows written.
    ///
    /// # Errors
    /// [`Error::Io`] naming the target when it cannot be written.
    pub(crate) fn finish(mut self) -> Result<u64> {
        match self.writer.take() {
            Some(Writer::Text(mut w)) => w.flush().map_err(|e| self.io(e))?,
            Some(Writer::Parquet(Some(w))) => {
                w.close().map_err(|e| self.parquet_error(e))?;
            }
            Some(Writer::Parquet(None)) | None => {
                return Err(Error::Internal("COPY finished before it started".into()));
            }
        }
        std::fs::rename(&self.temp, &self.path).map_err(|e| self.io(e))?;
        self.done = true;
        Ok(self.rows)
    }

    fn csv_field(&self, v: &Value, out: &mut String) {
        let d = self.options.delimiter as char;
        match v {
            Value::Null => {}
            Value::Str(s) if s.is_empty() => out.push_str("\"\""),
            Value::Str(s) if s.contains([d, '"', '\n', '\r']) => {
                out.push('"');
                out.push_str(&s.replace('"', "\"\""));
                out.push('"');
            }
            v => out.push_str(&v.to_string()),
        }
    }

    fn csv_line(&self, fields: impl Iterator<Item = Value>) -> String {
        let mut line = String::new();
        for (i, v) in fields.enumerate() {
            if i > 0 {
                line.push(self.options.delimiter as char);
            }
            self.csv_field(&v, &mut line);
        }
        line.push('\n');
        line
    }

    /// The rows as one Arrow batch of the result's types.
    fn batch(&self, rows: &[Vec<Value>]) -> Result<RecordBatch> {
        let mut arrays: Vec<ArrayRef> = Vec::with_capacity(self.types.len());
        for (c, dtype) in self.types.iter().enumerate() {
            let values = rows.iter().map(|r| r.get(c).unwrap_or(&Value::Null));
            let array: ArrayRef = match dtype {
                // A column of type NULL is bound as an integer NULL: never
                // a result's type, but written as one if it were.
                DataType::Int | DataType::Null => {
                    let mut b = Int64Builder::with_capacity(rows.len());
                    for v in values {
                        b.append_option(match v {
                            Value::Int(x) => Some(*x),
                            Value::HugeInt(_) => {
                                return Err(Error::Execution(
                                    "an integer sum past the 64-bit range cannot be written \
                                     as a Parquet INT64"
                                        .into(),
                                ));
                            }
                            _ => None,
                        });
                    }
                    Arc::new(b.finish())
                }
                DataType::Float => {
                    let mut b = Float64Builder::with_capacity(rows.len());
                    for v in values {
                        b.append_option(match v {
                            Value::Float(x) => Some(*x),
                            Value::Int(x) => Some(*x as f64),
                            _ => None,
                        });
                    }
                    Arc::new(b.finish())
                }
                DataType::Timestamp => {
                    let mut b = TimestampMicrosecondBuilder::with_capacity(rows.len());
                    for v in values {
                        b.append_option(match v {
                            Value::Timestamp(x) => Some(*x),
                            _ => None,
                        });
                    }
                    Arc::new(b.finish())
                }
                DataType::Date => {
                    let mut b = Date32Builder::with_capacity(rows.len());
                    for v in values {
                        b.append_option(match v {
                            Value::Date(x) => i32::try_from(*x).ok(),
                            _ => None,
                        });
                    }
                    Arc::new(b.finish())
                }
                DataType::Interval => {
                    let mut b = DurationMicrosecondBuilder::with_capacity(rows.len());
                    for v in values {
                        b.append_option(match v {
                            Value::Interval(x) => Some(*x),
                            _ => None,
                        });
                    }
                    Arc::new(b.finish())
                }
                DataType::Bool => {
                    let mut b = BooleanBuilder::with_capacity(rows.len());
                    for v in values {
                        b.append_option(match v {
                            Value::Bool(x) => Some(*x),
                            _ => None,
                        });
                    }
                    Arc::new(b.finish())
                }
                DataType::Str => {
                    let mut b = StringBuilder::with_capacity(rows.len(), rows.len() * 8);
                    for v in values {
                        match v {
                            Value::Null => b.append_null(),
                            Value::Str(s) => b.append_value(s),
                            other => b.append_value(other.to_string()),
                        }
                    }
                    Arc::new(b.finish())
                }
            };
            arrays.push(array);
        }
        RecordBatch::try_new(self.schema(), arrays)
            .map_err(|e| Error::Internal(format!("COPY batch: {e}")))
    }

    fn schema(&self) -> Arc<Schema> {
        let fields: Vec<Field> = self
            .columns
            .iter()
            .zip(&self.types)
            .map(|(name, dtype)| {
                let t = match dtype {
                    DataType::Int | DataType::Null => ArrowType::Int64,
                    DataType::Float => ArrowType::Float64,
                    DataType::Timestamp => ArrowType::Timestamp(TimeUnit::Microsecond, None),
                    DataType::Date => ArrowType::Date32,
                    DataType::Interval => ArrowType::Duration(TimeUnit::Microsecond),
                    DataType::Bool => ArrowType::Boolean,
                    DataType::Str => ArrowType::Utf8,
                };
                Field::new(name.clone(), t, true)
            })
            .collect();
        Arc::new(Schema::new(fields))
    }
}

impl Drop for FileSink {
    fn drop(&mut self) {
        if !self.done {
            self.writer = None;
            let _ = std::fs::remove_file(&self.temp);
        }
    }
}

/// JSON text of a string (quoted, escaped).
fn json_string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

impl RowSink for FileSink {
    fn start(&mut self, columns: &[String], types: &[DataType]) -> Result<()> {
        self.columns = columns.to_vec();
        self.types = types.to_vec();
        let file = File::create(&self.temp).map_err(|e| self.io(e))?;
        self.writer = Some(match self.format {
            CopyFormat::Csv | CopyFormat::Json => {
                let mut w = BufWriter::with_capacity(1 << 20, file);
                if self.format == CopyFormat::Csv && self.options.header {
                    let header =
                        self.csv_line(columns.iter().map(|c| Value::Str(Arc::from(c.as_str()))));
                    w.write_all(header.as_bytes()).map_err(|e| self.io(e))?;
                }
                Writer::Text(w)
            }
            CopyFormat::Parquet => {
                let codec = compression(self.options.compression.as_deref().unwrap_or("snappy"))
                    .map_err(Error::plan)?;
                let props = WriterProperties::builder().set_compression(codec).build();
                let w = ArrowWriter::try_new(file, self.schema(), Some(props))
                    .map_err(|e| self.parquet_error(e))?;
                Writer::Parquet(Some(Box::new(w)))
            }
        });
        Ok(())
    }

    fn rows(&mut self, rows: &[Vec<Value>]) -> Result<bool> {
        self.rows += rows.len() as u64;
        match self.format {
            CopyFormat::Csv => {
                let mut text = String::new();
                for row in rows {
                    text.push_str(&self.csv_line(row.iter().cloned()));
                }
                self.write_text(text.as_bytes())?;
            }
            CopyFormat::Json => {
                let mut text = String::new();
                for row in rows {
                    text.push('{');
                    for (i, (name, v)) in self.columns.iter().zip(row).enumerate() {
                        if i > 0 {
                            text.push(',');
                        }
                        json_string(name, &mut text);
                        text.push(':');
                        match v {
                            Value::Null => text.push_str("null"),
                            Value::Float(f) if !f.is_finite() => text.push_str("null"),
                            Value::Int(_)
                            | Value::HugeInt(_)
                            | Value::Float(_)
                            | Value::Bool(_) => {
                                text.push_str(&v.to_string());
                            }
                            Value::Str(s) => json_string(s, &mut text),
                            Value::Timestamp(_) | Value::Date(_) | Value::Interval(_) => {
                                json_string(&v.to_string(), &mut text)
                            }
                        }
                    }
                    text.push_str("}\n");
                }
                self.write_text(text.as_bytes())?;
            }
            CopyFormat::Parquet => {
                let batch = self.batch(rows)?;
                let result = match &mut self.writer {
                    Some(Writer::Parquet(Some(w))) => w.write(&batch),
                    _ => return Err(Error::Internal("COPY rows before start".into())),
                };
                result.map_err(|e| self.parquet_error(e))?;
            }
        }
        Ok(true)
    }
}

impl FileSink {
    fn write_text(&mut self, bytes: &[u8]) -> Result<()> {
        let result = match &mut self.writer {
            Some(Writer::Text(w)) => w.write_all(bytes),
            _ => return Err(Error::Internal("COPY rows before start".into())),
        };
        result.map_err(|e| self.io(e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(sql: &str) -> CopyStatement {
        parse(sql).expect("a COPY").unwrap()
    }

    #[test]
    fn copy_statements_parse_with_their_options() {
        let c = ok(
            "COPY (SELECT a FROM t WHERE s = ')') TO 'out.parquet' (FORMAT parquet, COMPRESSION zstd);",
        );
        assert_eq!(c.query.trim(), "SELECT a FROM t WHERE s = ')'");
        assert_eq!(
            c.query.find("SELECT"),
            Some(6),
            "offsets are the statement's"
        );
        assert_eq!(c.path, PathBuf::from("out.parquet"));
        assert_eq!(c.options.format, Some(CopyFormat::Parquet));
        assert_eq!(c.options.compression.as_deref(), Some("zstd"));
        let c = ok("copy trips to 'o''k.csv' with (header false, delimiter '|')");
        assert_eq!(c.query, "SELECT * FROM \"trips\"");
        assert_eq!(c.path, PathBuf::from("o'k.csv"));
        assert!(!c.options.header);
        assert_eq!(c.options.delimiter, b'|');
        let c = ok("COPY t TO 'x.csv' (HEADER)");
        assert!(c.options.header);
        assert!(parse("SELECT 1").is_none());
        assert!(parse("copyright").is_none());
    }

    #[test]
    fn bad_copy_statements_say_where() {
        for (sql, at, what) in [
            ("COPY (SELECT 1 TO 'x.csv'", 5, "unclosed"),
            ("COPY t FROM 'x.csv'", 7, "expected TO"),
            ("COPY t TO x.csv", 10, "expected the file"),
            ("COPY t TO 'x' (FORMAT xml)", 22, "unknown format"),
            ("COPY t TO 'x' (SPEED 3)", 15, "unknown COPY option"),
            (
                "COPY t TO 'x' (COMPRESSION brotli)",
                27,
                "unknown compression",
            ),
            ("COPY t TO 'x' junk", 14, "unexpected text"),
        ] {
            match parse(sql).expect("a COPY") {
                Err(Error::Parse { offset, message }) => {
                    assert_eq!(offset, at, "{sql}: {message}");
                    assert!(message.contains(what), "{sql}: {message}");
                }
                other => panic!("{sql}: {other:?}"),
            }
        }
    }

    #[test]
    fn the_format_follows_the_extension() {
        for (name, format) in [
            ("a.parquet", CopyFormat::Parquet),
            ("a.PARQUET", CopyFormat::Parquet),
            ("a.json", CopyFormat::Json),
            ("a.ndjson", CopyFormat::Json),
            ("a.csv", CopyFormat::Csv),
            ("a.txt", CopyFormat::Csv),
            ("a", CopyFormat::Csv),
        ] {
            assert_eq!(CopyFormat::of_path(Path::new(name)), format, "{name}");
        }
    }
}
