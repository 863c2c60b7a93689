//! A [`Session`]: the database plus the output settings, executing
//! [`Command`]s and scripts for the REPL, stdin scripts, `.read` and
//! `--query` alike.

use std::fmt;
use std::fs::File;
use std::io::{self, BufWriter, IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use katydid::{Database, Error, LoadOptions, LoadStats, RowSink, Value};

use crate::args::{EXAMPLE_QUERIES, Format, table_name_for};
use crate::command::{Command, Load, META_HELP, MemorySize, parse_script};
use crate::interrupt::Interrupt;
use crate::output::{
    self, Align, CsvSink, JsonSink, bytes, caret_snippet, duration, duration_short, per_second,
    thousands,
};
use crate::progress::ProgressDisplay;

/// Rows the display formats show by default (`.maxrows`).
pub const DEFAULT_MAX_ROWS: usize = 40;
/// How deep `.read` may nest (a script that reads itself stops here).
const MAX_READ_DEPTH: usize = 16;

/// Why a command failed.
#[derive(Debug)]
pub enum CliError {
    /// The database refused a load or a statement; `query` is the statement
    /// text, for the caret under the error position.
    Db {
        /// The error.
        error: Error,
        /// The SQL text the error offset refers to.
        query: Option<String>,
    },
    /// A usage mistake or another failure, already worded for the user.
    Message(String),
    /// Writing results to stdout failed (a broken pipe among others).
    Output(io::Error),
    /// A script stopped at a failure that was already reported (`.bail
    /// on`).
    Stopped,
    /// Ctrl-C outside the REPL: the run ends with status 130.
    Interrupted,
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

    /// True for a statement or load stopped by Ctrl-C.
    pub fn is_cancelled(&self) -> bool {
        matches!(
            self,
            CliError::Db {
                error: Error::Cancelled,
                ..
            }
        )
    }

    /// Prints the error to stderr: `error: …`, and for an error with a
    /// position in a query, the query line and a caret under the position.
    pub fn report(&self) {
        self.report_at(None);
    }

    /// As [`CliError::report`], with where the failing command stands in a
    /// script (`line 3`, `setup.sql:3`) after `error: `.
    pub fn report_at(&self, location: Option<&str>) {
        let text = self.to_string();
        let text = match (location, text.strip_prefix("error: ")) {
            (Some(at), Some(rest)) => format!("error: {at}: {rest}"),
            (Some(at), None) => format!("{at}: {text}"),
            (None, _) => text,
        };
        let _ = writeln!(io::stderr().lock(), "{text}");
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CliError::Db {
                error: Error::Cancelled,
                ..
            } => write!(f, "cancelled"),
            CliError::Db { error, query } => {
                write!(f, "error: {error}")?;
                if let (Some(offset), Some(query)) = (error.offset(), query) {
                    write!(f, "\n{}", caret_snippet(query, offset))?;
                }
                Ok(())
            }
            CliError::Message(m) => write!(f, "error: {m}"),
            CliError::Output(e) => write!(f, "error: cannot write output: {e}"),
            CliError::Stopped => write!(f, "error: the script stopped"),
            CliError::Interrupted => write!(f, "cancelled"),
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

/// Where a script comes from, for error locations.
#[derive(Debug, Clone)]
pub enum Source {
    /// Typed in the REPL: no location.
    Repl,
    /// `--query`: no location.
    Query,
    /// Standard input: `line N`.
    Stdin,
    /// A `.read` file: `FILE:N`.
    File(PathBuf),
}

impl Source {
    fn location(&self, line: usize) -> Option<String> {
        match self {
            Source::Repl | Source::Query => None,
            Source::Stdin => Some(format!("line {line}")),
            Source::File(p) => Some(format!("{}:{line}", p.display())),
        }
    }
}

/// How a script ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Outcome {
    /// Some command failed (and was reported).
    pub failed: bool,
    /// `.quit` was run.
    pub quit: bool,
}

/// A file results go to instead of stdout (`.output`, `.once`).
struct Redirect {
    file: BufWriter<File>,
    path: PathBuf,
    once: bool,
}

/// The database and the settings commands act on.
pub struct Session {
    /// The tables.
    pub db: Database,
    /// Result format (`.mode`).
    pub mode: Format,
    /// Add time and scan rate after each statement (`.timer`).
    pub timer: bool,
    /// In the REPL: load reports go to stdout. Otherwise reports go to
    /// stderr and stdout holds only results.
    pub interactive: bool,
    /// How `.load` and `--load` read files.
    pub load_options: LoadOptions,
    /// Rows the display formats show; 0 shows all.
    pub max_rows: usize,
    /// Width the table view fits; 0 means the terminal's (no limit when
    /// results do not go to a terminal).
    pub max_width: usize,
    /// A failing statement stops a script (`.bail`).
    pub bail: bool,
    /// Ctrl-C state.
    pub interrupt: Arc<Interrupt>,
    /// Progress bars and lines on stderr, when it is a terminal.
    pub progress: Option<Arc<ProgressDisplay>>,
    /// Keep load reports and notices to oneself (`--quiet`).
    pub quiet: bool,
    redirect: Option<Redirect>,
    read_depth: usize,
}

impl Session {
    /// A session over `db` with default settings.
    pub fn new(db: Database, interactive: bool, interrupt: Arc<Interrupt>) -> Session {
        Session {
            db,
            mode: Format::Table,
            timer: false,
            interactive,
            load_options: LoadOptions::default(),
            max_rows: DEFAULT_MAX_ROWS,
            max_width: 0,
            bail: true,
            interrupt,
            progress: None,
            quiet: false,
            redirect: None,
            read_depth: 0,
        }
    }

    /// Runs the commands of `text` in order, reporting each failure with its
    /// location; with [`Session::bail`] the first failure stops the script.
    ///
    /// # Errors
    /// [`CliError::Stopped`] after a reported failure when bailing; output
    /// that cannot be written; [`CliError::Interrupted`] after Ctrl-C
    /// outside the REPL.
    pub fn run_script(
        &mut self,
        text: &str,
        source: &Source,
        out: &mut dyn Write,
    ) -> Result<Outcome, CliError> {
        let mut outcome = Outcome::default();
        // Typed statements never stop the REPL; scripts stop with `.bail on`.
        let repl = matches!(source, Source::Repl);
        for (line, command) in parse_script(text) {
            let result = match command {
                Ok(command) => self.execute(&command, out),
                Err(message) => Err(CliError::Message(message)),
            };
            // Ctrl-C outside the REPL ends the run even when the work it
            // cancelled had already finished.
            if !self.interactive && self.interrupt.take() {
                out.flush()?;
                return Err(CliError::Interrupted);
            }
            match result {
                Ok(Flow::Continue) => {}
                Ok(Flow::Quit) => {
                    outcome.quit = true;
                    break;
                }
                Err(e) if e.is_broken_pipe() => return Err(e),
                Err(CliError::Interrupted) => return Err(CliError::Interrupted),
                Err(e) if e.is_cancelled() && !self.interactive => {
                    return Err(CliError::Interrupted);
                }
                Err(CliError::Stopped) => {
                    outcome.failed = true;
                    if self.bail && !repl {
                        return Err(CliError::Stopped);
                    }
                }
                Err(e) => {
                    out.flush()?;
                    e.report_at(source.location(line).as_deref());
                    outcome.failed = true;
                    if self.bail && !repl {
                        return Err(CliError::Stopped);
                    }
                }
            }
        }
        out.flush()?;
        Ok(outcome)
    }

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
            Command::Load(load) => {
                let stats = self.load(load)?;
                self.report_load(out, &stats)?;
            }
            Command::Timer(on) => self.timer = *on,
            Command::Mode(format) => self.mode = *format,
            Command::MaxRows(n) => self.max_rows = *n,
            Command::MaxWidth(n) => self.max_width = *n,
            Command::Bail(on) => self.bail = *on,
            Command::Read(path) => return self.read(path, out),
            Command::Output(path) => self.set_output(path.as_deref(), false)?,
            Command::Once(path) => self.set_output(Some(path), true)?,
            Command::MemoryLimit(size) => {
                if let Some(size) = size {
                    let bytes = memory_bytes(*size).map_err(CliError::Message)?;
                    self.db.set_memory_limit(bytes);
                }
                writeln!(out, "memory: {}", self.db.memory_summary())?;
            }
            Command::Quit => return Ok(Flow::Quit),
        }
        out.flush()?;
        Ok(Flow::Continue)
    }

    fn read(&mut self, path: &Path, out: &mut dyn Write) -> Result<Flow, CliError> {
        if self.read_depth >= MAX_READ_DEPTH {
            return Err(CliError::Message(format!(
                "{}: .read nests more than {MAX_READ_DEPTH} deep",
                path.display()
            )));
        }
        let path = &expand_home(path);
        let text = std::fs::read_to_string(path)
            .map_err(|e| CliError::Message(format!("cannot read {}: {e}", path.display())))?;
        self.read_depth += 1;
        let outcome = self.run_script(&text, &Source::File(path.to_path_buf()), out);
        self.read_depth -= 1;
        match outcome? {
            Outcome { quit: true, .. } => Ok(Flow::Quit),
            // Failures were reported at their lines; the caller counts one.
            Outcome { failed: true, .. } => Err(CliError::Stopped),
            _ => Ok(Flow::Continue),
        }
    }

    fn set_output(&mut self, path: Option<&Path>, once: bool) -> Result<(), CliError> {
        if let Some(mut old) = self.redirect.take() {
            old.file.flush()?;
        }
        if let Some(path) = path {
            let path = &expand_home(path);
            let file = File::create(path)
                .map_err(|e| CliError::Message(format!("cannot write {}: {e}", path.display())))?;
            self.redirect = Some(Redirect {
                file: BufWriter::new(file),
                path: path.to_path_buf(),
                once,
            });
        }
        Ok(())
    }

    /// The load options of one `.load` or `--load`: the session's, with the
    /// command's own dialect and REPLACE on top.
    pub fn options_for(&self, load: &Load) -> LoadOptions {
        let mut o = self.load_options.clone();
        let d = &load.dialect;
        if d.delimiter.is_some() {
            o.delimiter = d.delimiter;
        }
        if let Some(q) = d.quote {
            o.quote = q;
        }
        if let Some(h) = d.header {
            o.header = h;
        }
        if d.null_string.is_some() {
            o.null_string = d.null_string.clone();
        }
        if let Some(m) = d.max_line_bytes {
            o.max_line_bytes = m;
        }
        if let Some(i) = d.ignore_errors {
            o.ignore_errors = i;
        }
        if !d.timestamp_formats.is_empty() {
            // Checked when the command was parsed.
            o.timestamp_formats = d
                .timestamp_formats
                .iter()
                .filter_map(|f| katydid::types::TimestampFormat::new(f).ok())
                .map(std::sync::Arc::new)
                .collect();
        }
        o.replace |= load.replace;
        o
    }

    /// Loads a file as `load` says (the table named after the file unless
    /// given).
    ///
    /// # Errors
    /// [`CliError::Db`] with the loader's error, which names the file.
    pub fn load(&mut self, load: &Load) -> Result<LoadStats, CliError> {
        let from_stdin = load.path.as_os_str() == "-";
        let path = expand_home(&load.path);
        let name = load.table.clone().unwrap_or_else(|| {
            if from_stdin {
                "stdin".to_string()
            } else {
                table_name_for(&path)
            }
        });
        let options = self.options_for(load);
        let stdin = if from_stdin {
            let mut bytes = Vec::new();
            io::stdin()
                .lock()
                .read_to_end(&mut bytes)
                .map_err(|e| CliError::Message(format!("cannot read stdin: {e}")))?;
            Some(bytes)
        } else {
            None
        };
        if let Some(p) = &self.progress {
            let file = path.file_name().unwrap_or(path.as_os_str());
            p.begin(&format!("loading {}", file.to_string_lossy()));
        }
        let result = {
            let _busy = self.interrupt.busy();
            let _loading = crate::alloc::Loading::start_for(&path);
            match stdin {
                Some(bytes) => self
                    .db
                    .load_csv_bytes(bytes, Path::new("stdin"), &name, &options),
                None => self.db.load_csv(&path, &name, &options),
            }
        };
        if let Some(p) = &self.progress {
            p.finish();
        }
        result.map_err(|error| CliError::Db { error, query: None })
    }

    /// Writes the report of a finished load and its notices.
    pub fn report_load(&self, out: &mut dyn Write, stats: &LoadStats) -> io::Result<()> {
        self.status(out, &load_report(stats))?;
        for notice in &stats.notices {
            self.status(out, &format!("note: {notice}"))?;
        }
        Ok(())
    }

    /// Writes a progress or status line: to `out` in the REPL, to stderr
    /// otherwise; nowhere with `--quiet`.
    pub fn status(&self, out: &mut dyn Write, line: &str) -> io::Result<()> {
        if self.quiet {
            Ok(())
        } else if self.interactive {
            writeln!(out, "{line}")
        } else {
            let _ = writeln!(io::stderr().lock(), "{line}");
            Ok(())
        }
    }

    /// The width the table view fits into for output going to the
    /// terminal (`to_terminal`): `.maxwidth`, else the terminal's width.
    fn table_width(&self, to_terminal: bool) -> Option<usize> {
        if self.max_width > 0 {
            Some(self.max_width)
        } else if to_terminal && io::stdout().is_terminal() {
            console::Term::stdout()
                .size_checked()
                .map(|(_rows, cols)| usize::from(cols))
                .filter(|&c| c > 0)
        } else {
            None
        }
    }

    fn run_sql(&mut self, sql: &str, out: &mut dyn Write) -> Result<(), CliError> {
        let to_terminal = self.redirect.is_none();
        let width = self.table_width(to_terminal);
        if Database::changes_tables(sql) {
            // CREATE TABLE … AS, DROP TABLE: the tables change, so the
            // statement runs with the database to itself.
            let busy = self.interrupt.busy();
            let result = self.db.execute(sql);
            drop(busy);
            if let Some(p) = &self.progress {
                p.finish();
            }
            let result = result.map_err(|error| CliError::Db {
                error,
                query: Some(sql.to_string()),
            })?;
            if !result.columns.is_empty() {
                let shown = output::write_table(out, &result, result.rows.len() as u64, width)?;
                let timing = self.timer.then_some((result.elapsed, result.rows_scanned));
                writeln!(out, "{}", output::footer(&shown, timing))?;
            }
            return Ok(());
        }
        // `.once x.csv`, `.output x.json`: the file's extension picks the
        // format whatever the mode; `.parquet` is written by the library.
        let extension = self.redirect.as_ref().and_then(|r| {
            let e = r.path.extension()?.to_str()?.to_ascii_lowercase();
            Some((e, r.path.clone(), r.once))
        });
        let mode = match extension.as_ref().map(|(e, _, _)| e.as_str()) {
            Some("csv") => Format::Csv,
            Some("json") => Format::Json,
            Some("parquet") => {
                let (_, path, once) = extension.clone().unwrap_or_default();
                let written = self
                    .db
                    .copy_to(sql, &path, &katydid::CopyOptions::default())
                    .map_err(|error| CliError::Db {
                        error,
                        query: Some(sql.to_string()),
                    });
                if once {
                    self.set_output(None, false)?;
                }
                written?;
                return Ok(());
            }
            _ => self.mode,
        };
        let timer = self.timer;
        let max_rows = if self.max_rows == 0 {
            usize::MAX
        } else {
            self.max_rows
        };
        if let Some(p) = &self.progress {
            p.begin("query");
        }
        let db_error = |error| CliError::Db {
            error,
            query: Some(sql.to_string()),
        };
        let progress = self.progress.clone();
        let clear = || {
            if let Some(p) = &progress {
                p.finish();
            }
        };
        let (target, once): (&mut dyn Write, bool) = match &mut self.redirect {
            Some(r) => (&mut r.file, r.once),
            None => (out, false),
        };
        let busy = self.interrupt.busy();
        let result = if mode.is_display() {
            // A plan is shown whole, however many lines it has, and so
            // are DESCRIBE, SUMMARIZE and SHOW TABLES: a row per column
            // or table.
            let max_rows = if is_explain(sql) || is_introspection(sql) {
                usize::MAX
            } else {
                max_rows
            };
            let preview = self.db.query_preview(sql, max_rows);
            drop(busy);
            clear();
            let preview = preview.map_err(db_error)?;
            let result = &preview.result;
            if is_explain(sql) && mode == Format::Table {
                output::write_plan(target, result)?;
                if timer {
                    writeln!(target, "plan in {}", duration(result.elapsed))?;
                }
            } else {
                let shown = match mode {
                    Format::Line => output::write_lines(target, result, preview.total_rows)?,
                    Format::Markdown => output::write_markdown(target, result, preview.total_rows)?,
                    _ => output::write_table(target, result, preview.total_rows, width)?,
                };
                let timing = timer.then_some((result.elapsed, result.rows_scanned));
                writeln!(target, "{}", output::footer(&shown, timing))?;
            }
            Ok(())
        } else {
            let mut cleared = ClearProgress {
                progress: progress.as_deref(),
            };
            let token = self.db.cancel_token();
            let (summary, error, cancelled) = if mode == Format::Json {
                let mut sink = JsonSink::new(target).with_cancel(token);
                let summary = {
                    let mut s = Clearing(&mut sink, &mut cleared);
                    self.db.query_to(sql, &mut s)
                };
                let cancelled = sink.was_cancelled();
                let started = summary.is_ok();
                (summary, sink.finish(started), cancelled)
            } else {
                let mut sink = CsvSink::new(target).with_cancel(token);
                let summary = {
                    let mut s = Clearing(&mut sink, &mut cleared);
                    self.db.query_to(sql, &mut s)
                };
                let cancelled = sink.was_cancelled();
                (summary, sink.into_error(), cancelled)
            };
            drop(busy);
            clear();
            if let Some(e) = error {
                return Err(CliError::Output(e));
            }
            let summary = summary.map_err(db_error)?;
            if cancelled {
                return Err(db_error(Error::Cancelled));
            }
            if timer {
                let _ = writeln!(
                    io::stderr().lock(),
                    "{} in {}{}",
                    output::count_u64(summary.rows, "row"),
                    duration(summary.elapsed),
                    output::scan_rate(summary.rows_scanned, summary.elapsed)
                );
            }
            Ok(())
        };
        if once {
            self.set_output(None, false)?;
        } else if let Some(r) = &mut self.redirect {
            r.file.flush().map_err(|e| {
                CliError::Message(format!("cannot write {}: {e}", r.path.display()))
            })?;
        }
        result
    }

    fn write_tables(&self, out: &mut dyn Write) -> Result<(), CliError> {
        let names = self.db.table_names();
        // Files read by `FROM 'file'` stay cached as tables: SHOW TABLES
        // lists them under their quoted paths.
        let files: Vec<Vec<String>> = self
            .db
            .query("SHOW TABLES")
            .map_err(|error| CliError::Db { error, query: None })?
            .rows
            .into_iter()
            .filter(|r| matches!(r.first(), Some(Value::Str(n)) if n.starts_with('\'')))
            .map(|r| {
                let int = |v: &Value| match v {
                    Value::Int(n) => thousands(*n as u64),
                    other => other.to_string(),
                };
                vec![r[0].to_string(), int(&r[1]), int(&r[2]), r[3].to_string()]
            })
            .collect();
        if names.is_empty() && files.is_empty() {
            writeln!(out, "no tables; load one with .load FILE")?;
            writeln!(out, "memory: {}", self.db.memory_summary())?;
            return Ok(());
        }
        let mut rows = Vec::with_capacity(names.len() + files.len());
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
        rows.extend(files);
        output::write_grid(
            out,
            &headers(&["table", "rows", "columns", "memory"]),
            &[Align::Left, Align::Right, Align::Right, Align::Right],
            &rows,
        )?;
        writeln!(out, "memory: {}", self.db.memory_summary())?;
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
                        per_row(c.heap_bytes, info.rows),
                    ]
                })
                .collect();
            output::write_grid(
                out,
                &headers(&[
                    "column",
                    "type",
                    "encodings (partitions)",
                    "memory",
                    "B/row",
                ]),
                &[
                    Align::Left,
                    Align::Left,
                    Align::Left,
                    Align::Right,
                    Align::Right,
                ],
                &rows,
            )?;
            // Why the load typed a column wider than most of its values.
            for c in &info.columns {
                if let Some(note) = &c.note {
                    writeln!(out, "note: column {}: {note}", c.name)?;
                }
            }
            let ratio = if info.source_bytes > 0 {
                format!(
                    " (ratio {:.3})",
                    info.heap_bytes as f64 / info.source_bytes as f64
                )
            } else {
                String::new()
            };
            let source = if info.source_bytes > 0 {
                format!(
                    " vs {} of {}",
                    bytes(info.source_bytes),
                    info.source_format.name()
                )
            } else {
                String::new()
            };
            writeln!(
                out,
                "total: {} in memory ({} B/row){source}{ratio}",
                bytes(info.heap_bytes as u64),
                per_row(info.heap_bytes, info.rows),
            )?;
        }
        writeln!(out, "memory: {}", self.db.memory_summary())?;
        Ok(())
    }
}

/// Bytes per row with two decimals (`0.00` for an empty table).
fn per_row(bytes: usize, rows: usize) -> String {
    format!("{:.2}", bytes as f64 / rows.max(1) as f64)
}

/// Clears the progress line once, when the first rows are about to print.
struct ClearProgress<'a> {
    progress: Option<&'a ProgressDisplay>,
}

/// A [`RowSink`] that clears the progress line before passing on the
/// header.
struct Clearing<'a, 'b>(&'a mut dyn RowSink, &'a mut ClearProgress<'b>);

impl RowSink for Clearing<'_, '_> {
    fn start(&mut self, columns: &[String], types: &[katydid::DataType]) -> katydid::Result<()> {
        if let Some(p) = self.1.progress.take() {
            p.finish();
        }
        self.0.start(columns, types)
    }

    fn rows(&mut self, rows: &[Vec<Value>]) -> katydid::Result<bool> {
        self.0.rows(rows)
    }
}

/// Bytes of a memory limit as the user gave it (a percentage of physical
/// memory).
///
/// # Errors
/// When physical memory cannot be read for a percentage.
pub fn memory_bytes(size: MemorySize) -> Result<usize, String> {
    match size {
        MemorySize::Bytes(b) => Ok(usize::try_from(b).unwrap_or(usize::MAX)),
        MemorySize::Percent(p) => {
            // The default limit is 80% of physical memory.
            let default = katydid::default_memory_limit();
            if default == usize::MAX {
                return Err("cannot read physical memory; give the limit in bytes".into());
            }
            let physical = default as u128 * 5 / 4;
            Ok((physical * u128::from(p) / 100) as usize)
        }
    }
}

fn headers(names: &[&str]) -> Vec<String> {
    names.iter().map(|s| s.to_string()).collect()
}

/// `path` with a leading `~` (alone or before a `/`) replaced by `$HOME`,
/// as a shell would.
pub fn expand_home(path: &Path) -> PathBuf {
    let Some(text) = path.to_str() else {
        return path.to_path_buf();
    };
    let rest = match text.strip_prefix('~') {
        Some(rest) if rest.is_empty() || rest.starts_with('/') => rest,
        _ => return path.to_path_buf(),
    };
    match std::env::var_os("HOME") {
        Some(home) => PathBuf::from(format!("{}{rest}", home.to_string_lossy())),
        None => path.to_path_buf(),
    }
}

/// True when the statement's first word is `DESCRIBE`, `SUMMARIZE` or
/// `SHOW`.
pub fn is_introspection(sql: &str) -> bool {
    sql.split_whitespace().next().is_some_and(|w| {
        ["describe", "summarize", "show"]
            .iter()
            .any(|k| w.eq_ignore_ascii_case(k))
    })
}

/// True when the statement's first word is `EXPLAIN`.
pub fn is_explain(sql: &str) -> bool {
    sql.split_whitespace()
        .next()
        .is_some_and(|w| w.eq_ignore_ascii_case("explain"))
}

/// The one-line report of a finished load, e.g. `loaded trips: 10,000 rows,
/// 51 columns in 41.2 ms (242,718 rows/s, 10.8 MiB/s); 1.1 MiB in memory vs
/// 3.9 MiB of CSV; load peak 2.5 MiB`. The peak, where the loader measured
/// one ([`LoadStats::peak_bytes`]), is how far the process's resident
/// memory rose above where it stood when the load started, at its highest.
pub fn load_report(stats: &LoadStats) -> String {
    let peak = stats
        .peak_bytes
        .map(|p| format!("; load peak {}", bytes(p as u64)))
        .unwrap_or_default();
    // Arrow batches handed over in memory have no size to compare with.
    let (rate, source) = if stats.source_bytes > 0 {
        (
            format!(
                ", {}/s",
                bytes(per_second(stats.source_bytes, stats.elapsed))
            ),
            format!(
                " vs {} of {}",
                bytes(stats.source_bytes),
                stats.source_format.name()
            ),
        )
    } else {
        (String::new(), String::new())
    };
    format!(
        "loaded {}: {}, {} in {} ({} rows/s{rate}); {} in memory{source}{peak}",
        stats.table,
        output::count(stats.rows, "row"),
        output::count(stats.columns, "column"),
        duration_short(stats.elapsed),
        thousands(per_second(stats.rows as u64, stats.elapsed)),
        bytes(stats.heap_bytes as u64),
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

    fn session() -> Session {
        let db = Database::new(katydid::DatabaseOptions {
            threads: 1,
            ..Default::default()
        })
        .unwrap();
        let interrupt = Interrupt::new(db.cancel_token(), false);
        Session::new(db, false, interrupt)
    }

    #[test]
    fn load_report_reads_like_the_spec() {
        let mut stats = LoadStats {
            table: "trips".into(),
            rows: 10_000,
            columns: 51,
            partitions: 1,
            source_bytes: 4_120_000,
            source_format: katydid::SourceFormat::Csv,
            heap_bytes: 1_200_000,
            elapsed: Duration::from_millis(400),
            notices: Vec::new(),
            peak_bytes: None,
        };
        assert_eq!(
            load_report(&stats),
            "loaded trips: 10,000 rows, 51 columns in 400.0 ms (25,000 rows/s, 9.8 MiB/s); \
             1.1 MiB in memory vs 3.9 MiB of CSV"
        );
        stats.peak_bytes = Some(2_621_440);
        assert_eq!(
            load_report(&stats),
            "loaded trips: 10,000 rows, 51 columns in 400.0 ms (25,000 rows/s, 9.8 MiB/s); \
             1.1 MiB in memory vs 3.9 MiB of CSV; load peak 2.5 MiB"
        );
        stats.source_format = katydid::SourceFormat::Parquet;
        assert!(load_report(&stats).contains(" vs 3.9 MiB of Parquet; "));
        stats.source_bytes = 0;
        stats.source_format = katydid::SourceFormat::Arrow;
        assert_eq!(
            load_report(&stats),
            "loaded trips: 10,000 rows, 51 columns in 400.0 ms (25,000 rows/s); \
             1.1 MiB in memory; load peak 2.5 MiB"
        );
    }

    #[test]
    fn load_notices_follow_the_report() {
        let mut s = session();
        s.interactive = true;
        let stats = LoadStats {
            table: "t".into(),
            rows: 3,
            columns: 1,
            partitions: 1,
            source_bytes: 10,
            source_format: katydid::SourceFormat::Csv,
            heap_bytes: 10,
            elapsed: Duration::from_millis(1),
            notices: vec![
                "column id: typed as string because of 1 value of 3 (line 4: \"3x\")".into(),
            ],
            peak_bytes: None,
        };
        let mut out = Vec::new();
        s.report_load(&mut out, &stats).unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2, "{text}");
        assert!(lines[0].starts_with("loaded t: 3 rows, 1 column in "));
        assert_eq!(
            lines[1],
            "note: column id: typed as string because of 1 value of 3 (line 4: \"3x\")"
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
            error: Error::Parse {
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
            error: Error::plan("unknown table \"x\""),
            query: Some("SELECT 1 FROM x".into()),
        };
        assert_eq!(e.to_string(), "error: unknown table \"x\"");
        let e = CliError::Db {
            error: Error::Cancelled,
            query: None,
        };
        assert_eq!(e.to_string(), "cancelled");
        assert!(e.is_cancelled());
    }

    #[test]
    fn percent_limits_scale_physical_memory() {
        let b = memory_bytes(MemorySize::Bytes(4_000)).unwrap();
        assert_eq!(b, 4_000);
        if katydid::default_memory_limit() != usize::MAX {
            let eighty = memory_bytes(MemorySize::Percent(80)).unwrap();
            let forty = memory_bytes(MemorySize::Percent(40)).unwrap();
            assert!(
                eighty.abs_diff(katydid::default_memory_limit()) < 8,
                "{eighty}"
            );
            assert!(forty.abs_diff(eighty / 2) < 8);
        }
    }

    #[test]
    fn load_options_merge_session_and_command() {
        let mut s = session();
        s.load_options.delimiter = Some(b';');
        s.load_options.null_string = Some("NA".into());
        let load = Load {
            path: "x.csv".into(),
            table: None,
            replace: true,
            dialect: crate::command::Dialect {
                delimiter: Some(b'|'),
                header: Some(false),
                ..Default::default()
            },
        };
        let o = s.options_for(&load);
        assert_eq!(o.delimiter, Some(b'|'));
        assert_eq!(o.null_string.as_deref(), Some("NA"));
        assert!(!o.header && o.replace);
    }

    #[test]
    fn unknown_table_in_schema_is_an_error_not_a_panic() {
        let mut session = session();
        let mut out = Vec::new();
        let e = session
            .execute(&Command::Schema(Some("nope".into())), &mut out)
            .unwrap_err();
        assert!(e.to_string().contains("\"nope\""), "{e}");
        session.execute(&Command::Tables, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.starts_with("no tables; load one with .load FILE\nmemory: "),
            "{text}"
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

    #[test]
    fn scripts_report_and_bail_or_go_on() {
        let mut s = session();
        let mut out = Vec::new();
        // .bail off: the bad command fails at its line, the rest runs.
        let outcome = s
            .run_script(".bail off\n.bogus\n.maxrows 7\n", &Source::Stdin, &mut out)
            .unwrap();
        assert!(outcome.failed && !outcome.quit);
        assert_eq!(s.max_rows, 7);
        // .bail on: stops at the failure.
        s.bail = true;
        let e = s
            .run_script(".bogus\n.maxrows 9\n", &Source::Stdin, &mut out)
            .unwrap_err();
        assert!(matches!(e, CliError::Stopped));
        assert_eq!(s.max_rows, 7);
    }
}
