//! Bound expressions: names resolved to column indices, every node typed.

use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use regex_automata::nfa::thompson::backtrack::{self, BoundedBacktracker};

use crate::sql::ast;
use crate::types::{DataType, TimestampFormat, Value};

/// A binary operator of a bound expression. The plan owns its operators, so
/// the executor never reaches into the SQL syntax tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BinaryOp {
    /// `OR` (three-valued)
    Or,
    /// `AND` (three-valued)
    And,
    /// `=`
    Eq,
    /// `<>`
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
    /// `/` (integer division truncates toward zero)
    Divide,
    /// `%` (takes the dividend's sign)
    Modulo,
    /// `||`, only between parsing and binding: the binder makes it a
    /// [`Func::Concat`] call, so a bound expression never holds it.
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

    /// True for `+ - * / %`.
    pub fn is_arithmetic(self) -> bool {
        matches!(
            self,
            BinaryOp::Plus
                | BinaryOp::Minus
                | BinaryOp::Multiply
                | BinaryOp::Divide
                | BinaryOp::Modulo
        )
    }

    /// The comparison with its operands swapped (`a < b` is `b > a`); other
    /// operators unchanged.
    pub fn flip(self) -> BinaryOp {
        match self {
            BinaryOp::Lt => BinaryOp::Gt,
            BinaryOp::LtEq => BinaryOp::GtEq,
            BinaryOp::Gt => BinaryOp::Lt,
            BinaryOp::GtEq => BinaryOp::LtEq,
            op => op,
        }
    }
}

impl From<ast::BinaryOp> for BinaryOp {
    fn from(op: ast::BinaryOp) -> BinaryOp {
        match op {
            ast::BinaryOp::Or => BinaryOp::Or,
            ast::BinaryOp::And => BinaryOp::And,
            ast::BinaryOp::Eq => BinaryOp::Eq,
            ast::BinaryOp::NotEq => BinaryOp::NotEq,
            ast::BinaryOp::Lt => BinaryOp::Lt,
            ast::BinaryOp::LtEq => BinaryOp::LtEq,
            ast::BinaryOp::Gt => BinaryOp::Gt,
            ast::BinaryOp::GtEq => BinaryOp::GtEq,
            ast::BinaryOp::Plus => BinaryOp::Plus,
            ast::BinaryOp::Minus => BinaryOp::Minus,
            ast::BinaryOp::Multiply => BinaryOp::Multiply,
            ast::BinaryOp::Divide => BinaryOp::Divide,
            ast::BinaryOp::Modulo => BinaryOp::Modulo,
            ast::BinaryOp::Concat => BinaryOp::Concat,
        }
    }
}

/// A scalar function known to the planner.
///
/// Not `Copy`: [`Func::RegexpReplace`] carries its compiled pattern, so that
/// a query compiles it once, at plan time.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Func {
    /// `year(ts)` / `to_year(ts)`: calendar year of a timestamp, integer.
    Year,
    /// `date_trunc(unit, ts)`: the timestamp truncated to the unit.
    DateTrunc(TruncUnit),
    /// `floor(x)`: largest integer not above x; keeps the argument's type.
    Floor,
    /// `ceil(x)` / `ceiling(x)`: smallest integer not below x.
    Ceil,
    /// `round(x)`, `round(x, d)`: half away from zero to `d` decimal digits.
    Round,
    /// `abs(x)`.
    Abs,
    /// `trunc(x)`: x rounded toward zero; keeps the argument's type.
    Trunc,
    /// `sign(x)`: -1, 0 or 1 (an integer; 0 for a NaN).
    Sign,
    /// `pow(x, y)` / `power(x, y)`: x to the power y, a float.
    Pow,
    /// A float function of one float (`sqrt`, `ln`, `sin`, …); integers
    /// are converted. Outside a function's domain the answer is IEEE's
    /// (`sqrt(-1)` is NaN, `ln(0)` is -inf), as ClickHouse and Polars give.
    Math(MathFn),
    /// `lower(s)`.
    Lower,
    /// `upper(s)`.
    Upper,
    /// `length(s)`: characters in a string.
    Length,
    /// `strlen(s)`: bytes of a string's UTF-8 encoding (DuckDB's `strlen`).
    StrLen,
    /// `substring(s, start[, length])` / `substring(s FROM start FOR
    /// length)`: characters from the 1-based `start`, as PostgreSQL
    /// counts them (a start before 1 shortens the length).
    Substring,
    /// `extract(part FROM ts)` / `date_part('part', ts)`: an integer part of
    /// a timestamp (a float for [`DatePart::Epoch`]). `extract(year …)`
    /// binds to [`Func::Year`] instead, which the executor specializes.
    Extract(DatePart),
    /// `regexp_replace(s, pattern, replacement[, flags])` with the pattern
    /// compiled at plan time; the call's one argument is `s`.
    RegexpReplace(Arc<RegexpReplace>),
    /// `strptime(s, format)`: the timestamp `s` is in the layout `format`
    /// (strftime notation, compiled at plan time), an error when it is
    /// not; `try_strptime` gives NULL instead. The call's one argument is
    /// `s`.
    Strptime {
        /// The layout.
        format: Arc<TimestampFormat>,
        /// `try_strptime`: NULL for a text not in the layout.
        try_parse: bool,
    },
    /// A string function ([`StrFn`]): its first argument is a string, the
    /// others as [`StrFn`] lists them; NULL when any argument is NULL.
    Str(StrFn),
    /// `a || b` (and `concat`, whose NULL arguments the binder makes
    /// empty strings): the strings joined; NULL when any is NULL.
    Concat,
    /// `concat_ws(sep, s…)`: the non-NULL strings joined by `sep`; NULL
    /// only when `sep` is.
    ConcatWs,
    /// `greatest(x…)`: the largest non-NULL argument (in
    /// [`Value::total_cmp`]'s order, NaN above every number); NULL when
    /// all are NULL. The binder unifies the arguments' types as CASE does.
    Greatest,
    /// `least(x…)`: the smallest non-NULL argument, as [`Func::Greatest`].
    Least,
    /// `strftime(ts, format)`: the timestamp as text in `format` (strftime
    /// notation, checked at plan time).
    Strftime(Arc<StrftimeFormat>),
    /// `date_diff(part, start, end)` / `datediff`: how many `part`
    /// boundaries lie between `start` and `end` (DuckDB's definition;
    /// `week` is whole 7-day spans), negative when `end` is earlier.
    DateDiff(DatePart),
    /// `random()`: a float uniform in [0, 1), drawn anew for every row
    /// (never folded to a constant).
    Random,
    /// `ts + INTERVAL 'n' MONTH` on a timestamp that is not a constant:
    /// the timestamp moved by `n` calendar months (negative for `-`), the
    /// day of the month kept or, past the new month's end, its last day
    /// (PostgreSQL's and DuckDB's rule).
    AddMonths(i64),
    /// `extract(part FROM interval)` for a part where
    /// [`DatePart::applies_to_intervals`]: see [`super::eval::interval_part`].
    IntervalPart(DatePart),
}

/// The longest string (in bytes) a string function may build: 1 MiB. A
/// length typed by the user (`repeat('a', 1e12)`, `lpad(s, n, 'x')`) never
/// sizes an allocation beyond it; longer results are an error naming the
/// function.
pub const MAX_STRING_BYTES: usize = 1 << 20;

/// A string function of [`Func::Str`], with DuckDB's semantics. Counts and
/// positions are in characters (Unicode scalar values), 1-based.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StrFn {
    /// `starts_with(s, p)` / `prefix`: a boolean.
    StartsWith,
    /// `ends_with(s, p)` / `suffix`: a boolean.
    EndsWith,
    /// `contains(s, p)`: a boolean.
    Contains,
    /// `strpos(s, p)` / `instr`: position of the first `p` in `s`, 0 when
    /// absent (1 for an empty `p`).
    Strpos,
    /// `replace(s, from, to)`: every `from` replaced (none for an empty
    /// `from`).
    Replace,
    /// `lpad(s, n, fill)`: `s` cut or left-padded with `fill` repeated to
    /// `n` characters (an error when padding is needed and `fill` is
    /// empty).
    Lpad,
    /// `rpad(s, n, fill)`: as `lpad`, padded on the right.
    Rpad,
    /// `left(s, n)`: the first `n` characters; all but the last `-n` for a
    /// negative `n`.
    Left,
    /// `right(s, n)`: the last `n` characters; all but the first `-n` for a
    /// negative `n`.
    Right,
    /// `reverse(s)`: the characters in reverse order.
    Reverse,
    /// `repeat(s, n)`: `s` `n` times ('' for `n <= 0`).
    Repeat,
    /// `split_part(s, sep, i)`: the `i`th field of `s` split at `sep`
    /// (each character for an empty `sep`), counted from the end for a
    /// negative `i`; '' for `i = 0` or out of range.
    SplitPart,
    /// `ltrim(s[, chars])`: leading characters of `chars` (spaces when
    /// absent) removed.
    Ltrim,
    /// `rtrim(s[, chars])`: trailing ones removed.
    Rtrim,
    /// `trim(s[, chars])`: both.
    Trim,
    /// `ascii(s)`: the code point of the first character, 0 for ''.
    Ascii,
    /// `chr(n)`: the character of code point `n` (its one argument is the
    /// integer), an error for a value that is no code point.
    Chr,
}

impl StrFn {
    /// The canonical SQL name.
    pub fn name(self) -> &'static str {
        match self {
            StrFn::StartsWith => "starts_with",
            StrFn::EndsWith => "ends_with",
            StrFn::Contains => "contains",
            StrFn::Strpos => "strpos",
            StrFn::Replace => "replace",
            StrFn::Lpad => "lpad",
            StrFn::Rpad => "rpad",
            StrFn::Left => "left",
            StrFn::Right => "right",
            StrFn::Reverse => "reverse",
            StrFn::Repeat => "repeat",
            StrFn::SplitPart => "split_part",
            StrFn::Ltrim => "ltrim",
            StrFn::Rtrim => "rtrim",
            StrFn::Trim => "trim",
            StrFn::Ascii => "ascii",
            StrFn::Chr => "chr",
        }
    }

    /// The function called `name` (lower case, aliases included).
    pub fn parse(name: &str) -> Option<StrFn> {
        Some(match name {
            "starts_with" | "prefix" => StrFn::StartsWith,
            "ends_with" | "suffix" => StrFn::EndsWith,
            "contains" => StrFn::Contains,
            "strpos" | "instr" => StrFn::Strpos,
            "replace" => StrFn::Replace,
            "lpad" => StrFn::Lpad,
            "rpad" => StrFn::Rpad,
            "left" => StrFn::Left,
            "right" => StrFn::Right,
            "reverse" => StrFn::Reverse,
            "repeat" => StrFn::Repeat,
            "split_part" => StrFn::SplitPart,
            "ltrim" => StrFn::Ltrim,
            "rtrim" => StrFn::Rtrim,
            "trim" => StrFn::Trim,
            "ascii" => StrFn::Ascii,
            "chr" => StrFn::Chr,
            _ => return None,
        })
    }

    /// The arguments' types: the required ones, then the optional ones.
    pub fn signature(self) -> (&'static [DataType], &'static [DataType]) {
        use DataType::{Int, Str};
        match self {
            StrFn::StartsWith
            | StrFn::EndsWith
            | StrFn::Contains
            | StrFn::Strpos => (&[Str, Str], &[]),
            StrFn::Replace => (&[Str, Str, Str], &[]),
            StrFn::Lpad | StrFn::Rpad => (&[Str, Int, Str], &[]),
            StrFn::Left | StrFn::Right | StrFn::Repeat => (&[Str, Int], &[]),
            StrFn::SplitPart => (&[Str, Str, Int], &[]),
            StrFn::Reverse | StrFn::Ascii => (&[Str], &[]),
            StrFn::Ltrim | StrFn::Rtrim | StrFn::Trim => (&[Str], &[Str]),
            StrFn::Chr => (&[Int], &[]),
        }
    }

    /// The result type.
    pub fn result_type(self) -> DataType {
        match self {
            StrFn::StartsWith | StrFn::EndsWith | StrFn::Contains => DataType::Bool,
            StrFn::Strpos | StrFn::Ascii => DataType::Int,
            _ => DataType::Str,
        }
    }
}

/// A `strftime` format: DuckDB's notation as written, and the same for
/// chrono (`%f` microseconds as `%6f`, `%g` milliseconds as `%3f`, `%n`
/// nanoseconds as `%9f`), checked to hold only specifiers chrono formats
/// without a time zone.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct StrftimeFormat {
    /// The format as written.
    pub text: String,
    /// The format in chrono's notation.
    pub chrono: String,
}

impl StrftimeFormat {
    /// Checks and translates `text`.
    ///
    /// # Errors
    /// A message naming the first specifier chrono does not know, or one
    /// that needs a time zone (`%z`, `%Z`, `%:z`).
    pub fn new(text: &str) -> Result<StrftimeFormat, String> {
        use chrono::format::{Item, StrftimeItems};
        let mut chrono = String::with_capacity(text.len());
        let mut chars = text.chars();
        while let Some(c) = chars.next() {
            chrono.push(c);
            if c != '%' {
                continue;
            }
            match chars.next() {
                Some('f') => chrono.push_str("6f"),
                Some('g') => chrono.push_str("3f"),
                Some('n') => chrono.push_str("9f"),
                Some(d) => chrono.push(d),
                None => {}
            }
        }
        let bad = StrftimeItems::new(&chrono).any(|item| match item {
            Item::Error => true,
            Item::Fixed(f) => matches!(
                f,
                chrono::format::Fixed::TimezoneName
                    | chrono::format::Fixed::TimezoneOffset
                    | chrono::format::Fixed::TimezoneOffsetColon
                    | chrono::format::Fixed::TimezoneOffsetColonZ
                    | chrono::format::Fixed::TimezoneOffsetDoubleColon
                    | chrono::format::Fixed::TimezoneOffsetTripleColon
                    | chrono::format::Fixed::TimezoneOffsetZ
                    | chrono::format::Fixed::RFC2822
                    | chrono::format::Fixed::RFC3339
            ),
            _ => false,
        });
        if bad {
            return Err(format!(
                "invalid strftime format '{text}' (use specifiers such as %Y, %m, %d, %H, %M, %S, %f; time zones are not supported)"
            ));
        }
        Ok(StrftimeFormat {
            text: text.to_string(),
            chrono,
        })
    }
}

/// The parts `extract` and `date_part` take, with PostgreSQL's and DuckDB's
/// meanings (and DuckDB's integer `second`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DatePart {
    /// Calendar year. The planner binds `extract(year …)` to [`Func::Year`],
    /// which the executor specializes, so this only appears in plans built
    /// by hand.
    Year,
    /// ISO 8601 week-numbering year: the year of the week's Thursday.
    IsoYear,
    /// Quarter of the year, 1 to 4.
    Quarter,
    /// Month, 1 to 12.
    Month,
    /// ISO 8601 week of the year, 1 to 53 (weeks start on Monday; week 1
    /// holds the year's first Thursday).
    Week,
    /// Day of the month, 1 to 31.
    Day,
    /// Day of the week, Sunday 0 to Saturday 6.
    DayOfWeek,
    /// ISO day of the week, Monday 1 to Sunday 7.
    IsoDayOfWeek,
    /// Day of the year, 1 to 366.
    DayOfYear,
    /// Hour, 0 to 23.
    Hour,
    /// Minute, 0 to 59.
    Minute,
    /// Whole seconds within the minute, 0 to 59.
    Second,
    /// Milliseconds within the minute, seconds included: 0 to 59,999.
    Millisecond,
    /// Microseconds within the minute, seconds included: 0 to 59,999,999.
    Microsecond,
    /// Seconds since 1970-01-01 00:00:00 as a float with the microseconds
    /// as its fraction (a float in DuckDB and PostgreSQL too).
    Epoch,
}

impl DatePart {
    /// Parses a part name as PostgreSQL and DuckDB accept it
    /// (case-insensitive, with DuckDB's synonyms such as `dow`, `doy`,
    /// `minutes`, `ms`).
    pub fn parse(s: &str) -> Option<DatePart> {
        Some(match s.to_ascii_lowercase().as_str() {
            "year" | "years" | "yr" | "yrs" | "y" => DatePart::Year,
            "isoyear" => DatePart::IsoYear,
            "quarter" | "quarters" => DatePart::Quarter,
            "month" | "months" | "mon" | "mons" => DatePart::Month,
            "week" | "weeks" | "w" | "weekofyear" => DatePart::Week,
            "day" | "days" | "d" | "dayofmonth" => DatePart::Day,
            "dow" | "dayofweek" | "weekday" => DatePart::DayOfWeek,
            "isodow" => DatePart::IsoDayOfWeek,
            "doy" | "dayofyear" => DatePart::DayOfYear,
            "hour" | "hours" | "hr" | "hrs" | "h" => DatePart::Hour,
            "minute" | "minutes" | "min" | "mins" | "m" => DatePart::Minute,
            "second" | "seconds" | "sec" | "secs" | "s" => DatePart::Second,
            "millisecond" | "milliseconds" | "ms" | "msec" | "msecs" => DatePart::Millisecond,
            "microsecond" | "microseconds" | "us" | "usec" | "usecs" => DatePart::Microsecond,
            "epoch" => DatePart::Epoch,
            _ => return None,
        })
    }

    /// The canonical name, as EXPLAIN prints it.
    pub fn name(self) -> &'static str {
        match self {
            DatePart::Year => "year",
            DatePart::IsoYear => "isoyear",
            DatePart::Quarter => "quarter",
            DatePart::Month => "month",
            DatePart::Week => "week",
            DatePart::Day => "day",
            DatePart::DayOfWeek => "dow",
            DatePart::IsoDayOfWeek => "isodow",
            DatePart::DayOfYear => "doy",
            DatePart::Hour => "hour",
            DatePart::Minute => "minute",
            DatePart::Second => "second",
            DatePart::Millisecond => "millisecond",
            DatePart::Microsecond => "microsecond",
            DatePart::Epoch => "epoch",
        }
    }

    /// The result type: integer, except a float for `epoch`.
    pub fn result_type(self) -> DataType {
        match self {
            DatePart::Epoch => DataType::Float,
            _ => DataType::Int,
        }
    }

    /// Whether an interval (a length of time without months) has this
    /// part: epoch, day and the parts of a day.
    pub fn applies_to_intervals(self) -> bool {
        matches!(
            self,
            DatePart::Epoch
                | DatePart::Day
                | DatePart::Hour
                | DatePart::Minute
                | DatePart::Second
                | DatePart::Millisecond
                | DatePart::Microsecond
        )
    }
}

/// A compiled `regexp_replace`: pattern, replacement and options, as
/// DuckDB defines them over RE2 (here the `regex` crate, whose syntax is
/// RE2's).
///
/// Two are equal when their source texts and options are, so that equal
/// calls in a select list and a GROUP BY are recognized as one expression.
#[derive(Debug)]
pub struct RegexpReplace {
    /// The pattern as written.
    pub pattern: String,
    /// The replacement as written, `\1` style.
    pub replacement: String,
    /// The options as written (`g`, `i`, …), empty when absent.
    pub flags: String,
    /// The compiled pattern (options applied).
    pub regex: regex::Regex,
    /// The replacement translated to the `regex` crate's `${1}` syntax.
    pub expansion: String,
    /// The replacement as literal text and group references, in order.
    pieces: Vec<Piece>,
    /// Replace every match (`g`), not only the first.
    pub global: bool,
    /// The pattern without its trailing `.*$` when it is `^P.*$`, for a
    /// faster match; see [`AnchoredPrefix`].
    anchored: Option<AnchoredPrefix>,
}

/// Scratch space of [`RegexpReplace::replace_into`]: the backtracker's
/// cache and group positions of a `^P.*$` pattern (none for others).
#[derive(Debug)]
pub struct RegexpScratch(Option<(backtrack::Cache, regex_automata::util::captures::Captures)>);

/// A piece of a parsed replacement.
#[derive(Debug, Clone)]
enum Piece {
    /// Literal text.
    Text(String),
    /// The text of group `n` (0: the whole match), empty when it did not
    /// take part in the match.
    Group(usize),
}

/// A pattern `^P.*$` (anchored at the start of the text, ending in a greedy
/// `.*` and the end of the text, as ClickBench's query 29 extracts a host
/// from a URL) and a replacement that does not use the whole match (`\0`).
///
/// On a text without a line break (`.` matching every character, under
/// the `s` option or `(?s)`, lifts that condition), `.*$` matches whatever
/// follows any match of `^P`, so under leftmost-first semantics the first
/// match of `^P.*$` is the first match of `^P` extended to the text's end,
/// with the same groups, and the text becomes just the replacement. Only
/// `P` is run, with its groups: the regex crate resolves groups with a
/// backtracker over the whole match, so a URL of 100 bytes costs the
/// backtracker 100 bytes of `.*` for a host of 20.
#[derive(Debug, Clone)]
struct AnchoredPrefix {
    /// `^P`.
    regex: regex::Regex,
    /// `^P` as a bounded backtracker alone, for batches (see
    /// [`RegexpReplace::replace_into`]).
    backtracker: BoundedBacktracker,
    /// Whether the trailing `.` matched line breaks too.
    dot_matches_new_line: bool,
}

impl AnchoredPrefix {
    /// `Some` when `source` parses (with the same options) to `^P.*$`.
    fn of(source: &str, ignore_case: bool, dot_nl: bool) -> Option<AnchoredPrefix> {
        use regex_syntax::hir::{Dot, Hir, HirKind, Look};
        let hir = regex_syntax::ParserBuilder::new()
            .case_insensitive(ignore_case)
            .dot_matches_new_line(dot_nl)
            .build()
            .parse(source)
            .ok()?;
        let HirKind::Concat(items) = hir.kind() else {
            return None;
        };
        let n = items.len();
        if n < 3 {
            return None;
        }
        let starts = matches!(items[0].kind(), HirKind::Look(Look::Start));
        let ends = matches!(items[n - 1].kind(), HirKind::Look(Look::End));
        let HirKind::Repetition(rep) = items[n - 2].kind() else {
            return None;
        };
        if !starts || !ends || rep.min != 0 || rep.max.is_some() || !rep.greedy {
            return None;
        }
        let dot_matches_new_line = if *rep.sub == Hir::dot(Dot::AnyChar) {
            true
        } else if *rep.sub == Hir::dot(Dot::AnyCharExceptLF) {
            false
        } else {
            return None;
        };
        let prefix = Hir::concat(items[..n - 2].to_vec()).to_string();
        let regex = regex::Regex::new(&prefix).ok()?;
        let backtracker = BoundedBacktracker::new(&prefix).ok()?;
        Some(AnchoredPrefix {
            regex,
            backtracker,
            dot_matches_new_line,
        })
    }
}

impl RegexpReplace {
    /// Compiles `regexp_replace`'s pattern, replacement and options.
    ///
    /// Options (DuckDB's): `g` replaces every match instead of the first;
    /// `i` matches case-insensitively and `c` case-sensitively (the last
    /// one wins); `l` takes the pattern literally; `s` lets `.` match a
    /// newline; `m`, `n` and `p` keep it from doing so (the default).
    ///
    /// In the replacement, `\0` to `\9` stand for the match and its groups
    /// (RE2's rewrite syntax) and `\\` for one backslash; everything else is
    /// literal, `$` included.
    ///
    /// # Errors
    /// `(argument, message)`: which argument is wrong (1 the pattern, 2 the
    /// replacement, 3 the options) and why, e.g. an invalid pattern, a
    /// pattern whose compiled form passes the `regex` crate's size limit,
    /// a reference to a group the pattern lacks, or an unknown option.
    pub fn new(
        pattern: &str,
        replacement: &str,
        flags: &str,
    ) -> Result<RegexpReplace, (usize, String)> {
        let (mut global, mut ignore_case, mut literal, mut dot_nl) = (false, false, false, false);
        for c in flags.chars() {
            match c {
                'g' => global = true,
                'i' => ignore_case = true,
                'c' => ignore_case = false,
                'l' => literal = true,
                's' => dot_nl = true,
                'm' | 'n' | 'p' => dot_nl = false,
                _ => {
                    return Err((
                        3,
                        format!(
                            "unknown regexp_replace option \"{c}\" (use g, i, c, l, s, m, n or p)"
                        ),
                    ));
                }
            }
        }
        let source = if literal {
            regex::escape(pattern)
        } else {
            pattern.to_string()
        };
        let regex = regex::RegexBuilder::new(&source)
            .case_insensitive(ignore_case)
            .dot_matches_new_line(dot_nl)
            .build()
            .map_err(|e| {
                (
                    1,
                    format!("invalid regular expression: {}", regex_message(&e)),
                )
            })?;
        let groups = regex.captures_len() - 1;
        let mut expansion = String::with_capacity(replacement.len() + 8);
        let mut pieces = Vec::new();
        let mut text = String::new();
        let mut chars = replacement.chars();
        while let Some(c) = chars.next() {
            match c {
                '\\' => match chars.next() {
                    Some('\\') => {
                        expansion.push('\\');
                        text.push('\\');
                    }
                    Some(d @ '0'..='9') => {
                        let group = d as usize - '0' as usize;
                        if group > groups {
                            return Err((
                                2,
                                format!(
                                    "the replacement refers to group \\{group}, but the pattern has {groups} group{}",
                                    if groups == 1 { "" } else { "s" }
                                ),
                            ));
                        }
                        expansion.push_str(&format!("${{{group}}}"));
                        if !text.is_empty() {
                            pieces.push(Piece::Text(std::mem::take(&mut text)));
                        }
                        pieces.push(Piece::Group(group));
                    }
                    Some(other) => {
                        return Err((
                            2,
                            format!(
                                "invalid escape \"\\{other}\" in the replacement (use \\0 to \\9 for groups, \\\\ for a backslash)"
                            ),
                        ));
                    }
                    None => {
                        return Err((
                            2,
                            "the replacement ends in a lone backslash (use \\\\ for one)".into(),
                        ));
                    }
                },
                '$' => {
                    expansion.push_str("$$");
                    text.push('$');
                }
                c => {
                    expansion.push(c);
                    text.push(c);
                }
            }
        }
        if !text.is_empty() {
            pieces.push(Piece::Text(text));
        }
        let anchored = if literal || expansion.contains("${0}") {
            None
        } else {
            AnchoredPrefix::of(&source, ignore_case, dot_nl)
        };
        Ok(RegexpReplace {
            pattern: pattern.to_string(),
            replacement: replacement.to_string(),
            flags: flags.to_string(),
            regex,
            expansion,
            pieces,
            global,
            anchored,
        })
    }

    /// Whether a pattern `^P.*$` runs as `^P` (see [`AnchoredPrefix`]).
    #[cfg(test)]
    pub(crate) fn runs_prefix(&self) -> bool {
        self.anchored.is_some()
    }

    /// `s` with the first match (every match with `g`) replaced; borrowed
    /// when nothing matched.
    pub fn replace<'s>(&self, s: &'s str) -> std::borrow::Cow<'s, str> {
        if let Some(a) = &self.anchored
            && (a.dot_matches_new_line || memchr::memchr(b'\n', s.as_bytes()).is_none())
        {
            // `^P.*$` matches the whole text exactly when `^P` matches.
            return match a.regex.captures(s) {
                None => std::borrow::Cow::Borrowed(s),
                Some(groups) => {
                    let mut out = String::new();
                    groups.expand(&self.expansion, &mut out);
                    std::borrow::Cow::Owned(out)
                }
            };
        }
        let limit = if self.global { 0 } else { 1 };
        self.regex.replacen(s, limit, self.expansion.as_str())
    }

    /// Scratch space for [`RegexpReplace::replace_into`], made once per
    /// batch.
    pub fn scratch(&self) -> RegexpScratch {
        RegexpScratch(self.anchored.as_ref().map(|a| {
            (a.backtracker.create_cache(), a.backtracker.create_captures())
        }))
    }

    /// [`RegexpReplace::replace`] appended to `out`, with `scratch` (from
    /// [`RegexpReplace::scratch`]) reused row after row. A `^P.*$` pattern
    /// runs `^P` on a bounded backtracker alone, with no allocation per
    /// row, and expands the replacement from its pieces parsed once. perf
    /// of ClickBench q29: the regex crate's `captures` (a lazy DFA pass
    /// for the match's end, a pool's cache, then the backtracker over the
    /// match) and `expand` were two thirds of the query; a text the
    /// backtracker cannot bound (longer than its visited set allows) goes
    /// the regex crate's way.
    pub fn replace_into(&self, s: &str, scratch: &mut RegexpScratch, out: &mut String) {
        let searched = match (&self.anchored, &mut scratch.0) {
            (Some(a), Some((cache, captures)))
                if a.dot_matches_new_line || memchr::memchr(b'\n', s.as_bytes()).is_none() =>
            {
                let input = regex_automata::Input::new(s).anchored(regex_automata::Anchored::Yes);
                a.backtracker
                    .try_search(cache, &input, captures)
                    .ok()
                    .map(|()| &*captures)
            }
            _ => None,
        };
        let Some(captures) = searched else {
            out.push_str(&self.replace(s));
            return;
        };
        if !captures.is_match() {
            out.push_str(s);
            return;
        }
        for piece in &self.pieces {
            match piece {
                Piece::Text(t) => out.push_str(t),
                Piece::Group(g) => {
                    if let Some(span) = captures.get_group(*g) {
                        out.push_str(&s[span.range()]);
                    }
                }
            }
        }
    }
}

/// The last line of a `regex` error (`error: unclosed group`) without its
/// prefix, or the whole message when it has no such line.
fn regex_message(e: &regex::Error) -> String {
    let text = e.to_string();
    match text.lines().rev().find_map(|l| l.strip_prefix("error: ")) {
        Some(last) => last.to_string(),
        None => text.lines().next().unwrap_or_default().to_string(),
    }
}

impl PartialEq for RegexpReplace {
    fn eq(&self, other: &Self) -> bool {
        (&self.pattern, &self.replacement, &self.flags)
            == (&other.pattern, &other.replacement, &other.flags)
    }
}

impl Eq for RegexpReplace {}

impl Hash for RegexpReplace {
    fn hash<H: Hasher>(&self, state: &mut H) {
        (&self.pattern, &self.replacement, &self.flags).hash(state);
    }
}

/// Units of `date_trunc`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TruncUnit {
    /// Whole seconds.
    Second,
    /// Whole minutes.
    Minute,
    /// Whole hours.
    Hour,
    /// Midnight.
    Day,
    /// First day of the month.
    Month,
    /// First day of the year.
    Year,
}

impl TruncUnit {
    /// Parses a unit name as `date_trunc` accepts it.
    pub fn parse(s: &str) -> Option<TruncUnit> {
        Some(match s.to_ascii_lowercase().as_str() {
            "second" => TruncUnit::Second,
            "minute" => TruncUnit::Minute,
            "hour" => TruncUnit::Hour,
            "day" => TruncUnit::Day,
            "month" => TruncUnit::Month,
            "year" => TruncUnit::Year,
            _ => return None,
        })
    }

    fn name(self) -> &'static str {
        match self {
            TruncUnit::Second => "second",
            TruncUnit::Minute => "minute",
            TruncUnit::Hour => "hour",
            TruncUnit::Day => "day",
            TruncUnit::Month => "month",
            TruncUnit::Year => "year",
        }
    }
}

/// A quantile's fraction, in [0, 1], kept as the bits of its `f64` so
/// that an aggregate stays `Eq + Hash`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Fraction(u64);

impl Fraction {
    /// The fraction `f`; `None` unless `0 <= f <= 1`.
    pub fn new(f: f64) -> Option<Fraction> {
        (0.0..=1.0).contains(&f).then(|| Fraction(f.to_bits()))
    }

    /// The fraction as a float.
    pub fn get(self) -> f64 {
        f64::from_bits(self.0)
    }
}

/// A float function of one float argument: [`Func::Math`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MathFn {
    /// `sqrt(x)`.
    Sqrt,
    /// `cbrt(x)`: the cube root.
    Cbrt,
    /// `exp(x)`: e to the power x.
    Exp,
    /// `ln(x)`: the natural logarithm.
    Ln,
    /// `log10(x)`, and `log(x)` as DuckDB reads it.
    Log10,
    /// `log2(x)`.
    Log2,
    /// `sin(x)`, radians.
    Sin,
    /// `cos(x)`.
    Cos,
    /// `tan(x)`.
    Tan,
    /// `asin(x)`.
    Asin,
    /// `acos(x)`.
    Acos,
    /// `atan(x)`.
    Atan,
    /// `degrees(x)`: radians to degrees.
    Degrees,
    /// `radians(x)`: degrees to radians.
    Radians,
}

impl MathFn {
    const ALL: [MathFn; 14] = [
        MathFn::Sqrt,
        MathFn::Cbrt,
        MathFn::Exp,
        MathFn::Ln,
        MathFn::Log10,
        MathFn::Log2,
        MathFn::Sin,
        MathFn::Cos,
        MathFn::Tan,
        MathFn::Asin,
        MathFn::Acos,
        MathFn::Atan,
        MathFn::Degrees,
        MathFn::Radians,
    ];

    /// The function called `name` (lower case; `log` is `log10`).
    pub fn parse(name: &str) -> Option<MathFn> {
        if name == "log" {
            return Some(MathFn::Log10);
        }
        Self::ALL.into_iter().find(|m| m.name() == name)
    }

    /// The SQL name.
    pub fn name(self) -> &'static str {
        match self {
            MathFn::Sqrt => "sqrt",
            MathFn::Cbrt => "cbrt",
            MathFn::Exp => "exp",
            MathFn::Ln => "ln",
            MathFn::Log10 => "log10",
            MathFn::Log2 => "log2",
            MathFn::Sin => "sin",
            MathFn::Cos => "cos",
            MathFn::Tan => "tan",
            MathFn::Asin => "asin",
            MathFn::Acos => "acos",
            MathFn::Atan => "atan",
            MathFn::Degrees => "degrees",
            MathFn::Radians => "radians",
        }
    }

    /// The function at `x`.
    #[inline]
    pub fn apply(self, x: f64) -> f64 {
        match self {
            MathFn::Sqrt => x.sqrt(),
            MathFn::Cbrt => x.cbrt(),
            MathFn::Exp => x.exp(),
            MathFn::Ln => x.ln(),
            MathFn::Log10 => x.log10(),
            MathFn::Log2 => x.log2(),
            MathFn::Sin => x.sin(),
            MathFn::Cos => x.cos(),
            MathFn::Tan => x.tan(),
            MathFn::Asin => x.asin(),
            MathFn::Acos => x.acos(),
            MathFn::Atan => x.atan(),
            MathFn::Degrees => x.to_degrees(),
            MathFn::Radians => x.to_radians(),
        }
    }
}

/// An aggregate function.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AggFunc {
    /// `count(*)`: rows.
    CountStar,
    /// `count(x)`: non-NULL values.
    Count,
    /// `count(DISTINCT x)`: distinct non-NULL values, exact.
    CountDistinct,
    /// `approx_count_distinct(x)`: HyperLogLog estimate of distinct values.
    ApproxCountDistinct,
    /// `sum(x)`: integer sum is an integer (overflow is an error), float sum a float.
    Sum,
    /// `avg(x)`: always a float.
    Avg,
    /// `min(x)`.
    Min,
    /// `max(x)`.
    Max,
    /// `var_samp(x)` (`variance`): the sample variance, a float; NULL
    /// below two values.
    VarSamp,
    /// `var_pop(x)`: the population variance; NULL without values.
    VarPop,
    /// `stddev_samp(x)` (`stddev`): the square root of `var_samp`.
    StddevSamp,
    /// `stddev_pop(x)`: the square root of `var_pop`.
    StddevPop,
    /// `covar_samp(y, x)`: sample covariance of the pairs where both are
    /// non-NULL (as every two-argument aggregate below).
    CovarSamp,
    /// `covar_pop(y, x)`: population covariance.
    CovarPop,
    /// `corr(y, x)`: Pearson's correlation coefficient (NaN when either
    /// variance is 0, as DuckDB gives).
    Corr,
    /// `regr_slope(y, x)`: the least-squares slope of y on x.
    RegrSlope,
    /// `regr_intercept(y, x)`: the least-squares intercept.
    RegrIntercept,
    /// `regr_r2(y, x)`: the coefficient of determination.
    RegrR2,
    /// `quantile_cont(x, f)` (`median(x)` is f = 0.5): interpolated between
    /// the two nearest values (a float; a timestamp for timestamps).
    QuantileCont(Fraction),
    /// `quantile_disc(x, f)`: the value at position ⌈f·n⌉ in order (the
    /// first when f = 0), of x's type.
    QuantileDisc(Fraction),
    /// `mode(x)`: the most frequent value (the smallest of equally frequent
    /// ones).
    Mode,
    /// `percentile_disc(f) WITHIN GROUP (ORDER BY x DESC)`: the value at
    /// position ⌈f·n⌉ in descending order (the first when f = 0), as
    /// DuckDB counts it; not `quantile_disc` of 1 − f, whose position
    /// rounds the other way.
    QuantileDiscDesc(Fraction),
    /// `string_agg(s, separator [ORDER BY k])` (`listagg`,
    /// `group_concat`): the non-NULL strings of the group joined by
    /// [`AggCall::separator`]; NULL without any. With an `ORDER BY`, the
    /// key is [`AggCall::arg2`] and the strings follow it (`desc`, NULL
    /// keys first when `nulls_first`), equal keys by the strings
    /// themselves; without one, in the order the rows arrive.
    StringAgg {
        /// `ORDER BY k DESC`.
        desc: bool,
        /// NULL keys before every other key.
        nulls_first: bool,
        /// `string_agg(DISTINCT s, …)`: each string once (its first
        /// occurrence in the answer's order; an `ORDER BY` key must then
        /// be `s` itself, as DuckDB requires).
        distinct: bool,
    },
    /// `arg_min(arg, val)` (`argmin`, `min_by`): `arg` of the row with the
    /// smallest `val`, over the rows where both are non-NULL (DuckDB); of
    /// rows tied on `val`, the smallest `arg`.
    ArgMin,
    /// `arg_max(arg, val)` (`argmax`, `max_by`): as [`AggFunc::ArgMin`],
    /// the largest `val` (ties again to the smallest `arg`).
    ArgMax,
}

impl AggFunc {
    /// Names that call an aggregate (case-insensitive).
    pub const NAMES: &'static [&'static str] = &[
        "count",
        "approx_count_distinct",
        "sum",
        "avg",
        "mean",
        "min",
        "max",
        "var_samp",
        "variance",
        "var_pop",
        "stddev",
        "stddev_samp",
        "stddev_pop",
        "covar_samp",
        "covar_pop",
        "corr",
        "regr_slope",
        "regr_intercept",
        "regr_r2",
        "median",
        "quantile",
        "quantile_cont",
        "quantile_disc",
        "approx_quantile",
        "mode",
        "bool_and",
        "bool_or",
        "any_value",
        "count_if",
        "string_agg",
        "listagg",
        "group_concat",
        "arg_min",
        "arg_max",
        "argmin",
        "argmax",
        "min_by",
        "max_by",
        "percentile_cont",
        "percentile_disc",
    ];

    /// True when `name` calls an aggregate.
    pub fn is_aggregate_name(name: &str) -> bool {
        Self::NAMES.iter().any(|n| n.eq_ignore_ascii_case(name))
    }

    /// The SQL name.
    pub fn name(self) -> &'static str {
        match self {
            AggFunc::CountStar | AggFunc::Count | AggFunc::CountDistinct => "count",
            AggFunc::ApproxCountDistinct => "approx_count_distinct",
            AggFunc::Sum => "sum",
            AggFunc::Avg => "avg",
            AggFunc::Min => "min",
            AggFunc::Max => "max",
            AggFunc::VarSamp => "var_samp",
            AggFunc::VarPop => "var_pop",
            AggFunc::StddevSamp => "stddev_samp",
            AggFunc::StddevPop => "stddev_pop",
            AggFunc::CovarSamp => "covar_samp",
            AggFunc::CovarPop => "covar_pop",
            AggFunc::Corr => "corr",
            AggFunc::RegrSlope => "regr_slope",
            AggFunc::RegrIntercept => "regr_intercept",
            AggFunc::RegrR2 => "regr_r2",
            AggFunc::QuantileCont(_) => "quantile_cont",
            AggFunc::QuantileDisc(_) => "quantile_disc",
            AggFunc::Mode => "mode",
            AggFunc::QuantileDiscDesc(_) => "percentile_disc",
            AggFunc::StringAgg { .. } => "string_agg",
            AggFunc::ArgMin => "arg_min",
            AggFunc::ArgMax => "arg_max",
        }
    }

    /// True for the aggregates of two arguments (`corr(y, x)`, …).
    pub fn takes_pair(self) -> bool {
        matches!(
            self,
            AggFunc::CovarSamp
                | AggFunc::CovarPop
                | AggFunc::Corr
                | AggFunc::RegrSlope
                | AggFunc::RegrIntercept
                | AggFunc::RegrR2
        )
    }

    /// The result type for an argument of type `arg`.
    pub fn result_type(self, arg: DataType) -> DataType {
        match self {
            AggFunc::CountStar
            | AggFunc::Count
            | AggFunc::CountDistinct
            | AggFunc::ApproxCountDistinct => DataType::Int,
            AggFunc::Avg
            | AggFunc::VarSamp
            | AggFunc::VarPop
            | AggFunc::StddevSamp
            | AggFunc::StddevPop
            | AggFunc::CovarSamp
            | AggFunc::CovarPop
            | AggFunc::Corr
            | AggFunc::RegrSlope
            | AggFunc::RegrIntercept
            | AggFunc::RegrR2 => DataType::Float,
            AggFunc::QuantileCont(_) if arg == DataType::Timestamp => DataType::Timestamp,
            AggFunc::QuantileCont(_) => DataType::Float,
            AggFunc::StringAgg { .. } => DataType::Str,
            AggFunc::Sum
            | AggFunc::Min
            | AggFunc::Max
            | AggFunc::QuantileDisc(_)
            | AggFunc::QuantileDiscDesc(_)
            | AggFunc::Mode
            | AggFunc::ArgMin
            | AggFunc::ArgMax => arg,
        }
    }
}

/// One aggregate of a query: function and argument (over table columns).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct AggCall {
    /// The function.
    pub func: AggFunc,
    /// The argument; `None` only for `count(*)`.
    pub arg: Option<Expr>,
    /// The second argument of an aggregate that
    /// [takes a pair](AggFunc::takes_pair) (`x` of `corr(y, x)`), `val` of
    /// `arg_min(arg, val)`, or the `ORDER BY` key of `string_agg`.
    pub arg2: Option<Expr>,
    /// The separator of [`AggFunc::StringAgg`]; `None` for every other
    /// aggregate.
    pub separator: Option<Arc<str>>,
    /// The result type.
    pub dtype: DataType,
}

impl fmt::Display for AggCall {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.func, &self.arg) {
            (AggFunc::CountStar, _) => f.write_str("count(*)"),
            (AggFunc::CountDistinct, Some(a)) => write!(f, "count(DISTINCT {a})"),
            (AggFunc::QuantileCont(q) | AggFunc::QuantileDisc(q), Some(a)) => {
                write!(f, "{}({a}, {})", self.func.name(), q.get())
            }
            (AggFunc::QuantileDiscDesc(q), Some(a)) => write!(
                f,
                "percentile_disc({}) WITHIN GROUP (ORDER BY {a} DESC)",
                q.get()
            ),
            (
                AggFunc::StringAgg {
                    desc,
                    nulls_first,
                    distinct,
                },
                Some(a),
            ) => {
                let sep = self.separator.as_deref().unwrap_or(",");
                let distinct = if *distinct { "DISTINCT " } else { "" };
                write!(
                    f,
                    "string_agg({distinct}{a}, '{}'",
                    sep.replace('\'', "''")
                )?;
                if let Some(k) = &self.arg2 {
                    let dir = if *desc { " DESC" } else { "" };
                    let nulls = if *nulls_first { "FIRST" } else { "LAST" };
                    write!(f, " ORDER BY {k}{dir} NULLS {nulls}")?;
                }
                f.write_str(")")
            }
            (func, Some(a)) if self.arg2.is_some() => {
                write!(f, "{}({a}, {})", func.name(), self.arg2.as_ref().expect("checked"))
            }
            (func, Some(a)) => write!(f, "{}({a})", func.name()),
            (func, None) => write!(f, "{}()", func.name()),
        }
    }
}

/// A bound, typed expression.
///
/// # Invariants
/// Operands have been coerced so that evaluation needs no further type
/// checks: comparison operands are both numeric, both strings, both
/// timestamps or both booleans; string literals compared with timestamps
/// have become timestamp literals.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Expr {
    /// Column `index` of the table being read.
    Column {
        /// Index into the table's fields.
        index: usize,
        /// The column name, for display.
        name: String,
        /// Its type.
        dtype: DataType,
    },
    /// A constant; `dtype` is the type the context expects (NULL included).
    Literal {
        /// The value.
        value: Value,
        /// Its type.
        dtype: DataType,
    },
    /// `-x`
    Neg(Box<Expr>),
    /// `NOT x`
    Not(Box<Expr>),
    /// `a op b`.
    Binary {
        /// The operator.
        op: BinaryOp,
        /// Left operand.
        left: Box<Expr>,
        /// Right operand.
        right: Box<Expr>,
        /// Result type.
        dtype: DataType,
    },
    /// `x IS [NOT] NULL`.
    IsNull {
        /// The operand.
        expr: Box<Expr>,
        /// `IS NOT NULL`.
        negated: bool,
    },
    /// `x [NOT] IN (list)`.
    InList {
        /// The operand.
        expr: Box<Expr>,
        /// The list, coerced to the operand's type.
        list: Vec<Expr>,
        /// `NOT IN`.
        negated: bool,
    },
    /// `x [NOT] LIKE pattern`.
    Like {
        /// The operand (a string).
        expr: Box<Expr>,
        /// The pattern (a string).
        pattern: Box<Expr>,
        /// `NOT LIKE`.
        negated: bool,
    },
    /// Searched CASE (a simple CASE is rewritten to equality tests).
    Case {
        /// `(WHEN, THEN)` pairs.
        branches: Vec<(Expr, Expr)>,
        /// The ELSE result (a NULL literal when absent).
        else_result: Box<Expr>,
        /// Result type.
        dtype: DataType,
    },
    /// A scalar function call.
    Call {
        /// The function.
        func: Func,
        /// Arguments.
        args: Vec<Expr>,
        /// Result type.
        dtype: DataType,
    },
    /// `CAST(x AS t)`, or `TRY_CAST(x AS t)`.
    Cast {
        /// The operand.
        expr: Box<Expr>,
        /// Target type.
        dtype: DataType,
        /// `TRY_CAST`: a value that does not convert is NULL.
        try_cast: bool,
    },
    /// An aggregate call, only before aggregates are split out by the planner.
    Agg(Box<AggCall>),
    /// Group key `i` of an aggregate query (after aggregation).
    GroupKey {
        /// Key index.
        index: usize,
        /// Its type.
        dtype: DataType,
    },
    /// Aggregate result `i` of an aggregate query (after aggregation).
    AggResult {
        /// Aggregate index.
        index: usize,
        /// Its type.
        dtype: DataType,
    },
}

impl Expr {
    /// The type of the expression's value.
    pub fn dtype(&self) -> DataType {
        match self {
            Expr::Column { dtype, .. }
            | Expr::Literal { dtype, .. }
            | Expr::Binary { dtype, .. }
            | Expr::Case { dtype, .. }
            | Expr::Call { dtype, .. }
            | Expr::Cast { dtype, .. }
            | Expr::GroupKey { dtype, .. }
            | Expr::AggResult { dtype, .. } => *dtype,
            Expr::Neg(e) => e.dtype(),
            Expr::Not(_) | Expr::IsNull { .. } | Expr::InList { .. } | Expr::Like { .. } => {
                DataType::Bool
            }
            Expr::Agg(a) => a.dtype,
        }
    }

    /// A literal of the given type.
    pub fn literal(value: Value, dtype: DataType) -> Expr {
        Expr::Literal { value, dtype }
    }

    /// `left op right` with result type `dtype`.
    pub fn binary(op: BinaryOp, left: Expr, right: Expr, dtype: DataType) -> Expr {
        Expr::Binary {
            op,
            left: Box::new(left),
            right: Box::new(right),
            dtype,
        }
    }

    /// The literal value, if this is a literal.
    pub fn as_literal(&self) -> Option<&Value> {
        match self {
            Expr::Literal { value, .. } => Some(value),
            _ => None,
        }
    }

    /// Direct children, in evaluation order.
    pub fn children(&self) -> Vec<&Expr> {
        match self {
            Expr::Column { .. }
            | Expr::Literal { .. }
            | Expr::GroupKey { .. }
            | Expr::AggResult { .. } => vec![],
            Expr::Neg(e) | Expr::Not(e) | Expr::Cast { expr: e, .. } => vec![e],
            Expr::IsNull { expr, .. } => vec![expr],
            Expr::Binary { left, right, .. } => vec![left, right],
            Expr::InList { expr, list, .. } => {
                let mut v = vec![&**expr];
                v.extend(list.iter());
                v
            }
            Expr::Like { expr, pattern, .. } => vec![expr, pattern],
            Expr::Case {
                branches,
                else_result,
                ..
            } => {
                let mut v = Vec::new();
                for (w, t) in branches {
                    v.push(w);
                    v.push(t);
                }
                v.push(else_result);
                v
            }
            Expr::Call { args, .. } => args.iter().collect(),
            Expr::Agg(a) => a.arg.iter().chain(&a.arg2).collect(),
        }
    }

    /// Applies `f` to every direct child, rebuilding the node.
    pub fn map_children<E>(self, f: &mut impl FnMut(Expr) -> Result<Expr, E>) -> Result<Expr, E> {
        Ok(match self {
            e @ (Expr::Column { .. }
            | Expr::Literal { .. }
            | Expr::GroupKey { .. }
            | Expr::AggResult { .. }) => e,
            Expr::Neg(e) => Expr::Neg(bx(e, f)?),
            Expr::Not(e) => Expr::Not(bx(e, f)?),
            Expr::Cast {
                expr,
                dtype,
                try_cast,
            } => Expr::Cast {
                expr: bx(expr, f)?,
                dtype,
                try_cast,
            },
            Expr::IsNull { expr, negated } => Expr::IsNull {
                expr: bx(expr, f)?,
                negated,
            },
            Expr::Binary {
                op,
                left,
                right,
                dtype,
            } => Expr::Binary {
                op,
                left: bx(left, f)?,
                right: bx(right, f)?,
                dtype,
            },
            Expr::InList {
                expr,
                list,
                negated,
            } => Expr::InList {
                expr: bx(expr, f)?,
                list: list.into_iter().map(&mut *f).collect::<Result<_, E>>()?,
                negated,
            },
            Expr::Like {
                expr,
                pattern,
                negated,
            } => Expr::Like {
                expr: bx(expr, f)?,
                pattern: bx(pattern, f)?,
                negated,
            },
            Expr::Case {
                branches,
                else_result,
                dtype,
            } => Expr::Case {
                branches: branches
                    .into_iter()
                    .map(|(w, t)| Ok((f(w)?, f(t)?)))
                    .collect::<Result<_, E>>()?,
                else_result: bx(else_result, f)?,
                dtype,
            },
            Expr::Call { func, args, dtype } => Expr::Call {
                func,
                args: args.into_iter().map(&mut *f).collect::<Result<_, E>>()?,
                dtype,
            },
            Expr::Agg(a) => {
                let AggCall {
                    func,
                    arg,
                    arg2,
                    separator,
                    dtype,
                } = *a;
                Expr::Agg(Box::new(AggCall {
                    func,
                    arg: arg.map(&mut *f).transpose()?,
                    arg2: arg2.map(&mut *f).transpose()?,
                    separator,
                    dtype,
                }))
            }
        })
    }

    /// True if any node satisfies `pred`.
    pub fn any(&self, pred: &impl Fn(&Expr) -> bool) -> bool {
        pred(self) || self.children().into_iter().any(|c| c.any(pred))
    }

    /// Appends the operands of a chain of `op` (`a AND b AND c` for
    /// `BinaryOp::And`) to `out`, left to right; any other expression is
    /// one operand.
    pub fn split_chain(self, op: BinaryOp, out: &mut Vec<Expr>) {
        match self {
            Expr::Binary {
                op: o,
                left,
                right,
                ..
            } if o == op => {
                left.split_chain(op, out);
                right.split_chain(op, out);
            }
            e => out.push(e),
        }
    }

    /// [`Expr::split_chain`] without taking the expression: the operands
    /// of a chain of `op` by reference.
    pub fn split_chain_ref<'a>(&'a self, op: BinaryOp, out: &mut Vec<&'a Expr>) {
        match self {
            Expr::Binary {
                op: o,
                left,
                right,
                ..
            } if *o == op => {
                left.split_chain_ref(op, out);
                right.split_chain_ref(op, out);
            }
            e => out.push(e),
        }
    }

    /// True when the expression reads no column, key or aggregate.
    pub fn is_constant(&self) -> bool {
        !self.any(&|e| {
            matches!(
                e,
                Expr::Column { .. }
                    | Expr::GroupKey { .. }
                    | Expr::AggResult { .. }
                    | Expr::Agg(_)
                    | Expr::Call {
                        func: Func::Random,
                        ..
                    }
            )
        })
    }
}

// Takes the box the node already owns, so callers need not unbox first.
#[allow(clippy::boxed_local)]
fn bx<E>(e: Box<Expr>, f: &mut impl FnMut(Expr) -> Result<Expr, E>) -> Result<Box<Expr>, E> {
    Ok(Box::new(f(*e)?))
}

fn func_name(func: &Func) -> &'static str {
    match func {
        Func::Year => "year",
        Func::DateTrunc(_) => "date_trunc",
        Func::AddMonths(_) => "add_months",
        Func::Floor => "floor",
        Func::Ceil => "ceil",
        Func::Round => "round",
        Func::Abs => "abs",
        Func::Trunc => "trunc",
        Func::Sign => "sign",
        Func::Pow => "pow",
        Func::Random => "random",
        Func::Math(m) => m.name(),
        Func::Lower => "lower",
        Func::Substring => "substring",
        Func::Upper => "upper",
        Func::Length => "length",
        Func::StrLen => "strlen",
        Func::Extract(_) | Func::IntervalPart(_) => "date_part",
        Func::RegexpReplace(_) => "regexp_replace",
        Func::Strptime {
            try_parse: false, ..
        } => "strptime",
        Func::Strptime {
            try_parse: true, ..
        } => "try_strptime",
        Func::Str(f) => f.name(),
        Func::Concat => "||",
        Func::ConcatWs => "concat_ws",
        Func::Greatest => "greatest",
        Func::Least => "least",
        Func::Strftime(_) => "strftime",
        Func::DateDiff(_) => "date_diff",
    }
}

/// `'text'` as an SQL string literal.
fn sql_string(f: &mut fmt::Formatter<'_>, text: &str) -> fmt::Result {
    write!(f, "'{}'", text.replace('\'', "''"))
}

impl fmt::Display for Expr {
    /// SQL-like text for EXPLAIN.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expr::Column { name, .. } => f.write_str(name),
            Expr::Literal { value, dtype } => match value {
                Value::Null => f.write_str("NULL"),
                Value::Str(s) => write!(f, "'{}'", s.replace('\'', "''")),
                Value::Timestamp(_) => write!(f, "TIMESTAMP '{value}'"),
                Value::Date(_) => write!(f, "DATE '{value}'"),
                Value::Interval(m) => write!(f, "INTERVAL '{m} microseconds'"),
                v if *dtype == DataType::Timestamp => write!(f, "INTERVAL '{v} microseconds'"),
                v => write!(f, "{v}"),
            },
            Expr::Neg(e) => write!(f, "-({e})"),
            Expr::Not(e) => write!(f, "NOT ({e})"),
            Expr::Binary {
                op, left, right, ..
            } => write!(f, "({left} {} {right})", op.symbol()),
            Expr::IsNull { expr, negated } => {
                write!(f, "{expr} IS {}NULL", if *negated { "NOT " } else { "" })
            }
            Expr::InList {
                expr,
                list,
                negated,
            } => {
                write!(f, "{expr} {}IN (", if *negated { "NOT " } else { "" })?;
                for (i, e) in list.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{e}")?;
                }
                f.write_str(")")
            }
            Expr::Like {
                expr,
                pattern,
                negated,
            } => write!(
                f,
                "{expr} {}LIKE {pattern}",
                if *negated { "NOT " } else { "" }
            ),
            Expr::Case {
                branches,
                else_result,
                ..
            } => {
                f.write_str("CASE")?;
                for (w, t) in branches {
                    write!(f, " WHEN {w} THEN {t}")?;
                }
                write!(f, " ELSE {else_result} END")
            }
            Expr::Call {
                func: Func::Concat,
                args,
                ..
            } => {
                // `||`, whose NULL semantics differ from concat()'s.
                f.write_str("(")?;
                for (i, a) in args.iter().enumerate() {
                    if i > 0 {
                        f.write_str(" || ")?;
                    }
                    write!(f, "{a}")?;
                }
                f.write_str(")")
            }
            Expr::Call { func, args, .. } => {
                write!(f, "{}(", func_name(func))?;
                match func {
                    Func::DateTrunc(unit) => write!(f, "'{}', ", unit.name())?,
                    Func::AddMonths(n) => {
                        return write!(f, "{}, {n})", args.first().map_or(String::new(), |a| a.to_string()));
                    }
                    Func::Extract(part) | Func::DateDiff(part) | Func::IntervalPart(part) => {
                        write!(f, "'{}', ", part.name())?
                    }
                    _ => {}
                }
                for (i, a) in args.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{a}")?;
                }
                if let Func::Strptime { format, .. } = func {
                    f.write_str(", ")?;
                    sql_string(f, format.text())?;
                }
                if let Func::Strftime(format) = func {
                    f.write_str(", ")?;
                    sql_string(f, &format.text)?;
                }
                if let Func::RegexpReplace(r) = func {
                    f.write_str(", ")?;
                    sql_string(f, &r.pattern)?;
                    f.write_str(", ")?;
                    sql_string(f, &r.replacement)?;
                    if !r.flags.is_empty() {
                        f.write_str(", ")?;
                        sql_string(f, &r.flags)?;
                    }
                }
                f.write_str(")")
            }
            Expr::Cast {
                expr,
                dtype,
                try_cast,
            } => {
                let name = if *try_cast { "TRY_CAST" } else { "CAST" };
                write!(f, "{name}({expr} AS {dtype})")
            }
            Expr::Agg(a) => write!(f, "{a}"),
            Expr::GroupKey { index, .. } => write!(f, "#key{index}"),
            Expr::AggResult { index, .. } => write!(f, "#agg{index}"),
        }
    }
}
