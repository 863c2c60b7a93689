//! The planner: from a parsed statement to a typed, name-resolved
//! [`QueryPlan`] that the executor specializes per partition.
//!
//! ```text
//! ast::Select ──bind──▶ QueryPlan { filter, aggregate { keys, aggs }, outputs,
//!                                    having, order_by, limit, offset }
//! ```
//! Binding resolves names and types, splits aggregates out of the select
//! list (outputs of an aggregate query are expressions over group keys and
//! aggregate results) and folds constants. Everything that depends on a
//! partition's encodings is left to `exec`.

pub(crate) mod bind;
mod dedup;
pub mod eval;
pub mod expr;
mod rewrite;

use std::fmt::Write as _;
use std::sync::Arc;

use crate::error::Result;
use crate::sql::ast;
use crate::store::Table;

pub use bind::{fold, resolve_table};
pub use expr::{AggCall, AggFunc, BinaryOp, DatePart, Expr, Func};

/// The tables a query can name.
pub trait Catalog {
    /// The table called `name` (case-insensitive), if any.
    fn table(&self, name: &str) -> Option<Arc<Table>>;
    /// All table names, for suggestions.
    fn table_names(&self) -> Vec<String>;
    /// The table a file or table function names (`FROM 'hits.csv'`,
    /// `FROM read_csv(…)`), loaded if need be. By default there is none.
    ///
    /// # Errors
    /// [`crate::Error::Plan`] pointing into `source` when it cannot be
    /// read; loading errors as they come.
    fn file_table(&self, source: &ast::TableRef) -> Result<Arc<Table>> {
        Err(crate::Error::plan_at(
            "files cannot be queried here",
            source.span().start,
        ))
    }
}

/// Group keys and aggregates of an aggregate query, over table columns.
#[derive(Debug, Clone, PartialEq)]
pub struct Aggregate {
    /// Group keys; empty for a global aggregate (which always yields one row).
    pub keys: Vec<Expr>,
    /// Distinct aggregate calls; outputs refer to them by index.
    pub aggs: Vec<AggCall>,
}

/// One ORDER BY key: an index into [`QueryPlan::outputs`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SortKey {
    /// Output column sorted on (may be a hidden one past `visible`).
    pub column: usize,
    /// Descending.
    pub desc: bool,
    /// NULLs before non-NULLs.
    pub nulls_first: bool,
}

/// A bound query.
///
/// # Invariants
/// Without `aggregate`, `filter` and `outputs` are over table columns. With
/// it, `filter` and the aggregate's keys and arguments are over table
/// columns, while `outputs` and `having` are over group keys and aggregate
/// results. `outputs[..visible]` are returned; the rest are sort keys only.
#[derive(Debug, Clone)]
pub struct QueryPlan {
    /// The table read.
    pub table: Arc<Table>,
    /// WHERE.
    pub filter: Option<Expr>,
    /// GROUP BY and aggregates, for an aggregate query.
    pub aggregate: Option<Aggregate>,
    /// Output expressions (visible ones first, then hidden sort keys).
    pub outputs: Vec<Expr>,
    /// Names of the visible outputs.
    pub names: Vec<String>,
    /// Number of visible outputs.
    pub visible: usize,
    /// HAVING.
    pub having: Option<Expr>,
    /// ORDER BY.
    pub order_by: Vec<SortKey>,
    /// LIMIT; negative means the last `-n` rows.
    pub limit: Option<i64>,
    /// OFFSET.
    pub offset: u64,
}

/// Binds a parsed SELECT; `sql` is the original text (output names are
/// taken from it).
///
/// # Errors
/// [`crate::Error::Plan`] pointing at the offending part of the query.
pub fn plan_select(select: &ast::Select, sql: &str, catalog: &dyn Catalog) -> Result<QueryPlan> {
    let mut plan = bind::bind_select(select, sql, catalog)?;
    rewrite::simplify(&mut plan);
    Ok(plan)
}

impl QueryPlan {
    /// Whether the plan reads any column of its table: a plan that reads
    /// none (`SELECT 42`, `count(*)` alone) reads no table rows, however
    /// many partitions it counts.
    pub fn reads_columns(&self) -> bool {
        let column = |e: &Expr| e.any(&|x| matches!(x, Expr::Column { .. }));
        self.filter.iter().any(column)
            || self.outputs.iter().any(column)
            || self.having.iter().any(column)
            || self.aggregate.as_ref().is_some_and(|a| {
                a.keys.iter().any(column) || a.aggs.iter().flat_map(|c| c.arg.iter().chain(&c.arg2)).any(column)
            })
    }

    /// The logical plan as indented text, for EXPLAIN.
    pub fn describe(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "Output: {}", self.names.join(", "));
        if let Some(limit) = self.limit {
            if limit < 0 {
                let _ = writeln!(
                    s,
                    "  Limit: last {} rows in load order",
                    limit.unsigned_abs()
                );
            } else {
                let _ = writeln!(s, "  Limit: {limit} offset {}", self.offset);
            }
        } else if self.offset > 0 {
            let _ = writeln!(s, "  Offset: {}", self.offset);
        }
        if !self.order_by.is_empty() {
            let keys: Vec<String> = self
                .order_by
                .iter()
                .map(|k| {
                    format!(
                        "{}{}",
                        self.outputs[k.column],
                        if k.desc { " DESC" } else { "" }
                    )
                })
                .collect();
            let kind = match self.limit {
                Some(n) if n >= 0 && self.aggregate.is_none() => {
                    format!("TopN (n = {})", (n as u64).saturating_add(self.offset))
                }
                _ => "Sort".to_string(),
            };
            let _ = writeln!(s, "  {kind}: {}", keys.join(", "));
        }
        if let Some(h) = &self.having {
            let _ = writeln!(s, "  Having: {h}");
        }
        if let Some(agg) = &self.aggregate {
            let keys: Vec<String> = agg.keys.iter().map(|e| e.to_string()).collect();
            let aggs: Vec<String> = agg.aggs.iter().map(|a| a.to_string()).collect();
            let _ = writeln!(
                s,
                "  Aggregate: keys [{}] aggregates [{}]",
                keys.join(", "),
                aggs.join(", ")
            );
        }
        if let Some(f) = &self.filter {
            let _ = writeln!(s, "  Filter: {f}");
        }
        let _ = writeln!(
            s,
            "  Scan: {} ({} rows, {} partitions)",
            if self.table.name.is_empty() {
                "(no table)"
            } else {
                &self.table.name
            },
            self.table.rows(),
            self.table.partitions.len()
        );
        s
    }
}
