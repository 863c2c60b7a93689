-- Workload taxi: the classic taxi benchmark (LocustDB, ClickHouse, kdb+),
-- the 9 queries of the engine issue on the synthetic 51-column taxi trips.
--
-- Format (read by scripts/bench_lib/workloads.py, described in README.md
-- beside this file): `-- table:` names the table and the generator that
-- makes it; each `-- query:` starts a query; `-- check:` says how answers
-- are compared; a statement with no `-- for:` line before it is the one
-- every engine runs; `-- for: ENGINE` gives one engine its own dialect.

-- table: trips taxi

-- query: q1
SELECT cab_type, count(*) FROM trips GROUP BY cab_type;

-- query: q2
SELECT passenger_count, count(*), sum(total_amount) FROM trips GROUP BY passenger_count;

-- query: q3
SELECT passenger_count, year(pickup_datetime), count(*) FROM trips GROUP BY 1, 2;
-- for: clickhouse
SELECT passenger_count, toYear(pickup_datetime), count(*) FROM trips GROUP BY 1, 2;

-- query: q4
SELECT passenger_count, year(pickup_datetime), floor(trip_distance), count(*) FROM trips GROUP BY 1, 2, 3;
-- for: clickhouse
SELECT passenger_count, toYear(pickup_datetime), floor(trip_distance), count(*) FROM trips GROUP BY 1, 2, 3;

-- query: q5
-- about: the issue's vendor_id = 'CMT' and store_and_fwd_flag = '1'; the
-- generated flag is N/Y, so 'Y'. LIMIT without ORDER BY: when 100 rows match,
-- any 100 matching rows are right, and only the count is compared.
-- check: limit 100
SELECT trip_id FROM trips WHERE passenger_count = 5 AND vendor_id = 'CMT' AND total_amount < 5 AND store_and_fwd_flag = 'Y' LIMIT 100;

-- query: q6
-- about: ties in total_amount may pick different rows, so only the
-- total_amount column is compared, in order.
-- check: topn total_amount
SELECT passenger_count, trip_distance, total_amount FROM trips ORDER BY total_amount DESC LIMIT 100;

-- query: q7
SELECT pickup_puma, dropoff_puma, passenger_count, count(*) FROM trips GROUP BY 1, 2, 3;

-- query: q8
-- about: 2M groups, wrapped so that every engine returns one row (the
-- same work for all: no engine ships 2M groups to Python); katydid's
-- integer / truncates, the peers spell integer division.
SELECT count(*), sum(s) FROM (SELECT trip_id / 5 AS k, sum(total_amount) AS s FROM trips GROUP BY k) AS g;
-- for: duckdb polars
SELECT count(*), sum(s) FROM (SELECT trip_id // 5 AS k, sum(total_amount) AS s FROM trips GROUP BY k) AS g;
-- for: clickhouse
SELECT count(*), sum(s) FROM (SELECT intDiv(trip_id, 5) AS k, sum(total_amount) AS s FROM trips GROUP BY k) AS g;

-- query: q9
SELECT pickup_ntaname, count(*) FROM trips GROUP BY pickup_ntaname;
