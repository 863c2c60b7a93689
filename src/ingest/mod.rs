//! CSV and gzipped CSV to an encoded [`Table`].

use std::path::Path;

use crate::error::{Error, Result};
use crate::store::Table;

/// Default rows per partition.
pub const DEFAULT_PARTITION_ROWS: usize = 1 << 16;

/// How to read a CSV file.
#[derive(Debug, Clone)]
pub struct LoadOptions {
    /// The first record is a header of column names (default true).
    pub header: bool,
    /// Column names to use instead of (or, without a header, in place of) the
    /// header's; must match the record width.
    pub columns: Option<Vec<String>>,
    /// Rows per partition (default [`DEFAULT_PARTITION_ROWS`]).
    pub partition_rows: usize,
    /// Show a progress bar (rows/s) on stderr when it is a terminal and the
    /// load takes longer than a second.
    pub progress: bool,
}

impl Default for LoadOptions {
    fn default() -> Self {
        LoadOptions {
            header: true,
            columns: None,
            partition_rows: DEFAULT_PARTITION_ROWS,
            progress: false,
        }
    }
}

/// Loads a plain or gzipped CSV file (gzip detected by its magic bytes) into
/// a table named `table_name`, using the current rayon pool.
///
/// # Errors
/// [`Error::Io`] if the file cannot be read; [`Error::Csv`] naming file, line
/// and column for malformed input. Nothing is returned on error.
pub fn load_csv(path: &Path, table_name: &str, options: &LoadOptions) -> Result<Table> {
    let bytes = std::fs::read(path).map_err(|source| Error::Io {
        path: path.to_path_buf(),
        source,
    })?;
    load_csv_bytes(bytes, path, table_name, options)
}

/// Like [`load_csv`] for file contents already in memory; `origin` names the
/// source in error messages.
///
/// # Errors
/// As [`load_csv`].
pub fn load_csv_bytes(
    bytes: Vec<u8>,
    origin: &Path,
    table_name: &str,
    options: &LoadOptions,
) -> Result<Table> {
    let _ = (bytes, origin, table_name, options);
    Err(Error::NotSupported("loader not written yet".into()))
}
