//! Rewrites of a bound aggregate query that compute the same answer with
//! less work per row.
//!
//! - **Sums of a column plus a constant.** `sum(x + k)` is
//!   `sum(x) + k · count(x)` for integers, so `sum(x), sum(x + 1), …,
//!   sum(x + 89)` aggregate two values per row instead of ninety (ClickHouse
//!   rewrites the same shape). Applied only to integer columns whose zone
//!   maps show that `x + k` cannot overflow at any row, so no error the
//!   original would raise is lost; floats are left alone (their rounding
//!   would differ).
//! - **Group keys that are functions of another key.** `GROUP BY ip, ip - 1`
//!   groups exactly as `GROUP BY ip`: a key built only from another key and
//!   constants is dropped from the grouping and computed per group from
//!   that key. Applied only without HAVING, so that the derived key is
//!   still evaluated for every group (the contract that group keys fail a
//!   query on any row they reach).
//! - **Equalities ORed on one column.** `s = 'a' OR s = 'b' OR (g = 1 AND
//!   x < 2)` filters as `s IN ('a', 'b') OR (g = 1 AND x < 2)`: the same
//!   three-valued answer (a NULL `s` or a NULL literal gives NULL either
//!   way), but one set test per row (a dictionary's code set) instead of
//!   one comparison per term. Applies to every query's WHERE.

use crate::types::{DataType, Value};

use super::expr::{AggCall, AggFunc, BinaryOp, Expr};
use super::{Aggregate, QueryPlan};

/// Applies every rewrite to `plan`.
pub fn simplify(plan: &mut QueryPlan) {
    plan.filter = plan.filter.take().map(equalities_to_in);
    if plan.aggregate.is_none() {
        return;
    }
    sums_of_offsets(plan);
    dependent_keys(plan);
}

/// Merges, in every OR of `e`, the disjuncts `column = literal` and
/// `column IN (literals)` of each column into one `column IN (…)`.
fn equalities_to_in(e: Expr) -> Expr {
    let e = e
        .map_children::<()>(&mut |c| Ok(equalities_to_in(c)))
        .unwrap_or_else(|()| unreachable!("the closure never fails"));
    if !matches!(
        e,
        Expr::Binary {
            op: BinaryOp::Or,
            ..
        }
    ) {
        return e;
    }
    /// The column and the literals that `e` compares it with for equality.
    fn equality(e: &Expr) -> Option<(&Expr, Vec<Expr>)> {
        let literal_of = |c: &Expr, l: &Expr| match (c, l) {
            (Expr::Column { dtype, .. }, Expr::Literal { dtype: t, .. }) if t == dtype => {
                Some(l.clone())
            }
            _ => None,
        };
        match e {
            Expr::Binary {
                op: BinaryOp::Eq,
                left,
                right,
                ..
            } => match (literal_of(left, right), literal_of(right, left)) {
                (Some(l), _) => Some((left, vec![l])),
                (_, Some(l)) => Some((right, vec![l])),
                _ => None,
            },
            Expr::InList {
                expr,
                list,
                negated: false,
            } if list.iter().all(|l| literal_of(expr, l).is_some()) => Some((expr, list.clone())),
            _ => None,
        }
    }
    let mut terms = Vec::new();
    e.split_chain(BinaryOp::Or, &mut terms);
    // Per column (by index, in order of first appearance): where its first
    // term stands, and the literals of all its terms.
    let mut lists: Vec<(usize, usize, Vec<Expr>)> = Vec::new();
    for (i, t) in terms.iter().enumerate() {
        if let Some((Expr::Column { index, .. }, items)) = equality(t) {
            match lists.iter_mut().find(|l| l.0 == *index) {
                Some(l) => l.2.extend(items),
                None => lists.push((*index, i, items)),
            }
        }
    }
    let merged: Vec<usize> = lists
        .iter()
        .filter(|l| {
            terms
                .iter()
                .filter(|t| matches!(equality(t), Some((Expr::Column { index, .. }, _)) if *index == l.0))
                .count()
                > 1
        })
        .map(|l| l.0)
        .collect();
    let mut out: Vec<Expr> = Vec::with_capacity(terms.len());
    for (i, t) in terms.iter().enumerate() {
        let column = match equality(t) {
            Some((c @ Expr::Column { index, .. }, _)) if merged.contains(index) => {
                Some((c, *index))
            }
            _ => None,
        };
        match column {
            None => out.push(t.clone()),
            Some((c, index)) => {
                if let Some(l) = lists.iter().find(|l| l.0 == index && l.1 == i) {
                    out.push(Expr::InList {
                        expr: Box::new(c.clone()),
                        list: l.2.clone(),
                        negated: false,
                    });
                }
            }
        }
    }
    out.into_iter()
        .reduce(|a, b| Expr::Binary {
            op: BinaryOp::Or,
            left: Box::new(a),
            right: Box::new(b),
            dtype: DataType::Bool,
        })
        .unwrap_or_else(|| unreachable!("an OR has terms"))
}

/// Replaces `AggResult`/`GroupKey` nodes through `f` in every expression
/// over group results (outputs and HAVING).
fn map_results(plan: &mut QueryPlan, f: &impl Fn(&Expr) -> Option<Expr>) {
    fn walk(e: Expr, f: &impl Fn(&Expr) -> Option<Expr>) -> Expr {
        if let Some(r) = f(&e) {
            return r;
        }
        e.map_children::<()>(&mut |c| Ok(walk(c, f)))
            .unwrap_or_else(|()| Expr::literal(Value::Null, DataType::Int))
    }
    plan.outputs = std::mem::take(&mut plan.outputs)
        .into_iter()
        .map(|e| walk(e, f))
        .collect();
    plan.having = plan.having.take().map(|h| walk(h, f));
}

/// `(column, k)` when `e` is `column + k`, `k + column` or `column - k`
/// (as `column + (-k)`) over an integer column.
fn column_plus_constant(e: &Expr) -> Option<(Expr, i64, bool)> {
    let Expr::Binary {
        op, left, right, ..
    } = e
    else {
        return None;
    };
    let int_col = |e: &Expr| {
        matches!(
            e,
            Expr::Column {
                dtype: DataType::Int,
                ..
            }
        )
    };
    let int_lit = |e: &Expr| match e.as_literal() {
        Some(Value::Int(k)) => Some(*k),
        _ => None,
    };
    match op {
        BinaryOp::Plus if int_col(left) => Some(((**left).clone(), int_lit(right)?, false)),
        BinaryOp::Plus if int_col(right) => Some(((**right).clone(), int_lit(left)?, false)),
        BinaryOp::Minus if int_col(left) => Some(((**left).clone(), int_lit(right)?, true)),
        _ => None,
    }
}

/// True when `column ± k` cannot overflow at any row of the table.
fn cannot_overflow(plan: &QueryPlan, column: &Expr, k: i64, minus: bool) -> bool {
    let Expr::Column { index, .. } = column else {
        return false;
    };
    plan.table.partitions.iter().all(|p| {
        let z = &p.columns[*index].zone;
        let bound = |v: &Value| match v {
            Value::Int(x) => {
                if minus {
                    x.checked_sub(k).is_some()
                } else {
                    x.checked_add(k).is_some()
                }
            }
            Value::Null => true,
            _ => false,
        };
        bound(&z.min) && bound(&z.max)
    })
}

fn sums_of_offsets(plan: &mut QueryPlan) {
    let Some(agg) = &plan.aggregate else { return };
    // Which aggregates to rewrite, and as what.
    let mut plans: Vec<Option<(Expr, i64, bool)>> = Vec::with_capacity(agg.aggs.len());
    for a in &agg.aggs {
        let p = match (a.func, &a.arg) {
            (AggFunc::Sum, Some(arg)) => column_plus_constant(arg)
                .filter(|(c, k, minus)| cannot_overflow(plan, c, *k, *minus)),
            _ => None,
        };
        plans.push(p);
    }
    if plans.iter().all(Option::is_none) {
        return;
    }
    let Some(agg) = plan.aggregate.as_mut() else {
        return;
    };
    let add = |aggs: &mut Vec<AggCall>, call: AggCall| -> usize {
        match aggs.iter().position(|a| *a == call) {
            Some(i) => i,
            None => {
                aggs.push(call);
                aggs.len() - 1
            }
        }
    };
    // New expressions for the rewritten results, by old index.
    let mut replace: Vec<Option<Expr>> = vec![None; agg.aggs.len()];
    for (i, p) in plans.into_iter().enumerate() {
        let Some((column, k, minus)) = p else {
            continue;
        };
        let sum = add(
            &mut agg.aggs,
            AggCall {
                func: AggFunc::Sum,
                arg: Some(column.clone()),
                dtype: DataType::Int,
            },
        );
        let count = add(
            &mut agg.aggs,
            AggCall {
                func: AggFunc::Count,
                arg: Some(column),
                dtype: DataType::Int,
            },
        );
        let int = |e: Expr| Box::new(e);
        let result = |index| Expr::AggResult {
            index,
            dtype: DataType::Int,
        };
        replace[i] = Some(Expr::Binary {
            op: if minus {
                BinaryOp::Minus
            } else {
                BinaryOp::Plus
            },
            left: int(result(sum)),
            right: int(Expr::Binary {
                op: BinaryOp::Multiply,
                left: int(Expr::literal(Value::Int(k), DataType::Int)),
                right: int(result(count)),
                dtype: DataType::Int,
            }),
            dtype: DataType::Int,
        });
    }
    map_results(plan, &|e| match e {
        Expr::AggResult { index, .. } => replace.get(*index).cloned().flatten(),
        _ => None,
    });
    compact_aggregates(plan);
}

/// Drops aggregates no output or HAVING refers to, renumbering the rest.
fn compact_aggregates(plan: &mut QueryPlan) {
    let Some(agg) = &plan.aggregate else { return };
    let mut used = vec![false; agg.aggs.len()];
    let mut stack: Vec<&Expr> = plan.outputs.iter().chain(plan.having.iter()).collect();
    while let Some(e) = stack.pop() {
        if let Expr::AggResult { index, .. } = e {
            used[*index] = true;
        }
        stack.extend(e.children());
    }
    if used.iter().all(|&u| u) {
        return;
    }
    let mut new_index = vec![usize::MAX; used.len()];
    let Some(agg) = plan.aggregate.as_mut() else {
        return;
    };
    let old = std::mem::take(&mut agg.aggs);
    for (i, a) in old.into_iter().enumerate() {
        if used[i] {
            new_index[i] = agg.aggs.len();
            agg.aggs.push(a);
        }
    }
    map_results(plan, &|e| match e {
        Expr::AggResult { index, dtype } => Some(Expr::AggResult {
            index: new_index[*index],
            dtype: *dtype,
        }),
        _ => None,
    });
}

/// `e` with every subtree equal to `key` replaced by `GroupKey(index)`, when
/// what is left reads no column (a function of the key alone).
fn in_terms_of(e: &Expr, key: &Expr, index: usize) -> Option<Expr> {
    fn sub(e: &Expr, key: &Expr, index: usize) -> Expr {
        if e == key {
            return Expr::GroupKey {
                index,
                dtype: key.dtype(),
            };
        }
        e.clone()
            .map_children::<()>(&mut |c| Ok(sub(&c, key, index)))
            .unwrap_or_else(|()| e.clone())
    }
    let r = sub(e, key, index);
    let reads_columns = r.any(&|n| matches!(n, Expr::Column { .. }));
    let uses_key = r.any(&|n| matches!(n, Expr::GroupKey { .. }));
    (!reads_columns && uses_key).then_some(r)
}

fn dependent_keys(plan: &mut QueryPlan) {
    if plan.having.is_some() {
        return;
    }
    let Some(Aggregate { keys, .. }) = &plan.aggregate else {
        return;
    };
    let n = keys.len();
    // For each key, the expression over an earlier kept key it derives from.
    let mut derived: Vec<Option<Expr>> = vec![None; n];
    // Only from an earlier key that stays, so a kept key is never derived
    // later.
    for j in 0..n {
        for i in 0..j {
            if derived[i].is_some() || keys[j].is_constant() {
                continue;
            }
            if let Some(e) = in_terms_of(&keys[j], &keys[i], i) {
                derived[j] = Some(e);
                break;
            }
        }
    }
    if derived.iter().all(Option::is_none) {
        return;
    }
    // Kept keys are renumbered; derived ones become expressions over them.
    let mut new_index = vec![usize::MAX; n];
    let mut kept = 0;
    for (j, d) in derived.iter().enumerate() {
        if d.is_none() {
            new_index[j] = kept;
            kept += 1;
        }
    }
    let renumber = |e: Expr| -> Expr {
        fn walk(e: Expr, map: &[usize]) -> Expr {
            match e {
                Expr::GroupKey { index, dtype } => Expr::GroupKey {
                    index: map[index],
                    dtype,
                },
                e => e
                    .map_children::<()>(&mut |c| Ok(walk(c, map)))
                    .unwrap_or_else(|()| Expr::literal(Value::Null, DataType::Int)),
            }
        }
        walk(e, &new_index)
    };
    let replacement: Vec<Option<Expr>> = derived.iter().map(|d| d.clone().map(renumber)).collect();
    map_results(plan, &|e| match e {
        Expr::GroupKey { index, dtype } => Some(match &replacement[*index] {
            Some(r) => r.clone(),
            None => Expr::GroupKey {
                index: new_index[*index],
                dtype: *dtype,
            },
        }),
        _ => None,
    });
    if let Some(agg) = plan.aggregate.as_mut() {
        let old = std::mem::take(&mut agg.keys);
        agg.keys = old
            .into_iter()
            .zip(&derived)
            .filter(|(_, d)| d.is_none())
            .map(|(k, _)| k)
            .collect();
    }
}
