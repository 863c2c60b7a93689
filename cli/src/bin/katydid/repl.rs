//! The interactive loop (rustyline): prompt, multi-line statements (the
//! helper's validator keeps reading until `;`), completion, history.
//!
//! History lives in `~/.katydid_history` and is appended after each
//! statement (rustyline's `append_history` locks the file and merges what
//! other sessions appended meanwhile), so concurrent sessions share it and
//! a session ended by Ctrl-C or a crash keeps what it ran.

use std::io::{self, BufWriter, Write};
use std::path::PathBuf;

use rustyline::error::ReadlineError;
use rustyline::history::FileHistory;
use rustyline::{CompletionType, Config, Editor};

use crate::helper::{Names, SqlHelper, is_complete};
use crate::session::{CliError, Session, Source};

/// Prompt for a new statement.
pub const PROMPT: &str = "katydid> ";

/// Prompt for the next line of a statement not ended yet (no `;`, or an
/// open quote), as DuckDB's shell shows it.
pub const CONTINUATION_PROMPT: &str = "   ...> ";

/// `$KATYDID_HISTORY`, else `$HOME/.katydid_history`, if either is set.
fn history_path() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("KATYDID_HISTORY") {
        return Some(PathBuf::from(path));
    }
    std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".katydid_history"))
}

/// Runs the REPL until `.quit` or Ctrl-D. Errors of single commands are
/// printed and the loop goes on; Ctrl-C during a statement cancels it and
/// prints `cancelled`.
///
/// # Errors
/// Only when the line editor cannot start or read the terminal.
pub fn run(session: &mut Session) -> Result<(), CliError> {
    let config = Config::builder()
        .auto_add_history(false)
        // Tab with several candidates lists them all (then completes their
        // common prefix), as a shell does, rather than cycling.
        .completion_type(CompletionType::List)
        .max_history_size(10_000)
        .map_err(|e| CliError::Message(format!("cannot start the line editor: {e}")))?
        .build();
    let mut editor: Editor<SqlHelper, FileHistory> = Editor::with_config(config)
        .map_err(|e| CliError::Message(format!("cannot start the line editor: {e}")))?;
    editor.set_helper(Some(SqlHelper::new(Names::of(&session.db))));
    let history = history_path();
    if let Some(path) = &history {
        let _ = editor.load_history(path);
    }
    // Lines of a statement not ended yet.
    let mut pending = String::new();
    loop {
        let prompt = if pending.is_empty() {
            PROMPT
        } else {
            CONTINUATION_PROMPT
        };
        if let Some(helper) = editor.helper_mut() {
            helper.pending.clone_from(&pending);
        }
        // Ctrl-D inside a statement runs what was typed (which reports it
        // unfinished); the next Ctrl-D leaves.
        let mut end_of_input = false;
        match editor.readline(prompt) {
            Ok(line) => {
                if !pending.is_empty() {
                    pending.push('\n');
                }
                pending.push_str(&line);
            }
            // Ctrl-C drops the statement being typed.
            Err(ReadlineError::Interrupted) => {
                pending.clear();
                continue;
            }
            Err(ReadlineError::Eof) if pending.is_empty() => break,
            Err(ReadlineError::Eof) => end_of_input = true,
            Err(e) => return Err(CliError::Message(format!("cannot read input: {e}"))),
        }
        if pending.trim().is_empty() {
            pending.clear();
            continue;
        }
        if !end_of_input && !is_complete(&pending) {
            continue;
        }
        let input = std::mem::take(&mut pending);
        let entry = input.trim();
        if entry.is_empty() {
            continue;
        }
        let _ = editor.add_history_entry(entry);
        if let Some(path) = &history {
            // Appends only this session's new entries, under a file lock.
            let _ = editor.append_history(path);
        }
        let mut out = BufWriter::new(io::stdout().lock());
        let outcome = session.run_script(&input, &Source::Repl, &mut out);
        let _ = out.flush();
        drop(out);
        session.interrupt.take();
        if let Some(helper) = editor.helper_mut() {
            helper.names = Names::of(&session.db);
        }
        match outcome {
            Ok(o) if o.quit => break,
            Ok(_) => {}
            Err(e) if e.is_broken_pipe() => return Err(e),
            // Already reported; the REPL goes on.
            Err(_) => {}
        }
    }
    Ok(())
}
