//! Statements end to end through `Database::query`: extreme LIMIT and
//! OFFSET, CAST rounding, and (further down) the introspection statements
//! and files queried as tables.

use std::path::Path;

use katydid::plan::plan_select;
use katydid::sql::ast::Statement;
use katydid::sql::parse;
use katydid::{Database, DatabaseOptions, LoadOptions, Value};

fn database(csv: &str, partition_rows: usize) -> Database {
    let mut db = Database::new(DatabaseOptions {
        threads: 2,
        ..Default::default()
    })
    .expect("thread pool");
    let options = LoadOptions {
        partition_rows,
        ..LoadOptions::default()
    };
    db.load_csv_bytes(csv.as_bytes().to_vec(), Path::new("t.csv"), "t", &options)
        .expect("loads");
    db
}

const NUMBERS: &str = "a,x\n3,2.5\n1,3.5\n2,-2.5\n5,-3.5\n4,0.5\n";

#[test]
fn limit_and_offset_up_to_the_largest_integers_parse_and_plan() {
    let db = database(NUMBERS, 2);
    let cases = [
        (
            "SELECT a FROM t ORDER BY a LIMIT 9223372036854775807",
            Some(i64::MAX),
            0,
            "TopN (n = 9223372036854775807)",
        ),
        (
            "SELECT a FROM t ORDER BY a LIMIT 10 OFFSET 92233720775807",
            Some(10),
            92_233_720_775_807,
            "TopN (n = 92233720775817)",
        ),
        (
            "SELECT a FROM t ORDER BY a LIMIT 9223372036854775807 OFFSET 18446744073709551615",
            Some(i64::MAX),
            u64::MAX,
            "TopN (n = 18446744073709551615)",
        ),
        (
            "SELECT a, count(*) FROM t GROUP BY a ORDER BY 2 LIMIT 9223372036854775807 OFFSET 9223372036854775807",
            Some(i64::MAX),
            i64::MAX as u64,
            "Limit: 9223372036854775807 offset 9223372036854775807",
        ),
        (
            "SELECT a FROM t LIMIT -9223372036854775808",
            Some(i64::MIN),
            0,
            "last 9223372036854775808 rows",
        ),
    ];
    for (sql, limit, offset, shown) in cases {
        let Statement::Select(select) = parse(sql).unwrap_or_else(|e| panic!("{sql}: {e}")) else {
            panic!("{sql}: not a SELECT");
        };
        let plan = plan_select(&select, sql, &db).unwrap_or_else(|e| panic!("{sql}: {e}"));
        assert_eq!((plan.limit, plan.offset), (limit, offset), "{sql}");
        assert!(
            plan.describe().contains(shown),
            "{sql}: {}",
            plan.describe()
        );
    }
    // Without ORDER BY the rows come straight from the scan.
    for (sql, rows) in [
        ("SELECT a FROM t LIMIT 9223372036854775807", 5),
        ("SELECT a FROM t LIMIT 9223372036854775807 OFFSET 2", 3),
        ("SELECT a FROM t OFFSET 18446744073709551615", 0),
        ("SELECT a FROM t LIMIT -9223372036854775808", 5),
    ] {
        let result = db.query(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
        assert_eq!(result.rows.len(), rows, "{sql}");
    }
}

#[test]
fn cast_of_a_float_to_an_integer_rounds_half_to_even() {
    let db = database(NUMBERS, 2);
    let rows = db
        .query("SELECT CAST(x AS integer), x::bigint, CAST(2.5 AS int) FROM t")
        .unwrap()
        .rows;
    let expected = [2, 4, -2, -4, 0];
    for (r, e) in rows.iter().zip(expected) {
        assert_eq!(r[..2], [Value::Int(e), Value::Int(e)]);
        assert_eq!(r[2], Value::Int(2));
    }
}
