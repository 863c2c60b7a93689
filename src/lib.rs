//! katydid: an in-memory analytics engine for exploring big CSV files with
//! group-by SQL.

pub mod control;
pub mod engine;
pub mod error;
pub mod exec;
mod files;
pub mod ingest;
mod introspect;
pub mod kernel;
pub mod plan;
pub mod sql;
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
