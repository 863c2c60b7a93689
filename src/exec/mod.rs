//! The executor: compiles a [`QueryPlan`] per partition into a pipeline
//! specialized to that partition's codecs, runs partitions in parallel on
//! the current rayon pool, and merges their results.
//!
//! ```text
//! partition ─▶ filter (zone-map skip │ code-range / code-set / f64 kernels │ generic)
//!           ─▶ aggregate (fixed array │ hash map) ─▶ partial ┐
//!           ─▶ project (all rows │ top-n with threshold) ────┤ merge ─▶ having, sort, limit
//! ```
//! This is the only layer that dispatches on codecs; kernels stay generic.

pub mod aggregate;
mod filter;
pub mod hll;
mod trace;
pub mod vector;

use std::cmp::Ordering;
use std::fmt::Write as _;

use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::kernel::TopN;
use crate::plan::eval::{self, RowSource};
use crate::plan::{Expr, QueryPlan};
use crate::store::Partition;
use crate::types::{DataType, Value, cmp_f64};

use aggregate::{AggState, Partial, aggregate_partition};
use filter::{CompiledFilter, compile_filter, run_filter, specialize};
pub use trace::Trace;
use vector::{Data, Datum, Rows, eval_vec, order_values};

/// The rows of a finished query and what it read.
#[derive(Debug)]
pub struct Output {
    /// Result rows, visible columns only.
    pub rows: Vec<Vec<Value>>,
    /// Table rows in partitions that were not skipped.
    pub rows_scanned: usize,
    /// Per partition (index, trace), when tracing.
    pub traces: Vec<(usize, Trace)>,
}

struct PartOut {
    rows: Vec<Vec<Value>>,
    partial: Option<Partial>,
    scanned: usize,
    trace: Trace,
}

/// Runs a plan. With `tracing`, every partition records the operators it
/// chose (for EXPLAIN).
///
/// # Errors
/// Execution errors from any partition (the first in partition order).
pub fn execute(plan: &QueryPlan, tracing: bool) -> Result<Output> {
    if plan.limit.is_some_and(|l| l < 0) && plan.offset > 0 {
        return Err(Error::plan(
            "OFFSET cannot be combined with a negative LIMIT",
        ));
    }
    let parts = &plan.table.partitions;
    let outs: Vec<PartOut> = if let Some(agg) = &plan.aggregate {
        run_parallel(parts, |p| {
            let mut trace = Trace::new(tracing);
            let (sel, scanned) = match filter_partition(plan, p, &mut trace)? {
                None => return Ok(skipped(trace)),
                Some(s) => s,
            };
            let keys: Vec<Expr> = agg.keys.iter().map(|k| specialize(k, p)).collect();
            let aggs: Vec<_> = agg
                .aggs
                .iter()
                .map(|a| crate::plan::AggCall {
                    arg: a.arg.as_ref().map(|e| specialize(e, p)),
                    ..a.clone()
                })
                .collect();
            let rows = rows_of(&sel, p);
            let partial = aggregate_partition(&keys, &aggs, p, rows, &mut trace)?;
            Ok(PartOut {
                rows: vec![],
                partial: Some(partial),
                scanned,
                trace,
            })
        })?
    } else {
        project(plan, tracing)?
    };

    let rows_scanned = outs.iter().map(|o| o.scanned).sum();
    let mut traces = Vec::new();
    let mut rows = Vec::new();
    let mut partials = Vec::new();
    for (i, o) in outs.into_iter().enumerate() {
        if tracing {
            traces.push((i, o.trace));
        }
        rows.extend(o.rows);
        if let Some(p) = o.partial {
            partials.push(p);
        }
    }
    if let Some(agg) = &plan.aggregate {
        rows = finish_aggregate(plan, agg, partials)?;
    }
    finish_rows(plan, &mut rows);
    Ok(Output {
        rows,
        rows_scanned,
        traces,
    })
}

fn skipped(trace: Trace) -> PartOut {
    PartOut {
        rows: vec![],
        partial: None,
        scanned: 0,
        trace,
    }
}

fn rows_of<'s>(sel: &'s Option<Vec<u32>>, p: &Partition) -> Rows<'s> {
    match sel {
        Some(s) => Rows::some(s),
        None => Rows::all(p.rows),
    }
}

/// Runs `f` on every partition in parallel, results in partition order; the
/// first error in partition order wins.
fn run_parallel<T: Send>(
    parts: &[Partition],
    f: impl Fn(&Partition) -> Result<T> + Sync,
) -> Result<Vec<T>> {
    let results: Vec<Result<T>> = parts.par_iter().map(&f).collect();
    results.into_iter().collect()
}

/// Compiles and runs the filter: `None` if the partition is skipped, else
/// the selection (`None` inside: all rows) and the rows scanned.
fn filter_partition(
    plan: &QueryPlan,
    p: &Partition,
    trace: &mut Trace,
) -> Result<Option<(Option<Vec<u32>>, usize)>> {
    match compile_filter(plan.filter.as_ref(), p, trace) {
        CompiledFilter::Skip => Ok(None),
        CompiledFilter::Steps(steps) => Ok(Some((run_filter(&steps, p)?, p.rows))),
    }
}

/// Projection queries: all rows, top-n, or the first/last rows in load order
/// with an early stop.
fn project(plan: &QueryPlan, tracing: bool) -> Result<Vec<PartOut>> {
    let parts = &plan.table.partitions;
    let top_n = match plan.limit {
        Some(n) if n >= 0 && !plan.order_by.is_empty() => Some(n as usize + plan.offset as usize),
        _ => None,
    };
    let run = |p: &Partition, want: Option<usize>| -> Result<PartOut> {
        let mut trace = Trace::new(tracing);
        let (sel, scanned) = match filter_partition(plan, p, &mut trace)? {
            None => return Ok(skipped(trace)),
            Some(s) => s,
        };
        let mut sel = sel;
        if let Some(n) = top_n {
            sel = Some(top_n_rows(plan, p, rows_of(&sel, p), n, &mut trace)?);
        } else if let Some(want) = want {
            // Early stop: no partition needs to produce more than `want` rows.
            let mut s = sel.unwrap_or_else(|| (0..p.rows as u32).collect());
            if plan.limit.is_some_and(|l| l < 0) {
                let cut = s.len().saturating_sub(want);
                s.drain(..cut);
            } else {
                s.truncate(want);
            }
            sel = Some(s);
        }
        let rows = rows_of(&sel, p);
        let cols: Vec<Datum> = plan
            .outputs
            .iter()
            .map(|e| eval_vec(&specialize(e, p), p, rows))
            .collect::<Result<_>>()?;
        trace.add(
            "project: evaluate outputs on selected rows",
            format!("{} rows", rows.len),
        );
        let out_rows = (0..rows.len)
            .map(|j| cols.iter().map(|c| c.value(j)).collect())
            .collect();
        Ok(PartOut {
            rows: out_rows,
            partial: None,
            scanned,
            trace,
        })
    };
    match plan.limit {
        Some(l) if plan.order_by.is_empty() => {
            // First (or last) rows in load order: run partitions in waves
            // of one per thread, from the start (or end), and stop once
            // enough rows are found.
            let backwards = l < 0;
            let want = if backwards {
                l.unsigned_abs() as usize
            } else {
                l as usize + plan.offset as usize
            };
            let wave = rayon::current_num_threads().max(1);
            let order: Vec<usize> = if backwards {
                (0..parts.len()).rev().collect()
            } else {
                (0..parts.len()).collect()
            };
            let mut found = 0;
            let mut outs: Vec<(usize, PartOut)> = Vec::new();
            for chunk in order.chunks(wave) {
                if found >= want {
                    break;
                }
                let need = want - found;
                let results: Vec<Result<PartOut>> = chunk
                    .par_iter()
                    .map(|&i| run(&parts[i], Some(need)))
                    .collect();
                for (&i, r) in chunk.iter().zip(results) {
                    let r = r?;
                    found += r.rows.len();
                    outs.push((i, r));
                }
            }
            if tracing && outs.len() < parts.len() {
                let stopped = parts.len() - outs.len();
                if let Some((_, o)) = outs.last_mut() {
                    o.trace.add(
                        "early stop: enough rows found",
                        format!("{stopped} partitions not read"),
                    );
                }
            }
            outs.sort_by_key(|(i, _)| *i);
            Ok(outs.into_iter().map(|(_, o)| o).collect())
        }
        _ => run_parallel(parts, |p| run(p, None)),
    }
}

/// Picks the rows that can be among the best `n` of a partition under the
/// first sort key (ties kept for the later keys), with a running threshold.
fn top_n_rows(
    plan: &QueryPlan,
    p: &Partition,
    rows: Rows<'_>,
    n: usize,
    trace: &mut Trace,
) -> Result<Vec<u32>> {
    // Keys constant over the partition order nothing within it: the first
    // key that varies decides which rows can make the top n.
    let mut varying = None;
    for key in &plan.order_by {
        let expr = specialize(&plan.outputs[key.column], p);
        if let Datum::Array(a) = eval_vec(&expr, p, rows)? {
            varying = Some((key, a));
            break;
        }
    }
    let row_ids = |j: usize| rows.row(j) as u32;
    fn cmp_opt<T>(
        a: &Option<T>,
        b: &Option<T>,
        desc: bool,
        nulls_first: bool,
        c: impl Fn(&T, &T) -> Ordering,
    ) -> Ordering {
        match (a, b) {
            (None, None) => Ordering::Equal,
            (None, _) => {
                if nulls_first {
                    Ordering::Less
                } else {
                    Ordering::Greater
                }
            }
            (_, None) => {
                if nulls_first {
                    Ordering::Greater
                } else {
                    Ordering::Less
                }
            }
            (Some(x), Some(y)) => {
                let o = c(x, y);
                if desc { o.reverse() } else { o }
            }
        }
    }
    let Some((key, a)) = varying else {
        trace.add(
            "top-n: sort keys constant in partition, first rows kept",
            format!("n = {n}"),
        );
        return Ok((0..rows.len.min(n)).map(row_ids).collect());
    };
    let (desc, nulls_first): (bool, bool) = (key.desc, key.nulls_first);
    let selected = match &a.data {
        Data::Int(v) => {
            trace.add(
                "top-n: i64 keys with running threshold",
                format!("n = {n} of {} rows", rows.len),
            );
            let mut t: TopN<Option<i64>> = TopN::new(n);
            let cmp = |x: &Option<i64>, y: &Option<i64>| {
                cmp_opt(x, y, desc, nulls_first, |a, b| a.cmp(b))
            };
            t.offer_all(
                (0..rows.len).map(|j| (a.is_valid(j).then_some(v[j]), row_ids(j))),
                &cmp,
            );
            t.into_rows(&cmp)
        }
        Data::Float(v) => {
            trace.add(
                "top-n: f64 keys with running threshold",
                format!("n = {n} of {} rows", rows.len),
            );
            let mut t: TopN<Option<f64>> = TopN::new(n);
            let cmp = |x: &Option<f64>, y: &Option<f64>| {
                cmp_opt(x, y, desc, nulls_first, |a, b| cmp_f64(*a, *b))
            };
            t.offer_all(
                (0..rows.len).map(|j| (a.is_valid(j).then_some(v[j]), row_ids(j))),
                &cmp,
            );
            t.into_rows(&cmp)
        }
        _ => {
            trace.add(
                "top-n: non-numeric key, all selected rows sorted after merge",
                String::new(),
            );
            (0..rows.len).map(row_ids).collect()
        }
    };
    Ok(selected)
}

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

fn finish_aggregate(
    plan: &QueryPlan,
    agg: &crate::plan::Aggregate,
    partials: Vec<Partial>,
) -> Result<Vec<Vec<Value>>> {
    let mut merged = Partial::merge_all(partials);
    if agg.keys.is_empty() && merged.keys.is_empty() {
        merged.keys.push(vec![]);
        merged
            .states
            .push(agg.aggs.iter().map(AggState::empty).collect());
    }
    let mut rows = Vec::with_capacity(merged.keys.len());
    for (keys, states) in merged.keys.into_iter().zip(merged.states) {
        let aggs: Vec<Value> = states
            .into_iter()
            .zip(&agg.aggs)
            .map(|(s, call)| s.finish(call.func))
            .collect::<Result<_>>()?;
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
    Ok(rows)
}

/// Sorts, applies OFFSET/LIMIT and drops hidden sort columns.
fn finish_rows(plan: &QueryPlan, rows: &mut Vec<Vec<Value>>) {
    if !plan.order_by.is_empty() {
        rows.sort_by(|a, b| {
            for k in &plan.order_by {
                let o = order_values(&a[k.column], &b[k.column], k.desc, k.nulls_first);
                if o != Ordering::Equal {
                    return o;
                }
            }
            Ordering::Equal
        });
    }
    match plan.limit {
        Some(l) if l < 0 => {
            let n = l.unsigned_abs() as usize;
            let cut = rows.len().saturating_sub(n);
            rows.drain(..cut);
        }
        Some(l) => {
            let start = (plan.offset as usize).min(rows.len());
            rows.drain(..start);
            rows.truncate(l as usize);
        }
        None => {
            let start = (plan.offset as usize).min(rows.len());
            rows.drain(..start);
        }
    }
    for r in rows.iter_mut() {
        r.truncate(plan.visible);
    }
}

/// EXPLAIN text: the logical plan, then one block per distinct partition
/// pipeline shape with the number of partitions that share it and the
/// details of the first.
///
/// # Errors
/// As [`execute`] (EXPLAIN runs the query to observe every choice).
pub fn explain(plan: &QueryPlan) -> Result<String> {
    let out = execute(plan, true)?;
    let mut s = plan.describe();
    let mut shapes: Vec<(String, Vec<usize>, Trace)> = Vec::new();
    for (i, t) in out.traces {
        let shape = t.shape();
        match shapes.iter_mut().find(|(s, _, _)| *s == shape) {
            Some((_, ids, _)) => ids.push(i),
            None => shapes.push((shape, vec![i], t)),
        }
    }
    let _ = writeln!(
        s,
        "Partition pipelines: {} shape{} over {} partitions ({} rows scanned)",
        shapes.len(),
        if shapes.len() == 1 { "" } else { "s" },
        plan.table.partitions.len(),
        out.rows_scanned
    );
    let read: usize = shapes.iter().map(|(_, ids, _)| ids.len()).sum();
    for (_, ids, t) in &shapes {
        let _ = writeln!(
            s,
            "  [{} partition{}: {}]",
            ids.len(),
            if ids.len() == 1 { "" } else { "s" },
            ranges(ids)
        );
        if t.lines.is_empty() {
            let _ = writeln!(s, "    scan all rows");
        }
        for (shape, detail) in &t.lines {
            if detail.is_empty() {
                let _ = writeln!(s, "    {shape}");
            } else {
                let _ = writeln!(s, "    {shape}  ({detail})");
            }
        }
    }
    if read < plan.table.partitions.len() {
        let _ = writeln!(
            s,
            "  [{} partitions not read: early stop]",
            plan.table.partitions.len() - read
        );
    }
    Ok(s)
}

/// `0-3, 7, 9-12` for a sorted list of indices.
fn ranges(ids: &[usize]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < ids.len() {
        let start = ids[i];
        let mut end = start;
        while i + 1 < ids.len() && ids[i + 1] == end + 1 {
            i += 1;
            end = ids[i];
        }
        out.push(if start == end {
            start.to_string()
        } else {
            format!("{start}-{end}")
        });
        i += 1;
        if out.len() >= 8 && i < ids.len() {
            out.push("…".into());
            break;
        }
    }
    out.join(", ")
}

/// Types of the visible outputs.
pub fn output_types(plan: &QueryPlan) -> Vec<DataType> {
    plan.outputs[..plan.visible]
        .iter()
        .map(Expr::dtype)
        .collect()
}
