//! Exact distinct sets for `count(DISTINCT x)`, per group, mergeable in
//! parallel.
//!
//! Keys are 64-bit (integers, timestamps, canonical float bits, booleans)
//! or 128-bit (XXH3-128 of a string, as ClickHouse's `uniqExact` keeps
//! strings; see [`crate::kernel::hash::hash_str128`]).

use std::hash::Hash;

use hashbrown::HashSet;
use rayon::prelude::*;
use smallvec::SmallVec;

use crate::kernel::hash::mix64;

/// Buckets of a split set (a power of two).
const BUCKETS: usize = 64;
/// A set splits into buckets once a merge would make it this large.
const SPLIT_AT: usize = 1 << 16;
/// A per-group set stays a plain vector up to this many keys.
const SMALL_MAX: usize = 16;

/// A distinct-set key: 64 or 128 bits.
pub trait DistinctKey: Copy + Eq + Hash + Send + Sync + Default + 'static {
    /// The keys a small set holds inline, without a heap allocation: as
    /// many as fit in the room a hash set takes anyway.
    type Inline: smallvec::Array<Item = Self> + Clone + std::fmt::Debug + Send + Sync;

    /// The bits that pick a bucket (well mixed).
    fn bucket_bits(self) -> u64;
}

impl DistinctKey for u64 {
    type Inline = [u64; 2];

    #[inline]
    fn bucket_bits(self) -> u64 {
        mix64(self)
    }
}

impl DistinctKey for u128 {
    type Inline = [u128; 1];

    #[inline]
    fn bucket_bits(self) -> u64 {
        // Already a hash.
        (self >> 64) as u64
    }
}

#[inline]
fn bucket<K: DistinctKey>(x: K) -> usize {
    (x.bucket_bits() >> (64 - BUCKETS.trailing_zeros())) as usize
}

/// A set of keys.
///
/// # Design
/// A small set is a vector searched linearly (most groups of a per-group
/// distinct count see few values), a larger one a hash set, and a large
/// one is split into [`BUCKETS`] hash sets by the top bits of the key's hash,
/// like ClickHouse's two-level hash tables: merging two split sets merges
/// bucket by bucket in parallel, each bucket small enough for the cache.
#[derive(Debug, Clone)]
pub enum DistinctSet<K: DistinctKey> {
    /// Up to [`SMALL_MAX`] keys, unordered, distinct; the first one or two
    /// inline (perf: most groups of ClickBench q14 see one or two UserIDs
    /// per partition, and a heap allocation per group, freed by another
    /// thread at the merge, was most of merging 1M partial groups' sets).
    Small(SmallVec<K::Inline>),
    /// One hash set.
    Flat(HashSet<K>),
    /// [`BUCKETS`] hash sets by hash bits.
    Split(Vec<HashSet<K>>),
    /// Keys known to be distinct, unhashed: a partition's dictionary
    /// entries. Hashed only when merged or added to (perf of ClickBench
    /// q5, `count(DISTINCT UserID)` on dictionary codes: hashing each
    /// partition's entries into a set of its own, then again into the
    /// merged set, was half its hashing).
    Unique(Vec<K>),
}

impl<K: DistinctKey> Default for DistinctSet<K> {
    fn default() -> Self {
        DistinctSet::Small(SmallVec::new())
    }
}

impl<K: DistinctKey> DistinctSet<K> {
    /// Adds a key.
    #[inline]
    pub fn insert(&mut self, x: K) {
        match self {
            DistinctSet::Small(v) => {
                if !v.contains(&x) {
                    if v.len() < SMALL_MAX {
                        v.push(x);
                    } else {
                        let mut set: HashSet<K> = v.drain(..).collect();
                        set.insert(x);
                        *self = DistinctSet::Flat(set);
                    }
                }
            }
            DistinctSet::Unique(_) => {
                self.reserve(1);
                self.insert(x);
            }
            DistinctSet::Flat(s) => {
                s.insert(x);
            }
            DistinctSet::Split(b) => {
                b[bucket(x)].insert(x);
            }
        }
    }

    /// Makes room for `n` more keys (a set about to take many).
    pub fn reserve(&mut self, n: usize) {
        if let DistinctSet::Unique(v) = self {
            let mut set: HashSet<K> = HashSet::with_capacity(v.len() + n);
            set.extend(v.drain(..));
            *self = DistinctSet::Flat(set);
        } else if n > SMALL_MAX
            && let DistinctSet::Small(v) = self
        {
            let mut set: HashSet<K> = HashSet::with_capacity(n);
            set.extend(v.drain(..));
            *self = DistinctSet::Flat(set);
        } else if let DistinctSet::Flat(s) = self {
            s.reserve(n);
        }
    }

    /// True when the set holds no key.
    pub fn is_empty(&self) -> bool {
        match self {
            DistinctSet::Small(v) => v.is_empty(),
            DistinctSet::Unique(v) => v.is_empty(),
            DistinctSet::Flat(s) => s.is_empty(),
            DistinctSet::Split(b) => b.iter().all(HashSet::is_empty),
        }
    }

    /// Number of distinct keys.
    pub fn len(&self) -> usize {
        match self {
            DistinctSet::Small(v) => v.len(),
            DistinctSet::Unique(v) => v.len(),
            DistinctSet::Flat(s) => s.len(),
            DistinctSet::Split(b) => b.iter().map(HashSet::len).sum(),
        }
    }

    /// Heap bytes held (estimated from capacities).
    pub fn heap_bytes(&self) -> usize {
        let per = std::mem::size_of::<K>() + 1;
        match self {
            DistinctSet::Small(v) if v.spilled() => v.capacity() * std::mem::size_of::<K>(),
            DistinctSet::Small(_) => 0,
            DistinctSet::Unique(v) => v.capacity() * std::mem::size_of::<K>(),
            DistinctSet::Flat(s) => s.capacity() * per,
            DistinctSet::Split(b) => b.iter().map(|s| s.capacity() * per).sum(),
        }
    }

    fn split(&mut self) {
        let keys: Vec<K> = match self {
            DistinctSet::Split(_) => return,
            DistinctSet::Small(v) => std::mem::take(v).into_vec(),
            DistinctSet::Unique(v) => std::mem::take(v),
            DistinctSet::Flat(s) => s.drain().collect(),
        };
        let mut buckets: Vec<HashSet<K>> = (0..BUCKETS).map(|_| HashSet::new()).collect();
        for x in keys {
            buckets[bucket(x)].insert(x);
        }
        *self = DistinctSet::Split(buckets);
    }

    /// Adds every key of `other`.
    pub fn merge(&mut self, other: DistinctSet<K>) {
        if !matches!(self, DistinctSet::Split(_))
            && !matches!(other, DistinctSet::Split(_))
            && self.len() + other.len() < SPLIT_AT
        {
            let (mut big, small) = if self.len() >= other.len() {
                (std::mem::take(self), other)
            } else {
                (other, std::mem::take(self))
            };
            match small {
                DistinctSet::Small(v) => v.into_iter().for_each(|x| big.insert(x)),
                DistinctSet::Unique(v) => {
                    big.reserve(v.len());
                    v.into_iter().for_each(|x| big.insert(x));
                }
                DistinctSet::Flat(s) => {
                    big.reserve(s.len());
                    s.into_iter().for_each(|x| big.insert(x));
                }
                DistinctSet::Split(_) => unreachable!("checked above"),
            }
            *self = big;
            return;
        }
        self.split();
        let mut incoming: Vec<Vec<K>> = vec![Vec::new(); BUCKETS];
        match other {
            DistinctSet::Small(v) => v.into_iter().for_each(|x| incoming[bucket(x)].push(x)),
            DistinctSet::Unique(v) => v.into_iter().for_each(|x| incoming[bucket(x)].push(x)),
            DistinctSet::Flat(s) => s.into_iter().for_each(|x| incoming[bucket(x)].push(x)),
            DistinctSet::Split(b) => {
                for (i, s) in b.into_iter().enumerate() {
                    incoming[i].extend(s);
                }
            }
        }
        if let DistinctSet::Split(buckets) = self {
            buckets.par_iter_mut().zip(incoming).for_each(|(set, xs)| {
                set.reserve(xs.len());
                set.extend(xs)
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_counts_the_union() {
        let mut a: DistinctSet<u64> = DistinctSet::default();
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
        // Unique sets: merged into each other, into a hash set, and added to.
        let mut u = DistinctSet::Unique((0..30_000u64).collect());
        u.merge(DistinctSet::Unique((20_000..90_000u64).collect()));
        assert_eq!(u.len(), 90_000);
        let mut f = DistinctSet::default();
        (0..10u64).for_each(|x| f.insert(x));
        f.merge(DistinctSet::Unique((5..25u64).collect()));
        assert_eq!(f.len(), 25);
        let mut v = DistinctSet::Unique(vec![1u64, 2, 3]);
        v.insert(2);
        v.insert(4);
        assert_eq!(v.len(), 4);
        for n in [0u64, 1, 15, 16, 17, 40] {
            let mut c: DistinctSet<u128> = DistinctSet::default();
            let mut d = DistinctSet::default();
            for x in 0..n {
                c.insert(x as u128);
                c.insert(x as u128);
                d.insert((x * 2) as u128);
            }
            assert_eq!(c.len() as u64, n);
            c.merge(d);
            let want = (0..n)
                .chain((0..n).map(|x| x * 2))
                .collect::<std::collections::HashSet<_>>();
            assert_eq!(c.len(), want.len(), "n={n}");
        }
    }
}
