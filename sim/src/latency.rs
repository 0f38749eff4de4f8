//! Latency distributions of a simulated dependency.

use std::time::Duration;

use super::Rng;

/// How long a simulated dependency takes to answer.
///
/// ```
/// use std::time::Duration;
/// use fusebox_sim::{Latency, Rng};
/// let ms = Duration::from_millis;
/// let mut rng = Rng::new(1);
/// assert_eq!(Latency::fixed(ms(80)).draw(&mut rng), ms(80));
/// let d = Latency::uniform(ms(1500), ms(3000)).draw(&mut rng);
/// assert!(d >= ms(1500) && d <= ms(3000));
/// // 8 s, and one call in twenty takes 40 s (the slow-not-down write-up).
/// let slow = Latency::fixed(Duration::from_secs(8)).with_tail(0.05, Duration::from_secs(40));
/// assert!((slow.mean().as_secs_f64() - 9.6).abs() < 1e-9);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Latency {
    lo: Duration,
    hi: Duration,
    tail: Option<(f64, Duration)>,
}

impl Latency {
    /// Always `d`.
    pub fn fixed(d: Duration) -> Latency {
        Latency::uniform(d, d)
    }

    /// Uniform between `lo` and `hi` (swapped if given the wrong way round).
    pub fn uniform(lo: Duration, hi: Duration) -> Latency {
        Latency {
            lo: lo.min(hi),
            hi: lo.max(hi),
            tail: None,
        }
    }

    /// A share `p` (0..=1) of calls takes `d` instead.
    pub fn with_tail(self, p: f64, d: Duration) -> Latency {
        Latency {
            // A NaN share means no tail rather than a NaN mean.
            tail: Some((if p.is_nan() { 0.0 } else { p.clamp(0.0, 1.0) }, d)),
            ..self
        }
    }

    /// The mean of the distribution (`Duration::MAX` when it is longer than a `Duration`
    /// holds, as with a tail of `Duration::MAX`).
    pub fn mean(&self) -> Duration {
        // Halved before the sum: `lo + hi` overflows a `Duration` for the longest latencies.
        let body = self.lo.as_secs_f64() / 2.0 + self.hi.as_secs_f64() / 2.0;
        let secs = match self.tail {
            Some((p, d)) => body * (1.0 - p) + d.as_secs_f64() * p,
            None => body,
        };
        // `Duration::MAX` in seconds rounds up as an f64, past what a `Duration` holds.
        Duration::try_from_secs_f64(secs).unwrap_or(Duration::MAX)
    }

    /// One draw.
    pub fn draw(&self, rng: &mut Rng) -> Duration {
        if let Some((p, d)) = self.tail {
            if rng.chance(p) {
                return d;
            }
        }
        if self.lo == self.hi {
            return self.lo;
        }
        self.lo + (self.hi - self.lo).mul_f64(rng.next_f64())
    }
}
