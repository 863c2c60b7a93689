//! Rows into tables: an operator's output encoded into partitions, so that
//! the single-table pipeline (filters on codes, fixed-array group-bys,
//! top-n) runs on it as it runs on a loaded table.

use std::ops::Range;

use rayon::prelude::*;

use crate::exec::vector::{Array, Data, Strs};

use crate::store::{Bitmap, Column, EntryIds, Field, Partition, SourceFormat, Table};
use crate::types::{DataType, Value};

/// Rows of `columns.len()` values each, read by `get(column, row)`.
pub(crate) trait RowSource: Sync {
    /// Row count.
    fn rows(&self) -> usize;
    /// The value of column `column` in row `row`.
    fn get(&self, column: usize, row: usize) -> &Value;
}

impl RowSource for Vec<Vec<Value>> {
    fn rows(&self) -> usize {
        self.len()
    }
    fn get(&self, column: usize, row: usize) -> &Value {
        &self[row][column]
    }
}

/// `names.len()` columns of `source` as a table named `name`, cut into
/// partitions of `partition_rows` rows, each column in its plain codec
/// (offsets, a dictionary or packed strings, f64, a constant: what every
/// kernel reads in place), not the compressed ones: an intermediate result
/// is read once or a few times, so encoding time counts more than bytes.
/// Duplicate names get `_1`, `_2`, … suffixes.
///
/// Types: a column without a value is typed `null` (as a load types it);
/// a boolean column is stored as the strings `true`/`false` (the store has
/// no boolean codec); an integer column holding a sum past i64
/// (`Value::HugeInt`) becomes a float column.
pub(crate) fn table_from_rows(
    name: &str,
    names: &[String],
    types: &[DataType],
    source: &dyn RowSource,
    partition_rows: usize,
) -> Table {
    encode_table(name, names, types, source, partition_rows, false)
}

/// [`table_from_rows`] with every column encoded by the chooser, as a load
/// encodes it (compressed codecs, shared and table-wide dictionaries): a
/// table the user keeps (`CREATE TABLE … AS`).
pub(crate) fn table_from_rows_compressed(
    name: &str,
    names: &[String],
    types: &[DataType],
    source: &dyn RowSource,
    partition_rows: usize,
) -> Table {
    let mut table = encode_table(name, names, types, source, partition_rows, true);
    crate::store::share_dictionaries(&mut table.partitions);
    crate::store::table_dictionaries(&mut table.partitions);
    table
}

fn encode_table(
    name: &str,
    names: &[String],
    types: &[DataType],
    source: &dyn RowSource,
    partition_rows: usize,
    compressed: bool,
) -> Table {
    let rows = source.rows();
    let types: Vec<DataType> = types
        .iter()
        .enumerate()
        .map(|(c, &t)| match t {
            // No value: no evidence for a type (as a load types it), so
            // the column compares with anything, as its NULLs do.
            _ if (0..rows).all(|r| source.get(c, r).is_null()) => DataType::Null,
            DataType::Bool => DataType::Str,
            DataType::Int if (0..rows).any(|r| matches!(source.get(c, r), Value::HugeInt(_))) => {
                DataType::Float
            }
            t => t,
        })
        .collect();
    let partitions = partitions(rows, partition_rows, types.len(), |c, range| {
        encode(types[c], range.len(), compressed, |r| {
            source.get(c, range.start + r)
        })
    });
    table(name, names, types, partitions)
}

/// `rows` rows cut into partitions of `partition_rows`, in parallel, each
/// of `columns` columns made by `encode(column, rows of the partition)`.
pub(crate) fn partitions(
    rows: usize,
    partition_rows: usize,
    columns: usize,
    encode: impl Fn(usize, Range<usize>) -> Column + Sync,
) -> Vec<Partition> {
    let per = partition_rows.max(1);
    let starts: Vec<usize> = (0..rows).step_by(per).collect();
    starts
        .par_iter()
        .map(|&start| {
            let range = start..per.min(rows - start) + start;
            Partition {
                rows: range.len(),
                first_row: start,
                columns: (0..columns)
                    .into_par_iter()
                    .map(|c| encode(c, range.clone()))
                    .collect(),
            }
        })
        .collect()
}

/// A table of `partitions` with fields `names` (made unique) of `types`.
pub(crate) fn table(
    name: &str,
    names: &[String],
    types: Vec<DataType>,
    partitions: Vec<Partition>,
) -> Table {
    Table {
        name: name.to_string(),
        fields: unique(names)
            .into_iter()
            .zip(&types)
            .map(|(name, &dtype)| Field {
                name,
                dtype,
                note: None,
            })
            .collect(),
        partitions,
        source_bytes: 0,
        source_format: SourceFormat::None,
    }
}

/// [`table_from_rows`] from whole columns (`rows` each): the join's
/// gathered columns, encoded partition by partition straight from their
/// buffers, with no `Value` per cell. Types as [`table_from_rows`].
pub(crate) fn table_from_arrays(
    name: &str,
    names: &[String],
    types: &[DataType],
    arrays: &[Array<'static>],
    rows: usize,
    partition_rows: usize,
) -> Table {
    let types: Vec<DataType> = types
        .iter()
        .zip(arrays)
        .map(|(&t, a)| match t {
            // The plan's type stands even when no row has a value (an
            // empty join, or a side an outer join padded with NULLs), so
            // expressions over the result bind as they do over a full one.
            DataType::Bool => DataType::Str,
            // A sum past i64 made the column float.
            DataType::Int if a.dtype == DataType::Float => DataType::Float,
            t => t,
        })
        .collect();
    let partitions = partitions(rows, partition_rows, types.len(), |c, range| {
        encode_array(types[c], &arrays[c], range)
    });
    table(name, names, types, partitions)
}

/// Rows `range` of `a` as one plain-codec column of type `dtype`.
pub(crate) fn encode_array(dtype: DataType, a: &Array<'static>, range: Range<usize>) -> Column {
    let len = range.len();
    let validity = match &a.validity {
        Some(v) => {
            let v = v.dense();
            Bitmap::from_fn(len, |j| v.get(range.start + j))
        }
        None => Bitmap::new(len, true),
    };
    if len == 0 || validity.none_set() || dtype == DataType::Null {
        return Column::all_null(dtype, len);
    }
    match (dtype, &a.data) {
        (
            DataType::Int | DataType::Timestamp | DataType::Date | DataType::Interval,
            Data::Int(v),
        ) => Column::encode_ints_plain(dtype, &v[range], Some(validity)),
        (DataType::Float, Data::Float(v)) => {
            Column::encode_floats_plain(v[range].to_vec(), Some(validity))
        }
        (DataType::Float, Data::Int(v)) => Column::encode_floats_plain(
            v[range].iter().map(|&x| x as f64).collect(),
            Some(validity),
        ),
        // Coded rows (a join's gather of a small column): each entry's
        // string looked up once, not hashed per row.
        (_, Data::Str(Strs::Coded { entries, codes })) if entries.len() <= 4 * len => {
            let mut ids_of = EntryIds::default();
            ids_of.source(entries.len());
            let mut ids = Vec::with_capacity(len);
            for (j, i) in range.enumerate() {
                let id = if validity.get(j) {
                    ids_of.id(codes[i] as usize, |c| entries.get(c))
                } else {
                    Some(0)
                };
                ids.push(id.unwrap_or(0));
            }
            Column::encode_string_ids_plain(&ids_of.into_distinct(), &ids, Some(validity))
        }
        (_, Data::Str(s)) => {
            let values: Vec<&str> = range.map(|i| s.get(i)).collect();
            Column::encode_strings_plain(&values, Some(validity))
        }
        (_, Data::Bool(b)) => {
            let values: Vec<&str> = range
                .map(|i| if b.get(i) { "true" } else { "false" })
                .collect();
            Column::encode_strings_plain(&values, Some(validity))
        }
        // A buffer of another kind than the type (not made by the
        // executor): through values.
        _ => {
            let values: Vec<Value> = range.map(|i| a.value(i)).collect();
            encode(dtype, len, false, |r| &values[r])
        }
    }
}

/// `names` with later duplicates (compared case-insensitively) renamed
/// `name_1`, `name_2`, … as DuckDB names a subquery's repeated columns.
pub(crate) fn unique(names: &[String]) -> Vec<String> {
    let mut seen: std::collections::HashSet<String> = std::collections::HashSet::new();
    names
        .iter()
        .map(|n| {
            let mut name = n.clone();
            let mut k = 0;
            while !seen.insert(name.to_ascii_lowercase()) {
                k += 1;
                name = format!("{n}_{k}");
            }
            name
        })
        .collect()
}

/// One column of `len` rows of type `dtype` from `get(row)`.
fn encode<'v>(
    dtype: DataType,
    len: usize,
    compressed: bool,
    get: impl Fn(usize) -> &'v Value,
) -> Column {
    let validity = Bitmap::from_fn(len, |r| !get(r).is_null());
    if len == 0 || validity.none_set() || dtype == DataType::Null {
        return Column::all_null(dtype, len);
    }
    match dtype {
        DataType::Int | DataType::Timestamp | DataType::Date | DataType::Interval => {
            let values: Vec<i64> = (0..len)
                .map(|r| match get(r) {
                    Value::Int(v) | Value::Timestamp(v) | Value::Date(v) | Value::Interval(v) => *v,
                    _ => 0,
                })
                .collect();
            if compressed {
                Column::encode_ints(dtype, &values, Some(validity))
            } else {
                Column::encode_ints_plain(dtype, &values, Some(validity))
            }
        }
        DataType::Float => {
            let values: Vec<f64> = (0..len)
                .map(|r| match get(r) {
                    Value::Float(v) => *v,
                    Value::Int(v) => *v as f64,
                    Value::HugeInt(v) => *v as f64,
                    _ => 0.0,
                })
                .collect();
            if compressed {
                Column::encode_floats(values, Some(validity))
            } else {
                Column::encode_floats_plain(values, Some(validity))
            }
        }
        DataType::Str | DataType::Bool | DataType::Null => {
            let values: Vec<&str> = (0..len)
                .map(|r| match get(r) {
                    Value::Str(s) => s.as_ref(),
                    Value::Bool(true) => "true",
                    Value::Bool(false) => "false",
                    _ => "",
                })
                .collect();
            if compressed {
                Column::encode_strings(&values, Some(validity))
            } else {
                Column::encode_strings_plain(&values, Some(validity))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_round_trip_through_partitions() {
        let rows: Vec<Vec<Value>> = (0..10)
            .map(|i| {
                vec![
                    if i % 3 == 0 {
                        Value::Null
                    } else {
                        Value::Int(i)
                    },
                    Value::Float(i as f64 / 4.0),
                    Value::str(&format!("s{}", i % 2)),
                    Value::Bool(i % 2 == 0),
                ]
            })
            .collect();
        let names: Vec<String> = ["a", "b", "a", "d"].iter().map(|s| s.to_string()).collect();
        let types = [
            DataType::Int,
            DataType::Float,
            DataType::Str,
            DataType::Bool,
        ];
        let table = table_from_rows("t", &names, &types, &rows, 4);
        assert_eq!(table.partitions.len(), 3);
        assert_eq!(table.rows(), 10);
        let fields: Vec<&str> = table.fields.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(fields, ["a", "b", "a_1", "d"]);
        assert_eq!(table.fields[3].dtype, DataType::Str);
        for p in &table.partitions {
            for r in 0..p.rows {
                assert_eq!(p.columns[0].value(r), rows[p.first_row + r][0]);
                assert_eq!(p.columns[2].value(r), rows[p.first_row + r][2]);
            }
        }
    }
}
