//! The one error type of katydid, split by the phase that failed.
//!
//! Every user-facing failure (a malformed file, a query that does not parse or
//! bind, a division by zero) is an [`Error`] value; nothing a user types or
//! loads may panic. Messages are lowercase, without a trailing period, and
//! quote names: `unknown column "fare" (did you mean "fare_amount"?)`.

use std::path::PathBuf;

/// `Result` with katydid's [`Error`] as the default error type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong, by phase.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Reading a file failed at the operating-system level.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file that could not be read.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },

    /// A CSV file is malformed. `line` and `column` are 1-based; `column` is
    /// the field number within the record (as a user counts header names).
    #[error("{}:{line}:{column}: {message}", path.display())]
    Csv {
        /// The file being loaded (or `<memory>` for in-memory input).
        path: PathBuf,
        /// 1-based line number in the file.
        line: u64,
        /// 1-based field number in the record.
        column: u64,
        /// What is wrong, lowercase.
        message: String,
    },

    /// The SQL text does not parse. `offset` is a byte offset into the query
    /// text, where the REPL draws its caret.
    #[error("syntax error at offset {offset}: {message}")]
    Parse {
        /// Byte offset into the query text.
        offset: usize,
        /// What was expected or found there.
        message: String,
    },

    /// The query parsed but cannot be planned: unknown names, type mismatches,
    /// misplaced aggregates. `offset` points at the offending expression when
    /// known.
    #[error("{message}")]
    Plan {
        /// What is wrong.
        message: String,
        /// Byte offset into the query text, when known.
        offset: Option<usize>,
    },

    /// The query failed while running: a value that does not cast, a
    /// scalar subquery of more than one row, a timestamp out of range.
    /// Integer overflow and division by zero have their own variants.
    #[error("{0}")]
    Execution(String),

    /// An integer result does not fit in 64 bits (`+`, `-`, `*`, `abs`, a
    /// sum), detected while running.
    #[error("integer overflow")]
    Overflow,

    /// An integer or float `/` or `%` by zero, detected while running.
    #[error("division by zero")]
    DivisionByZero,

    /// The work was cancelled (Ctrl-C, or a [`crate::CancelToken`]).
    #[error("cancelled")]
    Cancelled,

    /// The work would pass the memory limit; nothing was kept of it.
    #[error(
        "{work} needs more than {} for {what} (limit {}{})",
        crate::control::format_bytes(*needed),
        crate::control::format_bytes(*limit),
        if *in_use > 0 {
            format!(", {} already in use", crate::control::format_bytes(*in_use))
        } else {
            String::new()
        }
    )]
    MemoryLimit {
        /// What was running: `query` or `load`.
        work: &'static str,
        /// Bytes the work would have held in all.
        needed: usize,
        /// What needed them, e.g. `48M groups`.
        what: String,
        /// The limit in bytes.
        limit: usize,
        /// Bytes held by tables and other work when this work failed.
        in_use: usize,
    },

    /// A valid request that katydid does not implement yet.
    #[error("not supported: {0}")]
    NotSupported(String),

    /// A broken invariant inside katydid: this is a bug.
    #[error("internal error (this is a bug): {0}")]
    Internal(String),
}

impl Error {
    /// Byte offset into the query text that the error refers to, if any.
    pub fn offset(&self) -> Option<usize> {
        match self {
            Error::Parse { offset, .. } => Some(*offset),
            Error::Plan { offset, .. } => *offset,
            _ => None,
        }
    }

    /// A plan error without a position.
    pub fn plan(message: impl Into<String>) -> Error {
        Error::Plan {
            message: message.into(),
            offset: None,
        }
    }

    /// A plan error pointing at byte `offset` of the query text.
    pub fn plan_at(message: impl Into<String>, offset: usize) -> Error {
        Error::Plan {
            message: message.into(),
            offset: Some(offset),
        }
    }
}
