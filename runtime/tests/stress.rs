//! Stress: many tasks on a multi-thread runtime make a million calls (100 000 in a debug build;
//! `FUSEBOX_STRESS_CALLS=N` sets it) through one breaker and one bulkhead, with a random mix of
//! success, failure, ignored error, slow, timeout, cancellation and panic, in phases healthy and
//! sick so the breaker opens, half-opens and closes again and again.
//!
//! Every call is classified by what its caller saw; the breaker's counters must equal those
//! counts exactly (nothing lost, nothing counted twice), the bulkhead must end with no slot in
//! flight and never exceed its pool, and the whole run must end within a real-time bound.
//! Run `cargo test -p fusebox-runtime --release --test stress -- --nocapture` for the figures.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};

use fusebox_runtime::__private::run;
use fusebox_runtime::{Breaker, Bulkhead, Completion, Error, Rejection, State};

const TASKS: u64 = 256;
/// Calls per phase; phases alternate between a healthy and a sick dependency.
const PHASE: u64 = 20_000;

fn calls_to_make() -> u64 {
    std::env::var("FUSEBOX_STRESS_CALLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(if cfg!(debug_assertions) {
            100_000
        } else {
            1_000_000
        })
}

/// What each caller saw, one counter per outcome.
#[derive(Default)]
struct Seen {
    issued: AtomicU64,
    ok: AtomicU64,
    failed: AtomicU64,
    ignored: AtomicU64,
    timed_out: AtomicU64,
    panicked: AtomicU64,
    cancelled: AtomicU64,
    rejected: AtomicU64,
    full: AtomicU64,
}

#[derive(Clone, Copy, Debug)]
enum Kind {
    Ok,
    Fail,
    Ignored,
    Slow,
    Hang,
    Cancel,
    Panic,
}

/// xorshift64*: a fast, seedable generator for the mix (no dependency needed).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn kind(&mut self, sick: bool) -> Kind {
        let r = self.next() % 1000;
        let fail = if sick { 700 } else { 40 };
        match r {
            _ if r < fail => Kind::Fail,
            _ if r < fail + 30 => Kind::Ignored,
            _ if r < fail + 40 => Kind::Slow,
            _ if r < fail + 45 => Kind::Hang,
            _ if r < fail + 55 => Kind::Cancel,
            _ if r < fail + 60 => Kind::Panic,
            _ => Kind::Ok,
        }
    }
}

/// The error type of the protected calls: `counted` is what the failure predicate looks at.
#[derive(Debug)]
struct DepError {
    counted: bool,
}

async fn dependency(kind: Kind) -> Result<(), DepError> {
    match kind {
        Kind::Ok => Ok(()),
        Kind::Fail => Err(DepError { counted: true }),
        Kind::Ignored => Err(DepError { counted: false }),
        Kind::Slow => {
            tokio::time::sleep(Duration::from_millis(1)).await;
            Ok(())
        }
        // Never answers: the breaker's timeout or the caller's cancellation ends it.
        Kind::Hang | Kind::Cancel => std::future::pending().await,
        Kind::Panic => panic!("injected panic"),
    }
}

fn classify(seen: &Seen, c: Completion<(), DepError>) {
    let counter = match c {
        Completion::Ok(()) => &seen.ok,
        Completion::Ignored(_) => &seen.ignored,
        Completion::Failed(Error::Failed(_)) => &seen.failed,
        Completion::Failed(Error::Rejected(Rejection::TimedOut { .. })) => &seen.timed_out,
        Completion::Failed(Error::Rejected(Rejection::Open { .. })) => &seen.rejected,
        Completion::Failed(Error::Rejected(Rejection::Full { .. })) => &seen.full,
        Completion::Failed(Error::Rejected(r)) => panic!("unexpected rejection {r:?}"),
    };
    counter.fetch_add(1, Relaxed);
}

async fn one_call(b: &Breaker, bh: &Bulkhead, seen: &Seen, kind: Kind) {
    seen.issued.fetch_add(1, Relaxed);
    let call = run(b, Some(bh), dependency(kind), |e: &DepError| e.counted);
    match kind {
        Kind::Cancel => {
            // Polled (so admitted) and then dropped by the caller's own deadline.
            match tokio::time::timeout(Duration::ZERO, call).await {
                Ok(c) => classify(seen, c),
                Err(_) => {
                    seen.cancelled.fetch_add(1, Relaxed);
                }
            }
        }
        Kind::Panic => {
            let (b, bh) = (b.clone(), bh.clone());
            let task = tokio::spawn(async move {
                run(&b, Some(&bh), dependency(kind), |e: &DepError| e.counted).await
            });
            match task.await {
                Ok(c) => classify(seen, c),
                Err(e) if e.is_panic() => {
                    seen.panicked.fetch_add(1, Relaxed);
                }
                Err(e) => panic!("call task failed: {e}"),
            }
        }
        _ => classify(seen, call.await),
    }
}

#[test]
fn a_million_calls_add_up_exactly_and_leak_nothing() {
    // Keep the output readable: the panics injected on purpose are not printed.
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if info.payload().downcast_ref::<&str>() != Some(&"injected panic") {
            default(info);
        }
    }));
    let calls = calls_to_make();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let started = Instant::now();
    rt.block_on(async move {
        let b = Breaker::builder("stress")
            .window_calls(50)
            .min_calls(20)
            .failure_rate(50)
            .slow(Duration::from_micros(500), 80)
            .timeout(Duration::from_millis(2))
            .half_open_timeout(Duration::from_millis(5))
            .open_for(Duration::from_millis(1))
            .half_open_pct(25)
            .half_open_window(Duration::from_millis(2))
            .build_detached()
            .unwrap();
        let bh = Bulkhead::builder("stress")
            .pool(16)
            .max_wait(Duration::from_micros(200))
            .build_detached()
            .unwrap();
        let seen = Arc::new(Seen::default());
        let next = Arc::new(AtomicU64::new(0));
        let work = async {
            let tasks: Vec<_> = (0..TASKS)
                .map(|t| {
                    let (b, bh, seen, next) = (b.clone(), bh.clone(), seen.clone(), next.clone());
                    tokio::spawn(async move {
                        let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ (t + 1));
                        loop {
                            let i = next.fetch_add(1, Relaxed);
                            if i >= calls {
                                break;
                            }
                            let sick = (i / PHASE) % 2 == 1;
                            one_call(&b, &bh, &seen, rng.kind(sick)).await;
                        }
                    })
                })
                .collect();
            for t in tasks {
                t.await.unwrap();
            }
            // Healthy calls until the breaker is closed again: nothing may stay stuck.
            let mut settle = 0;
            while b.state() != State::Closed {
                one_call(&b, &bh, &seen, Kind::Ok).await;
                settle += 1;
                assert!(settle < 10_000_000, "the breaker never closed again");
                tokio::task::yield_now().await;
            }
        };
        tokio::time::timeout(Duration::from_secs(300), work)
            .await
            .expect("no deadlock: the stress run ends in bounded time");

        let m = b.metrics();
        let h = bh.metrics();
        let s = |c: &AtomicU64| c.load(Relaxed);
        let issued = s(&seen.issued);
        let wall = started.elapsed();
        println!(
            "stress: {issued} calls by {TASKS} tasks in {wall:?}: succeeded {} failed {} ignored {} \
             timed out {} panicked {} cancelled {} rejected {} full {}; slow {}; opened {} times; \
             bulkhead peak {} of {}",
            m.succeeded,
            m.failed,
            m.ignored,
            m.timed_out,
            m.panicked,
            m.cancelled,
            m.rejected,
            m.rejected_by_bulkhead,
            m.slow,
            m.times_opened,
            h.peak,
            h.pool
        );
        assert!(issued >= calls);
        assert_eq!(m.calls, issued, "lost or double-counted calls");
        // An error the failure predicate excludes is a success (`Completion::Ignored` is the
        // builder's name for it): nothing here is the ignored outcome.
        assert_eq!(m.succeeded, s(&seen.ok) + s(&seen.ignored));
        assert_eq!(m.failed, s(&seen.failed));
        assert_eq!(m.ignored, 0);
        assert_eq!(m.timed_out, s(&seen.timed_out));
        assert_eq!(m.panicked, s(&seen.panicked));
        assert_eq!(m.cancelled, s(&seen.cancelled));
        assert_eq!(m.rejected, s(&seen.rejected));
        assert_eq!(m.rejected_by_bulkhead, s(&seen.full));
        assert_eq!(h.rejected, s(&seen.full), "the two sides agree on full");
        assert!(m.slow >= m.timed_out, "every timeout is slow");
        assert_eq!(h.in_flight, 0, "leaked bulkhead slots");
        assert!(h.peak <= h.pool);
        assert!(m.times_opened > 0, "the sick phases opened the breaker");
        assert!(m.panicked > 0 && m.cancelled > 0 && m.timed_out > 0);
        assert_eq!(m.state, State::Closed);
    });
}
