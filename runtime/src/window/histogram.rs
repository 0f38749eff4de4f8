//! Latency histogram: log-scale buckets, two per octave, from 128 µs to about 100 s.
//!
//! One relaxed increment per call; percentiles are computed only when a snapshot is taken.

use std::time::Duration;

use crate::sync::atomic::{AtomicU32, Ordering::Relaxed};

/// Number of buckets.
pub(crate) const BUCKETS: usize = 40;
/// `2·log2` of the first bucket's lower bound (128 µs).
const FIRST: u32 = 14;

/// The bucket of a latency.
#[inline]
pub(crate) fn bucket(d: Duration) -> usize {
    // In u64 (no u128 division): seconds past 2^44 µs land in the last bucket either way.
    let us = d
        .as_secs()
        .min(1 << 44)
        .saturating_mul(1_000_000)
        .saturating_add(u64::from(d.subsec_micros()))
        .max(1);
    let k = 63 - us.leading_zeros();
    let half = if k >= 1 {
        ((us >> (k - 1)) & 1) as u32
    } else {
        0
    };
    ((2 * k + half).saturating_sub(FIRST) as usize).min(BUCKETS - 1)
}

/// Lower bound of a bucket in microseconds.
fn lower_us(i: usize) -> f64 {
    let raw = i as u32 + FIRST;
    let k = raw / 2;
    let base = (1u64 << k) as f64;
    if raw % 2 == 1 {
        base * 1.5
    } else {
        base
    }
}

/// Counts per bucket.
pub(crate) struct Histogram([AtomicU32; BUCKETS]);

impl Histogram {
    pub(crate) fn new() -> Histogram {
        Histogram(std::array::from_fn(|_| AtomicU32::new(0)))
    }
    pub(crate) fn add(&self, i: usize) {
        self.0[i].fetch_add(1, Relaxed);
    }
    pub(crate) fn sub(&self, i: usize) {
        self.0[i].fetch_sub(1, Relaxed);
    }
    /// Takes one sample out of bucket `i`, never below zero: a lone removal that races with
    /// the histogram's reuse must not wrap a bucket to four billion.
    pub(crate) fn remove(&self, i: usize) {
        let _ = self.0[i].fetch_update(Relaxed, Relaxed, |n| n.checked_sub(1));
    }
    pub(crate) fn take_into(&self, out: &mut Counts) {
        for (o, c) in out.0.iter_mut().zip(&self.0) {
            *o += u64::from(c.swap(0, Relaxed));
        }
    }
    pub(crate) fn read_into(&self, out: &mut Counts) {
        for (o, c) in out.0.iter_mut().zip(&self.0) {
            // A count can transiently dip below zero (as u32: wrap) while a racing call
            // adjusts two buckets; such values are ignored rather than trusted.
            let v = c.load(Relaxed);
            if v < u32::MAX / 2 {
                *o += u64::from(v);
            }
        }
    }
}

/// A plain copy of bucket counts, for percentiles.
#[derive(Debug, Clone)]
pub(crate) struct Counts(pub(crate) [u64; BUCKETS]);

impl Counts {
    pub(crate) fn new() -> Counts {
        Counts([0; BUCKETS])
    }

    /// The `q` quantile (0..1), interpolated inside its bucket; `None` when empty.
    #[cfg(test)]
    pub(crate) fn quantile(&self, q: f64) -> Option<Duration> {
        self.quantiles([q])[0]
    }

    /// Several quantiles in ascending order, in one walk over the buckets (a snapshot asks
    /// for three of every breaker: one pass instead of three).
    pub(crate) fn quantiles<const N: usize>(&self, qs: [f64; N]) -> [Option<Duration>; N] {
        let mut out = [None; N];
        let total: u64 = self.0.iter().sum();
        if total == 0 {
            return out;
        }
        let mut next = 0;
        let mut seen = 0.0;
        for (i, &c) in self.0.iter().enumerate() {
            if c == 0 {
                continue;
            }
            let c = c as f64;
            while next < N {
                let rank = (qs[next] * total as f64).ceil().max(1.0);
                if seen + c < rank {
                    break;
                }
                let lo = if i == 0 { 0.0 } else { lower_us(i) };
                let hi = lower_us(i + 1);
                let frac = (rank - seen) / c;
                out[next] = Some(Duration::from_secs_f64((lo + (hi - lo) * frac) / 1e6));
                next += 1;
            }
            if next == N {
                break;
            }
            seen += c;
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_monotonic_and_bounded() {
        let mut last = 0;
        for us in [
            1u64,
            100,
            128,
            200,
            1_000,
            80_000,
            500_000,
            8_000_000,
            1 << 40,
        ] {
            let b = bucket(Duration::from_micros(us));
            assert!(b >= last && b < BUCKETS);
            last = b;
        }
        assert_eq!(bucket(Duration::from_micros(1 << 40)), BUCKETS - 1);
    }

    #[test]
    fn quantiles_in_one_pass_equal_each_asked_alone() {
        let mut c = Counts::new();
        for (ms, n) in [(1, 40), (5, 30), (80, 20), (900, 7), (8000, 3)] {
            c.0[bucket(Duration::from_millis(ms))] += n;
        }
        let qs = [0.0, 0.4, 0.5, 0.7, 0.9, 0.95, 0.97, 0.99, 1.0];
        let together = c.quantiles(qs);
        for (q, got) in qs.iter().zip(together) {
            let alone = c.quantiles([*q])[0];
            assert_eq!(got, alone, "q = {q}");
            assert!(got.is_some());
        }
        assert!(together.windows(2).all(|w| w[0] <= w[1]));
        assert_eq!(Counts::new().quantiles([0.5, 0.99]), [None, None]);
    }

    #[test]
    fn quantile_lands_in_the_right_bucket() {
        let mut c = Counts::new();
        c.0[bucket(Duration::from_millis(80))] += 95;
        c.0[bucket(Duration::from_secs(8))] += 5;
        let p50 = c.quantile(0.5).unwrap();
        let p99 = c.quantile(0.99).unwrap();
        assert!(
            p50 > Duration::from_millis(60) && p50 < Duration::from_millis(100),
            "{p50:?}"
        );
        assert!(
            p99 > Duration::from_secs(6) && p99 < Duration::from_secs(12),
            "{p99:?}"
        );
    }
}
