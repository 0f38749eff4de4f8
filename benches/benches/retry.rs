//! Issue 30's benchmark: a call that succeeds at once costs at most 10 ns more with `#[retry]`
//! than without. `cargo bench -p fusebox-benches --bench retry`.
//!
//! Both sides are the same dependency behind a `#[breaker]` of the default settings (each its
//! own name), driven by the same spin-polling `block_on`, so the difference is the retry's
//! first-attempt path: the policy's `OnceCell`, one relaxed add on the name's budget, the
//! attempt closure. The builder API's pair (`Breaker::call` against `Retry::run_with_breaker`
//! around it) is beside them. The instruction counts of the same pair come from
//! `benches/callgrind.sh attr_no_retry attr_retry`.

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, Criterion};
use fusebox_benches::retry::{attr_no_retry, attr_retry, attr_retry_total};
use fusebox_benches::{block_on, dependency};
use fusebox_runtime::retry::Retry;
use fusebox_runtime::Breaker;

fn first_success(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let _in_runtime = rt.enter();
    let mut g = c.benchmark_group("retry_first_success");
    let mut i = 0u64;
    g.bench_function("attr_breaker", |b| {
        b.iter(|| {
            i += 1;
            black_box(block_on(attr_no_retry(black_box(i))))
        })
    });
    g.bench_function("attr_retry_breaker", |b| {
        b.iter(|| {
            i += 1;
            black_box(block_on(attr_retry(black_box(i))))
        })
    });
    g.bench_function("attr_retry_total_breaker", |b| {
        b.iter(|| {
            i += 1;
            black_box(block_on(attr_retry_total(black_box(i))))
        })
    });
    let breaker = Breaker::builder("bench-retry-builder")
        .build_detached()
        .unwrap();
    let retry = Retry::builder("bench-retry-builder").build().unwrap();
    g.bench_function("builder_breaker", |b| {
        b.iter(|| {
            i += 1;
            black_box(block_on(breaker.call(dependency(black_box(i), false))))
        })
    });
    g.bench_function("builder_retry_breaker", |b| {
        b.iter(|| {
            i += 1;
            let x = black_box(i);
            black_box(block_on(retry.run_with_breaker(
                &breaker,
                || breaker.call(dependency(x, false)),
                |_| true,
                |_| None,
            )))
        })
    });
    g.finish();
}

/// The same pair measured interleaved, round after round, keeping each side's fastest round:
/// on a machine shared with other work a slow spell hits both sides alike, and the minimum
/// is the cost without interference. Printed before criterion's own figures.
fn interleaved() {
    const CALLS: u32 = 200_000;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let _in_runtime = rt.enter();
    let round = |with_retry: bool| {
        let t = std::time::Instant::now();
        for i in 0..CALLS {
            let x = black_box(u64::from(i));
            if with_retry {
                black_box(block_on(attr_retry(x))).ok();
            } else {
                black_box(block_on(attr_no_retry(x))).ok();
            }
        }
        t.elapsed().as_secs_f64() * 1e9 / f64::from(CALLS)
    };
    let (mut base, mut with) = (f64::MAX, f64::MAX);
    for _ in 0..30 {
        base = base.min(round(false));
        with = with.min(round(true));
    }
    println!(
        "retry_first_success interleaved (fastest of 30 rounds of {CALLS}): #[breaker] {base:.1} ns, \
         #[retry] #[breaker] {with:.1} ns, difference {:.1} ns",
        with - base
    );
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    targets = first_success
}

fn main() {
    interleaved();
    benches();
    Criterion::default().configure_from_args().final_summary();
}
