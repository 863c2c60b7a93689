//! SQL behaviour tests: every `tests/slt/**/*.slt` file run by the
//! `sqllogictest` crate's runner against katydid's public [`Database`] API.
//!
//! # How a file runs
//! Each file runs once per [`CONFIGURATIONS`] entry (one thread and one
//! partition; two threads and partitions of 2 rows; two threads and
//! partitions of 1 row), each time on a fresh [`Database`], so an answer that
//! depends on how a table is cut fails. A record's SQL goes to
//! [`Database::execute`] (so `CREATE TABLE … AS` and `DROP TABLE` change the
//! tables, anything else runs as [`Database::query`]). A result with columns
//! is a query result; one without (DROP TABLE) completes a statement.
//!
//! One directive is not SQL: a statement whose first line is
//! `.table NAME [partition_rows=N]` loads the lines after it as CSV text
//! (header first, types inferred as any CSV load infers them) into table
//! `NAME`, in partitions of `N` rows or of the run's configured size. A
//! blank line ends a record, so a line `(empty)` stands for an empty line
//! of the CSV text (a single column's NULL).
//!
//! ```text
//! statement ok
//! .table t
//! a,x
//! 3,2.5
//! 1,
//! ```
//!
//! Files that query files on disk name them from the repository root
//! (`'tests/slt/data/…'`), where `cargo test` runs.
//!
//! # Column types
//! `query` type letters: `I` integer, `R` float, `T` text, `B` boolean,
//! `D` date, `S` timestamp, `L` interval, `N` the type of a column with no
//! value (NULL). The runner checks them strictly: a column of the wrong type
//! fails the record.
//!
//! # Values
//! Each value is written as katydid's results show it (`Value`'s
//! `Display`), except the empty string:
//! - NULL is `NULL`; the empty string is `(empty)` (sqllogictest's
//!   convention, since an empty field would vanish from the row);
//! - integers in decimal, huge integer sums exactly;
//! - floats in the shortest text that reads back as the same `f64` (Ryū),
//!   positional from 1e-4 to 1e16 and without a trailing `.0` (`2.5`, `3`,
//!   `-0.5`), exponent form outside (`1e-7`, `1e20`), `NaN`, `inf`, `-inf`:
//!   an expected float is therefore exact, never rounded, so a float that
//!   depends on summation order must be rounded in the SQL (`round(x, 6)`);
//! - booleans `true` / `false`; dates `YYYY-MM-DD`; timestamps
//!   `YYYY-MM-DD HH:MM:SS[.ffffff]`; intervals as DuckDB shows them
//!   (`1 day 03:00:00`).
//!
//! The runner's default normalizer then compares rows with runs of spaces
//! collapsed, so a text value's inner spacing is not checked (nor an
//! EXPLAIN line's indentation: EXPLAIN's lines come back as one text
//! column, one row a line).
//!
//! # Errors
//! A failed statement's error text is `KIND: MESSAGE`, where `KIND` is the
//! error's phase (`io`, `csv`, `parse`, `plan`, `execution`, `cancelled`,
//! `memory`, `unsupported`, `internal`) and `MESSAGE` is katydid's message;
//! when the error points into the SQL, ` [at N: TEXT]` follows, `N` the byte
//! offset and `TEXT` the SQL from there to the end of its line (at most 30
//! characters). `statement error REGEX` / `query error REGEX` match the
//! regex anywhere in that text, so
//! `query error plan: unknown column "y" \[at 7: y FROM t\]` checks the
//! phase, the message and the place.
//!
//! # Running one file
//! `SLT=dates cargo test --release --test sqllogic` runs only the files
//! whose path contains `dates`.

use std::fmt;
use std::path::{Path, PathBuf};

use katydid::{DataType, Database, DatabaseOptions, Error, LoadOptions, Value};
use sqllogictest::{ColumnType, DB, DBOutput, Runner};

/// `(threads, partition_rows)`: every file runs once under each.
const CONFIGURATIONS: [(usize, usize); 3] = [(1, 65_536), (2, 2), (2, 1)];

/// A column type as a `query` record spells it (see the module docs).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Column {
    Int,
    Float,
    Text,
    Bool,
    Date,
    Timestamp,
    Interval,
    Null,
}

impl ColumnType for Column {
    fn from_char(value: char) -> Option<Self> {
        Some(match value {
            'I' => Column::Int,
            'R' => Column::Float,
            'T' => Column::Text,
            'B' => Column::Bool,
            'D' => Column::Date,
            'S' => Column::Timestamp,
            'L' => Column::Interval,
            'N' => Column::Null,
            _ => return None,
        })
    }

    fn to_char(&self) -> char {
        match self {
            Column::Int => 'I',
            Column::Float => 'R',
            Column::Text => 'T',
            Column::Bool => 'B',
            Column::Date => 'D',
            Column::Timestamp => 'S',
            Column::Interval => 'L',
            Column::Null => 'N',
        }
    }
}

impl From<DataType> for Column {
    fn from(dtype: DataType) -> Column {
        match dtype {
            DataType::Int => Column::Int,
            DataType::Float => Column::Float,
            DataType::Str => Column::Text,
            DataType::Bool => Column::Bool,
            DataType::Date => Column::Date,
            DataType::Timestamp => Column::Timestamp,
            DataType::Interval => Column::Interval,
            DataType::Null => Column::Null,
        }
    }
}

/// A failed statement as the runner's error regexes see it (see the module
/// docs for the text).
#[derive(Debug)]
struct Failure(String);

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Failure {}

impl Failure {
    /// `KIND: MESSAGE [at N: TEXT]` for katydid's `error` of `sql`.
    fn new(error: &Error, sql: &str) -> Failure {
        let kind = match error {
            Error::Io { .. } => "io",
            Error::Csv { .. } => "csv",
            Error::Parse { .. } => "parse",
            Error::Plan { .. } => "plan",
            // The message names overflow and division by zero.
            Error::Execution(_) | Error::Overflow | Error::DivisionByZero => "execution",
            Error::Cancelled => "cancelled",
            Error::MemoryLimit { .. } => "memory",
            Error::NotSupported(_) => "unsupported",
            Error::Internal(_) => "internal",
        };
        let mut text = format!("{kind}: {error}");
        if let Some(offset) = error.offset() {
            let rest = sql.get(offset..).unwrap_or("");
            let line = rest.lines().next().unwrap_or("");
            let shown: String = line.chars().take(30).collect();
            text.push_str(&format!(" [at {offset}: {shown}]"));
        }
        Failure(text)
    }
}

/// One file's database under one configuration.
struct Katydid {
    db: Database,
    /// Rows per partition of the tables `.table` loads without
    /// `partition_rows=N`.
    partition_rows: usize,
}

impl Katydid {
    /// Loads `csv` (the lines after a `.table NAME [partition_rows=N]`
    /// line; `directive` is that line after `.table `) as table `NAME`.
    fn load_table(&mut self, directive: &str, csv: &str) -> Result<(), Failure> {
        let mut words = directive.split_whitespace();
        let name = words
            .next()
            .ok_or_else(|| Failure("runner: .table needs a table name".into()))?;
        let mut partition_rows = self.partition_rows;
        for word in words {
            partition_rows = word
                .strip_prefix("partition_rows=")
                .and_then(|n| n.parse().ok())
                .filter(|&n| n > 0)
                .ok_or_else(|| {
                    Failure(format!(
                        "runner: .table takes partition_rows=N (N > 0), not {word:?}"
                    ))
                })?;
        }
        let options = LoadOptions {
            partition_rows,
            ..LoadOptions::default()
        };
        let mut bytes = Vec::with_capacity(csv.len() + 1);
        for line in csv.lines() {
            if line != "(empty)" {
                bytes.extend_from_slice(line.as_bytes());
            }
            bytes.push(b'\n');
        }
        let file = format!("{name}.csv");
        self.db
            .load_csv_bytes(bytes, Path::new(&file), name, &options)
            .map(|_| ())
            .map_err(|e| Failure::new(&e, csv))
    }
}

/// The text of one value (see the module docs).
fn text(value: &Value) -> String {
    match value {
        Value::Str(s) if s.is_empty() => "(empty)".to_string(),
        other => other.to_string(),
    }
}

impl DB for Katydid {
    type Error = Failure;
    type ColumnType = Column;

    fn run(&mut self, sql: &str) -> Result<DBOutput<Column>, Failure> {
        let (first, rest) = sql
            .trim_start()
            .split_once('\n')
            .unwrap_or((sql.trim(), ""));
        if let Some(directive) = first.strip_prefix(".table ") {
            self.load_table(directive, rest)?;
            return Ok(DBOutput::StatementComplete(0));
        }
        let result = self.db.execute(sql).map_err(|e| Failure::new(&e, sql))?;
        if result.columns.is_empty() {
            return Ok(DBOutput::StatementComplete(0));
        }
        Ok(DBOutput::Rows {
            types: result.types.into_iter().map(Column::from).collect(),
            rows: result
                .rows
                .iter()
                .map(|row| row.iter().map(text).collect())
                .collect(),
        })
    }

    fn engine_name(&self) -> &str {
        "katydid"
    }
}

/// Every `.slt` file under `dir`, sorted.
fn slt_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        for entry in entries {
            let path = entry.expect("directory entry").path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|e| e == "slt") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

#[test]
fn sql_behaviour_matches_the_slt_files() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    // Files name their data files from the repository root (the only test
    // in this binary, so changing the directory touches no other).
    std::env::set_current_dir(root).expect("the repository root");
    let only = std::env::var("SLT").ok();
    let files: Vec<PathBuf> = slt_files(&root.join("tests/slt"))
        .into_iter()
        .filter(|f| {
            only.as_deref()
                .is_none_or(|o| f.to_string_lossy().contains(o))
        })
        .collect();
    assert!(!files.is_empty(), "no .slt file under tests/slt matches");
    let mut failures = Vec::new();
    for file in &files {
        let shown = file.strip_prefix(root).unwrap_or(file);
        for (threads, partition_rows) in CONFIGURATIONS {
            let mut runner = Runner::new(|| async move {
                let db = Database::new(DatabaseOptions {
                    threads,
                    ..Default::default()
                })
                .map_err(|e| Failure::new(&e, ""))?;
                Ok(Katydid { db, partition_rows })
            });
            runner.with_column_validator(sqllogictest::strict_column_validator);
            if let Err(e) = runner.run_file(shown) {
                failures.push(format!(
                    "{} (threads {threads}, partitions of {partition_rows} rows):\n{}",
                    shown.display(),
                    e.display(false)
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} runs failed:\n\n{}",
        failures.len(),
        files.len() * CONFIGURATIONS.len(),
        failures.join("\n")
    );
}
