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
pub mod distinct;
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
use std::sync::Arc;

use crate::store::{HashIndex, Partition, Table, unpack_location};
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
    part: usize,
    rows: Vec<Vec<Value>>,
    /// Per row of `rows`, an error raised while evaluating its outputs
    /// (empty when there is none): it fails the query only if the row is
    /// returned.
    errors: Vec<Option<Error>>,
    partial: Option<Partial>,
    scanned: usize,
    trace: Trace,
}

/// Supplies hash indexes, built on first use and cached by the caller.
pub trait IndexProvider: Sync {
    /// The hash index on integer/timestamp column `column` of `table`.
    fn hash_index(&self, table: &Arc<Table>, column: usize) -> Arc<HashIndex>;
}

/// An [`IndexProvider`] that never indexes (every lookup scans).
pub struct NoIndexes;

impl IndexProvider for NoIndexes {
    fn hash_index(&self, table: &Arc<Table>, column: usize) -> Arc<HashIndex> {
        Arc::new(HashIndex::build(table, column))
    }
}

/// One partition to read, possibly starting from a selection found by an
/// index lookup.
struct Unit {
    part: usize,
    initial: Option<Vec<u32>>,
}

/// Which partitions a query reads: after zone-map pruning and, for point
/// lookups that pruning cannot narrow, a hash index lookup.
struct Access {
    units: Vec<Unit>,
    /// Partitions ruled out before compiling, with the reason.
    pruned: Vec<(usize, String)>,
    /// How the units were found, for EXPLAIN.
    note: Option<(String, String)>,
}

/// Point lookups use the hash index when zone maps leave more than this
/// many partitions to read.
const INDEX_MIN_PARTITIONS: usize = 2;

fn access_path(plan: &QueryPlan, indexes: &dyn IndexProvider) -> Access {
    let parts = &plan.table.partitions;
    let conjuncts = plan
        .filter
        .as_ref()
        .map(filter::conjuncts)
        .unwrap_or_default();
    let mut pruned = Vec::new();
    let mut keep = Vec::with_capacity(parts.len());
    for (i, p) in parts.iter().enumerate() {
        match conjuncts.iter().find_map(|c| filter::zone_rules_out(c, p)) {
            Some(reason) => pruned.push((i, reason)),
            None => keep.push(i),
        }
    }
    if keep.len() > INDEX_MIN_PARTITIONS
        && let Some((column, name, keys)) = conjuncts.iter().find_map(filter::point_lookup)
    {
        let index = indexes.hash_index(&plan.table, column);
        let mut locations = Vec::new();
        for k in &keys {
            index.lookup(*k, &mut locations);
        }
        locations.sort_unstable();
        locations.dedup();
        let mut units: Vec<Unit> = Vec::new();
        for loc in locations {
            let (part, row) = unpack_location(loc);
            match units.last_mut() {
                Some(u) if u.part == part => {
                    u.initial.get_or_insert_with(Vec::new).push(row as u32)
                }
                _ => units.push(Unit {
                    part,
                    initial: Some(vec![row as u32]),
                }),
            }
        }
        let hit: Vec<usize> = units.iter().map(|u| u.part).collect();
        let pruned = (0..parts.len())
            .filter(|i| !hit.contains(i))
            .map(|i| (i, format!("hash index on {name} has no matching row here")))
            .collect();
        let rows: usize = units
            .iter()
            .map(|u| u.initial.as_ref().map_or(0, Vec::len))
            .sum();
        return Access {
            units,
            pruned,
            note: Some((
                format!("hash index lookup on {name} (built on first use)"),
                format!("{} key(s) → {rows} row(s)", keys.len()),
            )),
        };
    }
    Access {
        units: keep
            .into_iter()
            .map(|part| Unit {
                part,
                initial: None,
            })
            .collect(),
        pruned,
        note: None,
    }
}

/// Runs a plan. With `tracing`, every partition records the operators it
/// chose (for EXPLAIN).
///
/// # Errors
/// Execution errors from any partition (the first in partition order).
pub fn execute(plan: &QueryPlan, tracing: bool, indexes: &dyn IndexProvider) -> Result<Output> {
    if plan.limit.is_some_and(|l| l < 0) && plan.offset > 0 {
        return Err(Error::plan(
            "OFFSET cannot be combined with a negative LIMIT",
        ));
    }
    let access = access_path(plan, indexes);
    let parts = &plan.table.partitions;
    let mut outs: Vec<PartOut> = if let Some(agg) = &plan.aggregate {
        run_parallel(&access.units, |u| {
            let p = &parts[u.part];
            let mut trace = Trace::new(tracing);
            let (sel, scanned) = match filter_partition(plan, p, u.initial.clone(), &mut trace)? {
                None => return Ok(skipped(u.part, trace)),
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
                part: u.part,
                rows: vec![],
                errors: vec![],
                partial: Some(partial),
                scanned,
                trace,
            })
        })?
    } else {
        project(plan, tracing, &access.units)?
    };

    let rows_scanned = outs.iter().map(|o| o.scanned).sum();
    let mut traces = Vec::new();
    if tracing {
        for (i, reason) in &access.pruned {
            let mut t = Trace::new(true);
            t.add("skip partition: ruled out before compiling", reason.clone());
            traces.push((*i, t));
        }
        if let (Some((shape, detail)), Some(first)) = (&access.note, outs.first_mut()) {
            first.trace.lines.insert(0, (shape.clone(), detail.clone()));
        }
    }
    let mut rows = Vec::new();
    let mut errors: Vec<Option<Error>> = Vec::new();
    let mut partials = Vec::new();
    for o in outs {
        if tracing {
            traces.push((o.part, o.trace));
        }
        if !o.errors.is_empty() {
            errors.resize_with(rows.len(), || None);
            errors.extend(o.errors);
        }
        rows.extend(o.rows);
        if let Some(p) = o.partial {
            partials.push(p);
        }
    }
    traces.sort_by_key(|(i, _)| *i);
    if let Some(agg) = &plan.aggregate {
        rows = finish_aggregate(plan, agg, partials)?;
    }
    finish_rows(plan, &mut rows, errors)?;
    Ok(Output {
        rows,
        rows_scanned,
        traces,
    })
}

fn skipped(part: usize, trace: Trace) -> PartOut {
    PartOut {
        part,
        rows: vec![],
        errors: vec![],
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

/// Runs `f` on every unit in parallel, results in unit order; the first
/// error in that order wins.
fn run_parallel<T: Send>(units: &[Unit], f: impl Fn(&Unit) -> Result<T> + Sync) -> Result<Vec<T>> {
    let results: Vec<Result<T>> = units.par_iter().map(&f).collect();
    results.into_iter().collect()
}

/// Compiles and runs the filter from an initial selection (`None`: all
/// rows): `None` if the partition is skipped, else the selection (`None`
/// inside: all rows) and the rows scanned.
fn filter_partition(
    plan: &QueryPlan,
    p: &Partition,
    initial: Option<Vec<u32>>,
    trace: &mut Trace,
) -> Result<Option<(Option<Vec<u32>>, usize)>> {
    let scanned = initial.as_ref().map_or(p.rows, Vec::len);
    match compile_filter(plan.filter.as_ref(), p, trace) {
        CompiledFilter::Skip => Ok(None),
        CompiledFilter::Steps(steps) => Ok(Some((run_filter(&steps, p, initial)?, scanned))),
    }
}

/// The first sort key when it is a column that never decreases in load
/// order (sorted within every partition, partitions in order): then the
/// best rows sit at one end of the table.
fn monotone_sort_column(plan: &QueryPlan) -> Option<usize> {
    let key = plan.order_by.first()?;
    let Expr::Column { index, .. } = &plan.outputs[key.column] else {
        return None;
    };
    let parts = &plan.table.partitions;
    let sorted = parts.iter().all(|p| p.columns[*index].zone.sorted);
    let ordered = parts.windows(2).all(|w| {
        let (a, b) = (&w[0].columns[*index].zone, &w[1].columns[*index].zone);
        a.max.total_cmp(&b.min).is_le()
    });
    (sorted && ordered).then_some(*index)
}

/// Projection queries: all rows, top-n, or the first/last rows in load order
/// with an early stop.
fn project(plan: &QueryPlan, tracing: bool, units: &[Unit]) -> Result<Vec<PartOut>> {
    let parts = &plan.table.partitions;
    let top_n = match plan.limit {
        Some(n) if n >= 0 && !plan.order_by.is_empty() => Some(n as usize + plan.offset as usize),
        _ => None,
    };
    let run = |u: &Unit, want: Option<usize>| -> Result<PartOut> {
        let p = &parts[u.part];
        let mut trace = Trace::new(tracing);
        let (sel, scanned) = match filter_partition(plan, p, u.initial.clone(), &mut trace)? {
            None => return Ok(skipped(u.part, trace)),
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
        let mut errors: Vec<Option<Error>> = Vec::new();
        let mut cols: Vec<Datum> = Vec::with_capacity(plan.outputs.len());
        for e in &plan.outputs {
            let e = specialize(e, p);
            cols.push(match eval_vec(&e, p, rows) {
                Ok(d) => d,
                // Some row fails: evaluate row by row and keep each row's
                // error with it, to be raised only if the row is returned.
                Err(_) => {
                    errors.resize_with(rows.len, || None);
                    let values: Vec<Value> = (0..rows.len)
                        .map(|j| {
                            let src = vector::PartitionRow {
                                part: p,
                                row: rows.row(j),
                            };
                            eval::eval(&e, &src).unwrap_or_else(|err| {
                                errors[j].get_or_insert(err);
                                Value::Null
                            })
                        })
                        .collect();
                    Datum::Array(vector::Array::from_values(e.dtype(), &values))
                }
            });
        }
        trace.add(
            "project: evaluate outputs on selected rows",
            format!("{} rows", rows.len),
        );
        let out_rows = (0..rows.len)
            .map(|j| cols.iter().map(|c| c.value(j)).collect())
            .collect();
        Ok(PartOut {
            part: u.part,
            rows: out_rows,
            errors,
            partial: None,
            scanned,
            trace,
        })
    };
    let monotone = top_n.and_then(|_| monotone_sort_column(plan));
    let (backwards, want) = match (plan.limit, monotone) {
        (Some(l), _) if plan.order_by.is_empty() => {
            if l < 0 {
                (true, l.unsigned_abs() as usize)
            } else {
                (false, l as usize + plan.offset as usize)
            }
        }
        (Some(_), Some(_)) => (plan.order_by[0].desc, top_n.unwrap_or(0)),
        _ => return run_parallel(units, |u| run(u, None)),
    };
    // Rows wanted from one end of load order: run partitions in waves of
    // one per thread from that end, and stop once enough rows are found
    // (for a monotone sort key: once no unread partition can beat the n-th
    // best key found).
    let wave = rayon::current_num_threads().max(1);
    let order: Vec<&Unit> = if backwards {
        units.iter().rev().collect()
    } else {
        units.iter().collect()
    };
    let mut outs: Vec<PartOut> = Vec::new();
    let mut found = 0;
    let mut read = 0;
    for chunk in order.chunks(wave) {
        if want == 0 {
            break;
        }
        if found >= want {
            let Some(col) = monotone else { break };
            // n-th best first-key value so far, against the next partition's bound.
            let key = &plan.order_by[0];
            let mut keys: Vec<Value> = outs
                .iter()
                .flat_map(|o| o.rows.iter().map(|r| r[key.column].clone()))
                .collect();
            keys.sort_by(|a, b| order_values(a, b, key.desc, key.nulls_first));
            let nth = &keys[want.saturating_sub(1).min(keys.len() - 1)];
            let zone = &parts[chunk[0].part].columns[col].zone;
            let bound = if backwards { &zone.max } else { &zone.min };
            if !nth.is_null() && order_values(bound, nth, key.desc, key.nulls_first).is_gt() {
                break;
            }
        }
        let need = if monotone.is_some() {
            want
        } else {
            want - found
        };
        let results: Vec<Result<PartOut>> = chunk.par_iter().map(|u| run(u, Some(need))).collect();
        for r in results {
            let r = r?;
            found += r.rows.len();
            outs.push(r);
        }
        read += chunk.len();
    }
    if tracing
        && read < units.len()
        && let Some(o) = outs.last_mut()
    {
        o.trace.add(
            if monotone.is_some() {
                "early stop: sort key ascends in load order, no unread partition can enter the top n"
            } else {
                "early stop: enough rows found"
            },
            format!("{} partitions not read", units.len() - read),
        );
    }
    outs.sort_by_key(|o| o.part);
    Ok(outs)
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
    if agg.keys.is_empty() && merged.groups == 0 {
        merged = Partial::new(0, agg.aggs.len());
        merged.push(std::iter::empty(), agg.aggs.iter().map(AggState::empty));
    }
    let (nkeys, naggs) = (agg.keys.len(), agg.aggs.len());
    let mut rows = Vec::with_capacity(merged.groups);
    let mut states = merged.states.into_iter();
    for g in 0..merged.groups {
        let keys = &merged.keys[g * nkeys..(g + 1) * nkeys];
        let aggs: Vec<Value> = states
            .by_ref()
            .take(naggs)
            .zip(&agg.aggs)
            .map(|(s, call)| s.finish(call.func))
            .collect::<Result<_>>()?;
        let src = GroupRow { keys, aggs: &aggs };
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

/// Sorts, applies OFFSET/LIMIT and drops hidden sort columns; then fails
/// with the first error of a returned row, if any (`errors` is empty or
/// aligned with `rows`).
fn finish_rows(
    plan: &QueryPlan,
    rows: &mut Vec<Vec<Value>>,
    errors: Vec<Option<Error>>,
) -> Result<()> {
    let mut order: Vec<usize> = (0..rows.len()).collect();
    if !plan.order_by.is_empty() {
        // Stable: rows with equal keys stay in load order.
        order.sort_by(|&a, &b| {
            for k in &plan.order_by {
                let o = order_values(
                    &rows[a][k.column],
                    &rows[b][k.column],
                    k.desc,
                    k.nulls_first,
                );
                if o != Ordering::Equal {
                    return o;
                }
            }
            Ordering::Equal
        });
    }
    let window = match plan.limit {
        Some(l) if l < 0 => order.len().saturating_sub(l.unsigned_abs() as usize)..order.len(),
        Some(l) => {
            let start = (plan.offset as usize).min(order.len());
            start..(start.saturating_add(l as usize)).min(order.len())
        }
        None => (plan.offset as usize).min(order.len())..order.len(),
    };
    if plan.order_by.is_empty() && window == (0..rows.len()) && errors.iter().all(Option::is_none) {
        // Nothing to reorder or cut: keep the rows where they are.
        for r in rows.iter_mut() {
            r.truncate(plan.visible);
        }
        return Ok(());
    }
    let kept = &order[window];
    if !errors.is_empty() {
        let mut errors = errors;
        if let Some(e) = kept
            .iter()
            .find_map(|&i| errors.get_mut(i).and_then(Option::take))
        {
            return Err(e);
        }
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
    Ok(())
}

/// EXPLAIN text: the logical plan, then one block per distinct partition
/// pipeline shape with the number of partitions that share it and the
/// details of the first.
///
/// # Errors
/// As [`execute`] (EXPLAIN runs the query to observe every choice).
pub fn explain(plan: &QueryPlan, indexes: &dyn IndexProvider) -> Result<String> {
    let out = execute(plan, true, indexes)?;
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
