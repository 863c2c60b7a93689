//! Quantified comparisons, `x op ANY (SELECT …)` and `x op ALL (SELECT …)`,
//! rewritten into what the rest of `compose` runs: `= ANY` is `IN`, `<> ALL`
//! is `NOT IN`, and every other one a CASE over scalar aggregates of the
//! subquery's column (`min`, `max`, `count(v)`, `count(*)`), which run once
//! each when the subquery is uncorrelated and are decorrelated into
//! aggregate joins when it is not.
//!
//! The CASE keeps SQL's three-valued answer. For `x > ANY (S)`: true when
//! `x > min(S)`; else false when S has no row; else unknown when `x` is
//! NULL or S holds a NULL (`count(v) < count(*)`); else false. For
//! `x > ALL (S)`: true when S has no row; unknown when `x` is NULL; false
//! when `x > max(S)` is false; unknown when S holds a NULL; else true.
//! `<`/`<=` read the other extreme, `<> ANY` and `= ALL` compare with both.

use crate::error::{Error, Result};
use crate::sql::ast::{
    BinaryOp, Expr, ExprKind, FromItem, Ident, Literal, Query, Select, SelectItem, SetExpr, Span,
    UnaryOp,
};

/// Rewrites every quantified comparison of `e` (outside nested subqueries,
/// which are rewritten when they run) as the module docs say.
///
/// # Errors
/// [`Error::Plan`] at the subquery when its first SELECT does not have
/// exactly one item that is not a `*`.
pub(super) fn rewrite(e: &mut Expr) -> Result<()> {
    for child in e.children_mut() {
        rewrite(child)?;
    }
    let ExprKind::Quantified { query, .. } = &e.kind else {
        return Ok(());
    };
    let mut first = &query.body;
    while let SetExpr::Operation { left, .. } = first {
        first = left;
    }
    if let SetExpr::Select(s) = first
        && !matches!(s.projection.as_slice(), [SelectItem::Expr { .. }])
    {
        return Err(Error::plan_at(
            format!(
                "a subquery compared with ANY or ALL must return one column, this one has {}",
                match s.projection.as_slice() {
                    [_] => "a *".to_string(),
                    items => format!("{} items", items.len()),
                }
            ),
            query.span.start,
        ));
    }
    let ExprKind::Quantified {
        expr,
        op,
        all,
        query,
    } = std::mem::replace(&mut e.kind, ExprKind::Literal(Literal::Null))
    else {
        unreachable!("matched above");
    };
    let (x, span) = (*expr, e.span);
    e.kind = match (op, all) {
        (BinaryOp::Eq, false) | (BinaryOp::NotEq, true) => ExprKind::InSubquery {
            expr: Box::new(x),
            query,
            negated: all,
        },
        _ => case(x, op, all, &query, span),
    };
    Ok(())
}

/// The CASE of the module docs for `x op ANY/ALL (query)`.
fn case(x: Expr, op: BinaryOp, all: bool, query: &Query, span: Span) -> ExprKind {
    let agg = |name: &str, star: bool| aggregate(query, name, star, span);
    let bool_lit = |b: bool| literal(Literal::Bool(b), span);
    let null = || literal(Literal::Null, span);
    let binary = |op, l: Expr, r: Expr| Expr {
        kind: ExprKind::Binary {
            op,
            left: Box::new(l),
            right: Box::new(r),
        },
        span,
    };
    let no_rows = binary(
        BinaryOp::Eq,
        agg("count", true),
        literal(Literal::Int(0), span),
    );
    let x_null = Expr {
        kind: ExprKind::IsNull {
            expr: Box::new(x.clone()),
            negated: false,
        },
        span,
    };
    let holds_null = binary(BinaryOp::Lt, agg("count", false), agg("count", true));
    // Whether some value of the column differs from x: x <> min OR x <> max.
    let differs = || {
        binary(
            BinaryOp::Or,
            binary(BinaryOp::NotEq, x.clone(), agg("min", false)),
            binary(BinaryOp::NotEq, x.clone(), agg("max", false)),
        )
    };
    // The extreme of the column x must beat: for ANY the one easiest to
    // beat, for ALL the hardest.
    let extreme = |greater: bool| {
        if greater != all { "min" } else { "max" }
    };
    let decides = match op {
        BinaryOp::Gt | BinaryOp::GtEq => binary(op, x.clone(), agg(extreme(true), false)),
        BinaryOp::Lt | BinaryOp::LtEq => binary(op, x.clone(), agg(extreme(false), false)),
        // `<> ANY` holds when some value differs; `= ALL` fails when one
        // does.
        _ => differs(),
    };
    let branches = if all {
        let fails = match op {
            BinaryOp::Eq => decides,
            _ => Expr {
                kind: ExprKind::Unary {
                    op: UnaryOp::Not,
                    expr: Box::new(decides),
                },
                span,
            },
        };
        vec![
            (no_rows, bool_lit(true)),
            (x_null, null()),
            (fails, bool_lit(false)),
            (holds_null, null()),
        ]
    } else {
        vec![
            (decides, bool_lit(true)),
            (no_rows, bool_lit(false)),
            (x_null, null()),
            (holds_null, null()),
        ]
    };
    ExprKind::Case {
        operand: None,
        branches,
        else_result: Some(Box::new(bool_lit(all))),
    }
}

/// `(SELECT name(v) FROM …)` over `query`'s one column: its own SELECT with
/// the item replaced when that is a plain projection of rows, else over
/// the query as a derived table `(query) AS __quantified(v)`.
fn aggregate(query: &Query, name: &str, star: bool, span: Span) -> Expr {
    let call = |arg: Option<Expr>| Expr {
        kind: ExprKind::Function {
            name: name.to_string(),
            args: arg.into_iter().collect(),
            star,
            distinct: false,
            filter: None,
            order_by: Vec::new(),
            within_group: false,
        },
        span,
    };
    let plain = query.as_select().filter(|s| {
        s.group_by.is_empty()
            && !s.group_by_all
            && s.having.is_none()
            && s.windows.is_empty()
            && s.qualify.is_none()
            && s.limit.is_none()
            && s.offset.is_none()
            && matches!(
                s.projection.as_slice(),
                [SelectItem::Expr { expr, .. }]
                    if !super::contains_aggregate(expr)
                        && !super::any_node(expr, &|x| matches!(x.kind, ExprKind::Window { .. }))
            )
    });
    let select = match plain {
        Some(s) => {
            let mut s = s.clone();
            let [SelectItem::Expr { expr, .. }] = s.projection.as_slice() else {
                unreachable!("checked above");
            };
            let value = (!star).then(|| expr.clone());
            s.projection = vec![SelectItem::Expr {
                expr: call(value),
                alias: None,
            }];
            // Neither changes an aggregate of the rows or whether one is
            // NULL.
            s.distinct = false;
            s.order_by.clear();
            s
        }
        None => {
            let column = Ident {
                name: "__quantified_value".into(),
                span,
            };
            let from = FromItem::Subquery {
                query: Box::new(query.clone()),
                alias: Some(Ident {
                    name: "__quantified".into(),
                    span,
                }),
                columns: vec![column.clone()],
                span,
            };
            let value = (!star).then(|| Expr {
                kind: ExprKind::Column(column.name.clone()),
                span,
            });
            Select::over(
                vec![SelectItem::Expr {
                    expr: call(value),
                    alias: None,
                }],
                from,
                None,
                span,
            )
        }
    };
    Expr {
        kind: ExprKind::Subquery(Box::new(Query::plain(select))),
        span,
    }
}

fn literal(l: Literal, span: Span) -> Expr {
    Expr {
        kind: ExprKind::Literal(l),
        span,
    }
}
