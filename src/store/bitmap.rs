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
        }
    }
}
