-- Workload tlc: TLC-like yellow taxi trips as the NYC Taxi & Limousine
-- Commission publishes them, one month's Parquet file (`katydid generate
-- tlc`: snappy, row groups of 1,048,576 rows, the 2024 schema with int32
-- zone ids and microsecond timestamps). Each engine loads the file with its
-- own Parquet reader (katydid's load, DuckDB read_parquet, chdb
-- file(…, Parquet), Polars read_parquet), so the load line is Parquet
-- reading speed side by side; the `file_` queries read the file in place
-- (`{file:trips}`: katydid FROM 'file.parquet', which caches the columns and
-- row groups it reads after the warm-up run; the peers read the file on
-- every run).

-- table: trips tlc/yellow_tripdata_2024-01.parquet

-- query: count
SELECT count(*), sum(passenger_count), sum(total_amount) FROM trips;

-- query: by_payment
SELECT payment_type, count(*), sum(total_amount), avg(tip_amount) FROM trips GROUP BY payment_type ORDER BY payment_type;

-- query: top_pickup_zones
SELECT PULocationID, count(*) AS n, sum(fare_amount) FROM trips GROUP BY PULocationID ORDER BY n DESC, PULocationID LIMIT 10;

-- query: by_passengers
SELECT passenger_count, count(*), avg(trip_distance), avg(total_amount) FROM trips WHERE passenger_count IS NOT NULL GROUP BY passenger_count ORDER BY passenger_count;

-- query: long_trips
SELECT VendorID, count(*), sum(fare_amount), max(trip_distance) FROM trips WHERE trip_distance > 10 GROUP BY VendorID ORDER BY VendorID;

-- query: airport_fee
SELECT RatecodeID, count(*), sum(Airport_fee) FROM trips WHERE Airport_fee > 0 GROUP BY RatecodeID ORDER BY RatecodeID;

-- query: one_week
-- about: a week of pickups (the file's row groups are in pickup order).
SELECT count(*), sum(total_amount), max(tip_amount) FROM trips WHERE tpep_pickup_datetime >= '2024-01-15 00:00:00' AND tpep_pickup_datetime < '2024-01-22 00:00:00';
-- for: clickhouse
SELECT count(*), sum(total_amount), max(tip_amount) FROM trips WHERE tpep_pickup_datetime >= toDateTime64('2024-01-15 00:00:00', 6) AND tpep_pickup_datetime < toDateTime64('2024-01-22 00:00:00', 6);
-- for: polars
SELECT count(*), sum(total_amount), max(tip_amount) FROM trips WHERE tpep_pickup_datetime >= CAST('2024-01-15 00:00:00' AS TIMESTAMP) AND tpep_pickup_datetime < CAST('2024-01-22 00:00:00' AS TIMESTAMP);

-- query: file_by_payment
-- about: the file read in place, two columns.
SELECT payment_type, count(*), sum(total_amount) FROM {file:trips} GROUP BY payment_type ORDER BY payment_type;

-- query: file_last_days
-- about: the file read in place with a filter on the pickup time: the
-- last days of the month, which row-group statistics confine to the last
-- row group(s).
SELECT count(*), sum(fare_amount), sum(tip_amount) FROM {file:trips} WHERE tpep_pickup_datetime >= '2024-01-29 00:00:00';
-- for: clickhouse
SELECT count(*), sum(fare_amount), sum(tip_amount) FROM {file:trips} WHERE tpep_pickup_datetime >= toDateTime64('2024-01-29 00:00:00', 6);
-- for: polars
SELECT count(*), sum(fare_amount), sum(tip_amount) FROM {file:trips} WHERE tpep_pickup_datetime >= CAST('2024-01-29 00:00:00' AS TIMESTAMP);

-- query: file_months
-- about: the four generated months read in place as one table (a glob,
-- columns unified by name as DuckDB's union_by_name does): passenger_count
-- is a double in 2022 and an integer after, the airport fee is spelled
-- `airport_fee` up to 2023 and `Airport_fee` after, cbd_congestion_fee
-- appears in 2025. ClickHouse is given the columns' widened types (its
-- schema inference stops at the drift) and matches names case-insensitively
-- (set in the peer); Polars concatenates the files diagonally, names
-- lower-cased.
SELECT year(tpep_pickup_datetime) AS y, count(*), sum(passenger_count), sum(total_amount), sum(Airport_fee), sum(cbd_congestion_fee) FROM '{dir:trips}/yellow_tripdata_*.parquet' GROUP BY y ORDER BY y;
-- for: duckdb
SELECT year(tpep_pickup_datetime) AS y, count(*), sum(passenger_count), sum(total_amount), sum(Airport_fee), sum(cbd_congestion_fee) FROM read_parquet('{dir:trips}/yellow_tripdata_*.parquet', union_by_name = true) GROUP BY y ORDER BY y;
-- for: clickhouse
SELECT toYear(tpep_pickup_datetime) AS y, count(*), sum(passenger_count), sum(total_amount), sum(Airport_fee), sum(cbd_congestion_fee) FROM file('{dir:trips}/yellow_tripdata_*.parquet', Parquet, 'tpep_pickup_datetime DateTime64(6), passenger_count Nullable(Float64), total_amount Float64, Airport_fee Nullable(Float64), cbd_congestion_fee Nullable(Float64)') GROUP BY y ORDER BY y;
-- for: polars python
pl.SQLContext(m=pl.concat([pl.scan_parquet(f).rename(str.lower) for f in sorted(__import__("glob").glob("{dir:trips}/yellow_tripdata_*.parquet"))], how="diagonal_relaxed")).execute("SELECT EXTRACT(year FROM tpep_pickup_datetime) AS y, count(*), sum(passenger_count), sum(total_amount), sum(airport_fee), sum(cbd_congestion_fee) FROM m GROUP BY y ORDER BY y")
