//! Criterion benches of katydid's hot kernels on one partition (65,536 rows,
//! the default partition size), through the public API only:
//!
//! - `filter/packed_int_*`: `passenger_count = 5` on u8 offset codes and a
//!   range on u32 codes (`kernel::select_code_range`);
//! - `filter/dict_code_*`: string equality and IN on dictionary codes
//!   (`Dictionary::code_of`, `kernel::select_code_range` / `select_code_set`);
//! - `group_count/fixed_array_query` and `group_count/hash_map_query`: a
//!   one-partition table through `Database::query`, whose EXPLAIN is checked
//!   to name the fixed-array and the hash-map path;
//! - `top_n/fare_desc_100`: the 100 largest fares of 65,536 rows through
//!   `Database::query` (the top-n operator);
//! - `ingest/*`: `ingest::load_csv_bytes` parsing and encoding one partition
//!   of synthetic taxi and iot CSV.
//!
//! Each bench checks its answer once against a naive computation before it
//! measures (a wrong kernel panics the bench); nothing is asserted about time.
//! Run: `cargo bench --bench kernels` (or `-- filter` for a subset).

use std::hint::black_box;
use std::path::Path;

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use katydid::kernel::{select_code_range, select_code_set};
use katydid::store::{Codes, Column, ColumnData, Table};
use katydid::{DataType, Database, DatabaseOptions, LoadOptions, Value, ingest};
use katydid_datasets::{Dataset, generate_bytes};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Rows in the benched partition.
const ROWS: usize = 1 << 16;

fn rng() -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(42)
}

/// Passenger counts 0–9 skewed to 1, as in the taxi data.
fn passenger_counts() -> Vec<i64> {
    let mut r = rng();
    (0..ROWS)
        .map(|_| match r.gen_range(0..100) {
            0..=69 => 1,
            70..=84 => 2,
            85..=89 => 5,
            x => (x % 10) as i64,
        })
        .collect()
}

/// The offset codes and base of an integer column (panics on another codec:
/// the bench is about packed codes).
fn offset_codes(col: &Column) -> (i64, u64, &Codes) {
    match &col.data {
        ColumnData::Offset { base, scale, codes } => (*base, *scale, codes),
        other => panic!("expected offset codes, got {other:?}"),
    }
}

fn bench_packed_int_filter(c: &mut Criterion) {
    let mut g = c.benchmark_group("filter");
    g.throughput(Throughput::Elements(ROWS as u64));

    let values = passenger_counts();
    let col = Column::encode_ints(DataType::Int, &values, None);
    let (base, scale, codes) = offset_codes(&col);
    let Codes::U8(codes8) = codes else {
        panic!(
            "passenger counts should pack into u8, got {}",
            codes.width_name()
        )
    };
    let code = ((5 - base) as u64) / scale;
    let want = values.iter().filter(|&&v| v == 5).count();
    assert_eq!(
        select_code_range(codes8, None, code, code, false).len(),
        want
    );
    g.bench_function("packed_int_u8_eq", |b| {
        b.iter(|| select_code_range(black_box(codes8), None, code, code, false).len())
    });

    // A wide column: values over 0..3,000,000 pack into u32 codes.
    let mut r = rng();
    let wide: Vec<i64> = (0..ROWS).map(|_| r.gen_range(0..3_000_000)).collect();
    let col = Column::encode_ints(DataType::Int, &wide, None);
    let (base, scale, codes) = offset_codes(&col);
    let Codes::U32(codes32) = codes else {
        panic!(
            "wide values should pack into u32, got {}",
            codes.width_name()
        )
    };
    assert_eq!(scale, 1, "random values have no common stride");
    let (lo, hi) = ((1_000_000 - base) as u64, (1_500_000 - base) as u64);
    let want = wide
        .iter()
        .filter(|&&v| (1_000_000..=1_500_000).contains(&v))
        .count();
    assert_eq!(select_code_range(codes32, None, lo, hi, false).len(), want);
    g.bench_function("packed_int_u32_between", |b| {
        b.iter(|| select_code_range(black_box(codes32), None, lo, hi, false).len())
    });
    g.finish();
}

fn bench_dict_filter(c: &mut Criterion) {
    let mut g = c.benchmark_group("filter");
    g.throughput(Throughput::Elements(ROWS as u64));

    // About 195 neighbourhood names, skewed (a few very common).
    let names: Vec<String> = (0..195).map(|i| format!("Neighbourhood {i:03}")).collect();
    let mut r = rng();
    let values: Vec<&str> = (0..ROWS)
        .map(|_| {
            let x: f64 = r.r#gen();
            names[((x * x * x) * names.len() as f64) as usize].as_str()
        })
        .collect();
    let col = Column::encode_strings(&values, None);
    let ColumnData::Dict { dict, codes } = &col.data else {
        panic!(
            "names should be dictionary-encoded, got {}",
            col.encoding_name()
        )
    };
    let Codes::U8(codes8) = codes else {
        panic!("195 names fit u8 codes, got {}", codes.width_name())
    };
    let target = "Neighbourhood 007";
    let want = values.iter().filter(|&&v| v == target).count();
    let code = dict.code_of(target).expect("name is in the dictionary");
    assert_eq!(
        select_code_range(codes8, None, code, code, false).len(),
        want
    );
    g.bench_function("dict_code_eq", |b| {
        b.iter(|| {
            // The per-partition work: one dictionary lookup, then the scan.
            let code = dict.code_of(black_box(target)).unwrap();
            select_code_range(black_box(codes8), None, code, code, false).len()
        })
    });

    let list = [
        "Neighbourhood 003",
        "Neighbourhood 050",
        "Neighbourhood 120",
    ];
    let want = values.iter().filter(|v| list.contains(v)).count();
    let member = |dict: &katydid::store::Dictionary| {
        let mut m = vec![false; dict.len()];
        for s in list {
            if let Some(c) = dict.code_of(s) {
                m[c as usize] = true;
            }
        }
        m
    };
    assert_eq!(select_code_set(codes8, None, &member(dict)).len(), want);
    g.bench_function("dict_code_in3", |b| {
        b.iter(|| select_code_set(black_box(codes8), None, &member(dict)).len())
    });
    g.finish();
}

/// A one-partition taxi table loaded through the public API.
fn taxi_partition() -> (Database, Vec<u8>) {
    let csv = generate_bytes(Dataset::Taxi, ROWS as u64, 42);
    let mut db = Database::new(DatabaseOptions {
        threads: 1,
        ..Default::default()
    })
    .expect("thread pool");
    db.load_csv_bytes(
        csv.clone(),
        Path::new("taxi.csv"),
        "trips",
        &LoadOptions::default(),
    )
    .expect("synthetic taxi CSV loads");
    assert_eq!(db.table("trips").unwrap().partitions.len(), 1);
    (db, csv)
}

fn explain(db: &Database, sql: &str) -> String {
    let r = db.query(&format!("EXPLAIN {sql}")).expect("explain");
    r.rows
        .iter()
        .map(|row| match &row[0] {
            Value::Str(s) => s.to_string(),
            other => format!("{other:?}"),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn int(v: &Value) -> i64 {
    match v {
        Value::Int(i) => *i,
        other => panic!("expected an integer, got {other:?}"),
    }
}

fn bench_group_count(c: &mut Criterion) {
    let mut g = c.benchmark_group("group_count");
    g.throughput(Throughput::Elements(ROWS as u64));

    let (db, _) = taxi_partition();
    let small = "SELECT passenger_count, count(*) FROM trips GROUP BY passenger_count";
    let plan = explain(&db, small);
    assert!(plan.contains("fixed-size array"), "{plan}");
    let rows = db.query(small).unwrap().rows;
    assert_eq!(rows.iter().map(|r| int(&r[1])).sum::<i64>(), ROWS as i64);
    g.bench_function("fixed_array_query", |b| {
        b.iter(|| db.query(black_box(small)).unwrap().rows.len())
    });

    let large = "SELECT trip_id / 5, count(*) FROM trips GROUP BY 1";
    let plan = explain(&db, large);
    assert!(plan.contains("hash"), "{plan}");
    let rows = db.query(large).unwrap().rows;
    assert_eq!(rows.len(), ROWS / 5 + 1, "trip_id runs 1..=65536");
    assert_eq!(rows.iter().map(|r| int(&r[1])).sum::<i64>(), ROWS as i64);
    g.bench_function("hash_map_query", |b| {
        b.iter(|| db.query(black_box(large)).unwrap().rows.len())
    });
    g.finish();
}

fn bench_top_n(c: &mut Criterion) {
    let mut g = c.benchmark_group("top_n");
    g.throughput(Throughput::Elements(ROWS as u64));
    let (db, _) = taxi_partition();
    let fares = |sql: &str| -> Vec<f64> {
        db.query(sql)
            .unwrap()
            .rows
            .iter()
            .map(|r| match r[0] {
                Value::Float(f) => f,
                Value::Null => f64::NAN,
                ref other => panic!("expected a float, got {other:?}"),
            })
            .collect()
    };
    let top = "SELECT fare_amount FROM trips ORDER BY fare_amount DESC NULLS LAST LIMIT 100";
    let mut all = fares("SELECT fare_amount FROM trips WHERE fare_amount IS NOT NULL");
    all.sort_by(|a, b| b.total_cmp(a));
    all.truncate(100);
    assert_eq!(fares(top), all, "the top-n operator against a full sort");
    g.bench_function("fare_desc_100", |b| {
        b.iter(|| db.query(black_box(top)).unwrap().rows.len())
    });
    g.finish();
}

fn bench_ingest(c: &mut Criterion) {
    let mut g = c.benchmark_group("ingest");
    g.sample_size(20);
    for dataset in [Dataset::Taxi, Dataset::Iot] {
        let csv = generate_bytes(dataset, ROWS as u64, 42);
        g.throughput(Throughput::Bytes(csv.len() as u64));
        let load = |bytes: Vec<u8>| -> Table {
            ingest::load_csv_bytes(bytes, Path::new("bench.csv"), "t", &LoadOptions::default())
                .expect("synthetic CSV loads")
        };
        let table = load(csv.clone());
        assert_eq!(table.rows(), ROWS);
        assert_eq!(table.partitions.len(), 1);
        let columns = dataset.header().split(',').count();
        assert_eq!(table.fields.len(), columns);
        g.bench_function(format!("csv_parse_encode_{}", dataset.name()), |b| {
            b.iter_batched(|| csv.clone(), load, BatchSize::LargeInput)
        });
    }
    g.finish();
}

criterion_group!(
    kernels,
    bench_packed_int_filter,
    bench_dict_filter,
    bench_group_count,
    bench_top_n,
    bench_ingest
);
criterion_main!(kernels);
