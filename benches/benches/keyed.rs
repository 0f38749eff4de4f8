//! Keyed breakers (issue 14's keyed row, issue 18 item 7): a `key = shard` call beside the
//! static-name call, the registry lookup of hot keys alone and beside a thread pouring new keys
//! in, and the key hash (SipHash, which the keyed map uses, against foldhash).

use std::hash::BuildHasher;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use fusebox_benches::{attr_breaker, attr_keyed, block_on};
use fusebox_runtime::{registry, Breaker};

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("runtime")
}

fn attribute(c: &mut Criterion) {
    let rt = runtime();
    let _in = rt.enter();
    let mut g = c.benchmark_group("keyed_8");
    let mut i = 0u64;
    g.bench_function("#[breaker] static name call", |b| {
        b.iter(|| {
            i += 1;
            block_on(attr_breaker(i, false))
        })
    });
    for k in 0..8 {
        block_on(attr_keyed(k, k)).expect("healthy");
    }
    g.bench_function("#[breaker(key = shard)] call, 8 keys", |b| {
        b.iter(|| {
            i += 1;
            block_on(attr_keyed(i % 8, i))
        })
    });
    g.finish();
}

fn lookups(c: &mut Criterion) {
    let rt = runtime();
    let _in = rt.enter();
    let template = Breaker::builder("bench-stream")
        .max_keys(20_000)
        .config()
        .expect("valid");
    for k in 0..8u64 {
        registry().keyed(&template, &k).force_open(); // busy: never evicted
    }
    let mut g = c.benchmark_group("keyed_lookup");
    let mut i = 0u64;
    g.bench_function("8 hot keys", |b| {
        b.iter(|| {
            i += 1;
            registry().keyed(&template, &(i % 8))
        })
    });
    // A second thread looks up a new key each time: inserts until max_keys, then the
    // overflow route with its periodic sweep; the hot keys' lookups must not wait on it.
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        let (template, stop) = (&template, &stop);
        s.spawn(move || {
            let mut n = 1_000_000u64;
            while !stop.load(Relaxed) {
                n += 1;
                registry().keyed(template, &n);
            }
        });
        g.bench_function("8 hot keys beside a stream of new keys", |b| {
            b.iter(|| {
                i += 1;
                registry().keyed(template, &(i % 8))
            })
        });
        stop.store(true, Relaxed);
    });
    g.finish();
}

fn hashes(c: &mut Criterion) {
    let key = "api-eu-3.example.com";
    let sip = std::collections::hash_map::RandomState::new();
    let fold = foldhash::fast::RandomState::default();
    let mut g = c.benchmark_group("key_hash");
    g.bench_function("SipHash-1-3 (std RandomState), 20-byte key", |b| {
        b.iter(|| sip.hash_one(std::hint::black_box(key)))
    });
    g.bench_function("foldhash, 20-byte key", |b| {
        b.iter(|| fold.hash_one(std::hint::black_box(key)))
    });
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(2));
    targets = attribute, lookups, hashes
}
criterion_main!(benches);
