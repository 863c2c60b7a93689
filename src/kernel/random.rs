//! Uniform random floats for SQL's `random()`: SplitMix64 (Steele, Lea
//! and Flood, "Fast Splittable Pseudorandom Number Generators", OOPSLA
//! 2014) over a process-wide counter seeded from the clock, so that every
//! call, on any thread, draws from a fresh position of the sequence.
//! Not for cryptography.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// SplitMix64's increment (the odd integer nearest 2^64 / φ).
const GOLDEN_GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;

fn counter() -> &'static AtomicU64 {
    static COUNTER: OnceLock<AtomicU64> = OnceLock::new();
    COUNTER.get_or_init(|| {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        AtomicU64::new(mix(nanos ^ u64::from(std::process::id())))
    })
}

/// SplitMix64's output function.
#[inline]
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The top 53 bits of `z` as a float in [0, 1).
#[inline]
fn unit(z: u64) -> f64 {
    (z >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// `n` floats, each uniform in [0, 1).
pub fn uniform_floats(n: usize) -> Vec<f64> {
    let start = counter().fetch_add((n as u64).wrapping_mul(GOLDEN_GAMMA), Ordering::Relaxed);
    (1..=n as u64)
        .map(|i| unit(mix(start.wrapping_add(i.wrapping_mul(GOLDEN_GAMMA)))))
        .collect()
}

/// One float uniform in [0, 1).
pub fn uniform_float() -> f64 {
    uniform_floats(1)[0]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_are_in_range_and_spread() {
        let xs = uniform_floats(10_000);
        assert!(xs.iter().all(|x| (0.0..1.0).contains(x)));
        let mean = xs.iter().sum::<f64>() / xs.len() as f64;
        assert!((mean - 0.5).abs() < 0.02, "mean {mean}");
        let below = xs.iter().filter(|&&x| x < 0.1).count();
        assert!((800..1200).contains(&below), "{below} below 0.1");
        // Two draws continue the sequence rather than repeat it.
        assert_ne!(uniform_floats(4), uniform_floats(4));
    }
}
