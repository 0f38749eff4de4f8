//! Memory per breaker, counted by an instrumented global allocator: what 10 000 keyed
//! breakers (one per shard, tenant, host...) cost a process, registry entry included.
//!
//! One test function only: the allocator counts every thread, so nothing may run beside it.
//! `cargo test -p fusebox-benches --test memory -- --nocapture` prints the figures.

use std::alloc::System;

use fusebox_runtime::{registry, Breaker, Bulkhead};
use stats_alloc::{Region, StatsAlloc, INSTRUMENTED_SYSTEM};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

const N: usize = 10_000;

/// Net heap bytes per item that `make` leaves allocated, averaged over `N` items.
fn bytes_per<T>(mut make: impl FnMut(usize) -> T) -> (usize, Vec<T>) {
    let mut keep = Vec::with_capacity(N);
    let region = Region::new(GLOBAL);
    for i in 0..N {
        keep.push(make(i));
    }
    let s = region.change();
    let net = s.bytes_allocated as isize - s.bytes_deallocated as isize + s.bytes_reallocated;
    (net.max(0) as usize / N, keep)
}

#[test]
fn a_breaker_costs_at_most_one_kib() {
    // Warm the registry's maps and thread-locals so they are not charged to the first breaker.
    let time = Breaker::builder("mem-keyed")
        .max_keys(N as u32)
        .config()
        .unwrap();
    registry().keyed(&time, &"warm");
    let count = Breaker::builder("mem-keyed-count")
        .window_calls(20)
        .max_keys(N as u32)
        .config()
        .unwrap();
    registry().keyed(&count, &"warm");
    let _ = Bulkhead::builder("mem-warm").pool(1).build();

    // The `keep` vectors are allocated before each region: only the breakers are counted.
    let (keyed_time, _) = bytes_per(|k| registry().keyed(&time, &k));
    let (keyed_count, _) = bytes_per(|k| registry().keyed(&count, &k));
    let (detached, kept) = bytes_per(|k| {
        Breaker::builder(format!("mem-detached-{k:05}"))
            .build_detached()
            .unwrap()
    });
    let (bulkhead, _) = bytes_per(|k| {
        Bulkhead::builder(format!("mem-bulkhead-{k:05}"))
            .pool(8)
            .build()
            .unwrap()
    });
    println!("keyed breaker, default 30 s time window, in the registry: {keyed_time} B");
    println!("keyed breaker, 20-call count window, in the registry:     {keyed_count} B");
    println!("detached breaker, default time window:                     {detached} B");
    println!("bulkhead, in the registry:                                 {bulkhead} B");
    assert_eq!(kept.len(), N);
    for (what, bytes) in [("time window", keyed_time), ("count window", keyed_count)] {
        assert!(
            bytes <= 1024,
            "a keyed breaker with a {what} takes {bytes} B"
        );
    }
}
