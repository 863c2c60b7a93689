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
//! Buffers are sized by the rows of the partition, never by the `n` the
//! user typed.

use std::cmp::Ordering;
use std::ops::Range;

use crate::error::Result;
use crate::plan::{Expr, SortKey};
use crate::store::with_codes;
use crate::store::{Bitmap, Code, ColumnData, Partition};
use crate::types::{Value, cmp_f64};

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
/// # Errors
/// Evaluation errors of the sort keys at any selected row.
pub fn partition_top(
    keys: &[(Expr, SortKey)],
    part: &Partition,
    part_index: usize,
    rows: Rows<'_>,
    k: usize,
    trace: &mut Trace,
) -> Result<Vec<Candidate>> {
    let n = rows.len;
    if k == 0 {
        return Ok(Vec::new());
    }
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

/// Codes of the first sort key, when it is a plain column with an
/// order-preserving codec and at most this many codes.
const COUNT_MAX_CODES: usize = 1 << 16;

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
    let (codes, card, what) = match &col.data {
        ColumnData::Dict { dict, codes } => (codes, dict.len(), "dictionary"),
        ColumnData::Offset { codes, scale, .. } => {
            let range = match (&col.zone.min, &col.zone.max) {
                (Value::Int(a) | Value::Timestamp(a), Value::Int(b) | Value::Timestamp(b)) => {
                    (*b as i128 - *a as i128) as u128
                }
                _ => return None,
            };
            let card = usize::try_from(range / *scale as u128)
                .ok()?
                .checked_add(1)?;
            (codes, card, "offset")
        }
        _ => return None,
    };
    if card > COUNT_MAX_CODES || card * 4 > n || k * 4 > n {
        return None;
    }
    let validity = col.validity.as_ref();
    let valid = |r: usize| validity.is_none_or(|b| b.get(r));
    // Counts per code; NULLs apart.
    let mut counts = vec![0u32; card];
    let mut nulls = 0usize;
    with_codes!(codes, c => {
        for j in 0..n {
            let r = rows.row(j);
            if valid(r) {
                counts[c[r].to_usize()] += 1;
            } else {
                nulls += 1;
            }
        }
    });
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
        let c = counts[code] as usize;
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
    let cmp = |a: &Candidate, b: &Candidate| {
        for (i, k) in order.iter().enumerate() {
            let o = super::vector::order_values(&a.keys[i], &b.keys[i], k.desc, k.nulls_first);
            if o != Ordering::Equal {
                return o;
            }
        }
        (a.part, a.row).cmp(&(b.part, b.row))
    };
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

#[cfg(test)]
mod tests {
    use super::*;

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
