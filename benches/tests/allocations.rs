//! Allocations per keyed call (issue 14: 0 per call once a key is warm), counted by an
//! instrumented global allocator. One test function only: the allocator counts every thread.

use std::alloc::System;

use fusebox_benches::{attr_keyed, block_on};
use fusebox_runtime::{registry, Breaker};
use stats_alloc::{Region, StatsAlloc, INSTRUMENTED_SYSTEM};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

#[test]
fn a_warm_keyed_call_allocates_nothing() {
    let template = Breaker::builder("alloc-keyed").config().unwrap();
    for k in 0..8u64 {
        registry().keyed(&template, &k);
        block_on(attr_keyed(k, k)).unwrap();
    }
    let region = Region::new(GLOBAL);
    for i in 0..10_000u64 {
        let b = registry().keyed(&template, &(i % 8));
        assert_eq!(b.config().key().map(str::len), Some(1));
    }
    let lookups = region.change().allocations;
    let region = Region::new(GLOBAL);
    for i in 0..10_000u64 {
        block_on(attr_keyed(i % 8, i)).unwrap();
    }
    let calls = region.change().allocations;
    assert_eq!(lookups, 0, "registry().keyed on warm keys");
    assert_eq!(calls, 0, "#[breaker(key = shard)] calls on warm keys");
}
