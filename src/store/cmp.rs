//! Comparison operators and code-space predicates shared by the compressed
//! codecs ([`super::Alp`], [`super::Linear`], [`super::Rle`], …).
//!
//! The store knows nothing of SQL, so it has its own small operator enum;
//! the executor maps its `BinaryOp` onto it.

use std::cmp::Ordering;
use std::ops::Range;

/// A comparison `value op constant`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CmpOp {
    /// `=`
    Eq,
    /// `<>`
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
}

impl CmpOp {
    /// Every operator, for table-driven tests.
    pub const ALL: [CmpOp; 6] = [
        CmpOp::Eq,
        CmpOp::Ne,
        CmpOp::Lt,
        CmpOp::Le,
        CmpOp::Gt,
        CmpOp::Ge,
    ];

    /// Whether `ord` (value compared with the constant) satisfies the
    /// operator.
    #[inline]
    pub fn holds(self, ord: Ordering) -> bool {
        match self {
            CmpOp::Eq => ord == Ordering::Equal,
            CmpOp::Ne => ord != Ordering::Equal,
            CmpOp::Lt => ord == Ordering::Less,
            CmpOp::Le => ord != Ordering::Greater,
            CmpOp::Gt => ord == Ordering::Greater,
            CmpOp::Ge => ord != Ordering::Less,
        }
    }

    /// The code-space predicate of this operator over an order-preserving
    /// code space, given `lt`, the number of codes whose value is less than
    /// the constant, and `le`, the number whose value is at most the
    /// constant (so codes `lt..le` equal it), out of `count` codes.
    pub fn predicate(self, lt: u64, le: u64, count: u64) -> CodePredicate {
        debug_assert!(lt <= le && le <= count);
        let (codes, negated) = match self {
            CmpOp::Eq => (lt..le, false),
            CmpOp::Ne => (lt..le, true),
            CmpOp::Lt => (0..lt, false),
            CmpOp::Le => (0..le, false),
            CmpOp::Gt => (le..count, false),
            CmpOp::Ge => (lt..count, false),
        };
        CodePredicate { codes, negated }
    }
}

/// A predicate on codes: code `c` matches when `codes.contains(&c) !=
/// negated`. Every comparison against a constant on an order-preserving
/// codec has this shape (`<>` is the one negated range).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodePredicate {
    /// The codes the (un-negated) predicate accepts, half-open.
    pub codes: Range<u64>,
    /// True for `<>`: the predicate accepts the codes outside `codes`.
    pub negated: bool,
}

impl CodePredicate {
    /// Whether code `c` matches.
    #[inline]
    pub fn matches(&self, c: u64) -> bool {
        (self.codes.start <= c && c < self.codes.end) != self.negated
    }

    /// True when no code in `0..count` can match.
    pub fn is_none(&self, count: u64) -> bool {
        if self.negated {
            self.codes.start == 0 && self.codes.end >= count
        } else {
            self.codes.start >= self.codes.end.min(count)
        }
    }

    /// True when every code in `0..count` matches.
    pub fn is_all(&self, count: u64) -> bool {
        if self.negated {
            self.codes.start >= self.codes.end || self.codes.start >= count
        } else {
            self.codes.start == 0 && self.codes.end >= count
        }
    }
}

/// Smallest `x` in `lo..hi` with `pred(x)` true, or `hi` if none, for a
/// `pred` that is false then true (monotone). Used to turn a constant into a
/// code bound by probing the codec's own decode, which is exact whatever the
/// rounding of the constant.
pub(crate) fn partition_point(mut lo: u64, mut hi: u64, pred: impl Fn(u64) -> bool) -> u64 {
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if pred(mid) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    lo
}

/// Rows decoded per batch by the kernels that decode then compute.
pub const BATCH_ROWS: usize = 1024;

/// Mask words (bit `j` of word `w` is row `64·w + j`) of the rows whose
/// decoded value satisfies `pred`, ANDed with `validity`: the general
/// filter of codecs that must decode, a batch of [`BATCH_ROWS`] at a time.
pub(crate) fn mask_by_batches<T: Copy>(
    len: usize,
    mut decode: impl FnMut(Range<usize>, &mut Vec<T>),
    pred: impl Fn(T) -> bool,
    validity: Option<&super::Bitmap>,
) -> Vec<u64> {
    let mut words = vec![0u64; len.div_ceil(64)];
    let mut batch = Vec::with_capacity(BATCH_ROWS);
    for start in (0..len).step_by(BATCH_ROWS) {
        batch.clear();
        decode(start..(start + BATCH_ROWS).min(len), &mut batch);
        for (chunk_index, chunk) in batch.chunks(64).enumerate() {
            words[start / 64 + chunk_index] = crate::kernel::block_mask(chunk, &pred);
        }
    }
    if let Some(v) = validity {
        v.and_into(&mut words);
    }
    words
}

/// Mask words of the rows in `ranges` (ascending, disjoint), ANDed with
/// `validity`.
pub fn mask_from_ranges(
    len: usize,
    ranges: &[Range<usize>],
    validity: Option<&super::Bitmap>,
) -> Vec<u64> {
    let mut words = vec![0u64; len.div_ceil(64)];
    for r in ranges {
        let mut i = r.start;
        while i < r.end {
            let (w, b) = (i / 64, i % 64);
            let n = (64 - b).min(r.end - i);
            let bits = if n == 64 {
                u64::MAX
            } else {
                ((1u64 << n) - 1) << b
            };
            words[w] |= bits;
            i += n;
        }
    }
    if let Some(v) = validity {
        v.and_into(&mut words);
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn predicates_match_the_operator_on_every_code() {
        // Codes 0..10 hold the values below; the constant is 5.
        let values = [1, 2, 5, 5, 5, 7, 8, 9, 9, 12];
        for c in [0, 1, 5, 6, 12, 13] {
            let lt = values.iter().filter(|&&v| v < c).count() as u64;
            let le = values.iter().filter(|&&v| v <= c).count() as u64;
            for op in CmpOp::ALL {
                let p = op.predicate(lt, le, 10);
                for (code, &v) in values.iter().enumerate() {
                    assert_eq!(p.matches(code as u64), op.holds(v.cmp(&c)), "{op:?} {c}");
                }
                let all = values.iter().all(|&v| op.holds(v.cmp(&c)));
                let none = !values.iter().any(|&v| op.holds(v.cmp(&c)));
                assert_eq!(p.is_all(10), all, "{op:?} {c}");
                assert_eq!(p.is_none(10), none, "{op:?} {c}");
            }
        }
    }

    #[test]
    fn masks_from_ranges_and_batches_agree_with_bits() {
        let len = 2500;
        let ranges = [0..1, 63..65, 100..100, 128..1300, 2400..2500];
        let validity =
            super::super::Bitmap::from_bools(&(0..len).map(|i| i % 7 != 3).collect::<Vec<_>>());
        for v in [None, Some(&validity)] {
            let a = mask_from_ranges(len, &ranges, v);
            let in_range = |i: usize| ranges.iter().any(|r| r.contains(&i));
            let b = mask_by_batches(len, |r, out: &mut Vec<usize>| out.extend(r), in_range, v);
            assert_eq!(a, b);
            for i in 0..len {
                let bit = (a[i / 64] >> (i % 64)) & 1 == 1;
                assert_eq!(bit, in_range(i) && v.is_none_or(|v| v.get(i)));
            }
        }
    }

    #[test]
    fn partition_point_finds_the_first_true() {
        for n in 0..20u64 {
            for t in 0..=n {
                assert_eq!(partition_point(0, n, |x| x >= t), t);
            }
        }
        assert_eq!(partition_point(0, u64::MAX, |x| x > 1 << 60), (1 << 60) + 1);
    }
}
