//! What a partition's pipeline chose, for EXPLAIN.

/// The operators chosen for one partition, as `(shape, detail)` lines.
///
/// The shape names the operator and codec without partition-specific
/// constants, so partitions compiled alike share a shape; the detail has the
/// constants (code ranges, dictionary sizes, zone-map bounds).
#[derive(Debug, Clone, Default)]
pub struct Trace {
    enabled: bool,
    /// The recorded lines.
    pub lines: Vec<(String, String)>,
}

impl Trace {
    /// A trace that records when `enabled`, and costs nothing otherwise.
    pub fn new(enabled: bool) -> Trace {
        Trace {
            enabled,
            lines: Vec::new(),
        }
    }

    /// Records one operator choice.
    #[inline]
    pub fn add(&mut self, shape: impl Into<String>, detail: impl Into<String>) {
        if self.enabled {
            self.lines.push((shape.into(), detail.into()));
        }
    }

    /// Records one operator choice whose detail is only made when the
    /// trace records (a generic predicate's text can be an IN list of
    /// thousands of values).
    #[inline]
    pub fn add_with(&mut self, shape: &str, detail: impl FnOnce() -> String) {
        if self.enabled {
            self.lines.push((shape.to_string(), detail()));
        }
    }

    /// The shape lines joined, the key partitions are grouped by.
    pub fn shape(&self) -> String {
        self.lines
            .iter()
            .map(|l| l.0.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    }
}
