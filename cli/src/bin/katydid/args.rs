//! Command-line flags (clap derive).

use std::path::PathBuf;

use clap::{Parser, Subcommand, ValueEnum};

use crate::command::MemorySize;

/// The examples shown by `--help`, `.help` and the `--demo` banner.
pub const EXAMPLE_QUERIES: &[&str] = &[
    "SELECT cab_type, count(*) FROM trips GROUP BY cab_type;",
    "SELECT passenger_count, count(*), sum(total_amount) FROM trips GROUP BY passenger_count;",
    "SELECT passenger_count, year(pickup_datetime), count(*) FROM trips GROUP BY 1, 2;",
    "SELECT passenger_count, trip_distance, total_amount FROM trips ORDER BY total_amount DESC LIMIT 10;",
    "SELECT z.borough, count(*), avg(t.total_amount) FROM trips t JOIN zones z ON t.pickup_ntacode = z.ntacode GROUP BY 1;",
    "EXPLAIN SELECT pickup_ntaname, count(*) FROM trips GROUP BY pickup_ntaname;",
];

const AFTER_HELP: &str = "\
Modes:
  With --query, runs each query, prints the results to stdout and exits.
  Without --query and with stdin not a terminal, reads ';'-separated statements
  (and '.' meta-commands, one per line) from stdin and runs them in order.
  Otherwise starts the REPL (type .help there). A failing load stops the run
  with exit status 1; so does a failing statement (naming its line), unless
  the script says .bail off, in which case the run goes on and exits 1 at
  the end.
  Formats table, line and markdown show the first --maxrows rows (default
  40) and a footer line with the row count; csv and json stream every row.
  Load reports go to stderr, results to stdout. Ctrl-C cancels the running
  statement or load; outside the REPL the run then exits with status 130.

Examples:
  katydid --demo
  katydid trips.csv.gz
  katydid --load trips.csv.gz --query 'SELECT cab_type, count(*) FROM trips GROUP BY cab_type'
  echo 'SELECT count(*) FROM t;' | katydid --load data.csv --table t --format csv
  katydid --load data.txt -d ';' --null-string NA --memory-limit 4GB
  katydid generate taxi --rows 1000000 --out trips.csv.gz
  katydid generate tpch --sf 1 --out tpch-sf1";

/// An in-memory analytics engine: load CSV files, then explore them with
/// group-by SQL.
#[derive(Debug, Parser)]
#[command(name = "katydid", version, after_help = AFTER_HELP, args_conflicts_with_subcommands = true)]
pub struct Cli {
    /// A subcommand; without one, load files and run queries or the REPL.
    #[command(subcommand)]
    pub command: Option<Sub>,

    /// Files to load, as with --load (`katydid trips.csv` opens the REPL
    /// on table `trips`).
    #[arg(value_name = "FILE")]
    pub files: Vec<PathBuf>,

    /// Load a CSV or gzipped CSV file (repeatable); `-` reads it from stdin
    /// (table `stdin`). The table is named after the file (directory and
    /// .gz/.csv/.tsv extensions dropped, other characters that cannot be in
    /// an identifier replaced by '_').
    #[arg(long, value_name = "FILE")]
    pub load: Vec<PathBuf>,

    /// Name of the table the first --load file goes into.
    #[arg(long, value_name = "NAME", requires = "load")]
    pub table: Option<String>,

    /// Replace a table that already has the name of a loaded file (without
    /// it, loading over an existing table is an error).
    #[arg(long)]
    pub replace: bool,

    /// The files have no header row (name the columns with --columns).
    #[arg(long)]
    pub no_header: bool,

    /// Column names, comma-separated, replacing the header's (or naming the
    /// columns of files without one).
    #[arg(long, value_name = "A,B,C", value_delimiter = ',')]
    pub columns: Option<Vec<String>>,

    /// Field delimiter of the loaded files: one character, or '\t' / 'tab'
    /// (default: detected from the first lines).
    #[arg(long, short = 'd', value_name = "CHAR", value_parser = parse_delimiter)]
    pub delimiter: Option<u8>,

    /// Quote character of the loaded files (default '"').
    #[arg(long, value_name = "CHAR", value_parser = parse_quote)]
    pub quote: Option<u8>,

    /// A field with exactly this text loads as NULL (besides an empty field),
    /// e.g. NA or \N.
    #[arg(long, value_name = "TEXT")]
    pub null_string: Option<String>,

    /// Longest line (record) a loaded file may have, e.g. 256MiB (default
    /// 64 MiB); a longer one fails the load naming file, line and size.
    #[arg(long, value_name = "SIZE", value_parser = parse_byte_size)]
    pub max_line_size: Option<usize>,

    /// Skip malformed rows (the wrong number of fields, text that is not
    /// UTF-8) instead of failing the load; the load says how many and
    /// where.
    #[arg(long)]
    pub ignore_errors: bool,

    /// Rows per partition.
    #[arg(long, value_name = "N", value_parser = parse_positive)]
    pub partition_rows: Option<usize>,

    /// Worker threads for loading and queries (default: one per core).
    #[arg(long, value_name = "N", value_parser = parse_positive)]
    pub threads: Option<usize>,

    /// Memory that tables and queries may hold: 4GB, 512MiB, 80% (of
    /// physical memory; the default is 80%). Work past it stops with an
    /// error; the session goes on.
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub memory_limit: Option<MemorySize>,

    /// Run this SQL statement, print its result and exit (repeatable).
    #[arg(long, short = 'q', value_name = "SQL")]
    pub query: Vec<String>,

    /// Output format of query results.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,

    /// Rows shown by the table, line and markdown formats (0: all).
    #[arg(long, value_name = "N", default_value_t = 40, value_parser = parse_usize)]
    pub maxrows: usize,

    /// Add each statement's time and scan rate to the footer (csv and json:
    /// a line on stderr).
    #[arg(long)]
    pub timer: bool,

    /// Keep load reports and notices off the terminal (errors still print),
    /// for scripts and pipelines.
    #[arg(long)]
    pub quiet: bool,

    /// Build the synthetic taxi table `trips` with ROWS rows (default
    /// 1,000,000) in memory and start the REPL.
    #[arg(long, value_name = "ROWS", num_args = 0..=1, default_missing_value = "1000000", value_parser = parse_count)]
    pub demo: Option<u64>,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Sub {
    /// Write a synthetic data set as CSV (gzipped when FILE ends in .gz);
    /// `tlc` writes TLC-like monthly Parquet files of N trips each and
    /// taxi_zone_lookup.csv into the directory FILE; `tpch` the 8 TPC-H
    /// tables at scale factor --sf, and `join` db-benchmark's join tables
    /// (x of N rows, small, medium, big), as CSV files in the directory
    /// FILE; `zones` the 195 neighbourhoods the taxi trips name (the
    /// demo's lookup table).
    Generate {
        /// The data set: taxi, iot, numbers, kv, hits, shapes, groupby, tlc,
        /// tpch, join or zones.
        dataset: String,
        /// Number of rows (every data set but tpch and zones).
        #[arg(long, value_name = "N", value_parser = parse_count)]
        rows: Option<u64>,
        /// The TPC-H scale factor (tpch only): 1 is about 6M lineitem rows.
        #[arg(long, value_name = "SF")]
        sf: Option<f64>,
        /// The file (or, for tlc, tpch and join, the directory) to write.
        #[arg(long, value_name = "FILE")]
        out: PathBuf,
        /// Seed of the random generator; the same seed gives the same file.
        #[arg(long, value_name = "S", default_value_t = 42)]
        seed: u64,
    },
}

/// How query results are printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Aligned columns fitted to the terminal, a header and a footer line.
    Table,
    /// One `column = value` line per column, a blank line between rows.
    Line,
    /// RFC 4180 CSV with a header row; NULL is an empty field. Streams.
    Csv,
    /// One JSON array of objects (column name to value) per statement.
    /// Streams.
    Json,
    /// A GitHub-flavoured markdown table.
    Markdown,
}

impl Format {
    /// True for the formats a person reads (table, line, markdown): they
    /// show the first `.maxrows` rows and a footer. The others write every
    /// row as it comes.
    pub fn is_display(self) -> bool {
        matches!(self, Format::Table | Format::Line | Format::Markdown)
    }
}

impl std::str::FromStr for Format {
    type Err = String;

    fn from_str(s: &str) -> Result<Format, String> {
        <Format as ValueEnum>::from_str(s, true).map_err(|_| {
            format!("unknown format \"{s}\" (expected table, line, csv, json or markdown)")
        })
    }
}

/// Parses a size: a number with an optional unit (B, KB, MB, GB, TB in
/// powers of 1,000; KiB, MiB, GiB, TiB in powers of 1,024; case ignored),
/// or a percentage of physical memory (`80%`).
///
/// # Errors
/// A message for anything else, zero, or a size past `u64`.
pub fn parse_size(s: &str) -> Result<MemorySize, String> {
    let t = s.trim();
    if let Some(p) = t.strip_suffix('%') {
        return match p.trim().parse::<u64>() {
            Ok(n @ 1..=100) => Ok(MemorySize::Percent(n)),
            _ => Err(format!("\"{s}\" is not a percentage from 1% to 100%")),
        };
    }
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '_' || c == ','))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let number: String = number.chars().filter(|c| *c != '_' && *c != ',').collect();
    let scale: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "kb" => 1_000,
        "mb" => 1_000_000,
        "gb" => 1_000_000_000,
        "tb" => 1_000_000_000_000,
        "kib" => 1 << 10,
        "mib" => 1 << 20,
        "gib" => 1 << 30,
        "tib" => 1 << 40,
        _ => {
            return Err(format!(
                "\"{s}\" is not a size (examples: 4GB, 512MiB, 80%)"
            ));
        }
    };
    let value: f64 = number
        .parse()
        .map_err(|_| format!("\"{s}\" is not a size (examples: 4GB, 512MiB, 80%)"))?;
    let bytes = value * scale as f64;
    if !(1.0..1.8e19).contains(&bytes) {
        return Err(format!("\"{s}\" is out of range"));
    }
    Ok(MemorySize::Bytes(bytes as u64))
}

/// A size in bytes (no percentage), for `--max-line-size`.
fn parse_byte_size(s: &str) -> Result<usize, String> {
    match parse_size(s)? {
        MemorySize::Bytes(b) => Ok(usize::try_from(b).unwrap_or(usize::MAX)),
        MemorySize::Percent(_) => Err("expected a size such as 64MiB, not a percentage".into()),
    }
}

/// A single-byte ASCII character for a CSV dialect: itself, or the escapes
/// `\t` and `tab`.
fn parse_dialect_char(s: &str, what: &str) -> Result<u8, String> {
    let c = match s {
        "\\t" | "\t" => b'\t',
        _ if s.eq_ignore_ascii_case("tab") => b'\t',
        _ if s.len() == 1 && s.is_ascii() => s.as_bytes()[0],
        _ => {
            return Err(format!(
                "the {what} must be one ASCII character, not \"{s}\""
            ));
        }
    };
    if c == b'\n' || c == b'\r' {
        return Err(format!("the {what} cannot be a line break"));
    }
    Ok(c)
}

/// Parses a field delimiter (`,` `;` `|` `\t` `tab` …).
///
/// # Errors
/// A message unless it is one ASCII character other than a line break.
pub fn parse_delimiter(s: &str) -> Result<u8, String> {
    parse_dialect_char(s, "delimiter")
}

/// Parses a quote character.
///
/// # Errors
/// As [`parse_delimiter`].
pub fn parse_quote(s: &str) -> Result<u8, String> {
    parse_dialect_char(s, "quote")
}

fn parse_usize(s: &str) -> Result<usize, String> {
    usize::try_from(parse_count(s)?).map_err(|_| format!("\"{s}\" is too large"))
}

/// Parses a count such as `1000000`, `1_000_000` or `1,000,000`.
pub fn parse_count(s: &str) -> Result<u64, String> {
    let digits: String = s.chars().filter(|c| *c != '_' && *c != ',').collect();
    digits
        .parse::<u64>()
        .map_err(|_| format!("\"{s}\" is not a non-negative whole number"))
}

fn parse_positive(s: &str) -> Result<usize, String> {
    match parse_count(s)? {
        0 => Err("must be at least 1".to_string()),
        n => usize::try_from(n).map_err(|_| format!("\"{s}\" is too large")),
    }
}

/// The table name for a loaded file: the file name without directory and
/// without trailing `.gz` and `.csv`/`.tsv`/`.parquet` extensions, every character that
/// is not an ASCII letter, digit or `_` replaced by `_`, and a `_` prefixed
/// when the result would start with a digit (or be empty).
pub fn table_name_for(path: &std::path::Path) -> String {
    let file = path
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut stem = file.as_str();
    for ext in [".gz", ".csv", ".tsv", ".parquet"] {
        if stem.len() > ext.len() && stem[stem.len() - ext.len()..].eq_ignore_ascii_case(ext) {
            stem = &stem[..stem.len() - ext.len()];
        }
    }
    let mut name: String = stem
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if name.is_empty() || name.starts_with(|c: char| c.is_ascii_digit()) {
        name.insert(0, '_');
    }
    name
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;
    use std::path::Path;

    #[test]
    fn clap_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn table_names_from_paths() {
        assert_eq!(table_name_for(Path::new("data/trips.csv.gz")), "trips");
        assert_eq!(table_name_for(Path::new("/tmp/trips.csv")), "trips");
        assert_eq!(
            table_name_for(Path::new("my-data 2020.CSV")),
            "my_data_2020"
        );
        assert_eq!(table_name_for(Path::new("2020.csv")), "_2020");
        assert_eq!(table_name_for(Path::new("x.tar.gz")), "x_tar");
        assert_eq!(table_name_for(Path::new("café.csv")), "caf_");
    }

    #[test]
    fn counts_accept_separators() {
        assert_eq!(parse_count("1,000,000"), Ok(1_000_000));
        assert_eq!(parse_count("1_000"), Ok(1000));
        assert!(parse_count("-3").is_err());
        assert!(parse_count("ten").is_err());
        assert!(parse_positive("0").is_err());
    }

    #[test]
    fn flags_parse() {
        let cli = Cli::try_parse_from([
            "katydid",
            "--load",
            "a.csv",
            "--load",
            "b.csv.gz",
            "--no-header",
            "--columns",
            "x,y,z",
            "--query",
            "SELECT 1",
            "--format",
            "csv",
            "--demo",
        ])
        .unwrap();
        assert_eq!(cli.load.len(), 2);
        assert!(cli.no_header);
        assert_eq!(cli.columns, Some(vec!["x".into(), "y".into(), "z".into()]));
        assert_eq!(cli.format, Format::Csv);
        assert_eq!(cli.demo, Some(1_000_000));
        let cli = Cli::try_parse_from(["katydid", "--demo", "5000"]).unwrap();
        assert_eq!(cli.demo, Some(5000));
        let cli = Cli::try_parse_from([
            "katydid", "generate", "taxi", "--rows", "10", "--out", "t.csv",
        ])
        .unwrap();
        assert!(matches!(
            cli.command,
            Some(Sub::Generate {
                rows: Some(10),
                sf: None,
                seed: 42,
                ..
            })
        ));
        let cli = Cli::try_parse_from([
            "katydid", "generate", "tpch", "--sf", "0.01", "--out", "dir",
        ])
        .unwrap();
        assert!(matches!(
            cli.command,
            Some(Sub::Generate {
                rows: None,
                sf: Some(0.01),
                ..
            })
        ));
        assert!(Cli::try_parse_from(["katydid", "--threads", "0"]).is_err());
        let cli = Cli::try_parse_from([
            "katydid",
            "--load",
            "x.txt",
            "-d",
            "tab",
            "--quote",
            "'",
            "--null-string",
            "NA",
            "--max-line-size",
            "1KiB",
            "--memory-limit",
            "50%",
            "--replace",
            "--maxrows",
            "0",
        ])
        .unwrap();
        assert_eq!(cli.delimiter, Some(b'\t'));
        assert_eq!(cli.quote, Some(b'\''));
        assert_eq!(cli.null_string.as_deref(), Some("NA"));
        assert_eq!(cli.max_line_size, Some(1024));
        assert_eq!(cli.memory_limit, Some(MemorySize::Percent(50)));
        assert!(cli.replace);
        assert_eq!(cli.maxrows, 0);
        assert!(Cli::try_parse_from(["katydid", "-d", ";;"]).is_err());
    }

    #[test]
    fn sizes_parse_in_decimal_and_binary_units_and_percent() {
        assert_eq!(parse_size("4GB"), Ok(MemorySize::Bytes(4_000_000_000)));
        assert_eq!(parse_size("512MiB"), Ok(MemorySize::Bytes(512 << 20)));
        assert_eq!(parse_size("1.5 gib"), Ok(MemorySize::Bytes(3 << 29)));
        assert_eq!(parse_size("1000"), Ok(MemorySize::Bytes(1000)));
        assert_eq!(parse_size("80%"), Ok(MemorySize::Percent(80)));
        for bad in [
            "0",
            "0%",
            "101%",
            "4 parsecs",
            "GB",
            "-1GB",
            "99999999TB",
            "",
        ] {
            assert!(parse_size(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn dialect_characters() {
        assert_eq!(parse_delimiter(";"), Ok(b';'));
        assert_eq!(parse_delimiter("\\t"), Ok(b'\t'));
        assert_eq!(parse_delimiter("\t"), Ok(b'\t'));
        assert_eq!(parse_delimiter("TAB"), Ok(b'\t'));
        assert!(parse_delimiter("é").is_err());
        assert!(parse_delimiter("\n").is_err());
        assert!(parse_quote("").is_err());
    }
}
