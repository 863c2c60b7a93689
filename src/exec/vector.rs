//! Vectorized expression evaluation over a partition's selected rows.
//!
//! # Design
//! An expression evaluates to a [`Datum`]: a scalar when it is constant over
//! the rows (literals, constant columns), otherwise an [`Array`] with one
//! value per selected row. Columns are decoded from their codec in one tight
//! loop; arithmetic, comparisons, logic and the common functions have typed
//! loops; everything else (CASE, LIKE on general patterns, casts, string
//! functions) falls back to the row-at-a-time semantics in
//! [`crate::plan::eval`], so every expression runs and agrees with it.

use std::borrow::Cow;
use std::cmp::Ordering;

use crate::error::Result;
use crate::kernel::like::LikePattern;
use crate::plan::eval::{self, RowSource, compare, float_arith, int_arith};
use crate::plan::{Expr, Func};
use crate::sql::ast::BinaryOp;
use crate::store::{Code, Column, ColumnData, Partition};
use crate::types::{DataType, Value, cmp_f64, cmp_i64_f64, timestamp_year};
use crate::with_codes;

/// Values of one array, by physical type (timestamps are `Int`).
#[derive(Debug, Clone)]
pub enum Data<'a> {
    /// Integers or timestamps (microseconds).
    Int(Vec<i64>),
    /// Floats.
    Float(Vec<f64>),
    /// Booleans.
    Bool(Vec<bool>),
    /// Strings, borrowed from the partition where possible.
    Str(Vec<Cow<'a, str>>),
}

/// One value per selected row, with a validity mask when any is NULL.
///
/// # Invariants
/// `valid`, when present, has the data's length; values at invalid rows are
/// arbitrary and never read as values.
#[derive(Debug, Clone)]
pub struct Array<'a> {
    /// Logical type.
    pub dtype: DataType,
    /// The values.
    pub data: Data<'a>,
    /// `false` marks a NULL row.
    pub valid: Option<Vec<bool>>,
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
    /// Number of rows.
    pub fn len(&self) -> usize {
        match &self.data {
            Data::Int(v) => v.len(),
            Data::Float(v) => v.len(),
            Data::Bool(v) => v.len(),
            Data::Str(v) => v.len(),
        }
    }

    /// True when there are no rows.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether row `i` is not NULL.
    #[inline]
    pub fn is_valid(&self, i: usize) -> bool {
        self.valid.as_ref().is_none_or(|v| v[i])
    }

    /// The value of row `i`.
    pub fn value(&self, i: usize) -> Value {
        if !self.is_valid(i) {
            return Value::Null;
        }
        match &self.data {
            Data::Int(v) if self.dtype == DataType::Timestamp => Value::Timestamp(v[i]),
            Data::Int(v) => Value::Int(v[i]),
            Data::Float(v) => Value::Float(v[i]),
            Data::Bool(v) => Value::Bool(v[i]),
            Data::Str(v) => Value::str(&v[i]),
        }
    }

    /// An array from values of type `dtype` (NULLs allowed).
    pub fn from_values(dtype: DataType, values: &[Value]) -> Array<'static> {
        let valid: Vec<bool> = values.iter().map(|v| !v.is_null()).collect();
        let data = match dtype {
            DataType::Int | DataType::Timestamp => Data::Int(
                values
                    .iter()
                    .map(|v| match v {
                        Value::Int(i) | Value::Timestamp(i) => *i,
                        _ => 0,
                    })
                    .collect(),
            ),
            DataType::Float => Data::Float(
                values
                    .iter()
                    .map(|v| match v {
                        Value::Float(f) => *f,
                        Value::Int(i) => *i as f64,
                        _ => 0.0,
                    })
                    .collect(),
            ),
            DataType::Bool => Data::Bool(
                values
                    .iter()
                    .map(|v| matches!(v, Value::Bool(true)))
                    .collect(),
            ),
            DataType::Str => Data::Str(
                values
                    .iter()
                    .map(|v| match v {
                        Value::Str(s) => Cow::Owned(s.to_string()),
                        _ => Cow::Borrowed(""),
                    })
                    .collect(),
            ),
        };
        Array {
            dtype,
            data,
            valid: valid.iter().any(|v| !v).then_some(valid),
        }
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

/// The rows an expression is evaluated on: a selection vector, or every row
/// of the partition.
#[derive(Clone, Copy)]
pub struct Rows<'s> {
    /// Selected row indices, or `None` for all rows.
    pub sel: Option<&'s [u32]>,
    /// Number of rows selected.
    pub len: usize,
}

impl<'s> Rows<'s> {
    /// Every row of a partition with `n` rows.
    pub fn all(n: usize) -> Rows<'static> {
        Rows { sel: None, len: n }
    }

    /// The rows in `sel`.
    pub fn some(sel: &'s [u32]) -> Rows<'s> {
        Rows {
            sel: Some(sel),
            len: sel.len(),
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

/// Decodes a column at the selected rows.
pub fn decode_column<'a>(col: &'a Column, rows: Rows<'_>) -> Datum<'a> {
    let valid = col.validity.as_ref().map(|b| {
        (0..rows.len)
            .map(|j| b.get(rows.row(j)))
            .collect::<Vec<bool>>()
    });
    let sel = rows.sel;
    let data = match &col.data {
        ColumnData::Const(v) => {
            if valid.is_none() || v.is_null() {
                return Datum::Scalar(v.clone());
            }
            return Datum::Array(Array {
                dtype: col.dtype,
                valid,
                ..Array::from_values(col.dtype, &vec![v.clone(); rows.len])
            });
        }
        ColumnData::Offset { base, scale, codes } => {
            let (base, scale) = (*base, *scale);
            Data::Int(if scale == 1 {
                with_codes!(codes, c => crate::kernel::gather(c, sel, |x| base.wrapping_add(Code::to_u64(x) as i64)))
            } else {
                with_codes!(codes, c => crate::kernel::gather(c, sel, |x| base.wrapping_add(Code::to_u64(x).wrapping_mul(scale) as i64)))
            })
        }
        ColumnData::Float(v) => Data::Float(crate::kernel::gather(v, sel, |x| x)),
        ColumnData::Dict { dict, codes } => {
            let values = dict.values();
            Data::Str(
                with_codes!(codes, c => crate::kernel::gather(c, sel, |x| Cow::Borrowed(&*values[x as usize]))),
            )
        }
        ColumnData::Packed(p) => Data::Str(
            (0..rows.len)
                .map(|j| Cow::Borrowed(p.get(rows.row(j))))
                .collect(),
        ),
    };
    Datum::Array(Array {
        dtype: col.dtype,
        data,
        valid,
    })
}

/// A [`RowSource`] reading decoded values straight from a partition.
pub struct PartitionRow<'a> {
    /// The partition.
    pub part: &'a Partition,
    /// The current row.
    pub row: usize,
}

impl RowSource for PartitionRow<'_> {
    fn column(&self, index: usize) -> Value {
        self.part.columns[index].value(self.row)
    }
}

fn and_valid(a: &Option<Vec<bool>>, b: &Option<Vec<bool>>) -> Option<Vec<bool>> {
    match (a, b) {
        (None, None) => None,
        (Some(a), None) | (None, Some(a)) => Some(a.clone()),
        (Some(a), Some(b)) => Some(a.iter().zip(b).map(|(x, y)| *x && *y).collect()),
    }
}

/// Evaluates `expr` over the selected rows of `part`.
///
/// # Errors
/// As [`eval::eval`]: overflow, division by zero, failed casts.
pub fn eval_vec<'a>(expr: &Expr, part: &'a Partition, rows: Rows<'_>) -> Result<Datum<'a>> {
    if rows.len == 0 {
        // Nothing is evaluated on no rows (a constant that fails, such as
        // `-(-9223372036854775808)`, must not fail an empty selection).
        return Ok(Datum::Array(Array::from_values(expr.dtype(), &[])));
    }
    match expr {
        Expr::Column { index, .. } => Ok(decode_column(&part.columns[*index], rows)),
        Expr::Literal { value, .. } => Ok(Datum::Scalar(value.clone())),
        Expr::Binary {
            op,
            left,
            right,
            dtype,
        } => {
            let l = eval_vec(left, part, rows)?;
            let r = eval_vec(right, part, rows)?;
            binary_vec(*op, l, r, *dtype, rows.len)
        }
        Expr::Not(e) => Ok(match eval_vec(e, part, rows)? {
            Datum::Scalar(v) => Datum::Scalar(eval::eval(
                &Expr::Not(Box::new(Expr::literal(v, DataType::Bool))),
                &eval::NoRow,
            )?),
            Datum::Array(a) => match a.data {
                Data::Bool(b) => Datum::Array(Array {
                    dtype: DataType::Bool,
                    data: Data::Bool(b.into_iter().map(|x| !x).collect()),
                    valid: a.valid,
                }),
                _ => return fallback(expr, part, rows),
            },
        }),
        Expr::IsNull {
            expr: inner,
            negated,
        } => Ok(match eval_vec(inner, part, rows)? {
            Datum::Scalar(v) => Datum::Scalar(Value::Bool(v.is_null() != *negated)),
            Datum::Array(a) => Datum::Array(Array {
                dtype: DataType::Bool,
                data: Data::Bool((0..a.len()).map(|i| a.is_valid(i) == *negated).collect()),
                valid: None,
            }),
        }),
        Expr::Call { func, args, dtype } if args.len() == 1 => {
            let a = match eval_vec(&args[0], part, rows)? {
                Datum::Scalar(v) => return Ok(Datum::Scalar(eval::call(func, &[v])?)),
                Datum::Array(a) => a,
            };
            let data = match (func, &a.data) {
                (Func::Year, Data::Int(v)) => {
                    Data::Int(v.iter().map(|&t| timestamp_year(t)).collect())
                }
                (Func::DateTrunc(u), Data::Int(v)) => {
                    Data::Int(v.iter().map(|&t| eval::date_trunc(*u, t)).collect())
                }
                (Func::Floor, Data::Float(v)) => Data::Float(v.iter().map(|x| x.floor()).collect()),
                (Func::Ceil, Data::Float(v)) => Data::Float(v.iter().map(|x| x.ceil()).collect()),
                (Func::Floor | Func::Ceil, Data::Int(_)) => return Ok(Datum::Array(a)),
                (Func::Abs, Data::Float(v)) => Data::Float(v.iter().map(|x| x.abs()).collect()),
                _ => return fallback(expr, part, rows),
            };
            Ok(Datum::Array(Array {
                dtype: *dtype,
                data,
                valid: a.valid,
            }))
        }
        Expr::Like {
            expr: e,
            pattern,
            negated,
        } => {
            let Some(Value::Str(p)) = pattern.as_literal() else {
                return fallback(expr, part, rows);
            };
            let pat = LikePattern::compile(p);
            match eval_vec(e, part, rows)? {
                Datum::Array(Array {
                    data: Data::Str(s),
                    valid,
                    ..
                }) => Ok(Datum::Array(Array {
                    dtype: DataType::Bool,
                    data: Data::Bool(s.iter().map(|x| pat.matches(x) != *negated).collect()),
                    valid,
                })),
                _ => fallback(expr, part, rows),
            }
        }
        _ if expr.is_constant() => Ok(Datum::Scalar(eval::eval(expr, &eval::NoRow)?)),
        _ => fallback(expr, part, rows),
    }
}

/// Row-at-a-time evaluation with the reference semantics.
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

/// Spreads a datum to an array of `n` rows.
pub fn to_array<'a>(d: Datum<'a>, dtype: DataType, n: usize) -> Array<'a> {
    match d {
        Datum::Array(a) => a,
        Datum::Scalar(v) => Array::from_values(v.data_type().unwrap_or(dtype), &vec![v; n]),
    }
}

fn binary_vec<'a>(
    op: BinaryOp,
    l: Datum<'a>,
    r: Datum<'a>,
    dtype: DataType,
    n: usize,
) -> Result<Datum<'a>> {
    if let (Datum::Scalar(a), Datum::Scalar(b)) = (&l, &r) {
        let e = Expr::Binary {
            op,
            left: Box::new(Expr::literal(
                a.clone(),
                a.data_type().unwrap_or(DataType::Int),
            )),
            right: Box::new(Expr::literal(
                b.clone(),
                b.data_type().unwrap_or(DataType::Int),
            )),
            dtype,
        };
        return Ok(Datum::Scalar(eval::eval(&e, &eval::NoRow)?));
    }
    if matches!(op, BinaryOp::And | BinaryOp::Or) {
        return Ok(logic_vec(op, l, r, n));
    }
    // A NULL scalar makes every row NULL.
    if matches!(&l, Datum::Scalar(Value::Null)) || matches!(&r, Datum::Scalar(Value::Null)) {
        return Ok(Datum::Scalar(Value::Null));
    }
    // Integer array with an integer constant: one tight loop per operator
    // (values at NULL rows are 0 or the partition minimum, so they cannot
    // overflow where real values do not).
    if let (Datum::Array(a), Datum::Scalar(Value::Int(k))) = (&l, &r)
        && let Data::Int(x) = &a.data
        && !op.is_comparison()
    {
        let k = *k;
        let out: Option<Vec<i64>> = match op {
            BinaryOp::Plus => x.iter().map(|v| v.checked_add(k)).collect(),
            BinaryOp::Minus => x.iter().map(|v| v.checked_sub(k)).collect(),
            BinaryOp::Multiply => x.iter().map(|v| v.checked_mul(k)).collect(),
            BinaryOp::Divide if k > 0 => Some(x.iter().map(|v| v / k).collect()),
            BinaryOp::Modulo if k > 0 => Some(x.iter().map(|v| v % k).collect()),
            _ => None,
        };
        if let Some(out) = out {
            return Ok(Datum::Array(Array {
                dtype,
                data: Data::Int(out),
                valid: a.valid.clone(),
            }));
        }
    }
    let la = to_array(l, DataType::Int, n);
    let ra = to_array(r, DataType::Int, n);
    let valid = and_valid(&la.valid, &ra.valid);
    let ok = |i: usize| valid.as_ref().is_none_or(|v| v[i]);
    let data = if op.is_comparison() {
        let out: Vec<bool> = match (&la.data, &ra.data) {
            (Data::Int(a), Data::Int(b)) => (0..n).map(|i| compare(op, a[i].cmp(&b[i]))).collect(),
            (Data::Float(a), Data::Float(b)) => {
                (0..n).map(|i| compare(op, cmp_f64(a[i], b[i]))).collect()
            }
            (Data::Int(a), Data::Float(b)) => (0..n)
                .map(|i| compare(op, cmp_i64_f64(a[i], b[i])))
                .collect(),
            (Data::Float(a), Data::Int(b)) => (0..n)
                .map(|i| compare(op, cmp_i64_f64(b[i], a[i]).reverse()))
                .collect(),
            (Data::Str(a), Data::Str(b)) => (0..n)
                .map(|i| compare(op, a[i].as_bytes().cmp(b[i].as_bytes())))
                .collect(),
            (Data::Bool(a), Data::Bool(b)) => {
                (0..n).map(|i| compare(op, a[i].cmp(&b[i]))).collect()
            }
            _ => (0..n)
                .map(|i| compare(op, la.value(i).total_cmp(&ra.value(i))))
                .collect::<Vec<bool>>(),
        };
        Data::Bool(out)
    } else {
        match (&la.data, &ra.data) {
            (Data::Int(a), Data::Int(b)) => {
                let mut out = vec![0i64; n];
                for i in 0..n {
                    if ok(i) {
                        out[i] = int_arith(op, a[i], b[i])?;
                    }
                }
                Data::Int(out)
            }
            _ => {
                let fa = as_f64s(&la.data);
                let fb = as_f64s(&ra.data);
                let mut out = vec![0f64; n];
                for i in 0..n {
                    if ok(i) {
                        out[i] = float_arith(op, fa[i], fb[i])?;
                    }
                }
                Data::Float(out)
            }
        }
    };
    Ok(Datum::Array(Array { dtype, data, valid }))
}

fn as_f64s(d: &Data<'_>) -> Vec<f64> {
    match d {
        Data::Int(v) => v.iter().map(|&x| x as f64).collect(),
        Data::Float(v) => v.clone(),
        Data::Bool(v) => v.iter().map(|&x| x as u8 as f64).collect(),
        Data::Str(v) => vec![0.0; v.len()],
    }
}

/// Three-valued AND/OR over arrays: `Some(b)` known, `None` NULL.
fn logic_vec<'a>(op: BinaryOp, l: Datum<'a>, r: Datum<'a>, n: usize) -> Datum<'a> {
    let tri = |d: &Datum<'_>, i: usize| -> Option<bool> {
        match d.value(i) {
            Value::Bool(b) => Some(b),
            _ => None,
        }
    };
    let mut data = vec![false; n];
    let mut valid = vec![true; n];
    for i in 0..n {
        let (a, b) = (tri(&l, i), tri(&r, i));
        let v = if op == BinaryOp::And {
            match (a, b) {
                (Some(false), _) | (_, Some(false)) => Some(false),
                (Some(true), Some(true)) => Some(true),
                _ => None,
            }
        } else {
            match (a, b) {
                (Some(true), _) | (_, Some(true)) => Some(true),
                (Some(false), Some(false)) => Some(false),
                _ => None,
            }
        };
        data[i] = v.unwrap_or(false);
        valid[i] = v.is_some();
    }
    Datum::Array(Array {
        dtype: DataType::Bool,
        data: Data::Bool(data),
        valid: valid.iter().any(|v| !v).then_some(valid),
    })
}

/// The positions `j` (into the rows) where a boolean datum is TRUE.
pub fn true_positions(d: &Datum<'_>, n: usize) -> Vec<u32> {
    match d {
        Datum::Scalar(Value::Bool(true)) => (0..n as u32).collect(),
        Datum::Scalar(_) => Vec::new(),
        Datum::Array(a) => match &a.data {
            Data::Bool(b) => (0..n)
                .filter(|&i| b[i] && a.is_valid(i))
                .map(|i| i as u32)
                .collect(),
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
