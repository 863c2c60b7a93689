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
//! A Parquet file loads the other way round: the `parquet` crate decodes
//! each row group's columns into large buffers, freed and allocated again
//! row group after row group, and purging them at once made the kernel
//! hand the same memory back as fresh, zeroed huge pages: `clear_page_erms`
//! under `do_huge_pmd_anonymous_page` was 19% of a 10M-row load's profile.
//! So a Parquet load keeps the query phase's delay, and its freed buffers
//! are reused as they are. `katydid --load` of a 10M-row TLC-like file
//! (2 cores, load average 3, two runs each): purge at once 1.37-2.28 s
//! wall, 0.35-1.0 s system, 258-261 MB peak; after 1 s 1.03-1.05 s, 0.03-
//! 0.05 s system, 275-277 MB. A CSV load keeps purging at once (see
//! above); resetting rather than decommitting its pages (`madvise`
//! `MADV_FREE`) took taxi-2M from 3.4 s to 2.6 s but its peak from 182 MB
//! to 220 MB, past issue 30's bound.
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

/// The load phase's purge settings until dropped, then the query phase's.
#[must_use = "the load phase lasts as long as the guard"]
pub struct Loading(());

impl Loading {
    /// Enters the load phase of a CSV load (or one from memory).
    pub fn start() -> Loading {
        set_purge_delay(LOAD_PURGE_DELAY_MS);
        Loading(())
    }

    /// Enters the load phase for the file at `path`, except for a Parquet
    /// file (its magic bytes, or for a path that is no file, such as a
    /// glob, its `.parquet` name), which loads under the query phase's
    /// delay (see the module docs).
    pub fn start_for(path: &std::path::Path) -> Loading {
        if is_parquet(path) {
            return Loading(());
        }
        Loading::start()
    }
}

/// Whether `path` names a Parquet file: its first four bytes are `PAR1`,
/// or it cannot be opened and its name ends in `.parquet`.
fn is_parquet(path: &std::path::Path) -> bool {
    use std::io::Read;
    match std::fs::File::open(path) {
        Ok(mut f) => {
            let mut magic = [0u8; 4];
            f.read_exact(&mut magic).is_ok() && &magic == b"PAR1"
        }
        Err(_) => path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("parquet")),
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

    /// mimalloc's options are global: the tests take turns.
    static OPTIONS: std::sync::Mutex<()> = std::sync::Mutex::new(());

    #[test]
    fn loads_purge_at_once_and_queries_after_the_longer_delay() {
        let _turn = OPTIONS.lock().unwrap_or_else(|e| e.into_inner());
        for_queries();
        assert_eq!(purge_delay(), QUERY_PURGE_DELAY_MS);
        {
            let _loading = Loading::start();
            assert_eq!(purge_delay(), LOAD_PURGE_DELAY_MS);
        }
        assert_eq!(purge_delay(), QUERY_PURGE_DELAY_MS);
    }

    #[test]
    fn parquet_loads_keep_the_query_delay_and_everything_else_purges_at_once() {
        let _turn = OPTIONS.lock().unwrap_or_else(|e| e.into_inner());
        for_queries();
        let dir = std::env::temp_dir().join(format!("katydid-alloc-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let parquet = dir.join("data.bin");
        std::fs::write(&parquet, b"PAR1 and the rest").unwrap();
        let csv = dir.join("data.parquet");
        std::fs::write(&csv, b"a,b\n1,2\n").unwrap();
        // The bytes decide, not the name; a glob goes by its name.
        for (path, delay) in [
            (parquet, QUERY_PURGE_DELAY_MS),
            (csv, LOAD_PURGE_DELAY_MS),
            (dir.join("m-*.parquet"), QUERY_PURGE_DELAY_MS),
            (dir.join("*.csv"), LOAD_PURGE_DELAY_MS),
        ] {
            {
                let _loading = Loading::start_for(&path);
                assert_eq!(purge_delay(), delay, "{}", path.display());
            }
            assert_eq!(purge_delay(), QUERY_PURGE_DELAY_MS);
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
