//! The loader on the shared datasets.

mod common;

use katydid::ingest::{DEFAULT_PARTITION_ROWS, LoadOptions, load_csv};
use katydid::store::Table;
use katydid::types::parse_timestamp;
use katydid::{DataType, Value};

fn column(t: &Table, name: &str) -> Vec<Value> {
    let c = t
        .column_index(name)
        .unwrap_or_else(|| panic!("no column {name}"));
    t.partitions
        .iter()
        .flat_map(|p| (0..p.rows).map(move |i| p.columns[c].value(i)))
        .collect()
}

fn dtype(t: &Table, name: &str) -> DataType {
    t.fields[t.column_index(name).unwrap()].dtype
}

fn ints(values: &[i64]) -> Vec<Value> {
    values.iter().map(|&v| Value::Int(v)).collect()
}

fn opt_ints(values: &[Option<i64>]) -> Vec<Value> {
    values
        .iter()
        .map(|v| v.map_or(Value::Null, Value::Int))
        .collect()
}

fn floats(values: &[Option<f64>]) -> Vec<Value> {
    values
        .iter()
        .map(|v| v.map_or(Value::Null, Value::Float))
        .collect()
}

fn strs(values: &[Option<&str>]) -> Vec<Value> {
    values
        .iter()
        .map(|v| v.map_or(Value::Null, Value::str))
        .collect()
}

/// The expected columns of edge_cases.csv, established by reading the file
/// (10 data rows, 16 columns, no trailing newline): name, type, values.
fn edge_case_expectations() -> Vec<(&'static str, DataType, Vec<Value>)> {
    use DataType::*;
    const MIN: i64 = i64::MIN;
    const BIG: i64 = 9_223_372_036_854_775_806;
    vec![
        (
            "u8_offset_encoded",
            Int,
            ints(&[256, 258, 259, 257, 275, 500, 343, 432, 511, 500]),
        ),
        ("non_dense_ints", Int, ints(&[0, 2, 3, 1, 4, 0, 2, 1, 2, 3])),
        (
            "enum",
            Str,
            strs(&["aa", "aa", "aa", "bb", "bb", "aa", "cc", "aa", "cc", "bb"].map(Some)),
        ),
        (
            "string_packed",
            Str,
            strs(
                &[
                    "xyz", "abc", "axz", "AXY", "azy", "$sss", "asd", "_f", "t", "😈",
                ]
                .map(Some),
            ),
        ),
        ("constant0", Int, ints(&[0; 10])),
        ("constant0_2", Int, ints(&[0; 10])),
        (
            "negative",
            Int,
            ints(&[-199, 39, -100, 34, 4031, 32, -130, -120, 4010, -40]),
        ),
        ("id", Int, ints(&[0, 1, 2, 3, 4, 5, 6, 7, 8, 9])),
        (
            "nullable_int",
            Int,
            opt_ints(&[
                Some(-1),
                Some(-40),
                None,
                None,
                Some(10),
                None,
                None,
                Some(20),
                None,
                Some(13),
            ]),
        ),
        (
            "nullable_int2",
            Int,
            opt_ints(&[
                None,
                Some(-40),
                None,
                Some(0),
                Some(9),
                Some(6),
                None,
                None,
                Some(1),
                Some(14),
            ]),
        ),
        (
            "country",
            Str,
            strs(&[
                Some("Germany"),
                Some("USA"),
                Some("France"),
                None,
                Some("France"),
                None,
                Some("Turkey"),
                None,
                None,
                Some("Germany"),
            ]),
        ),
        (
            "largenum",
            Int,
            ints(&[MIN, BIG, BIG, BIG, MIN, BIG, MIN, BIG, MIN, BIG]),
        ),
        (
            "float",
            Float,
            floats(
                &[
                    0.123412,
                    3e-4,
                    -124.0,
                    3.15159,
                    0.1234e30,
                    1e-6,
                    0.0,
                    0.000001,
                    -1.0,
                    1234124.51325,
                ]
                .map(Some),
            ),
        ),
        (
            "nullable_float",
            Float,
            floats(&[
                None,
                None,
                Some(0.4),
                None,
                None,
                None,
                Some(1e-32),
                None,
                None,
                Some(1.123124e30),
            ]),
        ),
        (
            "float01",
            Float,
            floats(
                &[
                    0.3, -0.4, 0.421231, 0.9482, 0.1, 0.2, 0.5, 0.23, 0.742, -0.2,
                ]
                .map(Some),
            ),
        ),
        (
            "mixed_float_int_null",
            Float,
            floats(&[
                Some(1.0),
                Some(10.0),
                Some(3.0),
                Some(0.21),
                Some(0.12),
                None,
                None,
                Some(0.1),
                Some(0.1),
                Some(0.5),
            ]),
        ),
    ]
}

#[test]
fn edge_cases_types_and_values() {
    let Some(path) = common::shared_dataset("edge_cases.csv") else {
        return;
    };
    let expected = edge_case_expectations();
    for partition_rows in [3, DEFAULT_PARTITION_ROWS] {
        let options = LoadOptions {
            partition_rows,
            ..LoadOptions::default()
        };
        let t = load_csv(&path, "edge", &options).unwrap();
        assert_eq!(t.rows(), 10);
        assert_eq!(t.fields.len(), expected.len());
        for (field, (name, ty, values)) in t.fields.iter().zip(&expected) {
            assert_eq!(field.name, *name);
            assert_eq!(field.dtype, *ty, "type of {name}");
            assert_eq!(column(&t, name), *values, "values of {name}");
        }
    }
}

/// Facts about nyc-taxi-trips-2013-sample.csv.gz checked independently of
/// katydid: the file has no `"`, so `zcat | awk -F,` splits it exactly, and
/// Python's csv module over the same file agrees. Counts and sums come from
/// e.g. `zcat FILE | awk -F, 'NR>1{ if($5=="Y") y++; tot+=$20; id+=$1;
/// if($7=="") n++ } END {print y, tot, id, n}'` (73, 161977.91, 53064406,
/// 609), the last row from `zcat FILE | tail -1`, the rest from a Python
/// pass listing, per column, empty count and which of
/// integer/float/timestamp/other its values look like.
#[test]
fn taxi_sample() {
    let Some(path) = common::shared_dataset("nyc-taxi-trips-2013-sample.csv.gz") else {
        return;
    };
    let options = LoadOptions {
        partition_rows: 4096,
        ..LoadOptions::default()
    };
    let t = load_csv(&path, "trips", &options).unwrap();
    assert_eq!(t.rows(), 10_000);
    assert_eq!(t.fields.len(), 51);
    let sizes: Vec<(usize, usize)> = t.partitions.iter().map(|p| (p.first_row, p.rows)).collect();
    assert_eq!(sizes, [(0, 4096), (4096, 4096), (8192, 1808)]);

    let types = [
        ("trip_id", DataType::Int),
        ("vendor_id", DataType::Int),
        ("pickup_datetime", DataType::Timestamp),
        ("dropoff_datetime", DataType::Timestamp),
        ("store_and_fwd_flag", DataType::Str),
        ("pickup_longitude", DataType::Float),
        ("trip_distance", DataType::Float),
        ("fare_amount", DataType::Float),
        ("total_amount", DataType::Float),
        // Empty in every row: no evidence for a type (issue 30, item 2).
        ("ehail_fee", DataType::Null),
        ("trip_type", DataType::Int),
        ("pickup", DataType::Str),
        ("cab_type", DataType::Str),
        ("snow_depth", DataType::Int),
        ("snowfall", DataType::Float),
        ("pickup_ctlabel", DataType::Float),
        // Census tracts like "020901": leading zeros keep them strings.
        ("pickup_ct2010", DataType::Str),
        ("dropoff_puma", DataType::Int),
    ];
    for (name, ty) in types {
        assert_eq!(dtype(&t, name), ty, "type of {name}");
    }

    let ids = column(&t, "trip_id");
    assert_eq!(ids[..3], ints(&[1, 2, 3])[..]);
    let id_sum: i64 = ids
        .iter()
        .map(|v| match v {
            Value::Int(i) => *i,
            other => panic!("trip_id {other:?}"),
        })
        .sum();
    assert_eq!(id_sum, 53_064_406);

    let flags = column(&t, "store_and_fwd_flag");
    assert_eq!(flags.iter().filter(|v| **v == Value::str("Y")).count(), 73);
    assert_eq!(
        flags.iter().filter(|v| **v == Value::str("N")).count(),
        9927
    );

    let total: f64 = column(&t, "total_amount")
        .iter()
        .map(|v| v.as_f64().unwrap())
        .sum();
    assert!((total - 161_977.91).abs() < 1e-6, "{total}");

    let nulls = |name: &str| column(&t, name).iter().filter(|v| v.is_null()).count();
    assert_eq!(nulls("pickup_longitude"), 609);
    assert_eq!(nulls("dropoff_latitude"), 600);
    assert_eq!(nulls("ehail_fee"), 10_000);
    assert_eq!(nulls("trip_type"), 9990);
    assert_eq!(nulls("pickup_boroname"), 636);
    assert!(
        column(&t, "cab_type")
            .iter()
            .all(|v| *v == Value::str("green"))
    );

    assert_eq!(
        column(&t, "pickup_datetime")[0],
        Value::Timestamp(parse_timestamp("2013-08-01 08:14:37").unwrap())
    );
    // The last row:
    // 9957,2,2013-09-04 13:23:28,...,-73.955696105957031,...,6,...,020901,...
    let last = |name: &str| column(&t, name)[9999].clone();
    assert_eq!(last("trip_id"), Value::Int(9957));
    assert_eq!(
        last("pickup_datetime"),
        Value::Timestamp(parse_timestamp("2013-09-04 13:23:28").unwrap())
    );
    // The file's text, parsed as Rust parses floats (correctly rounded).
    let lon: f64 = "-73.955696105957031".parse().unwrap();
    assert_eq!(last("pickup_longitude"), Value::Float(lon));
    assert_eq!(last("total_amount"), Value::Float(6.0));
    assert_eq!(last("pickup_ct2010"), Value::str("020901"));
    assert_eq!(last("pickup_ntaname"), Value::str("Morningside Heights"));
    assert_eq!(t.source_bytes, 4_038_432);
}
