//! `katydid-bench`: the katydid side of the benchmark suite (`scripts/bench`).
//!
//! It reads a plan (JSON, written by `scripts/bench_lib`), and for each
//! workload in it loads the workload's CSV tables into a fresh [`Database`],
//! runs every query with warm-up runs and timed runs, runs every lookup
//! series (statements issued one after another on this thread), and prints
//! one JSON document with the load figures, the timings and the result rows
//! to stdout (or `--out FILE`). Progress lines go to stderr.
//!
//! It uses katydid's public API only, exactly as an application would.
//!
//! # Plan
//! ```json
//! {"threads": 2, "runs": 5, "warmup": 1,
//!  "workloads": [{"name": "taxi",
//!                 "tables": [{"name": "trips", "path": "/abs/trips.csv"}],
//!                 "queries": [{"id": "taxi/q1", "sql": "SELECT …"}],
//!                 "series": [{"id": "kv/eq", "warmup": ["SELECT …"], "sql": ["SELECT …"],
//!                             "max_seconds": 15}]}]}
//! ```
//! A series stops early, after at least one timed statement, once its timed
//! statements have taken `max_seconds` together (when given).
//! `runs: 0` runs each query once, untimed in spirit (the smoke mode). With
//! `"query_seconds": S`, a query stops after fewer timed runs (at least one)
//! once its timed runs have taken S seconds together.
//!
//! # Output
//! `{"engine": "katydid", "version": …, "threads": …, "workloads": [{"name", "tables":
//! [{"name", "rows", "columns", "partitions", "csv_bytes", "mem_bytes",
//! "load_s"} | {"name", "error"}], "queries": [{"id", "ok", "error"?,
//! "times_s", "columns", "rows", "rows_scanned"}], "series": [{"id", "ok",
//! "latencies_s", "first_s", "rows_returned"}]}]}`. Values: integers and
//! floats as JSON numbers (non-finite floats as the strings `NaN`, `inf`,
//! `-inf`), timestamps as `YYYY-MM-DD HH:MM:SS[.ffffff]` strings, NULL as
//! `null`.
//!
//! # Load peak
//! `katydid-bench --load-peak FILE [--threads N] [--partition-rows N]`
//! loads one CSV file into a fresh process's database (with N rows a
//! partition when given) and prints `{"rows", "csv_bytes", "mem_bytes",
//! "partitions", "partition_rows", "threads", "load_s", "rss_before_bytes",
//! "peak_rss_bytes", "loader_peak_bytes"}`: the resident set before the
//! load and its high-water mark after it (`VmRSS` and `VmHWM` of
//! `/proc/self/status`; `null` where that file does not exist), so the load's
//! peak is their difference, measured in a process that has done nothing
//! else. `loader_peak_bytes` is the loader's own figure (`LoadStats::peak_bytes`)
//! when it reports one.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;
use std::time::Instant;

use clap::Parser;
use katydid::{Database, DatabaseOptions, LoadOptions, QueryResult, Value};
use serde_json::{Map, Value as Json, json};

/// Runs a benchmark plan through katydid's public API and prints JSON.
#[derive(Parser, Debug)]
#[command(version, about)]
struct Args {
    /// The plan (JSON) written by scripts/bench.
    #[arg(long, required_unless_present = "load_peak")]
    plan: Option<PathBuf>,
    /// Instead of a plan: load this CSV file alone and report the process's
    /// peak resident memory (see the module docs).
    #[arg(long, value_name = "FILE", conflicts_with = "plan")]
    load_peak: Option<PathBuf>,
    /// Threads for --load-peak (default: one per core).
    #[arg(long, default_value_t = 0)]
    threads: usize,
    /// Rows per partition for --load-peak (default: the loader's,
    /// 65,536).
    #[arg(long, value_name = "N", requires = "load_peak")]
    partition_rows: Option<usize>,
    /// Write the JSON here instead of stdout.
    #[arg(long)]
    out: Option<PathBuf>,
}

/// The same allocator as the `katydid` binary, so figures match what users get.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[path = "../alloc.rs"]
mod alloc;

fn main() {
    alloc::for_queries();
    let args = Args::parse();
    let result = match &args.load_peak {
        Some(path) => load_peak(path, &args, args.out.as_deref()),
        None => run(&args),
    };
    match result {
        Ok(()) => {}
        Err(e) => {
            eprintln!("katydid-bench: {e}");
            std::process::exit(1);
        }
    }
}

fn run(args: &Args) -> Result<(), String> {
    let plan_path = args.plan.as_deref().ok_or("--plan is required")?;
    let text = std::fs::read_to_string(plan_path)
        .map_err(|e| format!("cannot read plan {}: {e}", plan_path.display()))?;
    let plan: Json = serde_json::from_str(&text).map_err(|e| format!("bad plan: {e}"))?;
    let threads = plan["threads"].as_u64().unwrap_or(0) as usize;
    let runs = plan["runs"].as_u64().unwrap_or(5) as usize;
    let warmup = plan["warmup"].as_u64().unwrap_or(1) as usize;
    let budget = plan["query_seconds"].as_f64().unwrap_or(f64::INFINITY);
    let workloads = plan["workloads"]
        .as_array()
        .ok_or("plan has no \"workloads\" array")?;

    let mut out_workloads = Vec::new();
    let mut used_threads = 0;
    for w in workloads {
        let name = w["name"].as_str().unwrap_or("?");
        let mut db = Database::new(DatabaseOptions {
            threads,
            ..DatabaseOptions::default()
        })
        .map_err(|e| e.to_string())?;
        used_threads = db.threads();
        eprintln!("katydid: workload {name}");
        let tables: Vec<Json> = w["tables"]
            .as_array()
            .map(|ts| ts.iter().map(|t| load_table(&mut db, t)).collect())
            .unwrap_or_default();
        let queries: Vec<Json> = w["queries"]
            .as_array()
            .map(|qs| {
                qs.iter()
                    .map(|q| run_query(&db, q, warmup, runs, budget))
                    .collect()
            })
            .unwrap_or_default();
        let series: Vec<Json> = w["series"]
            .as_array()
            .map(|ss| ss.iter().map(|s| run_series(&db, s)).collect())
            .unwrap_or_default();
        out_workloads.push(json!({
            "name": name,
            "tables": tables,
            "queries": queries,
            "series": series,
        }));
    }
    let doc = json!({
        "engine": "katydid",
        "version": env!("CARGO_PKG_VERSION"),
        "threads": used_threads,
        "workloads": out_workloads,
    });
    write_json(&doc, args.out.as_deref())
}

/// Prints `doc`, or writes it to `out`.
fn write_json(doc: &Json, out: Option<&std::path::Path>) -> Result<(), String> {
    let text = serde_json::to_string(doc).map_err(|e| e.to_string())?;
    match out {
        Some(path) => std::fs::write(path, text)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?,
        None => println!("{text}"),
    }
    Ok(())
}

/// `--load-peak`: one load in this fresh process, with the resident set
/// before it and its high-water mark after it.
fn load_peak(
    path: &std::path::Path,
    args: &Args,
    out: Option<&std::path::Path>,
) -> Result<(), String> {
    let mut db = Database::new(DatabaseOptions {
        threads: args.threads,
        ..DatabaseOptions::default()
    })
    .map_err(|e| e.to_string())?;
    let mut options = LoadOptions::default();
    if let Some(rows) = args.partition_rows {
        options.partition_rows = rows;
    }
    let before = proc_status_bytes("VmRSS");
    let start = Instant::now();
    let _loading = alloc::Loading::start_for(path);
    let stats = db
        .load_csv(path, "t", &options)
        .map_err(|e| format!("cannot load {}: {e}", path.display()))?;
    let load_s = start.elapsed().as_secs_f64();
    let doc = json!({
        "rows": stats.rows,
        "csv_bytes": stats.source_bytes,
        "mem_bytes": stats.heap_bytes,
        "partitions": stats.partitions,
        "partition_rows": options.partition_rows,
        "threads": db.threads(),
        "load_s": load_s,
        "rss_before_bytes": before,
        "peak_rss_bytes": proc_status_bytes("VmHWM"),
        "loader_peak_bytes": stats.peak_bytes,
    });
    write_json(&doc, out)
}

/// A `kB` field of `/proc/self/status` (`VmRSS`, `VmHWM`) in bytes; `None`
/// when the file or the field is missing.
fn proc_status_bytes(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| {
        l.strip_prefix(field)
            .is_some_and(|rest| rest.starts_with(':'))
    })?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Loads one table of the plan; the figures, or the error.
fn load_table(db: &mut Database, t: &Json) -> Json {
    let name = t["name"].as_str().unwrap_or("t");
    let path = PathBuf::from(t["path"].as_str().unwrap_or(""));
    eprintln!("katydid:   load {name} from {}", path.display());
    let start = Instant::now();
    let loaded = catch_unwind(AssertUnwindSafe(|| {
        let _loading = alloc::Loading::start_for(&path);
        db.load_csv(&path, name, &LoadOptions::default())
    }));
    let load_s = start.elapsed().as_secs_f64();
    match loaded {
        Ok(Ok(stats)) => json!({
            "name": name,
            "rows": stats.rows,
            "columns": stats.columns,
            "partitions": stats.partitions,
            "csv_bytes": stats.source_bytes,
            "mem_bytes": stats.heap_bytes,
            "load_s": load_s,
        }),
        Ok(Err(e)) => json!({"name": name, "error": e.to_string()}),
        Err(panic) => json!({"name": name, "error": panic_text(&panic)}),
    }
}

/// Runs one statement, turning a panic into an error text so that one bad
/// query cannot end the whole benchmark.
fn query(db: &Database, sql: &str) -> Result<QueryResult, String> {
    match catch_unwind(AssertUnwindSafe(|| db.query(sql))) {
        Ok(Ok(r)) => Ok(r),
        Ok(Err(e)) => Err(e.to_string()),
        Err(panic) => Err(panic_text(&panic)),
    }
}

fn panic_text(panic: &Box<dyn std::any::Any + Send>) -> String {
    let msg = panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into());
    format!("panic: {msg}")
}

/// Warm-up runs, then `runs` timed runs (at least one run in all, and no
/// further timed run once they took `budget` seconds); the result rows of
/// the last run.
fn run_query(db: &Database, q: &Json, warmup: usize, runs: usize, budget: f64) -> Json {
    let id = q["id"].as_str().unwrap_or("?");
    let sql = q["sql"].as_str().unwrap_or("");
    eprintln!("katydid:   {id}");
    let mut times = Vec::new();
    let mut last = None;
    let total = (warmup + runs).max(1);
    for i in 0..total {
        if times.iter().sum::<f64>() >= budget {
            break;
        }
        let start = Instant::now();
        match query(db, sql) {
            Ok(r) => {
                let t = start.elapsed().as_secs_f64();
                if i >= warmup {
                    times.push(t);
                }
                last = Some(r);
            }
            Err(e) => return json!({"id": id, "ok": false, "error": e}),
        }
    }
    let r = last.expect("at least one run");
    json!({
        "id": id,
        "ok": true,
        "times_s": times,
        "columns": r.columns,
        "rows": r.rows.iter().map(|row| row.iter().map(value_json).collect::<Vec<_>>()).collect::<Vec<_>>(),
        "rows_scanned": r.rows_scanned,
    })
}

/// Runs the warm-up statements, then the series one statement after another,
/// timing each.
fn run_series(db: &Database, s: &Json) -> Json {
    let id = s["id"].as_str().unwrap_or("?");
    eprintln!("katydid:   {id}");
    let list = |key: &str| -> Vec<&str> {
        s[key]
            .as_array()
            .map(|a| a.iter().filter_map(|x| x.as_str()).collect())
            .unwrap_or_default()
    };
    let mut first_s = None;
    for sql in list("warmup") {
        let start = Instant::now();
        if let Err(e) = query(db, sql) {
            return json!({"id": id, "ok": false, "error": e});
        }
        first_s.get_or_insert(start.elapsed().as_secs_f64());
    }
    let budget = s["max_seconds"].as_f64().unwrap_or(f64::INFINITY);
    let mut latencies = Vec::new();
    let mut spent = 0.0;
    let mut rows_returned = 0usize;
    let wall = Instant::now();
    for sql in list("sql") {
        if spent >= budget {
            break;
        }
        let start = Instant::now();
        match query(db, sql) {
            Ok(r) => {
                let t = start.elapsed().as_secs_f64();
                spent += t;
                latencies.push(t);
                rows_returned += r.rows.len();
            }
            Err(e) => return json!({"id": id, "ok": false, "error": e}),
        }
    }
    let mut m = Map::new();
    m.insert("id".into(), json!(id));
    m.insert("ok".into(), json!(true));
    m.insert("latencies_s".into(), json!(latencies));
    m.insert("wall_s".into(), json!(wall.elapsed().as_secs_f64()));
    m.insert("first_s".into(), json!(first_s));
    m.insert("rows_returned".into(), json!(rows_returned));
    Json::Object(m)
}

/// One result value as JSON (see the module docs).
fn value_json(v: &Value) -> Json {
    match v {
        Value::Null => Json::Null,
        Value::Bool(b) => json!(b),
        Value::Int(i) => json!(i),
        // Peers' answers are compared as numbers; beyond i64 as f64.
        Value::HugeInt(i) => json!(*i as f64),
        Value::Float(f) => serde_json::Number::from_f64(*f)
            .map(Json::Number)
            .unwrap_or_else(|| {
                json!(if f.is_nan() {
                    "NaN"
                } else if *f > 0.0 {
                    "inf"
                } else {
                    "-inf"
                })
            }),
        Value::Timestamp(t) => json!(katydid::types::format_timestamp(*t)),
        Value::Date(d) => json!(katydid::types::format_date(*d)),
        // Seconds, as the peers' durations are compared.
        Value::Interval(m) => json!(*m as f64 / 1e6),
        Value::Str(s) => json!(s.as_ref()),
    }
}
