//! The closed state: healthy calls, calls under a latency rule and a timeout, one call in ten
//! failing.

use criterion::Criterion;
use failsafe::futures::CircuitBreaker as _;
use fusebox_benches::settings::*;
use fusebox_benches::{attr_breaker, attr_timed, block_on, dependency, dependency_timeout, tenth};
use fusebox_runtime::{Breaker, State};

use crate::peers::*;

pub(crate) fn closed_healthy(c: &mut Criterion) {
    let rt = context();
    let _in_runtime = rt.enter();
    let mut g = c.benchmark_group("closed_healthy");
    let mut i = 0u64;
    let mut next = move || {
        i = i.wrapping_add(1);
        i
    };
    g.bench_function("bare call", |b| {
        b.iter(|| block_on(dependency(next(), false)))
    });
    let time = fusebox_time("bench-closed-time");
    g.bench_function("fusebox Breaker::call (time window)", |b| {
        b.iter(|| block_on(time.call(dependency(next(), false))))
    });
    let count = fusebox_count("bench-closed-count");
    g.bench_function("fusebox Breaker::call (count window)", |b| {
        b.iter(|| block_on(count.call(dependency(next(), false))))
    });
    g.bench_function("fusebox #[breaker] (static name, time window)", |b| {
        b.iter(|| block_on(attr_breaker(next(), false)))
    });
    let private = fusebox_time("bench-closed-private");
    g.bench_function("fusebox __private::run (time window)", |b| {
        b.iter(|| {
            block_on(fusebox_runtime::__private::run(
                &private,
                None,
                dependency(next(), false),
                |_| true,
            ))
        })
    });
    let fs = failsafe_cb(OPEN_LONG);
    g.bench_function("failsafe", |b| {
        b.iter(|| block_on(fs.call(dependency(next(), false))))
    });
    let rc = recloser_cb(OPEN_LONG, 10);
    g.bench_function("recloser", |b| {
        b.iter(|| block_on(rc.call(dependency(next(), false))))
    });
    let mut bare_tower = tower_dep();
    g.bench_function("bare tower service (boxed future)", |b| {
        b.iter(|| block_on(tower_call(&mut bare_tower, next())))
    });
    let mut tcb = tower_cb(tower_dep(), OPEN_LONG, 1);
    g.bench_function("tower-resilience circuit breaker", |b| {
        b.iter(|| block_on(tower_call(&mut tcb, next())))
    });
    let mut tcc = tower_cb_count(tower_dep());
    g.bench_function("tower-resilience circuit breaker (count window)", |b| {
        b.iter(|| block_on(tower_call(&mut tcc, next())))
    });
    let mut layer = fusebox_layer(fusebox_time("bench-closed-layer-time"), tower_dep());
    g.bench_function("fusebox BreakerLayer (time window)", |b| {
        b.iter(|| block_on(tower_call(&mut layer, next())))
    });
    let mut layer_count = fusebox_layer(fusebox_count("bench-closed-layer-count"), tower_dep());
    g.bench_function("fusebox BreakerLayer (count window)", |b| {
        b.iter(|| block_on(tower_call(&mut layer_count, next())))
    });
    g.finish();
}

/// Closed, with a latency rule and a timeout: every call is timed, and recloser (which has
/// neither) runs around `tokio::time::timeout`.
pub(crate) fn closed_timed(c: &mut Criterion) {
    let rt = context();
    let _in_runtime = rt.enter();
    let mut g = c.benchmark_group("closed_timed");
    let mut i = 0u64;
    let mut next = move || {
        i = i.wrapping_add(1);
        i
    };
    g.bench_function("bare call", |b| {
        b.iter(|| block_on(dependency(next(), false)))
    });
    g.bench_function("bare call in tokio::time::timeout", |b| {
        b.iter(|| block_on(dependency_timeout(next())))
    });
    let timed = Breaker::builder("bench-timed")
        .failure_rate(FAILURE_RATE)
        .window(WINDOW)
        .min_calls(MIN_CALLS)
        .open_for(OPEN_LONG)
        .trip_p95(SLOW_BOUND)
        .timeout(TIMEOUT)
        .build_detached()
        .expect("valid settings");
    g.bench_function("fusebox Breaker::call (trip_p95 + timeout)", |b| {
        b.iter(|| block_on(timed.call(dependency(next(), false))))
    });
    g.bench_function("fusebox #[breaker(trip_p95, timeout)]", |b| {
        b.iter(|| block_on(attr_timed(next())))
    });
    let rc = recloser_cb(OPEN_LONG, 10);
    g.bench_function("recloser around tokio::time::timeout", |b| {
        b.iter(|| block_on(rc.call(dependency_timeout(next()))))
    });
    g.finish();
}

pub(crate) fn closed_ten_percent_failures(c: &mut Criterion) {
    let rt = context();
    let _in_runtime = rt.enter();
    let mut g = c.benchmark_group("closed_10pct_failures");
    let mut i = 0u64;
    let mut next = move || {
        i = i.wrapping_add(1);
        i
    };
    g.bench_function("bare call", |b| {
        b.iter(|| {
            let x = next();
            block_on(dependency(x, tenth(x)))
        })
    });
    let time = fusebox_time("bench-10pct-time");
    g.bench_function("fusebox Breaker::call (time window)", |b| {
        b.iter(|| {
            let x = next();
            block_on(time.call(dependency(x, tenth(x))))
        })
    });
    let count = fusebox_count("bench-10pct-count");
    g.bench_function("fusebox Breaker::call (count window)", |b| {
        b.iter(|| {
            let x = next();
            block_on(count.call(dependency(x, tenth(x))))
        })
    });
    let fs = failsafe_cb(OPEN_LONG);
    g.bench_function("failsafe", |b| {
        b.iter(|| {
            let x = next();
            block_on(fs.call(dependency(x, tenth(x))))
        })
    });
    let rc = recloser_cb(OPEN_LONG, 10);
    g.bench_function("recloser", |b| {
        b.iter(|| {
            let x = next();
            block_on(rc.call(dependency(x, tenth(x))))
        })
    });
    let mut tcb = tower_cb(tower_dep_tenth(), OPEN_LONG, 1);
    g.bench_function("tower-resilience circuit breaker", |b| {
        b.iter(|| block_on(tower_call(&mut tcb, next())))
    });
    let mut tcc = tower_cb_count(tower_dep_tenth());
    g.bench_function("tower-resilience circuit breaker (count window)", |b| {
        b.iter(|| block_on(tower_call(&mut tcc, next())))
    });
    let layer_breaker = fusebox_count("bench-10pct-layer");
    let mut layer = fusebox_layer(layer_breaker.clone(), tower_dep_tenth());
    g.bench_function("fusebox BreakerLayer (count window)", |b| {
        b.iter(|| block_on(tower_call(&mut layer, next())))
    });
    g.finish();
    assert_eq!(
        layer_breaker.state(),
        State::Closed,
        "10 % stays below 50 %"
    );
    assert!(
        !tcc.is_open(),
        "tower-resilience (count window) stayed closed"
    );
    assert_eq!(time.state(), State::Closed, "10 % stays below 50 %");
    assert_eq!(count.state(), State::Closed, "10 % stays below 50 %");
    assert!(fs.is_call_permitted(), "failsafe stayed closed");
    assert!(!tcb.is_open(), "tower-resilience stayed closed");
}
