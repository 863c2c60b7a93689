-- Queries checked against the real NYC taxi sample
-- (../shared/datasets/nyc-taxi-trips-2013-sample.csv.gz) by tests/sample.rs.
--
-- Each block: `-- name:` (the expected answer lives in tests/sample/expected/<name>.csv),
-- `-- order: rowsort|exact` (rowsort compares as sorted multisets),
-- optionally `-- duckdb:` with DuckDB's spelling when it differs,
-- then the katydid query ending in `;`.
-- The expected answers were computed independently with DuckDB by
-- scripts/sample_answers.py (run it to regenerate them).

-- name: q1_cab_type
-- order: rowsort
SELECT cab_type, count(*) FROM trips GROUP BY cab_type;

-- name: q2_passenger_sum
-- order: rowsort
SELECT passenger_count, count(*), sum(total_amount) FROM trips GROUP BY passenger_count;

-- name: q3_passenger_year
-- order: rowsort
SELECT passenger_count, year(pickup_datetime), count(*) FROM trips GROUP BY 1, 2;

-- name: q4_passenger_year_distance
-- order: rowsort
SELECT passenger_count, year(pickup_datetime), floor(trip_distance), count(*) FROM trips GROUP BY 1, 2, 3;

-- name: q5_filter_limit
-- order: exact
-- duckdb: SELECT trip_id FROM (SELECT trip_id, row_number() OVER () AS rn FROM trips WHERE passenger_count = 5 AND vendor_id = 2 AND total_amount < 5 AND store_and_fwd_flag = 'N') ORDER BY rn LIMIT 100;
SELECT trip_id FROM trips WHERE passenger_count = 5 AND vendor_id = 2 AND total_amount < 5 AND store_and_fwd_flag = 'N' LIMIT 100;

-- name: q6_top_total
-- order: exact
SELECT passenger_count, trip_distance, total_amount FROM trips ORDER BY total_amount DESC, passenger_count, trip_distance LIMIT 100;

-- name: q7_puma_pairs
-- order: rowsort
SELECT pickup_puma, dropoff_puma, passenger_count, count(*) FROM trips GROUP BY 1, 2, 3;

-- name: q8_trip_id_buckets
-- order: rowsort
-- duckdb: SELECT trip_id // 5, sum(total_amount) FROM trips GROUP BY 1;
SELECT trip_id / 5, sum(total_amount) FROM trips GROUP BY 1;

-- name: q9_ntaname
-- order: rowsort
SELECT pickup_ntaname, count(*) FROM trips GROUP BY pickup_ntaname;

-- name: null_group_and_counts
-- order: rowsort
SELECT pickup_boroname, count(*), count(pickup_puma), min(pickup_puma), max(pickup_puma), min(pickup_ntaname) FROM trips GROUP BY 1;

-- name: all_null_column
-- order: exact
SELECT count(*), count(ehail_fee), min(ehail_fee), count(trip_type), sum(trip_type) FROM trips;

-- name: empty_filter_global_aggregate
-- order: exact
SELECT count(*), sum(total_amount), avg(total_amount), min(pickup_datetime) FROM trips WHERE passenger_count > 100;

-- name: timestamp_range
-- order: exact
SELECT count(*), min(pickup_datetime), max(pickup_datetime) FROM trips WHERE pickup_datetime >= '2013-09-01' AND pickup_datetime < '2013-10-01 00:00:00';

-- name: in_lists
-- order: rowsort
SELECT vendor_id, payment_type, count(*) FROM trips WHERE vendor_id IN (1) AND payment_type IN (2, 3, 7) GROUP BY 1, 2;

-- name: between_float
-- order: exact
SELECT count(*), sum(trip_distance) FROM trips WHERE trip_distance BETWEEN 1 AND 2.5;

-- name: not_between
-- order: exact
SELECT count(*) FROM trips WHERE passenger_count NOT BETWEEN 2 AND 5;

-- name: like_prefix
-- order: rowsort
SELECT pickup_ntaname, count(*) FROM trips WHERE pickup_ntaname LIKE 'East%' GROUP BY 1;

-- name: like_general
-- order: rowsort
SELECT dropoff_ntaname, count(*) FROM trips WHERE dropoff_ntaname LIKE '%t_n%' GROUP BY 1;

-- name: is_null_filters
-- order: exact
SELECT count(*), count(pickup_puma), count(dropoff_puma) FROM trips WHERE pickup_puma IS NULL OR dropoff_puma IS NOT NULL;

-- name: string_not_equal
-- order: rowsort
SELECT store_and_fwd_flag, count(*) FROM trips WHERE store_and_fwd_flag <> 'N' GROUP BY 1;

-- name: string_range_dictionary
-- order: rowsort
SELECT pickup_ntaname, count(*) FROM trips WHERE pickup_ntaname >= 'M' AND pickup_ntaname < 'Park' GROUP BY 1;

-- name: string_range_absent_constant
-- order: exact
SELECT count(*) FROM trips WHERE pickup_boroname > 'Brooklyn Heights' AND pickup_boroname <= 'Queens';

-- name: not_or
-- order: rowsort
SELECT passenger_count, count(*) FROM trips WHERE NOT (passenger_count = 1 OR passenger_count = 2) GROUP BY 1;

-- name: case_when
-- order: rowsort
SELECT CASE WHEN total_amount < 10 THEN 'small' WHEN total_amount < 50 THEN 'medium' ELSE 'large' END AS size, count(*) FROM trips GROUP BY 1;

-- name: order_offset
-- order: exact
SELECT trip_id, pickup_datetime, total_amount FROM trips WHERE payment_type = 1 ORDER BY pickup_datetime DESC, trip_id LIMIT 7 OFFSET 3;

-- name: limit_negative
-- order: exact
-- duckdb: SELECT trip_id, total_amount FROM (SELECT trip_id, total_amount, rn FROM (SELECT trip_id, total_amount, row_number() OVER () AS rn FROM trips WHERE passenger_count = 3) ORDER BY rn DESC LIMIT 5) ORDER BY rn;
SELECT trip_id, total_amount FROM trips WHERE passenger_count = 3 LIMIT -5;

-- name: limit_load_order
-- order: exact
-- duckdb: SELECT trip_id, vendor_id FROM (SELECT trip_id, vendor_id, row_number() OVER () AS rn FROM trips WHERE rate_code_id = 5) ORDER BY rn LIMIT 6;
SELECT trip_id, vendor_id FROM trips WHERE rate_code_id = 5 LIMIT 6;

-- name: implicit_grouping
-- order: rowsort
-- duckdb: SELECT passenger_count, count(*) FROM trips GROUP BY passenger_count;
SELECT passenger_count, count(*) FROM trips;

-- name: having_order
-- order: exact
SELECT pickup_ntaname, count(*) AS c FROM trips GROUP BY 1 HAVING count(*) > 100 ORDER BY c DESC, 1 NULLS FIRST;

-- name: avg_round
-- order: rowsort
SELECT payment_type, round(avg(tip_amount), 2), max(tip_amount) FROM trips GROUP BY 1;

-- name: arithmetic_sums
-- order: exact
SELECT sum(fare_amount + tip_amount), sum(total_amount - fare_amount), sum(passenger_count * 2), max(trip_id % 7) FROM trips;

-- name: date_trunc_month
-- order: exact
SELECT date_trunc('month', pickup_datetime), count(*) FROM trips GROUP BY 1 ORDER BY 1;

-- name: nulls_first_order
-- order: exact
SELECT pickup_puma, count(*) FROM trips GROUP BY 1 ORDER BY 1 NULLS FIRST LIMIT 5;

-- name: nulls_last_desc
-- order: exact
SELECT dropoff_puma, count(*) FROM trips GROUP BY 1 ORDER BY 1 DESC NULLS LAST LIMIT 4;

-- name: count_distinct
-- order: rowsort
SELECT vendor_id, count(DISTINCT pickup_ntaname), count(DISTINCT passenger_count) FROM trips GROUP BY 1;

-- name: modulo_groups
-- order: rowsort
SELECT trip_id % 7, count(*) FROM trips GROUP BY 1;

-- name: floor_negative_floats
-- order: rowsort
SELECT floor(pickup_longitude), count(*) FROM trips GROUP BY 1;

-- name: integer_division_truncates
-- order: rowsort
-- duckdb: SELECT CAST(trunc((rate_code_id - 3) / 2) AS BIGINT), count(*) FROM trips GROUP BY 1;
SELECT (rate_code_id - 3) / 2, count(*) FROM trips GROUP BY 1;

-- name: top_n_with_filter
-- order: exact
SELECT trip_id, tip_amount FROM trips WHERE tip_amount > 0 ORDER BY tip_amount DESC, trip_id LIMIT 10;
