//! Table-wide dictionaries built while a table loads.
//!
//! # Why
//! [`super::table_dictionaries`] recodes a loaded table: until it runs,
//! every partition holds the column in its own codec, FSST or a partition
//! dictionary, which for a column of 10,000 to a million distinct strings
//! is up to twice the bytes of the table-wide codes (shapes' `s10k`: 80
//! MiB against 20). The load's peak then stands that much above the final
//! table, plus the recoding's gathering. Here each partition's column is
//! recoded against the table's growing dictionary as soon as the
//! partition is encoded, so the load holds about the final size all
//! along.
//!
//! # How
//! Each string column has an interner of the table's distinct strings in
//! 64 hash buckets, each behind its own lock. Once a worker has encoded a
//! partition, it gathers the partition's distinct strings of each open
//! string column (as the recoding after the load does) and looks each up
//! in the interner, which gives new strings the next id.
//! - The column's first [`MEASURED`] partitions keep their codecs: they
//!   measure what the codecs take per row, for the rule below.
//! - Later ones have their codec replaced by the ids of their rows, packed
//!   as narrow as the ids so far allow; and once a column is measured,
//!   the loader skips its codecs and recodes the strings it parsed
//!   straight into ids ([`TableDictBuilder::recode_strings`]).
//!
//! Ids are in the order strings were first seen;
//! [`TableDictBuilder::finish`] sorts the strings into the dictionary and
//! recodes every partition into codes of the final width: by id, or by
//! looking its strings up for those that kept their codecs.
//!
//! # Rule
//! The same as after the load (see the parent module): at most one
//! distinct string per [`MIN_ROWS_PER_ENTRY`] rows and at most
//! [`MAX_ENTRIES`], and the dictionary with its codes no more than half
//! as large again as the codecs the partitions chose. While loading, the
//! table's rows are projected from the input's bytes, and the distinct
//! strings from the rows seen so far ([`projected_distinct`]). A column is
//! closed once measured if it is projected to fail the rule (a nearly
//! unique column costs its first [`MEASURED`] partitions, and its interner
//! is dropped at once), and later if it is projected to fail it, or its
//! projection grows more than [`DRIFT`] past the first.
//! [`TableDictBuilder::finish`] applies the rule to the whole table (the
//! codecs of partitions recoded straight from their strings counted at
//! the measured partitions' bytes per row). A column that
//! fails it, or is closed, or has a partition that cannot be recoded (a
//! codec such as hex points, or a span in which the column was not text
//! and which was encoded again), gets its recoded partitions back in the
//! codec they would have had, as [`Column::encode_string_ids`] chooses,
//! and is left to the recoding after the load.

use std::hash::BuildHasher;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use hashbrown::{DefaultHashBuilder, HashMap};
use rayon::prelude::*;

use super::{
    BUCKETS, Distinct, MAX_ENTRIES, MIN_ROWS_PER_ENTRY, bucket_lists, bucket_of,
    dictionary_bytes, partition_distinct, recodable, remap_codes, row_codes, shared_bytes, worth,
};
use crate::store::codes::Codes;
use crate::store::Bitmap;
use crate::store::column::{
    Column, ColumnData, Dictionary, projected_distinct, string_ids_zone,
};
use crate::store::table::Partition;
use crate::types::DataType;

/// Builds table-wide dictionaries for the string columns of a table while
/// its partitions are encoded, from any number of threads. See the module
/// docs.
pub struct TableDictBuilder {
    hasher: DefaultHashBuilder,
    /// Bytes of the whole input (as text), from which the table's rows
    /// are projected; an estimate for compressed input.
    input_bytes: AtomicUsize,
    columns: Vec<Stream>,
}

/// What one partition's column brings to its column's [`Stats`].
struct Measure {
    rows: usize,
    input_bytes: usize,
    /// Its codec's bytes; `None` when recoded straight from its strings.
    codec_bytes: Option<usize>,
    validity_bytes: usize,
}

/// One column's interner and what it has taken in.
struct Stream {
    /// Still taking partitions in.
    open: AtomicBool,
    /// The interner, in hash buckets (as the recoding after the load
    /// gathers): a partition's strings are looked up a bucket at a time,
    /// in a table small enough to stay in cache, and two workers lock
    /// different buckets.
    buckets: Vec<Mutex<Bucket>>,
    /// Strings interned, the next one's id.
    entries: AtomicUsize,
    stats: Mutex<Stats>,
    /// The dictionary a recoded partition points at until
    /// [`TableDictBuilder::finish`]: empty, and this column's own, so that
    /// a recoded partition is known by it.
    pending: Arc<Dictionary>,
}

/// The strings of one bucket and their ids.
struct Bucket {
    distinct: Distinct,
    ids: Vec<u32>,
}

/// What a column has taken in.
#[derive(Default)]
struct Stats {
    /// Rows and input bytes of the partitions taken in.
    rows: usize,
    input_bytes: usize,
    /// Bytes of the codecs those partitions had, and of their NULL bitmaps.
    codec_bytes: usize,
    validity_bytes: usize,
    /// Strings interned by those partitions, and their bytes.
    entries: usize,
    text_bytes: usize,
    /// Partitions recoded into ids.
    replaced: usize,
    /// The distinct strings projected once the column was measured.
    first_projection: f64,
    /// Partitions taken in after being encoded, their rows and their
    /// codecs' bytes: what the codecs of a partition recoded straight from
    /// its strings are taken to cost per row.
    measured: usize,
    measured_rows: usize,
    measured_bytes: usize,
}

/// Partitions of a column encoded with their own codecs, to measure what
/// those take, before the others are recoded straight from their strings
/// ([`TableDictBuilder::recode_strings`]).
const MEASURED: usize = 4;

/// How far a column's projected distinct strings may grow past the
/// projection made once it was measured. Projections assume uniform
/// draws; a column whose new strings keep coming (titles, URLs) outgrows
/// them. hits' `Title` at 10M rows (the benchmark's generator) projects
/// 437,000 strings from its first 262,144 rows, 482,000 from one more
/// partition, and passes the cap of 1.25 million only after 3.7M rows,
/// when giving its recoded partitions back their codecs cost a sixth of
/// the load's time. Uniform strings (shapes' `s1m`) project within 1%
/// all along.
const DRIFT: f64 = 1.05;

impl Stream {
    fn new() -> Stream {
        Stream {
            open: AtomicBool::new(true),
            buckets: (0..BUCKETS)
                .map(|_| {
                    Mutex::new(Bucket {
                        distinct: Distinct::new(),
                        ids: Vec::new(),
                    })
                })
                .collect(),
            entries: AtomicUsize::new(0),
            stats: Mutex::new(Stats::default()),
            pending: Arc::new(Dictionary::from_distinct(Vec::new())),
        }
    }

    fn is_open(&self) -> bool {
        self.open.load(Ordering::Relaxed)
    }

    fn close(&self) {
        self.open.store(false, Ordering::Relaxed);
    }

    /// Drops the interned strings of a closed column.
    fn clear(&self) {
        for bucket in &self.buckets {
            if let Ok(mut b) = bucket.lock() {
                *b = Bucket {
                    distinct: Distinct::new(),
                    ids: Vec::new(),
                };
            }
        }
    }

    /// The ids of `local`'s strings, new ones interned, starting at bucket
    /// `first` (workers start apart), with the bytes and the number of the
    /// new ones; `None` once the column has more than [`MAX_ENTRIES`]
    /// strings.
    fn intern(&self, local: &Distinct, first: usize) -> Option<(Vec<u32>, usize, usize)> {
        let lists = bucket_lists(local);
        let mut ids = vec![0u32; local.len()];
        let (mut text, mut added) = (0, 0);
        let mut full = false;
        for b in (0..BUCKETS).map(|b| (b + first) % BUCKETS) {
            if lists[b].is_empty() {
                continue;
            }
            let mut bucket = self.buckets[b].lock().ok()?;
            let Bucket { distinct, ids: by } = &mut *bucket;
            for &k in &lists[b] {
                let (h, s) = (local.hashes[k as usize], local.strings.bytes(k as usize));
                let before = distinct.len();
                let at = distinct.insert(h, s) as usize;
                if at == before {
                    // Every string interned gets its id, past the cap too:
                    // another worker may look it up before the column is
                    // seen closed.
                    let id = self.entries.fetch_add(1, Ordering::Relaxed);
                    full |= id >= MAX_ENTRIES;
                    by.push(id as u32);
                    text += s.len();
                    added += 1;
                }
                ids[k as usize] = by[at];
            }
        }
        (!full).then_some((ids, text, added))
    }

    /// Every interned string as (bucket, index), by id.
    fn by_id(buckets: &[Bucket], entries: usize) -> Vec<(u32, u32)> {
        let mut at = vec![(0, 0); entries];
        for (b, bucket) in buckets.iter().enumerate() {
            for (k, &id) in bucket.ids.iter().enumerate() {
                at[id as usize] = (b as u32, k as u32);
            }
        }
        at
    }
}

impl TableDictBuilder {
    /// A builder for a table of `width` columns read from an input of
    /// `input_bytes` bytes of text (more than 0; for compressed input, an
    /// estimate that [`TableDictBuilder::set_input_bytes`] refines).
    pub fn new(width: usize, input_bytes: usize) -> TableDictBuilder {
        TableDictBuilder {
            hasher: DefaultHashBuilder::default(),
            input_bytes: AtomicUsize::new(input_bytes),
            columns: (0..width).map(|_| Stream::new()).collect(),
        }
    }

    /// Sets the estimate of the whole input's bytes of text: for gzip, the
    /// file's size times the text inflated so far per compressed byte
    /// read.
    pub fn set_input_bytes(&self, bytes: usize) {
        self.input_bytes.store(bytes.max(1), Ordering::Relaxed);
    }

    /// Takes in a freshly encoded partition: `columns` of `rows` rows, read
    /// from `input_bytes` bytes of the input, the `index`th partition read.
    /// The strings of each string column still open are interned; past
    /// the column's first [`MEASURED`] partitions its codec is replaced by
    /// their ids, unless the column closes (see the module docs). The
    /// partition's values are not readable again until
    /// [`TableDictBuilder::finish`].
    pub fn absorb(&self, columns: &mut [Column], rows: usize, input_bytes: usize, index: usize) {
        for (col, stream) in columns.iter_mut().zip(&self.columns) {
            if col.dtype == DataType::Str && stream.is_open() {
                self.absorb_column(col, rows, input_bytes, index, stream);
            }
        }
    }

    fn absorb_column(
        &self,
        col: &mut Column,
        rows: usize,
        input_bytes: usize,
        index: usize,
        stream: &Stream,
    ) {
        if matches!(&col.data, ColumnData::Dict { dict, .. } if Arc::ptr_eq(dict, &stream.pending))
        {
            // Recoded straight from its strings.
            return;
        }
        if !recodable(col) {
            stream.close();
            return;
        }
        let found = partition_distinct(col, &self.hasher);
        let codec_bytes = col.heap_bytes();
        let validity_bytes = col.validity.as_ref().map_or(0, |v| v.heap_bytes());
        let Some(ids) = self.take_in(
            stream,
            &found.distinct,
            Measure {
                rows,
                input_bytes,
                codec_bytes: Some(codec_bytes),
                validity_bytes,
            },
            index,
        ) else {
            return;
        };
        let max = ids.iter().copied().max().map_or(0, u64::from);
        let codes = match (&col.data, found.rows) {
            (ColumnData::Dict { codes, .. }, _) => {
                remap_codes(codes, &ids, col.validity.as_ref(), max)
            }
            (_, Some(at)) => row_codes(&at, &ids, max),
            // Every codec but a dictionary's lists its rows.
            (_, None) => return,
        };
        col.data = ColumnData::Dict {
            dict: Arc::clone(&stream.pending),
            codes,
        };
    }

    /// Interns the strings of one partition's column (`local`, the
    /// partition measured by `m`) into `stream` and judges the column
    /// again: the ids of `local`'s strings while the column stays open,
    /// else `None`.
    fn take_in(&self, stream: &Stream, local: &Distinct, m: Measure, index: usize) -> Option<Vec<u32>> {
        let Some((ids, text, added)) = stream.intern(local, index * 7 % BUCKETS) else {
            stream.close();
            return None;
        };
        let Ok(mut stats) = stream.stats.lock() else {
            stream.close();
            return None;
        };
        let judged = stats.measured >= MEASURED;
        stats.rows += m.rows;
        stats.input_bytes += m.input_bytes;
        stats.codec_bytes += match m.codec_bytes {
            Some(bytes) => {
                stats.measured += 1;
                stats.measured_rows += m.rows;
                stats.measured_bytes += bytes;
                bytes
            }
            None => {
                (stats.measured_bytes as f64 / stats.measured_rows.max(1) as f64 * m.rows as f64)
                    as usize
            }
        };
        stats.validity_bytes += m.validity_bytes;
        stats.text_bytes += text;
        // Counted here, not from the ids given out: another worker may have
        // interned a partition whose rows it has not counted yet, and one
        // partition of nearly unique strings too many makes the projection
        // of a column like shapes' `s1m` five times too large.
        stats.entries += added;
        let entries = stats.entries;
        if judged || stats.measured >= MEASURED {
            match self.projected(&stats, entries) {
                Some(projected) if !judged => stats.first_projection = projected,
                Some(projected) if projected <= stats.first_projection * DRIFT => {}
                // Failing the rule, or outgrowing the first projection.
                _ => {
                    // Left to the recoding after the load, which gathers
                    // one column at a time.
                    stream.close();
                    if stats.replaced == 0 {
                        stream.clear();
                    }
                }
            }
        }
        // The partitions measured keep their codecs until the end.
        let replace = judged && stream.is_open();
        stats.replaced += usize::from(replace);
        drop(stats);
        replace.then_some(ids)
    }

    /// Whether partitions of column `c` are now recoded straight from
    /// their strings ([`TableDictBuilder::recode_strings`]) instead of
    /// being encoded first: the column is open, and its first
    /// [`MEASURED`] partitions have been encoded to measure what its
    /// codecs take.
    pub fn direct(&self, c: usize) -> bool {
        self.columns.get(c).is_some_and(|s| {
            s.is_open() && s.stats.lock().is_ok_and(|st| st.measured >= MEASURED)
        })
    }

    /// Column `c` of a partition (the `index`th read, from `input_bytes`
    /// bytes of the input), recoded straight from its strings: row `i`
    /// holds `distinct[ids[i]]` where `validity` (if any) says it is
    /// valid, and every entry of `distinct` is some valid row's value (as
    /// [`Column::encode_string_ids`] takes them). `None` when the column
    /// closes, or has no valid row: the caller encodes it as usual.
    pub fn recode_strings(
        &self,
        c: usize,
        distinct: &[&str],
        ids: &[u32],
        validity: Option<Bitmap>,
        input_bytes: usize,
        index: usize,
    ) -> Option<Column> {
        let mut local = Distinct::new();
        for s in distinct {
            local.insert(self.hasher.hash_one(s.as_bytes()), s.as_bytes());
        }
        self.recode_local(c, &local, ids.to_vec(), validity, input_bytes, index)
    }

    /// As [`TableDictBuilder::recode_strings`], from one string per row
    /// (any at NULL rows).
    pub fn recode_values(
        &self,
        c: usize,
        values: &[&str],
        validity: Option<Bitmap>,
        input_bytes: usize,
        index: usize,
    ) -> Option<Column> {
        let valid = |i: usize| validity.as_ref().is_none_or(|v| v.get(i));
        let mut local = Distinct::new();
        let ids = values
            .iter()
            .enumerate()
            .map(|(i, s)| {
                if valid(i) {
                    local.insert(self.hasher.hash_one(s.as_bytes()), s.as_bytes())
                } else {
                    0
                }
            })
            .collect();
        self.recode_local(c, &local, ids, validity, input_bytes, index)
    }

    /// Column `c` of a partition whose row `i` holds `local`'s string
    /// `ids[i]`, recoded (see [`TableDictBuilder::recode_strings`]).
    fn recode_local(
        &self,
        c: usize,
        local: &Distinct,
        ids: Vec<u32>,
        validity: Option<Bitmap>,
        input_bytes: usize,
        index: usize,
    ) -> Option<Column> {
        let stream = self.columns.get(c)?;
        if local.len() == 0 || !stream.is_open() {
            return None;
        }
        // As the encoders keep it: none without a NULL, else one bit a row.
        let validity = validity
            .filter(|v| v.count_ones() < v.len())
            .map(|v| v.dense().into_owned());
        let m = Measure {
            rows: ids.len(),
            input_bytes,
            codec_bytes: None,
            validity_bytes: validity.as_ref().map_or(0, |v| v.heap_bytes()),
        };
        let global = self.take_in(stream, local, m, index)?;
        let max = global.iter().copied().max().map_or(0, u64::from);
        let valid = |i: usize| validity.as_ref().is_none_or(|v| v.get(i));
        let codes = Codes::pack(
            ids.iter().enumerate().map(|(i, &id)| {
                if valid(i) {
                    u64::from(global.get(id as usize).copied().unwrap_or(0))
                } else {
                    0
                }
            }),
            max,
        );
        let distinct: Vec<&str> = (0..local.len()).map(|k| local.strings.get(k)).collect();
        let zone = string_ids_zone(&distinct, &ids, validity.as_ref());
        Some(Column {
            dtype: DataType::Str,
            len: ids.len(),
            data: ColumnData::Dict {
                dict: Arc::clone(&stream.pending),
                codes,
            },
            validity,
            zone,
        })
    }

    /// The distinct strings projected for the whole table from a column
    /// of `entries` strings having taken in `s`, when that meets the rule
    /// (see the module docs).
    fn projected(&self, s: &Stats, entries: usize) -> Option<f64> {
        if entries > MAX_ENTRIES || s.input_bytes == 0 {
            return None;
        }
        let per_row = s.input_bytes as f64 / s.rows.max(1) as f64;
        let input_bytes = self.input_bytes.load(Ordering::Relaxed);
        let rows = ((input_bytes as f64 / per_row) as usize).max(s.rows);
        let projected = projected_distinct(s.rows, entries, rows);
        let cap = (rows / MIN_ROWS_PER_ENTRY).min(MAX_ENTRIES);
        if projected > cap as f64 {
            return None;
        }
        let scale = rows as f64 / s.rows.max(1) as f64;
        let text = s.text_bytes as f64 / entries.max(1) as f64 * projected;
        let shared = dictionary_bytes(
            projected as usize,
            text as usize,
            rows,
            (s.validity_bytes as f64 * scale) as usize,
        );
        worth(shared, (s.codec_bytes as f64 * scale) as usize).then_some(projected)
    }

    /// Ends the load's recoding: each column whose partitions are all
    /// recoded and which meets the rule exactly gets its sorted
    /// dictionary and codes; any other gets its recoded partitions back in
    /// their own codecs. `partitions` are the table's, every one taken in
    /// by [`TableDictBuilder::absorb`] or encoded otherwise (a span
    /// encoded again).
    pub fn finish(self, partitions: &mut [Partition]) {
        for (c, stream) in self.columns.into_iter().enumerate() {
            let recoded = |p: &Partition| match p.columns.get(c).map(|col| &col.data) {
                Some(ColumnData::Dict { dict, .. }) => Arc::ptr_eq(dict, &stream.pending),
                _ => false,
            };
            let open = stream.is_open();
            if !open && !partitions.iter().any(recoded) {
                continue;
            }
            let entries = stream.entries.into_inner();
            let (Ok(stats), Ok(buckets)) = (
                stream.stats.into_inner(),
                stream
                    .buckets
                    .into_iter()
                    .map(Mutex::into_inner)
                    .collect::<Result<Vec<Bucket>, _>>(),
            ) else {
                // A worker panicked: the load fails anyway.
                continue;
            };
            let rows: usize = partitions.iter().map(|p| p.rows).sum();
            let keep = open
                && entries <= (rows / MIN_ROWS_PER_ENTRY).min(MAX_ENTRIES)
                && worth(
                    shared_bytes(partitions, c, entries, stats.text_bytes),
                    stats.codec_bytes,
                );
            let kept = keep && commit(partitions, c, &buckets, entries, &stream.pending, &self.hasher);
            if !kept {
                restore(partitions, c, &buckets, entries, &stream.pending);
            }
        }
    }
}

/// Sorts the strings of `buckets` into column `c`'s dictionary and
/// recodes every partition into its codes (NULL rows take code 0): the
/// ids of those recoded while loading (pointing at `pending`), the
/// strings of the others, looked up. False, and nothing changed, when a
/// partition's column cannot be recoded or holds a string not interned
/// (one encoded again after the load read it).
fn commit(
    partitions: &mut [Partition],
    c: usize,
    buckets: &[Bucket],
    entries: usize,
    pending: &Arc<Dictionary>,
    hasher: &DefaultHashBuilder,
) -> bool {
    let mut order = Stream::by_id(buckets, entries);
    let bytes = |&(b, k): &(u32, u32)| buckets[b as usize].distinct.strings.bytes(k as usize);
    order.par_sort_unstable_by(|x, y| bytes(x).cmp(bytes(y)));
    let mut rank = vec![0u32; entries];
    for (code, &(b, k)) in order.iter().enumerate() {
        rank[buckets[b as usize].ids[k as usize] as usize] = code as u32;
    }
    let max = entries.saturating_sub(1) as u64;
    // Codes of the partitions not recoded yet, found before anything changes.
    let looked_up: Vec<Option<Option<Codes>>> = partitions
        .par_iter()
        .map(|p| {
            let col = &p.columns[c];
            match &col.data {
                ColumnData::Dict { dict, .. } if Arc::ptr_eq(dict, pending) => Some(None),
                _ if col.dtype == DataType::Str && recodable(col) => {
                    look_up(col, buckets, &rank, max, hasher).map(Some)
                }
                _ => None,
            }
        })
        .collect();
    if looked_up.iter().any(Option::is_none) {
        return false;
    }
    let dict = Arc::new(Dictionary::from_distinct(
        order
            .iter()
            .map(|&(b, k)| Arc::<str>::from(buckets[b as usize].distinct.strings.get(k as usize)))
            .collect(),
    ));
    drop(order);
    partitions
        .par_iter_mut()
        .zip(looked_up)
        .for_each(|(p, found)| {
            let col = &mut p.columns[c];
            let codes = match (found.flatten(), &col.data) {
                (Some(codes), _) => codes,
                (None, ColumnData::Dict { codes, .. }) => {
                    remap_codes(codes, &rank, col.validity.as_ref(), max)
                }
                (None, _) => return,
            };
            col.data = ColumnData::Dict {
                dict: Arc::clone(&dict),
                codes,
            };
        });
    true
}

/// The codes into the sorted dictionary (`rank` of each id) of a
/// partition's column that kept its own codec; `None` if one of its
/// strings was not interned.
fn look_up(
    col: &Column,
    buckets: &[Bucket],
    rank: &[u32],
    max: u64,
    hasher: &DefaultHashBuilder,
) -> Option<Codes> {
    let found = partition_distinct(col, hasher);
    let local = &found.distinct;
    let codes: Vec<u32> = (0..local.len())
        .map(|k| {
            let h = local.hashes[k];
            let bucket = &buckets[bucket_of(h)];
            let at = bucket.distinct.find(h, local.strings.bytes(k))?;
            rank.get(bucket.ids[at as usize] as usize).copied()
        })
        .collect::<Option<_>>()?;
    Some(match (&col.data, found.rows) {
        (ColumnData::Dict { codes: own, .. }, _) => {
            remap_codes(own, &codes, col.validity.as_ref(), max)
        }
        (_, Some(at)) => row_codes(&at, &codes, max),
        (_, None) => return None,
    })
}

/// Gives every partition whose column `c` points at `pending` the codec
/// [`Column::encode_string_ids`] chooses for its strings.
fn restore(
    partitions: &mut [Partition],
    c: usize,
    buckets: &[Bucket],
    entries: usize,
    pending: &Arc<Dictionary>,
) {
    let by_id = Stream::by_id(buckets, entries);
    let string = |id: u32| -> &str {
        let (b, k) = by_id[id as usize];
        buckets[b as usize].distinct.strings.get(k as usize)
    };
    partitions.par_iter_mut().for_each(|p| {
        let col = &mut p.columns[c];
        let ColumnData::Dict { dict, codes } = &col.data else {
            return;
        };
        if !Arc::ptr_eq(dict, pending) {
            return;
        }
        let validity = col.validity.as_ref().map(|v| v.dense());
        let valid = |i: usize| validity.as_ref().is_none_or(|b| b.get(i));
        // The partition's own ids, in order of first use.
        let mut local: HashMap<u32, u32> = HashMap::new();
        let mut strings: Vec<&str> = Vec::new();
        let ids: Vec<u32> = (0..codes.len())
            .map(|i| {
                if !valid(i) {
                    return 0;
                }
                let id = codes.get(i) as u32;
                *local.entry(id).or_insert_with(|| {
                    strings.push(string(id));
                    strings.len() as u32 - 1
                })
            })
            .collect();
        *col = if strings.is_empty() {
            Column::all_null(DataType::Str, col.len)
        } else {
            Column::encode_string_ids(&strings, &ids, col.validity.clone())
        };
    });
}
