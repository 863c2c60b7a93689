//! Introspection as SQL: `DESCRIBE`, `SHOW TABLES` and `SUMMARIZE` answer
//! with ordinary [`QueryResult`]s, so every output format shows them.
//!
//! # Design
//! `DESCRIBE` and `SHOW TABLES` read what the store already knows: types,
//! codecs, zone-map NULL counts and heap sizes. `SUMMARIZE` computes its
//! statistics with the engine's own machinery: one generated aggregate
//! query per table (`min`, `max`, `approx_count_distinct`, `count` and, for
//! numbers, `avg` of every column) runs through the planner and the
//! executor's parallel partition pipelines, while the quartiles come from a
//! sample of the rows, sorted per column on the rayon pool at the same time.
//!
//! The sample is exact (every row) for tables of at most [`SAMPLE_ROWS`]
//! rows. Larger tables are sampled uniformly: each row is kept when a hash of
//! its position falls below `SAMPLE_ROWS / rows` of the hash range (a
//! Bernoulli sample, as ClickHouse's `SAMPLE` keys on a hash), so about
//! `SAMPLE_ROWS` rows are read, every row with the same probability, and the
//! same table always gives the same quartiles.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use rayon::prelude::*;

use crate::control::format_bytes;
use crate::engine::QueryResult;
use crate::error::{Error, Result};
use crate::exec;
use crate::plan::{self, Catalog, QueryPlan};
use crate::sql::{self, ast};
use crate::store::Table;
use crate::types::{DataType, Value};

/// Rows that `SUMMARIZE` reads for quartiles: a table up to this size is
/// read whole (exact quartiles), a larger one sampled down to about this
/// many rows.
pub const SAMPLE_ROWS: usize = 100_000;

/// A result with the given columns and rows (no rows scanned, no time).
fn result(columns: &[(&str, DataType)], rows: Vec<Vec<Value>>) -> QueryResult {
    QueryResult {
        columns: columns.iter().map(|(n, _)| n.to_string()).collect(),
        types: columns.iter().map(|(_, t)| *t).collect(),
        rows,
        rows_scanned: 0,
        elapsed: Duration::ZERO,
    }
}

fn text(s: impl AsRef<str>) -> Value {
    Value::str(s.as_ref())
}

fn int(n: usize) -> Value {
    Value::Int(i64::try_from(n).unwrap_or(i64::MAX))
}

/// The codecs column `column` uses, each with the number of partitions that
/// chose it, most common first (`[("dict u8", 150), ("const", 3)]`).
pub fn encodings(table: &Table, column: usize) -> Vec<(String, usize)> {
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for p in &table.partitions {
        *counts.entry(p.columns[column].encoding_name()).or_default() += 1;
    }
    let mut encodings: Vec<(String, usize)> = counts.into_iter().collect();
    encodings.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    encodings
}

/// `dict u8 (150), const (3)`, plus `+ hash index` when one is built.
fn encoding_text(table: &Table, column: usize, indexed: bool) -> String {
    let mut parts: Vec<String> = encodings(table, column)
        .into_iter()
        .map(|(e, n)| format!("{e} ({n})"))
        .collect();
    if indexed {
        parts.push("+ hash index".into());
    }
    parts.join(", ")
}

/// `DESCRIBE table`: per column its name, type, encodings (with partition
/// counts), NULL count (from the zone maps) and memory (with its hash index
/// when built; `index_bytes` says how large).
pub fn describe_table(table: &Table, index_bytes: &dyn Fn(usize) -> Option<usize>) -> QueryResult {
    let rows = table
        .fields
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let nulls: usize = table
                .partitions
                .iter()
                .map(|p| p.columns[i].zone.null_count)
                .sum();
            let index = index_bytes(i);
            vec![
                text(&f.name),
                text(f.dtype.name()),
                text(encoding_text(table, i, index.is_some())),
                int(nulls),
                text(format_bytes(
                    table.column_heap_bytes(i) + index.unwrap_or(0),
                )),
            ]
        })
        .collect();
    result(
        &[
            ("column_name", DataType::Str),
            ("column_type", DataType::Str),
            ("encoding", DataType::Str),
            ("null_count", DataType::Int),
            ("memory", DataType::Str),
        ],
        rows,
    )
}

/// `DESCRIBE SELECT …`: the name and type of every output column.
pub fn describe_query(plan: &QueryPlan) -> QueryResult {
    describe_columns(&plan.names, &exec::output_types(plan))
}

/// `DESCRIBE SELECT …` from a result's names and types.
pub fn describe_columns(names: &[String], types: &[DataType]) -> QueryResult {
    let rows = names
        .iter()
        .zip(types)
        .map(|(name, t)| vec![text(name), text(t.name())])
        .collect();
    result(
        &[
            ("column_name", DataType::Str),
            ("column_type", DataType::Str),
        ],
        rows,
    )
}

/// `SHOW TABLES`: per table (in the given order) its name, rows, columns
/// and memory.
pub fn show_tables(tables: &[(String, Arc<Table>)]) -> QueryResult {
    let rows = tables
        .iter()
        .map(|(name, t)| {
            vec![
                text(name),
                int(t.rows()),
                int(t.fields.len()),
                text(format_bytes(t.heap_bytes())),
            ]
        })
        .collect();
    result(
        &[
            ("name", DataType::Str),
            ("rows", DataType::Int),
            ("columns", DataType::Int),
            ("memory", DataType::Str),
        ],
        rows,
    )
}

/// A catalog of one table, whatever name it is asked for: the generated
/// query of [`summarize`] reads a table that may have no name in the
/// database (a file table).
struct OneTable(Arc<Table>);

impl Catalog for OneTable {
    fn table(&self, _: &str) -> Option<Arc<Table>> {
        Some(self.0.clone())
    }

    fn table_names(&self) -> Vec<String> {
        vec![self.0.name.clone()]
    }
}

/// The aggregates [`summarize`] asks of every column, in query order.
const STATS: [&str; 5] = ["min", "max", "approx_count_distinct", "count", "avg"];

/// `SELECT min(a), max(a), approx_count_distinct(a), count(a), avg(a), … FROM t`
/// (`avg` only for numeric columns), with column names quoted as needed.
fn stats_query(table: &Table) -> String {
    let mut items = Vec::new();
    for f in &table.fields {
        let name = ast::Ident {
            name: f.name.clone(),
            span: ast::Span::default(),
        };
        for stat in STATS {
            if stat != "avg" || f.dtype.is_numeric() {
                items.push(format!("{stat}({name})"));
            }
        }
    }
    format!("SELECT {} FROM t", items.join(", "))
}

/// 64 well-mixed bits of `x`: the finalizer of SplitMix64 (Steele, Lea and
/// Flood, 2014), used to pick sample rows.
fn mix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The rows the quartiles are computed from, as (partition, row) pairs:
/// every row up to [`SAMPLE_ROWS`], else a Bernoulli sample of about that
/// many (see the module docs).
fn sample_rows(table: &Table) -> Vec<(usize, usize)> {
    let total = table.rows();
    let keep_all = total <= SAMPLE_ROWS;
    let threshold = ((SAMPLE_ROWS as f64 / total.max(1) as f64) * u64::MAX as f64) as u64;
    let mut out = Vec::with_capacity(total.min(SAMPLE_ROWS + SAMPLE_ROWS / 10));
    for (pi, p) in table.partitions.iter().enumerate() {
        for row in 0..p.rows {
            if keep_all || mix((p.first_row + row) as u64) < threshold {
                out.push((pi, row));
            }
        }
    }
    out
}

/// The 25th, 50th and 75th percentiles of column `column` over the sampled
/// rows, as PostgreSQL's `percentile_disc` defines them (the first value
/// whose rank reaches the fraction), for numbers and timestamps; NULLs for
/// other types and for columns without values.
fn quartiles(table: &Table, column: usize, rows: &[(usize, usize)]) -> [Value; 3] {
    let dtype = table.fields[column].dtype;
    if !(dtype.is_numeric() || dtype.is_temporal()) {
        return [Value::Null, Value::Null, Value::Null];
    }
    let mut values: Vec<Value> = rows
        .iter()
        .map(|&(p, r)| table.partitions[p].columns[column].value(r))
        .filter(|v| !v.is_null())
        .collect();
    if values.is_empty() {
        return [Value::Null, Value::Null, Value::Null];
    }
    values.sort_unstable_by(|a, b| a.total_cmp(b));
    let n = values.len();
    [0.25, 0.5, 0.75].map(|q| {
        let rank = (q * n as f64).ceil() as usize;
        values[rank.clamp(1, n) - 1].clone()
    })
}

/// Runs a plan to its rows and the table rows it scanned (the engine's
/// executor, with the database's cancel token, memory budget and indexes).
pub type RunPlan<'a> = dyn Fn(&QueryPlan) -> Result<(Vec<Vec<Value>>, usize)> + Sync + 'a;

/// `SUMMARIZE table`: per column its name, type, encodings, min, max,
/// approximate distinct count (HyperLogLog), average (numbers), quartiles
/// (numbers and timestamps; see the module docs for the sample), non-NULL
/// count and NULL percentage (two decimals). Runs on the current rayon pool.
///
/// # Errors
/// Whatever `run` fails with on the generated aggregate query (it reads
/// only the table's own columns, so only cancellation or the memory limit).
pub fn summarize(table: &Arc<Table>, run: &RunPlan<'_>) -> Result<QueryResult> {
    let run_stats = || -> Result<(Vec<Value>, usize)> {
        let sql = stats_query(table);
        let statement = sql::parse(&sql)?;
        let ast::Statement::Select(select) = statement else {
            return Err(Error::Internal("summarize query is not a SELECT".into()));
        };
        let plan = plan::plan_select(&select, &sql, &OneTable(table.clone()))?;
        let (mut rows, rows_scanned) = run(&plan)?;
        let row = rows
            .pop()
            .ok_or_else(|| Error::Internal("summarize query returned no row".into()))?;
        Ok((row, rows_scanned))
    };
    let sample_quartiles = || {
        let rows = sample_rows(table);
        (0..table.fields.len())
            .into_par_iter()
            .map(|i| quartiles(table, i, &rows))
            .collect::<Vec<_>>()
    };
    let (stats, quartiles) = rayon::join(run_stats, sample_quartiles);
    let (stats, rows_scanned) = stats?;
    let total = table.rows();
    let mut next = stats.into_iter();
    let mut rows = Vec::with_capacity(table.fields.len());
    for (i, (f, [q25, q50, q75])) in table.fields.iter().zip(quartiles).enumerate() {
        let as_text = |v: Value| if v.is_null() { v } else { text(v.to_string()) };
        let min = as_text(next.next().unwrap_or(Value::Null));
        let max = as_text(next.next().unwrap_or(Value::Null));
        let distinct = next.next().unwrap_or(Value::Null);
        let count = next.next().unwrap_or(Value::Null);
        let avg = if f.dtype.is_numeric() {
            next.next().unwrap_or(Value::Null)
        } else {
            Value::Null
        };
        let null_percentage = match count {
            Value::Int(c) if total > 0 => {
                let pct = (total as f64 - c as f64) * 100.0 / total as f64;
                Value::Float((pct * 100.0).round() / 100.0)
            }
            _ => Value::Null,
        };
        rows.push(vec![
            text(&f.name),
            text(f.dtype.name()),
            text(encoding_text(table, i, false)),
            min,
            max,
            distinct,
            avg,
            as_text(q25),
            as_text(q50),
            as_text(q75),
            count,
            null_percentage,
        ]);
    }
    let mut summary = result(
        &[
            ("column_name", DataType::Str),
            ("column_type", DataType::Str),
            ("encoding", DataType::Str),
            ("min", DataType::Str),
            ("max", DataType::Str),
            ("approx_unique", DataType::Int),
            ("avg", DataType::Float),
            ("q25", DataType::Str),
            ("q50", DataType::Str),
            ("q75", DataType::Str),
            ("count", DataType::Int),
            ("null_percentage", DataType::Float),
        ],
        rows,
    );
    summary.rows_scanned = rows_scanned;
    Ok(summary)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{Column, Field, Partition};

    fn int_table(values: &[Option<i64>], partition_rows: usize) -> Table {
        let mut partitions = Vec::new();
        for (n, chunk) in values.chunks(partition_rows).enumerate() {
            let ints: Vec<i64> = chunk.iter().map(|v| v.unwrap_or(0)).collect();
            let valid: Vec<bool> = chunk.iter().map(Option::is_some).collect();
            let validity = valid
                .contains(&false)
                .then(|| crate::store::Bitmap::from_bools(&valid));
            partitions.push(Partition {
                rows: chunk.len(),
                first_row: n * partition_rows,
                columns: vec![Column::encode_ints(DataType::Int, &ints, validity)],
            });
        }
        Table {
            name: "t".into(),
            fields: vec![Field {
                name: "x".into(),
                dtype: DataType::Int,
                note: None,
            }],
            partitions,
            source_bytes: 0,
            source_format: Default::default(),
        }
    }

    #[test]
    fn quartiles_follow_percentile_disc() {
        // PostgreSQL: percentile_disc(q) is the first value whose rank
        // reaches q·n.
        let cases: [(&[i64], [i64; 3]); 5] = [
            (&[7], [7, 7, 7]),
            (&[1, 2], [1, 1, 2]),
            (&[1, 2, 3, 4], [1, 2, 3]),
            (&[5, 1, 4, 2, 3], [2, 3, 4]),
            (&[6, 1, 5, 2, 4, 3], [2, 3, 5]),
        ];
        for (values, expected) in cases {
            let some: Vec<Option<i64>> = values.iter().copied().map(Some).collect();
            let t = int_table(&some, 2);
            let rows = sample_rows(&t);
            assert_eq!(
                quartiles(&t, 0, &rows),
                expected.map(Value::Int),
                "{values:?}"
            );
        }
        let t = int_table(&[None, Some(3), None, Some(1)], 3);
        assert_eq!(
            quartiles(&t, 0, &sample_rows(&t)),
            [Value::Int(1), Value::Int(1), Value::Int(3)]
        );
        let t = int_table(&[None, None], 1);
        assert_eq!(
            quartiles(&t, 0, &sample_rows(&t)),
            [Value::Null, Value::Null, Value::Null]
        );
    }

    #[test]
    fn large_tables_are_sampled_uniformly() {
        let rows = 1_000_000;
        let values: Vec<Option<i64>> = (0..rows as i64).map(Some).collect();
        let t = int_table(&values, 65_536);
        let sample = sample_rows(&t);
        // About SAMPLE_ROWS rows (a binomial count: within 2%).
        let n = sample.len();
        assert!(
            n.abs_diff(SAMPLE_ROWS) < SAMPLE_ROWS / 50,
            "{n} rows sampled"
        );
        // Spread evenly: each tenth of the table holds about a tenth.
        let mut tenths = [0usize; 10];
        for &(p, r) in &sample {
            tenths[(t.partitions[p].first_row + r) * 10 / rows] += 1;
        }
        for count in tenths {
            assert!(count.abs_diff(n / 10) < n / 50, "{tenths:?}");
        }
        // Quartiles of 0..1M from the sample are close to the truth.
        let [q25, q50, q75] = quartiles(&t, 0, &sample);
        for (q, truth) in [(q25, 250_000), (q50, 500_000), (q75, 750_000)] {
            let Value::Int(q) = q else { panic!("{q:?}") };
            assert!(q.abs_diff(truth) < 5_000, "{q} vs {truth}");
        }
    }

    #[test]
    fn the_stats_query_quotes_names_and_averages_only_numbers() {
        let mut t = int_table(&[Some(1)], 1);
        t.fields[0].name = "select".into();
        t.fields.push(Field {
            name: "s".into(),
            dtype: DataType::Str,
            note: None,
        });
        assert_eq!(
            stats_query(&t),
            "SELECT min(\"select\"), max(\"select\"), approx_count_distinct(\"select\"), \
             count(\"select\"), avg(\"select\"), min(s), max(s), approx_count_distinct(s), \
             count(s) FROM t"
        );
    }
}
