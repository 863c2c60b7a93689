-- Workload star: dimension joins on the demo's data, the taxi trips joined
-- to the lookup table of the 195 neighbourhoods they name (`katydid
-- generate zones`, the table `--demo` loads as `zones`). q1 is the
-- group-by on the trips' own borough column that q2 answers through the
-- lookup table: issue 32's target puts q2 within 1.5 times q1 and at most
-- half DuckDB's time for q2 (targets.json, issue32).

-- table: trips taxi
-- table: zones zones

-- query: q1
-- about: the fact table's own column, the yardstick for q2.
SELECT pickup_boroname, count(*), avg(total_amount) FROM trips GROUP BY pickup_boroname;

-- query: q2
-- about: the demo's join: trips without a neighbourhood code drop out.
SELECT z.borough, count(*), avg(t.total_amount)
FROM trips t JOIN zones z ON t.pickup_ntacode = z.ntacode
GROUP BY z.borough;

-- query: q3
-- about: a filter on the dimension: only Brooklyn's neighbourhoods.
SELECT z.ntaname, count(*), sum(t.fare_amount)
FROM trips t JOIN zones z ON t.pickup_ntacode = z.ntacode
WHERE z.borough = 'Brooklyn'
GROUP BY z.ntaname;

-- query: q4
-- about: the same dimension twice, for the pickup and the drop-off.
SELECT p.borough AS pickup_borough, d.borough AS dropoff_borough, count(*)
FROM trips t
JOIN zones p ON t.pickup_ntacode = p.ntacode
JOIN zones d ON t.dropoff_ntacode = d.ntacode
GROUP BY p.borough, d.borough;

-- query: q5
-- about: LEFT JOIN: trips without a code stay, in the NULL borough.
SELECT z.borough, count(*), sum(t.tip_amount)
FROM trips t LEFT JOIN zones z ON t.pickup_ntacode = z.ntacode
GROUP BY z.borough;
