//! Scalar semantics: what every operator and function means on one row of
//! decoded [`Value`]s.
//!
//! # Design
//! This is the single definition of expression semantics. The planner uses it
//! to fold constants, the executor's generic path uses it for expressions no
//! specialized kernel covers, and the aggregate stage evaluates output
//! expressions with it. Specialized kernels must agree with it (the
//! differential tests check that).
//!
//! NULL follows PostgreSQL: arithmetic and comparisons with NULL give NULL,
//! `AND`/`OR` use three-valued logic. Integer arithmetic is checked: overflow
//! and division by zero are errors, integer `/` truncates toward zero and `%`
//! takes the dividend's sign.

use std::cmp::Ordering;

use super::expr::BinaryOp;
use crate::error::{Error, Result};
use crate::kernel::like::LikePattern;
use crate::types::{
    DataType, MICROS_PER_DAY, Value, civil_from_days, date_to_timestamp, days_from_civil,
    format_timestamp, parse_timestamp, timestamp_to_date, timestamp_year,
};

use super::expr::{
    DatePart, Expr, Func, MAX_STRING_BYTES, StrFn, StrftimeFormat, TruncUnit,
};

/// Where an expression's inputs come from when evaluated on one row.
pub trait RowSource {
    /// Table column `index` of the current row.
    fn column(&self, index: usize) -> Value;
    /// Group key `index` of the current group (aggregate queries).
    fn group_key(&self, index: usize) -> Value {
        let _ = index;
        Value::Null
    }
    /// Aggregate result `index` of the current group (aggregate queries).
    fn agg_result(&self, index: usize) -> Value {
        let _ = index;
        Value::Null
    }
}

/// A row source with no inputs, for constant expressions.
pub struct NoRow;

impl RowSource for NoRow {
    fn column(&self, _: usize) -> Value {
        Value::Null
    }
}

/// The error for integer overflow.
pub fn overflow() -> Error {
    Error::Overflow
}

/// The error for division (or modulo) by zero.
pub fn division_by_zero() -> Error {
    Error::DivisionByZero
}

/// Evaluates `expr` on one row.
///
/// # Errors
/// [`Error::Overflow`], [`Error::DivisionByZero`], or [`Error::Execution`]
/// for a failed cast.
pub fn eval(expr: &Expr, row: &dyn RowSource) -> Result<Value> {
    Ok(match expr {
        Expr::Column { index, .. } => row.column(*index),
        Expr::Literal { value, .. } => value.clone(),
        Expr::GroupKey { index, .. } => row.group_key(*index),
        Expr::AggResult { index, .. } => row.agg_result(*index),
        Expr::Neg(e) => negate(&eval(e, row)?)?,
        Expr::Not(e) => match eval(e, row)? {
            Value::Bool(b) => Value::Bool(!b),
            _ => Value::Null,
        },
        Expr::Binary {
            op: BinaryOp::And,
            left,
            right,
            ..
        } => {
            let l = eval(left, row)?;
            if matches!(l, Value::Bool(false)) {
                return Ok(l);
            }
            and(&l, &eval(right, row)?)
        }
        Expr::Binary {
            op: BinaryOp::Or,
            left,
            right,
            ..
        } => {
            let l = eval(left, row)?;
            if matches!(l, Value::Bool(true)) {
                return Ok(l);
            }
            or(&l, &eval(right, row)?)
        }
        Expr::Binary {
            op, left, right, ..
        } => binary(*op, &eval(left, row)?, &eval(right, row)?)?,
        Expr::IsNull { expr, negated } => Value::Bool(eval(expr, row)?.is_null() != *negated),
        Expr::InList {
            expr,
            list,
            negated,
        } => {
            let v = eval(expr, row)?;
            let mut items = Vec::with_capacity(list.len());
            for e in list {
                items.push(eval(e, row)?);
            }
            in_list(&v, &items, *negated)
        }
        Expr::Like {
            expr,
            pattern,
            negated,
        } => match (eval(expr, row)?, eval(pattern, row)?) {
            (Value::Str(s), Value::Str(p)) => {
                Value::Bool(LikePattern::compile(&p).matches(&s) != *negated)
            }
            _ => Value::Null,
        },
        Expr::Case {
            branches,
            else_result,
            ..
        } => {
            for (when, then) in branches {
                if matches!(eval(when, row)?, Value::Bool(true)) {
                    return eval(then, row);
                }
            }
            eval(else_result, row)?
        }
        Expr::Call { func, args, .. } => {
            let mut values = Vec::with_capacity(args.len());
            for a in args {
                values.push(eval(a, row)?);
            }
            call(func, &values)?
        }
        Expr::Cast {
            expr,
            dtype,
            try_cast,
        } => match cast(&eval(expr, row)?, *dtype) {
            Ok(v) => v,
            Err(Error::Execution(_)) if *try_cast => Value::Null,
            Err(e) => return Err(e),
        },
        Expr::Agg(_) => {
            return Err(Error::Internal(
                "aggregate evaluated as a scalar expression".into(),
            ));
        }
    })
}

/// Three-valued `AND`.
pub fn and(l: &Value, r: &Value) -> Value {
    match (l, r) {
        (Value::Bool(false), _) | (_, Value::Bool(false)) => Value::Bool(false),
        (Value::Bool(true), Value::Bool(true)) => Value::Bool(true),
        _ => Value::Null,
    }
}

/// Three-valued `OR`.
pub fn or(l: &Value, r: &Value) -> Value {
    match (l, r) {
        (Value::Bool(true), _) | (_, Value::Bool(true)) => Value::Bool(true),
        (Value::Bool(false), Value::Bool(false)) => Value::Bool(false),
        _ => Value::Null,
    }
}

/// `v [NOT] IN (items)`: true on a match; otherwise NULL if `v` or any item
/// is NULL; otherwise false (negated accordingly).
pub fn in_list(v: &Value, items: &[Value], negated: bool) -> Value {
    if v.is_null() {
        return Value::Null;
    }
    let mut saw_null = false;
    for item in items {
        if item.is_null() {
            saw_null = true;
        } else if v.total_cmp(item) == Ordering::Equal {
            return Value::Bool(!negated);
        }
    }
    if saw_null {
        Value::Null
    } else {
        Value::Bool(negated)
    }
}

/// Arithmetic negation.
///
/// # Errors
/// Overflow for `-i64::MIN`.
pub fn negate(v: &Value) -> Result<Value> {
    Ok(match v {
        Value::Int(i) => Value::Int(i.checked_neg().ok_or_else(overflow)?),
        Value::Interval(i) => Value::Interval(i.checked_neg().ok_or_else(overflow)?),
        Value::HugeInt(i) => Value::from_i128(i.checked_neg().ok_or_else(overflow)?),
        Value::Float(f) => Value::Float(-f),
        _ => Value::Null,
    })
}

/// A comparison or arithmetic operator on two non-logical operands.
///
/// # Errors
/// Overflow, division by zero.
pub fn binary(op: BinaryOp, l: &Value, r: &Value) -> Result<Value> {
    if l.is_null() || r.is_null() {
        return Ok(Value::Null);
    }
    if op.is_comparison() {
        let ord = l.total_cmp(r);
        return Ok(Value::Bool(compare(op, ord)));
    }
    match (l, r) {
        (Value::Int(a), Value::Int(b)) => int_arith(op, *a, *b).map(Value::Int),
        (Value::HugeInt(_), Value::Int(_) | Value::HugeInt(_)) | (Value::Int(_), Value::HugeInt(_)) => {
            let (Some(a), Some(b)) = (l.as_i128(), r.as_i128()) else {
                return Err(Error::Internal("integers without an i128 form".into()));
            };
            huge_arith(op, a, b).map(Value::from_i128)
        }
        (Value::Timestamp(a), Value::Int(b) | Value::Interval(b))
        | (Value::Int(a) | Value::Interval(a), Value::Timestamp(b)) => {
            int_arith(op, *a, *b).map(Value::Timestamp)
        }
        // Timestamp − timestamp, interval ± interval, interval × or ÷ an
        // integer (the binder allows no other).
        (Value::Timestamp(a), Value::Timestamp(b))
        | (Value::Interval(a), Value::Interval(b) | Value::Int(b))
        | (Value::Int(a), Value::Interval(b)) => int_arith(op, *a, *b).map(Value::Interval),
        // A date ± days; date − date in days (the binder allows no other).
        (Value::Date(a), Value::Int(b)) | (Value::Int(a), Value::Date(b)) => {
            int_arith(op, *a, *b).map(Value::Date)
        }
        (Value::Date(a), Value::Date(b)) => int_arith(op, *a, *b).map(Value::Int),
        _ => match (l.as_f64(), r.as_f64()) {
            (Some(a), Some(b)) => float_arith(op, a, b).map(Value::Float),
            _ => Err(Error::Internal(format!(
                "operator {} on {l:?} and {r:?}",
                op.symbol()
            ))),
        },
    }
}

/// Whether `ord` (left compared with right) satisfies comparison `op`.
#[inline]
pub fn compare(op: BinaryOp, ord: Ordering) -> bool {
    match op {
        BinaryOp::Eq => ord == Ordering::Equal,
        BinaryOp::NotEq => ord != Ordering::Equal,
        BinaryOp::Lt => ord == Ordering::Less,
        BinaryOp::LtEq => ord != Ordering::Greater,
        BinaryOp::Gt => ord == Ordering::Greater,
        BinaryOp::GtEq => ord != Ordering::Less,
        _ => false,
    }
}

/// Checked integer arithmetic with PostgreSQL's division semantics.
///
/// # Errors
/// Overflow, division by zero.
#[inline]
pub fn int_arith(op: BinaryOp, a: i64, b: i64) -> Result<i64> {
    match op {
        BinaryOp::Plus => a.checked_add(b).ok_or_else(overflow),
        BinaryOp::Minus => a.checked_sub(b).ok_or_else(overflow),
        BinaryOp::Multiply => a.checked_mul(b).ok_or_else(overflow),
        BinaryOp::Divide | BinaryOp::Modulo if b == 0 => Err(division_by_zero()),
        BinaryOp::Divide => a.checked_div(b).ok_or_else(overflow),
        BinaryOp::Modulo => Ok(a.checked_rem(b).unwrap_or(0)),
        _ => Err(Error::Internal(format!(
            "{} is not arithmetic",
            op.symbol()
        ))),
    }
}

/// Checked arithmetic on integers of which one is past i64 (a
/// [`Value::HugeInt`] sum), in i128 as DuckDB's HUGEINT is.
///
/// # Errors
/// Overflow of i128, division by zero.
pub fn huge_arith(op: BinaryOp, a: i128, b: i128) -> Result<i128> {
    match op {
        BinaryOp::Plus => a.checked_add(b).ok_or_else(overflow),
        BinaryOp::Minus => a.checked_sub(b).ok_or_else(overflow),
        BinaryOp::Multiply => a.checked_mul(b).ok_or_else(overflow),
        BinaryOp::Divide | BinaryOp::Modulo if b == 0 => Err(division_by_zero()),
        BinaryOp::Divide => a.checked_div(b).ok_or_else(overflow),
        BinaryOp::Modulo => Ok(a.checked_rem(b).unwrap_or(0)),
        _ => Err(Error::Internal(format!(
            "{} is not arithmetic",
            op.symbol()
        ))),
    }
}

/// Float arithmetic; division or modulo by zero is an error as in PostgreSQL.
///
/// # Errors
/// Division by zero.
#[inline]
pub fn float_arith(op: BinaryOp, a: f64, b: f64) -> Result<f64> {
    match op {
        BinaryOp::Plus => Ok(a + b),
        BinaryOp::Minus => Ok(a - b),
        BinaryOp::Multiply => Ok(a * b),
        BinaryOp::Divide | BinaryOp::Modulo if b == 0.0 => Err(division_by_zero()),
        BinaryOp::Divide => Ok(a / b),
        BinaryOp::Modulo => Ok(a % b),
        _ => Err(Error::Internal(format!(
            "{} is not arithmetic",
            op.symbol()
        ))),
    }
}

/// Truncates a timestamp to a unit; `None` when the start of the unit is
/// before the first representable timestamp (within a unit of `i64::MIN`
/// microseconds, in the year -290308).
pub fn date_trunc(unit: TruncUnit, micros: i64) -> Option<i64> {
    let step = match unit {
        TruncUnit::Second => 1_000_000,
        TruncUnit::Minute => 60_000_000,
        TruncUnit::Hour => 3_600_000_000,
        TruncUnit::Day => MICROS_PER_DAY,
        TruncUnit::Month | TruncUnit::Year => {
            let (y, m, _) = civil_from_days(micros.div_euclid(MICROS_PER_DAY));
            let m = if unit == TruncUnit::Year { 1 } else { m };
            return days_from_civil(y, m, 1).checked_mul(MICROS_PER_DAY);
        }
    };
    micros.checked_sub(micros.rem_euclid(step))
}

/// The error for a timestamp result outside the representable range.
pub fn timestamp_out_of_range() -> Error {
    Error::Execution("timestamp out of range".into())
}

/// Rounds half away from zero to `digits` decimal places (negative digits
/// round to tens, hundreds, …).
pub fn round_f64(x: f64, digits: i64) -> f64 {
    if digits == 0 {
        return x.round();
    }
    let digits = digits.clamp(-308, 308) as i32;
    let p = 10f64.powi(digits);
    let y = (x * p).round() / p;
    if y.is_finite() { y } else { x }
}

/// `part` of a timestamp (microseconds since the epoch), as
/// `extract(part FROM ts)` gives it: an integer for every part but
/// [`DatePart::Epoch`], which is fractional seconds.
pub fn date_part(part: DatePart, micros: i64) -> Value {
    const MICROS_PER_MINUTE: i64 = 60_000_000;
    let days = micros.div_euclid(MICROS_PER_DAY);
    let time = micros.rem_euclid(MICROS_PER_DAY);
    // 1970-01-01 was a Thursday: ISO day 4.
    let iso_dow = (days + 3).rem_euclid(7) + 1;
    let int = match part {
        DatePart::Epoch => return Value::Float(micros as f64 / 1e6),
        DatePart::Year => civil_from_days(days).0,
        DatePart::Quarter => (i64::from(civil_from_days(days).1) + 2) / 3,
        DatePart::Month => i64::from(civil_from_days(days).1),
        DatePart::Day => i64::from(civil_from_days(days).2),
        DatePart::DayOfWeek => iso_dow % 7,
        DatePart::IsoDayOfWeek => iso_dow,
        DatePart::DayOfYear => days - days_from_civil(civil_from_days(days).0, 1, 1) + 1,
        DatePart::Week | DatePart::IsoYear => {
            // The ISO week is the one of its Thursday, and so is its year.
            let thursday = days - iso_dow + 4;
            let year = civil_from_days(thursday).0;
            if part == DatePart::IsoYear {
                year
            } else {
                (thursday - days_from_civil(year, 1, 1)) / 7 + 1
            }
        }
        DatePart::Hour => time / 3_600_000_000,
        DatePart::Minute => time / MICROS_PER_MINUTE % 60,
        DatePart::Second => time / 1_000_000 % 60,
        DatePart::Millisecond => time % MICROS_PER_MINUTE / 1_000,
        DatePart::Microsecond => time % MICROS_PER_MINUTE,
    };
    Value::Int(int)
}

/// Part `part` of an interval of `micros` microseconds, as DuckDB reads
/// an interval without months: `epoch` its length in seconds (a float),
/// `day` its whole days, `hour` the whole hours of the rest, `minute` and
/// `second` those of the rest within the hour and minute, `millisecond`
/// and `microsecond` the rest within the minute (seconds included). Every
/// part carries the interval's sign; a part no interval has is NULL (the
/// binder admits only those of [`DatePart::applies_to_intervals`]).
pub fn interval_part(part: DatePart, micros: i64) -> Value {
    const MICROS_PER_MINUTE: i64 = 60_000_000;
    const MICROS_PER_HOUR: i64 = 3_600_000_000;
    let time = micros % MICROS_PER_DAY;
    Value::Int(match part {
        DatePart::Epoch => return Value::Float(micros as f64 / 1e6),
        DatePart::Day => micros / MICROS_PER_DAY,
        DatePart::Hour => time / MICROS_PER_HOUR,
        DatePart::Minute => time % MICROS_PER_HOUR / MICROS_PER_MINUTE,
        DatePart::Second => time % MICROS_PER_MINUTE / 1_000_000,
        DatePart::Millisecond => time % MICROS_PER_MINUTE / 1_000,
        DatePart::Microsecond => time % MICROS_PER_MINUTE,
        _ => return Value::Null,
    })
}

/// A scalar function on evaluated arguments.
///
/// # Errors
/// Overflow in `abs`/`round` of integers.
pub fn call(func: &Func, args: &[Value]) -> Result<Value> {
    match func {
        Func::Random => return Ok(Value::Float(crate::kernel::random::uniform_float())),
        Func::Greatest | Func::Least => {
            let pick = if *func == Func::Greatest {
                Ordering::Greater
            } else {
                Ordering::Less
            };
            let mut best: Option<&Value> = None;
            for v in args.iter().filter(|v| !v.is_null()) {
                if best.is_none_or(|b| v.total_cmp(b) == pick) {
                    best = Some(v);
                }
            }
            return Ok(best.cloned().unwrap_or(Value::Null));
        }
        Func::ConcatWs => {
            let Some(Value::Str(sep)) = args.first() else {
                return Ok(Value::Null);
            };
            let mut out = String::new();
            let mut first = true;
            for v in &args[1..] {
                if let Value::Str(s) = v {
                    if !first {
                        out.push_str(sep);
                    }
                    first = false;
                    out.push_str(s);
                    check_length("concat_ws", out.len())?;
                }
            }
            return Ok(Value::str(&out));
        }
        _ => {}
    }
    if args.iter().any(Value::is_null) {
        return Ok(Value::Null);
    }
    let arg = &args[0];
    Ok(match (func, arg) {
        (Func::Concat, _) => {
            let mut out = String::new();
            for v in args {
                if let Value::Str(s) = v {
                    out.push_str(s);
                    check_length("||", out.len())?;
                }
            }
            Value::str(&out)
        }
        (Func::Str(StrFn::Chr), Value::Int(n)) => {
            let c = u32::try_from(*n).ok().and_then(char::from_u32).ok_or_else(|| {
                Error::Execution(format!("chr(): {n} is not a Unicode code point"))
            })?;
            Value::str(c.encode_utf8(&mut [0; 4]))
        }
        (Func::Str(f), Value::Str(s)) => match f.result_type() {
            DataType::Bool => Value::Bool(str_test(*f, s, &args[1..])),
            DataType::Int => Value::Int(str_int(*f, s, &args[1..])),
            _ => {
                let mut out = String::new();
                str_into(*f, s, &args[1..], &mut out)?;
                Value::str(&out)
            }
        },
        (Func::Strftime(format), Value::Timestamp(t)) => Value::str(&strftime(format, *t)?),
        (Func::DateDiff(part), Value::Timestamp(start)) => match args.get(1) {
            Some(Value::Timestamp(end)) => Value::Int(date_diff(*part, *start, *end)?),
            _ => Value::Null,
        },
        (Func::Year, Value::Timestamp(t)) => Value::Int(timestamp_year(*t)),
        (Func::AddMonths(n), Value::Timestamp(t)) => {
            Value::Timestamp(add_months(*t, *n).ok_or_else(timestamp_out_of_range)?)
        }
        (Func::DateTrunc(unit), Value::Timestamp(t)) => {
            Value::Timestamp(date_trunc(*unit, *t).ok_or_else(timestamp_out_of_range)?)
        }
        (Func::Extract(part), Value::Timestamp(t)) => date_part(*part, *t),
        (Func::IntervalPart(part), Value::Interval(m)) => interval_part(*part, *m),
        (Func::StrLen, Value::Str(s)) => Value::Int(s.len() as i64),
        (Func::Strptime { format, try_parse }, Value::Str(s)) => match format.parse(s) {
            Some(t) => Value::Timestamp(t),
            None if *try_parse => Value::Null,
            None => {
                return Err(Error::Execution(format!(
                    "strptime: \"{s}\" is not a timestamp in the format '{}' (try_strptime gives NULL instead)",
                    format.text()
                )));
            }
        },
        (Func::RegexpReplace(r), Value::Str(s)) => match r.replace(s) {
            std::borrow::Cow::Borrowed(_) => arg.clone(),
            std::borrow::Cow::Owned(replaced) => Value::str(&replaced),
        },
        (Func::Trunc, Value::Float(f)) => Value::Float(f.trunc()),
        (Func::Trunc, Value::Int(_) | Value::HugeInt(_)) => arg.clone(),
        (Func::Sign, v) => Value::Int(match v {
            Value::Int(i) => i.signum(),
            Value::HugeInt(i) => i.signum() as i64,
            Value::Float(f) if *f > 0.0 => 1,
            Value::Float(f) if *f < 0.0 => -1,
            _ => 0,
        }),
        (Func::Math(m), v) => match v.as_f64() {
            Some(x) => Value::Float(m.apply(x)),
            None => Value::Null,
        },
        (Func::Pow, v) => match (v.as_f64(), args.get(1).and_then(Value::as_f64)) {
            (Some(x), Some(y)) => Value::Float(x.powf(y)),
            _ => Value::Null,
        },
        (Func::Floor, Value::Float(f)) => Value::Float(f.floor()),
        (Func::Ceil, Value::Float(f)) => Value::Float(f.ceil()),
        (Func::Floor | Func::Ceil | Func::Round, Value::HugeInt(i)) => Value::HugeInt(*i),
        (Func::Abs, Value::HugeInt(i)) => Value::from_i128(i.checked_abs().ok_or_else(overflow)?),
        (Func::Floor | Func::Ceil, Value::Int(i)) => Value::Int(*i),
        (Func::Round, Value::Float(f)) => {
            let digits = match args.get(1) {
                Some(Value::Int(d)) => *d,
                _ => 0,
            };
            Value::Float(round_f64(*f, digits))
        }
        (Func::Round, Value::Int(i)) => {
            let digits = match args.get(1) {
                Some(Value::Int(d)) => *d,
                _ => 0,
            };
            if digits >= 0 {
                Value::Int(*i)
            } else if digits < -18 {
                Value::Int(0)
            } else {
                let p = 10i64.pow((-digits) as u32);
                let q = i.div_euclid(p);
                let r = i.rem_euclid(p);
                // Half away from zero: compare the remainder with half a step.
                let up = if *i >= 0 { r * 2 >= p } else { r * 2 > p };
                let q = if up { q + 1 } else { q };
                Value::Int(q.checked_mul(p).ok_or_else(overflow)?)
            }
        }
        (Func::Abs, Value::Int(i)) => Value::Int(i.checked_abs().ok_or_else(overflow)?),
        (Func::Abs, Value::Float(f)) => Value::Float(f.abs()),
        (Func::Lower, Value::Str(s)) => Value::str(&s.to_lowercase()),
        (Func::Upper, Value::Str(s)) => Value::str(&s.to_uppercase()),
        (Func::Length, Value::Str(s)) => Value::Int(s.chars().count() as i64),
        (Func::Substring, Value::Str(s)) => {
            let start = match args.get(1) {
                Some(Value::Int(i)) => *i,
                _ => 1,
            };
            let end = match args.get(2) {
                Some(Value::Int(n)) if *n < 0 => {
                    return Err(Error::Execution(
                        "negative substring length not allowed".into(),
                    ));
                }
                Some(Value::Int(n)) => start.saturating_add(*n),
                _ => i64::MAX,
            };
            Value::str(substring(s, start, end))
        }
        _ => {
            return Err(Error::Internal(format!("function {func:?} on {arg:?}")));
        }
    })
}

/// The characters of `s` at 1-based positions `start..end` (SQL's
/// `substring(s, start, end - start)`; positions before 1 are cut off, as
/// in PostgreSQL and DuckDB), borrowed from `s`.
pub fn substring(s: &str, start: i64, end: i64) -> &str {
    let (from, to) = (start.max(1), end.max(1));
    let take = usize::try_from(to - from).unwrap_or(usize::MAX);
    let skip = usize::try_from(from - 1).unwrap_or(usize::MAX);
    let mut chars = s.char_indices().map(|(i, _)| i).chain([s.len()]);
    let Some(a) = chars.nth(skip) else {
        return "";
    };
    let b = if take == 0 {
        a
    } else {
        chars.nth(take - 1).unwrap_or(s.len())
    };
    &s[a..b]
}

/// An error unless `len` bytes fit [`MAX_STRING_BYTES`].
///
/// # Errors
/// [`Error::Execution`] naming the function.
pub fn check_length(fname: &str, len: usize) -> Result<()> {
    if len > MAX_STRING_BYTES {
        return Err(Error::Execution(format!(
            "{fname}: the result would be longer than {MAX_STRING_BYTES} bytes (1 MiB), the longest string a function builds"
        )));
    }
    Ok(())
}

/// The integer argument `i` of a string function (0 when absent).
fn int_arg(rest: &[Value], i: usize) -> i64 {
    match rest.get(i) {
        Some(Value::Int(n)) => *n,
        _ => 0,
    }
}

/// The string argument `i` of a string function ("" when absent).
fn str_arg(rest: &[Value], i: usize) -> &str {
    match rest.get(i) {
        Some(Value::Str(s)) => s,
        _ => "",
    }
}

/// A boolean [`StrFn`] of `s` and its other (non-NULL) arguments `rest`.
pub fn str_test(f: StrFn, s: &str, rest: &[Value]) -> bool {
    let p = str_arg(rest, 0);
    match f {
        StrFn::StartsWith => s.starts_with(p),
        StrFn::EndsWith => s.ends_with(p),
        _ => s.contains(p),
    }
}

/// An integer [`StrFn`] of `s` and its other (non-NULL) arguments `rest`.
pub fn str_int(f: StrFn, s: &str, rest: &[Value]) -> i64 {
    match f {
        StrFn::Ascii => s.chars().next().map_or(0, |c| i64::from(u32::from(c))),
        _ => match s.find(str_arg(rest, 0)) {
            Some(at) => s[..at].chars().count() as i64 + 1,
            None => 0,
        },
    }
}

/// The characters of `s` from the `skip`th, at most `take` of them.
fn char_range(s: &str, skip: usize, take: usize, out: &mut String) {
    out.extend(s.chars().skip(skip).take(take));
}

/// Writes a string-valued [`StrFn`] of `s` and its other (non-NULL)
/// arguments `rest` to `out`.
///
/// # Errors
/// [`Error::Execution`] for a result longer than [`MAX_STRING_BYTES`], or
/// `lpad`/`rpad` that must pad with an empty fill.
pub fn str_into(f: StrFn, s: &str, rest: &[Value], out: &mut String) -> Result<()> {
    let name = f.name();
    match f {
        StrFn::Replace => {
            let (from, to) = (str_arg(rest, 0), str_arg(rest, 1));
            if from.is_empty() {
                out.push_str(s);
                return Ok(());
            }
            if to.len() > from.len() {
                let n = s.matches(from).count();
                let grown = n.saturating_mul(to.len() - from.len());
                check_length(name, s.len().saturating_add(grown))?;
            }
            let mut last = 0;
            for (at, _) in s.match_indices(from) {
                out.push_str(&s[last..at]);
                out.push_str(to);
                last = at + from.len();
            }
            out.push_str(&s[last..]);
        }
        StrFn::Lpad | StrFn::Rpad => {
            let (n, fill) = (int_arg(rest, 0), str_arg(rest, 1));
            let n = usize::try_from(n.max(0)).unwrap_or(usize::MAX);
            let len = s.chars().count();
            if n <= len {
                char_range(s, 0, n, out);
                return Ok(());
            }
            let pad = n - len;
            if fill.is_empty() {
                return Err(Error::Execution(format!(
                    "{name}: cannot pad with an empty string"
                )));
            }
            // Each character is at least one byte.
            check_length(name, s.len().saturating_add(pad))?;
            let start = out.len();
            if f == StrFn::Rpad {
                out.push_str(s);
            }
            out.extend(fill.chars().cycle().take(pad));
            if f == StrFn::Lpad {
                out.push_str(s);
            }
            check_length(name, out.len() - start)?;
        }
        StrFn::Left | StrFn::Right => {
            let n = int_arg(rest, 0);
            let len = s.chars().count();
            let k = usize::try_from(n.unsigned_abs()).unwrap_or(usize::MAX).min(len);
            // Characters kept, and where they start.
            let (skip, take) = match (f, n >= 0) {
                (StrFn::Left, true) => (0, k),
                (StrFn::Left, false) => (0, len - k),
                (_, true) => (len - k, k),
                (_, false) => (k, len - k),
            };
            char_range(s, skip, take, out);
        }
        StrFn::Reverse => out.extend(s.chars().rev()),
        StrFn::Repeat => {
            let n = usize::try_from(int_arg(rest, 0).max(0)).unwrap_or(usize::MAX);
            if s.is_empty() || n == 0 {
                return Ok(());
            }
            check_length(name, s.len().saturating_mul(n))?;
            for _ in 0..n {
                out.push_str(s);
            }
        }
        StrFn::SplitPart => {
            let (sep, i) = (str_arg(rest, 0), int_arg(rest, 1));
            let fields: Vec<&str> = if sep.is_empty() {
                // Every character is a field.
                s.char_indices()
                    .map(|(at, c)| &s[at..at + c.len_utf8()])
                    .collect()
            } else {
                s.split(sep).collect()
            };
            out.push_str(nth_field(&fields, i).unwrap_or(""));
        }
        StrFn::Ltrim | StrFn::Rtrim | StrFn::Trim => {
            let chars: Vec<char> = match rest.first() {
                Some(Value::Str(c)) => c.chars().collect(),
                _ => vec![' '],
            };
            let test = |c: char| chars.contains(&c);
            out.push_str(match f {
                StrFn::Ltrim => s.trim_start_matches(test),
                StrFn::Rtrim => s.trim_end_matches(test),
                _ => s.trim_matches(test),
            });
        }
        _ => {
            return Err(Error::Internal(format!("{name} does not return a string")));
        }
    }
    Ok(())
}

/// Field `i` of `fields` (1-based; from the end when negative; `None` for 0
/// or out of range).
fn nth_field<'s>(fields: &[&'s str], i: i64) -> Option<&'s str> {
    let k = usize::try_from(i.unsigned_abs()).ok()?.checked_sub(1)?;
    if i > 0 {
        fields.get(k).copied()
    } else {
        fields.iter().rev().nth(k).copied()
    }
}

/// `strftime(ts, format)`.
///
/// # Errors
/// [`Error::Execution`] for a timestamp chrono cannot represent or a
/// specifier it cannot format.
pub fn strftime(format: &StrftimeFormat, micros: i64) -> Result<String> {
    use std::fmt::Write;
    let t = chrono::DateTime::from_timestamp_micros(micros)
        .ok_or_else(timestamp_out_of_range)?
        .naive_utc();
    let mut out = String::new();
    write!(out, "{}", t.format(&format.chrono)).map_err(|_| {
        Error::Execution(format!("strftime: cannot format with '{}'", format.text))
    })?;
    Ok(out)
}

/// `date_diff(part, start, end)`: the `part` boundaries crossed from
/// `start` to `end` (DuckDB's definition): calendar years, quarters and
/// months by their numbers; days, hours, minutes, seconds, milliseconds
/// by flooring both instants to the unit; weeks as whole 7-day spans of
/// days, truncated toward zero.
///
/// # Errors
/// [`Error::Overflow`] when the difference overflows.
pub fn date_diff(part: DatePart, start: i64, end: i64) -> Result<i64> {
    let field = |p: DatePart, t: i64| match date_part(p, t) {
        Value::Int(i) => i,
        _ => 0,
    };
    let months = |t: i64| field(DatePart::Year, t) * 12 + field(DatePart::Month, t) - 1;
    let floor = |unit: i64| end.div_euclid(unit).checked_sub(start.div_euclid(unit));
    const DAY: i64 = 86_400_000_000;
    let diff = match part {
        DatePart::Year => Some(field(DatePart::Year, end) - field(DatePart::Year, start)),
        DatePart::Quarter => Some(months(end).div_euclid(3) - months(start).div_euclid(3)),
        DatePart::Month => Some(months(end) - months(start)),
        DatePart::Week => floor(DAY).map(|days| days / 7),
        DatePart::Day => floor(DAY),
        DatePart::Hour => floor(3_600_000_000),
        DatePart::Minute => floor(60_000_000),
        DatePart::Second => floor(1_000_000),
        DatePart::Millisecond => floor(1_000),
        _ => end.checked_sub(start),
    };
    diff.ok_or_else(overflow)
}

/// `micros` moved by `months` calendar months, the day of the month kept
/// or, past the new month's end, its last day (PostgreSQL's rule); `None`
/// out of range.
pub fn add_months(micros: i64, months: i64) -> Option<i64> {
    use chrono::{DateTime, Datelike, Months, NaiveDate};
    let t = DateTime::from_timestamp_micros(micros)?.naive_utc();
    let shifted = if months >= 0 {
        t.checked_add_months(Months::new(u32::try_from(months).ok()?))?
    } else {
        t.checked_sub_months(Months::new(u32::try_from(months.checked_neg()?).ok()?))?
    };
    let _ = NaiveDate::from_ymd_opt(shifted.year(), shifted.month(), 1)?;
    Some(shifted.and_utc().timestamp_micros())
}

/// Converts a value to `to`. A float becomes an integer by rounding half
/// to even, as in PostgreSQL.
///
/// # Errors
/// [`Error::Execution`] when a string does not parse as the target type or a
/// float does not fit an integer.
pub fn cast(v: &Value, to: DataType) -> Result<Value> {
    let fail = || Error::Execution(format!("cannot cast {} to {to}", quote(v)));
    Ok(match (v, to) {
        (Value::Null, _) => Value::Null,
        (v, to) if v.data_type() == Some(to) => v.clone(),
        (Value::Int(i), DataType::Float) => Value::Float(*i as f64),
        (Value::HugeInt(i), DataType::Float) => Value::Float(*i as f64),
        (Value::Float(f), DataType::Int) => {
            // PostgreSQL's float-to-integer cast rounds half to even
            // (rint): 2.5 → 2, 3.5 → 4, -2.5 → -2.
            let r = f.round_ties_even();
            if r.is_finite() && (-9.223_372_036_854_776e18..9.223_372_036_854_776e18).contains(&r) {
                Value::Int(r as i64)
            } else {
                return Err(fail());
            }
        }
        (Value::Float(f), DataType::Interval) => match cast(&Value::Float(*f), DataType::Int)? {
            Value::Int(m) => Value::Interval(m),
            _ => return Err(fail()),
        },
        // Lengths of time as their microseconds, and back: the binder
        // writes these casts for arithmetic, SQL cannot.
        (Value::Interval(m), DataType::Int) => Value::Int(*m),
        (Value::Int(m), DataType::Interval) => Value::Interval(*m),
        (Value::Interval(m), DataType::Float) => Value::Float(*m as f64),
        (Value::Str(s), DataType::Interval) => {
            Value::Interval(crate::sql::parse_interval(s).map_err(|_| fail())?)
        }
        (Value::Bool(b), DataType::Int) => Value::Int(*b as i64),
        (Value::Int(i), DataType::Bool) => Value::Bool(*i != 0),
        (v, DataType::Str) => Value::str(&match v {
            Value::Timestamp(t) => format_timestamp(*t),
            v => v.to_string(),
        }),
        (Value::Str(s), DataType::Int) => Value::Int(s.trim().parse().map_err(|_| fail())?),
        (Value::Str(s), DataType::Float) => Value::Float(s.trim().parse().map_err(|_| fail())?),
        (Value::Str(s), DataType::Timestamp) => {
            Value::Timestamp(parse_timestamp(s.trim()).ok_or_else(fail)?)
        }
        // A date's text, or a timestamp's: its day (as DuckDB casts
        // '2013-09-01 10:00:00' to DATE).
        (Value::Str(s), DataType::Date) => {
            Value::Date(timestamp_to_date(parse_timestamp(s.trim()).ok_or_else(fail)?))
        }
        (Value::Timestamp(t), DataType::Date) => Value::Date(timestamp_to_date(*t)),
        (Value::Date(d), DataType::Timestamp) => {
            Value::Timestamp(date_to_timestamp(*d).ok_or_else(fail)?)
        }
        (Value::Str(s), DataType::Bool) => match s.trim().to_ascii_lowercase().as_str() {
            "true" | "t" | "yes" | "1" => Value::Bool(true),
            "false" | "f" | "no" | "0" => Value::Bool(false),
            _ => return Err(fail()),
        },
        _ => return Err(fail()),
    })
}

fn quote(v: &Value) -> String {
    match v {
        Value::Str(s) => format!("\"{s}\""),
        v => v.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_division_truncates_and_checks() {
        let cases = [
            (BinaryOp::Divide, 7, 2, Some(3)),
            (BinaryOp::Divide, -7, 2, Some(-3)),
            (BinaryOp::Modulo, -7, 2, Some(-1)),
            (BinaryOp::Modulo, 7, -2, Some(1)),
            (BinaryOp::Divide, 1, 0, None),
            (BinaryOp::Divide, i64::MIN, -1, None),
            (BinaryOp::Plus, i64::MAX, 1, None),
        ];
        for (op, a, b, expected) in cases {
            assert_eq!(
                int_arith(op, a, b).ok(),
                expected,
                "{a} {} {b}",
                op.symbol()
            );
        }
    }

    #[test]
    fn three_valued_logic() {
        let (t, f, n) = (Value::Bool(true), Value::Bool(false), Value::Null);
        assert_eq!(and(&n, &f), f);
        assert_eq!(and(&n, &t), n);
        assert_eq!(or(&n, &t), t);
        assert_eq!(or(&n, &f), n);
        assert_eq!(
            in_list(&Value::Int(1), &[Value::Int(2), Value::Null], false),
            n
        );
        assert_eq!(
            in_list(&Value::Int(2), &[Value::Int(2), Value::Null], true),
            f
        );
    }

    #[test]
    fn functions() {
        let ts = parse_timestamp("2013-08-01 08:14:37").unwrap();
        assert_eq!(
            call(&Func::Year, &[Value::Timestamp(ts)]).unwrap(),
            Value::Int(2013)
        );
        let trunc = |u| format_timestamp(date_trunc(u, ts).unwrap());
        assert_eq!(trunc(TruncUnit::Hour), "2013-08-01 08:00:00");
        assert_eq!(trunc(TruncUnit::Month), "2013-08-01 00:00:00");
        assert_eq!(trunc(TruncUnit::Year), "2013-01-01 00:00:00");
        assert_eq!(round_f64(2.5, 0), 3.0);
        assert_eq!(round_f64(-2.5, 0), -3.0);
        assert_eq!(round_f64(1.2345, 2), 1.23);
        let r = |i, d| call(&Func::Round, &[Value::Int(i), Value::Int(d)]).unwrap();
        assert_eq!(r(15, -1), Value::Int(20));
        assert_eq!(r(-15, -1), Value::Int(-20));
        assert_eq!(r(14, -1), Value::Int(10));
        assert!(call(&Func::Abs, &[Value::Int(i64::MIN)]).is_err());
    }
}

#[cfg(test)]
mod function_tests {
    use super::*;
    use crate::plan::expr::RegexpReplace;
    use std::sync::Arc;

    fn ts(s: &str) -> i64 {
        parse_timestamp(s).unwrap_or_else(|| panic!("{s:?} is not a timestamp"))
    }

    #[test]
    fn date_parts_follow_postgresql_and_duckdb() {
        use DatePart::*;
        // DuckDB's documented example, 2021-08-03 11:59:44.123456 (a
        // Tuesday), plus ISO-week edges, a leap day and times before 1970.
        let cases: &[(&str, &[(DatePart, i64)])] = &[
            (
                "2021-08-03 11:59:44.123456",
                &[
                    (Year, 2021),
                    (IsoYear, 2021),
                    (Quarter, 3),
                    (Month, 8),
                    (Week, 31),
                    (Day, 3),
                    (DayOfWeek, 2),
                    (IsoDayOfWeek, 2),
                    (DayOfYear, 215),
                    (Hour, 11),
                    (Minute, 59),
                    (Second, 44),
                    (Millisecond, 44_123),
                    (Microsecond, 44_123_456),
                ],
            ),
            // A Sunday in week 53 of 2004.
            (
                "2005-01-02 00:00:00",
                &[
                    (Week, 53),
                    (IsoYear, 2004),
                    (Year, 2005),
                    (DayOfWeek, 0),
                    (IsoDayOfWeek, 7),
                    (DayOfYear, 2),
                    (Quarter, 1),
                ],
            ),
            // A Monday in week 1 of 2013.
            (
                "2012-12-31 23:00:00",
                &[
                    (Week, 1),
                    (IsoYear, 2013),
                    (DayOfWeek, 1),
                    (DayOfYear, 366),
                    (Quarter, 4),
                    (Hour, 23),
                ],
            ),
            (
                "2016-02-29 12:00:00",
                &[(DayOfYear, 60), (Month, 2), (Day, 29), (Week, 9)],
            ),
            // Half a second before the epoch: a Wednesday.
            (
                "1969-12-31 23:59:59.5",
                &[
                    (Year, 1969),
                    (Day, 31),
                    (Hour, 23),
                    (Minute, 59),
                    (Second, 59),
                    (Millisecond, 59_500),
                    (DayOfWeek, 3),
                    (Week, 1),
                    (IsoYear, 1970),
                ],
            ),
            (
                "1970-01-01 00:00:00",
                &[(DayOfWeek, 4), (Week, 1), (DayOfYear, 1)],
            ),
        ];
        for (text, parts) in cases {
            for (part, expected) in *parts {
                assert_eq!(
                    date_part(*part, ts(text)),
                    Value::Int(*expected),
                    "{} of {text}",
                    part.name()
                );
            }
        }
        assert_eq!(
            date_part(Epoch, ts("2021-08-03 11:59:44.123456")),
            Value::Float(1_627_991_984.123_456)
        );
        assert_eq!(
            date_part(Epoch, ts("1969-12-31 23:59:59.5")),
            Value::Float(-0.5)
        );
        // Every part agrees with `year()` and `date_trunc()` over a span of
        // days crossing years.
        let start = ts("2011-12-25 00:00:00");
        for day in 0..800 {
            let t = start + day * MICROS_PER_DAY + 45_296_789_012 % MICROS_PER_DAY;
            assert_eq!(date_part(Year, t), Value::Int(timestamp_year(t)));
            let first_of_month = date_trunc(TruncUnit::Month, t).unwrap();
            let Value::Int(d) = date_part(Day, t) else {
                panic!()
            };
            assert_eq!(
                first_of_month + (d - 1) * MICROS_PER_DAY,
                date_trunc(TruncUnit::Day, t).unwrap()
            );
            let Value::Int(dow) = date_part(DayOfWeek, t) else {
                panic!()
            };
            let Value::Int(isodow) = date_part(IsoDayOfWeek, t) else {
                panic!()
            };
            assert_eq!(isodow % 7, dow);
        }
        let f = Func::Extract(Minute);
        assert_eq!(call(&f, &[Value::Null]).unwrap(), Value::Null);
    }

    fn regexp(pattern: &str, replacement: &str, flags: &str) -> Func {
        let r = RegexpReplace::new(pattern, replacement, flags)
            .unwrap_or_else(|e| panic!("{pattern:?} {replacement:?} {flags:?}: {e:?}"));
        Func::RegexpReplace(Arc::new(r))
    }

    #[test]
    fn regexp_replace_first_or_every_match_with_backreferences() {
        let cases = [
            // ClickBench's query 29.
            (
                "https://www.example.com/path/x",
                r"^https?://(?:www\.)?([^/]+)/.*$",
                r"\1",
                "",
                "example.com",
            ),
            ("aaa", "a", "b", "", "baa"),
            ("aaa", "a", "b", "g", "bbb"),
            ("abc", "(a)(b)", r"\2\1\0", "", "baabc"),
            ("abc", "B", "x", "", "abc"),
            ("abc", "B", "x", "i", "axc"),
            ("abc", "B", "x", "ic", "abc"),
            ("a.c", ".", "-", "", "-.c"),
            ("a.c", ".", "-", "lg", "a-c"),
            ("abc", "b", "$1 costs $", "", "a$1 costs $c"),
            ("abc", "b", r"\\", "", r"a\c"),
            ("abc", "x*", "-", "g", "-a-b-c-"),
            ("a\nb", "a.b", "x", "", "a\nb"),
            ("a\nb", "a.b", "x", "s", "x"),
            ("日本語", "本", "x", "", "日x語"),
            ("", "^$", "empty", "", "empty"),
        ];
        for (s, pattern, replacement, flags, expected) in cases {
            assert_eq!(
                call(&regexp(pattern, replacement, flags), &[Value::str(s)]).unwrap(),
                Value::str(expected),
                "regexp_replace({s:?}, {pattern:?}, {replacement:?}, {flags:?})"
            );
        }
        assert_eq!(
            call(&regexp("a", "b", ""), &[Value::Null]).unwrap(),
            Value::Null
        );
    }

    #[test]
    fn anchored_patterns_replace_as_the_whole_pattern_does() {
        // `^P.*$` runs only `^P`; the oracle is the whole pattern through
        // the regex crate's own replace.
        let patterns = [
            (r"^https?://(?:www\.)?([^/]+)/.*$", r"\1", ""),
            (r"^https?://(?:www\.)?([^/]+)/.*$", r"<\1>", "g"),
            (r"^(a*)(b?).*$", r"\2\1", ""),
            (r"^x.*$", "y", "i"),
            (r"^(.).*$", r"\1", "s"),
            (r"(?s)^(.).*$", r"\1", ""),
            (r"^(.).*$", r"\0\1", ""),
            (r"(?m)^(.).*$", r"\1", "g"),
            (r"^(.)(.*)$", r"\2", ""),
            (r"^(.).*?$", r"\1", ""),
            (r"^(x)?(a+).*$", r"[\1|\2]\\$", ""),
        ];
        let texts = [
            "",
            "http://www.example.com/a/b",
            "https://example.org/",
            "http://host",
            "aab",
            "aabbb tail",
            "X marks",
            "a\nb",
            "\nab",
            "日本語/x",
        ];
        // A text too long for the backtracker's visited set, which the
        // batch form hands to the regex crate.
        let long = format!("http://{}/{}", "h".repeat(300_000), "a".repeat(10));
        let texts = texts.iter().copied().chain([long.as_str()]);
        for (pattern, replacement, flags) in patterns {
            let r = RegexpReplace::new(pattern, replacement, flags).unwrap();
            let limit = if r.global { 0 } else { 1 };
            let mut scratch = r.scratch();
            for s in texts.clone() {
                let expected = r.regex.replacen(s, limit, r.expansion.as_str());
                assert_eq!(
                    r.replace(s),
                    expected,
                    "regexp_replace({s:?}, {pattern:?}, {replacement:?}, {flags:?})"
                );
                // The batch form, its locations reused from the row before.
                let mut out = String::from("kept|");
                r.replace_into(s, &mut scratch, &mut out);
                assert_eq!(out, format!("kept|{expected}"), "{s:?} {pattern:?}");
            }
        }
        // The rewrite applies to query 29's pattern, not to a `\0` or
        // multi-line one.
        let uses = |p: &str, rep: &str| RegexpReplace::new(p, rep, "").unwrap().runs_prefix();
        assert!(uses(r"^https?://(?:www\.)?([^/]+)/.*$", r"\1"));
        assert!(!uses(r"^(.).*$", r"\0"));
        assert!(!uses(r"(?m)^(.).*$", r"\1"));
        assert!(!uses(r"^(.).*?$", r"\1"));
    }

    #[test]
    fn regexp_replace_rejects_what_re2_rejects() {
        let cases = [
            (
                "(abc",
                "x",
                "",
                1,
                "invalid regular expression: unclosed group",
            ),
            (
                "a",
                r"\1",
                "",
                2,
                "the replacement refers to group \\1, but the pattern has 0 groups",
            ),
            (
                "(a)",
                r"\2",
                "",
                2,
                "the replacement refers to group \\2, but the pattern has 1 group",
            ),
            (
                "a",
                r"\n",
                "",
                2,
                "invalid escape \"\\n\" in the replacement (use \\0 to \\9 for groups, \\\\ for a backslash)",
            ),
            (
                "a",
                "x\\",
                "",
                2,
                "the replacement ends in a lone backslash (use \\\\ for one)",
            ),
            (
                "a",
                "x",
                "gz",
                3,
                "unknown regexp_replace option \"z\" (use g, i, c, l, s, m, n or p)",
            ),
        ];
        for (pattern, replacement, flags, arg, message) in cases {
            assert_eq!(
                RegexpReplace::new(pattern, replacement, flags).err(),
                Some((arg, message.to_string())),
                "{pattern:?} {replacement:?} {flags:?}"
            );
        }
        // A pattern whose compiled form is huge is refused, not built.
        let (arg, message) = RegexpReplace::new("((a{100}){100}){100}", "", "").unwrap_err();
        assert_eq!(arg, 1);
        assert!(
            message.starts_with("invalid regular expression: "),
            "{message}"
        );
    }

    #[test]
    fn float_to_integer_casts_round_half_to_even() {
        let cases = [
            (2.5, Some(2)),
            (3.5, Some(4)),
            (-2.5, Some(-2)),
            (-3.5, Some(-4)),
            (0.5, Some(0)),
            (-0.5, Some(0)),
            (1.5000000001, Some(2)),
            (2.4999999999, Some(2)),
            (-9.223372036854775e18, Some(-9_223_372_036_854_774_784)),
            (9.3e18, None),
            (f64::NAN, None),
            (f64::INFINITY, None),
        ];
        for (x, expected) in cases {
            assert_eq!(
                cast(&Value::Float(x), DataType::Int).ok(),
                expected.map(Value::Int),
                "CAST({x} AS integer)"
            );
        }
    }

    #[test]
    fn strlen_counts_bytes_and_length_characters() {
        for (s, bytes, chars) in [("", 0, 0), ("abc", 3, 3), ("é", 2, 1), ("😈a", 5, 2)] {
            assert_eq!(
                call(&Func::StrLen, &[Value::str(s)]).unwrap(),
                Value::Int(bytes)
            );
            assert_eq!(
                call(&Func::Length, &[Value::str(s)]).unwrap(),
                Value::Int(chars)
            );
        }
    }
}
