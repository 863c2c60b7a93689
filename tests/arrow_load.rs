//! Arrow record batches into tables (`Database::load_arrow`): every Arrow
//! type katydid loads, checked against the CSV load of the same values
//! (the reference: both must give the same types and rows), batches cut
//! into partitions across batch boundaries, the errors, and what a load
//! leaves when it fails.

use std::path::Path;
use std::sync::Arc;

use katydid::arrow_array::builder::{Decimal128Builder, StringDictionaryBuilder};
use katydid::arrow_array::types::Int32Type;
use katydid::arrow_array::{
    ArrayRef, BinaryArray, BooleanArray, Date32Array, Float32Array, Float64Array, Int8Array,
    Int16Array, Int32Array, Int64Array, LargeStringArray, ListArray, RecordBatch,
    RecordBatchIterator, StringArray, TimestampMicrosecondArray, TimestampMillisecondArray,
    TimestampNanosecondArray, TimestampSecondArray, UInt8Array, UInt16Array, UInt32Array,
    UInt64Array,
};
use katydid::arrow_schema::{ArrowError, Schema};
use katydid::{Database, DatabaseOptions, Error, LoadOptions, Value};

fn db(threads: usize) -> Database {
    Database::new(DatabaseOptions {
        threads,
        memory_limit: None,
    })
    .unwrap()
}

fn opts(partition_rows: usize) -> LoadOptions {
    LoadOptions {
        partition_rows,
        ..LoadOptions::default()
    }
}

/// A reader over `batches` (all of `batches[0]`'s schema).
fn reader(
    batches: Vec<RecordBatch>,
) -> RecordBatchIterator<std::vec::IntoIter<Result<RecordBatch, ArrowError>>> {
    let schema = batches[0].schema();
    RecordBatchIterator::new(
        batches.into_iter().map(Ok).collect::<Vec<_>>().into_iter(),
        schema,
    )
}

/// Every row of `SELECT * FROM table`, with the column types.
fn all_rows(db: &Database, table: &str) -> (Vec<String>, Vec<Vec<Value>>) {
    let r = db.query(&format!("SELECT * FROM {table}")).unwrap();
    (
        r.types.iter().map(|t| t.name().to_string()).collect(),
        r.rows,
    )
}

/// Seven rows of every type katydid loads, with NULLs, as Arrow columns
/// and as the CSV text the same values are written as (NULL as an empty
/// field).
fn every_type() -> (RecordBatch, String) {
    let mut dec = Decimal128Builder::new()
        .with_precision_and_scale(12, 2)
        .unwrap();
    for v in [
        Some(1234),
        Some(-5),
        None,
        Some(99_999_999_999),
        Some(10),
        Some(0),
        Some(1),
    ] {
        dec.append_option(v);
    }
    let mut dict = StringDictionaryBuilder::<Int32Type>::new();
    for v in [
        Some("CASH"),
        Some("CARD"),
        Some("CASH"),
        None,
        Some("CARD"),
        Some("CASH"),
        Some("NO CHARGE"),
    ] {
        dict.append_option(v);
    }
    let columns: Vec<(&str, ArrayRef)> = vec![
        (
            "i8",
            Arc::new(Int8Array::from(vec![
                Some(-128),
                Some(127),
                None,
                Some(0),
                Some(1),
                Some(2),
                Some(3),
            ])),
        ),
        (
            "i16",
            Arc::new(Int16Array::from(vec![
                Some(-32768),
                None,
                Some(32767),
                Some(0),
                Some(5),
                Some(6),
                Some(7),
            ])),
        ),
        (
            "i32",
            Arc::new(Int32Array::from(vec![
                Some(i32::MIN),
                Some(i32::MAX),
                Some(0),
                None,
                Some(1),
                Some(1),
                Some(1),
            ])),
        ),
        (
            "i64",
            Arc::new(Int64Array::from(vec![
                Some(i64::MIN + 1),
                Some(i64::MAX),
                Some(0),
                Some(1),
                None,
                Some(-1),
                Some(42),
            ])),
        ),
        (
            "u8",
            Arc::new(UInt8Array::from(vec![
                Some(255),
                Some(0),
                Some(1),
                Some(2),
                Some(3),
                None,
                Some(4),
            ])),
        ),
        (
            "u16",
            Arc::new(UInt16Array::from(vec![
                Some(65535),
                Some(0),
                Some(1),
                Some(2),
                Some(3),
                Some(4),
                None,
            ])),
        ),
        (
            "u32",
            Arc::new(UInt32Array::from(vec![
                Some(u32::MAX),
                Some(0),
                None,
                Some(2),
                Some(3),
                Some(4),
                Some(5),
            ])),
        ),
        (
            "u64",
            Arc::new(UInt64Array::from(vec![
                Some(i64::MAX as u64),
                Some(0),
                None,
                Some(2),
                Some(3),
                Some(4),
                Some(5),
            ])),
        ),
        (
            "f32",
            Arc::new(Float32Array::from(vec![
                Some(0.1),
                Some(-2.5),
                None,
                Some(1e10),
                Some(3.25),
                Some(0.0),
                Some(7.7),
            ])),
        ),
        (
            "f64",
            Arc::new(Float64Array::from(vec![
                Some(0.1),
                Some(2.5e-7),
                Some(-1e300),
                None,
                Some(12.34),
                Some(0.5),
                Some(1.0),
            ])),
        ),
        ("dec", Arc::new(dec.finish())),
        (
            "day",
            Arc::new(Date32Array::from(vec![
                Some(19723),
                Some(0),
                Some(-1),
                None,
                Some(20000),
                Some(1),
                Some(2),
            ])),
        ),
        (
            "ts_s",
            Arc::new(TimestampSecondArray::from(vec![
                Some(1_704_067_200),
                None,
                Some(0),
                Some(1),
                Some(2),
                Some(3),
                Some(4),
            ])),
        ),
        (
            "ts_ms",
            Arc::new(TimestampMillisecondArray::from(vec![
                Some(1_704_067_200_123),
                Some(0),
                None,
                Some(1),
                Some(2),
                Some(3),
                Some(4),
            ])),
        ),
        (
            "ts_us",
            Arc::new(
                TimestampMicrosecondArray::from(vec![
                    Some(1_704_067_200_123_456),
                    Some(1),
                    Some(2),
                    None,
                    Some(3),
                    Some(4),
                    Some(5),
                ])
                .with_timezone("UTC"),
            ),
        ),
        (
            "ts_ns",
            Arc::new(TimestampNanosecondArray::from(vec![
                Some(1_704_067_200_123_456_789),
                Some(1000),
                Some(2000),
                Some(3000),
                None,
                Some(4000),
                Some(5000),
            ])),
        ),
        (
            "s",
            Arc::new(StringArray::from(vec![
                Some("a"),
                Some(""),
                None,
                Some("a,b"),
                Some("é"),
                Some("a"),
                Some("zz"),
            ])),
        ),
        (
            "ls",
            Arc::new(LargeStringArray::from(vec![
                Some("x"),
                Some("y"),
                Some("x"),
                Some("y"),
                None,
                Some("x"),
                Some("y"),
            ])),
        ),
        ("dict", Arc::new(dict.finish())),
        (
            "bin",
            Arc::new(BinaryArray::from(vec![
                Some(&b"ab"[..]),
                None,
                Some(&b"cd"[..]),
                Some(&b"ab"[..]),
                Some(&b"x"[..]),
                Some(&b"y"[..]),
                Some(&b"z"[..]),
            ])),
        ),
        (
            "flag",
            Arc::new(BooleanArray::from(vec![
                Some(true),
                Some(false),
                None,
                Some(true),
                Some(true),
                Some(false),
                Some(true),
            ])),
        ),
    ];
    let batch = RecordBatch::try_from_iter(columns).unwrap();
    let csv = "\
i8,i16,i32,i64,u8,u16,u32,u64,f32,f64,dec,day,ts_s,ts_ms,ts_us,ts_ns,s,ls,dict,bin,flag
-128,-32768,-2147483648,-9223372036854775807,255,65535,4294967295,9223372036854775807,0.1,0.1,12.34,2024-01-01,2024-01-01 00:00:00,2024-01-01 00:00:00.123,2024-01-01 00:00:00.123456,2024-01-01 00:00:00.123456,a,x,CASH,ab,true
127,,2147483647,9223372036854775807,0,0,0,0,-2.5,2.5e-7,-0.05,1970-01-01,,1970-01-01 00:00:00,1970-01-01 00:00:00.000001,1970-01-01 00:00:00.000001,\"\",y,CARD,,false
,32767,0,0,1,1,,,,-1e300,,1969-12-31,1970-01-01 00:00:00,,1970-01-01 00:00:00.000002,1970-01-01 00:00:00.000002,,x,CASH,cd,
0,0,,1,2,2,2,2,1e10,,999999999.99,,1970-01-01 00:00:01,1970-01-01 00:00:00.001,,1970-01-01 00:00:00.000003,\"a,b\",y,,ab,true
1,5,1,,3,3,3,3,3.25,12.34,0.10,2024-10-04,1970-01-01 00:00:02,1970-01-01 00:00:00.002,1970-01-01 00:00:00.000003,,é,,CARD,x,true
2,6,1,-1,,4,4,4,0.0,0.5,0.00,1970-01-02,1970-01-01 00:00:03,1970-01-01 00:00:00.003,1970-01-01 00:00:00.000004,1970-01-01 00:00:00.000004,a,x,CASH,y,false
3,7,1,42,4,,5,5,7.7,1.0,0.01,1970-01-03,1970-01-01 00:00:04,1970-01-01 00:00:00.004,1970-01-01 00:00:00.000005,1970-01-01 00:00:00.000005,zz,y,NO CHARGE,z,true
";
    (batch, csv.to_string())
}

#[test]
fn every_arrow_type_loads_as_its_csv_text_does() {
    let (batch, csv) = every_type();
    for (threads, partition_rows, cuts) in [
        (1, 65536, vec![7]),
        (2, 3, vec![2, 1, 4]),
        (2, 1, vec![5, 2]),
    ] {
        let mut db = db(threads);
        // The batch cut into pieces that do not line up with partitions.
        let mut pieces = Vec::new();
        let mut at = 0;
        for n in cuts {
            pieces.push(batch.slice(at, n));
            at += n;
        }
        db.load_arrow(
            reader(pieces),
            Path::new("<arrow>"),
            "a",
            &opts(partition_rows),
        )
        .unwrap();
        db.load_csv_bytes(
            csv.clone().into_bytes(),
            Path::new("x.csv"),
            "c",
            &opts(partition_rows),
        )
        .unwrap();
        let (arrow_types, arrow_rows) = all_rows(&db, "a");
        let (csv_types, csv_rows) = all_rows(&db, "c");
        assert_eq!(arrow_types, csv_types, "partition_rows {partition_rows}");
        assert_eq!(arrow_rows, csv_rows, "partition_rows {partition_rows}");
        let info = db.table_info("a").unwrap();
        assert_eq!(info.rows, 7);
        assert_eq!(info.partitions, 7usize.div_ceil(partition_rows));
    }
}

#[test]
fn decimal_sums_are_exact_to_the_last_digit() {
    // 200,000 amounts of cents whose float sum drifts; the exact sum is
    // the integer sum of the cents.
    let cents: Vec<i128> = (0..200_000i128)
        .map(|i| (i * 7_919 % 100_003) - 20_000)
        .collect();
    let exact: i128 = cents.iter().sum();
    let mut b = Decimal128Builder::new()
        .with_precision_and_scale(10, 2)
        .unwrap();
    for &c in &cents {
        b.append_value(c);
    }
    let batch = RecordBatch::try_from_iter([("amount", Arc::new(b.finish()) as ArrayRef)]).unwrap();
    let mut db = db(2);
    db.load_arrow(reader(vec![batch]), Path::new("<arrow>"), "t", &opts(65536))
        .unwrap();
    let r = db.query("SELECT sum(amount) FROM t").unwrap();
    let expected = format!(
        "{}{}.{:02}",
        if exact < 0 { "-" } else { "" },
        exact.abs() / 100,
        exact.abs() % 100
    );
    let Value::Float(sum) = r.rows[0][0] else {
        panic!("{:?}", r.rows)
    };
    assert_eq!(format!("{sum:.2}"), expected);
    assert_eq!(sum, expected.parse::<f64>().unwrap());
}

#[test]
fn a_nested_column_is_an_error_naming_it_unless_skipped() {
    let list =
        ListArray::from_iter_primitive::<Int32Type, _, _>(vec![Some(vec![Some(1), Some(2)]), None]);
    let batch = RecordBatch::try_from_iter([
        ("id", Arc::new(Int64Array::from(vec![1, 2])) as ArrayRef),
        ("tags", Arc::new(list) as ArrayRef),
    ])
    .unwrap();
    let mut db = db(1);
    let err = db
        .load_arrow(
            reader(vec![batch.clone()]),
            Path::new("<arrow>"),
            "t",
            &opts(10),
        )
        .unwrap_err();
    assert!(matches!(err, Error::NotSupported(_)), "{err}");
    assert!(err.to_string().contains("column \"tags\""), "{err}");
    assert!(err.to_string().contains("nested"), "{err}");
    assert!(db.table("t").is_none());
    let skip = LoadOptions {
        skip_unsupported: true,
        ..opts(10)
    };
    let stats = db
        .load_arrow(reader(vec![batch]), Path::new("<arrow>"), "t", &skip)
        .unwrap();
    assert_eq!(stats.columns, 1);
    assert!(stats.notices[0].contains("tags"), "{:?}", stats.notices);
    assert_eq!(
        db.query("SELECT sum(id) FROM t").unwrap().rows[0][0],
        Value::Int(3)
    );
}

#[test]
fn a_value_that_does_not_fit_fails_the_load_and_keeps_nothing() {
    let batch = RecordBatch::try_from_iter([(
        "big",
        Arc::new(UInt64Array::from(vec![1, u64::MAX])) as ArrayRef,
    )])
    .unwrap();
    let mut db = db(2);
    let err = db
        .load_arrow(reader(vec![batch]), Path::new("frame"), "t", &opts(10))
        .unwrap_err();
    let text = err.to_string();
    assert!(text.contains("frame") && text.contains("\"big\""), "{text}");
    assert!(text.contains("18446744073709551615"), "{text}");
    assert!(db.table("t").is_none());
    assert_eq!(db.memory().used(), 0);
}

#[test]
fn a_reader_error_fails_the_load_naming_the_input() {
    let batch =
        RecordBatch::try_from_iter([("x", Arc::new(Int64Array::from(vec![1, 2, 3])) as ArrayRef)])
            .unwrap();
    let schema: Arc<Schema> = batch.schema();
    let items = vec![
        Ok(batch.clone()),
        Err(ArrowError::IoError(
            "the stream broke".into(),
            std::io::Error::other("x"),
        )),
        Ok(batch),
    ];
    let mut db = db(2);
    let err = db
        .load_arrow(
            RecordBatchIterator::new(items, schema),
            Path::new("stream"),
            "t",
            &opts(2),
        )
        .unwrap_err();
    assert!(err.to_string().contains("stream"), "{err}");
    assert!(err.to_string().contains("the stream broke"), "{err}");
    assert!(db.table("t").is_none());
}

#[test]
fn a_load_over_the_memory_limit_or_cancelled_keeps_nothing() {
    let batch = RecordBatch::try_from_iter([(
        "s",
        Arc::new(StringArray::from_iter_values(
            (0..10_000).map(|i| format!("value {i}")),
        )) as ArrayRef,
    )])
    .unwrap();
    let mut db = db(2);
    db.set_memory_limit(10_000);
    let err = db
        .load_arrow(
            reader(vec![batch.clone()]),
            Path::new("<arrow>"),
            "t",
            &opts(1000),
        )
        .unwrap_err();
    assert!(matches!(err, Error::MemoryLimit { .. }), "{err}");
    assert!(db.table("t").is_none());
    assert_eq!(db.memory().used(), 0);
    db.set_memory_limit(usize::MAX);
    let cancel = katydid::CancelToken::new();
    cancel.cancel();
    let cancelled = LoadOptions {
        cancel: Some(cancel),
        ..opts(1000)
    };
    let err = db
        .load_arrow(reader(vec![batch]), Path::new("<arrow>"), "t", &cancelled)
        .unwrap_err();
    assert!(matches!(err, Error::Cancelled), "{err}");
    assert!(db.table("t").is_none());
}

#[test]
fn string_views_load_as_the_same_strings_do() {
    use katydid::arrow_array::StringViewArray;
    // Short views (the 128-bit-key path), 12 and 13 bytes, NULLs, and a
    // partition whose long string sends it down the general path.
    let words = ["a", "", "é🦗", "twelve bytes", "zone 17", "zone 170", "b"];
    let value = |i: usize, long: bool| -> Option<String> {
        match i % 11 {
            3 => None,
            5 if long && (2000..3000).contains(&i) => Some("thirteen byte".to_string()),
            _ => Some(words[i % words.len()].to_string()),
        }
    };
    for long in [false, true] {
        let rows = 5000;
        let values: Vec<Option<String>> = (0..rows).map(|i| value(i, long)).collect();
        let views: ArrayRef = Arc::new(StringViewArray::from_iter(values.iter().cloned()));
        let plain: ArrayRef = Arc::new(StringArray::from_iter(values.iter().cloned()));
        let batch_of =
            |a: ArrayRef| RecordBatch::try_from_iter(vec![("s", a)]).expect("one column");
        let (views, plain) = (batch_of(views), batch_of(plain));
        let mut db = db(2);
        // Batches cut across partitions of 1,000 rows.
        let cut = |b: &RecordBatch| vec![b.slice(0, 1500), b.slice(1500, 3500)];
        db.load_arrow(reader(cut(&views)), Path::new("<v>"), "v", &opts(1000))
            .unwrap();
        db.load_arrow(reader(cut(&plain)), Path::new("<p>"), "p", &opts(1000))
            .unwrap();
        assert_eq!(all_rows(&db, "v"), all_rows(&db, "p"), "long {long}");
        for sql in [
            "SELECT s, count(*) FROM {} GROUP BY s ORDER BY s",
            "SELECT count(*) FROM {} WHERE s = 'zone 17' OR s > 'twelve'",
        ] {
            let v = db.query(&sql.replace("{}", "v")).unwrap().rows;
            let p = db.query(&sql.replace("{}", "p")).unwrap().rows;
            assert_eq!(v, p, "{sql}, long {long}");
        }
        let encodings = |t: &str| -> Vec<String> {
            db.query(&format!("DESCRIBE {t}"))
                .unwrap()
                .rows
                .iter()
                .map(|r| r[2].to_string())
                .collect()
        };
        assert_eq!(encodings("v"), encodings("p"), "long {long}");
    }
}

#[test]
fn string_dictionaries_load_as_their_strings_do() {
    use katydid::arrow_array::DictionaryArray;
    // Dictionaries with a value twice, values no row uses, NULL keys, and
    // batches with different dictionaries inside one partition; the same
    // rows as plain strings are the reference.
    let rows = 4000;
    let value = |i: usize| -> Option<&'static str> {
        (i % 9 != 4).then_some(["CASH", "CARD", "", "DISPUTE", "é🦗"][(i * 7 / 3) % 5])
    };
    let dictionary = |range: std::ops::Range<usize>, values: &[&'static str]| -> ArrayRef {
        let keys = Int32Array::from_iter(
            range.map(|i| value(i).map(|v| values.iter().rposition(|w| *w == v).unwrap() as i32)),
        );
        let values: ArrayRef = Arc::new(StringArray::from(values.to_vec()));
        Arc::new(DictionaryArray::<Int32Type>::try_new(keys, values).unwrap())
    };
    let first = ["CARD", "unused", "CASH", "", "DISPUTE", "é🦗", "CASH"];
    let second = ["é🦗", "DISPUTE", "", "CARD", "CASH", "never"];
    let batch_of = |a: ArrayRef| RecordBatch::try_from_iter(vec![("s", a)]).expect("one column");
    let dict = vec![
        batch_of(dictionary(0..1500, &first)),
        batch_of(dictionary(1500..rows, &second)),
    ];
    let plain: ArrayRef = Arc::new(StringArray::from_iter((0..rows).map(value)));
    let plain = batch_of(plain);
    let mut db = db(2);
    db.load_arrow(reader(dict), Path::new("<d>"), "d", &opts(1000))
        .unwrap();
    db.load_arrow(reader(vec![plain]), Path::new("<p>"), "p", &opts(1000))
        .unwrap();
    assert_eq!(all_rows(&db, "d"), all_rows(&db, "p"));
    for sql in [
        "SELECT s, count(*) FROM {} GROUP BY s ORDER BY s",
        "SELECT count(*) FROM {} WHERE s = 'CASH' OR s > 'CARD'",
    ] {
        let d = db.query(&sql.replace("{}", "d")).unwrap().rows;
        let p = db.query(&sql.replace("{}", "p")).unwrap().rows;
        assert_eq!(d, p, "{sql}");
    }
    let encodings = |t: &str| -> Vec<String> {
        db.query(&format!("DESCRIBE {t}"))
            .unwrap()
            .rows
            .iter()
            .map(|r| r[2].to_string())
            .collect()
    };
    assert_eq!(encodings("d"), encodings("p"));
}
