//! mimalloc's purge delay by phase, shared by both binaries.
//!
//! mimalloc (v2) returns freed memory to the system `purge_delay` ms after
//! it is freed, 10 ms by default. A query allocates and frees large
//! per-partition vectors (partials, radix pieces, merge tables) for
//! hundreds of milliseconds, so at 10 ms it gave pages back only to fault
//! them in again, zeroed: `clear_page_erms` under `do_huge_pmd_anonymous_page`
//! was 5-12% of ClickBench q34's profile. Queries run with a delay of one
//! second ([`QUERY_PURGE_DELAY_MS`]); explicit loads purge at once
//! ([`LOAD_PURGE_DELAY_MS`]), so that a load's resident peak stays at its
//! live heap (issue 30's load-peak bound).
//!
//! A load frees each span's parsed values (about 24 MB a worker on the
//! taxi trips) as it encodes them and allocates the next span's: at
//! mimalloc's default 10 ms the freed pages stay resident a while, about
//! 30 MB above the live heap at the peak. `katydid-bench --load-peak
//! taxi-2M.csv --threads 2` (peak, CPU seconds; bound 197 MB; a shared
//! 2-core machine at load 3-4, noisy): 10 ms: 194-205 MB, 2.0-2.5 s;
//! 1 ms: 186-196 MB, 2.3-2.7 s; 0: 164-174 MB, 3.0-3.1 s (the pages
//! freed are faulted in again: about 1 s of system time). Before spans
//! were read in pieces, 10 ms gave 235-244 MB and 3.2-3.7 s, so loads
//! cost no more than they did (wall 1.7-3.4 s against 2.7-3.9 s).
//!
//! mimalloc reads `MIMALLOC_PURGE_DELAY` once at start; setting it there
//! overrides neither phase, which set the option themselves.

use std::os::raw::c_long;

use libmimalloc_sys::{mi_option_set, mi_option_t};

/// `mi_option_purge_delay` in mimalloc v2's `mi_option_t` (its
/// `include/mimalloc.h`: after `mi_option_eager_commit_delay`, 14, and
/// before `mi_option_use_numa_nodes`, 16, both of which `libmimalloc-sys`
/// names; it leaves this one out). The `v2` feature pins the header.
const MI_OPTION_PURGE_DELAY: mi_option_t = 15;

/// Purge delay while queries run, in ms.
pub const QUERY_PURGE_DELAY_MS: c_long = 1000;

/// Purge delay during an explicit load, in ms: none (see the module docs).
pub const LOAD_PURGE_DELAY_MS: c_long = 0;

fn set_purge_delay(ms: c_long) {
    // SAFETY: `mi_option_set` stores a value into mimalloc's option table
    // (a word other threads read when they purge); it takes no pointers.
    unsafe { mi_option_set(MI_OPTION_PURGE_DELAY, ms) }
}

/// Sets the query phase's purge delay: call once at start.
pub fn for_queries() {
    set_purge_delay(QUERY_PURGE_DELAY_MS);
}

/// The load phase's purge delay until dropped, then the query phase's.
#[must_use = "the load phase lasts as long as the guard"]
pub struct Loading(());

impl Loading {
    /// Enters the load phase.
    pub fn start() -> Loading {
        set_purge_delay(LOAD_PURGE_DELAY_MS);
        Loading(())
    }
}

impl Drop for Loading {
    fn drop(&mut self) {
        set_purge_delay(QUERY_PURGE_DELAY_MS);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn purge_delay() -> c_long {
        // SAFETY: reads mimalloc's option table; takes no pointers.
        unsafe { libmimalloc_sys::mi_option_get(MI_OPTION_PURGE_DELAY) }
    }

    #[test]
    fn loads_purge_at_once_and_queries_after_the_longer_delay() {
        for_queries();
        assert_eq!(purge_delay(), QUERY_PURGE_DELAY_MS);
        {
            let _loading = Loading::start();
            assert_eq!(purge_delay(), LOAD_PURGE_DELAY_MS);
        }
        assert_eq!(purge_delay(), QUERY_PURGE_DELAY_MS);
    }
}
