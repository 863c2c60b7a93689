//! Finding record boundaries without parsing fields, so that the input can be
//! cut into chunks of exactly `partition_rows` records and parsed in
//! parallel, also while the input is still being read or inflated.
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
//!
//! A scanner over a prefix of the input ([`Scanner::partial`]) does not
//! take the end of its data for the end of the last record: it reports
//! [`Next::Incomplete`] until more data shows where the record ends.
//!
//! The delimiter and the quote are those of the load's dialect (`,` and
//! `"` above by default).

use memchr::{memchr2, memchr3};

use super::dialect::Syntax;

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
    /// Only for a partial scanner: the data ends before the next record is
    /// known to end; nothing was consumed.
    Incomplete,
}

/// Walks the records of a CSV text.
#[derive(Debug, Clone)]
pub(crate) struct Scanner<'a> {
    data: &'a [u8],
    pos: usize,
    line: u64,
    /// The data is the whole input (not a prefix of it).
    complete: bool,
    syntax: Syntax,
}

impl<'a> Scanner<'a> {
    /// A scanner at byte `pos` of `data`, which is on line 1.
    #[cfg(test)]
    pub(crate) fn new(data: &'a [u8], pos: usize) -> Scanner<'a> {
        Scanner::partial(data, pos, 1, true, Syntax::default())
    }

    /// A scanner at byte `pos` (a record boundary, on line `line`) of
    /// `data`, which is the whole input when `complete`, else a prefix of
    /// it, for records of the given syntax.
    pub(crate) fn partial(
        data: &'a [u8],
        pos: usize,
        line: u64,
        complete: bool,
        syntax: Syntax,
    ) -> Scanner<'a> {
        Scanner {
            data,
            pos,
            line,
            complete,
            syntax,
        }
    }

    /// The 1-based line at [`Scanner::pos`].
    pub(crate) fn line(&self) -> u64 {
        self.line
    }

    /// Byte offset just after the last record returned (after its
    /// terminator).
    pub(crate) fn pos(&self) -> usize {
        self.pos
    }

    /// Finds the next record and moves past it.
    ///
    /// Blank lines before a record belong to no record: a partial scan that
    /// reports [`Next::Incomplete`] has still moved past them.
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
            return if self.complete {
                Next::End
            } else {
                Next::Incomplete
            };
        }
        let (pos, line) = (self.pos, self.line);
        let next = self.record();
        if next == Next::Incomplete {
            (self.pos, self.line) = (pos, line);
        }
        next
    }

    /// The record at the scan position (not a line break).
    fn record(&mut self) -> Next {
        let d = self.data;
        let start = self.pos;
        let line = self.line;
        let Syntax { delimiter, quote } = self.syntax;
        let mut i = start;
        loop {
            let Some(k) = memchr3(quote, b'\n', b'\r', &d[i..]) else {
                if !self.complete {
                    return Next::Incomplete;
                }
                self.pos = d.len();
                return Next::Record { start, line };
            };
            let j = i + k;
            match d[j] {
                b if b == quote && (j == start || d[j - 1] == delimiter) => {
                    let quote_line = self.line;
                    let mut q = j + 1;
                    loop {
                        let Some(m) = memchr2(quote, b'\n', &d[q..]) else {
                            if !self.complete {
                                return Next::Incomplete;
                            }
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
                        } else if d.get(p + 1) == Some(&quote) {
                            q = p + 2;
                        } else if p + 1 == d.len() && !self.complete {
                            // The next byte may be an escaped quote's second half.
                            return Next::Incomplete;
                        } else {
                            i = p + 1;
                            break;
                        }
                    }
                }
                b'\n' => {
                    self.line += 1;
                    self.pos = j + 1;
                    return Next::Record { start, line };
                }
                b'\r' => {
                    self.pos = j + 1;
                    return Next::Record { start, line };
                }
                // A quote inside an unquoted field is data.
                _ => i = j + 1,
            }
        }
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
    fn a_partial_scan_waits_for_the_end_of_a_record() {
        let partial = |text: &str| {
            let mut s = Scanner::partial(text.as_bytes(), 0, 1, false, Syntax::default());
            let mut out = Vec::new();
            loop {
                let n = s.next_record();
                out.push(n);
                if !matches!(n, Next::Record { .. }) {
                    return (out, s.pos(), s.line());
                }
            }
        };
        assert_eq!(partial("a\nb"), (vec![rec(0, 1), Next::Incomplete], 2, 2));
        assert_eq!(partial("a\r"), (vec![rec(0, 1), Next::Incomplete], 2, 1));
        assert_eq!(partial("\n\n"), (vec![Next::Incomplete], 2, 3));
        assert_eq!(
            partial("a\n\r\nb"),
            (vec![rec(0, 1), Next::Incomplete], 4, 3)
        );
        // A quote at the end may be the first half of an escaped quote.
        assert_eq!(partial("\"a\""), (vec![Next::Incomplete], 0, 1));
        assert_eq!(partial("\"a\nb"), (vec![Next::Incomplete], 0, 1));
        assert_eq!(
            partial("x\n\"a\"\"\nb\"\n"),
            (vec![rec(0, 1), rec(2, 2), Next::Incomplete], 10, 4)
        );
    }
}
