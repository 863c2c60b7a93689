//! The DATE type end to end (issues 32 and 34) where Rust is needed: the
//! codecs dates load into, Parquet inference, and dates and intervals out
//! as text, Arrow and Parquet. The SQL behaviour (literals, casts,
//! arithmetic, calendar functions, comparisons, grouping, intervals) is in
//! `tests/slt/dates.slt`. Expected answers are DuckDB's (checked by hand
//! with DuckDB 1.x on the same data).

mod common;

use std::sync::Arc;

use katydid::arrow_array::{Array as _, ArrayRef, Date32Array, Int64Array, RecordBatch};
use katydid::arrow_schema::{DataType as ArrowType, Field, Schema};
use katydid::{DataType, Database, DatabaseOptions, LoadOptions, ParquetOptions, Value};
use parquet::arrow::ArrowWriter;

/// Dates with a NULL; `ts` is a timestamp column beside them.
const DATA: &str = "\
id,d,ts
1,2013-09-01,2013-09-01 10:00:00
2,2013-09-05,2013-09-05 00:00:00
3,,2013-09-02 00:00:00
4,2012-02-29,2012-03-01 00:00:00
5,2013-01-31,2013-01-31 12:00:00
";

/// `DATA` loaded whole, and in partitions of one and two rows.
fn databases() -> Vec<Database> {
    [(1, 65_536), (2, 2), (2, 1)]
        .into_iter()
        .map(|(threads, rows)| common::csv_database(DATA.as_bytes(), "d", threads, rows))
        .collect()
}

/// Each row of `sql`'s result as its values' text, joined by `|`.
fn text_rows(db: &Database, sql: &str) -> Vec<String> {
    let result = db.query(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    result
        .rows
        .iter()
        .map(|r| {
            r.iter()
                .map(|v| v.to_string())
                .collect::<Vec<_>>()
                .join("|")
        })
        .collect()
}

fn types(db: &Database, sql: &str) -> Vec<DataType> {
    db.query(sql).unwrap_or_else(|e| panic!("{sql}: {e}")).types
}

#[test]
fn iso_dates_load_as_dates_in_the_integer_codecs() {
    for db in databases() {
        let described = db.query("DESCRIBE d").unwrap();
        assert_eq!(described.rows[1][0], Value::str("d"));
        assert_eq!(described.rows[1][1], Value::str("date"));
        // An integer codec (offset, dictionary, …), not strings.
        let Value::Str(encoding) = &described.rows[1][2] else {
            panic!("{:?}", described.rows[1]);
        };
        assert!(
            ["offset", "const", "linear", "delta", "dict", "rle"]
                .iter()
                .any(|c| encoding.contains(c)),
            "{encoding}"
        );
        assert_eq!(
            text_rows(&db, "SELECT d FROM d"),
            [
                "2013-09-01",
                "2013-09-05",
                "NULL",
                "2012-02-29",
                "2013-01-31"
            ]
        );
        assert_eq!(types(&db, "SELECT d FROM d"), [DataType::Date]);
    }
}

#[test]
fn dates_leave_as_text_arrow_and_parquet() {
    let db = &databases()[1];
    let arrow = db
        .query_arrow("SELECT id, d, d + 1 AS e FROM d")
        .expect("arrow");
    assert_eq!(arrow.schema.field(1).data_type(), &ArrowType::Date32);
    let days: Vec<Option<i32>> = arrow
        .batches
        .iter()
        .flat_map(|b| {
            let a = b.column(1).as_any().downcast_ref::<Date32Array>().unwrap();
            (0..a.len())
                .map(|i| a.is_valid(i).then(|| a.value(i)))
                .collect::<Vec<_>>()
        })
        .collect();
    assert_eq!(
        days,
        [Some(15_949), Some(15_953), None, Some(15_399), Some(15_736)]
    );
    // Rows made as rows (an aggregate) convert too.
    let grouped = db.query_arrow("SELECT max(d) FROM d").unwrap();
    assert_eq!(grouped.schema.field(0).data_type(), &ArrowType::Date32);
    assert_eq!(grouped.to_query_result().rows, [[Value::Date(15_953)]]);

    let dir = std::env::temp_dir().join(format!("katydid-dates-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("out.parquet");
    let quoted = path.display().to_string();
    db.query(&format!(
        "COPY (SELECT id, d FROM d ORDER BY id) TO '{quoted}'"
    ))
    .expect("copies");
    let json = dir.join("out.json");
    db.query(&format!(
        "COPY (SELECT id, d FROM d ORDER BY id) TO '{}'",
        json.display()
    ))
    .expect("copies");
    let text = std::fs::read_to_string(&json).unwrap();
    assert!(
        text.starts_with("{\"id\":1,\"d\":\"2013-09-01\"}\n"),
        "{text}"
    );
    assert!(text.contains("{\"id\":3,\"d\":null}"), "{text}");

    // Read back: the file's column is a Parquet DATE, loaded as a date.
    let mut back = Database::new(DatabaseOptions::default()).unwrap();
    back.load_parquet(
        std::slice::from_ref(&path),
        "p",
        &LoadOptions::default(),
        &ParquetOptions::default(),
    )
    .expect("loads");
    assert_eq!(types(&back, "SELECT d FROM p"), [DataType::Date]);
    assert_eq!(
        text_rows(
            &back,
            "SELECT id, d FROM p WHERE d >= '2013-01-31' ORDER BY d"
        ),
        ["5|2013-01-31", "1|2013-09-01", "2|2013-09-05"]
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn parquet_date32_columns_load_as_dates() {
    let dir = std::env::temp_dir().join(format!("katydid-date32-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("in.parquet");
    let schema = Arc::new(Schema::new(vec![
        Field::new("k", ArrowType::Int64, false),
        Field::new("day", ArrowType::Date32, true),
    ]));
    let k: ArrayRef = Arc::new(Int64Array::from(vec![1, 2, 3]));
    let day: ArrayRef = Arc::new(Date32Array::from(vec![Some(0), None, Some(-1)]));
    let batch = RecordBatch::try_new(schema.clone(), vec![k, day]).unwrap();
    let file = std::fs::File::create(&path).unwrap();
    let mut w = ArrowWriter::try_new(file, schema, None).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    let db = Database::new(DatabaseOptions::default()).unwrap();
    let sql = format!(
        "SELECT k, day, day + 1 FROM read_parquet('{}') ORDER BY k",
        path.display()
    );
    assert_eq!(
        text_rows(&db, &sql),
        [
            "1|1970-01-01|1970-01-02",
            "2|NULL|NULL",
            "3|1969-12-31|1970-01-01"
        ]
    );
    assert_eq!(types(&db, &sql)[1], DataType::Date);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn interval_columns_are_stored_and_read_back() {
    let mut db = databases().remove(1);
    db.execute("CREATE TABLE g AS SELECT id, ts - d AS gap FROM d")
        .expect("creates");
    assert_eq!(types(&db, "SELECT gap FROM g"), [DataType::Interval]);
    assert_eq!(
        text_rows(
            &db,
            "SELECT id FROM g WHERE gap >= INTERVAL '12 hours' ORDER BY id"
        ),
        ["4", "5"]
    );
    assert_eq!(
        text_rows(
            &db,
            "SELECT a.id FROM g a JOIN g b ON a.gap = b.gap + INTERVAL 2 HOUR"
        ),
        ["5"]
    );

    let arrow = db
        .query_arrow("SELECT gap FROM g ORDER BY id")
        .expect("arrow");
    assert_eq!(
        arrow.schema.field(0).data_type(),
        &ArrowType::Duration(katydid::arrow_schema::TimeUnit::Microsecond)
    );
    assert_eq!(
        arrow.to_query_result().rows[3],
        [Value::Interval(86_400_000_000)]
    );

    let dir = std::env::temp_dir().join(format!("katydid-intervals-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let json = dir.join("out.json");
    db.query(&format!(
        "COPY (SELECT id, gap FROM g ORDER BY id) TO '{}'",
        json.display()
    ))
    .expect("copies");
    let text = std::fs::read_to_string(&json).unwrap();
    assert!(
        text.starts_with("{\"id\":1,\"gap\":\"10:00:00\"}\n"),
        "{text}"
    );
    db.query(&format!(
        "COPY (SELECT id, gap FROM g) TO '{}'",
        dir.join("out.parquet").display()
    ))
    .expect("writes a Parquet duration");
    std::fs::remove_dir_all(&dir).ok();
}
