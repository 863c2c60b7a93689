//! A naive reference evaluator for katydid's SELECT, independent of the
//! planner and executor.
//!
//! It decodes every row of a [`Table`] to `Vec<Value>` (partitions in order,
//! rows in order: "load order") and evaluates the parsed [`Select`] row by
//! row with its own name resolution and its own scalar and aggregate
//! semantics, written from the contract (PostgreSQL-like):
//! three-valued logic, checked integer arithmetic, NULL-skipping aggregates,
//! implicit grouping (LocustDB), ORDER BY with NULLs larger than every value,
//! `LIMIT -n` as the last `n` rows.
//!
//! Which expressions are evaluated decides which errors (overflow, division
//! by zero) fail a query. The contract katydid documents:
//! - WHERE and GROUP BY keys: every row.
//! - Aggregates: every group, before HAVING (an overflow in a group that
//!   HAVING drops still fails the query).
//! - Select list of an aggregate query: every group that passes HAVING.
//! - Select list of a query without aggregates: only the rows it returns
//!   (after ORDER BY, OFFSET and LIMIT).
//! - ORDER BY keys of a query without aggregates: every row that passes
//!   WHERE.
//!
//! Where an engine may legitimately stop before evaluating everything (a
//! LIMIT: the scan stops once enough rows are found, a top-n ranks on its
//! first key), an error the reference raises there is *lenient*
//! ([`RefError::lenient`]), and an engine that succeeds instead is
//! not wrong.
//!
//! Joins, subqueries, CTEs and set operations are in [`multi`]: a SELECT
//! reads a [`Relation`] (a table's rows, or a join's) whose columns carry
//! their qualifiers, and a subquery sees the row of the query around it.
//!
//! Everything here favours obviousness over speed: a table is at most a few
//! hundred rows in the differential test.

pub mod multi;
mod window;

use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use katydid::DataType;
use katydid::Value;
use katydid::sql::ast::{
    BinaryOp, Expr, ExprKind, FromItem, Literal, OrderByItem, Select, SelectItem, Span, UnaryOp,
};
use katydid::store::Table;
use katydid::types::{MICROS_PER_DAY, parse_date, parse_timestamp, timestamp_year};

/// What kind of failure a [`RefError`] is, as the differential test
/// matches it against the engine's error: a query the engine rejects before
/// reading a row must be one the reference rejects as [`ErrorKind::Plan`],
/// an overflow must be an overflow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// Wrong whatever the rows: unknown names, types that do not meet,
    /// misplaced aggregates, bad arguments (the engine's parse, plan and
    /// not-supported errors).
    Plan,
    /// An integer (or interval) result out of its 64-bit range.
    Overflow,
    /// `/` or `%` by zero.
    DivisionByZero,
    /// Any other failure while running: a value that does not cast, a
    /// scalar subquery of several rows, a date out of the timestamp range.
    Execution,
    /// Something the reference does not evaluate; any engine error matches
    /// it, and an engine answer is reported (the generator must avoid it).
    Unsupported,
    /// A case too large for the reference (see [`multi`]): not compared.
    Skip,
}

/// An evaluation or resolution error; the message is informative only.
#[derive(Debug, Clone, PartialEq)]
pub struct RefError {
    /// What kind of failure this is.
    pub kind: ErrorKind,
    /// The error is one a correct engine need not raise (see the module
    /// docs).
    pub lenient: bool,
    /// What went wrong, for the test's report.
    pub message: String,
}

impl std::fmt::Display for RefError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let lenient = if self.lenient { "lenient " } else { "" };
        write!(f, "{lenient}{:?}: {}", self.kind, self.message)
    }
}

fn error(kind: ErrorKind, message: impl Into<String>) -> RefError {
    RefError {
        kind,
        lenient: false,
        message: message.into(),
    }
}

/// An error of kind [`ErrorKind::Plan`].
pub fn plan(message: impl Into<String>) -> RefError {
    error(ErrorKind::Plan, message)
}

/// An error of kind [`ErrorKind::Overflow`].
pub fn overflow(message: impl Into<String>) -> RefError {
    error(ErrorKind::Overflow, message)
}

/// An error of kind [`ErrorKind::DivisionByZero`].
pub fn division_by_zero(message: impl Into<String>) -> RefError {
    error(ErrorKind::DivisionByZero, message)
}

/// An error of kind [`ErrorKind::Execution`].
pub fn execution(message: impl Into<String>) -> RefError {
    error(ErrorKind::Execution, message)
}

/// An error of kind [`ErrorKind::Unsupported`].
pub fn unsupported(message: impl Into<String>) -> RefError {
    error(ErrorKind::Unsupported, message)
}

/// An error of kind [`ErrorKind::Skip`].
pub fn skip(message: impl Into<String>) -> RefError {
    error(ErrorKind::Skip, message)
}

fn lenient(e: RefError) -> RefError {
    RefError { lenient: true, ..e }
}

/// One ORDER BY key as the comparison needs it.
#[derive(Debug, Clone, Copy)]
pub struct OrderKey {
    /// The output column the key is, when it is one (ordinal, output name,
    /// or an expression equal to a select item); `None` for a hidden key.
    pub column: Option<usize>,
    /// Descending.
    pub desc: bool,
    /// Effective NULL placement: true when NULLs come first.
    pub nulls_first: bool,
}

/// What the reference computed for one query.
#[derive(Debug, Clone)]
pub struct RefResult {
    /// The result rows after ORDER BY, OFFSET and LIMIT.
    pub rows: Vec<Vec<Value>>,
    /// The rows after ORDER BY but before OFFSET/LIMIT (for a plain
    /// projection without ORDER BY, only those up to OFFSET + LIMIT).
    pub all_rows: Vec<Vec<Value>>,
    /// The ORDER BY keys (empty without ORDER BY).
    pub order: Vec<OrderKey>,
    /// True when the row order without ORDER BY is unspecified: an
    /// aggregate query (GROUP BY, implicit grouping or a global aggregate),
    /// DISTINCT, or rows of joins, subqueries and set operations.
    pub grouped: bool,
    /// True when LIMIT or OFFSET was given.
    pub limited: bool,
    /// The output names (an alias, a column's name, else empty), for a
    /// subquery in FROM, a CTE and a set operation's ORDER BY.
    pub names: Vec<String>,
    /// The output types where known statically.
    pub types: Vec<Option<DataType>>,
}

/// A column of the rows a SELECT reads.
#[derive(Debug, Clone)]
pub struct Col {
    /// The table name or alias `q.name` finds it by (none for the merged
    /// column of a `USING`).
    pub qualifier: Option<String>,
    /// Its name.
    pub name: String,
    /// Its type, when known.
    pub dtype: Option<DataType>,
    /// Found by its bare name (a `USING` column's copies in its two inputs
    /// are found only qualified; the merged column stands for them).
    pub bare: bool,
    /// Shown by `*`.
    pub star: bool,
}

/// Rows with named columns: a table, a join, a subquery's result.
#[derive(Debug, Clone)]
pub struct Relation {
    /// The columns, in row order.
    pub cols: Vec<Col>,
    /// The rows (shared: a table is read by many subqueries).
    pub rows: Rc<Vec<Vec<Value>>>,
}

/// The tables (and CTEs) a query may name, rows decoded once.
#[derive(Clone, Default)]
pub struct Catalog {
    /// `(lower-case name, columns without qualifier, rows)`; later entries
    /// (CTEs) hide earlier ones of the same name.
    pub tables: Vec<(String, Relation)>,
}

impl Catalog {
    /// A catalog of the given tables.
    pub fn of(tables: &[&Table]) -> Catalog {
        let tables = tables
            .iter()
            .map(|t| {
                let cols = t
                    .fields
                    .iter()
                    .map(|f| Col {
                        qualifier: None,
                        name: f.name.clone(),
                        dtype: Some(f.dtype),
                        bare: true,
                        star: true,
                    })
                    .collect();
                let rel = Relation {
                    cols,
                    rows: Rc::new(load_rows(t)),
                };
                (t.name.to_ascii_lowercase(), rel)
            })
            .collect();
        Catalog { tables }
    }

    /// The table or CTE named `name`.
    pub fn get(&self, name: &str) -> Option<&Relation> {
        self.tables
            .iter()
            .rev()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, r)| r)
    }
}

/// The row of an enclosing query a correlated subquery reads.
#[derive(Clone, Copy)]
pub struct Outer<'a> {
    /// The enclosing query's columns.
    pub cols: &'a [Col],
    /// Its current row.
    pub row: &'a [Value],
    /// The query enclosing that one.
    pub parent: Option<&'a Outer<'a>>,
}

/// The column `qualifier.name` (or the bare `name`) of `cols`; an error when
/// more than one column answers to it.
fn find_col(cols: &[Col], qualifier: Option<&str>, name: &str) -> Result<Option<usize>, RefError> {
    let hits: Vec<usize> = cols
        .iter()
        .enumerate()
        .filter(|(_, c)| {
            c.name.eq_ignore_ascii_case(name)
                && match qualifier {
                    None => c.bare,
                    Some(q) => c
                        .qualifier
                        .as_deref()
                        .is_some_and(|x| x.eq_ignore_ascii_case(q)),
                }
        })
        .map(|(i, _)| i)
        .collect();
    match hits.as_slice() {
        [] => Ok(None),
        [i] => Ok(Some(*i)),
        _ => Err(plan(format!("ambiguous column {name:?}"))),
    }
}

/// The column an expression that names one refers to among `cols`.
fn column_of(e: &Expr, cols: &[Col]) -> Option<usize> {
    match &e.kind {
        ExprKind::Column(n) => find_col(cols, None, n).ok().flatten(),
        ExprKind::QualifiedColumn { table, column } => {
            find_col(cols, Some(table), column).ok().flatten()
        }
        _ => None,
    }
}

/// Decodes every row of `table` in load order.
pub fn load_rows(table: &Table) -> Vec<Vec<Value>> {
    let mut rows = Vec::with_capacity(table.rows());
    for p in &table.partitions {
        for i in 0..p.rows {
            rows.push(p.columns.iter().map(|c| c.value(i)).collect());
        }
    }
    rows
}

const AGGREGATES: [&str; 30] = [
    "bool_and",
    "bool_or",
    "string_agg",
    "listagg",
    "arg_min",
    "arg_max",
    "argmin",
    "argmax",
    "min_by",
    "max_by",
    "percentile_cont",
    "percentile_disc",
    "count",
    "sum",
    "avg",
    "min",
    "max",
    "var_samp",
    "var_pop",
    "stddev_samp",
    "stddev_pop",
    "covar_samp",
    "covar_pop",
    "corr",
    "regr_slope",
    "median",
    "quantile_cont",
    "quantile_disc",
    "mode",
    "count_if",
];

fn is_aggregate_name(name: &str) -> bool {
    AGGREGATES.iter().any(|a| a.eq_ignore_ascii_case(name))
}

/// True when `e` contains an aggregate call.
fn contains_aggregate(e: &Expr) -> bool {
    let mut found = false;
    visit(e, &mut |x| {
        if let ExprKind::Function { name, .. } = &x.kind {
            found |= is_aggregate_name(name);
        }
    });
    found
}

/// True when `e` refers to a column outside any aggregate.
fn contains_plain_column(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Column(_) | ExprKind::QualifiedColumn { .. } => true,
        ExprKind::Function { name, .. } if is_aggregate_name(name) => false,
        _ => children(e).into_iter().any(contains_plain_column),
    }
}

/// Pushes every aggregate call in `e` (not looking inside aggregates).
fn collect_aggregates<'a>(e: &'a Expr, out: &mut Vec<&'a Expr>) {
    match &e.kind {
        ExprKind::Function { name, .. } if is_aggregate_name(name) => out.push(e),
        _ => {
            for c in children(e) {
                collect_aggregates(c, out);
            }
        }
    }
}

fn children(e: &Expr) -> Vec<&Expr> {
    match &e.kind {
        ExprKind::Column(_)
        | ExprKind::Literal(_)
        | ExprKind::QualifiedColumn { .. }
        | ExprKind::Window { .. }
        | ExprKind::Subquery(_)
        | ExprKind::Exists(_) => vec![],
        ExprKind::InSubquery { expr, .. } | ExprKind::Quantified { expr, .. } => vec![expr],
        ExprKind::Unary { expr, .. } | ExprKind::IsNull { expr, .. } => vec![expr],
        ExprKind::Cast { expr, .. } | ExprKind::Extract { expr, .. } => vec![expr],
        ExprKind::Binary { left, right, .. } => vec![left, right],
        ExprKind::InList { expr, list, .. } => {
            let mut v: Vec<&Expr> = vec![expr];
            v.extend(list.iter());
            v
        }
        ExprKind::Between {
            expr, low, high, ..
        } => vec![expr, low, high],
        ExprKind::Like { expr, pattern, .. } => vec![expr, pattern],
        ExprKind::Case {
            operand,
            branches,
            else_result,
        } => {
            let mut v: Vec<&Expr> = Vec::new();
            if let Some(o) = operand {
                v.push(o);
            }
            for (w, t) in branches {
                v.push(w);
                v.push(t);
            }
            if let Some(e) = else_result {
                v.push(e);
            }
            v
        }
        ExprKind::Function { args, order_by, .. } => args
            .iter()
            .chain(order_by.iter().map(|o| &o.expr))
            .collect(),
    }
}

fn visit(e: &Expr, f: &mut dyn FnMut(&Expr)) {
    f(e);
    for c in children(e) {
        visit(c, f);
    }
}

/// `e` with every span zeroed and names lower-cased, for structural equality.
fn canonical(e: &Expr) -> Expr {
    let b = |x: &Expr| Box::new(canonical(x));
    let kind = match &e.kind {
        ExprKind::Column(n) => ExprKind::Column(n.to_ascii_lowercase()),
        // Compared as written (qualifiers included); subqueries whole.
        k @ (ExprKind::QualifiedColumn { .. }
        | ExprKind::Window { .. }
        | ExprKind::Subquery(_)
        | ExprKind::InSubquery { .. }
        | ExprKind::Quantified { .. }
        | ExprKind::Exists(_)) => k.clone(),
        ExprKind::Literal(l) => ExprKind::Literal(l.clone()),
        ExprKind::Unary { op, expr } => ExprKind::Unary {
            op: *op,
            expr: b(expr),
        },
        ExprKind::Binary { op, left, right } => ExprKind::Binary {
            op: *op,
            left: b(left),
            right: b(right),
        },
        ExprKind::IsNull { expr, negated } => ExprKind::IsNull {
            expr: b(expr),
            negated: *negated,
        },
        ExprKind::InList {
            expr,
            list,
            negated,
        } => ExprKind::InList {
            expr: b(expr),
            list: list.iter().map(canonical).collect(),
            negated: *negated,
        },
        ExprKind::Between {
            expr,
            low,
            high,
            negated,
        } => ExprKind::Between {
            expr: b(expr),
            low: b(low),
            high: b(high),
            negated: *negated,
        },
        ExprKind::Like {
            expr,
            pattern,
            negated,
            case_insensitive,
        } => ExprKind::Like {
            expr: b(expr),
            pattern: b(pattern),
            negated: *negated,
            case_insensitive: *case_insensitive,
        },
        ExprKind::Case {
            operand,
            branches,
            else_result,
        } => ExprKind::Case {
            operand: operand.as_deref().map(b),
            branches: branches
                .iter()
                .map(|(w, t)| (canonical(w), canonical(t)))
                .collect(),
            else_result: else_result.as_deref().map(b),
        },
        ExprKind::Function {
            name,
            args,
            star,
            distinct,
            filter,
            order_by,
            within_group,
        } => ExprKind::Function {
            name: name.to_ascii_lowercase(),
            args: args.iter().map(canonical).collect(),
            star: *star,
            distinct: *distinct,
            filter: filter.as_deref().map(b),
            order_by: order_by
                .iter()
                .map(|o| OrderByItem {
                    expr: canonical(&o.expr),
                    ..o.clone()
                })
                .collect(),
            within_group: *within_group,
        },
        ExprKind::Cast { expr, to, try_cast } => ExprKind::Cast {
            expr: b(expr),
            to: *to,
            try_cast: *try_cast,
        },
        ExprKind::Extract { field, expr } => ExprKind::Extract {
            field: katydid::sql::ast::Ident {
                name: field.name.to_ascii_lowercase(),
                span: Span::default(),
            },
            expr: b(expr),
        },
    };
    Expr {
        kind,
        span: Span::default(),
    }
}

fn same_expr(a: &Expr, b: &Expr) -> bool {
    canonical(a) == canonical(b)
}

/// The static type of `e` (`None` for an untyped NULL), used where the
/// contract fixes a result type independently of the row: a CASE mixing
/// integer and float branches yields floats.
fn static_type(e: &Expr, table: &[Col]) -> Option<DataType> {
    match &e.kind {
        ExprKind::Column(_) | ExprKind::QualifiedColumn { .. } => {
            column_of(e, table).and_then(|i| table[i].dtype)
        }
        ExprKind::Window { .. }
        | ExprKind::Subquery(_)
        | ExprKind::InSubquery { .. }
        | ExprKind::Quantified { .. }
        | ExprKind::Exists(_) => None,
        ExprKind::Literal(l) => match l {
            Literal::Null => None,
            Literal::Bool(_) => Some(DataType::Bool),
            Literal::Int(_) => Some(DataType::Int),
            Literal::Float(_) => Some(DataType::Float),
            Literal::String(_) => Some(DataType::Str),
            Literal::Interval(_) => Some(DataType::Interval),
            Literal::Months(_) => Some(DataType::Int),
        },
        ExprKind::Unary { op, expr } => match op {
            UnaryOp::Neg => static_type(expr, table),
            UnaryOp::Not => Some(DataType::Bool),
        },
        ExprKind::Binary {
            op: BinaryOp::Concat,
            ..
        } => Some(DataType::Str),
        ExprKind::Binary { op, left, right } => {
            if matches!(op, BinaryOp::And | BinaryOp::Or) || op.is_comparison() {
                Some(DataType::Bool)
            } else {
                let (l, r) = (static_type(left, table), static_type(right, table));
                let date = Some(DataType::Date);
                let ts = Some(DataType::Timestamp);
                let interval = Some(DataType::Interval);
                let instant = |x| x == ts || x == date;
                if instant(l) && instant(r) && (l == ts || r == ts) {
                    // timestamp − timestamp: a length of time.
                    interval
                } else if l == interval || r == interval {
                    // A timestamp or date moved by an interval; else
                    // intervals added, or scaled by a number.
                    if instant(l) || instant(r) {
                        ts
                    } else {
                        interval
                    }
                } else if l == date && r == date {
                    // date - date: days.
                    Some(DataType::Int)
                } else if l == date || r == date {
                    date
                } else if l == Some(DataType::Float) || r == Some(DataType::Float) {
                    Some(DataType::Float)
                } else {
                    l.or(r)
                }
            }
        }
        ExprKind::IsNull { .. }
        | ExprKind::InList { .. }
        | ExprKind::Between { .. }
        | ExprKind::Like { .. } => Some(DataType::Bool),
        ExprKind::Case {
            branches,
            else_result,
            ..
        } => {
            let mut t: Option<DataType> = None;
            let results = branches
                .iter()
                .map(|(_, r)| r)
                .chain(else_result.as_deref());
            for r in results {
                match (t, static_type(r, table)) {
                    (_, None) => {}
                    (None, x) => t = x,
                    (Some(DataType::Int), Some(DataType::Float))
                    | (Some(DataType::Float), Some(DataType::Int)) => t = Some(DataType::Float),
                    _ => {}
                }
            }
            t
        }
        ExprKind::Function {
            name,
            args,
            order_by,
            ..
        } => {
            let name = name.to_ascii_lowercase();
            match name.as_str() {
                "count" | "year" | "strlen" | "length" | "count_if" | "sign" | "strpos"
                | "ascii" | "date_diff" | "datediff" | "mod" => Some(DataType::Int),
                "starts_with" | "ends_with" | "contains" | "prefix" => Some(DataType::Bool),
                "concat" | "concat_ws" | "strftime" => Some(DataType::Str),
                "greatest" | "least" | "coalesce" | "ifnull" => {
                    let mut t: Option<DataType> = None;
                    for a in args {
                        match (t, static_type(a, table)) {
                            (_, None) => {}
                            (None, x) => t = x,
                            (Some(DataType::Int), Some(DataType::Float)) => {
                                t = Some(DataType::Float)
                            }
                            _ => {}
                        }
                    }
                    t
                }
                "avg" | "sqrt" | "cbrt" | "ln" | "sin" | "pow" | "power" | "var_samp"
                | "var_pop" | "stddev_samp" | "stddev_pop" | "covar_samp" | "covar_pop"
                | "corr" | "regr_slope" => Some(DataType::Float),
                "string_agg" | "listagg" => Some(DataType::Str),
                "percentile_cont" => {
                    match order_by.first().and_then(|o| static_type(&o.expr, table)) {
                        Some(DataType::Timestamp | DataType::Date) => Some(DataType::Timestamp),
                        _ => Some(DataType::Float),
                    }
                }
                "percentile_disc" => order_by.first().and_then(|o| static_type(&o.expr, table)),
                "median" | "quantile_cont" => {
                    match args.first().and_then(|a| static_type(a, table)) {
                        Some(DataType::Timestamp | DataType::Date) => Some(DataType::Timestamp),
                        _ => Some(DataType::Float),
                    }
                }
                "date_part" => match args.first().map(|a| &a.kind) {
                    Some(ExprKind::Literal(Literal::String(p)))
                        if p.eq_ignore_ascii_case("epoch") =>
                    {
                        Some(DataType::Float)
                    }
                    _ => Some(DataType::Int),
                },
                _ => args.first().and_then(|a| static_type(a, table)),
            }
        }
        ExprKind::Extract { field, .. } => Some(if field.name.eq_ignore_ascii_case("epoch") {
            DataType::Float
        } else {
            DataType::Int
        }),
        ExprKind::Cast { to, .. } => Some(match to {
            katydid::sql::ast::TypeName::Int => DataType::Int,
            katydid::sql::ast::TypeName::Float => DataType::Float,
            katydid::sql::ast::TypeName::Timestamp => DataType::Timestamp,
            katydid::sql::ast::TypeName::Date => DataType::Date,
            katydid::sql::ast::TypeName::Interval => DataType::Interval,
            katydid::sql::ast::TypeName::Str => DataType::Str,
            katydid::sql::ast::TypeName::Bool => DataType::Bool,
        }),
    }
}

/// Where an expression is evaluated: on one row, or on a group of rows
/// (aggregates see all of them, everything else the group's first row).
#[derive(Clone, Copy)]
enum Ctx<'a> {
    Row(&'a [Value]),
    Group {
        rows: &'a [&'a [Value]],
        rep: Option<&'a [Value]>,
    },
}

struct Evaluator<'a> {
    /// The columns of the rows evaluated.
    cols: &'a [Col],
    /// The enclosing queries' rows, for a correlated subquery.
    outer: Option<&'a Outer<'a>>,
    /// The tables subqueries read.
    catalog: &'a Catalog,
}

fn truth(v: &Value) -> Result<Option<bool>, RefError> {
    match v {
        Value::Null => Ok(None),
        Value::Bool(b) => Ok(Some(*b)),
        other => Err(plan(format!("not a boolean: {other:?}"))),
    }
}

fn from_truth(t: Option<bool>) -> Value {
    t.map_or(Value::Null, Value::Bool)
}

/// Compares two non-NULL values of comparable types; a string meets a
/// timestamp by being parsed as one.
fn compare(a: &Value, b: &Value) -> Result<Ordering, RefError> {
    use Value::*;
    let ts = |s: &str| {
        parse_timestamp(s).ok_or_else(|| execution(format!("bad timestamp literal {s:?}")))
    };
    // A date is its midnight (against a timestamp).
    let day = |d: i64| i128::from(d) * i128::from(MICROS_PER_DAY);
    Ok(match (a, b) {
        (Timestamp(x), Str(s)) => x.cmp(&ts(s)?),
        (Str(s), Timestamp(x)) => ts(s)?.cmp(x),
        // A string literal is cast to a date: a timestamp's text is its day.
        (Date(d), Str(s)) => d.cmp(&ts(s)?.div_euclid(MICROS_PER_DAY)),
        (Str(s), Date(d)) => ts(s)?.div_euclid(MICROS_PER_DAY).cmp(d),
        (Date(x), Timestamp(y)) => day(*x).cmp(&i128::from(*y)),
        (Timestamp(x), Date(y)) => i128::from(*x).cmp(&day(*y)),
        (Date(x), Date(y)) => x.cmp(y),
        (Int(_) | HugeInt(_) | Float(_), Int(_) | HugeInt(_) | Float(_))
        | (Str(_), Str(_))
        | (Timestamp(_), Timestamp(_))
        | (Interval(_), Interval(_))
        | (Bool(_), Bool(_)) => a.total_cmp(b),
        _ => return Err(plan(format!("cannot compare {a:?} with {b:?}"))),
    })
}

fn arith(op: BinaryOp, a: &Value, b: &Value) -> Result<Value, RefError> {
    use Value::*;
    if a.is_null() || b.is_null() {
        return Ok(Null);
    }
    // Lengths of time, in microseconds; a date is its midnight here.
    let instant = |v: &Value| match v {
        Timestamp(t) => Some(Some(*t)),
        Date(d) => Some(d.checked_mul(MICROS_PER_DAY)),
        _ => None,
    };
    let (ia, ib) = (instant(a), instant(b));
    match (a, b, op) {
        _ if ia.is_some()
            && ib.is_some()
            && op == BinaryOp::Minus
            && !matches!((a, b), (Date(_), Date(_))) =>
        {
            let (x, y) = (
                ia.flatten().ok_or_else(|| overflow("integer overflow"))?,
                ib.flatten().ok_or_else(|| overflow("integer overflow"))?,
            );
            return x
                .checked_sub(y)
                .map(Interval)
                .ok_or_else(|| overflow("integer overflow"));
        }
        (_, Interval(m), BinaryOp::Plus | BinaryOp::Minus) if ia.is_some() => {
            let x = ia.flatten().ok_or_else(|| overflow("integer overflow"))?;
            let r = if op == BinaryOp::Plus {
                x.checked_add(*m)
            } else {
                x.checked_sub(*m)
            };
            return r.map(Timestamp).ok_or_else(|| overflow("integer overflow"));
        }
        (Interval(m), _, BinaryOp::Plus) if ib.is_some() => {
            let y = ib.flatten().ok_or_else(|| overflow("integer overflow"))?;
            return m
                .checked_add(y)
                .map(Timestamp)
                .ok_or_else(|| overflow("integer overflow"));
        }
        (Interval(x), Interval(y), BinaryOp::Plus) => {
            return x
                .checked_add(*y)
                .map(Interval)
                .ok_or_else(|| overflow("integer overflow"));
        }
        (Interval(x), Interval(y), BinaryOp::Minus) => {
            return x
                .checked_sub(*y)
                .map(Interval)
                .ok_or_else(|| overflow("integer overflow"));
        }
        (Interval(x), Int(k), BinaryOp::Multiply) | (Int(k), Interval(x), BinaryOp::Multiply) => {
            return x
                .checked_mul(*k)
                .map(Interval)
                .ok_or_else(|| overflow("integer overflow"));
        }
        (Interval(x), Int(k), BinaryOp::Divide) => {
            if *k == 0 {
                return Err(division_by_zero("division by zero"));
            }
            return x
                .checked_div(*k)
                .map(Interval)
                .ok_or_else(|| overflow("integer overflow"));
        }
        (Interval(x), Float(f), BinaryOp::Multiply | BinaryOp::Divide)
        | (Float(f), Interval(x), BinaryOp::Multiply) => {
            if op == BinaryOp::Divide && *f == 0.0 {
                return Err(division_by_zero("division by zero"));
            }
            let r = if op == BinaryOp::Divide {
                *x as f64 / f
            } else {
                *x as f64 * f
            };
            // Rounded half to even, as a float cast to an integer.
            let r = r.round_ties_even();
            if !(r.is_finite() && (-9.2e18..9.2e18).contains(&r)) {
                return Err(overflow("interval out of range"));
            }
            return Ok(Interval(r as i64));
        }
        _ => {}
    }
    match (a, b) {
        // A date ± days is a date, date − date the days between.
        (Date(x), Int(y)) if op == BinaryOp::Plus => {
            return x
                .checked_add(*y)
                .map(Date)
                .ok_or_else(|| overflow("integer overflow"));
        }
        (Date(x), Int(y)) if op == BinaryOp::Minus => {
            return x
                .checked_sub(*y)
                .map(Date)
                .ok_or_else(|| overflow("integer overflow"));
        }
        (Int(x), Date(y)) if op == BinaryOp::Plus => {
            return x
                .checked_add(*y)
                .map(Date)
                .ok_or_else(|| overflow("integer overflow"));
        }
        (Date(x), Date(y)) if op == BinaryOp::Minus => {
            return x
                .checked_sub(*y)
                .map(Int)
                .ok_or_else(|| overflow("integer overflow"));
        }
        _ => {}
    }
    match (a, b) {
        (HugeInt(_), Int(_) | HugeInt(_)) | (Int(_), HugeInt(_)) => {
            let (x, y) = (a.as_i128().unwrap(), b.as_i128().unwrap());
            if matches!(op, BinaryOp::Divide | BinaryOp::Modulo) && y == 0 {
                return Err(division_by_zero("division by zero"));
            }
            let r = match op {
                BinaryOp::Plus => x.checked_add(y),
                BinaryOp::Minus => x.checked_sub(y),
                BinaryOp::Multiply => x.checked_mul(y),
                BinaryOp::Divide => x.checked_div(y),
                BinaryOp::Modulo => x.checked_rem(y),
                _ => unreachable!(),
            };
            r.map(Value::from_i128)
                .ok_or_else(|| overflow("integer overflow"))
        }
        (Int(x), Int(y)) => {
            let (x, y) = (*x, *y);
            if matches!(op, BinaryOp::Divide | BinaryOp::Modulo) && y == 0 {
                return Err(division_by_zero("division by zero"));
            }
            let r = match op {
                BinaryOp::Plus => x.checked_add(y),
                BinaryOp::Minus => x.checked_sub(y),
                BinaryOp::Multiply => x.checked_mul(y),
                BinaryOp::Divide => x.checked_div(y),
                BinaryOp::Modulo => x.checked_rem(y),
                _ => unreachable!(),
            };
            r.map(Int).ok_or_else(|| overflow("integer overflow"))
        }
        (Int(_) | HugeInt(_) | Float(_), Int(_) | HugeInt(_) | Float(_)) => {
            let (x, y) = (a.as_f64().unwrap(), b.as_f64().unwrap());
            if matches!(op, BinaryOp::Divide | BinaryOp::Modulo) && y == 0.0 {
                return Err(division_by_zero("division by zero"));
            }
            Ok(Float(match op {
                BinaryOp::Plus => x + y,
                BinaryOp::Minus => x - y,
                BinaryOp::Multiply => x * y,
                BinaryOp::Divide => x / y,
                BinaryOp::Modulo => x % y,
                _ => unreachable!(),
            }))
        }
        _ => Err(plan(format!(
            "cannot apply {} to {a:?} and {b:?}",
            op.symbol()
        ))),
    }
}

/// SQL LIKE over characters: `%` any run, `_` exactly one character.
pub fn like(text: &str, pattern: &str) -> bool {
    let t: Vec<char> = text.chars().collect();
    let p: Vec<char> = pattern.chars().collect();
    // m[j]: does pattern[..i] match text[..j]; rolled over i.
    let mut m = vec![false; t.len() + 1];
    m[0] = true;
    for &pc in &p {
        let mut next = vec![false; t.len() + 1];
        match pc {
            '%' => {
                let mut any = false;
                for j in 0..=t.len() {
                    any |= m[j];
                    next[j] = any;
                }
            }
            _ => {
                for j in 1..=t.len() {
                    next[j] = m[j - 1] && (pc == '_' || pc == t[j - 1]);
                }
            }
        }
        m = next;
    }
    m[t.len()]
}

/// A civil date and time of day, computed by counting whole years and
/// months from 1970 (slow, and obviously right for the years the tests use).
struct Civil {
    year: i64,
    /// 1 to 12.
    month: i64,
    /// 1 to 31.
    day: i64,
    /// 1 to 366.
    day_of_year: i64,
    /// Microseconds since midnight.
    time: i64,
}

fn is_leap(y: i64) -> bool {
    (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
}

fn year_days(y: i64) -> i64 {
    if is_leap(y) { 366 } else { 365 }
}

fn month_days(y: i64, m: i64) -> i64 {
    match m {
        2 if is_leap(y) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

fn civil(micros: i64) -> Civil {
    const DAY: i64 = 86_400_000_000;
    let mut days = micros.div_euclid(DAY);
    let time = micros.rem_euclid(DAY);
    let mut year = 1970;
    while days < 0 {
        year -= 1;
        days += year_days(year);
    }
    while days >= year_days(year) {
        days -= year_days(year);
        year += 1;
    }
    let day_of_year = days + 1;
    let mut month = 1;
    while days >= month_days(year, month) {
        days -= month_days(year, month);
        month += 1;
    }
    Civil {
        year,
        month,
        day: days + 1,
        day_of_year,
        time,
    }
}

/// Day of the week, Sunday 0, by Sakamoto's method.
fn weekday(y: i64, m: i64, d: i64) -> i64 {
    const T: [i64; 12] = [0, 3, 2, 5, 0, 3, 5, 1, 4, 6, 2, 4];
    let y = if m < 3 { y - 1 } else { y };
    (y + y.div_euclid(4) - y.div_euclid(100) + y.div_euclid(400) + T[(m - 1) as usize] + d)
        .rem_euclid(7)
}

/// ISO weeks in year `y`: 53 when it starts on a Thursday, or on a
/// Wednesday in a leap year.
fn iso_weeks(y: i64) -> i64 {
    let jan1 = weekday(y, 1, 1);
    if jan1 == 4 || (jan1 == 3 && is_leap(y)) {
        53
    } else {
        52
    }
}

/// `extract(part FROM t)` from the contract: PostgreSQL's and DuckDB's
/// parts, integers except `epoch`.
/// The timestamp of a date's midnight.
fn midnight(days: i64) -> Result<i64, RefError> {
    days.checked_mul(MICROS_PER_DAY)
        .ok_or_else(|| execution("date out of the timestamp range"))
}

/// Part `part` of a length of time of `micros` microseconds: whole days,
/// then the hours, minutes and seconds of what is left, each with the
/// length's sign; `epoch` the length in seconds.
fn interval_part(part: &str, micros: i64) -> Result<Value, RefError> {
    let sign = micros.signum();
    let total = micros.unsigned_abs();
    let day = total / 86_400_000_000;
    let in_day = total % 86_400_000_000;
    let in_minute = in_day % 60_000_000;
    let v = match part.to_ascii_lowercase().as_str() {
        "epoch" => return Ok(Value::Float(micros as f64 / 1e6)),
        "day" => day,
        "hour" => in_day / 3_600_000_000,
        "minute" => in_day / 60_000_000 % 60,
        "second" => in_minute / 1_000_000,
        "millisecond" => in_minute / 1_000,
        "microsecond" => in_minute,
        p => return Err(plan(format!("no part {p} of an interval"))),
    };
    Ok(Value::Int(sign * v as i64))
}

fn date_part(part: &str, micros: i64) -> Result<Value, RefError> {
    let c = civil(micros);
    let iso_dow = match weekday(c.year, c.month, c.day) {
        0 => 7,
        d => d,
    };
    // The ordinal-date formula for the ISO week, corrected at year ends.
    let raw_week = (c.day_of_year - iso_dow + 10).div_euclid(7);
    let (iso_year, week) = if raw_week < 1 {
        (c.year - 1, iso_weeks(c.year - 1))
    } else if raw_week > iso_weeks(c.year) {
        (c.year + 1, 1)
    } else {
        (c.year, raw_week)
    };
    let second_micros = c.time % 60_000_000;
    Ok(Value::Int(match part.to_ascii_lowercase().as_str() {
        "year" => c.year,
        "isoyear" => iso_year,
        "quarter" => (c.month - 1) / 3 + 1,
        "month" => c.month,
        "week" => week,
        "day" => c.day,
        "dow" => iso_dow % 7,
        "isodow" => iso_dow,
        "doy" => c.day_of_year,
        "hour" => c.time / 3_600_000_000,
        "minute" => c.time / 60_000_000 % 60,
        "second" => second_micros / 1_000_000,
        "millisecond" => second_micros / 1_000,
        "microsecond" => second_micros,
        "epoch" => return Ok(Value::Float(micros as f64 / 1_000_000.0)),
        other => return Err(plan(format!("unknown date part {other:?}"))),
    }))
}

/// `pattern` compiled, from a per-thread cache: the reference evaluates a
/// function row by row, and compiling the same pattern for each of a
/// real-size table's rows was most of a differential test's time.
fn compiled_regex(pattern: &str) -> Result<regex::Regex, RefError> {
    thread_local! {
        static CACHE: std::cell::RefCell<HashMap<String, regex::Regex>> =
            std::cell::RefCell::new(HashMap::new());
    }
    CACHE.with(|cache| {
        if let Some(re) = cache.borrow().get(pattern) {
            return Ok(re.clone());
        }
        let re = regex::Regex::new(pattern).map_err(|e| plan(e.to_string()))?;
        cache.borrow_mut().insert(pattern.to_string(), re.clone());
        Ok(re)
    })
}

/// `regexp_replace` from DuckDB's contract: the first match (all with `g`)
/// replaced, `\N` in the replacement is group N, `\\` a backslash; `i`, `c`,
/// `s`, `l` as DuckDB's options. The match itself comes from the `regex`
/// crate (RE2's syntax); the options and the replacement text are applied
/// here.
fn regexp_replace(
    s: &str,
    pattern: &str,
    replacement: &str,
    flags: &str,
) -> Result<String, RefError> {
    let mut prefix = String::new();
    let mut pattern = pattern.to_string();
    for f in flags.chars() {
        match f {
            'i' => prefix = prefix.replace("(?-i)", "") + "(?i)",
            'c' => prefix = prefix.replace("(?i)", "") + "(?-i)",
            's' => prefix.push_str("(?s)"),
            'l' => pattern = regex::escape(&pattern),
            'g' => {}
            other => return Err(plan(format!("regexp_replace option {other:?}"))),
        }
    }
    let re = compiled_regex(&format!("{prefix}{pattern}"))?;
    let mut out = String::new();
    let mut last = 0;
    for caps in re.captures_iter(s) {
        let whole = caps.get(0).expect("group 0");
        out.push_str(&s[last..whole.start()]);
        let mut chars = replacement.chars();
        while let Some(c) = chars.next() {
            if c != '\\' {
                out.push(c);
                continue;
            }
            match chars.next() {
                Some('\\') => out.push('\\'),
                Some(d) if d.is_ascii_digit() => {
                    let n = d.to_digit(10).expect("digit") as usize;
                    if n >= caps.len() {
                        return Err(plan(format!("no group {n}")));
                    }
                    out.push_str(caps.get(n).map_or("", |m| m.as_str()));
                }
                other => return Err(plan(format!("bad replacement escape {other:?}"))),
            }
        }
        last = whole.end();
        if !flags.contains('g') {
            break;
        }
    }
    out.push_str(&s[last..]);
    Ok(out)
}

/// A value as `||` and `concat` take it: strings as they are, integers in
/// decimal; `None` for NULL.
fn text(v: &Value) -> Result<Option<String>, RefError> {
    Ok(match v {
        Value::Null => None,
        Value::Str(s) => Some(s.to_string()),
        Value::Int(i) => Some(i.to_string()),
        v => {
            return Err(unsupported(format!(
                "the reference does not write {v:?} as text"
            )));
        }
    })
}

/// The characters of `s`.
fn chars(s: &str) -> Vec<char> {
    s.chars().collect()
}

/// The string functions, timestamp formatting and differences, and `mod`
/// on non-NULL arguments, from DuckDB's documentation; `None` for other
/// names.
fn string_function(name: &str, vals: &[Value]) -> Result<Option<Value>, RefError> {
    use Value::*;
    let string = |s: String| Some(Value::str(&s));
    Ok(match (name, vals) {
        ("starts_with" | "prefix", [Str(s), Str(p)]) => Some(Bool(s.starts_with(&**p))),
        ("ends_with", [Str(s), Str(p)]) => Some(Bool(s.ends_with(&**p))),
        ("contains", [Str(s), Str(p)]) => Some(Bool(s.contains(&**p))),
        ("strpos" | "instr", [Str(s), Str(p)]) => {
            // The first character position where p's characters follow.
            let (s, p) = (chars(s), chars(p));
            let at = (0..=s.len()).find(|&i| s[i..].starts_with(&p));
            Some(Int(at.map_or(0, |i| i as i64 + 1)))
        }
        ("ascii", [Str(s)]) => Some(Int(s.chars().next().map_or(0, |c| c as i64))),
        ("mod", [a, b]) => Some(arith(BinaryOp::Modulo, a, b)?),
        ("replace", [Str(s), Str(from), Str(to)]) => {
            if from.is_empty() {
                string(s.to_string())
            } else {
                string(s.split(&**from).collect::<Vec<_>>().join(to))
            }
        }
        ("substring" | "substr", [Str(s), Int(start), rest @ ..]) if rest.len() <= 1 => {
            // Characters at positions start.. (1-based) for `len` of them;
            // positions before 1 count but are cut off (PostgreSQL).
            let c = chars(s);
            let end = match rest {
                [Int(len)] if *len < 0 => return Err(execution("negative substring length")),
                [Int(len)] => start.saturating_add(*len),
                _ => i64::MAX,
            };
            let from = (*start).max(1);
            let to = end.min(c.len() as i64 + 1);
            string(if to <= from {
                String::new()
            } else {
                c[(from - 1) as usize..(to - 1) as usize].iter().collect()
            })
        }
        ("lpad" | "rpad", [Str(s), Int(n), Str(fill)]) => {
            let s = chars(s);
            let n = (*n).max(0) as usize;
            if n <= s.len() {
                string(s[..n].iter().collect())
            } else {
                let fill = chars(fill);
                let pad: String = (0..n - s.len()).map(|i| fill[i % fill.len()]).collect();
                let s: String = s.iter().collect();
                string(if name == "lpad" { pad + &s } else { s + &pad })
            }
        }
        ("left" | "right", [Str(s), Int(n)]) => {
            let s = chars(s);
            let len = s.len() as i64;
            let (from, to) = match (name, *n >= 0) {
                ("left", true) => (0, (*n).min(len)),
                ("left", false) => (0, (len + n).max(0)),
                (_, true) => ((len - n).max(0), len),
                (_, false) => ((-n).min(len), len),
            };
            string(s[from as usize..to as usize].iter().collect())
        }
        ("reverse", [Str(s)]) => string(s.chars().rev().collect()),
        ("repeat", [Str(s), Int(n)]) => string(s.repeat((*n).max(0) as usize)),
        ("split_part", [Str(s), Str(sep), Int(i)]) => {
            let fields: Vec<String> = if sep.is_empty() {
                s.chars().map(String::from).collect()
            } else {
                s.split(&**sep).map(String::from).collect()
            };
            let k = fields.len() as i64;
            let at = if *i > 0 { i - 1 } else { k + i };
            let field = if *i == 0 || at < 0 || at >= k {
                String::new()
            } else {
                fields[at as usize].clone()
            };
            string(field)
        }
        ("ltrim" | "rtrim" | "trim", [Str(s), rest @ ..]) => {
            let set = match rest {
                [Str(c)] => chars(c),
                _ => vec![' '],
            };
            let mut s = chars(s);
            if name != "ltrim" {
                while s.last().is_some_and(|c| set.contains(c)) {
                    s.pop();
                }
            }
            if name != "rtrim" {
                let k = s.iter().take_while(|c| set.contains(c)).count();
                s.drain(..k);
            }
            string(s.into_iter().collect())
        }
        ("nullif", [a, b]) => Some(if compare(a, b)?.is_eq() {
            Null
        } else {
            a.clone()
        }),
        ("strftime", [Timestamp(t), Str(format)]) => {
            let c = civil(*t);
            let (h, m, sec) = (
                c.time / 3_600_000_000,
                c.time / 60_000_000 % 60,
                c.time / 1_000_000 % 60,
            );
            let text = match &**format {
                "%Y-%m-%d" => format!("{:04}-{:02}-{:02}", c.year, c.month, c.day),
                "%H:%M:%S" => format!("{h:02}:{m:02}:{sec:02}"),
                "%Y/%m/%d %H" => format!("{:04}/{:02}/{:02} {h:02}", c.year, c.month, c.day),
                f => {
                    return Err(unsupported(format!(
                        "the reference does not know the format {f:?}"
                    )));
                }
            };
            string(text)
        }
        ("date_diff" | "datediff", [Str(part), Timestamp(a), Timestamp(b)]) => {
            let (x, y) = (civil(*a), civil(*b));
            let months = |c: &Civil| c.year * 12 + c.month - 1;
            Some(Int(match part.to_ascii_lowercase().as_str() {
                "year" => y.year - x.year,
                "quarter" => months(&y).div_euclid(3) - months(&x).div_euclid(3),
                "month" => months(&y) - months(&x),
                p => return Err(unsupported(format!("the reference does not diff {p}"))),
            }))
        }
        _ => None,
    })
}

fn round_float(x: f64, digits: i64) -> f64 {
    if digits == 0 {
        x.round()
    } else {
        let p = 10f64.powi(digits as i32);
        (x * p).round() / p
    }
}

impl Evaluator<'_> {
    fn eval(&self, e: &Expr, ctx: Ctx) -> Result<Value, RefError> {
        use Value::*;
        Ok(match &e.kind {
            ExprKind::Window { .. } => {
                return Err(plan("a window function where none is allowed"));
            }
            ExprKind::Subquery(_)
            | ExprKind::InSubquery { .. }
            | ExprKind::Quantified { .. }
            | ExprKind::Exists(_) => {
                let row = match ctx {
                    Ctx::Row(r) => r,
                    Ctx::Group { rep: Some(r), .. } => r,
                    Ctx::Group { rep: None, .. } => &[],
                };
                let outer = Outer {
                    cols: self.cols,
                    row,
                    parent: self.outer,
                };
                match &e.kind {
                    ExprKind::InSubquery {
                        expr,
                        query,
                        negated,
                    } => {
                        let x = self.eval(expr, ctx)?;
                        multi::in_subquery(self.catalog, &x, query, *negated, &outer)?
                    }
                    ExprKind::Quantified {
                        expr,
                        op,
                        all,
                        query,
                    } => {
                        let x = self.eval(expr, ctx)?;
                        multi::quantified(self.catalog, &x, *op, *all, query, &outer)?
                    }
                    ExprKind::Exists(query) => multi::exists(self.catalog, query, &outer)?,
                    ExprKind::Subquery(query) => multi::scalar(self.catalog, query, &outer)?,
                    _ => unreachable!(),
                }
            }
            ExprKind::Column(_) | ExprKind::QualifiedColumn { .. } => {
                let (qualifier, name) = match &e.kind {
                    ExprKind::Column(n) => (None, n),
                    ExprKind::QualifiedColumn { table, column } => (Some(table.as_str()), column),
                    _ => unreachable!(),
                };
                match find_col(self.cols, qualifier, name)? {
                    Some(i) => match ctx {
                        Ctx::Row(r) => r[i].clone(),
                        Ctx::Group { rep: Some(r), .. } => r[i].clone(),
                        Ctx::Group { rep: None, .. } => {
                            return Err(plan(format!("column {name:?} in a group of no rows")));
                        }
                    },
                    None => {
                        let mut at = self.outer;
                        loop {
                            let Some(o) = at else {
                                return Err(plan(format!("unknown column {name:?}")));
                            };
                            if let Some(i) = find_col(o.cols, qualifier, name)? {
                                break o.row.get(i).cloned().ok_or_else(|| {
                                    plan(format!("outer column {name:?} of a group of no rows"))
                                })?;
                            }
                            at = o.parent;
                        }
                    }
                }
            }
            ExprKind::Literal(l) => match l {
                Literal::Null => Null,
                Literal::Bool(b) => Bool(*b),
                Literal::Int(i) => Int(*i),
                Literal::Float(f) => Float(*f),
                Literal::String(s) => Value::str(s),
                Literal::Interval(m) => Interval(*m),
                Literal::Months(_) => {
                    return Err(unsupported("intervals of months are not supported"));
                }
            },
            ExprKind::Unary { op, expr } => {
                let v = self.eval(expr, ctx)?;
                match (op, v) {
                    (_, Null) => Null,
                    (UnaryOp::Neg, Int(i)) => Int(i
                        .checked_neg()
                        .ok_or_else(|| overflow("integer overflow"))?),
                    (UnaryOp::Neg, Float(f)) => Float(-f),
                    (UnaryOp::Neg, Interval(m)) => Interval(
                        m.checked_neg()
                            .ok_or_else(|| overflow("integer overflow"))?,
                    ),
                    (UnaryOp::Not, Bool(b)) => Bool(!b),
                    (op, v) => return Err(plan(format!("cannot apply {op:?} to {v:?}"))),
                }
            }
            ExprKind::Binary { op, left, right } => {
                let l = self.eval(left, ctx)?;
                let r = self.eval(right, ctx)?;
                match op {
                    BinaryOp::Concat => match (text(&l)?, text(&r)?) {
                        (Some(a), Some(b)) => Value::str(&(a + &b)),
                        _ => Null,
                    },
                    BinaryOp::And => from_truth(match (truth(&l)?, truth(&r)?) {
                        (Some(false), _) | (_, Some(false)) => Some(false),
                        (Some(true), Some(true)) => Some(true),
                        _ => None,
                    }),
                    BinaryOp::Or => from_truth(match (truth(&l)?, truth(&r)?) {
                        (Some(true), _) | (_, Some(true)) => Some(true),
                        (Some(false), Some(false)) => Some(false),
                        _ => None,
                    }),
                    op if op.is_comparison() => {
                        if l.is_null() || r.is_null() {
                            Null
                        } else {
                            let o = compare(&l, &r)?;
                            Bool(match op {
                                BinaryOp::Eq => o == Ordering::Equal,
                                BinaryOp::NotEq => o != Ordering::Equal,
                                BinaryOp::Lt => o == Ordering::Less,
                                BinaryOp::LtEq => o != Ordering::Greater,
                                BinaryOp::Gt => o == Ordering::Greater,
                                BinaryOp::GtEq => o != Ordering::Less,
                                _ => unreachable!(),
                            })
                        }
                    }
                    op => arith(*op, &l, &r)?,
                }
            }
            ExprKind::IsNull { expr, negated } => Bool(self.eval(expr, ctx)?.is_null() != *negated),
            ExprKind::InList {
                expr,
                list,
                negated,
            } => {
                let x = self.eval(expr, ctx)?;
                let mut saw_null = x.is_null();
                let mut hit = false;
                for item in list {
                    let v = self.eval(item, ctx)?;
                    if v.is_null() {
                        saw_null = true;
                    } else if !x.is_null() && compare(&x, &v)? == Ordering::Equal {
                        hit = true;
                    }
                }
                let t = if hit {
                    Some(true)
                } else if saw_null {
                    None
                } else {
                    Some(false)
                };
                from_truth(t.map(|b| b != *negated))
            }
            ExprKind::Between {
                expr,
                low,
                high,
                negated,
            } => {
                let x = self.eval(expr, ctx)?;
                let lo = self.eval(low, ctx)?;
                let hi = self.eval(high, ctx)?;
                let cmp = |a: &Value, b: &Value| -> Result<Option<Ordering>, RefError> {
                    if a.is_null() || b.is_null() {
                        Ok(None)
                    } else {
                        compare(a, b).map(Some)
                    }
                };
                let (cl, ch) = (cmp(&x, &lo)?, cmp(&x, &hi)?);
                if *negated {
                    // x < low OR x > high
                    let a = cl.map(|o| o == Ordering::Less);
                    let b = ch.map(|o| o == Ordering::Greater);
                    from_truth(match (a, b) {
                        (Some(true), _) | (_, Some(true)) => Some(true),
                        (Some(false), Some(false)) => Some(false),
                        _ => None,
                    })
                } else {
                    // x >= low AND x <= high
                    let a = cl.map(|o| o != Ordering::Less);
                    let b = ch.map(|o| o != Ordering::Greater);
                    from_truth(match (a, b) {
                        (Some(false), _) | (_, Some(false)) => Some(false),
                        (Some(true), Some(true)) => Some(true),
                        _ => None,
                    })
                }
            }
            ExprKind::Like {
                expr,
                pattern,
                negated,
                case_insensitive,
            } => match (self.eval(expr, ctx)?, self.eval(pattern, ctx)?) {
                (Null, _) | (_, Null) => Null,
                (Str(s), Str(p)) if *case_insensitive => {
                    Bool(like(&s.to_lowercase(), &p.to_lowercase()) != *negated)
                }
                (Str(s), Str(p)) => Bool(like(&s, &p) != *negated),
                (a, b) => return Err(plan(format!("cannot LIKE {a:?} with {b:?}"))),
            },
            ExprKind::Case {
                operand,
                branches,
                else_result,
            } => {
                let op = match operand {
                    Some(o) => Some(self.eval(o, ctx)?),
                    None => None,
                };
                let mut result = None;
                for (when, then) in branches {
                    let w = self.eval(when, ctx)?;
                    let taken = match &op {
                        Some(o) => !o.is_null() && !w.is_null() && compare(o, &w)?.is_eq(),
                        None => truth(&w)? == Some(true),
                    };
                    if taken {
                        result = Some(self.eval(then, ctx)?);
                        break;
                    }
                }
                let v = match result {
                    Some(v) => v,
                    None => match else_result {
                        Some(e) => self.eval(e, ctx)?,
                        None => Null,
                    },
                };
                match (static_type(e, self.cols), v) {
                    (Some(DataType::Float), Int(i)) => Float(i as f64),
                    (_, v) => v,
                }
            }
            ExprKind::Function {
                name,
                args,
                star,
                distinct,
                filter,
                order_by,
                ..
            } => {
                let lname = name.to_ascii_lowercase();
                if is_aggregate_name(&lname) {
                    let Ctx::Group { rows, .. } = ctx else {
                        return Err(plan(format!("aggregate {lname}() outside a group")));
                    };
                    let rows = match filter {
                        None => rows.to_vec(),
                        // FILTER (WHERE p): the group's rows where p is true.
                        Some(p) => {
                            let mut kept = Vec::new();
                            for r in rows {
                                if self.predicate(p, Ctx::Row(r))? {
                                    kept.push(*r);
                                }
                            }
                            kept
                        }
                    };
                    if let Some(v) =
                        self.ordered_aggregate(&lname, args, *distinct, order_by, &rows)?
                    {
                        return Ok(v);
                    }
                    return self.aggregate(&lname, args, *star, *distinct, &rows);
                }
                let mut vals = args
                    .iter()
                    .map(|a| self.eval(a, ctx))
                    .collect::<Result<Vec<_>, _>>()?;
                // The functions that look past NULL arguments.
                match lname.as_str() {
                    "coalesce" | "ifnull" | "greatest" | "least" => {
                        let mut best: Option<Value> = None;
                        for v in vals.into_iter().filter(|v| !v.is_null()) {
                            best = Some(match (best, lname.as_str()) {
                                (None, _) => v,
                                (Some(b), "coalesce" | "ifnull") => b,
                                (Some(b), "greatest") if compare(&v, &b)?.is_gt() => v,
                                (Some(b), "least") if compare(&v, &b)?.is_lt() => v,
                                (Some(b), _) => b,
                            });
                        }
                        return Ok(match (static_type(e, self.cols), best) {
                            (Some(DataType::Float), Some(Int(i))) => Float(i as f64),
                            (_, b) => b.unwrap_or(Null),
                        });
                    }
                    "concat" => {
                        let mut out = String::new();
                        for v in &vals {
                            out.push_str(&text(v)?.unwrap_or_default());
                        }
                        return Ok(Value::str(&out));
                    }
                    "concat_ws" => {
                        let Some(sep) = text(&vals[0])? else {
                            return Ok(Null);
                        };
                        let mut parts = Vec::new();
                        for v in &vals[1..] {
                            if let Some(t) = text(v)? {
                                parts.push(t);
                            }
                        }
                        return Ok(Value::str(&parts.join(&sep)));
                    }
                    _ => {}
                }
                if vals.iter().any(Value::is_null) {
                    return Ok(Null);
                }
                // Calendar functions take a date as its midnight.
                if matches!(
                    lname.as_str(),
                    "year" | "date_part" | "datepart" | "strftime" | "date_diff" | "datediff"
                ) {
                    for v in &mut vals {
                        if let Date(d) = v {
                            *v = Timestamp(midnight(*d)?);
                        }
                    }
                }
                if let Some(v) = string_function(&lname, &vals)? {
                    return Ok(v);
                }
                match (lname.as_str(), vals.as_slice()) {
                    ("abs", [Int(i)]) => Int(i
                        .checked_abs()
                        .ok_or_else(|| overflow("integer overflow"))?),
                    ("abs", [Float(f)]) => Float(f.abs()),
                    ("trunc", [Int(i)]) => Int(*i),
                    ("trunc", [Float(f)]) => Float(f.trunc()),
                    ("sign", [Int(i)]) => Int(i.signum()),
                    ("sign", [Float(f)]) => Int(if *f > 0.0 {
                        1
                    } else if *f < 0.0 {
                        -1
                    } else {
                        0
                    }),
                    ("pow" | "power", [_, Null]) => Null,
                    ("pow" | "power", [x, y]) => match (x.as_f64(), y.as_f64()) {
                        (Some(x), Some(y)) => Float(x.powf(y)),
                        _ => return Err(plan(format!("pow of {x:?}, {y:?}"))),
                    },
                    ("sqrt" | "cbrt" | "ln" | "sin", [x]) => {
                        let x = x
                            .as_f64()
                            .ok_or_else(|| plan(format!("{lname} of {x:?}")))?;
                        Float(match lname.as_str() {
                            "sqrt" => x.sqrt(),
                            "cbrt" => x.cbrt(),
                            "ln" => x.ln(),
                            _ => x.sin(),
                        })
                    }
                    ("floor", [Int(i)]) | ("ceil" | "ceiling", [Int(i)]) => Int(*i),
                    ("floor", [Float(f)]) => Float(f.floor()),
                    ("ceil" | "ceiling", [Float(f)]) => Float(f.ceil()),
                    ("round", [Int(i)]) => Int(*i),
                    ("round", [Int(i), Int(d)]) if *d >= 0 => Int(*i),
                    ("round", [Float(f)]) => Float(round_float(*f, 0)),
                    ("round", [Float(f), Int(d)]) => Float(round_float(*f, *d)),
                    ("year", [Timestamp(t)]) => Int(timestamp_year(*t)),
                    ("date_part", [Str(part), Timestamp(t)]) => date_part(part, *t)?,
                    ("date_part", [Str(part), Interval(m)]) => interval_part(part, *m)?,
                    ("date_part", [Str(_), Null]) => Null,
                    ("strlen", [Str(s)]) => Int(s.len() as i64),
                    ("length", [Str(s)]) => Int(s.chars().count() as i64),
                    ("regexp_replace", [Str(s), rest @ ..]) => {
                        let texts = rest
                            .iter()
                            .map(|v| match v {
                                Str(t) => Ok(Some(t.to_string())),
                                Null => Ok(None),
                                v => Err(plan(format!("regexp_replace() argument {v:?}"))),
                            })
                            .collect::<Result<Vec<_>, RefError>>()?;
                        match texts.as_slice() {
                            [Some(p), Some(r)] => Value::str(&regexp_replace(s, p, r, "")?),
                            [Some(p), Some(r), Some(f)] => Value::str(&regexp_replace(s, p, r, f)?),
                            _ => Null,
                        }
                    }
                    _ => return Err(unsupported(format!("unsupported call {lname}({vals:?})"))),
                }
            }
            ExprKind::Extract { field, expr } => match self.eval(expr, ctx)? {
                Null => Null,
                Timestamp(t) => date_part(&field.name, t)?,
                Date(d) => date_part(&field.name, midnight(d)?)?,
                Interval(m) => interval_part(&field.name, m)?,
                v => return Err(plan(format!("extract from {v:?}"))),
            },
            ExprKind::Cast { expr, to, .. } => {
                use katydid::sql::ast::TypeName;
                match (self.eval(expr, ctx)?, to) {
                    (Null, TypeName::Date | TypeName::Timestamp) => Null,
                    (Str(s), TypeName::Date) => match parse_date(s.trim()) {
                        Some(d) => Date(d),
                        None => match parse_timestamp(s.trim()) {
                            Some(t) => Date(t.div_euclid(MICROS_PER_DAY)),
                            None => return Err(execution(format!("cannot cast {s:?} to date"))),
                        },
                    },
                    (Timestamp(t), TypeName::Date) => Date(t.div_euclid(MICROS_PER_DAY)),
                    (Date(d), TypeName::Date) => Date(d),
                    (Date(d), TypeName::Timestamp) => Timestamp(midnight(d)?),
                    _ => {
                        return Err(unsupported(
                            "CAST is supported by the reference only to DATE",
                        ));
                    }
                }
            }
        })
    }

    fn aggregate(
        &self,
        name: &str,
        args: &[Expr],
        star: bool,
        distinct: bool,
        rows: &[&[Value]],
    ) -> Result<Value, RefError> {
        if star {
            return Ok(Value::Int(rows.len() as i64));
        }
        if matches!(
            name,
            "covar_samp" | "covar_pop" | "corr" | "regr_slope" | "quantile_cont" | "quantile_disc"
        ) {
            return self.aggregate_of_two(name, args, rows);
        }
        let [arg] = args else {
            return Err(plan(format!("{name}() takes one argument")));
        };
        if name == "count_if" {
            let mut n = 0;
            for r in rows {
                n += (truth(&self.eval(arg, Ctx::Row(r))?)? == Some(true)) as i64;
            }
            return Ok(Value::Int(n));
        }
        let mut vals = Vec::new();
        for r in rows {
            let v = self.eval(arg, Ctx::Row(r))?;
            if !v.is_null() {
                vals.push(v);
            }
        }
        if distinct {
            if name != "count" {
                return Err(unsupported(format!("{name}(DISTINCT) is not supported")));
            }
            let set: HashSet<Value> = vals.into_iter().collect();
            return Ok(Value::Int(set.len() as i64));
        }
        if name == "count" {
            return Ok(Value::Int(vals.len() as i64));
        }
        if vals.is_empty() {
            return Ok(Value::Null);
        }
        match name {
            // The AND (OR) of the non-NULL values.
            "bool_and" | "bool_or" => {
                let mut all = true;
                let mut any = false;
                for v in &vals {
                    let Value::Bool(b) = v else {
                        return Err(plan(format!("{name}() of {v:?}")));
                    };
                    all &= *b;
                    any |= *b;
                }
                Ok(Value::Bool(if name == "bool_and" { all } else { any }))
            }
            "min" => Ok(vals
                .into_iter()
                .min_by(|a, b| a.total_cmp(b))
                .expect("non-empty")),
            "max" => Ok(vals
                .into_iter()
                .max_by(|a, b| a.total_cmp(b))
                .expect("non-empty")),
            "var_samp" | "var_pop" | "stddev_samp" | "stddev_pop" => {
                let xs = floats(&vals)?;
                let n = xs.len() as f64;
                let mean = xs.iter().sum::<f64>() / n;
                let m2: f64 = xs.iter().map(|x| (x - mean) * (x - mean)).sum();
                let var = if name.ends_with("samp") {
                    if xs.len() < 2 {
                        return Ok(Value::Null);
                    }
                    m2 / (n - 1.0)
                } else {
                    m2 / n
                };
                Ok(Value::Float(if name.starts_with("stddev") {
                    var.sqrt()
                } else {
                    var
                }))
            }
            "median" => quantile(vals, 0.5, false),
            "mode" => {
                // The most frequent value, the smallest of equally frequent ones.
                let mut sorted = vals;
                sorted.sort_by(|a, b| a.total_cmp(b));
                let mut best: (usize, usize) = (0, 0);
                let mut i = 0;
                while i < sorted.len() {
                    let mut j = i + 1;
                    while j < sorted.len() && sorted[j].total_cmp(&sorted[i]).is_eq() {
                        j += 1;
                    }
                    if j - i > best.1 {
                        best = (i, j - i);
                    }
                    i = j;
                }
                Ok(sorted.swap_remove(best.0))
            }
            "sum" | "avg" => {
                let n = vals.len() as f64;
                if vals.iter().all(|v| matches!(v, Value::Interval(_))) {
                    // Lengths of time: summed exactly, the mean rounded to
                    // the microsecond.
                    let s: i128 = vals
                        .iter()
                        .map(|v| i128::from(v.as_integer().expect("interval")))
                        .sum();
                    let sum = i64::try_from(s).map_err(|_| overflow("interval out of range"))?;
                    return Ok(Value::Interval(if name == "avg" {
                        (s as f64 / n).round_ties_even() as i64
                    } else {
                        sum
                    }));
                }
                if vals.iter().all(|v| matches!(v, Value::Int(_))) {
                    let s: i128 = vals
                        .iter()
                        .map(|v| match v {
                            Value::Int(i) => *i as i128,
                            _ => unreachable!(),
                        })
                        .sum();
                    if name == "avg" {
                        Ok(Value::Float(s as f64 / n))
                    } else {
                        Ok(Value::from_i128(s))
                    }
                } else if vals.iter().all(|v| matches!(v, Value::Float(_))) {
                    let s: f64 = vals.iter().map(|v| v.as_f64().expect("float")).sum();
                    Ok(Value::Float(if name == "avg" { s / n } else { s }))
                } else {
                    Err(plan(format!("cannot {name} {:?}", vals[0])))
                }
            }
            _ => unreachable!(),
        }
    }

    /// The aggregates of an order over rows: `string_agg`/`listagg`
    /// (the strings in the order of their key, NULL keys last unless
    /// NULLS FIRST, equal keys by the strings; load order without a key), `arg_min`/`arg_max` and
    /// aliases (over rows where both arguments are non-NULL; of tied
    /// values the smallest argument), and `percentile_cont`/
    /// `percentile_disc … WITHIN GROUP (ORDER BY x [DESC])`; `None` for
    /// other aggregates.
    fn ordered_aggregate(
        &self,
        name: &str,
        args: &[Expr],
        distinct: bool,
        order_by: &[OrderByItem],
        rows: &[&[Value]],
    ) -> Result<Option<Value>, RefError> {
        match name {
            "string_agg" | "listagg" => {
                // DISTINCT: each string once; an ORDER BY key must be the
                // argument itself (DuckDB's rule).
                if distinct
                    && let Some(o) = order_by.first()
                    && !same_expr(&o.expr, &args[0])
                {
                    return Err(unsupported("string_agg(DISTINCT) ordered by another key"));
                }
                let sep = match args.get(1) {
                    None => ",".to_string(),
                    Some(e) => match self.eval(e, Ctx::Row(&[]))? {
                        Value::Str(s) => s.to_string(),
                        v => return Err(plan(format!("separator {v:?}"))),
                    },
                };
                let mut pieces: Vec<(Value, String)> = Vec::new();
                for r in rows {
                    let Some(s) = text(&self.eval(&args[0], Ctx::Row(r))?)? else {
                        continue;
                    };
                    let key = match order_by.first() {
                        Some(o) => self.eval(&o.expr, Ctx::Row(r))?,
                        None => Value::Null,
                    };
                    pieces.push((key, s));
                }
                if let Some(o) = order_by.first() {
                    let nulls_first = o.nulls_first.unwrap_or(false);
                    pieces.sort_by(|(ka, sa), (kb, sb)| {
                        order_cmp(ka, kb, o.desc, nulls_first).then_with(|| sa.cmp(sb))
                    });
                }
                if pieces.is_empty() {
                    return Ok(Some(Value::Null));
                }
                let mut seen = HashSet::new();
                let joined: Vec<String> = pieces
                    .into_iter()
                    .map(|(_, s)| s)
                    .filter(|s| !distinct || seen.insert(s.clone()))
                    .collect();
                Ok(Some(Value::str(&joined.join(&sep))))
            }
            "arg_min" | "argmin" | "min_by" | "arg_max" | "argmax" | "max_by" => {
                let [a, v] = args else {
                    return Err(plan(format!("{name}() takes two arguments")));
                };
                let max = name.contains("max");
                let mut pairs = Vec::new();
                for r in rows {
                    let (x, y) = (self.eval(a, Ctx::Row(r))?, self.eval(v, Ctx::Row(r))?);
                    if !x.is_null() && !y.is_null() {
                        pairs.push((y, x));
                    }
                }
                pairs.sort_by(|(ya, xa), (yb, xb)| {
                    let by_value = if max {
                        yb.total_cmp(ya)
                    } else {
                        ya.total_cmp(yb)
                    };
                    by_value.then_with(|| xa.total_cmp(xb))
                });
                Ok(Some(
                    pairs.into_iter().next().map_or(Value::Null, |(_, x)| x),
                ))
            }
            "percentile_cont" | "percentile_disc" => {
                let ([f], [o]) = (args, order_by) else {
                    return Err(plan(format!(
                        "{name}() takes a fraction and one ORDER BY key"
                    )));
                };
                let f = match self.eval(f, Ctx::Row(&[]))? {
                    Value::Float(f) => f,
                    Value::Int(i) => i as f64,
                    v => return Err(plan(format!("fraction {v:?}"))),
                };
                let mut vals = Vec::new();
                for r in rows {
                    let v = self.eval(&o.expr, Ctx::Row(r))?;
                    if !v.is_null() {
                        vals.push(v);
                    }
                }
                if name == "percentile_cont" {
                    let f = if o.desc { 1.0 - f } else { f };
                    return quantile(vals, f, false).map(Some);
                }
                if !o.desc {
                    return quantile(vals, f, true).map(Some);
                }
                // The value at ⌈f·n⌉ counted from the largest.
                if vals.is_empty() {
                    return Ok(Some(Value::Null));
                }
                vals.sort_by(|a, b| b.total_cmp(a));
                let n = vals.len();
                let k = ((f * n as f64).ceil() as usize).clamp(1, n) - 1;
                Ok(Some(vals.swap_remove(k)))
            }
            _ => Ok(None),
        }
    }

    /// The aggregates of two arguments: pairs (`corr(y, x)`), or a value
    /// and a constant fraction (`quantile_cont(x, 0.3)`).
    fn aggregate_of_two(
        &self,
        name: &str,
        args: &[Expr],
        rows: &[&[Value]],
    ) -> Result<Value, RefError> {
        let [a, b] = args else {
            return Err(plan(format!("{name}() takes two arguments")));
        };
        if name.starts_with("quantile") {
            let f = match self.eval(b, Ctx::Row(&[]))? {
                Value::Float(f) => f,
                Value::Int(i) => i as f64,
                v => return Err(plan(format!("fraction {v:?}"))),
            };
            let mut vals = Vec::new();
            for r in rows {
                let v = self.eval(a, Ctx::Row(r))?;
                if !v.is_null() {
                    vals.push(v);
                }
            }
            return quantile(vals, f, name == "quantile_disc");
        }
        let mut pairs = Vec::new();
        for r in rows {
            let (y, x) = (self.eval(a, Ctx::Row(r))?, self.eval(b, Ctx::Row(r))?);
            if let (Some(y), Some(x)) = (y.as_f64(), x.as_f64()) {
                pairs.push((y, x));
            }
        }
        if pairs.is_empty() {
            return Ok(Value::Null);
        }
        let n = pairs.len() as f64;
        let my = pairs.iter().map(|p| p.0).sum::<f64>() / n;
        let mx = pairs.iter().map(|p| p.1).sum::<f64>() / n;
        let c: f64 = pairs.iter().map(|(y, x)| (y - my) * (x - mx)).sum();
        let vx: f64 = pairs.iter().map(|(_, x)| (x - mx) * (x - mx)).sum();
        let vy: f64 = pairs.iter().map(|(y, _)| (y - my) * (y - my)).sum();
        Ok(Value::Float(match name {
            "covar_pop" => c / n,
            "covar_samp" if pairs.len() < 2 => return Ok(Value::Null),
            "covar_samp" => c / (n - 1.0),
            "corr" => c / (vx * vy).sqrt(),
            _ => c / vx,
        }))
    }

    fn predicate(&self, e: &Expr, ctx: Ctx) -> Result<bool, RefError> {
        Ok(truth(&self.eval(e, ctx)?)? == Some(true))
    }
}

/// Compares two values in ORDER BY order for one key.
/// The numbers of `vals` as floats.
fn floats(vals: &[Value]) -> Result<Vec<f64>, RefError> {
    vals.iter()
        .map(|v| match v {
            Value::Int(i) => Ok(*i as f64),
            Value::Float(x) => Ok(*x),
            v => Err(plan(format!("not a number: {v:?}"))),
        })
        .collect()
}

/// SQL's continuous or discrete quantile `f` of `vals` (non-NULL), by
/// sorting: the discrete one is the value at ⌈f·n⌉ (1-based, at least the
/// first), the continuous one interpolates at position f·(n − 1).
fn quantile(mut vals: Vec<Value>, f: f64, discrete: bool) -> Result<Value, RefError> {
    if vals.is_empty() {
        return Ok(Value::Null);
    }
    vals.sort_by(|a, b| a.total_cmp(b));
    let n = vals.len();
    if discrete {
        let k = ((f * n as f64).ceil() as usize).clamp(1, n) - 1;
        return Ok(vals.swap_remove(k));
    }
    let pos = f * (n - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = (lo + 1).min(n - 1);
    let num = |v: &Value| match v {
        Value::Int(i) | Value::Timestamp(i) => Ok(*i as f64),
        // A date is its midnight; the answer a timestamp.
        Value::Date(d) => Ok((*d * MICROS_PER_DAY) as f64),
        Value::Float(x) => Ok(*x),
        v => Err(plan(format!("quantile of {v:?}"))),
    };
    let (a, b) = (num(&vals[lo])?, num(&vals[hi])?);
    let frac = pos - lo as f64;
    let at = if frac > 0.0 { a + (b - a) * frac } else { a };
    Ok(match vals[lo] {
        Value::Timestamp(_) | Value::Date(_) => Value::Timestamp(at.round() as i64),
        _ => Value::Float(at),
    })
}

pub fn order_cmp(a: &Value, b: &Value, desc: bool, nulls_first: bool) -> Ordering {
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
        (false, false) => {
            let o = a.total_cmp(b);
            if desc { o.reverse() } else { o }
        }
    }
}

/// True when `e` has an aggregate call that is not a window's.
fn contains_aggregate_outside_window(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Window { .. } => false,
        ExprKind::Function { name, .. } if is_aggregate_name(name) => true,
        _ => children(e)
            .into_iter()
            .any(contains_aggregate_outside_window),
    }
}

/// `e` with every bare name of an aliased select item replaced by the
/// item's expression (QUALIFY may name items by alias).
fn substitute_aliases(e: &Expr, items: &[(Expr, String, bool)]) -> Expr {
    if let ExprKind::Column(name) = &e.kind
        && let Some((x, _, _)) = items
            .iter()
            .find(|(_, n, aliased)| *aliased && n.eq_ignore_ascii_case(name))
    {
        return x.clone();
    }
    let mut out = e.clone();
    window::map_children(&mut out, &mut |c| substitute_aliases(c, items));
    out
}

/// Where an ORDER BY key takes its value from.
enum SortSource {
    Output(usize),
    Expr(Expr),
}

/// The items a `*` (or `t.*`) with its options stands for: `(column
/// expression, name)` pairs in, `(expression, output name, aliased)` out.
fn expand_star(
    cols: Vec<(Expr, String)>,
    options: &katydid::sql::ast::StarOptions,
) -> Result<Vec<(Expr, String, bool)>, RefError> {
    // EXCLUDE drops columns, REPLACE swaps a column's value for an
    // expression under the column's name.
    let named =
        |id: &katydid::sql::ast::Ident| cols.iter().any(|(_, n)| n.eq_ignore_ascii_case(&id.name));
    if let Some(id) = options
        .exclude
        .iter()
        .chain(options.replace.iter().map(|(_, id)| id))
        .find(|id| !named(id))
    {
        return Err(plan(format!("no column {} for *", id.name)));
    }
    let mut seen = HashSet::new();
    for id in options
        .exclude
        .iter()
        .chain(options.replace.iter().map(|(_, id)| id))
    {
        if !seen.insert(id.name.to_ascii_lowercase()) {
            return Err(plan(format!("column {} named twice after *", id.name)));
        }
    }
    let mut items = Vec::new();
    for (column, name) in cols {
        if options
            .exclude
            .iter()
            .any(|id| id.name.eq_ignore_ascii_case(&name))
        {
            continue;
        }
        let replaced = options
            .replace
            .iter()
            .find(|(_, id)| id.name.eq_ignore_ascii_case(&name));
        let e = match replaced {
            Some((e, _)) => e.clone(),
            None => column,
        };
        items.push((e, name, replaced.is_some()));
    }
    Ok(items)
}

/// Runs `select` against `table` (which must be the table it names).
///
/// # Errors
/// Any evaluation error (overflow, division by zero) or resolution error
/// (unknown column, misplaced aggregate) fails the whole query.
pub fn run(table: &Table, select: &Select) -> Result<RefResult, RefError> {
    run_select(&Catalog::of(&[table]), select, None)
}

/// Runs `select` over the tables of `catalog`; `outer` is the row of the
/// enclosing query when it is a subquery.
pub fn run_select(
    catalog: &Catalog,
    select: &Select,
    outer: Option<&Outer>,
) -> Result<RefResult, RefError> {
    let source = match &select.from {
        Some(from) => multi::from_item(catalog, from, outer)?,
        None => Relation {
            cols: Vec::new(),
            rows: Rc::new(vec![Vec::new()]),
        },
    };
    let cols = &source.cols[..];
    let ev = Evaluator {
        cols,
        outer,
        catalog,
    };
    // Rows come in load order only from one table read without subqueries.
    let mut subqueries = false;
    let mut note = |e: &Expr| {
        visit(e, &mut |x| {
            subqueries |= matches!(
                x.kind,
                ExprKind::Subquery(_)
                    | ExprKind::InSubquery { .. }
                    | ExprKind::Quantified { .. }
                    | ExprKind::Exists(_)
            )
        })
    };
    for item in &select.projection {
        if let SelectItem::Expr { expr, .. } = item {
            note(expr);
        }
    }
    select.selection.iter().for_each(&mut note);
    let unordered = select.distinct
        || subqueries
        || !matches!(select.from, Some(FromItem::Table { .. }) | None);
    // The select list, with `*` expanded: (expression, output name).
    let mut items: Vec<(Expr, String, bool)> = Vec::new();
    for item in &select.projection {
        match item {
            SelectItem::QualifiedWildcard {
                table,
                span,
                options,
            } => {
                let star: Vec<(Expr, String)> = cols
                    .iter()
                    .filter(|c| {
                        c.qualifier
                            .as_deref()
                            .is_some_and(|q| q.eq_ignore_ascii_case(&table.name))
                    })
                    .map(|c| {
                        let kind = ExprKind::QualifiedColumn {
                            table: table.name.clone(),
                            column: c.name.clone(),
                        };
                        (Expr { kind, span: *span }, c.name.clone())
                    })
                    .collect();
                if star.is_empty() {
                    return Err(plan(format!(
                        "no table {} for {}.*",
                        table.name, table.name
                    )));
                }
                items.extend(expand_star(star, options)?);
            }
            SelectItem::Wildcard(span, options) => {
                let star: Vec<(Expr, String)> = cols
                    .iter()
                    .enumerate()
                    .filter(|(_, c)| c.star)
                    .map(|(i, c)| {
                        let bare = Expr {
                            kind: ExprKind::Column(c.name.clone()),
                            span: *span,
                        };
                        // The bare name where it finds this column.
                        let kind = match &c.qualifier {
                            Some(q) if column_of(&bare, cols) != Some(i) => {
                                ExprKind::QualifiedColumn {
                                    table: q.clone(),
                                    column: c.name.clone(),
                                }
                            }
                            _ => ExprKind::Column(c.name.clone()),
                        };
                        (Expr { kind, span: *span }, c.name.clone())
                    })
                    .collect();
                items.extend(expand_star(star, options)?);
            }
            SelectItem::Expr { expr, alias } => {
                let (name, aliased) = match (alias, &expr.kind) {
                    (Some(a), _) => (a.name.clone(), true),
                    (None, ExprKind::Column(c)) => (c.clone(), false),
                    (None, ExprKind::QualifiedColumn { column, .. }) => (column.clone(), false),
                    (None, _) => (String::new(), false),
                };
                items.push((expr.clone(), name, aliased));
            }
        }
    }

    let all = &*source.rows;
    let mut kept: Vec<&[Value]> = Vec::new();
    for r in all {
        let keep = match &select.selection {
            Some(w) => {
                if contains_aggregate(w) {
                    return Err(plan("aggregate in WHERE"));
                }
                match ev.predicate(w, Ctx::Row(r)) {
                    Ok(b) => b,
                    // Under a LIMIT the engine may stop reading early.
                    Err(e) if select.limit.is_some() => return Err(lenient(e)),
                    Err(e) => return Err(e),
                }
            }
            None => true,
        };
        if keep {
            kept.push(r);
        }
    }

    // Window functions (see `window`): computed over the kept rows into
    // hidden columns, which the select list, QUALIFY and ORDER BY read.
    let has_windows = items.iter().any(|(e, _, _)| window::contains_window(e))
        || select.qualify.is_some()
        || select
            .order_by
            .iter()
            .any(|o| window::contains_window(&o.expr));
    let unordered = unordered || has_windows;
    let mut order_by = select.order_by.clone();
    let windowed = if has_windows {
        if !select.group_by.is_empty()
            || items
                .iter()
                .any(|(e, _, _)| contains_aggregate_outside_window(e))
        {
            return Err(unsupported("the reference has no windows over groups"));
        }
        if select
            .selection
            .as_ref()
            .is_some_and(window::contains_window)
        {
            return Err(plan("window function in WHERE"));
        }
        let mut calls = window::Calls::default();
        for (e, _, _) in &mut items {
            *e = calls.rewrite(e)?;
        }
        for o in &mut order_by {
            o.expr = calls.rewrite(&o.expr)?;
        }
        let qualify = match &select.qualify {
            // QUALIFY may name a select item by its alias.
            Some(q) => Some(calls.rewrite(&substitute_aliases(q, &items))?),
            None => None,
        };
        let (ext_cols, ext_rows) = window::extend(&ev, cols, &kept, &calls, &select.windows)?;
        let ev = Evaluator {
            cols: &ext_cols,
            outer,
            catalog,
        };
        let mut rows = Vec::with_capacity(ext_rows.len());
        for r in ext_rows {
            let keep = match &qualify {
                Some(q) => ev.predicate(q, Ctx::Row(&r))?,
                None => true,
            };
            if keep {
                rows.push(r);
            }
        }
        Some((ext_cols, rows))
    } else {
        None
    };
    let (cols, kept): (&[Col], Vec<&[Value]>) = match &windowed {
        Some((c, rows)) => (c, rows.iter().map(|r| &r[..]).collect()),
        None => (cols, kept),
    };
    let ev = Evaluator {
        cols,
        outer,
        catalog,
    };

    // Group keys: explicit GROUP BY, or implicit grouping by the plain
    // (aggregate-free, non-constant) select items when aggregates appear.
    let has_agg = items.iter().any(|(e, _, _)| contains_aggregate(e))
        || select.having.as_ref().is_some_and(contains_aggregate);
    let mut keys: Vec<Expr> = Vec::new();
    for g in &select.group_by {
        let k = match &g.kind {
            ExprKind::Literal(Literal::Int(n)) => {
                let (e, _, _) = usize::try_from(*n)
                    .ok()
                    .and_then(|n| n.checked_sub(1))
                    .and_then(|i| items.get(i))
                    .ok_or_else(|| plan(format!("GROUP BY position {n} out of range")))?;
                e.clone()
            }
            ExprKind::Column(name) if find_col(cols, None, name)?.is_none() => items
                .iter()
                .find(|(_, n, aliased)| *aliased && n.eq_ignore_ascii_case(name))
                .map(|(e, _, _)| e.clone())
                .ok_or_else(|| plan(format!("unknown column {name:?} in GROUP BY")))?,
            _ => g.clone(),
        };
        if contains_aggregate(&k) {
            return Err(plan("aggregate in GROUP BY"));
        }
        keys.push(k);
    }
    let grouped = has_agg || !keys.is_empty();
    if select.group_by.is_empty() && has_agg {
        keys = items
            .iter()
            .filter(|(e, _, _)| !contains_aggregate(e) && contains_plain_column(e))
            .map(|(e, _, _)| e.clone())
            .collect();
    }

    // ORDER BY sources.
    let mut order = Vec::new();
    let mut sources = Vec::new();
    for OrderByItem {
        expr,
        desc,
        nulls_first,
    } in &order_by
    {
        let src = match &expr.kind {
            ExprKind::Literal(Literal::Int(n)) => {
                let i = usize::try_from(*n)
                    .ok()
                    .and_then(|n| n.checked_sub(1))
                    .filter(|&i| i < items.len())
                    .ok_or_else(|| plan(format!("ORDER BY position {n} out of range")))?;
                SortSource::Output(i)
            }
            ExprKind::Column(name) => {
                let by_alias = items
                    .iter()
                    .position(|(_, n, aliased)| *aliased && n.eq_ignore_ascii_case(name));
                let by_column = items.iter().position(|(e, _, _)| same_expr(e, expr));
                match by_alias.or(by_column) {
                    Some(i) => SortSource::Output(i),
                    None => SortSource::Expr(expr.clone()),
                }
            }
            _ => match items.iter().position(|(e, _, _)| same_expr(e, expr)) {
                Some(i) => SortSource::Output(i),
                None => SortSource::Expr(expr.clone()),
            },
        };
        order.push(OrderKey {
            column: match src {
                SortSource::Output(i) => Some(i),
                SortSource::Expr(_) => None,
            },
            desc: *desc,
            nulls_first: nulls_first.unwrap_or(false),
        });
        sources.push(src);
    }

    // Which rows or groups produce output (see the module docs for which
    // expressions are evaluated where).
    let mut groups: Vec<Vec<&[Value]>> = Vec::new();
    let mut ctxs: Vec<Ctx> = Vec::new();
    if grouped {
        let mut index: HashMap<Vec<Value>, usize> = HashMap::new();
        if keys.is_empty() {
            groups.push(kept.clone());
        } else {
            for r in &kept {
                let k = keys
                    .iter()
                    .map(|e| ev.eval(e, Ctx::Row(r)))
                    .collect::<Result<Vec<_>, _>>()?;
                let g = *index.entry(k).or_insert_with(|| {
                    groups.push(Vec::new());
                    groups.len() - 1
                });
                groups[g].push(r);
            }
        }
        let mut calls: Vec<&Expr> = Vec::new();
        let order_exprs = sources.iter().filter_map(|s| match s {
            SortSource::Expr(e) => Some(e),
            SortSource::Output(_) => None,
        });
        for e in items
            .iter()
            .map(|(e, _, _)| e)
            .chain(select.having.as_ref())
            .chain(order_exprs)
        {
            collect_aggregates(e, &mut calls);
        }
        for g in &groups {
            let ctx = Ctx::Group {
                rows: g,
                rep: g.first().copied(),
            };
            for c in &calls {
                ev.eval(c, ctx)?;
            }
            if let Some(h) = &select.having
                && !ev.predicate(h, ctx)?
            {
                continue;
            }
            ctxs.push(ctx);
        }
    } else {
        if select.having.is_some() {
            return Err(plan("HAVING without aggregation"));
        }
        ctxs.extend(kept.iter().map(|r| Ctx::Row(r)));
    }

    let mut keyed: Vec<(Ctx, Vec<Value>)> = Vec::new();
    for ctx in ctxs {
        let mut sort = Vec::new();
        for s in &sources {
            let v = match s {
                SortSource::Output(i) => ev.eval(&items[*i].0, ctx),
                SortSource::Expr(e) => ev.eval(e, ctx),
            };
            sort.push(match v {
                Ok(v) => v,
                // A top-n only ranks every row on its first key.
                Err(e) if !grouped && select.limit.is_some() => return Err(lenient(e)),
                Err(e) => return Err(e),
            });
        }
        keyed.push((ctx, sort));
    }
    keyed.sort_by(|(_, a), (_, b)| {
        for (k, (x, y)) in order.iter().zip(a.iter().zip(b)) {
            let o = order_cmp(x, y, k.desc, k.nulls_first);
            if o.is_ne() {
                return o;
            }
        }
        Ordering::Equal
    });
    let output = |ctx: Ctx| -> Result<Vec<Value>, RefError> {
        items.iter().map(|(e, _, _)| ev.eval(e, ctx)).collect()
    };
    let offset = select.offset.unwrap_or(0).min(keyed.len() as u64) as usize;
    // The candidates whose select list is evaluated: every group of an
    // aggregate query; otherwise only the rows returned.
    let lazy = !grouped && !select.distinct;
    // Which rows an unordered LIMIT returns is the engine's choice.
    let chosen = unordered && select.order_by.is_empty() && select.limit.is_some();
    let evaluated = match select.limit {
        Some(n) if lazy && n >= 0 => {
            offset.min(keyed.len())..(offset + n as usize).min(keyed.len())
        }
        Some(n) if lazy => {
            keyed
                .len()
                .saturating_sub(n.unsigned_abs() as usize)
                .max(offset)..keyed.len()
        }
        None if lazy => offset.min(keyed.len())..keyed.len(),
        _ => 0..keyed.len(),
    };
    // The returned rows, evaluated strictly; every other candidate only on
    // a best-effort basis (for the comparison's "is this row in the full
    // result" check: a failing row is simply left out).
    let mut rows: Vec<Vec<Value>> = Vec::new();
    let mut all_rows: Vec<Vec<Value>> = Vec::new();
    for (i, (c, _)) in keyed.iter().enumerate() {
        match output(*c) {
            Ok(r) => {
                if evaluated.contains(&i) {
                    rows.push(r.clone());
                }
                all_rows.push(r);
            }
            Err(e) if evaluated.contains(&i) && chosen => return Err(lenient(e)),
            Err(e) if evaluated.contains(&i) => return Err(e),
            Err(_) => {}
        }
    }
    if select.distinct {
        let mut seen = HashSet::new();
        rows.retain(|r| seen.insert(r.clone()));
        let mut seen = HashSet::new();
        all_rows.retain(|r| seen.insert(r.clone()));
    }
    if !lazy {
        let start = offset.min(rows.len());
        rows.drain(..start);
    }
    match select.limit {
        Some(n) if n >= 0 => rows.truncate(n as usize),
        Some(n) => {
            let keep = (n.unsigned_abs() as usize).min(rows.len());
            rows.drain(..rows.len() - keep);
        }
        None => {}
    }
    Ok(RefResult {
        rows,
        all_rows,
        order,
        grouped: grouped || unordered,
        limited: select.limit.is_some() || select.offset.is_some(),
        names: items.iter().map(|(_, n, _)| n.clone()).collect(),
        types: items.iter().map(|(e, _, _)| static_type(e, cols)).collect(),
    })
}
