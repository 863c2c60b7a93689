#!/usr/bin/env python3
"""Checks katydid's Parquet reading and COPY writing against DuckDB.

Writes TLC-like months with `katydid generate tlc` (their schemas drift),
then compares, per PULocationID, counts and sums over the glob of months
as katydid answers them and as DuckDB answers them with
`union_by_name=true`; then has katydid COPY the whole glob to one Parquet
file and checks that DuckDB reads that file back to the same answers.

Not run by CI (it needs DuckDB). Usage:
    python3 -m venv /tmp/ddb && /tmp/ddb/bin/pip install duckdb
    /tmp/ddb/bin/python scripts/parquet_duckdb_check.py target/release/katydid [ROWS]
"""
import csv
import io
import subprocess
import sys
import tempfile
from pathlib import Path

import duckdb

QUERY = (
    "SELECT PULocationID, count(*) AS n, round(sum(total_amount), 2) AS revenue, "
    "round(sum(passenger_count), 2) AS pax, count(airport_fee) AS fees, "
    "round(sum(cbd_congestion_fee), 2) AS cbd FROM {src} GROUP BY PULocationID ORDER BY PULocationID"
)


def norm(rows):
    return [tuple(None if v in ("", None) else round(float(v), 2) for v in r) for r in rows]


def main():
    katydid = sys.argv[1]
    rows = sys.argv[2] if len(sys.argv) > 2 else "100000"
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        subprocess.run([katydid, "generate", "tlc", "--rows", rows, "--out", str(tmp / "tlc")], check=True)
        glob = str(tmp / "tlc" / "yellow_tripdata_*.parquet")
        copy = str(tmp / "all.parquet")
        sql = QUERY.format(src=f"'{glob}'") + f";\nCOPY (SELECT * FROM '{glob}') TO '{copy}';\n"
        out = subprocess.run([katydid, "--format", "csv"], input=sql, capture_output=True, text=True, check=True)
        first = out.stdout.split("count\n")[0]
        ours = norm(list(csv.reader(io.StringIO(first)))[1:])
        theirs = norm(duckdb.sql(QUERY.format(src=f"read_parquet('{glob}', union_by_name=true)")).fetchall())
        back = norm(duckdb.sql(QUERY.format(src=f"'{copy}'")).fetchall())
        ok = ours == theirs and back == theirs
        print(f"katydid glob == DuckDB glob: {ours == theirs} ({len(ours)} groups)")
        print(f"DuckDB reading katydid's COPY == DuckDB glob: {back == theirs}")
        sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
