//! The reference for queries over more than one table, by definition and
//! as naively as possible:
//! - a FROM tree is joined by nested loops over every pair of rows, the
//!   combined row being the left row's columns then the right row's (each
//!   qualified by its table's name or alias); an outer join pads the rows
//!   that paired with nothing by NULLs. `USING (k)` pairs rows whose `k`s
//!   are equal and not NULL, and shows one `k`, the first non-NULL of the
//!   two (the inputs' own `k`s stay reachable qualified);
//! - a subquery (`IN`, `EXISTS`, a scalar one) runs again for every row of
//!   the query around it, which it may read (correlation);
//! - `UNION`, `INTERSECT`, `EXCEPT` combine the two sides' rows as
//!   multisets (without `ALL`, duplicates removed); rows are equal when
//!   every value is, NULL equal to NULL;
//! - `WITH` evaluates each CTE once, in order, as a table of its rows.
//!
//! A join whose result passes [`MAX_JOIN_ROWS`] is not evaluated: the
//! error is of kind [`ErrorKind::Skip`](super::ErrorKind::Skip), and the test counts the case as skipped.

use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use katydid::Value;
use katydid::sql::ast::{
    BinaryOp, ExprKind, FromItem, Join, JoinConstraint, JoinKind, Literal, Query, SetExpr, SetOp,
    TableRef,
};

use super::{
    Catalog, Col, Ctx, Evaluator, OrderKey, Outer, RefError, RefResult, Relation, compare,
    execution, find_col, order_cmp, plan, run_select, skip, unsupported,
};

/// The most rows a join of the reference produces before it gives up.
pub const MAX_JOIN_ROWS: usize = 60_000;

/// The rows `from` reads, with their columns' qualified names.
pub fn from_item(
    catalog: &Catalog,
    from: &FromItem,
    outer: Option<&Outer>,
) -> Result<Relation, RefError> {
    match from {
        FromItem::Table { table, alias } => {
            let TableRef::Named(name) = table else {
                return Err(unsupported("the reference reads only named tables"));
            };
            let rel = catalog
                .get(&name.name)
                .ok_or_else(|| plan(format!("no table {:?}", name.name)))?;
            let qualifier = alias.as_ref().unwrap_or(name).name.clone();
            Ok(qualified(rel, &qualifier, &[]))
        }
        FromItem::Subquery {
            query,
            alias,
            columns,
            ..
        } => {
            let r = run_query(catalog, query, outer)?;
            let rel = relation_of(r);
            if columns.len() > rel.cols.len() {
                return Err(plan("more column names than the subquery has columns"));
            }
            let names: Vec<String> = columns.iter().map(|c| c.name.clone()).collect();
            match alias {
                Some(a) => Ok(qualified(&rel, &a.name, &names)),
                None => Ok(qualified(&rel, "", &names)),
            }
        }
        FromItem::Join(join) => nested_loop(catalog, join, outer),
    }
}

/// `rel` with every column qualified by `qualifier` (none when empty) and
/// its first columns renamed to `names`.
fn qualified(rel: &Relation, qualifier: &str, names: &[String]) -> Relation {
    let cols = rel
        .cols
        .iter()
        .enumerate()
        .map(|(i, c)| Col {
            qualifier: (!qualifier.is_empty()).then(|| qualifier.to_string()),
            name: names.get(i).unwrap_or(&c.name).clone(),
            dtype: c.dtype,
            bare: true,
            star: true,
        })
        .collect();
    Relation {
        cols,
        rows: Rc::clone(&rel.rows),
    }
}

/// A query's result as a table: its output names, no qualifier.
fn relation_of(r: RefResult) -> Relation {
    let cols = r
        .names
        .iter()
        .zip(&r.types)
        .map(|(n, t)| Col {
            qualifier: None,
            name: n.clone(),
            dtype: *t,
            bare: true,
            star: true,
        })
        .collect();
    Relation {
        cols,
        rows: Rc::new(r.rows),
    }
}

/// Where a column of a `USING` join's result takes its value.
enum Source {
    /// A column of the combined row.
    Col(usize),
    /// The first non-NULL of two columns of the combined row.
    Merged(usize, usize),
}

/// A join by definition: every pair of rows tested.
fn nested_loop(
    catalog: &Catalog,
    join: &Join,
    outer: Option<&Outer>,
) -> Result<Relation, RefError> {
    let left = from_item(catalog, &join.left, outer)?;
    let right = from_item(catalog, &join.right, outer)?;
    let width = left.cols.len();
    let cols: Vec<Col> = left.cols.iter().chain(&right.cols).cloned().collect();
    let using: Vec<(usize, usize)> = match &join.constraint {
        JoinConstraint::Using(names) => names
            .iter()
            .map(|id| {
                let side = |cols: &[Col]| {
                    find_col(cols, None, &id.name)?.ok_or_else(|| {
                        plan(format!("USING column {:?} missing on a side", id.name))
                    })
                };
                Ok((side(&left.cols)?, width + side(&right.cols)?))
            })
            .collect::<Result<_, RefError>>()?,
        _ => Vec::new(),
    };
    let on = match &join.constraint {
        JoinConstraint::On(e) => Some(e),
        _ => None,
    };
    if on.is_none() && using.is_empty() && !matches!(join.kind, JoinKind::Cross | JoinKind::Comma) {
        return Err(plan("a join without a condition"));
    }
    let ev = Evaluator {
        cols: &cols,
        outer,
        catalog,
    };
    let pairs = |row: &[Value]| -> Result<bool, RefError> {
        for &(l, r) in &using {
            let (a, b) = (&row[l], &row[r]);
            if a.is_null() || b.is_null() || !compare(a, b)?.is_eq() {
                return Ok(false);
            }
        }
        match on {
            Some(e) => ev.predicate(e, Ctx::Row(row)),
            None => Ok(true),
        }
    };
    let nulls = |n: usize| vec![Value::Null; n];
    let mut rows: Vec<Vec<Value>> = Vec::new();
    let mut right_paired = vec![false; right.rows.len()];
    let mut row: Vec<Value> = Vec::with_capacity(cols.len());
    for l in left.rows.iter() {
        let mut paired = false;
        for (i, r) in right.rows.iter().enumerate() {
            row.clear();
            row.extend_from_slice(l);
            row.extend_from_slice(r);
            if pairs(&row)? {
                paired = true;
                right_paired[i] = true;
                rows.push(row.clone());
                if rows.len() > MAX_JOIN_ROWS {
                    return Err(skip(format!("a join of more than {MAX_JOIN_ROWS} rows")));
                }
            }
        }
        if !paired && matches!(join.kind, JoinKind::Left | JoinKind::Full) {
            let mut padded = l.clone();
            padded.extend(nulls(right.cols.len()));
            rows.push(padded);
        }
    }
    if matches!(join.kind, JoinKind::Right | JoinKind::Full) {
        for (r, paired) in right.rows.iter().zip(&right_paired) {
            if !paired {
                let mut padded = nulls(width);
                padded.extend_from_slice(r);
                rows.push(padded);
            }
        }
    }
    if using.is_empty() {
        return Ok(Relation {
            cols,
            rows: Rc::new(rows),
        });
    }
    // USING: the merged column where the left one was (shown by `*`, found
    // by its bare name), the inputs' own columns qualified only.
    let mut layout: Vec<(Col, Source)> = Vec::new();
    for (i, c) in cols.iter().enumerate() {
        let hidden = Col {
            bare: false,
            star: false,
            ..c.clone()
        };
        if let Some(&(l, r)) = using.iter().find(|(l, _)| *l == i) {
            let merged = Col {
                qualifier: None,
                name: c.name.clone(),
                dtype: c.dtype.or(cols[r].dtype),
                bare: true,
                star: true,
            };
            layout.push((merged, Source::Merged(l, r)));
            layout.push((hidden, Source::Col(i)));
        } else if using.iter().any(|(_, r)| *r == i) {
            layout.push((hidden, Source::Col(i)));
        } else {
            layout.push((c.clone(), Source::Col(i)));
        }
    }
    let rows = rows
        .iter()
        .map(|row| {
            layout
                .iter()
                .map(|(_, s)| match *s {
                    Source::Col(i) => row[i].clone(),
                    Source::Merged(l, r) if row[l].is_null() => row[r].clone(),
                    Source::Merged(l, _) => row[l].clone(),
                })
                .collect()
        })
        .collect();
    Ok(Relation {
        cols: layout.into_iter().map(|(c, _)| c).collect(),
        rows: Rc::new(rows),
    })
}

/// Runs a whole query: its CTEs, then its SELECT or set operation with
/// the operation's ORDER BY, OFFSET and LIMIT.
pub fn run_query(
    catalog: &Catalog,
    query: &Query,
    outer: Option<&Outer>,
) -> Result<RefResult, RefError> {
    let local;
    let catalog = if query.ctes.is_empty() {
        catalog
    } else {
        let mut with = catalog.clone();
        for cte in &query.ctes {
            let r = run_query(&with, &cte.query, outer)?;
            with.tables
                .push((cte.name.name.to_ascii_lowercase(), relation_of(r)));
        }
        local = with;
        &local
    };
    if let SetExpr::Select(select) = &query.body {
        return run_select(catalog, select, outer);
    }
    let (mut rows, names, types) = set_rows(catalog, &query.body, outer)?;
    let mut order = Vec::new();
    for o in &query.order_by {
        let column = match &o.expr.kind {
            ExprKind::Literal(Literal::Int(n)) => usize::try_from(*n)
                .ok()
                .and_then(|n| n.checked_sub(1))
                .filter(|&i| i < names.len()),
            ExprKind::Column(n) => names.iter().position(|x| x.eq_ignore_ascii_case(n)),
            _ => None,
        }
        .ok_or_else(|| plan("ORDER BY of a set operation names no output column"))?;
        order.push(OrderKey {
            column: Some(column),
            desc: o.desc,
            nulls_first: o.nulls_first.unwrap_or(false),
        });
    }
    rows.sort_by(|a, b| {
        for k in &order {
            let c = k.column.expect("set");
            let o = order_cmp(&a[c], &b[c], k.desc, k.nulls_first);
            if o.is_ne() {
                return o;
            }
        }
        Ordering::Equal
    });
    let all_rows = rows.clone();
    let offset = query.offset.unwrap_or(0).min(rows.len() as u64) as usize;
    rows.drain(..offset);
    match query.limit {
        Some(n) if n >= 0 => rows.truncate(n as usize),
        Some(n) => {
            let keep = (n.unsigned_abs() as usize).min(rows.len());
            rows.drain(..rows.len() - keep);
        }
        None => {}
    }
    Ok(RefResult {
        rows,
        all_rows,
        order,
        grouped: true,
        limited: query.limit.is_some() || query.offset.is_some(),
        names,
        types,
    })
}

/// The rows of a set operation (or of one SELECT), with the output names
/// and types of its first SELECT.
#[allow(clippy::type_complexity)]
fn set_rows(
    catalog: &Catalog,
    body: &SetExpr,
    outer: Option<&Outer>,
) -> Result<(Vec<Vec<Value>>, Vec<String>, Vec<Option<katydid::DataType>>), RefError> {
    let (op, all, left, right) = match body {
        SetExpr::Select(s) => {
            let r = run_select(catalog, s, outer)?;
            return Ok((r.rows, r.names, r.types));
        }
        SetExpr::Operation {
            op,
            all,
            left,
            right,
        } => (*op, *all, left, right),
        SetExpr::Values { rows, .. } => return values_rows(catalog, rows, outer),
    };
    let (l, names, types) = set_rows(catalog, left, outer)?;
    let (r, right_names, _) = set_rows(catalog, right, outer)?;
    if names.len() != right_names.len() {
        return Err(plan(format!(
            "{} has {} columns on the left and {} on the right",
            op.keyword(),
            names.len(),
            right_names.len()
        )));
    }
    let distinct = |rows: Vec<Vec<Value>>| -> Vec<Vec<Value>> {
        let mut seen = HashSet::new();
        rows.into_iter()
            .filter(|r| seen.insert(r.clone()))
            .collect()
    };
    let mut counts: HashMap<Vec<Value>, usize> = HashMap::new();
    for row in &r {
        *counts.entry(row.clone()).or_default() += 1;
    }
    let rows = match (op, all) {
        (SetOp::Union, true) => l.into_iter().chain(r).collect(),
        (SetOp::Union, false) => distinct(l.into_iter().chain(r).collect()),
        (SetOp::Intersect, false) => distinct(l)
            .into_iter()
            .filter(|row| counts.contains_key(row))
            .collect(),
        (SetOp::Except, false) => distinct(l)
            .into_iter()
            .filter(|row| !counts.contains_key(row))
            .collect(),
        // With ALL, a row n times on the left and m on the right: min(n, m)
        // times for INTERSECT, n − m for EXCEPT.
        (SetOp::Intersect, true) => l
            .into_iter()
            .filter(|row| match counts.get_mut(row) {
                Some(n) if *n > 0 => {
                    *n -= 1;
                    true
                }
                _ => false,
            })
            .collect(),
        (SetOp::Except, true) => l
            .into_iter()
            .filter(|row| match counts.get_mut(row) {
                Some(n) if *n > 0 => {
                    *n -= 1;
                    false
                }
                _ => true,
            })
            .collect(),
    };
    Ok((rows, names, types))
}

/// The one column of a subquery's rows.
fn one_column(r: &RefResult, what: &str) -> Result<(), RefError> {
    if r.names.len() == 1 {
        Ok(())
    } else {
        Err(plan(format!("{what} returns {} columns", r.names.len())))
    }
}

/// `x [NOT] IN (query)` for the row `outer`: true when a row equals `x`,
/// else NULL when `x` is NULL or a row is, else false (over no rows,
/// false whatever `x` is).
pub fn in_subquery(
    catalog: &Catalog,
    x: &Value,
    query: &Query,
    negated: bool,
    outer: &Outer,
) -> Result<Value, RefError> {
    let r = run_query(catalog, query, Some(outer))?;
    one_column(&r, "an IN subquery")?;
    let mut found = Some(false);
    for row in &r.rows {
        let v = &row[0];
        if x.is_null() || v.is_null() {
            found = None;
        } else if compare(x, v)?.is_eq() {
            found = Some(true);
            break;
        }
    }
    Ok(match found {
        Some(b) => Value::Bool(b != negated),
        None => Value::Null,
    })
}

/// `x op ANY (query)` (`all` false) or `x op ALL (query)` for the row
/// `outer`: the OR (AND) of `x op v` over the column's values, in SQL's
/// three-valued logic; false (true) over no rows.
pub fn quantified(
    catalog: &Catalog,
    x: &Value,
    op: BinaryOp,
    all: bool,
    query: &Query,
    outer: &Outer,
) -> Result<Value, RefError> {
    let r = run_query(catalog, query, Some(outer))?;
    one_column(&r, "an ANY or ALL subquery")?;
    // The answer so far: Some(all) until a row decides it.
    let mut answer = Some(all);
    for row in &r.rows {
        let v = &row[0];
        let holds = if x.is_null() || v.is_null() {
            None
        } else {
            let o = compare(x, v)?;
            Some(match op {
                BinaryOp::Eq => o.is_eq(),
                BinaryOp::NotEq => o.is_ne(),
                BinaryOp::Lt => o.is_lt(),
                BinaryOp::LtEq => o.is_le(),
                BinaryOp::Gt => o.is_gt(),
                BinaryOp::GtEq => o.is_ge(),
                other => return Err(plan(format!("{other:?} is not a comparison"))),
            })
        };
        match holds {
            // A row that decides: ANY's true, ALL's false.
            Some(h) if h != all => return Ok(Value::Bool(h)),
            Some(_) => {}
            None => answer = None,
        }
    }
    Ok(answer.map_or(Value::Null, Value::Bool))
}

/// `EXISTS (query)` for the row `outer`.
pub fn exists(catalog: &Catalog, query: &Query, outer: &Outer) -> Result<Value, RefError> {
    let r = run_query(catalog, query, Some(outer))?;
    Ok(Value::Bool(!r.rows.is_empty()))
}

/// `(query)` as a value for the row `outer`: its one value, NULL without a
/// row, an error with more than one.
pub fn scalar(catalog: &Catalog, query: &Query, outer: &Outer) -> Result<Value, RefError> {
    let r = run_query(catalog, query, Some(outer))?;
    one_column(&r, "a scalar subquery")?;
    match r.rows.as_slice() {
        [] => Ok(Value::Null),
        [row] => Ok(row[0].clone()),
        _ => Err(execution(format!(
            "a scalar subquery returned {} rows",
            r.rows.len()
        ))),
    }
}

/// A `VALUES` list's rows: each row a SELECT without FROM of its
/// expressions, named `col0`, `col1`, …; an integer column with a float in
/// some row is a float column, as UNION ALL makes it.
#[allow(clippy::type_complexity)]
fn values_rows(
    catalog: &Catalog,
    rows: &[Vec<katydid::sql::ast::Expr>],
    outer: Option<&Outer>,
) -> Result<(Vec<Vec<Value>>, Vec<String>, Vec<Option<katydid::DataType>>), RefError> {
    let mut out = Vec::new();
    let mut types: Vec<Option<katydid::DataType>> = Vec::new();
    let names: Vec<String> = (0..rows[0].len()).map(|n| format!("col{n}")).collect();
    for row in rows {
        let projection = row
            .iter()
            .zip(&names)
            .map(|(e, name)| katydid::sql::ast::SelectItem::Expr {
                expr: e.clone(),
                alias: Some(katydid::sql::ast::Ident {
                    name: name.clone(),
                    span: e.span,
                }),
            })
            .collect();
        let mut select = katydid::sql::ast::Select::over(
            projection,
            katydid::sql::ast::FromItem::Table {
                table: katydid::sql::ast::TableRef::Named(katydid::sql::ast::Ident {
                    name: String::new(),
                    span: row[0].span,
                }),
                alias: None,
            },
            None,
            row[0].span,
        );
        select.from = None;
        let r = run_select(catalog, &select, outer)?;
        if types.is_empty() {
            types = r.types.clone();
        }
        for (t, u) in types.iter_mut().zip(&r.types) {
            if t.is_none()
                || (*t == Some(katydid::DataType::Int) && *u == Some(katydid::DataType::Float))
            {
                *t = *u;
            }
        }
        out.extend(r.rows);
    }
    for (c, t) in types.iter().enumerate() {
        if *t == Some(katydid::DataType::Float) {
            for row in &mut out {
                if let Value::Int(v) = row[c] {
                    row[c] = Value::Float(v as f64);
                }
            }
        }
    }
    Ok((out, names, types))
}
