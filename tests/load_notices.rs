//! What a load tells the user about the types it chose, through the
//! public API: [`LoadStats::notices`] and `.schema`'s column notes.

use std::path::Path;

use katydid::{DataType, Database, DatabaseOptions, LoadOptions, Value};

fn db() -> Database {
    Database::new(DatabaseOptions {
        threads: 2,
        memory_limit: None,
    })
    .unwrap()
}

/// Regression (issue 8): one bad value in the last row made `trip_id` a
/// string column, and the user only found out at query time.
#[test]
fn one_bad_value_gives_a_notice_kept_for_the_schema() {
    let mut text = String::from("trip_id,fare\n");
    for i in 1..=10_000 {
        text.push_str(&format!("{i},{}.5\n", i % 30));
    }
    text.push_str("2500000x,3.5\n");
    let mut db = db();
    let options = LoadOptions {
        partition_rows: 1000,
        ..LoadOptions::default()
    };
    let stats = db
        .load_csv_bytes(text.into_bytes(), Path::new("trips.csv"), "trips", &options)
        .unwrap();
    let expected = "typed as string because of 1 value of 10,001 (line 10002: \"2500000x\")";
    assert_eq!(stats.notices, vec![format!("column trip_id: {expected}")]);
    let info = db.table_info("trips").unwrap();
    assert_eq!(info.columns[0].dtype, DataType::Str);
    assert_eq!(info.columns[0].note.as_deref(), Some(expected));
    assert_eq!(info.columns[1].note, None);
}

#[test]
fn nan_inf_and_huge_integers_are_floats() {
    let mut db = db();
    let text = "x,big\n1.5,1\nnan,99999999999999999999\n-inf,2\nInfinity,3\n";
    let stats = db
        .load_csv_bytes(
            text.as_bytes().to_vec(),
            Path::new("f.csv"),
            "f",
            &LoadOptions::default(),
        )
        .unwrap();
    assert!(stats.notices.is_empty(), "{:?}", stats.notices);
    let info = db.table_info("f").unwrap();
    assert_eq!(info.columns[0].dtype, DataType::Float);
    assert_eq!(info.columns[1].dtype, DataType::Float);
    let r = db.query("SELECT count(*) FROM f WHERE x < -1e308").unwrap();
    assert_eq!(r.rows, vec![vec![Value::Int(1)]]);
    let r = db.query("SELECT max(big) FROM f").unwrap();
    assert_eq!(r.rows, vec![vec![Value::Float(1e20)]]);
}
