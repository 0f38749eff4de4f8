//! [`Backoff`]: exponential, full jitter, capped (the AWS architecture blog's "full jitter":
//! the wait before retry `n` is uniform in `[0, min(cap, base × 2^n))`, which spreads callers
//! that failed together so their retries do not arrive together).

use std::cell::Cell;
use std::time::Duration;

use fusebox_settings::defaults;

/// The wait before each retry.
///
/// ```
/// use std::time::Duration;
/// use fusebox::retry::Backoff;
/// let b = Backoff::new(Duration::from_millis(100), Duration::from_secs(1));
/// assert_eq!(b.ceiling(0), Duration::from_millis(100));
/// assert_eq!(b.ceiling(2), Duration::from_millis(400));
/// assert_eq!(b.ceiling(10), Duration::from_secs(1), "capped");
/// assert!(b.delay(3) < Duration::from_millis(800));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backoff {
    base: Duration,
    cap: Duration,
}

impl Default for Backoff {
    /// 50 ms doubling up to 2 s: the first retry comes within 50 ms (a lost packet, a
    /// restarted connection), the fourth within 400 ms, none waits more than 2 s.
    fn default() -> Self {
        Backoff::new(defaults::RETRY_BACKOFF, defaults::RETRY_BACKOFF_MAX)
    }
}

impl Backoff {
    /// Waits up to `base` before the first retry, doubling each time, never above `cap`.
    pub const fn new(base: Duration, cap: Duration) -> Backoff {
        Backoff { base, cap }
    }

    /// The first retry's ceiling.
    pub fn base(&self) -> Duration {
        self.base
    }

    /// The highest ceiling.
    pub fn cap(&self) -> Duration {
        self.cap
    }

    /// The ceiling of the wait before retry `n` (0 for the first retry).
    pub fn ceiling(&self, n: u32) -> Duration {
        let factor = 1u32.checked_shl(n.min(31)).unwrap_or(u32::MAX);
        self.base.saturating_mul(factor).min(self.cap)
    }

    /// The wait before retry `n`: uniform in `[0, ceiling(n))`.
    pub fn delay(&self, n: u32) -> Duration {
        self.ceiling(n).mul_f64(unit_random())
    }
}

/// A uniform number in `[0, 1)` from a per-thread xorshift64*: jitter needs spread, not
/// secrecy, and a dependency would be one more crate for every user.
fn unit_random() -> f64 {
    thread_local! {
        static STATE: Cell<u64> = Cell::new(seed());
    }
    STATE.with(|s| {
        let mut x = s.get();
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        s.set(x);
        // The top 53 bits make an exactly representable fraction below 1.
        (x.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11) as f64 / (1u64 << 53) as f64
    })
}

/// A different non-zero seed per thread and per process.
fn seed() -> u64 {
    use std::collections::hash_map::RandomState;
    use std::hash::{BuildHasher, Hasher};
    let mut h = RandomState::new().build_hasher();
    h.write_u64(0x9e37_79b9_7f4a_7c15);
    h.finish() | 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jitter_spreads_over_the_whole_range_and_stays_below_the_ceiling() {
        let b = Backoff::new(Duration::from_millis(100), Duration::from_secs(10));
        let draws: Vec<Duration> = (0..2000).map(|_| b.delay(0)).collect();
        assert!(draws.iter().all(|d| *d < Duration::from_millis(100)));
        let low = draws
            .iter()
            .filter(|d| **d < Duration::from_millis(10))
            .count();
        let high = draws
            .iter()
            .filter(|d| **d >= Duration::from_millis(90))
            .count();
        // Each tenth holds about 200 of 2000; 100 is far outside chance.
        assert!(low > 100 && high > 100, "low {low}, high {high}");
    }

    #[test]
    fn the_ceiling_doubles_and_is_capped_without_overflow() {
        let b = Backoff::new(Duration::from_millis(1), Duration::from_millis(50));
        let c: Vec<u128> = (0..8).map(|n| b.ceiling(n).as_millis()).collect();
        assert_eq!(c, [1, 2, 4, 8, 16, 32, 50, 50]);
        assert_eq!(b.ceiling(u32::MAX), Duration::from_millis(50));
    }
}
