//! Criterion benches of the compressed codecs on one partition (65,536
//! rows), each next to the plain codec it would replace:
//!
//! - `alp/*`: money with two decimals as ALP digits vs `Vec<f64>`: encode,
//!   decode, `< constant` filter, sum, floor;
//! - `linear/*`, `delta/*`: row numbers and nearly sorted timestamps vs
//!   offset codes (`Column::encode_ints`): encode, decode, filter, sum;
//! - `rle/*`: a column in runs of 4,000 vs offset codes: filter, sum;
//! - `fsst/*`: hex WKB points vs packed strings: encode, decode in batches
//!   of 1,024 rows, equality and prefix filters; the same points as
//!   `HexPoints` (two ALP coordinates): decode and equality;
//! - `choose/*`: the chooser on each shape.
//!
//! Each bench checks its answer once against the plain codec or a naive
//! computation before it measures; nothing is asserted about time.
//! Run: `cargo bench --bench codecs` (or `-- alp` for a subset).

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use katydid::DataType;
use katydid::store::{
    Alp, BATCH_ROWS, CmpOp, Codes, Column, ColumnData, Delta, Fsst, HexPoints, Linear,
    PackedStrings, Rle, StringBatch, choose_floats, choose_ints, choose_strings,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Rows in the benched partition.
const ROWS: usize = 1 << 16;

fn rng() -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(42)
}

/// Fares in cents, parsed from their decimal text as the loader does.
fn money() -> Vec<f64> {
    let mut r = rng();
    (0..ROWS)
        .map(|_| {
            let cents: i64 = r.gen_range(250..20_000);
            format!("{}.{:02}", cents / 100, cents % 100)
                .parse()
                .unwrap()
        })
        .collect()
}

/// Pickup times in microseconds: ascending by 0–19 s, sometimes 3 s back.
fn pickups() -> Vec<i64> {
    let mut r = rng();
    let mut t = 1_400_000_000_000_000i64;
    (0..ROWS)
        .map(|_| {
            t += r.gen_range(0..20) * 1_000_000;
            t - if r.gen_bool(0.1) { 3_000_000 } else { 0 }
        })
        .collect()
}

/// Hex EWKB points around Manhattan, as the taxi `pickup` column.
fn points() -> Vec<String> {
    let mut r = rng();
    (0..ROWS)
        .map(|_| {
            let lon = r.gen_range(-74_050_000i64..-73_750_000) as f64 / 1e6;
            let lat = r.gen_range(40_600_000i64..40_900_000) as f64 / 1e6;
            let hex: String = lon
                .to_le_bytes()
                .iter()
                .chain(&lat.to_le_bytes())
                .map(|b| format!("{b:02X}"))
                .collect();
            format!("0101000020E6100000{hex}")
        })
        .collect()
}

fn count_words(words: &[u64]) -> usize {
    words.iter().map(|w| w.count_ones() as usize).sum()
}

fn bench_alp(c: &mut Criterion) {
    let values = money();
    let alp = Alp::encode(&values, None).expect("money encodes");
    let threshold = 52.5;
    let expected = values.iter().filter(|&&x| x < threshold).count();
    assert_eq!(
        count_words(&alp.filter(CmpOp::Lt, threshold, None)),
        expected
    );
    let naive_sum: f64 = values.iter().sum();
    assert!((alp.sum(None).to_f64() - naive_sum).abs() < 1e-6 * naive_sum);

    let mut g = c.benchmark_group("alp");
    g.throughput(Throughput::Elements(ROWS as u64));
    g.bench_function("encode", |b| {
        b.iter(|| Alp::encode(black_box(&values), None))
    });
    let mut out = Vec::with_capacity(ROWS);
    g.bench_function("decode", |b| {
        b.iter(|| {
            out.clear();
            alp.decode_range(0..ROWS, &mut out);
            black_box(out.len())
        })
    });
    g.bench_function("decode plain f64", |b| {
        b.iter(|| {
            out.clear();
            out.extend_from_slice(black_box(&values));
            black_box(out.len())
        })
    });
    g.bench_function("filter lt", |b| {
        b.iter(|| count_words(&alp.filter(CmpOp::Lt, black_box(threshold), None)))
    });
    g.bench_function("filter lt plain f64", |b| {
        b.iter(|| {
            let words: Vec<u64> = black_box(&values)
                .chunks(64)
                .map(|ch| {
                    ch.iter()
                        .enumerate()
                        .fold(0u64, |w, (j, &x)| w | ((x < threshold) as u64) << j)
                })
                .collect();
            count_words(&words)
        })
    });
    g.bench_function("sum exact", |b| b.iter(|| alp.sum(None).to_f64()));
    g.bench_function("sum plain f64", |b| {
        b.iter(|| black_box(&values).iter().sum::<f64>())
    });
    g.bench_function("floor", |b| b.iter(|| alp.floor().map(|a| a.len())));
    g.finish();
}

fn offsets(values: &[i64]) -> Column {
    Column::encode_ints(DataType::Int, values, None)
}

fn offset_sum(col: &Column) -> i128 {
    match &col.data {
        ColumnData::Offset { base, scale, codes } => {
            let s: u128 = (0..codes.len()).map(|i| codes.get(i) as u128).sum();
            codes.len() as i128 * *base as i128 + *scale as i128 * s as i128
        }
        other => panic!("expected offsets, got {other:?}"),
    }
}

/// Decodes offset codes as the executor does: `base + code · scale`.
fn offset_decode(col: &Column, out: &mut Vec<i64>) {
    match &col.data {
        ColumnData::Offset { base, scale, codes } => {
            let decode = |x: u64| base.wrapping_add(x.wrapping_mul(*scale) as i64);
            // One loop per width, as the executor's width dispatch makes.
            match codes {
                Codes::U8(c) => out.extend(c.iter().map(|&x| decode(x as u64))),
                Codes::U16(c) => out.extend(c.iter().map(|&x| decode(x as u64))),
                Codes::U32(c) => out.extend(c.iter().map(|&x| decode(x as u64))),
                Codes::U64(c) => out.extend(c.iter().map(|&x| decode(x))),
            }
        }
        other => panic!("expected offsets, got {other:?}"),
    }
}

fn bench_ints(c: &mut Criterion) {
    let rows: Vec<i64> = (1..=ROWS as i64).collect();
    let times = pickups();
    let runs: Vec<i64> = (0..ROWS as i64).map(|i| i / 4000 * 7).collect();
    let linear = Linear::encode(&rows, None).unwrap();
    let delta = Delta::encode(&times, None).unwrap();
    let rle = Rle::encode(&runs, None).unwrap();
    let (rows_off, times_off, runs_off) = (offsets(&rows), offsets(&times), offsets(&runs));
    let naive = |v: &[i64]| v.iter().map(|&x| x as i128).sum::<i128>();
    assert_eq!(linear.sum(None).0, naive(&rows));
    assert_eq!(delta.sum(None).0, naive(&times));
    assert_eq!(rle.sum_i128(None).0, naive(&runs));
    assert_eq!(offset_sum(&rows_off), naive(&rows));
    let mut decoded = Vec::new();
    offset_decode(&times_off, &mut decoded);
    assert_eq!(decoded, times);
    let t = times[ROWS / 2];
    assert_eq!(
        count_words(&delta.filter(CmpOp::Lt, t, None)),
        times.iter().filter(|&&x| x < t).count()
    );

    let mut g = c.benchmark_group("ints");
    g.throughput(Throughput::Elements(ROWS as u64));
    let mut out = Vec::with_capacity(ROWS);
    g.bench_function("linear encode", |b| {
        b.iter(|| Linear::encode(black_box(&rows), None))
    });
    g.bench_function("linear decode", |b| {
        b.iter(|| {
            out.clear();
            linear.decode_range(0..ROWS, &mut out);
            black_box(out.len())
        })
    });
    g.bench_function("linear sum", |b| b.iter(|| linear.sum(None)));
    g.bench_function("linear filter lt (row range)", |b| {
        b.iter(|| linear.row_predicate(CmpOp::Lt, black_box(30_000)))
    });
    g.bench_function("offset sum (row numbers)", |b| {
        b.iter(|| offset_sum(&rows_off))
    });
    g.bench_function("offset decode (row numbers)", |b| {
        b.iter(|| {
            out.clear();
            offset_decode(&rows_off, &mut out);
            black_box(out.len())
        })
    });
    g.bench_function("offset decode (timestamps)", |b| {
        b.iter(|| {
            out.clear();
            offset_decode(&times_off, &mut out);
            black_box(out.len())
        })
    });
    g.bench_function("delta encode", |b| {
        b.iter(|| Delta::encode(black_box(&times), None))
    });
    g.bench_function("delta decode", |b| {
        b.iter(|| {
            out.clear();
            delta.decode_range(0..ROWS, &mut out);
            black_box(out.len())
        })
    });
    g.bench_function("delta filter lt", |b| {
        b.iter(|| count_words(&delta.filter(CmpOp::Lt, black_box(t), None)))
    });
    g.bench_function("offset sum (timestamps)", |b| {
        b.iter(|| offset_sum(&times_off))
    });
    g.bench_function("delta sum", |b| b.iter(|| delta.sum(None)));
    g.bench_function("rle filter eq", |b| {
        b.iter(|| count_words(&rle.filter(CmpOp::Eq, black_box(21), None)))
    });
    g.bench_function("rle sum", |b| b.iter(|| rle.sum_i128(None)));
    g.bench_function("offset sum (runs)", |b| b.iter(|| offset_sum(&runs_off)));
    g.finish();
}

fn bench_fsst(c: &mut Criterion) {
    let owned = points();
    let values: Vec<&str> = owned.iter().map(String::as_str).collect();
    let fsst = Fsst::encode(&values, None).expect("points compress");
    let packed = PackedStrings::new(values.iter().copied());
    let probe = values[ROWS / 3];
    let prefix = &probe[..24];
    assert_eq!(
        count_words(&fsst.filter_eq(probe, false, None)),
        values.iter().filter(|&&s| s == probe).count()
    );
    assert_eq!(
        count_words(&fsst.filter_prefix(prefix, None)),
        values.iter().filter(|s| s.starts_with(prefix)).count()
    );

    let mut g = c.benchmark_group("fsst");
    g.throughput(Throughput::Elements(ROWS as u64));
    g.bench_function("encode", |b| {
        b.iter(|| Fsst::encode(black_box(&values), None))
    });
    let mut batch = StringBatch::new();
    g.bench_function("decode batches", |b| {
        b.iter(|| {
            let mut n = 0;
            for start in (0..ROWS).step_by(BATCH_ROWS) {
                batch.clear();
                fsst.decode_range(start..(start + BATCH_ROWS).min(ROWS), &mut batch);
                n += batch.len();
            }
            n
        })
    });
    g.bench_function("filter eq", |b| {
        b.iter(|| count_words(&fsst.filter_eq(black_box(probe), false, None)))
    });
    g.bench_function("filter eq packed", |b| {
        b.iter(|| {
            (0..ROWS)
                .filter(|&i| packed.get(i) == black_box(probe))
                .count()
        })
    });
    let points = HexPoints::encode(&values, None).expect("points parse");
    assert_eq!(
        count_words(&points.filter_eq(probe, false, None)),
        count_words(&fsst.filter_eq(probe, false, None))
    );
    g.bench_function("hex points decode batches", |b| {
        b.iter(|| {
            let mut n = 0;
            for start in (0..ROWS).step_by(BATCH_ROWS) {
                batch.clear();
                points.decode_range(start..(start + BATCH_ROWS).min(ROWS), &mut batch);
                n += batch.len();
            }
            n
        })
    });
    g.bench_function("hex points filter eq", |b| {
        b.iter(|| count_words(&points.filter_eq(black_box(probe), false, None)))
    });
    g.bench_function("filter prefix", |b| {
        b.iter(|| count_words(&fsst.filter_prefix(black_box(prefix), None)))
    });
    g.bench_function("filter prefix packed", |b| {
        b.iter(|| {
            (0..ROWS)
                .filter(|&i| packed.get(i).starts_with(black_box(prefix)))
                .count()
        })
    });
    g.finish();
}

fn bench_choose(c: &mut Criterion) {
    let money = money();
    let times = pickups();
    let owned = points();
    let points: Vec<&str> = owned.iter().map(String::as_str).collect();
    let mut g = c.benchmark_group("choose");
    g.throughput(Throughput::Elements(ROWS as u64));
    g.bench_function("floats (money)", |b| {
        b.iter(|| choose_floats(black_box(&money), None))
    });
    g.bench_function("ints (timestamps)", |b| {
        b.iter(|| choose_ints(black_box(&times), None))
    });
    g.bench_function("strings (points)", |b| {
        b.iter(|| choose_strings(black_box(&points), None))
    });
    g.finish();
}

criterion_group!(codecs, bench_alp, bench_ints, bench_fsst, bench_choose);
criterion_main!(codecs);
