-- Workload iot: QuestDB's parallel-filter article on TSBS-like truck
-- readings (one reading per truck per minute, time ascending).
-- Format: see README.md beside this file.

-- table: readings iot

-- query: q1
-- about: a small box around the Central fleet's depot (7.775 N, 14.925 E)
-- at high speed: the issue's box, unchanged (42 rows at the default scale,
-- 5M rows; none at small scale).
SELECT * FROM readings WHERE velocity > 90.0 AND latitude >= 7.75 AND latitude <= 7.80 AND longitude >= 14.90 AND longitude <= 14.95;

-- query: q2
-- about: the 10 latest matching readings. katydid: LIMIT -10 (the last 10
-- rows in load order); peers: ORDER BY time DESC LIMIT 10. Many readings
-- share a time, so only the time column is compared.
-- check: topn time
SELECT * FROM readings WHERE velocity > 75.0 AND fuel_consumption < 10.0 LIMIT -10;
-- for: duckdb clickhouse polars
SELECT * FROM readings WHERE velocity > 75.0 AND fuel_consumption < 10.0 ORDER BY time DESC LIMIT 10;

-- query: q3
SELECT count(*) FROM readings WHERE velocity > 75.0 AND fuel_consumption < 10.0;
