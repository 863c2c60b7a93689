//! The public facade: load tables, run SQL, describe what is loaded.
//!
//! Everything the REPL and the command line do goes through [`Database`].

use std::collections::{BTreeMap, HashMap, HashSet};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::arrow_out::{self, ArrowResult};
use crate::compose;
use crate::control::{CancelToken, MemoryBudget, ProgressFn, Reservation, format_bytes};
use crate::copy::{self, CopyOptions};
use crate::error::{Error, Result};
use crate::exec::{self, ExecOptions};
use crate::files::{self, FileTables};
use crate::ingest::parquet::ParquetOptions;
use crate::ingest::{self, LoadOptions};
use crate::introspect;
use crate::plan::{self, Catalog};
use crate::sql::{
    self,
    ast::{Describe, Statement, TableRef},
};
use crate::store::{HashIndex, SourceFormat, Table};
use crate::types::{DataType, Value};

/// Settings of a [`Database`].
#[derive(Debug, Clone, Default)]
pub struct DatabaseOptions {
    /// Worker threads for loading and queries; 0 means one per core.
    pub threads: usize,
    /// Bytes that tables and running queries may hold; `None` means
    /// [`default_memory_limit`] (80% of physical memory).
    pub memory_limit: Option<usize>,
}

/// The default memory limit: 80% of physical memory (from `/proc/meminfo`),
/// or no limit where that cannot be read.
pub fn default_memory_limit() -> usize {
    physical_memory().map_or(usize::MAX, |m| m / 5 * 4)
}

/// Physical memory in bytes, from `/proc/meminfo` (Linux).
fn physical_memory() -> Option<usize> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: usize = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// Figures about one finished load.
#[derive(Debug, Clone)]
pub struct LoadStats {
    /// The table the rows went into.
    pub table: String,
    /// Rows loaded.
    pub rows: usize,
    /// Columns per row.
    pub columns: usize,
    /// Partitions created.
    pub partitions: usize,
    /// Bytes of the source read: CSV text after decompression, or the
    /// Parquet files (0 for Arrow batches).
    pub source_bytes: u64,
    /// What the table was loaded from.
    pub source_format: SourceFormat,
    /// Bytes the encoded table holds in memory.
    pub heap_bytes: usize,
    /// Wall time of the load.
    pub elapsed: Duration,
    /// What the user should know about the load, one sentence each, e.g.
    /// `column trip_id: typed as string because of 1 value of 10,000,000
    /// (line 10000001: "2500000x")`.
    pub notices: Vec<String>,
    /// Peak memory of the load in bytes, when measured.
    pub peak_bytes: Option<usize>,
}

/// Receives the rows of a statement as they are produced, in result order,
/// a batch at a time (see [`Database::query_to`]).
pub trait RowSink {
    /// Called once, before any rows, with the output column names and types.
    ///
    /// # Errors
    /// Whatever the sink fails with ends the statement with that error.
    fn start(&mut self, columns: &[String], types: &[DataType]) -> Result<()>;

    /// A batch of rows; each has as many values as there are columns.
    /// Returns `Ok(false)` to stop: no more rows are produced (a `| head`
    /// that closed its input).
    ///
    /// # Errors
    /// As [`RowSink::start`].
    fn rows(&mut self, rows: &[Vec<Value>]) -> Result<bool>;
}

/// What [`Database::query_to`] reports once the rows are delivered.
#[derive(Debug, Clone, PartialEq)]
pub struct QuerySummary {
    /// Rows delivered to the sink.
    pub rows: u64,
    /// Table rows the query read (after partition skipping).
    pub rows_scanned: usize,
    /// True when the sink asked to stop before the last row.
    pub stopped: bool,
    /// Wall time from SQL text to the last row delivered.
    pub elapsed: Duration,
}

/// The first rows of a result and how many there are in all
/// ([`Database::query_preview`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Preview {
    /// The result with at most the requested number of rows.
    pub result: QueryResult,
    /// Rows of the whole result.
    pub total_rows: u64,
}

/// The result of one statement, row-major.
#[derive(Debug, Clone, PartialEq)]
pub struct QueryResult {
    /// Output column names.
    pub columns: Vec<String>,
    /// Output column types.
    pub types: Vec<DataType>,
    /// The rows; each has `columns.len()` values.
    pub rows: Vec<Vec<Value>>,
    /// Table rows the query read (after partition skipping).
    pub rows_scanned: usize,
    /// Wall time from SQL text to result.
    pub elapsed: Duration,
}

/// One column as `.schema` shows it.
#[derive(Debug, Clone)]
pub struct ColumnInfo {
    /// Column name.
    pub name: String,
    /// Inferred type.
    pub dtype: DataType,
    /// Codecs used, each with the number of partitions that chose it, most
    /// common first (e.g. `[("dict u8", 150), ("const", 3)]`).
    pub encodings: Vec<(String, usize)>,
    /// Bytes in memory over all partitions, plus its hash index if built.
    pub heap_bytes: usize,
    /// Whether a hash index has been built on the column (by a lookup).
    pub indexed: bool,
    /// Why the load gave the column its type, when worth saying: a string
    /// column whose values are nearly all numbers or timestamps counts the
    /// misfits and shows the first (`typed as string because of 1 value of
    /// 10,000,000 (line 10000001: "2500000x")`).
    pub note: Option<String>,
}

/// A table as `.schema` and `.tables` show it.
#[derive(Debug, Clone)]
pub struct TableInfo {
    /// Table name.
    pub name: String,
    /// Row count.
    pub rows: usize,
    /// Partition count.
    pub partitions: usize,
    /// Bytes of the source the table was loaded from (see
    /// [`LoadStats::source_bytes`]).
    pub source_bytes: u64,
    /// What the table was loaded from.
    pub source_format: SourceFormat,
    /// Bytes in memory.
    pub heap_bytes: usize,
    /// The columns in table order.
    pub columns: Vec<ColumnInfo>,
}

/// A loaded table and the memory it holds against the budget.
struct Entry {
    table: Arc<Table>,
    _memory: Reservation,
}

/// A column's hash index state: `None` after its first point lookup (which
/// scans), the index once a second lookup has built it.
type IndexSlot = Option<Arc<HashIndex>>;

/// An in-memory database: named tables and a thread pool to query them with.
///
/// # Design
/// Every statement and load runs behind a boundary that turns a panic into
/// [`Error::Internal`], polls the database's [`CancelToken`] and counts
/// what it holds against the [`MemoryBudget`]; a failed or cancelled
/// statement leaves every table as it was.
pub struct Database {
    tables: BTreeMap<String, Entry>,
    pool: rayon::ThreadPool,
    /// Hash indexes by table name and column: `None` after a column's
    /// first point lookup (which scans), the index from its second on.
    indexes: Mutex<HashMap<(String, usize), IndexSlot>>,
    cancel: CancelToken,
    progress: Option<ProgressFn>,
    memory: Arc<MemoryBudget>,
    /// Files queried as tables (`FROM 'hits.csv'`), loaded on first use;
    /// behind a lock because queries take `&self` (see [`crate::files`]).
    files: FileTables,
    /// The executor's path thresholds.
    exec_options: ExecOptions,
}

/// Runs `f`, turning a panic into [`Error::Internal`]: the statement fails,
/// the session goes on. Panics are still bugs; tests fail on them.
fn guarded<T>(f: impl FnOnce() -> Result<T>) -> Result<T> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(payload) => {
            let message = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "panic".to_string());
            Err(Error::Internal(format!("{message} (please report)")))
        }
    }
}

impl Database {
    /// A database with no tables.
    ///
    /// # Errors
    /// [`Error::Internal`] if the thread pool cannot be created.
    pub fn new(options: DatabaseOptions) -> Result<Database> {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(options.threads)
            .build()
            .map_err(|e| Error::Internal(format!("cannot start thread pool: {e}")))?;
        Ok(Database {
            tables: BTreeMap::new(),
            pool,
            indexes: Mutex::new(HashMap::new()),
            cancel: CancelToken::new(),
            progress: None,
            memory: MemoryBudget::new(options.memory_limit.unwrap_or_else(default_memory_limit)),
            files: FileTables::default(),
            exec_options: ExecOptions::default(),
        })
    }

    /// The token that cancels the running statement or load. Clone it into
    /// a Ctrl-C handler; each statement clears it when it starts.
    pub fn cancel_token(&self) -> CancelToken {
        self.cancel.clone()
    }

    /// Sets (or clears) the receiver of progress reports for loads and
    /// queries.
    pub fn set_progress(&mut self, progress: Option<ProgressFn>) {
        self.progress = progress;
    }

    /// Sets the thresholds the executor chooses its paths by (see
    /// [`ExecOptions`]): they change which path a query takes, never
    /// its answer. Tests use [`ExecOptions::forcing_paths`] to send
    /// small tables down the paths of large ones.
    pub fn set_exec_options(&mut self, options: ExecOptions) {
        self.exec_options = options;
    }

    /// The executor's path thresholds.
    pub fn exec_options(&self) -> &ExecOptions {
        &self.exec_options
    }

    /// The memory budget tables and queries count against.
    pub fn memory(&self) -> &Arc<MemoryBudget> {
        &self.memory
    }

    /// Changes the memory limit (bytes). Tables already loaded stay.
    pub fn set_memory_limit(&self, bytes: usize) {
        self.memory.set_limit(bytes);
    }

    /// The options a load runs with: the caller's, plus this database's
    /// cancel token, progress receiver and memory budget where unset.
    fn load_options(&self, options: &LoadOptions) -> LoadOptions {
        let mut o = options.clone();
        o.cancel.get_or_insert_with(|| self.cancel.clone());
        if o.on_progress.is_none() {
            o.on_progress = self.progress.clone();
        }
        o.memory.get_or_insert_with(|| self.memory.clone());
        o
    }

    /// Refuses to load into an existing table's name unless replacing.
    fn check_new_name(&self, table: &str, options: &LoadOptions) -> Result<()> {
        match self.table(table) {
            Some(t) if !options.replace => Err(Error::plan(format!(
                "table \"{}\" already exists ({} rows); load it under another name, or replace it on purpose (--replace, or .load FILE {} REPLACE)",
                t.name,
                t.rows(),
                t.name
            ))),
            _ => Ok(()),
        }
    }

    /// Number of worker threads.
    pub fn threads(&self) -> usize {
        self.pool.current_num_threads()
    }

    /// Loads a CSV or gzipped CSV file into table `table`; a Parquet file
    /// (recognised by its magic bytes `PAR1`, whatever its name) is read as
    /// [`Database::load_parquet`] reads one. A table of that
    /// name is replaced only with [`LoadOptions::replace`], and only once
    /// the load has succeeded.
    ///
    /// # Errors
    /// [`Error::Plan`] if the name is taken and `replace` is not set; as
    /// [`Error::Io`] when the file cannot be read or inflated,
    /// [`Error::Csv`] naming the file, line and column of a bad record;
    /// [`Error::Cancelled`]; [`Error::MemoryLimit`].
    /// On error no table is added or changed.
    pub fn load_csv(
        &mut self,
        path: &Path,
        table: &str,
        options: &LoadOptions,
    ) -> Result<LoadStats> {
        self.check_new_name(table, options)?;
        let start = Instant::now();
        self.cancel.reset();
        let own_budget = options.memory.is_none();
        let options = self.load_options(options);
        let loaded = guarded(|| {
            self.pool
                .install(|| ingest::load_file(path, table, &options))
        })?;
        self.add_loaded(loaded, own_budget, start)
    }

    /// Loads CSV text already in memory (plain or gzipped); `origin` names it
    /// in error messages.
    ///
    /// # Errors
    /// As [`Database::load_csv`].
    pub fn load_csv_bytes(
        &mut self,
        bytes: Vec<u8>,
        origin: &Path,
        table: &str,
        options: &LoadOptions,
    ) -> Result<LoadStats> {
        self.check_new_name(table, options)?;
        let start = Instant::now();
        self.cancel.reset();
        let own_budget = options.memory.is_none();
        let options = self.load_options(options);
        let loaded = guarded(|| {
            self.pool
                .install(|| ingest::load_bytes(bytes, origin, table, &options))
        })?;
        self.add_loaded(loaded, own_budget, start)
    }

    /// Loads Parquet files into table `table`, unified by column name as
    /// DuckDB's `union_by_name` does (names matched case-insensitively,
    /// integer → float → string widening, a column missing from a file NULL
    /// there), with hive partition keys of the paths and optionally a
    /// `filename` column ([`ParquetOptions`]). Row groups are read and
    /// encoded in parallel on the database's threads; types map as for
    /// [`Database::load_arrow`]. ([`Database::load_csv`] also reads a
    /// single Parquet file, recognised by its magic bytes `PAR1`.)
    ///
    /// # Errors
    /// [`Error::Plan`] if the name is taken and `replace` is not set or no
    /// file is given; [`Error::Io`] naming the file (and row group) that
    /// cannot be read, is not Parquet, is truncated or corrupt, or changed
    /// while it was read; [`Error::NotSupported`] naming the file and
    /// column of a nested type (unless [`LoadOptions::skip_unsupported`]);
    /// [`Error::Cancelled`]; [`Error::MemoryLimit`]. On error no table is
    /// added or changed.
    pub fn load_parquet(
        &mut self,
        paths: &[std::path::PathBuf],
        table: &str,
        options: &LoadOptions,
        parquet: &ParquetOptions,
    ) -> Result<LoadStats> {
        self.check_new_name(table, options)?;
        let start = Instant::now();
        self.cancel.reset();
        let own_budget = options.memory.is_none();
        let options = self.load_options(options);
        let loaded = guarded(|| {
            self.pool
                .install(|| ingest::parquet::load_parquet(paths, table, &options, parquet))
        })?;
        self.add_loaded(loaded, own_budget, start)
    }

    /// Loads Arrow record batches into table `table`: a pyarrow table or
    /// dataset through the C stream interface, a Parquet reader, any
    /// [`arrow_array::RecordBatchReader`] (katydid re-exports
    /// [`arrow_array`] and [`arrow_schema`] at the version it uses). The
    /// batches are cut into partitions of [`LoadOptions::partition_rows`]
    /// rows and encoded with the same codecs, dictionaries and zone maps as
    /// a CSV load, in parallel on the database's threads; the reader itself
    /// is read by one thread at a time. Arrow types map to katydid's as
    /// listed in the module docs of `ingest::arrow` (README, "Arrow and
    /// Parquet types"): integers of any width, floats and decimals (exact
    /// to the last digit), dates and timestamps (µs), strings, dictionaries;
    /// booleans load as the strings `true`/`false`. `origin` names the input
    /// in error messages (e.g. `<arrow>` or the Python variable). Of the
    /// options, `partition_rows`, `replace`, `skip_unsupported`, `cancel`,
    /// `on_progress` (rows read, of an unknown total) and `memory` apply;
    /// the CSV ones are ignored. A table of that name is replaced only with
    /// [`LoadOptions::replace`], and only once the load has succeeded.
    ///
    /// # Errors
    /// [`Error::Plan`] if the name is taken and `replace` is not set;
    /// [`Error::NotSupported`] naming the first column of a type katydid
    /// cannot load (list, struct, map, …) unless `skip_unsupported`;
    /// [`Error::Io`] naming `origin` for the reader's own errors and values
    /// that cannot be converted (a UInt64 above `i64::MAX`);
    /// [`Error::Cancelled`]; [`Error::MemoryLimit`]. On error no table is
    /// added or changed.
    pub fn load_arrow<R: arrow_array::RecordBatchReader + Send>(
        &mut self,
        reader: R,
        origin: &Path,
        table: &str,
        options: &LoadOptions,
    ) -> Result<LoadStats> {
        self.check_new_name(table, options)?;
        let start = Instant::now();
        self.cancel.reset();
        let own_budget = options.memory.is_none();
        let options = self.load_options(options);
        let loaded = guarded(|| {
            self.pool
                .install(|| ingest::arrow::load_arrow(reader, origin, table, &options))
        })?;
        self.add_loaded(loaded, own_budget, start)
    }

    /// Adds a loaded table; its reservation is kept when it was made
    /// against this database's budget (`own_budget`), else the table is
    /// reserved here.
    fn add_loaded(
        &mut self,
        loaded: ingest::Loaded,
        own_budget: bool,
        start: Instant,
    ) -> Result<LoadStats> {
        let table = loaded.table;
        let stats = LoadStats {
            table: table.name.clone(),
            rows: table.rows(),
            columns: table.fields.len(),
            partitions: table.partitions.len(),
            source_bytes: table.source_bytes,
            source_format: table.source_format,
            heap_bytes: table.heap_bytes(),
            elapsed: start.elapsed(),
            notices: loaded.notices,
            peak_bytes: loaded.peak_bytes,
        };
        match loaded.memory {
            Some(memory) if own_budget => self.add_table_reserved(table, memory),
            _ => self.add_table(table)?,
        }
        Ok(stats)
    }

    /// Adds (or replaces) a table whose bytes `memory` already holds
    /// against this database's budget, as a load reserves them while it
    /// encodes ([`LoadOptions::memory`]); the bytes of a table it replaces
    /// are given back.
    pub fn add_table_reserved(&mut self, table: Table, memory: Reservation) {
        if let Ok(mut indexes) = self.indexes.lock() {
            indexes.retain(|(name, _), _| *name != table.name);
        }
        self.tables.insert(
            table.name.clone(),
            Entry {
                table: Arc::new(table),
                _memory: memory,
            },
        );
    }

    /// Adds (or replaces) a table built elsewhere; its bytes count against
    /// the memory budget (those of a table it replaces are given back
    /// first).
    ///
    /// # Errors
    /// [`Error::MemoryLimit`] when the table does not fit; nothing changes.
    pub fn add_table(&mut self, table: Table) -> Result<()> {
        let bytes = table.heap_bytes();
        let old = self.tables.remove(&table.name);
        let memory = match self.memory.reserve("load", bytes, || {
            format!("table \"{}\" ({} rows)", table.name, table.rows())
        }) {
            Ok(m) => m,
            Err(e) => {
                if let Some(old) = old {
                    self.tables.insert(table.name.clone(), old);
                }
                return Err(e);
            }
        };
        self.add_table_reserved(table, memory);
        Ok(())
    }

    /// Memory in use against the limit, for `.tables`: `1.2 GiB of 19.0 GiB`.
    pub fn memory_summary(&self) -> String {
        let limit = self.memory.limit();
        if limit == usize::MAX {
            format!("{} (no limit)", format_bytes(self.memory.used()))
        } else {
            format!(
                "{} of {}",
                format_bytes(self.memory.used()),
                format_bytes(limit)
            )
        }
    }

    /// Heap bytes of the hash index on column `column` of `table`, if one
    /// has been built.
    pub fn index_bytes(&self, table: &str, column: usize) -> Option<usize> {
        let indexes = self.indexes.lock().ok()?;
        indexes
            .get(&(table.to_string(), column))?
            .as_ref()
            .map(|i| i.heap_bytes())
    }

    /// The table named `name` (case-insensitive).
    pub fn table(&self, name: &str) -> Option<&Arc<Table>> {
        self.tables
            .get(name)
            .or_else(|| {
                self.tables
                    .iter()
                    .find(|(k, _)| k.eq_ignore_ascii_case(name))
                    .map(|(_, t)| t)
            })
            .map(|e| &e.table)
    }

    /// Names of all tables, sorted.
    pub fn table_names(&self) -> Vec<String> {
        self.tables.keys().cloned().collect()
    }

    /// Removes table `name` (case-insensitive, as [`Database::table`]
    /// finds it) with its hash indexes; its bytes are given back to the
    /// memory budget once no running query holds it.
    ///
    /// # Errors
    /// [`Error::Plan`] if there is no such table; nothing changes.
    pub fn drop_table(&mut self, name: &str) -> Result<()> {
        let key = self
            .table(name)
            .map(|t| t.name.clone())
            .ok_or_else(|| Error::plan(format!("unknown table \"{name}\"")))?;
        if let Ok(mut indexes) = self.indexes.lock() {
            indexes.retain(|(table, _), _| *table != key);
        }
        self.tables.remove(&key);
        Ok(())
    }

    /// The table name a load gives file `path` by default, as `FROM
    /// 'path'` names it: the file name without `.gz` and a CSV extension
    /// (or `.parquet`), every character other than `[A-Za-z0-9_]` made `_`,
    /// a `_` before a leading digit, `file` when nothing is left
    /// (`trips-2013.csv.gz` is `trips_2013`).
    pub fn table_name_for(path: &Path) -> String {
        files::table_name(path)
    }

    /// What `.schema` shows for table `name`.
    ///
    /// # Errors
    /// [`Error::Plan`] if there is no such table.
    pub fn table_info(&self, name: &str) -> Result<TableInfo> {
        let table = self
            .table(name)
            .ok_or_else(|| Error::plan(format!("unknown table \"{name}\"")))?;
        let columns = table
            .fields
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let encodings = introspect::encodings(table, i);
                ColumnInfo {
                    name: f.name.clone(),
                    dtype: f.dtype,
                    encodings,
                    heap_bytes: table.column_heap_bytes(i)
                        + self.index_bytes(&table.name, i).unwrap_or(0),
                    indexed: self.index_bytes(&table.name, i).is_some(),
                    note: f.note.clone(),
                }
            })
            .collect();
        Ok(TableInfo {
            name: table.name.clone(),
            rows: table.rows(),
            partitions: table.partitions.len(),
            source_bytes: table.source_bytes,
            source_format: table.source_format,
            heap_bytes: table.heap_bytes(),
            columns,
        })
    }

    /// Parses, plans and runs one SQL statement and returns its rows:
    /// - `SELECT …`, whose `FROM` may name a file (`FROM 'hits.csv'`, also
    ///   `.csv.gz` and `.tsv`) or `read_csv('path', delim => ';', header =>
    ///   false, nullstr => 'NA', columns => ['a', 'b'])`: the file is loaded
    ///   on first use and kept until its size or modification time changes;
    /// - `EXPLAIN SELECT …`: one text column `plan`, a row per line;
    /// - `DESCRIBE table` (per column: `column_name`, `column_type`,
    ///   `encoding`, `null_count`, `memory`) or `DESCRIBE SELECT …`
    ///   (`column_name`, `column_type` of the result, without running it);
    /// - `SHOW TABLES`: `name`, `rows`, `columns`, `memory` of every table,
    ///   then of every file table (named by its quoted path);
    /// - `COPY (SELECT …) TO 'out.parquet' (FORMAT parquet, COMPRESSION
    ///   zstd)`, `COPY table TO 'out.csv' (HEADER, DELIMITER ',')`: the rows
    ///   written to a file (see [`Database::copy_to`]); one column `count`,
    ///   the rows written;
    /// - `SUMMARIZE table`: per column `column_name`, `column_type`,
    ///   `encoding`, `min`, `max`, `approx_unique`, `avg`, `q25`, `q50`,
    ///   `q75`, `count`, `null_percentage`; quartiles are exact up to
    ///   100,000 rows and computed from a uniform sample of about that many
    ///   rows beyond.
    ///
    /// # Errors
    /// [`Error::Parse`] or [`Error::Plan`] with the byte offset of the
    /// problem (a missing file or a bad `read_csv` option points at the
    /// argument); [`Error::Overflow`], [`Error::DivisionByZero`] or
    /// [`Error::Execution`] for failures while running; a file's load
    /// errors.
    pub fn query(&self, sql: &str) -> Result<QueryResult> {
        self.cancel.reset();
        // One hand-off to the pool for the whole statement: the installs
        // inside (planning, running) then run in place. Each hand-off from
        // outside the pool wakes a worker and puts the caller to sleep,
        // which is most of a point lookup's time.
        guarded(|| self.pool.install(|| self.run_query(sql)))
    }

    /// Runs one statement as [`Database::query`] does and returns its
    /// result as Arrow record batches ([`ArrowResult`], layout in the docs
    /// of its module): the columns of a scan (a filter and projection
    /// without aggregate, ORDER BY, LIMIT or OFFSET) become Arrow arrays
    /// without a row in between; other results are gathered from their
    /// rows.
    ///
    /// # Errors
    /// As [`Database::query`].
    pub fn query_arrow(&self, sql: &str) -> Result<ArrowResult> {
        self.cancel.reset();
        // One hand-off to the pool for the whole statement, as in `query`.
        guarded(|| self.pool.install(|| self.run_query_arrow(sql)))
    }

    /// [`Database::query_arrow`] on the pool.
    fn run_query_arrow(&self, sql: &str) -> Result<ArrowResult> {
        let start = Instant::now();
        let plan = match self.prepare(sql)? {
            Prepared::Result(result) => return ArrowResult::from_rows(&result),
            Prepared::Select(plan) => plan,
        };
        let scanned = {
            let ctx = self.context(&plan);
            exec::execute_pieces(&plan, &ctx)?
        };
        let Some((pieces, rows, out)) = scanned else {
            // Not a scan: few rows, made as rows.
            let mut out = ArrowResult::from_rows(&self.execute_plan(plan, start)?)?;
            out.elapsed = start.elapsed();
            return Ok(out);
        };
        let types = exec::output_types(&plan);
        let (schema, batches) = arrow_out::from_pieces(&plan.names, &types, pieces, rows)?;
        Ok(ArrowResult {
            schema,
            batches,
            types,
            rows,
            rows_scanned: out.rows_scanned,
            elapsed: start.elapsed(),
        })
    }

    /// Runs one statement, which may change the tables: `CREATE [OR
    /// REPLACE] TABLE name AS query` (the query's rows encoded into
    /// partitions as a load encodes them; one column `count`, the rows) and
    /// `DROP TABLE [IF EXISTS] name` (no rows); any other statement as
    /// [`Database::query`] runs it. A statement that fails changes nothing.
    ///
    /// # Errors
    /// As [`Database::query`]; [`Error::Plan`] pointing at the name when
    /// CREATE names an existing table (without OR REPLACE) or DROP an
    /// unknown one (without IF EXISTS); [`Error::MemoryLimit`] when the new
    /// table does not fit.
    pub fn execute(&mut self, sql: &str) -> Result<QueryResult> {
        let start = Instant::now();
        let statement = match sql::parse(sql) {
            Ok(s @ (Statement::CreateTableAs { .. } | Statement::DropTable { .. })) => s,
            _ => return self.query(sql),
        };
        self.cancel.reset();
        match statement {
            Statement::CreateTableAs {
                name,
                query,
                replace,
            } => {
                if !replace && self.table(&name.name).is_some() {
                    return Err(Error::plan_at(
                        format!(
                            "table \"{}\" already exists (CREATE OR REPLACE TABLE replaces it)",
                            name.name
                        ),
                        name.span.start,
                    ));
                }
                let table = guarded(|| {
                    self.pool.install(|| {
                        let composer = compose::Composer::new(self, sql);
                        let rel = composer.run_query(&query, &compose::Scope::new(self))?;
                        Ok(compose::materialize::table_from_rows_compressed(
                            &name.name,
                            &rel.names,
                            &rel.types,
                            &rel.rows,
                            ingest::DEFAULT_PARTITION_ROWS,
                        ))
                    })
                })?;
                let rows = table.rows();
                if let Some(old) = self.table(&name.name).map(|t| t.name.clone())
                    && old != name.name
                {
                    // The same name in another case: one table, renamed.
                    self.drop_table(&old)?;
                }
                self.add_table(table)?;
                Ok(QueryResult {
                    columns: vec!["count".into()],
                    types: vec![DataType::Int],
                    rows: vec![vec![Value::Int(rows as i64)]],
                    rows_scanned: 0,
                    elapsed: start.elapsed(),
                })
            }
            Statement::DropTable {
                name,
                if_exists,
                file,
            } => {
                let dropped = if file {
                    // The table a `FROM 'path'` query cached.
                    let source = files::file_source(&TableRef::File {
                        path: name.name.clone(),
                        span: name.span,
                    });
                    source.is_ok_and(|s| self.files.remove(&s.path))
                } else if self.table(&name.name).is_some() {
                    self.drop_table(&name.name)?;
                    true
                } else {
                    false
                };
                if !dropped && !if_exists {
                    let message = if file {
                        format!(
                            "no table of the file '{}' is cached (SHOW TABLES lists them)",
                            name.name
                        )
                    } else {
                        format!("unknown table \"{}\"", name.name)
                    };
                    return Err(Error::plan_at(message, name.span.start));
                }
                Ok(QueryResult {
                    columns: Vec::new(),
                    types: Vec::new(),
                    rows: Vec::new(),
                    rows_scanned: 0,
                    elapsed: start.elapsed(),
                })
            }
            _ => self.query(sql),
        }
    }

    /// True when `sql` is a statement that changes the tables (`CREATE
    /// TABLE … AS`, `DROP TABLE`), which [`Database::execute`] runs.
    pub fn changes_tables(sql: &str) -> bool {
        matches!(
            sql::parse(sql),
            Ok(Statement::CreateTableAs { .. } | Statement::DropTable { .. })
        )
    }

    /// Runs one statement and hands its rows to `sink` in batches, in result
    /// order, as partitions finish (a scan without ORDER BY streams; a sort
    /// or an aggregate delivers once it is done), stopping early when the
    /// sink asks to.
    ///
    /// # Errors
    /// As [`Database::query`], plus the sink's own errors.
    pub fn query_to(&self, sql: &str, sink: &mut dyn RowSink) -> Result<QuerySummary> {
        self.cancel.reset();
        guarded(|| self.stream(sql, sink))
    }

    /// Runs one statement and writes its rows to the file `path` as CSV,
    /// JSON (one object per line) or Parquet (see [`CopyOptions`]; the
    /// format follows the extension unless given): what `COPY (query) TO
    /// 'path'` does. The file is written beside `path` and moved over it
    /// once complete, so on error `path` is left as it was. Returns the
    /// rows written.
    ///
    /// # Errors
    /// As [`Database::query`]; [`Error::Io`] naming `path` when it cannot
    /// be written.
    pub fn copy_to(&self, sql: &str, path: &Path, options: &CopyOptions) -> Result<u64> {
        self.cancel.reset();
        guarded(|| self.pool.install(|| self.copy_rows(sql, path, options)))
    }

    /// [`Database::copy_to`] without resetting the cancel token.
    fn copy_rows(&self, sql: &str, path: &Path, options: &CopyOptions) -> Result<u64> {
        let start = Instant::now();
        let mut sink = copy::FileSink::new(path, options);
        let prepared = self.prepare(sql)?;
        if sink.is_parquet()
            && let Prepared::Select(plan) = &prepared
        {
            // A scan goes to Parquet as Arrow batches of 16 partitions at
            // a time, without making rows (perf of COPY of a 2M-row table:
            // allocating and freeing the rows was over a third of it).
            let types = exec::output_types(plan);
            let ctx = self.context(plan);
            sink.start(&plan.names, &types)?;
            let scan = exec::execute_pieces_chunked(plan, &ctx, 16, &mut |pieces, rows| {
                let (_, batches) = arrow_out::from_pieces(&plan.names, &types, pieces, rows)?;
                batches.iter().try_for_each(|b| sink.write_batch(b))
            })?;
            if scan {
                return sink.finish();
            }
            sink = copy::FileSink::new(path, options);
        }
        self.stream_prepared(prepared, start, &mut sink)?;
        sink.finish()
    }

    /// [`Database::query_to`] inside its boundary.
    fn stream(&self, sql: &str, sink: &mut dyn RowSink) -> Result<QuerySummary> {
        let start = Instant::now();
        let prepared = self.prepare(sql)?;
        self.stream_prepared(prepared, start, sink)
    }

    /// [`Database::stream`] of a prepared statement.
    fn stream_prepared(
        &self,
        prepared: Prepared,
        start: Instant,
        sink: &mut dyn RowSink,
    ) -> Result<QuerySummary> {
        {
            let plan = match prepared {
                Prepared::Select(plan) => plan,
                Prepared::Result(result) => {
                    sink.start(&result.columns, &result.types)?;
                    let more = sink.rows(&result.rows)?;
                    return Ok(QuerySummary {
                        rows: result.rows.len() as u64,
                        rows_scanned: 0,
                        stopped: !more,
                        elapsed: start.elapsed(),
                    });
                }
            };
            sink.start(&plan.names, &exec::output_types(&plan))?;
            let ctx = self.context(&plan);
            let mut delivered = 0u64;
            let mut stopped = false;
            let mut sink_error: Option<Error> = None;
            // The query runs as a job of the pool while this thread hands
            // its batches to the sink (which stays on the caller's thread).
            let mut out = Err(Error::Internal(
                "query driver panicked (please report)".into(),
            ));
            self.pool.in_place_scope(|scope| {
                let (tx, rx) = std::sync::mpsc::sync_channel::<Vec<Vec<Value>>>(2);
                let (plan, ctx, out) = (&plan, &ctx, &mut out);
                scope.spawn(move |_| {
                    let tx = tx;
                    *out = exec::execute(plan, ctx, &mut |batch| Ok(tx.send(batch).is_ok()));
                });
                for batch in rx.iter() {
                    delivered += batch.len() as u64;
                    match sink.rows(&batch) {
                        Ok(true) => {}
                        Ok(false) => {
                            stopped = true;
                            break;
                        }
                        Err(e) => {
                            sink_error = Some(e);
                            break;
                        }
                    }
                }
                // Dropping the receiver makes the driver's next send fail,
                // which stops it; the scope then waits for it.
                drop(rx);
            });
            if let Some(e) = sink_error {
                return Err(e);
            }
            let out = out?;
            Ok(QuerySummary {
                rows: delivered,
                rows_scanned: out.rows_scanned,
                stopped,
                elapsed: start.elapsed(),
            })
        }
    }

    /// Runs one statement for display: the first `max_rows` rows and the
    /// number of rows in the whole result. For a query without aggregates
    /// the LIMIT is pushed down (only the rows shown are computed) and the
    /// total comes from a count over the same filter.
    ///
    /// # Errors
    /// As [`Database::query`].
    pub fn query_preview(&self, sql: &str, max_rows: usize) -> Result<Preview> {
        self.cancel.reset();
        // One hand-off to the pool for the whole statement, as in `query`.
        guarded(|| self.pool.install(|| self.run_preview(sql, max_rows)))
    }

    /// [`Database::query_preview`] on the pool.
    fn run_preview(&self, sql: &str, max_rows: usize) -> Result<Preview> {
        let start = Instant::now();
        let mut plan = match self.prepare(sql)? {
            Prepared::Select(plan) => plan,
            Prepared::Result(mut result) => {
                let total_rows = result.rows.len() as u64;
                result.rows.truncate(max_rows);
                return Ok(Preview { result, total_rows });
            }
        };
        if plan.aggregate.is_some() {
            // Only the rows shown are built; the merge counts the rest.
            let mut ctx = self.context(&plan);
            ctx.preview_rows = Some(max_rows);
            let (mut rows, out) = exec::execute_collect(&plan, &ctx)?;
            let total_rows = out.result_rows.unwrap_or(rows.len()) as u64;
            rows.truncate(max_rows);
            let result = QueryResult {
                types: exec::output_types(&plan),
                columns: plan.names,
                rows,
                rows_scanned: out.rows_scanned,
                elapsed: start.elapsed(),
            };
            return Ok(Preview { result, total_rows });
        }
        if plan.limit.is_some_and(|l| l < 0) {
            let mut result = self.execute_plan(plan, start)?;
            let total_rows = result.rows.len() as u64;
            result.rows.truncate(max_rows);
            return Ok(Preview { result, total_rows });
        }
        let cap = i64::try_from(max_rows).unwrap_or(i64::MAX);
        let full_limit = plan.limit;
        plan.limit = Some(full_limit.map_or(cap, |l| l.min(cap)));
        let offset = plan.offset;
        let count_plan = counting(&plan);
        let mut result = self.execute_plan(plan, start)?;
        let ctx = self.context(&count_plan);
        let (rows, _) = exec::execute_collect(&count_plan, &ctx)?;
        let matching = match rows.first().and_then(|r| r.first()) {
            Some(Value::Int(n)) => *n as u64,
            _ => 0,
        };
        let after_offset = matching.saturating_sub(offset);
        let total_rows = full_limit.map_or(after_offset, |l| after_offset.min(l as u64));
        result.elapsed = start.elapsed();
        Ok(Preview { result, total_rows })
    }

    /// The execution context of one query over `plan`'s table.
    fn context(&self, plan: &plan::QueryPlan) -> exec::Context<'_> {
        let mut ctx = exec::Context::new(
            plan.table.rows(),
            self.cancel.clone(),
            self.progress.clone(),
            self.memory.clone(),
            self,
        );
        ctx.options = self.exec_options;
        ctx
    }

    /// Parses and plans one statement; statements that are not queries over
    /// a table (EXPLAIN, DESCRIBE, SHOW TABLES, SUMMARIZE) are answered
    /// here. Planning runs on the pool, where a file the query names loads.
    fn prepare(&self, sql: &str) -> Result<Prepared> {
        let start = Instant::now();
        if let Some(statement) = copy::parse(sql) {
            let statement = statement?;
            let rows = self.copy_rows(&statement.query, &statement.path, &statement.options)?;
            return Ok(Prepared::Result(QueryResult {
                columns: vec!["count".into()],
                types: vec![DataType::Int],
                rows: vec![vec![Value::Int(rows as i64)]],
                rows_scanned: 0,
                elapsed: start.elapsed(),
            }));
        }
        let statement = sql::parse(sql)?;
        let mut result = match &statement {
            Statement::Select(select) if !compose::needs_composition(select) => {
                let catalog = Reading::new(self, select);
                let plan = self
                    .pool
                    .install(|| plan::plan_select(select, sql, &catalog))?;
                return Ok(Prepared::Select(plan));
            }
            Statement::Select(_) | Statement::Query(_) => {
                let query = match &statement {
                    Statement::Select(select) => sql::ast::Query::plain((**select).clone()),
                    Statement::Query(query) => (**query).clone(),
                    _ => unreachable!("matched above"),
                };
                let composer = compose::Composer::new(self, sql);
                let rel = self
                    .pool
                    .install(|| composer.run_query(&query, &compose::Scope::new(self)))?;
                QueryResult {
                    columns: rel.names,
                    types: rel.types,
                    rows: rel.rows,
                    rows_scanned: rel.rows_scanned,
                    elapsed: Duration::ZERO,
                }
            }
            Statement::Explain(query) | Statement::ExplainAnalyze(query)
                if query.as_select().is_none_or(compose::needs_composition) =>
            {
                let analyze = matches!(statement, Statement::ExplainAnalyze(_));
                let composer = if analyze {
                    compose::Composer::new(self, sql)
                } else {
                    compose::Composer::explaining(self, sql)
                };
                let rel = self
                    .pool
                    .install(|| composer.run_query(query, &compose::Scope::new(self)))?;
                let mut lines = vec![if analyze {
                    format!(
                        "composed query: {} result rows, {} table rows read",
                        rel.rows.len(),
                        rel.rows_scanned
                    )
                } else {
                    "composed query, compiled and not run: each pipeline's shape below; \
                     the steps above them ran on no rows (EXPLAIN ANALYZE runs the query)"
                        .to_string()
                }];
                lines.extend(composer.trace());
                QueryResult {
                    columns: vec!["plan".into()],
                    types: vec![DataType::Str],
                    rows: lines.into_iter().map(|l| vec![Value::str(&l)]).collect(),
                    rows_scanned: 0,
                    elapsed: Duration::ZERO,
                }
            }
            Statement::Explain(query) | Statement::ExplainAnalyze(query) => {
                let analyze = matches!(statement, Statement::ExplainAnalyze(_));
                let select = query
                    .as_select()
                    .ok_or_else(|| Error::Internal("EXPLAIN of a plain query".into()))?;
                let catalog = Reading::new(self, select);
                let mut text = self.pool.install(|| {
                    let plan = plan::plan_select(select, sql, &catalog)?;
                    if analyze {
                        let mut ctx = self.context(&plan);
                        exec::explain_analyze(&plan, &mut ctx)
                    } else {
                        exec::explain(&plan, &self.exec_options)
                    }
                })?;
                if let Some(line) = catalog.report() {
                    text = format!("{line}\n{text}");
                }
                QueryResult {
                    columns: vec!["plan".into()],
                    types: vec![DataType::Str],
                    rows: text.lines().map(|l| vec![Value::str(l)]).collect(),
                    rows_scanned: 0,
                    elapsed: Duration::ZERO,
                }
            }
            Statement::Describe(describe) => match describe {
                Describe::Table(from) => {
                    let table = self.resolve_table(from)?;
                    let file = !matches!(from, TableRef::Named(_));
                    introspect::describe_table(&table, &|column| {
                        if file {
                            self.files.index_bytes(&table, column)
                        } else {
                            self.index_bytes(&table.name, column)
                        }
                    })
                }
                Describe::Query(query) => match query.as_select() {
                    Some(select) if !compose::needs_composition(select) => {
                        let plan = self.pool.install(|| plan::plan_select(select, sql, self))?;
                        introspect::describe_query(&plan)
                    }
                    _ => {
                        let composer = compose::Composer::new(self, sql);
                        let rel = self
                            .pool
                            .install(|| composer.run_query(query, &compose::Scope::new(self)))?;
                        introspect::describe_columns(&rel.names, &rel.types)
                    }
                },
            },
            Statement::ShowTables => {
                let mut tables: Vec<(String, Arc<Table>)> = self
                    .tables
                    .iter()
                    .map(|(name, e)| (name.clone(), e.table.clone()))
                    .collect();
                for (path, table) in self.files.list() {
                    let quoted = format!("'{}'", path.display().to_string().replace('\'', "''"));
                    tables.push((quoted, table));
                }
                introspect::show_tables(&tables)
            }
            Statement::CreateTableAs { name, .. } | Statement::DropTable { name, .. } => {
                return Err(Error::plan_at(
                    "CREATE TABLE and DROP TABLE change the tables: run them with Database::execute",
                    name.span.start,
                ));
            }
            Statement::Summarize(from) => {
                let table = self.resolve_table(from)?;
                let run = |plan: &plan::QueryPlan| {
                    let ctx = self.context(plan);
                    let (rows, out) = exec::execute_collect(plan, &ctx)?;
                    Ok((rows, out.rows_scanned))
                };
                self.pool.install(|| introspect::summarize(&table, &run))?
            }
        };
        result.elapsed = start.elapsed();
        Ok(Prepared::Result(result))
    }

    /// Runs a planned query to its rows; called on the pool (`query`,
    /// `query_preview`).
    fn execute_plan(&self, plan: plan::QueryPlan, start: Instant) -> Result<QueryResult> {
        let ctx = self.context(&plan);
        let (rows, out) = exec::execute_collect(&plan, &ctx)?;
        Ok(QueryResult {
            types: exec::output_types(&plan),
            columns: plan.names,
            rows,
            rows_scanned: out.rows_scanned,
            elapsed: start.elapsed(),
        })
    }

    /// The table `from` names (a loaded table, or a file loaded on the pool
    /// if need be).
    fn resolve_table(&self, from: &TableRef) -> Result<Arc<Table>> {
        self.pool.install(|| plan::resolve_table(from, self))
    }

    /// The table of a file named in a query, loaded (on the current pool)
    /// unless cached and unchanged; see [`crate::files`].
    fn file_table(&self, from: &TableRef) -> Result<Arc<Table>> {
        self.file_table_columns(from, None, None).map(|(t, _)| t)
    }

    /// [`Database::file_table`] with at least the columns named in
    /// `needed` (lower case; `None`: all), and of a Parquet file only the
    /// row groups whose statistics do not rule out every row passing
    /// `filter` (a query's WHERE; `None`: all row groups). A Parquet
    /// file's other columns and row groups are not read until a query
    /// needs them (CSV files load whole). Also returns the row groups the
    /// table holds (`None`: all).
    fn file_table_columns(
        &self,
        from: &TableRef,
        needed: Option<&HashSet<String>>,
        filter: Option<&ingest::parquet::RowFilter>,
    ) -> Result<(Arc<Table>, Option<ingest::parquet::RowGroups>)> {
        if crate::series::is_series(from) {
            let rows = self.load_options(&LoadOptions::default()).partition_rows;
            return Ok((crate::series::series_table(from, &self.memory, rows)?, None));
        }
        let source = files::file_source(from)?;
        let options = || {
            let mut options = source.load_options(&self.load_options(&LoadOptions::default()));
            if let Some(p) = &source.parquet {
                options.skip_unsupported = p.skip_unsupported;
            }
            options
        };
        let groups = || match (&source.parquet, filter) {
            (Some(p), Some(filter)) if !filter.tests.is_empty() => {
                ingest::parquet::select_row_groups(&p.files, &options(), &p.options, filter)
                    .map(Some)
            }
            _ => Ok(None),
        };
        self.files
            .get_or_load(&source, &self.memory, needed, &groups, |wanted, read| {
                let options = options();
                match &source.parquet {
                    Some(p) => ingest::parquet::load_parquet_columns(
                        &p.files,
                        &source.table_name,
                        &options,
                        &p.options,
                        wanted,
                        read,
                    )
                    .map(|(l, columns)| (l.table, columns)),
                    None => ingest::load_csv(&source.path, &source.table_name, &options).map(|t| {
                        let columns = t.fields.iter().map(|f| f.name.clone()).collect();
                        (t, columns)
                    }),
                }
            })
    }

    fn run_query(&self, sql: &str) -> Result<QueryResult> {
        let start = Instant::now();
        match self.prepare(sql)? {
            Prepared::Result(r) => Ok(r),
            Prepared::Select(plan) => self.execute_plan(plan, start),
        }
    }
}

/// A statement after planning.
enum Prepared {
    /// A query to run.
    Select(plan::QueryPlan),
    /// A statement already answered.
    Result(QueryResult),
}

/// `SELECT count(*)` over the same table and filter as `plan` (which has no
/// aggregate).
fn counting(plan: &plan::QueryPlan) -> plan::QueryPlan {
    let count = plan::AggCall {
        func: plan::AggFunc::CountStar,
        arg: None,
        arg2: None,
        separator: None,
        dtype: DataType::Int,
    };
    plan::QueryPlan {
        table: plan.table.clone(),
        filter: plan.filter.clone(),
        aggregate: Some(plan::Aggregate {
            keys: Vec::new(),
            aggs: vec![count],
        }),
        outputs: vec![plan::Expr::AggResult {
            index: 0,
            dtype: DataType::Int,
        }],
        names: vec!["count".into()],
        visible: 1,
        having: None,
        order_by: Vec::new(),
        limit: None,
        offset: 0,
    }
}

impl exec::IndexProvider for Database {
    /// The first point lookup on a column scans; the second builds the
    /// index (about the cost of several scans), which later lookups reuse.
    fn hash_index(&self, table: &Arc<Table>, column: usize) -> Option<Arc<HashIndex>> {
        let key = (table.name.clone(), column);
        match self.indexes.lock().ok()?.entry(key.clone()) {
            std::collections::hash_map::Entry::Vacant(e) => {
                e.insert(None);
                return None;
            }
            std::collections::hash_map::Entry::Occupied(e) => {
                if let Some(index) = e.get() {
                    return Some(index.clone());
                }
            }
        }
        if let Some(index) = self.files.hash_index(table, column) {
            return Some(index);
        }
        // Built outside the lock; a concurrent builder's copy is simply dropped.
        let index = Arc::new(HashIndex::build(table, column));
        if let Ok(mut m) = self.indexes.lock() {
            m.insert(key, Some(index.clone()));
        }
        Some(index)
    }
}

impl Catalog for Database {
    fn table(&self, name: &str) -> Option<Arc<Table>> {
        Database::table(self, name).cloned()
    }

    fn table_names(&self) -> Vec<String> {
        Database::table_names(self)
    }

    fn file_table(&self, source: &TableRef) -> Result<Arc<Table>> {
        Database::file_table(self, source)
    }
}

/// The database as a query over one file sees it: the file's table with
/// the columns the query names and, of a Parquet file, the row groups its
/// WHERE may keep (a Parquet file's other columns and row groups are not
/// read for it).
struct Reading<'a> {
    database: &'a Database,
    /// The names the query reads (lower case); `None`: every column.
    columns: Option<HashSet<String>>,
    /// The tests of the query's WHERE that row-group statistics can check.
    filter: ingest::parquet::RowFilter,
    /// The row groups of the file read last, as EXPLAIN reports them.
    read: Mutex<Option<ingest::parquet::RowGroups>>,
}

impl<'a> Reading<'a> {
    fn new(database: &'a Database, select: &sql::ast::Select) -> Reading<'a> {
        Reading {
            database,
            columns: columns_read(select),
            filter: files::row_filter(select),
            read: Mutex::new(None),
        }
    }

    /// A line for EXPLAIN on the row groups of the file read, when some
    /// were skipped.
    fn report(&self) -> Option<String> {
        let read = self.read.lock().ok()?.clone()?;
        Some(format!(
            "parquet row groups: {} of {} loaded ({} skipped by their statistics)",
            read.kept(),
            read.total(),
            read.total() - read.kept()
        ))
    }
}

impl Catalog for Reading<'_> {
    fn table(&self, name: &str) -> Option<Arc<Table>> {
        Database::table(self.database, name).cloned()
    }

    fn table_names(&self) -> Vec<String> {
        Database::table_names(self.database)
    }

    fn file_table(&self, source: &TableRef) -> Result<Arc<Table>> {
        let (table, read) =
            self.database
                .file_table_columns(source, self.columns.as_ref(), Some(&self.filter))?;
        if let Ok(mut r) = self.read.lock() {
            *r = read;
        }
        Ok(table)
    }
}

/// The column names a query over one table reads (lower case, a superset:
/// every name it mentions), or `None` when it may read every column (`*`,
/// named windows, QUALIFY, or a FROM other than one file).
fn columns_read(select: &sql::ast::Select) -> Option<HashSet<String>> {
    let one_file = matches!(
        &select.from,
        Some(sql::ast::FromItem::Table {
            table: TableRef::File { .. } | TableRef::Function { .. },
            ..
        })
    );
    if !one_file || !select.windows.is_empty() || select.qualify.is_some() {
        return None;
    }
    compose::referenced_names(select).map(|names| names.into_iter().collect())
}

impl compose::Engine for Database {
    fn run_plan(&self, plan: &plan::QueryPlan) -> Result<(Vec<Vec<Value>>, usize)> {
        let ctx = self.context(plan);
        let (rows, out) = exec::execute_collect(plan, &ctx)?;
        Ok((rows, out.rows_scanned))
    }

    fn run_plan_columns(
        &self,
        plan: &plan::QueryPlan,
        join_filters: &[exec::join_filter::JoinFilter],
    ) -> Result<compose::Columns> {
        let ctx = self.context(plan);
        let (arrays, rows, out) = exec::execute_columns(plan, &ctx, join_filters)?;
        Ok(compose::Columns {
            names: plan.names.clone(),
            types: exec::output_types(plan),
            arrays,
            rows,
            rows_scanned: out.rows_scanned,
        })
    }

    fn exec_options(&self) -> ExecOptions {
        self.exec_options
    }
    fn check(&self) -> Result<()> {
        self.cancel.check()
    }

    fn memory(&self) -> Arc<MemoryBudget> {
        Arc::clone(&self.memory)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn db() -> Database {
        Database::new(DatabaseOptions {
            threads: 1,
            memory_limit: None,
        })
        .unwrap()
    }

    #[test]
    fn loading_into_a_taken_name_is_refused_unless_replacing() {
        let mut db = db();
        let opts = LoadOptions::default();
        db.load_csv_bytes(b"a\n1\n".to_vec(), Path::new("x.csv"), "x", &opts)
            .unwrap();
        let err = db
            .load_csv_bytes(b"a\n2\n3\n".to_vec(), Path::new("y.csv"), "x", &opts)
            .unwrap_err();
        assert!(err.to_string().contains("already exists"), "{err}");
        assert_eq!(db.table("x").unwrap().rows(), 1);
        let replace = LoadOptions {
            replace: true,
            ..LoadOptions::default()
        };
        db.load_csv_bytes(b"a\n2\n3\n".to_vec(), Path::new("y.csv"), "x", &replace)
            .unwrap();
        assert_eq!(db.table("x").unwrap().rows(), 2);
    }

    #[test]
    fn default_table_names_drop_file_extensions() {
        assert_eq!(
            Database::table_name_for(Path::new("/d/trips-2013.csv.gz")),
            "trips_2013"
        );
        assert_eq!(Database::table_name_for(Path::new("hits.PARQUET")), "hits");
        assert_eq!(Database::table_name_for(Path::new("2013.tsv")), "_2013");
    }

    #[test]
    fn dropping_a_table_gives_its_memory_back() {
        let mut db = db();
        let opts = LoadOptions::default();
        db.load_csv_bytes(b"a,b\n1,x\n2,y\n".to_vec(), Path::new("x.csv"), "x", &opts)
            .unwrap();
        assert!(db.memory().used() > 0);
        db.drop_table("X").unwrap();
        assert!(db.table("x").is_none());
        assert_eq!(db.memory().used(), 0);
        let err = db.drop_table("x").unwrap_err();
        assert!(matches!(err, Error::Plan { .. }), "{err}");
    }

    #[test]
    fn a_table_over_the_memory_limit_is_not_added() {
        let mut db = db();
        db.set_memory_limit(3);
        let err = db
            .load_csv_bytes(
                b"a,b\n1,x\n2,y\n".to_vec(),
                Path::new("x.csv"),
                "x",
                &LoadOptions::default(),
            )
            .unwrap_err();
        assert!(matches!(err, Error::MemoryLimit { .. }), "{err}");
        assert!(db.table("x").is_none());
        assert_eq!(db.memory().used(), 0);
    }

    #[test]
    fn a_panic_inside_a_statement_becomes_an_internal_error() {
        let err = guarded::<()>(|| panic!("boom")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "internal error (this is a bug): boom (please report)"
        );
    }
}
