//! Per-partition filter compilation: WHERE becomes a list of kernels chosen
//! for the partition's codecs and zone maps, or a verdict that the partition
//! cannot match at all.
//!
//! # Design
//! The predicate is first specialized to the partition (constant columns and
//! expressions that are constant over the partition, like `year(ts)` when
//! the zone map spans one year, become literals), folded, and split into
//! conjuncts. Each conjunct of the form `column op literal` or
//! `column IN (literals)` is translated into code space:
//! - offset-encoded integers and timestamps compare packed codes against the
//!   constant minus the partition base (an inclusive code range);
//! - dictionary strings look the constants up once (a code, a set of codes,
//!   or for `<`/`>=` the constant's insertion point in the sorted
//!   dictionary, which is correct whether or not the constant is present);
//! - floats compare in a tight f64 loop.
//!
//! The zone map is consulted first: a range that misses `[min, max]` skips
//! the partition without touching its data, one that covers it drops the
//! conjunct. A conjunct that is an OR of ANDs of such comparisons runs as
//! one step of 64-row masks ([`FilterStep::Any`]). Anything else runs on
//! the generic vectorized evaluator.

use std::borrow::Cow;
use std::cmp::Ordering;

use crate::error::Result;
use crate::kernel::like::LikePattern;
use crate::kernel::{self, Selection};
use crate::plan::BinaryOp;
use crate::plan::eval::compare;
use crate::plan::{Expr, Func, fold};
use crate::store::with_codes;
use crate::store::{Bitmap, Code, Codes, Column, ColumnData, Partition};
use crate::types::{DataType, Value, cmp_f64, timestamp_year};

use super::codecs::{self, CodecFilter};
use super::trace::Trace;
use super::vector::{Rows, eval, true_positions};

/// Replaces what is constant within `part` by literals and folds: columns
/// stored as one value (without NULLs), all-NULL columns, and `year(col)` /
/// `date_trunc(unit, col)` when the zone map's min and max agree.
///
/// Borrows `e` when nothing in it is constant within `part` (most
/// partitions): an IN list of thousands of values (an IN subquery's) is
/// then not copied and folded again for every partition (TPC-H Q20: the
/// copies were a quarter of the query's time).
pub fn specialize<'e>(e: &'e Expr, part: &Partition) -> Cow<'e, Expr> {
    let changes = e.any(&|x| match x {
        Expr::Column { index, .. } => is_constant_column(&part.columns[*index]),
        Expr::Call { func, args, .. } => constant_call(func, args, part).is_some(),
        _ => false,
    });
    if changes {
        Cow::Owned(fold(specialize_rec(e.clone(), part)))
    } else {
        Cow::Borrowed(e)
    }
}

/// The value of `func(col)` when it is the same for every row of `part`:
/// `year` or `date_trunc` of a timestamp column without NULLs whose zone
/// map's min and max give one value.
fn constant_call(func: &Func, args: &[Expr], part: &Partition) -> Option<Value> {
    let [Expr::Column { index, .. }] = args else {
        return None;
    };
    let c = &part.columns[*index];
    let (Value::Timestamp(lo), Value::Timestamp(hi)) = (&c.zone.min, &c.zone.max) else {
        return None;
    };
    if c.zone.null_count != 0 {
        return None;
    }
    match func {
        Func::Year if timestamp_year(*lo) == timestamp_year(*hi) => {
            Some(Value::Int(timestamp_year(*lo)))
        }
        Func::DateTrunc(u) => {
            let a = crate::plan::eval::date_trunc(*u, *lo)?;
            let b = crate::plan::eval::date_trunc(*u, *hi)?;
            (a == b).then_some(Value::Timestamp(a))
        }
        _ => None,
    }
}

fn specialize_rec(e: Expr, part: &Partition) -> Expr {
    match e {
        Expr::Column { index, dtype, .. } if is_constant_column(&part.columns[index]) => {
            let c = &part.columns[index];
            let v = match &c.data {
                ColumnData::Const(v) if c.validity.is_none() => v.clone(),
                _ => Value::Null,
            };
            Expr::literal(v, dtype)
        }
        Expr::Call { func, args, dtype } => {
            if let Some(v) = constant_call(&func, &args, part) {
                return Expr::literal(v, dtype);
            }
            let args = args.into_iter().map(|a| specialize_rec(a, part)).collect();
            Expr::Call { func, args, dtype }
        }
        e => e
            .map_children::<()>(&mut |c| Ok(specialize_rec(c, part)))
            .unwrap_or_else(|()| Expr::literal(Value::Null, DataType::Bool)),
    }
}

fn is_constant_column(c: &Column) -> bool {
    match &c.data {
        ColumnData::Const(Value::Null) => true,
        ColumnData::Const(_) => c.validity.is_none(),
        _ => false,
    }
}

/// Runs `$body` with `$pred` bound to the closure `|x: f64| x op k`, one
/// monomorphic closure per comparison. NaN sorts above every number
/// (PostgreSQL), so `>` and `>=` keep it.
macro_rules! with_float_pred {
    ($op:expr, $k:expr, $pred:ident => $body:expr) => {{
        let k: f64 = $k;
        match $op {
            BinaryOp::Lt => {
                let $pred = |x: f64| x < k;
                $body
            }
            BinaryOp::LtEq => {
                let $pred = |x: f64| x <= k;
                $body
            }
            BinaryOp::Gt => {
                let $pred = |x: f64| x > k || x.is_nan();
                $body
            }
            BinaryOp::GtEq => {
                let $pred = |x: f64| x >= k || x.is_nan();
                $body
            }
            BinaryOp::Eq => {
                let $pred = |x: f64| x == k;
                $body
            }
            _ => {
                let $pred = |x: f64| x != k;
                $body
            }
        }
    }};
}

/// The conjuncts of a predicate (`a AND b AND c` → `[a, b, c]`).
pub fn conjuncts(e: &Expr) -> Vec<Expr> {
    let mut out = Vec::new();
    e.clone().split_chain(BinaryOp::And, &mut out);
    out
}

/// Why the zone map of `part` shows that conjunct `c` holds for no row, if
/// it does: a cheap check run on every partition before any compiling.
pub fn zone_rules_out(c: &Expr, part: &Partition) -> Option<String> {
    let column_literal = |l: &Expr, r: &Expr| match (l, r) {
        (Expr::Column { index, name, .. }, Expr::Literal { value, .. }) => {
            Some((*index, name.clone(), value.clone()))
        }
        _ => None,
    };
    match c {
        Expr::Binary {
            op, left, right, ..
        } if op.is_comparison() => {
            let (index, name, k, op) = match column_literal(left, right) {
                Some((i, n, v)) => (i, n, v, *op),
                None => {
                    let (i, n, v) = column_literal(right, left)?;
                    (i, n, v, op.flip())
                }
            };
            let zone = &part.columns[index].zone;
            if zone.min.is_null() || k.is_null() {
                return Some(format!("{name} {} NULL or all NULL", op.symbol()));
            }
            let possible = match op {
                BinaryOp::Eq => zone.min.total_cmp(&k).is_le() && zone.max.total_cmp(&k).is_ge(),
                BinaryOp::Lt => zone.min.total_cmp(&k).is_lt(),
                BinaryOp::LtEq => zone.min.total_cmp(&k).is_le(),
                BinaryOp::Gt => zone.max.total_cmp(&k).is_gt(),
                BinaryOp::GtEq => zone.max.total_cmp(&k).is_ge(),
                _ => true,
            };
            (!possible).then(|| {
                format!(
                    "zone map [{}, {}] rules out {name} {} {}",
                    zone.min,
                    zone.max,
                    op.symbol(),
                    k
                )
            })
        }
        Expr::InList {
            expr,
            list,
            negated: false,
        } => {
            let Expr::Column { index, name, .. } = &**expr else {
                return None;
            };
            let zone = &part.columns[*index].zone;
            let possible = list.iter().any(|e| match e.as_literal() {
                Some(k) if !k.is_null() && !zone.min.is_null() => {
                    zone.min.total_cmp(k).is_le() && zone.max.total_cmp(k).is_ge()
                }
                Some(_) => false,
                None => true,
            });
            (!possible).then(|| {
                format!(
                    "zone map [{}, {}] rules out every value of {name} IN (…)",
                    zone.min, zone.max
                )
            })
        }
        _ => None,
    }
}

/// For `int_column = literal` or `int_column IN (literals)`: the column, its
/// name and the keys, which a hash index can look up.
pub fn point_lookup(c: &Expr) -> Option<(usize, String, Vec<i64>)> {
    let key = |e: &Expr| match e.as_literal() {
        Some(Value::Int(v) | Value::Timestamp(v) | Value::Date(v) | Value::Interval(v)) => Some(*v),
        _ => None,
    };
    let column = |e: &Expr| match e {
        Expr::Column {
            index,
            name,
            dtype: DataType::Int | DataType::Timestamp | DataType::Date | DataType::Interval,
        } => Some((*index, name.clone())),
        _ => None,
    };
    match c {
        Expr::Binary {
            op: BinaryOp::Eq,
            left,
            right,
            ..
        } => {
            let ((index, name), k) = match (column(left), key(right)) {
                (Some(c), Some(k)) => (c, k),
                _ => (column(right)?, key(left)?),
            };
            Some((index, name, vec![k]))
        }
        Expr::InList {
            expr,
            list,
            negated: false,
        } => {
            let (index, name) = column(expr)?;
            let keys: Option<Vec<i64>> = list.iter().map(key).collect();
            Some((index, name, keys?))
        }
        _ => None,
    }
}

/// One step of a compiled filter.
#[derive(Debug, Clone)]
pub enum FilterStep {
    /// Keep rows whose code (offset or dictionary) is in `lo..=hi`, or
    /// outside it when `negate`.
    CodeRange {
        /// Column index.
        column: usize,
        /// Smallest code kept.
        lo: u64,
        /// Largest code kept.
        hi: u64,
        /// Keep the complement instead.
        negate: bool,
    },
    /// Keep rows whose code is marked in `member`.
    CodeSet {
        /// Column index.
        column: usize,
        /// Lookup table indexed by code.
        member: Vec<bool>,
    },
    /// Keep rows where `value op constant` on an f64 column.
    FloatCompare {
        /// Column index.
        column: usize,
        /// The comparison.
        op: BinaryOp,
        /// The constant.
        constant: f64,
    },
    /// Keep rows `start..end`, found by binary search on a column sorted
    /// within the partition.
    RowRange {
        /// First row kept.
        start: u32,
        /// One past the last row kept.
        end: u32,
    },
    /// Keep non-NULL rows (`IS NOT NULL`, or what remains of a comparison
    /// that the zone map shows true for every value).
    NotNull {
        /// Column index.
        column: usize,
    },
    /// Keep NULL rows.
    IsNull {
        /// Column index.
        column: usize,
    },
    /// Keep rows of a packed string column whose bytes satisfy a predicate,
    /// read in place (no string is materialized).
    Packed {
        /// Column index.
        column: usize,
        /// The test.
        pred: PackedPred,
    },
    /// Keep rows passing a kernel on a compressed codec (`exec::codecs`),
    /// evaluated to mask words on the compressed form.
    Codec {
        /// Column index.
        column: usize,
        /// The kernel, compiled for this partition's codec.
        filter: CodecFilter,
    },
    /// Keep rows where any of the conjunctions holds: a conjunct that is
    /// an OR of ANDs whose every leaf compiled to a step with a 64-row mask
    /// kernel ([`FilterStep::Any`] leaves are such steps). Runs as one pass
    /// over 64-row blocks: a conjunction stops at the first step that
    /// empties the block, only rows no earlier conjunction kept are tested,
    /// and the disjunction stops once every row of the block is kept. Only
    /// TRUE rows pass each step, so NULLs behave as in WHERE.
    Any(Vec<Vec<FilterStep>>),
    /// Evaluate the expression with the generic vectorized evaluator.
    Generic(Expr),
}

/// A test on the bytes of one packed string.
#[derive(Debug, Clone)]
pub enum PackedPred {
    /// `value op constant`, bytes compared as strings compare.
    Compare(BinaryOp, String),
    /// `value [NOT] LIKE pattern`.
    Like(LikePattern, bool),
}

impl PackedPred {
    /// `= ''` or `<> ''`: answered from the lengths alone.
    fn empty_test(&self) -> Option<bool> {
        match self {
            PackedPred::Compare(BinaryOp::Eq, k) if k.is_empty() => Some(true),
            PackedPred::Compare(BinaryOp::NotEq, k) if k.is_empty() => Some(false),
            _ => None,
        }
    }

    #[inline]
    fn test(&self, s: &str) -> bool {
        match self {
            PackedPred::Compare(op, k) => compare(*op, s.as_bytes().cmp(k.as_bytes())),
            PackedPred::Like(p, negated) => p.matches(s) != *negated,
        }
    }
}

/// A filter compiled for one partition.
#[derive(Debug, Clone)]
pub enum CompiledFilter {
    /// No row of the partition can match; the reason, for EXPLAIN.
    Skip,
    /// Run these steps in order (none: every row matches).
    Steps(Vec<FilterStep>),
}

/// Compiles `filter` for `part`, recording choices in `trace`.
pub fn compile_filter(
    filter: Option<&Expr>,
    part: &Partition,
    trace: &mut Trace,
) -> CompiledFilter {
    let Some(filter) = filter else {
        return CompiledFilter::Steps(vec![]);
    };
    let specialized = specialize(filter, part);
    let mut conjuncts = Vec::new();
    specialized.split_chain_ref(BinaryOp::And, &mut conjuncts);
    let mut steps = Vec::new();
    // Steps that decode every row they test, and generic predicates, run
    // after the cheap steps, in the query's order, each on the rows left.
    let mut late = Vec::new();
    for c in conjuncts {
        match compile_conjunct(c, part) {
            Compiled::Never(reason) => {
                trace.add(
                    "skip partition: zone map / dictionary rules it out",
                    reason.clone(),
                );
                return CompiledFilter::Skip;
            }
            Compiled::Always(reason) => trace.add("drop predicate (true for every row)", reason),
            Compiled::Step(step, shape, detail) => {
                trace.add(shape, detail);
                match &step {
                    FilterStep::Codec { filter, .. } if filter.decodes_rows() => late.push(step),
                    _ => steps.push(step),
                }
            }
            Compiled::Generic => {
                trace.add_with("filter: generic vectorized predicate", || c.to_string());
                late.push(FilterStep::Generic(c.clone()));
            }
        }
    }
    steps.extend(late);
    CompiledFilter::Steps(steps)
}

enum Compiled {
    Never(String),
    Always(String),
    Step(FilterStep, String, String),
    Generic,
}

fn compile_conjunct(c: &Expr, part: &Partition) -> Compiled {
    match c {
        Expr::Binary {
            op: BinaryOp::Or, ..
        } => compile_any(c, part),
        Expr::Literal { value, .. } => match value {
            Value::Bool(true) => Compiled::Always(format!("{c}")),
            _ => Compiled::Never(format!("predicate is {value} for this partition")),
        },
        Expr::Binary {
            op, left, right, ..
        } if op.is_comparison() => match (&**left, &**right) {
            (Expr::Column { index, name, .. }, Expr::Literal { value, .. }) => {
                compile_compare(*index, name, *op, value, part)
            }
            (Expr::Literal { value, .. }, Expr::Column { index, name, .. }) => {
                compile_compare(*index, name, op.flip(), value, part)
            }
            _ => Compiled::Generic,
        },
        Expr::Like {
            expr,
            pattern,
            negated,
        } => match (&**expr, pattern.as_literal()) {
            (Expr::Column { index, name, .. }, Some(Value::Str(p)))
                if matches!(part.columns[*index].data, ColumnData::Packed(_)) =>
            {
                Compiled::Step(
                    FilterStep::Packed {
                        column: *index,
                        pred: PackedPred::Like(LikePattern::compile(p), *negated),
                    },
                    format!("filter {name} LIKE: packed strings tested in place"),
                    format!("{c}"),
                )
            }
            (Expr::Column { index, name, .. }, Some(Value::Str(p)))
                if codecs::is_compressed(&part.columns[*index]) =>
            {
                codec_step(
                    *index,
                    name,
                    codecs::compile_like(&part.columns[*index], p, *negated),
                    format!("{c}"),
                )
            }
            _ => Compiled::Generic,
        },
        Expr::InList {
            expr,
            list,
            negated: false,
        } => match &**expr {
            Expr::Column { index, name, .. } => {
                let values: Option<Vec<&Value>> = list
                    .iter()
                    .map(|e| e.as_literal().filter(|v| !v.is_null()))
                    .collect();
                match values {
                    Some(values) => compile_in(*index, name, &values, part),
                    None => Compiled::Generic,
                }
            }
            _ => Compiled::Generic,
        },
        Expr::IsNull { expr, negated } => match &**expr {
            Expr::Column { index, name, .. } => {
                let col = &part.columns[*index];
                match (col.zone.null_count, negated) {
                    (0, false) => Compiled::Never(format!("{name} has no NULLs in this partition")),
                    (0, true) => Compiled::Always(format!("{name} has no NULLs")),
                    (n, true) if n == col.len => {
                        Compiled::Never(format!("{name} is all NULL in this partition"))
                    }
                    (n, false) if n == col.len => Compiled::Always(format!("{name} is all NULL")),
                    (_, true) => Compiled::Step(
                        FilterStep::NotNull { column: *index },
                        format!("filter {name} IS NOT NULL: validity bitmap"),
                        String::new(),
                    ),
                    (_, false) => Compiled::Step(
                        FilterStep::IsNull { column: *index },
                        format!("filter {name} IS NULL: validity bitmap"),
                        String::new(),
                    ),
                }
            }
            _ => Compiled::Generic,
        },
        _ => Compiled::Generic,
    }
}

/// An OR of ANDs as [`FilterStep::Any`] when every leaf compiles to a step
/// with a 64-row mask kernel; terms that cannot match in `part` are
/// dropped, leaves true for every row are dropped from their term, and a
/// term left empty makes the whole OR true.
fn compile_any(c: &Expr, part: &Partition) -> Compiled {
    let mut terms = Vec::new();
    c.clone().split_chain(BinaryOp::Or, &mut terms);
    let mut any = Vec::new();
    let mut shapes: Vec<String> = Vec::new();
    for term in terms {
        let mut leaves = Vec::new();
        term.split_chain(BinaryOp::And, &mut leaves);
        let mut steps = Vec::new();
        let mut never = false;
        for leaf in &leaves {
            match compile_conjunct(leaf, part) {
                Compiled::Never(_) => never = true,
                Compiled::Always(_) => {}
                Compiled::Step(step, shape, _) if fusable(&step, part) => {
                    if !shapes.contains(&shape) {
                        shapes.push(shape);
                    }
                    steps.push(step);
                }
                Compiled::Step(..) | Compiled::Generic => return Compiled::Generic,
            }
        }
        if never {
            continue;
        }
        if steps.is_empty() {
            return Compiled::Always(format!("{c}"));
        }
        any.push(steps);
    }
    if any.is_empty() {
        return Compiled::Never(format!("no term of {c} can match in this partition"));
    }
    let kernels = shapes
        .iter()
        .map(|s| s.strip_prefix("filter ").unwrap_or(s))
        .collect::<Vec<_>>()
        .join("; ");
    let shape = format!(
        "filter OR of {} term{}: 64-row masks of each term's kernels ({kernels})",
        any.len(),
        if any.len() == 1 { "" } else { "s" }
    );
    Compiled::Step(FilterStep::Any(any), shape, format!("{c}"))
}

/// The inclusive i128 range of integers `x` with `x op k`, as `(lo, hi,
/// negate)`; `None` if the constant is not usable (NaN).
fn int_range(op: BinaryOp, k: &Value) -> Option<(i128, i128, bool)> {
    const MIN: i128 = i64::MIN as i128;
    const MAX: i128 = i64::MAX as i128;
    let (lo_k, hi_k, exact) = match k {
        Value::Int(v) | Value::Timestamp(v) | Value::Date(v) | Value::Interval(v) => {
            (*v as i128, *v as i128, true)
        }
        Value::Float(f) if !f.is_nan() => (f.ceil() as i128, f.floor() as i128, f.fract() == 0.0),
        _ => return None,
    };
    Some(match op {
        BinaryOp::Eq if exact => (lo_k, lo_k, false),
        BinaryOp::Eq => (1, 0, false),
        BinaryOp::NotEq if exact => (lo_k, lo_k, true),
        BinaryOp::NotEq => (1, 0, true),
        BinaryOp::Lt => (MIN, lo_k - 1, false),
        BinaryOp::LtEq => (MIN, hi_k, false),
        BinaryOp::Gt => (hi_k + 1, MAX, false),
        BinaryOp::GtEq => (lo_k, MAX, false),
        _ => return None,
    })
}

fn not_null_step(col: &Column, index: usize, name: &str, reason: String) -> Compiled {
    if col.zone.null_count == 0 {
        Compiled::Always(reason)
    } else {
        Compiled::Step(
            FilterStep::NotNull { column: index },
            format!("filter {name}: zone map shows every value matches; validity bitmap only"),
            reason,
        )
    }
}

/// A comparison of a coded column turned into a range of its codes.
struct CodeRangeCompare<'a> {
    col: &'a Column,
    index: usize,
    name: &'a str,
    /// The predicate, for EXPLAIN.
    pred: &'a str,
    codes: &'a Codes,
    /// The inclusive range of codes whose values satisfy the comparison
    /// before negation; `None` when no code does.
    codes_range: Option<(u64, u64)>,
    /// The largest code the column can hold.
    max_code: u64,
    /// The comparison holds outside the range (`<>`).
    negate: bool,
}

/// The filter step of an order-preserving code comparison: never or always
/// when the range is empty or full, a binary search when the column is
/// sorted, else a code range test on the packed codes. `codes_name` names
/// the codes (`packed u16 offset codes`), `detail` their mapping.
fn code_range_step(c: CodeRangeCompare<'_>, codes_name: String, detail: String) -> Compiled {
    let CodeRangeCompare {
        col,
        index,
        name,
        pred,
        codes,
        codes_range,
        max_code,
        negate,
    } = c;
    let zone = format!("zone map [{}, {}]", col.zone.min, col.zone.max);
    let every = || {
        not_null_step(
            col,
            index,
            name,
            format!("{zone}: {pred} holds for every value"),
        )
    };
    let Some((clo, chi)) = codes_range else {
        return if negate {
            every()
        } else {
            Compiled::Never(format!("{zone} rules out {pred}"))
        };
    };
    if clo == 0 && chi == max_code {
        return if negate {
            Compiled::Never(format!("{zone} rules out {pred}"))
        } else {
            every()
        };
    }
    if col.zone.sorted && !negate {
        // Codes ascend with the rows: the matches are one run.
        let (start, end) = with_codes!(codes, c => (
            c.partition_point(|x| x.to_u64() < clo),
            c.partition_point(|x| x.to_u64() <= chi),
        ));
        return Compiled::Step(
            FilterStep::RowRange {
                start: start as u32,
                end: end as u32,
            },
            format!("filter {name}: binary search (column sorted in partition)"),
            format!("{pred} → rows {start}..{end}"),
        );
    }
    Compiled::Step(
        FilterStep::CodeRange {
            column: index,
            lo: clo,
            hi: chi,
            negate,
        },
        format!("filter {name}: compare {codes_name} to a code range"),
        format!(
            "{pred} → codes {}in [{clo}, {chi}] ({detail})",
            if negate { "not " } else { "" }
        ),
    )
}

fn compile_compare(
    index: usize,
    name: &str,
    op: BinaryOp,
    k: &Value,
    part: &Partition,
) -> Compiled {
    let col = &part.columns[index];
    if k.is_null() {
        return Compiled::Never(format!("{name} {} NULL is never true", op.symbol()));
    }
    if col.zone.null_count == col.len {
        return Compiled::Never(format!("{name} is all NULL in this partition"));
    }
    let pred = format!(
        "{name} {} {}",
        op.symbol(),
        Expr::literal(k.clone(), DataType::Int)
    );
    if codecs::is_compressed(col) {
        return codec_step(index, name, codecs::compile_compare(col, op, k), pred);
    }
    match &col.data {
        ColumnData::Offset { base, scale, codes } => {
            let Some((lo, hi, negate)) = int_range(op, k) else {
                return Compiled::Generic;
            };
            let zmin = *base as i128;
            let zmax = match &col.zone.max {
                Value::Int(v) | Value::Timestamp(v) | Value::Date(v) | Value::Interval(v) => {
                    *v as i128
                }
                _ => return Compiled::Generic,
            };
            let scale = *scale as i128;
            let (lo, hi) = (lo.max(zmin), hi.min(zmax));
            // Codes c with lo <= zmin + c * scale <= hi.
            let clo = (lo - zmin + scale - 1).div_euclid(scale);
            let chi = (hi - zmin).div_euclid(scale);
            let max_code = (zmax - zmin) / scale;
            let codes_range = (lo <= hi && clo <= chi).then_some((clo as u64, chi as u64));
            code_range_step(
                CodeRangeCompare {
                    col,
                    index,
                    name,
                    pred: &pred,
                    codes,
                    codes_range,
                    max_code: max_code as u64,
                    negate,
                },
                format!("packed {} offset codes", codes.width_name()),
                format!("base {base}, scale {scale}"),
            )
        }
        ColumnData::IntDict { values, codes } => {
            let Some((lo, hi, negate)) = int_range(op, k) else {
                return Compiled::Generic;
            };
            // Codes c with lo <= values[c] <= hi: the values ascend.
            let clo = values.partition_point(|&v| (v as i128) < lo);
            let end = values.partition_point(|&v| (v as i128) <= hi);
            let codes_range = (clo < end).then(|| (clo as u64, end as u64 - 1));
            code_range_step(
                CodeRangeCompare {
                    col,
                    index,
                    name,
                    pred: &pred,
                    codes,
                    codes_range,
                    max_code: values.len().saturating_sub(1) as u64,
                    negate,
                },
                format!("packed {} integer dictionary codes", codes.width_name()),
                format!("{} distinct values", values.len()),
            )
        }
        ColumnData::Dict { dict, codes } => {
            let Value::Str(s) = k else {
                return Compiled::Generic;
            };
            let n = dict.len() as u64;
            let (lo, hi, negate) = match op {
                BinaryOp::Eq | BinaryOp::NotEq => match dict.code_of(s) {
                    Some(c) => (c, c, op == BinaryOp::NotEq),
                    None if op == BinaryOp::Eq => {
                        return Compiled::Never(format!("dictionary of {name} has no '{s}'"));
                    }
                    None => {
                        return not_null_step(
                            col,
                            index,
                            name,
                            format!("dictionary of {name} has no '{s}'"),
                        );
                    }
                },
                // code < lower_bound(s) ⇔ value < s; code < upper_bound(s) ⇔ value <= s.
                BinaryOp::Lt => (0, dict.lower_bound(s).wrapping_sub(1), false),
                BinaryOp::LtEq => (0, dict.upper_bound(s).wrapping_sub(1), false),
                BinaryOp::Gt => (dict.upper_bound(s), n - 1, false),
                BinaryOp::GtEq => (dict.lower_bound(s), n - 1, false),
                _ => return Compiled::Generic,
            };
            if !negate && (hi == u64::MAX || lo > hi || lo >= n) {
                return Compiled::Never(format!("sorted dictionary of {name} rules out {pred}"));
            }
            if !negate && lo == 0 && hi == n - 1 {
                return not_null_step(
                    col,
                    index,
                    name,
                    format!("{pred} holds for every dictionary entry"),
                );
            }
            Compiled::Step(
                FilterStep::CodeRange {
                    column: index,
                    lo,
                    hi,
                    negate,
                },
                format!(
                    "filter {name}: compare {} dictionary codes to a code range",
                    codes.width_name()
                ),
                format!(
                    "{pred} → codes {}in [{lo}, {hi}] of {n}",
                    if negate { "not " } else { "" }
                ),
            )
        }
        ColumnData::Float(_) => {
            let Some(c) = k.as_f64() else {
                return Compiled::Generic;
            };
            let (Some(zmin), Some(zmax)) = (col.zone.min.as_f64(), col.zone.max.as_f64()) else {
                return Compiled::Generic;
            };
            // Every value lies in [zmin, zmax]: test the bounds.
            let at_min = compare(op, cmp_f64(zmin, c));
            let at_max = compare(op, cmp_f64(zmax, c));
            let never = match op {
                BinaryOp::Lt | BinaryOp::LtEq => !at_min,
                BinaryOp::Gt | BinaryOp::GtEq => !at_max,
                BinaryOp::Eq => {
                    cmp_f64(c, zmin) == Ordering::Less || cmp_f64(c, zmax) == Ordering::Greater
                }
                _ => false,
            };
            let always = match op {
                BinaryOp::Lt | BinaryOp::LtEq => at_max,
                BinaryOp::Gt | BinaryOp::GtEq => at_min,
                BinaryOp::NotEq => {
                    cmp_f64(c, zmin) == Ordering::Less || cmp_f64(c, zmax) == Ordering::Greater
                }
                _ => false,
            };
            let zone = format!("zone map [{}, {}]", col.zone.min, col.zone.max);
            if never {
                return Compiled::Never(format!("{zone} rules out {pred}"));
            }
            if always {
                return not_null_step(
                    col,
                    index,
                    name,
                    format!("{zone}: {pred} holds for every value"),
                );
            }
            Compiled::Step(
                FilterStep::FloatCompare {
                    column: index,
                    op,
                    constant: c,
                },
                format!("filter {name}: f64 compare loop"),
                pred,
            )
        }
        ColumnData::Packed(_) => match k {
            Value::Str(s) => Compiled::Step(
                FilterStep::Packed {
                    column: index,
                    pred: PackedPred::Compare(op, s.to_string()),
                },
                format!("filter {name}: packed strings compared in place"),
                pred,
            ),
            _ => Compiled::Generic,
        },
        _ => Compiled::Generic,
    }
}

/// 2^63 as a float: the first integral float past `i64::MAX`.
const TWO_63: f64 = 9_223_372_036_854_775_808.0;

fn compile_in(index: usize, name: &str, values: &[&Value], part: &Partition) -> Compiled {
    let col = &part.columns[index];
    match &col.data {
        ColumnData::Dict { dict, codes } => {
            let mut member = vec![false; dict.len()];
            let mut found = 0;
            for v in values {
                if let Value::Str(s) = v
                    && let Some(c) = dict.code_of(s)
                {
                    found += !member[c as usize] as usize;
                    member[c as usize] = true;
                }
            }
            if found == 0 {
                return Compiled::Never(format!("dictionary of {name} has none of the IN list"));
            }
            Compiled::Step(
                FilterStep::CodeSet {
                    column: index,
                    member,
                },
                format!(
                    "filter {name} IN (…): {} dictionary codes against a code set",
                    codes.width_name()
                ),
                format!(
                    "{found} of {} list values present in the dictionary",
                    values.len()
                ),
            )
        }
        ColumnData::IntDict {
            values: distinct,
            codes,
        } => {
            let mut member = vec![false; distinct.len()];
            let mut found = 0;
            for v in values {
                let x = match v {
                    Value::Int(x) | Value::Timestamp(x) | Value::Date(x) | Value::Interval(x) => *x,
                    // Integral and inside i64 (2^63 itself is not).
                    Value::Float(f) if f.fract() == 0.0 && (-TWO_63..TWO_63).contains(f) => {
                        *f as i64
                    }
                    Value::Float(_) => continue,
                    _ => return Compiled::Generic,
                };
                if let Ok(c) = distinct.binary_search(&x) {
                    found += !member[c] as usize;
                    member[c] = true;
                }
            }
            if found == 0 {
                return Compiled::Never(format!(
                    "integer dictionary of {name} has none of the IN list"
                ));
            }
            Compiled::Step(
                FilterStep::CodeSet {
                    column: index,
                    member,
                },
                format!(
                    "filter {name} IN (…): packed {} integer dictionary codes against a code set",
                    codes.width_name()
                ),
                format!(
                    "{found} of {} list values present in the dictionary",
                    values.len()
                ),
            )
        }
        ColumnData::Offset { base, scale, codes } => {
            let zmin = *base as i128;
            let zmax = match &col.zone.max {
                Value::Int(v) | Value::Timestamp(v) | Value::Date(v) | Value::Interval(v) => {
                    *v as i128
                }
                _ => return Compiled::Generic,
            };
            let scale = *scale as i128;
            let range = ((zmax - zmin) / scale) as u64;
            let mut hits: Vec<u64> = Vec::new();
            for v in values {
                let x = match v {
                    Value::Int(x) | Value::Timestamp(x) | Value::Date(x) | Value::Interval(x) => {
                        *x as i128
                    }
                    Value::Float(f) if f.fract() == 0.0 && f.is_finite() => *f as i128,
                    Value::Float(_) => continue,
                    _ => return Compiled::Generic,
                };
                if x >= zmin && x <= zmax && (x - zmin) % scale == 0 {
                    hits.push(((x - zmin) / scale) as u64);
                }
            }
            if hits.is_empty() {
                return Compiled::Never(format!(
                    "zone map [{}, {}] rules out every value of the IN list on {name}",
                    col.zone.min, col.zone.max
                ));
            }
            if range > 1 << 20 {
                // Too wide for a lookup table: test each code (lists are short).
                hits.sort_unstable();
                hits.dedup();
                return Compiled::Step(
                    FilterStep::Generic(Expr::InList {
                        expr: Box::new(Expr::Column {
                            index,
                            name: name.to_string(),
                            dtype: col.dtype,
                        }),
                        list: values
                            .iter()
                            .map(|v| Expr::literal((*v).clone(), col.dtype))
                            .collect(),
                        negated: false,
                    }),
                    format!(
                        "filter {name} IN (…): generic (code range too wide for a lookup table)"
                    ),
                    format!(
                        "{} of {} list values inside the zone map",
                        hits.len(),
                        values.len()
                    ),
                );
            }
            let mut member = vec![false; range as usize + 1];
            for h in &hits {
                member[*h as usize] = true;
            }
            Compiled::Step(
                FilterStep::CodeSet {
                    column: index,
                    member,
                },
                format!(
                    "filter {name} IN (…): packed {} offset codes against a code set",
                    codes.width_name()
                ),
                format!(
                    "{} of {} list values inside the zone map",
                    hits.len(),
                    values.len()
                ),
            )
        }
        _ if codecs::is_compressed(col) => codec_step(
            index,
            name,
            codecs::compile_in(col, values),
            format!("{} list values", values.len()),
        ),
        _ => Compiled::Generic,
    }
}

/// A step running a kernel of `exec::codecs`, or the general path when it
/// has none for the form.
fn codec_step(
    column: usize,
    name: &str,
    compiled: Option<(CodecFilter, String)>,
    detail: String,
) -> Compiled {
    match compiled {
        Some((filter, how)) => Compiled::Step(
            FilterStep::Codec { column, filter },
            format!("filter {name}: {how}"),
            detail,
        ),
        None => Compiled::Generic,
    }
}

fn retain_valid(sel: Selection, validity: &Option<Bitmap>) -> Selection {
    match validity {
        None => sel,
        Some(b) => {
            let dense = b.dense();
            let b: &Bitmap = &dense;
            sel.into_iter().filter(|&i| b.get(i as usize)).collect()
        }
    }
}

/// Runs compiled filter steps over `part`; `None` means every row passes.
///
/// # Errors
/// Errors of the generic evaluator (overflow, division by zero).
pub fn run_filter(
    steps: &[FilterStep],
    part: &Partition,
    initial: Option<Selection>,
) -> Result<Option<Selection>> {
    let mut sel: Option<Selection> = initial;
    if sel.as_ref().is_some_and(Vec::is_empty) {
        return Ok(sel);
    }
    let mut steps = steps;
    if sel.is_none() {
        // The leading comparisons on codes and floats run as one pass over
        // 64-row blocks: each yields a mask, masks and validity words are
        // ANDed, and only surviving rows become indices.
        let fused = steps.iter().take_while(|s| fusable(s, part)).count();
        if fused > 0 {
            let ready: Vec<Ready> = steps[..fused].iter().map(|s| ready(s, part)).collect();
            let s = fused_select(&ready, part);
            let empty = s.is_empty();
            sel = Some(s);
            steps = &steps[fused..];
            if empty {
                return Ok(sel);
            }
        }
    }
    for step in steps {
        let cur = sel.as_deref();
        let next = match step {
            FilterStep::CodeRange {
                column,
                lo,
                hi,
                negate,
            } => {
                let col = &part.columns[*column];
                let s = match &col.data {
                    ColumnData::Offset { codes, .. }
                    | ColumnData::IntDict { codes, .. }
                    | ColumnData::Dict { codes, .. } => {
                        with_codes!(codes, c => kernel::select_code_range(c, cur, *lo, *hi, *negate))
                    }
                    _ => unreachable_step(),
                };
                retain_valid(s, &col.validity)
            }
            FilterStep::CodeSet { column, member } => {
                let col = &part.columns[*column];
                let s = match &col.data {
                    ColumnData::Offset { codes, .. }
                    | ColumnData::IntDict { codes, .. }
                    | ColumnData::Dict { codes, .. } => {
                        with_codes!(codes, c => kernel::select_code_set(c, cur, member))
                    }
                    _ => unreachable_step(),
                };
                retain_valid(s, &col.validity)
            }
            FilterStep::FloatCompare {
                column,
                op,
                constant,
            } => {
                let col = &part.columns[*column];
                let ColumnData::Float(v) = &col.data else {
                    return Err(crate::Error::Internal(
                        "float filter on a non-float column".into(),
                    ));
                };
                let s =
                    with_float_pred!(*op, *constant, pred => kernel::select_where(v, cur, pred));
                retain_valid(s, &col.validity)
            }
            FilterStep::RowRange { start, end } => match cur {
                None => (*start..*end).collect(),
                Some(s) => s
                    .iter()
                    .copied()
                    .filter(|r| (*start..*end).contains(r))
                    .collect(),
            },
            FilterStep::NotNull { column } => {
                let col = &part.columns[*column];
                let all: Selection = match cur {
                    Some(s) => s.to_vec(),
                    None => (0..part.rows as u32).collect(),
                };
                retain_valid(all, &col.validity)
            }
            FilterStep::IsNull { column } => {
                let col = &part.columns[*column];
                let all: Selection = match cur {
                    Some(s) => s.to_vec(),
                    None => (0..part.rows as u32).collect(),
                };
                match col.packed_validity().as_deref() {
                    None => Vec::new(),
                    Some(b) => all.into_iter().filter(|&i| !b.get(i as usize)).collect(),
                }
            }
            FilterStep::Packed { column, pred } => {
                let col = &part.columns[*column];
                let ColumnData::Packed(p) = &col.data else {
                    return Err(crate::Error::Internal(
                        "packed filter on a non-packed column".into(),
                    ));
                };
                let s = match pred.empty_test() {
                    Some(empty) => p.select_by_len(cur, |len| (len == 0) == empty),
                    None => p.select(cur, |b| pred.test(b)),
                };
                retain_valid(s, &col.validity)
            }
            FilterStep::Codec { column, filter } => {
                let col = &part.columns[*column];
                // FSST filters read only the rows left; the others give
                // the whole partition's mask.
                match cur.and_then(|s| filter.select_rows(col, s)) {
                    Some(s) => s,
                    None => marked_rows(&filter.mask(col), cur, part.rows),
                }
            }
            FilterStep::Any(_) => {
                let r = ready(step, part);
                let words: Vec<u64> = (0..part.rows.div_ceil(64))
                    .map(|b| ready_mask(&r, part, b, b * 64, (b * 64 + 64).min(part.rows)))
                    .collect();
                marked_rows(&words, cur, part.rows)
            }
            FilterStep::Generic(e) => {
                let rows = match cur {
                    Some(s) => Rows::some(s),
                    None => Rows::all(part.rows),
                };
                let d = eval(e, part, rows)?;
                let pos = true_positions(&d, rows.len);
                match cur {
                    Some(s) => pos.into_iter().map(|j| s[j as usize]).collect(),
                    None => pos,
                }
            }
        };
        let empty = next.is_empty();
        sel = Some(next);
        if empty {
            break;
        }
    }
    Ok(sel)
}

/// The rows of `cur` (all `rows` rows when `None`) whose bit is set in mask
/// `words`.
fn marked_rows(words: &[u64], cur: Option<&[u32]>, rows: usize) -> Selection {
    let bit = |r: u32| (words[r as usize / 64] >> (r % 64)) & 1 == 1;
    match cur {
        Some(s) => s.iter().copied().filter(|&r| bit(r)).collect(),
        None => (0..rows as u32).filter(|&r| bit(r)).collect(),
    }
}

/// True when `step` has a 64-row mask kernel ([`step_mask`]): leading
/// steps that have one run fused, as do the terms of an OR.
fn fusable(step: &FilterStep, part: &Partition) -> bool {
    match step {
        FilterStep::CodeRange { column, .. } | FilterStep::CodeSet { column, .. } => matches!(
            part.columns[*column].data,
            ColumnData::Offset { .. } | ColumnData::IntDict { .. } | ColumnData::Dict { .. }
        ),
        // Validity words, or a row span: a mask per block without a row
        // index list (a dimension join's `$matched IS NOT NULL` keeps 90%
        // of the rows).
        FilterStep::NotNull { .. } | FilterStep::IsNull { .. } | FilterStep::RowRange { .. } => {
            true
        }
        FilterStep::FloatCompare { column, .. } => {
            matches!(part.columns[*column].data, ColumnData::Float(_))
        }
        FilterStep::Codec { filter, .. } => !filter.decodes_rows(),
        FilterStep::Any(_) => true,
        _ => false,
    }
}

/// Rows `start..end` (at most 64) of `part` passing one fusable step, as a
/// mask; NULL rows (clear in `validity`, the step column's packed validity)
/// never pass.
fn step_mask(
    step: &FilterStep,
    part: &Partition,
    validity: Option<&Bitmap>,
    block: usize,
    start: usize,
    end: usize,
) -> u64 {
    let (column, mask) = match step {
        FilterStep::CodeRange {
            column,
            lo,
            hi,
            negate,
        } => {
            let mask = match &part.columns[*column].data {
                ColumnData::Offset { codes, .. }
                | ColumnData::IntDict { codes, .. }
                | ColumnData::Dict { codes, .. } => {
                    with_codes!(codes, c => code_range_mask(&c[start..end], *lo, *hi, *negate))
                }
                _ => 0,
            };
            (*column, mask)
        }
        FilterStep::FloatCompare {
            column,
            op,
            constant,
        } => {
            let ColumnData::Float(v) = &part.columns[*column].data else {
                return 0;
            };
            let v = &v[start..end];
            let mask = with_float_pred!(*op, *constant, pred => kernel::block_mask(v, pred));
            (*column, mask)
        }
        FilterStep::Codec { column, filter } => (
            *column,
            filter.block_mask(&part.columns[*column], start, end),
        ),
        FilterStep::CodeSet { column, member } => {
            let mask = match &part.columns[*column].data {
                ColumnData::Offset { codes, .. }
                | ColumnData::IntDict { codes, .. }
                | ColumnData::Dict { codes, .. } => {
                    with_codes!(codes, c => kernel::block_mask(&c[start..end], |x| {
                        member.get(x.to_usize()).copied().unwrap_or(false)
                    }))
                }
                _ => 0,
            };
            (*column, mask)
        }
        FilterStep::NotNull { column } => (*column, kernel::low_bits(end - start)),
        FilterStep::IsNull { .. } => {
            return match validity {
                Some(b) => !b.word(block) & kernel::low_bits(end - start),
                None => 0,
            };
        }
        FilterStep::RowRange { start: lo, end: hi } => {
            let (lo, hi) = (*lo as usize, *hi as usize);
            let from = lo.clamp(start, end) - start;
            let to = hi.clamp(start, end) - start;
            return kernel::low_bits(to) & !kernel::low_bits(from);
        }
        _ => return 0,
    };
    debug_assert!(validity.is_some() == part.columns[column].validity.is_some());
    match validity {
        Some(b) => mask & b.word(block),
        None => mask,
    }
}

/// The column whose validity a block step reads.
fn step_column(step: &FilterStep) -> Option<usize> {
    match step {
        FilterStep::CodeRange { column, .. }
        | FilterStep::FloatCompare { column, .. }
        | FilterStep::Codec { column, .. }
        | FilterStep::CodeSet { column, .. }
        | FilterStep::NotNull { column }
        | FilterStep::IsNull { column } => Some(*column),
        _ => None,
    }
}

/// Which of (at most 64) `codes` lie in `lo..=hi` (outside it when
/// `negate`), compared in the codes' own width.
fn code_range_mask<T: Code>(codes: &[T], lo: u64, hi: u64, negate: bool) -> u64 {
    let hi = hi.min(T::MAX_U64);
    if lo > hi {
        return if negate {
            kernel::low_bits(codes.len())
        } else {
            0
        };
    }
    let (lo, span) = (T::from_u64(lo), T::from_u64(hi - lo));
    kernel::block_mask(codes, |x| x.in_span(lo, span) != negate)
}

/// A fusable step ready to yield 64-row masks.
enum Ready<'s> {
    /// Through [`step_mask`], with the step column's validity packed once
    /// per partition (a bit of the sparse layout is a search).
    Block(&'s FilterStep, Option<Cow<'s, Bitmap>>),
    /// A codec kernel without a block kernel: the partition's mask words,
    /// computed once.
    Words(Vec<u64>),
    /// [`FilterStep::Any`], its steps made ready.
    Any(Vec<Vec<Ready<'s>>>),
}

fn ready<'s>(step: &'s FilterStep, part: &'s Partition) -> Ready<'s> {
    match step {
        FilterStep::Codec { column, filter } if !filter.per_block() => {
            Ready::Words(filter.mask(&part.columns[*column]))
        }
        FilterStep::Any(terms) => Ready::Any(
            terms
                .iter()
                .map(|t| t.iter().map(|s| ready(s, part)).collect())
                .collect(),
        ),
        _ => Ready::Block(
            step,
            step_column(step).and_then(|c| part.columns[c].packed_validity()),
        ),
    }
}

/// Rows `start..end` of block `block` passing a ready step, as a mask.
fn ready_mask(r: &Ready, part: &Partition, block: usize, start: usize, end: usize) -> u64 {
    match r {
        Ready::Block(step, validity) => {
            step_mask(step, part, validity.as_deref(), block, start, end)
        }
        Ready::Words(words) => words[block],
        Ready::Any(terms) => {
            let all = kernel::low_bits(end - start);
            let mut kept = 0;
            for term in terms {
                let mut mask = all & !kept;
                for step in term {
                    if mask == 0 {
                        break;
                    }
                    mask &= ready_mask(step, part, block, start, end);
                }
                kept |= mask;
                if kept == all {
                    break;
                }
            }
            kept
        }
    }
}

/// Runs fusable steps together over 64-row blocks.
fn fused_select(steps: &[Ready], part: &Partition) -> Selection {
    let n = part.rows;
    let mut out = Vec::with_capacity(n / 4);
    for block in 0..n.div_ceil(64) {
        let start = block * 64;
        let end = (start + 64).min(n);
        let mut mask = kernel::low_bits(end - start);
        for step in steps {
            mask &= ready_mask(step, part, block, start, end);
            if mask == 0 {
                break;
            }
        }
        while mask != 0 {
            out.push(start as u32 + mask.trailing_zeros());
            mask &= mask - 1;
        }
    }
    out
}

fn unreachable_step() -> Selection {
    debug_assert!(false, "code filter compiled for a column without codes");
    Vec::new()
}
