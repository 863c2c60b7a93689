//! Fast CSV field formatting into a byte buffer, and the small hash and
//! random helpers every generator shares.

use rand::RngCore;

/// A growing CSV text buffer with typed field writers.
///
/// Fields are written without quoting: every generator only emits text that
/// contains no comma, quote or line break.
pub(crate) struct Out {
    pub(crate) buf: Vec<u8>,
    int: itoa::Buffer,
    float: ryu::Buffer,
}

impl Out {
    pub(crate) fn with_capacity(bytes: usize) -> Out {
        Out {
            buf: Vec::with_capacity(bytes),
            int: itoa::Buffer::new(),
            float: ryu::Buffer::new(),
        }
    }

    /// Appends raw text.
    #[inline]
    pub(crate) fn s(&mut self, text: &str) {
        self.buf.extend_from_slice(text.as_bytes());
    }

    /// Appends one byte (used for separators).
    #[inline]
    pub(crate) fn b(&mut self, byte: u8) {
        self.buf.push(byte);
    }

    /// Appends the field separator.
    #[inline]
    pub(crate) fn comma(&mut self) {
        self.buf.push(b',');
    }

    /// Ends a record.
    #[inline]
    pub(crate) fn nl(&mut self) {
        self.buf.push(b'\n');
    }

    /// Appends a decimal integer without leading zeros.
    #[inline]
    pub(crate) fn int<I: itoa::Integer>(&mut self, v: I) {
        self.buf.extend_from_slice(self.int.format(v).as_bytes());
    }

    /// Appends `v / 10^decimals` with exactly `decimals` fraction digits,
    /// e.g. `fixed(1250, 2)` is `12.50` and `fixed(-73984012, 6)` is
    /// `-73.984012`. `decimals` must be at most 9.
    #[inline]
    pub(crate) fn fixed(&mut self, v: i64, decimals: u32) {
        debug_assert!(decimals <= 9);
        if decimals == 0 {
            self.int(v);
            return;
        }
        let scale = 10u64.pow(decimals);
        let mag = v.unsigned_abs();
        if v < 0 {
            self.buf.push(b'-');
        }
        self.int(mag / scale);
        self.buf.push(b'.');
        let mut frac = mag % scale;
        let start = self.buf.len();
        self.buf.resize(start + decimals as usize, b'0');
        for slot in self.buf[start..].iter_mut().rev() {
            *slot = b'0' + (frac % 10) as u8;
            frac /= 10;
        }
    }

    /// Appends a float in its shortest round-trip form (`ryu`), e.g. `0.25`
    /// or `123.456789`; never exponent notation for the magnitudes the
    /// generators produce (ryu switches to `e` only below 1e-5 or at 1e16).
    #[inline]
    pub(crate) fn float(&mut self, v: f64) {
        self.buf
            .extend_from_slice(self.float.format_finite(v).as_bytes());
    }

    /// Appends `YYYY-MM-DD HH:MM:SS` for `secs` seconds since 1970-01-01.
    pub(crate) fn timestamp(&mut self, secs: i64) {
        let days = secs.div_euclid(86_400);
        let sod = secs.rem_euclid(86_400) as u32;
        let (y, m, d) = civil_from_days(days);
        let mut t = [0u8; 19];
        put4(&mut t[0..4], y as u32);
        t[4] = b'-';
        put2(&mut t[5..7], m);
        t[7] = b'-';
        put2(&mut t[8..10], d);
        t[10] = b' ';
        put2(&mut t[11..13], sod / 3600);
        t[13] = b':';
        put2(&mut t[14..16], sod / 60 % 60);
        t[16] = b':';
        put2(&mut t[17..19], sod % 60);
        self.buf.extend_from_slice(&t);
    }

    /// Appends `YYYY-MM-DD`, the date of `secs` seconds since 1970-01-01.
    pub(crate) fn date(&mut self, secs: i64) {
        let (y, m, d) = civil_from_days(secs.div_euclid(86_400));
        let mut t = [0u8; 10];
        put4(&mut t[0..4], y as u32);
        t[4] = b'-';
        put2(&mut t[5..7], m);
        t[7] = b'-';
        put2(&mut t[8..10], d);
        self.buf.extend_from_slice(&t);
    }

    /// Appends a string field: its bytes as they are, or `""` when it is
    /// empty, so that an empty string is told apart from NULL (an unquoted
    /// empty field) as PostgreSQL's `COPY … CSV` does. The text must contain
    /// no comma, quote or line break.
    #[inline]
    pub(crate) fn text(&mut self, text: &[u8]) {
        debug_assert!(
            !text
                .iter()
                .any(|b| matches!(b, b',' | b'"' | b'\n' | b'\r'))
        );
        if text.is_empty() {
            self.buf.extend_from_slice(b"\"\"");
        } else {
            self.buf.extend_from_slice(text);
        }
    }

    /// Appends the 16 bytes of `bytes` as 32 upper-case hex digits.
    pub(crate) fn hex(&mut self, bytes: &[u8]) {
        const DIGITS: &[u8; 16] = b"0123456789ABCDEF";
        for &x in bytes {
            self.buf.push(DIGITS[(x >> 4) as usize]);
            self.buf.push(DIGITS[(x & 15) as usize]);
        }
    }
}

fn put2(dst: &mut [u8], v: u32) {
    dst[0] = b'0' + (v / 10 % 10) as u8;
    dst[1] = b'0' + (v % 10) as u8;
}

fn put4(dst: &mut [u8], v: u32) {
    put2(&mut dst[0..2], v / 100);
    put2(&mut dst[2..4], v % 100);
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's
/// `days_from_civil`, <https://howardhinnant.github.io/date_algorithms.html>).
pub(crate) fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m as i64 + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The inverse of [`days_from_civil`] (same source).
pub(crate) fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

/// The largest non-negative `i64`, as a mask of the low 63 bits.
pub(crate) const ID_MASK: u64 = (1 << 63) - 1;

/// A bijection of the 63-bit domain `[0, 2^63)` keyed by `key`, so distinct
/// `n` get distinct ids that fit in an `i64` (the `kv` ids, `hits` WatchID
/// and UserID).
///
/// `n` is XORed with the 63-bit key, then put through the SplitMix64
/// finalizer's xorshift-multiply rounds computed modulo 2^63:
/// `z ^= z >> s` is invertible on any fixed-width domain and multiplication
/// by an odd constant is invertible modulo a power of two.
pub(crate) fn id63(n: u64, key: u64) -> u64 {
    let mut z = (n ^ key) & ID_MASK;
    z ^= z >> 30;
    z = z.wrapping_mul(0xBF58_476D_1CE4_E5B9) & ID_MASK;
    z ^= z >> 27;
    z = z.wrapping_mul(0x94D0_49BB_1331_11EB) & ID_MASK;
    z ^ (z >> 31)
}

/// SplitMix64's finalizer (Steele, Lea and Flood, "Fast splittable
/// pseudorandom number generators", OOPSLA 2014): a bijective 64-bit mix used
/// to derive stateless per-key random values (per day, per truck, per run).
#[inline]
pub(crate) fn mix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A stateless hash of several keys.
#[inline]
pub(crate) fn hash(keys: &[u64]) -> u64 {
    keys.iter()
        .fold(0x243F_6A88_85A3_08D3, |acc, &k| mix64(acc ^ k))
}

/// Maps a 64-bit hash to a float uniform in [0, 1).
#[inline]
pub(crate) fn unit(h: u64) -> f64 {
    (h >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// A uniform float in [0, 1).
#[inline]
pub(crate) fn uniform(rng: &mut impl RngCore) -> f64 {
    unit(rng.next_u64())
}

/// A uniform integer in `lo..=hi` (Lemire's multiply-shift; the bias of at
/// most 2^-32 is irrelevant for synthetic data).
#[inline]
pub(crate) fn range(rng: &mut impl RngCore, lo: i64, hi: i64) -> i64 {
    let span = (hi - lo + 1) as u64;
    lo + ((u64::from(rng.next_u32()) * span) >> 32) as i64
}

/// True with probability `p`.
#[inline]
pub(crate) fn chance(rng: &mut impl RngCore, p: f64) -> bool {
    uniform(rng) < p
}

/// An approximately standard normal value: the Irwin–Hall sum of four
/// uniforms, rescaled to unit variance (bounded by ±3.46, which keeps the
/// tails of derived quantities under control).
#[inline]
pub(crate) fn normal(rng: &mut impl RngCore) -> f64 {
    let x = rng.next_u64();
    let s: u64 = (0..4).map(|i| (x >> (16 * i)) & 0xFFFF).sum();
    (s as f64 / 65_535.0 - 2.0) * 3f64.sqrt()
}

/// A discrete distribution sampled by binary search over cumulative
/// 32-bit thresholds.
pub(crate) struct Discrete {
    thresholds: Vec<u64>,
}

impl Discrete {
    /// From non-negative weights (at least one positive).
    pub(crate) fn new(weights: &[f64]) -> Discrete {
        let total: f64 = weights.iter().sum();
        let mut acc = 0.0;
        let mut thresholds: Vec<u64> = weights
            .iter()
            .map(|w| {
                acc += w;
                ((acc / total) * (1u64 << 32) as f64) as u64
            })
            .collect();
        if let Some(last) = thresholds.last_mut() {
            *last = 1 << 32;
        }
        Discrete { thresholds }
    }

    /// Zipf weights `1 / rank^s` for ranks `1..=n`.
    pub(crate) fn zipf(n: usize, s: f64) -> Discrete {
        let w: Vec<f64> = (1..=n).map(|r| (r as f64).powf(-s)).collect();
        Discrete::new(&w)
    }

    /// Draws an index into the weights.
    #[inline]
    pub(crate) fn sample(&self, rng: &mut impl RngCore) -> usize {
        self.pick(rng.next_u32())
    }

    /// The index whose cumulative share covers `u / 2^32`: a draw from 32
    /// given random bits (for stateless per-key choices from a hash).
    #[inline]
    pub(crate) fn pick(&self, u: u32) -> usize {
        let u = u64::from(u);
        self.thresholds.partition_point(|&t| t <= u)
    }

    /// The probability of index `i`.
    pub(crate) fn share(&self, i: usize) -> f64 {
        let lo = if i == 0 { 0 } else { self.thresholds[i - 1] };
        (self.thresholds[i] - lo) as f64 / (1u64 << 32) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_decimal_formatting() {
        let mut o = Out::with_capacity(64);
        o.fixed(1250, 2);
        o.comma();
        o.fixed(5, 2);
        o.comma();
        o.fixed(-73_984_012, 6);
        o.comma();
        o.fixed(-5, 2);
        o.comma();
        o.fixed(7, 0);
        assert_eq!(
            std::str::from_utf8(&o.buf).unwrap(),
            "12.50,0.05,-73.984012,-0.05,7"
        );
    }

    #[test]
    fn timestamp_formatting_and_civil_round_trip() {
        let mut o = Out::with_capacity(32);
        let secs = days_from_civil(2013, 8, 1) * 86_400 + 8 * 3600 + 14 * 60 + 37;
        o.timestamp(secs);
        assert_eq!(std::str::from_utf8(&o.buf).unwrap(), "2013-08-01 08:14:37");
        for days in [-1000, 0, 10_957, 16_435, 16_800] {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days);
        }
    }

    #[test]
    fn discrete_follows_weights() {
        use rand::SeedableRng;
        let d = Discrete::new(&[0.0, 3.0, 1.0]);
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        let mut counts = [0usize; 3];
        for _ in 0..40_000 {
            counts[d.sample(&mut rng)] += 1;
        }
        assert_eq!(counts[0], 0);
        assert!((29_000..31_000).contains(&counts[1]), "{counts:?}");
    }
}
