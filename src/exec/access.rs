//! The access path: which partitions a query reads, and from which rows.
//!
//! Conjuncts of the form `column op literal` are checked against every
//! partition's zone map before anything is compiled; pruned partitions are
//! never touched. A point lookup (`int_column = k` or `IN (…)`) that zone
//! maps leave spread over more than [`INDEX_MIN_PARTITIONS`] partitions goes
//! through a per-column hash index when the caller has one (the database
//! builds it on the column's second lookup, since building costs several
//! scans); its hits in the partitions zone maps keep become their starting
//! selections. Without an index the lookup is an ordinary filtered scan.
//!
//! An index only pays for a selective key. A column whose values repeat
//! [`INDEX_MIN_REPEATS`] times or more on average (by its codecs' bounds on
//! distinct values) is never indexed, and a lookup that hits more than
//! 1 in [`INDEX_MAX_HIT_SHARE`] of the kept rows, or looks up more than
//! [`INDEX_MAX_KEYS`] keys, scans instead: ClickBench's
//! `CounterID = 62` hits 15% of 10M rows, and building its index took
//! 631 ms and 280 MB, after which sorting the 1.5M hits made a 2.5 ms query
//! take 10 ms.

use std::sync::Arc;

use crate::plan::QueryPlan;
use crate::store::{ColumnData, HashIndex, Table, unpack_location};

use super::filter;

/// Supplies hash indexes, cached by the caller.
pub trait IndexProvider: Sync {
    /// The hash index on integer/timestamp column `column` of `table`, or
    /// `None` when the lookup should scan instead. Building an index reads
    /// the column and hashes every row, several times the cost of one
    /// filtered scan, so a provider may build it only once a column has
    /// been looked up before.
    fn hash_index(&self, table: &Arc<Table>, column: usize) -> Option<Arc<HashIndex>>;
}

/// One partition to read, possibly starting from a selection found by an
/// index lookup.
#[derive(Debug, Clone)]
pub struct Unit {
    /// Partition index.
    pub part: usize,
    /// Rows to start from (ascending); `None`: all rows.
    pub initial: Option<Vec<u32>>,
}

/// Which partitions a query reads.
pub struct Access {
    /// The partitions to read, in load order.
    pub units: Vec<Unit>,
    /// Partitions ruled out before compiling, with the reason.
    pub pruned: Vec<(usize, String)>,
    /// How the units were found, for EXPLAIN.
    pub note: Option<(String, String)>,
}

/// Point lookups use the hash index when zone maps leave more than this
/// many partitions to read.
pub const INDEX_MIN_PARTITIONS: usize = 2;

/// A column whose rows hold each value this many times or more on average
/// (rows over the codecs' bound on distinct values) is not indexed.
pub const INDEX_MIN_REPEATS: usize = 4;

/// An index lookup that hits more than 1 in this many of the rows zone maps
/// keep scans instead.
pub const INDEX_MAX_HIT_SHARE: usize = 16;

/// A lookup of more keys than this scans, and never builds an index: a
/// join filter's IN list of TPC-H Q20's 2,127 l_partkey keys counted as
/// lineitem's second lookup, so the query built a 6M-row index (290 ms,
/// against a 23 ms scan) to save 4 ms. The suite's kv lookups take 100.
pub const INDEX_MAX_KEYS: usize = 1024;

/// Whether the values of integer column `column` repeat too often for a
/// point lookup through an index to beat a scan: its rows are at least
/// [`INDEX_MIN_REPEATS`] times an upper bound on its distinct values, the
/// sum over partitions of each one's bound (dictionary size, runs, zone map
/// range, rows).
fn repeats_too_often(table: &Table, column: usize) -> bool {
    let mut rows = 0usize;
    let mut distinct = 0usize;
    for p in &table.partitions {
        let col = &p.columns[column];
        let range = col.zone.int_span().map_or(usize::MAX, |r| {
            usize::try_from(r).map_or(usize::MAX, |r| r.saturating_add(1))
        });
        let bound = match &col.data {
            ColumnData::Const(_) => 1,
            ColumnData::IntDict { values, .. } => values.len(),
            ColumnData::Runs(r) => r.values().len(),
            _ => usize::MAX,
        };
        rows += col.len;
        distinct += bound.min(range).min(col.len);
    }
    rows >= distinct.saturating_mul(INDEX_MIN_REPEATS)
}

/// Chooses the access path of `plan`.
pub fn access_path(plan: &QueryPlan, indexes: &dyn IndexProvider) -> Access {
    let parts = &plan.table.partitions;
    let conjuncts = plan
        .filter
        .as_ref()
        .map(filter::conjuncts)
        .unwrap_or_default();
    let mut pruned = Vec::new();
    let mut keep = Vec::with_capacity(parts.len());
    for (i, p) in parts.iter().enumerate() {
        match conjuncts.iter().find_map(|c| filter::zone_rules_out(c, p)) {
            Some(reason) => pruned.push((i, reason)),
            None => keep.push(i),
        }
    }
    if keep.len() > INDEX_MIN_PARTITIONS
        && let Some((column, name, keys)) = conjuncts.iter().find_map(filter::point_lookup)
        && keys.len() <= INDEX_MAX_KEYS
        && !repeats_too_often(&plan.table, column)
        && let Some(index) = indexes.hash_index(&plan.table, column)
        && let Some(locations) = kept_hits(&index, &keys, &keep, plan)
    {
        let mut units: Vec<Unit> = Vec::new();
        for loc in locations {
            let (part, row) = unpack_location(loc);
            match units.last_mut() {
                Some(u) if u.part == part => {
                    u.initial.get_or_insert_with(Vec::new).push(row as u32)
                }
                _ => units.push(Unit {
                    part,
                    initial: Some(vec![row as u32]),
                }),
            }
        }
        let hit: Vec<usize> = units.iter().map(|u| u.part).collect();
        let pruned = pruned
            .into_iter()
            .chain(
                keep.iter()
                    .filter(|i| hit.binary_search(i).is_err())
                    .map(|&i| (i, format!("hash index on {name} has no matching row here"))),
            )
            .collect();
        let rows: usize = units
            .iter()
            .map(|u| u.initial.as_ref().map_or(0, Vec::len))
            .sum();
        return Access {
            units,
            pruned,
            note: Some((
                format!("hash index lookup on {name} (built on its second lookup)"),
                format!("{} key(s) → {rows} row(s)", keys.len()),
            )),
        };
    }
    Access {
        units: keep
            .into_iter()
            .map(|part| Unit {
                part,
                initial: None,
            })
            .collect(),
        pruned,
        note: None,
    }
}

/// The locations of `keys` in `index` that lie in the partitions `keep`
/// (ascending), sorted and without repeats; `None` when they are more than
/// 1 in [`INDEX_MAX_HIT_SHARE`] of the kept rows, for which a scan is the
/// cheaper way.
fn kept_hits(
    index: &HashIndex,
    keys: &[i64],
    keep: &[usize],
    plan: &QueryPlan,
) -> Option<Vec<u64>> {
    let too_many = |hits: usize, rows: usize| hits.saturating_mul(INDEX_MAX_HIT_SHARE) > rows;
    let hits = keys.iter().map(|&k| index.count(k)).sum();
    if too_many(hits, plan.table.rows()) {
        return None;
    }
    let mut locations = Vec::with_capacity(hits);
    for &k in keys {
        index.lookup(k, &mut locations);
    }
    locations.retain(|&loc| keep.binary_search(&unpack_location(loc).0).is_ok());
    let kept_rows: usize = keep.iter().map(|&i| plan.table.partitions[i].rows).sum();
    if too_many(locations.len(), kept_rows) {
        return None;
    }
    locations.sort_unstable();
    locations.dedup();
    Some(locations)
}
