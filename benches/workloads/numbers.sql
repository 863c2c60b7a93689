-- Workload numbers: the PostgreSQL HyperLogLog article; a = b = c = d = n
-- for n in 1..N, so every value is unique.
-- Format: see README.md beside this file.

-- table: numbers numbers

-- query: count
SELECT count(*) FROM numbers;

-- query: distinct
-- about: exact (ClickHouse runs count(DISTINCT) as uniqExact).
SELECT count(DISTINCT a) FROM numbers;

-- query: approx_distinct
-- about: HyperLogLog (DuckDB approx_count_distinct, ClickHouse uniq,
-- Polars approx_n_unique).
-- check: approx 0.05
SELECT approx_count_distinct(a) FROM numbers;
-- for: clickhouse
SELECT uniq(a) FROM numbers;
-- for: polars python
numbers.select(pl.col("a").approx_n_unique())
