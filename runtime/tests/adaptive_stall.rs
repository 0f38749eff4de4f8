//! The adaptive limit's stall guard (`Bulkhead`'s "Adaptive limit" section): calls that keep
//! starting while none ends cut the limit to the calls in flight. Open-loop callers on a
//! paused clock, as a service's requests arrive whether or not the last one was answered.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Duration;

use fusebox_runtime::{Bulkhead, Rejection};
use tokio::time::{sleep, timeout, Instant};

const MS: Duration = Duration::from_millis(1);

/// A dependency whose latency the test changes while calls arrive.
#[derive(Clone)]
struct Dep(Arc<AtomicU64>);

impl Dep {
    fn new(latency: Duration) -> Dep {
        Dep(Arc::new(AtomicU64::new(latency.as_micros() as u64)))
    }
    fn set(&self, latency: Duration) {
        self.0.store(latency.as_micros() as u64, Relaxed);
    }
    fn latency(&self) -> Duration {
        Duration::from_micros(self.0.load(Relaxed))
    }
}

/// What the arrivals saw: calls refused, and the most in flight at once.
#[derive(Default)]
struct Seen {
    refused: AtomicUsize,
    peak: AtomicUsize,
}

/// A call every `every` for `span`, each its own task under a 2 s timeout (the caller's),
/// whether or not earlier calls were answered.
async fn arrivals(b: &Bulkhead, dep: &Dep, every: Duration, span: Duration, seen: &Arc<Seen>) {
    let end = Instant::now() + span;
    while Instant::now() < end {
        let (b, dep, seen) = (b.clone(), dep.clone(), seen.clone());
        tokio::spawn(async move {
            let call = b.call(async {
                seen.peak.fetch_max(b.in_flight(), Relaxed);
                let _ = timeout(Duration::from_secs(2), sleep(dep.latency())).await;
            });
            if let Err(Rejection::Full { .. }) = call.await {
                seen.refused.fetch_add(1, Relaxed);
            }
        });
        sleep(every).await;
    }
}

fn adaptive(name: &str) -> Bulkhead {
    // The defaults: starts at 20, bounds 1..=80.
    Bulkhead::builder(name).adaptive().build_detached().unwrap()
}

#[tokio::test(start_paused = true)]
async fn a_dependency_that_stops_answering_holds_a_handful_of_slots_not_the_limit() {
    let b = adaptive("stall-open-loop");
    let dep = Dep::new(20 * MS);
    let seen = Arc::new(Seen::default());
    // 50 calls/s at 20 ms: about one call in flight, the limit learns 20 ms.
    arrivals(&b, &dep, 20 * MS, Duration::from_secs(5), &seen).await;
    assert_eq!(b.pool(), 20, "a healthy, lightly used pool keeps its start");
    assert_eq!(seen.refused.load(Relaxed), 0);

    // The dependency stops answering (the callers' 2 s timeout ends each call).
    dep.set(Duration::from_secs(8));
    let seen = Arc::new(Seen::default());
    arrivals(&b, &dep, 20 * MS, Duration::from_secs(1), &seen).await;
    let peak = seen.peak.load(Relaxed);
    // Nothing ends for 100 ms (2 x 20 ms, at least 100 ms): 6 or 7 calls at 50/s, then the cut.
    assert!(
        (4..=8).contains(&peak),
        "the limit was cut to the calls in flight once none had ended for 100 ms: {peak}"
    );
    assert!(b.pool() <= peak, "cut: {}", b.pool());
    assert!(seen.refused.load(Relaxed) >= 40, "the rest refused at once");
    let a = b.metrics().adaptive.unwrap();
    assert!(a.history.iter().any(|c| c.limit == peak), "{a:?}");

    // Healed: the cut is given back as windows show 20 ms again.
    dep.set(20 * MS);
    let healed = Instant::now();
    let seen = Arc::new(Seen::default());
    let more = arrivals(&b, &dep, 5 * MS, Duration::from_secs(30), &seen);
    let watch = async {
        while b.pool() < 20 {
            sleep(10 * MS).await;
        }
        healed.elapsed()
    };
    let (_, back) = tokio::join!(more, watch);
    assert!(back < Duration::from_secs(30), "limit back in {back:?}");
}

#[tokio::test(start_paused = true)]
async fn a_burst_after_a_quiet_spell_is_let_in_whole() {
    let b = adaptive("stall-burst");
    let dep = Dep::new(20 * MS);
    let seen = Arc::new(Seen::default());
    arrivals(&b, &dep, 20 * MS, Duration::from_secs(3), &seen).await;
    sleep(Duration::from_secs(10)).await;
    assert_eq!(b.in_flight(), 0);
    // 15 calls at once after 10 s without one: nothing ended for 10 s, yet nothing is stuck.
    let calls: Vec<_> = (0..15)
        .map(|_| {
            let (b, dep) = (b.clone(), dep.clone());
            tokio::spawn(async move { b.call(sleep(dep.latency())).await })
        })
        .collect();
    for c in calls {
        assert!(c.await.unwrap().is_ok(), "every call of the burst let in");
    }
    assert_eq!(b.pool(), 20);
    assert_eq!(b.metrics().adaptive.unwrap().changes, 0);
}

#[tokio::test(start_paused = true)]
async fn slow_calls_that_keep_ending_are_not_a_stall() {
    // 200 calls/s at 20 ms, then at 28 ms: slower, within the gradient's tolerance (1.5x),
    // and calls end all the time, so neither the gradient nor the stall guard cuts.
    let b = adaptive("stall-slow-not-stuck");
    let dep = Dep::new(20 * MS);
    let seen = Arc::new(Seen::default());
    arrivals(&b, &dep, 5 * MS, Duration::from_secs(3), &seen).await;
    dep.set(28 * MS);
    arrivals(&b, &dep, 5 * MS, Duration::from_secs(10), &seen).await;
    assert_eq!(seen.refused.load(Relaxed), 0, "limit {}", b.pool());
    assert_eq!(b.pool(), 20);
    assert_eq!(b.metrics().adaptive.unwrap().changes, 0);
}
