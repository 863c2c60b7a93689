//! Statements end to end through `Database::query` where Rust is needed:
//! how extreme LIMIT and OFFSET plan, generated tables that reach the
//! grouping paths, DESCRIBE's encodings and memory, result column names,
//! and files queried as tables as they change, get cached and meet the
//! memory limit. Statements' answers and errors on small tables are in
//! `tests/slt/statements/`.

mod common;

use std::path::Path;
use std::sync::Arc;

use katydid::plan::plan_select;
use katydid::sql::ast::Statement;
use katydid::sql::parse;
use katydid::types::{TimestampFormat, parse_timestamp};
use katydid::{Database, DatabaseOptions, LoadOptions, Value};

fn database(csv: &str, partition_rows: usize) -> Database {
    database_on(2, csv, partition_rows)
}

/// `database` on a pool of `threads` threads.
fn database_on(threads: usize, csv: &str, partition_rows: usize) -> Database {
    common::csv_database(csv.as_bytes(), "t", threads, partition_rows)
}

const NUMBERS: &str = "a,x\n3,2.5\n1,3.5\n2,-2.5\n5,-3.5\n4,0.5\n";

/// How they run is in `tests/slt/statements/limits.slt`.
#[test]
fn limit_and_offset_up_to_the_largest_integers_parse_and_plan() {
    let db = database(NUMBERS, 2);
    let cases = [
        (
            "SELECT a FROM t ORDER BY a LIMIT 9223372036854775807",
            Some(i64::MAX),
            0,
            "TopN (n = 9223372036854775807)",
        ),
        (
            "SELECT a FROM t ORDER BY a LIMIT 10 OFFSET 92233720775807",
            Some(10),
            92_233_720_775_807,
            "TopN (n = 92233720775817)",
        ),
        (
            "SELECT a FROM t ORDER BY a LIMIT 9223372036854775807 OFFSET 18446744073709551615",
            Some(i64::MAX),
            u64::MAX,
            "TopN (n = 18446744073709551615)",
        ),
        (
            "SELECT a, count(*) FROM t GROUP BY a ORDER BY 2 LIMIT 9223372036854775807 OFFSET 9223372036854775807",
            Some(i64::MAX),
            i64::MAX as u64,
            "Limit: 9223372036854775807 offset 9223372036854775807",
        ),
        (
            "SELECT a FROM t LIMIT -9223372036854775808",
            Some(i64::MIN),
            0,
            "last 9223372036854775808 rows",
        ),
    ];
    for (sql, limit, offset, shown) in cases {
        let Statement::Select(select) = parse(sql).unwrap_or_else(|e| panic!("{sql}: {e}")) else {
            panic!("{sql}: not a SELECT");
        };
        let plan = plan_select(&select, sql, &db).unwrap_or_else(|e| panic!("{sql}: {e}"));
        assert_eq!((plan.limit, plan.offset), (limit, offset), "{sql}");
        assert!(
            plan.describe().contains(shown),
            "{sql}: {}",
            plan.describe()
        );
    }
}

/// Aggregate arguments are evaluated a few thousand rows at a time: sums
/// over a 20,000-row partition, whole and through a selection, with and
/// without groups, equal the sums computed here, and an error at a row of a
/// late batch still fails the query.
#[test]
fn aggregates_over_a_partition_larger_than_a_batch() {
    let n: i64 = 20_000;
    let mut csv = String::from("x,f,g\n");
    for i in 0..n {
        csv.push_str(&format!("{i},{}.25,{}\n", i % 1000, i % 7));
    }
    let db = database(&csv, n as usize);
    let one = |sql: &str| -> Vec<Value> {
        let rows = db.query(sql).unwrap_or_else(|e| panic!("{sql}: {e}")).rows;
        assert_eq!(rows.len(), 1, "{sql}");
        rows[0].clone()
    };
    let all: i64 = (0..n).map(|i| i * 3 + (i % 7)).sum();
    let floats: f64 = (0..n).map(|i| (i % 1000) as f64 + 0.25 - i as f64).sum();
    let row = one("SELECT sum(x * 3 + g), sum(f - x) FROM t");
    assert_eq!(row[0], Value::Int(all));
    match row[1] {
        Value::Float(s) => assert!((s - floats).abs() <= 1e-9 * floats.abs(), "{s} {floats}"),
        ref other => panic!("{other:?}"),
    }
    let picked: i64 = (0..n).filter(|i| i % 3 == 1).map(|i| i * 3 + (i % 7)).sum();
    assert_eq!(
        one("SELECT sum(x * 3 + g) FROM t WHERE x % 3 = 1")[0],
        Value::Int(picked)
    );
    let in_group_2: i64 = (0..n).filter(|i| i % 7 == 2).map(|i| i * 3 + 2).sum();
    let grouped = db
        .query("SELECT g, sum(x * 3 + g) FROM t GROUP BY g ORDER BY g")
        .unwrap()
        .rows;
    assert_eq!(grouped.len(), 7);
    assert_eq!(grouped[2], vec![Value::Int(2), Value::Int(in_group_2)]);
    // Division by zero at row 19,000 only.
    let err = db
        .query("SELECT sum(10 / (x - 19000)) FROM t")
        .expect_err("division by zero");
    assert!(err.to_string().contains("division by zero"), "{err}");
}

/// Outputs computed from group keys (`GROUP BY x, x - 1` keeps `x - 1` as
/// an output over the key `x`) are evaluated only for the top groups when
/// their range cannot overflow, but an overflow in any group still fails
/// the query, also in a group the LIMIT drops.
#[test]
fn key_arithmetic_fails_in_groups_the_limit_drops() {
    let mut csv = String::from("x\n");
    for i in 0..200 {
        // Group `i` has `i + 1` rows, so the largest x comes first.
        for _ in 0..=i {
            csv.push_str(&format!("{}\n", i * 1000));
        }
    }
    let db = database(&csv, 64);
    let q =
        "SELECT x, x - 1, x * 3, count(*) AS c FROM t GROUP BY x, x - 1 ORDER BY c DESC LIMIT 2";
    let rows = db.query(q).unwrap().rows;
    assert_eq!(
        rows,
        vec![
            vec![
                Value::Int(199_000),
                Value::Int(198_999),
                Value::Int(597_000),
                Value::Int(200)
            ],
            vec![
                Value::Int(198_000),
                Value::Int(197_999),
                Value::Int(594_000),
                Value::Int(199)
            ],
        ]
    );
    // One row at the bottom of i64: its group is last by count, yet
    // `x - 1` overflows there.
    csv.push_str(&format!("{}\n", i64::MIN));
    let db = database(&csv, 64);
    let err = db.query(q).expect_err("overflow in a dropped group");
    assert!(err.to_string().contains("overflow"), "{err}");
}

/// A GROUP BY on an FSST-compressed string column groups on the compressed
/// bytes: the counts per URL equal those counted here, NULL and the empty
/// string stay two groups, short strings (compressed to at most 8 bytes,
/// grouped by the bytes as an integer) and long ones (hashed) both group
/// right, and a WHERE selection groups only its rows.
#[test]
fn group_by_an_fsst_column_groups_equal_strings() {
    use std::collections::BTreeMap;
    let n = 6_000;
    // `None` is NULL (an unquoted empty field), `""` the empty string.
    let url = |i: usize| match i % 50 {
        0 => Some(String::new()),
        1 => None,
        // At most 3 characters: at most 6 compressed bytes, even escaped.
        2..=20 => Some(format!("k{}", i % 97)),
        // About 1,900 distinct values per 2,048-row partition: too many for
        // a dictionary to pay, so the column is FSST-compressed.
        _ => Some(format!(
            "https://example.com/path/to/page/{}/item?q={}",
            i % 1_900,
            i % 1_900 * 7
        )),
    };
    let mut csv = String::from("id,url\n");
    for i in 0..n {
        match url(i) {
            Some(u) => csv.push_str(&format!("{i},\"{u}\"\n")),
            None => csv.push_str(&format!("{i},\n")),
        }
    }
    let db = database(&csv, 2_048);
    let plan = explain(&db, "SELECT url, count(*) FROM t GROUP BY url");
    assert!(
        plan.iter()
            .any(|l| l.contains("FSST codes hashed compressed")),
        "{plan:?}"
    );
    for (sql, all) in [
        ("SELECT url, count(*) FROM t GROUP BY url", true),
        (
            "SELECT url, count(*) FROM t WHERE id % 3 = 1 GROUP BY url",
            false,
        ),
    ] {
        let mut expected = BTreeMap::<Option<String>, i64>::new();
        for i in (0..n).filter(|i| all || i % 3 == 1) {
            *expected.entry(url(i)).or_default() += 1;
        }
        let got: BTreeMap<Option<String>, i64> = db
            .query(sql)
            .unwrap()
            .rows
            .iter()
            .map(|r| match (&r[0], &r[1]) {
                (Value::Null, Value::Int(c)) => (None, *c),
                (Value::Str(s), Value::Int(c)) => (Some(s.to_string()), *c),
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(got, expected, "{sql}");
    }
}

/// An evaluated key that is nearly unique in the first rows of a partition
/// skips grouping there (a group per row) and is grouped at the merge: the
/// keys that repeat later in the partition, or in another partition, still
/// come out once with their rows' counts, sums and distinct counts, with
/// one partition (nothing else to merge) and with several.
#[test]
fn nearly_unique_keys_group_at_the_merge() {
    use std::collections::BTreeMap;
    let n = 6_000usize;
    // The first 2,900 rows have distinct keys; then they repeat.
    let key = |i: usize| (i % 2_900) as i64 * 1_000_003;
    let mut csv = String::from("k,x,s\n");
    for i in 0..n {
        csv.push_str(&format!("{},{},s{}\n", (i % 2_900), i % 7, i % 3));
    }
    let mut expected = BTreeMap::<i64, (i64, i64, usize)>::new();
    let mut names = BTreeMap::<i64, std::collections::BTreeSet<usize>>::new();
    for i in 0..n {
        let e = expected.entry(key(i)).or_default();
        e.0 += 1;
        e.1 += (i % 7) as i64;
        names.entry(key(i)).or_default().insert(i % 3);
    }
    for (k, e) in expected.iter_mut() {
        e.2 = names[k].len();
    }
    let sql = "SELECT k * 1000003 AS g, count(*), sum(x), count(DISTINCT s) FROM t GROUP BY g";
    for partition_rows in [65_536, 2_500] {
        let db = database(&csv, partition_rows);
        let plan = explain(&db, sql);
        assert!(
            plan.iter().any(|l| l.contains("a group per row")),
            "{plan:?}"
        );
        let got: BTreeMap<i64, (i64, i64, usize)> = db
            .query(sql)
            .unwrap()
            .rows
            .iter()
            .map(|r| match (&r[0], &r[1], &r[2], &r[3]) {
                (Value::Int(g), Value::Int(c), Value::Int(x), Value::Int(d)) => {
                    (*g, (*c, *x, *d as usize))
                }
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(got.len(), 2_900, "partition rows {partition_rows}");
        assert_eq!(got, expected, "partition rows {partition_rows}");
    }
}

/// The same for an FSST-compressed string key: nearly unique in the first
/// rows, then repeating, with NULLs (a group of their own) among them.
#[test]
fn nearly_unique_fsst_keys_group_at_the_merge() {
    use std::collections::BTreeMap;
    let n = 6_000usize;
    let url = |i: usize| {
        (i % 1_000 != 999).then(|| format!("https://example.com/item/{}/page.html", i % 5_500))
    };
    let mut csv = String::from("u,x\n");
    let mut expected = BTreeMap::<Option<String>, (i64, i64)>::new();
    for i in 0..n {
        csv.push_str(&format!("{},{}\n", url(i).unwrap_or_default(), i % 7));
        let e = expected.entry(url(i)).or_default();
        e.0 += 1;
        e.1 += (i % 7) as i64;
    }
    let sql = "SELECT u, count(*), sum(x) FROM t GROUP BY u";
    for partition_rows in [65_536, 2_500] {
        let db = database(&csv, partition_rows);
        let plan = explain(&db, sql);
        assert!(
            plan.iter()
                .any(|l| l.contains("FSST, nearly every row a new value")),
            "{plan:?}"
        );
        let got: BTreeMap<Option<String>, (i64, i64)> = db
            .query(sql)
            .unwrap()
            .rows
            .iter()
            .map(|r| match (&r[0], &r[1], &r[2]) {
                (Value::Null, Value::Int(c), Value::Int(x)) => (None, (*c, *x)),
                (Value::Str(s), Value::Int(c), Value::Int(x)) => (Some(s.to_string()), (*c, *x)),
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(got, expected, "partition rows {partition_rows}");
    }
}

// ---------------------------------------------------------------------------
// DESCRIBE, SHOW TABLES, SUMMARIZE

const MIXED: &str = "\
id,price,name,at
1,2.5,apple,2020-01-01 00:00:00
2,,banana,2020-01-02 00:00:00
3,4.0,,2020-01-03 00:00:00
4,1.0,apple,
5,3.5,cherry,2020-01-05 12:00:00
";

fn strings(row: &[Value]) -> Vec<String> {
    row.iter().map(|v| v.to_string()).collect()
}

#[test]
fn describe_lists_columns_with_types_encodings_nulls_and_memory() {
    let db = database(MIXED, 2);
    let result = db.query("DESCRIBE t").unwrap();
    assert_eq!(
        result.columns,
        [
            "column_name",
            "column_type",
            "encoding",
            "null_count",
            "memory"
        ]
    );
    let expected = [
        ("id", "integer", 0),
        ("price", "float", 1),
        ("name", "string", 1),
        ("at", "timestamp", 1),
    ];
    assert_eq!(result.rows.len(), expected.len());
    for (row, (name, dtype, nulls)) in result.rows.iter().zip(expected) {
        assert_eq!(row[..2], [Value::str(name), Value::str(dtype)]);
        assert_eq!(row[3], Value::Int(nulls), "{name}");
        // Every one of the 3 partitions is counted under some codec.
        let encoding = row[2].to_string();
        let partitions: usize = encoding
            .split(", ")
            .map(|e| {
                let n = e.rsplit_once(" (").expect("codec (n)").1;
                n.trim_end_matches(')').parse::<usize>().expect("a count")
            })
            .sum();
        assert_eq!(partitions, 3, "{name}: {encoding}");
        let memory = row[4].to_string();
        assert!(
            memory.ends_with(" B") || memory.ends_with("KiB"),
            "{memory}"
        );
    }
    // The same through the table's other spellings.
    assert_eq!(db.query("describe T;").unwrap().rows, result.rows);
}

/// Introspection results work like any result (a preview of SUMMARIZE),
/// with the column names DuckDB gives them. Their rows and errors are in
/// `tests/slt/statements/introspection.slt`.
#[test]
fn introspection_results_work_like_any_result() {
    let db = database(MIXED, 2);
    let preview = db.query_preview("SUMMARIZE t", 1).unwrap();
    assert_eq!((preview.result.rows.len(), preview.total_rows), (1, 4));
    assert_eq!(
        db.query("SUMMARIZE t").unwrap().columns,
        [
            "column_name",
            "column_type",
            "encoding",
            "min",
            "max",
            "approx_unique",
            "avg",
            "q25",
            "q50",
            "q75",
            "count",
            "null_percentage"
        ]
    );
    assert_eq!(
        db.query("DESCRIBE SELECT id FROM t").unwrap().columns,
        ["column_name", "column_type"]
    );
    assert_eq!(
        db.query("SHOW TABLES").unwrap().columns,
        ["name", "rows", "columns", "memory"]
    );
}

// ---------------------------------------------------------------------------
// Files as tables

/// A directory of its own under the system's temporary directory, removed
/// when dropped.
struct TempDir(std::path::PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!("katydid-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("temporary directory");
        TempDir(dir)
    }

    /// Writes `bytes` to `name` in the directory and returns the path as SQL
    /// quotes it.
    fn write(&self, name: &str, bytes: &[u8]) -> String {
        let path = self.0.join(name);
        std::fs::write(&path, bytes).expect("write");
        path.display().to_string().replace('\'', "''")
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn empty_database() -> Database {
    Database::new(DatabaseOptions {
        threads: 2,
        ..Default::default()
    })
    .expect("thread pool")
}

/// A CSV field: the value, or empty (NULL) for `None`.
fn csv_field(v: Option<i64>) -> String {
    v.map(|x| x.to_string()).unwrap_or_default()
}

/// The lines of `EXPLAIN ANALYZE sql`: the paths the run took.
fn explain(db: &Database, sql: &str) -> Vec<String> {
    db.query(&format!("EXPLAIN ANALYZE {sql}"))
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
        .rows
        .iter()
        .map(|r| r[0].to_string())
        .collect()
}

fn count(db: &Database, sql: &str) -> i64 {
    match db.query(sql).unwrap_or_else(|e| panic!("{sql}: {e}")).rows[..] {
        [ref row] => match row[0] {
            Value::Int(n) => n,
            ref other => panic!("{sql}: {other:?}"),
        },
        ref rows => panic!("{sql}: {rows:?}"),
    }
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

#[test]
fn a_file_is_queried_as_a_table_beside_a_loaded_table_of_the_same_name() {
    let dir = TempDir::new("files-basic");
    let path = dir.write("hits.csv", MIXED.as_bytes());
    let mut db = empty_database();
    db.load_csv_bytes(
        NUMBERS.as_bytes().to_vec(),
        Path::new("n.csv"),
        "hits",
        &LoadOptions::default(),
    )
    .unwrap();
    assert_eq!(
        count(
            &db,
            &format!("SELECT count(*) FROM '{path}' WHERE name = 'apple'")
        ),
        2
    );
    // The loaded table keeps its name and rows; the file table is apart.
    assert_eq!(count(&db, "SELECT count(*) FROM hits WHERE x > 0"), 3);
    assert_eq!(count(&db, &format!("SELECT max(id) FROM '{path}'")), 5);
    let plan = explain(&db, &format!("SELECT id FROM '{path}'"));
    assert!(
        plan.iter().any(|l| l.contains("Scan: hits (5 rows")),
        "{plan:?}"
    );
    // SHOW TABLES lists the file by its quoted path, after the tables.
    let shown: Vec<Vec<String>> = db
        .query("SHOW TABLES")
        .unwrap()
        .rows
        .iter()
        .map(|r| strings(&r[..3]))
        .collect();
    let canonical = std::fs::canonicalize(dir.0.join("hits.csv")).unwrap();
    let quoted = format!("'{}'", canonical.display().to_string().replace('\'', "''"));
    assert_eq!(
        shown,
        [
            vec!["hits".to_string(), "5".into(), "2".into()],
            vec![quoted.clone(), "5".into(), "4".into()]
        ]
    );
    // The listed name reads the same table.
    assert_eq!(count(&db, &format!("SELECT count(*) FROM {quoted}")), 5);
    // DESCRIBE and SUMMARIZE take files too.
    let described = db.query(&format!("DESCRIBE '{path}'")).unwrap();
    assert_eq!(described.rows.len(), 4);
    let summary = db.query(&format!("SUMMARIZE read_csv('{path}')")).unwrap();
    assert_eq!(summary.rows[0][3], Value::str("1"));
    // A gzipped file.
    let gz = dir.write("more.csv.gz", &gzip(MIXED.as_bytes()));
    assert_eq!(count(&db, &format!("SELECT sum(id) FROM '{gz}'")), 15);
}

#[test]
fn a_file_is_read_again_only_when_it_changes() {
    let dir = TempDir::new("files-change");
    // Two columns: a column of two integers alone is an exact line, which
    // costs no bytes at all.
    let path = dir.write("data.csv", b"a,b\n1,x\n2,y\n");
    let file = dir.0.join("data.csv");
    let db = empty_database();
    let sum = |db: &Database| count(db, &format!("SELECT sum(a) FROM '{path}'"));
    assert_eq!(sum(&db), 3);
    let first_used = db.memory().used();
    assert!(first_used > 0, "the file table counts against the budget");
    // Same size and modification time: the cached table answers.
    let modified = std::fs::metadata(&file).unwrap().modified().unwrap();
    std::fs::write(&file, b"a,b\n5,x\n6,y\n").unwrap();
    std::fs::File::options()
        .write(true)
        .open(&file)
        .unwrap()
        .set_modified(modified)
        .unwrap();
    assert_eq!(sum(&db), 3, "unchanged size and time: reused");
    // Another modification time: read again.
    std::fs::File::options()
        .write(true)
        .open(&file)
        .unwrap()
        .set_modified(modified + std::time::Duration::from_secs(5))
        .unwrap();
    assert_eq!(sum(&db), 11);
    // Another size: read again; only the new copy is held.
    std::fs::write(&file, b"a\n5\n6\n7\n").unwrap();
    assert_eq!(sum(&db), 18);
    assert_eq!(db.query("SHOW TABLES").unwrap().rows.len(), 1);
    // Other options read it again too.
    assert_eq!(
        count(
            &db,
            &format!("SELECT count(*) FROM read_csv('{path}', header => false)")
        ),
        4
    );
}

/// `DROP TABLE 'path'` forgets a file's cached table and gives its bytes
/// back; dropping it again is an error pointing at the path, unless IF
/// EXISTS.
#[test]
fn drop_table_of_a_file_forgets_its_cached_table() {
    let dir = TempDir::new("files-drop");
    let path = dir.write("data.csv", b"a,b\n1,x\n2,y\n");
    let mut db = empty_database();
    assert_eq!(count(&db, &format!("SELECT sum(a) FROM '{path}'")), 3);
    assert_eq!(db.query("SHOW TABLES").unwrap().rows.len(), 1);
    assert!(db.memory().used() > 0);
    db.execute(&format!("DROP TABLE '{path}'")).unwrap();
    assert!(db.query("SHOW TABLES").unwrap().rows.is_empty());
    assert_eq!(db.memory().used(), 0, "its bytes are given back");
    let sql = format!("DROP TABLE '{path}'");
    let err = db.execute(&sql).unwrap_err();
    assert_eq!(err.offset(), Some(sql.find('\'').unwrap()), "{err}");
    db.execute(&format!("DROP TABLE IF EXISTS '{path}'"))
        .unwrap();
    // Read again on the next query.
    assert_eq!(count(&db, &format!("SELECT count(*) FROM '{path}'")), 2);
}

#[test]
fn a_file_over_the_memory_limit_is_not_kept() {
    let dir = TempDir::new("files-memory");
    let rows: String = (0..5000).map(|i| format!("{i},s{i}\n")).collect();
    let path = dir.write("big.csv", format!("a,b\n{rows}").as_bytes());
    let db = empty_database();
    db.set_memory_limit(1000);
    let err = db
        .query(&format!("SELECT count(*) FROM '{path}'"))
        .unwrap_err();
    assert!(matches!(err, katydid::Error::MemoryLimit { .. }), "{err}");
    assert_eq!(db.memory().used(), 0);
    assert_eq!(db.query("SHOW TABLES").unwrap().rows.len(), 0);
    db.set_memory_limit(usize::MAX);
    assert_eq!(count(&db, &format!("SELECT count(*) FROM '{path}'")), 5000);
}

/// Group keys whose combined code space exceeds 64 bits go through the
/// composite hash table: with two keys (codes inline in its entries) and
/// with three, every group's count equals the one counted here, a NULL key
/// is a group of its own, and a WHERE selection groups only its rows.
#[test]
fn composite_group_keys_count_every_group() {
    use std::collections::BTreeMap;
    let n = 5_000i64;
    // Ranges of about 2^52 and 2^43 with no common stride (the offset
    // codec divides one out): together beyond u64. `a` has 1,900 values
    // in a partition of 2,000 rows and `b` 1,901, too many for an integer
    // dictionary to pay, so their codes stay 64-bit offsets. Every 20th
    // row is one group; the others one or two rows a group.
    let a = |i: i64| {
        if i % 20 == 0 {
            7 << 49
        } else {
            ((i % 7) << 49) + (i * 13) % 1900
        }
    };
    let b = |i: i64| {
        if i % 20 == 0 {
            11 << 40
        } else {
            ((i % 11) << 40) + (i * 7) % 1901
        }
    };
    let c = |i: i64| i % 2 * 300_000;
    let mut csv = String::from("a,b,c\n");
    for i in 0..n {
        // Every 97th row has no b.
        let bv = csv_field((i % 97 != 0).then(|| b(i)));
        csv.push_str(&format!("{},{bv},{}\n", a(i), c(i)));
    }
    let db = database(&csv, 2_000);
    for (sql, three) in [
        (
            "SELECT a, b, count(*) FROM t WHERE c <> 300000 GROUP BY a, b",
            false,
        ),
        (
            "SELECT a, b, c, count(*) FROM t WHERE c <> 300000 GROUP BY a, b, c",
            true,
        ),
    ] {
        let plan = explain(&db, sql).join("\n");
        assert!(plan.contains("composite key"), "{plan}");
        let mut expected: BTreeMap<(i64, Option<i64>, i64), i64> = BTreeMap::new();
        for i in (0..n).filter(|i| c(*i) != 300_000) {
            let bv = (i % 97 != 0).then(|| b(i));
            *expected
                .entry((a(i), bv, if three { c(i) } else { 0 }))
                .or_default() += 1;
        }
        let mut got: BTreeMap<(i64, Option<i64>, i64), i64> = BTreeMap::new();
        for row in db.query(sql).unwrap().rows {
            let int = |v: &Value| match v {
                Value::Int(x) => Some(*x),
                _ => None,
            };
            let key = (
                int(&row[0]).unwrap(),
                int(&row[1]),
                if three { int(&row[2]).unwrap() } else { 0 },
            );
            assert!(
                got.insert(key, int(row.last().unwrap()).unwrap()).is_none(),
                "{key:?} twice"
            );
        }
        assert!(expected.values().any(|&c| c > 5), "groups repeat");
        assert_eq!(got, expected, "{sql}");
    }
}

/// Sums of linear forms (`sum(x * 3 + g - 7)`) aggregate each column once
/// (EXPLAIN shows `sum(x)`, `sum(g)`), with the answer of summing row by
/// row: exact for integers, within rounding for floats. A NULL in one of
/// two columns, or values whose sum could overflow, keep the per-row sum,
/// whose answer (or overflow error) is then the original's.
#[test]
fn linear_sums_aggregate_each_column_once() {
    let n = 3_000i64;
    let x = |i: i64| i * 7 % 1000 - 300;
    let g = |i: i64| i % 13;
    let y = |i: i64| (i * 37 % 10_000) as f64 / 100.0;
    let mut csv = String::from("x,g,y,h,big\n");
    for i in 0..n {
        // h is x with a NULL every 10th row; big is near the top of i64.
        let h = csv_field((i % 10 != 0).then(|| x(i)));
        csv.push_str(&format!(
            "{},{},{},{h},{}\n",
            x(i),
            g(i),
            y(i),
            i64::MAX / 2 + i
        ));
    }
    let db = database(&csv, 1_000);
    let one = |sql: &str| db.query(sql).unwrap().rows.remove(0);
    let sql =
        "SELECT sum(x * 3 + g - 7), sum(2 * y - x), sum(h * 2 + 5), sum(-1 * x + 4 * g) FROM t";
    let plan = explain(&db, sql).join("\n");
    assert!(
        plan.contains("aggregates [sum(x), sum(g), count(x), sum(y), sum(h), count(h)]"),
        "{plan}"
    );
    let rows = 0..n;
    let want_int = rows.clone().map(|i| x(i) * 3 + g(i) - 7).sum::<i64>();
    let want_float: f64 = rows.clone().map(|i| 2.0 * y(i) - x(i) as f64).sum();
    let want_h = rows
        .clone()
        .filter(|i| i % 10 != 0)
        .map(|i| x(i) * 2 + 5)
        .sum::<i64>();
    let want_neg = rows.clone().map(|i| -x(i) + 4 * g(i)).sum::<i64>();
    let got = one(sql);
    assert_eq!(got[0], Value::Int(want_int));
    match got[1] {
        Value::Float(f) => assert!(
            (f - want_float).abs() <= 1e-9 * want_float.abs(),
            "{f} vs {want_float}"
        ),
        ref v => panic!("{v:?}"),
    }
    assert_eq!(got[2], Value::Int(want_h));
    assert_eq!(got[3], Value::Int(want_neg));
    // Two columns, one with NULLs: rows where h is NULL drop out, so the
    // sum stays per row.
    let sql = "SELECT sum(h + g) FROM t";
    assert!(
        explain(&db, sql)
            .join("\n")
            .contains("aggregates [sum((h + g))]")
    );
    let want = rows
        .clone()
        .filter(|i| i % 10 != 0)
        .map(|i| x(i) + g(i))
        .sum::<i64>();
    assert_eq!(one(sql)[0], Value::Int(want));
    // `big + g` fits every row, but not the sum: the sum is exact past
    // i64 (issue 30, item 1), as the original's.
    let sql = "SELECT sum(big + g) FROM t";
    let want: i128 = (0..n)
        .map(|i| i128::from(i64::MAX / 2 + i) + i128::from(g(i)))
        .sum();
    assert_eq!(one(sql)[0], Value::from_i128(want));
}

/// A group key whose code range is far wider than a partition's rows (a
/// CounterID-like column) is re-ranked through a bitmap of the codes
/// present; with a second key the combined space then fits a fixed array,
/// and every group's count is the one counted here.
#[test]
fn sparse_wide_keys_are_reranked_densely() {
    use std::collections::BTreeMap;
    let n = 6_000i64;
    // 1,000 values spread over about 400,000 (no common stride for the
    // offset codec to divide out, and too many in a partition for an
    // integer dictionary to pay); a second key of 3 values.
    let k = |i: i64| (i * 37 % 1000) * 401 + i % 2;
    let m = |i: i64| i % 3;
    let mut csv = String::from("k,m\n");
    for i in 0..n {
        csv.push_str(&format!("{},{}\n", k(i), m(i)));
    }
    let db = database(&csv, 2_000);
    let sql = "SELECT k, m, count(*) FROM t WHERE m <> 1 GROUP BY k, m";
    let plan = explain(&db, sql).join("\n");
    assert!(plan.contains("dense ranks"), "{plan}");
    let mut want: BTreeMap<(i64, i64), i64> = BTreeMap::new();
    for i in (0..n).filter(|i| m(*i) != 1) {
        *want.entry((k(i), m(i))).or_default() += 1;
    }
    let mut got: BTreeMap<(i64, i64), i64> = BTreeMap::new();
    for row in db.query(sql).unwrap().rows {
        match row[..] {
            [Value::Int(a), Value::Int(b), Value::Int(c)] => {
                assert!(got.insert((a, b), c).is_none());
            }
            ref r => panic!("{r:?}"),
        }
    }
    assert_eq!(got, want);
}

/// A literal group key beside another key is dropped from the grouping
/// and read back as the literal: the rows are those of the other key with
/// the literal beside them, and EXPLAIN groups by the other key alone. A
/// literal alone still groups: no rows in, no groups out.
#[test]
fn literal_group_keys_group_by_the_other_keys() {
    let mut csv = String::from("k,x\n");
    for i in 0..3000 {
        csv.push_str(&format!("k{},{}\n", i % 7, i % 5));
    }
    let db = database(&csv, 1000);
    let sql = "SELECT 1, k, 'a' AS s, count(*), sum(x) FROM t GROUP BY 1, k, 3 ORDER BY k";
    let plan = explain(&db, sql).join("\n");
    assert!(plan.contains("keys [k] aggregates"), "{plan}");
    let got = db.query(sql).unwrap().rows;
    let want = db
        .query("SELECT k, count(*), sum(x) FROM t GROUP BY k ORDER BY k")
        .unwrap()
        .rows;
    assert_eq!(got.len(), 7);
    for (g, w) in got.iter().zip(&want) {
        assert_eq!(g[0], Value::Int(1));
        assert_eq!(g[2], Value::str("a"));
        assert_eq!((&g[1], &g[3], &g[4]), (&w[0], &w[1], &w[2]));
    }
    let empty = db
        .query("SELECT 1, count(*) FROM t WHERE x > 100 GROUP BY 1")
        .unwrap();
    assert!(empty.rows.is_empty(), "{:?}", empty.rows);
    let one = db.query("SELECT 1, count(*) FROM t GROUP BY 1").unwrap();
    assert_eq!(one.rows, vec![vec![Value::Int(1), Value::Int(3000)]]);
}

/// ORDER BY … LIMIT over groups picks its best groups in parallel stretches
/// of the merged groups; ties are still broken by merge order, so the
/// window equals the same window of the fully sorted groups. 40,000 groups
/// pass the merge's radix split, and counts of 1 to 3 tie heavily.
#[test]
fn top_groups_in_parallel_keep_the_full_sorts_tie_order() {
    let mut csv = String::from("k,x\n");
    for i in 0..100_000u64 {
        // A scrambled key, so groups meet in no particular order.
        let k = (i * 7_919) % 40_000;
        csv.push_str(&format!("{k},{}\n", i % 13));
    }
    let db = database(&csv, 8_192);
    for (tail, having) in [
        ("ORDER BY c DESC", ""),
        ("ORDER BY c DESC, s", ""),
        ("ORDER BY s DESC", "HAVING count(*) > 2"),
        ("ORDER BY c, s DESC", "HAVING sum(x) % 3 = 1"),
    ] {
        let base =
            format!("SELECT k, count(*) AS c, sum(x) AS s FROM t GROUP BY k {having} {tail}");
        let all = db.query(&base).unwrap().rows;
        assert!(all.len() > 1_000, "{base}: {} groups", all.len());
        for (limit, offset) in [(10, 0), (7, 3), (1, 100), (25, 0)] {
            let q = format!("{base} LIMIT {limit} OFFSET {offset}");
            let got = db.query(&q).unwrap().rows;
            assert_eq!(got, all[offset..offset + limit], "{q}");
        }
    }
}

/// `ORDER BY key LIMIT k` over partitions read best zone-map bound first:
/// each partition after the first wave is filtered past the `k`-th best
/// key found so far, and rows tied with it must still compete, since load
/// order breaks ties and a partition read later may come first in load
/// order. The ids returned must be exactly those of a stable sort.
#[test]
fn top_n_read_by_zone_map_bound_keeps_ties_in_load_order() {
    use rand::{Rng, SeedableRng};
    let mut floor_used = 0;
    for seed in 0..12u64 {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let part_rows = 256;
        let parts = rng.gen_range(4..9);
        // Per partition a few rows at a high value of its own, so the read
        // order differs from the load order, and the rest among a few
        // values common to all, so the k-th best ties across partitions.
        let mut rows: Vec<(i64, i64, f64)> = Vec::new();
        for _ in 0..parts {
            let high = rng.gen_range(5..10);
            for _ in 0..part_rows {
                let id = rows.len() as i64;
                let v = if rng.gen_bool(0.01) {
                    high
                } else {
                    rng.gen_range(0..5)
                };
                rows.push((id, v, v as f64 / 4.0 - 1.0));
            }
        }
        let mut csv = String::from("id,v,f\n");
        for (id, v, f) in &rows {
            csv.push_str(&format!("{id},{v},{f}\n"));
        }
        for threads in [1, 2] {
            let db = database_on(threads, &csv, part_rows);
            for k in [1usize, 5, 16] {
                for (column, desc) in [("v", true), ("v", false), ("f", true), ("f", false)] {
                    let mut want: Vec<&(i64, i64, f64)> = rows.iter().collect();
                    // Stable: ties keep load order.
                    want.sort_by(|a, b| if desc { b.1.cmp(&a.1) } else { a.1.cmp(&b.1) });
                    let want: Vec<Value> = want.iter().take(k).map(|r| Value::Int(r.0)).collect();
                    let dir = if desc { "DESC" } else { "ASC" };
                    let sql = format!("SELECT id FROM t ORDER BY {column} {dir} LIMIT {k}");
                    let got: Vec<Value> = db
                        .query(&sql)
                        .unwrap_or_else(|e| panic!("{sql}: {e}"))
                        .rows
                        .into_iter()
                        .map(|r| r[0].clone())
                        .collect();
                    assert_eq!(got, want, "seed {seed}, {threads} threads: {sql}");
                    floor_used += explain(&db, &sql)
                        .iter()
                        .any(|l| l.contains("n-th best of the partitions read before"))
                        as usize;
                }
            }
        }
    }
    assert!(
        floor_used > 0,
        "no query filtered past an earlier n-th best"
    );
}

/// Money sums are exact to the cent across partitions: each partition's
/// ALP digits are summed exactly and kept unscaled through the merge, so
/// the total is the f64 nearest the exact decimal, even when partitions
/// have different exponents (cents in some, tenths in others).
#[test]
fn decimal_sums_are_exact_across_partitions() {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
    let part_rows = 4096;
    // (group, value in hundredths)
    let mut rows: Vec<(i64, i64)> = Vec::new();
    for p in 0..9 {
        for _ in 0..part_rows {
            let g = rng.gen_range(0..5);
            let cents = if p % 2 == 0 {
                rng.gen_range(0..100_000)
            } else {
                rng.gen_range(0..10_000) * 10
            };
            rows.push((g, cents));
        }
    }
    let mut csv = String::from("g,m\n");
    for (g, cents) in &rows {
        csv.push_str(&format!("{g},{}.{:02}\n", cents / 100, cents % 100));
    }
    // The f64 nearest a decimal (Rust's float parsing rounds correctly).
    let nearest = |cents: i64| -> f64 { format!("{cents}e-2").parse().unwrap() };
    for threads in [1, 2] {
        let db = database_on(threads, &csv, part_rows);
        let naive: f64 = rows.iter().map(|r| r.1 as f64 / 100.0).sum();
        let total: i64 = rows.iter().map(|r| r.1).sum();
        assert_ne!(naive, nearest(total), "the data must show f64 drift");
        let got = db.query("SELECT sum(m), avg(m) FROM t").unwrap().rows;
        assert_eq!(got[0][0], Value::Float(nearest(total)), "{threads} threads");
        assert_eq!(
            got[0][1],
            Value::Float(nearest(total) / rows.len() as f64),
            "{threads} threads"
        );
        for filter in ["", "WHERE g <> 3"] {
            let sql = format!("SELECT g, sum(m) FROM t {filter} GROUP BY g ORDER BY g");
            let got = db.query(&sql).unwrap().rows;
            let groups: Vec<i64> = (0..5).filter(|&g| filter.is_empty() || g != 3).collect();
            assert_eq!(got.len(), groups.len(), "{sql}");
            for (row, g) in got.iter().zip(groups) {
                let cents: i64 = rows.iter().filter(|r| r.0 == g).map(|r| r.1).sum();
                assert_eq!(
                    row[1],
                    Value::Float(nearest(cents)),
                    "{threads} threads: {sql}"
                );
            }
        }
    }
}

/// Regression (issue 30, item 1): a constant column of three 2^62 values
/// failed `sum` with "integer overflow in sum" on its specialized path.
/// Every integer codec's sum is exact past i64, as the general path's
/// i128 is and DuckDB's HUGEINT: constant, runs, line, integer dictionary
/// and offsets, each in one partition and across partitions.
#[test]
fn integer_sums_past_i64_are_exact_on_every_codec() {
    let p62 = 1i128 << 62;
    let shapes: [(&str, Vec<i128>); 5] = [
        ("constant", vec![p62; 6]),
        ("runs", vec![p62, p62, p62, p62 + 1, p62 + 1, p62 + 1]),
        ("line", (0..6).map(|i| p62 + 3 * i).collect()),
        (
            "few values",
            vec![p62, p62 - (1 << 40), p62, p62 - (1 << 40), p62, p62],
        ),
        (
            "offsets",
            vec![p62 - 7, p62 - 100_000, p62 - 3, p62, p62 - 12_345, p62 - 1],
        ),
    ];
    for (shape, values) in shapes {
        for sign in [1i128, -1] {
            let values: Vec<i128> = values.iter().map(|v| v * sign).collect();
            let mut csv = String::from("x,g\n");
            for (i, v) in values.iter().enumerate() {
                csv.push_str(&format!("{v},{}\n", i % 2));
            }
            let total: i128 = values.iter().sum();
            let even: i128 = values.iter().step_by(2).sum();
            for partition_rows in [2, 3, 6] {
                let db = database(&csv, partition_rows);
                let r = db.query("SELECT sum(x), count(*) FROM t").unwrap();
                assert_eq!(
                    r.rows[0][0],
                    Value::from_i128(total),
                    "{shape}, sign {sign}, {partition_rows} rows per partition"
                );
                let r = db
                    .query("SELECT g, sum(x), sum(x) - 1, sum(x) / 3 FROM t GROUP BY g ORDER BY g")
                    .unwrap();
                assert_eq!(r.rows[0][1], Value::from_i128(even), "{shape}, grouped");
                assert_eq!(r.rows[0][2], Value::from_i128(even - 1), "{shape}, minus 1");
                assert_eq!(r.rows[0][3], Value::from_i128(even / 3), "{shape}, over 3");
            }
        }
    }
    // The example, as DuckDB answers it.
    let db = database(
        "x\n4611686018427387904\n4611686018427387904\n4611686018427387904\n",
        3,
    );
    let r = db.query("SELECT sum(x) FROM t").unwrap();
    assert_eq!(r.rows[0][0].to_string(), "13835058055282163712");
}

/// Regression (issue 30, item 2): a column empty in every row was typed
/// string, so `sum` of it failed. It is of type NULL (what operators and
/// aggregates make of it is in `tests/slt/statements/null_type.slt`).
#[test]
fn a_column_without_values_is_of_type_null() {
    let db = database("a,e,s\n1,,x\n2,,y\n3,,\n", 2);
    let info = db.table_info("t").unwrap();
    assert_eq!(info.columns[1].dtype, katydid::DataType::Null);
    let r = db.query("DESCRIBE t").unwrap();
    assert_eq!(r.rows[1][1], Value::str("null"));
}

/// Issue 30, item 8: one ragged row failed the whole load, with no way
/// around it. With `ignore_errors` the malformed rows (wrong field count,
/// text that is not UTF-8) are skipped and counted, in every partition
/// size, and the rest load as they would alone.
#[test]
fn ignore_errors_skips_malformed_rows_and_says_which() {
    let mut text = b"a,b\n".to_vec();
    let mut good = Vec::new();
    for i in 0..40 {
        match i % 9 {
            4 => text.extend_from_slice(format!("{i}\n").as_bytes()),
            7 => text.extend_from_slice(format!("{i},x,extra\n").as_bytes()),
            8 if i == 17 => text.extend_from_slice(b"17,\xff\xfe\n"),
            _ => {
                text.extend_from_slice(format!("{i},s{i}\n").as_bytes());
                good.push(i);
            }
        }
    }
    for partition_rows in [1, 3, 7, 1000] {
        let mut db = Database::new(DatabaseOptions {
            threads: 2,
            ..Default::default()
        })
        .unwrap();
        let strict = LoadOptions {
            partition_rows,
            ..LoadOptions::default()
        };
        let e = db
            .load_csv_bytes(text.clone(), Path::new("r.csv"), "t", &strict)
            .unwrap_err();
        assert!(
            e.to_string().contains("r.csv:6:2: expected 2 fields"),
            "{e}"
        );
        let options = LoadOptions {
            ignore_errors: true,
            ..strict
        };
        let stats = db
            .load_csv_bytes(text.clone(), Path::new("r.csv"), "t", &options)
            .unwrap();
        let skipped = 40 - good.len();
        assert!(
            stats
                .notices
                .iter()
                .any(|n| n
                    == &format!("skipped {skipped} malformed rows (lines 6, 9, 15, 18, 19, …)")),
            "{partition_rows}: {:?}",
            stats.notices
        );
        let r = db
            .query("SELECT count(*), sum(a), min(b), max(b) FROM t")
            .unwrap();
        let sum: i64 = good.iter().sum();
        assert_eq!(
            r.rows[0][0],
            Value::Int(good.len() as i64),
            "{partition_rows}"
        );
        assert_eq!(r.rows[0][1], Value::Int(sum));
        assert_eq!(r.rows[0][2], Value::str("s0"));
    }
}

/// Issue 30, item 5: the display asks for the rows it shows of an
/// aggregate, and only those are built; they and the count must be the
/// whole result's, for every way a result is ordered and windowed.
#[test]
fn an_aggregate_preview_is_the_head_of_the_whole_result() {
    let mut csv = String::from("k,v\n");
    for i in 0..5_000 {
        csv.push_str(&format!("{},{}\n", i * 7 % 1_000, i % 13));
    }
    let db = database(&csv, 700);
    for sql in [
        "SELECT k, sum(v) FROM t GROUP BY k",
        "SELECT k, sum(v) FROM t GROUP BY k ORDER BY 2 DESC, 1",
        "SELECT k, sum(v) FROM t GROUP BY k ORDER BY 2, 1 LIMIT 30 OFFSET 4",
        "SELECT k, sum(v) FROM t GROUP BY k ORDER BY 1 LIMIT -12",
        "SELECT k, sum(v) FROM t GROUP BY k LIMIT -9",
        "SELECT k, sum(v) FROM t GROUP BY k HAVING sum(v) > 30 ORDER BY 1 DESC",
        "SELECT v, count(*) FROM t GROUP BY v ORDER BY 2 DESC, 1",
        "SELECT sum(v) FROM t",
    ] {
        let whole = db.query(sql).unwrap().rows;
        for shown in [0, 1, 5, 40, 10_000] {
            let p = db.query_preview(sql, shown).unwrap();
            assert_eq!(p.total_rows, whole.len() as u64, "{sql}, {shown}");
            assert_eq!(
                p.result.rows,
                whole[..shown.min(whole.len())],
                "{sql}, {shown} shown"
            );
        }
    }
}

/// Issue 30, item 8: timestamps in other layouts than ISO 8601 were text.
/// The `timestampformat` and `dateformat` options read them, as loads
/// (every partition size) and as `read_csv` options; a field in neither
/// layout keeps the column a string, as without the options.
#[test]
fn timestamp_layouts_are_read_by_format() {
    let text =
        "id,at,day\n1,09/01/2013 10:00,01.09.2013\n2,12/31/2013 23:59,31.12.2013\n3,,29.02.2016\n";
    for partition_rows in [1, 2, 1000] {
        let mut db = database("x\n1\n", 1000);
        let options = LoadOptions {
            partition_rows,
            timestamp_formats: vec![
                Arc::new(TimestampFormat::new("%m/%d/%Y %H:%M").unwrap()),
                Arc::new(TimestampFormat::new("%d.%m.%Y").unwrap()),
            ],
            ..LoadOptions::default()
        };
        db.load_csv_bytes(text.as_bytes().to_vec(), Path::new("f.csv"), "f", &options)
            .unwrap();
        let r = db
            .query("SELECT max(at), min(day), max(day), count(at) FROM f")
            .unwrap();
        assert_eq!(
            r.rows[0],
            vec![
                Value::Timestamp(parse_timestamp("2013-12-31 23:59:00").unwrap()),
                Value::Timestamp(parse_timestamp("2013-09-01").unwrap()),
                Value::Timestamp(parse_timestamp("2016-02-29").unwrap()),
                Value::Int(2),
            ],
            "{partition_rows}"
        );
    }
    let dir = std::env::temp_dir().join(format!("katydid-formats-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("f.csv");
    std::fs::write(&file, text).unwrap();
    let db = database("x\n1\n", 1000);
    let path = file.display();
    let r = db
        .query(&format!(
            "DESCRIBE SELECT at, day FROM read_csv('{path}', timestampformat => '%m/%d/%Y %H:%M')"
        ))
        .unwrap();
    let types: Vec<String> = r.rows.iter().map(|row| row[1].to_string()).collect();
    assert_eq!(types, ["timestamp", "string"]);
    let e = db
        .query(&format!(
            "SELECT * FROM read_csv('{path}', dateformat => '%H:%M')"
        ))
        .unwrap_err();
    assert!(e.to_string().contains("has no year"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Issue 30, item 8, the edges of `ignore_errors`: partitions whose every
/// record is malformed load as nothing, and a quoted field that never
/// closes makes the rest of the input one skipped row (without the option,
/// both fail the load).
#[test]
fn ignore_errors_skips_whole_partitions_and_an_unclosed_quote() {
    let text = "a,b\n1,x\n2\n3\n4\n5\n6,y\n7,\"never closed\n8,z\n";
    for partition_rows in [1, 2, 3, 1000] {
        let mut db = database("x\n1\n", 1000);
        let strict = LoadOptions {
            partition_rows,
            ..LoadOptions::default()
        };
        assert!(
            db.load_csv_bytes(text.as_bytes().to_vec(), Path::new("u.csv"), "u", &strict)
                .is_err()
        );
        let options = LoadOptions {
            ignore_errors: true,
            ..strict
        };
        let stats = db
            .load_csv_bytes(text.as_bytes().to_vec(), Path::new("u.csv"), "u", &options)
            .unwrap();
        assert!(
            stats
                .notices
                .iter()
                .any(|n| n == "skipped 5 malformed rows (lines 3, 4, 5, 6, 8)"),
            "{partition_rows}: {:?}",
            stats.notices
        );
        assert!(
            stats
                .notices
                .iter()
                .any(|n| n.starts_with("line 8 opens a quoted field")),
            "{:?}",
            stats.notices
        );
        let r = db.query("SELECT count(*), sum(a), max(b) FROM u").unwrap();
        assert_eq!(
            r.rows[0],
            vec![Value::Int(2), Value::Int(7), Value::str("y")],
            "{partition_rows}"
        );
    }
}
