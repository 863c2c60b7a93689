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
    DataType, MICROS_PER_DAY, Value, civil_from_days, days_from_civil, format_timestamp,
    parse_timestamp, timestamp_year,
};

use super::expr::{Expr, Func, TruncUnit};

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
    Error::Execution("integer overflow".into())
}

/// The error for division (or modulo) by zero.
pub fn division_by_zero() -> Error {
    Error::Execution("division by zero".into())
}

/// Evaluates `expr` on one row.
///
/// # Errors
/// [`Error::Execution`] on overflow, division by zero or a failed cast.
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
            call(*func, &values)?
        }
        Expr::Cast { expr, dtype } => cast(&eval(expr, row)?, *dtype)?,
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
        (Value::Timestamp(a), Value::Int(b)) => int_arith(op, *a, *b).map(Value::Timestamp),
        (Value::Int(a), Value::Timestamp(b)) => int_arith(op, *a, *b).map(Value::Timestamp),
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

/// Truncates a timestamp to a unit.
pub fn date_trunc(unit: TruncUnit, micros: i64) -> i64 {
    let step = match unit {
        TruncUnit::Second => 1_000_000,
        TruncUnit::Minute => 60_000_000,
        TruncUnit::Hour => 3_600_000_000,
        TruncUnit::Day => MICROS_PER_DAY,
        TruncUnit::Month | TruncUnit::Year => {
            let (y, m, _) = civil_from_days(micros.div_euclid(MICROS_PER_DAY));
            let m = if unit == TruncUnit::Year { 1 } else { m };
            return days_from_civil(y, m, 1) * MICROS_PER_DAY;
        }
    };
    micros - micros.rem_euclid(step)
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

/// A scalar function on evaluated arguments.
///
/// # Errors
/// Overflow in `abs`/`round` of integers.
pub fn call(func: Func, args: &[Value]) -> Result<Value> {
    if args.iter().any(Value::is_null) {
        return Ok(Value::Null);
    }
    let arg = &args[0];
    Ok(match (func, arg) {
        (Func::Year, Value::Timestamp(t)) => Value::Int(timestamp_year(*t)),
        (Func::DateTrunc(unit), Value::Timestamp(t)) => Value::Timestamp(date_trunc(unit, *t)),
        (Func::Floor, Value::Float(f)) => Value::Float(f.floor()),
        (Func::Ceil, Value::Float(f)) => Value::Float(f.ceil()),
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
        _ => {
            return Err(Error::Internal(format!("function {func:?} on {arg:?}")));
        }
    })
}

/// Converts a value to `to`.
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
        (Value::Float(f), DataType::Int) => {
            let r = f.round();
            if r.is_finite() && (-9.223_372_036_854_776e18..9.223_372_036_854_776e18).contains(&r) {
                Value::Int(r as i64)
            } else {
                return Err(fail());
            }
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
            call(Func::Year, &[Value::Timestamp(ts)]).unwrap(),
            Value::Int(2013)
        );
        let trunc = |u| format_timestamp(date_trunc(u, ts));
        assert_eq!(trunc(TruncUnit::Hour), "2013-08-01 08:00:00");
        assert_eq!(trunc(TruncUnit::Month), "2013-08-01 00:00:00");
        assert_eq!(trunc(TruncUnit::Year), "2013-01-01 00:00:00");
        assert_eq!(round_f64(2.5, 0), 3.0);
        assert_eq!(round_f64(-2.5, 0), -3.0);
        assert_eq!(round_f64(1.2345, 2), 1.23);
        let r = |i, d| call(Func::Round, &[Value::Int(i), Value::Int(d)]).unwrap();
        assert_eq!(r(15, -1), Value::Int(20));
        assert_eq!(r(-15, -1), Value::Int(-20));
        assert_eq!(r(14, -1), Value::Int(10));
        assert!(call(Func::Abs, &[Value::Int(i64::MIN)]).is_err());
    }
}
