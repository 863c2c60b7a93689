//! Logical types and scalar values, shared by every layer.
//!
//! # Design
//! A column has one logical [`DataType`]; how its values are laid out in a
//! partition (the codec) is the store's business. A [`Value`] is one decoded
//! scalar: what the reference evaluator computes with and what query results
//! hold. Timestamps are microseconds since 1970-01-01 00:00:00 UTC, without a
//! time zone; dates are whole days since 1970-01-01. Both are integers
//! underneath, stored in the integer codecs and computed on as integers:
//! only conversion, display and calendar functions tell them apart.

use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

/// The logical type of a column or expression.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DataType {
    /// 64-bit signed integer.
    Int,
    /// 64-bit IEEE float.
    Float,
    /// Microseconds since the Unix epoch, no time zone.
    Timestamp,
    /// A calendar date: days since 1970-01-01 (proleptic Gregorian).
    Date,
    /// A fixed length of time in microseconds (what `timestamp − timestamp`
    /// gives); shown as DuckDB shows one, `1 day 03:00:00`. Calendar months
    /// are not fixed lengths and have no interval value.
    Interval,
    /// UTF-8 text.
    Str,
    /// Result of a comparison or logical operator; never inferred at load.
    Bool,
    /// A column with no value at all (every field empty): no evidence for
    /// a type. Every operator and aggregate takes it as NULL (`sum` gives
    /// NULL, `count` 0), as DuckDB does with an all-NULL column.
    Null,
}

impl DataType {
    /// The SQL name shown by `.schema` and in error messages.
    pub fn name(self) -> &'static str {
        match self {
            DataType::Int => "integer",
            DataType::Float => "float",
            DataType::Timestamp => "timestamp",
            DataType::Date => "date",
            DataType::Interval => "interval",
            DataType::Str => "string",
            DataType::Bool => "boolean",
            DataType::Null => "null",
        }
    }

    /// True for integer and float.
    pub fn is_numeric(self) -> bool {
        matches!(self, DataType::Int | DataType::Float)
    }

    /// True for the types held as an i64 in the integer codecs: integer,
    /// timestamp (µs), date (days) and interval (µs).
    pub fn is_integer_backed(self) -> bool {
        matches!(
            self,
            DataType::Int | DataType::Timestamp | DataType::Date | DataType::Interval
        )
    }

    /// True for timestamp and date.
    pub fn is_temporal(self) -> bool {
        matches!(self, DataType::Timestamp | DataType::Date)
    }
}

impl fmt::Display for DataType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One decoded scalar value.
///
/// # Invariants
/// `Eq` and `Hash` treat floats by value with `-0.0 == 0.0` and all NaNs
/// equal, so a `Value` can be a group key. [`Value::total_cmp`] is the order
/// of `ORDER BY`: NULL sorts after every other value (PostgreSQL's default).
#[derive(Debug, Clone)]
pub enum Value {
    /// SQL NULL.
    Null,
    /// A boolean.
    Bool(bool),
    /// A 64-bit integer.
    Int(i64),
    /// An integer outside the i64 range, of type [`DataType::Int`]: only an
    /// integer sum makes one (the exact sum DuckDB gives as HUGEINT). Never
    /// holds a value that fits an i64: build it with [`Value::from_i128`].
    HugeInt(i128),
    /// A 64-bit float.
    Float(f64),
    /// Microseconds since the Unix epoch.
    Timestamp(i64),
    /// Days since 1970-01-01.
    Date(i64),
    /// A length of time in microseconds (see [`DataType::Interval`]).
    Interval(i64),
    /// A string; shared so that copying a value is cheap.
    Str(Arc<str>),
}

impl Value {
    /// True for [`Value::Null`].
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    /// The logical type, or `None` for NULL.
    pub fn data_type(&self) -> Option<DataType> {
        Some(match self {
            Value::Null => return None,
            Value::Bool(_) => DataType::Bool,
            Value::Int(_) | Value::HugeInt(_) => DataType::Int,
            Value::Float(_) => DataType::Float,
            Value::Timestamp(_) => DataType::Timestamp,
            Value::Date(_) => DataType::Date,
            Value::Interval(_) => DataType::Interval,
            Value::Str(_) => DataType::Str,
        })
    }

    /// An integer-backed value of type `dtype` from its i64 (see
    /// [`DataType::is_integer_backed`]); an integer for any other type.
    pub fn from_integer(v: i64, dtype: DataType) -> Value {
        match dtype {
            DataType::Timestamp => Value::Timestamp(v),
            DataType::Date => Value::Date(v),
            DataType::Interval => Value::Interval(v),
            _ => Value::Int(v),
        }
    }

    /// The i64 of an integer, timestamp, date or interval, else `None`.
    pub fn as_integer(&self) -> Option<i64> {
        match self {
            Value::Int(v) | Value::Timestamp(v) | Value::Date(v) | Value::Interval(v) => Some(*v),
            _ => None,
        }
    }

    /// An integer: [`Value::Int`] when it fits an i64, else
    /// [`Value::HugeInt`].
    pub fn from_i128(v: i128) -> Value {
        match i64::try_from(v) {
            Ok(i) => Value::Int(i),
            Err(_) => Value::HugeInt(v),
        }
    }

    /// An integer value as i128 (`Int` and `HugeInt`), else `None`.
    pub fn as_i128(&self) -> Option<i128> {
        match self {
            Value::Int(v) => Some(i128::from(*v)),
            Value::HugeInt(v) => Some(*v),
            _ => None,
        }
    }

    /// A string value.
    pub fn str(s: &str) -> Value {
        Value::Str(Arc::from(s))
    }

    /// The numeric value as f64 (integers and timestamps convert), else `None`.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Int(v) | Value::Timestamp(v) => Some(*v as f64),
            Value::Float(v) => Some(*v),
            Value::HugeInt(v) => Some(*v as f64),
            _ => None,
        }
    }

    /// Total order used by ORDER BY, MIN/MAX and the reference evaluator.
    ///
    /// Numbers compare by value across integer and float; strings by bytes
    /// (as DuckDB does); NULL is greater than everything; values of unrelated
    /// types order by a fixed type rank (never happens in a well-typed plan).
    pub fn total_cmp(&self, other: &Value) -> Ordering {
        use Value::*;
        match (self, other) {
            (Null, Null) => Ordering::Equal,
            (Null, _) => Ordering::Greater,
            (_, Null) => Ordering::Less,
            (Int(a), Int(b)) => a.cmp(b),
            (Timestamp(a), Timestamp(b)) => a.cmp(b),
            (Date(a), Date(b)) => a.cmp(b),
            (Interval(a), Interval(b)) => a.cmp(b),
            // A date is its midnight.
            (Date(a), Timestamp(b)) => i128::from(*a)
                .saturating_mul(i128::from(MICROS_PER_DAY))
                .cmp(&i128::from(*b)),
            (Timestamp(a), Date(b)) => {
                i128::from(*a).cmp(&i128::from(*b).saturating_mul(i128::from(MICROS_PER_DAY)))
            }
            (Float(a), Float(b)) => cmp_f64(*a, *b),
            (Int(a), Float(b)) => cmp_i64_f64(*a, *b),
            (Float(a), Int(b)) => cmp_i64_f64(*b, *a).reverse(),
            (HugeInt(a), Int(b)) => a.cmp(&i128::from(*b)),
            (Int(a), HugeInt(b)) => i128::from(*a).cmp(b),
            (HugeInt(a), HugeInt(b)) => a.cmp(b),
            // Beyond ±2^63 a float is an integer, and the i128's rounding
            // to f64 can only tie it with the float nearest it.
            (HugeInt(a), Float(b)) => cmp_f64(*a as f64, *b),
            (Float(a), HugeInt(b)) => cmp_f64(*a, *b as f64),
            (Str(a), Str(b)) => a.as_bytes().cmp(b.as_bytes()),
            (Bool(a), Bool(b)) => a.cmp(b),
            (a, b) => a.type_rank().cmp(&b.type_rank()),
        }
    }

    fn type_rank(&self) -> u8 {
        match self {
            Value::Bool(_) => 0,
            Value::Int(_) | Value::HugeInt(_) | Value::Float(_) => 1,
            Value::Timestamp(_) | Value::Date(_) => 2,
            Value::Interval(_) => 3,
            Value::Str(_) => 4,
            Value::Null => 5,
        }
    }
}

/// Compares floats with NaN greater than every number and `-0.0 == 0.0`.
pub fn cmp_f64(a: f64, b: f64) -> Ordering {
    match a.partial_cmp(&b) {
        Some(o) => o,
        None => a.is_nan().cmp(&b.is_nan()),
    }
}

/// Compares an integer with a float exactly, without rounding the integer.
pub fn cmp_i64_f64(a: i64, b: f64) -> Ordering {
    if b.is_nan() {
        return Ordering::Less;
    }
    // Every i64 lies in [-2^63, 2^63); compare against the float's bounds first.
    if b >= 9_223_372_036_854_775_808.0 {
        return Ordering::Less;
    }
    if b < -9_223_372_036_854_775_808.0 {
        return Ordering::Greater;
    }
    let t = b.trunc();
    match a.cmp(&(t as i64)) {
        Ordering::Equal => {
            if b > t {
                Ordering::Less
            } else if b < t {
                Ordering::Greater
            } else {
                Ordering::Equal
            }
        }
        o => o,
    }
}

impl PartialEq for Value {
    fn eq(&self, other: &Value) -> bool {
        use Value::*;
        match (self, other) {
            (Null, Null) => true,
            (Bool(a), Bool(b)) => a == b,
            (Int(a), Int(b)) => a == b,
            (HugeInt(a), HugeInt(b)) => a == b,
            (Timestamp(a), Timestamp(b)) => a == b,
            (Date(a), Date(b)) => a == b,
            (Interval(a), Interval(b)) => a == b,
            (Float(a), Float(b)) => canonical_f64_bits(*a) == canonical_f64_bits(*b),
            (Str(a), Str(b)) => a == b,
            _ => false,
        }
    }
}

impl Eq for Value {}

impl Hash for Value {
    fn hash<H: Hasher>(&self, state: &mut H) {
        std::mem::discriminant(self).hash(state);
        match self {
            Value::Null => {}
            Value::Bool(b) => b.hash(state),
            Value::Int(v) | Value::Timestamp(v) | Value::Date(v) | Value::Interval(v) => {
                v.hash(state)
            }
            Value::Float(v) => canonical_f64_bits(*v).hash(state),
            Value::HugeInt(v) => v.hash(state),
            Value::Str(s) => s.hash(state),
        }
    }
}

/// Bits of a float with `-0.0` folded into `0.0` and every NaN into one NaN,
/// so that equal-comparing floats hash alike.
pub fn canonical_f64_bits(v: f64) -> u64 {
    if v == 0.0 {
        0
    } else if v.is_nan() {
        f64::NAN.to_bits()
    } else {
        v.to_bits()
    }
}

/// Bits of a float as an unsigned integer ordered as the engine orders
/// floats ([`cmp_f64`]): `-0.0` equal to `0.0`, every NaN equal and above
/// `+inf`. (A non-negative float's bits order as integers once the sign
/// bit is set; a negative float's are all flipped.)
pub fn ordered_f64_bits(v: f64) -> u64 {
    let b = canonical_f64_bits(v);
    if b >> 63 == 1 { !b } else { b | (1 << 63) }
}

impl fmt::Display for Value {
    /// Text form used by the table and CSV output: NULL as `NULL`, floats in
    /// shortest round-trip form, timestamps as `YYYY-MM-DD HH:MM:SS[.ffffff]`,
    /// dates as `YYYY-MM-DD`, intervals as [`format_interval`] writes them.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Null => f.write_str("NULL"),
            Value::Bool(b) => f.write_str(if *b { "true" } else { "false" }),
            Value::Int(v) => write!(f, "{v}"),
            Value::HugeInt(v) => write!(f, "{v}"),
            Value::Float(v) => write_f64(f, *v),
            Value::Timestamp(t) => f.write_str(&format_timestamp(*t)),
            Value::Date(d) => f.write_str(&format_date(*d)),
            Value::Interval(m) => f.write_str(&format_interval(*m)),
            Value::Str(s) => f.write_str(s),
        }
    }
}

fn write_f64(f: &mut fmt::Formatter<'_>, v: f64) -> fmt::Result {
    if is_positional(v) {
        f.write_str(positional(&mut ryu::Buffer::new(), v))
    } else {
        let mut s = String::new();
        push_f64(&mut s, v);
        f.write_str(&s)
    }
}

/// A finite float [`push_f64`] writes without an exponent.
fn is_positional(v: f64) -> bool {
    v.is_finite() && (v == 0.0 || (1e-4..1e16).contains(&v.abs()))
}

/// A positional float's text (Ryū writes `100.0` for an integer).
fn positional(buffer: &mut ryu::Buffer, v: f64) -> &str {
    let s = buffer.format_finite(v);
    s.strip_suffix(".0").unwrap_or(s)
}

/// Appends `v` as katydid shows floats (`Value::Float`'s `Display`): the
/// shortest digits that read back exactly; positional from 1e-4 up to
/// 1e16 (`2.5`, `100`, `0.0001`), scientific outside (`1e308`,
/// `2.5e-7`), as Python's `repr` does from the same thresholds
/// (positional form would print hundreds of digits that carry no
/// precision); `NaN`, `inf`, `-inf`.
///
/// The digits are Ryū's (Adams, PLDI 2018, by the `ryu` crate): the
/// shortest that read back exactly, as Rust's `{}` gives, several times
/// faster, which matters when a result of 200,000 floats is written as
/// CSV. When two such digit strings are equally near (a value exactly
/// halfway, `758560795102542.25` with 16 digits), Ryū rounds the last
/// digit to even (`…542.2`) where Rust rounds up (`…542.3`).
pub fn push_f64(out: &mut String, v: f64) {
    use fmt::Write as _;
    if v.is_nan() {
        out.push_str("NaN");
    } else if v.is_infinite() {
        out.push_str(if v > 0.0 { "inf" } else { "-inf" });
    } else if is_positional(v) {
        out.push_str(positional(&mut ryu::Buffer::new(), v));
    } else {
        // `{:e}` is also the shortest round-trip digits.
        let _ = write!(out, "{v:e}");
    }
}

/// Microseconds in one second.
pub const MICROS_PER_SECOND: i64 = 1_000_000;
/// Microseconds in one day.
pub const MICROS_PER_DAY: i64 = 86_400 * MICROS_PER_SECOND;

/// Days since 1970-01-01 of a proleptic Gregorian date.
///
/// Howard Hinnant's `days_from_civil` ("chrono-Compatible Low-Level Date
/// Algorithms", 2013); exact for every year representable here.
pub fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let m = month as i64;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + day as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The date `(year, month, day)` of a day count since 1970-01-01; the inverse
/// of [`days_from_civil`] (Hinnant's `civil_from_days`).
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = if z >= 0 { z } else { z - 146_096 } / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// The calendar year of a timestamp (microseconds since the epoch).
pub fn timestamp_year(micros: i64) -> i64 {
    civil_from_days(micros.div_euclid(MICROS_PER_DAY)).0
}

/// Parses `YYYY-MM-DD` or `YYYY-MM-DD HH:MM:SS[.f…][zone]` (`T` or a
/// space between date and time) into microseconds since the epoch, where
/// the zone is `Z` or a UTC offset `±hh:mm`, `±hhmm` or `±hh` (ISO 8601,
/// RFC 3339): a time with a zone is converted to UTC
/// (`2013-09-01T10:00:00+02:00` is `2013-09-01 08:00:00`).
///
/// Returns `None` for anything else, including out-of-range fields such as
/// month 13, second 61 or an offset past ±23:59. At most six fractional
/// digits are kept.
pub fn parse_timestamp(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    if b.len() < 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let year = digits(&b[0..4])? as i64;
    let month = digits(&b[5..7])?;
    let day = digits(&b[8..10])?;
    if !(1..=12).contains(&month) || day == 0 || day > days_in_month(year, month) {
        return None;
    }
    let mut micros = days_from_civil(year, month, day) * MICROS_PER_DAY;
    if b.len() == 10 {
        return Some(micros);
    }
    if b.len() < 19 || !(b[10] == b' ' || b[10] == b'T') || b[13] != b':' || b[16] != b':' {
        return None;
    }
    let hour = digits(&b[11..13])? as i64;
    let minute = digits(&b[14..16])? as i64;
    let second = digits(&b[17..19])? as i64;
    if hour > 23 || minute > 59 || second > 59 {
        return None;
    }
    micros += ((hour * 60 + minute) * 60 + second) * MICROS_PER_SECOND;
    let mut rest = &b[19..];
    if let Some(frac) = rest.strip_prefix(b".") {
        let n = frac.iter().take_while(|c| c.is_ascii_digit()).count();
        if n == 0 {
            return None;
        }
        let mut f = 0i64;
        for (i, c) in frac[..n].iter().enumerate() {
            if i < 6 {
                f = f * 10 + (c - b'0') as i64;
            }
        }
        for _ in n..6 {
            f *= 10;
        }
        micros += f;
        rest = &frac[n..];
    }
    if rest == b"Z" {
        rest = &[];
    }
    if let [sign @ (b'+' | b'-'), zone @ ..] = rest {
        let (h, m) = match zone {
            [h1, h2] => (&[*h1, *h2], &b"00"[..]),
            [h1, h2, m1, m2] | [h1, h2, b':', m1, m2] => (&[*h1, *h2], &[*m1, *m2][..]),
            _ => return None,
        };
        let (h, m) = (digits(h)? as i64, digits(m)? as i64);
        if h > 23 || m > 59 {
            return None;
        }
        let offset = (h * 60 + m) * 60 * MICROS_PER_SECOND;
        // Local time minus its offset is UTC.
        return Some(if *sign == b'+' {
            micros - offset
        } else {
            micros + offset
        });
    }
    rest.is_empty().then_some(micros)
}

fn digits(b: &[u8]) -> Option<u32> {
    let mut v = 0u32;
    for &c in b {
        if !c.is_ascii_digit() {
            return None;
        }
        v = v * 10 + (c - b'0') as u32;
    }
    Some(v)
}

fn days_in_month(year: i64, month: u32) -> u32 {
    match month {
        4 | 6 | 9 | 11 => 30,
        2 if (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 => 29,
        2 => 28,
        _ => 31,
    }
}

/// Parses exactly `YYYY-MM-DD` (a valid proleptic Gregorian date) into days
/// since 1970-01-01; `None` for anything else, including a time of day.
pub fn parse_date(s: &str) -> Option<i64> {
    if s.len() != 10 {
        return None;
    }
    parse_timestamp(s).map(|t| t.div_euclid(MICROS_PER_DAY))
}

/// Whether `b` has the shape of an ISO date alone, `YYYY-MM-DD` (not
/// checked to be a valid date).
pub fn is_iso_date_shape(b: &[u8]) -> bool {
    b.len() == 10 && b[4] == b'-' && b[7] == b'-'
}

/// Formats days since 1970-01-01 as `YYYY-MM-DD`.
pub fn format_date(days: i64) -> String {
    let (y, m, d) = civil_from_days(days);
    format!("{y:04}-{m:02}-{d:02}")
}

/// Formats an interval of `micros` microseconds as DuckDB does: whole days
/// first (`1 day`, `-2 days`), then the rest as `HH:MM:SS` with a fraction
/// only when there is one, each part carrying the sign (`-1 day -03:00:00`);
/// `00:00:00` for zero. Hours stay below 24: a day is 24 hours here, as
/// DuckDB's `timestamp − timestamp` counts them.
pub fn format_interval(micros: i64) -> String {
    use std::fmt::Write;
    let m = i128::from(micros);
    let day = i128::from(MICROS_PER_DAY);
    let (days, rest) = (m / day, m % day);
    let mut out = String::new();
    if days != 0 {
        let _ = write!(out, "{days} day{}", if days.abs() == 1 { "" } else { "s" });
    }
    if rest != 0 || days == 0 {
        if !out.is_empty() {
            out.push(' ');
        }
        if rest < 0 {
            out.push('-');
        }
        let r = rest.abs();
        let (secs, frac) = (r / 1_000_000, r % 1_000_000);
        let _ = write!(
            out,
            "{:02}:{:02}:{:02}",
            secs / 3600,
            secs / 60 % 60,
            secs % 60
        );
        if frac != 0 {
            let digits = format!("{frac:06}");
            let _ = write!(out, ".{}", digits.trim_end_matches('0'));
        }
    }
    out
}

/// The timestamp (µs) of a date's midnight, or `None` past the i64 range.
pub fn date_to_timestamp(days: i64) -> Option<i64> {
    days.checked_mul(MICROS_PER_DAY)
}

/// The date of a timestamp (µs): the day it falls in.
pub fn timestamp_to_date(micros: i64) -> i64 {
    micros.div_euclid(MICROS_PER_DAY)
}

/// Formats microseconds since the epoch as `YYYY-MM-DD HH:MM:SS`, with a
/// fraction only when the value has one.
pub fn format_timestamp(micros: i64) -> String {
    let days = micros.div_euclid(MICROS_PER_DAY);
    let rem = micros.rem_euclid(MICROS_PER_DAY);
    let (y, m, d) = civil_from_days(days);
    let secs = rem / MICROS_PER_SECOND;
    let frac = rem % MICROS_PER_SECOND;
    let (hh, mm, ss) = (secs / 3600, secs / 60 % 60, secs % 60);
    if frac == 0 {
        format!("{y:04}-{m:02}-{d:02} {hh:02}:{mm:02}:{ss:02}")
    } else {
        let f = format!("{frac:06}");
        format!(
            "{y:04}-{m:02}-{d:02} {hh:02}:{mm:02}:{ss:02}.{}",
            f.trim_end_matches('0')
        )
    }
}

/// A timestamp layout in strftime notation (`%d/%m/%Y %H:%M`), the
/// notation of DuckDB's `strptime` and its `timestampformat`/`dateformat`
/// CSV options, compiled once and parsed by `chrono`.
///
/// A layout without a time of day gives midnight; one with an offset
/// (`%z`) gives the UTC instant, like [`parse_timestamp`].
#[derive(Clone)]
pub struct TimestampFormat {
    text: String,
    items: Vec<chrono::format::Item<'static>>,
}

impl TimestampFormat {
    /// Compiles `format`.
    ///
    /// # Errors
    /// A message naming the format when it has an unknown `%` specifier or
    /// gives no date (`%H:%M` alone).
    pub fn new(format: &str) -> std::result::Result<TimestampFormat, String> {
        use chrono::format::{Fixed, Item, Numeric, StrftimeItems};
        let items = StrftimeItems::new(format)
            .parse_to_owned()
            .map_err(|_| format!("{format:?} is not a valid timestamp format (use strftime specifiers such as %Y-%m-%d %H:%M:%S)"))?;
        if items.iter().any(|i| matches!(i, Item::Error)) {
            return Err(format!("{format:?} is not a valid timestamp format"));
        }
        let year = items.iter().any(|i| {
            matches!(
                i,
                Item::Numeric(Numeric::Year | Numeric::YearMod100 | Numeric::Timestamp, _)
                    | Item::Fixed(Fixed::RFC2822 | Fixed::RFC3339)
            )
        });
        if !year {
            return Err(format!(
                "timestamp format {format:?} has no year (%Y or %y)"
            ));
        }
        let f = TimestampFormat {
            text: format.to_string(),
            items,
        };
        Ok(f)
    }

    /// The layout as written.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Microseconds since the epoch of `s` read by this layout, or `None`
    /// when `s` does not match it or names no valid date.
    pub fn parse(&self, s: &str) -> Option<i64> {
        let mut parsed = chrono::format::Parsed::new();
        chrono::format::parse(&mut parsed, s, self.items.iter()).ok()?;
        let date = parsed.to_naive_date().ok()?;
        let utc = if parsed.hour_div_12.is_none() && parsed.hour_mod_12.is_none() {
            date.and_hms_opt(0, 0, 0)?
        } else {
            let time = parsed.to_naive_time().ok()?;
            let local = date.and_time(time);
            match parsed.offset {
                Some(offset) => local - chrono::TimeDelta::seconds(i64::from(offset)),
                None => local,
            }
        };
        Some(utc.and_utc().timestamp_micros())
    }
}

impl fmt::Debug for TimestampFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "TimestampFormat({:?})", self.text)
    }
}

/// Two layouts are equal when their texts are.
impl PartialEq for TimestampFormat {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text
    }
}

impl Eq for TimestampFormat {}

impl Hash for TimestampFormat {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.text.hash(state);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordered_f64_bits_order_as_cmp_f64() {
        let xs = [
            f64::NEG_INFINITY,
            -1.5e300,
            -2.0,
            -1.0,
            -f64::MIN_POSITIVE,
            -0.0,
            0.0,
            f64::MIN_POSITIVE,
            0.1 + 0.2,
            1.0,
            f64::INFINITY,
            f64::NAN,
            -f64::NAN,
        ];
        for &a in &xs {
            for &b in &xs {
                assert_eq!(
                    ordered_f64_bits(a).cmp(&ordered_f64_bits(b)),
                    cmp_f64(a, b),
                    "{a} vs {b}"
                );
            }
        }
    }

    #[test]
    fn floats_display_in_shortest_round_trip_form() {
        let shown = |v: f64| Value::Float(v).to_string();
        assert_eq!(shown(1e308), "1e308");
        assert_eq!(shown(-2.5e16), "-2.5e16");
        assert_eq!(shown(1.5e-7), "1.5e-7");
        assert_eq!(shown(0.1), "0.1");
        assert_eq!(shown(0.0001), "0.0001");
        assert_eq!(shown(3.0), "3");
        assert_eq!(shown(1234567890123456.0), "1234567890123456");
        assert_eq!(shown(0.0), "0");
        assert_eq!(shown(f64::MIN_POSITIVE), "2.2250738585072014e-308");
        for v in [1e308, 1.5e-7, 0.1, 123.456, 9.999e15, 1e16, f64::MAX] {
            assert_eq!(shown(v).parse::<f64>().unwrap(), v);
        }
    }

    #[test]
    fn timestamp_round_trips_through_text() {
        for s in [
            "1970-01-01 00:00:00",
            "2013-08-01 08:14:37",
            "2000-02-29 23:59:59",
            "1969-12-31 23:59:59",
            "2015-06-30 12:00:00.25",
        ] {
            let t = parse_timestamp(s).unwrap();
            assert_eq!(format_timestamp(t), s);
        }
    }

    #[test]
    fn timestamp_forms_and_rejections() {
        let base = parse_timestamp("2020-01-02 03:04:05").unwrap();
        assert_eq!(parse_timestamp("2020-01-02T03:04:05Z"), Some(base));
        assert_eq!(
            parse_timestamp("2020-01-02T03:04:05.5"),
            Some(base + 500_000)
        );
        assert_eq!(
            parse_timestamp("2020-01-02"),
            Some(base - (3 * 3600 + 4 * 60 + 5) * MICROS_PER_SECOND)
        );
        // Zones (issue 30, item 8): `Z`, or an offset converted to UTC.
        assert_eq!(parse_timestamp("2020-01-02 03:04:05Z"), Some(base));
        let hour = 3600 * MICROS_PER_SECOND;
        for (text, utc) in [
            ("2020-01-02T05:04:05+02:00", base),
            ("2020-01-02T05:04:05+0200", base),
            ("2020-01-02T05:04:05+02", base),
            ("2020-01-02T00:34:05-02:30", base),
            ("2020-01-02 03:04:05.25+00:00", base + 250_000),
            ("2020-01-01T23:04:05-04:00", base),
            ("2020-01-02T03:04:05+01:00", base - hour),
        ] {
            assert_eq!(parse_timestamp(text), Some(utc), "{text}");
        }
        for bad in [
            "2020-13-01",
            "2019-02-29",
            "2020-01-02 24:00:00",
            "2020-01-02 03:04",
            "20200102",
            "2020-01-02T03:04:05.",
            "2020-01-02T03:04:05+24:00",
            "2020-01-02T03:04:05+02:60",
            "2020-01-02T03:04:05+2",
            "2020-01-02T03:04:05 +02:00",
            "2020-01-02T03:04:05Z+01",
        ] {
            assert_eq!(parse_timestamp(bad), None, "{bad}");
        }
    }

    #[test]
    fn dates_parse_show_and_compare_with_timestamps() {
        assert_eq!(parse_date("1970-01-01"), Some(0));
        assert_eq!(parse_date("1969-12-31"), Some(-1));
        assert_eq!(parse_date("2013-02-30"), None);
        assert_eq!(parse_date("2013-09-01 00:00:00"), None);
        let d = parse_date("2013-09-01").unwrap();
        assert_eq!(Value::Date(d).to_string(), "2013-09-01");
        assert_eq!(format_date(-1), "1969-12-31");
        let midnight = Value::Timestamp(parse_timestamp("2013-09-01").unwrap());
        assert_eq!(Value::Date(d).total_cmp(&midnight), Ordering::Equal);
        let later = Value::Timestamp(parse_timestamp("2013-09-01 00:00:01").unwrap());
        assert_eq!(Value::Date(d).total_cmp(&later), Ordering::Less);
        assert_eq!(later.total_cmp(&Value::Date(d + 1)), Ordering::Less);
        assert_eq!(timestamp_to_date(-1), -1);
    }

    #[test]
    fn civil_inverse_over_four_centuries() {
        for days in (-200_000..200_000).step_by(97) {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days);
        }
        assert_eq!(
            timestamp_year(parse_timestamp("2013-12-31 23:59:59").unwrap()),
            2013
        );
        assert_eq!(timestamp_year(-1), 1969);
    }

    #[test]
    fn value_order_puts_null_last_and_mixes_numbers() {
        assert_eq!(Value::Int(2).total_cmp(&Value::Float(2.5)), Ordering::Less);
        assert_eq!(Value::Float(2.0).total_cmp(&Value::Int(2)), Ordering::Equal);
        assert_eq!(
            Value::Null.total_cmp(&Value::Int(i64::MAX)),
            Ordering::Greater
        );
        assert_eq!(
            Value::str("b").total_cmp(&Value::str("a")),
            Ordering::Greater
        );
        assert_eq!(
            cmp_i64_f64(i64::MAX, 9_223_372_036_854_775_807.0),
            Ordering::Less
        );
        assert_eq!(Value::Float(-0.0), Value::Float(0.0));
    }

    #[test]
    fn timestamp_formats_parse_their_layouts() {
        let f = TimestampFormat::new("%m/%d/%Y %H:%M").unwrap();
        assert_eq!(
            f.parse("09/01/2013 10:00"),
            parse_timestamp("2013-09-01 10:00:00")
        );
        assert_eq!(
            f.parse("9/1/2013 10:00"),
            parse_timestamp("2013-09-01 10:00:00")
        );
        assert_eq!(f.parse("13/01/2013 10:00"), None);
        assert_eq!(f.parse("2013-09-01 10:00"), None);
        let d = TimestampFormat::new("%d.%m.%Y").unwrap();
        assert_eq!(d.parse("29.02.2024"), parse_timestamp("2024-02-29"));
        assert_eq!(d.parse("29.02.2023"), None);
        let z = TimestampFormat::new("%Y-%m-%d %H:%M:%S%.f %z").unwrap();
        assert_eq!(
            z.parse("2013-09-01 10:00:00.25 +0200"),
            parse_timestamp("2013-09-01 08:00:00.25")
        );
        assert!(TimestampFormat::new("%Q").is_err());
    }

    #[test]
    fn floats_show_as_rust_shows_them_in_the_positional_range() {
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let (mut checked, mut ties) = (0, 0);
        for i in 0..200_000u64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // Random bit patterns, and short decimals such as money.
            let v = if i % 2 == 0 {
                f64::from_bits(x)
            } else {
                (x % 10_000_000) as f64 / 100.0 - 50_000.0
            };
            if !v.is_finite() || (v != 0.0 && !(1e-4..1e16).contains(&v.abs())) {
                continue;
            }
            let mut s = String::new();
            push_f64(&mut s, v);
            let rust = format!("{v}");
            // Reads back, as short as Rust's, and the same but at a tie.
            assert_eq!(s.parse::<f64>(), Ok(v), "{s}");
            assert_eq!(s.len(), rust.len(), "{s} {rust}");
            if s != rust {
                ties += 1;
            }
            checked += 1;
        }
        assert!(checked > 100_000, "{checked}");
        assert!(ties * 1000 < checked, "{ties} of {checked} differ");
        for (v, text) in [
            (100.0, "100"),
            (-0.0, "-0"),
            (0.0, "0"),
            (1e-4, "0.0001"),
            (9.5e-5, "9.5e-5"),
            (1e16, "1e16"),
            (f64::NAN, "NaN"),
            (f64::NEG_INFINITY, "-inf"),
        ] {
            assert_eq!(Value::Float(v).to_string(), text);
        }
    }
}
