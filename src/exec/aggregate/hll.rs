//! HyperLogLog distinct-count sketch for `approx_count_distinct`.
//!
//! HyperLogLog (Flajolet, Fusy, Gandouet, Meunier 2007) with
//! `m = 2^14 = 16384` registers: standard error `1.04 / sqrt(m)` ≈ 0.81%.
//! The small-range correction (linear counting below `2.5 m`) follows the
//! paper; with a 64-bit hash no large-range correction is needed. A sketch
//! starts sparse (a list of `(register, rank)` pairs) and turns dense (one
//! byte per register, 16 KiB) only once it holds more than `m / 8` pairs, so
//! per-group sketches of small groups stay small. Sketches merge by taking
//! the register-wise maximum, which is what lets partitions and threads
//! combine them.

use crate::types::Value;

const P: u32 = 14;
const M: usize = 1 << P;
const SPARSE_MAX: usize = M / 8;

thread_local! {
    /// Registers for estimating a sparse sketch; all zero between uses.
    static SCRATCH: std::cell::RefCell<Box<[u8]>> =
        std::cell::RefCell::new(vec![0u8; M].into_boxed_slice());
}

/// A HyperLogLog sketch.
#[derive(Debug, Clone)]
pub enum HyperLogLog {
    /// `(register << 8) | rank` pairs, possibly repeated.
    Sparse(Vec<u32>),
    /// One rank per register.
    Dense(Box<[u8]>),
}

impl Default for HyperLogLog {
    fn default() -> Self {
        HyperLogLog::Sparse(Vec::new())
    }
}

pub use crate::kernel::hash::{hash_f64, hash_i64, hash_str128, mix64};

/// A 64-bit hash of a value, the same in every process and thread. A
/// string's is the low half of its 128-bit hash, the one a dictionary
/// keeps per entry (`store::Dictionary::hashes`).
pub fn hash_value(v: &Value) -> u64 {
    match v {
        Value::Int(i) | Value::Timestamp(i) | Value::Date(i) | Value::Interval(i) => hash_i64(*i),
        Value::Float(f) => hash_f64(*f),
        Value::HugeInt(v) => mix64(hash_i64(*v as i64) ^ ((*v >> 64) as u64)),
        Value::Str(s) => hash_str128(s) as u64,
        Value::Bool(b) => mix64(*b as u64 ^ 0xAAAA),
        Value::Null => 0,
    }
}

impl HyperLogLog {
    /// Adds a value (NULLs are the caller's to skip).
    #[cfg(test)]
    pub fn insert(&mut self, v: &Value) {
        self.insert_hash(hash_value(v));
    }

    /// The registers, turning the sketch dense first: for callers about to
    /// add many values, which then update registers with [`update_dense`].
    pub fn dense_mut(&mut self) -> &mut [u8] {
        if let HyperLogLog::Sparse(_) = self {
            *self = HyperLogLog::Dense(self.registers());
        }
        match self {
            HyperLogLog::Dense(regs) => regs,
            HyperLogLog::Sparse(_) => unreachable!("made dense above"),
        }
    }

    /// Adds a value by its 64-bit hash.
    #[inline]
    pub fn insert_hash(&mut self, h: u64) {
        self.insert_pair(pair_of(h));
    }

    /// Adds a value by the [`pair_of`] its hash.
    #[inline]
    pub fn insert_pair(&mut self, pair: u32) {
        match self {
            HyperLogLog::Sparse(pairs) => {
                pairs.push(pair);
                if pairs.len() > SPARSE_MAX {
                    // Highest rank first within a register, then keep one per register.
                    pairs.sort_unstable_by(|a, b| {
                        (a >> 8).cmp(&(b >> 8)).then((b & 0xff).cmp(&(a & 0xff)))
                    });
                    pairs.dedup_by_key(|p| *p >> 8);
                    if pairs.len() > SPARSE_MAX / 2 {
                        *self = HyperLogLog::Dense(self.registers());
                    }
                }
            }
            HyperLogLog::Dense(regs) => {
                let (i, rank) = unpack(pair);
                let r = &mut regs[i];
                if rank > *r {
                    *r = rank;
                }
            }
        }
    }

    /// Adds a pair as a merge does: past [`SPARSE_MAX`] pairs the sketch
    /// turns dense at once, as merging two sparse sketches does, without
    /// the sort that keeps a sketch fed row by row sparse while its rows
    /// repeat (perf: that sort was an eighth of a merge of 1,000 groups'
    /// pairs).
    #[inline]
    pub fn merge_pair(&mut self, pair: u32) {
        if let HyperLogLog::Sparse(pairs) = self
            && pairs.len() < SPARSE_MAX
        {
            pairs.push(pair);
            return;
        }
        let (i, rank) = unpack(pair);
        let r = &mut self.dense_mut()[i];
        *r = (*r).max(rank);
    }

    fn registers(&self) -> Box<[u8]> {
        match self {
            HyperLogLog::Dense(r) => r.clone(),
            HyperLogLog::Sparse(pairs) => {
                let mut regs = vec![0u8; M].into_boxed_slice();
                for p in pairs {
                    let (i, r) = unpack(*p);
                    regs[i] = regs[i].max(r);
                }
                regs
            }
        }
    }

    /// [`HyperLogLog::merge`], taking `other` as it is when this sketch is
    /// empty (a group's first partial at the merge: no registers copied).
    pub fn merge_owned(&mut self, other: HyperLogLog) {
        match self {
            HyperLogLog::Sparse(pairs) if pairs.is_empty() => *self = other,
            _ => self.merge(&other),
        }
    }

    /// Folds another sketch into this one (register-wise maximum).
    pub fn merge(&mut self, other: &HyperLogLog) {
        match (&mut *self, other) {
            (HyperLogLog::Sparse(a), HyperLogLog::Sparse(b)) if a.len() + b.len() <= SPARSE_MAX => {
                a.extend_from_slice(b);
            }
            // In place: copying both sides' 16 KiB of registers into a new
            // sketch at every merge was a quarter of an approximate
            // distinct count over 1,000 groups and 153 partitions (perf:
            // memmove, memset and `registers` under `Approx::merge`).
            (_, HyperLogLog::Sparse(pairs)) => {
                let regs = self.dense_mut();
                for p in pairs {
                    let (i, r) = unpack(*p);
                    regs[i] = regs[i].max(r);
                }
            }
            (_, HyperLogLog::Dense(theirs)) => {
                let regs = self.dense_mut();
                for (a, b) in regs.iter_mut().zip(theirs.iter()) {
                    *a = (*a).max(*b);
                }
            }
        }
    }

    /// The estimated number of distinct values. A sparse sketch is read as
    /// it is (its pairs sorted in a copy), never turned dense.
    pub fn estimate(&self) -> f64 {
        let m = M as f64;
        let (sum, zeros) = match self {
            HyperLogLog::Dense(regs) => {
                // Registers counted per rank, then summed per rank: a
                // float conversion and divide per register made the
                // estimate 6% of approx_count_distinct over 1,000 groups.
                // Four tallies, so that neighbouring registers of one rank
                // do not wait on each other's increment.
                let mut per_rank = [[0u32; 64]; 4];
                for quad in regs.chunks_exact(4) {
                    for (tally, &r) in per_rank.iter_mut().zip(quad) {
                        tally[(r & 63) as usize] += 1;
                    }
                }
                let count = |r: usize| per_rank.iter().map(|t| t[r]).sum::<u32>();
                let sum = (0..64).map(|r| count(r) as f64 / (1u64 << r) as f64).sum();
                (sum, count(0) as usize)
            }
            HyperLogLog::Sparse(pairs) => SCRATCH.with_borrow_mut(|regs| {
                // Each register's highest rank in a zeroed scratch array,
                // then one term per register, zeroing it again: linear in
                // the pairs, where sorting them was a third of
                // `approx_count_distinct` over 1,000 groups (perf).
                for p in pairs {
                    let (i, r) = unpack(*p);
                    regs[i] = regs[i].max(r);
                }
                let (mut present, mut used) = (0.0, 0usize);
                for p in pairs {
                    let r = &mut regs[(p >> 8) as usize];
                    if *r != 0 {
                        present += 1.0 / (1u64 << *r) as f64;
                        used += 1;
                        *r = 0;
                    }
                }
                (present + (M - used) as f64, M - used)
            }),
        };
        let alpha = 0.7213 / (1.0 + 1.079 / m);
        let raw = alpha * m * m / sum;
        if raw <= 2.5 * m && zeros > 0 {
            m * (m / zeros as f64).ln()
        } else {
            raw
        }
    }

    /// Heap bytes held.
    pub fn heap_bytes(&self) -> usize {
        match self {
            HyperLogLog::Sparse(p) => p.capacity() * 4,
            HyperLogLog::Dense(_) => M,
        }
    }

    /// True while the sketch is a list of pairs.
    #[cfg(test)]
    pub fn is_sparse(&self) -> bool {
        matches!(self, HyperLogLog::Sparse(_))
    }
}

/// The register a hash updates and the rank it offers, packed as a sparse
/// sketch keeps them: `register << 8 | rank`.
#[inline]
pub fn pair_of(h: u64) -> u32 {
    let idx = (h >> (64 - P)) as u32;
    let rank = (h << P).leading_zeros().min(64 - P) + 1;
    (idx << 8) | rank
}

/// The register and rank of a [`pair_of`].
#[inline]
fn unpack(pair: u32) -> (usize, u8) {
    ((pair >> 8) as usize, (pair & 0xff) as u8)
}

/// Adds a value by its 64-bit hash to dense registers (see
/// [`HyperLogLog::dense_mut`]).
#[inline]
pub fn update_dense(regs: &mut [u8], h: u64) {
    let idx = (h >> (64 - P)) as usize;
    let rank = ((h << P).leading_zeros().min(64 - P) + 1) as u8;
    let r = &mut regs[idx];
    *r = (*r).max(rank);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn estimate_within_a_few_standard_errors() {
        for n in [0u64, 1, 10, 1000, 50_000, 300_000] {
            let mut h = HyperLogLog::default();
            for i in 0..n {
                h.insert(&Value::Int(i as i64));
                h.insert(&Value::Int(i as i64)); // duplicates do not count
            }
            let e = h.estimate();
            let tolerance = (n as f64 * 0.03).max(1.0);
            assert!((e - n as f64).abs() <= tolerance, "n={n} estimate={e}");
        }
    }

    #[test]
    fn a_sparse_sketch_estimates_as_its_dense_registers() {
        for n in [1u64, 7, 100, 900] {
            let mut h = HyperLogLog::default();
            for i in 0..n {
                h.insert(&Value::Int((i * 7919) as i64));
                h.insert(&Value::Int((i * 7919) as i64));
            }
            assert!(h.is_sparse(), "n={n}");
            let dense = HyperLogLog::Dense(h.registers());
            let (a, b) = (h.estimate(), dense.estimate());
            assert!((a - b).abs() <= 1e-9 * b, "n={n}: {a} vs {b}");
            // The scratch registers are clean again: a second estimate agrees.
            assert_eq!(h.estimate(), a);
        }
    }

    #[test]
    fn merge_equals_union() {
        let (mut a, mut b, mut all) = (
            HyperLogLog::default(),
            HyperLogLog::default(),
            HyperLogLog::default(),
        );
        for i in 0..20_000i64 {
            let v = Value::Int(i);
            if i % 2 == 0 {
                a.insert(&v)
            } else {
                b.insert(&v)
            }
            all.insert(&v);
        }
        a.merge(&b);
        assert_eq!(a.estimate(), all.estimate());
        // A small sketch estimates without turning dense, and agrees with
        // its dense form.
        let mut small = HyperLogLog::default();
        for i in 0..500i64 {
            small.insert(&Value::Int(i));
        }
        assert!(small.is_sparse());
        let sparse_estimate = small.estimate();
        assert!(small.is_sparse());
        let mut dense = small.clone();
        dense.dense_mut();
        assert!((sparse_estimate - dense.estimate()).abs() < 1e-9);
        let mut dense = HyperLogLog::default();
        let regs = dense.dense_mut();
        for i in 0..20_000i64 {
            update_dense(regs, hash_value(&Value::Int(i)));
        }
        assert_eq!(dense.estimate(), all.estimate());
    }

    /// Every pairing of empty, sparse and dense sketches merges (in place,
    /// or taken whole into an empty one) to the registers of one sketch of
    /// both inputs.
    #[test]
    fn merges_of_every_form_equal_one_sketch_of_both() {
        let sketch = |ranges: &[&std::ops::Range<i64>]| {
            let mut h = HyperLogLog::default();
            for i in ranges.iter().flat_map(|r| (*r).clone()) {
                h.insert(&Value::Int(i * 7919));
            }
            h
        };
        // Empty, sparse, sparse, dense, dense.
        let forms = [0..0, 0..300, 200..900, 1000..20_000, 5000..40_000];
        assert!(sketch(&[&forms[2]]).is_sparse() && !sketch(&[&forms[3]]).is_sparse());
        for x in &forms {
            for y in &forms {
                let want = sketch(&[x, y]).registers();
                let mut by_ref = sketch(&[x]);
                by_ref.merge(&sketch(&[y]));
                assert_eq!(by_ref.registers(), want, "{x:?} + {y:?}");
                let mut owned = sketch(&[x]);
                owned.merge_owned(sketch(&[y]));
                assert_eq!(owned.registers(), want, "{x:?} + {y:?}");
            }
        }
    }
}
