//! The specialized access paths (early-stopping `LIMIT -n` and
//! `ORDER BY time DESC LIMIT n`, exact and approximate distinct counts,
//! point lookups through zone maps, binary search and the hash index)
//! checked against a naive scan of the same rows, for several partition
//! sizes and thread counts; and EXPLAIN naming each path.

use std::collections::HashSet;
use std::path::Path;

use katydid::{Database, DatabaseOptions, LoadOptions, Value};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const PARTITION_SIZES: [usize; 5] = [1, 3, 7, 64, 65_536];

/// One generated row: (time in seconds, truck, velocity or NULL, id).
type Row = (i64, String, Option<f64>, i64);

fn rows(seed: u64, n: usize) -> Vec<Row> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..n)
        .map(|i| {
            let time = 1_451_606_400 + (i as i64 / 4) * 60; // 4 trucks per minute, ascending
            let truck = format!("truck_{}", rng.gen_range(0..6));
            let velocity =
                (rng.gen_range(0..10) > 0).then(|| (rng.gen_range(0..1000) as f64) / 10.0);
            let id = rng.gen_range(-1_000_000_000i64..1_000_000_000);
            (time, truck, velocity, id)
        })
        .collect()
}

fn csv(rows: &[Row]) -> Vec<u8> {
    let mut s = String::from("time,name,velocity,id\n");
    for (t, name, v, id) in rows {
        let ts = katydid::types::format_timestamp(t * 1_000_000);
        let v = v.map(|v| format!("{v:.1}")).unwrap_or_default();
        s.push_str(&format!("{ts},{name},{v},{id}\n"));
    }
    s.into_bytes()
}

/// A database holding `data` (CSV) as table `table`.
fn database(data: &[u8], table: &str, partition_rows: usize, threads: usize) -> Database {
    let mut db = Database::new(DatabaseOptions {
        threads,
        ..Default::default()
    })
    .unwrap();
    let options = LoadOptions {
        partition_rows,
        ..LoadOptions::default()
    };
    db.load_csv_bytes(data.to_vec(), Path::new("<generated>"), table, &options)
        .unwrap();
    db
}

fn databases(data: &[u8]) -> Vec<(String, Database)> {
    let mut out = Vec::new();
    for partition_rows in PARTITION_SIZES {
        for threads in [1, 2] {
            out.push((
                format!("partition_rows {partition_rows}, threads {threads}"),
                database(data, "readings", partition_rows, threads),
            ));
        }
    }
    out
}

fn ids(result: &katydid::QueryResult) -> Vec<i64> {
    result
        .rows
        .iter()
        .map(|r| match r[0] {
            Value::Int(v) => v,
            ref v => panic!("not an id: {v:?}"),
        })
        .collect()
}

#[test]
fn limit_negative_and_time_desc_return_exactly_the_last_matching_rows() {
    let data = rows(7, 700);
    let bytes = csv(&data);
    let matching: Vec<&Row> = data
        .iter()
        .filter(|r| r.2.is_some_and(|v| v > 75.0))
        .collect();
    for (config, db) in databases(&bytes) {
        for n in [0usize, 1, 5, 40, 10_000] {
            let got = db
                .query(&format!(
                    "SELECT id FROM readings WHERE velocity > 75.0 LIMIT -{n}"
                ))
                .unwrap();
            let want: Vec<i64> = matching[matching.len().saturating_sub(n)..]
                .iter()
                .map(|r| r.3)
                .collect();
            assert_eq!(ids(&got), want, "LIMIT -{n}, {config}");

            // Newest first; ties on time are broken by id so the answer is unique.
            let got = db
                .query(&format!(
                    "SELECT id, time FROM readings WHERE velocity > 75.0 ORDER BY time DESC, id LIMIT {n}"
                ))
                .unwrap();
            let mut sorted: Vec<&&Row> = matching.iter().collect();
            sorted.sort_by(|a, b| b.0.cmp(&a.0).then(a.3.cmp(&b.3)));
            let want: Vec<i64> = sorted.iter().take(n).map(|r| r.3).collect();
            assert_eq!(ids(&got), want, "ORDER BY time DESC LIMIT {n}, {config}");
        }
    }
}

#[test]
fn distinct_counts_equal_exact_counts_and_the_sketch_stays_within_its_error() {
    let data = rows(11, 3000);
    let bytes = csv(&data);
    for (config, db) in databases(&bytes).into_iter().step_by(3) {
        let got = db
            .query(
                "SELECT name, count(DISTINCT velocity), count(DISTINCT id), approx_count_distinct(id), \
                 approx_count_distinct(velocity) FROM readings GROUP BY name",
            )
            .unwrap();
        assert_eq!(got.rows.len(), 6, "{config}");
        for row in &got.rows {
            let Value::Str(name) = &row[0] else {
                panic!("{row:?}")
            };
            let group: Vec<&Row> = data.iter().filter(|r| *r.1 == **name).collect();
            let velocities: HashSet<u64> =
                group.iter().filter_map(|r| r.2.map(f64::to_bits)).collect();
            let ids: HashSet<i64> = group.iter().map(|r| r.3).collect();
            assert_eq!(
                row[1],
                Value::Int(velocities.len() as i64),
                "{name}, {config}"
            );
            assert_eq!(row[2], Value::Int(ids.len() as i64), "{name}, {config}");
            for (got, exact) in [(&row[3], ids.len()), (&row[4], velocities.len())] {
                let Value::Int(est) = got else {
                    panic!("{got:?}")
                };
                // Three standard errors of 1.04 / sqrt(16384), at least 2.
                let tolerance = (exact as f64 * 3.0 * 0.0081).max(2.0);
                assert!(
                    (*est as f64 - exact as f64).abs() <= tolerance,
                    "{name}: estimate {est} vs exact {exact}, {config}"
                );
            }
        }
        // Distinct strings, and NULLs never counted.
        let got = db
            .query("SELECT count(DISTINCT name), count(DISTINCT CASE WHEN velocity > 50 THEN name END) FROM readings")
            .unwrap();
        let names: HashSet<&str> = data.iter().map(|r| r.1.as_str()).collect();
        let fast: HashSet<&str> = data
            .iter()
            .filter(|r| r.2.is_some_and(|v| v > 50.0))
            .map(|r| r.1.as_str())
            .collect();
        assert_eq!(
            got.rows[0],
            vec![
                Value::Int(names.len() as i64),
                Value::Int(fast.len() as i64)
            ],
            "{config}"
        );
    }
}

#[test]
fn point_lookups_return_what_a_scan_returns() {
    let mut data = rows(13, 2000);
    // Some repeated keys, and keys that are absent.
    data[100].3 = data[1500].3;
    data[7].3 = data[1999].3;
    let bytes = csv(&data);
    let mut rng = ChaCha8Rng::seed_from_u64(99);
    let mut probes: Vec<i64> = (0..20)
        .map(|_| data[rng.gen_range(0..data.len())].3)
        .collect();
    probes.extend([data[1500].3, data[1999].3, 5, -5, i64::MAX, i64::MIN + 1]);
    for (config, db) in databases(&bytes) {
        for &k in &probes {
            let got = db
                .query(&format!("SELECT id, time FROM readings WHERE id = {k}"))
                .unwrap();
            let want: Vec<i64> = data.iter().filter(|r| r.3 == k).map(|r| r.3).collect();
            assert_eq!(ids(&got), want, "id = {k}, {config}");
        }
        let list: Vec<String> = probes.iter().map(i64::to_string).collect();
        let got = db
            .query(&format!(
                "SELECT id FROM readings WHERE id IN ({}) AND velocity IS NOT NULL",
                list.join(", ")
            ))
            .unwrap();
        let want: Vec<i64> = data
            .iter()
            .filter(|r| probes.contains(&r.3) && r.2.is_some())
            .map(|r| r.3)
            .collect();
        assert_eq!(ids(&got), want, "IN list, {config}");

        // The time column ascends: zone maps and binary search find a minute.
        let t = katydid::types::format_timestamp((1_451_606_400 + 60 * 77) * 1_000_000);
        let got = db
            .query(&format!("SELECT id FROM readings WHERE time = '{t}'"))
            .unwrap();
        let want: Vec<i64> = data
            .iter()
            .filter(|r| r.0 == 1_451_606_400 + 60 * 77)
            .map(|r| r.3)
            .collect();
        assert_eq!(ids(&got), want, "time = '{t}', {config}");
    }
}

/// ORs of ANDs over codes, floats, NULL tests and sorted ranges run as
/// 64-row masks (`FilterStep::Any`); they keep exactly the rows a scan
/// keeps, NULL velocities never passing a comparison.
#[test]
fn or_of_and_filters_return_what_a_scan_returns() {
    let data = rows(21, 3000);
    let bytes = csv(&data);
    let probe = data[2500].3;
    let t0 = 1_451_606_400i64;
    let minute = |m: i64| katydid::types::format_timestamp((t0 + 60 * m) * 1_000_000);
    let v = |r: &Row, f: fn(f64) -> bool| r.2.is_some_and(f);
    type Case = (String, Box<dyn Fn(&Row) -> bool>);
    let cases: Vec<Case> = vec![
        (
            "(name = 'truck_1' AND velocity > 50.0) OR (name = 'truck_2' AND velocity < 5.0) \
             OR id < -990000000"
                .into(),
            Box::new(move |r: &Row| {
                (r.1 == "truck_1" && v(r, |x| x > 50.0))
                    || (r.1 == "truck_2" && v(r, |x| x < 5.0))
                    || r.3 < -990_000_000
            }),
        ),
        (
            "velocity IS NULL OR (name IN ('truck_0', 'truck_5') AND id > 900000000)".into(),
            Box::new(|r: &Row| {
                r.2.is_none() || ((r.1 == "truck_0" || r.1 == "truck_5") && r.3 > 900_000_000)
            }),
        ),
        (
            format!(
                "(time < '{}' AND velocity >= 90.0) OR (time = '{}' AND name <> 'truck_3') \
                 OR (velocity IS NOT NULL AND id = {})",
                minute(100),
                minute(500),
                probe
            ),
            Box::new(move |r: &Row| {
                (r.0 < t0 + 6000 && v(r, |x| x >= 90.0))
                    || (r.0 == t0 + 30_000 && r.1 != "truck_3")
                    || (r.2.is_some() && r.3 == probe)
            }),
        ),
        (
            "name = 'truck_9' OR (name = 'truck_4' AND (velocity < 1.0 OR velocity > 99.0))".into(),
            Box::new(move |r: &Row| r.1 == "truck_4" && v(r, |x| !(1.0..=99.0).contains(&x))),
        ),
    ];
    for (config, db) in databases(&bytes) {
        for (filter, keep) in &cases {
            let got = db
                .query(&format!("SELECT id FROM readings WHERE {filter}"))
                .unwrap();
            let want: Vec<i64> = data.iter().filter(|r| keep(r)).map(|r| r.3).collect();
            assert!(!want.is_empty(), "{filter}");
            assert_eq!(ids(&got), want, "{filter}, {config}");
        }
    }
}

/// Top-n whose first key is filtered past a sampled threshold on the codec
/// first keeps exactly the rows a full sort keeps: ties at the threshold,
/// further keys, WHERE selections and OFFSET included.
#[test]
fn top_n_past_a_sampled_threshold_returns_what_a_sort_returns() {
    let mut data = rows(23, 3000);
    // Ties on the best ids, in and out of the first rows.
    for i in [5, 17, 2900, 2901, 1500] {
        data[i].3 = 999_999_999;
    }
    for i in [8, 2950] {
        data[i].3 = -999_999_999;
    }
    let bytes = csv(&data);
    let by_id = |desc: bool| {
        let mut v: Vec<(usize, &Row)> = data.iter().enumerate().collect();
        v.sort_by(|a, b| {
            let o = a.1.3.cmp(&b.1.3);
            (if desc { o.reverse() } else { o }).then(a.0.cmp(&b.0))
        });
        v
    };
    let ids_of = |v: &[(usize, &Row)]| v.iter().map(|r| r.1.3).collect::<Vec<_>>();
    for (config, db) in databases(&bytes) {
        for (sql, want) in [
            (
                "SELECT id FROM readings ORDER BY id DESC LIMIT 7",
                ids_of(&by_id(true)[..7]),
            ),
            (
                "SELECT id FROM readings ORDER BY id LIMIT 5 OFFSET 3",
                ids_of(&by_id(false)[3..8]),
            ),
            (
                "SELECT id FROM readings WHERE name = 'truck_1' ORDER BY id DESC LIMIT 4",
                ids_of(
                    &by_id(true)
                        .into_iter()
                        .filter(|r| r.1.1 == "truck_1")
                        .take(4)
                        .collect::<Vec<_>>(),
                ),
            ),
        ] {
            let got = db.query(sql).unwrap();
            assert_eq!(ids(&got), want, "{sql}, {config}");
        }
        // The row order among tied ids is load order: check the rows.
        let got = db
            .query("SELECT id, time FROM readings ORDER BY id DESC, time LIMIT 3")
            .unwrap();
        let want: Vec<Vec<Value>> = by_id(true)[..3]
            .iter()
            .map(|r| vec![Value::Int(r.1.3), Value::Timestamp(r.1.0 * 1_000_000)])
            .collect();
        assert_eq!(got.rows, want, "{config}");
    }
}

/// The text of `EXPLAIN ANALYZE sql`: the paths the run took.
fn explain(db: &Database, sql: &str) -> String {
    plan_text(db, &format!("EXPLAIN ANALYZE {sql}"))
}

/// The lines of an EXPLAIN statement's result, joined.
fn plan_text(db: &Database, statement: &str) -> String {
    let r = db.query(statement).unwrap();
    r.rows
        .iter()
        .map(|row| row[0].to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn explain_names_each_path() {
    let data = rows(17, 5000);
    let mut db = Database::new(DatabaseOptions {
        threads: 2,
        ..Default::default()
    })
    .unwrap();
    let options = LoadOptions {
        partition_rows: 500,
        ..LoadOptions::default()
    };
    db.load_csv_bytes(csv(&data), Path::new("<generated>"), "readings", &options)
        .unwrap();
    let indexed = |db: &Database| {
        let info = db.table_info("readings").unwrap();
        info.columns
            .iter()
            .find(|c| c.name == "id")
            .unwrap()
            .indexed
    };
    // The first point lookup on a column scans; the second (the EXPLAIN
    // ANALYZE below) builds the hash index.
    let lookup = format!("SELECT id FROM readings WHERE id = {}", data[4321].3);
    assert_eq!(db.query(&lookup).unwrap().rows.len(), 1);
    assert!(!indexed(&db), "one lookup does not build an index");
    let cases = [
        (
            "SELECT id FROM readings WHERE velocity > 75.0 LIMIT -3",
            "early stop",
        ),
        (
            "SELECT id FROM readings ORDER BY time DESC LIMIT 3",
            "early stop: sort key ascends",
        ),
        (
            "SELECT count(*) FROM readings WHERE time < '2016-01-01 00:30:00'",
            "ruled out before compiling",
        ),
        (
            "SELECT id FROM readings WHERE time = '2016-01-01 01:00:00'",
            "binary search",
        ),
        (&lookup, "hash index lookup"),
        (
            "SELECT min(time), max(velocity) FROM readings",
            "aggregate max: read from the zone map",
        ),
        (
            "SELECT count(*) FROM readings WHERE name = 'truck_1' OR id = 5 OR name = 'truck_2'",
            "name IN ('truck_1', 'truck_2') OR (id = 5)",
        ),
        (
            "SELECT count(*) FROM readings WHERE (name = 'truck_1' AND velocity > 50.0) OR id < 0",
            "filter OR of 2 terms: 64-row masks",
        ),
        (
            "SELECT id FROM readings ORDER BY id DESC LIMIT 3",
            "top-n: first key filtered past a sampled threshold",
        ),
        (
            "SELECT approx_count_distinct(id) FROM readings",
            "aggregate approx_count_distinct",
        ),
        (
            "SELECT name, count(*) FROM readings GROUP BY name",
            "fixed-size array",
        ),
        (
            "SELECT id / 2, count(*) FROM readings GROUP BY 1",
            "local hash dictionary",
        ),
        (
            "SELECT id / 2, time, count(*) FROM readings GROUP BY 1, 2",
            "hash table on packed u64 key",
        ),
        (
            "SELECT id, count(*) FROM readings GROUP BY 1",
            "through one hash table",
        ),
        ("SELECT time, count(*) FROM readings GROUP BY 1", "disjoint"),
        (
            "SELECT id FROM readings ORDER BY name LIMIT 5 OFFSET 700",
            "counted per code of name in every partition",
        ),
        (
            "SELECT name FROM readings ORDER BY id DESC LIMIT 5 OFFSET 2000",
            "merged without candidates",
        ),
        (
            "SELECT id FROM readings ORDER BY name, id LIMIT 5",
            "counted per dictionary code",
        ),
        (
            "SELECT name, velocity FROM readings ORDER BY velocity, id LIMIT 5",
            "candidate buffer with running threshold",
        ),
        (
            "SELECT id, velocity FROM readings ORDER BY velocity DESC LIMIT 5",
            "top-n",
        ),
        (
            "SELECT sum(id + 1), sum(id + 2), sum(id - 7) FROM readings",
            "aggregates [sum(id), count(id)]",
        ),
        (
            "SELECT id, id - 1, count(*) FROM readings GROUP BY id, id - 1",
            "keys [id] aggregates [count(*)]",
        ),
    ];
    for (sql, needle) in cases {
        let text = explain(&db, sql);
        assert!(
            text.contains(needle),
            "EXPLAIN {sql} should mention {needle:?}:\n{text}"
        );
    }
    assert!(
        indexed(&db),
        "the second lookup built a hash index that .schema reports"
    );
}

/// The text of `EXPLAIN sql`: the plan compiled, not run.
fn explain_compiled(db: &Database, sql: &str) -> String {
    plan_text(db, &format!("EXPLAIN {sql}"))
}

/// EXPLAIN compiles the pipelines from codecs and zone maps and reads no
/// row: a query that fails on its rows explains, an index is never built
/// by it, and what the codecs decide is named.
#[test]
fn explain_compiles_without_running() {
    let data = rows(17, 5000);
    let db = database(&csv(&data), "readings", 500, 2);
    // A row that cannot be cast: the query fails, but only when run.
    let mut bad = Database::new(DatabaseOptions::default()).unwrap();
    bad.load_csv_bytes(
        b"s\n12\nabc\n".to_vec(),
        Path::new("<bad>"),
        "bad",
        &LoadOptions::default(),
    )
    .unwrap();
    let sum = "SELECT sum(CAST(s AS INTEGER)) FROM bad";
    let err = bad.query(sum).unwrap_err().to_string();
    assert!(err.contains("cannot cast"), "{err}");
    let text = explain_compiled(&bad, sum);
    assert!(text.contains("aggregate sum"), "{text}");
    assert!(text.contains("no row read"), "{text}");
    let err = bad.query(&format!("EXPLAIN ANALYZE {sum}")).unwrap_err();
    assert!(err.to_string().contains("cannot cast"), "{err}");

    let lookup = format!("SELECT id FROM readings WHERE id = {}", data[4321].3);
    for _ in 0..3 {
        let text = explain_compiled(&db, &lookup);
        assert!(text.contains("hash index on its column"), "{text}");
    }
    let info = db.table_info("readings").unwrap();
    let id = info.columns.iter().find(|c| c.name == "id").unwrap();
    assert!(!id.indexed, "EXPLAIN built no index");

    let cases = [
        (
            "SELECT count(*) FROM readings WHERE time < '2016-01-01 00:30:00'",
            "ruled out before compiling",
        ),
        (
            "SELECT id FROM readings WHERE time = '2016-01-01 01:00:00'",
            "binary search",
        ),
        (
            "SELECT min(time), max(velocity) FROM readings",
            "aggregate max: read from the zone map",
        ),
        (
            "SELECT name, count(*) FROM readings GROUP BY name",
            "group by: fixed-size array indexed by combined key",
        ),
        (
            "SELECT name, count(*) FROM readings GROUP BY name",
            "group key name: dictionary codes",
        ),
        (
            "SELECT id / 2, count(*) FROM readings GROUP BY 1",
            "group by: hash table on the codes made from the rows",
        ),
        (
            "SELECT id FROM readings ORDER BY time DESC LIMIT 3",
            "top-n: sort key ascends in load order",
        ),
        (
            "SELECT id FROM readings ORDER BY name LIMIT 5 OFFSET 700",
            "top-n: per-partition histograms of the key's codes",
        ),
        (
            "SELECT name FROM readings ORDER BY id DESC LIMIT 5 OFFSET 2000",
            "order-preserving u64 keys",
        ),
        (
            "SELECT id, velocity FROM readings ORDER BY velocity DESC LIMIT 5",
            "partitions read best zone-map bound first",
        ),
        (
            "SELECT id, velocity FROM readings ORDER BY velocity DESC",
            "sort: candidates of every partition merged",
        ),
        (
            "SELECT id FROM readings WHERE velocity > 75.0 LIMIT -3",
            "scan: partitions from the end",
        ),
    ];
    for (sql, needle) in cases {
        let text = explain_compiled(&db, sql);
        assert!(
            text.contains(needle),
            "EXPLAIN {sql} should mention {needle:?}:\n{text}"
        );
        assert!(
            !text.contains("early stop:") && !text.contains("Ran in"),
            "EXPLAIN {sql} names no run-time outcome:\n{text}"
        );
    }
}

#[test]
fn global_sketch_over_a_large_partition_stays_within_its_error() {
    // One partition of 12,000 rows takes the dense-register path of the sketch.
    let data = rows(23, 12_000);
    let mut db = Database::new(DatabaseOptions {
        threads: 2,
        ..Default::default()
    })
    .unwrap();
    db.load_csv_bytes(
        csv(&data),
        Path::new("<generated>"),
        "readings",
        &LoadOptions::default(),
    )
    .unwrap();
    let got = db
        .query("SELECT approx_count_distinct(id), count(DISTINCT id), approx_count_distinct(velocity) FROM readings")
        .unwrap();
    let ids: HashSet<i64> = data.iter().map(|r| r.3).collect();
    let velocities: HashSet<u64> = data.iter().filter_map(|r| r.2.map(f64::to_bits)).collect();
    assert_eq!(got.rows[0][1], Value::Int(ids.len() as i64));
    for (got, exact) in [
        (&got.rows[0][0], ids.len()),
        (&got.rows[0][2], velocities.len()),
    ] {
        let Value::Int(est) = got else {
            panic!("{got:?}")
        };
        let tolerance = (exact as f64 * 3.0 * 0.0081).max(2.0);
        assert!(
            (*est as f64 - exact as f64).abs() <= tolerance,
            "estimate {est} vs exact {exact}"
        );
    }
}

/// A column of a hundred census-tract-like ids (seven digits, so u32
/// offsets) takes integer dictionary codes, and filters, group-bys and
/// top-n on it run on the codes with the answers a scan gives.
#[test]
fn integer_dictionary_codes_answer_as_a_scan() {
    let mut rng = ChaCha8Rng::seed_from_u64(41);
    let tracts: Vec<i64> = (0..100)
        .map(|_| rng.gen_range(1_000_000..6_000_000))
        .collect();
    let rows: Vec<(i64, Option<i64>)> = (0..6000)
        .map(|i| {
            (
                i,
                (rng.gen_range(0..20) > 0).then(|| tracts[rng.gen_range(0..100)]),
            )
        })
        .collect();
    let mut text = String::from("n,tract\n");
    for (n, t) in &rows {
        text.push_str(&format!(
            "{n},{}\n",
            t.map(|t| t.to_string()).unwrap_or_default()
        ));
    }
    let (lo, hi) = (tracts[7].min(tracts[9]), tracts[7].max(tracts[9]));
    let present = |f: &dyn Fn(i64) -> bool| rows.iter().filter(|r| r.1.is_some_and(f)).count();
    let count = |v: usize| vec![vec![Value::Int(v as i64)]];
    let mut sorted: Vec<i64> = rows.iter().filter_map(|r| r.1).collect();
    sorted.sort_unstable();
    let mut groups: std::collections::BTreeMap<i64, i64> = Default::default();
    for t in rows.iter().filter_map(|r| r.1) {
        *groups.entry(t).or_default() += 1;
    }
    let cases: Vec<(String, Vec<Vec<Value>>)> =
        vec![
        (
            format!("SELECT count(*) FROM t WHERE tract >= {lo} AND tract < {hi}"),
            count(present(&|t| t >= lo && t < hi)),
        ),
        (
            format!("SELECT count(*) FROM t WHERE tract <> {}", tracts[3]),
            count(present(&|t| t != tracts[3])),
        ),
        (
            format!("SELECT count(*) FROM t WHERE tract = {}", tracts[3] + 1),
            count(present(&|t| t == tracts[3] + 1)),
        ),
        (
            format!(
                "SELECT count(*) FROM t WHERE tract IN ({}, {}, 17, 2.5)",
                tracts[1], tracts[2]
            ),
            count(present(&|t| t == tracts[1] || t == tracts[2])),
        ),
        (
            "SELECT tract, count(*) FROM t WHERE tract IS NOT NULL GROUP BY tract ORDER BY tract"
                .to_string(),
            groups
                .iter()
                .map(|(&t, &c)| vec![Value::Int(t), Value::Int(c)])
                .collect(),
        ),
        (
            "SELECT tract FROM t WHERE tract IS NOT NULL ORDER BY tract LIMIT 4 OFFSET 30"
                .to_string(),
            sorted[30..34].iter().map(|&t| vec![Value::Int(t)]).collect(),
        ),
        (
            "SELECT sum(tract) FROM t".to_string(),
            vec![vec![Value::Int(sorted.iter().sum())]],
        ),
    ];
    for partition_rows in [7, 1000, 65_536] {
        let db = database(text.as_bytes(), "t", partition_rows, 2);
        for (sql, want) in &cases {
            let got = db.query(sql).unwrap();
            assert_eq!(&got.rows, want, "{sql}, partition_rows {partition_rows}");
        }
        if partition_rows == 1000 {
            let info = db.table_info("t").unwrap();
            let tract = info.columns.iter().find(|c| c.name == "tract").unwrap();
            assert!(format!("{tract:?}").contains("int dict u8"), "{tract:?}");
            for (sql, needle) in [
                (&cases[0].0, "integer dictionary codes to a code range"),
                (&cases[3].0, "integer dictionary codes against a code set"),
                (&cases[4].0, "u8 integer dictionary codes"),
                (&cases[5].0, "counted per code of tract"),
            ] {
                let text = explain(&db, sql);
                assert!(text.contains(needle), "EXPLAIN {sql}: {needle:?}\n{text}");
            }
        }
    }
}

/// `GROUP BY … LIMIT n` without ORDER BY merges only the first `n` keys met
/// in partition order: the answer is `n` groups (any are right), each with
/// the aggregates the whole table gives it.
#[test]
fn unordered_group_limit_returns_complete_groups() {
    let data = rows(29, 4000);
    let mut full: std::collections::HashMap<(String, i64), (i64, f64)> = Default::default();
    for r in &data {
        let e = full.entry((r.1.clone(), r.3 % 7)).or_insert((0, f64::MIN));
        e.0 += 1;
        if let Some(v) = r.2 {
            e.1 = e.1.max(v);
        }
    }
    let bytes = csv(&data);
    let mut explained = 0;
    for (config, db) in databases(&bytes) {
        for (limit, offset) in [(5usize, 0usize), (3, 4), (100, 0)] {
            let sql = format!(
                "SELECT name, id % 7, count(*), max(velocity) FROM readings \
                 GROUP BY name, id % 7 LIMIT {limit} OFFSET {offset}"
            );
            let got = db.query(&sql).unwrap().rows;
            assert_eq!(got.len(), limit.min(full.len() - offset), "{sql}, {config}");
            let mut seen = HashSet::new();
            for row in &got {
                let (Value::Str(name), Value::Int(t)) = (&row[0], &row[1]) else {
                    panic!("{row:?}");
                };
                let want = full[&(name.to_string(), *t)];
                assert!(seen.insert((name.to_string(), *t)), "{row:?} twice");
                assert_eq!(row[2], Value::Int(want.0), "{sql}, {config}");
                assert_eq!(row[3], Value::Float(want.1), "{sql}, {config}");
            }
        }
        let text = explain(
            &db,
            "SELECT name, count(*) FROM readings GROUP BY name LIMIT 2",
        );
        if !text.contains("one partial") {
            assert!(text.contains("only the first 2 keys"), "{config}: {text}");
            explained += 1;
        }
    }
    assert!(explained > 0, "no configuration merged partials");
}

/// A key that ascends with load order shares a group between neighbouring
/// partitions (`i / 7` over 500-row partitions); the merge folds those
/// groups and concatenates the rest. Three partials sharing a key (`i /
/// 1500`) merge through dense arrays over the keys' range of 4 values.
/// Counts and sums are checked against
/// arithmetic, and the result has each key once.
#[test]
fn ascending_key_shared_at_partition_ends() {
    let n = 5000i64;
    let mut text = String::from("i,v\n");
    for i in 0..n {
        text.push_str(&format!("{i},{}\n", i % 3));
    }
    let db = database(text.as_bytes(), "t", 500, 2);
    for (div, needle) in [
        (7, "shared at range ends"),
        (500, "disjoint: concatenated, no hashing"),
        (1500, "merged by the key's offset in its range of 4 values"),
    ] {
        let sql = format!("SELECT i / {div}, count(*), sum(v), min(i) FROM t GROUP BY 1");
        let text = explain(&db, &sql);
        assert!(text.contains(needle), "EXPLAIN {sql}: {needle:?}:\n{text}");
        let got = db.query(&sql).unwrap().rows;
        assert_eq!(got.len() as i64, (n - 1) / div + 1, "{sql}");
        let mut seen = HashSet::new();
        for row in &got {
            let Value::Int(k) = row[0] else {
                panic!("{sql}: key {:?}", row[0])
            };
            assert!(seen.insert(k), "{sql}: key {k} twice");
            let members: Vec<i64> = (k * div..((k + 1) * div).min(n)).collect();
            let sum: i64 = members.iter().map(|i| i % 3).sum();
            assert_eq!(
                row[1..],
                [
                    Value::Int(members.len() as i64),
                    Value::Int(sum),
                    Value::Int(k * div)
                ],
                "{sql}: group {k}"
            );
        }
    }
}

/// A 64-bit key nearly unique within each 65,536-row partition is not
/// grouped there (a group per row, grouped at the merge); the radix merge
/// sizes its buckets from a sample of the key hashes. Counts and sums
/// equal those computed here, with each key once.
#[test]
fn nearly_unique_wide_key_grouped_at_the_merge() {
    let n = 140_000usize;
    let mut rng = ChaCha8Rng::seed_from_u64(23);
    // About 5% of the rows repeat an earlier key.
    let mut keys: Vec<i64> = Vec::with_capacity(n);
    let mut text = String::from("k,v\n");
    let mut want: std::collections::HashMap<i64, (i64, i64)> = Default::default();
    for i in 0..n {
        let k = if i > 0 && rng.gen_bool(0.05) {
            keys[rng.gen_range(0..i)]
        } else {
            rng.gen_range(-(1i64 << 62)..(1i64 << 62))
        };
        keys.push(k);
        let v = (i % 7) as i64;
        text.push_str(&format!("{k},{v}\n"));
        let e = want.entry(k).or_default();
        e.0 += 1;
        e.1 += v;
    }
    let db = database(text.as_bytes(), "t", 65_536, 2);
    let sql = "SELECT k, count(*), sum(v) FROM t GROUP BY k";
    let plan = explain(&db, sql);
    assert!(
        plan.contains("a group per row, grouped at the merge")
            && plan.contains("radix-partitioned"),
        "{plan}"
    );
    let got = db.query(sql).unwrap().rows;
    assert_eq!(got.len(), want.len());
    let mut seen = HashSet::new();
    for row in &got {
        let (Value::Int(k), Value::Int(c), Value::Int(s)) = (&row[0], &row[1], &row[2]) else {
            panic!("{row:?}")
        };
        assert!(seen.insert(*k), "key {k} twice");
        assert_eq!(want.get(k), Some(&(*c, *s)), "key {k}");
    }
}

/// Two keys whose tuples are nearly unique within each partition and
/// whose key space exceeds 64 bits (a wide integer and a string, some
/// NULL): not grouped there (a group per row), grouped at the merge, with
/// counts and sums equal to those computed here.
#[test]
fn nearly_unique_key_tuples_grouped_at_the_merge() {
    let n = 140_000usize;
    let mut rng = ChaCha8Rng::seed_from_u64(29);
    let mut tuples: Vec<(i64, Option<String>)> = Vec::with_capacity(n);
    let mut text = String::from("k,s,v\n");
    let mut want: std::collections::HashMap<(i64, Option<String>), (i64, i64)> = Default::default();
    for i in 0..n {
        // About 5% of the rows repeat an earlier tuple.
        let t = if i > 0 && rng.gen_bool(0.05) {
            tuples[rng.gen_range(0..i)].clone()
        } else {
            let s = (!rng.gen_bool(0.1)).then(|| format!("w{}", rng.gen_range(0..500)));
            (rng.r#gen::<i64>(), s)
        };
        let v = (i % 7) as i64;
        text.push_str(&format!("{},{},{v}\n", t.0, t.1.as_deref().unwrap_or("")));
        let e = want.entry(t.clone()).or_default();
        e.0 += 1;
        e.1 += v;
        tuples.push(t);
    }
    let db = database(text.as_bytes(), "t", 65_536, 2);
    let sql = "SELECT k, s, count(*), sum(v) FROM t GROUP BY k, s";
    let plan = explain(&db, sql);
    assert!(
        plan.contains("a new key tuple: a group per row, grouped at the merge"),
        "{plan}"
    );
    let got = db.query(sql).unwrap().rows;
    assert_eq!(got.len(), want.len());
    let mut seen = HashSet::new();
    for row in &got {
        let (Value::Int(k), Value::Int(c), Value::Int(v)) = (&row[0], &row[2], &row[3]) else {
            panic!("{row:?}")
        };
        let s = match &row[1] {
            Value::Null => None,
            Value::Str(s) => Some(s.to_string()),
            other => panic!("{other:?}"),
        };
        let key = (*k, s);
        assert_eq!(want.get(&key), Some(&(*c, *v)), "{key:?}");
        assert!(seen.insert(key.clone()), "{key:?} twice");
    }
}

/// A top-n over a key with few values stops reading partitions once those
/// read hold `offset + limit` rows of the best value any zone map allows:
/// the rows are the first such rows in load order (ties keep it), as a full
/// read gives them, and fewer rows are scanned. With NULLs sorting first
/// (DESC), NULL is the best value.
#[test]
fn top_n_over_ties_stops_after_the_partitions_it_needs() {
    let n = 20_000usize;
    let k_of = |i: usize| -> Option<usize> { (i % 13 != 5).then_some(i * 7919 % 4) };
    let mut text = String::from("i,k\n");
    for i in 0..n {
        let k = k_of(i).map(|k| k.to_string()).unwrap_or_default();
        text.push_str(&format!("{i},{k}\n"));
    }
    let db = database(text.as_bytes(), "t", 1000, 2);
    for (sql, best) in [
        ("SELECT i FROM t ORDER BY k LIMIT 10 OFFSET 3", Some(0)),
        // DESC puts NULLs last by default, as DuckDB does.
        ("SELECT i FROM t ORDER BY k DESC LIMIT 10 OFFSET 3", Some(3)),
        (
            "SELECT i FROM t ORDER BY k DESC NULLS FIRST LIMIT 10 OFFSET 3",
            None,
        ),
        (
            "SELECT i FROM t ORDER BY k DESC NULLS LAST LIMIT 10 OFFSET 3",
            Some(3),
        ),
    ] {
        let want: Vec<Vec<Value>> = (0..n)
            .filter(|&i| k_of(i) == best)
            .skip(3)
            .take(10)
            .map(|i| vec![Value::Int(i as i64)])
            .collect();
        assert_rows_scanning_under_half(&db, sql, &want, n);
    }
    // A window beyond the best value's rows reads every partition.
    let all = db
        .query("SELECT i FROM t ORDER BY k LIMIT 10 OFFSET 6000")
        .unwrap();
    assert_eq!(all.rows_scanned, n);
    assert_eq!(all.rows.len(), 10);
}

/// A top-n on a column in no load order reads partitions best zone-map
/// bound first and stops once no unread partition can enter: the rows are
/// those a full sort gives, from fewer rows scanned. A WHERE keeps it right
/// (the bound is the whole partition's).
#[test]
fn top_n_reads_partitions_best_bound_first() {
    let n = 30_000usize;
    let mut rng = ChaCha8Rng::seed_from_u64(31);
    let u: Vec<i64> = (0..n).map(|_| rng.gen_range(0..1_000_000_000)).collect();
    let mut text = String::from("i,u\n");
    for (i, x) in u.iter().enumerate() {
        text.push_str(&format!("{i},{x}\n"));
    }
    let db = database(text.as_bytes(), "t", 1000, 2);
    for (sql, desc, odd) in [
        ("SELECT i, u FROM t ORDER BY u LIMIT 7", false, false),
        (
            "SELECT i, u FROM t ORDER BY u DESC, i LIMIT 7 OFFSET 2",
            true,
            false,
        ),
        (
            "SELECT i, u FROM t WHERE i % 2 = 1 ORDER BY u LIMIT 7",
            false,
            true,
        ),
    ] {
        let mut all: Vec<(i64, usize)> = u
            .iter()
            .enumerate()
            .filter(|(i, _)| !odd || i % 2 == 1)
            .map(|(i, &x)| (if desc { -x } else { x }, i))
            .collect();
        all.sort();
        let skip = if sql.contains("OFFSET 2") { 2 } else { 0 };
        let want: Vec<Vec<Value>> = all[skip..skip + 7]
            .iter()
            .map(|&(_, i)| vec![Value::Int(i as i64), Value::Int(u[i])])
            .collect();
        assert_rows_scanning_under_half(&db, sql, &want, n);
        let plan = explain(&db, sql);
        assert!(plan.contains("best zone-map bound first"), "{plan}");
    }
}

/// `sql` returns `want`, reading fewer than half the table's `n` rows.
fn assert_rows_scanning_under_half(db: &Database, sql: &str, want: &[Vec<Value>], n: usize) {
    let got = db.query(sql).unwrap();
    assert_eq!(got.rows, want, "{sql}");
    assert!(
        got.rows_scanned < n / 2,
        "{sql}: {} rows scanned",
        got.rows_scanned
    );
}

/// Comparisons of an integer-dictionary column against a constant below
/// every value (no code in range) answer without arithmetic on an empty
/// code range (found by the fuzz test: `x <> k` overflowed in debug builds).
#[test]
fn integer_dictionary_compare_below_every_value() {
    let mut text = String::from("x\n");
    let values = [7i64, 1_000_000_007, 123_456, 99_999_999_999, 42];
    for i in 0..3000 {
        text.push_str(&format!("{}\n", values[i % 5]));
    }
    let db = database(text.as_bytes(), "t", 1000, 2);
    let info = db.table_info("t").unwrap();
    assert!(
        info.columns[0].encodings[0].0.starts_with("int dict"),
        "{:?}",
        info.columns[0].encodings
    );
    for (sql, want) in [
        ("SELECT count(*) FROM t WHERE x <> -5", 3000),
        ("SELECT count(*) FROM t WHERE x = -5", 0),
        ("SELECT count(*) FROM t WHERE x < -5", 0),
        ("SELECT count(*) FROM t WHERE x > -5", 3000),
    ] {
        assert_eq!(
            db.query(sql).unwrap().rows,
            vec![vec![Value::Int(want)]],
            "{sql}"
        );
    }
}

/// The hash index serves selective point lookups only: a column whose
/// values repeat is never indexed, a key that hits many rows scans, and an
/// index lookup reads only partitions that zone maps keep. Every answer
/// equals a scan's.
#[test]
fn hash_index_only_for_selective_lookups() {
    let n = 20_000;
    let mut rng = ChaCha8Rng::seed_from_u64(41);
    // `id` is unique but for a fifth of the rows, which hold 7; `g` takes
    // three values; `t` ascends.
    let data: Vec<(i64, i64, i64)> = (0..n)
        .map(|i| {
            let id = if i % 5 == 0 {
                7
            } else {
                rng.gen_range(1_000..1_000_000_000i64)
            };
            (id, i as i64 % 3, i as i64)
        })
        .collect();
    let mut text = String::from("id,g,t\n");
    for (id, g, t) in &data {
        text.push_str(&format!("{id},{g},{t}\n"));
    }
    let db = database(text.as_bytes(), "h", 500, 2);
    let indexed = |name: &str| {
        let info = db.table_info("h").unwrap();
        info.columns
            .iter()
            .find(|c| c.name == name)
            .unwrap()
            .indexed
    };
    let count = |sql: &str| match db.query(sql).unwrap().rows[..] {
        [ref row] => row[0].clone(),
        ref rows => panic!("{sql}: {rows:?}"),
    };
    for _ in 0..3 {
        let want = data.iter().filter(|r| r.1 == 1).count() as i64;
        assert_eq!(
            count("SELECT count(*) FROM h WHERE g = 1"),
            Value::Int(want)
        );
    }
    assert!(!indexed("g"), "a column of three values is not indexed");

    // A lookup of thousands of keys (a join filter's IN list) scans and
    // builds no index, however often it runs; one of ten keys spread over
    // the partitions builds it on the second run.
    let many: Vec<String> = (0..2_000).map(|i| (i * 10).to_string()).collect();
    let many = format!("SELECT count(*) FROM h WHERE t IN ({})", many.join(", "));
    for _ in 0..3 {
        assert_eq!(count(&many), Value::Int(2_000));
    }
    assert!(!indexed("t"), "a lookup of 2,000 keys builds no index");
    let few: Vec<String> = (0..10).map(|i| (i * 2_000 + 3).to_string()).collect();
    let few = format!("SELECT count(*) FROM h WHERE t IN ({})", few.join(", "));
    for _ in 0..2 {
        assert_eq!(count(&few), Value::Int(10));
    }
    assert!(
        indexed("t"),
        "a lookup of ten keys builds it on its second run"
    );

    let unique = data[12_346].0;
    for _ in 0..2 {
        assert_eq!(
            count(&format!("SELECT count(*) FROM h WHERE id = {unique}")),
            Value::Int(1)
        );
    }
    assert!(
        indexed("id"),
        "the second lookup on a unique key builds the index"
    );
    let lookup = explain(&db, &format!("SELECT t FROM h WHERE id = {unique}"));
    assert!(lookup.contains("hash index lookup"), "{lookup}");
    // 7 is a fifth of the rows: a scan, with the same count.
    let frequent = "SELECT count(*) FROM h WHERE id = 7";
    let want = data.iter().filter(|r| r.0 == 7).count() as i64;
    assert_eq!(count(frequent), Value::Int(want));
    let text = explain(&db, frequent);
    assert!(!text.contains("hash index lookup"), "{text}");
    // Row 12,346 lies past t < 10000, in a partition zone maps rule out:
    // the lookup reads nothing.
    let pruned = format!("SELECT t FROM h WHERE id = {unique} AND t < 10000");
    let got = db.query(&pruned).unwrap();
    assert!(got.rows.is_empty() && got.rows_scanned == 0);
    let text = explain(&db, &pruned);
    assert!(text.contains("hash index on id"), "{text}");
}

/// Two keys whose code space is too large for accumulators per slot but
/// small against the partition's rows (120 × 60 = 7,200 slots for 500
/// rows) number their groups through a slot map, with the answer a hash
/// table gives; NULLs in a key are a group of their own.
#[test]
fn sparse_two_key_space_through_a_slot_map() {
    let n = 20_000i64;
    let a = |i: i64| i * 7 % 120;
    let b = |i: i64| (i * 13 + i / 120) % 60;
    let mut text = String::from("a,b,x\n");
    let mut want: std::collections::BTreeMap<(i64, Option<i64>), (i64, i64)> =
        std::collections::BTreeMap::new();
    for i in 0..n {
        // b is NULL in one row of 97.
        let b = (i % 97 != 5).then(|| b(i));
        let field = b.map(|v| v.to_string()).unwrap_or_default();
        text.push_str(&format!("{},{field},{i}\n", a(i)));
        let e = want.entry((a(i), b)).or_default();
        e.0 += 1;
        e.1 += i;
    }
    let sql = "SELECT a, b, count(*), sum(x) FROM t GROUP BY a, b ORDER BY a, b NULLS FIRST";
    for (partition_rows, threads) in [(500, 1), (500, 2), (65_536, 2)] {
        let db = database(text.as_bytes(), "t", partition_rows, threads);
        if partition_rows == 500 {
            let plan = explain(&db, sql);
            assert!(plan.contains("slot map"), "{plan}");
        }
        let got = db.query(sql).unwrap().rows;
        let expected: Vec<Vec<Value>> = want
            .iter()
            .map(|(&(a, b), &(c, s))| {
                vec![
                    Value::Int(a),
                    b.map_or(Value::Null, Value::Int),
                    Value::Int(c),
                    Value::Int(s),
                ]
            })
            .collect();
        assert_eq!(got, expected, "partition_rows {partition_rows}");
    }
}
