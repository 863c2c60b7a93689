//! Window functions for the reference evaluator, written from the SQL
//! standard's definitions (as PostgreSQL and DuckDB document them), not
//! from katydid's `compose/window.rs`.
//!
//! A SELECT without GROUP BY whose select list, QUALIFY or ORDER BY holds
//! `f(…) OVER (…)` is evaluated in one extra step after WHERE: every
//! distinct window call is computed for every kept row and appended to the
//! row as a hidden column, and the call is replaced by a reference to that
//! column; QUALIFY then filters the extended rows. Everything after (ORDER
//! BY, DISTINCT, LIMIT) runs as for a plain projection.
//!
//! The definitions, per partition (the rows with equal PARTITION BY values,
//! as GROUP BY groups them) sorted by the ORDER BY keys (ties in load
//! order; the generator only asks for answers that do not depend on it):
//! - peers: rows equal on every ORDER BY key (all rows without ORDER BY);
//! - `row_number` the position, `rank` one more than the rows before the
//!   peers, `dense_rank` the number of peer groups so far, `percent_rank`
//!   `(rank - 1) / (rows - 1)` (0 for one row), `cume_dist` the rows up to
//!   the last peer over the rows, `ntile(k)` buckets of `rows / k` rows,
//!   the first `rows % k` one row larger;
//! - `lag`/`lead(x, k, default)`: `x` of the row `k` before/after, else
//!   the default (NULL when not given);
//! - the frame: `ROWS` counts positions; `RANGE` with an offset takes the
//!   rows whose key is within the offset of the current row's key (rows
//!   with a NULL key only when the bound is UNBOUNDED, or when the current
//!   key is NULL: then its peers); `CURRENT ROW` in RANGE is the peers.
//!   Without a frame: the whole partition without ORDER BY, else `RANGE
//!   BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW`;
//! - `first_value`/`last_value`/`nth_value(x, k)` the frame's first, last,
//!   k-th row's `x` (NULL when the frame has none), NULLs included;
//! - an aggregate: the aggregate of the frame's rows, exactly as over a
//!   GROUP BY group.

use std::cmp::Ordering;
use std::collections::HashMap;

use katydid::sql::ast::{
    Expr, ExprKind, FrameBound, Literal, NamedWindow, OrderByItem, UnaryOp, WindowFrame, WindowSpec,
};
use katydid::types::{MICROS_PER_DAY, parse_date, parse_timestamp};
use katydid::{DataType, Value};

use super::{Col, Ctx, Evaluator, RefError, canonical, children, order_cmp, plan, static_type};

/// True when `e` has a window call.
pub fn contains_window(e: &Expr) -> bool {
    matches!(e.kind, ExprKind::Window { .. }) || children(e).into_iter().any(contains_window)
}

/// The window calls of a query, each computed once.
#[derive(Default)]
pub struct Calls {
    /// `(canonical text, call)` in order of appearance.
    pub calls: Vec<(String, Expr)>,
}

/// The hidden column name of the `i`-th window call (a name no query can
/// write).
fn hidden(i: usize) -> String {
    format!("\u{1}window{i}")
}

impl Calls {
    /// `e` with every window call replaced by its hidden column, the call
    /// recorded.
    pub fn rewrite(&mut self, e: &Expr) -> Result<Expr, RefError> {
        if let ExprKind::Window { call, .. } = &e.kind {
            if children(call).into_iter().any(contains_window) {
                return Err(plan("a window function inside a window function"));
            }
            let text = format!("{:?}", canonical(e));
            let i = match self.calls.iter().position(|(t, _)| *t == text) {
                Some(i) => i,
                None => {
                    self.calls.push((text, e.clone()));
                    self.calls.len() - 1
                }
            };
            return Ok(Expr {
                kind: ExprKind::Column(hidden(i)),
                span: e.span,
            });
        }
        let mut out = e.clone();
        let mut failed = None;
        map_children(&mut out, &mut |c| match self.rewrite(c) {
            Ok(x) => x,
            Err(err) => {
                failed.get_or_insert(err);
                c.clone()
            }
        });
        match failed {
            Some(err) => Err(err),
            None => Ok(out),
        }
    }
}

/// Replaces each direct child `c` of `e` by `f(c)`.
pub fn map_children(e: &mut Expr, f: &mut dyn FnMut(&Expr) -> Expr) {
    let mut fix = |x: &mut Expr| *x = f(x);
    match &mut e.kind {
        ExprKind::Column(_)
        | ExprKind::Literal(_)
        | ExprKind::QualifiedColumn { .. }
        | ExprKind::Window { .. }
        | ExprKind::Subquery(_)
        | ExprKind::Exists(_) => {}
        ExprKind::InSubquery { expr, .. }
        | ExprKind::Quantified { expr, .. }
        | ExprKind::Unary { expr, .. }
        | ExprKind::IsNull { expr, .. }
        | ExprKind::Cast { expr, .. }
        | ExprKind::Extract { expr, .. } => fix(expr),
        ExprKind::Binary { left, right, .. } => {
            fix(left);
            fix(right);
        }
        ExprKind::InList { expr, list, .. } => {
            fix(expr);
            list.iter_mut().for_each(&mut fix);
        }
        ExprKind::Between {
            expr, low, high, ..
        } => {
            fix(expr);
            fix(low);
            fix(high);
        }
        ExprKind::Like { expr, pattern, .. } => {
            fix(expr);
            fix(pattern);
        }
        ExprKind::Case {
            operand,
            branches,
            else_result,
        } => {
            if let Some(o) = operand {
                fix(o);
            }
            for (w, t) in branches {
                fix(w);
                fix(t);
            }
            if let Some(x) = else_result {
                fix(x);
            }
        }
        ExprKind::Function { args, order_by, .. } => {
            args.iter_mut().for_each(&mut fix);
            for o in order_by {
                fix(&mut o.expr);
            }
        }
    }
}

/// `window` with its named base filled in.
fn resolve(
    window: &WindowSpec,
    named: &[NamedWindow],
    depth: usize,
) -> Result<WindowSpec, RefError> {
    let Some(base) = &window.base else {
        return Ok(window.clone());
    };
    if depth > named.len() {
        return Err(plan("named windows in a cycle"));
    }
    let found = named
        .iter()
        .find(|w| w.name.name.eq_ignore_ascii_case(&base.name))
        .ok_or_else(|| plan(format!("unknown window {}", base.name)))?;
    let b = resolve(&found.spec, named, depth + 1)?;
    if !window.partition_by.is_empty() {
        return Err(plan("a window on a named one with its own PARTITION BY"));
    }
    Ok(WindowSpec {
        base: None,
        partition_by: b.partition_by,
        order_by: if window.order_by.is_empty() {
            b.order_by
        } else {
            window.order_by.clone()
        },
        frame: window.frame.clone().or(b.frame),
        span: window.span,
    })
}

/// A constant integer argument (`lag`'s offset, `ntile`'s count).
fn constant(e: &Expr) -> Result<i64, RefError> {
    match &e.kind {
        ExprKind::Literal(Literal::Int(i)) => Ok(*i),
        ExprKind::Unary {
            op: UnaryOp::Neg,
            expr,
        } => Ok(-constant(expr)?),
        _ => Err(plan("a window function's count must be a constant integer")),
    }
}

/// The key of a RANGE offset frame as a number, `None` for NULL.
fn range_key(v: &Value) -> Result<Option<f64>, RefError> {
    match v {
        Value::Null => Ok(None),
        Value::Int(i) => Ok(Some(*i as f64)),
        Value::Float(f) => Ok(Some(*f)),
        v => Err(plan(format!("RANGE with an offset over {v:?}"))),
    }
}

/// Computes the window calls over `rows` (read with `ev`): the columns and
/// rows extended by one hidden column per call.
pub fn extend(
    ev: &Evaluator,
    cols: &[Col],
    rows: &[&[Value]],
    calls: &Calls,
    named: &[NamedWindow],
) -> Result<(Vec<Col>, Vec<Vec<Value>>), RefError> {
    let mut ext: Vec<Vec<Value>> = rows.iter().map(|r| r.to_vec()).collect();
    let mut ext_cols = cols.to_vec();
    for (i, (_, e)) in calls.calls.iter().enumerate() {
        let ExprKind::Window { call, window } = &e.kind else {
            unreachable!("recorded calls are windows")
        };
        let spec = resolve(window, named, 0)?;
        let vals = compute(ev, cols, rows, call, &spec)?;
        for (r, v) in ext.iter_mut().zip(vals) {
            r.push(v);
        }
        ext_cols.push(Col {
            qualifier: None,
            name: hidden(i),
            dtype: None,
            bare: true,
            star: false,
        });
    }
    Ok((ext_cols, ext))
}

/// One call's value for every row of `rows`.
fn compute(
    ev: &Evaluator,
    cols: &[Col],
    rows: &[&[Value]],
    call: &Expr,
    spec: &WindowSpec,
) -> Result<Vec<Value>, RefError> {
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
        return Err(plan("OVER after something other than a call"));
    };
    let name = name.to_ascii_lowercase();
    let aggregate = super::is_aggregate_name(&name);
    if !aggregate && (*distinct || filter.is_some() || !order_by.is_empty() || *star) {
        return Err(plan(format!(
            "{name}() does not take DISTINCT, FILTER or ORDER BY"
        )));
    }
    if let Some(f) = &spec.frame {
        check_frame(f, spec)?;
    }
    // Partitions, in order of first appearance (the order is irrelevant).
    let mut partitions: Vec<Vec<usize>> = Vec::new();
    let mut index: HashMap<Vec<Value>, usize> = HashMap::new();
    for (i, r) in rows.iter().enumerate() {
        let key = spec
            .partition_by
            .iter()
            .map(|p| ev.eval(p, Ctx::Row(r)))
            .collect::<Result<Vec<_>, _>>()?;
        let at = *index.entry(key).or_insert_with(|| {
            partitions.push(Vec::new());
            partitions.len() - 1
        });
        partitions[at].push(i);
    }
    let mut out = vec![Value::Null; rows.len()];
    for part in partitions {
        let keys: Vec<Vec<Value>> = part
            .iter()
            .map(|&i| {
                spec.order_by
                    .iter()
                    .map(|o| ev.eval(&o.expr, Ctx::Row(rows[i])))
                    .collect::<Result<Vec<_>, _>>()
            })
            .collect::<Result<_, _>>()?;
        let cmp = |a: &[Value], b: &[Value]| -> Ordering {
            for (o, (x, y)) in spec.order_by.iter().zip(a.iter().zip(b)) {
                let c = order_cmp(x, y, o.desc, o.nulls_first.unwrap_or(false));
                if c.is_ne() {
                    return c;
                }
            }
            Ordering::Equal
        };
        // Positions in window order (a stable sort: ties in load order).
        let mut order: Vec<usize> = (0..part.len()).collect();
        order.sort_by(|&a, &b| cmp(&keys[a], &keys[b]));
        let sorted: Vec<&[Value]> = order.iter().map(|&p| rows[part[p]]).collect();
        let sorted_keys: Vec<&[Value]> = order.iter().map(|&p| &keys[p][..]).collect();
        let vals = partition(ev, cols, &name, args, call, spec, &sorted, &sorted_keys)?;
        for (&p, v) in order.iter().zip(vals) {
            out[part[p]] = v;
        }
    }
    Ok(out)
}

fn check_frame(f: &WindowFrame, spec: &WindowSpec) -> Result<(), RefError> {
    let signed = |b: FrameBound| -> i128 {
        match b {
            FrameBound::UnboundedPreceding => i128::MIN,
            FrameBound::Preceding(k) => -(k as i128),
            FrameBound::CurrentRow => 0,
            FrameBound::Following(k) => k as i128,
            FrameBound::UnboundedFollowing => i128::MAX,
        }
    };
    if f.start == FrameBound::UnboundedFollowing || f.end == FrameBound::UnboundedPreceding {
        return Err(plan(
            "frame starts at UNBOUNDED FOLLOWING or ends at UNBOUNDED PRECEDING",
        ));
    }
    if signed(f.start) > signed(f.end) {
        return Err(plan("frame starts after it ends"));
    }
    let offset = |b: FrameBound| matches!(b, FrameBound::Preceding(_) | FrameBound::Following(_));
    if !f.rows && (offset(f.start) || offset(f.end)) && spec.order_by.len() != 1 {
        return Err(plan("RANGE with an offset needs one ORDER BY key"));
    }
    Ok(())
}

/// The values of one partition, its rows in window order.
#[allow(clippy::too_many_arguments)]
fn partition(
    ev: &Evaluator,
    cols: &[Col],
    name: &str,
    args: &[Expr],
    call: &Expr,
    spec: &WindowSpec,
    rows: &[&[Value]],
    keys: &[&[Value]],
) -> Result<Vec<Value>, RefError> {
    let m = rows.len();
    let desc_of = |o: &OrderByItem| (o.desc, o.nulls_first.unwrap_or(false));
    let peers = |a: usize, b: usize| -> bool {
        spec.order_by
            .iter()
            .zip(keys[a].iter().zip(keys[b]))
            .all(|(o, (x, y))| {
                let (d, nf) = desc_of(o);
                order_cmp(x, y, d, nf).is_eq()
            })
    };
    // The first and one-past-last position of each row's peers.
    let peer_start: Vec<usize> = (0..m)
        .map(|p| (0..=p).find(|&q| peers(q, p)).unwrap_or(p))
        .collect();
    let peer_end: Vec<usize> = (0..m)
        .map(|p| (p..m).rev().find(|&q| peers(q, p)).map_or(p + 1, |q| q + 1))
        .collect();
    let arg = |p: usize, k: usize| -> Result<Value, RefError> {
        match args.get(k) {
            Some(a) => ev.eval(a, Ctx::Row(rows[p])),
            None => Err(plan(format!("{name}() needs argument {}", k + 1))),
        }
    };
    let count_arg = |k: usize, default: i64| -> Result<i64, RefError> {
        match args.get(k) {
            Some(a) => constant(a),
            None => Ok(default),
        }
    };
    let mut out = Vec::with_capacity(m);
    match name {
        "row_number" => out.extend((1..=m as i64).map(Value::Int)),
        "rank" => out.extend((0..m).map(|p| Value::Int(peer_start[p] as i64 + 1))),
        "dense_rank" => {
            for p in 0..m {
                let groups = (0..=p).filter(|&q| peer_start[q] == q).count();
                out.push(Value::Int(groups as i64));
            }
        }
        "percent_rank" => {
            for &start in &peer_start {
                out.push(Value::Float(if m == 1 {
                    0.0
                } else {
                    start as f64 / (m - 1) as f64
                }));
            }
        }
        "cume_dist" => out.extend((0..m).map(|p| Value::Float(peer_end[p] as f64 / m as f64))),
        "ntile" => {
            let k = count_arg(0, 0)?;
            if k <= 0 {
                return Err(plan("ntile needs a positive count"));
            }
            // Bucket sizes: rows / k, the first rows % k one larger.
            let k = (k as usize).min(m.max(1));
            let (size, extra) = (m / k, m % k);
            let mut bucket = 1;
            let mut left = size + usize::from(extra > 0);
            for _ in 0..m {
                if left == 0 {
                    bucket += 1;
                    left = size + usize::from(bucket <= extra);
                }
                out.push(Value::Int(bucket as i64));
                left -= 1;
            }
        }
        "lag" | "lead" => {
            let k = count_arg(1, 1)?;
            let ty = args.first().and_then(|a| static_type(a, cols));
            for p in 0..m {
                let at = if name == "lag" {
                    p as i128 - k as i128
                } else {
                    p as i128 + k as i128
                };
                let v = if (0..m as i128).contains(&at) {
                    arg(at as usize, 0)?
                } else if args.len() > 2 {
                    arg(p, 2)?
                } else {
                    Value::Null
                };
                // The default takes the argument's type (DuckDB casts
                // it): a float rounds half away from zero.
                out.push(match (v, ty) {
                    (Value::Int(i), Some(DataType::Float)) => Value::Float(i as f64),
                    (Value::Float(f), Some(DataType::Int)) => {
                        let r = f.round();
                        if !(-9.3e18..9.3e18).contains(&r) {
                            return Err(plan(format!("default {f} does not fit an integer")));
                        }
                        Value::Int(r as i64)
                    }
                    // A date or a timestamp's day, as DuckDB casts text.
                    (Value::Str(t), Some(DataType::Date)) => Value::Date(
                        parse_date(&t)
                            .or_else(|| parse_timestamp(&t).map(|m| m.div_euclid(MICROS_PER_DAY)))
                            .ok_or_else(|| plan(format!("default {t:?}")))?,
                    ),
                    (Value::Str(t), Some(DataType::Timestamp)) => Value::Timestamp(
                        parse_timestamp(&t).ok_or_else(|| plan(format!("default {t:?}")))?,
                    ),
                    (v, _) => v,
                });
            }
        }
        _ => {
            let frames = frames(spec, keys, &peer_start, &peer_end)?;
            for (p, &(s, e)) in frames.iter().enumerate() {
                let frame = &rows[s..e.max(s)];
                out.push(match name {
                    "first_value" => match frame.first() {
                        Some(_) => arg(s, 0)?,
                        None => Value::Null,
                    },
                    "last_value" => match frame.last() {
                        Some(_) => arg(e - 1, 0)?,
                        None => Value::Null,
                    },
                    "nth_value" => {
                        let k = count_arg(1, 1)?;
                        if k <= 0 {
                            return Err(plan("nth_value needs a positive position"));
                        }
                        match usize::try_from(k - 1).ok().filter(|&i| i < frame.len()) {
                            Some(i) => arg(s + i, 0)?,
                            None => Value::Null,
                        }
                    }
                    _ if super::is_aggregate_name(name) => ev.eval(
                        call,
                        Ctx::Group {
                            rows: frame,
                            rep: Some(rows[p]),
                        },
                    )?,
                    _ => return Err(plan(format!("unknown window function {name}()"))),
                });
            }
        }
    }
    Ok(out)
}

/// Each position's frame `[start, end)`.
fn frames(
    spec: &WindowSpec,
    keys: &[&[Value]],
    peer_start: &[usize],
    peer_end: &[usize],
) -> Result<Vec<(usize, usize)>, RefError> {
    let m = keys.len();
    let frame = match &spec.frame {
        Some(f) => f.clone(),
        None if spec.order_by.is_empty() => {
            return Ok(vec![(0, m); m]);
        }
        None => WindowFrame {
            rows: false,
            start: FrameBound::UnboundedPreceding,
            end: FrameBound::CurrentRow,
            span: spec.span,
        },
    };
    let mut out = Vec::with_capacity(m);
    for p in 0..m {
        let (s, e) = if frame.rows {
            let at = |b: FrameBound, end: bool| -> usize {
                let x: i128 = match b {
                    FrameBound::UnboundedPreceding => 0,
                    FrameBound::UnboundedFollowing => m as i128,
                    FrameBound::CurrentRow => p as i128 + i128::from(end),
                    FrameBound::Preceding(k) => p as i128 - k as i128 + i128::from(end),
                    FrameBound::Following(k) => p as i128 + k as i128 + i128::from(end),
                };
                x.clamp(0, m as i128) as usize
            };
            (at(frame.start, false), at(frame.end, true))
        } else {
            let desc = spec.order_by.first().is_some_and(|o| o.desc);
            // The key in the window's direction: larger is later.
            let dir = |q: usize| -> Result<Option<f64>, RefError> {
                Ok(range_key(&keys[q][0])?.map(|x| if desc { -x } else { x }))
            };
            let at = |b: FrameBound, end: bool| -> Result<usize, RefError> {
                let offset = match b {
                    FrameBound::UnboundedPreceding => return Ok(0),
                    FrameBound::UnboundedFollowing => return Ok(m),
                    FrameBound::CurrentRow => {
                        return Ok(if end { peer_end[p] } else { peer_start[p] });
                    }
                    FrameBound::Preceding(k) => -(k as f64),
                    FrameBound::Following(k) => k as f64,
                };
                let Some(x) = dir(p)? else {
                    // A NULL key: its peers.
                    return Ok(if end { peer_end[p] } else { peer_start[p] });
                };
                let limit = x + offset;
                let mut with_key = Vec::new();
                for q in 0..m {
                    if let Some(y) = dir(q)? {
                        with_key.push((q, y));
                    }
                }
                Ok(if end {
                    // One past the last keyed row at or before the limit,
                    // else the first keyed row.
                    match with_key.iter().rev().find(|&&(_, y)| y <= limit) {
                        Some(&(q, _)) => q + 1,
                        None => with_key.first().map_or(0, |&(q, _)| q),
                    }
                } else {
                    // The first keyed row at or after the limit, else one
                    // past the last keyed row.
                    match with_key.iter().find(|&&(_, y)| y >= limit) {
                        Some(&(q, _)) => q,
                        None => with_key.last().map_or(m, |&(q, _)| q + 1),
                    }
                })
            };
            (at(frame.start, false)?, at(frame.end, true)?)
        };
        out.push((s, e.max(s)));
    }
    Ok(out)
}
