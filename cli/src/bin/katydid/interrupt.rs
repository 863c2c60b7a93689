//! Ctrl-C: cancel the running statement or load instead of killing the
//! session.
//!
//! # Design
//! At the REPL prompt the terminal is in raw mode and rustyline reads
//! Ctrl-C as a key (it clears the line). While a statement or load runs,
//! Ctrl-C is a SIGINT, caught by a handler thread (the `ctrlc` crate) that
//! sets the database's [`CancelToken`]; the engine polls it between batches
//! and partitions and fails the work with `Error::Cancelled`, keeping every
//! table. The REPL then prints `cancelled`; outside the REPL the run exits
//! with status 130 (128 + SIGINT, as a shell reports a killed command).
//! When nothing cancellable runs (outside the REPL, or while generating
//! the `--demo` data) the handler exits with 130 at once.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use katydid::CancelToken;

/// Exit status after Ctrl-C.
pub const EXIT_INTERRUPTED: u8 = 130;

/// Shared between the main thread and the signal handler.
#[derive(Debug)]
pub struct Interrupt {
    token: CancelToken,
    /// Statements or loads running now (nested guards count).
    running: AtomicUsize,
    /// Ctrl-C came since the last [`Interrupt::take`].
    hit: AtomicBool,
    /// In the REPL a Ctrl-C never ends the process.
    interactive: bool,
}

impl Interrupt {
    /// The state for a session whose work `token` cancels.
    pub fn new(token: CancelToken, interactive: bool) -> Arc<Interrupt> {
        Arc::new(Interrupt {
            token,
            running: AtomicUsize::new(0),
            hit: AtomicBool::new(false),
            interactive,
        })
    }

    /// Installs the process's SIGINT handler for `this`.
    ///
    /// # Errors
    /// When a handler is already installed or the OS refuses.
    pub fn install(this: &Arc<Interrupt>) -> Result<(), String> {
        let state = this.clone();
        ctrlc::set_handler(move || state.on_signal())
            .map_err(|e| format!("cannot catch Ctrl-C: {e}"))
    }

    fn on_signal(&self) {
        self.hit.store(true, Ordering::SeqCst);
        self.token.cancel();
        if self.running.load(Ordering::SeqCst) == 0 && !self.interactive {
            std::process::exit(i32::from(EXIT_INTERRUPTED));
        }
    }

    /// Marks a statement or load as running until the guard drops: a
    /// Ctrl-C meanwhile cancels it rather than ending the process.
    pub fn busy(&self) -> Busy<'_> {
        self.running.fetch_add(1, Ordering::SeqCst);
        Busy(self)
    }

    /// True if Ctrl-C came since the last call; clears it.
    pub fn take(&self) -> bool {
        self.hit.swap(false, Ordering::SeqCst)
    }
}

/// See [`Interrupt::busy`].
pub struct Busy<'a>(&'a Interrupt);

impl Drop for Busy<'_> {
    fn drop(&mut self) {
        self.0.running.fetch_sub(1, Ordering::SeqCst);
    }
}
