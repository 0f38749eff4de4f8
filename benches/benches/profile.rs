//! A fixed number of calls of one case, for instruction counts under callgrind:
//! `valgrind --tool=callgrind target/release/deps/profile-* <case> [calls]`.
//! Cases: bare, time, count, bulkhead, semaphore, keyed, open, attr, attr_bulkhead, attr_keyed,
//! failsafe, recloser, recloser_open, attr_keyed8, attr_keyed_host8, attr_keyed_display8, timed, attr_timed, timeout, recloser_timeout, tripped, tower_bare,
//! concurrency_limit, bulkhead_layer, breaker_layer, tower_resilience, attr_no_retry, attr_retry,
//! attr_retry_total, builder_retry (`time` under `Retry::run_with_breaker`), metrics (one snapshot of
//! the 10 000 keyed breakers: run it for 1 and 3 calls, not 1 000). Run by `cargo bench` it
//! does a short pass.

use std::hint::black_box;

use failsafe::futures::CircuitBreaker as _;
use fusebox_benches::{
    attr_breaker, attr_bulkhead, attr_keyed, attr_keyed_display, attr_keyed_host, attr_timed,
    block_on, dependency, dependency_timeout, retry, settings::*, Tenant,
};

/// The hosts of `attr_keyed_host8`.
const HOSTS: [&str; 8] = [
    "db-0.internal:5432",
    "db-1.internal:5432",
    "db-2.internal:5432",
    "db-3.internal:5432",
    "db-4.internal:5432",
    "db-5.internal:5432",
    "db-6.internal:5432",
    "db-7.internal:5432",
];
use fusebox_runtime::{registry, Breaker, Bulkhead};
use tower::{Layer, Service, ServiceExt};

type DepFut =
    std::pin::Pin<Box<dyn std::future::Future<Output = Result<u64, fusebox_benches::Boom>> + Send>>;

/// The dependency as a tower service with a boxed future, as in `compare`.
fn tower_dep() -> tower::util::ServiceFn<fn(u64) -> DepFut> {
    fn call(x: u64) -> DepFut {
        Box::pin(dependency(x, false))
    }
    tower::service_fn(call as fn(u64) -> DepFut)
}

fn tower_call<S: Service<u64, Response = u64>>(svc: &mut S, x: u64) -> bool {
    block_on(async {
        match svc.ready().await {
            Ok(s) => s.call(x).await.is_ok(),
            Err(_) => false,
        }
    })
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let case = args.first().map(String::as_str).unwrap_or("time");
    let n: u64 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(1_000);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let _in_runtime = rt.enter();
    let time = Breaker::builder("profile-time").build_detached().unwrap();
    let count = Breaker::builder("profile-count")
        .window_calls(20)
        .build_detached()
        .unwrap();
    let open = Breaker::builder("profile-open").build_detached().unwrap();
    open.force_open();
    let timed = Breaker::builder("profile-timed")
        .trip_p95(SLOW_BOUND)
        .timeout(TIMEOUT)
        .build_detached()
        .unwrap();
    let tripped = Breaker::builder("profile-tripped")
        .window_calls(WINDOW_CALLS)
        .open_for(OPEN_LONG)
        .build_detached()
        .unwrap();
    for i in 0..100 {
        let _ = block_on(tripped.call(dependency(i, true)));
    }
    assert_eq!(tripped.state(), fusebox_runtime::State::Open);
    let bh = Bulkhead::builder("profile-bulkhead")
        .pool(64)
        .build_detached()
        .unwrap();
    let sem = tokio::sync::Semaphore::new(64);
    let retry = fusebox_runtime::retry::Retry::builder("profile-time")
        .build()
        .unwrap();
    let template = Breaker::builder("profile-keyed").config().unwrap();
    for k in 0..10_000u64 {
        registry().keyed(&template, &k);
        let _ = block_on(attr_keyed(k, k));
    }
    let fs = failsafe::Config::new()
        .failure_policy(failsafe::failure_policy::success_rate_over_time_window(
            0.5,
            MIN_CALLS,
            WINDOW,
            failsafe::backoff::constant(OPEN_LONG),
        ))
        .build();
    let rc = recloser::AsyncRecloser::from(
        recloser::Recloser::custom()
            .error_rate(0.5)
            .closed_len(WINDOW_CALLS as usize)
            .open_wait(OPEN_LONG)
            .build(),
    );
    // recloser tripped, for the open refusal beside fusebox's `tripped`.
    let rc_open = recloser::AsyncRecloser::from(
        recloser::Recloser::custom()
            .error_rate(0.5)
            .closed_len(WINDOW_CALLS as usize)
            .half_open_len(10)
            .open_wait(OPEN_LONG)
            .build(),
    );
    for i in 0..100 {
        let _ = block_on(rc_open.call(dependency(i, true)));
    }
    assert!(block_on(rc_open.call(dependency(1, false))).is_err());
    let mut tower_bare = tower_dep();
    let mut limit = tower::limit::ConcurrencyLimit::new(tower_dep(), 64);
    let mut bulkhead_layer =
        fusebox_runtime::tower::BulkheadLayer::from_bulkhead(bh.clone()).layer(tower_dep());
    let mut breaker_layer =
        fusebox_runtime::tower::BreakerLayer::from_breaker(count.clone()).layer(tower_dep());
    let mut tower_resilience = tower_resilience::circuitbreaker::CircuitBreakerLayer::builder()
        .sliding_window_type(tower_resilience::circuitbreaker::SlidingWindowType::CountBased)
        .sliding_window_size(WINDOW_CALLS as usize)
        .build()
        .unwrap()
        .layer_fn(tower_dep());
    for i in 0..n {
        match case {
            "tower_bare" => drop(black_box(tower_call(&mut tower_bare, i))),
            "concurrency_limit" => drop(black_box(tower_call(&mut limit, i))),
            "bulkhead_layer" => drop(black_box(tower_call(&mut bulkhead_layer, i))),
            "breaker_layer" => drop(black_box(tower_call(&mut breaker_layer, i))),
            "tower_resilience" => drop(black_box(tower_call(&mut tower_resilience, i))),
            "bare" => drop(black_box(block_on(dependency(i, false)))),
            "time" => drop(black_box(block_on(time.call(dependency(i, false))))),
            "count" => drop(black_box(block_on(count.call(dependency(i, false))))),
            "timed" => drop(black_box(block_on(timed.call(dependency(i, false))))),
            "attr_timed" => drop(black_box(block_on(attr_timed(i)))),
            "timeout" => drop(black_box(block_on(dependency_timeout(i)))),
            "recloser_timeout" => drop(black_box(block_on(rc.call(dependency_timeout(i))))),
            "tripped" => drop(black_box(block_on(tripped.call(dependency(i, false))))),
            "open" => drop(black_box(block_on(open.call(dependency(i, false))))),
            "bulkhead" => drop(black_box(block_on(bh.call(dependency(i, false))))),
            "semaphore" => drop(black_box(block_on(async {
                let _p = sem.try_acquire().ok();
                dependency(i, false).await
            }))),
            "keyed" => drop(black_box(registry().keyed(&template, &(i % 10_000)))),
            "attr" => drop(black_box(block_on(attr_breaker(i, false)))),
            "attr_bulkhead" => drop(black_box(block_on(attr_bulkhead(i)))),
            "attr_keyed" => drop(black_box(block_on(attr_keyed(i % 10_000, i)))),
            // Issue 30: a first success with `#[retry]` (and a deadline), and its baseline.
            "attr_no_retry" => drop(black_box(block_on(retry::attr_no_retry(i)))),
            "attr_retry" => drop(black_box(block_on(retry::attr_retry(i)))),
            "attr_retry_total" => drop(black_box(block_on(retry::attr_retry_total(i)))),
            "builder_retry" => drop(black_box(block_on(retry.run_with_breaker(
                &time,
                || time.call(dependency(i, false)),
                |_| true,
                |_| None,
            )))),
            // The keyed row: 8 shards, all hot.
            "attr_keyed8" => drop(black_box(block_on(attr_keyed(i % 8, i)))),
            // The same with 8 host names, and with 8 keys only `Display` (formatted per call).
            "attr_keyed_host8" => drop(black_box(block_on(attr_keyed_host(
                HOSTS[(i % 8) as usize],
                i,
            )))),
            "attr_keyed_display8" => {
                let _ = black_box(block_on(attr_keyed_display(Tenant(i % 8), i)));
            }
            "recloser_open" => drop(black_box(block_on(rc_open.call(dependency(i, false))))),
            "failsafe" => drop(black_box(block_on(fs.call(dependency(i, false))))),
            "recloser" => drop(black_box(block_on(rc.call(dependency(i, false))))),
            // One snapshot of every breaker (the 10 000 keys above and a few more).
            "metrics" => drop(black_box(fusebox_runtime::metrics())),
            other => panic!("unknown case {other}"),
        }
    }
}
