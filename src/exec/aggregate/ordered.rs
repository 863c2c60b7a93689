//! Aggregates whose answer depends on an order over whole rows:
//! `string_agg` (the group's strings joined, optionally in the order of a
//! key) and `arg_min`/`arg_max` (one argument of the row with the
//! extreme value).
//!
//! # Design
//! Both keep [`Value`]s per group, not typed vectors: their inputs are of
//! any type (an `arg_min` argument may be a string, its value a timestamp)
//! and their cost is in the strings they copy, not in dispatch.
//! `string_agg` keeps every (key, string) pair of a group and orders them
//! only when the answer is read, so partials of different partitions merge
//! by concatenation. `arg_min`/`arg_max` keep the best (value, argument)
//! pair; ties on the value go to the smaller argument, so the answer does
//! not depend on the order partitions merge in.

use std::any::Any;
use std::cmp::Ordering;
use std::collections::HashSet;
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::plan::AggFunc;
use crate::types::Value;

use super::accumulator::{
    Accumulator, Buckets, Gids, Input, downcast, resize, split_vec, take_vec,
};

/// Input row `j` as a [`Value`].
///
/// # Errors
/// An input without values (rows only, or a column read in place: a bug
/// in the caller, which evaluates these aggregates' arguments).
fn value_at(input: &Input<'_, '_>, j: usize) -> Result<Value> {
    match input {
        Input::Array(a) => Ok(a.value(j)),
        Input::Scalar(v) => Ok((*v).clone()),
        Input::Rows | Input::Column(..) => Err(Error::Internal(
            "string_agg or arg_min offered rows without values".into(),
        )),
    }
}

// ---------------------------------------------------------------------------
// string_agg

/// `string_agg(s, separator [ORDER BY key])` per group: every non-NULL
/// string with its key (NULL when the call has no `ORDER BY`), in arrival
/// order.
pub(super) struct StringAgg {
    separator: Arc<str>,
    /// `Some((desc, nulls_first))` when the strings follow a key.
    order: Option<(bool, bool)>,
    /// `string_agg(DISTINCT …)`: a string already joined is skipped.
    distinct: bool,
    pieces: Vec<Vec<(Value, Arc<str>)>>,
}

impl StringAgg {
    /// An accumulator for `func` (an [`AggFunc::StringAgg`]); `ordered`
    /// when the call has an `ORDER BY` key.
    pub(super) fn new(func: AggFunc, separator: Arc<str>, ordered: bool) -> StringAgg {
        let order = match func {
            AggFunc::StringAgg {
                desc, nulls_first, ..
            } if ordered => Some((desc, nulls_first)),
            _ => None,
        };
        StringAgg {
            separator,
            order,
            distinct: matches!(func, AggFunc::StringAgg { distinct: true, .. }),
            pieces: Vec::new(),
        }
    }

    fn with(&self, pieces: Vec<Vec<(Value, Arc<str>)>>) -> Box<dyn Accumulator> {
        Box::new(StringAgg {
            separator: self.separator.clone(),
            order: self.order,
            distinct: self.distinct,
            pieces,
        })
    }

    /// Adds the rows of `s` (and of the keys `key`, when ordered).
    fn add(&mut self, s: Input<'_, '_>, key: Option<Input<'_, '_>>, gids: Gids<'_>) -> Result<()> {
        for j in 0..gids.len() {
            let Value::Str(text) = value_at(&s, j)? else {
                continue;
            };
            let k = match &key {
                Some(k) => value_at(k, j)?,
                None => Value::Null,
            };
            self.pieces[gids.get(j)].push((k, text));
        }
        Ok(())
    }
}

/// The order of two (key, string) pieces: by key (`desc`; NULL keys first
/// when `nulls_first`, else last), then by the strings' bytes.
fn piece_order(
    (a, sa): &(Value, Arc<str>),
    (b, sb): &(Value, Arc<str>),
    desc: bool,
    nulls_first: bool,
) -> Ordering {
    let by_key = match (a.is_null(), b.is_null()) {
        (true, true) => Ordering::Equal,
        (true, false) if nulls_first => Ordering::Less,
        (true, false) => Ordering::Greater,
        (false, true) if nulls_first => Ordering::Greater,
        (false, true) => Ordering::Less,
        (false, false) if desc => b.total_cmp(a),
        (false, false) => a.total_cmp(b),
    };
    by_key.then_with(|| sa.as_bytes().cmp(sb.as_bytes()))
}

impl Accumulator for StringAgg {
    fn update(&mut self, input: Input<'_, '_>, gids: Gids<'_>, groups: usize) -> Result<()> {
        resize(&mut self.pieces, groups, Vec::new());
        self.add(input, None, gids)
    }

    fn update_pair(
        &mut self,
        s: Input<'_, '_>,
        key: Input<'_, '_>,
        gids: Gids<'_>,
        groups: usize,
    ) -> Result<()> {
        resize(&mut self.pieces, groups, Vec::new());
        self.add(s, Some(key), gids)
    }

    fn take(&mut self, idx: &[u32]) -> Box<dyn Accumulator> {
        let pieces = take_vec(&mut self.pieces, idx);
        self.with(pieces)
    }

    fn split(&mut self, buckets: &Buckets) -> Vec<Box<dyn Accumulator>> {
        split_vec(&mut self.pieces, buckets)
            .into_iter()
            .map(|pieces| self.with(pieces))
            .collect()
    }

    fn merge(&mut self, other: Box<dyn Accumulator>, into: &[u32], groups: usize) -> Result<()> {
        let other = downcast::<StringAgg>(other)?;
        resize(&mut self.pieces, groups, Vec::new());
        for (p, &g) in other.pieces.into_iter().zip(into) {
            let mine = &mut self.pieces[g as usize];
            if mine.is_empty() {
                *mine = p;
            } else {
                mine.extend(p);
            }
        }
        Ok(())
    }

    fn finish(&mut self) {
        if let Some((desc, nulls_first)) = self.order {
            for p in &mut self.pieces {
                p.sort_by(|a, b| piece_order(a, b, desc, nulls_first));
            }
            // Sorted once: reading values needs no further sort.
            self.order = None;
        }
    }

    fn value(&self, g: usize) -> Value {
        let Some(pieces) = self.pieces.get(g).filter(|p| !p.is_empty()) else {
            return Value::Null;
        };
        let mut refs: Vec<&(Value, Arc<str>)> = pieces.iter().collect();
        if let Some((desc, nulls_first)) = self.order {
            refs.sort_by(|a, b| piece_order(a, b, desc, nulls_first));
        }
        let mut out = String::new();
        let mut seen: HashSet<&str> = HashSet::new();
        let mut joined = 0usize;
        for (_, s) in refs {
            if self.distinct && !seen.insert(s) {
                continue;
            }
            if joined > 0 {
                out.push_str(&self.separator);
            }
            out.push_str(s);
            joined += 1;
        }
        Value::Str(Arc::from(out))
    }

    fn heap_bytes(&self) -> usize {
        self.pieces.capacity() * 24
            + self
                .pieces
                .iter()
                .map(|p| {
                    p.capacity() * std::mem::size_of::<(Value, Arc<str>)>()
                        + p.iter().map(|(_, s)| s.len() + 16).sum::<usize>()
                })
                .sum::<usize>()
    }

    fn into_any(self: Box<Self>) -> Box<dyn Any> {
        self
    }
}

// ---------------------------------------------------------------------------
// arg_min, arg_max

/// `arg_min(arg, val)` or `arg_max(arg, val)` per group: the best
/// `(val, arg)` pair seen.
pub(super) struct ArgExtreme {
    /// True for `arg_max`.
    max: bool,
    best: Vec<Option<(Value, Value)>>,
}

impl ArgExtreme {
    /// An accumulator for [`AggFunc::ArgMin`] or [`AggFunc::ArgMax`].
    pub(super) fn new(func: AggFunc) -> ArgExtreme {
        ArgExtreme {
            max: func == AggFunc::ArgMax,
            best: Vec::new(),
        }
    }

    /// Offers the pair `(val, arg)` to group `g`.
    fn offer(&mut self, g: usize, val: Value, arg: Value) {
        let slot = &mut self.best[g];
        let better = match slot {
            None => true,
            Some((v, a)) => {
                let by_val = if self.max {
                    val.total_cmp(v)
                } else {
                    v.total_cmp(&val)
                };
                by_val.then_with(|| a.total_cmp(&arg)) == Ordering::Greater
            }
        };
        if better {
            *slot = Some((val, arg));
        }
    }
}

impl Accumulator for ArgExtreme {
    fn update(&mut self, _: Input<'_, '_>, gids: Gids<'_>, groups: usize) -> Result<()> {
        // No rows (a partition WHERE emptied) only make room for groups.
        resize(&mut self.best, groups, None);
        if gids.len() == 0 {
            return Ok(());
        }
        Err(Error::Internal(
            "arg_min or arg_max offered one argument".into(),
        ))
    }

    fn update_pair(
        &mut self,
        arg: Input<'_, '_>,
        val: Input<'_, '_>,
        gids: Gids<'_>,
        groups: usize,
    ) -> Result<()> {
        resize(&mut self.best, groups, None);
        for j in 0..gids.len() {
            let v = value_at(&val, j)?;
            if v.is_null() {
                continue;
            }
            let a = value_at(&arg, j)?;
            if !a.is_null() {
                self.offer(gids.get(j), v, a);
            }
        }
        Ok(())
    }

    fn take(&mut self, idx: &[u32]) -> Box<dyn Accumulator> {
        Box::new(ArgExtreme {
            max: self.max,
            best: take_vec(&mut self.best, idx),
        })
    }

    fn split(&mut self, buckets: &Buckets) -> Vec<Box<dyn Accumulator>> {
        split_vec(&mut self.best, buckets)
            .into_iter()
            .map(|best| {
                Box::new(ArgExtreme {
                    max: self.max,
                    best,
                }) as Box<dyn Accumulator>
            })
            .collect()
    }

    fn merge(&mut self, other: Box<dyn Accumulator>, into: &[u32], groups: usize) -> Result<()> {
        let other = downcast::<ArgExtreme>(other)?;
        resize(&mut self.best, groups, None);
        for (b, &g) in other.best.into_iter().zip(into) {
            if let Some((v, a)) = b {
                self.offer(g as usize, v, a);
            }
        }
        Ok(())
    }

    fn value(&self, g: usize) -> Value {
        match self.best.get(g) {
            Some(Some((_, a))) => a.clone(),
            _ => Value::Null,
        }
    }

    fn heap_bytes(&self) -> usize {
        self.best.capacity() * std::mem::size_of::<Option<(Value, Value)>>()
    }

    fn into_any(self: Box<Self>) -> Box<dyn Any> {
        self
    }
}
