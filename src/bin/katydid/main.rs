//! `katydid`: load CSV files and explore them with group-by SQL, from the
//! command line (`--query`, stdin scripts) or the REPL.
//!
//! Uses only the public API of the `katydid` library and the
//! `katydid_datasets` generators.

mod args;
mod command;
mod datasets;
mod output;
mod repl;
mod session;

use std::io::{self, BufWriter, IsTerminal, Read, Write};
use std::process::ExitCode;

use clap::Parser;
use katydid::{Database, DatabaseOptions, LoadOptions};

use crate::args::{Cli, EXAMPLE_QUERIES, Sub};
use crate::command::{Command, parse_script};
use crate::output::thousands;
use crate::session::{CliError, Flow, Session, load_report};

/// mimalloc: the engine allocates and frees many large per-partition
/// vectors per query, which glibc's allocator serves with fresh mmaps and
/// page faults each time.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        // The reader of stdout went away (`katydid … | head`): nothing more
        // to say, and no one to say it to.
        Err(e) if e.is_broken_pipe() => ExitCode::SUCCESS,
        Err(e) => {
            e.report();
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> Result<(), CliError> {
    if let Some(Sub::Generate {
        dataset,
        rows,
        out,
        seed,
    }) = &cli.command
    {
        return datasets::generate(dataset, *rows, *seed, out);
    }

    let stdin_is_terminal = io::stdin().is_terminal();
    let interactive = cli.query.is_empty() && stdin_is_terminal;
    let mut load_options = LoadOptions {
        header: !cli.no_header,
        columns: cli.columns.clone(),
        ..LoadOptions::default()
    };
    if let Some(rows) = cli.partition_rows {
        load_options.partition_rows = rows;
    }
    let db = Database::new(DatabaseOptions {
        threads: cli.threads.unwrap_or(0),
        ..DatabaseOptions::default()
    })
    .map_err(|error| CliError::Db { error, query: None })?;
    let mut session = Session {
        db,
        format: cli.format,
        timer: cli.timer,
        interactive,
        load_options,
    };

    {
        let mut out = BufWriter::new(io::stdout().lock());
        if let Some(rows) = cli.demo {
            let stats = datasets::load_demo(&mut session, rows, &mut out)?;
            session.status(&mut out, &load_report(&stats))?;
        }
        for (i, path) in cli.load.iter().enumerate() {
            let table = if i == 0 { cli.table.clone() } else { None };
            let load = Command::Load {
                path: path.clone(),
                table,
            };
            session.execute(&load, &mut out)?;
        }
        out.flush()?;
    }

    if !cli.query.is_empty() {
        let mut commands = Vec::new();
        for query in &cli.query {
            commands.extend(parse_script(query).map_err(CliError::Message)?);
        }
        return run_all(&mut session, &commands);
    }
    if !stdin_is_terminal {
        let mut text = String::new();
        io::stdin()
            .read_to_string(&mut text)
            .map_err(|e| CliError::Message(format!("cannot read stdin: {e}")))?;
        let commands = parse_script(&text).map_err(CliError::Message)?;
        return run_all(&mut session, &commands);
    }

    print_banner(cli.demo)?;
    repl::run(&mut session)
}

/// Runs commands in order, stopping at the first failure or `.quit`.
fn run_all(session: &mut Session, commands: &[Command]) -> Result<(), CliError> {
    let mut out = BufWriter::new(io::stdout().lock());
    for command in commands {
        if session.execute(command, &mut out)? == Flow::Quit {
            break;
        }
    }
    out.flush()?;
    Ok(())
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
