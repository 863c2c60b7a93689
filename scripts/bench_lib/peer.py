"""Runs a benchmark plan on one peer engine, in its own process.

    .venv/bin/python -m bench_lib.peer --engine duckdb --plan PLAN --out OUT

The plan and the output have the format of `katydid-bench` (see
src/bin/katydid-bench.rs): for each workload, load its tables into memory,
run each query with warm-up and timed runs, run each lookup series one
statement after another on this thread, and write JSON. Each engine uses the
plan's thread count: DuckDB `SET threads`, chdb `max_threads`, Polars
`POLARS_MAX_THREADS` (set by the parent before this process starts, since
Polars reads it at import). Times include fetching the result into Python
objects, as katydid's include building its result rows.
"""

import argparse
import datetime
import decimal
import gc
import json
import math
import os
import sys
import time


def value_json(v):
    """A result value in katydid-bench's JSON convention."""
    if v is None:
        return None
    if isinstance(v, bool):
        return v
    if isinstance(v, int):
        return v
    if isinstance(v, float):
        if math.isnan(v):
            return "NaN"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return v
    if isinstance(v, decimal.Decimal):
        return float(v)
    if isinstance(v, datetime.datetime):
        s = v.strftime("%Y-%m-%d %H:%M:%S")
        if v.microsecond:
            s += (".%06d" % v.microsecond).rstrip("0")
        return s
    if isinstance(v, datetime.date):
        return v.strftime("%Y-%m-%d")
    if hasattr(v, "item"):  # numpy scalars
        return value_json(v.item())
    return str(v)


class DuckDB:
    name = "duckdb"

    def __init__(self, threads):
        import duckdb
        self.duckdb = duckdb
        self.con = duckdb.connect(":memory:")
        self.con.execute(f"SET threads = {threads}")
        self.threads = self.con.execute("SELECT current_setting('threads')").fetchone()[0]

    def version(self):
        return self.duckdb.__version__

    def _table_bytes(self):
        rows = self.con.execute(
            "SELECT coalesce(sum(memory_usage_bytes), 0) FROM duckdb_memory() "
            "WHERE tag IN ('IN_MEMORY_TABLE', 'OVERFLOW_STRINGS', 'COLUMN_DATA')").fetchone()
        return int(rows[0])

    def load(self, table, path):
        before = self._table_bytes()
        start = time.perf_counter()
        if path.endswith(".parquet"):
            self.con.execute(f"CREATE TABLE {table} AS SELECT * FROM read_parquet('{path}')")
            load_s = time.perf_counter() - start
            rows = self.con.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
            return {"rows": rows, "load_s": load_s, "mem_bytes": self._table_bytes() - before,
                    "mem_source": "duckdb_memory() IN_MEMORY_TABLE (+ overflow strings)",
                    "how": "read_parquet"}
        # allow_quoted_nulls = false: a quoted empty field ("") is an empty
        # string, an unquoted one NULL (PostgreSQL's COPY rule; chdb and
        # Polars read CSV this way by default).
        self.con.execute(f"CREATE TABLE {table} AS SELECT * FROM "
                         f"read_csv('{path}', allow_quoted_nulls = false)")
        load_s = time.perf_counter() - start
        rows = self.con.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
        return {"rows": rows, "load_s": load_s, "mem_bytes": self._table_bytes() - before,
                "mem_source": "duckdb_memory() IN_MEMORY_TABLE (+ overflow strings)"}

    def drop(self, table):
        self.con.execute(f"DROP TABLE {table}")

    def query(self, kind, text):
        cur = self.con.execute(text)
        rows = cur.fetchall()
        cols = [d[0] for d in cur.description]
        return cols, rows


class ClickHouse:
    name = "clickhouse"

    def __init__(self, threads):
        import chdb
        from chdb import session
        self.chdb = chdb
        self.sess = session.Session()
        self.sess.query(f"SET max_threads = {threads}")
        # Parquet columns by name whatever their case, as DuckDB and
        # katydid match them (the TLC files spell `airport_fee` both ways).
        self.sess.query("SET input_format_parquet_case_insensitive_column_matching = 1")
        self.threads = self._rows(self.sess.query("SELECT getSetting('max_threads')", "JSONCompact"))[1][0][0]

    @staticmethod
    def _rows(res):
        doc = json.loads(res.bytes() or b"{}")
        return [m["name"] for m in doc.get("meta", [])], doc.get("data", [])

    def version(self):
        cols, rows = self._rows(self.sess.query("SELECT version()", "JSONCompact"))
        return f"chdb {self.chdb.__version__} (ClickHouse {rows[0][0]})"

    def load(self, table, path):
        start = time.perf_counter()
        fmt = "Parquet" if path.endswith(".parquet") else "CSVWithNames"
        self.sess.query(f"CREATE TABLE {table} ENGINE = Memory AS "
                        f"SELECT * FROM file('{path}', {fmt})")
        load_s = time.perf_counter() - start
        _, rows = self._rows(self.sess.query(
            f"SELECT total_rows, total_bytes FROM system.tables "
            f"WHERE database = currentDatabase() AND name = '{table}'", "JSONCompact"))
        return {"rows": int(rows[0][0]), "load_s": load_s, "mem_bytes": int(rows[0][1]),
                "mem_source": "system.tables.total_bytes"}

    def drop(self, table):
        self.sess.query(f"DROP TABLE {table}")

    def query(self, kind, text):
        res = self.sess.query(
            text + " SETTINGS output_format_json_quote_64bit_integers = 0, "
            "output_format_json_quote_64bit_floats = 0, output_format_json_quote_denormals = 1",
            "JSONCompact")
        return self._rows(res)


class Polars:
    name = "polars"

    def __init__(self, threads):
        import polars as pl
        self.pl = pl
        self.frames = {}
        self.ctx = pl.SQLContext()
        self.threads = pl.thread_pool_size()

    def version(self):
        return self.pl.__version__

    def load(self, table, path):
        start = time.perf_counter()
        if path.endswith(".parquet"):
            df = self.pl.read_parquet(path)
            load_s = time.perf_counter() - start
            self.frames[table] = df
            self.ctx.register(table, df)
            return {"rows": df.height, "load_s": load_s, "mem_bytes": int(df.estimated_size()),
                    "mem_source": "DataFrame.estimated_size()", "how": "read_parquet"}
        note = "read_csv(try_parse_dates=True)"
        try:
            df = self.pl.read_csv(path, try_parse_dates=True)
        except Exception:
            # The 100-row schema sample can mistype a column; then types
            # from every row, as katydid infers them (much slower, and the
            # failed attempt stays in the time).
            df = self.pl.read_csv(path, try_parse_dates=True, infer_schema_length=None)
            note += ", retried with infer_schema_length=None"
        load_s = time.perf_counter() - start
        self.frames[table] = df
        self.ctx.register(table, df)
        return {"rows": df.height, "load_s": load_s, "mem_bytes": int(df.estimated_size()),
                "mem_source": "DataFrame.estimated_size()", "how": note}

    def drop(self, table):
        self.ctx.unregister(table)
        del self.frames[table]

    def query(self, kind, text):
        if kind == "python":
            out = eval(text, {"pl": self.pl, **self.frames})
            if isinstance(out, self.pl.LazyFrame):
                out = out.collect()
        else:
            out = self.ctx.execute(text, eager=True)
        return out.columns, out.rows()


ENGINES = {"duckdb": DuckDB, "clickhouse": ClickHouse, "polars": Polars}


def run_query(engine, q, warmup, runs, budget):
    kind = q.get("kind", "sql")
    times = []
    result = None
    for i in range(max(warmup + runs, 1)):
        if sum(times) >= budget:
            break
        start = time.perf_counter()
        try:
            result = engine.query(kind, q["sql"])
        except Exception as e:  # the engine's error is the report
            return {"id": q["id"], "ok": False, "error": f"{type(e).__name__}: {e}".strip()}
        if i >= warmup:
            times.append(time.perf_counter() - start)
    cols, rows = result
    return {"id": q["id"], "ok": True, "times_s": times, "columns": list(cols),
            "rows": [[value_json(v) for v in row] for row in rows]}


def run_series(engine, s):
    first = None
    try:
        for sql in s.get("warmup", []):
            start = time.perf_counter()
            engine.query("sql", sql)
            if first is None:
                first = time.perf_counter() - start
        lat = []
        returned = 0
        budget = s.get("max_seconds") or float("inf")
        wall = time.perf_counter()
        for sql in s["sql"]:
            if sum(lat) >= budget:
                break
            start = time.perf_counter()
            _, rows = engine.query("sql", sql)
            lat.append(time.perf_counter() - start)
            returned += len(rows)
        wall = time.perf_counter() - wall
    except Exception as e:
        return {"id": s["id"], "ok": False, "error": f"{type(e).__name__}: {e}".strip()}
    return {"id": s["id"], "ok": True, "latencies_s": lat, "wall_s": wall, "first_s": first,
            "rows_returned": returned}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--engine", required=True, choices=sorted(ENGINES))
    ap.add_argument("--plan", required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    with open(args.plan) as f:
        plan = json.load(f)
    threads = int(plan.get("threads") or os.cpu_count())
    warmup, runs = int(plan.get("warmup", 1)), int(plan.get("runs", 5))
    budget = plan.get("query_seconds") or float("inf")
    engine = ENGINES[args.engine](threads)
    out = {"engine": args.engine, "version": engine.version(), "threads": engine.threads,
           "workloads": []}
    for w in plan["workloads"]:
        print(f"{args.engine}: workload {w['name']}", file=sys.stderr, flush=True)
        tables, queries, series = [], [], []
        loaded = []
        for t in w.get("tables", []):
            print(f"{args.engine}:   load {t['name']} from {t['path']}", file=sys.stderr, flush=True)
            try:
                fig = engine.load(t["name"], t["path"])
                fig["name"] = t["name"]
                fig["csv_bytes"] = os.path.getsize(t["path"])
                loaded.append(t["name"])
            except Exception as e:
                fig = {"name": t["name"], "error": f"{type(e).__name__}: {e}".strip()}
            tables.append(fig)
        for q in w.get("queries", []):
            print(f"{args.engine}:   {q['id']}", file=sys.stderr, flush=True)
            queries.append(run_query(engine, q, warmup, runs, budget))
        for s in w.get("series", []):
            print(f"{args.engine}:   {s['id']}", file=sys.stderr, flush=True)
            series.append(run_series(engine, s))
        for t in loaded:
            engine.drop(t)
        gc.collect()
        out["workloads"].append({"name": w["name"], "tables": tables, "queries": queries,
                                 "series": series})
    with open(args.out, "w") as f:
        json.dump(out, f)


if __name__ == "__main__":
    main()
