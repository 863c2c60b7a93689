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

/// Gathers `values[i]` for `i` in `sel` (or all), mapped through `f`.
#[inline]
pub fn gather<T: Copy, U>(values: &[T], sel: Option<&[u32]>, f: impl Fn(T) -> U) -> Vec<U> {
    match sel {
        None => values.iter().map(|&v| f(v)).collect(),
        Some(sel) => sel.iter().map(|&i| f(values[i as usize])).collect(),
    }
}

/// Adds one to `counts[key]` for each key: the fixed-array group count.
#[inline]
pub fn count_by_key(keys: &[u32], counts: &mut [u64]) {
    for &k in keys {
        counts[k as usize] += 1;
    }
}

/// Keeps the best `n` of `(key, row)` candidates under `better`, updating
/// the running threshold; the top-n kernel.
///
/// Rows are offered in order; a row is kept only if its key is not worse
/// than the current threshold (the n-th best so far). When the buffer holds
/// `2n` candidates it is cut back to the best `n`, which tightens the
/// threshold, so most rows are rejected by one comparison.
pub struct TopN<K: Copy> {
    n: usize,
    items: Vec<(K, u32)>,
    threshold: Option<K>,
}

impl<K: Copy> TopN<K> {
    /// An empty top-n buffer for `n` rows.
    pub fn new(n: usize) -> TopN<K> {
        TopN {
            n,
            items: Vec::with_capacity(2 * n.max(1)),
            threshold: None,
        }
    }

    /// Offers rows `(key, row)`; `cmp_better(a, b)` orders better keys first.
    #[inline]
    pub fn offer_all(
        &mut self,
        keys: impl Iterator<Item = (K, u32)>,
        cmp: &impl Fn(&K, &K) -> std::cmp::Ordering,
    ) {
        if self.n == 0 {
            return;
        }
        for (k, row) in keys {
            if let Some(t) = &self.threshold {
                // Ties with the threshold are kept: later keys may break them.
                if cmp(&k, t) == std::cmp::Ordering::Greater {
                    continue;
                }
            }
            self.items.push((k, row));
            if self.items.len() >= 2 * self.n {
                self.shrink(cmp);
            }
        }
    }

    fn shrink(&mut self, cmp: &impl Fn(&K, &K) -> std::cmp::Ordering) {
        if self.items.len() > self.n {
            let n = self.n;
            self.items
                .select_nth_unstable_by(n - 1, |a, b| cmp(&a.0, &b.0).then(a.1.cmp(&b.1)));
            // Keep every candidate tied with the n-th key: a second sort key
            // may prefer them.
            let nth = self.items[n - 1].0;
            let mut tail: Vec<(K, u32)> = self.items[n..]
                .iter()
                .copied()
                .filter(|x| cmp(&x.0, &nth) == std::cmp::Ordering::Equal)
                .collect();
            self.items.truncate(n);
            self.items.append(&mut tail);
            self.threshold = Some(nth);
        }
    }

    /// The kept rows (at least the best `n`, plus ties), in row order.
    pub fn into_rows(mut self, cmp: &impl Fn(&K, &K) -> std::cmp::Ordering) -> Vec<u32> {
        self.shrink(cmp);
        let mut rows: Vec<u32> = self.items.into_iter().map(|x| x.1).collect();
        rows.sort_unstable();
        rows
    }
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

    #[test]
    fn top_n_keeps_best_and_ties() {
        let keys: Vec<i64> = vec![5, 1, 9, 9, 3, 9, 7, 2, 9, 0];
        let mut t = TopN::new(3);
        let cmp = |a: &i64, b: &i64| b.cmp(a); // descending
        t.offer_all(keys.iter().enumerate().map(|(i, &k)| (k, i as u32)), &cmp);
        let rows = t.into_rows(&cmp);
        let got: Vec<i64> = rows.iter().map(|&r| keys[r as usize]).collect();
        assert!(got.iter().all(|&k| k == 9));
        assert_eq!(got.len(), 4);
        let mut t: TopN<i64> = TopN::new(0);
        t.offer_all([(1, 0)].into_iter(), &cmp);
        assert!(t.into_rows(&cmp).is_empty());
    }
}
