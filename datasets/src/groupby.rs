//! The `groupby` data set: the table `x` of the H2O db-benchmark groupby
//! task (now kept by DuckDB Labs), its "G1" data.
//!
//! A port of db-benchmark's `_data/groupby-datagen.R` with K = 100 groups,
//! no NAs and rows in random order (`groupby-datagen.R N 1e2 0 0`). The R
//! script draws with R's own generator (`set.seed(108)`), so the values
//! here differ; the shapes are the script's. Every column is drawn
//! independently for every row, uniformly with replacement:
//!
//! - `id1`, `id2`: `id001` … `id100` (`sprintf("id%03d", 1:K)`), strings of
//!   K values;
//! - `id3`: `id0000000001` … (`sprintf("id%010d", 1:(N/K))`), strings of
//!   N/K values;
//! - `id4`, `id5`: integers in `1..=K`;
//! - `id6`: an integer in `1..=N/K`;
//! - `v1`: an integer in `1..=5`; `v2`: an integer in `1..=15`;
//! - `v3`: uniform on [0, 100] rounded to 6 decimals (`round(runif(N, max
//!   = 100), 6)`), written as exact decimal text without trailing zeros
//!   (`23.574912`, `5`), as the script's `fwrite` does.
//!
//! Columns in the script's order: `id1,id2,id3,id4,id5,id6,v1,v2,v3`.
//! N/K is rounded down (R's `1:(N/K)`), and is at least 1.

use rand::RngCore;

use crate::out::{Out, range};

/// The number of groups of `id1`, `id2`, `id4` and `id5` (the script's K,
/// 100 in the benchmark's G1 data).
pub(crate) const K: u64 = 100;

/// The header line, with its line break.
pub(crate) const HEADER: &str = "id1,id2,id3,id4,id5,id6,v1,v2,v3\n";

/// Typical bytes per row, for buffer sizing.
pub(crate) const ROW_BYTES: usize = 56;

/// Per-call constants.
pub(crate) struct Groupby {
    /// N/K, at least 1: the values of `id3` and `id6`.
    small_groups: u64,
}

impl Groupby {
    pub(crate) fn new(rows: u64) -> Groupby {
        Groupby {
            small_groups: small_groups(rows),
        }
    }

    /// Appends `n` rows to `out`, every field drawn from `rng`.
    pub(crate) fn rows(&self, n: u64, rng: &mut impl RngCore, out: &mut Out) {
        let k = K as i64;
        let groups = self.small_groups as i64;
        for _ in 0..n {
            for _ in 0..2 {
                id(range(rng, 1, k), 3, out);
                out.comma();
            }
            id(range(rng, 1, groups), 10, out);
            out.comma();
            for hi in [k, k, groups, 5, 15] {
                out.int(range(rng, 1, hi));
                out.comma();
            }
            // round(runif(1, max = 100), 6): a whole number of millionths
            // in [0, 1e8] (Lemire's multiply-shift of a 64-bit draw).
            let micro = ((u128::from(rng.next_u64()) * 100_000_001) >> 64) as u32;
            crate::join::decimal6(micro, &mut out.buf);
            out.nl();
        }
    }
}

/// The values of `id3` and `id6` at `rows` rows: `rows / K` rounded down,
/// at least 1.
pub(crate) fn small_groups(rows: u64) -> u64 {
    (rows / K).max(1)
}

/// Appends `id` and `v` zero-padded to `width` digits (`sprintf("id%03d",
/// v)`): `id(7, 3)` is `id007`.
fn id(v: i64, width: usize, out: &mut Out) {
    out.s("id");
    let mut b = itoa::Buffer::new();
    let digits = b.format(v);
    for _ in digits.len()..width {
        out.b(b'0');
    }
    out.s(digits);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_zero_padded_as_sprintf() {
        let mut out = Out::with_capacity(64);
        for (v, w) in [(7, 3), (100, 3), (1, 10), (100_000, 10)] {
            id(v, w, &mut out);
            out.comma();
        }
        assert_eq!(
            String::from_utf8(out.buf).unwrap(),
            "id007,id100,id0000000001,id0000100000,"
        );
    }

    #[test]
    fn small_groups_follow_n_over_k() {
        assert_eq!(small_groups(10_000_000), 100_000);
        assert_eq!(small_groups(1_000_000), 10_000);
        assert_eq!(small_groups(1_050), 10);
        assert_eq!(small_groups(99), 1);
        assert_eq!(small_groups(0), 1);
    }

    #[test]
    fn header_has_9_columns() {
        assert_eq!(HEADER.trim_end().split(',').count(), 9);
    }
}
