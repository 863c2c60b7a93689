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
