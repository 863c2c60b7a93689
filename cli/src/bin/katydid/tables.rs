//! `katydid generate` for the multi-table data sets, `tpch` and `join`,
//! which write a directory of CSV files, and the fixed `zones` table; every
//! other data set goes on to [`datasets::generate`].

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use katydid_datasets::{join, tpch};

use crate::datasets;
use crate::output::{bytes, duration_short, thousands};
use crate::session::CliError;

/// `katydid generate DATASET`: `tpch` at scale factor `sf` or `join` at
/// `rows` rows of `x` into the directory `out`, one line per file written
/// on stdout; any other data set through [`datasets::generate`].
///
/// # Errors
/// `--sf` missing for tpch or given for another data set, `--rows` missing
/// for a data set that needs it or given for tpch, a scale factor or row
/// count out of range, or a file that cannot be written.
pub fn generate(
    dataset: &str,
    rows: Option<u64>,
    sf: Option<f64>,
    seed: u64,
    out: &Path,
) -> Result<(), CliError> {
    let message = |m: String| CliError::Message(m);
    if dataset.eq_ignore_ascii_case("zones") {
        if rows.is_some() || sf.is_some() {
            return Err(message(
                "zones is a fixed table of the trips' 195 neighbourhoods: leave out --rows and --sf"
                    .into(),
            ));
        }
        return datasets::generate_zones(out);
    }
    let is_tpch = dataset.eq_ignore_ascii_case("tpch");
    if is_tpch && rows.is_some() {
        return Err(message(
            "tpch is sized by its scale factor: use --sf (1 is about 6M lineitem rows), not --rows"
                .into(),
        ));
    }
    if !is_tpch && sf.is_some() {
        return Err(message(format!(
            "--sf is for tpch only; size {dataset} with --rows"
        )));
    }
    let start = Instant::now();
    let written = if is_tpch {
        let sf = sf.ok_or_else(|| message("tpch needs --sf (the scale factor, e.g. 1)".into()))?;
        tpch::write_tables(out, sf)
            .map(|ts| ts.into_iter().map(|(t, p, n)| (t.name(), p, n)).collect())
    } else {
        let rows = rows.ok_or_else(|| message(format!("{dataset} needs --rows")))?;
        if !dataset.eq_ignore_ascii_case("join") {
            return datasets::generate(dataset, rows, seed, out);
        }
        join::write_tables(out, rows, seed)
            .map(|ts| ts.into_iter().map(|(t, p, n)| (t.name(), p, n)).collect())
    };
    let written: Vec<(&str, PathBuf, u64)> = written.map_err(|e| {
        message(match e.kind() {
            io::ErrorKind::InvalidInput => e.to_string(),
            _ => format!("cannot write {}: {e}", out.display()),
        })
    })?;
    let mut stdout = io::stdout().lock();
    for (name, path, n) in &written {
        let size = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
        writeln!(
            stdout,
            "wrote {} {name} rows ({}) to {}",
            thousands(*n),
            bytes(size),
            path.display()
        )?;
    }
    writeln!(stdout, "in {}", duration_short(start.elapsed()))?;
    Ok(())
}
