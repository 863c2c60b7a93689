#!/usr/bin/env python3
"""Computes the expected answers of tests/sample/queries.sql with DuckDB.

The answers are established independently of katydid: DuckDB loads the same
gzipped sample and runs each query (or its `-- duckdb:` spelling), and the
result is written to tests/sample/expected/<name>.csv (header row, NULL as an
empty field, floats in Python's shortest round-trip form, timestamps as
YYYY-MM-DD HH:MM:SS).

Usage: python3 scripts/sample_answers.py [path/to/nyc-taxi-trips-2013-sample.csv.gz]
Needs: pip install duckdb
"""
import csv
import datetime
import pathlib
import sys

import duckdb

ROOT = pathlib.Path(__file__).resolve().parent.parent
QUERIES = ROOT / "tests" / "sample" / "queries.sql"
OUT = ROOT / "tests" / "sample" / "expected"


def parse_blocks(text):
    blocks, cur, sql = [], {}, []
    for line in text.splitlines():
        s = line.strip()
        if s.startswith("-- name:"):
            cur = {"name": s.split(":", 1)[1].strip()}
            sql = []
        elif s.startswith("-- duckdb:"):
            cur["duckdb"] = s.split(":", 1)[1].strip().rstrip(";")
        elif s.startswith("--") or not s:
            continue
        elif cur:
            sql.append(s)
            if s.endswith(";"):
                cur["sql"] = " ".join(sql).rstrip(";")
                blocks.append(cur)
                cur = {}
    return blocks


def fmt(v):
    if v is None:
        return ""
    if isinstance(v, datetime.datetime):
        return v.strftime("%Y-%m-%d %H:%M:%S")
    if isinstance(v, float):
        return repr(v)
    return str(v)


def main():
    sample = sys.argv[1] if len(sys.argv) > 1 else str(
        ROOT.parent / "shared" / "datasets" / "nyc-taxi-trips-2013-sample.csv.gz")
    con = duckdb.connect()
    con.execute("SET threads = 1")
    con.execute(
        f"CREATE TABLE trips AS SELECT * FROM read_csv('{sample}', header = true, sample_size = -1)")
    OUT.mkdir(parents=True, exist_ok=True)
    for b in parse_blocks(QUERIES.read_text()):
        q = b.get("duckdb", b["sql"])
        cur = con.execute(q)
        names = [d[0] for d in cur.description]
        rows = cur.fetchall()
        with open(OUT / f"{b['name']}.csv", "w", newline="") as f:
            w = csv.writer(f, lineterminator="\n")
            w.writerow(names)
            for r in rows:
                w.writerow([fmt(v) for v in r])
        print(f"{b['name']}: {len(rows)} rows")


if __name__ == "__main__":
    main()
