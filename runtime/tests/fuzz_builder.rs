//! The `fuzz/` target `builder` on stable (issue 18 item 9): every combination of builder
//! settings is a typed error or a valid config, never a panic, and a valid config's derived
//! values (open periods, a keyed copy, the breaker itself) come up without a panic.

use std::time::Duration;

use fusebox_runtime::{Breaker, BreakerBuilder, Bulkhead};
use proptest::prelude::*;

/// One builder call, with the fuzz target's raw inputs.
#[derive(Debug, Clone)]
enum Set {
    FailureRate(u8),
    Window(u64),
    WindowCalls(u32),
    MinCalls(u32),
    Slow(u64, u8),
    Percentile(u8, u64),
    Timeout(u64),
    HalfOpenTimeout(u64),
    OpenFor(u64),
    Backoff(f64, u64),
    HalfOpenPct(u8),
    HalfOpenWindow(u64),
    HalfOpenCalls(u32),
    AlertAfter(u64),
}

/// Nanoseconds, or `Duration::MAX` for `u64::MAX` so the far end is reached too.
fn d(n: u64) -> Duration {
    if n == u64::MAX {
        Duration::MAX
    } else {
        Duration::from_nanos(n)
    }
}

/// Durations with the edges well represented: zero, one, the largest, and anything.
fn nanos() -> impl Strategy<Value = u64> {
    prop_oneof![
        Just(0),
        Just(1),
        Just(u64::MAX),
        1u64..10_000_000_000,
        any::<u64>()
    ]
}

/// Counts likewise, with window-sized values common.
fn count() -> impl Strategy<Value = u32> {
    prop_oneof![Just(0), Just(1), Just(u32::MAX), 1u32..2_000, any::<u32>()]
}

fn factor() -> impl Strategy<Value = f64> {
    prop_oneof![
        Just(f64::NAN),
        Just(f64::INFINITY),
        Just(f64::MAX),
        Just(0.5),
        1.0f64..10.0,
        any::<f64>()
    ]
}

fn set() -> impl Strategy<Value = Set> {
    prop_oneof![
        any::<u8>().prop_map(Set::FailureRate),
        nanos().prop_map(Set::Window),
        count().prop_map(Set::WindowCalls),
        count().prop_map(Set::MinCalls),
        (nanos(), any::<u8>()).prop_map(|(b, r)| Set::Slow(b, r)),
        (any::<u8>(), nanos()).prop_map(|(p, b)| Set::Percentile(p, b)),
        nanos().prop_map(Set::Timeout),
        nanos().prop_map(Set::HalfOpenTimeout),
        nanos().prop_map(Set::OpenFor),
        (factor(), nanos()).prop_map(|(f, m)| Set::Backoff(f, m)),
        any::<u8>().prop_map(Set::HalfOpenPct),
        nanos().prop_map(Set::HalfOpenWindow),
        count().prop_map(Set::HalfOpenCalls),
        nanos().prop_map(Set::AlertAfter),
    ]
}

fn apply(b: BreakerBuilder, s: &Set) -> BreakerBuilder {
    match *s {
        Set::FailureRate(v) => b.failure_rate(v),
        Set::Window(v) => b.window(d(v)),
        Set::WindowCalls(v) => b.window_calls(v),
        Set::MinCalls(v) => b.min_calls(v),
        Set::Slow(bound, rate) => b.slow(d(bound), rate),
        Set::Percentile(p, bound) => b.trip_percentile(p, d(bound)),
        Set::Timeout(v) => b.timeout(d(v)),
        Set::HalfOpenTimeout(v) => b.half_open_timeout(d(v)),
        Set::OpenFor(v) => b.open_for(d(v)),
        Set::Backoff(f, max) => b.backoff(f, d(max)),
        Set::HalfOpenPct(v) => b.half_open_pct(v),
        Set::HalfOpenWindow(v) => b.half_open_window(d(v)),
        Set::HalfOpenCalls(v) => b.half_open_calls(v),
        Set::AlertAfter(v) => b.alert_after(d(v)),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    #[test]
    fn fuzz_builder_typed_error_or_valid_config(
        name in prop_oneof![Just("fuzz".to_owned()), any::<String>()],
        sets in prop::collection::vec(set(), 0..10),
        pool in any::<usize>(),
        max_wait in nanos(),
    ) {
        let b = sets.iter().fold(Breaker::builder(name.clone()), apply);
        if let Ok(c) = b.config() {
            // Open periods never shrink as openings repeat (backoff is at least 1).
            let periods = [0, 1, 7, 64, u32::MAX].map(|n| c.open_period(n));
            prop_assert!(periods.windows(2).all(|w| w[0] <= w[1]), "{:?}", periods);
            let keyed = c.with_key("k");
            prop_assert_eq!(keyed.base_name(), name.as_str());
            let small = sets.iter().all(|s| !matches!(s, Set::WindowCalls(n) if *n > 10_000));
            if small {
                // Small enough to allocate: the breaker itself must come up.
                let breaker = b.build_detached();
                prop_assert!(breaker.is_ok());
                let _ = breaker.unwrap().metrics();
            }
        }
        let _ = Bulkhead::builder(name).pool(pool).max_wait(d(max_wait)).config();
    }
}
