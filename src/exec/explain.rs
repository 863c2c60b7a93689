//! EXPLAIN and EXPLAIN ANALYZE: the logical plan, the operators above the
//! partitions, then one block per distinct partition pipeline shape with
//! the partitions that share it.

use std::fmt::Write as _;
use std::time::Duration;

use crate::plan::QueryPlan;

use super::Output;
use super::trace::Trace;

/// The EXPLAIN text of `plan` compiled and not run: the logical plan, the
/// `operators` (top down) and each partition's compiled trace (sorted by
/// partition; a pruned partition's trace says why).
pub fn render_compiled(
    plan: &QueryPlan,
    operators: &[String],
    traces: Vec<(usize, Trace)>,
    notes: &[String],
) -> String {
    let mut s = plan.describe();
    let _ = writeln!(
        s,
        "Physical plan (compiled from codecs and zone maps; no row read):"
    );
    for (depth, op) in operators.iter().enumerate() {
        let _ = writeln!(s, "{}└ {op}", "  ".repeat(depth + 1));
    }
    let read = traces
        .iter()
        .filter(|(_, t)| !t.lines.first().is_some_and(|l| l.0.starts_with("skip")))
        .count();
    let _ = write!(
        s,
        "{}",
        shapes(plan, traces, &format!("{} partitions to read", read), false)
    );
    for note in notes {
        let _ = writeln!(s, "Then {note}");
    }
    s
}

/// The EXPLAIN ANALYZE text of `plan` run to `out` in `elapsed`: the
/// logical plan, each read partition's recorded choices, the notes of the
/// steps after the partitions and the time and rows of each phase.
pub fn render_analyzed(plan: &QueryPlan, out: Output, elapsed: Duration) -> String {
    let mut s = plan.describe();
    let _ = write!(
        s,
        "{}",
        shapes(
            plan,
            out.traces,
            &format!(
                "{} rows scanned, {} selected",
                out.rows_scanned, out.rows_selected
            ),
            true
        )
    );
    for note in &out.notes {
        let _ = writeln!(s, "Then {note}");
    }
    let _ = writeln!(s, "Ran in {}:", ms(elapsed));
    for (phase, what, time) in &out.phases {
        let _ = writeln!(s, "  {phase}: {what}, {}", ms(*time));
    }
    s
}

/// `12.3 ms`.
fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1e3)
}

/// The partition pipeline blocks: partitions grouped by shape, with the
/// first one's details; `counted` closes the heading line. `ran` adds the
/// early stop's unread partitions.
fn shapes(plan: &QueryPlan, traces: Vec<(usize, Trace)>, counted: &str, ran: bool) -> String {
    let mut s = String::new();
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
        "Partition pipelines: {} shape{} over {} partitions ({counted})",
        shapes.len(),
        if shapes.len() == 1 { "" } else { "s" },
        plan.table.partitions.len(),
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
    if ran && read < plan.table.partitions.len() {
        let _ = writeln!(
            s,
            "  [{} partitions not read: early stop]",
            plan.table.partitions.len() - read
        );
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
