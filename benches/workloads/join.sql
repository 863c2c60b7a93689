-- Workload join: the 5 questions of the H2O db-benchmark join task (now
-- kept by DuckDB Labs), on the tables `katydid generate join` writes (a
-- port of its join-datagen.R: x of N rows, small N/1e6, medium N/1e3, big
-- N; see datasets/src/join.rs). The suite's size for join is x's row
-- count; the issue's targets are at 10M.
--
-- Each join is the text of db-benchmark's DuckDB solution
-- (duckdb/join-duckdb.py, `CREATE TABLE ans AS SELECT …`), wrapped so
-- every engine returns one row: the row count and the solution's own
-- check, sum(v1) and sum(v2). So each engine does the join and the sums,
-- and none ships millions of rows back to Python.
--
-- Format: README.md beside this file. The first table is the one whose row
-- count the report's rows/s figures use.

-- table: x join/x
-- table: small join/small
-- table: medium join/medium
-- table: big join/big

-- query: q1
-- about: small inner on int: x JOIN small USING (id1).
SELECT count(*), sum(v1), sum(v2) FROM (
    SELECT x.*, small.id4 AS small_id4, v2 FROM x JOIN small USING (id1)
) AS ans;

-- query: q2
-- about: medium inner on int: x JOIN medium USING (id2).
SELECT count(*), sum(v1), sum(v2) FROM (
    SELECT x.*, medium.id1 AS medium_id1, medium.id4 AS medium_id4, medium.id5 AS medium_id5, v2
    FROM x JOIN medium USING (id2)
) AS ans;

-- query: q3
-- about: medium outer on int: x LEFT JOIN medium USING (id2); the 10% of
-- x's id2 keys missing from medium keep their rows with v2 NULL (0 in
-- ClickHouse without join_use_nulls: the sums agree).
SELECT count(*), sum(v1), sum(v2) FROM (
    SELECT x.*, medium.id1 AS medium_id1, medium.id4 AS medium_id4, medium.id5 AS medium_id5, v2
    FROM x LEFT JOIN medium USING (id2)
) AS ans;

-- query: q4
-- about: medium inner on factor: x JOIN medium USING (id5), the string
-- key (db-benchmark's DuckDB solution makes id5 an ENUM; here every engine
-- joins the column as it loaded it).
SELECT count(*), sum(v1), sum(v2) FROM (
    SELECT x.*, medium.id1 AS medium_id1, medium.id2 AS medium_id2, medium.id4 AS medium_id4, v2
    FROM x JOIN medium USING (id5)
) AS ans;

-- query: q5
-- about: big inner on int: x JOIN big USING (id3).
SELECT count(*), sum(v1), sum(v2) FROM (
    SELECT x.*, big.id1 AS big_id1, big.id2 AS big_id2, big.id4 AS big_id4, big.id5 AS big_id5, big.id6 AS big_id6, v2
    FROM x JOIN big USING (id3)
) AS ans;
