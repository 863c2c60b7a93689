//! Queries without aggregates: a scan that streams rows in load order, or a
//! top-n / sort, with outputs evaluated only for the rows returned.
//!
//! # Design
//! - Without ORDER BY, partitions run in waves in load order: a wave is
//!   filtered in parallel, the OFFSET/LIMIT window is laid over its
//!   selections in order, the outputs are evaluated (in parallel) only for
//!   the rows inside the window, and the rows go to the sink before the
//!   next wave starts. A LIMIT stops the scan once it is filled; a sink
//!   that asks to stop (a closed pipe) stops it too. `LIMIT -n` runs the
//!   waves from the last partition backwards.
//! - With ORDER BY, every partition keeps its top `offset + limit`
//!   candidates by the full sort key ([`super::topn`]); the candidates are
//!   merged, the window is taken, and only then are the outputs evaluated,
//!   partition by partition, for the rows returned (late materialization).
//!   With one sort key whose codes can be counted in every partition,
//!   histograms of the key place the window instead and only its rows are
//!   collected (no candidates). When the first sort key is a column that
//!   ascends in load order, waves
//!   run from the end that holds the best rows and stop once no unread
//!   partition can beat the current `n`-th best; any other plain column
//!   as the first key (and a small `offset + limit`) reads partitions in
//!   order of their zone-map bound, best first, and stops the same way.

use rayon::prelude::*;

use crate::error::Result;
use crate::plan::{Expr, QueryPlan};
use crate::store::Partition;
use crate::types::Value;

use super::access::Unit;
use super::filter::specialize;
use super::join_filter::{self, JoinFilter};
use super::topn::{
    Candidate, KeyHistogram, collect_slices, histogram_fits, keep_best, key_histogram,
    partition_top, partition_top_normalized, window_candidates, window_slices,
};
use super::vector::{Array, Datum, Rows, eval, order_values};
use super::{Context, ExecOptions, PartRun, Sink, filter_partition, finish};

/// Evaluates the visible outputs of `plan` at `rows` of `part`, as rows.
///
/// # Errors
/// Output evaluation errors (every row evaluated is returned).
fn materialize(plan: &QueryPlan, part: &Partition, rows: Rows<'_>) -> Result<Vec<Vec<Value>>> {
    let mut cols: Vec<Datum<'_>> = Vec::with_capacity(plan.visible);
    for e in &plan.outputs[..plan.visible] {
        cols.push(eval(&specialize(e, part), part, rows)?);
    }
    Ok((0..rows.len)
        .map(|j| cols.iter().map(|c| c.value(j)).collect())
        .collect())
}

/// Runs a query without aggregates, handing rows to `sink`.
///
/// # Errors
/// Filter, sort-key and output errors; [`crate::Error::Cancelled`].
pub fn run(
    plan: &QueryPlan,
    ctx: &Context<'_>,
    units: &[Unit],
    sink: Sink<'_>,
) -> Result<Vec<PartRun>> {
    if plan.order_by.is_empty() {
        if plan.limit.is_some_and(|l| l < 0) {
            return last_rows(plan, ctx, units, sink);
        }
        return scan(plan, ctx, units, sink);
    }
    sorted(plan, ctx, units, sink)
}

/// Partitions per wave: enough to keep every thread busy.
fn wave_size(limited: bool) -> usize {
    let t = rayon::current_num_threads().max(1);
    if limited { t } else { 4 * t }
}

/// Filters a wave of units in parallel: per unit, its run record and its
/// selection (`None`: skipped).
#[allow(clippy::type_complexity)]
fn filter_wave(
    plan: &QueryPlan,
    ctx: &Context<'_>,
    wave: &[&Unit],
    join_filters: &[JoinFilter],
) -> Result<Vec<(PartRun, Option<Vec<u32>>)>> {
    wave.par_iter()
        .map(|u| {
            let part = &plan.table.partitions[u.part];
            let rows = part.rows;
            let (run, mut sel) = filter_unit(plan, ctx, u)?;
            if !join_filters.is_empty() {
                sel = join_filter::narrow(join_filters, part, sel)?;
            }
            let sel = sel.map(|s| s.unwrap_or_else(|| (0..rows as u32).collect()));
            Ok((run, sel))
        })
        .collect()
}

/// Streams the rows of a scan in load order.
fn scan(
    plan: &QueryPlan,
    ctx: &Context<'_>,
    units: &[Unit],
    sink: Sink<'_>,
) -> Result<Vec<PartRun>> {
    let mut offset = usize::try_from(plan.offset).unwrap_or(usize::MAX);
    let mut remaining = plan
        .limit
        .map_or(usize::MAX, |l| usize::try_from(l).unwrap_or(usize::MAX));
    let order: Vec<&Unit> = units.iter().collect();
    let mut runs = Vec::new();
    let mut read = 0;
    for wave in order.chunks(wave_size(plan.limit.is_some())) {
        if remaining == 0 {
            break;
        }
        let filtered = filter_wave(plan, ctx, wave, &[])?;
        read += wave.len();
        // Lay the window over the wave's selections in order.
        let mut work: Vec<(usize, Vec<u32>)> = Vec::new();
        for (run, sel) in filtered {
            let part = run.part;
            runs.push(run);
            let Some(mut sel) = sel else { continue };
            let skip = offset.min(sel.len());
            offset -= skip;
            sel.drain(..skip);
            sel.truncate(remaining);
            remaining -= sel.len();
            if !sel.is_empty() {
                work.push((part, sel));
            }
        }
        let rows: Vec<Vec<Vec<Value>>> = work
            .par_iter()
            .map(|(part, sel)| materialize(plan, &plan.table.partitions[*part], Rows::some(sel)))
            .collect::<Result<_>>()?;
        for r in rows {
            if !r.is_empty() && !sink(r)? {
                return Ok(runs);
            }
        }
    }
    if read < units.len()
        && let Some(r) = runs.last_mut()
    {
        r.trace.add(
            "early stop: enough rows found",
            format!("{} partitions not read", units.len() - read),
        );
    }
    Ok(runs)
}

/// Runs a plan without aggregates, ORDER BY, LIMIT or OFFSET into whole
/// columns, one [`Array`] per visible output holding every result row in
/// load order: per partition the outputs are evaluated at the selected
/// rows and made owned (strings copied into one buffer, never a `Value`
/// per cell), then the pieces are joined. The scan under a join or a
/// window, which reads millions of rows that a row-at-a-time result would
/// box one by one.
///
/// # Errors
/// Filter and output errors; [`crate::Error::Cancelled`];
/// [`crate::Error::MemoryLimit`] as the pieces grow.
pub fn scan_columns(
    plan: &QueryPlan,
    ctx: &Context<'_>,
    units: &[Unit],
    join_filters: &[JoinFilter],
) -> Result<(Vec<Array<'static>>, Vec<PartRun>)> {
    let (pieces, runs) = scan_pieces(plan, ctx, units, join_filters)?;
    let arrays = pieces
        .into_par_iter()
        .zip(super::output_types(plan))
        .map(|(parts, t)| Array::concat(t, parts))
        .collect();
    Ok((arrays, runs))
}

/// The dictionary of column `e` in partition `p` when the table's first
/// partition shares it (a table-wide dictionary).
fn table_dictionary<'p>(
    plan: &QueryPlan,
    p: &'p Partition,
    e: &Expr,
) -> Option<&'p std::sync::Arc<crate::store::Dictionary>> {
    let Expr::Column { index, .. } = e else {
        return None;
    };
    let crate::store::ColumnData::Dict { dict, .. } = &p.columns[*index].data else {
        return None;
    };
    match &plan.table.partitions.first()?.columns[*index].data {
        crate::store::ColumnData::Dict { dict: first, .. }
            if std::sync::Arc::ptr_eq(first, dict) =>
        {
            Some(dict)
        }
        _ => None,
    }
}

/// [`scan_columns`] before the pieces are joined: per visible output, one
/// array per partition with selected rows, in partition order (Arrow
/// results make each a batch, without copying them again).
///
/// # Errors
/// As [`scan_columns`].
pub fn scan_pieces(
    plan: &QueryPlan,
    ctx: &Context<'_>,
    units: &[Unit],
    join_filters: &[JoinFilter],
) -> Result<(Vec<Vec<Array<'static>>>, Vec<PartRun>)> {
    let types = super::output_types(plan);
    let mut pieces: Vec<Vec<Array<'static>>> = vec![Vec::new(); plan.visible];
    let mut runs = Vec::new();
    let mut held = 0usize;
    let order: Vec<&Unit> = units.iter().collect();
    for wave in order.chunks(wave_size(false)) {
        let filtered = filter_wave(plan, ctx, wave, join_filters)?;
        let mut work: Vec<(usize, Vec<u32>)> = Vec::new();
        for (run, sel) in filtered {
            let part = run.part;
            runs.push(run);
            if let Some(sel) = sel.filter(|s| !s.is_empty()) {
                work.push((part, sel));
            }
        }
        let columns: Vec<Vec<Array<'static>>> = work
            .par_iter()
            .map(|(part, sel)| {
                let p = &plan.table.partitions[*part];
                let rows = Rows::some(sel);
                plan.outputs[..plan.visible]
                    .iter()
                    .zip(&types)
                    .map(|(e, &t)| {
                        let e = specialize(e, p);
                        Ok(match eval(&e, p, rows)? {
                            Datum::Scalar(v) => Array::repeat(t, &v, rows.len),
                            Datum::Array(a) => match table_dictionary(plan, p, &e) {
                                // A column of a table-wide dictionary keeps
                                // its codes (perf of shapes window_top3_s1m:
                                // its 1M-string key decoded per row, then
                                // hashed back to codes, was 40% of it).
                                Some(dict) => a.holding_dictionary(dict).into_static(),
                                None => a.into_static(),
                            },
                        })
                    })
                    .collect()
            })
            .collect::<Result<_>>()?;
        let bytes: usize = columns.iter().flatten().map(Array::heap_bytes).sum();
        held += bytes;
        ctx.reserve(bytes, || format!("{} MB of scanned columns", held >> 20))?;
        for part in columns {
            for (c, a) in part.into_iter().enumerate() {
                pieces[c].push(a);
            }
        }
    }
    Ok((pieces, runs))
}

/// `LIMIT -n`: the last `n` rows in load order, found from the end.
fn last_rows(
    plan: &QueryPlan,
    ctx: &Context<'_>,
    units: &[Unit],
    sink: Sink<'_>,
) -> Result<Vec<PartRun>> {
    let want = plan.limit.map_or(0, |l| {
        usize::try_from(l.unsigned_abs()).unwrap_or(usize::MAX)
    });
    let order: Vec<&Unit> = units.iter().rev().collect();
    let mut runs = Vec::new();
    let mut picked: Vec<(usize, Vec<u32>)> = Vec::new();
    let mut found = 0usize;
    let mut read = 0;
    for wave in order.chunks(wave_size(true)) {
        if found >= want {
            break;
        }
        read += wave.len();
        for (run, sel) in filter_wave(plan, ctx, wave, &[])? {
            let part = run.part;
            runs.push(run);
            let Some(mut sel) = sel else { continue };
            let need = want - found;
            let cut = sel.len().saturating_sub(need);
            sel.drain(..cut);
            found += sel.len();
            if !sel.is_empty() {
                picked.push((part, sel));
            }
            if found >= want {
                break;
            }
        }
    }
    if read < units.len()
        && let Some(r) = runs.last_mut()
    {
        r.trace.add(
            "early stop: enough rows found",
            format!("{} partitions not read", units.len() - read),
        );
    }
    picked.reverse();
    let rows: Vec<Vec<Vec<Value>>> = picked
        .par_iter()
        .map(|(part, sel)| materialize(plan, &plan.table.partitions[*part], Rows::some(sel)))
        .collect::<Result<_>>()?;
    for r in rows {
        if !r.is_empty() && !sink(r)? {
            break;
        }
    }
    runs.sort_by_key(|r| r.part);
    Ok(runs)
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

/// How a query without aggregates reads its partitions, decided from the
/// plan, the codecs and the zone maps before a row is read (execution and
/// EXPLAIN share it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScanStrategy {
    /// No ORDER BY: partitions in load order, stopping once LIMIT rows
    /// are found.
    LoadOrder,
    /// `LIMIT -n`: partitions from the end until `n` rows are found.
    LastRows,
    /// The first sort key never decreases in load order (output column
    /// index `.0` of the table): partitions from the best end, stopping
    /// when no unread one can enter the top n.
    Monotone(usize),
    /// One sort key whose codes every partition can count: histograms
    /// place the window and only its rows are read.
    Histograms,
    /// One integer or float key without NULLs and a large window: each
    /// partition keeps its best rows as order-preserving u64 keys (a
    /// partition that cannot falls back to [`ScanStrategy::AllPartitions`]).
    Normalized,
    /// A plain column as first key and a small window: partitions read
    /// best zone-map bound first, with early stop (table column `.0`).
    ZoneMapOrder(usize),
    /// Top-n candidates from every partition, merged.
    AllPartitions,
}

impl ScanStrategy {
    /// The operator line EXPLAIN prints for the strategy.
    pub fn describe(self) -> &'static str {
        match self {
            ScanStrategy::LoadOrder => {
                "scan: partitions in load order, stop once LIMIT rows are found"
            }
            ScanStrategy::LastRows => {
                "scan: partitions from the end, stop once the last rows are found"
            }
            ScanStrategy::Monotone(_) => {
                "top-n: sort key ascends in load order, partitions read from the best end with early stop"
            }
            ScanStrategy::Histograms => {
                "top-n: per-partition histograms of the key's codes place the window, only its rows read"
            }
            ScanStrategy::Normalized => {
                "top-n: best rows per partition as order-preserving u64 keys, window cut by selection"
            }
            ScanStrategy::ZoneMapOrder(_) => {
                "top-n: partitions read best zone-map bound first, running threshold, early stop"
            }
            ScanStrategy::AllPartitions => {
                "sort: candidates of every partition merged, then windowed"
            }
        }
    }
}

/// Whether a sort key column's rows can be order-preserving u64 keys: an
/// integer, float or timestamp column without NULLs.
fn normalizes(col: &crate::store::Column) -> bool {
    col.validity.is_none()
        && matches!(
            col.dtype,
            crate::types::DataType::Int
                | crate::types::DataType::Float
                | crate::types::DataType::Timestamp
        )
}

/// `offset + limit` of a plan with ORDER BY: the rows a top-n keeps
/// (`usize::MAX` without a LIMIT).
fn top_k(plan: &QueryPlan) -> usize {
    match plan.limit {
        Some(l) if l >= 0 => usize::try_from(l)
            .unwrap_or(usize::MAX)
            .saturating_add(usize::try_from(plan.offset).unwrap_or(usize::MAX)),
        _ => usize::MAX,
    }
}

/// The strategy of a plan without aggregates over `units`.
pub fn scan_strategy(plan: &QueryPlan, units: &[Unit], opts: &ExecOptions) -> ScanStrategy {
    if plan.order_by.is_empty() {
        return if plan.limit.is_some_and(|l| l < 0) {
            ScanStrategy::LastRows
        } else {
            ScanStrategy::LoadOrder
        };
    }
    let k = top_k(plan);
    if k == usize::MAX {
        return ScanStrategy::AllPartitions;
    }
    if let Some(col) = monotone_sort_column(plan) {
        return ScanStrategy::Monotone(col);
    }
    let parts = &plan.table.partitions;
    let single = match plan.order_by[..] {
        [key] => match &plan.outputs[key.column] {
            Expr::Column { index, .. } => Some(*index),
            _ => None,
        },
        _ => None,
    };
    if let Some(index) = single {
        if units
            .iter()
            .all(|u| histogram_fits(&parts[u.part].columns[index], opts.histogram_max_codes))
        {
            return ScanStrategy::Histograms;
        }
        if k >= opts.normalized_min_k
            && units
                .iter()
                .all(|u| normalizes(&parts[u.part].columns[index]))
        {
            return ScanStrategy::Normalized;
        }
    }
    match &plan.outputs[plan.order_by[0].column] {
        Expr::Column { index, .. } if k <= opts.bound_order_max_k => {
            ScanStrategy::ZoneMapOrder(*index)
        }
        _ => ScanStrategy::AllPartitions,
    }
}

/// ORDER BY (with or without LIMIT): top-n candidates per partition, merged,
/// windowed, then materialized.
fn sorted(
    plan: &QueryPlan,
    ctx: &Context<'_>,
    units: &[Unit],
    sink: Sink<'_>,
) -> Result<Vec<PartRun>> {
    let k = top_k(plan);
    let keys_of = |p: &Partition| -> Vec<(Expr, crate::plan::SortKey)> {
        plan.order_by
            .iter()
            .map(|s| (specialize(&plan.outputs[s.column], p).into_owned(), *s))
            .collect()
    };
    let run_unit = |u: &Unit, floor: Option<&Value>| -> Result<(PartRun, Vec<Candidate>)> {
        let p = &plan.table.partitions[u.part];
        let (mut run, sel) = filter_unit(plan, ctx, u)?;
        let Some(sel) = sel else {
            return Ok((run, Vec::new()));
        };
        let rows = rows_of(&sel, p.rows);
        let c = partition_top(&keys_of(p), p, u.part, rows, k, floor, &mut run.trace)?;
        Ok((run, c))
    };
    let strategy = scan_strategy(plan, units, &ctx.options);
    if strategy == ScanStrategy::Histograms
        && let Some(runs) = sorted_by_histograms(plan, ctx, units, sink)?
    {
        return Ok(runs);
    }
    if strategy == ScanStrategy::Normalized
        && let Some(runs) = sorted_by_normalized_key(plan, ctx, units, k, sink)?
    {
        return Ok(runs);
    }
    let mut runs: Vec<PartRun> = Vec::new();
    let mut candidates: Vec<Candidate> = Vec::new();
    // With a LIMIT and a plain column as the first key, partitions are
    // read best zone-map bound first, so the ones that cannot enter the
    // top n come last and are never read (perf: `ORDER BY u LIMIT 10` over
    // a unique random u read all 153 partitions of a 10M-row table, 2.2x
    // DuckDB's time). A normalized top-n that a partition refused lands
    // here too, and orders by bound when the window allows.
    let (monotone, by_bound) = match strategy {
        ScanStrategy::Monotone(col) => (Some(col), None),
        ScanStrategy::ZoneMapOrder(col) => (None, Some(col)),
        ScanStrategy::Normalized => match &plan.outputs[plan.order_by[0].column] {
            Expr::Column { index, .. } if k <= ctx.options.bound_order_max_k => {
                (None, Some(*index))
            }
            _ => (None, None),
        },
        _ => (None, None),
    };
    match monotone.or(by_bound) {
        None => {
            let results: Vec<(PartRun, Vec<Candidate>)> = units
                .par_iter()
                .map(|u| run_unit(u, None))
                .collect::<Result<_>>()?;
            for (r, c) in results {
                runs.push(r);
                candidates.extend(c);
            }
        }
        Some(col) => {
            let key = plan.order_by[0];
            let backwards = key.desc && by_bound.is_none();
            let bound_of = |u: &Unit| {
                best_possible(
                    std::iter::once(&plan.table.partitions[u.part].columns[col]),
                    key,
                )
            };
            let order: Vec<&Unit> = if by_bound.is_some() {
                // Best bound first; a partition without values last.
                let mut keyed: Vec<(Option<Value>, &Unit)> =
                    units.iter().map(|u| (bound_of(u), u)).collect();
                keyed.sort_by(|a, b| match (&a.0, &b.0) {
                    (Some(x), Some(y)) => order_values(x, y, key.desc, key.nulls_first),
                    (x, y) => y.is_some().cmp(&x.is_some()),
                });
                keyed.into_iter().map(|(_, u)| u).collect()
            } else if backwards {
                units.iter().rev().collect()
            } else {
                units.iter().collect()
            };
            let mut read = 0;
            // The first key of the k-th best row so far.
            let mut nth: Option<Value> = None;
            for wave in order.chunks(wave_size(true)) {
                if k == 0 {
                    break;
                }
                // Against the next partition's bound.
                if let (Some(nth), Some(bound)) = (&nth, bound_of(wave[0]))
                    && order_values(&bound, nth, key.desc, key.nulls_first).is_gt()
                {
                    break;
                }
                let results: Vec<(PartRun, Vec<Candidate>)> = wave
                    .par_iter()
                    .map(|u| run_unit(u, nth.as_ref()))
                    .collect::<Result<_>>()?;
                for (r, c) in results {
                    runs.push(r);
                    candidates.extend(c);
                }
                nth = keep_best(&mut candidates, &plan.order_by, k);
                read += wave.len();
            }
            if read < units.len()
                && let Some(r) = runs.last_mut()
            {
                r.trace.add(
                    if by_bound.is_some() {
                        "early stop: partitions read best zone-map bound first, no unread partition can enter the top n"
                    } else {
                        "early stop: sort key ascends in load order, no unread partition can enter the top n"
                    },
                    format!("{} partitions not read", units.len() - read),
                );
            }
            runs.sort_by_key(|r| r.part);
        }
    }
    ctx.reserve(candidates.len() * (48 + 24 * plan.order_by.len()), || {
        format!("{} sort candidates", candidates.len())
    })?;
    let window = finish::window(plan, candidates.len());
    window_candidates(&mut candidates, &plan.order_by, window);
    emit_in_order(plan, candidates.iter().map(|c| (c.part, c.row)), sink)?;
    Ok(runs)
}

/// The best value a sort key can take in `cols` (one column per partition
/// to read), from their zone maps: the smallest minimum ascending, the
/// largest maximum descending, NULL where NULLs sort first and some column
/// has them. `None` when no column has a value.
fn best_possible<'c>(
    cols: impl Iterator<Item = &'c crate::store::Column>,
    key: crate::plan::SortKey,
) -> Option<Value> {
    let mut best: Option<Value> = None;
    for col in cols {
        let bound = if key.desc {
            &col.zone.max
        } else {
            &col.zone.min
        };
        let mut offer = |v: &Value| {
            if best
                .as_ref()
                .is_none_or(|b| order_values(v, b, key.desc, key.nulls_first).is_lt())
            {
                best = Some(v.clone());
            }
        };
        if !bound.is_null() {
            offer(bound);
        }
        if col.zone.null_count > 0 {
            offer(&Value::Null);
        }
    }
    best
}

/// Rows of histogram `h` whose value sorts equal to `best`.
fn rows_equal(h: &KeyHistogram, best: &Value, key: crate::plan::SortKey) -> usize {
    if best.is_null() {
        return h.nulls;
    }
    h.codes
        .iter()
        .filter(|c| order_values(&c.1, best, key.desc, key.nulls_first).is_eq())
        .map(|c| c.2)
        .sum()
}

/// ORDER BY one column whose codes can be counted in every partition, with
/// a LIMIT: the partitions' histograms place the window, and only its rows
/// are read (see [`super::topn`]). `None` when the plan does not fit.
fn sorted_by_histograms(
    plan: &QueryPlan,
    ctx: &Context<'_>,
    units: &[Unit],
    sink: Sink<'_>,
) -> Result<Option<Vec<PartRun>>> {
    let [key] = plan.order_by[..] else {
        return Ok(None);
    };
    let Expr::Column { index, name, .. } = &plan.outputs[key.column] else {
        return Ok(None);
    };
    let parts = &plan.table.partitions;
    if !units.iter().all(|u| {
        histogram_fits(
            &parts[u.part].columns[*index],
            ctx.options.histogram_max_codes,
        )
    }) {
        return Ok(None);
    }
    type Counted = (PartRun, Option<Vec<u32>>, Option<KeyHistogram>);
    let count = |u: &Unit| -> Result<Counted> {
        let p = &parts[u.part];
        let (run, sel) = filter_unit(plan, ctx, u)?;
        let Some(sel) = sel else {
            return Ok((run, None, None));
        };
        let hist = key_histogram(
            &p.columns[*index],
            rows_of(&sel, p.rows),
            ctx.options.histogram_max_codes,
        );
        Ok((run, sel, hist))
    };
    // Early stop: no row can sort before one holding the best value any
    // zone map allows, and ties keep partition order. Once the partitions
    // counted so far hold `offset + limit` rows of that value, the window
    // lies in them and the rest need not be read. Waves grow by doubling,
    // so a scan that never stops pays a handful of waits (perf: `ORDER BY
    // k4 LIMIT 10` over 10M rows, 40% of them tied at the first value,
    // counted all 153 partitions: 9.7 ms against DuckDB's 3.3).
    let stop_at = match plan.limit {
        Some(l) if l >= 0 => usize::try_from(l)
            .ok()
            .and_then(|l| l.checked_add(usize::try_from(plan.offset).ok()?)),
        _ => None,
    };
    let best = stop_at
        .and_then(|_| best_possible(units.iter().map(|u| &parts[u.part].columns[*index]), key));
    let mut counted: Vec<Counted> = Vec::with_capacity(units.len());
    let mut best_rows = 0usize;
    let mut wave = match best {
        Some(_) => rayon::current_num_threads().max(1) * 2,
        None => units.len(),
    };
    let mut done = 0;
    while done < units.len() {
        let end = (done + wave).min(units.len());
        let more: Vec<Counted> = units[done..end]
            .par_iter()
            .map(count)
            .collect::<Result<_>>()?;
        done = end;
        wave *= 2;
        if let Some(best) = &best {
            best_rows += more
                .iter()
                .filter_map(|c| c.2.as_ref())
                .map(|h| rows_equal(h, best, key))
                .sum::<usize>();
        }
        counted.extend(more);
        if stop_at.is_some_and(|k| best_rows >= k) {
            break;
        }
    }
    let empty = KeyHistogram {
        codes: Vec::new(),
        nulls: 0,
    };
    let hists: Vec<&KeyHistogram> = counted
        .iter()
        .map(|(_, _, h)| h.as_ref().unwrap_or(&empty))
        .collect();
    let total: usize = hists.iter().map(|h| h.rows()).sum();
    let window = finish::window(plan, total);
    let slices = window_slices(&hists, key, window.clone());
    let picked: Vec<(PartRun, Vec<(usize, u32)>)> = counted
        .into_par_iter()
        .zip(slices)
        .map(|((mut run, sel, _), slices)| {
            let p = &parts[run.part];
            let rows = rows_of(&sel, p.rows);
            let got = if slices.is_empty() {
                Vec::new()
            } else {
                collect_slices(&p.columns[*index], rows, &slices)
            };
            run.trace.add(
                format!(
                    "top-n: rows counted per code of {name} in every partition read, then only the window's rows collected"
                ),
                format!("{} of {} rows", got.len(), rows.len),
            );
            (run, got)
        })
        .collect();
    let mut order: Vec<(usize, usize, u32)> = Vec::with_capacity(window.len());
    let mut runs = Vec::with_capacity(picked.len());
    for (run, got) in picked {
        order.extend(got.into_iter().map(|(at, row)| (at, run.part, row)));
        runs.push(run);
    }
    order.sort_unstable();
    if order.len() != window.len() {
        return Err(crate::error::Error::Internal(format!(
            "top-n by histograms collected {} rows for a window of {}",
            order.len(),
            window.len()
        )));
    }
    emit_in_order(plan, order.into_iter().map(|(_, p, r)| (p, r)), sink)?;
    Ok(Some(runs))
}

/// Filters the partition of `u` after a cancel check, counting its rows as
/// done: the run record and the selection (`None`: the partition is ruled
/// out; `Some(None)`: every row).
fn filter_unit(
    plan: &QueryPlan,
    ctx: &Context<'_>,
    u: &Unit,
) -> Result<(PartRun, Option<Option<Vec<u32>>>)> {
    ctx.cancel.check()?;
    let p = &plan.table.partitions[u.part];
    let mut run = PartRun::new(u.part, ctx.tracing);
    let sel = filter_partition(plan, p, u.initial.clone(), &mut run)?;
    ctx.progress_rows(p.rows);
    Ok((run, sel))
}

/// The rows `sel` names in a partition of `n` rows (`None`: all of them).
fn rows_of(sel: &Option<Vec<u32>>, n: usize) -> Rows<'_> {
    match sel {
        Some(s) => Rows::some(s),
        None => Rows::all(n),
    }
}

/// ORDER BY one integer or float column without NULLs and a large window
/// (`LIMIT 10 OFFSET 100000`): each partition keeps its best `k` rows as
/// normalized keys ([`partition_top_normalized`]), two selections cut the
/// window out of all of them and only the window is sorted. `None` when
/// the plan does not fit.
fn sorted_by_normalized_key(
    plan: &QueryPlan,
    ctx: &Context<'_>,
    units: &[Unit],
    k: usize,
    sink: Sink<'_>,
) -> Result<Option<Vec<PartRun>>> {
    let [key] = plan.order_by[..] else {
        return Ok(None);
    };
    let Expr::Column { index, name, .. } = &plan.outputs[key.column] else {
        return Ok(None);
    };
    let parts = &plan.table.partitions;
    if !units
        .iter()
        .all(|u| normalizes(&parts[u.part].columns[*index]))
    {
        return Ok(None);
    }
    type Kept = (PartRun, Option<Vec<(u64, u32)>>);
    let kept: Vec<Kept> = units
        .par_iter()
        .map(|u| -> Result<Kept> {
            let p = &parts[u.part];
            let (mut run, sel) = filter_unit(plan, ctx, u)?;
            let Some(sel) = sel else {
                return Ok((run, Some(Vec::new())));
            };
            let rows = rows_of(&sel, p.rows);
            let spec = (specialize(&plan.outputs[key.column], p).into_owned(), key);
            let top = partition_top_normalized(&spec, p, rows, k)?;
            if let Some(t) = &top {
                run.trace.add(
                    format!("top-n: {name} as order-preserving u64, merged without candidates"),
                    format!("{} of {} rows kept", t.len(), rows.len),
                );
            }
            Ok((run, top))
        })
        .collect::<Result<_>>()?;
    if kept.iter().any(|(_, t)| t.is_none()) {
        return Ok(None);
    }
    let total: usize = kept
        .iter()
        .map(|(_, t)| t.as_ref().map_or(0, Vec::len))
        .sum();
    ctx.reserve(total * 16, || format!("{total} sort candidates"))?;
    let mut all: Vec<(u64, u32, u32)> = Vec::with_capacity(total);
    let mut runs = Vec::with_capacity(kept.len());
    for (run, top) in kept {
        let part = run.part as u32;
        all.extend(top.into_iter().flatten().map(|(x, row)| (x, part, row)));
        runs.push(run);
    }
    let window = finish::window(plan, all.len());
    if window.start > 0 && window.start < all.len() {
        all.select_nth_unstable(window.start);
    }
    let rest = &mut all[window.start..];
    if !window.is_empty() && window.len() < rest.len() {
        rest.select_nth_unstable(window.len() - 1);
    }
    let chosen = &mut all[window.clone()];
    chosen.sort_unstable();
    emit_in_order(plan, chosen.iter().map(|&(_, p, r)| (p as usize, r)), sink)?;
    Ok(Some(runs))
}

/// Materializes the rows `(partition, row)`, given in result order,
/// partition by partition (in parallel), and sends them in that order.
fn emit_in_order(
    plan: &QueryPlan,
    chosen: impl Iterator<Item = (usize, u32)>,
    sink: Sink<'_>,
) -> Result<()> {
    let mut by_part: Vec<(usize, Vec<(u32, usize)>)> = Vec::new();
    let mut count = 0;
    for (i, (part, row)) in chosen.enumerate() {
        count += 1;
        match by_part.iter_mut().find(|(p, _)| *p == part) {
            Some((_, v)) => v.push((row, i)),
            None => by_part.push((part, vec![(row, i)])),
        }
    }
    let mut out: Vec<Option<Vec<Value>>> = vec![None; count];
    let done: Vec<Vec<(usize, Vec<Value>)>> = by_part
        .par_iter_mut()
        .map(|(part, rows)| {
            rows.sort_unstable();
            let sel: Vec<u32> = rows.iter().map(|r| r.0).collect();
            let vals = materialize(plan, &plan.table.partitions[*part], Rows::some(&sel))?;
            Ok(rows.iter().map(|r| r.1).zip(vals).collect())
        })
        .collect::<Result<_>>()?;
    for (i, row) in done.into_iter().flatten() {
        out[i] = Some(row);
    }
    let rows: Vec<Vec<Value>> = out.into_iter().flatten().collect();
    if !rows.is_empty() {
        sink(rows)?;
    }
    Ok(())
}

/// A run record for partitions pruned before compiling (EXPLAIN).
pub fn pruned_run(part: usize, reason: &str) -> PartRun {
    let mut r = PartRun::new(part, true);
    r.trace.add(
        "skip partition: ruled out before compiling",
        reason.to_string(),
    );
    r
}
