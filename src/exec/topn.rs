//! Top-n: the best `n` rows of a partition by the full ORDER BY key.
//!
//! # Design
//! Rows are ordered by every sort key and then by load order, a total
//! order, so exactly `n` rows are kept and ties past the limit are dropped
//! (as a stable sort followed by LIMIT would). Two strategies:
//! - a buffer of candidates cut back to the best `n` with a selection
//!   (`select_nth_unstable`) whenever it holds `2n`; the `n`-th best then
//!   becomes a threshold that rejects most later rows with one comparison
//!   (DataFusion's `TopK` keeps a heap; this is the same bound,
//!   O(rows · log n) at worst and about one comparison per row once the
//!   threshold is tight);
//! - when the first key is a plain column with few codes (a dictionary, or
//!   offsets in a narrow range), codes are counted first; the codes that
//!   hold the best `n` rows are found from the counts, and rows are
//!   collected only from those codes (the last, partly needed code through
//!   the buffer above on the remaining keys).
//!
//! One more strategy spans partitions: with a single sort key whose codes
//! can be counted in every partition ([`key_histogram`]), the counts alone
//! place every (value, partition) group of rows in the total order, so
//! [`window_slices`] says exactly which ranks of which codes in which
//! partition fall inside the OFFSET/LIMIT window, and [`collect_slices`]
//! picks those rows out in one pass that stops when its slices are full.
//! No candidate is compared or sorted: `ORDER BY k LIMIT 10 OFFSET 100000`
//! over a 4-value `k` reads the codes twice and touches 10 rows.
//!
//! Before either, when the first key is a plain column without NULLs and
//! `n` is small against the partition, a sample of the column places a
//! threshold that about `2n` rows reach, and the partition's filter kernel
//! for `key >= threshold` (`<=` ascending) runs on the codec ([`prefilter`]):
//! only the rows it keeps are decoded and ranked. Every row of the top `n`
//! is among them whenever at least `n` pass, ties with the threshold
//! included; otherwise every row is ranked.
//!
//! Buffers are sized by the rows of the partition, never by the `n` the
//! user typed.

use std::cmp::Ordering;
use std::ops::Range;

use crate::error::Result;
use crate::plan::{BinaryOp, Expr, SortKey};
use crate::store::with_codes;
use crate::store::{Bitmap, Code, Codes, Column, ColumnData, Partition};
use crate::types::{DataType, Value, cmp_f64};

use super::filter::{CompiledFilter, FilterStep, compile_filter, run_filter};
use super::trace::Trace;
use super::vector::{Array, Data, Datum, Rows, Strs, eval};

/// A row that may be among the best: its partition, its row in the
/// partition, and its sort key values.
#[derive(Debug, Clone)]
pub struct Candidate {
    /// Partition index.
    pub part: usize,
    /// Row within the partition.
    pub row: u32,
    /// Sort key values, in ORDER BY order.
    pub keys: Vec<Value>,
}

/// One sort key's values at the selected rows, compared without building
/// [`Value`]s.
enum KeyCol<'d, 'a> {
    Const,
    Int(&'d [i64], Option<&'d Bitmap>),
    Float(&'d [f64], Option<&'d Bitmap>),
    Str(&'d Strs<'a>, Option<&'d Bitmap>),
    Bool(&'d Bitmap, Option<&'d Bitmap>),
}

struct Key<'d, 'a> {
    col: KeyCol<'d, 'a>,
    desc: bool,
    nulls_first: bool,
}

impl Key<'_, '_> {
    #[inline]
    fn cmp(&self, a: usize, b: usize) -> Ordering {
        let null_cmp = |va: bool, vb: bool| -> Option<Ordering> {
            match (va, vb) {
                (true, true) => None,
                (false, false) => Some(Ordering::Equal),
                (false, true) => Some(if self.nulls_first {
                    Ordering::Less
                } else {
                    Ordering::Greater
                }),
                (true, false) => Some(if self.nulls_first {
                    Ordering::Greater
                } else {
                    Ordering::Less
                }),
            }
        };
        let valid = |v: Option<&Bitmap>, i: usize| v.is_none_or(|b| b.get(i));
        let (o, validity) = match &self.col {
            KeyCol::Const => return Ordering::Equal,
            KeyCol::Int(x, v) => (x[a].cmp(&x[b]), *v),
            KeyCol::Float(x, v) => (cmp_f64(x[a], x[b]), *v),
            KeyCol::Str(x, v) => (x.get(a).as_bytes().cmp(x.get(b).as_bytes()), *v),
            KeyCol::Bool(x, v) => (x.get(a).cmp(&x.get(b)), *v),
        };
        if validity.is_some()
            && let Some(n) = null_cmp(valid(validity, a), valid(validity, b))
        {
            return n;
        }
        if self.desc { o.reverse() } else { o }
    }
}

fn key_col<'d, 'a>(d: &'d Datum<'a>) -> KeyCol<'d, 'a> {
    match d {
        Datum::Scalar(_) => KeyCol::Const,
        Datum::Array(Array { data, validity, .. }) => {
            let v = validity.as_ref();
            match data {
                Data::Int(x) => KeyCol::Int(x, v),
                Data::Float(x) => KeyCol::Float(x, v),
                Data::Str(x) => KeyCol::Str(x, v),
                Data::Bool(x) => KeyCol::Bool(x, v),
            }
        }
    }
}

/// The best `k` of positions `0..n` under `cmp` (a total order), in
/// ascending order.
fn best_k(
    candidates: impl Iterator<Item = u32>,
    k: usize,
    cmp: impl Fn(u32, u32) -> Ordering,
) -> Vec<u32> {
    if k == 0 {
        return Vec::new();
    }
    let mut buf: Vec<u32> = Vec::new();
    let mut threshold: Option<u32> = None;
    for j in candidates {
        if let Some(t) = threshold
            && cmp(j, t) != Ordering::Less
        {
            continue;
        }
        buf.push(j);
        if buf.len() >= 2 * k {
            buf.select_nth_unstable_by(k - 1, |&a, &b| cmp(a, b));
            buf.truncate(k);
            threshold = buf.iter().copied().max_by(|&a, &b| cmp(a, b));
        }
    }
    buf.sort_unstable_by(|&a, &b| cmp(a, b));
    buf.truncate(k);
    buf
}

/// The first sort key of every row as a `u64` whose unsigned order is the
/// key's sort order (descending folded in): integers with the sign bit
/// flipped, floats by their total-order bits (`-0.0` as `0.0`, NaN above
/// every number, as [`cmp_f64`]), dictionary strings by code (the
/// dictionary is sorted). `None` for other keys or when the key has NULLs.
fn normalized_first_key(
    key: &(Expr, SortKey),
    datum: &Datum<'_>,
    part: &Partition,
) -> Option<Vec<u64>> {
    let (expr, sort) = key;
    let flip = |x: u64| if sort.desc { !x } else { x };
    let a = match datum {
        Datum::Array(a) if a.validity.is_none() => a,
        _ => return None,
    };
    Some(match &a.data {
        Data::Int(v) => v.iter().map(|&x| flip((x as u64) ^ (1 << 63))).collect(),
        Data::Float(v) => v
            .iter()
            .map(|&x| {
                let b = crate::kernel::hash::canonical_f64_bits(x);
                flip(if b >> 63 == 1 { !b } else { b | (1 << 63) })
            })
            .collect(),
        Data::Str(Strs::Coded { codes, .. }) => match expr {
            Expr::Column { index, .. }
                if matches!(part.columns[*index].data, ColumnData::Dict { .. }) =>
            {
                codes.iter().map(|&c| flip(c as u64)).collect()
            }
            _ => return None,
        },
        _ => return None,
    })
}

/// [`best_k`] over normalized first keys: most rows are rejected by one
/// `u64` comparison with the threshold's key; ties on the first key go to
/// `rest` (the other keys, then load order).
fn best_k_normalized(norm: &[u64], k: usize, rest: impl Fn(u32, u32) -> Ordering) -> Vec<u32> {
    let cmp = |a: u32, b: u32| {
        norm[a as usize]
            .cmp(&norm[b as usize])
            .then_with(|| rest(a, b))
    };
    let mut buf: Vec<u32> = Vec::new();
    let mut threshold: Option<(u64, u32)> = None;
    for (j, &key) in norm.iter().enumerate() {
        let j = j as u32;
        if let Some((tk, tj)) = threshold
            && (key > tk || (key == tk && rest(j, tj) != Ordering::Less))
        {
            continue;
        }
        buf.push(j);
        if buf.len() >= 2 * k {
            buf.select_nth_unstable_by(k - 1, |&a, &b| cmp(a, b));
            buf.truncate(k);
            threshold = buf
                .iter()
                .copied()
                .max_by(|&a, &b| cmp(a, b))
                .map(|t| (norm[t as usize], t));
        }
    }
    buf.sort_unstable_by(|&a, &b| cmp(a, b));
    buf.truncate(k);
    buf
}

/// The rows of partition `part` (index `part_index`) that can be among the
/// best `k` of the whole query under `keys`, with their key values.
///
/// `floor`, when given, is the first key of the `k`-th best row of the
/// partitions read before (see [`keep_best`]): rows whose first key is
/// worse cannot enter, so it replaces the sampled threshold of the
/// prefilter, and any number of rows may pass it.
///
/// # Errors
/// Evaluation errors of the sort keys at any selected row.
pub fn partition_top(
    keys: &[(Expr, SortKey)],
    part: &Partition,
    part_index: usize,
    rows: Rows<'_>,
    k: usize,
    floor: Option<&Value>,
    trace: &mut Trace,
) -> Result<Vec<Candidate>> {
    if k == 0 {
        return Ok(Vec::new());
    }
    match prefilter(keys, part, rows, k, floor, trace)? {
        Some(sel) => ranked_top(keys, part, part_index, Rows::some(&sel), k, trace),
        None => ranked_top(keys, part, part_index, rows, k, trace),
    }
}

/// Rows a partition's sample places the threshold of [`prefilter`] with.
const PREFILTER_SAMPLES: usize = 1024;

/// Rows per wanted row (`n`) below which [`prefilter`] does not pay.
const PREFILTER_MIN_ROWS_PER_K: usize = 16;

/// The rows of `rows` whose first sort key (a plain column without NULLs
/// in `part`) is at least as good as a threshold that about `2k` of them
/// reach, placed by [`PREFILTER_SAMPLES`] evenly spaced rows and found by
/// the filter kernel the partition's codec has for `key >= t` (`key <= t`
/// ascending): ALP codes, offset or dictionary codes compared in place.
/// Whenever `k` rows or more pass, the best `k` of `rows` are among them
/// (a row past the threshold is beaten by every row that passes).
/// With a `floor` (the `k`-th best first key of the partitions read
/// before), the threshold is the floor itself: a row past it is beaten by
/// `k` rows already found, so any number of rows may pass.
/// `None` when the shape does not fit, no kernel runs on the codec, or
/// fewer than `k` rows (without a floor) or most rows pass.
///
/// # Errors
/// None in practice: the comparison of a column with a literal cannot fail.
fn prefilter(
    keys: &[(Expr, SortKey)],
    part: &Partition,
    rows: Rows<'_>,
    k: usize,
    floor: Option<&Value>,
    trace: &mut Trace,
) -> Result<Option<Vec<u32>>> {
    let n = rows.len;
    let (column @ Expr::Column { index, dtype, .. }, sort) = (&keys[0].0, keys[0].1) else {
        return Ok(None);
    };
    let col = &part.columns[*index];
    if k.saturating_mul(PREFILTER_MIN_ROWS_PER_K) > n || col.zone.null_count > 0 {
        return Ok(None);
    }
    // A NULL or NaN floor has no comparison to filter with: sample instead.
    let floor = floor.filter(|f| !f.is_null() && !matches!(f, Value::Float(x) if x.is_nan()));
    let threshold = match floor {
        Some(floor) => floor.clone(),
        None => {
            let step = (n / PREFILTER_SAMPLES).max(1);
            let mut sample: Vec<Value> = (0..n)
                .step_by(step)
                .map(|j| col.value(rows.row(j)))
                .collect();
            let m = sample.len();
            // The sample's best `rank + 1` stand for about `2k` rows.
            let rank = (2 * k * m).div_ceil(n).clamp(1, m) - 1;
            sample.select_nth_unstable_by(rank, |a, b| order_values_of(a, b, sort));
            sample.swap_remove(rank)
        }
    };
    if threshold.is_null() || matches!(threshold, Value::Float(f) if f.is_nan()) {
        return Ok(None);
    }
    let op = if sort.desc {
        BinaryOp::GtEq
    } else {
        BinaryOp::LtEq
    };
    let shown = format!("{column} {} {threshold}", op.symbol());
    let pred = Expr::binary(
        op,
        column.clone(),
        Expr::literal(threshold, *dtype),
        DataType::Bool,
    );
    let steps = match compile_filter(Some(&pred), part, &mut Trace::new(false)) {
        CompiledFilter::Steps(steps) if !steps.is_empty() => steps,
        _ => return Ok(None),
    };
    if steps.iter().any(|s| matches!(s, FilterStep::Generic(_))) {
        return Ok(None);
    }
    let Some(sel) = run_filter(&steps, part, rows.sel.map(<[u32]>::to_vec))? else {
        return Ok(None);
    };
    if (floor.is_none() && sel.len() < k) || sel.len() > n / 2 {
        return Ok(None);
    }
    trace.add(
        if floor.is_some() {
            "top-n: first key filtered past the n-th best of the partitions read before, on the codec"
        } else {
            "top-n: first key filtered past a sampled threshold on the codec first"
        },
        shown,
    );
    Ok(Some(sel))
}

/// The best `k` of `rows` (at least one wanted), ranked.
fn ranked_top(
    keys: &[(Expr, SortKey)],
    part: &Partition,
    part_index: usize,
    rows: Rows<'_>,
    k: usize,
    trace: &mut Trace,
) -> Result<Vec<Candidate>> {
    let n = rows.len;
    let datums: Vec<Datum<'_>> = keys
        .iter()
        .map(|(e, _)| eval(e, part, rows))
        .collect::<Result<_>>()?;
    let cols: Vec<Key<'_, '_>> = datums
        .iter()
        .zip(keys)
        .map(|(d, (_, s))| Key {
            col: key_col(d),
            desc: s.desc,
            nulls_first: s.nulls_first,
        })
        .collect();
    let cmp = |a: u32, b: u32| -> Ordering {
        for c in &cols {
            let o = c.cmp(a as usize, b as usize);
            if o != Ordering::Equal {
                return o;
            }
        }
        a.cmp(&b)
    };
    let chosen: Vec<u32> = if k >= n {
        trace.add(
            "top-n: every selected row is a candidate",
            format!("n = {k} of {n} rows"),
        );
        (0..n as u32).collect()
    } else if let Some(chosen) = by_code_counts(keys, part, rows, k, &cmp, trace) {
        chosen
    } else if let Some(norm) = normalized_first_key(&keys[0], &datums[0], part) {
        trace.add(
            "top-n: first sort key as order-preserving u64, running threshold",
            format!("n = {k} of {n} rows"),
        );
        let rest = |a: u32, b: u32| -> Ordering {
            for c in &cols[1..] {
                let o = c.cmp(a as usize, b as usize);
                if o != Ordering::Equal {
                    return o;
                }
            }
            a.cmp(&b)
        };
        best_k_normalized(&norm, k, rest)
    } else {
        trace.add(
            "top-n: candidate buffer with running threshold on the full sort key",
            format!("n = {k} of {n} rows"),
        );
        best_k(0..n as u32, k, cmp)
    };
    Ok(chosen
        .into_iter()
        .map(|j| Candidate {
            part: part_index,
            row: rows.row(j as usize) as u32,
            keys: datums.iter().map(|d| d.value(j as usize)).collect(),
        })
        .collect())
}

/// The best `k` selected rows of a partition under one integer or float
/// sort key without NULLs, as `(normalized key, row)` pairs whose order
/// (key, then row) is the sort order and whose keys compare across
/// partitions; `Ok(None)` for other keys. No [`Value`] is built: the large
/// windows of `LIMIT n OFFSET m` keep every row a candidate, and a
/// [`Candidate`] per row with its keys on the heap cost more than the sort.
///
/// # Errors
/// Evaluation errors of the key.
pub fn partition_top_normalized(
    key: &(Expr, SortKey),
    part: &Partition,
    rows: Rows<'_>,
    k: usize,
) -> Result<Option<Vec<(u64, u32)>>> {
    let datum = eval(&key.0, part, rows)?;
    if matches!(&datum, Datum::Array(a) if matches!(a.data, Data::Str(_))) {
        // Strings normalize by dictionary code: not across partitions.
        return Ok(None);
    }
    let Some(norm) = normalized_first_key(key, &datum, part) else {
        return Ok(None);
    };
    let mut pairs: Vec<(u64, u32)> = norm
        .into_iter()
        .enumerate()
        .map(|(j, x)| (x, rows.row(j) as u32))
        .collect();
    if k < pairs.len() {
        if k == 0 {
            return Ok(Some(Vec::new()));
        }
        pairs.select_nth_unstable(k - 1);
        pairs.truncate(k);
    }
    Ok(Some(pairs))
}

/// Codes of the first sort key, when it is a plain column with an
/// order-preserving codec and at most this many codes.
const COUNT_MAX_CODES: usize = 1 << 16;

/// A column's codes when their order is the values' order: dictionary
/// codes (the dictionary is sorted), integer dictionary codes or offsets,
/// with the number of codes
/// the column's range spans and the codec's name.
fn ordered_codes(col: &Column) -> Option<(&Codes, usize, &'static str)> {
    match &col.data {
        ColumnData::Dict { dict, codes } => Some((codes, dict.len(), "dictionary")),
        ColumnData::IntDict { values, codes } => Some((codes, values.len(), "integer dictionary")),
        ColumnData::Offset { codes, scale, .. } => {
            let range = match (&col.zone.min, &col.zone.max) {
                (
                    Value::Int(a) | Value::Timestamp(a) | Value::Date(a) | Value::Interval(a),
                    Value::Int(b) | Value::Timestamp(b) | Value::Date(b) | Value::Interval(b),
                ) => (*b as i128 - *a as i128) as u128,
                _ => return None,
            };
            let card = usize::try_from(range / (*scale).max(1) as u128)
                .ok()?
                .checked_add(1)?;
            Some((codes, card, "offset"))
        }
        _ => None,
    }
}

/// An integer of `col`'s type.
fn int_value(col: &Column, v: i64) -> Value {
    Value::from_integer(v, col.dtype)
}

/// The value of code `code` of a column [`ordered_codes`] accepts.
fn code_value(col: &Column, code: usize) -> Value {
    match &col.data {
        ColumnData::Dict { dict, .. } => Value::Str(dict.get(code).clone()),
        ColumnData::Offset { base, scale, .. } => int_value(
            col,
            base.wrapping_add((code as u64).wrapping_mul(*scale) as i64),
        ),
        ColumnData::IntDict { values, .. } => int_value(col, values[code]),
        _ => Value::Null,
    }
}

/// Rows per code (`card` codes) at `rows` of a column's codes, and the NULL
/// rows apart.
fn count_codes(
    codes: &Codes,
    card: usize,
    validity: Option<&Bitmap>,
    rows: Rows<'_>,
) -> (Vec<usize>, usize) {
    let valid = |r: usize| validity.is_none_or(|b| b.get(r));
    let mut counts = vec![0usize; card];
    let mut nulls = 0usize;
    with_codes!(codes, c => {
        for j in 0..rows.len {
            let r = rows.row(j);
            if valid(r) {
                counts[c[r].to_usize()] += 1;
            } else {
                nulls += 1;
            }
        }
    });
    (counts, nulls)
}

/// Whether [`key_histogram`] accepts `col` with at most `max_codes` codes
/// (the merge sorts one entry per code and partition:
/// [`crate::exec::ExecOptions::histogram_max_codes`]).
pub fn histogram_fits(col: &Column, max_codes: usize) -> bool {
    matches!(col.data, ColumnData::Const(_))
        || ordered_codes(col).is_some_and(|(_, card, _)| card <= max_codes)
}

/// Rows per value of a sort-key column over one partition's selected rows.
#[derive(Debug, Clone)]
pub struct KeyHistogram {
    /// `(code, value, rows)` for each code with rows, by code; NULL rows
    /// are counted apart.
    pub codes: Vec<(u32, Value, usize)>,
    /// Selected rows that are NULL.
    pub nulls: usize,
}

impl KeyHistogram {
    /// Selected rows counted.
    pub fn rows(&self) -> usize {
        self.nulls + self.codes.iter().map(|c| c.2).sum::<usize>()
    }
}

/// Counts `rows` of `col` per code; `None` unless the column's codes keep
/// the values' order (dictionary, offsets; see [`ordered_codes`]) and span
/// at most `max_codes` codes, or it is one constant.
pub fn key_histogram(col: &Column, rows: Rows<'_>, max_codes: usize) -> Option<KeyHistogram> {
    let dense = col.packed_validity();
    let validity = dense.as_deref();
    let valid = |r: usize| validity.is_none_or(|b| b.get(r));
    if let ColumnData::Const(v) = &col.data {
        let valid_rows = (0..rows.len).filter(|&j| valid(rows.row(j))).count();
        let nulls = if v.is_null() {
            rows.len
        } else {
            rows.len - valid_rows
        };
        let codes = if v.is_null() || valid_rows == 0 {
            Vec::new()
        } else {
            vec![(0, v.clone(), valid_rows)]
        };
        return Some(KeyHistogram { codes, nulls });
    }
    let (codes, card, _) = ordered_codes(col)?;
    if card > max_codes {
        return None;
    }
    let (counts, nulls) = count_codes(codes, card, validity, rows);
    let codes = counts
        .iter()
        .enumerate()
        .filter(|&(_, &n)| n > 0)
        .map(|(code, &n)| (code as u32, code_value(col, code), n))
        .collect();
    Some(KeyHistogram { codes, nulls })
}

/// The rows of one code (`None`: the NULL rows) of one partition that fall
/// in the window: those ranked `lo..hi` among them in load order, going to
/// window positions `at..at + (hi - lo)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WindowSlice {
    /// The code, or `None` for NULL rows.
    pub code: Option<u32>,
    /// First rank taken.
    pub lo: usize,
    /// One past the last rank taken.
    pub hi: usize,
    /// Window position of rank `lo`.
    pub at: usize,
}

/// Lays the window (positions `window` of the order by the one sort key
/// `key`, then partition, then row) over the histograms, given in
/// partition order: the slices each histogram's partition contributes.
pub fn window_slices(
    hists: &[&KeyHistogram],
    key: SortKey,
    window: Range<usize>,
) -> Vec<Vec<WindowSlice>> {
    // One group per (value, partition): NULL groups carry `None`.
    let mut groups: Vec<(&Value, usize, Option<u32>, usize)> = Vec::new();
    for (h, hist) in hists.iter().enumerate() {
        groups.extend(hist.codes.iter().map(|(c, v, n)| (v, h, Some(*c), *n)));
        if hist.nulls > 0 {
            groups.push((&Value::Null, h, None, hist.nulls));
        }
    }
    groups.sort_by(|a, b| order_values_of(a.0, b.0, key).then(a.1.cmp(&b.1)));
    let mut slices = vec![Vec::new(); hists.len()];
    let mut pos = 0usize;
    for (_, h, code, n) in groups {
        let (start, end) = (pos, pos + n);
        pos = end;
        if end <= window.start {
            continue;
        }
        if start >= window.end {
            break;
        }
        let from = start.max(window.start);
        let to = end.min(window.end);
        slices[h].push(WindowSlice {
            code,
            lo: from - start,
            hi: to - start,
            at: from - window.start,
        });
    }
    slices
}

fn order_values_of(a: &Value, b: &Value, key: SortKey) -> Ordering {
    super::vector::order_values(a, b, key.desc, key.nulls_first)
}

/// Picks out the rows of `slices` from `rows` of `col` (the rows the
/// histogram counted): `(window position, row)` pairs, in row order. Stops
/// reading once every slice is full.
pub fn collect_slices(col: &Column, rows: Rows<'_>, slices: &[WindowSlice]) -> Vec<(usize, u32)> {
    let dense = col.packed_validity();
    let validity = dense.as_deref();
    let valid = |r: usize| validity.is_none_or(|b| b.get(r));
    let mut out = Vec::with_capacity(slices.iter().map(|s| s.hi - s.lo).sum());
    let null_slice = slices.iter().position(|s| s.code.is_none());
    // Slot of each code's slice, and how many of its rows were seen.
    let mut slot_of: Vec<u32> = Vec::new();
    for (i, s) in slices.iter().enumerate() {
        if let Some(c) = s.code {
            let c = c as usize;
            if slot_of.len() <= c {
                slot_of.resize(c + 1, u32::MAX);
            }
            slot_of[c] = i as u32;
        }
    }
    let mut seen = vec![0usize; slices.len()];
    let mut open = slices.iter().filter(|s| s.hi > s.lo).count();
    let codes = match &col.data {
        ColumnData::Const(_) => None,
        _ => ordered_codes(col).map(|c| c.0),
    };
    // A NULL constant is NULL at every row, whatever its validity says (as
    // `key_histogram` counts it).
    let all_null = matches!(col.data, ColumnData::Const(Value::Null));
    for j in 0..rows.len {
        if open == 0 {
            break;
        }
        let r = rows.row(j);
        let slot = if all_null || !valid(r) {
            null_slice
        } else {
            let code = codes.map_or(0, |c| c.get(r) as usize);
            slot_of
                .get(code)
                .copied()
                .filter(|&s| s != u32::MAX)
                .map(|s| s as usize)
        };
        if let Some(slot) = slot {
            let s = &slices[slot];
            let rank = seen[slot];
            seen[slot] += 1;
            if rank >= s.lo && rank < s.hi {
                out.push((s.at + rank - s.lo, r as u32));
                if rank + 1 == s.hi {
                    open -= 1;
                }
            }
        }
    }
    out
}

/// Counts rows per code of the first key and collects only the rows of the
/// codes that can make the top `k`; `None` when the first key is not such a
/// column or the rows are too few for counting to pay.
fn by_code_counts(
    keys: &[(Expr, SortKey)],
    part: &Partition,
    rows: Rows<'_>,
    k: usize,
    cmp: &impl Fn(u32, u32) -> Ordering,
    trace: &mut Trace,
) -> Option<Vec<u32>> {
    let (Expr::Column { index, name, .. }, key) = &keys.first()? else {
        return None;
    };
    let col = &part.columns[*index];
    let n = rows.len;
    let (codes, card, what) = ordered_codes(col)?;
    if card > COUNT_MAX_CODES || card * 4 > n || k * 4 > n {
        return None;
    }
    let dense = col.packed_validity();
    let validity = dense.as_deref();
    let valid = |r: usize| validity.is_none_or(|b| b.get(r));
    // Counts per code; NULLs apart.
    let (counts, nulls) = count_codes(codes, card, validity, rows);
    // Walk the codes in sort order until k rows are covered.
    let order: Box<dyn Iterator<Item = usize>> = if key.desc {
        Box::new((0..card).rev())
    } else {
        Box::new(0..card)
    };
    let mut before = 0usize;
    let nulls_first = key.nulls_first;
    if nulls_first && nulls >= k {
        return None;
    }
    if nulls_first {
        before += nulls;
    }
    let mut boundary: Option<usize> = None;
    for code in order {
        let c = counts[code];
        if before + c >= k {
            boundary = Some(code);
            break;
        }
        before += c;
    }
    // Rows strictly before the boundary code are all kept; rows of the
    // boundary code compete for what is left.
    let better = |code: usize| match boundary {
        None => true,
        Some(b) => {
            if key.desc {
                code > b
            } else {
                code < b
            }
        }
    };
    let mut kept: Vec<u32> = Vec::new();
    let mut tied: Vec<u32> = Vec::new();
    // With one sort key, load order breaks ties: the first k rows of the
    // boundary code are the best of them.
    let tied_cap = if keys.len() == 1 { k } else { usize::MAX };
    with_codes!(codes, c => {
        for j in 0..n {
            let r = rows.row(j);
            if !valid(r) {
                if nulls_first || boundary.is_none() {
                    kept.push(j as u32);
                }
                continue;
            }
            let code = c[r].to_usize();
            if better(code) {
                kept.push(j as u32);
            } else if Some(code) == boundary && tied.len() < tied_cap {
                tied.push(j as u32);
            }
        }
    });
    let need = k.saturating_sub(kept.len());
    kept.extend(best_k(tied.into_iter(), need, cmp));
    kept.sort_unstable();
    trace.add(
        format!("top-n: rows counted per {what} code of {name} first, then collected from the codes needed"),
        format!("n = {k} of {n} rows, {card} codes"),
    );
    Some(kept)
}

/// Keeps the candidates at positions `window` of the order by their keys,
/// then load order, and sorts them.
///
/// The order is total (load order breaks ties), so two linear-time
/// selections cut the window out first and only its rows are sorted: a
/// large OFFSET (`LIMIT 10 OFFSET 100000`) sorts 10 rows, not 100,010.
pub fn window_candidates(c: &mut Vec<Candidate>, order: &[SortKey], window: Range<usize>) {
    let cmp = |a: &Candidate, b: &Candidate| candidate_order(a, b, order);
    let end = window.end.min(c.len());
    let start = window.start.min(end);
    if end == 0 {
        c.clear();
        return;
    }
    if end < c.len() {
        c.select_nth_unstable_by(end - 1, cmp);
        c.truncate(end);
    }
    if start == end {
        c.clear();
        return;
    }
    if start > 0 {
        c.select_nth_unstable_by(start, cmp);
        c.drain(..start);
    }
    c.sort_unstable_by(cmp);
}

/// The total order of candidates: by their keys under `order`, then load
/// order.
fn candidate_order(a: &Candidate, b: &Candidate, order: &[SortKey]) -> Ordering {
    for (i, k) in order.iter().enumerate() {
        let o = super::vector::order_values(&a.keys[i], &b.keys[i], k.desc, k.nulls_first);
        if o != Ordering::Equal {
            return o;
        }
    }
    (a.part, a.row).cmp(&(b.part, b.row))
}

/// Cuts `c` down to its best `k` candidates (unsorted) when it holds more,
/// and returns the first key of the `k`-th best when it holds `k` or more:
/// no row whose first key is worse can enter the top `k` (a linear-time
/// selection, so a top-n that reads partitions wave after wave keeps at
/// most `k` plus a wave's candidates, and never sorts them until the end).
pub fn keep_best(c: &mut Vec<Candidate>, order: &[SortKey], k: usize) -> Option<Value> {
    if k == 0 || c.len() < k {
        return None;
    }
    if c.len() > k {
        c.select_nth_unstable_by(k - 1, |a, b| candidate_order(a, b, order));
        c.truncate(k);
        // The k-th best by the whole order has the worst first key of
        // the k (the order compares first keys first).
        return Some(c[k - 1].keys[0].clone());
    }
    let key = order[0];
    c.iter()
        .map(|x| &x.keys[0])
        .max_by(|a, b| order_values_of(a, b, key))
        .cloned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::DataType;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// The default most codes a histogram may have.
    const MAX_CODES: usize = 1 << 10;

    #[test]
    fn a_null_constant_is_null_at_every_row_whatever_its_validity() {
        let mut bare = Column::all_null(DataType::Int, 5);
        bare.validity = None;
        let columns = [Column::all_null(DataType::Int, 3), bare];
        let hists: Vec<KeyHistogram> = columns
            .iter()
            .map(|c| key_histogram(c, Rows::all(c.len), MAX_CODES).unwrap())
            .collect();
        assert_eq!(hists.iter().map(KeyHistogram::rows).sum::<usize>(), 8);
        let key = SortKey {
            column: 0,
            desc: false,
            nulls_first: false,
        };
        let refs: Vec<&KeyHistogram> = hists.iter().collect();
        let slices = window_slices(&refs, key, 2..6);
        let got: Vec<Vec<(usize, u32)>> = (0..2)
            .map(|p| collect_slices(&columns[p], Rows::all(columns[p].len), &slices[p]))
            .collect();
        assert_eq!(got, vec![vec![(0, 2)], vec![(1, 0), (2, 1), (3, 2)]]);
    }

    #[test]
    fn window_slices_pick_what_a_stable_sort_then_the_window_picks() {
        // Partitions of a few-valued column (offsets, a dictionary, a
        // constant, NULLs), random selections, every direction and NULL
        // placement, windows at random: the rows collected from the
        // histograms are those of a stable sort by (value, partition, row).
        let mut rng = ChaCha8Rng::seed_from_u64(41);
        for round in 0..200 {
            let parts = rng.gen_range(1..5);
            let strings = round % 3 == 1;
            let mut columns = Vec::new();
            let mut sels: Vec<Option<Vec<u32>>> = Vec::new();
            for _ in 0..parts {
                let n = rng.gen_range(64..300);
                let constant = rng.gen_bool(0.15);
                let vals: Vec<i64> = (0..n)
                    .map(|_| {
                        if constant {
                            7
                        } else {
                            rng.gen_range(-3..4) * 5
                        }
                    })
                    .collect();
                let valid: Vec<bool> = (0..n).map(|_| !rng.gen_bool(0.1)).collect();
                let validity = Some(Bitmap::from_bools(&valid));
                let col = if strings {
                    let texts: Vec<String> = vals.iter().map(|v| format!("s{v}")).collect();
                    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
                    Column::encode_strings(&refs, validity)
                } else {
                    Column::encode_ints(DataType::Int, &vals, validity)
                };
                assert!(histogram_fits(&col, MAX_CODES), "{:?}", col.data);
                columns.push(col);
                sels.push(
                    rng.gen_bool(0.5)
                        .then(|| (0..n as u32).filter(|_| rng.gen_bool(0.6)).collect()),
                );
            }
            let key = SortKey {
                column: 0,
                desc: rng.gen_bool(0.5),
                nulls_first: rng.gen_bool(0.5),
            };
            let rows_of = |p: usize| match &sels[p] {
                Some(s) => Rows::some(s),
                None => Rows::all(columns[p].len),
            };
            let hists: Vec<KeyHistogram> = (0..parts)
                .map(|p| key_histogram(&columns[p], rows_of(p), MAX_CODES).unwrap())
                .collect();
            let total: usize = hists.iter().map(KeyHistogram::rows).sum();
            let start = rng.gen_range(0..=total + 2);
            let window = start.min(total)..(start + rng.gen_range(0..40)).min(total);
            let refs: Vec<&KeyHistogram> = hists.iter().collect();
            let slices = window_slices(&refs, key, window.clone());
            let mut got: Vec<(usize, usize, u32)> = Vec::new();
            for p in 0..parts {
                got.extend(
                    collect_slices(&columns[p], rows_of(p), &slices[p])
                        .into_iter()
                        .map(|(at, r)| (at, p, r)),
                );
            }
            got.sort_unstable();
            let mut all: Vec<(Value, usize, u32)> = Vec::new();
            for (p, col) in columns.iter().enumerate() {
                let rows = rows_of(p);
                for j in 0..rows.len {
                    let r = rows.row(j);
                    all.push((col.value(r), p, r as u32));
                }
            }
            all.sort_by(|a, b| {
                crate::exec::vector::order_values(&a.0, &b.0, key.desc, key.nulls_first)
                    .then((a.1, a.2).cmp(&(b.1, b.2)))
            });
            let want: Vec<(usize, usize, u32)> = all[window.clone()]
                .iter()
                .enumerate()
                .map(|(i, x)| (i, x.1, x.2))
                .collect();
            assert_eq!(got, want, "round {round}, {key:?}, window {window:?}");
        }
    }

    #[test]
    fn window_candidates_equals_a_full_sort_then_the_window() {
        // Heavy ties on the key (4 values and NULL) over 3 partitions; the
        // window is every (start, end) over 0..=len.
        let order = [SortKey {
            column: 0,
            desc: true,
            nulls_first: false,
        }];
        let all: Vec<Candidate> = (0..23u32)
            .map(|i| Candidate {
                part: (i % 3) as usize,
                row: i,
                keys: vec![if i % 7 == 0 {
                    Value::Null
                } else {
                    Value::Int(((i * 5) % 4) as i64)
                }],
            })
            .collect();
        let key = |c: &Candidate| (c.keys[0].clone(), c.part, c.row);
        let mut sorted = all.clone();
        sorted.sort_by(|a, b| {
            crate::exec::vector::order_values(&a.keys[0], &b.keys[0], true, false)
                .then((a.part, a.row).cmp(&(b.part, b.row)))
        });
        for start in 0..=all.len() {
            for end in start..=all.len() + 2 {
                let mut c = all.clone();
                window_candidates(&mut c, &order, start..end);
                let want: Vec<_> = sorted[start.min(all.len())..end.min(all.len())]
                    .iter()
                    .map(key)
                    .collect();
                assert_eq!(
                    c.iter().map(key).collect::<Vec<_>>(),
                    want,
                    "{start}..{end}"
                );
            }
        }
    }

    #[test]
    fn best_k_keeps_exactly_k_by_total_order() {
        let keys: Vec<i64> = vec![5, 1, 9, 9, 3, 9, 7, 2, 9, 0, 9, 9];
        let cmp = |a: u32, b: u32| keys[b as usize].cmp(&keys[a as usize]).then(a.cmp(&b));
        let got = best_k(0..keys.len() as u32, 3, cmp);
        // The three 9s earliest in load order.
        assert_eq!(got, vec![2, 3, 5]);
        assert!(best_k(0..5, 0, cmp).is_empty());
        assert_eq!(best_k(0..3, 10, cmp).len(), 3);
    }
}
