-- Workload kv: the Altinity ClickHouse key-value article. Point lookups
-- issued one after another on one thread through each engine's in-process
-- API; queries per second and latency percentiles.
-- `{key}` is one existing id; `{keys}` a comma-separated list of ids
-- (`-- keys: COUNT`, of which `-- hits:` exist, the rest are misses).
-- Format: see README.md beside this file.

-- table: kv kv

-- lookup: eq
-- about: 1,000 single-key lookups of random existing keys.
-- keys: 1
-- hits: 1
SELECT * FROM kv WHERE id = {key};

-- lookup: in100
-- about: 1,000 lookups of 100 ids each, 1 hit to 3 misses.
-- keys: 100
-- hits: 25
SELECT * FROM kv WHERE id IN ({keys});
