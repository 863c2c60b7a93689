//! Parquet files to an encoded [`Table`], through the `parquet` crate's
//! Arrow reader and the Arrow importer (`arrow.rs`, whose type mapping
//! applies: INT96 timestamps arrive as nanoseconds, DATE as days, DECIMAL
//! as decimals).
//!
//! # Several files
//! The files are unified by column name as DuckDB's `union_by_name` does:
//! names match case-insensitively (the first file's spelling wins), a
//! column's types widen (integer → float → string, see
//! [`super::arrow::widen`]), and a column missing from a file is NULL
//! there. Columns are in order of first appearance. Hive partition keys in
//! the paths (`…/year=2024/month=01/x.parquet`) become columns after the
//! files' own, integers when every value is one, else strings (a file
//! without a key has NULL); [`ParquetOptions::filename`] adds a `filename`
//! column, the path as given.
//!
//! # Design
//! Every file's footer is read first (all of them, so a corrupt one fails
//! the load before any data is read). Then the row groups of all files are
//! read in parallel on the current rayon pool, each by its own reader over
//! the file (the footer is not parsed again), in batches of
//! [`LoadOptions::partition_rows`] rows; each batch becomes one partition,
//! encoded as the Arrow importer encodes, and reserved against the memory
//! budget at once. Partitions keep file and row-group order.
//!
//! # Errors
//! A file that is not Parquet (no `PAR1` magic), truncated or corrupt fails
//! the load with [`Error::Io`] naming the file, and the row group where
//! the data is read; a file whose size or modification time changes during
//! the load fails it too. Nothing is returned on error.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Instant, SystemTime};

use arrow_array::RecordBatch;
use ::parquet::arrow::ProjectionMask;
use ::parquet::arrow::arrow_reader::{
    ArrowReaderMetadata, ArrowReaderOptions, ParquetRecordBatchReaderBuilder,
};
use rayon::prelude::*;

use super::arrow::{
    Reserver, dict_hints, encode_partition, f32_as_decimal, finish_table, first_error, invalid_data, katydid_type,
    rounding_notice, unsupported, widen,
};
use super::progress::{Reporter, Stop};
use super::{LoadOptions, Loaded, peak};
use crate::error::{Error, Result};
use crate::store::{Column, Partition};
use crate::types::DataType;

/// A Parquet file read at offsets, shared by the row groups read in
/// parallel. The `parquet` crate's own reader for a `File` seeks a clone of
/// it, and clones share one offset: two row groups read at once read each
/// other's bytes (`Parquet error: Required field num_values is missing`,
/// seen when the machine was busy). Positioned reads (`pread`) have no
/// shared offset.
#[derive(Clone)]
struct PositionalFile {
    file: Arc<File>,
    /// The file's size when opened: a read past it is an error, not an
    /// allocation sized by a corrupt footer.
    len: u64,
}

impl PositionalFile {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
        #[cfg(unix)]
        {
            std::os::unix::fs::FileExt::read_at(&*self.file, buf, offset)
        }
        #[cfg(windows)]
        {
            std::os::windows::fs::FileExt::seek_read(&*self.file, buf, offset)
        }
    }
}

impl ::parquet::file::reader::Length for PositionalFile {
    fn len(&self) -> u64 {
        self.len
    }
}

/// A reader from an offset of a [`PositionalFile`], with its own position.
struct ReadFrom {
    file: PositionalFile,
    at: u64,
}

impl std::io::Read for ReadFrom {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.file.read_at(buf, self.at)?;
        self.at += n as u64;
        Ok(n)
    }
}

impl ::parquet::file::reader::ChunkReader for PositionalFile {
    type T = std::io::BufReader<ReadFrom>;

    fn get_read(&self, start: u64) -> ::parquet::errors::Result<Self::T> {
        Ok(std::io::BufReader::new(ReadFrom {
            file: self.clone(),
            at: start,
        }))
    }

    fn get_bytes(&self, start: u64, length: usize) -> ::parquet::errors::Result<bytes::Bytes> {
        let end = start.checked_add(length as u64).filter(|&e| e <= self.len);
        if end.is_none() {
            return Err(::parquet::errors::ParquetError::EOF(format!(
                "{length} bytes at offset {start} are past the end of the file ({} bytes)",
                self.len
            )));
        }
        let mut buffer = vec![0; length];
        let mut done = 0;
        while done < length {
            let n = self.read_at(&mut buffer[done..], start + done as u64)?;
            if n == 0 {
                return Err(::parquet::errors::ParquetError::EOF(format!(
                    "the file ended {} bytes early",
                    length - done
                )));
            }
            done += n;
        }
        Ok(buffer.into())
    }
}

/// The first four bytes (and the last four) of a Parquet file.
pub const MAGIC: &[u8; 4] = b"PAR1";

/// True when the file at `path` starts with the Parquet magic `PAR1`.
pub fn is_parquet(path: &Path) -> bool {
    use std::io::Read;
    let mut head = [0u8; 4];
    File::open(path)
        .and_then(|mut f| f.read_exact(&mut head))
        .is_ok_and(|()| &head == MAGIC)
}

/// How to read a set of Parquet files (besides [`LoadOptions`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ParquetOptions {
    /// Add a `filename` column: each row's file, as its path was given.
    pub filename: bool,
    /// Hive partition keys (`key=value` directories) as columns: `None`
    /// adds them when every file's path has the same keys.
    pub hive_partitioning: Option<bool>,
}

/// One file of the load, its footer read.
struct Source {
    path: PathBuf,
    file: PositionalFile,
    metadata: ArrowReaderMetadata,
    stamp: (u64, Option<SystemTime>),
    /// Per table column, the index of the file's root column holding it.
    columns: Vec<Option<usize>>,
    /// Hive key values, per key of the table.
    keys: Vec<Option<String>>,
}

/// The `key=value` directories of `path`, outermost first.
fn hive_keys(path: &Path) -> Vec<(String, String)> {
    path.parent()
        .into_iter()
        .flat_map(Path::components)
        .filter_map(|c| {
            let c = c.as_os_str().to_str()?;
            let (k, v) = c.split_once('=')?;
            (!k.is_empty()).then(|| (k.to_string(), v.to_string()))
        })
        .collect()
}

fn stamp_of(file: &File, path: &Path) -> Result<(u64, Option<SystemTime>)> {
    let m = file.metadata().map_err(|source| Error::Io {
        path: path.to_path_buf(),
        source,
    })?;
    Ok((m.len(), m.modified().ok()))
}

/// Opens `path` and reads its footer.
fn open(path: &Path) -> Result<(PositionalFile, ArrowReaderMetadata, (u64, Option<SystemTime>))> {
    let file = File::open(path).map_err(|source| Error::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let stamp = stamp_of(&file, path)?;
    if !is_parquet(path) {
        return Err(invalid_data(
            path,
            "not a Parquet file (it does not start with the magic bytes PAR1)".into(),
        ));
    }
    let file = PositionalFile {
        file: Arc::new(file),
        len: stamp.0,
    };
    let metadata = ArrowReaderMetadata::load(&file, ArrowReaderOptions::new())
        .map_err(|e| invalid_data(path, format!("cannot read the Parquet footer: {e}")))?;
    Ok((file, metadata, stamp))
}

/// Loads the Parquet files `paths` (unified by name, see the module docs)
/// into a table named `table_name`, using the current rayon pool. Uses
/// [`LoadOptions::partition_rows`], `skip_unsupported`, `cancel`,
/// `on_progress` (compressed bytes of the row groups read, of all files'
/// sizes) and `memory`.
///
/// # Errors
/// [`Error::Io`] naming the file for one that cannot be opened, is not
/// Parquet, is truncated or corrupt (with the row group), or changed
/// during the load; [`Error::NotSupported`] naming the file and column of
/// a type katydid cannot load (unless `skip_unsupported`);
/// [`Error::Cancelled`]; [`Error::MemoryLimit`]. Nothing is returned on
/// error.
pub fn load_parquet(
    paths: &[PathBuf],
    table_name: &str,
    options: &LoadOptions,
    parquet: &ParquetOptions,
) -> Result<Loaded> {
    load_parquet_columns(paths, table_name, options, parquet, &|_| true, None).map(|(l, _)| l)
}

/// The files of a load, their footers read, and the union of their
/// columns (see the module docs).
struct Survey {
    sources: Vec<Source>,
    /// The table's columns: the files' (by first appearance), then hive
    /// keys, then `filename`.
    names: Vec<String>,
    dtypes: Vec<DataType>,
    notices: Vec<String>,
    /// The number of columns that come from the files themselves.
    file_columns: usize,
    /// (hive key, table column) of the keys that are columns.
    key_columns: Vec<(usize, usize)>,
    filename_column: Option<usize>,
}

/// Reads every file's footer and unifies their columns by name.
fn survey(paths: &[PathBuf], options: &LoadOptions, parquet: &ParquetOptions, stop: &Stop) -> Result<Survey> {
    if paths.is_empty() {
        return Err(Error::plan("no Parquet file to read"));
    }
    // The footers, and the union of the columns by name.
    let mut names: Vec<String> = Vec::new();
    let mut dtypes: Vec<DataType> = Vec::new();
    let mut notices: Vec<String> = Vec::new();
    let mut sources: Vec<Source> = Vec::with_capacity(paths.len());
    for path in paths {
        stop.check()?;
        let (file, metadata, stamp) = open(path)?;
        let mut columns = vec![None; names.len()];
        for (i, field) in metadata.schema().fields().iter().enumerate() {
            if let Some(notice) = rounding_notice(field.name(), field.data_type())
                && !notices.contains(&notice)
            {
                notices.push(notice);
            }
            let Some(dtype) = katydid_type(field.data_type()) else {
                if options.skip_unsupported {
                    let notice = format!(
                        "column {}: left out (type {} is not supported)",
                        field.name(),
                        field.data_type()
                    );
                    if !notices.contains(&notice) {
                        notices.push(notice);
                    }
                    continue;
                }
                return Err(match unsupported(field.name(), field.data_type()) {
                    Error::NotSupported(m) => {
                        Error::NotSupported(format!("{}: {m}", path.display()))
                    }
                    e => e,
                });
            };
            match names
                .iter()
                .position(|n| n.eq_ignore_ascii_case(field.name()))
            {
                Some(c) if columns[c].is_none() => {
                    dtypes[c] = widen(dtypes[c], dtype);
                    columns[c] = Some(i);
                }
                // A second column of the same name (in another case) in
                // one file: a column of its own.
                Some(_) | None => {
                    names.push(field.name().clone());
                    dtypes.push(dtype);
                    columns.push(Some(i));
                }
            }
        }
        sources.push(Source {
            path: path.clone(),
            file,
            metadata,
            stamp,
            columns,
            keys: Vec::new(),
        });
    }
    for s in &mut sources {
        s.columns.resize(names.len(), None);
    }
    let file_columns = names.len();

    // Hive keys, then the file name, as columns.
    let all_keys: Vec<Vec<(String, String)>> = paths.iter().map(|p| hive_keys(p)).collect();
    let hive = parquet.hive_partitioning.unwrap_or_else(|| {
        !all_keys[0].is_empty()
            && all_keys.iter().all(|k| {
                k.len() == all_keys[0].len()
                    && k.iter().zip(&all_keys[0]).all(|(a, b)| a.0 == b.0)
            })
    });
    let mut key_names: Vec<String> = Vec::new();
    if hive {
        for keys in &all_keys {
            for (k, _) in keys {
                if !key_names.iter().any(|n| n.eq_ignore_ascii_case(k)) {
                    key_names.push(k.clone());
                }
            }
        }
        for (s, keys) in sources.iter_mut().zip(&all_keys) {
            s.keys = key_names
                .iter()
                .map(|n| {
                    keys.iter()
                        .find(|(k, _)| k.eq_ignore_ascii_case(n))
                        .map(|(_, v)| v.clone())
                })
                .collect();
        }
        for (k, name) in key_names.iter().enumerate() {
            let ints = sources
                .iter()
                .filter_map(|s| s.keys[k].as_deref())
                .all(|v| v.parse::<i64>().is_ok());
            // A key that is also a column of the files stays the files'.
            if names.iter().any(|n| n.eq_ignore_ascii_case(name)) {
                continue;
            }
            names.push(name.clone());
            dtypes.push(if ints { DataType::Int } else { DataType::Str });
        }
    }
    let key_columns: Vec<(usize, usize)> = key_names
        .iter()
        .enumerate()
        .filter_map(|(k, name)| Some((k, names.iter().rposition(|n| n == name)?)))
        .filter(|&(_, c)| c >= file_columns)
        .collect();
    let filename_column = parquet.filename.then(|| {
        names.push("filename".into());
        dtypes.push(DataType::Str);
        names.len() - 1
    });
    Ok(Survey {
        sources,
        names,
        dtypes,
        notices,
        file_columns,
        key_columns,
        filename_column,
    })
}

/// [`load_parquet`] reading only the table columns whose name `wanted`
/// accepts (at least one: the first column when it accepts none), in table
/// order, and only the row groups `groups` keeps (all of them for `None`);
/// with the names of all the columns a whole load has. Only those
/// columns' chunks are read from the files. A load of other columns of the
/// same unchanged files and row groups cuts the same partitions (row
/// groups in order, in batches of [`LoadOptions::partition_rows`] rows),
/// so the two tables' columns can be put side by side.
///
/// # Errors
/// As [`load_parquet`]; a column of a type katydid cannot load fails the
/// load even when it is not wanted (unless `skip_unsupported`); a file
/// that is not as it was when `groups` was chosen fails it with
/// [`Error::Io`].
pub fn load_parquet_columns(
    paths: &[PathBuf],
    table_name: &str,
    options: &LoadOptions,
    parquet: &ParquetOptions,
    wanted: &dyn Fn(&str) -> bool,
    groups: Option<&RowGroups>,
) -> Result<(Loaded, Vec<String>)> {
    let start = Instant::now();
    let meter = peak::PeakMeter::start();
    let stop = Stop::new(options.cancel.clone());
    stop.check()?;
    let Survey {
        mut sources,
        names,
        dtypes,
        notices,
        file_columns: _,
        key_columns,
        filename_column,
    } = survey(paths, options, parquet, &stop)?;
    if let Some(groups) = groups {
        groups.check(&sources)?;
    }

    // The wanted columns only, renumbered; all of them when some names
    // are made unique by the table (a subset would be named otherwise).
    let all_names = super::unique_names(names.clone());
    let mut keep: Vec<bool> = if all_names == names {
        names.iter().map(|n| wanted(n)).collect()
    } else {
        vec![true; names.len()]
    };
    if !keep.contains(&true)
        && let Some(first) = keep.first_mut()
    {
        *first = true;
    }
    let mut renumber: Vec<Option<usize>> = Vec::with_capacity(keep.len());
    let mut next = 0;
    for &k in &keep {
        renumber.push(k.then_some(next));
        next += usize::from(k);
    }
    let kept = |c: usize| keep[c];
    let names: Vec<String> = names
        .into_iter()
        .enumerate()
        .filter(|&(c, _)| kept(c))
        .map(|(_, n)| n)
        .collect();
    let dtypes: Vec<DataType> = (0..dtypes.len())
        .filter(|&c| kept(c))
        .map(|c| dtypes[c])
        .collect();
    for s in &mut sources {
        s.columns = (0..s.columns.len())
            .filter(|&c| kept(c))
            .map(|c| s.columns[c])
            .collect();
    }
    let key_columns: Vec<(usize, usize)> = key_columns
        .into_iter()
        .filter_map(|(k, c)| Some((k, renumber[c]?)))
        .collect();
    let filename_column = filename_column.and_then(|c| renumber[c]);

    // The row groups of every file, read in parallel.
    let work: Vec<(usize, usize)> = sources
        .iter()
        .enumerate()
        .flat_map(|(f, s)| (0..s.metadata.metadata().num_row_groups()).map(move |g| (f, g)))
        .filter(|&(f, g)| groups.is_none_or(|r| r.read[f][g]))
        .collect();
    let total_bytes: u64 = sources.iter().map(|s| s.stamp.0).sum();
    let done_bytes = AtomicU64::new(0);
    let reporter = Mutex::new(Reporter::new(options.on_progress.clone(), total_bytes, start));
    let reserver = Reserver::new(options, table_name);
    let per_partition = options.partition_rows.max(1);
    let results: Vec<(usize, Result<Vec<Partition>>)> = work
        .par_iter()
        .enumerate()
        .map(|(index, &(f, g))| {
            let s = &sources[f];
            let result = read_row_group(s, g, per_partition, &names, &dtypes, &stop)
                .and_then(|mut parts| {
                    for p in &mut parts {
                        for &(k, c) in &key_columns {
                            p.columns[c] = constant(dtypes[c], s.keys[k].as_deref(), p.rows);
                        }
                        if let Some(c) = filename_column {
                            let name = s.path.display().to_string();
                            p.columns[c] = constant(DataType::Str, Some(&name), p.rows);
                        }
                        crate::store::share_repeated(&mut p.columns);
                        reserver.reserve(&p.columns, p.rows)?;
                    }
                    Ok(parts)
                });
            if result.is_err() {
                stop.fail();
            }
            let bytes = s.metadata.metadata().row_group(g).compressed_size().max(0) as u64;
            let done = done_bytes.fetch_add(bytes, Ordering::Relaxed) + bytes;
            if let Ok(mut r) = reporter.lock() {
                r.read(done, false);
            }
            (index, result)
        })
        .collect();
    if let Ok(mut r) = reporter.lock() {
        r.read(done_bytes.load(Ordering::Relaxed), true);
    }
    let mut results = results;
    first_error(&stop, &mut results)?;
    // A file that changed while it was read may have given rows of two
    // versions.
    for s in &sources {
        if stamp_of(&s.file.file, &s.path)? != s.stamp
            || std::fs::metadata(&s.path)
                .map(|m| (m.len(), m.modified().ok()))
                .ok()
                != Some(s.stamp)
        {
            return Err(invalid_data(
                &s.path,
                "the file changed while it was being read".into(),
            ));
        }
    }
    let mut partitions = Vec::new();
    for (_, r) in results {
        partitions.extend(r?);
    }
    let (table, memory) = finish_table(
        partitions,
        names,
        &dtypes,
        table_name,
        (crate::store::SourceFormat::Parquet, total_bytes),
        reserver.into_reservation()?,
    )?;
    Ok((
        Loaded {
            table,
            notices,
            peak_bytes: meter.and_then(|m| m.peak_bytes()),
            memory,
        },
        all_names,
    ))
}

/// A constant a query compares a column with.
#[derive(Debug, Clone, PartialEq)]
pub enum Constant {
    /// An integer literal.
    Int(i64),
    /// A number with a fraction or exponent.
    Float(f64),
    /// A string literal (compared with a timestamp column, it is read as a
    /// timestamp, as the planner reads it).
    Str(String),
    /// A date (`DATE '2024-01-15'`, `CAST('…' AS DATE)`), in days since
    /// 1970-01-01; a timestamp column compares with its midnight.
    Date(i64),
    /// A timestamp (`TIMESTAMP '2024-01-15 08:00'`), in microseconds since
    /// the epoch; a date column compares as its midnight.
    Timestamp(i64),
}

/// How a column is compared with a constant: `column op constant`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compare {
    /// `=`
    Eq,
    /// `<`
    Lt,
    /// `<=`
    LtEq,
    /// `>`
    Gt,
    /// `>=`
    GtEq,
}

/// A test a query's WHERE puts on every row it keeps.
#[derive(Debug, Clone, PartialEq)]
pub enum RowTest {
    /// `column op constant`.
    Compare(Compare, Constant),
    /// `column IN (constants)`.
    In(Vec<Constant>),
    /// `column IS NULL`.
    IsNull,
    /// `column IS NOT NULL`.
    IsNotNull,
}

/// Tests that every row a query keeps passes (the conjuncts of its WHERE
/// that compare a column with constants), by column name as the query
/// spells it (matched case-insensitively; a name that is not exactly one
/// column of the table tests nothing).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RowFilter {
    /// (column, test), all of which a row passes.
    pub tests: Vec<(String, RowTest)>,
}

/// The row groups of each file of a load that are read, and the files'
/// size and modification time when they were chosen.
#[derive(Debug, Clone, PartialEq)]
pub struct RowGroups {
    /// Per file (in the load's order), per row group: read it.
    pub read: Vec<Vec<bool>>,
    stamps: Vec<(u64, Option<SystemTime>)>,
}

impl RowGroups {
    /// `read`, of files that never change (for tests of callers).
    #[cfg(test)]
    pub(crate) fn of(read: Vec<Vec<bool>>) -> RowGroups {
        let stamps = vec![(0, None); read.len()];
        RowGroups { read, stamps }
    }

    /// The number of row groups of all the files.
    pub fn total(&self) -> usize {
        self.read.iter().map(Vec::len).sum()
    }

    /// The number of row groups read.
    pub fn kept(&self) -> usize {
        self.read.iter().flatten().filter(|&&r| r).count()
    }

    /// True when every row group is read.
    pub fn is_all(&self) -> bool {
        self.read.iter().flatten().all(|&r| r)
    }

    /// True when `other` is of the same unchanged files and reads no row
    /// group that this does not.
    pub fn covers(&self, other: &RowGroups) -> bool {
        self.same_files(other)
            && self
                .read
                .iter()
                .flatten()
                .zip(other.read.iter().flatten())
                .all(|(&mine, &theirs)| mine || !theirs)
    }

    /// The row groups either reads, when both are of the same unchanged
    /// files.
    pub fn union(&self, other: &RowGroups) -> Option<RowGroups> {
        self.same_files(other).then(|| RowGroups {
            read: self
                .read
                .iter()
                .zip(&other.read)
                .map(|(a, b)| a.iter().zip(b).map(|(&x, &y)| x || y).collect())
                .collect(),
            stamps: self.stamps.clone(),
        })
    }

    fn same_files(&self, other: &RowGroups) -> bool {
        self.stamps == other.stamps
            && self.read.len() == other.read.len()
            && self
                .read
                .iter()
                .zip(&other.read)
                .all(|(a, b)| a.len() == b.len())
    }

    /// Fails unless these row groups were chosen from `sources` as they are.
    fn check(&self, sources: &[Source]) -> Result<()> {
        if self.read.len() != sources.len() {
            return Err(Error::Internal(
                "row groups chosen for other files".into(),
            ));
        }
        for ((s, read), stamp) in sources.iter().zip(&self.read).zip(&self.stamps) {
            if s.stamp != *stamp || s.metadata.metadata().num_row_groups() != read.len() {
                return Err(invalid_data(
                    &s.path,
                    "the file changed while it was being read".into(),
                ));
            }
        }
        Ok(())
    }
}

/// What a row group's statistics say of one column's values there, in
/// katydid's terms (integers and timestamps as `i64`, floats as `f64`,
/// strings as bytes): lower and upper bounds of the non-NULL values (not
/// necessarily reached), and the NULL count.
#[derive(Debug, Clone, PartialEq)]
struct Bounds {
    min: Option<Bound>,
    max: Option<Bound>,
    nulls: Option<u64>,
    rows: u64,
    /// No float is NaN (NaN is outside the bounds, and compares above
    /// every number in katydid).
    nan_free: bool,
}

#[derive(Debug, Clone, PartialEq)]
enum Bound {
    Int(i64),
    Float(f64),
    Str(Vec<u8>),
}

impl Bounds {
    /// A column whose `rows` values are all NULL.
    fn all_null(rows: u64) -> Bounds {
        Bounds {
            min: None,
            max: None,
            nulls: Some(rows),
            rows,
            nan_free: true,
        }
    }

    /// Nothing known.
    fn unknown(rows: u64) -> Bounds {
        Bounds {
            min: None,
            max: None,
            nulls: None,
            rows,
            nan_free: false,
        }
    }

    /// `rows` copies of one hive key or file name (`None`: NULL) of table
    /// type `dtype`.
    fn constant(dtype: DataType, value: Option<&str>, rows: u64) -> Bounds {
        let bound = match (dtype, value) {
            (_, None) => return Bounds::all_null(rows),
            (DataType::Int, Some(v)) => match v.parse::<i64>() {
                Ok(x) => Bound::Int(x),
                Err(_) => return Bounds::all_null(rows),
            },
            (_, Some(v)) => Bound::Str(v.as_bytes().to_vec()),
        };
        Bounds {
            min: Some(bound.clone()),
            max: Some(bound),
            nulls: Some(0),
            rows,
            nan_free: true,
        }
    }

    /// The statistics of a column chunk whose Arrow type is `arrow`, loaded
    /// into a table column of type `dtype` (see `arrow.rs` for how values
    /// are converted; only conversions that keep order are used).
    /// `unsigned_order`: the file orders the chunk's bytes as unsigned.
    /// `column` is the chunk's column in the file: the statistics are in
    /// its units (an Arrow `Timestamp(Second)` is stored as milliseconds).
    fn of_chunk(
        stats: Option<&::parquet::file::statistics::Statistics>,
        arrow: &arrow_schema::DataType,
        column: &::parquet::schema::types::ColumnDescriptor,
        dtype: DataType,
        unsigned_order: bool,
        rows: u64,
    ) -> Bounds {
        use ::parquet::basic::{ConvertedType, LogicalType, TimeUnit as Unit};
        use ::parquet::file::statistics::Statistics as S;
        use arrow_schema::DataType as A;
        let Some(stats) = stats else {
            return Bounds::unknown(rows);
        };
        let ints = |min: Option<i64>, max: Option<i64>| (min.map(Bound::Int), max.map(Bound::Int));
        let logical = column.logical_type_ref();
        let signed = matches!(arrow, A::Int8 | A::Int16 | A::Int32 | A::Int64)
            && match logical {
                Some(LogicalType::Integer(int)) => int.is_signed,
                Some(_) => false,
                None => matches!(
                    column.converted_type(),
                    ConvertedType::NONE
                        | ConvertedType::INT_8
                        | ConvertedType::INT_16
                        | ConvertedType::INT_32
                        | ConvertedType::INT_64
                ),
            };
        // Microseconds per stored unit of a timestamp column (negative:
        // stored units per microsecond).
        let unit: Option<i64> = match logical {
            Some(LogicalType::Timestamp(t)) => Some(match t.unit {
                Unit::MILLIS => 1000,
                Unit::MICROS => 1,
                Unit::NANOS => -1000,
            }),
            Some(_) => None,
            None => match column.converted_type() {
                ConvertedType::TIMESTAMP_MILLIS => Some(1000),
                ConvertedType::TIMESTAMP_MICROS => Some(1),
                // Arrow writers store seconds as a plain INT64, the Arrow
                // type saying so.
                ConvertedType::NONE
                    if matches!(arrow, A::Timestamp(arrow_schema::TimeUnit::Second, _)) =>
                {
                    Some(1_000_000)
                }
                _ => None,
            },
        };
        let date = matches!(logical, Some(LogicalType::Date))
            || (logical.is_none() && column.converted_type() == ConvertedType::DATE);
        let mut nan_free = true;
        let (min, max) = match (dtype, arrow, stats) {
            (DataType::Int, _, S::Int32(v)) if signed => {
                ints(v.min_opt().map(|&x| x.into()), v.max_opt().map(|&x| x.into()))
            }
            (DataType::Int, _, S::Int64(v)) if signed => ints(v.min_opt().copied(), v.max_opt().copied()),
            // Integers widened to floats: `as f64` keeps their order.
            // Floats of 32 bits load as their shortest decimal (as
            // `arrow.rs` reads them), which keeps their order too.
            (DataType::Float, _, S::Int32(v)) if signed => (
                v.min_opt().map(|&x| Bound::Float(x.into())),
                v.max_opt().map(|&x| Bound::Float(x.into())),
            ),
            (DataType::Float, _, S::Int64(v)) if signed => (
                v.min_opt().map(|&x| Bound::Float(x as f64)),
                v.max_opt().map(|&x| Bound::Float(x as f64)),
            ),
            (DataType::Float, A::Float32, S::Float(v)) => {
                nan_free = stats.nan_count_opt() == Some(0);
                (
                    v.min_opt().map(|&x| Bound::Float(f32_as_decimal(x))),
                    v.max_opt().map(|&x| Bound::Float(f32_as_decimal(x))),
                )
            }
            (DataType::Float, A::Float64, S::Double(v)) => {
                nan_free = stats.nan_count_opt() == Some(0);
                (v.min_opt().map(|&x| Bound::Float(x)), v.max_opt().map(|&x| Bound::Float(x)))
            }
            (DataType::Timestamp, A::Timestamp(..), S::Int64(v)) if unit.is_some() => {
                let micros = |x: i64| match unit {
                    Some(k) if k > 0 => x.checked_mul(k),
                    Some(k) => Some(x.div_euclid(-k)),
                    None => None,
                };
                ints(v.min_opt().and_then(|&x| micros(x)), v.max_opt().and_then(|&x| micros(x)))
            }
            (DataType::Date, A::Date32, S::Int32(v)) if date => {
                ints(v.min_opt().map(|&x| x.into()), v.max_opt().map(|&x| x.into()))
            }
            (DataType::Timestamp, A::Date32, S::Int32(v)) if date => {
                let micros = |d: i32| i64::from(d).checked_mul(86_400_000_000);
                ints(v.min_opt().and_then(|&x| micros(x)), v.max_opt().and_then(|&x| micros(x)))
            }
            (DataType::Str, A::Utf8 | A::LargeUtf8 | A::Utf8View, S::ByteArray(v))
                if unsigned_order && !stats.is_min_max_deprecated() =>
            {
                (
                    v.min_opt().map(|x| Bound::Str(x.data().to_vec())),
                    v.max_opt().map(|x| Bound::Str(x.data().to_vec())),
                )
            }
            (DataType::Str, A::Dictionary(_, value), S::ByteArray(v))
                if unsigned_order
                    && !stats.is_min_max_deprecated()
                    && matches!(**value, A::Utf8 | A::LargeUtf8 | A::Utf8View) =>
            {
                (
                    v.min_opt().map(|x| Bound::Str(x.data().to_vec())),
                    v.max_opt().map(|x| Bound::Str(x.data().to_vec())),
                )
            }
            _ => (None, None),
        };
        // A NaN bound (some writers keep one) orders nothing.
        let number = |b: Option<Bound>| b.filter(|b| !matches!(b, Bound::Float(f) if f.is_nan()));
        Bounds {
            min: number(min),
            max: number(max),
            nulls: stats.null_count_opt(),
            rows,
            nan_free,
        }
    }

    /// False when no row of the chunk can pass `test` on a column of type
    /// `dtype`; true when one may.
    fn may_pass(&self, test: &RowTest, dtype: DataType) -> bool {
        match test {
            RowTest::IsNull => self.nulls != Some(0),
            RowTest::IsNotNull => self.nulls != Some(self.rows),
            RowTest::Compare(op, c) => self.may_compare(*op, c, dtype),
            RowTest::In(list) => list.iter().any(|c| self.may_compare(Compare::Eq, c, dtype)),
        }
    }

    fn may_compare(&self, op: Compare, c: &Constant, dtype: DataType) -> bool {
        use std::cmp::Ordering;
        // NULL compares with nothing.
        if self.nulls == Some(self.rows) {
            return false;
        }
        // A NaN passes `>` and `>=` whatever the bounds.
        if matches!(op, Compare::Gt | Compare::GtEq) && dtype == DataType::Float && !self.nan_free
        {
            return true;
        }
        let (Some(min), Some(max)) = (&self.min, &self.max) else {
            return true;
        };
        // Below 2^53 in magnitude, integers and floats convert exactly.
        const EXACT: f64 = 9_007_199_254_740_992.0;
        let order = |bound: &Bound| -> Option<Ordering> {
            match (bound, c, dtype) {
                (Bound::Int(b), Constant::Int(k), DataType::Int) => Some(b.cmp(k)),
                (Bound::Int(b), Constant::Float(f), DataType::Int)
                    if (*b as f64).abs() < EXACT && f.is_finite() =>
                {
                    (*b as f64).partial_cmp(f)
                }
                (Bound::Float(b), Constant::Float(f), DataType::Float) if f.is_finite() => {
                    b.partial_cmp(f)
                }
                (Bound::Float(b), Constant::Int(k), DataType::Float)
                    if (*k as f64).abs() < EXACT =>
                {
                    b.partial_cmp(&(*k as f64))
                }
                (Bound::Int(b), Constant::Str(s), DataType::Timestamp) => {
                    crate::types::parse_timestamp(s.trim()).map(|t| b.cmp(&t))
                }
                // A day against a date's or timestamp's text: the text's
                // day (as the binder casts it).
                (Bound::Int(b), Constant::Str(s), DataType::Date) => crate::types::parse_timestamp(s.trim())
                    .map(|t| b.cmp(&crate::types::timestamp_to_date(t))),
                (Bound::Str(b), Constant::Str(s), DataType::Str) => {
                    Some(b.as_slice().cmp(s.as_bytes()))
                }
                // Typed literals, as the binder compares them: a date with
                // a date as days, a date with a timestamp as the date's
                // midnight.
                (Bound::Int(b), Constant::Date(d), DataType::Date) => Some(b.cmp(d)),
                (Bound::Int(b), Constant::Date(d), DataType::Timestamp) => {
                    crate::types::date_to_timestamp(*d).map(|t| b.cmp(&t))
                }
                (Bound::Int(b), Constant::Timestamp(t), DataType::Timestamp) => Some(b.cmp(t)),
                (Bound::Int(b), Constant::Timestamp(t), DataType::Date) => {
                    crate::types::date_to_timestamp(*b).map(|m| m.cmp(t))
                }
                _ => None,
            }
        };
        let (Some(low), Some(high)) = (order(min), order(max)) else {
            return true;
        };
        match op {
            Compare::Eq => low != Ordering::Greater && high != Ordering::Less,
            Compare::Lt => low == Ordering::Less,
            Compare::LtEq => low != Ordering::Greater,
            Compare::Gt => high == Ordering::Greater,
            Compare::GtEq => high != Ordering::Less,
        }
    }
}

/// The row groups of the Parquet `paths` (read as [`load_parquet`] reads
/// them) that may hold a row passing `filter`, by the row groups'
/// statistics: a group is skipped when, for some test, the bounds of its
/// column there (or its NULL count) show that no row passes. A column a
/// file lacks is NULL there; hive keys and `filename` are one value per
/// file. Floats may hold NaNs that the bounds leave out (NaN is above
/// every number here), so `>`/`>=` on a float skips nothing unless the
/// file counts its NaNs; string bounds are used only where the file orders
/// them as unsigned bytes (as katydid compares strings).
///
/// # Errors
/// As [`load_parquet`] for a file that cannot be read.
pub fn select_row_groups(
    paths: &[PathBuf],
    options: &LoadOptions,
    parquet: &ParquetOptions,
    filter: &RowFilter,
) -> Result<RowGroups> {
    let stop = Stop::new(options.cancel.clone());
    let survey = survey(paths, options, parquet, &stop)?;
    let all_names = super::unique_names(survey.names.clone());
    // Each test on the one column it names.
    let tests: Vec<(usize, &RowTest)> = filter
        .tests
        .iter()
        .filter_map(|(name, test)| {
            let mut matches = all_names
                .iter()
                .enumerate()
                .filter(|(_, n)| n.eq_ignore_ascii_case(name));
            match (matches.next(), matches.next()) {
                (Some((c, _)), None) => Some((c, test)),
                _ => None,
            }
        })
        .collect();
    let read = survey
        .sources
        .iter()
        .map(|s| {
            let meta = s.metadata.metadata();
            let schema = s.metadata.schema();
            let parquet_schema = s.metadata.parquet_schema();
            // The leaf of each root column that has exactly one.
            let mut leaves = vec![(0usize, 0usize); schema.fields().len()];
            for leaf in 0..parquet_schema.num_columns() {
                if let Some(l) = leaves.get_mut(parquet_schema.get_column_root_idx(leaf)) {
                    *l = (l.0 + 1, leaf);
                }
            }
            (0..meta.num_row_groups())
                .map(|g| {
                    let group = meta.row_group(g);
                    let rows = group.num_rows().max(0) as u64;
                    tests.iter().all(|&(c, test)| {
                        let dtype = survey.dtypes[c];
                        let bounds = if c < survey.file_columns {
                            match s.columns[c] {
                                None => Bounds::all_null(rows),
                                Some(i) => match leaves.get(i) {
                                    Some(&(1, leaf)) => Bounds::of_chunk(
                                        group.column(leaf).statistics(),
                                        schema.field(i).data_type(),
                                        parquet_schema.column(leaf).as_ref(),
                                        dtype,
                                        matches!(
                                            meta.file_metadata().column_order(leaf),
                                            ::parquet::basic::ColumnOrder::TYPE_DEFINED_ORDER(
                                                ::parquet::basic::SortOrder::UNSIGNED
                                            )
                                        ),
                                        rows,
                                    ),
                                    _ => Bounds::unknown(rows),
                                },
                            }
                        } else if let Some(&(k, _)) =
                            survey.key_columns.iter().find(|&&(_, kc)| kc == c)
                        {
                            Bounds::constant(dtype, s.keys[k].as_deref(), rows)
                        } else if survey.filename_column == Some(c) {
                            Bounds::constant(dtype, Some(&s.path.display().to_string()), rows)
                        } else {
                            Bounds::unknown(rows)
                        };
                        bounds.may_pass(test, dtype)
                    })
                })
                .collect()
        })
        .collect();
    Ok(RowGroups {
        read,
        stamps: survey.sources.iter().map(|s| s.stamp).collect(),
    })
}

/// A column of `rows` copies of `value` (NULL for `None`) as `dtype`.
fn constant(dtype: DataType, value: Option<&str>, rows: usize) -> Column {
    match (dtype, value) {
        (_, None) => Column::all_null(dtype, rows),
        (DataType::Int, Some(v)) => match v.parse::<i64>() {
            Ok(x) => Column::encode_ints(DataType::Int, &vec![x; rows], None),
            Err(_) => Column::all_null(dtype, rows),
        },
        (_, Some(v)) => Column::encode_strings(&vec![v; rows], None),
    }
}

/// `metadata` asking for the string columns whose chunk in row group `g`
/// starts with a dictionary page as Arrow dictionaries (`Int32` keys), so
/// the page's values and each row's key reach the encoder instead of one
/// string per row (see `dictionary_ids` in `arrow.rs`); `None` when no
/// column qualifies or the reader refuses the schema (the strings are then
/// read as they are). A chunk whose writer fell back to plain pages
/// mid-way still reads correctly: the reader builds the dictionary itself.
fn with_dictionaries(metadata: &ArrowReaderMetadata, g: usize) -> Option<ArrowReaderMetadata> {
    use arrow_schema::{DataType as ArrowType, Field, Schema};
    let schema = metadata.schema();
    let parquet = metadata.parquet_schema();
    let group = metadata.metadata().row_group(g);
    // The leaf of each root column that has exactly one.
    let mut leaves = vec![(0usize, 0usize); schema.fields().len()];
    for leaf in 0..parquet.num_columns() {
        let root = parquet.get_column_root_idx(leaf);
        if let Some(l) = leaves.get_mut(root) {
            *l = (l.0 + 1, leaf);
        }
    }
    let mut changed = false;
    let fields: Vec<Arc<Field>> = schema
        .fields()
        .iter()
        .zip(&leaves)
        .map(|(f, &(count, leaf))| {
            let dictionary = matches!(f.data_type(), ArrowType::Utf8 | ArrowType::Utf8View)
                && count == 1
                && group.column(leaf).dictionary_page_offset().is_some();
            if !dictionary {
                return f.clone();
            }
            changed = true;
            Arc::new(f.as_ref().clone().with_data_type(ArrowType::Dictionary(
                Box::new(ArrowType::Int32),
                Box::new(ArrowType::Utf8),
            )))
        })
        .collect();
    if !changed {
        return None;
    }
    let schema = Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone()));
    ArrowReaderMetadata::try_new(
        metadata.metadata().clone(),
        ArrowReaderOptions::new().with_schema(schema),
    )
    .ok()
}

/// Reads row group `g` of `s` in batches of `per_partition` rows, each
/// encoded as one partition with every table column (those not in the file
/// NULL; hive and filename columns are filled by the caller).
fn read_row_group(
    s: &Source,
    g: usize,
    per_partition: usize,
    names: &[String],
    dtypes: &[DataType],
    stop: &Stop,
) -> Result<Vec<Partition>> {
    stop.check()?;
    let at = |e: &dyn std::fmt::Display| invalid_data(&s.path, format!("row group {g}: {e}"));
    let file = s.file.clone();
    // Only the file's columns the table loads.
    let wanted: Vec<usize> = {
        let mut w: Vec<usize> = s.columns.iter().flatten().copied().collect();
        w.sort_unstable();
        w
    };
    let mask = ProjectionMask::roots(s.metadata.parquet_schema(), wanted.iter().copied());
    let metadata = with_dictionaries(&s.metadata, g).unwrap_or_else(|| s.metadata.clone());
    let reader = ParquetRecordBatchReaderBuilder::new_with_metadata(file, metadata)
        .with_row_groups(vec![g])
        .with_projection(mask)
        .with_batch_size(per_partition)
        .build()
        .map_err(|e| at(&e))?;
    // In the projected batch, the file's column i is at its rank in `wanted`.
    // Hive and filename columns come after the file's: NULL here.
    let positions: Vec<Option<usize>> = (0..dtypes.len())
        .map(|c| {
            s.columns
                .get(c)
                .copied()
                .flatten()
                .and_then(|i| wanted.binary_search(&i).ok())
        })
        .collect();
    let mut out = Vec::new();
    // A row group's partitions offer each other their string dictionaries.
    let hints = dict_hints(dtypes.len());
    for batch in reader {
        stop.check()?;
        let batch: RecordBatch = batch.map_err(|e| at(&e))?;
        let rows = batch.num_rows();
        let sources: Vec<Vec<Option<usize>>> = positions.iter().map(|&p| vec![p]).collect();
        let columns = encode_partition(
            std::slice::from_ref(&batch),
            &sources,
            dtypes,
            names,
            &s.path,
            stop,
            &hints,
        )?;
        out.push(Partition {
            rows,
            first_row: 0,
            columns,
        });
    }
    let expected = s
        .metadata
        .metadata()
        .row_group(g)
        .num_rows()
        .max(0) as usize;
    let got: usize = out.iter().map(|p| p.rows).sum();
    if got != expected {
        return Err(at(&format!("{got} rows read of the {expected} the footer says")));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ::parquet::arrow::ArrowWriter;
    use ::parquet::file::properties::WriterProperties;
    use ::parquet::schema::types::ColumnPath;
    use arrow_array::{ArrayRef, Int64Array, StringArray};
    use arrow_schema::DataType as ArrowType;

    /// The reader is asked for dictionaries exactly for the string columns
    /// whose chunk has a dictionary page, and hands them over as such.
    #[test]
    fn dictionary_pages_are_read_as_dictionaries() {
        let path = std::env::temp_dir().join(format!(
            "katydid-parquet-dictionary-pages-{}.parquet",
            std::process::id()
        ));
        let n = 3000;
        let flags = || StringArray::from_iter_values((0..n).map(|i| ["N", "Y"][i % 7 / 6]));
        let cols: Vec<(&str, ArrayRef)> = vec![
            ("flag", Arc::new(flags())),
            ("id", Arc::new(Int64Array::from_iter_values(0..n as i64))),
            ("plain", Arc::new(flags())),
        ];
        let batch = RecordBatch::try_from_iter(cols).unwrap();
        let props = WriterProperties::builder()
            .set_max_row_group_row_count(Some(1000))
            .set_column_dictionary_enabled(ColumnPath::from("plain"), false)
            .build();
        let mut w =
            ArrowWriter::try_new(File::create(&path).unwrap(), batch.schema(), Some(props))
                .unwrap();
        w.write(&batch).unwrap();
        w.close().unwrap();
        let (file, metadata, _) = open(&path).unwrap();
        let dictionary = ArrowType::Dictionary(Box::new(ArrowType::Int32), Box::new(ArrowType::Utf8));
        for g in 0..3 {
            let m = with_dictionaries(&metadata, g).expect("a string column has a dictionary page");
            let types: Vec<ArrowType> =
                m.schema().fields().iter().map(|f| f.data_type().clone()).collect();
            assert_eq!(types, [dictionary.clone(), ArrowType::Int64, ArrowType::Utf8]);
            let batch = ParquetRecordBatchReaderBuilder::new_with_metadata(file.clone(), m)
                .with_row_groups(vec![g])
                .build()
                .unwrap()
                .next()
                .unwrap()
                .unwrap();
            assert_eq!(batch.column(0).data_type(), &dictionary);
            assert_eq!(batch.num_rows(), 1000);
        }
        std::fs::remove_file(&path).unwrap();
    }
}
