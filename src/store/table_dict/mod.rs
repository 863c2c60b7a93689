//! Table-wide dictionaries: one sorted [`Dictionary`] for a string column
//! across all of a table's partitions.
//!
//! # Why
//! Each partition picks its codec from its own rows. A string column with
//! 100,000 distinct values over 10M rows holds about 48,000 of them in
//! each 65,536-row partition, so a partition dictionary would be nearly
//! as long as the partition and the column is FSST-compressed instead.
//! Across the table, though, each string repeats a hundred times. One
//! dictionary for the whole column stores each string once plus a code
//! per row, and a code means the same string in every partition: a GROUP
//! BY on the column merges the partitions' partial aggregates by code,
//! without decoding or hashing strings (`exec::aggregate::merge`). The
//! idea is the global dictionary of LocustDB's and ClickHouse's
//! `LowCardinality` columns, chosen here after the load
//! ([`table_dictionaries`]) or, where the loader can project the table's
//! rows, while it loads ([`TableDictBuilder`], `load.rs`), so that the
//! partitions never hold the larger codecs all at once.
//!
//! # Rule
//! Once every partition is encoded, a string column whose partitions are
//! all dictionary-, FSST- or packed-encoded gets a table-wide dictionary
//! when
//! 1. its distinct strings number at most one per [`MIN_ROWS_PER_ENTRY`]
//!    rows of the table and at most [`MAX_ENTRIES`], and
//! 2. the dictionary plus one code per row (u8, u16 or u32, by the
//!    dictionary's length) take at most half as many bytes again as the
//!    column's codecs do now (see [`worth`] for the bias).
//!
//! The distinct strings are gathered a wave of partitions at a time, and
//! the gathering stops once they pass the cap of rule 1, so a nearly
//! unique column costs a pass over about an eighth of its rows. A column
//! whose partitions already share one dictionary is left as it is.

use std::hash::BuildHasher;
use std::sync::Arc;

use hashbrown::HashTable;
use rayon::prelude::*;

use super::alp_codes::width_bytes;
use super::bitmap::Bitmap;
use super::codes::{Code, Codes};
use super::column::{Column, ColumnData, Dictionary};
use super::fsst::StringBatch;
use super::table::Partition;
use crate::store::with_codes;

mod load;

pub use load::TableDictBuilder;

/// Most entries a table-wide dictionary may have (4,194,304: codes fit
/// u32, and the gathering's hash table stays under 100 MB).
pub const MAX_ENTRIES: usize = 1 << 22;

/// Fewest rows per entry, on average, a table-wide dictionary must serve:
/// a column with more distinct strings than an eighth of its rows keeps
/// its partition codecs.
pub const MIN_ROWS_PER_ENTRY: usize = 8;

/// Rows decoded at a time from an FSST partition.
const DECODE_ROWS: usize = 4096;

/// Gives every string column that meets the rule of the module docs one
/// dictionary shared by all `partitions` (recoding them in parallel).
/// Row values, NULLs and zone maps are unchanged. Idempotent.
pub fn table_dictionaries(partitions: &mut [Partition]) {
    let width = partitions.first().map_or(0, |p| p.columns.len());
    for c in 0..width {
        if let Some(shared) = gather(partitions, c) {
            recode(partitions, c, shared);
        }
    }
}

/// The distinct strings of column `c`, and their hashes.
struct Distinct {
    strings: StringBatch,
    hashes: Vec<u64>,
    /// Index into `strings`, by hash.
    table: HashTable<u32>,
}

impl Distinct {
    fn new() -> Distinct {
        Distinct {
            strings: StringBatch::new(),
            hashes: Vec::new(),
            table: HashTable::new(),
        }
    }

    /// The index of `s` (hash `h`), if present.
    fn find(&self, h: u64, s: &[u8]) -> Option<u32> {
        self.table
            .find(h, |&k| same_bytes(self.strings.bytes(k as usize), s))
            .copied()
    }

    /// The index of `s` (hash `h`), added unless present.
    fn insert(&mut self, h: u64, s: &[u8]) -> u32 {
        if let Some(k) = self.find(h, s) {
            return k;
        }
        let k = self.strings.len() as u32;
        let hashes = &self.hashes;
        self.table.insert_unique(h, k, |&j| hashes[j as usize]);
        self.strings.push(s);
        self.hashes.push(h);
        k
    }

    fn len(&self) -> usize {
        self.strings.len()
    }

    /// Bytes of all the strings.
    fn text_len(&self) -> usize {
        self.strings.parts().1.last().map_or(0, |&e| e as usize)
    }
}

/// `a == b`, with no call for strings of up to 16 bytes (two overlapping
/// loads from each end): most of the gathering's compares are of short
/// keys that are equal, where `memcmp`'s call was a quarter of the time.
#[inline]
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    let at8 = |x: &[u8], i: usize| u64::from_le_bytes(x[i..i + 8].try_into().unwrap_or([0; 8]));
    let at4 = |x: &[u8], i: usize| u32::from_le_bytes(x[i..i + 4].try_into().unwrap_or([0; 4]));
    match n {
        8..=16 => at8(a, 0) == at8(b, 0) && at8(a, n - 8) == at8(b, n - 8),
        4..=7 => at4(a, 0) == at4(b, 0) && at4(a, n - 4) == at4(b, n - 4),
        _ => a == b,
    }
}

/// Whether a partition's codec of a string column may be recoded.
fn recodable(col: &Column) -> bool {
    matches!(
        col.data,
        ColumnData::Dict { .. } | ColumnData::Fsst(_) | ColumnData::Packed(_)
    )
}

/// Calls `f(row, bytes)` for every valid row of a packed or FSST column
/// (FSST decoded [`DECODE_ROWS`] rows at a time).
fn for_each_row(col: &Column, mut f: impl FnMut(usize, &[u8])) {
    let validity = col.validity.as_ref().map(|v| v.dense());
    let valid = |i: usize| validity.as_ref().is_none_or(|v| v.get(i));
    match &col.data {
        ColumnData::Packed(p) => (0..col.len)
            .filter(|&i| valid(i))
            .for_each(|i| f(i, p.get(i).as_bytes())),
        ColumnData::Fsst(fsst) => {
            let mut batch = StringBatch::new();
            for start in (0..col.len).step_by(DECODE_ROWS) {
                let end = (start + DECODE_ROWS).min(col.len);
                batch.clear();
                fsst.decode_range(start..end, &mut batch);
                for i in (start..end).filter(|&i| valid(i)) {
                    f(i, batch.bytes(i - start));
                }
            }
        }
        _ => {}
    }
}

/// Hash buckets the distinct strings are gathered in, so that the
/// partitions' strings are unioned in parallel, a bucket per task.
const BUCKETS: usize = 64;

/// The bucket of hash `h` (its top bits; hashbrown places entries by the
/// low bits and tags them with the top 7, so every bucket's table still
/// spreads).
fn bucket_of(h: u64) -> usize {
    (h >> 40) as usize % BUCKETS
}

/// The distinct strings of one partition's column (a dictionary's
/// entries, the other codecs' valid rows) and (but for a dictionary,
/// whose codes are the same) the index of each row's string
/// ([`NULL_ROW`] at NULL rows).
struct Found {
    distinct: Distinct,
    rows: Option<Vec<u32>>,
}

/// A NULL row's index.
const NULL_ROW: u32 = u32::MAX;

fn partition_distinct(col: &Column, hasher: &impl BuildHasher) -> Found {
    let mut distinct = Distinct::new();
    let rows = match &col.data {
        ColumnData::Dict { dict, .. } => {
            for s in dict.values() {
                distinct.insert(hasher.hash_one(s.as_bytes()), s.as_bytes());
            }
            None
        }
        _ => {
            distinct.table.reserve(col.len.min(1 << 16), |_| 0);
            let mut rows = vec![NULL_ROW; col.len];
            for_each_row(col, |i, s| rows[i] = distinct.insert(hasher.hash_one(s), s));
            Some(rows)
        }
    };
    Found { distinct, rows }
}

/// Each bucket's list of the indexes of `distinct`'s strings.
fn bucket_lists(distinct: &Distinct) -> Vec<Vec<u32>> {
    let mut lists = vec![Vec::new(); BUCKETS];
    for (k, &h) in distinct.hashes.iter().enumerate() {
        lists[bucket_of(h)].push(k as u32);
    }
    lists
}

/// Where a string was gathered: bucket in the top [`BUCKET_BITS`] bits,
/// index in the bucket below.
const BUCKET_BITS: u32 = 6;
const INDEX_BITS: u32 = 32 - BUCKET_BITS;

/// The bytes a table-wide dictionary of `entries` strings of `text` bytes
/// in all would take for `partitions`' column `c`: the dictionary (as
/// [`Dictionary::heap_bytes`] counts it), codes and validity.
fn shared_bytes(partitions: &[Partition], c: usize, entries: usize, text: usize) -> usize {
    let rows = partitions.iter().map(|p| p.rows).sum();
    let validity = partitions
        .iter()
        .map(|p| p.columns[c].validity.as_ref().map_or(0, |v| v.heap_bytes()))
        .sum();
    dictionary_bytes(entries, text, rows, validity)
}

/// The bytes of a table-wide dictionary of `entries` strings of `text`
/// bytes in all, coding `rows` rows whose NULL bitmaps take `validity`
/// bytes.
fn dictionary_bytes(entries: usize, text: usize, rows: usize, validity: usize) -> usize {
    text + 32 * entries + rows * width_bytes(entries.saturating_sub(1) as u64) + validity
}

/// Whether a table-wide dictionary of `shared` bytes may replace codecs
/// of `now` bytes: at most half as large again. Its codes are read in
/// place by every kernel and merge across partitions without hashing,
/// where FSST decodes; the same bias toward the faster codec as
/// `choose`'s rule, wider because the gain is wider.
fn worth(shared: usize, now: usize) -> bool {
    shared.saturating_mul(2) <= now.saturating_mul(3)
}

/// The table-wide dictionary of column `c` with the lookup of a string's
/// code, when the column meets the rule of the module docs.
fn gather(partitions: &[Partition], c: usize) -> Option<Shared> {
    if partitions.len() < 2
        || partitions
            .iter()
            .any(|p| p.columns.get(c).is_none_or(|col| !recodable(col)))
    {
        return None;
    }
    let first = &partitions[0].columns[c].data;
    let one_dict = partitions.iter().all(|p| match (&p.columns[c].data, first) {
        (ColumnData::Dict { dict, .. }, ColumnData::Dict { dict: d0, .. }) => Arc::ptr_eq(dict, d0),
        _ => false,
    });
    if one_dict {
        return None;
    }
    let rows: usize = partitions.iter().map(|p| p.rows).sum();
    let cap = (rows / MIN_ROWS_PER_ENTRY).min(MAX_ENTRIES);
    let now: usize = partitions.iter().map(|p| p.columns[c].heap_bytes()).sum();
    let hasher = hashbrown::DefaultHashBuilder::default();
    let mut buckets: Vec<Distinct> = (0..BUCKETS).map(|_| Distinct::new()).collect();
    // Per partition: where each row's string (or each dictionary entry)
    // was gathered.
    let mut pending: Vec<Pending> = Vec::with_capacity(partitions.len());
    let wave = 2 * rayon::current_num_threads().max(1);
    let mut seen_rows = 0;
    for (w, parts) in partitions.chunks(wave).enumerate() {
        let found: Vec<(Found, Vec<Vec<u32>>)> = parts
            .par_iter()
            .map(|p| {
                let f = partition_distinct(&p.columns[c], &hasher);
                let lists = bucket_lists(&f.distinct);
                (f, lists)
            })
            .collect();
        // Each bucket unions its share of every partition's strings.
        let placed: Vec<Vec<Vec<u32>>> = buckets
            .par_iter_mut()
            .enumerate()
            .map(|(b, into)| {
                found
                    .iter()
                    .map(|(f, lists)| {
                        lists[b]
                            .iter()
                            .map(|&k| {
                                let d = &f.distinct;
                                into.insert(d.hashes[k as usize], d.strings.bytes(k as usize))
                            })
                            .collect()
                    })
                    .collect()
            })
            .collect();
        let entries: usize = buckets.iter().map(Distinct::len).sum();
        if entries > cap {
            return None;
        }
        let base = pending.len();
        pending.extend(
            found
                .into_par_iter()
                .enumerate()
                .map(|(i, (f, lists))| {
                    let mut at = vec![0u32; f.distinct.len()];
                    for (b, list) in lists.iter().enumerate() {
                        for (&k, &idx) in list.iter().zip(&placed[b][i]) {
                            at[k as usize] = ((b as u32) << INDEX_BITS) | idx;
                        }
                    }
                    match f.rows {
                        None => Pending::Entries(at),
                        Some(rows) => Pending::Rows(
                            rows.into_iter()
                                .map(|k| if k == NULL_ROW { NULL_ROW } else { at[k as usize] })
                                .collect(),
                        ),
                    }
                })
                .collect::<Vec<_>>(),
        );
        debug_assert_eq!(pending.len(), base + parts.len());
        seen_rows += parts.iter().map(|p| p.rows).sum::<usize>();
        if w == 0 && seen_rows < rows {
            // Projected from the first wave (uniform draws, as the string
            // encoders project a partition's distinct count): a column
            // that will pass the cap, or not pay, stops here.
            let projected = super::column::projected_distinct(seen_rows, entries, rows);
            let mean_len = text_bytes(&buckets) as f64 / entries.max(1) as f64;
            let projected_text = (projected * mean_len) as usize;
            if projected > cap as f64
                || !worth(
                    shared_bytes(partitions, c, projected as usize, projected_text),
                    now,
                )
            {
                return None;
            }
        }
    }
    let entries: usize = buckets.iter().map(Distinct::len).sum();
    if !worth(shared_bytes(partitions, c, entries, text_bytes(&buckets)), now) {
        return None;
    }
    // Every string as (bucket, index), sorted by bytes: the codes.
    let mut order: Vec<(u32, u32)> = buckets
        .iter()
        .enumerate()
        .flat_map(|(b, d)| (0..d.len() as u32).map(move |k| (b as u32, k)))
        .collect();
    let bytes = |&(b, k): &(u32, u32)| buckets[b as usize].strings.bytes(k as usize);
    order.par_sort_unstable_by(|x, y| bytes(x).cmp(bytes(y)));
    let mut code_of: Vec<Vec<u32>> = buckets.iter().map(|d| vec![0; d.len()]).collect();
    for (code, &(b, k)) in order.iter().enumerate() {
        code_of[b as usize][k as usize] = code as u32;
    }
    let dict = Arc::new(Dictionary::from_distinct(
        order
            .iter()
            .map(|&(b, k)| Arc::<str>::from(buckets[b as usize].strings.get(k as usize)))
            .collect(),
    ));
    Some(Shared {
        dict,
        code_of,
        pending,
    })
}

/// Bytes of every gathered string.
fn text_bytes(buckets: &[Distinct]) -> usize {
    buckets.iter().map(Distinct::text_len).sum()
}

/// `codes` mapped through `to` (code `x` becomes `to[x]`, 0 past its
/// end), 0 at NULL rows, packed for codes up to `max`.
fn remap_codes(codes: &Codes, to: &[u32], validity: Option<&Bitmap>, max: u64) -> Codes {
    let validity = validity.map(|v| v.dense());
    with_codes!(codes, v => Codes::pack(
        v.iter().enumerate().map(|(i, &x)| {
            if validity.as_ref().is_some_and(|b| !b.get(i)) {
                0
            } else {
                u64::from(to.get(x.to_usize()).copied().unwrap_or(0))
            }
        }),
        max,
    ))
}

/// Codes from each row's index into a partition's distinct strings
/// ([`NULL_ROW`] at NULL rows, which take 0), mapped through `to`, packed
/// for codes up to `max`.
fn row_codes(rows: &[u32], to: &[u32], max: u64) -> Codes {
    Codes::pack(
        rows.iter()
            .map(|&k| if k == NULL_ROW { 0 } else { u64::from(to[k as usize]) }),
        max,
    )
}

/// Where a partition's strings were gathered (see [`BUCKET_BITS`]).
enum Pending {
    /// Per dictionary entry.
    Entries(Vec<u32>),
    /// Per row ([`NULL_ROW`] at NULL rows).
    Rows(Vec<u32>),
}

/// A table-wide dictionary and every partition's codes into it, to be.
struct Shared {
    dict: Arc<Dictionary>,
    /// Code of each gathered string, by bucket and index.
    code_of: Vec<Vec<u32>>,
    /// Per partition.
    pending: Vec<Pending>,
}

/// Recodes column `c` of every partition against `shared` (NULL rows take
/// code 0), in parallel over partitions. Codes of u32 are written over the
/// partition's list of where its rows were gathered, which is as long.
fn recode(partitions: &mut [Partition], c: usize, shared: Shared) {
    let Shared {
        dict,
        code_of,
        pending,
    } = shared;
    let max = dict.len().saturating_sub(1) as u64;
    let code = |at: u32| -> u32 {
        if at == NULL_ROW {
            return 0;
        }
        code_of[(at >> INDEX_BITS) as usize][(at & ((1 << INDEX_BITS) - 1)) as usize]
    };
    partitions
        .par_iter_mut()
        .zip(pending)
        .for_each(|(p, pending)| {
            let col = &mut p.columns[c];
            let codes = match (&col.data, pending) {
                (ColumnData::Dict { codes, .. }, Pending::Entries(at)) => {
                    let remap: Vec<u32> = at.into_iter().map(code).collect();
                    remap_codes(codes, &remap, col.validity.as_ref(), max)
                }
                // A partition's strings are gathered per entry only when
                // it has a dictionary, so this is per row.
                (_, Pending::Rows(mut at) | Pending::Entries(mut at)) => {
                    if max > u64::from(u16::MAX) {
                        at.iter_mut().for_each(|a| *a = code(*a));
                        Codes::U32(at)
                    } else {
                        Codes::pack(at.into_iter().map(|a| u64::from(code(a))), max)
                    }
                }
            };
            col.data = ColumnData::Dict {
                dict: Arc::clone(&dict),
                codes,
            };
        });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Bitmap;
    use crate::types::Value;

    fn strings_column(values: &[Option<String>]) -> Column {
        let strs: Vec<&str> = values.iter().map(|v| v.as_deref().unwrap_or("")).collect();
        let validity = values
            .iter()
            .any(Option::is_none)
            .then(|| Bitmap::from_fn(values.len(), |i| values[i].is_some()));
        Column::encode_strings_plain(&strs, validity)
    }

    fn decode(p: &Partition, c: usize) -> Vec<Value> {
        let col = &p.columns[c];
        (0..col.len).map(|i| col.value(i)).collect()
    }

    #[test]
    fn repeated_strings_share_one_dictionary_and_keep_their_values() {
        // 40 partitions of 300 rows over 600 strings: each partition holds
        // most of its rows' strings once, the table each string 20 times.
        let partitions: Vec<Partition> = (0..40)
            .map(|p| {
                let values: Vec<Option<String>> = (0..300)
                    .map(|i| {
                        let k = (p * 7919 + i * 104_729) % 600;
                        (k % 50 != 3).then(|| format!("value number {k:04} of the column"))
                    })
                    .collect();
                Partition {
                    rows: 300,
                    first_row: 0,
                    columns: vec![strings_column(&values)],
                }
            })
            .collect();
        let mut shared = partitions.clone();
        table_dictionaries(&mut shared);
        let dicts: Vec<Arc<Dictionary>> = shared
            .iter()
            .map(|p| match &p.columns[0].data {
                ColumnData::Dict { dict, .. } => Arc::clone(dict),
                other => panic!("{other:?}"),
            })
            .collect();
        assert!(dicts.iter().all(|d| Arc::ptr_eq(d, &dicts[0])));
        assert_eq!(dicts[0].len(), 600 - 12);
        for (before, after) in partitions.iter().zip(&shared) {
            assert_eq!(decode(before, 0), decode(after, 0));
            assert_eq!(before.columns[0].validity, after.columns[0].validity);
            assert_eq!(before.columns[0].zone, after.columns[0].zone);
        }
        let bytes = |ps: &[Partition]| ps.iter().map(|p| p.columns[0].heap_bytes()).sum::<usize>();
        assert!(bytes(&shared) < bytes(&partitions));
        let again = shared.clone();
        table_dictionaries(&mut shared);
        assert_eq!(again, shared);
    }

    #[test]
    fn nearly_unique_strings_keep_their_partition_codecs() {
        // 2,000 distinct strings in 4,000 rows: more than one per eight rows.
        let partitions: Vec<Partition> = (0..4)
            .map(|p| {
                let values: Vec<Option<String>> = (0..1000)
                    .map(|i| Some(format!("s{}", (p * 1000 + i) % 2000)))
                    .collect();
                Partition {
                    rows: 1000,
                    first_row: 0,
                    columns: vec![strings_column(&values)],
                }
            })
            .collect();
        let mut after = partitions.clone();
        table_dictionaries(&mut after);
        assert_eq!(after, partitions);
    }
}
