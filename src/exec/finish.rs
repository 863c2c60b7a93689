//! The last steps of a query once partitions are merged: aggregate results
//! and HAVING per group, ORDER BY, OFFSET and LIMIT over result rows.

use std::cmp::Ordering;

use crate::error::Result;
use crate::plan::eval::{self, RowSource};
use crate::plan::{Aggregate, QueryPlan};
use crate::types::Value;

use super::aggregate::Partial;
use super::aggregate::accumulator::{Gids, Input, new_accumulator};
use super::vector::order_values;

struct GroupRow<'a> {
    keys: &'a [Value],
    aggs: &'a [Value],
}

impl RowSource for GroupRow<'_> {
    fn column(&self, _: usize) -> Value {
        Value::Null
    }
    fn group_key(&self, index: usize) -> Value {
        self.keys[index].clone()
    }
    fn agg_result(&self, index: usize) -> Value {
        self.aggs[index].clone()
    }
}

/// The output rows (every output, hidden sort keys included) of the groups
/// in `chunks` that pass HAVING. A global aggregate over no rows yields one
/// row of empty aggregates.
///
/// # Errors
/// Aggregate results that fail (integer sum overflow), HAVING and output
/// errors of any group.
pub fn aggregate_rows(
    plan: &QueryPlan,
    agg: &Aggregate,
    mut chunks: Vec<Partial<'_>>,
) -> Result<Vec<Vec<Value>>> {
    if agg.keys.is_empty() && chunks.iter().all(|c| c.groups == 0) {
        let mut accs = Vec::with_capacity(agg.aggs.len());
        for call in &agg.aggs {
            let mut acc = new_accumulator(call)?;
            acc.update(Input::Scalar(&Value::Null), Gids::Single(0), 1)?;
            accs.push(acc);
        }
        chunks = vec![Partial {
            groups: 1,
            keys: Vec::new(),
            accs,
        }];
    }
    let total: usize = chunks.iter().map(|c| c.groups).sum();
    let mut rows = Vec::with_capacity(total);
    let naggs = agg.aggs.len();
    for chunk in chunks {
        let finished: Vec<Vec<Value>> = chunk
            .accs
            .into_iter()
            .map(|a| a.finish())
            .collect::<Result<_>>()?;
        let mut keys: Vec<Value> = Vec::with_capacity(chunk.keys.len());
        let mut aggs: Vec<Value> = Vec::with_capacity(naggs);
        for g in 0..chunk.groups {
            keys.clear();
            keys.extend(chunk.keys.iter().map(|k| k.value(g)));
            aggs.clear();
            aggs.extend(finished.iter().map(|f| f[g].clone()));
            let src = GroupRow {
                keys: &keys,
                aggs: &aggs,
            };
            if let Some(h) = &plan.having
                && !matches!(eval::eval(h, &src)?, Value::Bool(true))
            {
                continue;
            }
            let row = plan
                .outputs
                .iter()
                .map(|e| eval::eval(e, &src))
                .collect::<Result<Vec<Value>>>()?;
            rows.push(row);
        }
    }
    Ok(rows)
}

/// Sorts (stably: equal keys keep their order), applies OFFSET and LIMIT
/// (a negative LIMIT keeps the last rows) and drops hidden sort columns.
///
/// When the limit keeps a small part of the rows, only that part is sorted
/// after a linear-time selection.
pub fn order_and_window(plan: &QueryPlan, rows: &mut Vec<Vec<Value>>) {
    let n = rows.len();
    let cmp = |a: &(usize, &Vec<Value>), b: &(usize, &Vec<Value>)| -> Ordering {
        for k in &plan.order_by {
            let o = order_values(&a.1[k.column], &b.1[k.column], k.desc, k.nulls_first);
            if o != Ordering::Equal {
                return o;
            }
        }
        a.0.cmp(&b.0)
    };
    let window = window(plan, n);
    let mut order: Vec<usize> = (0..n).collect();
    if !plan.order_by.is_empty() {
        let mut keyed: Vec<(usize, &Vec<Value>)> = rows.iter().enumerate().collect();
        let end = window.end;
        if end < n / 2 && end > 0 {
            keyed.select_nth_unstable_by(end - 1, cmp);
            keyed.truncate(end);
        }
        keyed.sort_unstable_by(cmp);
        order = keyed.into_iter().map(|(i, _)| i).collect();
    }
    let kept = &order[window.start.min(order.len())..window.end.min(order.len())];
    if plan.order_by.is_empty() && kept.len() == n {
        for r in rows.iter_mut() {
            r.truncate(plan.visible);
        }
        return;
    }
    let mut taken: Vec<Option<Vec<Value>>> = std::mem::take(rows).into_iter().map(Some).collect();
    *rows = kept
        .iter()
        .filter_map(|&i| taken[i].take())
        .map(|mut r| {
            r.truncate(plan.visible);
            r
        })
        .collect();
}

/// The positions kept of `n` ordered rows.
pub fn window(plan: &QueryPlan, n: usize) -> std::ops::Range<usize> {
    let offset = usize::try_from(plan.offset).unwrap_or(usize::MAX);
    match plan.limit {
        Some(l) if l < 0 => {
            n.saturating_sub(usize::try_from(l.unsigned_abs()).unwrap_or(usize::MAX))..n
        }
        Some(l) => {
            let start = offset.min(n);
            start
                ..start
                    .saturating_add(usize::try_from(l).unwrap_or(usize::MAX))
                    .min(n)
        }
        None => offset.min(n)..n,
    }
}
