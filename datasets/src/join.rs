//! The tables of the H2O db-benchmark join task: `x` joined with `small`,
//! `medium` and `big`.
//!
//! A port of db-benchmark's `_data/join-datagen.R` (H2O.ai, now kept by
//! DuckDB Labs; design notes in h2oai/db-benchmark#106) with NAs off and
//! rows in random order (`join-datagen.R N 0 0 0`). The R script draws
//! with R's own generator (`set.seed(108)`), so the values here differ;
//! the shapes are the script's:
//!
//! - for each key level — `id1` (N/1e6 values), `id2` (N/1e3), `id3` (N) —
//!   `split_xlr(n)` draws a random permutation of `1..=1.1·n` and splits it
//!   into `x` (the first 0.9·n keys, on both sides), `l` (the next 0.1·n,
//!   left side only) and `r` (the last 0.1·n, right side only);
//! - `x` (N rows) takes `id1`, `id2`, `id3` each from its level's `x ∪ l`
//!   keys, every key at least once and the rest drawn with replacement, in
//!   random order (`sample_all`); so `id3` is unique, and 90% of the
//!   distinct keys of each level find a match on the right;
//! - `small` (N/1e6 rows): `id1` from `x ∪ r` of level 1, unique;
//! - `medium` (N/1e3 rows): `id1` from level 1 (`sample_all`, repeated),
//!   `id2` from `x ∪ r` of level 2, unique;
//! - `big` (N rows): `id1`, `id2` drawn as in `medium`, `id3` from `x ∪ r`
//!   of level 3, unique;
//! - `id4`, `id5`, `id6` are `id1`, `id2`, `id3` as text with the prefix
//!   `id` (`id42`), where the table has them;
//! - `v1` (in `x`) and `v2` (in the others) are uniform on [0, 100] rounded
//!   to 6 decimals, written as exact decimal text (`61.478361`).
//!
//! Columns in the script's order: `x` is `id1,id2,id3,id4,id5,id6,v1`;
//! `small` `id1,id4,v2`; `medium` `id1,id2,id4,id5,v2`; `big`
//! `id1,id2,id3,id4,id5,id6,v2`.
//!
//! One liberty: the script needs N ≥ 1e7; here any N from 10 works, with
//! `small` and `medium` at least 10 rows (N/1e6 and N/1e3 rounded, raised
//! to 10), so that every level keeps keys in `x`, `l` and `r`.
//!
//! # Determinism
//! The bytes are a pure function of `(N, seed)`: each draw comes from a
//! ChaCha8 generator seeded with `seed` on a stream of its own, and rows are
//! formatted in parallel chunks written in order.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::CHUNK_ROWS;

/// The fewest rows of `x` accepted.
pub const MIN_ROWS: u64 = 10;
/// The most rows of `x` accepted (the script's largest size, 1e9).
pub const MAX_ROWS: u64 = 1_000_000_000;

/// A table of the join task.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum JoinTable {
    /// The left side: N rows.
    X,
    /// N/1e6 rows, unique `id1`.
    Small,
    /// N/1e3 rows, unique `id2`.
    Medium,
    /// N rows, unique `id3`.
    Big,
}

impl JoinTable {
    /// Every table, `x` first.
    pub const ALL: [JoinTable; 4] = [
        JoinTable::X,
        JoinTable::Small,
        JoinTable::Medium,
        JoinTable::Big,
    ];

    /// The table's name: `x`, `small`, `medium` or `big`.
    pub fn name(self) -> &'static str {
        match self {
            JoinTable::X => "x",
            JoinTable::Small => "small",
            JoinTable::Medium => "medium",
            JoinTable::Big => "big",
        }
    }

    /// The file name the table is written to: `x.csv`.
    pub fn file_name(self) -> String {
        format!("{}.csv", self.name())
    }

    /// The CSV header line, without its line break.
    pub fn header(self) -> &'static str {
        match self {
            JoinTable::X => "id1,id2,id3,id4,id5,id6,v1",
            JoinTable::Small => "id1,id4,v2",
            JoinTable::Medium => "id1,id2,id4,id5,v2",
            JoinTable::Big => "id1,id2,id3,id4,id5,id6,v2",
        }
    }

    /// Tag of the table's random streams.
    fn tag(self) -> u64 {
        match self {
            JoinTable::X => 1,
            JoinTable::Small => 2,
            JoinTable::Medium => 3,
            JoinTable::Big => 4,
        }
    }
}

/// The keys of one level, split as the script's `split_xlr`: a permutation
/// of `1..=n + n/10` whose first `n - n/10` keys are `x`, the next `n/10`
/// `l` and the last `n/10` `r`.
struct Level {
    keys: Vec<u32>,
    /// Distinct keys of the level (`x ∪ l`, and also `|x ∪ r|`).
    n: usize,
}

impl Level {
    fn new(n: usize, rng: &mut ChaCha8Rng) -> io::Result<Level> {
        let total = n + n / 10;
        let mut keys = vec_of(total)?;
        keys.extend(1..=total as u32);
        keys.shuffle(rng);
        Ok(Level { keys, n })
    }

    /// The keys of the left side, `x ∪ l`.
    fn left(&self) -> &[u32] {
        &self.keys[..self.n]
    }

    /// The keys of the right side, `x ∪ r`.
    fn right(&self) -> impl Iterator<Item = u32> + '_ {
        let x = self.n - self.n / 10;
        self.keys[..x].iter().chain(&self.keys[self.n..]).copied()
    }
}

/// An empty vector with room for `n` keys, or an `OutOfMemory` error.
fn vec_of(n: usize) -> io::Result<Vec<u32>> {
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|_| {
        io::Error::new(
            io::ErrorKind::OutOfMemory,
            format!("cannot allocate {n} join keys"),
        )
    })?;
    Ok(v)
}

/// The script's `sample_all(keys, size)`: every key once, then
/// `size - |keys|` keys drawn with replacement, in random order.
fn sample_all(
    keys: impl Iterator<Item = u32>,
    size: usize,
    rng: &mut ChaCha8Rng,
) -> io::Result<Vec<u32>> {
    let mut out = vec_of(size)?;
    out.extend(keys);
    let distinct = out.len();
    debug_assert!(distinct <= size && distinct > 0);
    for _ in distinct..size {
        let k = out[rng.gen_range(0..distinct)];
        out.push(k);
    }
    out.shuffle(rng);
    Ok(out)
}

/// The join task's data at N rows of `x`: the three key levels, from which
/// each table is drawn when written.
pub struct JoinData {
    rows: u64,
    seed: u64,
    levels: [Level; 3],
}

impl JoinData {
    /// The keys for `x` at `rows` rows and `seed`.
    ///
    /// # Errors
    /// `InvalidInput` when `rows` is not in [`MIN_ROWS`]..=[`MAX_ROWS`];
    /// `OutOfMemory` when the keys (4.4 bytes per row) do not fit.
    pub fn new(rows: u64, seed: u64) -> io::Result<JoinData> {
        if !(MIN_ROWS..=MAX_ROWS).contains(&rows) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("the join task's x needs {MIN_ROWS} to {MAX_ROWS} rows, not {rows}"),
            ));
        }
        let sizes = [
            Self::scaled(rows, 1_000_000),
            Self::scaled(rows, 1_000),
            rows,
        ];
        let mut levels = Vec::with_capacity(3);
        for (i, n) in sizes.into_iter().enumerate() {
            levels.push(Level::new(n as usize, &mut rng(seed, 0, i as u64))?);
        }
        let levels: [Level; 3] = levels.try_into().unwrap_or_else(|_| unreachable!());
        Ok(JoinData { rows, seed, levels })
    }

    /// N / `div` rounded, at least [`MIN_ROWS`].
    fn scaled(rows: u64, div: u64) -> u64 {
        ((rows + div / 2) / div).max(MIN_ROWS)
    }

    /// The row count of `table`.
    pub fn rows(&self, table: JoinTable) -> u64 {
        match table {
            JoinTable::X | JoinTable::Big => self.rows,
            JoinTable::Small => self.levels[0].n as u64,
            JoinTable::Medium => self.levels[1].n as u64,
        }
    }

    /// The key columns of `table` (`id1`, `id2`, `id3` as far as it has
    /// them), each of [`JoinData::rows`] keys.
    fn key_columns(&self, table: JoinTable) -> io::Result<Vec<Vec<u32>>> {
        let n = self.rows(table) as usize;
        let tag = table.tag();
        let levels = match table {
            JoinTable::X | JoinTable::Big => 3,
            JoinTable::Small => 1,
            JoinTable::Medium => 2,
        };
        (0..levels)
            .map(|i| {
                let level = &self.levels[i];
                let mut rng = rng(self.seed, tag, i as u64);
                if table == JoinTable::X {
                    sample_all(level.left().iter().copied(), n, &mut rng)
                } else {
                    sample_all(level.right(), n, &mut rng)
                }
            })
            .collect()
    }

    /// Writes `table` as CSV (header first) to `out` and returns its row
    /// count. `out` is not flushed.
    ///
    /// # Errors
    /// `OutOfMemory` when its keys do not fit; any error of `out`.
    pub fn write_table(&self, table: JoinTable, out: &mut dyn Write) -> io::Result<u64> {
        let ids = self.key_columns(table)?;
        let rows = self.rows(table);
        out.write_all(table.header().as_bytes())?;
        out.write_all(b"\n")?;
        let seed = self.seed;
        crate::for_each_piece(
            rows.div_ceil(CHUNK_ROWS),
            |c| {
                let first = (c * CHUNK_ROWS) as usize;
                let end = (first + CHUNK_ROWS as usize).min(rows as usize);
                let mut rng = rng(seed, 16 + table.tag(), c);
                let mut text = Vec::with_capacity((end - first) * 64);
                let mut b = itoa::Buffer::new();
                for r in first..end {
                    for col in &ids {
                        text.extend_from_slice(b.format(col[r]).as_bytes());
                        text.push(b',');
                    }
                    for col in &ids {
                        text.extend_from_slice(b"id");
                        text.extend_from_slice(b.format(col[r]).as_bytes());
                        text.push(b',');
                    }
                    // round(runif(1, max = 100), 6): a whole number of
                    // millionths in [0, 1e8].
                    let micro: u32 = rng.gen_range(0..=100_000_000);
                    decimal6(micro, &mut text);
                    text.push(b'\n');
                }
                text
            },
            |text| out.write_all(&text),
        )?;
        Ok(rows)
    }
}

/// Appends `micro / 1e6` as decimal text without trailing zeros:
/// `61478361` → `61.478361`, `5000000` → `5`, `120000` → `0.12`.
pub(crate) fn decimal6(micro: u32, out: &mut Vec<u8>) {
    let mut b = itoa::Buffer::new();
    out.extend_from_slice(b.format(micro / 1_000_000).as_bytes());
    let frac = micro % 1_000_000;
    if frac != 0 {
        let digits = format!("{frac:06}");
        out.push(b'.');
        out.extend_from_slice(digits.trim_end_matches('0').as_bytes());
    }
}

/// The generator of one draw: `seed` on stream `tag << 40 | index`.
fn rng(seed: u64, tag: u64, index: u64) -> ChaCha8Rng {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(tag << 40 | index);
    rng
}

/// Writes `x`, `small`, `medium` and `big` for `rows` rows of `x` into the
/// directory `dir` (created when missing) as `<table>.csv`, each through a
/// temporary file renamed when complete. Returns each table's path and row
/// count, in [`JoinTable::ALL`] order.
///
/// # Errors
/// As [`JoinData::new`] and [`JoinData::write_table`], and any error
/// creating the directory or a file.
pub fn write_tables(
    dir: &Path,
    rows: u64,
    seed: u64,
) -> io::Result<Vec<(JoinTable, PathBuf, u64)>> {
    let data = JoinData::new(rows, seed)?;
    std::fs::create_dir_all(dir)?;
    let mut written = Vec::new();
    for table in JoinTable::ALL {
        let path = dir.join(table.file_name());
        let n = crate::write_atomically(&path, |w| data.write_table(table, w))?;
        written.push((table, path, n));
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimals_are_exact_text() {
        let mut out = Vec::new();
        for m in [61_478_361, 5_000_000, 120_000, 0, 100_000_000, 1] {
            decimal6(m, &mut out);
            out.push(b' ');
        }
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "61.478361 5 0.12 0 100 0.000001 "
        );
    }

    #[test]
    fn sizes_follow_the_script_with_a_floor() {
        let d = JoinData::new(10_000_000, 1).unwrap();
        assert_eq!(d.rows(JoinTable::Small), 10);
        assert_eq!(d.rows(JoinTable::Medium), 10_000);
        assert_eq!(d.rows(JoinTable::Big), 10_000_000);
        let d = JoinData::new(20_000, 1).unwrap();
        assert_eq!(d.rows(JoinTable::Small), 10);
        assert_eq!(d.rows(JoinTable::Medium), 20);
        for bad in [0, 9, MAX_ROWS + 1] {
            let err = JoinData::new(bad, 1).err().expect("refused");
            assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
        }
    }
}
