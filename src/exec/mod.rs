//! The executor: compiles a [`QueryPlan`] per partition into a pipeline
//! specialized to that partition's codecs, runs partitions in parallel on
//! the current rayon pool, and merges their results.
//!
//! ```text
//! access path (zone maps, hash index)            access.rs
//!   └▶ per partition: filter (codec kernels │ vectorized)   filter.rs, vector/
//!        ├▶ aggregate (fixed array │ hash table) ─▶ partial ┐  aggregate/
//!        │                   radix-partitioned merge ◀──────┘  aggregate/merge.rs
//!        │                   └▶ HAVING, outputs, ORDER BY, LIMIT   finish.rs
//!        └▶ project: streaming scan │ top-n candidates ─▶ merge ─▶ outputs
//!                                    (project.rs, topn.rs)
//! EXPLAIN compiles the pipelines without running them; EXPLAIN ANALYZE
//! renders the choices every partition recorded            explain.rs
//! ```
//! This is the only layer that dispatches on codecs; kernels stay generic.
//! Every partition checks the cancel token before it starts, reports its
//! rows to the progress receiver when done, and what a query holds (group
//! states, sort candidates, result rows) is reserved against the memory
//! budget.

pub mod access;
pub mod aggregate;
pub mod codecs;
mod explain;
mod filter;
mod finish;
pub mod join_filter;
mod options;
mod project;
pub mod topn;
mod trace;
pub mod vector;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rayon::prelude::*;

use crate::control::{
    CancelToken, MemoryBudget, Phase, Progress, ProgressFn, ProgressUnit, Reservation,
};
use crate::error::{Error, Result};
use crate::plan::{self, AggCall, AggFunc, Expr, QueryPlan};
use crate::store::Partition;
use crate::types::{DataType, Value};

pub use access::IndexProvider;
use aggregate::merge::{keep_first_keys, merge_partials};
use aggregate::packed::PackedKeys;
use aggregate::shared::{self, SharedGroups, SharedKey};
use aggregate::{Partial, aggregate_partition};
use filter::{CompiledFilter, compile_filter, run_filter, specialize};
pub use options::ExecOptions;
pub use trace::Trace;
use vector::Rows;

/// Receives result rows in order, a batch at a time; returns `Ok(false)` to
/// stop the query early.
pub type Sink<'s> = &'s mut dyn FnMut(Vec<Vec<Value>>) -> Result<bool>;

/// What a query runs with besides its plan.
pub struct Context<'c> {
    /// Record every partition's operator choices (EXPLAIN).
    pub tracing: bool,
    /// Build only this many result rows of an aggregate query (a display
    /// that shows that many), and count the rest: [`Output::result_rows`].
    pub preview_rows: Option<usize>,
    /// Polled before every partition and merge step.
    pub cancel: CancelToken,
    /// Receives rows-done reports.
    pub progress: Option<ProgressFn>,
    /// Hash indexes for point lookups.
    pub indexes: &'c dyn IndexProvider,
    /// The thresholds paths are chosen by.
    pub options: ExecOptions,
    state: ContextState,
}

struct ContextState {
    total_rows: u64,
    done_rows: AtomicU64,
    start: Instant,
    last_report: Mutex<Instant>,
    reservation: Mutex<Reservation>,
    /// The length of an aggregate query's whole result.
    result_rows: Mutex<Option<usize>>,
}

impl<'c> Context<'c> {
    /// A context for one query over a table of `total_rows` rows.
    pub fn new(
        total_rows: usize,
        cancel: CancelToken,
        progress: Option<ProgressFn>,
        memory: Arc<MemoryBudget>,
        indexes: &'c dyn IndexProvider,
    ) -> Context<'c> {
        let now = Instant::now();
        let reservation = Reservation::empty(&memory, "query");
        Context {
            tracing: false,
            preview_rows: None,
            cancel,
            progress,
            indexes,
            options: ExecOptions::default(),
            state: ContextState {
                total_rows: total_rows as u64,
                done_rows: AtomicU64::new(0),
                start: now,
                last_report: Mutex::new(now),
                reservation: Mutex::new(reservation),
                result_rows: Mutex::new(None),
            },
        }
    }

    /// Counts `rows` table rows as done and reports progress: when the
    /// first partition finishes, then at most every 100 ms.
    pub fn progress_rows(&self, rows: usize) {
        let before = self
            .state
            .done_rows
            .fetch_add(rows as u64, Ordering::Relaxed);
        let done = before + rows as u64;
        let Some(report) = &self.progress else {
            return;
        };
        let now = Instant::now();
        // The first finished partition always reports: it waits for the
        // lock, which another thread may hold for a moment to find its own
        // report not due (with `try_lock` the first report was lost then).
        let first = before == 0;
        let last = if first {
            self.state.last_report.lock().ok()
        } else {
            self.state.last_report.try_lock().ok()
        };
        if let Some(mut last) = last
            && (first || now.duration_since(*last) >= Duration::from_millis(100))
        {
            *last = now;
            report(Progress {
                phase: Phase::Scan,
                unit: ProgressUnit::Rows,
                done,
                total: self.state.total_rows,
                elapsed: now.duration_since(self.state.start),
            });
        }
    }

    /// Reports that a phase after the scan starts, over `total` rows or
    /// groups: a query whose time is in its merge or sort shows that phase
    /// (the receiver shows the latest report once the query has run a
    /// while, whether or not another comes).
    pub fn enter_phase(&self, phase: Phase, total: usize) {
        let Some(report) = &self.progress else {
            return;
        };
        let now = Instant::now();
        if let Ok(mut last) = self.state.last_report.lock() {
            *last = now;
        }
        report(Progress {
            phase,
            unit: ProgressUnit::Rows,
            done: 0,
            total: total as u64,
            elapsed: now.duration_since(self.state.start),
        });
    }

    /// Holds `bytes` more for the rest of the query.
    ///
    /// # Errors
    /// [`Error::MemoryLimit`] naming `what`.
    pub fn reserve(&self, bytes: usize, what: impl FnOnce() -> String) -> Result<()> {
        match self.state.reservation.lock() {
            Ok(mut r) => r.grow(bytes, what),
            Err(_) => Err(Error::Internal("memory reservation poisoned".into())),
        }
    }
}

/// One partition's run: what it chose and how many rows it read.
pub struct PartRun {
    /// Partition index.
    pub part: usize,
    /// Rows read (after an index lookup's narrowing), 0 when skipped.
    pub scanned: usize,
    /// Rows the filter kept (EXPLAIN ANALYZE), 0 when skipped.
    pub selected: usize,
    /// The operators chosen.
    pub trace: Trace,
}

impl PartRun {
    fn new(part: usize, tracing: bool) -> PartRun {
        PartRun {
            part,
            scanned: 0,
            selected: 0,
            trace: Trace::new(tracing),
        }
    }
}

/// What a finished query read.
#[derive(Debug, Default)]
pub struct Output {
    /// Table rows in partitions that were not skipped.
    pub rows_scanned: usize,
    /// Per partition read (index, trace), when tracing; sorted by index.
    pub traces: Vec<(usize, Trace)>,
    /// Steps after the partitions (the merge), for EXPLAIN.
    pub notes: Vec<String>,
    /// Rows the partitions' filters kept (summed; EXPLAIN ANALYZE).
    pub rows_selected: usize,
    /// What each phase did and how long it took, in order (EXPLAIN
    /// ANALYZE): `(phase, what went in and out, time)`.
    pub phases: Vec<(&'static str, String, Duration)>,
    /// The length of an aggregate query's whole result, of which only
    /// [`Context::preview_rows`] rows may have been built.
    pub result_rows: Option<usize>,
}

/// Compiles and runs the filter of `plan` on `p` from an initial selection
/// (`None`: all rows): `None` if the partition is skipped, else the
/// selection (`None` inside: all rows). Sets `run.scanned`.
fn filter_partition(
    plan: &QueryPlan,
    p: &Partition,
    initial: Option<Vec<u32>>,
    run: &mut PartRun,
) -> Result<Option<Option<Vec<u32>>>> {
    let scanned = initial.as_ref().map_or(p.rows, Vec::len);
    match compile_filter(plan.filter.as_ref(), p, &mut run.trace) {
        CompiledFilter::Skip => Ok(None),
        CompiledFilter::Steps(steps) => {
            run.scanned = scanned;
            let sel = run_filter(&steps, p, initial)?;
            run.selected = sel.as_ref().map_or(p.rows, Vec::len);
            Ok(Some(sel))
        }
    }
}

/// Runs a plan, handing result rows (visible columns) to `sink` in order.
///
/// # Errors
/// Execution errors from any partition (the first in partition order);
/// [`Error::Cancelled`]; [`Error::MemoryLimit`].
pub fn execute(plan: &QueryPlan, ctx: &Context<'_>, sink: Sink<'_>) -> Result<Output> {
    check_runnable(plan)?;
    let access = access::access_path(plan, ctx.indexes);
    let mut notes = Vec::new();
    let mut phases = Vec::new();
    let runs = match &plan.aggregate {
        Some(agg) => aggregate_query(plan, agg, ctx, &access.units, sink, &mut notes, &mut phases)?,
        None => {
            let start = Instant::now();
            let mut results = 0usize;
            let mut counting = |rows: Vec<Vec<Value>>| {
                results += rows.len();
                sink(rows)
            };
            let runs = project::run(plan, ctx, &access.units, &mut counting)?;
            phases.push((
                "partitions, top-n and outputs",
                format!("{} result rows", results),
                start.elapsed(),
            ));
            runs
        }
    };
    let mut out = output(plan, ctx, access, runs, notes);
    out.phases = phases;
    Ok(out)
}

/// What a run read, from its partitions' records.
fn output(
    plan: &QueryPlan,
    ctx: &Context<'_>,
    access: access::Access,
    mut runs: Vec<PartRun>,
    notes: Vec<String>,
) -> Output {
    // Rows of partitions that were read: none when no column is (the
    // rows are counted from the partitions' lengths).
    let rows_scanned = if plan.reads_columns() {
        runs.iter().map(|r| r.scanned).sum()
    } else {
        0
    };
    let rows_selected = runs.iter().map(|r| r.selected).sum();
    let mut traces = Vec::new();
    if ctx.tracing {
        if let (Some((shape, detail)), Some(first)) = (&access.note, runs.first_mut()) {
            first.trace.lines.insert(0, (shape.clone(), detail.clone()));
        }
        for (i, reason) in &access.pruned {
            runs.push(project::pruned_run(*i, reason));
        }
        runs.sort_by_key(|r| r.part);
        traces = runs.into_iter().map(|r| (r.part, r.trace)).collect();
    }
    let result_rows = ctx.state.result_rows.lock().ok().and_then(|t| *t);
    Output {
        rows_scanned,
        traces,
        notes,
        rows_selected,
        phases: Vec::new(),
        result_rows,
    }
}

/// Runs a plan into whole columns: one array per visible output, every
/// result row in order. A scan (no aggregate, ORDER BY, LIMIT or OFFSET)
/// goes straight to columns ([`project::scan_columns`]); other plans'
/// rows, few after an aggregate or a LIMIT, are turned into columns.
/// A scan keeps only the rows whose keys pass every join filter
/// ([`join_filter`]); other plans ignore them, which a join filter allows.
///
/// # Errors
/// As [`execute`].
pub fn execute_columns(
    plan: &QueryPlan,
    ctx: &Context<'_>,
    join_filters: &[join_filter::JoinFilter],
) -> Result<(Vec<vector::Array<'static>>, usize, Output)> {
    let scan = plan.aggregate.is_none()
        && plan.order_by.is_empty()
        && plan.limit.is_none()
        && plan.offset == 0;
    if let Some(agg) = &plan.aggregate
        && finish::groups_as_columns(plan)
    {
        // Every group's keys and results straight into columns, with no
        // row of values (perf of db-benchmark groupby q10 in a subquery:
        // 10M result rows of values, made and encoded again, were a third
        // of the query).
        check_runnable(plan)?;
        let access = access::access_path(plan, ctx.indexes);
        let mut notes = Vec::new();
        let mut phases = Vec::new();
        let (runs, chunks) =
            aggregate_chunks(plan, agg, ctx, &access.units, &mut notes, &mut phases)?;
        let start = Instant::now();
        ctx.cancel.check()?;
        let (arrays, rows) = finish::group_columns(plan, agg, chunks)?;
        phases.push((
            "finish: outputs as columns",
            format!("{rows} result rows"),
            start.elapsed(),
        ));
        if let Ok(mut t) = ctx.state.result_rows.lock() {
            *t = Some(rows);
        }
        ctx.reserve(arrays.iter().map(vector::Array::heap_bytes).sum(), || {
            format!("{rows} result rows")
        })?;
        let mut out = output(plan, ctx, access, runs, notes);
        out.phases = phases;
        return Ok((arrays, rows, out));
    }
    if !scan {
        let (rows, out) = execute_collect(plan, ctx)?;
        let arrays = output_types(plan)
            .into_par_iter()
            .enumerate()
            .map(|(c, t)| {
                let values: Vec<Value> = rows.iter().map(|r| r[c].clone()).collect();
                vector::Array::from_result_values(t, &values)
            })
            .collect();
        return Ok((arrays, rows.len(), out));
    }
    let access = access::access_path(plan, ctx.indexes);
    let (arrays, runs) = project::scan_columns(plan, ctx, &access.units, join_filters)?;
    let rows = arrays
        .first()
        .map_or_else(|| runs.iter().map(|r| r.scanned).sum(), vector::Array::len);
    Ok((arrays, rows, output(plan, ctx, access, runs, Vec::new())))
}

/// [`execute_pieces`] a few partitions at a time: `f` gets the pieces of
/// at most `chunk` partitions (one array per partition with selected rows,
/// per visible output) and their row count, in partition order, so a big
/// scan result is never held whole. Whether `plan` is a scan (nothing runs
/// when it is not).
///
/// # Errors
/// As [`execute`], and `f`'s.
#[allow(clippy::type_complexity)]
pub fn execute_pieces_chunked(
    plan: &QueryPlan,
    ctx: &Context<'_>,
    chunk: usize,
    f: &mut dyn FnMut(Vec<Vec<vector::Array<'static>>>, usize) -> Result<()>,
) -> Result<bool> {
    let scan = plan.aggregate.is_none()
        && plan.order_by.is_empty()
        && plan.limit.is_none()
        && plan.offset == 0;
    if !scan {
        return Ok(false);
    }
    let access = access::access_path(plan, ctx.indexes);
    for units in access.units.chunks(chunk.max(1)) {
        let (pieces, runs) = project::scan_pieces(plan, ctx, units, &[])?;
        let rows = pieces.first().map_or_else(
            || runs.iter().map(|r| r.scanned).sum(),
            |p| p.iter().map(vector::Array::len).sum(),
        );
        f(pieces, rows)?;
    }
    Ok(true)
}

/// Runs a scan plan (as [`execute_columns`] defines it) into each visible
/// output's pieces, one array per partition with selected rows, in
/// partition order, and the number of rows; `None` for any other plan.
///
/// # Errors
/// As [`execute`].
#[allow(clippy::type_complexity)]
pub fn execute_pieces(
    plan: &QueryPlan,
    ctx: &Context<'_>,
) -> Result<Option<(Vec<Vec<vector::Array<'static>>>, usize, Output)>> {
    let scan = plan.aggregate.is_none()
        && plan.order_by.is_empty()
        && plan.limit.is_none()
        && plan.offset == 0;
    if !scan {
        return Ok(None);
    }
    let access = access::access_path(plan, ctx.indexes);
    let (pieces, runs) = project::scan_pieces(plan, ctx, &access.units, &[])?;
    let rows = pieces.first().map_or_else(
        || runs.iter().map(|r| r.scanned).sum(),
        |p| p.iter().map(vector::Array::len).sum(),
    );
    Ok(Some((
        pieces,
        rows,
        output(plan, ctx, access, runs, Vec::new()),
    )))
}

/// Runs a plan and collects its rows.
///
/// # Errors
/// As [`execute`].
pub fn execute_collect(plan: &QueryPlan, ctx: &Context<'_>) -> Result<(Vec<Vec<Value>>, Output)> {
    let mut rows = Vec::new();
    let out = execute(plan, ctx, &mut |batch| {
        ctx.reserve(row_bytes(&batch), || {
            format!("{} result rows", rows.len() + batch.len())
        })?;
        if rows.is_empty() {
            rows = batch;
        } else {
            rows.extend(batch);
        }
        Ok(true)
    })?;
    Ok((rows, out))
}

/// Approximate heap bytes of result rows.
fn row_bytes(rows: &[Vec<Value>]) -> usize {
    rows.par_iter()
        .map(|r| {
            24 + r.len() * 24
                + r.iter()
                    .map(|v| match v {
                        Value::Str(s) => s.len() + 16,
                        _ => 0,
                    })
                    .sum::<usize>()
        })
        .sum()
}

fn aggregate_query(
    plan: &QueryPlan,
    agg: &crate::plan::Aggregate,
    ctx: &Context<'_>,
    units: &[access::Unit],
    sink: Sink<'_>,
    notes: &mut Vec<String>,
    phases: &mut Vec<(&'static str, String, Duration)>,
) -> Result<Vec<PartRun>> {
    let (runs, chunks) = aggregate_chunks(plan, agg, ctx, units, notes, phases)?;
    let start = Instant::now();
    ctx.cancel.check()?;
    if !plan.order_by.is_empty() {
        ctx.enter_phase(Phase::Sort, chunks.iter().map(|c| c.groups).sum());
    }
    let (rows, total) = finish::aggregate_rows(plan, agg, chunks, ctx.preview_rows)?;
    phases.push((
        "finish: HAVING, outputs, ORDER BY, LIMIT",
        format!("{total} result rows"),
        start.elapsed(),
    ));
    if let Ok(mut t) = ctx.state.result_rows.lock() {
        *t = Some(total);
    }
    ctx.reserve(row_bytes(&rows), || format!("{} result rows", rows.len()))?;
    if !rows.is_empty() {
        sink(rows)?;
    }
    Ok(runs)
}

/// The partitions' partial aggregates, merged: each partition's run record
/// and the merged groups in chunks (a group in exactly one chunk).
///
/// # Errors
/// As [`execute`].
fn aggregate_chunks<'p>(
    plan: &'p QueryPlan,
    agg: &crate::plan::Aggregate,
    ctx: &Context<'_>,
    units: &[access::Unit],
    notes: &mut Vec<String>,
    phases: &mut Vec<(&'static str, String, Duration)>,
) -> Result<(Vec<PartRun>, Vec<Partial<'p>>)> {
    let parts = &plan.table.partitions;
    let groups_so_far = AtomicU64::new(0);
    let start = Instant::now();
    let shared = SharedKey::choose(agg, &plan.table, &ctx.options, units.len());
    let packing = PackedKeys::choose(agg, &plan.table);
    let results: Vec<(PartRun, Option<Partial<'_>>)> = match &shared {
        Some(key) => shared_runs(plan, agg, ctx, units, key)?,
        None => units
            .par_iter()
            .map(|u| {
                ctx.cancel.check()?;
                let p = &parts[u.part];
                let mut run = PartRun::new(u.part, ctx.tracing);
                let sel = filter_partition(plan, p, u.initial.clone(), &mut run)?;
                let Some(sel) = sel else {
                    ctx.progress_rows(p.rows);
                    return Ok((run, None));
                };
                let (keys, aggs) = specialize_aggregate(agg, p);
                let rows = match &sel {
                    Some(s) => Rows::some(s),
                    None => Rows::all(p.rows),
                };
                let partial = aggregate_partition(
                    &keys,
                    &aggs,
                    p,
                    rows,
                    &ctx.options,
                    packing.as_ref(),
                    &mut run.trace,
                )?;
                let groups = groups_so_far.fetch_add(partial.groups as u64, Ordering::Relaxed)
                    + partial.groups as u64;
                ctx.reserve(partial.heap_bytes(), || {
                    format!("{} groups", human_count(groups as usize))
                })?;
                ctx.progress_rows(p.rows);
                Ok((run, Some(partial)))
            })
            .collect::<Result<_>>()?,
    };
    let mut runs = Vec::with_capacity(results.len());
    let mut partials = Vec::with_capacity(results.len());
    for (r, p) in results {
        runs.push(r);
        partials.extend(p);
    }
    let groups: usize = partials.iter().map(|p| p.groups).sum();
    phases.push((
        "partitions: filter and partial aggregate",
        format!(
            "{} partitions, {} rows selected → {} partial groups",
            runs.len(),
            runs.iter().map(|r| r.selected).sum::<usize>(),
            groups
        ),
        start.elapsed(),
    ));
    let start = Instant::now();
    let bytes: usize = partials.iter().map(Partial::heap_bytes).sum();
    ctx.reserve(bytes, || format!("{} groups", human_count(groups)))?;
    let partials = match unordered_window(plan, agg) {
        Some(k) if !agg.keys.is_empty() && k < groups => {
            let before = groups;
            let kept = keep_first_keys(partials, k, &ctx.cancel)?;
            let after: usize = kept.iter().map(|p| p.groups).sum();
            notes.push(format!(
                "merge: LIMIT without ORDER BY: only the first {k} keys in partition order \
                 merged ({after} of {before} partial groups)"
            ));
            kept
        }
        _ => partials,
    };
    ctx.enter_phase(Phase::Merge, groups);
    let (chunks, how) = match &packing {
        Some(packing) => {
            let partials = packing.pack(partials)?;
            let packed = partials.iter().all(|p| p.keys.len() == 1);
            let nkeys = if packed { 1 } else { agg.keys.len() };
            let (mut chunks, how) = merge_partials(partials, nkeys, &ctx.options, &ctx.cancel)?;
            if packed {
                packing.unpack(&mut chunks);
                let n = packing.len();
                (
                    chunks,
                    format!("{n} keys packed into one integer of table-wide slots; {how}"),
                )
            } else {
                (chunks, how)
            }
        }
        None => merge_partials(partials, agg.keys.len(), &ctx.options, &ctx.cancel)?,
    };
    notes.push(format!("merge: {how}"));
    phases.push((
        "merge",
        format!(
            "{groups} partial groups → {} groups",
            chunks.iter().map(|c| c.groups).sum::<usize>()
        ),
        start.elapsed(),
    ));
    Ok((runs, chunks))
}

/// The partitions of `units` grouped by a [`SharedKey`]: dealt into
/// [`shared::runs_for`] runs of consecutive partitions, each run folded
/// into one array of states on one worker. Every partition gets its
/// record; the run's partial rides on its last partition's.
///
/// # Errors
/// As [`aggregate_query`].
fn shared_runs<'p>(
    plan: &'p QueryPlan,
    agg: &crate::plan::Aggregate,
    ctx: &Context<'_>,
    units: &[access::Unit],
    key: &SharedKey<'p>,
) -> Result<Vec<(PartRun, Option<Partial<'p>>)>> {
    let parts = &plan.table.partitions;
    let per_run = units.len().div_ceil(shared::runs_for(units.len()));
    let runs: Vec<Vec<(PartRun, Option<Partial<'p>>)>> = units
        .par_chunks(per_run)
        .map(|chunk| {
            let mut groups = SharedGroups::new(key, &agg.aggs)?;
            ctx.reserve(groups.heap_bytes(), || {
                format!("{} group states", human_count(key.slots()))
            })?;
            let mut out: Vec<(PartRun, Option<Partial<'p>>)> = Vec::with_capacity(chunk.len());
            for u in chunk {
                ctx.cancel.check()?;
                let p = &parts[u.part];
                let mut run = PartRun::new(u.part, ctx.tracing);
                if let Some(sel) = filter_partition(plan, p, u.initial.clone(), &mut run)? {
                    let (_, aggs) = specialize_aggregate(agg, p);
                    let rows = match &sel {
                        Some(s) => Rows::some(s),
                        None => Rows::all(p.rows),
                    };
                    groups.add(&aggs, p, rows, &mut run.trace)?;
                }
                ctx.progress_rows(p.rows);
                out.push((run, None));
            }
            if let Some(last) = out.last_mut() {
                last.1 = Some(groups.finish());
            }
            Ok(out)
        })
        .collect::<Result<_>>()?;
    Ok(runs.into_iter().flatten().collect())
}

/// The group keys and aggregate calls of `agg` specialized to partition
/// `p` (constants of the partition folded in: [`specialize`]).
fn specialize_aggregate(agg: &plan::Aggregate, p: &Partition) -> (Vec<Expr>, Vec<AggCall>) {
    let keys = agg
        .keys
        .iter()
        .map(|k| specialize(k, p).into_owned())
        .collect();
    let aggs = agg
        .aggs
        .iter()
        .map(|a| AggCall {
            arg: a.arg.as_ref().map(|e| specialize(e, p).into_owned()),
            arg2: a.arg2.as_ref().map(|e| specialize(e, p).into_owned()),
            ..a.clone()
        })
        .collect();
    (keys, aggs)
}

/// For `LIMIT n [OFFSET m]` without ORDER BY or HAVING, `n + m`: any that
/// many groups are a right answer, so only the first ones need merging.
/// `None` otherwise, and when an aggregate could fail on a group left out
/// (an integer sum's overflow is an error for the whole query).
fn unordered_window(plan: &QueryPlan, agg: &plan::Aggregate) -> Option<usize> {
    let limit = usize::try_from(plan.limit?).ok()?;
    let exact = agg.aggs.iter().all(|a| match a.func {
        AggFunc::Sum | AggFunc::Avg => a.arg.as_ref().is_some_and(|e| e.dtype() == DataType::Float),
        _ => true,
    });
    (plan.order_by.is_empty() && plan.having.is_none() && exact)
        .then(|| limit.saturating_add(usize::try_from(plan.offset).unwrap_or(usize::MAX)))
}

/// `48M`, `1.2K`, `950`: a count for messages.
fn human_count(n: usize) -> String {
    match n {
        n if n >= 1_000_000_000 => format!("{:.1}G", n as f64 / 1e9),
        n if n >= 1_000_000 => format!("{}M", n / 1_000_000),
        n if n >= 10_000 => format!("{}K", n / 1_000),
        n => n.to_string(),
    }
}

/// EXPLAIN text, compiled without reading a row: the logical plan, the
/// operators above the partitions with the strategies the plan, codecs
/// and zone maps decide, and one block per distinct partition pipeline
/// shape (zone-map pruning, codec filters, group keys and grouping,
/// aggregate kernels, sort keys). Choices made on the rows (densifying
/// codes, top-n thresholds, the merge's strategy, early stops, hash-index
/// lookups) are named as run-time choices; EXPLAIN ANALYZE shows them.
///
/// # Errors
/// A plan that cannot run (OFFSET with a negative LIMIT).
pub fn explain(plan: &QueryPlan, opts: &ExecOptions) -> Result<String> {
    check_runnable(plan)?;
    let access = access::access_path(plan, &NoIndexes);
    let shared = plan
        .aggregate
        .as_ref()
        .and_then(|agg| SharedKey::choose(agg, &plan.table, opts, access.units.len()));
    let mut traces: Vec<(usize, Trace)> = access
        .units
        .iter()
        .map(|u| (u.part, compiled_shape(plan, u, opts, shared.as_ref())))
        .collect();
    for (i, reason) in &access.pruned {
        traces.push((*i, project::pruned_run(*i, reason).trace));
    }
    traces.sort_by_key(|t| t.0);
    let operators = match &plan.aggregate {
        Some(_) => vec![
            "finish: HAVING, outputs, ORDER BY, LIMIT over the merged groups".to_string(),
            match &shared {
                Some(key) => format!(
                    "merge: one partial per worker run of partitions, merged by slot ({} slots, no hashing)",
                    key.slots()
                ),
                None => "merge: partial groups of every partition merged (by key ranges, a fixed array or radix-partitioned hashing, chosen from the partials at run time)".to_string(),
            },
            match &shared {
                Some(_) => format!(
                    "partitions: {} in {} worker runs of consecutive partitions, each a compiled pipeline",
                    access.units.len(),
                    shared::runs_for(access.units.len())
                ),
                None => format!("partitions: {} in parallel, each a compiled pipeline", access.units.len()),
            },
        ],
        None => vec![
            project::scan_strategy(plan, &access.units, opts).describe().to_string(),
            format!("partitions: {} in parallel, each a compiled pipeline", access.units.len()),
        ],
    };
    let mut notes = Vec::new();
    if plan.filter.as_ref().is_some_and(|f| {
        filter::conjuncts(f)
            .iter()
            .any(|c| filter::point_lookup(c).is_some())
    }) {
        notes.push(
            "access: a point lookup; a hash index on its column narrows the partitions at run time once one is built"
                .to_string(),
        );
    }
    Ok(explain::render_compiled(plan, &operators, traces, &notes))
}

/// The pipeline compiled for unit `u`, from codecs and zone maps alone.
fn compiled_shape(
    plan: &QueryPlan,
    u: &access::Unit,
    opts: &ExecOptions,
    shared: Option<&SharedKey<'_>>,
) -> Trace {
    let p = &plan.table.partitions[u.part];
    let mut trace = Trace::new(true);
    let filtered = match compile_filter(plan.filter.as_ref(), p, &mut trace) {
        CompiledFilter::Skip => return trace,
        CompiledFilter::Steps(steps) => !steps.is_empty() || u.initial.is_some(),
    };
    if let Some(agg) = &plan.aggregate {
        let (keys, aggs) = specialize_aggregate(agg, p);
        match shared {
            Some(key) => shared::describe_partition(key, &aggs, p, filtered, &mut trace),
            None => aggregate::describe_partition(&keys, &aggs, p, filtered, opts, &mut trace),
        }
    } else if !plan.order_by.is_empty() {
        for key in &plan.order_by {
            let e = specialize(&plan.outputs[key.column], p);
            match e.as_ref() {
                Expr::Column { index, name, .. } => trace.add(
                    format!("top-n candidates: sort key {name} on its codec"),
                    p.columns[*index].encoding_name(),
                ),
                e => trace.add(
                    format!("top-n candidates: sort key {e} evaluated"),
                    String::new(),
                ),
            }
        }
    } else {
        trace.add(
            format!(
                "project: {} output{} at the selected rows",
                plan.visible,
                if plan.visible == 1 { "" } else { "s" }
            ),
            String::new(),
        );
    }
    trace
}

/// EXPLAIN ANALYZE text: runs the query (its rows are dropped) and renders
/// the plan with every partition's choices, the runtime notes (merge
/// strategy, early stops) and per phase what went in and out and its time.
///
/// # Errors
/// As [`execute`].
pub fn explain_analyze(plan: &QueryPlan, ctx: &mut Context<'_>) -> Result<String> {
    ctx.tracing = true;
    let start = Instant::now();
    let out = execute(plan, ctx, &mut |_| Ok(true))?;
    Ok(explain::render_analyzed(plan, out, start.elapsed()))
}

/// The errors a plan gives before it reads anything.
fn check_runnable(plan: &QueryPlan) -> Result<()> {
    if plan.limit.is_some_and(|l| l < 0) && plan.offset > 0 {
        return Err(Error::plan(
            "OFFSET cannot be combined with a negative LIMIT",
        ));
    }
    Ok(())
}

/// An index provider that offers none: EXPLAIN builds no index.
struct NoIndexes;

impl IndexProvider for NoIndexes {
    fn hash_index(
        &self,
        _table: &Arc<crate::store::Table>,
        _column: usize,
    ) -> Option<Arc<crate::store::HashIndex>> {
        None
    }
}

/// Types of the visible outputs.
pub fn output_types(plan: &QueryPlan) -> Vec<DataType> {
    plan.outputs[..plan.visible]
        .iter()
        .map(Expr::dtype)
        .collect()
}
