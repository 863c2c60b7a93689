//! Type inference: which logical type a CSV field's text is, and how the
//! types of many fields widen into one column type.
//!
//! # Rules
//! - Empty text is NULL and says nothing about the type.
//! - Integer: an optional `-`, then ASCII digits with no leading zero unless
//!   the digits are exactly `0` (`0`, `-0`, `42`, `-17`). `038302` is not an
//!   integer (loading it as 38302 would lose the zero). A value with integer
//!   syntax that does not fit in i64 is a string, so nothing is lost.
//! - Float: an optional `-`, then digits with an optional fraction, or a
//!   fraction alone, with an optional exponent (`2.5`, `.5`, `5.`, `-124.0`,
//!   `3e-4`, `0.1234E+30`), containing a `.` or an exponent, with the same
//!   leading-zero rule as integers for the digits before the point. A value
//!   that overflows to infinity (`1e400`) is a string; so are `nan`, `inf`
//!   and `infinity` in any case.
//! - Timestamp: whatever [`crate::types::parse_timestamp`] accepts.
//! - Anything else, including text with surrounding spaces (` 5`) or a plus
//!   sign (`+5`), is a string.
//!
//! A column's type is the join of its values' types in the lattice
//! `Empty < Int < Float < Str` and `Empty < Timestamp < Str`
//! ([`Kind::merge`]): integers mixed with floats make a float column,
//! timestamps mixed with numbers make a string column.

use crate::types::{DataType, parse_timestamp};

/// The narrowest type that holds every value seen so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Only empty (NULL) values so far.
    Empty,
    /// Every value is an integer.
    Int,
    /// Every value is an integer or a float, at least one a float.
    Float,
    /// Every value is a timestamp.
    Timestamp,
    /// Anything else.
    Str,
}

impl Kind {
    /// The least type that holds both `self` and `other`.
    pub(crate) fn merge(self, other: Kind) -> Kind {
        use Kind::*;
        match (self, other) {
            (Empty, k) | (k, Empty) => k,
            (a, b) if a == b => a,
            (Int, Float) | (Float, Int) => Float,
            _ => Str,
        }
    }

    /// Widens `self` to also hold `field` (raw field bytes, quotes removed).
    /// The reference statement of the rules; the loader's
    /// `ColumnBuilder::observe` must agree with it.
    #[cfg(test)]
    pub(crate) fn observe(self, field: &[u8]) -> Kind {
        if field.is_empty() {
            return self;
        }
        match self {
            Kind::Str => Kind::Str,
            Kind::Int => match parse_int(field) {
                IntText::Int(_) => Kind::Int,
                _ => Kind::Int.merge(classify(field)),
            },
            Kind::Timestamp => {
                if is_timestamp(field) {
                    Kind::Timestamp
                } else {
                    Kind::Str
                }
            }
            k => k.merge(classify(field)),
        }
    }

    /// The column type: an all-NULL column is a string column.
    pub(crate) fn data_type(self) -> DataType {
        match self {
            Kind::Empty | Kind::Str => DataType::Str,
            Kind::Int => DataType::Int,
            Kind::Float => DataType::Float,
            Kind::Timestamp => DataType::Timestamp,
        }
    }
}

/// The type of one non-empty field.
#[cfg(test)]
pub(crate) fn classify(field: &[u8]) -> Kind {
    match parse_int(field) {
        IntText::Int(_) => return Kind::Int,
        IntText::Overflow => return Kind::Str,
        IntText::NotInt => {}
    }
    if is_float(field) {
        Kind::Float
    } else if is_timestamp(field) {
        Kind::Timestamp
    } else {
        Kind::Str
    }
}

/// What integer parsing made of a field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum IntText {
    /// Integer syntax, in range.
    Int(i64),
    /// Integer syntax, but outside i64.
    Overflow,
    /// Not integer syntax.
    NotInt,
}

/// Parses integer syntax (see the module rules) from bytes.
#[inline]
pub(crate) fn parse_int(b: &[u8]) -> IntText {
    let (neg, digits) = match b.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, b),
    };
    if digits.is_empty() || (digits[0] == b'0' && digits.len() > 1) {
        return IntText::NotInt;
    }
    // Up to 18 digits cannot overflow i64: no checks in the hot loop.
    if digits.len() <= 18 {
        let mut v: i64 = 0;
        for &c in digits {
            let d = c.wrapping_sub(b'0');
            if d > 9 {
                return IntText::NotInt;
            }
            v = v * 10 + d as i64;
        }
        return IntText::Int(if neg { -v } else { v });
    }
    if !digits.iter().all(u8::is_ascii_digit) {
        return IntText::NotInt;
    }
    // Accumulate negatively so that i64::MIN parses.
    let mut v: i64 = 0;
    for &c in digits {
        match v
            .checked_mul(10)
            .and_then(|v| v.checked_sub((c - b'0') as i64))
        {
            Some(n) => v = n,
            None => return IntText::Overflow,
        }
    }
    if neg {
        IntText::Int(v)
    } else {
        match v.checked_neg() {
            Some(v) => IntText::Int(v),
            None => IntText::Overflow,
        }
    }
}

/// True when `b` has float syntax (see the module rules) and a finite value.
#[cfg(test)]
pub(crate) fn is_float(b: &[u8]) -> bool {
    float_syntax(b) && parse_float(b).is_some_and(f64::is_finite)
}

/// True when `b` has float syntax (see the module rules); the value may
/// still overflow to infinity.
pub(crate) fn float_syntax(b: &[u8]) -> bool {
    let mut i = usize::from(b.first() == Some(&b'-'));
    let int_start = i;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    let int_digits = i - int_start;
    if int_digits > 1 && b[int_start] == b'0' {
        return false;
    }
    let mut frac_digits = 0;
    let mut point = false;
    if i < b.len() && b[i] == b'.' {
        point = true;
        i += 1;
        let s = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        frac_digits = i - s;
    }
    if int_digits + frac_digits == 0 {
        return false;
    }
    let mut exponent = false;
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        exponent = true;
        i += 1;
        if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
            i += 1;
        }
        let s = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if i == s {
            return false;
        }
    }
    i == b.len() && (point || exponent)
}

/// Parses a field already known to have integer or float syntax, correctly
/// rounded (Eisel-Lemire with a big-number fallback, by `fast-float2`).
#[inline]
pub(crate) fn parse_float(b: &[u8]) -> Option<f64> {
    fast_float2::parse::<f64, _>(b).ok()
}

/// True when `b` is a timestamp [`parse_timestamp`] accepts.
#[cfg(test)]
pub(crate) fn is_timestamp(b: &[u8]) -> bool {
    parse_timestamp_bytes(b).is_some()
}

/// [`parse_timestamp`] on bytes, with a cheap shape check first.
#[inline]
pub(crate) fn parse_timestamp_bytes(b: &[u8]) -> Option<i64> {
    if b.len() < 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    parse_timestamp(std::str::from_utf8(b).ok()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn column_kind(values: &[&str]) -> Kind {
        values
            .iter()
            .fold(Kind::Empty, |k, v| k.observe(v.as_bytes()))
    }

    #[test]
    fn single_values_classify() {
        use Kind::*;
        let cases: &[(&str, Kind)] = &[
            ("0", Int),
            ("-0", Int),
            ("42", Int),
            ("-17", Int),
            ("9223372036854775807", Int),
            ("-9223372036854775808", Int),
            ("9223372036854775808", Str),
            ("-9223372036854775809", Str),
            ("99999999999999999999999", Str),
            ("038302", Str),
            ("00", Str),
            ("-07", Str),
            ("+5", Str),
            (" 5", Str),
            ("5 ", Str),
            ("-", Str),
            ("2.5", Float),
            ("-124.0", Float),
            (".5", Float),
            ("-.5", Float),
            ("5.", Float),
            ("3e-4", Float),
            ("1E5", Float),
            ("0.1234e30", Float),
            ("1.123124e+30", Float),
            ("0.0", Float),
            ("00.5", Str),
            (".", Str),
            ("-.", Str),
            ("1e", Str),
            ("e5", Str),
            ("1.2.3", Str),
            ("1e400", Str),
            ("-1e400", Str),
            ("nan", Str),
            ("NaN", Str),
            ("inf", Str),
            ("-inf", Str),
            ("infinity", Str),
            ("Infinity", Str),
            ("+1.5", Str),
            ("2013-01-01", Timestamp),
            ("2013-01-01 23:59:59", Timestamp),
            ("2013-01-01T23:59:59", Timestamp),
            ("2013-01-01T23:59:59.125Z", Timestamp),
            ("2013-02-30", Str),
            ("2013-01-01 23:59", Str),
            ("N", Str),
            ("😈", Str),
        ];
        for &(text, expected) in cases {
            assert_eq!(classify(text.as_bytes()), expected, "{text:?}");
        }
    }

    #[test]
    fn columns_widen() {
        use Kind::*;
        let cases: &[(&[&str], Kind)] = &[
            (&["1", "2", "-3"], Int),
            (&["1", "2.5"], Float),
            (&["2.5", "1"], Float),
            (&["1", "", "2.5", ""], Float),
            (&["0", "1", "N", "Y"], Str),
            (&["N", "Y", "0", "1"], Str),
            (&["1", "038302"], Str),
            (&["1.5", "99999999999999999999"], Str),
            (&["99999999999999999999", "1.5"], Str),
            (&["1", "9223372036854775808"], Str),
            (&["", "", ""], Empty),
            (&[], Empty),
            (
                &["2013-01-01", "2013-01-01 10:00:00", "2013-01-01T10:00:00Z"],
                Timestamp,
            ),
            (&["2013-01-01", "5"], Str),
            (&["5", "2013-01-01"], Str),
            (&["2013-01-01", "1.5"], Str),
            (&["", "2013-01-01", ""], Timestamp),
            (&["1", " 2"], Str),
            (&["1", "nan"], Str),
        ];
        for &(values, expected) in cases {
            assert_eq!(column_kind(values), expected, "{values:?}");
        }
    }

    #[test]
    fn merge_is_a_join() {
        use Kind::*;
        let all = [Empty, Int, Float, Timestamp, Str];
        for a in all {
            assert_eq!(a.merge(Empty), a);
            assert_eq!(a.merge(a), a);
            assert_eq!(a.merge(Str), Str);
            for b in all {
                assert_eq!(a.merge(b), b.merge(a));
                for c in all {
                    assert_eq!(a.merge(b).merge(c), a.merge(b.merge(c)));
                }
            }
        }
        assert_eq!(Int.merge(Float), Float);
        assert_eq!(Timestamp.merge(Int), Str);
        assert_eq!(Empty.data_type(), DataType::Str);
    }

    #[test]
    fn integers_parse_exactly() {
        assert_eq!(parse_int(b"-0"), IntText::Int(0));
        assert_eq!(parse_int(b"-9223372036854775808"), IntText::Int(i64::MIN));
        assert_eq!(parse_int(b"9223372036854775807"), IntText::Int(i64::MAX));
        assert_eq!(parse_int(b"9223372036854775808"), IntText::Overflow);
        assert_eq!(parse_int(b"12a"), IntText::NotInt);
        assert_eq!(parse_int(b""), IntText::NotInt);
    }
}
