//! Kernels: pure, generic functions over slices, with the operation as a
//! closure, so one definition serves every width and comparison and is
//! monomorphised into a tight loop for each.
//!
//! Kernels know nothing of plans, tables or codecs; `exec` decides which
//! kernel serves which partition.

pub mod hash;
pub mod like;
pub mod random;

/// Row indices selected in a partition, ascending.
pub type Selection = Vec<u32>;

/// The rows among `sel` (all rows `0..values.len()` when `None`) whose value
/// satisfies `pred`, in order.
///
/// # Performance
/// Over all rows, each block of 64 values is first reduced to a 64-bit
/// mask in a loop without branches (which the compiler vectorizes for
/// simple predicates), then the set bits are turned into row indices, so
/// the cost per rejected row is a fraction of a cycle.
#[inline]
pub fn select_where<T: Copy>(
    values: &[T],
    sel: Option<&[u32]>,
    pred: impl Fn(T) -> bool,
) -> Selection {
    match sel {
        None => {
            let mut out = Vec::with_capacity(values.len() / 4);
            for (block, chunk) in values.chunks(64).enumerate() {
                let mut mask = block_mask(chunk, &pred);
                let base = (block * 64) as u32;
                while mask != 0 {
                    out.push(base + mask.trailing_zeros());
                    mask &= mask - 1;
                }
            }
            out
        }
        Some(sel) => {
            let mut out = Vec::with_capacity(sel.len());
            for &i in sel {
                if pred(values[i as usize]) {
                    out.push(i);
                }
            }
            out
        }
    }
}

/// A 64-bit mask of which of (at most 64) `values` satisfy `pred`: bit `i`
/// is `pred(values[i])`. Branch-free, so simple predicates vectorize.
///
/// The tests go to 64 bytes first and are packed eight at a time: shifting
/// each test into the mask chains every row on the one before, which kept
/// the loop scalar at about five cycles a row.
#[inline]
pub fn block_mask<T: Copy>(values: &[T], pred: impl Fn(T) -> bool) -> u64 {
    debug_assert!(values.len() <= 64);
    let mut bytes = [0u8; 64];
    for (b, &v) in bytes.iter_mut().zip(values) {
        *b = pred(v) as u8;
    }
    pack_bytes(&bytes)
}

/// The low `n` bits set (`n <= 64`): the rows of a block of `n` rows.
#[inline]
pub fn low_bits(n: usize) -> u64 {
    debug_assert!(n <= 64);
    if n == 64 { u64::MAX } else { (1u64 << n) - 1 }
}

/// Bit `j` of the result is `bytes[j]`, each byte 0 or 1. A multiply moves
/// the low bits of eight bytes into the top byte of the product, in order
/// (no two partial products meet, so nothing carries).
#[inline]
pub fn pack_bytes(bytes: &[u8; 64]) -> u64 {
    let mut mask = 0u64;
    for (k, chunk) in bytes.chunks_exact(8).enumerate() {
        let word = u64::from_le_bytes(chunk.try_into().unwrap_or_default());
        mask |= (word.wrapping_mul(0x0102_0408_1020_4080) >> 56) << (8 * k);
    }
    mask
}

/// Rows whose code lies in `lo..=hi` (or outside it when `negate`): one
/// unsigned comparison per row (`code - lo <= hi - lo` with wrapping).
///
/// # Panics
/// Debug builds assert `lo <= hi`.
#[inline]
pub fn select_code_range<T: Copy + Into<u64>>(
    codes: &[T],
    sel: Option<&[u32]>,
    lo: u64,
    hi: u64,
    negate: bool,
) -> Selection {
    debug_assert!(lo <= hi);
    let span = hi - lo;
    if negate {
        select_where(codes, sel, move |c| c.into().wrapping_sub(lo) > span)
    } else {
        select_where(codes, sel, move |c| c.into().wrapping_sub(lo) <= span)
    }
}

/// Rows whose code is marked in `member` (a lookup table indexed by code).
#[inline]
pub fn select_code_set<T: Copy + Into<u64>>(
    codes: &[T],
    sel: Option<&[u32]>,
    member: &[bool],
) -> Selection {
    select_where(codes, sel, move |c| {
        member.get(c.into() as usize).copied().unwrap_or(false)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_mask_sets_bit_j_for_row_j() {
        // Every length up to 64, with patterns that set and clear each bit
        // next to each other bit.
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        for len in 0..=64usize {
            for _ in 0..50 {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                let values: Vec<u64> = (0..len as u64).map(|j| state >> j).collect();
                let expected = (0..len).fold(0u64, |m, j| m | ((values[j] & 1) << j));
                assert_eq!(block_mask(&values, |v| v & 1 == 1), expected, "len {len}");
            }
        }
        assert_eq!(block_mask(&[1u8; 64], |_| true), u64::MAX);
    }

    #[test]
    fn code_range_and_set_select_the_same_rows_as_a_filter() {
        let codes: Vec<u8> = (0..200u32).map(|i| (i * 37 % 251) as u8).collect();
        let sel: Vec<u32> = (0..200).filter(|i| i % 3 != 0).collect();
        for (lo, hi) in [(0u64, 0u64), (10, 50), (0, 255), (250, 255)] {
            for negate in [false, true] {
                for s in [None, Some(&sel[..])] {
                    let got = select_code_range(&codes, s, lo, hi, negate);
                    let rows: Vec<u32> = s.map(|s| s.to_vec()).unwrap_or((0..200).collect());
                    let want: Vec<u32> = rows
                        .into_iter()
                        .filter(|&i| ((lo..=hi).contains(&(codes[i as usize] as u64))) != negate)
                        .collect();
                    assert_eq!(got, want);
                }
            }
        }
        let mut member = vec![false; 256];
        member[37] = true;
        assert_eq!(select_code_set(&codes, None, &member), vec![1]);
    }
}
