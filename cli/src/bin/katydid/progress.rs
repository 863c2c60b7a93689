//! Progress on stderr, drawn from the engine's [`Progress`] reports
//! (indicatif): a bar of bytes read for loads, and for a query that runs
//! longer than [`QUERY_SHOW_AFTER`] a line naming its phase (scan, merge,
//! sort) with rows done of the total, rows/s and time elapsed. Cleared
//! before the result prints. Only on a terminal.
//!
//! A query reports each phase when it starts, and the scan as partitions
//! finish; a merge or sort may then run for seconds without a report. So
//! the line does not wait for a report past the delay: the first report
//! starts a timer that draws the latest one once the delay is up, if the
//! work is still running.

use std::io::IsTerminal;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use indicatif::{HumanCount, ProgressBar, ProgressStyle};
use katydid::{Phase, Progress, ProgressUnit};

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
pub struct ProgressDisplay {
    state: Arc<Mutex<State>>,
    /// How long a query runs before its line shows.
    query_after: Duration,
}

impl Default for ProgressDisplay {
    fn default() -> ProgressDisplay {
        ProgressDisplay {
            state: Arc::default(),
            query_after: query_show_after(),
        }
    }
}

#[derive(Default)]
struct State {
    label: String,
    bar: Option<ProgressBar>,
    /// The phase the bar shows.
    phase: Option<Phase>,
    /// Counts statements and loads, so a timer drawing late knows whether
    /// its work is still the running one.
    generation: u64,
    /// The latest report of the running work, and when it came.
    latest: Option<(Progress, Instant)>,
    /// A timer is waiting to draw `latest` for this generation.
    timer: bool,
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
            s.generation += 1;
            s.latest = None;
            s.phase = None;
            s.timer = false;
        }
    }

    /// Clears the bar (the work ended).
    pub fn finish(&self) {
        if let Ok(mut s) = self.state.lock() {
            s.generation += 1;
            s.latest = None;
            if let Some(bar) = s.bar.take() {
                bar.finish_and_clear();
            }
        }
    }

    /// Takes one report of the running work.
    pub fn report(&self, p: Progress) {
        let show_after = match p.unit {
            ProgressUnit::Bytes => LOAD_SHOW_AFTER,
            ProgressUnit::Rows => self.query_after,
        };
        let Ok(mut s) = self.state.lock() else {
            return;
        };
        s.latest = Some((p, Instant::now()));
        if p.elapsed >= show_after {
            draw(&mut s, p);
        } else if !s.timer {
            s.timer = true;
            let (state, generation) = (self.state.clone(), s.generation);
            let wait = show_after - p.elapsed;
            std::thread::spawn(move || {
                std::thread::sleep(wait);
                if let Ok(mut s) = state.lock()
                    && s.generation == generation
                    && let Some((p, at)) = s.latest
                {
                    // The report as it would read now.
                    let p = Progress {
                        elapsed: p.elapsed + at.elapsed(),
                        ..p
                    };
                    draw(&mut s, p);
                }
            });
        }
    }
}

/// Draws `p` on the bar, making the bar (again, when the phase changed)
/// as needed.
fn draw(s: &mut State, p: Progress) {
    if s.phase != Some(p.phase)
        && let Some(bar) = s.bar.take()
    {
        bar.finish_and_clear();
    }
    s.phase = Some(p.phase);
    let label = match p.unit {
        ProgressUnit::Rows => format!("{} ({})", s.label, p.phase.name()),
        ProgressUnit::Bytes => s.label.clone(),
    };
    let bar = s
        .bar
        .get_or_insert_with(|| new_bar(p.unit, p.total, &label).with_elapsed(p.elapsed));
    if p.total > 0 && bar.length() != Some(p.total) {
        bar.set_length(p.total);
    }
    bar.set_position(p.done);
    if p.unit == ProgressUnit::Rows {
        bar.set_message(rows_message(p));
    }
}

/// `1,234,567 rows/s` (the bar adds the time elapsed, ticking).
fn rows_message(p: Progress) -> String {
    let secs = p.elapsed.as_secs_f64();
    let rate = if secs > 0.0 {
        (p.done as f64 / secs) as u64
    } else {
        0
    };
    format!("{} rows/s", HumanCount(rate))
}

fn new_bar(unit: ProgressUnit, total: u64, label: &str) -> ProgressBar {
    let template = match (unit, total > 0) {
        // `wide_bar` takes the width the rest leaves: the line never wraps.
        (ProgressUnit::Bytes, true) => {
            "{prefix} [{wide_bar}] {percent:>3}% {bytes}/{total_bytes} ({bytes_per_sec})"
        }
        (ProgressUnit::Bytes, false) => "{spinner} {prefix} {bytes} ({bytes_per_sec})",
        (ProgressUnit::Rows, true) => {
            "{prefix} [{wide_bar}] {percent:>3}% {human_pos}/{human_len} rows ({msg}, {elapsed})"
        }
        (ProgressUnit::Rows, false) => "{spinner} {prefix} {human_pos} rows ({msg}, {elapsed})",
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

    fn rows(phase: Phase, done: u64, total: u64, elapsed_ms: u64) -> Progress {
        Progress {
            phase,
            unit: ProgressUnit::Rows,
            done,
            total,
            elapsed: Duration::from_millis(elapsed_ms),
        }
    }

    fn display(query_after_ms: u64) -> ProgressDisplay {
        ProgressDisplay {
            query_after: Duration::from_millis(query_after_ms),
            ..ProgressDisplay::default()
        }
    }

    #[test]
    fn rows_message_gives_rate() {
        let p = rows(Phase::Scan, 3_000_000, 10_000_000, 1500);
        assert_eq!(rows_message(p), "2,000,000 rows/s");
    }

    #[test]
    fn early_reports_draw_nothing() {
        let d = display(60_000);
        d.begin("query");
        d.report(rows(Phase::Scan, 1, 10, 10));
        assert!(d.state.lock().unwrap().bar.is_none());
        d.report(rows(Phase::Scan, 5, 10, 61_000));
        let bar = d.state.lock().unwrap().bar.clone().unwrap();
        assert_eq!((bar.position(), bar.length()), (5, Some(10)));
        d.finish();
        assert!(d.state.lock().unwrap().bar.is_none());
    }

    /// Regression (issue 30, item 7): a query whose scan ended before the
    /// delay and whose merge ran for seconds showed no line at all, since
    /// the line waited for a report past the delay. The last report (the
    /// merge starting) is drawn once the delay is up, naming its phase.
    #[test]
    fn a_phase_that_reports_once_shows_after_the_delay() {
        let d = display(50);
        d.begin("query");
        d.report(rows(Phase::Scan, 10, 10, 5));
        d.report(rows(Phase::Merge, 0, 400, 10));
        assert!(d.state.lock().unwrap().bar.is_none());
        let waited = Instant::now();
        let bar = loop {
            if let Some(bar) = d.state.lock().unwrap().bar.clone() {
                break bar;
            }
            assert!(waited.elapsed() < Duration::from_secs(30), "no line drawn");
            std::thread::sleep(Duration::from_millis(10));
        };
        assert_eq!(bar.length(), Some(400));
        assert_eq!(bar.prefix(), "query (merge)");
        assert_eq!(d.state.lock().unwrap().phase, Some(Phase::Merge));
        // After the work ends, a late timer draws nothing.
        d.finish();
        d.begin("query");
        d.report(rows(Phase::Scan, 1, 10, 1));
        d.finish();
        std::thread::sleep(Duration::from_millis(100));
        assert!(d.state.lock().unwrap().bar.is_none());
    }
}
