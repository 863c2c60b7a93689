//! End-to-end tests of the `katydid` binary: flags, exit statuses, error
//! messages, `generate`, and loading plus querying through every output
//! format.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Command, Output, Stdio};

use common::TempDir;

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

    // The demo's lookup table: a fixed size, so no --rows.
    let zones = dir.0.join("zones.csv");
    let out = run(&["generate", "zones", "--out", arg(&zones)], "");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).starts_with("wrote 195 zones rows"));
    let csv = std::fs::read_to_string(&zones).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 196);
    assert_eq!(lines[0], "ntacode,ntaname,borough,puma");
    let out = run(
        &["generate", "zones", "--rows", "5", "--out", arg(&zones)],
        "",
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("leave out --rows"));
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
    // The load's peak ends the line where the loader can measure it: where
    // the kernel lets a process reset its resident high-water mark.
    if std::fs::write("/proc/self/clear_refs", "5").is_ok() {
        let line = err.lines().next().unwrap_or_default();
        assert!(line.contains(" of CSV; load peak "), "{line}");
    }
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
        "SELECT count(*) AS n FROM trips;\n.schema trips\n\
         SELECT count(*) AS j FROM trips t JOIN zones z ON t.pickup_ntacode = z.ntacode;\n\
         SELECT count(pickup_ntacode) AS m FROM trips;\n",
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
    // Codecs and bytes per row: the row number trip_id lies on a line and
    // costs nothing.
    assert!(stdout.contains("| B/row"), "{stdout}");
    let trip_id = stdout.lines().find(|l| l.starts_with("trip_id ")).unwrap();
    assert!(
        trip_id.contains("linear") && trip_id.ends_with(" 0.00"),
        "{trip_id}"
    );
    let err = text(&out.stderr);
    assert!(
        err.contains("loaded trips: 2,000 rows, 51 columns in "),
        "{err}"
    );
    // The lookup table `zones` holds every neighbourhood the trips name:
    // each trip with a code finds its row.
    assert!(err.contains("table zones: "), "{err}");
    let after = |header: &str| -> u64 {
        let mut lines = stdout.lines().skip_while(|l| *l != header);
        lines.next();
        lines.next().and_then(|l| l.parse().ok()).expect(header)
    };
    let (joined, with_code) = (after("j"), after("m"));
    assert!(joined > 1000 && joined == with_code, "{stdout}");
}

/// A CSV of `rows` rows: `n` (0, 1, …) and a text column.
fn numbers_csv(rows: usize) -> String {
    let mut csv = String::from("n,word\n");
    for i in 0..rows {
        csv.push_str(&format!("{i},w{}\n", i % 7));
    }
    csv
}

#[test]
fn script_errors_name_their_line_and_bail_decides_whether_to_go_on() {
    let dir = TempDir::new();
    let file = dir.file("t.csv", &numbers_csv(10));
    let script =
        "SELECT count(*) AS n FROM t;\n\nSELECT nope\n  FROM t;\nSELECT 1 AS one FROM t LIMIT 1;\n";
    // Stops at the failing statement (line 3), with its caret.
    let out = run(&["--load", arg(&file), "--format", "csv"], script);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(
        err.contains("error: line 3: unknown column \"nope\""),
        "{err}"
    );
    assert!(err.contains("LINE 1: SELECT nope\n"), "{err}");
    assert_eq!(text(&out.stdout), "n\n10\n");
    // With .bail off the script goes on, and the run still fails.
    let out = run(
        &["--load", arg(&file), "--format", "csv"],
        &format!(".bail off\n{script}"),
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("error: line 4: unknown column"));
    assert_eq!(text(&out.stdout), "n\n10\none\n1\n");
}

#[test]
fn read_runs_a_script_and_names_its_file_and_line() {
    let dir = TempDir::new();
    let file = dir.file("t.csv", &numbers_csv(5));
    let script = dir.file(
        "setup.sql",
        "-- a comment\n.mode csv\nSELECT max(n) AS m FROM t;\n.bogus\n",
    );
    let out = run(
        &["--load", arg(&file)],
        &format!(".read {}\nSELECT 1 AS never FROM t;\n", arg(&script)),
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(text(&out.stdout), "m\n4\n");
    let err = text(&out.stderr);
    assert!(
        err.contains(&format!(
            "error: {}:4: unknown command \".bogus\"",
            script.display()
        )),
        "{err}"
    );
}

#[test]
fn output_and_once_send_results_to_files() {
    let dir = TempDir::new();
    let file = dir.file("t.csv", &numbers_csv(3));
    let all = dir.0.join("all.csv");
    let one = dir.0.join("one.md");
    let script = format!(
        ".mode csv\n.output {}\nSELECT n FROM t ORDER BY n;\nSELECT count(*) AS c FROM t;\n.output\n\
         .mode markdown\n.once {}\nSELECT n FROM t ORDER BY n LIMIT 1;\nSELECT 2 AS two FROM t LIMIT 1;\n",
        arg(&all),
        arg(&one)
    );
    let out = run(&["--load", arg(&file)], &script);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(std::fs::read_to_string(&all).unwrap(), "n\n0\n1\n2\nc\n3\n");
    assert_eq!(
        std::fs::read_to_string(&one).unwrap(),
        "|   n |\n| --: |\n|   0 |\n1 row\n"
    );
    // After .once, results come back to stdout.
    assert_eq!(text(&out.stdout), "| two |\n| --: |\n|   2 |\n1 row\n");
}

#[test]
fn once_and_output_write_the_format_their_extension_names() {
    let dir = TempDir::new();
    let file = dir.file("t.csv", &numbers_csv(3));
    let csv = dir.0.join("o.csv");
    let json = dir.0.join("o.json");
    let parquet = dir.0.join("o.parquet");
    // In the default table mode.
    let script = format!(
        ".once {}\nSELECT n FROM t ORDER BY n;\n.once {}\nSELECT n FROM t ORDER BY n;\n\
         .once {}\nSELECT n, n * 2 AS m FROM t ORDER BY n;\nSELECT sum(m) AS s FROM '{}';\n",
        arg(&csv),
        arg(&json),
        arg(&parquet),
        arg(&parquet)
    );
    let out = run(&["--load", arg(&file)], &script);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(std::fs::read_to_string(&csv).unwrap(), "n\n0\n1\n2\n");
    assert_eq!(
        std::fs::read_to_string(&json).unwrap(),
        "[{\"n\":0},\n{\"n\":1},\n{\"n\":2}]\n"
    );
    assert_eq!(
        std::fs::read(&parquet).unwrap()[..4],
        *b"PAR1",
        "a Parquet file"
    );
    // The Parquet file reads back: 0 + 2 + 4.
    let stdout = text(&out.stdout);
    assert!(stdout.lines().any(|l| l.trim() == "6"), "{stdout}");
}

#[test]
fn loading_over_a_table_needs_replace() {
    let dir = TempDir::new();
    let a = dir.file("x.csv", "v\n1\n");
    std::fs::create_dir_all(dir.0.join("d2")).unwrap();
    let b = dir.file("d2/x.csv", "v\n2\n3\n");
    let out = run(
        &[
            "--load",
            arg(&a),
            "--load",
            arg(&b),
            "--query",
            "SELECT count(*) FROM x",
        ],
        "",
    );
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(err.contains("table \"x\" already exists (1 rows)"), "{err}");
    assert!(err.contains("--replace"), "{err}");
    assert!(out.stdout.is_empty());
    let out = run(
        &[
            "--load",
            arg(&a),
            "--load",
            arg(&b),
            "--replace",
            "--format",
            "csv",
            "--query",
            "SELECT sum(v) AS s FROM x",
        ],
        "",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "s\n5\n");
    // .load FILE TABLE REPLACE in a script.
    let out = run(
        &["--load", arg(&a), "--format", "csv"],
        &format!(
            ".load {} x\n.load {} x REPLACE\nSELECT sum(v) AS s FROM x;\n",
            arg(&b),
            arg(&b)
        ),
    );
    assert_eq!(out.status.code(), Some(1), "the first .load fails");
    assert!(text(&out.stderr).contains("error: line 1: table \"x\" already exists"));
    let out = run(
        &["--load", arg(&a), "--format", "csv"],
        &format!(".load {} x REPLACE\nSELECT sum(v) AS s FROM x;\n", arg(&b)),
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "s\n5\n");
}

#[test]
fn huge_floats_print_in_scientific_notation_everywhere() {
    let dir = TempDir::new();
    let file = dir.file("f.csv", "x\n1e308\n0.5\n");
    for (format, expected) in [
        ("csv", "x\n1e308\n0.5\n"),
        ("json", "[{\"x\":1e+308},\n{\"x\":0.5}]\n"),
        ("table", "    x\n-----\n1e308\n  0.5\n2 rows\n"),
    ] {
        let out = run(
            &[
                "--load",
                arg(&file),
                "--format",
                format,
                "--query",
                "SELECT x FROM f ORDER BY x DESC",
            ],
            "",
        );
        assert!(out.status.success(), "{}", text(&out.stderr));
        assert_eq!(text(&out.stdout), expected, "{format}");
    }
}

#[test]
fn table_mode_shows_maxrows_rows_and_the_timer_adds_one_footer() {
    let dir = TempDir::new();
    let file = dir.file("t.csv", &numbers_csv(100));
    let out = run(
        &["--load", arg(&file)],
        "SELECT n FROM t;\n.maxrows 3\n.timer on\nSELECT n FROM t WHERE n < 0;\nSELECT n FROM t ORDER BY n;\n",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    // Default: 40 rows shown of 100.
    assert_eq!(lines[42], "100 rows (40 shown)");
    // Timer on: time on the footer line, no rate for an empty result, and
    // no second timing line anywhere.
    assert!(lines[45].starts_with("0 rows in "), "{stdout}");
    assert!(!lines[45].contains("rows/s"), "{stdout}");
    assert_eq!(&lines[46..51], ["n", "-", "0", "1", "2"]);
    assert!(lines[51].starts_with("100 rows (3 shown) in "), "{stdout}");
    assert!(lines[51].ends_with(" rows/s scanned)"), "{stdout}");
    assert_eq!(lines.len(), 52, "{stdout}");
    assert!(!text(&out.stderr).contains("Time"), "{}", text(&out.stderr));
}

#[test]
fn a_long_bad_query_shows_a_short_caret_window() {
    let query = format!(
        "SELECT {} FORM t {}",
        "1 + ".repeat(160_000),
        "x ".repeat(325_000)
    );
    // 1.3 MB on one line, from stdin (too long for an argument).
    let out = run(&[], &query);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(err.len() < 1000, "{} bytes of error", err.len());
    assert!(err.contains("^"), "{err}");
}

#[test]
fn head_gets_the_first_line_and_the_run_ends_quietly() {
    let dir = TempDir::new();
    let file = dir.file("many.csv", &numbers_csv(200_000));
    let mut child = katydid()
        .args([
            "--load",
            arg(&file),
            "--query",
            "SELECT n, word FROM many",
            "--format",
            "csv",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // `| head -1`: read one line, then close the pipe.
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert_eq!(first, "n,word\n");
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{:?}", out.status);
    assert!(
        !text(&out.stderr).contains("error"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn ctrl_c_outside_the_repl_cancels_and_exits_130() {
    let dir = TempDir::new();
    let file = dir.file("many.csv", &numbers_csv(300_000));
    let mut child = katydid()
        .args([
            "--load",
            arg(&file),
            // Many partitions: the engine checks the token between them.
            "--partition-rows",
            "1000",
            "--query",
            "SELECT n, word FROM many",
            "--format",
            "csv",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    stdout.read_line(&mut first).unwrap();
    assert_eq!(first, "n,word\n");
    // The statement is running (its writes wait for this reader): SIGINT,
    // as Ctrl-C in a terminal sends.
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let mut rest = String::new();
    stdout.read_to_string(&mut rest).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).ends_with("cancelled\n"),
        "{}",
        text(&out.stderr)
    );
    assert!(
        rest.lines().count() < 300_000,
        "stopped before the last row"
    );
}

#[test]
fn memory_limit_flag_and_command() {
    let dir = TempDir::new();
    let file = dir.file("t.csv", &numbers_csv(1000));
    let out = run(
        &["--load", arg(&file), "--memory-limit", "512MiB"],
        ".tables\n.memory-limit 1GB\n",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("\nmemory: "), "{stdout}");
    assert!(stdout.contains(" of 512.0 MiB\n"), "{stdout}");
    assert!(stdout.contains(" of 953.7 MiB\n"), "{stdout}");
    // A table larger than the limit is refused, naming the limit.
    let out = run(
        &[
            "--load",
            arg(&file),
            "--memory-limit",
            "100B",
            "--query",
            "SELECT 1",
        ],
        "",
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("(limit 100 B)"),
        "{}",
        text(&out.stderr)
    );
    let out = run(&["--memory-limit", "lots"], "");
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn line_and_markdown_modes_from_a_script() {
    let dir = TempDir::new();
    let file = dir.file("c.csv", SMALL_CSV);
    let out = run(
        &["--load", arg(&file)],
        ".mode line\nSELECT city, n FROM c ORDER BY n LIMIT 2;\n.format markdown\nSELECT n FROM c WHERE n = 7;\n",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        "city = Paris, FR\n   n = 3\n\ncity = Oslo\n   n = 5\n2 rows\n\
         |   n |\n| --: |\n|   7 |\n1 row\n"
    );
}

#[test]
fn explain_prints_the_whole_plan_in_table_mode_and_rows_in_csv() {
    let dir = TempDir::new();
    let file = dir.file("t.csv", &numbers_csv(50));
    let query = "EXPLAIN SELECT word, count(*) FROM t WHERE n > 3 GROUP BY word";
    let out = run(
        &["--load", arg(&file), "--maxrows", "1", "--query", query],
        "",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let plan = text(&out.stdout);
    assert!(plan.lines().count() > 3, "{plan}");
    assert!(plan.starts_with("Output: word, count(*)\n"), "{plan}");
    assert!(!plan.contains("rows ("), "no footer under a plan: {plan}");
    let out = run(
        &["--load", arg(&file), "--format", "csv", "--query", query],
        "",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let csv = text(&out.stdout);
    assert!(
        csv.starts_with("plan\n\"Output: word, count(*)\"\n"),
        "{csv}"
    );
}

#[test]
fn tab_and_semicolon_files_load_with_their_columns() {
    let dir = TempDir::new();
    let tsv = dir.file("readings.tsv", "id\tname\tval\n1\ta\t2.5\n2\tb\tNA\n");
    let semi = dir.file("semi.csv", "id;name;val\n1;a;2,5\n2;b;NA\n");
    // Detected from the first lines.
    for (file, table) in [(&tsv, "readings"), (&semi, "semi")] {
        let out = run(
            &[
                "--load",
                arg(file),
                "--format",
                "csv",
                "--query",
                &format!("SELECT name, id FROM {table} ORDER BY id"),
            ],
            "",
        );
        assert!(out.status.success(), "{table}: {}", text(&out.stderr));
        assert_eq!(text(&out.stdout), "name,id\na,1\nb,2\n", "{table}");
    }
    // Given: -d and --null-string on the command line, and the same as
    // .load options in a script.
    let out = run(
        &[
            "--load",
            arg(&tsv),
            "-d",
            "tab",
            "--null-string",
            "NA",
            "--format",
            "csv",
            "--query",
            "SELECT count(val) AS n FROM readings",
        ],
        "",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "n\n1\n");
    let out = run(
        &["--format", "csv"],
        &format!(
            ".load {} s (delim ';', nullstr 'NA', header true)\nSELECT count(val) AS n, count(*) AS c FROM s;\n",
            arg(&semi)
        ),
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "n,c\n1,2\n");
}

#[test]
fn a_load_prints_its_notices() {
    let dir = TempDir::new();
    let mut csv = String::from("id,x\n");
    for i in 0..1000 {
        csv.push_str(&format!("{i},{i}\n"));
    }
    csv.push_str("1000x,5\n");
    let file = dir.file("widen.csv", &csv);
    let out = run(&["--load", arg(&file)], "SELECT 1;\n.schema widen\n");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    let lines: Vec<&str> = err.lines().collect();
    assert!(lines[0].starts_with("loaded widen: 1,001 rows"), "{err}");
    let note =
        "note: column id: typed as string because of 1 value of 1,001 (line 1002: \"1000x\")";
    assert_eq!(lines[1], note);
    // .schema keeps it.
    let stdout = text(&out.stdout);
    assert!(stdout.lines().any(|l| l == note), "{stdout}");
}

/// `SELECT *` in table mode under an address-space cap of 1 GB: the
/// display asks for the 40 rows it shows, so 300,000 wide rows (about
/// 115 MiB of CSV, several GiB as materialized values) never exist at
/// once. Before the preview, this ran out of memory and aborted.
#[cfg(target_os = "linux")]
#[test]
fn select_star_in_table_mode_fits_under_a_memory_cap() {
    let dir = TempDir::new();
    let csv = dir.path().join("trips.csv");
    let out = katydid()
        .args(["generate", "taxi", "--rows", "300000", "--out", arg(&csv)])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let script = format!(
        "ulimit -v 1000000 && echo 'SELECT * FROM trips;' | exec '{}' --load '{}' --table trips",
        env!("CARGO_BIN_EXE_katydid"),
        arg(&csv)
    );
    let out = Command::new("sh")
        .args(["-c", &script])
        .env("HOME", dir.path())
        .output()
        .unwrap();
    let stdout = text(&out.stdout);
    assert!(
        out.status.success(),
        "{:?}: {}",
        out.status,
        text(&out.stderr)
    );
    assert!(
        stdout.ends_with("300,000 rows (40 shown)\n"),
        "{}",
        &stdout[stdout.len().saturating_sub(300)..]
    );
}

/// Issue 30, item 8: the first minutes of a DuckDB user. A file as the
/// only argument loads it; `--load -` reads the CSV from stdin; `~` in a
/// `.load` path is the home directory; `--quiet` keeps load reports off
/// stderr; the timer shows a scan rate only when table rows were read;
/// DESC puts NULLs last; a mistyped function gets a suggestion.
#[test]
fn a_duckdb_users_first_minutes() {
    let dir = TempDir::new();
    let file = dir.file("cities.csv", "city,n\nOslo,5\nParis,\nRome,7\n");
    // A file as the only argument (statements from stdin here).
    let out = run(
        &[arg(&file), "--format", "csv"],
        "SELECT count(*) FROM cities;\n",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "count(*)\n3\n");
    assert!(
        text(&out.stderr).starts_with("loaded cities: 3 rows"),
        "{}",
        text(&out.stderr)
    );

    // The CSV itself from stdin, and --quiet: nothing but the result.
    let out = run(
        &[
            "--load",
            "-",
            "--quiet",
            "--format",
            "csv",
            "-q",
            "SELECT city FROM stdin ORDER BY n DESC",
        ],
        "city,n\nOslo,5\nParis,\nRome,7\n",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    // DESC puts NULLs last, as DuckDB and ClickHouse do.
    assert_eq!(text(&out.stdout), "city\nRome\nOslo\nParis\n");
    assert_eq!(text(&out.stderr), "");

    // `~` expands to $HOME (the temporary directory here).
    let out = katydid()
        .env("HOME", dir.path())
        .args([
            "--format",
            "csv",
            "-q",
            ".load ~/cities.csv c",
            "-q",
            "SELECT sum(n) FROM c",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "sum(n)\n12\n");

    // The timer: no scan rate without table rows read.
    let out = run(
        &[arg(&file), "--timer"],
        "SELECT 42;\nSELECT count(*) FROM cities;\nSELECT sum(n) FROM cities;\n",
    );
    let stdout = text(&out.stdout);
    let footers: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("1 row in "))
        .collect();
    assert_eq!(footers.len(), 3, "{stdout}");
    assert!(!footers[0].contains("rows/s"), "{stdout}");
    assert!(!footers[1].contains("rows/s"), "{stdout}");
    assert!(footers[2].ends_with(" rows/s scanned)"), "{stdout}");

    // A mistyped function name.
    let out = run(&[arg(&file)], "SELECT avgg(n) FROM cities;\n");
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(
        err.contains("unknown function avgg() (did you mean avg?)"),
        "{err}"
    );
}

#[test]
fn create_table_as_and_drop_table_change_the_session_tables() {
    let dir = TempDir::new();
    let file = dir.file("t.csv", &numbers_csv(10));
    let script = "CREATE TABLE w AS SELECT word, count(*) AS n FROM t GROUP BY word;\n\
                  SELECT sum(n) AS total FROM w;\n\
                  .tables\n\
                  DROP TABLE w;\n\
                  SELECT count(*) FROM w;\n";
    let out = run(&["--load", arg(&file), "--format", "csv"], script);
    assert_eq!(out.status.code(), Some(1), "the last query fails");
    let stdout = text(&out.stdout);
    assert!(stdout.contains("total\n10\n"), "{stdout}");
    assert!(stdout.contains("w "), "{stdout}");
    let err = text(&out.stderr);
    assert!(err.contains("line 5: unknown table \"w\""), "{err}");
}
