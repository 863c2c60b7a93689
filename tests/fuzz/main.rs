//! Fuzz tests for the two doors user input comes through:
//! [`Database::query`] (and its streaming and preview forms) and the CSV
//! loader ([`Database::load_csv_bytes`]).
//!
//! # Properties
//! - Nothing panics: every call runs inside `catch_unwind`, and an
//!   [`Error::Internal`] counts as a panic, since the engine's boundary turns
//!   panics into `internal error: … (please report)`.
//! - Nothing allocates absurdly: this test binary's global allocator refuses
//!   any single allocation above [`harness::MAX_ALLOCATION_BYTES`] (and the
//!   process aborts with the running input printed); one database runs
//!   under a memory limit just above its tables, where a query must fail
//!   with [`Error::MemoryLimit`] rather than grow.
//! - Every statement returns: one still running after
//!   [`harness::CANCEL_AFTER`] is cancelled and reported; one that ignores
//!   the cancel ends the process with its input printed.
//! - Results are well formed (one value per column, of the column's type);
//!   a parse error's offset is a character boundary of the text; a query
//!   hands back every byte it reserved against the memory budget.
//! - A load that fails names a line and field within the input, and the
//!   line and field of the one defect a case was built with.
//!
//! # Running
//! `cargo test --test fuzz` runs each fuzzer for about two seconds from a
//! fixed seed. `KATYDID_FUZZ_SECONDS=60` runs each for a minute (CI does);
//! `KATYDID_FUZZ_SEED=<n>` starts another series. A failure prints each
//! distinct bug once, with its case seed, the input and a shrunk input;
//! `KATYDID_FUZZ_CASE=<case seed>` reruns that one case,
//! `KATYDID_FUZZ_SQL=<statement>` runs one statement by hand on every
//! query fixture (printing what it returns), and
//! `KATYDID_FUZZ_SHOW=<outcome>` (`parse error`, `plan error`, …) prints
//! every statement that ends that way, to see what the generator reaches.
//!
//! # Design
//! A seeded random driver over a typed grammar (`sql.rs`) and a CSV model
//! (`csv.rs`), with the `rand` crates the other randomized tests use,
//! rather than cargo-fuzz: libFuzzer needs a nightly compiler, and a
//! grammar reaches the planner and executor, where coverage-guided byte
//! mutation mostly stops at the parser.

mod csv;
mod harness;
mod regressions;
mod sql;

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use katydid::RowSink;
use katydid::{DataType, Database, DatabaseOptions, Error, LoadOptions, Value};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use harness::{Bug, Findings};
use sql::TableSchema;

#[global_allocator]
static ALLOCATOR: harness::CappedAllocator = harness::CappedAllocator;

// ---------------------------------------------------------------------------
// Tables with awkward values

/// The main table's CSV text: every type, with NULLs, i64 extremes, NaN and
/// infinities, -0.0, empty strings, emoji, quotes, a sorted and a constant
/// column, an all-NULL column, and values cycling with different periods so
/// that partitions differ.
fn main_table_csv(rows: usize) -> String {
    let ints = [
        "0",
        "1",
        "-1",
        "9223372036854775807",
        "-9223372036854775808",
        "42",
        "",
        "9223372036854775806",
        "7",
        "-42",
        "255",
        "256",
    ];
    let small = ["0", "1", "2", "", "3", "1", "4"];
    let floats = [
        "0.0",
        "-0.0",
        "1.5",
        "-2.25",
        "1e308",
        "-1e308",
        "5e-324",
        "",
        "0.1",
        "123456.789",
        "2.5",
        "3.5",
        "-1.7976931348623157e308",
    ];
    let specials = ["nan", "inf", "-inf", "1.5", "", "NaN", "-0.0", "2.5"];
    let big = ["99999999999999999999", "1", "-5", "", "1e20"];
    let strings = [
        "",
        "a",
        "A",
        "é",
        "😈",
        "x y",
        "\"he said \"\"hi\"\"\"",
        "NULL",
        "1",
        "  lead",
        "ß",
        "İ",
        "%",
        "_",
        "\"a,b\"",
        "\"line\nbreak\"",
        "\\",
        "\"\"",
        "🇺🇸",
        "e\u{301}",
    ];
    let long = "z".repeat(300);
    let groups = ["a", "b", "c", "", "b"];
    let times = [
        "2013-09-01 12:34:56",
        "1970-01-01",
        "1969-12-31 23:59:59.999999",
        "0001-01-01",
        "9999-12-31 23:59:59.999999",
        "",
        "2016-02-29 00:00:00",
        "2013-09-01T01:02:03.5Z",
        "2013-09-01 12:34:56",
    ];
    let mut out = String::from("i,j,u,k,f,fx,big,s,g,ts,n,flag\n");
    for r in 0..rows {
        let s = if r % 23 == 22 {
            long.as_str()
        } else {
            strings[r % strings.len()]
        };
        out.push_str(&format!(
            "{},{},{},7,{},{},{},{},{},{},,{}\n",
            ints[r % ints.len()],
            small[r % small.len()],
            r + 1,
            floats[r % floats.len()],
            specials[r % specials.len()],
            big[r % big.len()],
            s,
            groups[r % groups.len()],
            times[r % times.len()],
            ["true", "false"][r % 2],
        ));
    }
    out
}

/// Like the shared `edge_cases.csv`, written out here so the test stands
/// alone: offset-coded and sparse integers, a few dictionary strings,
/// constants, NULL-heavy columns, i64 extremes, floats of every magnitude.
const EDGE_CSV: &str = "\
u8_offset,sparse,enum,packed,zero,negative,id,nullable_int,country,largenum,float,nullable_float,mixed
256,0,aa,xyz,0,-199,0,-1,Germany,-9223372036854775808,0.123412,,1
258,2,aa,abc,0,39,1,-40,USA,9223372036854775806,3e-4,,10
259,3,aa,axz,0,-100,2,,France,9223372036854775806,-124.0,0.4,3
257,1,bb,AXY,0,34,3,,,9223372036854775806,3.15159,,0.21
275,4,bb,azy,0,4031,4,10,France,-9223372036854775808,0.1234e30,,0.12
500,0,aa,$sss,0,32,5,,,9223372036854775806,1e-6,,
343,2,cc,asd,0,-130,6,,Turkey,-9223372036854775808,0.0,1e-32,
432,1,aa,_f,0,-120,7,20,,9223372036854775806,0.000001,,0.1
511,2,cc,t,0,4010,8,,,-9223372036854775808,-1.0,,0.1
500,3,bb,😈,0,-40,9,13,Germany,9223372036854775806,1234124.51325,1.123124e30,0.5
";

/// One database the query fuzzer runs against, and how it was set up.
struct Fixture {
    db: Database,
    name: &'static str,
}

/// The fuzzed databases: the same tables (`t` of 40 rows, `one`, `e` with
/// none, `edge`, `w` of 3,000) cut into partitions of 3 rows (1 thread), 7
/// rows (2 threads), and the default size under a memory limit just above
/// what the tables hold.
fn fixtures(file: &Path) -> Vec<Fixture> {
    let main = main_table_csv(40);
    // Enough distinct keys for the hash-map group-by, partitions for the
    // hash index and waves of early stops.
    let wide = main_table_csv(3000);
    let one = main_table_csv(1);
    let empty = main_table_csv(0);
    let _ = std::fs::write(file, &main);
    let setups: [(&str, usize, usize, bool); 3] = [
        ("partitions of 3, 1 thread", 3, 1, false),
        ("partitions of 7, 2 threads", 7, 2, false),
        ("default partitions, low memory limit", 65_536, 2, true),
    ];
    setups
        .iter()
        .map(|&(name, partition_rows, threads, low_memory)| {
            let mut db = Database::new(DatabaseOptions {
                threads,
                memory_limit: None,
            })
            .expect("database");
            let options = LoadOptions {
                partition_rows,
                ..LoadOptions::default()
            };
            for (table, text) in [
                ("t", main.as_str()),
                ("one", one.as_str()),
                ("e", empty.as_str()),
                ("edge", EDGE_CSV),
                ("w", wide.as_str()),
            ] {
                db.load_csv_bytes(
                    text.as_bytes().to_vec(),
                    Path::new(&format!("{table}.csv")),
                    table,
                    &options,
                )
                .unwrap_or_else(|e| panic!("loading {table}: {e}"));
            }
            let baseline_bytes = db.memory().used();
            if low_memory {
                db.set_memory_limit(baseline_bytes + 16 * 1024);
            }
            Fixture { db, name }
        })
        .collect()
}

fn schema(db: &Database) -> Vec<TableSchema> {
    ["t", "one", "e", "edge", "w"]
        .iter()
        .map(|name| {
            let info = db.table_info(name).expect("table");
            TableSchema {
                name: name.to_string(),
                columns: info
                    .columns
                    .iter()
                    .map(|c| (c.name.clone(), c.dtype))
                    .collect(),
            }
        })
        .collect()
}

// ---------------------------------------------------------------------------
// Running one statement

/// Which entry point a statement goes through.
#[derive(Debug, Clone, Copy)]
enum Entry {
    /// [`Database::query`].
    Query,
    /// [`Database::query_preview`] with this many rows.
    Preview(usize),
    /// [`Database::query_to`] with a sink that stops after this many rows.
    Stream(usize),
}

/// A sink that checks the protocol (start once, then rows of the right
/// width) and stops after `stop_after` rows.
struct CheckingSink {
    width: Option<usize>,
    rows: usize,
    stop_after: usize,
    problem: Option<String>,
}

impl RowSink for CheckingSink {
    fn start(&mut self, columns: &[String], types: &[DataType]) -> katydid::Result<()> {
        if self.width.is_some() {
            self.problem = Some("RowSink::start called twice".into());
        }
        if columns.len() != types.len() {
            self.problem = Some(format!(
                "{} column names but {} types",
                columns.len(),
                types.len()
            ));
        }
        self.width = Some(columns.len());
        Ok(())
    }

    fn rows(&mut self, rows: &[Vec<Value>]) -> katydid::Result<bool> {
        match self.width {
            None => self.problem = Some("rows before RowSink::start".into()),
            Some(w) => {
                if let Some(r) = rows.iter().find(|r| r.len() != w) {
                    self.problem = Some(format!("a row of {} values for {w} columns", r.len()));
                }
            }
        }
        self.rows += rows.len();
        Ok(self.rows < self.stop_after)
    }
}

/// What a panic payload says.
fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "panic".into())
}

/// The bug in an engine error, if it is one: an internal error, or a
/// position outside the text.
fn error_bug(e: &Error, sql: &str) -> Option<Bug> {
    let text = e.to_string();
    match e {
        Error::Internal(m) => {
            let at = harness::take_last_panic()
                .map(|p| format!("\n  panicked: {p}"))
                .unwrap_or_default();
            Some(Bug::new(format!("internal error: {m}{at}")))
        }
        Error::Parse { offset, .. } if *offset > sql.len() || !sql.is_char_boundary(*offset) => {
            Some(Bug::new(format!(
                "parse error offset {offset} is not a character boundary of the {}-byte text: {text}",
                sql.len()
            )))
        }
        Error::Plan {
            offset: Some(offset),
            ..
        } if *offset > sql.len() => Some(Bug::new(format!(
            "plan error offset {offset} is past the {}-byte text: {text}",
            sql.len()
        ))),
        _ if text.is_empty() => Some(Bug::new(format!("an error with no message: {e:?}"))),
        _ => None,
    }
}

/// True when value `v` may stand in a column of type `t`.
fn fits(v: &Value, t: DataType) -> bool {
    // An integer sum past i64 is a HugeInt, and only then (never one that
    // fits an i64).
    if let Value::HugeInt(x) = v {
        return t == DataType::Int && i64::try_from(*x).is_err();
    }
    matches!(
        (v, t),
        (Value::Null, _)
            | (Value::Int(_), DataType::Int)
            | (Value::Float(_), DataType::Float)
            | (Value::Str(_), DataType::Str)
            | (Value::Timestamp(_), DataType::Timestamp)
            | (Value::Date(_), DataType::Date)
            | (Value::Bool(_), DataType::Bool)
    )
}

/// Runs `sql` on `fx` through `entry` and checks every property; `Ok` also
/// for errors a user may legitimately get.
fn run_statement(
    fx: &Fixture,
    sql: &str,
    entry: Entry,
    check_memory: bool,
) -> Result<&'static str, Bug> {
    run_on(&fx.db, fx.name, sql, entry, check_memory)
}

/// [`run_statement`] on database `db` called `name` in reports.
fn run_on(
    db: &Database,
    name: &str,
    sql: &str,
    entry: Entry,
    check_memory: bool,
) -> Result<&'static str, Bug> {
    let _watch = harness::watch(format!("query on {name}: {sql}"), Some(db.cancel_token()));
    harness::take_last_panic();
    let before = db.memory().used();
    let start = Instant::now();
    let outcome = catch_unwind(AssertUnwindSafe(|| -> katydid::Result<Option<String>> {
        match entry {
            Entry::Query => {
                let r = db.query(sql)?;
                Ok(check_rows(&r.columns, &r.types, &r.rows))
            }
            Entry::Preview(n) => {
                let p = db.query_preview(sql, n)?;
                let r = &p.result;
                let mut problem = check_rows(&r.columns, &r.types, &r.rows);
                if r.rows.len() > n {
                    problem = Some(format!("preview of {n} rows returned {}", r.rows.len()));
                } else if (r.rows.len() as u64) > p.total_rows {
                    problem = Some(format!(
                        "preview shows {} rows of a total of {}",
                        r.rows.len(),
                        p.total_rows
                    ));
                }
                Ok(problem)
            }
            Entry::Stream(stop_after) => {
                let mut sink = CheckingSink {
                    width: None,
                    rows: 0,
                    stop_after,
                    problem: None,
                };
                let summary = db.query_to(sql, &mut sink)?;
                if summary.rows != sink.rows as u64 && sink.problem.is_none() {
                    sink.problem = Some(format!(
                        "query_to says {} rows were delivered, the sink got {}",
                        summary.rows, sink.rows
                    ));
                }
                Ok(sink.problem)
            }
        }
    }));
    let elapsed = start.elapsed();
    let result = match outcome {
        Err(payload) => {
            let at = harness::take_last_panic().unwrap_or_else(|| panic_text(&*payload));
            return Err(Bug::new(format!(
                "panic escaped the engine's boundary ({entry:?}): {at}"
            )));
        }
        Ok(r) => r,
    };
    if elapsed >= harness::CANCEL_AFTER {
        return Err(Bug::new(format!(
            "a statement ran for {:.1} s (cancelled after {:?}) on {}",
            elapsed.as_secs_f64(),
            harness::CANCEL_AFTER,
            name
        )));
    }
    let outcome = match result {
        Err(e) => {
            if let Some(bug) = error_bug(&e, sql) {
                return Err(bug);
            }
            if std::env::var("KATYDID_FUZZ_SHOW").is_ok_and(|k| k == kind(&e)) {
                eprintln!("{}: {sql}\n  -> {e}", kind(&e));
            }
            kind(&e)
        }
        Ok(Some(problem)) => {
            return Err(Bug::new(format!("malformed result ({entry:?}): {problem}")));
        }
        Ok(None) => "ok",
    };
    let after = db.memory().used();
    if check_memory && after != before {
        return Err(Bug::new(format!(
            "memory budget not handed back: {before} bytes used before the statement, {after} after"
        )));
    }
    Ok(outcome)
}

/// An error's kind, for the outcome counts.
fn kind(e: &Error) -> &'static str {
    match e {
        Error::Io { .. } => "io error",
        Error::Csv { .. } => "csv error",
        Error::Parse { .. } => "parse error",
        Error::Plan { .. } => "plan error",
        Error::Execution(_) | Error::Overflow | Error::DivisionByZero => "execution error",
        Error::Cancelled => "cancelled",
        Error::MemoryLimit { .. } => "memory limit",
        Error::NotSupported(_) => "not supported",
        Error::Internal(_) => "internal error",
    }
}

/// A description of what is wrong with a result's shape, if anything.
fn check_rows(columns: &[String], types: &[DataType], rows: &[Vec<Value>]) -> Option<String> {
    if columns.len() != types.len() {
        return Some(format!(
            "{} column names but {} types",
            columns.len(),
            types.len()
        ));
    }
    for row in rows {
        if row.len() != columns.len() {
            return Some(format!(
                "a row of {} values for {} columns",
                row.len(),
                columns.len()
            ));
        }
        for ((v, t), name) in row.iter().zip(types).zip(columns) {
            if !fits(v, *t) {
                return Some(format!("column {name:?} is {t:?} but holds {v:?}"));
            }
        }
    }
    None
}

// ---------------------------------------------------------------------------
// The query fuzzer

/// One generated query case.
struct QueryCase {
    fixture: usize,
    sql: String,
    entry: Entry,
}

fn query_case(seed: u64, tables: &[TableSchema], file: &str, fixtures: usize) -> QueryCase {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let fixture = rng.gen_range(0..fixtures);
    let use_file = rng.gen_bool(0.05);
    let mut sql = sql::Gen::new(&mut rng, tables, use_file.then_some(file)).statement();
    if rng.gen_bool(0.35) {
        sql = sql::mutate(&mut rng, &sql);
    }
    let entry = match rng.gen_range(0..10) {
        0 => Entry::Preview(*[0usize, 1, 3, 40].choose(&mut rng).unwrap()),
        1 => Entry::Stream(*[1usize, 2, 1000].choose(&mut rng).unwrap()),
        _ => Entry::Query,
    };
    QueryCase {
        fixture,
        sql,
        entry,
    }
}

/// Statements known to have broken engines like ours, run before the
/// generated ones.
const CORPUS: &[&str] = &[
    "SELECT i FROM t ORDER BY i LIMIT 10 OFFSET 92233720775807",
    "SELECT i FROM t ORDER BY i LIMIT 9223372036854775807",
    "SELECT i FROM t ORDER BY i DESC LIMIT 9223372036854775807 OFFSET 18446744073709551615",
    "SELECT * FROM t LIMIT -9223372036854775808",
    "SELECT * FROM t LIMIT -9223372036854775808 OFFSET 9223372036854775807",
    "SELECT j, count(*) FROM t GROUP BY 1 ORDER BY 2 LIMIT 9223372036854775807 OFFSET 9223372036854775807",
    "SELECT sum(i) FROM t",
    "SELECT i + 1 FROM t",
    "SELECT -i FROM t",
    "SELECT abs(i) FROM t",
    "SELECT i * i FROM t",
    "SELECT i / -1 FROM t",
    "SELECT i % -1 FROM t",
    "SELECT CAST(f AS INT) FROM t",
    "SELECT CAST(fx AS INT) FROM t",
    "SELECT round(f, 400), round(f, -400), round(i, -19), round(i, 9223372036854775807) FROM t",
    "SELECT ts + INTERVAL '106751991 days' FROM t",
    "SELECT date_trunc('month', ts), extract(epoch FROM ts), extract(isoyear FROM ts) FROM t",
    "SELECT count(DISTINCT fx), approx_count_distinct(f), min(fx), max(fx) FROM t",
    "SELECT fx, count(*) FROM t GROUP BY fx ORDER BY fx NULLS FIRST",
    "SELECT s FROM t WHERE s LIKE '%😈%' OR s LIKE '_' OR s LIKE '%\\%'",
    "SELECT upper(s), lower(s), length(s), strlen(s) FROM t",
    "SELECT regexp_replace(s, '', 'x', 'g') FROM t",
    "SELECT u FROM t WHERE u IN (1, 5, 9, 13, 17, 21, 25, 29, 33, 37)",
    "SELECT u FROM t WHERE u = 9223372036854775807 OR u = -9223372036854775808",
    "EXPLAIN SELECT j, count(*) FROM t WHERE u BETWEEN 3 AND 30 GROUP BY 1",
    "SUMMARIZE t",
    "SUMMARIZE e",
    "SUMMARIZE edge",
    "DESCRIBE SELECT * FROM e",
    "SELECT * FROM e ORDER BY 1 LIMIT 1 OFFSET 1",
    "SELECT count(*), sum(i), avg(f), min(s) FROM e",
    "SELECT largenum, sum(largenum), avg(largenum) FROM edge GROUP BY 1",
];

#[test]
fn queries_never_panic() {
    harness::install_panic_hook();
    let dir = std::env::temp_dir().join(format!("katydid-fuzz-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    let file: PathBuf = dir.join("t.csv");
    let fixtures = fixtures(&file);
    let tables = schema(&fixtures[0].db);
    let file_text = file.display().to_string();
    let budget = harness::budget();
    let base = harness::base_seed();
    let only = harness::only_case();
    let mut findings = Findings::new("queries_never_panic");
    let start = Instant::now();

    let check = |findings: &mut Findings, seed: u64, case: &QueryCase| {
        let fx = &fixtures[case.fixture];
        let check_memory = !case.sql.contains(&file_text);
        findings.cases += 1;
        let started = Instant::now();
        let outcome = run_statement(fx, &case.sql, case.entry, check_memory);
        findings.timed(started.elapsed(), &case.sql);
        match outcome {
            Ok(outcome) => findings.outcome(outcome),
            Err(bug) if findings.record(&bug, seed, &case.sql) => {
                let shrunk = harness::shrink_tokens(&case.sql, Duration::from_secs(20), |s| {
                    run_statement(fx, s, case.entry, check_memory)
                        .err()
                        .is_some_and(|b| b.signature == bug.signature)
                });
                eprintln!("  shrunk ({}, {:?}): {shrunk}", fx.name, case.entry);
            }
            Err(_) => {}
        }
    };

    if let Ok(sql) = std::env::var("KATYDID_FUZZ_SQL") {
        // One statement by hand, on every fixture, with what it returns.
        for fx in &fixtures {
            match fx.db.query(&sql) {
                Ok(r) => eprintln!("{}: {:?}\n{:?}", fx.name, r.columns, r.rows),
                Err(e) => eprintln!("{}: error: {e}", fx.name),
            }
            if let Err(bug) = run_statement(fx, &sql, Entry::Query, true) {
                findings.record(&bug, 0, &sql);
            }
        }
        findings.finish(start.elapsed(), base);
        return;
    }
    if only.is_none() {
        for (k, sql) in CORPUS.iter().enumerate() {
            for fixture in 0..fixtures.len() {
                let case = QueryCase {
                    fixture,
                    sql: sql.to_string(),
                    entry: Entry::Query,
                };
                check(&mut findings, k as u64, &case);
            }
        }
    }
    let mut index = 0u64;
    loop {
        let seed = match only {
            Some(seed) if index == 0 => seed,
            Some(_) => break,
            None if start.elapsed() >= budget || findings.full() => break,
            None => harness::case_seed(base, index),
        };
        index += 1;
        let case = query_case(seed, &tables, &file_text, fixtures.len());
        check(&mut findings, seed, &case);
    }
    let _ = std::fs::remove_dir_all(&dir);
    findings.finish(start.elapsed(), base);
}

// ---------------------------------------------------------------------------
// The loader fuzzer

/// Loads one case into table `x` of `db` and checks every property, then
/// queries what loaded.
fn run_load(db: &mut Database, case: &csv::CsvCase) -> Result<&'static str, Bug> {
    let _watch = harness::watch(
        format!("load: {}", case.describe()),
        Some(db.cancel_token()),
    );
    harness::take_last_panic();
    let origin = Path::new("fuzz.csv");
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        db.load_csv_bytes(case.bytes.clone(), origin, "x", &case.options)
    }));
    let result = match outcome {
        Err(payload) => {
            let at = harness::take_last_panic().unwrap_or_else(|| panic_text(&*payload));
            return Err(Bug::new(format!("panic escaped the load boundary: {at}")));
        }
        Ok(r) => r,
    };
    match (&result, &case.expected) {
        (Err(Error::Internal(m)), _) => {
            let at = harness::take_last_panic()
                .map(|p| format!("\n  panicked: {p}"))
                .unwrap_or_default();
            return Err(Bug::new(format!("internal error while loading: {m}{at}")));
        }
        // A low memory limit may stop a load before its defect.
        (Err(Error::MemoryLimit { .. }), _) => {}
        (Err(Error::Cancelled), _) => {
            return Err(Bug::new(
                "a load ran until the watchdog cancelled it".into(),
            ));
        }
        (Err(e @ Error::Csv { line, column, .. }), expected) => {
            if *line == 0 || *column == 0 {
                return Err(Bug::new(format!("a CSV error at line/field 0: {e}")));
            }
            if *line > case.plain_len_lines {
                return Err(Bug::new(format!(
                    "a CSV error names line {line} of a {}-line input: {e}",
                    case.plain_len_lines
                )));
            }
            if let Some(x) = expected
                && (*line != x.line || x.column.is_some_and(|c| c != *column))
            {
                return Err(Bug::new(format!(
                    "for a {} at line {} field {:?} the error names line {line} field {column}: {e}",
                    x.what, x.line, x.column
                )));
            }
        }
        (Err(e), Some(x)) if x.must_fail || !matches!(e, Error::NotSupported(_)) => {
            return Err(Bug::new(format!(
                "for a {} at line {} the error names no line: {e}",
                x.what, x.line
            )));
        }
        (Ok(stats), Some(x)) if x.must_fail => {
            return Err(Bug::new(format!(
                "a {} at line {} loaded without error ({} rows)",
                x.what, x.line, stats.rows
            )));
        }
        _ => {}
    }
    if let Err(e) = &result
        && e.to_string().is_empty()
    {
        return Err(Bug::new(format!("a load error with no message: {e:?}")));
    }
    let stats = match result {
        Ok(stats) => stats,
        Err(e) => return Ok(kind(&e)),
    };
    // Query what loaded: every statement must work or fail cleanly.
    let first = db
        .table_info("x")
        .ok()
        .and_then(|t| {
            t.columns
                .first()
                .map(|c| format!("\"{}\"", c.name.replace('"', "\"\"")))
        })
        .unwrap_or_else(|| "1".into());
    let statements = [
        "SELECT * FROM x LIMIT 50".to_string(),
        "SELECT * FROM x ORDER BY 1 DESC NULLS FIRST LIMIT 5".to_string(),
        "SUMMARIZE x".to_string(),
        "DESCRIBE x".to_string(),
        format!("SELECT {first}, count(*) FROM x GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 5"),
        format!("SELECT count(DISTINCT {first}), min({first}), max({first}) FROM x"),
    ];
    for sql in &statements {
        if let Err(bug) = run_on(db, "the loaded table", sql, Entry::Query, false) {
            return Err(Bug::new(format!("after a load, `{sql}`: {}", bug.detail)));
        }
    }
    match db.query("SELECT count(*) FROM x") {
        Ok(r) if r.rows == vec![vec![Value::Int(stats.rows as i64)]] => Ok("loaded"),
        // A low memory limit may refuse even this.
        Err(Error::MemoryLimit { .. }) => Ok("loaded"),
        Ok(r) => Err(Bug::new(format!(
            "the load reported {} rows, count(*) says {:?}",
            stats.rows, r.rows
        ))),
        Err(e) => Err(Bug::new(format!("count(*) after a load failed: {e}"))),
    }
}

/// Which dialect options the loader honours (see [`csv::Support`]).
fn probe_support(db: &mut Database) -> csv::Support {
    let origin = Path::new("probe.csv");
    let delimiter = db
        .load_csv_bytes(
            b"a;b\n1;2\n".to_vec(),
            origin,
            "probe",
            &LoadOptions {
                delimiter: Some(b';'),
                replace: true,
                ..LoadOptions::default()
            },
        )
        .is_ok_and(|s| s.columns == 2);
    let max_line_bytes = db
        .load_csv_bytes(
            format!("a\n{}\n", "x".repeat(100)).into_bytes(),
            origin,
            "probe",
            &LoadOptions {
                max_line_bytes: 10,
                replace: true,
                ..LoadOptions::default()
            },
        )
        .is_err();
    csv::Support {
        delimiter,
        max_line_bytes,
    }
}

#[test]
fn loads_never_panic() {
    harness::install_panic_hook();
    let budget = harness::budget();
    let base = harness::base_seed() ^ 0x10ad;
    let only = harness::only_case();
    let mut findings = Findings::new("loads_never_panic");
    let mut db = Database::new(DatabaseOptions {
        threads: 2,
        memory_limit: None,
    })
    .expect("database");
    let support = probe_support(&mut db);
    let start = Instant::now();
    let mut index = 0u64;
    loop {
        let seed = match only {
            Some(seed) if index == 0 => seed,
            Some(_) => break,
            None if start.elapsed() >= budget || findings.full() => break,
            None => harness::case_seed(base, index),
        };
        index += 1;
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let case = csv::generate(&mut rng, support);
        // Sometimes a memory limit the load cannot stay under.
        let limit = if rng.gen_bool(0.05) {
            rng.gen_range(0..4096)
        } else {
            usize::MAX
        };
        db.set_memory_limit(limit);
        findings.cases += 1;
        let started = Instant::now();
        let outcome = run_load(&mut db, &case);
        findings.timed(started.elapsed(), &format!("seed {seed}"));
        match outcome {
            Ok(outcome) => findings.outcome(outcome),
            Err(bug) => {
                findings.record(&bug, seed, &case.describe());
            }
        }
    }
    findings.finish(start.elapsed(), base);
}
