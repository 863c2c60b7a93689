//! The REPL's rustyline [`Helper`]: Tab completion, keyword highlighting,
//! history hints and multi-line entry until `;`.
//!
//! Completion works on the text of the statement being typed (all its
//! lines): SQL keywords, function names, table names (after `FROM`), the
//! columns of the tables the statement names (of every table when it names
//! none), meta-commands, and file paths after `.load`/`.read`/`.output`/
//! `.once` and inside a quoted string after `FROM` (rustyline's
//! [`FilenameCompleter`]). The table and column names come from the
//! [`katydid::Database`] through [`Names::of`], refreshed after each command.

use std::borrow::Cow;

use katydid::Database;
use rustyline::completion::{Completer, FilenameCompleter, Pair};
use rustyline::highlight::Highlighter;
use rustyline::hint::{Hinter, HistoryHinter};
use rustyline::validate::Validator;
use rustyline::{Context, Helper};

use crate::command::{META_COMMANDS, split_script};

/// SQL keywords katydid's dialect uses, upper case.
pub const KEYWORDS: &[&str] = &[
    "ALL",
    "ANALYZE",
    "AND",
    "ANY",
    "AS",
    "ASC",
    "BETWEEN",
    "BY",
    "CASE",
    "CAST",
    "COPY",
    "CREATE",
    "CROSS",
    "CURRENT",
    "DATE",
    "DESC",
    "DESCRIBE",
    "DISTINCT",
    "DROP",
    "ELSE",
    "END",
    "EXCEPT",
    "EXCLUDE",
    "EXISTS",
    "EXPLAIN",
    "EXTRACT",
    "FALSE",
    "FILTER",
    "FIRST",
    "FOLLOWING",
    "FROM",
    "FULL",
    "GROUP",
    "HAVING",
    "IF",
    "ILIKE",
    "IN",
    "INNER",
    "INTERSECT",
    "INTERVAL",
    "IS",
    "JOIN",
    "LAST",
    "LEFT",
    "LIKE",
    "LIMIT",
    "NOT",
    "NULL",
    "NULLS",
    "OFFSET",
    "ON",
    "OR",
    "ORDER",
    "OUTER",
    "OVER",
    "PARTITION",
    "PRECEDING",
    "QUALIFY",
    "RANGE",
    "REPLACE",
    "RIGHT",
    "ROW",
    "ROWS",
    "SELECT",
    "SHOW",
    "SOME",
    "SUMMARIZE",
    "TABLE",
    "TABLES",
    "THEN",
    "TIMESTAMP",
    "TO",
    "TRUE",
    "TRY_CAST",
    "UNBOUNDED",
    "UNION",
    "USING",
    "VALUES",
    "WHEN",
    "WHERE",
    "WINDOW",
    "WITH",
    "WITHIN",
];

/// Functions completion offers: every one the binder takes, and the
/// table function `read_csv`.
fn functions() -> impl Iterator<Item = &'static str> {
    katydid::FUNCTION_NAMES.iter().copied().chain(["read_csv"])
}

/// Meta-commands whose argument is a file path.
const PATH_COMMANDS: &[&str] = &[".load", ".read", ".output", ".once"];

/// Table and column names, as completion needs them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Names {
    /// Each table with its column names, in table order.
    pub tables: Vec<(String, Vec<String>)>,
}

impl Names {
    /// The names in `db` now.
    pub fn of(db: &Database) -> Names {
        let tables = db
            .table_names()
            .into_iter()
            .filter_map(|name| {
                let info = db.table_info(&name).ok()?;
                Some((name, info.columns.into_iter().map(|c| c.name).collect()))
            })
            .collect();
        Names { tables }
    }
}

/// The REPL's helper (see the module docs).
pub struct SqlHelper {
    /// What completion offers as tables and columns.
    pub names: Names,
    /// The lines of the statement entered so far, before the one being
    /// typed (empty at the main prompt).
    pub pending: String,
    files: FilenameCompleter,
    history_hints: HistoryHinter,
}

impl SqlHelper {
    /// A helper knowing `names`.
    pub fn new(names: Names) -> SqlHelper {
        SqlHelper {
            names,
            pending: String::new(),
            files: FilenameCompleter::new(),
            history_hints: HistoryHinter::new(),
        }
    }

    /// Completions of the word before byte `pos` of `line` (the whole input
    /// so far): the byte where the replaced word starts and the candidates.
    pub fn candidates(&self, line: &str, pos: usize) -> (usize, Vec<String>) {
        let before = &line[..pos];
        // The statement the cursor is in: from the last `;` before it.
        let stmt_start = statement_start(before);
        let stmt = &before[stmt_start..];
        let trimmed = stmt.trim_start();
        if trimmed.starts_with('.') {
            return self.complete_meta(line, pos, stmt_start + (stmt.len() - trimmed.len()));
        }
        if let Some(quote) = open_quote(stmt) {
            // Inside a string: a path after FROM (`FROM 'data/tr`) or as the
            // first argument of read_csv.
            let prior = previous_word(&stmt[..quote]);
            if prior.eq_ignore_ascii_case("from")
                || prior.eq_ignore_ascii_case("join")
                || prior.eq_ignore_ascii_case("read_csv(")
            {
                return self.complete_path(line, pos);
            }
            return (pos, Vec::new());
        }
        let start = word_start(before);
        let prefix = &before[start..];
        let prior = previous_word(&before[..start]);
        let lower = !prefix.is_empty() && !prefix.chars().any(|c| c.is_ascii_uppercase());
        let matches =
            |c: &str| c.len() >= prefix.len() && c[..prefix.len()].eq_ignore_ascii_case(prefix);
        let mut out: Vec<String> = Vec::new();
        let push = |c: String, out: &mut Vec<String>| {
            if matches(&c) && !out.contains(&c) {
                out.push(c);
            }
        };
        let table_position = ["from", "join", "describe", "summarize", "table"]
            .iter()
            .any(|k| prior.eq_ignore_ascii_case(k));
        if table_position {
            for (t, _) in &self.names.tables {
                push(t.clone(), &mut out);
            }
            return (start, out);
        }
        // Columns of the tables the statement names anywhere (also after
        // the cursor), else of every table.
        let full_stmt_end = line[pos..].find(';').map_or(line.len(), |i| pos + i);
        let whole = &line[stmt_start..full_stmt_end];
        let named: Vec<&(String, Vec<String>)> = self
            .names
            .tables
            .iter()
            .filter(|(t, _)| words(whole).any(|w| w.eq_ignore_ascii_case(t)))
            .collect();
        let sources: Vec<&(String, Vec<String>)> = if named.is_empty() {
            self.names.tables.iter().collect()
        } else {
            named
        };
        for (_, columns) in sources {
            for c in columns {
                push(c.clone(), &mut out);
            }
        }
        for f in functions() {
            push(format!("{f}("), &mut out);
        }
        for k in KEYWORDS {
            push(
                if lower {
                    k.to_ascii_lowercase()
                } else {
                    k.to_string()
                },
                &mut out,
            );
        }
        for (t, _) in &self.names.tables {
            push(t.clone(), &mut out);
        }
        (start, out)
    }

    fn complete_meta(&self, line: &str, pos: usize, cmd_start: usize) -> (usize, Vec<String>) {
        let before = &line[cmd_start..pos];
        let Some(space) = before.find(char::is_whitespace) else {
            let out = META_COMMANDS
                .iter()
                .filter(|c| c.starts_with(&before.to_ascii_lowercase()))
                .map(|c| c.to_string())
                .collect();
            return (cmd_start, out);
        };
        let command = before[..space].to_ascii_lowercase();
        let args = &before[space..];
        let start = word_start(before) + cmd_start;
        let prefix = &line[start..pos];
        let pick = |options: &[&str]| -> Vec<String> {
            options
                .iter()
                .filter(|o| o.starts_with(&prefix.to_ascii_lowercase()))
                .map(|o| o.to_string())
                .collect()
        };
        match command.as_str() {
            c if PATH_COMMANDS.contains(&c) => {
                // The first argument is the path; `.load FILE TABLE`'s
                // second is a new name.
                if args.trim_start().contains(char::is_whitespace) && open_quote(args).is_none() {
                    return (pos, Vec::new());
                }
                self.complete_path(line, pos)
            }
            ".schema" => {
                let out = self
                    .names
                    .tables
                    .iter()
                    .filter(|(t, _)| {
                        t.to_ascii_lowercase()
                            .starts_with(&prefix.to_ascii_lowercase())
                    })
                    .map(|(t, _)| t.clone())
                    .collect();
                (start, out)
            }
            ".mode" | ".format" => (start, pick(&["csv", "json", "line", "markdown", "table"])),
            ".timer" | ".bail" => (start, pick(&["off", "on"])),
            _ => (pos, Vec::new()),
        }
    }

    fn complete_path(&self, line: &str, pos: usize) -> (usize, Vec<String>) {
        match self.files.complete_path(line, pos) {
            Ok((start, pairs)) => (start, pairs.into_iter().map(|p| p.replacement).collect()),
            Err(_) => (pos, Vec::new()),
        }
    }
}

/// Byte index where the statement holding the end of `text` starts: after
/// the last `;` outside strings and comments.
fn statement_start(text: &str) -> usize {
    let split = split_script(text);
    if split.rest.is_empty() {
        // Nothing pending: the cursor starts a new statement (or sits in a
        // meta-command line, which split_script keeps as a piece).
        match split.pieces.last() {
            Some(last) => {
                let piece = match last.piece {
                    crate::command::Piece::Sql(s) | crate::command::Piece::Meta(s) => s,
                };
                let at = piece.as_ptr() as usize - text.as_ptr() as usize;
                // A piece ending at the cursor is still being typed.
                if at + piece.len() == text.trim_end().len() && !text.ends_with(';') {
                    at
                } else {
                    text.len()
                }
            }
            None => 0,
        }
    } else {
        split.rest.as_ptr() as usize - text.as_ptr() as usize
    }
}

/// Byte index of the opening quote when `stmt` ends inside a single-quoted
/// string.
fn open_quote(stmt: &str) -> Option<usize> {
    let mut open = None;
    for (i, c) in stmt.char_indices() {
        if c == '\'' {
            open = if open.is_some() { None } else { Some(i) };
        }
    }
    open
}

/// Start of the identifier that ends at the end of `text`.
fn word_start(text: &str) -> usize {
    text.char_indices()
        .rev()
        .take_while(|(_, c)| c.is_alphanumeric() || *c == '_' || *c == '.')
        .last()
        .map_or(text.len(), |(i, _)| i)
}

/// The last word of `text` before trailing blanks; a `(` directly after
/// it is kept (`read_csv(`).
fn previous_word(text: &str) -> &str {
    let t = text.trim_end();
    let end = t.len();
    let body = t.strip_suffix('(').unwrap_or(t);
    let start = body
        .char_indices()
        .rev()
        .take_while(|(_, c)| c.is_alphanumeric() || *c == '_')
        .last()
        .map_or(body.len(), |(i, _)| i);
    &t[start..end]
}

/// The identifier-like words of `text`.
fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
}

impl Completer for SqlHelper {
    type Candidate = Pair;

    fn complete(
        &self,
        line: &str,
        pos: usize,
        _ctx: &Context<'_>,
    ) -> rustyline::Result<(usize, Vec<Pair>)> {
        // Complete within the whole statement: the lines already entered
        // name its tables.
        let head = if self.pending.is_empty() {
            String::new()
        } else {
            format!("{}\n", self.pending)
        };
        let text = format!("{head}{line}");
        let (start, candidates) = self.candidates(&text, head.len() + pos);
        let start = start.saturating_sub(head.len());
        Ok((
            start,
            candidates
                .into_iter()
                .map(|c| Pair {
                    display: c.clone(),
                    replacement: c,
                })
                .collect(),
        ))
    }
}

/// Fish-style hints: the rest of the latest history entry that starts with
/// what was typed, shown dimmed after the cursor (→ or End accepts it).
impl Hinter for SqlHelper {
    type Hint = String;

    fn hint(&self, line: &str, pos: usize, ctx: &Context<'_>) -> Option<String> {
        // Only on one-line input: a hint in the middle of a multi-line
        // statement would be the tail of an unrelated entry.
        if line.contains('\n') {
            return None;
        }
        self.history_hints.hint(line, pos, ctx)
    }
}

/// ANSI bold green, as DuckDB's shell shows keywords.
const KEYWORD_STYLE: &str = "\x1b[1;32m";
/// ANSI yellow for string literals.
const STRING_STYLE: &str = "\x1b[33m";
/// ANSI dim for history hints.
const HINT_STYLE: &str = "\x1b[2m";
const RESET: &str = "\x1b[0m";

/// `line` with SQL keywords and string literals coloured (ANSI codes only:
/// the display width is unchanged). Meta-command lines are left as they
/// are.
pub fn highlight_sql(line: &str) -> Cow<'_, str> {
    if line.trim_start().starts_with('.') {
        return Cow::Borrowed(line);
    }
    let mut out = String::with_capacity(line.len() + 16);
    let mut changed = false;
    let mut chars = line.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c == '\'' {
            let mut end = line.len();
            for (j, d) in chars.by_ref() {
                if d == '\'' {
                    end = j + 1;
                    break;
                }
            }
            out.push_str(STRING_STYLE);
            out.push_str(&line[i..end]);
            out.push_str(RESET);
            changed = true;
        } else if c == '-' && line[i..].starts_with("--") {
            let end = line[i..].find('\n').map_or(line.len(), |n| i + n);
            out.push_str(&line[i..end]);
            while chars.peek().is_some_and(|(j, _)| *j < end) {
                chars.next();
            }
        } else if c.is_alphabetic() || c == '_' {
            let mut end = line.len();
            while let Some(&(j, d)) = chars.peek() {
                if d.is_alphanumeric() || d == '_' {
                    chars.next();
                } else {
                    end = j;
                    break;
                }
            }
            let word = &line[i..end];
            if KEYWORDS.iter().any(|k| k.eq_ignore_ascii_case(word)) {
                out.push_str(KEYWORD_STYLE);
                out.push_str(word);
                out.push_str(RESET);
                changed = true;
            } else {
                out.push_str(word);
            }
        } else {
            out.push(c);
        }
    }
    if changed {
        Cow::Owned(out)
    } else {
        Cow::Borrowed(line)
    }
}

impl Highlighter for SqlHelper {
    fn highlight<'l>(&self, line: &'l str, _pos: usize) -> Cow<'l, str> {
        highlight_sql(line)
    }

    fn highlight_hint<'h>(&self, hint: &'h str) -> Cow<'h, str> {
        Cow::Owned(format!("{HINT_STYLE}{hint}{RESET}"))
    }

    fn highlight_char(&self, _line: &str, _pos: usize, _forced: bool) -> bool {
        true
    }
}

/// True when `text` is ready to run: a meta-command line, or statements
/// that all end with `;` (blank and comment-only text too).
pub fn is_complete(text: &str) -> bool {
    split_script(text).rest.is_empty()
}

/// Every line is accepted as typed: the REPL gathers the lines of an
/// unfinished statement itself, under a continuation prompt.
impl Validator for SqlHelper {}

impl Helper for SqlHelper {}

#[cfg(test)]
mod tests {
    use super::*;

    fn helper() -> SqlHelper {
        SqlHelper::new(Names {
            tables: vec![
                (
                    "trips".into(),
                    vec![
                        "cab_type".into(),
                        "passenger_count".into(),
                        "pickup_datetime".into(),
                    ],
                ),
                ("zones".into(), vec!["zone_id".into(), "borough".into()]),
            ],
        })
    }

    fn complete(line: &str) -> (usize, Vec<String>) {
        helper().candidates(line, line.len())
    }

    #[test]
    fn keywords_follow_the_case_typed() {
        let (start, c) = complete("SEL");
        assert_eq!((start, c), (0, vec!["SELECT".to_string()]));
        assert_eq!(complete("sel").1, vec!["select"]);
        // "gr" alone also offers greatest(, "grou" group_concat(.
        assert_eq!(complete("SELECT 1 grou").1, vec!["group_concat(", "group"]);
        assert_eq!(complete("SELECT 1 GROU").1, vec!["group_concat(", "GROUP"]);
        assert_eq!(
            complete("SELECT 1 gr").1,
            vec!["greatest(", "group_concat(", "group"]
        );
    }

    #[test]
    fn tables_after_from_and_columns_of_named_tables() {
        assert_eq!(
            complete("SELECT * FROM tr"),
            (14, vec!["trips".to_string()])
        );
        assert_eq!(complete("SELECT * FROM ").1, vec!["trips", "zones"]);
        // Columns of the table named later in the statement only.
        let line = "SELECT pas FROM trips";
        assert_eq!(
            helper().candidates(line, 10),
            (7, vec!["passenger_count".to_string()])
        );
        let line = "SELECT b FROM trips";
        assert!(
            helper()
                .candidates(line, 8)
                .1
                .iter()
                .all(|c| c != "borough")
        );
        // No table named: every table's columns.
        assert_eq!(complete("SELECT bor").1, vec!["borough"]);
        // Functions come with their parenthesis.
        assert!(
            complete("SELECT approx")
                .1
                .contains(&"approx_count_distinct(".to_string())
        );
    }

    #[test]
    fn statements_on_earlier_lines_do_not_count() {
        let line = "SELECT 1 FROM zones;\nSELECT bor";
        assert_eq!(complete(line).1, vec!["borough"]);
        let line = "SELECT 1 FROM trips;\nSELECT cab FROM zones";
        assert!(helper().candidates(line, line.len() - 11).1.is_empty());
    }

    #[test]
    fn meta_commands_and_their_arguments() {
        assert_eq!(complete(".ta"), (0, vec![".tables".to_string()]));
        assert_eq!(
            complete(".m").1,
            vec![".maxrows", ".maxwidth", ".memory-limit", ".mode"]
        );
        assert_eq!(complete(".schema z"), (8, vec!["zones".to_string()]));
        assert_eq!(complete(".mode l"), (6, vec!["line".to_string()]));
        assert_eq!(complete(".timer o").1, vec!["off", "on"]);
    }

    #[test]
    fn paths_after_load_and_inside_quotes_after_from() {
        let dir = std::env::temp_dir().join(format!("katydid-complete-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("rides_2013.csv"), "a\n1\n").unwrap();
        let d = dir.display();
        let (_, c) = complete(&format!(".load {d}/rides_"));
        assert_eq!(c, vec![format!("{d}/rides_2013.csv")]);
        let (_, c) = complete(&format!("SELECT * FROM '{d}/rid"));
        assert_eq!(c, vec![format!("{d}/rides_2013.csv")]);
        // A string elsewhere completes nothing.
        assert!(complete(&format!("SELECT '{d}/rid")).1.is_empty());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn highlighting_colours_keywords_and_strings_only() {
        let h = highlight_sql("select x from t where s = 'from'");
        assert_eq!(
            h,
            format!(
                "{k}select{r} x {k}from{r} t {k}where{r} s = {s}'from'{r}",
                k = KEYWORD_STYLE,
                r = RESET,
                s = STRING_STYLE
            )
        );
        assert_eq!(highlight_sql("x -- select"), "x -- select");
        assert_eq!(highlight_sql(".load select.csv"), ".load select.csv");
    }

    #[test]
    fn input_is_complete_at_a_semicolon_or_a_meta_command() {
        assert!(!is_complete("SELECT 1"));
        assert!(!is_complete("SELECT ';"));
        assert!(is_complete("SELECT 1;"));
        assert!(!is_complete("SELECT 1; SELECT"));
        assert!(is_complete(".tables"));
        assert!(is_complete("-- only a comment"));
        assert!(is_complete(""));
    }
}
