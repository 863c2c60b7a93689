//! Per-column builders for phase 1: they infer a column's kind over a span
//! and keep what phase 2 will encode: the parsed values while the kind is
//! numeric or timestamp, the distinct texts and one id per row when the
//! column is a string from its first value on. A column that turns into a
//! string after other values keeps neither; phase 2 then parses its span
//! again for the text.

use hashbrown::{DefaultHashBuilder, HashTable, hash_table::Entry};
use std::hash::BuildHasher;

use super::infer::{
    DateCache, FITS_NUMBER, Formats, FITS_TIMESTAMP, IntText, Kind, Number, fits, float_value, parse_float,
    parse_int, parse_number,
};
use crate::store::{Bitmap, DICTIONARY_PROBE_ROWS, MAX_DICTIONARY_LEN, dictionary_unlikely};
use crate::types::{MICROS_PER_DAY, is_iso_date_shape, timestamp_to_date};

/// Values parsed so far, one per row (NULL rows hold a placeholder).
#[derive(Debug)]
pub(crate) enum Values {
    /// Nothing kept: the kind is [`Kind::Empty`] or [`Kind::Str`].
    None,
    /// Integers, or timestamps in microseconds.
    Ints(Vec<i64>),
    /// Integers, while every one fits in 32 bits: half the memory of
    /// [`Values::Ints`] for the span's parsed values (most integer columns
    /// are counts, codes and ids), widened at the first that does not.
    Small(Vec<i32>),
    /// Floats.
    Floats(Vec<f64>),
}

impl Values {
    /// The integers as 64-bit values (`None` for other values).
    pub(crate) fn into_ints(self) -> Option<Vec<i64>> {
        match self {
            Values::Ints(v) => Some(v),
            Values::Small(v) => Some(v.into_iter().map(i64::from).collect()),
            Values::None | Values::Floats(_) => None,
        }
    }
}

/// The texts of one column's fields, one per row, most of them as byte
/// ranges of the span's input (no copy), the others (fields whose quotes
/// were removed) copied into `owned`.
///
/// # Invariants
/// `ranges` has one entry per row; `owned_rows` and `null_rows` are
/// strictly increasing. Row `i` is NULL when it is in `null_rows` (its
/// range is empty), else `owned[ranges[i]]` when `i` is in `owned_rows`,
/// else `input[ranges[i]]`, `input` being the span's text. The span is
/// shorter than 4 GiB, so the offsets fit in u32.
#[derive(Debug, Default)]
pub(crate) struct Texts {
    ranges: Vec<(u32, u32)>,
    owned: Vec<u8>,
    owned_rows: Vec<u32>,
    null_rows: Vec<u32>,
}

impl Texts {
    /// Room for `rows` rows.
    pub(crate) fn with_capacity(rows: usize) -> Texts {
        Texts {
            ranges: Vec::with_capacity(rows),
            ..Texts::default()
        }
    }

    /// Appends one row's text: `field`, which is `input[at..]` when `at` is
    /// given (else it is copied).
    #[inline]
    pub(crate) fn push(&mut self, field: &[u8], at: Option<u32>) {
        match at {
            Some(at) => self.ranges.push((at, at + field.len() as u32)),
            None => {
                let start = self.owned.len() as u32;
                self.owned.extend_from_slice(field);
                self.owned_rows.push(self.ranges.len() as u32);
                self.ranges.push((start, self.owned.len() as u32));
            }
        }
    }

    /// Appends a NULL row.
    pub(crate) fn push_null(&mut self) {
        self.null_rows.push(self.ranges.len() as u32);
        self.ranges.push((0, 0));
    }

    /// The NULL rows, ascending.
    pub(crate) fn null_rows(&self) -> &[u32] {
        &self.null_rows
    }

    /// Calls `f` with every row's text in order, `input` being the span's
    /// text.
    #[inline]
    pub(crate) fn for_each<'a>(&'a self, input: &'a [u8], mut f: impl FnMut(usize, &'a [u8])) {
        let mut owned = self.owned_rows.iter().peekable();
        for (row, &(a, b)) in self.ranges.iter().enumerate() {
            let source = if owned.next_if(|&&r| r as usize == row).is_some() {
                &self.owned
            } else {
                input
            };
            f(row, &source[a as usize..b as usize]);
        }
    }

    /// Calls `f` with every row's text in order, `text` being the span's
    /// text; false (after calling `f` for some rows) if a row's range is not
    /// at character boundaries or its copied text is not UTF-8.
    #[inline]
    pub(crate) fn for_each_str<'a>(
        &'a self,
        text: &'a str,
        mut f: impl FnMut(usize, &'a str),
    ) -> bool {
        let Ok(owned) = std::str::from_utf8(&self.owned) else {
            return false;
        };
        let mut owned_rows = self.owned_rows.iter().peekable();
        for (row, &(a, b)) in self.ranges.iter().enumerate() {
            let source = if owned_rows.next_if(|&&r| r as usize == row).is_some() {
                owned
            } else {
                text
            };
            match source.get(a as usize..b as usize) {
                Some(s) => f(row, s),
                None => return false,
            }
        }
        true
    }

    /// The first row whose text is not UTF-8.
    pub(crate) fn first_invalid_row(&self, input: &[u8]) -> Option<usize> {
        let mut bad = None;
        self.for_each(input, |row, text| {
            if bad.is_none() && std::str::from_utf8(text).is_err() {
                bad = Some(row);
            }
        });
        bad
    }
}

/// The texts of a string column interned while parsing: each distinct text
/// once, and one id per row, so that encoding needs no second look at the
/// text (see [`crate::store::Column::encode_string_ids`]).
///
/// # Invariants
/// `ends[id]` ends distinct text `id` in `arena` (it starts where the one
/// before ends); `hashes[id]` is its hash; `table` holds every id once;
/// `ids` has one entry per row (0 at NULL rows), each below `ends.len()`.
#[derive(Debug, Default)]
pub(crate) struct Interner {
    table: HashTable<u32>,
    hasher: DefaultHashBuilder,
    hashes: Vec<u64>,
    arena: Vec<u8>,
    ends: Vec<u32>,
    ids: Vec<u32>,
    /// Rows checked against the row before, and how many matched.
    repeat_checks: u32,
    repeats: u32,
    /// Rows of the span, and the valid rows and their bytes so far (for
    /// the probe, see [`Interner::dictionary_unlikely`]).
    rows: usize,
    valid: usize,
    valid_bytes: usize,
}

impl Interner {
    /// An interner for `rows` rows.
    fn with_capacity(rows: usize) -> Interner {
        Interner {
            ids: Vec::with_capacity(rows),
            rows,
            ..Interner::default()
        }
    }

    /// True right after the [`DICTIONARY_PROBE_ROWS`]th valid row when
    /// those rows make a dictionary unlikely to pay: the column will be
    /// packed, so interning the rest would be wasted (the store's encoder
    /// judges the same probe the same way, see [`dictionary_unlikely`]).
    fn dictionary_unlikely(&self) -> bool {
        self.valid == DICTIONARY_PROBE_ROWS
            && dictionary_unlikely(self.ends.len(), self.valid_bytes, self.rows)
    }

    /// Distinct text `id`.
    #[inline]
    fn text<'a>(arena: &'a [u8], ends: &[u32], id: u32) -> &'a [u8] {
        let id = id as usize;
        let start = if id == 0 { 0 } else { ends[id - 1] as usize };
        &arena[start..ends[id] as usize]
    }

    /// Appends a row with text `field`.
    #[inline]
    fn push(&mut self, field: &[u8]) {
        self.valid += 1;
        self.valid_bytes += field.len();
        // Runs of one value are common (flags, names in sorted data): check
        // the last id before hashing, as long as that pays (a quarter of the
        // checks or more find the same text).
        if self.repeat_checks < 64 || self.repeats * 4 >= self.repeat_checks {
            self.repeat_checks += 1;
            if let Some(&last) = self.ids.last()
                && (last as usize) < self.ends.len()
                && same_bytes(Self::text(&self.arena, &self.ends, last), field)
            {
                self.repeats += 1;
                self.ids.push(last);
                return;
            }
        }
        let hash = self.hasher.hash_one(field);
        let (arena, ends, hashes) = (&self.arena, &self.ends, &self.hashes);
        let entry = self.table.entry(
            hash,
            |&id| same_bytes(Self::text(arena, ends, id), field),
            |&id| hashes[id as usize],
        );
        let id = match entry {
            Entry::Occupied(e) => *e.get(),
            Entry::Vacant(e) => {
                let id = self.ends.len() as u32;
                e.insert(id);
                self.arena.extend_from_slice(field);
                self.ends.push(self.arena.len() as u32);
                self.hashes.push(hash);
                id
            }
        };
        self.ids.push(id);
    }

    /// Frees the lookup of texts (the hash table and the hashes) once
    /// every row is in: encoding reads only the texts and the ids.
    fn drop_lookup(&mut self) {
        self.table = HashTable::new();
        self.hashes = Vec::new();
    }

    /// Number of distinct texts.
    pub(crate) fn distinct_len(&self) -> usize {
        self.ends.len()
    }

    /// The distinct texts (as UTF-8, `None` if one is not) and the rows'
    /// ids.
    pub(crate) fn parts(&self) -> (Option<Vec<&str>>, &[u32]) {
        let distinct = std::str::from_utf8(&self.arena).ok().and_then(|all| {
            let mut start = 0;
            self.ends
                .iter()
                .map(|&end| {
                    let s = all.get(start..end as usize);
                    start = end as usize;
                    s
                })
                .collect()
        });
        (distinct, &self.ids)
    }

    /// The same rows as [`Texts`], every text copied; rows cleared in
    /// `validity` are NULL.
    fn into_texts(self, validity: Option<&Bitmap>) -> Texts {
        let mut null_rows = Vec::new();
        let ranges = self
            .ids
            .iter()
            .enumerate()
            .map(|(row, &id)| {
                if validity.is_some_and(|v| !v.get(row)) {
                    null_rows.push(row as u32);
                    return (0, 0);
                }
                let id = id as usize;
                let start = if id == 0 { 0 } else { self.ends[id - 1] };
                (start, self.ends[id])
            })
            .collect();
        // Room for the rows to come, so that the ranges are not moved (and
        // the old room left) as they grow.
        let mut ranges: Vec<(u32, u32)> = ranges;
        ranges.reserve(self.rows.saturating_sub(self.ids.len()));
        Texts {
            owned_rows: (0..self.ids.len() as u32).collect(),
            ranges,
            owned: self.arena,
            null_rows,
        }
    }

    /// The first valid row whose text is not UTF-8.
    fn first_invalid_row(&self, validity: Option<&Bitmap>) -> Option<usize> {
        let bad: Vec<bool> = (0..self.ends.len() as u32)
            .map(|id| std::str::from_utf8(Self::text(&self.arena, &self.ends, id)).is_err())
            .collect();
        if !bad.contains(&true) {
            return None;
        }
        self.ids
            .iter()
            .enumerate()
            .position(|(row, &id)| bad[id as usize] && validity.is_none_or(|v| v.get(row)))
    }
}

/// `a == b`, comparing short texts eight bytes at a time inline rather
/// than through a call to `memcmp`.
#[inline]
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    if a.len() > 24 {
        return a == b;
    }
    let (mut a8, mut b8) = (a.chunks_exact(8), b.chunks_exact(8));
    for (x, y) in (&mut a8).zip(&mut b8) {
        let x = u64::from_le_bytes(x.try_into().unwrap_or_default());
        let y = u64::from_le_bytes(y.try_into().unwrap_or_default());
        if x != y {
            return false;
        }
    }
    a8.remainder()
        .iter()
        .zip(b8.remainder())
        .all(|(x, y)| x == y)
}

/// The texts a string column keeps.
#[derive(Debug)]
pub(crate) enum Strings {
    /// Interned: distinct texts and ids.
    Interned(Interner),
    /// Every row's text, once a span has more distinct texts than a
    /// dictionary may hold.
    Texts(Texts),
}

impl Strings {
    /// Appends a row with text `field` (`input[at..]` of the span's text
    /// when `at` is given); `validity` marks the NULL rows so far.
    #[inline]
    fn push(&mut self, field: &[u8], at: Option<u32>, validity: Option<&Bitmap>) {
        match self {
            Strings::Interned(i) => {
                i.push(field);
                if i.distinct_len() > MAX_DICTIONARY_LEN || i.dictionary_unlikely() {
                    let i = std::mem::take(i);
                    *self = Strings::Texts(i.into_texts(validity));
                }
            }
            Strings::Texts(t) => t.push(field, at),
        }
    }

    #[inline]
    fn push_null(&mut self) {
        match self {
            Strings::Interned(i) => i.ids.push(0),
            Strings::Texts(t) => t.push_null(),
        }
    }
}

/// One column of a span while it is parsed.
///
/// # Invariants
/// `values` is `Small` or `Ints` for kind Int, `Ints` for Timestamp,
/// `Floats` for Float and `None` otherwise, and holds one entry per row observed; `strings` holds
/// one entry per row observed, or is `None`. `validity`, when present, has one
/// bit per row of the span, cleared at NULL rows. Every field observed is
/// UTF-8, except in `strings` and at row `bad_utf8`.
#[derive(Debug)]
pub(crate) struct ColumnBuilder {
    /// The narrowest kind holding every value observed.
    pub kind: Kind,
    /// The parsed values.
    pub values: Values,
    /// NULL rows, created at the first one.
    pub validity: Option<Bitmap>,
    /// The texts, kept for a column that was a string from its first
    /// non-empty value on.
    pub strings: Option<Strings>,
    /// The first row found not to be UTF-8 outside `text`.
    pub bad_utf8: Option<usize>,
    rows: usize,
    dates: DateCache,
    /// The first non-NULL value.
    first: Option<Misfit>,
    /// The census so far, once the column turned into a string after
    /// other values (see [`ColumnBuilder::census`]).
    census: Option<Box<Census>>,
}

impl ColumnBuilder {
    /// A builder for a span of `rows` rows.
    pub(crate) fn new(rows: usize, formats: Formats) -> ColumnBuilder {
        ColumnBuilder {
            kind: Kind::Empty,
            values: Values::None,
            validity: None,
            strings: None,
            bad_utf8: None,
            rows,
            dates: DateCache::with_formats(formats),
            first: None,
            census: None,
        }
    }

    /// Called once every row of the span is observed: frees what only
    /// observing needs (an interned column's hash table and hashes, about
    /// 1 MB for 65,536 distinct texts), before the span is encoded.
    pub(crate) fn finish(&mut self) {
        if let Some(Strings::Interned(i)) = &mut self.strings {
            i.drop_lookup();
        }
    }

    /// Whether every field observed is known to be UTF-8 without looking at
    /// the span's text again: `Some(true)` or `Some(false)`, or `None` when
    /// the column keeps per-row text whose check needs the span's text.
    /// (Numbers and timestamps are ASCII by their syntax; other fields are
    /// checked as they are observed, interned texts once each here.)
    pub(crate) fn utf8_ok(&self) -> Option<bool> {
        if self.bad_utf8.is_some() {
            return Some(false);
        }
        match &self.strings {
            // The arena being UTF-8 is not enough: two invalid texts can
            // join into a valid one ("\xf0\x9f" + "\x98\x88" is 😈), so
            // every text must also end on a character boundary.
            Some(Strings::Interned(i)) => Some(
                std::str::from_utf8(&i.arena)
                    .is_ok_and(|all| i.ends.iter().all(|&e| all.is_char_boundary(e as usize))),
            ),
            Some(Strings::Texts(_)) => None,
            None => Some(true),
        }
    }

    /// The first row whose field is not UTF-8, `input` being the span's
    /// text.
    pub(crate) fn first_invalid_row(&self, input: &[u8]) -> Option<usize> {
        let in_text = match &self.strings {
            Some(Strings::Interned(i)) => i.first_invalid_row(self.validity.as_ref()),
            Some(Strings::Texts(t)) => t.first_invalid_row(input),
            None => None,
        };
        match (in_text, self.bad_utf8) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Observes row `row`'s field (raw bytes, quotes removed; not NULL, but
    /// possibly empty), which is `input[at..]` of the span's text `input`
    /// when `at` is given. Rows come in order, each once (this or
    /// [`ColumnBuilder::observe_null`]), and `row` is less than the span's
    /// row count.
    #[inline(always)]
    pub(crate) fn observe(&mut self, row: usize, field: &[u8], at: Option<u32>) {
        // The common cases inline; every change of kind out of line.
        match (self.kind, &mut self.values) {
            (Kind::Float, Values::Floats(v)) => match parse_number(field) {
                Number::Int(x) => v.push(x as f64),
                Number::Float(f) => v.push(f),
                Number::Decimal => match parse_float(field) {
                    Some(f) => v.push(f),
                    None => self.become_str(row, field),
                },
                Number::Other => self.observe_float_slow(row, field),
            },
            (Kind::Int, Values::Small(v)) => match parse_number(field) {
                Number::Int(x) => match i32::try_from(x) {
                    Ok(x) => v.push(x),
                    Err(_) => self.widen(x),
                },
                Number::Float(f) => self.int_to_float(f),
                Number::Decimal | Number::Other => self.observe_int_slow(row, field),
            },
            (Kind::Int, Values::Ints(v)) => match parse_number(field) {
                Number::Int(x) => v.push(x),
                Number::Float(f) => self.int_to_float(f),
                Number::Decimal | Number::Other => self.observe_int_slow(row, field),
            },
            (Kind::Str, _) => self.observe_str(row, field, at),
            (Kind::Timestamp, Values::Ints(v)) => match self.dates.parse(field) {
                Some(t) => v.push(t),
                None => self.become_str(row, field),
            },
            (Kind::Date, Values::Ints(v)) => match self.dates.parse(field) {
                Some(t) if is_iso_date_shape(field) => v.push(timestamp_to_date(t)),
                Some(t) => self.date_to_timestamp(t),
                None => self.become_str(row, field),
            },
            _ => self.first_value(row, field, at),
        }
    }

    /// Observes a NULL field at row `row` (see [`ColumnBuilder::observe`]).
    #[inline(never)]
    pub(crate) fn observe_null(&mut self, row: usize) {
        let rows = self.rows;
        self.validity
            .get_or_insert_with(|| Bitmap::new(rows, true))
            .set(row, false);
        match &mut self.values {
            Values::Ints(v) => v.push(0),
            Values::Small(v) => v.push(0),
            Values::Floats(v) => v.push(0.0),
            Values::None => {}
        }
        if let Some(s) = &mut self.strings {
            s.push_null();
        }
    }

    /// A field of a string column.
    #[inline(never)]
    fn observe_str(&mut self, row: usize, field: &[u8], at: Option<u32>) {
        match &mut self.strings {
            Some(s) => s.push(field, at, self.validity.as_ref()),
            None => {
                if let Some(c) = &mut self.census {
                    c.observe(row, field, fits(field, &mut self.dates));
                }
                self.check_utf8(row, field);
            }
        }
    }

    /// A float column meets a value that is not a short number.
    #[cold]
    fn observe_float_slow(&mut self, row: usize, field: &[u8]) {
        let Values::Floats(v) = &mut self.values else {
            return;
        };
        match parse_int(field) {
            IntText::Int(x) => v.push(x as f64),
            IntText::Overflow => match parse_float(field) {
                Some(f) => v.push(f),
                None => self.become_str(row, field),
            },
            IntText::NotInt => match float_value(field) {
                Some(f) => v.push(f),
                None => self.become_str(row, field),
            },
        }
    }

    /// An integer column meets a value that is not a short integer.
    #[cold]
    fn observe_int_slow(&mut self, row: usize, field: &[u8]) {
        match parse_int(field) {
            IntText::Int(x) => match &mut self.values {
                Values::Ints(v) => v.push(x),
                Values::Small(v) => match i32::try_from(x) {
                    Ok(x) => v.push(x),
                    Err(_) => self.widen(x),
                },
                Values::None | Values::Floats(_) => {}
            },
            IntText::Overflow => match parse_float(field) {
                Some(f) => self.int_to_float(f),
                None => self.become_str(row, field),
            },
            IntText::NotInt => match float_value(field) {
                Some(f) => self.int_to_float(f),
                None => self.become_str(row, field),
            },
        }
    }

    /// Widens the integers of a column of 32-bit integers at a value `x`
    /// that does not fit.
    #[cold]
    fn widen(&mut self, x: i64) {
        let Values::Small(v) = &self.values else {
            return;
        };
        let mut wide: Vec<i64> = Vec::with_capacity(self.rows);
        wide.extend(v.iter().map(|&x| i64::from(x)));
        wide.push(x);
        self.values = Values::Ints(wide);
    }

    /// Turns a date column (days) into a timestamp column (µs) at a
    /// timestamp `t` that is not a date alone.
    #[cold]
    fn date_to_timestamp(&mut self, t: i64) {
        if let Values::Ints(v) = &mut self.values {
            // Days within ±25 million years: `parse_date` reads four-digit
            // years, so the product fits.
            for d in v.iter_mut() {
                *d *= MICROS_PER_DAY;
            }
            v.push(t);
        }
        self.kind = Kind::Timestamp;
    }

    /// Turns an integer column into a float column at a float value `f`.
    #[cold]
    fn int_to_float(&mut self, f: f64) {
        let mut floats: Vec<f64> = Vec::with_capacity(self.rows);
        // `as` rounds to nearest, ties to even, exactly as parsing the
        // integer's decimal text would.
        match &self.values {
            Values::Ints(v) => floats.extend(v.iter().map(|&x| x as f64)),
            Values::Small(v) => floats.extend(v.iter().map(|&x| f64::from(x))),
            Values::None | Values::Floats(_) => return,
        }
        floats.push(f);
        self.kind = Kind::Float;
        self.values = Values::Floats(floats);
    }

    /// The first non-NULL field, at row `row` (earlier rows are NULL).
    #[cold]
    fn first_value(&mut self, row: usize, field: &[u8], at: Option<u32>) {
        self.first = Some(Misfit::new(row, field));
        let int = parse_int(field);
        match int {
            IntText::Int(x) => {
                self.kind = Kind::Int;
                self.values = match i32::try_from(x) {
                    Ok(x) => {
                        let mut v = with_nulls(row, self.rows);
                        v.push(x);
                        Values::Small(v)
                    }
                    Err(_) => {
                        let mut v = with_nulls(row, self.rows);
                        v.push(x);
                        Values::Ints(v)
                    }
                };
            }
            IntText::Overflow | IntText::NotInt => {
                let float = match int {
                    IntText::Overflow => parse_float(field),
                    _ => float_value(field),
                };
                if let Some(f) = float {
                    let mut v = with_nulls(row, self.rows);
                    v.push(f);
                    self.kind = Kind::Float;
                    self.values = Values::Floats(v);
                } else if let Some(t) = self.dates.parse(field) {
                    let mut v = with_nulls(row, self.rows);
                    if is_iso_date_shape(field) {
                        v.push(timestamp_to_date(t));
                        self.kind = Kind::Date;
                    } else {
                        v.push(t);
                        self.kind = Kind::Timestamp;
                    }
                    self.values = Values::Ints(v);
                } else {
                    self.first_text(row, field, at);
                }
            }
        }
    }

    /// Turns the column into a string column at its first non-empty value
    /// (earlier rows are NULL): its text is kept from here on.
    fn first_text(&mut self, row: usize, field: &[u8], at: Option<u32>) {
        let mut interner = Interner::with_capacity(self.rows);
        interner.ids.resize(row, 0);
        let mut text = Strings::Interned(interner);
        text.push(field, at, self.validity.as_ref());
        self.kind = Kind::Str;
        self.values = Values::None;
        self.strings = Some(text);
    }

    /// Turns a column that held other values into a string column: its text
    /// is not kept (phase 2 parses the span again), and from here on every
    /// value is counted for the census.
    fn become_str(&mut self, row: usize, field: &[u8]) {
        let mut census = self.typed_census(row);
        census.observe(row, field, fits(field, &mut self.dates));
        self.census = Some(Box::new(census));
        self.kind = Kind::Str;
        self.values = Values::None;
        self.check_utf8(row, field);
    }

    /// The census of rows `..row` of a column whose values there are all of
    /// its (numeric or timestamp) kind.
    fn typed_census(&self, row: usize) -> Census {
        let nulls = self
            .validity
            .as_ref()
            .map_or(0, |v| (0..row).filter(|&i| !v.get(i)).count());
        let values = (row - nulls) as u64;
        let mut census = Census {
            values,
            ..Census::default()
        };
        let misfit = match self.kind {
            Kind::Int | Kind::Float => CENSUS_TIMESTAMP,
            Kind::Timestamp | Kind::Date => CENSUS_NUMBER,
            Kind::Empty | Kind::Str => return census,
        };
        if values > 0 {
            census.misfits[misfit] = Misfits {
                count: values,
                first: self.first.clone(),
            };
        }
        census
    }

    /// The census of the whole span: how many values fit each narrower
    /// type. `input` is the span's text. Misfits carry their row; their
    /// line is for the caller to fill in.
    pub(crate) fn census(&self, input: &[u8]) -> Census {
        if self.kind != Kind::Str {
            return self.typed_census(self.rows);
        }
        if let Some(c) = &self.census {
            return c.as_ref().clone();
        }
        let mut census = Census::default();
        let mut dates = DateCache::with_formats(self.dates.formats());
        match &self.strings {
            Some(Strings::Interned(i)) => {
                let fit: Vec<u8> = (0..i.ends.len() as u32)
                    .map(|id| fits(Interner::text(&i.arena, &i.ends, id), &mut dates))
                    .collect();
                let valid = |row: usize| self.validity.as_ref().is_none_or(|v| v.get(row));
                if fit.iter().all(|&f| f == 0) {
                    // No value fits anything: no need to look at each row.
                    let values = (0..self.rows).filter(|&r| valid(r)).count() as u64;
                    let first = (0..self.rows)
                        .find(|&r| valid(r))
                        .map(|r| Misfit::new(r, Interner::text(&i.arena, &i.ends, i.ids[r])));
                    census.values = values;
                    for m in &mut census.misfits {
                        m.count = values;
                        m.first = first.clone();
                    }
                    return census;
                }
                for (row, &id) in i.ids.iter().enumerate() {
                    if valid(row) {
                        census.observe_with(row, fit[id as usize], || {
                            Interner::text(&i.arena, &i.ends, id)
                        });
                    }
                }
            }
            Some(Strings::Texts(t)) => {
                let mut nulls = t.null_rows().iter().peekable();
                t.for_each(input, |row, text| {
                    if nulls.next_if(|&&r| r as usize == row).is_none() {
                        census.observe(row, text, fits(text, &mut dates));
                    }
                });
            }
            None => {}
        }
        census
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

/// Longest text of a misfit value kept for a notice, in characters.
const MISFIT_CHARS: usize = 40;

/// A value that does not fit a type, for a notice: where it is and its
/// text, shortened to [`MISFIT_CHARS`] characters (the last being `…`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Misfit {
    /// Row in its span.
    pub row: usize,
    /// 1-based line of its record, once placed (0 before).
    pub line: u64,
    /// The text, shortened.
    pub text: String,
}

impl Misfit {
    fn new(row: usize, field: &[u8]) -> Misfit {
        let all = String::from_utf8_lossy(field);
        let text = if all.chars().count() > MISFIT_CHARS {
            let mut t: String = all.chars().take(MISFIT_CHARS - 1).collect();
            t.push('…');
            t
        } else {
            all.into_owned()
        };
        Misfit { row, line: 0, text }
    }
}

/// Values of a column that do not fit one narrower type.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Misfits {
    /// How many.
    pub count: u64,
    /// The first, in file order.
    pub first: Option<Misfit>,
}

/// How a column's non-NULL values fit the types narrower than string: what
/// a notice about a column typed as string because of a few values needs.
///
/// # Invariants
/// `misfits[k].count <= values`; `misfits[k].first` is `Some` exactly when
/// the count is not 0.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Census {
    /// Non-NULL values.
    pub values: u64,
    /// Values that are not numbers (index [`CENSUS_NUMBER`]) and values
    /// that are not timestamps (index [`CENSUS_TIMESTAMP`]).
    pub misfits: [Misfits; 2],
}

/// Index of [`Census::misfits`] counting values that are not numbers.
pub(crate) const CENSUS_NUMBER: usize = 0;
/// Index of [`Census::misfits`] counting values that are not timestamps.
pub(crate) const CENSUS_TIMESTAMP: usize = 1;

impl Census {
    /// Counts the value `field` at `row`, which fits the types in `fit` (a
    /// set of `FITS_*` bits).
    #[inline]
    fn observe(&mut self, row: usize, field: &[u8], fit: u8) {
        self.observe_with(row, fit, || field);
    }

    #[inline]
    fn observe_with<'a>(&mut self, row: usize, fit: u8, field: impl Fn() -> &'a [u8]) {
        self.values += 1;
        for (k, bit) in [FITS_NUMBER, FITS_TIMESTAMP].into_iter().enumerate() {
            if fit & bit == 0 {
                let m = &mut self.misfits[k];
                m.count += 1;
                if m.first.is_none() {
                    m.first = Some(Misfit::new(row, field()));
                }
            }
        }
    }

    /// Adds the census of a later part of the file.
    pub(crate) fn merge(&mut self, later: &Census) {
        self.values += later.values;
        for (m, l) in self.misfits.iter_mut().zip(&later.misfits) {
            m.count += l.count;
            if m.first.is_none() {
                m.first = l.first.clone();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::parse_timestamp;

    fn build(values: &[&str]) -> ColumnBuilder {
        let mut b = ColumnBuilder::new(values.len(), None);
        for (i, v) in values.iter().enumerate() {
            if v.is_empty() {
                b.observe_null(i);
            } else {
                b.observe(i, v.as_bytes(), None);
            }
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
        assert!(matches!(&b.values, Values::Small(v) if v[1..3] == [3, -7] && v.len() == 4));
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
    fn integers_are_kept_in_32_bits_until_one_does_not_fit() {
        let b = build(&["1", "", "-2147483648", "2147483647"]);
        assert!(matches!(&b.values, Values::Small(v) if *v == [1, 0, i32::MIN, i32::MAX]));
        for (values, expected) in [
            (&["1", "", "2147483648", "-5"][..], &[1, 0, 2_147_483_648, -5][..]),
            (&["-2147483649", "7"], &[-2_147_483_649, 7]),
            (&["1", "9007199254740993", "2"], &[1, 9_007_199_254_740_993, 2]),
        ] {
            let b = build(values);
            assert_eq!(b.kind, Kind::Int, "{values:?}");
            assert!(matches!(&b.values, Values::Ints(v) if v == expected), "{values:?}");
        }
        let b = build(&["1", "-3", "2.5"]);
        assert!(matches!(&b.values, Values::Floats(v) if *v == [1.0, -3.0, 2.5]));
        assert_eq!(
            build(&["", "3", "4000000000"]).values.into_ints(),
            Some(vec![0, 3, 4_000_000_000])
        );
    }

    #[test]
    fn big_integers_and_special_floats_make_floats() {
        for values in [
            &["1", "99999999999999999999", "nan", "-Infinity", "1e400"][..],
            &[
                "99999999999999999999",
                "99999999999999999999",
                "NaN",
                "-inf",
                "1e400",
            ],
            &["1.5", "99999999999999999999", "-nan", "-INF", "inf"],
        ] {
            let b = build(values);
            assert_eq!(b.kind, Kind::Float, "{values:?}");
            let Values::Floats(v) = &b.values else {
                panic!("{:?}", b.values)
            };
            assert_eq!(v[1], 1e20, "{values:?}");
            assert!(v[2].is_nan(), "{values:?}");
            assert_eq!(v[3], f64::NEG_INFINITY, "{values:?}");
            assert_eq!(v[4], f64::INFINITY, "{values:?}");
        }
    }

    #[test]
    fn widening_to_string_drops_values() {
        for values in [
            &["1", "x"][..],
            &["1.5", "0099"],
            &["2013-01-01", "1"],
            &["1", "2013-01-01"],
            &["x", "1"],
            &["1", "+inf"],
            &["nan", "2013-01-01"],
        ] {
            let b = build(values);
            assert_eq!(b.kind, Kind::Str, "{values:?}");
            assert!(matches!(b.values, Values::None));
        }
        // Text is kept only for a column that is text from its first value.
        assert!(build(&["1", "x"]).strings.is_none());
        let b = build(&["", "x", "1", "", "x"]);
        let Some(Strings::Interned(i)) = &b.strings else {
            panic!("{:?}", b.strings)
        };
        assert_eq!(i.parts(), (Some(vec!["x", "1"]), &[0, 0, 1, 0, 0][..]));
        assert_eq!(nulls(&b), [true, false, false, true, false]);
        let mut b = ColumnBuilder::new(2, None);
        b.observe(0, b"1", None);
        b.observe(1, b"\xff", None);
        assert_eq!(b.first_invalid_row(b""), Some(1));
        let mut b = ColumnBuilder::new(3, None);
        let input = b"a,b,\xc3";
        b.observe(0, b"a", Some(0));
        b.observe(1, b"b", None);
        b.observe(2, b"\xc3", Some(4));
        assert_eq!(b.first_invalid_row(input), Some(2));

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
