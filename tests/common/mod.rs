//! Helpers shared by the integration tests.

use std::path::{Path, PathBuf};

use katydid::{Database, DatabaseOptions, LoadOptions};

/// A database on a pool of `threads` threads with the CSV text `csv`
/// loaded as table `table`, in partitions of `partition_rows` rows.
///
/// # Panics
/// When the pool cannot start or the text does not load.
#[allow(dead_code)]
pub fn csv_database(csv: &[u8], table: &str, threads: usize, partition_rows: usize) -> Database {
    let mut db = Database::new(DatabaseOptions {
        threads,
        ..Default::default()
    })
    .expect("thread pool");
    let options = LoadOptions {
        partition_rows,
        ..LoadOptions::default()
    };
    let file = format!("{table}.csv");
    db.load_csv_bytes(csv.to_vec(), Path::new(&file), table, &options)
        .unwrap_or_else(|e| panic!("{table} loads: {e}"));
    db
}

/// The path of shared test dataset `file_name`, looked up in
/// `$KATYDID_SHARED/datasets/` and then in `../shared/datasets/` beside the
/// repository.
///
/// When it is in neither:
/// - with `KATYDID_REQUIRE_SHARED=1` (as `.ci/run` sets it) the test fails:
///   a missing dataset in CI must never pass silently;
/// - otherwise it writes `note: SKIPPED <test>: shared dataset <name> not
///   found (set KATYDID_SHARED)` straight to the process's stderr (past the
///   test harness's capture, so the notice shows in the test output) and
///   returns `None`, so the calling test can return early.
#[allow(dead_code)]
pub fn shared_dataset(file_name: &str) -> Option<PathBuf> {
    let mut candidates = Vec::new();
    if let Some(dir) = std::env::var_os("KATYDID_SHARED") {
        candidates.push(PathBuf::from(dir).join("datasets").join(file_name));
    }
    candidates.push(
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("..")
            .join("shared")
            .join("datasets")
            .join(file_name),
    );
    let found = candidates.into_iter().find(|p| p.is_file());
    if found.is_none() {
        let test = std::thread::current()
            .name()
            .unwrap_or("a test")
            .to_string();
        assert!(
            std::env::var("KATYDID_REQUIRE_SHARED").as_deref() != Ok("1"),
            "{test}: shared dataset {file_name} not found and KATYDID_REQUIRE_SHARED=1"
        );
        use std::io::Write as _;
        let _ = writeln!(
            std::io::stderr(),
            "note: SKIPPED {test}: shared dataset {file_name} not found (set KATYDID_SHARED)"
        );
    }
    found
}
