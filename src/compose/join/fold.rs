//! Aggregates without GROUP BY folded straight from a join: the joined
//! rows are never gathered into a table.
//!
//! `SELECT count(*), sum(v1), sum(v2) FROM x JOIN small USING (id1)` (the
//! db-benchmark join questions) asks for one row. Its aggregates are
//! folded as the join finds its rows: over a star
//! ([`super::dimension::fold_partitions`]) each fact partition's rows are
//! grouped by the key's codes and the groups of codes without a partner
//! dropped, a dimension's column summed once per code (its value times the
//! code's rows: eager aggregation below a join on a unique key, Yan and
//! Larson, "Eager Aggregation and Lazy Aggregation", VLDB 1995); after a
//! hash join ([`fold_rows`]) chunk by chunk of the joined rows, each chunk's
//! values gathered into arrays that stay in cache. Both fold into the
//! executor's own accumulators (`exec::aggregate::accumulator`), so sums
//! round, widen and turn NULL as the pipeline's do.
//!
//! The SELECT then runs on a table of one row holding each aggregate's
//! value, every call replaced by `min` of its column (so HAVING, ORDER BY,
//! LIMIT and the expressions over the aggregates keep their meaning, and
//! the output names their text).
//!
//! Taken when the SELECT has no GROUP BY, DISTINCT, window or filter after
//! the joins, reads input columns only inside `count`, `sum`, `avg`,
//! `min` and `max` of a bare column (or `count(*)`), without DISTINCT or
//! FILTER; otherwise the joined rows are gathered as before.

use rayon::prelude::*;

use super::{Above, ColRef, Input, Joined, Scan, column_of, named_table};
use crate::compose::{Composer, Relation, Scope, materialize};
use crate::error::{Error, Result};
use crate::exec::aggregate::accumulator::{Accumulator, Gids, new_accumulator};
use crate::plan::{AggCall, AggFunc};
use crate::sql::ast::{Expr, ExprKind, Ident, OrderByItem, Select, SelectItem};
use crate::types::{DataType, Value};

/// What an aggregate call reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Arg {
    /// The rows (`count(*)`).
    Rows,
    /// An input's column.
    Column(ColRef),
}

/// One distinct aggregate call of the SELECT.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Call {
    /// `CountStar`, `Count`, `Sum`, `Avg`, `Min` or `Max`.
    pub func: AggFunc,
    pub arg: Arg,
    /// The argument's type (`Int` for `count(*)`).
    pub dtype: DataType,
}

impl Call {
    /// The type of the call's value.
    pub(super) fn result_type(&self) -> DataType {
        match self.func {
            AggFunc::CountStar | AggFunc::Count => DataType::Int,
            AggFunc::Avg => DataType::Float,
            _ => self.dtype,
        }
    }

    /// The executor's description of the call, its argument column
    /// `index` of the table it is evaluated on, named `name`.
    pub(super) fn agg_call(&self, index: usize, name: &str) -> AggCall {
        AggCall {
            func: self.func,
            arg: match self.arg {
                Arg::Rows => None,
                Arg::Column(_) => Some(crate::plan::Expr::Column {
                    index,
                    name: name.to_string(),
                    dtype: self.dtype,
                }),
            },
            arg2: None,
            separator: None,
            dtype: self.result_type(),
        }
    }
}

/// The SELECT as a fold: its distinct calls, and its clauses with call `i`
/// replaced by `min(__fold_i)`.
pub(super) struct Plan {
    pub calls: Vec<Call>,
    items: Vec<(Expr, Option<Ident>)>,
    having: Option<Expr>,
    order_by: Vec<OrderByItem>,
}

/// The column of the one-row table holding call `i`'s value.
fn value_column(i: usize) -> String {
    format!("__fold_{i}")
}

/// The fold of `above` over `inputs`, or `None` when the SELECT is not one
/// (see the module docs). `filtered`: conditions remain to be applied to
/// the joined rows.
pub(super) fn plan(above: &Above<'_>, inputs: &[Input], filtered: bool) -> Option<Plan> {
    let select = above.select;
    if filtered
        || select.distinct
        || !select.group_by.is_empty()
        || select.group_by_all
        || select.qualify.is_some()
        || !select.windows.is_empty()
    {
        return None;
    }
    let mut calls = Vec::new();
    let mut replace = |e: &Expr, order: bool| -> Option<Expr> {
        let mut e = e.clone();
        replace_calls(&mut e, above, inputs, &mut calls, order).then_some(e)
    };
    let items = above
        .items
        .iter()
        .map(|(e, alias)| Some((replace(e, false)?, alias.clone())))
        .collect::<Option<Vec<_>>>()?;
    let having = match &select.having {
        Some(h) => Some(replace(h, false)?),
        None => None,
    };
    let order_by = select
        .order_by
        .iter()
        .map(|o| {
            Some(OrderByItem {
                expr: replace(&o.expr, true)?,
                ..o.clone()
            })
        })
        .collect::<Option<Vec<_>>>()?;
    if calls.is_empty() {
        return None;
    }
    Some(Plan {
        calls,
        items,
        having,
        order_by,
    })
}

/// Replaces the aggregate calls in `e` by `min(__fold_i)`, adding them to
/// `calls`; false when `e` holds something a fold cannot answer (another
/// aggregate, a window, a subquery, an input column outside a call). In
/// ORDER BY (`order`), a bare name of an output stands.
fn replace_calls(
    e: &mut Expr,
    above: &Above<'_>,
    inputs: &[Input],
    calls: &mut Vec<Call>,
    order: bool,
) -> bool {
    match &e.kind {
        ExprKind::Function { name, .. } if crate::plan::AggFunc::is_aggregate_name(name) => {
            let Some(call) = fold_call(e, above, inputs) else {
                return false;
            };
            let i = calls.iter().position(|c| *c == call).unwrap_or_else(|| {
                calls.push(call);
                calls.len() - 1
            });
            let span = e.span;
            e.kind = ExprKind::Function {
                name: "min".into(),
                args: vec![Expr {
                    kind: ExprKind::Column(value_column(i)),
                    span,
                }],
                star: false,
                distinct: false,
                filter: None,
                order_by: Vec::new(),
                within_group: false,
            };
            true
        }
        ExprKind::Column(n) if order && above.outputs.contains(&n.to_ascii_lowercase()) => true,
        ExprKind::Column(_)
        | ExprKind::QualifiedColumn { .. }
        | ExprKind::Window { .. }
        | ExprKind::Subquery(_)
        | ExprKind::Exists(_)
        | ExprKind::InSubquery { .. } => false,
        _ => e
            .children_mut()
            .into_iter()
            .all(|c| replace_calls(c, above, inputs, calls, order)),
    }
}

/// The call `e` (an aggregate function) as a [`Call`], when a fold takes
/// it.
fn fold_call(e: &Expr, above: &Above<'_>, inputs: &[Input]) -> Option<Call> {
    let ExprKind::Function {
        name,
        args,
        star,
        distinct,
        filter,
        order_by,
        ..
    } = &e.kind
    else {
        return None;
    };
    if *distinct || filter.is_some() || !order_by.is_empty() {
        return None;
    }
    let func = match name.to_ascii_lowercase().as_str() {
        "count" if *star && args.is_empty() => {
            return Some(Call {
                func: AggFunc::CountStar,
                arg: Arg::Rows,
                dtype: DataType::Int,
            });
        }
        "count" => AggFunc::Count,
        "sum" => AggFunc::Sum,
        "avg" | "mean" => AggFunc::Avg,
        "min" => AggFunc::Min,
        "max" => AggFunc::Max,
        _ => return None,
    };
    let [arg] = &args[..] else {
        return None;
    };
    if *star {
        return None;
    }
    let col = above.r.resolve(arg).ok()??;
    let dtype = inputs[col.0].table.fields[col.1].dtype;
    let fits = match func {
        AggFunc::Sum | AggFunc::Avg => matches!(dtype, DataType::Int | DataType::Float),
        AggFunc::Min | AggFunc::Max => matches!(
            dtype,
            DataType::Int
                | DataType::Float
                | DataType::Str
                | DataType::Timestamp
                | DataType::Date
                | DataType::Interval
        ),
        _ => dtype != DataType::Null,
    };
    fits.then_some(Call {
        func,
        arg: Arg::Column(col),
        dtype,
    })
}

/// Accumulators of `calls` for one group; `count(*)` included.
pub(super) fn accumulators(calls: &[Call]) -> Result<Vec<Box<dyn Accumulator>>> {
    calls
        .iter()
        .map(|call| new_accumulator(&call.agg_call(0, "")))
        .collect()
}

/// Folds `other` (one group each) into `into` (one group each).
pub(super) fn merge_into(
    into: &mut [Box<dyn Accumulator>],
    other: Vec<Box<dyn Accumulator>>,
) -> Result<()> {
    for (a, b) in into.iter_mut().zip(other) {
        a.merge(b, &[0], 1)?;
    }
    Ok(())
}

/// Each accumulator's value of group 0.
pub(super) fn values(mut accs: Vec<Box<dyn Accumulator>>) -> Result<Vec<Value>> {
    accs.iter_mut()
        .map(|a| {
            a.check()?;
            a.finish();
            Ok(a.value(0))
        })
        .collect()
}

/// Rows of the joined rows folded at a time: their gathered values stay in
/// the core's cache.
const FOLD_CHUNK: usize = 16 * 1024;

/// The calls folded over `joined`, in parallel chunks: each chunk's
/// argument values gathered through its row ids.
///
/// # Errors
/// [`Error::Cancelled`] through `check`; an accumulator's errors.
pub(super) fn fold_rows(
    calls: &[Call],
    scans: &[Scan],
    joined: &Joined,
    check: &(dyn Fn() -> Result<()> + Sync),
) -> Result<Vec<Value>> {
    let ids_of = |(i, _): ColRef| -> Result<&[u32]> {
        joined
            .inputs
            .iter()
            .position(|&x| x == i)
            .map(|k| joined.ids[k].as_slice())
            .ok_or_else(|| Error::Internal("a folded column of no joined input".into()))
    };
    let chunks = joined.rows.div_ceil(FOLD_CHUNK);
    let parts: Vec<Vec<Box<dyn Accumulator>>> = (0..chunks)
        .into_par_iter()
        .map(|chunk| {
            check()?;
            let lo = chunk * FOLD_CHUNK;
            let hi = (lo + FOLD_CHUNK).min(joined.rows);
            let mut accs = accumulators(calls)?;
            for (call, acc) in calls.iter().zip(&mut accs) {
                match call.arg {
                    Arg::Rows => acc.update(
                        crate::exec::aggregate::accumulator::Input::Rows,
                        Gids::Single(hi - lo),
                        1,
                    )?,
                    Arg::Column(col) => {
                        let values = column_of(scans, col).take_or_null(&ids_of(col)?[lo..hi]);
                        acc.update(
                            crate::exec::aggregate::accumulator::Input::Array(&values),
                            Gids::Single(hi - lo),
                            1,
                        )?;
                    }
                }
            }
            Ok(accs)
        })
        .collect::<Result<_>>()?;
    let mut total = accumulators(calls)?;
    for part in parts {
        merge_into(&mut total, part)?;
    }
    values(total)
}

/// Runs the SELECT of `plan` on the calls' `values`: a table of one row,
/// each call's value in its column. `None` when a value has no column type
/// (an integer sum past i64), which the caller then computes from the
/// joined rows.
///
/// # Errors
/// The SELECT's plan and execution errors.
pub(super) fn select_values(
    c: &Composer<'_>,
    scope: &mut Scope<'_>,
    above: &Above<'_>,
    plan: &Plan,
    values: &[Value],
    scanned: usize,
) -> Result<Option<Relation>> {
    if values.iter().any(|v| matches!(v, Value::HugeInt(_))) {
        return Ok(None);
    }
    let names: Vec<String> = (0..plan.calls.len()).map(value_column).collect();
    let types: Vec<DataType> = plan.calls.iter().map(Call::result_type).collect();
    let arrays: Vec<_> = values
        .iter()
        .zip(&types)
        .map(|(v, &t)| crate::exec::vector::Array::from_values(t, std::slice::from_ref(v)))
        .collect();
    let name = c.internal_name("fold");
    let table = materialize::table_from_arrays(&name, &names, &types, &arrays, 1, 1);
    scope.add(&name, table);
    let projection = plan
        .items
        .iter()
        .map(|(expr, alias)| SelectItem::Expr {
            expr: expr.clone(),
            alias: alias.clone(),
        })
        .collect();
    let select = above.select;
    let span = above.span;
    let final_select = Select {
        having: plan.having.clone(),
        order_by: plan.order_by.clone(),
        limit: select.limit,
        offset: select.offset,
        ..Select::over(projection, named_table(name, span), None, select.span)
    };
    let mut rel = c.run_simple(&final_select, scope, None)?;
    rel.rows_scanned += scanned;
    Ok(Some(rel))
}
