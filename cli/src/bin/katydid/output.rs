//! Rendering of results, statistics and errors: aligned tables, CSV, JSON,
//! thousands separators, sizes, durations and the caret under a query error.

use std::io::{self, Write};
use std::time::Duration;

use katydid::{DataType, QueryResult, Value};
use unicode_width::UnicodeWidthStr;

/// Horizontal alignment of a table column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    /// Text: padded on the right.
    Left,
    /// Numbers: padded on the left.
    Right,
}

/// `n` with `,` between groups of three digits: `1234567` → `1,234,567`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A byte count in decimal units: `512 B`, `1.2 KB`, `11.3 MB`, `4.1 GB`
/// (1 KB = 1,000 bytes).
pub fn bytes(n: u64) -> String {
    const UNITS: [&str; 4] = ["KB", "MB", "GB", "TB"];
    if n < 1000 {
        return format!("{n} B");
    }
    let mut v = n as f64 / 1000.0;
    let mut unit = 0;
    while v >= 999.95 && unit + 1 < UNITS.len() {
        v /= 1000.0;
        unit += 1;
    }
    format!("{v:.1} {}", UNITS[unit])
}

/// A duration with three decimals: `12.345 ms` under a second, `1.234 s`
/// from there on.
pub fn duration(d: Duration) -> String {
    let secs = d.as_secs_f64();
    if secs < 1.0 {
        format!("{:.3} ms", secs * 1e3)
    } else {
        format!("{secs:.3} s")
    }
}

/// A duration with one decimal (`41.2 ms`, `2.3 s`), for load reports.
pub fn duration_short(d: Duration) -> String {
    let secs = d.as_secs_f64();
    if secs < 1.0 {
        format!("{:.1} ms", secs * 1e3)
    } else {
        format!("{secs:.1} s")
    }
}

/// `count / elapsed` rounded down, or `count` when no time passed (a count
/// done in under a clock tick is reported as if it took one second, never as
/// infinity).
pub fn per_second(count: u64, elapsed: Duration) -> u64 {
    let secs = elapsed.as_secs_f64();
    if secs > 0.0 {
        (count as f64 / secs) as u64
    } else {
        count
    }
}

/// `n` with thousands separators and `noun`, plural unless `n` is 1:
/// `count(1, "row")` is `1 row`, `count(1500, "row")` is `1,500 rows`.
pub fn count(n: usize, noun: &str) -> String {
    let s = if n == 1 { "" } else { "s" };
    format!("{} {noun}{s}", thousands(n as u64))
}

/// The text of one cell in table mode: NULL as `NULL`, control characters
/// escaped (`\n`, `\t`, `\r`, `\u{1b}`) so that a row stays on one line.
pub fn cell_text(v: &Value) -> String {
    let s = v.to_string();
    if !s.chars().any(char::is_control) {
        return s;
    }
    let mut out = String::with_capacity(s.len() + 4);
    for c in s.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => out.push_str(&c.escape_unicode().to_string()),
            c => out.push(c),
        }
    }
    out
}

/// Writes an aligned text table: header, a separator line, then the rows.
/// Columns are separated by ` | `; widths are display widths (East Asian
/// wide characters count two).
///
/// `rows[i].len()` must equal `headers.len()` and `aligns.len()`.
pub fn write_grid(
    out: &mut dyn Write,
    headers: &[String],
    aligns: &[Align],
    rows: &[Vec<String>],
) -> io::Result<()> {
    let mut widths: Vec<usize> = headers.iter().map(|h| h.width()).collect();
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.width());
        }
    }
    write_line(out, headers, aligns, &widths)?;
    let sep: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
    writeln!(out, "{}", sep.join("-+-"))?;
    for row in rows {
        write_line(out, row, aligns, &widths)?;
    }
    Ok(())
}

fn write_line(
    out: &mut dyn Write,
    cells: &[String],
    aligns: &[Align],
    widths: &[usize],
) -> io::Result<()> {
    let mut line = String::new();
    let last = cells.len().saturating_sub(1);
    for (i, cell) in cells.iter().enumerate() {
        if i > 0 {
            line.push_str(" | ");
        }
        let pad = widths[i].saturating_sub(cell.width());
        match aligns[i] {
            Align::Right => {
                line.extend(std::iter::repeat_n(' ', pad));
                line.push_str(cell);
            }
            Align::Left => {
                line.push_str(cell);
                // No trailing blanks after the last column.
                if i != last {
                    line.extend(std::iter::repeat_n(' ', pad));
                }
            }
        }
    }
    writeln!(out, "{line}")
}

/// Alignment for a result column of type `t`: numbers right, the rest left.
pub fn align_for(t: DataType) -> Align {
    if t.is_numeric() {
        Align::Right
    } else {
        Align::Left
    }
}

/// Writes `result` as an aligned table followed by a footer line such as
/// `3 rows in 1.234 ms (8,104,327 rows/s scanned)`.
///
/// With `max_rows = Some(n)` and more than `n` rows, only the first `n` are
/// shown, followed by `… (N more rows)`.
pub fn write_table(
    out: &mut dyn Write,
    result: &QueryResult,
    max_rows: Option<usize>,
) -> io::Result<()> {
    let shown = max_rows.map_or(result.rows.len(), |m| m.min(result.rows.len()));
    let aligns: Vec<Align> = (0..result.columns.len())
        .map(|i| result.types.get(i).map_or(Align::Left, |t| align_for(*t)))
        .collect();
    let cells: Vec<Vec<String>> = result.rows[..shown]
        .iter()
        .map(|row| row.iter().map(cell_text).collect())
        .collect();
    write_grid(out, &result.columns, &aligns, &cells)?;
    if shown < result.rows.len() {
        let more = result.rows.len() - shown;
        writeln!(out, "… ({})", count(more, "more row"))?;
    }
    write_footer(out, result)
}

/// Writes the footer line of table mode.
pub fn write_footer(out: &mut dyn Write, result: &QueryResult) -> io::Result<()> {
    writeln!(
        out,
        "{} in {} ({} rows/s scanned)",
        count(result.rows.len(), "row"),
        duration(result.elapsed),
        thousands(per_second(result.rows_scanned as u64, result.elapsed))
    )
}

/// Writes the rows of an `EXPLAIN` result as plain lines (the plan text),
/// then the footer.
pub fn write_plan(out: &mut dyn Write, result: &QueryResult) -> io::Result<()> {
    for row in &result.rows {
        let line: Vec<String> = row.iter().map(|v| v.to_string()).collect();
        writeln!(out, "{}", line.join(" "))?;
    }
    writeln!(out, "plan in {}", duration(result.elapsed))
}

/// Writes `result` as CSV with a header row, quoted as RFC 4180 says (fields
/// holding a comma, quote or line break are quoted, quotes doubled) and `\n`
/// line ends (as DuckDB writes them). NULL is an empty field, and so is the
/// empty string: the two cannot be told apart. Other values are in
/// their display form (floats shortest round-trip, timestamps
/// `YYYY-MM-DD HH:MM:SS`, booleans `true`/`false`).
pub fn write_csv(out: &mut dyn Write, result: &QueryResult) -> io::Result<()> {
    let mut w = csv::WriterBuilder::new().from_writer(out);
    w.write_record(&result.columns).map_err(csv_to_io)?;
    let mut record: Vec<String> = Vec::with_capacity(result.columns.len());
    for row in &result.rows {
        record.clear();
        record.extend(row.iter().map(|v| match v {
            Value::Null => String::new(),
            v => v.to_string(),
        }));
        w.write_record(&record).map_err(csv_to_io)?;
    }
    w.flush()
}

fn csv_to_io(e: csv::Error) -> io::Error {
    match e.into_kind() {
        csv::ErrorKind::Io(e) => e,
        other => io::Error::other(format!("{other:?}")),
    }
}

/// Writes `result` as one JSON array of objects, one object per row with the
/// columns in result order, one row per line:
/// `[{"a":1,"b":"x"},` … `{"a":2,"b":null}]` (`[]` when empty).
/// NULL and non-finite floats are `null`; integers and floats are numbers;
/// timestamps are strings `YYYY-MM-DD HH:MM:SS`; booleans `true`/`false`.
pub fn write_json(out: &mut dyn Write, result: &QueryResult) -> io::Result<()> {
    let keys: Vec<String> = result
        .columns
        .iter()
        .map(|c| serde_json::to_string(c).map_err(io::Error::other))
        .collect::<io::Result<_>>()?;
    out.write_all(b"[")?;
    for (r, row) in result.rows.iter().enumerate() {
        if r > 0 {
            out.write_all(b",\n")?;
        }
        out.write_all(b"{")?;
        for (i, (key, v)) in keys.iter().zip(row).enumerate() {
            if i > 0 {
                out.write_all(b",")?;
            }
            write!(out, "{key}:{}", json_value(v))?;
        }
        out.write_all(b"}")?;
    }
    out.write_all(b"]\n")
}

/// One value as JSON text.
pub fn json_value(v: &Value) -> String {
    let j = match v {
        Value::Null => serde_json::Value::Null,
        Value::Bool(b) => serde_json::Value::Bool(*b),
        Value::Int(i) => serde_json::Value::from(*i),
        Value::Float(f) => serde_json::Number::from_f64(*f)
            .map_or(serde_json::Value::Null, serde_json::Value::Number),
        Value::Timestamp(_) => serde_json::Value::String(v.to_string()),
        Value::Str(s) => serde_json::Value::String(s.to_string()),
    };
    j.to_string()
}

/// The line of `query` holding byte `offset` and a caret line under it, for
/// error messages:
///
/// ```text
///   SELECT fare FORM trips
///               ^
/// ```
///
/// The caret column counts characters (not bytes) before the offset on that
/// line; tabs are shown as single spaces so that the count matches. A query of
/// several lines shows `LINE n: ` before the line. An offset inside a
/// character points at that character; one past the end points after the last
/// character.
pub fn caret_snippet(query: &str, offset: usize) -> String {
    let mut offset = offset.min(query.len());
    while !query.is_char_boundary(offset) {
        offset -= 1;
    }
    let line_start = query[..offset].rfind('\n').map_or(0, |p| p + 1);
    let line_end = query[offset..]
        .find('\n')
        .map_or(query.len(), |p| offset + p);
    let line = query[line_start..line_end].trim_end_matches('\r');
    let column = query[line_start..offset].chars().count();
    let shown: String = line
        .chars()
        .map(|c| if c == '\t' { ' ' } else { c })
        .collect();
    let prefix = if query.trim_end().contains('\n') {
        let number = query[..line_start].matches('\n').count() + 1;
        format!("LINE {number}: ")
    } else {
        String::new()
    };
    format!(
        "  {prefix}{shown}\n  {}^",
        " ".repeat(prefix.chars().count() + column)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn result(columns: &[&str], types: &[DataType], rows: Vec<Vec<Value>>) -> QueryResult {
        QueryResult {
            columns: columns.iter().map(|c| c.to_string()).collect(),
            types: types.to_vec(),
            rows,
            rows_scanned: 2_000_000,
            elapsed: Duration::from_millis(250),
        }
    }

    fn render(f: impl Fn(&mut dyn Write) -> io::Result<()>) -> String {
        let mut buf = Vec::new();
        f(&mut buf).unwrap();
        String::from_utf8(buf).unwrap()
    }

    #[test]
    fn thousands_separators() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(242_718), "242,718");
        assert_eq!(thousands(8_104_327), "8,104,327");
        assert_eq!(thousands(u64::MAX), "18,446,744,073,709,551,615");
    }

    #[test]
    fn sizes_and_durations() {
        assert_eq!(bytes(512), "512 B");
        assert_eq!(bytes(1_234), "1.2 KB");
        assert_eq!(bytes(11_300_000), "11.3 MB");
        assert_eq!(bytes(999_990), "1.0 MB");
        assert_eq!(bytes(4_100_000_000), "4.1 GB");
        assert_eq!(duration(Duration::from_micros(12_345)), "12.345 ms");
        assert_eq!(duration(Duration::from_millis(1_234)), "1.234 s");
        assert_eq!(duration_short(Duration::from_micros(41_230)), "41.2 ms");
        assert_eq!(per_second(10, Duration::from_millis(500)), 20);
        assert_eq!(per_second(10, Duration::ZERO), 10);
        assert_eq!(count(1, "column"), "1 column");
        assert_eq!(count(0, "row"), "0 rows");
        assert_eq!(count(1500, "partition"), "1,500 partitions");
    }

    #[test]
    fn table_aligns_numbers_right_and_text_left() {
        let r = result(
            &["cab_type", "count(*)", "avg"],
            &[DataType::Str, DataType::Int, DataType::Float],
            vec![
                vec![Value::str("green"), Value::Int(7), Value::Float(1.5)],
                vec![Value::str("yellow"), Value::Int(12_345), Value::Null],
                vec![Value::Null, Value::Int(-3), Value::Float(-0.25)],
            ],
        );
        let text = render(|o| write_table(o, &r, None));
        let expected = "\
cab_type | count(*) |   avg
---------+----------+------
green    |        7 |   1.5
yellow   |    12345 |  NULL
NULL     |       -3 | -0.25
3 rows in 250.000 ms (8,000,000 rows/s scanned)
";
        assert_eq!(text, expected);
    }

    #[test]
    fn table_caps_rows_and_escapes_line_breaks() {
        let rows = (0..5)
            .map(|i| vec![Value::str(&format!("a\nb{i}"))])
            .collect();
        let r = result(&["s"], &[DataType::Str], rows);
        let text = render(|o| write_table(o, &r, Some(2)));
        assert_eq!(
            text,
            "s\n-----\na\\nb0\na\\nb1\n… (3 more rows)\n5 rows in 250.000 ms (8,000,000 rows/s scanned)\n"
        );
    }

    #[test]
    fn table_uses_display_width_for_wide_characters() {
        let r = result(
            &["name", "n"],
            &[DataType::Str, DataType::Int],
            vec![
                vec![Value::str("東京"), Value::Int(1)],
                vec![Value::str("café"), Value::Int(22)],
            ],
        );
        let text = render(|o| write_table(o, &r, None));
        assert!(text.contains("東京 |  1\n"), "{text}");
        assert!(text.contains("café | 22\n"), "{text}");
    }

    #[test]
    fn empty_result_table_has_header_and_footer() {
        let mut r = result(&["a"], &[DataType::Int], vec![]);
        r.rows_scanned = 1;
        r.elapsed = Duration::from_secs(2);
        let text = render(|o| write_table(o, &r, None));
        assert_eq!(text, "a\n-\n0 rows in 2.000 s (0 rows/s scanned)\n");
    }

    #[test]
    fn csv_quotes_commas_quotes_and_newlines_and_nulls_are_empty() {
        let r = result(
            &["s", "x", "t", "b"],
            &[
                DataType::Str,
                DataType::Float,
                DataType::Timestamp,
                DataType::Bool,
            ],
            vec![
                vec![
                    Value::str("a,b"),
                    Value::Float(0.1),
                    Value::Timestamp(1_375_344_877_000_000),
                    Value::Bool(true),
                ],
                vec![
                    Value::str("say \"hi\""),
                    Value::Float(1e21),
                    Value::Null,
                    Value::Bool(false),
                ],
                vec![
                    Value::str("line\nbreak"),
                    Value::Null,
                    Value::Null,
                    Value::Null,
                ],
                vec![
                    Value::Str(Arc::from("")),
                    Value::Float(3.0),
                    Value::Null,
                    Value::Null,
                ],
            ],
        );
        let text = render(|o| write_csv(o, &r));
        assert_eq!(
            text,
            "s,x,t,b\n\
             \"a,b\",0.1,2013-08-01 08:14:37,true\n\
             \"say \"\"hi\"\"\",1000000000000000000000,,false\n\
             \"line\nbreak\",,,\n\
             ,3,,\n"
        );
    }

    #[test]
    fn json_escapes_strings_and_maps_nulls() {
        let r = result(
            &["name \"q\"", "n", "f", "t"],
            &[
                DataType::Str,
                DataType::Int,
                DataType::Float,
                DataType::Timestamp,
            ],
            vec![
                vec![
                    Value::str("tab\there \"x\" \\ é\u{1}"),
                    Value::Int(-5),
                    Value::Float(2.5),
                    Value::Timestamp(0),
                ],
                vec![
                    Value::Null,
                    Value::Int(i64::MAX),
                    Value::Float(f64::NAN),
                    Value::Null,
                ],
                vec![
                    Value::Bool(true),
                    Value::Int(0),
                    Value::Float(f64::INFINITY),
                    Value::Null,
                ],
            ],
        );
        let text = render(|o| write_json(o, &r));
        assert_eq!(
            text,
            "[{\"name \\\"q\\\"\":\"tab\\there \\\"x\\\" \\\\ é\\u0001\",\"n\":-5,\"f\":2.5,\"t\":\"1970-01-01 00:00:00\"},\n\
             {\"name \\\"q\\\"\":null,\"n\":9223372036854775807,\"f\":null,\"t\":null},\n\
             {\"name \\\"q\\\"\":true,\"n\":0,\"f\":null,\"t\":null}]\n"
        );
        let parsed: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(parsed[0]["name \"q\""], "tab\there \"x\" \\ é\u{1}");
        assert_eq!(parsed.as_array().unwrap().len(), 3);
        let empty = result(&["a"], &[DataType::Int], vec![]);
        assert_eq!(render(|o| write_json(o, &empty)), "[]\n");
    }

    #[test]
    fn caret_counts_characters_not_bytes() {
        // "é" and "ü" are two bytes each; the error is at byte 20 ("FORM").
        let q = "SELECT 'é', 'ü' X FORM t";
        let offset = q.find("FORM").unwrap();
        assert_eq!(offset, 20);
        let snippet = caret_snippet(q, offset);
        let caret_line = snippet.lines().nth(1).unwrap();
        assert_eq!(caret_line, format!("  {}^", " ".repeat(18)));
        assert_eq!(
            snippet.lines().next().unwrap(),
            "  SELECT 'é', 'ü' X FORM t"
        );
    }

    #[test]
    fn caret_on_a_later_line_and_at_the_end() {
        let q = "SELECT a\nFROM tröps\nWHERE";
        let snippet = caret_snippet(q, q.find("WHERE").unwrap() + 5);
        assert_eq!(
            snippet,
            format!("  LINE 3: WHERE\n  {}^", " ".repeat(8 + 5))
        );
        // Byte 2 of "röps" is inside "ö": the caret points at "ö", after
        // the 7 characters "FROM tr".
        let snippet = caret_snippet(q, q.find("röps").unwrap() + 2);
        assert_eq!(
            snippet,
            format!("  LINE 2: FROM tröps\n  {}^", " ".repeat(8 + 7))
        );
        assert_eq!(caret_snippet("x", 99), "  x\n   ^");
    }
}
