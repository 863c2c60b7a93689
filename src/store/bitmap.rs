//! A fixed-length bitmap, used as the validity (non-NULL) mask of a column.

use std::sync::Arc;

/// `len` bits packed into u64 words, least significant bit first.
///
/// The words are reference-counted: a clone shares them (columns of a
/// partition that are NULL on the same rows hold one copy, see
/// [`share_validity`]), and a write to a shared bitmap copies first.
///
/// # Invariants
/// Bits at positions `>= len` in the last word are zero.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bitmap {
    words: Arc<Vec<u64>>,
    len: usize,
}

impl Bitmap {
    /// A bitmap of `len` bits, all set to `value`.
    pub fn new(len: usize, value: bool) -> Bitmap {
        let mut words = vec![if value { u64::MAX } else { 0 }; len.div_ceil(64)];
        if value
            && !len.is_multiple_of(64)
            && let Some(last) = words.last_mut()
        {
            *last = (1u64 << (len % 64)) - 1;
        }
        Bitmap {
            words: Arc::new(words),
            len,
        }
    }

    /// A bitmap from one bool per bit.
    pub fn from_bools(bits: &[bool]) -> Bitmap {
        let mut words = vec![0u64; bits.len().div_ceil(64)];
        for (i, &b) in bits.iter().enumerate() {
            words[i / 64] |= (b as u64) << (i % 64);
        }
        Bitmap {
            words: Arc::new(words),
            len: bits.len(),
        }
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
        let mut b = Bitmap {
            words: Arc::new(words),
            len,
        };
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
        Bitmap {
            words: Arc::new(words),
            len,
        }
    }

    fn clear_tail(&mut self) {
        if !self.len.is_multiple_of(64)
            && let Some(last) = Arc::make_mut(&mut self.words).last_mut()
        {
            *last &= (1u64 << (self.len % 64)) - 1;
        }
    }

    /// The packed words (bit `i` of word `w` is bit `64 * w + i`).
    #[inline]
    pub fn words(&self) -> &[u64] {
        &self.words
    }

    /// Word-wise `f(a, b)` of two bitmaps of equal length.
    ///
    /// # Panics
    /// If the lengths differ.
    #[inline]
    pub fn zip_with(&self, other: &Bitmap, f: impl Fn(u64, u64) -> u64) -> Bitmap {
        assert_eq!(self.len, other.len, "bitmaps of different lengths");
        let words = self
            .words
            .iter()
            .zip(other.words.iter())
            .map(|(&a, &b)| f(a, b))
            .collect();
        let mut b = Bitmap {
            words: Arc::new(words),
            len: self.len,
        };
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
        let mut b = Bitmap {
            words: Arc::new(self.words.iter().map(|w| !w).collect()),
            len: self.len,
        };
        b.clear_tail();
        b
    }

    /// The bits at positions `sel`, in order: bit `j` of the result is bit
    /// `sel[j]` here.
    pub fn gather(&self, sel: &[u32]) -> Bitmap {
        Bitmap::from_fn(sel.len(), |j| self.get(sel[j] as usize))
    }

    /// Positions of the set bits, ascending.
    pub fn ones(&self) -> impl Iterator<Item = usize> + '_ {
        self.words.iter().enumerate().flat_map(|(w, &word)| {
            let mut word = word;
            std::iter::from_fn(move || {
                (word != 0).then(|| {
                    let i = word.trailing_zeros() as usize;
                    word &= word - 1;
                    w * 64 + i
                })
            })
        })
    }

    /// True when every bit is set.
    pub fn all_set(&self) -> bool {
        self.count_ones() == self.len
    }

    /// True when no bit is set.
    pub fn none_set(&self) -> bool {
        self.words.iter().all(|&w| w == 0)
    }

    /// Number of bits.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when the bitmap has no bits.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bit `i`.
    #[inline]
    pub fn get(&self, i: usize) -> bool {
        debug_assert!(i < self.len);
        (self.words[i / 64] >> (i % 64)) & 1 == 1
    }

    /// Sets bit `i` to `value`.
    #[inline]
    pub fn set(&mut self, i: usize, value: bool) {
        debug_assert!(i < self.len);
        let mask = 1u64 << (i % 64);
        let words = Arc::make_mut(&mut self.words);
        if value {
            words[i / 64] |= mask;
        } else {
            words[i / 64] &= !mask;
        }
    }

    /// Bits `64 * i .. 64 * i + 64` as one word (bit `j` is row `64 * i + j`;
    /// bits past `len` are zero).
    #[inline]
    pub fn word(&self, i: usize) -> u64 {
        self.words[i]
    }

    /// Number of set bits.
    pub fn count_ones(&self) -> usize {
        self.words.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// Number of set bits among bits `range` (which must lie within the
    /// bitmap).
    pub fn count_ones_in(&self, range: std::ops::Range<usize>) -> usize {
        if range.is_empty() {
            return 0;
        }
        let (first, last) = (range.start / 64, (range.end - 1) / 64);
        let low = !0u64 << (range.start % 64);
        let high = !0u64 >> (63 - (range.end - 1) % 64);
        if first == last {
            return (self.words[first] & low & high).count_ones() as usize;
        }
        let middle: usize = self.words[first + 1..last]
            .iter()
            .map(|w| w.count_ones() as usize)
            .sum();
        (self.words[first] & low).count_ones() as usize
            + middle
            + (self.words[last] & high).count_ones() as usize
    }

    /// Heap bytes held: this bitmap's share of its words, which other
    /// clones may hold too (each counts an equal share).
    pub fn heap_bytes(&self) -> usize {
        self.words.len() * 8 / Arc::strong_count(&self.words)
    }

    /// ANDs mask `words` (bit `j` of word `w` is row `64·w + j`, as many
    /// words as this bitmap has or fewer) with this bitmap's words: what
    /// every filter kernel does last, so NULL rows never pass.
    pub fn and_into(&self, words: &mut [u64]) {
        for (word, v) in words.iter_mut().zip(self.words.iter()) {
            *word &= v;
        }
    }

    /// True when both hold the same words (not a copy).
    pub fn shares_words(&self, other: &Bitmap) -> bool {
        Arc::ptr_eq(&self.words, &other.words)
    }
}

/// Makes validity bitmaps of `columns` (a partition's) that are equal one
/// shared copy: the taxi data's ten `pickup_*` census columns are NULL on
/// the same rows, and so are the ten `dropoff_*` ones. Costs one compare
/// of the words per pair of nullable columns with the same NULL count.
pub fn share_validity<'c>(validity: impl Iterator<Item = &'c mut Option<Bitmap>>) {
    let mut kept: Vec<(usize, Bitmap)> = Vec::new();
    for v in validity.flatten() {
        let nulls = v.len - v.count_ones();
        match kept
            .iter()
            .find(|(n, k)| *n == nulls && k.len == v.len && k.words == v.words)
        {
            Some((_, k)) => *v = k.clone(),
            None => kept.push((nulls, v.clone())),
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
