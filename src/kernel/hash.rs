//! Hashes for group keys, distinct sets and sketches: the same in every
//! thread and process, so partial states of different partitions agree.
//!
//! Integers go through SplitMix64's finalizer (Steele, Lea, Flood 2014), a
//! bijective mix that spreads every input bit over the output; strings
//! through XXH3 (Collet, the `xxhash-rust` crate), 64 or 128 bits.

pub use crate::types::canonical_f64_bits;

/// SplitMix64's finalizer: a bijective mix of a 64-bit word.
#[inline]
pub fn mix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Hash of an integer or timestamp.
#[inline]
pub fn hash_i64(v: i64) -> u64 {
    mix64(v as u64)
}

/// Hash of a float by value: `-0.0` and `0.0` alike, every NaN alike.
#[inline]
pub fn hash_f64(v: f64) -> u64 {
    mix64(canonical_f64_bits(v) ^ 0x5555_5555_5555_5555)
}

/// 64-bit XXH3 of a string's bytes.
#[inline]
pub fn hash_str(s: &str) -> u64 {
    xxhash_rust::xxh3::xxh3_64(s.as_bytes())
}

/// 128-bit XXH3 of a string's bytes: a stand-in for the string in exact
/// distinct sets, as ClickHouse's `uniqExact` keeps 128-bit hashes of
/// strings. Two different strings collide with probability about
/// `n² / 2^129` over `n` distinct strings.
#[inline]
pub fn hash_str128(s: &str) -> u128 {
    xxhash_rust::xxh3::xxh3_128(s.as_bytes())
}

/// Hash of NULL as a group key.
pub const NULL_HASH: u64 = 0x6A09_E667_F3BC_C908;

/// Combines the hash of a tuple so far with the hash of its next field.
#[inline]
pub fn combine(h: u64, next: u64) -> u64 {
    mix64(h.rotate_left(23) ^ next)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_values_hash_alike() {
        assert_eq!(hash_f64(0.0), hash_f64(-0.0));
        assert_eq!(hash_f64(f64::NAN), hash_f64(-f64::NAN));
        assert_ne!(hash_f64(1.0), hash_f64(2.0));
        assert_eq!(hash_str("abc"), hash_str(&String::from("abc")));
        assert_ne!(
            combine(hash_i64(1), hash_i64(2)),
            combine(hash_i64(2), hash_i64(1))
        );
    }
}
