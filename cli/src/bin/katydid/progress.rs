//! Progress on stderr, drawn from the engine's [`Progress`] reports
//! (indicatif): a bar of bytes read for loads, and for a query that runs
//! longer than [`QUERY_SHOW_AFTER`] a line of rows done of the total, rows/s
//! and time elapsed. Cleared before the result prints. Only on a terminal.

use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::Duration;

use indicatif::{HumanCount, ProgressBar, ProgressStyle};
use katydid::{Progress, ProgressUnit};

/// How long a query runs before its progress line shows.
pub const QUERY_SHOW_AFTER: Duration = Duration::from_secs(1);

/// [`QUERY_SHOW_AFTER`], or the milliseconds in the environment variable
/// `KATYDID_PROGRESS_AFTER_MS` (the REPL test sets 0 to see the line
/// without needing a query slow on every machine).
fn query_show_after() -> Duration {
    std::env::var("KATYDID_PROGRESS_AFTER_MS")
        .ok()
        .and_then(|ms| ms.parse().ok())
        .map_or(QUERY_SHOW_AFTER, Duration::from_millis)
}
/// How long a load runs before its bar shows (quick loads print nothing).
pub const LOAD_SHOW_AFTER: Duration = Duration::from_millis(300);

/// The bar of the running statement or load.
#[derive(Default)]
pub struct ProgressDisplay {
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    label: String,
    bar: Option<ProgressBar>,
}

impl ProgressDisplay {
    /// A display, or `None` when stderr is not a terminal.
    pub fn for_stderr() -> Option<ProgressDisplay> {
        std::io::stderr()
            .is_terminal()
            .then(ProgressDisplay::default)
    }

    /// A new statement or load starts; `label` names it (`loading x.csv`).
    pub fn begin(&self, label: &str) {
        if let Ok(mut s) = self.state.lock() {
            if let Some(bar) = s.bar.take() {
                bar.finish_and_clear();
            }
            s.label = label.to_string();
        }
    }

    /// Clears the bar (the work ended).
    pub fn finish(&self) {
        if let Ok(mut s) = self.state.lock()
            && let Some(bar) = s.bar.take()
        {
            bar.finish_and_clear();
        }
    }

    /// Takes one report of the running work.
    pub fn report(&self, p: Progress) {
        let show_after = match p.unit {
            ProgressUnit::Bytes => LOAD_SHOW_AFTER,
            ProgressUnit::Rows => query_show_after(),
        };
        if p.elapsed < show_after {
            return;
        }
        let Ok(mut s) = self.state.lock() else {
            return;
        };
        let label = s.label.clone();
        let bar = s
            .bar
            .get_or_insert_with(|| new_bar(p.unit, p.total, &label));
        if p.total > 0 && bar.length() != Some(p.total) {
            bar.set_length(p.total);
        }
        bar.set_position(p.done);
        if p.unit == ProgressUnit::Rows {
            bar.set_message(rows_message(p));
        }
    }
}

/// `1,234,567 rows/s, 2.1 s`.
fn rows_message(p: Progress) -> String {
    let secs = p.elapsed.as_secs_f64();
    let rate = if secs > 0.0 {
        (p.done as f64 / secs) as u64
    } else {
        0
    };
    format!("{} rows/s, {secs:.1} s", HumanCount(rate))
}

fn new_bar(unit: ProgressUnit, total: u64, label: &str) -> ProgressBar {
    let template = match (unit, total > 0) {
        // `wide_bar` takes the width the rest leaves: the line never wraps.
        (ProgressUnit::Bytes, true) => {
            "{prefix} [{wide_bar}] {percent:>3}% {bytes}/{total_bytes} ({bytes_per_sec})"
        }
        (ProgressUnit::Bytes, false) => "{spinner} {prefix} {bytes} ({bytes_per_sec})",
        (ProgressUnit::Rows, true) => {
            "{prefix} [{wide_bar}] {percent:>3}% {human_pos}/{human_len} rows ({msg})"
        }
        (ProgressUnit::Rows, false) => "{spinner} {prefix} {human_pos} rows ({msg})",
    };
    let bar = if total > 0 {
        ProgressBar::new(total)
    } else {
        ProgressBar::new_spinner()
    };
    if let Ok(style) = ProgressStyle::with_template(template) {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_prefix(label.to_string());
    bar.enable_steady_tick(Duration::from_millis(200));
    bar
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_message_gives_rate_and_elapsed() {
        let p = Progress {
            unit: ProgressUnit::Rows,
            done: 3_000_000,
            total: 10_000_000,
            elapsed: Duration::from_millis(1500),
        };
        assert_eq!(rows_message(p), "2,000,000 rows/s, 1.5 s");
    }

    #[test]
    fn early_reports_draw_nothing() {
        let d = ProgressDisplay::default();
        d.begin("query");
        d.report(Progress {
            unit: ProgressUnit::Rows,
            done: 1,
            total: 10,
            elapsed: Duration::from_millis(10),
        });
        assert!(d.state.lock().unwrap().bar.is_none());
        d.report(Progress {
            unit: ProgressUnit::Rows,
            done: 5,
            total: 10,
            elapsed: Duration::from_secs(2),
        });
        let bar = d.state.lock().unwrap().bar.clone().unwrap();
        assert_eq!((bar.position(), bar.length()), (5, Some(10)));
        d.finish();
        assert!(d.state.lock().unwrap().bar.is_none());
    }
}
