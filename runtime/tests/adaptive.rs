//! The adaptive bulkhead's documented promises (`Bulkhead`'s "Adaptive limit" section), on a
//! paused clock that advances by itself whenever every task waits: the dependency's latency is
//! a `sleep`, the callers are tasks calling in a loop.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Duration;

use fusebox_runtime::{Bulkhead, Rejection};
use tokio::time::{sleep, Instant};

/// A dependency whose latency (in microseconds) the test changes while callers run, with
/// an optional ±`noise_pct` spread drawn from a fixed-seed generator.
#[derive(Clone)]
struct Dep {
    micros: Arc<AtomicU64>,
    noise_pct: u64,
    seed: Arc<AtomicU64>,
}

impl Dep {
    fn new(latency: Duration, noise_pct: u64) -> Dep {
        Dep {
            micros: Arc::new(AtomicU64::new(latency.as_micros() as u64)),
            noise_pct,
            seed: Arc::new(AtomicU64::new(0x9e37_79b9_7f4a_7c15)),
        }
    }
    fn set(&self, latency: Duration) {
        self.micros.store(latency.as_micros() as u64, Relaxed);
    }
    fn latency(&self) -> Duration {
        let base = self.micros.load(Relaxed);
        if self.noise_pct == 0 {
            return Duration::from_micros(base);
        }
        // xorshift: the same noise on every run.
        let mut x = self.seed.load(Relaxed);
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.seed.store(x, Relaxed);
        let spread = base * self.noise_pct / 100;
        Duration::from_micros(base - spread + x % (2 * spread + 1))
    }
}

/// `n` callers, each calling through `b` in a loop; a refused caller tries again 1 ms later.
fn callers(b: &Bulkhead, dep: &Dep, n: usize) -> Vec<tokio::task::JoinHandle<()>> {
    (0..n)
        .map(|_| {
            let (b, dep) = (b.clone(), dep.clone());
            tokio::spawn(async move {
                loop {
                    let d = dep.latency();
                    match b.call(sleep(d)).await {
                        Ok(()) => {}
                        Err(Rejection::Full { .. }) => sleep(Duration::from_millis(1)).await,
                        Err(other) => panic!("{other:?}"),
                    }
                }
            })
        })
        .collect()
}

fn stop(tasks: Vec<tokio::task::JoinHandle<()>>) {
    tasks.iter().for_each(|t| t.abort());
}

/// The lowest and highest limit every `step` over `span`.
async fn watch(b: &Bulkhead, span: Duration, step: Duration) -> (usize, usize) {
    let (mut lo, mut hi) = (usize::MAX, 0);
    let end = Instant::now() + span;
    while Instant::now() < end {
        sleep(step).await;
        lo = lo.min(b.pool());
        hi = hi.max(b.pool());
    }
    (lo, hi)
}

#[tokio::test(start_paused = true)]
async fn a_doubled_latency_halves_the_limit_within_four_windows() {
    let b = Bulkhead::builder("adaptive-doubling")
        .adaptive()
        .pool(100)
        .max_pool(100)
        .build_detached()
        .unwrap();
    let dep = Dep::new(Duration::from_millis(10), 0);
    let tasks = callers(&b, &dep, 100);
    // 2 s at 10 ms: 20 windows of 100 ms, past the 10-window warm-up; a full pool stays full.
    assert_eq!(
        watch(&b, Duration::from_secs(2), Duration::from_millis(10)).await,
        (100, 100)
    );

    dep.set(Duration::from_millis(20));
    // The window open at the change mixes both latencies; three whole windows follow.
    let (lo, _) = watch(&b, Duration::from_millis(100), Duration::from_millis(5)).await;
    assert!(lo > 50, "not halved by one mixed window: {lo}");
    sleep(Duration::from_millis(320)).await;
    let halved = b.pool();
    assert!(halved <= 50, "halved within four windows: {halved}");
    assert!(halved >= 25, "by a quarter a window, not faster: {halved}");
    let m = b.metrics();
    let a = m.adaptive.as_ref().unwrap();
    assert!(a.long_latency.unwrap() < Duration::from_millis(11), "{a:?}");
    assert!(
        a.short_latency.unwrap() >= Duration::from_millis(19),
        "{a:?}"
    );
    let steps: Vec<usize> = a.history.iter().map(|c| c.limit).collect();
    assert_eq!(steps.first(), Some(&100), "{steps:?}");
    assert!(
        steps.windows(2).all(|w| w[1] < w[0]),
        "only down: {steps:?}"
    );
    stop(tasks);
}

#[tokio::test(start_paused = true)]
async fn noise_of_twenty_percent_never_lowers_the_limit() {
    // Saturated: the pool is full and at its cap; idle: well under half of it is used.
    for (callers_n, name) in [(100, "adaptive-noise-full"), (40, "adaptive-noise-idle")] {
        let b = Bulkhead::builder(name)
            .adaptive()
            .pool(100)
            .max_pool(100)
            .build_detached()
            .unwrap();
        let dep = Dep::new(Duration::from_millis(10), 20);
        let tasks = callers(&b, &dep, callers_n);
        let (lo, hi) = watch(&b, Duration::from_secs(60), Duration::from_millis(10)).await;
        assert_eq!((lo, hi), (100, 100), "{name}");
        let a = b.metrics().adaptive.unwrap();
        assert_eq!(a.changes, 0, "{name}: {a:?}");
        assert!(a.history.len() == 1);
        stop(tasks);
    }
}

#[tokio::test(start_paused = true)]
async fn a_stuck_dependency_shrinks_the_limit_and_its_recovery_restores_it() {
    let b = Bulkhead::builder("adaptive-stuck")
        .adaptive()
        .pool(60)
        .max_pool(60)
        .build_detached()
        .unwrap();
    let dep = Dep::new(Duration::from_millis(50), 0);
    let tasks = callers(&b, &dep, 200);
    watch(&b, Duration::from_secs(3), Duration::from_millis(50)).await;
    assert_eq!(b.pool(), 60);
    // Every call now ends at a 1 s timeout: 20 x the latency it had.
    dep.set(Duration::from_secs(1));
    sleep(Duration::from_secs(20)).await;
    let floor = b.pool();
    assert_eq!(floor, 1, "a stuck dependency falls to min_pool");
    dep.set(Duration::from_millis(50));
    let back = Instant::now();
    while b.pool() < 60 {
        sleep(Duration::from_millis(10)).await;
        assert!(
            back.elapsed() < Duration::from_secs(30),
            "recovered within 30 s: {}",
            b.pool()
        );
    }
    stop(tasks);
}

#[tokio::test(start_paused = true)]
async fn an_idle_adaptive_pool_keeps_its_start_and_its_bounds_hold() {
    let b = Bulkhead::builder("adaptive-bounds")
        .adaptive()
        .min_pool(8)
        .pool(12)
        .max_pool(16)
        .build_detached()
        .unwrap();
    let dep = Dep::new(Duration::from_millis(5), 0);
    let tasks = callers(&b, &dep, 64);
    let (_, hi) = watch(&b, Duration::from_secs(5), Duration::from_millis(10)).await;
    assert_eq!(hi, 16, "grows to max_pool while full, never past it");
    dep.set(Duration::from_secs(2));
    let (lo, _) = watch(&b, Duration::from_secs(30), Duration::from_millis(10)).await;
    assert_eq!(lo, 8, "falls to min_pool, never under it");
    assert_eq!(b.metrics().pool, 8);
    stop(tasks);
}
