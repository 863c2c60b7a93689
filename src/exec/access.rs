//! The access path: which partitions a query reads, and from which rows.
//!
//! Conjuncts of the form `column op literal` are checked against every
//! partition's zone map before anything is compiled; pruned partitions are
//! never touched. A point lookup (`int_column = k` or `IN (…)`) that zone
//! maps leave spread over more than [`INDEX_MIN_PARTITIONS`] partitions goes
//! through a per-column hash index when the caller has one (the database
//! builds it on the column's second lookup, since building costs several
//! scans); its hits become the partitions' starting selections. Without an
//! index the lookup is an ordinary filtered scan.

use std::sync::Arc;

use crate::plan::QueryPlan;
use crate::store::{HashIndex, Table, unpack_location};

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
        && let Some(index) = indexes.hash_index(&plan.table, column)
    {
        let mut locations = Vec::new();
        for k in &keys {
            index.lookup(*k, &mut locations);
        }
        locations.sort_unstable();
        locations.dedup();
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
        let pruned = (0..parts.len())
            .filter(|i| hit.binary_search(i).is_err())
            .map(|i| (i, format!("hash index on {name} has no matching row here")))
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
