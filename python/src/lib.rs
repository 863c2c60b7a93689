//! The `katydid._katydid` extension module: a [`Connection`] over a
//! [`katydid::Database`] and the [`QueryResult`] it returns, with results
//! handed to Python as Arrow through the Arrow C stream interface.
//!
//! # Design
//! Only the engine's public API is used. A connection holds its database
//! behind a read-write lock: queries share it, loads, drops and registers
//! take it alone. Every engine call runs on a thread of its own with the
//! GIL released, while the calling thread waits for it and checks for
//! signals every 50 ms: a `KeyboardInterrupt` (Ctrl-C) cancels the work
//! through the database's cancel token, waits for it to stop, and is then
//! raised; the connection stays usable. The lock is only ever taken on that
//! worker thread (or with the GIL released), so no thread waits for the
//! lock while holding the GIL.

mod arrow_in;
mod errors;
mod show;

use std::path::PathBuf;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use arrow_array::RecordBatchIterator;
use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use katydid::{ArrowResult, CancelToken, Database, DatabaseOptions, LoadOptions, Value};
use pyo3::exceptions::{PyOverflowError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyDate, PyDateTime, PyDelta, PyDict, PyList, PyTuple};

use crate::errors::{InternalError, to_py_err};

/// How often a waiting call checks for Ctrl-C.
const SIGNAL_POLL: Duration = Duration::from_millis(50);

/// A database and the token that cancels its running work.
struct Shared {
    db: RwLock<Database>,
    cancel: CancelToken,
}

/// Runs `work` on a thread of its own with the GIL released; the calling
/// thread checks for signals meanwhile. On a signal (Ctrl-C) the work is
/// cancelled, awaited, and the signal's exception (`KeyboardInterrupt`)
/// raised; otherwise the work's result is returned, its error mapped to a
/// `katydid.Error` subclass.
fn run_interruptible<T, F>(py: Python<'_>, cancel: &CancelToken, work: F) -> PyResult<T>
where
    T: Send,
    F: FnOnce() -> katydid::Result<T> + Send,
{
    let (outcome, interrupted) = std::thread::scope(|scope| {
        let (done_tx, done_rx) = mpsc::channel::<()>();
        let worker = scope.spawn(move || {
            let out = work();
            let _ = done_tx.send(());
            out
        });
        // Behind a lock only because waiting hands it to `detach`, which
        // wants what it borrows to be shareable.
        let done_rx = Mutex::new(done_rx);
        let mut interrupted: Option<PyErr> = None;
        loop {
            let waited = py.detach(|| match done_rx.lock() {
                Ok(rx) => !matches!(rx.recv_timeout(SIGNAL_POLL), Err(RecvTimeoutError::Timeout)),
                Err(_) => true,
            });
            if waited {
                break;
            }
            if interrupted.is_none()
                && let Err(e) = py.check_signals()
            {
                interrupted = Some(e);
            }
            // Cancelled again on every poll: a statement clears the token
            // when it starts, which may be after the signal came.
            if interrupted.is_some() {
                cancel.cancel();
            }
        }
        let outcome = py.detach(|| worker.join());
        (outcome, interrupted)
    });
    let outcome = match outcome {
        Ok(outcome) => outcome,
        Err(_) => return Err(InternalError::new_err("katydid worker thread panicked")),
    };
    if let Some(signal) = interrupted {
        return Err(signal);
    }
    outcome.map_err(|e| to_py_err(py, e))
}

/// A read lock error as a Python exception.
fn poisoned<T>(_: T) -> katydid::Error {
    katydid::Error::Internal("the connection's lock was poisoned by a panic".into())
}

/// A connection: tables in memory and the threads that load and query them.
#[pyclass(frozen, module = "katydid")]
struct Connection {
    shared: Arc<Shared>,
}

#[pymethods]
impl Connection {
    /// A connection with no tables; `threads` workers (None: one per core)
    /// and a memory limit in bytes (None: 80% of physical memory).
    #[new]
    #[pyo3(signature = (threads=None, memory_limit=None))]
    fn new(threads: Option<usize>, memory_limit: Option<usize>) -> PyResult<Connection> {
        if threads == Some(0) {
            return Err(PyValueError::new_err("threads must be at least 1"));
        }
        if memory_limit == Some(0) {
            return Err(PyValueError::new_err(
                "memory_limit must be at least 1 byte",
            ));
        }
        let db = Database::new(DatabaseOptions {
            threads: threads.unwrap_or(0),
            memory_limit,
        })
        .map_err(|e| Python::attach(|py| to_py_err(py, e)))?;
        let cancel = db.cancel_token();
        Ok(Connection {
            shared: Arc::new(Shared {
                db: RwLock::new(db),
                cancel,
            }),
        })
    }

    /// Worker threads of this connection.
    #[getter]
    fn threads(&self, py: Python<'_>) -> PyResult<usize> {
        let shared = self.shared.clone();
        run_interruptible(py, &self.shared.cancel, move || {
            Ok(shared.db.read().map_err(poisoned)?.threads())
        })
    }

    /// Loads a CSV file (plain or gzipped) or a Parquet file (known by its
    /// magic bytes) into a table and returns what the load did as a dict.
    #[pyo3(signature = (
        path, table=None, *, delimiter=None, header=true, null_string=None,
        columns=None, quote=None, replace=false, partition_rows=None,
        max_line_size=None
    ))]
    #[allow(clippy::too_many_arguments)]
    fn load<'py>(
        &self,
        py: Python<'py>,
        path: PathBuf,
        table: Option<String>,
        delimiter: Option<String>,
        header: bool,
        null_string: Option<String>,
        columns: Option<Vec<String>>,
        quote: Option<String>,
        replace: bool,
        partition_rows: Option<usize>,
        max_line_size: Option<usize>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let mut options = LoadOptions {
            header,
            null_string,
            columns,
            replace,
            ..LoadOptions::default()
        };
        if let Some(d) = delimiter {
            options.delimiter = Some(ascii_char("delimiter", &d)?);
        }
        if let Some(q) = quote {
            options.quote = ascii_char("quote", &q)?;
        }
        if let Some(n) = partition_rows {
            if n == 0 {
                return Err(PyValueError::new_err("partition_rows must be at least 1"));
            }
            options.partition_rows = n;
        }
        if let Some(n) = max_line_size {
            if n == 0 {
                return Err(PyValueError::new_err("max_line_size must be at least 1"));
            }
            options.max_line_bytes = n;
        }
        let table = table.unwrap_or_else(|| Database::table_name_for(&path));
        let shared = self.shared.clone();
        let stats = run_interruptible(py, &self.shared.cancel, move || {
            let mut db = shared.db.write().map_err(poisoned)?;
            db.load_csv(&path, &table, &options)
        })?;
        let out = PyDict::new(py);
        out.set_item("table", &stats.table)?;
        out.set_item("rows", stats.rows)?;
        out.set_item("columns", stats.columns)?;
        out.set_item("partitions", stats.partitions)?;
        out.set_item("source_bytes", stats.source_bytes)?;
        out.set_item("memory_bytes", stats.heap_bytes)?;
        out.set_item("seconds", stats.elapsed.as_secs_f64())?;
        out.set_item("notices", &stats.notices)?;
        Ok(out)
    }

    /// Runs one SQL statement and returns its result.
    fn sql(&self, py: Python<'_>, query: String) -> PyResult<QueryResult> {
        let shared = self.shared.clone();
        let text = query.clone();
        let result = run_interruptible(py, &self.shared.cancel, move || {
            if Database::changes_tables(&text) {
                // CREATE TABLE … AS, DROP TABLE change the tables (and
                // give at most one row).
                let result = shared.db.write().map_err(poisoned)?.execute(&text)?;
                ArrowResult::from_rows(&result)
            } else {
                shared.db.read().map_err(poisoned)?.query_arrow(&text)
            }
        })?;
        Ok(QueryResult::new(result, query, self.shared.clone()))
    }

    /// The plan of a SELECT statement as text (EXPLAIN).
    fn explain(&self, py: Python<'_>, query: &str) -> PyResult<String> {
        explain(py, &self.shared, query)
    }

    /// Imports an Arrow table (a pyarrow Table or RecordBatchReader, a
    /// Polars or pandas DataFrame, or any object with
    /// `__arrow_c_stream__`) as table `name`.
    #[pyo3(signature = (name, obj, *, replace=false))]
    fn register<'py>(
        &self,
        py: Python<'py>,
        name: String,
        obj: &Bound<'py, PyAny>,
        replace: bool,
    ) -> PyResult<Bound<'py, PyDict>> {
        arrow_in::register(py, &self.shared, name, obj, replace)
    }

    /// Names of the tables, sorted.
    fn tables(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        let shared = self.shared.clone();
        run_interruptible(py, &self.shared.cancel, move || {
            Ok(shared.db.read().map_err(poisoned)?.table_names())
        })
    }

    /// The columns of table `name`: `column_name`, `column_type`,
    /// `encoding`, `null_count`, `memory` (DESCRIBE).
    fn describe(&self, py: Python<'_>, name: &str) -> PyResult<QueryResult> {
        self.sql(py, format!("DESCRIBE {}", quote_identifier(name)))
    }

    /// Removes table `name` and gives its memory back.
    fn drop(&self, py: Python<'_>, name: String) -> PyResult<()> {
        let shared = self.shared.clone();
        run_interruptible(py, &self.shared.cancel, move || {
            shared.db.write().map_err(poisoned)?.drop_table(&name)
        })
    }

    /// Cancels the statement or load running on this connection (from
    /// another thread); it raises `CancelledError`.
    fn interrupt(&self) {
        self.shared.cancel.cancel();
    }

    fn __repr__(&self) -> String {
        "<katydid.Connection>".to_string()
    }
}

/// `EXPLAIN query` as text, a line per plan line.
fn explain(py: Python<'_>, shared: &Arc<Shared>, query: &str) -> PyResult<String> {
    let text = format!("EXPLAIN {}", query.trim_start());
    let worker = shared.clone();
    let result = run_interruptible(py, &shared.cancel, move || {
        worker.db.read().map_err(poisoned)?.query(&text)
    })?;
    let lines: Vec<String> = result
        .rows
        .iter()
        .map(|row| row.first().map(|v| v.to_string()).unwrap_or_default())
        .collect();
    Ok(lines.join("\n"))
}

/// A name as a double-quoted SQL identifier.
fn quote_identifier(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// A one-character ASCII option (`delimiter`, `quote`); `"\t"` and `"tab"`
/// mean tab.
fn ascii_char(option: &str, s: &str) -> PyResult<u8> {
    match s {
        "tab" | "\\t" => return Ok(b'\t'),
        _ => {}
    }
    match s.as_bytes() {
        [b] if b.is_ascii() => Ok(*b),
        _ => Err(PyValueError::new_err(format!(
            "{option} must be one ASCII character, not {s:?}"
        ))),
    }
}

/// The result of one statement: its columns, types and rows, kept as the
/// Arrow record batches the engine made ([`Database::query_arrow`]), so
/// `.arrow()`, `.pl()`, `.df()` and the Arrow stream share them without a
/// copy; the row-wise methods read values back from them.
#[pyclass(frozen, module = "katydid")]
struct QueryResult {
    result: Arc<ArrowResult>,
    sql: String,
    shared: Arc<Shared>,
    /// Rows already taken by `fetchone`/`fetchmany`/`fetchall`.
    cursor: Mutex<usize>,
}

impl QueryResult {
    fn new(result: ArrowResult, sql: String, shared: Arc<Shared>) -> QueryResult {
        QueryResult {
            result: Arc::new(result),
            sql,
            shared,
            cursor: Mutex::new(0),
        }
    }

    /// Takes up to `n` rows from the cursor.
    fn take_rows<'py>(&self, py: Python<'py>, n: usize) -> PyResult<Vec<Bound<'py, PyTuple>>> {
        let mut cursor = self
            .cursor
            .lock()
            .map_err(|_| InternalError::new_err("result cursor poisoned"))?;
        let start = (*cursor).min(self.result.rows);
        let end = start.saturating_add(n).min(self.result.rows);
        let rows = self
            .result
            .rows(start..end)
            .iter()
            .map(|row| row_tuple(py, row))
            .collect::<PyResult<Vec<_>>>()?;
        *cursor = end;
        Ok(rows)
    }

    /// The first `max_rows` rows with the columns, for `show` and the
    /// reprs.
    fn preview(&self, max_rows: usize) -> show::Preview {
        show::Preview {
            columns: self.result.columns(),
            types: self.result.types.clone(),
            rows: self.result.rows(0..max_rows),
            total: self.result.rows,
        }
    }
}

#[pymethods]
impl QueryResult {
    /// Output column names.
    #[getter]
    fn columns(&self) -> Vec<String> {
        self.result.columns()
    }

    /// Output column types as katydid names them (`integer`, `float`,
    /// `timestamp`, `string`, `boolean`).
    #[getter]
    fn types(&self) -> Vec<&'static str> {
        self.result.types.iter().map(|t| t.name()).collect()
    }

    /// The SQL text that produced this result.
    #[getter]
    fn query(&self) -> &str {
        &self.sql
    }

    /// Rows the query read from its table (after partition skipping).
    #[getter]
    fn rows_scanned(&self) -> usize {
        self.result.rows_scanned
    }

    /// Wall time of the statement in seconds.
    #[getter]
    fn seconds(&self) -> f64 {
        self.result.elapsed.as_secs_f64()
    }

    fn __len__(&self) -> usize {
        self.result.rows
    }

    /// The Arrow PyCapsule stream interface: the result as an
    /// `ArrowArrayStream`. `requested_schema` is not used (the result has
    /// one layout).
    #[pyo3(signature = (requested_schema=None))]
    fn __arrow_c_stream__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let _ = requested_schema;
        let reader = RecordBatchIterator::new(
            self.result.batches.clone().into_iter().map(Ok),
            self.result.schema.clone(),
        );
        let stream = FFI_ArrowArrayStream::new(Box::new(reader));
        PyCapsule::new_with_value(py, stream, c"arrow_array_stream")
    }

    /// The result as a `pyarrow.Table`.
    fn arrow<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        let py = slf.py();
        let pa = py.import("pyarrow")?;
        pa.call_method1("table", (slf,))
    }

    /// The result as a Polars DataFrame.
    fn pl<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        let py = slf.py();
        let pl = py.import("polars")?;
        pl.call_method1("DataFrame", (slf,))
    }

    /// The result as a pandas DataFrame (through pyarrow).
    fn df<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        QueryResult::arrow(slf)?.call_method0("to_pandas")
    }

    /// The remaining rows as a list of tuples (timestamps as naive
    /// `datetime.datetime`).
    fn fetchall<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let rows = self.take_rows(py, usize::MAX)?;
        PyList::new(py, rows)
    }

    /// The next row as a tuple, or None after the last.
    fn fetchone<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyTuple>>> {
        Ok(self.take_rows(py, 1)?.into_iter().next())
    }

    /// The next `size` rows as a list of tuples.
    #[pyo3(signature = (size=1))]
    fn fetchmany<'py>(&self, py: Python<'py>, size: usize) -> PyResult<Bound<'py, PyList>> {
        let rows = self.take_rows(py, size)?;
        PyList::new(py, rows)
    }

    /// Prints the first `max_rows` rows as the REPL's table.
    #[pyo3(signature = (max_rows=20))]
    fn show(&self, py: Python<'_>, max_rows: usize) -> PyResult<()> {
        let text = show::table_text(&self.preview(max_rows));
        let print = py.import("builtins")?.getattr("print")?;
        print.call1((text,))?;
        Ok(())
    }

    /// The plan of the statement (EXPLAIN of its SQL).
    fn explain(&self, py: Python<'_>) -> PyResult<String> {
        explain(py, &self.shared, &self.sql)
    }

    fn __repr__(&self) -> String {
        show::table_text(&self.preview(20))
    }

    /// An HTML table of the first rows, for Jupyter.
    fn _repr_html_(&self) -> String {
        show::table_html(&self.preview(20))
    }
}

/// A row as a tuple of Python values.
fn row_tuple<'py>(py: Python<'py>, row: &[Value]) -> PyResult<Bound<'py, PyTuple>> {
    let values = row
        .iter()
        .map(|v| value_object(py, v))
        .collect::<PyResult<Vec<_>>>()?;
    PyTuple::new(py, values)
}

/// One value as a Python object: None, bool, int, float, str, a naive
/// datetime, a date or a timedelta.
fn value_object<'py>(py: Python<'py>, value: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => b.into_pyobject(py)?.to_owned().into_any(),
        Value::Int(v) => v.into_pyobject(py)?.into_any(),
        // An integer sum past i64: Python's int holds it exactly.
        Value::HugeInt(v) => v.into_pyobject(py)?.into_any(),
        Value::Float(v) => v.into_pyobject(py)?.into_any(),
        Value::Str(s) => s.as_ref().into_pyobject(py)?.into_any(),
        Value::Timestamp(us) => datetime(py, *us)?.into_any(),
        Value::Date(days) => date(py, *days)?.into_any(),
        Value::Interval(us) => timedelta(py, *us)?.into_any(),
    })
}

/// Microseconds as a `datetime.timedelta` (days, seconds and microseconds
/// normalized as Python keeps them); past ±999,999,999 days raises
/// `OverflowError`.
fn timedelta(py: Python<'_>, micros: i64) -> PyResult<Bound<'_, PyDelta>> {
    let days = micros.div_euclid(86_400_000_000);
    let rest = micros.rem_euclid(86_400_000_000);
    let days = i32::try_from(days)
        .map_err(|_| PyOverflowError::new_err(format!("interval {micros} µs is out of range")))?;
    PyDelta::new(
        py,
        days,
        (rest / 1_000_000) as i32,
        (rest % 1_000_000) as i32,
        true,
    )
}

/// Days since 1970-01-01 as a `datetime.date`; years outside 1..=9999
/// raise `ValueError`.
fn date(py: Python<'_>, days: i64) -> PyResult<Bound<'_, PyDate>> {
    let (year, month, day) = civil_from_days(days);
    let year = i32::try_from(year)
        .ok()
        .filter(|y| (1..=9999).contains(y))
        .ok_or_else(|| PyValueError::new_err(format!("date {days} days is out of range")))?;
    PyDate::new(py, year, month, day)
}

/// Microseconds since 1970-01-01 00:00:00 as a naive `datetime`; years
/// outside 1..=9999 raise `ValueError`.
fn datetime(py: Python<'_>, micros: i64) -> PyResult<Bound<'_, PyDateTime>> {
    let days = micros.div_euclid(86_400_000_000);
    let in_day = micros.rem_euclid(86_400_000_000);
    let (year, month, day) = civil_from_days(days);
    let year = i32::try_from(year)
        .ok()
        .filter(|y| (1..=9999).contains(y))
        .ok_or_else(|| PyValueError::new_err(format!("timestamp {micros} µs is out of range")))?;
    let seconds = in_day / 1_000_000;
    PyDateTime::new(
        py,
        year,
        month,
        day,
        (seconds / 3600) as u8,
        (seconds / 60 % 60) as u8,
        (seconds % 60) as u8,
        (in_day % 1_000_000) as u32,
        None,
    )
}

/// The proleptic Gregorian (year, month, day) of `days` since 1970-01-01
/// (Howard Hinnant's `civil_from_days`, from "chrono-Compatible Low-Level
/// Date Algorithms").
fn civil_from_days(days: i64) -> (i64, u8, u8) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u8;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u8;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// Rejects a value that is not an Arrow stream source.
fn not_arrow(obj: &Bound<'_, PyAny>) -> PyErr {
    let kind = obj
        .get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "object".into());
    PyTypeError::new_err(format!(
        "cannot register a {kind}: expected a pyarrow Table, a Polars or pandas DataFrame, or an object with __arrow_c_stream__"
    ))
}

#[pymodule]
fn _katydid(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Connection>()?;
    m.add_class::<QueryResult>()?;
    errors::register(m)?;
    Ok(())
}
