//! Grouping and aggregation within a partition; the merge of partial
//! aggregates across partitions is in [`merge`].
//!
//! # Design
//! Group *values* and *accumulators* are separate, as in DataFusion:
//! - Every group key becomes a dense code per selected row with a known
//!   cardinality ([`keys`]). The combined key is the mixed-radix number of
//!   the codes. When the key space has at most as many slots as a fixed
//!   array should have for the rows it will see (twice the rows, at least
//!   `fixed_array_min_slots`, at most `fixed_array_max_slots` of
//!   [`ExecOptions`]) the
//!   combined key indexes accumulator arrays directly, with no hashing;
//!   otherwise a hash table on the packed `u64` key (or on the codes, when
//!   the space exceeds `u64`) turns it into a dense group id. A sparse key
//!   space is first re-ranked to the codes present.
//! - Every aggregate is one [`accumulator::Accumulator`] updated a batch at
//!   a time with the group id of each row.
//! - A partition emits a [`Partial`]: its groups' keys as typed columns and
//!   the accumulators, never [`crate::types::Value`]s per group.

pub mod accumulator;
pub mod distinct;
pub mod hll;
pub mod keys;
pub mod merge;
pub mod ordered;
pub mod packed;
pub mod shared;
pub mod statistics;

use hashbrown::HashTable;

use crate::error::Result;
use crate::kernel::hash::{combine, mix64};
use crate::plan::{AggCall, AggFunc, Expr};
use crate::store::with_codes;
use crate::store::{Code, Partition};

use super::ExecOptions;
use super::trace::Trace;
use super::vector::{Array, Data, Datum, Rows, eval};
use crate::types::DataType;
use accumulator::{Accumulator, Gids, Input, new_accumulator, reads_in_place};
use keys::{KeyCodes, KeySource, LOCAL_DICTIONARY_START, densify, grow_local, key_codes};
use packed::PackedKeys;

/// The partial aggregate of one partition (or of several, merged): group
/// `g` has key values `keys[k].value(g)` and states in `accs[a]`.
///
/// # Invariants
/// Every key column has `groups` rows; every accumulator covers groups
/// `0..groups`; the keys of distinct groups differ unless `repeats`.
pub struct Partial<'a> {
    /// Number of groups.
    pub groups: usize,
    /// One typed column per group key.
    pub keys: Vec<Array<'a>>,
    /// One accumulator per aggregate.
    pub accs: Vec<Box<dyn Accumulator>>,
    /// Groups may share keys: a partition whose key was nearly unique kept
    /// a group per row (see `keys::local_dictionary`), leaving the grouping
    /// to the merge, which then never passes such a partial through as it
    /// is.
    pub repeats: bool,
}

impl Partial<'_> {
    /// Heap bytes held by the states (keys borrowed from the table are not
    /// counted; computed ones roughly).
    pub fn heap_bytes(&self) -> usize {
        self.accs.iter().map(|a| a.heap_bytes()).sum::<usize>() + self.groups * self.keys.len() * 16
    }
}

/// Largest key space numbered through a slot map (see `group_rows`) for
/// `rows` rows: 16 slots a row, so that clearing the map (64 bytes a row)
/// costs less than hashing the rows, and at most
/// [`ExecOptions::fixed_array_max_slots`] (4 MiB of map by default).
fn slot_map_limit(rows: usize, opts: &ExecOptions) -> u64 {
    (16 * rows as u64).min(opts.fixed_array_max_slots)
}

/// Group ids per selected row plus what is needed to decode each group.
struct Grouping {
    /// `None`: every row is in group 0.
    gids: Option<Vec<u32>>,
    groups: usize,
    keys: GroupKeys,
    /// Groups may share keys (a group per row, left to the merge).
    repeats: bool,
}

enum GroupKeys {
    /// Group `g` has combined key `g` (fixed array; slots may be empty).
    Slots,
    /// Group `g` has combined key `keys[g]`.
    Packed(Vec<u64>),
    /// Group `g` has per-key codes `keys[g * n..][..n]` (space beyond u64).
    Composite(Vec<u64>),
}

/// Per-key codes of every group in `groups` (combined keys split by the
/// mixed radix of the varying keys).
fn group_codes(kind: &GroupKeys, groups: &[u64], keys: &[KeyCodes<'_>]) -> Vec<Vec<u64>> {
    let nk = keys.len();
    let varying: Vec<usize> = (0..nk).filter(|&k| keys[k].varies()).collect();
    if let ([k], GroupKeys::Slots | GroupKeys::Packed(_)) = (&varying[..], kind) {
        // One varying key: its code is the combined key itself, no
        // division (perf of shapes group_s100k: the mixed-radix split of
        // 48k groups per partition was a tenth of the query).
        let mut out: Vec<Vec<u64>> = vec![vec![0; groups.len()]; nk];
        out[*k] = match kind {
            GroupKeys::Packed(p) => groups.iter().map(|&g| p[g as usize]).collect(),
            _ => groups.to_vec(),
        };
        return out;
    }
    let mut out: Vec<Vec<u64>> = vec![Vec::with_capacity(groups.len()); nk];
    for &g in groups {
        match kind {
            GroupKeys::Composite(codes) => {
                for (k, o) in out.iter_mut().enumerate() {
                    o.push(codes[g as usize * nk + k]);
                }
            }
            _ => {
                let mut slot = match kind {
                    GroupKeys::Packed(p) => p[g as usize],
                    _ => g,
                };
                for (k, key) in keys.iter().enumerate().rev() {
                    if key.varies() {
                        out[k].push(slot % key.card);
                        slot /= key.card;
                    } else {
                        out[k].push(0);
                    }
                }
            }
        }
    }
    out
}

/// The grouping of rows numbered `gids` whose group `g` has packed key
/// `packed[g]`, traced as `how` over a key space of `total`.
fn packed_grouping(
    trace: &mut Trace,
    how: &str,
    total: u64,
    gids: Vec<u32>,
    packed: Vec<u64>,
) -> Grouping {
    trace.add(how, format!("key space {total}, {} groups", packed.len()));
    Grouping {
        gids: Some(gids),
        groups: packed.len(),
        keys: GroupKeys::Packed(packed),
        repeats: false,
    }
}

/// A group per row of `n` rows, keyed by `keys` (one key tuple per row),
/// marked `repeats`: left for the merge to group.
fn per_row_grouping(n: usize, keys: GroupKeys) -> Grouping {
    Grouping {
        gids: Some((0..n as u32).collect()),
        groups: n,
        keys,
        repeats: true,
    }
}

/// Groups rows by their packed key `slots` (one per selected row, below
/// `total`) through a hash table, or leaves a group per row to the merge
/// when the first rows are nearly all new keys.
fn hash_grouping(slots: Vec<u64>, total: u64, opts: &ExecOptions, trace: &mut Trace) -> Grouping {
    let n = slots.len();
    // Entries hold the key beside its group id: a probe reads no
    // other array.
    let mut table: HashTable<(u64, u32)> =
        HashTable::with_capacity(n.min(opts.grouping_probe_rows));
    let mut packed: Vec<u64> = Vec::new();
    let mut gids: Vec<u32> = Vec::with_capacity(n);
    for (j, &s) in slots.iter().enumerate() {
        if j == opts.grouping_probe_rows {
            if keys::skips_grouping(j, packed.len(), n, false) {
                // Nearly every row a new key: a group per row,
                // grouped once, at the merge (perf: UserID over 10M
                // rows kept 58k of every 65k rows as groups; the
                // local table's probes and rehashes were 29% of
                // ClickBench q16).
                trace.add(
                    "group by: nearly every row a new key: a group per row, grouped at the merge",
                    format!("key space {total}, {j} rows probed"),
                );
                return per_row_grouping(n, GroupKeys::Packed(slots));
            }
            // Room for the keys the first rows predict, at once
            // (rehashing at each doubling was a tenth of q16).
            let projected = crate::store::projected_distinct(j, packed.len(), n);
            let want = (projected * 1.1) as usize;
            table.reserve(want.saturating_sub(table.len()), |e| mix64(e.0));
            packed.reserve(want.saturating_sub(packed.len()));
        }
        let h = mix64(s);
        gids.push(match table.find(h, |e| e.0 == s) {
            Some(&(_, g)) => g,
            None => {
                let g = packed.len() as u32;
                packed.push(s);
                table.insert_unique(h, (s, g), |e| mix64(e.0));
                g
            }
        });
    }
    packed_grouping(
        trace,
        "group by: hash table on packed u64 key",
        total,
        gids,
        packed,
    )
}

fn group_rows(
    keys: &mut [KeyCodes<'_>],
    rows: Rows<'_>,
    opts: &ExecOptions,
    trace: &mut Trace,
) -> Grouping {
    let n = rows.len;
    let space = |keys: &[KeyCodes<'_>]| {
        keys.iter()
            .filter(|k| k.varies())
            .try_fold(1u64, |acc, k| acc.checked_mul(k.card.max(1)))
    };
    let fixed_limit = (2 * n as u64).clamp(opts.fixed_array_min_slots, opts.fixed_array_max_slots);
    if space(keys).is_none_or(|t| t > fixed_limit) {
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
        return Grouping {
            gids: None,
            groups: 1,
            keys: GroupKeys::Slots,
            repeats: false,
        };
    }
    let combined = || -> Vec<u64> {
        let mut slots = vec![0u64; n];
        for k in &varying {
            k.combine_into(&mut slots, rows);
        }
        slots
    };
    match space(keys) {
        Some(total) if total <= fixed_limit => {
            trace.add(
                "group by: fixed-size array indexed by combined key (no hashing)",
                format!("{total} slots for {n} rows"),
            );
            let gids = match &varying[..] {
                [
                    KeyCodes {
                        source:
                            KeySource::Packed {
                                codes,
                                validity: None,
                            },
                        ..
                    },
                ] => with_codes!(codes, c => match rows.sel {
                    None => c.iter().map(|x| x.to_u64() as u32).collect(),
                    Some(sel) => sel.iter().map(|&r| c[r as usize].to_u64() as u32).collect(),
                }),
                [
                    KeyCodes {
                        source: KeySource::Computed(codes),
                        ..
                    },
                ] => codes.iter().map(|&c| c as u32).collect(),
                _ => combined().into_iter().map(|s| s as u32).collect(),
            };
            Grouping {
                gids: Some(gids),
                groups: total as usize,
                keys: GroupKeys::Slots,
                repeats: false,
            }
        }
        Some(total) if total <= slot_map_limit(n, opts) => {
            // A key space too large for accumulators per slot but small
            // against the rows: a slot → group id array (4 bytes a slot)
            // numbers the groups with one load per row and no hashing
            // (perf: `GROUP BY a, b` over 250k pairs of which 3,000 occur
            // spent 35% of its time probing the hash table below).
            let slots = combined();
            let mut map = vec![u32::MAX; total as usize];
            let mut packed: Vec<u64> = Vec::new();
            let gids: Vec<u32> = slots
                .iter()
                .map(|&s| {
                    let g = &mut map[s as usize];
                    if *g == u32::MAX {
                        *g = packed.len() as u32;
                        packed.push(s);
                    }
                    *g
                })
                .collect();
            packed_grouping(
                trace,
                "group by: slot map on packed key (an array of group ids, no hashing)",
                total,
                gids,
                packed,
            )
        }
        Some(total) => hash_grouping(combined(), total, opts, trace),
        None => {
            let nk = keys.len();
            let per_key: Vec<Vec<u64>> = keys.iter().map(|k| k.codes(rows)).collect();
            if n > opts.grouping_probe_rows
                && keys::skips_grouping(
                    opts.grouping_probe_rows,
                    distinct_tuples(&per_key, opts.grouping_probe_rows),
                    n,
                    false,
                )
            {
                // Nearly every row a new key tuple (ClickBench's `UserID,
                // SearchPhrase` and `WatchID, ClientIP`): a group per row,
                // grouped once, at the merge, as for one key above (perf:
                // the composite table's probes were 23% of q17).
                trace.add(
                    "group by: nearly every row a new key tuple: a group per row, grouped at the merge",
                    format!("{} rows probed", opts.grouping_probe_rows),
                );
                let codes = (0..n)
                    .flat_map(|j| per_key.iter().map(move |c| c[j]))
                    .collect();
                return per_row_grouping(n, GroupKeys::Composite(codes));
            }
            let mut codes: Vec<u64> = Vec::new();
            let mut groups = 0u32;
            let gids: Vec<u32> = if let [a, b] = &per_key[..] {
                // Two keys (the common case, e.g. a 64-bit id and a
                // string): both codes sit in the entry, so a probe reads no
                // other array.
                let mut table: HashTable<(u64, u64, u32)> =
                    HashTable::with_capacity(n.min(LOCAL_DICTIONARY_START));
                let hash = |x: u64, y: u64| combine(combine(0, x), y);
                a.iter()
                    .zip(b)
                    .enumerate()
                    .map(|(j, (&x, &y))| {
                        let h = hash(x, y);
                        match table.find(h, |e| e.0 == x && e.1 == y) {
                            Some(&(_, _, g)) => g,
                            None => {
                                let g = groups;
                                groups += 1;
                                codes.extend([x, y]);
                                grow_local(&mut table, j, n, |e| hash(e.0, e.1));
                                table.insert_unique(h, (x, y, g), |e| hash(e.0, e.1));
                                g
                            }
                        }
                    })
                    .collect()
            } else {
                // Entries hold the hash beside the group id: rehashing and
                // most mismatches read no other array.
                let mut table: HashTable<(u64, u32)> =
                    HashTable::with_capacity(n.min(LOCAL_DICTIONARY_START));
                (0..n)
                    .map(|j| {
                        let h = per_key.iter().fold(0u64, |h, c| combine(h, c[j]));
                        let found = table.find(h, |&(eh, g)| {
                            eh == h && (0..nk).all(|k| codes[g as usize * nk + k] == per_key[k][j])
                        });
                        match found {
                            Some(&(_, g)) => g,
                            None => {
                                let g = groups;
                                groups += 1;
                                codes.extend(per_key.iter().map(|c| c[j]));
                                grow_local(&mut table, j, n, |e| e.0);
                                table.insert_unique(h, (h, g), |e| e.0);
                                g
                            }
                        }
                    })
                    .collect()
            };
            trace.add(
                "group by: hash table on composite key (key space exceeds u64)",
                format!("{groups} groups"),
            );
            Grouping {
                gids: Some(gids),
                groups: groups as usize,
                keys: GroupKeys::Composite(codes),
                repeats: false,
            }
        }
    }
}

/// Distinct key tuples among the first `rows` rows of `per_key` (one code
/// vector per key), counted by the tuples' hashes (as the composite table
/// hashes them; a collision only lowers an estimate).
fn distinct_tuples(per_key: &[Vec<u64>], rows: usize) -> usize {
    let hashes: hashbrown::HashSet<u64> = (0..rows)
        .map(|j| per_key.iter().fold(0u64, |h, c| combine(h, c[j])))
        .collect();
    hashes.len()
}

/// Rows per batch when an aggregate's argument is evaluated: the batch's
/// intermediate arrays (8 bytes a row each) stay in the core's cache from
/// one operator to the next, and are small enough for the allocator to
/// reuse. Evaluated over a whole 65,536-row partition at once, 40 sums of
/// arithmetic spent 13% of their time in the kernel clearing fresh pages
/// for partition-sized vectors (perf).
const ARG_BATCH_ROWS: usize = 4096;

/// Evaluates `arg` (and `arg2`, for an aggregate of pairs) at `rows`
/// [`ARG_BATCH_ROWS`] rows at a time and adds each batch to `acc`; true when
/// the argument is constant (a scalar).
/// `all_rows` holds `0..n` as a selection once made, so that a batch of an
/// unselected partition is a slice of it (a [`Rows::run`], decoded as a
/// range).
///
/// # Errors
/// Evaluation errors, at the first failing row in row order as the
/// reference evaluator reports them.
fn update_in_batches(
    acc: &mut dyn Accumulator,
    (arg, arg2): (&Expr, Option<&Expr>),
    part: &Partition,
    rows: Rows<'_>,
    gids: Gids<'_>,
    groups: usize,
    all_rows: &mut Vec<u32>,
) -> Result<bool> {
    let sel = match rows.sel {
        _ if rows.len <= ARG_BATCH_ROWS => None,
        Some(sel) => Some(sel),
        None => {
            if all_rows.len() != rows.len {
                *all_rows = (0..rows.len as u32).collect();
            }
            Some(&all_rows[..])
        }
    };
    if let (Some(_), Gids::Single(_)) = (sel, gids) {
        acc.expect_rows(rows.len);
    }
    let mut update = |rows: Rows<'_>, gids: Gids<'_>| -> Result<bool> {
        if let Some(arg2) = arg2 {
            let (y, x) = (eval(arg, part, rows)?, eval(arg2, part, rows)?);
            acc.update_pair(datum_input(&y), datum_input(&x), gids, groups)?;
            return Ok(matches!((y, x), (Datum::Scalar(_), Datum::Scalar(_))));
        }
        match eval(arg, part, rows)? {
            Datum::Scalar(v) => {
                acc.update(Input::Scalar(&v), gids, groups)?;
                Ok(true)
            }
            Datum::Array(a) => {
                acc.update(Input::Array(&a), gids, groups)?;
                Ok(false)
            }
        }
    };
    let Some(sel) = sel else {
        return update(rows, gids);
    };
    let mut constant = false;
    for start in (0..rows.len).step_by(ARG_BATCH_ROWS) {
        let end = (start + ARG_BATCH_ROWS).min(rows.len);
        let batch_gids = match gids {
            Gids::Single(_) => Gids::Single(end - start),
            Gids::Ids(ids) => Gids::Ids(&ids[start..end]),
        };
        let batch = if rows.sel.is_none() {
            Rows::run(&sel[start..end])
        } else {
            Rows::some(&sel[start..end])
        };
        constant = update(batch, batch_gids)?;
    }
    Ok(constant)
}

/// An evaluated argument as an accumulator's input.
fn datum_input<'x, 'a>(d: &'x Datum<'a>) -> Input<'x, 'a> {
    match d {
        Datum::Scalar(v) => Input::Scalar(v),
        Datum::Array(a) => Input::Array(a),
    }
}

/// Records in `trace` the pipeline [`aggregate_partition`] compiles for
/// `part` from its codecs and zone maps, reading no row: the keys' codes,
/// the grouping when the codes' bounds decide it, and each aggregate's
/// kernel. `filtered` says whether a filter step or index lookup leaves a
/// selection (a global min/max then cannot read the zone map).
pub fn describe_partition(
    keys: &[Expr],
    aggs: &[AggCall],
    part: &Partition,
    filtered: bool,
    opts: &ExecOptions,
    trace: &mut Trace,
) {
    let mut space = Some(1u64);
    let mut varying = 0;
    for k in keys {
        let (shape, detail, codes) = keys::key_shape(k, part);
        trace.add(shape, detail);
        match codes {
            Some(1) => {}
            Some(n) => {
                varying += 1;
                space = space.and_then(|s| s.checked_mul(n));
            }
            None => {
                varying += 1;
                space = None;
            }
        }
    }
    match space {
        _ if varying == 0 => trace.add(
            "group by: single group (every key constant in partition)",
            String::new(),
        ),
        Some(total) if total <= opts.fixed_array_min_slots => trace.add(
            "group by: fixed-size array indexed by combined key (no hashing)",
            format!("{total} slots"),
        ),
        Some(total) => trace.add(
            "group by: from the selected rows: fixed-size array when the key space is at most twice their count, else hashing",
            format!("key space {total}"),
        ),
        None => trace.add(
            "group by: hash table on the codes made from the rows, or a fixed-size array when their range is small",
            String::new(),
        ),
    }
    for call in aggs {
        let kernel = AggKernel::of(call, !keys.is_empty(), filtered, part);
        let constant = matches!(call.arg, Some(Expr::Literal { .. }));
        kernel.record(call, constant, trace);
    }
}

/// How an aggregate call reads a partition, decided from the call, the
/// grouping, the selection and the argument's codec before a row is read
/// (execution and EXPLAIN share it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum AggKernel {
    /// `count(*)`: per-group row counts.
    RowCounts,
    /// A global min/max of column `.0` over every row: its zone map's
    /// bound (exact: zone maps hold the extremes of the valid values, in
    /// the order min/max use).
    ZoneMap(usize),
    /// Column `.0` read in its codec (sums of codes, dictionaries, runs).
    InPlace(usize),
    /// The argument evaluated in batches into a typed accumulator.
    Evaluated,
}

impl AggKernel {
    /// The kernel of `call` in `part`; `grouped` when there are keys,
    /// `filtered` when a selection leaves out rows.
    fn of(call: &AggCall, grouped: bool, filtered: bool, part: &Partition) -> AggKernel {
        match (call.func, call.arg.as_ref()) {
            (AggFunc::CountStar, _) | (_, None) => AggKernel::RowCounts,
            (AggFunc::Min | AggFunc::Max, Some(Expr::Column { index, .. }))
                if !grouped && !filtered =>
            {
                AggKernel::ZoneMap(*index)
            }
            (func, Some(Expr::Column { index, .. }))
                if call.arg2.is_none() && reads_in_place(func, &part.columns[*index]) =>
            {
                AggKernel::InPlace(*index)
            }
            _ => AggKernel::Evaluated,
        }
    }

    /// Folds `rows` of `part` (row `j` in group `gids[j]`, of `groups`)
    /// into `acc` for `call` by this kernel; true when an evaluated
    /// argument was one value for the partition. `all_rows` is the
    /// selection of every row, made once when arguments are batched.
    ///
    /// # Errors
    /// Evaluation errors of the argument; an evaluated call without one
    /// (a bug).
    fn fold(
        self,
        acc: &mut dyn Accumulator,
        call: &AggCall,
        part: &Partition,
        (rows, gids, groups): (Rows<'_>, Gids<'_>, usize),
        all_rows: &mut Vec<u32>,
    ) -> Result<bool> {
        match self {
            AggKernel::RowCounts => acc.update(Input::Rows, gids, groups)?,
            AggKernel::ZoneMap(index) => {
                let zone = &part.columns[index].zone;
                let bound = if call.func == AggFunc::Min {
                    &zone.min
                } else {
                    &zone.max
                };
                // A NULL bound (no valid value) offers nothing but still
                // sizes the state to the group.
                acc.update(Input::Scalar(bound), Gids::Single(1), groups)?;
            }
            AggKernel::InPlace(index) => {
                acc.update(Input::Column(&part.columns[index], rows), gids, groups)?;
            }
            AggKernel::Evaluated => {
                let arg = call.arg.as_ref().ok_or_else(|| {
                    crate::error::Error::Internal("an evaluated aggregate without argument".into())
                })?;
                return update_in_batches(
                    acc,
                    (arg, call.arg2.as_ref()),
                    part,
                    rows,
                    gids,
                    groups,
                    all_rows,
                );
            }
        }
        Ok(false)
    }

    /// Records the kernel's EXPLAIN line for `call`; `constant` says an
    /// evaluated argument was one value for the partition.
    fn record(self, call: &AggCall, constant: bool, trace: &mut Trace) {
        let func = call.func.name();
        match self {
            AggKernel::RowCounts => {
                trace.add("aggregate count(*): per-group row counts", String::new());
            }
            AggKernel::ZoneMap(_) => trace.add(
                format!("aggregate {func}: read from the zone map"),
                call.to_string(),
            ),
            AggKernel::InPlace(_) => trace.add(
                format!("aggregate {func}: reads the column's codec in place"),
                call.to_string(),
            ),
            AggKernel::Evaluated => trace.add(
                format!(
                    "aggregate {func}: {}",
                    if constant {
                        "constant argument"
                    } else {
                        "typed accumulator"
                    }
                ),
                call.to_string(),
            ),
        }
    }
}

/// Aggregates the selected rows of one partition into a [`Partial`].
///
/// # Errors
/// Evaluation errors of keys or arguments.
pub fn aggregate_partition<'a>(
    keys: &[Expr],
    aggs: &[AggCall],
    part: &'a Partition,
    rows: Rows<'_>,
    opts: &ExecOptions,
    packing: Option<&PackedKeys<'_>>,
    trace: &mut Trace,
) -> Result<Partial<'a>> {
    let mut key_codes: Vec<KeyCodes<'a>> = keys
        .iter()
        .map(|k| key_codes(k, part, rows, opts))
        .collect::<Result<_>>()?;
    for k in &key_codes {
        trace.add(
            format!("group key {}", k.how.split(':').next().unwrap_or("")),
            k.how.clone(),
        );
    }
    // Keys too many for an array over the partition's codes, that pack
    // into one integer of table-wide slots: each row's packed key read
    // from the codes, grouped as one integer, and the partial is packed
    // for the merge already (perf of db-benchmark groupby q10, six keys,
    // a group per row: re-coding the keys to dense ranks, splitting the
    // combined code by division, decoding six key columns and packing
    // them again for the merge were a quarter of the query).
    // (The codes present number at most the rows: when even that bound
    // fits the arrays, re-ranking them densely, `group_rows`, groups
    // without hashing.)
    let space = key_codes
        .iter()
        .filter(|k| k.varies())
        .try_fold(1u64, |acc, k| {
            acc.checked_mul(k.card.clamp(1, rows.len.max(1) as u64))
        });
    let packing = packing.filter(|p| {
        p.len() == keys.len() && space.is_none_or(|t| t > slot_map_limit(rows.len, opts))
    });
    let grouping = match packing {
        Some(p) => {
            trace.add(
                "group keys packed into one integer per row from their table-wide slots",
                format!("{} keys, {} bits", p.len(), p.bits()),
            );
            hash_grouping(p.row_keys(part, rows)?, 1u64 << p.bits(), opts, trace)
        }
        None => group_rows(&mut key_codes, rows, opts, trace),
    };
    let groups = grouping.groups;
    let gids = match &grouping.gids {
        None => Gids::Single(rows.len),
        Some(ids) => Gids::Ids(ids),
    };
    let mut accs: Vec<Box<dyn Accumulator>> = Vec::with_capacity(aggs.len());
    // Rows 0..n as a selection, made once when arguments are batched.
    let mut all_rows = Vec::new();
    for call in aggs {
        let mut acc = new_accumulator(call)?;
        let kernel = AggKernel::of(call, !keys.is_empty(), rows.sel.is_some(), part);
        let constant = kernel.fold(
            acc.as_mut(),
            call,
            part,
            (rows, gids, groups),
            &mut all_rows,
        )?;
        kernel.record(call, constant, trace);
        accs.push(acc);
    }
    // Which groups to emit: fixed-array slots that saw rows; every group
    // otherwise. A global aggregate emits its group even over no rows.
    let emitted: Vec<u64> = match (&grouping.keys, &grouping.gids) {
        (GroupKeys::Slots, Some(ids)) => {
            let mut seen = vec![false; groups];
            for &g in ids {
                seen[g as usize] = true;
            }
            // Without a branch per slot: about half the slots of a sparse
            // array are empty, a branch mispredicted on each.
            let mut out = vec![0u64; groups];
            let mut n = 0;
            for (g, &s) in seen.iter().enumerate() {
                out[n] = g as u64;
                n += s as usize;
            }
            out.truncate(n);
            out
        }
        (GroupKeys::Slots, None) if !keys.is_empty() && rows.len == 0 => Vec::new(),
        _ => (0..groups as u64).collect(),
    };
    if emitted.len() < groups {
        let idx: Vec<u32> = emitted.iter().map(|&g| g as u32).collect();
        for acc in accs.iter_mut() {
            *acc = acc.take(&idx);
        }
    }
    if packing.is_some()
        && let GroupKeys::Packed(packed) = grouping.keys
    {
        // Every group emitted, in order: the packed keys are the key.
        return Ok(Partial {
            groups: emitted.len(),
            keys: vec![Array::new(
                DataType::Int,
                Data::Int(packed.into_iter().map(|k| k as i64).collect()),
            )],
            accs,
            repeats: grouping.repeats,
        });
    }
    let codes = group_codes(&grouping.keys, &emitted, &key_codes);
    let repeats = grouping.repeats || key_codes.iter().any(|k| k.decoder.repeats());
    let keys = key_codes
        .into_iter()
        .zip(&codes)
        .map(|(k, c)| k.decoder.decode(c))
        .collect();
    Ok(Partial {
        groups: emitted.len(),
        keys,
        accs,
        repeats,
    })
}
