//! The binder: AST to a typed [`QueryPlan`].
//!
//! Resolves names (columns case-insensitively, output aliases where SQL
//! users expect them), checks and coerces types, splits aggregates out of
//! the select list, applies LocustDB's implicit grouping and folds constants.

use std::collections::HashMap;
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::sql::ast::{self, ExprKind, Literal, SelectItem, TypeName, UnaryOp};
use crate::store::{Field, Partition, Table};
use crate::types::{
    DataType, MICROS_PER_DAY, TimestampFormat, Value, parse_timestamp,
    timestamp_to_date,
};

use super::eval::{NoRow, eval};
use super::expr::{
    AggCall, AggFunc, BinaryOp, DatePart, Expr, Fraction, Func, MathFn, RegexpReplace, StrFn,
    StrftimeFormat, TruncUnit,
};
use super::dedup::Deduped;
use super::{Aggregate, Catalog, QueryPlan, SortKey};

/// Binds a parsed SELECT against the catalog.
///
/// # Errors
/// [`Error::Plan`] with the byte offset of the offending name or expression.
pub fn bind_select(select: &ast::Select, sql: &str, catalog: &dyn Catalog) -> Result<QueryPlan> {
    let mut qualifier = None;
    let table = match &select.from {
        Some(ast::FromItem::Table { table, alias }) => {
            qualifier = match (alias, table) {
                (Some(alias), _) => Some(alias.name.clone()),
                (None, ast::TableRef::Named(name)) => Some(name.name.clone()),
                (None, _) => None,
            };
            resolve_table(table, catalog)?
        }
        Some(other) => {
            return Err(Error::Internal(format!(
                "a join or subquery reached the single-table binder at byte {}",
                other.span().start
            )));
        }
        None => Arc::new(Table {
            name: String::new(),
            fields: vec![],
            partitions: vec![Partition {
                rows: 1,
                first_row: 0,
                columns: vec![],
            }],
            source_bytes: 0,
            source_format: Default::default(),
        }),
    };
    let mut binder = Binder {
        table: &table,
        sql,
        aliases: Vec::new(),
        columns: ColumnNames::new(&table),
        qualifier,
    };

    // Select list, before aggregation.
    let mut items: Vec<Expr> = Vec::new();
    let mut names: Vec<String> = Vec::new();
    // Per item, whether it names a column (a column of type NULL binds
    // as a constant, but is a plain expression all the same).
    let mut reads: Vec<bool> = Vec::new();
    for item in &select.projection {
        match item {
            SelectItem::Wildcard(span, options)
            | SelectItem::QualifiedWildcard { span, options, .. } => {
                if table.fields.is_empty() && select.from.is_none() {
                    return Err(Error::plan_at("SELECT * needs a FROM clause", span.start));
                }
                if let SelectItem::QualifiedWildcard { table: t, .. } = item {
                    binder.check_qualifier(&t.name, t.span.start)?;
                }
                let all: Vec<&str> = table.fields.iter().map(|f| f.name.as_str()).collect();
                let kept = options
                    .apply(&all)
                    .map_err(|(message, at)| Error::plan_at(message, at))?;
                for (index, replacement) in kept {
                    let f = &table.fields[index];
                    items.push(match replacement {
                        Some(e) => binder.bind(e, Ctx::Select)?,
                        None => column_expr(index, f),
                    });
                    names.push(f.name.clone());
                    reads.push(true);
                }
            }
            SelectItem::Expr { expr, alias } => {
                let bound = binder.bind(expr, Ctx::Select)?;
                reads.push(reads_column(expr));
                let name = match alias {
                    Some(a) => a.name.clone(),
                    None => match &expr.kind {
                        ExprKind::Column(c) => c.clone(),
                        ExprKind::QualifiedColumn { column, .. } => column.clone(),
                        _ => sql[expr.span.start..expr.span.end].to_string(),
                    },
                };
                if let Some(a) = alias {
                    binder.aliases.push((a.name.clone(), bound.clone()));
                }
                items.push(bound);
                names.push(name);
            }
        }
    }
    let wildcard_span = select.projection.iter().find_map(|i| match i {
        SelectItem::Wildcard(s, _) | SelectItem::QualifiedWildcard { span: s, .. } => Some(*s),
        _ => None,
    });

    let filter = select
        .selection
        .as_ref()
        .map(|e| binder.bind_predicate(e, Ctx::Where))
        .transpose()?;

    // An aggregate in ORDER BY makes the query an aggregate as much as one
    // in the select list does (`SELECT 1 FROM t ORDER BY count(*)`).
    let order_has_agg = select.order_by.iter().any(|o| {
        matches!(order_target(o, &items, &names, select), Ok(None))
            && binder
                .bind(&o.expr, Ctx::OrderBy)
                .is_ok_and(|e| contains_agg(&e))
    });
    let has_agg = items.iter().any(contains_agg) || order_has_agg;
    let is_aggregate = has_agg || !select.group_by.is_empty() || select.having.is_some();

    let visible = items.len();
    let mut outputs;
    let mut aggregate = None;
    let mut having = None;
    let mut order_by = Vec::new();

    if is_aggregate {
        if let Some(span) = wildcard_span {
            return Err(Error::plan_at(
                "SELECT * cannot be combined with GROUP BY or aggregates",
                span.start,
            ));
        }
        let mut keys: Deduped<Expr> = Deduped::new();
        if select.group_by.is_empty() {
            // LocustDB's implicit grouping: plain expressions next to
            // aggregates are the group keys (also one over a column of
            // type NULL, bound as a constant: over no rows, no group).
            for (e, &reads) in items.iter().zip(&reads) {
                if !contains_agg(e) && (reads || !e.is_constant()) {
                    keys.insert(e.clone());
                }
            }
        } else {
            for g in &select.group_by {
                let key = match &g.kind {
                    ExprKind::Literal(Literal::Int(n)) => {
                        let e = ordinal(*n, &items, g.span.start)?;
                        if contains_agg(e) {
                            return Err(Error::plan_at(
                                format!("GROUP BY {n} refers to an aggregate"),
                                g.span.start,
                            ));
                        }
                        e.clone()
                    }
                    _ => binder.bind(g, Ctx::GroupBy)?,
                };
                keys.insert(key);
            }
        }
        let mut aggs: Deduped<AggCall> = Deduped::new();
        outputs = Vec::with_capacity(items.len());
        for (e, item) in items.iter().zip(select_spans(select)) {
            outputs.push(post_aggregate(e.clone(), &keys, &mut aggs, item)?);
        }
        if let Some(h) = &select.having {
            let bound = binder.bind_predicate(h, Ctx::Having)?;
            having = Some(fold(post_aggregate(bound, &keys, &mut aggs, h.span.start)?));
        }
        for o in &select.order_by {
            let index = match order_target(o, &items, &names, select)? {
                Some(i) => i,
                None => {
                    let bound = binder.bind(&o.expr, Ctx::OrderBy)?;
                    let post = fold(post_aggregate(bound, &keys, &mut aggs, o.expr.span.start)?);
                    push_output(&mut outputs, post)
                }
            };
            order_by.push(sort_key(o, index));
        }
        aggregate = Some(Aggregate {
            keys: keys.into_vec().into_iter().map(fold).collect(),
            aggs: aggs
                .into_vec()
                .into_iter()
                .map(|a| AggCall {
                    arg: a.arg.map(fold),
                    arg2: a.arg2.map(fold),
                    ..a
                })
                .collect(),
        });
    } else {
        outputs = items;
        for o in &select.order_by {
            let index = match order_target(o, &outputs[..visible], &names, select)? {
                Some(i) => i,
                None => {
                    let bound = fold(binder.bind(&o.expr, Ctx::OrderBy)?);
                    push_output(&mut outputs, bound)
                }
            };
            order_by.push(sort_key(o, index));
        }
    }
    let outputs = outputs.into_iter().map(fold).collect();
    Ok(QueryPlan {
        table,
        filter: filter.map(fold),
        aggregate,
        outputs,
        names,
        visible,
        having,
        order_by,
        limit: select.limit,
        offset: select.offset.unwrap_or(0),
    })
}

/// The table `from` names: a loaded table (case-insensitive), or a file or
/// table function, which the catalog reads.
///
/// # Errors
/// [`Error::Plan`] at the name for an unknown table (with suggestions); the
/// catalog's errors for files.
pub fn resolve_table(from: &ast::TableRef, catalog: &dyn Catalog) -> Result<Arc<Table>> {
    match from {
        ast::TableRef::Named(ident) => catalog.table(&ident.name).ok_or_else(|| {
            let names = catalog.table_names();
            Error::plan_at(
                format!(
                    "unknown table \"{}\"{}",
                    ident.name,
                    suggest(&ident.name, &names)
                ),
                ident.span.start,
            )
        }),
        source => catalog.file_table(source),
    }
}

fn select_spans(select: &ast::Select) -> Vec<usize> {
    let mut v = Vec::new();
    for item in &select.projection {
        match item {
            SelectItem::Wildcard(s, _) | SelectItem::QualifiedWildcard { span: s, .. } => {
                v.push(s.start)
            }
            SelectItem::Expr { expr, .. } => v.push(expr.span.start),
        }
    }
    v
}

fn push_output(outputs: &mut Vec<Expr>, e: Expr) -> usize {
    match outputs.iter().position(|o| *o == e) {
        Some(i) => i,
        None => {
            outputs.push(e);
            outputs.len() - 1
        }
    }
}

fn sort_key(o: &ast::OrderByItem, column: usize) -> SortKey {
    SortKey {
        column,
        desc: o.desc,
        nulls_first: o.nulls_first.unwrap_or(false),
    }
}

/// Resolves an ORDER BY item that names an output column by ordinal or alias.
fn order_target(
    o: &ast::OrderByItem,
    items: &[Expr],
    names: &[String],
    select: &ast::Select,
) -> Result<Option<usize>> {
    match &o.expr.kind {
        ExprKind::Literal(Literal::Int(n)) => {
            ordinal(*n, items, o.expr.span.start)?;
            Ok(Some(*n as usize - 1))
        }
        ExprKind::Column(name) => {
            let aliased = select
                .projection
                .iter()
                .enumerate()
                .find_map(|(i, it)| match it {
                    SelectItem::Expr { alias: Some(a), .. }
                        if a.name.eq_ignore_ascii_case(name) =>
                    {
                        Some(i)
                    }
                    _ => None,
                });
            // The alias's projection item as an output position: each `*`
            // stands for every column of the table.
            let stars = select
                .projection
                .iter()
                .filter(|it| {
                    matches!(
                        it,
                        SelectItem::Wildcard(..) | SelectItem::QualifiedWildcard { .. }
                    )
                })
                .count();
            let star_width = match stars {
                0 => 0,
                n => (names.len() - (select.projection.len() - n)) / n,
            };
            let aliased = aliased.map(|i| {
                select.projection[..i]
                    .iter()
                    .map(|it| match it {
                        SelectItem::Wildcard(..) | SelectItem::QualifiedWildcard { .. } => {
                            star_width
                        }
                        SelectItem::Expr { .. } => 1,
                    })
                    .sum::<usize>()
            });
            Ok(aliased.or_else(|| {
                // An output named like the key but not a plain column of the
                // table (e.g. `count(*)` is not a name) is bound normally.
                names
                    .iter()
                    .position(|n| n == name)
                    .filter(|&i| matches!(items[i], Expr::Column { .. }))
            }))
        }
        _ => Ok(None),
    }
}

fn ordinal(n: i64, items: &[Expr], offset: usize) -> Result<&Expr> {
    if n < 1 || n as usize > items.len() {
        return Err(Error::plan_at(
            format!(
                "position {n} is not in the select list (1 to {})",
                items.len()
            ),
            offset,
        ));
    }
    Ok(&items[n as usize - 1])
}

fn contains_agg(e: &Expr) -> bool {
    e.any(&|e| matches!(e, Expr::Agg(_)))
}

/// Rewrites an expression over table columns into one over group keys and
/// aggregate results.
fn post_aggregate(
    e: Expr,
    keys: &Deduped<Expr>,
    aggs: &mut Deduped<AggCall>,
    offset: usize,
) -> Result<Expr> {
    if let Some(index) = keys.position(&e) {
        return Ok(Expr::GroupKey {
            index,
            dtype: e.dtype(),
        });
    }
    match e {
        Expr::Agg(call) => {
            let dtype = call.dtype;
            let index = aggs.insert(*call);
            Ok(Expr::AggResult { index, dtype })
        }
        Expr::Column { name, .. } => Err(Error::plan_at(
            format!(
                "column \"{name}\" must appear in the GROUP BY clause or be used in an aggregate function"
            ),
            offset,
        )),
        e => e.map_children(&mut |c| post_aggregate(c, keys, aggs, offset)),
    }
}

/// Folds constant subexpressions top-down: a constant subtree whose
/// evaluation fails (e.g. `1 / 0` in a CASE branch) is left for run time.
pub fn fold(e: Expr) -> Expr {
    if e.is_constant()
        && !matches!(e, Expr::Literal { .. })
        && let Ok(value) = eval(&e, &NoRow)
    {
        return Expr::literal(value, e.dtype());
    }
    let folded = e
        .map_children::<()>(&mut |c| Ok(fold(c)))
        .unwrap_or_else(|()| unreachable_expr());
    // Children may have become literals: try the node itself once more.
    if folded.is_constant()
        && !matches!(folded, Expr::Literal { .. })
        && let Ok(value) = eval(&folded, &NoRow)
    {
        return Expr::literal(value, folded.dtype());
    }
    simplify_logic(folded)
}

fn unreachable_expr() -> Expr {
    Expr::literal(Value::Null, DataType::Bool)
}

/// `TRUE AND x` → `x`, `FALSE AND x` → `FALSE`, and the OR duals.
fn simplify_logic(e: Expr) -> Expr {
    match e {
        Expr::Binary {
            op: op @ (BinaryOp::And | BinaryOp::Or),
            left,
            right,
            dtype,
        } => {
            let absorbing = Value::Bool(op == BinaryOp::Or);
            let neutral = Value::Bool(op == BinaryOp::And);
            let (l, r) = (*left, *right);
            if l.as_literal() == Some(&absorbing) || r.as_literal() == Some(&absorbing) {
                return Expr::literal(absorbing, DataType::Bool);
            }
            if l.as_literal() == Some(&neutral) {
                return r;
            }
            if r.as_literal() == Some(&neutral) {
                return l;
            }
            Expr::Binary {
                op,
                left: Box::new(l),
                right: Box::new(r),
                dtype,
            }
        }
        e => e,
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Ctx {
    Select,
    Where,
    GroupBy,
    Having,
    OrderBy,
}

struct Binder<'a> {
    table: &'a Table,
    sql: &'a str,
    aliases: Vec<(String, Expr)>,
    columns: ColumnNames<'a>,
    /// The name `t.column` may use for the table: its alias, else its name.
    qualifier: Option<String>,
}

/// The table's column names, hashed: a name resolves in O(1), not by a scan
/// of every column (a query over a 47,000-column table names each column).
struct ColumnNames<'a> {
    exact: HashMap<&'a str, usize>,
    /// ASCII-lowercased names.
    folded: HashMap<String, usize>,
}

/// The parts of a function call the binder reads: `name(DISTINCT args
/// ORDER BY …)` or `name(args) WITHIN GROUP (ORDER BY …)`.
struct CallParts<'c> {
    name: &'c str,
    args: &'c [ast::Expr],
    /// `count(*)`.
    star: bool,
    distinct: bool,
    order_by: &'c [ast::OrderByItem],
    /// True when `order_by` came from `WITHIN GROUP`.
    within_group: bool,
}

impl<'a> ColumnNames<'a> {
    fn new(table: &'a Table) -> ColumnNames<'a> {
        let mut exact = HashMap::with_capacity(table.fields.len());
        let mut folded = HashMap::with_capacity(table.fields.len());
        for (i, f) in table.fields.iter().enumerate() {
            exact.entry(f.name.as_str()).or_insert(i);
            folded.entry(f.name.to_ascii_lowercase()).or_insert(i);
        }
        ColumnNames { exact, folded }
    }

    /// The index [`Table::column_index`] gives: the first column named
    /// exactly `name`, else the first equal to it ignoring ASCII case.
    fn index(&self, name: &str) -> Option<usize> {
        self.exact
            .get(name)
            .or_else(|| self.folded.get(&name.to_ascii_lowercase()))
            .copied()
    }
}

/// Every function name the binder takes (scalar and aggregate), lower
/// case, sorted: what "did you mean" suggests from and the REPL completes.
pub const FUNCTION_NAMES: &[&str] = &[
    "abs",
    "acos",
    "any_value",
    "approx_count_distinct",
    "approx_quantile",
    "arg_max",
    "arg_min",
    "argmax",
    "argmin",
    "ascii",
    "asin",
    "atan",
    "avg",
    "bool_and",
    "bool_or",
    "cbrt",
    "ceil",
    "ceiling",
    "char_length",
    "character_length",
    "chr",
    "coalesce",
    "concat",
    "concat_ws",
    "contains",
    "corr",
    "cos",
    "count",
    "count_if",
    "covar_pop",
    "covar_samp",
    "date_diff",
    "date_part",
    "date_trunc",
    "datediff",
    "datepart",
    "day",
    "dayofmonth",
    "dayofweek",
    "dayofyear",
    "degrees",
    "ends_with",
    "exp",
    "extract",
    "floor",
    "greatest",
    "group_concat",
    "hour",
    "ifnull",
    "instr",
    "isodow",
    "lcase",
    "least",
    "left",
    "len",
    "length",
    "listagg",
    "ln",
    "log",
    "log10",
    "log2",
    "lower",
    "lpad",
    "ltrim",
    "max",
    "max_by",
    "mean",
    "median",
    "min",
    "min_by",
    "minute",
    "mod",
    "mode",
    "month",
    "nullif",
    "percentile_cont",
    "percentile_disc",
    "pow",
    "power",
    "prefix",
    "quantile",
    "quantile_cont",
    "quantile_disc",
    "quarter",
    "radians",
    "random",
    "regexp_replace",
    "regr_intercept",
    "regr_r2",
    "regr_slope",
    "repeat",
    "replace",
    "reverse",
    "right",
    "round",
    "rpad",
    "rtrim",
    "second",
    "sign",
    "sin",
    "split_part",
    "sqrt",
    "starts_with",
    "stddev",
    "stddev_pop",
    "stddev_samp",
    "strftime",
    "string_agg",
    "strlen",
    "strpos",
    "strptime",
    "substr",
    "substring",
    "suffix",
    "sum",
    "tan",
    "to_year",
    "trim",
    "trunc",
    "try_strptime",
    "ucase",
    "upper",
    "var_pop",
    "var_samp",
    "variance",
    "week",
    "weekofyear",
    "year",
];

/// True when `e` names a column outside aggregates and subqueries.
fn reads_column(e: &ast::Expr) -> bool {
    match &e.kind {
        ExprKind::Function { name, .. } if AggFunc::is_aggregate_name(name) => false,
        ExprKind::Column(_) | ExprKind::QualifiedColumn { .. } => true,
        ExprKind::Literal(_)
        | ExprKind::Subquery(_)
        | ExprKind::Exists(_)
        | ExprKind::Window { .. } => false,
        ExprKind::InSubquery { expr, .. }
        | ExprKind::Quantified { expr, .. }
        | ExprKind::Unary { expr, .. }
        | ExprKind::IsNull { expr, .. }
        | ExprKind::Cast { expr, .. }
        | ExprKind::Extract { expr, .. } => reads_column(expr),
        ExprKind::Binary { left, right, .. } => reads_column(left) || reads_column(right),
        ExprKind::InList { expr, list, .. } => reads_column(expr) || list.iter().any(reads_column),
        ExprKind::Between {
            expr, low, high, ..
        } => [expr, low, high].into_iter().any(|x| reads_column(x)),
        ExprKind::Like { expr, pattern, .. } => reads_column(expr) || reads_column(pattern),
        ExprKind::Case {
            operand,
            branches,
            else_result,
        } => {
            operand.as_deref().is_some_and(reads_column)
                || branches
                    .iter()
                    .any(|(w, t)| reads_column(w) || reads_column(t))
                || else_result.as_deref().is_some_and(reads_column)
        }
        ExprKind::Function {
            args,
            filter,
            order_by,
            ..
        } => {
            args.iter().any(reads_column)
                || filter.as_deref().is_some_and(reads_column)
                || order_by.iter().any(|o| reads_column(&o.expr))
        }
    }
}

/// A reference to column `index`. A column of type NULL (no value at all)
/// is bound as the NULL literal, so that every operator and aggregate takes
/// it as they take `NULL`: `sum` gives NULL, `count` 0.
fn column_expr(index: usize, f: &Field) -> Expr {
    if f.dtype == DataType::Null {
        return Expr::literal(Value::Null, DataType::Null);
    }
    Expr::Column {
        index,
        name: f.name.clone(),
        dtype: f.dtype,
    }
}

fn is_null_literal(e: &Expr) -> bool {
    matches!(
        e,
        Expr::Literal {
            value: Value::Null,
            ..
        }
    )
}

fn retype_null(e: Expr, dtype: DataType) -> Expr {
    if is_null_literal(&e) {
        Expr::literal(Value::Null, dtype)
    } else {
        e
    }
}

impl Binder<'_> {
    /// The text of a format argument (`strptime`, `strftime`), which
    /// must be a constant: `None` when it is NULL (the call is NULL).
    ///
    /// # Errors
    /// A plan error at `arg` naming `function` and an `example` format.
    fn constant_format(
        &self,
        bound: Expr,
        arg: &ast::Expr,
        function: &str,
        example: &str,
    ) -> Result<Option<String>> {
        match fold(bound).as_literal() {
            Some(Value::Str(t)) => Ok(Some(t.to_string())),
            Some(Value::Null) => Ok(None),
            _ => Err(Error::plan_at(
                format!(
                    "{function} needs a constant format such as {example}, but \"{}\" is not one",
                    self.text(arg)
                ),
                arg.span.start,
            )),
        }
    }

    fn bind_predicate(&self, e: &ast::Expr, ctx: Ctx) -> Result<Expr> {
        let bound = self.bind(e, ctx)?;
        match bound.dtype() {
            DataType::Bool => Ok(bound),
            _ if is_null_literal(&bound) => Ok(retype_null(bound, DataType::Bool)),
            t => Err(Error::plan_at(
                format!("a condition must be boolean, found {t}"),
                e.span.start,
            )),
        }
    }

    /// Checks that `name` (of `name.column` or `name.*`) is the table's
    /// alias or name.
    fn check_qualifier(&self, name: &str, at: usize) -> Result<()> {
        match &self.qualifier {
            Some(q) if q.eq_ignore_ascii_case(name) => Ok(()),
            Some(q) => Err(Error::plan_at(
                format!("unknown table \"{name}\" (the table here is \"{q}\")"),
                at,
            )),
            None => Err(Error::plan_at(format!("unknown table \"{name}\""), at)),
        }
    }

    fn text(&self, e: &ast::Expr) -> &str {
        self.sql.get(e.span.start..e.span.end).unwrap_or("")
    }

    fn bind(&self, e: &ast::Expr, ctx: Ctx) -> Result<Expr> {
        let at = e.span.start;
        Ok(match &e.kind {
            // The composer computes window functions before binding; one
            // left here stands where none may.
            ExprKind::Window { .. } => {
                let clause = match ctx {
                    Ctx::Where => "WHERE",
                    Ctx::GroupBy => "GROUP BY",
                    Ctx::Having => "HAVING",
                    Ctx::Select | Ctx::OrderBy => "an aggregate's argument",
                };
                return Err(Error::plan_at(
                    format!("window functions are not allowed in {clause}"),
                    at,
                ));
            }
            ExprKind::QualifiedColumn { table, column } => {
                self.check_qualifier(table, at)?;
                match self.columns.index(column) {
                    Some(index) => column_expr(index, &self.table.fields[index]),
                    None => {
                        let names: Vec<String> =
                            self.table.fields.iter().map(|f| f.name.clone()).collect();
                        return Err(Error::plan_at(
                            format!(
                                "unknown column \"{column}\" in \"{table}\"{}",
                                suggest(column, &names)
                            ),
                            at,
                        ));
                    }
                }
            }
            ExprKind::Subquery(_)
            | ExprKind::InSubquery { .. }
            | ExprKind::Quantified { .. }
            | ExprKind::Exists(_) => {
                return Err(Error::plan_at("a subquery cannot be used here", at));
            }
            ExprKind::Column(name) => match self.columns.index(name) {
                Some(index) => column_expr(index, &self.table.fields[index]),
                None => {
                    if let Some((_, expr)) = self
                        .aliases
                        .iter()
                        .find(|(a, _)| a.eq_ignore_ascii_case(name))
                        .filter(|_| ctx != Ctx::Select)
                    {
                        let clause = match ctx {
                            Ctx::Where => Some("WHERE"),
                            Ctx::GroupBy => Some("GROUP BY"),
                            _ => None,
                        };
                        if let Some(clause) = clause
                            && contains_agg(expr)
                        {
                            return Err(Error::plan_at(
                                format!(
                                    "alias \"{name}\" refers to an aggregate, which {clause} cannot use"
                                ),
                                at,
                            ));
                        }
                        return Ok(expr.clone());
                    }
                    let names: Vec<String> =
                        self.table.fields.iter().map(|f| f.name.clone()).collect();
                    return Err(Error::plan_at(
                        format!("unknown column \"{name}\"{}", suggest(name, &names)),
                        at,
                    ));
                }
            },
            ExprKind::Literal(lit) => match lit {
                Literal::Null => Expr::literal(Value::Null, DataType::Null),
                Literal::Bool(b) => Expr::literal(Value::Bool(*b), DataType::Bool),
                Literal::Int(i) => Expr::literal(Value::Int(*i), DataType::Int),
                Literal::Float(f) => Expr::literal(Value::Float(*f), DataType::Float),
                Literal::String(s) => Expr::literal(Value::str(s), DataType::Str),
                Literal::Interval(m) => Expr::literal(Value::Interval(*m), DataType::Interval),
                Literal::Months(_) => {
                    return Err(Error::plan_at(
                        "an interval of months can only be added to or subtracted from a \
                         timestamp or date",
                        at,
                    ));
                }
            },
            ExprKind::Unary { op, expr } => {
                let inner = self.bind(expr, ctx)?;
                match op {
                    UnaryOp::Neg => match inner.dtype() {
                        DataType::Int | DataType::Float | DataType::Interval | DataType::Null => {
                            Expr::Neg(Box::new(inner))
                        }
                        t => {
                            return Err(Error::plan_at(format!("cannot negate a {t}"), at));
                        }
                    },
                    UnaryOp::Not => Expr::Not(Box::new(self.expect_bool(inner, expr)?)),
                }
            }
            ExprKind::Binary {
                op: ast::BinaryOp::Concat,
                left,
                right,
            } => {
                let l = self.bind(left, ctx)?;
                let r = self.bind(right, ctx)?;
                concat_call(vec![as_text(l), as_text(r)])
            }
            ExprKind::Binary { op, left, right } => {
                self.bind_binary((*op).into(), left, right, ctx, at)?
            }
            ExprKind::IsNull { expr, negated } => Expr::IsNull {
                expr: Box::new(self.bind(expr, ctx)?),
                negated: *negated,
            },
            ExprKind::InList {
                expr,
                list,
                negated,
            } => {
                let x = self.bind(expr, ctx)?;
                let bound = list
                    .iter()
                    .map(|item| self.bind(item, ctx))
                    .collect::<Result<Vec<_>>>()?;
                let mut x = widen_date(x, &bound);
                let mut items = Vec::with_capacity(list.len());
                for (item, src) in bound.into_iter().zip(list) {
                    let (nx, ni) = self.coerce_comparison(x, item, src.span.start)?;
                    x = nx;
                    items.push(ni);
                }
                Expr::InList {
                    expr: Box::new(x),
                    list: items,
                    negated: *negated,
                }
            }
            ExprKind::Between {
                expr,
                low,
                high,
                negated,
            } => {
                let x = self.bind(expr, ctx)?;
                let (lo, hi) = (self.bind(low, ctx)?, self.bind(high, ctx)?);
                let x = widen_date(x, &[lo.clone(), hi.clone()]);
                let (x, lo) = self.coerce_comparison(x, lo, low.span.start)?;
                let (x, hi) = self.coerce_comparison(x, hi, high.span.start)?;
                let (op_lo, op_hi, join) = if *negated {
                    (BinaryOp::Lt, BinaryOp::Gt, BinaryOp::Or)
                } else {
                    (BinaryOp::GtEq, BinaryOp::LtEq, BinaryOp::And)
                };
                let cmp = |op, a: Expr, b: Expr| Expr::Binary {
                    op,
                    left: Box::new(a),
                    right: Box::new(b),
                    dtype: DataType::Bool,
                };
                cmp(join, cmp(op_lo, x.clone(), lo), cmp(op_hi, x, hi))
            }
            ExprKind::Like {
                expr,
                pattern,
                negated,
                case_insensitive,
            } => {
                let what = if *case_insensitive { "ILIKE" } else { "LIKE" };
                let mut x = self.expect_type(self.bind(expr, ctx)?, DataType::Str, expr, what)?;
                let mut p =
                    self.expect_type(self.bind(pattern, ctx)?, DataType::Str, pattern, what)?;
                if *case_insensitive {
                    // `x ILIKE p` is `lower(x) LIKE lower(p)`, as DuckDB
                    // defines it; lower() runs once per dictionary entry,
                    // and a constant pattern folds.
                    let lower = |e: Expr| Expr::Call {
                        func: Func::Lower,
                        args: vec![e],
                        dtype: DataType::Str,
                    };
                    x = lower(x);
                    p = fold(lower(p));
                }
                Expr::Like {
                    expr: Box::new(x),
                    pattern: Box::new(p),
                    negated: *negated,
                }
            }
            ExprKind::Case {
                operand,
                branches,
                else_result,
            } => self.bind_case(
                operand.as_deref(),
                branches,
                else_result.as_deref(),
                ctx,
                at,
            )?,
            ExprKind::Function {
                name,
                args,
                star,
                distinct,
                filter: None,
                order_by,
                within_group,
            } => {
                let call = CallParts {
                    name,
                    args,
                    star: *star,
                    distinct: *distinct,
                    order_by,
                    within_group: *within_group,
                };
                self.bind_function(e, call, ctx)?
            }
            ExprKind::Function {
                name,
                args,
                star,
                distinct,
                filter: Some(p),
                order_by,
                within_group,
            } => {
                // agg(x) FILTER (WHERE p) is agg(CASE WHEN p THEN x END);
                // count(*) counts CASE WHEN p THEN 1 END.
                if !AggFunc::is_aggregate_name(name) {
                    return Err(Error::plan_at(
                        format!("FILTER applies to aggregates, and {name}() is not one"),
                        p.span.start,
                    ));
                }
                let when = |value: ast::Expr| ast::Expr {
                    span: value.span,
                    kind: ExprKind::Case {
                        operand: None,
                        branches: vec![((**p).clone(), value)],
                        else_result: None,
                    },
                };
                let mut args = args.clone();
                let mut order_by = order_by.clone();
                if *star {
                    args = vec![when(ast::Expr {
                        kind: ExprKind::Literal(Literal::Int(1)),
                        span: p.span,
                    })];
                } else if *within_group && let Some(first) = order_by.first_mut() {
                    // percentile_cont(f) WITHIN GROUP (ORDER BY x): x is
                    // the value, f a constant.
                    first.expr = when(first.expr.clone());
                } else if let Some(first) = args.first_mut() {
                    *first = when(first.clone());
                }
                let call = CallParts {
                    name,
                    args: &args,
                    star: false,
                    distinct: *distinct,
                    order_by: &order_by,
                    within_group: *within_group,
                };
                self.bind_function(e, call, ctx)?
            }
            ExprKind::Extract { field, expr } => {
                let part = DatePart::parse(&field.name)
                    .ok_or_else(|| Error::plan_at(unknown_part(&field.name), field.span.start))?;
                let ts = self.bind(expr, ctx)?;
                self.extract_of(part, ts, expr, "extract()")?
            }
            ExprKind::Cast { expr, to, try_cast } => {
                let inner = self.bind(expr, ctx)?;
                let to = match to {
                    TypeName::Int => DataType::Int,
                    TypeName::Float => DataType::Float,
                    TypeName::Timestamp => DataType::Timestamp,
                    TypeName::Date => DataType::Date,
                    TypeName::Interval => DataType::Interval,
                    TypeName::Str => DataType::Str,
                    TypeName::Bool => DataType::Bool,
                };
                let from = inner.dtype();
                let ok = from == to
                    || is_null_literal(&inner)
                    || to == DataType::Str
                    || from == DataType::Str
                    || (from.is_numeric() && to.is_numeric())
                    || (from.is_temporal() && to.is_temporal())
                    || (from == DataType::Interval && to == DataType::Interval)
                    || (from == DataType::Bool && to == DataType::Int)
                    || (from == DataType::Int && to == DataType::Bool);
                if !ok {
                    return Err(Error::plan_at(format!("cannot cast {from} to {to}"), at));
                }
                if is_null_literal(&inner) {
                    Expr::literal(Value::Null, to)
                } else {
                    Expr::Cast {
                        expr: Box::new(inner),
                        dtype: to,
                        try_cast: *try_cast,
                    }
                }
            }
        })
    }

    fn expect_bool(&self, e: Expr, src: &ast::Expr) -> Result<Expr> {
        self.expect_type(e, DataType::Bool, src, "a logical operator")
    }

    fn expect_type(&self, e: Expr, t: DataType, src: &ast::Expr, what: &str) -> Result<Expr> {
        if e.dtype() == t {
            Ok(e)
        } else if is_null_literal(&e) {
            Ok(retype_null(e, t))
        } else {
            Err(Error::plan_at(
                format!(
                    "{what} needs a {t}, but \"{}\" is a {}",
                    self.text(src),
                    e.dtype()
                ),
                src.span.start,
            ))
        }
    }

    /// Makes two operands comparable: numbers with numbers, a string
    /// literal with a timestamp becomes a timestamp literal (with a date, a
    /// date literal), a date with a timestamp is its midnight, NULL adopts
    /// the other side's type.
    fn coerce_comparison(&self, l: Expr, r: Expr, at: usize) -> Result<(Expr, Expr)> {
        let (l, r) = self.date_comparison(l, r, at)?;
        let (lt, rt) = (l.dtype(), r.dtype());
        if is_null_literal(&r) {
            return Ok((l, retype_null(r, lt)));
        }
        if is_null_literal(&l) {
            return Ok((retype_null(l, rt), r));
        }
        // An expression of NULL's type (over a column with no value) is
        // NULL, comparable with anything.
        if lt == rt
            || (lt.is_numeric() && rt.is_numeric())
            || lt == DataType::Null
            || rt == DataType::Null
        {
            return Ok((l, r));
        }
        let as_ts = |e: &Expr| -> Result<Option<Expr>> {
            if let Some(Value::Str(s)) = e.as_literal() {
                return match parse_timestamp(s.trim()) {
                    Some(t) => Ok(Some(Expr::literal(
                        Value::Timestamp(t),
                        DataType::Timestamp,
                    ))),
                    None => Err(Error::plan_at(
                        format!("\"{s}\" is not a timestamp (expected YYYY-MM-DD[ HH:MM:SS])"),
                        at,
                    )),
                };
            }
            Ok(None)
        };
        if lt == DataType::Timestamp
            && rt == DataType::Str
            && let Some(r) = as_ts(&r)?
        {
            return Ok((l, r));
        }
        if rt == DataType::Timestamp
            && lt == DataType::Str
            && let Some(l) = as_ts(&l)?
        {
            return Ok((l, r));
        }
        Err(Error::plan_at(format!("cannot compare {lt} with {rt}"), at))
    }

    /// A date compared with a timestamp or a string literal: a string
    /// literal becomes a date literal (a timestamp's text its day, as
    /// DuckDB casts the literal to the date's type), a timestamp constant
    /// at midnight a date constant (so a date column is compared as the
    /// integers it stores), and otherwise the date is widened to its
    /// midnight, as DuckDB compares them. Other operands pass unchanged.
    fn date_comparison(&self, l: Expr, r: Expr, at: usize) -> Result<(Expr, Expr)> {
        let (lt, rt) = (l.dtype(), r.dtype());
        if lt == DataType::Date && rt != DataType::Date {
            let (r, l) = self.date_comparison(r, l, at)?;
            return Ok((l, r));
        }
        if rt != DataType::Date || !matches!(lt, DataType::Timestamp | DataType::Str) {
            return Ok((l, r));
        }
        let constant = fold(l.clone());
        match constant.as_literal() {
            Some(Value::Str(s)) => match parse_timestamp(s.trim()) {
                Some(t) => Ok((
                    Expr::literal(Value::Date(timestamp_to_date(t)), DataType::Date),
                    r,
                )),
                None => Err(Error::plan_at(
                    format!("\"{s}\" is not a date (expected YYYY-MM-DD)"),
                    at,
                )),
            },
            Some(Value::Timestamp(t)) if t.rem_euclid(MICROS_PER_DAY) == 0 => Ok((
                Expr::literal(Value::Date(timestamp_to_date(*t)), DataType::Date),
                r,
            )),
            _ if lt == DataType::Timestamp => Ok((l, to_timestamp(r))),
            _ => Ok((l, r)),
        }
    }

    fn bind_binary(
        &self,
        op: BinaryOp,
        left: &ast::Expr,
        right: &ast::Expr,
        ctx: Ctx,
        at: usize,
    ) -> Result<Expr> {
        let interval = |e: &ast::Expr| match e.kind {
            ExprKind::Literal(Literal::Interval(m)) => Some(m),
            _ => None,
        };
        // Timestamp (or date) ± months, by the calendar.
        let months = |e: &ast::Expr| match e.kind {
            ExprKind::Literal(Literal::Months(n)) => Some(n),
            _ => None,
        };
        if matches!(op, BinaryOp::Plus | BinaryOp::Minus) {
            let (ts, n) = match (months(left), months(right)) {
                (None, Some(n)) => (Some(left), if op == BinaryOp::Minus { n.checked_neg() } else { Some(n) }),
                (Some(n), None) if op == BinaryOp::Plus => (Some(right), Some(n)),
                _ => (None, None),
            };
            if let Some(ts_src) = ts {
                let n = n.ok_or_else(|| Error::plan_at("interval out of range", at))?;
                let ts = self.bind(ts_src, ctx)?;
                let ts = fold(self.timestamp_arg(ts, ts_src, "interval arithmetic")?);
                return match ts.as_literal() {
                    Some(Value::Timestamp(t)) => {
                        let shifted = super::eval::add_months(*t, n)
                            .ok_or_else(|| Error::plan_at("date out of range", at))?;
                        Ok(Expr::literal(Value::Timestamp(shifted), DataType::Timestamp))
                    }
                    Some(Value::Null) => Ok(Expr::literal(Value::Null, DataType::Timestamp)),
                    _ => Ok(Expr::Call {
                        func: Func::AddMonths(n),
                        args: vec![ts],
                        dtype: DataType::Timestamp,
                    }),
                };
            }
        }
        // Timestamp ± interval.
        if matches!(op, BinaryOp::Plus | BinaryOp::Minus) {
            if let Some(m) = interval(right) {
                let l = self.bind(left, ctx)?;
                if l.dtype() == DataType::Interval {
                    let r = Expr::literal(Value::Interval(m), DataType::Interval);
                    return Ok(interval_arith(op, l, r).expect("interval ± interval"));
                }
                let l = self.timestamp_arg(l, left, "interval arithmetic")?;
                return Ok(Expr::Binary {
                    op,
                    left: Box::new(l),
                    right: Box::new(Expr::literal(Value::Int(m), DataType::Int)),
                    dtype: DataType::Timestamp,
                });
            }
            if let (Some(m), BinaryOp::Plus) = (interval(left), op) {
                let r = self.bind(right, ctx)?;
                if r.dtype() == DataType::Interval {
                    let l = Expr::literal(Value::Interval(m), DataType::Interval);
                    return Ok(interval_arith(op, l, r).expect("interval + interval"));
                }
                let r = self.timestamp_arg(r, right, "interval arithmetic")?;
                return Ok(Expr::Binary {
                    op,
                    left: Box::new(r),
                    right: Box::new(Expr::literal(Value::Int(m), DataType::Int)),
                    dtype: DataType::Timestamp,
                });
            }
        }
        let l = self.bind(left, ctx)?;
        let r = self.bind(right, ctx)?;
        let bin = |op, l: Expr, r: Expr, dtype| Expr::Binary {
            op,
            left: Box::new(l),
            right: Box::new(r),
            dtype,
        };
        match op {
            BinaryOp::And | BinaryOp::Or => {
                let l = self.expect_bool(l, left)?;
                let r = self.expect_bool(r, right)?;
                Ok(bin(op, l, r, DataType::Bool))
            }
            op if op.is_comparison() => {
                let (l, r) = self.coerce_comparison(l, r, at)?;
                Ok(bin(op, l, r, DataType::Bool))
            }
            _ => {
                let (lt, rt) = (l.dtype(), r.dtype());
                let (l, r) = if lt == DataType::Null && rt == DataType::Null {
                    // NULL op NULL: an integer NULL, as in DuckDB.
                    (retype_null(l, DataType::Int), retype_null(r, DataType::Int))
                } else if is_null_literal(&l) {
                    (retype_null(l, rt), r)
                } else {
                    let r = retype_null(r, lt);
                    (l, r)
                };
                let (lt, rt) = (l.dtype(), r.dtype());
                if let Some(e) = interval_arith(op, l.clone(), r.clone()) {
                    return Ok(e);
                }
                // An expression of NULL's type (an aggregate of a column
                // with no value) takes the other side's type.
                let (lt, rt) = match (lt, rt) {
                    (DataType::Null, DataType::Null) => (DataType::Int, DataType::Int),
                    (DataType::Null, t) | (t, DataType::Null) => (t, t),
                    types => types,
                };
                let dtype = match (lt, rt, op) {
                    // A date ± days is a date; date − date is days.
                    (DataType::Date, DataType::Int, BinaryOp::Plus | BinaryOp::Minus)
                    | (DataType::Int, DataType::Date, BinaryOp::Plus) => DataType::Date,
                    (DataType::Date, DataType::Date, BinaryOp::Minus) => DataType::Int,
                    _ => match (lt, rt) {
                    (DataType::Int, DataType::Int) => DataType::Int,
                    (a, b) if a.is_numeric() && b.is_numeric() => DataType::Float,
                    _ => {
                        return Err(Error::plan_at(
                            format!("cannot apply \"{}\" to {lt} and {rt}", op.symbol()),
                            at,
                        ));
                    }
                    },
                };
                Ok(bin(op, l, r, dtype))
            }
        }
    }

    fn bind_case(
        &self,
        operand: Option<&ast::Expr>,
        branches: &[(ast::Expr, ast::Expr)],
        else_result: Option<&ast::Expr>,
        ctx: Ctx,
        at: usize,
    ) -> Result<Expr> {
        let operand = operand.map(|o| self.bind(o, ctx)).transpose()?;
        let mut whens = Vec::new();
        let mut thens = Vec::new();
        for (w, t) in branches {
            let bw = self.bind(w, ctx)?;
            let cond = match &operand {
                Some(o) => {
                    let (l, r) = self.coerce_comparison(o.clone(), bw, w.span.start)?;
                    Expr::Binary {
                        op: BinaryOp::Eq,
                        left: Box::new(l),
                        right: Box::new(r),
                        dtype: DataType::Bool,
                    }
                }
                None => self.expect_bool(bw, w)?,
            };
            whens.push(cond);
            thens.push((self.bind(t, ctx)?, t.span.start));
        }
        let else_bound = match else_result {
            Some(e) => Some((self.bind(e, ctx)?, e.span.start)),
            None => None,
        };
        let has_else = else_bound.is_some();
        let mut items = thens;
        items.extend(else_bound);
        let (mut unified, dtype) = unify_types(items, "CASE branches")?;
        let else_result = if has_else {
            unified.pop().expect("the ELSE result")
        } else {
            Expr::literal(Value::Null, dtype)
        };
        let _ = at;
        Ok(Expr::Case {
            branches: whens.into_iter().zip(unified).collect(),
            else_result: Box::new(else_result),
            dtype,
        })
    }

    /// `string_agg(s[, separator] [ORDER BY key])` of the arguments
    /// `args` and the key `order`: `s` cast to a string (as DuckDB), the
    /// separator a constant string (',' when not given).
    fn bind_string_agg(
        &self,
        lname: &str,
        args: &[ast::Expr],
        distinct: bool,
        order: Option<&ast::OrderByItem>,
        bind_arg: impl Fn(&ast::Expr) -> Result<Expr>,
        at: usize,
    ) -> Result<Expr> {
        if !(1..=2).contains(&args.len()) {
            return Err(Error::plan_at(
                format!("{lname}() takes a string and an optional separator"),
                at,
            ));
        }
        let value = bind_arg(&args[0])?;
        let value = if value.dtype() == DataType::Str {
            value
        } else if is_null_literal(&value) {
            retype_null(value, DataType::Str)
        } else {
            Expr::Cast {
                expr: Box::new(value),
                dtype: DataType::Str,
                try_cast: false,
            }
        };
        let separator: Arc<str> = match args.get(1) {
            None => Arc::from(","),
            Some(sep) => match bind_arg(sep)?.as_literal() {
                Some(Value::Str(s)) => s.clone(),
                _ => {
                    return Err(Error::plan_at(
                        format!("{lname}() needs a constant string as its separator"),
                        sep.span.start,
                    ));
                }
            },
        };
        // DuckDB's rule: the strings are told apart by themselves, so a
        // DISTINCT call orders by them or not at all.
        if let Some(o) = order
            && distinct
            && self.text(&o.expr) != self.text(&args[0])
        {
            return Err(Error::plan_at(
                format!(
                    "{lname}(DISTINCT …) can only order by its argument (\"{}\")",
                    self.text(&args[0])
                ),
                o.expr.span.start,
            ));
        }
        let (func, key) = match order {
            None => (
                AggFunc::StringAgg {
                    desc: false,
                    nulls_first: false,
                    distinct,
                },
                None,
            ),
            Some(o) => (
                AggFunc::StringAgg {
                    distinct,
                    desc: o.desc,
                    // NULL keys last unless NULLS FIRST, as in the
                    // query's ORDER BY (and DuckDB's).
                    nulls_first: o.nulls_first.unwrap_or(false),
                },
                Some(bind_arg(&o.expr)?),
            ),
        };
        Ok(Expr::Agg(Box::new(AggCall {
            func,
            arg: Some(value),
            arg2: key,
            separator: Some(separator),
            dtype: DataType::Str,
        })))
    }

    fn bind_function(&self, e: &ast::Expr, call: CallParts<'_>, ctx: Ctx) -> Result<Expr> {
        let CallParts {
            name,
            args,
            star,
            distinct,
            order_by,
            within_group,
        } = call;
        let at = e.span.start;
        let lname = name.to_ascii_lowercase();
        let half = Fraction::new(0.5).expect("in range");
        // (function, arguments it takes, argument type it needs); the
        // quantiles' second argument is their fraction.
        let agg = match lname.as_str() {
            "count" if star => Some((AggFunc::CountStar, 0)),
            "count" if distinct => Some((AggFunc::CountDistinct, 1)),
            "count" | "count_if" => Some((AggFunc::Count, 1)),
            "approx_count_distinct" => Some((AggFunc::ApproxCountDistinct, 1)),
            "sum" => Some((AggFunc::Sum, 1)),
            "avg" | "mean" => Some((AggFunc::Avg, 1)),
            "min" | "any_value" | "bool_and" => Some((AggFunc::Min, 1)),
            "max" | "bool_or" => Some((AggFunc::Max, 1)),
            "var_samp" | "variance" => Some((AggFunc::VarSamp, 1)),
            "var_pop" => Some((AggFunc::VarPop, 1)),
            "stddev" | "stddev_samp" => Some((AggFunc::StddevSamp, 1)),
            "stddev_pop" => Some((AggFunc::StddevPop, 1)),
            "covar_samp" => Some((AggFunc::CovarSamp, 2)),
            "covar_pop" => Some((AggFunc::CovarPop, 2)),
            "corr" => Some((AggFunc::Corr, 2)),
            "regr_slope" => Some((AggFunc::RegrSlope, 2)),
            "regr_intercept" => Some((AggFunc::RegrIntercept, 2)),
            "regr_r2" => Some((AggFunc::RegrR2, 2)),
            "median" => Some((AggFunc::QuantileCont(half), 1)),
            // The exact quantile is a valid approximate one.
            "quantile" | "quantile_cont" | "approx_quantile" => {
                Some((AggFunc::QuantileCont(half), 2))
            }
            "quantile_disc" => Some((AggFunc::QuantileDisc(half), 2)),
            "mode" => Some((AggFunc::Mode, 1)),
            "percentile_cont" => Some((AggFunc::QuantileCont(half), 2)),
            "percentile_disc" => Some((AggFunc::QuantileDisc(half), 2)),
            "string_agg" | "listagg" | "group_concat" => Some((
                AggFunc::StringAgg {
                    desc: false,
                    nulls_first: false,
                    distinct: false,
                },
                2,
            )),
            "arg_min" | "argmin" | "min_by" => Some((AggFunc::ArgMin, 2)),
            "arg_max" | "argmax" | "max_by" => Some((AggFunc::ArgMax, 2)),
            _ => None,
        };
        if let Some((mut func, nargs)) = agg {
            match ctx {
                Ctx::Where => {
                    return Err(Error::plan_at(
                        format!("aggregate function {lname}() is not allowed in WHERE"),
                        at,
                    ));
                }
                Ctx::GroupBy => {
                    return Err(Error::plan_at(
                        format!("aggregate function {lname}() is not allowed in GROUP BY"),
                        at,
                    ));
                }
                _ => {}
            }
            let string_agg = matches!(func, AggFunc::StringAgg { .. });
            if distinct && func != AggFunc::CountDistinct && !string_agg {
                return Err(Error::NotSupported(format!("{lname}(DISTINCT …)")));
            }
            let percentile = lname.starts_with("percentile_");
            if let Some(first) = order_by.first() {
                if within_group && !percentile {
                    return Err(Error::plan_at(
                        format!("WITHIN GROUP applies to percentile_cont and percentile_disc, not {lname}()"),
                        first.expr.span.start,
                    ));
                }
                if !within_group && !string_agg {
                    return Err(Error::plan_at(
                        format!("ORDER BY inside the call applies to string_agg(), not {lname}()"),
                        first.expr.span.start,
                    ));
                }
                if let Some(second) = order_by.get(1) {
                    return Err(Error::plan_at(
                        format!("{lname}() takes one ORDER BY key"),
                        second.expr.span.start,
                    ));
                }
            } else if percentile {
                return Err(Error::plan_at(
                    format!("{lname}() needs WITHIN GROUP (ORDER BY …) after it"),
                    at,
                ));
            }
            if func == AggFunc::CountStar {
                return Ok(Expr::Agg(Box::new(AggCall {
                    func,
                    arg: None,
                    arg2: None,
                    separator: None,
                    dtype: DataType::Int,
                })));
            }
            let bind_arg = |a: &ast::Expr| {
                self.bind(a, Ctx::Where).map_err(|err| match err {
                    Error::Plan { message, offset } if message.contains("not allowed in WHERE") => {
                        Error::Plan {
                            message: "aggregate functions cannot be nested".into(),
                            offset,
                        }
                    }
                    err => err,
                })
            };
            if string_agg {
                return self.bind_string_agg(
                    &lname,
                    args,
                    distinct,
                    order_by.first(),
                    bind_arg,
                    at,
                );
            }
            // percentile_cont(f) WITHIN GROUP (ORDER BY x) is
            // quantile_cont(x, f), descending when x is.
            let mut descending = false;
            let reordered;
            let args = match order_by.first() {
                Some(key) if percentile => {
                    if args.len() != 1 {
                        return Err(Error::plan_at(
                            format!("{lname}() takes exactly one argument, the fraction"),
                            at,
                        ));
                    }
                    descending = key.desc;
                    reordered = [key.expr.clone(), args[0].clone()];
                    &reordered[..]
                }
                _ => args,
            };
            if args.len() != nargs {
                let n = if nargs == 1 { "one argument" } else { "two arguments" };
                return Err(Error::plan_at(format!("{lname}() takes exactly {n}"), at));
            }
            let mut arg = bind_arg(&args[0])?;
            if lname == "count_if" {
                // count_if(p) counts the rows where p is true.
                let p = self.expect_type(arg, DataType::Bool, &args[0], "count_if()")?;
                arg = Expr::Case {
                    branches: vec![(p, Expr::literal(Value::Bool(true), DataType::Bool))],
                    else_result: Box::new(Expr::literal(Value::Null, DataType::Bool)),
                    dtype: DataType::Bool,
                };
            }
            if matches!(lname.as_str(), "bool_and" | "bool_or") {
                arg = self.expect_type(arg, DataType::Bool, &args[0], &format!("{lname}()"))?;
            }
            if matches!(func, AggFunc::QuantileCont(_)) && arg.dtype() == DataType::Date {
                // Between two dates lies a time of day: DuckDB's median of
                // dates is a timestamp.
                arg = to_timestamp(arg);
            }
            let t = arg.dtype();
            let numeric = |e: &Expr| e.dtype().is_numeric() || is_null_literal(e);
            let needs_number = |e: &Expr, text: &ast::Expr| -> Result<()> {
                if numeric(e) {
                    return Ok(());
                }
                Err(Error::plan_at(
                    format!(
                        "{lname}() needs a number, but \"{}\" is a {}",
                        self.text(text),
                        e.dtype()
                    ),
                    text.span.start,
                ))
            };
            if t == DataType::Interval && matches!(func, AggFunc::Sum | AggFunc::Avg) {
                // A sum or mean of lengths of time is one: of their
                // microseconds, the mean rounded to the microsecond.
                let micros = Expr::Cast {
                    expr: Box::new(arg),
                    dtype: DataType::Int,
                    try_cast: false,
                };
                let agg = Expr::Agg(Box::new(AggCall {
                    func,
                    dtype: func.result_type(DataType::Int),
                    arg: Some(micros),
                    arg2: None,
                    separator: None,
                }));
                return Ok(Expr::Cast {
                    expr: Box::new(agg),
                    dtype: DataType::Interval,
                    try_cast: false,
                });
            }
            let mut arg2 = None;
            match func {
                AggFunc::Sum
                | AggFunc::Avg
                | AggFunc::VarSamp
                | AggFunc::VarPop
                | AggFunc::StddevSamp
                | AggFunc::StddevPop => needs_number(&arg, &args[0])?,
                AggFunc::QuantileCont(_) if t != DataType::Timestamp => {
                    needs_number(&arg, &args[0])?
                }
                _ => {}
            }
            if matches!(func, AggFunc::ArgMin | AggFunc::ArgMax) {
                // Any argument; a value of any type that orders.
                arg2 = Some(bind_arg(&args[1])?);
            } else if func.takes_pair() {
                needs_number(&arg, &args[0])?;
                let second = bind_arg(&args[1])?;
                needs_number(&second, &args[1])?;
                arg2 = Some(second);
            } else if nargs == 2 {
                let f = &args[1];
                let fraction = match bind_arg(f)?.as_literal() {
                    Some(Value::Int(i)) => Some(*i as f64),
                    Some(Value::Float(x)) => Some(*x),
                    _ => None,
                };
                let Some(fraction) = fraction.and_then(Fraction::new) else {
                    return Err(Error::plan_at(
                        format!("{lname}() needs a constant fraction between 0 and 1"),
                        f.span.start,
                    ));
                };
                func = match func {
                    AggFunc::QuantileDisc(_) if descending => AggFunc::QuantileDiscDesc(fraction),
                    AggFunc::QuantileDisc(_) => AggFunc::QuantileDisc(fraction),
                    _ if descending => AggFunc::QuantileCont(
                        Fraction::new(1.0 - fraction.get()).expect("1 - f of f in [0, 1]"),
                    ),
                    _ => AggFunc::QuantileCont(fraction),
                };
            }
            return Ok(Expr::Agg(Box::new(AggCall {
                func,
                dtype: func.result_type(t),
                arg: Some(arg),
                arg2,
                separator: None,
            })));
        }
        if star || distinct {
            return Err(Error::plan_at(format!("{lname}() is not an aggregate"), at));
        }
        if let Some(o) = order_by.first() {
            return Err(Error::plan_at(
                format!("ORDER BY inside a call applies to aggregates, and {lname}() is not one"),
                o.expr.span.start,
            ));
        }
        let mut bound = Vec::with_capacity(args.len());
        for a in args {
            bound.push(self.bind(a, ctx)?);
        }
        let arity = |n: std::ops::RangeInclusive<usize>| -> Result<()> {
            if n.contains(&bound.len()) {
                Ok(())
            } else {
                Err(Error::plan_at(
                    format!(
                        "{lname}() takes {} argument(s), found {}",
                        describe_arity(&n),
                        bound.len()
                    ),
                    at,
                ))
            }
        };
        let (func, dtype) = match lname.as_str() {
            // DuckDB's one-part shorthands: month(ts) is
            // extract(month FROM ts).
            "quarter" | "month" | "week" | "weekofyear" | "day" | "dayofmonth" | "dayofweek"
            | "dayofyear" | "isodow" | "hour" | "minute" | "second" => {
                arity(1..=1)?;
                let part = DatePart::parse(&lname).expect("a part name");
                return self.extract_of(part, bound.remove(0), &args[0], &format!("{lname}()"));
            }
            "epoch" => {
                arity(1..=1)?;
                return self.extract_of(DatePart::Epoch, bound.remove(0), &args[0], "epoch()");
            }
            "year" | "to_year" => {
                arity(1..=1)?;
                let a = bound.remove(0);
                bound.push(self.timestamp_arg(a, &args[0], &format!("{lname}()"))?);
                (Func::Year, DataType::Int)
            }
            "date_trunc" => {
                arity(2..=2)?;
                let unit = match bound[0].as_literal() {
                    Some(Value::Str(s)) => TruncUnit::parse(s).ok_or_else(|| {
                        Error::plan_at(
                            format!("unknown date_trunc unit \"{s}\" (use second, minute, hour, day, month or year)"),
                            args[0].span.start,
                        )
                    })?,
                    _ => {
                        return Err(Error::plan_at(
                            "date_trunc() needs a unit string such as 'hour'",
                            args[0].span.start,
                        ));
                    }
                };
                let ts = bound.remove(1);
                let ts = self.timestamp_arg(ts, &args[1], "date_trunc()")?;
                bound = vec![ts];
                (Func::DateTrunc(unit), DataType::Timestamp)
            }
            "floor" | "ceil" | "ceiling" | "abs" | "trunc" => {
                arity(1..=1)?;
                let t = self.numeric_arg(&mut bound[0], &args[0], &lname)?;
                let f = match lname.as_str() {
                    "floor" => Func::Floor,
                    "abs" => Func::Abs,
                    "trunc" => Func::Trunc,
                    _ => Func::Ceil,
                };
                (f, t)
            }
            "sign" => {
                arity(1..=1)?;
                self.numeric_arg(&mut bound[0], &args[0], &lname)?;
                (Func::Sign, DataType::Int)
            }
            "random" => {
                arity(0..=0)?;
                (Func::Random, DataType::Float)
            }
            "pow" | "power" => {
                arity(2..=2)?;
                for (k, a) in bound.iter_mut().enumerate() {
                    self.numeric_arg(a, &args[k], &lname)?;
                }
                (Func::Pow, DataType::Float)
            }
            "log" if bound.len() == 2 => {
                // log(b, x) = ln(x) / ln(b).
                for (k, a) in bound.iter_mut().enumerate() {
                    self.numeric_arg(a, &args[k], &lname)?;
                }
                let ln = |e: Expr| Expr::Call {
                    func: Func::Math(MathFn::Ln),
                    args: vec![e],
                    dtype: DataType::Float,
                };
                let x = ln(bound.pop().expect("two"));
                let b = ln(bound.pop().expect("two"));
                return Ok(Expr::binary(BinaryOp::Divide, x, b, DataType::Float));
            }
            name if MathFn::parse(name).is_some() => {
                arity(1..=1)?;
                self.numeric_arg(&mut bound[0], &args[0], &lname)?;
                (Func::Math(MathFn::parse(name).expect("matched")), DataType::Float)
            }
            "round" => {
                arity(1..=2)?;
                let t = self.numeric_arg(&mut bound[0], &args[0], &lname)?;
                if bound.len() == 2 && bound[1].dtype() != DataType::Int {
                    return Err(Error::plan_at(
                        "round() digits must be an integer",
                        args[1].span.start,
                    ));
                }
                (Func::Round, t)
            }
            "substring" | "substr" => {
                arity(2..=3)?;
                let s = bound.remove(0);
                let s = self.expect_type(s, DataType::Str, &args[0], &format!("{lname}()"))?;
                for (k, a) in bound.iter().enumerate() {
                    if a.dtype() != DataType::Int && !is_null_literal(a) {
                        return Err(Error::plan_at(
                            format!("{lname}() takes integer positions"),
                            args[k + 1].span.start,
                        ));
                    }
                }
                bound.insert(0, s);
                (Func::Substring, DataType::Str)
            }
            "lower" | "upper" | "length" | "char_length" | "character_length" | "strlen" => {
                arity(1..=1)?;
                let a = bound.remove(0);
                bound.push(self.expect_type(a, DataType::Str, &args[0], &format!("{lname}()"))?);
                match lname.as_str() {
                    "lower" => (Func::Lower, DataType::Str),
                    "upper" => (Func::Upper, DataType::Str),
                    "strlen" => (Func::StrLen, DataType::Int),
                    _ => (Func::Length, DataType::Int),
                }
            }
            "date_part" | "datepart" => {
                arity(2..=2)?;
                let part = match bound[0].as_literal() {
                    Some(Value::Str(s)) => DatePart::parse(s)
                        .ok_or_else(|| Error::plan_at(unknown_part(s), args[0].span.start))?,
                    _ => {
                        return Err(Error::plan_at(
                            format!("{lname}() needs a part name such as 'minute'"),
                            args[0].span.start,
                        ));
                    }
                };
                let ts = bound.remove(1);
                return self.extract_of(part, ts, &args[1], &format!("{lname}()"));
            }
            "strptime" | "try_strptime" => {
                arity(2..=2)?;
                let s = bound.remove(0);
                let s = self.expect_type(s, DataType::Str, &args[0], &format!("{lname}()"))?;
                let format = match self.constant_format(
                    bound.remove(0),
                    &args[1],
                    &format!("{lname}()"),
                    "'%d/%m/%Y %H:%M'",
                )? {
                    Some(t) => TimestampFormat::new(&t)
                        .map_err(|m| Error::plan_at(m, args[1].span.start))?,
                    None => return Ok(Expr::literal(Value::Null, DataType::Timestamp)),
                };
                bound = vec![s];
                let func = Func::Strptime {
                    format: Arc::new(format),
                    try_parse: lname == "try_strptime",
                };
                (func, DataType::Timestamp)
            }
            "regexp_replace" => {
                arity(3..=4)?;
                let s = bound.remove(0);
                let s = self.expect_type(s, DataType::Str, &args[0], "regexp_replace()")?;
                let mut texts = Vec::with_capacity(3);
                for (e, src) in bound.into_iter().zip(&args[1..]) {
                    match fold(e).as_literal() {
                        Some(Value::Str(t)) => texts.push(t.to_string()),
                        // A NULL pattern, replacement or option gives NULL.
                        Some(Value::Null) => return Ok(Expr::literal(Value::Null, DataType::Str)),
                        _ => {
                            return Err(Error::plan_at(
                                format!(
                                    "regexp_replace() needs a constant string here, but \"{}\" is not one",
                                    self.text(src)
                                ),
                                src.span.start,
                            ));
                        }
                    }
                }
                let flags = texts.get(2).map_or("", String::as_str);
                let r = RegexpReplace::new(&texts[0], &texts[1], flags)
                    .map_err(|(arg, message)| Error::plan_at(message, args[arg].span.start))?;
                bound = vec![s];
                (Func::RegexpReplace(Arc::new(r)), DataType::Str)
            }
            "coalesce" | "ifnull" => {
                if lname == "ifnull" {
                    arity(2..=2)?;
                } else if bound.is_empty() {
                    return Err(at_least_one(&lname, at));
                }
                let (mut bound, dtype) = self.unify(bound, args, &lname)?;
                // CASE WHEN a IS NOT NULL THEN a WHEN b … ELSE last END.
                let last = bound.pop().expect("at least one argument");
                let branches = bound
                    .into_iter()
                    .map(|a| {
                        let test = Expr::IsNull {
                            expr: Box::new(a.clone()),
                            negated: true,
                        };
                        (test, a)
                    })
                    .collect();
                return Ok(Expr::Case {
                    branches,
                    else_result: Box::new(last),
                    dtype,
                });
            }
            "nullif" => {
                arity(2..=2)?;
                let b = bound.pop().expect("two");
                let a = bound.pop().expect("two");
                let (a, b) = if is_null_literal(&a) {
                    (retype_null(a, b.dtype()), b)
                } else {
                    (a, b)
                };
                let dtype = a.dtype();
                let (ca, cb) = self.coerce_comparison(a.clone(), b, args[1].span.start)?;
                return Ok(Expr::Case {
                    branches: vec![(
                        Expr::binary(BinaryOp::Eq, ca, cb, DataType::Bool),
                        Expr::literal(Value::Null, dtype),
                    )],
                    else_result: Box::new(a),
                    dtype,
                });
            }
            "greatest" | "least" => {
                if bound.is_empty() {
                    return Err(at_least_one(&lname, at));
                }
                let (unified, dtype) = self.unify(bound, args, &lname)?;
                bound = unified;
                let f = if lname == "greatest" {
                    Func::Greatest
                } else {
                    Func::Least
                };
                (f, dtype)
            }
            "concat" => {
                // NULLs are skipped: each argument is coalesce(text, '').
                let parts: Vec<Expr> = bound
                    .into_iter()
                    .filter(|a| !is_null_literal(a))
                    .map(|a| {
                        let text = as_text(a);
                        Expr::Case {
                            branches: vec![(
                                Expr::IsNull {
                                    expr: Box::new(text.clone()),
                                    negated: true,
                                },
                                text,
                            )],
                            else_result: Box::new(Expr::literal(Value::str(""), DataType::Str)),
                            dtype: DataType::Str,
                        }
                    })
                    .collect();
                if parts.is_empty() {
                    return Ok(Expr::literal(Value::str(""), DataType::Str));
                }
                return Ok(concat_call(parts));
            }
            "concat_ws" => {
                if bound.len() < 2 {
                    return Err(Error::plan_at(
                        "concat_ws() takes a separator and at least one string",
                        at,
                    ));
                }
                bound = bound.into_iter().map(as_text).collect();
                (Func::ConcatWs, DataType::Str)
            }
            "mod" => {
                arity(2..=2)?;
                return self.bind_binary(BinaryOp::Modulo, &args[0], &args[1], ctx, at);
            }
            "lcase" | "ucase" | "len" => {
                arity(1..=1)?;
                let a = bound.remove(0);
                bound.push(self.expect_type(a, DataType::Str, &args[0], &format!("{lname}()"))?);
                match lname.as_str() {
                    "lcase" => (Func::Lower, DataType::Str),
                    "ucase" => (Func::Upper, DataType::Str),
                    _ => (Func::Length, DataType::Int),
                }
            }
            name if StrFn::parse(name).is_some() => {
                let f = StrFn::parse(name).expect("matched");
                let (required, optional) = f.signature();
                arity(required.len()..=required.len() + optional.len())?;
                let types = required.iter().chain(optional);
                for ((a, &t), src) in bound.iter_mut().zip(types).zip(args) {
                    let e = std::mem::replace(a, Expr::literal(Value::Null, t));
                    *a = if t == DataType::Int && e.dtype() == DataType::Float {
                        // A count written as a float (1e6) is rounded, as
                        // DuckDB casts it; a float too large for an
                        // integer fails the cast.
                        Expr::Cast {
                            expr: Box::new(e),
                            dtype: DataType::Int,
                            try_cast: false,
                        }
                    } else {
                        self.expect_type(e, t, src, &format!("{lname}()"))?
                    };
                }
                (Func::Str(f), f.result_type())
            }
            "strftime" => {
                arity(2..=2)?;
                let ts = bound.remove(0);
                let ts = self.timestamp_arg(ts, &args[0], "strftime()")?;
                let format = match self.constant_format(
                    bound.remove(0),
                    &args[1],
                    "strftime()",
                    "'%Y-%m-%d %H:%M:%S'",
                )? {
                    Some(t) => StrftimeFormat::new(&t)
                        .map_err(|m| Error::plan_at(m, args[1].span.start))?,
                    None => return Ok(Expr::literal(Value::Null, DataType::Str)),
                };
                bound = vec![ts];
                (Func::Strftime(Arc::new(format)), DataType::Str)
            }
            "date_diff" | "datediff" => {
                arity(3..=3)?;
                let part = match fold(bound[0].clone()).as_literal() {
                    Some(Value::Str(p)) => DatePart::parse(p).filter(|p| {
                        matches!(
                            p,
                            DatePart::Year
                                | DatePart::Quarter
                                | DatePart::Month
                                | DatePart::Week
                                | DatePart::Day
                                | DatePart::Hour
                                | DatePart::Minute
                                | DatePart::Second
                                | DatePart::Millisecond
                                | DatePart::Microsecond
                        )
                    }),
                    _ => None,
                };
                let Some(part) = part else {
                    return Err(Error::plan_at(
                        format!(
                            "{lname}() needs a constant part: year, quarter, month, week, day, hour, minute, second, millisecond or microsecond"
                        ),
                        args[0].span.start,
                    ));
                };
                let end = bound.pop().expect("three");
                let start = bound.pop().expect("three");
                let what = format!("{lname}()");
                bound = vec![
                    self.timestamp_arg(start, &args[1], &what)?,
                    self.timestamp_arg(end, &args[2], &what)?,
                ];
                (Func::DateDiff(part), DataType::Int)
            }
            _ => {
                let names: Vec<String> = FUNCTION_NAMES.iter().map(|f| f.to_string()).collect();
                let hint = suggest(&lname, &names).replace('"', "");
                return Err(Error::plan_at(
                    format!("unknown function {name}(){hint}"),
                    at,
                ));
            }
        };
        Ok(Expr::Call {
            func,
            args: bound,
            dtype,
        })
    }

    /// The arguments of `coalesce`, `greatest` and the like converted to
    /// one type ([`unify_types`]).
    fn unify(
        &self,
        bound: Vec<Expr>,
        args: &[ast::Expr],
        fname: &str,
    ) -> Result<(Vec<Expr>, DataType)> {
        let items = bound
            .into_iter()
            .zip(args.iter().map(|a| a.span.start))
            .collect();
        unify_types(items, &format!("{fname}() arguments"))
    }

    /// A timestamp argument; a string literal is read as a timestamp, as in
    /// a comparison, and a date is its midnight (as DuckDB takes a date in
    /// `date_trunc`, `extract` and interval arithmetic).
    fn timestamp_arg(&self, e: Expr, src: &ast::Expr, what: &str) -> Result<Expr> {
        if e.dtype() == DataType::Date {
            return Ok(fold(to_timestamp(e)));
        }
        if let Some(Value::Str(text)) = e.as_literal() {
            return match parse_timestamp(text.trim()) {
                Some(t) => Ok(Expr::literal(Value::Timestamp(t), DataType::Timestamp)),
                None => Err(Error::plan_at(
                    format!("\"{text}\" is not a timestamp (expected YYYY-MM-DD[ HH:MM:SS])"),
                    src.span.start,
                )),
            };
        }
        self.expect_type(e, DataType::Timestamp, src, what)
    }

    /// `extract(part FROM e)` (and its shorthands) of a timestamp, a date
    /// (its midnight) or an interval: an interval's `epoch` is its length
    /// in seconds, its `day` the whole days, `hour`, `minute`, `second`
    /// (and `millisecond`, `microsecond`) the rest's parts, as DuckDB
    /// reads an interval without months.
    fn extract_of(&self, part: DatePart, e: Expr, src: &ast::Expr, what: &str) -> Result<Expr> {
        if e.dtype() != DataType::Interval {
            let ts = self.timestamp_arg(e, src, what)?;
            return Ok(extract_call(part, ts));
        }
        if !part.applies_to_intervals() {
            return Err(Error::plan_at(
                format!("{what} of an interval takes epoch, day, hour, minute, second, millisecond or microsecond, not {}", part.name()),
                src.span.start,
            ));
        }
        Ok(Expr::Call {
            func: Func::IntervalPart(part),
            args: vec![e],
            dtype: part.result_type(),
        })
    }

    fn numeric_arg(&self, e: &mut Expr, src: &ast::Expr, fname: &str) -> Result<DataType> {
        if is_null_literal(e) {
            *e = retype_null(e.clone(), DataType::Float);
        }
        let t = e.dtype();
        if !t.is_numeric() {
            return Err(Error::plan_at(
                format!(
                    "{fname}() needs a number, but \"{}\" is a {t}",
                    self.text(src)
                ),
                src.span.start,
            ));
        }
        Ok(t)
    }
}

/// `e` as text: strings as they are, a NULL as a NULL string, anything
/// else cast to text (as `||` and `concat` take their operands).
fn as_text(e: Expr) -> Expr {
    if is_null_literal(&e) {
        Expr::literal(Value::Null, DataType::Str)
    } else if e.dtype() == DataType::Str {
        e
    } else {
        fold(Expr::Cast {
            expr: Box::new(e),
            dtype: DataType::Str,
            try_cast: false,
        })
    }
}

/// Expressions (each with its position in the query) converted to one
/// type, as CASE's results and `coalesce`'s arguments are: NULL literals
/// adopt it, integers widen to floats; another mix is an error at the
/// first expression that breaks it ("`what` have different types").
fn unify_types(items: Vec<(Expr, usize)>, what: &str) -> Result<(Vec<Expr>, DataType)> {
    let mut dtype: Option<DataType> = None;
    for (e, pos) in &items {
        if is_null_literal(e) || e.dtype() == DataType::Null {
            continue;
        }
        let t = e.dtype();
        dtype = Some(match dtype {
            None => t,
            Some(d) if d == t => d,
            Some(d) if d.is_numeric() && t.is_numeric() => DataType::Float,
            Some(d) if d.is_temporal() && t.is_temporal() => DataType::Timestamp,
            Some(d) => {
                return Err(Error::plan_at(
                    format!("{what} have different types: {d} and {t}"),
                    *pos,
                ));
            }
        });
    }
    let dtype = dtype.unwrap_or(DataType::Int);
    let unified = items
        .into_iter()
        .map(|(e, _)| {
            if is_null_literal(&e) {
                Expr::literal(Value::Null, dtype)
            } else if e.dtype() != dtype {
                Expr::Cast {
                    expr: Box::new(e),
                    dtype,
                    try_cast: false,
                }
            } else {
                e
            }
        })
        .collect();
    Ok((unified, dtype))
}

/// `x` compared with each of `others` (IN, BETWEEN): a date is widened to
/// its midnight up front when one of them is a timestamp other than a
/// midnight constant, so that every
/// comparison sees the same left side (comparing one by one would widen it
/// halfway through the list).
fn widen_date(x: Expr, others: &[Expr]) -> Expr {
    if x.dtype() != DataType::Date {
        return x;
    }
    let timestamp = others.iter().any(|o| match fold(o.clone()).as_literal() {
        Some(Value::Timestamp(t)) => t.rem_euclid(MICROS_PER_DAY) != 0,
        Some(_) => false,
        None => o.dtype() == DataType::Timestamp,
    });
    if timestamp { to_timestamp(x) } else { x }
}

/// Arithmetic with lengths of time, when `l op r` is some (else `None`):
/// a timestamp (or a date, at its midnight) ± an interval is a timestamp;
/// timestamp − timestamp (either a date) an interval; intervals add and
/// subtract; an interval times or divided by an integer is an interval
/// (integer microseconds, the quotient truncated), by a float the float
/// product rounded to the microsecond. date − date stays whole days, an
/// integer, as in DuckDB.
fn interval_arith(op: BinaryOp, l: Expr, r: Expr) -> Option<Expr> {
    use BinaryOp::{Divide, Minus, Multiply, Plus};
    use DataType::{Date, Float, Int, Interval, Timestamp};
    let bin = |l: Expr, r: Expr, dtype| Expr::Binary {
        op,
        left: Box::new(l),
        right: Box::new(r),
        dtype,
    };
    let ts = |e: Expr| if e.dtype() == Date { fold(to_timestamp(e)) } else { e };
    let cast = |e: Expr, dtype| Expr::Cast {
        expr: Box::new(e),
        dtype,
        try_cast: false,
    };
    Some(match (l.dtype(), r.dtype(), op) {
        (Timestamp | Date, Interval, Plus | Minus) | (Interval, Timestamp | Date, Plus) => {
            bin(ts(l), ts(r), Timestamp)
        }
        (Timestamp, Timestamp | Date, Minus) | (Date, Timestamp, Minus) => {
            bin(ts(l), ts(r), Interval)
        }
        (Interval, Interval, Plus | Minus)
        | (Interval, Int, Multiply | Divide)
        | (Int, Interval, Multiply) => bin(l, r, Interval),
        (Interval, Float, Multiply | Divide) | (Float, Interval, Multiply) => {
            let float = |e: Expr| if e.dtype() == Interval { cast(e, Float) } else { e };
            cast(bin(float(l), float(r), Float), Interval)
        }
        _ => return None,
    })
}

/// A date widened to the timestamp of its midnight.
fn to_timestamp(e: Expr) -> Expr {
    if is_null_literal(&e) {
        return Expr::literal(Value::Null, DataType::Timestamp);
    }
    Expr::Cast {
        expr: Box::new(e),
        dtype: DataType::Timestamp,
        try_cast: false,
    }
}

fn at_least_one(fname: &str, at: usize) -> Error {
    Error::plan_at(format!("{fname}() takes at least one argument"), at)
}

/// [`Func::Concat`] of string arguments.
fn concat_call(args: Vec<Expr>) -> Expr {
    Expr::Call {
        func: Func::Concat,
        args,
        dtype: DataType::Str,
    }
}

/// `extract(part FROM ts)` bound: `year` as [`Func::Year`], which the
/// executor specializes, every other part as [`Func::Extract`].
fn extract_call(part: DatePart, ts: Expr) -> Expr {
    let func = match part {
        DatePart::Year => Func::Year,
        part => Func::Extract(part),
    };
    Expr::Call {
        func,
        args: vec![ts],
        dtype: part.result_type(),
    }
}

fn unknown_part(name: &str) -> String {
    format!(
        "unknown date part \"{name}\" (use year, isoyear, quarter, month, week, day, dow, isodow, doy, hour, minute, second, millisecond, microsecond or epoch)"
    )
}

fn describe_arity(n: &std::ops::RangeInclusive<usize>) -> String {
    if n.start() == n.end() {
        n.start().to_string()
    } else {
        format!("{} to {}", n.start(), n.end())
    }
}

/// ` (did you mean "x"?)` for the closest names by edit distance, or "".
pub(crate) fn suggest(name: &str, candidates: &[String]) -> String {
    let lname = name.to_ascii_lowercase();
    let mut scored: Vec<(f64, &String)> = candidates
        .iter()
        .map(|c| {
            let lc = c.to_ascii_lowercase();
            let mut score = strsim::jaro_winkler(&lname, &lc);
            if lc.contains(&lname) || lname.contains(&lc) {
                score += 0.2;
            }
            (score, c)
        })
        .filter(|(s, _)| *s > 0.7)
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0));
    let best: Vec<String> = scored
        .iter()
        .take(3)
        .map(|(_, c)| format!("\"{c}\""))
        .collect();
    match best.len() {
        0 => String::new(),
        1 => format!(" (did you mean {}?)", best[0]),
        _ => format!(" (did you mean one of {}?)", best.join(", ")),
    }
}
