//! The breakers the defaults are run with: given only a `timeout`, or the design card's line,
//! and that line under the defaults fusebox had before issue 26.

use std::time::Duration;

use fusebox_runtime::{Breaker, BreakerBuilder};

/// A breaker named `name` given only its call's timeout.
///
/// ```
/// use std::time::Duration;
/// let c = fusebox_sim::replay::defaults::timeout_only("lookup", Duration::from_millis(800))
///     .config()
///     .unwrap();
/// assert_eq!(c.slow().unwrap().bound, Duration::from_millis(400));
/// assert_eq!(c.probe_every(), Some(Duration::from_secs(1)));
/// ```
pub fn timeout_only(name: &str, timeout: Duration) -> BreakerBuilder {
    Breaker::builder(name).timeout(timeout)
}

/// A breaker named `name` given the design card's line: `trip_p95` and `timeout`.
///
/// ```
/// use std::time::Duration;
/// let c = fusebox_sim::replay::defaults::card_line("payments", Duration::from_millis(300), Duration::from_secs(2))
///     .config()
///     .unwrap();
/// assert_eq!(c.slow().unwrap().rate, 5);
/// assert_eq!(c.ramp(), Some(Duration::from_secs(5)));
/// ```
pub fn card_line(name: &str, p95: Duration, timeout: Duration) -> BreakerBuilder {
    timeout_only(name, timeout).trip_p95(p95)
}

/// The card's line with the defaults fusebox had before issue 26, spelled out (a 30 s window,
/// 30 s open, 5 % for 30 s, trials under the call's timeout, no probes, no ramp): what the
/// issue's real run measured.
///
/// ```
/// use std::time::Duration;
/// let c = fusebox_sim::replay::defaults::card_line_before(Duration::from_millis(300), Duration::from_secs(2))
///     .config()
///     .unwrap();
/// assert_eq!(c.probe_every(), None);
/// ```
pub fn card_line_before(p95: Duration, timeout: Duration) -> BreakerBuilder {
    card_line("payments", p95, timeout)
        .window(Duration::from_secs(30))
        .open_for(Duration::from_secs(30))
}
