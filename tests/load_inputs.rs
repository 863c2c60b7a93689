//! The loader on inputs that are not ordinary files: devices, directories,
//! FIFOs, files it may not read. Each must end in a clean error or load,
//! within bounded memory and time.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use std::sync::{Arc, Mutex};

use katydid::ingest::{LoadOptions, load_csv};
use katydid::{Error, Progress};

/// A fresh directory for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("katydid-inputs-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn limit(bytes: usize) -> LoadOptions {
    LoadOptions {
        max_line_bytes: bytes,
        ..LoadOptions::default()
    }
}

/// Regression: `--load /dev/zero` grew without bound. With a limit of 4 MiB
/// it fails on the first record after reading about that much.
#[test]
fn dev_zero_ends_in_a_record_limit_error() {
    let err = load_csv(Path::new("/dev/zero"), "z", &limit(4 << 20)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "/dev/zero:1:1: record longer than 4.0 MiB (raise --max-line-size)"
    );
}

#[test]
fn a_directory_is_an_io_error_naming_it() {
    let dir = scratch("dir");
    let err = load_csv(&dir, "d", &LoadOptions::default()).unwrap_err();
    match &err {
        Error::Io { path, .. } => assert_eq!(path, &dir),
        other => panic!("{other:?}"),
    }
    assert!(err.to_string().contains("Is a directory"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Makes a FIFO at `path` and writes `text` into it from another thread
/// (opening blocks until the loader opens the other end).
fn fifo(path: &Path, text: Vec<u8>) -> std::thread::JoinHandle<()> {
    let status = Command::new("mkfifo").arg(path).status().unwrap();
    assert!(status.success());
    let path = path.to_path_buf();
    std::thread::spawn(move || {
        let mut f = std::fs::OpenOptions::new().write(true).open(path).unwrap();
        // The loader may stop reading early (on an error): ignore EPIPE.
        let _ = f.write_all(&text);
    })
}

#[test]
fn fifos_load_or_fail_cleanly() {
    let dir = scratch("fifo");
    // Nothing written: an empty input.
    let path = dir.join("empty");
    let writer = fifo(&path, Vec::new());
    let err = load_csv(&path, "e", &LoadOptions::default()).unwrap_err();
    writer.join().unwrap();
    assert_eq!(
        err.to_string(),
        format!("{}:1:1: empty file (no header)", path.display())
    );
    // A column numeric in its first partitions and text in a later one: a
    // pipe cannot be read twice, so the loader keeps every span's text.
    let path = dir.join("late");
    let mut text = String::from("a,b\n");
    for i in 0..100 {
        text.push_str(&format!("{i},{i}\n"));
    }
    text.push_str("100,\"\"\n101,\n");
    let len = text.len() as u64;
    let writer = fifo(&path, text.into_bytes());
    // Progress through a pipe: bytes read, of an unknown total (0).
    let reports = Arc::new(Mutex::new(Vec::new()));
    let sink = reports.clone();
    let options = LoadOptions {
        partition_rows: 7,
        on_progress: Some(Arc::new(move |p: Progress| sink.lock().unwrap().push(p))),
        ..LoadOptions::default()
    };
    let t = load_csv(&path, "l", &options).unwrap();
    writer.join().unwrap();
    let reports = reports.lock().unwrap();
    assert!(reports.iter().all(|p| p.total == 0), "{reports:?}");
    assert_eq!(reports.last().map(|p| p.done), Some(len));
    assert_eq!(t.rows(), 102);
    let last = t.partitions.last().unwrap();
    let b = t.column_index("b").unwrap();
    assert_eq!(
        last.columns[b].value(last.rows - 2),
        katydid::Value::str("")
    );
    assert!(last.columns[b].value(last.rows - 1).is_null());
    assert_eq!(
        t.partitions[0].columns[b].value(3),
        katydid::Value::str("3")
    );
    // A line with no end through a pipe stops at the limit.
    let path = dir.join("long");
    let writer = fifo(&path, vec![b'x'; 3 << 20]);
    let err = load_csv(&path, "x", &limit(1 << 20)).unwrap_err();
    assert!(
        err.to_string()
            .ends_with(":1:1: record longer than 1.0 MiB (raise --max-line-size)"),
        "{err}"
    );
    drop(writer);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_unreadable_file_is_an_io_error() {
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch("unreadable");
    let path = dir.join("u.csv");
    std::fs::write(&path, "a\n1\n").unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o000)).unwrap();
    // Root reads it anyway; then there is nothing to check.
    if std::fs::read(&path).is_err() {
        let err = load_csv(&path, "u", &LoadOptions::default()).unwrap_err();
        assert!(
            matches!(&err, Error::Io { path: p, .. } if *p == path),
            "{err:?}"
        );
        assert!(err.to_string().contains("Permission denied"), "{err}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
