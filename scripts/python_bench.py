"""Timings of the Python package against DuckDB (issue 35's targets).

    pip install ./python duckdb polars pyarrow
    python scripts/python_bench.py [--rows 1000000] [--register-rows 10000000] [--threads 2]

1. Results as Arrow: a result of ROWS rows x 5 columns (integer, float,
   string, timestamp, and an integer column that is half NULL) of a table
   loaded from the same CSV file, taken as a pyarrow Table, query included
   on both sides: katydid `con.sql(q).arrow()` (the query makes Arrow
   batches, which pyarrow takes without a copy), DuckDB `con.sql(q).arrow()`
   read to a Table (its relations run when converted). The same for a
   Polars DataFrame (`.pl()`).
2. Register: a Polars frame of REGISTER_ROWS rows (the same 5 columns) made
   a table. katydid: `con.register`; DuckDB: `con.register` then `CREATE
   TABLE t AS SELECT * FROM view` (DuckDB's own storage, as katydid's).

Each figure is the best of 5 runs (3 for register), in seconds. Prints a table; times
nothing in tests.
"""

import argparse
import datetime
import os
import tempfile
import time

import duckdb
import numpy as np
import polars as pl
import pyarrow as pa

import katydid


def frame(rows: int, seed: int = 35) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    start = np.datetime64("2013-01-01T00:00:00", "us")
    stamps = start + rng.integers(0, 365 * 86_400_000_000, rows).astype("timedelta64[us]")
    words = np.array([f"zone {i}" for i in range(5000)])
    nullable = pa.array(rng.integers(0, 100, rows), mask=rng.random(rows) < 0.5)
    return pl.DataFrame(
        {
            "id": np.arange(rows, dtype=np.int64),
            "amount": rng.normal(20.0, 8.0, rows).round(2),
            "zone": words[rng.integers(0, len(words), rows)],
            "stamp": stamps,
            "maybe": pl.from_arrow(nullable),
        }
    )


def duck_table(relation) -> pa.Table:
    """DuckDB's `.arrow()` as a Table: from 1.4 on it gives a
    RecordBatchReader, read here to the end."""
    out = relation.arrow()
    return out.read_all() if isinstance(out, pa.RecordBatchReader) else out


def best(f, runs: int = 5) -> float:
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--register-rows", type=int, default=10_000_000)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()

    kcon = katydid.connect(threads=args.threads)
    dcon = duckdb.connect()
    dcon.execute(f"SET threads = {args.threads}")

    df = frame(args.rows)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "result.csv")
        df.write_csv(path, datetime_format="%Y-%m-%d %H:%M:%S%.6f")
        kcon.load(path, "t")
        dcon.execute(f"CREATE TABLE t AS SELECT * FROM read_csv('{path}')")
    query = "SELECT id, amount, zone, stamp, maybe FROM t"
    result = kcon.sql(query)
    assert len(result) == args.rows
    del result
    k_full = best(lambda: kcon.sql(query).arrow())
    d_full = best(lambda: duck_table(dcon.sql(query)))
    k_polars = best(lambda: kcon.sql(query).pl())
    d_polars = best(lambda: dcon.sql(query).pl())
    k_table, d_table = kcon.sql(query).arrow(), duck_table(dcon.sql(query))
    assert k_table.num_rows == d_table.num_rows == args.rows

    big = frame(args.register_rows, seed=36)
    k_register = best(lambda: kcon.register("r", big, replace=True), runs=3)

    def duck_register():
        dcon.register("frame_view", big)
        dcon.execute("CREATE OR REPLACE TABLE r AS SELECT * FROM frame_view")
        dcon.unregister("frame_view")

    d_register = best(duck_register, runs=3)
    print(f"threads={args.threads}; katydid {katydid.__name__}, duckdb {duckdb.__version__}, "
          f"polars {pl.__version__}, pyarrow {pa.__version__}; {datetime.date.today()}; "
          f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"| step | katydid s | DuckDB s |")
    print(f"|---|---|---|")
    print(f"| {args.rows:,} x 5 result -> pyarrow Table (query + conversion) | {k_full:.3f} | {d_full:.3f} |")
    print(f"| {args.rows:,} x 5 result -> Polars DataFrame (query + conversion) | {k_polars:.3f} | {d_polars:.3f} |")
    print(f"| register {args.register_rows:,}-row Polars frame | {k_register:.3f} | {d_register:.3f} |")


if __name__ == "__main__":
    main()
