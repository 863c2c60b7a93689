//! The loader fuzzer's input: CSV text drawn from a small model of what
//! files hold (headers, typed columns, NULLs, quoting, delimiters, line
//! endings), then broken at the byte level or gzipped, with load options
//! to match or to clash.
//!
//! A quarter of the cases carry exactly one known defect in otherwise clean
//! text (a ragged record, a field that is not UTF-8, a quote left open, a
//! record longer than `max_line_bytes`), so the test can check that the
//! error names the right line and field.

use std::io::Write as _;

use katydid::LoadOptions;
use rand::Rng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;

/// The defect a case was built with, and where the error must point.
#[derive(Debug, Clone)]
pub struct Expected {
    /// What the defect is.
    pub what: &'static str,
    /// The 1-based physical line the error must name.
    pub line: u64,
    /// The 1-based field the error must name, when it is known exactly.
    pub column: Option<u64>,
    /// True when the loader must fail; false when it may also accept the
    /// input (a limit it does not enforce yet), but must name this line if
    /// it fails.
    pub must_fail: bool,
}

/// Which of [`LoadOptions`]' dialect settings the loader honours (probed
/// once: the loader is gaining them), so that cases with a known defect
/// only rely on those.
#[derive(Debug, Clone, Copy)]
pub struct Support {
    /// `delimiter` other than `,`.
    pub delimiter: bool,
    /// `max_line_bytes`.
    pub max_line_bytes: bool,
}

/// One loader case.
pub struct CsvCase {
    pub bytes: Vec<u8>,
    pub options: LoadOptions,
    pub expected: Option<Expected>,
    /// Lines of the text the loader reads (inflated, when gzipped).
    pub plain_len_lines: u64,
}

impl CsvCase {
    /// The case as the report prints it: options and the bytes escaped
    /// (at most 4,000 characters of them).
    pub fn describe(&self) -> String {
        let o = &self.options;
        let escaped: String = self.bytes.escape_ascii().to_string();
        let shown: String = escaped.chars().take(4000).collect();
        let more = if shown.len() < escaped.len() {
            format!(" … ({} bytes in all)", self.bytes.len())
        } else {
            String::new()
        };
        format!(
            "options: header={} columns={:?} partition_rows={} delimiter={:?} quote={:?} null_string={:?} max_line_bytes={}; expected={:?}\n  bytes: b\"{shown}\"{more}",
            o.header,
            o.columns,
            o.partition_rows,
            o.delimiter.map(char::from),
            char::from(o.quote),
            o.null_string,
            o.max_line_bytes,
            self.expected,
        )
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Int,
    Float,
    Ts,
    Str,
    Mixed,
    Empty,
}

const INTS: &[&str] = &[
    "0",
    "1",
    "-1",
    "42",
    "255",
    "256",
    "9223372036854775807",
    "-9223372036854775808",
    "9223372036854775808",
    "-9223372036854775809",
    "99999999999999999999999",
    "007",
    "-0",
    "+5",
    " 5",
];
const FLOATS: &[&str] = &[
    "1.5", "-0.0", "0.0", "1e308", "1e309", "-1e309", "nan", "NaN", "inf", "-inf", "Infinity",
    ".5", "5.", "1e-400", "5e-324", "0x10", "1.5e", "3.14",
];
const TIMESTAMPS: &[&str] = &[
    "2013-09-01",
    "2013-09-01 12:00:00",
    "2013-09-01T12:00:00.123456Z",
    "2013-02-30",
    "9999-12-31 23:59:59.9999999",
    "0000-01-01",
    "1969-12-31 23:59:59",
    "2013-09-01 24:00:00",
];
const STRINGS: &[&str] = &[
    "a",
    "b",
    "é",
    "😈",
    "NULL",
    "\\N",
    "NA",
    "x\"y",
    "a,b",
    "a;b",
    "a\tb",
    "a|b",
    "line\nbreak",
    "cr\rx",
    "'q'",
    " ",
    "\u{feff}bom",
    "\u{0}",
];
/// Strings without carriage returns, for cases whose line numbers are
/// checked (a lone `\r` ends a record but its line counting is the
/// reader's business).
const PLAIN_STRINGS: &[&str] = &["a", "b", "é", "😈", "x\"y", "a,b", "two\nlines", " "];
const NAMES: &[&str] = &[
    "a",
    "b",
    "",
    "a",
    "é",
    "😈",
    "x y",
    "has,comma",
    "\"q\"",
    "column_1",
    "a_2",
    "count",
    "SELECT",
    " ",
];

/// Draws one case from `rng`.
pub fn generate(rng: &mut ChaCha8Rng, support: Support) -> CsvCase {
    if rng.gen_bool(0.25) {
        return with_defect(rng, support);
    }
    let delimiter = *[b',', b',', b';', b'\t', b'|'].choose(rng).unwrap();
    let quote = if rng.gen_bool(0.9) { b'"' } else { b'\'' };
    let null_string = rng.gen_bool(0.2).then(|| {
        ["NULL", "\\N", "", "NA", "x"]
            .choose(rng)
            .unwrap()
            .to_string()
    });
    let width = rng.gen_range(1..7);
    let rows = *[0usize, 1, 2, 5, 20, 100].choose(rng).unwrap();
    let kinds: Vec<Kind> = (0..width)
        .map(|_| {
            *[
                Kind::Int,
                Kind::Float,
                Kind::Ts,
                Kind::Str,
                Kind::Mixed,
                Kind::Empty,
            ]
            .choose(rng)
            .unwrap()
        })
        .collect();
    let endings: &[&str] = match rng.gen_range(0..4) {
        0 => &["\r\n"],
        1 => &["\n", "\r\n", "\r"],
        _ => &["\n"],
    };
    let header = rng.gen_bool(0.85);
    let mut text = Vec::new();
    if header {
        let names: Vec<String> = (0..width)
            .map(|i| {
                if rng.gen_bool(0.7) {
                    format!("c{i}")
                } else {
                    NAMES.choose(rng).unwrap().to_string()
                }
            })
            .collect();
        write_record(rng, &mut text, &names, delimiter, quote);
        text.extend_from_slice(endings.choose(rng).unwrap().as_bytes());
    }
    for _ in 0..rows {
        let fields: Vec<String> = kinds
            .iter()
            .map(|&k| value(rng, k, STRINGS, null_string.as_deref()))
            .collect();
        write_record(rng, &mut text, &fields, delimiter, quote);
        text.extend_from_slice(endings.choose(rng).unwrap().as_bytes());
    }
    if rng.gen_bool(0.2) && !text.is_empty() {
        // No newline after the last record.
        let ending = text
            .iter()
            .rev()
            .take_while(|b| **b == b'\n' || **b == b'\r');
        let cut = text.len() - ending.count();
        text.truncate(cut);
    }
    let max_line_bytes = if rng.gen_bool(0.3) {
        *[1usize, 2, 8, 16, 64, 256, 4096].choose(rng).unwrap()
    } else {
        LoadOptions::default().max_line_bytes
    };
    for _ in 0..rng.gen_range(0..4) {
        mutate(rng, &mut text, max_line_bytes);
    }
    if rng.gen_bool(0.12) {
        text = gzip(rng, &text);
    }
    let plain_len_lines = count_lines(&inflated(&text));
    let columns = rng.gen_bool(0.1).then(|| {
        let n = if rng.gen_bool(0.7) {
            width
        } else {
            rng.gen_range(0..9)
        };
        (0..n).map(|i| format!("n{i}")).collect()
    });
    let options = LoadOptions {
        header: if rng.gen_bool(0.9) { header } else { !header },
        columns,
        partition_rows: *[1usize, 2, 3, 7, 64, 65_536].choose(rng).unwrap(),
        delimiter: rng.gen_bool(0.6).then_some(delimiter),
        quote,
        null_string,
        max_line_bytes,
        replace: true,
        ..LoadOptions::default()
    };
    CsvCase {
        bytes: text,
        options,
        expected: None,
        plain_len_lines,
    }
}

/// A value of kind `k` as its field text (before quoting); the empty text
/// or `null` is NULL.
fn value(rng: &mut ChaCha8Rng, k: Kind, strings: &[&str], null: Option<&str>) -> String {
    if rng.gen_bool(0.1) {
        return null.unwrap_or("").to_string();
    }
    let pool = match k {
        Kind::Int => INTS,
        Kind::Float => FLOATS,
        Kind::Ts => TIMESTAMPS,
        Kind::Str => strings,
        Kind::Empty => return String::new(),
        Kind::Mixed => *[INTS, FLOATS, TIMESTAMPS, strings].choose(rng).unwrap(),
    };
    pool.choose(rng).unwrap().to_string()
}

/// Appends `fields` as one record, quoting a field that needs it (and some
/// that do not).
fn write_record(
    rng: &mut ChaCha8Rng,
    out: &mut Vec<u8>,
    fields: &[String],
    delimiter: u8,
    quote: u8,
) {
    for (i, f) in fields.iter().enumerate() {
        if i > 0 {
            out.push(delimiter);
        }
        let needs = f
            .bytes()
            .any(|b| b == delimiter || b == quote || b == b'\n' || b == b'\r');
        if needs || rng.gen_bool(0.05) {
            out.push(quote);
            for b in f.bytes() {
                if b == quote {
                    out.push(quote);
                }
                out.push(b);
            }
            out.push(quote);
        } else {
            out.extend_from_slice(f.as_bytes());
        }
    }
}

/// Bytes spliced in by mutations.
const BYTES: &[u8] = &[
    0x00, 0xff, 0xc3, 0x80, 0xef, b'"', b'\'', b',', b';', b'\t', b'|', b'\n', b'\r', b' ', b'a',
    b'1', b'.', b'-',
];

/// Breaks `text` once at the byte level.
fn mutate(rng: &mut ChaCha8Rng, text: &mut Vec<u8>, max_line_bytes: usize) {
    let len = text.len();
    let at = rng.gen_range(0..=len);
    match rng.gen_range(0..12) {
        0 if len > 0 => text[at.min(len - 1)] = *BYTES.choose(rng).unwrap(),
        1 => {
            for _ in 0..rng.gen_range(1..4) {
                text.insert(at, *BYTES.choose(rng).unwrap());
            }
        }
        2 if len > 0 => {
            text.remove(at.min(len - 1));
        }
        3 => text.truncate(at),
        4 | 5 => {
            // Duplicate or delete the line around `at`.
            let start = text[..at]
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(0, |p| p + 1);
            let end = text[at..]
                .iter()
                .position(|&b| b == b'\n')
                .map_or(len, |p| at + p + 1);
            if rng.gen_bool(0.5) {
                let line = text[start..end].to_vec();
                text.splice(end..end, line);
            } else {
                text.drain(start..end);
            }
        }
        6 => {
            let bom: &[u8] = [
                &b"\xef\xbb\xbf"[..],
                b"\xef\xbb\xbf\xef\xbb\xbf",
                b"\xff\xfe",
                b"\xef\xbb",
            ]
            .choose(rng)
            .unwrap();
            let at = if rng.gen_bool(0.8) { 0 } else { at };
            text.splice(at..at, bom.iter().copied());
        }
        7 => {
            // A field around the line limit (at most 1 MiB).
            let n = max_line_bytes.min(1 << 20) + rng.gen_range(0..4) - 1;
            let fill = *[b'x', b'"', b',', b'\n'].choose(rng).unwrap();
            text.splice(at..at, std::iter::repeat_n(fill, n));
        }
        8 => {
            let q: &[u8] = [&b"\"\""[..], b"\"", b"\"\"\"", b"'"].choose(rng).unwrap();
            text.splice(at..at, q.iter().copied());
        }
        9 => {
            let blank: &[u8] = [&b"\n\n"[..], b"\r\n\r\n", b"  \n", b"\n,\n", b"\r"]
                .choose(rng)
                .unwrap();
            text.splice(at..at, blank.iter().copied());
        }
        10 => {
            // Change every line ending.
            let to: &[u8] = [&b"\r"[..], b"\r\n", b"\n\r", b"\n"].choose(rng).unwrap();
            let mut out = Vec::with_capacity(text.len());
            for &b in text.iter() {
                if b == b'\n' {
                    out.extend_from_slice(to);
                } else {
                    out.push(b);
                }
            }
            *text = out;
        }
        _ => {
            for _ in 0..rng.gen_range(1..5) {
                let p = rng.gen_range(0..=text.len());
                text.insert(p, 0);
            }
        }
    }
}

/// Gzips `text` and sometimes breaks the stream: cut short, a byte changed,
/// garbage after it, a second member, or only the magic bytes.
fn gzip(rng: &mut ChaCha8Rng, text: &[u8]) -> Vec<u8> {
    let compress = |t: &[u8]| {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(t).unwrap();
        e.finish().unwrap()
    };
    let mut z = compress(text);
    match rng.gen_range(0..10) {
        0 => z.truncate(rng.gen_range(0..=z.len())),
        1 => {
            let at = rng.gen_range(0..z.len());
            z[at] ^= 1 << rng.gen_range(0..8);
        }
        2 => z.extend_from_slice(b"garbage\n"),
        3 => {
            let again = compress(text);
            z.extend_from_slice(&again);
        }
        4 => z = b"\x1f\x8b".to_vec(),
        5 => z = compress(&z),
        _ => {}
    }
    z
}

/// `bytes` as the loader reads them: inflated (every gzip member, as far
/// as they inflate) when they start with gzip's magic bytes.
fn inflated(bytes: &[u8]) -> Vec<u8> {
    if !bytes.starts_with(b"\x1f\x8b") {
        return bytes.to_vec();
    }
    let mut out = Vec::new();
    let mut decoder = flate2::read::MultiGzDecoder::new(bytes);
    let mut buf = [0u8; 8192];
    while let Ok(n) = std::io::Read::read(&mut decoder, &mut buf) {
        if n == 0 {
            break;
        }
        out.extend_from_slice(&buf[..n]);
    }
    out
}

/// Lines of `text` as an editor counts them: newlines plus one.
fn count_lines(text: &[u8]) -> u64 {
    text.iter().filter(|&&b| b == b'\n').count() as u64 + 1
}

/// A clean file with one defect whose position is known.
fn with_defect(rng: &mut ChaCha8Rng, support: Support) -> CsvCase {
    let delimiter = if support.delimiter {
        *[b',', b';', b'\t', b'|'].choose(rng).unwrap()
    } else {
        b','
    };
    let quote = b'"';
    let width = rng.gen_range(1..6);
    let rows = rng.gen_range(1..40);
    let kinds: Vec<Kind> = (0..width)
        .map(|_| {
            *[Kind::Int, Kind::Float, Kind::Ts, Kind::Str]
                .choose(rng)
                .unwrap()
        })
        .collect();
    let ending = *["\n", "\r\n"].choose(rng).unwrap();
    let mut records: Vec<Vec<u8>> = Vec::new();
    let names: Vec<String> = (0..width).map(|i| format!("c{i}")).collect();
    let mut r = Vec::new();
    write_record(rng, &mut r, &names, delimiter, quote);
    records.push(r);
    for _ in 0..rows {
        let fields: Vec<String> = kinds
            .iter()
            .map(|&k| value(rng, k, PLAIN_STRINGS, None))
            .collect();
        let mut r = Vec::new();
        write_record(rng, &mut r, &fields, delimiter, quote);
        records.push(r);
    }
    // The record (1-based, after the header) that gets the defect.
    let bad = rng.gen_range(1..records.len());
    let line_of = |records: &[Vec<u8>], k: usize| -> u64 {
        1 + records[..k]
            .iter()
            .map(|r| r.iter().filter(|&&b| b == b'\n').count() as u64 + 1)
            .sum::<u64>()
    };
    let line = line_of(&records, bad);
    let mut max_line_bytes = LoadOptions::default().max_line_bytes;
    let (what, column, must_fail, unterminated) = match rng.gen_range(0..4) {
        0 => {
            // Too few or too many fields.
            let mut m = rng.gen_range(1..width + 4);
            if m == width {
                m += 1;
            }
            let fields: Vec<String> = (0..m).map(|_| "1".to_string()).collect();
            let mut r = Vec::new();
            write_record(rng, &mut r, &fields, delimiter, quote);
            records[bad] = r;
            ("ragged record", Some(m.min(width) as u64 + 1), true, false)
        }
        1 => {
            // A field that is not UTF-8.
            let j = rng.gen_range(0..width);
            let mut r = Vec::new();
            for c in 0..width {
                if c > 0 {
                    r.push(delimiter);
                }
                if c == j {
                    r.extend_from_slice(b"x\xff\xfey");
                } else {
                    r.push(b'1');
                }
            }
            records[bad] = r;
            ("invalid utf-8", Some(j as u64 + 1), true, false)
        }
        2 => {
            // A quote opened in the last record and never closed.
            let mut r = Vec::new();
            for c in 0..width {
                if c > 0 {
                    r.push(delimiter);
                }
                if c + 1 == width {
                    r.extend_from_slice(b"\"open");
                } else {
                    r.push(b'1');
                }
            }
            records.truncate(bad + 1);
            records[bad] = r;
            ("unterminated quoted field", None, true, true)
        }
        _ => {
            // A record longer than the limit, every other one shorter.
            let longest = records
                .iter()
                .map(|r| r.len() + ending.len())
                .max()
                .unwrap_or(0);
            max_line_bytes = longest + rng.gen_range(1..32);
            let j = rng.gen_range(0..width);
            let mut r = Vec::new();
            for c in 0..width {
                if c > 0 {
                    r.push(delimiter);
                }
                if c == j {
                    r.extend(std::iter::repeat_n(b'z', max_line_bytes + 1));
                } else {
                    r.push(b'1');
                }
            }
            records[bad] = r;
            (
                "record longer than max_line_bytes",
                None,
                support.max_line_bytes,
                false,
            )
        }
    };
    let mut text = Vec::new();
    for (k, r) in records.iter().enumerate() {
        text.extend_from_slice(r);
        if !(unterminated && k == bad) {
            text.extend_from_slice(ending.as_bytes());
        }
    }
    let plain_len_lines = count_lines(&text);
    let options = LoadOptions {
        header: true,
        partition_rows: *[1usize, 2, 3, 7, 65_536].choose(rng).unwrap(),
        delimiter: Some(delimiter),
        quote,
        max_line_bytes,
        replace: true,
        ..LoadOptions::default()
    };
    CsvCase {
        bytes: text,
        options,
        expected: Some(Expected {
            what,
            line,
            column,
            must_fail,
        }),
        plain_len_lines,
    }
}
