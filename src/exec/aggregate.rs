//! Grouping and aggregation within a partition, and the merge of partial
//! aggregates across partitions.
//!
//! # Design
//! Every group key becomes a dense code per selected row with a known
//! cardinality: offset-encoded integers use their packed codes, dictionary
//! strings their dictionary codes, a key constant over the partition has one
//! value, and evaluated keys are re-coded (integers as offsets from their
//! minimum, other types through a small local dictionary). NULL gets a code
//! of its own. The combined key is the mixed-radix number of the codes:
//! when the product of cardinalities is at most [`FIXED_ARRAY_MAX_SLOTS`] it
//! indexes fixed-size accumulator arrays directly (no hashing); otherwise a
//! hashbrown map turns the packed u64 key into a dense group id. Group ids
//! are dense, starting at 0; accumulators are vectors indexed by group id.
//! A partition emits partial states per group, decoded to [`Value`] keys, and
//! partials merge by key.

use std::sync::Arc;

use std::hash::BuildHasher;

use hashbrown::{HashMap, HashSet, HashTable};
use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::kernel;
use crate::plan::{AggCall, AggFunc, Expr};
use crate::store::{Bitmap, Code, Codes, Column, ColumnData, Dictionary, Partition};
use crate::types::{DataType, Value, cmp_f64};
use crate::with_codes;

use super::distinct::DistinctSet;
use super::hll::HyperLogLog;
use super::trace::Trace;
use super::vector::{Data, Datum, Rows, eval_vec};

/// Largest key space counted in fixed-size arrays (slots) instead of a hash
/// map.
pub const FIXED_ARRAY_MAX_SLOTS: u64 = 1 << 18;

/// The partial state of one aggregate for one group.
#[derive(Debug, Clone)]
pub enum AggState {
    /// Rows or non-NULL values counted.
    Count(u64),
    /// Integer sum (exact, i128) and number of values.
    SumInt(i128, u64),
    /// Float sum and number of values.
    SumFloat(f64, u64),
    /// Smallest value so far (NULL: none yet).
    Min(Value),
    /// Largest value so far (NULL: none yet).
    Max(Value),
    /// Distinct non-NULL values seen.
    Distinct(HashSet<Value>),
    /// Distinct non-NULL integers, timestamps or floats, by bits (floats
    /// canonicalized, so `-0.0` and `0.0` are one value).
    DistinctBits(DistinctSet),
    /// HyperLogLog sketch of the values seen.
    Approx(Box<HyperLogLog>),
}

impl AggState {
    /// The state of an aggregate over no rows.
    pub fn empty(call: &AggCall) -> AggState {
        let arg_type = call.arg.as_ref().map_or(DataType::Int, Expr::dtype);
        match call.func {
            AggFunc::CountStar | AggFunc::Count => AggState::Count(0),
            AggFunc::Sum | AggFunc::Avg if arg_type == DataType::Int => AggState::SumInt(0, 0),
            AggFunc::Sum | AggFunc::Avg => AggState::SumFloat(0.0, 0),
            AggFunc::Min => AggState::Min(Value::Null),
            AggFunc::Max => AggState::Max(Value::Null),
            AggFunc::CountDistinct if arg_type == DataType::Str => {
                AggState::Distinct(HashSet::new())
            }
            AggFunc::CountDistinct => AggState::DistinctBits(DistinctSet::default()),
            AggFunc::ApproxCountDistinct => AggState::Approx(Box::default()),
        }
    }

    /// Folds another partial state of the same aggregate into this one.
    pub fn merge(&mut self, other: AggState) {
        match (self, other) {
            (AggState::Count(a), AggState::Count(b)) => *a += b,
            (AggState::SumInt(a, n), AggState::SumInt(b, m)) => {
                *a += b;
                *n += m;
            }
            (AggState::SumFloat(a, n), AggState::SumFloat(b, m)) => {
                *a += b;
                *n += m;
            }
            (AggState::Min(a), AggState::Min(b)) => {
                if !b.is_null() && (a.is_null() || b.total_cmp(a).is_lt()) {
                    *a = b;
                }
            }
            (AggState::Max(a), AggState::Max(b)) => {
                if !b.is_null() && (a.is_null() || b.total_cmp(a).is_gt()) {
                    *a = b;
                }
            }
            (AggState::Distinct(a), AggState::Distinct(b)) => {
                if a.len() < b.len() {
                    let small = std::mem::replace(a, b);
                    a.extend(small);
                } else {
                    a.extend(b);
                }
            }
            (AggState::DistinctBits(a), AggState::DistinctBits(b)) => a.merge(b),
            (AggState::Approx(a), AggState::Approx(b)) => a.merge(&b),
            _ => debug_assert!(false, "merging states of different aggregates"),
        }
    }

    /// The final value for `func`.
    ///
    /// # Errors
    /// An integer sum that does not fit i64.
    pub fn finish(self, func: AggFunc) -> Result<Value> {
        Ok(match (func, self) {
            (_, AggState::Count(n)) => Value::Int(n as i64),
            (_, AggState::SumInt(_, 0) | AggState::SumFloat(_, 0)) => Value::Null,
            (AggFunc::Avg, AggState::SumInt(s, n)) => Value::Float(s as f64 / n as f64),
            (AggFunc::Avg, AggState::SumFloat(s, n)) => Value::Float(s / n as f64),
            (_, AggState::SumInt(s, _)) => Value::Int(
                i64::try_from(s).map_err(|_| Error::Execution("integer overflow in sum".into()))?,
            ),
            (_, AggState::SumFloat(s, _)) => Value::Float(s),
            (_, AggState::Min(v) | AggState::Max(v)) => v,
            (_, AggState::Distinct(s)) => Value::Int(s.len() as i64),
            (_, AggState::DistinctBits(s)) => Value::Int(s.len() as i64),
            (_, AggState::Approx(h)) => Value::Int(h.estimate().round() as i64),
        })
    }
}

/// Partial aggregates of one partition (or of several, merged), stored
/// flat: group `g` has keys `keys[g * nkeys..][..nkeys]` and states
/// `states[g * naggs..][..naggs]`, so emitting and merging a group
/// allocates nothing.
#[derive(Debug, Default)]
pub struct Partial {
    /// Group keys per group.
    pub nkeys: usize,
    /// Aggregates per group.
    pub naggs: usize,
    /// Number of groups.
    pub groups: usize,
    /// Decoded group keys, `nkeys` per group.
    pub keys: Vec<Value>,
    /// Aggregate states, `naggs` per group.
    pub states: Vec<AggState>,
}

impl Partial {
    /// An empty partial for `nkeys` keys and `naggs` aggregates.
    pub fn new(nkeys: usize, naggs: usize) -> Partial {
        Partial {
            nkeys,
            naggs,
            ..Partial::default()
        }
    }

    /// Appends a group.
    pub fn push(
        &mut self,
        keys: impl IntoIterator<Item = Value>,
        states: impl IntoIterator<Item = AggState>,
    ) {
        self.keys.extend(keys);
        self.states.extend(states);
        self.groups += 1;
    }

    /// Merges partials in the given order (so float sums are reproducible).
    ///
    /// # Design
    /// Every key is hashed once; groups are then moved to shards by hash and
    /// the shards merge in parallel, each through a hashbrown `HashTable` of
    /// group indices (no key is cloned). Within a shard, groups meet in
    /// partition order, so the result does not depend on thread timing. The
    /// order of groups in the result is unspecified.
    pub fn merge_all(parts: Vec<Partial>) -> Partial {
        if parts.len() <= 1 {
            return parts.into_iter().next().unwrap_or_default();
        }
        let (nkeys, naggs) = (parts[0].nkeys, parts[0].naggs);
        let total: usize = parts.iter().map(|p| p.groups).sum();
        let shards = if total > 4096 {
            rayon::current_num_threads() * 4
        } else {
            1
        };
        let hasher = hashbrown::DefaultHashBuilder::default();
        let mut buckets: Vec<(Vec<u64>, Partial)> = (0..shards)
            .map(|_| (Vec::new(), Partial::new(nkeys, naggs)))
            .collect();
        for mut p in parts {
            let mut states = p.states.into_iter();
            for g in 0..p.groups {
                let key = &mut p.keys[g * nkeys..(g + 1) * nkeys];
                let h = hasher.hash_one(&*key);
                let (hashes, bucket) = &mut buckets[(h % shards as u64) as usize];
                hashes.push(h);
                bucket.push(
                    key.iter_mut().map(|v| std::mem::replace(v, Value::Null)),
                    states.by_ref().take(naggs),
                );
            }
        }
        let merged: Vec<Partial> = buckets
            .into_par_iter()
            .map(|(hashes, mut bucket)| {
                let mut table: HashTable<usize> = HashTable::with_capacity(bucket.groups / 2);
                let mut out = Partial::new(nkeys, naggs);
                let mut out_hashes: Vec<u64> = Vec::new();
                let mut states = bucket.states.into_iter();
                for (i, h) in hashes.into_iter().enumerate() {
                    let key = &mut bucket.keys[i * nkeys..(i + 1) * nkeys];
                    let found = table.find(h, |&g| out.keys[g * nkeys..(g + 1) * nkeys] == *key);
                    match found {
                        Some(&g) => {
                            for (a, b) in out.states[g * naggs..(g + 1) * naggs]
                                .iter_mut()
                                .zip(states.by_ref().take(naggs))
                            {
                                a.merge(b);
                            }
                        }
                        None => {
                            table.insert_unique(h, out.groups, |&i| out_hashes[i]);
                            out_hashes.push(h);
                            out.push(
                                key.iter_mut().map(|v| std::mem::replace(v, Value::Null)),
                                states.by_ref().take(naggs),
                            );
                        }
                    }
                }
                out
            })
            .collect();
        let mut out = Partial::new(nkeys, naggs);
        for m in merged {
            out.keys.extend(m.keys);
            out.states.extend(m.states);
            out.groups += m.groups;
        }
        out
    }
}

/// How to turn a key code back into a value.
enum Decoder {
    Const(Value),
    /// `base + (code - null_slot) * scale`; code 0 is NULL when `nullable`.
    Offset {
        base: i64,
        scale: u64,
        dtype: DataType,
        nullable: bool,
    },
    /// Dictionary code; code 0 is NULL when `nullable`.
    Dict {
        dict: Arc<Dictionary>,
        nullable: bool,
    },
    /// Integral floats: `base + (code - null_slot)`; code 0 is NULL when
    /// `nullable`.
    FloatOffset {
        base: f64,
        nullable: bool,
    },
    /// A local dictionary of values (NULL included as a value).
    Values(Vec<Value>),
    /// Dense codes of the keys present, mapped back to the inner codes.
    Remapped {
        inner: Box<Decoder>,
        codes: Vec<u64>,
    },
}

impl Decoder {
    fn decode(&self, code: u64) -> Value {
        match self {
            Decoder::Const(v) => v.clone(),
            Decoder::Offset {
                base,
                scale,
                dtype,
                nullable,
            } => {
                if *nullable && code == 0 {
                    return Value::Null;
                }
                let v = base.wrapping_add((code - *nullable as u64).wrapping_mul(*scale) as i64);
                if *dtype == DataType::Timestamp {
                    Value::Timestamp(v)
                } else {
                    Value::Int(v)
                }
            }
            Decoder::Dict { dict, nullable } => {
                if *nullable && code == 0 {
                    return Value::Null;
                }
                Value::Str(dict.get((code - *nullable as u64) as usize).clone())
            }
            Decoder::FloatOffset { base, nullable } => {
                if *nullable && code == 0 {
                    return Value::Null;
                }
                Value::Float(base + (code - *nullable as u64) as f64)
            }
            Decoder::Values(v) => v[code as usize].clone(),
            Decoder::Remapped { inner, codes } => inner.decode(codes[code as usize]),
        }
    }
}

/// Where a key's per-row codes come from.
enum KeySource<'a> {
    /// The key is constant over the rows (code 0).
    Const,
    /// A column's packed codes, read in place; with a validity bitmap, NULL
    /// is code 0 and every other code is shifted up by one.
    Packed {
        codes: &'a Codes,
        validity: Option<&'a Bitmap>,
    },
    /// Codes computed for the selected rows (evaluated keys).
    Computed(Vec<u64>),
}

struct KeyCodes<'a> {
    source: KeySource<'a>,
    card: u64,
    decoder: Decoder,
    how: String,
}

impl KeyCodes<'_> {
    fn varies(&self) -> bool {
        !matches!(self.source, KeySource::Const)
    }

    /// `acc[j] = acc[j] * card + code(j)` for every selected row `j`: one
    /// pass per key builds the mixed-radix combined key.
    fn combine_into(&self, acc: &mut [u64], rows: Rows<'_>) {
        let card = self.card;
        match &self.source {
            KeySource::Const => {}
            KeySource::Computed(codes) => {
                for (a, c) in acc.iter_mut().zip(codes) {
                    *a = *a * card + c;
                }
            }
            KeySource::Packed {
                codes,
                validity: None,
            } => with_codes!(codes, c => match rows.sel {
                None => {
                    for (a, x) in acc.iter_mut().zip(c.iter()) {
                        *a = *a * card + x.to_u64();
                    }
                }
                Some(sel) => {
                    for (a, &r) in acc.iter_mut().zip(sel) {
                        *a = *a * card + c[r as usize].to_u64();
                    }
                }
            }),
            KeySource::Packed {
                codes,
                validity: Some(b),
            } => with_codes!(codes, c => {
                for (j, a) in acc.iter_mut().enumerate() {
                    let r = rows.row(j);
                    let code = if b.get(r) { c[r].to_u64() + 1 } else { 0 };
                    *a = *a * card + code;
                }
            }),
        }
    }

    /// The code of selected row `j`.
    fn code_at(&self, rows: Rows<'_>, j: usize) -> u64 {
        match &self.source {
            KeySource::Const => 0,
            KeySource::Computed(codes) => codes[j],
            KeySource::Packed { codes, validity } => {
                let r = rows.row(j);
                match validity {
                    None => codes.get(r),
                    Some(b) if b.get(r) => codes.get(r) + 1,
                    Some(_) => 0,
                }
            }
        }
    }
}

fn key_codes<'a>(expr: &Expr, part: &'a Partition, rows: Rows<'_>) -> Result<KeyCodes<'a>> {
    if let Expr::Literal { value, .. } = expr {
        return Ok(KeyCodes {
            source: KeySource::Const,
            card: 1,
            decoder: Decoder::Const(value.clone()),
            how: format!("{expr}: constant in partition"),
        });
    }
    if let Expr::Column { index, name, dtype } = expr {
        let col = &part.columns[*index];
        let nullable = col.validity.is_some();
        let shift = nullable as u64;
        let packed = |codes| KeySource::Packed {
            codes,
            validity: col.validity.as_ref(),
        };
        match &col.data {
            ColumnData::Offset { base, scale, codes }
                if offset_range(col).is_some_and(|r| r / scale < u64::MAX - 1) =>
            {
                let range = offset_range(col).unwrap_or(0) / scale;
                return Ok(KeyCodes {
                    source: packed(codes),
                    card: range.saturating_add(1 + shift),
                    decoder: Decoder::Offset {
                        base: *base,
                        scale: *scale,
                        dtype: *dtype,
                        nullable,
                    },
                    how: format!("{name}: {} offset codes", codes.width_name()),
                });
            }
            ColumnData::Dict { dict, codes } => {
                return Ok(KeyCodes {
                    source: packed(codes),
                    card: dict.len() as u64 + shift,
                    decoder: Decoder::Dict {
                        dict: dict.clone(),
                        nullable,
                    },
                    how: format!("{name}: {} dictionary codes", codes.width_name()),
                });
            }
            _ => {}
        }
    }
    // Evaluate, then re-code.
    let d = eval_vec(expr, part, rows)?;
    let a = match d {
        Datum::Scalar(v) => {
            return Ok(KeyCodes {
                source: KeySource::Const,
                card: 1,
                decoder: Decoder::Const(v),
                how: format!("{expr}: constant in partition"),
            });
        }
        Datum::Array(a) => a,
    };
    let n = a.len();
    if let Data::Int(v) = &a.data {
        let mut lo = i64::MAX;
        let mut hi = i64::MIN;
        for (i, &x) in v.iter().enumerate() {
            if a.is_valid(i) {
                lo = lo.min(x);
                hi = hi.max(x);
            }
        }
        if lo <= hi && (hi as i128 - lo as i128) < (1i128 << 32) {
            let nullable = a.valid.is_some();
            let shift = nullable as u64;
            let codes = (0..n)
                .map(|i| {
                    if a.is_valid(i) {
                        (v[i] as u64).wrapping_sub(lo as u64) + shift
                    } else {
                        0
                    }
                })
                .collect();
            return Ok(KeyCodes {
                source: KeySource::Computed(codes),
                card: (hi as i128 - lo as i128) as u64 + 1 + shift,
                decoder: Decoder::Offset {
                    base: lo,
                    scale: 1,
                    dtype: a.dtype,
                    nullable,
                },
                how: format!(
                    "{expr}: evaluated, integer range {} codes",
                    (hi as i128 - lo as i128) + 1
                ),
            });
        }
    }
    // Integral floats (`floor(x)`, whole amounts): offsets like integers.
    if let Data::Float(v) = &a.data {
        let mut lo = f64::INFINITY;
        let mut hi = f64::NEG_INFINITY;
        let mut integral = true;
        for (i, &x) in v.iter().enumerate() {
            if a.is_valid(i) {
                integral &= x.fract() == 0.0 && x.abs() <= 9.0e15;
                lo = lo.min(x);
                hi = hi.max(x);
            }
        }
        if integral && lo <= hi && hi - lo < 4.0e9 {
            let nullable = a.valid.is_some();
            let shift = nullable as u64;
            let codes = (0..n)
                .map(|i| {
                    if a.is_valid(i) {
                        (v[i] - lo) as u64 + shift
                    } else {
                        0
                    }
                })
                .collect();
            return Ok(KeyCodes {
                source: KeySource::Computed(codes),
                card: (hi - lo) as u64 + 1 + shift,
                decoder: Decoder::FloatOffset { base: lo, nullable },
                how: format!(
                    "{expr}: evaluated, integral floats, range {} codes",
                    (hi - lo) as u64 + 1
                ),
            });
        }
    }
    // Local dictionary.
    let mut index: HashMap<Value, u64> = HashMap::new();
    let mut values = Vec::new();
    let mut codes = Vec::with_capacity(n);
    match &a.data {
        Data::Float(v) => {
            let mut by_bits: HashMap<u64, u64> = HashMap::new();
            let mut null_code = None;
            for (i, x) in v.iter().enumerate() {
                let code = if a.is_valid(i) {
                    *by_bits
                        .entry(crate::types::canonical_f64_bits(*x))
                        .or_insert_with(|| {
                            values.push(Value::Float(*x));
                            values.len() as u64 - 1
                        })
                } else {
                    *null_code.get_or_insert_with(|| {
                        values.push(Value::Null);
                        values.len() as u64 - 1
                    })
                };
                codes.push(code);
            }
        }
        _ => {
            for i in 0..n {
                let v = a.value(i);
                let code = *index.entry(v.clone()).or_insert_with(|| {
                    values.push(v);
                    values.len() as u64 - 1
                });
                codes.push(code);
            }
        }
    }
    Ok(KeyCodes {
        source: KeySource::Computed(codes),
        card: values.len().max(1) as u64,
        how: format!(
            "{expr}: evaluated, local dictionary of {} values",
            values.len()
        ),
        decoder: Decoder::Values(values),
    })
}

/// `max - min` of an integer or timestamp column's zone map, as u64.
fn offset_range(col: &crate::store::Column) -> Option<u64> {
    match (&col.zone.min, &col.zone.max) {
        (Value::Int(a) | Value::Timestamp(a), Value::Int(b) | Value::Timestamp(b)) => {
            Some((*b as u64).wrapping_sub(*a as u64))
        }
        _ => None,
    }
}

/// Group ids per selected row plus what is needed to decode each group.
struct Grouping {
    gids: Vec<u32>,
    groups: usize,
    /// Per group, its combined key (`Slots`: the group id is the key).
    keys: GroupKeys,
}

enum GroupKeys {
    /// Group `g` has combined key `g` (fixed array; slots may be empty).
    Slots,
    /// Group `g` has combined key `keys[g]`.
    Packed(Vec<u64>),
    /// Group `g` has per-key codes `keys[g]` (key space beyond u64).
    Composite(Vec<Vec<u64>>),
}

impl GroupKeys {
    /// Per-key codes of group `g`.
    fn codes(&self, g: usize, keys: &[KeyCodes<'_>]) -> Vec<u64> {
        let mut slot = match self {
            GroupKeys::Slots => g as u64,
            GroupKeys::Packed(k) => k[g],
            GroupKeys::Composite(k) => return k[g].clone(),
        };
        let mut out = vec![0u64; keys.len()];
        for (i, k) in keys.iter().enumerate().rev() {
            if k.varies() {
                out[i] = slot % k.card;
                slot /= k.card;
            }
        }
        out
    }
}

/// Keys whose codes span more than this are not re-densified.
const DENSIFY_MAX_CARD: u64 = 1 << 20;

/// Replaces a key's codes by dense ranks of the codes present in the rows
/// when fewer than half of its code range occurs: packed codes span the
/// partition's min..max, but a column such as a PUMA code uses a few dozen
/// values of a range of hundreds, and dense ranks can turn a hashed key
/// space into a fixed array.
fn densify(k: &mut KeyCodes<'_>, rows: Rows<'_>) -> bool {
    if !k.varies() || k.card > DENSIFY_MAX_CARD || matches!(k.decoder, Decoder::Remapped { .. }) {
        return false;
    }
    let mut codes = vec![0u64; rows.len];
    k.combine_into(&mut codes, rows);
    let mut rank = vec![u32::MAX; k.card as usize];
    for &c in &codes {
        rank[c as usize] = 0;
    }
    let mut present = Vec::new();
    for (c, r) in rank.iter_mut().enumerate() {
        if *r == 0 {
            *r = present.len() as u32;
            present.push(c as u64);
        }
    }
    if present.len() as u64 * 2 > k.card {
        return false;
    }
    for c in codes.iter_mut() {
        *c = rank[*c as usize] as u64;
    }
    k.source = KeySource::Computed(codes);
    k.card = present.len().max(1) as u64;
    let inner = std::mem::replace(&mut k.decoder, Decoder::Values(Vec::new()));
    k.decoder = Decoder::Remapped {
        inner: Box::new(inner),
        codes: present,
    };
    true
}

fn group_rows(keys: &mut [KeyCodes<'_>], rows: Rows<'_>, trace: &mut Trace) -> Grouping {
    let n = rows.len;
    let space = |keys: &[KeyCodes<'_>]| {
        keys.iter()
            .filter(|k| k.varies())
            .try_fold(1u64, |acc, k| acc.checked_mul(k.card.max(1)))
    };
    if space(keys).is_none_or(|t| t > FIXED_ARRAY_MAX_SLOTS) {
        let mut changed = 0;
        for k in keys.iter_mut() {
            changed += densify(k, rows) as usize;
        }
        if changed > 0 {
            trace.add(
                "group keys re-coded to dense ranks of the codes present",
                format!("{changed} key(s)"),
            );
        }
    }
    let keys: &[KeyCodes<'_>] = keys;
    let varying: Vec<&KeyCodes> = keys.iter().filter(|k| k.varies()).collect();
    if varying.is_empty() {
        trace.add(
            "group by: single group (every key constant in partition)",
            String::new(),
        );
        // Every row is in group 0: the ids are made only if an aggregate
        // other than count(*) needs them.
        return Grouping {
            gids: Vec::new(),
            groups: 1,
            keys: GroupKeys::Slots,
        };
    }
    let total = varying
        .iter()
        .try_fold(1u64, |acc, k| acc.checked_mul(k.card.max(1)));
    let combined = || -> Vec<u64> {
        let mut slots = vec![0u64; n];
        for k in &varying {
            k.combine_into(&mut slots, rows);
        }
        slots
    };
    match total {
        Some(total) if total <= FIXED_ARRAY_MAX_SLOTS => {
            trace.add(
                "group by: fixed-size array indexed by combined key (no hashing)",
                format!("{total} slots"),
            );
            let gids = if varying.len() == 1
                && matches!(varying[0].source, KeySource::Packed { validity: None, .. })
            {
                // One packed key: its codes are the slots.
                let KeySource::Packed { codes, .. } = &varying[0].source else {
                    unreachable!()
                };
                with_codes!(codes, c => kernel::gather(c, rows.sel, |x| x.to_u64() as u32))
            } else {
                combined().into_iter().map(|s| s as u32).collect()
            };
            Grouping {
                gids,
                groups: total as usize,
                keys: GroupKeys::Slots,
            }
        }
        Some(total) => {
            let slots = combined();
            let mut map: HashMap<u64, u32> = HashMap::new();
            let mut packed = Vec::new();
            let gids = slots
                .into_iter()
                .map(|s| {
                    *map.entry(s).or_insert_with(|| {
                        packed.push(s);
                        packed.len() as u32 - 1
                    })
                })
                .collect();
            trace.add(
                "group by: hash map on packed u64 key",
                format!("key space {total}, {} groups", packed.len()),
            );
            Grouping {
                gids,
                groups: packed.len(),
                keys: GroupKeys::Packed(packed),
            }
        }
        None => {
            let mut map: HashMap<Vec<u64>, u32> = HashMap::new();
            let mut composite = Vec::new();
            let gids = (0..n)
                .map(|j| {
                    let key: Vec<u64> = keys.iter().map(|k| k.code_at(rows, j)).collect();
                    *map.entry(key.clone()).or_insert_with(|| {
                        composite.push(key);
                        composite.len() as u32 - 1
                    })
                })
                .collect();
            trace.add(
                "group by: hash map on composite key (key space exceeds u64)",
                format!("{} groups", composite.len()),
            );
            Grouping {
                gids,
                groups: composite.len(),
                keys: GroupKeys::Composite(composite),
            }
        }
    }
}

/// Aggregates the selected rows of one partition.
///
/// # Errors
/// Evaluation errors of keys or arguments.
pub fn aggregate_partition(
    keys: &[Expr],
    aggs: &[AggCall],
    part: &Partition,
    rows: Rows<'_>,
    trace: &mut Trace,
) -> Result<Partial> {
    let mut key_codes: Vec<KeyCodes> = keys
        .iter()
        .map(|k| key_codes(k, part, rows))
        .collect::<Result<_>>()?;
    for k in &key_codes {
        trace.add(
            format!("group key {}", k.how.split(':').next().unwrap_or("")),
            k.how.clone(),
        );
    }
    let grouping = group_rows(&mut key_codes, rows, trace);
    let g = grouping.groups;
    let single = g == 1 && grouping.gids.is_empty();
    let single_gids: Vec<u32>;
    let gids: &[u32] = if single && aggs.iter().any(|a| a.func != AggFunc::CountStar) {
        single_gids = vec![0; rows.len];
        &single_gids
    } else {
        &grouping.gids
    };
    let mut counts = vec![0u64; g];
    if single {
        counts[0] = rows.len as u64;
    } else {
        kernel::count_by_key(gids, &mut counts);
    }

    let mut states: Vec<Vec<AggState>> = Vec::with_capacity(aggs.len());
    for call in aggs {
        states.push(accumulate(call, part, rows, gids, g, &counts, trace)?);
    }
    let mut out = Partial::new(keys.len(), aggs.len());
    let emit_empty = keys.is_empty();
    for gid in 0..g {
        let sparse = matches!(grouping.keys, GroupKeys::Slots) && g > 1;
        if counts[gid] == 0 && (sparse || !emit_empty) {
            continue;
        }
        let codes = grouping.keys.codes(gid, &key_codes);
        out.push(
            key_codes
                .iter()
                .zip(&codes)
                .map(|(k, &c)| k.decoder.decode(c)),
            states
                .iter_mut()
                .map(|s| std::mem::replace(&mut s[gid], AggState::Count(0))),
        );
    }
    Ok(out)
}

fn accumulate(
    call: &AggCall,
    part: &Partition,
    rows: Rows<'_>,
    gids: &[u32],
    groups: usize,
    counts: &[u64],
    trace: &mut Trace,
) -> Result<Vec<AggState>> {
    if call.func == AggFunc::CountStar {
        trace.add("aggregate count(*): per-group row counts", String::new());
        return Ok(counts.iter().map(|&c| AggState::Count(c)).collect());
    }
    let arg = call
        .arg
        .as_ref()
        .ok_or_else(|| Error::Internal("aggregate without argument".into()))?;
    if let Expr::Column { index, .. } = arg
        && let Some(states) =
            accumulate_column(call.func, &part.columns[*index], rows, gids, groups)
    {
        trace.add(
            format!(
                "aggregate {}: reads the column's codec in place",
                call.func.name()
            ),
            call.to_string(),
        );
        return Ok(states);
    }
    let datum = eval_vec(arg, part, rows)?;
    let states: Vec<AggState> = (0..groups).map(|_| AggState::empty(call)).collect();
    let n = gids.len();
    let a = match datum {
        Datum::Scalar(v) => {
            // Constant argument: every row of a group sees the same value.
            return Ok(states_from_scalar(call, &v, counts, states));
        }
        Datum::Array(a) => a,
    };
    trace.add(
        format!("aggregate {}: typed accumulator arrays", call.func.name()),
        call.to_string(),
    );
    let valid = |j: usize| a.is_valid(j);
    match (call.func, &a.data) {
        (AggFunc::Count, _) => {
            let mut c = vec![0u64; groups];
            for j in 0..n {
                c[gids[j] as usize] += valid(j) as u64;
            }
            return Ok(c.into_iter().map(AggState::Count).collect());
        }
        (AggFunc::Sum | AggFunc::Avg, Data::Int(v)) => {
            let mut s = vec![0i128; groups];
            let mut c = vec![0u64; groups];
            for j in 0..n {
                if valid(j) {
                    let g = gids[j] as usize;
                    s[g] += v[j] as i128;
                    c[g] += 1;
                }
            }
            return Ok(s
                .into_iter()
                .zip(c)
                .map(|(s, c)| AggState::SumInt(s, c))
                .collect());
        }
        (AggFunc::Sum | AggFunc::Avg, Data::Float(v)) => {
            let mut s = vec![0f64; groups];
            let mut c = vec![0u64; groups];
            for j in 0..n {
                if valid(j) {
                    let g = gids[j] as usize;
                    s[g] += v[j];
                    c[g] += 1;
                }
            }
            return Ok(s
                .into_iter()
                .zip(c)
                .map(|(s, c)| AggState::SumFloat(s, c))
                .collect());
        }
        (AggFunc::Min | AggFunc::Max, Data::Int(v)) => {
            let is_min = call.func == AggFunc::Min;
            let mut best: Vec<Option<i64>> = vec![None; groups];
            for j in 0..n {
                if valid(j) {
                    let b = &mut best[gids[j] as usize];
                    let x = v[j];
                    *b = Some(match *b {
                        None => x,
                        Some(y) if is_min => y.min(x),
                        Some(y) => y.max(x),
                    });
                }
            }
            let wrap = |x: i64| {
                if a.dtype == DataType::Timestamp {
                    Value::Timestamp(x)
                } else {
                    Value::Int(x)
                }
            };
            return Ok(best
                .into_iter()
                .map(|b| {
                    let v = b.map_or(Value::Null, wrap);
                    if is_min {
                        AggState::Min(v)
                    } else {
                        AggState::Max(v)
                    }
                })
                .collect());
        }
        (AggFunc::Min | AggFunc::Max, Data::Float(v)) => {
            let is_min = call.func == AggFunc::Min;
            let mut best: Vec<Option<f64>> = vec![None; groups];
            for j in 0..n {
                if valid(j) {
                    let b = &mut best[gids[j] as usize];
                    let x = v[j];
                    *b = Some(match *b {
                        None => x,
                        Some(y) => {
                            let o = cmp_f64(x, y);
                            if (is_min && o.is_lt()) || (!is_min && o.is_gt()) {
                                x
                            } else {
                                y
                            }
                        }
                    });
                }
            }
            return Ok(best
                .into_iter()
                .map(|b| {
                    let v = b.map_or(Value::Null, Value::Float);
                    if is_min {
                        AggState::Min(v)
                    } else {
                        AggState::Max(v)
                    }
                })
                .collect());
        }
        (AggFunc::CountDistinct, Data::Int(v)) => {
            return Ok(distinct_bits(v, gids, groups, &valid, |x| *x as u64));
        }
        (AggFunc::CountDistinct, Data::Float(v)) => {
            return Ok(distinct_bits(v, gids, groups, &valid, |x| {
                crate::types::canonical_f64_bits(*x)
            }));
        }
        (AggFunc::ApproxCountDistinct, Data::Int(v)) => {
            return Ok(sketch(v, gids, groups, &valid, |x| {
                super::hll::hash_i64(*x)
            }));
        }
        (AggFunc::ApproxCountDistinct, Data::Float(v)) => {
            return Ok(sketch(v, gids, groups, &valid, |x| {
                super::hll::hash_f64(*x)
            }));
        }
        (AggFunc::ApproxCountDistinct, Data::Str(v)) => {
            return Ok(sketch(v, gids, groups, &valid, |x| super::hll::hash_str(x)));
        }
        _ => {}
    }
    // Generic: one value at a time.
    let mut states = states;
    for j in 0..n {
        if valid(j) {
            update(&mut states[gids[j] as usize], &a.value(j));
        }
    }
    Ok(states)
}

/// Exact distinct counts per group of values keyed by their bits.
fn distinct_bits<T>(
    values: &[T],
    gids: &[u32],
    groups: usize,
    valid: &impl Fn(usize) -> bool,
    bits: impl Fn(&T) -> u64,
) -> Vec<AggState> {
    let mut sets: Vec<DistinctSet> = vec![DistinctSet::default(); groups];
    if groups == 1 {
        sets[0].reserve(values.len());
    }
    for (j, x) in values.iter().enumerate() {
        if valid(j) {
            sets[gids[j] as usize].insert(bits(x));
        }
    }
    sets.into_iter().map(AggState::DistinctBits).collect()
}

/// HyperLogLog sketches per group of values hashed by `hash`.
fn sketch<T>(
    values: &[T],
    gids: &[u32],
    groups: usize,
    valid: &impl Fn(usize) -> bool,
    hash: impl Fn(&T) -> u64,
) -> Vec<AggState> {
    let mut sketches: Vec<HyperLogLog> = vec![HyperLogLog::default(); groups];
    if groups == 1 && values.len() >= 1 << 12 {
        // One group of many rows: update dense registers in a tight loop.
        let regs = sketches[0].dense_mut();
        for (j, x) in values.iter().enumerate() {
            if valid(j) {
                super::hll::update_dense(regs, hash(x));
            }
        }
        return sketches
            .into_iter()
            .map(|h| AggState::Approx(Box::new(h)))
            .collect();
    }
    for (j, x) in values.iter().enumerate() {
        if valid(j) {
            sketches[gids[j] as usize].insert_hash(hash(x));
        }
    }
    sketches
        .into_iter()
        .map(|h| AggState::Approx(Box::new(h)))
        .collect()
}

/// Aggregates a plain column straight from its codec, without decoding it
/// into an array first: sums of offset codes become
/// `count * base + scale * sum(codes)` (the codec is sum-preserving), f64
/// sums read the values in place. `None` when no such path applies.
fn accumulate_column(
    func: AggFunc,
    col: &Column,
    rows: Rows<'_>,
    gids: &[u32],
    groups: usize,
) -> Option<Vec<AggState>> {
    let valid = |r: usize| col.validity.as_ref().is_none_or(|b| b.get(r));
    match (func, &col.data) {
        // Distinct strings of a dictionary column: mark the codes seen per
        // group, and turn only the marked codes into strings.
        (AggFunc::CountDistinct, ColumnData::Dict { dict, codes })
            if groups.saturating_mul(dict.len()) <= 1 << 24 =>
        {
            let n = dict.len();
            let mut seen = vec![false; groups * n];
            with_codes!(codes, c => {
                for (j, &g) in gids.iter().enumerate() {
                    let r = rows.row(j);
                    if valid(r) {
                        seen[g as usize * n + c[r].to_usize()] = true;
                    }
                }
            });
            Some(
                seen.chunks(n.max(1))
                    .take(groups)
                    .map(|marks| {
                        let set: HashSet<Value> = marks
                            .iter()
                            .enumerate()
                            .filter(|(_, m)| **m)
                            .map(|(code, _)| Value::Str(dict.get(code).clone()))
                            .collect();
                        AggState::Distinct(set)
                    })
                    .collect(),
            )
        }
        (AggFunc::Count, _) => {
            let mut c = vec![0u64; groups];
            for (j, &g) in gids.iter().enumerate() {
                c[g as usize] += valid(rows.row(j)) as u64;
            }
            Some(c.into_iter().map(AggState::Count).collect())
        }
        (AggFunc::Sum | AggFunc::Avg, ColumnData::Float(v)) => {
            let mut s = vec![0f64; groups];
            let mut c = vec![0u64; groups];
            match (rows.sel, &col.validity) {
                (None, None) => {
                    for (&g, &x) in gids.iter().zip(v) {
                        s[g as usize] += x;
                        c[g as usize] += 1;
                    }
                }
                _ => {
                    for (j, &g) in gids.iter().enumerate() {
                        let r = rows.row(j);
                        if valid(r) {
                            s[g as usize] += v[r];
                            c[g as usize] += 1;
                        }
                    }
                }
            }
            Some(
                s.into_iter()
                    .zip(c)
                    .map(|(s, c)| AggState::SumFloat(s, c))
                    .collect(),
            )
        }
        (AggFunc::Sum | AggFunc::Avg, ColumnData::Offset { base, scale, codes })
            if col.dtype == DataType::Int =>
        {
            let mut s = vec![0u128; groups];
            let mut c = vec![0u64; groups];
            with_codes!(codes, k => match (rows.sel, &col.validity) {
                (None, None) => {
                    for (&g, &x) in gids.iter().zip(k.iter()) {
                        s[g as usize] += x.to_u64() as u128;
                        c[g as usize] += 1;
                    }
                }
                _ => {
                    for (j, &g) in gids.iter().enumerate() {
                        let r = rows.row(j);
                        if valid(r) {
                            s[g as usize] += k[r].to_u64() as u128;
                            c[g as usize] += 1;
                        }
                    }
                }
            });
            Some(
                s.into_iter()
                    .zip(c)
                    .map(|(s, c)| {
                        AggState::SumInt(*base as i128 * c as i128 + *scale as i128 * s as i128, c)
                    })
                    .collect(),
            )
        }
        _ => None,
    }
}

fn states_from_scalar(
    call: &AggCall,
    v: &Value,
    counts: &[u64],
    mut states: Vec<AggState>,
) -> Vec<AggState> {
    for (gid, s) in states.iter_mut().enumerate() {
        let n = if v.is_null() { 0 } else { counts[gid] };
        *s = AggState::empty(call);
        if n == 0 {
            continue;
        }
        match s {
            AggState::Count(c) => *c = n,
            AggState::SumInt(sum, c) => {
                if let Value::Int(x) = v {
                    *sum = *x as i128 * n as i128;
                }
                *c = n;
            }
            AggState::SumFloat(sum, c) => {
                if let Some(x) = v.as_f64() {
                    // Repeated addition, to round exactly as a row-by-row sum would.
                    for _ in 0..n {
                        *sum += x;
                    }
                }
                *c = n;
            }
            s => update(s, v),
        }
    }
    states
}

/// Adds one non-NULL value to a state.
fn update(s: &mut AggState, v: &Value) {
    match s {
        AggState::Count(c) => *c += 1,
        AggState::SumInt(sum, c) => {
            if let Value::Int(x) = v {
                *sum += *x as i128;
                *c += 1;
            }
        }
        AggState::SumFloat(sum, c) => {
            if let Some(x) = v.as_f64() {
                *sum += x;
                *c += 1;
            }
        }
        AggState::Min(m) => {
            if m.is_null() || v.total_cmp(m).is_lt() {
                *m = v.clone();
            }
        }
        AggState::Max(m) => {
            if m.is_null() || v.total_cmp(m).is_gt() {
                *m = v.clone();
            }
        }
        AggState::DistinctBits(set) => {
            let bits = match v {
                Value::Int(i) | Value::Timestamp(i) => *i as u64,
                Value::Float(f) => crate::types::canonical_f64_bits(*f),
                Value::Bool(b) => *b as u64,
                _ => return,
            };
            set.insert(bits);
        }
        AggState::Distinct(set) => {
            if !set.contains(v) {
                set.insert(v.clone());
            }
        }
        AggState::Approx(h) => h.insert(v),
    }
}
