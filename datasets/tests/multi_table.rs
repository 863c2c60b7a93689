//! The multi-table data sets: TPC-H (`tpch`) and db-benchmark's join task
//! (`join`): row counts, keys, formats and determinism.

use std::collections::{HashMap, HashSet};

use katydid_datasets::join::{JoinData, JoinTable};
use katydid_datasets::tpch::{self, Table};

fn in_pool<T: Send>(threads: usize, f: impl FnOnce() -> T + Send) -> T {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("thread pool")
        .install(f)
}

/// Header and records of CSV text (quoted fields unquoted).
fn records(text: &[u8]) -> (Vec<String>, Vec<Vec<String>>) {
    let mut r = csv::ReaderBuilder::new().from_reader(text);
    let header = r
        .headers()
        .expect("header")
        .iter()
        .map(String::from)
        .collect();
    let rows = r
        .records()
        .map(|rec| rec.expect("record").iter().map(String::from).collect())
        .collect();
    (header, rows)
}

fn tpch_bytes(table: Table, sf: f64) -> (Vec<u8>, u64) {
    let mut out = Vec::new();
    let rows = tpch::write_table(table, sf, &mut out).expect("in memory");
    (out, rows)
}

/// A column of records by name.
fn col<'a>(header: &[String], rows: &'a [Vec<String>], name: &str) -> Vec<&'a str> {
    let i = header
        .iter()
        .position(|h| h == name)
        .unwrap_or_else(|| panic!("{name}"));
    rows.iter().map(|r| r[i].as_str()).collect()
}

#[test]
fn tpch_sf_001_has_the_specification_cardinalities() {
    // TPC-H 3.0.1 clause 4.2.5 at SF 0.01; lineitem's count is dbgen's.
    let expected = [
        (Table::Region, 5),
        (Table::Nation, 25),
        (Table::Supplier, 100),
        (Table::Customer, 1_500),
        (Table::Part, 2_000),
        (Table::PartSupp, 8_000),
        (Table::Orders, 15_000),
        (Table::LineItem, 60_175),
    ];
    let mut tables = HashMap::new();
    for (table, count) in expected {
        let (bytes, rows) = tpch_bytes(table, 0.01);
        let (header, recs) = records(&bytes);
        assert_eq!(rows, count, "{}", table.name());
        assert_eq!(recs.len() as u64, count, "{}", table.name());
        if let Some(n) = table.rows(0.01) {
            assert_eq!(n, count, "{}", table.name());
        }
        assert_eq!(header.join(","), table.header());
        assert!(
            recs.iter().all(|r| r.len() == header.len()),
            "{}",
            table.name()
        );
        tables.insert(table, (header, recs));
    }
    // Lower-case names with the table's prefix, as the specification
    // spells them.
    assert_eq!(tables[&Table::LineItem].0[0], "l_orderkey");
    assert_eq!(tables[&Table::PartSupp].0[0], "ps_partkey");
    assert_eq!(tables[&Table::Orders].0[4], "o_orderdate");

    // Keys: every line's order exists, every order has 1 to 7 lines.
    let (lh, lr) = &tables[&Table::LineItem];
    let (oh, or) = &tables[&Table::Orders];
    let orders: HashSet<&str> = col(oh, or, "o_orderkey").into_iter().collect();
    assert_eq!(orders.len(), or.len());
    let mut lines: HashMap<&str, usize> = HashMap::new();
    for k in col(lh, lr, "l_orderkey") {
        assert!(orders.contains(k), "line of a missing order {k}");
        *lines.entry(k).or_default() += 1;
    }
    assert_eq!(lines.len(), orders.len());
    assert!(lines.values().all(|n| (1..=7).contains(n)));
    let (ph, pr) = &tables[&Table::Part];
    let parts: HashSet<&str> = col(ph, pr, "p_partkey").into_iter().collect();
    assert!(col(lh, lr, "l_partkey").iter().all(|k| parts.contains(k)));
    let (ch, cr) = &tables[&Table::Customer];
    let customers: HashSet<&str> = col(ch, cr, "c_custkey").into_iter().collect();
    assert!(
        col(oh, or, "o_custkey")
            .iter()
            .all(|k| customers.contains(k))
    );

    // Dates YYYY-MM-DD, decimals with two places.
    let date = |s: &str| {
        s.len() == 10
            && s.bytes().enumerate().all(|(i, b)| {
                if i == 4 || i == 7 {
                    b == b'-'
                } else {
                    b.is_ascii_digit()
                }
            })
    };
    let decimal = |s: &str| {
        let (int, frac) = s.split_once('.').unwrap_or((s, ""));
        frac.len() == 2
            && frac.bytes().all(|b| b.is_ascii_digit())
            && int
                .trim_start_matches('-')
                .bytes()
                .all(|b| b.is_ascii_digit())
            && !int.trim_start_matches('-').is_empty()
    };
    for name in ["l_shipdate", "l_commitdate", "l_receiptdate"] {
        assert!(col(lh, lr, name).into_iter().all(date), "{name}");
    }
    assert!(col(oh, or, "o_orderdate").into_iter().all(date));
    for name in ["l_extendedprice", "l_discount", "l_tax"] {
        assert!(col(lh, lr, name).into_iter().all(decimal), "{name}");
    }
    assert!(col(ch, cr, "c_acctbal").into_iter().all(decimal));
}

#[test]
fn tpch_bytes_depend_on_the_scale_factor_alone() {
    for table in [Table::LineItem, Table::PartSupp, Table::Customer] {
        let (whole, rows) = tpch_bytes(table, 0.01);
        // The parts split the table without changing a byte.
        let mut split = Vec::new();
        let split_rows = tpch::write_table_in_parts(table, 0.01, 7, &mut split).unwrap();
        assert_eq!(split_rows, rows, "{}", table.name());
        assert!(split == whole, "{} in 7 parts differs", table.name());
        // Nor does the thread count.
        let (one, _) = in_pool(1, || tpch_bytes(table, 0.01));
        let (three, _) = in_pool(3, || tpch_bytes(table, 0.01));
        assert!(one == whole && three == whole, "{}", table.name());
    }
    // Another scale factor: as in dbgen, customers are a prefix of the
    // larger scale's, lines are not (part keys scale with SF).
    let (a, _) = tpch_bytes(Table::Customer, 0.01);
    let (b, rows) = tpch_bytes(Table::Customer, 0.02);
    assert_eq!(rows, 3_000);
    assert!(b.len() > a.len() && b.starts_with(&a));
    let (a, _) = tpch_bytes(Table::LineItem, 0.01);
    let (b, _) = tpch_bytes(Table::LineItem, 0.02);
    assert!(!b.starts_with(&a[..a.len() / 2]));
}

#[test]
fn tpch_writes_eight_files() {
    let dir = std::env::temp_dir().join(format!("katydid-tpch-{}", std::process::id()));
    let written = tpch::write_tables(&dir, 0.01).expect("written");
    assert_eq!(written.len(), 8);
    for (table, path, rows) in &written {
        assert_eq!(
            path.file_name().unwrap().to_str(),
            Some(table.file_name().as_str())
        );
        let bytes = std::fs::read(path).expect("file");
        assert_eq!(records(&bytes).1.len() as u64, *rows);
    }
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(tpch::write_tables(&dir, 0.0).is_err());
    assert!(!dir.exists(), "nothing written for a bad scale factor");
}

fn join_bytes(data: &JoinData, table: JoinTable) -> Vec<u8> {
    let mut out = Vec::new();
    let rows = data.write_table(table, &mut out).expect("in memory");
    assert_eq!(rows, data.rows(table));
    out
}

/// Each table of the join task as header and records.
fn join_tables(rows: u64, seed: u64) -> HashMap<JoinTable, (Vec<String>, Vec<Vec<String>>)> {
    let data = JoinData::new(rows, seed).expect("keys");
    JoinTable::ALL
        .into_iter()
        .map(|t| (t, records(&join_bytes(&data, t))))
        .collect()
}

fn keys<'a>(t: &'a (Vec<String>, Vec<Vec<String>>), name: &str) -> Vec<&'a str> {
    col(&t.0, &t.1, name)
}

fn distinct<'a>(v: &[&'a str]) -> HashSet<&'a str> {
    v.iter().copied().collect()
}

#[test]
fn join_tables_have_the_shapes_of_join_datagen() {
    let n = 20_000;
    let t = join_tables(n, 42);
    let (x, small, medium, big) = (
        &t[&JoinTable::X],
        &t[&JoinTable::Small],
        &t[&JoinTable::Medium],
        &t[&JoinTable::Big],
    );
    assert_eq!(x.0.join(","), "id1,id2,id3,id4,id5,id6,v1");
    assert_eq!(small.0.join(","), "id1,id4,v2");
    assert_eq!(medium.0.join(","), "id1,id2,id4,id5,v2");
    assert_eq!(big.0.join(","), "id1,id2,id3,id4,id5,id6,v2");
    // Rows: N, N/1e6 (raised to 10), N/1e3, N.
    let counts: Vec<usize> = [x, small, medium, big].iter().map(|t| t.1.len()).collect();
    assert_eq!(counts, [20_000, 10, 20, 20_000]);

    // x: each level's keys all present (x ∪ l, 1.1 · n keys drawn from
    // 1..=1.1 · n minus r), id3 unique.
    let (x1, x2, x3) = (keys(x, "id1"), keys(x, "id2"), keys(x, "id3"));
    assert_eq!(distinct(&x1).len(), 10);
    assert_eq!(distinct(&x2).len(), 20);
    assert_eq!(distinct(&x3).len(), 20_000);
    // The right sides' keys: unique where the script makes them so.
    let (s1, m2, b3) = (keys(small, "id1"), keys(medium, "id2"), keys(big, "id3"));
    assert_eq!(distinct(&s1).len(), s1.len());
    assert_eq!(distinct(&m2).len(), m2.len());
    assert_eq!(distinct(&b3).len(), b3.len());
    // 90% of each level's keys on both sides (x), 10% left only (l), 10%
    // right only (r).
    for (left, right, n) in [(&x1, &s1, 10), (&x2, &m2, 20), (&x3, &b3, 20_000)] {
        let (l, r) = (distinct(left), distinct(right));
        assert_eq!(l.intersection(&r).count(), n * 9 / 10);
        assert_eq!(l.difference(&r).count(), n / 10);
        assert_eq!(r.difference(&l).count(), n / 10);
        let all: HashSet<u64> = l.union(&r).map(|k| k.parse().unwrap()).collect();
        assert_eq!(all, (1..=(n + n / 10) as u64).collect());
    }
    // medium and big draw id1 (and big id2) from the right keys of their
    // level, which small (and medium) hold each once.
    let small1 = distinct(&s1);
    let medium2 = distinct(&m2);
    assert!(keys(medium, "id1").iter().all(|k| small1.contains(k)));
    assert!(keys(big, "id1").iter().all(|k| small1.contains(k)));
    assert!(keys(big, "id2").iter().all(|k| medium2.contains(k)));
    assert_eq!(distinct(&keys(big, "id1")), small1);

    // id4..id6 are id1..id3 with the prefix `id`; v is in [0, 100] with at
    // most 6 decimals.
    for (table, v) in [(x, "v1"), (small, "v2"), (medium, "v2"), (big, "v2")] {
        for (int, text) in [("id1", "id4"), ("id2", "id5"), ("id3", "id6")] {
            if table.0.iter().any(|h| h == int) {
                let ints = keys(table, int);
                for (i, s) in ints.iter().zip(keys(table, text)) {
                    assert_eq!(format!("id{i}"), s);
                }
            }
        }
        let values = keys(table, v);
        for s in &values {
            let f: f64 = s.parse().unwrap();
            assert!((0.0..=100.0).contains(&f), "{s}");
            assert!(
                s.split_once('.')
                    .is_none_or(|(_, d)| d.len() <= 6 && !d.ends_with('0'))
            );
        }
        assert!(distinct(&values).len() * 10 > values.len() * 9);
    }
}

#[test]
fn join_bytes_depend_on_rows_and_seed_alone() {
    let n = 150_000; // more than two chunks of x and big
    let a = JoinData::new(n, 7).unwrap();
    let b = JoinData::new(n, 7).unwrap();
    let other = JoinData::new(n, 8).unwrap();
    for table in JoinTable::ALL {
        let bytes = join_bytes(&a, table);
        assert!(bytes == join_bytes(&b, table), "{}", table.name());
        assert!(bytes != join_bytes(&other, table), "{}", table.name());
        let one = in_pool(1, || join_bytes(&a, table));
        let three = in_pool(3, || join_bytes(&a, table));
        assert!(one == bytes && three == bytes, "{}", table.name());
    }
}
