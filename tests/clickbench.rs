//! ClickBench's 43 queries (the duckdb entry's `queries.sql`, as katydid's
//! dialect must accept them) over a small generated `hits` table with the
//! columns they read: every query plans and runs, and the answers of the
//! queries that exercise katydid's own functions (`extract`, `strlen`,
//! `regexp_replace`) and clauses (`ORDER BY count(*)`, `GROUP BY 1, URL`,
//! `OFFSET`) are checked against answers computed here directly from the
//! generated rows.

mod common;

use std::collections::{BTreeMap, HashMap};

use katydid::sql::{eq_ignoring_spans, parse};
use katydid::{Database, Value};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The 43 queries, in order (Q1 is index 0).
const QUERIES: [&str; 43] = [
    "SELECT COUNT(*) FROM hits",
    "SELECT COUNT(*) FROM hits WHERE AdvEngineID <> 0",
    "SELECT SUM(AdvEngineID), COUNT(*), AVG(ResolutionWidth) FROM hits",
    "SELECT AVG(UserID) FROM hits",
    "SELECT COUNT(DISTINCT UserID) FROM hits",
    "SELECT COUNT(DISTINCT SearchPhrase) FROM hits",
    "SELECT MIN(EventDate), MAX(EventDate) FROM hits",
    "SELECT AdvEngineID, COUNT(*) FROM hits WHERE AdvEngineID <> 0 GROUP BY AdvEngineID ORDER BY COUNT(*) DESC",
    "SELECT RegionID, COUNT(DISTINCT UserID) AS u FROM hits GROUP BY RegionID ORDER BY u DESC LIMIT 10",
    "SELECT RegionID, SUM(AdvEngineID), COUNT(*) AS c, AVG(ResolutionWidth), COUNT(DISTINCT UserID) FROM hits GROUP BY RegionID ORDER BY c DESC LIMIT 10",
    "SELECT MobilePhoneModel, COUNT(DISTINCT UserID) AS u FROM hits WHERE MobilePhoneModel <> '' GROUP BY MobilePhoneModel ORDER BY u DESC LIMIT 10",
    "SELECT MobilePhone, MobilePhoneModel, COUNT(DISTINCT UserID) AS u FROM hits WHERE MobilePhoneModel <> '' GROUP BY MobilePhone, MobilePhoneModel ORDER BY u DESC LIMIT 10",
    "SELECT SearchPhrase, COUNT(*) AS c FROM hits WHERE SearchPhrase <> '' GROUP BY SearchPhrase ORDER BY c DESC LIMIT 10",
    "SELECT SearchPhrase, COUNT(DISTINCT UserID) AS u FROM hits WHERE SearchPhrase <> '' GROUP BY SearchPhrase ORDER BY u DESC LIMIT 10",
    "SELECT SearchEngineID, SearchPhrase, COUNT(*) AS c FROM hits WHERE SearchPhrase <> '' GROUP BY SearchEngineID, SearchPhrase ORDER BY c DESC LIMIT 10",
    "SELECT UserID, COUNT(*) FROM hits GROUP BY UserID ORDER BY COUNT(*) DESC LIMIT 10",
    "SELECT UserID, SearchPhrase, COUNT(*) FROM hits GROUP BY UserID, SearchPhrase ORDER BY COUNT(*) DESC LIMIT 10",
    "SELECT UserID, SearchPhrase, COUNT(*) FROM hits GROUP BY UserID, SearchPhrase LIMIT 10",
    "SELECT UserID, extract(minute FROM EventTime) AS m, SearchPhrase, COUNT(*) FROM hits GROUP BY UserID, m, SearchPhrase ORDER BY COUNT(*) DESC LIMIT 10",
    "SELECT UserID FROM hits WHERE UserID = 435090932899640449",
    "SELECT COUNT(*) FROM hits WHERE URL LIKE '%google%'",
    "SELECT SearchPhrase, MIN(URL), COUNT(*) AS c FROM hits WHERE URL LIKE '%google%' AND SearchPhrase <> '' GROUP BY SearchPhrase ORDER BY c DESC LIMIT 10",
    "SELECT SearchPhrase, MIN(URL), MIN(Title), COUNT(*) AS c, COUNT(DISTINCT UserID) FROM hits WHERE Title LIKE '%Google%' AND URL NOT LIKE '%.google.%' AND SearchPhrase <> '' GROUP BY SearchPhrase ORDER BY c DESC LIMIT 10",
    "SELECT * FROM hits WHERE URL LIKE '%google%' ORDER BY EventTime LIMIT 10",
    "SELECT SearchPhrase FROM hits WHERE SearchPhrase <> '' ORDER BY EventTime LIMIT 10",
    "SELECT SearchPhrase FROM hits WHERE SearchPhrase <> '' ORDER BY SearchPhrase LIMIT 10",
    "SELECT SearchPhrase FROM hits WHERE SearchPhrase <> '' ORDER BY EventTime, SearchPhrase LIMIT 10",
    "SELECT CounterID, AVG(STRLEN(URL)) AS l, COUNT(*) AS c FROM hits WHERE URL <> '' GROUP BY CounterID HAVING COUNT(*) > 100000 ORDER BY l DESC LIMIT 25",
    "SELECT REGEXP_REPLACE(Referer, '^https?://(?:www\\.)?([^/]+)/.*$', '\\1') AS k, AVG(STRLEN(Referer)) AS l, COUNT(*) AS c, MIN(Referer) FROM hits WHERE Referer <> '' GROUP BY k HAVING COUNT(*) > 100000 ORDER BY l DESC LIMIT 25",
    "SELECT SUM(ResolutionWidth), SUM(ResolutionWidth + 1), SUM(ResolutionWidth + 2), SUM(ResolutionWidth + 3), SUM(ResolutionWidth + 4), SUM(ResolutionWidth + 5), SUM(ResolutionWidth + 6), SUM(ResolutionWidth + 7), SUM(ResolutionWidth + 8), SUM(ResolutionWidth + 9), SUM(ResolutionWidth + 10), SUM(ResolutionWidth + 11), SUM(ResolutionWidth + 12), SUM(ResolutionWidth + 13), SUM(ResolutionWidth + 14), SUM(ResolutionWidth + 15), SUM(ResolutionWidth + 16), SUM(ResolutionWidth + 17), SUM(ResolutionWidth + 18), SUM(ResolutionWidth + 19), SUM(ResolutionWidth + 20), SUM(ResolutionWidth + 21), SUM(ResolutionWidth + 22), SUM(ResolutionWidth + 23), SUM(ResolutionWidth + 24), SUM(ResolutionWidth + 25), SUM(ResolutionWidth + 26), SUM(ResolutionWidth + 27), SUM(ResolutionWidth + 28), SUM(ResolutionWidth + 29), SUM(ResolutionWidth + 30), SUM(ResolutionWidth + 31), SUM(ResolutionWidth + 32), SUM(ResolutionWidth + 33), SUM(ResolutionWidth + 34), SUM(ResolutionWidth + 35), SUM(ResolutionWidth + 36), SUM(ResolutionWidth + 37), SUM(ResolutionWidth + 38), SUM(ResolutionWidth + 39), SUM(ResolutionWidth + 40), SUM(ResolutionWidth + 41), SUM(ResolutionWidth + 42), SUM(ResolutionWidth + 43), SUM(ResolutionWidth + 44), SUM(ResolutionWidth + 45), SUM(ResolutionWidth + 46), SUM(ResolutionWidth + 47), SUM(ResolutionWidth + 48), SUM(ResolutionWidth + 49), SUM(ResolutionWidth + 50), SUM(ResolutionWidth + 51), SUM(ResolutionWidth + 52), SUM(ResolutionWidth + 53), SUM(ResolutionWidth + 54), SUM(ResolutionWidth + 55), SUM(ResolutionWidth + 56), SUM(ResolutionWidth + 57), SUM(ResolutionWidth + 58), SUM(ResolutionWidth + 59), SUM(ResolutionWidth + 60), SUM(ResolutionWidth + 61), SUM(ResolutionWidth + 62), SUM(ResolutionWidth + 63), SUM(ResolutionWidth + 64), SUM(ResolutionWidth + 65), SUM(ResolutionWidth + 66), SUM(ResolutionWidth + 67), SUM(ResolutionWidth + 68), SUM(ResolutionWidth + 69), SUM(ResolutionWidth + 70), SUM(ResolutionWidth + 71), SUM(ResolutionWidth + 72), SUM(ResolutionWidth + 73), SUM(ResolutionWidth + 74), SUM(ResolutionWidth + 75), SUM(ResolutionWidth + 76), SUM(ResolutionWidth + 77), SUM(ResolutionWidth + 78), SUM(ResolutionWidth + 79), SUM(ResolutionWidth + 80), SUM(ResolutionWidth + 81), SUM(ResolutionWidth + 82), SUM(ResolutionWidth + 83), SUM(ResolutionWidth + 84), SUM(ResolutionWidth + 85), SUM(ResolutionWidth + 86), SUM(ResolutionWidth + 87), SUM(ResolutionWidth + 88), SUM(ResolutionWidth + 89) FROM hits",
    "SELECT SearchEngineID, ClientIP, COUNT(*) AS c, SUM(IsRefresh), AVG(ResolutionWidth) FROM hits WHERE SearchPhrase <> '' GROUP BY SearchEngineID, ClientIP ORDER BY c DESC LIMIT 10",
    "SELECT WatchID, ClientIP, COUNT(*) AS c, SUM(IsRefresh), AVG(ResolutionWidth) FROM hits WHERE SearchPhrase <> '' GROUP BY WatchID, ClientIP ORDER BY c DESC LIMIT 10",
    "SELECT WatchID, ClientIP, COUNT(*) AS c, SUM(IsRefresh), AVG(ResolutionWidth) FROM hits GROUP BY WatchID, ClientIP ORDER BY c DESC LIMIT 10",
    "SELECT URL, COUNT(*) AS c FROM hits GROUP BY URL ORDER BY c DESC LIMIT 10",
    "SELECT 1, URL, COUNT(*) AS c FROM hits GROUP BY 1, URL ORDER BY c DESC LIMIT 10",
    "SELECT ClientIP, ClientIP - 1, ClientIP - 2, ClientIP - 3, COUNT(*) AS c FROM hits GROUP BY ClientIP, ClientIP - 1, ClientIP - 2, ClientIP - 3 ORDER BY c DESC LIMIT 10",
    "SELECT URL, COUNT(*) AS PageViews FROM hits WHERE CounterID = 62 AND EventDate >= '2013-07-01' AND EventDate <= '2013-07-31' AND DontCountHits = 0 AND IsRefresh = 0 AND URL <> '' GROUP BY URL ORDER BY PageViews DESC LIMIT 10",
    "SELECT Title, COUNT(*) AS PageViews FROM hits WHERE CounterID = 62 AND EventDate >= '2013-07-01' AND EventDate <= '2013-07-31' AND DontCountHits = 0 AND IsRefresh = 0 AND Title <> '' GROUP BY Title ORDER BY PageViews DESC LIMIT 10",
    "SELECT URL, COUNT(*) AS PageViews FROM hits WHERE CounterID = 62 AND EventDate >= '2013-07-01' AND EventDate <= '2013-07-31' AND IsRefresh = 0 AND IsLink <> 0 AND IsDownload = 0 GROUP BY URL ORDER BY PageViews DESC LIMIT 10 OFFSET 1000",
    "SELECT TraficSourceID, SearchEngineID, AdvEngineID, CASE WHEN (SearchEngineID = 0 AND AdvEngineID = 0) THEN Referer ELSE '' END AS Src, URL AS Dst, COUNT(*) AS PageViews FROM hits WHERE CounterID = 62 AND EventDate >= '2013-07-01' AND EventDate <= '2013-07-31' AND IsRefresh = 0 GROUP BY TraficSourceID, SearchEngineID, AdvEngineID, Src, Dst ORDER BY PageViews DESC LIMIT 10 OFFSET 1000",
    "SELECT URLHash, EventDate, COUNT(*) AS PageViews FROM hits WHERE CounterID = 62 AND EventDate >= '2013-07-01' AND EventDate <= '2013-07-31' AND IsRefresh = 0 AND TraficSourceID IN (-1, 6) AND RefererHash = 3594120000172545465 GROUP BY URLHash, EventDate ORDER BY PageViews DESC LIMIT 10 OFFSET 100",
    "SELECT WindowClientWidth, WindowClientHeight, COUNT(*) AS PageViews FROM hits WHERE CounterID = 62 AND EventDate >= '2013-07-01' AND EventDate <= '2013-07-31' AND IsRefresh = 0 AND DontCountHits = 0 AND URLHash = 2868770270353813622 GROUP BY WindowClientWidth, WindowClientHeight ORDER BY PageViews DESC LIMIT 10 OFFSET 10000",
    "SELECT DATE_TRUNC('minute', EventTime) AS M, COUNT(*) AS PageViews FROM hits WHERE CounterID = 62 AND EventDate >= '2013-07-14' AND EventDate <= '2013-07-15' AND IsRefresh = 0 AND DontCountHits = 0 GROUP BY DATE_TRUNC('minute', EventTime) ORDER BY DATE_TRUNC('minute', EventTime) LIMIT 10 OFFSET 1000",
];

/// One generated row of `hits`, in the column order of [`COLUMNS`].
#[derive(Debug, Clone)]
struct Hit {
    watch_id: i64,
    title: String,
    /// Seconds since the epoch.
    event_time: i64,
    counter_id: i64,
    client_ip: i64,
    region_id: i64,
    user_id: i64,
    url: String,
    referer: String,
    is_refresh: i64,
    resolution_width: i64,
    mobile_phone: i64,
    mobile_phone_model: String,
    trafic_source_id: i64,
    search_engine_id: i64,
    search_phrase: String,
    adv_engine_id: i64,
    window_client_width: i64,
    window_client_height: i64,
    is_link: i64,
    is_download: i64,
    dont_count_hits: i64,
    url_hash: i64,
    referer_hash: i64,
}

const COLUMNS: &str = "WatchID,Title,EventTime,EventDate,CounterID,ClientIP,RegionID,UserID,URL,Referer,IsRefresh,ResolutionWidth,MobilePhone,MobilePhoneModel,TraficSourceID,SearchEngineID,SearchPhrase,AdvEngineID,WindowClientWidth,WindowClientHeight,IsLink,IsDownload,DontCountHits,URLHash,RefererHash";

const ROWS: usize = 3000;

/// 2013-07-01 00:00:00 in seconds since the epoch.
const JULY_2013: i64 = 1_372_636_800;

fn hits() -> Vec<Hit> {
    let mut rng = ChaCha8Rng::seed_from_u64(43);
    let hosts = [
        "https://www.google.com",
        "http://google.ru",
        "https://yandex.ru",
        "http://www.example.org",
        "https://news.example.org",
    ];
    let phrases = ["", "", "", "", "cats", "dog food", "google maps", "weather"];
    let models = ["", "", "iPhone", "Galaxy", "Pixel"];
    (0..ROWS)
        .map(|i| {
            let host = hosts[rng.gen_range(0..hosts.len())];
            let url = match rng.gen_range(0..10) {
                0 => String::new(),
                1 => host.to_string(),
                _ => format!(
                    "{host}/page/{}?q={}",
                    rng.gen_range(0..40),
                    rng.gen_range(0..5)
                ),
            };
            let referer = match rng.gen_range(0..8) {
                0 => String::new(),
                1 => hosts[rng.gen_range(0..hosts.len())].to_string(),
                _ => format!(
                    "{}/from/{}",
                    hosts[rng.gen_range(0..hosts.len())],
                    rng.gen_range(0..7)
                ),
            };
            Hit {
                watch_id: 5_000_000_000_000_000_000 + rng.gen_range(0..1_000_000_000_000i64),
                title: if rng.gen_bool(0.3) {
                    format!("Google result {}", rng.gen_range(0..20))
                } else {
                    format!("Page {}", rng.gen_range(0..50))
                },
                // Ascending over July 2013, a few seconds apart.
                event_time: JULY_2013 + i as i64 * 800 + rng.gen_range(0..800),
                counter_id: if rng.gen_bool(0.7) {
                    62
                } else {
                    rng.gen_range(1..100)
                },
                client_ip: rng.gen_range(-2_000_000_000..2_000_000_000i64) / 1_000_000 * 1_000_000,
                region_id: rng.gen_range(0..30),
                user_id: if i == 77 {
                    435_090_932_899_640_449
                } else {
                    1_000_000_000_000 + rng.gen_range(0..300)
                },
                url,
                referer,
                is_refresh: i64::from(rng.gen_bool(0.2)),
                resolution_width: [1024, 1280, 1366, 1920][rng.gen_range(0..4)],
                mobile_phone: rng.gen_range(0..5),
                mobile_phone_model: models[rng.gen_range(0..models.len())].to_string(),
                trafic_source_id: rng.gen_range(-1..=9),
                search_engine_id: rng.gen_range(0..4),
                search_phrase: phrases[rng.gen_range(0..phrases.len())].to_string(),
                adv_engine_id: if rng.gen_bool(0.9) {
                    0
                } else {
                    rng.gen_range(1..4)
                },
                window_client_width: [0, 800, 1200][rng.gen_range(0..3)],
                window_client_height: [0, 600, 900][rng.gen_range(0..3)],
                is_link: i64::from(rng.gen_bool(0.3)),
                is_download: i64::from(rng.gen_bool(0.1)),
                dont_count_hits: i64::from(rng.gen_bool(0.1)),
                url_hash: if i % 50 == 0 {
                    2_868_770_270_353_813_622
                } else {
                    rng.gen_range(0..i64::MAX)
                },
                referer_hash: if i % 40 == 0 {
                    3_594_120_000_172_545_465
                } else {
                    rng.gen_range(0..i64::MAX)
                },
            }
        })
        .collect()
}

/// `YYYY-MM-DD HH:MM:SS` for seconds since the epoch, computed here (not
/// with katydid's formatter).
fn datetime(seconds: i64) -> String {
    let days = seconds.div_euclid(86_400);
    let secs = seconds.rem_euclid(86_400);
    // July 2013 only: count days from 2013-07-01.
    let day = days - JULY_2013 / 86_400 + 1;
    assert!((1..=31).contains(&day), "generated times stay in July 2013");
    format!(
        "2013-07-{day:02} {:02}:{:02}:{:02}",
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    )
}

fn csv(hits: &[Hit]) -> Vec<u8> {
    let mut out = format!("{COLUMNS}\n");
    for h in hits {
        let time = datetime(h.event_time);
        let date = &time[..10];
        out.push_str(&format!(
            "{},{},{time},{date},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n",
            h.watch_id,
            h.title,
            h.counter_id,
            h.client_ip,
            h.region_id,
            h.user_id,
            h.url,
            h.referer,
            h.is_refresh,
            h.resolution_width,
            h.mobile_phone,
            h.mobile_phone_model,
            h.trafic_source_id,
            h.search_engine_id,
            h.search_phrase,
            h.adv_engine_id,
            h.window_client_width,
            h.window_client_height,
            h.is_link,
            h.is_download,
            h.dont_count_hits,
            h.url_hash,
            h.referer_hash,
        ));
    }
    out.into_bytes()
}

fn databases(data: &[u8]) -> Vec<(String, Database)> {
    let mut out = Vec::new();
    for (threads, partition_rows) in [(1, 65_536), (2, 100), (2, 7)] {
        let db = common::csv_database(data, "hits", threads, partition_rows);
        out.push((
            format!("threads {threads}, partitions of {partition_rows}"),
            db,
        ));
    }
    out
}

#[test]
fn all_43_queries_parse_round_trip_plan_and_run() {
    let data = csv(&hits());
    let mut failures = Vec::new();
    for (config, db) in databases(&data) {
        for (i, sql) in QUERIES.iter().enumerate() {
            let parsed = parse(sql).unwrap_or_else(|e| panic!("Q{}: {e}", i + 1));
            let shown = parsed.to_string();
            let again =
                parse(&shown).unwrap_or_else(|e| panic!("Q{} displays as {shown:?}: {e}", i + 1));
            assert!(
                eq_ignoring_spans(&parsed, &again),
                "Q{} round trip: {shown}",
                i + 1
            );
            if let Err(e) = db.query(sql) {
                failures.push(format!("{config}: Q{}: {e}", i + 1));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

fn int(v: &Value) -> i64 {
    match v {
        Value::Int(i) => *i,
        other => panic!("not an integer: {other:?}"),
    }
}

fn float(v: &Value) -> f64 {
    match v {
        Value::Float(f) => *f,
        other => panic!("not a float: {other:?}"),
    }
}

fn text(v: &Value) -> String {
    match v {
        Value::Str(s) => s.to_string(),
        other => panic!("not a string: {other:?}"),
    }
}

/// What `REGEXP_REPLACE(r, '^https?://(?:www\.)?([^/]+)/.*$', '\1')` gives,
/// by string operations: the host of a URL that has a path, else `r`.
fn referer_host(r: &str) -> String {
    let rest = r
        .strip_prefix("https://")
        .or_else(|| r.strip_prefix("http://"));
    let Some(rest) = rest else {
        return r.to_string();
    };
    let rest = rest.strip_prefix("www.").unwrap_or(rest);
    match rest.split_once('/') {
        Some((host, _)) if !host.is_empty() && !r.contains('\n') => host.to_string(),
        _ => r.to_string(),
    }
}

/// Counts of `key` over `hits`, sorted by count descending.
fn counts_desc<K: Ord + Clone>(hits: &[Hit], key: impl Fn(&Hit) -> Option<K>) -> Vec<(K, i64)> {
    let mut m: BTreeMap<K, i64> = BTreeMap::new();
    for h in hits {
        if let Some(k) = key(h) {
            *m.entry(k).or_default() += 1;
        }
    }
    let mut v: Vec<(K, i64)> = m.into_iter().collect();
    v.sort_by_key(|e| std::cmp::Reverse(e.1));
    v
}

#[test]
fn answers_of_the_queries_that_use_katydids_functions_and_clauses() {
    let hits = hits();
    let data = csv(&hits);
    let non_empty = |s: &str| (!s.is_empty()).then(|| s.to_string());
    for (config, db) in databases(&data) {
        let run = |sql: &str| {
            db.query(sql)
                .unwrap_or_else(|e| panic!("{config}: {sql}: {e}"))
                .rows
        };

        // Q19's key: extract(minute FROM EventTime), as a histogram.
        let rows = run("SELECT extract(minute FROM EventTime) AS m, COUNT(*) FROM hits GROUP BY m");
        let got: HashMap<i64, i64> = rows.iter().map(|r| (int(&r[0]), int(&r[1]))).collect();
        let expected: HashMap<i64, i64> = counts_desc(&hits, |h| Some(h.event_time / 60 % 60))
            .into_iter()
            .collect();
        assert_eq!(got, expected, "{config}: minutes");

        // Q28 with a threshold the small table reaches.
        let rows = run(
            "SELECT CounterID, AVG(STRLEN(URL)) AS l, COUNT(*) AS c FROM hits WHERE URL <> '' \
             GROUP BY CounterID HAVING COUNT(*) > 100 ORDER BY l DESC LIMIT 25",
        );
        let mut per_counter: HashMap<i64, (usize, i64)> = HashMap::new();
        for h in hits.iter().filter(|h| !h.url.is_empty()) {
            let e = per_counter.entry(h.counter_id).or_default();
            e.0 += h.url.len();
            e.1 += 1;
        }
        per_counter.retain(|_, (_, c)| *c > 100);
        assert_eq!(rows.len(), per_counter.len(), "{config}: Q28 groups");
        for r in &rows {
            let (bytes, c) = per_counter[&int(&r[0])];
            assert_eq!(int(&r[2]), c);
            assert!((float(&r[1]) - bytes as f64 / c as f64).abs() < 1e-9);
        }

        // Q29 with a threshold the small table reaches: hosts of referers
        // with a path, referers without one unchanged.
        let rows = run(
            "SELECT REGEXP_REPLACE(Referer, '^https?://(?:www\\.)?([^/]+)/.*$', '\\1') AS k, \
             AVG(STRLEN(Referer)) AS l, COUNT(*) AS c, MIN(Referer) FROM hits WHERE Referer <> '' \
             GROUP BY k HAVING COUNT(*) > 10 ORDER BY l DESC LIMIT 25",
        );
        let mut per_key: BTreeMap<String, (usize, i64, String)> = BTreeMap::new();
        for h in hits.iter().filter(|h| !h.referer.is_empty()) {
            let e = per_key
                .entry(referer_host(&h.referer))
                .or_insert((0, 0, h.referer.clone()));
            e.0 += h.referer.len();
            e.1 += 1;
            e.2 = e.2.clone().min(h.referer.clone());
        }
        per_key.retain(|_, v| v.1 > 10);
        assert!(per_key.contains_key("google.com") && per_key.contains_key("https://yandex.ru"));
        assert_eq!(rows.len(), per_key.len(), "{config}: Q29 groups");
        let mut last = f64::INFINITY;
        for r in &rows {
            let (bytes, c, min) = &per_key[&text(&r[0])];
            let l = float(&r[1]);
            assert!((l - *bytes as f64 / *c as f64).abs() < 1e-9);
            assert!(l <= last, "{config}: Q29 is ordered by l descending");
            last = l;
            assert_eq!((int(&r[2]), text(&r[3])), (*c, min.clone()));
        }

        // Q8: ORDER BY COUNT(*) DESC.
        let rows = run(QUERIES[7]);
        let expected = counts_desc(&hits, |h| (h.adv_engine_id != 0).then_some(h.adv_engine_id));
        let got: Vec<i64> = rows.iter().map(|r| int(&r[1])).collect();
        let want: Vec<i64> = expected.iter().map(|(_, c)| *c).collect();
        assert_eq!(got, want, "{config}: Q8 counts in order");
        for r in &rows {
            assert!(expected.contains(&(int(&r[0]), int(&r[1]))));
        }

        // Q35: GROUP BY 1, URL with the literal 1 first (the empty fields
        // read as NULL form one group, shown here as "").
        let rows = run(QUERIES[34]);
        let expected = counts_desc(&hits, |h| Some(h.url.clone()));
        assert_eq!(rows.len(), 10);
        for (r, (_, c)) in rows.iter().zip(&expected) {
            assert_eq!(int(&r[0]), 1);
            assert_eq!(int(&r[2]), *c, "{config}: Q35 counts in order");
            let url = if r[1].is_null() {
                String::new()
            } else {
                text(&r[1])
            };
            assert!(expected.contains(&(url, *c)));
        }

        // Q20: the one row of a UserID.
        let rows = run(QUERIES[19]);
        assert_eq!(rows, vec![vec![Value::Int(435_090_932_899_640_449)]]);

        // Q24: SELECT * … ORDER BY EventTime LIMIT 10 (times are distinct).
        let rows = run(QUERIES[23]);
        let mut google: Vec<&Hit> = hits.iter().filter(|h| h.url.contains("google")).collect();
        google.sort_by_key(|h| h.event_time);
        assert_eq!(rows.len(), 10);
        for (r, h) in rows.iter().zip(&google) {
            assert_eq!(r.len(), 25);
            assert_eq!(int(&r[0]), h.watch_id, "{config}: Q24 row order");
        }

        // Q39's shape (a WHERE, IN (-1, 6), <>, GROUP BY, ORDER BY, OFFSET)
        // with an offset the small table reaches: the counts from rank 5.
        let rows = run(
            "SELECT URL, COUNT(*) AS PageViews FROM hits WHERE CounterID = 62 \
             AND EventDate >= '2013-07-01' AND EventDate <= '2013-07-31' AND IsRefresh = 0 \
             AND IsLink <> 0 AND TraficSourceID NOT IN (-1, 6) AND URL <> '' \
             GROUP BY URL ORDER BY PageViews DESC LIMIT 10 OFFSET 5",
        );
        let expected = counts_desc(&hits, |h| {
            let july = h.event_time < JULY_2013 + 31 * 86_400;
            (h.counter_id == 62
                && july
                && h.is_refresh == 0
                && h.is_link != 0
                && ![-1, 6].contains(&h.trafic_source_id))
            .then(|| non_empty(&h.url))
            .flatten()
        });
        let got: Vec<i64> = rows.iter().map(|r| int(&r[1])).collect();
        let want: Vec<i64> = expected.iter().skip(5).take(10).map(|(_, c)| *c).collect();
        assert_eq!(got, want, "{config}: offset counts");

        // Q43's shape with an offset the small table reaches: minutes in
        // order, one row each (times are seconds apart, so counts are 1 or
        // more per minute).
        let rows = run(
            "SELECT DATE_TRUNC('minute', EventTime) AS M, COUNT(*) AS PageViews FROM hits \
             WHERE CounterID = 62 AND EventDate >= '2013-07-14' AND EventDate <= '2013-07-15' \
             GROUP BY DATE_TRUNC('minute', EventTime) ORDER BY DATE_TRUNC('minute', EventTime) \
             LIMIT 10 OFFSET 3",
        );
        let mut minutes: BTreeMap<i64, i64> = BTreeMap::new();
        for h in &hits {
            let day = (h.event_time - JULY_2013) / 86_400 + 1;
            if h.counter_id == 62 && (14..=15).contains(&day) {
                *minutes.entry(h.event_time / 60 * 60).or_default() += 1;
            }
        }
        let want: Vec<(i64, i64)> = minutes.into_iter().skip(3).take(10).collect();
        let got: Vec<(i64, i64)> = rows
            .iter()
            .map(|r| match r[0] {
                Value::Timestamp(t) => (t / 1_000_000, int(&r[1])),
                ref other => panic!("not a timestamp: {other:?}"),
            })
            .collect();
        assert_eq!(got, want, "{config}: minutes from the fourth");
    }
}
