//! The interactive loop (rustyline): prompts, multi-line statements, history.

use std::io::{self, BufWriter};
use std::path::PathBuf;

use rustyline::DefaultEditor;
use rustyline::error::ReadlineError;

use crate::command::{Command, parse_meta, split_script};
use crate::session::{CliError, Flow, Session};

/// Prompt for a new statement.
pub const PROMPT: &str = "katydid> ";
/// Prompt while a statement is not yet ended by `;`.
pub const CONTINUATION: &str = "      -> ";

/// Lines typed so far of a statement that has not ended yet.
#[derive(Debug, Default)]
pub struct LineBuffer {
    text: String,
}

/// What a typed line completed.
#[derive(Debug, PartialEq, Eq)]
pub struct Completed {
    /// The commands to run in order; a malformed meta-command is an `Err`
    /// with its message.
    pub commands: Vec<Result<Command, String>>,
    /// The text to keep in the history.
    pub history: String,
}

impl LineBuffer {
    /// True when no statement is pending (the normal prompt applies).
    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    /// Forgets the pending statement (Ctrl-C).
    pub fn clear(&mut self) {
        self.text.clear();
    }

    /// Adds one typed line. Returns the commands it completes: a meta-command
    /// when the line starts with `.` and no statement is pending, else every
    /// statement that now ends with `;`. Text after the last `;` stays
    /// pending; blank and comment-only input is dropped.
    pub fn push_line(&mut self, line: &str) -> Option<Completed> {
        if self.text.is_empty() && line.trim_start().starts_with('.') {
            let line = line.trim();
            return Some(Completed {
                commands: vec![parse_meta(line)],
                history: line.to_string(),
            });
        }
        self.text.push_str(line);
        self.text.push('\n');
        let split = split_script(&self.text);
        if split.pieces.is_empty() {
            if split.rest.is_empty() {
                self.text.clear();
            }
            return None;
        }
        let rest_start = if split.rest.is_empty() {
            self.text.len()
        } else {
            split.rest.as_ptr() as usize - self.text.as_ptr() as usize
        };
        let commands = split
            .pieces
            .iter()
            .map(|piece| match piece {
                crate::command::Piece::Sql(sql) => Ok(Command::Sql(sql.to_string())),
                crate::command::Piece::Meta(line) => parse_meta(line),
            })
            .collect();
        let history = self.text[..rest_start].trim().to_string();
        let rest = split.rest.to_string();
        self.text.clear();
        if !rest.is_empty() {
            self.text.push_str(&rest);
            self.text.push('\n');
        }
        Some(Completed { commands, history })
    }
}

/// `$HOME/.katydid_history`, if `HOME` is set.
fn history_path() -> Option<PathBuf> {
    std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".katydid_history"))
}

/// Runs the REPL until `.quit` or Ctrl-D. Errors of single commands are
/// printed and the loop goes on.
///
/// # Errors
/// Only when the line editor cannot start or read the terminal.
pub fn run(session: &mut Session) -> Result<(), CliError> {
    let mut editor = DefaultEditor::new()
        .map_err(|e| CliError::Message(format!("cannot start the line editor: {e}")))?;
    let history = history_path();
    if let Some(path) = &history {
        let _ = editor.load_history(path);
    }
    let mut buffer = LineBuffer::default();
    'read: loop {
        let prompt = if buffer.is_empty() {
            PROMPT
        } else {
            CONTINUATION
        };
        let line = match editor.readline(prompt) {
            Ok(line) => line,
            Err(ReadlineError::Interrupted) => {
                buffer.clear();
                continue;
            }
            Err(ReadlineError::Eof) => break,
            Err(e) => {
                save(&mut editor, history.as_ref());
                return Err(CliError::Message(format!("cannot read input: {e}")));
            }
        };
        let Some(completed) = buffer.push_line(&line) else {
            continue;
        };
        let _ = editor.add_history_entry(completed.history);
        for command in completed.commands {
            let command = match command {
                Ok(c) => c,
                Err(message) => {
                    CliError::Message(message).report();
                    continue;
                }
            };
            let mut out = BufWriter::new(io::stdout().lock());
            match session.execute(&command, &mut out) {
                Ok(Flow::Continue) => {}
                Ok(Flow::Quit) => break 'read,
                Err(e) => {
                    drop(out);
                    e.report();
                }
            }
        }
    }
    save(&mut editor, history.as_ref());
    Ok(())
}

fn save(editor: &mut DefaultEditor, path: Option<&PathBuf>) {
    if let Some(path) = path {
        let _ = editor.save_history(path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statement_spans_lines_until_semicolon() {
        let mut b = LineBuffer::default();
        assert_eq!(b.push_line("SELECT a,"), None);
        assert!(!b.is_empty());
        assert_eq!(b.push_line("  b FROM t"), None);
        let done = b.push_line("WHERE x = ';';").unwrap();
        assert_eq!(
            done.commands,
            vec![Ok(Command::Sql(
                "SELECT a,\n  b FROM t\nWHERE x = ';'".into()
            ))]
        );
        assert_eq!(done.history, "SELECT a,\n  b FROM t\nWHERE x = ';';");
        assert!(b.is_empty());
    }

    #[test]
    fn meta_command_needs_no_semicolon_but_only_at_statement_start() {
        let mut b = LineBuffer::default();
        let done = b.push_line("  .timer on").unwrap();
        assert_eq!(done.commands, vec![Ok(Command::Timer(true))]);
        assert!(b.is_empty());
        assert_eq!(b.push_line("SELECT"), None);
        // Inside a statement a dot line is SQL text.
        assert_eq!(b.push_line(".5"), None);
        let done = b.push_line(";").unwrap();
        assert_eq!(done.commands, vec![Ok(Command::Sql("SELECT\n.5".into()))]);
    }

    #[test]
    fn several_statements_on_a_line_and_a_pending_tail() {
        let mut b = LineBuffer::default();
        let done = b.push_line("SELECT 1; SELECT 2; SELECT").unwrap();
        assert_eq!(
            done.commands,
            vec![
                Ok(Command::Sql("SELECT 1".into())),
                Ok(Command::Sql("SELECT 2".into()))
            ]
        );
        assert_eq!(done.history, "SELECT 1; SELECT 2;");
        assert!(!b.is_empty());
        let done = b.push_line("3;").unwrap();
        assert_eq!(done.commands, vec![Ok(Command::Sql("SELECT\n3".into()))]);
    }

    #[test]
    fn blank_and_comment_lines_leave_no_pending_input() {
        let mut b = LineBuffer::default();
        assert_eq!(b.push_line("   "), None);
        assert_eq!(b.push_line("-- just a comment"), None);
        assert!(b.is_empty());
        let done = b.push_line(".nope").unwrap();
        assert!(done.commands[0].as_ref().unwrap_err().contains(".nope"));
        b.push_line("SELECT 'unterminated;");
        b.clear();
        assert!(b.is_empty());
    }
}
