//! Cancelling a load and watching its progress, through the public API.

use std::io::Write;
use std::path::Path;
use std::sync::{Arc, Mutex};

use flate2::Compression;
use flate2::write::GzEncoder;
use katydid::ingest::{LoadOptions, load_bytes, load_file};
use katydid::{CancelToken, Database, DatabaseOptions, Error, Progress, ProgressFn, ProgressUnit};

/// About 7 MB of CSV: several pieces of the 1 MiB the reader reads at a
/// time.
fn big_csv() -> Vec<u8> {
    let mut text = String::from("id,x,name,when\n");
    for i in 0..150_000 {
        text.push_str(&format!(
            "{i},{},name{},2013-01-01 00:00:{:02}\n",
            i * 7,
            i % 100,
            i % 60
        ));
    }
    text.into_bytes()
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut e = GzEncoder::new(Vec::new(), Compression::fast());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

/// Options whose progress reports are collected, and the collection.
fn watched(partition_rows: usize) -> (LoadOptions, Arc<Mutex<Vec<Progress>>>) {
    let reports = Arc::new(Mutex::new(Vec::new()));
    let sink = reports.clone();
    let on_progress: ProgressFn = Arc::new(move |p| sink.lock().unwrap().push(p));
    let options = LoadOptions {
        partition_rows,
        on_progress: Some(on_progress),
        ..LoadOptions::default()
    };
    (options, reports)
}

/// Reports are in bytes of `total`, never go back, and end at the total.
fn check_reports(reports: &[Progress], total: u64) {
    assert!(reports.len() >= 2, "{reports:?}");
    for w in reports.windows(2) {
        assert!(w[0].done <= w[1].done, "{w:?}");
        assert!(w[0].elapsed <= w[1].elapsed, "{w:?}");
    }
    for p in reports {
        assert_eq!(p.unit, ProgressUnit::Bytes);
        assert_eq!(p.total, total);
    }
    assert_eq!(reports.last().unwrap().done, total);
}

#[test]
fn progress_counts_bytes_of_the_input_up_to_its_size() {
    let csv = big_csv();
    let gz = gzip(&csv);
    for bytes in [csv.clone(), gz.clone()] {
        let (options, reports) = watched(10_000);
        let loaded = load_bytes(bytes.clone(), Path::new("p.csv"), "p", &options).unwrap();
        assert_eq!(loaded.table.rows(), 150_000);
        check_reports(&reports.lock().unwrap(), bytes.len() as u64);
    }
    // From a file, gzipped: compressed bytes of the file's size.
    let dir = std::env::temp_dir().join(format!("katydid-progress-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("p.csv.gz");
    std::fs::write(&path, &gz).unwrap();
    let (options, reports) = watched(10_000);
    load_file(&path, "p", &options).unwrap();
    check_reports(&reports.lock().unwrap(), gz.len() as u64);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_token_cancelled_from_a_progress_report_stops_the_load() {
    let csv = big_csv();
    for bytes in [csv.clone(), gzip(&csv)] {
        // At the first report (after the first piece is read), and at the
        // last (the whole input read, spans still being parsed).
        for at_end in [false, true] {
            let token = CancelToken::new();
            let cancel = token.clone();
            let total = bytes.len() as u64;
            let on_progress: ProgressFn = Arc::new(move |p: Progress| {
                if !at_end || p.done == total {
                    cancel.cancel();
                }
            });
            let options = LoadOptions {
                partition_rows: 5_000,
                cancel: Some(token),
                on_progress: Some(on_progress),
                ..LoadOptions::default()
            };
            let err = load_bytes(bytes.clone(), Path::new("c.csv"), "c", &options).unwrap_err();
            assert!(matches!(err, Error::Cancelled), "at end {at_end}: {err:?}");
        }
    }
    // A token cancelled before the load starts.
    let token = CancelToken::new();
    token.cancel();
    let options = LoadOptions {
        cancel: Some(token),
        ..LoadOptions::default()
    };
    let err = load_bytes(b"a\n1\n".to_vec(), Path::new("c.csv"), "c", &options).unwrap_err();
    assert!(matches!(err, Error::Cancelled), "{err:?}");
}

#[test]
fn a_cancelled_load_keeps_nothing_in_the_database() {
    let mut db = Database::new(DatabaseOptions {
        threads: 2,
        memory_limit: None,
    })
    .unwrap();
    db.load_csv_bytes(
        b"a\n1\n".to_vec(),
        Path::new("a.csv"),
        "a",
        &katydid::LoadOptions::default(),
    )
    .unwrap();
    let used = db.memory().used();
    let token = db.cancel_token();
    db.set_progress(Some(Arc::new(move |_: Progress| token.cancel())));
    let err = db
        .load_csv_bytes(big_csv(), Path::new("b.csv"), "b", &LoadOptions::default())
        .unwrap_err();
    assert!(matches!(err, Error::Cancelled), "{err:?}");
    assert!(db.table("b").is_none());
    assert_eq!(db.table_names(), ["a"]);
    assert_eq!(db.memory().used(), used);
    // The session goes on: the next load (the token is reset) works.
    db.set_progress(None);
    let stats = db
        .load_csv_bytes(big_csv(), Path::new("b.csv"), "b", &LoadOptions::default())
        .unwrap();
    assert_eq!(stats.rows, 150_000);
}

#[test]
fn a_load_past_the_memory_limit_stops_early_and_keeps_nothing() {
    let db_with = |limit: Option<usize>| {
        Database::new(DatabaseOptions {
            threads: 2,
            memory_limit: limit,
        })
        .unwrap()
    };
    let options = LoadOptions {
        partition_rows: 10_000,
        ..LoadOptions::default()
    };
    // The table's size, loaded without a limit; the budget holds it once.
    let mut db = db_with(None);
    let stats = db
        .load_csv_bytes(big_csv(), Path::new("t.csv"), "t", &options)
        .unwrap();
    let table_bytes = stats.heap_bytes;
    assert_eq!(db.memory().used(), table_bytes);
    // Replacing it gives the old bytes back.
    let replace = LoadOptions {
        replace: true,
        ..options.clone()
    };
    db.load_csv_bytes(big_csv(), Path::new("t.csv"), "t", &replace)
        .unwrap();
    assert_eq!(db.memory().used(), table_bytes);

    let mut db = db_with(Some(table_bytes / 3));
    db.load_csv_bytes(b"a\n1\n".to_vec(), Path::new("a.csv"), "a", &options)
        .unwrap();
    let used = db.memory().used();
    let err = db
        .load_csv_bytes(big_csv(), Path::new("t.csv"), "t", &options)
        .unwrap_err();
    let Error::MemoryLimit { work, what, .. } = &err else {
        panic!("{err:?}");
    };
    assert_eq!(*work, "load");
    // Stopped after some partitions, well before the 150,000th row.
    let rows: usize = what
        .strip_prefix("table \"t\" after ")
        .and_then(|r| r.strip_suffix(" rows"))
        .map(|r| r.replace(',', "").parse().unwrap())
        .unwrap_or_else(|| panic!("{what}"));
    assert!(rows > 0 && rows < 150_000, "{err}");
    assert!(
        err.to_string().starts_with("load needs more than "),
        "{err}"
    );
    assert!(db.table("t").is_none());
    assert_eq!(db.memory().used(), used);
}

#[test]
fn the_reservation_of_a_load_is_the_table_size() {
    let budget = katydid::MemoryBudget::new(usize::MAX);
    let options = LoadOptions {
        partition_rows: 7_000,
        memory: Some(budget.clone()),
        ..LoadOptions::default()
    };
    // Column x is integers in the first partitions and floats in the last:
    // the widened partitions are counted at their final size.
    let mut text = String::from_utf8(big_csv()).unwrap();
    text.push_str("150000,0.5,name,2013-01-01 00:00:00\n");
    let loaded = load_bytes(text.into_bytes(), Path::new("r.csv"), "r", &options).unwrap();
    let memory = loaded.memory.as_ref().unwrap();
    assert_eq!(memory.bytes(), loaded.table.heap_bytes());
    assert_eq!(budget.used(), loaded.table.heap_bytes());
    drop(loaded);
    assert_eq!(budget.used(), 0);
}
