//! Merging a subquery in FROM into the query that reads it ("view
//! merging"): `SELECT count(*), sum(v) FROM (SELECT x.*, y.v FROM x JOIN y
//! …) AS t` runs as `SELECT count(*), sum(y.v) FROM x JOIN y …`, so the
//! subquery's rows are never built and encoded as a table. Only a subquery
//! that is a plain projection and filter is merged (no DISTINCT, grouping,
//! aggregate, ORDER BY, LIMIT or subquery of its own), and only when every
//! name the outer query uses is one of its outputs; anything else runs as
//! before.

use super::correlated::inputs;
use super::{contains_aggregate, for_each_expr, walk};
use crate::error::Result;
use crate::plan::Catalog;
use crate::sql::ast::{Expr, ExprKind, FromItem, Ident, Select, SelectItem};

/// The outer SELECT with its FROM subquery merged in, if it can be.
pub(super) fn merge_derived(outer: &Select, scope: &dyn Catalog) -> Result<Option<Select>> {
    let Some(FromItem::Subquery {
        query,
        alias,
        columns,
        ..
    }) = &outer.from
    else {
        return Ok(None);
    };
    let Some(inner) = query.as_select() else {
        return Ok(None);
    };
    let plain = columns.is_empty()
        && query.order_by.is_empty()
        && query.limit.is_none()
        && query.offset.is_none()
        && !inner.distinct
        && inner.group_by.is_empty()
        && inner.having.is_none()
        && inner.order_by.is_empty()
        && inner.limit.is_none()
        && inner.offset.is_none()
        && inner.from.is_some()
        && !super::window::has_windows(inner);
    if !plain || has_expression_subquery(inner) || !named_inputs(inner.from.as_ref()) {
        return Ok(None);
    }
    // The subquery's outputs by name.
    let mut outputs: Vec<(String, Expr)> = Vec::new();
    for item in &inner.projection {
        match item {
            SelectItem::Expr { expr, alias } => {
                if contains_aggregate(expr) {
                    return Ok(None);
                }
                let name = match (alias, &expr.kind) {
                    (Some(a), _) => a.name.clone(),
                    (None, ExprKind::Column(n) | ExprKind::QualifiedColumn { column: n, .. }) => {
                        n.clone()
                    }
                    // Named by its text: the outer query can hardly use it.
                    (None, _) => String::new(),
                };
                outputs.push((name, expr.clone()));
            }
            // A `*` with EXCLUDE or REPLACE: the subquery runs unmerged.
            SelectItem::Wildcard(_, options) | SelectItem::QualifiedWildcard { options, .. }
                if !options.is_empty() =>
            {
                return Ok(None);
            }
            SelectItem::Wildcard(span, _) => {
                for (qualifier, table) in inputs(inner.from.as_ref(), scope) {
                    let Some(table) = table.filter(|_| !qualifier.is_empty()) else {
                        return Ok(None);
                    };
                    for f in &table.fields {
                        outputs.push((f.name.clone(), qualified(&qualifier, &f.name, *span)));
                    }
                }
            }
            SelectItem::QualifiedWildcard { table, span, .. } => {
                let found = inputs(inner.from.as_ref(), scope)
                    .into_iter()
                    .find(|(q, _)| q.eq_ignore_ascii_case(&table.name));
                let Some((qualifier, Some(t))) = found else {
                    return Ok(None);
                };
                for f in &t.fields {
                    outputs.push((f.name.clone(), qualified(&qualifier, &f.name, *span)));
                }
            }
        }
    }
    let alias = alias.as_ref().map(|a| a.name.as_str());
    let lookup = |name: &str| {
        outputs
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, e)| e.clone())
    };
    // Rewrites `e`'s references to the subquery's outputs; false when one
    // is not an output (the query then runs unmerged, and errors there).
    fn substitute(
        e: &mut Expr,
        alias: Option<&str>,
        lookup: &dyn Fn(&str) -> Option<Expr>,
        keep: &[String],
    ) -> bool {
        let name = match &e.kind {
            ExprKind::Column(n) => {
                if keep.iter().any(|k| k.eq_ignore_ascii_case(n)) {
                    return true;
                }
                Some(n.clone())
            }
            ExprKind::QualifiedColumn { table, column } => {
                if alias.is_none_or(|a| !a.eq_ignore_ascii_case(table)) {
                    return false;
                }
                Some(column.clone())
            }
            ExprKind::Subquery(_)
            | ExprKind::Exists(_)
            | ExprKind::InSubquery { .. }
            | ExprKind::Quantified { .. } => {
                return false;
            }
            _ => None,
        };
        if let Some(name) = name {
            return match lookup(&name) {
                Some(replacement) => {
                    e.kind = replacement.kind;
                    true
                }
                None => false,
            };
        }
        e.children_mut()
            .into_iter()
            .all(|c| substitute(c, alias, lookup, keep))
    }
    let mut merged = inner.clone();
    merged.distinct = outer.distinct;
    merged.limit = outer.limit;
    merged.offset = outer.offset;
    merged.span = outer.span;
    let mut projection = Vec::new();
    for item in &outer.projection {
        match item {
            SelectItem::Wildcard(_, options) | SelectItem::QualifiedWildcard { options, .. }
                if !options.is_empty() =>
            {
                return Ok(None);
            }
            SelectItem::Wildcard(span, _) | SelectItem::QualifiedWildcard { span, .. } => {
                if let SelectItem::QualifiedWildcard { table, .. } = item
                    && alias.is_none_or(|a| !a.eq_ignore_ascii_case(&table.name))
                {
                    return Ok(None);
                }
                for (name, expr) in &outputs {
                    if name.is_empty() {
                        return Ok(None);
                    }
                    projection.push(SelectItem::Expr {
                        expr: expr.clone(),
                        alias: Some(Ident {
                            name: name.clone(),
                            span: *span,
                        }),
                    });
                }
            }
            SelectItem::Expr { expr, alias: a } => {
                let name = a.clone().or_else(|| match &expr.kind {
                    ExprKind::Column(n) | ExprKind::QualifiedColumn { column: n, .. } => {
                        Some(Ident {
                            name: n.clone(),
                            span: expr.span,
                        })
                    }
                    _ => None,
                });
                let mut expr = expr.clone();
                if !substitute(&mut expr, alias, &lookup, &[]) {
                    return Ok(None);
                }
                projection.push(SelectItem::Expr { expr, alias: name });
            }
        }
    }
    // Output names of the outer query: ORDER BY, GROUP BY and HAVING may
    // name them rather than the subquery's columns.
    let names: Vec<String> = projection
        .iter()
        .filter_map(|i| match i {
            SelectItem::Expr { alias: Some(a), .. } => Some(a.name.clone()),
            _ => None,
        })
        .collect();
    let outer_aliases: Vec<String> = outer
        .projection
        .iter()
        .filter_map(|i| match i {
            SelectItem::Expr { alias: Some(a), .. } => Some(a.name.clone()),
            _ => None,
        })
        .collect();
    merged.projection = projection;
    if let Some(w) = &outer.selection {
        let mut w = w.clone();
        if !substitute(&mut w, alias, &lookup, &[]) {
            return Ok(None);
        }
        merged.selection = super::and_all(merged.selection.take().into_iter().chain([w]).collect());
    }
    merged.group_by = Vec::new();
    for g in &outer.group_by {
        let mut g = g.clone();
        if !substitute(&mut g, alias, &lookup, &outer_aliases) {
            return Ok(None);
        }
        merged.group_by.push(g);
    }
    if let Some(h) = &outer.having {
        let mut h = h.clone();
        if !substitute(&mut h, alias, &lookup, &outer_aliases) {
            return Ok(None);
        }
        merged.having = Some(h);
    }
    merged.order_by = Vec::new();
    for o in &outer.order_by {
        let mut o = o.clone();
        if !substitute(&mut o.expr, alias, &lookup, &names) {
            return Ok(None);
        }
        merged.order_by.push(o);
    }
    Ok(Some(merged))
}

/// `t.name` as an expression.
fn qualified(table: &str, name: &str, span: crate::sql::ast::Span) -> Expr {
    Expr {
        kind: ExprKind::QualifiedColumn {
            table: table.to_string(),
            column: name.to_string(),
        },
        span,
    }
}

/// True when every table of `from` is named by a name or an alias (a file
/// without an alias is named by the join from its path, which `*` here
/// could not spell).
fn named_inputs(from: Option<&FromItem>) -> bool {
    match from {
        None => true,
        Some(FromItem::Table { table, alias }) => {
            alias.is_some() || matches!(table, crate::sql::ast::TableRef::Named(_))
        }
        Some(FromItem::Subquery { alias, .. }) => alias.is_some(),
        Some(FromItem::Join(j)) => named_inputs(Some(&j.left)) && named_inputs(Some(&j.right)),
    }
}

/// True when `select` has a subquery among its expressions.
fn has_expression_subquery(select: &Select) -> bool {
    let mut found = false;
    for_each_expr(select, &mut |e| {
        walk(e, &mut |x| {
            found |= matches!(
                x.kind,
                ExprKind::Subquery(_)
                    | ExprKind::Exists(_)
                    | ExprKind::InSubquery { .. }
                    | ExprKind::Quantified { .. }
            );
        })
    });
    found
}
