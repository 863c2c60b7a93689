//! The DATE type end to end (issues 32 and 34): CSV and Parquet inference,
//! literals and casts, arithmetic, calendar functions, comparisons with
//! timestamps, grouping and ordering, and dates out as text, Arrow and
//! Parquet; and INTERVAL, what timestamp − timestamp gives. Expected
//! answers are DuckDB's (checked by hand with DuckDB
//! 1.x on the same data).

mod common;

use std::sync::Arc;

use katydid::arrow_array::{Array as _, ArrayRef, Date32Array, Int64Array, RecordBatch};
use katydid::arrow_schema::{DataType as ArrowType, Field, Schema};
use katydid::{DataType, Database, DatabaseOptions, Error, LoadOptions, ParquetOptions, Value};
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

fn plan_error(db: &Database, sql: &str) -> (String, usize) {
    match db.query(sql) {
        Err(Error::Plan { message, offset }) => (message, offset.unwrap_or(usize::MAX)),
        other => panic!("{sql}: expected a plan error, got {other:?}"),
    }
}

fn load(csv: &str, partition_rows: usize) -> Database {
    common::csv_database(csv.as_bytes(), "x", 2, partition_rows)
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
fn a_column_of_dates_and_timestamps_is_timestamps_and_invalid_dates_are_text() {
    // Across partitions too: a span of dates conforms to the timestamps of
    // another span as their midnights.
    for rows in [65_536, 1, 2] {
        let db = load("x\n2013-01-01\n2013-01-02\n2013-01-01 10:00:00\n", rows);
        assert_eq!(types(&db, "SELECT x FROM x"), [DataType::Timestamp]);
        assert_eq!(
            text_rows(&db, "SELECT x FROM x"),
            [
                "2013-01-01 00:00:00",
                "2013-01-02 00:00:00",
                "2013-01-01 10:00:00"
            ]
        );
        // 2013-02-30 is no date: DuckDB's sniffer makes the column VARCHAR.
        let db = load("x\n2013-01-01\n2013-02-30\n", rows);
        assert_eq!(types(&db, "SELECT x FROM x"), [DataType::Str]);
        assert_eq!(
            text_rows(&db, "SELECT x FROM x"),
            ["2013-01-01", "2013-02-30"]
        );
        let db = load("x\n\n2013-01-01\n\n", rows);
        assert_eq!(types(&db, "SELECT x FROM x"), [DataType::Date]);
        let db = load("x\n2013-01-01\n5\n", rows);
        assert_eq!(types(&db, "SELECT x FROM x"), [DataType::Str]);
    }
}

#[test]
fn literals_and_casts() {
    let db = &databases()[0];
    let sql = "SELECT DATE '2013-09-01', CAST('2013-09-01' AS DATE), '2013-09-01'::date, \
               CAST(TIMESTAMP '2013-09-01 10:00:00' AS DATE), CAST(DATE '2013-09-01' AS TIMESTAMP), \
               CAST(DATE '2013-09-01' AS VARCHAR), CAST('2013-09-01 23:59:59' AS DATE), \
               TRY_CAST('2013-02-30' AS DATE), CAST(NULL AS DATE)";
    assert_eq!(
        text_rows(db, sql),
        [
            "2013-09-01|2013-09-01|2013-09-01|2013-09-01|2013-09-01 00:00:00|2013-09-01|2013-09-01|NULL|NULL"
        ]
    );
    assert_eq!(types(db, "SELECT DATE '2013-09-01'"), [DataType::Date]);
    // Before the epoch: days count down.
    assert_eq!(
        text_rows(db, "SELECT DATE '1969-12-31' + 1, DATE '1600-02-29' - 1"),
        ["1970-01-01|1600-02-28"]
    );
    match db.query("SELECT CAST('2013-02-30' AS DATE)") {
        Err(Error::Execution(m)) => assert!(m.contains("2013-02-30"), "{m}"),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        text_rows(db, "SELECT CAST(ts AS DATE) FROM d WHERE id = 1"),
        ["2013-09-01"]
    );
}

#[test]
fn date_arithmetic_follows_duckdb() {
    for db in databases() {
        let sql = "SELECT d + 3, d - 1, 3 + d, d - DATE '2013-01-01', d + INTERVAL '3' DAY, \
                   d + INTERVAL 3 HOUR, d + INTERVAL '1' MONTH, d - INTERVAL 1 YEAR FROM d";
        assert_eq!(
            text_rows(&db, sql),
            [
                "2013-09-04|2013-08-31|2013-09-04|243|2013-09-04 00:00:00|2013-09-01 03:00:00|2013-10-01 00:00:00|2012-09-01 00:00:00",
                "2013-09-08|2013-09-04|2013-09-08|247|2013-09-08 00:00:00|2013-09-05 03:00:00|2013-10-05 00:00:00|2012-09-05 00:00:00",
                "NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL",
                "2012-03-03|2012-02-28|2012-03-03|-307|2012-03-03 00:00:00|2012-02-29 03:00:00|2012-03-29 00:00:00|2011-02-28 00:00:00",
                "2013-02-03|2013-01-30|2013-02-03|30|2013-02-03 00:00:00|2013-01-31 03:00:00|2013-02-28 00:00:00|2012-01-31 00:00:00",
            ]
        );
        assert_eq!(
            types(&db, sql),
            [
                DataType::Date,
                DataType::Date,
                DataType::Date,
                DataType::Int,
                DataType::Timestamp,
                DataType::Timestamp,
                DataType::Timestamp,
                DataType::Timestamp
            ]
        );
        // Months on a timestamp column, by the calendar.
        assert_eq!(
            text_rows(
                &db,
                "SELECT ts + INTERVAL '1' MONTH FROM d WHERE id IN (4, 5)"
            ),
            ["2012-04-01 00:00:00", "2013-02-28 12:00:00"]
        );
        // TPC-H's constant form folds to a constant.
        assert_eq!(
            text_rows(&db, "SELECT DATE '1994-01-01' + INTERVAL '1' YEAR"),
            ["1995-01-01 00:00:00"]
        );
    }
    let db = &databases()[0];
    let (m, at) = plan_error(db, "SELECT d + d FROM d");
    assert!(m.contains("date and date"), "{m}");
    assert_eq!(at, 7);
    let (m, _) = plan_error(db, "SELECT d * 2 FROM d");
    assert!(m.contains("date"), "{m}");
    let (m, _) = plan_error(db, "SELECT 1 - d FROM d");
    assert!(m.contains("integer and date"), "{m}");
}

#[test]
fn calendar_functions_take_dates() {
    for db in databases() {
        let sql = "SELECT extract(year FROM d), month(d), day(d), date_part('dow', d), \
                   extract(doy FROM d), date_trunc('month', d), year(d), strftime(d, '%Y/%m'), \
                   date_diff('day', d, DATE '2014-01-01') FROM d";
        assert_eq!(
            text_rows(&db, sql),
            [
                "2013|9|1|0|244|2013-09-01 00:00:00|2013|2013/09|122",
                "2013|9|5|4|248|2013-09-01 00:00:00|2013|2013/09|118",
                "NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL",
                "2012|2|29|3|60|2012-02-01 00:00:00|2012|2012/02|672",
                "2013|1|31|4|31|2013-01-01 00:00:00|2013|2013/01|335",
            ]
        );
    }
}

#[test]
fn dates_compare_with_timestamps_at_midnight_and_with_strings() {
    for db in databases() {
        let count = |sql: &str| text_rows(&db, sql).join(",");
        assert_eq!(count("SELECT count(*) FROM d WHERE d = ts"), "1");
        assert_eq!(count("SELECT count(*) FROM d WHERE d < ts"), "3");
        assert_eq!(count("SELECT count(*) FROM d WHERE ts >= d"), "4");
        assert_eq!(
            count("SELECT id FROM d WHERE d >= '2013-01-31' ORDER BY id"),
            "1,2,5"
        );
        assert_eq!(
            count("SELECT id FROM d WHERE d > '2013-01-31 12:00:00' ORDER BY id"),
            "1,2"
        );
        assert_eq!(
            count("SELECT id FROM d WHERE d < TIMESTAMP '2013-09-01 00:00:01' ORDER BY id"),
            "1,4,5"
        );
        assert_eq!(
            count("SELECT id FROM d WHERE d >= DATE '2013-01-01' + INTERVAL '1' MONTH ORDER BY id"),
            "1,2"
        );
        // A string is cast to a date, a timestamp's text to its day (as
        // DuckDB does); a timestamp in the list widens the date to its
        // midnight for every item.
        assert_eq!(
            count(
                "SELECT id FROM d WHERE d IN ('2013-09-01', DATE '2012-02-29', '2013-01-31 12:00:00') ORDER BY id"
            ),
            "1,4,5"
        );
        assert_eq!(
            count(
                "SELECT id FROM d WHERE d IN (DATE '2013-09-01', TIMESTAMP '2013-01-31 12:00:00', DATE '2012-02-29') ORDER BY id"
            ),
            "1,4"
        );
        assert_eq!(
            count(
                "SELECT id FROM d WHERE d BETWEEN '2013-01-31' AND '2013-09-01 00:00:01' ORDER BY id"
            ),
            "1,5"
        );
        assert_eq!(
            count("SELECT greatest(d, ts) FROM d WHERE id = 1"),
            "2013-09-01 10:00:00"
        );
    }
    let (m, at) = plan_error(
        &databases()[0],
        "SELECT count(*) FROM d WHERE d > '2013-13-01'",
    );
    assert!(m.contains("2013-13-01"), "{m}");
    assert_eq!(at, 29);
}

#[test]
fn dates_group_order_and_aggregate() {
    for db in databases() {
        assert_eq!(
            text_rows(
                &db,
                "SELECT min(d), max(d), count(DISTINCT d), count(d) FROM d"
            ),
            ["2012-02-29|2013-09-05|4|4"]
        );
        assert_eq!(
            text_rows(&db, "SELECT d, count(*) FROM d GROUP BY d ORDER BY d DESC"),
            [
                "2013-09-05|1",
                "2013-09-01|1",
                "2013-01-31|1",
                "2012-02-29|1",
                "NULL|1"
            ]
        );
        assert_eq!(
            text_rows(
                &db,
                "SELECT year(d), max(d) FROM d GROUP BY 1 ORDER BY 1 NULLS FIRST"
            ),
            ["NULL|NULL", "2012|2012-02-29", "2013|2013-09-05"]
        );
        assert_eq!(
            text_rows(&db, "SELECT id FROM d ORDER BY d, id LIMIT 2"),
            ["4", "5"]
        );
        // DuckDB's median of dates is a timestamp.
        assert_eq!(
            text_rows(&db, "SELECT median(d) FROM d"),
            ["2013-05-17 12:00:00"]
        );
        assert_eq!(
            text_rows(
                &db,
                "SELECT a.id, b.id FROM d a JOIN d b ON a.d = b.d - 4 ORDER BY 1"
            ),
            ["1|2"]
        );
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

/// Windows over dates: a text `lag` default is cast to a date, a
/// continuous quantile of dates is a timestamp (a time of day between two
/// dates), a discrete one a date. DuckDB's answers.
#[test]
fn windows_over_dates() {
    for db in databases() {
        assert_eq!(
            text_rows(
                &db,
                "SELECT id, lag(d, 1, '2000-01-01') OVER (ORDER BY id), median(d) OVER (), quantile_disc(d, 0.25) OVER () FROM d ORDER BY id"
            ),
            [
                "1|2000-01-01|2013-05-17 12:00:00|2012-02-29",
                "2|2013-09-01|2013-05-17 12:00:00|2012-02-29",
                "3|2013-09-05|2013-05-17 12:00:00|2012-02-29",
                "4|NULL|2013-05-17 12:00:00|2012-02-29",
                "5|2012-02-29|2013-05-17 12:00:00|2012-02-29",
            ]
        );
    }
}

#[test]
fn timestamp_minus_timestamp_is_an_interval() {
    for db in databases() {
        // A date is its midnight: ts − d is the time of day, and a day
        // for the leap-day row whose ts is the next midnight.
        assert_eq!(
            types(&db, "SELECT id, ts - d FROM d"),
            [DataType::Int, DataType::Interval]
        );
        assert_eq!(
            text_rows(&db, "SELECT id, ts - d FROM d ORDER BY id"),
            [
                "1|10:00:00",
                "2|00:00:00",
                "3|NULL",
                "4|1 day",
                "5|12:00:00"
            ]
        );
        assert_eq!(
            text_rows(
                &db,
                "SELECT d - ts FROM d WHERE id = 1 OR id = 4 ORDER BY id"
            ),
            ["-10:00:00", "-1 day"]
        );
        assert_eq!(
            text_rows(
                &db,
                "SELECT extract(epoch FROM ts - d), extract(hour FROM ts - d), \
                 date_part('day', ts - d), epoch(ts - d) FROM d WHERE id >= 4 ORDER BY id"
            ),
            ["86400|0|1|86400", "43200|12|0|43200"]
        );
        assert_eq!(
            text_rows(
                &db,
                "SELECT extract(minute FROM INTERVAL '-2 hours 3 minutes'), \
                 extract(second FROM INTERVAL 754 SECOND), \
                 extract(millisecond FROM INTERVAL 754 SECOND)"
            ),
            ["-57|34|34000"]
        );
    }
}

#[test]
fn interval_arithmetic_and_aggregates() {
    for db in databases() {
        assert_eq!(
            text_rows(
                &db,
                "SELECT (ts - d) * 2, (ts - d) / 3, (ts - d) * 1.5, -(ts - d) FROM d WHERE id = 1"
            ),
            ["20:00:00|03:20:00|15:00:00|-10:00:00"]
        );
        // A date or timestamp moved by an interval column is a timestamp.
        assert_eq!(
            text_rows(
                &db,
                "SELECT count(*), count(*) FILTER (WHERE ts - (ts - d) = d) FROM d \
                 WHERE d + (ts - d) = ts"
            ),
            ["4|4"]
        );
        assert_eq!(
            text_rows(
                &db,
                "SELECT ts + INTERVAL (id) HOUR, ts - INTERVAL (id * 2) MINUTE FROM d WHERE id = 2"
            ),
            ["2013-09-05 02:00:00|2013-09-04 23:56:00"]
        );
        assert_eq!(
            text_rows(
                &db,
                "SELECT id FROM d WHERE ts - d > INTERVAL 11 HOUR ORDER BY id"
            ),
            ["4", "5"]
        );
        assert_eq!(
            text_rows(
                &db,
                "SELECT sum(ts - d), avg(ts - d), min(ts - d), max(ts - d), count(ts - d) FROM d"
            ),
            ["1 day 22:00:00|11:30:00|00:00:00|1 day|4"]
        );
        assert_eq!(
            types(&db, "SELECT sum(ts - d), avg(ts - d), max(ts - d) FROM d"),
            [DataType::Interval; 3]
        );
        assert_eq!(
            text_rows(
                &db,
                "SELECT id % 2 AS odd, sum(ts - d) FROM d GROUP BY odd ORDER BY odd"
            ),
            ["0|1 day", "1|22:00:00"]
        );
        assert_eq!(
            text_rows(&db, "SELECT id FROM d ORDER BY ts - d DESC NULLS LAST, id"),
            ["4", "5", "1", "2", "3"]
        );
        assert_eq!(
            text_rows(
                &db,
                "SELECT CAST('1 day 2 hours' AS INTERVAL), CAST(ts - d AS VARCHAR) FROM d \
                 WHERE id = 4"
            ),
            ["1 day 02:00:00|1 day"]
        );
    }
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

#[test]
fn interval_errors_point_at_the_operand() {
    let db = &databases()[0];
    let (message, at) = plan_error(db, "SELECT extract(week FROM ts - d) FROM d");
    assert!(message.contains("of an interval takes epoch"), "{message}");
    assert_eq!(at, 25);
    let (message, _) = plan_error(db, "SELECT ts - d + 1 FROM d");
    assert!(
        message.contains("cannot apply \"+\" to interval and integer"),
        "{message}"
    );
    let err = db
        .query("SELECT INTERVAL (id) MONTH FROM d")
        .expect_err("months of a column");
    assert!(err.to_string().contains("constant whole number"), "{err}");
}
