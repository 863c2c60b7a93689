//! The public facade: load tables, run SQL, describe what is loaded.
//!
//! Everything the REPL and the command line do goes through [`Database`].

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::error::{Error, Result};
use crate::exec;
use crate::ingest::{self, LoadOptions};
use crate::plan::{self, Catalog};
use crate::sql::{self, ast::Statement};
use crate::store::Table;
use crate::types::{DataType, Value};

/// Settings of a [`Database`].
#[derive(Debug, Clone, Default)]
pub struct DatabaseOptions {
    /// Worker threads for loading and queries; 0 means one per core.
    pub threads: usize,
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
    /// Bytes of CSV text read (after decompression).
    pub source_bytes: u64,
    /// Bytes the encoded table holds in memory.
    pub heap_bytes: usize,
    /// Wall time of the load.
    pub elapsed: Duration,
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
    /// Bytes in memory over all partitions.
    pub heap_bytes: usize,
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
    /// Bytes of CSV text the table was loaded from.
    pub source_bytes: u64,
    /// Bytes in memory.
    pub heap_bytes: usize,
    /// The columns in table order.
    pub columns: Vec<ColumnInfo>,
}

/// An in-memory database: named tables and a thread pool to query them with.
pub struct Database {
    tables: BTreeMap<String, Arc<Table>>,
    pool: rayon::ThreadPool,
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
        })
    }

    /// Number of worker threads.
    pub fn threads(&self) -> usize {
        self.pool.current_num_threads()
    }

    /// Loads a CSV or gzipped CSV file into table `table` (replacing a table
    /// of that name only once the load has succeeded).
    ///
    /// # Errors
    /// As [`ingest::load_csv`]; on error no table is added or changed.
    pub fn load_csv(
        &mut self,
        path: &Path,
        table: &str,
        options: &LoadOptions,
    ) -> Result<LoadStats> {
        let start = Instant::now();
        let loaded = self
            .pool
            .install(|| ingest::load_csv(path, table, options))?;
        Ok(self.add_loaded(loaded, start))
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
        let start = Instant::now();
        let loaded = self
            .pool
            .install(|| ingest::load_csv_bytes(bytes, origin, table, options))?;
        Ok(self.add_loaded(loaded, start))
    }

    fn add_loaded(&mut self, table: Table, start: Instant) -> LoadStats {
        let stats = LoadStats {
            table: table.name.clone(),
            rows: table.rows(),
            columns: table.fields.len(),
            partitions: table.partitions.len(),
            source_bytes: table.source_bytes,
            heap_bytes: table.heap_bytes(),
            elapsed: start.elapsed(),
        };
        self.add_table(table);
        stats
    }

    /// Adds (or replaces) a table built elsewhere.
    pub fn add_table(&mut self, table: Table) {
        self.tables.insert(table.name.clone(), Arc::new(table));
    }

    /// The table named `name` (case-insensitive).
    pub fn table(&self, name: &str) -> Option<&Arc<Table>> {
        self.tables.get(name).or_else(|| {
            self.tables
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(name))
                .map(|(_, t)| t)
        })
    }

    /// Names of all tables, sorted.
    pub fn table_names(&self) -> Vec<String> {
        self.tables.keys().cloned().collect()
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
                let mut counts: BTreeMap<String, usize> = BTreeMap::new();
                for p in &table.partitions {
                    *counts.entry(p.columns[i].encoding_name()).or_default() += 1;
                }
                let mut encodings: Vec<(String, usize)> = counts.into_iter().collect();
                encodings.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
                ColumnInfo {
                    name: f.name.clone(),
                    dtype: f.dtype,
                    encodings,
                    heap_bytes: table.column_heap_bytes(i),
                }
            })
            .collect();
        Ok(TableInfo {
            name: table.name.clone(),
            rows: table.rows(),
            partitions: table.partitions.len(),
            source_bytes: table.source_bytes,
            heap_bytes: table.heap_bytes(),
            columns,
        })
    }

    /// Parses, plans and runs one SQL statement (`SELECT …` or
    /// `EXPLAIN SELECT …`; EXPLAIN returns one text column `plan`, a row per
    /// line).
    ///
    /// # Errors
    /// [`Error::Parse`] or [`Error::Plan`] with the byte offset of the
    /// problem; [`Error::Execution`] for failures while running (division by
    /// zero).
    pub fn query(&self, sql: &str) -> Result<QueryResult> {
        let start = Instant::now();
        let statement = sql::parse(sql)?;
        let (select, explain) = match &statement {
            Statement::Select(s) => (s, false),
            Statement::Explain(s) => (s, true),
        };
        let plan = plan::plan_select(select, sql, self)?;
        if explain {
            let text = self.pool.install(|| exec::explain(&plan))?;
            return Ok(QueryResult {
                columns: vec!["plan".into()],
                types: vec![DataType::Str],
                rows: text.lines().map(|l| vec![Value::str(l)]).collect(),
                rows_scanned: 0,
                elapsed: start.elapsed(),
            });
        }
        let out = self.pool.install(|| exec::execute(&plan, false))?;
        Ok(QueryResult {
            types: exec::output_types(&plan),
            columns: plan.names,
            rows: out.rows,
            rows_scanned: out.rows_scanned,
            elapsed: start.elapsed(),
        })
    }
}

impl Catalog for Database {
    fn table(&self, name: &str) -> Option<Arc<Table>> {
        Database::table(self, name).cloned()
    }

    fn table_names(&self) -> Vec<String> {
        Database::table_names(self)
    }
}
