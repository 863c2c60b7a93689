//! A [`Session`]: the database plus the output settings, executing
//! [`Command`]s for the REPL, stdin scripts and `--query` alike.

use std::fmt;
use std::io::{self, Write};
use std::path::Path;

use katydid::{Database, LoadOptions, LoadStats};

use crate::args::{EXAMPLE_QUERIES, Format, table_name_for};
use crate::command::{Command, META_HELP};
use crate::output::{
    self, Align, bytes, caret_snippet, duration, duration_short, per_second, thousands,
};

/// Rows shown per result in table mode in the REPL; the rest are summarized
/// as `… (N more rows)`. Non-interactive runs show every row.
pub const REPL_MAX_ROWS: usize = 40;

/// Why a command failed.
#[derive(Debug)]
pub enum CliError {
    /// The database refused a load or a statement; `query` is the statement
    /// text, for the caret under the error position.
    Db {
        /// The error.
        error: katydid::Error,
        /// The SQL text the error offset refers to.
        query: Option<String>,
    },
    /// A usage mistake or another failure, already worded for the user.
    Message(String),
    /// Writing results to stdout failed (a broken pipe among others).
    Output(io::Error),
}

impl From<io::Error> for CliError {
    fn from(e: io::Error) -> CliError {
        CliError::Output(e)
    }
}

impl CliError {
    /// True when stdout was closed by its reader (`katydid … | head`): the
    /// run ends quietly.
    pub fn is_broken_pipe(&self) -> bool {
        matches!(self, CliError::Output(e) if e.kind() == io::ErrorKind::BrokenPipe)
    }

    /// Prints the error to stderr: `error: …`, and for an error with a
    /// position in a query, the query line and a caret under the position.
    pub fn report(&self) {
        let _ = writeln!(io::stderr().lock(), "{self}");
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CliError::Db { error, query } => {
                write!(f, "error: {error}")?;
                if let (Some(offset), Some(query)) = (error.offset(), query) {
                    write!(f, "\n{}", caret_snippet(query, offset))?;
                }
                Ok(())
            }
            CliError::Message(m) => write!(f, "error: {m}"),
            CliError::Output(e) => write!(f, "error: cannot write output: {e}"),
        }
    }
}

/// What to do after a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    /// Go on with the next command.
    Continue,
    /// `.quit`: stop.
    Quit,
}

/// The database and the settings commands act on.
pub struct Session {
    /// The tables.
    pub db: Database,
    /// Result format.
    pub format: Format,
    /// Print `Time: …` to stderr after each statement.
    pub timer: bool,
    /// In the REPL: load reports go to stdout and long tables are capped at
    /// [`REPL_MAX_ROWS`]. Otherwise reports go to stderr and stdout holds
    /// only results.
    pub interactive: bool,
    /// How `.load` and `--load` read files.
    pub load_options: LoadOptions,
}

impl Session {
    /// Runs one command, writing its output to `out`.
    ///
    /// # Errors
    /// A [`CliError`] for a failed load or statement, an unknown table, or
    /// output that cannot be written.
    pub fn execute(&mut self, command: &Command, out: &mut dyn Write) -> Result<Flow, CliError> {
        match command {
            Command::Sql(sql) => self.run_sql(sql, out)?,
            Command::Help => write_help(out)?,
            Command::Tables => self.write_tables(out)?,
            Command::Schema(name) => self.write_schema(name.as_deref(), out)?,
            Command::Load { path, table } => {
                let stats = self.load(path, table.as_deref())?;
                self.status(out, &load_report(&stats))?;
            }
            Command::Timer(on) => self.timer = *on,
            Command::Format(format) => self.format = *format,
            Command::Quit => return Ok(Flow::Quit),
        }
        out.flush()?;
        Ok(Flow::Continue)
    }

    /// Loads `path` into `table` (default: named after the file).
    ///
    /// # Errors
    /// [`CliError::Db`] with the loader's error, which names the file.
    pub fn load(&mut self, path: &Path, table: Option<&str>) -> Result<LoadStats, CliError> {
        let name = table.map_or_else(|| table_name_for(path), str::to_string);
        self.db
            .load_csv(path, &name, &self.load_options)
            .map_err(|error| CliError::Db { error, query: None })
    }

    /// Writes a progress or status line: to `out` in the REPL, to stderr
    /// otherwise.
    pub fn status(&self, out: &mut dyn Write, line: &str) -> io::Result<()> {
        if self.interactive {
            writeln!(out, "{line}")
        } else {
            let _ = writeln!(io::stderr().lock(), "{line}");
            Ok(())
        }
    }

    fn run_sql(&mut self, sql: &str, out: &mut dyn Write) -> Result<(), CliError> {
        let result = self.db.query(sql).map_err(|error| CliError::Db {
            error,
            query: Some(sql.to_string()),
        })?;
        match self.format {
            Format::Table if is_explain(sql) => output::write_plan(out, &result)?,
            Format::Table => {
                output::write_table(out, &result, self.interactive.then_some(REPL_MAX_ROWS))?
            }
            Format::Csv => output::write_csv(out, &result)?,
            Format::Json => output::write_json(out, &result)?,
        }
        out.flush()?;
        if self.timer {
            let _ = writeln!(io::stderr().lock(), "Time: {}", duration(result.elapsed));
        }
        Ok(())
    }

    fn write_tables(&self, out: &mut dyn Write) -> Result<(), CliError> {
        let names = self.db.table_names();
        if names.is_empty() {
            writeln!(out, "no tables; load one with .load FILE")?;
            return Ok(());
        }
        let mut rows = Vec::with_capacity(names.len());
        for name in &names {
            let info = self
                .db
                .table_info(name)
                .map_err(|error| CliError::Db { error, query: None })?;
            rows.push(vec![
                info.name,
                thousands(info.rows as u64),
                info.columns.len().to_string(),
                bytes(info.heap_bytes as u64),
            ]);
        }
        output::write_grid(
            out,
            &headers(&["table", "rows", "columns", "memory"]),
            &[Align::Left, Align::Right, Align::Right, Align::Right],
            &rows,
        )?;
        Ok(())
    }

    fn write_schema(&self, name: Option<&str>, out: &mut dyn Write) -> Result<(), CliError> {
        let names = match name {
            Some(n) => vec![n.to_string()],
            None => self.db.table_names(),
        };
        if names.is_empty() {
            writeln!(out, "no tables; load one with .load FILE")?;
        }
        for (i, name) in names.iter().enumerate() {
            let info = self
                .db
                .table_info(name)
                .map_err(|error| CliError::Db { error, query: None })?;
            if i > 0 {
                writeln!(out)?;
            }
            writeln!(
                out,
                "table {}: {} in {}",
                info.name,
                output::count(info.rows, "row"),
                output::count(info.partitions, "partition")
            )?;
            let rows: Vec<Vec<String>> = info
                .columns
                .iter()
                .map(|c| {
                    let mut encodings: Vec<String> = c
                        .encodings
                        .iter()
                        .map(|(e, n)| format!("{e} ({n})"))
                        .collect();
                    if c.indexed {
                        encodings.push("+ hash index".to_string());
                    }
                    vec![
                        c.name.clone(),
                        c.dtype.name().to_string(),
                        encodings.join(", "),
                        bytes(c.heap_bytes as u64),
                    ]
                })
                .collect();
            output::write_grid(
                out,
                &headers(&["column", "type", "encodings (partitions)", "memory"]),
                &[Align::Left, Align::Left, Align::Left, Align::Right],
                &rows,
            )?;
            let ratio = if info.source_bytes > 0 {
                format!(
                    " (ratio {:.3})",
                    info.heap_bytes as f64 / info.source_bytes as f64
                )
            } else {
                String::new()
            };
            writeln!(
                out,
                "total: {} in memory vs {} of CSV{ratio}",
                bytes(info.heap_bytes as u64),
                bytes(info.source_bytes)
            )?;
        }
        Ok(())
    }
}

fn headers(names: &[&str]) -> Vec<String> {
    names.iter().map(|s| s.to_string()).collect()
}

/// True when the statement's first word is `EXPLAIN`.
pub fn is_explain(sql: &str) -> bool {
    sql.split_whitespace()
        .next()
        .is_some_and(|w| w.eq_ignore_ascii_case("explain"))
}

/// The one-line report of a finished load, e.g. `loaded trips: 10,000 rows,
/// 51 columns in 41.2 ms (242,718 rows/s, 11.3 MB/s); 1.2 MB in memory vs
/// 4.1 MB of CSV`.
pub fn load_report(stats: &LoadStats) -> String {
    format!(
        "loaded {}: {}, {} in {} ({} rows/s, {}/s); {} in memory vs {} of CSV",
        stats.table,
        output::count(stats.rows, "row"),
        output::count(stats.columns, "column"),
        duration_short(stats.elapsed),
        thousands(per_second(stats.rows as u64, stats.elapsed)),
        bytes(per_second(stats.source_bytes, stats.elapsed)),
        bytes(stats.heap_bytes as u64),
        bytes(stats.source_bytes),
    )
}

/// Writes the `.help` text: meta-commands and example queries.
pub fn write_help(out: &mut dyn Write) -> io::Result<()> {
    writeln!(
        out,
        "{META_HELP}\n\nExample queries (on the --demo table trips):"
    )?;
    for q in EXAMPLE_QUERIES {
        writeln!(out, "  {q}")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn load_report_reads_like_the_spec() {
        let stats = LoadStats {
            table: "trips".into(),
            rows: 10_000,
            columns: 51,
            partitions: 1,
            source_bytes: 4_120_000,
            heap_bytes: 1_200_000,
            elapsed: Duration::from_millis(400),
            notices: Vec::new(),
            peak_bytes: None,
        };
        assert_eq!(
            load_report(&stats),
            "loaded trips: 10,000 rows, 51 columns in 400.0 ms (25,000 rows/s, 10.3 MB/s); \
             1.2 MB in memory vs 4.1 MB of CSV"
        );
    }

    #[test]
    fn explain_is_recognized_by_its_first_word() {
        assert!(is_explain("  explain SELECT 1"));
        assert!(is_explain("EXPLAIN\nSELECT 1"));
        assert!(!is_explain("SELECT explain FROM t"));
        assert!(!is_explain("EXPLAINED"));
    }

    #[test]
    fn errors_with_offsets_show_a_caret() {
        let e = CliError::Db {
            error: katydid::Error::Parse {
                offset: 9,
                message: "expected FROM".into(),
            },
            query: Some("SELECT a FORM t".into()),
        };
        assert_eq!(
            e.to_string(),
            "error: syntax error at offset 9: expected FROM\n  SELECT a FORM t\n           ^"
        );
        let e = CliError::Db {
            error: katydid::Error::plan("unknown table \"x\""),
            query: Some("SELECT 1 FROM x".into()),
        };
        assert_eq!(e.to_string(), "error: unknown table \"x\"");
    }

    #[test]
    fn unknown_table_in_schema_is_an_error_not_a_panic() {
        let mut session = Session {
            db: Database::new(katydid::DatabaseOptions {
                threads: 1,
                ..Default::default()
            })
            .unwrap(),
            format: Format::Table,
            timer: false,
            interactive: false,
            load_options: LoadOptions::default(),
        };
        let mut out = Vec::new();
        let e = session
            .execute(&Command::Schema(Some("nope".into())), &mut out)
            .unwrap_err();
        assert!(e.to_string().contains("\"nope\""), "{e}");
        session.execute(&Command::Tables, &mut out).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "no tables; load one with .load FILE\n"
        );
        assert_eq!(
            session
                .execute(&Command::Timer(true), &mut Vec::new())
                .unwrap(),
            Flow::Continue
        );
        assert!(session.timer);
        assert_eq!(
            session.execute(&Command::Quit, &mut Vec::new()).unwrap(),
            Flow::Quit
        );
    }
}
