//! Hash indexes on integer and timestamp columns, for point lookups that
//! zone maps cannot narrow (keys in random order).

use hashbrown::HashMap;

use super::cmp::BATCH_ROWS;
use super::codes::Code;
use super::column::ColumnData;
use super::decode::Decoded;
use super::table::Table;
use crate::types::Value;

/// Where a value occurs: partition and row, packed as `partition << 32 | row`.
pub type RowLocation = u64;

/// Packs a partition index and a row index into a [`RowLocation`].
pub fn location(partition: usize, row: usize) -> RowLocation {
    ((partition as u64) << 32) | row as u64
}

/// Unpacks a [`RowLocation`] into `(partition, row)`.
pub fn unpack_location(loc: RowLocation) -> (usize, usize) {
    ((loc >> 32) as usize, (loc & 0xffff_ffff) as usize)
}

/// A hash index from the values of one integer or timestamp column to the
/// rows holding them; NULLs are not indexed.
///
/// # Design
/// Built by the second lookup on the column that zone maps cannot narrow
/// (the first scans), then kept
/// with the database until the table is replaced. Most keys occur once, so
/// the map holds the first location inline and only repeated values spill
/// into a side table.
///
/// # Performance
/// About 20 bytes per row (a hashbrown entry of `i64 → u64` at its load
/// factor); a lookup is one hash probe.
#[derive(Debug, Default)]
pub struct HashIndex {
    first: HashMap<i64, RowLocation>,
    more: HashMap<i64, Vec<RowLocation>>,
}

impl HashIndex {
    /// Indexes column `column` of `table` (an integer or timestamp column),
    /// whatever its codec in each partition: offsets read in place, any
    /// other codec decoded a batch at a time.
    pub fn build(table: &Table, column: usize) -> HashIndex {
        let mut index = HashIndex {
            first: HashMap::with_capacity(table.rows()),
            more: HashMap::new(),
        };
        for (p, part) in table.partitions.iter().enumerate() {
            let col = &part.columns[column];
            let validity = col.packed_validity();
            let valid = |r: usize| validity.as_deref().is_none_or(|v| v.get(r));
            match &col.data {
                ColumnData::Offset { base, scale, codes } if col.validity.is_none() => {
                    let (base, scale) = (*base, *scale);
                    crate::store::with_codes!(codes, c => {
                        for (row, x) in c.iter().enumerate() {
                            let v = base.wrapping_add(x.to_u64().wrapping_mul(scale) as i64);
                            index.add(v, location(p, row));
                        }
                    });
                }
                ColumnData::Const(Value::Int(v) | Value::Timestamp(v)) => {
                    for row in (0..col.len).filter(|&r| valid(r)) {
                        index.add(*v, location(p, row));
                    }
                }
                _ => {
                    // Any other codec, decoded a batch at a time.
                    let mut batch = Decoded::empty(col.dtype);
                    for start in (0..col.len).step_by(BATCH_ROWS) {
                        let end = (start + BATCH_ROWS).min(col.len);
                        batch.clear();
                        col.decode_range_into(start..end, &mut batch);
                        if let Decoded::Ints(values) = &batch {
                            for (row, &v) in (start..end).zip(values) {
                                if valid(row) {
                                    index.add(v, location(p, row));
                                }
                            }
                        }
                    }
                }
            }
        }
        index
    }

    #[inline]
    fn add(&mut self, v: i64, loc: RowLocation) {
        match self.first.entry(v) {
            hashbrown::hash_map::Entry::Vacant(e) => {
                e.insert(loc);
            }
            hashbrown::hash_map::Entry::Occupied(_) => self.more.entry(v).or_default().push(loc),
        }
    }

    /// Appends the locations of `value` to `out` (in load order).
    pub fn lookup(&self, value: i64, out: &mut Vec<RowLocation>) {
        if let Some(&loc) = self.first.get(&value) {
            out.push(loc);
            if let Some(rest) = self.more.get(&value) {
                out.extend_from_slice(rest);
            }
        }
    }

    /// Number of rows holding `value`, without listing them.
    pub fn count(&self, value: i64) -> usize {
        match self.first.get(&value) {
            None => 0,
            Some(_) => 1 + self.more.get(&value).map_or(0, Vec::len),
        }
    }

    /// Number of distinct values indexed.
    #[cfg(any(test, feature = "internals"))]
    pub fn len(&self) -> usize {
        self.first.len()
    }

    /// True when nothing is indexed.
    #[cfg(any(test, feature = "internals"))]
    pub fn is_empty(&self) -> bool {
        self.first.is_empty()
    }

    /// Approximate heap bytes held.
    pub fn heap_bytes(&self) -> usize {
        let entry = std::mem::size_of::<(i64, RowLocation)>() + 1;
        self.first.capacity() * entry
            + self
                .more
                .values()
                .map(|v| v.capacity() * 8 + 40)
                .sum::<usize>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{Column, Field, Partition};
    use crate::types::DataType;

    #[test]
    fn finds_every_row_of_a_value_across_partitions() {
        let parts: Vec<Partition> = [vec![5i64, 7, 5], vec![9, 5]]
            .into_iter()
            .scan(0, |first, vals| {
                let p = Partition {
                    rows: vals.len(),
                    first_row: *first,
                    columns: vec![Column::encode_ints(DataType::Int, &vals, None)],
                };
                *first += vals.len();
                Some(p)
            })
            .collect();
        let table = Table {
            name: "t".into(),
            fields: vec![Field {
                name: "id".into(),
                dtype: DataType::Int,
                note: None,
            }],
            partitions: parts,
            source_bytes: 0,
            source_format: Default::default(),
        };
        let index = HashIndex::build(&table, 0);
        let mut out = Vec::new();
        index.lookup(5, &mut out);
        let found: Vec<(usize, usize)> = out.into_iter().map(unpack_location).collect();
        assert_eq!(found, vec![(0, 0), (0, 2), (1, 1)]);
        let mut out = Vec::new();
        index.lookup(8, &mut out);
        assert!(out.is_empty());
        assert_eq!(index.len(), 3);
    }
}
