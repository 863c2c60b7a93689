//! A list of distinct plan items (group keys, aggregate calls) with a hash
//! index, so that deduplicating `n` items costs O(n) probes instead of the
//! O(n²) comparisons of a linear search. `SUMMARIZE` over a 47,000-column
//! table plans about five aggregates per column; searched linearly, binding
//! them took 28 s (perf: `Expr::eq` and `post_aggregate`, 90%).

use std::fmt::{self, Debug, Write as _};
use std::hash::{DefaultHasher, Hasher};

use hashbrown::HashTable;

/// Items in insertion order, each at most once by `==`.
///
/// The index hashes an item's `Debug` text, which equal items share; items
/// that are `==` but print differently (`0.0` and `-0.0` literals) only miss
/// a merge and stay two entries, which costs work, never a wrong answer.
pub struct Deduped<T> {
    items: Vec<T>,
    /// `(hash, index into items)`.
    index: HashTable<(u64, u32)>,
}

impl<T: PartialEq + Debug> Deduped<T> {
    /// An empty list.
    pub fn new() -> Deduped<T> {
        Deduped {
            items: Vec::new(),
            index: HashTable::new(),
        }
    }

    /// A list of `items` as they are, duplicates included (their indices
    /// stay valid); lookups find the first of equal items.
    pub fn from_items(items: Vec<T>) -> Deduped<T> {
        let mut index = HashTable::with_capacity(items.len());
        for (i, x) in items.iter().enumerate() {
            let h = debug_hash(x);
            if index
                .find(h, |&(eh, j): &(u64, u32)| eh == h && items[j as usize] == *x)
                .is_none()
            {
                index.insert_unique(h, (h, i as u32), |e| e.0);
            }
        }
        Deduped { items, index }
    }

    /// Index of the item equal to `x`, if any.
    pub fn position(&self, x: &T) -> Option<usize> {
        let h = debug_hash(x);
        self.index
            .find(h, |&(eh, i)| eh == h && self.items[i as usize] == *x)
            .map(|&(_, i)| i as usize)
    }

    /// Index of `x`: of the equal item already listed, or of `x` appended.
    pub fn insert(&mut self, x: T) -> usize {
        let h = debug_hash(&x);
        let items = &self.items;
        if let Some(&(_, i)) = self
            .index
            .find(h, |&(eh, i)| eh == h && items[i as usize] == x)
        {
            return i as usize;
        }
        let i = self.items.len();
        self.items.push(x);
        self.index.insert_unique(h, (h, i as u32), |e| e.0);
        i
    }

    /// The items, in insertion order.
    pub fn as_slice(&self) -> &[T] {
        &self.items
    }

    /// The items, in insertion order.
    pub fn into_vec(self) -> Vec<T> {
        self.items
    }
}

/// Hash of `x`'s `Debug` text, streamed (no string is built).
fn debug_hash<T: Debug>(x: &T) -> u64 {
    struct Feed(DefaultHasher);
    impl fmt::Write for Feed {
        fn write_str(&mut self, s: &str) -> fmt::Result {
            self.0.write(s.as_bytes());
            Ok(())
        }
    }
    let mut feed = Feed(DefaultHasher::new());
    // Writing into a hasher cannot fail.
    let _ = write!(feed, "{x:?}");
    feed.0.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inserts_each_item_once_in_order() {
        let mut d = Deduped::new();
        let at: Vec<usize> = ["b", "a", "b", "c", "a"].map(|x| d.insert(x)).to_vec();
        assert_eq!(at, [0, 1, 0, 2, 1]);
        assert_eq!(d.as_slice(), &["b", "a", "c"]);
        assert_eq!(d.position(&"c"), Some(2));
        assert_eq!(d.position(&"z"), None);
        assert_eq!(d.insert("z"), 3);
        assert_eq!(d.into_vec(), vec!["b", "a", "c", "z"]);
    }

    #[test]
    fn existing_items_keep_their_indices() {
        let mut d = Deduped::from_items(vec!["x", "y", "x"]);
        assert_eq!(d.position(&"x"), Some(0));
        assert_eq!(d.insert("y"), 1);
        assert_eq!(d.insert("w"), 3);
        assert_eq!(d.into_vec(), vec!["x", "y", "x", "w"]);
    }

    #[test]
    fn equal_items_that_print_differently_stay_apart() {
        // 0.0 == -0.0, but they print (and hash) differently.
        let mut d = Deduped::new();
        for x in [0.0f64, -0.0, 0.0] {
            d.insert(x);
        }
        assert_eq!(d.as_slice().len(), 2);
    }
}
