-- Workload taxi_f32: the taxi trips with float32 coordinates written as
-- doubles (`-73.937767028808594` style), as the real 2013 sample stores
-- them (issue 30). Its load is what the memory table measures for such
-- coordinates; the queries filter, bound and rank on them.
--
-- Format: see taxi.sql and README.md beside this file.

-- table: trips taxi-f32

-- query: box
-- about: trips picked up in a box around midtown: four comparisons on
-- the coordinate columns.
SELECT count(*) FROM trips WHERE pickup_longitude >= -73.99 AND pickup_longitude < -73.97 AND pickup_latitude >= 40.75 AND pickup_latitude < 40.77;

-- query: bounds
SELECT min(pickup_longitude), max(pickup_longitude), min(dropoff_latitude), max(dropoff_latitude) FROM trips;

-- query: north
SELECT dropoff_ntaname, count(*), sum(trip_distance) FROM trips WHERE dropoff_latitude > 40.8 GROUP BY 1;

-- query: east
-- about: ties in the coordinate may pick different rows, so only the
-- coordinate column is compared, in order.
-- check: topn pickup_longitude
SELECT trip_id, pickup_longitude FROM trips WHERE pickup_longitude IS NOT NULL ORDER BY pickup_longitude DESC LIMIT 10;
