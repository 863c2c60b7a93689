//! The CSV dialect of a load: the delimiter, the quote and the text that
//! stands for NULL.
//!
//! # Detecting the delimiter
//! As DuckDB's sniffer does: when no delimiter is given, the first records
//! of the input (those whole in its first MiB, at most [`SAMPLE_RECORDS`];
//! inflated first for gzip) are split with each of `,` `;` tab `|`, and the
//! first of these, in that order, that gives every record the same number
//! of fields, more than one, is the delimiter. Without one, `,` is (a file
//! of one column stays one column). A name ending in `.tsv` or `.tsv.gz`
//! means tab. When a record then has the wrong number of fields, the error
//! suggests another delimiter that splits the sample consistently into
//! more than one field (also when the header alone disagrees).
//!
//! # Fields and NULL
//! PostgreSQL's `COPY … (FORMAT csv)` rule: an unquoted empty field is
//! NULL, and so is an unquoted field equal to the null string; a quoted
//! field is never NULL, so `""` is the empty string (DuckDB reads files the
//! same way with `allow_quoted_nulls = false`).

use csv_core::{ReadRecordResult, Reader, ReaderBuilder};
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

/// Delimiters tried when none is given, in order of preference.
pub(crate) const CANDIDATES: [u8; 4] = [b',', b';', b'\t', b'|'];

/// Records of the input's start looked at to detect the delimiter (DuckDB
/// samples 20,480 rows too).
pub(crate) const SAMPLE_RECORDS: usize = 20_480;

/// How each candidate delimiter splits the records of a sample.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Sniffed {
    /// Per candidate: the delimiter, the field count every record of the
    /// sample has (`None` when they differ or there is none), and the
    /// same for the records after the first.
    pub splits: Vec<(u8, Option<usize>, Option<usize>)>,
}

/// Splits the records of `sample` (the input's start, from a record
/// boundary; `complete` when it is the whole input) with each candidate
/// delimiter, quotes being `quote`.
pub(crate) fn sniff(sample: &[u8], complete: bool, quote: u8) -> Sniffed {
    let splits = CANDIDATES
        .iter()
        .map(|&delimiter| {
            let counts = field_counts(sample, complete, Syntax { delimiter, quote });
            (
                delimiter,
                consistent(&counts),
                consistent(counts.get(1..).unwrap_or_default()),
            )
        })
        .collect();
    Sniffed { splits }
}

/// The one value of `counts`, when they are all equal.
fn consistent(counts: &[usize]) -> Option<usize> {
    let (&first, rest) = counts.split_first()?;
    rest.iter().all(|&c| c == first).then_some(first)
}

/// The field count of each whole record of `sample` (at most
/// [`SAMPLE_RECORDS`]); a record cut by the end of an incomplete sample is
/// left out.
fn field_counts(sample: &[u8], complete: bool, syntax: Syntax) -> Vec<usize> {
    // Some candidate delimiters are not allowed with some quotes.
    if syntax.delimiter == syntax.quote {
        return Vec::new();
    }
    let mut reader = syntax.reader();
    let mut out = vec![0u8; 1 << 16];
    let mut ends = vec![0usize; 64];
    let (mut pos, mut fields) = (0, 0);
    let mut counts = Vec::new();
    while counts.len() < SAMPLE_RECORDS {
        if pos == sample.len() && !complete {
            break;
        }
        let (res, nin, _, nend) = reader.read_record(&sample[pos..], &mut out, &mut ends[fields..]);
        pos += nin;
        fields += nend;
        match res {
            ReadRecordResult::InputEmpty => {}
            // Only the count matters: the output is overwritten.
            ReadRecordResult::OutputFull => {}
            ReadRecordResult::OutputEndsFull => ends.resize(ends.len() * 2, 0),
            ReadRecordResult::Record => {
                counts.push(fields);
                fields = 0;
            }
            ReadRecordResult::End => break,
        }
    }
    counts
}

impl Sniffed {
    /// The delimiter to use: the first candidate that splits every record
    /// into the same number of fields, more than one, else `,`.
    pub(crate) fn choose(&self) -> u8 {
        self.splits
            .iter()
            .find(|(_, all, _)| all.is_some_and(|n| n > 1))
            .map_or(b',', |&(d, _, _)| d)
    }

    /// What to suggest when `used` gives a record the wrong number of
    /// fields: another delimiter that splits the sample (or all of it but
    /// its first record) consistently into more than one field.
    pub(crate) fn hint(&self, used: u8) -> Option<String> {
        let fits = |n: Option<usize>| n.is_some_and(|n| n > 1);
        let (d, _, _) = self
            .splits
            .iter()
            .filter(|(d, _, _)| *d != used)
            .find(|(_, all, _)| fits(*all))
            .or_else(|| {
                self.splits
                    .iter()
                    .filter(|(d, _, _)| *d != used)
                    .find(|(_, _, rest)| fits(*rest))
            })?;
        let (shown, looks) = match d {
            b'\t' => ("\\t".to_string(), "tab".to_string()),
            d => ((*d as char).to_string(), format!("'{}'", *d as char)),
        };
        Some(format!(
            "the file looks {looks}-separated: try --delimiter '{shown}'"
        ))
    }
}

/// True when `name` calls for tab-separated values: it ends in `.tsv` or
/// `.tsv.gz` (in any case).
pub(crate) fn tab_separated_name(name: &std::path::Path) -> bool {
    let name = name.to_string_lossy().to_ascii_lowercase();
    name.ends_with(".tsv") || name.ends_with(".tsv.gz")
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
    fn the_sniffer_picks_the_first_consistent_delimiter() {
        let cases: &[(&str, u8)] = &[
            ("a,b,c\n1,2,3\n", b','),
            ("a;b;c\n1;2;3\n", b';'),
            ("a\tb\n1\t2\n", b'\t'),
            ("a|b\n1|2\n", b'|'),
            // Commas inside quotes do not count.
            ("a;b\n\"1,5\";2\n\"x,y,z\";3\n", b';'),
            // Decimal commas make `,` inconsistent.
            ("a;b\n1,5;2\n3;4,25\n", b';'),
            // A tie goes to `,`.
            ("a,b;c\n1,2;3\n", b','),
            // One column, or nothing consistent: `,`.
            ("name\nAlice\nBob\n", b','),
            ("a,b\n1;2;3\n", b','),
            ("", b','),
        ];
        for &(text, expected) in cases {
            let sniffed = sniff(text.as_bytes(), true, b'"');
            assert_eq!(sniffed.choose(), expected, "{text:?}");
        }
        // An incomplete sample leaves its last, cut record out.
        let sniffed = sniff(b"a;b\n1;2\n3;4;5", false, b'"');
        assert_eq!(sniffed.choose(), b';');
        assert_eq!(sniff(b"a;b\n1;2\n3;4;5", true, b'"').choose(), b',');
    }

    #[test]
    fn the_hint_names_another_delimiter_that_fits() {
        let hint = |text: &str, used: u8| sniff(text.as_bytes(), true, b'"').hint(used);
        assert_eq!(
            hint("a;b;c\n1;2;3\n", b','),
            Some("the file looks ';'-separated: try --delimiter ';'".into())
        );
        assert_eq!(
            hint("a\tb\n1\t2\n", b','),
            Some("the file looks tab-separated: try --delimiter '\\t'".into())
        );
        // A header that disagrees with the records after it.
        assert_eq!(
            hint("a,b,c\n1;2;3\n4;5;6\n", b','),
            Some("the file looks ';'-separated: try --delimiter ';'".into())
        );
        assert_eq!(hint("a,b\n1,2\n", b','), None);
        assert!(tab_separated_name(std::path::Path::new("x/Y.TSV.gz")));
        assert!(!tab_separated_name(std::path::Path::new("tsv.csv")));
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
