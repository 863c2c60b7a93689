//! Loader tests on small in-memory inputs.

use std::io::Write;
use std::path::Path;

use flate2::Compression;
use flate2::write::GzEncoder;

use super::*;
use crate::types::{DataType, Value, parse_timestamp};

fn opts(partition_rows: usize) -> LoadOptions {
    LoadOptions {
        partition_rows,
        ..LoadOptions::default()
    }
}

fn load(text: &[u8], options: &LoadOptions) -> Result<Table> {
    load_csv_bytes(text.to_vec(), Path::new("test.csv"), "t", options)
}

fn load_ok(text: &str) -> Table {
    load(text.as_bytes(), &LoadOptions::default()).unwrap()
}

/// Every row of a table, decoded.
fn rows(t: &Table) -> Vec<Vec<Value>> {
    let mut out = Vec::new();
    for p in &t.partitions {
        for i in 0..p.rows {
            out.push(p.columns.iter().map(|c| c.value(i)).collect());
        }
    }
    out
}

/// Column `name`, decoded.
fn column(t: &Table, name: &str) -> Vec<Value> {
    let c = t.column_index(name).unwrap();
    rows(t).into_iter().map(|r| r[c].clone()).collect()
}

fn dtype(t: &Table, name: &str) -> DataType {
    t.fields[t.column_index(name).unwrap()].dtype
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut e = GzEncoder::new(Vec::new(), Compression::fast());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

/// The (line, column, message) of a CSV error.
fn csv_err(text: &[u8], options: &LoadOptions) -> (u64, u64, String) {
    match load(text, options) {
        Err(Error::Csv {
            line,
            column,
            message,
            path,
        }) => {
            assert_eq!(path, Path::new("test.csv"));
            (line, column, message)
        }
        other => panic!("expected a csv error, got {other:?}"),
    }
}

fn int(v: i64) -> Value {
    Value::Int(v)
}

fn s(v: &str) -> Value {
    Value::str(v)
}

fn ts(v: &str) -> Value {
    Value::Timestamp(parse_timestamp(v).unwrap())
}

#[test]
fn inference_per_column() {
    // One column per rule; each case lists its values and expected type.
    let cases: Vec<(&str, &[&str], DataType)> = vec![
        ("zip", &["038302", "12345"], DataType::Str),
        ("negzero", &["-0", "5"], DataType::Int),
        ("intfloat", &["1", "2.5"], DataType::Float),
        ("flag", &["0", "1", "N", "Y"], DataType::Str),
        ("empty", &["", "", "", ""], DataType::Null),
        (
            "ts",
            &[
                "2013-01-01",
                "2013-01-01 10:20:30",
                "2013-01-01T10:20:30.5Z",
            ],
            DataType::Timestamp,
        ),
        (
            "big",
            &["9223372036854775807", "9223372036854775808"],
            DataType::Float,
        ),
        ("space", &["1", " 2"], DataType::Str),
        ("plus", &["+5", "6"], DataType::Str),
        ("nan", &["1.5", "nan", "-inf", "Infinity"], DataType::Float),
        ("plusinf", &["1.5", "+inf"], DataType::Str),
        (
            "floats",
            &["3e-4", ".5", "-124.0", "0.1234e30"],
            DataType::Float,
        ),
        ("mixts", &["2013-01-01", "7"], DataType::Str),
    ];
    let n = cases.iter().map(|c| c.1.len()).max().unwrap();
    let mut text = cases.iter().map(|c| c.0).collect::<Vec<_>>().join(",");
    text.push('\n');
    for r in 0..n {
        let row: Vec<&str> = cases.iter().map(|c| *c.1.get(r).unwrap_or(&"")).collect();
        text.push_str(&row.join(","));
        text.push('\n');
    }
    for partition_rows in [1, 2, 1000] {
        let t = load(text.as_bytes(), &opts(partition_rows)).unwrap();
        for (name, values, expected) in &cases {
            assert_eq!(dtype(&t, name), *expected, "column {name}");
            if *expected == DataType::Str {
                let got = column(&t, name);
                for (g, v) in got.iter().zip(values.iter()) {
                    let want = if v.is_empty() { Value::Null } else { s(v) };
                    assert_eq!(*g, want, "column {name}");
                }
            }
        }
        assert_eq!(column(&t, "negzero")[..2], [int(0), int(5)]);
        assert_eq!(
            column(&t, "intfloat")[..2],
            [Value::Float(1.0), Value::Float(2.5)]
        );
        assert_eq!(column(&t, "empty"), vec![Value::Null; 4]);
        assert_eq!(
            column(&t, "big")[..2],
            [
                Value::Float(9223372036854775807.0),
                Value::Float(9223372036854775808.0)
            ]
        );
        let nan = column(&t, "nan");
        assert_eq!(nan[0], Value::Float(1.5));
        assert!(matches!(nan[1], Value::Float(f) if f.is_nan()));
        assert_eq!(
            nan[2..],
            [Value::Float(f64::NEG_INFINITY), Value::Float(f64::INFINITY)]
        );
        assert_eq!(
            column(&t, "ts")[..3],
            [
                ts("2013-01-01 00:00:00"),
                ts("2013-01-01 10:20:30"),
                ts("2013-01-01 10:20:30.5")
            ]
        );
        assert_eq!(
            column(&t, "floats"),
            vec![
                Value::Float(3e-4),
                Value::Float(0.5),
                Value::Float(-124.0),
                Value::Float(0.1234e30)
            ]
        );
    }
}

/// PostgreSQL COPY's rule: an unquoted empty field is NULL, a quoted one
/// (`""`) the empty string, in every position and every kind of column. A
/// `""` in a column of integers makes it a string column, as DuckDB reads
/// it with `allow_quoted_nulls = false` (checked with DuckDB 1.x: a column
/// of `""`, `3`, `4` is VARCHAR there).
#[test]
fn an_unquoted_empty_field_is_null_and_a_quoted_one_is_empty() {
    // Rows 3 and 5 start with a quote (the whole record goes through
    // csv-core); row 4 switches to csv-core at its third field.
    let text = "s1,n,m,s2\na,1,1,x\n,2,,y\n\"\",3,4,\"\"\nb,,\"\",\n\"c\",5,6,\"z\"\n";
    let null = Value::Null;
    for size in [1, 2, 3, 100] {
        for bytes in [text.as_bytes().to_vec(), gzip(text.as_bytes())] {
            let t = load(&bytes, &opts(size)).unwrap();
            assert_eq!(dtype(&t, "n"), DataType::Int);
            assert_eq!(dtype(&t, "m"), DataType::Str);
            assert_eq!(
                rows(&t),
                vec![
                    vec![s("a"), int(1), s("1"), s("x")],
                    vec![null.clone(), int(2), null.clone(), s("y")],
                    vec![s(""), int(3), s("4"), s("")],
                    vec![s("b"), null.clone(), s(""), null.clone()],
                    vec![s("c"), int(5), s("6"), s("z")],
                ],
                "size {size}"
            );
        }
    }
    // A column that is only empty strings, or empty strings and NULLs.
    let t = load_ok("a,b\n\"\",\n\"\",\"\"\n");
    assert_eq!(dtype(&t, "a"), DataType::Str);
    assert_eq!(column(&t, "a"), vec![s(""), s("")]);
    assert_eq!(column(&t, "b"), vec![null.clone(), s("")]);
    assert_eq!(t.partitions[0].columns[1].zone.null_count, 1);
    // One column: a quoted empty line is a value, a blank line no record.
    let t = load_ok("a\n\"\"\n\nx\n");
    assert_eq!(column(&t, "a"), vec![s(""), s("x")]);
    // Many distinct texts (past a dictionary) keep their NULLs apart too.
    let mut text = String::from("k,v\n");
    let mut expected = Vec::new();
    for i in 0..200_000 {
        match i % 3 {
            0 => {
                text.push_str(&format!("{i},\n"));
                expected.push(null.clone());
            }
            1 => {
                text.push_str(&format!("{i},\"\"\n"));
                expected.push(s(""));
            }
            _ => {
                text.push_str(&format!("{i},t{i}\n"));
                expected.push(s(&format!("t{i}")));
            }
        }
    }
    let t = load(text.as_bytes(), &opts(200_000)).unwrap();
    assert_eq!(column(&t, "v"), expected);
}

#[test]
fn quoting_crlf_and_bom() {
    let text = "\u{feff}id,text\r\n1,\"a, \"\"b\"\"\r\nc\"\r\n2,plain\r\n\r\n3,\"\"\"\"\r\n";
    let t = load_ok(text);
    assert_eq!(t.fields[0].name, "id");
    assert_eq!(column(&t, "id"), vec![int(1), int(2), int(3)]);
    assert_eq!(
        column(&t, "text"),
        vec![s("a, \"b\"\r\nc"), s("plain"), s("\"")]
    );
    assert_eq!(t.source_bytes, text.len() as u64);
}

#[test]
fn bom_like_bytes_at_a_partition_start_are_kept() {
    let text = "a\nx\n\u{feff}y\n";
    let t = load(text.as_bytes(), &opts(1)).unwrap();
    assert_eq!(column(&t, "a"), vec![s("x"), s("\u{feff}y")]);
}

#[test]
fn partitioning_keeps_values_and_row_numbers() {
    let mut text = String::from("id,x,name,when,f\n");
    for i in 0..50 {
        let x = if i % 4 == 0 {
            String::new()
        } else {
            (i * 7 % 13).to_string()
        };
        let name = ["a", "bb", "\"c,c\"", ""][i % 4];
        text.push_str(&format!(
            "{i},{x},{name},2013-01-{:02} 00:00:{:02},{}\n",
            i % 28 + 1,
            i % 60,
            i as f64 / 4.0
        ));
    }
    let reference = rows(&load(text.as_bytes(), &opts(DEFAULT_PARTITION_ROWS)).unwrap());
    assert_eq!(reference.len(), 50);
    assert_eq!(reference[5][2], s("bb"));
    assert_eq!(reference[6][2], s("c,c"));
    assert_eq!(reference[4][1], Value::Null);
    for size in [1, 3, 7, DEFAULT_PARTITION_ROWS] {
        let t = load(text.as_bytes(), &opts(size)).unwrap();
        assert_eq!(t.partitions.len(), 50usize.div_ceil(size), "size {size}");
        for (k, p) in t.partitions.iter().enumerate() {
            assert_eq!(p.first_row, k * size);
            let expected = size.min(50 - k * size);
            assert_eq!(p.rows, expected);
            assert!(p.columns.iter().all(|c| c.len == expected));
        }
        let types: Vec<DataType> = t.fields.iter().map(|f| f.dtype).collect();
        assert_eq!(
            types,
            [
                DataType::Int,
                DataType::Int,
                DataType::Str,
                DataType::Timestamp,
                DataType::Float
            ]
        );
        assert_eq!(rows(&t), reference, "size {size}");
    }
}

#[test]
fn zero_partition_rows_is_one() {
    let t = load(b"a\n1\n2\n", &opts(0)).unwrap();
    assert_eq!(t.partitions.len(), 2);
}

#[test]
fn gzip_is_detected_by_magic_bytes() {
    let text = b"a,b\n1,x\n2,y\n";
    let plain = load(text, &LoadOptions::default()).unwrap();
    let gz = load(&gzip(text), &LoadOptions::default()).unwrap();
    assert_eq!(rows(&gz), rows(&plain));
    assert_eq!(gz.source_bytes, text.len() as u64);

    // Two concatenated members are one stream.
    let mut two = gzip(b"a,b\n1,x\n");
    two.extend(gzip(b"2,y\n"));
    assert_eq!(
        rows(&load(&two, &LoadOptions::default()).unwrap()),
        rows(&plain)
    );

    // A real file whose name says .csv.
    let dir = std::env::temp_dir().join(format!("katydid-ingest-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("looks-plain.csv");
    std::fs::write(&path, gzip(text)).unwrap();
    let from_file = load_csv(&path, "t", &LoadOptions::default());
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(rows(&from_file.unwrap()), rows(&plain));
}

#[test]
fn corrupt_gzip_is_an_io_error_naming_the_file() {
    let mut gz = gzip("a,b\n1,2\n".repeat(1000).as_bytes());
    let truncated = gz[..gz.len() / 2].to_vec();
    let mid = gz.len() / 2;
    gz[mid] ^= 0xff;
    gz[mid + 1] ^= 0x55;
    for bad in [truncated, gz] {
        match load_csv_bytes(bad, Path::new("trips.csv.gz"), "t", &LoadOptions::default()) {
            Err(e @ Error::Io { .. }) => {
                let msg = e.to_string();
                assert!(
                    msg.starts_with("trips.csv.gz: corrupt gzip stream"),
                    "{msg}"
                );
            }
            other => panic!("expected an io error, got {other:?}"),
        }
    }
    let missing = load_csv(
        Path::new("/nonexistent/x.csv"),
        "t",
        &LoadOptions::default(),
    );
    assert!(matches!(missing, Err(Error::Io { .. })));
}

#[test]
fn wrong_field_counts_name_line_and_field() {
    let (line, col, msg) = csv_err(b"a,b,c\n1,2,3\n4,5\n", &LoadOptions::default());
    assert_eq!(
        (line, col, msg.as_str()),
        (3, 3, "expected 3 fields, found 2")
    );
    let (line, col, msg) = csv_err(b"a,b,c\n1,2,3,4,5\n", &LoadOptions::default());
    assert_eq!(
        (line, col, msg.as_str()),
        (2, 4, "expected 3 fields, found 5")
    );
    // Newlines inside quotes and blank lines advance the line count, also
    // in later partitions.
    let text = b"a,b\n\"x\ny\nz\",1\n\n2,3\n4\n";
    for size in [1, 2, 100] {
        let (line, col, msg) = csv_err(text, &opts(size));
        assert_eq!(
            (line, col, msg.as_str()),
            (7, 2, "expected 2 fields, found 1")
        );
    }
    // The first bad record in file order wins, whichever chunk is parsed
    // first.
    let mut text = String::from("a,b\n");
    for _ in 0..100 {
        text.push_str("1,2\n");
    }
    text.push_str("3\n");
    for _ in 0..100 {
        text.push_str("1,2\n");
    }
    text.push_str("1,2,3\n");
    let (line, col, _) = csv_err(text.as_bytes(), &opts(7));
    assert_eq!((line, col), (102, 2));
}

#[test]
fn unterminated_quote_names_the_opening_line() {
    let (line, col, msg) = csv_err(b"a,b\n1,2\n3,\"open\n\nmore\n", &LoadOptions::default());
    assert_eq!(
        (line, col, msg.as_str()),
        (3, 2, "unterminated quoted field")
    );
    let (line, col, msg) = csv_err(b"a,\"b\n", &LoadOptions::default());
    assert_eq!(
        (line, col, msg.as_str()),
        (1, 2, "unterminated quoted field")
    );
    // An earlier bad record is reported first.
    let (line, _, msg) = csv_err(b"a,b\n1\n3,\"open\n", &opts(1));
    assert_eq!((line, msg.as_str()), (2, "expected 2 fields, found 1"));
}

#[test]
fn invalid_utf8_names_line_and_field() {
    let (line, col, msg) = csv_err(b"a,b,c\n1,2,3\n4,\"x\ny\",z\xff\n", &LoadOptions::default());
    assert_eq!((line, col, msg.as_str()), (3, 3, "invalid utf-8"));
    let (line, col, msg) = csv_err(b"a,b,c\n1,2,3\n4,\"x\ny\",z\xff\n", &opts(1));
    assert_eq!((line, col, msg.as_str()), (3, 3, "invalid utf-8"));
    let (line, col, msg) = csv_err(b"a,\xc3(\n1,2\n", &LoadOptions::default());
    assert_eq!((line, col, msg.as_str()), (1, 2, "invalid utf-8"));
    // In a column that is text from its first value, and in the earliest
    // row when several columns are bad.
    let (line, col, msg) = csv_err(b"a,b\nx,1\nx,\xff\ny\xff,2\n", &LoadOptions::default());
    assert_eq!((line, col, msg.as_str()), (3, 2, "invalid utf-8"));
    // Before a later record with the wrong width.
    let (line, col, msg) = csv_err(b"a,b\n\xff,1\n1\n", &LoadOptions::default());
    assert_eq!((line, col, msg.as_str()), (2, 1, "invalid utf-8"));
}

#[test]
fn long_records_and_late_strings() {
    let long = "x".repeat(10_000);
    let text = format!("a,b\n1,{long}\n2,\"{long}\"\"\"\n");
    let t = load_ok(&text);
    assert_eq!(column(&t, "b"), vec![s(&long), s(&format!("{long}\""))]);
    // A column numeric for a whole partition but text in another, or text
    // only after numbers within one partition, is read again as text.
    let text = "a,b,c\n1,0,\n2,1.5,\n3,2013-01-01,x\n4,N,\n";
    for size in [1, 2, 3, 100] {
        let t = load(text.as_bytes(), &opts(size)).unwrap();
        assert_eq!(dtype(&t, "b"), DataType::Str);
        assert_eq!(
            column(&t, "b"),
            vec![s("0"), s("1.5"), s("2013-01-01"), s("N")],
            "size {size}"
        );
        assert_eq!(
            column(&t, "c"),
            vec![Value::Null, Value::Null, s("x"), Value::Null]
        );
        assert_eq!(column(&t, "a"), vec![int(1), int(2), int(3), int(4)]);
    }
}

#[test]
fn empty_inputs() {
    for text in ["", "\n\n", "\r\n"] {
        let (line, col, msg) = csv_err(text.as_bytes(), &LoadOptions::default());
        assert_eq!((line, col, msg.as_str()), (1, 1, "empty file (no header)"));
        let no_header = LoadOptions {
            header: false,
            ..LoadOptions::default()
        };
        let (_, _, msg) = csv_err(text.as_bytes(), &no_header);
        assert_eq!(msg, "empty file (no records)");
        let named = LoadOptions {
            header: false,
            columns: Some(vec!["x".into()]),
            ..LoadOptions::default()
        };
        let t = load(text.as_bytes(), &named).unwrap();
        assert_eq!((t.rows(), t.fields.len()), (0, 1));
    }
    let t = load_ok("a,b\n");
    assert_eq!(t.rows(), 0);
    assert!(t.partitions.is_empty());
    assert_eq!(
        t.fields,
        vec![
            Field {
                name: "a".into(),
                dtype: DataType::Null,
                note: None,
            },
            Field {
                name: "b".into(),
                dtype: DataType::Null,
                note: None,
            }
        ]
    );
}

#[test]
fn header_names_are_made_unique() {
    let t = load_ok("a,,a,a_2,  ,column_2,a\n1,2,3,4,5,6,7\n");
    let names: Vec<&str> = t.fields.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "a",
            "column_2_2",
            "a_3",
            "a_2",
            "column_5",
            "column_2",
            "a_4"
        ]
    );
}

#[test]
fn column_names_option() {
    let no_header = LoadOptions {
        header: false,
        columns: Some(vec!["x".into(), "y".into()]),
        ..LoadOptions::default()
    };
    let t = load(b"1,2\n3,4\n", &no_header).unwrap();
    assert_eq!(column(&t, "y"), vec![int(2), int(4)]);
    let (line, col, msg) = csv_err(b"1,2,3\n", &no_header);
    assert_eq!(
        (line, col, msg.as_str()),
        (1, 3, "expected 2 fields, found 3")
    );

    let replace = LoadOptions {
        columns: Some(vec!["x".into(), "y".into()]),
        ..LoadOptions::default()
    };
    let t = load(b"a,b\n1,2\n", &replace).unwrap();
    assert_eq!(column(&t, "x"), vec![int(1)]);
    let (line, _, msg) = csv_err(b"a,b,c\n1,2,3\n", &replace);
    assert_eq!(
        (line, msg.as_str()),
        (1, "2 column names given but the header has 3 fields")
    );

    let generated = LoadOptions {
        header: false,
        ..LoadOptions::default()
    };
    let t = load(b"1,x\n2,y\n", &generated).unwrap();
    let names: Vec<&str> = t.fields.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["column_1", "column_2"]);
    assert_eq!(t.rows(), 2);
}

#[test]
fn runs_on_the_current_pool() {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(3)
        .build()
        .unwrap();
    let mut text = String::from("a,b\n");
    for i in 0..1000 {
        text.push_str(&format!("{i},{}\n", i % 3));
    }
    let t = pool.install(|| load(text.as_bytes(), &opts(10))).unwrap();
    assert_eq!(t.partitions.len(), 100);
    assert_eq!(column(&t, "a")[999], int(999));
}

#[test]
fn strings_beyond_a_dictionary_per_partition() {
    // More distinct strings in one partition than a dictionary may hold:
    // the interning while parsing gives way to plain text, with NULLs, a
    // quoted field and the smallest and largest values late.
    let n = crate::store::MAX_DICTIONARY_LEN + 100;
    let mut text = String::from("k,s\n");
    let (quoted, last) = (n - 10, n - 9);
    for i in 0..n {
        if i == 5 {
            text.push_str("5,\n");
        } else if i == quoted {
            text.push_str(&format!("{i},\"a,\"\"quoted\"\"\"\n"));
        } else if i == last {
            text.push_str(&format!("{i},zzz\n"));
        } else {
            text.push_str(&format!("{i},v{i:06}\n"));
        }
    }
    let t = load(text.as_bytes(), &opts(n)).unwrap();
    assert_eq!(t.partitions.len(), 1);
    let c = &t.partitions[0].columns[1];
    // Not a dictionary: packed, or FSST when that is smaller.
    let name = c.encoding_name();
    assert!(
        ["packed+nulls", "fsst+nulls"].contains(&name.as_str()),
        "{name}"
    );
    assert_eq!(c.zone.min, s("a,\"quoted\""));
    assert_eq!(c.zone.max, s("zzz"));
    assert_eq!(c.value(5), Value::Null);
    assert_eq!(c.value(6), s("v000006"));
    assert_eq!(c.value(quoted), s("a,\"quoted\""));
    assert_eq!(c.value(last), s("zzz"));
    assert_eq!(c.value(n - 1), s(&format!("v{:06}", n - 1)));
}

#[test]
fn interned_strings_keep_values_across_partitions() {
    let mut text = String::from("a,b\n");
    let words = ["pear", "apple", "", "fig", "\"q,x\"", "apple"];
    for i in 0..500 {
        text.push_str(&format!("{i},{}\n", words[i % words.len()]));
    }
    for size in [1, 7, 100, 1000] {
        let t = load(text.as_bytes(), &opts(size)).unwrap();
        let got = column(&t, "b");
        for (i, v) in got.iter().enumerate() {
            let expected = match words[i % words.len()] {
                "" => Value::Null,
                "\"q,x\"" => s("q,x"),
                w => s(w),
            };
            assert_eq!(v, &expected, "size {size}, row {i}");
        }
    }
}

#[test]
fn late_strings_are_read_again_from_gzip_and_from_files() {
    // Column b is numeric in the first partitions and text in a later one:
    // the earlier partitions' text is read again from the input.
    let mut text = String::from("a,b\n");
    for i in 0..50 {
        text.push_str(&format!("{i},{}\n", i * 3));
    }
    text.push_str("50,x\n");
    let expected: Vec<Value> = (0..50)
        .map(|i| s(&(i * 3).to_string()))
        .chain([s("x")])
        .collect();
    let dir = std::env::temp_dir().join(format!("katydid-reread-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("late.csv");
    for gz in [false, true] {
        let bytes = if gz {
            gzip(text.as_bytes())
        } else {
            text.clone().into_bytes()
        };
        for size in [1, 7, 50] {
            let t = load(&bytes, &opts(size)).unwrap();
            assert_eq!(column(&t, "b"), expected, "gzip {gz}, size {size}");
            std::fs::write(&path, &bytes).unwrap();
            let t = load_csv(&path, "t", &opts(size)).unwrap();
            assert_eq!(column(&t, "b"), expected, "file, gzip {gz}, size {size}");
            assert_eq!(t.source_bytes, text.len() as u64);
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn invalid_utf8_is_found_in_every_kind_of_column() {
    let cases: [(&[u8], (u64, u64)); 6] = [
        (b"a,b\n1,2013-01-01\n2,2013-01-02\xff\n", (3, 2)),
        (b"a,b\n1,1.5\n2,2\xff\n", (3, 2)),
        (b"a,b\n1,x\n\xff,y\n\xff,y\n", (3, 1)),
        (b"a,b\n1,x\n2,\"q\xff\"\n", (3, 2)),
        (b"a,b\n1,x\n2,\xc3\n3,\xc3\n", (3, 2)),
        (b"a\n\xe2\x82\n", (2, 1)),
    ];
    for (text, expected) in cases {
        for size in [1, 2, 100] {
            let (line, col, msg) = csv_err(text, &opts(size));
            assert_eq!(
                (line, col, msg.as_str()),
                (expected.0, expected.1, "invalid utf-8")
            );
        }
    }
    // Valid multi-byte text in every position loads.
    let t = load_ok("a,b\n€,1\n\"ü,é\",2\n");
    assert_eq!(column(&t, "a"), vec![s("€"), s("ü,é")]);
}

fn limited(max_line_bytes: usize, partition_rows: usize) -> LoadOptions {
    LoadOptions {
        max_line_bytes,
        partition_rows,
        ..LoadOptions::default()
    }
}

#[test]
fn a_record_longer_than_the_limit_names_line_field_and_limit() {
    let message = "record longer than 16 B (raise --max-line-size)";
    // (text, line, field) for a limit of 16 bytes: a plain line, a quoted
    // record, a quoted field running over lines, the header, CRLF lines.
    let long = "x".repeat(40);
    let cases: Vec<(String, u64, u64)> = vec![
        (format!("a,b\n1,2\n3,{long}\n4,5\n"), 3, 2),
        (format!("a,b\n1,2\n\"3\",\"{long}\"\n"), 3, 2),
        (format!("a,b\n1,\"x\n{long}\ny\"\n"), 2, 2),
        (format!("a,{long}\n1,2\n"), 1, 2),
        (format!("a,b\r\n1,2\r\n\r\n{long},1\r\n"), 4, 1),
        (format!("a,b\n1,2\n{long}"), 3, 1),
    ];
    for (text, line, field) in &cases {
        for size in [1, 100] {
            let (l, c, m) = csv_err(text.as_bytes(), &limited(16, size));
            assert_eq!((l, c, m.as_str()), (*line, *field, message), "{text:?}");
            let (l, c, m) = csv_err(&gzip(text.as_bytes()), &limited(16, size));
            assert_eq!((l, c, m.as_str()), (*line, *field, message), "{text:?}");
        }
        // Under a limit that fits, the same text loads (or fails otherwise).
        let fits = load(text.as_bytes(), &limited(4096, 100));
        assert!(
            !matches!(&fits, Err(Error::Csv { message: m, .. }) if m.contains("longer")),
            "{fits:?}"
        );
    }
    // Exactly at the limit is fine, one byte more is not.
    let text = format!("a\n{}\n", "y".repeat(16));
    assert_eq!(load(text.as_bytes(), &limited(16, 10)).unwrap().rows(), 1);
    let text = format!("a\n{}\n", "y".repeat(17));
    assert_eq!(csv_err(text.as_bytes(), &limited(16, 10)).0, 2);
}

#[test]
fn an_earlier_bad_record_is_reported_before_a_later_long_one() {
    let text = format!("a,b\n1,2\n3\n{}\n", "z".repeat(100));
    let (line, _, message) = csv_err(text.as_bytes(), &limited(50, 1));
    assert_eq!((line, message.as_str()), (3, "expected 2 fields, found 1"));
}

#[test]
fn a_line_without_end_stops_after_the_limit() {
    // 8 MiB of one unterminated line, gzipped; the limit is hit after 64
    // KiB of it, long before the rest is inflated.
    let line = vec![b'q'; 8 << 20];
    let bytes = gzip(&line);
    let (l, c, m) = csv_err(&bytes, &limited(64 << 10, 100));
    assert_eq!(
        (l, c, m.as_str()),
        (1, 1, "record longer than 64.0 KiB (raise --max-line-size)")
    );
}

#[test]
fn many_blank_lines_load_without_a_record_limit_error() {
    // Blank lines belong to no record; 3 MiB of them at a span start are
    // dropped from the buffer as they are passed.
    let mut text = String::from("a\n1\n");
    text.push_str(&"\r\n".repeat(3 << 19));
    text.push_str("2\n");
    let t = load(text.as_bytes(), &limited(16, 1)).unwrap();
    assert_eq!(column(&t, "a"), vec![int(1), int(2)]);
}

/// The note of column `name`.
fn note(t: &Table, name: &str) -> Option<String> {
    t.fields[t.column_index(name).unwrap()].note.clone()
}

#[test]
fn a_column_widened_by_a_few_values_says_why() {
    // Regression (issue 8): one bad value in the last row turned `trip_id`
    // into a string column without a word.
    let mut text = String::from("trip_id,x\n");
    for i in 1..=2500 {
        text.push_str(&format!("{i},{}\n", i % 7));
    }
    text.push_str("2500000x,1\n");
    for size in [1, 100, 1000, 100_000] {
        for bytes in [text.as_bytes().to_vec(), gzip(text.as_bytes())] {
            let t = load(&bytes, &opts(size)).unwrap();
            assert_eq!(dtype(&t, "trip_id"), DataType::Str);
            assert_eq!(
                note(&t, "trip_id").as_deref(),
                Some("typed as string because of 1 value of 2,501 (line 2502: \"2500000x\")"),
                "size {size}"
            );
            assert_eq!(note(&t, "x"), None);
        }
    }
    // Timestamps with a few words; the first misfit is quoted, on a line
    // after a quoted line break, and long (shortened to 40 characters).
    let long = "n/a ".repeat(20);
    let mut text = String::from("when,k\n");
    for i in 0..30 {
        text.push_str(&format!("2013-01-{:02},\"a\nb\"\n", i % 28 + 1));
    }
    text.push_str(&format!("\"{long}\",x\n,x\n\"\",x\n"));
    for size in [1, 4, 1000] {
        let t = load(text.as_bytes(), &opts(size)).unwrap();
        assert_eq!(
            note(&t, "when").as_deref(),
            Some(
                "typed as string because of 2 values of 32 (line 62: \"n/a n/a n/a n/a n/a n/a n/a n/a n/a n/a…\")"
            ),
            "size {size}"
        );
    }
    // No note where many values disagree, or nothing was widened.
    let t = load_ok("flag,n,s\n0,1,a\n1,2,b\nN,3.5,c\nY,4,d\n");
    assert_eq!(note(&t, "flag"), None);
    assert_eq!(note(&t, "n"), None);
    assert_eq!(note(&t, "s"), None);
}

/// A value and what it is, by hand: the reference the inference is checked
/// against (as the text of a CSV field).
#[derive(Clone, Copy, PartialEq, Debug)]
enum Label {
    Null,
    Int,
    /// A number that makes a column float.
    Float,
    Timestamp,
    Text,
}

const POOL: &[(&str, Label)] = &[
    ("", Label::Null),
    ("12", Label::Int),
    ("-7", Label::Int),
    ("0", Label::Int),
    ("9223372036854775807", Label::Int),
    ("99999999999999999999", Label::Float),
    ("2.5", Label::Float),
    ("-1e3", Label::Float),
    ("nan", Label::Float),
    ("-Inf", Label::Float),
    ("1e400", Label::Float),
    ("2013-01-01", Label::Timestamp),
    ("2013-01-01 10:00:00", Label::Timestamp),
    ("2013-02-30", Label::Text),
    ("x", Label::Text),
    ("0012", Label::Text),
    ("+5", Label::Text),
    ("\"\"", Label::Text),
    ("\"a,b\"", Label::Text),
    ("N", Label::Text),
];

/// The field's text with its quotes removed.
fn unquoted(text: &str) -> &str {
    text.strip_prefix('"')
        .and_then(|t| t.strip_suffix('"'))
        .unwrap_or(text)
}

/// The type and note a column of these pool values must get, computed the
/// naive way.
fn naive_inference(values: &[usize]) -> (DataType, Option<String>) {
    let labels: Vec<Label> = values.iter().map(|&v| POOL[v].1).collect();
    let has = |l: Label| labels.contains(&l);
    let number = has(Label::Int) || has(Label::Float);
    let dtype = if has(Label::Text)
        || (number && has(Label::Timestamp))
        || labels.iter().all(|&l| l == Label::Null)
    {
        DataType::Str
    } else if has(Label::Float) {
        DataType::Float
    } else if has(Label::Int) {
        DataType::Int
    } else {
        DataType::Timestamp
    };
    if dtype != DataType::Str {
        return (dtype, None);
    }
    let present: Vec<(usize, usize)> = values
        .iter()
        .enumerate()
        .filter(|&(_, &v)| POOL[v].1 != Label::Null)
        .map(|(row, &v)| (row, v))
        .collect();
    let not_number: Vec<&(usize, usize)> = present
        .iter()
        .filter(|(_, v)| !matches!(POOL[*v].1, Label::Int | Label::Float))
        .collect();
    let not_timestamp: Vec<&(usize, usize)> = present
        .iter()
        .filter(|(_, v)| POOL[*v].1 != Label::Timestamp)
        .collect();
    let misfits = if not_timestamp.len() < not_number.len() {
        not_timestamp
    } else {
        not_number
    };
    if misfits.is_empty() || misfits.len() * 10 > present.len() {
        return (dtype, None);
    }
    let &&(row, v) = misfits.first().unwrap();
    let plural = if misfits.len() == 1 { "" } else { "s" };
    (
        dtype,
        Some(format!(
            "typed as string because of {} value{plural} of {} (line {}: \"{}\")",
            misfits.len(),
            present.len(),
            row + 2,
            unquoted(POOL[v].0)
        )),
    )
}

#[test]
fn inference_and_notes_agree_with_a_naive_reading() {
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = |n: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % n as u64) as usize
    };
    let rows = 60;
    let mut notes = 0;
    for round in 0..40 {
        // Columns of one kind of value with a few others at random places,
        // and columns of anything.
        let mut columns: Vec<Vec<usize>> = Vec::new();
        for c in 0..8 {
            let base: Vec<usize> = match c % 4 {
                0 => vec![1, 2, 3, 4],
                1 => vec![6, 7, 1],
                2 => vec![11, 12],
                _ => (0..POOL.len()).collect(),
            };
            let mut col: Vec<usize> = (0..rows).map(|_| base[next(base.len())]).collect();
            for _ in 0..next(5) {
                col[next(rows)] = next(POOL.len());
            }
            if next(3) == 0 {
                col[next(rows)] = 0;
            }
            columns.push(col);
        }
        let mut text = (0..columns.len())
            .map(|c| format!("c{c}"))
            .collect::<Vec<_>>()
            .join(",");
        text.push('\n');
        for r in 0..rows {
            let row: Vec<&str> = columns.iter().map(|col| POOL[col[r]].0).collect();
            text.push_str(&row.join(","));
            text.push('\n');
        }
        for size in [1, 7, 25, 1000] {
            let t = load(text.as_bytes(), &opts(size)).unwrap();
            for (c, col) in columns.iter().enumerate() {
                let name = format!("c{c}");
                let (dtype, note) = naive_inference(col);
                notes += usize::from(note.is_some() && size == 1);
                assert_eq!(
                    (t.fields[c].dtype, t.fields[c].note.clone()),
                    (dtype, note),
                    "round {round}, size {size}, column {name}: {:?}",
                    col.iter().map(|&v| POOL[v].0).collect::<Vec<_>>()
                );
            }
        }
    }
    // The rounds exercised notes, not only their absence.
    assert!(notes > 20, "{notes} notes");
}

fn named(name: &str, text: &[u8], options: &LoadOptions) -> Result<Table> {
    load_csv_bytes(text.to_vec(), Path::new(name), "t", options)
}

/// Regression (issue 9): a tab-separated file loaded as one column named
/// `id\tname\tval`, and a semicolon-separated one failed without a hint.
#[test]
fn the_delimiter_is_detected_from_the_first_records() {
    for (delimiter, text) in [
        ("tab", "id\tname\tval\n1\tx, y\t2.5\n2\t\"q\tr\"\t\n"),
        ("semicolon", "id;name;val\n1;x, y;2.5\n2;\"q;r\";\n"),
        ("pipe", "id|name|val\n1|x, y|2.5\n2|\"q|r\"|\n"),
    ] {
        let sep = match delimiter {
            "tab" => "\t",
            "semicolon" => ";",
            _ => "|",
        };
        for bytes in [text.as_bytes().to_vec(), gzip(text.as_bytes())] {
            for size in [1, 100] {
                let t = named("x.csv", &bytes, &opts(size)).unwrap();
                let names: Vec<&str> = t.fields.iter().map(|f| f.name.as_str()).collect();
                assert_eq!(names, ["id", "name", "val"], "{delimiter}");
                assert_eq!(column(&t, "id"), vec![int(1), int(2)]);
                assert_eq!(
                    column(&t, "name"),
                    vec![s("x, y"), s(&format!("q{sep}r"))],
                    "{delimiter}"
                );
                assert_eq!(column(&t, "val"), vec![Value::Float(2.5), Value::Null]);
            }
        }
    }
    // A file without any delimiter stays one column.
    let t = load_ok("name\nAlice\nBob Smith\n");
    assert_eq!(t.fields.len(), 1);
    assert_eq!(column(&t, "name"), vec![s("Alice"), s("Bob Smith")]);
    // A `.tsv` name means tab, whatever the sample looks like; a given
    // delimiter wins over both.
    let text = b"a,b\tc\n1,2\t3\n";
    let t = named("x.TSV", text, &opts(10)).unwrap();
    assert_eq!(t.fields[0].name, "a,b");
    let t = named("x.csv", text, &opts(10)).unwrap();
    assert_eq!(t.fields[0].name, "a");
    let comma_forced = LoadOptions {
        delimiter: Some(b'|'),
        ..LoadOptions::default()
    };
    let t = named("x.tsv", text, &comma_forced).unwrap();
    assert_eq!(t.fields.len(), 1);
}

#[test]
fn a_field_count_error_suggests_a_delimiter_that_fits() {
    let forced = LoadOptions {
        delimiter: Some(b','),
        ..LoadOptions::default()
    };
    let (line, col, msg) = csv_err(b"a;b;c\n1;2;3\n4,5;6;7\n", &forced);
    assert_eq!(
        (line, col, msg.as_str()),
        (
            3,
            2,
            "expected 1 fields, found 2 (the file looks ';'-separated: try --delimiter ';')"
        )
    );
    // A header written with commas over records with semicolons.
    let (line, col, msg) = csv_err(b"a,b,c\n1;2;3\n4;5;6\n", &LoadOptions::default());
    assert_eq!(
        (line, col, msg.as_str()),
        (
            2,
            2,
            "expected 3 fields, found 1 (the file looks ';'-separated: try --delimiter ';')"
        )
    );
    // No hint when no other delimiter fits.
    let (_, _, msg) = csv_err(b"a,b\n1,2\n3\n", &LoadOptions::default());
    assert_eq!(msg, "expected 2 fields, found 1");
}

#[test]
fn a_quote_other_than_double_quotes() {
    let single = LoadOptions {
        quote: b'\'',
        ..LoadOptions::default()
    };
    // `'` quotes (doubled inside), `"` is data; `''` is the empty string.
    let text = "a,b\n'x,y',\"q\"\n'it''s',''\n'multi\nline',\n";
    for size in [1, 100] {
        let t = load(
            text.as_bytes(),
            &LoadOptions {
                partition_rows: size,
                ..single.clone()
            },
        )
        .unwrap();
        assert_eq!(column(&t, "a"), vec![s("x,y"), s("it's"), s("multi\nline")]);
        assert_eq!(column(&t, "b"), vec![s("\"q\""), s(""), Value::Null]);
    }
    // With a detected delimiter too.
    let t = load(b"a;b\n'1;2';3\n", &single).unwrap();
    assert_eq!(rows(&t), vec![vec![s("1;2"), int(3)]]);
    // A delimiter or quote that cannot be one.
    for (delimiter, quote) in [(b'\n', b'"'), (b',', b','), (0xe9, b'"'), (b',', b'\r')] {
        let bad = LoadOptions {
            delimiter: Some(delimiter),
            quote,
            ..LoadOptions::default()
        };
        assert!(
            matches!(load(b"a\n1\n", &bad), Err(Error::NotSupported(_))),
            "{delimiter} {quote}"
        );
    }
}

#[test]
fn a_null_string_is_null_unless_quoted() {
    let na = |null: &str| LoadOptions {
        null_string: Some(null.to_string()),
        partition_rows: 2,
        ..LoadOptions::default()
    };
    let text = "n,s,f\n1,NA,2.5\nNA,\"NA\",NA\n3,,\"\"\n";
    let t = load(text.as_bytes(), &na("NA")).unwrap();
    assert_eq!(dtype(&t, "n"), DataType::Int);
    assert_eq!(column(&t, "n"), vec![int(1), Value::Null, int(3)]);
    assert_eq!(column(&t, "s"), vec![Value::Null, s("NA"), Value::Null]);
    // The quoted empty field is a string: f is a string column.
    assert_eq!(dtype(&t, "f"), DataType::Str);
    assert_eq!(column(&t, "f"), vec![s("2.5"), Value::Null, s("")]);
    // `\N`, as PostgreSQL writes NULL; other text stays text.
    let t = load(b"a\tb\n\\N\tx\n7\t\\N\n", &na("\\N")).unwrap();
    assert_eq!(column(&t, "a"), vec![Value::Null, int(7)]);
    assert_eq!(column(&t, "b"), vec![s("x"), Value::Null]);
    // Without the option NA is text.
    let t = load(text.as_bytes(), &opts(2)).unwrap();
    assert_eq!(dtype(&t, "n"), DataType::Str);
}

/// How a test source would be opened again (never, here: a pipe's).
type Reopen = fn() -> Result<Cursor<&'static [u8]>>;

/// The table-wide dictionary of column `c` when every partition shares
/// one.
fn table_dictionary(t: &Table, c: usize) -> Option<Arc<crate::store::Dictionary>> {
    use crate::store::ColumnData;
    let dict = |p: &Partition| match &p.columns[c].data {
        ColumnData::Dict { dict, .. } => Some(Arc::clone(dict)),
        _ => None,
    };
    let first = dict(t.partitions.first()?)?;
    t.partitions
        .iter()
        .all(|p| dict(p).is_some_and(|d| Arc::ptr_eq(&d, &first)))
        .then_some(first)
}

#[test]
fn table_dictionaries_built_during_the_load_match_those_built_after_it() {
    // 3,000 rows in partitions of 100. Column by column:
    // - `rep`: 60 strings with NULLs, a table-wide dictionary either way;
    // - `uniq`: a string per row, closed at the first partition;
    // - `late`: 40 strings, then a string per row from row 1,500 on, so
    //   it looks promising at first and is given back its codecs later;
    // - `mixed`: numbers until row 2,900, then text, so the spans before
    //   are encoded again as text and were never recoded;
    // - `runs`: one string per partition, a constant in each;
    // - `flag`: three strings and NULLs, a dictionary in each partition.
    let mut text = String::from("rep,uniq,late,mixed,runs,flag\n");
    for i in 0..3000usize {
        let rep = if i % 17 == 5 {
            String::new()
        } else {
            format!("name {:02}", (i * 7) % 60)
        };
        let late = if i < 1500 {
            format!("l{}", i % 40)
        } else {
            format!("late value {i}")
        };
        let mixed = if i < 2900 {
            (i % 50).to_string()
        } else {
            format!("m{}", i % 3)
        };
        let flag = ["yes", "no", "", "maybe"][(i * 13) % 4];
        text.push_str(&format!(
            "{rep},u{i:05},{late},{mixed},run {},{flag}\n",
            i / 100
        ));
    }
    let options = opts(100);
    // From bytes of known size and from gzip (whose text the load projects
    // from the bytes read so far), recoded during the load; from a source
    // of unknown size (a pipe), after it.
    let during = load(text.as_bytes(), &options).unwrap();
    let gzipped = load(&gzip(text.as_bytes()), &options).unwrap();
    let no_reopen: Option<&Reopen> = None;
    let after = load_from(
        Cursor::new(text.as_bytes()),
        no_reopen,
        0,
        Path::new("pipe"),
        "t",
        &options,
    )
    .unwrap()
    .table;
    assert_eq!(rows(&during), rows(&after));
    assert_eq!(rows(&gzipped), rows(&after));
    assert_eq!(during.partitions.len(), 30);
    for (c, name) in ["rep", "uniq", "late", "mixed", "runs", "flag"]
        .iter()
        .enumerate()
    {
        let pairs = during.partitions.iter().zip(&after.partitions);
        let gz_pairs = gzipped.partitions.iter().zip(&after.partitions);
        for (p, (d, a)) in pairs.chain(gz_pairs).enumerate() {
            let (d, a) = (&d.columns[c], &a.columns[c]);
            // The codes of NULL rows may differ: 0 during the load, and
            // whatever a partition's dictionary had after it, when every
            // partition's dictionary was the same.
            let at = format!("column {name}, partition {p}");
            assert_eq!(d.encoding_name(), a.encoding_name(), "{at}");
            assert_eq!(d.heap_bytes(), a.heap_bytes(), "{at}");
            assert_eq!(d.validity, a.validity, "{at}");
            assert_eq!(d.zone, a.zone, "{at}");
        }
    }
    let rep = table_dictionary(&during, 0).expect("rep has a table-wide dictionary");
    assert!(table_dictionary(&gzipped, 0).is_some());
    assert_eq!(rep.len(), 60);
    let flag = table_dictionary(&during, 5).expect("flag has a table-wide dictionary");
    assert_eq!(flag.len(), 3);
    let mixed = table_dictionary(&during, 3).expect("mixed has a table-wide dictionary");
    assert_eq!(mixed.len(), 53);
    for c in [1, 2, 4] {
        assert!(table_dictionary(&during, c).is_none(), "column {c}");
    }
    let expected: Vec<Value> = (0..3000usize)
        .map(|i| {
            if i % 17 == 5 {
                Value::Null
            } else {
                s(&format!("name {:02}", (i * 7) % 60))
            }
        })
        .collect();
    assert_eq!(column(&during, "rep"), expected);
}

/// A text of `rows` records that spans many pieces a partition: quoted
/// fields with line breaks and doubled quotes, NULLs, a nearly unique
/// string column (copied per row), a column that turns into text in a
/// late partition (read again whole) and a string column of numbers but
/// one (its note's line found in the piece that holds it).
fn many_pieces(rows: usize) -> String {
    let mut text = String::from("id,name,code,late,mostly\n");
    for i in 0..rows {
        let name = match i % 5 {
            0 => format!("\"line\nbreak {i}\""),
            1 => format!("\"say \"\"{i}\"\"\""),
            2 => String::new(),
            _ => format!("n{i}"),
        };
        let late = if i == rows - 3 {
            "late text".to_string()
        } else {
            (i * 7).to_string()
        };
        // NULL up to the misfit, which is deep in the first partition.
        let mostly = match i {
            ..9_000 => String::new(),
            9_000 => format!("x{i}"),
            _ => i.to_string(),
        };
        text.push_str(&format!("{i},{name},c{:06x},{late},{mostly}\n", i * 2_654_435_761 % 16_777_213));
    }
    text
}

#[test]
fn spans_read_in_pieces_load_as_spans_kept_whole() {
    let text = many_pieces(60_000);
    let options = opts(25_000);
    // From bytes and from a file the spans are read in pieces; from a
    // pipe (no reopening) they are kept whole.
    let pieces = load(text.as_bytes(), &options).unwrap();
    let no_reopen: Option<&Reopen> = None;
    let kept = load_from(Cursor::new(text.as_bytes()), no_reopen, 0, Path::new("pipe"), "t", &options)
        .unwrap()
        .table;
    let dir = std::env::temp_dir().join(format!("katydid-pieces-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("pieces.csv");
    std::fs::write(&path, &text).unwrap();
    let file = load_file(&path, "t", &options).unwrap();
    for t in [&pieces, &file.table] {
        assert_eq!(t.partitions.len(), 3);
        assert_eq!(rows(t), rows(&kept));
        let types: Vec<DataType> = t.fields.iter().map(|f| f.dtype).collect();
        let kept_types: Vec<DataType> = kept.fields.iter().map(|f| f.dtype).collect();
        assert_eq!(types, kept_types);
        let notes: Vec<_> = t.fields.iter().map(|f| f.note.clone()).collect();
        let kept_notes: Vec<_> = kept.fields.iter().map(|f| f.note.clone()).collect();
        assert_eq!(notes, kept_notes);
    }
    assert_eq!(dtype(&kept, "late"), DataType::Str);
    assert_eq!(column(&kept, "name")[0], s("line\nbreak 0"));
    assert_eq!(column(&kept, "name")[1], s("say \"1\""));
    assert_eq!(column(&kept, "name")[2], Value::Null);
    // The misfit is record 9,001, on the line after 9,000 records of
    // which 1,800 hold a line break, and the header.
    let note = file.table.fields[4].note.clone().unwrap_or_default();
    assert_eq!(
        note,
        "typed as string because of 1 value of 51,000 (line 10802: \"x9000\")"
    );

    // A bad record deep in the last partition names the file, its line
    // and field, as from a pipe.
    let mut bad = text.clone();
    bad.push_str("60000,n,c0,1\n");
    std::fs::write(&path, &bad).unwrap();
    let Err(Error::Csv { path: at, line, column, message }) = load_file(&path, "t", &options) else {
        panic!("a bad record loads");
    };
    assert_eq!(at, path);
    assert_eq!((line, column), (60_000 + 12_000 + 2, 5), "{message}");
    let piped = load_from(Cursor::new(bad.as_bytes()), no_reopen, 0, Path::new("pipe"), "t", &options);
    let Err(Error::Csv { line: piped_line, column: piped_column, .. }) = piped else {
        panic!("a bad record loads from a pipe");
    };
    assert_eq!((piped_line, piped_column), (line, column));
    std::fs::remove_dir_all(&dir).unwrap();
}
