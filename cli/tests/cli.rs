//! End-to-end tests of the `katydid` binary: flags, exit statuses, error
//! messages, `generate`, and loading plus querying through every output
//! format.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};

fn katydid() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_katydid"));
    // Never touch the real history file.
    c.env("HOME", std::env::temp_dir());
    c
}

/// Runs the binary with `args` and `stdin` as its standard input.
fn run(args: &[&str], stdin: &str) -> Output {
    let mut child = katydid()
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the katydid binary runs");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8(bytes.to_vec()).expect("output is UTF-8")
}

/// A fresh directory under the system temp dir, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> TempDir {
        static N: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "katydid-cli-test-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    fn file(&self, name: &str, contents: &str) -> PathBuf {
        let path = self.0.join(name);
        std::fs::write(&path, contents).unwrap();
        path
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn arg(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn help_lists_flags_and_subcommands() {
    let out = run(&["--help"], "");
    assert!(out.status.success());
    let help = text(&out.stdout);
    for needle in [
        "--load", "--query", "--format", "--demo", "--timer", "generate",
    ] {
        assert!(help.contains(needle), "--help lacks {needle}:\n{help}");
    }
}

#[test]
fn missing_file_fails_with_its_name() {
    let out = run(
        &[
            "--load",
            "/nonexistent/katydid/trips.csv",
            "--query",
            "SELECT 1",
        ],
        "",
    );
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(err.starts_with("error: "), "{err}");
    assert!(err.contains("/nonexistent/katydid/trips.csv"), "{err}");
    assert_eq!(err.matches("error:").count(), 1, "printed once: {err}");
    assert!(out.stdout.is_empty());
}

#[test]
fn bad_flags_are_usage_errors() {
    let out = run(&["--frobnicate"], "");
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("--frobnicate"));
    let out = run(&["--format", "xml", "--query", "SELECT 1"], "");
    assert_eq!(out.status.code(), Some(2));
    let out = run(&["--partition-rows", "0", "--query", "SELECT 1"], "");
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn unknown_meta_command_on_stdin_fails_clearly() {
    let out = run(&[], ".tables\n\n.frobnicate\n.help\n");
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    // An error at its line; the commands before it ran, those after did
    // not (`.bail` is on by default).
    assert_eq!(
        err,
        "error: line 3: unknown command \".frobnicate\" (type .help for the list)\n"
    );
    let stdout = text(&out.stdout);
    assert!(stdout.starts_with("no tables"), "{stdout}");
    assert!(!stdout.contains(".schema"), "{stdout}");
}

#[test]
fn meta_commands_run_from_stdin() {
    let out = run(&[], "-- nothing loaded yet\n.tables\n.help\n");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.starts_with("no tables"), "{stdout}");
    assert!(stdout.contains(".schema [TABLE]"), "{stdout}");
}

#[test]
fn generate_writes_plain_and_gzipped_files() {
    let dir = TempDir::new();
    let plain = dir.0.join("numbers.csv");
    let out = run(
        &[
            "generate",
            "numbers",
            "--rows",
            "1,000",
            "--out",
            arg(&plain),
        ],
        "",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).starts_with("wrote 1,000 numbers rows"));
    let csv = std::fs::read_to_string(&plain).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 1001);
    assert_eq!(lines[0], "a,b,c,d");
    assert_eq!(lines[1000], "1000,1000,1000,1000");

    let gz = dir.0.join("kv.csv.gz");
    let out = run(
        &[
            "generate",
            "kv",
            "--rows",
            "10",
            "--out",
            arg(&gz),
            "--seed",
            "7",
        ],
        "",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(&std::fs::read(&gz).unwrap()[..2], &[0x1f, 0x8b]);

    let out = run(
        &["generate", "weather", "--rows", "1", "--out", arg(&plain)],
        "",
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("weather"));
}

/// Runs a load + query; `None` (with a notice) when the loader or the engine
/// is not built in yet, so that these tests pass on branches without them
/// and test for real once they are merged.
fn run_loaded(args: &[&str], stdin: &str) -> Option<Output> {
    let out = run(args, stdin);
    if text(&out.stderr).contains("error: not supported: ") {
        eprintln!(
            "skipping: loader or engine not available: {}",
            text(&out.stderr)
        );
        return None;
    }
    Some(out)
}

const SMALL_CSV: &str = "\
city,n,price,at
\"Paris, FR\",3,1.5,2020-01-02 03:04:05
Oslo,5,,2021-06-30 12:00:00
\"Say \"\"hi\"\"\",7,0.25,2022-12-31 23:59:59
";

#[test]
fn load_and_query_as_csv() {
    let dir = TempDir::new();
    let file = dir.file("small-cities.csv", SMALL_CSV);
    let Some(out) = run_loaded(
        &[
            "--load",
            arg(&file),
            "--query",
            "SELECT city, n, price, at FROM small_cities ORDER BY n",
            "--format",
            "csv",
        ],
        "",
    ) else {
        return;
    };
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        "city,n,price,at\n\
         \"Paris, FR\",3,1.5,2020-01-02 03:04:05\n\
         Oslo,5,,2021-06-30 12:00:00\n\
         \"Say \"\"hi\"\"\",7,0.25,2022-12-31 23:59:59\n"
    );
    let err = text(&out.stderr);
    assert!(
        err.starts_with("loaded small_cities: 3 rows, 4 columns in "),
        "{err}"
    );
}

#[test]
fn load_and_query_as_json_and_table_from_stdin() {
    let dir = TempDir::new();
    let file = dir.file("c.csv", SMALL_CSV);
    let Some(out) = run_loaded(
        &["--load", arg(&file), "--table", "t", "--format", "json"],
        "SELECT city, n FROM t WHERE n > 4 ORDER BY n; -- a comment; with ;\n\
         SELECT count(*) AS rows FROM t",
    ) else {
        return;
    };
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        "[{\"city\":\"Oslo\",\"n\":5},\n{\"city\":\"Say \\\"hi\\\"\",\"n\":7}]\n[{\"rows\":3}]\n"
    );

    let Some(out) = run_loaded(
        &[
            "--load",
            arg(&file),
            "--table",
            "t",
            "--query",
            "SELECT n, city FROM t ORDER BY n DESC",
        ],
        "",
    ) else {
        return;
    };
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines[0], "n | city");
    assert_eq!(lines[1], format!("--+-{}", "-".repeat(9)));
    assert_eq!(lines[2], "7 | Say \"hi\"");
    assert_eq!(lines[4], "3 | Paris, FR");
    // The footer without .timer: the row count only.
    assert_eq!(lines[5], "3 rows", "{stdout}");
    assert_eq!(lines.len(), 6, "{stdout}");
}

#[test]
fn query_errors_exit_1_with_a_caret() {
    let dir = TempDir::new();
    let file = dir.file("c.csv", SMALL_CSV);
    let Some(out) = run_loaded(
        &[
            "--load",
            arg(&file),
            "--query",
            "SELECT 'é', nope FROM c",
            "--query",
            "SELECT 1",
        ],
        "",
    ) else {
        return;
    };
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    let lines: Vec<&str> = err.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.starts_with("error: "))
        .unwrap_or_else(|| panic!("no error line: {err}"));
    assert!(lines[at].contains("nope"), "{err}");
    assert_eq!(lines[at + 1], "  SELECT 'é', nope FROM c");
    // "nope" starts at character 12 (byte 13).
    assert_eq!(lines[at + 2], format!("  {}^", " ".repeat(12)));
    assert!(out.stdout.is_empty(), "the second query did not run");
}

#[test]
fn broken_pipe_exits_quietly() {
    let dir = TempDir::new();
    let mut csv = String::from("n\n");
    for i in 0..20_000 {
        csv.push_str(&format!("{i}\n"));
    }
    let file = dir.file("many.csv", &csv);
    let mut child = katydid()
        .args([
            "--load",
            arg(&file),
            "--query",
            "SELECT n FROM many",
            "--format",
            "csv",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Close our end of stdout at once, like `| head -0`.
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let err = text(&out.stderr);
    if err.contains("error: not supported: ") {
        eprintln!("skipping: loader or engine not available: {err}");
        return;
    }
    assert!(out.status.success(), "{err}");
    assert!(!err.contains("error"), "{err}");
}

#[test]
fn demo_builds_trips_and_runs_stdin_statements() {
    let Some(out) = run_loaded(
        &["--demo", "2000", "--format", "csv"],
        "SELECT count(*) AS n FROM trips;\n.schema trips\n",
    ) else {
        return;
    };
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(
        stdout.starts_with("n\n2000\ntable trips: 2,000 rows in "),
        "{stdout}"
    );
    assert!(stdout.contains("\ncab_type "), "{stdout}");
    assert!(stdout.contains(" of CSV (ratio "), "{stdout}");
    let err = text(&out.stderr);
    assert!(
        err.contains("loaded trips: 2,000 rows, 51 columns in "),
        "{err}"
    );
}
