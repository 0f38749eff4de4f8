//! The rows of issue 28's table, each fusebox path beside its best peer, measured in one run:
//! single-thread (`block_on` on a current-thread runtime, as every other group) and contended
//! (4 tasks on 2 workers, each task its own handle to one shared breaker, as the issue's
//! harness). BENCHMARKS.md has the table and the instruction counts of the same paths.

use std::hint::black_box;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::Criterion;
use failsafe::futures::CircuitBreaker as _;
use fusebox_benches::settings::*;
use fusebox_benches::{
    attr_breaker, attr_keyed, attr_timed, block_on, dependency, dependency_timeout,
};
use fusebox_runtime::{Breaker, Bulkhead, State};

use crate::peers::*;

/// The issue's bulkhead row: a pool of 1024.
const BIG_POOL: usize = 1024;
/// Contended: tasks on the 2-worker runtime.
const TASKS: usize = 4;

/// `tasks` tasks on `rt`, each with its own `state`, `iters` calls each once all started;
/// the slowest task's time (as `contention.rs`'s `hammer!`).
macro_rules! tasks {
    ($rt:expr, $iters:expr, $state:expr, |$s:ident, $i:ident| $body:expr) => {{
        let iters = $iters;
        let ready = Arc::new(AtomicUsize::new(0));
        $rt.block_on(async {
            let handles: Vec<_> = (0..TASKS)
                .map(|_| {
                    let ready = ready.clone();
                    #[allow(unused_mut)]
                    let mut $s = $state;
                    tokio::spawn(async move {
                        ready.fetch_add(1, Ordering::SeqCst);
                        while ready.load(Ordering::SeqCst) < TASKS {
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

fn failsafe_consecutive() -> failsafe::StateMachine<
    failsafe::failure_policy::ConsecutiveFailures<failsafe::backoff::Constant>,
    (),
> {
    failsafe::Config::new()
        .failure_policy(failsafe::failure_policy::consecutive_failures(
            MIN_CALLS,
            failsafe::backoff::constant(OPEN_LONG),
        ))
        .build()
}

/// The same cases, built once per group.
struct Cases {
    time: Breaker,
    timed: Breaker,
    open: Breaker,
    /// Forced open (`force_open`), as an operator's switch or a quick benchmark opens one.
    forced: Breaker,
    bulkhead: Bulkhead,
    recloser: Arc<recloser::AsyncRecloser>,
    recloser_open: Arc<recloser::AsyncRecloser>,
    failsafe: Arc<
        failsafe::StateMachine<
            failsafe::failure_policy::ConsecutiveFailures<failsafe::backoff::Constant>,
            (),
        >,
    >,
    semaphore: Arc<tokio::sync::Semaphore>,
}

fn cases(tag: &str) -> Cases {
    let open = fusebox_time(&format!("bench-rows-open-{tag}"));
    trip(&open);
    assert_eq!(open.state(), State::Open);
    let recloser_open = recloser_cb(OPEN_LONG, 10);
    for i in 0..100 {
        let _ = block_on(recloser_open.call(dependency(i, true)));
    }
    assert!(block_on(recloser_open.call(dependency(1, false))).is_err());
    for k in 0..8 {
        block_on(attr_keyed(k, k)).expect("healthy");
    }
    Cases {
        time: fusebox_time(&format!("bench-rows-time-{tag}")),
        timed: Breaker::builder(format!("bench-rows-timed-{tag}"))
            .trip_p95(SLOW_BOUND)
            .timeout(TIMEOUT)
            .build_detached()
            .expect("valid"),
        open,
        forced: {
            let forced = fusebox_time(&format!("bench-rows-forced-{tag}"));
            forced.force_open();
            forced
        },
        bulkhead: Bulkhead::builder(format!("bench-rows-bulkhead-{tag}"))
            .pool(BIG_POOL)
            .build_detached()
            .expect("valid"),
        recloser: Arc::new(recloser_cb(OPEN_LONG, 10)),
        recloser_open: Arc::new(recloser_open),
        failsafe: Arc::new(failsafe_consecutive()),
        semaphore: Arc::new(tokio::sync::Semaphore::new(BIG_POOL)),
    }
}

pub(crate) fn issue_rows(c: &mut Criterion) {
    single(c);
    contended(c);
}

fn single(c: &mut Criterion) {
    let rt = context();
    let _in_runtime = rt.enter();
    let k = cases("single");
    let mut g = c.benchmark_group("issue_rows (1 thread)");
    let mut i = 0u64;
    let mut next = || {
        i += 1;
        i
    };
    g.bench_function("bare call", |b| {
        b.iter(|| block_on(dependency(next(), false)))
    });
    g.bench_function("closed: fusebox #[breaker] (static name)", |b| {
        b.iter(|| block_on(attr_breaker(next(), false)))
    });
    g.bench_function("closed: fusebox Breaker::call", |b| {
        b.iter(|| block_on(k.time.call(dependency(next(), false))))
    });
    g.bench_function("closed: recloser", |b| {
        b.iter(|| block_on(k.recloser.call(dependency(next(), false))))
    });
    g.bench_function("closed: failsafe consecutive", |b| {
        b.iter(|| block_on(k.failsafe.call(dependency(next(), false))))
    });
    g.bench_function("timed: fusebox #[breaker(trip_p95, timeout)]", |b| {
        b.iter(|| block_on(attr_timed(next())))
    });
    g.bench_function("timed: fusebox Breaker::call (trip_p95 + timeout)", |b| {
        b.iter(|| block_on(k.timed.call(dependency(next(), false))))
    });
    g.bench_function("timed: recloser around tokio::time::timeout", |b| {
        b.iter(|| block_on(k.recloser.call(dependency_timeout(next()))))
    });
    g.bench_function("open: fusebox Breaker::call refused", |b| {
        b.iter(|| block_on(k.open.call(dependency(next(), false))))
    });
    g.bench_function("open: recloser refused", |b| {
        b.iter(|| block_on(k.recloser_open.call(dependency(next(), false))))
    });
    g.bench_function("open: fusebox Breaker::call refused (forced open)", |b| {
        b.iter(|| block_on(k.forced.call(dependency(next(), false))))
    });
    g.bench_function("keyed: fusebox #[breaker(key = shard)], 8 shards", |b| {
        b.iter(|| {
            let x = next();
            block_on(attr_keyed(x % 8, x))
        })
    });
    g.bench_function("bulkhead: fusebox Bulkhead::call, pool 1024", |b| {
        b.iter(|| block_on(k.bulkhead.call(dependency(next(), false))))
    });
    g.bench_function("bulkhead: tokio Semaphore acquire + drop, 1024", |b| {
        b.iter(|| {
            block_on(async {
                let _p = k.semaphore.try_acquire().ok();
                dependency(next(), false).await
            })
        })
    });
    g.finish();
    assert_eq!(k.open.state(), State::Open);
    assert_eq!(k.forced.state(), State::ForcedOpen);
}

fn contended(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let k = {
        let _in_runtime = rt.enter();
        cases("tasks")
    };
    let mut g = c.benchmark_group("issue_rows (4 tasks, 2 workers)");
    g.bench_function("bare call", |b| {
        b.iter_custom(|n| tasks!(rt, n, (), |_s, i| dependency(i, false).await.is_ok()))
    });
    g.bench_function("closed: fusebox #[breaker] (static name)", |b| {
        b.iter_custom(|n| tasks!(rt, n, (), |_s, i| attr_breaker(i, false).await.is_ok()))
    });
    g.bench_function("closed: fusebox Breaker::call", |b| {
        b.iter_custom(|n| {
            tasks!(rt, n, k.time.clone(), |t, i| t
                .call(dependency(i, false))
                .await
                .is_ok())
        })
    });
    g.bench_function("closed: recloser", |b| {
        b.iter_custom(|n| {
            tasks!(rt, n, k.recloser.clone(), |r, i| r
                .call(dependency(i, false))
                .await
                .is_ok())
        })
    });
    g.bench_function("closed: failsafe consecutive", |b| {
        b.iter_custom(|n| {
            tasks!(rt, n, k.failsafe.clone(), |f, i| f
                .call(dependency(i, false))
                .await
                .is_ok())
        })
    });
    g.bench_function("timed: fusebox #[breaker(trip_p95, timeout)]", |b| {
        b.iter_custom(|n| tasks!(rt, n, (), |_s, i| attr_timed(i).await.is_ok()))
    });
    g.bench_function("timed: fusebox Breaker::call (trip_p95 + timeout)", |b| {
        b.iter_custom(|n| {
            tasks!(rt, n, k.timed.clone(), |t, i| t
                .call(dependency(i, false))
                .await
                .is_ok())
        })
    });
    g.bench_function("timed: recloser around tokio::time::timeout", |b| {
        b.iter_custom(|n| {
            tasks!(rt, n, k.recloser.clone(), |r, i| r
                .call(dependency_timeout(i))
                .await
                .is_ok())
        })
    });
    g.bench_function("open: fusebox Breaker::call refused", |b| {
        b.iter_custom(|n| {
            tasks!(rt, n, k.open.clone(), |t, i| t
                .call(dependency(i, false))
                .await
                .is_err())
        })
    });
    g.bench_function("open: recloser refused", |b| {
        b.iter_custom(|n| {
            tasks!(rt, n, k.recloser_open.clone(), |r, i| r
                .call(dependency(i, false))
                .await
                .is_err())
        })
    });
    g.bench_function("open: fusebox Breaker::call refused (forced open)", |b| {
        b.iter_custom(|n| {
            tasks!(rt, n, k.forced.clone(), |t, i| t
                .call(dependency(i, false))
                .await
                .is_err())
        })
    });
    g.bench_function("keyed: fusebox #[breaker(key = shard)], 8 shards", |b| {
        b.iter_custom(|n| tasks!(rt, n, (), |_s, i| attr_keyed(i % 8, i).await.is_ok()))
    });
    g.bench_function("bulkhead: fusebox Bulkhead::call, pool 1024", |b| {
        b.iter_custom(|n| {
            tasks!(rt, n, k.bulkhead.clone(), |h, i| h
                .call(dependency(i, false))
                .await
                .is_ok())
        })
    });
    g.bench_function("bulkhead: tokio Semaphore acquire + drop, 1024", |b| {
        b.iter_custom(|n| {
            tasks!(rt, n, k.semaphore.clone(), |s, i| {
                let _p = s.try_acquire().ok();
                dependency(i, false).await.is_ok()
            })
        })
    });
    g.finish();
    assert_eq!(k.open.state(), State::Open);
    assert_eq!(k.forced.state(), State::ForcedOpen);
}
