//! A fixed-length bitmap, used as the validity (non-NULL) mask of a column.

/// `len` bits packed into u64 words, least significant bit first.
///
/// # Invariants
/// Bits at positions `>= len` in the last word are zero.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bitmap {
    words: Vec<u64>,
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
        Bitmap { words, len }
    }

    /// A bitmap from one bool per bit.
    pub fn from_bools(bits: &[bool]) -> Bitmap {
        let mut words = vec![0u64; bits.len().div_ceil(64)];
        for (i, &b) in bits.iter().enumerate() {
            words[i / 64] |= (b as u64) << (i % 64);
        }
        Bitmap {
            words,
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
        let mut b = Bitmap { words, len };
        b.clear_tail();
        b
    }

    /// A bitmap whose bit `i` is `f(i)`, built 64 bits at a time.
    #[inline]
    pub fn from_fn(len: usize, mut f: impl FnMut(usize) -> bool) -> Bitmap {
        let mut words = Vec::with_capacity(len.div_ceil(64));
        let mut start = 0;
        while start < len {
            let end = (start + 64).min(len);
            let mut w = 0u64;
            for i in start..end {
                w |= (f(i) as u64) << (i - start);
            }
            words.push(w);
            start = end;
        }
        Bitmap { words, len }
    }

    fn clear_tail(&mut self) {
        if !self.len.is_multiple_of(64)
            && let Some(last) = self.words.last_mut()
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
            .zip(&other.words)
            .map(|(&a, &b)| f(a, b))
            .collect();
        let mut b = Bitmap {
            words,
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
            words: self.words.iter().map(|w| !w).collect(),
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
        if value {
            self.words[i / 64] |= mask;
        } else {
            self.words[i / 64] &= !mask;
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

    /// Heap bytes held.
    pub fn heap_bytes(&self) -> usize {
        self.words.len() * 8
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
