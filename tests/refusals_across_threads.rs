//! Refusals counted exactly through the public API, whichever threads made them: many tasks on
//! many workers, threads that exit before the read, readers during the refusals, more breakers
//! than a thread's entries, breakers dropped and made again (issue 28: refusals are counted on
//! the refusing thread's own line, `runtime/src/breaker/counters/`). Written by a review as a
//! user would; each test reads only what a user reads.
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::*};
use std::sync::Arc;
use std::time::Duration;

use fusebox::{registry, Breaker, Error, Rejection, State};

type R = Result<(), Error<&'static str>>;

fn hour() -> Duration {
    Duration::from_secs(3600)
}

/// A detached breaker, forced open.
fn forced(name: &str) -> Breaker {
    let b = Breaker::builder(name).build_detached().unwrap();
    b.force_open();
    b
}

/// A detached breaker opened by two failures (open for an hour).
async fn opened(name: &str) -> Breaker {
    let b = Breaker::builder(name)
        .window_calls(2)
        .min_calls(2)
        .open_for(hour())
        .build_detached()
        .unwrap();
    for _ in 0..2 {
        let _: R = b.call(async { Err("boom") }).await;
    }
    assert_eq!(b.state(), State::Open);
    b
}

async fn refuse(b: &Breaker) -> Rejection {
    let r: R = b.call(async { Ok(()) }).await;
    match r {
        Err(Error::Rejected(r)) => r,
        other => panic!("not refused: {other:?}"),
    }
}

fn rt(workers: usize) -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .enable_all()
        .build()
        .unwrap()
}

fn local_rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn many_tasks_on_many_workers_counted_exactly() {
    for workers in [2, 4, 8] {
        let rt = rt(workers);
        rt.block_on(async {
            let open = opened(&format!("mt-open-{workers}")).await;
            let forced = forced(&format!("mt-forced-{workers}"));
            let mut hs = Vec::new();
            for i in 0..2000u64 {
                let (o, f) = (open.clone(), forced.clone());
                hs.push(tokio::spawn(async move {
                    let r = refuse(if i % 3 == 0 { &f } else { &o }).await;
                    tokio::task::yield_now().await;
                    r
                }));
            }
            let (mut n_open, mut n_forced) = (0u64, 0u64);
            for h in hs {
                match h.await.unwrap() {
                    Rejection::Open {
                        state: State::Open, ..
                    } => n_open += 1,
                    Rejection::Open {
                        state: State::ForcedOpen,
                        ..
                    } => n_forced += 1,
                    r => panic!("{r:?}"),
                }
            }
            let m = open.metrics();
            assert_eq!((m.rejected, m.rejected_by_reason.open), (n_open, n_open));
            assert_eq!(m.calls, n_open + 2, "two failures + refusals");
            assert_eq!(m.failed, 2);
            let m = forced.metrics();
            assert_eq!(
                (
                    m.rejected,
                    m.rejected_by_reason.forced_open,
                    m.rejected_by_reason.open
                ),
                (n_forced, n_forced, 0)
            );
            assert_eq!(m.calls, n_forced);
        });
        drop(rt); // workers exit; slots go to the free list
    }
}

#[test]
fn counts_survive_worker_exit_and_blocking_threads_and_std_threads() {
    let b = forced("exit-survive");
    let rt = rt(4);
    let mut expected = 0u64;
    rt.block_on(async {
        let mut hs = Vec::new();
        for _ in 0..500 {
            let b = b.clone();
            hs.push(tokio::spawn(async move { refuse(&b).await }));
        }
        for _ in 0..64 {
            let b = b.clone();
            hs.push(tokio::task::spawn_blocking(move || {
                tokio::runtime::Handle::current().block_on(refuse(&b))
            }));
        }
        for h in hs {
            h.await.unwrap();
        }
    });
    expected += 564;
    assert_eq!(b.metrics().rejected, expected);
    rt.shutdown_timeout(Duration::from_secs(5));
    assert_eq!(
        b.metrics().rejected,
        expected,
        "after the runtime's threads exit"
    );
    // Plain std threads, exiting before the read.
    let hs: Vec<_> = (0..16)
        .map(|_| {
            let b = b.clone();
            std::thread::spawn(move || {
                let rt = local_rt();
                for _ in 0..100 {
                    rt.block_on(refuse(&b));
                }
            })
        })
        .collect();
    hs.into_iter().for_each(|h| h.join().unwrap());
    expected += 1600;
    let m = b.metrics();
    assert_eq!(
        (m.rejected, m.rejected_by_reason.forced_open, m.calls),
        (expected, expected, expected)
    );
    // A second wave reusing the exited threads' slots.
    let hs: Vec<_> = (0..16)
        .map(|_| {
            let b = b.clone();
            std::thread::spawn(move || {
                let rt = local_rt();
                for _ in 0..10 {
                    rt.block_on(refuse(&b));
                }
            })
        })
        .collect();
    hs.into_iter().for_each(|h| h.join().unwrap());
    expected += 160;
    assert_eq!(b.metrics().rejected, expected);
    let text = fusebox::metrics::prometheus();
    let _ = text; // detached breakers are not exported; see prometheus test
}

#[test]
fn a_reader_never_sees_counts_go_back() {
    let b = forced("reader-monotonic");
    let done = Arc::new(AtomicBool::new(false));
    let reader = {
        let (b, done) = (b.clone(), done.clone());
        std::thread::spawn(move || {
            let (mut last, mut last_calls, mut reads) = (0, 0, 0u64);
            while !done.load(Acquire) {
                let m = b.metrics();
                assert!(
                    m.rejected >= last,
                    "rejected went back: {last} then {}",
                    m.rejected
                );
                assert!(
                    m.calls >= last_calls,
                    "calls went back: {last_calls} then {}",
                    m.calls
                );
                assert!(m.rejected <= 8 * 2000);
                last = m.rejected;
                last_calls = m.calls;
                reads += 1;
            }
            reads
        })
    };
    let rt = rt(4);
    rt.block_on(async {
        let hs: Vec<_> = (0..8)
            .map(|_| {
                let b = b.clone();
                tokio::spawn(async move {
                    for _ in 0..2000 {
                        refuse(&b).await;
                        tokio::task::yield_now().await;
                    }
                })
            })
            .collect();
        for h in hs {
            h.await.unwrap();
        }
    });
    drop(rt);
    done.store(true, Release);
    let reads = reader.join().unwrap();
    assert!(reads > 0);
    assert_eq!(b.metrics().rejected, 16_000);
}

#[test]
fn more_breakers_than_entries_on_the_same_threads() {
    let rt = rt(4);
    rt.block_on(async {
        let bs: Vec<Breaker> = (0..11).map(|i| forced(&format!("many-{i}"))).collect();
        let bs = Arc::new(bs);
        let counts: Arc<Vec<AtomicU64>> = Arc::new((0..11).map(|_| AtomicU64::new(0)).collect());
        let hs: Vec<_> = (0..16)
            .map(|t| {
                let (bs, counts) = (bs.clone(), counts.clone());
                tokio::spawn(async move {
                    for i in 0..500usize {
                        let k = (i * 7 + t) % bs.len();
                        refuse(&bs[k]).await;
                        counts[k].fetch_add(1, Relaxed);
                        if i % 5 == 0 {
                            tokio::task::yield_now().await;
                        }
                    }
                })
            })
            .collect();
        for h in hs {
            h.await.unwrap();
        }
        for (k, b) in bs.iter().enumerate() {
            let m = b.metrics();
            assert_eq!(m.rejected, counts[k].load(Relaxed), "breaker many-{k}");
            assert_eq!(m.rejected_by_reason.forced_open, counts[k].load(Relaxed));
        }
    });
}

#[test]
fn a_new_detached_breaker_never_starts_with_an_old_ones_refusals() {
    let rt = rt(4);
    rt.block_on(async {
        for round in 0..300u64 {
            let b = forced("reuse");
            let m0 = b.metrics();
            assert_eq!(
                (m0.rejected, m0.calls),
                (0, 0),
                "round {round}: fresh breaker"
            );
            let n = 1 + round % 9;
            let hs: Vec<_> = (0..4)
                .map(|_| {
                    let b = b.clone();
                    tokio::spawn(async move {
                        for _ in 0..n {
                            refuse(&b).await;
                        }
                    })
                })
                .collect();
            for h in hs {
                h.await.unwrap();
            }
            assert_eq!(b.metrics().rejected, 4 * n, "round {round}");
            drop(b);
        }
    });
}

#[test]
fn a_fresh_registered_breaker_after_a_scope_or_evict_starts_at_zero() {
    let rt = rt(3);
    rt.block_on(async {
        // Keyed breakers, evicted and made again: never inherit.
        let template = Breaker::builder("keyed-reuse")
            .max_keys(4)
            .config()
            .unwrap();
        for round in 0..100u64 {
            let shards: Vec<Breaker> = (0..6).map(|k| registry().keyed(&template, &k)).collect();
            for s in &shards {
                let m = s.metrics();
                assert_eq!(m.rejected, 0, "round {round}: {} fresh", m.name);
                s.force_open();
            }
            let hs: Vec<_> = shards
                .iter()
                .map(|s| {
                    let s = s.clone();
                    tokio::spawn(async move {
                        let r = refuse(&s).await;
                        assert_eq!(r.name(), s.name());
                        r
                    })
                })
                .collect();
            for h in hs {
                h.await.unwrap();
            }
            // Overflowed keys share one breaker: compare through the handles.
            for s in &shards {
                let same = shards.iter().filter(|o| o.ptr_eq(s)).count() as u64;
                assert_eq!(s.metrics().rejected, same, "round {round}: {}", s.name());
            }
            drop(shards);
            registry().evict_keys("keyed-reuse");
        }
    });
}

#[test]
fn rejection_names_equal_display_right_across_threads() {
    let rt = rt(4);
    rt.block_on(async {
        let b = forced("names-across");
        let template = Breaker::builder("names-keyed").config().unwrap();
        let k = registry().keyed(&template, &"db-1");
        k.force_open();
        let hs: Vec<_> = (0..64)
            .map(|_| {
                let (b, k) = (b.clone(), k.clone());
                tokio::spawn(async move { (refuse(&b).await, refuse(&k).await) })
            })
            .collect();
        let mut all = Vec::new();
        for h in hs {
            all.push(h.await.unwrap());
        }
        let (first, firstk) = all[0].clone();
        for (r, rk) in &all {
            assert_eq!(r, &first);
            assert_eq!(r.name(), "names-across");
            assert_eq!(
                r.to_string(),
                "circuit breaker `names-across` is forced_open"
            );
            assert_eq!(rk, &firstk);
            assert_eq!(rk.name(), "names-keyed/db-1");
            match r {
                Rejection::Open { name, state, .. } => {
                    assert_eq!(&**name, "names-across");
                    assert_eq!(*state, State::ForcedOpen);
                }
                _ => unreachable!(),
            }
        }
        assert_eq!(b.metrics().rejected, 64);
        assert_eq!(k.metrics().rejected, 64);
        assert_eq!(k.metrics().key.as_deref(), Some("db-1"));
    });
}

#[test]
fn registered_breaker_in_prometheus_counts_every_thread() {
    let name = "prom-threads";
    let b = Breaker::builder(name).build().unwrap();
    b.force_open();
    let rt = rt(4);
    rt.block_on(async {
        let hs: Vec<_> = (0..400)
            .map(|_| {
                let b = b.clone();
                tokio::spawn(async move { refuse(&b).await })
            })
            .collect();
        for h in hs {
            h.await.unwrap();
        }
    });
    drop(rt);
    let text = fusebox::metrics::prometheus();
    let line =
        format!("fusebox_breaker_rejected_total{{breaker=\"{name}\",reason=\"forced_open\"}} 400");
    assert!(
        text.lines().any(|l| l == line),
        "missing `{line}` in\n{}",
        text.lines()
            .filter(|l| l.contains(name))
            .collect::<Vec<_>>()
            .join("\n")
    );
    let m = fusebox::metrics();
    let bm = m.breakers.iter().find(|x| x.name == name).unwrap();
    assert_eq!(bm.rejected, 400);
    assert_eq!(registry().breaker(name).unwrap().metrics().rejected, 400);
}

#[test]
fn bulkhead_full_names_and_counts() {
    let rt = rt(4);
    rt.block_on(async {
        let pool = fusebox::Bulkhead::builder("bh-names")
            .pool(1)
            .build_detached()
            .unwrap();
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let p = pool.clone();
        let holder = tokio::spawn(async move { p.call(async move { rx.await.ok() }).await });
        while pool.metrics().in_flight == 0 {
            tokio::task::yield_now().await;
        }
        let hs: Vec<_> = (0..100)
            .map(|_| {
                let p = pool.clone();
                tokio::spawn(async move { p.call(async { 1 }).await })
            })
            .collect();
        for h in hs {
            match h.await.unwrap() {
                Err(r @ Rejection::Full { .. }) => {
                    assert_eq!(r.name(), "bh-names");
                    assert_eq!(
                        r.to_string(),
                        "bulkhead `bh-names` is full (1 calls in flight)"
                    );
                }
                o => panic!("{o:?}"),
            }
        }
        tx.send(()).unwrap();
        holder.await.unwrap().unwrap();
        assert_eq!(pool.metrics().rejected, 100);
    });
}
