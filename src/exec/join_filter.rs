//! Join filters: the keys of a join's already-scanned side, pushed into
//! the scan of the other side (a semi-join reduction done sideways, as
//! DuckDB's and DataFusion's dynamic join filters do). A row whose key is
//! not in the set cannot join, so the scan drops it before it evaluates
//! its outputs; a partition whose zone map holds no key of the set is not
//! read at all.
//!
//! # Design
//! A join filter is only ever a reduction: the hash join above still
//! matches every key, so applying a filter, or not (a plan the columnar
//! scan does not run), never changes an answer. Keys are integers or
//! timestamps (`i64`); a NULL key is dropped, as an inner equi-join drops
//! it. The set is a bitmap over `min..=max` when that span is at most
//! [`BITMAP_BITS_PER_KEY`] bits a key or [`BITMAP_MAX_BITS`] in all, else
//! a hash set of the keys (a binary search over tens of thousands of keys
//! cost 25 ns a row, most of TPC-H Q5's lineitem scan).

use hashbrown::HashSet;

use crate::error::Result;
use crate::plan::Expr;
use crate::store::Partition;
use crate::types::{DataType, Value};

use super::vector::{Data, Datum, Rows, eval};

/// Largest span of a bitmap key set, in bits per key it holds: a set
/// sparser than this is kept as sorted keys.
pub const BITMAP_BITS_PER_KEY: u64 = 64;

/// Largest span of a bitmap key set whatever its keys (2 MiB of bits).
pub const BITMAP_MAX_BITS: u64 = 1 << 24;

/// The distinct keys of one side of a join.
#[derive(Debug, Clone)]
pub enum KeySet {
    /// Bit `k - min` of the words is set for every key `k`.
    Bitmap {
        /// The smallest key.
        min: i64,
        /// The largest key.
        max: i64,
        /// `(max - min) / 64 + 1` words.
        bits: Vec<u64>,
        /// Keys in the set.
        len: usize,
    },
    /// The keys in a hash set, and the smallest and largest.
    Hashed {
        /// The smallest key.
        min: i64,
        /// The largest key.
        max: i64,
        /// The keys.
        keys: HashSet<i64>,
    },
}

impl KeySet {
    /// The set of `keys` (in any order, repeats allowed).
    pub fn new(keys: &[i64]) -> KeySet {
        let (Some(&lo), Some(&hi)) = (keys.iter().min(), keys.iter().max()) else {
            return KeySet::Hashed {
                min: 0,
                max: -1,
                keys: HashSet::new(),
            };
        };
        let span = hi.abs_diff(lo);
        if span < BITMAP_MAX_BITS || span / BITMAP_BITS_PER_KEY < keys.len() as u64 {
            let mut bits = vec![0u64; (span / 64) as usize + 1];
            for &k in keys {
                let at = k.abs_diff(lo);
                bits[(at / 64) as usize] |= 1 << (at % 64);
            }
            let len = bits.iter().map(|w| w.count_ones() as usize).sum();
            return KeySet::Bitmap {
                min: lo,
                max: hi,
                bits,
                len,
            };
        }
        KeySet::Hashed {
            min: lo,
            max: hi,
            keys: keys.iter().copied().collect(),
        }
    }

    /// Number of distinct keys.
    pub fn len(&self) -> usize {
        match self {
            KeySet::Bitmap { len, .. } => *len,
            KeySet::Hashed { keys, .. } => keys.len(),
        }
    }

    /// Whether the set holds no key.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether `k` is in the set.
    #[inline]
    pub fn contains(&self, k: i64) -> bool {
        match self {
            KeySet::Bitmap { min, max, bits, .. } => {
                if k < *min || k > *max {
                    return false;
                }
                let at = k.abs_diff(*min);
                bits[(at / 64) as usize] & (1 << (at % 64)) != 0
            }
            KeySet::Hashed { keys, .. } => keys.contains(&k),
        }
    }

    /// Whether some key may lie in `lo..=hi`: exact for a bitmap, the
    /// overlap with `min..=max` for a hash set.
    pub fn any_in(&self, lo: i64, hi: i64) -> bool {
        if lo > hi {
            return false;
        }
        match self {
            KeySet::Bitmap { min, max, bits, .. } => {
                let (lo, hi) = (lo.max(*min), hi.min(*max));
                if lo > hi {
                    return false;
                }
                let (a, b) = (lo.abs_diff(*min), hi.abs_diff(*min));
                let (wa, wb) = ((a / 64) as usize, (b / 64) as usize);
                let low_mask = u64::MAX << (a % 64);
                let high_mask = u64::MAX >> (63 - b % 64);
                if wa == wb {
                    return bits[wa] & low_mask & high_mask != 0;
                }
                bits[wa] & low_mask != 0
                    || bits[wa + 1..wb].iter().any(|&w| w != 0)
                    || bits[wb] & high_mask != 0
            }
            // Only the span is known: a partition inside it may hold a key.
            KeySet::Hashed { min, max, .. } => lo <= *max && hi >= *min,
        }
    }
}

/// Rows of a scan's table whose `column` holds a key of `keys`.
#[derive(Debug, Clone)]
pub struct JoinFilter {
    /// Index of the key column in the scanned table.
    pub column: usize,
    /// The column's name, for EXPLAIN.
    pub name: String,
    /// The column's type: [`DataType::Int`] or [`DataType::Timestamp`].
    pub dtype: DataType,
    /// The keys the other side of the join holds.
    pub keys: std::sync::Arc<KeySet>,
}

/// Whether `v` is an integer key (of an integer or timestamp column).
fn key_of(v: &Value) -> Option<i64> {
    match v {
        Value::Int(k) | Value::Timestamp(k) | Value::Date(k) | Value::Interval(k) => Some(*k),
        _ => None,
    }
}

/// Narrows a partition's selection (as `filter_partition` returns it:
/// `None` no row, `Some(None)` every row, `Some(Some(rows))` those rows)
/// to the rows whose keys are in every filter's set.
///
/// # Errors
/// None in practice: reading a column at a selection does not fail.
pub fn narrow(
    filters: &[JoinFilter],
    part: &Partition,
    sel: Option<Option<Vec<u32>>>,
) -> Result<Option<Option<Vec<u32>>>> {
    let mut sel = match sel {
        None => return Ok(None),
        Some(s) => s,
    };
    for f in filters {
        if f.keys.is_empty() {
            return Ok(None);
        }
        let zone = &part.columns[f.column].zone;
        match (key_of(&zone.min), key_of(&zone.max)) {
            (Some(lo), Some(hi)) if f.keys.any_in(lo, hi) => {}
            // No key in the zone, or the column is all NULL here.
            _ => return Ok(None),
        }
        let rows = match &sel {
            Some(s) => Rows::some(s),
            None => Rows::all(part.rows),
        };
        let column = Expr::Column {
            index: f.column,
            name: f.name.clone(),
            dtype: f.dtype,
        };
        let kept: Vec<u32> = match eval(&column, part, rows)? {
            Datum::Scalar(v) => match key_of(&v) {
                Some(k) if f.keys.contains(k) => continue,
                _ => return Ok(None),
            },
            Datum::Array(a) => {
                let Data::Int(values) = &a.data else {
                    // Not an integer column: no narrowing (the join still
                    // matches every key).
                    continue;
                };
                let row = |j: usize| match &sel {
                    Some(s) => s[j],
                    None => j as u32,
                };
                (0..values.len())
                    .filter(|&j| a.is_valid(j) && f.keys.contains(values[j]))
                    .map(row)
                    .collect()
            }
        };
        if kept.is_empty() {
            return Ok(None);
        }
        sel = Some(kept);
    }
    Ok(Some(sel))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both forms against a plain search, over dense and sparse keys.
    #[test]
    fn key_sets_answer_as_a_list_does() {
        let dense: Vec<i64> = (0..500).map(|i| (i * 7) % 1000 - 300).collect();
        let sparse: Vec<i64> = (0..50).map(|i| i * 1_000_003 - 7).collect();
        assert!(matches!(KeySet::new(&sparse), KeySet::Hashed { .. }));
        assert!(matches!(
            KeySet::new(&[3, 9_000_000]),
            KeySet::Bitmap { .. }
        ));
        let extreme = vec![i64::MIN, i64::MAX, 0];
        for keys in [dense, sparse, extreme, vec![5], Vec::new()] {
            let set = KeySet::new(&keys);
            let mut distinct = keys.clone();
            distinct.sort_unstable();
            distinct.dedup();
            assert_eq!(set.len(), distinct.len());
            let probes: Vec<i64> = keys
                .iter()
                .flat_map(|&k| [k.saturating_sub(1), k, k.saturating_add(1)])
                .chain([i64::MIN, i64::MAX, 0, 64, -64])
                .collect();
            for &p in &probes {
                assert_eq!(set.contains(p), distinct.contains(&p), "{p}");
                for w in [0i64, 1, 63, 64, 65, 200, 5_000_000] {
                    let hi = p.saturating_add(w);
                    let exact = distinct.iter().any(|&k| k >= p && k <= hi);
                    match &set {
                        KeySet::Bitmap { .. } => assert_eq!(set.any_in(p, hi), exact, "{p}..={hi}"),
                        KeySet::Hashed { .. } => assert!(set.any_in(p, hi) || !exact, "{p}..={hi}"),
                    }
                }
            }
        }
    }
}
