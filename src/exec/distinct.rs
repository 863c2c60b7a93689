//! Exact distinct sets for `count(DISTINCT x)` on numbers, mergeable in
//! parallel.

use hashbrown::HashSet;
use rayon::prelude::*;

use super::hll::mix64;

/// Buckets of a split set (a power of two).
const BUCKETS: usize = 64;
/// A set splits into buckets once a merge would make it this large.
const SPLIT_AT: usize = 1 << 16;

/// A set of 64-bit keys (integers, timestamps, canonical float bits).
///
/// # Design
/// Small sets are one hash set. A large one is split into [`BUCKETS`]
/// sets by the top bits of a mixed hash, like ClickHouse's two-level hash
/// tables: merging two split sets merges bucket by bucket in parallel, and
/// each bucket stays small enough for the cache.
#[derive(Debug, Clone, Default)]
pub struct DistinctSet {
    flat: HashSet<u64>,
    buckets: Vec<HashSet<u64>>,
}

#[inline]
fn bucket(x: u64) -> usize {
    (mix64(x) >> (64 - BUCKETS.trailing_zeros())) as usize
}

impl DistinctSet {
    /// Adds a key.
    #[inline]
    pub fn insert(&mut self, x: u64) {
        if self.buckets.is_empty() {
            self.flat.insert(x);
        } else {
            self.buckets[bucket(x)].insert(x);
        }
    }

    /// Makes room for `n` more keys without rehashing (unsplit sets only).
    pub fn reserve(&mut self, n: usize) {
        if self.buckets.is_empty() {
            self.flat.reserve(n);
        }
    }

    /// Number of distinct keys.
    pub fn len(&self) -> usize {
        self.flat.len() + self.buckets.iter().map(HashSet::len).sum::<usize>()
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn split(&mut self) {
        if self.buckets.is_empty() {
            self.buckets = (0..BUCKETS).map(|_| HashSet::new()).collect();
            for x in self.flat.drain() {
                self.buckets[bucket(x)].insert(x);
            }
            self.flat = HashSet::new();
        }
    }

    /// Adds every key of `other`.
    pub fn merge(&mut self, mut other: DistinctSet) {
        if self.buckets.is_empty()
            && other.buckets.is_empty()
            && self.len() + other.len() < SPLIT_AT
        {
            if self.flat.len() < other.flat.len() {
                std::mem::swap(self, &mut other);
            }
            self.flat.extend(other.flat);
            return;
        }
        self.split();
        // Spread the other side's keys by bucket, then merge buckets in parallel.
        let mut incoming: Vec<Vec<u64>> = vec![Vec::new(); BUCKETS];
        for x in other.flat.drain() {
            incoming[bucket(x)].push(x);
        }
        for (i, b) in other.buckets.into_iter().enumerate() {
            incoming[i].extend(b);
        }
        self.buckets
            .par_iter_mut()
            .zip(incoming)
            .for_each(|(set, xs)| {
                set.reserve(xs.len());
                set.extend(xs)
            });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_counts_the_union() {
        let mut a = DistinctSet::default();
        let mut b = DistinctSet::default();
        for x in 0..100_000u64 {
            a.insert(x);
            b.insert(x + 50_000);
        }
        let mut small = DistinctSet::default();
        small.insert(7);
        small.insert(1_000_000);
        a.merge(b);
        assert_eq!(a.len(), 150_000);
        a.merge(small);
        assert_eq!(a.len(), 150_001);
        let mut c = DistinctSet::default();
        c.insert(1);
        let mut d = DistinctSet::default();
        d.insert(1);
        d.insert(2);
        c.merge(d);
        assert_eq!(c.len(), 2);
    }
}
