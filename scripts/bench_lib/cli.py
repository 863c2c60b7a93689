"""`scripts/bench`: katydid against DuckDB, ClickHouse (chdb) and Polars.

Builds katydid in release mode, generates missing data into .bench-data/,
runs every workload of benches/workloads/ on katydid (src/bin/katydid-bench.rs)
and on each requested peer (bench_lib/peer.py in the git-ignored .venv/,
which this script creates and fills from PyPI), engine after engine, with
the same data and thread count, everything in memory. Prints a markdown
table, writes bench-results/<timestamp>.json (raw figures, machine,
versions, settings), .md and .svg (chart). Each table katydid loads is also
loaded once more by `katydid-bench --load-peak` in a process of its own, to
measure the load's peak memory. Before a runner starts, its tables' files
are read once into the page cache, so a load times the engine, not the
disk. Targets (benches/workloads/targets.json)
are reported, never enforced: the exit status is 0 unless the harness
itself breaks (or, with --smoke, katydid fails to answer). --compare-to
adds katydid's before/after table against an earlier run's JSON.
"""

import argparse
import datetime
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

from . import chart, compare, data, report, targets, workloads

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PEERS = ("duckdb", "clickhouse", "polars")
PACKAGES = {"duckdb": "duckdb", "clickhouse": "chdb", "polars": "polars"}
MODULES = {"duckdb": "duckdb", "clickhouse": "chdb", "polars": "polars"}
REQUIREMENTS = os.path.join(os.path.dirname(__file__), "requirements.txt")


def parse_args(argv):
    ap = argparse.ArgumentParser(
        prog="scripts/bench",
        description="Benchmark katydid, alone or against DuckDB, ClickHouse (chdb) and Polars.",
        epilog="Workloads: taxi, taxi_f32, star, iot, numbers, kv, shapes, clickbench, tpch, join, "
               "groupby (benches/workloads/), and ingestion (loads of taxi and iot only). tpch's "
               "size is lineitem's rows (--rows tpch=6m is scale factor 1; see "
               "bench_lib/data.py), join's the rows of x. "
               "Results: bench-results/<timestamp>.{json,md,svg}.")
    ap.add_argument("--scale", choices=["small", "default", "large"], default="default",
                    help="data sizes (default: %(default)s; see bench_lib/data.py)")
    ap.add_argument("--rows", help="rows for every data set (N, 500k, 2m) or per set "
                                   "(taxi=1m,iot=2m,tpch=6m,join=10m,groupby=1m); overrides --scale")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1,
                    help="threads for every engine (default: all cores, %(default)s)")
    ap.add_argument("--runs", type=int, default=5, help="timed runs per query (default 5)")
    ap.add_argument("--warmup", type=int, default=1, help="untimed runs first (default 1)")
    ap.add_argument("--query-seconds", type=float, default=20.0,
                    help="stop timing a query once its timed runs took this long together "
                         "(at least one runs; default %(default)s)")
    ap.add_argument("--lookups", type=int, default=1000,
                    help="statements per kv lookup series (default 1000)")
    ap.add_argument("--lookup-seconds", type=float, default=15.0,
                    help="stop a lookup series once its statements took this long together "
                         "(at least one runs; default %(default)s)")
    ap.add_argument("--only", help="comma-separated workloads to run")
    ap.add_argument("--peers", default="", help="comma-separated peers: duckdb,clickhouse,polars")
    ap.add_argument("--smoke", action="store_true",
                    help="tiny data, katydid only (debug build), every workload, one run, "
                         "checks that answers are produced; times nothing")
    ap.add_argument("--save-table", action="store_true",
                    help="also write bench-results/README-table.md and README-chart.svg "
                         "(kept in git, for the README)")
    ap.add_argument("--render", metavar="JSON",
                    help="print the table and rewrite the chart of an earlier run's JSON; "
                         "runs nothing")
    ap.add_argument("--compare-to", metavar="JSON",
                    help="an earlier run (bench-results/<timestamp>.json): also print "
                         "katydid's time per query before and after, flagging changes beyond "
                         "noise (see benches/workloads/targets.json)")
    ap.add_argument("--query-timeout", type=float, default=600.0, metavar="SECONDS",
                    help="give up on a query or lookup series (its warm-up and timed runs "
                         "together) that takes longer, report it as timed out and go on with "
                         "the rest; loads are never cut short (default %(default)g; 0: wait "
                         "forever)")
    ap.add_argument("--no-load-peak", action="store_true",
                    help="skip the extra katydid load per table that measures its peak "
                         "memory")
    ap.add_argument("--no-build", action="store_true", help="use the binaries as they are")
    args = ap.parse_args(argv)
    args.peers = [p.strip() for p in args.peers.split(",") if p.strip()]
    for p in args.peers:
        if p not in PEERS:
            ap.error(f"unknown peer {p!r} (expected some of {', '.join(PEERS)})")
    if args.smoke:
        args.scale, args.runs, args.warmup, args.lookups = "smoke", 0, 0, 20
        if args.peers:
            ap.error("--smoke runs katydid only")
    if args.threads < 1 or args.runs < 0 or args.warmup < 0 or args.lookups < 1:
        ap.error("--threads and --lookups must be at least 1, --runs and --warmup at least 0")
    return args


def target_dir():
    return os.environ.get("CARGO_TARGET_DIR") or os.path.join(ROOT, "target")


def build(args):
    profile = "debug" if args.smoke else "release"
    if not args.no_build:
        cmd = ["cargo", "build", "--bin", "katydid", "--bin", "katydid-bench"]
        if profile == "release":
            cmd.insert(2, "--release")
        print("bench: " + " ".join(cmd), file=sys.stderr)
        subprocess.run(cmd, cwd=ROOT, check=True)
    bindir = os.path.join(target_dir(), profile)
    return os.path.join(bindir, "katydid"), os.path.join(bindir, "katydid-bench")


def ensure_venv(peers):
    """The venv's python, with the peers' packages installed from PyPI."""
    venv = os.path.join(ROOT, ".venv")
    py = os.path.join(venv, "bin", "python")
    if not os.path.exists(py):
        print(f"bench: creating {venv}", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "venv", venv], check=True)
    missing = [p for p in peers if subprocess.run(
        [py, "-c", f"import {MODULES[p]}"], capture_output=True).returncode != 0]
    if missing:
        pins = {}
        with open(REQUIREMENTS) as f:
            for line in f:
                line = line.split("#", 1)[0].strip()
                if line:
                    name = line.split("=")[0].split(">")[0].split("<")[0].strip()
                    pins[name] = line
        pkgs = [pins.get(PACKAGES[p], PACKAGES[p]) for p in missing]
        print(f"bench: installing {' '.join(pkgs)} into {venv}", file=sys.stderr)
        subprocess.run([py, "-m", "pip", "install", "--quiet", *pkgs], check=True)
    return py


def machine_info():
    cpu = "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        cpu = platform.processor() or "unknown"
    mem = None
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    mem = int(line.split()[1]) * 1024
    except OSError:
        pass
    return {"cpu": cpu, "cores": os.cpu_count(), "memory_bytes": mem,
            "os": f"{platform.system()} {platform.release()}", "python": platform.python_version()}


def git_info():
    def run(*cmd):
        try:
            return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True,
                                  check=True).stdout.strip()
        except (OSError, subprocess.CalledProcessError):
            return None
    commit = run("git", "rev-parse", "--short", "HEAD")
    dirty = run("git", "status", "--porcelain", "--untracked-files=no")
    return {"commit": commit, "dirty": bool(dirty)}


# How each engine queries a Parquet file in place: `{file:TABLE}` in a
# workload's SQL is TABLE's file read by the engine's own Parquet reader.
FILE_REFS = {
    "katydid": "'{path}'",
    "duckdb": "read_parquet('{path}')",
    "clickhouse": "file('{path}', Parquet)",
    "polars": "read_parquet('{path}')",
}


def file_refs(text, engine, files):
    """`text` with each `{file:TABLE}` replaced by `engine`'s reference to
    the file of TABLE, and each `{dir:TABLE}` by the directory that file is
    in (for globs over its siblings, which each engine's statement spells
    in its own way; `files`: table name -> path)."""
    def ref(m):
        kind, table = m.group(1), m.group(2)
        if table not in files:
            raise SystemExit(f"bench: {{{kind}:{table}}} names no table of the workload")
        if kind == "dir":
            return os.path.dirname(files[table])
        return FILE_REFS[engine].replace("{path}", files[table])
    return re.sub(r"\{(file|dir):(\w+)\}", ref, text)


def make_plan(engine, selected, paths, keys, args):
    plan = {"threads": args.threads, "runs": args.runs, "warmup": args.warmup,
            "query_seconds": args.query_seconds, "workloads": []}
    for w, want_queries in selected:
        pw = {"name": w.name,
              "tables": [{"name": t, "path": paths[d]} for t, d in w.tables],
              "queries": [], "series": []}
        if want_queries:
            for q in w.queries:
                kind, text = q.statement(engine)
                text = file_refs(text, engine, {t: paths[d] for t, d in w.tables})
                pw["queries"].append({"id": q.id, "kind": kind, "sql": text})
            for lk in w.lookups:
                stmts = data.lookup_statements(lk.template, keys[lk.name])
                pw["series"].append({"id": lk.id, "warmup": stmts[:1], "sql": stmts[1:],
                                     "max_seconds": args.lookup_seconds})
        plan["workloads"].append(pw)
    return plan


def run_engine(engine, plan, tmp, katydid_bench, venv_python, threads, timeout=0):
    """Runs `plan` on `engine`, one runner process per workload, and merges
    their outputs.

    With a `timeout`, a runner that has been on one query or lookup series
    (a progress line names each load, query and series as it starts) for
    that many seconds is killed; the step is reported as timed out and the
    workload runs again without it (already answered queries run again too,
    since a runner writes its results only at the end). Loads are never cut
    short."""
    plan_path = os.path.join(tmp, f"plan-{engine}.json")
    out_path = os.path.join(tmp, f"out-{engine}.json")
    if engine == "katydid":
        cmd = [katydid_bench, "--plan", plan_path, "--out", out_path]
        env = dict(os.environ)
    else:
        cmd = [venv_python, "-m", "bench_lib.peer", "--engine", engine,
               "--plan", plan_path, "--out", out_path]
        env = dict(os.environ, POLARS_MAX_THREADS=str(threads),
                   PYTHONPATH=os.path.join(ROOT, "scripts"))
    print(f"bench: running {engine}", file=sys.stderr, flush=True)
    merged = {"engine": engine, "workloads": []}
    for w in plan["workloads"]:
        timed_out = {}  # id -> error, in the order they happened
        for t in w["tables"]:
            data.warm_page_cache(t["path"])
        while True:
            sub = dict(plan, workloads=[_without(w, timed_out)])
            with open(plan_path, "w") as f:
                json.dump(sub, f)
            if os.path.exists(out_path):
                os.remove(out_path)
            status, last = _run_watched(cmd, env, timeout,
                                        lambda line: _step(line, engine) not in (None, "load"))
            if status == "timeout":
                step = _step(last, engine)
                why = f"timed out: no answer within {timeout:g} s (the runner was stopped)"
                if step in timed_out:  # cannot happen: it is no longer in the plan
                    merged["workloads"].append(_failed(w, why))
                    break
                timed_out[step] = why
                print(f"bench: {engine}: {step} {why}; running the rest of {w['name']} again",
                      file=sys.stderr, flush=True)
                continue
            if status != 0 or not os.path.exists(out_path):
                merged["workloads"].append(_failed(
                    w, f"{engine} runner exited with status {status}"))
                break
            with open(out_path) as f:
                out = json.load(f)
            for key in ("version", "threads"):
                merged.setdefault(key, out.get(key))
            merged["workloads"].append(_with_timeouts(out["workloads"][0], w, timed_out))
            break
    return merged


def _run_watched(cmd, env, timeout, watched):
    """Runs `cmd`, echoing its stderr; returns (exit status or "timeout",
    its last stderr line). Only while `watched(last line)` holds may it time
    out."""
    proc = subprocess.Popen(cmd, env=env, stdout=sys.stderr, stderr=subprocess.PIPE, text=True)
    state = {"at": time.monotonic(), "line": ""}

    def pump():
        for line in proc.stderr:
            sys.stderr.write(line)
            sys.stderr.flush()
            state["at"], state["line"] = time.monotonic(), line.rstrip("\n")
    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    while proc.poll() is None:
        if timeout and watched(state["line"]) and time.monotonic() - state["at"] > timeout:
            proc.kill()
            proc.wait()
            reader.join(5)
            return "timeout", state["line"]
        time.sleep(0.2)
    reader.join(5)
    return proc.returncode, state["line"]


def _step(line, engine):
    """What a runner's progress line says it started: a query or series id,
    "load", or None."""
    prefix = f"{engine}:   "
    if not line.startswith(prefix):
        return None
    step = line[len(prefix):].strip()
    return "load" if step.startswith("load ") else step


def _without(w, skip):
    return dict(w, queries=[q for q in w["queries"] if q["id"] not in skip],
                series=[s for s in w["series"] if s["id"] not in skip])


def _with_timeouts(out, w, timed_out):
    """The runner's output for workload `w` with the timed-out queries and
    series put back in plan order as errors."""
    for key in ("queries", "series"):
        got = {r["id"]: r for r in out.get(key, [])}
        out[key] = [got.get(item["id"]) or {"id": item["id"], "ok": False,
                                             "error": timed_out.get(item["id"], "missing")}
                    for item in w[key]]
    return out


def _failed(w, error):
    """A workload whose runner failed: every table, query and series errs."""
    return {"name": w["name"], "tables": [{"name": t["name"], "error": error} for t in w["tables"]],
            "queries": [{"id": q["id"], "ok": False, "error": error} for q in w["queries"]],
            "series": [{"id": s["id"], "ok": False, "error": error} for s in w["series"]]}


def measure_load_peaks(out, plan, tmp, katydid_bench, threads):
    """Runs `katydid-bench --load-peak` on each table katydid loaded and
    adds the figures to its output, as `load_peak` (or `{"error": …}`)."""
    paths = {(w["name"], t["name"]): t["path"] for w in plan["workloads"] for t in w["tables"]}
    for w in out.get("workloads", []):
        for t in w.get("tables", []):
            path = paths.get((w["name"], t["name"]))
            if "error" in t or path is None:
                continue
            print(f"bench: measuring katydid's load peak for {t['name']}", file=sys.stderr,
                  flush=True)
            dest = os.path.join(tmp, "load-peak.json")
            data.warm_page_cache(path)
            proc = subprocess.run([katydid_bench, "--load-peak", path, "--threads", str(threads),
                                   "--out", dest], stdout=sys.stderr, stderr=subprocess.PIPE,
                                  text=True)
            if proc.returncode != 0 or not os.path.exists(dest):
                t["load_peak"] = {"error": (proc.stderr or "").strip()[-300:] or
                                  f"katydid-bench --load-peak exited with {proc.returncode}"}
                continue
            with open(dest) as f:
                t["load_peak"] = json.load(f)
            os.remove(dest)


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    goals = targets.load()
    old = None
    if args.compare_to:
        with open(args.compare_to) as f:
            old = json.load(f)
    if args.render:
        with open(args.render) as f:
            doc = json.load(f)
        before = targets.before_after(old, doc, doc["summary"], goals) if old else None
        text = report.markdown(doc, doc["summary"], goals, before)
        print(text)
        base = os.path.splitext(args.render)[0]
        write_outputs(base, doc, text, args.save_table, write_json=False)
        return 0
    all_workloads = workloads.load_all(os.path.join(ROOT, "benches", "workloads"))
    names = [w.name for w in all_workloads]
    if args.only:
        only = [x.strip() for x in args.only.split(",") if x.strip()]
        for x in only:
            if x not in names and x != "ingestion":
                raise SystemExit(f"bench: unknown workload {x!r} "
                                 f"(expected some of {', '.join(names + ['ingestion'])})")
        selected = []
        for w in all_workloads:
            if w.name in only:
                selected.append((w, True))
            elif "ingestion" in only and w.name in ("taxi", "iot"):
                selected.append((w, False))
    else:
        selected = [(w, True) for w in all_workloads]

    katydid, katydid_bench = build(args)
    rows = data.rows_for(args.scale, args.rows)
    data_dir = os.path.join(ROOT, ".bench-data")
    paths = {}
    for w, _ in selected:
        for _, d in w.tables:
            if d not in paths:
                paths[d] = data.ensure(katydid, data_dir, d, rows[data.base(d)])
    keys = {}
    for w, want in selected:
        if want and w.lookups:
            (_, d), = w.tables
            keys.update(data.lookup_keys(paths[d], w.lookups, args.lookups))

    venv_python = ensure_venv(args.peers) if args.peers else None
    engines = ["katydid"] + args.peers
    started = datetime.datetime.now()
    outputs = {}
    with tempfile.TemporaryDirectory(prefix="katydid-bench-") as tmp:
        for e in engines:
            plan = make_plan(e, selected, paths, keys, args)
            outputs[e] = run_engine(e, plan, tmp, katydid_bench, venv_python, args.threads,
                                    args.query_timeout)
            if e == "katydid" and not args.no_load_peak:
                measure_load_peaks(outputs[e], plan, tmp, katydid_bench, args.threads)

    doc = {
        "started": started.isoformat(timespec="seconds"),
        "machine": machine_info(),
        "git": git_info(),
        "settings": {"scale": "custom" if args.rows else args.scale,
                     "rows": {data.base(d): rows[data.base(d)] for d in paths},
                     **({"tpch_scale_factor": data.tpch_scale_factor(rows["tpch"])}
                        if any(data.base(d) == "tpch" for d in paths) else {}),
                     "threads": args.threads, "runs": args.runs, "warmup": args.warmup,
                     "query_seconds": args.query_seconds,
                     "lookups": args.lookups, "lookup_seconds": args.lookup_seconds, "peers": args.peers, "smoke": args.smoke,
                     "float_rel_tolerance": compare.FLOAT_REL, "data_seed": data.SEED,
                     "files": {d: {"path": os.path.relpath(p, ROOT),
                                   "bytes": os.path.getsize(p)} for d, p in paths.items()},
                     "datasets": {f"{w.name}/{t}": d for w, _ in selected for t, d in w.tables}},
        "versions": {e: outputs[e].get("version") for e in engines},
        "engines": outputs,
    }
    doc["versions"]["rustc"] = _rustc_version()
    summary = report.analyse(doc, [w for w, want in selected if want], keys, goals)
    doc["summary"] = summary
    before = targets.before_after(old, doc, summary, goals) if old else None
    text = report.markdown(doc, summary, goals, before)
    print(text)

    if args.smoke:
        problems = report.smoke_problems(summary)
        pending = report.smoke_pending(summary)
        for qid, reason, error in pending:
            if error is None:
                print(f"bench smoke: {qid} answers now: remove its `-- pending:` line "
                      f"({reason})", file=sys.stderr)
            else:
                print(f"bench smoke: PENDING (known gap, not counted as a failure): {qid}: "
                      f"{reason}; katydid says: {error}", file=sys.stderr)
        for p in problems:
            print(f"bench smoke: FAILED: {p}", file=sys.stderr)
        total = len(summary["queries"]) + len(summary["lookups"]) + len(summary["loads"])
        waiting = sum(1 for _, _, error in pending if error is not None)
        print(f"smoke: {total - len(problems) - waiting} passed, {len(problems)} failed"
              + (f", {waiting} pending (known gaps, listed above)" if waiting else ""),
              file=sys.stderr)
        return 1 if problems else 0

    out_dir = os.path.join(ROOT, "bench-results")
    os.makedirs(out_dir, exist_ok=True)
    write_outputs(os.path.join(out_dir, started.strftime("%Y%m%d-%H%M%S")), doc, text,
                  args.save_table)
    return 0


def write_outputs(base, doc, text, save_table, write_json=True):
    """BASE.json (raw figures), BASE.md (the table), BASE.svg (the chart);
    with `save_table`, also the README copies beside them."""
    if write_json:
        with open(base + ".json", "w") as f:
            json.dump(doc, f, indent=1)
    with open(base + ".md", "w") as f:
        f.write(text)
    with open(base + ".svg", "w") as f:
        f.write(chart.svg(doc, doc["summary"]))
    if save_table:
        out_dir = os.path.dirname(base)
        with open(os.path.join(out_dir, "README-table.md"), "w") as f:
            f.write(text)
        shutil.copyfile(base + ".svg", os.path.join(out_dir, "README-chart.svg"))
    print(f"bench: wrote {base}.json, .md and .svg", file=sys.stderr)


def _rustc_version():
    try:
        return subprocess.run(["rustc", "--version"], capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None
