//! TLC-like monthly yellow taxi trip files, as the NYC Taxi & Limousine
//! Commission publishes them: one Parquet file per month,
//! `yellow_tripdata_YYYY-MM.parquet`, with the published columns and the
//! way their schema drifts from year to year, plus a
//! `taxi_zone_lookup.csv`-like table of the 265 zones.
//!
//! # Schema and its drift
//! Every month has `VendorID`, `tpep_pickup_datetime`,
//! `tpep_dropoff_datetime`, `passenger_count`, `trip_distance`,
//! `RatecodeID`, `store_and_fwd_flag`, `PULocationID`, `DOLocationID`,
//! `payment_type`, `fare_amount`, `extra`, `mta_tax`, `tip_amount`,
//! `tolls_amount`, `improvement_surcharge`, `total_amount`,
//! `congestion_surcharge` and an airport fee; what changes:
//!
//! | months      | VendorID, PU/DOLocationID | passenger_count, RatecodeID | timestamps | airport fee   | more                 |
//! |-------------|---------------------------|-----------------------------|------------|---------------|----------------------|
//! | up to 2022  | int64                     | double                      | ns         | `airport_fee` |                      |
//! | 2023        | int32                     | int64                       | µs         | `airport_fee` |                      |
//! | 2024        | int32                     | int64                       | µs         | `Airport_fee` |                      |
//! | 2025 on     | int32                     | int64                       | µs         | `Airport_fee` | `cbd_congestion_fee` |
//!
//! Amounts are whole cents, `total_amount` their sum; about 2% of trips
//! have NULL `passenger_count`, `RatecodeID`, `store_and_fwd_flag`,
//! `congestion_surcharge` and airport fee (as the real files' trips
//! without a meter record). Pickups are spread over the month in order,
//! zones skewed to Manhattan and the airports. Files are snappy-compressed
//! with row groups of 1,048,576 rows, as pyarrow writes them.
//!
//! # Determinism
//! A month's rows are a pure function of `(year, month, rows, seed)`.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::builder::{
    Float64Builder, Int32Builder, Int64Builder, StringBuilder, TimestampMicrosecondBuilder,
    TimestampNanosecondBuilder,
};
use arrow_array::{ArrayRef, RecordBatch};
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Rows generated (and written) per batch.
const BATCH_ROWS: usize = 1 << 16;

/// The months `katydid generate tlc` writes by default: one of each schema.
pub const DEFAULT_MONTHS: [(i32, u32); 4] = [(2022, 12), (2023, 6), (2024, 1), (2025, 2)];

/// The file name of a month: `yellow_tripdata_2024-01.parquet`.
pub fn file_name(year: i32, month: u32) -> String {
    format!("yellow_tripdata_{year}-{month:02}.parquet")
}

/// Days since 1970-01-01 of a date (proleptic Gregorian).
fn days_from_civil(year: i32, month: u32, day: u32) -> i64 {
    let y = i64::from(year) - i64::from(month <= 2);
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(month);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Zones whose trips are most common: Manhattan's busiest and the airports.
const BUSY_ZONES: [i64; 12] = [237, 236, 161, 132, 186, 162, 230, 142, 170, 138, 239, 163];

/// A zone id from 1 to 265, skewed as the real pickups are.
fn zone(rng: &mut ChaCha8Rng) -> i64 {
    if rng.gen_bool(0.7) {
        BUSY_ZONES[rng.gen_range(0..BUSY_ZONES.len())]
    } else {
        rng.gen_range(1..=265)
    }
}

/// Writes `rows` trips of one month to `path` (see the module docs).
///
/// # Errors
/// The file cannot be written.
pub fn write_month(path: &Path, year: i32, month: u32, rows: u64, seed: u64) -> io::Result<()> {
    let era = match year {
        ..=2022 => 0,
        2023 => 1,
        2024 => 2,
        _ => 3,
    };
    let month_start_us = days_from_civil(year, month, 1) * 86_400_000_000;
    let next = if month == 12 {
        (year + 1, 1)
    } else {
        (year, month + 1)
    };
    let month_us = days_from_civil(next.0, next.1, 1) * 86_400_000_000 - month_start_us;
    let fee_name = if era <= 1 {
        "airport_fee"
    } else {
        "Airport_fee"
    };
    let props = WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        .set_max_row_group_row_count(Some(1 << 20))
        .build();
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ ((year as u64) << 8 | u64::from(month)));
    let mut writer: Option<ArrowWriter<File>> = None;
    let mut done = 0u64;
    while done < rows {
        let n = (rows - done).min(BATCH_ROWS as u64) as usize;
        let mut vendor = Vec::with_capacity(n);
        let mut pickup = Vec::with_capacity(n);
        let mut dropoff = Vec::with_capacity(n);
        let mut passengers = Vec::with_capacity(n);
        let mut distance = Float64Builder::with_capacity(n);
        let mut ratecode = Vec::with_capacity(n);
        let mut flag = StringBuilder::with_capacity(n, n);
        let mut pu = Vec::with_capacity(n);
        let mut dol = Vec::with_capacity(n);
        let mut payment = Int64Builder::with_capacity(n);
        let mut money: [Float64Builder; 7] =
            std::array::from_fn(|_| Float64Builder::with_capacity(n));
        let (mut congestion, mut airport, mut cbd) = (
            Float64Builder::with_capacity(n),
            Float64Builder::with_capacity(n),
            Float64Builder::with_capacity(n),
        );
        for i in 0..n {
            let row = done + i as u64;
            let missing = rng.gen_bool(0.02);
            vendor.push(if rng.gen_bool(0.7) { 2 } else { 1 });
            let start = month_start_us
                + (row as i128 * month_us as i128 / rows as i128) as i64
                + rng.gen_range(0..1_000_000);
            let miles: f64 = (rng.gen_range(0.0f64..1.0).powi(3) * 25.0
                + 0.1 * rng.gen_range(1..10) as f64 * 0.1)
                .min(60.0);
            let miles = (miles * 100.0).round() / 100.0;
            let minutes = 3.0 + miles * rng.gen_range(2.5..5.0);
            pickup.push(start);
            dropoff.push(start + (minutes * 60e6) as i64);
            passengers.push((!missing).then(|| {
                *[1, 1, 1, 1, 2, 2, 3, 5, 0]
                    .get(rng.gen_range(0..9))
                    .unwrap_or(&1)
            }));
            distance.append_value(miles);
            let airport_trip = rng.gen_bool(0.06);
            ratecode.push((!missing).then_some(if airport_trip { 2 } else { 1 }));
            if missing {
                flag.append_null();
            } else {
                flag.append_value(if rng.gen_bool(0.005) { "Y" } else { "N" });
            }
            let from = if airport_trip { 132 } else { zone(&mut rng) };
            pu.push(from);
            dol.push(zone(&mut rng));
            let card = rng.gen_bool(0.75);
            payment.append_value(if missing {
                0
            } else if card {
                1
            } else {
                2
            });
            // Amounts in cents.
            let fare: i64 = if airport_trip {
                7000
            } else {
                300 + (miles * 250.0) as i64 + (minutes * 50.0) as i64
            };
            let extra: i64 = if rng.gen_bool(0.4) { 100 } else { 0 };
            let mta = 50;
            let tip: i64 = if card {
                fare * rng.gen_range(10..=25) / 100
            } else {
                0
            };
            let tolls: i64 = if rng.gen_bool(0.05) { 694 } else { 0 };
            let improvement = 100;
            let cong: i64 = if missing { 0 } else { 250 };
            let fee: i64 = if airport_trip { 175 } else { 0 };
            let cbd_fee: i64 = if era == 3 && rng.gen_bool(0.6) { 75 } else { 0 };
            let total = fare + extra + mta + tip + tolls + improvement + cong + fee + cbd_fee;
            for (b, cents) in
                money
                    .iter_mut()
                    .zip([fare, extra, mta, tip, tolls, improvement, total])
            {
                b.append_value(cents as f64 / 100.0);
            }
            congestion.append_option((!missing).then_some(cong as f64 / 100.0));
            airport.append_option((!missing).then_some(fee as f64 / 100.0));
            cbd.append_value(cbd_fee as f64 / 100.0);
        }
        let ints32 = |v: &[i64]| -> ArrayRef {
            let mut b = Int32Builder::with_capacity(v.len());
            v.iter().for_each(|&x| b.append_value(x as i32));
            Arc::new(b.finish())
        };
        let ints64 = |v: &[i64]| -> ArrayRef {
            let mut b = Int64Builder::with_capacity(v.len());
            v.iter().for_each(|&x| b.append_value(x));
            Arc::new(b.finish())
        };
        let opt64 = |v: &[Option<i64>]| -> ArrayRef {
            let mut b = Int64Builder::with_capacity(v.len());
            v.iter().for_each(|&x| b.append_option(x));
            Arc::new(b.finish())
        };
        let optf = |v: &[Option<i64>]| -> ArrayRef {
            let mut b = Float64Builder::with_capacity(v.len());
            v.iter().for_each(|&x| b.append_option(x.map(|x| x as f64)));
            Arc::new(b.finish())
        };
        let times = |v: &[i64]| -> ArrayRef {
            if era == 0 {
                let mut b = TimestampNanosecondBuilder::with_capacity(v.len());
                v.iter().for_each(|&x| b.append_value(x * 1000));
                Arc::new(b.finish())
            } else {
                let mut b = TimestampMicrosecondBuilder::with_capacity(v.len());
                v.iter().for_each(|&x| b.append_value(x));
                Arc::new(b.finish())
            }
        };
        let wide = era == 0;
        let [fare, extra, mta, tip, tolls, improvement, total] =
            money.map(|mut b| Arc::new(b.finish()) as ArrayRef);
        let mut columns: Vec<(&str, ArrayRef)> = vec![
            (
                "VendorID",
                if wide {
                    ints64(&vendor)
                } else {
                    ints32(&vendor)
                },
            ),
            ("tpep_pickup_datetime", times(&pickup)),
            ("tpep_dropoff_datetime", times(&dropoff)),
            (
                "passenger_count",
                if wide {
                    optf(&passengers)
                } else {
                    opt64(&passengers)
                },
            ),
            ("trip_distance", Arc::new(distance.finish())),
            (
                "RatecodeID",
                if wide {
                    optf(&ratecode)
                } else {
                    opt64(&ratecode)
                },
            ),
            ("store_and_fwd_flag", Arc::new(flag.finish())),
            ("PULocationID", if wide { ints64(&pu) } else { ints32(&pu) }),
            (
                "DOLocationID",
                if wide { ints64(&dol) } else { ints32(&dol) },
            ),
            ("payment_type", Arc::new(payment.finish())),
            ("fare_amount", fare),
            ("extra", extra),
            ("mta_tax", mta),
            ("tip_amount", tip),
            ("tolls_amount", tolls),
            ("improvement_surcharge", improvement),
            ("total_amount", total),
            ("congestion_surcharge", Arc::new(congestion.finish())),
            (fee_name, Arc::new(airport.finish())),
        ];
        if era == 3 {
            columns.push(("cbd_congestion_fee", Arc::new(cbd.finish())));
        }
        let batch = RecordBatch::try_from_iter(columns).map_err(io::Error::other)?;
        if writer.is_none() {
            let file = File::create(path)?;
            writer = Some(
                ArrowWriter::try_new(file, batch.schema(), Some(props.clone()))
                    .map_err(io::Error::other)?,
            );
        }
        if let Some(w) = &mut writer {
            w.write(&batch).map_err(io::Error::other)?;
        }
        done += n as u64;
    }
    match writer {
        Some(w) => {
            w.close().map_err(io::Error::other)?;
            Ok(())
        }
        None => Err(io::Error::other("a month needs at least one row")),
    }
}

/// Writes `rows` trips for each of `months` into `dir` (created if need
/// be) as `yellow_tripdata_YYYY-MM.parquet`, and `taxi_zone_lookup.csv`;
/// returns the paths written.
///
/// # Errors
/// A file cannot be written, or `rows` is 0.
pub fn write_months(
    dir: &Path,
    months: &[(i32, u32)],
    rows: u64,
    seed: u64,
) -> io::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir)?;
    let mut written = Vec::new();
    for &(year, month) in months {
        let path = dir.join(file_name(year, month));
        write_month(&path, year, month, rows, seed)?;
        written.push(path);
    }
    let zones = dir.join("taxi_zone_lookup.csv");
    write_zone_lookup(&zones)?;
    written.push(zones);
    Ok(written)
}

/// Writes a `taxi_zone_lookup.csv`-like table: `LocationID,Borough,Zone,
/// service_zone` for zones 1 to 265 (1 is Newark Airport in EWR, 132 JFK
/// and 138 LaGuardia in Queens, 264 and 265 Unknown; the others spread
/// over the five boroughs, Manhattan's being the busy ones).
///
/// # Errors
/// The file cannot be written.
pub fn write_zone_lookup(path: &Path) -> io::Result<()> {
    let mut w = BufWriter::new(File::create(path)?);
    writeln!(w, "LocationID,Borough,Zone,service_zone")?;
    for id in 1..=265i64 {
        let (borough, zone, service) = match id {
            1 => ("EWR", "Newark Airport".to_string(), "EWR"),
            132 => ("Queens", "JFK Airport".to_string(), "Airports"),
            138 => ("Queens", "LaGuardia Airport".to_string(), "Airports"),
            264 => ("Unknown", "N/A".to_string(), "N/A"),
            265 => ("N/A", "Outside of NYC".to_string(), "N/A"),
            _ if BUSY_ZONES.contains(&id) || (100..=180).contains(&id) && id % 3 == 0 => {
                ("Manhattan", format!("Manhattan Zone {id}"), "Yellow Zone")
            }
            _ => {
                let borough = ["Brooklyn", "Queens", "Bronx", "Staten Island", "Manhattan"]
                    [(id as usize * 7) % 5];
                let service = if borough == "Manhattan" {
                    "Yellow Zone"
                } else {
                    "Boro Zone"
                };
                (borough, format!("{borough} Zone {id}"), service)
            }
        };
        writeln!(w, "{id},\"{borough}\",\"{zone}\",\"{service}\"")?;
    }
    w.flush()
}
