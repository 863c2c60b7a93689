//! Type inference: which logical type a CSV field's text is, and how the
//! types of many fields widen into one column type.
//!
//! # Rules
//! - Empty text is NULL and says nothing about the type.
//! - Integer: an optional `-`, then ASCII digits with no leading zero unless
//!   the digits are exactly `0` (`0`, `-0`, `42`, `-17`). `038302` is not an
//!   integer (loading it as 38302 would lose the zero). A value with integer
//!   syntax that does not fit in i64 is a float (its nearest f64), as
//!   DuckDB's sniffer would make it a wider number rather than text.
//! - Float: an optional `-`, then digits with an optional fraction, or a
//!   fraction alone, with an optional exponent (`2.5`, `.5`, `5.`, `-124.0`,
//!   `3e-4`, `0.1234E+30`), containing a `.` or an exponent, with the same
//!   leading-zero rule as integers for the digits before the point; a value
//!   beyond f64 is ±infinity (`1e400`). Also `nan`, `inf` and `infinity` in
//!   any case, with an optional `-`: what DuckDB reads as DOUBLE (checked
//!   with DuckDB 1.x, where `+inf`, like `+5`, is text).
//! - Date: `YYYY-MM-DD` alone, a valid date (`2013-02-30` is text, as
//!   DuckDB's sniffer makes it VARCHAR).
//! - Timestamp: whatever else [`crate::types::parse_timestamp`] accepts, or
//!   a layout of the load's timestamp formats.
//! - Anything else, including text with surrounding spaces (` 5`) or a plus
//!   sign (`+5`), is a string.
//!
//! A column's type is the join of its values' types in the lattice
//! `Empty < Int < Float < Str` and `Empty < Date < Timestamp < Str`
//! ([`Kind::merge`]): integers mixed with floats make a float column,
//! dates mixed with timestamps a timestamp column (a date is its
//! midnight), timestamps mixed with numbers make a string column.

use std::sync::Arc;

use crate::types::{DataType, TimestampFormat, parse_timestamp};

/// The narrowest type that holds every value seen so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Only empty (NULL) values so far.
    Empty,
    /// Every value is an integer.
    Int,
    /// Every value is an integer or a float, at least one a float.
    Float,
    /// Every value is an ISO date alone (`YYYY-MM-DD`).
    Date,
    /// Every value is a timestamp or a date, at least one a timestamp.
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
            (Date, Timestamp) | (Timestamp, Date) => Timestamp,
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
            Kind::Timestamp | Kind::Date => {
                if is_timestamp(field) {
                    self.merge(classify(field))
                } else {
                    Kind::Str
                }
            }
            k => k.merge(classify(field)),
        }
    }

    /// The column type: a column with no value is of type NULL.
    pub(crate) fn data_type(self) -> DataType {
        match self {
            Kind::Empty => DataType::Null,
            Kind::Str => DataType::Str,
            Kind::Int => DataType::Int,
            Kind::Float => DataType::Float,
            Kind::Timestamp => DataType::Timestamp,
            Kind::Date => DataType::Date,
        }
    }
}

/// The type of one non-NULL field.
#[cfg(test)]
pub(crate) fn classify(field: &[u8]) -> Kind {
    match parse_int(field) {
        IntText::Int(_) => return Kind::Int,
        IntText::Overflow => return Kind::Float,
        IntText::NotInt => {}
    }
    if is_float(field) {
        Kind::Float
    } else if is_timestamp(field) {
        if crate::types::is_iso_date_shape(field) {
            Kind::Date
        } else {
            Kind::Timestamp
        }
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

/// What [`parse_number`] made of a field.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Number {
    /// Integer syntax with at most 18 digits: what [`parse_int`] gives.
    Int(i64),
    /// Float syntax without an exponent, with at most 19 digits, at most 22
    /// after the point and a value of at most 2^53 units of the last place:
    /// exactly what [`parse_float`] gives.
    Float(f64),
    /// Float syntax without an exponent, too long for the fast path: ask
    /// [`parse_float`] for the value (which may still overflow).
    Decimal,
    /// Anything else: ask [`parse_int`], [`float_syntax`] and
    /// [`parse_float`].
    Other,
}

/// Exact powers of ten as f64 (all up to 10^22 are representable).
const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// Parses the common short numbers in one pass: `-`? digits (no leading
/// zero), optionally followed by `.` and digits.
///
/// A float is the digits as an integer `w` divided by `10^k`, `k` being
/// the number of digits after the point; with `w <= 2^53` and `k <= 22`
/// both are exact f64 values and one IEEE division rounds correctly, so
/// the result is the correctly rounded value of the text (Clinger's fast
/// path, "How to read floating point numbers accurately", PLDI 1990).
#[inline]
pub(crate) fn parse_number(b: &[u8]) -> Number {
    let (neg, d) = match b.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, b),
    };
    let mut w: u64 = 0;
    let mut i = 0;
    while i < d.len() {
        let x = d[i].wrapping_sub(b'0');
        if x > 9 {
            break;
        }
        w = w.wrapping_mul(10).wrapping_add(x as u64);
        i += 1;
    }
    let int_digits = i;
    if int_digits > 1 && d[0] == b'0' {
        return Number::Other;
    }
    if i == d.len() {
        return if int_digits == 0 || int_digits > 18 {
            Number::Other
        } else {
            let v = w as i64;
            Number::Int(if neg { -v } else { v })
        };
    }
    if d[i] != b'.' {
        return Number::Other;
    }
    i += 1;
    let frac_start = i;
    while i < d.len() {
        let x = d[i].wrapping_sub(b'0');
        if x > 9 {
            return Number::Other;
        }
        w = w.wrapping_mul(10).wrapping_add(x as u64);
        i += 1;
    }
    let frac_digits = i - frac_start;
    if int_digits + frac_digits == 0 {
        return Number::Other;
    }
    if int_digits + frac_digits > 19 || frac_digits > 22 || w > 1 << 53 {
        return Number::Decimal;
    }
    let f = w as f64 / POW10[frac_digits];
    Number::Float(if neg { -f } else { f })
}

/// Parses timestamps like [`parse_timestamp`], remembering the last date
/// seen: a column of timestamps repeats its date from row to row, so most
/// values only need their time of day read.
/// A value ISO 8601 does not read is tried with the load's layouts (the
/// CSV options `timestampformat` and `dateformat`), in order.
#[derive(Debug, Default, Clone)]
pub(crate) struct DateCache {
    date: [u8; 10],
    micros: i64,
    valid: bool,
    formats: Formats,
}

/// The layouts a load reads timestamps in besides ISO 8601, shared by its
/// columns ([`crate::LoadOptions::timestamp_formats`]).
pub(crate) type Formats = Option<Arc<[Arc<TimestampFormat>]>>;

impl DateCache {
    /// A cache that also reads `formats`.
    pub(crate) fn with_formats(formats: Formats) -> DateCache {
        DateCache {
            formats,
            ..DateCache::default()
        }
    }

    /// The layouts this cache reads besides ISO 8601.
    pub(crate) fn formats(&self) -> Formats {
        self.formats.clone()
    }

    /// [`parse_timestamp`] on bytes, then the layouts.
    #[inline]
    pub(crate) fn parse(&mut self, b: &[u8]) -> Option<i64> {
        match self.iso(b) {
            Some(t) => Some(t),
            None => match &self.formats {
                None => None,
                Some(formats) => {
                    let s = std::str::from_utf8(b).ok()?;
                    formats.iter().find_map(|f| f.parse(s))
                }
            },
        }
    }

    /// [`parse_timestamp`] on bytes, with the cached date.
    #[inline]
    fn iso(&mut self, b: &[u8]) -> Option<i64> {
        if b.len() < 10 || b[4] != b'-' || b[7] != b'-' {
            return None;
        }
        if !(self.valid && b[..10] == self.date) {
            // A timestamp's date is a timestamp of its own.
            let day = parse_timestamp(std::str::from_utf8(&b[..10]).ok()?)?;
            self.date.copy_from_slice(&b[..10]);
            self.micros = day;
            self.valid = true;
        }
        if b.len() == 10 {
            return Some(self.micros);
        }
        if b.len() == 19 && (b[10] == b' ' || b[10] == b'T') && b[13] == b':' && b[16] == b':' {
            let two = |i: usize| {
                let (h, l) = (b[i].wrapping_sub(b'0'), b[i + 1].wrapping_sub(b'0'));
                (h <= 9 && l <= 9).then_some(h as i64 * 10 + l as i64)
            };
            let (hour, minute, second) = (two(11)?, two(14)?, two(17)?);
            if hour > 23 || minute > 59 || second > 59 {
                return None;
            }
            return Some(self.micros + ((hour * 60 + minute) * 60 + second) * 1_000_000);
        }
        parse_timestamp(std::str::from_utf8(b).ok()?)
    }
}

/// True when `b` is a float (see the module rules).
#[cfg(test)]
pub(crate) fn is_float(b: &[u8]) -> bool {
    float_value(b).is_some()
}

/// The value of a field that is a float by the module rules, other than an
/// integer: float syntax or a special value.
#[inline]
pub(crate) fn float_value(b: &[u8]) -> Option<f64> {
    if float_syntax(b) {
        parse_float(b)
    } else {
        special_float(b)
    }
}

/// `nan`, `inf` or `infinity` in any case, with an optional `-`.
pub(crate) fn special_float(b: &[u8]) -> Option<f64> {
    let (neg, word) = match b.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, b),
    };
    let f = if word.eq_ignore_ascii_case(b"nan") {
        f64::NAN
    } else if word.eq_ignore_ascii_case(b"inf") || word.eq_ignore_ascii_case(b"infinity") {
        f64::INFINITY
    } else {
        return None;
    };
    Some(if neg { -f } else { f })
}

/// Which of the narrower-than-string types a non-NULL field fits: a bit set
/// of [`FITS_NUMBER`] (integer or float) and [`FITS_TIMESTAMP`].
pub(crate) fn fits(b: &[u8], dates: &mut DateCache) -> u8 {
    let number = match parse_int(b) {
        IntText::Int(_) | IntText::Overflow => true,
        IntText::NotInt => float_value(b).is_some(),
    };
    let timestamp = !number && dates.parse(b).is_some();
    (u8::from(number) * FITS_NUMBER) | (u8::from(timestamp) * FITS_TIMESTAMP)
}

/// A value that is an integer or a float.
pub(crate) const FITS_NUMBER: u8 = 1;
/// A value that is a timestamp.
pub(crate) const FITS_TIMESTAMP: u8 = 2;

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
#[cfg(test)]
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
            ("9223372036854775808", Float),
            ("-9223372036854775809", Float),
            ("99999999999999999999999", Float),
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
            ("1e400", Float),
            ("-1e400", Float),
            ("nan", Float),
            ("NaN", Float),
            ("inf", Float),
            ("-inf", Float),
            ("infinity", Float),
            ("Infinity", Float),
            ("-INFINITY", Float),
            ("-nan", Float),
            ("+inf", Str),
            ("+nan", Str),
            ("infinit", Str),
            ("nana", Str),
            ("--inf", Str),
            ("0099999999999999999999", Str),
            ("+1.5", Str),
            ("2013-01-01", Date),
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
            (&["1.5", "99999999999999999999"], Float),
            (&["99999999999999999999", "1.5"], Float),
            (&["1", "9223372036854775808"], Float),
            (&["9223372036854775808", "1"], Float),
            (&["2013-01-01", "nan"], Str),
            (&["", "", ""], Empty),
            (&[], Empty),
            (
                &["2013-01-01", "2013-01-01 10:00:00", "2013-01-01T10:00:00Z"],
                Timestamp,
            ),
            (&["2013-01-01", "5"], Str),
            (&["5", "2013-01-01"], Str),
            (&["2013-01-01", "1.5"], Str),
            (&["", "2013-01-01", ""], Date),
            (&["2013-01-01", "2012-02-29"], Date),
            (&["2013-01-01", "2013-02-30"], Str),
            (&["2013-01-01 10:00:00", "2013-01-02"], Timestamp),
            (&["1", " 2"], Str),
            (&["1", "nan"], Float),
            (&["-inf", "1"], Float),
        ];
        for &(values, expected) in cases {
            assert_eq!(column_kind(values), expected, "{values:?}");
        }
    }

    #[test]
    fn merge_is_a_join() {
        use Kind::*;
        let all = [Empty, Int, Float, Date, Timestamp, Str];
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
        assert_eq!(Date.merge(Timestamp), Timestamp);
        assert_eq!(Date.merge(Int), Str);
        assert_eq!(Date.data_type(), DataType::Date);
        assert_eq!(Empty.data_type(), DataType::Null);
    }

    #[test]
    fn the_number_fast_path_agrees_with_the_slow_one() {
        let mut samples: Vec<String> = [
            "0",
            "-0",
            "7",
            "-7",
            "00",
            "01",
            "-01",
            "0.0",
            "-0.0",
            "0.5",
            ".5",
            "-.5",
            "5.",
            "-5.",
            ".",
            "-.",
            "-",
            "",
            "1.2.3",
            "1e5",
            "12a",
            "123456789012345678",
            "1234567890123456789",
            "-123456789012345678",
            "9007199254740992",
            "9007199254740993",
            "9007199254740993.0",
            "900719925474099.3",
            "0.1",
            "0.2",
            "0.3",
            "2.675",
            "1.005",
            "123456.789012",
            "0.0000000000000000000001",
            "0.00000000000000000000001",
            "1.0000000000000000001",
            "99999999999999999.99",
            "-73.982978",
            "40.716917",
            "8.84309",
            "4.27",
            "190.02",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let mut state = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..20_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let digits = (state % 20) as usize + 1;
            let point = (state >> 8) as usize % (digits + 2);
            let mut text = String::new();
            if state >> 20 & 1 == 1 {
                text.push('-');
            }
            let mut x = state >> 24;
            for i in 0..digits {
                if i == point {
                    text.push('.');
                }
                text.push((b'0' + (x % 10) as u8) as char);
                x = (x / 10) ^ (state >> i);
            }
            samples.push(text);
        }
        for text in &samples {
            let b = text.as_bytes();
            match parse_number(b) {
                Number::Int(v) => assert_eq!(parse_int(b), IntText::Int(v), "{text}"),
                Number::Float(f) => {
                    assert_eq!(parse_int(b), IntText::NotInt, "{text}");
                    assert!(float_syntax(b), "{text}");
                    let slow = parse_float(b).unwrap();
                    assert_eq!(f.to_bits(), slow.to_bits(), "{text}");
                }
                Number::Decimal => {
                    assert_eq!(parse_int(b), IntText::NotInt, "{text}");
                    assert!(float_syntax(b), "{text}");
                }
                Number::Other => {}
            }
        }
        assert_eq!(parse_number(b"-73.982978"), Number::Float(-73.982978));
        assert_eq!(parse_number(b"42"), Number::Int(42));
        assert_eq!(parse_number(b"038302"), Number::Other);
        assert_eq!(parse_number(b"1e5"), Number::Other);
        assert_eq!(parse_number(b"-73.937767028808594"), Number::Decimal);
    }

    #[test]
    fn the_date_cache_agrees_with_parse_timestamp() {
        let samples = [
            "2013-01-01",
            "2013-01-01 00:00:00",
            "2013-01-01 23:59:59",
            "2013-01-01T23:59:59",
            "2013-01-01T23:59:59Z",
            "2013-01-01 23:59:59Z",
            "2013-01-01 24:00:00",
            "2013-01-01 23:60:00",
            "2013-01-01 23:59:60",
            "2013-01-01 2:59:59",
            "2013-01-01 23:59:5x",
            "2013-01-01 23:59:59.5",
            "2013-01-01 23:59:59.123456789",
            "2013-01-01x23:59:59",
            "2013-01-01 23-59-59",
            "2013-01-02 10:00:00",
            "2012-02-29 10:00:00",
            "2013-02-29 10:00:00",
            "2013-02-29",
            "2013-13-01",
            "2013-1-01",
            "2013-01-01 ",
            "2013-01-01 23:59",
            "2013-01-0Ã 23:59:59",
            "1969-12-31 23:59:59",
            "0001-01-01 00:00:00",
        ];
        let mut cache = DateCache::default();
        // Twice through, so that every value meets a warm cache too.
        for text in samples
            .iter()
            .chain(samples.iter())
            .chain(samples.iter().rev())
        {
            assert_eq!(
                cache.parse(text.as_bytes()),
                parse_timestamp_bytes(text.as_bytes()),
                "{text}"
            );
        }
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
