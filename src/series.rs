//! The table functions that make a table of integers rather than read
//! one: `range(stop)`, `range(start, stop[, step])` (stop excluded) and
//! `generate_series([start, ]stop[, step])` (stop included), as DuckDB has
//! them, with one column named after the function. They give a query
//! rows to work on without a file (`SELECT i % 7, count(*) FROM range(1e6)
//! …` needs an integer, `range(1000000)`).

use std::sync::Arc;

use crate::compose::materialize;
use crate::control::MemoryBudget;
use crate::error::{Error, Result};
use crate::exec::vector::{Array, Data};
use crate::sql::ast::{ExprKind, Literal, Span, TableArg, TableArgValue, TableRef, UnaryOp};
use crate::store::Table;
use crate::types::DataType;

/// Whether `from` calls one of this module's functions.
pub(crate) fn is_series(from: &TableRef) -> bool {
    matches!(from, TableRef::Function { name, .. }
        if name.name.eq_ignore_ascii_case("range") || name.name.eq_ignore_ascii_case("generate_series"))
}

/// An integer constant argument (`-5` included).
fn int_arg(arg: &TableArg, function: &str) -> Result<i64> {
    let at = arg.value.span().start;
    let wrong = || {
        Error::plan_at(
            format!("{function}() takes integer constants, such as {function}(0, 100, 5)"),
            at,
        )
    };
    if let Some(name) = &arg.name {
        return Err(Error::plan_at(
            format!("{function}() takes no named arguments"),
            name.span.start,
        ));
    }
    let TableArgValue::Expr(e) = &arg.value else {
        return Err(wrong());
    };
    match &e.kind {
        ExprKind::Literal(Literal::Int(v)) => Ok(*v),
        ExprKind::Unary {
            op: UnaryOp::Neg,
            expr,
        } => match &expr.kind {
            ExprKind::Literal(Literal::Int(v)) => v.checked_neg().ok_or_else(wrong),
            _ => Err(wrong()),
        },
        _ => Err(wrong()),
    }
}

/// `(start, step, rows)` of a call: the values are `start + i · step` for
/// `i` in `0..rows`.
///
/// # Errors
/// Not one to three integer constants, a step of 0, or more rows than a
/// table can hold (2^32 − 1), each pointing into the call.
fn bounds(function: &str, args: &[TableArg], span: Span) -> Result<(i64, i64, u64)> {
    let values = args
        .iter()
        .map(|a| int_arg(a, function))
        .collect::<Result<Vec<i64>>>()?;
    let inclusive = function == "generate_series";
    let (start, stop, step) = match (values.as_slice(), inclusive) {
        ([stop], _) => (0, *stop, 1),
        ([start, stop], _) => (*start, *stop, 1),
        ([start, stop, step], _) => (*start, *stop, *step),
        _ => {
            return Err(Error::plan_at(
                format!(
                    "{function}() takes a stop, or a start, a stop and optionally a step, such as {function}(10) or {function}(0, 100, 5)"
                ),
                span.start,
            ));
        }
    };
    if step == 0 {
        return Err(Error::plan_at(
            format!("{function}() cannot take a step of 0"),
            args.last().map_or(span.start, |a| a.value.span().start),
        ));
    }
    // Rows as i128, so that no bound overflows.
    let (start_w, stop_w, step_w) = (i128::from(start), i128::from(stop), i128::from(step));
    let span_w = if step > 0 {
        stop_w - start_w
    } else {
        start_w - stop_w
    };
    let magnitude = step_w.abs();
    let rows = if span_w < 0 || (span_w == 0 && !inclusive) {
        0
    } else if inclusive {
        span_w / magnitude + 1
    } else {
        (span_w + magnitude - 1) / magnitude
    };
    let most = u64::from(u32::MAX - 1);
    if rows > i128::from(most) {
        return Err(Error::plan_at(
            format!("{function}() would make {rows} rows; a table holds at most {most}"),
            span.start,
        ));
    }
    Ok((start, step, rows as u64))
}

/// The table `from` (a call of `range` or `generate_series`) makes, in
/// partitions of `partition_rows`, encoded in parallel; its 8 bytes a
/// row are held against `memory` while it is made.
///
/// # Errors
/// As [`bounds`]; [`Error::MemoryLimit`] when the values would pass the
/// memory limit.
pub(crate) fn series_table(
    from: &TableRef,
    memory: &Arc<MemoryBudget>,
    partition_rows: usize,
) -> Result<Arc<Table>> {
    let TableRef::Function { name, args, span } = from else {
        return Err(Error::Internal("a series table from a non-function".into()));
    };
    let function = name.name.to_ascii_lowercase();
    let (start, step, rows) = bounds(&function, args, *span)?;
    let rows = rows as usize;
    let _held = memory.reserve("query", rows.saturating_mul(8), || {
        format!("{rows} rows of {function}()")
    })?;
    // Each partition's values made where it is encoded: no column of all
    // the rows at once.
    let partitions = materialize::partitions(rows, partition_rows, 1, |_, range| {
        let values: Vec<i64> = range
            .map(|i| start.wrapping_add((i as i64).wrapping_mul(step)))
            .collect();
        let len = values.len();
        let array = Array::new(DataType::Int, Data::Int(values));
        materialize::encode_array(DataType::Int, &array, 0..len)
    });
    Ok(Arc::new(materialize::table(
        &function,
        std::slice::from_ref(&function),
        vec![DataType::Int],
        partitions,
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::ast::Expr;

    fn call(function: &str, values: &[i64]) -> Result<(i64, i64, u64)> {
        let span = Span { start: 0, end: 1 };
        let args: Vec<TableArg> = values
            .iter()
            .map(|&v| TableArg {
                name: None,
                value: TableArgValue::Expr(Expr {
                    kind: ExprKind::Literal(Literal::Int(v)),
                    span,
                }),
            })
            .collect();
        bounds(function, &args, span)
    }

    #[test]
    fn bounds_count_rows_as_duckdb_does() {
        assert_eq!(call("range", &[5]).unwrap(), (0, 1, 5));
        assert_eq!(call("range", &[2, 5]).unwrap(), (2, 1, 3));
        assert_eq!(call("range", &[0, 10, 3]).unwrap(), (0, 3, 4));
        assert_eq!(call("range", &[10, 0, -3]).unwrap(), (10, -3, 4));
        assert_eq!(call("range", &[5, 5]).unwrap(), (5, 1, 0));
        assert_eq!(call("range", &[5, 2]).unwrap(), (5, 1, 0));
        assert_eq!(call("generate_series", &[1, 10]).unwrap(), (1, 1, 10));
        assert_eq!(call("generate_series", &[5, 5]).unwrap(), (5, 1, 1));
        assert_eq!(call("generate_series", &[0, 10, 3]).unwrap(), (0, 3, 4));
        assert_eq!(call("generate_series", &[10, 1, -4]).unwrap(), (10, -4, 3));
        assert!(call("range", &[0, 10, 0]).is_err());
        assert!(call("range", &[i64::MIN, i64::MAX]).is_err());
        assert_eq!(call("generate_series", &[3]).unwrap(), (0, 1, 4));
        assert!(call("generate_series", &[1, 2, 3, 4]).is_err());
        assert!(call("range", &[]).is_err());
    }
}
