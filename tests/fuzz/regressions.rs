//! Regression tests for what the fuzzers found, one per bug, each named
//! after what broke.

use std::path::Path;

use katydid::{Database, DatabaseOptions, Error, LoadOptions, Value};

/// A database with table `t(u, g)`: `u` is 1..=6, `g` cycles a, b, c; two
/// rows per partition.
fn db() -> Database {
    let mut db = Database::new(DatabaseOptions {
        threads: 2,
        memory_limit: None,
    })
    .unwrap();
    let csv = "u,g\n1,a\n2,b\n3,c\n4,a\n5,b\n6,c\n";
    let options = LoadOptions {
        partition_rows: 2,
        ..LoadOptions::default()
    };
    db.load_csv_bytes(csv.as_bytes().to_vec(), Path::new("t.csv"), "t", &options)
        .unwrap();
    db
}

fn ints(rows: &[Vec<Value>], column: usize) -> Vec<i64> {
    rows.iter()
        .map(|r| match r[column] {
            Value::Int(n) => n,
            ref v => panic!("not an integer: {v:?}"),
        })
        .collect()
}

/// Found by the query fuzzer: an aggregate only in ORDER BY left the query
/// planned as a plain scan, and evaluating `count(*)` per row failed with
/// `internal error: aggregate evaluated as a scalar expression`. Like
/// PostgreSQL, such a query is an aggregate (one group without keys, or
/// grouped by the select list's plain expressions).
#[test]
fn an_aggregate_only_in_order_by_makes_the_query_an_aggregate() {
    let db = db();
    let r = db.query("SELECT 1 FROM t ORDER BY count(*)").unwrap();
    assert_eq!(r.rows, vec![vec![Value::Int(1)]]);
    let r = db
        .query("SELECT g FROM t WHERE u <> 1 ORDER BY count(*), g")
        .unwrap();
    assert_eq!(
        r.rows,
        vec![
            vec![Value::str("a")],
            vec![Value::str("b")],
            vec![Value::str("c")]
        ]
    );
    let err = db.query("SELECT 1 FROM t ORDER BY min(u), g").unwrap_err();
    assert!(
        err.to_string()
            .contains("must appear in the GROUP BY clause"),
        "{err}"
    );
}

/// Found while reading the binder for the bug above: `ORDER BY alias`
/// took the alias's position in the written select list, so after a `*`
/// it sorted by one of the table's columns instead of the alias.
#[test]
fn order_by_an_alias_after_a_star_sorts_by_the_alias() {
    let db = db();
    let r = db
        .query("SELECT *, -u AS x FROM t ORDER BY x LIMIT 3")
        .unwrap();
    assert_eq!(r.columns, ["u", "g", "x"]);
    assert_eq!(ints(&r.rows, 2), [-6, -5, -4]);
    let r = db
        .query("SELECT *, *, -u AS x FROM t ORDER BY x DESC")
        .unwrap();
    assert_eq!(ints(&r.rows, 4), [-1, -2, -3, -4, -5, -6]);
}

/// Found by the query fuzzer: the preview's total came from a `count(*)`
/// query that kept the OFFSET, which skipped its one row, so a preview
/// with an OFFSET said there were 0 rows in all next to the rows it showed.
#[test]
fn a_preview_with_an_offset_counts_the_rows_after_it() {
    let db = db();
    let p = db
        .query_preview("SELECT u FROM t ORDER BY u OFFSET 2", 3)
        .unwrap();
    assert_eq!(ints(&p.result.rows, 0), [3, 4, 5]);
    assert_eq!(p.total_rows, 4);
    let p = db
        .query_preview("SELECT u FROM t LIMIT 3 OFFSET 5", 10)
        .unwrap();
    assert_eq!(ints(&p.result.rows, 0), [6]);
    assert_eq!(p.total_rows, 1);
}

/// Found by the loader fuzzer: a header of a million delimiters made a
/// column builder for each of a million columns per partition, one
/// allocation of 264 MiB from a 1 MiB line (and gigabytes from a longer
/// one); the fuzz binary's allocator refuses such a request, so this test
/// fails by aborting if the limit goes.
#[test]
fn a_line_of_a_million_delimiters_is_refused_before_allocating_columns() {
    let mut db = db();
    let mut text = ",".repeat(1 << 20);
    text.push_str("\n1\n");
    for header in [true, false] {
        let options = LoadOptions {
            header,
            ..LoadOptions::default()
        };
        let err = db
            .load_csv_bytes(
                text.clone().into_bytes(),
                Path::new("wide.csv"),
                "w",
                &options,
            )
            .unwrap_err();
        match &err {
            Error::Csv { line, message, .. } => {
                assert_eq!(*line, 1, "{err}");
                assert!(message.contains("columns"), "{err}");
            }
            other => panic!("expected a CSV error, got {other}"),
        }
    }
    // A wide table within the limit still loads.
    let wide = format!(
        "{}\n{}\n",
        vec!["c"; 2000].join(","),
        vec!["1"; 2000].join(",")
    );
    let stats = db
        .load_csv_bytes(
            wide.into_bytes(),
            Path::new("wide.csv"),
            "w",
            &LoadOptions::default(),
        )
        .unwrap();
    assert_eq!(stats.columns, 2000);
}

/// Found by the loader fuzzer: the first span's buffer was reserved as the
/// mean length of the lines read so far times the span's 65,536 records,
/// so a 1 MiB line among two short ones asked for 72 GiB at once (the fuzz
/// binary's allocator refuses that, so this test fails by aborting if the
/// cap goes). The load succeeds and keeps the long value.
#[test]
fn a_long_line_among_few_does_not_size_the_first_span() {
    let mut db = db();
    let long = "x".repeat(3 << 20);
    let text = format!("a,b\n1,2\n{long},3\n4,5\n");
    let stats = db
        .load_csv_bytes(
            text.into_bytes(),
            Path::new("long.csv"),
            "long",
            &LoadOptions::default(),
        )
        .unwrap();
    assert_eq!(stats.rows, 3);
    let r = db
        .query("SELECT length(a), b FROM long WHERE b = 3")
        .unwrap();
    assert_eq!(r.rows, vec![vec![Value::Int(3 << 20), Value::Int(3)]]);
}

/// Found by the loader fuzzer: two fields that are not UTF-8 on their own
/// ("\xf0\x9f" and "\x98\x88", an emoji cut by a line break) passed the
/// check of a string column's distinct texts, which looked at them joined,
/// and the load failed with `internal error: text is not utf-8 after
/// validation` instead of naming the line.
#[test]
fn halves_of_a_character_in_two_fields_are_invalid_utf8_on_their_line() {
    let mut db = db();
    for (text, header, line) in [
        (&b"\xf0\x9f\n\x98\x88\n"[..], false, 1),
        (b"a\n\xf0\x9f\r\n\r\n\x98\x88\n", true, 2),
        (b"a,b\n1,\xf0\x9f\n2,\x98\x88\n", true, 2),
    ] {
        let options = LoadOptions {
            header,
            ..LoadOptions::default()
        };
        let err = db
            .load_csv_bytes(text.to_vec(), Path::new("cut.csv"), "cut", &options)
            .unwrap_err();
        match &err {
            Error::Csv {
                line: l, message, ..
            } => {
                assert_eq!((*l, message.as_str()), (line, "invalid utf-8"), "{err}")
            }
            other => panic!("expected a CSV error, got {other}"),
        }
    }
}

/// Found by the query fuzzer: `date_trunc` of a timestamp within a month of
/// the earliest representable one (reached with `ts - INTERVAL …`)
/// overflowed i64 while computing the start of the unit: a panic in debug
/// builds, a wrong timestamp in release builds. It is now an error.
#[test]
fn date_trunc_before_the_first_representable_timestamp_is_an_error() {
    let db = db();
    for unit in ["second", "hour", "day", "month", "year"] {
        let sql = format!(
            "SELECT date_trunc('{unit}', CAST('1970-01-01' AS TIMESTAMP) - INTERVAL '9223372036854775807 us') FROM t"
        );
        let err = db.query(&sql).unwrap_err();
        assert_eq!(err.to_string(), "timestamp out of range", "{sql}");
    }
    // Over a column, through the vectorized path and its fallback.
    let mut db = db;
    let csv = "ts\n1970-01-01\n2013-09-01 12:34:56\n";
    db.load_csv_bytes(
        csv.as_bytes().to_vec(),
        Path::new("ts.csv"),
        "ts",
        &LoadOptions::default(),
    )
    .unwrap();
    let err = db
        .query("SELECT date_trunc('month', ts - INTERVAL '9223372036854775807 us') FROM ts")
        .unwrap_err();
    assert_eq!(err.to_string(), "timestamp out of range");
    let r = db
        .query("SELECT date_trunc('month', ts - INTERVAL '106751 days') FROM ts")
        .unwrap();
    assert_eq!(r.rows.len(), 2);
}

/// Found by the query fuzzer: `GROUP BY alias` where the alias names an
/// expression with an aggregate grouped on the aggregate, which then failed
/// with `internal error: aggregate evaluated as a scalar expression`.
#[test]
fn group_by_an_alias_of_an_aggregate_is_a_plan_error() {
    let db = db();
    for sql in [
        "SELECT g, count(*) AS n FROM t GROUP BY n",
        "SELECT g, count(*) + 1 AS n FROM t GROUP BY g, n",
        "SELECT g, sum(u) AS n FROM t GROUP BY n + 1",
    ] {
        let err = db.query(sql).unwrap_err();
        assert!(
            matches!(err, Error::Plan { .. })
                && err
                    .to_string()
                    .contains("refers to an aggregate, which GROUP BY cannot use"),
            "{sql}: {err}"
        );
    }
}

/// Found by the loader fuzzer: `SUMMARIZE` over a 47,000-column table ran
/// 28 s (release) before answering. Its generated query has about five
/// aggregates per column, and the binder deduplicated aggregates and found
/// columns by linear search, O(n²) in columns. Both are hashed now
/// (`plan::dedup`); this checks that the wide summary is still right, each
/// column once, in order, and that duplicate aggregates still share a
/// result.
#[test]
fn summarize_of_a_wide_table_lists_every_column_once() {
    let mut db = db();
    let n = 5000;
    let names: Vec<String> = (0..n).map(|i| format!("c{i}")).collect();
    let values: Vec<String> = (0..n).map(|i| i.to_string()).collect();
    let csv = format!(
        "{}\n{}\n{}\n",
        names.join(","),
        values.join(","),
        values.join(",")
    );
    db.load_csv_bytes(
        csv.into_bytes(),
        Path::new("wide.csv"),
        "w",
        &LoadOptions {
            partition_rows: 1,
            ..LoadOptions::default()
        },
    )
    .unwrap();
    let r = db.query("SUMMARIZE w").unwrap();
    assert_eq!(r.rows.len(), n);
    for (i, row) in r.rows.iter().enumerate() {
        assert_eq!(row[0], Value::str(&format!("c{i}")));
        // min and max are the column's value, shown as text.
        assert_eq!(row[3], Value::str(&i.to_string()), "{row:?}");
        assert_eq!(row[4], Value::str(&i.to_string()), "{row:?}");
    }
    let r = db
        .query("SELECT sum(c7), sum(c7) + 1, C4999 FROM w GROUP BY c4999")
        .unwrap();
    assert_eq!(
        r.rows,
        vec![vec![Value::Int(14), Value::Int(15), Value::Int(4999)]]
    );
}

/// Found by the loader fuzzer: a quote inside a character
/// (`"\xf0\x9f\x98"\x88"`, the field `😈"`: csv reads on after a closing
/// quote) leaves every field UTF-8 but not the span's bytes, and a column
/// that turned into strings after numbers is read again from the span's
/// text, which failed with `internal error: a parsed span is not utf-8`.
/// Such a span's fields are copied instead.
#[test]
fn a_quote_inside_a_character_loads_the_field_it_makes() {
    let mut db = db();
    for partition_rows in [2, 100] {
        let mut csv = b"a,b\n1,x\n2,y\n".to_vec();
        csv.extend_from_slice(b"\"\xf0\x9f\x98\"\x88\",z\n");
        let options = LoadOptions {
            partition_rows,
            ..LoadOptions::default()
        };
        let name = format!("q{partition_rows}");
        db.load_csv_bytes(csv, Path::new("q.csv"), &name, &options)
            .unwrap();
        let r = db.query(&format!("SELECT a, b FROM {name}")).unwrap();
        assert_eq!(
            r.rows,
            vec![
                vec![Value::str("1"), Value::str("x")],
                vec![Value::str("2"), Value::str("y")],
                vec![Value::str("😈\""), Value::str("z")],
            ],
            "partition_rows {partition_rows}"
        );
    }
}
