//! Scalar functions end to end through `Database::query` where Rust is
//! needed: EXPLAIN text, generated tables, and floats compared within a
//! tolerance. Functions' answers and errors on a small table are in
//! `tests/slt/functions.slt`.

mod common;

use std::path::Path;

use katydid::{Database, DatabaseOptions, LoadOptions, Value};

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
