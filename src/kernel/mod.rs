//! Kernels: pure, generic functions over slices, with the operation as a
//! closure, so one definition serves every width and comparison and is
//! monomorphised into a tight loop for each.
//!
//! Kernels know nothing of plans, tables or codecs; `exec` decides which
//! kernel serves which partition.

pub mod hash;
pub mod like;

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
#[inline]
pub fn block_mask<T: Copy>(values: &[T], pred: impl Fn(T) -> bool) -> u64 {
    debug_assert!(values.len() <= 64);
    let mut mask = 0u64;
    for (i, &v) in values.iter().enumerate() {
        mask |= (pred(v) as u64) << i;
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
