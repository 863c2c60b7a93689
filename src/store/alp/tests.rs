use super::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const SPECIALS: [f64; 9] = [
    f64::NAN,
    f64::INFINITY,
    f64::NEG_INFINITY,
    -0.0,
    1e300,
    5e-324,
    0.1 + 0.2,
    std::f64::consts::PI,
    -1.7976931348623157e308,
];

/// A partition of decimals with `decimals` places, magnitude up to
/// `10^int_digits`, a share of `special_every` specials, optional NULLs.
fn column(
    rng: &mut ChaCha8Rng,
    len: usize,
    decimals: u32,
    int_digits: u32,
    special_every: usize,
) -> Vec<f64> {
    let scale = 10i64.pow(decimals);
    let span = 10i64.pow(int_digits) * scale;
    (0..len)
        .map(|i| {
            if special_every > 0 && i % special_every == special_every / 2 {
                SPECIALS[rng.gen_range(0..SPECIALS.len())]
            } else {
                // Parse the printed decimal, as the loader would.
                let n = rng.gen_range(-span..=span);
                let text = format!(
                    "{}{}.{:0w$}",
                    if n < 0 { "-" } else { "" },
                    n.abs() / scale,
                    n.abs() % scale,
                    w = decimals as usize
                );
                text.parse().unwrap()
            }
        })
        .collect()
}

fn random_validity(rng: &mut ChaCha8Rng, len: usize, null_share: f64) -> Option<Bitmap> {
    (null_share > 0.0).then(|| {
        let bits: Vec<bool> = (0..len).map(|_| !rng.gen_bool(null_share)).collect();
        Bitmap::from_bools(&bits)
    })
}

/// Many shapes of partitions: clean decimals, with specials, with NULLs,
/// tiny, constant.
fn cases() -> Vec<(Vec<f64>, Option<Bitmap>)> {
    let mut rng = ChaCha8Rng::seed_from_u64(10);
    let mut out = Vec::new();
    for case in 0..60 {
        let len = [1, 2, 31, 64, 65, 1000, 5000][case % 7];
        let decimals = (case % 7) as u32;
        let int_digits = [0, 1, 3, 5][case % 4];
        let special_every = [0, 0, 7, 50][case % 4];
        let values = column(&mut rng, len, decimals, int_digits, special_every);
        let validity = random_validity(&mut rng, len, [0.0, 0.0, 0.2][case % 3]);
        out.push((values, validity));
    }
    out.push((vec![12.5; 100], None));
    out.push(([0.0, -0.0, 0.0, 1.0].repeat(20), None));
    out.push(((0..300).map(|i| i as f64 * 1000.0).collect(), None));
    out.push(((0..300).map(|i| -(i as f64) / 8.0).collect(), None));
    out
}

fn valid(v: &Option<Bitmap>, i: usize) -> bool {
    v.as_ref().is_none_or(|b| b.get(i))
}

#[test]
fn round_trips_bit_for_bit() {
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let mut encoded = 0;
    for (values, validity) in cases() {
        let Some(alp) = Alp::encode(&values, validity.as_ref()) else {
            continue;
        };
        encoded += 1;
        assert!(alp.heap_bytes() < values.len() * 8);
        for (i, &x) in values.iter().enumerate() {
            if valid(&validity, i) {
                assert_eq!(alp.get(i).to_bits(), x.to_bits(), "row {i} of {values:?}");
            }
        }
        for _ in 0..20 {
            let a = rng.gen_range(0..=values.len());
            let b = rng.gen_range(a..=values.len());
            let mut out = vec![7.0];
            alp.decode_range(a..b, &mut out);
            assert_eq!(out.len(), 1 + b - a);
            for (j, i) in (a..b).enumerate() {
                if valid(&validity, i) {
                    assert_eq!(out[1 + j].to_bits(), values[i].to_bits());
                }
            }
            let selection: Vec<u32> = (0..values.len() as u32)
                .filter(|_| rng.gen_bool(0.3))
                .collect();
            let mut out = Vec::new();
            alp.decode_selection(&selection, &mut out);
            for (j, &i) in selection.iter().enumerate() {
                if valid(&validity, i as usize) {
                    assert_eq!(out[j].to_bits(), values[i as usize].to_bits());
                }
            }
        }
    }
    assert!(encoded >= 50, "only {encoded} cases encoded");
}

#[test]
fn picks_the_decimal_exponent_and_narrow_codes() {
    let money: Vec<f64> = (0..1000).map(|i| (i * 37 % 5000) as f64 / 100.0).collect();
    let alp = Alp::encode(&money, None).unwrap();
    assert_eq!(alp.exponent(), -2);
    assert_eq!(alp.codes().width_name(), "u16");
    assert!(alp.exceptions().0.is_empty());

    let coords: Vec<f64> = (0..1000)
        .map(|i| format!("-73.{:06}", 900_000 + i * 97).parse().unwrap())
        .collect();
    let alp = Alp::encode(&coords, None).unwrap();
    assert_eq!(alp.exponent(), -6);
    // 97,000 codes: 17 bits bit-packed instead of a u32.
    assert_eq!(alp.codes().width_name(), "b17");

    let thousands: Vec<f64> = (0..1000).map(|i| (i * 1000) as f64).collect();
    let alp = Alp::encode(&thousands, None).unwrap();
    assert_eq!(alp.exponent(), 3);
    // 1,000 codes: 10 bits, a saving of more than a quarter over u16.
    assert_eq!(alp.codes().width_name(), "b10");
}

#[test]
fn full_precision_and_mostly_special_columns_stay_f64() {
    let mut rng = ChaCha8Rng::seed_from_u64(2);
    let random: Vec<f64> = (0..1000)
        .map(|_| 1.0 + 999.0 * rng.r#gen::<f64>())
        .collect();
    assert!(Alp::encode(&random, None).is_none());
    let nans = vec![f64::NAN; 100];
    assert!(Alp::encode(&nans, None).is_none());
    let all_null = Bitmap::new(10, false);
    assert!(Alp::encode(&[1.0; 10], Some(&all_null)).is_none());
    assert!(Alp::encode(&[], None).is_none());
}

#[test]
fn exceptions_hold_specials_and_long_values() {
    let mut values: Vec<f64> = (0..200).map(|i| i as f64 / 10.0).collect();
    values[3] = -0.0;
    values[50] = f64::NAN;
    values[51] = f64::NEG_INFINITY;
    values[199] = 0.1 + 0.2;
    let alp = Alp::encode(&values, None).unwrap();
    assert_eq!(alp.exponent(), -1);
    assert_eq!(alp.exceptions().0, &[3, 50, 51, 199]);
    assert_eq!(alp.get(3).to_bits(), (-0.0f64).to_bits());
    assert!(alp.get(50).is_nan());
    assert_eq!(alp.codes().get(50), 0);
}

/// Constants to compare with: every value, its neighbours, midpoints, and
/// specials.
fn constants(values: &[f64]) -> Vec<f64> {
    let mut cs = vec![
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        0.0,
        -0.0,
        0.005,
        1e-300,
        -1e300,
    ];
    for w in values.windows(2).step_by(17) {
        let x = w[0];
        cs.extend([x, x.next_up(), x.next_down(), (w[0] + w[1]) / 2.0]);
    }
    cs
}

#[test]
fn comparisons_match_a_decode_then_compare_oracle() {
    for (values, validity) in cases() {
        let Some(alp) = Alp::encode(&values, validity.as_ref()) else {
            continue;
        };
        for c in constants(&values) {
            for op in CmpOp::ALL {
                let words = alp.filter(op, c, validity.as_ref());
                assert_eq!(words.len(), values.len().div_ceil(64));
                for (i, &x) in values.iter().enumerate() {
                    let expected = valid(&validity, i) && op.holds(cmp_f64(x, c));
                    let got = (words[i / 64] >> (i % 64)) & 1 == 1;
                    assert_eq!(got, expected, "{x} {op:?} {c}");
                }
                // The code predicate alone covers every non-exception code.
                let pred = alp.code_predicate(op, c);
                for code in 0..=alp.max_code().min(2000) {
                    let x = alp.decode_code(code);
                    assert_eq!(pred.matches(code), op.holds(cmp_f64(x, c)));
                }
            }
        }
    }
}

/// The exact decimal a value prints as, as (digits, exponent).
fn printed_decimal(x: f64) -> (i128, i32) {
    let text = format!("{x}");
    let (int, frac) = text.split_once('.').unwrap_or((&text, ""));
    let digits: i128 = format!("{int}{frac}").parse().unwrap();
    (digits, -(frac.len() as i32))
}

#[test]
fn sums_are_exact_decimal_sums_rounded_once() {
    for (values, validity) in cases() {
        let Some(alp) = Alp::encode(&values, validity.as_ref()) else {
            continue;
        };
        let sum = alp.sum(validity.as_ref());
        let (rows, exc) = alp.exceptions();
        let mut exact = 0i128; // in units of 10^-20
        let mut exceptions = 0.0;
        let mut count = 0;
        for (i, &x) in values.iter().enumerate() {
            if !valid(&validity, i) {
                continue;
            }
            match rows.binary_search(&(i as u32)) {
                Ok(k) => exceptions += exc[k],
                Err(_) => {
                    let (d, e) = printed_decimal(x);
                    exact += d * 10i128.pow((20 + e) as u32);
                    count += 1;
                }
            }
        }
        assert_eq!(sum.decimal.count, count);
        let scaled = sum.decimal.digits * 10i128.pow((20 + sum.decimal.exponent as i32) as u32);
        assert_eq!(scaled, exact, "{values:?}");
        let expected: f64 = format!("{exact}e-20").parse().unwrap();
        assert_eq!(sum.decimal.to_f64().to_bits(), expected.to_bits());
        assert_eq!(sum.exception_count, rows.len() as u64);
        assert_eq!(sum.exceptions.to_bits(), exceptions.to_bits());
    }
}

#[test]
fn money_sums_are_exact_to_the_cent() {
    // 0.1 summed in f64 drifts; the decimal sum does not.
    let values = vec![0.1; 1000];
    let alp = Alp::encode(&values, None).unwrap();
    let sum = alp.sum(None);
    assert_eq!((sum.decimal.digits, sum.decimal.exponent), (1000, -1));
    assert_eq!(sum.to_f64(), 100.0);
    assert_ne!(values.iter().sum::<f64>(), 100.0);
    // Beyond 2^53 digits the string path rounds correctly too.
    let big = DecimalSum {
        digits: (1i128 << 60) + 1,
        exponent: -2,
        count: 1,
    };
    let expected: f64 = format!("{}e-2", (1i128 << 60) + 1).parse().unwrap();
    assert_eq!(big.to_f64(), expected);
}

#[test]
fn min_max_match_the_oracle() {
    for (values, validity) in cases() {
        let Some(alp) = Alp::encode(&values, validity.as_ref()) else {
            continue;
        };
        let present: Vec<f64> = (0..values.len())
            .filter(|&i| valid(&validity, i))
            .map(|i| values[i])
            .collect();
        let mut min: Option<f64> = None;
        let mut max: Option<f64> = None;
        for &x in &present {
            if min.is_none_or(|m| cmp_f64(x, m).is_lt()) {
                min = Some(x);
            }
            if max.is_none_or(|m| cmp_f64(x, m).is_gt()) {
                max = Some(x);
            }
        }
        let bits = |v: Option<f64>| v.map(f64::to_bits);
        assert_eq!(bits(alp.min(validity.as_ref())), bits(min), "{values:?}");
        assert_eq!(bits(alp.max(validity.as_ref())), bits(max), "{values:?}");
    }
}

/// Checks a mapped column against `f` row by row; returns whether the
/// kernel applied (`None` means the caller falls back to f64).
fn check_map(
    values: &[f64],
    validity: &Option<Bitmap>,
    got: Option<Alp>,
    f: impl Fn(f64) -> f64,
) -> bool {
    let Some(got) = got else {
        return false;
    };
    for (i, &x) in values.iter().enumerate() {
        if valid(validity, i) {
            assert_eq!(got.get(i).to_bits(), f(x).to_bits(), "f({x}) at {i}");
        }
    }
    true
}

#[test]
fn floor_ceil_round_match_f64_and_eval() {
    use crate::plan::eval::round_f64;
    let mut all = cases();
    // Decimal ties that binary rounds the other way, and -0.0 results.
    all.push((
        vec![
            1.005, 2.675, -0.5, -0.4, 0.5, 1.5, -2.5, 0.125, -0.125, 1.115, -0.001, 0.0,
        ],
        None,
    ));
    let mut applied = 0;
    for (values, validity) in all {
        let Some(alp) = Alp::encode(&values, validity.as_ref()) else {
            continue;
        };
        applied += check_map(&values, &validity, alp.floor(), f64::floor) as usize;
        applied += check_map(&values, &validity, alp.ceil(), f64::ceil) as usize;
        for d in 0..8 {
            applied += check_map(&values, &validity, alp.round(d), |x| round_f64(x, d)) as usize;
        }
        assert!(alp.round(-1).is_none());
        assert!(alp.round(19).is_none());
    }
    assert!(applied > 400, "kernels applied {applied} times");
    let alp = Alp::encode(&[1.005, 2.675, 1.25, 3.0], None).unwrap();
    let r = alp.round(2).unwrap();
    assert_eq!(r.exponent(), -2);
    let r = alp.round(1).unwrap();
    assert_eq!(r.exponent(), -1);
    assert_eq!(r.get(2), round_f64(1.25, 1));
}

#[test]
fn group_keys_are_equal_exactly_when_values_are() {
    for (values, validity) in cases() {
        let Some(alp) = Alp::encode(&values, validity.as_ref()) else {
            continue;
        };
        let mut keys = Vec::new();
        alp.group_keys(0..values.len(), &mut keys);
        let count = alp.group_key_count();
        let rows: Vec<usize> = (0..values.len())
            .filter(|&i| valid(&validity, i))
            .take(300)
            .collect();
        for &i in &rows {
            assert!(keys[i] < count);
            let v = alp.group_key_value(keys[i]);
            assert_eq!(cmp_f64(v, values[i]), Ordering::Equal);
            for &j in &rows {
                let same = cmp_f64(values[i], values[j]) == Ordering::Equal;
                assert_eq!(keys[i] == keys[j], same, "{} {}", values[i], values[j]);
            }
        }
        let mut part = Vec::new();
        alp.group_keys(values.len() / 3..values.len(), &mut part);
        assert_eq!(part, keys[values.len() / 3..]);
    }
}

#[test]
fn bit_packs_only_when_it_saves_a_quarter() {
    use crate::store::alp_codes::{code_bytes, packs_bits};
    // (largest code, bit-packed?)
    let cases: [(u64, bool); 12] = [
        (0, true),
        ((1 << 6) - 1, true),
        ((1 << 7) - 1, false),
        (255, false),
        ((1 << 12) - 1, true),
        ((1 << 13) - 1, false),
        ((1 << 17) - 1, true),
        ((1 << 24) - 1, true),
        ((1 << 25) - 1, false),
        (u32::MAX as u64, false),
        ((1 << 48) - 1, true),
        ((1 << 49) - 1, false),
    ];
    let len = 10_000;
    for (max, packed) in cases {
        assert_eq!(packs_bits(max, len), packed, "max {max}");
        let codes = AlpCodes::pack((0..len).map(|i| (i % 2) as u64 * max), max);
        assert_eq!(matches!(codes, AlpCodes::Bits(_)), packed, "max {max}");
        assert_eq!(codes.heap_bytes(), code_bytes(max, len));
        assert_eq!(codes.get(1), max);
    }
    // A few rows stay at byte width: the padding would cost more.
    assert!(!packs_bits(300_000, 4));
    let width = |max| AlpCodes::pack((0..1000).map(|_| 5), max).width_name();
    assert_eq!(width(300_000), "b19");
    assert_eq!(width(70_000_000), "u32");
}

/// Coordinates with six decimals over up to 0.3 degrees (17–19 bits) or
/// money up to 160,000.00 (24 bits), with exceptions (NaN, -0.0, ±inf,
/// long values), NULLs, at lengths around the unpack batches: every kernel
/// against decoding row by row.
#[test]
fn bit_packed_codes_match_row_by_row_decoding() {
    let mut rng = ChaCha8Rng::seed_from_u64(24);
    let mut seen_bits = std::collections::BTreeSet::new();
    for case in 0..12 {
        let len = [100, 63, 1000, 1025, 3000, 5000][case % 6];
        let (scale, span) = if case % 3 == 2 {
            (100.0, 16_000_000)
        } else {
            (1e6, [100_000, 300_000][case % 2])
        };
        let mut values: Vec<f64> = (0..len)
            .map(|_| {
                let n = rng.gen_range(0..=span) - span / 2;
                // Printed and parsed, as the loader would.
                format!("{:.6}", n as f64 / scale).parse().unwrap()
            })
            .collect();
        for i in (0..len).filter(|i| i % 97 == 13) {
            values[i] = [f64::NAN, -0.0, f64::INFINITY, 0.1 + 0.2, -1e300][i % 5];
        }
        let validity = random_validity(&mut rng, len, [0.0, 0.1][case % 2]);
        let alp = Alp::encode(&values, validity.as_ref()).unwrap();
        let AlpCodes::Bits(packed) = alp.codes() else {
            panic!("case {case}: {} codes", alp.codes().width_name());
        };
        assert!((17..=24).contains(&packed.bits()), "{} bits", packed.bits());
        seen_bits.insert(packed.bits());
        let v = validity.as_ref();
        let present: Vec<usize> = (0..len).filter(|&i| valid(&validity, i)).collect();
        // Codes, read every way.
        let codes: Vec<u64> = (0..len).map(|i| packed.get(i)).collect();
        let mut all = Vec::new();
        alp.codes().for_each(0..len, |i, c| all.push((i, c)));
        assert_eq!(all, codes.iter().copied().enumerate().collect::<Vec<_>>());
        let selection: Vec<u32> = (0..len as u32).filter(|_| rng.gen_bool(0.4)).collect();
        let mut picked = Vec::new();
        alp.codes()
            .for_each_selected(&selection, |j, c| picked.push((j, c)));
        let want: Vec<(usize, u64)> = selection
            .iter()
            .enumerate()
            .map(|(j, &r)| (j, codes[r as usize]))
            .collect();
        assert_eq!(picked, want);
        let start = len / 3;
        let mut masks = Vec::new();
        alp.codes()
            .block_masks(start..len, |c| c.is_multiple_of(3), &mut masks);
        assert_eq!(masks.len(), (len - start).div_ceil(64));
        for (k, c) in codes[start..].iter().enumerate() {
            assert_eq!((masks[k / 64] >> (k % 64)) & 1 == 1, c.is_multiple_of(3));
        }
        for (w, &mask) in masks.iter().enumerate() {
            let from = start + 64 * w;
            let one = alp.codes().block_mask(from..(from + 64).min(len), |c| c.is_multiple_of(3));
            assert_eq!(one, mask, "block {w}");
        }
        // Decoding: ranges, selections, single rows.
        for i in present.iter().copied() {
            assert_eq!(alp.get(i).to_bits(), values[i].to_bits(), "row {i}");
        }
        let mut out = Vec::new();
        alp.decode_range(start..len, &mut out);
        let mut picked = Vec::new();
        alp.decode_selection(&selection, &mut picked);
        for i in present.iter().copied() {
            if i >= start {
                assert_eq!(out[i - start].to_bits(), values[i].to_bits());
            }
        }
        for (j, &r) in selection.iter().enumerate() {
            if valid(&validity, r as usize) {
                assert_eq!(picked[j].to_bits(), values[r as usize].to_bits());
            }
        }
        // Filters.
        for c in [values[len / 2], 0.0, -0.0, 0.0123, f64::NAN, 1e9] {
            for op in CmpOp::ALL {
                let words = alp.filter(op, c, v);
                for (i, &x) in values.iter().enumerate() {
                    let expected = valid(&validity, i) && op.holds(cmp_f64(x, c));
                    assert_eq!((words[i / 64] >> (i % 64)) & 1 == 1, expected);
                }
            }
        }
        // Sum: the decimal part exactly, the exceptions in row order.
        let sum = alp.sum(v);
        let (exc_rows, _) = alp.exceptions();
        let (mut digits, mut exceptions, mut count) = (0i128, 0.0f64, 0u64);
        for &i in &present {
            if exc_rows.binary_search(&(i as u32)).is_ok() {
                exceptions += values[i];
            } else {
                digits += alp.base() as i128 + codes[i] as i128;
                count += 1;
            }
        }
        assert_eq!(sum.decimal.digits, digits);
        assert_eq!(sum.decimal.count, count);
        assert_eq!(sum.exceptions.to_bits(), exceptions.to_bits());
        // Min and max (first row wins among equals).
        let pick = |want: Ordering| {
            present.iter().fold(None::<f64>, |best, &i| match best {
                Some(b) if cmp_f64(values[i], b) != want => Some(b),
                _ => Some(values[i]),
            })
        };
        let bits = |x: Option<f64>| x.map(f64::to_bits);
        assert_eq!(bits(alp.min(v)), bits(pick(Ordering::Less)));
        assert_eq!(bits(alp.max(v)), bits(pick(Ordering::Greater)));
        // Group keys: equal exactly when the values are.
        let mut keys = Vec::new();
        alp.group_keys(start..len, &mut keys);
        for (k, &key) in keys.iter().enumerate() {
            let i = start + k;
            if valid(&validity, i) {
                let back = alp.group_key_value(key);
                assert_eq!(cmp_f64(back, values[i]), Ordering::Equal, "row {i}");
            }
        }
    }
    assert!(seen_bits.len() >= 3, "widths {seen_bits:?}");
}

#[test]
fn cases_cover_both_code_layouts() {
    let (mut bits, mut bytes) = (0, 0);
    for (values, validity) in cases() {
        match Alp::encode(&values, validity.as_ref()).as_ref().map(Alp::codes) {
            Some(AlpCodes::Bits(_)) => bits += 1,
            Some(AlpCodes::Bytes(_)) => bytes += 1,
            None => {}
        }
    }
    assert!(bits >= 10 && bytes >= 10, "{bits} bit-packed, {bytes} bytes");
}

/// The vector encoder of a block agrees with `encode_digits` on every
/// value and exponent: specials, -0.0, subnormals, values around 2^51
/// digits, and decimals that do or do not round-trip.
#[test]
fn block_encoding_agrees_with_encode_digits() {
    let mut rng = ChaCha8Rng::seed_from_u64(39);
    let mut values: Vec<f64> = SPECIALS.to_vec();
    values.extend([
        0.0,
        -0.0,
        f64::MIN_POSITIVE,
        -5e-324,
        f64::MAX,
        (MAX_DIGITS - 1) as f64,
        MAX_DIGITS as f64,
        -(MAX_DIGITS as f64) + 1.0,
        (MAX_DIGITS as f64) - 0.5,
        0.1,
        1.005,
        123_456.789,
        9.999_999_999_999_999e14,
    ]);
    for _ in 0..2000 {
        let digits = rng.gen_range(-(1i64 << 52)..(1i64 << 52));
        let e = rng.gen_range(MIN_EXPONENT..=MAX_EXPONENT);
        values.push(decode_digits(digits, e));
        values.push(f64::from_bits(rng.r#gen()));
        values.push(rng.gen_range(-1e6..1e6));
    }
    for exponent in MIN_EXPONENT..=MAX_EXPONENT {
        for block in values.chunks(64) {
            let mut rounded = vec![0.0; block.len()];
            let mut fits = vec![false; block.len()];
            if exponent < 0 {
                encode_block::<true>(block, exponent, &mut rounded, &mut fits);
            } else {
                encode_block::<false>(block, exponent, &mut rounded, &mut fits);
            }
            for (j, &x) in block.iter().enumerate() {
                let got = fits[j].then(|| rounded[j] as i64);
                assert_eq!(got, encode_digits(x, exponent), "{x:e} at 10^{exponent}");
            }
        }
    }
}
