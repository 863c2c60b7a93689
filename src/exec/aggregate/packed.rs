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
//! integers between the zone maps' extremes), and the ranges' bit widths
//! add up to at most 63, each partial's keys become one integer, the
//! slots side by side (first key in the highest bits). Bit fields rather
//! than a mixed-radix number: splitting the merged groups' keys back by
//! division was an eighth of q10's profile, by shift and mask it is
//! nothing.
//! The merge then groups one integer key without NULLs (its `IntKeys`
//! table, one hash and one compare per partial group), and the merged
//! integer is split back into the keys' columns.

use rayon::prelude::*;

use crate::plan::{Aggregate, Expr};
use crate::store::Table;
use crate::types::DataType;

use super::super::vector::{Array, Data};
use super::Partial;
use super::merge::DenseKey;
use super::shared::dense_key;

/// Group keys packed into one integer: key `k`'s slot shifted left by
/// `shifts[k]` bits, the fields disjoint.
pub struct PackedKeys<'a> {
    keys: Vec<DenseKey<'a>>,
    shifts: Vec<u32>,
}

impl<'a> PackedKeys<'a> {
    /// The packing of `agg`'s keys over `table`: two or more keys, each a
    /// column with a table-wide [`DenseKey`], whose slot numbers take 63
    /// bits at most side by side.
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
        let mut shifts = vec![0u32; keys.len()];
        let mut bits = 0u32;
        for (k, key) in keys.iter().enumerate().rev() {
            shifts[k] = bits;
            bits += bit_width(key.slots());
        }
        (bits <= 63).then_some(PackedKeys { keys, shifts })
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
        for ((key, column), &shift) in self.keys.iter().zip(keys).zip(&self.shifts) {
            let slots = key.slots_of(column)?;
            if slots.len() != groups {
                return None;
            }
            for (o, s) in out.iter_mut().zip(slots) {
                *o |= i64::from(s) << shift;
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
                .zip(&self.shifts)
                .map(|(key, &shift)| {
                    let mask = (1u64 << bit_width(key.slots())) - 1;
                    key.column(
                        packed
                            .iter()
                            .map(|&p| ((p as u64 >> shift) & mask) as u32)
                            .collect(),
                    )
                })
                .collect();
        });
    }
}

/// Bits that hold the slot numbers `0..slots` (at most 32: a
/// [`DenseKey`] has at most `u32::MAX` slots).
fn bit_width(slots: usize) -> u32 {
    usize::BITS - slots.saturating_sub(1).leading_zeros()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ints(v: &[i64]) -> Array<'static> {
        Array {
            dtype: DataType::Int,
            data: Data::Int(v.to_vec()),
            validity: None,
        }
    }

    fn int_key(base: i64, slots: usize) -> DenseKey<'static> {
        DenseKey::Int {
            base,
            slots,
            dtype: DataType::Int,
        }
    }

    #[test]
    fn bit_width_holds_the_largest_slot() {
        assert_eq!(bit_width(1), 0);
        assert_eq!(bit_width(2), 1);
        assert_eq!(bit_width(3), 2);
        assert_eq!(bit_width(4), 2);
        assert_eq!(bit_width(5), 3);
        assert_eq!(bit_width(100_001), 17);
        assert_eq!(bit_width(u32::MAX as usize), 32);
    }

    #[test]
    fn keys_split_back_to_the_values_packed() {
        let keys = vec![int_key(-5, 11), int_key(100, 1), int_key(0, 1 << 20)];
        let packing = PackedKeys {
            shifts: vec![20, 20, 0],
            keys,
        };
        let columns = vec![
            ints(&[-5, 5, 0, 5]),
            ints(&[100, 100, 100, 100]),
            ints(&[0, (1 << 20) - 1, 7, 0]),
        ];
        let part = Partial {
            groups: 4,
            keys: columns.clone(),
            accs: Vec::new(),
            repeats: true,
        };
        let mut packed = packing.pack(vec![part]);
        assert_eq!(packed[0].keys.len(), 1);
        let Data::Int(p) = &packed[0].keys[0].data else {
            panic!("packed key is not integers");
        };
        // Distinct tuples stay distinct, equal ones equal.
        assert_ne!(p[1], p[3]);
        assert_eq!(p[0], 0);
        packing.unpack(&mut packed);
        for (got, want) in packed[0].keys.iter().zip(&columns) {
            assert_eq!(got.len(), 4);
            for i in 0..4 {
                assert_eq!(got.value(i), want.value(i));
            }
        }
    }

    #[test]
    fn a_value_outside_its_range_leaves_the_keys_as_they_are() {
        let packing = PackedKeys {
            keys: vec![int_key(0, 4), int_key(0, 4)],
            shifts: vec![2, 0],
        };
        let part = Partial {
            groups: 2,
            keys: vec![ints(&[1, 2]), ints(&[3, 4])],
            accs: Vec::new(),
            repeats: false,
        };
        let out = packing.pack(vec![part]);
        assert_eq!(out[0].keys.len(), 2);
    }
}
