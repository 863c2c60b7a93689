//! What the user typed, parsed before anything runs: SQL statements split on
//! `;` and `.`-meta-commands, each with the line it starts on.

use std::path::PathBuf;

use crate::args::{Format, parse_delimiter, parse_quote, parse_size};

/// How one `.load` reads its file, on top of the session's settings
/// (`--delimiter` and friends).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Dialect {
    /// Field delimiter; `None` keeps the session's (or detection).
    pub delimiter: Option<u8>,
    /// Quote character.
    pub quote: Option<u8>,
    /// Whether the first record is a header.
    pub header: Option<bool>,
    /// A field equal to this text is NULL.
    pub null_string: Option<String>,
    /// Longest record in bytes.
    pub max_line_bytes: Option<usize>,
    /// Skip malformed records instead of failing the load.
    pub ignore_errors: Option<bool>,
    /// Timestamp layouts besides ISO 8601 (`timestampformat` first, then
    /// `dateformat`), checked when the command is parsed.
    pub timestamp_formats: Vec<String>,
}

/// `.load FILE [TABLE] [REPLACE] [(option value, …)]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Load {
    /// The file.
    pub path: PathBuf,
    /// The table name; derived from the file name when absent.
    pub table: Option<String>,
    /// Replace a table of the same name on purpose.
    pub replace: bool,
    /// Options of this load only.
    pub dialect: Dialect,
}

/// A memory limit as the user gave it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemorySize {
    /// Bytes.
    Bytes(u64),
    /// Percent of physical memory.
    Percent(u64),
}

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
    /// `.load FILE [TABLE] [REPLACE] [(…)]`: load a CSV file.
    Load(Load),
    /// `.timer on|off`: time and scan rate after each statement.
    Timer(bool),
    /// `.mode FORMAT` (or `.format`): how results are printed.
    Mode(Format),
    /// `.maxrows N`: rows the display formats show (0: all).
    MaxRows(usize),
    /// `.maxwidth N`: width the table view fits (0: the terminal's).
    MaxWidth(usize),
    /// `.read FILE`: run the statements and commands of a file.
    Read(PathBuf),
    /// `.output [FILE]`: results go to FILE from now on (none: stdout).
    Output(Option<PathBuf>),
    /// `.once FILE`: the next statement's result goes to FILE.
    Once(PathBuf),
    /// `.bail on|off`: whether a failing statement stops a script.
    Bail(bool),
    /// `.memory-limit [SIZE]`: set or show the memory limit.
    MemoryLimit(Option<MemorySize>),
    /// `.quit` or `.exit`.
    Quit,
}

/// The meta-commands, for completion.
pub const META_COMMANDS: &[&str] = &[
    ".bail",
    ".exit",
    ".format",
    ".help",
    ".load",
    ".maxrows",
    ".maxwidth",
    ".memory-limit",
    ".mode",
    ".once",
    ".output",
    ".quit",
    ".read",
    ".schema",
    ".tables",
    ".timer",
];

/// The `.help` text of the meta-commands.
pub const META_HELP: &str = "\
.help                    show this help
.tables                  list tables: rows, columns, memory; total against the limit
.schema [TABLE]          columns of a table (or all): type, encodings, memory
.load FILE [TABLE] [REPLACE] [(delim ';', quote '\"', header false, nullstr 'NA', max_line_size 64MiB, ignore_errors true, timestampformat '%d/%m/%Y %H:%M', dateformat '%d/%m/%Y')]
                         load a CSV or gzipped CSV file (quote paths with spaces);
                         REPLACE replaces a table of that name
.mode table|line|csv|json|markdown
                         how results are printed (.format is the same)
.maxrows N               rows shown by table, line and markdown (default 40, 0: all)
.maxwidth N              width of the table view (default 0: the terminal's)
.timer on|off            add the time and scan rate after each result
.read FILE               run the statements and commands in FILE
.output [FILE]           send results to FILE (no FILE: back to stdout)
.once FILE               send the next result to FILE
.bail on|off             stop a script at its first failing statement (default on)
.memory-limit [SIZE]     show or set the memory limit (4GB, 512MiB, 80%)
.quit, .exit             leave (Ctrl-D works too)

SQL statements end with ';' and may span lines; Tab completes keywords,
functions, tables, columns, commands and paths. Ctrl-C cancels a running
statement or clears the input.";

fn on_off(args: &[String], usage: &str) -> Result<bool, String> {
    match args {
        [a] if a.eq_ignore_ascii_case("on") => Ok(true),
        [a] if a.eq_ignore_ascii_case("off") => Ok(false),
        _ => Err(format!("usage: {usage}")),
    }
}

fn number(args: &[String], usage: &str) -> Result<usize, String> {
    match args {
        [a] => crate::args::parse_count(a)
            .ok()
            .and_then(|n| usize::try_from(n).ok())
            .ok_or_else(|| format!("usage: {usage} (\"{a}\" is not a whole number)")),
        _ => Err(format!("usage: {usage}")),
    }
}

/// Parses one meta-command line (starting with `.`).
///
/// # Errors
/// A message for an unknown command or wrong arguments.
pub fn parse_meta(line: &str) -> Result<Command, String> {
    let line = line.trim();
    let name_end = line.find(char::is_whitespace).unwrap_or(line.len());
    let name = &line[..name_end];
    if name.eq_ignore_ascii_case(".load") {
        return parse_load(line[name_end..].trim());
    }
    let words = split_words(line)?;
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
    let path = |usage: &str| -> Result<PathBuf, String> {
        arity(1, 1, usage)?;
        Ok(PathBuf::from(&args[0]))
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
        ".timer" => Ok(Command::Timer(on_off(args, ".timer on|off")?)),
        ".bail" => Ok(Command::Bail(on_off(args, ".bail on|off")?)),
        ".format" | ".mode" => {
            arity(1, 1, ".mode table|line|csv|json|markdown")?;
            Ok(Command::Mode(args[0].parse()?))
        }
        ".maxrows" => Ok(Command::MaxRows(number(args, ".maxrows N")?)),
        ".maxwidth" => Ok(Command::MaxWidth(number(args, ".maxwidth N")?)),
        ".read" => Ok(Command::Read(path(".read FILE")?)),
        ".once" => Ok(Command::Once(path(".once FILE")?)),
        ".output" => {
            arity(0, 1, ".output [FILE]")?;
            Ok(Command::Output(args.first().map(PathBuf::from)))
        }
        ".memory-limit" | ".memory_limit" => {
            arity(0, 1, ".memory-limit [SIZE]")?;
            match args.first() {
                None => Ok(Command::MemoryLimit(None)),
                Some(a) => Ok(Command::MemoryLimit(Some(parse_size(a)?))),
            }
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

const LOAD_USAGE: &str = "usage: .load FILE [TABLE] [REPLACE] [(delim ';', quote '\"', header false, nullstr 'NA', max_line_size 64MiB, ignore_errors true, timestampformat '%d/%m/%Y %H:%M', dateformat '%d/%m/%Y')]";

/// Parses the arguments of `.load`: words, then an optional parenthesized
/// list of `name value` options separated by commas (`=` or `=>` between
/// name and value are accepted too).
fn parse_load(rest: &str) -> Result<Command, String> {
    let (words_text, options_text) = match find_unquoted(rest, '(') {
        Some(open) => {
            let inner = rest[open + 1..].trim_end();
            let Some(inner) = inner.strip_suffix(')') else {
                return Err(format!("missing ')' after the options; {LOAD_USAGE}"));
            };
            (&rest[..open], Some(inner))
        }
        None => (rest, None),
    };
    let words = split_words(words_text)?;
    let mut words = words.into_iter();
    let Some(path) = words.next() else {
        return Err(LOAD_USAGE.into());
    };
    let mut load = Load {
        path: PathBuf::from(path),
        table: None,
        replace: false,
        dialect: Dialect::default(),
    };
    for word in words {
        if word.eq_ignore_ascii_case("replace") {
            load.replace = true;
        } else if load.table.is_none() && !load.replace {
            load.table = Some(word);
        } else {
            return Err(format!("unexpected \"{word}\"; {LOAD_USAGE}"));
        }
    }
    if let Some(options) = options_text {
        for item in split_unquoted(options, ',') {
            let item = item.trim();
            if item.is_empty() {
                continue;
            }
            let item = item.replacen("=>", " ", 1).replacen('=', " ", 1);
            let parts = split_words(&item)?;
            let [name, value] = parts.as_slice() else {
                return Err(format!(
                    "option \"{item}\" needs a name and a value; {LOAD_USAGE}"
                ));
            };
            let d = &mut load.dialect;
            match name.to_ascii_lowercase().as_str() {
                "delim" | "delimiter" | "sep" => d.delimiter = Some(parse_delimiter(value)?),
                "quote" => d.quote = Some(parse_quote(value)?),
                "header" => d.header = Some(parse_flag("header", value)?),
                "ignore_errors" => d.ignore_errors = Some(parse_flag("ignore_errors", value)?),
                "nullstr" | "null" | "null_string" => d.null_string = Some(value.clone()),
                key @ ("timestampformat" | "timestamp_format" | "dateformat" | "date_format") => {
                    katydid::types::TimestampFormat::new(value)?;
                    if key.starts_with("timestamp") {
                        d.timestamp_formats.insert(0, value.clone());
                    } else {
                        d.timestamp_formats.push(value.clone());
                    }
                }
                "max_line_size" | "max_line_bytes" => match parse_size(value)? {
                    MemorySize::Bytes(b) => {
                        d.max_line_bytes = Some(usize::try_from(b).unwrap_or(usize::MAX))
                    }
                    MemorySize::Percent(_) => {
                        return Err("max_line_size takes a size such as 64MiB".into());
                    }
                },
                other => {
                    return Err(format!(
                        "unknown .load option \"{other}\" (delim, quote, header, nullstr, max_line_size, ignore_errors, timestampformat, dateformat)"
                    ));
                }
            }
        }
    }
    Ok(Command::Load(load))
}

/// A `.load` option that is true or false.
fn parse_flag(name: &str, value: &str) -> Result<bool, String> {
    match value.to_ascii_lowercase().as_str() {
        "true" | "on" | "1" => Ok(true),
        "false" | "off" | "0" => Ok(false),
        _ => Err(format!("{name} must be true or false, not \"{value}\"")),
    }
}

/// Byte index of the first `c` outside single or double quotes.
fn find_unquoted(s: &str, c: char) -> Option<usize> {
    let mut quote = None;
    for (i, ch) in s.char_indices() {
        match quote {
            Some(q) if ch == q => quote = None,
            Some(_) => {}
            None if ch == '\'' || ch == '"' => quote = Some(ch),
            None if ch == c => return Some(i),
            None => {}
        }
    }
    None
}

/// `s` split at every `sep` outside quotes.
fn split_unquoted(s: &str, sep: char) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut rest = s;
    while let Some(i) = find_unquoted(rest, sep) {
        parts.push(&rest[..i]);
        rest = &rest[i + sep.len_utf8()..];
    }
    parts.push(rest);
    parts
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

/// A piece and the 1-based line of the script it starts on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Located<'a> {
    /// Line number of the piece's first character.
    pub line: usize,
    /// The piece.
    pub piece: Piece<'a>,
}

/// A script cut into complete pieces plus an unfinished tail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Split<'a> {
    /// Complete statements and meta-commands, in order.
    pub pieces: Vec<Located<'a>>,
    /// The text of a statement not yet ended by `;` (trimmed; empty when
    /// there is none). Blank and comment-only tails are empty.
    pub rest: &'a str,
    /// The line the unfinished tail starts on.
    pub rest_line: usize,
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
    // Line number at byte `counted`, advanced lazily.
    let (mut line, mut counted) = (1usize, 0usize);
    let mut line_at = |pos: usize| {
        line += b[counted..pos].iter().filter(|&&c| c == b'\n').count();
        counted = pos;
        line
    };
    loop {
        // Skip blanks and comments before a statement.
        i = skip_blanks_and_comments(b, i);
        if i >= b.len() {
            return Split {
                pieces,
                rest: "",
                rest_line: line_at(b.len()),
            };
        }
        let at = line_at(i);
        if b[i] == b'.' {
            let end = memchr_newline(b, i);
            pieces.push(Located {
                line: at,
                piece: Piece::Meta(text[i..end].trim()),
            });
            i = end;
            continue;
        }
        let start = i;
        match find_statement_end(b, start) {
            Some(end) => {
                let stmt = text[start..end].trim_end();
                if !stmt.is_empty() {
                    pieces.push(Located {
                        line: at,
                        piece: Piece::Sql(stmt),
                    });
                }
                i = end + 1;
            }
            None => {
                return Split {
                    pieces,
                    rest: text[start..].trim_end(),
                    rest_line: at,
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

/// Parses a whole script (stdin, `.read`, `--query`) into commands with the
/// line each starts on: complete pieces in order, then the unterminated last
/// statement, if any. A malformed meta-command is an `Err` with its message
/// at its place, so that the commands before it still run.
pub fn parse_script(text: &str) -> Vec<(usize, Result<Command, String>)> {
    let split = split_script(text);
    let mut commands = Vec::with_capacity(split.pieces.len() + 1);
    for located in split.pieces {
        let command = match located.piece {
            Piece::Sql(sql) => Ok(Command::Sql(sql.to_string())),
            Piece::Meta(line) => parse_meta(line),
        };
        commands.push((located.line, command));
    }
    if !split.rest.is_empty() {
        commands.push((split.rest_line, Ok(Command::Sql(split.rest.to_string()))));
    }
    commands
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sql(s: &str) -> Piece<'_> {
        Piece::Sql(s)
    }

    fn pieces<'a>(s: &Split<'a>) -> Vec<Piece<'a>> {
        s.pieces.iter().map(|l| l.piece).collect()
    }

    fn load(path: &str, table: Option<&str>) -> Load {
        Load {
            path: PathBuf::from(path),
            table: table.map(str::to_string),
            replace: false,
            dialect: Dialect::default(),
        }
    }

    #[test]
    fn splits_on_semicolons_outside_quotes_and_comments() {
        let s = split_script("SELECT 'a;b' FROM t; SELECT \"x;y\" FROM u -- c;d\n;");
        assert_eq!(
            pieces(&s),
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
        assert_eq!(pieces(&s), vec![sql("SELECT 'it''s; fine'")]);
        assert_eq!(s.rest, "SELECT 2");
    }

    #[test]
    fn trailing_statement_without_semicolon_is_the_rest() {
        let s = split_script("SELECT 1;\nSELECT 2\n  ");
        assert_eq!(pieces(&s), vec![sql("SELECT 1")]);
        assert_eq!(s.rest, "SELECT 2");
        assert_eq!(
            parse_script("SELECT 1;\nSELECT 2\n"),
            vec![
                (1, Ok(Command::Sql("SELECT 1".into()))),
                (2, Ok(Command::Sql("SELECT 2".into())))
            ]
        );
    }

    #[test]
    fn comments_and_blank_statements_vanish() {
        let s = split_script("-- leading; comment\n/* block; */ SELECT 1;;  ; -- tail\n");
        assert_eq!(pieces(&s), vec![sql("SELECT 1")]);
        assert_eq!(s.rest, "");
    }

    #[test]
    fn unterminated_string_keeps_the_statement_open() {
        let s = split_script("SELECT 'abc;\n");
        assert!(pieces(&s).is_empty());
        assert_eq!(s.rest, "SELECT 'abc;");
    }

    #[test]
    fn meta_commands_are_lines_at_statement_start() {
        let s = split_script(".tables\nSELECT 1;\n  .schema trips  \nSELECT\n.5;");
        assert_eq!(
            pieces(&s),
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
        assert_eq!(pieces(&s), vec![sql("SELECT 'é;ü' AS \"ñ\"")]);
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
            Ok(Command::Load(load("my dir/a b.csv", Some("t"))))
        );
        assert_eq!(
            parse_meta(".load x.csv"),
            Ok(Command::Load(load("x.csv", None)))
        );
        assert_eq!(parse_meta(".timer ON"), Ok(Command::Timer(true)));
        assert_eq!(parse_meta(".timer off"), Ok(Command::Timer(false)));
        assert_eq!(parse_meta(".bail off"), Ok(Command::Bail(false)));
        assert_eq!(parse_meta(".format json"), Ok(Command::Mode(Format::Json)));
        assert_eq!(parse_meta(".mode line"), Ok(Command::Mode(Format::Line)));
        assert_eq!(
            parse_meta(".mode markdown"),
            Ok(Command::Mode(Format::Markdown))
        );
        assert_eq!(parse_meta(".maxrows 1,000"), Ok(Command::MaxRows(1000)));
        assert_eq!(parse_meta(".maxwidth 80"), Ok(Command::MaxWidth(80)));
        assert_eq!(
            parse_meta(".read 'my script.sql'"),
            Ok(Command::Read(PathBuf::from("my script.sql")))
        );
        assert_eq!(parse_meta(".output"), Ok(Command::Output(None)));
        assert_eq!(
            parse_meta(".output out.csv"),
            Ok(Command::Output(Some(PathBuf::from("out.csv"))))
        );
        assert_eq!(
            parse_meta(".once o.txt"),
            Ok(Command::Once(PathBuf::from("o.txt")))
        );
        assert_eq!(
            parse_meta(".memory-limit 4GB"),
            Ok(Command::MemoryLimit(Some(MemorySize::Bytes(4_000_000_000))))
        );
        assert_eq!(
            parse_meta(".memory-limit 80%"),
            Ok(Command::MemoryLimit(Some(MemorySize::Percent(80))))
        );
        assert_eq!(parse_meta(".memory-limit"), Ok(Command::MemoryLimit(None)));
        assert_eq!(parse_meta(".quit"), Ok(Command::Quit));
        assert_eq!(parse_meta(".exit"), Ok(Command::Quit));
    }

    #[test]
    fn load_takes_replace_and_dialect_options() {
        let mut expected = load("a b.csv", Some("t"));
        expected.replace = true;
        expected.dialect = Dialect {
            delimiter: Some(b';'),
            quote: Some(b'\''),
            header: Some(false),
            null_string: Some("NA".into()),
            max_line_bytes: Some(1 << 20),
            ignore_errors: Some(true),
            timestamp_formats: vec!["%d/%m/%Y %H:%M".into(), "%d/%m/%Y".into()],
        };
        assert_eq!(
            parse_meta(
                ".load 'a b.csv' t REPLACE (delim ';', quote \"'\", header = false, nullstr => 'NA', max_line_size 1MiB, ignore_errors true, dateformat '%d/%m/%Y', timestampformat '%d/%m/%Y %H:%M')"
            ),
            Ok(Command::Load(expected))
        );
        assert!(
            parse_meta(".load x.csv (timestampformat '%Q')")
                .is_err_and(|e| e.contains("not a valid timestamp format"))
        );
        let Ok(Command::Load(l)) = parse_meta(".load x.tsv replace (delim '\\t')") else {
            panic!()
        };
        assert!(l.replace && l.table.is_none());
        assert_eq!(l.dialect.delimiter, Some(b'\t'));
        assert!(
            parse_meta(".load x.csv (delim ';'")
                .unwrap_err()
                .contains("missing ')'")
        );
        assert!(
            parse_meta(".load x.csv (colour red)")
                .unwrap_err()
                .contains("colour")
        );
        assert!(
            parse_meta(".load x.csv (header maybe)")
                .unwrap_err()
                .contains("maybe")
        );
        assert!(parse_meta(".load x.csv t u").unwrap_err().contains("\"u\""));
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
        assert!(
            parse_meta(".load")
                .unwrap_err()
                .starts_with("usage: .load FILE")
        );
        assert_eq!(parse_meta(".tables x"), Err("usage: .tables".into()));
        assert!(parse_meta(".load 'unterminated").is_err());
        assert!(parse_meta(".format xml").unwrap_err().contains("xml"));
        assert!(parse_meta(".maxrows lots").unwrap_err().contains("lots"));
        assert!(parse_meta(".memory-limit lots").is_err());
    }

    #[test]
    fn script_errors_stay_at_their_line() {
        let script = "SELECT 1;\n\n.bogus\nSELECT\n  2;\n.tables\nSELECT 3";
        let commands = parse_script(script);
        let lines: Vec<usize> = commands.iter().map(|(l, _)| *l).collect();
        assert_eq!(lines, vec![1, 3, 4, 6, 7]);
        assert!(commands[1].1.as_ref().unwrap_err().contains(".bogus"));
        assert_eq!(commands[3].1, Ok(Command::Tables));
    }
}
