//! Capacity arithmetic from the seeds, to check a configuration before an outage.

use std::time::Duration;

/// Bulkhead pool size: calls per second × normal latency × spare factor, rounded up.
///
/// The breaker-and-bulkhead lesson: 20 statements/s × 2 s × 1.5 = 60.
///
/// ```
/// use std::time::Duration;
/// assert_eq!(fusebox_runtime::tune::pool_size(20.0, Duration::from_secs(2), 1.5), 60);
/// ```
pub fn pool_size(calls_per_s: f64, latency: Duration, spare: f64) -> usize {
    let n = calls_per_s * latency.as_secs_f64() * spare;
    if n.is_finite() && n > 0.0 {
        (n - 1e-9).ceil().max(1.0) as usize
    } else {
        1
    }
}

/// Workers held by a dependency called `calls_per_s` times a second, each call waiting `wait`
/// (Little's law).
///
/// ```
/// use std::time::Duration;
/// // Price server down, 300 ms timeout, 400 calls/s: 120 workers.
/// let held = fusebox_runtime::tune::workers_held(400.0, Duration::from_millis(300));
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
/// `threads` threads sharing the wait.
///
/// `extra = failing × probe_timeout / (open_for × threads)`
///
/// ```
/// use std::time::Duration;
/// use fusebox_runtime::tune::extra_utilization;
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
