//! nom parser for katydid's SQL dialect.
//!
//! # Layout
//! Two layers:
//! - a lexical layer of small nom combinators ([`skip_ws`], [`lex`]) that
//!   skips whitespace and comments (`-- …` to end of line, `/* … */`) and
//!   reads one [`Token`] at a position;
//! - a recursive-descent grammar ([`Parser`]) with one method per precedence
//!   level. It looks at one token at a time and never backtracks over an
//!   expression, so every expression is parsed exactly once. The last lexed
//!   token is cached, because each precedence level peeks at the same token
//!   after an operand.
//!
//! Every parse function takes the remaining input and returns the input just
//! after its last token, so spans are tight (no surrounding whitespace); a
//! byte offset is `src.len() - rest.len()`.
//!
//! # Decisions
//! - Precedence, lowest first: `OR`; `AND`; prefix `NOT`; comparisons
//!   (`= <> != < <= > >=`, `IS [NOT] NULL`, `[NOT] IN (…)`,
//!   `[NOT] BETWEEN a AND b`, `[NOT] [I]LIKE p`); `||`; `+ -`; `* / %`;
//!   prefix `- +`;
//!   postfix `::type`; primary. Binary operators are left-associative, and so
//!   are comparisons: `a < b < c` parses as `(a < b) < c` (the planner
//!   rejects the type mismatch), `a = b IS NULL` as `(a = b) IS NULL`.
//! - `-5` is `Unary { Neg, 5 }`; only `-9223372036854775808` (whose operand
//!   does not fit i64) becomes `Literal::Int(i64::MIN)`. `LIMIT -10` is read
//!   directly as a signed integer. Unary `+` is dropped (its span is kept).
//! - A parenthesized expression's span includes the parentheses.
//! - `Select::span` runs from `SELECT` to the end of the last clause (the
//!   optional `EXPLAIN` and trailing `;` are outside it).
//! - Integer literals too large for i64 become `Literal::Float`; a literal
//!   too large for f64 is an error.
//! - `INTERVAL` literals are exact fixed lengths in microseconds (fractions
//!   such as `'1.5 hours'` are allowed, truncated to whole microseconds);
//!   months and years are rejected.
//! - A statement is `[EXPLAIN [ANALYZE]] SELECT …`, `DESCRIBE table`, `DESCRIBE
//!   SELECT …`, `SHOW TABLES` or `SUMMARIZE table`; their keywords are not
//!   reserved (they only count first in a statement).
//! - A table is a name, a quoted path (`FROM 'hits.csv'`) or a table
//!   function with DuckDB's named arguments, `read_csv('x', delim => ';',
//!   columns => ['a', 'b'])`. `name = value` is read as a named argument
//!   too (DuckDB accepts it, and a comparison means nothing there); `[…]`
//!   lists exist only as such arguments.
//! - `EXTRACT(field FROM x)` is parsed when the parentheses start with a
//!   word or string and `FROM`; any other `extract(…)` is an ordinary call.
//! - Nesting is limited ([`MAX_DEPTH`] levels of recursion, trees at most
//!   [`MAX_HEIGHT`] deep) so that no input can overflow the stack, here or in
//!   code that walks the tree.

use std::borrow::Cow;
use std::cell::Cell;

use nom::{
    IResult,
    branch::alt,
    bytes::complete::{tag, take_till, take_until, take_while},
    character::complete::{alpha1, char, digit0, digit1, one_of, satisfy},
    combinator::{opt, recognize},
    error::{ErrorKind, ParseError},
    sequence::{delimited, pair, preceded, tuple},
};

use super::ast::{
    BinaryOp, Cte, Describe, Expr, ExprKind, FrameBound, FromItem, Ident, Join, JoinConstraint,
    JoinKind, Literal, NamedWindow, OrderByItem, Query, Select, SelectItem, SetExpr, SetOp, Span,
    StarOptions, Statement, TableArg, TableArgValue, TableRef, TypeName, UnaryOp, WindowFrame, WindowSpec,
};
use crate::error::{Error, Result};

/// How deeply parentheses, function calls, `CASE`, `NOT` and unary minus may
/// nest; each level costs stack while parsing.
pub const MAX_DEPTH: usize = 100;

/// The deepest expression tree accepted (long `a + b + c + …` chains build
/// deep trees without recursing while parsing, but walking them recurses).
pub const MAX_HEIGHT: usize = 500;

/// Keywords that cannot be bare identifiers (they may be double-quoted).
const RESERVED: &[&str] = &[
    "SELECT", "FROM", "WHERE", "GROUP", "BY", "HAVING", "ORDER", "LIMIT", "OFFSET", "AND", "OR",
    "NOT", "IN", "BETWEEN", "LIKE", "ILIKE", "IS", "NULL", "CASE", "WHEN", "THEN", "ELSE", "END", "AS",
    "ASC", "DESC", "TRUE", "FALSE", "DISTINCT", "NULLS", "INTERVAL", "CAST", "EXPLAIN",
];

/// Words that start SQL katydid does not support yet, with what to call
/// it: where one stands in place of an alias or the end of a statement, the
/// error names the feature instead of the word ("window functions (OVER)
/// are not supported yet" rather than "expected end of statement, found
/// \"(\"").
const NOT_YET: &[(&str, &str)] = &[
    ("NATURAL", "NATURAL joins are"),
];

/// Words that end an item where an alias without `AS` could stand: they
/// start the next clause, so `FROM a JOIN b` does not name `a` "JOIN".
const CLAUSE_WORDS: &[&str] = &[
    "JOIN", "INNER", "LEFT", "RIGHT", "FULL", "OUTER", "CROSS", "NATURAL", "ON", "USING", "UNION",
    "INTERSECT", "EXCEPT", "WINDOW", "QUALIFY", "OVER", "FILTER", "WITHIN",
];

/// Statements katydid does not run yet, by their first word.
const STATEMENTS_NOT_YET: &[(&str, &str)] = &[
    ("INSERT", "INSERT is"),
    ("UPDATE", "UPDATE is"),
    ("DELETE", "DELETE is"),
];

/// The "not supported yet" error for a word of `list` at `t`, if it is one.
fn not_yet(t: Token<'_>, list: &[(&str, &str)]) -> Option<nom::Err<SqlError>> {
    let (_, what) = list.iter().find(|(word, _)| t.is_keyword(word))?;
    Some(failure(t.at, format!("{what} not supported yet")))
}

/// Punctuation and operators, longest first so `<=` wins over `<`.
const SYMBOLS: &[&str] = &[
    "::", "||", "<>", "!=", "<=", ">=", "=>", "<", ">", "=", "(", ")", "[", "]", ",", ";", "*", "+", "-",
    "/", "%", ".",
];

/// True when `word` is a reserved keyword (case-insensitive), so it must be
/// double-quoted to be used as an identifier.
pub(crate) fn is_reserved(word: &str) -> bool {
    RESERVED.iter().any(|k| k.eq_ignore_ascii_case(word))
}

/// Parses one statement (an optional trailing `;` is allowed).
///
/// # Errors
/// [`Error::Parse`] with the byte offset of the first token that could not be
/// parsed (always on a char boundary, at most `sql.len()`) and a lowercase
/// message such as `expected an expression, found "FROM"`.
pub fn parse(sql: &str) -> Result<Statement> {
    let parser = Parser {
        src: sql,
        depth: Cell::new(0),
        peeked: Cell::new(None),
    };
    match parser.statement(sql) {
        Ok((_, statement)) => Ok(statement),
        Err(nom::Err::Error(e) | nom::Err::Failure(e)) => {
            let mut offset = sql.len().saturating_sub(e.rest_len);
            while !sql.is_char_boundary(offset) {
                offset -= 1;
            }
            Err(Error::Parse {
                offset,
                message: e.message.into_owned(),
            })
        }
        Err(nom::Err::Incomplete(_)) => Err(Error::Parse {
            offset: sql.len(),
            message: "unexpected end of input".into(),
        }),
    }
}

/// A parse failure: where (as the length of the input left at that point,
/// which is independent of where the query starts) and what.
#[derive(Debug)]
struct SqlError {
    rest_len: usize,
    message: Cow<'static, str>,
}

impl<'a> ParseError<&'a str> for SqlError {
    fn from_error_kind(input: &'a str, _: ErrorKind) -> Self {
        SqlError {
            rest_len: input.len(),
            // Static, so that the many failed alternatives tried while
            // lexing do not allocate.
            message: Cow::Borrowed("unexpected input"),
        }
    }

    fn append(_: &'a str, _: ErrorKind, other: Self) -> Self {
        other
    }

    /// Of two failed alternatives, keep the one that got further.
    fn or(self, other: Self) -> Self {
        if other.rest_len < self.rest_len {
            other
        } else {
            self
        }
    }
}

type PResult<'a, T> = IResult<&'a str, T, SqlError>;
type Res<T> = std::result::Result<T, nom::Err<SqlError>>;

/// A fatal error at `at` (the remaining input where the problem starts).
fn failure(at: &str, message: impl Into<Cow<'static, str>>) -> nom::Err<SqlError> {
    nom::Err::Failure(SqlError {
        rest_len: at.len(),
        message: message.into(),
    })
}

/// `expected {what}, found {token}` at the token.
fn expected(t: Token<'_>, what: &str) -> nom::Err<SqlError> {
    failure(t.at, format!("expected {what}, found {}", t.describe()))
}

// ---------------------------------------------------------------------------
// Lexical layer
// ---------------------------------------------------------------------------

/// One lexical token.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Tok<'a> {
    /// A bare word: keyword or identifier.
    Word(&'a str),
    /// A double-quoted identifier, contents still escaped (`""`).
    Quoted(&'a str),
    /// A single-quoted string, contents still escaped (`''`).
    Str(&'a str),
    /// A numeric literal as written.
    Number(&'a str),
    /// Punctuation or an operator from [`SYMBOLS`].
    Sym(&'static str),
    /// The end of the input.
    End,
}

/// A token with its position: `at` is the input from the token's first byte,
/// `rest` the input after its last byte.
#[derive(Clone, Copy, Debug)]
struct Token<'a> {
    tok: Tok<'a>,
    at: &'a str,
    rest: &'a str,
}

impl<'a> Token<'a> {
    fn text(&self) -> &'a str {
        &self.at[..self.at.len() - self.rest.len()]
    }

    fn is_keyword(&self, keyword: &str) -> bool {
        matches!(self.tok, Tok::Word(w) if w.eq_ignore_ascii_case(keyword))
    }

    fn is_sym(&self, symbol: &str) -> bool {
        matches!(self.tok, Tok::Sym(s) if s == symbol)
    }

    /// The token for an error message: its text quoted, or `end of input`.
    fn describe(&self) -> String {
        if self.tok == Tok::End {
            return "end of input".into();
        }
        let text = self.text();
        match text.char_indices().nth(40) {
            Some((cut, _)) => format!("{:?}", format!("{}…", &text[..cut])),
            None => format!("{text:?}"),
        }
    }
}

fn is_ident_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_'
}

fn is_ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Skips whitespace, `-- line` and `/* block */` comments.
fn skip_ws(i: &str) -> PResult<'_, ()> {
    let spaces = take_while(|c: char| c.is_ascii_whitespace());
    let line_comment = recognize(pair(tag("--"), take_till(|c: char| c == '\n')));
    let block_comment = recognize(delimited(tag("/*"), take_until("*/"), tag("*/")));
    let mut comment = alt::<_, _, (), _>((line_comment, block_comment));
    let (mut i, _) = spaces(i)?;
    while i.starts_with("--") || i.starts_with("/*") {
        (i, _) = comment(i).map_err(|_| failure(i, "unterminated comment"))?;
        (i, _) = spaces(i)?;
    }
    Ok((i, ()))
}

/// `[A-Za-z_][A-Za-z0-9_]*`
fn word(i: &str) -> PResult<'_, &str> {
    recognize(pair(satisfy(is_ident_start), take_while(is_ident_char)))(i)
}

/// `12`, `2.5`, `1.`, `.5`, `1e3`, `3E-4`.
fn number(i: &str) -> PResult<'_, &str> {
    let mantissa = alt((
        recognize(pair(digit1, opt(pair(char('.'), digit0)))),
        recognize(pair(char('.'), digit1)),
    ));
    let exponent = tuple((one_of("eE"), opt(one_of("+-")), digit1));
    recognize(pair(mantissa, opt(exponent)))(i)
}

/// A `quote`-delimited run where a doubled quote stands for one; returns the
/// contents still escaped.
fn quoted(i: &str, quote: char) -> Option<(&str, &str)> {
    let mut from = 1;
    loop {
        let end = from + i.get(from..)?.find(quote)?;
        if i[end + 1..].starts_with(quote) {
            from = end + 2;
        } else {
            return Some((&i[end + 1..], &i[1..end]));
        }
    }
}

/// Undoes the doubling of `quote` inside a quoted run.
fn unescape(raw: &str, quote: char) -> String {
    let doubled: &str = if quote == '\'' { "''" } else { "\"\"" };
    if raw.contains(doubled) {
        raw.replace(doubled, &doubled[1..])
    } else {
        raw.to_string()
    }
}

/// Reads the next token after whitespace and comments.
fn lex(i: &str) -> PResult<'_, Token<'_>> {
    let (at, ()) = skip_ws(i)?;
    let Some(first) = at.chars().next() else {
        let end = Token {
            tok: Tok::End,
            at,
            rest: at,
        };
        return Ok((at, end));
    };
    let starts_number = first.is_ascii_digit()
        || (first == '.' && at[1..].starts_with(|c: char| c.is_ascii_digit()));
    let (rest, tok) = if is_ident_start(first) {
        let (rest, w) = word(at)?;
        (rest, Tok::Word(w))
    } else if starts_number {
        let (rest, n) = number(at)?;
        let (after, junk) = take_while(is_ident_char)(rest)?;
        if !junk.is_empty() {
            let text = &at[..at.len() - after.len()];
            return Err(failure(at, format!("invalid numeric literal {text:?}")));
        }
        (rest, Tok::Number(n))
    } else if first == '\'' {
        let (rest, s) =
            quoted(at, '\'').ok_or_else(|| failure(at, "unterminated string literal"))?;
        (rest, Tok::Str(s))
    } else if first == '"' {
        let (rest, s) =
            quoted(at, '"').ok_or_else(|| failure(at, "unterminated quoted identifier"))?;
        if s.is_empty() {
            return Err(failure(at, "zero-length quoted identifier"));
        }
        (rest, Tok::Quoted(s))
    } else {
        let Some(sym) = SYMBOLS.iter().find(|s| at.starts_with(**s)) else {
            return Err(failure(
                at,
                format!("unexpected character {:?}", first.to_string()),
            ));
        };
        (&at[sym.len()..], Tok::Sym(sym))
    };
    Ok((rest, Token { tok, at, rest }))
}

/// A numeric literal's value: i64 when it is a plain integer that fits,
/// otherwise f64.
fn number_literal(text: &str) -> std::result::Result<Literal, &'static str> {
    if text.bytes().all(|b| b.is_ascii_digit())
        && let Ok(n) = text.parse::<i64>()
    {
        return Ok(Literal::Int(n));
    }
    match text.parse::<f64>() {
        Ok(f) if f.is_finite() => Ok(Literal::Float(f)),
        _ => Err("numeric literal out of range"),
    }
}

/// Why a word is not an interval unit.
#[derive(Debug, Clone, Copy, PartialEq)]
enum UnitError {
    /// Months and years, which have no fixed length.
    NotFixed,
    /// Not a unit at all.
    Unknown,
}

/// Microseconds in one `unit` (case-insensitive, singular, plural or
/// abbreviated).
fn unit_micros(unit: &str) -> std::result::Result<i64, UnitError> {
    Ok(match unit.to_ascii_lowercase().as_str() {
        "us" | "usec" | "usecs" | "microsecond" | "microseconds" => 1,
        "ms" | "msec" | "msecs" | "millisecond" | "milliseconds" => 1_000,
        "s" | "sec" | "secs" | "second" | "seconds" => 1_000_000,
        "m" | "min" | "mins" | "minute" | "minutes" => 60_000_000,
        "h" | "hr" | "hrs" | "hour" | "hours" => 3_600_000_000,
        "d" | "day" | "days" => 86_400_000_000,
        "w" | "week" | "weeks" => 604_800_000_000,
        "mon" | "mons" | "month" | "months" | "y" | "yr" | "yrs" | "year" | "years" => {
            return Err(UnitError::NotFixed);
        }
        _ => return Err(UnitError::Unknown),
    })
}

const NOT_FIXED: &str =
    "an interval of months or years cannot be mixed with fixed units (write INTERVAL '1' MONTH + INTERVAL '2' DAY)";

/// Months in one `unit` of calendar time (`month` 1, `year` 12), if it is one.
fn month_unit(unit: &str) -> Option<i64> {
    match unit.to_ascii_lowercase().as_str() {
        "mon" | "mons" | "month" | "months" => Some(1),
        "y" | "yr" | "yrs" | "year" | "years" => Some(12),
        _ => None,
    }
}

/// `'3 months'`, `'1 year'`, `'-2 years'`: the months of a string made
/// only of calendar units (`None` when it names another unit).
fn calendar_months(text: &str) -> Option<std::result::Result<i64, String>> {
    let words: Vec<&str> = text.split_whitespace().collect();
    if words.len() != 2 {
        return None;
    }
    let per = month_unit(words[1])?;
    Some(
        words[0]
            .parse::<i64>()
            .map_err(|_| format!("invalid interval {text:?}: months and years take a whole number"))
            .and_then(|n| n.checked_mul(per).ok_or_else(|| "interval out of range".to_string())),
    )
}

/// The length in microseconds of an interval's text such as `1 day`,
/// `1 hour 30 minutes` or `-1.5 h` (what `CAST('…' AS INTERVAL)` reads).
///
/// # Errors
/// A message for text that is not an interval of fixed units (months and
/// years included), or one past the i64 range of microseconds.
pub fn parse_interval(text: &str) -> std::result::Result<i64, String> {
    interval_micros(text, None)
}

/// The length of an interval string such as `1 hour 30 minutes` or `-1.5 h`
/// in microseconds. With `unit` (from `INTERVAL '2' HOUR`), the string must
/// be a single bare number.
fn interval_micros(text: &str, unit: Option<i64>) -> std::result::Result<i64, String> {
    let invalid = || format!("invalid interval {text:?}");
    let out_of_range = || "interval out of range".to_string();
    let trim = |s: &str| {
        s.trim_start_matches(|c: char| c.is_ascii_whitespace())
            .len()
    };
    let mut rest = &text[text.len() - trim(text)..];
    if rest.is_empty() {
        return Err(invalid());
    }
    let mut total: i128 = 0;
    while !rest.is_empty() {
        let mut quantity = tuple((
            opt(one_of::<_, _, ()>("+-")),
            digit1,
            opt(preceded(char('.'), digit0)),
        ));
        let (r, (sign, int, frac)) = quantity(rest).map_err(|_| invalid())?;
        let r = &r[r.len() - trim(r)..];
        let (r, micros) = match unit {
            Some(u) => (r, u),
            None => {
                let (r, name) = alpha1::<_, ()>(r).map_err(|_| invalid())?;
                let micros = unit_micros(name).map_err(|e| match e {
                    UnitError::NotFixed => NOT_FIXED.to_string(),
                    UnitError::Unknown => format!("unknown interval unit {name:?}"),
                })?;
                (r, micros)
            }
        };
        if int.len() > 24 {
            return Err(out_of_range());
        }
        let micros = i128::from(micros);
        let mut value = int.parse::<i128>().map_err(|_| invalid())? * micros;
        let frac = frac.unwrap_or("");
        let frac = &frac[..frac.len().min(12)];
        if !frac.is_empty() {
            let scale = 10i128.pow(frac.len() as u32);
            value += frac.parse::<i128>().map_err(|_| invalid())? * micros / scale;
        }
        if sign == Some('-') {
            value = -value;
        }
        total = total.checked_add(value).ok_or_else(out_of_range)?;
        if total.unsigned_abs() > 1 << 70 {
            return Err(out_of_range());
        }
        rest = &r[r.len() - trim(r)..];
        if unit.is_some() && !rest.is_empty() {
            return Err(invalid());
        }
    }
    i64::try_from(total).map_err(|_| out_of_range())
}

/// The depth of an expression tree (a leaf is 1). Only called on trees
/// already checked against [`MAX_HEIGHT`], so the recursion is bounded.
fn height(e: &Expr) -> usize {
    e.children().into_iter().map(height).max().unwrap_or(0) + 1
}

// ---------------------------------------------------------------------------
// Grammar
// ---------------------------------------------------------------------------

/// The recursive-descent parser over one query text.
struct Parser<'a> {
    /// The whole query, for byte offsets.
    src: &'a str,
    /// Current recursion depth, checked against [`MAX_DEPTH`].
    depth: Cell<usize>,
    /// The last token lexed, keyed by the length of the input it was read
    /// from.
    peeked: Cell<Option<(usize, Token<'a>)>>,
}

impl<'a> Parser<'a> {
    fn pos(&self, i: &str) -> usize {
        self.src.len() - i.len()
    }

    fn span(&self, from: &str, to: &str) -> Span {
        Span::new(self.pos(from), self.pos(to))
    }

    /// The next token (cached: the precedence levels all peek at it).
    fn next(&self, i: &'a str) -> Res<Token<'a>> {
        if let Some((len, t)) = self.peeked.get()
            && len == i.len()
        {
            return Ok(t);
        }
        let (_, t) = lex(i)?;
        self.peeked.set(Some((i.len(), t)));
        Ok(t)
    }

    /// The next token if it is `keyword`.
    fn keyword(&self, i: &'a str, keyword: &str) -> Res<Option<Token<'a>>> {
        let t = self.next(i)?;
        Ok(t.is_keyword(keyword).then_some(t))
    }

    /// The next token if it is the symbol `symbol`.
    fn sym(&self, i: &'a str, symbol: &str) -> Res<Option<Token<'a>>> {
        let t = self.next(i)?;
        Ok(t.is_sym(symbol).then_some(t))
    }

    fn expect_keyword(&self, i: &'a str, keyword: &str) -> Res<Token<'a>> {
        let t = self.next(i)?;
        if t.is_keyword(keyword) {
            Ok(t)
        } else {
            Err(expected(t, keyword))
        }
    }

    fn expect_sym(&self, i: &'a str, symbol: &str) -> Res<Token<'a>> {
        let t = self.next(i)?;
        if t.is_sym(symbol) {
            Ok(t)
        } else {
            Err(expected(t, &format!("{symbol:?}")))
        }
    }

    /// The token as an identifier: a non-reserved word or a quoted name.
    fn ident(&self, t: Token<'a>) -> Option<Ident> {
        let name = match t.tok {
            Tok::Word(w) if !is_reserved(w) => w.to_string(),
            Tok::Quoted(q) => unescape(q, '"'),
            _ => return None,
        };
        Some(Ident {
            name,
            span: self.span(t.at, t.rest),
        })
    }

    /// Runs `f` one recursion level deeper, failing beyond [`MAX_DEPTH`].
    fn nested<T>(&self, i: &'a str, f: impl FnOnce(&'a str) -> PResult<'a, T>) -> PResult<'a, T> {
        let depth = self.depth.get();
        if depth >= MAX_DEPTH {
            let t = self.next(i)?;
            return Err(failure(t.at, "expression is nested too deeply"));
        }
        self.depth.set(depth + 1);
        let result = f(i);
        self.depth.set(depth);
        result
    }

    /// Updates `h`, the height of `left`, for a new node over `left` and
    /// `others`; fails at `at` when the tree would exceed [`MAX_HEIGHT`].
    fn grow(&self, h: &mut Option<usize>, left: &Expr, others: &[&Expr], at: &str) -> Res<()> {
        let base = h.unwrap_or_else(|| height(left));
        let new = 1 + others.iter().map(|e| height(e)).fold(base, usize::max);
        if new > MAX_HEIGHT {
            return Err(failure(at, "expression is nested too deeply"));
        }
        *h = Some(new);
        Ok(())
    }

    /// `item (, item)*`
    fn comma_list<T>(
        &self,
        i: &'a str,
        mut item: impl FnMut(&'a str) -> PResult<'a, T>,
    ) -> PResult<'a, Vec<T>> {
        let (mut i, first) = item(i)?;
        let mut items = vec![first];
        while let Some(comma) = self.sym(i, ",")? {
            let (rest, next) = item(comma.rest)?;
            items.push(next);
            i = rest;
        }
        Ok((i, items))
    }

    /// One statement, an optional `;`, and nothing after:
    /// `[EXPLAIN [ANALYZE]] select`, `DESCRIBE table`, `DESCRIBE select`,
    /// `SHOW TABLES` or `SUMMARIZE table`.
    fn statement(&self, i: &'a str) -> PResult<'a, Statement> {
        let first = self.next(i)?;
        if first.tok == Tok::End {
            return Err(failure(first.at, "empty statement"));
        }
        if let Some(e) = not_yet(first, STATEMENTS_NOT_YET) {
            return Err(e);
        }
        let (i, statement) = if first.is_keyword("EXPLAIN") {
            match self.keyword(first.rest, "ANALYZE")? {
                Some(analyze) => {
                    let (i, query) = self.query(analyze.rest)?;
                    (i, Statement::ExplainAnalyze(Box::new(query)))
                }
                None => {
                    let (i, query) = self.query(first.rest)?;
                    (i, Statement::Explain(Box::new(query)))
                }
            }
        } else if first.is_keyword("DESCRIBE") {
            let second = self.next(first.rest)?;
            if second.is_keyword("SELECT")
                || second.is_keyword("WITH")
                || second.is_keyword("VALUES")
            {
                let (i, query) = self.query(first.rest)?;
                (i, Statement::Describe(Describe::Query(Box::new(query))))
            } else {
                let (i, table) = self.table_ref(first.rest)?;
                (i, Statement::Describe(Describe::Table(table)))
            }
        } else if first.is_keyword("SHOW") {
            let tables = self.expect_keyword(first.rest, "TABLES")?;
            (tables.rest, Statement::ShowTables)
        } else if first.is_keyword("CREATE") {
            let mut rest = first.rest;
            let mut replace = false;
            if let Some(or) = self.keyword(rest, "OR")? {
                rest = self.expect_keyword(or.rest, "REPLACE")?.rest;
                replace = true;
            }
            let t = self.next(rest)?;
            if !t.is_keyword("TABLE") {
                return Err(failure(
                    t.at,
                    "only CREATE TABLE name AS SELECT … is supported",
                ));
            }
            let n = self.next(t.rest)?;
            let name = self.ident(n).ok_or_else(|| expected(n, "a table name"))?;
            let as_ = self.next(n.rest)?;
            if !as_.is_keyword("AS") {
                return Err(failure(
                    as_.at,
                    "expected AS: tables are created from a query (CREATE TABLE name AS SELECT …)",
                ));
            }
            let (i, query) = self.query(as_.rest)?;
            let query = Box::new(query);
            (
                i,
                Statement::CreateTableAs {
                    name,
                    query,
                    replace,
                },
            )
        } else if first.is_keyword("DROP") {
            let t = self.expect_keyword(first.rest, "TABLE")?;
            let mut rest = t.rest;
            let mut if_exists = false;
            if let Some(if_) = self.keyword(rest, "IF")? {
                rest = self.expect_keyword(if_.rest, "EXISTS")?.rest;
                if_exists = true;
            }
            let n = self.next(rest)?;
            let (name, file) = match n.tok {
                Tok::Str(raw) => (
                    Ident {
                        name: unescape(raw, '\''),
                        span: self.span(n.at, n.rest),
                    },
                    true,
                ),
                _ => (
                    self.ident(n).ok_or_else(|| expected(n, "a table name"))?,
                    false,
                ),
            };
            (
                n.rest,
                Statement::DropTable {
                    name,
                    if_exists,
                    file,
                },
            )
        } else if first.is_keyword("SUMMARIZE") {
            let (i, table) = self.table_ref(first.rest)?;
            (i, Statement::Summarize(table))
        } else {
            let (i, query) = self.query(i)?;
            match query.as_select() {
                Some(_) => match query.body {
                    SetExpr::Select(select) => (i, Statement::Select(select)),
                    SetExpr::Operation { .. } | SetExpr::Values { .. } => {
                        unreachable!("as_select is a SELECT")
                    }
                },
                None => (i, Statement::Query(Box::new(query))),
            }
        };
        let mut i = i;
        if let Some(semicolon) = self.sym(i, ";")? {
            i = semicolon.rest;
        }
        let end = self.next(i)?;
        if end.tok != Tok::End {
            return Err(not_yet(end, NOT_YET).unwrap_or_else(|| expected(end, "end of statement")));
        }
        Ok((end.rest, statement))
    }

    /// `[WITH name AS (query), …] body [ORDER BY …] [LIMIT n] [OFFSET n]`,
    /// where the body is a SELECT or set operations of SELECTs.
    fn query(&self, i: &'a str) -> PResult<'a, Query> {
        let start = self.next(i)?;
        let mut i = i;
        let mut ctes = Vec::new();
        if start.is_keyword("WITH") {
            if let Some(r) = self.keyword(start.rest, "RECURSIVE")? {
                return Err(failure(r.at, "WITH RECURSIVE is not supported yet"));
            }
            (i, ctes) = self.comma_list(start.rest, |i| self.cte(i))?;
        }
        let (i, mut body) = self.set_expr(i)?;
        // ORDER BY, LIMIT and OFFSET belong to a lone SELECT, or else to
        // the whole set operation.
        let mut tail = empty_select();
        // ORDER BY ALL: every output column, when the leftmost SELECT's
        // items are not `*`.
        let mut leftmost = &body;
        while let SetExpr::Operation { left, .. } = leftmost {
            leftmost = left;
        }
        let width = match leftmost {
            SetExpr::Select(s) => s
                .projection
                .iter()
                .all(|p| matches!(p, SelectItem::Expr { .. }))
                .then_some(s.projection.len()),
            SetExpr::Operation { .. } | SetExpr::Values { .. } => None,
        };
        let i = self.select_tail(i, &mut tail, width)?;
        let mut query = Query::plain(empty_select());
        if let SetExpr::Select(select) = &mut body {
            select.order_by = tail.order_by;
            select.limit = tail.limit;
            select.offset = tail.offset;
            select.span.end = select.span.end.max(self.pos(i));
        } else {
            query.order_by = tail.order_by;
            query.limit = tail.limit;
            query.offset = tail.offset;
        }
        query.ctes = ctes;
        query.body = body;
        query.span = self.span(start.at, i);
        Ok((i, query))
    }

    /// `name AS (query)` of a `WITH`.
    fn cte(&self, i: &'a str) -> PResult<'a, Cte> {
        let t = self.next(i)?;
        let name = self.ident(t).ok_or_else(|| expected(t, "a name for the WITH query"))?;
        let as_ = self.expect_keyword(t.rest, "AS")?;
        let open = self.expect_sym(as_.rest, "(")?;
        let (rest, query) = self.nested(open.rest, |i| self.query(i))?;
        let close = self.expect_sym(rest, ")")?;
        Ok((close.rest, Cte { name, query }))
    }

    /// `term ((UNION | EXCEPT) [ALL | DISTINCT] term)*`, where a term is
    /// `select (INTERSECT [ALL | DISTINCT] select)*`.
    fn set_expr(&self, i: &'a str) -> PResult<'a, SetExpr> {
        let (mut i, mut left) = self.intersect_term(i)?;
        loop {
            let t = self.next(i)?;
            let op = if t.is_keyword("UNION") {
                SetOp::Union
            } else if t.is_keyword("EXCEPT") {
                SetOp::Except
            } else {
                return Ok((i, left));
            };
            let (rest, all) = self.set_quantifier(t)?;
            let (rest, right) = self.intersect_term(rest)?;
            i = rest;
            left = SetExpr::Operation {
                op,
                all,
                left: Box::new(left),
                right: Box::new(right),
            };
        }
    }

    fn intersect_term(&self, i: &'a str) -> PResult<'a, SetExpr> {
        let (mut i, mut left) = self.set_operand(i)?;
        while let Some(t) = self.keyword(i, "INTERSECT")? {
            let (rest, all) = self.set_quantifier(t)?;
            let (rest, right) = self.set_operand(rest)?;
            i = rest;
            left = SetExpr::Operation {
                op: SetOp::Intersect,
                all,
                left: Box::new(left),
                right: Box::new(right),
            };
        }
        Ok((i, left))
    }

    /// A SELECT or a `VALUES` list.
    fn set_operand(&self, i: &'a str) -> PResult<'a, SetExpr> {
        let t = self.next(i)?;
        if !t.is_keyword("VALUES") {
            let (i, select) = self.select(i)?;
            return Ok((i, SetExpr::Select(Box::new(select))));
        }
        let (rest, rows) = self.comma_list(t.rest, |i| {
            let open = self.expect_sym(i, "(")?;
            let (rest, row) = self.comma_list(open.rest, |i| self.expr(i))?;
            let close = self.expect_sym(rest, ")")?;
            Ok((close.rest, (row, open.at)))
        })?;
        let width = rows[0].0.len();
        if let Some((row, at)) = rows.iter().find(|(row, _)| row.len() != width) {
            return Err(failure(
                at,
                format!(
                    "every VALUES row needs the same number of values: the first has {width}, this one {}",
                    row.len()
                ),
            ));
        }
        let rows = rows.into_iter().map(|(row, _)| row).collect();
        Ok((
            rest,
            SetExpr::Values {
                rows,
                span: self.span(t.at, rest),
            },
        ))
    }

    /// `[ALL | DISTINCT]` after the set operation's keyword `op`.
    fn set_quantifier(&self, op: Token<'a>) -> Res<(&'a str, bool)> {
        let t = self.next(op.rest)?;
        if t.is_keyword("ALL") {
            Ok((t.rest, true))
        } else if t.is_keyword("DISTINCT") {
            Ok((t.rest, false))
        } else {
            Ok((op.rest, false))
        }
    }

    /// `item (, item)*` where an item is `factor ([kind] JOIN factor
    /// [ON expr | USING (names)])*`: a comma binds looser than JOIN.
    fn table_list(&self, i: &'a str) -> PResult<'a, FromItem> {
        let (mut i, mut left) = self.join_chain(i)?;
        while let Some(comma) = self.sym(i, ",")? {
            let (rest, right) = self.join_chain(comma.rest)?;
            let span = left.span().union(right.span());
            i = rest;
            left = FromItem::Join(Box::new(Join {
                left,
                right,
                kind: JoinKind::Comma,
                constraint: JoinConstraint::None,
                span,
            }));
        }
        Ok((i, left))
    }

    fn join_chain(&self, i: &'a str) -> PResult<'a, FromItem> {
        let (mut i, mut left) = self.table_factor(i)?;
        loop {
            let t = self.next(i)?;
            let (kind, after) = if t.is_keyword("JOIN") {
                (JoinKind::Inner, t.rest)
            } else if t.is_keyword("INNER") {
                (JoinKind::Inner, self.expect_keyword(t.rest, "JOIN")?.rest)
            } else if t.is_keyword("CROSS") {
                (JoinKind::Cross, self.expect_keyword(t.rest, "JOIN")?.rest)
            } else if t.is_keyword("LEFT") || t.is_keyword("RIGHT") || t.is_keyword("FULL") {
                let kind = if t.is_keyword("LEFT") {
                    JoinKind::Left
                } else if t.is_keyword("RIGHT") {
                    JoinKind::Right
                } else {
                    JoinKind::Full
                };
                let mut rest = t.rest;
                if let Some(outer) = self.keyword(rest, "OUTER")? {
                    rest = outer.rest;
                }
                (kind, self.expect_keyword(rest, "JOIN")?.rest)
            } else if t.is_keyword("NATURAL") {
                return Err(failure(t.at, "NATURAL joins are not supported yet; use USING"));
            } else {
                return Ok((i, left));
            };
            let (rest, right) = self.table_factor(after)?;
            let (rest, constraint) = if kind == JoinKind::Cross {
                (rest, JoinConstraint::None)
            } else if let Some(on) = self.keyword(rest, "ON")? {
                let (rest, e) = self.expr(on.rest)?;
                (rest, JoinConstraint::On(e))
            } else if let Some(using) = self.keyword(rest, "USING")? {
                let open = self.expect_sym(using.rest, "(")?;
                let (rest, names) = self.comma_list(open.rest, |i| {
                    let t = self.next(i)?;
                    let name = self.ident(t).ok_or_else(|| expected(t, "a column name"))?;
                    Ok((t.rest, name))
                })?;
                let close = self.next(rest)?;
                if !close.is_sym(")") {
                    return Err(expected(close, "\",\" or \")\""));
                }
                (close.rest, JoinConstraint::Using(names))
            } else {
                let t = self.next(rest)?;
                return Err(expected(t, "ON or USING"));
            };
            let span = Span::new(left.span().start, self.pos(rest));
            i = rest;
            left = FromItem::Join(Box::new(Join {
                left,
                right,
                kind,
                constraint,
                span,
            }));
        }
    }

    /// A table (`name`, `'path'`, `function(args)`) or `(query)`, with an
    /// optional alias.
    fn table_factor(&self, i: &'a str) -> PResult<'a, FromItem> {
        let t = self.next(i)?;
        if t.is_sym("(") {
            let inner = self.next(t.rest)?;
            if !["SELECT", "WITH", "VALUES"].iter().any(|k| inner.is_keyword(k)) {
                return Err(expected(inner, "a subquery (SELECT …)"));
            }
            let (rest, query) = self.nested(t.rest, |i| self.query(i))?;
            let close = self.expect_sym(rest, ")")?;
            let (mut rest, alias) = self.alias(close.rest)?;
            let mut columns = Vec::new();
            if alias.is_some()
                && let Some(open) = self.sym(rest, "(")?
            {
                let (r, names) = self.comma_list(open.rest, |i| {
                    let t = self.next(i)?;
                    let name = self.ident(t).ok_or_else(|| expected(t, "a column name"))?;
                    Ok((t.rest, name))
                })?;
                rest = self.expect_sym(r, ")")?.rest;
                columns = names;
            }
            let span = self.span(t.at, rest);
            let query = Box::new(query);
            return Ok((
                rest,
                FromItem::Subquery {
                    query,
                    alias,
                    columns,
                    span,
                },
            ));
        }
        let (rest, table) = self.table_ref(i)?;
        let (rest, alias) = self.alias(rest)?;
        Ok((rest, FromItem::Table { table, alias }))
    }

    /// `[AS] name`, where a name without `AS` is not a clause word.
    fn alias(&self, i: &'a str) -> PResult<'a, Option<Ident>> {
        if let Some(as_) = self.keyword(i, "AS")? {
            let t = self.next(as_.rest)?;
            let name = self.ident(t).ok_or_else(|| expected(t, "an alias"))?;
            return Ok((t.rest, Some(name)));
        }
        let t = self.next(i)?;
        if CLAUSE_WORDS.iter().any(|w| t.is_keyword(w)) {
            return Ok((i, None));
        }
        match self.ident(t) {
            Some(name) => Ok((t.rest, Some(name))),
            None => Ok((i, None)),
        }
    }

    /// A table: `name`, `'path'` or `function(args)`.
    fn table_ref(&self, i: &'a str) -> PResult<'a, TableRef> {
        let t = self.next(i)?;
        if t.is_sym("(") {
            return Err(failure(t.at, "subqueries are not supported yet"));
        }
        if let Tok::Str(raw) = t.tok {
            let path = unescape(raw, '\'');
            let span = self.span(t.at, t.rest);
            return Ok((t.rest, TableRef::File { path, span }));
        }
        let name = self.ident(t).ok_or_else(|| expected(t, "a table name"))?;
        let Some(open) = self.sym(t.rest, "(")? else {
            return Ok((t.rest, TableRef::Named(name)));
        };
        let mut args = Vec::new();
        let mut i = open.rest;
        if self.sym(i, ")")?.is_none() {
            (i, args) = self.comma_list(i, |i| self.table_arg(i))?;
        }
        let close = self.next(i)?;
        if !close.is_sym(")") {
            return Err(expected(close, "\",\" or \")\""));
        }
        let span = Span::new(name.span.start, self.pos(close.rest));
        Ok((close.rest, TableRef::Function { name, args, span }))
    }

    /// `value` or `name => value` (also `name = value`), where a value is an
    /// expression or `[expr, …]`.
    fn table_arg(&self, i: &'a str) -> PResult<'a, TableArg> {
        let t = self.next(i)?;
        let mut name = None;
        let mut i = i;
        if let Some(ident) = self.ident(t) {
            let arrow = self.next(t.rest)?;
            if arrow.is_sym("=>") || arrow.is_sym("=") {
                (i, name) = (arrow.rest, Some(ident));
            }
        }
        let (i, value) = match self.sym(i, "[")? {
            Some(open) => {
                let mut items = Vec::new();
                let mut rest = open.rest;
                if self.sym(rest, "]")?.is_none() {
                    (rest, items) = self.comma_list(rest, |i| self.expr(i))?;
                }
                let close = self.next(rest)?;
                if !close.is_sym("]") {
                    return Err(expected(close, "\",\" or \"]\""));
                }
                let span = self.span(open.at, close.rest);
                (close.rest, TableArgValue::List { items, span })
            }
            None => {
                let (rest, e) = self.expr(i)?;
                (rest, TableArgValue::Expr(e))
            }
        };
        Ok((i, TableArg { name, value }))
    }

    fn select(&self, i: &'a str) -> PResult<'a, Select> {
        let select = self.expect_keyword(i, "SELECT")?;
        let mut i = select.rest;
        let mut distinct = false;
        if let Some(d) = self.keyword(i, "DISTINCT")? {
            (i, distinct) = (d.rest, true);
        } else if let Some(all) = self.keyword(i, "ALL")? {
            i = all.rest;
        }
        let (mut i, projection) = self.comma_list(i, |i| self.select_item(i))?;

        let mut from = None;
        if let Some(t) = self.keyword(i, "FROM")? {
            let (rest, table) = self.table_list(t.rest)?;
            (i, from) = (rest, Some(table));
        }
        let mut selection = None;
        if let Some(t) = self.keyword(i, "WHERE")? {
            let (rest, e) = self.expr(t.rest)?;
            (i, selection) = (rest, Some(e));
        }
        let mut group_by = Vec::new();
        let mut group_by_all = false;
        if let Some(t) = self.keyword(i, "GROUP")? {
            let by = self.expect_keyword(t.rest, "BY")?;
            if let Some(all) = self.keyword(by.rest, "ALL")? {
                (i, group_by_all) = (all.rest, true);
            } else {
                (i, group_by) = self.comma_list(by.rest, |i| self.expr(i))?;
            }
        }
        let mut having = None;
        if let Some(t) = self.keyword(i, "HAVING")? {
            let (rest, e) = self.expr(t.rest)?;
            (i, having) = (rest, Some(e));
        }
        let mut windows = Vec::new();
        if let Some(t) = self.keyword(i, "WINDOW")? {
            (i, windows) = self.comma_list(t.rest, |i| {
                let t = self.next(i)?;
                let name = self.ident(t).ok_or_else(|| expected(t, "a window name"))?;
                let as_ = self.expect_keyword(t.rest, "AS")?;
                let open = self.expect_sym(as_.rest, "(")?;
                let (rest, spec) = self.window_body(open.rest, open.at)?;
                Ok((rest, NamedWindow { name, spec }))
            })?;
        }
        let mut qualify = None;
        if let Some(t) = self.keyword(i, "QUALIFY")? {
            let (rest, e) = self.expr(t.rest)?;
            (i, qualify) = (rest, Some(e));
        }
        let span = self.span(select.at, i);
        let select = Select {
            distinct,
            projection,
            from,
            selection,
            group_by,
            group_by_all,
            having,
            windows,
            qualify,
            order_by: Vec::new(),
            limit: None,
            offset: None,
            span,
        };
        Ok((i, select))
    }

    /// `[ORDER BY …] [LIMIT n] [OFFSET n]` into `select`.
    /// `ORDER BY ALL [ASC|DESC] [NULLS …]` orders by each of the `width`
    /// output columns in turn (`None`: a select list with `*`, refused).
    fn select_tail(&self, i: &'a str, select: &mut Select, width: Option<usize>) -> Res<&'a str> {
        let mut i = i;
        let mut order_by = Vec::new();
        if let Some(t) = self.keyword(i, "ORDER")? {
            let by = self.expect_keyword(t.rest, "BY")?;
            if let Some(all) = self.keyword(by.rest, "ALL")? {
                let Some(width) = width else {
                    return Err(failure(all.at, "ORDER BY ALL needs a select list without *"));
                };
                // ALL followed by ASC/DESC/NULLS reads as an order item
                // whose expression is the word; its direction applies to all.
                let (rest, item) = self.order_item(by.rest)?;
                let span = self.span(all.at, all.rest);
                order_by = (1..=width as i64)
                    .map(|n| OrderByItem {
                        expr: Expr {
                            kind: ExprKind::Literal(Literal::Int(n)),
                            span,
                        },
                        ..item.clone()
                    })
                    .collect();
                i = rest;
            } else {
                (i, order_by) = self.comma_list(by.rest, |i| self.order_item(i))?;
            }
        }
        let mut limit = None;
        if let Some(t) = self.keyword(i, "LIMIT")? {
            let (rest, n) = self.integer(t.rest, i64::MIN.into(), i64::MAX.into(), "limit")?;
            (i, limit) = (rest, Some(n as i64));
        }
        let mut offset = None;
        if let Some(t) = self.keyword(i, "OFFSET")? {
            let (rest, n) = self.integer(t.rest, 0, u64::MAX.into(), "offset")?;
            (i, offset) = (rest, Some(n as u64));
        }
        select.order_by = order_by;
        select.limit = limit;
        select.offset = offset;
        Ok(i)
    }

    /// `*`, `expr`, `expr AS alias`, `expr alias`.
    fn select_item(&self, i: &'a str) -> PResult<'a, SelectItem> {
        if let Some(star) = self.sym(i, "*")? {
            let span = self.span(star.at, star.rest);
            let (rest, options) = self.star_options(star.rest)?;
            return Ok((rest, SelectItem::Wildcard(span, options)));
        }
        let t = self.next(i)?;
        if let Some(table) = self.ident(t) {
            let dot = self.next(t.rest)?;
            if dot.is_sym(".")
                && let Some(star) = self.sym(dot.rest, "*")?
            {
                let span = self.span(t.at, star.rest);
                let (rest, options) = self.star_options(star.rest)?;
                let item = SelectItem::QualifiedWildcard {
                    table,
                    span,
                    options,
                };
                return Ok((rest, item));
            }
        }
        let (i, expr) = self.expr(i)?;
        if let Some(as_) = self.keyword(i, "AS")? {
            let name = self.next(as_.rest)?;
            let alias = self.ident(name).ok_or_else(|| expected(name, "an alias"))?;
            return Ok((
                name.rest,
                SelectItem::Expr {
                    expr,
                    alias: Some(alias),
                },
            ));
        }
        let t = self.next(i)?;
        if let Some(e) = not_yet(t, NOT_YET) {
            return Err(e);
        }
        if CLAUSE_WORDS.iter().any(|w| t.is_keyword(w)) {
            return Ok((i, SelectItem::Expr { expr, alias: None }));
        }
        match self.ident(t) {
            Some(alias) => Ok((
                t.rest,
                SelectItem::Expr {
                    expr,
                    alias: Some(alias),
                },
            )),
            None => Ok((i, SelectItem::Expr { expr, alias: None })),
        }
    }

    /// `[EXCLUDE (name, …) | EXCLUDE name] [REPLACE (expr AS name, …)]`
    /// after a `*` (DuckDB's star modifiers).
    fn star_options(&self, mut i: &'a str) -> PResult<'a, StarOptions> {
        let mut options = StarOptions::default();
        if let Some(t) = self.keyword(i, "EXCLUDE")? {
            let name = |i: &'a str| -> PResult<'a, Ident> {
                let t = self.next(i)?;
                let id = self.ident(t).ok_or_else(|| expected(t, "a column name"))?;
                Ok((t.rest, id))
            };
            if let Some(open) = self.sym(t.rest, "(")? {
                let (rest, names) = self.comma_list(open.rest, name)?;
                i = self.expect_sym(rest, ")")?.rest;
                options.exclude = names;
            } else {
                let (rest, id) = name(t.rest)?;
                (i, options.exclude) = (rest, vec![id]);
            }
        }
        if let Some(t) = self.keyword(i, "REPLACE")? {
            let open = self.expect_sym(t.rest, "(")?;
            let (rest, items) = self.comma_list(open.rest, |i| {
                let (i, e) = self.expr(i)?;
                let as_ = self.expect_keyword(i, "AS")?;
                let t = self.next(as_.rest)?;
                let id = self.ident(t).ok_or_else(|| expected(t, "a column name"))?;
                Ok((t.rest, (e, id)))
            })?;
            i = self.expect_sym(rest, ")")?.rest;
            options.replace = items;
        }
        Ok((i, options))
    }

    /// `expr [ASC|DESC] [NULLS FIRST|LAST]`
    fn order_item(&self, i: &'a str) -> PResult<'a, OrderByItem> {
        let (mut i, expr) = self.expr(i)?;
        let mut desc = false;
        let t = self.next(i)?;
        if t.is_keyword("ASC") || t.is_keyword("DESC") {
            desc = t.is_keyword("DESC");
            i = t.rest;
        }
        let mut nulls_first = None;
        if let Some(nulls) = self.keyword(i, "NULLS")? {
            let t = self.next(nulls.rest)?;
            if !(t.is_keyword("FIRST") || t.is_keyword("LAST")) {
                return Err(expected(t, "FIRST or LAST"));
            }
            nulls_first = Some(t.is_keyword("FIRST"));
            i = t.rest;
        }
        let item = OrderByItem {
            expr,
            desc,
            nulls_first,
        };
        Ok((i, item))
    }

    /// `[+|-] digits` within `min..=max` (for `LIMIT` and `OFFSET`).
    fn integer(&self, i: &'a str, min: i128, max: i128, what: &str) -> PResult<'a, i128> {
        let mut t = self.next(i)?;
        let start = t.at;
        let negative = t.is_sym("-");
        if negative || t.is_sym("+") {
            t = self.next(t.rest)?;
        }
        let Tok::Number(digits) = t.tok else {
            return Err(expected(t, "an integer"));
        };
        if !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(expected(t, "an integer"));
        }
        let value = digits
            .parse::<i128>()
            .ok()
            .map(|v| if negative { -v } else { v })
            .filter(|v| (min..=max).contains(v))
            .ok_or_else(|| failure(start, format!("{what} out of range")))?;
        Ok((t.rest, value))
    }

    /// Any expression (the lowest precedence level), one recursion level
    /// deeper.
    fn expr(&self, i: &'a str) -> PResult<'a, Expr> {
        self.nested(i, |i| self.or_expr(i))
    }

    /// Left-associative chain `operand (op operand)*` where `op_of` says
    /// which tokens are this level's operators.
    fn chain(
        &self,
        i: &'a str,
        operand: fn(&Self, &'a str) -> PResult<'a, Expr>,
        op_of: fn(Tok<'_>) -> Option<BinaryOp>,
    ) -> PResult<'a, Expr> {
        let (mut i, mut left) = operand(self, i)?;
        let mut h = None;
        loop {
            let t = self.next(i)?;
            let Some(op) = op_of(t.tok) else {
                return Ok((i, left));
            };
            let (rest, right) = operand(self, t.rest)?;
            self.grow(&mut h, &left, &[&right], t.at)?;
            left = binary(op, left, right);
            i = rest;
        }
    }

    fn or_expr(&self, i: &'a str) -> PResult<'a, Expr> {
        self.chain(i, Self::and_expr, |t| {
            matches!(t, Tok::Word(w) if w.eq_ignore_ascii_case("OR")).then_some(BinaryOp::Or)
        })
    }

    fn and_expr(&self, i: &'a str) -> PResult<'a, Expr> {
        self.chain(i, Self::not_expr, |t| {
            matches!(t, Tok::Word(w) if w.eq_ignore_ascii_case("AND")).then_some(BinaryOp::And)
        })
    }

    /// `NOT not_expr | comparison`
    fn not_expr(&self, i: &'a str) -> PResult<'a, Expr> {
        let Some(not) = self.keyword(i, "NOT")? else {
            return self.comparison(i);
        };
        let (rest, operand) = self.nested(not.rest, |i| self.not_expr(i))?;
        let span = Span::new(self.pos(not.at), operand.span.end);
        let kind = ExprKind::Unary {
            op: UnaryOp::Not,
            expr: Box::new(operand),
        };
        Ok((rest, Expr { kind, span }))
    }

    /// `concat ( cmp concat | IS [NOT] NULL | [NOT] IN (…)
    /// | [NOT] BETWEEN concat AND concat | [NOT] [I]LIKE concat )*`
    fn comparison(&self, i: &'a str) -> PResult<'a, Expr> {
        let (mut i, mut left) = self.concat(i)?;
        let mut h = None;
        loop {
            let t = self.next(i)?;
            let start = left.span.start;
            let (rest, kind) = if let Some(op) = comparison_op(t.tok) {
                if let Some((rest, all, query)) = self.quantified(t.rest)? {
                    self.grow(&mut h, &left, &[], t.at)?;
                    let kind = ExprKind::Quantified {
                        expr: Box::new(left),
                        op,
                        all,
                        query: Box::new(query),
                    };
                    i = rest;
                    left = Expr {
                        kind,
                        span: Span::new(start, self.pos(rest)),
                    };
                    continue;
                }
                let (rest, right) = self.concat(t.rest)?;
                self.grow(&mut h, &left, &[&right], t.at)?;
                (rest, binary_kind(op, left, right))
            } else if t.is_keyword("IS") {
                let mut null = self.next(t.rest)?;
                let negated = null.is_keyword("NOT");
                if negated {
                    null = self.next(null.rest)?;
                }
                if !null.is_keyword("NULL") {
                    return Err(expected(null, if negated { "NULL" } else { "NULL or NOT" }));
                }
                self.grow(&mut h, &left, &[], t.at)?;
                let expr = Box::new(left);
                (null.rest, ExprKind::IsNull { expr, negated })
            } else {
                let negated = t.is_keyword("NOT");
                let k = if negated { self.next(t.rest)? } else { t };
                if k.is_keyword("IN") {
                    let open = self.expect_sym(k.rest, "(")?;
                    let first = self.next(open.rest)?;
                    if first.is_keyword("SELECT") || first.is_keyword("WITH") {
                        let (rest, query) = self.nested(open.rest, |i| self.query(i))?;
                        let close = self.expect_sym(rest, ")")?;
                        self.grow(&mut h, &left, &[], t.at)?;
                        let kind = ExprKind::InSubquery {
                            expr: Box::new(left),
                            query: Box::new(query),
                            negated,
                        };
                        i = close.rest;
                        left = Expr {
                            kind,
                            span: Span::new(start, self.pos(close.rest)),
                        };
                        continue;
                    }
                    let (rest, list) = self.comma_list(open.rest, |i| self.expr(i))?;
                    let close = self.next(rest)?;
                    if !close.is_sym(")") {
                        return Err(expected(close, "\",\" or \")\""));
                    }
                    let refs: Vec<&Expr> = list.iter().collect();
                    self.grow(&mut h, &left, &refs, t.at)?;
                    let expr = Box::new(left);
                    (
                        close.rest,
                        ExprKind::InList {
                            expr,
                            list,
                            negated,
                        },
                    )
                } else if k.is_keyword("BETWEEN") {
                    let (rest, low) = self.concat(k.rest)?;
                    let and = self.expect_keyword(rest, "AND")?;
                    let (rest, high) = self.concat(and.rest)?;
                    self.grow(&mut h, &left, &[&low, &high], t.at)?;
                    let (expr, low, high) = (Box::new(left), Box::new(low), Box::new(high));
                    (
                        rest,
                        ExprKind::Between {
                            expr,
                            low,
                            high,
                            negated,
                        },
                    )
                } else if k.is_keyword("LIKE") || k.is_keyword("ILIKE") {
                    let case_insensitive = k.is_keyword("ILIKE");
                    let (rest, pattern) = self.concat(k.rest)?;
                    self.grow(&mut h, &left, &[&pattern], t.at)?;
                    let (expr, pattern) = (Box::new(left), Box::new(pattern));
                    (
                        rest,
                        ExprKind::Like {
                            expr,
                            pattern,
                            negated,
                            case_insensitive,
                        },
                    )
                } else if negated {
                    return Err(expected(k, "IN, BETWEEN, LIKE or ILIKE"));
                } else {
                    return Ok((i, left));
                }
            };
            i = rest;
            let span = Span::new(start, self.pos(rest));
            left = Expr { kind, span };
        }
    }

    /// `ANY (query)`, `SOME (query)` or `ALL (query)` after a comparison
    /// operator: the rest, whether it is `ALL`, and the query. `None` when
    /// the words are not followed by a parenthesized query (`any` may name
    /// a column; `ALL` is reserved, and an error there).
    fn quantified(&self, i: &'a str) -> Result<Option<(&'a str, bool, Query)>, nom::Err<SqlError>> {
        let word = self.next(i)?;
        let all = word.is_keyword("ALL");
        if !(all || word.is_keyword("ANY") || word.is_keyword("SOME")) {
            return Ok(None);
        }
        let open = self.next(word.rest)?;
        if !open.is_sym("(") {
            // ALL is reserved; `any` and `some` may name columns.
            return if all {
                Err(expected(open, "a subquery in parentheses after ALL"))
            } else {
                Ok(None)
            };
        }
        let first = self.next(open.rest)?;
        if !(first.is_keyword("SELECT") || first.is_keyword("WITH")) {
            return Err(expected(first, "a subquery (SELECT …)"));
        }
        let (rest, query) = self.nested(open.rest, |i| self.query(i))?;
        let close = self.expect_sym(rest, ")")?;
        Ok(Some((close.rest, all, query)))
    }

    /// `additive ( || additive )*`
    fn concat(&self, i: &'a str) -> PResult<'a, Expr> {
        self.chain(i, Self::additive, |t| match t {
            Tok::Sym("||") => Some(BinaryOp::Concat),
            _ => None,
        })
    }

    fn additive(&self, i: &'a str) -> PResult<'a, Expr> {
        self.chain(i, Self::multiplicative, |t| match t {
            Tok::Sym("+") => Some(BinaryOp::Plus),
            Tok::Sym("-") => Some(BinaryOp::Minus),
            _ => None,
        })
    }

    fn multiplicative(&self, i: &'a str) -> PResult<'a, Expr> {
        self.chain(i, Self::unary, |t| match t {
            Tok::Sym("*") => Some(BinaryOp::Multiply),
            Tok::Sym("/") => Some(BinaryOp::Divide),
            Tok::Sym("%") => Some(BinaryOp::Modulo),
            _ => None,
        })
    }

    /// `- unary | + unary | postfix`
    fn unary(&self, i: &'a str) -> PResult<'a, Expr> {
        let t = self.next(i)?;
        if !(t.is_sym("-") || t.is_sym("+")) {
            return self.postfix(i);
        }
        let (rest, operand) = self.nested(t.rest, |i| self.unary(i))?;
        let span = Span::new(self.pos(t.at), operand.span.end);
        if t.is_sym("+") {
            return Ok((
                rest,
                Expr {
                    kind: operand.kind,
                    span,
                },
            ));
        }
        let text = self.src.get(operand.span.start..operand.span.end);
        let kind = if matches!(operand.kind, ExprKind::Literal(Literal::Float(_)))
            && text == Some("9223372036854775808")
        {
            ExprKind::Literal(Literal::Int(i64::MIN))
        } else {
            ExprKind::Unary {
                op: UnaryOp::Neg,
                expr: Box::new(operand),
            }
        };
        Ok((rest, Expr { kind, span }))
    }

    /// `primary (:: type)*`
    fn postfix(&self, i: &'a str) -> PResult<'a, Expr> {
        let (mut i, mut e) = self.primary(i)?;
        let mut h = None;
        while let Some(colons) = self.sym(i, "::")? {
            let (rest, to) = self.type_name(colons.rest)?;
            self.grow(&mut h, &e, &[], colons.at)?;
            let span = Span::new(e.span.start, self.pos(rest));
            let kind = ExprKind::Cast {
                expr: Box::new(e),
                to,
                try_cast: false,
            };
            (i, e) = (rest, Expr { kind, span });
        }
        Ok((i, e))
    }

    /// Literal, column, `(expr)`, function call, `CASE`, `CAST`, `INTERVAL`.
    fn primary(&self, i: &'a str) -> PResult<'a, Expr> {
        let t = self.next(i)?;
        let span = self.span(t.at, t.rest);
        let literal = |l| {
            Ok((
                t.rest,
                Expr {
                    kind: ExprKind::Literal(l),
                    span,
                },
            ))
        };
        match t.tok {
            Tok::Number(n) => literal(number_literal(n).map_err(|m| failure(t.at, m))?),
            Tok::Str(s) => literal(Literal::String(unescape(s, '\''))),
            Tok::Sym("(")
                if self.keyword(t.rest, "SELECT")?.is_some()
                    || self.keyword(t.rest, "WITH")?.is_some() =>
            {
                let (rest, query) = self.nested(t.rest, |i| self.query(i))?;
                let close = self.expect_sym(rest, ")")?;
                let span = self.span(t.at, close.rest);
                let kind = ExprKind::Subquery(Box::new(query));
                Ok((close.rest, Expr { kind, span }))
            }
            Tok::Sym("(") => {
                let (rest, inner) = self.expr(t.rest)?;
                let close = self.expect_sym(rest, ")")?;
                let span = self.span(t.at, close.rest);
                Ok((
                    close.rest,
                    Expr {
                        kind: inner.kind,
                        span,
                    },
                ))
            }
            Tok::Word(_) if t.is_keyword("SELECT") => Err(failure(
                t.at,
                "a subquery needs parentheses: (SELECT …)",
            )),
            Tok::Word(_) if t.is_keyword("EXISTS") && self.sym(t.rest, "(")?.is_some() => {
                let open = self.expect_sym(t.rest, "(")?;
                let (rest, query) = self.nested(open.rest, |i| self.query(i))?;
                let close = self.expect_sym(rest, ")")?;
                let span = self.span(t.at, close.rest);
                let kind = ExprKind::Exists(Box::new(query));
                Ok((close.rest, Expr { kind, span }))
            }
            Tok::Word(_) if t.is_keyword("NULL") => literal(Literal::Null),
            Tok::Word(_) if t.is_keyword("TRUE") => literal(Literal::Bool(true)),
            Tok::Word(_) if t.is_keyword("FALSE") => literal(Literal::Bool(false)),
            Tok::Word(_) if t.is_keyword("INTERVAL") => self.interval(t),
            Tok::Word(_)
                if (t.is_keyword("DATE") || t.is_keyword("TIMESTAMP"))
                    && matches!(self.next(t.rest)?.tok, Tok::Str(_)) =>
            {
                let s = self.next(t.rest)?;
                let Tok::Str(raw) = s.tok else {
                    return Err(expected(s, "a string"));
                };
                let to = if t.is_keyword("DATE") {
                    TypeName::Date
                } else {
                    TypeName::Timestamp
                };
                let value = Expr {
                    kind: ExprKind::Literal(Literal::String(unescape(raw, '\''))),
                    span: self.span(s.at, s.rest),
                };
                let kind = ExprKind::Cast {
                    expr: Box::new(value),
                    to,
                    try_cast: false,
                };
                Ok((s.rest, Expr { kind, span: self.span(t.at, s.rest) }))
            }
            Tok::Word(_) if t.is_keyword("CASE") => self.case(t),
            Tok::Word(_) if t.is_keyword("CAST") => self.cast(t, false),
            Tok::Word(_) if t.is_keyword("TRY_CAST") && self.sym(t.rest, "(")?.is_some() => {
                self.cast(t, true)
            }
            _ => {
                let Some(name) = self.ident(t) else {
                    return Err(expected(t, "an expression"));
                };
                match self.sym(t.rest, "(")? {
                    Some(open)
                        if name.name.eq_ignore_ascii_case("SUBSTRING")
                            || name.name.eq_ignore_ascii_case("SUBSTR") =>
                    {
                        self.substring(name, open)
                    }
                    Some(open) if name.name.eq_ignore_ascii_case("EXTRACT") => {
                        match self.extract(&name, open)? {
                            Some(parsed) => Ok(parsed),
                            None => self.call(name, open),
                        }
                    }
                    Some(open) => self.call(name, open),
                    None => {
                        if let Some(dot) = self.sym(t.rest, ".")? {
                            let c = self.next(dot.rest)?;
                            let column = self.ident(c).ok_or_else(|| expected(c, "a column name"))?;
                            let kind = ExprKind::QualifiedColumn {
                                table: name.name,
                                column: column.name,
                            };
                            let span = self.span(t.at, c.rest);
                            return Ok((c.rest, Expr { kind, span }));
                        }
                        let kind = ExprKind::Column(name.name);
                        Ok((t.rest, Expr { kind, span }))
                    }
                }
            }
        }
    }

    /// `name ( [*] | [DISTINCT] expr, … )` after the `(`.
    fn call(&self, name: Ident, open: Token<'a>) -> PResult<'a, Expr> {
        let t = self.next(open.rest)?;
        let (mut i, mut args, mut star, mut distinct) = (open.rest, Vec::new(), false, false);
        if t.is_sym("*") {
            (i, star) = (t.rest, true);
        } else if !t.is_sym(")") {
            if t.is_keyword("DISTINCT") {
                (i, distinct) = (t.rest, true);
            }
            (i, args) = self.comma_list(i, |i| self.expr(i))?;
        }
        let mut order_by = Vec::new();
        if !star && let Some(order) = self.keyword(i, "ORDER")? {
            let by = self.expect_keyword(order.rest, "BY")?;
            (i, order_by) = self.comma_list(by.rest, |i| self.order_item(i))?;
        }
        let close = self.next(i)?;
        if !close.is_sym(")") {
            return Err(expected(
                close,
                if star { "\")\"" } else { "\",\" or \")\"" },
            ));
        }
        let mut i = close.rest;
        let mut within_group = false;
        if let Some(within) = self.keyword(i, "WITHIN")? {
            if !order_by.is_empty() {
                return Err(failure(
                    within.at,
                    "an aggregate takes ORDER BY inside the call or WITHIN GROUP, not both",
                ));
            }
            let group = self.expect_keyword(within.rest, "GROUP")?;
            let open = self.expect_sym(group.rest, "(")?;
            let order = self.expect_keyword(open.rest, "ORDER")?;
            let by = self.expect_keyword(order.rest, "BY")?;
            let (rest, items) = self.comma_list(by.rest, |i| self.order_item(i))?;
            let close = self.expect_sym(rest, ")")?;
            (i, order_by, within_group) = (close.rest, items, true);
        }
        let mut filter = None;
        if let Some(t) = self.keyword(i, "FILTER")? {
            let open = self.expect_sym(t.rest, "(")?;
            let where_ = self.expect_keyword(open.rest, "WHERE")?;
            let (rest, p) = self.expr(where_.rest)?;
            let close = self.expect_sym(rest, ")")?;
            (i, filter) = (close.rest, Some(Box::new(p)));
        }
        let span = Span::new(name.span.start, self.pos(i));
        let kind = ExprKind::Function {
            name: name.name,
            args,
            star,
            distinct,
            filter,
            order_by,
            within_group,
        };
        let call = Expr { kind, span };
        let Some(over) = self.keyword(i, "OVER")? else {
            return Ok((i, call));
        };
        let (rest, window) = if let Some(open) = self.sym(over.rest, "(")? {
            self.window_body(open.rest, over.at)?
        } else {
            let t = self.next(over.rest)?;
            let base = self.ident(t).ok_or_else(|| expected(t, "\"(\" or a window name"))?;
            let spec = WindowSpec {
                base: Some(base),
                partition_by: Vec::new(),
                order_by: Vec::new(),
                frame: None,
                span: self.span(over.at, t.rest),
            };
            (t.rest, spec)
        };
        let span = Span::new(name.span.start, self.pos(rest));
        let kind = ExprKind::Window {
            call: Box::new(call),
            window: Box::new(window),
        };
        Ok((rest, Expr { kind, span }))
    }

    /// `[name] [PARTITION BY …] [ORDER BY …] [frame] )` after a window's
    /// `(`; the span starts at `start`.
    fn window_body(&self, i: &'a str, start: &'a str) -> PResult<'a, WindowSpec> {
        let mut i = i;
        let mut base = None;
        let t = self.next(i)?;
        let clause = ["PARTITION", "ORDER", "ROWS", "RANGE"]
            .iter()
            .any(|k| t.is_keyword(k));
        if let (false, Some(name)) = (clause, self.ident(t)) {
            (i, base) = (t.rest, Some(name));
        }
        let mut partition_by = Vec::new();
        if let Some(t) = self.keyword(i, "PARTITION")? {
            let by = self.expect_keyword(t.rest, "BY")?;
            (i, partition_by) = self.comma_list(by.rest, |i| self.expr(i))?;
        }
        let mut order_by = Vec::new();
        if let Some(t) = self.keyword(i, "ORDER")? {
            let by = self.expect_keyword(t.rest, "BY")?;
            (i, order_by) = self.comma_list(by.rest, |i| self.order_item(i))?;
        }
        let mut frame = None;
        let t = self.next(i)?;
        if t.is_keyword("ROWS") || t.is_keyword("RANGE") {
            let rows = t.is_keyword("ROWS");
            let (rest, (start, end)) = if let Some(between) = self.keyword(t.rest, "BETWEEN")? {
                let (rest, start) = self.frame_bound(between.rest)?;
                let and = self.expect_keyword(rest, "AND")?;
                let (rest, end) = self.frame_bound(and.rest)?;
                (rest, (start, end))
            } else {
                let (rest, start) = self.frame_bound(t.rest)?;
                (rest, (start, FrameBound::CurrentRow))
            };
            frame = Some(WindowFrame {
                rows,
                start,
                end,
                span: self.span(t.at, rest),
            });
            i = rest;
        }
        let close = self.expect_sym(i, ")")?;
        let spec = WindowSpec {
            base,
            partition_by,
            order_by,
            frame,
            span: self.span(start, close.rest),
        };
        Ok((close.rest, spec))
    }

    /// `UNBOUNDED PRECEDING|FOLLOWING`, `CURRENT ROW`, `n PRECEDING|FOLLOWING`.
    fn frame_bound(&self, i: &'a str) -> PResult<'a, FrameBound> {
        let t = self.next(i)?;
        if t.is_keyword("CURRENT") {
            let row = self.expect_keyword(t.rest, "ROW")?;
            return Ok((row.rest, FrameBound::CurrentRow));
        }
        let (rest, n) = if t.is_keyword("UNBOUNDED") {
            (t.rest, None)
        } else {
            let (rest, n) = self.integer(i, 0, u64::MAX.into(), "frame offset")?;
            (rest, Some(n as u64))
        };
        let dir = self.next(rest)?;
        let bound = match (n, dir.is_keyword("PRECEDING"), dir.is_keyword("FOLLOWING")) {
            (None, true, _) => FrameBound::UnboundedPreceding,
            (None, _, true) => FrameBound::UnboundedFollowing,
            (Some(n), true, _) => FrameBound::Preceding(n),
            (Some(n), _, true) => FrameBound::Following(n),
            _ => return Err(expected(dir, "PRECEDING or FOLLOWING")),
        };
        Ok((dir.rest, bound))
    }

    /// `substring(s FROM start [FOR length])` (SQL's form) or
    /// `substring(s, start[, length])` after `substring (`; both give a
    /// call with the arguments in that order.
    fn substring(&self, name: Ident, open: Token<'a>) -> PResult<'a, Expr> {
        let (i, s) = self.expr(open.rest)?;
        let Some(from) = self.keyword(i, "FROM")? else {
            return self.call(name, open);
        };
        let (mut i, start) = self.expr(from.rest)?;
        let mut args = vec![s, start];
        if let Some(for_) = self.keyword(i, "FOR")? {
            let (rest, length) = self.expr(for_.rest)?;
            args.push(length);
            i = rest;
        }
        let close = self.expect_sym(i, ")")?;
        let span = Span::new(name.span.start, self.pos(close.rest));
        Ok((close.rest, Expr::call(&name.name, args, span)))
    }

    /// `EXTRACT ( field FROM expr )` after `EXTRACT (`, where the field is a
    /// word, a quoted name or a string; `None` (nothing consumed) when the
    /// parentheses do not start with `field FROM`, so that
    /// `extract('minute', ts)` stays an ordinary call.
    fn extract(&self, name: &Ident, open: Token<'a>) -> Res<Option<(&'a str, Expr)>> {
        let t = self.next(open.rest)?;
        let field = match t.tok {
            Tok::Str(s) => Some(Ident {
                name: unescape(s, '\''),
                span: self.span(t.at, t.rest),
            }),
            _ => self.ident(t),
        };
        let Some(field) = field else {
            return Ok(None);
        };
        let Some(from) = self.keyword(t.rest, "FROM")? else {
            return Ok(None);
        };
        let (rest, e) = self.expr(from.rest)?;
        let close = self.expect_sym(rest, ")")?;
        let span = Span::new(name.span.start, self.pos(close.rest));
        let kind = ExprKind::Extract {
            field,
            expr: Box::new(e),
        };
        Ok(Some((close.rest, Expr { kind, span })))
    }

    /// `CASE [operand] (WHEN expr THEN expr)+ [ELSE expr] END` after `CASE`.
    fn case(&self, case: Token<'a>) -> PResult<'a, Expr> {
        let mut i = case.rest;
        let mut operand = None;
        if self.keyword(i, "WHEN")?.is_none() {
            let (rest, e) = self.expr(i)?;
            (i, operand) = (rest, Some(Box::new(e)));
        }
        let mut branches = Vec::new();
        loop {
            let when = self.next(i)?;
            if !when.is_keyword("WHEN") {
                if branches.is_empty() {
                    return Err(expected(when, "WHEN"));
                }
                break;
            }
            let (rest, condition) = self.expr(when.rest)?;
            let then = self.expect_keyword(rest, "THEN")?;
            let (rest, result) = self.expr(then.rest)?;
            branches.push((condition, result));
            i = rest;
        }
        let mut else_result = None;
        if let Some(else_) = self.keyword(i, "ELSE")? {
            let (rest, e) = self.expr(else_.rest)?;
            (i, else_result) = (rest, Some(Box::new(e)));
        }
        let end = self.next(i)?;
        if !end.is_keyword("END") {
            let what = if else_result.is_some() {
                "END"
            } else {
                "WHEN, ELSE or END"
            };
            return Err(expected(end, what));
        }
        let span = self.span(case.at, end.rest);
        let kind = ExprKind::Case {
            operand,
            branches,
            else_result,
        };
        Ok((end.rest, Expr { kind, span }))
    }

    /// `CAST ( expr AS type )` after `CAST`, or the same after `TRY_CAST`.
    fn cast(&self, cast: Token<'a>, try_cast: bool) -> PResult<'a, Expr> {
        let open = self.expect_sym(cast.rest, "(")?;
        let (rest, e) = self.expr(open.rest)?;
        let as_ = self.expect_keyword(rest, "AS")?;
        let (rest, to) = self.type_name(as_.rest)?;
        let close = self.expect_sym(rest, ")")?;
        let span = self.span(cast.at, close.rest);
        let kind = ExprKind::Cast {
            expr: Box::new(e),
            to,
            try_cast,
        };
        Ok((close.rest, Expr { kind, span }))
    }

    /// `INTERVAL 'text' [unit]`, `INTERVAL n unit` or `INTERVAL (expr) unit`
    /// after `INTERVAL`. The last, DuckDB's, is `(expr) * INTERVAL 1 unit`
    /// for a fixed unit; months and years take a constant whole number.
    fn interval(&self, interval: Token<'a>) -> PResult<'a, Expr> {
        let s = self.next(interval.rest)?;
        if let Tok::Sym("(") = s.tok {
            let (rest, count) = self.primary(interval.rest)?;
            let u = self.next(rest)?;
            let Tok::Word(w) = u.tok else {
                return Err(expected(u, "an interval unit"));
            };
            let span = self.span(interval.at, u.rest);
            let unit_span = self.span(u.at, u.rest);
            if let Some(per) = month_unit(w) {
                let months = match count.kind {
                    ExprKind::Literal(Literal::Int(n)) => n
                        .checked_mul(per)
                        .ok_or_else(|| failure(s.at, "interval out of range"))?,
                    _ => {
                        return Err(failure(
                            s.at,
                            "INTERVAL (…) MONTH and YEAR take a constant whole number",
                        ));
                    }
                };
                let kind = ExprKind::Literal(Literal::Months(months));
                return Ok((u.rest, Expr { kind, span }));
            }
            let micros = match unit_micros(w) {
                Ok(m) => m,
                Err(_) => return Err(expected(u, "an interval unit")),
            };
            let one = Expr {
                kind: ExprKind::Literal(Literal::Interval(micros)),
                span: unit_span,
            };
            let kind = ExprKind::Binary {
                op: BinaryOp::Multiply,
                left: Box::new(count),
                right: Box::new(one),
            };
            return Ok((u.rest, Expr { kind, span }));
        }
        let text = match s.tok {
            Tok::Str(raw) => unescape(raw, '\''),
            // DuckDB's `INTERVAL 3 DAY`: a bare number takes a unit.
            Tok::Number(n) if matches!(self.next(s.rest)?.tok, Tok::Word(_)) => n.to_string(),
            _ => return Err(expected(s, "an interval string such as '1 day'")),
        };
        let mut rest = s.rest;
        let mut unit = None;
        if let Some(months) = calendar_months(&text) {
            let months = months.map_err(|m| failure(s.at, m))?;
            let span = self.span(interval.at, rest);
            let kind = ExprKind::Literal(Literal::Months(months));
            return Ok((rest, Expr { kind, span }));
        }
        if !text.bytes().any(|b| b.is_ascii_alphabetic()) {
            let u = self.next(s.rest)?;
            if let Tok::Word(w) = u.tok
                && let Some(per) = month_unit(w)
            {
                let n: i64 = text
                    .trim()
                    .parse()
                    .map_err(|_| failure(s.at, format!("invalid interval {text:?}: months and years take a whole number")))?;
                let months = n
                    .checked_mul(per)
                    .ok_or_else(|| failure(s.at, "interval out of range"))?;
                let span = self.span(interval.at, u.rest);
                let kind = ExprKind::Literal(Literal::Months(months));
                return Ok((u.rest, Expr { kind, span }));
            }
            match u.tok {
                Tok::Word(w) => match unit_micros(w) {
                    Ok(micros) => (rest, unit) = (u.rest, Some(micros)),
                    Err(UnitError::NotFixed) => return Err(failure(u.at, NOT_FIXED)),
                    Err(UnitError::Unknown) => return Err(expected(u, "an interval unit")),
                },
                _ => return Err(expected(u, "an interval unit")),
            }
        }
        let micros = interval_micros(&text, unit).map_err(|m| failure(s.at, m))?;
        let span = self.span(interval.at, rest);
        let kind = ExprKind::Literal(Literal::Interval(micros));
        Ok((rest, Expr { kind, span }))
    }

    /// A type name after `::` or `CAST(… AS`.
    fn type_name(&self, i: &'a str) -> PResult<'a, TypeName> {
        let t = self.next(i)?;
        let Tok::Word(w) = t.tok else {
            return Err(expected(t, "a type name"));
        };
        let to = match w.to_ascii_uppercase().as_str() {
            "INT" | "INTEGER" | "BIGINT" | "SMALLINT" | "INT2" | "INT4" | "INT8" => TypeName::Int,
            "FLOAT" | "REAL" | "FLOAT4" | "FLOAT8" => TypeName::Float,
            "DOUBLE" => {
                if let Some(p) = self.keyword(t.rest, "PRECISION")? {
                    return Ok((p.rest, TypeName::Float));
                }
                TypeName::Float
            }
            "TIMESTAMP" => TypeName::Timestamp,
            "DATE" => TypeName::Date,
            "INTERVAL" => TypeName::Interval,
            "VARCHAR" | "TEXT" | "STRING" => TypeName::Str,
            "BOOLEAN" | "BOOL" => TypeName::Bool,
            _ => return Err(failure(t.at, format!("unknown type {w:?}"))),
        };
        Ok((t.rest, to))
    }
}

/// A SELECT with no items, a placeholder while a query is assembled.
fn empty_select() -> Select {
    Select {
        distinct: false,
        projection: Vec::new(),
        from: None,
        selection: None,
        group_by: Vec::new(),
        group_by_all: false,
        having: None,
        windows: Vec::new(),
        qualify: None,
        order_by: Vec::new(),
        limit: None,
        offset: None,
        span: Span::default(),
    }
}

fn comparison_op(t: Tok<'_>) -> Option<BinaryOp> {
    Some(match t {
        Tok::Sym("=") => BinaryOp::Eq,
        Tok::Sym("<>" | "!=") => BinaryOp::NotEq,
        Tok::Sym("<") => BinaryOp::Lt,
        Tok::Sym("<=") => BinaryOp::LtEq,
        Tok::Sym(">") => BinaryOp::Gt,
        Tok::Sym(">=") => BinaryOp::GtEq,
        _ => return None,
    })
}

fn binary_kind(op: BinaryOp, left: Expr, right: Expr) -> ExprKind {
    ExprKind::Binary {
        op,
        left: Box::new(left),
        right: Box::new(right),
    }
}

/// `left op right` spanning both operands.
fn binary(op: BinaryOp, left: Expr, right: Expr) -> Expr {
    let span = left.span.union(right.span);
    Expr {
        kind: binary_kind(op, left, right),
        span,
    }
}

#[cfg(test)]
mod tests {
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    use super::*;

    /// The benchmark queries the engine must accept.
    const BENCHMARK_QUERIES: &[&str] = &[
        "SELECT cab_type, count(*) FROM trips GROUP BY cab_type",
        "SELECT passenger_count, count(*), sum(total_amount) FROM trips GROUP BY passenger_count",
        "SELECT passenger_count, year(pickup_datetime), count(*) FROM trips GROUP BY 1, 2",
        "SELECT passenger_count, year(pickup_datetime), floor(trip_distance), count(*) FROM trips GROUP BY 1, 2, 3",
        "SELECT trip_id FROM trips WHERE passenger_count = 5 AND vendor_id = 'CMT' AND total_amount < 5 AND store_and_fwd_flag = '1' LIMIT 100",
        "SELECT passenger_count, trip_distance, total_amount FROM trips ORDER BY total_amount DESC LIMIT 100",
        "SELECT pickup_puma, dropoff_puma, passenger_count, count(*) FROM trips GROUP BY 1, 2, 3",
        "SELECT trip_id / 5, sum(total_amount) FROM trips GROUP BY 1",
        "SELECT pickup_ntaname, count(*) FROM trips GROUP BY pickup_ntaname",
        "SELECT * FROM readings WHERE time >= '2020-01-01' AND time < '2020-01-01'::timestamp + INTERVAL '1 day' LIMIT -10",
        "SELECT date_trunc('hour', time), count(DISTINCT name), approx_count_distinct(name) FROM readings GROUP BY 1 ORDER BY 1",
    ];

    /// Expression text and its fully parenthesized display: precedence,
    /// associativity and every expression form.
    const EXPRESSIONS: &[(&str, &str)] = &[
        ("a OR b AND c", "(a OR (b AND c))"),
        ("a AND b OR c", "((a AND b) OR c)"),
        ("a OR b OR c", "(a OR b OR c)"),
        ("NOT a = b", "(NOT (a = b))"),
        ("NOT a AND b", "((NOT a) AND b)"),
        ("NOT NOT a", "(NOT NOT a)"),
        ("-a * b", "(-a * b)"),
        ("-(a * b)", "-(a * b)"),
        ("a - b - c", "(a - b - c)"),
        ("a - (b - c)", "(a - (b - c))"),
        ("a + b * c", "(a + (b * c))"),
        ("a * b % c / d", "(a * b % c / d)"),
        ("(a + b) * c", "((a + b) * c)"),
        ("a < b < c", "(a < b < c)"),
        ("a < (b < c)", "(a < (b < c))"),
        ("a = b IS NULL", "(a = b IS NULL)"),
        ("a = (b IS NULL)", "(a = (b IS NULL))"),
        (
            "a = 1 OR NOT b <> 2 AND c != 3",
            "((a = 1) OR ((NOT (b <> 2)) AND (c <> 3)))",
        ),
        (
            "x >= 1 AND x <= 2 AND x > 0 AND x < 3",
            "((x >= 1) AND (x <= 2) AND (x > 0) AND (x < 3))",
        ),
        (
            "a + 1 BETWEEN 2 AND 3 AND b",
            "(((a + 1) BETWEEN 2 AND 3) AND b)",
        ),
        ("a NOT BETWEEN -1 AND 1", "(a NOT BETWEEN -1 AND 1)"),
        ("a IN (1, 2, 3)", "(a IN (1, 2, 3))"),
        ("a NOT IN ('x')", "(a NOT IN ('x'))"),
        ("name LIKE 'ab%'", "(name LIKE 'ab%')"),
        ("name NOT ILIKE 'Ab%'", "(name NOT ILIKE 'Ab%')"),
        ("a || b || 'c'", "(a || b || 'c')"),
        ("a || b + 1 = 'x'", "((a || (b + 1)) = 'x')"),
        ("a LIKE 'x' || b", "(a LIKE ('x' || b))"),
        ("a IS NULL", "(a IS NULL)"),
        ("a IS NOT NULL OR b", "((a IS NOT NULL) OR b)"),
        ("-a::int", "-a::BIGINT"),
        ("(-a)::int", "(-a)::BIGINT"),
        ("a::float::int", "a::DOUBLE::BIGINT"),
        (
            "'2020-01-01'::timestamp + INTERVAL '1 day'",
            "('2020-01-01'::TIMESTAMP + INTERVAL '1 day')",
        ),
        ("- - 5", "- -5"),
        ("-(-5)", "- -5"),
        ("NOT NOT NOT a", "(NOT NOT NOT a)"),
        ("NOT (a AND b)", "(NOT (a AND b))"),
        ("-5", "-5"),
        ("+a", "a"),
        ("2 - -3", "(2 - -3)"),
        (
            "CASE WHEN a > 1 THEN 'x' ELSE 'y' END",
            "CASE WHEN (a > 1) THEN 'x' ELSE 'y' END",
        ),
        (
            "case a when 1 then 2 when 3 then 4 end",
            "CASE a WHEN 1 THEN 2 WHEN 3 THEN 4 END",
        ),
        ("CAST(a AS double precision)", "a::DOUBLE"),
        ("cast(a + 1 as VARCHAR)", "(a + 1)::VARCHAR"),
        (
            "CAST(b AS bool) AND CAST(c AS text)",
            "(b::BOOLEAN AND c::VARCHAR)",
        ),
        ("-9223372036854775808::int", "-9.223372036854776e18::BIGINT"),
        (
            "(-9223372036854775808)::int",
            "(-9223372036854775808)::BIGINT",
        ),
        ("-(9223372036854775808)", "-9.223372036854776e18"),
        ("(x IS NULL) IS NULL", "(x IS NULL IS NULL)"),
        (
            "x IN (1) NOT LIKE 'a' BETWEEN 1 AND 2",
            "(x IN (1) NOT LIKE 'a' BETWEEN 1 AND 2)",
        ),
        ("count(*)", "count(*)"),
        ("COUNT(DISTINCT name)", "COUNT(DISTINCT name)"),
        ("now()", "now()"),
        ("f(a, b + 1, g(c))", "f(a, (b + 1), g(c))"),
        ("\"select\" + \"My Col\"", "(\"select\" + \"My Col\")"),
        ("\"a\"\"b\"", "\"a\"\"b\""),
        ("\"plain\"", "plain"),
        ("MyCol", "MyCol"),
        ("'it''s'", "'it''s'"),
        ("'日本語 ✓'", "'日本語 ✓'"),
        ("NULL", "NULL"),
        ("true OR FALSE", "(TRUE OR FALSE)"),
        ("1.5e300 * .5", "(1.5e300 * 0.5)"),
        ("-9223372036854775808", "(-9223372036854775808)"),
        ("9223372036854775808", "9.223372036854776e18"),
        ("INTERVAL '90 minutes'", "INTERVAL '90 minutes'"),
        ("INTERVAL '1 hour 30 minutes'", "INTERVAL '90 minutes'"),
        ("INTERVAL '2' HOUR", "INTERVAL '2 hours'"),
        ("extract(minute FROM t)", "EXTRACT(minute FROM t)"),
        ("EXTRACT('Epoch' from a + b)", "EXTRACT(Epoch FROM (a + b))"),
        (
            "extract(\"week\" FROM t::timestamp) + 1",
            "(EXTRACT(week FROM t::TIMESTAMP) + 1)",
        ),
        ("extract('a b' FROM t)", "EXTRACT(\"a b\" FROM t)"),
        ("extract('minute', t)", "extract('minute', t)"),
        ("extract(x)", "extract(x)"),
        ("extract(x, y)", "extract(x, y)"),
        ("extract(1 + 2)", "extract((1 + 2))"),
    ];

    /// Expression text and the literal it is.
    const LITERALS: &[(&str, Literal)] = &[
        ("42", Literal::Int(42)),
        ("0", Literal::Int(0)),
        ("9223372036854775807", Literal::Int(i64::MAX)),
        ("-9223372036854775808", Literal::Int(i64::MIN)),
        ("9223372036854775808", Literal::Float(9223372036854775808.0)),
        ("2.5", Literal::Float(2.5)),
        (".5", Literal::Float(0.5)),
        ("1.", Literal::Float(1.0)),
        ("1e3", Literal::Float(1000.0)),
        ("3E-4", Literal::Float(3e-4)),
        ("1.5e+2", Literal::Float(150.0)),
        ("NULL", Literal::Null),
        ("null", Literal::Null),
        ("TRUE", Literal::Bool(true)),
        ("False", Literal::Bool(false)),
        ("INTERVAL '1 day'", Literal::Interval(86_400_000_000)),
        ("INTERVAL '90 minutes'", Literal::Interval(5_400_000_000)),
        ("INTERVAL '2' HOUR", Literal::Interval(7_200_000_000)),
        ("INTERVAL 2 HOUR", Literal::Interval(7_200_000_000)),
        ("INTERVAL 3 DAYS", Literal::Interval(259_200_000_000)),
        ("INTERVAL 1.5 HOURS", Literal::Interval(5_400_000_000)),
        ("INTERVAL 2 YEAR", Literal::Months(24)),
        ("interval '2' hours", Literal::Interval(7_200_000_000)),
        (
            "INTERVAL '1 hour 30 minutes'",
            Literal::Interval(5_400_000_000),
        ),
        ("INTERVAL '1h30m'", Literal::Interval(5_400_000_000)),
        ("INTERVAL '1.5 HOURS'", Literal::Interval(5_400_000_000)),
        ("INTERVAL '1 week'", Literal::Interval(604_800_000_000)),
        ("INTERVAL '3 sec'", Literal::Interval(3_000_000)),
        ("INTERVAL '5 min'", Literal::Interval(300_000_000)),
        ("INTERVAL '250 ms'", Literal::Interval(250_000)),
        ("INTERVAL '7 us'", Literal::Interval(7)),
        (
            "INTERVAL '1 millisecond 1 microsecond'",
            Literal::Interval(1_001),
        ),
        ("INTERVAL ' -1 day '", Literal::Interval(-86_400_000_000)),
        (
            "INTERVAL '1 day -1 hour'",
            Literal::Interval(82_800_000_000),
        ),
    ];

    /// Bad queries: the error offset and the exact message.
    const ERRORS: &[(&str, usize, &str)] = &[
        ("SELECT FROM t", 7, "expected an expression, found \"FROM\""),
        (
            "SELECT a FROM t WHERE",
            21,
            "expected an expression, found end of input",
        ),
        (
            "SELECT a FROM t WHERE  ",
            23,
            "expected an expression, found end of input",
        ),
        ("SELECT 'abc", 7, "unterminated string literal"),
        ("", 0, "empty statement"),
        ("  -- only a comment", 19, "empty statement"),
        (
            "SELECT a FROM t xyz zz",
            20,
            "expected end of statement, found \"zz\"",
        ),
        (
            "SELECT a FROM t; SELECT b",
            17,
            "expected end of statement, found \"SELECT\"",
        ),
        ("SELECT a FROM t GROUP a", 22, "expected BY, found \"a\""),
        (
            "SELECT a FROM t ORDER BY a DESC NULLS",
            37,
            "expected FIRST or LAST, found end of input",
        ),
        (
            "SELECT f(a b) FROM t",
            11,
            "expected \",\" or \")\", found \"b\"",
        ),
        ("SELECT count(* a)", 15, "expected \")\", found \"a\""),
        ("SELECT (a FROM t", 10, "expected \")\", found \"FROM\""),
        (
            "SELECT a +",
            10,
            "expected an expression, found end of input",
        ),
        ("SELECT a + * b", 11, "expected an expression, found \"*\""),
        ("SELECT 1abc", 7, "invalid numeric literal \"1abc\""),
        ("SELECT 1e", 7, "invalid numeric literal \"1e\""),
        ("SELECT 1e999", 7, "numeric literal out of range"),
        (
            "SELECT a FROM t LIMIT x",
            22,
            "expected an integer, found \"x\"",
        ),
        (
            "SELECT a FROM t LIMIT 1.5",
            22,
            "expected an integer, found \"1.5\"",
        ),
        (
            "SELECT a FROM t LIMIT 99999999999999999999",
            22,
            "limit out of range",
        ),
        ("SELECT a FROM t OFFSET -1", 23, "offset out of range"),
        (
            "SELECT INTERVAL '1 month 2 days'",
            16,
            "an interval of months or years cannot be mixed with fixed units (write INTERVAL '1' MONTH + INTERVAL '2' DAY)",
        ),
        (
            "SELECT INTERVAL '2.5' years",
            16,
            "invalid interval \"2.5\": months and years take a whole number",
        ),
        (
            "SELECT INTERVAL '3 fortnights'",
            16,
            "unknown interval unit \"fortnights\"",
        ),
        (
            "SELECT INTERVAL '2'",
            19,
            "expected an interval unit, found end of input",
        ),
        (
            "SELECT INTERVAL '1 day 2'",
            16,
            "invalid interval \"1 day 2\"",
        ),
        (
            "SELECT INTERVAL 5",
            16,
            "expected an interval string such as '1 day', found \"5\"",
        ),
        ("SELECT CAST(a AS blob)", 17, "unknown type \"blob\""),
        ("SELECT a::", 10, "expected a type name, found end of input"),
        (
            "SELECT a NOT b",
            13,
            "expected IN, BETWEEN, LIKE or ILIKE, found \"b\"",
        ),
        ("SELECT a IS 5", 12, "expected NULL or NOT, found \"5\""),
        ("SELECT a IN ()", 13, "expected an expression, found \")\""),
        ("SELECT a BETWEEN 1 OR 2", 19, "expected AND, found \"OR\""),
        ("SELECT /* x", 7, "unterminated comment"),
        ("SELECT \"\" FROM t", 7, "zero-length quoted identifier"),
        ("SELECT \"abc FROM t", 7, "unterminated quoted identifier"),
        (
            "SELECT a FROM select",
            14,
            "expected a table name, found \"select\"",
        ),
        (
            "SELECT a AS FROM t",
            12,
            "expected an alias, found \"FROM\"",
        ),
        (
            "SELECT CASE END",
            12,
            "expected an expression, found \"END\"",
        ),
        ("SELECT CASE a END", 14, "expected WHEN, found \"END\""),
        (
            "SELECT CASE WHEN a THEN b",
            25,
            "expected WHEN, ELSE or END, found end of input",
        ),
        ("SELECT CASE WHEN a b", 19, "expected THEN, found \"b\""),
        ("SELECT é", 7, "unexpected character \"é\""),
        ("SELECT a ! b", 9, "unexpected character \"!\""),
        ("EXPLAIN", 7, "expected SELECT, found end of input"),
        ("INSERT INTO t", 0, "INSERT is not supported yet"),
        // SQL katydid does not run yet says what it is (issue 30, item 8).
        (
            "SELECT count(*) FILTER (a) FROM t",
            24,
            "expected WHERE, found \"a\"",
        ),
        (
            "SELECT rank() OVER (ORDER BY a ROWS 2 AFTER) FROM t",
            38,
            "expected PRECEDING or FOLLOWING, found \"AFTER\"",
        ),
        ("SELECT rank() OVER (PARTITION a) FROM t", 30, "expected BY, found \"a\""),
        ("SELECT rank() OVER FROM t", 19, "expected \"(\" or a window name, found \"FROM\""),
        ("SELECT * FROM t ORDER BY ALL", 25, "ORDER BY ALL needs a select list without *"),
        ("SELECT a FROM t JOIN u", 22, "expected ON or USING, found end of input"),
        (
            "SELECT a FROM t NATURAL JOIN u",
            16,
            "NATURAL joins are not supported yet; use USING",
        ),
        ("SELECT a FROM t UNION", 21, "expected SELECT, found end of input"),
        ("SELECT * FROM (1)", 15, "expected a subquery (SELECT …), found \"1\""),
        ("SELECT a FROM t.", 15, "expected end of statement, found \".\""),
        ("SELECT t. FROM t", 10, "expected a column name, found \"FROM\""),
        (
            "WITH RECURSIVE x AS (SELECT 1) SELECT * FROM x",
            5,
            "WITH RECURSIVE is not supported yet",
        ),
        ("WITH x (SELECT 1) SELECT 1", 7, "expected AS, found \"(\""),
        (";", 0, "expected SELECT, found \";\""),
        ("SELECT 1;;", 9, "expected end of statement, found \";\""),
        ("SELECT 'a' | 'b'", 11, "unexpected character \"|\""),
        ("SELECT 'a' || ", 14, "expected an expression, found end of input"),
        (
            "SELECT extract(minute FROM)",
            26,
            "expected an expression, found \")\"",
        ),
        (
            "SELECT extract(minute FROM t",
            28,
            "expected \")\", found end of input",
        ),
        ("SHOW", 4, "expected TABLES, found end of input"),
        ("SHOW tablez", 5, "expected TABLES, found \"tablez\""),
        ("DESCRIBE", 8, "expected a table name, found end of input"),
        ("SUMMARIZE 5", 10, "expected a table name, found \"5\""),
        (
            "DESCRIBE t extra",
            11,
            "expected end of statement, found \"extra\"",
        ),
        (
            "SELECT a FROM read_csv('x' delim => 1)",
            27,
            "expected \",\" or \")\", found \"delim\"",
        ),
        (
            "SELECT a FROM read_csv('x', c => [1, 2)",
            38,
            "expected \",\" or \"]\", found \")\"",
        ),
        (
            "SELECT a FROM read_csv('x', delim =>)",
            36,
            "expected an expression, found \")\"",
        ),
        (
            "SELECT a FROM 'x.csv' y z",
            24,
            "expected end of statement, found \"z\"",
        ),
        (
            "SELECT extract(minute FROM t, 2)",
            28,
            "expected \")\", found \",\"",
        ),
    ];

    /// More statements for the round-trip and span properties.
    const STATEMENTS: &[&str] = &[
        "SELECT a || 'x' || b, s ILIKE '%é%', s NOT ILIKE 'a_' FROM t WHERE (a || b) = 'ab'",
        "SELECT coalesce(a, b, 0), concat_ws(', ', s, 'x'), date_diff('day', t, u) FROM t",
        "SELECT g, row_number() OVER (PARTITION BY g, h ORDER BY x DESC NULLS FIRST) AS rn, sum(x) OVER w, lag(x, 2, 0) OVER (w ORDER BY t ROWS BETWEEN 3 PRECEDING AND 1 FOLLOWING), count(*) OVER (), avg(x) OVER (ORDER BY x RANGE 5 PRECEDING) FROM t WHERE x > 0 GROUP BY g HAVING count(*) > 1 WINDOW w AS (PARTITION BY g), v AS (w ORDER BY x) QUALIFY rn <= 2 ORDER BY 1",
        "SELECT count(*) OVER (ORDER BY t RANGE BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING), max(x) OVER (ROWS BETWEEN CURRENT ROW AND 2 FOLLOWING) FROM t",
        "SELECT count(*) FILTER (WHERE x > 1), sum(y) FILTER (WHERE z AND y < 2) AS s FROM t GROUP BY g",
        "SELECT a, b, count(*) FROM t GROUP BY ALL ORDER BY 1, 2, 3 DESC",
        "WITH a AS (SELECT x FROM t), b AS (SELECT * FROM a) SELECT DISTINCT a.x, b.* FROM a JOIN b ON a.x = b.x LEFT OUTER JOIN c AS cc USING (y, z), d WHERE x IN (SELECT y FROM u) AND NOT EXISTS (SELECT 1) ORDER BY 1 LIMIT 3",
        "SELECT a FROM t UNION ALL SELECT b FROM u INTERSECT SELECT c FROM v EXCEPT SELECT (SELECT max(d) FROM w) ORDER BY a DESC LIMIT 5 OFFSET 1",
        "SELECT count(*) FROM (SELECT k, sum(v) AS s FROM t GROUP BY k) q CROSS JOIN r FULL JOIN s ON q.k = s.k RIGHT JOIN 'f.csv' f ON f.a = q.k INNER JOIN g ON TRUE",
        "EXPLAIN WITH x AS (SELECT 1) SELECT * FROM x",
        "CREATE OR REPLACE TABLE t2 AS SELECT a, count(*) FROM t GROUP BY a",
        "create table \"T 3\" as with x as (select 1) select * from x",
        "DROP TABLE IF EXISTS t2",
        "DROP TABLE 'it''s.csv'",
        "DROP TABLE IF EXISTS 'data/x.csv'",
        "drop table t2;",
        "DESCRIBE WITH x AS (SELECT 1) SELECT * FROM x UNION DISTINCT SELECT 2",
        "DESCRIBE VALUES (1, 'a'), (2, 'b')",
        "SELECT a FROM t WHERE a > ALL (SELECT b FROM u) AND (a <= SOME (SELECT c FROM v)) = any AND b = ANY (WITH w AS (SELECT 1) SELECT * FROM w)",
        "SELECT ALL t.a FROM t t WHERE t.a NOT IN (SELECT b FROM u)",
        "SELECT substring(c FROM 1 FOR 2), substr(c, 2) FROM (SELECT c FROM t) AS x (c) WHERE d < DATE '1995-03-15' + INTERVAL '3' MONTH - INTERVAL '1' YEAR AND e = TIMESTAMP '2001-01-01 10:00:00' AND f::date = CAST(g AS DATE)",
        "SELECT 1 + 2",
        "select A from T where B = 'x'",
        "SELECT a AS x, b y, * FROM t WHERE a > 1 GROUP BY 1, 2 HAVING count(*) > 1 ORDER BY x DESC NULLS LAST, y NULLS FIRST, 3 ASC LIMIT -10 OFFSET 5;",
        "  -- leading comment\n SELECT /* inline */ a FROM t -- trailing",
        "EXPLAIN SELECT count(*) FROM trips",
        "SELECT \"weird name\" AS \"Select\", \"x\"\"y\" FROM \"my table\"",
        "SELECT CASE WHEN a IS NULL THEN 0 WHEN a < 0 THEN -a ELSE a END AS abs_a FROM t",
        "SELECT x FROM t WHERE NOT (a IN (1, 2) OR b NOT BETWEEN 1 AND 5) AND c LIKE '%z'",
        "SELECT sum(x) / count(*), min(t::timestamp) FROM t GROUP BY y HAVING sum(x) > 10 ORDER BY 1 DESC",
        "SELECT 'a''b', 'c' FROM t LIMIT 0 OFFSET 18446744073709551615",
        "SELECT a FROM t LIMIT -9223372036854775808",
        "SELECT INTERVAL '1 day' + INTERVAL '2' minute, INTERVAL '-7 us'",
        "SELECT 1e300, 0.1 + 0.2, 99999999999999999999, 1.5e-7 FROM t",
        "SELECT +a, - b, - -c, -(-d), -9223372036854775808 - 1 FROM t",
        "SELECT a FROM t ORDER BY a NULLS LAST",
        "SELECT first, last, int, \"end\" FROM t",
        "SELECT UserID, extract(minute FROM EventTime) AS m, count(*) FROM hits GROUP BY UserID, m",
        "SELECT REGEXP_REPLACE(Referer, '^https?://(?:www\\.)?([^/]+)/.*$', '\\1') AS k FROM hits",
        "DESCRIBE trips",
        "describe SELECT a, count(*) FROM t GROUP BY a",
        "SHOW TABLES;",
        "show tables",
        "SUMMARIZE \"My Table\"",
        "SELECT count(*) FROM 'data/hits.csv.gz' WHERE a > 1",
        "SELECT * FROM read_csv('x.txt', delim => ';', header = false, nullstr => 'NA', columns => ['a', 'b'])",
        "SUMMARIZE read_csv('it''s.csv')",
        "DESCRIBE 'x.tsv'",
        "SELECT a FROM read_csv()",
        "SELECT a FROM f(1 + 2, \"x\" => [], y => [-1])",
        "EXPLAIN SELECT a FROM READ_CSV_AUTO ( 'a.csv' , sep => '\t' )",
    ];

    fn parse_ok(sql: &str) -> Statement {
        parse(sql).unwrap_or_else(|e| panic!("{sql:?} does not parse: {e}"))
    }

    /// The SELECT of a statement that has one.
    fn select(statement: &Statement) -> &Select {
        select_of(statement).unwrap_or_else(|| panic!("no SELECT in {statement:?}"))
    }

    fn select_of(statement: &Statement) -> Option<&Select> {
        /// The leftmost SELECT; none for VALUES.
        fn first(q: &Query) -> Option<&Select> {
            let mut body = &q.body;
            while let SetExpr::Operation { left, .. } = body {
                body = left;
            }
            match body {
                SetExpr::Select(s) => Some(s.as_ref()),
                SetExpr::Operation { .. } => unreachable!("descended"),
                SetExpr::Values { .. } => None,
            }
        }
        match statement {
            Statement::Select(s) => Some(s),
            Statement::Query(q) | Statement::Explain(q) | Statement::ExplainAnalyze(q) => first(q),
            Statement::Describe(d) => match d {
                Describe::Query(q) => first(q),
                Describe::Table(_) => None,
            },
            Statement::CreateTableAs { query, .. } => first(query),
            Statement::ShowTables | Statement::Summarize(_) | Statement::DropTable { .. } => None,
        }
    }

    /// The table of a FROM that is one table.
    fn table_in(select: &Select) -> Option<&TableRef> {
        match &select.from {
            Some(FromItem::Table { table, .. }) => Some(table),
            _ => None,
        }
    }

    /// The table a statement names, if any.
    fn table_of(statement: &Statement) -> Option<&TableRef> {
        match statement {
            Statement::Describe(Describe::Table(t)) | Statement::Summarize(t) => Some(t),
            Statement::ShowTables => None,
            _ => select_of(statement).and_then(table_in),
        }
    }

    /// The first select item's expression of `SELECT {text}`.
    fn expr(text: &str) -> Expr {
        let sql = format!("SELECT {text}");
        match parse_ok(&sql) {
            Statement::Select(s) => match s.projection.into_iter().next() {
                Some(SelectItem::Expr { expr, .. }) => expr,
                other => panic!("{sql:?}: unexpected item {other:?}"),
            },
            other => panic!("{sql:?}: unexpected statement {other:?}"),
        }
    }

    /// Every expression in `statement`, parents before children.
    fn all_exprs(statement: &Statement) -> Vec<&Expr> {
        fn walk<'e>(e: &'e Expr, out: &mut Vec<&'e Expr>) {
            out.push(e);
            match &e.kind {
                ExprKind::Column(_)
                | ExprKind::Literal(_)
                | ExprKind::QualifiedColumn { .. }
                | ExprKind::Subquery(_)
                | ExprKind::Exists(_) => {}
                ExprKind::Unary { expr, .. }
                | ExprKind::IsNull { expr, .. }
                | ExprKind::Cast { expr, .. }
                | ExprKind::InSubquery { expr, .. }
                | ExprKind::Quantified { expr, .. }
                | ExprKind::Extract { expr, .. } => walk(expr, out),
                ExprKind::Binary { left, right, .. } => {
                    walk(left, out);
                    walk(right, out);
                }
                ExprKind::InList { expr, list, .. } => {
                    walk(expr, out);
                    list.iter().for_each(|e| walk(e, out));
                }
                ExprKind::Between {
                    expr, low, high, ..
                } => {
                    walk(expr, out);
                    walk(low, out);
                    walk(high, out);
                }
                ExprKind::Like { expr, pattern, .. } => {
                    walk(expr, out);
                    walk(pattern, out);
                }
                ExprKind::Case {
                    operand,
                    branches,
                    else_result,
                } => {
                    operand.iter().for_each(|e| walk(e, out));
                    for (when, then) in branches {
                        walk(when, out);
                        walk(then, out);
                    }
                    else_result.iter().for_each(|e| walk(e, out));
                }
                ExprKind::Function { args, filter, .. } => {
                    args.iter().for_each(|e| walk(e, out));
                    filter.iter().for_each(|e| walk(e, out));
                }
                ExprKind::Window { call, window } => {
                    walk(call, out);
                    window.partition_by.iter().for_each(|e| walk(e, out));
                    window.order_by.iter().for_each(|o| walk(&o.expr, out));
                }
            }
        }
        let mut out = Vec::new();
        if let Some(TableRef::Function { args, .. }) = table_of(statement) {
            for arg in args {
                match &arg.value {
                    TableArgValue::Expr(e) => walk(e, &mut out),
                    TableArgValue::List { items, .. } => {
                        items.iter().for_each(|e| walk(e, &mut out))
                    }
                }
            }
        }
        let Some(s) = select_of(statement) else {
            return out;
        };
        for item in &s.projection {
            if let SelectItem::Expr { expr, .. } = item {
                walk(expr, &mut out);
            }
        }
        let order_keys = s.order_by.iter().map(|o| &o.expr);
        for e in s
            .selection
            .iter()
            .chain(&s.group_by)
            .chain(&s.having)
            .chain(order_keys)
        {
            walk(e, &mut out);
        }
        out
    }

    /// Checks the properties every successful parse must have: display
    /// round-trips, and every span is tight and re-parses to its expression.
    fn check_properties(sql: &str, statement: &Statement) {
        let shown = statement.to_string();
        let again = parse(&shown).unwrap_or_else(|e| panic!("{sql:?} displays as {shown:?}: {e}"));
        assert!(
            crate::sql::eq_ignoring_spans(statement, &again),
            "{sql:?} displays as {shown:?}, which parses differently"
        );
        assert_eq!(again.to_string(), shown, "display of {sql:?} is not stable");

        if let Some(table) = table_of(statement) {
            let span = table.span();
            let text = &sql[span.start..span.end];
            assert_eq!(
                text,
                text.trim(),
                "{sql:?}: table span {span:?} is not tight"
            );
            let again = parse_ok(&format!("SELECT * FROM {text}"));
            assert_eq!(
                select(&again).from.as_ref().map(|t| t.to_string()),
                Some(table.to_string()),
                "{sql:?}: table span text {text:?}"
            );
            if let TableRef::Function { name, args, .. } = table {
                let idents =
                    std::iter::once(name).chain(args.iter().filter_map(|a| a.name.as_ref()));
                for ident in idents {
                    let text = &sql[ident.span.start..ident.span.end];
                    assert!(
                        text == ident.name || text.starts_with('"'),
                        "{sql:?}: {text:?}"
                    );
                }
                for arg in args {
                    let span = arg.value.span();
                    let text = &sql[span.start..span.end];
                    assert!(!text.is_empty() && text == text.trim(), "{sql:?}: {text:?}");
                }
            }
        }
        if let Some(s) = select_of(statement) {
            let text = &sql[s.span.start..s.span.end];
            assert!(
                text.len() >= 6 && text[..6].eq_ignore_ascii_case("SELECT"),
                "{sql:?}: {text:?}"
            );
            let aliases = s.projection.iter().filter_map(|item| match item {
                SelectItem::Expr { alias, .. } => alias.as_ref(),
                SelectItem::Wildcard(..) | SelectItem::QualifiedWildcard { .. } => None,
            });
            let named = match table_in(s) {
                Some(TableRef::Named(ident)) => Some(ident),
                _ => None,
            };
            for ident in named.into_iter().chain(aliases) {
                let text = &sql[ident.span.start..ident.span.end];
                assert!(
                    text == ident.name || text.starts_with('"'),
                    "{sql:?}: {text:?}"
                );
            }
        }
        for e in all_exprs(statement) {
            let text = sql
                .get(e.span.start..e.span.end)
                .expect("span on char boundaries");
            assert_eq!(text, text.trim(), "{sql:?}: span {:?} is not tight", e.span);
            assert_eq!(
                expr(text).to_string(),
                e.to_string(),
                "{sql:?}: span text {text:?}"
            );
        }
    }

    #[test]
    fn benchmark_queries_parse_and_round_trip() {
        for sql in BENCHMARK_QUERIES {
            check_properties(sql, &parse_ok(sql));
        }
    }

    #[test]
    fn statements_round_trip_with_tight_spans() {
        for sql in STATEMENTS {
            check_properties(sql, &parse_ok(sql));
        }
        for (text, _) in EXPRESSIONS {
            let sql = format!("SELECT {text} FROM t");
            check_properties(&sql, &parse_ok(&sql));
        }
    }

    #[test]
    fn expressions_parse_with_expected_precedence() {
        for (text, shown) in EXPRESSIONS {
            assert_eq!(expr(text).to_string(), *shown, "{text:?}");
        }
        // Associativity, checked on the tree itself.
        let ExprKind::Binary {
            op: BinaryOp::Minus,
            left,
            right,
        } = expr("a - b - c").kind
        else {
            panic!("a - b - c is not a subtraction");
        };
        assert_eq!(
            (left.to_string(), right.to_string()),
            ("(a - b)".into(), "c".into())
        );
        let ExprKind::Binary {
            op: BinaryOp::Or,
            left,
            right,
        } = expr("a OR b AND c").kind
        else {
            panic!("a OR b AND c is not an OR");
        };
        assert_eq!(
            (left.to_string(), right.to_string()),
            ("a".into(), "(b AND c)".into())
        );
        let ExprKind::Unary {
            op: UnaryOp::Not,
            expr: inner,
        } = expr("NOT a = b").kind
        else {
            panic!("NOT a = b is not a NOT");
        };
        assert!(matches!(
            inner.kind,
            ExprKind::Binary {
                op: BinaryOp::Eq,
                ..
            }
        ));
        let ExprKind::Binary {
            op: BinaryOp::Multiply,
            left,
            ..
        } = expr("-a * b").kind
        else {
            panic!("-a * b is not a product");
        };
        assert!(matches!(
            left.kind,
            ExprKind::Unary {
                op: UnaryOp::Neg,
                ..
            }
        ));
    }

    #[test]
    fn literals() {
        for (text, literal) in LITERALS {
            assert_eq!(
                expr(text).kind,
                ExprKind::Literal(literal.clone()),
                "{text:?}"
            );
        }
        assert_eq!(
            expr("'it''s'").kind,
            ExprKind::Literal(Literal::String("it's".into()))
        );
        assert_eq!(
            expr("'日本'").kind,
            ExprKind::Literal(Literal::String("日本".into()))
        );
        assert_eq!(
            expr("''").kind,
            ExprKind::Literal(Literal::String(String::new()))
        );
        // `-5` is a negation of 5; only i64::MIN is folded.
        let ExprKind::Unary {
            op: UnaryOp::Neg,
            expr: five,
        } = expr("-5").kind
        else {
            panic!("-5 is not a negation");
        };
        assert_eq!(five.kind, ExprKind::Literal(Literal::Int(5)));
        assert_eq!(five.span, Span::new(8, 9));
    }

    #[test]
    fn identifiers_keep_case_and_unquote() {
        assert_eq!(expr("MyCol").kind, ExprKind::Column("MyCol".into()));
        assert_eq!(
            expr("\"a \"\"b\"\" c\"").kind,
            ExprKind::Column("a \"b\" c".into())
        );
        assert_eq!(expr("\"FROM\"").kind, ExprKind::Column("FROM".into()));
        assert_eq!(expr("_x9").kind, ExprKind::Column("_x9".into()));
        let call = expr("Count(*)").kind;
        let ExprKind::Function {
            name,
            args,
            star: true,
            distinct: false,
            ..
        } = call
        else {
            panic!("not count(*): {call:?}");
        };
        assert_eq!((name.as_str(), args.len()), ("Count", 0));
        let ExprKind::Function {
            distinct: true,
            star: false,
            args,
            ..
        } = expr("count(DISTINCT x)").kind
        else {
            panic!("not count(DISTINCT x)");
        };
        assert_eq!(args[0].kind, ExprKind::Column("x".into()));
    }

    #[test]
    fn full_select_clauses() {
        let sql = "SELECT a AS x, b y, * FROM t WHERE a > 1 GROUP BY 1, 2 HAVING count(*) > 1 \
                   ORDER BY x DESC NULLS LAST, y NULLS FIRST, 3 ASC LIMIT -10 OFFSET 5;";
        let Statement::Select(s) = parse_ok(sql) else {
            panic!("not a select")
        };
        assert_eq!(s.projection.len(), 3);
        let SelectItem::Expr { alias: Some(x), .. } = &s.projection[0] else {
            panic!()
        };
        assert_eq!((x.name.as_str(), x.span), ("x", Span::new(12, 13)));
        let SelectItem::Expr { alias: Some(y), .. } = &s.projection[1] else {
            panic!()
        };
        assert_eq!((y.name.as_str(), y.span), ("y", Span::new(17, 18)));
        assert_eq!(s.projection[2], SelectItem::Wildcard(Span::new(20, 21), StarOptions::default()));
        let Some(TableRef::Named(from)) = table_in(&s) else {
            panic!("from")
        };
        assert_eq!((from.name.as_str(), from.span), ("t", Span::new(27, 28)));
        assert_eq!(
            s.selection.as_ref().map(|e| e.to_string()),
            Some("(a > 1)".into())
        );
        let ordinals: Vec<_> = s.group_by.iter().map(|e| e.kind.clone()).collect();
        assert_eq!(
            ordinals,
            vec![
                ExprKind::Literal(Literal::Int(1)),
                ExprKind::Literal(Literal::Int(2))
            ]
        );
        assert_eq!(
            s.having.as_ref().map(|e| e.to_string()),
            Some("(count(*) > 1)".into())
        );
        let order: Vec<_> = s
            .order_by
            .iter()
            .map(|o| (o.expr.to_string(), o.desc, o.nulls_first))
            .collect();
        assert_eq!(
            order,
            vec![
                ("x".into(), true, Some(false)),
                ("y".into(), false, Some(true)),
                ("3".into(), false, None)
            ]
        );
        assert_eq!((s.limit, s.offset), (Some(-10), Some(5)));
        assert_eq!(s.span, Span::new(0, sql.len() - 1), "span excludes the `;`");

        let Statement::Select(s) = parse_ok(" select 1 + 2 ") else {
            panic!()
        };
        assert_eq!((s.from.is_none(), s.span), (true, Span::new(1, 13)));
        let Statement::Explain(s) = parse_ok("explain SELECT a FROM t") else {
            panic!()
        };
        assert_eq!(s.span, Span::new(8, 23));
        let Statement::ExplainAnalyze(s) = parse_ok("EXPLAIN analyze SELECT a FROM t") else {
            panic!()
        };
        assert_eq!(s.span, Span::new(16, 31));
        // ANALYZE is not reserved: a table of that name can still be explained.
        assert!(matches!(
            parse_ok("EXPLAIN SELECT * FROM analyze"),
            Statement::Explain(_)
        ));
        let Statement::Select(s) = parse_ok("SELECT a FROM t LIMIT -9223372036854775808") else {
            panic!()
        };
        assert_eq!(s.limit, Some(i64::MIN));
    }

    #[test]
    fn tables_can_be_files_and_table_functions() {
        let sql = "SELECT * FROM read_csv('a''b.csv', delim = ';', header => false, columns => ['x', 'y'], 7)";
        let Some(TableRef::Function { name, args, span }) = table_in(select(&parse_ok(sql))).cloned()
        else {
            panic!("not a table function");
        };
        assert_eq!(
            (name.name.as_str(), span),
            ("read_csv", Span::new(14, sql.len()))
        );
        let shown: Vec<(Option<String>, String)> = args
            .iter()
            .map(|a| (a.name.as_ref().map(|n| n.name.clone()), a.to_string()))
            .collect();
        assert_eq!(
            shown,
            vec![
                (None, "'a''b.csv'".into()),
                (Some("delim".into()), "delim => ';'".into()),
                (Some("header".into()), "header => FALSE".into()),
                (Some("columns".into()), "columns => ['x', 'y']".into()),
                (None, "7".into()),
            ]
        );
        let TableArgValue::List { items, span } = &args[3].value else {
            panic!("not a list");
        };
        assert_eq!((items.len(), &sql[span.start..span.end]), (2, "['x', 'y']"));
        let from = |sql: &str| table_in(select(&parse_ok(sql))).cloned();
        assert_eq!(
            from("SELECT 1 FROM 'it''s.csv'"),
            Some(TableRef::File {
                path: "it's.csv".into(),
                span: Span::new(14, 25)
            })
        );
        let Statement::Describe(d) = parse_ok("DESCRIBE SELECT 1") else {
            panic!()
        };
        assert!(matches!(d, Describe::Query(_)));
        assert_eq!(parse_ok(" SHOW TABLES ; "), Statement::ShowTables);
        let Statement::Summarize(TableRef::Named(t)) = parse_ok("SUMMARIZE t") else {
            panic!()
        };
        assert_eq!((t.name.as_str(), t.span), ("t", Span::new(10, 11)));
    }

    #[test]
    fn spans_are_exact() {
        let cases: &[(&str, &[&str])] = &[
            ("SELECT count(*) FROM t", &["count(*)"]),
            (
                "SELECT  a + b * c AS s, (a + b) FROM t",
                &["a + b * c", "(a + b)"],
            ),
            (
                "SELECT sum( x ) ,  -x::int , +y FROM t",
                &["sum( x )", "-x::int", "+y"],
            ),
            (
                "SELECT x IS NOT NULL, x IN (1, 2) s",
                &["x IS NOT NULL", "x IN (1, 2)"],
            ),
            (
                "SELECT x NOT BETWEEN 1 AND 2 /* c */ FROM t",
                &["x NOT BETWEEN 1 AND 2"],
            ),
            (
                "SELECT CASE WHEN a THEN b END, CAST( a AS int )",
                &["CASE WHEN a THEN b END", "CAST( a AS int )"],
            ),
            (
                "SELECT INTERVAL '2' HOUR, -9223372036854775808",
                &["INTERVAL '2' HOUR", "-9223372036854775808"],
            ),
            (
                "SELECT \"Q\"\"x\" , 'é' ,NOT a",
                &["\"Q\"\"x\"", "'é'", "NOT a"],
            ),
        ];
        for (sql, expected) in cases {
            let statement = parse_ok(sql);
            let texts: Vec<&str> = select(&statement)
                .projection
                .iter()
                .filter_map(|item| match item {
                    SelectItem::Expr { expr, .. } => Some(&sql[expr.span.start..expr.span.end]),
                    SelectItem::Wildcard(..) | SelectItem::QualifiedWildcard { .. } => None,
                })
                .collect();
            assert_eq!(&texts, expected, "{sql:?}");
        }
        assert_eq!(expr("count(*)").span, Span::new(7, 15));
        let ExprKind::Binary { left, right, .. } = expr("(a) - b").kind else {
            panic!()
        };
        assert_eq!(
            (left.span, right.span),
            (Span::new(7, 10), Span::new(13, 14))
        );
    }

    #[test]
    fn errors_point_at_the_problem() {
        for (sql, offset, message) in ERRORS {
            match parse(sql) {
                Err(Error::Parse {
                    offset: o,
                    message: m,
                }) => {
                    assert_eq!((o, m.as_str()), (*offset, *message), "{sql:?}")
                }
                other => panic!("{sql:?}: expected a parse error, got {other:?}"),
            }
        }
    }

    #[test]
    fn nesting_is_limited_without_overflowing_the_stack() {
        let deep = |n: usize, open: &str, close: &str| {
            format!("SELECT {}1{}", open.repeat(n), close.repeat(n))
        };
        // Within the limits: parses, displays, and drops on a test thread.
        let ok = [
            deep(MAX_DEPTH - 2, "(", ")"),
            deep(MAX_DEPTH - 2, "f(", ")"),
            deep(MAX_DEPTH - 2, "- ", ""),
            deep(MAX_DEPTH - 2, "NOT ", ""),
            deep(MAX_HEIGHT - 1, "1 + ", ""),
            deep(MAX_HEIGHT - 1, "", "::int"),
        ];
        for sql in &ok {
            let statement = parse_ok(sql);
            check_properties(sql, &statement);
        }
        let too_deep = [
            deep(100_000, "(", ")"),
            deep(100_000, "f(", ")"),
            deep(100_000, "- ", ""),
            deep(100_000, "NOT ", ""),
            deep(100_000, "CASE WHEN 1 THEN ", " END"),
            deep(100_000, "1 + ", ""),
            deep(100_000, "1 * ", ""),
            deep(100_000, "1 OR ", ""),
            deep(100_000, "1 < ", ""),
            deep(100_000, "", " IS NULL"),
            deep(100_000, "", "::int"),
        ];
        for sql in &too_deep {
            match parse(sql) {
                Err(Error::Parse { message, .. }) => {
                    assert_eq!(message, "expression is nested too deeply", "{}", &sql[..40])
                }
                other => panic!("{}: {other:?}", &sql[..40]),
            }
        }
    }

    #[test]
    fn arbitrary_input_never_panics() {
        const PIECES: &[&str] = &[
            "'",
            "\"",
            "(",
            ")",
            ",",
            ";",
            "*",
            "+",
            "-",
            "/",
            "%",
            "=",
            "<",
            ">",
            "!",
            ":",
            ".",
            "e",
            "E",
            "0",
            "9",
            "a",
            "_",
            " ",
            "\n",
            "\t",
            "é",
            "日",
            "😀",
            "\0",
            "--",
            "/*",
            "*/",
            "''",
            "\"\"",
            "::",
            "NOT ",
            " AND ",
            " OR ",
            "SELECT ",
            " FROM ",
            "NULL",
            "CASE ",
            " END",
            "INTERVAL ",
            "1e",
            "9223372036854775808",
            " IS ",
            " IN ",
            " BETWEEN ",
            "=>",
            "[",
            "]",
            "DESCRIBE ",
            "SHOW TABLES",
            "SUMMARIZE ",
            "read_csv(",
            "EXTRACT(",
            " FROM ",
        ];
        let mut rng = ChaCha8Rng::seed_from_u64(0x6b61_7479);
        let mut seeds: Vec<String> = BENCHMARK_QUERIES
            .iter()
            .chain(STATEMENTS)
            .map(|s| s.to_string())
            .collect();
        seeds.extend(
            EXPRESSIONS
                .iter()
                .map(|(e, _)| format!("SELECT {e} FROM t")),
        );
        seeds.extend(ERRORS.iter().map(|(q, _, _)| q.to_string()));

        let parsed = Cell::new(0);
        let check = |sql: &str| match parse(sql) {
            Ok(statement) => {
                check_properties(sql, &statement);
                parsed.set(parsed.get() + 1);
            }
            Err(Error::Parse { offset, message }) => {
                assert!(
                    offset <= sql.len() && sql.is_char_boundary(offset),
                    "{sql:?}: {offset}"
                );
                assert!(!message.is_empty());
            }
            Err(other) => panic!("{sql:?}: unexpected error kind {other:?}"),
        };
        let mut cases = 0;
        for seed in &seeds {
            for (cut, _) in seed.char_indices() {
                check(&seed[..cut]);
                check(&seed[cut..]);
                cases += 2;
            }
            for _ in 0..150 {
                let mut s = seed.clone();
                for _ in 0..rng.gen_range(1..4) {
                    let boundaries: Vec<usize> =
                        s.char_indices().map(|(i, _)| i).chain([s.len()]).collect();
                    let at = boundaries[rng.gen_range(0..boundaries.len())];
                    match rng.gen_range(0..3) {
                        0 => s.insert_str(at, PIECES[rng.gen_range(0..PIECES.len())]),
                        1 if at < s.len() => {
                            s.remove(at);
                        }
                        _ => {
                            let c = char::from_u32(rng.gen_range(0..0x250)).unwrap_or('?');
                            s.insert(at, c);
                        }
                    }
                }
                check(&s);
                cases += 1;
            }
        }
        for _ in 0..2000 {
            let bytes: Vec<u8> = (0..rng.gen_range(0..40)).map(|_| rng.r#gen()).collect();
            check(&String::from_utf8_lossy(&bytes));
            let pieces: String = (0..rng.gen_range(0..12))
                .map(|_| PIECES[rng.gen_range(0..PIECES.len())])
                .collect();
            check(&pieces);
            cases += 2;
        }
        assert!(cases > 20_000, "only {cases} cases");
        // Enough mutants still parse for the round-trip and span checks to
        // have been exercised on unusual input.
        assert!(
            parsed.get() > 2_000,
            "only {} of {cases} parsed",
            parsed.get()
        );
    }
}
