//! Dimension joins: a star of tables joined, each by a unique key, to one
//! column of a larger table (trips ⋈ zones on a location code, TPC-H's
//! lineitem ⋈ a lookup), run without joining rows.
//!
//! The large table (the fact) is not scanned and joined: its partitions
//! stay as they are, each gaining the dimensions' columns it needs, made
//! by looking the partition's key *codes* up once each (a dictionary's
//! entries, an offset column's span) rather than each row, and a column
//! saying which rows found a partner. The SELECT then runs on that table
//! through the single-table pipeline, so the fact's own filters run on its
//! codes and zone maps as on a loaded table, a filter on a dimension has
//! already shrunk the key set (semi-join reduction), and a GROUP BY on a
//! dimension's attribute groups the new column's dictionary codes.
//!
//! LEFT joins of dimensions to the fact (`fact LEFT JOIN d ON …`, in a
//! chain) are stars too: the rows without a partner stay, with NULLs.
//!
//! Chosen when the fact has no filter of its own (the lookups read all its
//! rows; a filter that keeps few is better run first, by the hash join's
//! scans), and, in a tree of inner joins with no semi-join, every input
//! but the largest has at most half its rows and is joined to it alone,
//! on one column of the same type (integer, timestamp or string), that
//! column has at most [`MAX_CODES`] codes in every partition of the large
//! table, and each other input's key is unique after its filters (checked
//! on its scanned rows, smallest input first; a repeated key falls back to
//! the hash join).

use std::collections::BTreeSet;

use hashbrown::HashMap;
use rayon::prelude::*;

use std::sync::{Arc, OnceLock};

use super::fold::Call;
use super::{ColRef, Input as JoinInput, NONE, Node, Scan};
use crate::error::{Error, Result};
use crate::exec::aggregate::accumulator::{
    Accumulator, Gids, Input, new_accumulator, reads_in_place,
};
use crate::exec::aggregate::keys::{KeySource, key_codes};
use crate::exec::vector::{Array, Data, Datum, Rows, eval};
use crate::plan::{self, AggFunc};
use crate::sql::ast::JoinKind;
use crate::store::{
    Bitmap, Code, Codes, Column, ColumnData, Dictionary, Partition, Table, with_codes,
};
use crate::types::{DataType, Value};

/// The most codes a partition's fact key column may have for the star to
/// be chosen: a lookup table of this many entries is built per partition
/// (per key), which must stay small next to the partition's rows.
pub(super) const MAX_CODES: u64 = 1 << 16;

/// A dimension of a star: `input`'s column `key` equals the fact's column
/// `fact_key`.
pub(super) struct Dim {
    pub input: usize,
    pub key: usize,
    pub fact_key: usize,
}

/// One large input and the dimensions joined to it.
pub(super) struct Star {
    pub fact: usize,
    pub dims: Vec<Dim>,
    /// LEFT joins: a fact row without a partner stays, the dimension's
    /// columns NULL.
    pub outer: bool,
}

/// The star of inner joins `inputs` joined by `edges` make, around the
/// largest input, if they make one (see the module's rules; the key
/// uniqueness is checked later, on the scans).
pub(super) fn star(inputs: &[JoinInput], edges: &[(ColRef, ColRef)]) -> Option<Star> {
    let fact = (0..inputs.len())
        .rev()
        .max_by_key(|&i| inputs[i].table.rows())?;
    star_around(fact, inputs, edges, false)
}

/// The star of `fact LEFT JOIN d1 ON … LEFT JOIN d2 ON …` (a chain of
/// LEFT joins, each of one input joined to the first), if `tree` is one.
pub(super) fn left_star(tree: &Node, inputs: &[JoinInput]) -> Option<Star> {
    let mut edges = Vec::new();
    let mut node = tree;
    loop {
        match node {
            Node::Input(fact) => return star_around(*fact, inputs, &edges, true),
            Node::Join {
                kind: JoinKind::Left,
                left,
                right,
                keys,
                residual,
                ..
            } if matches!(**right, Node::Input(_)) && residual.is_empty() => {
                edges.extend(keys.iter().copied());
                node = left;
            }
            _ => return None,
        }
    }
}

fn star_around(
    fact: usize,
    inputs: &[JoinInput],
    edges: &[(ColRef, ColRef)],
    outer: bool,
) -> Option<Star> {
    if inputs.len() < 2 {
        return None;
    }
    // (dimension input, its column, the fact's column)
    let mut pairs: BTreeSet<(usize, usize, usize)> = BTreeSet::new();
    for &(a, b) in edges {
        let (f, d) = match (a.0 == fact, b.0 == fact) {
            (true, false) => (a, b),
            (false, true) => (b, a),
            _ => return None,
        };
        pairs.insert((d.0, d.1, f.1));
    }
    let table = &inputs[fact].table;
    let mut dims = Vec::new();
    for i in (0..inputs.len()).filter(|&i| i != fact) {
        let mut mine = pairs.iter().filter(|p| p.0 == i);
        let (Some(&(_, key, fact_key)), None) = (mine.next(), mine.next()) else {
            return None;
        };
        // A table as large as the fact is no dimension (and scanning it
        // before the fact would cost it the fact's join filter).
        if inputs[i].table.rows() > table.rows() / 2 {
            return None;
        }
        let dtype = table.fields[fact_key].dtype;
        if dtype != inputs[i].table.fields[key].dtype
            || !matches!(
                dtype,
                DataType::Int
                    | DataType::Timestamp
                    | DataType::Date
                    | DataType::Interval
                    | DataType::Str
            )
        {
            return None;
        }
        let coded = table.partitions.iter().all(|p| {
            p.columns[fact_key]
                .code_count()
                .is_some_and(|n| n <= MAX_CODES)
        });
        if !coded {
            return None;
        }
        dims.push(Dim {
            input: i,
            key,
            fact_key,
        });
    }
    // Smallest first: the first whose keys repeat ends the star, and the
    // larger ones are left to the hash join's order and join filters.
    dims.sort_by_key(|d| inputs[d.input].table.rows());
    Some(Star { fact, dims, outer })
}

/// A dimension's keys: each key value's row in its scan.
pub(super) enum Keys<'s> {
    Int(HashMap<i64, u32>),
    /// Integer keys spanning few values: the row of key `k` at
    /// `rows[k - min]` ([`NONE`] for none); `len` keys.
    Dense {
        min: i64,
        rows: Vec<u32>,
        len: usize,
    },
    Str(HashMap<&'s str, u32>),
}

impl Keys<'_> {
    /// The scan row whose key is row `i` of `values`, [`NONE`] for NULL or
    /// a key the dimension lacks.
    fn row_of(&self, values: &Array<'_>, i: usize) -> u32 {
        if !values.is_valid(i) {
            return NONE;
        }
        let found = match (self, &values.data) {
            (Keys::Int(map), Data::Int(v)) => map.get(&v[i]),
            (Keys::Dense { min, rows, .. }, Data::Int(v)) => {
                return v[i]
                    .checked_sub(*min)
                    .and_then(|k| usize::try_from(k).ok())
                    .and_then(|k| rows.get(k).copied())
                    .unwrap_or(NONE);
            }
            (Keys::Str(map), Data::Str(s)) => map.get(s.get(i)),
            _ => None,
        };
        found.copied().unwrap_or(NONE)
    }

    fn len(&self) -> usize {
        match self {
            Keys::Int(map) => map.len(),
            Keys::Dense { len, .. } => *len,
            Keys::Str(map) => map.len(),
        }
    }
}

/// The keys of a dimension's scanned rows (column `key` at `position` of
/// `scan`); `None` when a key repeats, which a star cannot take (NULL keys
/// are left out: they match nothing).
pub(super) fn unique_keys(scan: &Scan, position: usize) -> Option<Keys<'_>> {
    let column = &scan.columns[position];
    let rows = (0..column.len()).filter(|&r| column.is_valid(r));
    match &column.data {
        Data::Int(v) => {
            let valid: Vec<usize> = rows.collect();
            let (min, max) = valid.iter().fold((i64::MAX, i64::MIN), |(lo, hi), &r| {
                (lo.min(v[r]), hi.max(v[r]))
            });
            let span = (i128::from(max) - i128::from(min) + 1).max(0) as u128;
            // Keys spanning at most four slots a key: an array indexed
            // by key − min, as the hash join's dense heads.
            if min <= max && span <= 4 * valid.len() as u128 + 1024 {
                let mut slots = vec![NONE; span as usize];
                for &r in &valid {
                    let slot = &mut slots[(v[r] - min) as usize];
                    if *slot != NONE {
                        return None;
                    }
                    *slot = r as u32;
                }
                return Some(Keys::Dense {
                    min,
                    rows: slots,
                    len: valid.len(),
                });
            }
            let mut map = HashMap::with_capacity(valid.len());
            for r in valid {
                if map.insert(v[r], r as u32).is_some() {
                    return None;
                }
            }
            Some(Keys::Int(map))
        }
        Data::Str(s) => {
            let mut map = HashMap::with_capacity(s.len());
            for r in rows {
                if map.insert(s.get(r), r as u32).is_some() {
                    return None;
                }
            }
            Some(Keys::Str(map))
        }
        Data::Float(_) | Data::Bool(_) => None,
    }
}

/// What the joined table holds, column by column.
pub(super) enum Output {
    /// This column of the fact, as it is.
    Fact(usize),
    /// A column of dimension `dim` (an index into [`Star::dims`]): the one
    /// at `position` in its scan, of type `dtype`.
    Dim {
        dim: usize,
        position: usize,
        dtype: DataType,
    },
    /// 1 where this dimension has a partner for the row, else NULL.
    Matched(usize),
}

/// A string column of a dimension as entries of one sorted dictionary:
/// each scan row's entry, [`NONE`] at NULL.
pub(super) struct Entries {
    dict: Arc<Dictionary>,
    of_row: Vec<u32>,
}

impl Entries {
    /// The entries of `column` (a dimension's scanned string column);
    /// `None` for another type.
    pub(super) fn of(column: &Array<'_>) -> Option<Entries> {
        let Data::Str(s) = &column.data else {
            return None;
        };
        let n = column.len();
        let valid: Vec<usize> = (0..n).filter(|&r| column.is_valid(r)).collect();
        let dict = Dictionary::from_distinct(valid.iter().map(|&r| Arc::from(s.get(r))).collect());
        let mut of_row = vec![NONE; n];
        for r in valid {
            of_row[r] = dict.code_of(s.get(r)).map_or(NONE, |c| c as u32);
        }
        Some(Entries {
            dict: Arc::new(dict),
            of_row,
        })
    }
}

/// The fact's partitions with `outputs` as their columns: each
/// dimension's key looked up per code of the fact's key column.
/// `entries[k]` is given for the string outputs, in their order.
///
/// # Errors
/// Evaluation errors of a key column; [`Error::Cancelled`] through
/// `check`.
#[allow(clippy::too_many_arguments)]
pub(super) fn lookup_partitions(
    fact: &Table,
    star: &Star,
    keys: &[Keys<'_>],
    scans: &[&Scan],
    outputs: &[Output],
    entries: &[Option<Entries>],
    check: &(dyn Fn() -> Result<()> + Sync),
) -> Result<Vec<Partition>> {
    fact.partitions
        .par_iter()
        .map(|part| {
            check()?;
            let partners = star_partners(star, keys, fact, part)?;
            // Per-row partner rows, made once per dimension that needs them.
            let mut rows: Vec<Option<Vec<u32>>> = vec![None; partners.len()];
            let mut columns = Vec::with_capacity(outputs.len());
            for (o, entries) in outputs.iter().zip(entries) {
                columns.push(match (o, entries) {
                    (&Output::Fact(col), _) => part.columns[col].clone(),
                    (&Output::Dim { dim, .. }, Some(entries)) => {
                        string_column(&partners[dim], entries)
                    }
                    (
                        &Output::Dim {
                            dim,
                            position,
                            dtype,
                        },
                        None,
                    ) => {
                        let values = &scans[dim].columns[position];
                        match number_column(&partners[dim], values, dtype) {
                            Some(column) => column,
                            None => {
                                let rows = rows[dim].get_or_insert_with(|| partners[dim].rows());
                                let values = values.take_or_null(rows);
                                crate::compose::materialize::encode_array(
                                    dtype,
                                    &values,
                                    0..part.rows,
                                )
                            }
                        }
                    }
                    (&Output::Matched(dim), _) => partners[dim].matched(),
                });
            }
            Ok(Partition {
                rows: part.rows,
                first_row: part.first_row,
                columns,
            })
        })
        .collect()
}

/// A partition's key codes, one per row, borrowed from its column where
/// the codec holds them.
enum RowCodes<'a> {
    /// Code 0 in every row.
    Const(usize),
    /// The column's packed codes.
    Packed(&'a Codes),
    /// Codes computed for the partition.
    Computed(Vec<u64>),
}

/// `table[code]` for each row's code (`missing` for a code past the
/// table).
fn gather<O: Copy>(codes: &RowCodes<'_>, table: &[O], missing: O) -> Vec<O> {
    let at = |c: usize| table.get(c).copied().unwrap_or(missing);
    match codes {
        RowCodes::Const(n) => vec![at(0); *n],
        RowCodes::Packed(codes) => {
            with_codes!(codes, c => c.iter().map(|x| at(x.to_usize())).collect())
        }
        RowCodes::Computed(v) => v.iter().map(|&x| at(x as usize)).collect(),
    }
}

/// A partition's fact key against a dimension: each row's code, each
/// code's partner row in the dimension's scan ([`NONE`] for none), and the
/// key's NULLs (which have no partner).
struct Partners<'a> {
    rows: usize,
    codes: RowCodes<'a>,
    per_code: Vec<u32>,
    /// The key's validity (`None`: no NULL).
    validity: Option<Bitmap>,
    /// The rows with a partner, when some have none: made once, shared by
    /// the columns whose NULLs are exactly those rows.
    matched: OnceLock<Option<Bitmap>>,
}

impl Partners<'_> {
    /// The partner row of each row.
    fn rows(&self) -> Vec<u32> {
        let mut rows = gather(&self.codes, &self.per_code, NONE);
        if let Some(v) = &self.validity {
            for r in v.zeros() {
                rows[r] = NONE;
            }
        }
        rows
    }

    /// Rows whose code has an entry in `missing` are NULL, as are the
    /// key's NULL rows; `None` when no row is NULL.
    fn nulls_where(&self, missing: &[bool]) -> Option<Bitmap> {
        if !missing.contains(&true) {
            return self.validity.clone();
        }
        let present = gather(&self.codes, missing, true);
        let found = Bitmap::from_fn(self.rows, |r| !present[r]);
        Some(match &self.validity {
            Some(v) => found.and(v),
            None => found,
        })
    }

    /// Rows with a partner; `None` when every row has one.
    fn matched_rows(&self) -> Option<Bitmap> {
        self.matched
            .get_or_init(|| {
                let missing: Vec<bool> = self.per_code.iter().map(|&p| p == NONE).collect();
                self.nulls_where(&missing)
            })
            .clone()
    }

    /// The column of matches: 1 where a row has a partner, NULL where it
    /// has none (a constant with a validity bitmap).
    fn matched(&self) -> Column {
        Column::constant(DataType::Int, Value::Int(1), self.rows, self.matched_rows())
    }
}

/// The codes below `size` the partition's rows use, each once, in the
/// order of their first row: every row's code, or only the valid rows'
/// when `validity` is given.
fn used_codes(codes: &RowCodes<'_>, size: usize, validity: Option<&Bitmap>) -> Vec<usize> {
    let mut seen = vec![false; size];
    let mut order = Vec::new();
    let mut mark = |c: usize| {
        if let Some(s) = seen.get_mut(c)
            && !*s
        {
            *s = true;
            order.push(c);
        }
    };
    match (codes, validity) {
        (RowCodes::Const(n), v) => {
            if v.map_or(*n, Bitmap::count_ones) > 0 {
                mark(0);
            }
        }
        (RowCodes::Packed(codes), None) => with_codes!(codes, c => for x in c.iter() {
            mark(x.to_usize());
        }),
        (RowCodes::Packed(codes), Some(v)) => {
            for r in v.ones() {
                mark(codes.get(r) as usize);
            }
        }
        (RowCodes::Computed(codes), None) => codes.iter().for_each(|&x| mark(x as usize)),
        (RowCodes::Computed(codes), Some(v)) => {
            for r in v.ones() {
                mark(codes[r] as usize);
            }
        }
    }
    order
}

/// A dimension's integer, timestamp or float column (`values`, its
/// scanned rows) at the partition's rows: each key code's partner value is
/// taken once and gathered by code, the NULLs being the rows without a
/// partner (the shared matches bitmap) or with a NULL value. `None` for
/// another type, left to the general gather.
fn number_column(partners: &Partners<'_>, values: &Array<'_>, dtype: DataType) -> Option<Column> {
    let value_of = |p: u32| (p != NONE && values.is_valid(p as usize)).then_some(p as usize);
    let partner: Vec<Option<usize>> = partners.per_code.iter().map(|&p| value_of(p)).collect();
    let validity = if partner
        .iter()
        .zip(&partners.per_code)
        .all(|(v, &p)| v.is_none() == (p == NONE))
    {
        partners.matched_rows()
    } else {
        let missing: Vec<bool> = partner.iter().map(Option::is_none).collect();
        partners.nulls_where(&missing)
    };
    let n = partners.rows;
    match (dtype, &values.data) {
        (
            DataType::Int | DataType::Timestamp | DataType::Date | DataType::Interval,
            Data::Int(v),
        ) => {
            let table: Vec<i64> = partner.iter().map(|p| p.map_or(0, |r| v[r])).collect();
            let rows = gather(&partners.codes, &table, 0);
            Some(Column::encode_ints_plain(dtype, &rows, validity))
        }
        (DataType::Float, Data::Float(v)) => {
            let table: Vec<f64> = partner.iter().map(|p| p.map_or(0.0, |r| v[r])).collect();
            // The zone map from the values of the codes the valid rows
            // use, in the order of their first rows (of equal values such
            // as 0.0 and -0.0 the first is the minimum), not from every row.
            // A row is NULL by its code (no partner, or a NULL value: left
            // out below) or by the key's NULL, whose code is a placeholder:
            // only the latter needs the rows' validity.
            let by_key = partners.validity.as_ref();
            let taken: Vec<f64> = used_codes(&partners.codes, table.len(), by_key)
                .into_iter()
                .filter_map(|c| partner[c].map(|r| v[r]))
                .collect();
            if taken.is_empty() {
                return Some(Column::all_null(DataType::Float, n));
            }
            let mut zone = Column::encode_floats_plain(taken, None).zone;
            if let (Value::Float(min), Value::Float(max)) = (&zone.min, &zone.max)
                && min.to_bits() == max.to_bits()
            {
                return Some(Column::constant(DataType::Float, zone.min, n, validity));
            }
            let rows = gather(&partners.codes, &table, 0.0);
            zone.null_count = validity.as_ref().map_or(0, |v| n - v.count_ones());
            zone.sorted = false;
            Some(Column {
                dtype: DataType::Float,
                len: n,
                data: ColumnData::Float(Arc::new(rows)),
                validity,
                zone,
            })
        }
        _ => None,
    }
}

/// A dimension's string column at the partition's rows, as dictionary
/// codes: each key code's entry is found once, and one pass maps the rows'
/// codes to entries of the column's whole dictionary; when the partition
/// does not use them all, a second pass renumbers them into a dictionary
/// of those it uses (as a loaded partition's is).
fn string_column(partners: &Partners<'_>, entries: &Entries) -> Column {
    let n = partners.rows;
    let entry_of_code: Vec<u32> = partners
        .per_code
        .iter()
        .map(|&p| {
            if p == NONE {
                NONE
            } else {
                entries.of_row[p as usize]
            }
        })
        .collect();
    // NULL where the code has no entry (and at the key's NULLs): the rows
    // without a partner, when every partner's value is a string.
    let nulls_as_matched = entry_of_code
        .iter()
        .zip(&partners.per_code)
        .all(|(&e, &p)| (e == NONE) == (p == NONE));
    let validity = if nulls_as_matched {
        partners.matched_rows()
    } else {
        let missing: Vec<bool> = entry_of_code.iter().map(|&e| e == NONE).collect();
        partners.nulls_where(&missing)
    };
    let size = entries.dict.len();
    let codes = if size <= 1 << 8 {
        Codes::U8(entry_codes(partners, &entry_of_code))
    } else if size <= 1 << 16 {
        Codes::U16(entry_codes(partners, &entry_of_code))
    } else {
        Codes::U32(entry_codes(partners, &entry_of_code))
    };
    // The entries the valid rows use.
    let used = used_codes(&RowCodes::Packed(&codes), size, validity.as_ref());
    if used.is_empty() {
        return Column::all_null(DataType::Str, n);
    }
    if used.len() == size {
        let values = entries.dict.values().to_vec();
        return Column::from_sorted_dictionary(values, codes, validity);
    }
    // The partition's entries, in the dictionary's (sorted) order.
    let mut seen = vec![false; size];
    for e in used {
        seen[e] = true;
    }
    let mut local = vec![0u64; size];
    let mut values: Vec<Arc<str>> = Vec::new();
    for (e, _) in seen.iter().enumerate().filter(|(_, s)| **s) {
        local[e] = values.len() as u64;
        values.push(entries.dict.get(e).clone());
    }
    let codes = Codes::pack(
        (0..n).map(|r| local[codes.get(r) as usize]),
        values.len() as u64 - 1,
    );
    Column::from_sorted_dictionary(values, codes, validity)
}

/// Each row's entry (`entry_of_code` of its code; 0 where that is
/// [`NONE`], a row the validity makes NULL) as codes of width `T`.
fn entry_codes<T: Code>(partners: &Partners<'_>, entry_of_code: &[u32]) -> Vec<T> {
    let narrow: Vec<T> = entry_of_code
        .iter()
        .map(|&e| T::from_u64(if e == NONE { 0 } else { u64::from(e) }))
        .collect();
    gather(&partners.codes, &narrow, T::from_u64(0))
}

/// The partner rows of `part` in each dimension of `star` ([`partners`]
/// of its fact key among that dimension's `keys`).
fn star_partners<'a>(
    star: &Star,
    keys: &[Keys<'_>],
    fact: &Table,
    part: &'a Partition,
) -> Result<Vec<Partners<'a>>> {
    star.dims
        .iter()
        .zip(keys)
        .map(|(d, k)| partners(fact, part, d.fact_key, k))
        .collect()
}

/// The partner rows of `part`'s column `fact_key` among `keys`: each of the
/// column's codes is looked up once.
fn partners<'a>(
    fact: &Table,
    part: &'a Partition,
    fact_key: usize,
    keys: &Keys<'_>,
) -> Result<Partners<'a>> {
    let n = part.rows;
    let field = &fact.fields[fact_key];
    let expr = plan::Expr::Column {
        index: fact_key,
        name: field.name.clone(),
        dtype: field.dtype,
    };
    let all = Rows::all(n);
    // The default thresholds: the codes' bound decides, not a probe.
    let key = key_codes(&expr, part, all, &crate::exec::ExecOptions::default())?;
    if key.card <= 2 * MAX_CODES {
        // The decoder reads NULL as code 0 and shifts the others up by one
        // when the codes come with a validity; the table below is indexed
        // by the codes as stored, the NULLs kept in the validity.
        let (codes, validity, shift) = match key.source {
            KeySource::Const => (RowCodes::Const(n), None, 0),
            KeySource::Packed { codes, validity } => {
                let shift = usize::from(validity.is_some());
                (
                    RowCodes::Packed(codes),
                    validity.map(|v| v.into_owned()),
                    shift,
                )
            }
            KeySource::Computed(v) => (RowCodes::Computed(v), None, 0),
        };
        let every: Vec<u64> = (0..key.card).collect();
        let values = key.decoder.decode(&every);
        let per_code = (shift..key.card as usize)
            .map(|c| keys.row_of(&values, c))
            .collect();
        return Ok(Partners {
            rows: n,
            codes,
            per_code,
            validity,
            matched: OnceLock::new(),
        });
    }
    // Codes too many to look up each (a partition the star's check did not
    // see: cannot happen today, but a row at a time is still right).
    let per_code: Vec<u32> = match eval(&expr, part, all)? {
        Datum::Scalar(v) => {
            let one = Array::from_values(field.dtype, &[v]);
            vec![keys.row_of(&one, 0); n]
        }
        Datum::Array(values) => (0..n).map(|r| keys.row_of(&values, r)).collect(),
    };
    Ok(Partners {
        rows: n,
        codes: RowCodes::Computed((0..n as u64).collect()),
        per_code,
        validity: None,
        matched: OnceLock::new(),
    })
}

/// What a call folded over a star reads ([`fold_partitions`]).
#[derive(Debug, Clone, Copy)]
pub(super) enum Source {
    /// The rows (`count(*)`).
    Rows,
    /// This column of the fact.
    Fact(usize),
    /// Dimension `dim`'s scanned column at `position`.
    Dim { dim: usize, position: usize },
}

/// A folded call's state across partitions: the executor's accumulator
/// (one group), or for a dimension's count or sum the totals of its values
/// weighted by their rows.
enum State {
    /// The accumulator and its groups (group 0 kept, group 1 dropped).
    Acc(Box<dyn Accumulator>, usize),
    Count(u64),
    IntSum {
        sum: i128,
        count: u64,
        avg: bool,
    },
    FloatSum {
        sum: f64,
        count: u64,
        avg: bool,
    },
}

impl State {
    fn merge(&mut self, other: State) -> Result<()> {
        match (self, other) {
            (State::Acc(a, groups), State::Acc(b, other)) => {
                a.merge(b, &[0, 1][..other], 2)?;
                *groups = 2;
            }
            (State::Count(a), State::Count(b)) => *a += b,
            (
                State::IntSum { sum, count, .. },
                State::IntSum {
                    sum: s, count: n, ..
                },
            ) => {
                *sum += s;
                *count += n;
            }
            (
                State::FloatSum { sum, count, .. },
                State::FloatSum {
                    sum: s, count: n, ..
                },
            ) => {
                *sum += s;
                *count += n;
            }
            _ => return Err(Error::Internal("folding states of different kinds".into())),
        }
        Ok(())
    }

    /// The call's value: as the executor's `Sum` finishes (NULL without
    /// a value, an average as the sum over the count).
    fn value(self) -> Result<Value> {
        Ok(match self {
            State::Acc(mut a, _) => {
                a.check()?;
                a.finish();
                a.value(0)
            }
            State::Count(n) => Value::Int(n as i64),
            State::IntSum { count: 0, .. } | State::FloatSum { count: 0, .. } => Value::Null,
            State::IntSum { sum, count, avg } => {
                if avg {
                    Value::Float(sum as f64 / count as f64)
                } else {
                    Value::from_i128(sum)
                }
            }
            State::FloatSum { sum, count, avg } => {
                Value::Float(if avg { sum / count as f64 } else { sum })
            }
        })
    }
}

/// The values of `calls` (each with what it reads) over the star's joined
/// rows, folded partition by partition without making them: each fact
/// partition's rows grouped by the codes of the first dimension's key
/// (group `card` for the rows a dimension drops: NULL keys, and under inner
/// joins a key of another dimension without a partner), the fact's
/// columns folded into the executor's accumulators per group, whose groups
/// of codes without a partner are then dropped; a dimension's column is
/// folded once per code, its value weighted by the code's rows kept.
///
/// # Errors
/// Evaluation errors of a key or fact column; an accumulator's errors;
/// [`Error::Cancelled`] through `check`.
pub(super) fn fold_partitions(
    fact: &Table,
    star: &Star,
    keys: &[Keys<'_>],
    scans: &[&Scan],
    calls: &[(Call, Source)],
    check: &(dyn Fn() -> Result<()> + Sync),
) -> Result<Vec<Value>> {
    let parts: Vec<Vec<State>> = fact
        .partitions
        .par_iter()
        .map(|part| {
            check()?;
            fold_partition(fact, part, star, keys, scans, calls)
        })
        .collect::<Result<_>>()?;
    let mut total: Option<Vec<State>> = None;
    for part in parts {
        match &mut total {
            None => total = Some(part),
            Some(total) => {
                for (t, s) in total.iter_mut().zip(part) {
                    t.merge(s)?;
                }
            }
        }
    }
    match total {
        Some(states) => states.into_iter().map(State::value).collect(),
        // No partition: the values over no rows.
        None => calls
            .iter()
            .map(|(call, _)| {
                let a = new_accumulator(&call.agg_call(0, ""))?;
                a.check()?;
                Ok(a.value(0))
            })
            .collect(),
    }
}

/// Each row's code as a bit: bit `r % 64` of word `r / 64` is
/// `present[code of row r]` (false for a code past `present`).
fn rows_with(codes: &RowCodes<'_>, present: &[bool], rows: usize) -> Bitmap {
    let at = |c: usize| u64::from(present.get(c).copied().unwrap_or(false));
    let words: Vec<u64> = match codes {
        RowCodes::Const(_) => {
            return Bitmap::new(rows, at(0) == 1);
        }
        RowCodes::Packed(codes) => with_codes!(codes, c => c
            .chunks(64)
            .map(|block| {
                block
                    .iter()
                    .enumerate()
                    .fold(0u64, |w, (j, x)| w | at(x.to_usize()) << j)
            })
            .collect()),
        RowCodes::Computed(v) => v
            .chunks(64)
            .map(|block| {
                block
                    .iter()
                    .enumerate()
                    .fold(0u64, |w, (j, &x)| w | at(x as usize) << j)
            })
            .collect(),
    };
    Bitmap::from_words(words, rows)
}

/// The rows (of those set in `mask`, or all) per code, for `size` codes.
fn rows_per_code(codes: &RowCodes<'_>, mask: Option<&Bitmap>, size: usize) -> Vec<u64> {
    let mut rows = vec![0u64; size];
    let dense = mask.map(Bitmap::dense);
    let word = |w: usize| dense.as_ref().map_or(u64::MAX, |m| m.word(w));
    let mut add = |code: usize, bit: u64| {
        if let Some(x) = rows.get_mut(code) {
            *x += bit;
        }
    };
    match codes {
        RowCodes::Const(n) => add(0, mask.map_or(*n, Bitmap::count_ones) as u64),
        RowCodes::Packed(codes) => with_codes!(codes, c => {
            for (w, block) in c.chunks(64).enumerate() {
                let bits = word(w);
                for (j, x) in block.iter().enumerate() {
                    add(x.to_usize(), bits >> j & 1);
                }
            }
        }),
        RowCodes::Computed(v) => {
            for (w, block) in v.chunks(64).enumerate() {
                let bits = word(w);
                for (j, &x) in block.iter().enumerate() {
                    add(x as usize, bits >> j & 1);
                }
            }
        }
    }
    rows
}

/// `a` AND `b`, either absent meaning every bit set.
fn both(a: Option<Bitmap>, b: Option<&Bitmap>) -> Option<Bitmap> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.and(b)),
        (a, None) => a,
        (None, Some(b)) => Some(b.clone()),
    }
}

/// Key codes per partition up to which a fold groups the fact's rows by
/// code; past it, it reads them with the dropped rows made NULL. On
/// db-benchmark's x at 10M rows (2 threads): 11 codes (`id1`) 7 ms by code
/// against 15 ms masked; 11,000 codes (`id2`) 30 ms by code (the
/// accumulators' states per code) against 18 ms masked.
const FOLD_BY_CODE_MAX: usize = 1024;

/// Whether an accumulator of `func` reads `column` in place correctly
/// whatever rows its validity leaves out (not only the rows the codec
/// stored as NULL): an ALP column's exceptions and an integer
/// dictionary's codes at NULL rows are summed as stored.
fn reads_any_mask(func: AggFunc, column: &Column) -> bool {
    match (func, &column.data) {
        (AggFunc::Count, _) => true,
        (AggFunc::Sum | AggFunc::Avg, ColumnData::Float(_) | ColumnData::Single(_)) => true,
        (AggFunc::Sum | AggFunc::Avg, ColumnData::Offset { .. }) => column.dtype == DataType::Int,
        (AggFunc::Sum | AggFunc::Avg, ColumnData::Alp(a)) => a.exceptions().0.is_empty(),
        _ => false,
    }
}

/// Which rows of a partition a star keeps.
enum Kept {
    /// Every row.
    All,
    /// Row `r` is in group `gids[r]`: its code of the first dimension's
    /// key, or `card` (NULL keys, and rows another dimension drops); group
    /// `g` is kept when `into[g] == 0`; `rows_of[g]` rows each.
    ByCode {
        gids: Vec<u32>,
        into: Vec<u32>,
        rows_of: Vec<u64>,
    },
    /// The rows set.
    Mask(Bitmap),
}

impl Kept {
    /// The rows a star keeps of a partition with `n` rows whose keys meet
    /// the dimensions' as `partners` say.
    fn of(partners: &[Partners<'_>], outer: bool, n: usize) -> Kept {
        if outer {
            return Kept::All;
        }
        let first = &partners[0];
        let card = first.per_code.len();
        // The rows the dimensions after the first (all of them, when
        // masking) keep.
        let mask_of = |ps: &[Partners<'_>]| -> Option<Bitmap> {
            let mut kept: Option<Bitmap> = None;
            for p in ps {
                let present: Vec<bool> = p.per_code.iter().map(|&r| r != NONE).collect();
                let with = (!present.iter().all(|&x| x)).then(|| rows_with(&p.codes, &present, n));
                kept = both(kept, with.as_ref());
                kept = both(kept, p.validity.as_ref());
            }
            kept
        };
        if card > FOLD_BY_CODE_MAX {
            return mask_of(partners).map_or(Kept::All, Kept::Mask);
        }
        let drop = card as u32;
        let group = |c: usize| if c < card { c as u32 } else { drop };
        let mut gids: Vec<u32> = match &first.codes {
            RowCodes::Const(n) => vec![group(0); *n],
            RowCodes::Packed(codes) => {
                with_codes!(codes, c => c.iter().map(|x| group(x.to_usize())).collect())
            }
            RowCodes::Computed(v) => v.iter().map(|&x| group(x as usize)).collect(),
        };
        let others = mask_of(&partners[1..]);
        for m in [first.validity.as_ref(), others.as_ref()]
            .into_iter()
            .flatten()
        {
            for r in m.zeros() {
                gids[r] = drop;
            }
        }
        let mut into: Vec<u32> = first
            .per_code
            .iter()
            .map(|&p| u32::from(p == NONE))
            .collect();
        into.push(1);
        let mut rows_of = vec![0u64; card + 1];
        for &g in &gids {
            rows_of[g as usize] += 1;
        }
        if into
            .iter()
            .zip(&rows_of)
            .all(|(&to, &rows)| to == 0 || rows == 0)
        {
            return Kept::All;
        }
        Kept::ByCode {
            gids,
            into,
            rows_of,
        }
    }

    /// How many rows are kept, of `n`.
    fn count(&self, n: usize) -> u64 {
        match self {
            Kept::All => n as u64,
            Kept::ByCode { into, rows_of, .. } => rows_of
                .iter()
                .zip(into)
                .filter(|&(_, &to)| to == 0)
                .map(|(&rows, _)| rows)
                .sum(),
            Kept::Mask(m) => m.count_ones() as u64,
        }
    }

    /// The rows kept per code of dimension `dim`'s key (`partners[dim]`),
    /// those where the key is NULL left out.
    fn rows_per_code(&self, dim: usize, partners: &[Partners<'_>]) -> Vec<u64> {
        let p = &partners[dim];
        let size = p.per_code.len();
        match self {
            Kept::All => rows_per_code(&p.codes, p.validity.as_ref(), size),
            Kept::Mask(m) => {
                let mask = both(Some(m.clone()), p.validity.as_ref());
                rows_per_code(&p.codes, mask.as_ref(), size)
            }
            Kept::ByCode { into, rows_of, .. } if dim == 0 => rows_of[..size]
                .iter()
                .zip(into)
                .map(|(&rows, &to)| if to == 0 { rows } else { 0 })
                .collect(),
            Kept::ByCode { gids, into, .. } => {
                let kept = Bitmap::from_fn(gids.len(), |r| into[gids[r] as usize] == 0);
                let mask = both(Some(kept), p.validity.as_ref());
                rows_per_code(&p.codes, mask.as_ref(), size)
            }
        }
    }
}

/// [`fold_partitions`] of one partition. The fact's columns are read by
/// the accumulators either per code of the first dimension's key (the
/// rows a dimension drops in one more group; the groups of codes without
/// a partner then left out), or, past [`FOLD_BY_CODE_MAX`] codes, as one
/// group with the dropped rows NULL in a copy of the column's validity.
fn fold_partition(
    fact: &Table,
    part: &Partition,
    star: &Star,
    keys: &[Keys<'_>],
    scans: &[&Scan],
    calls: &[(Call, Source)],
) -> Result<Vec<State>> {
    let n = part.rows;
    let partners = star_partners(star, keys, fact, part)?;
    let kept = Kept::of(&partners, star.outer, n);
    let kept_rows = kept.count(n);
    let all = Rows::all(n);
    let mut states = Vec::with_capacity(calls.len());
    for &(call, source) in calls {
        let state = match source {
            Source::Rows => State::Count(kept_rows),
            Source::Fact(col) => {
                let field = &fact.fields[col];
                let column = &part.columns[col];
                let mut acc = new_accumulator(&call.agg_call(col, &field.name))?;
                let in_place = reads_in_place(call.func, column);
                match &kept {
                    Kept::All if in_place => {
                        acc.update(Input::Column(column, all), Gids::Single(n), 1)?;
                    }
                    Kept::ByCode { gids, into, .. } => {
                        let groups = into.len();
                        if in_place {
                            acc.update(Input::Column(column, all), Gids::Ids(gids), groups)?;
                        } else {
                            match eval(&fact_column(fact, col), part, all)? {
                                Datum::Array(a) => {
                                    acc.update(Input::Array(&a), Gids::Ids(gids), groups)?;
                                }
                                Datum::Scalar(v) => {
                                    acc.update(Input::Scalar(&v), Gids::Ids(gids), groups)?;
                                }
                            }
                        }
                        // Group 0: the kept codes' groups.
                        let mut kept_groups = new_accumulator(&call.agg_call(col, &field.name))?;
                        kept_groups.merge(acc, into, 2)?;
                        acc = kept_groups;
                    }
                    Kept::Mask(kept) if reads_any_mask(call.func, column) => {
                        let mut masked = column.clone();
                        masked.validity = both(Some(kept.clone()), column.validity.as_ref());
                        acc.update(Input::Column(&masked, all), Gids::Single(n), 1)?;
                    }
                    Kept::All | Kept::Mask(_) => {
                        let mask = match &kept {
                            Kept::Mask(m) => Some(m),
                            _ => None,
                        };
                        match eval(&fact_column(fact, col), part, all)? {
                            Datum::Array(mut a) => {
                                a.validity = both(mask.cloned(), a.validity.as_ref());
                                acc.update(Input::Array(&a), Gids::Single(n), 1)?;
                            }
                            Datum::Scalar(v) => {
                                let rows = kept_rows as usize;
                                acc.update(Input::Scalar(&v), Gids::Single(rows), 1)?;
                            }
                        }
                    }
                }
                State::Acc(acc, 1)
            }
            Source::Dim { dim, position } => {
                let values = &scans[dim].columns[position];
                let w = kept.rows_per_code(dim, &partners);
                // The partner rows of the codes with kept rows and a value.
                let weighted = partners[dim]
                    .per_code
                    .iter()
                    .zip(&w)
                    .filter(|&(&r, &rows)| rows > 0 && r != NONE && values.is_valid(r as usize));
                let avg = call.func == AggFunc::Avg;
                match (call.func, &values.data) {
                    (AggFunc::Count, _) => State::Count(weighted.map(|(_, &rows)| rows).sum()),
                    (AggFunc::Sum | AggFunc::Avg, Data::Int(v)) => {
                        let (mut sum, mut count) = (0i128, 0u64);
                        for (&r, &rows) in weighted {
                            sum += i128::from(v[r as usize]) * i128::from(rows);
                            count += rows;
                        }
                        State::IntSum { sum, count, avg }
                    }
                    (AggFunc::Sum | AggFunc::Avg, Data::Float(v)) => {
                        let (mut sum, mut count) = (0f64, 0u64);
                        for (&r, &rows) in weighted {
                            sum += v[r as usize] * rows as f64;
                            count += rows;
                        }
                        State::FloatSum { sum, count, avg }
                    }
                    _ => {
                        // min, max: each value once.
                        let rows: Vec<u32> = weighted.map(|(&r, _)| r).collect();
                        let taken = values.take_or_null(&rows);
                        let mut acc = new_accumulator(&call.agg_call(0, ""))?;
                        acc.update(Input::Array(&taken), Gids::Single(rows.len()), 1)?;
                        State::Acc(acc, 1)
                    }
                }
            }
        };
        states.push(state);
    }
    Ok(states)
}

/// The fact's column `col` as an expression.
fn fact_column(fact: &Table, col: usize) -> plan::Expr {
    let field = &fact.fields[col];
    plan::Expr::Column {
        index: col,
        name: field.name.clone(),
        dtype: field.dtype,
    }
}

/// For EXPLAIN: how many distinct keys the dimension has.
pub(super) fn key_count(keys: &Keys<'_>) -> usize {
    keys.len()
}
