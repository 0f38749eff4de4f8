//! Bulkheads against tokio's semaphore and tower's concurrency limit.

use criterion::Criterion;
use fusebox_benches::settings::*;
use fusebox_benches::{attr_adaptive, attr_both, attr_bulkhead, block_on, dependency};
use fusebox_runtime::Bulkhead;

use crate::peers::*;

pub(crate) fn bulkhead(c: &mut Criterion) {
    let rt = context();
    let _in_runtime = rt.enter();
    let mut g = c.benchmark_group("bulkhead");
    let mut i = 0u64;
    let mut next = move || {
        i = i.wrapping_add(1);
        i
    };
    let sem = tokio::sync::Semaphore::new(POOL);
    g.bench_function("tokio Semaphore::try_acquire + call", |b| {
        b.iter(|| {
            block_on(async {
                let _p = sem.try_acquire().ok();
                dependency(next(), false).await
            })
        })
    });
    let bh = Bulkhead::builder("bench-bulkhead")
        .pool(POOL)
        .build_detached()
        .expect("valid settings");
    g.bench_function("fusebox Bulkhead::call", |b| {
        b.iter(|| block_on(bh.call(dependency(next(), false))))
    });
    let adaptive = Bulkhead::builder("bench-adaptive")
        .adaptive()
        .pool(POOL)
        .max_pool(POOL)
        .build_detached()
        .expect("valid settings");
    g.bench_function("fusebox adaptive Bulkhead::call", |b| {
        b.iter(|| block_on(adaptive.call(dependency(next(), false))))
    });
    g.bench_function("fusebox #[bulkhead(limit = \"adaptive\")]", |b| {
        b.iter(|| block_on(attr_adaptive(next())))
    });
    g.bench_function("fusebox Bulkhead::acquire + call", |b| {
        b.iter(|| {
            block_on(async {
                let _p = bh.acquire().await;
                dependency(next(), false).await
            })
        })
    });
    let pair = fusebox_time("bench-breaker-bulkhead");
    g.bench_function("fusebox Breaker::call_in (breaker + bulkhead)", |b| {
        b.iter(|| block_on(pair.call_in(&bh, dependency(next(), false))))
    });
    g.bench_function("fusebox #[bulkhead]", |b| {
        b.iter(|| block_on(attr_bulkhead(next())))
    });
    g.bench_function("fusebox #[breaker] + #[bulkhead]", |b| {
        b.iter(|| block_on(attr_both(next())))
    });
    let mut limit = tower::limit::ConcurrencyLimit::new(tower_dep(), POOL);
    g.bench_function("tower ConcurrencyLimit", |b| {
        b.iter(|| block_on(tower_call(&mut limit, next())))
    });
    let mut bare_tower = tower_dep();
    g.bench_function("bare tower service (boxed future)", |b| {
        b.iter(|| block_on(tower_call(&mut bare_tower, next())))
    });
    let layer = tower_resilience::bulkhead::BulkheadLayer::builder()
        .max_concurrent_calls(POOL)
        .build()
        .expect("valid settings");
    let mut trb = tower::Layer::layer(&layer, tower_dep());
    g.bench_function("tower-resilience bulkhead", |b| {
        b.iter(|| block_on(tower_call(&mut trb, next())))
    });
    let bulkhead_layer = fusebox_runtime::tower::BulkheadLayer::from_bulkhead(bh.clone());
    let mut fbl = tower::Layer::layer(&bulkhead_layer, tower_dep());
    g.bench_function("fusebox BulkheadLayer", |b| {
        b.iter(|| block_on(tower_call(&mut fbl, next())))
    });
    let both =
        fusebox_runtime::tower::BreakerLayer::from_breaker(pair.clone()).bulkhead(bh.clone());
    let mut fboth = tower::Layer::layer(&both, tower_dep());
    g.bench_function("fusebox BreakerLayer + bulkhead", |b| {
        b.iter(|| block_on(tower_call(&mut fboth, next())))
    });
    g.finish();
}
