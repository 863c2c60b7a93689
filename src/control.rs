//! Control of running work: cancellation, progress reports and the memory
//! budget. Shared by loads (`ingest`) and queries (`exec`); depends on
//! nothing of katydid but [`crate::error`].
//!
//! # Design
//! - A [`CancelToken`] is a shared flag. The REPL sets it from its Ctrl-C
//!   handler; loads and queries poll it between batches and partitions
//!   (every few milliseconds of work) and stop with [`Error::Cancelled`].
//!   Polling is one relaxed atomic load, cheap enough for inner loops over
//!   batches.
//! - A [`ProgressFn`] receives [`Progress`] reports (bytes of a file read,
//!   partitions of a query done) from worker threads; the caller decides how
//!   to draw them.
//! - A [`MemoryBudget`] counts the bytes that tables, group-by states, sort
//!   buffers and results hold against a limit. Work reserves before it
//!   allocates something large and proportional to the data, and fails with
//!   [`Error::MemoryLimit`] saying what needed how much, instead of letting
//!   the allocator abort the process. A [`Reservation`] gives its bytes back
//!   when dropped.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use crate::error::{Error, Result};

/// A flag that asks running work to stop; cheap to clone (one `Arc`) and to
/// check (one relaxed load).
#[derive(Debug, Clone, Default)]
pub struct CancelToken(Arc<AtomicBool>);

impl CancelToken {
    /// A token that is not cancelled.
    pub fn new() -> CancelToken {
        CancelToken::default()
    }

    /// Asks every holder of the token to stop. Safe to call from a signal
    /// handler thread.
    pub fn cancel(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    /// Clears the flag (before the next statement).
    pub fn reset(&self) {
        self.0.store(false, Ordering::Relaxed);
    }

    /// True once [`CancelToken::cancel`] was called (and not reset since).
    #[inline]
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    /// `Err(Error::Cancelled)` when cancelled: the check work runs between
    /// batches.
    ///
    /// # Errors
    /// [`Error::Cancelled`] when the token was cancelled.
    #[inline]
    pub fn check(&self) -> Result<()> {
        if self.is_cancelled() {
            Err(Error::Cancelled)
        } else {
            Ok(())
        }
    }
}

/// What a [`Progress`] report counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProgressUnit {
    /// Bytes of an input file read (compressed bytes for gzip).
    Bytes,
    /// Table rows of the partitions a query has finished, or rows (groups)
    /// of a later phase.
    Rows,
}

/// The phase of the work a [`Progress`] report is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Reading an input file into a table.
    Load,
    /// Reading the table's partitions (filters, partial aggregates,
    /// per-partition top-n): `done` of `total` table rows.
    Scan,
    /// Merging the partitions' partial aggregates: `done` of `total`
    /// partial groups.
    Merge,
    /// Ordering the result: `done` of `total` rows.
    Sort,
}

impl Phase {
    /// The phase's name as a person reads it: `load`, `scan`, `merge`,
    /// `sort`.
    pub fn name(self) -> &'static str {
        match self {
            Phase::Load => "load",
            Phase::Scan => "scan",
            Phase::Merge => "merge",
            Phase::Sort => "sort",
        }
    }
}

/// One progress report of a running load or query.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Progress {
    /// The phase running: a query reports each phase when it starts
    /// (`done` 0), then as it goes.
    pub phase: Phase,
    /// What `done` and `total` count.
    pub unit: ProgressUnit,
    /// Units done so far.
    pub done: u64,
    /// Units in all; 0 when unknown (a pipe).
    pub total: u64,
    /// Time since the work started.
    pub elapsed: Duration,
}

/// Receives progress reports, from any thread, at most every few
/// milliseconds; it must return quickly.
pub type ProgressFn = Arc<dyn Fn(Progress) + Send + Sync>;

/// Bytes as a person reads them: `512 B`, `1.5 KiB`, `12.0 GiB`.
pub fn format_bytes(bytes: usize) -> String {
    const UNITS: [&str; 5] = ["KiB", "MiB", "GiB", "TiB", "PiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut v = bytes as f64 / 1024.0;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    format!("{v:.1} {}", UNITS[unit])
}

/// A limit on the bytes that loads and queries may hold, and what they hold
/// now.
///
/// # Invariants
/// `used` is the sum of the live [`Reservation`]s made from this budget.
/// It may exceed `limit` only after the limit was lowered below it.
pub struct MemoryBudget {
    limit: AtomicUsize,
    used: AtomicUsize,
}

impl fmt::Debug for MemoryBudget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MemoryBudget")
            .field("limit", &self.limit())
            .field("used", &self.used())
            .finish()
    }
}

impl MemoryBudget {
    /// A budget of `limit` bytes.
    pub fn new(limit: usize) -> Arc<MemoryBudget> {
        Arc::new(MemoryBudget {
            limit: AtomicUsize::new(limit),
            used: AtomicUsize::new(0),
        })
    }

    /// A budget without a limit.
    pub fn unlimited() -> Arc<MemoryBudget> {
        MemoryBudget::new(usize::MAX)
    }

    /// The limit in bytes.
    pub fn limit(&self) -> usize {
        self.limit.load(Ordering::Relaxed)
    }

    /// Changes the limit; what is held stays held.
    pub fn set_limit(&self, limit: usize) {
        self.limit.store(limit, Ordering::Relaxed);
    }

    /// Bytes reserved now.
    pub fn used(&self) -> usize {
        self.used.load(Ordering::Relaxed)
    }

    /// Reserves `bytes` for `work` (`"query"`, `"load"`) to hold `what` (a
    /// phrase such as `"48M groups"`), returned when the reservation drops.
    ///
    /// # Errors
    /// [`Error::MemoryLimit`] when the budget would pass its limit, e.g.
    /// `query needs more than 12.0 GiB for 48M groups (limit 19.0 GiB,
    /// 8.2 GiB already in use)`.
    pub fn reserve(
        self: &Arc<Self>,
        work: &'static str,
        bytes: usize,
        what: impl FnOnce() -> String,
    ) -> Result<Reservation> {
        let mut r = Reservation::empty(self, work);

        r.grow(bytes, what)?;
        Ok(r)
    }

    fn try_add(&self, bytes: usize) -> Option<usize> {
        let limit = self.limit();
        self.used
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |u| {
                u.checked_add(bytes).filter(|&n| n <= limit)
            })
            .ok()
    }
}

/// Bytes held against a [`MemoryBudget`]; released on drop.
#[derive(Debug)]
pub struct Reservation {
    budget: Arc<MemoryBudget>,
    work: &'static str,
    bytes: usize,
}

impl Reservation {
    /// An empty reservation against `budget` for `work` (`"query"`,
    /// `"load"`: the subject of its error message), to
    /// [`Reservation::grow`] later.
    pub fn empty(budget: &Arc<MemoryBudget>, work: &'static str) -> Reservation {
        Reservation {
            budget: budget.clone(),
            work,
            bytes: 0,
        }
    }

    /// Bytes held.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// Holds `more` bytes in addition.
    ///
    /// # Errors
    /// [`Error::MemoryLimit`] as [`MemoryBudget::reserve`]; the message counts
    /// everything this reservation would hold.
    pub fn grow(&mut self, more: usize, what: impl FnOnce() -> String) -> Result<()> {
        if more == 0 {
            return Ok(());
        }
        match self.budget.try_add(more) {
            Some(_) => {
                self.bytes += more;
                Ok(())
            }
            None => Err(Error::MemoryLimit {
                work: self.work,
                needed: self.bytes.saturating_add(more),
                what: what(),
                limit: self.budget.limit(),
                in_use: self.budget.used().saturating_sub(self.bytes),
            }),
        }
    }

    /// Grows or shrinks the reservation to exactly `bytes`.
    ///
    /// # Errors
    /// As [`Reservation::grow`] when growing.
    pub fn resize(&mut self, bytes: usize, what: impl FnOnce() -> String) -> Result<()> {
        if bytes > self.bytes {
            self.grow(bytes - self.bytes, what)
        } else {
            self.shrink(self.bytes - bytes);
            Ok(())
        }
    }

    /// Gives `less` bytes back (at most what is held).
    pub fn shrink(&mut self, less: usize) {
        let less = less.min(self.bytes);
        self.budget.used.fetch_sub(less, Ordering::Relaxed);
        self.bytes -= less;
    }

    /// Moves the bytes of `other` into this reservation (same budget).
    pub fn absorb(&mut self, mut other: Reservation) {
        debug_assert!(Arc::ptr_eq(&self.budget, &other.budget));
        self.bytes += std::mem::take(&mut other.bytes);
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        self.shrink(self.bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reservations_count_against_the_limit_and_release_on_drop() {
        let budget = MemoryBudget::new(1000);
        let a = budget.reserve("query", 600, || "a".into()).unwrap();
        let err = budget
            .reserve("query", 500, || "500 groups".into())
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "query needs more than 500 B for 500 groups (limit 1000 B, 600 B already in use)"
        );
        assert_eq!(budget.used(), 600);
        drop(a);
        assert_eq!(budget.used(), 0);
        let mut r = Reservation::empty(&budget, "query");
        r.grow(400, || "x".into()).unwrap();
        r.resize(100, || "x".into()).unwrap();
        assert_eq!(budget.used(), 100);
        assert!(r.resize(2000, || "x".into()).is_err());
        assert_eq!(r.bytes(), 100);
    }

    #[test]
    fn cancel_token_is_shared_between_clones() {
        let t = CancelToken::new();
        let u = t.clone();
        assert!(t.check().is_ok());
        u.cancel();
        assert!(matches!(t.check(), Err(Error::Cancelled)));
        t.reset();
        assert!(!u.is_cancelled());
    }

    #[test]
    fn bytes_format_with_binary_units() {
        assert_eq!(format_bytes(512), "512 B");
        assert_eq!(format_bytes(1536), "1.5 KiB");
        assert_eq!(format_bytes(12 << 30), "12.0 GiB");
    }
}
