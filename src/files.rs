//! Files queried as tables: `SELECT … FROM 'hits.csv'` and
//! `FROM read_csv('data.txt', delim => ';', header => false, …)`.
//!
//! # Design
//! A file is loaded on first use into a table named after it (its stem,
//! made an identifier: `hits.csv.gz` is `hits`) and kept in a cache of its
//! own, keyed by canonical path. File tables are a namespace apart from the
//! tables a user loads: `FROM hits` and `FROM 'hits.csv'` never mix, and
//! neither replaces the other. A later query of the same path reuses the
//! table unless the file's size or modification time changed, or it asks
//! for other CSV options; then the file is loaded again and replaces the
//! cached table (queries still running keep the old one).
//!
//! [`crate::Database::query`] takes `&self`, so the cache sits behind a
//! `RwLock`: a query of a cached file takes the read lock only to clone an
//! `Arc`; a load runs outside any lock and takes the write lock only to
//! insert, so two queries that load the same new file at once load it twice
//! and the last one's table stays. A file table's bytes count against the
//! database's memory budget like any table, and its hash indexes are cached
//! with it (dropped when it is reloaded). A replaced copy that a running
//! query still reads is no longer counted against the budget; it is freed
//! when that query ends.
//!
//! # Columns read on demand
//! A Parquet file's table may hold only some of its columns: the engine
//! asks for the columns a query names ([`FileTables::get_or_load`]'s
//! `needed`), and only those are read. A later query of the unchanged file
//! naming others reads just the missing ones and puts them beside the
//! cached ones: a load of the same files cuts the same partitions, which
//! `side_by_side` checks (else the needed columns are loaded afresh). The
//! wider table replaces the cached one, so each query sees one consistent
//! table. CSV files load whole.
//!
//! # Row groups read on demand
//! A Parquet file's table may also hold only some of its row groups: those
//! whose statistics do not rule out the query's WHERE ([`row_filter`],
//! `ingest::parquet::select_row_groups`). The entry records which
//! ([`RowGroups`]), so a pruned table is never taken for the whole file: a
//! later query that needs no other row group reuses it; one that needs
//! others (or all: no filter, `SELECT *` with no WHERE, DESCRIBE) loads
//! the union of both sets of row groups and columns afresh, which replaces
//! it. A table of every row group serves any query without reading the
//! footers again.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};
use std::time::SystemTime;

use crate::control::{MemoryBudget, Reservation};
use crate::error::{Error, Result};
use crate::ingest::LoadOptions;
use crate::ingest::parquet::{
    Compare, Constant, ParquetOptions, RowFilter, RowGroups, RowTest, is_parquet,
};
use crate::sql::ast::{
    BinaryOp, Expr, ExprKind, Literal, Select, TableArg, TableArgValue, TableRef, TypeName, UnaryOp,
};
use crate::store::{Column, HashIndex, Table};
use crate::types::TimestampFormat;

/// What a file was when it was loaded: a different size or modification
/// time means it changed.
#[derive(Debug, Clone, PartialEq)]
struct Stamp {
    bytes: u64,
    modified: Option<SystemTime>,
}

impl Stamp {
    fn of(metadata: &std::fs::Metadata) -> Stamp {
        Stamp {
            bytes: metadata.len(),
            modified: metadata.modified().ok(),
        }
    }
}

/// The CSV options that decide what a load produces, compared to decide
/// whether a cached table still answers a query.
#[derive(Debug, Clone, PartialEq)]
struct Dialect {
    header: bool,
    columns: Option<Vec<String>>,
    delimiter: Option<u8>,
    quote: u8,
    null_string: Option<String>,
    ignore_errors: bool,
    timestamp_formats: Vec<Arc<TimestampFormat>>,
}

impl Default for Dialect {
    /// A header, `"` quotes, the delimiter sniffed.
    fn default() -> Self {
        Dialect {
            header: true,
            columns: None,
            delimiter: None,
            quote: b'"',
            null_string: None,
            ignore_errors: false,
            timestamp_formats: Vec::new(),
        }
    }
}

impl Dialect {
    fn apply(&self, options: &mut LoadOptions) {
        options.header = self.header;
        options.columns = self.columns.clone();
        options.delimiter = self.delimiter;
        options.quote = self.quote;
        options.null_string = self.null_string.clone();
        options.ignore_errors = self.ignore_errors;
        options.timestamp_formats = self.timestamp_formats.clone();
    }
}

/// A file a query names, with the options to read it with.
#[derive(Debug, Clone)]
pub struct FileSource {
    /// The canonical path: the cache key (for several files, the pattern
    /// or list as written).
    pub path: PathBuf,
    /// The table name: the file's stem as an identifier.
    pub table_name: String,
    dialect: Dialect,
    stamp: Stamp,
    /// Parquet files to read instead of CSV, with their options.
    pub parquet: Option<ParquetSource>,
}

/// The Parquet files a query names (one, a glob's matches, or a list).
#[derive(Debug, Clone, PartialEq)]
pub struct ParquetSource {
    /// The files, in order (a glob's matches sorted).
    pub files: Vec<PathBuf>,
    /// How to read them.
    pub options: ParquetOptions,
    /// Leave out columns of types katydid cannot load.
    pub skip_unsupported: bool,
}

impl FileSource {
    /// The load options for this file: `base` (the database's cancel
    /// token, progress and budget) with the file's dialect.
    pub fn load_options(&self, base: &LoadOptions) -> LoadOptions {
        let mut options = base.clone();
        self.dialect.apply(&mut options);
        options
    }
}

/// One cached file table.
struct FileTable {
    /// The columns loaded so far, in the order of `columns`.
    table: Arc<Table>,
    /// The names of all the columns a whole load of the file has.
    columns: Vec<String>,
    dialect: Dialect,
    parquet: Option<ParquetSource>,
    stamp: Stamp,
    /// The Parquet row groups the table holds (`None`: all; CSV files are
    /// always whole).
    groups: Option<RowGroups>,
    /// Hash indexes built on the table's columns, by column.
    indexes: Mutex<HashMap<usize, Arc<HashIndex>>>,
    /// The table's bytes, held against the memory budget.
    _memory: Reservation,
}

/// The file tables of a database, by canonical path.
#[derive(Default)]
pub struct FileTables {
    entries: RwLock<HashMap<PathBuf, FileTable>>,
}

impl FileTables {
    /// The table for `source` with at least the columns named in `needed`
    /// (lower case; `None`: every column) and the row groups `groups`
    /// chooses: the cached one when the file and options are unchanged and
    /// it has them, else what `load` reads. Returns the table and the row
    /// groups it holds (`None`: all of them).
    ///
    /// `groups` gives the row groups a query may need (`None`: all); it is
    /// asked only when the cached table holds some row groups and not all
    /// (a cached table of all of them serves any query). `load` is given
    /// the columns to read (a name filter) and the row groups, and returns
    /// their table (columns in file order) and the names of all the file's
    /// columns; a loader that cannot choose columns or row groups (CSV)
    /// reads them all.
    ///
    /// When the cached table of the unchanged file holds the row groups
    /// but lacks some of the needed columns, only those are loaded, over
    /// the same row groups, and put beside the cached ones (the rows in the
    /// same order: a load cuts the same partitions). When it lacks row
    /// groups, the union of its row groups and columns with the needed
    /// ones is loaded afresh, so a file queried with different filters
    /// tends to its whole table. Either way the new table replaces the
    /// cached one (queries still running keep the old one); its bytes are
    /// reserved from `memory`.
    ///
    /// # Errors
    /// `groups`' and `load`'s errors; [`Error::MemoryLimit`] when the
    /// table does not fit (the cache then no longer holds the file).
    pub fn get_or_load(
        &self,
        source: &FileSource,
        memory: &Arc<MemoryBudget>,
        needed: Option<&HashSet<String>>,
        groups: &dyn Fn() -> Result<Option<RowGroups>>,
        load: impl Fn(&dyn Fn(&str) -> bool, Option<&RowGroups>) -> Result<(Table, Vec<String>)>,
    ) -> Result<(Arc<Table>, Option<RowGroups>)> {
        let is_needed = |name: &str| needed.is_none_or(|n| n.contains(&name.to_ascii_lowercase()));
        // The needed columns `table` lacks, of all the file's `columns`.
        let lacks = |table: &Table, columns: &[String]| -> Vec<String> {
            columns
                .iter()
                .filter(|c| is_needed(c))
                .filter(|c| !table.fields.iter().any(|f| &f.name == *c))
                .cloned()
                .collect()
        };
        // A whole set of row groups is no restriction.
        let groups = || -> Result<Option<RowGroups>> { Ok(groups()?.filter(|g| !g.is_all())) };
        // The cached table (not locked while files are read).
        let cached: Option<(Arc<Table>, Option<RowGroups>, Vec<String>)> =
            self.entries.read().ok().and_then(|entries| {
                let e = entries.get(&source.path)?;
                (e.stamp == source.stamp
                    && e.dialect == source.dialect
                    && e.parquet == source.parquet)
                    .then(|| (e.table.clone(), e.groups.clone(), e.columns.clone()))
            });
        // What to do: put missing columns beside a table of these row
        // groups, or load these columns of these row groups afresh.
        enum Plan {
            Beside(Arc<Table>, Vec<String>, Option<RowGroups>),
            Afresh(Vec<String>, Option<RowGroups>),
        }
        let plan = match cached {
            Some((table, held, columns)) => {
                let covered = match &held {
                    None => true,
                    Some(held) => groups()?.is_some_and(|want| held.covers(&want)),
                };
                if covered {
                    let missing = lacks(&table, &columns);
                    if missing.is_empty() {
                        return Ok((table, held));
                    }
                    Plan::Beside(table, missing, held)
                } else {
                    // The union of what the cached table holds and what
                    // the query needs.
                    let want = groups()?;
                    let read = match (&held, &want) {
                        (Some(h), Some(w)) => h.union(w).or(want),
                        _ => None,
                    };
                    let names = columns
                        .iter()
                        .filter(|c| is_needed(c) || table.fields.iter().any(|f| &f.name == *c))
                        .cloned()
                        .collect();
                    Plan::Afresh(names, read)
                }
            }
            None => Plan::Afresh(Vec::new(), groups()?),
        };
        // Give back the bytes of a stale (or narrower) copy before loading.
        if let Ok(mut entries) = self.entries.write() {
            entries.remove(&source.path);
        }
        let load_afresh = |also: &[String], read: Option<&RowGroups>| {
            load(
                &|name: &str| is_needed(name) || also.iter().any(|a| a == name),
                read,
            )
        };
        let (table, columns, held) = match plan {
            Plan::Beside(old, missing, held) => {
                let (more, columns) = load(
                    &|name: &str| missing.iter().any(|m| m == name),
                    held.as_ref(),
                )?;
                match side_by_side(&old, more, &columns) {
                    Some(table) => (table, columns, held),
                    // Not the partitions of the cached table: load the
                    // needed columns afresh.
                    None => {
                        let (table, columns) = load_afresh(&[], held.as_ref())?;
                        (table, columns, held)
                    }
                }
            }
            Plan::Afresh(also, read) => {
                let (table, columns) = load_afresh(&also, read.as_ref())?;
                (table, columns, read)
            }
        };
        let reservation = memory.reserve("load", table.heap_bytes(), || {
            format!("file {} ({} rows)", source.path.display(), table.rows())
        })?;
        let table = Arc::new(table);
        let entry = FileTable {
            table: table.clone(),
            columns,
            dialect: source.dialect.clone(),
            parquet: source.parquet.clone(),
            stamp: source.stamp.clone(),
            groups: held.clone(),
            indexes: Mutex::new(HashMap::new()),
            _memory: reservation,
        };
        if let Ok(mut entries) = self.entries.write() {
            entries.insert(source.path.clone(), entry);
        }
        Ok((table, held))
    }

    /// Forgets the table cached for `path` (a canonical path, as
    /// [`FileSource::path`]); its bytes go back to the memory budget once
    /// no running query holds it. Whether there was one.
    pub fn remove(&self, path: &Path) -> bool {
        self.entries
            .write()
            .is_ok_and(|mut entries| entries.remove(path).is_some())
    }

    /// The cached file tables as (canonical path, table), by path.
    pub fn list(&self) -> Vec<(PathBuf, Arc<Table>)> {
        let mut out: Vec<(PathBuf, Arc<Table>)> = match self.entries.read() {
            Ok(entries) => entries
                .iter()
                .map(|(p, e)| (p.clone(), e.table.clone()))
                .collect(),
            Err(_) => Vec::new(),
        };
        out.sort_by(|a, b| a.0.cmp(&b.0));
        out
    }

    /// Runs `f` on the cache entry whose table is `table` (the same `Arc`),
    /// if `table` is a file table.
    fn with_entry<T>(&self, table: &Arc<Table>, f: impl FnOnce(&FileTable) -> T) -> Option<T> {
        let entries = self.entries.read().ok()?;
        entries
            .values()
            .find(|e| Arc::ptr_eq(&e.table, table))
            .map(f)
    }

    /// The hash index on `column` of `table` when `table` is a file table
    /// (built on first use and cached with the table); `None` for any other
    /// table.
    pub fn hash_index(&self, table: &Arc<Table>, column: usize) -> Option<Arc<HashIndex>> {
        let cached = self.with_entry(table, |e| {
            e.indexes.lock().ok().and_then(|m| m.get(&column).cloned())
        })?;
        if let Some(index) = cached {
            return Some(index);
        }
        // Built outside the locks; a concurrent builder's copy is dropped.
        let index = Arc::new(HashIndex::build(table, column));
        self.with_entry(table, |e| {
            if let Ok(mut m) = e.indexes.lock() {
                m.entry(column).or_insert_with(|| index.clone());
            }
        });
        Some(index)
    }

    /// Heap bytes of the hash index on `column` of file table `table`, if
    /// one has been built.
    pub fn index_bytes(&self, table: &Arc<Table>, column: usize) -> Option<usize> {
        self.with_entry(table, |e| {
            e.indexes
                .lock()
                .ok()
                .and_then(|m| m.get(&column).map(|i| i.heap_bytes()))
        })
        .flatten()
    }
}

/// The columns of `old` and `more` side by side in the order of `columns`
/// (every column of each is named there, none in both), when both have
/// the same partitions (the same rows in each); `None` otherwise.
fn side_by_side(old: &Table, more: Table, columns: &[String]) -> Option<Table> {
    let position = |name: &str| columns.iter().position(|c| c == name);
    if old.partitions.len() != more.partitions.len()
        || old
            .partitions
            .iter()
            .zip(&more.partitions)
            .any(|(a, b)| a.rows != b.rows || a.first_row != b.first_row)
        || old
            .fields
            .iter()
            .chain(&more.fields)
            .any(|f| position(&f.name).is_none())
        || old
            .fields
            .iter()
            .any(|f| more.fields.iter().any(|g| g.name == f.name))
    {
        return None;
    }
    // Each field with its place in `columns`, and whether it is `old`'s.
    let mut order: Vec<(usize, bool, usize)> = old
        .fields
        .iter()
        .enumerate()
        .map(|(i, f)| (position(&f.name).unwrap_or(0), true, i))
        .chain(
            more.fields
                .iter()
                .enumerate()
                .map(|(i, f)| (position(&f.name).unwrap_or(0), false, i)),
        )
        .collect();
    order.sort_unstable();
    let fields = order
        .iter()
        .map(|&(_, from_old, i)| {
            if from_old {
                old.fields[i].clone()
            } else {
                more.fields[i].clone()
            }
        })
        .collect();
    let partitions = old
        .partitions
        .iter()
        .zip(more.partitions)
        .map(|(a, mut b)| {
            let mut taken: Vec<Option<Column>> = b.columns.drain(..).map(Some).collect();
            b.columns = order
                .iter()
                .map(|&(_, from_old, i)| {
                    if from_old {
                        a.columns[i].clone()
                    } else {
                        taken[i].take().unwrap_or_else(|| a.columns[0].clone())
                    }
                })
                .collect();
            b
        })
        .collect();
    Some(Table {
        name: old.name.clone(),
        fields,
        partitions,
        source_bytes: old.source_bytes,
        source_format: old.source_format,
    })
}

/// The tests of `select`'s WHERE that Parquet row-group statistics can
/// check: the conjuncts (of its top-level ANDs) that compare a column with
/// constants (`=`, `<`, `<=`, `>`, `>=` either way round, `BETWEEN`, `IN`,
/// `IS [NOT] NULL`). Every row the query keeps passes them all.
pub fn row_filter(select: &Select) -> RowFilter {
    let mut filter = RowFilter::default();
    if let Some(e) = &select.selection {
        conjuncts(e, &mut filter.tests);
    }
    filter
}

fn conjuncts(e: &Expr, out: &mut Vec<(String, RowTest)>) {
    let column = |e: &Expr| match &e.kind {
        ExprKind::Column(name) | ExprKind::QualifiedColumn { column: name, .. } => {
            Some(name.clone())
        }
        _ => None,
    };
    match &e.kind {
        ExprKind::Binary {
            op: BinaryOp::And,
            left,
            right,
        } => {
            conjuncts(left, out);
            conjuncts(right, out);
        }
        ExprKind::Binary { op, left, right } => {
            let compare = match op {
                BinaryOp::Eq => Compare::Eq,
                BinaryOp::Lt => Compare::Lt,
                BinaryOp::LtEq => Compare::LtEq,
                BinaryOp::Gt => Compare::Gt,
                BinaryOp::GtEq => Compare::GtEq,
                _ => return,
            };
            if let (Some(c), Some(k)) = (column(left), constant(right)) {
                out.push((c, RowTest::Compare(compare, k)));
            } else if let (Some(k), Some(c)) = (constant(left), column(right)) {
                let flipped = match compare {
                    Compare::Eq => Compare::Eq,
                    Compare::Lt => Compare::Gt,
                    Compare::LtEq => Compare::GtEq,
                    Compare::Gt => Compare::Lt,
                    Compare::GtEq => Compare::LtEq,
                };
                out.push((c, RowTest::Compare(flipped, k)));
            }
        }
        ExprKind::Between {
            expr,
            low,
            high,
            negated: false,
        } => {
            if let (Some(c), Some(lo), Some(hi)) = (column(expr), constant(low), constant(high)) {
                out.push((c.clone(), RowTest::Compare(Compare::GtEq, lo)));
                out.push((c, RowTest::Compare(Compare::LtEq, hi)));
            }
        }
        ExprKind::InList {
            expr,
            list,
            negated: false,
        } => {
            let values: Option<Vec<Constant>> = list.iter().map(constant).collect();
            if let (Some(c), Some(values)) = (column(expr), values) {
                out.push((c, RowTest::In(values)));
            }
        }
        ExprKind::IsNull { expr, negated } => {
            if let Some(c) = column(expr) {
                let test = if *negated {
                    RowTest::IsNotNull
                } else {
                    RowTest::IsNull
                };
                out.push((c, test));
            }
        }
        _ => {}
    }
}

/// A literal number, string, date or timestamp (`DATE '…'`, `CAST('…' AS
/// TIMESTAMP)`, read as the binder casts the text); NULL is none: it
/// compares with nothing.
fn constant(e: &Expr) -> Option<Constant> {
    match &e.kind {
        ExprKind::Cast {
            expr,
            to: to @ (TypeName::Date | TypeName::Timestamp),
            try_cast: _,
        } => {
            let ExprKind::Literal(Literal::String(s)) = &expr.kind else {
                return None;
            };
            let t = crate::types::parse_timestamp(s.trim())?;
            Some(match to {
                TypeName::Date => Constant::Date(crate::types::timestamp_to_date(t)),
                _ => Constant::Timestamp(t),
            })
        }
        ExprKind::Literal(Literal::Int(k)) => Some(Constant::Int(*k)),
        ExprKind::Literal(Literal::Float(f)) => Some(Constant::Float(*f)),
        ExprKind::Literal(Literal::String(s)) => Some(Constant::Str(s.clone())),
        ExprKind::Unary {
            op: UnaryOp::Neg,
            expr,
        } => match &expr.kind {
            ExprKind::Literal(Literal::Int(k)) => k.checked_neg().map(Constant::Int),
            ExprKind::Literal(Literal::Float(f)) => Some(Constant::Float(-f)),
            _ => None,
        },
        _ => None,
    }
}

/// Names `FROM 'path'` reads without `read_csv`: CSV and TSV text, plain
/// or gzipped.
const CSV_EXTENSIONS: [&str; 4] = ["csv", "tsv", "txt", "tab"];

/// The table name for a file: its name without `.gz` and the CSV extension,
/// with every character other than `[A-Za-z0-9_]` made `_` (and a leading
/// `_` before a digit); `file` when nothing is left.
pub fn table_name(path: &Path) -> String {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut stem = name.as_str();
    for ext in [".gz", ".gzip"] {
        if let Some(s) = strip_suffix_ignore_case(stem, ext) {
            stem = s;
            break;
        }
    }
    if let Some((s, ext)) = stem.rsplit_once('.')
        && (CSV_EXTENSIONS.iter().any(|e| e.eq_ignore_ascii_case(ext))
            || ext.eq_ignore_ascii_case("parquet"))
    {
        stem = s;
    }
    let mut out: String = stem
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    if out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, '_');
    }
    if out.is_empty() {
        out.push_str("file");
    }
    out
}

fn strip_suffix_ignore_case<'a>(s: &'a str, suffix: &str) -> Option<&'a str> {
    let cut = s.len().checked_sub(suffix.len())?;
    (s.is_char_boundary(cut) && s[cut..].eq_ignore_ascii_case(suffix)).then(|| &s[..cut])
}

/// True when `path` names a CSV-like file by its extension (`.csv`, `.tsv`,
/// `.txt`, `.tab`, each optionally `.gz`).
fn has_csv_extension(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    let base = lower
        .strip_suffix(".gz")
        .or_else(|| lower.strip_suffix(".gzip"))
        .unwrap_or(&lower);
    CSV_EXTENSIONS
        .iter()
        .any(|e| base.ends_with(&format!(".{e}")))
}

/// True for `.tsv` and `.tab` names (gzipped or not): tab-separated.
fn is_tab_separated(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    let base = lower.strip_suffix(".gz").unwrap_or(&lower);
    base.ends_with(".tsv") || base.ends_with(".tab")
}

/// The options `read_csv` takes, with DuckDB's names and aliases.
const OPTIONS: [&str; 15] = [
    "delim",
    "sep",
    "delimiter",
    "header",
    "nullstr",
    "null",
    "quote",
    "columns",
    "names",
    "column_names",
    "ignore_errors",
    "timestampformat",
    "timestamp_format",
    "dateformat",
    "date_format",
];

/// A string literal's text, or an error at the value.
fn string_value(arg: &TableArg, what: &str) -> Result<String> {
    let span = arg.value.span();
    match &arg.value {
        TableArgValue::Expr(e) => match &e.kind {
            ExprKind::Literal(Literal::String(s)) => Ok(s.clone()),
            _ => Err(Error::plan_at(format!("{what} needs a string"), span.start)),
        },
        TableArgValue::List { .. } => {
            Err(Error::plan_at(format!("{what} needs a string"), span.start))
        }
    }
}

/// One character of CSV syntax: one ASCII character, or `\t` for a tab.
fn byte_value(arg: &TableArg, what: &str) -> Result<u8> {
    let s = string_value(arg, what)?;
    match s.as_str() {
        "\\t" => Ok(b'\t'),
        _ if s.len() == 1 && s.is_ascii() && s != "\n" && s != "\r" => Ok(s.as_bytes()[0]),
        _ => Err(Error::plan_at(
            format!("{what} needs one character, such as ';' or '\\t', found {s:?}"),
            arg.value.span().start,
        )),
    }
}

/// What a `FROM 'path'` or `FROM read_csv(…)` asks to read, checked: the
/// file exists and is a file, the options are known and well typed. Paths
/// are relative to the current directory.
///
/// # Errors
/// [`Error::Plan`] pointing at the argument at fault: a missing or
/// unreadable file (at the path), an unknown function or option (at its
/// name, with the known ones), an option of the wrong type (at its value).
pub fn file_source(from: &TableRef) -> Result<FileSource> {
    let mut dialect = Dialect::default();
    let (path, path_at) = match from {
        TableRef::Named(name) => {
            return Err(Error::Internal(format!(
                "table \"{}\" is not a file",
                name.name
            )));
        }
        TableRef::File { path, span } => {
            if is_glob(path) || has_parquet_extension(path) || is_parquet(Path::new(path)) {
                let files = expand(std::slice::from_ref(path), span.start)?;
                return parquet_source(path, files, ParquetOptions::default(), false, span.start);
            }
            if !has_csv_extension(path) {
                return Err(Error::plan_at(
                    format!(
                        "cannot tell that {path:?} is a CSV or Parquet file (its name does not end in .csv, .tsv, .txt or .tab, optionally .gz, nor .parquet, and it does not start with PAR1); read it with read_csv('…')"
                    ),
                    span.start,
                ));
            }
            (path.clone(), span.start)
        }
        TableRef::Function { name, args, span } => {
            let lname = name.name.to_ascii_lowercase();
            if lname == "read_parquet" || lname == "parquet_scan" {
                return read_parquet(args, *span);
            }
            if lname != "read_csv" && lname != "read_csv_auto" {
                return Err(Error::plan_at(
                    format!(
                        "unknown table function \"{}\" (use read_csv or read_parquet)",
                        name.name
                    ),
                    name.span.start,
                ));
            }
            let Some(first) = args.first().filter(|a| a.name.is_none()) else {
                return Err(Error::plan_at(
                    "read_csv() needs a file path first, such as read_csv('data.csv')",
                    span.start,
                ));
            };
            let path = string_value(first, "the file path")?;
            let mut seen: Vec<&str> = Vec::new();
            for arg in &args[1..] {
                let Some(option) = &arg.name else {
                    return Err(Error::plan_at(
                        "read_csv() takes one path; give options by name, such as delim => ';'",
                        arg.value.span().start,
                    ));
                };
                let key = option.name.to_ascii_lowercase();
                let Some(known) = OPTIONS.iter().find(|o| **o == key) else {
                    return Err(Error::plan_at(
                        format!(
                            "unknown read_csv option \"{}\" (use delim, header, nullstr, quote, columns, ignore_errors, timestampformat or dateformat)",
                            option.name
                        ),
                        option.span.start,
                    ));
                };
                let canonical = match *known {
                    "sep" | "delimiter" => "delim",
                    "null" => "nullstr",
                    "names" | "column_names" => "columns",
                    "timestamp_format" => "timestampformat",
                    "date_format" => "dateformat",
                    k => k,
                };
                if seen.contains(&canonical) {
                    return Err(Error::plan_at(
                        format!("read_csv option \"{}\" is given twice", option.name),
                        option.span.start,
                    ));
                }
                seen.push(canonical);
                let at = arg.value.span().start;
                let what = option.name.as_str();
                match canonical {
                    "delim" => dialect.delimiter = Some(byte_value(arg, what)?),
                    "quote" => dialect.quote = byte_value(arg, what)?,
                    "nullstr" => dialect.null_string = Some(string_value(arg, what)?),
                    "timestampformat" | "dateformat" => {
                        let text = string_value(arg, what)?;
                        let format =
                            TimestampFormat::new(&text).map_err(|m| Error::plan_at(m, at))?;
                        // The timestamp layout is tried before the date's.
                        if canonical == "timestampformat" {
                            dialect.timestamp_formats.insert(0, Arc::new(format));
                        } else {
                            dialect.timestamp_formats.push(Arc::new(format));
                        }
                    }
                    "header" | "ignore_errors" => {
                        let flag = match &arg.value {
                            TableArgValue::Expr(e) => match e.kind {
                                ExprKind::Literal(Literal::Bool(b)) => b,
                                _ => {
                                    return Err(Error::plan_at(
                                        format!("{what} needs true or false"),
                                        at,
                                    ));
                                }
                            },
                            TableArgValue::List { .. } => {
                                return Err(Error::plan_at(
                                    format!("{what} needs true or false"),
                                    at,
                                ));
                            }
                        };
                        if canonical == "header" {
                            dialect.header = flag;
                        } else {
                            dialect.ignore_errors = flag;
                        }
                    }
                    _ => {
                        let TableArgValue::List { items, .. } = &arg.value else {
                            return Err(Error::plan_at(
                                format!("{what} needs a list of names, such as ['a', 'b']"),
                                at,
                            ));
                        };
                        let mut names = Vec::with_capacity(items.len());
                        for item in items {
                            match &item.kind {
                                ExprKind::Literal(Literal::String(s)) => names.push(s.clone()),
                                _ => {
                                    return Err(Error::plan_at(
                                        "a column name must be a string, such as 'a'",
                                        item.span.start,
                                    ));
                                }
                            }
                        }
                        if names.is_empty() {
                            return Err(Error::plan_at(
                                format!("{what} needs at least one name"),
                                at,
                            ));
                        }
                        dialect.columns = Some(names);
                    }
                }
            }
            (path, first.value.span().start)
        }
    };
    if dialect.delimiter.is_none() && is_tab_separated(&path) {
        dialect.delimiter = Some(b'\t');
    }
    let cannot = |why: String| Error::plan_at(format!("cannot read {path:?}: {why}"), path_at);
    let canonical = std::fs::canonicalize(&path).map_err(|e| cannot(e.to_string()))?;
    let metadata = std::fs::metadata(&canonical).map_err(|e| cannot(e.to_string()))?;
    if !metadata.is_file() {
        return Err(cannot("not a file".into()));
    }
    Ok(FileSource {
        table_name: table_name(&canonical),
        stamp: Stamp::of(&metadata),
        path: canonical,
        dialect,
        parquet: None,
    })
}

/// True when `path` has a glob wildcard (`*`, `?`, `[`).
fn is_glob(path: &str) -> bool {
    path.contains(['*', '?', '['])
}

/// True for names ending in `.parquet` (any case).
fn has_parquet_extension(path: &str) -> bool {
    path.to_ascii_lowercase().ends_with(".parquet")
}

/// The files `patterns` name: each a path or a glob (its matches sorted),
/// in the order given.
///
/// # Errors
/// [`Error::Plan`] at `at` for a bad pattern, a glob that matches no file,
/// or a path that is not a readable file.
fn expand(patterns: &[String], at: usize) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for pattern in patterns {
        if !is_glob(pattern) {
            let metadata = std::fs::metadata(pattern)
                .map_err(|e| Error::plan_at(format!("cannot read {pattern:?}: {e}"), at))?;
            if !metadata.is_file() {
                return Err(Error::plan_at(
                    format!("cannot read {pattern:?}: not a file"),
                    at,
                ));
            }
            files.push(PathBuf::from(pattern));
            continue;
        }
        let paths = glob::glob(pattern)
            .map_err(|e| Error::plan_at(format!("bad file pattern {pattern:?}: {e}"), at))?;
        let mut matched: Vec<PathBuf> = paths
            .filter_map(|p| p.ok())
            .filter(|p| p.is_file())
            .collect();
        if matched.is_empty() {
            return Err(Error::plan_at(format!("no file matches {pattern:?}"), at));
        }
        matched.sort();
        files.append(&mut matched);
    }
    Ok(files)
}

/// The source of Parquet `files` (named `key` as written).
fn parquet_source(
    key: &str,
    files: Vec<PathBuf>,
    options: ParquetOptions,
    skip_unsupported: bool,
    at: usize,
) -> Result<FileSource> {
    let mut bytes = 0u64;
    let mut modified: Option<SystemTime> = None;
    for f in &files {
        let m = std::fs::metadata(f)
            .map_err(|e| Error::plan_at(format!("cannot read {:?}: {e}", f.display()), at))?;
        bytes += m.len();
        modified = modified.max(m.modified().ok());
    }
    let single = files.len() == 1 && !is_glob(key);
    let path = if single {
        std::fs::canonicalize(&files[0])
            .map_err(|e| Error::plan_at(format!("cannot read {key:?}: {e}"), at))?
    } else {
        PathBuf::from(key)
    };
    let name_from = if single {
        path.clone()
    } else {
        files[0].clone()
    };
    Ok(FileSource {
        table_name: table_name(&name_from),
        stamp: Stamp {
            // The number of files counts: a new file of an old date.
            bytes: bytes ^ ((files.len() as u64) << 48),
            modified,
        },
        path,
        dialect: Dialect::default(),
        parquet: Some(ParquetSource {
            files,
            options,
            skip_unsupported,
        }),
    })
}

/// `read_parquet('file' | 'glob' | ['a', 'b'], filename => true,
/// hive_partitioning => false, union_by_name => true, skip_unsupported =>
/// true)`.
fn read_parquet(args: &[TableArg], span: crate::sql::ast::Span) -> Result<FileSource> {
    let Some(first) = args.first().filter(|a| a.name.is_none()) else {
        return Err(Error::plan_at(
            "read_parquet() needs a file path, glob or list of paths first, such as read_parquet('data/*.parquet')",
            span.start,
        ));
    };
    let at = first.value.span().start;
    let patterns: Vec<String> = match &first.value {
        TableArgValue::List { items, .. } => {
            let mut out = Vec::with_capacity(items.len());
            for item in items {
                match &item.kind {
                    ExprKind::Literal(Literal::String(s)) => out.push(s.clone()),
                    _ => {
                        return Err(Error::plan_at(
                            "a file path must be a string, such as 'a.parquet'",
                            item.span.start,
                        ));
                    }
                }
            }
            if out.is_empty() {
                return Err(Error::plan_at("read_parquet() needs at least one file", at));
            }
            out
        }
        TableArgValue::Expr(_) => vec![string_value(first, "the file path")?],
    };
    let mut options = ParquetOptions::default();
    let mut skip = false;
    for arg in &args[1..] {
        let Some(option) = &arg.name else {
            return Err(Error::plan_at(
                "read_parquet() takes one path or list; give options by name, such as filename => true",
                arg.value.span().start,
            ));
        };
        let flag = match &arg.value {
            TableArgValue::Expr(e) => match e.kind {
                ExprKind::Literal(Literal::Bool(b)) => b,
                _ => {
                    return Err(Error::plan_at(
                        format!("{} needs true or false", option.name),
                        arg.value.span().start,
                    ));
                }
            },
            TableArgValue::List { span, .. } => {
                return Err(Error::plan_at(
                    format!("{} needs true or false", option.name),
                    span.start,
                ));
            }
        };
        match option.name.to_ascii_lowercase().as_str() {
            "filename" => options.filename = flag,
            "hive_partitioning" => options.hive_partitioning = Some(flag),
            "union_by_name" => {}
            "skip_unsupported" => skip = flag,
            _ => {
                return Err(Error::plan_at(
                    format!(
                        "unknown read_parquet option \"{}\" (use filename, hive_partitioning, union_by_name or skip_unsupported)",
                        option.name
                    ),
                    option.span.start,
                ));
            }
        }
    }
    let files = expand(&patterns, at)?;
    parquet_source(&patterns.join(", "), files, options, skip, at)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::ast::Statement;
    use crate::store::{Column, Field, Partition};
    use crate::types::DataType;

    /// The FROM of `SELECT * FROM {from}`.
    fn from(text: &str) -> TableRef {
        match crate::sql::parse(&format!("SELECT * FROM {text}")) {
            Ok(Statement::Select(s)) => match s.from {
                Some(crate::sql::ast::FromItem::Table { table, .. }) => table,
                other => panic!("{text}: {other:?}"),
            },
            other => panic!("{text}: {other:?}"),
        }
    }

    fn table(values: &[i64]) -> Table {
        Table {
            name: "t".into(),
            fields: vec![Field {
                name: "x".into(),
                dtype: DataType::Int,
                note: None,
            }],
            partitions: vec![Partition {
                rows: values.len(),
                first_row: 0,
                columns: vec![Column::encode_ints(DataType::Int, values, None)],
            }],
            source_bytes: 0,
            source_format: Default::default(),
        }
    }

    fn source(path: &str, bytes: u64) -> FileSource {
        FileSource {
            path: PathBuf::from(path),
            table_name: "t".into(),
            dialect: Dialect::default(),
            stamp: Stamp {
                bytes,
                modified: None,
            },
            parquet: None,
        }
    }

    #[test]
    fn read_csv_options_become_load_options() {
        let dir = std::env::temp_dir().join(format!("katydid-files-unit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("x.data");
        std::fs::write(&path, "a;b\n").unwrap();
        let quoted = path.display().to_string().replace('\'', "''");
        let src = file_source(&from(&format!(
            "read_csv('{quoted}', delim => ';', header = false, nullstr => 'NA', quote => '''', names => ['p', 'q'])"
        )))
        .unwrap();
        let options = src.load_options(&LoadOptions {
            partition_rows: 7,
            ..LoadOptions::default()
        });
        assert_eq!(options.delimiter, Some(b';'));
        assert!(!options.header);
        assert_eq!(options.null_string.as_deref(), Some("NA"));
        assert_eq!(options.quote, b'\'');
        assert_eq!(
            options.columns,
            Some(vec!["p".to_string(), "q".to_string()])
        );
        assert_eq!(options.partition_rows, 7, "the base options stay");
        assert_eq!(src.table_name, "x_data");
        assert_eq!(src.path, std::fs::canonicalize(&path).unwrap());
        let tab = file_source(&from(&format!("read_csv('{quoted}', sep => '\\t')"))).unwrap();
        assert_eq!(tab.dialect.delimiter, Some(b'\t'));
        let tsv = dir.join("y.tsv");
        std::fs::write(&tsv, "a\tb\n").unwrap();
        let src = file_source(&from(&format!("'{}'", tsv.display()))).unwrap();
        assert_eq!(src.dialect.delimiter, Some(b'\t'), ".tsv means tab");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A loader's answer: `t` and its columns' names, all of them.
    fn whole(t: Table) -> (Table, Vec<String>) {
        let columns = t.fields.iter().map(|f| f.name.clone()).collect();
        (t, columns)
    }

    #[test]
    fn the_cache_reuses_a_table_until_its_file_or_options_change() {
        let files = FileTables::default();
        let memory = MemoryBudget::new(usize::MAX);
        let loads = std::cell::Cell::new(0);
        let get = |src: &FileSource, values: &[i64]| {
            files
                .get_or_load(src, &memory, None, &|| Ok(None), |_, _| {
                    loads.set(loads.get() + 1);
                    Ok(whole(table(values)))
                })
                .unwrap()
                .0
        };
        let a = get(&source("/a.csv", 10), &[1, 2, 3]);
        let again = get(&source("/a.csv", 10), &[9]);
        assert!(Arc::ptr_eq(&a, &again));
        assert_eq!(loads.get(), 1);
        assert_eq!(memory.used(), a.heap_bytes());
        // The file grew: loaded again, and only the new copy is held.
        let b = get(&source("/a.csv", 11), &[4, 5]);
        assert_eq!((loads.get(), b.rows()), (2, 2));
        assert_eq!(memory.used(), b.heap_bytes());
        // Other options: loaded again.
        let mut other = source("/a.csv", 11);
        other.dialect.header = false;
        get(&other, &[6]);
        assert_eq!(loads.get(), 3);
        // Another file is another entry.
        get(&source("/b.csv", 1), &[7]);
        let listed: Vec<PathBuf> = files.list().into_iter().map(|(p, _)| p).collect();
        assert_eq!(
            listed,
            vec![PathBuf::from("/a.csv"), PathBuf::from("/b.csv")]
        );
        // A table over the limit is not kept.
        memory.set_limit(memory.used());
        let err = files
            .get_or_load(&source("/c.csv", 1), &memory, None, &|| Ok(None), |_, _| {
                Ok(whole(table(&[1; 1000])))
            })
            .unwrap_err();
        assert!(matches!(err, Error::MemoryLimit { .. }), "{err}");
        assert_eq!(files.list().len(), 2);
    }

    /// A table of some row groups serves only queries that need no
    /// others; a query that needs others loads the union, and a query of
    /// the whole file loads it whole, after which row groups are no longer
    /// asked for.
    #[test]
    fn a_table_of_some_row_groups_serves_only_queries_within_them() {
        let files = FileTables::default();
        let memory = MemoryBudget::new(usize::MAX);
        let loads: std::cell::RefCell<Vec<Option<Vec<bool>>>> = Default::default();
        let get = |want: Option<Vec<bool>>| {
            let groups = || Ok(want.clone().map(|w| RowGroups::of(vec![w])));
            files
                .get_or_load(
                    &source("/a.parquet", 10),
                    &memory,
                    None,
                    &groups,
                    |_, read| {
                        let read = read.map(|r| r.read[0].clone());
                        let rows: Vec<i64> = match &read {
                            Some(r) => (0..r.len() as i64).filter(|&g| r[g as usize]).collect(),
                            None => (0..4).collect(),
                        };
                        loads.borrow_mut().push(read);
                        Ok(whole(table(&rows)))
                    },
                )
                .unwrap()
        };
        let (a, held) = get(Some(vec![true, false, false, true]));
        assert_eq!(a.rows(), 2);
        assert_eq!(held.unwrap().kept(), 2);
        // Within: the cached table.
        let (b, _) = get(Some(vec![true, false, false, false]));
        assert!(Arc::ptr_eq(&a, &b));
        assert_eq!(loads.borrow().len(), 1);
        // Beyond: the union.
        let (c, held) = get(Some(vec![false, true, false, false]));
        assert_eq!(c.rows(), 3);
        assert_eq!(held.unwrap().read[0], [true, true, false, true]);
        assert_eq!(loads.borrow()[1], Some(vec![true, true, false, true]));
        // Every row group chosen: the whole file.
        let (d, held) = get(Some(vec![true; 4]));
        assert_eq!((d.rows(), held), (4, None));
        assert_eq!(loads.borrow()[2], None);
        // A whole table serves any query without reading footers.
        let (e, _) = files
            .get_or_load(
                &source("/a.parquet", 10),
                &memory,
                None,
                &|| panic!("the whole file is cached"),
                |_, _| panic!("the whole file is cached"),
            )
            .unwrap();
        assert!(Arc::ptr_eq(&d, &e));
        assert_eq!(memory.used(), e.heap_bytes());
    }

    #[test]
    fn file_tables_keep_their_own_hash_indexes() {
        let files = FileTables::default();
        let memory = MemoryBudget::new(usize::MAX);
        let t = files
            .get_or_load(&source("/a.csv", 1), &memory, None, &|| Ok(None), |_, _| {
                Ok(whole(table(&[5, 6, 5])))
            })
            .unwrap()
            .0;
        assert_eq!(files.index_bytes(&t, 0), None);
        let index = files.hash_index(&t, 0).expect("a file table");
        assert!(Arc::ptr_eq(&index, &files.hash_index(&t, 0).unwrap()));
        assert_eq!(files.index_bytes(&t, 0), Some(index.heap_bytes()));
        // A table of the same name that is not a file table has none here.
        let user = Arc::new(table(&[5, 6, 5]));
        assert!(files.hash_index(&user, 0).is_none());
        assert_eq!(files.index_bytes(&user, 0), None);
    }

    #[test]
    fn table_names_are_sanitized_stems() {
        let cases = [
            ("data/hits.csv", "hits"),
            ("hits.csv.gz", "hits"),
            ("HITS.CSV.GZ", "HITS"),
            ("x/my data-2.tsv", "my_data_2"),
            ("2013 trips.txt", "_2013_trips"),
            ("weird.name.csv", "weird_name"),
            ("noext", "noext"),
            ("archive.json.gz", "archive_json"),
            (".csv", "file"),
            ("日本.csv", "__"),
        ];
        for (path, name) in cases {
            assert_eq!(table_name(Path::new(path)), name, "{path}");
        }
    }

    #[test]
    fn csv_names_are_recognized_by_extension() {
        for (path, csv, tab) in [
            ("a.csv", true, false),
            ("a.CSV.gz", true, false),
            ("a.tsv", true, true),
            ("a.tab.gz", true, true),
            ("a.txt", true, false),
            ("a.parquet", false, false),
            ("a.csv.zst", false, false),
            ("csv", false, false),
        ] {
            assert_eq!(has_csv_extension(path), csv, "{path}");
            assert_eq!(is_tab_separated(path), tab, "{path}");
        }
    }
}
