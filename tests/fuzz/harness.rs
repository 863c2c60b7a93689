//! What both fuzzers share: the time budget and seeds from the environment,
//! a cap on single allocations, a watchdog for statements that do not
//! return, panic locations, findings and their report.

use std::alloc::{GlobalAlloc, Layout, System};
use std::collections::BTreeMap;
use std::io::Write as _;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, Once};
use std::time::{Duration, Instant};

use katydid::CancelToken;

// ---------------------------------------------------------------------------
// Settings

/// Seconds each fuzzer runs when `KATYDID_FUZZ_SECONDS` is unset: enough for
/// a few hundred cases, short enough for `cargo test`.
const DEFAULT_SECONDS: f64 = 2.0;

/// The base seed when `KATYDID_FUZZ_SEED` is unset. Fixed, so that a plain
/// `cargo test` (and CI) runs the same cases every time; set another seed to
/// explore.
const DEFAULT_SEED: u64 = 0x6b61_7479_6469_6431;

/// How long one fuzzer runs, from `KATYDID_FUZZ_SECONDS` (a number of
/// seconds, fractions allowed).
pub fn budget() -> Duration {
    let seconds = std::env::var("KATYDID_FUZZ_SECONDS")
        .ok()
        .map(|v| {
            v.trim()
                .parse::<f64>()
                .unwrap_or_else(|_| panic!("KATYDID_FUZZ_SECONDS={v:?} is not a number"))
        })
        .unwrap_or(DEFAULT_SECONDS);
    Duration::from_secs_f64(seconds.max(0.0))
}

/// The base seed, from `KATYDID_FUZZ_SEED` (decimal or `0x…`).
pub fn base_seed() -> u64 {
    std::env::var("KATYDID_FUZZ_SEED")
        .ok()
        .map(|v| parse_seed(&v).unwrap_or_else(|| panic!("KATYDID_FUZZ_SEED={v:?} is not a u64")))
        .unwrap_or(DEFAULT_SEED)
}

/// The one case to run instead of a timed series, from `KATYDID_FUZZ_CASE`
/// (the case seed a failure report prints).
pub fn only_case() -> Option<u64> {
    std::env::var("KATYDID_FUZZ_CASE")
        .ok()
        .map(|v| parse_seed(&v).unwrap_or_else(|| panic!("KATYDID_FUZZ_CASE={v:?} is not a u64")))
}

fn parse_seed(v: &str) -> Option<u64> {
    let v = v.trim();
    match v.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => v.parse().ok(),
    }
}

/// The seed of case `index` of a series: a SplitMix64 step over the base
/// seed and the index, so neighbouring cases are unrelated and each case
/// reruns alone from its own seed.
pub fn case_seed(base: u64, index: u64) -> u64 {
    let mut z = base.wrapping_add(index.wrapping_mul(0x9e37_79b9_7f4a_7c15));
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

// ---------------------------------------------------------------------------
// A cap on single allocations

/// The largest single allocation the fuzzed engine may ask for. The tables
/// and inputs are at most a few MiB, so a larger request is sized from a
/// number in the input (a LIMIT, an OFFSET, a length field), which the
/// house rules forbid.
pub const MAX_ALLOCATION_BYTES: usize = 256 << 20;

/// Wraps the system allocator and refuses any single allocation above
/// [`MAX_ALLOCATION_BYTES`]: it writes the running case to stderr first,
/// and the refusal then aborts the process (`memory allocation of N bytes
/// failed`), so the case is never lost in a swap storm.
pub struct CappedAllocator;

/// The running cases' descriptions, written when an allocation is refused.
/// Only `try_lock`ed by the allocator, which must never block.
static RUNNING: Mutex<BTreeMap<u64, String>> = Mutex::new(BTreeMap::new());
static NEXT_RUN: AtomicU64 = AtomicU64::new(0);
static REFUSING: AtomicBool = AtomicBool::new(false);

fn refuse(size: usize) -> *mut u8 {
    let mut err = std::io::stderr();
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut n = size;
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    let _ = err.write_all(b"\nfuzz: FOUND a single allocation of ");
    let _ = err.write_all(&digits[at..]);
    let _ = err.write_all(b" bytes (more than MAX_ALLOCATION_BYTES) while running:\n");
    if let Ok(running) = RUNNING.try_lock() {
        for text in running.values() {
            let _ = err.write_all(text.as_bytes());
            let _ = err.write_all(b"\n");
        }
    }
    // Where it came from. Capturing allocates (small blocks, which pass);
    // the flag stops a refused block inside the capture from recursing.
    if !REFUSING.swap(true, Ordering::SeqCst) {
        let trace = std::backtrace::Backtrace::force_capture();
        let _ = writeln!(err, "{trace}");
        REFUSING.store(false, Ordering::SeqCst);
    }
    std::ptr::null_mut()
}

// SAFETY: every call is forwarded unchanged to `System`, or refused with a
// null pointer, which `GlobalAlloc` allows.
unsafe impl GlobalAlloc for CappedAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if layout.size() > MAX_ALLOCATION_BYTES {
            return refuse(layout.size());
        }
        // SAFETY: the caller's contract is passed on.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if layout.size() > MAX_ALLOCATION_BYTES {
            return refuse(layout.size());
        }
        // SAFETY: the caller's contract is passed on.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if new_size > MAX_ALLOCATION_BYTES {
            return refuse(new_size);
        }
        // SAFETY: the caller's contract is passed on.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract is passed on.
        unsafe { System.dealloc(ptr, layout) }
    }
}

// ---------------------------------------------------------------------------
// Panic locations and the watchdog

/// The last panic's message and location (the engine's boundary keeps only
/// the message), for the report.
static LAST_PANIC: Mutex<Option<String>> = Mutex::new(None);
/// While shrinking, the same panic would be printed hundreds of times.
static QUIET: AtomicBool = AtomicBool::new(false);
static HOOK: Once = Once::new();

/// Installs (once) a panic hook that records where each panic happened and
/// then prints it as the default hook does (except while shrinking).
pub fn install_panic_hook() {
    HOOK.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let message = info
                .payload()
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| info.payload().downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "panic".into());
            let location = info
                .location()
                .map(|l| format!("{}:{}", l.file(), l.line()))
                .unwrap_or_default();
            if let Ok(mut last) = LAST_PANIC.lock() {
                *last = Some(format!("{message} at {location}"));
            }
            if !QUIET.load(Ordering::Relaxed) {
                default(info);
            }
        }));
    });
}

/// Takes the last recorded panic, if any.
pub fn take_last_panic() -> Option<String> {
    LAST_PANIC.lock().ok().and_then(|mut p| p.take())
}

/// A statement that has not returned after this long is cancelled through
/// its database's token; one that has not returned after [`ABORT_AFTER`]
/// ends the process with its input printed. The tables are tiny, so either
/// is a hang, not slowness.
pub const CANCEL_AFTER: Duration = Duration::from_secs(20);
const ABORT_AFTER: Duration = Duration::from_secs(120);

struct Watched {
    started: Instant,
    cancel: Option<CancelToken>,
    cancelled: bool,
}

static WATCHED: Mutex<BTreeMap<u64, Watched>> = Mutex::new(BTreeMap::new());
static WATCHDOG: Once = Once::new();

/// Registers a running case (its description goes into [`RUNNING`] for the
/// allocator and the watchdog); dropping the guard ends it.
pub struct RunGuard(u64);

impl Drop for RunGuard {
    fn drop(&mut self) {
        if let Ok(mut w) = WATCHED.lock() {
            w.remove(&self.0);
        }
        if let Ok(mut r) = RUNNING.lock() {
            r.remove(&self.0);
        }
    }
}

/// Starts watching one statement or load described by `text`.
pub fn watch(text: String, cancel: Option<CancelToken>) -> RunGuard {
    WATCHDOG.call_once(|| {
        std::thread::spawn(watchdog);
    });
    let id = NEXT_RUN.fetch_add(1, Ordering::Relaxed);
    if let Ok(mut r) = RUNNING.lock() {
        r.insert(id, text);
    }
    if let Ok(mut w) = WATCHED.lock() {
        w.insert(
            id,
            Watched {
                started: Instant::now(),
                cancel,
                cancelled: false,
            },
        );
    }
    RunGuard(id)
}

fn watchdog() {
    loop {
        std::thread::sleep(Duration::from_millis(200));
        let Ok(mut watched) = WATCHED.lock() else {
            continue;
        };
        for (id, w) in watched.iter_mut() {
            let age = w.started.elapsed();
            if age > CANCEL_AFTER && !w.cancelled {
                w.cancelled = true;
                if let Some(token) = &w.cancel {
                    token.cancel();
                }
            }
            if age > ABORT_AFTER {
                let text = RUNNING
                    .lock()
                    .ok()
                    .and_then(|r| r.get(id).cloned())
                    .unwrap_or_default();
                eprintln!(
                    "\nfuzz: FOUND a statement that ignored its cancel token and ran for {age:?}:\n{text}"
                );
                std::process::abort();
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Findings

/// One bug a fuzzer found.
#[derive(Debug, Clone)]
pub struct Bug {
    /// What went wrong with the digits taken out, so that one bug found by
    /// many inputs is reported once (`internal error: … at src/x.rs:#`).
    pub signature: String,
    /// The full description.
    pub detail: String,
}

impl Bug {
    pub fn new(detail: String) -> Bug {
        let signature = detail
            .lines()
            .next()
            .unwrap_or("")
            .chars()
            .map(|c| if c.is_ascii_digit() { '#' } else { c })
            .take(160)
            .collect();
        Bug { signature, detail }
    }
}

/// Bugs found by one fuzzer, one per signature.
pub struct Findings {
    name: &'static str,
    found: BTreeMap<String, String>,
    pub cases: u64,
    /// How the cases ended (`ok`, `parse error`, …), to see what the
    /// generator reaches.
    outcomes: BTreeMap<&'static str, u64>,
    /// The slowest case and how long it took.
    slowest: (Duration, String),
}

/// Distinct bugs after which a fuzzer stops early.
const MAX_FINDINGS: usize = 12;

impl Findings {
    pub fn new(name: &'static str) -> Findings {
        Findings {
            name,
            found: BTreeMap::new(),
            cases: 0,
            outcomes: BTreeMap::new(),
            slowest: (Duration::ZERO, String::new()),
        }
    }

    /// Notes how long a case took, keeping the slowest for the report.
    pub fn timed(&mut self, elapsed: Duration, input: &str) {
        if elapsed > self.slowest.0 {
            self.slowest = (elapsed, input.chars().take(300).collect());
        }
    }

    /// Counts one case's outcome.
    pub fn outcome(&mut self, what: &'static str) {
        *self.outcomes.entry(what).or_default() += 1;
    }

    /// Records `bug`, found by case `seed` with input `input`, unless its
    /// signature is known. Returns true when it was new.
    pub fn record(&mut self, bug: &Bug, seed: u64, input: &str) -> bool {
        if self.found.contains_key(&bug.signature) {
            return false;
        }
        let report = format!(
            "{}\n  case: KATYDID_FUZZ_CASE={seed} cargo test --test fuzz {}\n  input: {input}",
            bug.detail, self.name
        );
        eprintln!("fuzz {}: FOUND {report}", self.name);
        self.found.insert(bug.signature.clone(), report);
        true
    }

    pub fn full(&self) -> bool {
        self.found.len() >= MAX_FINDINGS
    }

    /// Fails the test with every finding, or prints the number of cases run.
    pub fn finish(self, elapsed: Duration, base: u64) {
        let outcomes: Vec<String> = self
            .outcomes
            .iter()
            .map(|(what, n)| format!("{what} {n}"))
            .collect();
        eprintln!(
            "fuzz {}: {} cases in {:.1} s (base seed KATYDID_FUZZ_SEED={base}), {} bugs; outcomes: {}",
            self.name,
            self.cases,
            elapsed.as_secs_f64(),
            self.found.len(),
            outcomes.join(", ")
        );
        eprintln!(
            "fuzz {}: slowest case {:.3} s: {}",
            self.name,
            self.slowest.0.as_secs_f64(),
            self.slowest.1
        );
        if !self.found.is_empty() {
            let all: Vec<String> = self.found.into_values().collect();
            panic!(
                "fuzz {} found {} bug(s):\n\n{}",
                self.name,
                all.len(),
                all.join("\n\n")
            );
        }
    }
}

/// Runs `still_fails` on smaller and smaller versions of `input` (runs of
/// space-separated tokens removed, halving the run length down to one), keeping each
/// that still fails the same way; gives up after `limit`. The result is
/// what the report shows next to the original.
pub fn shrink_tokens(
    input: &str,
    limit: Duration,
    mut still_fails: impl FnMut(&str) -> bool,
) -> String {
    QUIET.store(true, Ordering::Relaxed);
    let start = Instant::now();
    let mut best: Vec<String> = input.split(' ').map(str::to_string).collect();
    let mut chunk = best.len().div_ceil(2).max(1);
    while start.elapsed() < limit {
        let mut progressed = false;
        let mut at = 0;
        while at < best.len() && start.elapsed() < limit {
            let mut candidate = best.clone();
            candidate.drain(at..(at + chunk).min(best.len()));
            if !candidate.is_empty() && still_fails(&candidate.join(" ")) {
                best = candidate;
                progressed = true;
            } else {
                at += chunk;
            }
        }
        if chunk == 1 && !progressed {
            break;
        }
        chunk = (chunk / 2).max(1);
    }
    QUIET.store(false, Ordering::Relaxed);
    best.join(" ")
}
