//! FSST: high-cardinality strings compressed with a per-partition symbol
//! table, queried without decompressing the column.
//!
//! After "FSST: Fast Random Access String Compression" (Boncz, Neumann,
//! Leis, VLDB 2020). A table of up to 255 symbols (1–8 bytes each) is
//! trained on the partition's strings; each string becomes a sequence of
//! one-byte codes, code 255 escaping one literal byte.
//!
//! # Why the `fsst-rs` crate
//! Training and compression come from `fsst-rs` (spiraldb, pure Rust,
//! Apache-2.0, used by the Vortex file format); decoding is ours (below).
//! Measured on 65,536 synthetic taxi rows (release build, one core):
//!
//! | column           | raw B/row | FSST B/row | train  | compress | decompress (crate) |
//! |------------------|-----------|------------|--------|----------|--------------------|
//! | `pickup` (WKB)   | 49.0      | 17.4       | 2.2 ms | 160 MB/s | 460 MB/s   |
//! | `dropoff` (WKB)  | 49.0      | 18.4       | 1.6 ms | 240 MB/s | 1.3 GB/s   |
//! | `pickup_ntaname` | 21.2      | 7.3        | 0.9 ms | 170 MB/s | 620 MB/s   |
//!
//! The training is the hard part of FSST (the generational symbol
//! selection of §4.3 of the paper); writing our own would be a few hundred
//! lines to reach what the crate gives, so the house rule (a maintained
//! crate beats our own code) decides. The crate calls itself "not
//! production ready", and its symbol lengths are derived from trailing zero
//! bytes, which makes symbols ending in NUL ambiguous; so [`Fsst::encode`]
//! decodes every string it compressed and refuses the partition (returns
//! `None`, the column stays packed) if one does not round-trip.
//!
//! # Equality on compressed bytes
//! The compressor is a pure function of the symbol table and the input (a
//! greedy longest match with no state), and decoding is a function too, so
//! `compress(a) == compress(b)` exactly when `a == b`. To make that hold
//! for constants compressed at query time, the column is compressed by a
//! compressor *rebuilt from the stored table* (`Compressor::rebuild_from`),
//! the same way [`Fsst::matcher`] rebuilds one for a query: both sides go
//! through the same deterministic construction. `=`, `<>` and `IN` compare
//! compressed bytes (length first). A prefix `LIKE 'abc%'` cannot compare
//! compressed bytes (the greedy match may cross the prefix boundary), so it
//! decodes each string only until it has as many bytes as the prefix.
//!
//! # Format
//! Compressed strings back to back in `bytes`; their lengths as codes in
//! the narrowest width (almost always u8), and the start of every
//! [`BLOCK_ROWS`]-th string as a u32 anchor, so the layout costs about one
//! byte per row instead of a 4-byte offset. Each row's decoded byte length
//! is kept too, as codes in the narrowest width (one more byte per row for
//! strings under 256 bytes): `strlen` reads it instead of summing symbol
//! lengths over every code, and a batch is decoded into room of its exact
//! size. NULL rows hold the empty string.
//!
//! # Batches
//! [`Fsst::decode_range`] and [`Fsst::decode_selection`] decompress into a
//! [`StringBatch`] the caller reuses; nothing decompresses the whole column.

use std::cmp::Ordering;
use std::ops::Range;

use fsst::{Compressor, Symbol};
use hashbrown::HashSet;

use super::bitmap::Bitmap;
use super::codes::{Code, Codes};
use crate::store::with_codes;

/// Rows per anchor (the offset of the block's first string).
pub const BLOCK_ROWS: usize = 128;

/// Rows decoded at a time when [`Fsst::encode`] checks its work.
const VERIFY_ROWS: usize = 8 * BLOCK_ROWS;

/// The escape code: the next byte is a literal.
const ESCAPE: u8 = fsst::ESCAPE_CODE;

/// Strings decoded from a codec, back to back, reused across batches.
///
/// # Invariants
/// The strings are `bytes[..end]`, `end` being the last of `ends` (0 when
/// empty); what lies beyond is room kept from earlier batches, so that the
/// next decode writes into memory already zeroed once instead of zeroing
/// its room again.
#[derive(Debug, Clone, Default)]
pub struct StringBatch {
    bytes: Vec<u8>,
    ends: Vec<u32>,
}

impl PartialEq for StringBatch {
    fn eq(&self, other: &StringBatch) -> bool {
        self.ends == other.ends && self.bytes[..self.end()] == other.bytes[..other.end()]
    }
}

impl StringBatch {
    /// An empty batch.
    pub fn new() -> StringBatch {
        StringBatch::default()
    }

    /// Removes every string, keeping the allocations (and the room).
    pub fn clear(&mut self) {
        self.ends.clear();
    }

    /// End of the last string in `bytes`.
    fn end(&self) -> usize {
        self.ends.last().map_or(0, |&e| e as usize)
    }

    /// Appends the strings `codes` (split by `lengths`) decode to, into
    /// room made by [`StringBatch::make_room`] for their decoded bytes.
    fn decode_into_room(
        &mut self,
        table: &Table,
        codes: &[u8],
        lengths: impl Iterator<Item = usize>,
    ) {
        let base = self.end();
        table.decode_into_room(codes, lengths, &mut self.bytes, base, &mut self.ends);
    }

    /// Appends the strings of `codes`, whole strings back to back whose
    /// decoded lengths are `decoded`, into room made by
    /// [`StringBatch::make_room`] for their decoded bytes: the ends come
    /// from the lengths, so the codes decode in one flat loop with no
    /// per-string bookkeeping.
    fn decode_flat_into_room(
        &mut self,
        table: &Table,
        codes: &[u8],
        decoded: impl Iterator<Item = usize>,
    ) {
        let base = self.end();
        let mut end = base;
        self.ends.extend(decoded.map(|n| {
            end += n;
            end as u32
        }));
        let written = table.decode_flat(codes, &mut self.bytes, base);
        debug_assert_eq!(written, end, "decoded lengths disagree with the codes");
    }

    /// Grows the room past the strings to `bytes` more decoded bytes (and
    /// the 8 that a symbol's one 8-byte store may write past the last),
    /// zeroing it once; a growing batch at least doubles, so batches of
    /// rising size do not each zero their own room.
    fn make_room(&mut self, bytes: usize) {
        let room = self.end() + bytes + 8;
        if self.bytes.len() < room {
            self.bytes.resize(room.max(2 * self.bytes.len()), 0);
        }
    }

    /// Number of strings.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// True when there are no strings.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// The bytes of string `j`.
    pub fn bytes(&self, j: usize) -> &[u8] {
        let start = if j == 0 { 0 } else { self.ends[j - 1] as usize };
        &self.bytes[start..self.ends[j] as usize]
    }

    /// The bytes of every string back to back (possibly followed by room,
    /// which is not a string), and where each string ends.
    pub fn parts(&self) -> (&[u8], &[u32]) {
        (&self.bytes, &self.ends)
    }

    /// The bytes of every string back to back, and where each ends.
    pub fn into_parts(mut self) -> (Vec<u8>, Vec<u32>) {
        self.bytes.truncate(self.end());
        (self.bytes, self.ends)
    }

    /// Appends one string.
    pub fn push(&mut self, s: &[u8]) {
        self.bytes.truncate(self.end());
        self.bytes.extend_from_slice(s);
        self.ends.push(self.bytes.len() as u32);
    }

    /// String `j` (the codecs only hold valid UTF-8: they decode what they
    /// encoded from `&str`s).
    pub fn get(&self, j: usize) -> &str {
        std::str::from_utf8(self.bytes(j)).unwrap_or_default()
    }
}

/// A symbol table's decoding side: each code's bytes (zero-padded to 8)
/// and length, in 256 entries indexed by any code byte, so the decoding
/// loop needs no bounds check (callgrind: the checks were a sizeable part
/// of decoding URLs). Codes `0..count` are symbols, the rest are empty but
/// for the escape (255), counted as the one literal byte it brings.
#[derive(Debug, Clone, PartialEq)]
struct Table {
    count: usize,
    codes: Box<CodeTable>,
}

/// The 256 entries of a [`Table`].
#[derive(Debug, Clone, PartialEq)]
struct CodeTable {
    symbols: [[u8; 8]; 256],
    lengths: [u8; 256],
}

impl Table {
    fn from_compressor(c: &Compressor) -> Table {
        let mut codes = Box::new(CodeTable {
            symbols: [[0; 8]; 256],
            lengths: [0; 256],
        });
        let mut count = 0;
        for (k, (s, &n)) in c.symbol_table().iter().zip(c.symbol_lengths()).enumerate() {
            codes.symbols[k] = s.to_u64().to_le_bytes();
            codes.lengths[k] = n;
            count = k + 1;
        }
        codes.lengths[ESCAPE as usize] = 1;
        Table { count, codes }
    }

    fn compressor(&self) -> Compressor {
        let symbols: Vec<Symbol> = self.codes.symbols[..self.count]
            .iter()
            .map(Symbol::from_slice)
            .collect();
        Compressor::rebuild_from(symbols, &self.codes.lengths[..self.count])
    }

    /// Decoded length of `codes`, or `None` if they are malformed (an
    /// unknown code or a trailing escape).
    fn decoded_len(&self, codes: &[u8]) -> Option<usize> {
        let mut n = 0;
        let mut i = 0;
        while i < codes.len() {
            let c = codes[i];
            if c == ESCAPE {
                codes.get(i + 1)?;
                n += 1;
                i += 2;
            } else {
                n += *self.codes.lengths[..self.count].get(usize::from(c))? as usize;
                i += 1;
            }
        }
        Some(n)
    }

    /// The bytes each code stands for, the escape counted as the one byte
    /// it brings (the byte after it is skipped by the reader).
    fn code_lengths(&self) -> &[u8; 256] {
        &self.codes.lengths
    }

    /// Appends the decoding of `codes` (well-formed) to `out`.
    fn decode_into(&self, codes: &[u8], out: &mut Vec<u8>) {
        let mut ends = Vec::with_capacity(1);
        self.decode_strings(codes, std::iter::once(codes.len()), out, &mut ends);
    }

    /// Decodes consecutive compressed strings (`codes` split by
    /// `lengths`), appending their bytes to `out` and each string's end
    /// (an index into `out`) to `ends`.
    ///
    /// # Design
    /// The output is sized once, to the decoded length and 8 bytes more,
    /// and every symbol is stored as one 8-byte copy, then the length is
    /// cut back: no per-string allocation or capacity check.
    fn decode_strings(
        &self,
        codes: &[u8],
        lengths: impl Iterator<Item = usize>,
        out: &mut Vec<u8>,
        ends: &mut Vec<u32>,
    ) {
        let pos = self.decode_strings_at(codes, lengths, out, out.len(), ends);
        out.truncate(pos);
    }

    /// [`Table::decode_strings`] writing from `out[base]` on. `out` is
    /// grown (and zeroed) only when shorter than the worst case (8 bytes a
    /// code), and then to the exact decoded length and 8 bytes more, or
    /// twice its length when that is more (a batch decoded a row at a time
    /// grows by doubling, not by each row's bytes); it is left at least
    /// that long, past the returned end of the decoded bytes.
    fn decode_strings_at(
        &self,
        codes: &[u8],
        lengths: impl Iterator<Item = usize>,
        out: &mut Vec<u8>,
        base: usize,
        ends: &mut Vec<u32>,
    ) -> usize {
        if out.len() < base + codes.len() * 8 + 8 {
            // Room for the worst case, zeroed, cost a memset of 8 bytes a
            // code where URLs decode to about 3, and the pages behind it
            // (perf of ClickBench q34: the kernel clearing pages for the
            // partials' decoded keys was a third of the query).
            let exact = base + byte_length(self.code_lengths(), codes) as usize + 8;
            if out.len() < exact {
                out.resize(exact.max(2 * out.len()), 0);
            }
        }
        self.decode_into_room(codes, lengths, out, base, ends)
    }

    /// [`Table::decode_strings_at`] into room the caller made: `out` holds
    /// at least the decoded length of `codes` and 8 bytes more from `base`.
    fn decode_into_room(
        &self,
        codes: &[u8],
        lengths: impl Iterator<Item = usize>,
        out: &mut [u8],
        base: usize,
        ends: &mut Vec<u32>,
    ) -> usize {
        debug_assert!(self.decoded_len(codes).is_some(), "malformed FSST codes");
        let mut pos = base;
        let mut i = 0;
        for n in lengths {
            // Each string by the flat decoder, four codes a word (perf of
            // ClickBench q34: decoding each partition's distinct URLs a
            // code at a time was 16% of the query).
            let end = (i + n).min(codes.len());
            pos = self.decode_flat(&codes[i..end], out, pos);
            i = end;
            ends.push(pos as u32);
        }
        pos
    }

    /// Decodes `codes`, the well-formed codes of whole strings back to
    /// back, into `out` from `base`, which has room for their decoded
    /// bytes and 8 more; returns the end of the decoded bytes.
    ///
    /// # Design
    /// Four codes are taken at a time; when none is the escape (FSST's
    /// reference decoder tests the same), their four symbols are stored
    /// without a branch between them, each as one 8-byte copy. A word with
    /// an escape decodes one code at a time up to past the escape.
    fn decode_flat(&self, codes: &[u8], out: &mut [u8], base: usize) -> usize {
        let d = &*self.codes;
        let mut pos = base;
        let mut i = 0;
        // One code at `i`, or the escape and its byte.
        let one = |out: &mut [u8], i: &mut usize, pos: &mut usize| {
            let c = codes[*i];
            if c == ESCAPE {
                out[*pos] = codes.get(*i + 1).copied().unwrap_or_default();
                *pos += 1;
                *i += 2;
            } else {
                out[*pos..*pos + 8].copy_from_slice(&d.symbols[usize::from(c)]);
                *pos += usize::from(d.lengths[usize::from(c)]);
                *i += 1;
            }
        };
        while let Some(word) = codes.get(i..i + 4) {
            if word.contains(&ESCAPE) {
                one(out, &mut i, &mut pos);
                continue;
            }
            for &c in word {
                out[pos..pos + 8].copy_from_slice(&d.symbols[usize::from(c)]);
                pos += usize::from(d.lengths[usize::from(c)]);
            }
            i += 4;
        }
        while i < codes.len() {
            one(out, &mut i, &mut pos);
        }
        pos
    }

    /// Whether the decoding of `codes` starts with `prefix`, decoding only
    /// as far as needed.
    fn starts_with(&self, codes: &[u8], prefix: &[u8]) -> bool {
        let mut matched = 0;
        let mut i = 0;
        while matched < prefix.len() {
            let Some(piece) = self.next_piece(codes, &mut i) else {
                return false;
            };
            let take = piece.len().min(prefix.len() - matched);
            if piece[..take] != prefix[matched..matched + take] {
                return false;
            }
            matched += take;
        }
        true
    }

    /// The bytes of the code at `codes[*i]` (a symbol, or the literal after
    /// an escape), moving `i` past it; `None` at the end (or at a trailing
    /// escape).
    #[inline]
    fn next_piece<'s>(&'s self, codes: &'s [u8], i: &mut usize) -> Option<&'s [u8]> {
        let c = *codes.get(*i)?;
        if c == ESCAPE {
            *i += 2;
            codes.get(*i - 1).map(std::slice::from_ref)
        } else {
            *i += 1;
            let k = usize::from(c);
            Some(&self.codes.symbols[k][..usize::from(self.codes.lengths[k])])
        }
    }

    /// The decoding of `codes` compared with `value` byte by byte (UTF-8
    /// byte order is code point order), decoding only up to the first
    /// difference: most rows differ from a constant in their first symbol.
    fn compare(&self, codes: &[u8], value: &[u8]) -> Ordering {
        let mut matched = 0;
        let mut i = 0;
        while let Some(piece) = self.next_piece(codes, &mut i) {
            let rest = &value[matched..];
            // The first byte decides most rows, without a memcmp call.
            if let (Some(a), Some(b)) = (piece.first(), rest.first())
                && a != b
            {
                return a.cmp(b);
            }
            let take = piece.len().min(rest.len());
            match piece[..take].cmp(&rest[..take]) {
                Ordering::Equal if take < piece.len() => return Ordering::Greater,
                Ordering::Equal => matched += take,
                unequal => return unequal,
            }
        }
        matched.cmp(&value.len())
    }

    fn heap_bytes(&self) -> usize {
        std::mem::size_of::<CodeTable>()
    }
}

/// Decoded byte length of well-formed `codes` given each code's length
/// (see `Table::code_lengths`).
#[inline]
fn byte_length(lengths: &[u8; 256], codes: &[u8]) -> i64 {
    // Without an escape every byte is a code: one pass of independent
    // lookups, no stride that depends on the byte before. Escapes are
    // noted on the way and send the string to the exact loop below.
    // Eight codes a step, summed as u32 (8 · 255 fits), so the loop
    // unrolls instead of testing its bound per code.
    let look = |c: u8| u32::from(lengths[c as usize]);
    let (mut sum, mut escaped) = (0i64, false);
    let chunks = codes.chunks_exact(8);
    let tail = chunks.remainder();
    for w in chunks {
        let s = look(w[0]) + look(w[1]) + look(w[2]) + look(w[3]);
        let t = look(w[4]) + look(w[5]) + look(w[6]) + look(w[7]);
        sum += i64::from(s + t);
        escaped |= w.iter().fold(false, |e, &c| e | (c == ESCAPE));
    }
    for &c in tail {
        sum += i64::from(look(c));
        escaped |= c == ESCAPE;
    }
    if !escaped {
        return sum;
    }
    // The pass above counted each escape as 1 (its literal byte) and then
    // the literal byte again as if it were a code. A literal is a byte of
    // UTF-8 text, never 0xFF (= ESCAPE), so every ESCAPE byte is an
    // escape code and the byte after it a literal: subtract those bytes'
    // code lengths, found with memchr instead of walking code by code
    // (perf: ClickBench q28's `avg(strlen(URL))` over 10M rows spent 62%
    // of its time in the code-by-code walk of escaped strings).
    for i in memchr::memchr_iter(ESCAPE, codes) {
        debug_assert!(i + 1 < codes.len(), "an escape ends the codes");
        if let Some(&literal) = codes.get(i + 1) {
            sum -= i64::from(look(literal));
        }
    }
    sum
}

/// Strings of one partition, FSST-compressed.
///
/// # Invariants
/// - `lengths.len() == decoded.len() == len`; `anchors[k]` is the start in
///   `bytes` of row `k · BLOCK_ROWS`; row `i`'s codes are the `lengths[i]`
///   bytes after the previous row's, and decode to `decoded[i]` bytes.
/// - Every row decodes to the string it was encoded from (checked at
///   encode), and was compressed by `table.compressor()`.
#[derive(Debug, Clone, PartialEq)]
pub struct Fsst {
    table: Table,
    bytes: Vec<u8>,
    lengths: Codes,
    decoded: Codes,
    anchors: Vec<u32>,
}

/// A compressor rebuilt from a partition's table, for compressing the
/// constants of a query once per partition (see the module docs).
pub struct FsstMatcher {
    compressor: Compressor,
}

impl FsstMatcher {
    /// `s` compressed as the partition's rows are.
    pub fn compress(&self, s: &str) -> Vec<u8> {
        self.compressor.compress(s.as_bytes())
    }
}

impl Fsst {
    /// Trains a symbol table on a partition's valid strings and compresses
    /// every row (NULL rows as the empty string).
    ///
    /// Returns `None` when no row is valid, when the compressed layout is
    /// not smaller than packing the strings (their bytes plus a 4-byte
    /// offset per row), when the compressed bytes exceed `u32::MAX`, or
    /// when a string does not round-trip (see the module docs).
    pub fn encode(values: &[&str], validity: Option<&Bitmap>) -> Option<Fsst> {
        let raw_bytes: usize = (0..values.len())
            .filter(|&i| validity.is_none_or(|v| v.get(i)))
            .map(|i| values[i].len())
            .sum();
        let fsst = Fsst::encode_unchecked(values, validity)?;
        (fsst.heap_bytes() < raw_bytes + 4 * values.len()).then_some(fsst)
    }

    /// [`Fsst::encode`] without the comparison with packing: for the
    /// codec chooser's sample, whose few hundred rows would be charged the
    /// whole symbol table (the chooser measures the rows' bytes and adds
    /// the table once, see `store::choose`).
    pub(crate) fn encode_unchecked(values: &[&str], validity: Option<&Bitmap>) -> Option<Fsst> {
        let valid = |i: usize| validity.is_none_or(|v| v.get(i));
        // Every row (NULLs as ""), compressed as `compress` would, back to
        // back; the table is trained on the valid ones (the same rows when
        // none is NULL, so no second list is made).
        let rows: Vec<&[u8]> = (0..values.len())
            .map(|i| if valid(i) { values[i].as_bytes() } else { b"" })
            .collect();
        let valid_rows: Vec<&[u8]>;
        let sample = if validity.is_some() {
            valid_rows = (0..values.len())
                .filter(|&i| valid(i))
                .map(|i| rows[i])
                .collect();
            &valid_rows
        } else {
            &rows
        };
        if sample.is_empty() {
            return None;
        }
        let table = Table::from_compressor(&Compressor::train(sample));
        let compressor = table.compressor();
        let mut bytes = Vec::new();
        let mut lengths = Vec::with_capacity(rows.len());
        compressor
            .compress_bulk_into::<{ Compressor::DEFAULT_BULK_LANES }>(&rows, &mut bytes, &mut lengths);
        u32::try_from(bytes.len()).ok()?;
        // The ends become lengths in place.
        let mut prev = 0u64;
        for e in &mut lengths {
            (*e, prev) = (*e - prev, *e);
        }
        // Decode everything once and compare (see the module docs), a few
        // blocks at a time into one small buffer: decoding the whole
        // partition at once would zero 8 bytes per code (9 MB for a taxi
        // `pickup` column) for a moment.
        table.decoded_len(&bytes)?;
        let mut decoded = Vec::new();
        let mut decoded_ends = Vec::with_capacity(VERIFY_ROWS);
        let mut at = 0;
        for (rows, lengths) in rows.chunks(VERIFY_ROWS).zip(lengths.chunks(VERIFY_ROWS)) {
            let len = lengths.iter().sum::<u64>() as usize;
            let codes = bytes.get(at..at + len)?;
            at += len;
            decoded_ends.clear();
            table.decode_strings_at(
                codes,
                lengths.iter().map(|&n| n as usize),
                &mut decoded,
                0,
                &mut decoded_ends,
            );
            let mut start = 0;
            for (row, &end) in rows.iter().zip(&decoded_ends) {
                if decoded.get(start..end as usize) != Some(*row) {
                    return None;
                }
                start = end as usize;
            }
        }
        let anchors = lengths
            .chunks(BLOCK_ROWS)
            .scan(0u64, |pos, block| {
                let at = *pos;
                *pos += block.iter().sum::<u64>();
                Some(at as u32)
            })
            .collect();
        let max_length = lengths.iter().copied().max().unwrap_or(0);
        let max_decoded = rows.iter().map(|r| r.len() as u64).max().unwrap_or(0);
        // The partition keeps these bytes; drop the doubling's slack (up to
        // as much again, seen with heaptrack on a load).
        bytes.shrink_to_fit();
        Some(Fsst {
            table,
            bytes,
            lengths: Codes::pack(lengths.into_iter(), max_length),
            decoded: Codes::pack(rows.iter().map(|r| r.len() as u64), max_decoded),
            anchors,
        })
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.lengths.len()
    }

    /// True when there are no rows.
    pub fn is_empty(&self) -> bool {
        self.lengths.is_empty()
    }

    /// Heap bytes held: compressed bytes, compressed and decoded lengths,
    /// anchors, symbol table.
    pub fn heap_bytes(&self) -> usize {
        self.bytes.len()
            + self.lengths.heap_bytes()
            + self.decoded.heap_bytes()
            + self.anchors.len() * 4
            + self.table.heap_bytes()
    }

    /// Heap bytes of the symbol table alone (a fixed size, whatever the
    /// rows).
    pub fn table_bytes(&self) -> usize {
        self.table.heap_bytes()
    }


    /// Start of row `i`'s codes in `bytes`.
    fn start_of(&self, i: usize) -> usize {
        let block = i / BLOCK_ROWS * BLOCK_ROWS;
        let before: usize =
            with_codes!(&self.lengths, l => l[block..i].iter().map(|x| x.to_usize()).sum());
        self.anchors[i / BLOCK_ROWS] as usize + before
    }

    /// Calls `f(row, codes)` for rows `range`, in order. Equal strings have
    /// equal codes (every row is compressed alone by one compressor), so
    /// the codes can stand for the strings in equality and grouping.
    pub fn for_each_compressed<'s>(
        &'s self,
        range: Range<usize>,
        mut f: impl FnMut(usize, &'s [u8]),
    ) {
        if range.is_empty() {
            return;
        }
        let mut pos = self.start_of(range.start);
        with_codes!(&self.lengths, l => {
            for (i, n) in range.clone().zip(&l[range]) {
                let end = pos + n.to_usize();
                f(i, &self.bytes[pos..end]);
                pos = end;
            }
        })
    }

    /// [`Fsst::for_each_compressed`] for the rows in `selection`
    /// (ascending), walking the codes from the first to the last.
    pub fn for_each_selected<'s>(&'s self, selection: &[u32], mut f: impl FnMut(usize, &'s [u8])) {
        debug_assert!(selection.windows(2).all(|w| w[0] < w[1]));
        let (Some(&first), Some(&last)) = (selection.first(), selection.last()) else {
            return;
        };
        let mut next = selection.iter().peekable();
        self.for_each_compressed(first as usize..last as usize + 1, |i, codes| {
            if next.peek().is_some_and(|&&r| r as usize == i) {
                next.next();
                f(i, codes);
            }
        });
    }

    /// The compressed codes of row `i`.
    ///
    /// # Panics
    /// If `i >= len`.
    pub fn compressed(&self, i: usize) -> &[u8] {
        let start = self.start_of(i);
        &self.bytes[start..start + self.lengths.get(i) as usize]
    }

    /// String `i` (empty at a NULL row).
    ///
    /// # Panics
    /// If `i >= len`.
    pub fn get(&self, i: usize) -> String {
        let mut out = Vec::new();
        self.table.decode_into(self.compressed(i), &mut out);
        String::from_utf8(out).unwrap_or_default()
    }

    /// Appends the strings of rows `range` to `out`.
    ///
    /// # Panics
    /// If the range is out of bounds.
    pub fn decode_range(&self, range: Range<usize>, out: &mut StringBatch) {
        if range.is_empty() {
            return;
        }
        let start = self.start_of(range.start);
        out.make_room(self.decoded_bytes(range.clone()));
        let total: usize =
            with_codes!(&self.lengths, l => l[range.clone()].iter().map(|n| n.to_usize()).sum());
        with_codes!(&self.decoded, d => out.decode_flat_into_room(
            &self.table,
            &self.bytes[start..start + total],
            d[range].iter().map(|n| n.to_usize()),
        ))
    }

    /// Decoded bytes of rows `range`, summed.
    fn decoded_bytes(&self, range: Range<usize>) -> usize {
        with_codes!(&self.decoded, d => d[range].iter().map(|n| n.to_usize()).sum())
    }

    /// Decoded bytes of `rows`, summed.
    fn decoded_bytes_at(&self, rows: &[u32]) -> usize {
        with_codes!(&self.decoded, d => rows.iter().map(|&r| d[r as usize].to_usize()).sum())
    }

    /// Appends the byte length of the strings at rows `range` (0 at a NULL
    /// row) to `out`, read from the decoded lengths kept per row (perf of
    /// ClickBench q28, `avg(strlen(URL))`: summing symbol lengths over
    /// every code was two thirds of the query). For `strlen`.
    ///
    /// # Panics
    /// If the range is out of bounds.
    pub fn byte_lengths_range(&self, range: Range<usize>, out: &mut Vec<i64>) {
        with_codes!(&self.decoded, d => out.extend(d[range].iter().map(|n| n.to_usize() as i64)))
    }

    /// [`Fsst::byte_lengths_range`] at the rows in `selection`.
    pub fn byte_lengths_selection(&self, selection: &[u32], out: &mut Vec<i64>) {
        with_codes!(&self.decoded, d => {
            out.extend(selection.iter().map(|&r| d[r as usize].to_usize() as i64))
        })
    }

    /// Appends the strings of the rows in `selection` (ascending) to `out`.
    pub fn decode_selection(&self, selection: &[u32], out: &mut StringBatch) {
        out.make_room(self.decoded_bytes_at(selection));
        self.for_each_selected(selection, |_, codes| {
            out.decode_into_room(&self.table, codes, std::iter::once(codes.len()))
        });
    }

    /// Appends the strings that `compressed` decode to, each slice the codes
    /// of one row as [`Fsst::for_each_compressed`] gives them: the group
    /// keys of a GROUP BY that grouped on compressed bytes, decoded from the
    /// slices it kept rather than found again by row (which walks every
    /// row's length up to the last one wanted). `rows[i]` is the row
    /// `compressed[i]` was read from, whose decoded length sizes the output
    /// once, exactly (perf of ClickBench q34: summing symbol lengths over
    /// the codes instead was 7% of the query).
    ///
    /// # Panics
    /// If a row is out of bounds.
    pub fn decode_compressed(&self, compressed: &[&[u8]], rows: &[u32], out: &mut StringBatch) {
        debug_assert_eq!(compressed.len(), rows.len());
        out.make_room(self.decoded_bytes_at(rows));
        for c in compressed {
            out.decode_into_room(&self.table, c, std::iter::once(c.len()));
        }
    }

    /// A compressor for this partition's constants.
    pub fn matcher(&self) -> FsstMatcher {
        FsstMatcher {
            compressor: self.table.compressor(),
        }
    }

    /// Mask words (bit `j` of word `w` is row `64·w + j`; NULL rows 0) of
    /// the rows equal to `value` (`negated`: not equal), compared on
    /// compressed bytes.
    pub fn filter_eq(&self, value: &str, negated: bool, validity: Option<&Bitmap>) -> Vec<u64> {
        if value.is_empty() {
            // Only rows with no codes equal it (`x <> ''`, ClickBench's
            // most common filter): the lengths alone answer, 64 at a time.
            let mut words: Vec<u64> = with_codes!(&self.lengths, l => l
                .chunks(64)
                .map(|c| crate::kernel::block_mask(c, |n| (n.to_usize() == 0) != negated))
                .collect());
            if let Some(v) = validity {
                v.and_into(&mut words);
            }
            return words;
        }
        self.mask(validity, self.eq_test(value, negated))
    }

    /// Mask words of the rows whose string is one of `values`, compared on
    /// compressed bytes.
    pub fn filter_in(&self, values: &[&str], validity: Option<&Bitmap>) -> Vec<u64> {
        self.mask(validity, self.in_test(values))
    }

    /// Mask words of the rows whose string starts with `prefix` (`LIKE
    /// 'prefix%'`), decoding each row only as far as the prefix.
    pub fn filter_prefix(&self, prefix: &str, validity: Option<&Bitmap>) -> Vec<u64> {
        self.mask(validity, self.prefix_test(prefix))
    }

    /// Mask words (as [`Fsst::filter_eq`]'s) of the rows whose string,
    /// compared with `value`, gives an ordering `holds` accepts (`<`, `<=`,
    /// `>`, `>=` against a constant); each row decoded only up to its first
    /// byte that differs from `value`.
    pub fn filter_cmp(
        &self,
        value: &str,
        holds: impl Fn(Ordering) -> bool,
        validity: Option<&Bitmap>,
    ) -> Vec<u64> {
        self.mask(validity, self.cmp_test(value, holds))
    }

    /// The test of [`Fsst::filter_eq`] on one row's compressed bytes (the
    /// empty string compresses to no bytes, so `''` is a length test).
    pub fn eq_test(&self, value: &str, negated: bool) -> impl Fn(&[u8]) -> bool + use<> {
        let target = self.matcher().compress(value);
        move |codes| (codes == target.as_slice()) != negated
    }

    /// The test of [`Fsst::filter_in`] on one row's compressed bytes: a
    /// scan of up to 8 values, a hash set past that.
    pub fn in_test(&self, values: &[&str]) -> impl Fn(&[u8]) -> bool + use<> {
        let matcher = self.matcher();
        let mut targets: Vec<Vec<u8>> = values.iter().map(|v| matcher.compress(v)).collect();
        let set: Option<HashSet<Vec<u8>>> = (targets.len() > 8).then(|| targets.drain(..).collect());
        move |codes| match &set {
            Some(set) => set.contains(codes),
            None => targets.iter().any(|t| t.as_slice() == codes),
        }
    }

    /// The test of [`Fsst::filter_prefix`] on one row's compressed bytes.
    pub fn prefix_test(&self, prefix: &str) -> impl Fn(&[u8]) -> bool + '_ {
        let prefix = prefix.as_bytes().to_vec();
        move |codes| self.table.starts_with(codes, &prefix)
    }

    /// The test of [`Fsst::filter_cmp`] on one row's compressed bytes.
    pub fn cmp_test<'a>(
        &'a self,
        value: &str,
        holds: impl Fn(Ordering) -> bool + 'a,
    ) -> impl Fn(&[u8]) -> bool + 'a {
        let value = value.as_bytes().to_vec();
        move |codes| holds(self.table.compare(codes, &value))
    }

    /// The rows of `selection` (ascending) whose compressed bytes pass
    /// `test` (one of the `*_test` methods), reading only those rows: for a
    /// filter after others have left few rows (perf of ClickBench q26: the
    /// top-n's threshold compared all rows where `SearchPhrase <> ''` had
    /// left 15%). Validity is not applied (a NULL row reads as `''`).
    pub fn select(&self, selection: &[u32], test: impl Fn(&[u8]) -> bool) -> Vec<u32> {
        let mut out = Vec::new();
        self.for_each_selected(selection, |i, codes| {
            if test(codes) {
                out.push(i as u32);
            }
        });
        out
    }

    fn mask(&self, validity: Option<&Bitmap>, pred: impl Fn(&[u8]) -> bool) -> Vec<u64> {
        let mut words = vec![0u64; self.len().div_ceil(64)];
        self.for_each_compressed(0..self.len(), |i, codes| {
            words[i / 64] |= (pred(codes) as u64) << (i % 64);
        });
        if let Some(v) = validity {
            v.and_into(&mut words);
        }
        words
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// Hex WKB points, neighbourhood names, random text with shared
    /// prefixes, multi-byte characters, empty strings.
    fn cases() -> Vec<(Vec<String>, Option<Bitmap>)> {
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        let names = [
            "Midtown-Midtown South",
            "Upper East Side-Carnegie Hill",
            "Hudson Yards-Chelsea-Flatiron-Union Square",
            "East Village",
            "SoHo-TriBeCa-Civic Center-Little Italy",
        ];
        let mut out = Vec::new();
        for case in 0..12 {
            let len = [1, 100, 3000, 5000][case % 4];
            let values: Vec<String> = (0..len)
                .map(|_| match case % 4 {
                    0 | 2 => {
                        let lon: f64 = -74.0 + rng.r#gen::<f64>() * 0.3;
                        let lat: f64 = 40.6 + rng.r#gen::<f64>() * 0.3;
                        let hex: String = lon
                            .to_le_bytes()
                            .iter()
                            .chain(&lat.to_le_bytes())
                            .map(|b| format!("{b:02X}"))
                            .collect();
                        format!("0101000020E6100000{hex}")
                    }
                    1 => names[rng.gen_range(0..names.len())].to_string(),
                    _ => {
                        let n = rng.gen_range(0..40);
                        let tail: String = (0..n)
                            .map(|_| ['a', 'é', '中', 'z', ' ', '0'][rng.gen_range(0..6)])
                            .collect();
                        if rng.gen_bool(0.5) {
                            format!("shared/prefix/{tail}")
                        } else {
                            tail
                        }
                    }
                })
                .collect();
            let validity = (case % 3 == 1).then(|| {
                Bitmap::from_bools(&(0..len).map(|_| rng.gen_bool(0.9)).collect::<Vec<_>>())
            });
            out.push((values, validity));
        }
        out
    }

    fn valid(v: &Option<Bitmap>, i: usize) -> bool {
        v.as_ref().is_none_or(|b| b.get(i))
    }

    #[test]
    fn byte_length_matches_the_code_by_code_reading() {
        // Random codes with escapes (each followed by a literal that is a
        // symbol code if misread as one, and never 0xFF: literals are
        // bytes of UTF-8 text), against the reading one code at a time.
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let mut lengths = [0u8; 256];
        for l in lengths.iter_mut().take(200) {
            *l = rng.gen_range(1..=8);
        }
        lengths[usize::from(ESCAPE)] = 1;
        for _ in 0..2000 {
            let n = rng.gen_range(0..40);
            let mut codes = Vec::new();
            while codes.len() < n {
                if rng.gen_bool(0.1) {
                    codes.extend([ESCAPE, rng.gen_range(0..ESCAPE)]);
                } else {
                    codes.push(rng.gen_range(0..200));
                }
            }
            let (mut want, mut i) = (0i64, 0);
            while i < codes.len() {
                want += i64::from(lengths[usize::from(codes[i])]);
                i += if codes[i] == ESCAPE { 2 } else { 1 };
            }
            assert_eq!(byte_length(&lengths, &codes), want, "{codes:?}");
        }
    }

    #[test]
    fn round_trips_and_byte_lengths_by_row_range_and_selection() {
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let mut encoded = 0;
        for (owned, validity) in cases() {
            let values: Vec<&str> = owned.iter().map(String::as_str).collect();
            let Some(f) = Fsst::encode(&values, validity.as_ref()) else {
                continue;
            };
            encoded += 1;
            for (i, s) in values.iter().enumerate() {
                if valid(&validity, i) {
                    assert_eq!(f.get(i), *s);
                } else {
                    assert_eq!(f.get(i), "");
                }
            }
            // One batch, reused: room left by a longer batch before must
            // not show.
            let mut batch = StringBatch::new();
            for _ in 0..10 {
                batch.clear();
                let a = rng.gen_range(0..=values.len());
                let b = rng.gen_range(a..=values.len());
                f.decode_range(a..b, &mut batch);
                assert_eq!(batch.len(), b - a);
                let mut lengths = Vec::new();
                f.byte_lengths_range(a..b, &mut lengths);
                assert_eq!(lengths.len(), b - a);
                for (j, i) in (a..b).enumerate() {
                    if valid(&validity, i) {
                        assert_eq!(batch.get(j), values[i]);
                        assert_eq!(lengths[j], values[i].len() as i64);
                    } else {
                        assert_eq!(lengths[j], 0);
                    }
                }
                batch.clear();
                let sel: Vec<u32> = (a as u32..b as u32)
                    .filter(|_| rng.gen_bool(0.25))
                    .collect();
                f.decode_selection(&sel, &mut batch);
                assert_eq!(batch.len(), sel.len());
                let mut lengths = Vec::new();
                f.byte_lengths_selection(&sel, &mut lengths);
                assert_eq!(lengths.len(), sel.len());
                for (j, &i) in sel.iter().enumerate() {
                    if valid(&validity, i as usize) {
                        assert_eq!(batch.get(j), values[i as usize]);
                        assert_eq!(lengths[j], values[i as usize].len() as i64);
                    }
                }
            }
        }
        assert!(encoded >= 6, "{encoded}");
    }

    #[test]
    fn range_decoding_reads_escapes_at_every_position_of_a_word() {
        // Common words fill the symbol table, so rare characters among
        // them are escaped: escapes fall at every offset of the flat
        // decoder's 4-code words and at the ends of strings.
        let mut rng = ChaCha8Rng::seed_from_u64(21);
        let words: Vec<String> = (0..300)
            .map(|_| (0..6).map(|_| rng.gen_range(b'a'..=b'z') as char).collect())
            .collect();
        let owned: Vec<String> = (0..3000)
            .map(|_| {
                let mut s = String::new();
                for _ in 0..rng.gen_range(0..6) {
                    if rng.gen_bool(0.3) {
                        s.push(char::from_u32(rng.gen_range(0x20..0x3000)).unwrap_or('?'));
                    }
                    s.push_str(&words[rng.gen_range(0..words.len())]);
                }
                s
            })
            .collect();
        let values: Vec<&str> = owned.iter().map(String::as_str).collect();
        let f = Fsst::encode_unchecked(&values, None).expect("the text has bytes");
        assert!(f.bytes.contains(&ESCAPE), "no escape to test");
        let mut batch = StringBatch::new();
        for start in [0, 1, 2, 3, 777] {
            batch.clear();
            f.decode_range(start..values.len(), &mut batch);
            for (j, want) in values[start..].iter().enumerate() {
                assert_eq!(batch.get(j), *want, "row {}", start + j);
            }
        }
    }

    #[test]
    fn hex_points_compress_to_well_under_half() {
        let (owned, _) = cases().swap_remove(2);
        let values: Vec<&str> = owned.iter().map(String::as_str).collect();
        let raw: usize = values.iter().map(|s| s.len()).sum();
        let f = Fsst::encode(&values, None).unwrap();
        assert!(f.heap_bytes() * 2 < raw, "{} of {raw}", f.heap_bytes());
        assert_eq!(f.lengths.width_name(), "u8");
    }

    #[test]
    fn equality_in_prefix_and_order_match_the_oracle() {
        for (owned, validity) in cases() {
            let values: Vec<&str> = owned.iter().map(String::as_str).collect();
            let Some(f) = Fsst::encode(&values, validity.as_ref()) else {
                continue;
            };
            let mut constants: Vec<&str> = values.iter().step_by(97).copied().collect();
            constants.extend([
                "",
                "0101000020E6100000",
                "East",
                "East Village ",
                "shared/prefix/",
                "zzz\u{0}",
            ]);
            // `select` reads only these rows (a NULL row as "").
            let every_third: Vec<u32> = (0..values.len() as u32).step_by(3).collect();
            let check = |words: &[u64], pred: &dyn Fn(&str) -> bool| {
                for (i, s) in values.iter().enumerate() {
                    let bit = (words[i / 64] >> (i % 64)) & 1 == 1;
                    assert_eq!(bit, valid(&validity, i) && pred(s), "{s:?}");
                }
            };
            for &c in &constants {
                check(&f.filter_eq(c, false, validity.as_ref()), &|s| s == c);
                check(&f.filter_eq(c, true, validity.as_ref()), &|s| s != c);
                let prefix: String = c.chars().take(7).collect();
                check(&f.filter_prefix(&prefix, validity.as_ref()), &|s| {
                    s.starts_with(&prefix)
                });
                for want in [Ordering::Less, Ordering::Equal, Ordering::Greater] {
                    check(&f.filter_cmp(c, |o| o == want, validity.as_ref()), &|s| {
                        s.cmp(c) == want
                    });
                    check(&f.filter_cmp(&prefix, |o| o == want, validity.as_ref()), &|s| {
                        s.cmp(prefix.as_str()) == want
                    });
                }
            }
            for n in [1, 3, 12] {
                let list: Vec<&str> = constants.iter().copied().take(n).collect();
                check(&f.filter_in(&list, validity.as_ref()), &|s| {
                    list.contains(&s)
                });
                let sel = every_third.as_slice();
                let want = |pred: &dyn Fn(&str) -> bool| -> Vec<u32> {
                    sel.iter().copied().filter(|&r| pred(&f.get(r as usize))).collect()
                };
                assert_eq!(f.select(sel, f.in_test(&list)), want(&|s| list.contains(&s)));
                for &c in &list {
                    assert_eq!(f.select(sel, f.eq_test(c, true)), want(&|s| s != c));
                    assert_eq!(f.select(sel, f.prefix_test(c)), want(&|s| s.starts_with(c)));
                    assert_eq!(
                        f.select(sel, f.cmp_test(c, |o| o == Ordering::Less)),
                        want(&|s| s < c)
                    );
                }
            }
            // The claim equality rests on: a constant compressed by a rebuilt
            // matcher is byte-identical to the stored row.
            let m = f.matcher();
            for (i, s) in values
                .iter()
                .enumerate()
                .filter(|&(i, _)| valid(&validity, i))
                .take(200)
            {
                assert_eq!(m.compress(s), f.compressed(i));
            }
        }
    }

    #[test]
    fn columns_that_do_not_shrink_stay_packed() {
        let mut rng = ChaCha8Rng::seed_from_u64(12);
        let owned: Vec<String> = (0..2000)
            .map(|_| {
                (0..3)
                    .map(|_| rng.gen_range(0x21u8..0x7f) as char)
                    .collect()
            })
            .collect();
        let values: Vec<&str> = owned.iter().map(String::as_str).collect();
        let f = Fsst::encode(&values, None);
        if let Some(f) = &f {
            let raw: usize = values.iter().map(|s| s.len()).sum();
            assert!(f.heap_bytes() < raw + 4 * values.len());
        }
        assert!(Fsst::encode(&["a"], Some(&Bitmap::new(1, false))).is_none());
    }
}
