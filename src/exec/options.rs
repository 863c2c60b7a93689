//! The thresholds the executor picks its paths by, in one place.

/// The size and count cut-offs that decide which specialized path a
/// query takes. The defaults are tuned on the benchmark suite (the perf
/// notes beside each use say why); tests lower them so tables of a few
/// hundred rows take the paths that otherwise only partitions of 16k+
/// rows or merges of 32k+ groups take, and the differential test checks
/// those paths against the reference evaluator (the idea of DataFusion's
/// aggregation fuzzer, which runs under forced configurations).
///
/// Every value changes only which path runs, never an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExecOptions {
    /// Fewest slots a fixed-size group array may have: a partition groups
    /// through one when its key space is at most twice its selected rows,
    /// clamped to [`ExecOptions::fixed_array_min_slots`] ..=
    /// [`ExecOptions::fixed_array_max_slots`]; else it hashes.
    pub fixed_array_min_slots: u64,
    /// Most slots a fixed-size group array may have.
    pub fixed_array_max_slots: u64,
    /// Rows a partition's local dictionary of numeric or string keys sees
    /// before it may decide the keys are nearly all distinct and leave the
    /// grouping to the merge (a group per row).
    pub grouping_probe_rows: usize,
    /// Total partial groups from which the merge is radix-partitioned into
    /// buckets merged in parallel (with two threads or more), and a dense
    /// merge split into shards.
    pub radix_min_groups: usize,
    /// Slots a shard of the dense merge (one key of codes or a small
    /// integer range) covers at most.
    pub shard_slots: usize,
    /// Most slots an integer key range may have to merge through dense
    /// arrays rather than hashing (4M: 16 MB of group numbers).
    pub dense_int_max_slots: u64,
    /// Entries of a dictionary small enough to stay in cache, whose codes a
    /// radix merge gathers as codes rather than copying the strings.
    pub small_dictionary_entries: usize,
    /// `offset + limit` from which an ORDER BY on one integer or float
    /// column keeps each partition's best rows as order-preserving u64
    /// keys instead of candidates.
    pub normalized_min_k: usize,
    /// Largest `offset + limit` for which a top-n reads partitions best
    /// zone-map bound first.
    pub bound_order_max_k: usize,
    /// Most codes a sort key's column may have per partition for the top-n
    /// that places its window by per-partition histograms.
    pub histogram_max_codes: usize,
    /// Fewest slots (one per key in the build side's range) from which a
    /// hash join's dense array of heads is built bucket by bucket on all
    /// cores rather than row by row (1M: 4 MB, past L2).
    pub join_radix_min_slots: usize,
    /// Outer rows per key from which a semi-join (EXISTS, IN) with one
    /// ordering or `<>` comparison besides its keys first keeps only the
    /// subquery rows that decide it: each subquery row walks the outer
    /// rows of its key, so a correlation without equality walked them all.
    pub semi_reduce_rows_per_key: usize,
    /// Fewest slots a single group key's table-wide range (a table-wide
    /// dictionary's codes, an integer range from the zone maps) needs for
    /// each worker to group its partitions into one shared array of
    /// states rather than a partial per partition
    /// (`aggregate::shared`).
    pub shared_slots_min: u64,
}

impl Default for ExecOptions {
    fn default() -> ExecOptions {
        ExecOptions {
            fixed_array_min_slots: 1 << 12,
            fixed_array_max_slots: 1 << 20,
            grouping_probe_rows: 2048,
            radix_min_groups: 1 << 15,
            shard_slots: 1 << 16,
            dense_int_max_slots: 1 << 22,
            small_dictionary_entries: 1 << 12,
            normalized_min_k: 1024,
            bound_order_max_k: 4096,
            histogram_max_codes: 1 << 10,
            join_radix_min_slots: 1 << 20,
            semi_reduce_rows_per_key: 16,
            shared_slots_min: 1 << 12,
        }
    }
}

impl ExecOptions {
    /// Cut-offs small enough that tables of tens to hundreds of rows take
    /// the paths large tables take: hashed grouping past 8 slots, per-row
    /// grouping left to the merge after 16 rows, radix-partitioned merges
    /// from 64 groups, dense merges in shards of 16 slots, normalized top-n
    /// from 8 rows, dense join heads in buckets from 16 slots, a worker's
    /// partitions grouped into one shared array from 2 slots, and so on. Slow for real data; for tests.
    pub fn forcing_paths() -> ExecOptions {
        ExecOptions {
            fixed_array_min_slots: 8,
            fixed_array_max_slots: 64,
            grouping_probe_rows: 16,
            radix_min_groups: 64,
            shard_slots: 16,
            dense_int_max_slots: 64,
            small_dictionary_entries: 4,
            normalized_min_k: 8,
            bound_order_max_k: 16,
            histogram_max_codes: 8,
            join_radix_min_slots: 16,
            semi_reduce_rows_per_key: 1,
            shared_slots_min: 2,
        }
    }
}
