//! Capacity arithmetic, to check a configuration before an outage: how large a pool must be,
//! how fast stuck calls exhaust the workers, and what failing dependencies cost in probes.

use std::time::Duration;

use crate::settings::BreakerConfig;

/// Bulkhead pool size: calls per second × normal latency × spare factor, rounded up.
///
/// For example 20 statements/s × 2 s × 1.5 = 60.
///
/// A pool has at least one slot: a product that is zero, negative or not a number (no
/// demand) gives 1. A product too large to count (infinite included) gives `usize::MAX`, so
/// a huge demand never reads as a small pool.
///
/// ```
/// use std::time::Duration;
/// assert_eq!(fusebox::tune::pool_size(20.0, Duration::from_secs(2), 1.5), 60);
/// assert_eq!(fusebox::tune::pool_size(0.0, Duration::from_secs(2), 1.5), 1);
/// assert_eq!(fusebox::tune::pool_size(1e300, Duration::MAX, 1e300), usize::MAX);
/// ```
pub fn pool_size(calls_per_s: f64, latency: Duration, spare: f64) -> usize {
    let n = calls_per_s * latency.as_secs_f64() * spare;
    if n > 0.0 {
        // `as` saturates: an infinite or huge product is `usize::MAX`.
        (n - 1e-9).ceil().max(1.0) as usize
    } else {
        // Also NaN: every comparison with it is false.
        1
    }
}

/// Workers held by a dependency called `calls_per_s` times a second, each call waiting `wait`
/// (Little's law).
///
/// ```
/// use std::time::Duration;
/// // Price server down, 300 ms timeout, 400 calls/s: 120 workers.
/// let held = fusebox::tune::workers_held(400.0, Duration::from_millis(300));
/// assert!((held - 120.0).abs() < 1e-9);
/// ```
pub fn workers_held(calls_per_s: f64, wait: Duration) -> f64 {
    calls_per_s * wait.as_secs_f64()
}

/// Worst-case extra utilization (a fraction: 2.625 is 263 %) of a breaker configuration while
/// `failing` of its dependencies are down, after Semian's circuit breaker equation.
///
/// Assumptions: every failing circuit spends one probe timeout (`probe_timeout`, the
/// half-open timeout) per cycle of `open_for` useful time plus the probes; the worker has
/// `threads` threads sharing the wait; context switches cost nothing; the circuits are
/// already open (the first trip, `error_threshold` timeouts each, comes on top).
///
/// `extra = failing × probe_timeout / (open_for × threads)`
///
/// The result is a demand on the worker's capacity, not a share of it: above 1.0 (Semian's
/// 263 %) the threads cannot keep up and the worker is as good as down. The simulator
/// measures [`probe_load`], its close relative (`fusebox_sim::replay::semian` shows both).
///
/// ```
/// use std::time::Duration;
/// use fusebox::tune::extra_utilization;
/// let before = extra_utilization(42, Duration::from_millis(250), Duration::from_secs(2), 2);
/// let after = extra_utilization(42, Duration::from_millis(50), Duration::from_secs(30), 2);
/// assert!((before - 2.625).abs() < 1e-9);
/// assert!((after - 0.035).abs() < 1e-9);
/// ```
pub fn extra_utilization(
    failing: usize,
    probe_timeout: Duration,
    open_for: Duration,
    threads: usize,
) -> f64 {
    let denom = open_for.as_secs_f64() * threads.max(1) as f64;
    if denom <= 0.0 {
        return f64::INFINITY;
    }
    failing as f64 * probe_timeout.as_secs_f64() / denom
}

/// Steady-state share of `threads` kept busy by probes when every probe starts as soon as its
/// circuit half-opens and none waits for a thread: `failing × t / ((open_for + t) × threads)`.
///
/// This is what the simulator measures (a circuit's next open period starts when its probe
/// has failed, so a cycle lasts `open_for + t`). It is a demand: above 1.0 the threads cannot
/// keep up. [`extra_utilization`] counts the probes on top of `open_for` instead, so it is the
/// larger of the two; they agree when `t ≪ open_for`.
///
/// ```
/// use std::time::Duration;
/// use fusebox::tune::probe_load;
/// let before = probe_load(42, Duration::from_millis(250), Duration::from_secs(2), 2);
/// assert!((before - 7.0 / 3.0).abs() < 1e-9); // 233 %: more than the two threads have
/// let after = probe_load(42, Duration::from_millis(50), Duration::from_secs(30), 2);
/// assert!((after - 0.034942).abs() < 1e-6);
/// ```
pub fn probe_load(
    failing: usize,
    probe_timeout: Duration,
    open_for: Duration,
    threads: usize,
) -> f64 {
    let t = probe_timeout.as_secs_f64();
    let denom = (open_for.as_secs_f64() + t) * threads.max(1) as f64;
    if denom <= 0.0 {
        return f64::INFINITY;
    }
    failing as f64 * t / denom
}

/// Calls per second that can start through a full bulkhead of `pool` slots whose calls each
/// hold a slot for `wait`: `pool / wait`.
///
/// ```
/// use std::time::Duration;
/// // A pool of 60 with every call stuck 5 s starts 12 calls per second.
/// let started = fusebox::tune::pool_throughput(60, Duration::from_secs(5));
/// assert!((started - 12.0).abs() < 1e-9);
/// ```
pub fn pool_throughput(pool: usize, wait: Duration) -> f64 {
    let w = wait.as_secs_f64();
    if w <= 0.0 {
        return f64::INFINITY;
    }
    pool as f64 / w
}

/// How long until `free` workers are all held by calls arriving at `calls_per_s` that each
/// wait `wait`; `None` when they never are (`calls_per_s × wait ≤ free`), or when a count is
/// not a number.
///
/// ```
/// use std::time::Duration;
/// use fusebox::tune::time_to_exhaust;
/// // 60 statements/s, each stuck 5 s, fill 200 workers in about 3.3 s.
/// let t = time_to_exhaust(200.0, 60.0, Duration::from_secs(5)).unwrap();
/// assert!((t.as_secs_f64() - 10.0 / 3.0).abs() < 1e-9);
/// // 20/s at 2 s hold 40: 200 workers never fill.
/// assert_eq!(time_to_exhaust(200.0, 20.0, Duration::from_secs(2)), None);
/// ```
pub fn time_to_exhaust(free: f64, calls_per_s: f64, wait: Duration) -> Option<Duration> {
    if calls_per_s.is_nan()
        || free.is_nan()
        || calls_per_s <= 0.0
        || workers_held(calls_per_s, wait) <= free
    {
        return None;
    }
    Duration::try_from_secs_f64(free.max(0.0) / calls_per_s).ok()
}

/// When a breaker whose every trial fails sends its trials, measured from when it first
/// opened, up to `horizon`: with doubling open periods, "a minute, then two, four, eight...".
///
/// With one trial per open period and a dependency that only warms by receiving requests,
/// this is the whole traffic the dependency gets while it is cold.
///
/// ```
/// use std::time::Duration;
/// use fusebox::{tune, Breaker};
/// let old = Breaker::builder("address-lookup")
///     .open_for(Duration::from_secs(30))
///     .backoff(2.0, Duration::from_secs(1800))
///     .config()
///     .unwrap();
/// let mins: Vec<u64> = tune::trial_times(&old, Duration::from_secs(3 * 3600))
///     .iter()
///     .map(|t| t.as_secs() / 60)
///     .collect();
/// // 0:30, 1:30, 3:30, 7:30, 15:30, 31:30, then every 30 minutes.
/// assert_eq!(mins, [0, 1, 3, 7, 15, 31, 61, 91, 121, 151]);
/// ```
///
/// The list stops at [`MAX_TRIAL_TIMES`] entries, so an endless horizon (`Duration::MAX`)
/// returns a bounded answer instead of exhausting memory.
pub fn trial_times(config: &BreakerConfig, horizon: Duration) -> Vec<Duration> {
    let mut out = Vec::new();
    let mut t = Duration::ZERO;
    for n in 0..MAX_TRIAL_TIMES {
        let period = config.open_period(u32::try_from(n).unwrap_or(u32::MAX));
        // A sum past `Duration::MAX` is past any horizon too.
        match t.checked_add(period) {
            Some(next) if next <= horizon && !period.is_zero() => t = next,
            _ => break,
        }
        out.push(t);
    }
    out
}

/// The most trial times [`trial_times`] returns: 100 000, more than a day of one-second open
/// periods, and more than any configuration check reads.
///
/// ```
/// use std::time::Duration;
/// use fusebox::{tune, Breaker};
/// let every_second = Breaker::builder("search")
///     .open_for(Duration::from_secs(1))
///     .config()
///     .unwrap();
/// let forever = tune::trial_times(&every_second, Duration::MAX);
/// assert_eq!(forever.len(), tune::MAX_TRIAL_TIMES);
/// ```
pub const MAX_TRIAL_TIMES: usize = 100_000;

#[cfg(test)]
mod tests {
    use super::*;

    const MS: fn(u64) -> Duration = Duration::from_millis;

    #[test]
    fn probe_load_never_exceeds_the_equation_and_meets_it_for_short_probes() {
        for (n, t, e, th) in [
            (42, 250, 2_000, 2),
            (42, 50, 30_000, 2),
            (3, 1_000, 5_000, 1),
        ] {
            let eq = extra_utilization(n, MS(t), MS(e), th);
            let load = probe_load(n, MS(t), MS(e), th);
            assert!(load <= eq, "{load} > {eq}");
            // The ratio is exactly open_for / (open_for + probe).
            let ratio = e as f64 / (e + t) as f64;
            assert!((load / eq - ratio).abs() < 1e-12);
        }
        // Semian's 3-service example: 3 s wasted per 5 s of useful work.
        assert!((extra_utilization(3, MS(1_000), MS(5_000), 1) - 0.6).abs() < 1e-12);
    }

    #[test]
    fn degenerate_inputs_give_safe_answers() {
        assert_eq!(pool_size(f64::NAN, MS(100), 1.5), 1);
        assert_eq!(pool_size(0.0, MS(100), 1.5), 1);
        assert_eq!(pool_size(10.0, MS(100), 1.0), 1);
        assert_eq!(pool_size(10.0, MS(1_000), 1.0), 10);
        assert!(extra_utilization(1, MS(10), Duration::ZERO, 1).is_infinite());
        assert!(pool_throughput(10, Duration::ZERO).is_infinite());
        assert_eq!(time_to_exhaust(10.0, 0.0, MS(1_000)), None);
        assert_eq!(time_to_exhaust(10.0, f64::NAN, MS(1_000)), None);
        let zero_threads = extra_utilization(42, MS(250), MS(2_000), 0);
        assert_eq!(zero_threads, extra_utilization(42, MS(250), MS(2_000), 1));
    }

    #[test]
    fn trial_times_stop_at_the_horizon_and_follow_a_fixed_period() {
        let fixed = crate::breaker::Breaker::builder("t")
            .open_for(Duration::from_secs(60))
            .config()
            .unwrap();
        let times = trial_times(&fixed, Duration::from_secs(300));
        assert_eq!(
            times,
            (1..=5)
                .map(|k| Duration::from_secs(60 * k))
                .collect::<Vec<_>>()
        );
    }
}
