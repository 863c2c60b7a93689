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
/// (the first scans), then kept with the database until the table is
/// replaced. Built in two passes over the column: the first counts each
/// value's rows, the second places them. A value held by one row maps to
/// its location; a repeated value maps to [`REPEATED`] `| end`, its `n`
/// locations (in load order) at `rows[end - n..end]` and `n` at
/// `rows[end]`, so no value owns an allocation (a `Vec` per repeated
/// value, grown row by row, took 2 s for TPC-H's `l_partkey` at SF 1).
///
/// # Performance
/// About 20 bytes per distinct value (a hashbrown entry of `i64 → u64` at
/// its load factor) plus 8 bytes per row of a repeated value; a lookup is
/// one hash probe.
#[derive(Debug, Default)]
pub struct HashIndex {
    map: HashMap<i64, u64>,
    rows: Vec<RowLocation>,
}

/// Marks a map entry of a repeated value (locations are below 2^63).
const REPEATED: u64 = 1 << 63;

/// A value's first sighting in the second pass of [`HashIndex::build`].
const UNPLACED: u64 = u64::MAX;

/// Calls `f` with every non-NULL value of column `column` of `table` and
/// its location, in load order: offsets read in place, any other codec
/// decoded a batch at a time.
fn each_value(table: &Table, column: usize, mut f: impl FnMut(i64, RowLocation)) {
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
                        f(v, location(p, row));
                    }
                });
            }
            ColumnData::Const(Value::Int(v) | Value::Timestamp(v) | Value::Date(v) | Value::Interval(v)) => {
                for row in (0..col.len).filter(|&r| valid(r)) {
                    f(*v, location(p, row));
                }
            }
            _ => {
                let mut batch = Decoded::empty(col.dtype);
                for start in (0..col.len).step_by(BATCH_ROWS) {
                    let end = (start + BATCH_ROWS).min(col.len);
                    batch.clear();
                    col.decode_range_into(start..end, &mut batch);
                    if let Decoded::Ints(values) = &batch {
                        for (row, &v) in (start..end).zip(values) {
                            if valid(row) {
                                f(v, location(p, row));
                            }
                        }
                    }
                }
            }
        }
    }
}

impl HashIndex {
    /// Indexes column `column` of `table` (an integer or timestamp column),
    /// whatever its codec in each partition.
    pub fn build(table: &Table, column: usize) -> HashIndex {
        // Pass 1: rows per value.
        let mut map: HashMap<i64, u64> = HashMap::new();
        each_value(table, column, |v, _| *map.entry(v).or_insert(0) += 1);
        // Room for each repeated value's locations and count; the entry
        // becomes the next slot to fill.
        let mut rows: Vec<RowLocation> = Vec::new();
        for n in map.values_mut() {
            if *n == 1 {
                *n = UNPLACED;
            } else {
                let start = rows.len() as u64;
                rows.resize(rows.len() + *n as usize, 0);
                rows.push(*n);
                *n = REPEATED | start;
            }
        }
        // Pass 2: place the locations; a repeated value's entry ends at the
        // slot of its count.
        each_value(table, column, |v, loc| {
            if let Some(e) = map.get_mut(&v) {
                if *e == UNPLACED {
                    *e = loc;
                } else if *e & REPEATED != 0 {
                    let at = (*e & !REPEATED) as usize;
                    rows[at] = loc;
                    *e += 1;
                }
            }
        });
        HashIndex { map, rows }
    }

    /// The locations of `value`: one, or a repeated value's run.
    fn locations(&self, value: i64) -> Option<Result<RowLocation, &[RowLocation]>> {
        let e = *self.map.get(&value)?;
        if e & REPEATED == 0 {
            return Some(Ok(e));
        }
        let end = (e & !REPEATED) as usize;
        let n = self.rows[end] as usize;
        Some(Err(&self.rows[end - n..end]))
    }

    /// Appends the locations of `value` to `out` (in load order).
    pub fn lookup(&self, value: i64, out: &mut Vec<RowLocation>) {
        match self.locations(value) {
            None => {}
            Some(Ok(loc)) => out.push(loc),
            Some(Err(locs)) => out.extend_from_slice(locs),
        }
    }

    /// Number of rows holding `value`, without listing them.
    pub fn count(&self, value: i64) -> usize {
        match self.locations(value) {
            None => 0,
            Some(Ok(_)) => 1,
            Some(Err(locs)) => locs.len(),
        }
    }

    /// Number of distinct values indexed.
    #[cfg(any(test, feature = "internals"))]
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// True when nothing is indexed.
    #[cfg(any(test, feature = "internals"))]
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Approximate heap bytes held.
    pub fn heap_bytes(&self) -> usize {
        let entry = std::mem::size_of::<(i64, u64)>() + 1;
        self.map.capacity() * entry + self.rows.capacity() * 8
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
        assert_eq!(index.count(5), 3);
        let mut out = Vec::new();
        index.lookup(9, &mut out);
        assert_eq!(out.into_iter().map(unpack_location).collect::<Vec<_>>(), vec![(1, 0)]);
        assert_eq!(index.count(9), 1);
        let mut out = Vec::new();
        index.lookup(8, &mut out);
        assert!(out.is_empty());
        assert_eq!(index.len(), 3);
    }
}
