//! An optional progress bar for long loads.
//!
//! The bar is kept hidden and only drawn (on stderr) once the load has run
//! for more than a second, so quick loads print nothing; it is cleared when
//! the load ends, successfully or not.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use indicatif::{HumanCount, ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};

/// How long a load runs before its progress is shown.
const SHOW_AFTER: Duration = Duration::from_secs(1);

/// Progress of one load; does nothing unless enabled and stderr is a terminal.
pub(crate) struct Progress {
    bar: Option<ProgressBar>,
    start: Instant,
    shown: AtomicBool,
}

impl Progress {
    /// A progress reporter, active when `enabled` and stderr is a terminal.
    pub(crate) fn new(enabled: bool) -> Progress {
        let bar = (enabled && std::io::stderr().is_terminal()).then(ProgressBar::hidden);
        Progress {
            bar,
            start: Instant::now(),
            shown: AtomicBool::new(false),
        }
    }

    /// Starts a phase counting rows, out of `total` when known.
    pub(crate) fn rows_phase(&self, message: &'static str, total: Option<u64>) {
        let template = if total.is_some() {
            "{spinner} {msg} [{bar:30}] {human_pos}/{human_len} rows ({rate} rows/s)"
        } else {
            "{spinner} {msg} {human_pos} rows ({rate} rows/s)"
        };
        self.phase(message, total, template);
    }

    fn phase(&self, message: &'static str, total: Option<u64>, template: &str) {
        if let Some(bar) = &self.bar {
            if let Ok(style) = ProgressStyle::with_template(template) {
                let style = style
                    .with_key(
                        "rate",
                        |state: &ProgressState, w: &mut dyn std::fmt::Write| {
                            let _ = write!(w, "{}", HumanCount(state.per_sec() as u64));
                        },
                    )
                    .progress_chars("=> ");
                bar.set_style(style);
            }
            bar.reset();
            if let Some(total) = total {
                bar.set_length(total);
            }
            bar.set_message(message);
            self.maybe_show(bar);
        }
    }

    /// Adds `n` to the current phase's count.
    pub(crate) fn inc(&self, n: u64) {
        if let Some(bar) = &self.bar {
            bar.inc(n);
            self.maybe_show(bar);
        }
    }

    fn maybe_show(&self, bar: &ProgressBar) {
        if !self.shown.load(Ordering::Relaxed)
            && self.start.elapsed() > SHOW_AFTER
            && !self.shown.swap(true, Ordering::Relaxed)
        {
            bar.set_draw_target(ProgressDrawTarget::stderr());
            bar.enable_steady_tick(Duration::from_millis(120));
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
