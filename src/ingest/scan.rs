//! Finding record boundaries without parsing fields, so that the input can be
//! cut into chunks of exactly `partition_rows` records and parsed in
//! parallel.
//!
//! # Design
//! One sequential pass jumps with `memchr` from one quote or line terminator
//! to the next, tracking whether it is inside a quoted field. It follows the
//! record grammar of `csv-core` with its default settings (which is what
//! parses the chunks afterwards), so both agree on where every record
//! starts:
//! - `\n`, `\r` and `\r\n` end a record outside quotes; an empty line is no
//!   record at all;
//! - a `"` opens a quoted field only as the first byte of a field (at the
//!   start of the record or right after a `,`); elsewhere it is data;
//! - inside a quoted field `""` is an escaped quote, and any other `"`
//!   closes the field.
//!
//! Every `\n`, inside quotes or not, advances the physical line count.

use memchr::{memchr2, memchr3};

/// What [`Scanner::next_record`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Next {
    /// A complete record beginning at byte `start`, on 1-based line `line`.
    Record {
        /// Byte offset of the record's first byte.
        start: usize,
        /// 1-based physical line where the record starts.
        line: u64,
    },
    /// A record beginning at `start` whose quoted field opened on
    /// `quote_line` never closes before the end of the input.
    Unterminated {
        /// Byte offset of the record's first byte.
        start: usize,
        /// 1-based physical line where the record starts.
        line: u64,
        /// 1-based physical line of the opening quote.
        quote_line: u64,
    },
    /// No more records.
    End,
}

/// Walks the records of a CSV text.
#[derive(Debug, Clone)]
pub(crate) struct Scanner<'a> {
    data: &'a [u8],
    pos: usize,
    line: u64,
}

impl<'a> Scanner<'a> {
    /// A scanner at byte `pos` of `data`, which is on line 1.
    pub(crate) fn new(data: &'a [u8], pos: usize) -> Scanner<'a> {
        Scanner { data, pos, line: 1 }
    }

    /// Byte offset just after the last record returned (after its
    /// terminator).
    pub(crate) fn pos(&self) -> usize {
        self.pos
    }

    /// Finds the next record and moves past it.
    pub(crate) fn next_record(&mut self) -> Next {
        let d = self.data;
        while self.pos < d.len() {
            match d[self.pos] {
                b'\n' => self.line += 1,
                b'\r' => {}
                _ => break,
            }
            self.pos += 1;
        }
        if self.pos == d.len() {
            return Next::End;
        }
        let start = self.pos;
        let line = self.line;
        let mut i = start;
        loop {
            let Some(k) = memchr3(b'"', b'\n', b'\r', &d[i..]) else {
                self.pos = d.len();
                return Next::Record { start, line };
            };
            let j = i + k;
            match d[j] {
                b'"' if j == start || d[j - 1] == b',' => {
                    let quote_line = self.line;
                    let mut q = j + 1;
                    loop {
                        let Some(m) = memchr2(b'"', b'\n', &d[q..]) else {
                            self.pos = d.len();
                            return Next::Unterminated {
                                start,
                                line,
                                quote_line,
                            };
                        };
                        let p = q + m;
                        if d[p] == b'\n' {
                            self.line += 1;
                            q = p + 1;
                        } else if d.get(p + 1) == Some(&b'"') {
                            q = p + 2;
                        } else {
                            i = p + 1;
                            break;
                        }
                    }
                }
                b'"' => i = j + 1,
                b'\n' => {
                    self.line += 1;
                    self.pos = j + 1;
                    return Next::Record { start, line };
                }
                _ => {
                    self.pos = j + 1;
                    return Next::Record { start, line };
                }
            }
        }
    }
}

/// A run of whole records: `data[start..end]` holds `records` records, the
/// first starting at `start` on line `line`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Span {
    /// Byte offset of the first record.
    pub start: usize,
    /// Byte offset just past the last record (and any blank lines after it).
    pub end: usize,
    /// 1-based line of the first record.
    pub line: u64,
    /// Number of records.
    pub records: usize,
}

/// The records after the scanner's position, cut into spans of `per_span`
/// records (the last may be shorter), plus the unterminated record that
/// ended the input, if any (it is in no span). `on_records` is called with
/// the number of records scanned, now and then.
pub(crate) fn split(
    scanner: &mut Scanner<'_>,
    per_span: usize,
    mut on_records: impl FnMut(usize),
) -> (Vec<Span>, Option<Next>) {
    let per_span = per_span.max(1);
    let mut spans: Vec<Span> = Vec::new();
    let mut current: Option<Span> = None;
    let mut since_report = 0usize;
    loop {
        let next = scanner.next_record();
        let (start, line) = match next {
            Next::Record { start, line } => (start, line),
            Next::End | Next::Unterminated { .. } => {
                if let Some(mut span) = current.take() {
                    span.end = match next {
                        Next::Unterminated { start, .. } => start,
                        _ => scanner.pos(),
                    };
                    spans.push(span);
                }
                on_records(since_report);
                let unterminated = matches!(next, Next::Unterminated { .. }).then_some(next);
                return (spans, unterminated);
            }
        };
        if let Some(mut span) = current.take() {
            if span.records == per_span {
                span.end = start;
                spans.push(span);
            } else {
                span.records += 1;
                current = Some(span);
                since_report += 1;
                if since_report == 1 << 16 {
                    on_records(since_report);
                    since_report = 0;
                }
                continue;
            }
        }
        current = Some(Span {
            start,
            end: start,
            line,
            records: 1,
        });
        since_report += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn records(text: &str) -> Vec<Next> {
        let mut s = Scanner::new(text.as_bytes(), 0);
        let mut out = Vec::new();
        loop {
            let n = s.next_record();
            out.push(n);
            if !matches!(n, Next::Record { .. }) {
                return out;
            }
        }
    }

    fn rec(start: usize, line: u64) -> Next {
        Next::Record { start, line }
    }

    #[test]
    fn terminators_and_blank_lines() {
        assert_eq!(records("a,b\nc,d"), vec![rec(0, 1), rec(4, 2), Next::End]);
        assert_eq!(
            records("a\r\n\r\nb\r\n"),
            vec![rec(0, 1), rec(5, 3), Next::End]
        );
        assert_eq!(records("a\rb\n\n"), vec![rec(0, 1), rec(2, 1), Next::End]);
        assert_eq!(records(""), vec![Next::End]);
        assert_eq!(records("\n\n"), vec![Next::End]);
    }

    #[test]
    fn quotes_hide_terminators_and_count_lines() {
        assert_eq!(
            records("\"a\nb\",c\nd\n"),
            vec![rec(0, 1), rec(8, 3), Next::End]
        );
        assert_eq!(
            records("x,\"say \"\"hi\n\"\"\"\ny"),
            vec![rec(0, 1), rec(16, 3), Next::End]
        );
        // A quote in the middle of a field is data and opens nothing.
        assert_eq!(
            records("ab\"c,d\ne\"\n"),
            vec![rec(0, 1), rec(7, 2), Next::End]
        );
        // After a closing quote, further text up to the delimiter is data.
        assert_eq!(
            records("\"a\"x\"y\nz"),
            vec![rec(0, 1), rec(7, 2), Next::End]
        );
    }

    #[test]
    fn unterminated_quote_reports_opening_line() {
        assert_eq!(
            records("a,b\nc,\"d\ne\nf"),
            vec![
                rec(0, 1),
                Next::Unterminated {
                    start: 4,
                    line: 2,
                    quote_line: 2
                }
            ]
        );
    }

    #[test]
    fn split_cuts_exact_record_counts() {
        let text = "1\n2\n\n3\n4\n5\n6\n7";
        for per in 1..9 {
            let mut s = Scanner::new(text.as_bytes(), 0);
            let (spans, bad) = split(&mut s, per, |_| {});
            assert!(bad.is_none());
            let counts: Vec<usize> = spans.iter().map(|s| s.records).collect();
            let mut expected = vec![per; 7 / per];
            if 7 % per != 0 {
                expected.push(7 % per);
            }
            assert_eq!(counts, expected, "per {per}");
            assert_eq!(spans[0].start, 0);
            assert_eq!(spans.last().unwrap().end, text.len());
            for w in spans.windows(2) {
                assert_eq!(w[0].end, w[1].start);
            }
        }
        let mut s = Scanner::new(text.as_bytes(), 0);
        let (spans, _) = split(&mut s, 3, |_| {});
        assert_eq!(
            spans.iter().map(|s| s.line).collect::<Vec<_>>(),
            vec![1, 5, 8]
        );
    }
}
