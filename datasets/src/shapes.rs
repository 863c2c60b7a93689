//! The `shapes` data set: one table with a column for each query shape the
//! `shapes` benchmark workload stresses (top-n over heavy ties, string keys
//! of growing cardinality, computed and sparse keys, per-group distinct
//! counts, long OR filters, wide arithmetic).
//!
//! # Shapes
//! - `id` is the 1-based row number; `u` a unique pseudo-random 63-bit id.
//! - `k4` is 0, 1, 2 or 3 (40, 30, 20 and 10 % of rows); `s4` is `north`,
//!   `east`, `south` or `west` with the same shares, drawn independently.
//! - `g1000` is uniform over 0..=999.
//! - `s10k`, `s100k` and `s1m` are strings with 10,000, 100,000 and
//!   1,000,000 possible values, uniform: value `j` is `{NAME}_{j}` with
//!   `NAME` the `j mod 16`-th of the NATO alphabet's first sixteen words
//!   (`alpha` … `papa`), e.g. `charlie_18`. A column sees about
//!   `K·(1 − e^(−n/K))` distinct values over `n` rows.
//! - `a`, `b` and `c` (each 0..=499) come from one of 3,000 fixed triples,
//!   uniform: a 500 × 500 (× 500) key space of which at most 3,000 pairs
//!   (triples) occur.
//! - `x` is uniform over 0..=9999 and `y` over 0.00..=999.99 (two
//!   decimals).

use rand::RngCore;

use crate::out::{ID_MASK, Out, hash, id63, range};

/// The header line, with its line break.
pub(crate) const HEADER: &str = "id,u,k4,s4,g1000,s10k,s100k,s1m,a,b,c,x,y\n";

/// Typical bytes per row, for buffer sizing.
pub(crate) const ROW_BYTES: usize = 110;

/// The first sixteen words of the NATO phonetic alphabet: the prefixes of
/// the `s10k`, `s100k` and `s1m` values.
pub(crate) const KEY_NAMES: [&str; 16] = [
    "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliett",
    "kilo", "lima", "mike", "november", "oscar", "papa",
];
const DIRECTIONS: [&str; 4] = ["north", "east", "south", "west"];
const TRIPLES: u64 = 3_000;

/// Per-call constants.
pub(crate) struct Shapes {
    seed: u64,
    key: u64,
}

impl Shapes {
    pub(crate) fn new(seed: u64) -> Shapes {
        Shapes {
            seed,
            key: hash(&[seed, 0x5348_4150]) & ID_MASK,
        }
    }

    /// Appends rows `first..first + n` (0-based) to `out`.
    pub(crate) fn rows(&self, first: u64, n: u64, rng: &mut impl RngCore, out: &mut Out) {
        for i in first..first + n {
            out.int(i + 1);
            out.comma();
            out.int(id63(i + 1, self.key));
            out.comma();
            let draw = rng.next_u32() % 10;
            out.int(four(draw));
            out.comma();
            out.s(DIRECTIONS[four(rng.next_u32() % 10)]);
            out.comma();
            out.int(range(rng, 0, 999));
            for k in [10_000, 100_000, 1_000_000] {
                out.comma();
                let j = range(rng, 0, k - 1) as u64;
                out.s(KEY_NAMES[(j % 16) as usize]);
                out.b(b'_');
                out.int(j);
            }
            let t = range(rng, 0, TRIPLES as i64 - 1) as u64;
            for part in 1..=3 {
                out.comma();
                out.int(hash(&[self.seed, 0x5452_4950, t, part]) % 500);
            }
            out.comma();
            out.int(range(rng, 0, 9_999));
            out.comma();
            out.fixed(range(rng, 0, 99_999), 2);
            out.nl();
        }
    }
}

/// Maps a uniform draw from 0..10 to 0 (4 in 10), 1 (3), 2 (2) or 3 (1).
fn four(draw: u32) -> usize {
    match draw {
        0..4 => 0,
        4..7 => 1,
        7..9 => 2,
        _ => 3,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn four_has_the_documented_shares() {
        let counts = (0..10).fold([0; 4], |mut c, d| {
            c[four(d)] += 1;
            c
        });
        assert_eq!(counts, [4, 3, 2, 1]);
    }

    #[test]
    fn header_has_13_columns() {
        assert_eq!(HEADER.trim_end().split(',').count(), 13);
    }
}
