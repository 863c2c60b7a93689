//! Generates a data set into a file and reports the speed, for measuring the
//! generators without the `katydid` binary.
//!
//! Usage: `cargo run --release -p katydid-datasets --example generate --
//! DATASET ROWS FILE [SEED]` (FILE ending in `.gz` is gzipped; `-` writes
//! plain CSV to stdout).

use std::io::Write;
use std::path::Path;
use std::time::Instant;

use katydid_datasets::{Dataset, generate, generate_file};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if !(3..=4).contains(&args.len()) {
        eprintln!("usage: generate DATASET ROWS FILE [SEED]");
        std::process::exit(2);
    }
    let parsed = (|| -> Result<(Dataset, u64, u64), String> {
        let dataset: Dataset = args[0].parse().map_err(|e| format!("{e}"))?;
        let rows = args[1]
            .parse()
            .map_err(|_| format!("invalid row count '{}'", args[1]))?;
        let seed = match args.get(3) {
            Some(s) => s.parse().map_err(|_| format!("invalid seed '{s}'"))?,
            None => 1,
        };
        Ok((dataset, rows, seed))
    })();
    let (dataset, rows, seed) = parsed.unwrap_or_else(|e| {
        eprintln!("error: {e}");
        std::process::exit(2);
    });
    let start = Instant::now();
    let result = if args[2] == "-" {
        let stdout = std::io::stdout();
        let mut lock = std::io::BufWriter::with_capacity(1 << 20, stdout.lock());
        generate(dataset, rows, seed, &mut lock).and_then(|()| lock.flush())
    } else {
        generate_file(dataset, rows, seed, Path::new(&args[2]))
    };
    if let Err(e) = result {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
    let secs = start.elapsed().as_secs_f64();
    eprintln!(
        "{dataset}: {rows} rows in {secs:.2} s ({:.0} rows/s)",
        rows as f64 / secs
    );
}
