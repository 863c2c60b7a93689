//! The last steps of a query once partitions are merged: aggregate results
//! and HAVING per group, ORDER BY, OFFSET and LIMIT over result rows.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use rayon::prelude::*;

use crate::error::Result;
use crate::plan::eval::{self, RowSource};
use crate::plan::{Aggregate, BinaryOp, Expr, QueryPlan, SortKey};
use crate::types::{DataType, Value};

use super::aggregate::Partial;
use super::aggregate::accumulator::{Accumulator, Gids, Input, new_accumulator};
use super::vector::{Array, Data, order_values};

/// One group of a merged partial, read lazily: a key becomes a [`Value`]
/// only when an expression asks for it.
struct GroupRow<'r> {
    keys: &'r [Array<'r>],
    aggs: &'r [Box<dyn Accumulator>],
    g: usize,
}

impl RowSource for GroupRow<'_> {
    fn column(&self, _: usize) -> Value {
        Value::Null
    }
    fn group_key(&self, index: usize) -> Value {
        self.keys[index].value(self.g)
    }
    fn agg_result(&self, index: usize) -> Value {
        self.aggs[index].value(self.g)
    }
}

/// A group in the running top-k of [`aggregate_rows`]: its sort keys and
/// position, ordered by the ORDER BY (then by position, so the order is
/// total and the merge order breaks ties).
struct Candidate<'p> {
    keys: Vec<Value>,
    /// Merge order: the chunk in the high 32 bits, the group in the low.
    at: u64,
    order: &'p [SortKey],
}

/// Sort keys `a` at position `i` against `b` at position `j`.
fn cmp_keys(order: &[SortKey], (a, i): (&[Value], u64), (b, j): (&[Value], u64)) -> Ordering {
    for (s, (x, y)) in order.iter().zip(a.iter().zip(b)) {
        let o = order_values(x, y, s.desc, s.nulls_first);
        if o != Ordering::Equal {
            return o;
        }
    }
    i.cmp(&j)
}

impl Ord for Candidate<'_> {
    fn cmp(&self, other: &Self) -> Ordering {
        cmp_keys(self.order, (&self.keys, self.at), (&other.keys, other.at))
    }
}

impl PartialOrd for Candidate<'_> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Candidate<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Candidate<'_> {}

/// True when evaluating `e` over group results cannot fail: it only reads
/// keys, aggregates and constants through operators without errors, or
/// integer `+ - *` whose range over every group cannot overflow.
///
/// `bounds[i]` is the range of integer group key `i` over all groups
/// (`None` for other keys, or a key without non-NULL values).
fn infallible(e: &Expr, bounds: &[Option<(i64, i64)>]) -> bool {
    match e {
        Expr::GroupKey { .. } | Expr::AggResult { .. } | Expr::Literal { .. } => true,
        Expr::Binary {
            op, left, right, ..
        } => {
            if op.is_arithmetic() {
                int_range(e, bounds).is_some()
            } else {
                infallible(left, bounds) && infallible(right, bounds)
            }
        }
        Expr::Not(x) | Expr::IsNull { expr: x, .. } => infallible(x, bounds),
        Expr::Case {
            branches,
            else_result,
            ..
        } => {
            branches
                .iter()
                .all(|(w, t)| infallible(w, bounds) && infallible(t, bounds))
                && infallible(else_result, bounds)
        }
        _ => false,
    }
}

/// The range of integer expression `e` over every group, when it is built
/// from integer group keys (ranges in `bounds`) and integer literals with
/// `+`, `-` and `*` and no step can overflow. Each operator is monotone in
/// each operand, so the extremes are among the endpoints' combinations.
fn int_range(e: &Expr, bounds: &[Option<(i64, i64)>]) -> Option<(i64, i64)> {
    match e {
        Expr::GroupKey {
            index,
            dtype: DataType::Int,
        } => bounds.get(*index).copied().flatten(),
        Expr::Literal { .. } => match e.as_literal()? {
            Value::Int(k) => Some((*k, *k)),
            _ => None,
        },
        Expr::Binary {
            op, left, right, ..
        } => {
            let f: fn(i64, i64) -> Option<i64> = match op {
                BinaryOp::Plus => i64::checked_add,
                BinaryOp::Minus => i64::checked_sub,
                BinaryOp::Multiply => i64::checked_mul,
                _ => return None,
            };
            let (a, b) = (int_range(left, bounds)?, int_range(right, bounds)?);
            let ends = [f(a.0, b.0)?, f(a.0, b.1)?, f(a.1, b.0)?, f(a.1, b.1)?];
            Some((*ends.iter().min()?, *ends.iter().max()?))
        }
        _ => None,
    }
}

/// The range of each integer group key over the non-NULL values of every
/// partial: `None` for other keys and for keys no output does arithmetic
/// on (computing it would be wasted).
fn key_bounds(plan: &QueryPlan, parts: &[Partial<'_>], n_keys: usize) -> Vec<Option<(i64, i64)>> {
    (0..n_keys)
        .map(|i| {
            let used = plan.outputs.iter().any(|e| {
                e.any(
                    &|n| matches!(n, Expr::GroupKey { index, dtype: DataType::Int } if *index == i),
                )
            });
            if !used {
                return None;
            }
            let mut range: Option<(i64, i64)> = None;
            for part in parts {
                let a = part.keys.get(i)?;
                let (DataType::Int, Data::Int(v)) = (a.dtype, &a.data) else {
                    return None;
                };
                for (j, &x) in v.iter().enumerate().take(part.groups) {
                    if a.is_valid(j) {
                        range = Some(range.map_or((x, x), |(lo, hi)| (lo.min(x), hi.max(x))));
                    }
                }
            }
            range
        })
        .collect()
}

/// The result rows of the groups in `chunks` that pass HAVING, ordered,
/// windowed by OFFSET/LIMIT and cut to the visible outputs. A global
/// aggregate over no rows yields one row of empty aggregates.
///
/// # Design
/// Every aggregate is checked for every group (an overflow in any group
/// fails the query), HAVING runs on every group, keys and aggregate results
/// turn into values only when read. With outputs that cannot fail, only
/// the groups in the result are evaluated: without ORDER BY, those in the
/// OFFSET/LIMIT window; under ORDER BY … LIMIT, the sort keys are evaluated
/// for every group, the best `offset + limit` groups are picked with a
/// heap of the best `offset + limit` so far and only they get their other
/// outputs.
///
/// With `preview` (`Some(n)`), only the first `n` rows of the result are
/// built, and the length of the whole result is returned beside them
/// (the REPL shows 40 rows of a 200,000-group result and its count).
///
/// # Errors
/// Aggregate results that fail (integer sum overflow), HAVING and output
/// errors of any group.
pub fn aggregate_rows(
    plan: &QueryPlan,
    agg: &Aggregate,
    mut chunks: Vec<Partial<'_>>,
    preview: Option<usize>,
) -> Result<(Vec<Vec<Value>>, usize)> {
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
            repeats: false,
        }];
    }
    // Every aggregate of every group must have a value, once what its
    // merge left is done.
    finish_states(&mut chunks)?;
    let parts = chunks;
    let row = |c: usize, g: usize| GroupRow {
        keys: &parts[c].keys,
        aggs: &parts[c].accs,
        g,
    };
    // Groups that pass HAVING, in merge order; chunks in parallel (the
    // first error in merge order is the one reported).
    let ids: Vec<(u32, u32)> = first_error(
        parts
            .par_iter()
            .enumerate()
            .map(|(c, part)| {
                let mut kept = Vec::new();
                for g in 0..part.groups {
                    if let Some(h) = &plan.having
                        && !matches!(eval::eval(h, &row(c, g))?, Value::Bool(true))
                    {
                        continue;
                    }
                    kept.push((c as u32, g as u32));
                }
                Ok(kept)
            })
            .collect(),
    )?
    .into_iter()
    .flatten()
    .collect();
    let outputs = |c: u32, g: u32| -> Result<Vec<Value>> {
        let src = row(c as usize, g as usize);
        plan.outputs.iter().map(|e| eval::eval(e, &src)).collect()
    };
    let visible = |r: Result<Vec<Value>>| {
        r.map(|mut r| {
            r.truncate(plan.visible);
            r
        })
    };
    let k = match plan.limit {
        Some(l) if l >= 0 => usize::try_from(l)
            .unwrap_or(usize::MAX)
            .saturating_add(usize::try_from(plan.offset).unwrap_or(usize::MAX)),
        _ => usize::MAX,
    };
    // The whole result's length, and the rows of it to build.
    let total = window(plan, ids.len()).len();
    let shown = preview.map_or(total, |n| n.min(total));
    // A preview of an ORDER BY needs only its first rows' groups: the best
    // `offset + shown` (not under a negative LIMIT, whose rows are the
    // last ones).
    let k = match preview {
        Some(_) if plan.limit.is_none_or(|l| l >= 0) => k.min(
            usize::try_from(plan.offset)
                .unwrap_or(usize::MAX)
                .saturating_add(shown),
        ),
        _ => k,
    };
    let bounds = key_bounds(plan, &parts, agg.keys.len());
    let infallible_outputs = plan.outputs.iter().all(|e| infallible(e, &bounds));
    if !plan.order_by.is_empty() && k < ids.len() / 2 && infallible_outputs {
        // The best k of each stretch of groups in parallel, then the best
        // k of those (perf: with 790k groups, the single-threaded pass
        // over every group's sort keys was a quarter of
        // `u % 2000000 … ORDER BY s DESC LIMIT 10`).
        let stretch = ids.len().div_ceil(rayon::current_num_threads() * 4).max(1);
        let mut best: Vec<Candidate<'_>> = first_error(
            ids.par_chunks(stretch)
                .map(|ids| best_groups(plan, ids, k, &row))
                .collect(),
        )?
        .into_iter()
        .flatten()
        .collect();
        best.sort_unstable();
        best.truncate(k);
        let w = window(plan, best.len());
        let rows = best[w]
            .iter()
            .map(|c| visible(outputs((c.at >> 32) as u32, c.at as u32)))
            .collect::<Result<_>>()?;
        return Ok((rows, total));
    }
    if plan.order_by.is_empty() && infallible_outputs {
        // Merge order is the result order: only the window is evaluated,
        // in parallel (a GROUP BY without LIMIT returns every group).
        let w = window(plan, ids.len());
        let w = w.start..w.start + shown;
        return Ok((result_rows(plan, &parts, &ids[w], plan.visible)?, total));
    }
    let mut rows = if infallible_outputs {
        result_rows(plan, &parts, &ids, plan.outputs.len())?
    } else {
        first_error(ids.par_iter().map(|&(c, g)| outputs(c, g)).collect())?
    };
    order_and_window(plan, &mut rows);
    rows.truncate(shown);
    Ok((rows, total))
}

/// Whether [`group_columns`] can finish `plan`: an aggregate with group
/// keys, no HAVING, ORDER BY, LIMIT or OFFSET, whose visible outputs are
/// each a group key or an aggregate's result.
pub fn groups_as_columns(plan: &QueryPlan) -> bool {
    plan.aggregate.as_ref().is_some_and(|a| !a.keys.is_empty())
        && plan.having.is_none()
        && plan.order_by.is_empty()
        && plan.limit.is_none()
        && plan.offset == 0
        && plan.outputs[..plan.visible]
            .iter()
            .all(|e| matches!(e, Expr::GroupKey { .. } | Expr::AggResult { .. }))
}

/// Every merged group's visible outputs as columns, in merge order (the
/// order [`aggregate_rows`] gives them), for a plan
/// [`groups_as_columns`] accepts: key columns are the chunks' key arrays
/// joined (a table-wide dictionary's codes kept as codes), aggregate
/// results one column each. Returns the columns and the number of groups.
///
/// # Errors
/// A final value that cannot be represented ([`Accumulator::check`]).
pub fn group_columns(
    plan: &QueryPlan,
    agg: &Aggregate,
    mut chunks: Vec<Partial<'_>>,
) -> Result<(Vec<Array<'static>>, usize)> {
    finish_states(&mut chunks)?;
    let groups = chunks.iter().map(|c| c.groups).sum();
    let types = super::output_types(plan);
    let columns = plan.outputs[..plan.visible]
        .par_iter()
        .zip(types)
        .map(|(e, dtype)| match e {
            Expr::GroupKey { index, .. } => {
                let pieces = chunks
                    .iter()
                    .map(|c| shared_codes(plan, &agg.keys[*index], &c.keys[*index]))
                    .collect();
                Array::concat(dtype, pieces)
            }
            Expr::AggResult { index, .. } => {
                let pieces: Vec<Array<'static>> = chunks
                    .par_iter()
                    .map(|c| {
                        let acc = &c.accs[*index];
                        let values: Vec<Value> = (0..c.groups).map(|g| acc.value(g)).collect();
                        Array::from_result_values(dtype, &values)
                    })
                    .collect();
                // A sum past i64 in one chunk made its piece float: so
                // are the others.
                let float = pieces.iter().any(|p| p.dtype != dtype);
                let pieces = pieces
                    .into_iter()
                    .map(|p| match (&p.data, float) {
                        (Data::Int(v), true) => Array {
                            dtype: DataType::Float,
                            data: Data::Float(v.iter().map(|&x| x as f64).collect()),
                            validity: p.validity,
                        },
                        _ => p,
                    })
                    .collect();
                Array::concat(if float { DataType::Float } else { dtype }, pieces)
            }
            _ => Array::from_values(dtype, &[]),
        })
        .collect();
    Ok((columns, groups))
}

/// A merged key column made `'static`: codes of the table-wide dictionary
/// of the key's column stay codes, over the dictionary held
/// ([`super::vector::Strs::Shared`]); other strings are copied.
fn shared_codes(plan: &QueryPlan, key: &Expr, a: &Array<'_>) -> Array<'static> {
    use super::vector::Strs;
    if let (Expr::Column { index, .. }, Data::Str(Strs::Coded { entries, codes })) = (key, &a.data)
        && let Some(crate::store::ColumnData::Dict { dict, .. }) = plan
            .table
            .partitions
            .first()
            .map(|p| &p.columns[*index].data)
        && entries
            .dictionary()
            .is_some_and(|d| std::ptr::eq(d, &**dict))
    {
        return Array {
            dtype: a.dtype,
            data: Data::Str(Strs::Coded {
                entries: std::sync::Arc::new(Strs::Shared(dict.clone())),
                codes: codes.clone(),
            }),
            validity: a.validity.clone(),
        };
    }
    a.clone().into_static()
}

/// The first `width` outputs of groups `ids` (chunk, group), in order,
/// for outputs that cannot fail.
///
/// # Design
/// Rows are written in place by an indexed parallel collect, and keys and
/// aggregate results are read straight from their arrays and accumulators
/// (perf: `GROUP BY trip_id / 5` over 2M rows has 400k result rows, and
/// evaluating them through [`eval::eval`], then collecting `Result`s and
/// flattening them, was 45 ms of a 100 ms query).
///
/// # Errors
/// None in practice: an output [`infallible`] approved that still fails
/// is reported rather than dropped.
fn result_rows(
    plan: &QueryPlan,
    parts: &[Partial<'_>],
    ids: &[(u32, u32)],
    width: usize,
) -> Result<Vec<Vec<Value>>> {
    /// Where one output comes from.
    enum Source<'e> {
        Key(usize),
        Agg(usize),
        Eval(&'e Expr),
    }
    let sources: Vec<Source<'_>> = plan.outputs[..width]
        .iter()
        .map(|e| match e {
            Expr::GroupKey { index, .. } => Source::Key(*index),
            Expr::AggResult { index, .. } => Source::Agg(*index),
            e => Source::Eval(e),
        })
        .collect();
    let failed: std::sync::Mutex<Option<(usize, crate::error::Error)>> =
        std::sync::Mutex::new(None);
    let rows: Vec<Vec<Value>> = ids
        .par_iter()
        .enumerate()
        .map(|(i, &(c, g))| {
            let (part, g) = (&parts[c as usize], g as usize);
            let mut row = Vec::with_capacity(sources.len());
            for s in &sources {
                row.push(match s {
                    Source::Key(k) => part.keys[*k].value(g),
                    Source::Agg(a) => part.accs[*a].value(g),
                    Source::Eval(e) => {
                        let src = GroupRow {
                            keys: &part.keys,
                            aggs: &part.accs,
                            g,
                        };
                        eval::eval(e, &src).unwrap_or_else(|err| {
                            if let Ok(mut f) = failed.lock()
                                && f.as_ref().is_none_or(|(j, _)| i < *j)
                            {
                                *f = Some((i, err));
                            }
                            Value::Null
                        })
                    }
                });
            }
            row
        })
        .collect();
    match failed.into_inner() {
        Ok(Some((_, err))) => Err(err),
        Ok(None) => Ok(rows),
        Err(_) => Err(crate::error::Error::Internal(
            "result rows: error slot poisoned".into(),
        )),
    }
}

/// Completes every chunk's accumulators ([`Accumulator::finish`]) and
/// checks their values, chunks in parallel (perf: ClickBench q14's 32
/// chunks each finished their pending distinct sets in 5 ms, one chunk
/// after another); the first error in merge order is reported.
fn finish_states(chunks: &mut [Partial<'_>]) -> Result<()> {
    first_error(
        chunks
            .par_iter_mut()
            .map(|c| {
                c.accs.iter_mut().try_for_each(|acc| {
                    acc.finish();
                    acc.check()
                })
            })
            .collect(),
    )?;
    Ok(())
}

/// The values of `results`, or the first error among them in their order
/// (a parallel `collect` into `Result` may stop at any of them).
fn first_error<T>(results: Vec<Result<T>>) -> Result<Vec<T>> {
    results.into_iter().collect()
}

/// The best `k` of the groups `ids` by the ORDER BY, unordered: sort keys
/// only, streamed through a heap of the best `k` so far (its top is the
/// worst of them), no per-group key storage.
fn best_groups<'p, 'r>(
    plan: &'p QueryPlan,
    ids: &[(u32, u32)],
    k: usize,
    row: &(impl Fn(usize, usize) -> GroupRow<'r> + Sync),
) -> Result<Vec<Candidate<'p>>> {
    let mut heap: BinaryHeap<Candidate<'_>> = BinaryHeap::with_capacity(k.min(ids.len()) + 1);
    let mut keys: Vec<Value> = Vec::with_capacity(plan.order_by.len());
    let first = plan.order_by[0];
    // An aggregate result as the first key is read as an integer where it
    // is one, and most groups are out on it alone (perf: evaluating it to a
    // `Value` was most of the top-n over ClickBench q33's 200k groups).
    let first_agg = match plan.outputs[first.column] {
        Expr::AggResult { index, .. } => Some(index),
        _ => None,
    };
    // The k-th best first key so far, when it is an integer.
    let mut worst_int: Option<i64> = None;
    for &(c, g) in ids {
        let at = (u64::from(c) << 32) | u64::from(g);
        let src = row(c as usize, g as usize);
        if heap.len() >= k
            && let (Some(w), Some(index)) = (worst_int, first_agg)
            && let Some(x) = src.aggs[index].int_value(g as usize)
            && (if first.desc { x < w } else { x > w })
        {
            continue;
        }
        let key = eval::eval(&plan.outputs[first.column], &src)?;
        // A group worse than the k-th best on the first key alone is out
        // without its other keys (outputs cannot fail, so nothing is
        // skipped that could): most groups, once the heap is full (perf:
        // the sort keys were 15% of a 1M-group GROUP BY).
        if heap.len() >= k
            && let Some(worst) = heap.peek()
            && order_values(&key, &worst.keys[0], first.desc, first.nulls_first).is_gt()
        {
            continue;
        }
        keys.clear();
        keys.push(key);
        for s in &plan.order_by[1..] {
            keys.push(eval::eval(&plan.outputs[s.column], &src)?);
        }
        if heap.len() < k {
            heap.push(Candidate {
                keys: keys.clone(),
                at,
                order: &plan.order_by,
            });
        } else if let Some(mut worst) = heap.peek_mut()
            && cmp_keys(&plan.order_by, (&keys, at), (&worst.keys, worst.at)).is_lt()
        {
            worst.keys.clone_from(&keys);
            worst.at = at;
        } else {
            continue;
        }
        if heap.len() >= k {
            worst_int = heap.peek().and_then(|w| match w.keys[0] {
                Value::Int(w) => Some(w),
                _ => None,
            });
        }
    }
    Ok(heap.into_vec())
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

#[cfg(test)]
mod tests {
    use super::*;

    fn key(index: usize) -> Expr {
        Expr::GroupKey {
            index,
            dtype: DataType::Int,
        }
    }

    fn int(k: i64) -> Expr {
        Expr::literal(Value::Int(k), DataType::Int)
    }

    fn bin(op: BinaryOp, left: Expr, right: Expr) -> Expr {
        Expr::binary(op, left, right, DataType::Int)
    }

    #[test]
    fn int_range_takes_the_extreme_endpoints_and_refuses_overflow() {
        let bounds = [Some((-5, 3)), None];
        // (k0 * -2) - 1 over k0 in -5..=3: from -7 to 9.
        let e = bin(
            BinaryOp::Minus,
            bin(BinaryOp::Multiply, key(0), int(-2)),
            int(1),
        );
        assert_eq!(int_range(&e, &bounds), Some((-7, 9)));
        assert!(infallible(&e, &bounds));
        // A key without a range, division, and an overflowing endpoint.
        assert_eq!(
            int_range(&bin(BinaryOp::Plus, key(1), int(1)), &bounds),
            None
        );
        let div = bin(BinaryOp::Divide, key(0), int(2));
        assert!(!infallible(&div, &bounds));
        let wide = [Some((i64::MIN, 0))];
        assert!(!infallible(&bin(BinaryOp::Minus, key(0), int(1)), &wide));
        assert!(infallible(&bin(BinaryOp::Plus, key(0), int(1)), &wide));
    }
}
