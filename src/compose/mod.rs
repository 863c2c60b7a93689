//! Composed queries: `WITH`, subqueries, joins, set operations and
//! `SELECT DISTINCT`, built from the single-table pipeline.
//!
//! ```text
//! Query ─▶ CTEs ─▶ materialized tables (in a scope over the catalog)
//!       ─▶ body: SELECT | left UNION/INTERSECT/EXCEPT right
//! SELECT ─▶ subquery expressions run first, replaced by constants
//!        ─▶ FROM a plain table: bind + the fused per-partition pipeline
//!        ─▶ FROM a subquery: its rows encoded as a table, then as above
//!        ─▶ FROM joins: a filtered scan per input (pushed-down conjuncts,
//!           only the columns used), hash joins on row ids in a greedy
//!           order, the joined columns encoded as a table, then the
//!           SELECT's grouping, HAVING, ORDER BY and LIMIT as above
//! ```
//! Every intermediate result that a later step reads is encoded into
//! partitions by the load's codec chooser
//! ([`materialize::table_from_rows`]), so the grouping, filtering and
//! top-n above a join or in an outer query run on codes exactly as they do
//! on a loaded table. Subqueries are run once, never per outer row; a
//! correlated subquery (one that names a column of the outer query) is
//! refused with an error pointing at that column.

mod correlated;
mod join;
mod keys;
pub(crate) mod materialize;
mod merge;
mod quantified;
mod window;

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use crate::control::{MemoryBudget, Reservation};
use crate::error::{Error, Result};
use crate::exec;
use crate::plan::{self, Catalog, QueryPlan};
use crate::sql::ast::{
    self, Expr, ExprKind, FromItem, Ident, JoinConstraint, Literal, Query, Select, SelectItem,
    SetExpr, SetOp, Span, TableRef, TypeName,
};
use crate::store::Table;
use crate::types::{DataType, Value, format_timestamp};

/// What the composer needs of the database: its tables, and running one
/// bound single-table plan.
pub(crate) trait Engine: Sync {
    /// Runs `plan` to its rows; also returns the table rows it read.
    ///
    /// # Errors
    /// The executor's errors (overflow, cancellation, the memory limit).
    fn run_plan(&self, plan: &QueryPlan) -> Result<(Vec<Vec<Value>>, usize)>;
    /// Runs `plan` to whole columns ([`exec::execute_columns`]): the
    /// arrays, the row count and the table rows read.
    ///
    /// # Errors
    /// As [`Engine::run_plan`].
    fn run_plan_columns(
        &self,
        plan: &QueryPlan,
        join_filters: &[exec::join_filter::JoinFilter],
    ) -> Result<Columns>;
    /// [`Error::Cancelled`] once the statement is cancelled.
    fn check(&self) -> Result<()>;
    /// The budget a statement's joins hold their build sides and joined
    /// rows against ([`Composer::reserve`]).
    fn memory(&self) -> Arc<MemoryBudget>;
    /// The executor's path thresholds (the composer's joins read theirs
    /// there too).
    fn exec_options(&self) -> exec::ExecOptions {
        exec::ExecOptions::default()
    }
    /// Rows per partition of an encoded intermediate result.
    fn partition_rows(&self) -> usize {
        crate::ingest::DEFAULT_PARTITION_ROWS
    }
}

/// An operator's output: named, typed rows.
#[derive(Debug, Clone)]
pub(crate) struct Relation {
    /// Column names.
    pub names: Vec<String>,
    /// Column types.
    pub types: Vec<DataType>,
    /// Rows of `names.len()` values.
    pub rows: Vec<Vec<Value>>,
    /// Table rows read to make them, over every scan.
    pub rows_scanned: usize,
}

/// What a SELECT made: rows, or (when asked for one by name) a table.
pub(crate) enum Produced {
    Rows(Relation),
    /// The answer encoded as a table, with the table rows read to make it.
    Table(Table, usize),
}

/// A relation as whole columns: one array per column, `rows` each.
#[derive(Default)]
pub(crate) struct Columns {
    /// Column names.
    pub names: Vec<String>,
    /// Column types.
    pub types: Vec<DataType>,
    /// The columns.
    pub arrays: Vec<exec::vector::Array<'static>>,
    /// Row count.
    pub rows: usize,
    /// Table rows read to make them.
    pub rows_scanned: usize,
}

impl Columns {
    /// Rows (`types.len()` values each) as columns.
    pub(crate) fn from_relation(rel: &Relation) -> Columns {
        let (types, rows) = (&rel.types, &rel.rows);
        let arrays = types
            .iter()
            .enumerate()
            .map(|(c, &t)| {
                let values: Vec<Value> = rows.iter().map(|r| r[c].clone()).collect();
                exec::vector::Array::from_result_values(t, &values)
            })
            .collect();
        Columns {
            names: rel.names.clone(),
            types: rel.types.clone(),
            arrays,
            rows: rows.len(),
            rows_scanned: rel.rows_scanned,
        }
    }
}

/// True when `select` needs this module: a FROM that is not one table, a
/// subquery in an expression, or DISTINCT.
pub(crate) fn needs_composition(select: &Select) -> bool {
    if select.distinct || select.group_by_all || window::has_windows(select) {
        return true;
    }
    if !matches!(select.from, None | Some(FromItem::Table { .. })) {
        return true;
    }
    let mut found = false;
    for_each_expr(select, &mut |e| {
        found |= any_node(e, &|x| {
            matches!(
                x.kind,
                ExprKind::Subquery(_)
                    | ExprKind::InSubquery { .. }
                    | ExprKind::Quantified { .. }
                    | ExprKind::Exists(_)
            )
        })
    });
    found
}

/// Tables a query adds to the catalog (CTEs, subqueries in FROM, join
/// results), looked up before it.
pub(crate) struct Scope<'p> {
    parent: &'p dyn Catalog,
    tables: Vec<(String, Arc<Table>)>,
}

impl<'p> Scope<'p> {
    /// A scope over `parent` with no tables of its own.
    pub(crate) fn new(parent: &'p dyn Catalog) -> Scope<'p> {
        Scope {
            parent,
            tables: Vec::new(),
        }
    }

    fn child(&self) -> Scope<'_> {
        Scope::new(self)
    }

    fn add(&mut self, name: &str, table: Table) -> Arc<Table> {
        let table = Arc::new(table);
        self.tables.push((name.to_string(), table.clone()));
        table
    }
}

impl Catalog for Scope<'_> {
    fn table(&self, name: &str) -> Option<Arc<Table>> {
        self.tables
            .iter()
            .rev()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, t)| t.clone())
            .or_else(|| self.parent.table(name))
    }

    fn table_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .tables
            .iter()
            .filter(|(n, _)| !n.starts_with("__"))
            .map(|(n, _)| n.clone())
            .collect();
        names.extend(self.parent.table_names());
        names
    }

    fn file_table(&self, source: &TableRef) -> Result<Arc<Table>> {
        self.parent.file_table(source)
    }
}

/// Runs composed queries over one statement's text.
pub(crate) struct Composer<'e> {
    engine: &'e dyn Engine,
    sql: &'e str,
    /// One line per operator run, for EXPLAIN (indented by nesting).
    trace: Mutex<Vec<String>>,
    depth: Mutex<usize>,
    /// Numbers internal table names.
    counter: Mutex<usize>,
    /// What the statement's joins hold (their hash tables and joined row
    /// ids) against the engine's memory budget, released when the
    /// statement ends.
    held: Mutex<Reservation>,
    /// EXPLAIN without ANALYZE: every pipeline is compiled and described,
    /// none runs; each gives no rows, so the operators above it run on
    /// empty inputs and read no table data.
    dry: bool,
}

impl<'e> Composer<'e> {
    /// A composer for the statement `sql`.
    pub(crate) fn new(engine: &'e dyn Engine, sql: &'e str) -> Composer<'e> {
        Composer {
            engine,
            sql,
            trace: Mutex::new(Vec::new()),
            depth: Mutex::new(0),
            counter: Mutex::new(0),
            held: Mutex::new(Reservation::empty(&engine.memory(), "query")),
            dry: false,
        }
    }

    /// A composer for EXPLAIN of the statement `sql`: its pipelines are
    /// compiled and described in the trace, never run (see `dry`).
    pub(crate) fn explaining(engine: &'e dyn Engine, sql: &'e str) -> Composer<'e> {
        Composer {
            dry: true,
            ..Composer::new(engine, sql)
        }
    }

    /// Notes `plan`'s compiled pipeline (EXPLAIN's text, one level deeper)
    /// under `head`, for a composer that does not run it.
    fn note_compiled(&self, head: String, plan: &QueryPlan) -> Result<()> {
        self.note(head);
        let text = exec::explain(plan, &self.engine.exec_options())?;
        for line in text.lines() {
            self.note(format!("  {line}"));
        }
        Ok(())
    }

    /// Holds `bytes` more until the statement ends.
    ///
    /// # Errors
    /// [`Error::MemoryLimit`] naming `what` when the budget has no room:
    /// nothing of the statement is kept, and the session goes on.
    fn reserve(&self, bytes: usize, what: impl FnOnce() -> String) -> Result<()> {
        match self.held.lock() {
            Ok(mut held) => held.grow(bytes, what),
            Err(_) => Err(Error::Internal("a join's reservation was poisoned".into())),
        }
    }

    /// The operator lines recorded so far.
    pub(crate) fn trace(&self) -> Vec<String> {
        self.trace.lock().map(|t| t.clone()).unwrap_or_default()
    }

    fn note(&self, line: String) {
        let depth = self.depth.lock().map(|d| *d).unwrap_or(0);
        if let Ok(mut t) = self.trace.lock() {
            t.push(format!("{}{line}", "  ".repeat(depth)));
        }
    }

    fn nest<T>(&self, f: impl FnOnce() -> Result<T>) -> Result<T> {
        if let Ok(mut d) = self.depth.lock() {
            *d += 1;
        }
        let out = f();
        if let Ok(mut d) = self.depth.lock() {
            *d -= 1;
        }
        out
    }

    fn internal_name(&self, what: &str) -> String {
        let mut n = self.counter.lock().unwrap_or_else(|e| e.into_inner());
        *n += 1;
        format!("__{what}{n}")
    }

    /// Runs a whole query: its CTEs, its body, its ORDER BY and LIMIT.
    ///
    /// # Errors
    /// Plan errors with the offset of the offending text; the executor's.
    pub(crate) fn run_query(&self, query: &Query, scope: &Scope<'_>) -> Result<Relation> {
        self.run_query_for(query, scope, None)
    }

    /// [`Composer::run_query`] for a reader that uses only the output
    /// columns named in `needed` (lower case): a lone SELECT may leave the
    /// others out (the rest of the result is unchanged), so a subquery in
    /// FROM computes and encodes only what its reader uses.
    pub(crate) fn run_query_for(
        &self,
        query: &Query,
        scope: &Scope<'_>,
        needed: Option<&HashSet<String>>,
    ) -> Result<Relation> {
        self.engine.check()?;
        let mut scope = scope.child();
        let mut scanned = 0;
        for cte in &query.ctes {
            let rel = self.nest(|| self.run_query(&cte.query, &scope))?;
            scanned += rel.rows_scanned;
            let table = self.materialize(&cte.name.name, &rel);
            self.note(format!(
                "WITH {}: {} rows × {} columns, encoded as a table",
                cte.name.name,
                thousands(rel.rows.len()),
                rel.names.len()
            ));
            scope.add(&cte.name.name, table);
        }
        let plain = query.order_by.is_empty() && query.limit.is_none() && query.offset.is_none();
        let mut rel = match (&query.body, needed) {
            (SetExpr::Select(select), Some(needed)) if plain && !select.distinct => {
                self.run_select(select, &scope, Some(needed))?
            }
            (body, _) => self.run_set(body, &scope)?,
        };
        rel.rows_scanned += scanned;
        if plain {
            return Ok(rel);
        }
        // ORDER BY / LIMIT of a set operation: over its rows as a table.
        let name = self.internal_name("set");
        let table = self.materialize(&name, &rel);
        scope.add(&name, table);
        let from = FromItem::Table {
            table: TableRef::Named(Ident {
                name,
                span: query.span,
            }),
            alias: None,
        };
        let select = Select {
            order_by: query.order_by.clone(),
            limit: query.limit,
            offset: query.offset,
            ..Select::over(
                vec![SelectItem::Wildcard(query.span, Default::default())],
                from,
                None,
                query.span,
            )
        };
        let mut out = self.run_simple(&select, &scope, None)?;
        out.rows_scanned += rel.rows_scanned;
        Ok(out)
    }

    fn run_set(&self, body: &SetExpr, scope: &Scope<'_>) -> Result<Relation> {
        match body {
            SetExpr::Select(select) => self.run_select(select, scope, None),
            SetExpr::Operation {
                op,
                all,
                left,
                right,
            } => {
                let l = self.run_set(left, scope)?;
                let r = self.run_set(right, scope)?;
                let start = Instant::now();
                let (lrows, rrows) = (l.rows.len(), r.rows.len());
                let out = set_operation(*op, *all, l, r, right.span())?;
                self.note(format!(
                    "{}{}: {} + {} rows → {} ({})",
                    op.keyword(),
                    if *all { " ALL" } else { "" },
                    thousands(lrows),
                    thousands(rrows),
                    thousands(out.rows.len()),
                    ms(start)
                ));
                Ok(out)
            }
            SetExpr::Values { rows, span } => self.run_values(rows, *span, scope),
        }
    }

    /// The rows of a `VALUES` list: each row's expressions evaluated as a
    /// SELECT without FROM, the rows typed as UNION ALL would type them
    /// (integers meet floats as floats, NULLs take the other rows' type).
    fn run_values(&self, rows: &[Vec<Expr>], span: Span, scope: &Scope<'_>) -> Result<Relation> {
        let start = Instant::now();
        let notes = self.trace.lock().map(|t| t.len()).unwrap_or(0);
        let mut out: Option<Relation> = None;
        for row in rows {
            let projection = row
                .iter()
                .enumerate()
                .map(|(n, e)| SelectItem::Expr {
                    expr: e.clone(),
                    alias: Some(Ident {
                        name: format!("col{n}"),
                        span: e.span,
                    }),
                })
                .collect();
            let row_span = row[0].span.union(row[row.len() - 1].span);
            let select = Select {
                from: None,
                ..Select::over(
                    projection,
                    FromItem::Table {
                        table: TableRef::Named(Ident {
                            name: String::new(),
                            span,
                        }),
                        alias: None,
                    },
                    None,
                    row_span,
                )
            };
            let rel = self.run_select(&select, scope, None)?;
            out = Some(match out {
                None => rel,
                Some(above) => {
                    let clash = above.types.iter().zip(&rel.types).position(|(&a, &b)| {
                        a != b
                            && a != DataType::Null
                            && b != DataType::Null
                            && !matches!(
                                (a, b),
                                (DataType::Int, DataType::Float) | (DataType::Float, DataType::Int)
                            )
                    });
                    if let Some(c) = clash {
                        return Err(Error::plan_at(
                            format!(
                                "VALUES column {} is {} in the rows above and {} here",
                                c + 1,
                                above.types[c],
                                rel.types[c]
                            ),
                            row[c].span.start,
                        ));
                    }
                    set_operation(SetOp::Union, true, above, rel, row_span)?
                }
            });
        }
        if let Ok(mut t) = self.trace.lock() {
            t.truncate(notes);
        }
        let out = out.ok_or_else(|| Error::Internal("VALUES without rows".into()))?;
        self.note(format!(
            "VALUES: {} rows × {} columns ({})",
            thousands(out.rows.len()),
            out.names.len(),
            ms(start)
        ));
        Ok(out)
    }

    /// Runs one SELECT: subqueries first, then its FROM.
    fn run_select(
        &self,
        select: &Select,
        scope: &Scope<'_>,
        needed: Option<&HashSet<String>>,
    ) -> Result<Relation> {
        match self.run_select_into(select, scope, needed, None)? {
            Produced::Rows(rel) => Ok(rel),
            Produced::Table(..) => Err(Error::Internal(
                "a table made where rows were asked for".into(),
            )),
        }
    }

    /// [`Composer::run_select`], or with `into` a name, possibly its
    /// answer already encoded as a table of that name: a SELECT with
    /// window functions whose last step is a filter and projection of the
    /// window's columns scans them into a table ([`Composer::scan_table`])
    /// rather than into rows a caller would encode again (perf of shapes
    /// window_rank_g1000: 10M rows of values made and encoded were a
    /// fifth of the query).
    fn run_select_into(
        &self,
        select: &Select,
        scope: &Scope<'_>,
        needed: Option<&HashSet<String>>,
        into: Option<&str>,
    ) -> Result<Produced> {
        let mut select = select.clone();
        if std::mem::take(&mut select.group_by_all) {
            // GROUP BY ALL: by position, each item without an aggregate or
            // a window function.
            select.group_by = select
                .projection
                .iter()
                .enumerate()
                .filter_map(|(n, item)| match item {
                    SelectItem::Expr { expr, .. }
                        if !contains_aggregate(expr)
                            && !any_node(expr, &|x| matches!(x.kind, ExprKind::Window { .. })) =>
                    {
                        Some(Expr {
                            kind: ExprKind::Literal(Literal::Int(n as i64 + 1)),
                            span: expr.span,
                        })
                    }
                    _ => None,
                })
                .collect();
        }
        let mut quantified = Ok(());
        for_each_expr_mut(&mut select, &mut |e| {
            if quantified.is_ok() {
                quantified = quantified::rewrite(e);
            }
        });
        quantified?;
        let mut scope = scope.child();
        let mut semis = Vec::new();
        let mut scanned = self.decorrelate(&mut select, &mut scope, &mut semis)?;
        let scope = &scope;
        scanned += self.replace_subqueries(&mut select, scope)?;
        while semis.is_empty() {
            let Some(merged) = merge::merge_derived(&select, scope)? else {
                break;
            };
            self.note("subquery in FROM merged into the query that reads it".into());
            select = merged;
        }
        if semis.is_empty() {
            window::push_filter_into_windows(&mut select);
        }
        if window::has_windows(&select) {
            return self
                .run_windowed(select, scope, needed, into)
                .map(|produced| match produced {
                    Produced::Rows(mut rel) => {
                        rel.rows_scanned += scanned;
                        Produced::Rows(rel)
                    }
                    Produced::Table(table, rows) => Produced::Table(table, rows + scanned),
                });
        }
        // DISTINCT over plain expressions is a GROUP BY of them, which
        // the pipeline groups on codes.
        if select.distinct
            && select.group_by.is_empty()
            && select.having.is_none()
            && select.projection.iter().all(|item| match item {
                SelectItem::Expr { expr, .. } => !contains_aggregate(expr),
                _ => false,
            })
        {
            select.distinct = false;
            // An integer literal item is grouped by its position: as a
            // GROUP BY item it would be read as one.
            select.group_by = select
                .projection
                .iter()
                .enumerate()
                .filter_map(|(i, item)| match item {
                    SelectItem::Expr { expr, .. } => Some(match expr.kind {
                        ExprKind::Literal(Literal::Int(_)) => Expr {
                            kind: ExprKind::Literal(Literal::Int(i as i64 + 1)),
                            span: expr.span,
                        },
                        _ => expr.clone(),
                    }),
                    _ => None,
                })
                .collect();
        }
        let distinct = std::mem::take(&mut select.distinct);
        let (limit, offset) = if distinct {
            (select.limit.take(), select.offset.take())
        } else {
            (None, None)
        };
        if let Some(name) = into
            && semis.is_empty()
            && !distinct
            && !select.group_by.is_empty()
            && matches!(select.from, Some(FromItem::Table { .. }))
        {
            // A grouped subquery's groups go straight into the table its
            // reader scans, with no row of values between
            // (`exec::execute_columns`).
            let (table, rows) = self.scan_table(name, &select, scope, needed)?;
            return Ok(Produced::Table(table, rows + scanned));
        }
        let mut rel = match &select.from {
            Some(FromItem::Table { .. }) if !semis.is_empty() => {
                join::run(self, select, scope, semis, needed)?
            }
            None | Some(FromItem::Table { .. }) => self.run_simple(&select, scope, needed)?,
            Some(FromItem::Subquery { .. }) if semis.is_empty() => {
                self.run_from_subquery(select, scope, needed)?
            }
            Some(FromItem::Subquery { .. } | FromItem::Join(_)) => {
                join::run(self, select, scope, semis, needed)?
            }
        };
        rel.rows_scanned += scanned;
        if distinct {
            let before = rel.rows.len();
            let mut seen = HashSet::with_capacity(rel.rows.len());
            rel.rows.retain(|row| seen.insert(row.clone()));
            let offset = usize::try_from(offset.unwrap_or(0)).unwrap_or(usize::MAX);
            rel.rows.drain(..offset.min(rel.rows.len()));
            if let Some(limit) = limit {
                if limit < 0 {
                    let keep = usize::try_from(limit.unsigned_abs()).unwrap_or(usize::MAX);
                    let cut = rel.rows.len().saturating_sub(keep);
                    rel.rows.drain(..cut);
                } else {
                    rel.rows
                        .truncate(usize::try_from(limit).unwrap_or(usize::MAX));
                }
            }
            self.note(format!(
                "DISTINCT: {} → {} rows",
                thousands(before),
                thousands(rel.rows.len())
            ));
        }
        Ok(Produced::Rows(rel))
    }

    /// Binds and runs a SELECT over one table of `scope`, keeping only the
    /// outputs in `needed` when given.
    fn run_simple(
        &self,
        select: &Select,
        scope: &Scope<'_>,
        needed: Option<&HashSet<String>>,
    ) -> Result<Relation> {
        self.engine.check()?;
        let start = Instant::now();
        let mut plan = plan::plan_select(select, self.sql, scope)?;
        if let Some(needed) = needed {
            keep_outputs(&mut plan, needed);
        }
        let name = match &select.from {
            Some(FromItem::Table {
                table: TableRef::Named(n),
                ..
            }) if n.name.starts_with("__") => "the rows above".to_string(),
            Some(from) => from.to_string(),
            None => "no table".to_string(),
        };
        if self.dry {
            self.note_compiled(format!("pipeline over {name} (compiled, not run):"), &plan)?;
            return Ok(Relation {
                types: exec::output_types(&plan),
                names: plan.names,
                rows: Vec::new(),
                rows_scanned: 0,
            });
        }
        let (rows, scanned) = self.engine.run_plan(&plan)?;
        self.note(format!(
            "pipeline over {name}: {} table rows → {} rows ({})",
            thousands(plan.table.rows()),
            thousands(rows.len()),
            ms(start)
        ));
        Ok(Relation {
            types: exec::output_types(&plan),
            names: plan.names,
            rows,
            rows_scanned: scanned,
        })
    }

    /// [`Composer::run_simple`] into whole columns (the scan under a
    /// join, a semi-join or a top-k per group).
    pub(crate) fn run_simple_columns(
        &self,
        select: &Select,
        scope: &Scope<'_>,
        join_filters: &[exec::join_filter::JoinFilter],
    ) -> Result<Columns> {
        self.engine.check()?;
        let plan = plan::plan_select(select, self.sql, scope)?;
        self.run_planned_columns(select, plan, join_filters)
    }

    /// [`Composer::run_simple_columns`] whose rows are narrowed to those
    /// whose first output, a plain integer (or timestamp) column, holds
    /// one of `keys`: a join filter, applied when the keys are at most half
    /// the table's rows (a reduction worth its test; the caller's join
    /// matches the keys anyway).
    pub(crate) fn run_simple_columns_keyed(
        &self,
        select: &Select,
        scope: &Scope<'_>,
        keys: Option<Arc<exec::join_filter::KeySet>>,
    ) -> Result<Columns> {
        self.engine.check()?;
        let plan = plan::plan_select(select, self.sql, scope)?;
        let filters: Vec<exec::join_filter::JoinFilter> = match (keys, plan.outputs.first()) {
            (
                Some(keys),
                Some(plan::Expr::Column {
                    index,
                    name,
                    dtype:
                        dtype @ (DataType::Int
                        | DataType::Timestamp
                        | DataType::Date
                        | DataType::Interval),
                }),
            ) if keys.len().saturating_mul(2) <= plan.table.rows() => {
                self.note(format!(
                    "join filter on {name}: {} keys of the outer rows",
                    thousands(keys.len())
                ));
                vec![exec::join_filter::JoinFilter {
                    column: *index,
                    name: name.clone(),
                    dtype: *dtype,
                    keys,
                }]
            }
            _ => Vec::new(),
        };
        self.run_planned_columns(select, plan, &filters)
    }

    /// Runs a planned filter-and-project `select` to columns, noting it.
    fn run_planned_columns(
        &self,
        select: &Select,
        plan: QueryPlan,
        join_filters: &[exec::join_filter::JoinFilter],
    ) -> Result<Columns> {
        let start = Instant::now();
        let name = match &select.from {
            Some(from) => from.to_string(),
            None => "no table".to_string(),
        };
        if self.dry {
            self.note_compiled(format!("scan of {name} (compiled, not run):"), &plan)?;
            let types = exec::output_types(&plan);
            return Ok(Columns {
                arrays: types
                    .iter()
                    .map(|&t| exec::vector::Array::from_values(t, &[]))
                    .collect(),
                names: plan.names,
                types,
                rows: 0,
                rows_scanned: 0,
            });
        }
        let mut columns = self.engine.run_plan_columns(&plan, join_filters)?;
        self.note(format!(
            "scan of {name}: {} table rows → {} rows × {} columns ({})",
            thousands(plan.table.rows()),
            thousands(columns.rows),
            columns.arrays.len(),
            ms(start)
        ));
        columns.types = exec::output_types(&plan);
        columns.names = plan.names;
        Ok(columns)
    }

    /// `SELECT … FROM (query) alias`: the query's rows as a table named by
    /// the alias.
    fn run_from_subquery(
        &self,
        mut select: Select,
        scope: &Scope<'_>,
        needed: Option<&HashSet<String>>,
    ) -> Result<Relation> {
        let uses = match &select.from {
            Some(FromItem::Subquery { columns, .. }) if columns.is_empty() => {
                referenced_names(&select)
            }
            _ => None,
        };
        let Some(FromItem::Subquery {
            query,
            alias,
            columns,
            span,
        }) = select.from.take()
        else {
            return Err(Error::Internal("expected a subquery in FROM".into()));
        };
        let name = alias
            .as_ref()
            .map_or_else(|| self.internal_name("subquery"), |a| a.name.clone());
        // A plain SELECT (no WITH, set operation, ORDER BY, LIMIT,
        // DISTINCT, column list) may come back already a table.
        let produced = match (&query.body, &query.ctes[..]) {
            (SetExpr::Select(inner), [])
                if query.order_by.is_empty()
                    && query.limit.is_none()
                    && query.offset.is_none()
                    && columns.is_empty()
                    && !inner.distinct =>
            {
                self.nest(|| {
                    self.engine.check()?;
                    self.run_select_into(inner, scope, uses.as_ref(), Some(&name))
                })?
            }
            _ => Produced::Rows(self.nest(|| self.run_query_for(&query, scope, uses.as_ref()))?),
        };
        let (table, scanned) = match produced {
            Produced::Rows(mut rel) => {
                rename_columns(&mut rel, &columns)?;
                (self.materialize(&name, &rel), rel.rows_scanned)
            }
            Produced::Table(table, scanned) => (table, scanned),
        };
        let mut scope = scope.child();
        scope.add(&name, table);
        select.from = Some(FromItem::Table {
            table: TableRef::Named(Ident { name, span }),
            alias: None,
        });
        let mut out = self.run_simple(&select, &scope, needed)?;
        out.rows_scanned += scanned;
        Ok(out)
    }

    /// The rows of `select`, a filter-and-project of one table, as a table
    /// named `name`: scanned into columns (only the outputs `needed`
    /// names, when given) and encoded from them, with no row of values.
    /// Returns the table and the table rows the scan read.
    pub(crate) fn scan_table(
        &self,
        name: &str,
        select: &Select,
        scope: &Scope<'_>,
        needed: Option<&HashSet<String>>,
    ) -> Result<(Table, usize)> {
        self.engine.check()?;
        let mut plan = plan::plan_select(select, self.sql, scope)?;
        if let Some(needed) = needed {
            keep_outputs(&mut plan, needed);
        }
        let columns = self.run_planned_columns(select, plan, &[])?;
        let table = materialize::table_from_arrays(
            name,
            &columns.names,
            &columns.types,
            &columns.arrays,
            columns.rows,
            self.engine.partition_rows(),
        );
        Ok((table, columns.rows_scanned))
    }

    /// `rel` encoded as a table named `name`.
    fn materialize(&self, name: &str, rel: &Relation) -> Table {
        materialize::table_from_rows(
            name,
            &rel.names,
            &rel.types,
            &rel.rows,
            self.engine.partition_rows(),
        )
    }

    /// Runs every subquery in `select`'s expressions (not in its FROM) once
    /// and puts its answer in its place: a scalar subquery becomes its
    /// value, `x IN (SELECT …)` a list, `EXISTS (…)` a boolean. Returns
    /// the table rows they read.
    fn replace_subqueries(&self, select: &mut Select, scope: &Scope<'_>) -> Result<usize> {
        let mut scanned = 0;
        let mut error = None;
        let outer = qualifiers(select.from.as_ref());
        for_each_expr_mut(select, &mut |e| {
            if error.is_some() {
                return;
            }
            if let Err(err) = self.replace_in(e, scope, &outer, &mut scanned) {
                error = Some(err);
            }
        });
        match error {
            Some(e) => Err(e),
            None => Ok(scanned),
        }
    }

    fn replace_in(
        &self,
        e: &mut Expr,
        scope: &Scope<'_>,
        outer: &[String],
        scanned: &mut usize,
    ) -> Result<()> {
        let run = |query: &Query, scanned: &mut usize| -> Result<Relation> {
            let rel = self
                .nest(|| self.run_query(query, scope))
                .map_err(|err| correlated(err, query, outer))?;
            *scanned += rel.rows_scanned;
            Ok(rel)
        };
        let one_column = |rel: &Relation, span: Span| -> Result<()> {
            if rel.names.len() == 1 {
                Ok(())
            } else {
                Err(Error::plan_at(
                    format!(
                        "a subquery used as a value must return one column, this one returns {}",
                        rel.names.len()
                    ),
                    span.start,
                ))
            }
        };
        match &mut e.kind {
            ExprKind::Subquery(query) => {
                let rel = run(query, scanned)?;
                one_column(&rel, e.span)?;
                if rel.rows.len() > 1 {
                    // A plan error, so that the message points at the
                    // subquery with a caret.
                    return Err(Error::plan_at(
                        format!(
                            "this subquery returned {} rows where one value is expected",
                            thousands(rel.rows.len())
                        ),
                        e.span.start,
                    ));
                }
                let value = rel
                    .rows
                    .into_iter()
                    .next()
                    .and_then(|r| r.into_iter().next())
                    .unwrap_or(Value::Null);
                self.note(format!("scalar subquery → {value}"));
                e.kind = literal_kind(&value, e.span);
            }
            ExprKind::InSubquery {
                expr,
                query,
                negated,
            } => {
                let rel = run(query, scanned)?;
                one_column(&rel, e.span)?;
                let mut seen = HashSet::new();
                let list: Vec<Expr> = rel
                    .rows
                    .into_iter()
                    .filter_map(|r| r.into_iter().next())
                    .filter(|v| seen.insert(v.clone()))
                    .map(|v| Expr {
                        kind: literal_kind(&v, e.span),
                        span: e.span,
                    })
                    .collect();
                self.note(format!("IN subquery → {} values", thousands(list.len())));
                let mut inner = std::mem::replace(
                    expr.as_mut(),
                    Expr {
                        kind: ExprKind::Literal(Literal::Null),
                        span: e.span,
                    },
                );
                self.replace_in(&mut inner, scope, outer, scanned)?;
                e.kind = if list.is_empty() {
                    // `x IN ()` is false and `x NOT IN ()` true, even for a
                    // NULL x.
                    ExprKind::Literal(Literal::Bool(*negated))
                } else {
                    ExprKind::InList {
                        expr: Box::new(inner),
                        list,
                        negated: *negated,
                    }
                };
            }
            ExprKind::Exists(query) => {
                let rel = run(query, scanned)?;
                self.note(format!("EXISTS subquery → {}", !rel.rows.is_empty()));
                e.kind = ExprKind::Literal(Literal::Bool(!rel.rows.is_empty()));
            }
            _ => {
                for child in e.children_mut() {
                    self.replace_in(child, scope, outer, scanned)?;
                }
            }
        }
        Ok(())
    }
}

/// The column names `select` reads (lower case, qualified ones by their
/// column), or `None` when it reads every column (`*`, `t.*`).
pub(crate) fn referenced_names(select: &Select) -> Option<HashSet<String>> {
    if select.projection.iter().any(|i| {
        matches!(
            i,
            SelectItem::Wildcard(..) | SelectItem::QualifiedWildcard { .. }
        )
    }) {
        return None;
    }
    let mut names = HashSet::new();
    for_each_expr(select, &mut |e| {
        walk(e, &mut |x| match &x.kind {
            ExprKind::Column(n) | ExprKind::QualifiedColumn { column: n, .. } => {
                names.insert(n.to_ascii_lowercase());
            }
            _ => {}
        })
    });
    Some(names)
}

/// Drops the visible outputs of `plan` not named in `needed` (keeping at
/// least one, so the rows stay); a dropped output that orders the rows
/// stays as a hidden sort key.
fn keep_outputs(plan: &mut QueryPlan, needed: &HashSet<String>) {
    let mut keep: Vec<bool> = plan
        .names
        .iter()
        .map(|n| needed.contains(&n.to_ascii_lowercase()))
        .collect();
    if keep.iter().all(|&k| k) || plan.visible == 0 {
        return;
    }
    if !keep.iter().any(|&k| k) {
        keep[0] = true;
    }
    let mut map = vec![None; plan.outputs.len()];
    let mut outputs = Vec::new();
    let mut names = Vec::new();
    for i in 0..plan.visible {
        if keep[i] {
            map[i] = Some(outputs.len());
            outputs.push(plan.outputs[i].clone());
            names.push(plan.names[i].clone());
        }
    }
    let visible = outputs.len();
    for (i, slot) in map.iter_mut().enumerate().skip(plan.visible) {
        *slot = Some(outputs.len());
        outputs.push(plan.outputs[i].clone());
    }
    for key in &mut plan.order_by {
        key.column = match map[key.column] {
            Some(j) => j,
            None => {
                outputs.push(plan.outputs[key.column].clone());
                map[key.column] = Some(outputs.len() - 1);
                outputs.len() - 1
            }
        };
    }
    plan.outputs = outputs;
    plan.names = names;
    plan.visible = visible;
}

/// `AS alias (a, b)`: the first columns of `rel` renamed.
fn rename_columns(rel: &mut Relation, columns: &[Ident]) -> Result<()> {
    if let Some(extra) = columns.get(rel.names.len()) {
        return Err(Error::plan_at(
            format!(
                "the subquery has {} columns but {} names are given",
                rel.names.len(),
                columns.len()
            ),
            extra.span.start,
        ));
    }
    for (name, c) in rel.names.iter_mut().zip(columns) {
        *name = c.name.clone();
    }
    Ok(())
}

/// The names FROM gives its inputs (aliases, else table names).
fn qualifiers(from: Option<&FromItem>) -> Vec<String> {
    let mut out = Vec::new();
    fn walk(f: &FromItem, out: &mut Vec<String>) {
        match f {
            FromItem::Table { table, alias } => match (alias, table) {
                (Some(a), _) => out.push(a.name.clone()),
                (None, TableRef::Named(n)) => out.push(n.name.clone()),
                _ => {}
            },
            FromItem::Subquery { alias, .. } => {
                if let Some(a) = alias {
                    out.push(a.name.clone());
                }
            }
            FromItem::Join(j) => {
                walk(&j.left, out);
                walk(&j.right, out);
            }
        }
    }
    if let Some(f) = from {
        walk(f, &mut out);
    }
    out
}

/// A subquery's plan error, pointed at its reference to the outer query
/// when it has one: correlated subqueries are not decorrelated yet.
fn correlated(err: Error, query: &Query, outer: &[String]) -> Error {
    if !matches!(err, Error::Plan { .. }) {
        return err;
    }
    fn visit_set(s: &SetExpr, outer: &[String], found: &mut Option<(String, Span)>) {
        match s {
            SetExpr::Select(select) => {
                let own = qualifiers(select.from.as_ref());
                for_each_expr(select, &mut |e| {
                    walk(e, &mut |x| {
                        if let ExprKind::QualifiedColumn { table, column } = &x.kind {
                            let is_outer = outer.iter().any(|o| o.eq_ignore_ascii_case(table))
                                && !own.iter().any(|n| n.eq_ignore_ascii_case(table));
                            if is_outer && found.is_none() {
                                *found = Some((format!("{table}.{column}"), x.span));
                            }
                        }
                    })
                });
            }
            SetExpr::Operation { left, right, .. } => {
                visit_set(left, outer, found);
                visit_set(right, outer, found);
            }
            SetExpr::Values { .. } => {}
        }
    }
    let mut found = None;
    visit_set(&query.body, outer, &mut found);
    match found {
        Some((name, span)) => Error::plan_at(
            format!(
                "correlated subqueries (this one reads {name} of the outer query) are not supported yet"
            ),
            span.start,
        ),
        None => err,
    }
}

/// The rows of a set operation of `l` and `r` (column counts must agree;
/// integer and float columns meet as float).
fn set_operation(op: SetOp, all: bool, l: Relation, r: Relation, right: Span) -> Result<Relation> {
    if l.names.len() != r.names.len() {
        return Err(Error::plan_at(
            format!(
                "{} needs the same number of columns on both sides: {} on the left, {} on the right",
                op.keyword(),
                l.names.len(),
                r.names.len()
            ),
            right.start,
        ));
    }
    let mut types = Vec::with_capacity(l.types.len());
    let mut to_float = Vec::new();
    for (c, (&a, &b)) in l.types.iter().zip(&r.types).enumerate() {
        let t = match (a, b) {
            (a, b) if a == b => a,
            (DataType::Null, t) | (t, DataType::Null) => t,
            (DataType::Int, DataType::Float) | (DataType::Float, DataType::Int) => {
                to_float.push(c);
                DataType::Float
            }
            (a, b) => {
                return Err(Error::plan_at(
                    format!(
                        "{} column {} (\"{}\") is {a} on the left and {b} on the right",
                        op.keyword(),
                        c + 1,
                        l.names[c]
                    ),
                    right.start,
                ));
            }
        };
        types.push(t);
    }
    let floats = |mut rows: Vec<Vec<Value>>| {
        if !to_float.is_empty() {
            for row in &mut rows {
                for &c in &to_float {
                    row[c] = match &row[c] {
                        Value::Int(v) => Value::Float(*v as f64),
                        Value::HugeInt(v) => Value::Float(*v as f64),
                        v => v.clone(),
                    };
                }
            }
        }
        rows
    };
    let (lrows, rrows) = (floats(l.rows), floats(r.rows));
    let rows = match (op, all) {
        (SetOp::Union, true) => {
            let mut rows = lrows;
            rows.extend(rrows);
            rows
        }
        (SetOp::Union, false) => {
            let mut seen = HashSet::new();
            lrows
                .into_iter()
                .chain(rrows)
                .filter(|row| seen.insert(row.clone()))
                .collect()
        }
        (SetOp::Intersect | SetOp::Except, true) => {
            let mut counts: HashMap<Vec<Value>, usize> = HashMap::new();
            for row in rrows {
                *counts.entry(row).or_default() += 1;
            }
            let keep_matched = op == SetOp::Intersect;
            lrows
                .into_iter()
                .filter(|row| {
                    let matched = match counts.get_mut(row) {
                        Some(n) if *n > 0 => {
                            *n -= 1;
                            true
                        }
                        _ => false,
                    };
                    matched == keep_matched
                })
                .collect()
        }
        (SetOp::Intersect | SetOp::Except, false) => {
            let right: HashSet<Vec<Value>> = rrows.into_iter().collect();
            let keep_matched = op == SetOp::Intersect;
            let mut seen = HashSet::new();
            lrows
                .into_iter()
                .filter(|row| right.contains(row) == keep_matched && seen.insert(row.clone()))
                .collect()
        }
    };
    Ok(Relation {
        names: l.names,
        types,
        rows,
        rows_scanned: l.rows_scanned + r.rows_scanned,
    })
}

/// A constant as an expression the binder reads back as `value`.
fn literal_kind(value: &Value, span: Span) -> ExprKind {
    let lit = |l| ExprKind::Literal(l);
    match value {
        Value::Null => lit(Literal::Null),
        Value::Bool(b) => lit(Literal::Bool(*b)),
        Value::Int(v) => lit(Literal::Int(*v)),
        Value::HugeInt(v) => lit(Literal::Float(*v as f64)),
        Value::Float(v) => lit(Literal::Float(*v)),
        Value::Str(s) => lit(Literal::String(s.to_string())),
        Value::Timestamp(t) => ExprKind::Cast {
            expr: Box::new(Expr {
                kind: lit(Literal::String(format_timestamp(*t))),
                span,
            }),
            to: TypeName::Timestamp,
            try_cast: false,
        },
        Value::Date(d) => ExprKind::Cast {
            expr: Box::new(Expr {
                kind: lit(Literal::String(crate::types::format_date(*d))),
                span,
            }),
            to: TypeName::Date,
            try_cast: false,
        },
        Value::Interval(m) => lit(Literal::Interval(*m)),
    }
}

/// True when `e` calls an aggregate function.
pub(crate) fn contains_aggregate(e: &Expr) -> bool {
    any_node(e, &|x| match &x.kind {
        ExprKind::Function { name, .. } => crate::plan::AggFunc::is_aggregate_name(name),
        _ => false,
    })
}

/// `a AND b AND c` as `[a, b, c]`.
pub(crate) fn conjuncts(e: Expr) -> Vec<Expr> {
    match e.kind {
        ExprKind::Binary {
            op: ast::BinaryOp::And,
            left,
            right,
        } => {
            let mut v = conjuncts(*left);
            v.extend(conjuncts(*right));
            v
        }
        _ => vec![e],
    }
}

/// `[a, b, c]` as `a AND b AND c`; `None` for no conjunct.
pub(crate) fn and_all(conjuncts: Vec<Expr>) -> Option<Expr> {
    conjuncts.into_iter().reduce(|a, b| {
        let span = a.span.union(b.span);
        Expr {
            kind: ExprKind::Binary {
                op: ast::BinaryOp::And,
                left: Box::new(a),
                right: Box::new(b),
            },
            span,
        }
    })
}

/// Calls `f` on `e` and every subexpression, parents first (not inside
/// subqueries).
pub(crate) fn walk(e: &Expr, f: &mut dyn FnMut(&Expr)) {
    f(e);
    for c in e.children() {
        walk(c, f);
    }
}

/// True when `f` holds for `e` or a subexpression (not inside a subquery).
pub(crate) fn any_node(e: &Expr, f: &dyn Fn(&Expr) -> bool) -> bool {
    f(e) || e.children().into_iter().any(|c| any_node(c, f))
}

/// Calls `f` on each top-level expression of `select`: the select list,
/// WHERE, GROUP BY, HAVING, ORDER BY and the ON conditions of its joins.
pub(crate) fn for_each_expr(select: &Select, f: &mut dyn FnMut(&Expr)) {
    for item in &select.projection {
        if let SelectItem::Expr { expr, .. } = item {
            f(expr);
        }
    }
    fn from_exprs(from: &FromItem, f: &mut dyn FnMut(&Expr)) {
        if let FromItem::Join(j) = from {
            from_exprs(&j.left, f);
            from_exprs(&j.right, f);
            if let JoinConstraint::On(e) = &j.constraint {
                f(e);
            }
        }
    }
    if let Some(from) = &select.from {
        from_exprs(from, f);
    }
    select.selection.iter().for_each(&mut *f);
    select.group_by.iter().for_each(&mut *f);
    select.having.iter().for_each(&mut *f);
    for o in &select.order_by {
        f(&o.expr);
    }
}

/// [`for_each_expr`] with mutable access.
pub(crate) fn for_each_expr_mut(select: &mut Select, f: &mut dyn FnMut(&mut Expr)) {
    for item in &mut select.projection {
        if let SelectItem::Expr { expr, .. } = item {
            f(expr);
        }
    }
    fn from_exprs(from: &mut FromItem, f: &mut dyn FnMut(&mut Expr)) {
        if let FromItem::Join(j) = from {
            from_exprs(&mut j.left, f);
            from_exprs(&mut j.right, f);
            if let JoinConstraint::On(e) = &mut j.constraint {
                f(e);
            }
        }
    }
    if let Some(from) = &mut select.from {
        from_exprs(from, f);
    }
    if let Some(e) = &mut select.selection {
        f(e);
    }
    for e in &mut select.group_by {
        f(e);
    }
    if let Some(e) = &mut select.having {
        f(e);
    }
    for o in &mut select.order_by {
        f(&mut o.expr);
    }
}

/// `n` with thousands separators.
pub(crate) fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Milliseconds since `start`, as EXPLAIN shows them.
fn ms(start: Instant) -> String {
    format!("{:.1} ms", start.elapsed().as_secs_f64() * 1e3)
}
