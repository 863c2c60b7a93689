//! Packed unsigned codes: the physical widths every integer and dictionary
//! column is stored in, and the one trait kernels are generic over.

/// A physical code width: u8, u16, u32 or u64.
///
/// Sealed in spirit: only the four unsigned widths implement it. Kernels are
/// written once over `T: Code` and monomorphised per width, so a filter on a
/// u8 column runs a loop over bytes.
pub trait Code:
    Copy + Ord + Eq + std::hash::Hash + Send + Sync + std::fmt::Debug + 'static
{
    /// Largest value of the width, as u64.
    const MAX_U64: u64;
    /// Name of the width for EXPLAIN and `.schema` (`u8` …).
    const NAME: &'static str;
    /// Widens to u64.
    fn to_u64(self) -> u64;
    /// Narrows from u64; the caller guarantees `v <= MAX_U64`.
    fn from_u64(v: u64) -> Self;
    /// Widens to usize (codes index fixed arrays).
    #[inline]
    fn to_usize(self) -> usize {
        self.to_u64() as usize
    }
    /// `lo <= self <= lo + span` as one unsigned comparison in the code's
    /// own width (`self - lo <= span`, wrapping), so that a loop over
    /// narrow codes compares as many lanes as the width allows.
    fn in_span(self, lo: Self, span: Self) -> bool;
}

macro_rules! impl_code {
    ($t:ty, $name:literal) => {
        impl Code for $t {
            const MAX_U64: u64 = <$t>::MAX as u64;
            const NAME: &'static str = $name;
            #[inline(always)]
            fn to_u64(self) -> u64 {
                self as u64
            }
            #[inline(always)]
            fn in_span(self, lo: Self, span: Self) -> bool {
                self.wrapping_sub(lo) <= span
            }
            #[inline(always)]
            fn from_u64(v: u64) -> Self {
                debug_assert!(v <= Self::MAX_U64);
                v as $t
            }
        }
    };
}
impl_code!(u8, "u8");
impl_code!(u16, "u16");
impl_code!(u32, "u32");
impl_code!(u64, "u64");

/// A vector of codes in the narrowest width chosen at encode time.
#[derive(Debug, Clone, PartialEq)]
pub enum Codes {
    /// One byte per row.
    U8(Vec<u8>),
    /// Two bytes per row.
    U16(Vec<u16>),
    /// Four bytes per row.
    U32(Vec<u32>),
    /// Eight bytes per row.
    U64(Vec<u64>),
}

/// Runs `$body` with `$v` bound to the typed slice inside a [`Codes`]; the
/// one place where the width is dispatched, so `$body` is monomorphised per
/// width.
macro_rules! with_codes {
    ($codes:expr, $v:ident => $body:expr) => {
        match $codes {
            $crate::store::Codes::U8($v) => $body,
            $crate::store::Codes::U16($v) => $body,
            $crate::store::Codes::U32($v) => $body,
            $crate::store::Codes::U64($v) => $body,
        }
    };
}
pub(crate) use with_codes;

impl Codes {
    /// Packs `values` into the narrowest width that holds `max`.
    ///
    /// # Panics
    /// Debug builds assert that every value is `<= max`.
    pub fn pack(values: impl ExactSizeIterator<Item = u64>, max: u64) -> Codes {
        fn collect<T: Code>(values: impl Iterator<Item = u64>) -> Vec<T> {
            values.map(T::from_u64).collect()
        }
        if max <= u8::MAX_U64 {
            Codes::U8(collect(values))
        } else if max <= u16::MAX_U64 {
            Codes::U16(collect(values))
        } else if max <= u32::MAX_U64 {
            Codes::U32(collect(values))
        } else {
            Codes::U64(values.collect())
        }
    }

    /// Number of codes.
    pub fn len(&self) -> usize {
        with_codes!(self, v => v.len())
    }

    /// True when there are no codes.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The code at row `i`, widened.
    #[inline]
    pub fn get(&self, i: usize) -> u64 {
        with_codes!(self, v => v[i].to_u64())
    }

    /// Bytes per code.
    pub fn width_bytes(&self) -> usize {
        match self {
            Codes::U8(_) => 1,
            Codes::U16(_) => 2,
            Codes::U32(_) => 4,
            Codes::U64(_) => 8,
        }
    }

    /// `u8`, `u16`, `u32` or `u64`.
    pub fn width_name(&self) -> &'static str {
        match self {
            Codes::U8(_) => u8::NAME,
            Codes::U16(_) => u16::NAME,
            Codes::U32(_) => u32::NAME,
            Codes::U64(_) => u64::NAME,
        }
    }

    /// Heap bytes held.
    pub fn heap_bytes(&self) -> usize {
        self.len() * self.width_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pack_picks_narrowest_width() {
        let cases: [(u64, &str); 5] = [
            (0, "u8"),
            (255, "u8"),
            (256, "u16"),
            (70_000, "u32"),
            (u64::MAX, "u64"),
        ];
        for (max, width) in cases {
            let codes = Codes::pack([0, max].into_iter(), max);
            assert_eq!(codes.width_name(), width);
            assert_eq!(codes.get(1), max);
            assert_eq!(codes.len(), 2);
        }
    }
}
