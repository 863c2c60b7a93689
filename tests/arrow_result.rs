//! Results as Arrow (`Database::query_arrow`): the batches hold the rows
//! `Database::query` gives (the reference), in the documented Arrow types,
//! for scans (the columnar path: every codec's column type, NULLs, rows
//! spanning batches, filters, computed columns, empty results) and for the
//! statements answered from rows (aggregates with a sum past i64, ORDER BY,
//! LIMIT, joins, EXPLAIN).

use std::fmt::Write;
use std::path::Path;

use katydid::arrow_schema::{DataType as ArrowType, TimeUnit};
use katydid::{BATCH_ROWS, Database, DatabaseOptions, LoadOptions};

/// A database with table `t` of `rows` rows: integers, floats, strings
/// (few distinct and all distinct), timestamps and a half-NULL integer,
/// cut into partitions of 10,000 rows.
fn db(rows: usize) -> Database {
    let mut csv = String::from("id,amount,zone,name,stamp,maybe\n");
    for i in 0..rows {
        let maybe = if i % 2 == 0 {
            String::new()
        } else {
            (i % 100).to_string()
        };
        let name = if i % 7 == 3 {
            String::new()
        } else {
            format!("name é{i}")
        };
        writeln!(
            csv,
            "{i},{}.{:02},zone {},{name},2013-01-{:02} {:02}:{:02}:00,{maybe}",
            i % 500,
            i % 100,
            i % 37,
            1 + i % 28,
            i % 24,
            i % 60
        )
        .unwrap();
    }
    let mut db = Database::new(DatabaseOptions {
        threads: 2,
        memory_limit: None,
    })
    .unwrap();
    let options = LoadOptions {
        partition_rows: 10_000,
        ..LoadOptions::default()
    };
    db.load_csv_bytes(csv.into_bytes(), Path::new("t.csv"), "t", &options)
        .unwrap();
    db
}

/// Asserts that `query_arrow(sql)` gives `query(sql)`'s columns, types and
/// rows, in non-empty batches of at most `BATCH_ROWS` rows.
fn same_as_rows(db: &Database, sql: &str) -> katydid::ArrowResult {
    let rows = db.query(sql).unwrap();
    let arrow = db.query_arrow(sql).unwrap();
    let back = arrow.to_query_result();
    assert_eq!(back.columns, rows.columns, "{sql}");
    assert_eq!(back.types, rows.types, "{sql}");
    assert_eq!(back.rows.len(), rows.rows.len(), "{sql}");
    assert_eq!(back.rows, rows.rows, "{sql}");
    assert_eq!(arrow.rows, rows.rows.len(), "{sql}");
    assert_eq!(arrow.rows_scanned, rows.rows_scanned, "{sql}");
    let sizes: Vec<usize> = arrow.batches.iter().map(|b| b.num_rows()).collect();
    assert!(
        sizes.iter().all(|&n| 0 < n && n <= BATCH_ROWS),
        "{sql}: {sizes:?}"
    );
    assert_eq!(sizes.iter().sum::<usize>(), arrow.rows, "{sql}");
    for b in &arrow.batches {
        assert_eq!(b.schema(), arrow.schema, "{sql}");
    }
    arrow
}

#[test]
fn scans_become_arrow_columns_of_the_documented_types() {
    let db = db(150_000);
    let arrow = same_as_rows(&db, "SELECT * FROM t");
    assert!(arrow.batches.len() > 2);
    let types: Vec<ArrowType> = arrow
        .schema
        .fields()
        .iter()
        .map(|f| f.data_type().clone())
        .collect();
    assert_eq!(
        types,
        [
            ArrowType::Int64,
            ArrowType::Float64,
            ArrowType::Utf8,
            ArrowType::Utf8,
            ArrowType::Timestamp(TimeUnit::Microsecond, None),
            ArrowType::Int64,
        ]
    );
    assert!(arrow.schema.fields().iter().all(|f| f.is_nullable()));
    let nulls: usize = arrow.batches.iter().map(|b| b.column(5).null_count()).sum();
    assert_eq!(nulls, 75_000);
    let slice = arrow.rows(BATCH_ROWS - 2..BATCH_ROWS + 3);
    assert_eq!(
        slice,
        db.query("SELECT * FROM t").unwrap().rows[BATCH_ROWS - 2..BATCH_ROWS + 3]
    );
    // Filters, computed and constant columns, booleans, and no row.
    same_as_rows(
        &db,
        "SELECT id * 2 AS twice, upper(zone) AS z, maybe > 50 AS big, NULL AS nothing, 'x' AS k, \
         stamp FROM t WHERE amount > 250 OR name IS NULL",
    );
    same_as_rows(
        &db,
        "SELECT name, maybe FROM t WHERE maybe IS NOT NULL AND id % 3 = 0",
    );
    let empty = same_as_rows(&db, "SELECT id, zone, stamp FROM t WHERE id < 0");
    assert_eq!(empty.rows, 0);
    assert_eq!(empty.schema.fields().len(), 3);
    assert!(empty.batches.is_empty());
}

#[test]
fn results_made_as_rows_convert_too() {
    let mut db = db(20_000);
    db.load_csv_bytes(
        b"v\n9000000000000000000\n9000000000000000000\n-5\n".to_vec(),
        Path::new("big.csv"),
        "big",
        &LoadOptions::default(),
    )
    .unwrap();
    same_as_rows(
        &db,
        "SELECT zone, count(*) AS n, avg(amount) AS a, max(stamp) AS last FROM t GROUP BY zone ORDER BY zone",
    );
    same_as_rows(
        &db,
        "SELECT * FROM t ORDER BY amount DESC, id LIMIT 1000 OFFSET 3",
    );
    same_as_rows(
        &db,
        "SELECT a.id, b.zone FROM t a JOIN t b ON a.id = b.maybe WHERE a.id < 50",
    );
    same_as_rows(&db, "EXPLAIN SELECT count(*) FROM t");
    same_as_rows(&db, "SHOW TABLES");
    // An exact integer sum past i64 is a 38-digit decimal.
    let huge = same_as_rows(&db, "SELECT sum(v) AS s, count(*) AS n FROM big");
    assert!(matches!(huge.rows(0..1)[0][0], katydid::Value::HugeInt(_)));
    assert_eq!(
        huge.schema.field(0).data_type(),
        &ArrowType::Decimal128(38, 0)
    );
}
