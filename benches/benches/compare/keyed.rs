//! 10 000 keys: lookups, keyed calls, and a snapshot of them all.

use criterion::Criterion;
use fusebox_benches::{attr_keyed, block_on, dependency};
use fusebox_runtime::{Breaker, BreakerConfig};

use crate::peers::*;

const KEYS: u64 = 10_000;

fn keyed_template() -> BreakerConfig {
    Breaker::builder("bench-keyed")
        .max_keys(KEYS as u32)
        .config()
        .expect("valid settings")
}

pub(crate) fn keyed(c: &mut Criterion) {
    let rt = context();
    let _in_runtime = rt.enter();
    let template = keyed_template();
    let reg = fusebox_runtime::registry();
    for k in 0..KEYS {
        reg.keyed(&template, &k);
    }
    let mut g = c.benchmark_group("keyed_10k");
    let mut k = 0u64;
    g.bench_function("registry().keyed lookup", |b| {
        b.iter(|| {
            k = (k + 7919) % KEYS;
            reg.keyed(&template, &k)
        })
    });
    g.bench_function("registry().keyed lookup + Breaker::call", |b| {
        b.iter(|| {
            k = (k + 7919) % KEYS;
            let br = reg.keyed(&template, &k);
            block_on(br.call(dependency(k, false)))
        })
    });
    g.finish();

    // Before the keyed attribute below registers 10 000 more.
    let mut g = c.benchmark_group("metrics_10k");
    g.sample_size(10);
    g.bench_function("metrics() over 10 000 keyed breakers", |b| {
        b.iter(fusebox_runtime::metrics)
    });
    g.finish();
    let n = fusebox_runtime::metrics().breakers.len();
    assert!(
        (KEYS as usize..KEYS as usize + 100).contains(&n),
        "{n} breakers"
    );

    let mut g = c.benchmark_group("keyed_10k");
    for k in 0..KEYS {
        block_on(attr_keyed(k, k)).expect("healthy");
    }
    g.bench_function("#[breaker(key = shard)] call", |b| {
        b.iter(|| {
            k = (k + 7919) % KEYS;
            block_on(attr_keyed(k, k))
        })
    });
    g.finish();
}
