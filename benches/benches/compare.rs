//! fusebox against the bare call and the other Rust resilience crates, in one run.
//!
//! `cargo bench -p fusebox-benches --bench compare` (add `-- --quick` for a fast pass).
//! Each group compares like with like; BENCHMARKS.md explains the settings.

use std::future::Future;
use std::hint::black_box;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};
use failsafe::futures::CircuitBreaker as _;
use fusebox_benches::settings::*;
use fusebox_benches::{
    attr_adaptive, attr_both, attr_breaker, attr_bulkhead, attr_keyed, attr_timed, block_on,
    dependency, dependency_timeout, tenth, Boom,
};
use fusebox_runtime::{Breaker, BreakerConfig, Bulkhead, State};
use tower::{Service, ServiceExt};

// ---- the breakers under test, each configured like fusebox's defaults ----

fn fusebox_time(name: &str) -> Breaker {
    Breaker::builder(name)
        .failure_rate(FAILURE_RATE)
        .window(WINDOW)
        .min_calls(MIN_CALLS)
        .open_for(OPEN_LONG)
        .build_detached()
        .expect("valid settings")
}

fn fusebox_count(name: &str) -> Breaker {
    Breaker::builder(name)
        .failure_rate(FAILURE_RATE)
        .window_calls(WINDOW_CALLS)
        .min_calls(MIN_CALLS)
        .open_for(OPEN_LONG)
        .build_detached()
        .expect("valid settings")
}

type Failsafe = failsafe::StateMachine<
    failsafe::failure_policy::SuccessRateOverTimeWindow<failsafe::backoff::Constant>,
    (),
>;

fn failsafe_cb(open_for: Duration) -> Failsafe {
    let policy = failsafe::failure_policy::success_rate_over_time_window(
        1.0 - f64::from(FAILURE_RATE) / 100.0,
        MIN_CALLS,
        WINDOW,
        failsafe::backoff::constant(open_for),
    );
    failsafe::Config::new().failure_policy(policy).build()
}

fn recloser_cb(open_for: Duration, half_open_len: usize) -> recloser::AsyncRecloser {
    recloser::AsyncRecloser::from(
        recloser::Recloser::custom()
            .error_rate(f32::from(FAILURE_RATE) / 100.0)
            .closed_len(WINDOW_CALLS as usize)
            .half_open_len(half_open_len)
            .open_wait(open_for)
            .build(),
    )
}

type TowerDep = tower::util::ServiceFn<fn(u64) -> DepFut>;
type DepFut = std::pin::Pin<Box<dyn Future<Output = Result<u64, Boom>> + Send>>;

/// The dependency as a tower service. Boxing is what tower-resilience does to every call
/// anyway, and the bare tower case below pays it too.
fn tower_dep() -> TowerDep {
    fn call(x: u64) -> DepFut {
        Box::pin(dependency(x, x == u64::MAX))
    }
    tower::service_fn(call as fn(u64) -> DepFut)
}

/// A tower service whose calls fail every tenth time (by request value).
fn tower_dep_tenth() -> TowerDep {
    fn call(x: u64) -> DepFut {
        Box::pin(dependency(x, tenth(x)))
    }
    tower::service_fn(call as fn(u64) -> DepFut)
}

type TowerCb = tower_resilience::circuitbreaker::CircuitBreaker<
    TowerDep,
    tower_resilience::circuitbreaker::DefaultClassifier,
>;

fn tower_cb(dep: TowerDep, open_for: Duration, half_open_calls: usize) -> TowerCb {
    use tower_resilience::circuitbreaker::{CircuitBreakerLayer, SlidingWindowType};
    CircuitBreakerLayer::builder()
        .failure_rate_threshold(f64::from(FAILURE_RATE) / 100.0)
        .sliding_window_type(SlidingWindowType::TimeBased)
        .sliding_window_duration(WINDOW)
        .minimum_number_of_calls(MIN_CALLS as usize)
        .wait_duration_in_open(open_for)
        .permitted_calls_in_half_open(half_open_calls)
        .build()
        .expect("valid settings")
        .layer_fn(dep)
}

/// tower-resilience with a count window of the last 20 calls, as `fusebox_count`: its time
/// window scans every call record of the window on each call, so at benchmark rates it
/// measures the window's length more than the breaker.
fn tower_cb_count(dep: TowerDep) -> TowerCb {
    use tower_resilience::circuitbreaker::{CircuitBreakerLayer, SlidingWindowType};
    CircuitBreakerLayer::builder()
        .failure_rate_threshold(f64::from(FAILURE_RATE) / 100.0)
        .sliding_window_type(SlidingWindowType::CountBased)
        .sliding_window_size(WINDOW_CALLS as usize)
        .minimum_number_of_calls(MIN_CALLS as usize)
        .wait_duration_in_open(OPEN_LONG)
        .build()
        .expect("valid settings")
        .layer_fn(dep)
}

/// fusebox's `BreakerLayer` over the same boxed tower dependency, with the settings of
/// `fusebox_time` / `fusebox_count`.
fn fusebox_layer(b: Breaker, dep: TowerDep) -> fusebox_runtime::tower::BreakerService<TowerDep> {
    tower::Layer::layer(&fusebox_runtime::tower::BreakerLayer::from_breaker(b), dep)
}

async fn tower_call<S>(svc: &mut S, x: u64) -> bool
where
    S: Service<u64, Response = u64>,
{
    match svc.ready().await {
        Ok(s) => s.call(x).await.is_ok(),
        Err(_) => false,
    }
}

/// A current-thread runtime for the single-thread groups to enter: trial calls arm a timer,
/// which needs a time driver even though no benchmarked call ever waits on one.
fn context() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("runtime")
}

/// Fails `b` until it opens.
fn trip(b: &Breaker) {
    for i in 0..1_000 {
        let _ = block_on(b.call(dependency(i, true)));
        if b.state() != State::Closed {
            return;
        }
    }
    panic!("{} did not open", b.name());
}

// ---- scenarios ----

fn closed_healthy(c: &mut Criterion) {
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
                Some(&private),
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
fn closed_timed(c: &mut Criterion) {
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

fn closed_ten_percent_failures(c: &mut Criterion) {
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

fn open_rejection(c: &mut Criterion) {
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

fn half_open_admission(c: &mut Criterion) {
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

fn bulkhead(c: &mut Criterion) {
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

/// Runs `tasks` tasks on a 2-worker runtime, each with its own `state` (a handle cloned once)
/// making `iters` calls once all have started; evaluates to the slowest task's wall time, i.e.
/// the time per call as each task sees it. A macro so each body is a concrete, `Send` future.
macro_rules! hammer {
    ($rt:expr, $tasks:expr, $iters:expr, $state:expr, |$s:ident, $i:ident| $body:expr) => {{
        let (tasks, iters) = ($tasks, $iters);
        let ready = Arc::new(AtomicUsize::new(0));
        $rt.block_on(async {
            let handles: Vec<_> = (0..tasks)
                .map(|_| {
                    let ready = ready.clone();
                    #[allow(unused_mut)]
                    let mut $s = $state;
                    tokio::spawn(async move {
                        ready.fetch_add(1, Ordering::SeqCst);
                        while ready.load(Ordering::SeqCst) < tasks {
                            tokio::task::yield_now().await;
                        }
                        let start = Instant::now();
                        for $i in 0..iters {
                            black_box($body);
                        }
                        start.elapsed()
                    })
                })
                .collect();
            let mut worst = Duration::ZERO;
            for h in handles {
                worst = worst.max(h.await.expect("task ran"));
            }
            worst
        })
    }};
}

fn contention(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let time = fusebox_time("bench-contended-time");
    let count = fusebox_count("bench-contended-count");
    let fs = Arc::new(failsafe_cb(OPEN_LONG));
    let rc = Arc::new(recloser_cb(OPEN_LONG, 10));
    // tower-resilience's time window (tens of µs a call, see closed_healthy) is left out here.
    let tcc = tower_cb_count(tower_dep());
    let bh = Bulkhead::builder("bench-contended-bulkhead")
        .pool(POOL)
        .build_detached()
        .expect("valid settings");
    let sem = Arc::new(tokio::sync::Semaphore::new(POOL));
    // One group, 1 and 2 tasks of each case side by side, so that both figures of a ratio
    // are taken under the same machine load.
    let mut g = c.benchmark_group("contention");
    let id = |case: &str, tasks: usize| {
        format!("{case} / {tasks} task{}", if tasks == 1 { "" } else { "s" })
    };
    for tasks in [1usize, 2] {
        g.bench_function(id("bare call", tasks), |b| {
            b.iter_custom(|n| hammer!(rt, tasks, n, (), |_s, i| dependency(i, false).await.is_ok()))
        });
    }
    for tasks in [1usize, 2] {
        g.bench_function(id("fusebox Breaker::call (time window)", tasks), |b| {
            b.iter_custom(|n| {
                hammer!(rt, tasks, n, time.clone(), |t, i| t
                    .call(dependency(i, false))
                    .await
                    .is_ok())
            })
        });
    }
    for tasks in [1usize, 2] {
        g.bench_function(id("fusebox Breaker::call (count window)", tasks), |b| {
            b.iter_custom(|n| {
                hammer!(rt, tasks, n, count.clone(), |t, i| t
                    .call(dependency(i, false))
                    .await
                    .is_ok())
            })
        });
    }
    for tasks in [1usize, 2] {
        g.bench_function(id("fusebox Bulkhead::call", tasks), |b| {
            b.iter_custom(|n| {
                hammer!(rt, tasks, n, bh.clone(), |h, i| h
                    .call(dependency(i, false))
                    .await
                    .is_ok())
            })
        });
    }
    for tasks in [1usize, 2] {
        g.bench_function(id("tokio Semaphore::try_acquire + call", tasks), |b| {
            b.iter_custom(|n| {
                hammer!(rt, tasks, n, sem.clone(), |s, i| {
                    let _p = s.try_acquire().ok();
                    dependency(i, false).await.is_ok()
                })
            })
        });
    }
    for tasks in [1usize, 2] {
        g.bench_function(id("failsafe", tasks), |b| {
            b.iter_custom(|n| {
                hammer!(rt, tasks, n, fs.clone(), |f, i| f
                    .call(dependency(i, false))
                    .await
                    .is_ok())
            })
        });
    }
    for tasks in [1usize, 2] {
        g.bench_function(id("recloser", tasks), |b| {
            b.iter_custom(|n| {
                hammer!(rt, tasks, n, rc.clone(), |r, i| r
                    .call(dependency(i, false))
                    .await
                    .is_ok())
            })
        });
    }
    for tasks in [1usize, 2] {
        g.bench_function(
            id("tower-resilience circuit breaker (count window)", tasks),
            |b| {
                b.iter_custom(|n| {
                    hammer!(rt, tasks, n, tcc.clone(), |t, i| match t.ready().await {
                        Ok(s) => s.call(i).await.is_ok(),
                        Err(_) => false,
                    })
                })
            },
        );
    }
    g.finish();
}

const KEYS: u64 = 10_000;

fn keyed_template() -> BreakerConfig {
    Breaker::builder("bench-keyed")
        .max_keys(KEYS as u32)
        .config()
        .expect("valid settings")
}

fn keyed(c: &mut Criterion) {
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

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    targets = closed_healthy, closed_timed, closed_ten_percent_failures, open_rejection,
        half_open_admission, bulkhead, contention, keyed
}
criterion_main!(benches);
