//! Behaviour of the public generator API: determinism, layout and the
//! documented shapes of every data set.

use std::collections::HashSet;
use std::io::Read;

use katydid_datasets::{
    CHUNK_ROWS, Dataset, describe, generate, generate_bytes, generate_file, generate_gzip,
};

fn text(dataset: Dataset, rows: u64, seed: u64) -> String {
    String::from_utf8(generate_bytes(dataset, rows, seed)).expect("utf-8 output")
}

/// Header fields and data records, split on commas (no field contains a
/// comma; the only quoted field is `""`, the empty string, which comes back
/// as the two quote characters).
fn parse(csv: &str) -> (Vec<&str>, Vec<Vec<&str>>) {
    assert!(csv.ends_with('\n'), "output ends with a line break");
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().expect("header").split(',').collect();
    let records: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    (header, records)
}

/// The quoted empty field: an empty string, not NULL.
const EMPTY: &str = "\"\"";

fn column(header: &[&str], name: &str) -> usize {
    header
        .iter()
        .position(|h| *h == name)
        .unwrap_or_else(|| panic!("column {name}"))
}

fn in_pool<T: Send>(threads: usize, f: impl FnOnce() -> T + Send) -> T {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("thread pool")
        .install(f)
}

#[test]
fn names_parse_and_print() {
    for d in Dataset::ALL {
        assert_eq!(d.to_string().parse::<Dataset>(), Ok(d));
        assert!(!describe(d).is_empty());
    }
    assert_eq!("TAXI".parse::<Dataset>(), Ok(Dataset::Taxi));
    let err = "trips".parse::<Dataset>().unwrap_err();
    assert_eq!(
        err.to_string(),
        "unknown data set 'trips' (expected one of taxi, taxi-f32, iot, numbers, kv, hits, shapes, groupby)"
    );
}

#[test]
fn same_seed_same_bytes_other_seed_other_bytes() {
    for d in Dataset::ALL {
        let a = generate_bytes(d, 3000, 42);
        assert_eq!(a, generate_bytes(d, 3000, 42), "{d}");
        if d != Dataset::Numbers {
            assert_ne!(a, generate_bytes(d, 3000, 43), "{d}");
        }
    }
}

#[test]
fn thread_count_does_not_change_output() {
    // More than two chunks, so batches and parallel formatting are exercised.
    let rows = 2 * CHUNK_ROWS + 123;
    for d in [
        Dataset::Taxi,
        Dataset::Iot,
        Dataset::Kv,
        Dataset::Hits,
        Dataset::Shapes,
        Dataset::Groupby,
    ] {
        let one = in_pool(1, || generate_bytes(d, rows, 9));
        let two = in_pool(2, || generate_bytes(d, rows, 9));
        let three = in_pool(3, || generate_bytes(d, rows, 9));
        assert!(one == two && two == three, "{d}");
        assert_eq!(one.iter().filter(|&&b| b == b'\n').count() as u64, rows + 1);
    }
}

#[test]
fn every_row_has_the_header_width() {
    let widths = [
        (Dataset::Taxi, 51),
        (Dataset::TaxiF32, 51),
        (Dataset::Iot, 16),
        (Dataset::Numbers, 4),
        (Dataset::Kv, 2),
        (Dataset::Hits, 25),
        (Dataset::Shapes, 13),
        (Dataset::Groupby, 9),
    ];
    for (d, width) in widths {
        let csv = text(d, 5000, 1);
        let (header, records) = parse(&csv);
        assert_eq!(header.len(), width, "{d}");
        assert_eq!(header.join(","), d.header());
        assert_eq!(records.len(), 5000, "{d}");
        for r in &records {
            assert_eq!(r.len(), width, "{d}: {r:?}");
        }
        if d == Dataset::Hits {
            // Only whole empty fields are quoted.
            for r in &records {
                assert!(r.iter().all(|f| !f.contains('"') || *f == EMPTY), "{r:?}");
            }
        } else {
            assert!(!csv.contains('"'), "{d}: no quoting");
        }
    }
}

#[test]
fn zero_rows_is_just_the_header() {
    for d in Dataset::ALL {
        assert_eq!(text(d, 0, 5), format!("{}\n", d.header()));
    }
}

#[test]
fn prefixes_of_a_generation_do_not_depend_on_chunking() {
    // Chunk k's rows are the same whatever follows them (for data sets whose
    // rows do not depend on the row count).
    let short = text(Dataset::Kv, 1000, 3);
    let long = text(Dataset::Kv, CHUNK_ROWS + 10, 3);
    assert!(long.starts_with(&short));
}

#[derive(Debug, PartialEq, Clone, Copy)]
enum Kind {
    Int,
    Float,
    Timestamp,
    Date,
    Str,
}

fn kind(v: &str) -> Kind {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let unsigned = v.strip_prefix('-').unwrap_or(v);
    if digits(unsigned) {
        // Leading zeros make an identifier such as a census tract `038302`.
        if unsigned.len() > 1 && unsigned.starts_with('0') {
            return Kind::Str;
        }
        return Kind::Int;
    }
    if let Some((i, f)) = unsigned.split_once('.')
        && digits(i)
        && digits(f)
    {
        return Kind::Float;
    }
    let b = v.as_bytes();
    if b.len() == 19
        && b[4] == b'-'
        && b[7] == b'-'
        && b[10] == b' '
        && b[13] == b':'
        && b[16] == b':'
    {
        return Kind::Timestamp;
    }
    if b.len() == 10 && b[4] == b'-' && b[7] == b'-' && digits(&v[..4]) {
        return Kind::Date;
    }
    Kind::Str
}

/// Every column's non-empty values share one kind (integers widen to float);
/// digit strings with leading zeros count as strings. Returns the kind per
/// column.
fn column_kinds(header: &[&str], records: &[Vec<&str>]) -> Vec<Option<Kind>> {
    (0..header.len())
        .map(|c| {
            let mut seen: Option<Kind> = None;
            for r in records {
                let v = r[c];
                if v.is_empty() {
                    continue;
                }
                let k = kind(v);
                seen = Some(match (seen, k) {
                    (None, k) => k,
                    (Some(a), b) if a == b => a,
                    (Some(Kind::Int), Kind::Float) | (Some(Kind::Float), Kind::Int) => Kind::Float,
                    (Some(a), b) => panic!("{}: mixes {a:?} and {b:?} ({v})", header[c]),
                });
            }
            seen
        })
        .collect()
}

#[test]
fn taxi_f32_is_taxi_with_float32_coordinates() {
    let (plain, single) = (
        text(Dataset::Taxi, 3000, 5),
        text(Dataset::TaxiF32, 3000, 5),
    );
    let ((h, a), (_, b)) = (parse(&plain), parse(&single));
    let coords = [
        "pickup_longitude",
        "pickup_latitude",
        "dropoff_longitude",
        "dropoff_latitude",
    ]
    .map(|n| column(&h, n));
    let points = ["pickup", "dropoff"].map(|n| column(&h, n));
    let mut narrowed = 0;
    for (ra, rb) in a.iter().zip(&b) {
        for c in 0..h.len() {
            if coords.contains(&c) {
                if ra[c].is_empty() {
                    assert!(rb[c].is_empty());
                    continue;
                }
                let (x, y): (f64, f64) = (ra[c].parse().unwrap(), rb[c].parse().unwrap());
                // The nearest f32, written as the f64 it is exactly.
                assert_eq!(
                    y.to_bits(),
                    (x as f32 as f64).to_bits(),
                    "{} {}",
                    ra[c],
                    rb[c]
                );
                narrowed += (ra[c] != rb[c]) as usize;
            } else if points.contains(&c) {
                if ra[c].is_empty() {
                    assert!(rb[c].is_empty());
                    continue;
                }
                // The point's x is the longitude column, bit for bit.
                let lon: f64 = rb[coords[if c == points[0] { 0 } else { 2 }]]
                    .parse()
                    .unwrap();
                let hex: String = lon
                    .to_le_bytes()
                    .iter()
                    .map(|b| format!("{b:02X}"))
                    .collect();
                assert_eq!(&rb[c][18..34], hex);
            } else {
                assert_eq!(ra[c], rb[c], "{}", h[c]);
            }
        }
    }
    assert!(narrowed > 1000, "{narrowed}");
}

#[test]
fn taxi_columns_have_one_type_and_sane_values() {
    let csv = text(Dataset::Taxi, 200_000, 11);
    let (h, records) = parse(&csv);
    let kinds = column_kinds(&h, &records);
    let expect = |name: &str, k: Kind| assert_eq!(kinds[column(&h, name)], Some(k), "{name}");
    expect("trip_id", Kind::Int);
    expect("vendor_id", Kind::Str);
    expect("pickup_datetime", Kind::Timestamp);
    expect("dropoff_datetime", Kind::Timestamp);
    expect("passenger_count", Kind::Int);
    expect("trip_distance", Kind::Float);
    expect("total_amount", Kind::Float);
    expect("payment_type", Kind::Int);
    expect("cab_type", Kind::Str);
    expect("pickup_ntaname", Kind::Str);
    expect("pickup_ct2010", Kind::Str);
    expect("pickup_puma", Kind::Int);
    expect("dropoff_latitude", Kind::Float);

    let (id, pu, dr, pc) = (
        column(&h, "trip_id"),
        column(&h, "pickup_datetime"),
        column(&h, "dropoff_datetime"),
        column(&h, "passenger_count"),
    );
    let mut ids = HashSet::new();
    let mut prev = "";
    let mut passengers = [0usize; 10];
    for (n, r) in records.iter().enumerate() {
        assert_eq!(r[id], (n + 1).to_string());
        assert!(ids.insert(r[id]));
        assert!(r[pu] >= prev, "pickup ascending at row {n}");
        prev = r[pu];
        assert!(r[dr] > r[pu], "dropoff after pickup at row {n}");
        let p: usize = r[pc].parse().unwrap();
        assert!(p <= 9);
        passengers[p] += 1;
    }
    assert!(records[0][pu].starts_with("2009-01-01"));
    assert!(records.last().unwrap()[pu].starts_with("2015-12-31"));
    let share1 = passengers[1] as f64 / records.len() as f64;
    assert!(
        (0.65..0.75).contains(&share1),
        "passenger_count 1 share {share1}"
    );
    assert!(passengers[2] > passengers[5] && passengers[5] > passengers[3]);

    // Cab types in runs, green only from August 2013.
    let cab = column(&h, "cab_type");
    let mut runs = 1;
    let mut green = 0;
    for w in records.windows(2) {
        if w[0][cab] != w[1][cab] {
            runs += 1;
        }
    }
    for r in &records {
        if r[cab] == "green" {
            green += 1;
            assert!(r[pu] >= "2013-08-01");
        } else {
            assert_eq!(r[cab], "yellow");
        }
    }
    assert!(
        green > 0 && runs < records.len() / 500,
        "runs {runs}, green {green}"
    );

    // Money: total is the sum of its parts, two decimals.
    let cents = |s: &str| -> i64 {
        if s.is_empty() {
            return 0;
        }
        let (i, f) = s.split_once('.').expect("two decimals");
        assert_eq!(f.len(), 2, "{s}");
        i.parse::<i64>().unwrap() * 100 + f.parse::<i64>().unwrap()
    };
    let parts = [
        "fare_amount",
        "extra",
        "mta_tax",
        "tip_amount",
        "tolls_amount",
        "ehail_fee",
        "improvement_surcharge",
    ]
    .map(|c| column(&h, c));
    let total = column(&h, "total_amount");
    for r in &records {
        let sum: i64 = parts.iter().map(|&c| cents(r[c])).sum();
        assert_eq!(sum, cents(r[total]));
    }

    // Neighbourhoods: many, skewed, with consistent codes.
    let (name, code, boro) = (
        column(&h, "pickup_ntaname"),
        column(&h, "pickup_ntacode"),
        column(&h, "pickup_borocode"),
    );
    let mut by_name = std::collections::HashMap::<&str, (usize, &str, &str)>::new();
    let mut nulls = 0;
    for r in &records {
        if r[name].is_empty() {
            nulls += 1;
            assert!(r[code].is_empty());
            continue;
        }
        let e = by_name.entry(r[name]).or_insert((0, r[code], r[boro]));
        e.0 += 1;
        assert_eq!((e.1, e.2), (r[code], r[boro]));
    }
    assert!(
        (150..=195).contains(&by_name.len()),
        "{} names",
        by_name.len()
    );
    let top = by_name.values().map(|e| e.0).max().unwrap();
    assert!(top > records.len() / 20, "skewed names");
    assert!(nulls > 0 && nulls < records.len() / 10);
}

#[test]
fn numbers_rows_repeat_the_row_number() {
    let csv = text(Dataset::Numbers, CHUNK_ROWS + 5, 0);
    let (_, records) = parse(&csv);
    for (n, r) in records.iter().enumerate() {
        let want = (n + 1).to_string();
        assert!(r.iter().all(|v| *v == want), "row {n}: {r:?}");
    }
}

#[test]
fn kv_ids_are_unique_non_negative_i64() {
    let csv = text(Dataset::Kv, 300_000, 8);
    let (_, records) = parse(&csv);
    let mut ids = HashSet::new();
    for r in &records {
        let id: i64 = r[0].parse().expect("id fits i64");
        assert!(id >= 0);
        assert!(ids.insert(id), "duplicate id {id}");
        let v: f64 = r[1].parse().expect("float value");
        assert!((1.0..1000.0).contains(&v) && !r[1].contains('e'));
    }
    assert_eq!(ids.len(), 300_000);
}

#[test]
fn iot_has_one_reading_per_truck_per_minute() {
    let rows = 7700; // 1000 trucks: 7 full rounds and a partial one
    let csv = text(Dataset::Iot, rows, 4);
    let (h, records) = parse(&csv);
    let kinds = column_kinds(&h, &records);
    assert_eq!(kinds[column(&h, "time")], Some(Kind::Timestamp));
    assert_eq!(kinds[column(&h, "latitude")], Some(Kind::Float));
    assert_eq!(kinds[column(&h, "load_capacity")], Some(Kind::Int));
    let (t, name) = (column(&h, "time"), column(&h, "name"));
    assert_eq!(records[0][t], "2016-01-01 00:00:00");
    for (round, readings) in records.chunks(1000).enumerate() {
        let time = readings[0][t];
        let minute = format!("2016-01-01 {:02}:{:02}:00", round / 60, round % 60);
        assert_eq!(time, minute);
        let names: HashSet<&str> = readings.iter().map(|r| r[name]).collect();
        assert_eq!(names.len(), readings.len());
        assert!(readings.iter().all(|r| r[t] == time));
        if readings.len() == 1000 {
            assert!((0..1000).all(|k| names.contains(format!("truck_{k}").as_str())));
        }
    }
    // Truck tags are fixed per truck.
    let fleet = column(&h, "fleet");
    for k in 0..1000 {
        let tags: HashSet<&str> = records
            .iter()
            .skip(k)
            .step_by(1000)
            .map(|r| r[fleet])
            .collect();
        assert_eq!(tags.len(), 1);
    }
    // About 1 % NULL measurements; ranges as documented.
    let (lat, lon, vel) = (
        column(&h, "latitude"),
        column(&h, "longitude"),
        column(&h, "velocity"),
    );
    let mut nulls = 0;
    for r in &records {
        for (c, hi) in [(lat, 90.0), (lon, 180.0), (vel, 100.0)] {
            if r[c].is_empty() {
                nulls += 1;
            } else {
                let v: f64 = r[c].parse().unwrap();
                assert!((0.0..=hi).contains(&v));
            }
        }
    }
    let share = nulls as f64 / (3 * records.len()) as f64;
    assert!((0.003..0.03).contains(&share), "null share {share}");
}

#[test]
fn iot_truck_count_follows_rows() {
    let csv = text(Dataset::Iot, 30, 1);
    let (h, records) = parse(&csv);
    let t = column(&h, "time");
    assert!(records.iter().all(|r| r[t] == "2016-01-01 00:00:00"));
    assert_eq!(records[29][column(&h, "name")], "truck_29");
}

#[test]
fn gzip_output_decodes_to_the_plain_csv() {
    let rows = CHUNK_ROWS + 77;
    let plain = generate_bytes(Dataset::Iot, rows, 6);
    let mut gz = Vec::new();
    generate_gzip(Dataset::Iot, rows, 6, &mut gz).unwrap();
    // A single-member decoder must see everything.
    let mut back = Vec::new();
    flate2::read::GzDecoder::new(&gz[..])
        .read_to_end(&mut back)
        .unwrap();
    assert!(back == plain);
    assert!(gz.len() < plain.len() / 2);
    let mut again = Vec::new();
    generate_gzip(Dataset::Iot, rows, 6, &mut again).unwrap();
    assert!(again == gz);
}

#[test]
fn files_are_written_whole_and_gzip_by_name() {
    let dir = std::env::temp_dir().join(format!("katydid-datasets-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let plain = dir.join("n.csv");
    let gz = dir.join("n.csv.GZ");
    generate_file(Dataset::Numbers, 1000, 1, &plain).unwrap();
    generate_file(Dataset::Numbers, 1000, 1, &gz).unwrap();
    let want = generate_bytes(Dataset::Numbers, 1000, 1);
    assert!(std::fs::read(&plain).unwrap() == want);
    let mut back = Vec::new();
    flate2::read::GzDecoder::new(std::fs::File::open(&gz).unwrap())
        .read_to_end(&mut back)
        .unwrap();
    assert!(back == want);
    // Only the two finished files remain: no temporary left behind.
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 2);
    // A missing directory is an error and leaves nothing behind.
    let err = generate_file(Dataset::Numbers, 10, 1, &dir.join("missing/x.csv")).unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::NotFound);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn write_errors_are_returned() {
    struct Full;
    impl std::io::Write for Full {
        fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
            Err(std::io::Error::other("disk full"))
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let err = generate(Dataset::Taxi, 10, 1, &mut Full).unwrap_err();
    assert_eq!(err.to_string(), "disk full");
}

/// Counts of each distinct value.
fn counts<'a>(values: impl Iterator<Item = &'a str>) -> std::collections::HashMap<&'a str, usize> {
    let mut m = std::collections::HashMap::new();
    for v in values {
        *m.entry(v).or_insert(0) += 1;
    }
    m
}

#[test]
fn hits_has_the_shapes_of_web_analytics() {
    let rows = 300_000;
    let csv = text(Dataset::Hits, rows, 5);
    let (h, records) = parse(&csv);
    let n = records.len() as f64;
    let col = |name: &str| column(&h, name);
    let share = |name: &str, pred: &dyn Fn(&str) -> bool| {
        let c = col(name);
        records.iter().filter(|r| pred(r[c])).count() as f64 / n
    };

    // One type per column, and no NULL (no unquoted empty field) anywhere.
    assert!(records.iter().all(|r| r.iter().all(|f| !f.is_empty())));
    let kinds = column_kinds(&h, &records);
    for name in [
        "WatchID",
        "CounterID",
        "ClientIP",
        "UserID",
        "URLHash",
        "RefererHash",
    ] {
        assert_eq!(kinds[col(name)], Some(Kind::Int), "{name}");
    }
    assert_eq!(kinds[col("EventTime")], Some(Kind::Timestamp));
    assert_eq!(kinds[col("EventDate")], Some(Kind::Date));
    for name in [
        "URL",
        "Title",
        "Referer",
        "SearchPhrase",
        "MobilePhoneModel",
    ] {
        assert_eq!(kinds[col(name)], Some(Kind::Str), "{name}");
    }

    // EventTime ascends over July 2013; EventDate is its date.
    let (t, d) = (col("EventTime"), col("EventDate"));
    let mut prev = "";
    for r in &records {
        assert!(r[t] >= prev && r[t].starts_with("2013-07-"));
        assert_eq!(&r[t][..10], r[d]);
        prev = r[t];
    }
    assert!(records[0][t].starts_with("2013-07-01 00:0"));
    assert!(records.last().unwrap()[t].starts_with("2013-07-31 23:"));

    // CounterID skewed: 62 heaviest, about 15 %.
    let counters = counts(records.iter().map(|r| r[col("CounterID")]));
    let c62 = counters["62"] as f64 / n;
    assert!((0.14..0.16).contains(&c62), "counter 62 share {c62}");
    assert!(counters.values().all(|&c| c <= counters["62"]));
    assert!(counters.len() > 1000, "{} counters", counters.len());

    // UserID heavy-tailed, about one distinct per 10 rows, and the user of
    // ClickBench query 20 occurs.
    let users = counts(records.iter().map(|r| r[col("UserID")]));
    let per_row = users.len() as f64 / n;
    assert!(
        (0.08..0.12).contains(&per_row),
        "distinct users per row {per_row}"
    );
    // Heavy tail: the most active user has over 100 times the mean.
    let top = *users.values().max().unwrap();
    assert!(
        top as f64 > 100.0 * n / users.len() as f64,
        "top user {top}"
    );
    assert!(users.contains_key("435090932899640449"));

    // SearchPhrase about 85 % empty strings.
    let empty = share("SearchPhrase", &|v| v == EMPTY);
    assert!((0.84..0.86).contains(&empty), "empty phrases {empty}");

    // URL, Referer, Title: 20-200 characters when not empty; some Google.
    for name in ["URL", "Referer", "Title"] {
        let c = col(name);
        for r in &records {
            assert!(
                r[c] == EMPTY || (20..=200).contains(&r[c].len()),
                "{name}: {}",
                r[c]
            );
        }
    }
    let google = share("URL", &|v| v.contains("google"));
    assert!((0.01..0.1).contains(&google), "google URLs {google}");
    assert!(share("URL", &|v| v.contains(".google.")) > 0.0);
    let (title, url, phrase) = (col("Title"), col("URL"), col("SearchPhrase"));
    let q23 = records
        .iter()
        .filter(|r| {
            r[title].contains("Google") && !r[url].contains(".google.") && r[phrase] != EMPTY
        })
        .count();
    assert!(q23 > 0, "rows for ClickBench query 23");

    // The ID and flag columns are mostly 0.
    for name in [
        "AdvEngineID",
        "SearchEngineID",
        "IsRefresh",
        "IsLink",
        "IsDownload",
        "DontCountHits",
        "MobilePhone",
    ] {
        let zero = share(name, &|v| v == "0");
        assert!(zero > 0.8 && zero < 1.0, "{name}: {zero} zeros");
    }
    assert!(share("TraficSourceID", &|v| v == "0") > 0.4);
    // Mobile users, and only they, have a phone model.
    let (phone, model) = (col("MobilePhone"), col("MobilePhoneModel"));
    assert!(
        records
            .iter()
            .all(|r| (r[phone] == "0") == (r[model] == EMPTY))
    );

    // Queries 41 and 42 select rows of counter 62.
    let (counter, source, rh, uh) = (
        col("CounterID"),
        col("TraficSourceID"),
        col("RefererHash"),
        col("URLHash"),
    );
    assert!(
        records
            .iter()
            .any(|r| r[counter] == "62" && r[uh] == "2868770270353813622")
    );
    assert!(records.iter().any(|r| r[counter] == "62"
        && r[rh] == "3594120000172545465"
        && (r[source] == "-1" || r[source] == "6")));

    // URLHash is a function of URL.
    let mut hash_of = std::collections::HashMap::new();
    for r in &records {
        if r[url] != EMPTY {
            assert_eq!(*hash_of.entry(r[url]).or_insert(r[uh]), r[uh], "{}", r[url]);
        }
    }

    // WatchID unique but for about 0.1 % repeats of the previous row.
    let w = col("WatchID");
    let watches = counts(records.iter().map(|r| r[w]));
    let repeats = records.len() - watches.len();
    assert!((100..600).contains(&repeats), "{repeats} repeated WatchIDs");
    for pair in records.windows(2) {
        if watches[pair[1][w]] > 1 && pair[0][w] == pair[1][w] {
            assert_eq!(pair[0][col("ClientIP")], pair[1][col("ClientIP")]);
        }
    }
}

#[test]
fn shapes_has_the_documented_columns() {
    let rows = 200_000;
    let csv = text(Dataset::Shapes, rows, 3);
    let (h, records) = parse(&csv);
    let col = |name: &str| column(&h, name);
    let kinds = column_kinds(&h, &records);
    for name in ["id", "u", "k4", "g1000", "a", "b", "c", "x"] {
        assert_eq!(kinds[col(name)], Some(Kind::Int), "{name}");
    }
    assert_eq!(kinds[col("y")], Some(Kind::Float));
    for name in ["s4", "s10k", "s100k", "s1m"] {
        assert_eq!(kinds[col(name)], Some(Kind::Str), "{name}");
    }
    let n = records.len() as f64;
    let (id, u) = (col("id"), col("u"));
    let mut seen = HashSet::new();
    for (i, r) in records.iter().enumerate() {
        assert_eq!(r[id], (i + 1).to_string());
        assert!(r[u].parse::<i64>().unwrap() >= 0);
        assert!(seen.insert(r[u]), "u repeats {}", r[u]);
    }

    // k4 and s4: four values at 40/30/20/10 %.
    for (name, values) in [
        ("k4", ["0", "1", "2", "3"]),
        ("s4", ["north", "east", "south", "west"]),
    ] {
        let c = counts(records.iter().map(|r| r[col(name)]));
        assert_eq!(c.len(), 4, "{name}");
        for (v, want) in values.iter().zip([0.4, 0.3, 0.2, 0.1]) {
            let got = c[v] as f64 / n;
            assert!((got - want).abs() < 0.01, "{name} = {v}: {got}");
        }
    }

    // String keys: `{name}_{j}` with j below K, about K(1 - e^(-n/K)) distinct.
    let names = [
        "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india",
        "juliett", "kilo", "lima", "mike", "november", "oscar", "papa",
    ];
    for (name, k) in [
        ("s10k", 10_000.0),
        ("s100k", 100_000.0),
        ("s1m", 1_000_000.0),
    ] {
        let c = counts(records.iter().map(|r| r[col(name)]));
        let want = k * (1.0 - (-n / k).exp());
        let got = c.len() as f64;
        assert!(
            (got / want - 1.0).abs() < 0.02,
            "{name}: {got} distinct, ~{want} expected"
        );
        for v in c.keys() {
            let (prefix, j) = v.split_once('_').expect("name_j");
            let j: u64 = j.parse().unwrap();
            assert!((j as f64) < k && names[(j % 16) as usize] == prefix, "{v}");
        }
    }

    // Sparse keys: 500 values each, at most 3,000 pairs and triples.
    let (a, b, cc) = (col("a"), col("b"), col("c"));
    let pairs: HashSet<(&str, &str)> = records.iter().map(|r| (r[a], r[b])).collect();
    let triples: HashSet<(&str, &str, &str)> =
        records.iter().map(|r| (r[a], r[b], r[cc])).collect();
    assert!(
        pairs.len() <= 3000 && pairs.len() > 2500,
        "{} pairs",
        pairs.len()
    );
    assert!(triples.len() <= 3000 && triples.len() >= pairs.len());
    for r in &records {
        for c in [a, b, cc] {
            assert!(r[c].parse::<u32>().unwrap() < 500);
        }
        assert!(r[col("x")].parse::<u32>().unwrap() < 10_000);
        assert!(r[col("g1000")].parse::<u32>().unwrap() < 1000);
        let (i, f) = r[col("y")].split_once('.').expect("two decimals");
        assert!(f.len() == 2 && i.parse::<u32>().unwrap() < 1000);
    }
}

/// The groupby table has the columns of db-benchmark's groupby-datagen.R at
/// K = 100: every id drawn uniformly from its range, v3 on [0, 100] with at
/// most 6 decimals.
#[test]
fn groupby_has_the_shapes_of_groupby_datagen() {
    let rows = 200_000;
    let csv = text(Dataset::Groupby, rows, 5);
    let (h, records) = parse(&csv);
    assert_eq!(h.join(","), "id1,id2,id3,id4,id5,id6,v1,v2,v3");
    let kinds = column_kinds(&h, &records);
    assert_eq!(
        kinds,
        [
            [Some(Kind::Str); 3].as_slice(),
            &[Some(Kind::Int); 5],
            &[Some(Kind::Float)]
        ]
        .concat()
    );
    // (column, zero-padded digits of a string id or 0, the largest value).
    let groups = rows / 100;
    let columns = [
        ("id1", 3, 100),
        ("id2", 3, 100),
        ("id3", 10, groups),
        ("id4", 0, 100),
        ("id5", 0, 100),
        ("id6", 0, groups),
        ("v1", 0, 5),
        ("v2", 0, 15),
    ];
    let n = records.len() as f64;
    for (i, (name, width, most)) in columns.into_iter().enumerate() {
        assert_eq!(h[i], name);
        let c = counts(records.iter().map(|r| r[i]));
        for v in c.keys() {
            let digits = if width > 0 {
                let digits = v.strip_prefix("id").expect("id prefix");
                assert_eq!(digits.len(), width, "{name} = {v}");
                digits
            } else {
                v
            };
            let value: u64 = digits.parse().unwrap();
            assert!((1..=most).contains(&value), "{name} = {v}");
        }
        // Uniform with replacement: about most·(1 − e^(−n/most)) distinct.
        let want = most as f64 * (1.0 - (-n / most as f64).exp());
        let got = c.len() as f64;
        assert!(
            (got / want - 1.0).abs() < 0.01,
            "{name}: {got} distinct, ~{want} expected"
        );
        if most <= 100 {
            // Every value about equally often.
            let least = *c.values().min().unwrap() as f64;
            assert!(least > 0.8 * n / most as f64, "{name}: {least}");
        }
    }
    let mut sum = 0.0;
    for r in &records {
        let v3 = r[8];
        if let Some((_, fraction)) = v3.split_once('.') {
            // Exact decimal text, no trailing zeros.
            assert!(fraction.len() <= 6 && !fraction.ends_with('0'), "{v3}");
        }
        let v: f64 = v3.parse().unwrap();
        assert!((0.0..=100.0).contains(&v), "{v3}");
        sum += v;
    }
    let mean = sum / n;
    assert!((mean - 50.0).abs() < 0.5, "v3 mean {mean}");
    // N/K is at least one group.
    let tiny = text(Dataset::Groupby, 50, 5);
    let (_, records) = parse(&tiny);
    assert!(
        records
            .iter()
            .all(|r| r[2] == "id0000000001" && r[5] == "1")
    );
}

/// The TLC-like months: the schema drifts as the module docs' table says,
/// each file holds the rows asked for, and the same seed gives the same
/// bytes.
#[test]
fn tlc_months_drift_as_documented() {
    use katydid_datasets::tlc;
    use parquet::file::reader::{FileReader, SerializedFileReader};
    let dir = std::env::temp_dir().join(format!("katydid-tlc-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let written = tlc::write_months(&dir, &tlc::DEFAULT_MONTHS, 1000, 7).unwrap();
    assert_eq!(written.len(), tlc::DEFAULT_MONTHS.len() + 1);
    let schema = |path: &std::path::Path| -> Vec<(String, String)> {
        let file = std::fs::File::open(path).unwrap();
        let reader = SerializedFileReader::new(file).unwrap();
        assert_eq!(reader.metadata().file_metadata().num_rows(), 1000);
        reader
            .metadata()
            .file_metadata()
            .schema_descr()
            .columns()
            .iter()
            .map(|c| (c.name().to_string(), format!("{:?}", c.physical_type())))
            .collect()
    };
    let find = |cols: &[(String, String)], name: &str| {
        cols.iter().find(|(n, _)| n == name).map(|(_, t)| t.clone())
    };
    let months: Vec<Vec<(String, String)>> = written[..4].iter().map(|p| schema(p)).collect();
    assert_eq!(
        find(&months[0], "passenger_count").as_deref(),
        Some("DOUBLE")
    );
    assert_eq!(find(&months[0], "VendorID").as_deref(), Some("INT64"));
    assert_eq!(
        find(&months[1], "passenger_count").as_deref(),
        Some("INT64")
    );
    assert_eq!(find(&months[1], "VendorID").as_deref(), Some("INT32"));
    assert!(find(&months[1], "airport_fee").is_some());
    assert!(find(&months[2], "Airport_fee").is_some());
    assert!(find(&months[2], "cbd_congestion_fee").is_none());
    assert!(find(&months[3], "cbd_congestion_fee").is_some());
    assert_eq!(months[0].len(), 19);
    assert_eq!(months[3].len(), 20);
    let zones = std::fs::read_to_string(&written[4]).unwrap();
    assert_eq!(zones.lines().count(), 266);
    assert!(zones.starts_with("LocationID,Borough,Zone,service_zone\n"));
    // Deterministic.
    let again = dir.join("again.parquet");
    tlc::write_month(&again, 2024, 1, 1000, 7).unwrap();
    assert_eq!(
        std::fs::read(&again).unwrap(),
        std::fs::read(&written[2]).unwrap()
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
