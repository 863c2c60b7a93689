//! Deterministic generators of the synthetic CSV data sets katydid is tested
//! and benchmarked on.
//!
//! Eight data sets ([`Dataset`]): `taxi` (NYC taxi trips, 51 columns, the
//! layout of the real 2013 sample), `taxi-f32` (the same trips with float32
//! coordinates, as the real sample has them), `iot` (TSBS-style truck readings),
//! `numbers` (four identical counters), `kv` (unique random ids with random
//! floats), `hits` (web analytics page views with the columns of
//! ClickBench's queries), `shapes` (a column for each query shape of the
//! `shapes` benchmark) and `groupby` (the H2O db-benchmark groupby task's
//! table, a port of its `groupby-datagen.R`). See [`describe`] and the
//! module docs of each generator for the exact shapes.
//!
//! Two multi-table sets write a directory of CSV files instead: [`tpch`]
//! (the 8 TPC-H tables at a scale factor, dbgen's rows through the
//! `tpchgen` crate) and [`join`] (the H2O db-benchmark join task's `x`,
//! `small`, `medium` and `big`); [`tlc`] writes TLC-like Parquet months.
//!
//! # Output
//! A [`Dataset`] is CSV (and so are [`join`]'s tables; [`tpch`] quotes its
//! free-text fields) with a header row, `\n` line ends and empty fields for NULL. No field
//! contains a comma, quote or line break, so nothing else is quoted; only
//! `hits` writes an empty string, as `""` (PostgreSQL's `COPY … CSV` rule: a
//! quoted empty field is an empty string, an unquoted one NULL). Every
//! column keeps one type: integer (no leading zeros), float, timestamp
//! (`YYYY-MM-DD HH:MM:SS`), date (`YYYY-MM-DD`, `hits` only) or string.
//!
//! # Determinism and speed
//! The bytes are a pure function of `(dataset, rows, seed)`. Rows are made in
//! chunks of [`CHUNK_ROWS`]; chunk `c` draws from its own ChaCha8 generator
//! seeded with `seed` on stream `c`, and anything that spans chunks (time
//! slots, cab-type runs, weather, truck paths, a user's attributes) is a
//! stateless function of the row number or of a key. Chunks are formatted in parallel on the current rayon pool and
//! written in order, so the output does not depend on the thread count.
//!
//! ```
//! use katydid_datasets::{Dataset, generate_bytes};
//! let csv = generate_bytes(Dataset::Numbers, 2, 7);
//! assert_eq!(csv, b"a,b,c,d\n1,1,1,1\n2,2,2,2\n");
//! ```

use std::fmt;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::str::FromStr;

use flate2::{Compress, Compression, FlushCompress, Status};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

mod groupby;
mod hits;
mod iot;
pub mod join;
mod nta;
pub use nta::neighbourhoods_csv;
mod out;
mod shapes;
mod taxi;
pub mod tlc;
pub mod tpch;

use out::{ID_MASK, Out, hash, id63};

/// Rows per independently generated chunk.
pub const CHUNK_ROWS: u64 = 1 << 16;

/// A synthetic data set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dataset {
    /// NYC taxi trips in the 51-column layout of
    /// `nyc-taxi-trips-2013-sample.csv.gz`, pickups ascending over 2009–2015.
    Taxi,
    /// The `taxi` trips with float32 coordinates written as doubles
    /// (`-73.937767028808594` style, the f32 printed in its shortest f64
    /// form), in the columns and the hex points alike, as the real sample
    /// stores them.
    TaxiF32,
    /// TSBS-style truck readings: one row per truck per 60 s from 2016-01-01.
    Iot,
    /// Columns `a,b,c,d`, all equal to the 1-based row number (the seed is
    /// ignored).
    Numbers,
    /// Columns `id,value`: a unique pseudo-random non-negative `i64` id and a
    /// random float.
    Kv,
    /// Web analytics page views over July 2013 with the 25 columns that
    /// ClickBench's 43 queries name (table `hits`).
    Hits,
    /// Columns for the `shapes` benchmark: unique and 4-valued sort keys,
    /// string keys of 10k, 100k and 1M values, sparse keys, numbers.
    Shapes,
    /// The H2O db-benchmark groupby task's table `x` (its G1 data at K =
    /// 100, no NAs, unsorted): `id1`–`id6` keys of 100 and N/100 values,
    /// `v1`, `v2` small integers, `v3` a 6-decimal float.
    Groupby,
}

impl Dataset {
    /// Every data set, in documentation order.
    pub const ALL: [Dataset; 8] = [
        Dataset::Taxi,
        Dataset::TaxiF32,
        Dataset::Iot,
        Dataset::Numbers,
        Dataset::Kv,
        Dataset::Hits,
        Dataset::Shapes,
        Dataset::Groupby,
    ];

    /// The name used on the command line: `taxi`, `taxi-f32`, `iot`,
    /// `numbers`, `kv`, `hits`, `shapes` or `groupby`.
    pub fn name(self) -> &'static str {
        match self {
            Dataset::Taxi => "taxi",
            Dataset::TaxiF32 => "taxi-f32",
            Dataset::Iot => "iot",
            Dataset::Numbers => "numbers",
            Dataset::Kv => "kv",
            Dataset::Hits => "hits",
            Dataset::Shapes => "shapes",
            Dataset::Groupby => "groupby",
        }
    }

    /// The CSV header line, without its line break.
    pub fn header(self) -> &'static str {
        header(self).trim_end()
    }
}

impl fmt::Display for Dataset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The error of parsing an unknown data set name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownDataset(pub String);

impl fmt::Display for UnknownDataset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown data set '{}' (expected one of taxi, taxi-f32, iot, numbers, kv, hits, shapes, groupby)",
            self.0
        )
    }
}

impl std::error::Error for UnknownDataset {}

impl FromStr for Dataset {
    type Err = UnknownDataset;

    /// Parses a name as printed by [`Dataset::name`], ignoring ASCII case.
    fn from_str(s: &str) -> Result<Dataset, UnknownDataset> {
        Dataset::ALL
            .into_iter()
            .find(|d| d.name().eq_ignore_ascii_case(s))
            .ok_or_else(|| UnknownDataset(s.to_string()))
    }
}

/// A one-line description of a data set's columns, for help texts.
pub fn describe(dataset: Dataset) -> &'static str {
    match dataset {
        Dataset::Taxi => {
            "NYC taxi trips, 51 columns (trip_id, pickup_datetime 2009-2015 ascending, \
             cab_type, passenger_count, trip_distance, total_amount, weather, pickup/dropoff \
             neighbourhoods...)"
        }
        Dataset::TaxiF32 => {
            "the taxi trips with float32 coordinates written as doubles (as the real 2013 \
             sample has them), in pickup/dropoff_longitude/latitude and the hex points"
        }
        Dataset::Iot => {
            "truck readings every 60 s from 2016-01-01 (time, name, fleet, driver, model, \
             latitude, longitude, velocity, fuel_consumption...), up to 1000 trucks"
        }
        Dataset::Numbers => "a,b,c,d: all four equal to the row number 1..N",
        Dataset::Kv => "id,value: unique pseudo-random non-negative 63-bit ids, random floats",
        Dataset::Hits => {
            "web analytics page views over July 2013 with the 25 columns of ClickBench's \
             queries (WatchID, EventTime, CounterID, UserID, URL, Referer, SearchPhrase...)"
        }
        Dataset::Shapes => {
            "id, u (unique), k4 and s4 (4 values), g1000, s10k/s100k/s1m (strings of 10k, \
             100k, 1M values), a/b/c (sparse keys), x, y"
        }
        Dataset::Groupby => {
            "db-benchmark's groupby table x: id1, id2 (100 strings), id3 (N/100 strings), \
             id4, id5 (1..100), id6 (1..N/100), v1 (1..5), v2 (1..15), v3 (0..100, 6 decimals)"
        }
    }
}

fn header(dataset: Dataset) -> &'static str {
    match dataset {
        Dataset::Taxi | Dataset::TaxiF32 => taxi::HEADER,
        Dataset::Iot => iot::HEADER,
        Dataset::Numbers => "a,b,c,d\n",
        Dataset::Kv => "id,value\n",
        Dataset::Hits => hits::HEADER,
        Dataset::Shapes => shapes::HEADER,
        Dataset::Groupby => groupby::HEADER,
    }
}

/// Per-call state shared by all chunks.
enum Generator {
    Taxi(Box<taxi::Taxi>),
    Iot(iot::Iot),
    Numbers,
    Kv { key: u64 },
    Hits(Box<hits::Hits>),
    Shapes(shapes::Shapes),
    Groupby(groupby::Groupby),
}

impl Generator {
    fn new(dataset: Dataset, rows: u64, seed: u64) -> Generator {
        match dataset {
            Dataset::Taxi => Generator::Taxi(Box::new(taxi::Taxi::new(rows, seed, false))),
            Dataset::TaxiF32 => Generator::Taxi(Box::new(taxi::Taxi::new(rows, seed, true))),
            Dataset::Iot => Generator::Iot(iot::Iot::new(rows, seed)),
            Dataset::Numbers => Generator::Numbers,
            Dataset::Kv => Generator::Kv {
                key: hash(&[seed, 0x4B56]) & ID_MASK,
            },
            Dataset::Hits => Generator::Hits(Box::new(hits::Hits::new(rows, seed))),
            Dataset::Shapes => Generator::Shapes(shapes::Shapes::new(seed)),
            Dataset::Groupby => Generator::Groupby(groupby::Groupby::new(rows)),
        }
    }

    fn row_bytes(&self) -> usize {
        match self {
            Generator::Taxi(_) => taxi::ROW_BYTES,
            Generator::Iot(_) => iot::ROW_BYTES,
            Generator::Numbers => 4 * 8,
            Generator::Kv { .. } => 40,
            Generator::Hits(_) => hits::ROW_BYTES,
            Generator::Shapes(_) => shapes::ROW_BYTES,
            Generator::Groupby(_) => groupby::ROW_BYTES,
        }
    }

    /// The CSV text of chunk `chunk` (with the header when it is chunk 0).
    fn chunk(&self, dataset: Dataset, rows: u64, seed: u64, chunk: u64) -> Vec<u8> {
        let first = chunk * CHUNK_ROWS;
        let n = rows.saturating_sub(first).min(CHUNK_ROWS);
        let mut out = Out::with_capacity(n as usize * self.row_bytes() + 1024);
        if chunk == 0 {
            out.s(header(dataset));
        }
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        rng.set_stream(chunk);
        match self {
            Generator::Taxi(t) => t.rows(first, n, &mut rng, &mut out),
            Generator::Iot(g) => g.rows(first, n, &mut rng, &mut out),
            Generator::Hits(g) => g.rows(first, n, &mut rng, &mut out),
            Generator::Shapes(g) => g.rows(first, n, &mut rng, &mut out),
            Generator::Groupby(g) => g.rows(n, &mut rng, &mut out),
            Generator::Numbers => {
                for i in first + 1..=first + n {
                    let mut b = itoa::Buffer::new();
                    let s = b.format(i);
                    for sep in [b',', b',', b',', b'\n'] {
                        out.s(s);
                        out.b(sep);
                    }
                }
            }
            Generator::Kv { key } => {
                for i in first + 1..=first + n {
                    out.int(id63(i, *key));
                    out.comma();
                    // [1, 1000): never printed in exponent notation.
                    out.float(1.0 + 999.0 * out::uniform(&mut rng));
                    out.nl();
                }
            }
        }
        out.buf
    }
}

/// Number of chunks for `rows` rows (at least one, which holds the header).
fn chunk_count(rows: u64) -> u64 {
    rows.div_ceil(CHUNK_ROWS).max(1)
}

/// Runs `emit` on every chunk's rendering `render(chunk)`, in chunk order
/// (see [`for_each_piece`]).
fn for_each_chunk<T: Send>(
    rows: u64,
    render: impl Fn(u64) -> T + Sync,
    emit: impl FnMut(T) -> io::Result<()>,
) -> io::Result<()> {
    for_each_piece(chunk_count(rows), render, emit)
}

/// Runs `emit` on `render(i)` for every piece `i` in `0..pieces`, in order.
///
/// Pieces are rendered in parallel batches on the current rayon pool; while
/// one batch is rendered, the calling thread emits the previous one
/// (`rayon::in_place_scope` keeps `emit` on the calling thread, so the writer
/// need not be `Send`, and a calling worker thread helps instead of
/// blocking, so a one-thread pool cannot deadlock).
pub(crate) fn for_each_piece<T: Send>(
    pieces: u64,
    render: impl Fn(u64) -> T + Sync,
    mut emit: impl FnMut(T) -> io::Result<()>,
) -> io::Result<()> {
    let batch = (2 * rayon::current_num_threads() as u64).max(2);
    let mut ready: Vec<T> = Vec::new();
    let mut next = 0;
    while next < pieces || !ready.is_empty() {
        let end = (next + batch).min(pieces);
        let mut rendered: Vec<T> = Vec::new();
        let emitted = rayon::in_place_scope(|s| {
            if next < end {
                let (render, rendered) = (&render, &mut rendered);
                s.spawn(move |_| *rendered = (next..end).into_par_iter().map(render).collect());
            }
            ready.drain(..).try_for_each(&mut emit)
        });
        emitted?;
        ready = rendered;
        next = end;
    }
    Ok(())
}

/// Writes `rows` rows of `dataset` as plain CSV (header first) to `out`.
///
/// The bytes depend only on `(dataset, rows, seed)`. Work runs on the current
/// rayon pool; at most `4 × threads` chunks of [`CHUNK_ROWS`] rows are held
/// in memory at a time (≈26 MB each for `taxi`, whose rows average about
/// 400 bytes). `out` is not flushed.
///
/// # Errors
/// Any error of `out`; rows already written stay written.
pub fn generate(dataset: Dataset, rows: u64, seed: u64, out: &mut dyn Write) -> io::Result<()> {
    let g = Generator::new(dataset, rows, seed);
    for_each_chunk(
        rows,
        |c| g.chunk(dataset, rows, seed, c),
        |bytes| out.write_all(&bytes),
    )
}

/// Like [`generate`] but gzip-compressed (RFC 1952, one member) at the
/// fastest compression level.
///
/// Chunks are deflated in parallel, each ending on a byte boundary with a
/// sync flush (as `pigz` does), and their CRC-32s combined, so the result is
/// an ordinary single-member gzip stream any decoder reads; it is also
/// deterministic.
///
/// # Errors
/// Any error of `out`.
pub fn generate_gzip(
    dataset: Dataset,
    rows: u64,
    seed: u64,
    out: &mut dyn Write,
) -> io::Result<()> {
    let g = Generator::new(dataset, rows, seed);
    let last = chunk_count(rows) - 1;
    // Header: magic, CM = deflate, no flags, no mtime, XFL 4 (fastest), OS unknown.
    out.write_all(&[0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 4, 0xff])?;
    let mut crc = crc32fast::Hasher::new();
    let mut len: u64 = 0;
    for_each_chunk(
        rows,
        |c| -> io::Result<(Vec<u8>, crc32fast::Hasher, u64)> {
            let text = g.chunk(dataset, rows, seed, c);
            let mut h = crc32fast::Hasher::new();
            h.update(&text);
            Ok((deflate(&text, c == last)?, h, text.len() as u64))
        },
        |part| {
            let (bytes, h, n) = part?;
            crc.combine(&h);
            len += n;
            out.write_all(&bytes)
        },
    )?;
    out.write_all(&crc.finalize().to_le_bytes())?;
    out.write_all(&(len as u32).to_le_bytes())
}

/// Raw-deflates `data` at the fastest level, ending with a sync flush (or,
/// for the last piece, the final block).
fn deflate(data: &[u8], last: bool) -> io::Result<Vec<u8>> {
    let mut c = Compress::new(Compression::fast(), false);
    let mut out = Vec::with_capacity(data.len() / 3 + 4096);
    let flush = if last {
        FlushCompress::Finish
    } else {
        FlushCompress::Sync
    };
    loop {
        if out.len() == out.capacity() {
            out.reserve(out.capacity().max(1 << 16));
        }
        let done = c.total_in() as usize;
        let status = c
            .compress_vec(&data[done..], &mut out, flush)
            .map_err(io::Error::other)?;
        let all_in = c.total_in() as usize == data.len();
        match status {
            Status::StreamEnd => return Ok(out),
            _ if !last && all_in && out.len() < out.capacity() => return Ok(out),
            _ => {}
        }
    }
}

/// Generates into the file `path`: gzip ([`generate_gzip`]) when the name
/// ends in `.gz` (any case), plain CSV otherwise.
///
/// The data goes to a temporary file next to `path`
/// (`.<name>.tmp-<pid>`) that is renamed over `path` only when complete, so
/// a partial file never appears under the final name.
///
/// # Errors
/// `InvalidInput` when `path` has no file name; any error creating, writing
/// or renaming the file (the temporary file is then removed).
pub fn generate_file(dataset: Dataset, rows: u64, seed: u64, path: &Path) -> io::Result<()> {
    let gz = path
        .file_name()
        .is_some_and(|n| n.to_string_lossy().to_ascii_lowercase().ends_with(".gz"));
    write_atomically(path, |w| {
        if gz {
            generate_gzip(dataset, rows, seed, w)
        } else {
            generate(dataset, rows, seed, w)
        }
    })
}

/// Runs `write` on a buffered temporary file next to `path`
/// (`.<name>.tmp-<pid>`) and renames it over `path` when `write` and the
/// flush succeed, so a partial file never appears under the final name.
///
/// # Errors
/// `InvalidInput` when `path` has no file name; any error of `write`, or
/// creating, writing or renaming the file (the temporary file is then
/// removed).
pub(crate) fn write_atomically<T>(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> io::Result<T>,
) -> io::Result<T> {
    let name = path.file_name().ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("'{}' does not name a file", path.display()),
        )
    })?;
    let mut tmp_name = std::ffi::OsString::from(".");
    tmp_name.push(name);
    tmp_name.push(format!(".tmp-{}", std::process::id()));
    let tmp: PathBuf = path.with_file_name(tmp_name);
    let result = (|| {
        let mut w = BufWriter::with_capacity(1 << 20, File::create(&tmp)?);
        let value = write(&mut w)?;
        w.flush()?;
        drop(w);
        std::fs::rename(&tmp, path)?;
        Ok(value)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// Generates plain CSV into memory (for `katydid --demo` and tests).
pub fn generate_bytes(dataset: Dataset, rows: u64, seed: u64) -> Vec<u8> {
    let mut buf = Vec::new();
    generate(dataset, rows, seed, &mut buf).expect("writing to a Vec cannot fail");
    buf
}
