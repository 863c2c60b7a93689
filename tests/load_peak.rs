//! The load's peak memory, reported in `LoadStats::peak_bytes` (a test of
//! its own, so that the process holds nothing else while it runs).

use std::path::Path;

use katydid::ingest::{LoadOptions, load_bytes};

#[test]
fn the_peak_covers_at_least_the_table() {
    let mut text = String::from("id,x,name\n");
    for i in 0..200_000 {
        text.push_str(&format!("{i},{},n{}\n", i * 3, i % 5000));
    }
    let loaded = load_bytes(
        text.into_bytes(),
        Path::new("p.csv"),
        "p",
        &LoadOptions::default(),
    )
    .unwrap();
    // Where /proc/self allows it (Linux), the peak is measured; the table
    // is resident at the end of the load, so the peak holds it.
    if std::fs::write("/proc/self/clear_refs", "5").is_ok() {
        let peak = loaded.peak_bytes.expect("measured on Linux");
        assert!(peak >= loaded.table.heap_bytes(), "{peak}");
    }
}
