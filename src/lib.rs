//! katydid: an in-memory analytics engine for exploring big CSV files with
//! group-by SQL.
//!
//! The API is [`Database`]: load CSV files into named tables
//! ([`Database::load_csv`], options in [`LoadOptions`]) and run SQL on them
//! ([`Database::query`], or [`Database::query_to`] to stream rows into a
//! [`RowSink`]; [`Database::query_arrow`] for Arrow record batches, an
//! [`ArrowResult`]), with cancelling ([`CancelToken`]), progress reports and a
//! memory limit. Values are [`Value`]s of a [`DataType`]; failures are
//! [`Error`]s.
//!
//! The implementation modules (`sql`, `plan`, `exec`, `store`, `ingest`,
//! `kernel`, `engine`) are private. The crate feature `internals` makes
//! `sql`, `plan`, `store`, `ingest` and `kernel` public, for the project's
//! own tests, benchmarks and examples only (the differential test's
//! reference evaluator builds tables and plans directly; the codec
//! benchmarks call kernels); it is not a stable API.

/// Declares modules that are private, or public and hidden from the docs
/// under the `internals` feature.
macro_rules! internal_modules {
    ($($name:ident),*) => {$(
        #[cfg(feature = "internals")]
        #[doc(hidden)]
        pub mod $name;
        #[cfg(not(feature = "internals"))]
        mod $name;
    )*};
}

mod arrow_out;
mod engine;
mod exec;
internal_modules!(ingest, kernel, plan, sql, store);

mod compose;
pub mod control;
mod copy;
pub mod error;
mod files;
mod introspect;
mod series;
pub mod types;

pub use arrow_out::{ArrowResult, BATCH_ROWS};
pub use control::{CancelToken, MemoryBudget, Phase, Progress, ProgressFn, ProgressUnit};
pub use copy::{CopyFormat, CopyOptions};
pub use engine::{
    ColumnInfo, Database, DatabaseOptions, LoadStats, Preview, QueryResult, QuerySummary, RowSink,
    TableInfo, default_memory_limit,
};
pub use error::{Error, Result};
pub use exec::ExecOptions;
pub use ingest::parquet::ParquetOptions;
pub use ingest::{DEFAULT_MAX_LINE_BYTES, DEFAULT_PARTITION_ROWS, LoadOptions};
pub use plan::bind::FUNCTION_NAMES;
pub use store::SourceFormat;
pub use types::{DataType, Value};

/// The `arrow-array` crate at the version [`Database::load_arrow`] takes,
/// so callers build batches and readers of matching types.
pub use arrow_array;
/// The `arrow-buffer` crate at the version [`ArrowResult`]'s arrays use.
pub use arrow_buffer;
/// The `arrow-schema` crate at the version [`Database::load_arrow`] takes.
pub use arrow_schema;
