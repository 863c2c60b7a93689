//! Everything that calls the `katydid_datasets` generators: `generate` and
//! the `--demo` table.

use std::io::{self, Write};
use std::path::Path;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};
use katydid::LoadStats;
use katydid_datasets::Dataset;

use crate::output::{bytes, duration_short, thousands};
use crate::session::{CliError, Session};

/// The demo table's name.
pub const DEMO_TABLE: &str = "trips";
/// The demo's lookup table of neighbourhoods.
pub const DEMO_ZONES: &str = "zones";
/// Seed of the demo table.
pub const DEMO_SEED: u64 = 42;

/// A spinner on stderr (hidden when stderr is not a terminal).
fn spinner(message: String) -> ProgressBar {
    let bar = ProgressBar::new_spinner();
    bar.set_style(
        ProgressStyle::with_template("{spinner} {msg} {elapsed}")
            .unwrap_or_else(|_| ProgressStyle::default_spinner()),
    );
    bar.set_message(message);
    bar.enable_steady_tick(Duration::from_millis(100));
    bar
}

fn parse_dataset(name: &str) -> Result<Dataset, CliError> {
    name.parse::<Dataset>()
        .map_err(|e| CliError::Message(e.to_string()))
}

/// `katydid generate`: writes `rows` rows of `dataset` to `out` and reports
/// rows, size and time on stdout.
///
/// # Errors
/// An unknown data set name, or a file that cannot be written.
pub fn generate(dataset: &str, rows: u64, seed: u64, out: &Path) -> Result<(), CliError> {
    if dataset.eq_ignore_ascii_case("tlc") {
        return generate_tlc(rows, seed, out);
    }
    let dataset = parse_dataset(dataset)?;
    let start = Instant::now();
    let bar = spinner(format!("writing {} {dataset} rows", thousands(rows)));
    let written = katydid_datasets::generate_file(dataset, rows, seed, out);
    bar.finish_and_clear();
    written.map_err(|e| CliError::Message(format!("cannot write {}: {e}", out.display())))?;
    let elapsed = start.elapsed();
    let size = std::fs::metadata(out).map(|m| m.len()).unwrap_or(0);
    writeln!(
        io::stdout().lock(),
        "wrote {} {dataset} rows ({}) to {} in {}",
        thousands(rows),
        bytes(size),
        out.display(),
        duration_short(elapsed)
    )?;
    Ok(())
}

/// `katydid generate zones`: the demo's lookup table of the taxi trips'
/// 195 neighbourhoods (ntacode, ntaname, borough, puma), as CSV in `out`,
/// to join with a `taxi` table on `pickup_ntacode` or `dropoff_ntacode`.
///
/// # Errors
/// A file that cannot be written.
pub fn generate_zones(out: &Path) -> Result<(), CliError> {
    let csv = katydid_datasets::neighbourhoods_csv();
    std::fs::write(out, &csv)
        .map_err(|e| CliError::Message(format!("cannot write {}: {e}", out.display())))?;
    let rows = csv
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        .saturating_sub(1);
    writeln!(
        io::stdout().lock(),
        "wrote {} zones rows ({}) to {}",
        thousands(rows as u64),
        bytes(csv.len() as u64),
        out.display()
    )?;
    Ok(())
}

/// `katydid generate tlc`: TLC-like monthly Parquet files of `rows` trips
/// each, one month of each schema the real files have had, and
/// `taxi_zone_lookup.csv`, into the directory `out`.
///
/// # Errors
/// A file that cannot be written.
fn generate_tlc(rows: u64, seed: u64, out: &Path) -> Result<(), CliError> {
    let start = Instant::now();
    let months = katydid_datasets::tlc::DEFAULT_MONTHS;
    let bar = spinner(format!(
        "writing {} months of {} TLC-like trips",
        months.len(),
        thousands(rows)
    ));
    let written = katydid_datasets::tlc::write_months(out, &months, rows, seed);
    bar.finish_and_clear();
    let written =
        written.map_err(|e| CliError::Message(format!("cannot write {}: {e}", out.display())))?;
    let mut stdout = io::stdout().lock();
    for path in &written {
        let size = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
        writeln!(stdout, "wrote {} ({})", path.display(), bytes(size))?;
    }
    writeln!(stdout, "in {}", duration_short(start.elapsed()))?;
    Ok(())
}

/// Builds the `trips` demo table with `rows` synthetic taxi rides in memory,
/// and the `zones` table of their neighbourhoods, reporting generation and
/// loads as status lines; the stats are the trips'.
///
/// # Errors
/// As [`Session::execute`] for loads.
pub fn load_demo(
    session: &mut Session,
    rows: u64,
    out: &mut dyn Write,
) -> Result<LoadStats, CliError> {
    let start = Instant::now();
    let bar = spinner(format!("generating {} taxi rides", thousands(rows)));
    let csv = katydid_datasets::generate_bytes(Dataset::Taxi, rows, DEMO_SEED);
    bar.finish_and_clear();
    session.status(
        out,
        &format!(
            "generated {} rows of taxi data ({} of CSV) in {}",
            thousands(rows),
            bytes(csv.len() as u64),
            duration_short(start.elapsed())
        ),
    )?;
    if let Some(p) = &session.progress {
        p.begin("loading the demo table");
    }
    let loaded = {
        let _busy = session.interrupt.busy();
        let _loading = crate::alloc::Loading::start();
        session
            .db
            .load_csv_bytes(csv, Path::new("<demo>"), DEMO_TABLE, &session.load_options)
    };
    if let Some(p) = &session.progress {
        p.finish();
    }
    let stats = loaded.map_err(|error| CliError::Db { error, query: None })?;
    // The neighbourhoods the trips name, a lookup table to join with.
    session
        .db
        .load_csv_bytes(
            katydid_datasets::neighbourhoods_csv(),
            Path::new("<demo zones>"),
            DEMO_ZONES,
            &session.load_options,
        )
        .map_err(|error| CliError::Db { error, query: None })?;
    session.status(
        out,
        &format!(
            "table {DEMO_ZONES}: the trips' 195 neighbourhoods (ntacode, ntaname, borough, puma), \
             to join on pickup_ntacode or dropoff_ntacode"
        ),
    )?;
    Ok(stats)
}

/// One line describing the demo data set, for the banner.
pub fn demo_description() -> &'static str {
    katydid_datasets::describe(Dataset::Taxi)
}
