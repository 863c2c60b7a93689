//! Several group keys, each a slot of a range known for the whole table,
//! packed into one integer for the merge.
//!
//! # Why
//! db-benchmark groupby q10 groups 10M rows by six keys into about 10M
//! groups. Every partition kept a group per row (`keys::local_dictionary`),
//! and the merge hashed and compared six key columns per partial group,
//! pushing each group's six keys into six builders: the merge was 1.6 s
//! of a 2.6 s query, and its key columns most of the query's memory.
//!
//! # How
//! When every key is a column whose values map to the slots of one range
//! for the whole table ([`DenseKey`]: codes of a table-wide dictionary,
//! integers between the zone maps' extremes), and the product of the
//! ranges' slots fits in an `i64`, each partial's keys become one integer,
//! the mixed-radix number of the slots (first key most significant).
//! The merge then groups one integer key without NULLs (its `IntKeys`
//! table, one hash and one compare per partial group), and the merged
//! integer is split back into the keys' columns.

use rayon::prelude::*;

use crate::plan::{Aggregate, Expr};
use crate::store::Table;
use crate::types::DataType;

use super::super::vector::{Array, Data, Strs};
use super::Partial;
use super::merge::DenseKey;
use super::shared::dense_key;

/// Group keys packed into one integer: key `k`'s slot times `strides[k]`,
/// summed.
pub struct PackedKeys<'a> {
    keys: Vec<DenseKey<'a>>,
    strides: Vec<u64>,
}

impl<'a> PackedKeys<'a> {
    /// The packing of `agg`'s keys over `table`: two or more keys, each a
    /// column with a table-wide [`DenseKey`], whose slots multiply to at
    /// most `i64::MAX`.
    pub fn choose(agg: &Aggregate, table: &'a Table) -> Option<PackedKeys<'a>> {
        if agg.keys.len() < 2 {
            return None;
        }
        let keys = agg
            .keys
            .iter()
            .map(|k| match k {
                Expr::Column { index, .. } => dense_key(&table.partitions, *index),
                _ => None,
            })
            .collect::<Option<Vec<_>>>()?;
        let mut strides = vec![0u64; keys.len()];
        let mut stride: u64 = 1;
        for (k, key) in keys.iter().enumerate().rev() {
            strides[k] = stride;
            stride = stride.checked_mul(key.slots() as u64)?;
        }
        (stride <= i64::MAX as u64).then_some(PackedKeys { keys, strides })
    }

    /// The number of key columns packed.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Every partial's keys as one packed integer column, in parallel, or
    /// the partials as they were when a key column holds a value outside
    /// its range (a key computed other than [`PackedKeys::choose`] saw it;
    /// the merge then groups the columns as they are).
    pub fn pack(&self, parts: Vec<Partial<'a>>) -> Vec<Partial<'a>> {
        let packed: Option<Vec<Vec<i64>>> = parts
            .par_iter()
            .map(|p| self.packed(&p.keys, p.groups))
            .collect();
        let Some(packed) = packed else {
            return parts;
        };
        parts
            .into_iter()
            .zip(packed)
            .map(|(mut p, key)| {
                p.keys = vec![Array {
                    dtype: DataType::Int,
                    data: Data::Int(key),
                    validity: None,
                }];
                p
            })
            .collect()
    }

    /// One partial's packed keys (`groups` rows).
    fn packed(&self, keys: &[Array<'_>], groups: usize) -> Option<Vec<i64>> {
        if keys.len() != self.keys.len() {
            return None;
        }
        let mut out = vec![0i64; groups];
        for ((key, column), &stride) in self.keys.iter().zip(keys).zip(&self.strides) {
            let slots = slots_of(*key, column)?;
            if slots.len() != groups {
                return None;
            }
            for (o, s) in out.iter_mut().zip(slots) {
                *o += s as i64 * stride as i64;
            }
        }
        Some(out)
    }

    /// Splits every merged chunk's packed key back into the key columns,
    /// in parallel.
    pub fn unpack(&self, chunks: &mut [Partial<'a>]) {
        chunks.par_iter_mut().for_each(|c| {
            if !matches!(
                c.keys.as_slice(),
                [Array {
                    data: Data::Int(_),
                    ..
                }]
            ) {
                return;
            }
            let Some(Array {
                data: Data::Int(packed),
                ..
            }) = c.keys.pop()
            else {
                return;
            };
            c.keys = self
                .keys
                .iter()
                .zip(&self.strides)
                .map(|(key, &stride)| {
                    let n = key.slots() as u64;
                    key.column(
                        packed
                            .iter()
                            .map(|&p| ((p as u64 / stride) % n) as u32)
                            .collect(),
                    )
                })
                .collect();
        });
    }
}

/// The slot of every row of `column` under `key`, or `None` for a value
/// outside the key's range.
fn slots_of(key: DenseKey<'_>, column: &Array<'_>) -> Option<Vec<u32>> {
    let valid = |i: usize| column.validity.as_ref().is_none_or(|v| v.get(i));
    match (key, &column.data) {
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
