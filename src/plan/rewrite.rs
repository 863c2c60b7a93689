//! Rewrites of a bound aggregate query that compute the same answer with
//! less work per row.
//!
//! - **Linear sums.** `sum(x + k)` is `sum(x) + k · count(x)`, and
//!   `sum(x · k + g)` is `k · sum(x) + sum(g)`, so `sum(x), sum(x + 1), …,
//!   sum(x + 89)` aggregate two values per row instead of ninety (ClickHouse
//!   moves constants out of sums the same way). Applied only where the
//!   zone maps show that no integer part can overflow at any row or in any
//!   partial sum (so no error the original would raise is lost) and, for
//!   sums over two or more columns, that none holds a NULL. Over floats the
//!   result is rounded once per column instead of once per row.
//! - **Group keys that are functions of another key.** `GROUP BY ip, ip - 1`
//!   groups exactly as `GROUP BY ip`: a key built only from another key and
//!   constants is dropped from the grouping and computed per group from
//!   that key. Applied only without HAVING, so that the derived key is
//!   still evaluated for every group (the contract that group keys fail a
//!   query on any row they reach). A literal key (`SELECT 1, URL, count(*)
//!   … GROUP BY 1, URL`) is dropped the same way when another key is left,
//!   and read back as the literal.
//! - **Equalities ORed on one column.** `s = 'a' OR s = 'b' OR (g = 1 AND
//!   x < 2)` filters as `s IN ('a', 'b') OR (g = 1 AND x < 2)`: the same
//!   three-valued answer (a NULL `s` or a NULL literal gives NULL either
//!   way), but one set test per row (a dictionary's code set) instead of
//!   one comparison per term. Applies to every query's WHERE.

use crate::types::{DataType, Value};

use super::dedup::Deduped;
use super::expr::{AggCall, AggFunc, BinaryOp, Expr};
use super::{Aggregate, QueryPlan};

/// Applies every rewrite to `plan`.
pub fn simplify(plan: &mut QueryPlan) {
    plan.filter = plan.filter.take().map(equalities_to_in);
    if plan.aggregate.is_none() {
        return;
    }
    linear_sums(plan);
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

/// A sum's argument as `Σ coef · column + constant` over integer
/// coefficients (columns in order of first use, each once).
#[derive(Debug, Clone, PartialEq)]
struct LinearForm {
    terms: Vec<(Expr, i64)>,
    constant: i64,
}

impl LinearForm {
    /// `self + k · other`, `None` on coefficient overflow.
    fn add_scaled(mut self, other: LinearForm, k: i64) -> Option<LinearForm> {
        for (col, c) in other.terms {
            let c = c.checked_mul(k)?;
            match self.terms.iter_mut().find(|(e, _)| *e == col) {
                Some((_, have)) => *have = have.checked_add(c)?,
                None => self.terms.push((col, c)),
            }
        }
        self.constant = self.constant.checked_add(other.constant.checked_mul(k)?)?;
        Some(self)
    }
}

/// `e` as a [`LinearForm`] when it is built from integer or float columns
/// and integer literals with `+`, `-` (binary and unary) and
/// multiplication by a literal.
fn linear_form(e: &Expr) -> Option<LinearForm> {
    let zero = LinearForm {
        terms: Vec::new(),
        constant: 0,
    };
    match e {
        Expr::Column {
            dtype: DataType::Int | DataType::Float,
            ..
        } => Some(LinearForm {
            terms: vec![(e.clone(), 1)],
            constant: 0,
        }),
        Expr::Literal { .. } => match e.as_literal()? {
            Value::Int(k) => Some(LinearForm {
                terms: Vec::new(),
                constant: *k,
            }),
            _ => None,
        },
        Expr::Neg(x) => zero.add_scaled(linear_form(x)?, -1),
        Expr::Binary {
            op, left, right, ..
        } => match op {
            BinaryOp::Plus => zero
                .add_scaled(linear_form(left)?, 1)?
                .add_scaled(linear_form(right)?, 1),
            BinaryOp::Minus => zero
                .add_scaled(linear_form(left)?, 1)?
                .add_scaled(linear_form(right)?, -1),
            BinaryOp::Multiply => {
                let int_lit = |e: &Expr| match e.as_literal() {
                    Some(Value::Int(k)) => Some(*k),
                    _ => None,
                };
                match (int_lit(left), int_lit(right)) {
                    (Some(k), _) => zero.add_scaled(linear_form(right)?, k),
                    (_, Some(k)) => zero.add_scaled(linear_form(left)?, k),
                    _ => None,
                }
            }
            _ => None,
        },
        _ => None,
    }
}

/// Whether `sum(form)` may be computed as `Σ coef · sum(column) + constant
/// · count`: with two or more columns none may hold a NULL (a row counts
/// only where all are non-NULL); integer parts must not overflow at any
/// row or in any partial sum, by the zone maps' bounds; the argument must
/// read a column (a constant's sum is left alone).
fn linear_sum_is_exact(plan: &QueryPlan, form: &LinearForm) -> bool {
    if form.terms.is_empty() {
        return false;
    }
    let partitions = &plan.table.partitions;
    let rows: usize = partitions.iter().map(|p| p.rows).sum();
    let index = |e: &Expr| match e {
        Expr::Column { index, .. } => Some(*index),
        _ => None,
    };
    if form.terms.len() > 1
        && !form.terms.iter().all(|(e, _)| {
            index(e).is_some_and(|i| partitions.iter().all(|p| p.columns[i].zone.null_count == 0))
        })
    {
        return false;
    }
    // The largest |value| of an integer column over the table.
    let max_abs = |i: usize| -> Option<u128> {
        partitions.iter().try_fold(0u128, |m, p| {
            let z = &p.columns[i].zone;
            let abs = |v: &Value| match v {
                Value::Int(x) => Some(x.unsigned_abs() as u128),
                Value::Null => Some(0),
                _ => None,
            };
            Some(m.max(abs(&z.min)?).max(abs(&z.max)?))
        })
    };
    // Σ |coef| · max|column| over integer columns, plus |constant|: a bound
    // on every row's integer part; times the rows, on every partial sum.
    let mut bound = form.constant.unsigned_abs() as u128;
    for (e, c) in &form.terms {
        if e.dtype() == DataType::Int {
            let Some(m) = index(e).and_then(max_abs) else {
                return false;
            };
            bound = bound.saturating_add(m.saturating_mul(c.unsigned_abs() as u128));
        }
    }
    bound.saturating_mul(rows.max(1) as u128) <= i64::MAX as u128
}

/// Rewrites `sum(a · k + b - c …)` over columns as `k · sum(a) + sum(b) -
/// sum(c) …` (plus `constant · count`), as ClickHouse moves constants out
/// of sums: a wide list of such sums then aggregates each column once.
/// Exact for integers under [`linear_sum_is_exact`]; for floats it rounds
/// once per column instead of once per row (the sum of an ALP column is an
/// exact decimal), which differs from summing each row's f64 value only in
/// the last bits.
fn linear_sums(plan: &mut QueryPlan) {
    let Some(agg) = &plan.aggregate else { return };
    // Which aggregates to rewrite, and as what.
    let mut plans: Vec<Option<LinearForm>> = Vec::with_capacity(agg.aggs.len());
    for a in &agg.aggs {
        let p = match (a.func, &a.arg) {
            (AggFunc::Sum, Some(arg)) if !matches!(arg, Expr::Column { .. }) => {
                linear_form(arg).filter(|f| linear_sum_is_exact(plan, f))
            }
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
    let mut aggs = Deduped::from_items(std::mem::take(&mut agg.aggs));
    // New expressions for the rewritten results, by old index.
    let mut replace: Vec<Option<Expr>> = vec![None; aggs.as_slice().len()];
    for (i, p) in plans.into_iter().enumerate() {
        let Some(form) = p else {
            continue;
        };
        let dtype = aggs.as_slice()[i].dtype;
        let bin = Expr::binary;
        let int = |k: i64| Expr::literal(Value::Int(k), DataType::Int);
        let mut result: Option<Expr> = None;
        for (column, coef) in &form.terms {
            let t = column.dtype();
            let sum = aggs.insert(AggCall {
                func: AggFunc::Sum,
                arg: Some(column.clone()),
                arg2: None,
                separator: None,
                dtype: t,
            });
            let sum = Expr::AggResult {
                index: sum,
                dtype: t,
            };
            let term = if *coef == 1 {
                sum
            } else {
                bin(BinaryOp::Multiply, int(*coef), sum, t)
            };
            result = Some(match result {
                None => term,
                Some(r) => bin(BinaryOp::Plus, r, term, dtype),
            });
        }
        if form.constant != 0 {
            // With one column, its count; with more, all are NULL-free.
            let count = aggs.insert(AggCall {
                func: AggFunc::Count,
                arg: Some(form.terms[0].0.clone()),
                arg2: None,
                separator: None,
                dtype: DataType::Int,
            });
            let count = Expr::AggResult {
                index: count,
                dtype: DataType::Int,
            };
            let term = bin(BinaryOp::Multiply, int(form.constant), count, DataType::Int);
            result = result.map(|r| bin(BinaryOp::Plus, r, term, dtype));
        }
        replace[i] = result;
    }
    agg.aggs = aggs.into_vec();
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

/// Drops the group keys that are functions of an earlier kept key, and
/// literal keys beside a kept non-literal one, rewriting the outputs to
/// compute them per group (see the module docs).
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
    // A literal key (`GROUP BY 1, URL` in ClickBench q35, `SELECT 1, …`)
    // splits nothing: it is its own value in every group, as long as
    // another key is left (with no key at all, an empty table would give
    // one row instead of none).
    let literal = |k: &Expr| matches!(k, Expr::Literal { .. });
    if (0..n).any(|j| derived[j].is_none() && !literal(&keys[j])) {
        for j in 0..n {
            if derived[j].is_none() && literal(&keys[j]) {
                derived[j] = Some(keys[j].clone());
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

#[cfg(test)]
mod tests {
    use super::*;

    fn col(index: usize, dtype: DataType) -> Expr {
        Expr::Column {
            index,
            name: format!("c{index}"),
            dtype,
        }
    }

    fn bin(op: BinaryOp, left: Expr, right: Expr) -> Expr {
        Expr::binary(op, left, right, DataType::Int)
    }

    fn int(k: i64) -> Expr {
        Expr::literal(Value::Int(k), DataType::Int)
    }

    #[test]
    fn linear_forms_merge_columns_and_refuse_the_nonlinear() {
        let (x, y) = (col(0, DataType::Int), col(1, DataType::Float));
        // 3·(x·2 − y) − x + 5 − (−x) = 6x − 3y + 5
        let e = bin(
            BinaryOp::Minus,
            bin(
                BinaryOp::Plus,
                bin(
                    BinaryOp::Minus,
                    bin(
                        BinaryOp::Multiply,
                        int(3),
                        bin(BinaryOp::Minus, bin(BinaryOp::Multiply, x.clone(), int(2)), y.clone()),
                    ),
                    x.clone(),
                ),
                int(5),
            ),
            Expr::Neg(Box::new(x.clone())),
        );
        assert_eq!(
            linear_form(&e),
            Some(LinearForm {
                terms: vec![(x.clone(), 6), (y.clone(), -3)],
                constant: 5,
            })
        );
        // x · y, x / 2 and a coefficient past i64 are not linear forms here.
        assert_eq!(linear_form(&bin(BinaryOp::Multiply, x.clone(), y)), None);
        assert_eq!(linear_form(&bin(BinaryOp::Divide, x.clone(), int(2))), None);
        let huge = bin(BinaryOp::Multiply, int(i64::MAX), bin(BinaryOp::Multiply, int(2), x));
        assert_eq!(linear_form(&huge), None);
    }
}
