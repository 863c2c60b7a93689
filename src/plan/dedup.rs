//! A list of distinct plan items (group keys, aggregate calls) with a hash
//! index, so that deduplicating `n` items costs O(n) probes instead of the
//! O(n²) comparisons of a linear search. `SUMMARIZE` over a 47,000-column
//! table plans about five aggregates per column; searched linearly, binding
//! them took 28 s (perf: `Expr::eq` and `post_aggregate`, 90%).

use std::hash::{BuildHasher, Hash, RandomState};

use hashbrown::HashTable;

/// Items in insertion order, each at most once by `==` (which `Hash`
/// agrees with: `Value` hashes floats canonically, as it compares them).
pub struct Deduped<T> {
    items: Vec<T>,
    /// `(hash, index into items)`.
    index: HashTable<(u64, u32)>,
    hasher: RandomState,
}

impl<T: Eq + Hash> Deduped<T> {
    /// An empty list.
    pub fn new() -> Deduped<T> {
        Deduped {
            items: Vec::new(),
            index: HashTable::new(),
            hasher: RandomState::new(),
        }
    }

    /// A list of `items` as they are, duplicates included (their indices
    /// stay valid); lookups find the first of equal items.
    pub fn from_items(items: Vec<T>) -> Deduped<T> {
        let hasher = RandomState::new();
        let mut index = HashTable::with_capacity(items.len());
        for (i, x) in items.iter().enumerate() {
            let h = hasher.hash_one(x);
            if index
                .find(h, |&(eh, j): &(u64, u32)| eh == h && items[j as usize] == *x)
                .is_none()
            {
                index.insert_unique(h, (h, i as u32), |e| e.0);
            }
        }
        Deduped {
            items,
            index,
            hasher,
        }
    }

    /// Index of the item equal to `x`, if any.
    pub fn position(&self, x: &T) -> Option<usize> {
        // No hash of `x` when there is nothing to find (an aggregate
        // without GROUP BY looks up every node of its outputs).
        if self.items.is_empty() {
            return None;
        }
        let h = self.hasher.hash_one(x);
        self.index
            .find(h, |&(eh, i)| eh == h && self.items[i as usize] == *x)
            .map(|&(_, i)| i as usize)
    }

    /// Index of `x`: of the equal item already listed, or of `x` appended.
    pub fn insert(&mut self, x: T) -> usize {
        let h = self.hasher.hash_one(&x);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::Expr;
    use crate::types::{DataType, Value};

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
    fn equal_float_literals_are_one_item() {
        // 0.0 == -0.0 as plan values (and NaN == NaN): one entry each.
        let lit = |v: f64| Expr::literal(Value::Float(v), DataType::Float);
        let mut d = Deduped::new();
        for v in [0.0, -0.0, f64::NAN, f64::NAN, 1.5] {
            d.insert(lit(v));
        }
        assert_eq!(d.as_slice().len(), 3);
        assert_eq!(d.position(&lit(-0.0)), Some(0));
    }
}
