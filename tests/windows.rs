//! Window functions against a naive oracle, and float answers within a
//! tolerance. Exact answers on a small table and the errors are in
//! `tests/slt/windows.slt`.
//!
//! Random tables `w(id, g, h, x, f)` (small group ranges so partitions
//! repeat, duplicate and NULL values so peers and NULL ordering matter) are
//! loaded in partitions of 3, 7 or 1,000 rows. For every row the oracle
//! finds its partition by scanning all rows, orders it, and computes the
//! function from its definition (a rank counts the rows ordered strictly
//! before, a frame is the set of rows whose position or key lies within
//! the bounds), never by the engine's sorted single pass.

mod common;

use std::cmp::Ordering;
use std::path::Path;

use katydid::{Database, DatabaseOptions, LoadOptions, Value};

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

    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[self.below(xs.len() as u64) as usize]
    }
}

/// Columns: id (unique), g (partition key), h (string key), x (integer
/// with duplicates), f (float).
#[derive(Clone, Debug)]
struct Row {
    id: i64,
    g: Option<i64>,
    h: Option<String>,
    x: Option<i64>,
    f: Option<f64>,
}

impl Row {
    fn get(&self, c: &str) -> Value {
        match c {
            "id" => Value::Int(self.id),
            "g" => self.g.map_or(Value::Null, Value::Int),
            "h" => self.h.as_deref().map_or(Value::Null, Value::str),
            "x" => self.x.map_or(Value::Null, Value::Int),
            "f" => self.f.map_or(Value::Null, Value::Float),
            _ => panic!("no column {c}"),
        }
    }
}

fn rows(rng: &mut Rng, n: usize) -> Vec<Row> {
    (0..n)
        .map(|i| Row {
            id: i as i64,
            g: (rng.below(8) != 0).then(|| rng.below(4) as i64),
            h: (rng.below(6) != 0).then(|| ["a", "b", "c"][rng.below(3) as usize].to_string()),
            x: (rng.below(5) != 0).then(|| rng.below(12) as i64 - 3),
            f: (rng.below(5) != 0).then(|| (rng.below(40) as f64) / 4.0 - 2.0),
        })
        .collect()
}

fn csv(rows: &[Row]) -> String {
    let mut s = String::from("id,g,h,x,f\n");
    let opt = |v: Option<String>| v.unwrap_or_default();
    for r in rows {
        s.push_str(&format!(
            "{},{},{},{},{}\n",
            r.id,
            opt(r.g.map(|v| v.to_string())),
            opt(r.h.clone()),
            opt(r.x.map(|v| v.to_string())),
            opt(r.f.map(|v| format!("{v:.2}"))),
        ));
    }
    s
}

/// ORDER BY's order: NULLs last unless asked first.
fn cmp_key(a: &Value, b: &Value, desc: bool, nulls_first: bool) -> Ordering {
    match (a.is_null(), b.is_null()) {
        (true, true) => Ordering::Equal,
        (true, false) if nulls_first => Ordering::Less,
        (true, false) => Ordering::Greater,
        (false, true) if nulls_first => Ordering::Greater,
        (false, true) => Ordering::Less,
        _ => {
            let o = a.total_cmp(b);
            if desc { o.reverse() } else { o }
        }
    }
}

/// One generated window: the SQL of `func OVER (…)` and what the oracle
/// needs to compute it.
#[derive(Debug)]
struct Case {
    sql: String,
    func: &'static str,
    arg: &'static str,
    constant: i64,
    partition: Vec<&'static str>,
    /// (column, desc, nulls first).
    order: Vec<(&'static str, bool, bool)>,
    /// `None`: the default frame; else (rows, start, end) as offsets with
    /// i64::MIN/MAX for unbounded.
    frame: Option<(bool, i64, i64)>,
}

fn bound_sql(b: i64, rows: bool) -> String {
    let _ = rows;
    match b {
        i64::MIN => "UNBOUNDED PRECEDING".into(),
        i64::MAX => "UNBOUNDED FOLLOWING".into(),
        0 => "CURRENT ROW".into(),
        b if b < 0 => format!("{} PRECEDING", -b),
        b => format!("{b} FOLLOWING"),
    }
}

fn case(rng: &mut Rng) -> Case {
    let func = rng.pick(&[
        "row_number",
        "rank",
        "dense_rank",
        "percent_rank",
        "cume_dist",
        "ntile",
        "lag",
        "lead",
        "first_value",
        "last_value",
        "nth_value",
        "count*",
        "count",
        "sum",
        "avg",
        "min",
        "max",
    ]);
    let arg = rng.pick(&["x", "f", "h", "g"]);
    let arg = match func {
        "sum" | "avg" => rng.pick(&["x", "f"]),
        _ => arg,
    };
    let partition: Vec<&str> = match rng.below(3) {
        0 => vec![],
        1 => vec!["g"],
        _ => vec!["g", "h"],
    };
    // Functions that see positions need a total order (ties broken by id);
    // ranks and RANGE frames see peers, so their order may have ties.
    let positional = matches!(
        func,
        "row_number" | "ntile" | "lag" | "lead" | "first_value" | "last_value" | "nth_value"
    );
    let mut order: Vec<(&str, bool, bool)> = Vec::new();
    let ordered = positional || rng.below(4) != 0;
    if ordered {
        let key = rng.pick(&["x", "f", "h"]);
        order.push((key, rng.below(2) == 0, rng.below(3) == 0));
    }
    let aggregate = matches!(func, "count*" | "count" | "sum" | "avg" | "min" | "max");
    let framed = aggregate || matches!(func, "first_value" | "last_value" | "nth_value");
    let mut frame = None;
    if framed && rng.below(3) != 0 {
        // A position in a RANGE frame's peers is not defined: first_value
        // and the like take ROWS frames here.
        let rows = order.is_empty() || positional || rng.below(2) == 0;
        let numeric_key = order.first().is_some_and(|o| o.0 != "h");
        let bound = |rng: &mut Rng, rows: bool| -> i64 {
            match rng.below(5) {
                0 => i64::MIN,
                1 => i64::MAX,
                2 => 0,
                _ if rows || numeric_key => rng.below(5) as i64 - 2,
                _ => 0,
            }
        };
        let (mut s, mut e) = (bound(rng, rows), bound(rng, rows));
        if s == i64::MAX {
            s = 0;
        }
        if e == i64::MIN {
            e = 0;
        }
        if s > e {
            std::mem::swap(&mut s, &mut e);
        }
        frame = Some((rows, s, e));
    }
    if framed && frame.is_some_and(|f| f.0) || positional {
        // A position within the order must be unique: ties by id.
        if !order.is_empty() || frame.is_some() {
            order.push(("id", false, false));
        }
    }
    let constant = match func {
        "ntile" => rng.below(5) as i64 + 1,
        "lag" | "lead" => rng.below(3) as i64,
        "nth_value" => rng.below(3) as i64 + 1,
        _ => 0,
    };
    let call = match func {
        "row_number" | "rank" | "dense_rank" | "percent_rank" | "cume_dist" => format!("{func}()"),
        "ntile" => format!("ntile({constant})"),
        "lag" | "lead" => format!("{func}({arg}, {constant})"),
        "nth_value" => format!("nth_value({arg}, {constant})"),
        "count*" => "count(*)".into(),
        _ => format!("{func}({arg})"),
    };
    let mut over = Vec::new();
    if !partition.is_empty() {
        over.push(format!("PARTITION BY {}", partition.join(", ")));
    }
    if !order.is_empty() {
        let keys: Vec<String> = order
            .iter()
            .map(|(c, desc, nf)| {
                format!(
                    "{c}{}{}",
                    if *desc { " DESC" } else { "" },
                    if *nf { " NULLS FIRST" } else { " NULLS LAST" }
                )
            })
            .collect();
        over.push(format!("ORDER BY {}", keys.join(", ")));
    }
    if let Some((rows, s, e)) = frame {
        over.push(format!(
            "{} BETWEEN {} AND {}",
            if rows { "ROWS" } else { "RANGE" },
            bound_sql(s, rows),
            bound_sql(e, rows)
        ));
    }
    Case {
        sql: format!("{call} OVER ({})", over.join(" ")),
        func,
        arg,
        constant,
        partition,
        order,
        frame,
    }
}

/// The oracle: the window function's value at row `r`.
fn oracle(c: &Case, data: &[Row], r: &Row) -> Value {
    let same = |a: &Row| {
        c.partition
            .iter()
            .all(|p| a.get(p).total_cmp(&r.get(p)).is_eq())
    };
    let cmp = |a: &Row, b: &Row| -> Ordering {
        for &(k, desc, nf) in &c.order {
            let o = cmp_key(&a.get(k), &b.get(k), desc, nf);
            if o.is_ne() {
                return o;
            }
        }
        Ordering::Equal
    };
    let mut part: Vec<&Row> = data.iter().filter(|a| same(a)).collect();
    part.sort_by(|a, b| cmp(a, b).then(a.id.cmp(&b.id)));
    let n = part.len();
    let pos = part
        .iter()
        .position(|a| a.id == r.id)
        .expect("in its partition");
    let before = part.iter().filter(|a| cmp(a, r).is_lt()).count();
    let through = part.iter().filter(|a| cmp(a, r).is_le()).count();
    let arg = |a: &Row| a.get(c.arg);
    match c.func {
        "row_number" => Value::Int(pos as i64 + 1),
        "rank" => Value::Int(before as i64 + 1),
        "dense_rank" => {
            let mut distinct: Vec<&Row> = Vec::new();
            for a in part.iter().filter(|a| cmp(a, r).is_lt()) {
                if !distinct.iter().any(|d| cmp(d, a).is_eq()) {
                    distinct.push(a);
                }
            }
            Value::Int(distinct.len() as i64 + 1)
        }
        "percent_rank" => Value::Float(if n > 1 {
            before as f64 / (n - 1) as f64
        } else {
            0.0
        }),
        "cume_dist" => Value::Float(through as f64 / n as f64),
        "ntile" => {
            // Bucket sizes differ by at most one, larger ones first.
            let k = c.constant as usize;
            let mut start = 0;
            for b in 0..k {
                let size = n / k + usize::from(b < n % k);
                if pos < start + size {
                    return Value::Int(b as i64 + 1);
                }
                start += size;
            }
            Value::Int(k as i64)
        }
        "lag" | "lead" => {
            let at = if c.func == "lag" {
                pos as i64 - c.constant
            } else {
                pos as i64 + c.constant
            };
            if (0..n as i64).contains(&at) {
                arg(part[at as usize])
            } else {
                Value::Null
            }
        }
        _ => {
            let in_frame: Vec<&Row> = match c.frame {
                None if c.order.is_empty() => part.clone(),
                // RANGE UNBOUNDED PRECEDING to CURRENT ROW: up to the peers.
                None => part.iter().copied().filter(|a| cmp(a, r).is_le()).collect(),
                Some((true, s, e)) => part
                    .iter()
                    .enumerate()
                    .filter(|(q, _)| {
                        let d = *q as i64 - pos as i64;
                        (s == i64::MIN || d >= s) && (e == i64::MAX || d <= e)
                    })
                    .map(|(_, a)| *a)
                    .collect(),
                Some((false, s, e)) => {
                    // A RANGE offset bound: rows whose key is within the
                    // offset; a NULL key has only its peers within any
                    // offset, and rows of NULL keys lie before (NULLS
                    // FIRST) or after every other row.
                    let (key, desc, nulls_first) = c.order[0];
                    let kr = r.get(key).as_f64();
                    let within = |a: &Row, off: i64, low: bool| -> bool {
                        let ka = a.get(key).as_f64();
                        match (ka, kr) {
                            (_, None) => {
                                if low {
                                    cmp(a, r).is_ge()
                                } else {
                                    cmp(a, r).is_le()
                                }
                            }
                            (None, Some(_)) => low != nulls_first,
                            (Some(ka), Some(kr)) => {
                                let limit = if desc {
                                    kr - off as f64
                                } else {
                                    kr + off as f64
                                };
                                match (low, desc) {
                                    (true, false) | (false, true) => ka >= limit,
                                    (true, true) | (false, false) => ka <= limit,
                                }
                            }
                        }
                    };
                    part.iter()
                        .copied()
                        .filter(|a| {
                            let lo_ok = match s {
                                i64::MIN => true,
                                0 => cmp(a, r).is_ge(),
                                s => within(a, s, true),
                            };
                            let hi_ok = match e {
                                i64::MAX => true,
                                0 => cmp(a, r).is_le(),
                                e => within(a, e, false),
                            };
                            lo_ok && hi_ok
                        })
                        .collect()
                }
            };
            let vals: Vec<Value> = in_frame
                .iter()
                .map(|a| arg(a))
                .filter(|v| !v.is_null())
                .collect();
            match c.func {
                "first_value" => in_frame.first().map_or(Value::Null, |a| arg(a)),
                "last_value" => in_frame.last().map_or(Value::Null, |a| arg(a)),
                "nth_value" => in_frame
                    .get(c.constant as usize - 1)
                    .map_or(Value::Null, |a| arg(a)),
                "count*" => Value::Int(in_frame.len() as i64),
                "count" => Value::Int(vals.len() as i64),
                _ if vals.is_empty() => Value::Null,
                "sum" if c.arg == "x" => {
                    Value::Int(vals.iter().map(|v| v.as_f64().unwrap() as i64).sum())
                }
                "sum" => Value::Float(vals.iter().map(|v| v.as_f64().unwrap()).sum()),
                "avg" => Value::Float(
                    vals.iter().map(|v| v.as_f64().unwrap()).sum::<f64>() / vals.len() as f64,
                ),
                "min" => vals.into_iter().min_by(|a, b| a.total_cmp(b)).unwrap(),
                "max" => vals.into_iter().max_by(|a, b| a.total_cmp(b)).unwrap(),
                f => panic!("no oracle for {f}"),
            }
        }
    }
}

fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Float(x), Value::Float(y)) => (x - y).abs() <= 1e-9 * x.abs().max(1.0),
        (Value::Int(i), Value::Float(y)) | (Value::Float(y), Value::Int(i)) => *i as f64 == *y,
        _ => a == b,
    }
}

fn database(data: &[Row], partition_rows: usize) -> Database {
    common::csv_database(csv(data).as_bytes(), "w", 2, partition_rows)
}

#[test]
fn window_functions_match_a_naive_oracle() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for round in 0..12 {
        let n = [0, 1, 5, 40, 120][round % 5];
        let data = rows(&mut rng, n);
        let db = database(&data, [3, 7, 1000][round % 3]);
        for _ in 0..40 {
            let c = case(&mut rng);
            let sql = format!("SELECT id, {} AS w FROM w ORDER BY id", c.sql);
            let result = db.query(&sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
            assert_eq!(result.rows.len(), data.len(), "{sql}");
            for (row, r) in result.rows.iter().zip(&data) {
                assert_eq!(row[0], Value::Int(r.id), "{sql}");
                let want = oracle(&c, &data, r);
                assert!(
                    same(&row[1], &want),
                    "{sql}\nrow id {}: got {:?}, want {:?}\n{}",
                    r.id,
                    row[1],
                    want,
                    csv(&data)
                );
            }
        }
    }
}

#[test]
fn qualify_and_subquery_filters_keep_the_top_rows_per_group() {
    let mut rng = Rng(7);
    let data = rows(&mut rng, 200);
    for partition_rows in [7, 1000] {
        let db = database(&data, partition_rows);
        let top = |sql: &str| -> Vec<Vec<Value>> {
            db.query(sql).unwrap_or_else(|e| panic!("{sql}: {e}")).rows
        };
        // Partition keys of each kind (an integer, a string, both, none),
        // two orders, and k on both sides of the top-k's small-k path.
        for keys in [&["g"][..], &["h"], &["g", "h"], &[]] {
            // Ties go to the earlier row (load order is id order), so one
            // sort key alone is a total order too.
            for (order, by, desc, nulls_first) in [
                ("x DESC, id", "x", true, false),
                ("f, id", "f", false, false),
                ("x DESC", "x", true, false),
                ("f", "f", false, false),
                ("f DESC NULLS FIRST", "f", true, true),
                ("x NULLS FIRST", "x", false, true),
            ] {
                for k in [1usize, 2, 20] {
                    let partition = if keys.is_empty() {
                        String::new()
                    } else {
                        format!("PARTITION BY {}", keys.join(", "))
                    };
                    let shown = if keys.is_empty() {
                        "id".to_string()
                    } else {
                        format!("{}, id", keys.join(", "))
                    };
                    let window = format!("row_number() OVER ({partition} ORDER BY {order})");
                    let a = top(&format!(
                        "SELECT {shown} FROM w QUALIFY {window} <= {k} ORDER BY {shown}"
                    ));
                    let b = top(&format!(
                        "SELECT {shown} FROM (SELECT *, {window} AS rn FROM w) t \
                         WHERE rn <= {k} ORDER BY {shown}"
                    ));
                    // Not the top-k shape: every row numbered, then filtered.
                    let d = top(&format!(
                        "SELECT {shown} FROM w QUALIFY {k} >= {window} ORDER BY {shown}"
                    ));
                    // The oracle: per key, the k rows first by the order
                    // (NULLs last), ties by id.
                    let key = |r: &Row| -> Vec<Value> { keys.iter().map(|c| r.get(c)).collect() };
                    let mut groups: Vec<Vec<Value>> = data.iter().map(key).collect();
                    let cmp_rows = |x: &Vec<Value>, y: &Vec<Value>| {
                        x.iter()
                            .zip(y)
                            .map(|(a, b)| a.total_cmp(b))
                            .find(|o| o.is_ne())
                            .unwrap_or(std::cmp::Ordering::Equal)
                    };
                    groups.sort_by(cmp_rows);
                    groups.dedup();
                    let mut want: Vec<Vec<Value>> = Vec::new();
                    for g in &groups {
                        let mut members: Vec<&Row> = data
                            .iter()
                            .filter(|r| cmp_rows(&key(r), g).is_eq())
                            .collect();
                        members.sort_by(|a, b| {
                            cmp_key(&a.get(by), &b.get(by), desc, nulls_first).then(a.id.cmp(&b.id))
                        });
                        want.extend(members.iter().take(k).map(|r| {
                            let mut row = g.clone();
                            row.push(Value::Int(r.id));
                            row
                        }));
                    }
                    want.sort_by(cmp_rows);
                    let context = format!("keys {keys:?}, order {order}, k {k}");
                    assert_eq!(a, want, "{context}");
                    assert_eq!(b, want, "{context}");
                    assert_eq!(d, want, "{context}");
                }
            }
        }
        // The window's number as an output beside the top-k.
        let c = top(
            "SELECT g, id, row_number() OVER (PARTITION BY g ORDER BY x DESC, id) AS rn FROM w QUALIFY rn <= 2 ORDER BY g, rn",
        );
        for pair in c.windows(2) {
            if pair[0][0] == pair[1][0] {
                assert_eq!(pair[1][2], Value::Int(2));
            }
        }
        assert!(c.iter().all(|r| matches!(r[2], Value::Int(1 | 2))));
    }
}

/// A small table whose answers DuckDB 1.x gave (the queries run there as
/// written): `id` in load order, `g` two partitions, `f` with an infinity
/// and a huge value, `x` integers with a NULL, `h` strings with a NULL.
fn fixed() -> Database {
    let mut db = Database::new(DatabaseOptions {
        threads: 2,
        ..Default::default()
    })
    .expect("thread pool");
    let csv = "id,g,f,x,h\n1,1,inf,2,a\n2,1,1.5e300,3,b\n3,1,0.25,-1,\n4,2,1.0,5,c\n5,2,2.0,,d\n6,2,4.0,8,e\n";
    let options = LoadOptions {
        partition_rows: 4,
        ..LoadOptions::default()
    };
    db.load_csv_bytes(csv.as_bytes().to_vec(), Path::new("w.csv"), "w", &options)
        .expect("loads");
    db
}

/// The rows of `sql`, which must succeed.
fn answer(db: &Database, sql: &str) -> Vec<Vec<Value>> {
    db.query(sql).unwrap_or_else(|e| panic!("{sql}: {e}")).rows
}

fn ints(xs: &[Option<i64>]) -> Vec<Value> {
    xs.iter()
        .map(|x| x.map_or(Value::Null, Value::Int))
        .collect()
}

fn column(rows: &[Vec<Value>], c: usize) -> Vec<Value> {
    rows.iter().map(|r| r[c].clone()).collect()
}

fn assert_floats(got: &[Value], want: &[Option<f64>], sql: &str) {
    assert_eq!(got.len(), want.len(), "{sql}");
    for (g, w) in got.iter().zip(want) {
        let ok = match (g, w) {
            (Value::Null, None) => true,
            (Value::Float(a), Some(b)) => a == b || (a - b).abs() <= 1e-12 * b.abs().max(1.0),
            _ => false,
        };
        assert!(ok, "{sql}: got {got:?}, want {want:?}");
    }
}

/// Statistical and holistic aggregates over windows, DuckDB's answers.
#[test]
fn statistical_aggregates_run_over_windows() {
    let db = fixed();
    let sql = "SELECT id, median(x) OVER (PARTITION BY g), stddev_samp(x) OVER (PARTITION BY g ORDER BY id), quantile_disc(f, 0.5) OVER (PARTITION BY g), corr(x, id) OVER (PARTITION BY g), regr_slope(x, id) OVER (), var_pop(x) OVER (ORDER BY id ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING) FROM w ORDER BY id";
    let rows = answer(&db, sql);
    assert_floats(
        &column(&rows, 1),
        &[
            Some(2.0),
            Some(2.0),
            Some(2.0),
            Some(6.5),
            Some(6.5),
            Some(6.5),
        ],
        sql,
    );
    assert_floats(
        &column(&rows, 2),
        &[
            None,
            Some(std::f64::consts::FRAC_1_SQRT_2),
            Some(2.0816659994661326),
            None,
            None,
            Some(2.1213203435596424),
        ],
        sql,
    );
    assert_floats(
        &column(&rows, 3),
        &[
            Some(1.5e300),
            Some(1.5e300),
            Some(1.5e300),
            Some(2.0),
            Some(2.0),
            Some(2.0),
        ],
        sql,
    );
    let r = -0.720576692122892;
    assert_floats(
        &column(&rows, 4),
        &[Some(r), Some(r), Some(r), Some(1.0), Some(1.0), Some(1.0)],
        sql,
    );
    assert_floats(&column(&rows, 5), &[Some(1.2567567567567568); 6], sql);
    assert_floats(
        &column(&rows, 6),
        &[
            Some(0.25),
            Some(2.888888888888889),
            Some(6.222222222222222),
            Some(9.0),
            Some(2.25),
            Some(0.0),
        ],
        sql,
    );
    let rows = answer(
        &db,
        "SELECT id, mode(g) OVER (ORDER BY id), string_agg(h, '|') OVER (PARTITION BY g ORDER BY id), arg_max(h, x) OVER (PARTITION BY g), count_if(x > 2) OVER (ORDER BY id) FROM w ORDER BY id",
    );
    assert_eq!(column(&rows, 1), ints(&[Some(1); 6]));
    let s = |x: &str| Value::str(x);
    assert_eq!(
        column(&rows, 2),
        vec![s("a"), s("a|b"), s("a|b"), s("c"), s("c|d"), s("c|d|e")]
    );
    assert_eq!(
        column(&rows, 3),
        vec![s("b"), s("b"), s("b"), s("e"), s("e"), s("e")]
    );
    assert_eq!(
        column(&rows, 4),
        ints(&[Some(0), Some(1), Some(1), Some(2), Some(2), Some(3)])
    );
}

/// Keys whose codes span whole 64-bit ranges (integers near ±9e18, floats
/// at ±1e300, a NULL) do not pack into one 128-bit sort key: the window
/// sorts them key by key and still finds the same partitions, peers and
/// order as DuckDB.
#[test]
fn keys_too_wide_to_pack_sort_key_by_key() {
    let mut db = Database::new(DatabaseOptions {
        threads: 2,
        ..Default::default()
    })
    .expect("thread pool");
    let big = 9_000_000_000_000_000_000i64;
    let csv = format!(
        "id,a,b,c\n1,-{big},-1e300,{big}\n2,-{big},-1e300,-{big}\n3,-{big},-1e300,\n\
         4,{big},1e300,5\n5,{big},1e300,5\n6,{big},-1e300,0\n7,-{big},1e300,1\n"
    );
    db.load_csv_bytes(
        csv.into_bytes(),
        Path::new("t.csv"),
        "t",
        &LoadOptions::default(),
    )
    .expect("loads");
    let sql = "SELECT id, \
        row_number() OVER (PARTITION BY a, b ORDER BY c DESC NULLS FIRST, id), \
        rank() OVER (PARTITION BY a ORDER BY b DESC, c), \
        max(c) OVER (PARTITION BY b ORDER BY a, id ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) \
        FROM t ORDER BY id";
    let rows = answer(&db, sql);
    let want = |xs: &[i64]| ints(&xs.iter().map(|&x| Some(x)).collect::<Vec<_>>());
    assert_eq!(column(&rows, 1), want(&[2, 3, 1, 1, 2, 1, 1]), "{sql}");
    assert_eq!(column(&rows, 2), want(&[3, 2, 4, 1, 1, 3, 1]), "{sql}");
    assert_eq!(
        column(&rows, 3),
        want(&[big, big, -big, 5, 5, 0, 1]),
        "{sql}"
    );
}

/// A windowed subquery read by an outer query comes back as a table when
/// its last step only filters and projects (EXPLAIN says it was encoded
/// as one, with no rows of values), and as rows when it is DISTINCT; both
/// answer as DuckDB 1.x does.
#[test]
fn windowed_subqueries_come_back_as_tables() {
    let db = fixed();
    let explain = |sql: &str| -> String {
        answer(&db, &format!("EXPLAIN ANALYZE {sql}"))
            .iter()
            .map(|r| r[0].to_string())
            .collect::<Vec<_>>()
            .join("\n")
    };
    let table = "SELECT count(*), sum(r) FROM (SELECT rank() OVER (PARTITION BY g ORDER BY x) AS r FROM w) s WHERE r <= 2";
    assert_eq!(answer(&db, table), vec![ints(&[Some(4), Some(6)])]);
    assert!(
        explain(table).contains(
            "filter and projection over the rows above: 4 rows × 1 columns, encoded as a table"
        ),
        "{}",
        explain(table)
    );
    let rows = "SELECT count(*), sum(rn) FROM (SELECT DISTINCT g, row_number() OVER (PARTITION BY g ORDER BY id) % 2 AS rn FROM w) s";
    assert_eq!(answer(&db, rows), vec![ints(&[Some(4), Some(2)])]);
    assert!(
        !explain(rows).contains("encoded as a table"),
        "{}",
        explain(rows)
    );
}
