//! Joins whose ON (or WHERE, between two inputs) has comparisons of a
//! column of each side but no equality: `e.ts >= b.lo AND e.ts < b.hi`.
//!
//! Without this a join of that shape was every pair of rows, gathered and
//! then filtered: a million events against a thousand buckets asked for
//! a billion joined rows and failed at the memory limit after 20 s.
//!
//! Here the build side's rows are sorted by the column of one comparison
//! (the primary), so that each probe row's partners under it are one
//! run of the sorted rows, found by binary search (a piecewise merge
//! join, as DuckDB's for one inequality). A second comparison on a
//! numeric column narrows the run through a tree of the column's least
//! and greatest value per node over the sorted rows: a node whose
//! values cannot pass is skipped whole, so a probe row costs about
//! `(1 + partners) · log(build rows)` (an interval stabbing query; for
//! two inequalities this does what IEJoin, Khayyat et al., VLDB Journal
//! 2017, does with its bit arrays). Further comparisons are checked per
//! pair. With no comparison of an orderable type (a boolean, or a date
//! against a timestamp) every build row is a candidate: a nested loop
//! join, whose result is still only the pairs that pass.

use super::*;

/// Pairs a chunk finds between two reservations of their memory.
const RESERVE_PAIRS: usize = 1 << 20;

/// A compared column's values, one per row of a side's joined rows, in
/// the form both sides of its comparison are compared in; `None` for
/// NULL, which no comparison passes.
enum Values<'a> {
    /// Integers, or floats as [`float_key`]s.
    Int(Vec<Option<i64>>),
    Str(Vec<Option<&'a str>>),
}

/// How both sides of a comparison are compared.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// As integers: the same integer-backed type on both sides.
    Int,
    /// As floats (an integer and a float, or two floats), through
    /// [`float_key`].
    Float,
    /// As strings.
    Str,
}

/// The kind both sides of a comparison of types `a` and `b` are read
/// in; `None` when they are not ordered alike (a date against a
/// timestamp, booleans).
fn kind_of_types(a: DataType, b: DataType) -> Option<Kind> {
    match (a, b) {
        _ if a == b && a.is_integer_backed() => Some(Kind::Int),
        _ if a.is_numeric() && b.is_numeric() => Some(Kind::Float),
        (DataType::Str, DataType::Str) => Some(Kind::Str),
        _ => None,
    }
}

/// An integer whose order is the engine's order of floats
/// ([`crate::types::ordered_f64_bits`], its sign bit flipped back).
fn float_key(x: f64) -> i64 {
    (crate::types::ordered_f64_bits(x) ^ (1 << 63)) as i64
}

/// Integers that a float holds exactly (±2^53): compared as floats,
/// they compare as the engine compares an integer with a float.
const EXACT_IN_FLOAT: i64 = 1 << 53;

/// The values of `col` per row of `side`'s joined rows, read as `kind`;
/// `None` when they cannot be (an integer past ±2^53 compared with
/// floats, which a float would round).
fn values<'a>(scans: &'a [Scan], side: &Joined, col: ColRef, kind: Kind) -> Option<Values<'a>> {
    let k = side.inputs.iter().position(|&x| x == col.0).unwrap_or(0);
    let ids = &side.ids[k];
    let array = column_of(scans, col);
    let valid = |id: u32| id != NONE && array.is_valid(id as usize);
    Some(match (&array.data, kind) {
        (Data::Int(v), Kind::Int) => Values::Int(
            ids.iter()
                .map(|&id| valid(id).then(|| v[id as usize]))
                .collect(),
        ),
        (Data::Int(v), Kind::Float) => {
            if v.iter().any(|x| x.unsigned_abs() > EXACT_IN_FLOAT as u64) {
                return None;
            }
            Values::Int(
                ids.iter()
                    .map(|&id| valid(id).then(|| float_key(v[id as usize] as f64)))
                    .collect(),
            )
        }
        (Data::Float(v), Kind::Float) => Values::Int(
            ids.iter()
                .map(|&id| valid(id).then(|| float_key(v[id as usize])))
                .collect(),
        ),
        (Data::Str(s), Kind::Str) => Values::Str(
            ids.iter()
                .map(|&id| valid(id).then(|| s.get(id as usize)))
                .collect(),
        ),
        _ => return None,
    })
}

/// `a op b`.
#[inline]
fn passes<K: PartialOrd>(a: K, op: BinaryOp, b: K) -> bool {
    match op {
        BinaryOp::Lt => a < b,
        BinaryOp::LtEq => a <= b,
        BinaryOp::Gt => a > b,
        BinaryOp::GtEq => a >= b,
        BinaryOp::NotEq => a != b,
        _ => a == b,
    }
}

/// Whether `op` orders (`<`, `<=`, `>`, `>=`).
fn orders(op: BinaryOp) -> bool {
    matches!(
        op,
        BinaryOp::Lt | BinaryOp::LtEq | BinaryOp::Gt | BinaryOp::GtEq
    )
}

/// The build rows, sorted by their primary values, and where each probe
/// value's partners are among them.
struct Sorted<K> {
    /// Primary values, ascending (the rows with one).
    keys: Vec<K>,
    /// The build side's row of each sorted value.
    rows: Vec<u32>,
}

impl<K: Ord + Copy + Send> Sorted<K> {
    fn new(build: &[Option<K>]) -> Sorted<K> {
        let mut pairs: Vec<(K, u32)> = build
            .iter()
            .enumerate()
            .filter_map(|(row, v)| v.map(|v| (v, row as u32)))
            .collect();
        pairs.par_sort_unstable();
        let (keys, rows) = pairs.into_iter().unzip();
        Sorted { keys, rows }
    }

    /// The positions of the sorted values `w` with `v op w`.
    fn run(&self, v: K, op: BinaryOp) -> std::ops::Range<usize> {
        let all = self.keys.len();
        match op {
            BinaryOp::Lt => self.keys.partition_point(|&w| w <= v)..all,
            BinaryOp::LtEq => self.keys.partition_point(|&w| w < v)..all,
            BinaryOp::Gt => 0..self.keys.partition_point(|&w| w < v),
            BinaryOp::GtEq => 0..self.keys.partition_point(|&w| w <= v),
            _ => 0..all,
        }
    }
}

/// The least and greatest value of a column under each node of a
/// complete binary tree over the sorted build rows (leaves in sorted
/// order), for finding the positions in a run whose value passes a
/// comparison without visiting the others.
struct Tree<S> {
    /// Leaves: a power of two at least the rows.
    size: usize,
    least: Vec<S>,
    greatest: Vec<S>,
    /// The value at each sorted position.
    leaves: Vec<Option<S>>,
}

impl<S: PartialOrd + Copy> Tree<S> {
    /// `leaves` in sorted order; `low` and `high` are below and above every
    /// value (an empty node's bounds, which prune nothing wrongly: a node
    /// is only skipped when no value under it can pass).
    fn new(leaves: Vec<Option<S>>, low: S, high: S) -> Tree<S> {
        let size = leaves.len().next_power_of_two().max(1);
        let mut least = vec![high; 2 * size];
        let mut greatest = vec![low; 2 * size];
        for (i, v) in leaves.iter().enumerate() {
            if let Some(v) = *v {
                least[size + i] = v;
                greatest[size + i] = v;
            }
        }
        for n in (1..size).rev() {
            let (a, b) = (least[2 * n], least[2 * n + 1]);
            least[n] = if b < a { b } else { a };
            let (a, b) = (greatest[2 * n], greatest[2 * n + 1]);
            greatest[n] = if b > a { b } else { a };
        }
        Tree {
            size,
            least,
            greatest,
            leaves,
        }
    }

    /// Calls `f` with each position of `run` whose value `w` has `u op w`,
    /// in ascending order.
    fn each(&self, run: std::ops::Range<usize>, u: S, op: BinaryOp, mut f: impl FnMut(usize)) {
        // Whether a node with these bounds may hold a passing value.
        let may = |n: usize| match op {
            // w > u, w >= u: its greatest value must.
            BinaryOp::Lt => self.greatest[n] > u,
            BinaryOp::LtEq => self.greatest[n] >= u,
            // w < u, w <= u: its least value must.
            BinaryOp::Gt => self.least[n] < u,
            BinaryOp::GtEq => self.least[n] <= u,
            _ => true,
        };
        if run.is_empty() {
            return;
        }
        // (node, first leaf, leaves), the right child pushed first so that
        // positions come out ascending. Each level leaves at most one
        // sibling waiting, so two entries a level (of at most 64) suffice.
        let mut stack = [(0usize, 0usize, 0usize); 130];
        stack[0] = (1, 0, self.size);
        let mut top = 1;
        while top > 0 {
            top -= 1;
            let (n, first, width) = stack[top];
            if first >= run.end || first + width <= run.start || !may(n) {
                continue;
            }
            if width == 1 {
                if self.leaves[first].is_some_and(|w| passes(u, op, w)) {
                    f(first);
                }
                continue;
            }
            let half = width / 2;
            stack[top] = (2 * n + 1, first + half, half);
            stack[top + 1] = (2 * n, first, half);
            top += 2;
        }
    }
}

/// The second comparison, narrowing each run through a [`Tree`].
enum Narrow {
    None,
    Int(Tree<i64>, Vec<Option<i64>>, BinaryOp),
}

impl Narrow {
    /// Calls `f` with each position of `run` that the second comparison
    /// passes for probe row `p` (every one when there is none).
    #[inline]
    fn each(&self, p: usize, run: std::ops::Range<usize>, f: impl FnMut(usize)) {
        match self {
            Narrow::None => run.for_each(f),
            Narrow::Int(tree, probe, op) => {
                if let Some(u) = probe[p] {
                    tree.each(run, u, *op, f)
                }
            }
        }
    }
}

/// The algorithm [`range_join`] takes for `comparisons` (`left side
/// column op right side column`), for EXPLAIN: "range join" when one
/// compares orderable values, else "nested loop join".
pub(super) fn algorithm(scans: &[Scan], comparisons: &[Comparison]) -> &'static str {
    let orderable = comparisons.iter().any(|&(a, op, b)| {
        orders(op) && kind_of_types(type_of(scans, a), type_of(scans, b)).is_some()
    });
    if orderable {
        "range join"
    } else {
        "nested loop join"
    }
}

/// Joins `left` with `right` on `comparisons` (`left side column op right
/// side column`, none of them `=`), as `kind` says (inner, left, right or
/// full): the pairs of rows for which every comparison holds (NULL holds
/// none), and under an outer join the rows without one, padded.
///
/// The build side is the smaller of an inner join, the padded side of an
/// outer one; the probe side runs in parallel chunks.
///
/// # Errors
/// A result past the memory limit (pairs are reserved as they are found,
/// so a join far too large stops at the limit), or of more than
/// [`MAX_JOIN_ROWS`] rows; [`Error::Cancelled`].
pub(super) fn range_join(
    c: &Composer<'_>,
    scans: &[Scan],
    left: Joined,
    right: Joined,
    comparisons: &[Comparison],
    kind: JoinKind,
) -> Result<Joined> {
    let build_left = match kind {
        JoinKind::Left | JoinKind::Full => false,
        JoinKind::Right => true,
        _ => left.rows < right.rows,
    };
    let keep_probe = !matches!(kind, JoinKind::Inner | JoinKind::Cross | JoinKind::Comma);
    let (probe_side, build_side) = if build_left {
        (&right, &left)
    } else {
        (&left, &right)
    };
    // Each comparison as `probe column op build column`.
    let oriented: Vec<Comparison> = comparisons
        .iter()
        .map(|&(a, op, b)| {
            if build_left {
                (b, super::super::correlated::flip(op), a)
            } else {
                (a, op, b)
            }
        })
        .collect();
    let kind_of = |&(p, _, b): &Comparison| kind_of_types(type_of(scans, p), type_of(scans, b));
    let primary = oriented
        .iter()
        .position(|cmp| orders(cmp.1) && kind_of(cmp).is_some());
    let secondary = oriented.iter().enumerate().position(|(i, cmp)| {
        Some(i) != primary && orders(cmp.1) && matches!(kind_of(cmp), Some(Kind::Int | Kind::Float))
    });
    // The comparisons neither the sort nor the tree decides, checked per
    // pair.
    let rest: Vec<Comparison> = oriented
        .iter()
        .enumerate()
        .filter(|&(i, _)| Some(i) != primary && Some(i) != secondary)
        .map(|(_, &cmp)| cmp)
        .collect();
    c.reserve(build_side.rows.saturating_mul(BUILD_BYTES_PER_ROW), || {
        format!(
            "the build side of a range join ({} rows)",
            thousands(build_side.rows)
        )
    })?;
    c.engine.check()?;

    let secondary = secondary.map(|i| oriented[i]);
    let found = std::sync::atomic::AtomicUsize::new(0);
    let probe = |narrow: Narrow, rest: Vec<Comparison>| Probe {
        c,
        scans,
        probe_side,
        build_side,
        keep_probe,
        narrow,
        rest,
        found: &found,
    };
    let narrowed = |order: &[u32]| narrow(scans, probe_side, build_side, secondary, order, &rest);
    let every = || (0..build_side.rows as u32).collect::<Vec<u32>>();
    let read = |(p, _, b): Comparison, k: Kind| {
        Some((
            values(scans, probe_side, p, k)?,
            values(scans, build_side, b, k)?,
        ))
    };
    let parts = match primary.and_then(|i| read(oriented[i], kind_of(&oriented[i])?)) {
        Some((Values::Int(pv), Values::Int(bv))) => {
            let sorted = Sorted::new(&bv);
            let (narrow, rest) = narrowed(&sorted.rows);
            probe(narrow, rest).run(&pv, &sorted, oriented[primary.unwrap_or(0)].1)?
        }
        Some((Values::Str(pv), Values::Str(bv))) => {
            let sorted = Sorted::new(&bv);
            let (narrow, rest) = narrowed(&sorted.rows);
            probe(narrow, rest).run(&pv, &sorted, oriented[primary.unwrap_or(0)].1)?
        }
        _ => {
            // Every build row a candidate, the primary checked per pair.
            let mut rest = rest;
            rest.extend(primary.map(|i| oriented[i]));
            let (narrow, rest) = narrow(scans, probe_side, build_side, secondary, &every(), &rest);
            probe(narrow, rest).nested_loop()?
        }
    };
    assemble(c, &left, &right, parts, build_left, kind == JoinKind::Full)
}

/// The tree of the `secondary` comparison's build column over the build
/// rows in `order` (positions in the run the primary gives), and the
/// comparisons then left to check per pair: `rest`, and the secondary
/// when it is not numeric on both sides.
fn narrow(
    scans: &[Scan],
    probe_side: &Joined,
    build_side: &Joined,
    secondary: Option<Comparison>,
    order: &[u32],
    rest: &[Comparison],
) -> (Narrow, Vec<Comparison>) {
    let mut rest = rest.to_vec();
    let Some((p, op, b)) = secondary else {
        return (Narrow::None, rest);
    };
    let read = |k| {
        Some((
            values(scans, probe_side, p, k)?,
            values(scans, build_side, b, k)?,
        ))
    };
    let narrow = match kind_of_types(type_of(scans, p), type_of(scans, b)).and_then(read) {
        Some((Values::Int(probe), Values::Int(build))) => {
            let leaves = order.iter().map(|&r| build[r as usize]).collect();
            Narrow::Int(Tree::new(leaves, i64::MIN, i64::MAX), probe, op)
        }
        _ => {
            rest.push((p, op, b));
            Narrow::None
        }
    };
    (narrow, rest)
}

/// What every probe chunk shares.
struct Probe<'s, 'c> {
    c: &'s Composer<'c>,
    scans: &'s [Scan],
    probe_side: &'s Joined,
    build_side: &'s Joined,
    keep_probe: bool,
    narrow: Narrow,
    rest: Vec<Comparison>,
    /// Pairs found so far by all chunks.
    found: &'s std::sync::atomic::AtomicUsize,
}

impl Probe<'_, '_> {
    /// Each probe row against the sorted build rows: the run the primary
    /// comparison `op` gives, narrowed by the tree, checked against the
    /// rest.
    fn run<K: Ord + Copy + Send + Sync>(
        &self,
        probe: &[Option<K>],
        sorted: &Sorted<K>,
        op: BinaryOp,
    ) -> Result<Vec<(Vec<u32>, Vec<u32>)>> {
        if matches!(self.narrow, Narrow::None) && self.rest.is_empty() {
            // Every row of a run is a partner: the chunk's pairs are
            // counted (and reserved) before they are written, whole runs
            // at a time.
            let size = |p: usize| probe[p].map_or(0, |v| sorted.run(v, op).len());
            return self.chunks(Some(&size), |p, out| {
                if let Some(v) = probe[p] {
                    let run = sorted.run(v, op);
                    out.0.extend(std::iter::repeat_n(p as u32, run.len()));
                    out.1.extend_from_slice(&sorted.rows[run]);
                }
            });
        }
        self.chunks(None, |p, out| {
            if let Some(v) = probe[p] {
                let run = sorted.run(v, op);
                self.narrow
                    .each(p, run, |i| self.push(p, sorted.rows[i], out));
            }
        })
    }

    /// Each probe row against every build row.
    fn nested_loop(&self) -> Result<Vec<(Vec<u32>, Vec<u32>)>> {
        self.chunks(None, |p, out| {
            self.narrow
                .each(p, 0..self.build_side.rows, |b| self.push(p, b as u32, out));
        })
    }

    /// Pushes the pair `(p, b)` when the comparisons left to check pass.
    #[inline]
    fn push(&self, p: usize, b: u32, out: &mut (Vec<u32>, Vec<u32>)) {
        let pass = self.rest.iter().all(|&(x, op, y)| {
            holds(
                op,
                &value_at(self.scans, self.probe_side, x, p as u32),
                &value_at(self.scans, self.build_side, y, b),
            )
        });
        if pass {
            out.0.push(p as u32);
            out.1.push(b);
        }
    }

    /// The probe rows in parallel chunks, `each(row, pairs)` pushing a
    /// row's pairs; a row with none is padded under an outer join. Pairs
    /// are reserved against the memory limit as they grow, or before,
    /// when `size` tells how many pairs a row has.
    fn chunks(
        &self,
        size: Option<&(dyn Fn(usize) -> usize + Sync)>,
        each: impl Fn(usize, &mut (Vec<u32>, Vec<u32>)) + Sync,
    ) -> Result<Vec<(Vec<u32>, Vec<u32>)>> {
        let rows = self.probe_side.rows;
        (0..rows.div_ceil(PROBE_CHUNK))
            .into_par_iter()
            .map(|chunk| {
                self.c.engine.check()?;
                let span = chunk * PROBE_CHUNK..((chunk + 1) * PROBE_CHUNK).min(rows);
                let mut out = (Vec::new(), Vec::new());
                let mut held = 0;
                if let Some(size) = size {
                    let pairs: usize = span
                        .clone()
                        .map(|p| size(p).max(usize::from(self.keep_probe)))
                        .sum();
                    self.hold(pairs)?;
                    held = pairs;
                    out = (Vec::with_capacity(pairs), Vec::with_capacity(pairs));
                }
                for p in span {
                    let before = out.0.len();
                    each(p, &mut out);
                    if self.keep_probe && out.0.len() == before {
                        out.0.push(p as u32);
                        out.1.push(NONE);
                    }
                    if out.0.len().saturating_sub(held) >= RESERVE_PAIRS {
                        self.hold(out.0.len() - held)?;
                        held = out.0.len();
                    }
                }
                self.hold(out.0.len().saturating_sub(held))?;
                Ok(out)
            })
            .collect()
    }

    /// Reserves `pairs` more found pairs.
    fn hold(&self, pairs: usize) -> Result<()> {
        let so_far = self
            .found
            .fetch_add(pairs, std::sync::atomic::Ordering::Relaxed)
            + pairs;
        if so_far > MAX_JOIN_ROWS {
            return Err(Error::Execution(format!(
                "a join produces more than {} rows",
                thousands(MAX_JOIN_ROWS)
            )));
        }
        self.c.reserve(pairs * 8, || {
            format!("a join of more than {} rows", thousands(so_far))
        })?;
        self.c.engine.check()
    }
}
