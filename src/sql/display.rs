//! SQL text for the AST, and span-insensitive comparison.
//!
//! `Display` prints keywords upper-case, re-escapes strings, and
//! double-quotes identifiers that are reserved words or not of the form
//! `[A-Za-z_][A-Za-z0-9_]*`. Parsing the printed text gives back an equal tree
//! apart from spans (see [`eq_ignoring_spans`]) for every tree the parser
//! produces.
//!
//! Compound expressions (binary operators, `NOT`, `IS NULL`, `IN`,
//! `BETWEEN`, `LIKE`) are parenthesized, except that a left operand at the
//! same precedence level as its parent is printed bare, since the parser
//! associates to the left: `((a - b) - c)` prints as `(a - b - c)`, while
//! `a - (b - c)` prints as `(a - (b - c))`. Likewise `NOT NOT a` prints as
//! `(NOT NOT a)`, `- -a` as `- -a`, and casts as postfix `x::T`. This keeps
//! the printed nesting no deeper than needed, so long chains print as text
//! the parser's nesting limits still accept. An interval prints in the
//! largest unit that divides it exactly.

use std::fmt::{self, Display, Formatter};

use super::ast::{
    BinaryOp, Cte, Describe, Expr, ExprKind, FrameBound, FromItem, Ident, JoinConstraint, JoinKind,
    Literal, OrderByItem, Query, Select, SelectItem, StarOptions, SetExpr, Statement, TableArg, TableArgValue,
    TableRef, TypeName, UnaryOp, WindowSpec,
};
use super::parser::is_reserved;

impl Display for Statement {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Statement::Select(select) => write!(f, "{select}"),
            Statement::Query(query) => write!(f, "{query}"),
            Statement::Explain(query) => write!(f, "EXPLAIN {query}"),
            Statement::ExplainAnalyze(query) => write!(f, "EXPLAIN ANALYZE {query}"),
            Statement::Describe(d) => match d {
                Describe::Table(table) => write!(f, "DESCRIBE {table}"),
                Describe::Query(select) => write!(f, "DESCRIBE {select}"),
            },
            Statement::ShowTables => f.write_str("SHOW TABLES"),
            Statement::Summarize(table) => write!(f, "SUMMARIZE {table}"),
            Statement::CreateTableAs {
                name,
                query,
                replace,
            } => {
                let or = if *replace { "OR REPLACE " } else { "" };
                write!(f, "CREATE {or}TABLE {name} AS {query}")
            }
            Statement::DropTable {
                name,
                if_exists,
                file,
            } => {
                let ie = if *if_exists { "IF EXISTS " } else { "" };
                if *file {
                    write!(f, "DROP TABLE {ie}'{}'", name.name.replace('\'', "''"))
                } else {
                    write!(f, "DROP TABLE {ie}{name}")
                }
            }
        }
    }
}

impl Display for TableRef {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            TableRef::Named(name) => write!(f, "{name}"),
            TableRef::File { path, .. } => write!(f, "{}", Literal::String(path.clone())),
            TableRef::Function { name, args, .. } => {
                write!(f, "{name}(")?;
                comma_separated(f, args)?;
                f.write_str(")")
            }
        }
    }
}

impl Display for TableArg {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        if let Some(name) = &self.name {
            write!(f, "{name} => ")?;
        }
        match &self.value {
            TableArgValue::Expr(e) => write!(f, "{e}"),
            TableArgValue::List { items, .. } => {
                f.write_str("[")?;
                comma_separated(f, items)?;
                f.write_str("]")
            }
        }
    }
}

/// Writes `items` separated by `, `.
fn comma_separated<T: Display>(f: &mut Formatter<'_>, items: &[T]) -> fmt::Result {
    for (n, item) in items.iter().enumerate() {
        if n > 0 {
            f.write_str(", ")?;
        }
        write!(f, "{item}")?;
    }
    Ok(())
}

impl Display for Query {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        if !self.ctes.is_empty() {
            f.write_str("WITH ")?;
            comma_separated(f, &self.ctes)?;
            f.write_str(" ")?;
        }
        write!(f, "{}", self.body)?;
        write_tail(f, &self.order_by, self.limit, self.offset)
    }
}

/// ` ORDER BY … LIMIT n OFFSET m`, each part when present.
fn write_tail(
    f: &mut Formatter<'_>,
    order_by: &[OrderByItem],
    limit: Option<i64>,
    offset: Option<u64>,
) -> fmt::Result {
    if !order_by.is_empty() {
        f.write_str(" ORDER BY ")?;
        comma_separated(f, order_by)?;
    }
    if let Some(limit) = limit {
        write!(f, " LIMIT {limit}")?;
    }
    if let Some(offset) = offset {
        write!(f, " OFFSET {offset}")?;
    }
    Ok(())
}

impl Display for Cte {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "{} AS ({})", self.name, self.query)
    }
}

impl Display for SetExpr {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            SetExpr::Select(select) => write!(f, "{select}"),
            SetExpr::Operation {
                op,
                all,
                left,
                right,
            } => {
                let all = if *all { " ALL" } else { "" };
                write!(f, "{left} {}{all} {right}", op.keyword())
            }
            SetExpr::Values { rows, .. } => {
                f.write_str("VALUES ")?;
                for (n, row) in rows.iter().enumerate() {
                    if n > 0 {
                        f.write_str(", ")?;
                    }
                    f.write_str("(")?;
                    for (m, e) in row.iter().enumerate() {
                        if m > 0 {
                            f.write_str(", ")?;
                        }
                        write!(f, "{e}")?;
                    }
                    f.write_str(")")?;
                }
                Ok(())
            }
        }
    }
}

impl Display for FromItem {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            FromItem::Table { table, alias } => {
                write!(f, "{table}")?;
                if let Some(alias) = alias {
                    write!(f, " AS {alias}")?;
                }
                Ok(())
            }
            FromItem::Subquery {
                query,
                alias,
                columns,
                ..
            } => {
                write!(f, "({query})")?;
                if let Some(alias) = alias {
                    write!(f, " AS {alias}")?;
                }
                if !columns.is_empty() {
                    f.write_str(" (")?;
                    comma_separated(f, columns)?;
                    f.write_str(")")?;
                }
                Ok(())
            }
            FromItem::Join(join) => {
                let kind = match join.kind {
                    JoinKind::Comma => {
                        return write!(f, "{}, {}", join.left, join.right);
                    }
                    JoinKind::Inner => "JOIN",
                    JoinKind::Left => "LEFT JOIN",
                    JoinKind::Right => "RIGHT JOIN",
                    JoinKind::Full => "FULL JOIN",
                    JoinKind::Cross => "CROSS JOIN",
                };
                write!(f, "{} {kind} {}", join.left, join.right)?;
                match &join.constraint {
                    JoinConstraint::On(e) => write!(f, " ON {e}"),
                    JoinConstraint::Using(names) => {
                        f.write_str(" USING (")?;
                        comma_separated(f, names)?;
                        f.write_str(")")
                    }
                    JoinConstraint::None => Ok(()),
                }
            }
        }
    }
}

impl Display for Select {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str("SELECT ")?;
        if self.distinct {
            f.write_str("DISTINCT ")?;
        }
        comma_separated(f, &self.projection)?;
        if let Some(from) = &self.from {
            write!(f, " FROM {from}")?;
        }
        if let Some(selection) = &self.selection {
            write!(f, " WHERE {selection}")?;
        }
        if self.group_by_all {
            f.write_str(" GROUP BY ALL")?;
        } else if !self.group_by.is_empty() {
            f.write_str(" GROUP BY ")?;
            comma_separated(f, &self.group_by)?;
        }
        if let Some(having) = &self.having {
            write!(f, " HAVING {having}")?;
        }
        for (i, w) in self.windows.iter().enumerate() {
            f.write_str(if i == 0 { " WINDOW " } else { ", " })?;
            write!(f, "{} AS (", w.name)?;
            write_window_body(f, &w.spec)?;
            f.write_str(")")?;
        }
        if let Some(qualify) = &self.qualify {
            write!(f, " QUALIFY {qualify}")?;
        }
        write_tail(f, &self.order_by, self.limit, self.offset)
    }
}

/// A window's parts inside its parentheses: `[name] [PARTITION BY …]
/// [ORDER BY …] [frame]`.
fn write_window_body(f: &mut Formatter<'_>, w: &WindowSpec) -> fmt::Result {
    let mut sep = "";
    if let Some(base) = &w.base {
        write!(f, "{base}")?;
        sep = " ";
    }
    if !w.partition_by.is_empty() {
        write!(f, "{sep}PARTITION BY ")?;
        comma_separated(f, &w.partition_by)?;
        sep = " ";
    }
    if !w.order_by.is_empty() {
        write!(f, "{sep}ORDER BY ")?;
        comma_separated(f, &w.order_by)?;
        sep = " ";
    }
    if let Some(frame) = &w.frame {
        let bound = |b: FrameBound| match b {
            FrameBound::UnboundedPreceding => "UNBOUNDED PRECEDING".to_string(),
            FrameBound::Preceding(n) => format!("{n} PRECEDING"),
            FrameBound::CurrentRow => "CURRENT ROW".to_string(),
            FrameBound::Following(n) => format!("{n} FOLLOWING"),
            FrameBound::UnboundedFollowing => "UNBOUNDED FOLLOWING".to_string(),
        };
        write!(
            f,
            "{sep}{} BETWEEN {} AND {}",
            if frame.rows { "ROWS" } else { "RANGE" },
            bound(frame.start),
            bound(frame.end)
        )?;
    }
    Ok(())
}

impl Display for StarOptions {
    /// ` EXCLUDE (…) REPLACE (…)`, with a leading space; nothing when
    /// empty.
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        if !self.exclude.is_empty() {
            f.write_str(" EXCLUDE (")?;
            comma_separated(f, &self.exclude)?;
            f.write_str(")")?;
        }
        if !self.replace.is_empty() {
            f.write_str(" REPLACE (")?;
            for (i, (e, name)) in self.replace.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                write!(f, "{e} AS {name}")?;
            }
            f.write_str(")")?;
        }
        Ok(())
    }
}

impl Display for SelectItem {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            SelectItem::Wildcard(_, options) => write!(f, "*{options}"),
            SelectItem::QualifiedWildcard { table, options, .. } => {
                write!(f, "{table}.*{options}")
            }
            SelectItem::Expr { expr, alias: None } => write!(f, "{expr}"),
            SelectItem::Expr {
                expr,
                alias: Some(alias),
            } => write!(f, "{expr} AS {alias}"),
        }
    }
}

impl Display for OrderByItem {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.expr)?;
        if self.desc {
            f.write_str(" DESC")?;
        }
        match self.nulls_first {
            Some(true) => f.write_str(" NULLS FIRST"),
            Some(false) => f.write_str(" NULLS LAST"),
            None => Ok(()),
        }
    }
}

/// Writes `name` as an identifier, double-quoted when it is reserved or not
/// a simple `[A-Za-z_][A-Za-z0-9_]*` name.
fn write_name(f: &mut Formatter<'_>, name: &str) -> fmt::Result {
    let simple = name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !is_reserved(name);
    if simple {
        f.write_str(name)
    } else {
        write!(f, "\"{}\"", name.replace('"', "\"\""))
    }
}

impl Display for Ident {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write_name(f, &self.name)
    }
}

impl Display for UnaryOp {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            UnaryOp::Neg => "-",
            UnaryOp::Not => "NOT ",
        })
    }
}

impl Display for BinaryOp {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str(self.symbol())
    }
}

impl Display for TypeName {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TypeName::Int => "BIGINT",
            TypeName::Float => "DOUBLE",
            TypeName::Timestamp => "TIMESTAMP",
            TypeName::Date => "DATE",
            TypeName::Interval => "INTERVAL",
            TypeName::Str => "VARCHAR",
            TypeName::Bool => "BOOLEAN",
        })
    }
}

impl Display for Literal {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Literal::Null => f.write_str("NULL"),
            Literal::Bool(true) => f.write_str("TRUE"),
            Literal::Bool(false) => f.write_str("FALSE"),
            // Parenthesized so that `-` before it never forms a `--` comment.
            Literal::Int(n) if *n < 0 => write!(f, "({n})"),
            Literal::Int(n) => write!(f, "{n}"),
            // `{:?}` is the shortest text that reads back to the same f64 and
            // always has a `.` or an exponent, so it parses as a float again.
            Literal::Float(x) if x.is_finite() && x.is_sign_negative() => write!(f, "({x:?})"),
            Literal::Float(x) if x.is_finite() => write!(f, "{x:?}"),
            Literal::Float(x) => write!(f, "'{x}'::DOUBLE"),
            Literal::String(s) => write!(f, "'{}'", s.replace('\'', "''")),
            Literal::Interval(micros) => write_interval(f, *micros),
            Literal::Months(n) => write!(f, "INTERVAL '{n}' MONTH"),
        }
    }
}

/// `INTERVAL 'n unit'` in the largest unit that divides `micros` exactly.
fn write_interval(f: &mut Formatter<'_>, micros: i64) -> fmt::Result {
    const UNITS: [(i64, &str); 6] = [
        (86_400_000_000, "day"),
        (3_600_000_000, "hour"),
        (60_000_000, "minute"),
        (1_000_000, "second"),
        (1_000, "millisecond"),
        (1, "microsecond"),
    ];
    let (size, unit) = UNITS
        .into_iter()
        .find(|(size, _)| micros % size == 0)
        .unwrap_or((1, "microsecond"));
    let n = micros / size;
    let plural = if n == 1 || n == -1 { "" } else { "s" };
    write!(f, "INTERVAL '{n} {unit}{plural}'")
}

/// The precedence level of a binary-like node (higher binds tighter), for
/// printing left-associative chains without nested parentheses.
fn precedence(e: &Expr) -> Option<u8> {
    match &e.kind {
        ExprKind::Binary { op, .. } => Some(match op {
            BinaryOp::Or => 1,
            BinaryOp::And => 2,
            BinaryOp::Concat => 4,
            BinaryOp::Plus | BinaryOp::Minus => 5,
            BinaryOp::Multiply | BinaryOp::Divide | BinaryOp::Modulo => 6,
            _ => COMPARISON,
        }),
        ExprKind::IsNull { .. }
        | ExprKind::InList { .. }
        | ExprKind::Between { .. }
        | ExprKind::Like { .. }
        | ExprKind::InSubquery { .. }
        | ExprKind::Quantified { .. } => Some(COMPARISON),
        _ => None,
    }
}

/// The level of comparisons, `IS NULL`, `IN`, `BETWEEN` and `LIKE`, which
/// the parser chains left-associatively.
const COMPARISON: u8 = 3;

/// Writes `e`; with `bare`, without the outer parentheses of a compound
/// node (used where the parser's associativity makes them redundant).
fn write_expr(f: &mut Formatter<'_>, e: &Expr, bare: bool) -> fmt::Result {
    let (open, close) = if bare { ("", "") } else { ("(", ")") };
    let not = |negated: bool| if negated { " NOT" } else { "" };
    // The tested operand of a comparison-level node, or the left operand of
    // a binary node, at the same level as its parent.
    let left = |f: &mut Formatter<'_>, child: &Expr| {
        write_expr(f, child, precedence(child) == precedence(e))
    };
    match &e.kind {
        ExprKind::Column(name) => write_name(f, name),
        ExprKind::QualifiedColumn { table, column } => {
            write_name(f, table)?;
            f.write_str(".")?;
            write_name(f, column)
        }
        ExprKind::Subquery(query) => write!(f, "({query})"),
        ExprKind::Exists(query) => write!(f, "EXISTS ({query})"),
        ExprKind::InSubquery {
            expr,
            query,
            negated,
        } => {
            f.write_str(open)?;
            left(f, expr)?;
            write!(f, "{} IN ({query}){close}", not(*negated))
        }
        ExprKind::Quantified {
            expr,
            op,
            all,
            query,
        } => {
            f.write_str(open)?;
            left(f, expr)?;
            let quantifier = if *all { "ALL" } else { "ANY" };
            write!(f, " {} {quantifier} ({query}){close}", op.symbol())
        }
        ExprKind::Literal(literal) => write!(f, "{literal}"),
        ExprKind::Unary {
            op: UnaryOp::Neg,
            expr,
        } => {
            // `- -x`, never `--x` (a comment).
            let space = matches!(
                expr.kind,
                ExprKind::Unary {
                    op: UnaryOp::Neg,
                    ..
                }
            );
            write!(f, "-{}{expr}", if space { " " } else { "" })
        }
        ExprKind::Unary {
            op: UnaryOp::Not,
            expr,
        } => {
            f.write_str(open)?;
            f.write_str("NOT ")?;
            let chained = matches!(
                expr.kind,
                ExprKind::Unary {
                    op: UnaryOp::Not,
                    ..
                }
            );
            write_expr(f, expr, chained)?;
            f.write_str(close)
        }
        ExprKind::Binary { op, left: l, right } => {
            f.write_str(open)?;
            left(f, l)?;
            write!(f, " {op} {right}{close}")
        }
        ExprKind::IsNull { expr, negated } => {
            f.write_str(open)?;
            left(f, expr)?;
            write!(f, " IS{} NULL{close}", not(*negated))
        }
        ExprKind::InList {
            expr,
            list,
            negated,
        } => {
            f.write_str(open)?;
            left(f, expr)?;
            write!(f, "{} IN (", not(*negated))?;
            comma_separated(f, list)?;
            write!(f, "){close}")
        }
        ExprKind::Between {
            expr,
            low,
            high,
            negated,
        } => {
            f.write_str(open)?;
            left(f, expr)?;
            write!(f, "{} BETWEEN {low} AND {high}{close}", not(*negated))
        }
        ExprKind::Like {
            expr,
            pattern,
            negated,
            case_insensitive,
        } => {
            f.write_str(open)?;
            left(f, expr)?;
            let like = if *case_insensitive { "ILIKE" } else { "LIKE" };
            write!(f, "{} {like} {pattern}{close}", not(*negated))
        }
        ExprKind::Case {
            operand,
            branches,
            else_result,
        } => {
            f.write_str("CASE")?;
            if let Some(operand) = operand {
                write!(f, " {operand}")?;
            }
            for (when, then) in branches {
                write!(f, " WHEN {when} THEN {then}")?;
            }
            if let Some(else_result) = else_result {
                write!(f, " ELSE {else_result}")?;
            }
            f.write_str(" END")
        }
        ExprKind::Function {
            name,
            args,
            star,
            distinct,
            filter,
            order_by,
            within_group,
        } => {
            write_name(f, name)?;
            f.write_str("(")?;
            if *star {
                f.write_str("*")?;
            }
            if *distinct {
                f.write_str("DISTINCT ")?;
            }
            comma_separated(f, args)?;
            if !order_by.is_empty() && !*within_group {
                f.write_str(" ORDER BY ")?;
                comma_separated(f, order_by)?;
            }
            f.write_str(")")?;
            if *within_group {
                f.write_str(" WITHIN GROUP (ORDER BY ")?;
                comma_separated(f, order_by)?;
                f.write_str(")")?;
            }
            match filter {
                Some(p) => write!(f, " FILTER (WHERE {p})"),
                None => Ok(()),
            }
        }
        ExprKind::Window { call, window } => {
            write!(f, "{call} OVER ")?;
            let bare = window.partition_by.is_empty()
                && window.order_by.is_empty()
                && window.frame.is_none();
            match &window.base {
                Some(base) if bare => write!(f, "{base}"),
                _ => {
                    f.write_str("(")?;
                    write_window_body(f, window)?;
                    f.write_str(")")
                }
            }
        }
        ExprKind::Extract { field, expr } => write!(f, "EXTRACT({field} FROM {expr})"),
        ExprKind::Cast {
            expr,
            to,
            try_cast: true,
        } => write!(f, "TRY_CAST({expr} AS {to})"),
        ExprKind::Cast { expr, to, .. } => {
            // `::` binds tighter than unary minus: `(-x)::t`.
            if matches!(
                expr.kind,
                ExprKind::Unary {
                    op: UnaryOp::Neg,
                    ..
                }
            ) {
                write!(f, "({expr})::{to}")
            } else {
                write!(f, "{expr}::{to}")
            }
        }
    }
}

impl Display for Expr {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write_expr(f, self, false)
    }
}

/// True when `a` and `b` are the same statement apart from spans (where
/// each piece was in the query text).
#[cfg(any(test, feature = "internals"))]
pub fn eq_ignoring_spans(a: &Statement, b: &Statement) -> bool {
    let (mut a, mut b) = (a.clone(), b.clone());
    clear_spans(&mut a);
    clear_spans(&mut b);
    a == b
}

/// Sets every span in `statement` to `0..0`.
#[cfg(any(test, feature = "internals"))]
pub fn clear_spans(statement: &mut Statement) {
    match statement {
        Statement::Select(select) => clear_select(select),
        Statement::Query(query) | Statement::Explain(query) | Statement::ExplainAnalyze(query) => {
            clear_query(query)
        }
        Statement::Describe(d) => match d {
            Describe::Table(table) => clear_table(table),
            Describe::Query(query) => clear_query(query),
        },
        Statement::ShowTables => {}
        Statement::Summarize(table) => clear_table(table),
        Statement::CreateTableAs { name, query, .. } => {
            name.span = super::ast::Span::default();
            clear_query(query);
        }
        Statement::DropTable { name, .. } => name.span = super::ast::Span::default(),
    }
}

#[cfg(any(test, feature = "internals"))]
fn clear_query(query: &mut Query) {
    query.span = super::ast::Span::default();
    for cte in &mut query.ctes {
        cte.name.span = super::ast::Span::default();
        clear_query(&mut cte.query);
    }
    clear_set_expr(&mut query.body);
    for o in &mut query.order_by {
        clear_expr(&mut o.expr);
    }
}

#[cfg(any(test, feature = "internals"))]
fn clear_set_expr(body: &mut SetExpr) {
    match body {
        SetExpr::Select(select) => clear_select(select),
        SetExpr::Operation { left, right, .. } => {
            clear_set_expr(left);
            clear_set_expr(right);
        }
        SetExpr::Values { rows, span } => {
            *span = super::ast::Span::default();
            rows.iter_mut().flatten().for_each(clear_expr);
        }
    }
}

#[cfg(any(test, feature = "internals"))]
fn clear_from(from: &mut FromItem) {
    match from {
        FromItem::Table { table, alias } => {
            clear_table(table);
            if let Some(alias) = alias {
                alias.span = super::ast::Span::default();
            }
        }
        FromItem::Subquery {
            query,
            alias,
            columns,
            span,
        } => {
            for c in columns {
                c.span = super::ast::Span::default();
            }
            clear_query(query);
            if let Some(alias) = alias {
                alias.span = super::ast::Span::default();
            }
            *span = super::ast::Span::default();
        }
        FromItem::Join(join) => {
            clear_from(&mut join.left);
            clear_from(&mut join.right);
            join.span = super::ast::Span::default();
            match &mut join.constraint {
                JoinConstraint::On(e) => clear_expr(e),
                JoinConstraint::Using(names) => {
                    for n in names {
                        n.span = super::ast::Span::default();
                    }
                }
                JoinConstraint::None => {}
            }
        }
    }
}

#[cfg(any(test, feature = "internals"))]
fn clear_star(options: &mut StarOptions) {
    for id in &mut options.exclude {
        id.span = super::ast::Span::default();
    }
    for (e, id) in &mut options.replace {
        clear_expr(e);
        id.span = super::ast::Span::default();
    }
}

#[cfg(any(test, feature = "internals"))]
fn clear_select(select: &mut Select) {
    select.span = super::ast::Span::default();
    for item in &mut select.projection {
        match item {
            SelectItem::Wildcard(span, options) => {
                *span = super::ast::Span::default();
                clear_star(options);
            }
            SelectItem::QualifiedWildcard {
                table,
                span,
                options,
            } => {
                table.span = super::ast::Span::default();
                *span = super::ast::Span::default();
                clear_star(options);
            }
            SelectItem::Expr { expr, alias } => {
                clear_expr(expr);
                if let Some(alias) = alias {
                    alias.span = super::ast::Span::default();
                }
            }
        }
    }
    if let Some(from) = &mut select.from {
        clear_from(from);
    }
    let order_keys = select.order_by.iter_mut().map(|o| &mut o.expr);
    let exprs = (select.selection.iter_mut())
        .chain(select.having.iter_mut())
        .chain(select.qualify.iter_mut())
        .chain(select.group_by.iter_mut())
        .chain(order_keys);
    for expr in exprs {
        clear_expr(expr);
    }
    for w in &mut select.windows {
        w.name.span = super::ast::Span::default();
        clear_window(&mut w.spec);
    }
}

#[cfg(any(test, feature = "internals"))]
fn clear_table(table: &mut TableRef) {
    match table {
        TableRef::Named(name) => name.span = super::ast::Span::default(),
        TableRef::File { span, .. } => *span = super::ast::Span::default(),
        TableRef::Function { name, args, span } => {
            name.span = super::ast::Span::default();
            *span = super::ast::Span::default();
            for arg in args {
                if let Some(name) = &mut arg.name {
                    name.span = super::ast::Span::default();
                }
                match &mut arg.value {
                    TableArgValue::Expr(e) => clear_expr(e),
                    TableArgValue::List { items, span } => {
                        *span = super::ast::Span::default();
                        items.iter_mut().for_each(clear_expr);
                    }
                }
            }
        }
    }
}

#[cfg(any(test, feature = "internals"))]
fn clear_expr(e: &mut Expr) {
    e.span = super::ast::Span::default();
    match &mut e.kind {
        ExprKind::Column(_) | ExprKind::Literal(_) | ExprKind::QualifiedColumn { .. } => {}
        ExprKind::Subquery(query) | ExprKind::Exists(query) => clear_query(query),
        ExprKind::InSubquery { expr, query, .. } | ExprKind::Quantified { expr, query, .. } => {
            clear_expr(expr);
            clear_query(query);
        }
        ExprKind::Unary { expr, .. }
        | ExprKind::IsNull { expr, .. }
        | ExprKind::Cast { expr, .. } => clear_expr(expr),
        ExprKind::Extract { field, expr } => {
            field.span = super::ast::Span::default();
            clear_expr(expr);
        }
        ExprKind::Binary { left, right, .. } => {
            clear_expr(left);
            clear_expr(right);
        }
        ExprKind::InList { expr, list, .. } => {
            clear_expr(expr);
            list.iter_mut().for_each(clear_expr);
        }
        ExprKind::Between {
            expr, low, high, ..
        } => {
            clear_expr(expr);
            clear_expr(low);
            clear_expr(high);
        }
        ExprKind::Like { expr, pattern, .. } => {
            clear_expr(expr);
            clear_expr(pattern);
        }
        ExprKind::Case {
            operand,
            branches,
            else_result,
        } => {
            if let Some(operand) = operand {
                clear_expr(operand);
            }
            for (when, then) in branches {
                clear_expr(when);
                clear_expr(then);
            }
            if let Some(else_result) = else_result {
                clear_expr(else_result);
            }
        }
        ExprKind::Function {
            args,
            filter,
            order_by,
            ..
        } => {
            args.iter_mut().for_each(clear_expr);
            filter.iter_mut().for_each(|p| clear_expr(p));
            order_by.iter_mut().for_each(|o| clear_expr(&mut o.expr));
        }
        ExprKind::Window { call, window } => {
            clear_expr(call);
            clear_window(window);
        }
    }
}

#[cfg(any(test, feature = "internals"))]
fn clear_window(w: &mut WindowSpec) {
    w.span = super::ast::Span::default();
    if let Some(base) = &mut w.base {
        base.span = super::ast::Span::default();
    }
    w.partition_by.iter_mut().for_each(clear_expr);
    for o in &mut w.order_by {
        clear_expr(&mut o.expr);
    }
    if let Some(frame) = &mut w.frame {
        frame.span = super::ast::Span::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::ast::Span;
    use crate::sql::parse;

    fn show(sql: &str) -> String {
        parse(sql)
            .unwrap_or_else(|e| panic!("{sql:?}: {e}"))
            .to_string()
    }

    /// The first select item's expression of `SELECT {text}`.
    fn first_expr(text: &str) -> Expr {
        match parse(&format!("SELECT {text}")) {
            Ok(Statement::Select(s)) => match s.projection.into_iter().next() {
                Some(SelectItem::Expr { expr, .. }) => expr,
                other => panic!("{text:?}: {other:?}"),
            },
            other => panic!("{text:?}: {other:?}"),
        }
    }

    /// True when some `start: n` or `end: n` in a Debug dump is not 0.
    fn has_nonzero_span(debug: &str) -> bool {
        ["start: ", "end: "].iter().any(|field| {
            debug.match_indices(field).any(|(at, _)| {
                let value = &debug[at + field.len()..];
                let digits = value.bytes().take_while(u8::is_ascii_digit).count();
                &value[..digits] != "0"
            })
        })
    }

    #[test]
    fn literals_print_as_sql() {
        let cases = [
            (Literal::Null, "NULL"),
            (Literal::Bool(true), "TRUE"),
            (Literal::Int(7), "7"),
            (Literal::Int(-5), "(-5)"),
            (Literal::Int(i64::MIN), "(-9223372036854775808)"),
            (Literal::Float(2.0), "2.0"),
            (Literal::Float(0.1), "0.1"),
            (Literal::Float(1e20), "1e20"),
            (Literal::Float(1.5e-7), "1.5e-7"),
            (Literal::Float(-1.5), "(-1.5)"),
            (Literal::Float(f64::NAN), "'NaN'::DOUBLE"),
            (Literal::String("it's".into()), "'it''s'"),
            (Literal::String("日本\n".into()), "'日本\n'"),
            (Literal::Interval(0), "INTERVAL '0 days'"),
            (Literal::Interval(86_400_000_000), "INTERVAL '1 day'"),
            (Literal::Interval(-7_200_000_000), "INTERVAL '-2 hours'"),
            (Literal::Interval(5_400_000_000), "INTERVAL '90 minutes'"),
            (Literal::Interval(1_500_000), "INTERVAL '1500 milliseconds'"),
            (Literal::Interval(1), "INTERVAL '1 microsecond'"),
            (
                Literal::Interval(i64::MIN),
                "INTERVAL '-9223372036854775808 microseconds'",
            ),
        ];
        for (literal, text) in cases {
            assert_eq!(literal.to_string(), text, "{literal:?}");
        }
    }

    #[test]
    fn literals_read_back_equal() {
        // Negative numbers other than i64::MIN are never parsed as literals
        // (`-5` is a negation), so they are not expected to read back equal.
        let literals = [
            Literal::Int(0),
            Literal::Int(i64::MAX),
            Literal::Int(i64::MIN),
            Literal::Float(0.0),
            Literal::Float(1e20),
            Literal::Float(123.456),
            Literal::Float(f64::MAX),
            Literal::Float(f64::MIN_POSITIVE),
            Literal::String("a'b\"c".into()),
            Literal::Interval(i64::MIN),
            Literal::Interval(i64::MAX),
            Literal::Interval(-1),
            Literal::Interval(604_800_000_000),
        ];
        for literal in literals {
            let text = literal.to_string();
            assert_eq!(
                first_expr(&text).kind,
                ExprKind::Literal(literal),
                "{text:?}"
            );
        }
    }

    #[test]
    fn identifiers_are_quoted_when_needed() {
        let cases = [
            ("plain_1", "plain_1"),
            ("MixedCase", "MixedCase"),
            ("_x", "_x"),
            ("select", "\"select\""),
            ("Nulls", "\"Nulls\""),
            ("a b", "\"a b\""),
            ("x\"y", "\"x\"\"y\""),
            ("1abc", "\"1abc\""),
            ("Übung", "\"Übung\""),
        ];
        for (name, text) in cases {
            let ident = Ident {
                name: name.into(),
                span: Span::default(),
            };
            assert_eq!(ident.to_string(), text);
            let column = Expr {
                kind: ExprKind::Column(name.into()),
                span: Span::default(),
            };
            assert_eq!(column.to_string(), text);
            assert_eq!(
                first_expr(text).kind,
                ExprKind::Column(name.into()),
                "{text:?}"
            );
        }
    }

    #[test]
    fn statements_print_every_clause() {
        let cases = [
            ("select a from t", "SELECT a FROM t"),
            ("SELECT 1 + 2;", "SELECT (1 + 2)"),
            (
                "explain select * from t limit -10",
                "EXPLAIN SELECT * FROM t LIMIT -10",
            ),
            (
                "SELECT a x, b AS \"from\" FROM \"My T\" WHERE NOT a GROUP BY 1, b HAVING count(*) > 1 \
                 ORDER BY 1 desc nulls first, b ASC NULLS LAST, c LIMIT 5 OFFSET 10",
                "SELECT a AS x, b AS \"from\" FROM \"My T\" WHERE (NOT a) GROUP BY 1, b \
                 HAVING (count(*) > 1) ORDER BY 1 DESC NULLS FIRST, b NULLS LAST, c LIMIT 5 OFFSET 10",
            ),
            (
                "SELECT date_trunc('hour', time), count(DISTINCT name) FROM readings",
                "SELECT date_trunc('hour', time), count(DISTINCT name) FROM readings",
            ),
            (
                "SELECT CASE WHEN x IS NOT NULL THEN x::int ELSE -1 END",
                "SELECT CASE WHEN (x IS NOT NULL) THEN x::BIGINT ELSE -1 END",
            ),
            (
                "select string_agg(s, ',' order by k desc nulls first) filter (where k > 1), \
                 percentile_disc(0.5) within group (order by x desc) from t",
                "SELECT string_agg(s, ',' ORDER BY k DESC NULLS FIRST) FILTER (WHERE (k > 1)), \
                 percentile_disc(0.5) WITHIN GROUP (ORDER BY x DESC) FROM t",
            ),
            (
                "select * exclude a, t.* exclude (b, c) replace (d * 2 as d) from t",
                "SELECT * EXCLUDE (a), t.* EXCLUDE (b, c) REPLACE ((d * 2) AS d) FROM t",
            ),
        ];
        for (sql, text) in cases {
            assert_eq!(show(sql), text, "{sql:?}");
            assert_eq!(show(text), text, "{text:?} is not a fixed point");
        }
    }

    #[test]
    fn comparison_ignores_only_spans() {
        let a = parse("SELECT a+b, f(x) FROM t WHERE c IN (1,2) ORDER BY 1").unwrap();
        let b = parse("select  a + b , f( x )\nfrom t where c in ( 1 , 2 ) order by 1 ;").unwrap();
        let c = parse("SELECT a-b, f(x) FROM t WHERE c IN (1,2) ORDER BY 1").unwrap();
        assert_ne!(a, b, "spans differ");
        assert!(eq_ignoring_spans(&a, &b));
        assert!(!eq_ignoring_spans(&a, &c));
        assert!(has_nonzero_span(&format!("{a:?}")));
        let (mut a, mut b) = (a, b);
        clear_spans(&mut a);
        clear_spans(&mut b);
        assert_eq!(a, b);
        assert!(
            !has_nonzero_span(&format!("{a:?}")),
            "a span was left: {a:?}"
        );
    }
}
