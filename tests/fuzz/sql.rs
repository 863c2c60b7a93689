//! The query fuzzer's input: statements drawn from a grammar of katydid's
//! dialect (typed, so that most of them bind and run), and mutations of
//! them that break them in the ways people and programs do.
//!
//! Tokens are joined with single spaces, which is what the shrinker cuts
//! at.

use katydid::DataType;
use rand::Rng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;

/// A table the generator may name, with its columns' types as loaded.
#[derive(Debug, Clone)]
pub struct TableSchema {
    pub name: String,
    pub columns: Vec<(String, DataType)>,
}

/// The expression types the generator asks for.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Ty {
    Int,
    Float,
    Str,
    Ts,
    Bool,
}

impl Ty {
    fn of(t: DataType) -> Ty {
        match t {
            // No table the fuzzer loads has an interval column; intervals
            // come from timestamp arithmetic in its expressions.
            DataType::Int | DataType::Interval => Ty::Int,
            DataType::Float => Ty::Float,
            DataType::Timestamp | DataType::Date => Ty::Ts,
            DataType::Str | DataType::Null => Ty::Str,
            DataType::Bool => Ty::Bool,
        }
    }

    fn any(rng: &mut ChaCha8Rng) -> Ty {
        *[
            Ty::Int,
            Ty::Int,
            Ty::Float,
            Ty::Str,
            Ty::Str,
            Ty::Ts,
            Ty::Bool,
        ]
        .choose(rng)
        .unwrap()
    }
}

/// Where an expression stands: whether aggregates may appear.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Ctx {
    /// WHERE, GROUP BY, an aggregate's argument, a plain select list.
    Row,
    /// A grouped select list, HAVING, ORDER BY of a grouped query.
    Grouped,
}

const INT_LITS: &[&str] = &[
    "0",
    "1",
    "2",
    "3",
    "7",
    "10",
    "42",
    "100",
    "255",
    "256",
    "65535",
    "65536",
    "4294967295",
    "4294967296",
    "1000000",
    "9223372036854775807",
    "9223372036854775806",
    "-9223372036854775808",
    "- 9223372036854775807",
    "-1",
    "-42",
];

const FLOAT_LITS: &[&str] = &[
    "0.0",
    "-0.0",
    "0.5",
    "1.5",
    "-2.25",
    "0.1",
    "3.0",
    "1e308",
    "-1e308",
    "1.7976931348623157e308",
    "5e-324",
    "2.2250738585072014e-308",
    "1e-7",
    "123456789.123456789",
    "9223372036854775808.0",
    "9223372036854775807.5",
    "-9223372036854775809.0",
    "18446744073709551616",
    "1e19",
    ".5",
    "1.",
    "1E3",
];

const STR_LITS: &[&str] = &[
    "''",
    "'a'",
    "'A'",
    "'abc'",
    "'b'",
    "'é'",
    "'😈'",
    "'a😈b'",
    "' '",
    "'%'",
    "'_'",
    "'\\'",
    "'NULL'",
    "'1'",
    "'-0'",
    "'1e5'",
    "'nan'",
    "'inf'",
    "'-inf'",
    "'2013-09-01'",
    "'2013-09-01 12:00:00'",
    "'9999-12-31 23:59:59.999999'",
    "'0001-01-01'",
    "'it''s'",
    "'\"q\"'",
    "'ß'",
    "'İ'",
    "'ﬀ'",
    "'e\u{301}'",
    "'\u{202e}abc'",
    "'\u{0}'",
    "'x\ny'",
    "'🇺🇸'",
];

const TS_LITS: &[&str] = &[
    "'2013-09-01'",
    "'2013-09-01 12:34:56'",
    "'2013-09-01T12:34:56.5Z'",
    "'1970-01-01'",
    "'1969-12-31 23:59:59.999999'",
    "'0000-01-01'",
    "'0001-01-01'",
    "'9999-12-31 23:59:59.999999'",
    "'2016-02-29'",
    "'2015-02-29'",
    "'not a date'",
    "''",
];

const INTERVALS: &[&str] = &[
    "INTERVAL '1 day'",
    "INTERVAL '1.5 hours'",
    "INTERVAL '-1 us'",
    "INTERVAL '0 s'",
    "INTERVAL '1 week 2 days 3 h'",
    "INTERVAL '2' HOUR",
    "INTERVAL '30' minute",
    "INTERVAL '106751991 days'",
    "INTERVAL '-106751991 days'",
    "INTERVAL '99999999999 days'",
    "INTERVAL '1 month'",
    "INTERVAL '1'",
    "INTERVAL ''",
    "INTERVAL '9223372036854775807 us'",
];

const TRUNC_UNITS: &[&str] = &[
    "'second'",
    "'minute'",
    "'hour'",
    "'day'",
    "'month'",
    "'year'",
    "'HOUR'",
    "'week'",
    "'quarter'",
    "''",
    "'bogus'",
    "NULL",
];

const PARTS: &[&str] = &[
    "year",
    "isoyear",
    "quarter",
    "month",
    "week",
    "day",
    "dow",
    "isodow",
    "doy",
    "hour",
    "minute",
    "second",
    "millisecond",
    "microsecond",
    "epoch",
    "'minute'",
    "bogus",
];

const PATTERNS: &[&str] = &[
    "'a'",
    "'[a-z]+'",
    "'(a)(b)?'",
    "'^'",
    "'$'",
    "'.*'",
    "''",
    "'('",
    "'\\d+'",
    "'(?i)A'",
    "'é'",
    "'😈'",
    "'x{1000}'",
    "'(a*)*'",
    "'\\b'",
    "'.'",
    "'[^\\x00-\\x7f]'",
    "'a{99999}'",
];

const REPLACEMENTS: &[&str] = &[
    "''", "'x'", "'\\1'", "'\\0\\0'", "'\\\\'", "'$1'", "'\\9'", "'😈'", "'\\'",
];

const FLAGS: &[&str] = &[
    "'g'", "'i'", "'gi'", "'l'", "'s'", "'c'", "'z'", "''", "'gg'",
];

const LIKE_PATTERNS: &[&str] = &[
    "'%'",
    "'_'",
    "'%%'",
    "'a%'",
    "'%a'",
    "'%a%'",
    "'%a%b%'",
    "'\\%'",
    "'%_%'",
    "''",
    "'😈%'",
    "'_é_'",
    "'%a%a%a%a%a%a%a%a%a%a%a%a%b'",
    "'____________'",
    "'A%'",
    "'%\\'",
];

const ROUND_DIGITS: &[&str] = &[
    "0",
    "1",
    "2",
    "-1",
    "-2",
    "15",
    "16",
    "17",
    "300",
    "308",
    "309",
    "400",
    "-400",
    "2147483648",
    "-2147483649",
    "9223372036854775807",
    "-9223372036854775808",
    "NULL",
];

const TYPES: &[&str] = &[
    "INT",
    "INTEGER",
    "BIGINT",
    "SMALLINT",
    "FLOAT",
    "DOUBLE",
    "DOUBLE PRECISION",
    "REAL",
    "TIMESTAMP",
    "VARCHAR",
    "TEXT",
    "BOOLEAN",
    "BOOL",
];

const LIMITS: &[&str] = &[
    "0",
    "1",
    "2",
    "3",
    "5",
    "10",
    "100",
    "-1",
    "-3",
    "-100",
    "9223372036854775807",
    "-9223372036854775808",
    "-9223372036854775807",
    "4294967296",
    "92233720775807",
    "9223372036854775808",
];

const OFFSETS: &[&str] = &[
    "0",
    "1",
    "2",
    "5",
    "39",
    "100",
    "92233720775807",
    "9223372036854775807",
    "9223372036854775808",
    "18446744073709551615",
    "18446744073709551616",
];

/// Words and symbols spliced into mutated statements.
const TOKENS: &[&str] = &[
    "SELECT",
    "FROM",
    "WHERE",
    "GROUP",
    "BY",
    "HAVING",
    "ORDER",
    "LIMIT",
    "OFFSET",
    "AND",
    "OR",
    "NOT",
    "IN",
    "BETWEEN",
    "LIKE",
    "IS",
    "NULL",
    "CASE",
    "WHEN",
    "THEN",
    "ELSE",
    "END",
    "AS",
    "ASC",
    "DESC",
    "DISTINCT",
    "NULLS",
    "FIRST",
    "LAST",
    "INTERVAL",
    "CAST",
    "EXPLAIN",
    "DESCRIBE",
    "SHOW",
    "TABLES",
    "SUMMARIZE",
    "EXTRACT",
    "count",
    "sum",
    "(",
    ")",
    "[",
    "]",
    ",",
    ";",
    "*",
    "+",
    "-",
    "/",
    "%",
    "::",
    "=",
    "<>",
    "!=",
    "<",
    ">=",
    "=>",
    "'",
    "\"",
    "--",
    "/*",
    "*/",
    "0",
    "-1",
    "1e999",
    "9223372036854775808",
    "''",
    "\"\"",
    "😈",
    "\u{feff}",
    "\u{0}",
    "é",
];

/// Generates statements over `tables`; `file` is a CSV file's path that
/// `FROM '…'` may name (when set).
pub struct Gen<'a> {
    rng: &'a mut ChaCha8Rng,
    tables: &'a [TableSchema],
    file: Option<&'a str>,
    /// The current table's columns.
    columns: Vec<(String, Ty)>,
    /// Nodes left before expressions are cut to leaves.
    budget: i32,
}

impl<'a> Gen<'a> {
    pub fn new(rng: &'a mut ChaCha8Rng, tables: &'a [TableSchema], file: Option<&'a str>) -> Self {
        Gen {
            rng,
            tables,
            file,
            columns: Vec::new(),
            budget: 0,
        }
    }

    fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        *xs.choose(self.rng).unwrap()
    }

    fn chance(&mut self, p: f64) -> bool {
        self.rng.gen_bool(p)
    }

    /// One statement: mostly a SELECT, sometimes another statement kind.
    pub fn statement(&mut self) -> String {
        let table = self.pick_table();
        let roll = self.rng.gen_range(0..100);
        let sql = match roll {
            0..=69 => self.select(&table),
            70..=77 => format!("EXPLAIN {}", self.select(&table)),
            78..=83 => format!("DESCRIBE {}", self.select(&table)),
            84..=86 => format!("DESCRIBE {}", self.table_ref(&table)),
            87..=88 => "SHOW TABLES".to_string(),
            89..=93 => format!("SUMMARIZE {}", self.table_ref(&table)),
            _ => self.soup(),
        };
        if self.chance(0.1) {
            format!("{sql} ;")
        } else {
            sql
        }
    }

    fn pick_table(&mut self) -> TableSchema {
        // Mostly the main table, which has every type.
        let t = if self.chance(0.7) {
            self.tables[0].clone()
        } else {
            self.tables.choose(self.rng).unwrap().clone()
        };
        self.columns = t
            .columns
            .iter()
            .map(|(n, d)| (quote_ident(n), Ty::of(*d)))
            .collect();
        t
    }

    fn table_ref(&mut self, t: &TableSchema) -> String {
        match self.rng.gen_range(0..40) {
            0 => "no_such_table".into(),
            1 => "'no/such/file.csv'".into(),
            2 | 3 if self.file.is_some() => format!("'{}'", self.file.unwrap()),
            4 if self.file.is_some() => {
                let opts = self.pick(&[
                    "",
                    ", delim => ','",
                    ", header => true",
                    ", header => false",
                    ", columns => ['a', 'b', 'c']",
                    ", columns => []",
                    ", delim => ';;'",
                    ", quote => '\"'",
                    ", nullstr => 'NULL'",
                    ", bogus => 1",
                ]);
                format!("read_csv('{}'{opts})", self.file.unwrap())
            }
            _ => quote_ident(&t.name),
        }
    }

    /// A random run of tokens: the parser's error paths.
    fn soup(&mut self) -> String {
        let n = self.rng.gen_range(1..20);
        (0..n)
            .map(|_| self.pick(TOKENS))
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// `SELECT … FROM t [WHERE] [GROUP BY] [HAVING] [ORDER BY] [LIMIT]
    /// [OFFSET]` in one of three shapes: plain rows, grouped, or
    /// aggregates with implicit grouping.
    pub fn select(&mut self, t: &TableSchema) -> String {
        self.budget = self.rng.gen_range(4..40);
        let shape = self.rng.gen_range(0..10);
        let mut items: Vec<(String, Option<String>)> = Vec::new();
        let mut group_by: Vec<String> = Vec::new();
        let grouped = shape >= 4;
        if shape < 4 {
            // Plain rows.
            if self.chance(0.2) {
                items.push(("*".into(), None));
            }
            let n = self.rng.gen_range(1..4);
            for _ in 0..n {
                let ty = Ty::any(self.rng);
                let e = self.expr(ty, Ctx::Row, 0);
                items.push((e, self.alias()));
            }
        } else {
            let keys = self.rng.gen_range(0..3);
            for k in 0..keys {
                let ty = Ty::any(self.rng);
                let e = self.expr(ty, Ctx::Row, 0);
                let alias = self.alias();
                if shape >= 7 {
                    // Explicit GROUP BY: by ordinal, alias or expression.
                    group_by.push(match self.rng.gen_range(0..6) {
                        0 | 1 => (k + 1).to_string(),
                        2 if alias.is_some() => alias.clone().unwrap(),
                        3 => self.pick(&["0", "99", "-1", "1.5"]).to_string(),
                        _ => e.clone(),
                    });
                }
                items.push((e, alias));
            }
            let aggs = self.rng.gen_range(1..4);
            for _ in 0..aggs {
                let ty = Ty::any(self.rng);
                let e = self.expr(ty, Ctx::Grouped, 0);
                items.push((e, self.alias()));
            }
            if shape >= 7 && self.chance(0.3) {
                // A key that is not selected.
                let ty = Ty::any(self.rng);
                group_by.push(self.expr(ty, Ctx::Row, 1));
            }
            items.shuffle(self.rng);
        }
        let mut sql = String::from("SELECT ");
        let list: Vec<String> = items
            .iter()
            .map(|(e, a)| match a {
                Some(a) if self.rng.gen_bool(0.5) => format!("{e} AS {a}"),
                Some(a) => format!("{e} {a}"),
                None => e.clone(),
            })
            .collect();
        sql.push_str(&list.join(" , "));
        if !self.chance(0.03) {
            sql.push_str(" FROM ");
            sql.push_str(&self.table_ref(t));
        }
        if self.chance(0.5) {
            let w = self.expr(Ty::Bool, Ctx::Row, 0);
            sql.push_str(&format!(" WHERE {w}"));
        }
        if !group_by.is_empty() {
            sql.push_str(&format!(" GROUP BY {}", group_by.join(" , ")));
        }
        if grouped && self.chance(0.3) {
            let h = self.expr(Ty::Bool, Ctx::Grouped, 0);
            sql.push_str(&format!(" HAVING {h}"));
        }
        if self.chance(0.5) {
            let n = self.rng.gen_range(1..4);
            let mut order = Vec::new();
            for _ in 0..n {
                let key = match self.rng.gen_range(0..5) {
                    0 | 1 => self.rng.gen_range(0..=items.len() + 1).to_string(),
                    2 => items
                        .iter()
                        .filter_map(|(_, a)| a.clone())
                        .collect::<Vec<_>>()
                        .choose(self.rng)
                        .cloned()
                        .unwrap_or_else(|| "1".into()),
                    _ => {
                        let ty = Ty::any(self.rng);
                        let ctx = if grouped { Ctx::Grouped } else { Ctx::Row };
                        self.expr(ty, ctx, 1)
                    }
                };
                let dir = self.pick(&["", " ASC", " DESC"]);
                let nulls = self.pick(&["", "", " NULLS FIRST", " NULLS LAST"]);
                order.push(format!("{key}{dir}{nulls}"));
            }
            sql.push_str(&format!(" ORDER BY {}", order.join(" , ")));
        }
        if self.chance(0.45) {
            let l = self.pick(LIMITS);
            sql.push_str(&format!(" LIMIT {l}"));
        }
        if self.chance(0.2) {
            let o = self.pick(OFFSETS);
            sql.push_str(&format!(" OFFSET {o}"));
        }
        sql
    }

    fn alias(&mut self) -> Option<String> {
        self.chance(0.3).then(|| {
            self.pick(&[
                "x",
                "y",
                "total",
                "\"weird name\"",
                "\"😈\"",
                "i",
                "s",
                "count",
            ])
            .to_string()
        })
    }

    /// A column of type `ty`, if the table has one.
    fn column(&mut self, ty: Ty) -> Option<String> {
        let cs: Vec<&String> = self
            .columns
            .iter()
            .filter(|(_, t)| *t == ty)
            .map(|(n, _)| n)
            .collect();
        cs.choose(self.rng).map(|c| (*c).clone())
    }

    /// A leaf of type `ty`: mostly a column, else a literal or NULL.
    fn leaf(&mut self, ty: Ty) -> String {
        if self.chance(0.005) {
            return self
                .pick(&["no_such_column", "\"I\"", "t.i", "\"\""])
                .to_string();
        }
        if self.chance(0.06) {
            return "NULL".into();
        }
        if self.chance(0.6)
            && let Some(c) = self.column(ty)
        {
            return c;
        }
        match ty {
            Ty::Int => self.pick(INT_LITS).to_string(),
            Ty::Float => self.pick(FLOAT_LITS).to_string(),
            Ty::Str => self.pick(STR_LITS).to_string(),
            Ty::Ts => {
                let lit = self.pick(TS_LITS);
                match self.rng.gen_range(0..3) {
                    0 => format!("CAST ( {lit} AS TIMESTAMP )"),
                    1 => format!("{lit} :: timestamp"),
                    _ => lit.to_string(),
                }
            }
            Ty::Bool => self.pick(&["TRUE", "FALSE", "NULL"]).to_string(),
        }
    }

    /// An expression of type `ty` (mostly: a few are deliberately
    /// mistyped, for the binder's errors).
    fn expr(&mut self, ty: Ty, ctx: Ctx, depth: u32) -> String {
        self.budget -= 1;
        if self.budget <= 0 || depth > 6 {
            return if ctx == Ctx::Grouped {
                self.aggregate(ty, depth)
            } else {
                self.leaf(ty)
            };
        }
        if ctx == Ctx::Grouped && self.chance(0.5) {
            return self.aggregate(ty, depth);
        }
        if self.chance(0.03) {
            // A mistyped operand, or a cast to any type.
            let other = Ty::any(self.rng);
            let leaf = self.leaf(other);
            if self.chance(0.5) {
                return format!("CAST ( {leaf} AS {} )", self.pick(TYPES));
            }
            return leaf;
        }
        if self.chance(0.3) {
            return self.leaf(ty);
        }
        let d = depth + 1;
        match ty {
            Ty::Int => match self.rng.gen_range(0..16) {
                0..=3 => {
                    let op = self.pick(&["+", "-", "*", "/", "%"]);
                    let a = self.expr(Ty::Int, ctx, d);
                    let b = self.expr(Ty::Int, ctx, d);
                    format!("( {a} {op} {b} )")
                }
                4 => format!("- {}", self.expr(Ty::Int, ctx, d)),
                5 => {
                    let f = self.pick(&["abs", "floor", "ceil", "round"]);
                    format!("{f} ( {} )", self.expr(Ty::Int, ctx, d))
                }
                6 => {
                    let f = self.pick(&["length", "strlen", "char_length"]);
                    format!("{f} ( {} )", self.expr(Ty::Str, ctx, d))
                }
                7 => {
                    let f = self.pick(&["year", "to_year"]);
                    format!("{f} ( {} )", self.expr(Ty::Ts, ctx, d))
                }
                8 => {
                    let p = self.pick(PARTS);
                    let ts = self.expr(Ty::Ts, ctx, d);
                    if self.chance(0.5) {
                        format!("extract ( {p} FROM {ts} )")
                    } else {
                        let p = if p.starts_with('\'') {
                            p.to_string()
                        } else {
                            format!("'{p}'")
                        };
                        format!("date_part ( {p} , {ts} )")
                    }
                }
                9 => {
                    let src = Ty::any(self.rng);
                    let e = self.expr(src, ctx, d);
                    if self.chance(0.5) {
                        format!(
                            "CAST ( {e} AS {} )",
                            self.pick(&["INT", "BIGINT", "INTEGER"])
                        )
                    } else {
                        format!("{e} :: int")
                    }
                }
                10 | 11 => self.case(Ty::Int, ctx, d),
                _ => self.leaf(Ty::Int),
            },
            Ty::Float => match self.rng.gen_range(0..12) {
                0..=3 => {
                    let op = self.pick(&["+", "-", "*", "/", "%"]);
                    let (ta, tb) = (
                        self.pick(&[Ty::Float, Ty::Int]),
                        self.pick(&[Ty::Float, Ty::Int]),
                    );
                    let a = self.expr(ta, ctx, d);
                    let b = self.expr(tb, ctx, d);
                    format!("( {a} {op} {b} )")
                }
                4 => format!("- {}", self.expr(Ty::Float, ctx, d)),
                5 => {
                    let f = self.pick(&["abs", "floor", "ceil", "ceiling"]);
                    format!("{f} ( {} )", self.expr(Ty::Float, ctx, d))
                }
                6 => {
                    let x = self.expr(Ty::Float, ctx, d);
                    let digits = self.pick(ROUND_DIGITS);
                    format!("round ( {x} , {digits} )")
                }
                7 => {
                    let src = Ty::any(self.rng);
                    let e = self.expr(src, ctx, d);
                    format!(
                        "CAST ( {e} AS {} )",
                        self.pick(&["FLOAT", "DOUBLE", "REAL"])
                    )
                }
                8 => self.case(Ty::Float, ctx, d),
                9 => {
                    // The length of time between two timestamps, in seconds.
                    let a = self.expr(Ty::Ts, ctx, d);
                    let b = self.expr(Ty::Ts, ctx, d);
                    let part = self.pick(&["epoch", "hour", "second", "day"]);
                    format!("extract ( {part} FROM {a} - {b} )")
                }
                _ => self.leaf(Ty::Float),
            },
            Ty::Str => match self.rng.gen_range(0..10) {
                0 | 1 => {
                    let f = self.pick(&["lower", "upper"]);
                    format!("{f} ( {} )", self.expr(Ty::Str, ctx, d))
                }
                2 | 3 => {
                    let s = self.expr(Ty::Str, ctx, d);
                    let p = self.pick(PATTERNS);
                    let r = self.pick(REPLACEMENTS);
                    if self.chance(0.5) {
                        let f = self.pick(FLAGS);
                        format!("regexp_replace ( {s} , {p} , {r} , {f} )")
                    } else {
                        format!("regexp_replace ( {s} , {p} , {r} )")
                    }
                }
                4 => {
                    let src = Ty::any(self.rng);
                    let e = self.expr(src, ctx, d);
                    if self.chance(0.5) {
                        format!(
                            "CAST ( {e} AS {} )",
                            self.pick(&["VARCHAR", "TEXT", "STRING"])
                        )
                    } else {
                        format!("{e} :: text")
                    }
                }
                5 => self.case(Ty::Str, ctx, d),
                _ => self.leaf(Ty::Str),
            },
            Ty::Ts => match self.rng.gen_range(0..8) {
                0 | 1 => {
                    let u = self.pick(TRUNC_UNITS);
                    format!("date_trunc ( {u} , {} )", self.expr(Ty::Ts, ctx, d))
                }
                2 | 3 => {
                    let op = self.pick(&["+", "-"]);
                    let i = self.pick(INTERVALS);
                    format!("( {} {op} {i} )", self.expr(Ty::Ts, ctx, d))
                }
                4 => self.case(Ty::Ts, ctx, d),
                5 => {
                    // A timestamp moved by an interval computed from two
                    // others, scaled.
                    let (a, b, c) = (
                        self.expr(Ty::Ts, ctx, d),
                        self.expr(Ty::Ts, ctx, d),
                        self.expr(Ty::Ts, ctx, d),
                    );
                    let k = self.pick(&["2", "0.5", "-1"]);
                    format!("( {a} + ( {b} - {c} ) * {k} )")
                }
                _ => self.leaf(Ty::Ts),
            },
            Ty::Bool => self.predicate(ctx, d),
        }
    }

    fn case(&mut self, ty: Ty, ctx: Ctx, d: u32) -> String {
        let mut s = String::from("CASE");
        let simple = self.chance(0.3);
        let operand_ty = Ty::any(self.rng);
        if simple {
            s.push_str(&format!(" {}", self.expr(operand_ty, ctx, d)));
        }
        for _ in 0..self.rng.gen_range(1..4) {
            let when = if simple {
                self.expr(operand_ty, ctx, d)
            } else {
                self.expr(Ty::Bool, ctx, d)
            };
            let then = self.expr(ty, ctx, d);
            s.push_str(&format!(" WHEN {when} THEN {then}"));
        }
        if self.chance(0.6) {
            s.push_str(&format!(" ELSE {}", self.expr(ty, ctx, d)));
        }
        s.push_str(" END");
        s
    }

    fn predicate(&mut self, ctx: Ctx, d: u32) -> String {
        let not = if self.chance(0.15) { "NOT " } else { "" };
        match self.rng.gen_range(0..14) {
            0..=3 => {
                let ty = self.pick(&[Ty::Int, Ty::Int, Ty::Float, Ty::Str, Ty::Ts, Ty::Bool]);
                let op = self.pick(&["=", "<>", "!=", "<", "<=", ">", ">="]);
                let a = self.expr(ty, ctx, d);
                let b = self.expr(ty, ctx, d);
                format!("( {a} {op} {b} )")
            }
            4 => {
                let ty = Ty::any(self.rng);
                let neg = if self.chance(0.5) { "NOT " } else { "" };
                format!("( {} IS {neg}NULL )", self.expr(ty, ctx, d))
            }
            5 | 6 => {
                let ty = self.pick(&[Ty::Int, Ty::Int, Ty::Float, Ty::Str, Ty::Ts]);
                let x = self.expr(ty, ctx, d);
                let n = if self.chance(0.1) {
                    self.rng.gen_range(20..80)
                } else {
                    self.rng.gen_range(1..6)
                };
                let list: Vec<String> = (0..n).map(|_| self.leaf(ty)).collect();
                let neg = if self.chance(0.3) { "NOT " } else { "" };
                format!("( {x} {neg}IN ( {} ) )", list.join(" , "))
            }
            7 => {
                let ty = self.pick(&[Ty::Int, Ty::Float, Ty::Str, Ty::Ts]);
                let x = self.expr(ty, ctx, d);
                let lo = self.leaf(ty);
                let hi = self.leaf(ty);
                let neg = if self.chance(0.3) { "NOT " } else { "" };
                format!("( {x} {neg}BETWEEN {lo} AND {hi} )")
            }
            8 => {
                let x = self.expr(Ty::Str, ctx, d);
                let p = if self.chance(0.8) {
                    self.pick(LIKE_PATTERNS).to_string()
                } else {
                    self.expr(Ty::Str, ctx, d)
                };
                let neg = if self.chance(0.3) { "NOT " } else { "" };
                format!("( {x} {neg}LIKE {p} )")
            }
            9 | 10 => {
                let op = self.pick(&["AND", "OR"]);
                let a = self.expr(Ty::Bool, ctx, d);
                let b = self.expr(Ty::Bool, ctx, d);
                format!("{not}( {a} {op} {b} )")
            }
            11 => {
                let src = self.pick(&[Ty::Int, Ty::Str, Ty::Bool, Ty::Float]);
                format!("CAST ( {} AS BOOLEAN )", self.expr(src, ctx, d))
            }
            12 => self.case(Ty::Bool, ctx, d),
            _ => format!("{not}{}", self.leaf(Ty::Bool)),
        }
    }

    /// An aggregate returning `ty` (or an expression over aggregates).
    fn aggregate(&mut self, ty: Ty, depth: u32) -> String {
        let d = depth + 1;
        let arg = |g: &mut Self, t: Ty| g.expr(t, Ctx::Row, d);
        match ty {
            Ty::Int => match self.rng.gen_range(0..9) {
                0 => "count ( * )".into(),
                1 => {
                    let t = Ty::any(self.rng);
                    format!("count ( {} )", arg(self, t))
                }
                2 => {
                    let t = Ty::any(self.rng);
                    format!("count ( DISTINCT {} )", arg(self, t))
                }
                3 => {
                    let t = Ty::any(self.rng);
                    format!("approx_count_distinct ( {} )", arg(self, t))
                }
                4 => format!("sum ( {} )", arg(self, Ty::Int)),
                5 => {
                    let f = self.pick(&["min", "max"]);
                    format!("{f} ( {} )", arg(self, Ty::Int))
                }
                6 if depth < 4 => {
                    let op = self.pick(&["+", "-", "*", "/", "%"]);
                    let a = self.aggregate(Ty::Int, d);
                    let b = self.expr(Ty::Int, Ctx::Grouped, d);
                    format!("( {a} {op} {b} )")
                }
                // Not supported: an error path, kept rare.
                7 if self.chance(0.1) => format!("sum ( DISTINCT {} )", arg(self, Ty::Int)),
                _ => format!("count ( {} )", self.pick(&["*", "1", "NULL"])),
            },
            Ty::Float => match self.rng.gen_range(0..6) {
                0 | 1 => {
                    let f = self.pick(&["avg", "mean"]);
                    let t = self.pick(&[Ty::Int, Ty::Float]);
                    format!("{f} ( {} )", arg(self, t))
                }
                2 => format!("sum ( {} )", arg(self, Ty::Float)),
                3 => {
                    let f = self.pick(&["min", "max"]);
                    format!("{f} ( {} )", arg(self, Ty::Float))
                }
                4 if depth < 4 => {
                    let a = self.aggregate(Ty::Float, d);
                    let digits = self.pick(ROUND_DIGITS);
                    format!("round ( {a} , {digits} )")
                }
                _ => format!("( sum ( {} ) / count ( * ) )", arg(self, Ty::Float)),
            },
            Ty::Str | Ty::Ts => {
                let f = self.pick(&["min", "max"]);
                format!("{f} ( {} )", arg(self, ty))
            }
            Ty::Bool => {
                let a = self.aggregate(Ty::Int, d);
                let op = self.pick(&["=", "<", ">", ">="]);
                let b = self.pick(INT_LITS);
                format!("( {a} {op} {b} )")
            }
        }
    }
}

/// `name` as the parser reads it: bare when it is a plain word, else
/// double-quoted.
fn quote_ident(name: &str) -> String {
    let plain = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !katydid_reserved(name);
    if plain {
        name.to_string()
    } else {
        format!("\"{}\"", name.replace('"', "\"\""))
    }
}

fn katydid_reserved(word: &str) -> bool {
    const RESERVED: &[&str] = &[
        "SELECT", "FROM", "WHERE", "GROUP", "BY", "HAVING", "ORDER", "LIMIT", "OFFSET", "AND",
        "OR", "NOT", "IN", "BETWEEN", "LIKE", "IS", "NULL", "CASE", "WHEN", "THEN", "ELSE", "END",
        "AS", "ASC", "DESC", "TRUE", "FALSE", "DISTINCT", "NULLS", "INTERVAL", "CAST", "EXPLAIN",
    ];
    RESERVED.iter().any(|k| k.eq_ignore_ascii_case(word))
}

/// Characters spliced into statements by mutations.
const CHARS: &[char] = &[
    '(',
    ')',
    '\'',
    '"',
    ',',
    ';',
    '*',
    '-',
    '+',
    '/',
    '%',
    ':',
    '=',
    '<',
    '>',
    '!',
    '[',
    ']',
    '.',
    '0',
    '9',
    'e',
    'E',
    'a',
    'z',
    '_',
    ' ',
    '\t',
    '\n',
    '\r',
    '\0',
    'é',
    '😈',
    '\u{feff}',
    '\u{200b}',
    '\u{301}',
    '\u{202e}',
    '\u{10ffff}',
    'ß',
    '€',
];

/// Breaks `sql` in one to three ways: characters flipped, inserted or
/// deleted, the text cut, tokens deleted, duplicated or swapped, keywords
/// spliced in, numbers made extreme, a literal made very long, or an
/// expression nested very deeply. Sizes are bounded (at most a few
/// hundred KiB) so that the test stays fast.
pub fn mutate(rng: &mut ChaCha8Rng, sql: &str) -> String {
    let mut s = sql.to_string();
    for _ in 0..rng.gen_range(1..=3) {
        s = mutate_once(rng, &s);
    }
    s
}

fn mutate_once(rng: &mut ChaCha8Rng, sql: &str) -> String {
    let mut tokens: Vec<String> = sql.split(' ').map(str::to_string).collect();
    let chars: Vec<char> = sql.chars().collect();
    let n = tokens.len();
    match rng.gen_range(0..14) {
        0 => {
            // Replace one character.
            let mut cs = chars;
            if !cs.is_empty() {
                let at = rng.gen_range(0..cs.len());
                cs[at] = *CHARS.choose(rng).unwrap();
            }
            cs.into_iter().collect()
        }
        1 => {
            // Insert a character.
            let mut cs = chars;
            let at = rng.gen_range(0..=cs.len());
            cs.insert(at, *CHARS.choose(rng).unwrap());
            cs.into_iter().collect()
        }
        2 => {
            // Delete a character.
            let mut cs = chars;
            if !cs.is_empty() {
                cs.remove(rng.gen_range(0..cs.len()));
            }
            cs.into_iter().collect()
        }
        3 => {
            // Cut the text.
            let at = rng.gen_range(0..=chars.len());
            chars[..at].iter().collect()
        }
        4 => {
            tokens.remove(rng.gen_range(0..n));
            tokens.join(" ")
        }
        5 => {
            let at = rng.gen_range(0..n);
            let t = tokens[at].clone();
            tokens.insert(at, t);
            tokens.join(" ")
        }
        6 => {
            let (a, b) = (rng.gen_range(0..n), rng.gen_range(0..n));
            tokens.swap(a, b);
            tokens.join(" ")
        }
        7 => {
            let at = rng.gen_range(0..=n);
            tokens.insert(at, TOKENS.choose(rng).unwrap().to_string());
            tokens.join(" ")
        }
        8 => {
            // An extreme number where a number was.
            let numbers: Vec<usize> = (0..n)
                .filter(|&i| tokens[i].starts_with(|c: char| c.is_ascii_digit()))
                .collect();
            let extreme = *[
                "9223372036854775808",
                "99999999999999999999999999999",
                "1e999",
                "1e-999",
                "00000000000000000000001",
                "0.000000000000000000000000000000001",
                "18446744073709551616",
                "4294967296",
                "-0",
            ]
            .choose(rng)
            .unwrap();
            match numbers.choose(rng) {
                Some(&i) => tokens[i] = extreme.to_string(),
                None => tokens.push(extreme.to_string()),
            }
            tokens.join(" ")
        }
        9 => {
            // A very long string literal or identifier.
            let len = *[1000usize, 70_000, 300_000].choose(rng).unwrap();
            let unit = *["a", "😈", "%", "''", "_"].choose(rng).unwrap();
            let body = unit.repeat(len / unit.len().max(1));
            let lit = if rng.gen_bool(0.7) {
                format!("'{body}'")
            } else {
                format!("\"{}\"", body.replace('"', ""))
            };
            let at = rng.gen_range(0..=n);
            tokens.insert(at, lit);
            tokens.join(" ")
        }
        10 => {
            // Deep nesting around a token, just under and over the
            // parser's limits.
            let depth = *[50usize, 99, 100, 101, 150, 499, 501, 2000]
                .choose(rng)
                .unwrap();
            let at = rng.gen_range(0..n);
            let t = &tokens[at];
            tokens[at] = match rng.gen_range(0..5) {
                0 => format!("{}{t}{}", "( ".repeat(depth), " )".repeat(depth)),
                1 => format!("{}{t}", "NOT ".repeat(depth)),
                2 => format!("{}{t}", "- ".repeat(depth)),
                3 => format!("{t}{}", " + 1".repeat(depth)),
                _ => format!("{}{t}{}", "abs ( ".repeat(depth), " )".repeat(depth)),
            };
            tokens.join(" ")
        }
        11 => {
            // A long list.
            let len = *[100usize, 1000, 10_000].choose(rng).unwrap();
            let list = vec!["1"; len].join(" , ");
            let at = rng.gen_range(0..=n);
            tokens.insert(at, list);
            tokens.join(" ")
        }
        12 => {
            // Random characters, including any code point.
            let mut cs = chars;
            let at = rng.gen_range(0..=cs.len());
            for _ in 0..rng.gen_range(1..8) {
                let c = char::from_u32(rng.gen_range(0..0x11_0000)).unwrap_or('\u{fffd}');
                cs.insert(at, c);
            }
            cs.into_iter().collect()
        }
        _ => {
            // A comment, closed or not.
            let c = *["-- x", "/* x */", "/*", "--", "/* /* */ */", "*/"]
                .choose(rng)
                .unwrap();
            let at = rng.gen_range(0..=n);
            tokens.insert(at, c.to_string());
            tokens.join(" ")
        }
    }
}
