-- Workload groupby: the 10 questions of the H2O db-benchmark groupby task
-- (now kept by DuckDB Labs) on its G1 data, the table `katydid generate
-- groupby` writes (a port of its groupby-datagen.R at K = 100, no NAs,
-- unsorted: id1, id2 of 100 strings, id3 of N/100, id4, id5 in 1..100, id6
-- in 1..N/100, v1 in 1..5, v2 in 1..15, v3 on [0, 100]; see
-- datasets/src/groupby.rs). The issue's targets are at 10M rows.
--
-- Each question is the text of db-benchmark's DuckDB solution
-- (`CREATE TABLE ans AS SELECT …`; q8 through row_number() OVER), wrapped
-- so every engine returns one row: the answer's row count and the
-- solution's own check, the sum of each aggregate column of `ans`. So each
-- engine does the grouping and the sums, and none ships up to 10M rows
-- back to Python. Sums of floats agree across summation orders within the
-- comparison's relative 1e-6.
--
-- Format: README.md beside this file.

-- table: x groupby

-- query: q1
-- about: sum v1 by id1 (100 groups of a string key).
SELECT count(*), sum(v1) FROM (
    SELECT id1, sum(v1) AS v1 FROM x GROUP BY id1
) AS ans;

-- query: q2
-- about: sum v1 by id1:id2 (10,000 groups of two string keys).
SELECT count(*), sum(v1) FROM (
    SELECT id1, id2, sum(v1) AS v1 FROM x GROUP BY id1, id2
) AS ans;

-- query: q3
-- about: sum v1 mean v3 by id3 (N/100 groups of a string key).
SELECT count(*), sum(v1), sum(v3) FROM (
    SELECT id3, sum(v1) AS v1, avg(v3) AS v3 FROM x GROUP BY id3
) AS ans;

-- query: q4
-- about: mean v1:v3 by id4 (100 groups of an integer key).
SELECT count(*), sum(v1), sum(v2), sum(v3) FROM (
    SELECT id4, avg(v1) AS v1, avg(v2) AS v2, avg(v3) AS v3 FROM x GROUP BY id4
) AS ans;

-- query: q5
-- about: sum v1:v3 by id6 (N/100 groups of an integer key).
SELECT count(*), sum(v1), sum(v2), sum(v3) FROM (
    SELECT id6, sum(v1) AS v1, sum(v2) AS v2, sum(v3) AS v3 FROM x GROUP BY id6
) AS ans;

-- query: q6
-- about: median v3 sd v3 by id4 id5 (10,000 groups): the interpolated
-- median (ClickHouse's quantileExactInclusive, the same R-7 rule; its
-- median is approximate) and the sample standard deviation.
SELECT count(*), sum(median_v3), sum(sd_v3) FROM (
    SELECT id4, id5, quantile_cont(v3, 0.5) AS median_v3, stddev(v3) AS sd_v3 FROM x GROUP BY id4, id5
) AS ans;
-- for: clickhouse
SELECT count(*), sum(median_v3), sum(sd_v3) FROM (
    SELECT id4, id5, quantileExactInclusive(0.5)(v3) AS median_v3, stddevSamp(v3) AS sd_v3 FROM x GROUP BY id4, id5
) AS ans;

-- query: q7
-- about: max v1 - min v2 by id3 (N/100 groups of a string key).
SELECT count(*), sum(range_v1_v2) FROM (
    SELECT id3, max(v1)-min(v2) AS range_v1_v2 FROM x GROUP BY id3
) AS ans;

-- query: q8
-- about: largest two v3 by id6, through a window function: 2 rows of each
-- of the N/100 groups. Ties at the top give the same values whichever row
-- is numbered first, so the count and the sum agree. The ORDER BY is the
-- window's: the one row compares as a set.
-- check: rows
SELECT count(*), sum(largest2_v3) FROM (
    SELECT id6, v3 AS largest2_v3 FROM (SELECT id6, v3, row_number() OVER (PARTITION BY id6 ORDER BY v3 DESC) AS order_v3 FROM x WHERE v3 IS NOT NULL) sub_query WHERE order_v3 <= 2
) AS ans;

-- query: q9
-- about: regression v1 v2 by id2 id4 (10,000 groups): the squared
-- correlation.
SELECT count(*), sum(r2) FROM (
    SELECT id2, id4, pow(corr(v1, v2), 2) AS r2 FROM x GROUP BY id2, id4
) AS ans;

-- query: q10
-- about: sum v3 count by id1:id6 (all six keys; about N groups, nearly
-- every row its own).
SELECT count(*), sum(v3), sum(count) FROM (
    SELECT id1, id2, id3, id4, id5, id6, sum(v3) AS v3, count(*) AS count FROM x GROUP BY id1, id2, id3, id4, id5, id6
) AS ans;
