//! katydid: an in-memory analytics engine for exploring big CSV files with
//! group-by SQL.
//!
//! The API is [`Database`]: load CSV files into named tables
//! ([`Database::load_csv`], options in [`LoadOptions`]) and run SQL on them
//! ([`Database::query`], or [`Database::query_to`] to stream rows into a
//! [`RowSink`]), with cancelling ([`CancelToken`]), progress reports and a
//! memory limit. Values are [`Value`]s of a [`DataType`]; failures are
//! [`Error`]s.
//!
//! The modules hidden from these docs (`sql`, `plan`, `exec`, `store`,
//! `ingest`, `kernel`, `engine`) are implementation details: they stay
//! reachable only so the project's own tests, benchmarks and examples can
//! build tables and plans directly (the differential test's reference
//! evaluator, the codec benchmarks). They are not a stable API.

pub mod control;
#[doc(hidden)]
pub mod engine;
pub mod error;
#[doc(hidden)]
pub mod exec;
mod files;
#[doc(hidden)]
pub mod ingest;
mod introspect;
#[doc(hidden)]
pub mod kernel;
#[doc(hidden)]
pub mod plan;
#[doc(hidden)]
pub mod sql;
#[doc(hidden)]
pub mod store;
pub mod types;

pub use control::{CancelToken, MemoryBudget, Progress, ProgressFn, ProgressUnit};
pub use engine::{
    ColumnInfo, Database, DatabaseOptions, LoadStats, Preview, QueryResult, QuerySummary, RowSink,
    TableInfo, default_memory_limit,
};
pub use error::{Error, Result};
pub use ingest::LoadOptions;
pub use types::{DataType, Value};
