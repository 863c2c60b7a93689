//! Scalar functions end to end through `Database::query`: results over a
//! small table (several partitionings), and plan errors that point at the
//! argument at fault.

mod common;

use std::path::Path;

use katydid::{Database, DatabaseOptions, Error, LoadOptions, Value};

const DATA: &str = "\
t,s,x
2021-08-03 11:59:44.123456,https://www.example.com/a/b,2.5
2005-01-02 00:00:00,http://example.org,3.5
2012-12-31 23:00:00,,-2.5
,日本語 text,
1969-12-31 23:59:59.5,aaa,0.5
";

fn databases() -> Vec<Database> {
    [(1, 65_536), (2, 2), (2, 1)]
        .into_iter()
        .map(|(threads, rows)| common::csv_database(DATA.as_bytes(), "f", threads, rows))
        .collect()
}

/// The single column of `sql`'s result, in load order.
fn column(db: &Database, sql: &str) -> Vec<Value> {
    let result = db.query(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    result.rows.into_iter().map(|mut r| r.remove(0)).collect()
}

fn ints(xs: &[Option<i64>]) -> Vec<Value> {
    xs.iter()
        .map(|x| x.map_or(Value::Null, Value::Int))
        .collect()
}

fn strs(xs: &[Option<&str>]) -> Vec<Value> {
    xs.iter()
        .map(|x| x.map_or(Value::Null, Value::str))
        .collect()
}

#[test]
fn extract_and_date_part_give_integer_parts() {
    let cases: &[(&str, &[Option<i64>])] = &[
        (
            "extract(year FROM t)",
            &[Some(2021), Some(2005), Some(2012), None, Some(1969)],
        ),
        (
            "EXTRACT(quarter FROM t)",
            &[Some(3), Some(1), Some(4), None, Some(4)],
        ),
        (
            "extract('month' FROM t)",
            &[Some(8), Some(1), Some(12), None, Some(12)],
        ),
        (
            "extract(week FROM t)",
            &[Some(31), Some(53), Some(1), None, Some(1)],
        ),
        (
            "extract(day FROM t)",
            &[Some(3), Some(2), Some(31), None, Some(31)],
        ),
        (
            "extract(dow FROM t)",
            &[Some(2), Some(0), Some(1), None, Some(3)],
        ),
        (
            "extract(isodow FROM t)",
            &[Some(2), Some(7), Some(1), None, Some(3)],
        ),
        (
            "extract(doy FROM t)",
            &[Some(215), Some(2), Some(366), None, Some(365)],
        ),
        (
            "extract(hour FROM t)",
            &[Some(11), Some(0), Some(23), None, Some(23)],
        ),
        (
            "extract(minute FROM t)",
            &[Some(59), Some(0), Some(0), None, Some(59)],
        ),
        (
            "extract(second FROM t)",
            &[Some(44), Some(0), Some(0), None, Some(59)],
        ),
        (
            "extract(ms FROM t)",
            &[Some(44_123), Some(0), Some(0), None, Some(59_500)],
        ),
        (
            "extract(isoyear FROM t)",
            &[Some(2021), Some(2004), Some(2013), None, Some(1970)],
        ),
        (
            "date_part('minute', t)",
            &[Some(59), Some(0), Some(0), None, Some(59)],
        ),
        (
            "extract(minute FROM t) + 1",
            &[Some(60), Some(1), Some(1), None, Some(60)],
        ),
    ];
    for db in databases() {
        for (expr, expected) in cases {
            let sql = format!("SELECT {expr} FROM f");
            assert_eq!(column(&db, &sql), ints(expected), "{sql}");
        }
        assert_eq!(
            column(
                &db,
                "SELECT extract(epoch FROM t) FROM f WHERE t < '2000-01-01'"
            ),
            vec![Value::Float(-0.5)]
        );
        // Grouping and filtering on a part.
        let rows = db
            .query("SELECT extract(month FROM t) AS m, count(*) FROM f WHERE extract(day FROM t) > 2 GROUP BY m ORDER BY m")
            .unwrap()
            .rows;
        assert_eq!(
            rows,
            vec![
                vec![Value::Int(8), Value::Int(1)],
                vec![Value::Int(12), Value::Int(2)]
            ]
        );
    }
}

#[test]
fn strlen_counts_bytes_and_length_counts_characters() {
    for db in databases() {
        assert_eq!(
            column(&db, "SELECT strlen(s) FROM f"),
            ints(&[Some(27), Some(18), None, Some(14), Some(3)])
        );
        assert_eq!(
            column(&db, "SELECT length(s) FROM f"),
            ints(&[Some(27), Some(18), None, Some(8), Some(3)])
        );
        assert_eq!(
            column(&db, "SELECT avg(STRLEN(s)) - avg(length(s)) FROM f"),
            vec![Value::Float(1.5)]
        );
    }
}

#[test]
fn regexp_replace_replaces_the_first_match_unless_global() {
    let cases: &[(&str, &[Option<&str>])] = &[
        (
            r"regexp_replace(s, '^https?://(?:www\.)?([^/]+)/.*$', '\1')",
            &[
                Some("example.com"),
                Some("http://example.org"),
                None,
                Some("日本語 text"),
                Some("aaa"),
            ],
        ),
        (
            "regexp_replace(s, 'a', 'b')",
            &[
                Some("https://www.exbmple.com/a/b"),
                Some("http://exbmple.org"),
                None,
                Some("日本語 text"),
                Some("baa"),
            ],
        ),
        (
            "regexp_replace(s, 'A', '[\\0]', 'gi')",
            &[
                Some("https://www.ex[a]mple.com/[a]/b"),
                Some("http://ex[a]mple.org"),
                None,
                Some("日本語 text"),
                Some("[a][a][a]"),
            ],
        ),
        (
            "regexp_replace(s, '本(.)', '\\1$', 'g')",
            &[
                Some("https://www.example.com/a/b"),
                Some("http://example.org"),
                None,
                Some("日語$ text"),
                Some("aaa"),
            ],
        ),
        (
            "regexp_replace(s, 'a', NULL)",
            &[None, None, None, None, None],
        ),
    ];
    for db in databases() {
        for (expr, expected) in cases {
            let sql = format!("SELECT {expr} FROM f");
            assert_eq!(column(&db, &sql), strs(expected), "{sql}");
        }
        // The same call in the select list and GROUP BY is one key.
        let rows = db
            .query("SELECT regexp_replace(s, '[a-z]+', 'w'), count(*) FROM f GROUP BY regexp_replace(s, '[a-z]+', 'w') ORDER BY 2 DESC, 1")
            .unwrap()
            .rows;
        assert_eq!(rows.len(), 5);
    }
}

#[test]
fn explain_shows_the_bound_functions() {
    let db = &databases()[0];
    let plan: Vec<String> = column(
        db,
        "EXPLAIN SELECT count(*) FROM f WHERE regexp_replace(s, 'it''s(.)', '\\1x', 'g') = 'a' \
         AND extract(minute FROM t) = 1 AND strlen(s) > 1",
    )
    .iter()
    .map(|v| v.to_string())
    .collect();
    let text = plan.join("\n");
    assert!(
        text.contains("regexp_replace(s, 'it''s(.)', '\\1x', 'g')"),
        "{text}"
    );
    assert!(text.contains("date_part('minute', t)"), "{text}");
    assert!(text.contains("strlen(s)"), "{text}");
}

#[test]
fn errors_point_at_the_argument_at_fault() {
    let db = &databases()[0];
    let cases: &[(&str, &str, &str)] = &[
        (
            "SELECT extract(fortnight FROM t) FROM f",
            "fortnight",
            "unknown date part \"fortnight\"",
        ),
        (
            "SELECT date_part('eon', t) FROM f",
            "'eon'",
            "unknown date part \"eon\"",
        ),
        (
            "SELECT extract(minute FROM s) FROM f",
            "s) FROM",
            "extract() needs a timestamp, but \"s\" is a string",
        ),
        (
            "SELECT date_part(s, t) FROM f",
            "s, t)",
            "date_part() needs a part name such as 'minute'",
        ),
        (
            "SELECT regexp_replace(s, '(a', 'b') FROM f",
            "'(a'",
            "invalid regular expression: unclosed group",
        ),
        (
            "SELECT regexp_replace(s, 'a', '\\2') FROM f",
            "'\\2'",
            "the replacement refers to group \\2, but the pattern has 0 groups",
        ),
        (
            "SELECT regexp_replace(s, 'a', 'b', 'gq') FROM f",
            "'gq'",
            "unknown regexp_replace option \"q\"",
        ),
        (
            "SELECT regexp_replace(s, s, 'b') FROM f",
            "s, 'b'",
            "regexp_replace() needs a constant string here, but \"s\" is not one",
        ),
        (
            "SELECT regexp_replace(x, 'a', 'b') FROM f",
            "x, 'a'",
            "regexp_replace() needs a string, but \"x\" is a float",
        ),
        (
            "SELECT regexp_replace(s, 'a') FROM f",
            "regexp_replace(s, 'a')",
            "regexp_replace() takes 3 to 4 argument(s), found 2",
        ),
        (
            "SELECT strlen(x) FROM f",
            "x)",
            "strlen() needs a string, but \"x\" is a float",
        ),
        (
            "SELECT quantile_cont(x, 1.5) FROM f",
            "1.5",
            "quantile_cont() needs a constant fraction between 0 and 1",
        ),
        (
            "SELECT quantile_disc(x, x) FROM f",
            "x) FROM",
            "quantile_disc() needs a constant fraction between 0 and 1",
        ),
        (
            "SELECT corr(x) FROM f",
            "corr(x)",
            "corr() takes exactly two arguments",
        ),
        (
            "SELECT stddev(s) FROM f",
            "s) FROM",
            "stddev() needs a number, but \"s\" is a string",
        ),
        (
            "SELECT median(s) FROM f",
            "s) FROM",
            "median() needs a number, but \"s\" is a string",
        ),
        (
            "SELECT sum(median(x)) FROM f",
            "median(x)",
            "aggregate functions cannot be nested",
        ),
        (
            "SELECT s FROM f WHERE stddev(x) > 1",
            "stddev(x)",
            "aggregate function stddev() is not allowed in WHERE",
        ),
        (
            "SELECT sqrt(s) FROM f",
            "s) FROM",
            "sqrt() needs a number, but \"s\" is a string",
        ),
    ];
    for (sql, at, message) in cases {
        match db.query(sql) {
            Err(Error::Plan {
                message: m,
                offset: Some(o),
            }) => {
                assert!(m.starts_with(message), "{sql}: {m}");
                assert_eq!(Some(o), sql.find(at), "{sql}: {m} at {o}");
            }
            other => panic!("{sql}: expected a plan error, got {other:?}"),
        }
    }
}

/// Issue 30, item 8: `strptime` reads a layout (an error for a text not in
/// it), `try_strptime` and `TRY_CAST` give NULL instead of failing, on
/// every partitioning (the vectorized cast falls back row by row).
#[test]
fn strptime_and_try_cast_read_or_give_null() {
    let ts = |s: &str| Value::Timestamp(katydid::types::parse_timestamp(s).unwrap());
    for db in databases() {
        assert_eq!(
            column(
                &db,
                "SELECT try_strptime(CAST(t AS VARCHAR), '%Y-%m-%d %H:%M:%S') FROM f"
            ),
            vec![
                Value::Null,
                ts("2005-01-02"),
                ts("2012-12-31 23:00:00"),
                Value::Null,
                Value::Null,
            ]
        );
        assert_eq!(
            column(
                &db,
                "SELECT strptime('31/12/2012 23:00', '%d/%m/%Y %H:%M') FROM f LIMIT 1"
            ),
            vec![ts("2012-12-31 23:00:00")]
        );
        let e = db
            .query("SELECT strptime(s, '%Y-%m-%d') FROM f")
            .unwrap_err();
        assert!(matches!(e, Error::Execution(_)), "{e}");
        assert!(
            e.to_string()
                .contains("not a timestamp in the format '%Y-%m-%d'"),
            "{e}"
        );
        assert_eq!(
            column(&db, "SELECT try_cast(x AS INTEGER) FROM f"),
            ints(&[Some(2), Some(4), Some(-2), None, Some(0)])
        );
        assert_eq!(
            column(&db, "SELECT TRY_CAST(s AS INTEGER) FROM f"),
            ints(&[None, None, None, None, None])
        );
        assert_eq!(
            column(&db, "SELECT try_cast(x * 1e300 * 1e10 AS BIGINT) FROM f"),
            ints(&[None, None, None, None, None])
        );
        let e = db.query("SELECT CAST(s AS INTEGER) FROM f").unwrap_err();
        assert!(e.to_string().contains("cannot cast"), "{e}");
    }
}

#[test]
fn strptime_formats_are_checked_at_plan_time() {
    let db = &databases()[0];
    let sql = "SELECT strptime(s, '%Y-%Q') FROM f";
    match db.query(sql) {
        Err(Error::Plan { message, offset }) => {
            assert!(
                message.contains("not a valid timestamp format"),
                "{message}"
            );
            assert_eq!(offset, Some(sql.find("'%Y").unwrap()));
        }
        other => panic!("{other:?}"),
    }
    match db.query("SELECT strptime(s, s) FROM f") {
        Err(Error::Plan { message, .. }) => {
            assert!(message.contains("constant format"), "{message}")
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn substring_counts_characters_from_one_as_postgresql_does() {
    // Expected values are PostgreSQL's for the same calls.
    let cases: &[(&str, &[Option<&str>])] = &[
        (
            "substring(s FROM 1 FOR 5)",
            &[
                Some("https"),
                Some("http:"),
                None,
                Some("日本語 t"),
                Some("aaa"),
            ],
        ),
        (
            "substr(s, 3)",
            &[
                Some("tps://www.example.com/a/b"),
                Some("tp://example.org"),
                None,
                Some("語 text"),
                Some("a"),
            ],
        ),
        (
            "substring(s, 0, 3)",
            &[Some("ht"), Some("ht"), None, Some("日本"), Some("aa")],
        ),
        (
            "substring(s FROM 40)",
            &[Some(""), Some(""), None, Some(""), Some("")],
        ),
    ];
    for db in databases() {
        for (call, expected) in cases {
            let sql = format!("SELECT {call} FROM f");
            assert_eq!(column(&db, &sql), strs(expected), "{sql}");
        }
        match db.query("SELECT substring(s, 1, -1) FROM f") {
            Err(Error::Execution(m)) => assert!(m.contains("negative"), "{m}"),
            other => panic!("negative length: {other:?}"),
        }
    }
}

#[test]
fn dates_and_calendar_intervals() {
    for db in databases() {
        let sql = "SELECT count(*) FROM f WHERE t >= DATE '2005-01-02' AND t < DATE '2012-01-01' + INTERVAL '1' YEAR";
        assert_eq!(column(&db, sql), ints(&[Some(2)]), "{sql}");
        let sql = "SELECT CAST(t AS DATE) FROM f WHERE t > DATE '2021-01-01'";
        assert_eq!(
            column(&db, sql),
            vec![Value::Date(18_842)],
            "{sql}: 2021-08-03"
        );
        // Month ends clamp: 31 January + 1 month is 28 February.
        let sql = "SELECT count(*) FROM f WHERE t < DATE '2005-01-31' + INTERVAL '1 month' - INTERVAL '27 days'";
        assert_eq!(column(&db, sql), ints(&[Some(2)]), "{sql}");
        // Months on a column, by the calendar.
        let sql =
            "SELECT CAST(t - INTERVAL '13' MONTH AS VARCHAR) FROM f WHERE t > DATE '2021-01-01'";
        assert_eq!(
            column(&db, sql),
            vec![Value::str("2020-07-03 11:59:44.123456")],
            "{sql}"
        );
    }
}

#[test]
fn long_in_lists_on_compressed_codecs_match_short_ones() {
    // A sorted key repeated four times (TPC-H's ps_partkey) is delta-coded;
    // an IN list longer than a codec answers value by value goes through
    // the general path, and must find the same rows.
    let mut csv = String::from("k\n");
    for i in 0..20_000 {
        csv.push_str(&format!("{}\n", i / 4 * 3 + 1));
    }
    let mut db = Database::new(DatabaseOptions {
        threads: 2,
        ..Default::default()
    })
    .expect("thread pool");
    db.load_csv_bytes(
        csv.into_bytes(),
        Path::new("k.csv"),
        "k",
        &LoadOptions::default(),
    )
    .expect("loads");
    let described = db.query("DESCRIBE k").expect("describes");
    let encoding = &described.rows[0][2];
    assert!(
        matches!(encoding, Value::Str(s) if s.starts_with("delta")),
        "the test needs a delta-coded column, got {encoding:?}"
    );
    let list: Vec<i64> = (0..40).map(|i| i * 377 + 1).collect();
    let expected = list
        .iter()
        .filter(|&&v| (v - 1) % 3 == 0 && (v - 1) / 3 < 5_000)
        .count() as i64
        * 4;
    for n in [3, 8, 9, 40] {
        let items: Vec<String> = list[..n].iter().map(|v| v.to_string()).collect();
        let sql = format!("SELECT count(*) FROM k WHERE k IN ({})", items.join(", "));
        let want = list[..n]
            .iter()
            .filter(|&&v| (v - 1) % 3 == 0 && (v - 1) / 3 < 5_000)
            .count() as i64
            * 4;
        assert_eq!(column(&db, &sql), ints(&[Some(want)]), "{sql}");
    }
    assert!(expected > 0);
}

/// Issue 33: the statistical aggregates and math functions DuckDB has,
/// with its answers on a small table (each checked there), on every
/// partitioning: the moments and quantiles merge across partitions.
#[test]
fn statistical_aggregates_and_math_functions() {
    let close = |a: &Value, b: f64| match a {
        Value::Float(x) => (x - b).abs() <= 1e-12 * b.abs().max(1.0),
        _ => false,
    };
    for db in &databases() {
        let r = db
            .query(
                "SELECT var_samp(x), var_pop(x), stddev(x), stddev_pop(x), median(x), \
                 quantile_cont(x, 0.25), quantile_disc(x, 0.25), mode(s), \
                 corr(x, length(s)), regr_slope(x, length(s)), count_if(x > 0) FROM f",
            )
            .unwrap();
        let row = &r.rows[0];
        // x: 2.5, 3.5, -2.5, 0.5 (and a NULL); length(s): 27, 18, NULL, 3.
        let want = [7.0, 5.25, 7.0f64.sqrt(), 5.25f64.sqrt(), 1.5, -0.25];
        for (i, w) in want.iter().enumerate() {
            assert!(close(&row[i], *w), "column {i}: {:?} vs {w}", row[i]);
        }
        assert_eq!(row[6], Value::Float(-2.5));
        // Four strings once each: the smallest.
        assert_eq!(row[7], Value::str("aaa"));
        // Pairs (2.5, 27), (3.5, 18), (0.5, 3).
        assert!(close(&row[8], 0.7559289460184544), "{:?}", row[8]);
        assert!(close(&row[9], 0.0952380952380952), "{:?}", row[9]);
        assert_eq!(row[10], Value::Int(3));
        let r = db
            .query("SELECT median(t), sqrt(16), pow(2, 10), ln(1), log(100), log(2, 8), sign(-2.5), trunc(-2.7), cbrt(27.0) FROM f")
            .unwrap();
        let row = &r.rows[0];
        assert_eq!(
            row[0],
            column(db, "SELECT TIMESTAMP '2009-01-01 11:30:00'")[0]
        );
        for (i, w) in [4.0, 1024.0, 0.0, 2.0, 3.0].iter().enumerate() {
            assert!(close(&row[i + 1], *w), "column {}: {:?}", i + 1, row[i + 1]);
        }
        assert_eq!(row[6], Value::Int(-1));
        assert_eq!(row[7], Value::Float(-2.0));
        assert!(close(&row[8], 3.0));
    }
}

/// Issue 33: `GROUP BY ALL` groups by the items without an aggregate,
/// `ORDER BY ALL` orders by every item, and `FILTER (WHERE p)` aggregates
/// only the rows where p holds: each equals its spelled-out form.
#[test]
fn group_by_all_order_by_all_and_filter_equal_their_long_forms() {
    let pairs = [
        (
            "SELECT year(t), s IS NULL, count(*), sum(x) FROM f GROUP BY ALL ORDER BY ALL",
            "SELECT year(t), s IS NULL, count(*), sum(x) FROM f GROUP BY 1, 2 ORDER BY 1, 2, 3, 4",
        ),
        (
            "SELECT s, x FROM f GROUP BY ALL ORDER BY ALL DESC",
            "SELECT s, x FROM f GROUP BY s, x ORDER BY 1 DESC, 2 DESC",
        ),
        (
            "SELECT count(*) FILTER (WHERE x > 0), sum(x) FILTER (WHERE s LIKE 'h%'), \
             max(t) FILTER (WHERE x < 3) FROM f",
            "SELECT count(CASE WHEN x > 0 THEN 1 END), sum(CASE WHEN s LIKE 'h%' THEN x END), \
             max(CASE WHEN x < 3 THEN t END) FROM f",
        ),
    ];
    for db in &databases() {
        for (short, long) in pairs {
            let a = db
                .query(short)
                .unwrap_or_else(|e| panic!("{short}: {e}"))
                .rows;
            let b = db
                .query(long)
                .unwrap_or_else(|e| panic!("{long}: {e}"))
                .rows;
            assert!(!a.is_empty(), "{short}");
            assert_eq!(a, b, "{short}");
        }
    }
}

fn bools(xs: &[Option<bool>]) -> Vec<Value> {
    xs.iter()
        .map(|x| x.map_or(Value::Null, Value::Bool))
        .collect()
}

fn floats(xs: &[Option<f64>]) -> Vec<Value> {
    xs.iter()
        .map(|x| x.map_or(Value::Null, Value::Float))
        .collect()
}

/// `||`, ILIKE, the NULL-handling, string and timestamp functions DuckDB
/// users reach for first, over every partitioning. The expected columns
/// are DuckDB 1.x's answers on the same table (`read_csv` with the columns
/// typed TIMESTAMP, VARCHAR, DOUBLE), obtained with its Python package;
/// only `chr`'s argument is cast to INTEGER there (DuckDB has no
/// `chr(BIGINT)`).
#[test]
fn everyday_scalar_functions_answer_as_duckdb() {
    let cases: Vec<(&str, Vec<Value>)> = vec![
        (
            "s || '!'",
            strs(&[
                Some("https://www.example.com/a/b!"),
                Some("http://example.org!"),
                None,
                Some("日本語 text!"),
                Some("aaa!"),
            ]),
        ),
        (
            "'<' || s || '>'",
            strs(&[
                Some("<https://www.example.com/a/b>"),
                Some("<http://example.org>"),
                None,
                Some("<日本語 text>"),
                Some("<aaa>"),
            ]),
        ),
        (
            "s ILIKE '%EXAMPLE%'",
            bools(&[Some(true), Some(true), None, Some(false), Some(false)]),
        ),
        (
            "s NOT ILIKE 'AAA'",
            bools(&[Some(true), Some(true), None, Some(true), Some(false)]),
        ),
        (
            "s ILIKE 'HTTP_://%'",
            bools(&[Some(true), Some(false), None, Some(false), Some(false)]),
        ),
        (
            "coalesce(s, 'none')",
            strs(&[
                Some("https://www.example.com/a/b"),
                Some("http://example.org"),
                Some("none"),
                Some("日本語 text"),
                Some("aaa"),
            ]),
        ),
        (
            "ifnull(x, 0)",
            floats(&[Some(2.5), Some(3.5), Some(-2.5), Some(0.0), Some(0.5)]),
        ),
        (
            "coalesce(NULL, x, 1)",
            floats(&[Some(2.5), Some(3.5), Some(-2.5), Some(1.0), Some(0.5)]),
        ),
        (
            "nullif(x, 2.5)",
            floats(&[None, Some(3.5), Some(-2.5), None, Some(0.5)]),
        ),
        (
            "nullif(s, 'aaa')",
            strs(&[
                Some("https://www.example.com/a/b"),
                Some("http://example.org"),
                None,
                Some("日本語 text"),
                None,
            ]),
        ),
        (
            "greatest(x, 1)",
            floats(&[Some(2.5), Some(3.5), Some(1.0), Some(1.0), Some(1.0)]),
        ),
        (
            "least(x, 1, NULL)",
            floats(&[Some(1.0), Some(1.0), Some(-2.5), Some(1.0), Some(0.5)]),
        ),
        (
            "date_diff('second', TIMESTAMP '1970-01-01', greatest(t, TIMESTAMP '2010-01-01'))",
            ints(&[
                Some(1627991984),
                Some(1262304000),
                Some(1356994800),
                Some(1262304000),
                Some(1262304000),
            ]),
        ),
        (
            "least(s, 'b')",
            strs(&[Some("b"), Some("b"), Some("b"), Some("b"), Some("aaa")]),
        ),
        (
            "concat(s, '-', strlen(s))",
            strs(&[
                Some("https://www.example.com/a/b-27"),
                Some("http://example.org-18"),
                Some("-"),
                Some("日本語 text-14"),
                Some("aaa-3"),
            ]),
        ),
        (
            "concat_ws('|', s, 'z', s)",
            strs(&[
                Some("https://www.example.com/a/b|z|https://www.example.com/a/b"),
                Some("http://example.org|z|http://example.org"),
                Some("z"),
                Some("日本語 text|z|日本語 text"),
                Some("aaa|z|aaa"),
            ]),
        ),
        ("concat_ws(NULL, s)", strs(&[None, None, None, None, None])),
        (
            "starts_with(s, 'http')",
            bools(&[Some(true), Some(true), None, Some(false), Some(false)]),
        ),
        (
            "ends_with(s, 'a')",
            bools(&[Some(false), Some(false), None, Some(false), Some(true)]),
        ),
        (
            "contains(s, 'example')",
            bools(&[Some(true), Some(true), None, Some(false), Some(false)]),
        ),
        (
            "replace(s, 'a', 'AA')",
            strs(&[
                Some("https://www.exAAmple.com/AA/b"),
                Some("http://exAAmple.org"),
                None,
                Some("日本語 text"),
                Some("AAAAAA"),
            ]),
        ),
        (
            "replace(s, '/', '')",
            strs(&[
                Some("https:www.example.comab"),
                Some("http:example.org"),
                None,
                Some("日本語 text"),
                Some("aaa"),
            ]),
        ),
        (
            "lpad(s, 8, '*-')",
            strs(&[
                Some("https://"),
                Some("http://e"),
                None,
                Some("日本語 text"),
                Some("*-*-*aaa"),
            ]),
        ),
        (
            "rpad(s, 5, '.')",
            strs(&[
                Some("https"),
                Some("http:"),
                None,
                Some("日本語 t"),
                Some("aaa.."),
            ]),
        ),
        (
            "lpad(s, 2, '*')",
            strs(&[Some("ht"), Some("ht"), None, Some("日本"), Some("aa")]),
        ),
        (
            "left(s, 4)",
            strs(&[
                Some("http"),
                Some("http"),
                None,
                Some("日本語 "),
                Some("aaa"),
            ]),
        ),
        (
            "left(s, -3)",
            strs(&[
                Some("https://www.example.com/"),
                Some("http://example."),
                None,
                Some("日本語 t"),
                Some(""),
            ]),
        ),
        (
            "right(s, 3)",
            strs(&[Some("a/b"), Some("org"), None, Some("ext"), Some("aaa")]),
        ),
        (
            "right(s, -5)",
            strs(&[
                Some("://www.example.com/a/b"),
                Some("//example.org"),
                None,
                Some("ext"),
                Some(""),
            ]),
        ),
        (
            "reverse(s)",
            strs(&[
                Some("b/a/moc.elpmaxe.www//:sptth"),
                Some("gro.elpmaxe//:ptth"),
                None,
                Some("txet 語本日"),
                Some("aaa"),
            ]),
        ),
        (
            "repeat(s, 2)",
            strs(&[
                Some("https://www.example.com/a/bhttps://www.example.com/a/b"),
                Some("http://example.orghttp://example.org"),
                None,
                Some("日本語 text日本語 text"),
                Some("aaaaaa"),
            ]),
        ),
        (
            "repeat(s, 0)",
            strs(&[Some(""), Some(""), None, Some(""), Some("")]),
        ),
        (
            "split_part(s, '/', 3)",
            strs(&[
                Some("www.example.com"),
                Some("example.org"),
                None,
                Some(""),
                Some(""),
            ]),
        ),
        (
            "split_part(s, '/', -1)",
            strs(&[
                Some("b"),
                Some("example.org"),
                None,
                Some("日本語 text"),
                Some("aaa"),
            ]),
        ),
        (
            "split_part(s, '/', 0)",
            strs(&[Some(""), Some(""), None, Some(""), Some("")]),
        ),
        (
            "split_part(s, '', 2)",
            strs(&[Some("t"), Some("t"), None, Some("本"), Some("a")]),
        ),
        (
            "strpos(s, 'e')",
            ints(&[Some(13), Some(8), None, Some(6), Some(0)]),
        ),
        (
            "instr(s, 'exam')",
            ints(&[Some(13), Some(8), None, Some(0), Some(0)]),
        ),
        (
            "ltrim(s, 'ht')",
            strs(&[
                Some("ps://www.example.com/a/b"),
                Some("p://example.org"),
                None,
                Some("日本語 text"),
                Some("aaa"),
            ]),
        ),
        (
            "rtrim(s, 'a')",
            strs(&[
                Some("https://www.example.com/a/b"),
                Some("http://example.org"),
                None,
                Some("日本語 text"),
                Some(""),
            ]),
        ),
        (
            "trim(s, 'ah')",
            strs(&[
                Some("ttps://www.example.com/a/b"),
                Some("ttp://example.org"),
                None,
                Some("日本語 text"),
                Some(""),
            ]),
        ),
        (
            "trim(' ' || s || '  ')",
            strs(&[
                Some("https://www.example.com/a/b"),
                Some("http://example.org"),
                None,
                Some("日本語 text"),
                Some("aaa"),
            ]),
        ),
        (
            "ltrim('  ' || s)",
            strs(&[
                Some("https://www.example.com/a/b"),
                Some("http://example.org"),
                None,
                Some("日本語 text"),
                Some("aaa"),
            ]),
        ),
        (
            "rtrim(s || '  ')",
            strs(&[
                Some("https://www.example.com/a/b"),
                Some("http://example.org"),
                None,
                Some("日本語 text"),
                Some("aaa"),
            ]),
        ),
        (
            "ascii(s)",
            ints(&[Some(104), Some(104), None, Some(26085), Some(97)]),
        ),
        (
            "chr(strlen(s) + 64)",
            strs(&[Some("["), Some("R"), None, Some("N"), Some("C")]),
        ),
        (
            "mod(strlen(s), 4)",
            ints(&[Some(3), Some(2), None, Some(2), Some(3)]),
        ),
        (
            "mod(strlen(s), -3)",
            ints(&[Some(0), Some(0), None, Some(2), Some(0)]),
        ),
        (
            "strftime(t, '%Y-%m-%d %H:%M:%S')",
            strs(&[
                Some("2021-08-03 11:59:44"),
                Some("2005-01-02 00:00:00"),
                Some("2012-12-31 23:00:00"),
                None,
                Some("1969-12-31 23:59:59"),
            ]),
        ),
        (
            "strftime(t, '%d/%m/%Y %H:%M:%S.%f')",
            strs(&[
                Some("03/08/2021 11:59:44.123456"),
                Some("02/01/2005 00:00:00.000000"),
                Some("31/12/2012 23:00:00.000000"),
                None,
                Some("31/12/1969 23:59:59.500000"),
            ]),
        ),
        (
            "strftime(t, '%j %a %b %A %B %y %p %I')",
            strs(&[
                Some("215 Tue Aug Tuesday August 21 AM 11"),
                Some("002 Sun Jan Sunday January 05 AM 12"),
                Some("366 Mon Dec Monday December 12 PM 11"),
                None,
                Some("365 Wed Dec Wednesday December 69 PM 11"),
            ]),
        ),
        (
            "date_diff('year', t, TIMESTAMP '2010-06-15 12:30:30.5')",
            ints(&[Some(-11), Some(5), Some(-2), None, Some(41)]),
        ),
        (
            "date_diff('quarter', t, TIMESTAMP '2010-06-15 12:30:30.5')",
            ints(&[Some(-45), Some(21), Some(-10), None, Some(162)]),
        ),
        (
            "date_diff('month', t, TIMESTAMP '2010-06-15 12:30:30.5')",
            ints(&[Some(-134), Some(65), Some(-30), None, Some(486)]),
        ),
        (
            "date_diff('week', t, TIMESTAMP '2010-06-15 12:30:30.5')",
            ints(&[Some(-581), Some(284), Some(-132), None, Some(2110)]),
        ),
        (
            "date_diff('day', t, TIMESTAMP '2010-06-15 12:30:30.5')",
            ints(&[Some(-4067), Some(1990), Some(-930), None, Some(14776)]),
        ),
        (
            "datediff('hour', t, TIMESTAMP '2010-06-15 12:30:30.5')",
            ints(&[Some(-97607), Some(47772), Some(-22331), None, Some(354613)]),
        ),
        (
            "date_diff('minute', t, TIMESTAMP '2010-06-15 12:30:30.5')",
            ints(&[
                Some(-5856449),
                Some(2866350),
                Some(-1339830),
                None,
                Some(21276751),
            ]),
        ),
        (
            "date_diff('second', t, TIMESTAMP '2010-06-15 12:30:30.5')",
            ints(&[
                Some(-351386954),
                Some(171981030),
                Some(-80389770),
                None,
                Some(1276605031),
            ]),
        ),
        (
            "date_diff('millisecond', t, TIMESTAMP '2010-06-15 12:30:30.5')",
            ints(&[
                Some(-351386953623),
                Some(171981030500),
                Some(-80389769500),
                None,
                Some(1276605031000),
            ]),
        ),
        (
            "date_diff('microsecond', t, TIMESTAMP '2010-06-15 12:30:30.5')",
            ints(&[
                Some(-351386953623456),
                Some(171981030500000),
                Some(-80389769500000),
                None,
                Some(1276605031000000),
            ]),
        ),
        (
            "date_diff('second', TIMESTAMP '1970-01-01', t)",
            ints(&[
                Some(1627991984),
                Some(1104624000),
                Some(1356994800),
                None,
                Some(-1),
            ]),
        ),
        (
            "date_diff('day', TIMESTAMP '1970-01-01 00:00:00.1', t)",
            ints(&[Some(18842), Some(12785), Some(15705), None, Some(-1)]),
        ),
        (
            "date_diff('week', TIMESTAMP '1969-12-30', t)",
            ints(&[Some(2692), Some(1826), Some(2243), None, Some(0)]),
        ),
    ];
    for db in &databases() {
        for (expr, want) in &cases {
            let sql = format!("SELECT {expr} FROM f");
            assert_eq!(&column(db, &sql), want, "{sql}");
        }
    }
}

/// Lengths the user types never size an allocation: a result over 1 MiB is
/// an error naming the function; bad arguments are plan errors at the
/// argument.
#[test]
fn string_lengths_are_capped_and_bad_arguments_explained() {
    let db = &databases()[0];
    for (sql, message) in [
        (
            "SELECT repeat('a', 1e12)",
            "repeat: the result would be longer than",
        ),
        (
            "SELECT lpad(s, 1e12, 'x') FROM f",
            "lpad: the result would be longer than",
        ),
        (
            "SELECT rpad(s, 2000000, 'x') FROM f",
            "rpad: the result would be longer than",
        ),
        (
            "SELECT repeat(s, 100000) FROM f",
            "repeat: the result would be longer than",
        ),
        (
            "SELECT replace(repeat('a', 1000), 'a', repeat('b', 2000))",
            "replace: the result would be longer than",
        ),
        (
            "SELECT lpad(s, 40, '') FROM f",
            "lpad: cannot pad with an empty string",
        ),
        ("SELECT chr(-1)", "chr(): -1 is not a Unicode code point"),
        (
            "SELECT chr(55296)",
            "chr(): 55296 is not a Unicode code point",
        ),
    ] {
        let err = db.query(sql).expect_err(sql).to_string();
        assert!(err.contains(message), "{sql}: {err}");
    }
    // Short strings repeated a little stay fine, and NULL rows never fail.
    assert_eq!(
        column(db, "SELECT repeat(s, 2) FROM f WHERE s IS NULL"),
        strs(&[None])
    );
    for (sql, at, message) in [
        (
            "SELECT strftime(t, '%Q') FROM f",
            "'%Q'",
            "invalid strftime format '%Q'",
        ),
        (
            "SELECT strftime(t, s) FROM f",
            "s) FROM",
            "strftime() needs a constant format",
        ),
        (
            "SELECT date_diff('fortnight', t, t) FROM f",
            "'fortnight'",
            "date_diff() needs a constant part",
        ),
        (
            "SELECT date_diff('day', s, t) FROM f",
            "s, t)",
            "date_diff() needs a timestamp, but \"s\" is a string",
        ),
        (
            "SELECT x ILIKE 'a' FROM f",
            "x ILIKE",
            "ILIKE needs a string, but \"x\" is a float",
        ),
        (
            "SELECT coalesce(s, x) FROM f",
            "x) FROM",
            "coalesce() arguments have different types: string and float",
        ),
        (
            "SELECT greatest() FROM f",
            "greatest()",
            "greatest() takes at least one argument",
        ),
        (
            "SELECT left(s) FROM f",
            "left(s)",
            "left() takes 2 argument(s), found 1",
        ),
        (
            "SELECT repeat(s, 'x') FROM f",
            "'x')",
            "repeat() needs a integer, but \"'x'\" is a string",
        ),
    ] {
        match db.query(sql) {
            Err(Error::Plan { message: m, offset }) => {
                assert!(m.contains(message), "{sql}: {m}");
                let offset = offset.expect("an offset");
                assert_eq!(&sql[offset..offset + at.len()], at, "{sql}");
            }
            other => panic!("{sql}: expected a plan error, got {other:?}"),
        }
    }
}
