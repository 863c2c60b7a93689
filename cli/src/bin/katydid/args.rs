//! Command-line flags (clap derive).

use std::path::PathBuf;

use clap::{Parser, Subcommand, ValueEnum};

/// The examples shown by `--help`, `.help` and the `--demo` banner.
pub const EXAMPLE_QUERIES: &[&str] = &[
    "SELECT cab_type, count(*) FROM trips GROUP BY cab_type;",
    "SELECT passenger_count, count(*), sum(total_amount) FROM trips GROUP BY passenger_count;",
    "SELECT passenger_count, year(pickup_datetime), count(*) FROM trips GROUP BY 1, 2;",
    "SELECT passenger_count, trip_distance, total_amount FROM trips ORDER BY total_amount DESC LIMIT 10;",
    "EXPLAIN SELECT pickup_ntaname, count(*) FROM trips GROUP BY pickup_ntaname;",
];

const AFTER_HELP: &str = "\
Modes:
  With --query, runs each query, prints the results to stdout and exits.
  Without --query and with stdin not a terminal, reads ';'-separated statements
  (and '.' meta-commands, one per line) from stdin and runs them in order.
  Otherwise starts the REPL (type .help there). The first failing load or
  statement stops the run with exit status 1.
  Table output shows every row, except in the REPL, where results longer than
  40 rows show the first 40 and a '… (N more rows)' line. Load reports and
  --timer lines go to stderr, results to stdout.

Examples:
  katydid --demo
  katydid --load trips.csv.gz --query 'SELECT cab_type, count(*) FROM trips GROUP BY cab_type'
  echo 'SELECT count(*) FROM t;' | katydid --load data.csv --table t --format csv
  katydid generate taxi --rows 1000000 --out trips.csv.gz";

/// An in-memory analytics engine: load CSV files, then explore them with
/// group-by SQL.
#[derive(Debug, Parser)]
#[command(name = "katydid", version, after_help = AFTER_HELP, args_conflicts_with_subcommands = true)]
pub struct Cli {
    /// A subcommand; without one, load files and run queries or the REPL.
    #[command(subcommand)]
    pub command: Option<Sub>,

    /// Load a CSV or gzipped CSV file (repeatable). The table is named after
    /// the file (directory and .gz/.csv extensions dropped, other characters
    /// that cannot be in an identifier replaced by '_').
    #[arg(long, value_name = "FILE")]
    pub load: Vec<PathBuf>,

    /// Name of the table the first --load file goes into.
    #[arg(long, value_name = "NAME", requires = "load")]
    pub table: Option<String>,

    /// The files have no header row (name the columns with --columns).
    #[arg(long)]
    pub no_header: bool,

    /// Column names, comma-separated, replacing the header's (or naming the
    /// columns of files without one).
    #[arg(long, value_name = "A,B,C", value_delimiter = ',')]
    pub columns: Option<Vec<String>>,

    /// Rows per partition.
    #[arg(long, value_name = "N", value_parser = parse_positive)]
    pub partition_rows: Option<usize>,

    /// Worker threads for loading and queries (default: one per core).
    #[arg(long, value_name = "N", value_parser = parse_positive)]
    pub threads: Option<usize>,

    /// Run this SQL statement, print its result and exit (repeatable).
    #[arg(long, short = 'q', value_name = "SQL")]
    pub query: Vec<String>,

    /// Output format of query results.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,

    /// Print each statement's elapsed time to stderr.
    #[arg(long)]
    pub timer: bool,

    /// Build the synthetic taxi table `trips` with ROWS rows (default
    /// 1,000,000) in memory and start the REPL.
    #[arg(long, value_name = "ROWS", num_args = 0..=1, default_missing_value = "1000000", value_parser = parse_count)]
    pub demo: Option<u64>,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Sub {
    /// Write a synthetic data set as CSV (gzipped when FILE ends in .gz).
    Generate {
        /// The data set: taxi, iot, numbers or kv.
        dataset: String,
        /// Number of rows.
        #[arg(long, value_name = "N", value_parser = parse_count)]
        rows: u64,
        /// The file to write.
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
    /// Aligned columns with a header and a footer line of row count and time.
    Table,
    /// RFC 4180 CSV with a header row; NULL is an empty field.
    Csv,
    /// One JSON array of objects (column name to value) per statement.
    Json,
}

impl std::str::FromStr for Format {
    type Err = String;

    fn from_str(s: &str) -> Result<Format, String> {
        <Format as ValueEnum>::from_str(s, true)
            .map_err(|_| format!("unknown format \"{s}\" (expected table, csv or json)"))
    }
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
/// without trailing `.gz` and `.csv`/`.tsv` extensions, every character that
/// is not an ASCII letter, digit or `_` replaced by `_`, and a `_` prefixed
/// when the result would start with a digit (or be empty).
pub fn table_name_for(path: &std::path::Path) -> String {
    let file = path
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut stem = file.as_str();
    for ext in [".gz", ".csv", ".tsv"] {
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
                rows: 10,
                seed: 42,
                ..
            })
        ));
        assert!(Cli::try_parse_from(["katydid", "--threads", "0"]).is_err());
    }
}
