//! The text a CSV load holds while it parses (issue 30, item 4): a file
//! that can be read at an offset is read again a piece (256-512 KiB) at a
//! time by the worker parsing each span, so the load never holds a whole
//! span of text. Measured as the highest live heap above the start,
//! counted by this binary's allocator (a test binary of its own, so that
//! nothing else allocates while it runs).

use std::alloc::{GlobalAlloc, Layout, System};
use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

use katydid::ingest::{LoadOptions, load_file};

/// The system allocator, counting the bytes live and their highest.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grew(bytes: usize) {
    let live = LIVE.fetch_add(bytes, Ordering::Relaxed) + bytes;
    PEAK.fetch_max(live, Ordering::Relaxed);
}

// SAFETY: every call is passed on to `System` unchanged; the counters are
// only arithmetic on the sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        grew(layout.size());
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        grew(layout.size());
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if new_size >= layout.size() {
            grew(new_size - layout.size());
        } else {
            LIVE.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
        }
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Writes `rows` records of an id and one of eight 181-byte names (about
/// 190 bytes a record) to `path`; returns the bytes written.
fn write_names(path: &Path, rows: usize) -> usize {
    let names: Vec<String> = (0..8)
        .map(|k| format!("{k}{}", "name of a borough ".repeat(10)))
        .collect();
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let mut bytes = 0;
    let header = "id,name\n";
    out.write_all(header.as_bytes()).unwrap();
    bytes += header.len();
    for i in 0..rows {
        let line = format!("{i},{}\n", names[i * 7 % 8]);
        out.write_all(line.as_bytes()).unwrap();
        bytes += line.len();
    }
    out.flush().unwrap();
    bytes
}

#[test]
fn a_span_is_parsed_without_holding_its_text() {
    let dir = std::env::temp_dir().join(format!("katydid-text-in-flight-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("names.csv");
    let rows = 200_000;
    let text = write_names(&path, rows);
    assert!(text > 30_000_000, "{text}");
    // One span of the whole file: a single worker parses it, and before
    // pieces it held all 20 MB of its text at once.
    let options = LoadOptions {
        partition_rows: rows,
        ..LoadOptions::default()
    };
    let before = LIVE.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    let loaded = load_file(&path, "names", &options).unwrap();
    let peak = PEAK.load(Ordering::Relaxed) - before;
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!(loaded.table.rows(), rows);
    let table = loaded.table.heap_bytes();
    // What the load holds besides the table: a piece or two of text (the
    // reader's and the worker's, at most a MiB each), the parsed ids and
    // names' ids and the encoders' buffers: about 5 MB at 100,000 rows,
    // against more than the span's 38 MB before pieces.
    assert!(
        peak < table + text / 4,
        "load peaked at {peak} bytes live for a table of {table} from {text} bytes of text"
    );
}
