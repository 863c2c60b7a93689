//! Correlated subqueries, unnested into joins (after Neumann & Kemper,
//! "Unnesting Arbitrary Queries", BTW 2015, for the shapes analytic SQL
//! uses): never run per outer row.
//!
//! A subquery is correlated when its WHERE names a column of the outer
//! query (`t.col` with an outer table's name or alias, or a bare name that
//! only an outer input has). Its conjuncts that do are taken out, and must
//! compare an expression of the subquery's own columns with one outer
//! column:
//! - `[NOT] EXISTS (SELECT … WHERE inner = outer AND inner <> outer …)`,
//!   a conjunct of the outer WHERE, becomes a semi-join (anti-join): the
//!   subquery runs once, without those conjuncts, giving its key values
//!   (and the values its other comparisons need); the outer rows are then
//!   kept when some subquery row has equal keys and passes the
//!   comparisons (for NOT EXISTS, when none has). See [`Semi`].
//! - `x IN (SELECT y FROM … WHERE …)`, a conjunct of the outer WHERE over a
//!   subquery of filtered rows (no grouping, aggregate or LIMIT), is
//!   `EXISTS (SELECT … WHERE … AND y = x)`: a semi-join as above, `x` an
//!   outer column. `x NOT IN (…)` is three anti-joins, for its NULLs (see
//!   [`in_as_exists`]).
//! - a scalar subquery `(SELECT agg(…) FROM … WHERE inner = outer …)`
//!   becomes its aggregate grouped by the inner keys, joined to the outer
//!   query on them, and read as a column (aggregate-then-join). The join
//!   is a LEFT join, so an outer row without a group reads NULL, the
//!   aggregate of no rows (a bare `count` reads 0 through `coalesce`;
//!   count inside a larger expression is refused); it is an inner join
//!   where the subquery is an operand of a comparison that is a conjunct
//!   of WHERE (TPC-H's Q2, Q17, Q20), which drops such rows anyway.
//!   Compared with the outer query by more than equality (`WHERE i.k =
//!   o.k AND i.a < o.b`, or `i.a < o.b` alone), the distinct outer values
//!   it compares with become a table joined into the subquery (the
//!   "domain" of Neumann & Kemper), which is grouped by them and joined
//!   back on their equality ([`Composer::comparison_domain`]). Without an
//!   equality that join is a range join (`join::range`), whose pairs are
//!   then grouped.

use std::collections::HashSet;
use std::sync::Arc;

use super::{Composer, Scope, for_each_expr, walk};
use crate::error::{Error, Result};
use crate::exec::vector::Array;
use crate::plan::{Catalog, resolve_table};
use crate::sql::ast::{
    BinaryOp, Expr, ExprKind, FromItem, Ident, Join, JoinConstraint, JoinKind, Query, Select,
    SelectItem, Span, TableRef, WindowSpec,
};
use crate::store::Table;
use crate::types::{DataType, Value};

/// A derived table replacing a correlated scalar subquery: its name in the
/// scope, the outer columns equal to its keys `__k0, __k1, …`, and where the
/// subquery was.
/// The last field: a LEFT join (the outer rows without a group keep a
/// NULL), rather than an inner one.
type DerivedJoin = (String, Vec<Expr>, Span, bool);

/// A semi-join (or anti-join) filter on the outer query's rows.
pub(crate) struct Semi {
    /// The outer columns compared with the keys, in key order.
    pub outer: Vec<Expr>,
    /// The subquery's rows as columns: its key values first, then the
    /// values of `residual`'s inner sides.
    pub columns: Vec<Array<'static>>,
    /// The subquery's row count.
    pub rows: usize,
    /// Further comparisons `row[position] op outer`, all of which a
    /// matching subquery row must pass.
    pub residual: Vec<(usize, BinaryOp, Expr)>,
    /// NOT EXISTS: keep the rows no subquery row matches.
    pub anti: bool,
    /// An outer column the anti-join is gated on (NOT IN's NULL rule): the
    /// outer rows where it is not NULL are kept whatever matches.
    pub gate: Option<Expr>,
    /// The types of `rows`' columns.
    pub types: Vec<DataType>,
    /// A subquery that is a plain scan, not run yet: the join runs it once
    /// the outer rows are known, their keys narrowing its scan (a join
    /// filter), and fills `columns`, `rows` and `types`.
    pub pending: Option<Select>,
}

/// EXPLAIN's line for an [NOT] EXISTS subquery's rows.
pub(super) fn semi_note(anti: bool, rows: usize, keys: usize) -> String {
    format!(
        "{} subquery: {} key rows for {} on {keys} key(s)",
        if anti { "NOT EXISTS" } else { "EXISTS" },
        super::thousands(rows),
        if anti { "an anti-join" } else { "a semi-join" },
    )
}

/// The inputs of a FROM: name and table (`None` for a subquery, whose
/// columns are not known before it runs).
pub(super) fn inputs(
    from: Option<&FromItem>,
    scope: &dyn Catalog,
) -> Vec<(String, Option<Arc<Table>>)> {
    let mut out = Vec::new();
    fn walk_from(f: &FromItem, scope: &dyn Catalog, out: &mut Vec<(String, Option<Arc<Table>>)>) {
        match f {
            FromItem::Table { table, alias } => {
                let resolved = resolve_table(table, scope).ok();
                let name = match (alias, table) {
                    (Some(a), _) => a.name.clone(),
                    (None, TableRef::Named(n)) => n.name.clone(),
                    (None, _) => resolved
                        .as_ref()
                        .map_or_else(String::new, |t| t.name.clone()),
                };
                out.push((name, resolved));
            }
            FromItem::Subquery { alias, .. } => {
                out.push((
                    alias.as_ref().map_or_else(String::new, |a| a.name.clone()),
                    None,
                ));
            }
            FromItem::Join(j) => {
                walk_from(&j.left, scope, out);
                walk_from(&j.right, scope, out);
            }
        }
    }
    if let Some(f) = from {
        walk_from(f, scope, &mut out);
    }
    out
}

/// Which query a column reference belongs to.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Side {
    Inner,
    Outer,
}

struct Sides {
    inner: Vec<(String, Option<Arc<Table>>)>,
    outer: Vec<(String, Option<Arc<Table>>)>,
}

impl Sides {
    fn side(&self, e: &Expr) -> Option<Side> {
        let has = |list: &[(String, Option<Arc<Table>>)], name: &str| {
            list.iter()
                .any(|(_, t)| t.as_ref().is_some_and(|t| t.column_index(name).is_some()))
        };
        let named = |list: &[(String, Option<Arc<Table>>)], q: &str| {
            list.iter().any(|(n, _)| n.eq_ignore_ascii_case(q))
        };
        match &e.kind {
            ExprKind::QualifiedColumn { table, .. } => {
                if named(&self.inner, table) {
                    Some(Side::Inner)
                } else if named(&self.outer, table) {
                    Some(Side::Outer)
                } else {
                    Some(Side::Inner)
                }
            }
            ExprKind::Column(name) => {
                if !has(&self.inner, name) && has(&self.outer, name) {
                    Some(Side::Outer)
                } else {
                    Some(Side::Inner)
                }
            }
            _ => None,
        }
    }

    /// The sides `e`'s column references belong to.
    fn sides_of(&self, e: &Expr) -> (bool, bool) {
        let (mut inner, mut outer) = (false, false);
        walk(e, &mut |x| match self.side(x) {
            Some(Side::Inner) => inner = true,
            Some(Side::Outer) => outer = true,
            None => {}
        });
        (inner, outer)
    }
}

/// A correlated subquery's SELECT split apart.
struct Split {
    select: Select,
    /// `inner expression = outer column`.
    keys: Vec<(Expr, Expr)>,
    /// `inner expression op outer column`.
    residual: Vec<(Expr, BinaryOp, Expr)>,
}

/// `query` split into its own conjuncts and those naming the outer query,
/// or `None` when it names none (or is not one SELECT).
fn split(
    query: &Query,
    outer: &[(String, Option<Arc<Table>>)],
    scope: &dyn Catalog,
) -> Result<Option<Split>> {
    let Some(select) = query.as_select() else {
        return Ok(None);
    };
    let sides = Sides {
        inner: inputs(select.from.as_ref(), scope),
        outer: outer.to_vec(),
    };
    let Some(selection) = &select.selection else {
        return Ok(None);
    };
    let conjuncts = super::conjuncts(selection.clone());
    if !conjuncts.iter().any(|c| sides.sides_of(c).1) {
        return Ok(None);
    }
    let mut own = Vec::new();
    let mut keys = Vec::new();
    let mut residual = Vec::new();
    for c in conjuncts {
        if !sides.sides_of(&c).1 {
            own.push(c);
            continue;
        }
        let unsupported = || {
            Error::plan_at(
                "this condition of a correlated subquery is not supported yet: it must compare an expression of the subquery's columns with an expression of the outer query's",
                c.span.start,
            )
        };
        let ExprKind::Binary { op, left, right } = &c.kind else {
            return Err(unsupported());
        };
        if !op.is_comparison() {
            return Err(unsupported());
        }
        // An expression of the outer query's columns alone: a column, or
        // one the outer input computes (`b.k = a.k + 1`).
        let outer_column = |e: &Expr| {
            sides.sides_of(e) == (false, true)
                && !super::any_node(e, &|x| {
                    matches!(
                        x.kind,
                        ExprKind::Subquery(_)
                            | ExprKind::InSubquery { .. }
                            | ExprKind::Quantified { .. }
                            | ExprKind::Exists(_)
                            | ExprKind::Window { .. }
                    ) || super::contains_aggregate(x)
                })
        };
        let inner_only = |e: &Expr| !sides.sides_of(e).1;
        let (inner, op, outer) = if outer_column(right) && inner_only(left) {
            ((**left).clone(), *op, (**right).clone())
        } else if outer_column(left) && inner_only(right) {
            ((**right).clone(), flip(*op), (**left).clone())
        } else {
            return Err(unsupported());
        };
        if op == BinaryOp::Eq {
            keys.push((inner, outer));
        } else {
            residual.push((inner, op, outer));
        }
    }
    let mut select = select.clone();
    select.selection = super::and_all(own);
    Ok(Some(Split {
        select,
        keys,
        residual,
    }))
}

/// An `[NOT] EXISTS` conjunct and the outer column it is gated on
/// ([`Semi::gate`]).
type Gated = (Expr, Option<Expr>);

/// A correlated `x [NOT] IN (SELECT y FROM … WHERE …)` as EXISTS
/// conjuncts, each with its gate (below); `None` for any other conjunct, an
/// uncorrelated subquery (which runs once, as a list), or a subquery whose
/// rows are not its FROM's filtered rows (grouped, aggregated, windowed or
/// limited), where that would change its answer.
/// - `x IN (…)` is `EXISTS (SELECT … WHERE … AND y = x)`.
/// - `x NOT IN (…)` keeps an outer row when every subquery row `s` has
///   `x <> s.y` true, so it drops the row when some `s` has `y = x`, or
///   `y` NULL, or `x` NULL. That is three anti-joins: `NOT EXISTS (… AND
///   y = x)`, `NOT EXISTS (… AND y IS NULL)`, and `NOT EXISTS (…)` gated
///   on `x`: applied only to the outer rows where `x` is NULL (an empty
///   subquery keeps even those, as `NULL NOT IN (empty)` is true).
///
/// # Errors
/// As [`split`], for a correlated condition it cannot take.
fn in_as_exists(
    c: &Expr,
    outer: &[(String, Option<Arc<Table>>)],
    scope: &dyn Catalog,
) -> Result<Option<Vec<Gated>>> {
    let ExprKind::InSubquery {
        expr,
        query,
        negated,
    } = &c.kind
    else {
        return Ok(None);
    };
    let Some(select) = query.as_select() else {
        return Ok(None);
    };
    let [SelectItem::Expr { expr: item, .. }] = select.projection.as_slice() else {
        return Ok(None);
    };
    let plain = select.group_by.is_empty()
        && !select.group_by_all
        && select.having.is_none()
        && select.windows.is_empty()
        && select.qualify.is_none()
        && select.limit.is_none()
        && select.offset.is_none()
        && !is_aggregate(item)
        && query.limit.is_none()
        && query.offset.is_none();
    if !plain || split(query, outer, scope)?.is_none() {
        return Ok(None);
    }
    let at = |kind| Expr { kind, span: c.span };
    let exists = |extra: Option<Expr>| {
        let mut select = select.clone();
        select.selection =
            super::and_all(select.selection.take().into_iter().chain(extra).collect());
        let exists = at(ExprKind::Exists(Box::new(Query::plain(select))));
        match negated {
            false => exists,
            true => at(ExprKind::Unary {
                op: crate::sql::ast::UnaryOp::Not,
                expr: Box::new(exists),
            }),
        }
    };
    let equal = at(ExprKind::Binary {
        op: BinaryOp::Eq,
        left: Box::new(item.clone()),
        right: expr.clone(),
    });
    if !negated {
        return Ok(Some(vec![(exists(Some(equal)), None)]));
    }
    let null = at(ExprKind::IsNull {
        expr: Box::new(item.clone()),
        negated: false,
    });
    Ok(Some(vec![
        (exists(Some(equal)), None),
        (exists(Some(null)), None),
        (exists(None), Some((**expr).clone())),
    ]))
}

/// `a op b` as `b op' a`.
pub(super) fn flip(op: BinaryOp) -> BinaryOp {
    match op {
        BinaryOp::Lt => BinaryOp::Gt,
        BinaryOp::LtEq => BinaryOp::GtEq,
        BinaryOp::Gt => BinaryOp::Lt,
        BinaryOp::GtEq => BinaryOp::LtEq,
        op => op,
    }
}

/// What a correlated scalar subquery gives per outer row.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// An aggregate of the rows of its key.
    Aggregate,
    /// The one row of its key (an error for two).
    Single,
    /// Any row of its key (`LIMIT 1`).
    Any,
    /// The first row of its key in the subquery's order (`ORDER BY …
    /// LIMIT 1`).
    First,
}

fn item(expr: Expr, name: String) -> SelectItem {
    let span = expr.span;
    SelectItem::Expr {
        expr,
        alias: Some(Ident { name, span }),
    }
}

impl Composer<'_> {
    /// Unnests the correlated subqueries of `select`: EXISTS conjuncts of
    /// its WHERE into `semis`, scalar subqueries into joined derived tables
    /// (added to `scope` and to `select`'s FROM). Returns the table rows
    /// the subqueries read.
    pub(super) fn decorrelate(
        &self,
        select: &mut Select,
        scope: &mut Scope<'_>,
        semis: &mut Vec<Semi>,
    ) -> Result<usize> {
        if select.from.is_none() || !has_subquery(select) {
            return Ok(0);
        }
        let outer = inputs(select.from.as_ref(), scope);
        let mut scanned = 0;
        // [NOT] EXISTS conjuncts.
        if let Some(selection) = select.selection.take() {
            let mut kept = Vec::new();
            let mut conjuncts = Vec::new();
            for c in super::conjuncts(selection) {
                // `x [NOT] IN (SELECT y FROM … WHERE <correlated>)` as
                // EXISTS conjuncts of WHERE (which drops a NULL as it drops
                // false).
                match in_as_exists(&c, &outer, scope)? {
                    Some(exists) => conjuncts.extend(exists),
                    None => conjuncts.push((c, None)),
                }
            }
            for (c, gate) in conjuncts {
                let (query, anti) = match &c.kind {
                    ExprKind::Exists(q) => (q, false),
                    ExprKind::Unary {
                        op: crate::sql::ast::UnaryOp::Not,
                        expr,
                    } => match &expr.kind {
                        ExprKind::Exists(q) => (q, true),
                        _ => {
                            kept.push(c);
                            continue;
                        }
                    },
                    _ => {
                        kept.push(c);
                        continue;
                    }
                };
                let Some(split) = split(query, &outer, scope)? else {
                    kept.push(c);
                    continue;
                };
                let mut inner = split.select;
                let mut projection = Vec::new();
                for (i, (e, _)) in split.keys.iter().enumerate() {
                    projection.push(item(e.clone(), format!("__k{i}")));
                }
                for (i, (e, _, _)) in split.residual.iter().enumerate() {
                    projection.push(item(e.clone(), format!("__r{i}")));
                }
                if projection.is_empty() {
                    return Err(Error::plan_at(
                        "a correlated EXISTS needs an equality with the outer query",
                        c.span.start,
                    ));
                }
                inner.projection = projection;
                inner.order_by.clear();
                inner.limit = None;
                inner.offset = None;
                // A plain scan runs later, as it is (a repeated key only
                // marks the same outer rows again), narrowed to the outer
                // rows' keys; anything else runs composed now, its
                // duplicates removed.
                let (columns, pending) = if super::needs_composition(&inner) {
                    inner.distinct = true;
                    let rel = self.nest(|| self.run_query(&Query::plain(inner), scope))?;
                    let columns = super::Columns::from_relation(&rel);
                    scanned += columns.rows_scanned;
                    self.note(semi_note(anti, columns.rows, split.keys.len()));
                    (columns, None)
                } else {
                    (super::Columns::default(), Some(inner))
                };
                let nkeys = split.keys.len();
                semis.push(Semi {
                    pending,
                    outer: split.keys.into_iter().map(|(_, o)| o).collect(),
                    rows: columns.rows,
                    columns: columns.arrays,
                    residual: split
                        .residual
                        .into_iter()
                        .enumerate()
                        .map(|(i, (_, op, o))| (nkeys + i, op, o))
                        .collect(),
                    anti,
                    gate,
                    types: columns.types,
                });
            }
            select.selection = super::and_all(kept);
            // Outer expressions the semi-joins compare with become columns
            // of the outer input.
            let mut exprs: Vec<&mut Expr> = Vec::new();
            for s in semis.iter_mut() {
                exprs.extend(s.outer.iter_mut());
                exprs.extend(s.residual.iter_mut().map(|(_, _, e)| e));
                exprs.extend(s.gate.iter_mut());
            }
            if let Some(from) = select.from.take() {
                select.from = Some(super::join::compute_columns(from, &mut exprs, scope)?);
            }
        }
        // Scalar subqueries, wherever they are.
        let domain = Domain::of(select, scope);
        let rejecting = null_rejecting(select);
        let outer_from = select.from.clone();
        let mut error = None;
        let mut joins: Vec<DerivedJoin> = Vec::new();
        let mut tables = Vec::new();
        super::for_each_expr_mut(select, &mut |e| {
            if error.is_some() {
                return;
            }
            if let Err(err) = self.scalar(
                e,
                &outer,
                outer_from.as_ref(),
                &domain,
                &rejecting,
                scope,
                &mut joins,
                &mut tables,
                &mut scanned,
            ) {
                error = Some(err);
            }
        });
        if let Some(err) = error {
            return Err(err);
        }
        for (name, table) in tables {
            scope.add(&name, table);
        }
        for (name, keys, span, left_join) in joins {
            let on = keys
                .into_iter()
                .enumerate()
                .map(|(i, outer)| Expr {
                    span: outer.span,
                    kind: ExprKind::Binary {
                        op: BinaryOp::Eq,
                        left: Box::new(outer),
                        right: Box::new(Expr {
                            kind: ExprKind::QualifiedColumn {
                                table: name.clone(),
                                column: format!("__k{i}"),
                            },
                            span,
                        }),
                    },
                })
                .collect();
            let left = select
                .from
                .take()
                .ok_or_else(|| Error::Internal("no FROM".into()))?;
            let right = FromItem::Table {
                table: TableRef::Named(Ident {
                    name: name.clone(),
                    span,
                }),
                alias: None,
            };
            let span = left.span();
            select.from = Some(FromItem::Join(Box::new(Join {
                left,
                right,
                kind: if left_join {
                    JoinKind::Left
                } else {
                    JoinKind::Inner
                },
                constraint: JoinConstraint::On(
                    super::and_all(on).ok_or_else(|| Error::Internal("no keys".into()))?,
                ),
                span,
            })));
        }
        Ok(scanned)
    }

    /// Replaces a correlated scalar subquery in `e` (or below it) by a
    /// column of a derived table it records in `joins` and `tables`.
    #[allow(clippy::too_many_arguments)]
    fn scalar(
        &self,
        e: &mut Expr,
        outer: &[(String, Option<Arc<Table>>)],
        outer_from: Option<&FromItem>,
        domain: &Domain,
        rejecting: &HashSet<usize>,
        scope: &Scope<'_>,
        joins: &mut Vec<DerivedJoin>,
        tables: &mut Vec<(String, Table)>,
        scanned: &mut usize,
    ) -> Result<()> {
        if let ExprKind::Subquery(query) = &e.kind {
            let Some(mut split) = split(query, outer, scope)? else {
                return Ok(());
            };
            // Compared with the outer query by more than equality: the
            // outer values it is compared with become a table joined into
            // it, and it is grouped by them.
            let mut run_scope = scope.child();
            let through_domain = !split.residual.is_empty();
            if through_domain {
                let Some(from) = outer_from else {
                    return Err(Error::Internal("a correlated subquery without FROM".into()));
                };
                let (name, table) =
                    self.comparison_domain(&split, from, domain, scope, e.span, scanned)?;
                run_scope.add(&name, table);
                split = joined_with_domain(split, &name, e.span);
            }
            let mut inner = split.select;
            let [SelectItem::Expr { expr: value, .. }] = inner.projection.as_slice() else {
                return Err(Error::plan_at(
                    "a subquery used as a value must return one column",
                    e.span.start,
                ));
            };
            // A plain value (`SELECT b.x FROM b WHERE b.k = a.k`) must be
            // one row per outer row: grouped by the keys as `any_value`,
            // with a count of rows checked below. With `ORDER BY … LIMIT
            // 1` it is the first row per key (a top-1 per group: QUALIFY
            // row_number() … <= 1); with a bare `LIMIT 1`, any row.
            let plain = inner.group_by.is_empty()
                && inner.having.is_none()
                && !inner.distinct
                && inner.offset.is_none()
                && inner.qualify.is_none()
                && !is_aggregate(value)
                && !super::any_node(value, &|x| matches!(x.kind, ExprKind::Window { .. }));
            let ordinal = inner
                .order_by
                .iter()
                .any(|o| matches!(o.expr.kind, ExprKind::Literal(_)));
            let shape = match (plain, inner.limit) {
                (true, None) => Shape::Single,
                (true, Some(1)) if inner.order_by.is_empty() => Shape::Any,
                (true, Some(1)) if !ordinal => Shape::First,
                _ if inner.group_by.is_empty() && inner.having.is_none() && is_aggregate(value) => {
                    Shape::Aggregate
                }
                _ => {
                    return Err(Error::plan_at(
                        "a correlated scalar subquery must be one value per outer row: an aggregate (such as min, sum or avg), a plain column, or the first row of ORDER BY … LIMIT 1; not GROUP BY, DISTINCT or OFFSET",
                        e.span.start,
                    ));
                }
            };
            let single = shape == Shape::Single;
            let value = match shape {
                Shape::Single | Shape::Any => {
                    Expr::call("any_value", vec![value.clone()], value.span)
                }
                Shape::First | Shape::Aggregate => value.clone(),
            };
            // An outer row without a group gets NULL, except from a bare
            // count, which is 0 there.
            let count = matches!(&value.kind,
                ExprKind::Function { name, .. } if name.eq_ignore_ascii_case("count"));
            if !count && has_count(&value) {
                return Err(Error::plan_at(
                    "a correlated scalar subquery may use count() only as its whole value for now",
                    value.span.start,
                ));
            }
            // A comparison conjunct of WHERE drops the rows where the
            // subquery is NULL, so an inner join is the same there.
            let left_join = count || !rejecting.contains(&e.span.start);
            let mut projection: Vec<SelectItem> = split
                .keys
                .iter()
                .enumerate()
                .map(|(i, (k, _))| item(k.clone(), format!("__k{i}")))
                .collect();
            projection.push(item(value, "__v".into()));
            if single {
                let mut star = Expr::call("count", Vec::new(), e.span);
                if let ExprKind::Function { star: s, .. } = &mut star.kind {
                    *s = true;
                }
                projection.push(item(star, "__n".into()));
            }
            let keys: Vec<Expr> = split.keys.iter().map(|(k, _)| k.clone()).collect();
            if shape == Shape::First {
                let span = e.span;
                let window = WindowSpec {
                    base: None,
                    partition_by: keys,
                    order_by: std::mem::take(&mut inner.order_by),
                    frame: None,
                    span,
                };
                let number = Expr {
                    kind: ExprKind::Window {
                        call: Box::new(Expr::call("row_number", Vec::new(), span)),
                        window: Box::new(window),
                    },
                    span,
                };
                let one = Expr {
                    kind: ExprKind::Literal(crate::sql::ast::Literal::Int(1)),
                    span,
                };
                inner.qualify = Some(Expr {
                    kind: ExprKind::Binary {
                        op: BinaryOp::LtEq,
                        left: Box::new(number),
                        right: Box::new(one),
                    },
                    span,
                });
                inner.limit = None;
            } else {
                inner.group_by = keys;
                inner.order_by.clear();
                inner.limit = None;
            }
            inner.projection = projection;
            // Only the keys the outer query can have need a group: each
            // outer key's values under its input's own filters become an
            // IN list on the subquery's side (a semi-join reduction).
            let outer_keys: Vec<&Expr> = split.keys.iter().map(|(_, o)| o).collect();
            let domains = if through_domain {
                vec![None; outer_keys.len()]
            } else {
                self.key_domains(&outer_keys, domain, scope, scanned)?
            };
            for ((k, _), list) in split.keys.iter().zip(domains) {
                if let Some(list) = list {
                    let span = k.span;
                    let restriction = Expr {
                        kind: if list.is_empty() {
                            ExprKind::Literal(crate::sql::ast::Literal::Bool(false))
                        } else {
                            ExprKind::InList {
                                expr: Box::new(k.clone()),
                                list,
                                negated: false,
                            }
                        },
                        span,
                    };
                    inner.selection = super::and_all(
                        inner
                            .selection
                            .take()
                            .into_iter()
                            .chain([restriction])
                            .collect(),
                    );
                }
            }
            let rel = self.nest(|| self.run_query(&Query::plain(inner), &run_scope))?;
            *scanned += rel.rows_scanned;
            if single {
                let n = split.keys.len() + 1;
                if let Some(row) = rel.rows.iter().find(|r| !matches!(r[n], Value::Int(..=1))) {
                    return Err(Error::plan_at(
                        format!(
                            "this subquery returned {} rows for one row of the outer query where one value is expected (use an aggregate such as min or any_value)",
                            row[n]
                        ),
                        e.span.start,
                    ));
                }
            }
            let name = self.internal_name("scalar");
            self.note(format!(
                "correlated scalar subquery: {} groups, joined on {} key(s)",
                super::thousands(rel.rows.len()),
                split.keys.len()
            ));
            tables.push((name.clone(), self.materialize(&name, &rel)));
            joins.push((
                name.clone(),
                split.keys.into_iter().map(|(_, o)| o).collect(),
                e.span,
                left_join,
            ));
            let column = ExprKind::QualifiedColumn {
                table: name,
                column: "__v".into(),
            };
            e.kind = if count {
                let span = e.span;
                let zero = Expr {
                    kind: ExprKind::Literal(crate::sql::ast::Literal::Int(0)),
                    span,
                };
                Expr::call("coalesce", vec![Expr { kind: column, span }, zero], span).kind
            } else {
                column
            };
            return Ok(());
        }
        for child in e.children_mut() {
            self.scalar(
                child, outer, outer_from, domain, rejecting, scope, joins, tables, scanned,
            )?;
        }
        Ok(())
    }
}

impl Composer<'_> {
    /// The distinct values of the outer expressions a correlated scalar
    /// subquery compares with (its keys', then its other comparisons'),
    /// over the outer query's FROM under its WHERE conjuncts that hold no
    /// subquery: a table `__domainN` of columns `__o0, __o1, …` (the "domain"
    /// of Neumann & Kemper's unnesting). A superset of the values the
    /// outer rows have is as good, as the result joins back on them.
    ///
    /// # Errors
    /// Those of running that query.
    fn comparison_domain(
        &self,
        split: &Split,
        from: &FromItem,
        domain: &Domain,
        scope: &Scope<'_>,
        span: Span,
        scanned: &mut usize,
    ) -> Result<(String, Table)> {
        let outers = split
            .keys
            .iter()
            .map(|(_, o)| o)
            .chain(split.residual.iter().map(|(_, _, o)| o));
        let projection = outers
            .enumerate()
            .map(|(i, o)| item(o.clone(), format!("__o{i}")))
            .collect();
        let select = Select {
            distinct: true,
            ..Select::over(
                projection,
                from.clone(),
                super::and_all(domain.conjuncts.clone()),
                span,
            )
        };
        let rel = self.nest(|| self.run_query(&Query::plain(select), scope))?;
        *scanned += rel.rows_scanned;
        let name = self.internal_name("domain");
        self.note(format!(
            "correlated scalar subquery compared by more than equality: {} outer value rows joined into it",
            super::thousands(rel.rows.len())
        ));
        let table = self.materialize(&name, &rel);
        Ok((name, table))
    }
}

/// `split` joined with the domain table `name` ([`Composer::comparison_domain`]):
/// its correlated conditions compare with the domain's columns instead of
/// the outer query's, inside the subquery, and its keys become those
/// columns, each equal to its outer expression; no comparison is left
/// outside.
fn joined_with_domain(split: Split, name: &str, span: Span) -> Split {
    let column = |i: usize| Expr {
        kind: ExprKind::QualifiedColumn {
            table: name.to_string(),
            column: format!("__o{i}"),
        },
        span,
    };
    let compare = |op: BinaryOp, left: Expr, right: Expr| Expr {
        span: left.span,
        kind: ExprKind::Binary {
            op,
            left: Box::new(left),
            right: Box::new(right),
        },
    };
    let mut select = split.select;
    let mut conditions = Vec::new();
    let mut keys = Vec::new();
    let equalities = split.keys.len();
    for (i, (inner, outer)) in split.keys.into_iter().enumerate() {
        conditions.push(compare(BinaryOp::Eq, inner, column(i)));
        keys.push((column(i), outer));
    }
    for (j, (inner, op, outer)) in split.residual.into_iter().enumerate() {
        conditions.push(compare(op, inner, column(equalities + j)));
        keys.push((column(equalities + j), outer));
    }
    select.selection = super::and_all(
        select
            .selection
            .take()
            .into_iter()
            .chain(conditions)
            .collect(),
    );
    let table = FromItem::Table {
        table: TableRef::Named(Ident {
            name: name.to_string(),
            span,
        }),
        alias: None,
    };
    select.from = Some(match select.from.take() {
        Some(from) => FromItem::Join(Box::new(Join {
            left: table,
            right: from,
            kind: JoinKind::Comma,
            constraint: JoinConstraint::None,
            span,
        })),
        None => table,
    });
    Split {
        select,
        keys,
        residual: Vec::new(),
    }
}

/// The outer query's inputs and WHERE conjuncts, for the values its
/// columns can take.
pub(crate) struct Domain {
    /// Per input: its name, its FROM item (tables only) and its table.
    inputs: Vec<DomainInput>,
    /// Conjuncts without a scalar subquery or EXISTS.
    conjuncts: Vec<Expr>,
}

/// An input of the outer query: name, FROM item (tables only), table.
type DomainInput = (String, Option<FromItem>, Option<Arc<Table>>);

/// Key lists longer than this are not worth an IN filter.
const MAX_DOMAIN: usize = 100_000;

impl Domain {
    fn of(select: &Select, scope: &dyn Catalog) -> Domain {
        let mut inputs = Vec::new();
        fn go(f: &FromItem, scope: &dyn Catalog, out: &mut Vec<DomainInput>) {
            match f {
                FromItem::Table { table, alias } => {
                    let name = match (alias, table) {
                        (Some(a), _) => a.name.clone(),
                        (None, TableRef::Named(n)) => n.name.clone(),
                        (None, _) => String::new(),
                    };
                    out.push((name, Some(f.clone()), resolve_table(table, scope).ok()));
                }
                FromItem::Subquery { alias, .. } => out.push((
                    alias.as_ref().map_or_else(String::new, |a| a.name.clone()),
                    None,
                    None,
                )),
                FromItem::Join(j) => {
                    // The filters of an outer join's padded side do not
                    // bound its columns; only inner joins are looked into.
                    if matches!(j.kind, JoinKind::Inner | JoinKind::Cross | JoinKind::Comma) {
                        go(&j.left, scope, out);
                        go(&j.right, scope, out);
                    }
                }
            }
        }
        if let Some(f) = &select.from {
            go(f, scope, &mut inputs);
        }
        let conjuncts = select
            .selection
            .clone()
            .map(super::conjuncts)
            .unwrap_or_default()
            .into_iter()
            .filter(|c| {
                !super::any_node(c, &|x| {
                    matches!(x.kind, ExprKind::Subquery(_) | ExprKind::Exists(_))
                })
            })
            .collect();
        Domain { inputs, conjuncts }
    }

    /// The input column `e` names: its index in `inputs`.
    fn input_of(&self, e: &Expr) -> Option<usize> {
        match &e.kind {
            ExprKind::QualifiedColumn { table, .. } => self
                .inputs
                .iter()
                .position(|(q, _, _)| q.eq_ignore_ascii_case(table)),
            ExprKind::Column(n) => {
                let mut found = self.inputs.iter().enumerate().filter(|(_, (_, _, t))| {
                    t.as_ref().is_some_and(|t| t.column_index(n).is_some())
                });
                match (found.next(), found.next()) {
                    (Some((i, _)), None) => Some(i),
                    _ => None,
                }
            }
            _ => None,
        }
    }
}

impl Composer<'_> {
    /// For each outer column of `columns`, the distinct values it takes
    /// under its input's own WHERE conjuncts, as literals; `None` for a
    /// column whose input has none (no reduction) or whose values are too
    /// many to be worth a list. Columns of one input are read by one
    /// query (TPC-H Q20's two partsupp keys: one filtered scan, not two).
    fn key_domains(
        &self,
        columns: &[&Expr],
        domain: &Domain,
        scope: &Scope<'_>,
        scanned: &mut usize,
    ) -> Result<Vec<Option<Vec<Expr>>>> {
        let mut out: Vec<Option<Vec<Expr>>> = vec![None; columns.len()];
        let inputs: Vec<Option<usize>> = columns.iter().map(|c| domain.input_of(c)).collect();
        for (first, input) in inputs.iter().enumerate() {
            let Some(i) = *input else { continue };
            if inputs[..first].contains(&Some(i)) {
                continue;
            }
            let (_, Some(from), Some(_)) = &domain.inputs[i] else {
                continue;
            };
            let own: Vec<Expr> = domain
                .conjuncts
                .iter()
                .filter(|c| {
                    let mut only = true;
                    walk(c, &mut |x| {
                        if matches!(
                            x.kind,
                            ExprKind::Column(_) | ExprKind::QualifiedColumn { .. }
                        ) && domain.input_of(x) != Some(i)
                        {
                            only = false;
                        }
                    });
                    only
                })
                .cloned()
                .collect();
            if own.is_empty() {
                continue;
            }
            let members: Vec<usize> = (first..columns.len())
                .filter(|&j| inputs[j] == Some(i))
                .collect();
            let span = columns[first].span;
            let projection = members
                .iter()
                .map(|&j| SelectItem::Expr {
                    expr: columns[j].clone(),
                    alias: None,
                })
                .collect();
            let select = Select {
                distinct: true,
                ..Select::over(projection, from.clone(), super::and_all(own), span)
            };
            let rel = self.nest(|| self.run_query(&Query::plain(select), scope))?;
            *scanned += rel.rows_scanned;
            for (at, &j) in members.iter().enumerate() {
                let mut seen = HashSet::new();
                let values: Vec<Expr> = rel
                    .rows
                    .iter()
                    .map(|r| &r[at])
                    .filter(|v| !v.is_null() && seen.insert(*v))
                    .map(|v| Expr {
                        kind: super::literal_kind(v, span),
                        span,
                    })
                    .collect();
                if values.len() > MAX_DOMAIN {
                    continue;
                }
                self.note(format!(
                    "outer key domain: {} values",
                    super::thousands(values.len())
                ));
                out[j] = Some(values);
            }
        }
        Ok(out)
    }
}

/// True when `select` has a subquery in an expression.
fn has_subquery(select: &Select) -> bool {
    let mut found = false;
    for_each_expr(select, &mut |e| {
        found |= super::any_node(e, &|x| {
            matches!(
                x.kind,
                ExprKind::Subquery(_)
                    | ExprKind::Exists(_)
                    | ExprKind::InSubquery { .. }
                    | ExprKind::Quantified { .. }
            ) || matches!(&x.kind, ExprKind::Unary { expr, .. } if matches!(expr.kind, ExprKind::Exists(_)))
        })
    });
    found
}

/// True when `e` is an aggregate or an expression over aggregates and
/// constants.
/// Whether `e` calls count() anywhere.
fn has_count(e: &Expr) -> bool {
    if let ExprKind::Function { name, .. } = &e.kind
        && name.eq_ignore_ascii_case("count")
    {
        return true;
    }
    e.children().into_iter().any(has_count)
}

/// Where (span starts) the scalar subqueries are that are an operand of a
/// comparison which is a conjunct of `select`'s WHERE: a NULL there drops
/// the row.
fn null_rejecting(select: &Select) -> HashSet<usize> {
    let mut out = HashSet::new();
    if let Some(w) = &select.selection {
        for c in super::conjuncts(w.clone()) {
            if let ExprKind::Binary {
                op:
                    BinaryOp::Eq
                    | BinaryOp::NotEq
                    | BinaryOp::Lt
                    | BinaryOp::LtEq
                    | BinaryOp::Gt
                    | BinaryOp::GtEq,
                left,
                right,
            } = &c.kind
            {
                for side in [left, right] {
                    if matches!(side.kind, ExprKind::Subquery(_)) {
                        out.insert(side.span.start);
                    }
                }
            }
        }
    }
    out
}

fn is_aggregate(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Function { name, .. } if crate::plan::AggFunc::is_aggregate_name(name) => true,
        ExprKind::Literal(_) => false,
        _ => {
            let mut any = false;
            let mut plain = false;
            for c in e.children() {
                if is_aggregate(c) {
                    any = true;
                } else if !matches!(c.kind, ExprKind::Literal(_)) {
                    plain = true;
                }
            }
            any && !plain
        }
    }
}
