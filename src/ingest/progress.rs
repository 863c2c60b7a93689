//! Progress reports and cancellation of one load.
//!
//! The library draws nothing: it hands [`Progress`] reports in
//! [`ProgressUnit::Bytes`] (bytes of the input file read so far, compressed
//! bytes for gzip, of its size; a total of 0 for a pipe) to the caller's
//! [`ProgressFn`], from the worker reading the input, at most every
//! [`REPORT_EVERY`], always once after the first read and once at the end
//! of the input.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::control::{CancelToken, Progress, ProgressFn, ProgressUnit};
use crate::error::{Error, Result};

/// Shortest time between two reports (but the last).
pub(crate) const REPORT_EVERY: Duration = Duration::from_millis(50);

/// Sends a load's progress reports to the caller.
pub(crate) struct Reporter {
    to: Option<ProgressFn>,
    total: u64,
    start: Instant,
    last: Option<Instant>,
}

impl Reporter {
    /// A reporter to `to` (if any) for an input of `total` bytes (0 when
    /// unknown) whose load started at `start`.
    pub(crate) fn new(to: Option<ProgressFn>, total: u64, start: Instant) -> Reporter {
        Reporter {
            to,
            total,
            start,
            last: None,
        }
    }

    /// `done` bytes of the input are read; `end` when that is all of it.
    pub(crate) fn read(&mut self, done: u64, end: bool) {
        let Some(to) = &self.to else {
            return;
        };
        let now = Instant::now();
        if end
            || self
                .last
                .is_none_or(|t| now.duration_since(t) >= REPORT_EVERY)
        {
            self.last = Some(now);
            to(Progress {
                phase: crate::control::Phase::Load,
                unit: ProgressUnit::Bytes,
                done,
                total: self.total,
                elapsed: now.duration_since(self.start),
            });
        }
    }
}

/// Whether a load must stop: the caller cancelled it, or a part of it
/// failed in a way that makes the rest pointless (the memory limit).
#[derive(Clone, Default)]
pub(crate) struct Stop {
    user: Option<CancelToken>,
    failed: Arc<AtomicBool>,
}

impl Stop {
    /// Stops when `user` is cancelled (or [`Stop::fail`] is called).
    pub(crate) fn new(user: Option<CancelToken>) -> Stop {
        Stop {
            user,
            failed: Arc::default(),
        }
    }

    /// True when the caller cancelled the load.
    #[inline]
    pub(crate) fn cancelled(&self) -> bool {
        self.user.as_ref().is_some_and(CancelToken::is_cancelled)
    }

    /// True when the load should stop.
    #[inline]
    pub(crate) fn stopped(&self) -> bool {
        self.cancelled() || self.failed.load(Ordering::Relaxed)
    }

    /// `Err(Error::Cancelled)` when the load should stop (the error that
    /// stopped it, if any, is reported instead by whoever hit it).
    #[inline]
    pub(crate) fn check(&self) -> Result<()> {
        if self.stopped() {
            Err(Error::Cancelled)
        } else {
            Ok(())
        }
    }

    /// Asks every part of the load to stop.
    pub(crate) fn fail(&self) {
        self.failed.store(true, Ordering::Relaxed);
    }
}
