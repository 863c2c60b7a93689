//! Decoding any codec into typed buffers: the one API the executor's
//! general path needs to read a column it has no kernel for.
//!
//! [`Column::decode_range`] and [`Column::decode_selection`] return the
//! values of some rows as `i64` (integers and timestamps, in
//! microseconds), `f64` or strings ([`StringBatch`]), whatever the codec.
//! Values at NULL rows are unspecified (the validity bitmap says which rows
//! are NULL). Callers decode a batch at a time: nothing here materializes a
//! whole column unless asked for every row.

use std::ops::Range;

use super::codes::Code;
use super::column::{Column, ColumnData};
use super::fsst::StringBatch;
use crate::store::with_codes;
use crate::types::{DataType, Value};

/// Some rows of a column, decoded, by physical type.
#[derive(Debug, Clone, PartialEq)]
pub enum Decoded {
    /// Integers, timestamps (microseconds), booleans as 0/1.
    Ints(Vec<i64>),
    /// Floats.
    Floats(Vec<f64>),
    /// Strings.
    Strings(StringBatch),
}

impl Decoded {
    /// An empty buffer for a column of type `dtype`.
    pub fn empty(dtype: DataType) -> Decoded {
        match dtype {
            DataType::Float => Decoded::Floats(Vec::new()),
            DataType::Str => Decoded::Strings(StringBatch::new()),
            _ => Decoded::Ints(Vec::new()),
        }
    }

    /// Number of values.
    pub fn len(&self) -> usize {
        match self {
            Decoded::Ints(v) => v.len(),
            Decoded::Floats(v) => v.len(),
            Decoded::Strings(s) => s.len(),
        }
    }

    /// True when there are no values.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Removes every value, keeping the allocation.
    pub fn clear(&mut self) {
        match self {
            Decoded::Ints(v) => v.clear(),
            Decoded::Floats(v) => v.clear(),
            Decoded::Strings(s) => s.clear(),
        }
    }
}

/// The rows to decode.
#[derive(Clone, Copy)]
enum Rows<'s> {
    Range(usize, usize),
    Sel(&'s [u32]),
}

impl Rows<'_> {
    fn len(&self) -> usize {
        match self {
            Rows::Range(a, b) => b - a,
            Rows::Sel(s) => s.len(),
        }
    }

    fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        let (range, sel): (Range<usize>, &[u32]) = match *self {
            Rows::Range(a, b) => (a..b, &[]),
            Rows::Sel(s) => (0..0, s),
        };
        range.chain(sel.iter().map(|&r| r as usize))
    }
}

impl Column {
    /// The values of rows `range`.
    ///
    /// # Panics
    /// If the range is out of bounds.
    pub fn decode_range(&self, range: Range<usize>) -> Decoded {
        let mut out = Decoded::empty(self.dtype);
        self.decode_into(Rows::Range(range.start, range.end), &mut out);
        out
    }

    /// The values of the rows in `selection` (ascending).
    ///
    /// # Panics
    /// If a row is out of bounds; debug builds assert the order.
    pub fn decode_selection(&self, selection: &[u32]) -> Decoded {
        debug_assert!(selection.windows(2).all(|w| w[0] < w[1]));
        let mut out = Decoded::empty(self.dtype);
        self.decode_into(Rows::Sel(selection), &mut out);
        out
    }

    /// Appends the values of rows `range` to `out` (a buffer of this
    /// column's physical type, see [`Decoded::empty`]), for callers that
    /// reuse one buffer across batches.
    ///
    /// # Panics
    /// If the range is out of bounds or `out` has another type.
    pub fn decode_range_into(&self, range: Range<usize>, out: &mut Decoded) {
        self.decode_into(Rows::Range(range.start, range.end), out);
    }

    fn decode_into(&self, rows: Rows<'_>, out: &mut Decoded) {
        let n = rows.len();
        // Sized once, whatever the codec appends piece by piece.
        match out {
            Decoded::Ints(v) => v.reserve(n),
            Decoded::Floats(v) => v.reserve(n),
            Decoded::Strings(_) => {}
        }
        match (&self.data, out) {
            (ColumnData::Const(v), out) => push_const(v, n, out),
            (ColumnData::Offset { base, scale, codes }, Decoded::Ints(out)) => {
                let (base, scale) = (*base, *scale);
                with_codes!(codes, c => out.extend(rows.iter().map(|i| {
                    base.wrapping_add(c[i].to_u64().wrapping_mul(scale) as i64)
                })));
            }
            (ColumnData::IntDict { values, codes }, Decoded::Ints(out)) => {
                with_codes!(codes, c => out.extend(rows.iter().map(|i| values[c[i].to_usize()])));
            }
            (ColumnData::Float(v), Decoded::Floats(out)) => match rows {
                Rows::Range(a, b) => out.extend_from_slice(&v[a..b]),
                Rows::Sel(s) => out.extend(s.iter().map(|&i| v[i as usize])),
            },
            (ColumnData::Dict { dict, codes }, Decoded::Strings(out)) => {
                with_codes!(codes, c => {
                    for i in rows.iter() {
                        out.push(dict.get(c[i].to_usize()).as_bytes());
                    }
                });
            }
            (ColumnData::Packed(p), Decoded::Strings(out)) => {
                for i in rows.iter() {
                    out.push(p.bytes_of(i));
                }
            }
            (ColumnData::Linear(l), Decoded::Ints(out)) => match rows {
                Rows::Range(a, b) => l.decode_range(a..b, out),
                Rows::Sel(s) => l.decode_selection(s, out),
            },
            (ColumnData::Delta(d), Decoded::Ints(out)) => match rows {
                Rows::Range(a, b) => d.decode_range(a..b, out),
                Rows::Sel(s) => d.decode_selection(s, out),
            },
            (ColumnData::Runs(r), Decoded::Ints(out)) => match rows {
                Rows::Range(a, b) => r.decode_range(a..b, out),
                Rows::Sel(s) => r.decode_selection(s, out),
            },
            (ColumnData::Alp(a), Decoded::Floats(out)) => match rows {
                Rows::Range(x, y) => a.decode_range(x..y, out),
                Rows::Sel(s) => a.decode_selection(s, out),
            },
            (ColumnData::Single(f), Decoded::Floats(out)) => match rows {
                Rows::Range(a, b) => f.decode_range(a..b, out),
                Rows::Sel(s) => f.decode_selection(s, out),
            },
            (ColumnData::FloatRuns(r), Decoded::Floats(out)) => match rows {
                Rows::Range(a, b) => r.decode_range(a..b, out),
                Rows::Sel(s) => r.decode_selection(s, out),
            },
            (ColumnData::DictRuns { dict, runs }, Decoded::Strings(out)) => {
                let mut codes = Vec::with_capacity(n);
                match rows {
                    Rows::Range(a, b) => runs.decode_range(a..b, &mut codes),
                    Rows::Sel(s) => runs.decode_selection(s, &mut codes),
                }
                for c in codes {
                    out.push(dict.get(c as usize).as_bytes());
                }
            }
            (ColumnData::Fsst(f), Decoded::Strings(out)) => match rows {
                Rows::Range(a, b) => f.decode_range(a..b, out),
                Rows::Sel(s) => f.decode_selection(s, out),
            },
            (ColumnData::HexPoints(p), Decoded::Strings(out)) => match rows {
                Rows::Range(a, b) => p.decode_range(a..b, out),
                Rows::Sel(s) => p.decode_selection(s, out),
            },
            (_, out) => {
                // A codec that does not hold this column's type: a bug.
                debug_assert!(false, "{} into {out:?}", self.encoding_name());
                for _ in 0..n {
                    match out {
                        Decoded::Ints(v) => v.push(0),
                        Decoded::Floats(v) => v.push(0.0),
                        Decoded::Strings(s) => s.push(b""),
                    }
                }
            }
        }
    }
}

fn push_const(v: &Value, n: usize, out: &mut Decoded) {
    match out {
        Decoded::Ints(o) => {
            let x = match v {
                Value::Int(x) | Value::Timestamp(x) | Value::Date(x) | Value::Interval(x) => *x,
                Value::Bool(b) => *b as i64,
                _ => 0,
            };
            o.extend(std::iter::repeat_n(x, n));
        }
        Decoded::Floats(o) => o.extend(std::iter::repeat_n(v.as_f64().unwrap_or(0.0), n)),
        Decoded::Strings(o) => {
            let s = match v {
                Value::Str(s) => s.as_bytes(),
                _ => b"",
            };
            for _ in 0..n {
                o.push(s);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Bitmap;

    /// Every codec decodes ranges and selections to what `value` says.
    #[test]
    fn ranges_and_selections_agree_with_value() {
        let n = 3000usize;
        let ints: Vec<Vec<i64>> = vec![
            (0..n as i64).collect(),
            (0..n as i64).map(|i| i / 700).collect(),
            (0..n as i64)
                .scan(0i64, |t, i| {
                    *t += (i * 7919) % 20;
                    Some(*t)
                })
                .collect(),
            // Scrambled (no line, runs or small deltas): offsets.
            (0..n as i64)
                .map(|i| ((i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 54) as i64)
                .collect(),
            vec![5; n],
        ];
        let floats: Vec<Vec<f64>> = vec![
            (0..n).map(|i| (i * 37 % 1000) as f64 / 100.0).collect(),
            (0..n).map(|i| (i / 500) as f64 * 0.5).collect(),
            (0..n).map(|i| (i as f64).sqrt()).collect(),
        ];
        let owned: Vec<Vec<String>> = vec![
            (0..n).map(|i| format!("name-{}", i % 7)).collect(),
            (0..n).map(|i| format!("run-{}", i / 1000)).collect(),
            (0..n)
                .map(|i| format!("a fairly long string {i}"))
                .collect(),
        ];
        let validity = Bitmap::from_bools(&(0..n).map(|i| i % 5 != 2).collect::<Vec<_>>());
        let mut columns = Vec::new();
        for v in [None, Some(validity)] {
            for x in &ints {
                columns.push(Column::encode_ints(DataType::Int, x, v.clone()));
            }
            for x in &floats {
                columns.push(Column::encode_floats(x.clone(), v.clone()));
            }
            for x in &owned {
                let s: Vec<&str> = x.iter().map(String::as_str).collect();
                columns.push(Column::encode_strings(&s, v.clone()));
            }
        }
        let sel: Vec<u32> = (0..n as u32).filter(|i| i % 3 != 1).collect();
        for c in &columns {
            let expect = |i: usize| c.value(i);
            let check = |d: &Decoded, rows: &mut dyn Iterator<Item = usize>| {
                for (j, i) in rows.enumerate() {
                    if !c.is_valid(i) {
                        continue;
                    }
                    let got = match d {
                        Decoded::Ints(v) => Value::Int(v[j]),
                        Decoded::Floats(v) => Value::Float(v[j]),
                        Decoded::Strings(s) => Value::str(s.get(j)),
                    };
                    assert_eq!(got, expect(i), "{} row {i}", c.encoding_name());
                }
            };
            check(&c.decode_range(100..2900), &mut (100..2900));
            check(
                &c.decode_selection(&sel),
                &mut sel.iter().map(|&i| i as usize),
            );
            assert!(c.decode_range(7..7).is_empty());
        }
        let names: Vec<String> = columns.iter().map(Column::encoding_name).collect();
        for want in [
            "linear", "rle", "delta", "offset", "const", "alp", "f64", "dict", "fsst",
        ] {
            assert!(
                names.iter().any(|n| n.starts_with(want)),
                "{want}: {names:?}"
            );
        }
    }
}
