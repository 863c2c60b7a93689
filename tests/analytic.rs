//! The analytic SQL of issue 33 that the differential test cannot compare
//! value by value: `random()` (checked by its properties), `string_agg`
//! without ORDER BY (any order of the strings is right), answers of
//! `percentile_disc … DESC` and `arg_min` ties across partitionings, and
//! the errors of the new forms with their carets.

mod common;

use katydid::{Database, Error, Value};

const DATA: &str = "\
g,a,v,s
1,w,1,x
1,x,2,y
1,y,,z
1,z,3,
2,p,5,q
2,,7,r
2,q,5,s
3,,,
";

/// The same table over 1 and 2 threads, in one partition and in
/// partitions of 1 to 3 rows.
fn databases() -> Vec<Database> {
    [(1, 65_536), (2, 1), (2, 2), (2, 3)]
        .into_iter()
        .map(|(threads, rows)| common::csv_database(DATA.as_bytes(), "t", threads, rows))
        .collect()
}

fn rows(db: &Database, sql: &str) -> Vec<Vec<Value>> {
    db.query(sql).unwrap_or_else(|e| panic!("{sql}: {e}")).rows
}

#[test]
fn random_is_a_fresh_float_in_the_unit_interval_per_row() {
    for db in databases() {
        let sql = "SELECT random() AS r, g FROM t";
        let xs: Vec<f64> = rows(&db, sql)
            .into_iter()
            .map(|r| match r[0] {
                Value::Float(x) => x,
                ref v => panic!("random() gave {v:?}"),
            })
            .collect();
        assert_eq!(xs.len(), 8);
        assert!(xs.iter().all(|x| (0.0..1.0).contains(x)), "{xs:?}");
        // Eight equal draws of 53 bits would be a broken generator.
        assert!(xs.iter().any(|&x| x != xs[0]), "{xs:?}");
        // Not folded into a constant when used in an expression, a filter
        // or an aggregate.
        let sums = rows(
            &db,
            "SELECT count(DISTINCT random() + 1), min(random()) >= 0 FROM t",
        );
        assert!(matches!(sums[0][0], Value::Int(n) if n > 1), "{sums:?}");
        assert_eq!(sums[0][1], Value::Bool(true));
        let kept = rows(&db, "SELECT count(*) FROM t WHERE random() < 2");
        assert_eq!(kept[0][0], Value::Int(8));
    }
}

#[test]
fn string_agg_without_order_joins_every_non_null_string() {
    for db in databases() {
        let got = rows(
            &db,
            "SELECT g, string_agg(a), listagg(v, ' - '), string_agg(s, '') FROM t GROUP BY g ORDER BY g",
        );
        let pieces = |v: &Value, sep: &str| -> Option<Vec<String>> {
            match v {
                Value::Null => None,
                Value::Str(s) if sep.is_empty() => {
                    let mut c: Vec<String> = s.chars().map(String::from).collect();
                    c.sort();
                    Some(c)
                }
                Value::Str(s) => {
                    let mut p: Vec<String> = s.split(sep).map(String::from).collect();
                    p.sort();
                    Some(p)
                }
                v => panic!("string_agg gave {v:?}"),
            }
        };
        let want: [(&[&str], &[&str], &[&str]); 3] = [
            (&["w", "x", "y", "z"], &["1", "2", "3"], &["x", "y", "z"]),
            (&["p", "q"], &["5", "5", "7"], &["q", "r", "s"]),
            (&[], &[], &[]),
        ];
        for (row, (a, v, s)) in got.iter().zip(want) {
            let expect = |w: &[&str]| {
                (!w.is_empty()).then(|| w.iter().map(|x| x.to_string()).collect::<Vec<_>>())
            };
            assert_eq!(pieces(&row[1], ","), expect(a), "{row:?}");
            assert_eq!(pieces(&row[2], " - "), expect(v), "{row:?}");
            assert_eq!(pieces(&row[3], ""), expect(s), "{row:?}");
        }
    }
}

/// `string_agg(DISTINCT …)`: each string once, grouped and not, with
/// and without ORDER BY; DuckDB gives the same answers (without ORDER BY
/// the order is the engine's, so those are compared as sets).
#[test]
fn string_agg_distinct_joins_each_string_once() {
    let s = |x: &str| Value::str(x);
    for db in databases() {
        assert_eq!(
            rows(
                &db,
                "SELECT g, string_agg(DISTINCT v, '|' ORDER BY v DESC) FROM t GROUP BY g ORDER BY g"
            ),
            vec![
                vec![Value::Int(1), s("3|2|1")],
                vec![Value::Int(2), s("7|5")],
                vec![Value::Int(3), Value::Null],
            ]
        );
        assert_eq!(
            rows(&db, "SELECT listagg(DISTINCT v ORDER BY v) FROM t"),
            vec![vec![s("1,2,3,5,7")]]
        );
        // Without ORDER BY: each string once, in some order.
        for (sql, want) in [
            (
                "SELECT string_agg(DISTINCT s, '') FROM t WHERE g = 2",
                vec!["q", "r", "s"],
            ),
            (
                "SELECT string_agg(DISTINCT v, '') FROM t GROUP BY g HAVING g = 2",
                vec!["5", "7"],
            ),
        ] {
            let got = rows(&db, sql);
            let Value::Str(text) = &got[0][0] else {
                panic!("{sql}: {got:?}");
            };
            let mut chars: Vec<String> = text.chars().map(String::from).collect();
            chars.sort();
            assert_eq!(chars, want, "{sql}");
        }
    }
}

#[test]
fn ordered_answers_do_not_depend_on_partitions() {
    // Answers checked against DuckDB 2.0 by hand; the same for every
    // partitioning (ties of arg_min go to the smallest argument: DuckDB
    // may give either `p` or `q` for group 2).
    let sql = "SELECT g, string_agg(a, ',' ORDER BY v DESC), arg_min(a, v), arg_max(s, v), \
               percentile_disc(0.25) WITHIN GROUP (ORDER BY v DESC), \
               percentile_cont(0.25) WITHIN GROUP (ORDER BY v DESC) \
               FROM t GROUP BY g ORDER BY g";
    let s = Value::str;
    let want = vec![
        vec![
            Value::Int(1),
            s("z,x,w,y"),
            s("w"),
            s("y"),
            Value::Int(3),
            Value::Float(2.5),
        ],
        vec![
            Value::Int(2),
            s("p,q"),
            s("p"),
            s("r"),
            Value::Int(7),
            Value::Float(6.0),
        ],
        vec![
            Value::Int(3),
            Value::Null,
            Value::Null,
            Value::Null,
            Value::Null,
            Value::Null,
        ],
    ];
    for db in databases() {
        assert_eq!(rows(&db, sql), want, "threads {}", db.threads());
    }
}

#[test]
fn errors_point_at_the_part_at_fault() {
    let db = databases().remove(0);
    for (sql, at, message) in [
        (
            "SELECT * EXCLUDE (a, nope) FROM t",
            "nope)",
            "column \"nope\" in EXCLUDE is not among the columns of *",
        ),
        (
            "SELECT * REPLACE (v + 1 AS w) FROM t",
            "w) FROM",
            "column \"w\" in REPLACE is not among the columns of *",
        ),
        (
            "SELECT * EXCLUDE (v) REPLACE (v + 1 AS v) FROM t",
            "v) FROM",
            "both excluded and replaced",
        ),
        (
            "SELECT percentile_cont(0.5) FROM t",
            "percentile_cont(",
            "percentile_cont() needs WITHIN GROUP (ORDER BY …) after it",
        ),
        (
            "SELECT percentile_disc(2) WITHIN GROUP (ORDER BY v) FROM t",
            "2)",
            "needs a constant fraction between 0 and 1",
        ),
        (
            "SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY a) FROM t",
            "a) FROM",
            "needs a number",
        ),
        (
            "SELECT string_agg(a, s) FROM t",
            "s) FROM",
            "string_agg() needs a constant string as its separator",
        ),
        (
            "SELECT string_agg(a, ',' ORDER BY v, g) FROM t",
            "g) FROM",
            "string_agg() takes one ORDER BY key",
        ),
        (
            "SELECT string_agg(DISTINCT a, ',' ORDER BY v) FROM t",
            "v) FROM",
            "string_agg(DISTINCT …) can only order by its argument (\"a\")",
        ),
        (
            "SELECT sum(v ORDER BY v) FROM t",
            "v) FROM",
            "ORDER BY inside the call applies to string_agg(), not sum()",
        ),
        (
            "SELECT count(*) WITHIN GROUP (ORDER BY v) FROM t",
            "v) FROM",
            "WITHIN GROUP applies to percentile_cont and percentile_disc",
        ),
        (
            "SELECT arg_max(a) FROM t",
            "arg_max(",
            "arg_max() takes exactly two arguments",
        ),
        (
            "SELECT arg_min(a, sum(v)) FROM t",
            "sum(",
            "aggregate functions cannot be nested",
        ),
        (
            "SELECT random(1) FROM t",
            "random(",
            "random() takes 0 argument(s)",
        ),
        (
            "SELECT g FROM t WHERE string_agg(a) = 'x'",
            "string_agg(",
            "not allowed in WHERE",
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
