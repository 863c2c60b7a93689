//! Typed arrays: the values of an expression at a partition's selected rows.
//!
//! # Design
//! An expression evaluates to a [`Datum`]: a scalar when it is constant over
//! the rows (literals stay scalars, never expanded into arrays), otherwise an
//! [`Array`] with one value per selected row in a typed buffer: `i64`
//! (integers and timestamps), `f64`, booleans bit-packed in a [`Bitmap`], or
//! strings ([`Strs`]). NULLs are a validity [`Bitmap`] (a set bit is a
//! value), absent when no row is NULL; the buffer holds an arbitrary value at
//! a NULL row, never read as a value.
//!
//! Strings are borrowed from the partition where they live (`Views`), kept
//! as dictionary codes with the dictionary's entries (`Coded`), so that a
//! string function runs once per distinct entry rather than once per row, or
//! owned in one buffer when computed (`Owned`).

use std::borrow::Cow;
use std::cmp::Ordering;
use std::ops::Range;
use std::sync::Arc;

use crate::store::with_codes;
use crate::store::{Bitmap, Code, Column, ColumnData, Dictionary, Partition};
use crate::types::{DataType, Value};

/// The rows an expression is evaluated on: a selection vector, or every row
/// of the partition.
#[derive(Clone, Copy, Debug)]
pub struct Rows<'s> {
    /// Selected row indices (ascending), or `None` for all rows.
    pub sel: Option<&'s [u32]>,
    /// Number of rows selected.
    pub len: usize,
    /// The selection is known to be consecutive rows (a batch of all rows).
    run: bool,
}

impl<'s> Rows<'s> {
    /// Every row of a partition with `n` rows.
    pub fn all(n: usize) -> Rows<'static> {
        Rows {
            sel: None,
            len: n,
            run: false,
        }
    }

    /// The rows in `sel`.
    pub fn some(sel: &'s [u32]) -> Rows<'s> {
        Rows {
            sel: Some(sel),
            len: sel.len(),
            run: false,
        }
    }

    /// The rows in `sel`, which the caller made as consecutive rows
    /// (`sel[j] == sel[0] + j`), e.g. a batch of a partition's rows.
    pub fn run(sel: &'s [u32]) -> Rows<'s> {
        debug_assert!(sel.windows(2).all(|w| w[1] == w[0] + 1));
        Rows {
            sel: Some(sel),
            len: sel.len(),
            run: true,
        }
    }

    /// The rows as one range `a..b` when they are every row (`0..len`) or
    /// a [`Rows::run`]: decoding then reads a slice instead of gathering.
    pub fn range(&self) -> Option<Range<usize>> {
        match self.sel {
            None => Some(0..self.len),
            Some(sel) if self.run => {
                let first = *sel.first()? as usize;
                Some(first..first + sel.len())
            }
            Some(_) => None,
        }
    }

    /// Partition row index of the `j`-th selected row.
    #[inline]
    pub fn row(&self, j: usize) -> usize {
        match self.sel {
            Some(s) => s[j] as usize,
            None => j,
        }
    }
}

/// Strings computed into one buffer: string `i` is
/// `bytes[offsets[i]..offsets[i + 1]]`.
///
/// # Invariants
/// `offsets` starts at 0, is non-decreasing and ends at `bytes.len()`; every
/// string is whole UTF-8 (pushed as `&str`).
#[derive(Debug, Clone, Default)]
pub struct StrBuf {
    offsets: Vec<usize>,
    bytes: String,
}

impl StrBuf {
    /// An empty buffer with room for `n` strings.
    pub fn with_capacity(n: usize) -> StrBuf {
        let mut offsets = Vec::with_capacity(n + 1);
        offsets.push(0);
        StrBuf {
            offsets,
            bytes: String::new(),
        }
    }

    /// Strings given back to back in `bytes`, string `i` ending at
    /// `ends[i]`, taken without copying when `bytes` is UTF-8 and every end
    /// falls on a character boundary (then every string is UTF-8: one
    /// validation of the whole buffer instead of one per row).
    ///
    /// # Errors
    /// `bytes` back when they are not such strings.
    pub fn from_parts(bytes: Vec<u8>, ends: &[u32]) -> Result<StrBuf, Vec<u8>> {
        let bytes = String::from_utf8(bytes).map_err(|e| e.into_bytes())?;
        let mut offsets = Vec::with_capacity(ends.len() + 1);
        offsets.push(0);
        let mut last = 0;
        for &e in ends {
            let e = e as usize;
            if e < last || !bytes.is_char_boundary(e) {
                return Err(bytes.into_bytes());
            }
            offsets.push(e);
            last = e;
        }
        if last != bytes.len() {
            return Err(bytes.into_bytes());
        }
        Ok(StrBuf { offsets, bytes })
    }

    /// An empty buffer with room for `n` strings of `bytes` bytes in all.
    pub fn with_capacity_bytes(n: usize, bytes: usize) -> StrBuf {
        let mut b = StrBuf::with_capacity(n);
        b.bytes.reserve(bytes);
        b
    }

    /// Byte length of string `i`.
    #[inline]
    pub fn byte_len(&self, i: usize) -> usize {
        self.offsets[i + 1] - self.offsets[i]
    }

    /// Appends a string.
    #[inline]
    pub fn push(&mut self, s: &str) {
        if self.offsets.is_empty() {
            self.offsets.push(0);
        }
        self.bytes.push_str(s);
        self.offsets.push(self.bytes.len());
    }

    /// Appends a string written by `f` into the buffer's tail.
    #[inline]
    pub fn push_with(&mut self, f: impl FnOnce(&mut String)) {
        if self.offsets.is_empty() {
            self.offsets.push(0);
        }
        f(&mut self.bytes);
        self.offsets.push(self.bytes.len());
    }

    /// Number of strings.
    pub fn len(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    /// Appends every string of `other`: one copy of its bytes, its
    /// offsets shifted.
    pub fn append(&mut self, other: &StrBuf) {
        if self.offsets.is_empty() {
            self.offsets.push(0);
        }
        let base = self.bytes.len();
        self.bytes.push_str(&other.bytes);
        self.offsets
            .extend(other.offsets.iter().skip(1).map(|&o| base + o));
    }

    /// The buffer taken apart, for handing it over without copying (Arrow
    /// results): string `i` is `bytes[offsets[i]..offsets[i + 1]]`;
    /// `offsets` has `len() + 1` entries, or none for an empty buffer made
    /// by `Default`.
    pub fn into_parts(self) -> (Vec<usize>, String) {
        (self.offsets, self.bytes)
    }

    /// String `i`.
    #[inline]
    pub fn get(&self, i: usize) -> &str {
        &self.bytes[self.offsets[i]..self.offsets[i + 1]]
    }
}

/// One string per row.
#[derive(Debug, Clone)]
pub enum Strs<'a> {
    /// Borrowed from the partition (packed strings).
    Views(Vec<&'a str>),
    /// A dictionary's entries, borrowed as they are: reading a dictionary
    /// column costs nothing per entry, so a table-wide dictionary of a
    /// million strings is not copied for every partition.
    Dict(&'a Dictionary),
    /// A dictionary's entries, held: a scan's column of a table-wide
    /// dictionary keeps its codes past the scan (`Array::into_static`,
    /// `Array::concat`), so a composed query's window partitions, join
    /// keys and groups read codes, not strings decoded per row.
    Shared(Arc<Dictionary>),
    /// Computed strings.
    Owned(StrBuf),
    /// Row `i` is entry `codes[i]` of `entries` (a dictionary column, or a
    /// string function applied to one entry at a time).
    Coded {
        /// The distinct strings, shared: a gather of rows (`take`, the merge's
        /// radix split of a dictionary key) copies codes, not the entries
        /// (perf of shapes group_s10k: each of 2,448 pieces copied 10k views,
        /// then probed them cold; half the query was `memcmp` stalling on
        /// their first load).
        entries: Arc<Strs<'a>>,
        /// One entry index per row.
        codes: Vec<u32>,
    },
}

impl<'a> Strs<'a> {
    /// Number of rows.
    pub fn len(&self) -> usize {
        match self {
            Strs::Views(v) => v.len(),
            Strs::Dict(d) => d.len(),
            Strs::Shared(d) => d.len(),
            Strs::Owned(b) => b.len(),
            Strs::Coded { codes, .. } => codes.len(),
        }
    }

    /// The dictionary these strings are the entries of
    /// ([`Strs::Dict`], [`Strs::Shared`]).
    pub fn dictionary(&self) -> Option<&Dictionary> {
        match self {
            Strs::Dict(d) => Some(d),
            Strs::Shared(d) => Some(d),
            _ => None,
        }
    }

    /// Every row's string copied into one buffer, sized first (coded
    /// strings read straight from their entries).
    pub fn to_buf(&self) -> StrBuf {
        owned_strings(self, 0..self.len())
    }

    /// The string of row `i`.
    #[inline]
    pub fn get(&self, i: usize) -> &str {
        match self {
            Strs::Views(v) => v[i],
            Strs::Dict(d) => d.get(i),
            Strs::Shared(d) => d.get(i),
            Strs::Owned(b) => b.get(i),
            Strs::Coded { entries, codes } => entries.get(codes[i] as usize),
        }
    }

    /// `f` of every row's string; for coded strings `f` runs once per entry
    /// (when there are fewer entries than rows) and the results are gathered.
    pub fn map<T: Copy>(&self, f: impl Fn(&str) -> T) -> Vec<T> {
        match self {
            Strs::Coded { entries, codes } if entries.len() <= codes.len() => {
                let per_entry: Vec<T> = (0..entries.len()).map(|i| f(entries.get(i))).collect();
                codes.iter().map(|&c| per_entry[c as usize]).collect()
            }
            _ => (0..self.len()).map(|i| f(self.get(i))).collect(),
        }
    }

    /// A bitmap of `f` over every row's string (per entry for coded strings).
    pub fn map_bits(&self, f: impl Fn(&str) -> bool) -> Bitmap {
        match self {
            Strs::Coded { entries, codes } if entries.len() <= codes.len() => {
                let per_entry = Bitmap::from_fn(entries.len(), |i| f(entries.get(i)));
                Bitmap::from_fn(codes.len(), |i| per_entry.get(codes[i] as usize))
            }
            _ => Bitmap::from_fn(self.len(), |i| f(self.get(i))),
        }
    }

    /// Strings written by `f(s, out)` from every row's string (per entry for
    /// coded strings, keeping the codes).
    pub fn map_strs(&self, mut f: impl FnMut(&str, &mut String)) -> Strs<'static> {
        match self {
            Strs::Coded { entries, codes } if entries.len() <= codes.len() => {
                let mut out = StrBuf::with_capacity(entries.len());
                for i in 0..entries.len() {
                    out.push_with(|buf| f(entries.get(i), buf));
                }
                Strs::Coded {
                    entries: Arc::new(Strs::Owned(out)),
                    codes: codes.clone(),
                }
            }
            _ => {
                let mut out = StrBuf::with_capacity(self.len());
                for i in 0..self.len() {
                    out.push_with(|buf| f(self.get(i), buf));
                }
                Strs::Owned(out)
            }
        }
    }

    /// The rows at positions `idx`, as owned-or-borrowed strings.
    pub fn take(&self, idx: &[u32]) -> Strs<'a> {
        match self {
            Strs::Views(v) => Strs::Views(idx.iter().map(|&i| v[i as usize]).collect()),
            Strs::Dict(d) => Strs::Views(idx.iter().map(|&i| &**d.get(i as usize)).collect()),
            Strs::Shared(d) => Strs::Coded {
                entries: Arc::new(Strs::Shared(d.clone())),
                codes: idx.to_vec(),
            },
            Strs::Coded { entries, codes } => Strs::Coded {
                entries: entries.clone(),
                codes: idx.iter().map(|&i| codes[i as usize]).collect(),
            },
            Strs::Owned(b) => {
                // Sized once: growing by doubling copied every byte about
                // twice more (perf: realloc's memcpy was 7% of a GROUP BY
                // over 100k distinct strings).
                let bytes = idx.iter().map(|&i| b.byte_len(i as usize)).sum();
                let mut out = StrBuf::with_capacity_bytes(idx.len(), bytes);
                for &i in idx {
                    out.push(b.get(i as usize));
                }
                Strs::Owned(out)
            }
        }
    }
}

/// Values of one array, by physical type.
#[derive(Debug, Clone)]
pub enum Data<'a> {
    /// Integers, or timestamps in microseconds.
    Int(Vec<i64>),
    /// Floats, borrowed from an f64 column read without a selection.
    Float(Cow<'a, [f64]>),
    /// Booleans, one bit per row.
    Bool(Bitmap),
    /// Strings.
    Str(Strs<'a>),
}

/// One value per selected row, with a validity bitmap when any is NULL.
///
/// # Invariants
/// `validity`, when present, has the data's length and at least one unset
/// bit is allowed but not required; values at unset bits are arbitrary.
#[derive(Debug, Clone)]
pub struct Array<'a> {
    /// Logical type.
    pub dtype: DataType,
    /// The values.
    pub data: Data<'a>,
    /// Set bits are values, unset bits NULLs; `None` means no NULL.
    pub validity: Option<Bitmap>,
}

/// The result of evaluating an expression over a selection.
#[derive(Debug, Clone)]
pub enum Datum<'a> {
    /// The same value for every row.
    Scalar(Value),
    /// One value per row.
    Array(Array<'a>),
}

impl<'a> Array<'a> {
    /// An array without NULLs.
    pub fn new(dtype: DataType, data: Data<'a>) -> Array<'a> {
        Array {
            dtype,
            data,
            validity: None,
        }
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        match &self.data {
            Data::Int(v) => v.len(),
            Data::Float(v) => v.len(),
            Data::Bool(v) => v.len(),
            Data::Str(v) => v.len(),
        }
    }

    /// Whether row `i` is not NULL.
    #[inline]
    pub fn is_valid(&self, i: usize) -> bool {
        self.validity.as_ref().is_none_or(|v| v.get(i))
    }

    /// The value of row `i` as a [`Value`] (for results and the reference
    /// path; kernels read the typed buffers).
    pub fn value(&self, i: usize) -> Value {
        if !self.is_valid(i) {
            return Value::Null;
        }
        match &self.data {
            Data::Int(v) => Value::from_integer(v[i], self.dtype),
            Data::Float(v) => Value::Float(v[i]),
            Data::Bool(v) => Value::Bool(v.get(i)),
            Data::Str(v) => Value::str(v.get(i)),
        }
    }

    /// The rows at positions `idx` (an index into this array, not the
    /// partition).
    pub fn take(&self, idx: &[u32]) -> Array<'a> {
        let data = match &self.data {
            Data::Int(v) => Data::Int(idx.iter().map(|&i| v[i as usize]).collect()),
            Data::Float(v) => Data::Float(Cow::Owned(idx.iter().map(|&i| v[i as usize]).collect())),
            Data::Bool(b) => Data::Bool(b.gather(idx)),
            Data::Str(s) => Data::Str(s.take(idx)),
        };
        Array {
            dtype: self.dtype,
            data,
            validity: self.validity.as_ref().map(|v| v.gather(idx)),
        }
    }

    /// An array of `n` copies of `v` (NULL included), for the rare operator
    /// that has no scalar form.
    pub fn repeat(dtype: DataType, v: &Value, n: usize) -> Array<'static> {
        let validity = v.is_null().then(|| Bitmap::new(n, false));
        let data = match (dtype, v) {
            (
                DataType::Float,
                Value::Int(x) | Value::Timestamp(x) | Value::Date(x) | Value::Interval(x),
            ) => Data::Float(Cow::Owned(vec![*x as f64; n])),
            (_, Value::Int(x) | Value::Timestamp(x) | Value::Date(x) | Value::Interval(x)) => {
                Data::Int(vec![*x; n])
            }
            (_, Value::Float(x)) => Data::Float(Cow::Owned(vec![*x; n])),
            // Only an integer sum makes a HugeInt, and sums are read by the
            // row evaluator after the merge, never as arrays.
            (DataType::Float, Value::HugeInt(x)) => Data::Float(Cow::Owned(vec![*x as f64; n])),
            (_, Value::HugeInt(x)) => {
                debug_assert!(false, "a HugeInt as an integer array");
                Data::Int(vec![if *x < 0 { i64::MIN } else { i64::MAX }; n])
            }
            (_, Value::Bool(b)) => Data::Bool(Bitmap::new(n, *b)),
            (_, Value::Str(s)) => {
                let mut entries = StrBuf::with_capacity(1);
                entries.push(s);
                Data::Str(Strs::Coded {
                    entries: Arc::new(Strs::Owned(entries)),
                    codes: vec![0; n],
                })
            }
            (DataType::Float, Value::Null) => Data::Float(Cow::Owned(vec![0.0; n])),
            (DataType::Bool, Value::Null) => Data::Bool(Bitmap::new(n, false)),
            (DataType::Str, Value::Null) => Data::Str(Strs::Views(vec![""; n])),
            (_, Value::Null) => Data::Int(vec![0; n]),
        };
        Array {
            dtype,
            data,
            validity,
        }
    }

    /// A result column of `dtype` from its rows' values: as
    /// [`Array::from_values`], but an integer column holding a sum past
    /// i64 ([`Value::HugeInt`]) becomes a float column, as an encoded
    /// intermediate result stores it.
    pub fn from_result_values(dtype: DataType, values: &[Value]) -> Array<'static> {
        if dtype == DataType::Int && values.iter().any(|v| matches!(v, Value::HugeInt(_))) {
            let floats: Vec<Value> = values
                .iter()
                .map(|v| match v {
                    Value::HugeInt(x) => Value::Float(*x as f64),
                    Value::Int(x) => Value::Float(*x as f64),
                    v => v.clone(),
                })
                .collect();
            return Array::from_values(DataType::Float, &floats);
        }
        Array::from_values(dtype, values)
    }

    /// An array of `dtype` from values (NULLs allowed): the bridge from the
    /// row-at-a-time reference semantics.
    pub fn from_values(dtype: DataType, values: &[Value]) -> Array<'static> {
        let n = values.len();
        let validity = values
            .iter()
            .any(Value::is_null)
            .then(|| Bitmap::from_fn(n, |i| !values[i].is_null()));
        let data = match dtype {
            DataType::Int
            | DataType::Timestamp
            | DataType::Date
            | DataType::Interval
            | DataType::Null => Data::Int(
                values
                    .iter()
                    .map(|v| match v {
                        Value::Int(i)
                        | Value::Timestamp(i)
                        | Value::Date(i)
                        | Value::Interval(i) => *i,
                        _ => 0,
                    })
                    .collect(),
            ),
            DataType::Float => Data::Float(Cow::Owned(
                values
                    .iter()
                    .map(|v| match v {
                        Value::Float(f) => *f,
                        Value::Int(i) => *i as f64,
                        _ => 0.0,
                    })
                    .collect(),
            )),
            DataType::Bool => Data::Bool(Bitmap::from_fn(n, |i| {
                matches!(values[i], Value::Bool(true))
            })),
            DataType::Str => {
                let mut b = StrBuf::with_capacity(n);
                for v in values {
                    match v {
                        Value::Str(s) => b.push(s),
                        _ => b.push(""),
                    }
                }
                Data::Str(Strs::Owned(b))
            }
        };
        Array {
            dtype,
            data,
            validity,
        }
    }
}

/// Row id standing for "no row" in [`Array::take_or_null`]: the NULL
/// padding of an outer join.
pub const NO_ROW: u32 = u32::MAX;

impl Array<'_> {
    /// The same values owning their buffers: borrowed floats copied,
    /// strings (views, dictionary entries, codes) copied into one
    /// [`StrBuf`]; a whole result column that outlives its partition.
    pub fn into_static(self) -> Array<'static> {
        let data = match self.data {
            Data::Int(v) => Data::Int(v),
            Data::Float(v) => Data::Float(Cow::Owned(v.into_owned())),
            Data::Bool(b) => Data::Bool(b),
            Data::Str(Strs::Owned(b)) => Data::Str(Strs::Owned(b)),
            Data::Str(Strs::Shared(d)) => Data::Str(Strs::Shared(d)),
            Data::Str(Strs::Coded { entries, codes }) if matches!(&*entries, Strs::Shared(_)) => {
                let Strs::Shared(d) = &*entries else {
                    unreachable!("matched above")
                };
                Data::Str(Strs::Coded {
                    entries: Arc::new(Strs::Shared(d.clone())),
                    codes,
                })
            }
            Data::Str(s) => Data::Str(Strs::Owned(owned_strings(&s, 0..s.len()))),
        };
        Array {
            dtype: self.dtype,
            data,
            validity: self.validity,
        }
    }

    /// Orders rows `i` and `j` as ORDER BY does ([`super::order_values`]
    /// of their values, without making them): NULLs last unless
    /// `nulls_first`, whatever `desc`.
    #[inline]
    pub fn order_rows(&self, i: usize, j: usize, desc: bool, nulls_first: bool) -> Ordering {
        match (self.is_valid(i), self.is_valid(j)) {
            (false, false) => Ordering::Equal,
            (false, true) if nulls_first => Ordering::Less,
            (false, true) => Ordering::Greater,
            (true, false) if nulls_first => Ordering::Greater,
            (true, false) => Ordering::Less,
            (true, true) => {
                let o = match &self.data {
                    Data::Int(v) => v[i].cmp(&v[j]),
                    Data::Float(v) => crate::types::cmp_f64(v[i], v[j]),
                    Data::Bool(b) => b.get(i).cmp(&b.get(j)),
                    Data::Str(s) => s.get(i).as_bytes().cmp(s.get(j).as_bytes()),
                };
                if desc { o.reverse() } else { o }
            }
        }
    }

    /// Approximate heap bytes (for the memory reservation).
    pub fn heap_bytes(&self) -> usize {
        let n = self.len();
        let data = match &self.data {
            Data::Int(_) | Data::Float(_) => 8 * n,
            Data::Bool(_) => n.div_ceil(8),
            Data::Str(Strs::Owned(b)) => 8 * n + b.bytes.len(),
            Data::Str(_) => 16 * n,
        };
        data + self.validity.as_ref().map_or(0, |_| n.div_ceil(8))
    }

    /// The rows at `idx`, [`NO_ROW`] giving NULL: the columns of a join's
    /// result gathered through its row ids. Owned (strings copied once,
    /// sized before copying).
    pub fn take_or_null(&self, idx: &[u32]) -> Array<'static> {
        let n = idx.len();
        let padded = idx.contains(&NO_ROW);
        let at = |i: u32| if i == NO_ROW { 0 } else { i as usize };
        let data = match &self.data {
            Data::Int(v) => Data::Int(
                idx.iter()
                    .map(|&i| v.get(at(i)).copied().unwrap_or(0))
                    .collect(),
            ),
            Data::Float(v) => Data::Float(Cow::Owned(
                idx.iter()
                    .map(|&i| v.get(at(i)).copied().unwrap_or(0.0))
                    .collect(),
            )),
            Data::Bool(b) => Data::Bool(Bitmap::from_fn(n, |j| {
                idx[j] != NO_ROW && b.get(idx[j] as usize)
            })),
            // Rows of coded strings stay codes, their entries copied once.
            Data::Str(Strs::Coded { entries, codes })
                if entries.len() > 0 && entries.len() <= n =>
            {
                Data::Str(Strs::Coded {
                    entries: Arc::new(Strs::Owned(owned_strings(entries, 0..entries.len()))),
                    codes: idx
                        .iter()
                        .map(|&i| if i == NO_ROW { 0 } else { codes[i as usize] })
                        .collect(),
                })
            }
            // Few strings taken many times (a dimension table's column
            // through a join): codes into a copy of them, so the strings
            // are neither copied per row nor hashed again when the rows
            // are encoded.
            Data::Str(s)
                if s.len() > 0
                    && s.len().saturating_mul(4) <= n
                    && !matches!(s, Strs::Coded { .. }) =>
            {
                Data::Str(Strs::Coded {
                    entries: Arc::new(Strs::Owned(owned_strings(s, 0..s.len()))),
                    codes: idx
                        .iter()
                        .map(|&i| if i == NO_ROW { 0 } else { i })
                        .collect(),
                })
            }
            Data::Str(s) => {
                let bytes = idx
                    .iter()
                    .filter(|&&i| i != NO_ROW)
                    .map(|&i| s.get(i as usize).len())
                    .sum();
                let mut out = StrBuf::with_capacity_bytes(n, bytes);
                for &i in idx {
                    out.push(if i == NO_ROW { "" } else { s.get(i as usize) });
                }
                Data::Str(Strs::Owned(out))
            }
        };
        let validity = match &self.validity {
            None if !padded => None,
            None => Some(Bitmap::from_fn(n, |j| idx[j] != NO_ROW)),
            Some(v) => {
                let v = v.dense();
                Some(Bitmap::from_fn(n, |j| {
                    idx[j] != NO_ROW && v.get(idx[j] as usize)
                }))
            }
        };
        Array {
            dtype: self.dtype,
            data,
            validity,
        }
    }
}

/// The dictionary every part's strings are codes of, when each is
/// [`Strs::Coded`] against one [`Strs::Shared`] dictionary.
fn shared_dictionary<'p>(parts: &'p [Array<'_>]) -> Option<&'p Arc<Dictionary>> {
    let mut shared: Option<&'p Arc<Dictionary>> = None;
    for p in parts {
        let Data::Str(Strs::Coded { entries, .. }) = &p.data else {
            return None;
        };
        let Strs::Shared(d) = &**entries else {
            return None;
        };
        match shared {
            Some(s) if !Arc::ptr_eq(s, d) => return None,
            _ => shared = Some(d),
        }
    }
    shared
}

impl<'a> Array<'a> {
    /// This array with the strings of `dict` (the dictionary of the
    /// column it was read from) held rather than borrowed, so that
    /// [`Array::into_static`] keeps the codes instead of copying every
    /// row's string. Other arrays are returned as they are.
    pub fn holding_dictionary(self, dict: &Arc<Dictionary>) -> Array<'a> {
        let data = match self.data {
            Data::Str(Strs::Coded { entries, codes }) if matches!(&*entries, Strs::Dict(d) if std::ptr::eq(*d, &**dict)) => {
                Data::Str(Strs::Coded {
                    entries: Arc::new(Strs::Shared(dict.clone())),
                    codes,
                })
            }
            data => data,
        };
        Array { data, ..self }
    }
}

/// Rows `range` of `s` copied into one buffer, sized before copying.
fn owned_strings(s: &Strs<'_>, range: Range<usize>) -> StrBuf {
    if let Strs::Coded { entries, codes } = s {
        // Entries read straight from a dictionary: `Strs::get` calls
        // itself for coded strings, so it is a call per row (perf of a
        // 1M-row scan to Arrow: a tenth of it).
        let codes = &codes[range];
        return match &**entries {
            Strs::Dict(d) => coded_strings(codes, |c| d.get(c)),
            Strs::Shared(d) => coded_strings(codes, |c| d.get(c)),
            other => coded_strings(codes, |c| other.get(c)),
        };
    }
    let bytes = range.clone().map(|i| s.get(i).len()).sum();
    let mut out = StrBuf::with_capacity_bytes(range.len(), bytes);
    for i in range {
        out.push(s.get(i));
    }
    out
}

/// The strings `entry(codes[i])` copied into one buffer, sized first.
#[inline]
fn coded_strings<'e>(codes: &[u32], entry: impl Fn(usize) -> &'e str) -> StrBuf {
    let bytes = codes.iter().map(|&c| entry(c as usize).len()).sum();
    let mut out = StrBuf::with_capacity_bytes(codes.len(), bytes);
    for &c in codes {
        out.push(entry(c as usize));
    }
    out
}

impl Array<'static> {
    /// One array of type `dtype` holding `parts` one after another (the
    /// per-partition pieces of a result column, in partition order).
    /// Parts must be of `dtype`'s buffer kind; an empty list gives an
    /// empty array.
    pub fn concat(dtype: DataType, parts: Vec<Array<'static>>) -> Array<'static> {
        if parts.len() == 1 {
            return parts
                .into_iter()
                .next()
                .unwrap_or_else(|| Array::from_values(dtype, &[]));
        }
        let n: usize = parts.iter().map(Array::len).sum();
        let validity = parts.iter().any(|p| p.validity.is_some()).then(|| {
            let mut bits = WordAppender::with_capacity(n);
            for p in &parts {
                match &p.validity {
                    Some(v) => bits.append(p.len(), |w| v.word(w)),
                    None => bits.append(p.len(), |_| u64::MAX),
                }
            }
            bits.finish()
        });
        let Some(first) = parts.first() else {
            return Array::from_values(dtype, &[]);
        };
        let kind = std::mem::discriminant(&first.data);
        if parts
            .iter()
            .any(|p| std::mem::discriminant(&p.data) != kind)
        {
            // Pieces of different buffer kinds (a NULL constant beside
            // evaluated strings): through values, rare.
            let values: Vec<Value> = parts
                .iter()
                .flat_map(|p| (0..p.len()).map(move |i| p.value(i)))
                .collect();
            return Array::from_values(dtype, &values);
        }
        let data = match &first.data {
            Data::Int(_) => {
                let mut out = Vec::with_capacity(n);
                for p in &parts {
                    if let Data::Int(v) = &p.data {
                        out.extend_from_slice(v);
                    }
                }
                Data::Int(out)
            }
            Data::Float(_) => {
                let mut out = Vec::with_capacity(n);
                for p in &parts {
                    if let Data::Float(v) = &p.data {
                        out.extend_from_slice(v);
                    }
                }
                Data::Float(Cow::Owned(out))
            }
            Data::Bool(_) => {
                let mut bits = WordAppender::with_capacity(n);
                for p in &parts {
                    if let Data::Bool(b) = &p.data {
                        bits.append(b.len(), |w| b.word(w));
                    }
                }
                Data::Bool(bits.finish())
            }
            Data::Str(_) if shared_dictionary(&parts).is_some() => {
                // One table-wide dictionary's codes throughout: the codes
                // concatenated, the strings left in the dictionary.
                let dict = shared_dictionary(&parts).cloned();
                let mut codes = Vec::with_capacity(n);
                for p in &parts {
                    if let Data::Str(Strs::Coded { codes: c, .. }) = &p.data {
                        codes.extend_from_slice(c);
                    }
                }
                match dict {
                    Some(d) => Data::Str(Strs::Coded {
                        entries: Arc::new(Strs::Shared(d)),
                        codes,
                    }),
                    None => unreachable!("checked by the guard"),
                }
            }
            Data::Str(_) => {
                let bytes = parts
                    .iter()
                    .map(|p| match &p.data {
                        Data::Str(Strs::Owned(b)) => b.bytes.len(),
                        _ => 0,
                    })
                    .sum();
                let mut out = StrBuf::with_capacity_bytes(n, bytes);
                for p in &parts {
                    match &p.data {
                        // Whole buffers (perf of a 1M-row scan to Arrow:
                        // copying string by string was a fifth of it).
                        Data::Str(Strs::Owned(b)) => out.append(b),
                        Data::Str(s) => {
                            for i in 0..s.len() {
                                out.push(s.get(i));
                            }
                        }
                        _ => {}
                    }
                }
                Data::Str(Strs::Owned(out))
            }
        };
        debug_assert_eq!(data_len(&data), n, "parts of one buffer kind");
        Array {
            dtype,
            data,
            validity,
        }
    }
}

/// Bitmaps appended one after another a 64-bit word at a time (shifted
/// when a piece ends inside a word).
struct WordAppender {
    words: Vec<u64>,
    len: usize,
}

impl WordAppender {
    fn with_capacity(bits: usize) -> WordAppender {
        WordAppender {
            words: Vec::with_capacity(bits.div_ceil(64)),
            len: 0,
        }
    }

    /// Appends `n` bits, word `w` of which is `word(w)` (bits past `n`
    /// ignored).
    fn append(&mut self, n: usize, word: impl Fn(usize) -> u64) {
        let shift = self.len % 64;
        for w in 0..n.div_ceil(64) {
            let valid = (n - w * 64).min(64);
            let mut bits = word(w);
            if valid < 64 {
                bits &= (1u64 << valid) - 1;
            }
            match self.words.last_mut() {
                Some(last) if shift > 0 => {
                    *last |= bits << shift;
                    if shift + valid > 64 {
                        self.words.push(bits >> (64 - shift));
                    }
                }
                _ => self.words.push(bits),
            }
        }
        self.len += n;
    }

    fn finish(self) -> Bitmap {
        Bitmap::from_words(self.words, self.len)
    }
}

fn data_len(d: &Data<'_>) -> usize {
    match d {
        Data::Int(v) => v.len(),
        Data::Float(v) => v.len(),
        Data::Bool(v) => v.len(),
        Data::Str(v) => v.len(),
    }
}

impl Datum<'_> {
    /// The value at row `i` (a scalar is the same for every row).
    pub fn value(&self, i: usize) -> Value {
        match self {
            Datum::Scalar(v) => v.clone(),
            Datum::Array(a) => a.value(i),
        }
    }
}

/// The validity of a column at the selected rows (`None`: no NULL there).
pub fn gather_validity(col: &Column, rows: Rows<'_>) -> Option<Bitmap> {
    let v = col.validity.as_ref()?;
    let out = match rows.sel {
        // Packed, since arrays are read bit after bit.
        None => v.dense().into_owned(),
        Some(sel) => v.gather(sel),
    };
    (!out.all_set()).then_some(out)
}

/// Gathers `values[i]` for the rows `rows` (a slice when they are a range),
/// mapped through `f`.
#[inline]
fn gather<T: Copy, U>(values: &[T], rows: Rows<'_>, f: impl Fn(T) -> U) -> Vec<U> {
    match rows.range() {
        Some(r) => values[r].iter().map(|&v| f(v)).collect(),
        // Not a range, so a selection.
        None => rows
            .sel
            .unwrap_or_default()
            .iter()
            .map(|&i| f(values[i as usize]))
            .collect(),
    }
}

/// Decodes a column at the selected rows: offsets and integer dictionary
/// codes to `i64` in one loop per code width, dictionary strings as codes with the dictionary's entries,
/// packed strings as borrowed views, a constant as a scalar.
pub fn decode_column<'a>(col: &'a Column, rows: Rows<'_>) -> Datum<'a> {
    let validity = gather_validity(col, rows);
    let data = match &col.data {
        ColumnData::Const(v) => {
            if validity.is_none() || v.is_null() {
                return Datum::Scalar(v.clone());
            }
            let mut a = Array::repeat(col.dtype, v, rows.len);
            a.validity = validity;
            return Datum::Array(a);
        }
        ColumnData::Offset { base, scale, codes } => {
            let (base, scale) = (*base, *scale);
            Data::Int(if scale == 1 {
                with_codes!(codes, c => gather(c, rows, |x| base.wrapping_add(x.to_u64() as i64)))
            } else {
                with_codes!(codes, c => gather(c, rows, |x| base.wrapping_add(x.to_u64().wrapping_mul(scale) as i64)))
            })
        }
        ColumnData::IntDict { values, codes } => {
            Data::Int(with_codes!(codes, c => gather(c, rows, |x| values[x.to_usize()])))
        }
        ColumnData::Float(v) => match rows.range() {
            Some(r) => Data::Float(Cow::Borrowed(&v[r])),
            None => Data::Float(Cow::Owned(gather(v, rows, |x| x))),
        },
        ColumnData::Dict { dict, codes } => Data::Str(Strs::Coded {
            entries: Arc::new(Strs::Dict(dict)),
            codes: with_codes!(codes, c => gather(c, rows, |x| x.to_u64() as u32)),
        }),
        ColumnData::Packed(p) => Data::Str(Strs::Views(
            (0..rows.len).map(|j| p.get(rows.row(j))).collect(),
        )),
        // The compressed codecs (ALP, linear, delta, RLE, FSST, hex points).
        _ => return crate::exec::codecs::decode_column(col, rows, validity),
    };
    Datum::Array(Array {
        dtype: col.dtype,
        data,
        validity,
    })
}

/// A [`crate::plan::eval::RowSource`] reading decoded values straight from a
/// partition (the reference path for rare expression forms).
pub struct PartitionRow<'a> {
    /// The partition.
    pub part: &'a Partition,
    /// The current row.
    pub row: usize,
}

impl crate::plan::eval::RowSource for PartitionRow<'_> {
    fn column(&self, index: usize) -> Value {
        self.part.columns[index].value(self.row)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn concat_keeps_every_value_across_unaligned_pieces() {
        // Pieces of 70, 1, 64 (without a validity), 0 and 130 rows:
        // validity and booleans shifted across word boundaries.
        let value = |t: DataType, i: usize, nulls: bool| -> Value {
            if nulls && i % 7 == 3 {
                return Value::Null;
            }
            match t {
                DataType::Bool => Value::Bool(i.is_multiple_of(3)),
                DataType::Str => Value::str(&format!("s{}", i % 11)),
                _ => Value::Int(i as i64),
            }
        };
        for t in [DataType::Bool, DataType::Str, DataType::Int] {
            let mut parts = Vec::new();
            let mut all = Vec::new();
            let mut at = 0;
            for n in [70, 1, 64, 0, 130] {
                let values: Vec<Value> = (at..at + n).map(|i| value(t, i, n != 64)).collect();
                let part = Array::from_values(t, &values);
                assert_eq!(part.validity.is_none(), n <= 1 || n == 64);
                all.extend(values);
                parts.push(part);
                at += n;
            }
            let whole = Array::concat(t, parts);
            let back: Vec<Value> = (0..whole.len()).map(|i| whole.value(i)).collect();
            assert_eq!(back, all, "{t:?}");
        }
    }

    #[test]
    fn strings_taken_whole_only_when_every_row_is_utf8() {
        let rows = ["", "é🦗", "a", "", "ß"];
        let mut bytes = Vec::new();
        let mut ends = Vec::new();
        for r in rows {
            bytes.extend_from_slice(r.as_bytes());
            ends.push(bytes.len() as u32);
        }
        let buf = StrBuf::from_parts(bytes.clone(), &ends).unwrap();
        assert_eq!(buf.len(), rows.len());
        for (i, r) in rows.iter().enumerate() {
            assert_eq!(buf.get(i), *r);
        }
        // An end inside a character: the whole buffer is UTF-8, two rows
        // are not.
        let mut split = ends.clone();
        split[1] -= 1;
        assert_eq!(
            StrBuf::from_parts(bytes.clone(), &split).err(),
            Some(bytes.clone())
        );
        // Ends that do not cover the bytes, or go backwards.
        assert!(StrBuf::from_parts(bytes.clone(), &ends[..4]).is_err());
        assert!(StrBuf::from_parts(bytes.clone(), &[3, 1, bytes.len() as u32]).is_err());
        assert!(StrBuf::from_parts(vec![0xff], &[1]).is_err());
        assert_eq!(StrBuf::from_parts(Vec::new(), &[]).map(|b| b.len()), Ok(0));
    }
}
