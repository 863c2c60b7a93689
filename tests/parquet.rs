//! Parquet in (`--load`, `FROM 'x.parquet'`, `read_parquet`, globs with
//! union by name, hive keys) and COPY out, on files these tests write with
//! the `parquet` crate's own writers. The reference for every type is the
//! Arrow importer on the same batch (itself checked against the CSV load
//! in `arrow_load.rs`); for drifting files, sums computed here.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use katydid::arrow_array::builder::{Decimal128Builder, StringDictionaryBuilder};
use katydid::arrow_array::types::Int32Type;
use katydid::arrow_array::{
    ArrayRef, BooleanArray, Date32Array, Float32Array, Float64Array, Int8Array, Int16Array,
    Int32Array, Int64Array, ListArray, RecordBatch, RecordBatchIterator, StringArray,
    TimestampMicrosecondArray, TimestampMillisecondArray, TimestampNanosecondArray,
    TimestampSecondArray, UInt16Array, UInt32Array, UInt64Array,
};
use katydid::{Database, DatabaseOptions, Error, LoadOptions, ParquetOptions, Value};
use parquet::arrow::ArrowWriter;
use parquet::file::properties::WriterProperties;

fn db(threads: usize) -> Database {
    Database::new(DatabaseOptions {
        threads,
        memory_limit: None,
    })
    .unwrap()
}

/// A fresh directory for one test.
fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("katydid-parquet-{name}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&d);
    fs::create_dir_all(&d).unwrap();
    d
}

/// Writes `batches` to `path` as Parquet, `rows_per_group` rows a row group.
fn write(path: &Path, batches: &[RecordBatch], rows_per_group: usize) {
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).unwrap();
    }
    let props = WriterProperties::builder()
        .set_max_row_group_row_count(Some(rows_per_group))
        .build();
    let file = fs::File::create(path).unwrap();
    let mut w = ArrowWriter::try_new(file, batches[0].schema(), Some(props)).unwrap();
    for b in batches {
        w.write(b).unwrap();
    }
    w.close().unwrap();
}

fn rows(db: &Database, sql: &str) -> Vec<Vec<Value>> {
    db.query(sql).unwrap_or_else(|e| panic!("{sql}: {e}")).rows
}

fn types(db: &Database, sql: &str) -> Vec<String> {
    db.query(sql)
        .unwrap()
        .types
        .iter()
        .map(|t| t.name().to_string())
        .collect()
}

/// `n` rows of every type the Parquet writer stores from Arrow, NULLs
/// every few rows.
fn every_type(n: usize) -> RecordBatch {
    let some = |i: usize, k: usize| i % k != 3;
    let mut dec = Decimal128Builder::new()
        .with_precision_and_scale(12, 2)
        .unwrap();
    let mut dict = StringDictionaryBuilder::<Int32Type>::new();
    for i in 0..n {
        dec.append_option(some(i, 5).then_some(i as i128 * 137 - 5000));
        dict.append_option(some(i, 7).then_some(["CASH", "CARD", "DISPUTE"][i % 3]));
    }
    let cols: Vec<(&str, ArrayRef)> = vec![
        (
            "i8",
            Arc::new(Int8Array::from_iter(
                (0..n).map(|i| some(i, 4).then_some(((i % 250) as i16 - 120) as i8)),
            )),
        ),
        (
            "i16",
            Arc::new(Int16Array::from_iter(
                (0..n).map(|i| some(i, 5).then_some(i as i16 - 300)),
            )),
        ),
        (
            "i32",
            Arc::new(Int32Array::from_iter(
                (0..n).map(|i| some(i, 6).then_some(i as i32 * 1000)),
            )),
        ),
        (
            "i64",
            Arc::new(Int64Array::from_iter(
                (0..n).map(|i| some(i, 7).then_some(i as i64 * 1_000_000_007)),
            )),
        ),
        (
            "u16",
            Arc::new(UInt16Array::from_iter(
                (0..n).map(|i| some(i, 8).then_some(i as u16)),
            )),
        ),
        (
            "u32",
            Arc::new(UInt32Array::from_iter(
                (0..n).map(|i| some(i, 9).then_some(u32::MAX - i as u32)),
            )),
        ),
        (
            "u64",
            Arc::new(UInt64Array::from_iter(
                (0..n).map(|i| some(i, 10).then_some(i as u64 * 3)),
            )),
        ),
        (
            "f32",
            Arc::new(Float32Array::from_iter(
                (0..n).map(|i| some(i, 4).then_some(i as f32 * 0.25 + 0.1)),
            )),
        ),
        (
            "f64",
            Arc::new(Float64Array::from_iter(
                (0..n).map(|i| some(i, 5).then_some(i as f64 * 1.01)),
            )),
        ),
        ("dec", Arc::new(dec.finish())),
        (
            "day",
            Arc::new(Date32Array::from_iter(
                (0..n).map(|i| some(i, 6).then_some(19_000 + i as i32)),
            )),
        ),
        (
            "ts_ms",
            Arc::new(TimestampMillisecondArray::from_iter((0..n).map(|i| {
                some(i, 7).then_some(1_700_000_000_000 + i as i64 * 61_001)
            }))),
        ),
        (
            "ts_us",
            Arc::new(
                TimestampMicrosecondArray::from_iter(
                    (0..n).map(|i| some(i, 8).then_some(1_700_000_000_000_000 + i as i64 * 7)),
                )
                .with_timezone("UTC"),
            ),
        ),
        (
            "ts_ns",
            Arc::new(TimestampNanosecondArray::from_iter((0..n).map(|i| {
                some(i, 9).then_some(1_700_000_000_000_000_000 + i as i64 * 1_234_567)
            }))),
        ),
        (
            "s",
            Arc::new(StringArray::from_iter(
                (0..n).map(|i| some(i, 4).then(|| format!("row {}", i % 97))),
            )),
        ),
        ("dict", Arc::new(dict.finish())),
        (
            "flag",
            Arc::new(BooleanArray::from_iter(
                (0..n).map(|i| some(i, 5).then_some(i % 2 == 0)),
            )),
        ),
    ];
    RecordBatch::try_from_iter(cols).unwrap()
}

/// `batch` loaded from memory as table `a` (the reference a Parquet file of
/// the same rows is compared with).
fn load_batch(db: &mut Database, batch: &RecordBatch, opts: &LoadOptions) {
    db.load_arrow(
        RecordBatchIterator::new(vec![Ok(batch.clone())], batch.schema()),
        Path::new("<arrow>"),
        "a",
        opts,
    )
    .unwrap();
}
#[test]
fn every_type_reads_back_as_the_arrow_importer_loads_it() {
    let d = dir("types");
    let batch = every_type(5000);
    let path = d.join("types.parquet");
    write(
        &path,
        &[batch.slice(0, 3000), batch.slice(3000, 2000)],
        1500,
    );
    for threads in [1, 2] {
        let mut db = db(threads);
        let opts = LoadOptions {
            partition_rows: 1000,
            ..LoadOptions::default()
        };
        load_batch(&mut db, &batch, &opts);
        // `.load` and `--load` go through load_csv: the magic bytes decide.
        let stats = db.load_csv(&path, "p", &opts).unwrap();
        assert_eq!(stats.rows, 5000);
        assert_eq!(types(&db, "SELECT * FROM p"), types(&db, "SELECT * FROM a"));
        assert_eq!(rows(&db, "SELECT * FROM p"), rows(&db, "SELECT * FROM a"));
        // And as a file in a query, all of it or some columns.
        let quoted = path.display().to_string();
        assert_eq!(
            rows(&db, &format!("SELECT * FROM '{quoted}'")),
            rows(&db, "SELECT * FROM a")
        );
        assert_eq!(
            rows(
                &db,
                &format!(
                    "SELECT dict, count(*), sum(dec) FROM read_parquet('{quoted}') GROUP BY dict ORDER BY dict"
                )
            ),
            rows(
                &db,
                "SELECT dict, count(*), sum(dec) FROM a GROUP BY dict ORDER BY dict"
            )
        );
    }
    fs::remove_dir_all(&d).unwrap();
}

/// Writes an INT96 timestamp column (the legacy Impala/Spark layout: 8
/// bytes of nanoseconds in the day, then 4 of the Julian day) with the
/// low-level writer, as Arrow writers no longer do.
#[test]
fn int96_timestamps_read_as_timestamps() {
    use parquet::data_type::{Int96, Int96Type};
    use parquet::file::writer::SerializedFileWriter;
    use parquet::schema::parser::parse_message_type;
    let d = dir("int96");
    let path = d.join("legacy.parquet");
    let schema = Arc::new(parse_message_type("message legacy { required int96 ts; }").unwrap());
    let file = fs::File::create(&path).unwrap();
    let mut w = SerializedFileWriter::new(file, schema, Default::default()).unwrap();
    // 2024-01-01 00:00:01.5 and 1970-01-01 00:00:00.
    let julian_epoch = 2_440_588u32;
    let values: Vec<(u64, u32)> = vec![(1_500_000_000, julian_epoch + 19_723), (0, julian_epoch)];
    let mut rg = w.next_row_group().unwrap();
    let mut col = rg.next_column().unwrap().unwrap();
    let int96: Vec<Int96> = values
        .iter()
        .map(|&(nanos, day)| {
            let mut v = Int96::new();
            v.set_data(nanos as u32, (nanos >> 32) as u32, day);
            v
        })
        .collect();
    col.typed::<Int96Type>()
        .write_batch(&int96, None, None)
        .unwrap();
    col.close().unwrap();
    rg.close().unwrap();
    w.close().unwrap();
    let db = db(1);
    let got = rows(&db, &format!("SELECT ts FROM '{}'", path.display()));
    let expected: Vec<Vec<Value>> = ["2024-01-01 00:00:01.5", "1970-01-01 00:00:00"]
        .iter()
        .map(|t| {
            vec![Value::Timestamp(
                katydid::types::parse_timestamp(t).unwrap(),
            )]
        })
        .collect();
    assert_eq!(got, expected);
    fs::remove_dir_all(&d).unwrap();
}

/// One month of TLC-like trips whose schema drifts as the real files do.
fn month(
    vendor_int32: bool,
    fee_name: &str,
    passenger_double: bool,
    cbd: bool,
    n: usize,
    seed: i64,
) -> RecordBatch {
    let mut cols: Vec<(&str, ArrayRef)> = Vec::new();
    cols.push(if vendor_int32 {
        (
            "VendorID",
            Arc::new(Int32Array::from_iter_values(
                (0..n).map(|i| 1 + (i as i32 + seed as i32) % 2),
            )),
        )
    } else {
        (
            "vendorid",
            Arc::new(Int64Array::from_iter_values(
                (0..n).map(|i| 1 + (i as i64 + seed) % 2),
            )),
        )
    });
    cols.push(if passenger_double {
        (
            "passenger_count",
            Arc::new(Float64Array::from_iter((0..n).map(|i| {
                (i % 11 != 0).then_some(((i as i64 + seed) % 4) as f64)
            }))),
        )
    } else {
        (
            "passenger_count",
            Arc::new(Int64Array::from_iter(
                (0..n).map(|i| (i % 11 != 0).then_some((i as i64 + seed) % 4)),
            )),
        )
    });
    cols.push((
        "fare_amount",
        Arc::new(Float64Array::from_iter_values(
            (0..n).map(|i| ((i as i64 * 37 + seed) % 5000) as f64 / 100.0),
        )),
    ));
    cols.push((
        fee_name,
        Arc::new(Float64Array::from_iter_values(
            (0..n).map(|i| if i % 5 == 0 { 1.75 } else { 0.0 }),
        )),
    ));
    if cbd {
        cols.push((
            "cbd_congestion_fee",
            Arc::new(Float64Array::from_iter_values((0..n).map(|_| 0.75))),
        ));
    }
    RecordBatch::try_from_iter(cols).unwrap()
}

#[test]
fn a_drifting_glob_unions_by_name() {
    let d = dir("glob");
    let months = [
        month(true, "airport_fee", false, false, 3000, 1),
        month(false, "Airport_fee", true, false, 2000, 2),
        month(true, "Airport_fee", false, true, 1000, 3),
    ];
    for (m, batch) in months.iter().enumerate() {
        write(
            &d.join(format!("yellow_tripdata_2025-0{}.parquet", m + 1)),
            std::slice::from_ref(batch),
            700,
        );
    }
    // Not matched by the glob.
    write(
        &d.join("other.parquet"),
        &[month(true, "x", false, false, 5, 9)],
        10,
    );
    let db = db(2);
    let glob = d
        .join("yellow_tripdata_2025-*.parquet")
        .display()
        .to_string();
    let r = db
        .query(&format!("SELECT * FROM '{glob}' LIMIT 1"))
        .unwrap();
    assert_eq!(
        r.columns,
        [
            "VendorID",
            "passenger_count",
            "fare_amount",
            "airport_fee",
            "cbd_congestion_fee"
        ]
    );
    let t: Vec<&str> = r.types.iter().map(|t| t.name()).collect();
    assert_eq!(t, ["integer", "float", "float", "float", "float"]);
    // The sums, computed from the batches.
    let sum = |name: &str| -> f64 {
        months
            .iter()
            .map(|b| {
                let Some(i) = b
                    .schema()
                    .fields()
                    .iter()
                    .position(|f| f.name().eq_ignore_ascii_case(name))
                else {
                    return 0.0;
                };
                let col = b.column(i);
                if let Some(a) = col.as_any().downcast_ref::<Float64Array>() {
                    a.iter().flatten().sum::<f64>()
                } else if let Some(a) = col.as_any().downcast_ref::<Int64Array>() {
                    a.iter().flatten().sum::<i64>() as f64
                } else if let Some(a) = col.as_any().downcast_ref::<Int32Array>() {
                    a.iter().flatten().map(f64::from).sum::<f64>()
                } else {
                    panic!("{name}")
                }
            })
            .sum()
    };
    let got = rows(
        &db,
        &format!(
            "SELECT count(*), sum(vendorid), sum(passenger_count), count(passenger_count), sum(airport_fee), sum(cbd_congestion_fee), count(cbd_congestion_fee) FROM read_parquet('{glob}')"
        ),
    );
    let close = |v: &Value, x: f64| match v {
        Value::Float(f) => (f - x).abs() < 1e-6 * x.abs().max(1.0),
        Value::Int(i) => *i as f64 == x,
        _ => false,
    };
    let g = &got[0];
    assert_eq!(g[0], Value::Int(6000));
    assert!(close(&g[1], sum("VendorID")), "{g:?}");
    assert!(close(&g[2], sum("passenger_count")), "{g:?}");
    assert_eq!(g[3], Value::Int(6000 - 273 - 182 - 91));
    assert!(close(&g[4], sum("airport_fee")), "{g:?}");
    assert!(close(&g[5], 750.0), "{g:?}");
    assert_eq!(g[6], Value::Int(1000));
    // A list of files, and the filename column.
    let a = d
        .join("yellow_tripdata_2025-01.parquet")
        .display()
        .to_string();
    let c = d
        .join("yellow_tripdata_2025-03.parquet")
        .display()
        .to_string();
    let got = rows(
        &db,
        &format!(
            "SELECT filename, count(*) FROM read_parquet(['{a}', '{c}'], filename => true) GROUP BY filename ORDER BY filename"
        ),
    );
    assert_eq!(
        got,
        vec![
            vec![Value::str(&a), Value::Int(3000)],
            vec![Value::str(&c), Value::Int(1000)]
        ]
    );
    fs::remove_dir_all(&d).unwrap();
}

#[test]
fn hive_partition_keys_become_columns() {
    let d = dir("hive");
    for (year, month_no, n) in [(2024, 1, 10), (2024, 2, 20), (2025, 1, 30)] {
        let path = d
            .join(format!("year={year}"))
            .join(format!("month={month_no:02}"))
            .join("data.parquet");
        write(
            &path,
            &[month(true, "Airport_fee", false, false, n, 0)],
            100,
        );
    }
    let db = db(2);
    let glob = d.join("*/*/*.parquet").display().to_string();
    let got = rows(
        &db,
        &format!(
            "SELECT year, month, count(*) FROM '{glob}' GROUP BY year, month ORDER BY year, month"
        ),
    );
    let expected: Vec<Vec<Value>> = [(2024, 1, 10), (2024, 2, 20), (2025, 1, 30)]
        .iter()
        .map(|&(y, m, n)| vec![Value::Int(y), Value::Int(m), Value::Int(n)])
        .collect();
    assert_eq!(got, expected);
    let off = rows(
        &db,
        &format!("SELECT * FROM read_parquet('{glob}', hive_partitioning => false) LIMIT 1"),
    );
    assert_eq!(off[0].len(), 4);
    fs::remove_dir_all(&d).unwrap();
}

#[test]
fn corrupt_and_truncated_files_fail_naming_the_file_and_load_nothing() {
    let d = dir("corrupt");
    let good = d.join("good.parquet");
    write(&good, &[every_type(3000)], 1000);
    let bytes = fs::read(&good).unwrap();
    let truncated = d.join("truncated.parquet");
    fs::write(&truncated, &bytes[..bytes.len() / 2]).unwrap();
    let not_parquet = d.join("text.parquet");
    fs::write(&not_parquet, "a,b\n1,2\n").unwrap();
    // Garbage in the middle of the data pages, footer intact.
    let garbled = d.join("garbled.parquet");
    let mut g = bytes.clone();
    for b in &mut g[100..bytes.len() / 2] {
        *b = b.wrapping_mul(31).wrapping_add(7);
    }
    fs::write(&garbled, &g).unwrap();
    let mut db = db(2);
    // Not Parquet by its bytes: `.load` reads it as the CSV it is, and
    // read as Parquet it is an error.
    let err = db
        .load_parquet(
            std::slice::from_ref(&not_parquet),
            "t2",
            &LoadOptions::default(),
            &ParquetOptions::default(),
        )
        .unwrap_err();
    assert!(err.to_string().contains("not a Parquet file"), "{err}");
    assert!(err.to_string().contains("text.parquet"), "{err}");
    for (path, what) in [(&truncated, "footer"), (&garbled, "row group")] {
        let err = db
            .load_csv(path, "t", &LoadOptions::default())
            .expect_err("a corrupt file loads");
        let text = err.to_string();
        assert!(text.contains(&path.display().to_string()), "{text}");
        assert!(text.contains(what), "{text}");
        assert!(db.table("t").is_none());
        // With a good file in the same list, the same.
        let err = db
            .query(&format!(
                "SELECT count(*) FROM read_parquet(['{}', '{}'])",
                good.display(),
                path.display()
            ))
            .unwrap_err();
        assert!(
            err.to_string().contains(&path.display().to_string()),
            "{err}"
        );
    }
    assert!(db.table("t2").is_none());
    assert_eq!(db.memory().used(), 0);
    fs::remove_dir_all(&d).unwrap();
}

#[test]
fn a_nested_column_is_an_error_naming_it_unless_skipped() {
    let d = dir("nested");
    let path = d.join("nested.parquet");
    let list = ListArray::from_iter_primitive::<Int32Type, _, _>(vec![Some(vec![Some(1)]), None]);
    let batch = RecordBatch::try_from_iter([
        ("id", Arc::new(Int64Array::from(vec![1, 2])) as ArrayRef),
        ("tags", Arc::new(list) as ArrayRef),
    ])
    .unwrap();
    write(&path, &[batch], 10);
    let db = db(1);
    let err = db
        .query(&format!("SELECT * FROM '{}'", path.display()))
        .unwrap_err();
    assert!(matches!(err, Error::NotSupported(_)), "{err}");
    assert!(err.to_string().contains("\"tags\""), "{err}");
    let got = rows(
        &db,
        &format!(
            "SELECT * FROM read_parquet('{}', skip_unsupported => true)",
            path.display()
        ),
    );
    assert_eq!(got, vec![vec![Value::Int(1)], vec![Value::Int(2)]]);
    fs::remove_dir_all(&d).unwrap();
}

#[test]
fn copy_round_trips_through_parquet_csv_and_json() {
    let d = dir("copy");
    let mut db = db(2);
    db.load_arrow(
        {
            let b = every_type(4000);
            RecordBatchIterator::new(vec![Ok(b.clone())], b.schema())
        },
        Path::new("<arrow>"),
        "t",
        &LoadOptions::default(),
    )
    .unwrap();
    let query = "SELECT * FROM t";
    let expected = rows(&db, query);
    for (name, options) in [
        ("out.parquet", ""),
        ("out_zstd.parquet", " (FORMAT parquet, COMPRESSION zstd)"),
        ("out.csv", " (HEADER, DELIMITER ',')"),
        ("out_semi.txt", " (FORMAT csv, DELIMITER ';')"),
    ] {
        let path = d.join(name);
        let r = db
            .query(&format!("COPY ({query}) TO '{}'{options}", path.display()))
            .unwrap();
        assert_eq!(r.rows, vec![vec![Value::Int(4000)]], "{name}");
        let back = rows(
            &db,
            &format!(
                "SELECT * FROM read_{}('{}'{})",
                if name.ends_with("parquet") {
                    "parquet"
                } else {
                    "csv"
                },
                path.display(),
                if name.ends_with(".txt") {
                    ", delim => ';'"
                } else {
                    ""
                }
            ),
        );
        assert_eq!(back, expected, "{name}");
    }
    // COPY table, and a result with an expression.
    let path = d.join("agg.parquet");
    db.query(&format!(
        "COPY (SELECT dict, sum(dec) AS total, count(*) AS n FROM t GROUP BY dict ORDER BY dict) TO '{}'",
        path.display()
    ))
    .unwrap();
    assert_eq!(
        rows(&db, &format!("SELECT * FROM '{}'", path.display())),
        rows(
            &db,
            "SELECT dict, sum(dec) AS total, count(*) AS n FROM t GROUP BY dict ORDER BY dict"
        )
    );
    let json = d.join("t.json");
    db.query(&format!("COPY t TO '{}'", json.display()))
        .unwrap();
    let text = fs::read_to_string(&json).unwrap();
    assert_eq!(text.lines().count(), 4000);
    assert!(
        text.lines().next().unwrap().starts_with("{\"i8\":"),
        "{}",
        &text[..80]
    );
    // A failing COPY leaves the target as it was.
    fs::write(d.join("keep.csv"), "old\n").unwrap();
    let err = db
        .query(&format!(
            "COPY (SELECT nope FROM t) TO '{}'",
            d.join("keep.csv").display()
        ))
        .unwrap_err();
    assert!(err.to_string().contains("nope"), "{err}");
    assert_eq!(fs::read_to_string(d.join("keep.csv")).unwrap(), "old\n");
    fs::remove_dir_all(&d).unwrap();
}

/// Row groups read in parallel each read the file at their own offsets:
/// with one offset shared by the readers (the `parquet` crate's reader for
/// a `File`), a busy machine made them read each other's bytes and fail
/// (`Required field num_values is missing`) or worse. Many small row
/// groups, loaded by four threads again and again, all agree.
#[test]
fn row_groups_read_in_parallel_do_not_share_an_offset() {
    let d = dir("parallel");
    let path = d.join("many.parquet");
    // every_type's i16 column holds up to n - 300.
    let n = 30_000;
    write(&path, &[every_type(n)], 250);
    let db4 = db(4);
    let want = rows(
        &db4,
        &format!(
            "SELECT count(*), count(s), sum(i64), min(s), max(s) FROM '{}'",
            path.display()
        ),
    );
    assert_eq!(want[0][0], Value::Int(n as i64));
    for round in 0..12 {
        let mut db = db(4);
        db.load_csv(&path, "t", &LoadOptions::default())
            .unwrap_or_else(|e| panic!("round {round}: {e}"));
        let got = rows(
            &db,
            "SELECT count(*), count(s), sum(i64), min(s), max(s) FROM t",
        );
        assert_eq!(got, want, "round {round}");
    }
    fs::remove_dir_all(&d).unwrap();
}

/// String columns come through the reader as dictionaries where their
/// chunk has a dictionary page: a low-cardinality column, one whose
/// dictionary overflows so the writer falls back to plain pages mid-chunk,
/// and one written without a dictionary all load as the Arrow importer
/// loads the same strings, with the same encodings.
#[test]
fn dictionary_encoded_strings_load_as_their_strings_do() {
    use parquet::schema::types::ColumnPath;
    let d = dir("dictionary");
    let path = d.join("strings.parquet");
    let n = 6000;
    let few = |i: usize| (i % 13 != 5).then(|| ["N", "Y", "", "é🦗"][(i * 5 / 7) % 4].to_string());
    let many = |i: usize| (i % 17 != 2).then(|| format!("trip {:05}", (i * 7919) % 4001));
    let cols: Vec<(&str, ArrayRef)> = vec![
        ("few", Arc::new(StringArray::from_iter((0..n).map(few)))),
        ("many", Arc::new(StringArray::from_iter((0..n).map(many)))),
        ("plain", Arc::new(StringArray::from_iter((0..n).map(few)))),
    ];
    let batch = RecordBatch::try_from_iter(cols).unwrap();
    let props = WriterProperties::builder()
        .set_max_row_group_row_count(Some(2500))
        .set_dictionary_page_size_limit(4096)
        .set_data_page_row_count_limit(500)
        .set_write_batch_size(500)
        .set_column_dictionary_enabled(ColumnPath::from("plain"), false)
        .build();
    let file = fs::File::create(&path).unwrap();
    let mut w = ArrowWriter::try_new(file, batch.schema(), Some(props)).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    let quoted = path.display().to_string();
    for threads in [1, 2] {
        let mut db = db(threads);
        let opts = LoadOptions {
            partition_rows: 1000,
            ..LoadOptions::default()
        };
        load_batch(&mut db, &batch, &opts);
        db.load_csv(&path, "p", &opts).unwrap();
        assert_eq!(rows(&db, "SELECT * FROM p"), rows(&db, "SELECT * FROM a"));
        assert_eq!(
            rows(&db, &format!("SELECT * FROM '{quoted}'")),
            rows(&db, "SELECT * FROM a")
        );
        for sql in [
            "SELECT few, count(*), count(DISTINCT many) FROM {} GROUP BY few ORDER BY few",
            "SELECT count(*) FROM {} WHERE many > 'trip 02000' AND plain <> 'Y'",
        ] {
            assert_eq!(
                rows(&db, &sql.replace("{}", "p")),
                rows(&db, &sql.replace("{}", "a")),
                "{sql}"
            );
        }
        // The codecs; the partition counts differ, as row groups end
        // partitions.
        let encodings = |t: &str| -> Vec<String> {
            rows(&db, &format!("DESCRIBE {t}"))
                .iter()
                .map(|r| {
                    r[2].to_string()
                        .split(" (")
                        .next()
                        .unwrap_or("")
                        .to_string()
                })
                .collect()
        };
        assert_eq!(encodings("p"), encodings("a"));
    }
    fs::remove_dir_all(&d).unwrap();
}

/// `FROM 'x.parquet'` reads only the columns a query names; a later query
/// naming more reads the missing ones and puts them beside the cached
/// ones, rows in the same order, so every answer is the whole load's.
#[test]
fn a_file_query_reads_only_the_columns_it_names() {
    let d = dir("columns");
    let path = d.join("five.parquet");
    let n = 5000;
    let cols: Vec<(&str, ArrayRef)> = vec![
        (
            "a",
            Arc::new(Int64Array::from_iter_values((0..n).map(|i| i * 3))),
        ),
        (
            "b",
            Arc::new(StringArray::from_iter((0..n).map(|i| {
                (i % 7 != 2).then(|| ["x", "y", "z"][(i % 5) as usize % 3])
            }))),
        ),
        (
            "c",
            Arc::new(Float64Array::from_iter_values(
                (0..n).map(|i| i as f64 * 0.5),
            )),
        ),
        (
            "D",
            Arc::new(Int32Array::from_iter_values((0..n as i32).map(|i| i % 100))),
        ),
        (
            "e",
            Arc::new(StringArray::from_iter_values(
                (0..n).map(|i| format!("row {i}")),
            )),
        ),
    ];
    write(&path, &[RecordBatch::try_from_iter(cols).unwrap()], 1500);
    let mut db = db(2);
    db.load_csv(&path, "t", &LoadOptions::default()).unwrap();
    let quoted = path.display().to_string();
    // The file table's loaded column count, from SHOW TABLES.
    let loaded = |db: &Database| -> Vec<Value> {
        rows(db, "SHOW TABLES")
            .into_iter()
            .filter(|r| r[0].to_string().contains("five.parquet"))
            .map(|r| r[2].clone())
            .collect()
    };
    let same = |db: &Database, sql: &str| {
        assert_eq!(
            rows(db, &sql.replace("{}", &format!("'{quoted}'"))),
            rows(db, &sql.replace("{}", "t")),
            "{sql}"
        );
    };
    same(&db, "SELECT count(*) FROM {}");
    assert_eq!(loaded(&db), [Value::Int(1)]);
    same(&db, "SELECT sum(a), max(A) FROM {}");
    assert_eq!(loaded(&db), [Value::Int(1)]);
    same(
        &db,
        "SELECT b, sum(c), count(*) FROM {} WHERE d > 10 GROUP BY b ORDER BY b",
    );
    assert_eq!(loaded(&db), [Value::Int(4)]);
    same(
        &db,
        "SELECT a, b, c FROM {} WHERE a % 7 = 1 ORDER BY c DESC LIMIT 5",
    );
    assert_eq!(loaded(&db), [Value::Int(4)]);
    // All of it: the columns in the file's order, the rows in its order.
    same(&db, "SELECT * FROM {}");
    assert_eq!(loaded(&db), [Value::Int(5)]);
    let names = db
        .query(&format!("SELECT * FROM '{quoted}' LIMIT 1"))
        .unwrap()
        .columns;
    assert_eq!(names, ["a", "b", "c", "D", "e"]);
    same(&db, "SELECT e, a FROM {} WHERE b = 'y' ORDER BY a LIMIT 20");
    fs::remove_dir_all(&d).unwrap();
}

/// COPY of a scan to Parquet (written from Arrow batches a few partitions
/// at a time) holds every selected row once, in order, with its types:
/// many partitions, a filter that empties some of them, NULLs; and a
/// filter that selects nothing still writes a file with the columns.
#[test]
fn copy_of_a_scan_to_parquet_writes_every_selected_row_in_order() {
    let d = dir("copy-scan");
    let mut db = db(2);
    let b = every_type(30_000);
    db.load_arrow(
        RecordBatchIterator::new(vec![Ok(b.clone())], b.schema()),
        Path::new("<arrow>"),
        "t",
        &LoadOptions {
            partition_rows: 1000,
            ..LoadOptions::default()
        },
    )
    .unwrap();
    for (query, filter) in [
        ("SELECT * FROM t", "true"),
        (
            "SELECT s, i64, ts_us, f64 FROM t WHERE i16 < 1000 OR i16 > 25000",
            "i16 < 1000 OR i16 > 25000",
        ),
        (
            "SELECT dict, flag, dec FROM t WHERE i16 > 100000",
            "i16 > 100000",
        ),
    ] {
        let count = rows(&db, &format!("SELECT count(*) FROM t WHERE {filter}"));
        let path = d.join("scan.parquet");
        let r = db
            .query(&format!("COPY ({query}) TO '{}'", path.display()))
            .unwrap();
        assert_eq!(r.rows, count, "{query}");
        let back = db
            .query(&format!("SELECT * FROM read_parquet('{}')", path.display()))
            .unwrap();
        let expected = db.query(query).unwrap();
        assert_eq!(back.rows, expected.rows, "{query}");
        assert_eq!(back.types, expected.types, "{query}");
        assert_eq!(back.columns, expected.columns, "{query}");
    }
    fs::remove_dir_all(&d).unwrap();
}

/// The row-group line of `EXPLAIN sql` on a fresh database: (loaded,
/// total), or `None` when no row group was skipped.
fn row_groups_loaded(sql: &str) -> Option<(usize, usize)> {
    let lines = rows(&db(2), &format!("EXPLAIN {sql}"));
    let line = lines
        .iter()
        .map(|r| r[0].to_string())
        .find(|l| l.starts_with("parquet row groups: "))?;
    let words: Vec<&str> = line.split_whitespace().collect();
    Some((words[3].parse().unwrap(), words[5].parse().unwrap()))
}

/// Ten row groups of 1,000 rows: `id` and `name` ascending (so each group
/// holds one range), `grp` the row group, floats with NULLs and a NaN,
/// timestamps, a string column all NULL in group 5, an integer one NULL
/// outside group 2, 32-bit floats, timestamps in seconds and dates.
fn ten_groups() -> RecordBatch {
    let n = 10_000i64;
    let base = 1_704_067_200_000_000i64; // 2024-01-01 00:00:00 in µs
    let cols: Vec<(&str, ArrayRef)> = vec![
        ("id", Arc::new(Int64Array::from_iter_values(0..n))),
        (
            "grp",
            Arc::new(Int32Array::from_iter_values(
                (0..n as i32).map(|i| i / 1000),
            )),
        ),
        (
            "fare",
            Arc::new(Float64Array::from_iter((0..n).map(|i| match i {
                3500 => Some(f64::NAN),
                _ if i % 17 == 0 => None,
                _ => Some(i as f64 * 0.5),
            }))),
        ),
        (
            "name",
            Arc::new(StringArray::from_iter(
                (0..n).map(|i| (i / 1000 != 5).then(|| format!("n{i:05}"))),
            )),
        ),
        (
            "ts",
            Arc::new(TimestampMicrosecondArray::from_iter_values(
                (0..n).map(|i| base + i * 60_000_000),
            )),
        ),
        (
            "sparse",
            Arc::new(Int64Array::from_iter(
                (0..n).map(|i| (i / 1000 == 2).then_some(i % 7)),
            )),
        ),
        // Seconds, which the file stores as milliseconds.
        (
            "ts_s",
            Arc::new(TimestampSecondArray::from_iter_values(
                (0..n).map(|i| base / 1_000_000 + i * 60),
            )),
        ),
        // One day per row group.
        (
            "day",
            Arc::new(Date32Array::from_iter_values(
                (0..n as i32).map(|i| 19_723 + i / 1000),
            )),
        ),
        // Loaded as their shortest decimals: 1000.2f32 is 1000.2, below
        // the float's own 1000.2000122.
        (
            "f32",
            Arc::new(Float32Array::from_iter_values(
                (0..n).map(|i| i as f32 + 0.2),
            )),
        ),
    ];
    RecordBatch::try_from_iter(cols).unwrap()
}

/// A WHERE over a Parquet file loads only the row groups whose statistics
/// allow a match (as few as the groups holding matching rows when the
/// column is sorted), and every answer equals the whole file's, at the
/// bounds, with NULLs and NaN; a later query without the filter sees the
/// whole file.
#[test]
fn a_file_query_skips_row_groups_its_filter_rules_out() {
    let d = dir("row-groups");
    let path = d.join("ten.parquet");
    write(&path, &[ten_groups()], 1000);
    let quoted = format!("'{}'", path.display());
    let mut whole = db(2);
    whole.load_csv(&path, "t", &LoadOptions::default()).unwrap();
    let cases: [(&str, bool); 38] = [
        // (filter, whether the groups kept are exactly those with a match)
        ("id < 1000", true),
        ("id <= 999", true),
        ("id = 999", true),
        ("id = 1000", true),
        ("999 < id AND id < 1001", true),
        ("id BETWEEN 2000 AND 3999", true),
        ("id IN (5, 9999, 123456)", true),
        ("id > 9999", true),
        ("id >= -5 AND grp = 3", true),
        ("id < 2.5", true),
        ("id >= 9000.5", true),
        ("name = 'n04500'", true),
        ("name >= 'n09000'", true),
        ("name < 'n00010'", true),
        ("name IS NULL", true),
        ("name IS NOT NULL AND grp > 3", true),
        ("sparse IS NOT NULL", true),
        ("sparse > 5", true),
        ("ts >= '2024-01-07 22:39:00'", true),
        ("ts < '2024-01-01 16:40:00'", true),
        ("fare < 10", true),
        ("fare <= 0", true),
        ("f32 < 1000.20001", true),
        ("ts_s >= '2024-01-07 22:39:00'", true),
        ("day = '2024-01-03'", true),
        ("day > '2024-01-08 12:00:00'", true),
        ("f32 = 2000.2", true),
        // Typed date and timestamp literals, as the binder compares them
        // (a date with a timestamp as the date's midnight).
        ("day >= DATE '2024-01-08'", true),
        ("day < CAST('2024-01-03' AS DATE)", true),
        ("day IN (DATE '2024-01-02', DATE '2024-01-09')", true),
        ("day > TIMESTAMP '2024-01-08 12:00:00'", true),
        ("day <= TIMESTAMP '2024-01-03 00:00:00'", true),
        ("ts >= DATE '2024-01-07'", true),
        ("ts < TIMESTAMP '2024-01-01 16:40:00'", true),
        ("ts_s BETWEEN DATE '2024-01-03' AND DATE '2024-01-04'", true),
        ("ts_s >= '2024-01-07 22:39:00'::TIMESTAMP", true),
        // NaN is above every number: group 3 may match whatever its bounds.
        ("fare > 4990", false),
        ("fare >= 4999.5 OR id = 3", false),
    ];
    for (filter, exact) in cases {
        let query = |from: &str| {
            format!(
                "SELECT count(*), sum(id), min(name), max(fare), count(sparse) FROM {from} WHERE {filter}"
            )
        };
        let expected = rows(&whole, &query("t"));
        // Fresh, then after other queries have filled the cache.
        assert_eq!(rows(&db(2), &query(&quoted)), expected, "{filter}");
        let matching = rows(
            &whole,
            &format!("SELECT count(DISTINCT grp) FROM t WHERE {filter}"),
        )[0][0]
            .clone();
        let Value::Int(matching) = matching else {
            panic!("{filter}: {matching:?}")
        };
        let (loaded, total) = row_groups_loaded(&query(&quoted)).unwrap_or((10, 10));
        assert_eq!(total, 10, "{filter}");
        assert!(loaded as i64 >= matching, "{filter}: {loaded} < {matching}");
        if exact {
            assert_eq!(loaded as i64, matching, "{filter}");
        }
    }
    // One database, filters that need other row groups, then none: every
    // answer is the whole file's.
    let one = db(2);
    for filter in [
        "id < 1000",
        "id < 500",
        "id >= 9000",
        "name IS NULL",
        "true",
        "id < 1000",
        "fare > 10",
    ] {
        for q in [
            "SELECT count(*), sum(fare), max(name) FROM {} WHERE {f}",
            "SELECT count(*) FROM {}",
            "SELECT id, name, ts FROM {} WHERE {f} ORDER BY id DESC LIMIT 3",
        ] {
            let q = q.replace("{f}", filter);
            assert_eq!(
                rows(&one, &q.replace("{}", &quoted)),
                rows(&whole, &q.replace("{}", "t")),
                "{q}"
            );
        }
    }
    fs::remove_dir_all(&d).unwrap();
}

/// Across files: a column a file lacks is NULL there (so a comparison on it
/// skips all of that file's row groups), and hive keys are one value per
/// file.
#[test]
fn row_groups_are_skipped_by_missing_columns_and_hive_keys() {
    let d = dir("row-groups-glob");
    let full = ten_groups();
    let without_sparse = full.project(&[0, 1, 2, 3, 4]).unwrap();
    write(
        &d.join("year=2023/a.parquet"),
        std::slice::from_ref(&full),
        1000,
    );
    write(&d.join("year=2024/b.parquet"), &[without_sparse], 1000);
    let glob = format!("'{}'", d.join("*/*.parquet").display());
    for (filter, expected) in [
        ("sparse = 3", 1),
        ("sparse IS NULL", 19),
        ("year = 2024", 10),
        ("year > 2023 AND id < 1000", 1),
        ("year IN (2022, 2023) AND id > 8999", 1),
    ] {
        let query = format!("SELECT count(*), sum(id), count(sparse) FROM {glob} WHERE {filter}");
        let (loaded, total) = row_groups_loaded(&query).unwrap_or((20, 20));
        assert_eq!((loaded, total), (expected, 20), "{filter}");
        let mut whole = db(2);
        whole
            .load_parquet(
                &[d.join("year=2023/a.parquet"), d.join("year=2024/b.parquet")],
                "t",
                &LoadOptions::default(),
                &ParquetOptions::default(),
            )
            .unwrap();
        assert_eq!(
            rows(&db(2), &query),
            rows(&whole, &query.replace(&glob, "t")),
            "{filter}"
        );
    }
    fs::remove_dir_all(&d).unwrap();
}

/// A decimal of more than 15 significant digits loads as the nearest
/// double, which rounds it: the load says so for that column (from a file
/// and from Arrow), and not for a shorter decimal, which loads exactly.
#[test]
fn long_decimals_load_with_a_notice_that_they_round() {
    let d = dir("decimal-notice");
    let mut short = Decimal128Builder::new()
        .with_precision_and_scale(12, 2)
        .unwrap();
    let mut long = Decimal128Builder::new()
        .with_precision_and_scale(18, 4)
        .unwrap();
    for i in 0..100i128 {
        short.append_value(999_999_999_999 - i);
        long.append_value(123_456_789_012_345_678 - i);
    }
    let batch = RecordBatch::try_from_iter(vec![
        ("short", Arc::new(short.finish()) as ArrayRef),
        ("long", Arc::new(long.finish()) as ArrayRef),
    ])
    .unwrap();
    let path = d.join("dec.parquet");
    write(&path, std::slice::from_ref(&batch), 50);
    let mut from_file = db(2);
    let stats = from_file
        .load_parquet(
            &[path],
            "t",
            &LoadOptions::default(),
            &ParquetOptions::default(),
        )
        .unwrap();
    let mut from_arrow = db(2);
    let arrow_stats = from_arrow
        .load_arrow(
            RecordBatchIterator::new(vec![Ok(batch.clone())], batch.schema()),
            Path::new("<arrow>"),
            "t",
            &LoadOptions::default(),
        )
        .unwrap();
    for notices in [&stats.notices, &arrow_stats.notices] {
        assert_eq!(notices.len(), 1, "{notices:?}");
        assert!(
            notices[0].starts_with("column long: DECIMAL(18,4) loads as the nearest double"),
            "{notices:?}"
        );
    }
    // The short decimal is exact, the long one rounded.
    assert_eq!(
        rows(&from_file, "SELECT max(short), max(long) FROM t"),
        vec![vec![
            Value::Float(9_999_999_999.99),
            Value::Float(12_345_678_901_234.568)
        ]]
    );
    fs::remove_dir_all(&d).unwrap();
}
