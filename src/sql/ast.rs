//! The abstract syntax tree of katydid's SQL dialect.
//!
//! # Invariants
//! Every [`Expr`] and [`Ident`] carries the byte [`Span`] of its text in the
//! query, so the planner can point at what it rejects. Identifiers keep the
//! case the user typed; the planner resolves them case-insensitively.
//! Keywords are not kept: `Display` prints them upper-case, and parsing the
//! printed text gives back an equal tree (spans aside).

/// A half-open byte range `start..end` into the query text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Span {
    /// First byte.
    pub start: usize,
    /// One past the last byte.
    pub end: usize,
}

impl Span {
    /// The span `start..end`.
    pub fn new(start: usize, end: usize) -> Span {
        Span { start, end }
    }

    /// The smallest span covering both.
    pub fn union(self, other: Span) -> Span {
        Span::new(self.start.min(other.start), self.end.max(other.end))
    }
}

/// One statement.
#[derive(Debug, Clone, PartialEq)]
pub enum Statement {
    /// `SELECT …` alone: no `WITH`, no set operation.
    Select(Box<Select>),
    /// A query with `WITH` or a set operation (`UNION`, `INTERSECT`,
    /// `EXCEPT`).
    Query(Box<Query>),
    /// `EXPLAIN query`: show the plan instead of running it.
    Explain(Box<Query>),
    /// `EXPLAIN ANALYZE query`: run the query and show the plan with what
    /// each operator did (rows in and out, time, the choices made on the
    /// rows).
    ExplainAnalyze(Box<Query>),
    /// `DESCRIBE table` or `DESCRIBE SELECT …`: the columns of a table (with
    /// their encodings and memory) or of a query's result.
    Describe(Describe),
    /// `SHOW TABLES`: every table with its size.
    ShowTables,
    /// `SUMMARIZE table`: statistics of every column.
    Summarize(TableRef),
    /// `CREATE [OR REPLACE] TABLE name AS query`: the query's rows as a
    /// new table, encoded like a load.
    CreateTableAs {
        /// The new table's name.
        name: Ident,
        /// Its rows.
        query: Box<Query>,
        /// `OR REPLACE`: an existing table of that name is replaced.
        replace: bool,
    },
    /// `DROP TABLE [IF EXISTS] name` or `DROP TABLE [IF EXISTS] 'path'`.
    DropTable {
        /// The table; with `file`, the path as written.
        name: Ident,
        /// `IF EXISTS`: no error when there is no such table.
        if_exists: bool,
        /// `DROP TABLE 'path'`: the table a `FROM 'path'` query cached.
        file: bool,
    },
}

/// What `DESCRIBE` describes.
#[derive(Debug, Clone, PartialEq)]
pub enum Describe {
    /// A table, a file or a table function.
    Table(TableRef),
    /// The result of a query (its names and types; nothing is run).
    Query(Box<Query>),
}

/// A table as `FROM`, `DESCRIBE` and `SUMMARIZE` name it.
#[derive(Debug, Clone, PartialEq)]
pub enum TableRef {
    /// A loaded table, by name.
    Named(Ident),
    /// `'path.csv'`: a CSV file (plain or gzipped) read as a table.
    File {
        /// The path as written, unescaped.
        path: String,
        /// Where the quoted path is in the query text.
        span: Span,
    },
    /// `read_csv('path', delim => ';', …)`: a table function.
    Function {
        /// The function's name.
        name: Ident,
        /// The arguments in order: positional ones, then `name => value`.
        args: Vec<TableArg>,
        /// From the name to the closing parenthesis.
        span: Span,
    },
}

impl TableRef {
    /// Where the table is named in the query text.
    pub fn span(&self) -> Span {
        match self {
            TableRef::Named(ident) => ident.span,
            TableRef::File { span, .. } | TableRef::Function { span, .. } => *span,
        }
    }
}

/// One argument of a table function: `value` or `name => value` (DuckDB's
/// named parameters; `name = value` is read the same way).
#[derive(Debug, Clone, PartialEq)]
pub struct TableArg {
    /// The parameter name of a named argument.
    pub name: Option<Ident>,
    /// The value.
    pub value: TableArgValue,
}

/// The value of a table-function argument.
#[derive(Debug, Clone, PartialEq)]
pub enum TableArgValue {
    /// An expression (the functions take constants).
    Expr(Expr),
    /// `[a, b, …]`, e.g. a list of column names.
    List {
        /// The items, possibly none.
        items: Vec<Expr>,
        /// From `[` to `]`.
        span: Span,
    },
}

impl TableArgValue {
    /// Where the value is in the query text.
    pub fn span(&self) -> Span {
        match self {
            TableArgValue::Expr(e) => e.span,
            TableArgValue::List { span, .. } => *span,
        }
    }
}

/// A whole query: `[WITH ctes] body [ORDER BY] [LIMIT] [OFFSET]`.
///
/// # Invariants
/// When `body` is one SELECT, its ORDER BY, LIMIT and OFFSET stay in it and
/// the query's own are empty; they are the query's only after a set
/// operation, where they order and cut the combined rows.
#[derive(Debug, Clone, PartialEq)]
pub struct Query {
    /// `WITH name AS (query), …`: each may refer to the earlier ones.
    pub ctes: Vec<Cte>,
    /// The SELECT or set operation.
    pub body: SetExpr,
    /// `ORDER BY` of a set operation's rows.
    pub order_by: Vec<OrderByItem>,
    /// `LIMIT` of a set operation's rows.
    pub limit: Option<i64>,
    /// `OFFSET` of a set operation's rows.
    pub offset: Option<u64>,
    /// The whole query.
    pub span: Span,
}

impl Query {
    /// A query that is just `select`.
    pub fn plain(select: Select) -> Query {
        let span = select.span;
        Query {
            ctes: Vec::new(),
            body: SetExpr::Select(Box::new(select)),
            order_by: Vec::new(),
            limit: None,
            offset: None,
            span,
        }
    }

    /// The SELECT when the query is nothing more.
    pub fn as_select(&self) -> Option<&Select> {
        match &self.body {
            SetExpr::Select(s) if self.ctes.is_empty() => Some(s),
            _ => None,
        }
    }
}

/// `name AS (query)` of a `WITH`.
#[derive(Debug, Clone, PartialEq)]
pub struct Cte {
    /// The name the rest of the query reads it by.
    pub name: Ident,
    /// Its rows.
    pub query: Query,
}

/// The body of a query: a SELECT or two bodies combined.
#[derive(Debug, Clone, PartialEq)]
pub enum SetExpr {
    /// One SELECT.
    Select(Box<Select>),
    /// `left UNION|INTERSECT|EXCEPT [ALL] right`; INTERSECT binds tighter
    /// than UNION and EXCEPT, which associate to the left.
    Operation {
        /// Which operation.
        op: SetOp,
        /// `ALL`: keep duplicates (multiset semantics).
        all: bool,
        /// Left operand.
        left: Box<SetExpr>,
        /// Right operand.
        right: Box<SetExpr>,
    },
    /// `VALUES (e, …), (e, …)`: rows of constant expressions, every row as
    /// wide as the first; the columns are named `col0`, `col1`, … (DuckDB's
    /// names) and typed as UNION ALL of the rows would type them.
    Values {
        /// The rows, each at least one expression.
        rows: Vec<Vec<Expr>>,
        /// From `VALUES` to the last row's `)`.
        span: Span,
    },
}

impl SetExpr {
    /// Where the body is in the query text.
    pub fn span(&self) -> Span {
        match self {
            SetExpr::Select(s) => s.span,
            SetExpr::Operation { left, right, .. } => left.span().union(right.span()),
            SetExpr::Values { span, .. } => *span,
        }
    }
}

/// A set operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SetOp {
    /// Rows of either.
    Union,
    /// Rows of both.
    Intersect,
    /// Rows of the left but not the right.
    Except,
}

impl SetOp {
    /// The keyword.
    pub fn keyword(self) -> &'static str {
        match self {
            SetOp::Union => "UNION",
            SetOp::Intersect => "INTERSECT",
            SetOp::Except => "EXCEPT",
        }
    }
}

/// What `FROM` reads: a table, a subquery, or a join of two of these.
#[derive(Debug, Clone, PartialEq)]
pub enum FromItem {
    /// A table, file or table function, optionally renamed.
    Table {
        /// The table.
        table: TableRef,
        /// `AS alias` (the `AS` is optional).
        alias: Option<Ident>,
    },
    /// `(query) [AS] alias`.
    Subquery {
        /// The query whose rows are read.
        query: Box<Query>,
        /// Its name in the rest of the query.
        alias: Option<Ident>,
        /// `AS alias (a, b)`: new names for its first columns.
        columns: Vec<Ident>,
        /// From `(` to the end of the alias.
        span: Span,
    },
    /// `left [kind] JOIN right [ON …|USING (…)]`, or `left, right`.
    Join(Box<Join>),
}

impl FromItem {
    /// Where the item is in the query text.
    pub fn span(&self) -> Span {
        match self {
            FromItem::Table { table, alias } => match alias {
                Some(a) => table.span().union(a.span),
                None => table.span(),
            },
            FromItem::Subquery { span, .. } => *span,
            FromItem::Join(join) => join.span,
        }
    }
}

/// A join of two FROM items.
#[derive(Debug, Clone, PartialEq)]
pub struct Join {
    /// Left input.
    pub left: FromItem,
    /// Right input.
    pub right: FromItem,
    /// How rows pair up.
    pub kind: JoinKind,
    /// The join condition; [`JoinConstraint::None`] for CROSS and comma.
    pub constraint: JoinConstraint,
    /// From the left input's start to the end of the constraint.
    pub span: Span,
}

/// The kind of a join.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JoinKind {
    /// `[INNER] JOIN`.
    Inner,
    /// `LEFT [OUTER] JOIN`: every left row, NULLs where no right row pairs.
    Left,
    /// `RIGHT [OUTER] JOIN`.
    Right,
    /// `FULL [OUTER] JOIN`.
    Full,
    /// `CROSS JOIN`: every pair.
    Cross,
    /// `a, b`: every pair, usually restricted by WHERE.
    Comma,
}

/// `ON predicate` or `USING (columns)`.
#[derive(Debug, Clone, PartialEq)]
pub enum JoinConstraint {
    /// `ON predicate`.
    On(Expr),
    /// `USING (a, b)`: equal columns of the same names, shown once.
    Using(Vec<Ident>),
    /// No condition (CROSS JOIN, comma).
    None,
}

/// `SELECT [DISTINCT] projection FROM from [WHERE] [GROUP BY] [HAVING]
/// [WINDOW] [QUALIFY] [ORDER BY] [LIMIT] [OFFSET]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Select {
    /// `SELECT DISTINCT`: duplicate result rows are removed.
    pub distinct: bool,
    /// The select list, at least one item.
    pub projection: Vec<SelectItem>,
    /// What is read; `None` for `SELECT 1 + 1`.
    pub from: Option<FromItem>,
    /// The `WHERE` predicate.
    pub selection: Option<Expr>,
    /// `GROUP BY` items: expressions, names (possibly aliases) or ordinals
    /// (an integer literal `n` means the n-th select item, 1-based).
    pub group_by: Vec<Expr>,
    /// `GROUP BY ALL`: grouped by every select item without an aggregate
    /// (`group_by` is then empty).
    pub group_by_all: bool,
    /// The `HAVING` predicate.
    pub having: Option<Expr>,
    /// `WINDOW name AS (…), …`.
    pub windows: Vec<NamedWindow>,
    /// The `QUALIFY` predicate: a filter after the window functions.
    pub qualify: Option<Expr>,
    /// `ORDER BY` keys; an integer literal is an ordinal as in `GROUP BY`.
    pub order_by: Vec<OrderByItem>,
    /// `LIMIT n`; negative `n` means the last `-n` rows in load order
    /// (QuestDB's `LIMIT -n`).
    pub limit: Option<i64>,
    /// `OFFSET n`.
    pub offset: Option<u64>,
    /// The whole statement.
    pub span: Span,
}

impl Select {
    /// `SELECT projection FROM from [WHERE selection]` and nothing else:
    /// the queries the planner builds for itself (a join's scans, a
    /// subquery's key list); other clauses are set with struct update
    /// syntax.
    pub fn over(
        projection: Vec<SelectItem>,
        from: FromItem,
        selection: Option<Expr>,
        span: Span,
    ) -> Select {
        Select {
            distinct: false,
            projection,
            from: Some(from),
            selection,
            group_by: Vec::new(),
            group_by_all: false,
            having: None,
            windows: Vec::new(),
            qualify: None,
            order_by: Vec::new(),
            limit: None,
            offset: None,
            span,
        }
    }
}

/// One item of the select list.
#[derive(Debug, Clone, PartialEq)]
pub enum SelectItem {
    /// `*`: every column of the table, in table order, less and changed
    /// as its options say.
    Wildcard(Span, StarOptions),
    /// `t.*`: every column of the FROM item named `t`.
    QualifiedWildcard {
        /// The table or alias.
        table: Ident,
        /// From the name to the `*`.
        span: Span,
        /// `EXCLUDE (…)`, `REPLACE (…)`.
        options: StarOptions,
    },
    /// `expr [AS alias]` (the `AS` is optional).
    Expr {
        /// The expression.
        expr: Expr,
        /// The output name given by the user.
        alias: Option<Ident>,
    },
}

/// DuckDB's modifiers of a `*` in the select list:
/// `* EXCLUDE (a, b) REPLACE (x * 2 AS x)`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct StarOptions {
    /// `EXCLUDE (a, b)`: columns left out (names matched ignoring ASCII
    /// case, as column names are).
    pub exclude: Vec<Ident>,
    /// `REPLACE (expr AS name, …)`: columns whose value is `expr` instead,
    /// in their place and under their name.
    pub replace: Vec<(Expr, Ident)>,
}

/// One column a `*` with [`StarOptions`] stands for: its index among the
/// star's columns, and the expression that replaces it, if any.
pub type StarColumn<'s> = (usize, Option<&'s Expr>);

impl StarOptions {
    /// True when the `*` has no modifier.
    pub fn is_empty(&self) -> bool {
        self.exclude.is_empty() && self.replace.is_empty()
    }

    /// The columns a `*` over columns `names` (in order) stands for: the
    /// index of each column kept, in order, with its replacing expression
    /// if any.
    ///
    /// # Errors
    /// A name in `EXCLUDE` or `REPLACE` that is no column of `names`, or
    /// that is named twice: the message and the name's offset in the
    /// query text.
    pub fn apply<'s>(&'s self, names: &[&str]) -> Result<Vec<StarColumn<'s>>, (String, usize)> {
        let find = |id: &Ident, what: &str| {
            names
                .iter()
                .position(|n| n.eq_ignore_ascii_case(&id.name))
                .ok_or_else(|| {
                    (
                        format!("column \"{}\" in {what} is not among the columns of *", id.name),
                        id.span.start,
                    )
                })
        };
        let mut excluded = vec![false; names.len()];
        let mut replaced: Vec<Option<&Expr>> = vec![None; names.len()];
        for id in &self.exclude {
            let i = find(id, "EXCLUDE")?;
            if std::mem::replace(&mut excluded[i], true) {
                return Err((format!("column \"{}\" is excluded twice", id.name), id.span.start));
            }
        }
        for (e, id) in &self.replace {
            let i = find(id, "REPLACE")?;
            if excluded[i] || replaced[i].is_some() {
                return Err((
                    format!("column \"{}\" is both excluded and replaced, or replaced twice", id.name),
                    id.span.start,
                ));
            }
            replaced[i] = Some(e);
        }
        Ok((0..names.len())
            .filter(|&i| !excluded[i])
            .map(|i| (i, replaced[i]))
            .collect())
    }
}

/// A window: `OVER name` or `OVER ([name] [PARTITION BY …] [ORDER BY …]
/// [frame])`, or the body of `WINDOW name AS (…)`.
#[derive(Debug, Clone, PartialEq)]
pub struct WindowSpec {
    /// A named window this one refines (`OVER w`, `OVER (w ORDER BY x)`).
    pub base: Option<Ident>,
    /// `PARTITION BY` expressions.
    pub partition_by: Vec<Expr>,
    /// `ORDER BY` keys.
    pub order_by: Vec<OrderByItem>,
    /// `ROWS|RANGE BETWEEN … AND …`.
    pub frame: Option<WindowFrame>,
    /// From `OVER` to the end of the window.
    pub span: Span,
}

/// A window frame: which rows around the current one a window aggregate
/// reads.
#[derive(Debug, Clone, PartialEq)]
pub struct WindowFrame {
    /// `ROWS` (positions) when true, `RANGE` (values of the ORDER BY key)
    /// when false.
    pub rows: bool,
    /// Where the frame starts.
    pub start: FrameBound,
    /// Where it ends (`CURRENT ROW` when only a start is written).
    pub end: FrameBound,
    /// The frame's text.
    pub span: Span,
}

/// One end of a [`WindowFrame`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameBound {
    /// `UNBOUNDED PRECEDING`: the partition's first row.
    UnboundedPreceding,
    /// `n PRECEDING`.
    Preceding(u64),
    /// `CURRENT ROW` (with `RANGE`, the current row's peers too).
    CurrentRow,
    /// `n FOLLOWING`.
    Following(u64),
    /// `UNBOUNDED FOLLOWING`: the partition's last row.
    UnboundedFollowing,
}

impl FrameBound {
    /// The bound as a signed offset from the current row (unbounded ones
    /// at the extremes), for ordering two bounds.
    pub fn offset(self) -> i128 {
        match self {
            FrameBound::UnboundedPreceding => i128::MIN,
            FrameBound::Preceding(n) => -i128::from(n),
            FrameBound::CurrentRow => 0,
            FrameBound::Following(n) => i128::from(n),
            FrameBound::UnboundedFollowing => i128::MAX,
        }
    }
}

/// `WINDOW name AS (spec)`.
#[derive(Debug, Clone, PartialEq)]
pub struct NamedWindow {
    /// The name.
    pub name: Ident,
    /// The window.
    pub spec: WindowSpec,
}

/// One `ORDER BY` key.
#[derive(Debug, Clone, PartialEq)]
pub struct OrderByItem {
    /// The key: an expression, an output name, or an ordinal literal.
    pub expr: Expr,
    /// `DESC` when true; `ASC` (the default) when false.
    pub desc: bool,
    /// `NULLS FIRST` (`Some(true)`) or `NULLS LAST` (`Some(false)`); when
    /// `None`, NULLs sort as if larger than every value (PostgreSQL).
    pub nulls_first: Option<bool>,
}

/// A name as typed, with its position.
#[derive(Debug, Clone, PartialEq)]
pub struct Ident {
    /// The name; double-quoted identifiers arrive unquoted.
    pub name: String,
    /// Where it is in the query text.
    pub span: Span,
}

/// An expression with its position.
#[derive(Debug, Clone, PartialEq)]
pub struct Expr {
    /// What it is.
    pub kind: ExprKind,
    /// Where it is in the query text.
    pub span: Span,
}

impl Expr {
    /// `name(args)`: a plain call (no `*`, DISTINCT, FILTER or ORDER BY),
    /// as the planner writes calls of its own.
    pub fn call(name: &str, args: Vec<Expr>, span: Span) -> Expr {
        Expr {
            kind: ExprKind::Function {
                name: name.into(),
                args,
                star: false,
                distinct: false,
                filter: None,
                order_by: Vec::new(),
                within_group: false,
            },
            span,
        }
    }

    /// The direct subexpressions (not those inside a subquery), in
    /// source order: what a walk over the tree visits below this node.
    pub fn children(&self) -> Vec<&Expr> {
        match &self.kind {
            ExprKind::Column(_)
            | ExprKind::QualifiedColumn { .. }
            | ExprKind::Literal(_)
            | ExprKind::Subquery(_)
            | ExprKind::Exists(_) => Vec::new(),
            ExprKind::Unary { expr, .. }
            | ExprKind::IsNull { expr, .. }
            | ExprKind::Cast { expr, .. }
            | ExprKind::Extract { expr, .. }
            | ExprKind::InSubquery { expr, .. }
            | ExprKind::Quantified { expr, .. } => vec![expr.as_ref()],
            ExprKind::Binary { left, right, .. } => vec![left.as_ref(), right.as_ref()],
            ExprKind::InList { expr, list, .. } => {
                let mut v = vec![expr.as_ref()];
                v.extend(list.iter());
                v
            }
            ExprKind::Between {
                expr, low, high, ..
            } => vec![expr.as_ref(), low.as_ref(), high.as_ref()],
            ExprKind::Like { expr, pattern, .. } => vec![expr.as_ref(), pattern.as_ref()],
            ExprKind::Case {
                operand,
                branches,
                else_result,
            } => {
                let mut v: Vec<&Expr> = Vec::new();
                if let Some(o) = operand {
                    v.push(o.as_ref());
                }
                for (w, t) in branches {
                    v.push(w);
                    v.push(t);
                }
                if let Some(e) = else_result {
                    v.push(e.as_ref());
                }
                v
            }
            ExprKind::Function {
                args,
                filter,
                order_by,
                ..
            } => args
                .iter()
                .chain(filter.as_deref())
                .chain(order_by.iter().map(|o| &o.expr))
                .collect(),
            ExprKind::Window { call, window } => {
                let mut v = vec![call.as_ref()];
                v.extend(window.partition_by.iter());
                v.extend(window.order_by.iter().map(|o| &o.expr));
                v
            }
        }
    }

    /// [`Expr::children`] with mutable access: the same subexpressions,
    /// in the same order.
    pub fn children_mut(&mut self) -> Vec<&mut Expr> {
        match &mut self.kind {
            ExprKind::Column(_)
            | ExprKind::QualifiedColumn { .. }
            | ExprKind::Literal(_)
            | ExprKind::Subquery(_)
            | ExprKind::Exists(_) => Vec::new(),
            ExprKind::Unary { expr, .. }
            | ExprKind::IsNull { expr, .. }
            | ExprKind::Cast { expr, .. }
            | ExprKind::Extract { expr, .. }
            | ExprKind::InSubquery { expr, .. }
            | ExprKind::Quantified { expr, .. } => vec![expr.as_mut()],
            ExprKind::Binary { left, right, .. } => vec![left.as_mut(), right.as_mut()],
            ExprKind::InList { expr, list, .. } => {
                let mut v = vec![expr.as_mut()];
                v.extend(list.iter_mut());
                v
            }
            ExprKind::Between {
                expr, low, high, ..
            } => vec![expr.as_mut(), low.as_mut(), high.as_mut()],
            ExprKind::Like { expr, pattern, .. } => vec![expr.as_mut(), pattern.as_mut()],
            ExprKind::Case {
                operand,
                branches,
                else_result,
            } => {
                let mut v: Vec<&mut Expr> = Vec::new();
                if let Some(o) = operand {
                    v.push(o.as_mut());
                }
                for (w, t) in branches {
                    v.push(w);
                    v.push(t);
                }
                if let Some(e) = else_result {
                    v.push(e.as_mut());
                }
                v
            }
            ExprKind::Function {
                args,
                filter,
                order_by,
                ..
            } => args
                .iter_mut()
                .chain(filter.iter_mut().map(|p| p.as_mut()))
                .chain(order_by.iter_mut().map(|o| &mut o.expr))
                .collect(),
            ExprKind::Window { call, window } => {
                let mut v = vec![call.as_mut()];
                v.extend(window.partition_by.iter_mut());
                v.extend(window.order_by.iter_mut().map(|o| &mut o.expr));
                v
            }
        }
    }
}

/// The forms of expression.
#[derive(Debug, Clone, PartialEq)]
pub enum ExprKind {
    /// A column reference or an output alias.
    Column(String),
    /// `t.column`: a column of the FROM item named (or aliased) `t`.
    QualifiedColumn {
        /// The table or alias.
        table: String,
        /// The column.
        column: String,
    },
    /// `(SELECT …)` as a value: its one column of at most one row.
    Subquery(Box<Query>),
    /// `x [NOT] IN (SELECT …)`.
    InSubquery {
        /// The tested expression.
        expr: Box<Expr>,
        /// The query whose one column is the list.
        query: Box<Query>,
        /// `NOT IN` when true.
        negated: bool,
    },
    /// `x op ANY (SELECT …)`, `x op SOME (…)` or `x op ALL (…)`: whether
    /// the comparison holds for some (every) row of the query's one column,
    /// with SQL's NULLs (unknown when no row decides it and a NULL is
    /// compared). `op` is `=`, `<>`, `<`, `<=`, `>` or `>=`.
    Quantified {
        /// The tested expression.
        expr: Box<Expr>,
        /// The comparison.
        op: BinaryOp,
        /// `ALL` when true; `ANY`/`SOME` when false.
        all: bool,
        /// The query whose one column the comparison runs over.
        query: Box<Query>,
    },
    /// `EXISTS (SELECT …)`: whether the query has a row.
    Exists(Box<Query>),
    /// A constant.
    Literal(Literal),
    /// `-x`, `NOT x`.
    Unary {
        /// The operator.
        op: UnaryOp,
        /// The operand.
        expr: Box<Expr>,
    },
    /// `a op b`.
    Binary {
        /// The operator.
        op: BinaryOp,
        /// Left operand.
        left: Box<Expr>,
        /// Right operand.
        right: Box<Expr>,
    },
    /// `x IS [NOT] NULL`.
    IsNull {
        /// The tested expression.
        expr: Box<Expr>,
        /// `IS NOT NULL` when true.
        negated: bool,
    },
    /// `x [NOT] IN (a, b, …)`.
    InList {
        /// The tested expression.
        expr: Box<Expr>,
        /// The list, at least one element.
        list: Vec<Expr>,
        /// `NOT IN` when true.
        negated: bool,
    },
    /// `x [NOT] BETWEEN low AND high` (inclusive on both ends).
    Between {
        /// The tested expression.
        expr: Box<Expr>,
        /// Lower bound.
        low: Box<Expr>,
        /// Upper bound.
        high: Box<Expr>,
        /// `NOT BETWEEN` when true.
        negated: bool,
    },
    /// `x [NOT] LIKE pattern` with `%` (any run) and `_` (one character),
    /// or `x [NOT] ILIKE pattern`, the same without regard to case.
    Like {
        /// The tested expression.
        expr: Box<Expr>,
        /// The pattern.
        pattern: Box<Expr>,
        /// `NOT LIKE` when true.
        negated: bool,
        /// `ILIKE` when true.
        case_insensitive: bool,
    },
    /// `CASE [operand] WHEN a THEN b … [ELSE e] END`.
    Case {
        /// The operand of a simple CASE, compared for equality with each WHEN.
        operand: Option<Box<Expr>>,
        /// `(WHEN, THEN)` pairs, at least one.
        branches: Vec<(Expr, Expr)>,
        /// The ELSE result; NULL when absent.
        else_result: Option<Box<Expr>>,
    },
    /// A function call or aggregate: `name([DISTINCT] args)`, `count(*)`.
    Function {
        /// The name as typed (resolved case-insensitively).
        name: String,
        /// The arguments; empty for `count(*)`.
        args: Vec<Expr>,
        /// `count(*)`.
        star: bool,
        /// `count(DISTINCT x)`.
        distinct: bool,
        /// `FILTER (WHERE p)` after an aggregate: only the rows where `p`
        /// is true are aggregated.
        filter: Option<Box<Expr>>,
        /// The order an aggregate takes its values in: `ORDER BY` inside
        /// the call (`string_agg(s, ',' ORDER BY k)`, DuckDB) or in
        /// `WITHIN GROUP (ORDER BY …)` after it (`percentile_cont`);
        /// empty when not given.
        order_by: Vec<OrderByItem>,
        /// True when `order_by` came from `WITHIN GROUP (…)`.
        within_group: bool,
    },
    /// `call OVER window`: a window function (`row_number()`, `lag(x)`, an
    /// aggregate) evaluated over the rows of its window partition.
    Window {
        /// The function call, an [`ExprKind::Function`].
        call: Box<Expr>,
        /// Its window.
        window: Box<WindowSpec>,
    },
    /// `EXTRACT(field FROM x)`: a part of a timestamp (the field is checked
    /// by the planner, which points at it when it is unknown).
    Extract {
        /// The part, e.g. `minute`; written as a bare word or a string.
        field: Ident,
        /// The timestamp.
        expr: Box<Expr>,
    },
    /// `CAST(x AS type)` or `x::type`; `TRY_CAST(x AS type)`.
    Cast {
        /// The converted expression.
        expr: Box<Expr>,
        /// The target type.
        to: TypeName,
        /// `TRY_CAST`: a value that does not convert gives NULL instead
        /// of failing the query.
        try_cast: bool,
    },
}

/// A constant written in the query.
#[derive(Debug, Clone, PartialEq)]
pub enum Literal {
    /// `NULL`.
    Null,
    /// `TRUE` / `FALSE`.
    Bool(bool),
    /// An integer that fits i64, e.g. `42`; a unary minus is a separate
    /// [`UnaryOp::Neg`] node except for `-9223372036854775808`.
    Int(i64),
    /// A number with a fraction or exponent, e.g. `2.5`, `1e3`, or an integer
    /// too large for i64.
    Float(f64),
    /// `'text'` with `''` for a quote inside.
    String(String),
    /// `INTERVAL '1 day'`, `INTERVAL '90 minutes'`, `INTERVAL '2' HOUR`:
    /// a fixed length of time in microseconds (months and years are not
    /// fixed lengths and are not accepted).
    Interval(i64),
    /// `INTERVAL '3' MONTH`, `INTERVAL '1 year'`: whole calendar months
    /// (a year is 12), added to a date by the calendar.
    Months(i64),
}

/// Unary operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnaryOp {
    /// Arithmetic negation `-x`.
    Neg,
    /// Logical `NOT x`.
    Not,
}

/// Binary operators, in SQL's usual precedence (lowest first): `OR`; `AND`;
/// comparisons; `||`; `+ -`; `* / %` (PostgreSQL's and DuckDB's order).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinaryOp {
    /// `OR`
    Or,
    /// `AND`
    And,
    /// `=`
    Eq,
    /// `<>` or `!=`
    NotEq,
    /// `<`
    Lt,
    /// `<=`
    LtEq,
    /// `>`
    Gt,
    /// `>=`
    GtEq,
    /// `+`
    Plus,
    /// `-`
    Minus,
    /// `*`
    Multiply,
    /// `/`
    Divide,
    /// `%`
    Modulo,
    /// `||`: string concatenation (NULL when either side is NULL; other
    /// types are cast to text).
    Concat,
}

impl BinaryOp {
    /// The operator as written in SQL.
    pub fn symbol(self) -> &'static str {
        match self {
            BinaryOp::Or => "OR",
            BinaryOp::And => "AND",
            BinaryOp::Eq => "=",
            BinaryOp::NotEq => "<>",
            BinaryOp::Lt => "<",
            BinaryOp::LtEq => "<=",
            BinaryOp::Gt => ">",
            BinaryOp::GtEq => ">=",
            BinaryOp::Plus => "+",
            BinaryOp::Minus => "-",
            BinaryOp::Multiply => "*",
            BinaryOp::Divide => "/",
            BinaryOp::Modulo => "%",
            BinaryOp::Concat => "||",
        }
    }

    /// True for `= <> < <= > >=`.
    pub fn is_comparison(self) -> bool {
        matches!(
            self,
            BinaryOp::Eq
                | BinaryOp::NotEq
                | BinaryOp::Lt
                | BinaryOp::LtEq
                | BinaryOp::Gt
                | BinaryOp::GtEq
        )
    }
}

/// A type named in `CAST` or `::`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TypeName {
    /// `INT`, `INTEGER`, `BIGINT`
    Int,
    /// `FLOAT`, `DOUBLE`, `REAL`
    Float,
    /// `TIMESTAMP`
    Timestamp,
    /// `DATE`: a calendar day.
    Date,
    /// `INTERVAL`: a length of time; from text such as `'1 day 2 hours'`.
    Interval,
    /// `VARCHAR`, `TEXT`, `STRING`
    Str,
    /// `BOOLEAN`, `BOOL`
    Bool,
}
