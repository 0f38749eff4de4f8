//! Two tasks on two worker threads calling one breaker or bulkhead.

use std::hint::black_box;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::Criterion;
use failsafe::futures::CircuitBreaker as _;
use fusebox_benches::dependency;
use fusebox_benches::settings::*;
use fusebox_runtime::Bulkhead;
use tower::{Service, ServiceExt};

use crate::peers::*;

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

pub(crate) fn contention(c: &mut Criterion) {
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
