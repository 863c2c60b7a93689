//! A fixed-length bitmap, used as the validity (non-NULL) mask of a column
//! and as a filter's mask of rows.

use std::borrow::Cow;
use std::sync::Arc;

/// `len` bits, least significant bit first, in one of two layouts:
/// packed into u64 words, or (for a validity mask with few NULLs) as the
/// ascending positions of its clear bits.
///
/// Either layout is reference-counted: a clone shares it (columns of a
/// partition that are NULL on the same rows hold one copy, see
/// [`share_validity`]), and a write to a shared bitmap copies first. Every
/// method answers for both layouts; a loop that reads bit after bit of a
/// column's validity takes [`Bitmap::dense`] first, since a bit of the
/// sparse layout is a binary search.
///
/// # Invariants
/// Bits at positions `>= len` in the last word are zero. The positions of
/// the sparse layout are strictly increasing and below `len`, and `len` is
/// at most [`SPARSE_MAX_LEN`].
#[derive(Debug, Clone)]
pub struct Bitmap {
    /// The packed layout: bit `i` is bit `i % 64` of word `i / 64`; empty
    /// in the sparse layout, so that the bounds check of a packed read is
    /// the test for the layout.
    words: Arc<Vec<u64>>,
    /// The sparse layout: the positions of the clear bits, ascending; every
    /// other bit is set.
    clear: Option<Arc<Vec<u16>>>,
    len: usize,
}

/// A bitmap's layout, borrowed.
enum Bits<'a> {
    Words(&'a Arc<Vec<u64>>),
    Clear(&'a Arc<Vec<u16>>),
}

/// The longest bitmap that may take the sparse layout (positions are u16):
/// the default partition's rows.
pub const SPARSE_MAX_LEN: usize = 1 << 16;

impl PartialEq for Bitmap {
    fn eq(&self, other: &Bitmap) -> bool {
        self.len == other.len
            && match (self.bits(), other.bits()) {
                (Bits::Words(a), Bits::Words(b)) => a == b,
                (Bits::Clear(a), Bits::Clear(b)) => a == b,
                _ => (0..self.len.div_ceil(64)).all(|w| self.word(w) == other.word(w)),
            }
    }
}

impl Eq for Bitmap {}

impl Bitmap {
    fn bits(&self) -> Bits<'_> {
        match &self.clear {
            Some(p) => Bits::Clear(p),
            None => Bits::Words(&self.words),
        }
    }

    /// A bitmap of `len` bits, all set to `value`.
    pub fn new(len: usize, value: bool) -> Bitmap {
        let mut words = vec![if value { u64::MAX } else { 0 }; len.div_ceil(64)];
        if value
            && !len.is_multiple_of(64)
            && let Some(last) = words.last_mut()
        {
            *last = (1u64 << (len % 64)) - 1;
        }
        Bitmap::packed(words, len)
    }

    fn packed(words: Vec<u64>, len: usize) -> Bitmap {
        Bitmap {
            words: Arc::new(words),
            clear: None,
            len,
        }
    }

    /// A bitmap from one bool per bit.
    pub fn from_bools(bits: &[bool]) -> Bitmap {
        let mut words = vec![0u64; bits.len().div_ceil(64)];
        for (i, &b) in bits.iter().enumerate() {
            words[i / 64] |= (b as u64) << (i % 64);
        }
        Bitmap::packed(words, bits.len())
    }

    /// A bitmap of `len` bits from packed words (bits past `len` cleared).
    ///
    /// # Panics
    /// If `words` has fewer than `len.div_ceil(64)` words.
    pub fn from_words(mut words: Vec<u64>, len: usize) -> Bitmap {
        words.truncate(len.div_ceil(64));
        assert!(
            words.len() == len.div_ceil(64),
            "bitmap words shorter than len"
        );
        let mut b = Bitmap::packed(words, len);
        b.clear_tail();
        b
    }

    /// A bitmap whose bit `i` is `f(i)`, built 64 bits at a time (the
    /// tests go to bytes first, packed by [`crate::kernel::pack_bytes`], so
    /// that simple tests vectorize).
    #[inline]
    pub fn from_fn(len: usize, mut f: impl FnMut(usize) -> bool) -> Bitmap {
        let mut words = Vec::with_capacity(len.div_ceil(64));
        let mut bytes = [0u8; 64];
        let mut start = 0;
        while start < len {
            let end = (start + 64).min(len);
            if end - start < 64 {
                bytes.fill(0);
            }
            for (b, i) in bytes.iter_mut().zip(start..end) {
                *b = f(i) as u8;
            }
            words.push(crate::kernel::pack_bytes(&bytes));
            start = end;
        }
        Bitmap::packed(words, len)
    }

    /// The same bits in the sparse layout when that takes at most half the
    /// bytes of the packed one (at most one clear bit in 32, `len` at most
    /// [`SPARSE_MAX_LEN`]), else a clone. For a column's validity once it
    /// is encoded: iot's sensor columns, 1% NULL, go from 0.125 to about
    /// 0.02 bytes per row.
    pub fn compact(&self) -> Bitmap {
        let clear = self.len - self.count_ones();
        if !matches!(self.bits(), Bits::Words(_)) || self.len > SPARSE_MAX_LEN || clear * 32 > self.len
        {
            return self.clone();
        }
        Bitmap {
            words: Arc::new(Vec::new()),
            clear: Some(Arc::new(self.zeros().map(|i| i as u16).collect())),
            len: self.len,
        }
    }

    /// These bits in the packed layout: borrowed when they are, else
    /// unpacked (`len / 8` bytes), for loops that read bit after bit.
    pub fn dense(&self) -> Cow<'_, Bitmap> {
        match self.bits() {
            Bits::Words(_) => Cow::Borrowed(self),
            Bits::Clear(_) => Cow::Owned(Bitmap::packed(self.unpacked(), self.len)),
        }
    }

    /// The packed words of these bits (for the sparse layout: all ones,
    /// then each position cleared).
    fn unpacked(&self) -> Vec<u64> {
        match self.bits() {
            Bits::Words(w) => w.to_vec(),
            Bits::Clear(p) => {
                let n = self.len.div_ceil(64);
                let mut words = vec![u64::MAX; n];
                if let Some(last) = words.last_mut() {
                    *last = self.live(n - 1);
                }
                for &x in p.iter() {
                    words[x as usize / 64] &= !(1u64 << (x % 64));
                }
                words
            }
        }
    }

    /// True when the bits are in the sparse layout.
    pub fn is_sparse(&self) -> bool {
        matches!(self.bits(), Bits::Clear(_))
    }

    /// The packed words, unpacking the sparse layout first.
    fn words_mut(&mut self) -> &mut Vec<u64> {
        if self.clear.is_some() {
            self.words = Arc::new(self.unpacked());
            self.clear = None;
        }
        Arc::make_mut(&mut self.words)
    }

    fn clear_tail(&mut self) {
        let len = self.len;
        if !len.is_multiple_of(64)
            && let Some(last) = self.words_mut().last_mut()
        {
            *last &= (1u64 << (len % 64)) - 1;
        }
    }

    /// The valid bits of word `w`: all ones, but past `len` in the last.
    fn live(&self, w: usize) -> u64 {
        if (w + 1) * 64 <= self.len {
            u64::MAX
        } else {
            (1u64 << (self.len % 64)) - 1
        }
    }

    /// Word-wise `f(a, b)` of two bitmaps of equal length.
    ///
    /// # Panics
    /// If the lengths differ.
    #[inline]
    pub fn zip_with(&self, other: &Bitmap, f: impl Fn(u64, u64) -> u64) -> Bitmap {
        assert_eq!(self.len, other.len, "bitmaps of different lengths");
        let words = match (self.bits(), other.bits()) {
            (Bits::Words(a), Bits::Words(b)) => {
                a.iter().zip(b.iter()).map(|(&a, &b)| f(a, b)).collect()
            }
            _ => {
                let (a, b) = (self.dense(), other.dense());
                return a.zip_with(&b, f);
            }
        };
        let mut b = Bitmap::packed(words, self.len);
        b.clear_tail();
        b
    }

    /// Bits set in both.
    pub fn and(&self, other: &Bitmap) -> Bitmap {
        self.zip_with(other, |a, b| a & b)
    }

    /// Bits set in either.
    pub fn or(&self, other: &Bitmap) -> Bitmap {
        self.zip_with(other, |a, b| a | b)
    }

    /// Bits set here and not in `other`.
    pub fn and_not(&self, other: &Bitmap) -> Bitmap {
        self.zip_with(other, |a, b| a & !b)
    }

    /// Every bit flipped.
    pub fn not(&self) -> Bitmap {
        let mut words = self.unpacked();
        for w in &mut words {
            *w = !*w;
        }
        let mut b = Bitmap::packed(words, self.len);
        b.clear_tail();
        b
    }

    /// The bits at positions `sel`, in order: bit `j` of the result is bit
    /// `sel[j]` here.
    pub fn gather(&self, sel: &[u32]) -> Bitmap {
        let dense = self.dense();
        Bitmap::from_fn(sel.len(), |j| dense.get(sel[j] as usize))
    }

    /// Positions of the set bits, ascending.
    pub fn ones(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.len.div_ceil(64)).flat_map(move |w| {
            let mut word = self.word(w);
            std::iter::from_fn(move || {
                (word != 0).then(|| {
                    let i = word.trailing_zeros() as usize;
                    word &= word - 1;
                    w * 64 + i
                })
            })
        })
    }

    /// Positions of the clear bits (a validity's NULL rows), ascending.
    pub fn zeros(&self) -> Box<dyn Iterator<Item = usize> + '_> {
        match self.bits() {
            Bits::Clear(p) => Box::new(p.iter().map(|&i| i as usize)),
            Bits::Words(words) => Box::new(words.iter().enumerate().flat_map(|(w, &word)| {
                let mut word = !word & self.live(w);
                std::iter::from_fn(move || {
                    (word != 0).then(|| {
                        let i = word.trailing_zeros() as usize;
                        word &= word - 1;
                        w * 64 + i
                    })
                })
            })),
        }
    }

    /// True when every bit is set.
    pub fn all_set(&self) -> bool {
        self.count_ones() == self.len
    }

    /// True when no bit is set.
    pub fn none_set(&self) -> bool {
        match self.bits() {
            Bits::Words(words) => words.iter().all(|&w| w == 0),
            Bits::Clear(p) => p.len() == self.len,
        }
    }

    /// Number of bits.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when the bitmap has no bits.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bit `i` (a binary search in the sparse layout, kept out of line so
    /// that loops over packed bits stay tight).
    #[inline(always)]
    pub fn get(&self, i: usize) -> bool {
        debug_assert!(i < self.len);
        match self.words.get(i / 64) {
            Some(word) => (word >> (i % 64)) & 1 == 1,
            None => self.sparse_get(i),
        }
    }

    #[cold]
    #[inline(never)]
    fn sparse_get(&self, i: usize) -> bool {
        match self.bits() {
            Bits::Clear(p) => p.binary_search(&(i as u16)).is_err(),
            Bits::Words(words) => (words[i / 64] >> (i % 64)) & 1 == 1,
        }
    }

    /// Sets bit `i` to `value` (unpacking the sparse layout first).
    #[inline]
    pub fn set(&mut self, i: usize, value: bool) {
        debug_assert!(i < self.len);
        let mask = 1u64 << (i % 64);
        let words = self.words_mut();
        if value {
            words[i / 64] |= mask;
        } else {
            words[i / 64] &= !mask;
        }
    }

    /// Bits `64 * i .. 64 * i + 64` as one word (bit `j` is row `64 * i + j`;
    /// bits past `len` are zero).
    #[inline(always)]
    pub fn word(&self, i: usize) -> u64 {
        match self.words.get(i) {
            Some(&word) => word,
            None => self.sparse_word(i),
        }
    }

    #[cold]
    #[inline(never)]
    fn sparse_word(&self, i: usize) -> u64 {
        match self.bits() {
            Bits::Words(words) => words[i],
            Bits::Clear(p) => {
                let start = p.partition_point(|&x| (x as usize) < i * 64);
                let mut word = self.live(i);
                for &x in p[start..].iter().take_while(|&&x| (x as usize) < (i + 1) * 64) {
                    word &= !(1u64 << (x % 64));
                }
                word
            }
        }
    }

    /// Number of set bits.
    pub fn count_ones(&self) -> usize {
        match self.bits() {
            Bits::Words(words) => words.iter().map(|w| w.count_ones() as usize).sum(),
            Bits::Clear(p) => self.len - p.len(),
        }
    }

    /// Number of set bits among bits `range` (which must lie within the
    /// bitmap).
    pub fn count_ones_in(&self, range: std::ops::Range<usize>) -> usize {
        if range.is_empty() {
            return 0;
        }
        let words = match self.bits() {
            Bits::Words(words) => words,
            Bits::Clear(p) => {
                let below = |end: usize| p.partition_point(|&x| (x as usize) < end);
                return range.len() - (below(range.end) - below(range.start));
            }
        };
        let (first, last) = (range.start / 64, (range.end - 1) / 64);
        let low = !0u64 << (range.start % 64);
        let high = !0u64 >> (63 - (range.end - 1) % 64);
        if first == last {
            return (words[first] & low & high).count_ones() as usize;
        }
        let middle: usize = words[first + 1..last]
            .iter()
            .map(|w| w.count_ones() as usize)
            .sum();
        (words[first] & low).count_ones() as usize
            + middle
            + (words[last] & high).count_ones() as usize
    }

    /// Heap bytes held: this bitmap's share of its words or positions,
    /// which other clones may hold too (each counts an equal share).
    pub fn heap_bytes(&self) -> usize {
        match self.bits() {
            Bits::Words(w) => w.len() * 8 / Arc::strong_count(w),
            Bits::Clear(p) => p.len() * 2 / Arc::strong_count(p),
        }
    }

    /// ANDs mask `words` (bit `j` of word `w` is row `64·w + j`, as many
    /// words as this bitmap has or fewer) with this bitmap's words: what
    /// every filter kernel does last, so NULL rows never pass.
    pub fn and_into(&self, words: &mut [u64]) {
        match self.bits() {
            Bits::Words(v) => {
                for (word, v) in words.iter_mut().zip(v.iter()) {
                    *word &= v;
                }
            }
            Bits::Clear(p) => {
                for &x in p.iter() {
                    let Some(word) = words.get_mut(x as usize / 64) else {
                        break;
                    };
                    *word &= !(1u64 << (x % 64));
                }
                let last = self.len.div_ceil(64).wrapping_sub(1);
                if let Some(word) = words.get_mut(last) {
                    *word &= self.live(last);
                }
            }
        }
    }

    /// True when both hold the same words or positions (not a copy).
    pub fn shares_words(&self, other: &Bitmap) -> bool {
        match (self.bits(), other.bits()) {
            (Bits::Words(a), Bits::Words(b)) => Arc::ptr_eq(a, b),
            (Bits::Clear(a), Bits::Clear(b)) => Arc::ptr_eq(a, b),
            _ => false,
        }
    }
}

/// Makes validity bitmaps of `columns` (a partition's) that are equal one
/// shared copy, each in its smaller layout ([`Bitmap::compact`]): the taxi
/// data's ten `pickup_*` census columns are NULL on the same rows, and so
/// are the ten `dropoff_*` ones. Costs one compare of the words per pair of
/// nullable columns with the same NULL count.
pub fn share_validity<'c>(validity: impl Iterator<Item = &'c mut Option<Bitmap>>) {
    let mut kept: Vec<(usize, Bitmap)> = Vec::new();
    for v in validity.flatten() {
        let nulls = v.len - v.count_ones();
        match kept.iter().find(|(n, k)| *n == nulls && k == v) {
            Some((_, k)) => *v = k.clone(),
            None => {
                *v = v.compact();
                kept.push((nulls, v.clone()));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn from_fn_sets_bit_i_to_f_of_i() {
        for len in [0, 1, 63, 64, 65, 127, 128, 200] {
            let f = |i: usize| (i * 7 + i / 3) % 5 < 2;
            let b = Bitmap::from_fn(len, f);
            assert_eq!(b.len(), len);
            assert!((0..len).all(|i| b.get(i) == f(i)), "len {len}");
            // No bit past the end (the last block's bytes are cleared).
            let ones = (0..len).filter(|&i| f(i)).count();
            assert_eq!(b.count_ones(), ones, "len {len}");
        }
    }

    #[test]
    fn count_ones_in_counts_the_range_only() {
        let f = |i: usize| (i * 7 + i / 3) % 5 < 2;
        let b = Bitmap::from_fn(200, f);
        for (a, e) in [(0, 0), (0, 200), (3, 60), (63, 65), (64, 128), (5, 199), (130, 131)] {
            let want = (a..e).filter(|&i| f(i)).count();
            assert_eq!(b.count_ones_in(a..e), want, "{a}..{e}");
        }
    }

    #[test]
    fn equal_validity_is_shared_and_written_apart() {
        let a = Bitmap::from_bools(&[true, false, true, true]);
        let b = Bitmap::from_bools(&[true, false, true, true]);
        let c = Bitmap::from_bools(&[false, true, true, true]);
        let mut columns = [Some(a), None, Some(b), Some(c.clone()), Some(c)];
        let alone = columns[0].as_ref().unwrap().heap_bytes();
        share_validity(columns.iter_mut());
        let v: Vec<&Bitmap> = columns.iter().flatten().collect();
        assert!(v[0].shares_words(v[1]) && v[2].shares_words(v[3]));
        assert!(!v[0].shares_words(v[2]));
        // Each holder counts an equal share of the words.
        assert_eq!(v[0].heap_bytes() + v[1].heap_bytes(), alone);
        // A write to one copy leaves the others as they were.
        let mut w = v[0].clone();
        w.set(1, true);
        assert!(w.get(1) && !v[0].get(1) && !v[1].get(1));
        assert!(!w.shares_words(v[0]));
    }

    #[test]
    fn the_sparse_layout_answers_as_the_packed_one() {
        for len in [0, 1, 63, 64, 65, 130, 4_000, SPARSE_MAX_LEN] {
            for gap in [1, 7, 31, 32, 64, 1_000] {
                // Clear bits every `gap` rows from row 3 on.
                let f = |i: usize| i < 3 || !(i - 3).is_multiple_of(gap);
                let dense = Bitmap::from_fn(len, f);
                let sparse = dense.compact();
                let clear = len - dense.count_ones();
                assert_eq!(sparse.is_sparse(), clear * 32 <= len, "len {len} gap {gap}");
                assert_eq!(sparse, dense);
                assert_eq!(sparse.dense().as_ref(), &dense);
                assert!(!sparse.dense().is_sparse());
                assert_eq!(sparse.count_ones(), dense.count_ones());
                assert_eq!(sparse.all_set(), dense.all_set());
                assert_eq!(sparse.none_set(), dense.none_set());
                assert!((0..len).all(|i| sparse.get(i) == f(i)));
                assert!((0..len.div_ceil(64)).all(|w| sparse.word(w) == dense.word(w)));
                assert!(sparse.ones().eq(dense.ones()));
                assert!(sparse.zeros().eq(dense.zeros()));
                assert!(dense.zeros().eq((0..len).filter(|&i| !f(i))));
                for (a, e) in [(0, len), (0, len / 2), (len / 3, len), (len / 2, len / 2)] {
                    assert_eq!(sparse.count_ones_in(a..e), dense.count_ones_in(a..e));
                }
                let other = Bitmap::from_fn(len, |i| i % 5 < 3);
                assert_eq!(sparse.and(&other), dense.and(&other));
                assert_eq!(other.and_not(&sparse), other.and_not(&dense));
                assert_eq!(sparse.not(), dense.not());
                let sel: Vec<u32> = (0..len as u32).rev().step_by(3).collect();
                assert_eq!(sparse.gather(&sel), dense.gather(&sel));
                let mut words = vec![u64::MAX; len.div_ceil(64)];
                let mut expected = words.clone();
                sparse.and_into(&mut words);
                dense.and_into(&mut expected);
                assert_eq!(words, expected);
                // A write unpacks; the bitmap it came from is unchanged.
                if len > 3 {
                    let mut w = sparse.clone();
                    w.set(3, true);
                    assert!(w.get(3) && !sparse.get(3) && !w.is_sparse());
                }
            }
        }
        // Too many clear bits, or too long for u16 positions: packed.
        assert!(!Bitmap::from_fn(1_000, |i| i % 31 != 0).compact().is_sparse());
        assert!(!Bitmap::new(SPARSE_MAX_LEN + 1, true).compact().is_sparse());
    }

    #[test]
    fn shared_validity_is_compacted_once() {
        let few = Bitmap::from_fn(10_000, |i| i % 100 != 0);
        let mut columns = [Some(few.clone()), Some(few.clone()), None];
        share_validity(columns.iter_mut());
        let (a, b) = (columns[0].as_ref().unwrap(), columns[1].as_ref().unwrap());
        assert!(a.is_sparse() && a.shares_words(b));
        assert_eq!(a, &few);
        // 100 positions of 2 bytes, half in each holder.
        assert_eq!(a.heap_bytes() + b.heap_bytes(), 200);
        // Idempotent.
        share_validity(columns.iter_mut());
        assert!(columns[0].as_ref().unwrap().shares_words(columns[1].as_ref().unwrap()));
    }

    #[test]
    fn set_get_count() {
        for len in [0, 1, 63, 64, 65, 130] {
            let mut b = Bitmap::new(len, true);
            assert_eq!(b.count_ones(), len);
            if len > 0 {
                b.set(len - 1, false);
                assert!(!b.get(len - 1));
                assert_eq!(b.count_ones(), len - 1);
            }
            let bools: Vec<bool> = (0..len).map(|i| i % 3 == 0).collect();
            let b = Bitmap::from_bools(&bools);
            assert_eq!(b.count_ones(), bools.iter().filter(|&&x| x).count());
            assert!((0..len).all(|i| b.get(i) == bools[i]));
            let other: Vec<bool> = (0..len).map(|i| i % 5 < 2).collect();
            let o = Bitmap::from_bools(&other);
            let naive = |f: fn(bool, bool) -> bool| -> Vec<bool> {
                (0..len).map(|i| f(bools[i], other[i])).collect()
            };
            let bits = |b: &Bitmap| -> Vec<bool> { (0..len).map(|i| b.get(i)).collect() };
            assert_eq!(bits(&b.and(&o)), naive(|a, b| a && b));
            assert_eq!(bits(&b.or(&o)), naive(|a, b| a || b));
            assert_eq!(bits(&b.and_not(&o)), naive(|a, b| a && !b));
            assert_eq!(bits(&b.not()), naive(|a, _| !a));
            assert_eq!(b.not().count_ones(), len - b.count_ones());
            let ones: Vec<usize> = b.ones().collect();
            assert_eq!(ones, (0..len).filter(|&i| bools[i]).collect::<Vec<_>>());
            let sel: Vec<u32> = (0..len as u32).rev().step_by(3).collect();
            let g = b.gather(&sel);
            assert!((0..sel.len()).all(|j| g.get(j) == bools[sel[j] as usize]));
            assert_eq!(Bitmap::from_fn(len, |i| bools[i]), b);
            assert_eq!(
                Bitmap::from_words(vec![u64::MAX; len.div_ceil(64)], len),
                Bitmap::new(len, true)
            );
        }
    }
}
