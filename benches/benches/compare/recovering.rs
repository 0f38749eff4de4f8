//! Away from closed: refusals while open and admission in half-open.

use std::time::Duration;

use criterion::Criterion;
use failsafe::futures::CircuitBreaker as _;
use fusebox_benches::settings::*;
use fusebox_benches::{block_on, dependency};
use fusebox_runtime::{Breaker, State};

use crate::peers::*;

pub(crate) fn open_rejection(c: &mut Criterion) {
    let rt = context();
    let _in_runtime = rt.enter();
    let mut g = c.benchmark_group("open_rejection");
    let time = fusebox_time("bench-open");
    trip(&time);
    assert_eq!(time.state(), State::Open);
    g.bench_function("fusebox Breaker::call", |b| {
        b.iter(|| block_on(time.call(dependency(1, false))))
    });
    let forced = fusebox_time("bench-forced-open");
    forced.force_open();
    g.bench_function("fusebox Breaker::call (forced open)", |b| {
        b.iter(|| block_on(forced.call(dependency(1, false))))
    });
    // failsafe's rate policy judges only after a whole window (30 s) of calls; trip on
    // consecutive failures instead, which leaves the same open state.
    let fs = failsafe::Config::new()
        .failure_policy(failsafe::failure_policy::consecutive_failures(
            MIN_CALLS,
            failsafe::backoff::constant(OPEN_LONG),
        ))
        .build();
    for i in 0..100 {
        let _ = block_on(fs.call(dependency(i, true)));
    }
    assert!(!fs.is_call_permitted(), "failsafe opened");
    g.bench_function("failsafe", |b| {
        b.iter(|| block_on(fs.call(dependency(1, false))))
    });
    let rc = recloser_cb(OPEN_LONG, 10);
    for i in 0..100 {
        let _ = block_on(rc.call(dependency(i, true)));
    }
    assert!(
        block_on(rc.call(dependency(1, false))).is_err(),
        "recloser opened"
    );
    g.bench_function("recloser", |b| {
        b.iter(|| block_on(rc.call(dependency(1, false))))
    });
    let mut tcb = tower_cb(tower_dep(), OPEN_LONG, 1);
    for _ in 0..100 {
        block_on(tower_call(&mut tcb, u64::MAX));
    }
    assert!(tcb.is_open(), "tower-resilience opened");
    g.bench_function("tower-resilience circuit breaker", |b| {
        b.iter(|| block_on(tower_call(&mut tcb, 1)))
    });
    let open_layer = fusebox_time("bench-open-layer");
    trip(&open_layer);
    let mut layer = fusebox_layer(open_layer.clone(), tower_dep());
    assert!(!block_on(tower_call(&mut layer, 1)), "the layer refuses");
    g.bench_function("fusebox BreakerLayer", |b| {
        b.iter(|| block_on(tower_call(&mut layer, 1)))
    });
    g.finish();
    assert_eq!(open_layer.state(), State::Open);
}

pub(crate) fn half_open_admission(c: &mut Criterion) {
    let rt = context();
    let _in_runtime = rt.enter();
    let mut g = c.benchmark_group("half_open_admission");
    // fusebox's default policy: 5 % of calls are trials; the window is long so the breaker
    // stays half-open for the whole run and each figure averages trials and rejections.
    let fb = Breaker::builder("bench-half-open")
        .window_calls(WINDOW_CALLS)
        .open_for(OPEN_SHORT)
        .half_open_window(OPEN_LONG)
        .build_detached()
        .expect("valid settings");
    trip(&fb);
    std::thread::sleep(Duration::from_millis(2));
    let _ = block_on(fb.call(dependency(1, false)));
    assert_eq!(fb.state(), State::HalfOpen);
    g.bench_function("fusebox Breaker::call (5 % trials)", |b| {
        b.iter(|| block_on(fb.call(dependency(1, false))))
    });
    // recloser admits every half-open call until its ring is full; a ring this long never fills
    // during the run.
    let rc = recloser_cb(OPEN_SHORT, 1 << 26);
    for i in 0..100 {
        let _ = block_on(rc.call(dependency(i, true)));
    }
    std::thread::sleep(Duration::from_millis(2));
    g.bench_function("recloser (all calls are trials)", |b| {
        b.iter(|| block_on(rc.call(dependency(1, false))))
    });
    let mut tcb = tower_cb(tower_dep(), OPEN_SHORT, 1 << 30);
    for _ in 0..100 {
        block_on(tower_call(&mut tcb, u64::MAX));
    }
    std::thread::sleep(Duration::from_millis(2));
    block_on(tower_call(&mut tcb, 1));
    assert_eq!(
        tcb.state_sync(),
        tower_resilience::circuitbreaker::CircuitState::HalfOpen
    );
    g.bench_function("tower-resilience (all calls are trials)", |b| {
        b.iter(|| block_on(tower_call(&mut tcb, 1)))
    });
    g.finish();
    assert_eq!(fb.state(), State::HalfOpen, "stayed half-open");
}
