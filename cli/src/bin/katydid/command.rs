//! What the user typed, parsed before anything runs: SQL statements split on
//! `;` and `.`-meta-commands.

use std::path::PathBuf;

use crate::args::Format;

/// One thing to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// A SQL statement, without its terminating `;`.
    Sql(String),
    /// `.help`: list the meta-commands and example queries.
    Help,
    /// `.tables`: name, rows, columns and memory of every table.
    Tables,
    /// `.schema [TABLE]`: the columns of one table, or of all.
    Schema(Option<String>),
    /// `.load FILE [TABLE]`: load a CSV file.
    Load {
        /// The file.
        path: PathBuf,
        /// The table name; derived from the file name when absent.
        table: Option<String>,
    },
    /// `.timer on|off`: print each statement's time.
    Timer(bool),
    /// `.format table|csv|json`: how results are printed.
    Format(Format),
    /// `.quit` or `.exit`.
    Quit,
}

/// The `.help` text of the meta-commands.
pub const META_HELP: &str = "\
.help                 show this help
.tables               list tables: rows, columns, memory
.schema [TABLE]       columns of a table (or all): type, encodings, memory
.load FILE [TABLE]    load a CSV or gzipped CSV file (quote paths with spaces)
.timer on|off         print each statement's elapsed time
.format table|csv|json  how query results are printed
.quit, .exit          leave (Ctrl-D works too)

SQL statements end with ';' and may span lines; Ctrl-C clears the input.";

/// Parses one meta-command line (starting with `.`).
///
/// # Errors
/// A message for an unknown command or wrong arguments.
pub fn parse_meta(line: &str) -> Result<Command, String> {
    let words = split_words(line.trim())?;
    let Some((name, args)) = words.split_first() else {
        return Err("empty command".into());
    };
    let arity = |min: usize, max: usize, usage: &str| {
        if args.len() < min || args.len() > max {
            Err(format!("usage: {usage}"))
        } else {
            Ok(())
        }
    };
    match name.to_ascii_lowercase().as_str() {
        ".help" | ".h" | ".?" => {
            arity(0, 0, ".help")?;
            Ok(Command::Help)
        }
        ".tables" => {
            arity(0, 0, ".tables")?;
            Ok(Command::Tables)
        }
        ".schema" => {
            arity(0, 1, ".schema [TABLE]")?;
            Ok(Command::Schema(args.first().cloned()))
        }
        ".load" => {
            arity(1, 2, ".load FILE [TABLE]")?;
            Ok(Command::Load {
                path: PathBuf::from(&args[0]),
                table: args.get(1).cloned(),
            })
        }
        ".timer" => {
            arity(1, 1, ".timer on|off")?;
            match args[0].to_ascii_lowercase().as_str() {
                "on" => Ok(Command::Timer(true)),
                "off" => Ok(Command::Timer(false)),
                _ => Err("usage: .timer on|off".into()),
            }
        }
        ".format" | ".mode" => {
            arity(1, 1, ".format table|csv|json")?;
            Ok(Command::Format(args[0].parse()?))
        }
        ".quit" | ".exit" | ".q" => {
            arity(0, 0, ".quit")?;
            Ok(Command::Quit)
        }
        _ => Err(format!(
            "unknown command \"{name}\" (type .help for the list)"
        )),
    }
}

/// Splits a meta-command line into words; single or double quotes group a
/// word with spaces (no escapes inside quotes).
fn split_words(line: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut chars = line.chars().peekable();
    while let Some(&c) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
            continue;
        }
        let mut word = String::new();
        while let Some(&c) = chars.peek() {
            if c.is_whitespace() {
                break;
            }
            chars.next();
            if c == '\'' || c == '"' {
                loop {
                    match chars.next() {
                        Some(q) if q == c => break,
                        Some(other) => word.push(other),
                        None => return Err(format!("unterminated {c} quote")),
                    }
                }
            } else {
                word.push(c);
            }
        }
        words.push(word);
    }
    Ok(words)
}

/// One piece of a script, as [`split_script`] finds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Piece<'a> {
    /// A SQL statement: leading blanks and comments and the `;` removed,
    /// trailing blanks trimmed.
    Sql(&'a str),
    /// A meta-command line, trimmed.
    Meta(&'a str),
}

/// A script cut into complete pieces plus an unfinished tail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Split<'a> {
    /// Complete statements and meta-commands, in order.
    pub pieces: Vec<Piece<'a>>,
    /// The text of a statement not yet ended by `;` (trimmed; empty when
    /// there is none). Blank and comment-only tails are empty.
    pub rest: &'a str,
}

/// Splits `text` into `;`-terminated SQL statements and meta-command lines.
///
/// A `;` ends a statement unless it is inside a single-quoted string (where
/// `''` is a quote), a double-quoted identifier, a `--` comment (to the end of
/// the line) or a `/* */` comment. A line whose first non-blank character is
/// `.`, met where a statement would start, is a meta-command ending at the
/// end of its line. Leading comments of a statement are dropped;
/// comment-only statements vanish.
pub fn split_script(text: &str) -> Split<'_> {
    let b = text.as_bytes();
    let mut pieces = Vec::new();
    let mut i = 0;
    loop {
        // Skip blanks and comments before a statement.
        i = skip_blanks_and_comments(b, i);
        if i >= b.len() {
            return Split { pieces, rest: "" };
        }
        if b[i] == b'.' {
            let end = memchr_newline(b, i);
            pieces.push(Piece::Meta(text[i..end].trim()));
            i = end;
            continue;
        }
        let start = i;
        match find_statement_end(b, start) {
            Some(end) => {
                let stmt = text[start..end].trim_end();
                if !stmt.is_empty() {
                    pieces.push(Piece::Sql(stmt));
                }
                i = end + 1;
            }
            None => {
                return Split {
                    pieces,
                    rest: text[start..].trim_end(),
                };
            }
        }
    }
}

fn memchr_newline(b: &[u8], from: usize) -> usize {
    b[from..]
        .iter()
        .position(|&c| c == b'\n')
        .map_or(b.len(), |p| from + p)
}

/// Index of the first byte at or after `i` that is neither blank nor inside
/// a comment; an unterminated block comment runs to the end.
fn skip_blanks_and_comments(b: &[u8], mut i: usize) -> usize {
    loop {
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        if b[i..].starts_with(b"--") {
            i = memchr_newline(b, i);
        } else if b[i..].starts_with(b"/*") {
            i = find_sub(b, i + 2, b"*/").map_or(b.len(), |p| p + 2);
        } else {
            return i;
        }
    }
}

fn find_sub(b: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    b[from..]
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|p| from + p)
}

/// Byte index of the `;` ending the statement that starts at `i`, if any.
fn find_statement_end(b: &[u8], mut i: usize) -> Option<usize> {
    while i < b.len() {
        match b[i] {
            b';' => return Some(i),
            q @ (b'\'' | b'"') => {
                // A doubled quote inside is an escaped quote: the loop closes
                // and reopens the string, which is equivalent.
                i = b[i + 1..].iter().position(|&c| c == q)? + i + 2;
            }
            b'-' if b[i..].starts_with(b"--") => i = memchr_newline(b, i),
            b'/' if b[i..].starts_with(b"/*") => i = find_sub(b, i + 2, b"*/")? + 2,
            _ => i += 1,
        }
    }
    None
}

/// Parses a whole script (stdin) into commands: complete pieces in order,
/// then the unterminated last statement, if any.
///
/// # Errors
/// The message of the first malformed meta-command, with its line.
pub fn parse_script(text: &str) -> Result<Vec<Command>, String> {
    let split = split_script(text);
    let mut commands = Vec::with_capacity(split.pieces.len() + 1);
    for piece in split.pieces {
        match piece {
            Piece::Sql(sql) => commands.push(Command::Sql(sql.to_string())),
            Piece::Meta(line) => {
                commands.push(parse_meta(line).map_err(|e| format!("{line}: {e}"))?)
            }
        }
    }
    if !split.rest.is_empty() {
        commands.push(Command::Sql(split.rest.to_string()));
    }
    Ok(commands)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sql(s: &str) -> Piece<'_> {
        Piece::Sql(s)
    }

    #[test]
    fn splits_on_semicolons_outside_quotes_and_comments() {
        let s = split_script("SELECT 'a;b' FROM t; SELECT \"x;y\" FROM u -- c;d\n;");
        assert_eq!(
            s.pieces,
            vec![
                sql("SELECT 'a;b' FROM t"),
                sql("SELECT \"x;y\" FROM u -- c;d")
            ]
        );
        assert_eq!(s.rest, "");
    }

    #[test]
    fn doubled_quotes_stay_inside_the_string() {
        let s = split_script("SELECT 'it''s; fine'; SELECT 2");
        assert_eq!(s.pieces, vec![sql("SELECT 'it''s; fine'")]);
        assert_eq!(s.rest, "SELECT 2");
    }

    #[test]
    fn trailing_statement_without_semicolon_is_the_rest() {
        let s = split_script("SELECT 1;\nSELECT 2\n  ");
        assert_eq!(s.pieces, vec![sql("SELECT 1")]);
        assert_eq!(s.rest, "SELECT 2");
        assert_eq!(
            parse_script("SELECT 1;\nSELECT 2\n").unwrap(),
            vec![
                Command::Sql("SELECT 1".into()),
                Command::Sql("SELECT 2".into())
            ]
        );
    }

    #[test]
    fn comments_and_blank_statements_vanish() {
        let s = split_script("-- leading; comment\n/* block; */ SELECT 1;;  ; -- tail\n");
        assert_eq!(s.pieces, vec![sql("SELECT 1")]);
        assert_eq!(s.rest, "");
    }

    #[test]
    fn unterminated_string_keeps_the_statement_open() {
        let s = split_script("SELECT 'abc;\n");
        assert!(s.pieces.is_empty());
        assert_eq!(s.rest, "SELECT 'abc;");
    }

    #[test]
    fn meta_commands_are_lines_at_statement_start() {
        let s = split_script(".tables\nSELECT 1;\n  .schema trips  \nSELECT\n.5;");
        assert_eq!(
            s.pieces,
            vec![
                Piece::Meta(".tables"),
                sql("SELECT 1"),
                Piece::Meta(".schema trips"),
                sql("SELECT\n.5"),
            ]
        );
    }

    #[test]
    fn multibyte_text_splits_on_char_boundaries() {
        let s = split_script("SELECT 'é;ü' AS \"ñ\"; SELECT 'ß'");
        assert_eq!(s.pieces, vec![sql("SELECT 'é;ü' AS \"ñ\"")]);
        assert_eq!(s.rest, "SELECT 'ß'");
    }

    #[test]
    fn parses_meta_commands() {
        assert_eq!(parse_meta(".help"), Ok(Command::Help));
        assert_eq!(parse_meta(".TABLES"), Ok(Command::Tables));
        assert_eq!(parse_meta(".schema"), Ok(Command::Schema(None)));
        assert_eq!(
            parse_meta(".schema trips"),
            Ok(Command::Schema(Some("trips".into())))
        );
        assert_eq!(
            parse_meta(".load 'my dir/a b.csv' t"),
            Ok(Command::Load {
                path: PathBuf::from("my dir/a b.csv"),
                table: Some("t".into())
            })
        );
        assert_eq!(
            parse_meta(".load x.csv"),
            Ok(Command::Load {
                path: PathBuf::from("x.csv"),
                table: None
            })
        );
        assert_eq!(parse_meta(".timer ON"), Ok(Command::Timer(true)));
        assert_eq!(parse_meta(".timer off"), Ok(Command::Timer(false)));
        assert_eq!(
            parse_meta(".format json"),
            Ok(Command::Format(Format::Json))
        );
        assert_eq!(parse_meta(".quit"), Ok(Command::Quit));
        assert_eq!(parse_meta(".exit"), Ok(Command::Quit));
    }

    #[test]
    fn rejects_bad_meta_commands() {
        let e = parse_meta(".frobnicate now").unwrap_err();
        assert!(e.contains("unknown command \".frobnicate\""), "{e}");
        assert_eq!(parse_meta(".timer"), Err("usage: .timer on|off".into()));
        assert_eq!(
            parse_meta(".timer maybe"),
            Err("usage: .timer on|off".into())
        );
        assert_eq!(parse_meta(".load"), Err("usage: .load FILE [TABLE]".into()));
        assert_eq!(parse_meta(".tables x"), Err("usage: .tables".into()));
        assert!(parse_meta(".load 'unterminated").is_err());
        assert!(parse_meta(".format xml").unwrap_err().contains("xml"));
        let e = parse_script("SELECT 1;\n.bogus\n").unwrap_err();
        assert!(e.starts_with(".bogus: unknown command"), "{e}");
    }
}
