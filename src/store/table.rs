//! Tables and partitions: the unit a query reads and the unit it runs on.

use super::column::Column;
use crate::types::DataType;

/// A named, typed column of a table.
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    /// The column name from the header (or `--columns`).
    pub name: String,
    /// The type inferred at load.
    pub dtype: DataType,
    /// Why the type is what it is, when the load found that worth saying,
    /// e.g. `typed as string because of 1 value of 10,000,000 (line
    /// 10000001: "2500000x")`.
    pub note: Option<String>,
}

/// A horizontal slice of a table: the unit of parallelism and of
/// per-partition specialization.
///
/// # Invariants
/// `columns.len()` equals the table's field count, every column has `rows`
/// rows and the field's type.
#[derive(Debug, Clone, PartialEq)]
pub struct Partition {
    /// Row count.
    pub rows: usize,
    /// Index of the partition's first row in load order.
    pub first_row: usize,
    /// One column per field, in field order.
    pub columns: Vec<Column>,
}

/// An in-memory table: a schema and its partitions in load order.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    /// The table name.
    pub name: String,
    /// The columns' names and types.
    pub fields: Vec<Field>,
    /// The data, in load order.
    pub partitions: Vec<Partition>,
    /// Size of the source in bytes (decompressed CSV text, or the Parquet
    /// files), for `.schema` and the load report; 0 when not loaded.
    pub source_bytes: u64,
    /// What the table was loaded from.
    pub source_format: SourceFormat,
}

/// What a table was loaded from, as reports name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SourceFormat {
    /// Made here (a test's table, an introspection result): no source.
    #[default]
    None,
    /// CSV text, plain or gzipped.
    Csv,
    /// Parquet files.
    Parquet,
    /// Arrow record batches handed over in memory.
    Arrow,
}

impl SourceFormat {
    /// The name reports use: `CSV`, `Parquet`, `Arrow` (empty for none).
    pub fn name(self) -> &'static str {
        match self {
            SourceFormat::None => "",
            SourceFormat::Csv => "CSV",
            SourceFormat::Parquet => "Parquet",
            SourceFormat::Arrow => "Arrow",
        }
    }
}

impl Table {
    /// Total row count.
    pub fn rows(&self) -> usize {
        self.partitions.iter().map(|p| p.rows).sum()
    }

    /// Index of the column named `name`, compared case-insensitively.
    pub fn column_index(&self, name: &str) -> Option<usize> {
        self.fields.iter().position(|f| f.name == name).or_else(|| {
            self.fields
                .iter()
                .position(|f| f.name.eq_ignore_ascii_case(name))
        })
    }

    /// Heap bytes of column `index` summed over partitions.
    pub fn column_heap_bytes(&self, index: usize) -> usize {
        self.partitions
            .iter()
            .map(|p| p.columns[index].heap_bytes())
            .sum()
    }

    /// Heap bytes of all columns.
    pub fn heap_bytes(&self) -> usize {
        (0..self.fields.len())
            .map(|i| self.column_heap_bytes(i))
            .sum()
    }
}
