//! Joins: a FROM tree of tables and subqueries into one encoded table that
//! the SELECT's grouping, ordering and limits then run on.
//!
//! 1. Every column reference is resolved to an input (`t.col`, or a name
//!    that exactly one input has; a `USING` column names the left one, or
//!    under a RIGHT or FULL join the first non-NULL of its inputs).
//! 2. Conjuncts are placed: one input's conditions are pushed into its
//!    scan, `a.x = b.y` between two inputs becomes a join key, the rest is
//!    evaluated after the joins. In a tree of inner joins and commas, WHERE
//!    and ON are one pool of conjuncts; with outer joins, each ON stays at
//!    its join and WHERE (but for inputs no outer join pads with NULLs)
//!    applies after all of them.
//! 3. Each input is scanned once by the single-table pipeline, with its
//!    pushed-down filter and only the columns used above it. Under inner
//!    joins, smaller tables are scanned first, and the integer keys of a
//!    scan its filters reduced become a join filter of the scans it joins
//!    with (`exec::join_filter`: rows whose key the other side lacks are
//!    dropped before the outputs are read).
//! 4. Inputs are joined on row ids (`u32` per input and output row, NULL
//!    padding as `u32::MAX`), never copying values: an inner-join tree in
//!    a greedy order (start from the smallest input; next, the connected
//!    input with the smallest estimated result, `|S|·|L| / max(distinct
//!    keys)`), an outer-join tree in its written order. Each join builds a
//!    chained hash table (heads in a hashbrown map, `next` links in an
//!    array) on the smaller input of an inner join, the padded side's
//!    partner of an outer one, and probes it in parallel chunks.
//! 5. The columns used above the joins are gathered into a table encoded
//!    like a load (`materialize`), and the rewritten SELECT runs on it.

use std::collections::{BTreeMap, BTreeSet, HashSet};

use hashbrown::HashMap;
use rayon::prelude::*;

mod computed;
mod dimension;
mod fold;
mod range;

use super::correlated::Semi;
use super::keys::{Key, Part};
use super::materialize;
use super::{Composer, Relation, Scope, and_all, conjuncts, thousands, walk};
use crate::error::{Error, Result};
use crate::exec::join_filter::{JoinFilter, KeySet};
use crate::exec::vector::{Array, Data};
use crate::sql::ast::{
    BinaryOp, Expr, ExprKind, FromItem, Ident, JoinConstraint, JoinKind, Literal, Select,
    SelectItem, Span, StarOptions, TableRef,
};
use crate::store::Table;
use crate::types::{DataType, Value};
use std::sync::Arc;
use std::time::Instant;

/// A row id standing for "no row" (the NULL padding of an outer join).
const NONE: u32 = crate::exec::vector::NO_ROW;

/// Rows per parallel probe task.
const PROBE_CHUNK: usize = 16 * 1024;

/// Probe rows whose first build rows are looked up together
/// ([`Heads::probe`]).
const PROBE_BATCH: usize = 256;

/// Bytes a hash join's build side holds per row, as reserved against the
/// memory budget: its chain link (4), and a slot of the head map with its
/// key (about 12 at hashbrown's load factor).
const BUILD_BYTES_PER_ROW: usize = 16;

/// Build rows between two checks for cancellation.
const CHECK_ROWS: usize = 64 * 1024;

/// The most rows a join may produce (row ids are `u32`).
const MAX_JOIN_ROWS: usize = (u32::MAX - 1) as usize;

/// A table read by the FROM tree.
struct Input {
    /// The name `t.col` uses: the alias, else the table's name.
    qualifier: String,
    table: Arc<Table>,
    /// How the scan names it in the scope.
    source: TableRef,
    /// Under the NULL-padded side of an outer join.
    padded: bool,
}

/// The FROM tree over inputs.
enum Node {
    Input(usize),
    Join {
        kind: JoinKind,
        left: Box<Node>,
        right: Box<Node>,
        constraint: JoinConstraint,
        /// Equalities `(left side column, right side column)`.
        keys: Vec<(ColRef, ColRef)>,
        /// Other comparisons of its ON between the two sides, `left side
        /// column op right side column`: a pair of rows with equal keys
        /// joins only when each holds (an outer join pads the rows that
        /// then have no partner).
        residual: Vec<Comparison>,
        span: Span,
    },
}

/// `left side column op right side column`, a comparison other than `=`.
type Comparison = (ColRef, BinaryOp, ColRef);

/// A column of an input: `(input, column of its table)`.
type ColRef = (usize, usize);

/// An input's scanned rows, as whole columns, and where its used columns
/// are among them.
struct Scan {
    columns: Vec<Array<'static>>,
    rows: usize,
    /// Table column → position in `columns`.
    positions: HashMap<usize, usize>,
    types: Vec<DataType>,
}

/// Rows of a join result: per input of `inputs`, one row id per result row.
struct Joined {
    inputs: Vec<usize>,
    ids: Vec<Vec<u32>>,
    rows: usize,
    /// One input's rows, each once in order (`ids[0][i] == i`): a join
    /// takes the rows it picks as they are, without looking them up.
    identity: bool,
}

impl Joined {
    fn of_input(input: usize, rows: usize) -> Joined {
        Joined {
            inputs: vec![input],
            ids: vec![(0..rows as u32).collect()],
            rows,
            identity: true,
        }
    }
}

/// Whether `*` shows a column: not one of the computed join keys, nor a
/// computed column a correlated subquery compares with.
fn shown_by_star(name: &str) -> bool {
    !name.starts_with(computed::PREFIX) && !name.starts_with(computed::OUTER_PREFIX)
}

/// See [`computed::compute_columns`].
pub(super) use computed::compute_columns;

/// Whether `select` is a filter-and-project of one table: no grouping,
/// aggregate, window, DISTINCT, ordering or subquery.
fn is_scan(select: &Select) -> bool {
    !super::needs_composition(select)
        && select.group_by.is_empty()
        && select.having.is_none()
        && select.order_by.is_empty()
        && select.limit.is_none()
        && select.offset.is_none()
        && select.qualify.is_none()
        && !select.projection.iter().any(
            |item| matches!(item, SelectItem::Expr { expr, .. } if super::contains_aggregate(expr)),
        )
}

/// Runs a SELECT whose FROM has joins.
pub(super) fn run(
    c: &Composer<'_>,
    mut select: Select,
    scope: &Scope<'_>,
    semis: Vec<Semi>,
    needed: Option<&HashSet<String>>,
) -> Result<Relation> {
    let mut scope = scope.child();
    let from = select
        .from
        .take()
        .ok_or_else(|| Error::Internal("a join without FROM".into()))?;
    let from = computed::compute_expression_keys(from, &mut select, &scope)?;
    // What the SELECT reads of its inputs: a subquery input computes only
    // that.
    select.from = Some(from);
    let mut reads = super::referenced_names(&select);
    // The outer columns the semi-joins compare with are read too.
    if let Some(names) = &mut reads {
        for semi in &semis {
            let exprs = semi
                .outer
                .iter()
                .chain(semi.residual.iter().map(|(_, _, e)| e));
            for e in exprs.chain(&semi.gate) {
                super::walk(e, &mut |x| {
                    if let ExprKind::Column(n) | ExprKind::QualifiedColumn { column: n, .. } =
                        &x.kind
                    {
                        names.insert(n.to_ascii_lowercase());
                    }
                });
            }
        }
    }
    let from = select
        .from
        .take()
        .ok_or_else(|| Error::Internal("a join without FROM".into()))?;
    let mut inputs = Vec::new();
    let mut scanned = 0;
    let mut tree = build(
        c,
        &from,
        &mut inputs,
        &mut scope,
        false,
        &mut scanned,
        reads.as_ref(),
    )?;
    let mut using = Vec::new();
    usings(&tree, &mut using);
    let r = Resolver {
        inputs: &inputs,
        using,
    };

    // A USING column of a RIGHT or FULL join is the first non-NULL of the
    // inputs' columns: bare references to it read coalesce(a.k, b.k).
    let mut merged = Vec::new();
    merged_usings(&tree, &inputs, &mut merged);
    if !merged.is_empty() {
        for item in &mut select.projection {
            if let SelectItem::Expr { expr, alias } = item {
                if let (None, ExprKind::Column(n)) = (&alias, &expr.kind) {
                    *alias = Some(Ident {
                        name: n.clone(),
                        span: expr.span,
                    });
                }
                merge_using_columns(expr, &merged, &inputs);
            }
        }
        let others = select
            .selection
            .iter_mut()
            .chain(select.having.iter_mut())
            .chain(select.group_by.iter_mut())
            .chain(select.order_by.iter_mut().map(|o| &mut o.expr));
        for e in others {
            merge_using_columns(e, &merged, &inputs);
        }
    }

    // The select list, with `*` expanded and names kept.
    let mut items: Vec<(Expr, Option<Ident>)> = Vec::new();
    for item in &select.projection {
        match item {
            SelectItem::Wildcard(span, options) => {
                let mut shown: HashSet<String> = HashSet::new();
                let mut star = Vec::new();
                for (i, input) in inputs.iter().enumerate() {
                    for f in input.table.fields.iter().filter(|f| shown_by_star(&f.name)) {
                        let lower = f.name.to_ascii_lowercase();
                        if r.using.contains(&lower) && !shown.insert(lower.clone()) {
                            continue;
                        }
                        if let Some((_, holders)) = merged.iter().find(|(n, _)| *n == lower) {
                            let alias = Ident {
                                name: f.name.clone(),
                                span: *span,
                            };
                            let column = merged_column(&f.name, holders, &inputs, *span);
                            star.push((f.name.as_str(), (column, Some(alias))));
                            continue;
                        }
                        star.push((f.name.as_str(), qualified(i, input, &f.name, *span)));
                    }
                }
                expand_star(&mut items, star, options, *span)?;
            }
            SelectItem::QualifiedWildcard {
                table,
                span,
                options,
            } => {
                let i = r.input_named(&table.name, table.span)?;
                let star = inputs[i]
                    .table
                    .fields
                    .iter()
                    .filter(|f| shown_by_star(&f.name))
                    .map(|f| (f.name.as_str(), qualified(i, &inputs[i], &f.name, *span)))
                    .collect();
                expand_star(&mut items, star, options, *span)?;
            }
            SelectItem::Expr { expr, alias } => items.push((expr.clone(), alias.clone())),
        }
    }
    if let Some(needed) = needed {
        keep_items(&mut items, needed, &select);
    }
    let outputs: Vec<String> = items
        .iter()
        .filter_map(|(e, alias)| match (alias, &e.kind) {
            (Some(a), _) => Some(a.name.to_ascii_lowercase()),
            (None, ExprKind::Column(n)) => Some(n.to_ascii_lowercase()),
            (None, ExprKind::QualifiedColumn { column, .. }) => Some(column.to_ascii_lowercase()),
            _ => None,
        })
        .collect();

    // Place the conjuncts.
    let mut pushed: Vec<Vec<Expr>> = vec![Vec::new(); inputs.len()];
    let mut residual: Vec<Expr> = Vec::new();
    let mut edges: Vec<(ColRef, ColRef)> = Vec::new();
    // Comparisons between two inputs, with their place in `residual`.
    let mut ranges: Vec<(Comparison, usize)> = Vec::new();
    let where_conjuncts: Vec<Expr> = select
        .selection
        .take()
        .map(|e| with_common_factors(conjuncts(e)))
        .unwrap_or_default();
    let inner_only = inner_tree(&tree);
    if inner_only {
        let mut pool = where_conjuncts;
        on_conjuncts(&mut tree, &r, &mut pool, &mut edges)?;
        for e in pool {
            let (used, complete) = r.inputs_of(&e)?;
            match (used.len(), equality(&r, &e)?) {
                (_, Some((a, b))) if a.0 != b.0 && complete => edges.push((a, b)),
                (1, _) if complete => pushed[*used.iter().next().unwrap_or(&0)].push(e),
                _ => {
                    // A comparison of a column of each of two inputs joins
                    // them where no equality does (a range join); it is
                    // still evaluated after the joins.
                    if let Some(cmp) = comparison(&r, &e)?
                        && cmp.0.0 != cmp.2.0
                    {
                        ranges.push((cmp, residual.len()));
                    }
                    for (i, derived) in derived_filters(&e, &r, inputs.len())? {
                        pushed[i].push(derived);
                    }
                    residual.push(e)
                }
            }
        }
    } else {
        place_outer(&mut tree, &r, &mut pushed)?;
        for e in where_conjuncts {
            let (used, complete) = r.inputs_of(&e)?;
            match used.iter().next() {
                Some(&i) if used.len() == 1 && complete && !inputs[i].padded => pushed[i].push(e),
                _ => residual.push(e),
            }
        }
    }

    // The columns used above the scans.
    let used_above = |residual: &[Expr]| -> Result<BTreeSet<ColRef>> {
        let mut used = BTreeSet::new();
        for (e, _) in &items {
            r.collect(e, &outputs, false, &mut used)?;
        }
        for e in residual {
            r.collect(e, &outputs, false, &mut used)?;
        }
        for e in &select.group_by {
            r.collect(e, &outputs, false, &mut used)?;
        }
        if let Some(e) = &select.having {
            r.collect(e, &outputs, false, &mut used)?;
        }
        for o in &select.order_by {
            r.collect(&o.expr, &outputs, true, &mut used)?;
        }
        Ok(used)
    };
    let mut used = used_above(&residual)?;
    let mut key_columns = BTreeSet::new();
    let range_columns = ranges.iter().flat_map(|&((a, _, b), _)| [(a, b)]);
    for (a, b) in edges
        .iter()
        .copied()
        .chain(tree_keys(&tree))
        .chain(range_columns)
    {
        key_columns.insert(a);
        key_columns.insert(b);
    }
    // The outer columns of semi-joins, per semi-join: keys, then residuals.
    let mut semi_columns: Vec<(Vec<ColRef>, Vec<ColRef>, Option<ColRef>)> = Vec::new();
    for semi in &semis {
        let column = |e: &Expr| -> Result<ColRef> {
            r.resolve(e)?
                .ok_or_else(|| {
                    Error::plan_at(
                        "a correlated subquery may compare only with a column of the outer query or an expression of one of its inputs' columns",
                        e.span.start,
                    )
                })
        };
        let keys = semi.outer.iter().map(column).collect::<Result<Vec<_>>>()?;
        let residual = semi
            .residual
            .iter()
            .map(|(_, _, e)| column(e))
            .collect::<Result<Vec<_>>>()?;
        let gate = semi.gate.as_ref().map(column).transpose()?;
        key_columns.extend(keys.iter().chain(&residual).chain(&gate).copied());
        semi_columns.push((keys, residual, gate));
    }

    // Scan each input once. In a tree of inner joins the smaller tables go
    // first, and the keys of a scan that its filters (or its own join
    // filters) reduced narrow the scans of the inputs it joins with.
    // Keys equal through a chain of equalities (`p_partkey = l_partkey =
    // ps_partkey`) filter each other's scans too.
    let filter_edges = if inner_only {
        transitive_edges(&edges)
    } else {
        Vec::new()
    };
    let mut left: Vec<usize> = (0..inputs.len()).collect();
    let mut done: Vec<Option<Scan>> = (0..inputs.len()).map(|_| None).collect();
    let mut reduced = vec![false; inputs.len()];
    let columns_of = |i: usize| -> Vec<usize> {
        used.iter()
            .chain(&key_columns)
            .filter(|(k, _)| *k == i)
            .map(|&(_, col)| col)
            .collect::<BTreeSet<usize>>()
            .into_iter()
            .collect()
    };

    // A star of dimension tables around one large table: the dimensions
    // are scanned first (they are the smaller inputs, which the greedy
    // order below would scan first too), and when each one's keys are
    // unique the large table is not joined row by row (`dimension`).
    let star = match (inner_only, semis.is_empty()) {
        (true, true) => dimension::star(&inputs, &edges),
        (false, true) => dimension::left_star(&tree, &inputs),
        _ => None,
    }
    // The star looks every row of the fact up; filters of the fact's own
    // may keep few of them (TPC-H Q14 at SF 0.1: one month of lineitem,
    // 32 ms of lookups against a few for the hash join of the rows left).
    .filter(|s| pushed[s.fact].is_empty());
    if let Some(star) = &star {
        let mut unique = true;
        for d in &star.dims {
            let i = d.input;
            if !unique {
                break;
            }
            let scan = scan_input(
                c,
                &inputs[i],
                &columns_of(i),
                std::mem::take(&mut pushed[i]),
                &scope,
                &[],
            )?;
            scanned += scan.1;
            reduced[i] = scan.0.rows < inputs[i].table.rows();
            unique = scan
                .0
                .positions
                .get(&d.key)
                .is_some_and(|&p| dimension::unique_keys(&scan.0, p).is_some());
            done[i] = Some(scan.0);
            left.retain(|&x| x != i);
        }
        let keys: Option<Vec<dimension::Keys<'_>>> = star
            .dims
            .iter()
            .map(|d| {
                let scan = done[d.input].as_ref()?;
                dimension::unique_keys(scan, *scan.positions.get(&d.key)?)
            })
            .collect();
        if let Some(keys) = keys {
            let mut residual = residual;
            let fact_filters = std::mem::take(&mut pushed[star.fact]);
            for e in &fact_filters {
                r.collect(e, &outputs, false, &mut used)?;
            }
            residual.splice(0..0, fact_filters);
            let above = Above {
                r: &r,
                items: &items,
                outputs: &outputs,
                select: &select,
                span: from.span(),
            };
            return run_star(
                c, &mut scope, &above, star, &keys, &done, &used, &inputs, residual, scanned,
            );
        }
    }
    while !left.is_empty() {
        // Next, the input whose scan is expected smallest: its table's rows
        // times the share of its key values the join filters it would get
        // now keep (TPC-H Q9: lineitem, narrowed by part's keys, before
        // orders, which lineitem's keys then narrow).
        let at = if inner_only {
            let expected = |i: usize| -> f64 {
                // Filters of its own keep an unknown share: a fifth, as
                // DuckDB's default selectivity (TPC-H Q2: part, filtered
                // to 747 of 200k rows, before partsupp, which part's keys
                // then narrow).
                let own = if pushed[i].is_empty() { 1.0 } else { 0.2 };
                filter_sources(i, &inputs, &done, &reduced, &filter_edges)
                    .iter()
                    .fold(
                        own * inputs[i].table.rows() as f64,
                        |rows, &(mine, other)| {
                            let keys = done[other.0].as_ref().map_or(0, |s| s.rows) as f64;
                            rows * (keys / distinct_bound(&inputs[i].table, mine.1)).min(1.0)
                        },
                    )
            };
            (0..left.len())
                .min_by(|&a, &b| expected(left[a]).total_cmp(&expected(left[b])))
                .unwrap_or(0)
        } else {
            0
        };
        let i = left.remove(at);
        let input = &inputs[i];
        let columns = columns_of(i);
        let filters = if inner_only {
            join_filters(c, i, &inputs, &done, &reduced, &filter_edges)
        } else {
            Vec::new()
        };
        let scan = scan_input(
            c,
            input,
            &columns,
            std::mem::take(&mut pushed[i]),
            &scope,
            &filters,
        )?;
        scanned += scan.1;
        reduced[i] = scan.0.rows < input.table.rows();
        done[i] = Some(scan.0);
    }
    let scans: Vec<Scan> = done.into_iter().flatten().collect();

    // Join.
    let start = Instant::now();
    let mut joined = if inner_only {
        let comparisons: Vec<Comparison> = ranges.iter().map(|&(cmp, _)| cmp).collect();
        let mut applied = vec![false; ranges.len()];
        let joined = greedy(c, &inputs, &scans, &edges, &comparisons, &mut applied)?;
        // The comparisons a range join applied are not evaluated again,
        // nor their columns gathered for it.
        let mut done: Vec<usize> = ranges
            .iter()
            .zip(&applied)
            .filter(|&(_, &a)| a)
            .map(|(&(_, at), _)| at)
            .collect();
        if !done.is_empty() {
            done.sort_unstable();
            for at in done.into_iter().rev() {
                residual.remove(at);
            }
            used = used_above(&residual)?;
        }
        joined
    } else {
        run_tree(c, &tree, &inputs, &scans)?
    };
    let mut semis = semis;
    for (semi, (keys, residual, gate)) in semis.iter_mut().zip(&semi_columns) {
        c.engine.check()?;
        if let Some(gate) = *gate
            && !any_null(&scans, &joined, gate)
        {
            // NOT IN's third anti-join acts on rows whose left side is
            // NULL; there are none.
            c.note("anti-join for NULLs on the left of NOT IN: none, skipped".into());
            continue;
        }
        if let Some(inner) = semi.pending.take() {
            // The subquery's scan, narrowed to the outer rows' keys.
            let outer_keys = match keys.first() {
                Some(&key) if keys.len() == 1 => int_keys(&scans, &joined, key).map(Arc::new),
                _ => None,
            };
            let columns = c.nest(|| c.run_simple_columns_keyed(&inner, &scope, outer_keys))?;
            scanned += columns.rows_scanned;
            c.note(super::correlated::semi_note(
                semi.anti,
                columns.rows,
                keys.len(),
            ));
            semi.rows = columns.rows;
            semi.columns = columns.arrays;
            semi.types = columns.types;
        }
        let before = joined.rows;
        let t = Instant::now();
        joined = semi_join(c, &scans, joined, semi, keys, residual, *gate)?;
        c.note(format!(
            "{}-join: {} → {} rows ({})",
            if semi.anti { "anti" } else { "semi" },
            thousands(before),
            thousands(joined.rows),
            super::ms(t)
        ));
    }
    c.engine.check()?;

    // A SELECT of aggregates only: folded from the joined rows.
    let over = Above {
        r: &r,
        items: &items,
        outputs: &outputs,
        select: &select,
        span: from.span(),
    };
    if let Some(plan) = fold::plan(&over, &inputs, !residual.is_empty()) {
        let check = || c.engine.check();
        let values = fold::fold_rows(&plan.calls, &scans, &joined, &check)?;
        c.note(format!(
            "joined rows: {} folded into {} aggregates, not gathered ({})",
            thousands(joined.rows),
            plan.calls.len(),
            super::ms(start)
        ));
        if let Some(relation) = fold::select_values(c, &mut scope, &over, &plan, &values, scanned)?
        {
            return Ok(relation);
        }
    }

    // The used columns as a table, and the SELECT over it.
    let used: Vec<ColRef> = used.into_iter().collect();
    let names: Vec<String> = used
        .iter()
        .map(|&(i, col)| {
            format!(
                "{}.{}",
                inputs[i].qualifier, inputs[i].table.fields[col].name
            )
        })
        .collect();
    let names = materialize::unique(&names);
    let types: Vec<DataType> = used.iter().map(|&c| type_of(&scans, c)).collect();
    // The gathered columns take 8 bytes a value (strings more, and the
    // table encoded from them less): reserved first, so that a join too
    // large for memory (a cross join filtered after it) fails with the
    // limit's message rather than the process.
    c.reserve(joined.rows.saturating_mul(8 * used.len()), || {
        format!("the columns of {} joined rows", thousands(joined.rows))
    })?;
    // The used columns gathered through the row ids, in parallel.
    let columns: Vec<Array<'static>> = used
        .par_iter()
        .map(|&c| {
            let k = joined.inputs.iter().position(|&x| x == c.0).unwrap_or(0);
            column_of(&scans, c).take_or_null(&joined.ids[k])
        })
        .collect();
    drop(scans);
    let name = c.internal_name("join");
    let table = materialize::table_from_arrays(
        &name,
        &names,
        &types,
        &columns,
        joined.rows,
        c.engine.partition_rows(),
    );
    drop(columns);
    c.note(format!(
        "joined rows: {} × {} columns, encoded as a table ({})",
        thousands(joined.rows),
        names.len(),
        super::ms(start)
    ));
    let rename: HashMap<ColRef, String> = used.iter().copied().zip(names).collect();
    let over = Above {
        r: &r,
        items: &items,
        outputs: &outputs,
        select: &select,
        span: from.span(),
    };
    let conjuncts = Conjuncts {
        residual,
        ..Conjuncts::default()
    };
    select_over(
        c, &mut scope, &over, name, table, &rename, conjuncts, scanned,
    )
}

/// A FROM item reading the table `name` (an intermediate result in the
/// scope) without an alias.
pub(super) fn named_table(name: String, span: Span) -> FromItem {
    FromItem::Table {
        table: TableRef::Named(Ident { name, span }),
        alias: None,
    }
}

/// Runs the SELECT over a star (`dimension`): the fact's partitions with
/// the used columns of its dimensions looked up per key code, and for each
/// dimension a column of matches whose NULLs the WHERE drops (an inner
/// join). `residual` holds the fact's own filters and the conjuncts over
/// several inputs.
#[allow(clippy::too_many_arguments)]
fn run_star(
    c: &Composer<'_>,
    scope: &mut Scope<'_>,
    above: &Above<'_>,
    star: &dimension::Star,
    keys: &[dimension::Keys<'_>],
    scans: &[Option<Scan>],
    used: &BTreeSet<ColRef>,
    inputs: &[Input],
    residual: Vec<Expr>,
    scanned: usize,
) -> Result<Relation> {
    let start = Instant::now();
    let fact = &inputs[star.fact];
    let dim_scans: Vec<&Scan> = star
        .dims
        .iter()
        .map(|d| {
            scans[d.input]
                .as_ref()
                .ok_or_else(|| Error::Internal("a dimension was not scanned".into()))
        })
        .collect::<Result<_>>()?;
    if let Some(relation) = fold_star(
        c, scope, above, star, keys, &dim_scans, inputs, &residual, scanned,
    )? {
        return Ok(relation);
    }
    let mut outputs = Vec::new();
    let mut names = Vec::new();
    for &(i, col) in used {
        let output = if i == star.fact {
            dimension::Output::Fact(col)
        } else {
            let dim = star
                .dims
                .iter()
                .position(|d| d.input == i)
                .ok_or_else(|| Error::Internal("a column of no input of the star".into()))?;
            let scan = dim_scans[dim];
            let position = *scan
                .positions
                .get(&col)
                .ok_or_else(|| Error::Internal("a dimension column was not scanned".into()))?;
            dimension::Output::Dim {
                dim,
                position,
                dtype: scan.types[position],
            }
        };
        outputs.push(output);
        names.push(format!(
            "{}.{}",
            inputs[i].qualifier, inputs[i].table.fields[col].name
        ));
    }
    // An inner join drops the rows without a partner: by a column of
    // matches in WHERE, or, when the SELECT groups by a column of the
    // dimension that is never NULL, by dropping the NULL group (the rows
    // without a partner are exactly those whose key column is NULL, so
    // the other groups are the join's): no filter runs on the rows.
    let mut null_groups: Vec<ColRef> = Vec::new();
    let mut matched_count = 0;
    for (k, d) in star.dims.iter().enumerate().filter(|_| !star.outer) {
        let never_null = |&(i, col): &ColRef| {
            i == d.input
                && dim_scans[k].positions.get(&col).is_some_and(|&p| {
                    dim_scans[k].columns[p]
                        .validity
                        .as_ref()
                        .is_none_or(|v| v.all_set())
                })
        };
        let grouped = above
            .select
            .group_by
            .iter()
            .map(|e| match &e.kind {
                ExprKind::Literal(Literal::Int(n)) if *n >= 1 => {
                    above.items.get(*n as usize - 1).map_or(e, |(item, _)| item)
                }
                _ => e,
            })
            .find_map(|e| above.r.resolve(e).ok().flatten().filter(never_null));
        match grouped {
            Some(c) => null_groups.push(c),
            None => {
                outputs.push(dimension::Output::Matched(k));
                names.push(format!("{}.$matched", inputs[d.input].qualifier));
                matched_count += 1;
            }
        }
    }
    let names = materialize::unique(&names);
    let types: Vec<DataType> = outputs
        .iter()
        .map(|o| match *o {
            dimension::Output::Fact(col) => fact.table.fields[col].dtype,
            dimension::Output::Dim { dtype, .. } => dtype,
            dimension::Output::Matched(_) => DataType::Int,
        })
        .collect();
    let entries: Vec<Option<dimension::Entries>> = outputs
        .iter()
        .map(|o| match *o {
            dimension::Output::Dim { dim, position, .. } => {
                dimension::Entries::of(&dim_scans[dim].columns[position])
            }
            _ => None,
        })
        .collect();
    let check = || c.engine.check();
    let partitions = dimension::lookup_partitions(
        &fact.table,
        star,
        keys,
        &dim_scans,
        &outputs,
        &entries,
        &check,
    )?;
    let name = c.internal_name("star");
    let table = materialize::table(&name, &names, types, partitions);
    note_dimension_joins(c, star, keys, inputs, "looked up once per code");
    c.note(format!(
        "{}: {} rows with {} columns looked up ({})",
        fact.qualifier,
        thousands(fact.table.rows()),
        star.dims.len(),
        super::ms(start)
    ));
    let matched: Vec<String> = names[names.len() - matched_count..].to_vec();
    let rename: HashMap<ColRef, String> = used.iter().copied().zip(names).collect();
    let not_null = |name: &str| {
        let span = Span::default();
        Expr {
            kind: ExprKind::IsNull {
                expr: Box::new(Expr {
                    kind: ExprKind::Column(name.to_string()),
                    span,
                }),
                negated: true,
            },
            span,
        }
    };
    let having = null_groups
        .iter()
        .filter_map(|c| rename.get(c))
        .map(|n| {
            c.note(format!(
                "rows without a partner: the NULL group of {n}, dropped (no filter)"
            ));
            not_null(n)
        })
        .collect();
    let conjuncts = Conjuncts {
        residual,
        extra: matched.iter().map(|n| not_null(n)).collect(),
        having,
    };
    select_over(c, scope, above, name, table, &rename, conjuncts, scanned)
}

/// EXPLAIN's line for each dimension join of `star`: its input, key count
/// and key columns, and `how` the fact's partitions meet it.
fn note_dimension_joins(
    c: &Composer<'_>,
    star: &dimension::Star,
    keys: &[dimension::Keys<'_>],
    inputs: &[Input],
    how: &str,
) {
    let fact = &inputs[star.fact];
    for (d, k) in star.dims.iter().zip(keys) {
        c.note(format!(
            "dimension {}join: {} ({} unique keys) on {}.{} = {}.{}: {how} of the key in each \
             partition of {}",
            if star.outer { "left " } else { "" },
            inputs[d.input].qualifier,
            thousands(dimension::key_count(k)),
            fact.qualifier,
            fact.table.fields[d.fact_key].name,
            inputs[d.input].qualifier,
            inputs[d.input].table.fields[d.key].name,
            fact.qualifier,
        ));
    }
}

/// The SELECT over a star folded from the fact's partitions
/// ([`dimension::fold_partitions`]), when it is only aggregates
/// ([`fold::plan`]); `None` otherwise.
#[allow(clippy::too_many_arguments)]
fn fold_star(
    c: &Composer<'_>,
    scope: &mut Scope<'_>,
    above: &Above<'_>,
    star: &dimension::Star,
    keys: &[dimension::Keys<'_>],
    dim_scans: &[&Scan],
    inputs: &[Input],
    residual: &[Expr],
    scanned: usize,
) -> Result<Option<Relation>> {
    let Some(plan) = fold::plan(above, inputs, !residual.is_empty()) else {
        return Ok(None);
    };
    let start = Instant::now();
    let fact = &inputs[star.fact];
    let mut calls = Vec::with_capacity(plan.calls.len());
    for &call in &plan.calls {
        let source = match call.arg {
            fold::Arg::Rows => dimension::Source::Rows,
            fold::Arg::Column((i, col)) if i == star.fact => dimension::Source::Fact(col),
            fold::Arg::Column((i, col)) => {
                let Some(dim) = star.dims.iter().position(|d| d.input == i) else {
                    return Ok(None);
                };
                let Some(&position) = dim_scans[dim].positions.get(&col) else {
                    return Ok(None);
                };
                dimension::Source::Dim { dim, position }
            }
        };
        calls.push((call, source));
    }
    let check = || c.engine.check();
    let values = dimension::fold_partitions(&fact.table, star, keys, dim_scans, &calls, &check)?;
    note_dimension_joins(c, star, keys, inputs, "aggregates folded per code");
    c.note(format!(
        "{}: {} rows folded into {} aggregates, no joined rows ({})",
        fact.qualifier,
        thousands(fact.table.rows()),
        calls.len(),
        super::ms(start)
    ));
    fold::select_values(c, scope, above, &plan, &values, scanned)
}

/// What the SELECT asks of the joined rows: its items, output names and
/// clauses, with the resolver that maps its column references.
struct Above<'a> {
    r: &'a Resolver<'a>,
    items: &'a [(Expr, Option<Ident>)],
    outputs: &'a [String],
    select: &'a Select,
    span: Span,
}

/// Conditions of the SELECT over the joined rows, besides its own HAVING.
#[derive(Default)]
struct Conjuncts {
    /// WHERE conjuncts over the inputs.
    residual: Vec<Expr>,
    /// WHERE conjuncts already over the joined table's names.
    extra: Vec<Expr>,
    /// HAVING conjuncts over the joined table's names.
    having: Vec<Expr>,
}

/// Runs the SELECT's grouping, HAVING, ORDER BY and LIMIT over `table`, the
/// joined rows (added to `scope` as `name`), whose column `rename[c]` holds
/// input column `c`, with `conjuncts` added to its WHERE and HAVING.
#[allow(clippy::too_many_arguments)]
fn select_over(
    c: &Composer<'_>,
    scope: &mut Scope<'_>,
    above: &Above<'_>,
    name: String,
    table: Table,
    rename: &HashMap<ColRef, String>,
    conjuncts: Conjuncts,
    scanned: usize,
) -> Result<Relation> {
    scope.add(&name, table);
    let rewrite = |e: &Expr, order: bool| -> Result<Expr> {
        let mut e = e.clone();
        above.r.rewrite(&mut e, rename, above.outputs, order)?;
        Ok(e)
    };
    let mut projection = Vec::with_capacity(above.items.len());
    for (expr, alias) in above.items {
        let alias = alias.clone().or_else(|| match &expr.kind {
            ExprKind::Column(n) | ExprKind::QualifiedColumn { column: n, .. } => Some(Ident {
                name: n.clone(),
                span: expr.span,
            }),
            _ => None,
        });
        let expr = rewrite(expr, false)?;
        projection.push(SelectItem::Expr { expr, alias });
    }
    let select = above.select;
    let Conjuncts {
        residual,
        extra,
        having: extra_having,
    } = conjuncts;
    let mut conjuncts = residual
        .iter()
        .map(|e| rewrite(e, false))
        .collect::<Result<Vec<_>>>()?;
    conjuncts.extend(extra);
    let having = select
        .having
        .as_ref()
        .map(|e| rewrite(e, false))
        .transpose()?
        .into_iter()
        .chain(extra_having)
        .collect::<Vec<_>>();
    let span = above.span;
    let final_select = Select {
        group_by: select
            .group_by
            .iter()
            .map(|e| rewrite(e, false))
            .collect::<Result<_>>()?,
        having: and_all(having),
        order_by: select
            .order_by
            .iter()
            .map(|o| {
                let mut o = o.clone();
                o.expr = rewrite(&o.expr, true)?;
                Ok(o)
            })
            .collect::<Result<_>>()?,
        limit: select.limit,
        offset: select.offset,
        ..Select::over(
            projection,
            named_table(name, span),
            and_all(conjuncts),
            select.span,
        )
    };
    let mut rel = c.run_simple(&final_select, scope, None)?;
    rel.rows_scanned += scanned;
    Ok(rel)
}

/// Drops the select items whose output name is not in `needed` (keeping
/// one, so the rows stay), unless GROUP BY, HAVING or ORDER BY may name
/// them (an ordinal, or a bare name equal to the item's).
fn keep_items(items: &mut Vec<(Expr, Option<Ident>)>, needed: &HashSet<String>, select: &Select) {
    let mut clause_names = HashSet::new();
    let mut ordinal = false;
    let clauses = select
        .group_by
        .iter()
        .chain(select.having.iter())
        .chain(select.order_by.iter().map(|o| &o.expr));
    for e in clauses {
        ordinal |= matches!(e.kind, ExprKind::Literal(Literal::Int(_)));
        walk(e, &mut |x| {
            if let ExprKind::Column(n) = &x.kind {
                clause_names.insert(n.to_ascii_lowercase());
            }
        });
    }
    if ordinal {
        return;
    }
    let name = |(e, alias): &(Expr, Option<Ident>)| match (alias, &e.kind) {
        (Some(a), _) => Some(a.name.to_ascii_lowercase()),
        (None, ExprKind::Column(n)) | (None, ExprKind::QualifiedColumn { column: n, .. }) => {
            Some(n.to_ascii_lowercase())
        }
        _ => None,
    };
    let keep: Vec<bool> = items
        .iter()
        .map(|item| name(item).is_some_and(|n| needed.contains(&n) || clause_names.contains(&n)))
        .collect();
    if keep.iter().all(|&k| k) {
        return;
    }
    let first = items.first().cloned();
    let mut k = keep.iter();
    items.retain(|_| *k.next().unwrap_or(&true));
    if items.is_empty()
        && let Some(first) = first
    {
        items.push(first);
    }
}

/// `(Column(name) of input i, alias name)` for a `*` expansion.
fn qualified(i: usize, input: &Input, name: &str, span: Span) -> (Expr, Option<Ident>) {
    let _ = i;
    let kind = ExprKind::QualifiedColumn {
        table: input.qualifier.clone(),
        column: name.to_string(),
    };
    (
        Expr { kind, span },
        Some(Ident {
            name: name.to_string(),
            span,
        }),
    )
}

/// The FROM tree, its inputs resolved (tables) or run (subqueries).
fn build(
    c: &Composer<'_>,
    from: &FromItem,
    inputs: &mut Vec<Input>,
    scope: &mut Scope<'_>,
    padded: bool,
    scanned: &mut usize,
    reads: Option<&HashSet<String>>,
) -> Result<Node> {
    match from {
        FromItem::Table { table, alias } => {
            let resolved = crate::plan::resolve_table(table, scope)?;
            let qualifier = match (alias, table) {
                (Some(a), _) => a.name.clone(),
                (None, TableRef::Named(n)) => n.name.clone(),
                (None, TableRef::File { path, .. }) => file_stem(path),
                (None, TableRef::Function { args, name, .. }) => args
                    .first()
                    .and_then(|a| match &a.value {
                        crate::sql::ast::TableArgValue::Expr(Expr {
                            kind: ExprKind::Literal(Literal::String(p)),
                            ..
                        }) => Some(file_stem(p)),
                        _ => None,
                    })
                    .unwrap_or_else(|| name.name.clone()),
            };
            add_input(
                inputs,
                qualifier,
                resolved,
                table.clone(),
                padded,
                from.span(),
            )
        }
        FromItem::Subquery {
            query,
            alias,
            columns,
            span,
        } => {
            let reads = reads.filter(|_| columns.is_empty());
            let name = c.internal_name("subquery");
            let table = match query
                .as_select()
                .filter(|s| columns.is_empty() && is_scan(s))
            {
                // A filter-and-project of one table (as computed join keys
                // make): scanned into columns and encoded from them.
                Some(select) => {
                    let (table, rows) = c.nest(|| c.scan_table(&name, select, scope, reads))?;
                    *scanned += rows;
                    table
                }
                None => {
                    let mut rel = c.nest(|| c.run_query_for(query, scope, reads))?;
                    super::rename_columns(&mut rel, columns)?;
                    *scanned += rel.rows_scanned;
                    c.materialize(&name, &rel)
                }
            };
            let table = scope.add(&name, table);
            let qualifier = alias
                .as_ref()
                .map_or_else(|| name.clone(), |a| a.name.clone());
            let source = TableRef::Named(Ident { name, span: *span });
            add_input(inputs, qualifier, table, source, padded, *span)
        }
        FromItem::Join(join) => {
            let (pad_left, pad_right) = match join.kind {
                JoinKind::Left => (false, true),
                JoinKind::Right => (true, false),
                JoinKind::Full => (true, true),
                _ => (false, false),
            };
            let left = build(
                c,
                &join.left,
                inputs,
                scope,
                padded || pad_left,
                scanned,
                reads,
            )?;
            let right = build(
                c,
                &join.right,
                inputs,
                scope,
                padded || pad_right,
                scanned,
                reads,
            )?;
            Ok(Node::Join {
                kind: join.kind,
                left: Box::new(left),
                right: Box::new(right),
                constraint: join.constraint.clone(),
                keys: Vec::new(),
                residual: Vec::new(),
                span: join.span,
            })
        }
    }
}

fn add_input(
    inputs: &mut Vec<Input>,
    qualifier: String,
    table: Arc<Table>,
    source: TableRef,
    padded: bool,
    span: Span,
) -> Result<Node> {
    if inputs
        .iter()
        .any(|i| i.qualifier.eq_ignore_ascii_case(&qualifier))
    {
        return Err(Error::plan_at(
            format!("the name \"{qualifier}\" is given to two inputs of FROM: give each an alias"),
            span.start,
        ));
    }
    inputs.push(Input {
        qualifier,
        table,
        source,
        padded,
    });
    Ok(Node::Input(inputs.len() - 1))
}

/// `trips` of `data/trips.csv.gz`: the name DuckDB gives a file in FROM.
fn file_stem(path: &str) -> String {
    let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
    name.split('.').next().unwrap_or(name).to_string()
}

fn usings(node: &Node, out: &mut Vec<String>) {
    if let Node::Join {
        left,
        right,
        constraint,
        ..
    } = node
    {
        if let JoinConstraint::Using(names) = constraint {
            out.extend(names.iter().map(|n| n.name.to_ascii_lowercase()));
        }
        usings(left, out);
        usings(right, out);
    }
}

/// The USING columns of RIGHT and FULL joins (lower case), each with the
/// inputs under the join that have it, in FROM order.
fn merged_usings(node: &Node, inputs: &[Input], out: &mut Vec<(String, Vec<usize>)>) {
    let Node::Join {
        kind,
        left,
        right,
        constraint,
        ..
    } = node
    else {
        return;
    };
    if let (JoinKind::Right | JoinKind::Full, JoinConstraint::Using(names)) = (kind, constraint) {
        let mut under = Vec::new();
        inputs_under(left, &mut under);
        inputs_under(right, &mut under);
        under.sort_unstable();
        for n in names {
            let lower = n.name.to_ascii_lowercase();
            let holders = under
                .iter()
                .copied()
                .filter(|&i| inputs[i].table.column_index(&n.name).is_some());
            match out.iter_mut().find(|(m, _)| *m == lower) {
                Some((_, have)) => {
                    have.extend(holders);
                    have.sort_unstable();
                    have.dedup();
                }
                None => out.push((lower, holders.collect())),
            }
        }
    }
    merged_usings(left, inputs, out);
    merged_usings(right, inputs, out);
}

/// `coalesce(a.name, b.name, …)` over the `holders` inputs.
fn merged_column(name: &str, holders: &[usize], inputs: &[Input], span: Span) -> Expr {
    let args = holders
        .iter()
        .map(|&i| Expr {
            kind: ExprKind::QualifiedColumn {
                table: inputs[i].qualifier.clone(),
                column: name.to_string(),
            },
            span,
        })
        .collect();
    Expr::call("coalesce", args, span)
}

/// Rewrites the bare references in `e` to a merged USING column
/// ([`merged_usings`]) as their [`merged_column`].
fn merge_using_columns(e: &mut Expr, merged: &[(String, Vec<usize>)], inputs: &[Input]) {
    if let ExprKind::Column(n) = &e.kind {
        let lower = n.to_ascii_lowercase();
        if let Some((_, holders)) = merged.iter().find(|(m, _)| *m == lower) {
            *e = merged_column(n, holders, inputs, e.span);
        }
        return;
    }
    for child in e.children_mut() {
        merge_using_columns(child, merged, inputs);
    }
}

fn inner_tree(node: &Node) -> bool {
    match node {
        Node::Input(_) => true,
        Node::Join {
            kind, left, right, ..
        } => {
            matches!(kind, JoinKind::Inner | JoinKind::Cross | JoinKind::Comma)
                && inner_tree(left)
                && inner_tree(right)
        }
    }
}

fn inputs_under(node: &Node, out: &mut Vec<usize>) {
    match node {
        Node::Input(i) => out.push(*i),
        Node::Join { left, right, .. } => {
            inputs_under(left, out);
            inputs_under(right, out);
        }
    }
}

fn tree_keys(node: &Node) -> Vec<(ColRef, ColRef)> {
    match node {
        Node::Input(_) => Vec::new(),
        Node::Join {
            left,
            right,
            keys,
            residual,
            ..
        } => {
            let mut v = keys.clone();
            v.extend(residual.iter().map(|&(a, _, b)| (a, b)));
            v.extend(tree_keys(left));
            v.extend(tree_keys(right));
            v
        }
    }
}

/// `conjuncts` and, for each OR among them, the conjuncts every branch
/// has (compared as text): `(a = b AND x) OR (a = b AND y)` also gives
/// `a = b`, a join key where the OR alone would make a cross join (TPC-H
/// Q19). The OR stays, so the answer is unchanged.
fn with_common_factors(conjuncts: Vec<Expr>) -> Vec<Expr> {
    let mut extra = Vec::new();
    for c in &conjuncts {
        let mut branches = Vec::new();
        disjuncts(c, &mut branches);
        if branches.len() < 2 {
            continue;
        }
        let split: Vec<Vec<Expr>> = branches
            .iter()
            .map(|b| super::conjuncts((*b).clone()))
            .collect();
        for candidate in &split[0] {
            let text = candidate.to_string();
            if split[1..]
                .iter()
                .all(|b| b.iter().any(|x| x.to_string() == text))
                && !extra.iter().any(|x: &Expr| x.to_string() == text)
            {
                extra.push(candidate.clone());
            }
        }
    }
    let mut out = conjuncts;
    out.extend(extra);
    out
}

/// Filters an OR across inputs implies on single inputs: when every
/// disjunct has conjuncts on input `i` alone, the OR of those (per
/// disjunct, their AND) holds for every row the OR keeps, so `i`'s scan
/// may apply it too (the OR itself stays after the joins). TPC-H Q7's
/// `(n1.n_name = 'FRANCE' AND n2.n_name = 'GERMANY') OR (n1.n_name =
/// 'GERMANY' AND n2.n_name = 'FRANCE')` keeps two nations of each of n1
/// and n2, and so about a tenth of suppliers and customers, before any
/// join.
fn derived_filters(e: &Expr, r: &Resolver<'_>, inputs: usize) -> Result<Vec<(usize, Expr)>> {
    let mut branches = Vec::new();
    disjuncts(e, &mut branches);
    if branches.len() < 2 {
        return Ok(Vec::new());
    }
    let mut split: Vec<Vec<(BTreeSet<usize>, Expr)>> = Vec::with_capacity(branches.len());
    for b in &branches {
        let mut parts = Vec::new();
        for c in super::conjuncts((*b).clone()) {
            let (used, complete) = r.inputs_of(&c)?;
            if complete && used.len() == 1 {
                parts.push((used, c));
            }
        }
        split.push(parts);
    }
    let mut out = Vec::new();
    for i in 0..inputs {
        let per_branch: Option<Vec<Expr>> = split
            .iter()
            .map(|parts| {
                and_all(
                    parts
                        .iter()
                        .filter(|(used, _)| used.contains(&i))
                        .map(|(_, c)| c.clone())
                        .collect(),
                )
            })
            .collect();
        if let Some(per_branch) = per_branch {
            let derived = per_branch.into_iter().reduce(|a, b| {
                let span = a.span.union(b.span);
                Expr {
                    kind: ExprKind::Binary {
                        op: BinaryOp::Or,
                        left: Box::new(a),
                        right: Box::new(b),
                    },
                    span,
                }
            });
            out.extend(derived.map(|d| (i, d)));
        }
    }
    Ok(out)
}

fn disjuncts<'e>(e: &'e Expr, out: &mut Vec<&'e Expr>) {
    match &e.kind {
        ExprKind::Binary {
            op: BinaryOp::Or,
            left,
            right,
        } => {
            disjuncts(left, out);
            disjuncts(right, out);
        }
        _ => out.push(e),
    }
}

/// The USING columns of a join as key pairs.
fn using_keys(
    r: &Resolver<'_>,
    left: &Node,
    right: &Node,
    names: &[Ident],
) -> Result<Vec<(ColRef, ColRef)>> {
    let find = |node: &Node, name: &Ident, side: &str| -> Result<ColRef> {
        let mut under = Vec::new();
        inputs_under(node, &mut under);
        under
            .iter()
            .find_map(|&i| r.inputs[i].table.column_index(&name.name).map(|c| (i, c)))
            .ok_or_else(|| {
                Error::plan_at(
                    format!("USING column \"{}\" is not in the {side} input", name.name),
                    name.span.start,
                )
            })
    };
    names
        .iter()
        .map(|n| Ok((find(left, n, "left")?, find(right, n, "right")?)))
        .collect()
}

/// In an inner-join tree: ON conjuncts join the pool, USING columns become
/// edges.
fn on_conjuncts(
    node: &mut Node,
    r: &Resolver<'_>,
    pool: &mut Vec<Expr>,
    edges: &mut Vec<(ColRef, ColRef)>,
) -> Result<()> {
    if let Node::Join {
        left,
        right,
        constraint,
        ..
    } = node
    {
        match constraint {
            JoinConstraint::On(e) => pool.extend(conjuncts(e.clone())),
            JoinConstraint::Using(names) => edges.extend(using_keys(r, left, right, names)?),
            JoinConstraint::None => {}
        }
        on_conjuncts(left, r, pool, edges)?;
        on_conjuncts(right, r, pool, edges)?;
    }
    Ok(())
}

/// In a tree with outer joins: each join's ON becomes its keys, or is
/// pushed into an input that the join may filter (the padded side of an
/// outer join, either side of an inner one).
fn place_outer(node: &mut Node, r: &Resolver<'_>, pushed: &mut [Vec<Expr>]) -> Result<()> {
    let Node::Join {
        kind,
        left,
        right,
        constraint,
        keys,
        residual,
        span,
    } = node
    else {
        return Ok(());
    };
    place_outer(left, r, pushed)?;
    place_outer(right, r, pushed)?;
    let (mut l, mut rr) = (Vec::new(), Vec::new());
    inputs_under(left, &mut l);
    inputs_under(right, &mut rr);
    match constraint {
        JoinConstraint::None => {}
        JoinConstraint::Using(names) => keys.extend(using_keys(r, left, right, names)?),
        JoinConstraint::On(on) => {
            for e in conjuncts(on.clone()) {
                let (used, complete) = r.inputs_of(&e)?;
                if let Some((a, b)) = equality(r, &e)? {
                    if l.contains(&a.0) && rr.contains(&b.0) {
                        keys.push((a, b));
                        continue;
                    }
                    if l.contains(&b.0) && rr.contains(&a.0) {
                        keys.push((b, a));
                        continue;
                    }
                }
                if let Some((a, op, b)) = comparison(r, &e)? {
                    if l.contains(&a.0) && rr.contains(&b.0) {
                        residual.push((a, op, b));
                        continue;
                    }
                    if l.contains(&b.0) && rr.contains(&a.0) {
                        residual.push((b, super::correlated::flip(op), a));
                        continue;
                    }
                }
                let filterable = |i: &usize| match kind {
                    JoinKind::Left => rr.contains(i),
                    JoinKind::Right => l.contains(i),
                    JoinKind::Full => false,
                    _ => true,
                };
                match used.iter().next() {
                    Some(i) if used.len() == 1 && complete && filterable(i) => {
                        pushed[*i].push(e);
                    }
                    _ => {
                        return Err(Error::plan_at(
                            "with outer joins, an ON condition must be an equality or comparison of a column of each side, or a condition on one input the join may filter; this one is not supported yet",
                            e.span.start,
                        ));
                    }
                }
            }
        }
    }
    if keys.is_empty() && residual.is_empty() && !matches!(kind, JoinKind::Cross | JoinKind::Comma)
    {
        return Err(Error::plan_at(
            "this join has no equality between its two sides; joins without one are not supported yet",
            span.start,
        ));
    }
    Ok(())
}

/// `a.x op b.y` between two column references, `op` a comparison other
/// than `=`.
fn comparison(r: &Resolver<'_>, e: &Expr) -> Result<Option<Comparison>> {
    if let ExprKind::Binary { op, left, right } = &e.kind
        && matches!(
            op,
            BinaryOp::NotEq | BinaryOp::Lt | BinaryOp::LtEq | BinaryOp::Gt | BinaryOp::GtEq
        )
        && let (Some(a), Some(b)) = (r.resolve(left)?, r.resolve(right)?)
    {
        return Ok(Some((a, *op, b)));
    }
    Ok(None)
}

/// `a.x = b.y` between two column references.
fn equality(r: &Resolver<'_>, e: &Expr) -> Result<Option<(ColRef, ColRef)>> {
    if let ExprKind::Binary {
        op: BinaryOp::Eq,
        left,
        right,
    } = &e.kind
        && let (Some(a), Some(b)) = (r.resolve(left)?, r.resolve(right)?)
    {
        return Ok(Some((a, b)));
    }
    Ok(None)
}

/// Resolves column references against the FROM tree's inputs.
struct Resolver<'a> {
    inputs: &'a [Input],
    /// USING columns, lower case: a name of several inputs means the first.
    using: Vec<String>,
}

impl Resolver<'_> {
    fn input_named(&self, name: &str, span: Span) -> Result<usize> {
        self.inputs
            .iter()
            .position(|i| i.qualifier.eq_ignore_ascii_case(name))
            .ok_or_else(|| {
                let names: Vec<&str> = self.inputs.iter().map(|i| i.qualifier.as_str()).collect();
                Error::plan_at(
                    format!(
                        "unknown table \"{name}\" (FROM names {})",
                        names
                            .iter()
                            .map(|n| format!("\"{n}\""))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                    span.start,
                )
            })
    }

    /// The input column `e` names, if it is a column reference that
    /// resolves; `None` for other expressions and unknown bare names (which
    /// may be output aliases).
    fn resolve(&self, e: &Expr) -> Result<Option<ColRef>> {
        match &e.kind {
            ExprKind::QualifiedColumn { table, column } => {
                let i = self.input_named(table, e.span)?;
                match self.inputs[i].table.column_index(column) {
                    Some(c) => Ok(Some((i, c))),
                    None => Err(Error::plan_at(
                        format!("unknown column \"{column}\" in \"{table}\""),
                        e.span.start,
                    )),
                }
            }
            ExprKind::Column(name) => {
                let found: Vec<ColRef> = self
                    .inputs
                    .iter()
                    .enumerate()
                    .filter_map(|(i, input)| input.table.column_index(name).map(|c| (i, c)))
                    .collect();
                match found.len() {
                    0 => Ok(None),
                    1 => Ok(Some(found[0])),
                    _ if self.using.contains(&name.to_ascii_lowercase()) => Ok(Some(found[0])),
                    _ => {
                        let owners: Vec<String> = found
                            .iter()
                            .map(|&(i, _)| format!("{}.{name}", self.inputs[i].qualifier))
                            .collect();
                        Err(Error::plan_at(
                            format!(
                                "column name \"{name}\" is ambiguous: write {}",
                                owners.join(" or ")
                            ),
                            e.span.start,
                        ))
                    }
                }
            }
            _ => Ok(None),
        }
    }

    /// The inputs `e` reads, and whether every column reference in it
    /// resolved.
    fn inputs_of(&self, e: &Expr) -> Result<(BTreeSet<usize>, bool)> {
        let mut used = BTreeSet::new();
        let mut complete = true;
        let mut error = None;
        walk(e, &mut |x| {
            if error.is_some() {
                return;
            }
            match self.resolve(x) {
                Ok(Some((i, _))) => {
                    used.insert(i);
                }
                Ok(None) => {
                    if matches!(x.kind, ExprKind::Column(_)) {
                        complete = false;
                    }
                }
                Err(err) => error = Some(err),
            }
        });
        match error {
            Some(e) => Err(e),
            None => Ok((used, complete)),
        }
    }

    /// Adds the input columns `e` reads to `out`; in ORDER BY (`order`),
    /// a bare name of an output column is that output, not an input's.
    fn collect(
        &self,
        e: &Expr,
        outputs: &[String],
        order: bool,
        out: &mut BTreeSet<ColRef>,
    ) -> Result<()> {
        let mut error = None;
        walk(e, &mut |x| {
            if error.is_some() {
                return;
            }
            if let ExprKind::Column(n) = &x.kind
                && order
                && outputs.contains(&n.to_ascii_lowercase())
            {
                return;
            }
            match self.resolve(x) {
                Ok(Some(c)) => {
                    out.insert(c);
                }
                Ok(None) => {}
                Err(err) => error = Some(err),
            }
        });
        error.map_or(Ok(()), Err)
    }

    /// Replaces each column reference in `e` by its name in the joined
    /// table.
    fn rewrite(
        &self,
        e: &mut Expr,
        names: &HashMap<ColRef, String>,
        outputs: &[String],
        order: bool,
    ) -> Result<()> {
        if let ExprKind::Column(n) = &e.kind
            && order
            && outputs.contains(&n.to_ascii_lowercase())
        {
            return Ok(());
        }
        if let Some(c) = self.resolve(e)? {
            let name = names.get(&c).cloned().ok_or_else(|| {
                Error::Internal("a column used above the join was not kept".into())
            })?;
            e.kind = ExprKind::Column(name);
            return Ok(());
        }
        for child in e.children_mut() {
            self.rewrite(child, names, outputs, order)?;
        }
        Ok(())
    }
}

/// Scans `input` through the single-table pipeline: `columns` of its rows
/// that pass `filters`.
fn scan_input(
    c: &Composer<'_>,
    input: &Input,
    columns: &[usize],
    filters: Vec<Expr>,
    scope: &Scope<'_>,
    join_filters: &[JoinFilter],
) -> Result<(Scan, usize)> {
    let span = Span::default();
    let mut projection: Vec<SelectItem> = columns
        .iter()
        .map(|&col| SelectItem::Expr {
            expr: Expr {
                kind: ExprKind::Column(input.table.fields[col].name.clone()),
                span,
            },
            alias: None,
        })
        .collect();
    if projection.is_empty() {
        projection.push(SelectItem::Expr {
            expr: Expr {
                kind: ExprKind::Literal(Literal::Int(1)),
                span,
            },
            alias: None,
        });
    }
    let selection = and_all(
        filters
            .into_iter()
            .map(|mut e| {
                unqualify(&mut e);
                e
            })
            .collect(),
    );
    let from = FromItem::Table {
        table: input.source.clone(),
        alias: Some(Ident {
            name: input.qualifier.clone(),
            span,
        }),
    };
    let select = Select::over(projection, from, selection, span);
    let scanned = c.run_simple_columns(&select, scope, join_filters)?;
    // The scanned rows stay until the statement ends.
    c.reserve(scanned.arrays.iter().map(Array::heap_bytes).sum(), || {
        format!(
            "the {} rows of {} scanned for a join",
            thousands(scanned.rows),
            input.qualifier
        )
    })?;
    let positions = columns.iter().enumerate().map(|(p, &c)| (c, p)).collect();
    Ok((
        Scan {
            columns: scanned.arrays,
            rows: scanned.rows,
            positions,
            types: scanned.types,
        },
        scanned.rows_scanned,
    ))
}

/// The distinct values of integer (or timestamp) column `key` in the
/// joined rows, NULLs left out; `None` for another type.
fn int_keys(scans: &[Scan], joined: &Joined, key: ColRef) -> Option<KeySet> {
    let column = column_of(scans, key);
    let Data::Int(values) = &column.data else {
        return None;
    };
    if !matches!(
        type_of(scans, key),
        DataType::Int | DataType::Timestamp | DataType::Date | DataType::Interval
    ) {
        return None;
    }
    let k = joined.inputs.iter().position(|&x| x == key.0)?;
    let keys: Vec<i64> = joined.ids[k]
        .iter()
        .filter(|&&id| id != NONE && column.is_valid(id as usize))
        .map(|&id| values[id as usize])
        .collect();
    Some(KeySet::new(&keys))
}

/// Whether column `key` is NULL in some joined row (its input missing, as
/// an outer join pads, or its value NULL).
fn any_null(scans: &[Scan], joined: &Joined, key: ColRef) -> bool {
    let column = column_of(scans, key);
    let Some(k) = joined.inputs.iter().position(|&x| x == key.0) else {
        return true;
    };
    joined.ids[k]
        .iter()
        .any(|&id| id == NONE || !column.is_valid(id as usize))
}

/// The equalities `edges` imply: every pair of columns of different
/// inputs joined by a chain of them (union-find over the columns).
fn transitive_edges(edges: &[(ColRef, ColRef)]) -> Vec<(ColRef, ColRef)> {
    let mut parent: HashMap<ColRef, ColRef> = HashMap::new();
    fn root(parent: &mut HashMap<ColRef, ColRef>, x: ColRef) -> ColRef {
        let p = *parent.entry(x).or_insert(x);
        if p == x {
            return x;
        }
        let r = root(parent, p);
        parent.insert(x, r);
        r
    }
    for &(a, b) in edges {
        let (ra, rb) = (root(&mut parent, a), root(&mut parent, b));
        if ra != rb {
            parent.insert(ra, rb);
        }
    }
    let columns: Vec<ColRef> = parent
        .keys()
        .copied()
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let mut out = Vec::new();
    for (n, &a) in columns.iter().enumerate() {
        for &b in &columns[n + 1..] {
            if a.0 != b.0 && root(&mut parent, a) == root(&mut parent, b) {
                out.push((a, b));
            }
        }
    }
    out
}

/// An upper bound on the distinct values of integer column `col` of
/// `table`: the span of its zone maps, at most its rows (the rows for
/// other types).
fn distinct_bound(table: &Table, col: usize) -> f64 {
    let rows = table.rows() as f64;
    let mut span: Option<(i64, i64)> = None;
    for p in &table.partitions {
        let zone = &p.columns[col].zone;
        let (
            Value::Int(lo) | Value::Timestamp(lo) | Value::Date(lo) | Value::Interval(lo),
            Value::Int(hi) | Value::Timestamp(hi) | Value::Date(hi) | Value::Interval(hi),
        ) = (&zone.min, &zone.max)
        else {
            continue;
        };
        span = Some(match span {
            None => (*lo, *hi),
            Some((a, b)) => (a.min(*lo), b.max(*hi)),
        });
    }
    match span {
        Some((lo, hi)) => (hi.abs_diff(lo) as f64 + 1.0).min(rows).max(1.0),
        None => rows.max(1.0),
    }
}

/// The join keys `(column of i, column of a scanned input)` of `edges`
/// whose scanned side may filter input `i`'s scan: its rows were reduced
/// by its filters, are at most half of `i`'s table, and both columns are
/// integers (or both timestamps).
fn filter_sources(
    i: usize,
    inputs: &[Input],
    scans: &[Option<Scan>],
    reduced: &[bool],
    edges: &[(ColRef, ColRef)],
) -> Vec<(ColRef, ColRef)> {
    let table_rows = inputs[i].table.rows();
    let mut out = Vec::new();
    for &(a, b) in edges {
        let (mine, other) = match (a.0 == i, b.0 == i) {
            (true, false) => (a, b),
            (false, true) => (b, a),
            _ => continue,
        };
        let Some(scan) = &scans[other.0] else {
            continue;
        };
        if !reduced[other.0] || scan.rows.saturating_mul(2) > table_rows {
            continue;
        }
        let field = &inputs[i].table.fields[mine.1];
        let Some(&at) = scan.positions.get(&other.1) else {
            continue;
        };
        if !matches!(
            field.dtype,
            DataType::Int | DataType::Timestamp | DataType::Date | DataType::Interval
        ) || scan.types[at] != field.dtype
            || !matches!(scan.columns[at].data, Data::Int(_))
        {
            continue;
        }
        out.push((mine, other));
    }
    out
}

/// A join filter keeps more than this share of a column's distinct values
/// is not worth testing every row against.
const MIN_FILTER_SELECTIVITY: f64 = 0.9;

/// The join filters of input `i`'s scan (see [`filter_sources`]): per key
/// column, the smallest set of keys a scanned input holds, unless it
/// holds nearly every value the column can take. Each filter is noted for
/// EXPLAIN.
fn join_filters(
    c: &Composer<'_>,
    i: usize,
    inputs: &[Input],
    scans: &[Option<Scan>],
    reduced: &[bool],
    edges: &[(ColRef, ColRef)],
) -> Vec<JoinFilter> {
    let mut best: BTreeMap<usize, (KeySet, ColRef)> = BTreeMap::new();
    for (mine, other) in filter_sources(i, inputs, scans, reduced, edges) {
        let Some(scan) = &scans[other.0] else {
            continue;
        };
        let Some(&at) = scan.positions.get(&other.1) else {
            continue;
        };
        let column = &scan.columns[at];
        let Data::Int(values) = &column.data else {
            continue;
        };
        let keys: Vec<i64> = match &column.validity {
            None => values.clone(),
            Some(_) => (0..values.len())
                .filter(|&r| column.is_valid(r))
                .map(|r| values[r])
                .collect(),
        };
        let keys = KeySet::new(&keys);
        if keys.len() as f64 > MIN_FILTER_SELECTIVITY * distinct_bound(&inputs[i].table, mine.1) {
            continue;
        }
        match best.get(&mine.1) {
            Some((held, _)) if held.len() <= keys.len() => {}
            _ => {
                best.insert(mine.1, (keys, other));
            }
        }
    }
    best.into_iter()
        .map(|(col, (keys, other))| {
            let field = &inputs[i].table.fields[col];
            c.note(format!(
                "join filter on {}.{}: {} keys of {}.{}",
                inputs[i].qualifier,
                field.name,
                thousands(keys.len()),
                inputs[other.0].qualifier,
                inputs[other.0].table.fields[other.1].name
            ));
            JoinFilter {
                column: col,
                name: field.name.clone(),
                dtype: field.dtype,
                keys: Arc::new(keys),
            }
        })
        .collect()
}

/// `t.col` as `col` (the scan reads one table, so names are its own).
fn unqualify(e: &mut Expr) {
    if let ExprKind::QualifiedColumn { column, .. } = &e.kind {
        e.kind = ExprKind::Column(column.clone());
        return;
    }
    for child in e.children_mut() {
        unqualify(child);
    }
}

/// Joins an inner-join tree's inputs in a greedy order: Greedy Operator
/// Ordering (Fegaras, DEXA 1998). Every input starts as its own cluster;
/// each step joins the two connected clusters whose join is estimated
/// smallest, `|L|·|R| / max(d(L), d(R))` where `d` is a side's distinct
/// keys (the product over the edges' columns, at most the side's rows; a
/// column's distinct values in a cluster at most its rows), so that
/// many-to-many joins through a low-cardinality key (TPC-H Q5's supplier
/// and customer on their nation) wait until selective ones have shrunk
/// both sides, and plans may be bushy. Clusters with no edge between them
/// are crossed last, the smallest first.
fn greedy(
    c: &Composer<'_>,
    inputs: &[Input],
    scans: &[Scan],
    edges: &[(ColRef, ColRef)],
    ranges: &[Comparison],
    applied: &mut [bool],
) -> Result<Joined> {
    let n = inputs.len();
    let distinct: Vec<HashMap<usize, f64>> = scans
        .iter()
        .enumerate()
        .map(|(i, scan)| {
            edges
                .iter()
                .flat_map(|&(a, b)| [a, b])
                .filter(|col| col.0 == i)
                .map(|col| (col.1, estimate_distinct(scan, col.1)))
                .collect()
        })
        .collect();
    let distinct_in = |col: ColRef, cluster: &Joined| -> f64 {
        distinct[col.0]
            .get(&col.1)
            .copied()
            .unwrap_or(1.0)
            .min(cluster.rows as f64)
            .max(1.0)
    };
    let mut clusters: Vec<Joined> = (0..n).map(|i| Joined::of_input(i, scans[i].rows)).collect();
    if clusters.is_empty() {
        return Err(Error::Internal("a join without inputs".into()));
    }
    while clusters.len() > 1 {
        c.engine.check()?;
        // (left cluster, right cluster, estimated rows, keys)
        type Pair = (
            usize,
            usize,
            f64,
            Vec<(ColRef, ColRef)>,
            Vec<(usize, Comparison)>,
        );
        let mut best: Option<Pair> = None;
        for i in 0..clusters.len() {
            for j in i + 1..clusters.len() {
                let (l, r) = (&clusters[i], &clusters[j]);
                let keys: Vec<(ColRef, ColRef)> = edges
                    .iter()
                    .filter_map(|&(a, b)| {
                        if l.inputs.contains(&a.0) && r.inputs.contains(&b.0) {
                            Some((a, b))
                        } else if l.inputs.contains(&b.0) && r.inputs.contains(&a.0) {
                            Some((b, a))
                        } else {
                            None
                        }
                    })
                    .collect();
                // Comparisons between the two, when no equality joins
                // them: `left column op right column`.
                let between: Vec<(usize, Comparison)> = if keys.is_empty() {
                    ranges
                        .iter()
                        .enumerate()
                        .filter_map(|(k, &(a, op, b))| {
                            if l.inputs.contains(&a.0) && r.inputs.contains(&b.0) {
                                Some((k, (a, op, b)))
                            } else if l.inputs.contains(&b.0) && r.inputs.contains(&a.0) {
                                Some((k, (b, super::correlated::flip(op), a)))
                            } else {
                                None
                            }
                        })
                        .collect()
                } else {
                    Vec::new()
                };
                let product = l.rows as f64 * r.rows as f64;
                // A key of several columns has at most as many distinct
                // values as its side has rows (TPC-H Q9's partsupp key,
                // (partkey, suppkey), is not 20,000 × 1,000 values).
                let estimate = if keys.is_empty() && between.is_empty() {
                    f64::INFINITY
                } else if keys.is_empty() {
                    // A third of the pairs per comparison (DuckDB's guess
                    // for an inequality): after any equi-join that could
                    // shrink a side, before a cross join.
                    product / 3f64.powi(between.len() as i32)
                } else {
                    let (dl, dr) = keys.iter().fold((1.0f64, 1.0f64), |(dl, dr), &(a, b)| {
                        (dl * distinct_in(a, l), dr * distinct_in(b, r))
                    });
                    let dl = dl.min(l.rows as f64).max(1.0);
                    let dr = dr.min(r.rows as f64).max(1.0);
                    product / dl.max(dr)
                };
                let better = match &best {
                    None => true,
                    Some((bi, bj, e, _, _)) => {
                        estimate < *e
                            || (estimate == *e
                                && product < clusters[*bi].rows as f64 * clusters[*bj].rows as f64)
                    }
                };
                if better {
                    best = Some((i, j, estimate, keys, between));
                }
            }
        }
        let Some((i, j, _, keys, between)) = best else {
            break;
        };
        // `j > i`: remove it first so that `i` stays where it is.
        let right = clusters.remove(j);
        let left = clusters.remove(i);
        let kind = if keys.is_empty() && between.is_empty() {
            JoinKind::Cross
        } else {
            JoinKind::Inner
        };
        for &(k, _) in &between {
            applied[k] = true;
        }
        let between: Vec<Comparison> = between.into_iter().map(|(_, cmp)| cmp).collect();
        clusters.push(join_step(
            c, inputs, scans, left, right, &keys, &between, kind,
        )?);
    }
    clusters
        .pop()
        .ok_or_else(|| Error::Internal("a join without inputs".into()))
}

fn run_tree(c: &Composer<'_>, node: &Node, inputs: &[Input], scans: &[Scan]) -> Result<Joined> {
    match node {
        Node::Input(i) => Ok(Joined::of_input(*i, scans[*i].rows)),
        Node::Join {
            kind,
            left,
            right,
            keys,
            residual,
            ..
        } => {
            let l = run_tree(c, left, inputs, scans)?;
            let r = run_tree(c, right, inputs, scans)?;
            let kind = match kind {
                JoinKind::Comma => JoinKind::Cross,
                k => *k,
            };
            join_step(c, inputs, scans, l, r, keys, residual, kind)
        }
    }
}

/// One join, traced for EXPLAIN.
#[allow(clippy::too_many_arguments)]
fn join_step(
    c: &Composer<'_>,
    inputs: &[Input],
    scans: &[Scan],
    left: Joined,
    right: Joined,
    keys: &[(ColRef, ColRef)],
    residual: &[Comparison],
    kind: JoinKind,
) -> Result<Joined> {
    let start = Instant::now();
    let (lrows, rrows) = (left.rows, right.rows);
    let describe = |j: &Joined| {
        j.inputs
            .iter()
            .map(|&i| inputs[i].qualifier.as_str())
            .collect::<Vec<_>>()
            .join(" ⋈ ")
    };
    let names = format!("({}) with ({})", describe(&left), describe(&right));
    let name = |(i, col): ColRef| {
        format!(
            "{}.{}",
            inputs[i].qualifier, inputs[i].table.fields[col].name
        )
    };
    let on: Vec<String> = keys
        .iter()
        .map(|&(a, b)| format!("{} = {}", name(a), name(b)))
        .chain(
            residual
                .iter()
                .map(|&(a, op, b)| format!("{} {op} {}", name(a), name(b))),
        )
        .collect();
    let algorithm = match (keys.is_empty(), residual.is_empty()) {
        (true, true) => "cross join",
        (true, false) => range::algorithm(scans, residual),
        _ => "hash join",
    };
    let out = match (keys.is_empty(), residual.is_empty()) {
        (true, true) => cross(c, left, right)?,
        (true, false) => range::range_join(c, scans, left, right, residual, kind)?,
        _ => hash_join(c, scans, left, right, keys, residual, kind)?,
    };
    let how = match kind {
        JoinKind::Left => format!("left {algorithm}"),
        JoinKind::Right => format!("right {algorithm}"),
        JoinKind::Full => format!("full {algorithm}"),
        _ => algorithm.to_string(),
    };
    c.note(format!(
        "{how} {names}{}: {} × {} rows → {} ({})",
        if on.is_empty() {
            String::new()
        } else {
            format!(" on {}", on.join(" and "))
        },
        thousands(lrows),
        thousands(rrows),
        thousands(out.rows),
        super::ms(start)
    ));
    Ok(out)
}

/// Every pair of rows.
fn cross(c: &Composer<'_>, left: Joined, right: Joined) -> Result<Joined> {
    let rows = left
        .rows
        .checked_mul(right.rows)
        .filter(|&n| n <= MAX_JOIN_ROWS)
        .ok_or_else(|| {
            Error::Execution(format!(
                "a cross join of {} × {} rows is too large",
                thousands(left.rows),
                thousands(right.rows)
            ))
        })?;
    let width = left.ids.len() + right.ids.len();
    c.reserve(rows.saturating_mul(width * 4), || {
        format!("a cross join of {} rows", thousands(rows))
    })?;
    c.engine.check()?;
    let mut ids = Vec::with_capacity(left.ids.len() + right.ids.len());
    for l in &left.ids {
        ids.push((0..rows).map(|k| l[k / right.rows.max(1)]).collect());
    }
    for r in &right.ids {
        ids.push((0..rows).map(|k| r[k % right.rows.max(1)]).collect());
    }
    let mut inputs = left.inputs;
    inputs.extend(right.inputs);
    Ok(Joined {
        inputs,
        ids,
        rows,
        identity: false,
    })
}

/// Reads the key of a row of one side; `None` when a part is NULL (which
/// matches nothing).
struct KeyReader<'a> {
    /// Per key part: the row ids of its input in the joined rows (`None`:
    /// row `i` is row `i` of the column), its column, read as float.
    parts: Vec<(Option<&'a [u32]>, &'a Array<'static>, bool)>,
    /// One integer part, the same type on both sides: `Key::Int`.
    int: bool,
}

impl<'a> KeyReader<'a> {
    #[inline]
    fn key(&self, row: usize) -> Option<Key<'a>> {
        let id = |ids: Option<&[u32]>| ids.map_or(row as u32, |ids| ids[row]);
        if self.int {
            let (ids, a, _) = self.parts[0];
            let id = id(ids);
            if id == NONE || !a.is_valid(id as usize) {
                return None;
            }
            return match &a.data {
                Data::Int(v) => Some(Key::Int(v[id as usize])),
                _ => None,
            };
        }
        Key::of(self.parts.len(), |i| {
            let (ids, a, float) = self.parts[i];
            match id(ids) {
                NONE => None,
                id => Part::of_array(a, id as usize, float),
            }
        })
    }
}

/// The column of `col` in its input's scan (an empty one when the scan
/// did not read it, which cannot happen for a key).
fn column_of(scans: &[Scan], (i, col): ColRef) -> &Array<'static> {
    static EMPTY: std::sync::OnceLock<Array<'static>> = std::sync::OnceLock::new();
    scans[i]
        .positions
        .get(&col)
        .and_then(|&p| scans[i].columns.get(p))
        .unwrap_or_else(|| EMPTY.get_or_init(|| Array::from_values(DataType::Null, &[])))
}

/// The type of `col` in its input's scan.
fn type_of(scans: &[Scan], (i, col): ColRef) -> DataType {
    let s = &scans[i];
    s.positions
        .get(&col)
        .map_or(DataType::Null, |&p| s.types[p])
}

/// The key readers of both sides for `keys` (left side column, right side
/// column).
fn readers<'a>(
    scans: &'a [Scan],
    left: &'a Joined,
    right: &'a Joined,
    keys: &[(ColRef, ColRef)],
) -> (KeyReader<'a>, KeyReader<'a>) {
    let mut lparts = Vec::new();
    let mut rparts = Vec::new();
    let mut int = keys.len() == 1;
    for &(a, b) in keys {
        let (ta, tb) = (type_of(scans, a), type_of(scans, b));
        let float = ta != tb && ta.is_numeric() && tb.is_numeric();
        int &= ta == tb
            && matches!(
                ta,
                DataType::Int | DataType::Timestamp | DataType::Date | DataType::Interval
            );
        let part = |j: &'a Joined, c: ColRef| {
            let k = j.inputs.iter().position(|&x| x == c.0).unwrap_or(0);
            // An input's own rows: row `i` is row `i` of the column.
            let ids = (!j.identity).then(|| j.ids[k].as_slice());
            (ids, column_of(scans, c), float)
        };
        lparts.push(part(left, a));
        rparts.push(part(right, b));
    }
    (
        KeyReader { parts: lparts, int },
        KeyReader { parts: rparts, int },
    )
}

/// Several integer key columns packed into one integer per joined row of
/// each side, so that the join takes the single-integer paths (a dense
/// array, or a hash map of `i64` behind a bitmap) instead of hashing
/// tuples (TPC-H Q9's lineitem ⋈ partsupp on part and supplier keys).
/// Part `i` takes `value − lo_i` in the bits it needs, where `lo_i..=hi_i`
/// is the range both sides' values share; a value outside it cannot
/// match and makes the row's key NULL, as a NULL part does. `None` when
/// there are fewer than two parts, a part is not an integer (or
/// timestamp) of the same type on both sides, or the ranges need more
/// than 62 bits.
fn pack_int_keys(
    scans: &[Scan],
    left: &Joined,
    right: &Joined,
    keys: &[(ColRef, ColRef)],
) -> Option<(Array<'static>, Array<'static>)> {
    if keys.len() < 2 {
        return None;
    }
    // Per side and part: the column's values and the side's row ids.
    fn side<'s>(
        scans: &'s [Scan],
        j: &'s Joined,
        c: ColRef,
    ) -> Option<(&'s [u32], &'s [i64], &'s Array<'static>)> {
        let column = column_of(scans, c);
        let Data::Int(values) = &column.data else {
            return None;
        };
        let k = j.inputs.iter().position(|&x| x == c.0)?;
        Some((j.ids[k].as_slice(), values.as_slice(), column))
    }
    let range = |(ids, values, column): (&[u32], &[i64], &Array<'static>)| {
        ids.iter()
            .filter(|&&id| id != NONE && column.is_valid(id as usize))
            .fold((i64::MAX, i64::MIN), |(lo, hi), &id| {
                let v = values[id as usize];
                (lo.min(v), hi.max(v))
            })
    };
    let mut parts = Vec::with_capacity(keys.len());
    let mut bits = 0u32;
    for &(a, b) in keys {
        let (ta, tb) = (type_of(scans, a), type_of(scans, b));
        if ta != tb
            || !matches!(
                ta,
                DataType::Int | DataType::Timestamp | DataType::Date | DataType::Interval
            )
        {
            return None;
        }
        let (l, r) = (side(scans, left, a)?, side(scans, right, b)?);
        let ((l_lo, l_hi), (r_lo, r_hi)) = (range(l), range(r));
        let (lo, hi) = (l_lo.max(r_lo), l_hi.min(r_hi));
        let width = if lo <= hi {
            64 - hi.abs_diff(lo).leading_zeros()
        } else {
            0
        };
        parts.push((l, r, lo, hi, bits));
        bits += width;
        if bits > 62 {
            return None;
        }
    }
    type Side<'s> = (&'s [u32], &'s [i64], &'s Array<'static>);
    fn pack(rows: usize, sides: &[(Side<'_>, i64, i64, u32)]) -> Array<'static> {
        let mut packed = vec![0i64; rows];
        let mut valid = vec![true; rows];
        for &((ids, values, column), lo, hi, shift) in sides {
            for row in 0..rows {
                let id = ids[row];
                if id == NONE || !column.is_valid(id as usize) {
                    valid[row] = false;
                    continue;
                }
                let v = values[id as usize];
                if v < lo || v > hi {
                    valid[row] = false;
                    continue;
                }
                packed[row] |= (v.abs_diff(lo) << shift) as i64;
            }
        }
        let validity = valid
            .iter()
            .any(|v| !v)
            .then(|| crate::store::Bitmap::from_fn(rows, |i| valid[i]));
        Array {
            dtype: DataType::Int,
            data: Data::Int(packed),
            validity,
        }
    }
    let lsides: Vec<_> = parts
        .iter()
        .map(|&(l, _, lo, hi, sh)| (l, lo, hi, sh))
        .collect();
    let rsides: Vec<_> = parts
        .iter()
        .map(|&(_, r, lo, hi, sh)| (r, lo, hi, sh))
        .collect();
    let l = pack(left.rows, &lsides);
    let r = pack(right.rows, &rsides);
    Some((l, r))
}

/// An equi-join of `left` and `right` on `keys`, of kind `kind` (inner,
/// left, right or full).
fn hash_join(
    c: &Composer<'_>,
    scans: &[Scan],
    left: Joined,
    right: Joined,
    keys: &[(ColRef, ColRef)],
    residual: &[Comparison],
    kind: JoinKind,
) -> Result<Joined> {
    let packed = pack_int_keys(scans, &left, &right, keys);
    let (lkey, rkey) = match &packed {
        Some((l, r)) => (
            KeyReader {
                parts: vec![(None, l, false)],
                int: true,
            },
            KeyReader {
                parts: vec![(None, r, false)],
                int: true,
            },
        ),
        None => readers(scans, &left, &right, keys),
    };
    // Build on the side whose rows are all kept only when it must be
    // scanned for unmatched rows anyway: a left join builds on the right.
    let build_left = match kind {
        JoinKind::Left | JoinKind::Full => false,
        JoinKind::Right => true,
        _ => left.rows < right.rows,
    };
    let (build, probe) = if build_left {
        (&lkey, &rkey)
    } else {
        (&rkey, &lkey)
    };
    let build_rows = if build_left { left.rows } else { right.rows };
    let probe_rows = if build_left { right.rows } else { left.rows };
    // The build side's hash table: a chain link, a key and a slot a row.
    c.reserve(build_rows.saturating_mul(BUILD_BYTES_PER_ROW), || {
        format!("the build side of a join ({} rows)", thousands(build_rows))
    })?;
    let check = || c.engine.check();
    let heads = Heads::build(
        build,
        build_rows,
        c.engine.exec_options().join_radix_min_slots,
        &check,
    )?;
    let keep_probe = matches!(
        (kind, build_left),
        (JoinKind::Left, false) | (JoinKind::Right, true) | (JoinKind::Full, _)
    );
    let chunks = probe_rows.div_ceil(PROBE_CHUNK);
    // Each chunk's pairs of rows are held as they are found, so a join
    // that would pass the memory limit stops a chunk past it.
    let found = std::sync::atomic::AtomicUsize::new(0);
    let parts: Vec<(Vec<u32>, Vec<u32>)> = (0..chunks)
        .into_par_iter()
        .map(|chunk| {
            check()?;
            let lo = chunk * PROBE_CHUNK;
            let hi = (lo + PROBE_CHUNK).min(probe_rows);
            let mut pairs = heads.probe(probe, lo..hi, keep_probe);
            if !residual.is_empty() {
                pairs = passing_pairs(pairs, keep_probe, |p, b| {
                    let (l, r) = if build_left { (b, p) } else { (p, b) };
                    residual.iter().all(|&(a, op, z)| {
                        holds(
                            op,
                            &value_at(scans, &left, a, l),
                            &value_at(scans, &right, z, r),
                        )
                    })
                });
            }
            let n = pairs.0.len();
            let so_far = found.fetch_add(n, std::sync::atomic::Ordering::Relaxed) + n;
            c.reserve(n * 8, || {
                format!("a join of more than {} rows", thousands(so_far))
            })?;
            Ok(pairs)
        })
        .collect::<Result<_>>()?;
    assemble(c, &left, &right, parts, build_left, kind == JoinKind::Full)
}

/// A join's result from the pairs of rows its parallel chunks found:
/// per chunk, `(probe side rows, build side rows)`, a build row [`NONE`]
/// where an outer join pads a probe row. `full` adds each build row no
/// pair has, padded (a FULL join); the joined rows' ids in every input of
/// both sides are gathered through the pairs.
///
/// # Errors
/// More than [`MAX_JOIN_ROWS`] rows, or their ids past the memory limit.
fn assemble(
    c: &Composer<'_>,
    left: &Joined,
    right: &Joined,
    parts: Vec<(Vec<u32>, Vec<u32>)>,
    build_left: bool,
    full: bool,
) -> Result<Joined> {
    let build_rows = if build_left { left.rows } else { right.rows };
    let total: usize = parts.iter().map(|(p, _)| p.len()).sum();
    if total > MAX_JOIN_ROWS {
        return Err(Error::Execution(format!(
            "a join produces more than {} rows",
            thousands(MAX_JOIN_ROWS)
        )));
    }
    // The joined rows' ids in every input.
    let width = left.ids.len() + right.ids.len();
    c.reserve(total.saturating_mul(4 * width), || {
        format!("a join of {} rows", thousands(total))
    })?;
    let mut probe_ids = Vec::with_capacity(total);
    let mut build_ids = Vec::with_capacity(total);
    for (p, b) in parts {
        probe_ids.extend(p);
        build_ids.extend(b);
    }
    if full {
        let mut matched = vec![false; build_rows];
        for &b in &build_ids {
            if b != NONE {
                matched[b as usize] = true;
            }
        }
        for (b, m) in matched.iter().enumerate() {
            if !m {
                probe_ids.push(NONE);
                build_ids.push(b as u32);
            }
        }
    }
    let (left_rows, right_rows) = if build_left {
        (build_ids, probe_ids)
    } else {
        (probe_ids, build_ids)
    };
    let rows = left_rows.len();
    // Each side's row ids at the rows picked (NONE stays NONE); an input's
    // own rows are the picks themselves.
    let gather = |j: &Joined, picks: Vec<u32>| -> Vec<Vec<u32>> {
        if j.identity {
            return vec![picks];
        }
        j.ids
            .iter()
            .map(|ids| {
                picks
                    .par_iter()
                    .map(|&r| if r == NONE { NONE } else { ids[r as usize] })
                    .collect()
            })
            .collect()
    };
    let mut ids = gather(left, left_rows);
    ids.extend(gather(right, right_rows));
    let mut inputs = left.inputs.clone();
    inputs.extend(right.inputs.iter().copied());
    Ok(Joined {
        inputs,
        ids,
        rows,
        identity: false,
    })
}

/// The least and greatest of the `rows` keys `key` gives (`(i64::MAX,
/// i64::MIN)` when every key is NULL), read on all cores; `check` is
/// called every [`CHECK_ROWS`] rows.
///
/// # Errors
/// [`Error::Cancelled`] from `check`.
fn key_span(
    rows: usize,
    key: &(dyn Fn(usize) -> Option<i64> + Sync),
    check: &(dyn Fn() -> Result<()> + Sync),
) -> Result<(i64, i64)> {
    (0..rows.div_ceil(CHECK_ROWS))
        .into_par_iter()
        .map(|chunk| {
            check()?;
            let lo = chunk * CHECK_ROWS;
            let hi = (lo + CHECK_ROWS).min(rows);
            Ok((lo..hi)
                .filter_map(key)
                .fold((i64::MAX, i64::MIN), |(a, b), k| (a.min(k), b.max(k))))
        })
        .try_reduce(
            || (i64::MAX, i64::MIN),
            |a, b| Ok((a.0.min(b.0), a.1.max(b.1))),
        )
}

/// A chunk of build rows' (slot within its bucket, row) pairs, ordered by
/// bucket, and where each bucket's pairs start in them (one more start
/// than buckets).
type BucketedChunk = (Vec<u32>, Vec<(u32, u32)>);

/// The heads of a dense build (one slot per key in `min .. min + span`,
/// holding the key's last build row, [`NONE`] for a key no row has), and
/// the chain links in `next` (each row's previous row of its key), as the
/// sequential loop makes them, built on all cores and in cache.
///
/// Scattering 10M random keys straight into 44 MB of heads missed the
/// cache on every row (`perf`: 93% of the build on that load, 200 ms of
/// db-benchmark's join q5). Instead the rows are radix-partitioned by key
/// range, as in the radix join of Boncz, Manegold and Kersten
/// ("Database Architecture Optimized for the New Bottleneck: Memory
/// Access", VLDB 1999): each chunk of rows sorts its (slot, row) pairs by
/// bucket, a bucket being a run of heads that fits in L2; then each bucket
/// links its rows, chunk after chunk in row order, into its own part of
/// the heads. Every bucket sees its rows in ascending order, so heads and
/// chains equal the sequential loop's.
///
/// # Errors
/// [`Error::Cancelled`] from `check`, called every [`CHECK_ROWS`] rows.
fn dense_heads_radix(
    rows: usize,
    min: i64,
    span: usize,
    key: &(dyn Fn(usize) -> Option<i64> + Sync),
    next: &mut [u32],
    check: &(dyn Fn() -> Result<()> + Sync),
) -> Result<Vec<u32>> {
    // Buckets of 64k slots (256 kB), at most 1,024 of them.
    let shift = 16u32.max((usize::BITS - span.leading_zeros()).saturating_sub(10));
    let buckets = span.div_ceil(1 << shift);
    let low = (1usize << shift) - 1;
    // Each chunk's pairs, counting-sorted by bucket, and where each
    // bucket's pairs start in them.
    let sorted: Vec<BucketedChunk> = (0..rows.div_ceil(CHECK_ROWS))
        .into_par_iter()
        .map(|chunk| {
            check()?;
            let lo = chunk * CHECK_ROWS;
            let hi = (lo + CHECK_ROWS).min(rows);
            let mut starts = vec![0u32; buckets + 1];
            for b in lo..hi {
                if let Some(k) = key(b) {
                    starts[((k - min) as usize >> shift) + 1] += 1;
                }
            }
            for j in 1..=buckets {
                starts[j] += starts[j - 1];
            }
            let mut at = starts.clone();
            let mut pairs = vec![(0u32, 0u32); starts[buckets] as usize];
            for b in lo..hi {
                if let Some(k) = key(b) {
                    let slot = (k - min) as usize;
                    let to = &mut at[slot >> shift];
                    pairs[*to as usize] = ((slot & low) as u32, b as u32);
                    *to += 1;
                }
            }
            Ok((starts, pairs))
        })
        .collect::<Result<_>>()?;
    let mut heads = vec![NONE; span];
    // Links of rows whose key an earlier row has: (row, previous row).
    let links: Vec<Vec<(u32, u32)>> = heads
        .par_chunks_mut(1 << shift)
        .enumerate()
        .map(|(j, part)| {
            let mut links = Vec::new();
            for (starts, pairs) in &sorted {
                for &(slot, b) in &pairs[starts[j] as usize..starts[j + 1] as usize] {
                    let head = &mut part[slot as usize];
                    if *head != NONE {
                        links.push((b, *head));
                    }
                    *head = b;
                }
            }
            links
        })
        .collect();
    for (b, previous) in links.into_iter().flatten() {
        next[b as usize] = previous;
    }
    Ok(heads)
}

/// A join's hash table: per key, its first build row; `next` chains the
/// build rows of equal keys.
struct Heads<'a> {
    map: HeadMap<'a>,
    next: Vec<u32>,
    /// No two build rows share a key: every `next` link is [`NONE`].
    unique: bool,
}

enum HeadMap<'a> {
    /// A single integer key whose build values span at most 4× the build
    /// rows: an array indexed by `key - min`, no hashing (the perfect hash
    /// join of dense keys).
    Dense { min: i64, heads: Vec<u32> },
    /// A single integer key otherwise, with a bitmap of the keys present
    /// when they span at most 64 bits per build row (TPC-H Q5's 227k
    /// orders over keys up to 6M: 750 kB that stay in cache), so probe
    /// keys that match nothing, most of them, skip the hash table.
    Int(HashMap<i64, u32>, Option<(i64, Vec<u64>)>),
    /// Any other key.
    Values(HashMap<Key<'a>, u32>),
}

impl<'a> Heads<'a> {
    /// The hash table of `rows` build rows; `check` is called every
    /// [`CHECK_ROWS`] rows.
    ///
    /// # Errors
    /// [`Error::Cancelled`] from `check`.
    /// A dense build of at least `radix_min_slots` slots links its rows
    /// bucket by bucket ([`dense_heads_radix`]; the threshold is
    /// [`crate::exec::ExecOptions::join_radix_min_slots`]).
    fn build(
        build: &KeyReader<'a>,
        rows: usize,
        radix_min_slots: usize,
        check: &(dyn Fn() -> Result<()> + Sync),
    ) -> Result<Heads<'a>> {
        let mut next = vec![NONE; rows];
        let checked = |b: usize| {
            if b.is_multiple_of(CHECK_ROWS) {
                check()
            } else {
                Ok(())
            }
        };
        let map = if build.int {
            // The keys are read where they are, twice (their span, then
            // the heads): no copy of 16 bytes a row.
            let direct = match build.parts[..] {
                [(ids, column, _)] => match &column.data {
                    Data::Int(values) => Some((ids, column, values.as_slice())),
                    _ => None,
                },
                _ => None,
            };
            let key = |b: usize| match direct {
                Some((ids, column, values)) => {
                    let id = ids.map_or(b, |ids| ids[b] as usize);
                    (id != NONE as usize && column.is_valid(id)).then(|| values[id])
                }
                None => match build.key(b) {
                    Some(Key::Int(k)) => Some(k),
                    _ => None,
                },
            };
            let (min, max) = key_span(rows, &key, check)?;
            let span = (max as i128 - min as i128 + 1).max(0) as u128;
            if min <= max && span <= 4 * rows as u128 + 1024 {
                let heads = if span as usize >= radix_min_slots {
                    dense_heads_radix(rows, min, span as usize, &key, &mut next, check)?
                } else {
                    let mut heads = vec![NONE; span as usize];
                    for (b, link) in next.iter_mut().enumerate() {
                        if let Some(k) = key(b) {
                            let slot = &mut heads[(k - min) as usize];
                            *link = *slot;
                            *slot = b as u32;
                        }
                    }
                    heads
                };
                HeadMap::Dense { min, heads }
            } else {
                let mut heads: HashMap<i64, u32> = HashMap::with_capacity(rows);
                for (b, link) in next.iter_mut().enumerate() {
                    checked(b)?;
                    if let Some(k) = key(b) {
                        let head = heads.entry(k).or_insert(NONE);
                        *link = *head;
                        *head = b as u32;
                    }
                }
                let present = (min <= max && span <= 64 * rows as u128 + 4096).then(|| {
                    let mut bits = vec![0u64; (span as usize).div_ceil(64)];
                    for k in (0..rows).filter_map(key) {
                        let i = (k - min) as usize;
                        bits[i / 64] |= 1 << (i % 64);
                    }
                    (min, bits)
                });
                HeadMap::Int(heads, present)
            }
        } else {
            let mut heads: HashMap<Key<'a>, u32> = HashMap::with_capacity(rows);
            for (b, link) in next.iter_mut().enumerate() {
                checked(b)?;
                if let Some(k) = build.key(b) {
                    let head = heads.entry(k).or_insert(NONE);
                    *link = *head;
                    *head = b as u32;
                }
            }
            HeadMap::Values(heads)
        };
        let unique = next.iter().all(|&n| n == NONE);
        Ok(Heads { map, next, unique })
    }

    /// Probes rows `rows` of `probe`: the pairs (probe row, build row) of
    /// equal keys, in probe row order, and with `keep_probe` (probe row,
    /// [`NONE`]) for a row that matches nothing. A single integer key is
    /// read straight from its column, the map's kind chosen once per
    /// chunk; unique build keys have no chains to follow.
    fn probe(
        &self,
        probe: &KeyReader<'_>,
        rows: std::ops::Range<usize>,
        keep_probe: bool,
    ) -> (Vec<u32>, Vec<u32>) {
        if probe.int
            && let [(ids, column, _)] = probe.parts[..]
            && let Data::Int(values) = &column.data
        {
            let key = |row: usize| -> Option<i64> {
                let id = ids.map_or(row as u32, |ids| ids[row]);
                (id != NONE && column.is_valid(id as usize)).then(|| values[id as usize])
            };
            match &self.map {
                HeadMap::Dense { min, heads } => {
                    return self.probe_with(rows, keep_probe, |row| match key(row) {
                        Some(k) => {
                            let i = k.wrapping_sub(*min) as u64;
                            if i < heads.len() as u64 {
                                heads[i as usize]
                            } else {
                                NONE
                            }
                        }
                        None => NONE,
                    });
                }
                HeadMap::Int(..) => {
                    return self.probe_with(rows, keep_probe, |row| match key(row) {
                        Some(k) => self.first_of_int(k),
                        None => NONE,
                    });
                }
                HeadMap::Values(_) => {}
            }
        }
        self.probe_with(rows, keep_probe, |row| self.first(probe, row))
    }

    /// [`Heads::probe`] with `first` giving a probe row's first build row.
    #[inline]
    fn probe_with(
        &self,
        rows: std::ops::Range<usize>,
        keep_probe: bool,
        first: impl Fn(usize) -> u32,
    ) -> (Vec<u32>, Vec<u32>) {
        let mut p = Vec::with_capacity(rows.len());
        let mut b = Vec::with_capacity(rows.len());
        // The first build rows of a batch of probe rows are looked up in a
        // loop of their own, whose only branches are predictable, so the
        // cache misses of a large table overlap (the loop that follows
        // branches on each match and would stall on them one by one):
        // the probe of db-benchmark's join q5, 10M rows into 44 MB of
        // heads, took 100 ms that way.
        let mut firsts = [NONE; PROBE_BATCH];
        let mut lo = rows.start;
        while lo < rows.end {
            let hi = (lo + PROBE_BATCH).min(rows.end);
            let firsts = &mut firsts[..hi - lo];
            for (f, row) in firsts.iter_mut().zip(lo..hi) {
                *f = first(row);
            }
            for (&found, row) in firsts.iter().zip(lo..hi) {
                let mut at = found;
                if at == NONE {
                    if keep_probe {
                        p.push(row as u32);
                        b.push(NONE);
                    }
                    continue;
                }
                p.push(row as u32);
                b.push(at);
                if !self.unique {
                    at = self.next[at as usize];
                    while at != NONE {
                        p.push(row as u32);
                        b.push(at);
                        at = self.next[at as usize];
                    }
                }
            }
            lo = hi;
        }
        (p, b)
    }

    /// The first build row of integer key `k` in a [`HeadMap::Int`].
    #[inline]
    fn first_of_int(&self, k: i64) -> u32 {
        let HeadMap::Int(map, present) = &self.map else {
            return NONE;
        };
        if let Some((min, bits)) = present {
            let Some(i) = k.checked_sub(*min).and_then(|i| usize::try_from(i).ok()) else {
                return NONE;
            };
            if bits.get(i / 64).is_none_or(|w| w & (1 << (i % 64)) == 0) {
                return NONE;
            }
        }
        map.get(&k).copied().unwrap_or(NONE)
    }

    /// The first build row of each key (in no order).
    fn firsts(&self) -> Vec<u32> {
        match &self.map {
            HeadMap::Dense { heads, .. } => heads.iter().copied().filter(|&h| h != NONE).collect(),
            HeadMap::Int(map, _) => map.values().copied().collect(),
            HeadMap::Values(map) => map.values().copied().collect(),
        }
    }

    /// How many distinct keys the build rows have.
    fn map_keys(&self) -> usize {
        match &self.map {
            HeadMap::Dense { heads, .. } => heads.iter().filter(|&&h| h != NONE).count(),
            HeadMap::Int(map, _) => map.len(),
            HeadMap::Values(map) => map.len(),
        }
    }

    /// The first build row whose key equals probe row `row`'s.
    fn first(&self, probe: &KeyReader<'_>, row: usize) -> u32 {
        match (&self.map, probe.key(row)) {
            (_, None) => NONE,
            (HeadMap::Dense { min, heads }, Some(Key::Int(k))) => k
                .checked_sub(*min)
                .and_then(|i| usize::try_from(i).ok())
                .and_then(|i| heads.get(i).copied())
                .unwrap_or(NONE),
            (HeadMap::Int(..), Some(Key::Int(k))) => self.first_of_int(k),
            (HeadMap::Values(map), Some(k)) => map.get(&k).copied().unwrap_or(NONE),
            _ => NONE,
        }
    }
}

/// Distinct values of a scan column: exact up to 64k rows, else from an
/// even sample of 64k by Chao's estimator, `d + f1(f1 − 1) / (2(f2 + 1))`
/// with `f1`, `f2` the values seen once and twice (Chao, "Nonparametric
/// Estimation of the Number of Classes in a Population", Scand. J. Stat.
/// 1984, bias-corrected form), at most the rows. Scaling the sample's
/// count by the sampling rate, as before, took TPC-H's `l_partkey`
/// (200k values, 30 rows each) for 54k at SF 1 and joined lineitem with
/// partsupp first in Q9.
fn estimate_distinct(scan: &Scan, col: usize) -> f64 {
    let Some(&pos) = scan.positions.get(&col) else {
        return 1.0;
    };
    let rows = scan.rows;
    let step = rows.div_ceil(1 << 16).max(1);
    let column = &scan.columns[pos];
    let mut seen: HashMap<Option<Part<'_>>, u32> = HashMap::new();
    for row in (0..rows).step_by(step) {
        *seen.entry(Part::of_array(column, row, false)).or_insert(0) += 1;
    }
    let d = seen.len() as f64;
    if step == 1 {
        return d;
    }
    let (f1, f2) = seen.values().fold((0f64, 0f64), |(f1, f2), &n| match n {
        1 => (f1 + 1.0, f2),
        2 => (f1, f2 + 1.0),
        _ => (f1, f2),
    });
    (d + f1 * (f1 - 1.0).max(0.0) / (2.0 * (f2 + 1.0))).min(rows as f64)
}

/// The rows of `joined` that some row of `semi` matches (none, for an
/// anti-join): equal keys, NULLs matching nothing, and every residual
/// comparison true.
fn semi_join(
    c: &Composer<'_>,
    scans: &[Scan],
    joined: Joined,
    semi: &Semi,
    keys: &[ColRef],
    residual: &[ColRef],
    gate: Option<ColRef>,
) -> Result<Joined> {
    // Integer and float keys meet as floats.
    let floats: Vec<bool> = keys
        .iter()
        .enumerate()
        .map(|(k, &c)| {
            let (a, b) = (
                type_of(scans, c),
                semi.types.get(k).copied().unwrap_or(DataType::Null),
            );
            a != b && a.is_numeric() && b.is_numeric()
        })
        .collect();
    let position = |c: ColRef| {
        (
            joined.inputs.iter().position(|&x| x == c.0).unwrap_or(0),
            column_of(scans, c),
        )
    };
    let key_at: Vec<(usize, &Array<'static>)> = keys.iter().map(|&c| position(c)).collect();
    let residual_at: Vec<(usize, &Array<'static>)> =
        residual.iter().map(|&c| position(c)).collect();
    let value = |(k, a): (usize, &Array<'static>), row: usize| -> Value {
        match joined.ids[k][row] {
            NONE => Value::Null,
            id => a.value(id as usize),
        }
    };
    // The outer rows' keys go into a hash table (usually the fewer: a
    // filtered join result against a whole table's keys; an array when
    // they are dense integers), and the subquery's rows stream past it,
    // marking the outer rows they match. One integer key of the same
    // type on both sides is read as `Key::Int` on both.
    let int = key_at.len() == 1
        && !floats[0]
        && matches!(
            semi.types.first(),
            Some(DataType::Int | DataType::Timestamp | DataType::Date | DataType::Interval)
        )
        && semi.types.first() == Some(&type_of(scans, keys[0]));
    let outer = KeyReader {
        parts: key_at
            .iter()
            .zip(&floats)
            .map(|(&(k, a), &f)| (Some(joined.ids[k].as_slice()), a, f))
            .collect(),
        int,
    };
    c.reserve(joined.rows.saturating_mul(BUILD_BYTES_PER_ROW + 1), || {
        format!(
            "the build side of a semi-join ({} rows)",
            thousands(joined.rows)
        )
    })?;
    let check = || c.engine.check();
    let radix_min_slots = c.engine.exec_options().join_radix_min_slots;
    let heads = Heads::build(&outer, joined.rows, radix_min_slots, &check)?;
    fn reader<'a>(columns: &'a [Array<'static>], floats: &[bool], int: bool) -> KeyReader<'a> {
        KeyReader {
            parts: columns
                .iter()
                .zip(floats)
                .map(|(a, &f)| (None, a, f))
                .collect(),
            int,
        }
    }
    // Each subquery row walks the outer rows of its key. When they are
    // many a key (no key at all: `EXISTS (… WHERE o.x > t.y)`), only the
    // subquery rows that can decide are kept: 20 s for 15k × 150k rows,
    // before (the threshold is
    // `ExecOptions::semi_reduce_rows_per_key`).
    let per_key = c.engine.exec_options().semi_reduce_rows_per_key;
    // Counting the keys reads the whole head array: only when one
    // comparison could decide.
    let outer_keys = if semi.residual.len() == 1 {
        heads.map_keys()
    } else {
        0
    };
    let reduced = if outer_keys > 0 && joined.rows / outer_keys >= per_key {
        deciding_rows(
            semi,
            &reader(&semi.columns, &floats, int),
            radix_min_slots,
            &check,
        )?
        .map(|keep| {
            let columns: Vec<Array<'static>> =
                semi.columns.iter().map(|a| a.take_or_null(&keep)).collect();
            c.note(format!(
                "semi-join: {} of {} subquery rows can decide its comparison",
                thousands(keep.len()),
                thousands(semi.rows)
            ));
            (columns, keep.len())
        })
    } else {
        None
    };
    let (columns, semi_rows) = match &reduced {
        Some((columns, rows)) => (columns.as_slice(), *rows),
        None => (semi.columns.as_slice(), semi.rows),
    };
    let inner = reader(columns, &floats, int);
    let matched: Vec<std::sync::atomic::AtomicBool> = (0..joined.rows)
        .map(|_| std::sync::atomic::AtomicBool::new(false))
        .collect();
    (0..semi_rows.div_ceil(PROBE_CHUNK))
        .into_par_iter()
        .try_for_each(|chunk| {
            check()?;
            let lo = chunk * PROBE_CHUNK;
            for row in lo..(lo + PROBE_CHUNK).min(semi_rows) {
                let mut at = heads.first(&inner, row);
                while at != NONE {
                    let r = at;
                    at = heads.next[r as usize];
                    let done = &matched[r as usize];
                    if done.load(std::sync::atomic::Ordering::Relaxed) {
                        continue;
                    }
                    let passes =
                        semi.residual
                            .iter()
                            .zip(&residual_at)
                            .all(|((pos, op, _), &at)| {
                                holds(*op, &columns[*pos].value(row), &value(at, r as usize))
                            });
                    if passes {
                        done.store(true, std::sync::atomic::Ordering::Relaxed);
                    }
                }
            }
            Ok(())
        })?;
    let gate_at = gate.map(position);
    let keep: Vec<u32> = (0..joined.rows)
        .filter(|&row| {
            gate_at.is_some_and(|g| value(g, row) != Value::Null)
                || matched[row].load(std::sync::atomic::Ordering::Relaxed) != semi.anti
        })
        .map(|row| row as u32)
        .collect();
    let ids = joined
        .ids
        .iter()
        .map(|ids| keep.iter().map(|&r| ids[r as usize]).collect())
        .collect();
    Ok(Joined {
        inputs: joined.inputs,
        ids,
        rows: keep.len(),
        identity: false,
    })
}

/// The subquery rows (ascending) of a semi-join or anti-join whose one
/// comparison besides its keys, `row op outer`, they decide as all its
/// rows would: per key, the row of the greatest value for `>` and `>=`,
/// of the least for `<` and `<=` (if any row passes, that one does), and
/// for `<>` a row and one of another value (one of them differs from any
/// outer value). Rows whose value is NULL or NaN pass no comparison and
/// are dropped. `None` for other residuals (none, several, `=`).
///
/// # Errors
/// [`Error::Cancelled`] from `check`.
fn deciding_rows(
    semi: &Semi,
    inner: &KeyReader<'_>,
    radix_min_slots: usize,
    check: &(dyn Fn() -> Result<()> + Sync),
) -> Result<Option<Vec<u32>>> {
    let [(pos, op, _)] = &semi.residual[..] else {
        return Ok(None);
    };
    let greater = match op {
        BinaryOp::Gt | BinaryOp::GtEq => Some(true),
        BinaryOp::Lt | BinaryOp::LtEq => Some(false),
        BinaryOp::NotEq => None,
        _ => return Ok(None),
    };
    let column = &semi.columns[*pos];
    let usable = |row: u32| match column.value(row as usize) {
        Value::Null => None,
        Value::Float(f) if f.is_nan() => None,
        v => Some(v),
    };
    let heads = Heads::build(inner, semi.rows, radix_min_slots, check)?;
    let mut keep = Vec::new();
    for (i, first) in heads.firsts().into_iter().enumerate() {
        if i.is_multiple_of(CHECK_ROWS) {
            check()?;
        }
        let mut best: Option<(u32, Value)> = None;
        let mut other = None;
        let mut at = first;
        while at != NONE {
            if let Some(v) = usable(at) {
                match (&best, greater) {
                    (None, _) => best = Some((at, v)),
                    (Some((_, b)), Some(greater)) => {
                        let ord = v.total_cmp(b);
                        if ord
                            == if greater {
                                std::cmp::Ordering::Greater
                            } else {
                                std::cmp::Ordering::Less
                            }
                        {
                            best = Some((at, v));
                        }
                    }
                    (Some((_, b)), None) => {
                        if other.is_none() && !holds(BinaryOp::Eq, &v, b) {
                            other = Some(at);
                        }
                    }
                }
            }
            at = heads.next[at as usize];
        }
        keep.extend(best.map(|(row, _)| row));
        keep.extend(other);
    }
    keep.sort_unstable();
    Ok(Some(keep))
}

/// The pairs of `pairs` (probe row, build row; in probe row order, a
/// build row [`NONE`] for a probe row that matched no key) for which
/// `passes(probe row, build row)` holds; with `keep_probe`, a probe row
/// none of whose pairs passes keeps one pair with [`NONE`] (the padding
/// of an outer join).
fn passing_pairs(
    (probe, build): (Vec<u32>, Vec<u32>),
    keep_probe: bool,
    passes: impl Fn(u32, u32) -> bool,
) -> (Vec<u32>, Vec<u32>) {
    let mut out = (
        Vec::with_capacity(probe.len()),
        Vec::with_capacity(build.len()),
    );
    let mut i = 0;
    while i < probe.len() {
        let p = probe[i];
        let mut kept = false;
        while i < probe.len() && probe[i] == p {
            let b = build[i];
            if b != NONE && passes(p, b) {
                out.0.push(p);
                out.1.push(b);
                kept = true;
            }
            i += 1;
        }
        if !kept && keep_probe {
            out.0.push(p);
            out.1.push(NONE);
        }
    }
    out
}

/// The value of column `col` at row `row` of `joined` (NULL where its
/// input's row is [`NONE`], an outer join's padding).
fn value_at(scans: &[Scan], joined: &Joined, col: ColRef, row: u32) -> Value {
    let k = joined.inputs.iter().position(|&x| x == col.0).unwrap_or(0);
    match joined.ids[k][row as usize] {
        NONE => Value::Null,
        id => column_of(scans, col).value(id as usize),
    }
}

/// `a op b` for a comparison, false when either is NULL; in the engine's
/// order otherwise (an integer against a float exactly, NaN above every
/// number and equal to itself, `-0.0` equal to `0.0`).
fn holds(op: BinaryOp, a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Null, _) | (_, Value::Null) => false,
        (a, b) => crate::plan::eval::compare(op.into(), a.total_cmp(b)),
    }
}

/// Pushes the items a `*` stands for, `star` (each column's name and
/// item), less and changed as `options` say (`EXCLUDE`, `REPLACE`); a
/// replaced column keeps its name.
///
/// # Errors
/// An `EXCLUDE` or `REPLACE` name that is no column of the `*`.
fn expand_star(
    items: &mut Vec<(Expr, Option<Ident>)>,
    star: Vec<(&str, (Expr, Option<Ident>))>,
    options: &StarOptions,
    span: Span,
) -> Result<()> {
    let names: Vec<&str> = star.iter().map(|(n, _)| *n).collect();
    let kept = options
        .apply(&names)
        .map_err(|(message, at)| Error::plan_at(message, at))?;
    for (i, replacement) in kept {
        let (name, item) = &star[i];
        items.push(match replacement {
            Some(e) => (
                e.clone(),
                Some(Ident {
                    name: name.to_string(),
                    span,
                }),
            ),
            None => item.clone(),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A one-part integer key over `column`.
    fn int_reader<'a>(column: &'a Array<'static>) -> KeyReader<'a> {
        KeyReader {
            parts: vec![(None, column, false)],
            int: true,
        }
    }

    /// A cancellation check that passes once, then cancels.
    fn cancelled_at_second_call() -> impl Fn() -> Result<()> + Sync {
        let calls = std::sync::atomic::AtomicUsize::new(0);
        move || {
            if calls.fetch_add(1, std::sync::atomic::Ordering::Relaxed) >= 1 {
                Err(Error::Cancelled)
            } else {
                Ok(())
            }
        }
    }

    #[test]
    fn bucketed_heads_equal_the_row_by_row_heads() {
        // 200k rows over 300k keys, many repeated, some NULL: five buckets
        // of 64k slots, each with chains.
        let rows = 200_000usize;
        let values: Vec<Value> = (0..rows as u64)
            .map(|i| {
                let h = i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40;
                if h % 17 == 0 {
                    Value::Null
                } else {
                    Value::Int((h % 300_000) as i64 - 5)
                }
            })
            .collect();
        let column = Array::from_values(DataType::Int, &values);
        let reader = KeyReader {
            int: true,
            ..int_reader(&column)
        };
        let by_rows = Heads::build(&reader, rows, usize::MAX, &|| Ok(())).unwrap();
        let by_buckets = Heads::build(&reader, rows, 0, &|| Ok(())).unwrap();
        match (&by_rows.map, &by_buckets.map) {
            (HeadMap::Dense { min: a, heads: x }, HeadMap::Dense { min: b, heads: y }) => {
                assert_eq!(a, b);
                assert!(x == y, "heads differ");
            }
            _ => panic!("keys over 1.5× the rows are dense"),
        }
        assert!(by_rows.next == by_buckets.next, "chains differ");
        assert!(!by_rows.unique && !by_buckets.unique);
        // Cancelled in the bucketed build too.
        let built = Heads::build(&reader, rows, 0, &cancelled_at_second_call());
        assert!(matches!(built, Err(Error::Cancelled)));
    }

    #[test]
    fn a_build_side_stops_when_cancelled() {
        let rows = 3 * CHECK_ROWS + 5;
        // Dense keys (an array of heads), sparse keys (a hash map) and
        // string keys (a map of values): each loop checks.
        let dense: Vec<Value> = (0..rows as i64).map(Value::Int).collect();
        let sparse: Vec<Value> = (0..rows as i64)
            .map(|k| Value::Int(k * 1_000_003))
            .collect();
        let strings: Vec<Value> = (0..rows)
            .map(|k| Value::Str(format!("k{k}").into()))
            .collect();
        for (dtype, values) in [
            (DataType::Int, dense),
            (DataType::Int, sparse),
            (DataType::Str, strings),
        ] {
            let column = Array::from_values(dtype, &values);
            let reader = KeyReader {
                int: dtype == DataType::Int,
                ..int_reader(&column)
            };
            let built = Heads::build(&reader, rows, 1 << 20, &cancelled_at_second_call());
            assert!(matches!(built, Err(Error::Cancelled)), "{dtype:?}");
            // Never cancelled: every key is found.
            let heads = Heads::build(&reader, rows, 1 << 20, &|| Ok(())).unwrap();
            let (p, b) = heads.probe(&reader, 0..rows, false);
            assert_eq!(p.len(), rows, "{dtype:?}");
            assert!(p.iter().zip(&b).all(|(p, b)| p == b), "{dtype:?}");
        }
    }
}
