//! Joins, subqueries, CTEs and set operations against nested loops.
//!
//! Random tables `a(k, v, s)` and `b(k, w, t)` (small key ranges, so keys
//! repeat; NULL keys; sometimes no rows) are loaded in partitions of 3, 7
//! or 1,000 rows. Each join kind is computed here by nested loops over the
//! rows as generated; that result is loaded as one flat table `j`, and the
//! engine's answer over the join must equal its answer over `j` (the
//! single-table path, which the differential test checks against the
//! reference evaluator). Semi-joins, set operations and scalar subqueries
//! are compared with answers computed here row by row. Small joins with
//! fixed answers and the errors of composed queries are in
//! `tests/slt/joins/`.

use std::cmp::Ordering;
use std::collections::HashMap;
use std::path::Path;

use katydid::{Database, DatabaseOptions, Error, LoadOptions, Value};

/// xorshift64*: deterministic, no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// One generated row: key, integer value, string (any may be NULL).
type Row = [Option<Cell>; 3];

#[derive(Clone, Debug, PartialEq)]
enum Cell {
    Int(i64),
    Str(String),
}

impl Cell {
    fn value(c: &Option<Cell>) -> Value {
        match c {
            None => Value::Null,
            Some(Cell::Int(i)) => Value::Int(*i),
            Some(Cell::Str(s)) => Value::str(s),
        }
    }

    fn int(c: &Option<Cell>) -> Option<i64> {
        match c {
            Some(Cell::Int(i)) => Some(*i),
            _ => None,
        }
    }
}

/// Rows with keys in `0..keys` times `scale` (a large scale makes the key
/// range sparse, so joins hash the keys instead of indexing an array).
fn rows(rng: &mut Rng, keys: u64, scale: i64) -> Vec<Row> {
    let n = match rng.below(6) {
        0 => 0,
        _ => 1 + rng.below(40) as usize,
    };
    (0..n)
        .map(|_| {
            let k = (rng.below(8) != 0).then(|| Cell::Int(rng.below(keys) as i64 * scale));
            let v = (rng.below(10) != 0).then(|| Cell::Int(rng.below(100) as i64 - 20));
            let s = (rng.below(10) != 0).then(|| Cell::Str(format!("s{}", rng.below(4))));
            [k, v, s]
        })
        .collect()
}

fn csv(header: &str, rows: &[Vec<Option<Cell>>]) -> Vec<u8> {
    let mut out = format!("{header}\n");
    for row in rows {
        let fields: Vec<String> = row
            .iter()
            .map(|c| match c {
                None => String::new(),
                Some(Cell::Int(i)) => i.to_string(),
                Some(Cell::Str(s)) => s.clone(),
            })
            .collect();
        out.push_str(&fields.join(","));
        out.push('\n');
    }
    out.into_bytes()
}

fn load(db: &mut Database, name: &str, header: &str, rows: &[Vec<Option<Cell>>], part: usize) {
    let options = LoadOptions {
        partition_rows: part,
        replace: true,
        ..LoadOptions::default()
    };
    db.load_csv_bytes(
        csv(header, rows),
        Path::new(&format!("{name}.csv")),
        name,
        &options,
    )
    .unwrap_or_else(|e| panic!("loading {name}: {e}"));
}

#[derive(Clone, Copy, Debug)]
enum Kind {
    Inner,
    Left,
    Right,
    Full,
}

/// `a kind JOIN b ON on(a, b)` by nested loops: rows of six cells.
fn nested_loops(
    a: &[Row],
    b: &[Row],
    kind: Kind,
    on: &dyn Fn(&Row, &Row) -> bool,
) -> Vec<Vec<Option<Cell>>> {
    let mut out = Vec::new();
    let mut b_matched = vec![false; b.len()];
    for ra in a {
        let mut matched = false;
        for (j, rb) in b.iter().enumerate() {
            if on(ra, rb) {
                matched = true;
                b_matched[j] = true;
                out.push(ra.iter().chain(rb.iter()).cloned().collect());
            }
        }
        if !matched && matches!(kind, Kind::Left | Kind::Full) {
            out.push(ra.iter().cloned().chain([None, None, None]).collect());
        }
    }
    if matches!(kind, Kind::Right | Kind::Full) {
        for (j, rb) in b.iter().enumerate() {
            if !b_matched[j] {
                out.push(
                    [None, None, None]
                        .into_iter()
                        .chain(rb.iter().cloned())
                        .collect(),
                );
            }
        }
    }
    out
}

/// Equal non-NULL keys.
fn same_key(a: &Row, b: &Row) -> bool {
    matches!((Cell::int(&a[0]), Cell::int(&b[0])), (Some(x), Some(y)) if x == y)
}

fn sorted(mut rows: Vec<Vec<Value>>) -> Vec<Vec<Value>> {
    rows.sort_by(|x, y| {
        x.iter()
            .zip(y)
            .map(|(a, b)| a.total_cmp(b))
            .find(|o| *o != Ordering::Equal)
            .unwrap_or(Ordering::Equal)
    });
    rows
}

fn query(db: &Database, sql: &str) -> Vec<Vec<Value>> {
    db.query(sql)
        .unwrap_or_else(|e| panic!("{sql}\n{e} (at {:?})", e.offset()))
        .rows
}

/// A database running queries on two threads.
fn two_threads() -> Database {
    Database::new(DatabaseOptions {
        threads: 2,
        ..Default::default()
    })
    .unwrap()
}

/// The lines EXPLAIN ANALYZE prints for `sql`, one string: a composed
/// query's join algorithms and filters are chosen from the rows its scans
/// give, so only a run shows them (plain EXPLAIN runs nothing).
fn explain(db: &Database, sql: &str) -> String {
    query(db, &format!("EXPLAIN ANALYZE {sql}"))
        .iter()
        .map(|r| format!("{}\n", r[0]))
        .collect()
}

/// Loads CSV `bytes` as table `name` in partitions of `rows` rows,
/// replacing a table of that name.
fn load_bytes(db: &mut Database, name: &str, bytes: Vec<u8>, rows: usize) {
    let options = LoadOptions {
        partition_rows: rows,
        replace: true,
        ..LoadOptions::default()
    };
    db.load_csv_bytes(bytes, Path::new(&format!("{name}.csv")), name, &options)
        .unwrap_or_else(|e| panic!("loading {name}: {e}"));
}

/// Both queries' rows as multisets.
fn same(db: &Database, joined: &str, flat: &str, context: &str) {
    let (x, y) = (sorted(query(db, joined)), sorted(query(db, flat)));
    assert_eq!(x, y, "{context}\njoin: {joined}\nflat: {flat}");
}

const JOIN_HEADER: &str = "a_k,a_v,a_s,b_k,b_w,b_t";

#[test]
fn joins_agree_with_nested_loops() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut db = two_threads();
    for round in 0..24 {
        let keys = 1 + rng.below(12);
        // Dense keys (an array of heads), keys spread past 64 per build
        // row (a hash table alone), and between (a hash table behind a
        // bitmap of the keys present).
        let scale = [1, 1_000_003, 300][(round / 3) % 3];
        let (a, b) = (rows(&mut rng, keys, scale), rows(&mut rng, keys, scale));
        let part = [3, 7, 1000][round % 3];
        let as_vec = |r: &[Row]| r.iter().map(|x| x.to_vec()).collect::<Vec<_>>();
        load(&mut db, "a", "k,v,s", &as_vec(&a), part);
        load(&mut db, "b", "k,w,t", &as_vec(&b), part);
        let c = rng.below(60) as i64 - 10;
        let two = |x: &Row, y: &Row| {
            same_key(x, y)
                && matches!((Cell::int(&x[1]), Cell::int(&y[1])), (Some(p), Some(q)) if p == q)
        };
        for kind in [Kind::Inner, Kind::Left, Kind::Right, Kind::Full] {
            let context = format!("round {round}, {kind:?}, a = {a:?}, b = {b:?}");
            let sql_kind = format!("{kind:?}").to_uppercase();
            // Two integer keys: packed into one integer per row, values
            // outside the range both sides share matching nothing.
            load(
                &mut db,
                "j",
                JOIN_HEADER,
                &nested_loops(&a, &b, kind, &two),
                part,
            );
            same(
                &db,
                &format!(
                    "SELECT a.k, a.v, a.s, b.k, b.w, b.t FROM a {sql_kind} JOIN b ON a.k = b.k AND a.v = b.w"
                ),
                "SELECT a_k, a_v, a_s, b_k, b_w, b_t FROM j",
                &context,
            );
            load(
                &mut db,
                "j",
                JOIN_HEADER,
                &nested_loops(&a, &b, kind, &same_key),
                part,
            );
            same(
                &db,
                &format!(
                    "SELECT a.k, a.v, a.s, b.k, b.w, b.t FROM a {sql_kind} JOIN b ON a.k = b.k"
                ),
                "SELECT a_k, a_v, a_s, b_k, b_w, b_t FROM j",
                &context,
            );
            // A USING column is the first non-NULL of both sides (the
            // right side's key for a row only it has).
            same(
                &db,
                &format!(
                    "SELECT k, v, w FROM a {sql_kind} JOIN b USING (k) WHERE k IS NOT NULL OR v > {c}"
                ),
                &format!(
                    "SELECT coalesce(a_k, b_k), a_v, b_w FROM j WHERE coalesce(a_k, b_k) IS NOT NULL OR a_v > {c}"
                ),
                &context,
            );
            same(
                &db,
                &format!(
                    "SELECT s, count(*), sum(w), min(v), count(t) FROM a {sql_kind} JOIN b ON b.k = a.k WHERE v > {c} OR w < {c} GROUP BY s"
                ),
                &format!(
                    "SELECT a_s, count(*), sum(b_w), min(a_v), count(b_t) FROM j WHERE a_v > {c} OR b_w < {c} GROUP BY a_s"
                ),
                &context,
            );
            same(
                &db,
                &format!(
                    "SELECT b.t, sum(a.v) AS x FROM a {sql_kind}{} JOIN b ON a.k = b.k WHERE a.v > {c} GROUP BY 1 ORDER BY x DESC LIMIT 3",
                    if matches!(kind, Kind::Inner) {
                        ""
                    } else {
                        " OUTER"
                    }
                ),
                &format!(
                    "SELECT b_t, sum(a_v) AS x FROM j WHERE a_v > {c} GROUP BY 1 ORDER BY x DESC LIMIT 3"
                ),
                &context,
            );
            // A filter in ON on the padded side keeps the preserved rows.
            if matches!(kind, Kind::Left | Kind::Inner) {
                let on =
                    |x: &Row, y: &Row| same_key(x, y) && Cell::int(&y[1]).is_some_and(|w| w > c);
                load(
                    &mut db,
                    "j",
                    JOIN_HEADER,
                    &nested_loops(&a, &b, kind, &on),
                    part,
                );
                same(
                    &db,
                    &format!("SELECT a.v, b.w FROM a {sql_kind} JOIN b ON a.k = b.k AND b.w > {c}"),
                    "SELECT a_v, b_w FROM j",
                    &context,
                );
            }
        }
        // Inner joins: two keys, USING, a comma join with a residual
        // condition, and a self-join.
        let context = format!("round {round}, a = {a:?}, b = {b:?}");
        load(
            &mut db,
            "j",
            JOIN_HEADER,
            &nested_loops(&a, &b, Kind::Inner, &two),
            part,
        );
        same(
            &db,
            "SELECT a.s, b.t FROM a JOIN b ON a.k = b.k AND a.v = b.w",
            "SELECT a_s, b_t FROM j",
            &context,
        );
        load(
            &mut db,
            "j",
            JOIN_HEADER,
            &nested_loops(&a, &b, Kind::Inner, &same_key),
            part,
        );
        same(
            &db,
            "SELECT k, v, w FROM a JOIN b USING (k)",
            "SELECT a_k, a_v, b_w FROM j",
            &context,
        );
        // A subquery in FROM that only projects and filters is merged into
        // its reader; one that groups is not.
        same(
            &db,
            &format!(
                "SELECT count(*), sum(w), max(s) FROM (SELECT a.*, b.w AS w FROM a JOIN b ON a.k = b.k WHERE b.w > {c}) AS t WHERE t.v < 50"
            ),
            &format!("SELECT count(*), sum(b_w), max(a_s) FROM j WHERE b_w > {c} AND a_v < 50"),
            &context,
        );
        same(
            &db,
            "SELECT * FROM (SELECT b.t, a.v + 1 AS v1 FROM a JOIN b ON a.k = b.k) AS t ORDER BY v1 DESC, t LIMIT 4",
            "SELECT b_t AS t, a_v + 1 AS v1 FROM j ORDER BY v1 DESC, t LIMIT 4",
            &context,
        );
        same(
            &db,
            "SELECT count(*), sum(s) FROM (SELECT a.k, sum(b.w) AS s FROM a JOIN b ON a.k = b.k GROUP BY a.k) AS g",
            "SELECT count(*), sum(s) FROM (SELECT a_k, sum(b_w) AS s FROM j GROUP BY a_k) AS g",
            &context,
        );
        same(
            &db,
            "SELECT count(*), sum(a.v * b.w) FROM b, a WHERE a.k = b.k AND a.v < b.w",
            "SELECT count(*), sum(a_v * b_w) FROM j WHERE a_v < b_w",
            &context,
        );
        same(
            &db,
            &format!(
                "SELECT count(*), sum(a.v) FROM a, b WHERE (a.k = b.k AND a.v > {c}) OR (b.k = a.k AND b.w < {c}) OR (a.k = b.k AND a.s = 's1')"
            ),
            &format!("SELECT count(*), sum(a_v) FROM j WHERE a_v > {c} OR b_w < {c} OR a_s = 's1'"),
            &context,
        );
        // Every branch names each side: filters derived for both scans.
        same(
            &db,
            &format!(
                "SELECT count(*), sum(a.v) FROM a, b WHERE a.k = b.k AND ((a.v > {c} AND b.w < {c}) OR (a.s = 's1' AND b.t <> 's2' AND a.v < b.w))"
            ),
            &format!(
                "SELECT count(*), sum(a_v) FROM j WHERE (a_v > {c} AND b_w < {c}) OR (a_s = 's1' AND b_t <> 's2' AND a_v < b_w)"
            ),
            &context,
        );
        same(
            &db,
            "SELECT count(*), sum(y) FROM (SELECT k, v FROM a) AS t (x, y) WHERE x IS NOT NULL",
            "SELECT count(*), sum(v) FROM a WHERE k IS NOT NULL",
            &context,
        );
        let self_pairs: i64 = a
            .iter()
            .map(|x| a.iter().filter(|y| same_key(x, y)).count() as i64)
            .sum();
        assert_eq!(
            query(&db, "SELECT count(*) FROM a x JOIN a y ON x.k = y.k"),
            vec![vec![Value::Int(self_pairs)]],
            "{context}"
        );
        subqueries_and_set_operations(&db, &a, &b, &context);
    }
}

fn ints(rows: &[Row], column: usize) -> Vec<Option<i64>> {
    rows.iter().map(|r| Cell::int(&r[column])).collect()
}

fn subqueries_and_set_operations(db: &Database, a: &[Row], b: &[Row], context: &str) {
    let (ak, bk) = (ints(a, 0), ints(b, 0));
    let col = |rows: Vec<Vec<Value>>| -> Vec<Value> {
        sorted(rows).into_iter().map(|r| r[0].clone()).collect()
    };
    let vals = |v: Vec<Option<i64>>| -> Vec<Value> {
        let rows = v
            .into_iter()
            .map(|x| vec![x.map_or(Value::Null, Value::Int)])
            .collect();
        col(rows)
    };
    // IN and NOT IN with SQL's NULL semantics.
    let b_null = bk.iter().any(Option::is_none);
    let in_b = |k: Option<i64>| k.is_some() && bk.contains(&k);
    let expected_in: Vec<Option<i64>> = a
        .iter()
        .filter(|r| in_b(Cell::int(&r[0])))
        .map(|r| Cell::int(&r[1]))
        .collect();
    assert_eq!(
        col(query(db, "SELECT v FROM a WHERE k IN (SELECT k FROM b)")),
        vals(expected_in),
        "IN: {context}"
    );
    let expected_not_in: Vec<Option<i64>> = a
        .iter()
        .filter(|r| {
            let k = Cell::int(&r[0]);
            b.is_empty() || (k.is_some() && !in_b(k) && !b_null)
        })
        .map(|r| Cell::int(&r[1]))
        .collect();
    assert_eq!(
        col(query(
            db,
            "SELECT v FROM a WHERE k NOT IN (SELECT k FROM b)"
        )),
        vals(expected_not_in),
        "NOT IN: {context}"
    );
    // Scalar subquery and EXISTS.
    let max_w = b.iter().filter_map(|r| Cell::int(&r[1])).max();
    let above = a
        .iter()
        .filter(|r| matches!((Cell::int(&r[1]), max_w), (Some(v), Some(m)) if v > m - 30))
        .count() as i64;
    assert_eq!(
        query(
            db,
            "SELECT count(*) FROM a WHERE v > (SELECT max(w) FROM b) - 30"
        ),
        vec![vec![Value::Int(above)]],
        "scalar: {context}"
    );
    let exists = if b.iter().any(|r| Cell::int(&r[1]).is_some_and(|w| w > 50)) {
        a.len() as i64
    } else {
        0
    };
    assert_eq!(
        query(
            db,
            "SELECT count(*) FROM a WHERE EXISTS (SELECT 1 FROM b WHERE w > 50)"
        ),
        vec![vec![Value::Int(exists)]],
        "EXISTS: {context}"
    );
    // Correlated: EXISTS and NOT EXISTS with a key and a comparison, and
    // an aggregate compared per outer row.
    let matches = |ra: &Row| {
        b.iter().any(|rb| {
            same_key(ra, rb)
                && matches!((Cell::int(&rb[1]), Cell::int(&ra[1])), (Some(w), Some(v)) if w > v)
        })
    };
    for (not, keep) in [("", true), ("NOT ", false)] {
        let expected: Vec<Option<i64>> = a
            .iter()
            .filter(|r| matches(r) == keep)
            .map(|r| Cell::int(&r[1]))
            .collect();
        let sql = format!(
            "SELECT v FROM a WHERE {not}EXISTS (SELECT * FROM b WHERE b.k = a.k AND b.w > a.v)"
        );
        assert_eq!(col(query(db, &sql)), vals(expected), "{sql}: {context}");
    }
    // A string key, and a key of two parts (an integer and a string).
    let same_s = |ra: &Row, rb: &Row| matches!((&ra[2], &rb[2]), (Some(x), Some(y)) if x == y);
    for (not, keep) in [("", true), ("NOT ", false)] {
        for (on, two) in [("b.t = a.s", false), ("b.k = a.k AND b.t = a.s", true)] {
            let expected: Vec<Option<i64>> = a
                .iter()
                .filter(|ra| {
                    b.iter()
                        .any(|rb| same_s(ra, rb) && (!two || same_key(ra, rb)))
                        == keep
                })
                .map(|r| Cell::int(&r[1]))
                .collect();
            let sql = format!("SELECT v FROM a WHERE {not}EXISTS (SELECT * FROM b WHERE {on})");
            assert_eq!(col(query(db, &sql)), vals(expected), "{sql}: {context}");
        }
    }
    let mut sum_w: HashMap<i64, Option<i64>> = HashMap::new();
    for r in b {
        if let Some(k) = Cell::int(&r[0]) {
            let entry = sum_w.entry(k).or_insert(None);
            if let Some(w) = Cell::int(&r[1]) {
                *entry = Some(entry.unwrap_or(0) + w);
            }
        }
    }
    let below = a
        .iter()
        .filter(|r| {
            let (k, v) = (Cell::int(&r[0]), Cell::int(&r[1]));
            matches!((k.and_then(|k| sum_w.get(&k).copied().flatten()), v), (Some(s), Some(v)) if v < s)
        })
        .count() as i64;
    let sql = "SELECT count(*) FROM a WHERE a.v < (SELECT sum(w) FROM b WHERE b.k = a.k)";
    assert_eq!(
        query(db, sql),
        vec![vec![Value::Int(below)]],
        "{sql}: {context}"
    );
    // With a filter of the outer table, the subquery groups only the keys
    // that pass it (its key domain); the answer is the same.
    let below_s1 = a
        .iter()
        .filter(|r| {
            let (k, v) = (Cell::int(&r[0]), Cell::int(&r[1]));
            r[2] == Some(Cell::Str("s1".into()))
                && matches!((k.and_then(|k| sum_w.get(&k).copied().flatten()), v), (Some(s), Some(v)) if v < s)
        })
        .count() as i64;
    let sql =
        "SELECT count(*) FROM a WHERE s = 's1' AND a.v < (SELECT sum(w) FROM b WHERE b.k = a.k)";
    assert_eq!(
        query(db, sql),
        vec![vec![Value::Int(below_s1)]],
        "{sql}: {context}"
    );
    // In the select list every outer row stays: NULL where no row of b
    // has its key (or all its w are NULL), a count of 0 there; and a
    // count compared with 0 in WHERE keeps the rows without a match.
    let rows_of = |k: Option<i64>| {
        b.iter()
            .filter(|rb| k.is_some() && Cell::int(&rb[0]) == k)
            .count() as i64
    };
    let mut expected: Vec<Vec<Value>> = a
        .iter()
        .map(|r| {
            let k = Cell::int(&r[0]);
            let sum = k
                .and_then(|k| sum_w.get(&k).copied().flatten())
                .map_or(Value::Null, Value::Int);
            vec![Cell::value(&r[1]), sum, Value::Int(rows_of(k))]
        })
        .collect();
    let sql = "SELECT v, (SELECT sum(w) FROM b WHERE b.k = a.k), (SELECT count(*) FROM b WHERE b.k = a.k) FROM a";
    assert_eq!(
        sorted(query(db, sql)),
        sorted(std::mem::take(&mut expected)),
        "{sql}: {context}"
    );
    let unmatched = a.iter().filter(|r| rows_of(Cell::int(&r[0])) == 0).count() as i64;
    let sql = "SELECT count(*) FROM a WHERE (SELECT count(*) FROM b WHERE b.k = a.k) = 0";
    assert_eq!(
        query(db, sql),
        vec![vec![Value::Int(unmatched)]],
        "{sql}: {context}"
    );
    // Set operations on the keys, NULLs equal to each other.
    let mut counts_b: HashMap<Option<i64>, usize> = HashMap::new();
    for k in &bk {
        *counts_b.entry(*k).or_default() += 1;
    }
    let distinct = |v: Vec<Option<i64>>| {
        let mut out: Vec<Option<i64>> = Vec::new();
        for x in v {
            if !out.contains(&x) {
                out.push(x);
            }
        }
        out
    };
    let union_all: Vec<Option<i64>> = ak.iter().chain(&bk).copied().collect();
    let mut left = counts_b.clone();
    let intersect_all: Vec<Option<i64>> = ak
        .iter()
        .filter(|k| match left.get_mut(k) {
            Some(n) if *n > 0 => {
                *n -= 1;
                true
            }
            _ => false,
        })
        .copied()
        .collect();
    let mut left = counts_b.clone();
    let except_all: Vec<Option<i64>> = ak
        .iter()
        .filter(|k| match left.get_mut(k) {
            Some(n) if *n > 0 => {
                *n -= 1;
                false
            }
            _ => true,
        })
        .copied()
        .collect();
    let cases = [
        ("UNION ALL", union_all.clone()),
        ("UNION", distinct(union_all)),
        ("INTERSECT ALL", intersect_all),
        (
            "INTERSECT",
            distinct(ak.iter().filter(|k| bk.contains(k)).copied().collect()),
        ),
        ("EXCEPT ALL", except_all),
        (
            "EXCEPT",
            distinct(ak.iter().filter(|k| !bk.contains(k)).copied().collect()),
        ),
    ];
    for (op, expected) in cases {
        let sql = format!("SELECT k FROM a {op} SELECT k FROM b");
        assert_eq!(col(query(db, &sql)), vals(expected), "{sql}: {context}");
    }
    // DISTINCT, a CTE and a subquery in FROM.
    assert_eq!(
        col(query(db, "SELECT DISTINCT k FROM a")),
        vals(distinct(ak.clone())),
        "DISTINCT: {context}"
    );
    let mut sums: HashMap<i64, i64> = HashMap::new();
    for r in b {
        if let (Some(k), Some(w)) = (Cell::int(&r[0]), Cell::int(&r[1])) {
            *sums.entry(k).or_default() += w;
        }
    }
    let mut expected = Vec::new();
    for r in a {
        if let Some(k) = Cell::int(&r[0])
            && let Some(s) = sums.get(&k)
        {
            expected.push(vec![Cell::value(&r[1]), Value::Int(*s)]);
        }
    }
    let sql = "WITH t AS (SELECT k, sum(w) AS sw FROM b WHERE w IS NOT NULL GROUP BY k) \
               SELECT a.v, t.sw FROM a JOIN t ON a.k = t.k";
    assert_eq!(
        sorted(query(db, sql)),
        sorted(expected.clone()),
        "{sql}: {context}"
    );
    let sql = "SELECT x.v, y.sw FROM (SELECT k, v FROM a) AS x, \
               (SELECT k, sum(w) AS sw FROM b WHERE w IS NOT NULL GROUP BY k) y WHERE x.k = y.k";
    assert_eq!(sorted(query(db, sql)), sorted(expected), "{sql}: {context}");
}

#[test]
fn create_table_as_keeps_a_result_and_drop_table_removes_it() {
    let mut db = two_threads();
    let mut rng = Rng(7);
    let a = rows(&mut rng, 5, 1);
    let a: Vec<Vec<Option<Cell>>> = a.iter().map(|r| r.to_vec()).collect();
    load(&mut db, "a", "k,v,s", &a, 3);
    let grouped = "SELECT k, count(*) AS n, sum(v) AS total, min(s) AS first FROM a GROUP BY k";
    let expected = sorted(query(&db, grouped));
    let created = db
        .execute(&format!("CREATE TABLE g AS {grouped}"))
        .expect("creates");
    assert_eq!(created.rows, vec![vec![Value::Int(expected.len() as i64)]]);
    assert!(Database::changes_tables(
        "create or replace table g as select 1"
    ));
    assert!(!Database::changes_tables("SELECT * FROM g"));
    // The new table answers like the query it was made from, with the
    // query's names and types.
    assert_eq!(sorted(query(&db, "SELECT * FROM g")), expected);
    let described = query(&db, "DESCRIBE g");
    let names: Vec<Value> = described.iter().map(|r| r[0].clone()).collect();
    assert_eq!(names, ["k", "n", "total", "first"].map(Value::str).to_vec());
    // Without OR REPLACE an existing name is refused and the table kept.
    match db.execute("CREATE TABLE g AS SELECT 1") {
        Err(Error::Plan { offset, message }) => {
            assert_eq!(offset, Some("CREATE TABLE ".len()));
            assert!(message.contains("already exists"), "{message}");
        }
        other => panic!("CREATE over a table: {other:?}"),
    }
    assert_eq!(sorted(query(&db, "SELECT * FROM g")), expected);
    // A failing query creates nothing and keeps the old table.
    assert!(
        db.execute("CREATE OR REPLACE TABLE g AS SELECT nope FROM a")
            .is_err()
    );
    assert_eq!(sorted(query(&db, "SELECT * FROM g")), expected);
    db.execute("CREATE OR REPLACE TABLE g AS SELECT 42 AS answer")
        .expect("replaces");
    assert_eq!(query(&db, "SELECT * FROM g"), vec![vec![Value::Int(42)]]);
    // query() leaves the tables alone and says what to use instead.
    assert!(matches!(db.query("DROP TABLE g"), Err(Error::Plan { .. })));
    db.execute("DROP TABLE g").expect("drops");
    assert!(db.query("SELECT * FROM g").is_err());
    assert!(matches!(
        db.execute("DROP TABLE g"),
        Err(Error::Plan { .. })
    ));
    db.execute("DROP TABLE IF EXISTS g").expect("no error");
    assert_eq!(db.table_names(), vec!["a".to_string()]);
}

/// Join filters (the reduced side's keys narrowing the other side's scan)
/// never change an answer: a fact table of 6,000 rows in partitions of
/// 500 (keys with NULLs; sorted in some rounds, so that zone maps rule out
/// partitions) joined with a 400-row dimension table filtered to a few,
/// none or all of its rows, on dense keys (a bitmap of keys) and sparse
/// ones (a hash set), against sums computed here (a dimension join, d's
/// keys being unique, and a chain of joins through a key, hash joins with
/// join filters); and [NOT] EXISTS over the fact table, whose scan the
/// outer rows' keys narrow. EXPLAIN names the filter when the reduced side
/// has at most half the other's rows.
#[test]
fn join_filters_narrow_scans_without_changing_answers() {
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let mut db = two_threads();
    for round in 0..6 {
        let scale: i64 = [1, 1_000_003, 97][round % 3];
        let dims: Vec<(i64, i64)> = (0..400)
            .map(|k| (k * scale, rng.below(100) as i64))
            .collect();
        let mut facts: Vec<(Option<i64>, i64)> = (0..6000)
            .map(|_| {
                let k = (rng.below(10) > 0).then(|| rng.below(500) as i64 * scale);
                (k, rng.below(1000) as i64)
            })
            .collect();
        if round >= 3 {
            facts.sort_by_key(|f| f.0);
        }
        let cell = |v: Option<i64>| v.map_or_else(String::new, |x| x.to_string());
        let mut d = b"dk,x\n".to_vec();
        for (k, x) in &dims {
            d.extend(format!("{k},{x}\n").bytes());
        }
        let mut f = b"fk,v\n".to_vec();
        for (k, v) in &facts {
            f.extend(format!("{},{v}\n", cell(*k)).bytes());
        }
        for (name, bytes, part) in [("d", d, 64), ("f", f, 500)] {
            load_bytes(&mut db, name, bytes, part);
        }
        for t in [0, 3, 40, 101] {
            let sql = format!(
                "SELECT count(*), sum(f.v), sum(d.x) FROM f JOIN d ON f.fk = d.dk WHERE d.x < {t}"
            );
            let (mut n, mut sv, mut sx) = (0i64, 0i64, 0i64);
            for (k, v) in &facts {
                for (dk, x) in &dims {
                    if *k == Some(*dk) && *x < t {
                        n += 1;
                        sv += v;
                        sx += x;
                    }
                }
            }
            let sum = |s: i64| if n == 0 { Value::Null } else { Value::Int(s) };
            let want = vec![vec![Value::Int(n), sum(sv), sum(sx)]];
            assert_eq!(query(&db, &sql), want, "round {round}: {sql}");
            let plan = explain(&db, &sql);
            let kept = dims.iter().filter(|(_, x)| *x < t).count();
            // d's keys are unique: a dimension join when f.fk has few codes
            // (its filter is the lookup itself, not a join filter), which
            // sorted keys stored as runs have not.
            if round < 3 || plan.contains("dimension join: d (") {
                assert!(
                    plan.contains("dimension join: d (") && !plan.contains("join filter"),
                    "round {round}: {sql}\n{plan}"
                );
            } else {
                assert_eq!(
                    plan.contains("join filter on f.fk"),
                    kept < dims.len() && kept * 2 <= facts.len(),
                    "round {round}: {sql}\n{plan}"
                );
            }
            // Keys equal through a chain (g.fk = f.fk = d.dk): g's scan is
            // narrowed by d's keys though the two are not joined directly.
            let sql = format!(
                "SELECT count(*), sum(g.v) FROM d, f, f AS g WHERE d.dk = f.fk AND f.fk = g.fk AND d.x < {t}"
            );
            let (mut n, mut sv) = (0i64, 0i64);
            for (dk, x) in &dims {
                if *x >= t {
                    continue;
                }
                let vs: Vec<i64> = facts
                    .iter()
                    .filter(|(k, _)| *k == Some(*dk))
                    .map(|(_, v)| *v)
                    .collect();
                n += (vs.len() * vs.len()) as i64;
                sv += vs.len() as i64 * vs.iter().sum::<i64>();
            }
            let sum = if n == 0 { Value::Null } else { Value::Int(sv) };
            assert_eq!(
                query(&db, &sql),
                vec![vec![Value::Int(n), sum]],
                "round {round}: {sql}"
            );
            let plan = explain(&db, &sql);
            assert_eq!(
                plan.contains("join filter on g.fk"),
                kept < dims.len() && kept * 2 <= facts.len(),
                "round {round}: {sql}\n{plan}"
            );
            // [NOT] EXISTS: the subquery's scan narrowed to the outer keys.
            for not in ["", "NOT "] {
                let sql = format!(
                    "SELECT count(*), sum(x) FROM d WHERE x < {t} AND {not}EXISTS (SELECT 1 FROM f WHERE f.fk = d.dk)"
                );
                let rows: Vec<i64> = dims
                    .iter()
                    .filter(|(dk, x)| {
                        *x < t && facts.iter().any(|(k, _)| *k == Some(*dk)) == not.is_empty()
                    })
                    .map(|(_, x)| *x)
                    .collect();
                let sum = if rows.is_empty() {
                    Value::Null
                } else {
                    Value::Int(rows.iter().sum())
                };
                let want = vec![vec![Value::Int(rows.len() as i64), sum]];
                assert_eq!(query(&db, &sql), want, "round {round}: {sql}");
                let plan = explain(&db, &sql);
                // At most 400 outer keys against 6,000 rows.
                assert!(
                    plan.contains("join filter on fk"),
                    "round {round}: {sql}\n{plan}"
                );
            }
        }
    }
}

/// Dimension joins (a star: each smaller table joined by a unique key to a
/// coded column of the largest, looked up per code) give the hash join's
/// answers: the same queries with a no-op correlated EXISTS, which keeps
/// them on the hash-join path, must return the same rows. Keys are
/// integers (dense, sparse with a common stride, NULLs, keys on one side
/// only) and strings; dimension columns have NULLs; the fact table comes in
/// partitions of 7, 100 or 1,000 rows, sorted in some rounds (where keys
/// in runs keep the hash join). A dimension whose keys repeat is not a
/// star. LEFT joins of dimensions are stars too, compared the same way
/// (with a no-op EXISTS over the fact table).
#[test]
fn dimension_joins_agree_with_hash_joins() {
    let mut rng = Rng(0x51_7cc1_b727_220a);
    let mut db = two_threads();
    for round in 0..6 {
        let scale: i64 = [1, 1_000_003, 97][round % 3];
        let part = [7, 100, 1000][round % 3];
        let cell = |v: Option<String>| v.unwrap_or_default();
        // f(k, s, v): 2,000 rows, keys 0..60 (× scale), 10% NULL.
        let mut facts: Vec<(Option<i64>, Option<String>, i64)> = (0..2000)
            .map(|_| {
                let k = (rng.below(10) > 0).then(|| rng.below(60) as i64 * scale);
                let s = (rng.below(10) > 0).then(|| format!("z{}", rng.below(40)));
                (k, s, rng.below(1000) as i64 - 100)
            })
            .collect();
        if round >= 3 {
            facts.sort_by_key(|f| f.0);
        }
        let mut f = b"k,s,v\n".to_vec();
        for (k, s, v) in &facts {
            let k = k.map(|k| k.to_string());
            f.extend(format!("{},{},{v}\n", cell(k), cell(s.clone())).bytes());
        }
        // di(k, name, w, u): unique keys 10..80 (some only here, 0..10 only
        // in f), names of a few values with NULLs, integers u with NULLs.
        let mut di = b"k,name,w,u\n".to_vec();
        for k in 10..80i64 {
            let name = (rng.below(8) > 0).then(|| format!("n{}", rng.below(5)));
            let u = (rng.below(4) > 0).then(|| (rng.below(2000) as i64 - 1000).to_string());
            di.extend(
                format!(
                    "{},{},{},{}\n",
                    k * scale,
                    cell(name),
                    rng.below(50),
                    cell(u)
                )
                .bytes(),
            );
        }
        // ds(s, boro, x, y): unique string keys z0..z30 (z30..z40 only in
        // f), floats y with NULLs, signed zeros and repeats.
        let mut ds = b"s,boro,x,y\n".to_vec();
        for z in 0..30 {
            let boro = (rng.below(6) > 0).then(|| format!("b{}", rng.below(3)));
            let y = match rng.below(6) {
                0 => None,
                1 => Some("-0.0".to_string()),
                2 => Some("0.0".to_string()),
                _ => Some(format!("{}.5", rng.below(9) as i64 - 4)),
            };
            ds.extend(format!("z{z},{},{}.25,{}\n", cell(boro), rng.below(20), cell(y)).bytes());
        }
        // dup(k, name): keys repeat.
        let mut dup = b"k,name\n".to_vec();
        for k in 0..40i64 {
            dup.extend(format!("{},m{}\n", (k / 2) * scale, k % 3).bytes());
        }
        for (name, bytes, rows) in [
            ("f", f, part),
            ("di", di, 16),
            ("ds", ds, 8),
            ("dup", dup, 16),
        ] {
            load_bytes(&mut db, name, bytes, rows);
        }
        let c = rng.below(800) as i64 - 100;
        let w = rng.below(50);
        let hash = " AND EXISTS (SELECT 1 FROM di AS e WHERE e.k = di.k)";
        let queries = [
            "SELECT di.name, count(*), sum(f.v), sum(di.w) FROM f JOIN di ON f.k = di.k WHERE true{} GROUP BY 1".to_string(),
            format!(
                "SELECT ds.boro, count(*), min(f.v), sum(ds.x) FROM f JOIN ds ON f.s = ds.s, di WHERE f.k = di.k AND ds.x > {}{{}} GROUP BY 1",
                w / 3
            ),
            format!(
                "SELECT di.name, ds.boro, count(*), sum(f.v) FROM f JOIN di ON f.k = di.k JOIN ds ON ds.s = f.s WHERE di.w < {w}{{}} GROUP BY 1, 2"
            ),
            "SELECT count(*), sum(f.v), count(DISTINCT di.name) FROM f, di WHERE f.k = di.k AND f.v < di.w * 10{}".to_string(),
            "SELECT f.v, di.name FROM f JOIN di USING (k) WHERE di.name IS NOT NULL{} ORDER BY 1, 2 LIMIT 7".to_string(),
            // Grouped by a dimension column without NULLs: the rows
            // without a partner are the NULL group, dropped.
            "SELECT di.w, count(*), sum(f.v) FROM f JOIN di ON f.k = di.k WHERE true{} GROUP BY 1 HAVING count(*) > 1".to_string(),
            "SELECT ds.s AS z, di.w, count(*), max(f.v) FROM f JOIN di ON f.k = di.k JOIN ds ON ds.s = f.s WHERE true{} GROUP BY z, di.w".to_string(),
            // Numeric columns of the dimensions, with NULLs: gathered by
            // code, their zone maps from the codes the rows use.
            "SELECT f.s IS NULL, count(*), min(ds.y), max(ds.y), sum(ds.y), count(ds.y), min(di.u), max(di.u), sum(di.u), count(di.u) FROM f JOIN di ON f.k = di.k JOIN ds ON ds.s = f.s WHERE true{} GROUP BY 1".to_string(),
            format!(
                "SELECT di.name, count(*), sum(f.v) FROM f JOIN di ON f.k = di.k JOIN ds ON ds.s = f.s WHERE ds.y > {}.5 AND di.u < {c}{{}} GROUP BY 1",
                (w % 5) as i64 - 3
            ),
            "SELECT ds.y, di.u, count(*) FROM f JOIN di ON f.k = di.k JOIN ds ON ds.s = f.s WHERE true{} GROUP BY 1, 2".to_string(),
        ];
        for q in &queries {
            let star = q.replace("{}", "");
            let forced = q.replace("{}", hash);
            let context = format!("round {round}");
            same(&db, &star, &forced, &context);
            let (p, h) = (explain(&db, &star), explain(&db, &forced));
            if star.contains("GROUP BY 1 HAVING") {
                assert!(
                    round >= 3 || p.contains("the NULL group of di.w"),
                    "{context}: {star}\n{p}"
                );
            }
            // Sorted keys may be stored as runs, which have no codes to
            // look up: then the hash join runs.
            assert!(
                round >= 3 || p.contains("dimension join: di ("),
                "{context}: {star}\n{p}"
            );
            assert!(!h.contains("dimension join"), "{context}: {forced}\n{h}");
        }
        // A filter of the fact's own keeps the hash join (its scan runs the
        // filter before any row is joined).
        let sql = format!(
            "SELECT di.name, count(*), sum(f.v) FROM f JOIN di ON f.k = di.k WHERE f.v > {c} GROUP BY 1"
        );
        let plan = explain(&db, &sql);
        assert!(
            !plan.contains("dimension join"),
            "round {round}: {sql}\n{plan}"
        );
        same(
            &db,
            &sql,
            &sql.replace(
                " GROUP BY",
                " AND EXISTS (SELECT 1 FROM di AS e WHERE e.k = di.k) GROUP BY",
            ),
            &format!("round {round}"),
        );
        // LEFT joins of dimensions: every fact row stays.
        let keep = " AND EXISTS (SELECT 1 FROM f AS e WHERE e.v = f.v)";
        let left = [
            "SELECT di.name, count(*), sum(f.v), count(di.w) FROM f LEFT JOIN di ON f.k = di.k WHERE true{} GROUP BY 1".to_string(),
            format!(
                "SELECT count(*), sum(f.v), count(ds.boro), min(ds.x), count(di.name) FROM f LEFT JOIN ds ON f.s = ds.s AND ds.x > 5 LEFT JOIN di ON f.k = di.k WHERE (di.name IS NULL OR f.v > {c}){{}}"
            ),
        ];
        for q in &left {
            let star = q.replace("{}", "");
            let forced = q.replace("{}", keep);
            let context = format!("round {round}");
            same(&db, &star, &forced, &context);
            let plan = explain(&db, &star);
            assert!(
                round >= 3 || plan.contains("dimension left join: di ("),
                "{context}: {star}\n{plan}"
            );
        }
        // Repeated keys: a hash join, with every pair.
        let sql = "SELECT count(*), sum(f.v) FROM f JOIN dup ON f.k = dup.k";
        let want: (i64, i64) = facts
            .iter()
            .filter_map(|(k, _, v)| {
                let n = (0..40i64).filter(|d| Some((d / 2) * scale) == *k).count() as i64;
                (n > 0).then_some((n, n * v))
            })
            .fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
        let sum = if want.0 == 0 {
            Value::Null
        } else {
            Value::Int(want.1)
        };
        assert_eq!(
            query(&db, sql),
            vec![vec![Value::Int(want.0), sum]],
            "round {round}"
        );
        let plan = explain(&db, sql);
        assert!(!plan.contains("dimension join"), "round {round}\n{plan}");
    }
}

/// Loads `a(k, v)`, `b(k, w, t)` and `flat`, their inner join on `k` by
/// nested loops, as `flat(k, v, w, t)` (partitions of 2 rows).
fn load_small_join(db: &mut Database) {
    let a = [(1, 10), (2, 20), (2, 21), (3, 30)];
    let b = [
        (1, 5, "x"),
        (2, 7, "y"),
        (2, 3, "z"),
        (4, 9, "w"),
        (1, 1, "v"),
    ];
    let mut a_csv = String::from("k,v\n");
    let mut b_csv = String::from("k,w,t\n");
    let mut flat = String::from("k,v,w,t\n");
    for (k, v) in a {
        a_csv += &format!("{k},{v}\n");
        for (bk, w, t) in b {
            if bk == k {
                flat += &format!("{k},{v},{w},{t}\n");
            }
        }
    }
    for (k, w, t) in b {
        b_csv += &format!("{k},{w},{t}\n");
    }
    let options = LoadOptions {
        partition_rows: 2,
        replace: true,
        ..LoadOptions::default()
    };
    for (name, text) in [("a", a_csv), ("b", b_csv), ("flat", flat)] {
        db.load_csv_bytes(
            text.into_bytes(),
            Path::new(&format!("{name}.csv")),
            name,
            &options,
        )
        .unwrap_or_else(|e| panic!("loading {name}: {e}"));
    }
}

/// WITHIN GROUP's ORDER BY over a join reads the joined columns it names
/// (they were not rewritten: "unknown table"). Ties in `listagg`'s order
/// leave the order of `v` open, so the join is compared with its flat
/// form here rather than with fixed text; the string_agg form is in
/// `tests/slt/joins/small.slt`.
#[test]
fn aggregate_order_keys_read_joined_columns() {
    let mut db = Database::new(DatabaseOptions::default()).unwrap();
    load_small_join(&mut db);
    same(
        &db,
        "SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY b.w), listagg(a.v ORDER BY b.t) FROM a, b WHERE a.k = b.k",
        "SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY w), listagg(v ORDER BY t) FROM flat",
        "aggregate ORDER BY over a join",
    );
}

/// A join key that is an expression of each side's columns is hashed as a
/// key computed by the input's scan, not left as a filter over every pair:
/// the same rows as the filter, without a cross join.
#[test]
fn expression_keys_join_by_hash() {
    let mut db = two_threads();
    load_small_join(&mut db);
    for (keyed, filtered) in [
        (
            "SELECT a.k, a.v, b.w FROM a JOIN b ON a.k + 1 = b.k",
            "SELECT a.k, a.v, b.w FROM a JOIN b ON NOT (a.k + 1 <> b.k)",
        ),
        (
            "SELECT a.v, b.t FROM a, b WHERE a.v % 3 = b.w % 3 AND b.t <> 'z'",
            "SELECT a.v, b.t FROM a, b WHERE NOT (a.v % 3 <> b.w % 3) AND b.t <> 'z'",
        ),
        (
            "SELECT a.k, b.t FROM a LEFT JOIN b ON a.k * 2 = b.k * 2 AND b.w > 2",
            "SELECT a.k, b.t FROM a LEFT JOIN b ON a.k = b.k AND b.w > 2",
        ),
        (
            "SELECT x.k, y.k FROM a AS x JOIN a AS y ON x.k - 1 = y.k",
            "SELECT x.k, y.k FROM a AS x JOIN a AS y ON NOT (x.k - 1 <> y.k)",
        ),
        (
            "SELECT * FROM a JOIN b ON upper(b.t) = CASE a.k WHEN 1 THEN 'X' ELSE 'Y' END",
            "SELECT * FROM a JOIN b ON NOT (upper(b.t) <> CASE a.k WHEN 1 THEN 'X' ELSE 'Y' END)",
        ),
    ] {
        same(&db, keyed, filtered, "expression join keys");
        let plan = explain(&db, keyed);
        assert!(
            plan.contains("hash join") && !plan.contains("cross join"),
            "{keyed}\n{plan}"
        );
    }
    // `*` does not show the computed keys.
    let star = db
        .query("SELECT * FROM a JOIN b ON a.k + 1 = b.k + 1")
        .unwrap();
    assert_eq!(star.columns, ["k", "v", "k", "w", "t"]);
}

/// Aggregates without GROUP BY over a join are folded from the joined
/// rows (a star's partitions by key code, or with the rows it drops made
/// NULL past 1,024 codes a partition; a hash join's rows chunk by chunk):
/// the answers equal those over the joined rows gathered first (a
/// subquery with a LIMIT is never merged, so it gathers them).
#[test]
fn aggregates_over_joins_fold_without_gathering_rows() {
    let mut rng = Rng(0x2f0d_5eed_a11c_e551);
    let mut db = two_threads();
    for round in 0..4 {
        // f(k, s, v, x): keys 0..keys (10% NULL), x floats with values
        // ALP keeps as exceptions (2^-30 steps) in some rounds.
        let (rows, keys, part) = [(2000, 60, 500), (6000, 2600, 3000)][round % 2];
        let exceptions = round >= 2;
        let mut f = b"k,s,v,x\n".to_vec();
        for _ in 0..rows {
            let k = (rng.below(10) > 0).then(|| rng.below(keys).to_string());
            let s = (rng.below(10) > 0).then(|| format!("z{}", rng.below(40)));
            let x = match rng.below(8) {
                0 => String::new(),
                1 if exceptions => format!("{}", rng.below(1000) as f64 / (1u64 << 30) as f64),
                _ => format!("{}.25", rng.below(300) as i64 - 100),
            };
            f.extend(
                format!(
                    "{},{},{},{x}\n",
                    k.unwrap_or_default(),
                    s.unwrap_or_default(),
                    rng.below(1000) as i64 - 100
                )
                .bytes(),
            );
        }
        // di(k, name, w, y): unique keys 10..keys·3/4 (0..10 only in f).
        let mut di = b"k,name,w,y\n".to_vec();
        for k in 10..keys * 3 / 4 {
            let name = (rng.below(8) > 0).then(|| format!("n{}", rng.below(5)));
            let w = (rng.below(4) > 0).then(|| (rng.below(2000) as i64 - 1000).to_string());
            let y = match rng.below(5) {
                0 => String::new(),
                1 => "-0.0".to_string(),
                _ => format!("{}.5", rng.below(9) as i64 - 4),
            };
            di.extend(
                format!(
                    "{k},{},{},{y}\n",
                    name.unwrap_or_default(),
                    w.unwrap_or_default()
                )
                .bytes(),
            );
        }
        // ds(s, boro): unique string keys z0..z30.
        let mut ds = b"s,boro\n".to_vec();
        for z in 0..30 {
            ds.extend(format!("z{z},b{}\n", rng.below(3)).bytes());
        }
        // dup(k, m): keys repeat (a hash join).
        let mut dup = b"k,m\n".to_vec();
        for k in 0..40u64 {
            dup.extend(format!("{},{}.5\n", k / 2, k % 7).bytes());
        }
        for (name, bytes, rows) in [
            ("f", f, part),
            ("di", di, 300),
            ("ds", ds, 8),
            ("dup", dup, 16),
        ] {
            load_bytes(&mut db, name, bytes, rows);
        }
        let items = [
            "count(*), sum(f.v), sum(di.w), avg(di.y), count(di.name), min(di.name), max(f.x)",
            "sum(f.x), avg(f.x), count(f.x), min(di.y), max(di.w), sum(di.y), count(di.w)",
            "count(*) + 1, sum(f.v) * 2, min(f.s), max(di.name), avg(f.v)",
        ];
        let froms = [
            ("f JOIN di ON f.k = di.k", "dimension join: di"),
            ("f LEFT JOIN di ON f.k = di.k", "dimension left join: di"),
            (
                "f JOIN di ON f.k = di.k JOIN ds ON f.s = ds.s",
                "dimension join: di",
            ),
            (
                "f LEFT JOIN ds ON f.s = ds.s LEFT JOIN di ON f.k = di.k",
                "dimension left join: di",
            ),
            (
                "f JOIN dup ON f.k = dup.k JOIN di ON di.k = f.k",
                "not gathered",
            ),
        ];
        let context = format!("round {round}");
        for from in froms {
            for list in items {
                let sql = format!("SELECT {list} FROM {}", from.0);
                // The same aggregates over the joined rows gathered first.
                let columns = "f.k AS fk, f.s, f.v, f.x, di.name, di.w, di.y";
                let gathered = format!(
                    "SELECT {} FROM (SELECT {columns} FROM {} LIMIT 1000000000) AS j",
                    list.replace("f.", "j.").replace("di.", "j."),
                    from.0
                );
                same(&db, &sql, &gathered, &context);
                let plan = explain(&db, &sql);
                assert!(
                    plan.contains("folded") && plan.contains(from.1),
                    "{context}: {sql}\n{plan}"
                );
                let with_having = format!("{sql} HAVING count(*) > 100000");
                assert_eq!(
                    query(&db, &with_having),
                    Vec::<Vec<Value>>::new(),
                    "{with_having}"
                );
            }
        }
        // A filter after the join, or a column outside the aggregates:
        // the rows are gathered.
        for sql in [
            "SELECT count(*) FROM f JOIN di ON f.k = di.k WHERE f.v < di.w",
            "SELECT count(*), sum(f.v + 1) FROM f JOIN di ON f.k = di.k",
        ] {
            let plan = explain(&db, sql);
            assert!(!plan.contains("folded"), "{context}: {sql}\n{plan}");
        }
    }
}

/// Joins on comparisons without an equality (events into time buckets,
/// one inequality, `<>` alone) give what the same condition gives when
/// written so that no join can take it (`NOT (x < y)`, evaluated over
/// every pair of rows), inner and outer, with NULLs and duplicate bounds;
/// EXPLAIN names the range join or nested loop join that ran.
#[test]
fn range_joins_agree_with_filtered_cross_joins() {
    let mut db = two_threads();
    let mut rng = Rng(0x5eed_2026);
    for round in 0..6 {
        let mut events = String::from("id,t,v\n");
        for id in 0..400 {
            let t = match rng.below(20) {
                0 => String::new(),
                _ => rng.below(1_000).to_string(),
            };
            let v = match rng.below(10) {
                0 => String::new(),
                _ => format!("{}.5", rng.below(100)),
            };
            events += &format!("{id},{t},{v}\n");
        }
        let mut buckets = String::from("b,lo,hi\n");
        for b in 0..(5 + round * 7) {
            let lo = rng.below(1_000) as i64 - 50;
            let width = rng.below(200) as i64;
            let lo = if rng.below(15) == 0 {
                String::new()
            } else {
                lo.to_string()
            };
            let hi = match lo.parse::<i64>() {
                Ok(lo) if rng.below(15) != 0 => (lo + width).to_string(),
                _ => String::new(),
            };
            buckets += &format!("{b},{lo},{hi}\n");
        }
        let part = 1 + rng.below(100) as usize;
        load_bytes(&mut db, "ev", events.into_bytes(), part);
        load_bytes(&mut db, "bk", buckets.into_bytes(), part);
        let context = format!("round {round}, partitions of {part}");
        let cases = [
            (
                "e.t >= k.lo AND e.t < k.hi",
                "NOT (e.t < k.lo) AND NOT (e.t >= k.hi)",
            ),
            (
                "e.t BETWEEN k.lo AND k.hi",
                "NOT (e.t < k.lo) AND NOT (e.t > k.hi)",
            ),
            (
                "e.v * 10 > k.lo AND e.v <= k.hi",
                "NOT (e.v * 10 <= k.lo) AND NOT (e.v > k.hi)",
            ),
            ("e.t < k.lo", "NOT (e.t >= k.lo)"),
            (
                "e.t > k.hi AND e.id <> k.b",
                "NOT (e.t <= k.hi) AND NOT (e.id = k.b)",
            ),
        ];
        for (on, filtered) in cases {
            let joined = format!("SELECT e.id, k.b FROM ev e JOIN bk k ON {on}");
            let flat = format!("SELECT e.id, k.b FROM ev e, bk k WHERE {filtered}");
            same(&db, &joined, &flat, &context);
            let plan = explain(&db, &joined);
            assert!(plan.contains("range join"), "{context}: {joined}\n{plan}");
            let plan = explain(&db, &flat);
            assert!(plan.contains("cross join"), "{context}: {flat}\n{plan}");
            // LEFT: each event without a bucket once, padded.
            let left = format!(
                "SELECT e.id, count(k.b), sum(k.b) FROM ev e LEFT JOIN bk k ON {on} GROUP BY e.id"
            );
            let flat_left = format!(
                "SELECT e.id, count(x.b), sum(x.b) FROM ev e LEFT JOIN \
                 (SELECT e.id AS id, k.b AS b FROM ev e, bk k WHERE {filtered}) x \
                 ON e.id = x.id GROUP BY e.id"
            );
            same(&db, &left, &flat_left, &context);
        }
        let ne = "SELECT count(*), sum(e.id - k.b) FROM ev e JOIN bk k ON e.id <> k.b";
        let flat_ne = "SELECT count(*), sum(e.id - k.b) FROM ev e, bk k WHERE NOT (e.id = k.b)";
        same(&db, ne, flat_ne, &context);
        let plan = explain(&db, ne);
        assert!(plan.contains("nested loop join"), "{context}: {ne}\n{plan}");
    }
}

/// EXPLAIN of a composed query compiles each pipeline and runs none: a
/// subquery whose rows would fail a cast is described, not evaluated, and
/// every pipeline's partition shapes are printed; EXPLAIN ANALYZE runs it
/// and fails as the query does.
#[test]
fn explain_of_a_composed_query_reads_no_rows() {
    let mut db = two_threads();
    load_bytes(&mut db, "t", b"k,s\n1,abc\n2,7\n3,8\n".to_vec(), 2);
    let sql = "SELECT sum(x) FROM (SELECT k, CAST(s AS INTEGER) AS x FROM t) d \
               JOIN t ON d.k = t.k";
    let err = db.query(sql).expect_err("the cast of 'abc' fails");
    assert!(err.to_string().contains("cannot cast"), "{err}");
    let err = db
        .query(&format!("EXPLAIN ANALYZE {sql}"))
        .expect_err("EXPLAIN ANALYZE runs the query");
    assert!(err.to_string().contains("cannot cast"), "{err}");
    let plan: String = query(&db, &format!("EXPLAIN {sql}"))
        .iter()
        .map(|r| format!("{}\n", r[0]))
        .collect();
    assert!(plan.contains("compiled and not run"), "{plan}");
    assert!(plan.contains("scan of t (compiled, not run)"), "{plan}");
    assert!(
        plan.contains("Partition pipelines: 1 shape over 2 partitions"),
        "{plan}"
    );
    assert!(!plan.contains("table rows read"), "{plan}");
}
