//! A result as text (the REPL's table: header, `-+-` rule, rows; numbers
//! right-aligned) and as HTML for Jupyter.

use katydid::{DataType, Value};

/// The first rows of a result, what is shown of it.
pub struct Preview {
    /// Output column names.
    pub columns: Vec<String>,
    /// Output column types.
    pub types: Vec<DataType>,
    /// The first rows.
    pub rows: Vec<Vec<Value>>,
    /// Rows of the whole result.
    pub total: usize,
}

/// Widest a cell is shown, in characters; longer text ends in `…`.
const MAX_CELL_CHARS: usize = 40;

/// The text of one cell: NULL as `NULL`, control characters escaped so a
/// row stays on one line, cut to [`MAX_CELL_CHARS`].
fn cell(value: &Value) -> String {
    let mut text = String::new();
    for c in value.to_string().chars() {
        match c {
            '\n' => text.push_str("\\n"),
            '\t' => text.push_str("\\t"),
            '\r' => text.push_str("\\r"),
            c if c.is_control() => text.extend(c.escape_unicode()),
            c => text.push(c),
        }
    }
    if text.chars().count() <= MAX_CELL_CHARS {
        return text;
    }
    let mut cut: String = text.chars().take(MAX_CELL_CHARS - 1).collect();
    cut.push('…');
    cut
}

/// The rows of `result` as an aligned table, with a line counting the rows
/// when some are not shown.
pub fn table_text(result: &Preview) -> String {
    let shown = result.rows.len();
    let cells: Vec<Vec<String>> = result
        .rows
        .iter()
        .map(|row| row.iter().map(cell).collect())
        .collect();
    let mut widths: Vec<usize> = result.columns.iter().map(|c| c.chars().count()).collect();
    for row in &cells {
        for (w, c) in widths.iter_mut().zip(row) {
            *w = (*w).max(c.chars().count());
        }
    }
    let right: Vec<bool> = (0..widths.len())
        .map(|i| result.types.get(i).is_some_and(|t| t.is_numeric()))
        .collect();
    let mut out = String::new();
    push_line(&mut out, &result.columns, &widths, &right);
    let rule: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
    out.push_str(&rule.join("-+-"));
    out.push('\n');
    for row in &cells {
        push_line(&mut out, row, &widths, &right);
    }
    let total = result.total;
    if shown < total {
        out.push_str(&format!("({shown} of {total} rows shown)\n"));
    } else {
        out.push_str(&format!(
            "({total} row{})\n",
            if total == 1 { "" } else { "s" }
        ));
    }
    out
}

fn push_line(out: &mut String, cells: &[String], widths: &[usize], right: &[bool]) {
    let mut line = String::new();
    for (i, c) in cells.iter().enumerate() {
        if i > 0 {
            line.push_str(" | ");
        }
        let pad = widths[i].saturating_sub(c.chars().count());
        if right[i] {
            line.extend(std::iter::repeat_n(' ', pad));
            line.push_str(c);
        } else {
            line.push_str(c);
            line.extend(std::iter::repeat_n(' ', pad));
        }
    }
    out.push_str(line.trim_end());
    out.push('\n');
}

/// The rows of `result` as an HTML table (text escaped), with the column
/// types under the names.
pub fn table_html(result: &Preview) -> String {
    let shown = result.rows.len();
    let mut out = String::from("<table>\n<thead><tr>");
    for (name, t) in result.columns.iter().zip(&result.types) {
        out.push_str(&format!(
            "<th>{}<br><small>{}</small></th>",
            escape(name),
            t.name()
        ));
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    for row in &result.rows {
        out.push_str("<tr>");
        for (i, v) in row.iter().enumerate() {
            let numeric = result.types.get(i).is_some_and(|t| t.is_numeric());
            let style = if numeric
                || matches!(
                    result.types.get(i),
                    Some(DataType::Timestamp | DataType::Date | DataType::Interval)
                ) {
                " style=\"text-align:right\""
            } else {
                ""
            };
            out.push_str(&format!("<td{style}>{}</td>", escape(&cell(v))));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody>\n</table>\n");
    out.push_str(&format!("<p>{} of {} rows</p>\n", shown, result.total));
    out
}

/// `s` with `&`, `<`, `>` and `"` escaped for HTML.
fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            c => out.push(c),
        }
    }
    out
}
