//! No call allocates: every benchmarked path (closed, closed with a latency rule and a
//! timeout, open refusal, forced open, bulkhead, the attributes) is run under a counting
//! global allocator after a warm-up, and must allocate nothing.
//!
//! One test function only: the allocator counts every thread, so nothing may run beside it.

use std::alloc::System;

use fusebox_benches::settings::*;
use fusebox_benches::{attr_breaker, attr_bulkhead, attr_timed, block_on, dependency};
use fusebox_runtime::{Breaker, Bulkhead, State};
use stats_alloc::{Region, StatsAlloc, INSTRUMENTED_SYSTEM};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

const CALLS: u64 = 1_000;

/// Allocations made by `CALLS` runs of `call`, after one run to warm caches and statics.
fn allocations(mut call: impl FnMut(u64)) -> usize {
    call(0);
    let region = Region::new(GLOBAL);
    for i in 0..CALLS {
        call(i);
    }
    region.change().allocations
}

#[test]
fn no_call_path_allocates() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let _in_runtime = rt.enter();
    let time = Breaker::builder("alloc-time").build_detached().unwrap();
    let count = Breaker::builder("alloc-count")
        .window_calls(WINDOW_CALLS)
        .build_detached()
        .unwrap();
    let timed = Breaker::builder("alloc-timed")
        .trip_p95(SLOW_BOUND)
        .timeout(TIMEOUT)
        .build_detached()
        .unwrap();
    let tripped = Breaker::builder("alloc-tripped")
        .window_calls(WINDOW_CALLS)
        .open_for(OPEN_LONG)
        .build_detached()
        .unwrap();
    for i in 0..100 {
        let _ = block_on(tripped.call(dependency(i, true)));
    }
    assert_eq!(tripped.state(), State::Open);
    let forced = Breaker::builder("alloc-forced").build_detached().unwrap();
    forced.force_open();
    let bh = Bulkhead::builder("alloc-bulkhead")
        .pool(POOL)
        .build_detached()
        .unwrap();

    let cases: Vec<(&str, usize)> = vec![
        (
            "closed, time window",
            allocations(|i| {
                let _ = block_on(time.call(dependency(i, i % 10 == 9)));
            }),
        ),
        (
            "closed, count window",
            allocations(|i| {
                let _ = block_on(count.call(dependency(i, i % 10 == 9)));
            }),
        ),
        (
            "closed, trip_p95 + timeout",
            allocations(|i| {
                let _ = block_on(timed.call(dependency(i, false)));
            }),
        ),
        (
            "#[breaker]",
            allocations(|i| {
                let _ = block_on(attr_breaker(i, false));
            }),
        ),
        (
            "#[breaker(trip_p95, timeout)]",
            allocations(|i| {
                let _ = block_on(attr_timed(i));
            }),
        ),
        (
            "open refusal",
            allocations(|i| {
                let _ = block_on(tripped.call(dependency(i, false)));
            }),
        ),
        (
            "forced open refusal",
            allocations(|i| {
                let _ = block_on(forced.call(dependency(i, false)));
            }),
        ),
        (
            "Bulkhead::call",
            allocations(|i| {
                let _ = block_on(bh.call(dependency(i, false)));
            }),
        ),
        (
            "#[bulkhead]",
            allocations(|i| {
                let _ = block_on(attr_bulkhead(i));
            }),
        ),
    ];
    for (case, n) in &cases {
        println!("{case}: {n} allocations in {CALLS} calls");
    }
    let allocating: Vec<_> = cases.iter().filter(|(_, n)| *n > 0).collect();
    assert!(allocating.is_empty(), "paths that allocate: {allocating:?}");
}
