//! Keys of rows read from whole columns: the values a join, a semi-join
//! or a window partition compares, borrowed from the columns' buffers (a
//! string is a `&str` into them), hashed and compared as SQL's equality
//! does.

use crate::exec::vector::{Array, Data};
use crate::types::{DataType, canonical_f64_bits};

/// A key: one integer, or one, two or more parts borrowed from the
/// scanned columns (no allocation up to two parts).
#[derive(Clone, PartialEq, Eq, Hash)]
pub(crate) enum Key<'a> {
    /// One integer.
    Int(i64),
    /// One part that is not an integer.
    One(Part<'a>),
    /// Two parts.
    Two(Part<'a>, Part<'a>),
    /// Three or more parts.
    Many(Vec<Part<'a>>),
}

impl<'a> Key<'a> {
    /// The key of `n` parts, part `i` being `part(i)`; `None` when a part
    /// is NULL (which matches nothing). One integer part is `Key::Int`.
    #[inline]
    pub(crate) fn of(n: usize, mut part: impl FnMut(usize) -> Option<Part<'a>>) -> Option<Key<'a>> {
        Some(match n {
            1 => match part(0)? {
                Part::Int(x) => Key::Int(x),
                p => Key::One(p),
            },
            2 => Key::Two(part(0)?, part(1)?),
            _ => Key::Many((0..n).map(part).collect::<Option<Vec<_>>>()?),
        })
    }
}

/// One non-NULL value of a key, as it compares: integers and floats meet
/// as floats when the two sides' types differ; floats by their canonical
/// bits (`-0.0` = `0.0`, one NaN).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Part<'a> {
    Int(i64),
    Timestamp(i64),
    Float(u64),
    Bool(bool),
    Str(&'a str),
}

impl<'a> Part<'a> {
    /// Row `row` of `a`; `None` when NULL.
    #[inline]
    pub(crate) fn of_array(a: &'a Array<'static>, row: usize, float: bool) -> Option<Part<'a>> {
        if !a.is_valid(row) {
            return None;
        }
        Some(match &a.data {
            Data::Int(v) if float => Part::Float(canonical_f64_bits(v[row] as f64)),
            Data::Int(v) if a.dtype == DataType::Timestamp => Part::Timestamp(v[row]),
            Data::Int(v) => Part::Int(v[row]),
            Data::Float(v) => Part::Float(canonical_f64_bits(v[row])),
            Data::Bool(b) => Part::Bool(b.get(row)),
            Data::Str(s) => Part::Str(s.get(row)),
        })
    }
}
