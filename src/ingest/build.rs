//! Per-column builders for phase 1: they infer a column's kind over a span
//! and keep what phase 2 will encode: the parsed values while the kind is
//! numeric or timestamp, the text when the column is a string from its first
//! value on. A column that turns into a string after other values keeps
//! neither; phase 2 then parses its span again for the text.

use super::infer::{IntText, Kind, float_syntax, parse_float, parse_int, parse_timestamp_bytes};
use crate::store::Bitmap;

/// Values parsed so far, one per row (NULL rows hold a placeholder).
#[derive(Debug)]
pub(crate) enum Values {
    /// Nothing kept: the kind is [`Kind::Empty`] or [`Kind::Str`].
    None,
    /// Integers, or timestamps in microseconds.
    Ints(Vec<i64>),
    /// Floats.
    Floats(Vec<f64>),
}

/// The texts of one column's fields, back to back.
///
/// # Invariants
/// `ends` has one entry per row, non-decreasing; row `i` is
/// `bytes[ends[i - 1]..ends[i]]` (from 0 for row 0). The span this comes
/// from is shorter than 4 GiB, so the offsets fit in u32.
#[derive(Debug, Default)]
pub(crate) struct Texts {
    /// Field bytes.
    pub bytes: Vec<u8>,
    /// End offset of each row's text.
    pub ends: Vec<u32>,
}

impl Texts {
    /// Appends one row's text.
    #[inline]
    pub(crate) fn push(&mut self, field: &[u8]) {
        self.bytes.extend_from_slice(field);
        self.ends.push(self.bytes.len() as u32);
    }

    /// The first row whose text is not UTF-8.
    pub(crate) fn first_invalid_row(&self) -> Option<usize> {
        std::str::from_utf8(&self.bytes).err().map(|e| {
            let at = e.valid_up_to();
            self.ends.partition_point(|&end| end as usize <= at)
        })
    }
}

/// One column of a span while it is parsed.
///
/// # Invariants
/// `values` is `Ints` for kinds Int and Timestamp, `Floats` for Float and
/// `None` otherwise, and holds one entry per row observed; `text` holds one
/// entry per row observed, or is `None`. `validity`, when present, has one
/// bit per row of the span, cleared at NULL rows. Every field observed is
/// UTF-8, except in `text` and at row `bad_utf8`.
#[derive(Debug)]
pub(crate) struct ColumnBuilder {
    /// The narrowest kind holding every value observed.
    pub kind: Kind,
    /// The parsed values.
    pub values: Values,
    /// NULL rows, created at the first one.
    pub validity: Option<Bitmap>,
    /// Every row's text, kept for a column that was a string from its first
    /// non-empty value on.
    pub text: Option<Texts>,
    /// The first row found not to be UTF-8 outside `text`.
    pub bad_utf8: Option<usize>,
    rows: usize,
}

impl ColumnBuilder {
    /// A builder for a span of `rows` rows.
    pub(crate) fn new(rows: usize) -> ColumnBuilder {
        ColumnBuilder {
            kind: Kind::Empty,
            values: Values::None,
            validity: None,
            text: None,
            bad_utf8: None,
            rows,
        }
    }

    /// The first row whose field is not UTF-8.
    pub(crate) fn first_invalid_row(&self) -> Option<usize> {
        let in_text = self.text.as_ref().and_then(Texts::first_invalid_row);
        match (in_text, self.bad_utf8) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Observes row `row`'s field (raw bytes, quotes removed). Rows come in
    /// order, each once, and `row` is less than the span's row count.
    #[inline]
    pub(crate) fn observe(&mut self, row: usize, field: &[u8]) {
        if field.is_empty() {
            let rows = self.rows;
            self.validity
                .get_or_insert_with(|| Bitmap::new(rows, true))
                .set(row, false);
            match &mut self.values {
                Values::Ints(v) => v.push(0),
                Values::Floats(v) => v.push(0.0),
                Values::None => {}
            }
            if let Some(t) = &mut self.text {
                t.push(b"");
            }
            return;
        }
        match (self.kind, &mut self.values) {
            (Kind::Str, _) => match &mut self.text {
                Some(t) => t.push(field),
                None => self.check_utf8(row, field),
            },
            (Kind::Int, Values::Ints(v)) => match parse_int(field) {
                IntText::Int(x) => v.push(x),
                IntText::Overflow => self.become_str(row, field),
                IntText::NotInt => match float_value(field) {
                    Some(f) => {
                        let mut floats: Vec<f64> = Vec::with_capacity(self.rows);
                        // `as` rounds to nearest, ties to even, exactly as
                        // parsing the integer's decimal text would.
                        floats.extend(v.iter().map(|&x| x as f64));
                        floats.push(f);
                        self.kind = Kind::Float;
                        self.values = Values::Floats(floats);
                    }
                    None => self.become_str(row, field),
                },
            },
            (Kind::Float, Values::Floats(v)) => match parse_int(field) {
                IntText::Int(x) => v.push(x as f64),
                IntText::Overflow => self.become_str(row, field),
                IntText::NotInt => match float_value(field) {
                    Some(f) => v.push(f),
                    None => self.become_str(row, field),
                },
            },
            (Kind::Timestamp, Values::Ints(v)) => match parse_timestamp_bytes(field) {
                Some(t) => v.push(t),
                None => self.become_str(row, field),
            },
            _ => self.first_value(row, field),
        }
    }

    /// The first non-empty field, at row `row` (earlier rows are NULL).
    fn first_value(&mut self, row: usize, field: &[u8]) {
        match parse_int(field) {
            IntText::Int(x) => {
                let mut v = with_nulls(row, self.rows);
                v.push(x);
                self.kind = Kind::Int;
                self.values = Values::Ints(v);
            }
            IntText::Overflow => self.first_text(row, field),
            IntText::NotInt => {
                if let Some(f) = float_value(field) {
                    let mut v = with_nulls(row, self.rows);
                    v.push(f);
                    self.kind = Kind::Float;
                    self.values = Values::Floats(v);
                } else if let Some(t) = parse_timestamp_bytes(field) {
                    let mut v = with_nulls(row, self.rows);
                    v.push(t);
                    self.kind = Kind::Timestamp;
                    self.values = Values::Ints(v);
                } else {
                    self.first_text(row, field);
                }
            }
        }
    }

    /// Turns the column into a string column at its first non-empty value
    /// (earlier rows are NULL): its text is kept from here on.
    fn first_text(&mut self, row: usize, field: &[u8]) {
        let mut text = Texts {
            bytes: Vec::new(),
            ends: Vec::with_capacity(self.rows),
        };
        text.ends.resize(row, 0);
        text.push(field);
        self.kind = Kind::Str;
        self.values = Values::None;
        self.text = Some(text);
    }

    /// Turns a column that held other values into a string column: its text
    /// is not kept (phase 2 parses the span again).
    fn become_str(&mut self, row: usize, field: &[u8]) {
        self.kind = Kind::Str;
        self.values = Values::None;
        self.check_utf8(row, field);
    }

    fn check_utf8(&mut self, row: usize, field: &[u8]) {
        if self.bad_utf8.is_none() && std::str::from_utf8(field).is_err() {
            self.bad_utf8 = Some(row);
        }
    }
}

/// A vector of capacity `capacity` holding `row` placeholders.
fn with_nulls<T: Default + Clone>(row: usize, capacity: usize) -> Vec<T> {
    let mut v = Vec::with_capacity(capacity);
    v.resize(row, T::default());
    v
}

/// The value of a field with float syntax and a finite value.
#[inline]
fn float_value(field: &[u8]) -> Option<f64> {
    if !float_syntax(field) {
        return None;
    }
    parse_float(field).filter(|f| f.is_finite())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::parse_timestamp;

    fn build(values: &[&str]) -> ColumnBuilder {
        let mut b = ColumnBuilder::new(values.len());
        for (i, v) in values.iter().enumerate() {
            b.observe(i, v.as_bytes());
        }
        b
    }

    fn nulls(b: &ColumnBuilder) -> Vec<bool> {
        let n = b.rows;
        (0..n)
            .map(|i| b.validity.as_ref().is_some_and(|v| !v.get(i)))
            .collect()
    }

    #[test]
    fn keeps_parsed_values_while_the_kind_allows() {
        let b = build(&["", "3", "-7", ""]);
        assert_eq!(b.kind, Kind::Int);
        assert!(matches!(&b.values, Values::Ints(v) if v[1..3] == [3, -7] && v.len() == 4));
        assert_eq!(nulls(&b), [true, false, false, true]);

        let b = build(&["1", "", "2.5", "9007199254740993"]);
        assert_eq!(b.kind, Kind::Float);
        let Values::Floats(v) = &b.values else {
            panic!("{:?}", b.values)
        };
        assert_eq!(v[0], 1.0);
        assert_eq!(v[2], 2.5);
        assert_eq!(v[3], "9007199254740993".parse::<f64>().unwrap());
        assert_eq!(v.len(), 4);

        let b = build(&["", "2013-01-01", "2013-01-01 00:00:01"]);
        assert_eq!(b.kind, Kind::Timestamp);
        let t0 = parse_timestamp("2013-01-01").unwrap();
        assert!(matches!(&b.values, Values::Ints(v) if v[1..] == [t0, t0 + 1_000_000]));
    }

    #[test]
    fn widening_to_string_drops_values() {
        for values in [
            &["1", "x"][..],
            &["1.5", "99999999999999999999"],
            &["2013-01-01", "1"],
            &["1", "2013-01-01"],
            &["x", "1"],
            &["1", "1e400"],
        ] {
            let b = build(values);
            assert_eq!(b.kind, Kind::Str, "{values:?}");
            assert!(matches!(b.values, Values::None));
        }
        // Text is kept only for a column that is text from its first value.
        assert!(build(&["1", "x"]).text.is_none());
        let b = build(&["", "x", "1", ""]);
        let t = b.text.as_ref().unwrap();
        assert_eq!(
            (t.bytes.as_slice(), t.ends.as_slice()),
            (&b"x1"[..], &[0, 1, 2, 2][..])
        );
        assert_eq!(nulls(&b), [true, false, false, true]);
        let mut b = ColumnBuilder::new(2);
        b.observe(0, b"1");
        b.observe(1, b"\xff");
        assert_eq!(b.first_invalid_row(), Some(1));
        let mut b = ColumnBuilder::new(3);
        b.observe(0, b"a");
        b.observe(1, b"b");
        b.observe(2, b"\xc3");
        assert_eq!(b.first_invalid_row(), Some(2));

        let b = build(&["", ""]);
        assert_eq!(b.kind, Kind::Empty);
        assert_eq!(nulls(&b), [true, true]);
    }

    #[test]
    fn agrees_with_classify() {
        let samples = [
            "",
            "0",
            "-0",
            "12",
            "038302",
            "2.5",
            ".5",
            "1e5",
            "1e400",
            "nan",
            "x",
            "+5",
            "2013-01-01",
            "2013-01-01T00:00:00Z",
            "9223372036854775808",
        ];
        for a in samples {
            for b in samples {
                for c in samples {
                    let expected = [a, b, c]
                        .iter()
                        .fold(Kind::Empty, |k, v| k.observe(v.as_bytes()));
                    assert_eq!(build(&[a, b, c]).kind, expected, "{a:?} {b:?} {c:?}");
                }
            }
        }
    }
}
