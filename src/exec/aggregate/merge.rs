//! The merge of partial aggregates across partitions.
//!
//! # Design
//! Radix-partitioned, as ClickHouse's two-level hash table and DuckDB's
//! partitioned aggregate: every group's key tuple is hashed once (strings
//! coded against a partition dictionary once per distinct entry), bits of
//! the hash pick one of `B` buckets ([`bucket_of`]), and each partial is
//! split by bucket in one pass over its groups (keys and accumulator
//! states dealt out with [`Buckets`] and [`Accumulator::split`]). Buckets
//! then merge in parallel, each through its own hash table, with no locks
//! and no single-threaded pass over all groups. Within a bucket, partials
//! meet in partition order, so float sums do not depend on thread timing.
//!
//! Three shortcuts skip the hash tables: a global aggregate (no keys) folds
//! its one group per partial in order; a single integer key whose partials
//! cover disjoint ranges (a key that ascends with load order, such as
//! `trip_id / 5`) needs no merge at all, only concatenation; and a single
//! string key coded against one dictionary in every partial (a table-wide
//! dictionary, `store::table_dictionaries`), or a single integer key whose
//! partials span a small range (`u % 2000000`), merges by slot
//! ([`merge_by_code`]): shards of the slot range, each numbering its
//! groups through a dense array, with no hashing and no string read.

use std::sync::Arc;

use hashbrown::HashTable;
use rayon::prelude::*;

use crate::control::CancelToken;
use crate::error::Result;
use crate::exec::ExecOptions;
use crate::kernel::hash::{NULL_HASH, canonical_f64_bits, combine, hash_f64, hash_i64, hash_str};
use crate::store::{Bitmap, Dictionary};
use crate::types::DataType;

use super::Partial;
use super::accumulator::{Accumulator, Buckets};
use crate::exec::vector::{Array, Data, StrBuf, Strs};

/// Merged groups per bucket the radix split aims at, at most: a bucket's
/// hash table (16 bytes an entry) then stays within a 512 KiB L2 cache.
/// Sized by the merged groups, not the partial groups: UserID over 10M
/// rows has 8.8M partial groups but 1M merged ones, and splitting by the
/// partial groups made 1,024 buckets, 156k pieces of about 57 groups each
/// whose per-piece allocations and dispatch cost more than their probes
/// (perf of ClickBench q16).
const BUCKET_GROUPS: usize = 1 << 14;

/// Hashes whose low bits are all zero under this mask form the sample
/// [`estimate_groups`] counts: 1 in 256 of the hash space. Equal keys have
/// equal hashes, so the sample holds 1 in 256 of the distinct keys.
const SAMPLE_MASK: u64 = 0xff;

/// The hashes of `hashes` in the [`SAMPLE_MASK`] sample.
fn hash_sample(hashes: &[u64]) -> Vec<u64> {
    hashes
        .iter()
        .copied()
        .filter(|&h| h & SAMPLE_MASK == 0)
        .collect()
}

/// The number of distinct key tuples across partials, from the hashes of
/// each partial that fall in the [`SAMPLE_MASK`] sample: distinct sampled
/// hashes times 256 (a hash sample, as in Gibbons' distinct sampling,
/// VLDB 2001; relative standard error about 1/sqrt(sampled), so within a
/// few percent from 1M keys up; small counts read as 0, which is all the
/// bucket choice needs of them).
fn estimate_groups<'s>(samples: impl Iterator<Item = &'s [u64]>) -> usize {
    let mut seen: hashbrown::HashSet<u64> = hashbrown::HashSet::new();
    for s in samples {
        seen.extend(s.iter().copied());
    }
    seen.len() * (SAMPLE_MASK as usize + 1)
}

/// Most buckets of a radix split.
const MAX_BUCKETS: usize = 1024;
const _: () = assert!(MAX_BUCKETS <= 1 << 16, "bucket numbers are u16");

/// The bucket of key hash `h` in a radix split into `buckets` (a power of
/// two, at most 2^16): hash bits 32 and up. Not the top bits: hashbrown
/// tags each entry with the hash's top 7 bits and places it by the low
/// ones, so with the bucket in the top bits every key of a bucket's table
/// had one tag, and each probe compared the key of every full slot of its
/// group (perf of shapes `computed_key_mod`, 128 buckets: the merge's
/// probe was 22% of the query).
#[inline]
fn bucket_of(h: u64, buckets: usize) -> usize {
    (h >> 32) as usize & (buckets - 1)
}

/// Hashes of every row's key tuple.
fn hash_keys(keys: &[Array<'_>], n: usize) -> Vec<u64> {
    let mut h = vec![0u64; n];
    for key in keys {
        let valid = |i: usize| key.validity.as_ref().is_none_or(|v| v.get(i));
        let per_row: Vec<u64> = match &key.data {
            Data::Int(v) => v.iter().map(|&x| hash_i64(x)).collect(),
            Data::Float(v) => v.iter().map(|&x| hash_f64(x)).collect(),
            Data::Bool(b) => (0..n).map(|i| hash_i64(b.get(i) as i64 ^ 0x55)).collect(),
            Data::Str(s) => s.map(hash_str),
        };
        for (i, (acc, x)) in h.iter_mut().zip(per_row).enumerate() {
            *acc = combine(*acc, if valid(i) { x } else { NULL_HASH });
        }
    }
    h
}

/// Growable key storage of one merged bucket.
enum KeyBuilder {
    Int(Vec<i64>, Vec<bool>, DataType),
    Float(Vec<f64>, Vec<bool>),
    Bool(Vec<bool>, Vec<bool>),
    Str(StrBuf, Vec<bool>),
}

impl KeyBuilder {
    fn new(like: &Array<'_>) -> KeyBuilder {
        match &like.data {
            Data::Int(_) => KeyBuilder::Int(Vec::new(), Vec::new(), like.dtype),
            Data::Float(_) => KeyBuilder::Float(Vec::new(), Vec::new()),
            Data::Bool(_) => KeyBuilder::Bool(Vec::new(), Vec::new()),
            Data::Str(_) => KeyBuilder::Str(StrBuf::default(), Vec::new()),
        }
    }

    /// Appends row `i` of `a`.
    fn push(&mut self, a: &Array<'_>, i: usize) {
        let valid = a.validity.as_ref().is_none_or(|v| v.get(i));
        match (self, &a.data) {
            (KeyBuilder::Int(v, ok, _), Data::Int(x)) => {
                v.push(x[i]);
                ok.push(valid);
            }
            (KeyBuilder::Float(v, ok), Data::Float(x)) => {
                v.push(x[i]);
                ok.push(valid);
            }
            (KeyBuilder::Bool(v, ok), Data::Bool(x)) => {
                v.push(x.get(i));
                ok.push(valid);
            }
            (KeyBuilder::Str(v, ok), Data::Str(x)) => {
                v.push(if valid { x.get(i) } else { "" });
                ok.push(valid);
            }
            _ => debug_assert!(false, "key column of another type"),
        }
    }

    /// Whether stored key `g` equals row `i` of `a`.
    #[inline]
    fn eq(&self, g: usize, a: &Array<'_>, i: usize) -> bool {
        let valid = a.validity.as_ref().is_none_or(|v| v.get(i));
        match (self, &a.data) {
            (KeyBuilder::Int(v, ok, _), Data::Int(x)) => ok[g] == valid && (!valid || v[g] == x[i]),
            (KeyBuilder::Float(v, ok), Data::Float(x)) => {
                ok[g] == valid && (!valid || canonical_f64_bits(v[g]) == canonical_f64_bits(x[i]))
            }
            (KeyBuilder::Bool(v, ok), Data::Bool(x)) => {
                ok[g] == valid && (!valid || v[g] == x.get(i))
            }
            (KeyBuilder::Str(v, ok), Data::Str(x)) => {
                ok[g] == valid && (!valid || v.get(g) == x.get(i))
            }
            _ => false,
        }
    }

    fn finish(self) -> Array<'static> {
        let validity = |ok: Vec<bool>| ok.iter().any(|v| !v).then(|| Bitmap::from_bools(&ok));
        match self {
            KeyBuilder::Int(v, ok, dtype) => Array {
                dtype,
                data: Data::Int(v),
                validity: validity(ok),
            },
            KeyBuilder::Float(v, ok) => Array {
                dtype: DataType::Float,
                data: Data::Float(v.into()),
                validity: validity(ok),
            },
            KeyBuilder::Bool(v, ok) => Array {
                dtype: DataType::Bool,
                data: Data::Bool(Bitmap::from_bools(&v)),
                validity: validity(ok),
            },
            KeyBuilder::Str(v, ok) => Array {
                dtype: DataType::Str,
                data: Data::Str(Strs::Owned(v)),
                validity: validity(ok),
            },
        }
    }
}

/// A partial's groups of one bucket: keys, their hashes, states.
struct Piece<'a> {
    keys: Vec<Array<'a>>,
    hashes: Vec<u64>,
    accs: Vec<Box<dyn Accumulator>>,
}

/// Where a bucket's merge keeps its distinct keys and finds a piece's
/// groups among them.
trait GroupTable<'a> {
    /// Group ids of every row of `piece`, new keys added as new groups.
    fn probe(&mut self, piece: &Piece<'a>, into: &mut Vec<u32>);
    /// Distinct keys so far.
    fn groups(&self) -> usize;
    /// Room for `more` new keys.
    fn reserve(&mut self, more: usize);
    /// The distinct keys, one array per key column.
    fn finish(self) -> Vec<Array<'a>>;
}

/// Any key tuple: entries hold the hash next to the group, so a probe
/// compares hashes before it reads the key columns (perf: the probe's
/// closure was a third of `merge_pieces`, merging 1M string groups).
struct AnyKeys {
    builders: Vec<KeyBuilder>,
    table: HashTable<(u64, u32)>,
}

impl<'a> GroupTable<'a> for AnyKeys {
    fn probe(&mut self, piece: &Piece<'a>, into: &mut Vec<u32>) {
        for (i, &h) in piece.hashes.iter().enumerate() {
            let builders = &mut self.builders;
            let found = self.table.find(h, |&(eh, g)| {
                eh == h
                    && builders
                        .iter()
                        .zip(&piece.keys)
                        .all(|(b, k)| b.eq(g as usize, k, i))
            });
            let g = match found {
                Some(&(_, g)) => g,
                None => {
                    let g = self.table.len() as u32;
                    for (b, k) in builders.iter_mut().zip(&piece.keys) {
                        b.push(k, i);
                    }
                    self.table.insert_unique(h, (h, g), |e| e.0);
                    g
                }
            };
            into.push(g);
        }
    }

    fn groups(&self) -> usize {
        self.table.len()
    }

    fn reserve(&mut self, more: usize) {
        self.table.reserve(more, |e| e.0);
    }

    fn finish(self) -> Vec<Array<'a>> {
        self.builders.into_iter().map(KeyBuilder::finish).collect()
    }
}

/// One integer key without NULLs (`u % 2000000`, UserID): entries hold the
/// key itself, so a probe reads nothing outside the table (perf: with 1M
/// integer groups, `merge_pieces` was a fifth of the query, most of it
/// the generic key compare reading a builder column at a random place).
struct IntKeys {
    keys: Vec<i64>,
    dtype: DataType,
    table: HashTable<(i64, u32)>,
}

impl IntKeys {
    /// The hash [`hash_keys`] gives a one-integer tuple.
    fn hash(k: i64) -> u64 {
        combine(0, hash_i64(k))
    }

    /// The integers of a piece's one key column without NULLs, else `None`.
    fn of<'p>(piece: &'p Piece<'_>) -> Option<&'p [i64]> {
        match &piece.keys[..] {
            [
                Array {
                    data: Data::Int(v),
                    validity: None,
                    ..
                },
            ] => Some(v),
            _ => None,
        }
    }
}

impl<'a> GroupTable<'a> for IntKeys {
    fn probe(&mut self, piece: &Piece<'a>, into: &mut Vec<u32>) {
        let keys = IntKeys::of(piece).unwrap_or_default();
        for (&k, &h) in keys.iter().zip(&piece.hashes) {
            // One probe sequence whether the key is found or new (most
            // are new when nearly every row is its own group).
            let g = match self.table.entry(h, |e| e.0 == k, |e| IntKeys::hash(e.0)) {
                hashbrown::hash_table::Entry::Occupied(e) => e.get().1,
                hashbrown::hash_table::Entry::Vacant(e) => {
                    let g = self.keys.len() as u32;
                    self.keys.push(k);
                    e.insert((k, g));
                    g
                }
            };
            into.push(g);
        }
    }

    fn groups(&self) -> usize {
        self.keys.len()
    }

    fn reserve(&mut self, more: usize) {
        self.keys.reserve(more);
        self.table.reserve(more, |e| IntKeys::hash(e.0));
    }

    fn finish(self) -> Vec<Array<'a>> {
        vec![Array {
            dtype: self.dtype,
            data: Data::Int(self.keys),
            validity: None,
        }]
    }
}

/// Bytes of a string key an entry of [`StrKeys`] holds itself.
const HEAD: usize = 16;

/// A [`StrKeys`] entry: the key's hash, group, byte length and first
/// [`HEAD`] bytes (zero-padded). 32 bytes.
#[derive(Clone, Copy)]
struct StrEntry {
    hash: u64,
    group: u32,
    len: u32,
    head: [u8; HEAD],
}

/// The first [`HEAD`] bytes of `s`, zero-padded.
#[inline]
fn head_of(s: &str) -> [u8; HEAD] {
    let mut head = [0u8; HEAD];
    let n = s.len().min(HEAD);
    head[..n].copy_from_slice(&s.as_bytes()[..n]);
    head
}

/// One string key without NULLs (GROUP BY URL, SearchPhrase, shapes'
/// `s1m`): entries hold keys of up to [`HEAD`] bytes whole and the head
/// and length of longer ones, so a probe reads the key store only to
/// confirm a long key. perf of shapes `group_s1m`: comparing a matched
/// entry's key through the generic builder (validity, offsets, then the
/// bytes, each at a random place) was 14% of the query.
struct StrKeys {
    keys: StrBuf,
    dtype: DataType,
    table: HashTable<StrEntry>,
}

impl StrKeys {
    /// The strings of a piece's one key column without NULLs, else `None`.
    fn of<'p>(piece: &'p Piece<'_>) -> Option<&'p Strs<'p>> {
        match &piece.keys[..] {
            [
                Array {
                    data: Data::Str(s),
                    validity: None,
                    ..
                },
            ] => Some(s),
            _ => None,
        }
    }
}

impl<'a> GroupTable<'a> for StrKeys {
    fn probe(&mut self, piece: &Piece<'a>, into: &mut Vec<u32>) {
        let Some(strs) = StrKeys::of(piece) else {
            return;
        };
        for (i, &h) in piece.hashes.iter().enumerate() {
            let s = strs.get(i);
            let head = head_of(s);
            let keys = &self.keys;
            let found = self.table.find(h, |e| {
                e.hash == h
                    && e.len as usize == s.len()
                    && e.head == head
                    && (s.len() <= HEAD || keys.get(e.group as usize) == s)
            });
            let g = match found {
                Some(e) => e.group,
                None => {
                    let group = self.keys.len() as u32;
                    self.keys.push(s);
                    let entry = StrEntry {
                        hash: h,
                        group,
                        len: s.len() as u32,
                        head,
                    };
                    self.table.insert_unique(h, entry, |e| e.hash);
                    group
                }
            };
            into.push(g);
        }
    }

    fn groups(&self) -> usize {
        self.keys.len()
    }

    fn reserve(&mut self, more: usize) {
        self.table.reserve(more, |e| e.hash);
    }

    fn finish(self) -> Vec<Array<'a>> {
        vec![Array {
            dtype: self.dtype,
            data: Data::Str(Strs::Owned(self.keys)),
            validity: None,
        }]
    }
}

/// Merges pieces (in partition order) into one partial with distinct keys;
/// `expected` is the estimated number of them, when known.
fn merge_pieces<'a>(
    pieces: Vec<Piece<'a>>,
    expected: Option<usize>,
    cancel: &CancelToken,
) -> Result<Partial<'a>> {
    let Some(first) = pieces.first() else {
        return Ok(Partial {
            groups: 0,
            keys: Vec::new(),
            accs: Vec::new(),
            repeats: false,
        });
    };
    // Room for the estimate and a margin, at once: growing by doubling
    // rehashed every key up to six times.
    let capacity = expected.map_or(first.hashes.len(), |e| e + e / 8);
    if pieces.iter().all(|p| IntKeys::of(p).is_some()) {
        let table = IntKeys {
            keys: Vec::with_capacity(capacity),
            dtype: first.keys[0].dtype,
            table: HashTable::with_capacity(capacity),
        };
        return merge_into(table, pieces, expected.is_some(), cancel);
    }
    if pieces.iter().all(|p| StrKeys::of(p).is_some()) {
        let table = StrKeys {
            keys: StrBuf::with_capacity(capacity),
            dtype: first.keys[0].dtype,
            table: HashTable::with_capacity(capacity),
        };
        return merge_into(table, pieces, expected.is_some(), cancel);
    }
    let table = AnyKeys {
        builders: first.keys.iter().map(KeyBuilder::new).collect(),
        table: HashTable::with_capacity(capacity),
    };
    merge_into(table, pieces, expected.is_some(), cancel)
}

/// Merges `pieces` (in partition order, at least one) through `table`,
/// which is `sized` when made with room for the estimated keys.
fn merge_into<'a>(
    mut table: impl GroupTable<'a>,
    pieces: Vec<Piece<'a>>,
    sized: bool,
    cancel: &CancelToken,
) -> Result<Partial<'a>> {
    // Groups of the pieces not merged yet.
    let mut remaining: usize = pieces.iter().map(|p| p.hashes.len()).sum();
    let mut accs: Vec<Box<dyn Accumulator>> = Vec::new();
    for (n, mut piece) in pieces.into_iter().enumerate() {
        cancel.check()?;
        remaining -= piece.hashes.len();
        let before = table.groups();
        let mut into = Vec::with_capacity(piece.hashes.len());
        table.probe(&piece, &mut into);
        if n == 0 {
            // When the first piece's keys are distinct (a partial's
            // invariant unless it `repeats`), its groups are 0..n in order
            // and its states are taken as they are; else they fold into
            // empty states like any later piece's.
            if into.iter().enumerate().all(|(i, &g)| i == g as usize) {
                accs = piece.accs;
                continue;
            }
            accs = piece.accs.iter_mut().map(|a| a.take(&[])).collect();
        }
        let groups = table.groups();
        if n == 1 && !sized {
            // The second piece's share of new keys predicts the rest's:
            // room for them at once instead of rehashing at each doubling
            // (perf: rehashing was a tenth of a 1M-group GROUP BY).
            let new = (groups - before) as f64 / into.len().max(1) as f64;
            table.reserve((remaining as f64 * new * 1.1) as usize);
        }
        for (acc, other) in accs.iter_mut().zip(piece.accs) {
            acc.merge(other, &into, groups)?;
        }
    }
    Ok(Partial {
        groups: table.groups(),
        keys: table.finish(),
        accs,
        repeats: false,
    })
}

/// `Some((min, max))` of a single non-NULL integer key column.
fn int_range(p: &Partial<'_>) -> Option<(i64, i64)> {
    match &p.keys[..] {
        [
            Array {
                data: Data::Int(v),
                validity: None,
                ..
            },
        ] => Some((*v.iter().min()?, *v.iter().max()?)),
        _ => None,
    }
}

/// For key ranges `(lo, hi, partial)` sorted by `lo`, the keys two
/// neighbouring ranges share at their ends, as `(into, from, key)` with
/// `into` the partial first in partition order; `None` when ranges overlap
/// more than that, or three partials share a key (a one-key range between
/// two others). A key that ascends with load order touches at partition
/// boundaries: `trip_id / 5` over 65,536-row partitions shares one group
/// between neighbours.
fn touching_keys(ranges: &[(i64, i64, usize)]) -> Option<Vec<(usize, usize, i64)>> {
    let mut out: Vec<(usize, usize, i64)> = Vec::new();
    for w in ranges.windows(2) {
        let ((_, hi, a), (lo, _, b)) = (w[0], w[1]);
        if hi > lo {
            return None;
        }
        if hi == lo {
            if out.last().is_some_and(|t| t.2 == hi) {
                return None;
            }
            out.push((a.min(b), a.max(b), hi));
        }
    }
    Some(out)
}

/// Folds the group of integer key `key` of partial `from` into the group of
/// the same key of partial `into`, then drops it from `from`.
///
/// # Errors
/// A partial without that key (a bug), or a failed merge.
fn fold_shared_key(parts: &mut [Partial<'_>], into: usize, from: usize, key: i64) -> Result<()> {
    let find = |p: &Partial<'_>| match &p.keys[..] {
        [
            Array {
                data: Data::Int(v), ..
            },
        ] => v.iter().position(|&x| x == key),
        _ => None,
    };
    let (Some(gi), Some(gj)) = (find(&parts[into]), find(&parts[from])) else {
        return Err(crate::error::Error::Internal(
            "shared key missing from a partial".into(),
        ));
    };
    debug_assert!(into < from);
    let (head, tail) = parts.split_at_mut(from);
    let (a, b) = (&mut head[into], &mut tail[0]);
    let others: Vec<u32> = (0..b.groups as u32).filter(|&g| g != gj as u32).collect();
    for (acc_a, acc_b) in a.accs.iter_mut().zip(b.accs.iter_mut()) {
        acc_a.merge(acc_b.take(&[gj as u32]), &[gi as u32], a.groups)?;
        *acc_b = acc_b.take(&others);
    }
    b.keys = b.keys.iter().map(|k| k.take(&others)).collect();
    b.groups -= 1;
    Ok(())
}

/// Keeps only the groups of the first `k` distinct key tuples met in
/// partition order (within a partial, in its group order), dropping every
/// other group of every partial before the merge: for `LIMIT k` without
/// ORDER BY, where any `k` groups are a right answer but each must be
/// complete. One hash probe per partial group, against a table of at most
/// `k` keys; the kept groups are taken out with [`Accumulator::take`].
/// ClickBench q18 (`GROUP BY UserID, SearchPhrase LIMIT 10`, 687k partial
/// groups at 1M rows) spent 40% of its instructions merging every group.
///
/// # Errors
/// [`crate::Error::Cancelled`].
pub fn keep_first_keys<'a>(
    parts: Vec<Partial<'a>>,
    k: usize,
    cancel: &CancelToken,
) -> Result<Vec<Partial<'a>>> {
    let Some(first) = parts.iter().find(|p| p.groups > 0) else {
        return Ok(parts);
    };
    let mut seen = AnyKeys {
        builders: first.keys.iter().map(KeyBuilder::new).collect(),
        table: HashTable::with_capacity(k.min(1 << 16)),
    };
    let mut out = Vec::with_capacity(parts.len());
    for mut p in parts {
        cancel.check()?;
        let hashes = hash_keys(&p.keys, p.groups);
        let mut keep: Vec<u32> = Vec::new();
        for (i, &h) in hashes.iter().enumerate() {
            let builders = &mut seen.builders;
            let found = seen
                .table
                .find(h, |&(eh, g)| {
                    eh == h
                        && builders
                            .iter()
                            .zip(&p.keys)
                            .all(|(b, key)| b.eq(g as usize, key, i))
                })
                .is_some();
            if !found && seen.table.len() < k {
                let g = seen.table.len() as u32;
                for (b, key) in builders.iter_mut().zip(&p.keys) {
                    b.push(key, i);
                }
                seen.table.insert_unique(h, (h, g), |e| e.0);
            } else if !found {
                continue;
            }
            keep.push(i as u32);
        }
        if keep.len() == p.groups {
            out.push(p);
        } else if !keep.is_empty() {
            out.push(Partial {
                groups: keep.len(),
                keys: p.keys.iter().map(|a| a.take(&keep)).collect(),
                accs: p.accs.iter_mut().map(|a| a.take(&keep)).collect(),
                repeats: p.repeats,
            });
        }
    }
    Ok(out)
}

/// One key column of a partial split by bucket: row `i` goes to bucket
/// `buckets.of()[i]`.
///
/// Integers and strings are dealt out in one pass over the rows in order,
/// so the column (a partition's dictionary, for coded keys) is read once
/// from start to end and the bucket's merge then reads each piece's keys
/// back to back. perf of shapes `group_s10k` (10k strings in each of 153
/// partitions, 16 buckets): gathering dictionary codes per bucket left the
/// merge's key compare reading each partition's dictionary at scattered
/// entries, 16 times over; `memcmp` stalled on those loads for 53% of the
/// query.
///
/// Codes into a dictionary of at most `small_entries` strings
/// ([`ExecOptions::small_dictionary_entries`]) are gathered as codes: such
/// a dictionary stays in cache.
fn split_key<'a>(k: &Array<'a>, buckets: &Buckets, small_entries: usize) -> Vec<Array<'a>> {
    // The rows of each bucket, listed only where a gather needs them.
    let idx = || buckets.lists();
    let validity = || -> Vec<Option<Bitmap>> {
        match &k.validity {
            Some(v) => idx().iter().map(|ix| Some(v.gather(ix))).collect(),
            None => vec![None; buckets.counts().len()],
        }
    };
    match &k.data {
        Data::Int(v) => buckets
            .scatter(v.iter().copied())
            .into_iter()
            .zip(validity())
            .map(|(v, validity)| Array {
                dtype: k.dtype,
                data: Data::Int(v),
                validity,
            })
            .collect(),
        Data::Str(Strs::Coded { entries, .. }) if entries.len() <= small_entries => {
            idx().iter().map(|ix| k.take(ix)).collect()
        }
        Data::Str(s) => {
            let mut bufs: Vec<StrBuf> = buckets
                .counts()
                .iter()
                .map(|&c| StrBuf::with_capacity(c))
                .collect();
            for (i, &b) in buckets.of().iter().enumerate() {
                bufs[b as usize].push(s.get(i));
            }
            bufs.into_iter()
                .zip(validity())
                .map(|(b, validity)| Array {
                    dtype: k.dtype,
                    data: Data::Str(Strs::Owned(b)),
                    validity,
                })
                .collect()
        }
        _ => idx().iter().map(|ix| k.take(ix)).collect(),
    }
}

/// The entries of the one dictionary that every partial's single key is
/// coded against (a table-wide dictionary), if there is one.
fn shared_entries<'a>(parts: &[Partial<'a>]) -> Option<&'a Dictionary> {
    let mut shared: Option<&'a Dictionary> = None;
    for p in parts {
        let [key] = &p.keys[..] else {
            return None;
        };
        let Data::Str(Strs::Coded { entries, .. }) = &key.data else {
            return None;
        };
        let Strs::Dict(e) = &**entries else {
            return None;
        };
        match shared {
            Some(s) if !std::ptr::eq(s, *e) => return None,
            _ => shared = Some(*e),
        }
    }
    shared
}

/// A partial's groups of one code shard: each group's slot (see
/// [`DenseKey`]) and states.
struct CodePiece {
    slots: Vec<u32>,
    accs: Vec<Box<dyn Accumulator>>,
}

/// Every accumulator of a partial split by `buckets`: element `b` holds
/// each accumulator's state of bucket `b`, in order.
fn split_accs(
    accs: &mut [Box<dyn Accumulator>],
    buckets: &Buckets,
) -> Vec<Vec<Box<dyn Accumulator>>> {
    let mut split: Vec<std::vec::IntoIter<Box<dyn Accumulator>>> = accs
        .iter_mut()
        .map(|a| a.split(buckets).into_iter())
        .collect();
    (0..buckets.counts().len())
        .map(|_| split.iter_mut().filter_map(Iterator::next).collect())
        .collect()
}

/// Each partial's pieces (one per bucket) regrouped as each bucket's
/// pieces, partition order kept, empty pieces dropped.
fn per_bucket<T>(split: Vec<Vec<T>>, buckets: usize, empty: impl Fn(&T) -> bool) -> Vec<Vec<T>> {
    let mut out: Vec<Vec<T>> = (0..buckets).map(|_| Vec::new()).collect();
    for pieces in split {
        for (b, piece) in pieces.into_iter().enumerate() {
            if !empty(&piece) {
                out[b].push(piece);
            }
        }
    }
    out
}

/// A single key whose values are slots of a small dense range in every
/// partial, so the merge numbers groups through arrays, never hashing.
#[derive(Clone, Copy)]
pub(super) enum DenseKey<'a> {
    /// Codes into one dictionary (a table-wide one); slot = code, and the
    /// dictionary's length for NULL.
    Dict(&'a Dictionary),
    /// Integers without NULLs in `base..base + slots`; slot = value − base.
    Int {
        base: i64,
        slots: usize,
        dtype: DataType,
    },
}

impl<'a> DenseKey<'a> {
    /// Slots of the range (a dictionary's has one more, for NULL).
    pub(super) fn slots(self) -> usize {
        match self {
            DenseKey::Dict(d) => d.len() + 1,
            DenseKey::Int { slots, .. } => slots,
        }
    }

    /// The slot of every row of `column`, or `None` for a value outside
    /// the key's range. Codes of the key's own dictionary are its slots;
    /// other strings are looked up in it.
    pub(super) fn slots_of(self, column: &Array<'_>) -> Option<Vec<u32>> {
        let valid = |i: usize| column.validity.as_ref().is_none_or(|v| v.get(i));
        match (self, &column.data) {
            (DenseKey::Dict(d), Data::Str(s)) => {
                let null = d.len() as u32;
                if let Strs::Coded { entries, codes } = s
                    && entries.dictionary().is_some_and(|e| std::ptr::eq(e, d))
                {
                    return Some(match &column.validity {
                        None => codes.clone(),
                        Some(v) => codes
                            .iter()
                            .enumerate()
                            .map(|(i, &c)| if v.get(i) { c } else { null })
                            .collect(),
                    });
                }
                (0..s.len())
                    .map(|i| {
                        if valid(i) {
                            d.code_of(s.get(i)).map(|c| c as u32)
                        } else {
                            Some(null)
                        }
                    })
                    .collect()
            }
            (DenseKey::Int { base, slots, .. }, Data::Int(v)) => v
                .iter()
                .enumerate()
                .map(|(i, &x)| {
                    let off = i128::from(x) - i128::from(base);
                    (valid(i) && off >= 0 && off < slots as i128).then_some(off as u32)
                })
                .collect(),
            _ => None,
        }
    }

    /// The key column of groups with slots `slots`.
    pub(super) fn column(self, slots: Vec<u32>) -> Array<'a> {
        match self {
            DenseKey::Dict(d) => {
                let null = d.len() as u32;
                let validity = slots
                    .contains(&null)
                    .then(|| Bitmap::from_fn(slots.len(), |g| slots[g] != null));
                let codes = slots
                    .into_iter()
                    .map(|s| if s == null { 0 } else { s })
                    .collect();
                Array {
                    dtype: DataType::Str,
                    data: Data::Str(Strs::Coded {
                        entries: Arc::new(Strs::Dict(d)),
                        codes,
                    }),
                    validity,
                }
            }
            DenseKey::Int { base, dtype, .. } => Array {
                dtype,
                data: Data::Int(
                    slots
                        .into_iter()
                        .map(|s| base.wrapping_add(i64::from(s)))
                        .collect(),
                ),
                validity: None,
            },
        }
    }
}

/// Merges partials whose one key is a [`DenseKey`] in every partial: each
/// partial is split by slot range into shards (more than one only for
/// `radix_min_groups` groups and two threads), and each shard, in
/// parallel, numbers its groups through a dense array of its slots.
/// Within a shard, partials meet in partition order.
///
/// # Errors
/// [`crate::Error::Cancelled`]; accumulator errors.
fn merge_by_code<'a>(
    parts: Vec<Partial<'a>>,
    key: DenseKey<'a>,
    opts: &ExecOptions,
    cancel: &CancelToken,
) -> Result<(Vec<Partial<'a>>, String)> {
    let slots = key.slots();
    let total: usize = parts.iter().map(|p| p.groups).sum();
    let threads = rayon::current_num_threads().max(1);
    // Enough shards that each merges at most `shard_slots` slots, whose
    // states stay near L2 (perf of shapes computed_key_mod, 2M slots in 8
    // shards: `Sum::merge` missed cache on a fifth of the query; shards of
    // 16k slots made the split's many small pieces cost more for 1M).
    let shards = if total >= opts.radix_min_groups && threads > 1 {
        (threads * 4)
            .max(slots.div_ceil(opts.shard_slots.max(1)))
            .min(MAX_BUCKETS)
            .min(slots)
    } else {
        1
    };
    let per_shard = slots.div_ceil(shards);
    let split: Vec<Vec<CodePiece>> = parts
        .into_par_iter()
        .map(|mut p| {
            cancel.check()?;
            let slot = key.slots_of(&p.keys[0]).ok_or_else(|| {
                crate::error::Error::Internal("a merge key outside its dense range".into())
            })?;
            if shards == 1 {
                return Ok(vec![CodePiece {
                    slots: slot,
                    accs: p.accs,
                }]);
            }
            let buckets = Buckets::new(
                slot.iter()
                    .map(|&s| (s as usize / per_shard) as u16)
                    .collect(),
                shards,
            );
            Ok(buckets
                .scatter(slot)
                .into_iter()
                .zip(split_accs(&mut p.accs, &buckets))
                .map(|(slots, accs)| CodePiece { slots, accs })
                .collect())
        })
        .collect::<Result<_>>()?;
    let chunks = per_bucket(split, shards, |p: &CodePiece| p.slots.is_empty())
        .into_par_iter()
        .enumerate()
        .filter(|(_, p)| !p.is_empty())
        .map(|(s, pieces)| {
            let lo = s * per_shard;
            merge_code_pieces(pieces, lo, per_shard.min(slots - lo), key, cancel)
        })
        .collect::<Result<Vec<_>>>()?;
    let what = match key {
        DenseKey::Dict(d) => format!(
            "the code of one table-wide dictionary of {} entries",
            d.len()
        ),
        DenseKey::Int { slots, .. } => format!("the key's offset in its range of {slots} values"),
    };
    let how = if shards == 1 {
        format!("{total} partial groups merged by {what}, no hashing")
    } else {
        format!(
            "{total} partial groups merged by {what}, {shards} slot ranges in parallel, no hashing"
        )
    };
    Ok((chunks, how))
}

/// Merges the pieces (in partition order) of the shard holding slots
/// `lo..lo + len` into one partial.
fn merge_code_pieces<'a>(
    pieces: Vec<CodePiece>,
    lo: usize,
    len: usize,
    key: DenseKey<'a>,
    cancel: &CancelToken,
) -> Result<Partial<'a>> {
    let mut group_of = vec![u32::MAX; len];
    let mut keys: Vec<u32> = Vec::new();
    let mut accs: Vec<Box<dyn Accumulator>> = Vec::new();
    for (n, mut piece) in pieces.into_iter().enumerate() {
        cancel.check()?;
        let into: Vec<u32> = piece
            .slots
            .iter()
            .map(|&s| {
                let g = &mut group_of[s as usize - lo];
                if *g == u32::MAX {
                    *g = keys.len() as u32;
                    keys.push(s);
                }
                *g
            })
            .collect();
        if n == 0 {
            // Distinct slots of the first piece, in order: its states as
            // they are (see `merge_into`).
            if into.iter().enumerate().all(|(i, &g)| i == g as usize) {
                accs = piece.accs;
                continue;
            }
            accs = piece.accs.iter_mut().map(|a| a.take(&[])).collect();
        }
        for (acc, other) in accs.iter_mut().zip(piece.accs) {
            acc.merge(other, &into, keys.len())?;
        }
    }
    Ok(Partial {
        groups: keys.len(),
        keys: vec![key.column(keys)],
        accs,
        repeats: false,
    })
}

/// Merges the partials of every partition (in partition order) into
/// chunks of groups with distinct keys across all chunks; also says how,
/// for EXPLAIN.
///
/// # Errors
/// [`crate::Error::Cancelled`]; accumulator errors.
pub fn merge_partials<'a>(
    mut parts: Vec<Partial<'a>>,
    nkeys: usize,
    opts: &ExecOptions,
    cancel: &CancelToken,
) -> Result<(Vec<Partial<'a>>, String)> {
    parts.retain(|p| p.groups > 0 || nkeys == 0);
    // A partial whose keys repeat is never final as it is.
    let repeats = parts.iter().any(|p| p.repeats);
    if parts.is_empty() || (parts.len() == 1 && !repeats) {
        return Ok((parts, "one partial, nothing to merge".into()));
    }
    if nkeys == 0 {
        // A global aggregate: one group per partial, folded in order.
        let mut parts = parts.into_iter();
        let mut first = parts.next().expect("two or more partials");
        for p in parts {
            for (acc, other) in first.accs.iter_mut().zip(p.accs) {
                acc.merge(other, &[0], 1)?;
            }
        }
        return Ok((
            vec![first],
            "one group per partial, folded in partition order".into(),
        ));
    }
    if nkeys == 1
        && let Some(entries) = shared_entries(&parts)
    {
        return merge_by_code(parts, DenseKey::Dict(entries), opts, cancel);
    }
    let total: usize = parts.iter().map(|p| p.groups).sum();
    if nkeys == 1 {
        let mut ranges: Vec<(i64, i64, usize)> = Vec::with_capacity(parts.len());
        for (i, p) in parts.iter().enumerate() {
            match int_range(p) {
                Some((lo, hi)) => ranges.push((lo, hi, i)),
                None => break,
            }
        }
        if ranges.len() == parts.len() {
            ranges.sort_unstable();
            if !repeats && let Some(touching) = touching_keys(&ranges) {
                // Disjoint key ranges but for keys shared at range ends:
                // every other group is already final.
                let n = parts.len();
                let shared = touching.len();
                for (into, from, key) in touching {
                    fold_shared_key(&mut parts, into, from, key)?;
                }
                let how = if shared == 0 {
                    format!("key ranges of the {n} partials are disjoint: concatenated, no hashing")
                } else {
                    format!(
                        "key ranges of the {n} partials are disjoint but for {shared} keys \
                         shared at range ends: those merged, the rest concatenated"
                    )
                };
                return Ok((parts, how));
            }
            // Overlapping ranges within a small span: dense arrays.
            let lo = ranges.iter().map(|r| r.0).min().unwrap_or(0);
            let hi = ranges.iter().map(|r| r.1).max().unwrap_or(0);
            let span = (i128::from(hi) - i128::from(lo) + 1) as u128;
            if span <= u128::from(opts.dense_int_max_slots) && span <= 2 * total as u128 {
                let key = DenseKey::Int {
                    base: lo,
                    slots: span as usize,
                    dtype: parts[0].keys[0].dtype,
                };
                return merge_by_code(parts, key, opts, cancel);
            }
        }
    }
    let threads = rayon::current_num_threads().max(1);
    let radix = total >= opts.radix_min_groups && threads > 1;
    // Every partial's key hashes, in parallel, with (for a radix split) the
    // hashes that fall in a sample of the hash space for the estimate of
    // the merged groups.
    let hashed: Vec<(Partial<'a>, Vec<u64>, Vec<u64>)> = parts
        .into_par_iter()
        .map(|p| {
            cancel.check()?;
            let hashes = hash_keys(&p.keys, p.groups);
            let sample = if radix {
                hash_sample(&hashes)
            } else {
                Vec::new()
            };
            Ok((p, hashes, sample))
        })
        .collect::<Result<_>>()?;
    let (buckets, per_bucket_groups) = if radix {
        let merged = estimate_groups(hashed.iter().map(|h| h.2.as_slice()));
        let buckets = (threads * 8)
            .max(merged.div_ceil(BUCKET_GROUPS))
            .next_power_of_two()
            .min(MAX_BUCKETS);
        (buckets, Some(merged / buckets))
    } else {
        (1, None)
    };
    // Split every partial by bucket, in parallel over partials.
    let split: Vec<Vec<Piece<'a>>> = hashed
        .into_par_iter()
        .map(|(mut p, hashes, _)| {
            cancel.check()?;
            if buckets == 1 {
                return Ok(vec![Piece {
                    keys: p.keys,
                    hashes,
                    accs: p.accs,
                }]);
            }
            let buckets = Buckets::new(
                hashes
                    .iter()
                    .map(|&h| bucket_of(h, buckets) as u16)
                    .collect(),
                buckets,
            );
            let mut keys: Vec<std::vec::IntoIter<Array<'a>>> = p
                .keys
                .iter()
                .map(|k| split_key(k, &buckets, opts.small_dictionary_entries).into_iter())
                .collect();
            Ok(buckets
                .scatter(hashes)
                .into_iter()
                .zip(split_accs(&mut p.accs, &buckets))
                .map(|(hashes, accs)| Piece {
                    keys: keys.iter_mut().filter_map(Iterator::next).collect(),
                    hashes,
                    accs,
                })
                .collect())
        })
        .collect::<Result<_>>()?;
    let chunks = per_bucket(split, buckets, |p: &Piece<'a>| p.hashes.is_empty())
        .into_par_iter()
        .filter(|p| !p.is_empty())
        .map(|pieces| merge_pieces(pieces, per_bucket_groups, cancel))
        .collect::<Result<Vec<_>>>()?;
    let how = if buckets == 1 {
        format!("{total} partial groups through one hash table")
    } else {
        format!(
            "{total} partial groups radix-partitioned by key hash into {buckets} buckets, merged in parallel"
        )
    };
    Ok((chunks, how))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bucket_keeps_the_hash_bits_its_table_uses() {
        // The keys of one bucket must still differ in hashbrown's tag (the
        // top 7 bits) and in the low bits that place them.
        let buckets = MAX_BUCKETS;
        let in_bucket: Vec<u64> = (0..2_000_000i64)
            .map(|k| combine(0, hash_i64(k)))
            .filter(|&h| bucket_of(h, buckets) == 3)
            .collect();
        assert!(in_bucket.len() > 1000, "{}", in_bucket.len());
        let tags: hashbrown::HashSet<u64> = in_bucket.iter().map(|h| h >> 57).collect();
        let low: hashbrown::HashSet<u64> = in_bucket.iter().map(|h| h & 0x3ff).collect();
        assert_eq!(tags.len(), 128);
        assert!(low.len() > 800, "{}", low.len());
    }

    #[test]
    fn string_keys_that_share_a_hash_stay_apart() {
        // Every key given one hash, so each probe compares keys: long keys
        // with one head and length, short ones a byte apart, the empty
        // string, one of exactly HEAD bytes; repeats within and across
        // pieces fold into the first group of their key.
        let long_a = "abcdefghijklmnopq1";
        let long_b = "abcdefghijklmnopq2";
        let exact = "abcdefghijklmnop";
        let pieces: Vec<Vec<&str>> = vec![
            vec![long_a, "short", exact, long_a, ""],
            vec!["shorT", long_b, "", long_a, exact, "short"],
        ];
        let pieces: Vec<Piece<'_>> = pieces
            .iter()
            .map(|keys| {
                let mut buf = StrBuf::with_capacity(keys.len());
                for k in keys {
                    buf.push(k);
                }
                Piece {
                    keys: vec![Array::new(DataType::Str, Data::Str(Strs::Owned(buf)))],
                    hashes: vec![42; keys.len()],
                    accs: Vec::new(),
                }
            })
            .collect();
        assert!(pieces.iter().all(|p| StrKeys::of(p).is_some()));
        let merged = merge_pieces(pieces, None, &CancelToken::default()).unwrap();
        let Data::Str(keys) = &merged.keys[0].data else {
            panic!("string keys expected");
        };
        let keys: Vec<&str> = (0..merged.groups).map(|g| keys.get(g)).collect();
        assert_eq!(keys, vec![long_a, "short", exact, "", "shorT", long_b]);
    }

    #[test]
    fn group_estimate_counts_distinct_hashes_across_partials() {
        // 1M distinct keys spread over 8 partials that overlap by half: the
        // estimate is within 5% of 1M, not near the 1.5M partial groups.
        let hashes: Vec<Vec<u64>> = (0..8u64)
            .map(|p| {
                (p * 125_000..p * 125_000 + 187_500)
                    .map(|k| combine(0, hash_i64(k as i64 % 1_000_000)))
                    .collect()
            })
            .collect();
        let samples: Vec<Vec<u64>> = hashes.iter().map(|h| hash_sample(h)).collect();
        let est = estimate_groups(samples.iter().map(Vec::as_slice));
        assert!((950_000..=1_050_000).contains(&est), "{est}");
        assert_eq!(estimate_groups(std::iter::empty()), 0);
    }
}
