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
//!
//! A partition whose keys' codes are too many for an array
//! ([`super::aggregate_partition`]) packs each row's key the same way
//! straight from the codes ([`PackedKeys::row_keys`]) and groups that one
//! integer: its partial is packed already, and no key column is decoded
//! (q10's partitions: 441 → 67 ms, the query 950 → 630 ms).

use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::plan::{Aggregate, Expr};
use crate::store::{Partition, Table};
use crate::types::DataType;

use super::super::vector::{Array, Data, Rows};
use super::Partial;
use super::merge::DenseKey;
use super::shared::{column_slots, dense_key};

/// Group keys packed into one integer: key `k`'s slot shifted left by
/// `shifts[k]` bits, the fields disjoint.
pub struct PackedKeys<'a> {
    keys: Vec<DenseKey<'a>>,
    shifts: Vec<u32>,
    /// Each key's expression (a column reference) and column index.
    columns: Vec<(Expr, usize)>,
}

impl<'a> PackedKeys<'a> {
    /// The packing of `agg`'s keys over `table`: two or more keys, each a
    /// column with a table-wide [`DenseKey`], whose slot numbers take 63
    /// bits at most side by side.
    pub fn choose(agg: &Aggregate, table: &'a Table) -> Option<PackedKeys<'a>> {
        if agg.keys.len() < 2 {
            return None;
        }
        let columns = agg
            .keys
            .iter()
            .map(|k| match k {
                Expr::Column { index, .. } => Some((k.clone(), *index)),
                _ => None,
            })
            .collect::<Option<Vec<_>>>()?;
        let keys = columns
            .iter()
            .map(|&(_, index)| dense_key(&table.partitions, index))
            .collect::<Option<Vec<_>>>()?;
        let mut shifts = vec![0u32; keys.len()];
        let mut bits = 0u32;
        for (k, key) in keys.iter().enumerate().rev() {
            shifts[k] = bits;
            bits += bit_width(key.slots());
        }
        (bits <= 63).then_some(PackedKeys {
            keys,
            shifts,
            columns,
        })
    }

    /// The packed key of each of `rows` of `part`, from the key columns'
    /// codes: the partition then groups one integer
    /// ([`super::aggregate_partition`]) and its partial is packed already.
    ///
    /// # Errors
    /// A key column whose slots fall outside the range [`PackedKeys::choose`]
    /// saw in the zone maps (a bug; a wrong slot would corrupt its
    /// neighbours' bits).
    pub fn row_keys(&self, part: &Partition, rows: Rows<'_>) -> Result<Vec<u64>> {
        let mut out = vec![0u64; rows.len];
        for ((key, (expr, column)), &shift) in self.keys.iter().zip(&self.columns).zip(&self.shifts)
        {
            let slots = column_slots(*key, expr, *column, part, rows)?;
            let top = key.slots() as u32;
            if slots.iter().any(|&s| s >= top) {
                return Err(Error::Internal(format!(
                    "packed group key {expr} outside its table-wide range"
                )));
            }
            for (o, s) in out.iter_mut().zip(slots) {
                *o |= u64::from(s) << shift;
            }
        }
        Ok(out)
    }

    /// Bits the packed key takes.
    pub fn bits(&self) -> u32 {
        self.shifts
            .first()
            .map_or(0, |&s| s + bit_width(self.keys[0].slots()))
    }

    /// The number of key columns packed.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Every partial's keys as one packed integer column, in parallel (a
    /// partial of one key column was packed by its partition already), or
    /// the partials as they were when a key column holds a value outside
    /// its range (a key computed other than [`PackedKeys::choose`] saw it;
    /// the merge then groups the columns as they are).
    ///
    /// # Errors
    /// Such a value beside partials packed already: the two cannot merge.
    pub fn pack(&self, parts: Vec<Partial<'a>>) -> Result<Vec<Partial<'a>>> {
        let prepacked = |p: &Partial<'_>| p.keys.len() == 1;
        let packed: Option<Vec<Option<Vec<i64>>>> = parts
            .par_iter()
            .map(|p| {
                if prepacked(p) {
                    Some(None)
                } else {
                    self.packed(&p.keys, p.groups).map(Some)
                }
            })
            .collect();
        let Some(packed) = packed else {
            if parts.iter().any(prepacked) {
                return Err(Error::Internal(
                    "a partial's group keys fall outside the ranges others were packed by".into(),
                ));
            }
            return Ok(parts);
        };
        Ok(parts
            .into_iter()
            .zip(packed)
            .map(|(mut p, key)| {
                if let Some(key) = key {
                    p.keys = vec![Array {
                        dtype: DataType::Int,
                        data: Data::Int(key),
                        validity: None,
                    }];
                }
                p
            })
            .collect())
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
            columns: Vec::new(),
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
        let mut packed = packing.pack(vec![part]).unwrap();
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
            columns: Vec::new(),
        };
        let part = Partial {
            groups: 2,
            keys: vec![ints(&[1, 2]), ints(&[3, 4])],
            accs: Vec::new(),
            repeats: false,
        };
        let out = packing.pack(vec![part]).unwrap();
        assert_eq!(out[0].keys.len(), 2);
    }

    #[test]
    fn partials_packed_by_their_partitions_merge_with_the_rest() {
        let packing = PackedKeys {
            keys: vec![int_key(0, 4), int_key(0, 4)],
            shifts: vec![2, 0],
            columns: Vec::new(),
        };
        let two_keys = |a: &[i64], b: &[i64]| Partial {
            groups: a.len(),
            keys: vec![ints(a), ints(b)],
            accs: Vec::new(),
            repeats: false,
        };
        let prepacked = Partial {
            groups: 2,
            keys: vec![ints(&[0b0111, 0b1000])],
            accs: Vec::new(),
            repeats: false,
        };
        // One partial packed by its partition, one packed here: both one
        // integer key, the first untouched.
        let out = packing
            .pack(vec![prepacked, two_keys(&[1, 3], &[2, 0])])
            .unwrap();
        let keys: Vec<Vec<i64>> = out
            .iter()
            .map(|p| match &p.keys[..] {
                [
                    Array {
                        data: Data::Int(v), ..
                    },
                ] => v.clone(),
                _ => panic!("one integer key expected"),
            })
            .collect();
        assert_eq!(keys, vec![vec![0b0111, 0b1000], vec![0b0110, 0b1100]]);
        // A key outside its range cannot fall back to merging the columns
        // beside a packed partial.
        let prepacked = Partial {
            groups: 1,
            keys: vec![ints(&[5])],
            accs: Vec::new(),
            repeats: false,
        };
        assert!(packing.pack(vec![prepacked, two_keys(&[9], &[0])]).is_err());
    }
}
