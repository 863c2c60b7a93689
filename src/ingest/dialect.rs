//! The CSV dialect of a load: the delimiter, the quote and the text that
//! stands for NULL.
//!
//! # Fields and NULL
//! PostgreSQL's `COPY … (FORMAT csv)` rule: an unquoted empty field is
//! NULL, and so is an unquoted field equal to the null string; a quoted
//! field is never NULL, so `""` is the empty string (DuckDB reads files the
//! same way with `allow_quoted_nulls = false`).

use csv_core::{Reader, ReaderBuilder};
use memchr::{memchr, memchr3};

/// The bytes that shape records: the field delimiter and the quote.
///
/// # Invariants
/// Both are ASCII, neither is `\n` or `\r`, and they differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Syntax {
    /// Ends a field.
    pub delimiter: u8,
    /// Opens and closes a quoted field; doubled inside one for itself.
    pub quote: u8,
}

impl Default for Syntax {
    fn default() -> Self {
        Syntax {
            delimiter: b',',
            quote: b'"',
        }
    }
}

impl Syntax {
    /// A `csv-core` reader for this syntax (RFC 4180 otherwise: doubled
    /// quotes, `\n`, `\r` or `\r\n` ending a record).
    pub(crate) fn reader(&self) -> Reader {
        ReaderBuilder::new()
            .delimiter(self.delimiter)
            .quote(self.quote)
            .build()
    }
}

/// How to read the fields of one input.
#[derive(Debug, Clone, Default)]
pub(crate) struct Dialect {
    /// Delimiter and quote.
    pub syntax: Syntax,
    /// An unquoted field with this text is NULL (besides an empty one).
    pub null_string: Option<Box<[u8]>>,
}

impl Dialect {
    /// Whether an unquoted field with text `field` is NULL.
    #[inline(always)]
    pub(crate) fn is_null_text(&self, field: &[u8]) -> bool {
        field.is_empty() || self.null_string.as_deref().is_some_and(|n| n == field)
    }
}

/// Writes to `quoted` whether each field of the record `raw` (its text as
/// in the input, possibly after blank lines) starts with a quote, following
/// `csv-core`'s grammar: a quote opens a quoted field only as the field's
/// first byte; inside, a doubled quote is one quote and any other quote
/// closes the field; after the close, text up to the delimiter is data.
pub(crate) fn quoted_fields(raw: &[u8], syntax: Syntax, quoted: &mut Vec<bool>) {
    quoted.clear();
    let Syntax { delimiter, quote } = syntax;
    let mut i = raw
        .iter()
        .position(|&b| b != b'\n' && b != b'\r')
        .unwrap_or(raw.len());
    loop {
        let is_quoted = raw.get(i) == Some(&quote);
        quoted.push(is_quoted);
        if is_quoted {
            i += 1;
            loop {
                let Some(k) = memchr(quote, &raw[i..]) else {
                    return;
                };
                i += k + 1;
                if raw.get(i) == Some(&quote) {
                    i += 1;
                } else {
                    break;
                }
            }
        }
        match memchr3(delimiter, b'\n', b'\r', &raw[i..]) {
            Some(k) if raw[i + k] == delimiter => i += k + 1,
            _ => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quoted(raw: &str, syntax: Syntax) -> Vec<bool> {
        let mut out = Vec::new();
        quoted_fields(raw.as_bytes(), syntax, &mut out);
        out
    }

    #[test]
    fn quoted_fields_follow_the_record_grammar() {
        let s = Syntax::default();
        assert_eq!(quoted("a,\"\",c\n", s), [false, true, false]);
        assert_eq!(quoted("\n\r\n\"\",,\n", s), [true, false, false]);
        assert_eq!(quoted("\"a,\"\"b\",x\"y\",", s), [true, false, false]);
        assert_eq!(quoted("\"a\"x\"y,\"\"", s), [true, true]);
        assert_eq!(quoted("\"a\nb\",\"\"\r\n", s), [true, true]);
        assert_eq!(quoted("", s), [false]);
        let tab = Syntax {
            delimiter: b'\t',
            quote: b'\'',
        };
        assert_eq!(quoted("'a\t'''\t\"\"\t''", tab), [true, false, true]);
    }
}
