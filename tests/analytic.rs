//! The analytic SQL of issue 33 that neither the differential test nor an
//! `.slt` file can compare value by value: `random()` (checked by its
//! properties) and `string_agg` without ORDER BY (any order of the strings
//! is right). The answers with one right order and the errors are in
//! `tests/slt/analytic.slt`.

mod common;

use katydid::{Database, Value};

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

/// `string_agg(DISTINCT …)` without ORDER BY: each string once, in some
/// order (DuckDB's order is the engine's too, so these are compared as
/// sets; the ordered forms are in `tests/slt/analytic.slt`).
#[test]
fn string_agg_distinct_joins_each_string_once() {
    for db in databases() {
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
