//! The REPL under a pseudo-terminal (expectrl), typed at as a person would:
//! Tab completion, a wide result fitted to an 80-column terminal, `.mode
//! line`, Ctrl-C cancelling a running statement while the tables stay, and
//! the history file shared between sessions, with its hints.

mod common;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use common::TempDir;

use expectrl::{Eof, Session};

type OsSession = Session;

/// Starts the REPL in `dir` (its history file there) with `args`, in an
/// 80×24 terminal.
fn repl(dir: &Path, args: &[&str]) -> OsSession {
    repl_with(dir, args, &[])
}

/// [`repl`] with extra environment variables.
fn repl_with(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> OsSession {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_katydid"));
    cmd.envs(env.iter().copied());
    cmd.args(args)
        .current_dir(dir)
        .env("HOME", dir)
        .env("KATYDID_HISTORY", dir.join("history"))
        .env("TERM", "xterm")
        .env_remove("COLUMNS");
    let mut s = Session::spawn(cmd).expect("the katydid binary runs under a pty");
    s.get_process_mut()
        .set_window_size(80, 24)
        .expect("the pty takes a size");
    s.set_expect_timeout(Some(Duration::from_secs(120)));
    prompt(&mut s);
    s
}

/// Waits for the next prompt and returns what was printed before it.
///
/// rustyline turns on bracketed paste (`ESC [?2004h`) each time it starts
/// reading a line: the one sure sign that a command has finished, since
/// redraws of the line being typed repeat the prompt text but not that.
fn prompt(s: &mut OsSession) -> String {
    read_until(s, "\x1b[?2004h")
}

/// Types `text` and Enter.
fn enter(s: &mut OsSession, text: &str) {
    s.send(text).unwrap();
    s.send("\r").unwrap();
}

/// Types `line` and Enter, and returns what it printed up to the next
/// prompt (the echo of the typed text included).
fn run(s: &mut OsSession, line: &str) -> String {
    enter(s, line);
    prompt(s)
}

/// Reads up to and including `needle`, returning what came before it with
/// terminal escape sequences and carriage returns removed.
fn read_until(s: &mut OsSession, needle: &str) -> String {
    let found = s
        .expect(needle)
        .unwrap_or_else(|e| panic!("expected {needle:?}: {e}"));
    strip_escapes(&String::from_utf8_lossy(found.before()))
}

/// `text` without ANSI escape sequences (CSI `ESC [ … letter`) and `\r`.
fn strip_escapes(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\x1b' => {
                if chars.peek() == Some(&'[') {
                    chars.next();
                    for d in chars.by_ref() {
                        if d.is_ascii_alphabetic() {
                            break;
                        }
                    }
                }
            }
            '\r' => {}
            c => out.push(c),
        }
    }
    out
}

fn quit(mut s: OsSession) {
    enter(&mut s, ".quit");
    s.expect(Eof).expect("the REPL ends after .quit");
}

#[test]
fn tab_completes_keywords_tables_columns_and_paths() {
    let dir = TempDir::new();
    dir.file(
        "small_cities.csv",
        "city,population\nOslo,709000\nBergen,291000\n",
    );
    let mut s = repl(dir.path(), &[]);
    // A path after .load: "small_c" completes to the file in the working
    // directory.
    s.send(".load small_c\t").unwrap();
    let out = run(&mut s, "");
    assert!(out.contains("loaded small_cities: 2 rows"), "{out}");
    // A keyword ("SEL"), a column ("popu") and a table ("small_").
    s.send("SEL\t").unwrap();
    s.send(" popu\t").unwrap();
    s.send(" FROM small_\t").unwrap();
    let out = run(&mut s, " ORDER BY 1;");
    assert!(
        out.contains("population\n----------\n    291000\n    709000\n2 rows\n"),
        "{out}"
    );
    // A path inside quotes after FROM.
    s.send("SELECT * FROM 'small_ci\t").unwrap();
    let out = read_until(&mut s, "small_cities.csv");
    assert!(out.contains("SELECT * FROM '"), "{out}");
    // Ctrl-C at the prompt clears the line.
    s.send("\x03").unwrap();
    prompt(&mut s);
    let out = run(&mut s, ".tables");
    assert!(out.contains("small_cities |    2 |       2 |"), "{out}");
    // Tab with several candidates lists them all (issue 30, item 8: it
    // cycled through them, one a press).
    s.send("SELECT ci\t").unwrap();
    read_until(&mut s, "city");
    s.send("\x03").unwrap();
    prompt(&mut s);
    s.send("SELECT c\t\t").unwrap();
    // The list's layout depends on how many functions start with c: read
    // until each expected candidate has been seen, in whatever order.
    let mut listed = String::new();
    for word in ["city", "ceiling(", "char_length(", "corr("] {
        if !listed.contains(word) {
            listed.push_str(&read_until(&mut s, word));
            listed.push_str(word);
        }
    }
    assert!(
        listed.contains("city") && listed.contains("ceiling("),
        "{listed}"
    );
    s.send("\x03").unwrap();
    prompt(&mut s);
    // A statement not ended yet shows a continuation prompt, and the lines
    // run as one statement once the `;` comes.
    // (Each line read starts with bracketed paste on, then its prompt.)
    enter(&mut s, "SELECT 40 +");
    prompt(&mut s);
    read_until(&mut s, "   ...> ");
    enter(&mut s, "2 AS answer");
    prompt(&mut s);
    read_until(&mut s, "   ...> ");
    let out = run(&mut s, ";");
    assert!(out.contains("answer\n------\n    42\n1 row\n"), "{out}");
    // So does an open quote; Ctrl-C drops the unfinished statement.
    enter(&mut s, "SELECT 'it''s");
    prompt(&mut s);
    read_until(&mut s, "   ...> ");
    s.send("\x03").unwrap();
    prompt(&mut s);
    let out = run(&mut s, "SELECT 1 AS one;");
    assert!(out.contains("one\n---\n  1\n1 row\n"), "{out}");
    quit(s);
}

#[test]
fn wide_result_fits_an_80_column_terminal_and_mode_line_shows_all() {
    let dir = TempDir::new();
    let mut s = repl(dir.path(), &["--demo", "2000"]);
    let out = run(&mut s, "SELECT * FROM trips LIMIT 3;");
    let table: Vec<&str> = out
        .lines()
        .skip_while(|l| !l.starts_with("trip_id"))
        .collect();
    assert!(table.len() >= 6, "{out}");
    for line in &table {
        assert!(
            line.chars().count() <= 80,
            "wider than the terminal: {line:?}\n{out}"
        );
    }
    assert!(table[0].contains(" | … | "), "{out}");
    assert!(table[0].ends_with("dropoff_puma"), "{out}");
    assert!(
        table[5].starts_with("3 rows, 51 columns (") && table[5].contains(" shown"),
        "{out}"
    );
    run(&mut s, ".mode line");
    let out = run(&mut s, "SELECT * FROM trips WHERE trip_id = 2;");
    assert!(out.contains("\n              trip_id = 2\n"), "{out}");
    assert!(out.contains("\n         dropoff_puma = "), "{out}");
    let fields = out
        .lines()
        .filter(|l| {
            l.trim_start()
                .split_once(" = ")
                .is_some_and(|(name, _)| !name.contains(' '))
        })
        .count();
    assert_eq!(fields, 51, "{out}");
    assert!(out.ends_with("\n1 row\n"), "{out}");
    quit(s);
}

#[test]
fn a_running_query_shows_a_progress_line_of_rows_done_and_rate() {
    let dir = TempDir::new();
    // The line shows from the first report instead of after a second, so
    // the query need not be slow; 25 partitions give it reports to make.
    let mut s = repl_with(
        dir.path(),
        &["--demo", "20000", "--partition-rows", "800"],
        &[("KATYDID_PROGRESS_AFTER_MS", "0")],
    );
    enter(
        &mut s,
        "SELECT count(DISTINCT regexp_replace(pickup_ntaname, 'a', 'b')) AS n FROM trips;",
    );
    // The bar: rows done of the 20,000, rows/s and the time elapsed.
    let bar = read_until(&mut s, " rows (");
    assert!(bar.contains("/20,000"), "{bar}");
    let out = strip_escapes(&prompt(&mut s));
    assert!(out.contains(" rows/s, "), "{out}");
    assert!(out.ends_with("\n1 row\n"), "{out}");
    quit(s);
}

#[test]
fn ctrl_c_cancels_a_running_statement_and_keeps_the_tables() {
    let dir = TempDir::new();
    let mut s = repl(dir.path(), &["--demo", "20000"]);
    // Ctrl-C at the prompt clears the line.
    s.send("SELECT nonsense").unwrap();
    s.send("\x03").unwrap();
    prompt(&mut s);
    // A long statement: 20,000 wide rows as CSV into a terminal nobody
    // reads, so the statement is still writing when Ctrl-C comes.
    run(&mut s, ".mode csv");
    enter(&mut s, "SELECT * FROM trips;");
    read_until(&mut s, "trip_id,vendor_id,");
    s.send("\x03").unwrap();
    let out = prompt(&mut s);
    assert!(
        out.ends_with("cancelled\n"),
        "{}",
        &out[out.len().saturating_sub(300)..]
    );
    assert!(
        out.lines().count() < 20_000,
        "the statement was cancelled before its last row"
    );
    let out = run(&mut s, "SELECT count(*) AS n FROM trips;");
    assert!(out.contains("n\n20000\n"), "{out}");
    quit(s);
    // Every statement was appended to the history file as it ran.
    let history = std::fs::read_to_string(dir.path().join("history")).unwrap();
    assert!(history.contains("SELECT * FROM trips;"), "{history}");
    assert!(
        history.contains("SELECT count(*) AS n FROM trips;"),
        "{history}"
    );
    assert!(!history.contains("nonsense"), "{history}");
}

#[test]
fn tab_and_semicolon_files_load_in_the_repl_with_their_columns() {
    let dir = TempDir::new();
    dir.file("readings.tsv", "id\tname\tval\n1\ta\t2.5\n2\tb\t\n");
    dir.file("semi.txt", "id;name;val\n1;a;2\n2;b;NA\n");
    let mut s = repl(dir.path(), &[]);
    // The tab is detected (and implied by .tsv); the semicolon is detected
    // and NA given as the NULL string.
    run(&mut s, ".load readings.tsv");
    run(&mut s, ".load semi.txt semi (nullstr 'NA')");
    for table in ["readings", "semi"] {
        let out = run(&mut s, &format!("DESCRIBE {table};"));
        for column in ["id ", "name ", "val "] {
            assert!(
                out.lines().any(|l| l.starts_with(column)),
                "{table} lacks {column}: {out}"
            );
        }
        assert!(out.ends_with("\n3 rows\n"), "{out}");
        let out = run(&mut s, &format!("SELECT count(val) AS n FROM {table};"));
        assert!(out.contains("\n1\n") || out.contains(" 1\n"), "{out}");
    }
    quit(s);
}

#[test]
fn sessions_share_the_history_file() {
    let dir = TempDir::new();
    let mut a = repl(dir.path(), &[]);
    let mut b = repl(dir.path(), &[]);
    run(&mut a, ".timer on");
    run(&mut b, ".maxrows 5");
    run(&mut a, ".maxwidth 70");
    // Session a is killed, not quit: what it ran is already on disk.
    a.get_process_mut().exit(true).unwrap();
    quit(b);
    let history = std::fs::read_to_string(dir.path().join("history")).unwrap();
    for entry in [".timer on", ".maxrows 5", ".maxwidth 70"] {
        assert!(history.contains(entry), "{entry} missing: {history}");
    }
    // A new session hints the latest matching entry, dimmed.
    let mut c = repl(dir.path(), &[]);
    c.send(".max").unwrap();
    read_until(&mut c, "\x1b[2mwidth 70");
    c.send("\x03").unwrap();
    prompt(&mut c);
    quit(c);
}

#[test]
fn describe_show_tables_summarize_and_a_file_as_a_table() {
    let Some(sample) = common::shared_dataset("nyc-taxi-trips-2013-sample.csv.gz") else {
        return;
    };
    let dir = TempDir::new();
    dir.file(
        "cities.csv",
        "city,population\nOslo,709000\nBergen,291000\n",
    );
    let sample = sample.to_str().unwrap().to_string();
    let mut s = repl(dir.path(), &["--load", &sample, "--table", "trips"]);
    let out = run(&mut s, "SHOW TABLES;");
    assert!(out.contains("\ntrips | 10000 |      51 | "), "{out}");
    assert!(out.ends_with("\n1 row\n"), "{out}");
    let out = run(&mut s, "DESCRIBE trips;");
    let row = |name: &str| {
        out.lines()
            .find(|l| l.starts_with(&format!("{name} ")))
            .unwrap_or_else(|| panic!("no row {name}: {out}"))
            .to_string()
    };
    assert!(row("trip_id").contains(" | integer "), "{out}");
    assert!(row("store_and_fwd_flag").contains(" | string "), "{out}");
    // Introspection shows every column, whatever .maxrows says (issue
    // 30, item 8: it stopped at 40 of the sample's 51).
    assert!(out.ends_with("\n51 rows\n"), "{out}");
    assert!(row("dropoff_puma").contains(" | integer "), "{out}");
    // SUMMARIZE has a dozen columns: fitted to 80, the middle ones elided.
    let out = run(&mut s, "SUMMARIZE trips;");
    let rows: Vec<&str> = out
        .lines()
        .skip_while(|l| !l.starts_with("column_name"))
        .collect();
    assert!(rows.iter().all(|l| l.chars().count() <= 80), "{out}");
    assert!(rows[2].starts_with("trip_id "), "{out}");
    assert!(rows[2].contains(" | … | "), "{out}");
    assert!(out.contains("\n51 rows, 12 columns ("), "{out}");
    // A file queried by its path, loaded on first use.
    let out = run(
        &mut s,
        "SELECT city FROM 'cities.csv' ORDER BY population DESC;",
    );
    assert!(
        out.contains("\ncity\n------\nOslo\nBergen\n2 rows\n"),
        "{out}"
    );
    quit(s);
}
