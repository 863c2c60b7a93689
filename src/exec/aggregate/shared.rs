//! Grouping by keys whose values are slots of ranges known for the whole
//! table, into accumulator arrays that every partition a worker runs
//! shares.
//!
//! # Why
//! Per-partition grouping ([`super::aggregate_partition`]) emits a partial
//! of every group a partition saw, and the merge groups the partials
//! again. With a key of 100,000 values over 65,536-row partitions each
//! partition sees about 48,000 of them: db-benchmark groupby q3 and q5 at
//! 10M rows made 7.3M partial groups, and taking them out of each
//! partition's array and merging them was half of the query.
//!
//! # How
//! When the key's every value maps to a slot of one range for the whole
//! table — the codes of a table-wide dictionary (`store::table_dictionaries`),
//! or the integers between the smallest and largest of the partitions'
//! zone maps — each worker takes a run of consecutive partitions and adds
//! their rows into one fixed-size array of states indexed by slot (the
//! morsel-driven idea of thread-local aggregation state, Leis et al.,
//! SIGMOD 2014). A worker emits one partial of the slots it saw, and the
//! merge combines one partial per worker by slot ([`DenseKey`]). Several
//! such keys combine their slots as a mixed-radix number, when the
//! product of their ranges is small enough for one array (db-benchmark
//! q6, `GROUP BY id4, id5` over 10,000 slots: 1.5M partial groups from
//! 153 partitions became 40,000 from four runs; the query 260 → 133 ms).
//! The choice is made from the codecs and zone maps before a row is read,
//! so EXPLAIN shows it.

use std::sync::Arc;

use crate::error::{Error, Result};
use crate::exec::ExecOptions;
use crate::exec::trace::Trace;
use crate::exec::vector::{Array, Datum, Rows, eval};
use crate::plan::{AggCall, AggFunc, Aggregate, Expr};
use crate::store::{Code, ColumnData, Partition, Table, with_codes};
use crate::types::{DataType, Value};

use super::accumulator::{Accumulator, Gids, new_accumulator};
use super::merge::DenseKey;
use super::{AggKernel, Partial};

/// The group keys of an aggregate, each a column whose values are slots
/// of a table-wide range; a row's slot is the mixed-radix number of its
/// keys' slots (first key most significant).
pub struct SharedKey<'a> {
    /// The key columns, in key order.
    parts: Vec<KeyPart<'a>>,
    /// Slots of the combined range: the product of the parts'.
    slots: usize,
}

/// One key column of a [`SharedKey`].
struct KeyPart<'a> {
    /// The key expression (a column of the table).
    expr: Expr,
    /// The key's column.
    column: usize,
    /// Value ↔ slot.
    key: DenseKey<'a>,
    /// What this key's slot is multiplied by in the combined slot.
    stride: usize,
}

/// Aggregates whose states a worker may keep over many partitions: each
/// folds values as they come, whatever partition they come from. (Exact
/// distinct counts read some codecs' codes in place, which are local to a
/// partition.)
fn keeps_states(func: AggFunc) -> bool {
    !matches!(func, AggFunc::CountDistinct | AggFunc::ApproxCountDistinct)
}

/// Worker runs the partitions are dealt into: two per thread, so that a
/// run whose partitions are cheaper (filtered out, skipped) leaves a
/// thread work to take.
pub fn runs_for(units: usize) -> usize {
    (rayon::current_num_threads().max(1) * 2).min(units).max(1)
}

impl<'a> SharedKey<'a> {
    /// The shared-slot key of `agg` over `table`, when every key is a
    /// column whose every partition is coded against one table-wide
    /// dictionary or holds integers (dates, timestamps) without NULLs;
    /// when every aggregate [keeps its states](keeps_states) across
    /// partitions; and when the combined range has at least
    /// [`ExecOptions::shared_slots_min`] slots (fewer make small partials,
    /// which per-partition grouping merges cheaply), at most
    /// [`ExecOptions::fixed_array_max_slots`], and at most twice the rows
    /// a worker run holds on average (the array is cleared and read once
    /// per run).
    pub fn choose(
        agg: &Aggregate,
        table: &'a Table,
        opts: &ExecOptions,
        units: usize,
    ) -> Option<SharedKey<'a>> {
        if agg.keys.is_empty() || units < 2 || !agg.aggs.iter().all(|a| keeps_states(a.func)) {
            return None;
        }
        let mut parts = Vec::with_capacity(agg.keys.len());
        for expr in &agg.keys {
            let Expr::Column { index, .. } = expr else {
                return None;
            };
            parts.push(KeyPart {
                expr: expr.clone(),
                column: *index,
                key: dense_key(&table.partitions, *index)?,
                stride: 0,
            });
        }
        let mut slots: u64 = 1;
        for part in parts.iter_mut().rev() {
            part.stride = slots as usize;
            slots = slots
                .checked_mul(part.key.slots() as u64)
                .filter(|&s| s <= opts.fixed_array_max_slots)?;
        }
        let rows: u64 = table.partitions.iter().map(|p| p.rows as u64).sum();
        let per_run = rows / runs_for(units) as u64;
        (slots >= opts.shared_slots_min && slots <= 2 * per_run).then(|| SharedKey {
            parts,
            slots: slots as usize,
        })
    }

    /// Slots of the range (states per aggregate per worker run).
    pub fn slots(&self) -> usize {
        self.slots
    }

    /// The EXPLAIN lines of the keys and of the grouping, as
    /// `(shape, detail)`.
    fn describe(&self) -> Vec<(String, String)> {
        let mut lines: Vec<(String, String)> = self
            .parts
            .iter()
            .map(|part| {
                let what = match part.key {
                    DenseKey::Dict(d) => format!(
                        "{}: codes of one table-wide dictionary of {} entries",
                        part.expr,
                        d.len()
                    ),
                    DenseKey::Int { base, slots, .. } => format!(
                        "{}: offset in the table's range {base}..={}",
                        part.expr,
                        base.saturating_add(slots as i64 - 1)
                    ),
                };
                (format!("group key {}", part.expr), what)
            })
            .collect();
        lines.push((
            "group by: one fixed-size array per worker run over the key's table-wide slots, \
             shared by its partitions (no hashing, no partial per partition)"
                .to_string(),
            match self.parts.len() {
                1 => format!("{} slots", self.slots()),
                n => format!("{} slots: {n} keys' slots combined", self.slots()),
            },
        ));
        lines
    }

    /// The combined slot of each of `rows` of `part`.
    ///
    /// # Errors
    /// A column outside the range [`SharedKey::choose`] saw (a bug).
    fn slots_of(&self, part: &'a Partition, rows: Rows<'_>) -> Result<Vec<u32>> {
        let mut parts = self.parts.iter();
        let Some(first) = parts.next() else {
            return Ok(vec![0; rows.len]);
        };
        let mut ids = first.slots_of(part, rows)?;
        if first.stride != 1 {
            let stride = first.stride as u32;
            ids.iter_mut().for_each(|s| *s *= stride);
        }
        for key in parts {
            let slots = key.slots_of(part, rows)?;
            let stride = key.stride as u32;
            for (id, s) in ids.iter_mut().zip(slots) {
                *id += s * stride;
            }
        }
        Ok(ids)
    }

    /// The key columns of combined slots `idx`.
    fn columns(&self, idx: &[u32]) -> Vec<Array<'a>> {
        self.parts
            .iter()
            .map(|part| {
                let (stride, n) = (part.stride as u32, part.key.slots() as u32);
                part.key
                    .column(idx.iter().map(|&s| (s / stride) % n).collect())
            })
            .collect()
    }
}

impl<'a> KeyPart<'a> {
    /// This key's slot of each of `rows` of `part`.
    ///
    /// # Errors
    /// A column outside the range [`SharedKey::choose`] saw (a bug).
    fn slots_of(&self, part: &'a Partition, rows: Rows<'_>) -> Result<Vec<u32>> {
        column_slots(self.key, &self.expr, self.column, part, rows)
    }
}

/// The slot of `key` (the range of column `column`, `expr` a reference to
/// it) of each of `rows` of `part`: codes read in place, other integer
/// codecs evaluated.
///
/// # Errors
/// A column outside the range [`dense_key`] saw (a bug).
pub(super) fn column_slots(
    key: DenseKey<'_>,
    expr: &Expr,
    column: usize,
    part: &Partition,
    rows: Rows<'_>,
) -> Result<Vec<u32>> {
    let col = &part.columns[column];
    let pick = |f: &dyn Fn(usize) -> u32| -> Vec<u32> {
        match rows.sel {
            None => (0..rows.len).map(f).collect(),
            Some(sel) => sel.iter().map(|&r| f(r as usize)).collect(),
        }
    };
    match (key, &col.data) {
        (DenseKey::Dict(d), ColumnData::Dict { codes, .. }) => {
            let null = d.len() as u32;
            Ok(match &col.validity {
                None => with_codes!(codes, c => match rows.sel {
                    None => c.iter().map(|x| x.to_u64() as u32).collect(),
                    Some(sel) => sel.iter().map(|&r| c[r as usize].to_u64() as u32).collect(),
                }),
                Some(v) => with_codes!(codes, c => pick(&|r| {
                    if v.get(r) { c[r].to_u64() as u32 } else { null }
                })),
            })
        }
        (DenseKey::Dict(d), ColumnData::Const(v)) => {
            let slot = match v {
                Value::Str(s) => d.code_of(s).map(|c| c as u32),
                _ => None,
            };
            let null = d.len() as u32;
            Ok(match (slot, &col.validity) {
                (None, _) => vec![null; rows.len],
                (Some(c), None) => vec![c; rows.len],
                (Some(c), Some(v)) => pick(&|r| if v.get(r) { c } else { null }),
            })
        }
        (DenseKey::Int { base: lo, .. }, ColumnData::Offset { base, scale, codes }) => {
            let shift = base.wrapping_sub(lo) as u64;
            let scale = *scale;
            Ok(with_codes!(codes, c => match rows.sel {
                None => c.iter().map(|x| shift.wrapping_add(x.to_u64().wrapping_mul(scale)) as u32).collect(),
                Some(sel) => sel
                    .iter()
                    .map(|&r| shift.wrapping_add(c[r as usize].to_u64().wrapping_mul(scale)) as u32)
                    .collect(),
            }))
        }
        (DenseKey::Int { base: lo, .. }, _) => match eval(expr, part, rows)? {
            Datum::Scalar(Value::Int(x) | Value::Date(x) | Value::Timestamp(x)) => {
                Ok(vec![x.wrapping_sub(lo) as u32; rows.len])
            }
            Datum::Array(a) => match &a.data {
                crate::exec::vector::Data::Int(v) if a.validity.is_none() => {
                    Ok(v.iter().map(|&x| x.wrapping_sub(lo) as u32).collect())
                }
                _ => Err(Error::Internal(format!(
                    "shared grouping key {} is not integers without NULLs",
                    expr
                ))),
            },
            Datum::Scalar(v) => Err(Error::Internal(format!(
                "shared grouping key {} is {v}",
                expr
            ))),
        },
        _ => Err(Error::Internal(format!(
            "shared grouping key {} changed codec",
            expr
        ))),
    }
}

/// The key's range when every partition of `column` is coded against one
/// table-wide dictionary (or is one of its strings throughout), or holds integers, dates or timestamps without
/// NULLs (the range from the zone maps, at most `u32::MAX` slots).
pub(super) fn dense_key(parts: &[Partition], column: usize) -> Option<DenseKey<'_>> {
    let first = &parts.first()?.columns[column];
    match first.dtype {
        DataType::Str => {
            let dict = parts.iter().find_map(|p| match &p.columns[column].data {
                ColumnData::Dict { dict, .. } => Some(dict),
                _ => None,
            })?;
            // A partition whose rows are all one string (or NULL) may
            // hold it as a constant: its slot is the string's code.
            parts
                .iter()
                .all(|p| match &p.columns[column].data {
                    ColumnData::Dict { dict: d, .. } => Arc::ptr_eq(d, dict),
                    ColumnData::Const(Value::Str(s)) => dict.code_of(s).is_some(),
                    ColumnData::Const(Value::Null) => true,
                    _ => false,
                })
                .then_some(DenseKey::Dict(dict))
        }
        DataType::Int | DataType::Date | DataType::Timestamp => {
            let (mut lo, mut hi) = (i64::MAX, i64::MIN);
            for p in parts {
                let c = &p.columns[column];
                if c.validity.is_some() || c.zone.null_count > 0 {
                    return None;
                }
                match (&c.zone.min, &c.zone.max) {
                    (
                        Value::Int(a) | Value::Date(a) | Value::Timestamp(a),
                        Value::Int(b) | Value::Date(b) | Value::Timestamp(b),
                    ) => {
                        lo = lo.min(*a);
                        hi = hi.max(*b);
                    }
                    _ if p.rows == 0 => {}
                    _ => return None,
                }
            }
            let span = i128::from(hi) - i128::from(lo) + 1;
            (span >= 1 && span <= i128::from(u32::MAX)).then_some(DenseKey::Int {
                base: lo,
                slots: span as usize,
                dtype: first.dtype,
            })
        }
        _ => None,
    }
}

/// The states of one worker run: one accumulator per aggregate over every
/// slot of a [`SharedKey`], and which slots saw rows.
pub struct SharedGroups<'k, 'a> {
    key: &'k SharedKey<'a>,
    accs: Vec<Box<dyn Accumulator>>,
    seen: Vec<bool>,
    /// Rows 0..n as a selection, made once when arguments are batched.
    all_rows: Vec<u32>,
}

impl<'k, 'a> SharedGroups<'k, 'a> {
    /// Empty states for `aggs` over the slots of `key`.
    ///
    /// # Errors
    /// An aggregate without an accumulator (a bug).
    pub fn new(key: &'k SharedKey<'a>, aggs: &[AggCall]) -> Result<SharedGroups<'k, 'a>> {
        Ok(SharedGroups {
            key,
            accs: aggs.iter().map(new_accumulator).collect::<Result<_>>()?,
            seen: vec![false; key.slots()],
            all_rows: Vec::new(),
        })
    }

    /// Roughly the bytes the states of every slot take (16 per aggregate
    /// per slot, plus the slot's mark).
    pub fn heap_bytes(&self) -> usize {
        self.seen.len() * (1 + 16 * self.accs.len())
    }

    /// Adds `rows` of `part` with `aggs` (specialized to the partition),
    /// recording the pipeline in `trace`.
    ///
    /// # Errors
    /// Evaluation errors of arguments.
    pub fn add(
        &mut self,
        aggs: &[AggCall],
        part: &'a Partition,
        rows: Rows<'_>,
        trace: &mut Trace,
    ) -> Result<()> {
        for (shape, detail) in self.key.describe() {
            trace.add(shape, detail);
        }
        let slots = self.key.slots();
        let ids = self.key.slots_of(part, rows)?;
        for &s in &ids {
            self.seen[s as usize] = true;
        }
        let gids = Gids::Ids(&ids);
        for (acc, call) in self.accs.iter_mut().zip(aggs) {
            let kernel = AggKernel::of(call, true, rows.sel.is_some(), part);
            let constant = kernel.fold(
                acc.as_mut(),
                call,
                part,
                (rows, gids, slots),
                &mut self.all_rows,
            )?;
            kernel.record(call, constant, trace);
        }
        Ok(())
    }

    /// The partial of the slots that saw rows, in slot order.
    pub fn finish(mut self) -> Partial<'a> {
        let idx: Vec<u32> = self
            .seen
            .iter()
            .enumerate()
            .filter(|(_, s)| **s)
            .map(|(g, _)| g as u32)
            .collect();
        let accs = self.accs.iter_mut().map(|a| a.take(&idx)).collect();
        Partial {
            groups: idx.len(),
            keys: self.key.columns(&idx),
            accs,
            repeats: false,
        }
    }
}

/// Records in `trace` the pipeline a partition of a shared-slot grouping
/// compiles (EXPLAIN, reading no row).
pub fn describe_partition(
    key: &SharedKey<'_>,
    aggs: &[AggCall],
    part: &Partition,
    filtered: bool,
    trace: &mut Trace,
) {
    for (shape, detail) in key.describe() {
        trace.add(shape, detail);
    }
    for call in aggs {
        let kernel = AggKernel::of(call, true, filtered, part);
        let constant = matches!(call.arg, Some(Expr::Literal { .. }));
        kernel.record(call, constant, trace);
    }
}
