//! The session survives what a user does to it (issue "never lose the
//! session"): a group-by past the memory limit fails with a message that
//! says what needed how much, a cancelled query stops and keeps every table,
//! a sink that stops early stops the query, and extreme LIMIT/OFFSET values
//! answer. Each test then checks that the tables are still there and
//! queries still run.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use katydid::{
    DataType, Database, DatabaseOptions, Error, LoadOptions, ProgressUnit, RowSink, Value,
};

/// A table `t` of `rows` rows: `id` unique, `g` in 0..100, `s` a string.
fn database(rows: usize, partition_rows: usize) -> Database {
    let mut csv = String::from("id,g,s\n");
    for i in 0..rows {
        csv.push_str(&format!("{i},{},name{}\n", i % 100, i % 1000));
    }
    let mut db = Database::new(DatabaseOptions {
        threads: 2,
        ..Default::default()
    })
    .unwrap();
    let options = LoadOptions {
        partition_rows,
        ..LoadOptions::default()
    };
    db.load_csv_bytes(csv.into_bytes(), Path::new("t.csv"), "t", &options)
        .unwrap();
    db
}

fn count(db: &Database) -> i64 {
    match db.query("SELECT count(*) FROM t").unwrap().rows[0][0] {
        Value::Int(n) => n,
        ref v => panic!("count(*) gave {v:?}"),
    }
}

#[test]
fn a_group_by_past_the_memory_limit_fails_clearly_and_the_session_goes_on() {
    let db = database(200_000, 20_000);
    let used = db.memory().used();
    // Room for the table and a little more, not for 200,000 distinct-count
    // sets.
    db.set_memory_limit(used + 256 * 1024);
    let err = db
        .query("SELECT id, count(DISTINCT s), min(s) FROM t GROUP BY id")
        .unwrap_err();
    assert!(matches!(err, Error::MemoryLimit { .. }), "{err}");
    let message = err.to_string();
    assert!(
        message.starts_with("query needs more than ") && message.contains(" groups (limit "),
        "{message}"
    );
    // Nothing of the failed query is still held, and the session goes on.
    assert_eq!(db.memory().used(), used);
    assert_eq!(count(&db), 200_000);
    let small = db.query("SELECT g, count(*) FROM t GROUP BY g").unwrap();
    assert_eq!(small.rows.len(), 100);
}

#[test]
fn a_join_past_the_memory_limit_fails_clearly_and_the_session_goes_on() {
    let db = database(20_000, 2_000);
    let used = db.memory().used();
    // Room for the table, the join's scans (a column of 20,000 rows on
    // each side) and its build side, not for the 4M pairs of equal g:
    // the probe stops a chunk (16,384 rows, 3.2M pairs) past the limit.
    db.set_memory_limit(used + 2 * 1024 * 1024);
    let sql = "SELECT count(*) FROM t AS a JOIN t AS b ON a.g = b.g";
    let err = db.query(sql).unwrap_err();
    assert!(matches!(err, Error::MemoryLimit { .. }), "{err}");
    let message = err.to_string();
    assert!(
        message.starts_with("query needs more than ")
            && message.contains(" for a join of more than "),
        "{message}"
    );
    // Nothing of the failed join is still held, and the session goes on:
    // a join of fewer rows fits.
    assert_eq!(db.memory().used(), used);
    let fits = db
        .query("SELECT count(*) FROM t AS a JOIN t AS b ON a.id = b.id WHERE a.g = 7")
        .unwrap();
    assert_eq!(fits.rows[0][0], Value::Int(200));
    assert_eq!(db.memory().used(), used);
    // A scan that does not fit either says so.
    db.set_memory_limit(used + 1024);
    let err = db.query(sql).unwrap_err();
    assert!(matches!(err, Error::MemoryLimit { .. }), "{err}");
    assert!(err.to_string().contains("scanned"), "{err}");
    db.set_memory_limit(usize::MAX);
    assert_eq!(count(&db), 20_000);
    // Without a limit the join runs: 100 values of g, 200 rows each.
    let all = db.query(sql).unwrap();
    assert_eq!(all.rows[0][0], Value::Int(4_000_000));
}

#[test]
fn a_cancelled_query_stops_and_keeps_the_tables() {
    let db = database(300_000, 2_000);
    let token = db.cancel_token();
    // A second thread keeps cancelling (as a Ctrl-C handler would) while
    // the query runs: the next partition boundary stops it.
    let running = Arc::new(std::sync::atomic::AtomicBool::new(true));
    let canceller = {
        let running = running.clone();
        let token = token.clone();
        std::thread::spawn(move || {
            while running.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(1));
                token.cancel();
            }
        })
    };
    let sql = "SELECT id % 7919, count(DISTINCT s), approx_count_distinct(id) FROM t GROUP BY 1";
    let start = Instant::now();
    let result = db.query(sql);
    let took = start.elapsed();
    running.store(false, Ordering::Relaxed);
    canceller.join().unwrap();
    assert!(matches!(result, Err(Error::Cancelled)), "{result:?}");
    assert!(took < Duration::from_secs(30), "cancel took {took:?}");
    // The next statement clears the token; the table is intact.
    assert_eq!(count(&db), 300_000);
    assert_eq!(db.memory().used(), db.table("t").unwrap().heap_bytes());
}

#[test]
fn queries_report_progress_in_rows() {
    let mut db = database(200_000, 1_000);
    let reports: Arc<std::sync::Mutex<Vec<(u64, u64)>>> = Arc::default();
    let sink = reports.clone();
    db.set_progress(Some(Arc::new(move |p: katydid::Progress| {
        assert_eq!(p.unit, ProgressUnit::Rows);
        // The scan's reports; the merge reports once, as it starts.
        if p.phase == katydid::Phase::Scan {
            sink.lock().unwrap().push((p.done, p.total));
        }
    })));
    // The first finished partition reports, then at most every 100 ms.
    db.query("SELECT s, count(DISTINCT id) FROM t GROUP BY s")
        .unwrap();
    let reports = reports.lock().unwrap();
    assert!(!reports.is_empty(), "no progress report");
    for &(done, total) in reports.iter() {
        assert_eq!(total, 200_000);
        assert!(done > 0 && done <= total, "{done} of {total}");
    }
}

struct FirstRows {
    wanted: usize,
    got: Vec<Vec<Value>>,
    batches: usize,
}

impl RowSink for FirstRows {
    fn start(&mut self, columns: &[String], types: &[DataType]) -> katydid::Result<()> {
        assert_eq!(columns.len(), types.len());
        Ok(())
    }
    fn rows(&mut self, rows: &[Vec<Value>]) -> katydid::Result<bool> {
        self.batches += 1;
        self.got.extend(rows.iter().cloned());
        Ok(self.got.len() < self.wanted)
    }
}

#[test]
fn a_sink_that_stops_early_stops_the_scan() {
    let db = database(400_000, 4_000);
    let mut sink = FirstRows {
        wanted: 1,
        got: Vec::new(),
        batches: 0,
    };
    let summary = db.query_to("SELECT id, s FROM t", &mut sink).unwrap();
    assert!(summary.stopped);
    // Rows arrive in load order, a wave of partitions at a time: the scan
    // stopped long before reading 400,000 rows.
    assert_eq!(sink.got[0][0], Value::Int(0));
    assert!(
        summary.rows < 100_000,
        "{} rows delivered before stopping",
        summary.rows
    );
    assert_eq!(count(&db), 400_000);
}

/// A sink that fails at its first batch.
struct FailingSink;

impl RowSink for FailingSink {
    fn start(&mut self, _: &[String], _: &[DataType]) -> katydid::Result<()> {
        Ok(())
    }
    fn rows(&mut self, _: &[Vec<Value>]) -> katydid::Result<bool> {
        Err(Error::Execution("the reader went away".into()))
    }
}

#[test]
fn a_failing_sink_or_query_ends_the_stream_with_its_error() {
    let db = database(200_000, 4_000);
    let e = db
        .query_to("SELECT id, s FROM t", &mut FailingSink)
        .unwrap_err();
    assert!(e.to_string().contains("the reader went away"), "{e}");
    // An error while rows stream: `id / (id - 150000)` divides by zero in
    // a partition after some have been delivered.
    let mut sink = FirstRows {
        wanted: usize::MAX,
        got: Vec::new(),
        batches: 0,
    };
    let e = db
        .query_to("SELECT id / (id - 150000) FROM t", &mut sink)
        .unwrap_err();
    assert!(matches!(e, Error::DivisionByZero), "{e:?}");
    assert!(sink.got.len() < 200_000);
    assert_eq!(count(&db), 200_000);
}

#[test]
fn the_preview_computes_only_the_rows_shown_and_counts_the_rest() {
    let db = database(50_000, 4_096);
    let p = db
        .query_preview("SELECT id, s FROM t WHERE g < 10", 40)
        .unwrap();
    assert_eq!(p.result.rows.len(), 40);
    assert_eq!(p.total_rows, 5_000);
    let p = db
        .query_preview("SELECT id FROM t WHERE g < 10 LIMIT 100 OFFSET 4990", 40)
        .unwrap();
    assert_eq!(p.total_rows, 10);
    assert_eq!(p.result.rows.len(), 10);
    let p = db
        .query_preview("SELECT id FROM t ORDER BY g DESC, id LIMIT 3", 40)
        .unwrap();
    assert_eq!(p.total_rows, 3);
    assert_eq!(p.result.rows[0][0], Value::Int(99));
}

#[test]
fn extreme_limits_and_offsets_answer() {
    let db = database(10_000, 1_000);
    let cases: [(&str, usize); 6] = [
        (
            "SELECT id FROM t ORDER BY g LIMIT 9223372036854775807",
            10_000,
        ),
        (
            "SELECT id FROM t ORDER BY g LIMIT 10 OFFSET 92233720775807",
            0,
        ),
        (
            "SELECT id FROM t ORDER BY id DESC LIMIT 9223372036854775807 OFFSET 9999",
            1,
        ),
        (
            "SELECT id FROM t LIMIT 9223372036854775807 OFFSET 9223372036854775807",
            0,
        ),
        (
            "SELECT g, count(*) FROM t GROUP BY g ORDER BY 2 LIMIT 9223372036854775807",
            100,
        ),
        ("SELECT id FROM t LIMIT -9223372036854775807", 10_000),
    ];
    for (sql, rows) in cases {
        let r = db.query(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
        assert_eq!(r.rows.len(), rows, "{sql}");
    }
    let last = db
        .query("SELECT id FROM t ORDER BY id DESC LIMIT 9223372036854775807 OFFSET 9999")
        .unwrap();
    assert_eq!(last.rows[0][0], Value::Int(0));
}

/// Integer sums accumulate exactly (in i128, like DuckDB's HUGEINT): a sum
/// that passes i64's range on the way but ends inside it is exact, in one
/// partition and across partitions, with or without groups; a group whose
/// result does not fit fails the query with an error that says so, and the
/// session goes on.
#[test]
fn integer_sums_are_exact_past_i64_on_the_way() {
    let max = i64::MAX;
    let csv = format!("g,v\na,{max}\na,{max}\na,-{max}\nb,{max}\nb,{max}\nb,1\n");
    for partition_rows in [1, 2, 6] {
        let mut db = Database::new(DatabaseOptions::default()).unwrap();
        let options = LoadOptions {
            partition_rows,
            ..LoadOptions::default()
        };
        db.load_csv_bytes(csv.clone().into_bytes(), Path::new("h.csv"), "h", &options)
            .unwrap();
        let r = db.query("SELECT sum(v) FROM h WHERE g = 'a'").unwrap();
        assert_eq!(r.rows, vec![vec![Value::Int(max)]], "{partition_rows}");
        let r = db
            .query("SELECT g, sum(v) FROM h WHERE g <> 'b' GROUP BY g")
            .unwrap();
        assert_eq!(r.rows[0][1], Value::Int(max), "{partition_rows}");
        // A total past i64 is exact too (issue 30, item 1), as DuckDB's
        // HUGEINT is: no overflow error.
        let r = db
            .query("SELECT g, sum(v) FROM h GROUP BY g ORDER BY g")
            .unwrap();
        assert_eq!(r.rows[1][1], Value::from_i128(2 * i128::from(max) + 1));
        let r = db.query("SELECT count(*) FROM h").unwrap();
        assert_eq!(r.rows, vec![vec![Value::Int(6)]]);
    }
}
