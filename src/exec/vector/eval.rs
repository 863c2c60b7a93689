//! The vectorized expression evaluator: the general path that runs whatever
//! no specialized codec kernel covers.
//!
//! # Design
//! Every operator dispatches once per call on the operand kinds (array or
//! scalar) and physical types, then runs one monomorphic loop over typed
//! buffers: `i64` and `f64` arithmetic with overflow and division checks
//! folded into flags, comparisons written 64 rows to a word of a
//! [`Bitmap`], three-valued AND/OR as word operations on value and validity
//! bitmaps, string functions once per dictionary entry when the strings are
//! coded. Scalars stay scalars; nothing builds a [`Value`] per row on these
//! paths. Only rare forms (a CAST from string, a function without a typed
//! loop) fall back to the row-at-a-time semantics of [`crate::plan::eval`],
//! which is the one definition every loop here must agree with (the
//! differential tests check that).
//!
//! Errors follow the reference contract: an error (overflow, division by
//! zero, a failed cast) raised at any selected, non-NULL row fails the
//! evaluation; values at NULL rows never raise.

use std::borrow::Cow;
use std::cmp::Ordering;

use crate::error::{Error, Result};
use crate::kernel::like::LikePattern;
use crate::plan::eval::{self, division_by_zero, overflow};
use crate::plan::{BinaryOp, DatePart, Expr, Func};
use crate::store::{Bitmap, Code, Column, ColumnData, Partition, with_codes};
use crate::types::{
    DataType, Value, cmp_f64, cmp_i64_f64, date_to_timestamp, timestamp_to_date, timestamp_year,
};

use super::array::{
    Array, Data, Datum, PartitionRow, Rows, StrBuf, Strs, decode_column, gather_validity,
};

/// Evaluates `expr` over the selected rows of `part`.
///
/// # Errors
/// As [`eval::eval`] at any selected non-NULL row: overflow, division by
/// zero, failed casts.
pub fn eval<'a>(expr: &Expr, part: &'a Partition, rows: Rows<'_>) -> Result<Datum<'a>> {
    if rows.len == 0 {
        // Nothing is evaluated on no rows (a constant that fails, such as
        // `-(-9223372036854775808)`, must not fail an empty selection).
        return Ok(Datum::Array(Array::from_values(expr.dtype(), &[])));
    }
    let n = rows.len;
    match expr {
        Expr::Column { index, .. } => Ok(decode_column(&part.columns[*index], rows)),
        Expr::Literal { value, .. } => Ok(Datum::Scalar(value.clone())),
        _ if expr.is_constant() => Ok(Datum::Scalar(eval::eval(expr, &eval::NoRow)?)),
        Expr::Neg(e) => match eval(e, part, rows)? {
            Datum::Scalar(v) => Ok(Datum::Scalar(eval::negate(&v)?)),
            Datum::Array(a) => negate(a).map(Datum::Array),
        },
        Expr::Not(e) => Ok(match eval(e, part, rows)? {
            Datum::Scalar(v) => Datum::Scalar(match v {
                Value::Bool(b) => Value::Bool(!b),
                _ => Value::Null,
            }),
            Datum::Array(a) => match a.data {
                Data::Bool(b) => Datum::Array(Array {
                    dtype: DataType::Bool,
                    data: Data::Bool(b.not()),
                    validity: a.validity,
                }),
                _ => return Err(Error::Internal("NOT of a non-boolean".into())),
            },
        }),
        Expr::IsNull {
            expr: inner,
            negated,
        } => Ok(match eval(inner, part, rows)? {
            Datum::Scalar(v) => Datum::Scalar(Value::Bool(v.is_null() != *negated)),
            Datum::Array(a) => {
                let bits = match (&a.validity, negated) {
                    (None, _) => Bitmap::new(n, *negated),
                    (Some(v), true) => v.clone(),
                    (Some(v), false) => v.not(),
                };
                Datum::Array(Array::new(DataType::Bool, Data::Bool(bits)))
            }
        }),
        Expr::Binary {
            op,
            left,
            right,
            dtype,
        } => {
            let l = eval(left, part, rows)?;
            let r = eval(right, part, rows)?;
            binary(*op, l, r, *dtype, n)
        }
        Expr::InList {
            expr: e,
            list,
            negated,
        } if list.iter().all(|x| x.as_literal().is_some()) => {
            let items: Vec<&Value> = list.iter().filter_map(Expr::as_literal).collect();
            match eval(e, part, rows)? {
                Datum::Scalar(v) => {
                    let items: Vec<Value> = items.into_iter().cloned().collect();
                    Ok(Datum::Scalar(eval::in_list(&v, &items, *negated)))
                }
                Datum::Array(a) => Ok(Datum::Array(in_list(&a, &items, *negated))),
            }
        }
        Expr::Like {
            expr: e,
            pattern,
            negated,
        } if matches!(pattern.as_literal(), Some(Value::Str(_))) => {
            let Some(Value::Str(p)) = pattern.as_literal() else {
                return fallback(expr, part, rows);
            };
            let pat = LikePattern::compile(p);
            match eval(e, part, rows)? {
                Datum::Scalar(v) => Ok(Datum::Scalar(match v {
                    Value::Str(s) => Value::Bool(pat.matches(&s) != *negated),
                    _ => Value::Null,
                })),
                Datum::Array(Array {
                    data: Data::Str(s),
                    validity,
                    ..
                }) => {
                    let negated = *negated;
                    let bits = s.map_bits(|x| pat.matches(x) != negated);
                    Ok(Datum::Array(Array {
                        dtype: DataType::Bool,
                        data: Data::Bool(bits),
                        validity,
                    }))
                }
                Datum::Array(_) => Err(Error::Internal("LIKE on a non-string".into())),
            }
        }
        Expr::Case {
            branches,
            else_result,
            dtype,
        } => case(branches, else_result, *dtype, part, rows),
        Expr::Call { func, args, dtype } => match call(func, args, *dtype, part, rows)? {
            Some(d) => Ok(d),
            None => fallback(expr, part, rows),
        },
        Expr::Cast {
            expr: inner,
            dtype,
            try_cast,
        } => {
            let d = eval(inner, part, rows)?;
            match d {
                Datum::Scalar(v) => match eval::cast(&v, *dtype) {
                    Ok(v) => Ok(Datum::Scalar(v)),
                    Err(Error::Execution(_)) if *try_cast => Ok(Datum::Scalar(Value::Null)),
                    Err(e) => Err(e),
                },
                Datum::Array(a) => match cast(a, *dtype) {
                    Ok(Ok(a)) => Ok(Datum::Array(a)),
                    // A value that does not convert: row by row, where
                    // TRY_CAST makes it NULL.
                    Ok(Err(_)) => fallback(expr, part, rows),
                    Err(Error::Execution(_)) if *try_cast => fallback(expr, part, rows),
                    Err(e) => Err(e),
                },
            }
        }
        _ => fallback(expr, part, rows),
    }
}

/// Row-at-a-time evaluation with the reference semantics, for rare forms.
fn fallback<'a>(expr: &Expr, part: &'a Partition, rows: Rows<'_>) -> Result<Datum<'a>> {
    let mut values = Vec::with_capacity(rows.len);
    for j in 0..rows.len {
        values.push(eval::eval(
            expr,
            &PartitionRow {
                part,
                row: rows.row(j),
            },
        )?);
    }
    Ok(Datum::Array(Array::from_values(expr.dtype(), &values)))
}

fn and_validity(a: &Option<Bitmap>, b: &Option<Bitmap>) -> Option<Bitmap> {
    match (a, b) {
        (None, None) => None,
        (Some(a), None) | (None, Some(a)) => Some(a.clone()),
        (Some(a), Some(b)) => Some(a.and(b)),
    }
}

/// True if some row flagged in `bad` is valid.
fn any_valid(bad: &[bool], validity: &Option<Bitmap>) -> bool {
    match validity {
        None => bad.iter().any(|&b| b),
        Some(v) => bad.iter().enumerate().any(|(i, &b)| b && v.get(i)),
    }
}

fn negate(a: Array<'_>) -> Result<Array<'_>> {
    let data = match a.data {
        Data::Int(v) => {
            if v.contains(&i64::MIN) {
                let bad: Vec<bool> = v.iter().map(|&x| x == i64::MIN).collect();
                if any_valid(&bad, &a.validity) {
                    return Err(overflow());
                }
            }
            Data::Int(v.iter().map(|x| x.wrapping_neg()).collect())
        }
        Data::Float(v) => Data::Float(Cow::Owned(v.iter().map(|x| -x).collect())),
        _ => return Err(Error::Internal("negation of a non-number".into())),
    };
    Ok(Array { data, ..a })
}

/// A scalar's physical type for arithmetic and comparisons.
enum Scalar<'v> {
    Int(i64),
    Float(f64),
    Str(&'v str),
    Bool(bool),
}

fn scalar_of(v: &Value) -> Option<Scalar<'_>> {
    Some(match v {
        Value::Int(i) | Value::Timestamp(i) | Value::Date(i) | Value::Interval(i) => {
            Scalar::Int(*i)
        }
        Value::Float(f) => Scalar::Float(*f),
        // Only a sum makes one, read by the row evaluator; never here.
        Value::HugeInt(v) => Scalar::Float(*v as f64),
        Value::Str(s) => Scalar::Str(s),
        Value::Bool(b) => Scalar::Bool(*b),
        Value::Null => return None,
    })
}

fn binary<'a>(
    op: BinaryOp,
    l: Datum<'a>,
    r: Datum<'a>,
    dtype: DataType,
    n: usize,
) -> Result<Datum<'a>> {
    if let (Datum::Scalar(a), Datum::Scalar(b)) = (&l, &r) {
        return Ok(Datum::Scalar(match op {
            BinaryOp::And => eval::and(a, b),
            BinaryOp::Or => eval::or(a, b),
            _ => retype(eval::binary(op, a, b)?, dtype),
        }));
    }
    if matches!(op, BinaryOp::And | BinaryOp::Or) {
        return logic(op, &l, &r, n).map(Datum::Array);
    }
    // A NULL operand makes every row NULL.
    if matches!(&l, Datum::Scalar(Value::Null)) || matches!(&r, Datum::Scalar(Value::Null)) {
        return Ok(Datum::Scalar(Value::Null));
    }
    if op.is_comparison() {
        return Ok(Datum::Array(match (l, r) {
            (Datum::Array(a), Datum::Scalar(k)) => compare_scalar(op, &a, &k)?,
            (Datum::Scalar(k), Datum::Array(a)) => compare_scalar(op.flip(), &a, &k)?,
            (Datum::Array(a), Datum::Array(b)) => compare_arrays(op, &a, &b)?,
            (Datum::Scalar(_), Datum::Scalar(_)) => unreachable_scalars()?,
        }));
    }
    arith(op, l, r, dtype, n).map(Datum::Array)
}

fn unreachable_scalars() -> Result<Array<'static>> {
    Err(Error::Internal(
        "scalar operands reached an array kernel".into(),
    ))
}

/// Gives an integer result the timestamp type where the plan says so.
fn retype(v: Value, dtype: DataType) -> Value {
    match (v, dtype) {
        (Value::Int(i), DataType::Timestamp | DataType::Date | DataType::Interval) => {
            Value::from_integer(i, dtype)
        }
        (v, _) => v,
    }
}

/// Truth bitmaps (`true` rows, `false` rows) of a boolean datum.
fn truth(d: &Datum<'_>, n: usize) -> Result<(Bitmap, Bitmap)> {
    Ok(match d {
        Datum::Scalar(Value::Bool(true)) => (Bitmap::new(n, true), Bitmap::new(n, false)),
        Datum::Scalar(Value::Bool(false)) => (Bitmap::new(n, false), Bitmap::new(n, true)),
        Datum::Scalar(_) => (Bitmap::new(n, false), Bitmap::new(n, false)),
        Datum::Array(a) => {
            let Data::Bool(b) = &a.data else {
                return Err(Error::Internal("AND/OR of a non-boolean".into()));
            };
            match &a.validity {
                None => (b.clone(), b.not()),
                Some(v) => (b.and(v), v.and_not(b)),
            }
        }
    })
}

/// Three-valued AND/OR as word operations: a row is TRUE, FALSE, or NULL
/// when it is neither.
fn logic<'a>(op: BinaryOp, l: &Datum<'a>, r: &Datum<'a>, n: usize) -> Result<Array<'a>> {
    let (lt, lf) = truth(l, n)?;
    let (rt, rf) = truth(r, n)?;
    let (t, f) = if op == BinaryOp::And {
        (lt.and(&rt), lf.or(&rf))
    } else {
        (lt.or(&rt), lf.and(&rf))
    };
    let known = t.or(&f);
    Ok(Array {
        dtype: DataType::Bool,
        data: Data::Bool(t),
        validity: (!known.all_set()).then_some(known),
    })
}

/// Runs `$body` with `$f` bound to the comparison closure of `$op` over
/// values of one type compared with `$cmp`.
macro_rules! with_cmp {
    ($op:expr, $f:ident, |$a:ident: $ta:ty, $b:ident: $tb:ty| $cmp:expr, $body:expr) => {
        match $op {
            BinaryOp::Eq => {
                let $f = |$a: $ta, $b: $tb| $cmp == Ordering::Equal;
                $body
            }
            BinaryOp::NotEq => {
                let $f = |$a: $ta, $b: $tb| $cmp != Ordering::Equal;
                $body
            }
            BinaryOp::Lt => {
                let $f = |$a: $ta, $b: $tb| $cmp == Ordering::Less;
                $body
            }
            BinaryOp::LtEq => {
                let $f = |$a: $ta, $b: $tb| $cmp != Ordering::Greater;
                $body
            }
            BinaryOp::Gt => {
                let $f = |$a: $ta, $b: $tb| $cmp == Ordering::Greater;
                $body
            }
            _ => {
                let $f = |$a: $ta, $b: $tb| $cmp != Ordering::Less;
                $body
            }
        }
    };
}

/// `x op k` for every row of `a`, as a bitmap.
fn compare_scalar<'a>(op: BinaryOp, a: &Array<'a>, k: &Value) -> Result<Array<'a>> {
    let n = a.len();
    let Some(k) = scalar_of(k) else {
        return Ok(Array::repeat(DataType::Bool, &Value::Null, n));
    };
    let bits = match (&a.data, k) {
        (Data::Int(v), Scalar::Int(k)) => {
            with_cmp!(
                op,
                f,
                |x: i64, y: i64| x.cmp(&y),
                Bitmap::from_fn(n, |i| f(v[i], k))
            )
        }
        (Data::Int(v), Scalar::Float(k)) => with_cmp!(
            op,
            f,
            |x: i64, y: f64| cmp_i64_f64(x, y),
            Bitmap::from_fn(n, |i| f(v[i], k))
        ),
        (Data::Float(v), Scalar::Float(k)) => with_cmp!(
            op,
            f,
            |x: f64, y: f64| cmp_f64(x, y),
            Bitmap::from_fn(n, |i| f(v[i], k))
        ),
        (Data::Float(v), Scalar::Int(k)) => with_cmp!(
            op,
            f,
            |x: f64, y: i64| cmp_i64_f64(y, x).reverse(),
            Bitmap::from_fn(n, |i| f(v[i], k))
        ),
        (Data::Str(s), Scalar::Str(k)) => with_cmp!(
            op,
            f,
            |x: &str, y: &str| x.as_bytes().cmp(y.as_bytes()),
            s.map_bits(|x| f(x, k))
        ),
        (Data::Bool(b), Scalar::Bool(k)) => with_cmp!(
            op,
            f,
            |x: bool, y: bool| x.cmp(&y),
            Bitmap::from_fn(n, |i| f(b.get(i), k))
        ),
        _ => return Err(Error::Internal("comparison of unrelated types".into())),
    };
    Ok(Array {
        dtype: DataType::Bool,
        data: Data::Bool(bits),
        validity: a.validity.clone(),
    })
}

/// `a[i] op b[i]` for every row, as a bitmap.
fn compare_arrays<'a>(op: BinaryOp, a: &Array<'a>, b: &Array<'a>) -> Result<Array<'a>> {
    let n = a.len();
    let bits = match (&a.data, &b.data) {
        (Data::Int(x), Data::Int(y)) => {
            with_cmp!(
                op,
                f,
                |p: i64, q: i64| p.cmp(&q),
                Bitmap::from_fn(n, |i| f(x[i], y[i]))
            )
        }
        (Data::Float(x), Data::Float(y)) => with_cmp!(
            op,
            f,
            |p: f64, q: f64| cmp_f64(p, q),
            Bitmap::from_fn(n, |i| f(x[i], y[i]))
        ),
        (Data::Int(x), Data::Float(y)) => with_cmp!(
            op,
            f,
            |p: i64, q: f64| cmp_i64_f64(p, q),
            Bitmap::from_fn(n, |i| f(x[i], y[i]))
        ),
        (Data::Float(x), Data::Int(y)) => with_cmp!(
            op,
            f,
            |p: f64, q: i64| cmp_i64_f64(q, p).reverse(),
            Bitmap::from_fn(n, |i| f(x[i], y[i]))
        ),
        (Data::Str(x), Data::Str(y)) => with_cmp!(
            op,
            f,
            |p: &str, q: &str| p.as_bytes().cmp(q.as_bytes()),
            Bitmap::from_fn(n, |i| f(x.get(i), y.get(i)))
        ),
        (Data::Bool(x), Data::Bool(y)) => with_cmp!(
            op,
            f,
            |p: bool, q: bool| p.cmp(&q),
            Bitmap::from_fn(n, |i| f(x.get(i), y.get(i)))
        ),
        _ => return Err(Error::Internal("comparison of unrelated types".into())),
    };
    Ok(Array {
        dtype: DataType::Bool,
        data: Data::Bool(bits),
        validity: and_validity(&a.validity, &b.validity),
    })
}

/// Checked integer arithmetic over one loop per operator: each element
/// computes a wrapped result and a flag; flags at valid rows are errors.
fn int_arith_loop(
    op: BinaryOp,
    n: usize,
    x: impl Fn(usize) -> i64,
    y: impl Fn(usize) -> i64,
    validity: &Option<Bitmap>,
) -> Result<Vec<i64>> {
    let mut bad = false;
    let mut out = Vec::with_capacity(n);
    macro_rules! run {
        (|$a:ident, $b:ident| $e:expr) => {
            for i in 0..n {
                let ($a, $b) = (x(i), y(i));
                let (r, o): (i64, bool) = $e;
                bad |= o;
                out.push(r);
            }
        };
    }
    match op {
        BinaryOp::Plus => run!(|a, b| a.overflowing_add(b)),
        BinaryOp::Minus => run!(|a, b| a.overflowing_sub(b)),
        BinaryOp::Multiply => run!(|a, b| a.overflowing_mul(b)),
        BinaryOp::Divide => run!(|a, b| if b == 0 || (a == i64::MIN && b == -1) {
            (0, true)
        } else {
            (a / b, false)
        }),
        BinaryOp::Modulo => run!(|a, b| if b == 0 {
            (0, true)
        } else {
            (a.checked_rem(b).unwrap_or(0), false)
        }),
        _ => {
            return Err(Error::Internal(format!(
                "{} is not arithmetic",
                op.symbol()
            )));
        }
    }
    if bad {
        // Find the first valid row that failed, for the right error.
        for i in 0..n {
            if validity.as_ref().is_none_or(|v| v.get(i)) {
                eval::int_arith(op, x(i), y(i))?;
            }
        }
    }
    Ok(out)
}

/// Float arithmetic; division or modulo by zero at a valid row is an error.
fn float_arith_loop(
    op: BinaryOp,
    n: usize,
    x: impl Fn(usize) -> f64,
    y: impl Fn(usize) -> f64,
    validity: &Option<Bitmap>,
) -> Result<Vec<f64>> {
    let out: Vec<f64> = match op {
        BinaryOp::Plus => (0..n).map(|i| x(i) + y(i)).collect(),
        BinaryOp::Minus => (0..n).map(|i| x(i) - y(i)).collect(),
        BinaryOp::Multiply => (0..n).map(|i| x(i) * y(i)).collect(),
        BinaryOp::Divide | BinaryOp::Modulo => {
            let zero = (0..n).any(|i| y(i) == 0.0 && validity.as_ref().is_none_or(|v| v.get(i)));
            if zero {
                return Err(division_by_zero());
            }
            if op == BinaryOp::Divide {
                (0..n).map(|i| x(i) / y(i)).collect()
            } else {
                (0..n).map(|i| x(i) % y(i)).collect()
            }
        }
        _ => {
            return Err(Error::Internal(format!(
                "{} is not arithmetic",
                op.symbol()
            )));
        }
    };
    Ok(out)
}

/// The operands of an arithmetic operator, viewed as functions of the row.
enum Operand<'d> {
    Ints(&'d [i64]),
    Floats(&'d [f64]),
    Int(i64),
    Float(f64),
}

impl Operand<'_> {
    fn is_int(&self) -> bool {
        matches!(self, Operand::Ints(_) | Operand::Int(_))
    }
}

/// Binds `$f` to `$o` (an [`Operand`]) as a function of the row widened
/// to f64, and expands `$body` once per operand kind, so that every pair
/// of operand kinds gets its own monomorphic loop (a boxed closure here
/// cost a dynamic call per element: 13% of a profile of 40 sums of mixed
/// int/float arithmetic).
macro_rules! with_f64 {
    ($o:expr, $n:expr, $f:ident => $body:expr) => {
        match *$o {
            Operand::Ints(a) => {
                let a = &a[..$n];
                let $f = |i: usize| a[i] as f64;
                $body
            }
            Operand::Floats(a) => {
                let a = &a[..$n];
                let $f = |i: usize| a[i];
                $body
            }
            Operand::Int(k) => {
                let k = k as f64;
                let $f = |_: usize| k;
                $body
            }
            Operand::Float(k) => {
                let $f = |_: usize| k;
                $body
            }
        }
    };
}

fn operand<'d>(d: &'d Datum<'_>) -> Result<Operand<'d>> {
    Ok(match d {
        Datum::Scalar(
            Value::Int(i) | Value::Timestamp(i) | Value::Date(i) | Value::Interval(i),
        ) => Operand::Int(*i),
        Datum::Scalar(Value::Float(f)) => Operand::Float(*f),
        Datum::Array(a) => match &a.data {
            Data::Int(v) => Operand::Ints(v),
            Data::Float(v) => Operand::Floats(v),
            _ => return Err(Error::Internal("arithmetic on a non-number".into())),
        },
        _ => return Err(Error::Internal("arithmetic on a non-number".into())),
    })
}

fn arith<'a>(
    op: BinaryOp,
    l: Datum<'a>,
    r: Datum<'a>,
    dtype: DataType,
    n: usize,
) -> Result<Array<'a>> {
    let validity = match (&l, &r) {
        (Datum::Array(a), Datum::Array(b)) => and_validity(&a.validity, &b.validity),
        (Datum::Array(a), _) | (_, Datum::Array(a)) => a.validity.clone(),
        _ => None,
    };
    let (x, y) = (operand(&l)?, operand(&r)?);
    let data = if x.is_int() && y.is_int() {
        // Integer (or timestamp ± interval) arithmetic, specialized on
        // which side is constant.
        let v = match (x, y) {
            (Operand::Ints(a), Operand::Ints(b)) => {
                let (a, b) = (&a[..n], &b[..n]);
                int_arith_loop(op, n, |i| a[i], |i| b[i], &validity)?
            }
            (Operand::Ints(a), Operand::Int(k)) => int_scalar_right(op, a, k, &validity)?,
            (Operand::Int(k), Operand::Ints(b)) => {
                let b = &b[..n];
                int_arith_loop(op, n, |_| k, |i| b[i], &validity)?
            }
            _ => return Err(Error::Internal("integer operands".into())),
        };
        Data::Int(v)
    } else {
        let v = with_f64!(&x, n, fx => with_f64!(&y, n, fy => {
            float_arith_loop(op, n, fx, fy, &validity)?
        }));
        Data::Float(Cow::Owned(v))
    };
    Ok(Array {
        dtype,
        data,
        validity,
    })
}

/// `a op k` with an integer constant on the right: the common shape
/// (`x + 1`, `trip_id / 5`), one loop per operator with the constant
/// hoisted (a divisor known to be nonzero needs no check per row).
fn int_scalar_right(
    op: BinaryOp,
    a: &[i64],
    k: i64,
    validity: &Option<Bitmap>,
) -> Result<Vec<i64>> {
    match op {
        BinaryOp::Divide if k > 0 => Ok(a.iter().map(|v| v / k).collect()),
        BinaryOp::Modulo if k > 0 => Ok(a.iter().map(|v| v % k).collect()),
        BinaryOp::Plus => {
            let mut bad = false;
            let out = a
                .iter()
                .map(|v| {
                    let (r, o) = v.overflowing_add(k);
                    bad |= o;
                    r
                })
                .collect();
            if bad {
                return int_arith_loop(op, a.len(), |i| a[i], |_| k, validity);
            }
            Ok(out)
        }
        _ => int_arith_loop(op, a.len(), |i| a[i], |_| k, validity),
    }
}

/// `x [NOT] IN (literals)` over an array.
/// Longest integer IN list searched by binary search; a longer one is put
/// in a [`crate::exec::join_filter::KeySet`].
const IN_LIST_SEARCH_MAX: usize = 16;

fn in_list<'a>(a: &Array<'a>, items: &[&Value], negated: bool) -> Array<'a> {
    let n = a.len();
    let has_null = items.iter().any(|v| v.is_null());
    let hits = match &a.data {
        Data::Int(v) => {
            let mut ks: Vec<i64> = items
                .iter()
                .filter_map(|x| match x {
                    Value::Int(i) | Value::Timestamp(i) | Value::Date(i) | Value::Interval(i) => {
                        Some(*i)
                    }
                    _ => None,
                })
                .collect();
            let fs: Vec<f64> = items
                .iter()
                .filter_map(|x| match x {
                    Value::Float(f) => Some(*f),
                    _ => None,
                })
                .collect();
            let float_hit = |x: i64| fs.iter().any(|&f| cmp_i64_f64(x, f) == Ordering::Equal);
            if ks.len() > IN_LIST_SEARCH_MAX {
                // A long list (an IN subquery's values, TPC-H Q20's 2,127
                // part keys): a bitmap over the keys' span, or a hash set,
                // instead of a binary search that mispredicts at every
                // step (20 ns a row).
                let set = crate::exec::join_filter::KeySet::new(&ks);
                Bitmap::from_fn(n, |i| set.contains(v[i]) || float_hit(v[i]))
            } else {
                ks.sort_unstable();
                ks.dedup();
                Bitmap::from_fn(n, |i| ks.binary_search(&v[i]).is_ok() || float_hit(v[i]))
            }
        }
        Data::Float(v) => {
            let ks: Vec<f64> = items.iter().filter_map(|x| x.as_f64()).collect();
            Bitmap::from_fn(n, |i| {
                ks.iter().any(|&k| cmp_f64(v[i], k) == Ordering::Equal)
            })
        }
        Data::Str(s) => {
            let mut ks: Vec<&str> = items
                .iter()
                .filter_map(|x| match x {
                    Value::Str(s) => Some(&**s),
                    _ => None,
                })
                .collect();
            ks.sort_unstable();
            s.map_bits(|x| ks.binary_search(&x).is_ok())
        }
        Data::Bool(b) => {
            let t = items.iter().any(|x| matches!(x, Value::Bool(true)));
            let f = items.iter().any(|x| matches!(x, Value::Bool(false)));
            Bitmap::from_fn(n, |i| if b.get(i) { t } else { f })
        }
    };
    // A miss is NULL when the list holds a NULL; a hit is TRUE.
    let validity = match (has_null, &a.validity) {
        (false, v) => v.clone(),
        (true, None) => Some(hits.clone()),
        (true, Some(v)) => Some(v.and(&hits)),
    };
    let bits = if negated { hits.not() } else { hits };
    Array {
        dtype: DataType::Bool,
        data: Data::Bool(bits),
        validity: validity.filter(|v| !v.all_set()),
    }
}

/// Searched CASE: each THEN is evaluated only on the rows its WHEN picks
/// (and no earlier WHEN did), so a THEN that would fail elsewhere (a
/// division guarded by its WHEN) does not.
fn case<'a>(
    branches: &[(Expr, Expr)],
    else_result: &Expr,
    dtype: DataType,
    part: &'a Partition,
    rows: Rows<'_>,
) -> Result<Datum<'a>> {
    let n = rows.len;
    // Positions (into the rows) not decided yet.
    let mut open: Vec<u32> = (0..n as u32).collect();
    let mut pieces: Vec<(Vec<u32>, Datum<'a>)> = Vec::new();
    for (when, then) in branches {
        if open.is_empty() {
            break;
        }
        let sub: Vec<u32> = open.iter().map(|&j| rows.row(j as usize) as u32).collect();
        let cond = eval(when, part, Rows::some(&sub))?;
        let (taken, rest) = split_true(&cond, &open)?;
        if !taken.is_empty() {
            let sel: Vec<u32> = taken.iter().map(|&j| rows.row(j as usize) as u32).collect();
            pieces.push((taken, eval(then, part, Rows::some(&sel))?));
        }
        open = rest;
    }
    if !open.is_empty() {
        let sel: Vec<u32> = open.iter().map(|&j| rows.row(j as usize) as u32).collect();
        let d = eval(else_result, part, Rows::some(&sel))?;
        pieces.push((open, d));
    }
    if let [(_, Datum::Scalar(v))] = &pieces[..] {
        return Ok(Datum::Scalar(v.clone()));
    }
    scatter(pieces, dtype, n).map(Datum::Array)
}

/// Splits `positions` by a boolean datum evaluated on them: TRUE ones, and
/// the rest (FALSE or NULL).
fn split_true(cond: &Datum<'_>, positions: &[u32]) -> Result<(Vec<u32>, Vec<u32>)> {
    match cond {
        Datum::Scalar(Value::Bool(true)) => Ok((positions.to_vec(), Vec::new())),
        Datum::Scalar(_) => Ok((Vec::new(), positions.to_vec())),
        Datum::Array(a) => {
            let Data::Bool(b) = &a.data else {
                return Err(Error::Internal("CASE WHEN of a non-boolean".into()));
            };
            let mut yes = Vec::new();
            let mut no = Vec::new();
            for (i, &p) in positions.iter().enumerate() {
                if b.get(i) && a.is_valid(i) {
                    yes.push(p);
                } else {
                    no.push(p);
                }
            }
            Ok((yes, no))
        }
    }
}

/// Assembles an array of `n` rows from pieces that each cover some
/// positions.
fn scatter<'a>(pieces: Vec<(Vec<u32>, Datum<'a>)>, dtype: DataType, n: usize) -> Result<Array<'a>> {
    let mut valid = vec![true; n];
    let value_at = |d: &Datum<'a>, i: usize| -> Value { d.value(i) };
    let data = match dtype {
        DataType::Int
        | DataType::Timestamp
        | DataType::Date
        | DataType::Interval
        | DataType::Null => {
            let mut out = vec![0i64; n];
            for (pos, d) in &pieces {
                for (i, &p) in pos.iter().enumerate() {
                    match d {
                        Datum::Array(Array {
                            data: Data::Int(v),
                            validity,
                            ..
                        }) => {
                            out[p as usize] = v[i];
                            valid[p as usize] = validity.as_ref().is_none_or(|b| b.get(i));
                        }
                        _ => match value_at(d, i) {
                            Value::Int(x)
                            | Value::Timestamp(x)
                            | Value::Date(x)
                            | Value::Interval(x) => out[p as usize] = x,
                            _ => valid[p as usize] = false,
                        },
                    }
                }
            }
            Data::Int(out)
        }
        DataType::Float => {
            let mut out = vec![0f64; n];
            for (pos, d) in &pieces {
                for (i, &p) in pos.iter().enumerate() {
                    match d {
                        Datum::Array(Array {
                            data: Data::Float(v),
                            validity,
                            ..
                        }) => {
                            out[p as usize] = v[i];
                            valid[p as usize] = validity.as_ref().is_none_or(|b| b.get(i));
                        }
                        _ => match value_at(d, i).as_f64() {
                            Some(x) => out[p as usize] = x,
                            None => valid[p as usize] = false,
                        },
                    }
                }
            }
            Data::Float(Cow::Owned(out))
        }
        DataType::Bool => {
            let mut out = vec![false; n];
            for (pos, d) in &pieces {
                for (i, &p) in pos.iter().enumerate() {
                    match value_at(d, i) {
                        Value::Bool(b) => out[p as usize] = b,
                        _ => valid[p as usize] = false,
                    }
                }
            }
            Data::Bool(Bitmap::from_bools(&out))
        }
        DataType::Str => {
            // Strings: remember which piece and index each row comes from,
            // then copy in row order.
            let mut from: Vec<(u32, u32)> = vec![(u32::MAX, 0); n];
            for (k, (pos, _)) in pieces.iter().enumerate() {
                for (i, &p) in pos.iter().enumerate() {
                    from[p as usize] = (k as u32, i as u32);
                }
            }
            let mut out = StrBuf::with_capacity(n);
            for (p, &(k, i)) in from.iter().enumerate() {
                let (k, i) = (k as usize, i as usize);
                match pieces.get(k).map(|x| &x.1) {
                    Some(Datum::Scalar(Value::Str(s))) => out.push(s),
                    Some(Datum::Array(a)) if a.is_valid(i) => match &a.data {
                        Data::Str(s) => out.push(s.get(i)),
                        _ => out.push(""),
                    },
                    _ => {
                        valid[p] = false;
                        out.push("");
                    }
                }
            }
            Data::Str(Strs::Owned(out))
        }
    };
    let validity = valid.iter().any(|v| !v).then(|| Bitmap::from_bools(&valid));
    Ok(Array {
        dtype,
        data,
        validity,
    })
}

/// `strlen` (`chars` false) of a packed, FSST or dictionary string column
/// without reading or decoding its text: packed strings from their
/// offsets, FSST from the codes' symbol lengths (ClickBench q28,
/// `avg(strlen(URL))`, decoded every URL before), a dictionary's entries
/// from their lengths (q28 with URL dictionary-coded: 2.1 ms instead of 32
/// ms on 1M rows). `length` (`chars` true) of a dictionary column counts
/// its entries' characters in place. `None` for other codecs.
fn byte_lengths<'a>(col: &Column, rows: Rows<'_>, chars: bool) -> Option<Datum<'a>> {
    let mut out = Vec::with_capacity(rows.len);
    match &col.data {
        // A dictionary's entries measured in place, without decoding the
        // rows' strings; a byte length is in the entry's fat pointer.
        ColumnData::Dict { dict, codes } => {
            let entries = dict.values();
            let len = |code: usize| {
                entries.get(code).map_or(0, |e| {
                    if chars {
                        e.chars().count() as i64
                    } else {
                        e.len() as i64
                    }
                })
            };
            with_codes!(codes, c => match rows.range() {
                Some(r) => out.extend(c[r].iter().map(|&k| len(k.to_usize()))),
                None => out.extend(
                    rows.sel
                        .unwrap_or_default()
                        .iter()
                        .map(|&i| len(c[i as usize].to_usize())),
                ),
            })
        }
        _ if chars => return None,
        ColumnData::Packed(p) => {
            out.extend((0..rows.len).map(|j| p.bytes_of(rows.row(j)).len() as i64));
        }
        ColumnData::Fsst(f) => match rows.range() {
            Some(r) => f.byte_lengths_range(r, &mut out),
            None => f.byte_lengths_selection(rows.sel.unwrap_or_default(), &mut out),
        },
        _ => return None,
    }
    Some(Datum::Array(Array {
        dtype: DataType::Int,
        data: Data::Int(out),
        validity: gather_validity(col, rows),
    }))
}

/// Typed loops for the common functions; `None` for the rest (the caller
/// falls back to the reference semantics).
fn call<'a>(
    func: &Func,
    args: &[Expr],
    dtype: DataType,
    part: &'a Partition,
    rows: Rows<'_>,
) -> Result<Option<Datum<'a>>> {
    if let (Func::StrLen | Func::Length, [Expr::Column { index, .. }]) = (func, args)
        && let Some(lengths) =
            byte_lengths(&part.columns[*index], rows, matches!(func, Func::Length))
    {
        return Ok(Some(lengths));
    }
    if *func == Func::Random {
        let xs = crate::kernel::random::uniform_floats(rows.len);
        return Ok(Some(Datum::Array(Array::new(
            DataType::Float,
            Data::Float(Cow::Owned(xs)),
        ))));
    }
    if matches!(func, Func::Greatest | Func::Least | Func::ConcatWs) {
        // Not NULL-strict: the reference semantics, row by row.
        return Ok(None);
    }
    let mut values = Vec::with_capacity(args.len());
    for a in args {
        values.push(eval(a, part, rows)?);
    }
    if *func == Func::Concat {
        return Ok(concat(&values));
    }
    // Constant arguments after the first (round's digits) must be scalars.
    let rest: Option<Vec<Value>> = values[1..]
        .iter()
        .map(|d| match d {
            Datum::Scalar(v) => Some(v.clone()),
            Datum::Array(_) => None,
        })
        .collect();
    let Some(rest) = rest else {
        return Ok(None);
    };
    if rest.iter().any(Value::is_null) {
        return Ok(Some(Datum::Scalar(Value::Null)));
    }
    let first = values.swap_remove(0);
    let a = match first {
        Datum::Scalar(v) => {
            let mut all = vec![v];
            all.extend(rest);
            return Ok(Some(Datum::Scalar(eval::call(func, &all)?)));
        }
        Datum::Array(a) => a,
    };
    let validity = a.validity.clone();
    let data = match (func, &a.data) {
        (Func::Year, Data::Int(v)) => Data::Int(v.iter().map(|&t| timestamp_year(t)).collect()),
        (Func::DateTrunc(u), Data::Int(v)) => {
            // A value out of range (near i64::MIN) takes the reference
            // path, which reports it for non-NULL rows only.
            let truncated: Option<Vec<i64>> = v.iter().map(|&t| eval::date_trunc(*u, t)).collect();
            match truncated {
                Some(t) => Data::Int(t),
                None => return Ok(None),
            }
        }
        (Func::IntervalPart(DatePart::Epoch), Data::Int(v)) => {
            Data::Float(Cow::Owned(v.iter().map(|&m| m as f64 / 1e6).collect()))
        }
        (Func::IntervalPart(p), Data::Int(v)) => Data::Int(
            v.iter()
                .map(|&m| match eval::interval_part(*p, m) {
                    Value::Int(i) => i,
                    _ => 0,
                })
                .collect(),
        ),
        (Func::Extract(DatePart::Epoch), Data::Int(v)) => {
            Data::Float(Cow::Owned(v.iter().map(|&t| t as f64 / 1e6).collect()))
        }
        (Func::Extract(p), Data::Int(v)) => Data::Int(
            v.iter()
                .map(|&t| match eval::date_part(*p, t) {
                    Value::Int(i) => i,
                    _ => 0,
                })
                .collect(),
        ),
        (Func::Floor, Data::Float(v)) => {
            Data::Float(Cow::Owned(v.iter().map(|x| x.floor()).collect()))
        }
        (Func::Ceil, Data::Float(v)) => {
            Data::Float(Cow::Owned(v.iter().map(|x| x.ceil()).collect()))
        }
        (Func::Floor | Func::Ceil | Func::Trunc, Data::Int(_)) => {
            return Ok(Some(Datum::Array(a)));
        }
        (Func::Trunc, Data::Float(v)) => {
            Data::Float(Cow::Owned(v.iter().map(|x| x.trunc()).collect()))
        }
        (Func::Math(m), Data::Float(v)) => {
            Data::Float(Cow::Owned(v.iter().map(|&x| m.apply(x)).collect()))
        }
        (Func::Math(m), Data::Int(v)) => {
            Data::Float(Cow::Owned(v.iter().map(|&x| m.apply(x as f64)).collect()))
        }
        (Func::Round, Data::Float(v)) => {
            let digits = match rest.first() {
                Some(Value::Int(d)) => *d,
                _ => 0,
            };
            Data::Float(Cow::Owned(
                v.iter().map(|&x| eval::round_f64(x, digits)).collect(),
            ))
        }
        (Func::Abs, Data::Float(v)) => Data::Float(Cow::Owned(v.iter().map(|x| x.abs()).collect())),
        (Func::Abs, Data::Int(v)) => {
            if v.contains(&i64::MIN) {
                let bad: Vec<bool> = v.iter().map(|&x| x == i64::MIN).collect();
                if any_valid(&bad, &validity) {
                    return Err(overflow());
                }
            }
            Data::Int(v.iter().map(|x| x.wrapping_abs()).collect())
        }
        (Func::Substring, Data::Str(s)) => {
            let start = match rest.first() {
                Some(Value::Int(i)) => *i,
                _ => 1,
            };
            let end = match rest.get(1) {
                // A negative length is an error for the rows that are not
                // NULL: the reference path reports it.
                Some(Value::Int(n)) if *n < 0 => return Ok(None),
                Some(Value::Int(n)) => start.saturating_add(*n),
                _ => i64::MAX,
            };
            Data::Str(s.map_strs(|x, out| out.push_str(eval::substring(x, start, end))))
        }
        (Func::Length, Data::Str(s)) => Data::Int(s.map(|x| x.chars().count() as i64)),
        (Func::StrLen, Data::Str(s)) => Data::Int(s.map(|x| x.len() as i64)),
        (Func::RegexpReplace(r), Data::Str(s)) => {
            let mut scratch = r.scratch();
            Data::Str(s.map_strs(|x, out| r.replace_into(x, &mut scratch, out)))
        }
        (Func::Lower, Data::Str(s)) => {
            Data::Str(s.map_strs(|x, out| out.push_str(&x.to_lowercase())))
        }
        (Func::Upper, Data::Str(s)) => {
            Data::Str(s.map_strs(|x, out| out.push_str(&x.to_uppercase())))
        }
        (Func::Str(f), Data::Str(s)) => match f.result_type() {
            DataType::Bool => Data::Bool(s.map_bits(|x| eval::str_test(*f, x, &rest))),
            DataType::Int => Data::Int(s.map(|x| eval::str_int(*f, x, &rest))),
            _ => {
                // An error (a result over the length limit) may come from
                // a dictionary entry no selected row holds: the rows are
                // evaluated one by one to find out.
                let mut failed = false;
                let strs = s.map_strs(|x, out| {
                    if !failed && eval::str_into(*f, x, &rest, out).is_err() {
                        failed = true;
                    }
                });
                if failed {
                    return Ok(None);
                }
                Data::Str(strs)
            }
        },
        _ => return Ok(None),
    };
    Ok(Some(Datum::Array(Array {
        dtype,
        data,
        validity,
    })))
}

/// `a || b || …` with at most one string array among the operands (the
/// others scalars), written once per dictionary entry of that array;
/// `None` for other mixes, or a result over the length limit (the caller
/// falls back to the rows one by one).
fn concat<'a>(values: &[Datum<'a>]) -> Option<Datum<'a>> {
    let mut array = None;
    for (i, d) in values.iter().enumerate() {
        match d {
            Datum::Scalar(Value::Null) => return Some(Datum::Scalar(Value::Null)),
            Datum::Scalar(Value::Str(_)) => {}
            Datum::Array(Array {
                data: Data::Str(s),
                validity,
                ..
            }) if array.is_none() => array = Some((i, s, validity)),
            _ => return None,
        }
    }
    let text = |d: &Datum<'_>| match d {
        Datum::Scalar(Value::Str(s)) => s.to_string(),
        _ => String::new(),
    };
    let Some((at, s, validity)) = array else {
        let joined: String = values.iter().map(text).collect();
        return (joined.len() <= crate::plan::expr::MAX_STRING_BYTES)
            .then(|| Datum::Scalar(Value::str(&joined)));
    };
    let before: String = values[..at].iter().map(text).collect();
    let after: String = values[at + 1..].iter().map(text).collect();
    let mut too_long = false;
    let strs = s.map_strs(|x, out| {
        if before.len() + x.len() + after.len() > crate::plan::expr::MAX_STRING_BYTES {
            too_long = true;
            return;
        }
        out.push_str(&before);
        out.push_str(x);
        out.push_str(&after);
    });
    (!too_long).then(|| {
        Datum::Array(Array {
            dtype: DataType::Str,
            data: Data::Str(strs),
            validity: validity.clone(),
        })
    })
}

/// Typed casts; `Ok(Err(array))` hands the array back for the rare pairs
/// left to the reference semantics (strings parsed as numbers or
/// timestamps).
fn cast(a: Array<'_>, to: DataType) -> Result<std::result::Result<Array<'_>, Array<'_>>> {
    if a.dtype == to {
        return Ok(Ok(a));
    }
    // An interval is its microseconds: the binder's casts between the two
    // change the type alone.
    if matches!(
        (a.dtype, to),
        (DataType::Int, DataType::Interval) | (DataType::Interval, DataType::Int)
    ) {
        return Ok(Ok(Array { dtype: to, ..a }));
    }
    let validity = a.validity.clone();
    let data = match (&a.data, to) {
        (Data::Int(v), DataType::Float)
            if matches!(a.dtype, DataType::Int | DataType::Interval) =>
        {
            Data::Float(Cow::Owned(v.iter().map(|&x| x as f64).collect()))
        }
        (Data::Float(v), DataType::Int | DataType::Interval) => {
            let mut out = Vec::with_capacity(v.len());
            for (i, &x) in v.iter().enumerate() {
                if validity.as_ref().is_none_or(|b| b.get(i)) {
                    match eval::cast(&Value::Float(x), DataType::Int)? {
                        Value::Int(r) => out.push(r),
                        _ => out.push(0),
                    }
                } else {
                    out.push(0);
                }
            }
            Data::Int(out)
        }
        (Data::Bool(b), DataType::Int) => {
            Data::Int((0..b.len()).map(|i| b.get(i) as i64).collect())
        }
        // A timestamp's day; a date's midnight (checked: a date past
        // ±292,000 years has no timestamp).
        (Data::Int(v), DataType::Date) if a.dtype == DataType::Timestamp => {
            Data::Int(v.iter().map(|&t| timestamp_to_date(t)).collect())
        }
        (Data::Int(v), DataType::Timestamp) if a.dtype == DataType::Date => {
            let mut out = Vec::with_capacity(v.len());
            for (i, &d) in v.iter().enumerate() {
                match date_to_timestamp(d) {
                    Some(t) => out.push(t),
                    None if validity.as_ref().is_some_and(|b| !b.get(i)) => out.push(0),
                    None => return Ok(Err(a)),
                }
            }
            Data::Int(out)
        }
        (Data::Int(v), DataType::Bool) if a.dtype == DataType::Int => {
            Data::Bool(Bitmap::from_fn(v.len(), |i| v[i] != 0))
        }
        (_, DataType::Str) => {
            let n = a.len();
            let mut out = StrBuf::with_capacity(n);
            for i in 0..n {
                match a.value(i) {
                    Value::Null => out.push(""),
                    v => match eval::cast(&v, DataType::Str)? {
                        Value::Str(s) => out.push(&s),
                        _ => out.push(""),
                    },
                }
            }
            Data::Str(Strs::Owned(out))
        }
        _ => return Ok(Err(a)),
    };
    Ok(Ok(Array {
        dtype: to,
        data,
        validity,
    }))
}

/// The positions `j` (into the rows) where a boolean datum is TRUE.
pub fn true_positions(d: &Datum<'_>, n: usize) -> Vec<u32> {
    match d {
        Datum::Scalar(Value::Bool(true)) => (0..n as u32).collect(),
        Datum::Scalar(_) => Vec::new(),
        Datum::Array(a) => match &a.data {
            Data::Bool(b) => match &a.validity {
                None => b.ones().map(|i| i as u32).collect(),
                Some(v) => b.and(v).ones().map(|i| i as u32).collect(),
            },
            _ => Vec::new(),
        },
    }
}

/// Compares two values for ORDER BY on one key.
pub fn order_values(a: &Value, b: &Value, desc: bool, nulls_first: bool) -> Ordering {
    match (a.is_null(), b.is_null()) {
        (true, true) => Ordering::Equal,
        (true, false) => {
            if nulls_first {
                Ordering::Less
            } else {
                Ordering::Greater
            }
        }
        (false, true) => {
            if nulls_first {
                Ordering::Greater
            } else {
                Ordering::Less
            }
        }
        _ => {
            let o = a.total_cmp(b);
            if desc { o.reverse() } else { o }
        }
    }
}
