//! Join keys that are expressions (`ON a.k % 7 = b.k % 7`, `ON lower(a.s)
//! = b.s`, and the comparisons of a range join, `ON a.t < b.t + 60`; a
//! `BETWEEN` over two inputs is first split into its two comparisons):
//! each side's expression becomes a column of its input, computed
//! by a scan of that input (`(SELECT *, a.k % 7 AS __join_key_0 FROM a) AS
//! a`), so the equality is one between columns and the join hashes it like
//! any other key instead of pairing every row with every row.
//!
//! Only equalities whose sides each read exactly one input are taken, and
//! at least one side must be more than a column. Those of an ON clause
//! always are (ON is evaluated on the inputs' own rows); those of WHERE
//! only when every join is inner, as an expression computed before an
//! outer join pads its side with NULLs could differ from the same
//! expression over the padded row (`coalesce(b.x, 0)`).

use std::sync::Arc;

use crate::error::Result;
use crate::plan::Catalog;
use crate::sql::ast::{
    BinaryOp, Expr, ExprKind, FromItem, Ident, JoinConstraint, JoinKind, Literal, Query, Select,
    SelectItem, TableRef,
};

/// The prefix of a computed key column's name; `*` does not show them.
pub(super) const PREFIX: &str = "__join_key_";

/// The prefix of a computed column of the outer query that a correlated
/// subquery compares with ([`compute_columns`]); `*` does not show them.
pub(super) const OUTER_PREFIX: &str = "__outer_key_";

/// One input of the FROM tree as the rewrite sees it.
struct Leaf {
    /// The name `t.col` uses.
    qualifier: Option<String>,
    /// Its columns' names, when known without running anything (a table or
    /// a file; not a subquery).
    fields: Option<Vec<String>>,
    /// Computed key columns: `(expression, name)`.
    computed: Vec<(Expr, String)>,
}

/// Rewrites `from` and `select`'s WHERE so that every equality between
/// expressions of two inputs compares computed columns (module docs).
/// Leaves everything as it was when there is none.
///
/// # Errors
/// Resolving a table or file of the FROM tree (which the join does next
/// anyway).
pub(super) fn compute_expression_keys(
    from: FromItem,
    select: &mut Select,
    scope: &dyn Catalog,
) -> Result<FromItem> {
    let mut leaves = Vec::new();
    collect_leaves(&from, scope, &mut leaves)?;
    if leaves.len() < 2 {
        return Ok(from);
    }
    let mut counter = 0;
    let mut from = from;
    on_clauses(&mut from, &mut |e| {
        rewrite_conjuncts(e, &mut leaves, &mut counter)
    });
    let mut at = 0;
    outer_conditions(&mut from, &mut leaves, &mut counter, &mut at);
    if inner_only(&from)
        && let Some(selection) = &mut select.selection
    {
        rewrite_conjuncts(selection, &mut leaves, &mut counter);
    }
    if counter == 0 {
        return Ok(from);
    }
    let mut at = 0;
    Ok(wrap_leaves(from, &mut leaves, &mut at))
}

/// Makes each of `exprs` that is more than a column a computed column of
/// the one input of `from` it reads, as join keys are made above, and
/// replaces it by a reference to that column (`a.k + 1` becomes
/// `a.__outer_key_0`, computed by `(SELECT *, a.k + 1 AS __outer_key_0
/// FROM a) AS a`): a correlated subquery's comparison with an expression
/// of the outer query is then one with a column. An expression whose input
/// cannot be placed (it reads several inputs, or an input without a name)
/// is left as it is, for the caller to report.
///
/// # Errors
/// Resolving a table or file of the FROM tree.
pub(in crate::compose) fn compute_columns(
    from: FromItem,
    exprs: &mut [&mut Expr],
    scope: &dyn Catalog,
) -> Result<FromItem> {
    let mut leaves = Vec::new();
    collect_leaves(&from, scope, &mut leaves)?;
    let mut counter = 0;
    for e in exprs.iter_mut() {
        if matches!(
            e.kind,
            ExprKind::Column(_) | ExprKind::QualifiedColumn { .. }
        ) {
            continue;
        }
        let Some(leaf) = leaf_of(e, &leaves) else {
            continue;
        };
        let Some(qualifier) = leaves[leaf].qualifier.clone() else {
            continue;
        };
        let name = format!("{OUTER_PREFIX}{counter}");
        counter += 1;
        compute_in(e, &mut leaves[leaf], qualifier, name);
    }
    if counter == 0 {
        return Ok(from);
    }
    let mut at = 0;
    Ok(wrap_leaves(from, &mut leaves, &mut at))
}

fn collect_leaves(from: &FromItem, scope: &dyn Catalog, out: &mut Vec<Leaf>) -> Result<()> {
    match from {
        FromItem::Table { table, alias } => {
            let qualifier = match (alias, table) {
                (Some(a), _) => Some(a.name.clone()),
                (None, TableRef::Named(n)) => Some(n.name.clone()),
                _ => None,
            };
            let fields =
                crate::plan::resolve_table(table, scope)
                    .ok()
                    .map(|t: Arc<crate::store::Table>| {
                        t.fields.iter().map(|f| f.name.clone()).collect()
                    });
            out.push(Leaf {
                qualifier,
                fields,
                computed: Vec::new(),
            });
        }
        FromItem::Subquery { alias, .. } => out.push(Leaf {
            qualifier: alias.as_ref().map(|a| a.name.clone()),
            fields: None,
            computed: Vec::new(),
        }),
        FromItem::Join(j) => {
            collect_leaves(&j.left, scope, out)?;
            collect_leaves(&j.right, scope, out)?;
        }
    }
    Ok(())
}

/// Calls `f` on every ON clause of the tree.
fn on_clauses(from: &mut FromItem, f: &mut dyn FnMut(&mut Expr)) {
    if let FromItem::Join(j) = from {
        on_clauses(&mut j.left, f);
        on_clauses(&mut j.right, f);
        if let JoinConstraint::On(e) = &mut j.constraint {
            f(e);
        }
    }
}

fn inner_only(from: &FromItem) -> bool {
    match from {
        FromItem::Join(j) => {
            matches!(j.kind, JoinKind::Inner | JoinKind::Cross | JoinKind::Comma)
                && inner_only(&j.left)
                && inner_only(&j.right)
        }
        _ => true,
    }
}

/// The conjuncts of `e` (an AND tree), rewritten in place.
fn rewrite_conjuncts(e: &mut Expr, leaves: &mut [Leaf], counter: &mut usize) {
    if let ExprKind::Binary {
        op: BinaryOp::And,
        left,
        right,
    } = &mut e.kind
    {
        rewrite_conjuncts(left, leaves, counter);
        rewrite_conjuncts(right, leaves, counter);
        return;
    }
    // `x BETWEEN lo AND hi` over two inputs is `x >= lo AND x <= hi`, two
    // comparisons a range join can take.
    if let ExprKind::Between {
        expr,
        low,
        high,
        negated: false,
    } = &e.kind
    {
        let (x, lo, hi) = (
            leaf_of(expr, leaves),
            leaf_of(low, leaves),
            leaf_of(high, leaves),
        );
        if x.is_some() && (lo.is_some_and(|l| Some(l) != x) || hi.is_some_and(|h| Some(h) != x)) {
            let span = e.span;
            let compare = |op, bound: &Expr| Expr {
                kind: ExprKind::Binary {
                    op,
                    left: expr.clone(),
                    right: Box::new(bound.clone()),
                },
                span,
            };
            *e = Expr {
                kind: ExprKind::Binary {
                    op: BinaryOp::And,
                    left: Box::new(compare(BinaryOp::GtEq, low)),
                    right: Box::new(compare(BinaryOp::LtEq, high)),
                },
                span,
            };
            rewrite_conjuncts(e, leaves, counter);
            return;
        }
    }
    // An equality, or a comparison a range join can take.
    let ExprKind::Binary { op, left, right } = &mut e.kind else {
        return;
    };
    if !op.is_comparison() {
        return;
    }
    let is_column = |x: &Expr| {
        matches!(
            x.kind,
            ExprKind::Column(_) | ExprKind::QualifiedColumn { .. }
        )
    };
    if is_column(left) && is_column(right) {
        return;
    }
    let (Some(l), Some(r)) = (leaf_of(left, leaves), leaf_of(right, leaves)) else {
        return;
    };
    if l == r {
        return;
    }
    for (side, leaf) in [(left, l), (right, r)] {
        if is_column(side) {
            continue;
        }
        let Some(qualifier) = leaves[leaf].qualifier.clone() else {
            return;
        };
        let name = format!("{PREFIX}{counter}");
        *counter += 1;
        compute_in(side, &mut leaves[leaf], qualifier, name);
    }
}

/// In each outer join's ON clause, makes every conjunct that reads one
/// input the join may not filter (the left of LEFT, the right of RIGHT,
/// either of FULL), or none, an equality of computed keys: `c` becomes
/// `l.__join_key_N = r.__join_key_M`, where `l` (an input on the side `c`
/// reads, or the left for a constant) computes `CASE WHEN c THEN 1 END`
/// and `r` (an input of the other side) computes `1`. A row for which `c`
/// is false or NULL then has a NULL key and pairs with nothing, so it is
/// kept with NULLs as SQL's ON has it, and the others pair as the rest of
/// the ON clause says (`a LEFT JOIN b ON a.k = b.k AND a.x > 5`).
///
/// Only when no join inside either side pads those two inputs with NULLs
/// (both sides' own joins are inner): a computed key of a padded row is
/// NULL, where `c` over the padded row could be true (`x IS NULL`). Other
/// conjuncts stay as they are, for the join to place or report.
fn outer_conditions(from: &mut FromItem, leaves: &mut [Leaf], counter: &mut usize, at: &mut usize) {
    let FromItem::Join(j) = from else {
        *at += 1;
        return;
    };
    let start = *at;
    outer_conditions(&mut j.left, leaves, counter, at);
    let middle = *at;
    outer_conditions(&mut j.right, leaves, counter, at);
    let (left, right) = (start..middle, middle..*at);
    let kind = j.kind;
    if !matches!(kind, JoinKind::Left | JoinKind::Right | JoinKind::Full)
        || !inner_only(&j.left)
        || !inner_only(&j.right)
    {
        return;
    }
    let JoinConstraint::On(on) = &mut j.constraint else {
        return;
    };
    // The other side's input that computes the constant key: one with a
    // name, on the side opposite `side`.
    let named = |range: std::ops::Range<usize>, leaves: &[Leaf]| {
        range.clone().find(|&i| leaves[i].qualifier.is_some())
    };
    let mut parts = super::super::conjuncts(on.clone());
    let mut changed = false;
    for c in &mut parts {
        if side_of_equality(c, leaves, &left, &right) {
            continue;
        }
        let reads = leaf_of(c, leaves);
        let constant = reads.is_none() && !reads_anything(c);
        let on_left = reads.is_some_and(|l| left.contains(&l));
        let on_right = reads.is_some_and(|l| right.contains(&l));
        let preserved = match kind {
            JoinKind::Left => on_left,
            JoinKind::Right => on_right,
            _ => on_left || on_right,
        };
        if !(preserved || constant) {
            continue;
        }
        let (here, there) = match reads {
            Some(l) if on_right => (Some(l), named(left.clone(), leaves)),
            Some(l) => (Some(l), named(right.clone(), leaves)),
            None => (named(left.clone(), leaves), named(right.clone(), leaves)),
        };
        let (Some(here), Some(there)) = (here, there) else {
            continue;
        };
        let (Some(q_here), Some(q_there)) = (
            leaves[here].qualifier.clone(),
            leaves[there].qualifier.clone(),
        ) else {
            continue;
        };
        let span = c.span;
        let literal = |kind| Expr { kind, span };
        let one = || literal(ExprKind::Literal(Literal::Int(1)));
        let mut test = literal(ExprKind::Case {
            operand: None,
            branches: vec![(std::mem::replace(c, one()), one())],
            else_result: None,
        });
        let mut constant_one = one();
        let (a, b) = (
            format!("{PREFIX}{counter}"),
            format!("{PREFIX}{}", *counter + 1),
        );
        *counter += 2;
        compute_in(&mut test, &mut leaves[here], q_here, a);
        compute_in(&mut constant_one, &mut leaves[there], q_there, b);
        *c = literal(ExprKind::Binary {
            op: BinaryOp::Eq,
            left: Box::new(test),
            right: Box::new(constant_one),
        });
        changed = true;
    }
    if changed {
        *on = parts
            .into_iter()
            .reduce(|a, b| {
                let span = a.span.union(b.span);
                Expr {
                    kind: ExprKind::Binary {
                        op: BinaryOp::And,
                        left: Box::new(a),
                        right: Box::new(b),
                    },
                    span,
                }
            })
            .expect("an ON clause has a conjunct");
    }
}

/// Whether `c` is an equality whose two sides read inputs of the join's
/// two sides, one each (a key the join hashes).
fn side_of_equality(
    c: &Expr,
    leaves: &[Leaf],
    left: &std::ops::Range<usize>,
    right: &std::ops::Range<usize>,
) -> bool {
    let ExprKind::Binary {
        op: BinaryOp::Eq,
        left: a,
        right: b,
    } = &c.kind
    else {
        return false;
    };
    match (leaf_of(a, leaves), leaf_of(b, leaves)) {
        (Some(x), Some(y)) => {
            (left.contains(&x) && right.contains(&y)) || (left.contains(&y) && right.contains(&x))
        }
        _ => false,
    }
}

/// Whether `e` reads a column, or holds a subquery, an aggregate or a
/// window: anything but a constant.
fn reads_anything(e: &Expr) -> bool {
    let mut found = false;
    super::super::walk(e, &mut |x| {
        if matches!(
            x.kind,
            ExprKind::Column(_)
                | ExprKind::QualifiedColumn { .. }
                | ExprKind::Subquery(_)
                | ExprKind::InSubquery { .. }
                | ExprKind::Quantified { .. }
                | ExprKind::Exists(_)
                | ExprKind::Window { .. }
        ) || matches!(x.kind, ExprKind::Function { .. }) && super::super::contains_aggregate(x)
        {
            found = true;
        }
    });
    found
}

/// Moves `e` into `leaf`'s computed columns as `name`, leaving a reference
/// to that column (`qualifier.name`) in its place.
fn compute_in(e: &mut Expr, leaf: &mut Leaf, qualifier: String, name: String) {
    let span = e.span;
    let reference = Expr {
        kind: ExprKind::QualifiedColumn {
            table: qualifier,
            column: name.clone(),
        },
        span,
    };
    leaf.computed.push((std::mem::replace(e, reference), name));
}

/// The one input every column of `e` belongs to; `None` when it reads
/// none, several, or a name the rewrite cannot place, or holds anything
/// but scalar operations (a subquery, an aggregate, a window).
fn leaf_of(e: &Expr, leaves: &[Leaf]) -> Option<usize> {
    let mut found: Option<usize> = None;
    let mut ok = true;
    super::super::walk(e, &mut |x| {
        let here = match &x.kind {
            ExprKind::QualifiedColumn { table, .. } => leaves.iter().position(|l| {
                l.qualifier
                    .as_ref()
                    .is_some_and(|q| q.eq_ignore_ascii_case(table))
            }),
            ExprKind::Column(name) => {
                let holders: Vec<usize> = (0..leaves.len())
                    .filter(|&i| match &leaves[i].fields {
                        Some(f) => f.iter().any(|n| n.eq_ignore_ascii_case(name)),
                        None => true,
                    })
                    .collect();
                match holders.as_slice() {
                    [one] if leaves[*one].fields.is_some() => Some(*one),
                    _ => None,
                }
            }
            ExprKind::Subquery(_)
            | ExprKind::InSubquery { .. }
            | ExprKind::Quantified { .. }
            | ExprKind::Exists(_)
            | ExprKind::Window { .. } => None,
            ExprKind::Function { .. } if super::super::contains_aggregate(x) => None,
            _ => return,
        };
        match (here, found) {
            (None, _) => ok = false,
            (Some(h), Some(f)) if h != f => ok = false,
            (Some(h), _) => found = Some(h),
        }
    });
    found.filter(|_| ok)
}

/// `from` with each leaf that has computed keys replaced by a scan of it
/// that adds them; `at` counts leaves in the order [`collect_leaves`]
/// visits them.
fn wrap_leaves(from: FromItem, leaves: &mut [Leaf], at: &mut usize) -> FromItem {
    match from {
        FromItem::Join(mut j) => {
            let left = std::mem::replace(&mut j.left, placeholder());
            j.left = wrap_leaves(left, leaves, at);
            let right = std::mem::replace(&mut j.right, placeholder());
            j.right = wrap_leaves(right, leaves, at);
            FromItem::Join(j)
        }
        leaf => {
            let me = &mut leaves[*at];
            *at += 1;
            if me.computed.is_empty() {
                return leaf;
            }
            let Some(qualifier) = me.qualifier.clone() else {
                return leaf;
            };
            let span = leaf.span();
            let mut projection = vec![SelectItem::Wildcard(span, Default::default())];
            for (expr, name) in me.computed.drain(..) {
                projection.push(SelectItem::Expr {
                    alias: Some(Ident {
                        name,
                        span: expr.span,
                    }),
                    expr,
                });
            }
            let select = Select::over(projection, leaf, None, span);
            FromItem::Subquery {
                query: Box::new(Query::plain(select)),
                alias: Some(Ident {
                    name: qualifier,
                    span,
                }),
                columns: Vec::new(),
                span,
            }
        }
    }
}

fn placeholder() -> FromItem {
    FromItem::Table {
        table: TableRef::Named(Ident {
            name: String::new(),
            span: Default::default(),
        }),
        alias: None,
    }
}
