//! Hex EWKB points: strings like `0101000020E6100000` + 32 hex digits,
//! stored as their two coordinates with [`Alp`].
//!
//! The taxi `pickup` and `dropoff` columns are PostGIS extended WKB points
//! printed as upper-case hex: an 18-digit header (byte order, type Point
//! with the SRID flag, SRID 4326), then x and y as little-endian f64. As
//! text they are 50 bytes a row, and FSST only gets them to about 20 (hex
//! digits of random mantissa bits do not compress). Parsed, they are two
//! decimals with six places: two ALP columns of 4 bytes a row each (2.5
//! bit-packed).
//!
//! # Format
//! A [`HexPoints`] holds the header shared by every valid row and the x and
//! y coordinates as two [`Alp`] columns. It applies only when every valid
//! row is exactly the header followed by 32 upper-case hex digits, so
//! printing the coordinates back gives the row byte for byte; anything else
//! (lower-case hex, other geometry types, a second SRID) makes
//! [`HexPoints::encode`] return `None`.
//!
//! # Kernels
//! Equality against a constant parses the constant; a constant that is not
//! such a point equals no row. The coordinates are compared with ALP's
//! filter, then rows whose coordinate is a zero or NaN (where f64 equality
//! and string equality differ) are checked bit for bit.

use std::ops::Range;
use std::sync::Arc;

use super::alp::Alp;
use super::single::Single;
use super::bitmap::Bitmap;
use super::cmp::CmpOp;
use super::column::{Column, ColumnData};
use super::fsst::StringBatch;

/// Hex digits after the header: two f64.
const COORD_DIGITS: usize = 32;

/// The value of each upper-case hex digit; `0xFF` for every other byte.
const HEX_VALUE: [u8; 256] = {
    let mut t = [0xFFu8; 256];
    let mut c = 0;
    while c < 10 {
        t[b'0' as usize + c] = c as u8;
        c += 1;
    }
    let mut c = 0;
    while c < 6 {
        t[b'A' as usize + c] = 10 + c as u8;
        c += 1;
    }
    t
};

/// Parses 16 upper-case hex digits as a little-endian f64.
///
/// Branch-free over the digits: one table lookup each, and one test of
/// the OR of all of them at the end (the load parses two per row of every
/// point column; the branch per digit it replaces was 6% of loading the
/// taxi table, perf).
#[inline]
fn parse_f64(hex: &[u8]) -> Option<f64> {
    let hex: &[u8; 16] = hex.try_into().ok()?;
    let mut bytes = [0u8; 8];
    let mut bad = 0u8;
    for k in 0..8 {
        let hi = HEX_VALUE[hex[2 * k] as usize];
        let lo = HEX_VALUE[hex[2 * k + 1] as usize];
        bad |= hi | lo;
        bytes[k] = (hi << 4) | (lo & 15);
    }
    (bad & 0xF0 == 0).then(|| f64::from_le_bytes(bytes))
}

/// Appends `x` as 16 upper-case hex digits of its little-endian bytes
/// (one 16-byte append, not one push per digit).
fn push_hex(x: f64, out: &mut Vec<u8>) {
    const DIGITS: &[u8; 16] = b"0123456789ABCDEF";
    let mut hex = [0u8; 16];
    for (k, b) in x.to_le_bytes().into_iter().enumerate() {
        hex[2 * k] = DIGITS[(b >> 4) as usize];
        hex[2 * k + 1] = DIGITS[(b & 15) as usize];
    }
    out.extend_from_slice(&hex);
}

/// Splits a row into its coordinates if it is `header` + 32 hex digits.
fn parse_point(s: &[u8], header: &[u8]) -> Option<(f64, f64)> {
    let coords = s.strip_prefix(header)?;
    if coords.len() != COORD_DIGITS {
        return None;
    }
    Some((parse_f64(&coords[..16])?, parse_f64(&coords[16..])?))
}

/// One coordinate column: ALP digits, f32 codes when ALP declines (the
/// real 2013 sample's coordinates are float32 values with 14 decimals),
/// or plain f64 when both decline.
/// Reference-counted, so that it can be a float column of the same
/// partition (see [`share_coordinates`]).
#[derive(Debug, Clone, PartialEq)]
pub enum Coords {
    /// Decimal coordinates.
    Alp(Arc<Alp>),
    /// Single-precision coordinates.
    Single(Arc<Single>),
    /// Anything else, one f64 per row.
    Plain(Arc<Vec<f64>>),
}

impl Coords {
    fn encode(values: Vec<f64>, validity: Option<&Bitmap>) -> Coords {
        match Alp::encode(&values, validity) {
            Some(a) => Coords::Alp(Arc::new(a)),
            None => match Single::encode(&values, validity) {
                Some(f) => Coords::Single(Arc::new(f)),
                None => Coords::Plain(Arc::new(values)),
            },
        }
    }

    /// The data of a float column as coordinates, when it is ALP or f64.
    fn of_column(data: &ColumnData) -> Option<Coords> {
        match data {
            ColumnData::Alp(a) => Some(Coords::Alp(Arc::clone(a))),
            ColumnData::Single(f) => Some(Coords::Single(Arc::clone(f))),
            ColumnData::Float(v) => Some(Coords::Plain(Arc::clone(v))),
            _ => None,
        }
    }

    /// True when both are the same allocation.
    fn same_data(&self, other: &Coords) -> bool {
        match (self, other) {
            (Coords::Alp(a), Coords::Alp(b)) => Arc::ptr_eq(a, b),
            (Coords::Single(a), Coords::Single(b)) => Arc::ptr_eq(a, b),
            (Coords::Plain(a), Coords::Plain(b)) => Arc::ptr_eq(a, b),
            _ => false,
        }
    }

    /// The codec's name: `alp`, `f32` or `f64`.
    fn name(&self) -> &'static str {
        match self {
            Coords::Alp(_) => "alp",
            Coords::Single(_) => "f32",
            Coords::Plain(_) => "f64",
        }
    }

    fn len(&self) -> usize {
        match self {
            Coords::Alp(a) => a.len(),
            Coords::Single(f) => f.len(),
            Coords::Plain(v) => v.len(),
        }
    }

    /// The coordinate at row `i`.
    pub fn get(&self, i: usize) -> f64 {
        match self {
            Coords::Alp(a) => a.get(i),
            Coords::Single(f) => f.get(i),
            Coords::Plain(v) => v[i],
        }
    }

    fn heap_bytes(&self) -> usize {
        match self {
            Coords::Alp(a) => a.heap_bytes(),
            Coords::Single(f) => f.heap_bytes(),
            Coords::Plain(v) => v.len() * 8,
        }
    }

    fn decode_range(&self, range: Range<usize>, out: &mut Vec<f64>) {
        match self {
            Coords::Alp(a) => a.decode_range(range, out),
            Coords::Single(f) => f.decode_range(range, out),
            Coords::Plain(v) => out.extend_from_slice(&v[range]),
        }
    }

    fn decode_selection(&self, selection: &[u32], out: &mut Vec<f64>) {
        match self {
            Coords::Alp(a) => a.decode_selection(selection, out),
            Coords::Single(f) => f.decode_selection(selection, out),
            Coords::Plain(v) => out.extend(selection.iter().map(|&i| v[i as usize])),
        }
    }

    /// Mask words of the rows equal to `c` under `cmp_f64`.
    fn filter_eq(&self, c: f64) -> Vec<u64> {
        match self {
            Coords::Alp(a) => a.filter(CmpOp::Eq, c, None),
            Coords::Single(f) => f.filter(CmpOp::Eq, c, None),
            Coords::Plain(v) => v
                .chunks(64)
                .map(|ch| crate::kernel::block_mask(ch, |x| crate::types::cmp_f64(x, c).is_eq()))
                .collect(),
        }
    }
}

/// A partition's hex EWKB points as two coordinate columns.
///
/// # Invariants
/// For every valid row, `header + hex(x.get(i)) + hex(y.get(i))` is the
/// row's string. Where `shared[k]` is `Some(c)`, coordinate `k` (0: x,
/// 1: y) is the data of column `c` of the same partition, not a copy.
#[derive(Debug, Clone, PartialEq)]
pub struct HexPoints {
    header: String,
    x: Coords,
    y: Coords,
    shared: [Option<usize>; 2],
}

impl HexPoints {
    /// Encodes a partition's strings; `None` unless every valid row is a
    /// point with one shared header (see the module docs), or when the
    /// result would not be smaller than the packed strings. Each coordinate
    /// is ALP-encoded, or kept as f64 when ALP declines.
    pub fn encode(values: &[&str], validity: Option<&Bitmap>) -> Option<HexPoints> {
        let valid = |i: usize| validity.is_none_or(|v| v.get(i));
        let first = (0..values.len()).find(|&i| valid(i))?;
        let sample = values[first].as_bytes();
        let header = sample.get(..sample.len().checked_sub(COORD_DIGITS)?)?;
        let mut xs = Vec::with_capacity(values.len());
        let mut ys = Vec::with_capacity(values.len());
        for (i, s) in values.iter().enumerate() {
            let (x, y) = if valid(i) {
                parse_point(s.as_bytes(), header)?
            } else {
                (0.0, 0.0)
            };
            xs.push(x);
            ys.push(y);
        }
        let points = HexPoints {
            header: std::str::from_utf8(header).ok()?.to_string(),
            x: Coords::encode(xs, validity),
            y: Coords::encode(ys, validity),
            shared: [None, None],
        };
        (points.heap_bytes() < values.len() * (header.len() + COORD_DIGITS)).then_some(points)
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.x.len()
    }

    /// True when there are no rows.
    pub fn is_empty(&self) -> bool {
        self.x.len() == 0
    }

    /// The header every row starts with.
    pub fn header(&self) -> &str {
        &self.header
    }

    /// The x (longitude) column.
    pub fn x(&self) -> &Coords {
        &self.x
    }

    /// The y (latitude) column.
    pub fn y(&self) -> &Coords {
        &self.y
    }

    /// How the coordinates are stored, for `.schema`: `alp` when both are
    /// ALP, `f32` when both are f32 codes, `f64` when both are plain,
    /// `alp/f64` (the two names in order) when mixed; `= #7,#8`
    /// when both are the float columns at 1-based positions 7 and 8 of the
    /// table.
    pub fn coords_name(&self) -> String {
        if let [Some(x), Some(y)] = self.shared {
            return format!("= #{},#{}", x + 1, y + 1);
        }
        let (mut x, mut y) = (self.x.name(), self.y.name());
        if x == y {
            return x.to_string();
        }
        if x > y {
            std::mem::swap(&mut x, &mut y);
        }
        format!("{x}/{y}")
    }

    /// The columns whose data the x and y coordinates are (see
    /// [`share_coordinates`]).
    pub fn shared_columns(&self) -> [Option<usize>; 2] {
        self.shared
    }

    /// Heap bytes held: the header and the coordinate columns that are not
    /// another column's data (those are counted with that column).
    pub fn heap_bytes(&self) -> usize {
        let own = |c: &Coords, k: usize| {
            if self.shared[k].is_some() {
                0
            } else {
                c.heap_bytes()
            }
        };
        own(&self.x, 0) + own(&self.y, 1) + self.header.len()
    }

    /// The string at row `i` (meaningless at a NULL row).
    ///
    /// # Panics
    /// If `i >= len`.
    pub fn get(&self, i: usize) -> String {
        let mut out = Vec::with_capacity(self.header.len() + COORD_DIGITS);
        self.push_row(self.x.get(i), self.y.get(i), &mut out);
        String::from_utf8(out).unwrap_or_default()
    }

    fn push_row(&self, x: f64, y: f64, out: &mut Vec<u8>) {
        out.extend_from_slice(self.header.as_bytes());
        push_hex(x, out);
        push_hex(y, out);
    }

    /// Appends the strings of rows `range` to `out`.
    pub fn decode_range(&self, range: Range<usize>, out: &mut StringBatch) {
        let (mut xs, mut ys) = (
            Vec::with_capacity(range.len()),
            Vec::with_capacity(range.len()),
        );
        self.x.decode_range(range.clone(), &mut xs);
        self.y.decode_range(range, &mut ys);
        self.push_rows(&xs, &ys, out);
    }

    /// Appends the strings of the rows in `selection` (ascending) to `out`.
    pub fn decode_selection(&self, selection: &[u32], out: &mut StringBatch) {
        let (mut xs, mut ys) = (Vec::new(), Vec::new());
        self.x.decode_selection(selection, &mut xs);
        self.y.decode_selection(selection, &mut ys);
        self.push_rows(&xs, &ys, out);
    }

    fn push_rows(&self, xs: &[f64], ys: &[f64], out: &mut StringBatch) {
        let mut row = Vec::with_capacity(self.header.len() + COORD_DIGITS);
        for (&x, &y) in xs.iter().zip(ys) {
            row.clear();
            self.push_row(x, y, &mut row);
            out.push(&row);
        }
    }

    /// Mask words (bit `j` of word `w` is row `64·w + j`; NULL rows 0) of
    /// the rows equal to `value` (`negated`: not equal).
    pub fn filter_eq(&self, value: &str, negated: bool, validity: Option<&Bitmap>) -> Vec<u64> {
        let words = match parse_point(value.as_bytes(), self.header.as_bytes()) {
            None => vec![0u64; self.len().div_ceil(64)],
            Some((cx, cy)) => {
                let mx = self.x.filter_eq(cx);
                let my = self.y.filter_eq(cy);
                let mut words: Vec<u64> = mx.iter().zip(&my).map(|(a, b)| a & b).collect();
                // f64 equality is not bit equality for zeros and NaNs.
                if cx == 0.0 || cx.is_nan() || cy == 0.0 || cy.is_nan() {
                    for (w, word) in words.iter_mut().enumerate() {
                        let mut bits = *word;
                        while bits != 0 {
                            let j = bits.trailing_zeros() as usize;
                            let i = 64 * w + j;
                            let same = self.x.get(i).to_bits() == cx.to_bits()
                                && self.y.get(i).to_bits() == cy.to_bits();
                            if !same {
                                *word &= !(1u64 << j);
                            }
                            bits &= bits - 1;
                        }
                    }
                }
                words
            }
        };
        let len = self.len();
        words
            .into_iter()
            .enumerate()
            .map(|(w, word)| {
                let n = (len - 64 * w).min(64);
                let live = crate::kernel::low_bits(n);
                let word = if negated { !word } else { word };
                word & live & validity.map_or(u64::MAX, |v| v.word(w))
            })
            .collect()
    }
}

/// Makes each hex point column's coordinates the data of a float column of
/// the same partition that holds the same values, so they are stored once.
///
/// The taxi data set carries every point twice, as `pickup_longitude` /
/// `pickup_latitude` and as the hex point `pickup`: on the real 2013
/// sample they agree on all 9,391 rows that have a pickup. (Cross-column
/// correlations as a compression source: Glas et al., "C3: Cross-Column
/// Compression", VLDB 2025; this is its simplest case, equality.)
///
/// A coordinate is shared with float column `c` (ALP or f64) when every
/// row valid in the point column is valid in `c` and holds the same f64,
/// bit for bit; the first such column wins. Sharing already in place is
/// kept while column `c` still holds the same data, and dropped (the
/// coordinate keeps its own copy, which it holds anyway) when `c` was
/// encoded again. Idempotent; costs one decode of each candidate pair.
pub fn share_coordinates(columns: &mut [Column]) {
    for i in 0..columns.len() {
        let ColumnData::HexPoints(p) = &columns[i].data else {
            continue;
        };
        let mut points = p.clone();
        let validity = columns[i].validity.as_ref();
        let mut changed = false;
        for k in 0..2 {
            let coords = if k == 0 { &points.x } else { &points.y };
            if let Some(c) = points.shared[k] {
                let same = Coords::of_column(&columns[c].data).is_some_and(|d| d.same_data(coords));
                if same {
                    continue;
                }
                points.shared[k] = None;
                changed = true;
            }
            let mut mine = Vec::with_capacity(coords.len());
            coords.decode_range(0..coords.len(), &mut mine);
            let found = columns.iter().enumerate().find_map(|(c, col)| {
                let data = Coords::of_column(&col.data)?;
                if c == i || data.len() != mine.len() {
                    return None;
                }
                // Most candidates differ at once: test a few rows before
                // decoding the whole column.
                let differs = |r: usize| {
                    validity.is_none_or(|v| v.get(r))
                        && (!col.is_valid(r) || data.get(r).to_bits() != mine[r].to_bits())
                };
                if (0..mine.len()).step_by(mine.len() / 8 + 1).any(differs) {
                    return None;
                }
                let mut theirs = Vec::with_capacity(mine.len());
                data.decode_range(0..mine.len(), &mut theirs);
                let agrees = (0..mine.len()).all(|r| {
                    validity.is_some_and(|v| !v.get(r))
                        || (col.is_valid(r) && mine[r].to_bits() == theirs[r].to_bits())
                });
                agrees.then_some((c, data))
            });
            if let Some((c, data)) = found {
                if k == 0 {
                    points.x = data;
                } else {
                    points.y = data;
                }
                points.shared[k] = Some(c);
                changed = true;
            }
        }
        if changed {
            columns[i].data = ColumnData::HexPoints(points);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    const HEADER: &str = "0101000020E6100000";

    fn point(x: f64, y: f64) -> String {
        let mut out = HEADER.as_bytes().to_vec();
        push_hex(x, &mut out);
        push_hex(y, &mut out);
        String::from_utf8(out).unwrap()
    }

    fn column(rng: &mut ChaCha8Rng, len: usize) -> Vec<String> {
        (0..len)
            .map(|i| {
                let x = rng.gen_range(-74_050_000i64..-73_750_000) as f64 / 1e6;
                let y = rng.gen_range(40_600_000i64..40_900_000) as f64 / 1e6;
                match i % 97 {
                    5 => point(-0.0, y),
                    6 => point(0.0, 0.0),
                    7 => point(f64::NAN, y),
                    8 => point(x, 0.1 + 0.2),
                    _ => point(x, y),
                }
            })
            .collect()
    }

    #[test]
    fn the_taxi_sample_row_round_trips() {
        // A row of the 2013 sample (see datasets/src/taxi.rs).
        let s = "0101000020E610000000000000077C52C00000000001614440";
        let p = HexPoints::encode(&[s, s], None).unwrap();
        assert_eq!(p.get(1), s);
        assert_eq!(p.x().get(0), -73.93792724609375);
        assert_eq!(p.header(), HEADER);
        // Float32 coordinates are not decimals: f32 codes.
        assert!(matches!(p.x(), Coords::Single(_)));
        assert_eq!(p.coords_name(), "f32");
    }

    #[test]
    fn float32_points_share_the_float32_columns() {
        let mut rng = ChaCha8Rng::seed_from_u64(19);
        let n = 5000;
        let xs: Vec<f64> = (0..n)
            .map(|_| rng.gen_range(-74.05f32..-73.75) as f64)
            .collect();
        let ys: Vec<f64> = (0..n)
            .map(|_| rng.gen_range(40.6f32..40.9) as f64)
            .collect();
        let owned: Vec<String> = xs.iter().zip(&ys).map(|(&x, &y)| point(x, y)).collect();
        let values: Vec<&str> = owned.iter().map(String::as_str).collect();
        let mut columns = vec![
            Column::encode_floats(xs.clone(), None),
            Column::encode_floats(ys.clone(), None),
            Column::encode_strings(&values, None),
        ];
        assert!(columns[0].encoding_name().starts_with("f32 "));
        assert_eq!(columns[2].encoding_name(), "hex points f32");
        share_coordinates(&mut columns);
        assert_eq!(columns[2].encoding_name(), "hex points = #1,#2");
        assert!(columns[2].heap_bytes() < 64);
        for (i, s) in values.iter().enumerate() {
            assert_eq!(columns[2].value(i), crate::types::Value::str(s));
        }
    }

    #[test]
    fn points_round_trip_in_eight_bytes_a_row() {
        let mut rng = ChaCha8Rng::seed_from_u64(18);
        let owned = column(&mut rng, 5000);
        let values: Vec<&str> = owned.iter().map(String::as_str).collect();
        let validity = Bitmap::from_bools(&(0..5000).map(|i| i % 11 != 3).collect::<Vec<_>>());
        for v in [None, Some(&validity)] {
            let p = HexPoints::encode(&values, v).unwrap();
            assert!(p.heap_bytes() < 9 * values.len(), "{}", p.heap_bytes());
            assert!(matches!((p.x(), p.y()), (Coords::Alp(_), Coords::Alp(_))));
            let valid = |i: usize| v.is_none_or(|b| b.get(i));
            for (i, s) in values.iter().enumerate() {
                if valid(i) {
                    assert_eq!(p.get(i), *s);
                }
            }
            let mut batch = StringBatch::new();
            p.decode_range(100..300, &mut batch);
            let sel: Vec<u32> = (0..5000).step_by(13).collect();
            p.decode_selection(&sel, &mut batch);
            for (j, i) in (100..300)
                .chain(sel.iter().map(|&i| i as usize))
                .enumerate()
            {
                if valid(i) {
                    assert_eq!(batch.get(j), values[i]);
                }
            }
            let mut constants: Vec<String> =
                values.iter().step_by(37).map(|s| s.to_string()).collect();
            constants.extend([
                point(0.0, 0.0),
                point(-0.0, 0.0),
                point(f64::NAN, 1.0),
                "not a point".into(),
                format!("{HEADER}00"),
                values[5].to_lowercase(),
            ]);
            for c in &constants {
                for negated in [false, true] {
                    let words = p.filter_eq(c, negated, v);
                    for (i, s) in values.iter().enumerate() {
                        let bit = (words[i / 64] >> (i % 64)) & 1 == 1;
                        assert_eq!(bit, valid(i) && ((s == c) != negated), "{s} {c}");
                    }
                }
            }
        }
    }

    #[test]
    fn hex_digits_parse_exactly_and_any_other_byte_is_refused() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        for _ in 0..1000 {
            let x = f64::from_bits(rng.r#gen());
            let mut hex = Vec::new();
            push_hex(x, &mut hex);
            assert_eq!(parse_f64(&hex).map(f64::to_bits), Some(x.to_bits()));
            // Every byte that is not an upper-case hex digit, at a random
            // position, makes the field not a number.
            let at = rng.gen_range(0..16);
            let byte: u8 = rng.r#gen();
            if !byte.is_ascii_digit() && !(b'A'..=b'F').contains(&byte) {
                hex[at] = byte;
                assert_eq!(parse_f64(&hex), None, "{:?}", hex);
            }
        }
        assert_eq!(parse_f64(b"0000000000000000"), Some(0.0));
        assert_eq!(parse_f64(b"000000000000F03f"), None);
        assert_eq!(parse_f64(b"000000000000F03F"), Some(1.0));
        assert_eq!(parse_f64(b"000000000000F0"), None);
    }

    /// Float columns of the x and y of `points` (NULL where `null`), and
    /// the points as a hex column (NULL where `null_point`).
    fn point_columns(
        points: &[(f64, f64)],
        null: impl Fn(usize) -> bool,
        null_point: impl Fn(usize) -> bool,
    ) -> Vec<Column> {
        let bits = |f: &dyn Fn(usize) -> bool| {
            Some(Bitmap::from_bools(&(0..points.len()).map(|i| !f(i)).collect::<Vec<_>>()))
        };
        let xs = points.iter().map(|p| p.0).collect();
        let ys = points.iter().map(|p| p.1).collect();
        let hex: Vec<String> = points.iter().map(|&(x, y)| point(x, y)).collect();
        let hex: Vec<&str> = hex.iter().map(String::as_str).collect();
        vec![
            // A column that is not a float, to be passed over.
            Column::encode_ints(crate::types::DataType::Int, &vec![7; points.len()], None),
            Column::encode_floats(xs, bits(&null)),
            Column::encode_floats(ys, bits(&null)),
            hex_column(&hex, bits(&null_point)),
        ]
    }

    /// `hex` as a string column stored as hex points, whatever the chooser
    /// would pick (random float32 coordinates print as hex that FSST
    /// compresses better than two f64).
    fn hex_column(hex: &[&str], validity: Option<Bitmap>) -> Column {
        let mut col = Column::encode_strings(hex, validity.clone());
        let points = HexPoints::encode(hex, validity.as_ref()).expect("points");
        col.data = ColumnData::HexPoints(Box::new(points));
        col
    }

    #[test]
    fn points_share_the_float_columns_that_hold_their_coordinates() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let len = 3000;
        let points: Vec<(f64, f64)> = (0..len)
            .map(|_| {
                (
                    rng.gen_range(-74_050_000i64..-73_750_000) as f64 / 1e6,
                    rng.gen_range(40_600_000i64..40_900_000) as f64 / 1e6,
                )
            })
            .collect();
        let strings: Vec<String> = points.iter().map(|&(x, y)| point(x, y)).collect();
        // Float32-like coordinates (not decimals) share too, as f64 columns.
        let float32: Vec<(f64, f64)> =
            points.iter().map(|&(x, y)| (x as f32 as f64, y as f32 as f64)).collect();
        for pts in [&points, &float32] {
            // NULL points where the floats are NULL too: shared.
            let mut cols = point_columns(pts, |i| i % 7 == 0, |i| i % 7 == 0 || i % 5 == 0);
            cols.remove(0);
            let before = cols[2].heap_bytes();
            share_coordinates(&mut cols);
            let ColumnData::HexPoints(p) = &cols[2].data else {
                panic!("{}", cols[2].encoding_name());
            };
            assert_eq!(p.shared_columns(), [Some(0), Some(1)]);
            assert!(cols[2].heap_bytes() < before / 10, "{} {before}", cols[2].heap_bytes());
            assert!(cols[2].encoding_name().contains("= #1,#2"));
            for i in (0..len).filter(|i| i % 7 != 0 && i % 5 != 0) {
                let (x, y) = pts[i];
                assert_eq!(p.get(i), point(x, y));
            }
            // Idempotent while the floats are the same data.
            let shared = cols.clone();
            share_coordinates(&mut cols);
            assert_eq!(cols, shared);
            // A float column encoded again: the point keeps correct data
            // and is counted as its own again.
            cols[0] = Column::encode_floats(pts.iter().map(|p| p.0).collect(), None);
            cols[1] = Column::encode_ints(crate::types::DataType::Int, &vec![1; len], None);
            share_coordinates(&mut cols);
            let ColumnData::HexPoints(p) = &cols[2].data else {
                panic!();
            };
            assert_eq!(p.shared_columns(), [Some(0), None]);
            assert_eq!(p.get(11), point(pts[11].0, pts[11].1));
        }
        // Not shared: a valid point whose float is NULL, or a value that
        // differs in one row (even only in sign of zero).
        let mut cols = point_columns(&points, |i| i == 10, |_| false);
        share_coordinates(&mut cols);
        let ColumnData::HexPoints(p) = &cols[3].data else {
            panic!();
        };
        assert_eq!(p.shared_columns(), [None, None]);
        let mut zeros = points.clone();
        zeros[20] = (0.0, 0.0);
        let mut cols = point_columns(&zeros, |_| false, |_| false);
        let hex: Vec<&str> = strings.iter().map(String::as_str).collect();
        let mut hex_zero = hex.clone();
        let negative = point(-0.0, 0.0);
        hex_zero[20] = &negative;
        cols[3] = hex_column(&hex_zero, None);
        share_coordinates(&mut cols);
        let ColumnData::HexPoints(p) = &cols[3].data else {
            panic!();
        };
        assert_eq!(p.shared_columns(), [None, Some(2)]);
        assert_eq!(p.get(20), negative);
    }

    #[test]
    fn other_strings_are_refused() {
        let p = point(1.5, 2.5);
        let mixed = [p.as_str(), "0101000020E6100000XX"];
        assert!(HexPoints::encode(&mixed, None).is_none());
        let lower = p.to_lowercase();
        assert!(HexPoints::encode(&[p.as_str(), lower.as_str()], None).is_none());
        let other_header = p.replacen("E610", "E611", 1);
        assert!(HexPoints::encode(&[p.as_str(), other_header.as_str()], None).is_none());
        assert!(HexPoints::encode(&["short"], None).is_none());
        assert!(HexPoints::encode(&[], None).is_none());
    }
}
