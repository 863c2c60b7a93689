//! Window functions and `QUALIFY`.
//!
//! A SELECT with window functions runs in three steps:
//! ```text
//! 1. SELECT <inputs> FROM … WHERE … GROUP BY … HAVING …   (the query below
//!    the windows: every window's arguments, PARTITION BY and ORDER BY
//!    keys, and what the select list needs besides the windows)
//! 2. per window: its rows sorted by (partition keys, order keys), then one
//!    pass per partition computing the function for every row
//! 3. SELECT <items, windows read as columns> FROM <1 + 2> QUALIFY → WHERE,
//!    ORDER BY, LIMIT, DISTINCT
//! ```
//! Step 1 and 3 are ordinary SELECTs (the single-table pipeline or a join
//! below, grouping and top-n above). Step 2 follows Leis et al.,
//! "Efficient Processing of Window Functions in Analytical SQL Queries"
//! (VLDB 2015) in its simplest form: a sort per window specification,
//! ranking functions from partition and peer boundaries, and frame
//! aggregates by moving the frame's two ends forward (sums added and
//! removed, min and max in a monotonic deque), as every frame's start and
//! end only move forward from one row to the next.

use std::cmp::Ordering;
use std::collections::{HashMap, HashSet, VecDeque};
use std::time::Instant;

use rayon::prelude::*;

use super::keys::Part;
use super::{Columns, Composer, Produced, Scope, any_node, materialize, ms, thousands};
use crate::error::{Error, Result};
use crate::exec::aggregate::statistics::frame_answer;
use crate::exec::vector::{Array, Data, NO_ROW, Strs};
use crate::plan::AggFunc;
use crate::plan::expr::Fraction;
use crate::sql::ast::{
    Expr, ExprKind, FrameBound, FromItem, Ident, Literal, OrderByItem, Select, SelectItem, Span,
    TableRef, UnaryOp, WindowFrame, WindowSpec,
};
use crate::store::Bitmap;
use crate::types::{DataType, Value};

/// True when `select` has a window function or a QUALIFY clause.
pub(crate) fn has_windows(select: &Select) -> bool {
    if select.qualify.is_some() || !select.windows.is_empty() {
        return true;
    }
    let is_window = |e: &Expr| any_node(e, &|x| matches!(x.kind, ExprKind::Window { .. }));
    select.projection.iter().any(|item| match item {
        SelectItem::Expr { expr, .. } => is_window(expr),
        _ => false,
    }) || select.order_by.iter().any(|o| is_window(&o.expr))
}

/// A window function, its window resolved, and where its inputs are in
/// step 1's columns.
struct Call {
    /// The function name, lower case.
    name: String,
    /// Input columns of its arguments (`count(*)` has none); constant
    /// arguments (`lag`'s offset, `ntile`'s count) are in `constant`.
    args: Vec<usize>,
    /// `lag`/`lead` offset, `ntile` buckets, `nth_value` position.
    constant: Option<i64>,
    /// Input columns of the PARTITION BY keys.
    partition: Vec<usize>,
    /// Input columns of the ORDER BY keys, with direction and NULL order.
    order: Vec<(usize, bool, bool)>,
    /// The frame (the default one filled in).
    frame: WindowFrame,
    /// An aggregate other than count/sum/avg/min/max (a statistical or
    /// holistic one, `count(DISTINCT …)`): recomputed per frame.
    agg: Option<AggFunc>,
    /// `string_agg`'s separator.
    separator: String,
    /// Where the call is, for errors.
    span: Span,
}

/// The expressions step 1 computes, each once.
#[derive(Default)]
struct Inputs {
    exprs: Vec<Expr>,
    by_text: HashMap<String, usize>,
}

impl Inputs {
    fn add(&mut self, e: &Expr) -> usize {
        let text = e.to_string();
        if let Some(&i) = self.by_text.get(&text) {
            return i;
        }
        self.exprs.push(e.clone());
        self.by_text.insert(text, self.exprs.len() - 1);
        self.exprs.len() - 1
    }
}

fn input_name(i: usize) -> String {
    format!("__in{i}")
}

fn window_name(i: usize) -> String {
    format!("__win{i}")
}

fn column(name: String, span: Span) -> Expr {
    Expr {
        kind: ExprKind::Column(name),
        span,
    }
}

/// True for the aggregates a window may compute over its frame.
fn frame_aggregate(name: &str) -> bool {
    matches!(name, "count" | "sum" | "avg" | "mean" | "min" | "max")
}

/// Every function that may stand before `OVER`.
const WINDOW_FUNCTIONS: &[&str] = &[
    "row_number",
    "rank",
    "dense_rank",
    "percent_rank",
    "cume_dist",
    "ntile",
    "lag",
    "lead",
    "first_value",
    "last_value",
    "nth_value",
];

/// True when `e` has an aggregate call outside window functions (or in a
/// window's arguments or keys, which step 1 computes).
fn has_plain_aggregate(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Window { call, window } => {
            let ExprKind::Function { args, .. } = &call.kind else {
                return false;
            };
            args.iter()
                .chain(&window.partition_by)
                .chain(window.order_by.iter().map(|o| &o.expr))
                .any(super::contains_aggregate)
        }
        ExprKind::Function { name, .. } if AggFunc::is_aggregate_name(name) => true,
        _ => e.children().into_iter().any(has_plain_aggregate),
    }
}

/// Moves the WHERE of a query over one subquery with window functions
/// into that subquery's QUALIFY (`SELECT … FROM (SELECT …, row_number()
/// OVER (…) AS rn FROM x) WHERE rn <= 2`): filtering the subquery's rows
/// after its windows is what QUALIFY does, and there the top-k path can
/// see it. Not when the subquery cuts its rows (LIMIT, DISTINCT) or renames
/// its columns.
pub(super) fn push_filter_into_windows(select: &mut Select) {
    let Some(FromItem::Subquery {
        query,
        alias,
        columns,
        ..
    }) = &mut select.from
    else {
        return;
    };
    let plain_query = query.order_by.is_empty() && query.limit.is_none() && query.offset.is_none();
    let crate::sql::ast::SetExpr::Select(inner) = &mut query.body else {
        return;
    };
    let cuts = inner.distinct
        || inner.limit.is_some()
        || inner.offset.is_some()
        || !inner.order_by.is_empty();
    if !plain_query || cuts || !columns.is_empty() || !has_windows(inner) {
        return;
    }
    let Some(mut filter) = select.selection.take() else {
        return;
    };
    // `sub.rn` names the subquery's output `rn`.
    fn unqualify(e: &mut Expr, alias: Option<&str>) {
        if let ExprKind::QualifiedColumn { table, column } = &e.kind
            && alias.is_some_and(|a| a.eq_ignore_ascii_case(table))
        {
            e.kind = ExprKind::Column(column.clone());
        }
        for c in e.children_mut() {
            unqualify(c, alias);
        }
    }
    unqualify(&mut filter, alias.as_ref().map(|a| a.name.as_str()));
    inner.qualify = Some(match inner.qualify.take() {
        None => filter,
        Some(q) => {
            let span = q.span.union(filter.span);
            Expr {
                kind: ExprKind::Binary {
                    op: crate::sql::ast::BinaryOp::And,
                    left: Box::new(q),
                    right: Box::new(filter),
                },
                span,
            }
        }
    });
}

/// `k` when the rewritten QUALIFY is `__win0 <= k`, `__win0 < k + 1` or
/// `__win0 = 1` (k = 1): the rows it keeps are each partition's first k.
fn top_k_limit(qualify: &Expr) -> Option<usize> {
    let ExprKind::Binary { op, left, right } = &qualify.kind else {
        return None;
    };
    if !matches!(&left.kind, ExprKind::Column(c) if *c == window_name(0)) {
        return None;
    }
    let n = constant_int(right)?;
    let k = match op {
        crate::sql::ast::BinaryOp::LtEq => n,
        crate::sql::ast::BinaryOp::Lt => n - 1,
        crate::sql::ast::BinaryOp::Eq if n == 1 => 1,
        _ => return None,
    };
    // A bound on what is kept, not an allocation size: k rows are kept
    // per partition only as they occur.
    usize::try_from(k).ok().filter(|&k| k >= 1)
}

/// The rows of each partition of `call`'s window that come first in its
/// order (ties by row order), at most `k` a partition, with their row
/// numbers, over whole columns (`columns`' inputs start at `base`): the
/// partition key read from the buffers (one integer column hashed as
/// `i64`, one column of another type by its [`value_codes`]), the order
/// as packed keys ([`packed_order`]) for `k ≤ SMALL_K`, else compared in
/// the buffers; no value is made per row.
fn top_k_columns(
    call: &Call,
    columns: &[Array<'static>],
    rows: usize,
    base: usize,
    k: usize,
) -> (Vec<u32>, Vec<i64>) {
    let cmp = |a: u32, b: u32| -> Ordering {
        for &(c, desc, nulls_first) in &call.order {
            let o = columns[base + c].order_rows(a as usize, b as usize, desc, nulls_first);
            if o.is_ne() {
                return o;
            }
        }
        a.cmp(&b)
    };
    // k small: each partition keeps its best rows' order keys (packed
    // into one integer per row) beside them, so a row is compared with the
    // k-th best without reading the columns at a random row (a cache miss
    // per row: most of db-benchmark q8's 85 ns a row at 1M rows).
    let normalized = if k <= SMALL_K {
        packed_order(call, &columns[base..], rows)
    } else {
        None
    };
    let keys: Vec<&Array<'static>> = call.partition.iter().map(|&p| &columns[base + p]).collect();
    let run = |slot: &mut dyn FnMut(usize, usize) -> usize| match &normalized {
        // Keys of at most 64 bits as u64: half the buffer.
        Some(PackedKeys::Narrow(keys)) => top_k_by_key(rows, slot, keys, k),
        Some(PackedKeys::Wide(keys)) => top_k_by_key(rows, slot, keys, k),
        None => top_k_by(rows, slot, cmp, k),
    };
    if let (Some(order), [key]) = (&normalized, keys.as_slice())
        && let Some((places, count)) = int_places(key)
    {
        return top_k_by_packed_place(&places, count, order, k);
    }
    match keys.as_slice() {
        [] => run(&mut |_, _| 0),
        [
            Array {
                data: Data::Int(v),
                validity,
                ..
            },
        ] => {
            let mut slots: hashbrown::HashMap<Option<i64>, usize> = hashbrown::HashMap::new();
            run(&mut |i: usize, next: usize| {
                let key = validity.as_ref().is_none_or(|b| b.get(i)).then(|| v[i]);
                *slots.entry(key).or_insert(next)
            })
        }
        // One key of another type (a string, a float): its rows numbered
        // once as codes (strings once per dictionary entry), hashed as
        // integers (perf: a vector of parts made and hashed per row was
        // most of shapes window_top3_s1m's 3.4 s at 1M rows).
        [key] => {
            let codes = value_codes(key, false);
            // A string's codes number its distinct values from 0: they are
            // the partitions' places themselves, NULL's the one after.
            let top = codes.par_iter().map(|c| c.unwrap_or(0)).max().unwrap_or(0);
            if let (Some(keys), Data::Str(_)) = (&normalized, &key.data)
                && top < rows as u64
            {
                let places: Vec<u32> = codes
                    .par_iter()
                    .map(|c| c.map_or(top as u32 + 1, |c| c as u32))
                    .collect();
                let count = top as usize + 2;
                return top_k_by_packed_place(&places, count, keys, k);
            }
            let mut slots: hashbrown::HashMap<Option<u64>, usize> = hashbrown::HashMap::new();
            run(&mut |i: usize, next: usize| *slots.entry(codes[i]).or_insert(next))
        }
        keys => {
            let mut slots: hashbrown::HashMap<Vec<Option<Part<'_>>>, usize> =
                hashbrown::HashMap::new();
            run(&mut |i: usize, next: usize| {
                let key = keys.iter().map(|a| Part::of_array(a, i, false)).collect();
                *slots.entry(key).or_insert(next)
            })
        }
    }
}

/// [`top_k_by_place`] on packed order keys ([`packed_order`]).
fn top_k_by_packed_place(
    places: &[u32],
    count: usize,
    order: &PackedKeys,
    k: usize,
) -> (Vec<u32>, Vec<i64>) {
    match order {
        PackedKeys::Narrow(order) => top_k_by_place(places, count, order, k),
        PackedKeys::Wide(order) => top_k_by_place(places, count, order, k),
    }
}

/// Each row's place when `key` is integers over a range no wider than
/// its rows: the value's offset from the smallest, NULL the place after
/// the range; with the number of places. `None` for other keys (perf of
/// db-benchmark q8 at 10M rows, top 2 per 100k integer keys: a hash
/// lookup per row on one core was most of the top-k's 400 ms).
fn int_places(key: &Array<'_>) -> Option<(Vec<u32>, usize)> {
    let Data::Int(v) = &key.data else {
        return None;
    };
    let valid = |i: usize| key.validity.as_ref().is_none_or(|b| b.get(i));
    let (lo, hi) = v
        .par_iter()
        .enumerate()
        .filter(|&(i, _)| valid(i))
        .map(|(_, &x)| (x, x))
        .reduce(|| (i64::MAX, i64::MIN), |a, b| (a.0.min(b.0), a.1.max(b.1)));
    let span = if lo > hi {
        0
    } else {
        usize::try_from(i128::from(hi) - i128::from(lo) + 1).ok()?
    };
    if span > v.len() || span >= u32::MAX as usize {
        return None;
    }
    let places = v
        .par_iter()
        .enumerate()
        .map(|(i, &x)| {
            if valid(i) {
                x.wrapping_sub(lo) as u32
            } else {
                span as u32
            }
        })
        .collect();
    Some((places, span + 1))
}

/// [`top_k_by`] for `k ≤ SMALL_K` with a packed order key per row
/// ([`packed_order`]): each partition's best `(key, row)` pairs kept in
/// order in its own `k` places of one flat buffer (no allocation per
/// partition: a million partitions of one row each are shapes
/// window_top3_s1m), so most rows cost one comparison with the k-th pair.
fn top_k_by_key<K: Ord + Copy + Default>(
    n: usize,
    slot: &mut dyn FnMut(usize, usize) -> usize,
    keys: &[K],
    k: usize,
) -> (Vec<u32>, Vec<i64>) {
    let mut lens: Vec<usize> = Vec::new();
    let mut best: Vec<(K, u32)> = Vec::new();
    for (i, &key) in keys[..n].iter().enumerate() {
        let slot = slot(i, lens.len());
        if slot == lens.len() {
            lens.push(0);
            best.resize(best.len() + k, (K::default(), 0));
        }
        lens[slot] = keep_best(
            &mut best[slot * k..slot * k + k],
            lens[slot],
            (key, i as u32),
        );
    }
    let total = lens.iter().sum();
    let (mut kept, mut numbers) = (Vec::with_capacity(total), Vec::with_capacity(total));
    for (slot, &len) in lens.iter().enumerate() {
        numbers.extend(1..=len as i64);
        kept.extend(best[slot * k..slot * k + len].iter().map(|&(_, row)| row));
    }
    (kept, numbers)
}

/// Puts `entry` into `list`, whose first `len` pairs are the best so far
/// in order (all of its places: `k`), when it beats the last of a full
/// one; returns the new length. Most rows of a partition with `k` pairs
/// cost the one comparison with its last.
#[inline]
fn keep_best<K: Ord + Copy>(list: &mut [(K, u32)], len: usize, entry: (K, u32)) -> usize {
    let k = list.len();
    if len == k && entry >= list[k - 1] {
        return len;
    }
    let at = list[..len].partition_point(|x| *x < entry);
    let len = (len + 1).min(k);
    list.copy_within(at..len - 1, at + 1);
    list[at] = entry;
    len
}

/// One chunk's best rows per place: each place's kept count, and its best
/// `k` `(key, row)` pairs in order in its `k` slots.
type ChunkBest<K> = (Vec<u8>, Vec<(K, u32)>);

/// [`top_k_by_key`] when each row's partition is known as a place in
/// `0..count` (`places[i]`): no table from keys to partitions, and the
/// rows split into one chunk per core, each keeping its own best `k` per
/// place, merged place by place after (perf of shapes window_top3_s1m at
/// 10M rows: a hash lookup per row on one core was a third of the
/// query). One chunk when the chunks' buffers would pass 4× the rows'
/// keys. The kept rows come place by place, each place's in order.
fn top_k_by_place<K: Ord + Copy + Default + Send + Sync>(
    places: &[u32],
    count: usize,
    keys: &[K],
    k: usize,
) -> (Vec<u32>, Vec<i64>) {
    let n = places.len();
    let threads = rayon::current_num_threads().max(1);
    let chunks = if count.saturating_mul(k).saturating_mul(threads) <= n.saturating_mul(4) {
        threads
    } else {
        1
    };
    let per = n.div_ceil(chunks).max(1);
    // Per chunk: each place's kept count and its best `k` in order.
    let lists: Vec<ChunkBest<K>> = (0..chunks)
        .into_par_iter()
        .map(|c| {
            let mut lens = vec![0u8; count];
            let mut best = vec![(K::default(), 0u32); count * k];
            for i in c * per..((c + 1) * per).min(n) {
                let place = places[i] as usize;
                let list = &mut best[place * k..place * k + k];
                lens[place] = keep_best(list, usize::from(lens[place]), (keys[i], i as u32)) as u8;
            }
            (lens, best)
        })
        .collect();
    let (mut kept, mut numbers) = (Vec::new(), Vec::new());
    let mut merged: Vec<(K, u32)> = Vec::with_capacity(chunks * k);
    for place in 0..count {
        merged.clear();
        for (lens, best) in &lists {
            let len = usize::from(lens[place]);
            merged.extend_from_slice(&best[place * k..place * k + len]);
        }
        if merged.is_empty() {
            continue;
        }
        if lists.len() > 1 {
            merged.sort_unstable();
        }
        let len = merged.len().min(k);
        numbers.extend(1..=len as i64);
        kept.extend(merged[..len].iter().map(|&(_, row)| row));
    }
    (kept, numbers)
}

/// Up to this `k`, a partition's candidates are its best `k` kept in order
/// (an insertion); above it, a list cut back by selection.
const SMALL_K: usize = 16;

/// The top-k core: row `i` of `n` belongs to partition `slot(i, next)`
/// (`next` is the number a new partition gets); each partition keeps its
/// `k` first by `cmp` in order (small `k`), or a candidate list cut back
/// to them with a selection whenever it reaches 2k, so the work is linear
/// in the rows. The kept
/// rows partition by partition in order of first appearance, each
/// partition's in order, with their row numbers.
fn top_k_by(
    n: usize,
    mut slot: impl FnMut(usize, usize) -> usize,
    cmp: impl Fn(u32, u32) -> Ordering,
    k: usize,
) -> (Vec<u32>, Vec<i64>) {
    let mut lists: Vec<Vec<u32>> = Vec::new();
    let cap = k.saturating_mul(2).max(k + 1);
    for i in 0..n {
        let slot = slot(i, lists.len());
        if slot == lists.len() {
            lists.push(Vec::new());
        }
        let list = &mut lists[slot];
        let row = i as u32;
        if k <= SMALL_K {
            // Kept sorted: a row that does not beat the k-th is one
            // comparison (most rows, once a partition has k).
            if list.len() == k && list.last().is_some_and(|&last| cmp(row, last).is_ge()) {
                continue;
            }
            let at = list.partition_point(|&x| cmp(x, row).is_lt());
            list.insert(at, row);
            list.truncate(k);
            continue;
        }
        list.push(row);
        if list.len() >= cap {
            list.select_nth_unstable_by(k - 1, |&a, &b| cmp(a, b));
            list.truncate(k);
        }
    }
    let (mut kept, mut numbers) = (Vec::new(), Vec::new());
    for mut list in lists {
        list.sort_unstable_by(|&a, &b| cmp(a, b));
        list.truncate(k);
        numbers.extend(1..=list.len() as i64);
        kept.extend(list);
    }
    (kept, numbers)
}

/// Keeps the items of `v` at the positions `keep` (ascending).
fn keep_at<T>(v: &mut Vec<T>, keep: &[usize]) {
    let mut at = 0;
    v.retain(|_| {
        at += 1;
        keep.binary_search(&(at - 1)).is_ok()
    });
}

/// Where the first window function in `e` starts, if it has one.
fn first_window(e: &Expr) -> Option<usize> {
    let mut at = None;
    super::walk(e, &mut |x| {
        if at.is_none() && matches!(x.kind, ExprKind::Window { .. }) {
            at = Some(x.span.start);
        }
    });
    at
}

/// A constant integer argument (`2`, `-1`), else `None`.
fn constant_int(e: &Expr) -> Option<i64> {
    match &e.kind {
        ExprKind::Literal(Literal::Int(i)) => Some(*i),
        ExprKind::Unary {
            op: UnaryOp::Neg,
            expr,
        } => constant_int(expr).and_then(i64::checked_neg),
        _ => None,
    }
}

impl Composer<'_> {
    /// Runs a SELECT with window functions or QUALIFY (see the module
    /// docs).
    ///
    /// # Errors
    /// Plan errors with carets (an unknown window, a frame that ends
    /// before it starts, nested windows); the steps' own errors.
    pub(super) fn run_windowed(
        &self,
        select: Select,
        scope: &Scope<'_>,
        needed: Option<&std::collections::HashSet<String>>,
        into: Option<&str>,
    ) -> Result<Produced> {
        let aggregate = !select.group_by.is_empty()
            || select.having.is_some()
            || select.projection.iter().any(|item| match item {
                SelectItem::Expr { expr, .. } => has_plain_aggregate(expr),
                _ => false,
            })
            || select.qualify.iter().any(has_plain_aggregate)
            || select.order_by.iter().any(|o| has_plain_aggregate(&o.expr));
        let mut inputs = Inputs::default();
        let mut calls: Vec<Call> = Vec::new();
        let mut call_ids: HashMap<String, usize> = HashMap::new();
        let group_by: Vec<Expr> = select
            .group_by
            .iter()
            .map(|g| match constant_int(g) {
                // An ordinal names a select item; step 1 has other items.
                Some(n) if !matches!(g.kind, ExprKind::Unary { .. }) => {
                    match usize::try_from(n)
                        .ok()
                        .and_then(|n| select.projection.get(n.checked_sub(1)?))
                    {
                        Some(SelectItem::Expr { expr, .. }) => Ok(expr.clone()),
                        _ => Err(Error::plan_at(
                            format!("GROUP BY position {n} is not in the select list"),
                            g.span.start,
                        )),
                    }
                }
                _ => Ok(g.clone()),
            })
            .collect::<Result<_>>()?;
        let group_texts: HashSet<String> = group_by.iter().map(|g| g.to_string()).collect();
        let aliases: Vec<(String, Expr)> = select
            .projection
            .iter()
            .filter_map(|item| match item {
                SelectItem::Expr {
                    expr,
                    alias: Some(a),
                } => Some((a.name.to_ascii_lowercase(), expr.clone())),
                _ => None,
            })
            .collect();

        // Step 3's expressions: windows become columns, the rest of what
        // they read becomes inputs of step 1.
        let mut rewrite = |e: &Expr, aliases_ok: bool| -> Result<Expr> {
            let mut e = e.clone();
            self.hoist(
                &mut e,
                &mut Hoist {
                    select: &select,
                    aggregate,
                    group_texts: &group_texts,
                    inputs: &mut inputs,
                    calls: &mut calls,
                    call_ids: &mut call_ids,
                    aliases: if aliases_ok { &aliases } else { &[] },
                },
            )?;
            Ok(e)
        };
        let mut projection = Vec::with_capacity(select.projection.len());
        let mut wildcards = Vec::new();
        for item in &select.projection {
            match item {
                SelectItem::Expr { expr, alias } => {
                    let name = alias.clone().unwrap_or_else(|| Ident {
                        name: match &expr.kind {
                            ExprKind::Column(c) => c.clone(),
                            ExprKind::QualifiedColumn { column, .. } => column.clone(),
                            _ => self.sql[expr.span.start..expr.span.end].to_string(),
                        },
                        span: expr.span,
                    });
                    projection.push(Some(SelectItem::Expr {
                        expr: rewrite(expr, false)?,
                        alias: Some(name),
                    }));
                }
                SelectItem::Wildcard(span, _) | SelectItem::QualifiedWildcard { span, .. } => {
                    if aggregate {
                        return Err(Error::plan_at(
                            "* with window functions needs a query without GROUP BY",
                            span.start,
                        ));
                    }
                    if !wildcards.is_empty() {
                        return Err(Error::NotSupported(
                            "more than one * beside window functions".into(),
                        ));
                    }
                    wildcards.push(item.clone());
                    projection.push(None);
                }
            }
        }
        // QUALIFY may name a select item by its alias: it reads the item.
        let qualify = match &select.qualify {
            Some(q) => Some(rewrite(&substitute_aliases(q, &aliases), false)?),
            None => None,
        };
        let mut order_by = Vec::with_capacity(select.order_by.len());
        for o in &select.order_by {
            order_by.push(OrderByItem {
                expr: rewrite(&o.expr, true)?,
                ..o.clone()
            });
        }

        // Step 1.
        let span = select.span;
        let mut below = Select {
            distinct: false,
            projection: wildcards.clone(),
            windows: Vec::new(),
            qualify: None,
            order_by: Vec::new(),
            limit: None,
            offset: None,
            ..select.clone()
        };
        below.group_by = group_by;
        for (i, e) in inputs.exprs.iter().enumerate() {
            below.projection.push(SelectItem::Expr {
                expr: e.clone(),
                alias: Some(Ident {
                    name: input_name(i),
                    span: e.span,
                }),
            });
        }
        if below.projection.is_empty() {
            // Only windows of no argument (row_number() OVER ()): one
            // column still counts the rows.
            below.projection.push(SelectItem::Expr {
                expr: Expr {
                    kind: ExprKind::Literal(Literal::Null),
                    span,
                },
                alias: Some(Ident {
                    name: "__rows".into(),
                    span,
                }),
            });
        }
        // A window left in step 1 is inside an aggregate (the only place
        // hoisting keeps whole): refused, as it would recurse.
        for item in &below.projection {
            if let SelectItem::Expr { expr, .. } = item
                && let Some(at) = first_window(expr)
            {
                return Err(Error::plan_at(
                    "window functions are not allowed in an aggregate's argument",
                    at,
                ));
            }
        }
        let name = self.internal_name("window");
        let limit = qualify.as_ref().and_then(top_k_limit);
        let top_k_call = match (limit, calls.as_slice()) {
            (Some(k), [call]) if call.name == "row_number" => Some((k, call)),
            _ => None,
        };
        // Step 1 as whole columns: a plain scan's arrays as they come, any
        // other query's rows turned into columns once.
        let mut cols = if !aggregate && !super::needs_composition(&below) {
            self.nest(|| self.run_simple_columns(&below, scope, &[]))?
        } else {
            let rel = self.nest(|| self.run_select(&below, scope, None))?;
            Columns::from_relation(&rel)
        };
        let first_input = cols.names.len() - inputs.exprs.len().min(cols.names.len());
        let wildcard_names: Vec<String> = cols.names[..first_input].to_vec();

        // Step 2. A top-k per group (`QUALIFY row_number() OVER (…) <= k`
        // as the only window) keeps each partition's k first rows with a
        // selection instead of sorting all of them, and gathers only those.
        let start = Instant::now();
        if let Some((k, call)) = top_k_call {
            let (kept, numbers) = top_k_columns(call, &cols.arrays, cols.rows, first_input, k);
            let mut arrays: Vec<Array<'static>> = cols
                .arrays
                .par_iter()
                .map(|a| a.take_or_null(&kept))
                .collect();
            arrays.push(Array::new(DataType::Int, Data::Int(numbers)));
            self.note(format!(
                "top {k} per window partition: {} of {} rows kept ({})",
                thousands(kept.len()),
                thousands(cols.rows),
                ms(start)
            ));
            cols.arrays = arrays;
            cols.rows = kept.len();
            cols.names.push(window_name(0));
            cols.types.push(DataType::Int);
        } else {
            let mut computed = Vec::with_capacity(calls.len());
            for call in &calls {
                self.engine.check()?;
                computed.push(compute(call, &cols, first_input)?);
            }
            for (j, (array, dtype)) in computed.into_iter().enumerate() {
                cols.arrays.push(array);
                cols.names.push(window_name(j));
                cols.types.push(dtype);
            }
            self.note(format!(
                "window functions: {} over {} rows ({})",
                calls.len(),
                thousands(cols.rows),
                ms(start)
            ));
        }
        let bools = bool_columns(&cols.names, &cols.types);
        let rows_scanned = cols.rows_scanned;
        // The store keeps a boolean column as the strings true/false: step
        // 3 reads each such column (a bool_or, a lag of a comparison) back
        // as a boolean.
        let as_bool = |mut e: Expr| -> Expr {
            if !bools.is_empty() {
                read_bools(&mut e, &bools);
            }
            e
        };
        let projection: Vec<Option<SelectItem>> = projection
            .into_iter()
            .map(|item| match item {
                Some(SelectItem::Expr { expr, alias }) => Some(SelectItem::Expr {
                    expr: as_bool(expr),
                    alias,
                }),
                other => other,
            })
            .collect();
        let qualify = qualify.map(as_bool);
        let order_by: Vec<OrderByItem> = order_by
            .into_iter()
            .map(|o| OrderByItem {
                expr: as_bool(o.expr),
                ..o
            })
            .collect();

        // Step 3.
        let projection: Vec<SelectItem> = projection
            .into_iter()
            .flat_map(|item| match item {
                Some(item) => vec![item],
                None => wildcard_names
                    .iter()
                    .map(|n| SelectItem::Expr {
                        expr: column(n.clone(), span),
                        alias: None,
                    })
                    .collect(),
            })
            .collect();
        let above = Select {
            distinct: select.distinct,
            projection,
            from: Some(FromItem::Table {
                table: TableRef::Named(Ident {
                    name: name.clone(),
                    span,
                }),
                alias: None,
            }),
            selection: qualify,
            group_by: Vec::new(),
            group_by_all: false,
            having: None,
            windows: Vec::new(),
            qualify: None,
            order_by,
            limit: select.limit,
            offset: select.offset,
            span,
        };
        // Only the columns step 3 reads are encoded (perf of shapes
        // window_running_sum_s1m: its partition key's 10M strings were
        // encoded for a query that reads the sums alone).
        if let Some(names) = super::referenced_names(&above) {
            let keep: Vec<usize> = (0..cols.names.len())
                .filter(|&i| names.contains(&cols.names[i].to_ascii_lowercase()))
                .collect();
            let keep = if keep.is_empty() { vec![0] } else { keep };
            if keep.len() < cols.names.len() && !cols.names.is_empty() {
                keep_at(&mut cols.arrays, &keep);
                keep_at(&mut cols.names, &keep);
                keep_at(&mut cols.types, &keep);
            }
        }
        let table = materialize::table_from_arrays(
            &name,
            &cols.names,
            &cols.types,
            &cols.arrays,
            cols.rows,
            self.engine.partition_rows(),
        );
        let mut scope = scope.child();
        scope.add(&name, table);
        // Asked for a table, a last step that only filters and projects
        // scans the window's columns into it, with no row of values.
        if let Some(into) = into
            && !above.distinct
            && above.order_by.is_empty()
            && above.limit.is_none()
            && above.offset.is_none()
        {
            let (table, scanned) = self.scan_table(into, &above, &scope, needed)?;
            self.note(format!(
                "filter and projection over the rows above: {} rows × {} columns, encoded as a table",
                thousands(table.rows()),
                table.fields.len()
            ));
            return Ok(Produced::Table(table, scanned + rows_scanned));
        }
        let mut out = self.run_select(&above, &scope, needed)?;
        out.rows_scanned += rows_scanned;
        Ok(Produced::Rows(out))
    }

    /// Replaces, in `e`, window calls by their result columns and what
    /// step 1 computes by its input columns.
    fn hoist(&self, e: &mut Expr, h: &mut Hoist<'_>) -> Result<()> {
        match &e.kind {
            ExprKind::Window { call, window } => {
                let id = h.window_call(call, window, e.span)?;
                *e = column(window_name(id), e.span);
                return Ok(());
            }
            ExprKind::Column(name)
                if h.aliases.iter().any(|(a, _)| a.eq_ignore_ascii_case(name)) =>
            {
                // An output name (ORDER BY x where x is an alias): step 3
                // has the same aliases.
                return Ok(());
            }
            ExprKind::Column(_) | ExprKind::QualifiedColumn { .. } => {
                let i = h.inputs.add(e);
                *e = column(input_name(i), e.span);
                return Ok(());
            }
            ExprKind::Function { name, .. } if h.aggregate && AggFunc::is_aggregate_name(name) => {
                let i = h.inputs.add(e);
                *e = column(input_name(i), e.span);
                return Ok(());
            }
            _ if h.aggregate && h.group_texts.contains(&e.to_string()) => {
                let i = h.inputs.add(e);
                *e = column(input_name(i), e.span);
                return Ok(());
            }
            _ => {}
        }
        for c in e.children_mut() {
            self.hoist(c, h)?;
        }
        Ok(())
    }
}

/// What [`Composer::hoist`] collects.
struct Hoist<'h> {
    select: &'h Select,
    aggregate: bool,
    group_texts: &'h HashSet<String>,
    inputs: &'h mut Inputs,
    calls: &'h mut Vec<Call>,
    call_ids: &'h mut HashMap<String, usize>,
    aliases: &'h [(String, Expr)],
}

impl Hoist<'_> {
    /// The index of the window call `call OVER window` (at `span`),
    /// registering it and its inputs the first time.
    fn window_call(&mut self, call: &Expr, window: &WindowSpec, span: Span) -> Result<usize> {
        let ExprKind::Function {
            name,
            args,
            star,
            distinct,
            filter,
            order_by,
            ..
        } = &call.kind
        else {
            return Err(Error::plan_at(
                "expected a function before OVER",
                span.start,
            ));
        };
        let lname = name.to_ascii_lowercase();
        let window = resolve(window, &self.select.windows, 0)?;
        let key = Expr {
            kind: ExprKind::Window {
                call: Box::new(call.clone()),
                window: Box::new(window.clone()),
            },
            span,
        }
        .to_string();
        if let Some(&id) = self.call_ids.get(&key) {
            return Ok(id);
        }
        let is_aggregate = AggFunc::is_aggregate_name(&lname);
        if !order_by.is_empty()
            || (*distinct && lname != "count")
            || (!is_aggregate && filter.is_some())
        {
            return Err(Error::plan_at(
                format!(
                    "{lname}(DISTINCT …) (but count), FILTER on a non-aggregate and an aggregate's own ORDER BY are not supported with OVER"
                ),
                span.start,
            ));
        }
        // FILTER (WHERE p): each argument read as CASE WHEN p THEN x END,
        // which the aggregates skip as NULL.
        let filtered = |x: &Expr| -> Expr {
            match filter {
                None => x.clone(),
                Some(p) => Expr {
                    kind: ExprKind::Case {
                        operand: None,
                        branches: vec![((**p).clone(), x.clone())],
                        else_result: None,
                    },
                    span: x.span,
                },
            }
        };
        let true_at = |at: Span| Expr {
            kind: ExprKind::Literal(Literal::Bool(true)),
            span: at,
        };
        // Aggregates with a simpler equivalent: count(*) with a filter and
        // count_if count a CASE; bool_and/bool_or/any_value are min/max.
        let (lname, star, args): (String, bool, Vec<Expr>) = match lname.as_str() {
            "count" if *star && filter.is_some() => {
                ("count".into(), false, vec![filtered(&true_at(span))])
            }
            "count_if" if args.len() == 1 => (
                "count".into(),
                false,
                vec![filtered(&Expr {
                    kind: ExprKind::Case {
                        operand: None,
                        branches: vec![(args[0].clone(), true_at(args[0].span))],
                        else_result: None,
                    },
                    span: args[0].span,
                })],
            ),
            "bool_and" | "any_value" => ("min".into(), *star, args.iter().map(filtered).collect()),
            "bool_or" => ("max".into(), *star, args.iter().map(filtered).collect()),
            "count" if *distinct => (
                "count_distinct".into(),
                *star,
                args.iter().map(filtered).collect(),
            ),
            // The fraction and the separator are constants, not data.
            "quantile" | "quantile_cont" | "approx_quantile" | "quantile_disc" | "string_agg"
            | "listagg" | "group_concat" => (
                lname.clone(),
                *star,
                args.iter()
                    .enumerate()
                    .map(|(i, a)| if i == 0 { filtered(a) } else { a.clone() })
                    .collect(),
            ),
            _ if is_aggregate => (lname.clone(), *star, args.iter().map(filtered).collect()),
            _ => (lname.clone(), *star, args.clone()),
        };
        let (star, args) = (&star, &args[..]);
        let nested = |e: &Expr| any_node(e, &|x| matches!(x.kind, ExprKind::Window { .. }));
        if let Some(inner) = args
            .iter()
            .chain(&window.partition_by)
            .chain(window.order_by.iter().map(|o| &o.expr))
            .find(|e| nested(e))
        {
            return Err(Error::plan_at(
                "window functions cannot be nested",
                inner.span.start,
            ));
        }
        let arity = |n: std::ops::RangeInclusive<usize>| -> Result<()> {
            if n.contains(&args.len()) {
                Ok(())
            } else {
                Err(Error::plan_at(
                    format!(
                        "{lname}() takes {} argument(s), found {}",
                        if n.start() == n.end() {
                            n.start().to_string()
                        } else {
                            format!("{} to {}", n.start(), n.end())
                        },
                        args.len()
                    ),
                    span.start,
                ))
            }
        };
        let positive = |e: &Expr, what: &str| -> Result<i64> {
            match constant_int(e) {
                Some(n) if n > 0 => Ok(n),
                _ => Err(Error::plan_at(
                    format!("{lname}() needs {what}: a positive integer constant"),
                    e.span.start,
                )),
            }
        };
        let mut inputs = Vec::new();
        let mut constant = None;
        let mut agg = None;
        let mut separator = String::new();
        let fraction = |e: &Expr| -> Result<Fraction> {
            let f = match &e.kind {
                ExprKind::Literal(Literal::Float(f)) => Some(*f),
                ExprKind::Literal(Literal::Int(i)) => Some(*i as f64),
                _ => None,
            };
            f.and_then(Fraction::new).ok_or_else(|| {
                Error::plan_at(
                    format!("{lname}() needs a constant fraction between 0 and 1"),
                    e.span.start,
                )
            })
        };
        let half = Fraction::new(0.5).expect("in range");
        match lname.as_str() {
            "row_number" | "rank" | "dense_rank" | "percent_rank" | "cume_dist" => arity(0..=0)?,
            "ntile" => {
                arity(1..=1)?;
                constant = Some(positive(&args[0], "a number of buckets")?);
            }
            "lag" | "lead" => {
                arity(1..=3)?;
                inputs.push(&args[0]);
                if let Some(off) = args.get(1) {
                    constant = Some(constant_int(off).ok_or_else(|| {
                        Error::plan_at(
                            format!("{lname}() needs an integer constant offset"),
                            off.span.start,
                        )
                    })?);
                }
                if let Some(default) = args.get(2) {
                    inputs.push(default);
                }
            }
            "first_value" | "last_value" => {
                arity(1..=1)?;
                inputs.push(&args[0]);
            }
            "nth_value" => {
                arity(2..=2)?;
                inputs.push(&args[0]);
                constant = Some(positive(&args[1], "a position")?);
            }
            "count" if *star => {}
            name if frame_aggregate(name) => {
                arity(1..=1)?;
                inputs.push(&args[0]);
            }
            "count_distinct" => {
                arity(1..=1)?;
                inputs.push(&args[0]);
                agg = Some(AggFunc::CountDistinct);
            }
            "var_samp" | "variance" | "var_pop" | "stddev" | "stddev_samp" | "stddev_pop"
            | "median" | "mode" => {
                arity(1..=1)?;
                inputs.push(&args[0]);
                agg = Some(match lname.as_str() {
                    "var_samp" | "variance" => AggFunc::VarSamp,
                    "var_pop" => AggFunc::VarPop,
                    "stddev" | "stddev_samp" => AggFunc::StddevSamp,
                    "stddev_pop" => AggFunc::StddevPop,
                    "median" => AggFunc::QuantileCont(half),
                    _ => AggFunc::Mode,
                });
            }
            "quantile" | "quantile_cont" | "approx_quantile" | "quantile_disc" => {
                arity(2..=2)?;
                inputs.push(&args[0]);
                let f = fraction(&args[1])?;
                agg = Some(if lname == "quantile_disc" {
                    AggFunc::QuantileDisc(f)
                } else {
                    AggFunc::QuantileCont(f)
                });
            }
            "covar_samp" | "covar_pop" | "corr" | "regr_slope" | "regr_intercept" | "regr_r2"
            | "arg_min" | "argmin" | "min_by" | "arg_max" | "argmax" | "max_by" => {
                arity(2..=2)?;
                inputs.push(&args[0]);
                inputs.push(&args[1]);
                agg = Some(match lname.as_str() {
                    "covar_samp" => AggFunc::CovarSamp,
                    "covar_pop" => AggFunc::CovarPop,
                    "corr" => AggFunc::Corr,
                    "regr_slope" => AggFunc::RegrSlope,
                    "regr_intercept" => AggFunc::RegrIntercept,
                    "regr_r2" => AggFunc::RegrR2,
                    "arg_min" | "argmin" | "min_by" => AggFunc::ArgMin,
                    _ => AggFunc::ArgMax,
                });
            }
            "string_agg" | "listagg" | "group_concat" => {
                arity(1..=2)?;
                inputs.push(&args[0]);
                separator = match args.get(1).map(|e| &e.kind) {
                    None => ",".into(),
                    Some(ExprKind::Literal(Literal::String(s))) => s.clone(),
                    Some(_) => {
                        return Err(Error::plan_at(
                            format!("{lname}() OVER needs a constant string separator"),
                            args[1].span.start,
                        ));
                    }
                };
                agg = Some(AggFunc::StringAgg {
                    desc: false,
                    nulls_first: false,
                    distinct: false,
                });
            }
            name if AggFunc::is_aggregate_name(name) => {
                return Err(Error::plan_at(
                    format!("{name}() OVER is not supported"),
                    span.start,
                ));
            }
            _ => {
                let names: Vec<String> = WINDOW_FUNCTIONS
                    .iter()
                    .chain(["count", "sum", "avg", "min", "max"].iter())
                    .map(|s| s.to_string())
                    .collect();
                let hint = crate::plan::bind::suggest(&lname, &names).replace('"', "");
                return Err(Error::plan_at(
                    format!("{lname}() is not a window function{hint}"),
                    span.start,
                ));
            }
        }
        let frame = match &window.frame {
            Some(f) => {
                check_frame(f, &window)?;
                f.clone()
            }
            None if window.order_by.is_empty() => WindowFrame {
                rows: true,
                start: FrameBound::UnboundedPreceding,
                end: FrameBound::UnboundedFollowing,
                span,
            },
            None => WindowFrame {
                rows: false,
                start: FrameBound::UnboundedPreceding,
                end: FrameBound::CurrentRow,
                span,
            },
        };
        let call = Call {
            name: lname,
            args: inputs.into_iter().map(|e| self.inputs.add(e)).collect(),
            constant,
            partition: window
                .partition_by
                .iter()
                .map(|e| self.inputs.add(e))
                .collect(),
            order: window
                .order_by
                .iter()
                .map(|o| {
                    (
                        self.inputs.add(&o.expr),
                        o.desc,
                        o.nulls_first.unwrap_or(false),
                    )
                })
                .collect(),
            frame,
            agg,
            separator,
            span,
        };
        self.calls.push(call);
        self.call_ids.insert(key, self.calls.len() - 1);
        Ok(self.calls.len() - 1)
    }
}

/// `window` with its named base window's parts filled in.
fn resolve(
    window: &WindowSpec,
    named: &[crate::sql::ast::NamedWindow],
    depth: usize,
) -> Result<WindowSpec> {
    let Some(base) = &window.base else {
        return Ok(window.clone());
    };
    let found = named
        .iter()
        .find(|w| w.name.name.eq_ignore_ascii_case(&base.name))
        .ok_or_else(|| {
            Error::plan_at(format!("unknown window \"{}\"", base.name), base.span.start)
        })?;
    if depth > named.len() {
        return Err(Error::plan_at(
            "windows refer to each other in a cycle",
            base.span.start,
        ));
    }
    let base_spec = resolve(&found.spec, named, depth + 1)?;
    if !window.partition_by.is_empty() {
        return Err(Error::plan_at(
            format!(
                "a window based on \"{}\" cannot have its own PARTITION BY",
                base.name
            ),
            window.partition_by[0].span.start,
        ));
    }
    Ok(WindowSpec {
        base: None,
        partition_by: base_spec.partition_by,
        order_by: if window.order_by.is_empty() {
            base_spec.order_by
        } else {
            window.order_by.clone()
        },
        frame: window.frame.clone().or(base_spec.frame),
        span: window.span,
    })
}

/// A frame must start before it ends, and RANGE offsets need one numeric
/// ORDER BY key.
fn check_frame(f: &WindowFrame, window: &WindowSpec) -> Result<()> {
    if f.start == FrameBound::UnboundedFollowing || f.end == FrameBound::UnboundedPreceding {
        return Err(Error::plan_at(
            "a frame cannot start at UNBOUNDED FOLLOWING or end at UNBOUNDED PRECEDING",
            f.span.start,
        ));
    }
    if f.start.offset() > f.end.offset() {
        return Err(Error::plan_at(
            "the frame starts after it ends",
            f.span.start,
        ));
    }
    let offsets = |b: FrameBound| matches!(b, FrameBound::Preceding(_) | FrameBound::Following(_));
    if !f.rows && (offsets(f.start) || offsets(f.end)) && window.order_by.len() != 1 {
        return Err(Error::plan_at(
            "a RANGE frame with an offset needs exactly one ORDER BY key",
            f.span.start,
        ));
    }
    Ok(())
}

/// `e` with every bare name of a select alias replaced by the item's
/// expression.
fn substitute_aliases(e: &Expr, aliases: &[(String, Expr)]) -> Expr {
    let mut e = e.clone();
    fn walk(e: &mut Expr, aliases: &[(String, Expr)]) {
        if let ExprKind::Column(name) = &e.kind
            && let Some((_, x)) = aliases.iter().find(|(a, _)| a.eq_ignore_ascii_case(name))
        {
            *e = x.clone();
            return;
        }
        for c in e.children_mut() {
            walk(c, aliases);
        }
    }
    walk(&mut e, aliases);
    e
}

// ---------------------------------------------------------------------------
// Step 2: computing one window function

/// Orders two keys as ORDER BY does: NULLs last unless `nulls_first`.
/// One result of a window function, at a position of the sorted rows,
/// before the column is built: a number, a row whose value it is (a
/// `lag`, a `min`, a `first_value`), or a value (the statistical and
/// holistic aggregates, a `lag` with a default).
#[derive(Clone)]
enum Slot {
    Null,
    Int(i128),
    Float(f64),
    /// The value of the argument at this input row.
    Row(u32),
    Value(Value),
}

/// How a call's result column is built from its [`Slot`]s.
#[derive(Clone, Copy, PartialEq)]
enum Built {
    /// Integers (an integer sum past i64 makes the column float, as an
    /// encoded intermediate result stores it).
    Ints,
    Floats,
    /// Gathered from the first argument's column.
    Rows,
    Values,
}

/// The values of `call` for every row of `columns` (in their row order),
/// as one array, and their type; the inputs start at column `base`.
///
/// Works on the arrays throughout: partition and peer boundaries from
/// integer codes, ranks and frame aggregates from the typed buffers, and
/// `lag`/`lead`/`first_value`/`min`/`max` as a gather of the argument's
/// column; only the statistical and holistic aggregates and a `lag` with a
/// default read [`Value`]s.
fn compute(call: &Call, columns: &Columns, base: usize) -> Result<(Array<'static>, DataType)> {
    let n = columns.rows;
    let input = |i: usize| &columns.arrays[base + i];
    // An integer sum past i64 arrives as a float column.
    let input_type = |i: usize| match (columns.types[base + i], input(i).dtype) {
        (DataType::Int, DataType::Float) => DataType::Float,
        (t, _) => t,
    };
    // Rows in (partition, order) order; equal rows keep their order. The
    // keys are codes first, compared as integers in one contiguous array
    // (perf: comparing the rows' Values through their pointers was most
    // of a 1M-row running sum's 10 s).
    let keys = SortKeys::new(call, &columns.arrays[base..], n);
    let arg_type = call.args.first().map(|&a| input_type(a));
    if matches!(call.name.as_str(), "sum" | "avg" | "mean")
        && arg_type.is_some_and(|t| !t.is_numeric() && t != DataType::Null)
    {
        return Err(Error::plan_at(
            format!("{}() OVER needs a number", call.name),
            call.span.start,
        ));
    }
    let dtype = result_type(call, arg_type, call.args.get(1).map(|&a| input_type(a)));
    let built = match call.name.as_str() {
        _ if call.agg.is_some() => Built::Values,
        "lag" | "lead" if call.args.len() > 1 => Built::Values,
        "lag" | "lead" | "first_value" | "last_value" | "nth_value" | "min" | "max" => Built::Rows,
        "sum" if dtype == DataType::Int => Built::Ints,
        "percent_rank" | "cume_dist" | "avg" | "mean" | "sum" => Built::Floats,
        _ => Built::Ints,
    };
    // The arguments as values, by input row, for the calls that need them.
    let values: Vec<Vec<Value>> = if built == Built::Values {
        call.args
            .iter()
            .map(|&a| {
                let col = input(a);
                (0..n).into_par_iter().map(|r| col.value(r)).collect()
            })
            .collect()
    } else {
        Vec::new()
    };
    let inputs = PartitionInputs {
        call,
        arg: call.args.first().map(|&a| input(a)),
        order_key: call.order.first().map(|&(k, _, _)| input(k)),
        values: &values,
        dtype,
        arg_type: arg_type.unwrap_or(DataType::Null),
    };

    // Partitions as ranges of `order`.
    let mut parts: Vec<(usize, usize)> = Vec::new();
    let mut start = 0;
    while start < n {
        let mut end = start + 1;
        while end < n && keys.same_partition(start, end) {
            end += 1;
        }
        parts.push((start, end));
        start = end;
    }
    let order = &keys.order;

    // Each partition fills its own range of the slots, in parallel.
    let mut slots = vec![Slot::Null; n];
    let mut pieces: Vec<&mut [Slot]> = Vec::with_capacity(parts.len());
    let mut rest: &mut [Slot] = &mut slots;
    for &(s, e) in &parts {
        let (piece, tail) = rest.split_at_mut(e - s);
        pieces.push(piece);
        rest = tail;
    }
    // Within each partition, the peer group of every position relative to
    // the partition's start, in buffers each worker reuses (perf of shapes
    // window_rank_g1000 at 10M rows: two arrays of every row's peers,
    // filled on one core, were 160 MB of fresh pages the kernel cleared).
    parts
        .par_iter()
        .zip(pieces.into_par_iter())
        .with_min_len(64)
        .try_for_each_init(
            || (Vec::new(), Vec::new()),
            |(peer_start, peer_end): &mut (Vec<usize>, Vec<usize>), (&(s, e), out)| {
                peer_start.clear();
                peer_end.clear();
                peer_start.resize(e - s, 0);
                peer_end.resize(e - s, 0);
                let mut g = s;
                while g < e {
                    let mut h = g + 1;
                    while h < e && keys.peers(g, h) {
                        h += 1;
                    }
                    peer_start[g - s..h - s].fill(g - s);
                    peer_end[g - s..h - s].fill(h - s);
                    g = h;
                }
                partition_values(&inputs, &order[s..e], peer_start, peer_end, out)
            },
        )?;
    Ok((build(built, dtype, inputs.arg, order, slots), dtype))
}

/// The column of a call from its slots in sorted order (`order[p]` the
/// input row of position `p`), in the input's row order.
fn build(
    built: Built,
    dtype: DataType,
    arg: Option<&Array<'static>>,
    order: &[u32],
    slots: Vec<Slot>,
) -> Array<'static> {
    let n = slots.len();
    let validity = |valid: &[bool]| valid.contains(&false).then(|| Bitmap::from_bools(valid));
    match built {
        Built::Rows => {
            let mut rows = vec![NO_ROW; n];
            for (slot, &r) in slots.iter().zip(order) {
                if let Slot::Row(from) = slot {
                    rows[r as usize] = *from;
                }
            }
            match arg {
                Some(a) => a.take_or_null(&rows),
                None => Array::repeat(dtype, &Value::Null, n),
            }
        }
        Built::Ints => {
            // Straight into i64s; only a value past i64 (an integer sum)
            // takes the column through i128 to floats.
            let mut ints = vec![0i64; n];
            let mut valid = vec![true; n];
            let mut wide = false;
            for (slot, &r) in slots.iter().zip(order) {
                match slot {
                    Slot::Int(x) => match i64::try_from(*x) {
                        Ok(x) => ints[r as usize] = x,
                        Err(_) => {
                            wide = true;
                            break;
                        }
                    },
                    _ => valid[r as usize] = false,
                }
            }
            if !wide {
                return Array {
                    dtype,
                    data: Data::Int(ints),
                    validity: validity(&valid),
                };
            }
            drop(ints);
            let mut data = vec![0i128; n];
            for (slot, &r) in slots.iter().zip(order) {
                match slot {
                    Slot::Int(x) => data[r as usize] = *x,
                    _ => valid[r as usize] = false,
                }
            }
            let validity = validity(&valid);
            Array {
                dtype: DataType::Float,
                data: Data::Float(data.iter().map(|&x| x as f64).collect()),
                validity,
            }
        }
        Built::Floats => {
            let mut data = vec![0f64; n];
            let mut valid = vec![true; n];
            for (slot, &r) in slots.iter().zip(order) {
                match slot {
                    Slot::Float(x) => data[r as usize] = *x,
                    _ => valid[r as usize] = false,
                }
            }
            Array {
                dtype,
                data: Data::Float(data.into()),
                validity: validity(&valid),
            }
        }
        Built::Values => {
            let mut values = vec![Value::Null; n];
            for (slot, &r) in slots.into_iter().zip(order) {
                if let Slot::Value(v) = slot {
                    values[r as usize] = v;
                }
            }
            Array::from_result_values(dtype, &values)
        }
    }
}

/// What every partition of one call reads.
struct PartitionInputs<'a> {
    call: &'a Call,
    /// The first argument's column.
    arg: Option<&'a Array<'static>>,
    /// The first ORDER BY key's column (a RANGE frame's offsets).
    order_key: Option<&'a Array<'static>>,
    /// The arguments as values by input row, for [`Built::Values`].
    values: &'a [Vec<Value>],
    dtype: DataType,
    arg_type: DataType,
}

fn result_type(call: &Call, arg: Option<DataType>, default: Option<DataType>) -> DataType {
    if let Some(func) = call.agg {
        return match func {
            AggFunc::CountDistinct => DataType::Int,
            AggFunc::StringAgg { .. } => DataType::Str,
            AggFunc::QuantileCont(_) if arg == Some(DataType::Date) => DataType::Timestamp,
            _ => func.result_type(arg.unwrap_or(DataType::Null)),
        };
    }
    match call.name.as_str() {
        "row_number" | "rank" | "dense_rank" | "ntile" | "count" => DataType::Int,
        "percent_rank" | "cume_dist" | "avg" | "mean" => DataType::Float,
        "sum" => match arg {
            Some(DataType::Int) => DataType::Int,
            Some(DataType::Null) => DataType::Null,
            _ => DataType::Float,
        },
        // The default takes the argument's type, as DuckDB casts it.
        "lag" | "lead" => match (arg, default) {
            (Some(DataType::Null), Some(d)) => d,
            (Some(a), _) => a,
            (None, _) => DataType::Null,
        },
        _ => arg.unwrap_or(DataType::Null),
    }
}

/// A value converted to the window's result type where they differ: an
/// integer `lag` default in a float column, a float one in an integer
/// column (rounded half away from zero, as DuckDB casts it).
fn conform(v: Value, dtype: DataType, span: Span) -> Result<Value> {
    Ok(match (v, dtype) {
        (Value::Int(i), DataType::Float) => Value::Float(i as f64),
        (Value::Float(f), DataType::Int) => {
            let r = f.round();
            // 2^63 is the first float past i64::MAX.
            if !(-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&r) {
                return Err(Error::plan_at(
                    format!("the default {f} does not fit an integer"),
                    span.start,
                ));
            }
            Value::Int(r as i64)
        }
        // A text default of a date or timestamp column is cast to it.
        (v @ Value::Str(_), DataType::Date | DataType::Timestamp) => {
            crate::plan::eval::cast(&v, dtype)
                .map_err(|e| Error::plan_at(e.to_string(), span.start))?
        }
        (v, _) => v,
    })
}

/// The function's values for the rows of one partition (`part`, input
/// rows in order), written to `out` in `part`'s order.
fn partition_values(
    inputs: &PartitionInputs<'_>,
    part: &[u32],
    peer_start: &[usize],
    peer_end: &[usize],
    out: &mut [Slot],
) -> Result<()> {
    let call = inputs.call;
    let m = part.len();
    let value = |p: usize, k: usize| -> &Value { &inputs.values[k][part[p] as usize] };
    let mut put = |f: &mut dyn FnMut(usize) -> Slot| {
        for (p, slot) in out.iter_mut().enumerate() {
            *slot = f(p);
        }
    };
    match call.name.as_str() {
        "row_number" => put(&mut |p| Slot::Int(p as i128 + 1)),
        "rank" => put(&mut |p| Slot::Int(peer_start[p] as i128 + 1)),
        "dense_rank" => {
            let mut rank = 0;
            put(&mut |p| {
                if peer_start[p] == p {
                    rank += 1;
                }
                Slot::Int(rank)
            });
        }
        "percent_rank" => put(&mut |p| {
            Slot::Float(if m > 1 {
                peer_start[p] as f64 / (m - 1) as f64
            } else {
                0.0
            })
        }),
        "cume_dist" => put(&mut |p| Slot::Float(peer_end[p] as f64 / m as f64)),
        "ntile" => {
            let k = call.constant.unwrap_or(1).max(1) as usize;
            let (q, r) = (m / k, m % k);
            put(&mut |p| {
                // The first r buckets have q + 1 rows, the rest q.
                let bucket = if p < r * (q + 1) {
                    p / (q + 1)
                } else {
                    r + (p - r * (q + 1)) / q.max(1)
                };
                Slot::Int(bucket as i128 + 1)
            });
        }
        "lag" | "lead" => {
            let off = call.constant.unwrap_or(1);
            let off = if call.name == "lag" { -off } else { off };
            let at = |p: usize| -> Option<usize> {
                let at = i128::try_from(p).unwrap_or(i128::MAX) + i128::from(off);
                (0..m as i128).contains(&at).then_some(at as usize)
            };
            if call.args.len() > 1 {
                for (p, slot) in out.iter_mut().enumerate() {
                    let v = match at(p) {
                        Some(q) => value(q, 0).clone(),
                        None => value(p, 1).clone(),
                    };
                    *slot = Slot::Value(conform(v, inputs.dtype, call.span)?);
                }
            } else {
                put(&mut |p| at(p).map_or(Slot::Null, |q| Slot::Row(part[q])));
            }
        }
        _ => {
            let frames = frames(call, inputs.order_key, part, peer_start, peer_end);
            let row = |p: usize| Slot::Row(part[p]);
            match call.name.as_str() {
                "first_value" => {
                    put(&mut |p| {
                        let (s, e) = frames[p];
                        if s < e { row(s) } else { Slot::Null }
                    });
                }
                "last_value" => put(&mut |p| {
                    let (s, e) = frames[p];
                    if s < e { row(e - 1) } else { Slot::Null }
                }),
                "nth_value" => {
                    let k = call.constant.unwrap_or(1).max(1) as usize;
                    put(&mut |p| {
                        let (s, e) = frames[p];
                        if s + k - 1 < e {
                            row(s + k - 1)
                        } else {
                            Slot::Null
                        }
                    });
                }
                _ if call.agg.is_some() => {
                    let answers = frame_answers(call, &frames, value, inputs.arg_type);
                    for (slot, v) in out.iter_mut().zip(answers) {
                        *slot = Slot::Value(v);
                    }
                }
                _ => frame_aggregates(call, &frames, inputs.arg, part, inputs.dtype, out),
            }
        }
    }
    Ok(())
}

/// Each row's frame as positions `[start, end)` in the partition; a RANGE
/// frame with offsets reads the values of the first ORDER BY key
/// (`order_key`).
fn frames(
    call: &Call,
    order_key: Option<&Array<'static>>,
    part: &[u32],
    peer_start: &[usize],
    peer_end: &[usize],
) -> Vec<(usize, usize)> {
    let m = part.len();
    let f = &call.frame;
    let clamp = |x: i128| x.clamp(0, m as i128) as usize;
    if f.rows {
        let pos = |b: FrameBound, p: usize, end: bool| -> usize {
            let p = p as i128;
            let x = match b {
                FrameBound::UnboundedPreceding => 0,
                FrameBound::Preceding(k) => p - i128::from(k),
                FrameBound::CurrentRow => p,
                FrameBound::Following(k) => p + i128::from(k),
                FrameBound::UnboundedFollowing => m as i128,
            };
            // The end bound includes its row.
            let x = if end && b != FrameBound::UnboundedFollowing {
                x + 1
            } else {
                x
            };
            clamp(x)
        };
        return (0..m)
            .map(|p| {
                let (s, e) = (pos(f.start, p, false), pos(f.end, p, true));
                (s, e.max(s))
            })
            .collect();
    }
    // RANGE: by values of the one ORDER BY key when there are offsets.
    let key = |p: usize| -> Option<f64> { order_key?.value(part[p] as usize).as_f64() };
    let desc = call.order.first().is_some_and(|o| o.1);
    let offsets = [f.start, f.end]
        .iter()
        .any(|b| matches!(b, FrameBound::Preceding(_) | FrameBound::Following(_)));
    // The rows with a key: one run (NULLs sort to one end).
    let (nn_s, nn_e) = match (0..m).position(|p| offsets && key(p).is_some()) {
        Some(s) => (s, (s..m).find(|&p| key(p).is_none()).unwrap_or(m)),
        None => (m, m),
    };
    let offset_bound = |p: usize, delta: f64, end: bool| -> usize {
        let Some(x) = key(p) else {
            return if end { peer_end[p] } else { peer_start[p] };
        };
        let target = x + delta;
        let slice = nn_s..nn_e;
        // First position whose key is past the target (exclusive end) or
        // at/after it (start), in the partition's direction.
        let past = |q: usize| -> bool {
            let v = key(q).unwrap_or(f64::NAN);
            match (desc, end) {
                (false, false) => v < target,
                (false, true) => v <= target,
                (true, false) => v > target,
                (true, true) => v >= target,
            }
        };
        let mut lo = slice.start;
        let mut hi = slice.end;
        while lo < hi {
            let mid = (lo + hi) / 2;
            if past(mid) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    };
    let bound = |b: FrameBound, p: usize, end: bool| -> usize {
        let sign = if desc { -1.0 } else { 1.0 };
        match b {
            FrameBound::UnboundedPreceding => 0,
            FrameBound::UnboundedFollowing => m,
            FrameBound::CurrentRow => {
                if end {
                    peer_end[p]
                } else {
                    peer_start[p]
                }
            }
            FrameBound::Preceding(k) => offset_bound(p, -sign * k as f64, end),
            FrameBound::Following(k) => offset_bound(p, sign * k as f64, end),
        }
    };
    (0..m)
        .map(|p| {
            let (s, e) = (bound(f.start, p, false), bound(f.end, p, true));
            (s, e.max(s))
        })
        .collect()
}

/// `count`, `sum`, `avg`, `min` or `max` of `arg` (none for `count(*)`)
/// over each frame of a partition (`part`, input rows in order), moving
/// the frame's two ends forward (both only ever move forward); written to
/// `out` (`min`/`max` as the row holding the value).
fn frame_aggregates(
    call: &Call,
    frames: &[(usize, usize)],
    arg: Option<&Array<'static>>,
    part: &[u32],
    dtype: DataType,
    out: &mut [Slot],
) {
    let name = call.name.as_str();
    let row = |p: usize| part[p] as usize;
    let valid = |p: usize| arg.is_none_or(|a| a.is_valid(row(p)));
    let (ints, floats): (&[i64], &[f64]) = match arg.map(|a| &a.data) {
        Some(Data::Int(v)) if matches!(name, "sum" | "avg" | "mean") => (v, &[]),
        Some(Data::Float(v)) if matches!(name, "sum" | "avg" | "mean") => (&[], v),
        _ => (&[], &[]),
    };
    let (mut s, mut e) = (0usize, 0usize);
    let (mut count, mut int_sum, mut float_sum) = (0i64, 0i128, 0f64);
    // Positions whose values may still be the frame's min (max), their
    // values increasing (decreasing) from the front.
    let mut deque: VecDeque<usize> = VecDeque::new();
    let extreme = matches!(name, "min" | "max");
    let better = |a: usize, b: usize| -> bool {
        let o = arg.map_or(Ordering::Equal, |x| {
            x.order_rows(row(a), row(b), false, false)
        });
        if name == "min" { o.is_le() } else { o.is_ge() }
    };
    // A float sum over a frame whose start moves is read from a tree of
    // partial sums: subtracting what leaves the frame would lose what a
    // huge value absorbed, and turn an infinity that left into NaN.
    let sliding = frames.iter().any(|&(fs, _)| fs > 0);
    let float_tree = (sliding && !floats.is_empty() && (0..frames.len()).any(valid))
        .then(|| SumTree::new(frames.len(), |p| valid(p).then(|| floats[row(p)])));
    for (&(fs, fe), slot) in frames.iter().zip(out.iter_mut()) {
        if fs > e {
            // The frame skipped ahead past everything held.
            (s, e, count, int_sum, float_sum) = (fs, fs, 0, 0, 0.0);
            deque.clear();
        }
        while e < fe {
            if valid(e) {
                count += 1;
                if !ints.is_empty() {
                    int_sum += i128::from(ints[row(e)]);
                } else if !floats.is_empty() {
                    float_sum += floats[row(e)];
                }
                if extreme {
                    while deque.back().is_some_and(|&b| better(e, b)) {
                        deque.pop_back();
                    }
                    deque.push_back(e);
                }
            }
            e += 1;
        }
        while s < fs {
            if valid(s) {
                count -= 1;
                if !ints.is_empty() {
                    int_sum -= i128::from(ints[row(s)]);
                } else if !floats.is_empty() {
                    float_sum -= floats[row(s)];
                }
            }
            s += 1;
        }
        while deque.front().is_some_and(|&f| f < s) {
            deque.pop_front();
        }
        if let Some(tree) = &float_tree {
            float_sum = tree.sum(fs, fe.max(fs));
        }
        *slot = match name {
            "count" => Slot::Int(i128::from(count)),
            _ if count == 0 => Slot::Null,
            "sum" if dtype == DataType::Int => Slot::Int(int_sum),
            "sum" => Slot::Float(float_sum + int_sum as f64),
            "avg" | "mean" => Slot::Float((float_sum + int_sum as f64) / count as f64),
            _ => deque.front().map_or(Slot::Null, |&f| Slot::Row(part[f])),
        };
    }
}

/// Sums of a partition's values over any range in O(log n): a bottom-up
/// segment tree (Leis et al. 2015, section 4) whose leaves are the values
/// as floats (NULL as 0), each inner node the sum of its two children.
struct SumTree {
    /// `nodes[len..2 len]` the leaves; `nodes[i]` = `nodes[2i] + nodes[2i+1]`.
    nodes: Vec<f64>,
    len: usize,
}

impl SumTree {
    /// A tree over `len` positions whose values `value` gives (`None` for
    /// NULL).
    fn new(len: usize, value: impl Fn(usize) -> Option<f64>) -> SumTree {
        let mut nodes = vec![0.0; 2 * len];
        for p in 0..len {
            nodes[len + p] = value(p).unwrap_or(0.0);
        }
        for i in (1..len).rev() {
            nodes[i] = nodes[2 * i] + nodes[2 * i + 1];
        }
        SumTree { nodes, len }
    }

    /// The sum of positions `[start, end)`.
    fn sum(&self, start: usize, end: usize) -> f64 {
        let (mut lo, mut hi) = (start + self.len, end + self.len);
        let (mut left, mut right) = (0.0, 0.0);
        while lo < hi {
            if lo & 1 == 1 {
                left += self.nodes[lo];
                lo += 1;
            }
            if hi & 1 == 1 {
                hi -= 1;
                right += self.nodes[hi];
            }
            lo /= 2;
            hi /= 2;
        }
        left + right
    }
}

/// A statistical or holistic aggregate ([`Call::agg`]) over each frame,
/// recomputed from the frame's values (linear in the frame, the mode
/// n log n); consecutive rows with the same frame (a whole partition,
/// the peers of a running frame) share one computation.
fn frame_answers<'v>(
    call: &Call,
    frames: &[(usize, usize)],
    value: impl Fn(usize, usize) -> &'v Value,
    arg_type: DataType,
) -> Vec<Value> {
    let Some(func) = call.agg else {
        return vec![Value::Null; frames.len()];
    };
    let mut out: Vec<Value> = Vec::with_capacity(frames.len());
    let mut last: Option<(usize, usize)> = None;
    for &(s, e) in frames {
        if last == Some((s, e))
            && let Some(v) = out.last()
        {
            out.push(v.clone());
            continue;
        }
        last = Some((s, e));
        let x: Vec<&Value> = (s..e).map(|p| value(p, 0)).collect();
        let v = if func == AggFunc::CountDistinct {
            let distinct: HashSet<&Value> = x.iter().copied().filter(|v| !v.is_null()).collect();
            Value::Int(distinct.len() as i64)
        } else {
            let y: Vec<&Value> = if call.args.len() > 1 {
                (s..e).map(|p| value(p, 1)).collect()
            } else {
                Vec::new()
            };
            frame_answer(func, arg_type, &x, &y, &call.separator)
        };
        out.push(v);
    }
    out
}

/// The names of the boolean columns among `names`.
fn bool_columns(names: &[String], types: &[DataType]) -> HashSet<String> {
    names
        .iter()
        .zip(types)
        .filter(|(_, t)| **t == DataType::Bool)
        .map(|(n, _)| n.clone())
        .collect()
}

/// Replaces in `e` every column named in `bools` (stored as the strings
/// `true`/`false`) by `column = 'true'`, a boolean again (NULL stays NULL).
fn read_bools(e: &mut Expr, bools: &HashSet<String>) {
    if let ExprKind::Column(name) = &e.kind
        && bools.contains(name)
    {
        let span = e.span;
        *e = Expr {
            kind: ExprKind::Binary {
                op: crate::sql::ast::BinaryOp::Eq,
                left: Box::new(e.clone()),
                right: Box::new(Expr {
                    kind: ExprKind::Literal(Literal::String("true".into())),
                    span,
                }),
            },
            span,
        };
        return;
    }
    for c in e.children_mut() {
        read_bools(c, bools);
    }
}

/// The rows of a window sorted by their PARTITION BY and ORDER BY keys
/// (NULLs last unless NULLS FIRST, DESC inverted; equal keys by row
/// number), with what tells partitions and peer groups apart.
///
/// Each key's rows are first coded as integers ([`value_codes`]). When the
/// codes' ranges together with the row number fit 128 bits (the common
/// case: a string partition key of 1M values and an integer order key of
/// 1M values take 40 bits), every row's keys and row number are packed
/// into one integer, most significant key first, and sorting those plain
/// integers is the whole sort (a normalized key, as in Leis et al. 2015,
/// section 3). Otherwise each key is a u128 code of its own.
struct SortKeys {
    /// Input rows in key order.
    order: Vec<u32>,
    layout: Layout,
}

enum Layout {
    /// The packed keys in sorted order: partition fields, then order
    /// fields (`order_bits` together), then `row_bits` of row number.
    Packed {
        keys: PackedKeys,
        row_bits: u32,
        order_bits: u32,
    },
    /// `width` codes a row, row-major (by input row), the first
    /// `partition` of them the partition's.
    Wide {
        codes: Vec<u128>,
        width: usize,
        partition: usize,
    },
}

enum PackedKeys {
    Narrow(Vec<u64>),
    Wide(Vec<u128>),
}

impl PackedKeys {
    fn at(&self, p: usize) -> u128 {
        match self {
            PackedKeys::Narrow(v) => u128::from(v[p]),
            PackedKeys::Wide(v) => v[p],
        }
    }
}

/// The NULL bit of a code: above every value's 64 bits.
const NULL_CODE: u128 = 1 << 64;

/// Bits that hold every number up to `max`.
fn bits_for(max: u128) -> u32 {
    128 - max.leading_zeros()
}

/// One key's place in a packed key: its codes shifted to start at 0
/// (inverted for DESC) and a slot for NULL at the end it sorts to.
struct Field {
    min: u64,
    max: u64,
    nulls: bool,
    desc: bool,
    nulls_first: bool,
}

impl Field {
    fn of(codes: &[Option<u64>], desc: bool, nulls_first: bool) -> Field {
        let (min, max, nulls) = codes
            .par_iter()
            .fold(
                || (u64::MAX, 0u64, false),
                |(lo, hi, nulls), c| match *c {
                    Some(x) => (lo.min(x), hi.max(x), nulls),
                    None => (lo, hi, true),
                },
            )
            .reduce(
                || (u64::MAX, 0u64, false),
                |a, b| (a.0.min(b.0), a.1.max(b.1), a.2 || b.2),
            );
        Field {
            min: min.min(max),
            max,
            nulls,
            desc,
            nulls_first,
        }
    }

    /// The largest code.
    fn top(&self) -> u128 {
        u128::from(self.max - self.min) + u128::from(self.nulls)
    }

    fn code(&self, v: Option<u64>) -> u128 {
        match v {
            None if self.nulls_first => 0,
            None => u128::from(self.max - self.min) + 1,
            Some(x) => {
                let x = if self.desc {
                    self.max - x
                } else {
                    x - self.min
                };
                u128::from(x) + u128::from(self.nulls && self.nulls_first)
            }
        }
    }
}

/// `codes[k][r]` of every key `k` packed into one integer by `fields`
/// (`widths[k]` bits each, the first key most significant).
fn pack(fields: &[Field], codes: &[Vec<Option<u64>>], widths: &[u32], r: usize) -> u128 {
    let mut key = 0u128;
    for ((f, c), &w) in fields.iter().zip(codes).zip(widths) {
        key = key.checked_shl(w).unwrap_or(0) | f.code(c[r]);
    }
    key
}

/// The ORDER BY keys of `call` over `n` rows of `inputs` packed into one
/// integer per row that orders as they do (as in [`SortKeys`]): u64 when
/// their widths add up to 64 bits at most (perf of db-benchmark q8 at 10M
/// rows: a 160 MB buffer of u128 keys narrowed after was a tenth of the
/// top-k), else u128; `None` when they do not fit 128 bits.
fn packed_order(call: &Call, inputs: &[Array<'static>], n: usize) -> Option<PackedKeys> {
    let codes: Vec<Vec<Option<u64>>> = call
        .order
        .iter()
        .map(|&(c, _, _)| value_codes(&inputs[c], true))
        .collect();
    let fields: Vec<Field> = call
        .order
        .iter()
        .zip(&codes)
        .map(|(&(_, desc, nulls_first), c)| Field::of(c, desc, nulls_first))
        .collect();
    let widths: Vec<u32> = fields.iter().map(|f| bits_for(f.top())).collect();
    let total = widths.iter().sum::<u32>();
    if total > 128 {
        return None;
    }
    let rows = (0..n).into_par_iter();
    Some(if total <= 64 {
        PackedKeys::Narrow(
            rows.map(|r| pack(&fields, &codes, &widths, r) as u64)
                .collect(),
        )
    } else {
        PackedKeys::Wide(rows.map(|r| pack(&fields, &codes, &widths, r)).collect())
    })
}

impl SortKeys {
    /// The keys of `call` over `n` rows of `inputs` (its input columns),
    /// sorted.
    fn new(call: &Call, inputs: &[Array<'static>], n: usize) -> SortKeys {
        let keys: Vec<(usize, bool, bool)> = call
            .partition
            .iter()
            .map(|&p| (p, false, false))
            .chain(call.order.iter().copied())
            .collect();
        // A partition key needs only equality: its strings are numbered as
        // they come, not sorted.
        let codes: Vec<Vec<Option<u64>>> = keys
            .iter()
            .enumerate()
            .map(|(k, &(c, _, _))| value_codes(&inputs[c], k >= call.partition.len()))
            .collect();
        let fields: Vec<Field> = keys
            .iter()
            .zip(&codes)
            .map(|(&(_, desc, nulls_first), c)| Field::of(c, desc, nulls_first))
            .collect();
        let widths: Vec<u32> = fields.iter().map(|f| bits_for(f.top())).collect();
        let row_bits = bits_for(n.saturating_sub(1) as u128);
        let total = widths.iter().sum::<u32>() + row_bits;
        if total <= 128 {
            let pack = |r: usize| -> u128 {
                pack(&fields, &codes, &widths, r)
                    .checked_shl(row_bits)
                    .unwrap_or(0)
                    | r as u128
            };
            let row_mask = (1u128 << row_bits) - 1;
            let (keys, order) = if total <= 64 {
                let mut keys: Vec<u64> = (0..n).into_par_iter().map(|r| pack(r) as u64).collect();
                keys.par_sort_unstable();
                let order = keys
                    .par_iter()
                    .map(|&k| (u128::from(k) & row_mask) as u32)
                    .collect();
                (PackedKeys::Narrow(keys), order)
            } else {
                let mut keys: Vec<u128> = (0..n).into_par_iter().map(pack).collect();
                keys.par_sort_unstable();
                let order = keys.par_iter().map(|&k| (k & row_mask) as u32).collect();
                (PackedKeys::Wide(keys), order)
            };
            return SortKeys {
                order,
                layout: Layout::Packed {
                    keys,
                    row_bits,
                    order_bits: widths[call.partition.len()..].iter().sum(),
                },
            };
        }
        let width = keys.len();
        let mut wide = vec![0u128; n * width];
        for (k, (values, &(_, desc, nulls_first))) in codes.iter().zip(&keys).enumerate() {
            wide.par_chunks_mut(width)
                .zip(values.par_iter())
                .for_each(|(row, v)| {
                    row[k] = match *v {
                        None if nulls_first => 0,
                        None => NULL_CODE,
                        Some(x) => {
                            let x = u128::from(if desc { !x } else { x });
                            if nulls_first { NULL_CODE | x } else { x }
                        }
                    };
                });
        }
        let key = |r: u32| &wide[r as usize * width..(r as usize + 1) * width];
        let mut order: Vec<u32> = (0..n as u32).collect();
        order.par_sort_unstable_by(|&a, &b| key(a).cmp(key(b)).then(a.cmp(&b)));
        SortKeys {
            order,
            layout: Layout::Wide {
                codes: wide,
                width,
                partition: call.partition.len(),
            },
        }
    }

    /// Whether sorted positions `p` and `q` are in one partition.
    fn same_partition(&self, p: usize, q: usize) -> bool {
        match &self.layout {
            Layout::Packed {
                keys,
                row_bits,
                order_bits,
            } => {
                let shift = row_bits + order_bits;
                keys.at(p).checked_shr(shift).unwrap_or(0)
                    == keys.at(q).checked_shr(shift).unwrap_or(0)
            }
            Layout::Wide {
                codes,
                width,
                partition,
            } => {
                let (a, b) = self.wide_starts(p, q, *width);
                codes[a..a + partition] == codes[b..b + partition]
            }
        }
    }

    /// Where the codes of sorted positions `p` and `q` start in a wide
    /// layout of `width` codes a row.
    fn wide_starts(&self, p: usize, q: usize, width: usize) -> (usize, usize) {
        (
            self.order[p] as usize * width,
            self.order[q] as usize * width,
        )
    }

    /// Whether sorted positions `p` and `q` (of one partition) are peers:
    /// equal in every ORDER BY key.
    fn peers(&self, p: usize, q: usize) -> bool {
        match &self.layout {
            Layout::Packed {
                keys,
                row_bits,
                order_bits,
            } => {
                let mask = 1u128.checked_shl(*order_bits).map_or(u128::MAX, |b| b - 1);
                (keys.at(p) >> row_bits) & mask == (keys.at(q) >> row_bits) & mask
            }
            Layout::Wide {
                codes,
                width,
                partition,
            } => {
                let (a, b) = self.wide_starts(p, q, *width);
                codes[a + partition..a + width] == codes[b + partition..b + width]
            }
        }
    }
}

/// The rows of `a` as codes that are equal exactly when
/// [`Value::total_cmp`] says equal (`None` for NULL) and, when `ordered`,
/// order as it does: integers (and dates, timestamps, intervals) with the
/// sign bit flipped, floats by their bits made monotonic (-0.0 as 0.0, one
/// NaN above every number), booleans as 0 and 1, strings by their rank
/// among the column's distinct strings (by bytes), or unordered, numbered
/// by first appearance. Codes into a dictionary are its codes (distinct,
/// sorted entries); other coded strings are numbered once per entry.
fn value_codes(a: &Array<'static>, ordered: bool) -> Vec<Option<u64>> {
    let flip = |i: i64| (i as u64) ^ (1 << 63);
    let float = crate::types::ordered_f64_bits;
    let n = a.len();
    let valid = |i: usize| a.is_valid(i);
    match &a.data {
        Data::Int(v) => (0..n)
            .into_par_iter()
            .map(|i| valid(i).then(|| flip(v[i])))
            .collect(),
        Data::Float(v) => (0..n)
            .into_par_iter()
            .map(|i| valid(i).then(|| float(v[i])))
            .collect(),
        Data::Bool(b) => (0..n)
            .into_par_iter()
            .map(|i| valid(i).then(|| u64::from(b.get(i))))
            .collect(),
        // A dictionary's entries are distinct and sorted by bytes
        // (`Dictionary`'s invariant): its codes are the ranks already.
        Data::Str(Strs::Coded { entries, codes }) if entries.dictionary().is_some() => (0..n)
            .into_par_iter()
            .map(|i| valid(i).then(|| u64::from(codes[i])))
            .collect(),
        Data::Str(Strs::Dict(_) | Strs::Shared(_)) => (0..n)
            .into_par_iter()
            .map(|i| valid(i).then_some(i as u64))
            .collect(),
        Data::Str(Strs::Coded { entries, codes }) if entries.len() <= n => {
            let per_entry = string_codes(entries, entries.len(), &|_| true, ordered);
            (0..n)
                .into_par_iter()
                .map(|i| valid(i).then(|| per_entry[codes[i] as usize]).flatten())
                .collect()
        }
        Data::Str(s) => string_codes(s, n, &valid, ordered),
    }
}

/// Rows from which [`string_codes`] numbers strings on all cores.
const PARALLEL_STRING_ROWS: usize = 1 << 16;

/// Hash buckets [`string_codes`] numbers strings in, one table each.
const STRING_BUCKETS: usize = 256;

/// [`value_codes`] of the `n` strings of `s` (`valid` false for NULL):
/// equal strings get equal codes, ranks by bytes when `ordered`.
///
/// From [`PARALLEL_STRING_ROWS`] rows the strings are hashed on all
/// cores, their rows split by hash into [`STRING_BUCKETS`] buckets, and
/// each bucket numbered by a table of its own, in parallel; a bucket's
/// codes follow the previous buckets' (perf of shapes
/// window_running_sum_s1m at 10M rows: numbering 1M distinct strings one
/// row at a time on one core was a quarter of the query).
fn string_codes(
    s: &Strs<'_>,
    n: usize,
    valid: &(dyn Fn(usize) -> bool + Sync),
    ordered: bool,
) -> Vec<Option<u64>> {
    string_codes_from(s, n, valid, ordered, PARALLEL_STRING_ROWS)
}

/// [`string_codes`], on all cores from `parallel_rows` rows.
fn string_codes_from(
    s: &Strs<'_>,
    n: usize,
    valid: &(dyn Fn(usize) -> bool + Sync),
    ordered: bool,
    parallel_rows: usize,
) -> Vec<Option<u64>> {
    use std::hash::BuildHasher;
    let hasher = hashbrown::DefaultHashBuilder::default();
    let mut numbered: Vec<Option<u64>>;
    // The distinct strings, by code.
    let mut distinct: Vec<&str>;
    if n < parallel_rows {
        let mut ids: hashbrown::HashMap<&str, u64> = hashbrown::HashMap::with_capacity(n);
        distinct = Vec::new();
        numbered = (0..n)
            .map(|i| {
                if !valid(i) {
                    return None;
                }
                let next = ids.len() as u64;
                Some(*ids.entry(s.get(i)).or_insert_with(|| {
                    distinct.push(s.get(i));
                    next
                }))
            })
            .collect();
    } else {
        let hashes: Vec<u64> = (0..n)
            .into_par_iter()
            .map(|i| {
                if valid(i) {
                    hasher.hash_one(s.get(i))
                } else {
                    0
                }
            })
            .collect();
        // The high bits pick the bucket; hashbrown's table uses the low
        // ones and the top 7, which vary within a bucket still.
        let bucket_of = |h: u64| ((h >> 48) as usize) % STRING_BUCKETS;
        let mut rows: Vec<Vec<u32>> = vec![Vec::new(); STRING_BUCKETS];
        for (i, &h) in hashes.iter().enumerate() {
            if valid(i) {
                rows[bucket_of(h)].push(i as u32);
            }
        }
        // Per bucket: its distinct strings and each of its rows' code
        // among them.
        let numbered_buckets: Vec<(Vec<&str>, Vec<u32>)> = rows
            .par_iter()
            .map(|rows| {
                let mut table: hashbrown::HashTable<(u64, u32)> =
                    hashbrown::HashTable::with_capacity(rows.len().min(1 << 20));
                let mut strings: Vec<&str> = Vec::new();
                let codes = rows
                    .iter()
                    .map(|&r| {
                        let (h, v) = (hashes[r as usize], s.get(r as usize));
                        let entry = table.entry(
                            h,
                            |&(eh, code)| eh == h && strings[code as usize] == v,
                            |&(eh, _)| eh,
                        );
                        match entry {
                            hashbrown::hash_table::Entry::Occupied(o) => o.get().1,
                            hashbrown::hash_table::Entry::Vacant(slot) => {
                                let code = strings.len() as u32;
                                strings.push(v);
                                slot.insert((h, code));
                                code
                            }
                        }
                    })
                    .collect();
                (strings, codes)
            })
            .collect();
        numbered = vec![None; n];
        distinct = Vec::new();
        for (rows, (strings, codes)) in rows.iter().zip(numbered_buckets) {
            let base = distinct.len() as u64;
            for (&r, &code) in rows.iter().zip(&codes) {
                numbered[r as usize] = Some(base + u64::from(code));
            }
            distinct.extend(strings);
        }
    }
    if ordered {
        // Ranks: the distinct strings sorted by bytes.
        let mut by_bytes: Vec<(&str, u64)> = distinct
            .iter()
            .enumerate()
            .map(|(code, &s)| (s, code as u64))
            .collect();
        by_bytes.par_sort_unstable_by(|x, y| x.0.as_bytes().cmp(y.0.as_bytes()));
        let mut rank = vec![0u64; by_bytes.len()];
        for (r, &(_, code)) in by_bytes.iter().enumerate() {
            rank[code as usize] = r as u64;
        }
        numbered
            .par_iter_mut()
            .for_each(|c| *c = c.map(|code| rank[code as usize]));
    }
    numbered
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::vector::StrBuf;

    /// Numbered on one core or by buckets on all, strings get codes that
    /// are equal exactly when the strings are, NULLs none, and (ordered)
    /// the same ranks by bytes.
    #[test]
    fn string_codes_agree_on_one_core_and_by_buckets() {
        let mut buf = StrBuf::with_capacity(5000);
        let mut texts = Vec::new();
        for i in 0..5000u64 {
            let t = format!("k{}", (i * 7919) % 613);
            buf.push(&t);
            texts.push(t);
        }
        let strs = Strs::Owned(buf);
        let valid = |i: usize| i % 11 != 3;
        for ordered in [false, true] {
            let one = string_codes_from(&strs, 5000, &valid, ordered, usize::MAX);
            let all = string_codes_from(&strs, 5000, &valid, ordered, 0);
            for i in 0..5000 {
                assert_eq!(one[i].is_none(), !valid(i));
                assert_eq!(all[i].is_none(), !valid(i));
                for j in [0, 1, 2, 613, 1226, i / 2] {
                    if valid(i) && valid(j) {
                        assert_eq!(one[i] == one[j], texts[i] == texts[j]);
                        assert_eq!(all[i] == all[j], texts[i] == texts[j]);
                    }
                }
            }
            if ordered {
                assert_eq!(one, all);
                let (a, b) = (5, 7);
                assert_eq!(
                    one[a].cmp(&one[b]),
                    texts[a].as_bytes().cmp(texts[b].as_bytes())
                );
            }
        }
    }
}
