//! Rendering of results, statistics and errors: the table view fitted to a
//! width, line mode, markdown, streaming CSV and JSON sinks, thousands
//! separators, sizes, durations and the caret under a query error.

use std::io::{self, Write};
use std::time::Duration;

use katydid::{CancelToken, DataType, QueryResult, RowSink, Value};
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

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
    indicatif::HumanCount(n).to_string()
}

/// A byte count in binary units, as the engine's memory figures are given:
/// `512 B`, `1.2 KiB`, `11.3 MiB`, `4.1 GiB` (1 KiB = 1,024 bytes).
pub fn bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["KiB", "MiB", "GiB", "TiB", "PiB"];
    if n < 1024 {
        return format!("{n} B");
    }
    let mut v = n as f64 / 1024.0;
    let mut unit = 0;
    while v >= 1023.95 && unit + 1 < UNITS.len() {
        v /= 1024.0;
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
    count_u64(n as u64, noun)
}

/// [`count`] for a `u64`.
pub fn count_u64(n: u64, noun: &str) -> String {
    let s = if n == 1 { "" } else { "s" };
    format!("{} {noun}{s}", thousands(n))
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

/// `s` cut to at most `width` display columns, ending in `…` when cut.
pub fn truncate(s: &str, width: usize) -> String {
    if s.width() <= width {
        return s.to_string();
    }
    if width == 0 {
        return String::new();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in s.chars() {
        let w = c.width().unwrap_or(0);
        if used + w > width - 1 {
            break;
        }
        used += w;
        out.push(c);
    }
    out.push('…');
    out
}

/// Writes an aligned text table: header, a separator line, then the rows.
/// Columns are separated by ` | `; widths are display widths (East Asian
/// wide characters count two). Used for `.tables` and `.schema`.
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
        let cell = truncate(cell, widths[i]);
        let pad = widths[i].saturating_sub(cell.width());
        match aligns[i] {
            Align::Right => {
                line.extend(std::iter::repeat_n(' ', pad));
                line.push_str(&cell);
            }
            Align::Left => {
                line.push_str(&cell);
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

/// Which columns the table view shows and how wide.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    /// Indices of the shown columns, in result order.
    pub columns: Vec<usize>,
    /// Display width of each shown column.
    pub widths: Vec<usize>,
    /// When middle columns are elided: the position in `columns` before
    /// which the `…` column stands.
    pub elided_at: Option<usize>,
}

/// Narrowest a column is cut to before middle columns are elided instead.
const MIN_COLUMN_WIDTH: usize = 10;
/// Widest a column is shown when middle columns are elided (before leftover
/// space is handed back).
const ELIDED_COLUMN_WIDTH: usize = 20;
/// Between two columns: ` | `.
const SEPARATOR_WIDTH: usize = 3;

fn row_width(widths: &[usize]) -> usize {
    widths.iter().sum::<usize>() + SEPARATOR_WIDTH * widths.len().saturating_sub(1)
}

/// Fits columns of natural widths `natural` (the widest of header and
/// cells) into `max_width` display columns, as DuckDB's box renderer does:
///
/// 1. If everything fits, every column keeps its width.
/// 2. Otherwise the widest columns are cut to a common cap (the largest
///    that fits), if that cap is at least [`MIN_COLUMN_WIDTH`].
/// 3. Otherwise columns are taken alternately from the left and the right
///    end (each at most [`ELIDED_COLUMN_WIDTH`] wide) while they fit
///    beside a `…` column that stands for the middle ones; space left over
///    widens the cut ones again. The first column is always shown.
///
/// `max_width = None` means no limit.
pub fn fit_columns(natural: &[usize], max_width: Option<usize>) -> Layout {
    let all = Layout {
        columns: (0..natural.len()).collect(),
        widths: natural.to_vec(),
        elided_at: None,
    };
    let Some(max) = max_width else {
        return all;
    };
    if natural.is_empty() || row_width(natural) <= max {
        return all;
    }
    let capped = |cap: usize| -> Vec<usize> { natural.iter().map(|&w| w.min(cap)).collect() };
    if row_width(&capped(MIN_COLUMN_WIDTH)) <= max {
        // The largest cap that fits, by bisection over [MIN, widest].
        let (mut lo, mut hi) = (MIN_COLUMN_WIDTH, natural.iter().copied().max().unwrap_or(0));
        while lo < hi {
            let mid = (lo + hi).div_ceil(2);
            if row_width(&capped(mid)) <= max {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        return Layout {
            widths: capped(lo),
            ..all
        };
    }
    // Elide middle columns: `… | ` costs 1 + SEPARATOR_WIDTH.
    let ellipsis = 1 + SEPARATOR_WIDTH;
    let n = natural.len();
    let mut left: Vec<usize> = Vec::new();
    let mut right: Vec<usize> = Vec::new();
    let width_of = |i: usize| natural[i].min(ELIDED_COLUMN_WIDTH);
    let mut used = 0usize;
    let (mut next_left, mut next_right) = (0usize, n - 1);
    let mut take_left = true;
    while next_left <= next_right {
        let i = if take_left { next_left } else { next_right };
        let w = width_of(i);
        let added = w + SEPARATOR_WIDTH * usize::from(!(left.is_empty() && right.is_empty()));
        if used + added + ellipsis > max {
            break;
        }
        used += added;
        if take_left {
            left.push(i);
            next_left += 1;
        } else {
            right.push(i);
            next_right -= 1;
        }
        take_left = !take_left;
    }
    if left.is_empty() {
        // Not even the first column fits beside the `…`: show it cut.
        let w = max.saturating_sub(ellipsis).max(1);
        return Layout {
            columns: vec![0],
            widths: vec![w.min(natural[0])],
            elided_at: Some(1),
        };
    }
    right.reverse();
    let elided_at = left.len();
    let columns: Vec<usize> = left.into_iter().chain(right).collect();
    let mut widths: Vec<usize> = columns.iter().map(|&i| width_of(i)).collect();
    // Hand leftover space back to the cut columns, left to right.
    let mut spare = max.saturating_sub(row_width(&widths) + ellipsis);
    for (w, &i) in widths.iter_mut().zip(&columns) {
        let grow = (natural[i] - *w).min(spare);
        *w += grow;
        spare -= grow;
    }
    Layout {
        columns,
        widths,
        elided_at: Some(elided_at),
    }
}

/// What a display format showed, for the footer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shown {
    /// Rows of the whole result.
    pub total_rows: u64,
    /// Rows printed.
    pub rows: usize,
    /// Columns of the result.
    pub total_columns: usize,
    /// Columns printed.
    pub columns: usize,
}

/// Writes the first rows of `result` as an aligned table fitted to
/// `max_width` display columns (see [`fit_columns`]); cut cells end in `…`.
/// `total_rows` is the size of the whole result (`result.rows` may hold
/// fewer). Returns what was shown, for the footer.
pub fn write_table(
    out: &mut dyn Write,
    result: &QueryResult,
    total_rows: u64,
    max_width: Option<usize>,
) -> io::Result<Shown> {
    let cells: Vec<Vec<String>> = result
        .rows
        .iter()
        .map(|row| row.iter().map(cell_text).collect())
        .collect();
    let mut natural: Vec<usize> = result.columns.iter().map(|h| h.width()).collect();
    for row in &cells {
        for (w, cell) in natural.iter_mut().zip(row) {
            *w = (*w).max(cell.width());
        }
    }
    let layout = fit_columns(&natural, max_width);
    let mut aligns: Vec<Align> = layout
        .columns
        .iter()
        .map(|&i| result.types.get(i).map_or(Align::Left, |t| align_for(*t)))
        .collect();
    let mut widths = layout.widths.clone();
    let pick = |row: &[String]| -> Vec<String> {
        let mut picked: Vec<String> = layout.columns.iter().map(|&i| row[i].clone()).collect();
        if let Some(at) = layout.elided_at {
            picked.insert(at, "…".to_string());
        }
        picked
    };
    if let Some(at) = layout.elided_at {
        aligns.insert(at, Align::Left);
        widths.insert(at, 1);
    }
    write_line(out, &pick(&result.columns), &aligns, &widths)?;
    let sep: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
    writeln!(out, "{}", sep.join("-+-"))?;
    for row in &cells {
        write_line(out, &pick(row), &aligns, &widths)?;
    }
    Ok(Shown {
        total_rows,
        rows: cells.len(),
        total_columns: result.columns.len(),
        columns: layout.columns.len(),
    })
}

/// Writes the rows as `column = value` lines, names right-aligned, a blank
/// line between rows (like MySQL's `\G` and DuckDB's `.mode line`). Values
/// are shown whole.
pub fn write_lines(
    out: &mut dyn Write,
    result: &QueryResult,
    total_rows: u64,
) -> io::Result<Shown> {
    let name_width = result.columns.iter().map(|c| c.width()).max().unwrap_or(0);
    for (r, row) in result.rows.iter().enumerate() {
        if r > 0 {
            writeln!(out)?;
        }
        for (name, v) in result.columns.iter().zip(row) {
            let pad = name_width - name.width();
            writeln!(out, "{}{name} = {}", " ".repeat(pad), cell_text(v))?;
        }
    }
    Ok(Shown {
        total_rows,
        rows: result.rows.len(),
        total_columns: result.columns.len(),
        columns: result.columns.len(),
    })
}

/// Writes the rows as a GitHub-flavoured markdown table (numbers
/// right-aligned, `|` in cells escaped as `\|`).
pub fn write_markdown(
    out: &mut dyn Write,
    result: &QueryResult,
    total_rows: u64,
) -> io::Result<Shown> {
    let escape = |s: String| s.replace('|', "\\|");
    let headers: Vec<String> = result.columns.iter().cloned().map(escape).collect();
    let cells: Vec<Vec<String>> = result
        .rows
        .iter()
        .map(|row| row.iter().map(|v| escape(cell_text(v))).collect())
        .collect();
    let mut widths: Vec<usize> = headers.iter().map(|h| h.width().max(3)).collect();
    for row in &cells {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.width());
        }
    }
    let aligns: Vec<Align> = (0..headers.len())
        .map(|i| result.types.get(i).map_or(Align::Left, |t| align_for(*t)))
        .collect();
    let line = |out: &mut dyn Write, cells: &[String]| -> io::Result<()> {
        let mut s = String::from("|");
        for ((cell, w), align) in cells.iter().zip(&widths).zip(&aligns) {
            let pad = " ".repeat(w - cell.width());
            match align {
                Align::Left => s.push_str(&format!(" {cell}{pad} |")),
                Align::Right => s.push_str(&format!(" {pad}{cell} |")),
            }
        }
        writeln!(out, "{s}")
    };
    line(out, &headers)?;
    let mut sep = String::from("|");
    for (w, align) in widths.iter().zip(&aligns) {
        match align {
            Align::Left => sep.push_str(&format!(" {} |", "-".repeat(*w))),
            Align::Right => sep.push_str(&format!(" {}: |", "-".repeat(w - 1))),
        }
    }
    writeln!(out, "{sep}")?;
    for row in &cells {
        line(out, row)?;
    }
    Ok(Shown {
        total_rows,
        rows: cells.len(),
        total_columns: headers.len(),
        columns: headers.len(),
    })
}

/// The footer of the display formats (table, line, markdown), one line:
///
/// - always the row count, with how many are shown when fewer
///   (`10,000 rows (40 shown)`), and the columns shown when some are elided
///   (`51 columns (7 shown)`);
/// - with the timer on, the statement's time and, when it read any table
///   rows, the scan rate: `3 rows in 1.234 ms (8,104,327 rows/s scanned)`.
///
/// The data formats (CSV, JSON) print no footer; their time goes to stderr.
pub fn footer(shown: &Shown, timing: Option<(Duration, usize)>) -> String {
    let mut s = count_u64(shown.total_rows, "row");
    if (shown.rows as u64) < shown.total_rows {
        s.push_str(&format!(" ({} shown)", thousands(shown.rows as u64)));
    }
    if shown.columns < shown.total_columns {
        s.push_str(&format!(
            ", {} ({} shown; .mode line shows all)",
            count(shown.total_columns, "column"),
            thousands(shown.columns as u64)
        ));
    }
    if let Some((elapsed, scanned)) = timing {
        s.push_str(&format!(" in {}", duration(elapsed)));
        s.push_str(&scan_rate(scanned, elapsed));
    }
    s
}

/// ` (8,104,327 rows/s scanned)`, or nothing when no rows were read or the
/// rate rounds to zero.
pub fn scan_rate(scanned: usize, elapsed: Duration) -> String {
    let rate = per_second(scanned as u64, elapsed);
    if scanned == 0 || rate == 0 {
        String::new()
    } else {
        format!(" ({} rows/s scanned)", thousands(rate))
    }
}

/// Writes the rows of an `EXPLAIN` result as plain lines (the plan text).
pub fn write_plan(out: &mut dyn Write, result: &QueryResult) -> io::Result<()> {
    for row in &result.rows {
        let line: Vec<String> = row.iter().map(|v| v.to_string()).collect();
        writeln!(out, "{}", line.join(" "))?;
    }
    Ok(())
}

/// Rows a sink writes between two looks at the cancel token.
const SINK_CHUNK_ROWS: usize = 256;

/// A [`RowSink`] over a writer that remembers the first write error (a
/// closed pipe among others) and then asks the engine to stop, so that the
/// caller can report it once the statement has returned. With a cancel
/// token it also stops, between chunks of [`SINK_CHUNK_ROWS`] rows, once
/// Ctrl-C set it: a batch the engine delivered in one piece does not keep
/// printing after the user asked to stop.
struct Writer<'a> {
    out: &'a mut dyn Write,
    error: Option<io::Error>,
    cancel: Option<CancelToken>,
    cancelled: bool,
}

impl<'a> Writer<'a> {
    fn new(out: &'a mut dyn Write) -> Writer<'a> {
        Writer {
            out,
            error: None,
            cancel: None,
            cancelled: false,
        }
    }

    /// Runs `f` unless a write failed before; keeps its error. True while
    /// writing goes well.
    fn attempt(&mut self, f: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> bool {
        if self.error.is_none()
            && let Err(e) = f(self.out)
        {
            self.error = Some(e);
        }
        self.error.is_none()
    }

    /// Writes `rows` a chunk at a time with `write_chunk`, flushing after
    /// each; false once writing failed or the token was cancelled.
    fn chunks(
        &mut self,
        rows: &[Vec<Value>],
        mut write_chunk: impl FnMut(&mut dyn Write, &[Vec<Value>]) -> io::Result<()>,
    ) -> bool {
        for chunk in rows.chunks(SINK_CHUNK_ROWS) {
            if self.cancel.as_ref().is_some_and(CancelToken::is_cancelled) {
                self.cancelled = true;
                return false;
            }
            if !self.attempt(|o| {
                write_chunk(o, chunk)?;
                o.flush()
            }) {
                return false;
            }
        }
        true
    }
}

/// Streams rows as CSV (see [`CsvSink::new`]); every batch is flushed, so
/// a reader such as `head -1` sees the first lines at once.
pub struct CsvSink<'a> {
    w: Writer<'a>,
    /// The text of the chunk being written, kept across chunks.
    buf: String,
}

impl<'a> CsvSink<'a> {
    /// A sink writing CSV with a header row, quoted as RFC 4180 says
    /// (fields holding a comma, quote or line break are quoted, quotes
    /// doubled) and `\n` line ends (as DuckDB writes them). NULL is an empty
    /// field, and so is the empty string: the two cannot be told apart.
    /// Other values are in their display form (floats shortest round-trip,
    /// timestamps `YYYY-MM-DD HH:MM:SS`, booleans `true`/`false`).
    pub fn new(out: &'a mut dyn Write) -> CsvSink<'a> {
        CsvSink {
            w: Writer::new(out),
            buf: String::new(),
        }
    }

    /// Also stops once `token` is cancelled (Ctrl-C).
    pub fn with_cancel(mut self, token: CancelToken) -> Self {
        self.w.cancel = Some(token);
        self
    }

    /// True when the sink stopped because the token was cancelled.
    pub fn was_cancelled(&self) -> bool {
        self.w.cancelled
    }

    /// The write error that stopped the sink, if any.
    pub fn into_error(self) -> Option<io::Error> {
        self.w.error
    }

    fn write_record(out: &mut dyn Write, fields: &[String]) -> io::Result<()> {
        let mut line = String::new();
        for (i, f) in fields.iter().enumerate() {
            if i > 0 {
                line.push(',');
            }
            push_csv_field(&mut line, f);
        }
        line.push('\n');
        out.write_all(line.as_bytes())
    }
}

/// Appends one CSV field, quoted when it holds a comma, quote or line
/// break (quotes doubled).
fn push_csv_field(line: &mut String, f: &str) {
    if f.contains([',', '"', '\n', '\r']) {
        line.push('"');
        line.push_str(&f.replace('"', "\"\""));
        line.push('"');
    } else {
        line.push_str(f);
    }
}

/// Appends one value as a CSV field: written in place, with no string
/// made per value (a 200,000-row result of two columns spent more time
/// allocating the values' texts than writing them). Numbers, timestamps
/// and booleans never need quotes.
fn push_csv_value(line: &mut String, v: &Value) {
    use std::fmt::Write as _;
    match v {
        Value::Null => {}
        Value::Str(s) => push_csv_field(line, s),
        Value::Int(i) => line.push_str(itoa::Buffer::new().format(*i)),
        Value::Float(f) => katydid::types::push_f64(line, *f),
        v => {
            let _ = write!(line, "{v}");
        }
    }
}

impl RowSink for CsvSink<'_> {
    fn start(&mut self, columns: &[String], _types: &[DataType]) -> katydid::Result<()> {
        self.w.attempt(|o| {
            Self::write_record(o, columns)?;
            o.flush()
        });
        Ok(())
    }

    fn rows(&mut self, rows: &[Vec<Value>]) -> katydid::Result<bool> {
        let buf = &mut self.buf;
        Ok(self.w.chunks(rows, |o, chunk| {
            buf.clear();
            for row in chunk {
                for (i, v) in row.iter().enumerate() {
                    if i > 0 {
                        buf.push(',');
                    }
                    push_csv_value(buf, v);
                }
                buf.push('\n');
            }
            o.write_all(buf.as_bytes())
        }))
    }
}

/// Streams rows as one JSON array of objects, one object per row with the
/// columns in result order, one row per line:
/// `[{"a":1,"b":"x"},` … `{"a":2,"b":null}]` (`[]` when empty). NULL and
/// non-finite floats are `null`; integers and floats are numbers;
/// timestamps are strings `YYYY-MM-DD HH:MM:SS`; booleans `true`/`false`.
pub struct JsonSink<'a> {
    w: Writer<'a>,
    keys: Vec<String>,
    rows: u64,
}

impl<'a> JsonSink<'a> {
    /// A sink writing to `out`; call [`JsonSink::finish`] after the
    /// statement to close the array.
    pub fn new(out: &'a mut dyn Write) -> JsonSink<'a> {
        JsonSink {
            w: Writer::new(out),
            keys: Vec::new(),
            rows: 0,
        }
    }

    /// Also stops once `token` is cancelled (Ctrl-C).
    pub fn with_cancel(mut self, token: CancelToken) -> Self {
        self.w.cancel = Some(token);
        self
    }

    /// True when the sink stopped because the token was cancelled.
    pub fn was_cancelled(&self) -> bool {
        self.w.cancelled
    }

    /// Closes the array (`]`) and returns the write error that stopped the
    /// sink, if any.
    pub fn finish(mut self, started: bool) -> Option<io::Error> {
        if started {
            let rows = self.rows;
            self.w.attempt(|o| {
                o.write_all(if rows == 0 { b"[]\n" } else { b"]\n" })?;
                o.flush()
            });
        }
        self.w.error
    }
}

impl RowSink for JsonSink<'_> {
    fn start(&mut self, columns: &[String], _types: &[DataType]) -> katydid::Result<()> {
        self.keys = columns
            .iter()
            .map(|c| serde_json::Value::String(c.clone()).to_string())
            .collect();
        Ok(())
    }

    fn rows(&mut self, rows: &[Vec<Value>]) -> katydid::Result<bool> {
        let keys = &self.keys;
        let count = &mut self.rows;
        Ok(self.w.chunks(rows, |o, chunk| {
            let mut text = String::new();
            for row in chunk {
                text.push_str(if *count == 0 { "[" } else { ",\n" });
                *count += 1;
                text.push('{');
                for (i, (key, v)) in keys.iter().zip(row).enumerate() {
                    if i > 0 {
                        text.push(',');
                    }
                    text.push_str(key);
                    text.push(':');
                    text.push_str(&json_value(v));
                }
                text.push('}');
            }
            o.write_all(text.as_bytes())
        }))
    }
}

/// One value as JSON text.
pub fn json_value(v: &Value) -> String {
    let j = match v {
        // JSON numbers have no size limit: the exact digits.
        Value::HugeInt(i) => return i.to_string(),
        Value::Null => serde_json::Value::Null,
        Value::Bool(b) => serde_json::Value::Bool(*b),
        Value::Int(i) => serde_json::Value::from(*i),
        Value::Float(f) => serde_json::Number::from_f64(*f)
            .map_or(serde_json::Value::Null, serde_json::Value::Number),
        Value::Timestamp(_) | Value::Date(_) | Value::Interval(_) => {
            serde_json::Value::String(v.to_string())
        }
        Value::Str(s) => serde_json::Value::String(s.to_string()),
    };
    j.to_string()
}

/// Characters of a long query line shown on each side of the caret.
const CARET_CONTEXT_CHARS: usize = 100;

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
/// character. A line longer than about 200 characters is cut to
/// [`CARET_CONTEXT_CHARS`] on each side of the caret, with `…` where it was
/// cut.
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
    let mut column = query[line_start..offset].chars().count();
    let chars: Vec<char> = line
        .chars()
        .map(|c| if c == '\t' || c.is_control() { ' ' } else { c })
        .collect();
    let from = column.saturating_sub(CARET_CONTEXT_CHARS);
    let to = (column + CARET_CONTEXT_CHARS).min(chars.len());
    let mut shown = String::new();
    if from > 0 {
        shown.push('…');
        column = column - from + 1;
    }
    shown.extend(&chars[from..to.max(from)]);
    if to < chars.len() {
        shown.push('…');
    }
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

    fn table(r: &QueryResult, width: Option<usize>) -> (String, Shown) {
        let mut buf = Vec::new();
        let shown = write_table(&mut buf, r, r.rows.len() as u64, width).unwrap();
        (String::from_utf8(buf).unwrap(), shown)
    }

    fn stream(sink: impl FnOnce(&mut dyn Write), r: &QueryResult) -> String {
        let _ = r;
        let mut buf = Vec::new();
        sink(&mut buf);
        String::from_utf8(buf).unwrap()
    }

    fn csv(r: &QueryResult) -> String {
        stream(
            |o| {
                let mut s = CsvSink::new(o);
                s.start(&r.columns, &r.types).unwrap();
                assert!(s.rows(&r.rows).unwrap());
                assert!(s.into_error().is_none());
            },
            r,
        )
    }

    fn json(r: &QueryResult) -> String {
        stream(
            |o| {
                let mut s = JsonSink::new(o);
                s.start(&r.columns, &r.types).unwrap();
                // Two batches: the array continues across them.
                let (a, b) = r.rows.split_at(r.rows.len() / 2);
                assert!(s.rows(a).unwrap());
                assert!(s.rows(b).unwrap());
                assert!(s.finish(true).is_none());
            },
            r,
        )
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
        assert_eq!(bytes(1_234), "1.2 KiB");
        assert_eq!(bytes(11_300_000), "10.8 MiB");
        assert_eq!(bytes(1_048_570), "1.0 MiB");
        assert_eq!(bytes(4_100_000_000), "3.8 GiB");
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
        let (text, shown) = table(&r, None);
        let expected = "\
cab_type | count(*) |   avg
---------+----------+------
green    |        7 |   1.5
yellow   |    12345 |  NULL
NULL     |       -3 | -0.25
";
        assert_eq!(text, expected);
        assert_eq!(footer(&shown, None), "3 rows");
        assert_eq!(
            footer(&shown, Some((r.elapsed, r.rows_scanned))),
            "3 rows in 250.000 ms (8,000,000 rows/s scanned)"
        );
    }

    #[test]
    fn footer_counts_rows_not_shown_and_never_a_zero_rate() {
        let shown = Shown {
            total_rows: 10_000,
            rows: 40,
            total_columns: 51,
            columns: 7,
        };
        assert_eq!(
            footer(&shown, None),
            "10,000 rows (40 shown), 51 columns (7 shown; .mode line shows all)"
        );
        let empty = Shown {
            total_rows: 0,
            rows: 0,
            total_columns: 1,
            columns: 1,
        };
        // One row read in two seconds rounds to 0 rows/s: no rate at all.
        assert_eq!(
            footer(&empty, Some((Duration::from_secs(2), 1))),
            "0 rows in 2.000 s"
        );
        assert_eq!(
            footer(&empty, Some((Duration::from_millis(1), 0))),
            "0 rows in 1.000 ms"
        );
    }

    #[test]
    fn table_escapes_line_breaks() {
        let rows = (0..2)
            .map(|i| vec![Value::str(&format!("a\nb{i}"))])
            .collect();
        let r = result(&["s"], &[DataType::Str], rows);
        assert_eq!(table(&r, None).0, "s\n-----\na\\nb0\na\\nb1\n");
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
        let text = table(&r, None).0;
        assert!(text.contains("東京 |  1\n"), "{text}");
        assert!(text.contains("café | 22\n"), "{text}");
    }

    #[test]
    fn truncation_counts_display_columns() {
        assert_eq!(truncate("abcdef", 6), "abcdef");
        assert_eq!(truncate("abcdef", 4), "abc…");
        assert_eq!(truncate("東京都", 4), "東…");
        assert_eq!(truncate("abc", 1), "…");
        assert_eq!(truncate("abc", 0), "");
    }

    #[test]
    fn fitting_keeps_caps_or_elides_middle_columns() {
        // Fits: unchanged.
        let l = fit_columns(&[5, 5], Some(13));
        assert_eq!((l.widths, l.elided_at), (vec![5, 5], None));
        // Cut to a common cap: 30 + 3 + 12 + 3 + 4 = 52 > 40; a cap of 16
        // gives 16 + 3 + 12 + 3 + 4 = 38, a cap of 18 gives 40.
        let l = fit_columns(&[30, 12, 4], Some(40));
        assert_eq!(l.widths, vec![18, 12, 4]);
        assert_eq!(row_width(&l.widths), 40);
        // 51 columns of 15 into 80: elided, the first and last kept.
        let l = fit_columns(&[15; 51], Some(80));
        let at = l.elided_at.unwrap();
        assert_eq!(l.columns[0], 0);
        assert_eq!(*l.columns.last().unwrap(), 50);
        assert!(l.columns[..at].iter().all(|&i| i < 25));
        assert!(row_width(&l.widths) + 4 <= 80, "{l:?}");
        assert_eq!(l.columns.len(), 4, "{l:?}");
        // Far too narrow: the first column alone, cut.
        let l = fit_columns(&[50, 50], Some(12));
        assert_eq!((l.columns, l.widths), (vec![0], vec![8]));
    }

    #[test]
    fn wide_table_fits_the_width_with_an_ellipsis_column() {
        let names: Vec<String> = (0..51).map(|i| format!("column_{i:02}")).collect();
        let names: Vec<&str> = names.iter().map(|s| s.as_str()).collect();
        let row: Vec<Value> = (0..51)
            .map(|i| Value::str(&format!("value number {i} of a long row")))
            .collect();
        let r = result(&names, &[DataType::Str; 51], vec![row]);
        let (text, shown) = table(&r, Some(80));
        for line in text.lines() {
            assert!(line.width() <= 80, "{line:?} is wider than 80");
        }
        let header = text.lines().next().unwrap();
        assert!(header.starts_with("column_00 "), "{header}");
        assert!(header.contains(" | … | "), "{header}");
        assert!(header.ends_with("column_50"), "{header}");
        assert!(text.lines().nth(2).unwrap().contains("…"));
        assert_eq!(shown.total_columns, 51);
        assert!(shown.columns < 51 && shown.columns >= 2);
    }

    #[test]
    fn line_mode_prints_one_column_per_line() {
        let r = result(
            &["cab_type", "n"],
            &[DataType::Str, DataType::Int],
            vec![
                vec![Value::str("green"), Value::Int(7)],
                vec![Value::Null, Value::Int(1)],
            ],
        );
        let text = render(|o| write_lines(o, &r, 2).map(|_| ()));
        assert_eq!(
            text,
            "cab_type = green\n       n = 7\n\ncab_type = NULL\n       n = 1\n"
        );
    }

    #[test]
    fn markdown_aligns_and_escapes_pipes() {
        let r = result(
            &["s", "n"],
            &[DataType::Str, DataType::Int],
            vec![vec![Value::str("a|b"), Value::Int(12)]],
        );
        let text = render(|o| write_markdown(o, &r, 1).map(|_| ()));
        assert_eq!(text, "| s    |   n |\n| ---- | --: |\n| a\\|b |  12 |\n");
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
                    Value::Float(1e308),
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
        assert_eq!(
            csv(&r),
            "s,x,t,b\n\
             \"a,b\",0.1,2013-08-01 08:14:37,true\n\
             \"say \"\"hi\"\"\",1e308,,false\n\
             \"line\nbreak\",,,\n\
             ,3,,\n"
        );
    }

    #[test]
    fn sinks_stop_at_a_closed_pipe_and_keep_the_error() {
        struct Closed;
        impl Write for Closed {
            fn write(&mut self, _: &[u8]) -> io::Result<usize> {
                Err(io::ErrorKind::BrokenPipe.into())
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let mut out = Closed;
        let mut sink = CsvSink::new(&mut out);
        sink.start(&["a".into()], &[DataType::Int]).unwrap();
        assert!(!sink.rows(&[vec![Value::Int(1)]]).unwrap());
        assert_eq!(
            sink.into_error().map(|e| e.kind()),
            Some(io::ErrorKind::BrokenPipe)
        );
    }

    #[test]
    fn sinks_stop_writing_once_cancelled() {
        let token = CancelToken::new();
        let mut buf = Vec::new();
        let mut sink = CsvSink::new(&mut buf).with_cancel(token.clone());
        sink.start(&["n".into()], &[DataType::Int]).unwrap();
        let rows: Vec<Vec<Value>> = (0..1000).map(|i| vec![Value::Int(i)]).collect();
        assert!(sink.rows(&rows[..10]).unwrap());
        token.cancel();
        assert!(!sink.rows(&rows).unwrap());
        assert!(sink.was_cancelled());
        assert!(sink.into_error().is_none());
        assert_eq!(String::from_utf8(buf).unwrap().lines().count(), 11);
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
                    Value::Float(1e308),
                    Value::Null,
                ],
            ],
        );
        let text = json(&r);
        assert_eq!(
            text,
            "[{\"name \\\"q\\\"\":\"tab\\there \\\"x\\\" \\\\ é\\u0001\",\"n\":-5,\"f\":2.5,\"t\":\"1970-01-01 00:00:00\"},\n\
             {\"name \\\"q\\\"\":null,\"n\":9223372036854775807,\"f\":null,\"t\":null},\n\
             {\"name \\\"q\\\"\":true,\"n\":0,\"f\":1e+308,\"t\":null}]\n"
        );
        let parsed: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(parsed[0]["name \"q\""], "tab\there \"x\" \\ é\u{1}");
        assert_eq!(parsed.as_array().unwrap().len(), 3);
        let empty = result(&["a"], &[DataType::Int], vec![]);
        assert_eq!(json(&empty), "[]\n");
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

    #[test]
    fn caret_in_a_long_line_shows_a_window() {
        // A 1.3 MB one-line query with the error in the middle.
        let q = format!(
            "SELECT {} FORM t {}",
            "1 + ".repeat(160_000),
            "x".repeat(650_000)
        );
        let offset = q.find("FORM").unwrap();
        let snippet = caret_snippet(&q, offset);
        assert!(snippet.len() < 500, "{} bytes", snippet.len());
        let mut lines = snippet.lines();
        let text = lines.next().unwrap();
        let caret = lines.next().unwrap();
        assert!(text.starts_with("  …") && text.ends_with('…'), "{text}");
        // The caret stands under the F of FORM.
        let at = caret.chars().count() - 1;
        assert_eq!(text.chars().nth(at), Some('F'), "{text}\n{caret}");
    }
}
