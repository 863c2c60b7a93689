//! `katydid`: load CSV files and explore them with group-by SQL, from the
//! command line (`--query`, stdin scripts) or the REPL.
//!
//! Uses only the public API of the `katydid` library and the
//! `katydid_datasets` generators.

#[path = "../../alloc.rs"]
mod alloc;
mod args;
mod command;
mod datasets;
mod helper;
mod interrupt;
mod output;
mod progress;
mod repl;
mod session;
mod tables;

use std::io::{self, BufWriter, IsTerminal, Read, Write};
use std::process::ExitCode;
use std::sync::Arc;

use clap::Parser;
use katydid::{Database, DatabaseOptions, LoadOptions};

use crate::args::{Cli, EXAMPLE_QUERIES, Sub};
use crate::command::{Command, Dialect, Load};
use crate::interrupt::{EXIT_INTERRUPTED, Interrupt};
use crate::output::thousands;
use crate::progress::ProgressDisplay;
use crate::session::{CliError, Session, Source, load_report, memory_bytes};

/// mimalloc: the engine allocates and frees many large per-partition
/// vectors per query, which glibc's allocator serves with fresh mmaps and
/// page faults each time.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    alloc::for_queries();
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        // The reader of stdout went away (`katydid … | head`): nothing more
        // to say, and no one to say it to.
        Err(e) if e.is_broken_pipe() => ExitCode::SUCCESS,
        // Reported where it happened.
        Err(CliError::Stopped) => ExitCode::FAILURE,
        Err(CliError::Interrupted) => {
            let _ = writeln!(io::stderr().lock(), "cancelled");
            ExitCode::from(EXIT_INTERRUPTED)
        }
        Err(e) => {
            e.report();
            ExitCode::FAILURE
        }
    }
}

/// Outside the REPL a cancelled load or statement ends the run (status
/// 130).
fn interrupted_outside_repl(e: CliError, interactive: bool) -> CliError {
    if e.is_cancelled() && !interactive {
        CliError::Interrupted
    } else {
        e
    }
}

fn run(cli: Cli) -> Result<ExitCode, CliError> {
    if let Some(Sub::Generate {
        dataset,
        rows,
        sf,
        out,
        seed,
    }) = &cli.command
    {
        tables::generate(dataset, *rows, *sf, *seed, out)?;
        return Ok(ExitCode::SUCCESS);
    }

    let stdin_is_terminal = io::stdin().is_terminal();
    let interactive = cli.query.is_empty() && stdin_is_terminal;
    let memory_limit = cli
        .memory_limit
        .map(memory_bytes)
        .transpose()
        .map_err(CliError::Message)?;
    let mut db = Database::new(DatabaseOptions {
        threads: cli.threads.unwrap_or(0),
        memory_limit,
    })
    .map_err(|error| CliError::Db { error, query: None })?;
    let interrupt = Interrupt::new(db.cancel_token(), interactive);
    // Without a handler Ctrl-C still ends the process, as before.
    let _ = Interrupt::install(&interrupt);
    let progress = ProgressDisplay::for_stderr().map(Arc::new);
    if let Some(p) = &progress {
        let p = p.clone();
        db.set_progress(Some(Arc::new(move |report| p.report(report))));
    }
    let mut session = Session::new(db, interactive, interrupt);
    session.progress = progress;
    session.mode = cli.format;
    session.timer = cli.timer;
    session.max_rows = cli.maxrows;
    session.quiet = cli.quiet;
    let mut load_options = LoadOptions {
        header: !cli.no_header,
        columns: cli.columns.clone(),
        delimiter: cli.delimiter,
        null_string: cli.null_string.clone(),
        ignore_errors: cli.ignore_errors,
        ..LoadOptions::default()
    };
    if let Some(q) = cli.quote {
        load_options.quote = q;
    }
    if let Some(m) = cli.max_line_size {
        load_options.max_line_bytes = m;
    }
    if let Some(rows) = cli.partition_rows {
        load_options.partition_rows = rows;
    }
    session.load_options = load_options;

    {
        let mut out = BufWriter::new(io::stdout().lock());
        if let Some(rows) = cli.demo {
            match datasets::load_demo(&mut session, rows, &mut out) {
                Ok(stats) => session.status(&mut out, &load_report(&stats))?,
                Err(e) if e.is_cancelled() && interactive => e.report(),
                Err(e) => return Err(interrupted_outside_repl(e, interactive)),
            }
        }
        for (i, path) in cli.load.iter().chain(&cli.files).enumerate() {
            let load = Command::Load(Load {
                path: path.clone(),
                table: if i == 0 { cli.table.clone() } else { None },
                replace: cli.replace,
                dialect: Dialect::default(),
            });
            match session.execute(&load, &mut out) {
                Ok(_) => {}
                Err(e) if e.is_cancelled() && interactive => e.report(),
                Err(e) => return Err(interrupted_outside_repl(e, interactive)),
            }
        }
        out.flush()?;
    }

    let mut out = BufWriter::new(io::stdout().lock());
    if !cli.query.is_empty() {
        let mut failed = false;
        for query in &cli.query {
            let outcome = session.run_script(query, &Source::Query, &mut out)?;
            failed |= outcome.failed;
            if outcome.quit {
                break;
            }
        }
        out.flush()?;
        return Ok(exit_code(failed));
    }
    if !stdin_is_terminal {
        let mut text = String::new();
        io::stdin()
            .read_to_string(&mut text)
            .map_err(|e| CliError::Message(format!("cannot read stdin: {e}")))?;
        let outcome = session.run_script(&text, &Source::Stdin, &mut out)?;
        out.flush()?;
        return Ok(exit_code(outcome.failed));
    }
    drop(out);

    print_banner(cli.demo)?;
    repl::run(&mut session)?;
    Ok(ExitCode::SUCCESS)
}

fn exit_code(failed: bool) -> ExitCode {
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

fn print_banner(demo_rows: Option<u64>) -> Result<(), CliError> {
    let mut out = io::stdout().lock();
    writeln!(
        out,
        "katydid {}: type .help for help, .quit or Ctrl-D to leave",
        env!("CARGO_PKG_VERSION")
    )?;
    if let Some(rows) = demo_rows {
        writeln!(
            out,
            "\nTable {} holds {} rows of synthetic {}.\nTry:",
            datasets::DEMO_TABLE,
            thousands(rows),
            datasets::demo_description()
        )?;
        for query in EXAMPLE_QUERIES {
            writeln!(out, "  {query}")?;
        }
        writeln!(out, "  .schema {}", datasets::DEMO_TABLE)?;
    }
    Ok(())
}
