//! Every combination of builder settings: a typed error or a valid config, never a panic;
//! a valid config's derived values (open periods, trial timeout) are computed without a panic.
#![no_main]

use std::time::Duration;

use fusebox_runtime::{Breaker, Bulkhead};
use libfuzzer_sys::arbitrary::{self, Arbitrary};
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
struct Settings {
    name: String,
    failure_rate: Option<u8>,
    window: Option<u64>,
    window_calls: Option<u32>,
    min_calls: Option<u32>,
    slow: Option<(u64, u8)>,
    percentile: Option<(u8, u64)>,
    timeout: Option<u64>,
    half_open_timeout: Option<u64>,
    open_for: Option<u64>,
    backoff: Option<(f64, u64)>,
    half_open_pct: Option<u8>,
    half_open_window: Option<u64>,
    half_open_calls: Option<u32>,
    alert_after: Option<u64>,
    pool: usize,
    max_wait: u64,
}

/// Nanoseconds, or `Duration::MAX` for `u64::MAX` so the far end is reached too.
fn d(n: u64) -> Duration {
    if n == u64::MAX {
        Duration::MAX
    } else {
        Duration::from_nanos(n)
    }
}

fuzz_target!(|s: Settings| {
    let mut b = Breaker::builder(s.name.clone());
    if let Some(v) = s.failure_rate {
        b = b.failure_rate(v)
    }
    if let Some(v) = s.window {
        b = b.window(d(v))
    }
    if let Some(v) = s.window_calls {
        b = b.window_calls(v)
    }
    if let Some(v) = s.min_calls {
        b = b.min_calls(v)
    }
    if let Some((bound, rate)) = s.slow {
        b = b.slow(d(bound), rate)
    }
    if let Some((p, bound)) = s.percentile {
        b = b.trip_percentile(p, d(bound))
    }
    if let Some(v) = s.timeout {
        b = b.timeout(d(v))
    }
    if let Some(v) = s.half_open_timeout {
        b = b.half_open_timeout(d(v))
    }
    if let Some(v) = s.open_for {
        b = b.open_for(d(v))
    }
    if let Some((f, max)) = s.backoff {
        b = b.backoff(f, d(max))
    }
    if let Some(v) = s.half_open_pct {
        b = b.half_open_pct(v)
    }
    if let Some(v) = s.half_open_window {
        b = b.half_open_window(d(v))
    }
    if let Some(v) = s.half_open_calls {
        b = b.half_open_calls(v)
    }
    if let Some(v) = s.alert_after {
        b = b.alert_after(d(v))
    }
    if let Ok(c) = b.config() {
        // Open periods never shrink as openings repeat (backoff is at least 1).
        let periods = [0, 1, 7, 64, u32::MAX].map(|n| c.open_period(n));
        assert!(periods.windows(2).all(|w| w[0] <= w[1]), "{periods:?}");
        let keyed = c.with_key("k");
        assert_eq!(keyed.base_name(), s.name);
        if s.window_calls.unwrap_or(0) <= 10_000 {
            // Small enough to allocate: the breaker itself must come up.
            let _ = b.build_detached().unwrap().metrics();
        }
    }
    let _ = Bulkhead::builder(s.name)
        .pool(s.pool)
        .max_wait(d(s.max_wait))
        .config();
});
