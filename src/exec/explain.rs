//! EXPLAIN: the logical plan, then one block per distinct partition
//! pipeline shape with the partitions that share it.

use std::fmt::Write as _;

use crate::plan::QueryPlan;

use super::trace::Trace;

/// The EXPLAIN text of `plan` given each read partition's trace (sorted by
/// partition) and the rows scanned.
pub fn render(
    plan: &QueryPlan,
    traces: Vec<(usize, Trace)>,
    rows_scanned: usize,
    notes: &[String],
) -> String {
    let mut s = plan.describe();
    let mut shapes: Vec<(String, Vec<usize>, Trace)> = Vec::new();
    for (i, t) in traces {
        let shape = t.shape();
        match shapes.iter_mut().find(|(s, _, _)| *s == shape) {
            Some((_, ids, _)) => ids.push(i),
            None => shapes.push((shape, vec![i], t)),
        }
    }
    let _ = writeln!(
        s,
        "Partition pipelines: {} shape{} over {} partitions ({} rows scanned)",
        shapes.len(),
        if shapes.len() == 1 { "" } else { "s" },
        plan.table.partitions.len(),
        rows_scanned
    );
    let read: usize = shapes.iter().map(|(_, ids, _)| ids.len()).sum();
    for (_, ids, t) in &shapes {
        let _ = writeln!(
            s,
            "  [{} partition{}: {}]",
            ids.len(),
            if ids.len() == 1 { "" } else { "s" },
            ranges(ids)
        );
        if t.lines.is_empty() {
            let _ = writeln!(s, "    scan all rows");
        }
        for (shape, detail) in &t.lines {
            if detail.is_empty() {
                let _ = writeln!(s, "    {shape}");
            } else {
                let _ = writeln!(s, "    {shape}  ({detail})");
            }
        }
    }
    if read < plan.table.partitions.len() {
        let _ = writeln!(
            s,
            "  [{} partitions not read: early stop]",
            plan.table.partitions.len() - read
        );
    }
    for note in notes {
        let _ = writeln!(s, "Then {note}");
    }
    s
}

/// `0-3, 7, 9-12` for a sorted list of indices.
fn ranges(ids: &[usize]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < ids.len() {
        let start = ids[i];
        let mut end = start;
        while i + 1 < ids.len() && ids[i + 1] == end + 1 {
            i += 1;
            end = ids[i];
        }
        out.push(if start == end {
            start.to_string()
        } else {
            format!("{start}-{end}")
        });
        i += 1;
        if out.len() >= 8 && i < ids.len() {
            out.push("…".into());
            break;
        }
    }
    out.join(", ")
}
