//! katydid's [`katydid::Error`] as Python exceptions.
//!
//! Every class derives from `katydid.Error`, itself an `Exception`:
//!
//! | engine error            | Python class        | attributes              |
//! |-------------------------|---------------------|-------------------------|
//! | `Parse`                 | `ParseError`        | `offset`                |
//! | `Plan`                  | `PlanError`         | `offset` (or `None`)    |
//! | `Execution`, `Overflow`, `DivisionByZero` | `ExecutionError` |      |
//! | `MemoryLimit`           | `MemoryLimitError`  | `needed`, `limit`       |
//! | `Csv`, `Io`             | `LoadError`         | `file`, `line`, `column`|
//! | `Cancelled`             | `CancelledError`    |                         |
//! | `NotSupported`          | `NotSupportedError` |                         |
//! | `Internal`              | `InternalError`     |                         |
//!
//! `offset` is a byte offset into the SQL text; `line` and `column` are
//! 1-based (`None` when the file could not be read at all).

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;

create_exception!(
    katydid,
    Error,
    PyException,
    "Base class of every error katydid raises."
);
create_exception!(
    katydid,
    ParseError,
    Error,
    "The SQL text does not parse; `offset` is the byte offset of the problem."
);
create_exception!(
    katydid,
    PlanError,
    Error,
    "The query parsed but cannot be planned (unknown name, type mismatch); `offset` is the byte offset of the problem or None."
);
create_exception!(
    katydid,
    ExecutionError,
    Error,
    "The query failed while running (e.g. division by zero)."
);
create_exception!(
    katydid,
    MemoryLimitError,
    Error,
    "The work would pass the connection's memory limit; nothing was kept of it. `needed` and `limit` are bytes."
);
create_exception!(
    katydid,
    LoadError,
    Error,
    "A file could not be read or is malformed; `file`, `line` and `column` (1-based field number) say where (`line`/`column` are None when the file could not be read at all)."
);
create_exception!(
    katydid,
    CancelledError,
    Error,
    "The statement or load was cancelled by `Connection.interrupt()`."
);
create_exception!(
    katydid,
    NotSupportedError,
    Error,
    "A valid request that katydid does not implement yet."
);
create_exception!(
    katydid,
    InternalError,
    Error,
    "A bug in katydid; please report it with the statement that caused it."
);

/// The Python exception for `error`, with its attributes set.
pub fn to_py_err(py: Python<'_>, error: katydid::Error) -> PyErr {
    let message = error.to_string();
    let (err, attributes): (PyErr, Vec<(&str, Py<PyAny>)>) = match &error {
        katydid::Error::Parse { offset, .. } => (
            ParseError::new_err(message),
            vec![("offset", optional(py, Some(*offset as u64)))],
        ),
        katydid::Error::Plan { offset, .. } => (
            PlanError::new_err(message),
            vec![("offset", optional(py, offset.map(|o| o as u64)))],
        ),
        katydid::Error::Execution(_)
        | katydid::Error::Overflow
        | katydid::Error::DivisionByZero => (ExecutionError::new_err(message), vec![]),
        katydid::Error::MemoryLimit { needed, limit, .. } => (
            MemoryLimitError::new_err(message),
            vec![
                ("needed", optional(py, Some(*needed as u64))),
                ("limit", optional(py, Some(*limit as u64))),
            ],
        ),
        katydid::Error::Csv {
            path, line, column, ..
        } => (
            LoadError::new_err(message),
            vec![
                ("file", text(py, &path.display().to_string())),
                ("line", optional(py, Some(*line))),
                ("column", optional(py, Some(*column))),
            ],
        ),
        katydid::Error::Io { path, .. } => (
            LoadError::new_err(message),
            vec![
                ("file", text(py, &path.display().to_string())),
                ("line", py.None()),
                ("column", py.None()),
            ],
        ),
        katydid::Error::Cancelled => (CancelledError::new_err(message), vec![]),
        katydid::Error::NotSupported(_) => (NotSupportedError::new_err(message), vec![]),
        _ => (InternalError::new_err(message), vec![]),
    };
    let value = err.value(py);
    for (name, attribute) in attributes {
        // Setting an attribute on a fresh exception instance cannot fail;
        // if it did, the exception is still raised, without it.
        let _ = value.setattr(name, attribute);
    }
    err
}

/// An optional number as a Python int or None.
fn optional(py: Python<'_>, n: Option<u64>) -> Py<PyAny> {
    match n {
        Some(n) => n
            .into_pyobject(py)
            .map_or_else(|_| py.None(), |n| n.into_any().unbind()),
        None => py.None(),
    }
}

/// A Python str.
fn text(py: Python<'_>, s: &str) -> Py<PyAny> {
    pyo3::types::PyString::new(py, s).into_any().unbind()
}

/// Registers the exception classes on module `m`.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("Error", py.get_type::<Error>())?;
    m.add("ParseError", py.get_type::<ParseError>())?;
    m.add("PlanError", py.get_type::<PlanError>())?;
    m.add("ExecutionError", py.get_type::<ExecutionError>())?;
    m.add("MemoryLimitError", py.get_type::<MemoryLimitError>())?;
    m.add("LoadError", py.get_type::<LoadError>())?;
    m.add("CancelledError", py.get_type::<CancelledError>())?;
    m.add("NotSupportedError", py.get_type::<NotSupportedError>())?;
    m.add("InternalError", py.get_type::<InternalError>())?;
    Ok(())
}
