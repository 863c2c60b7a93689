//! The load's peak memory, as the operating system sees it.
//!
//! # Design
//! On Linux the kernel keeps the process's peak resident set size
//! (`VmHWM` in `/proc/self/status`), and writing `5` to
//! `/proc/self/clear_refs` resets it to the current size (Linux 4.0 and
//! later). A meter resets it when the load starts and reads it when the
//! load ends: the peak, less what the process held at the start (tables
//! already loaded), is what the load needed at its highest. Elsewhere, or
//! when `/proc` cannot be written, there is no figure.

/// Measures a load's peak resident memory.
pub(crate) struct PeakMeter {
    start_bytes: usize,
}

impl PeakMeter {
    /// Starts measuring; `None` where the peak cannot be reset.
    pub(crate) fn start() -> Option<PeakMeter> {
        std::fs::write("/proc/self/clear_refs", "5").ok()?;
        let start_bytes = status_bytes("VmRSS:")?;
        Some(PeakMeter { start_bytes })
    }

    /// Bytes of resident memory at the peak since [`PeakMeter::start`],
    /// above what was resident then.
    pub(crate) fn peak_bytes(&self) -> Option<usize> {
        Some(status_bytes("VmHWM:")?.saturating_sub(self.start_bytes))
    }
}

/// A `kB` figure of `/proc/self/status`, in bytes.
fn status_bytes(key: &str) -> Option<usize> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(key))?;
    let kib: usize = line[key.len()..].split_whitespace().next()?.parse().ok()?;
    kib.checked_mul(1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_peak_counts_memory_touched_since_the_start() {
        // Only where /proc allows it (Linux).
        let Some(meter) = PeakMeter::start() else {
            return;
        };
        // black_box: an optimized build would otherwise drop the unread vector.
        let touched = std::hint::black_box(vec![1u8; 64 << 20]);
        let peak = meter.peak_bytes().unwrap();
        assert!(peak >= 60 << 20, "{peak}");
        drop(touched);
    }
}
