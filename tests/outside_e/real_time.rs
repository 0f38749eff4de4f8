//! Issue 7: real load, real time.

use super::*;

#[breaker(name = "oe-real", timeout = "20ms", window_calls = 200, failure_rate = 100,
          fallback = real_fallback)]
#[bulkhead(name = "oe-real-pool", pool = 8, max_wait = "2ms")]
async fn real_call(i: u32) -> Result<u32, DepError> {
    match i % 10 {
        0 => Err(DepError::Down),
        1 => {
            tokio::time::sleep(ms(40)).await; // times out
            Ok(i)
        }
        _ => {
            tokio::time::sleep(Duration::from_micros(200 + u64::from(i % 7) * 100)).await;
            Ok(i)
        }
    }
}

fn real_fallback(_: Error<DepError>) -> Result<u32, DepError> {
    Ok(u32::MAX)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn under_real_load_the_pool_holds_and_every_call_is_counted_once() {
    let pool = registry().bulkhead("oe-real-pool").unwrap();
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let watcher = {
        let (pool, stop) = (pool.clone(), stop.clone());
        tokio::spawn(async move {
            let mut most = 0;
            while !stop.load(SeqCst) {
                most = most.max(pool.in_flight());
                tokio::task::yield_now().await;
            }
            most
        })
    };
    let started = std::time::Instant::now();
    let tasks: Vec<_> = (0..32u32)
        .map(|t| {
            tokio::spawn(async move {
                let mut fell_back = 0u32;
                for i in 0..150u32 {
                    let n = t * 1000 + i;
                    if real_call(n).await == Ok(u32::MAX) {
                        fell_back += 1;
                    }
                }
                fell_back
            })
        })
        .collect();
    let mut fell_back = 0;
    for t in tasks {
        fell_back += t.await.unwrap();
    }
    stop.store(true, SeqCst);
    let most = watcher.await.unwrap();
    assert!(started.elapsed() < secs(60), "bounded in time");
    assert!(most <= 8, "in flight never above the pool: {most}");
    let p = fusebox::metrics()
        .bulkheads
        .into_iter()
        .find(|b| b.name == "oe-real-pool")
        .unwrap();
    assert!(p.peak <= 8 && p.in_flight == 0, "{p:?}");
    let m = registry().breaker("oe-real").unwrap().metrics();
    let calls = 32 * 150;
    assert_eq!(m.calls, calls, "{m:?}");
    assert_eq!(
        m.succeeded
            + m.failed
            + m.timed_out
            + m.cancelled
            + m.panicked
            + m.ignored
            + m.rejected
            + m.rejected_by_bulkhead,
        calls,
        "{m:?}"
    );
    assert_eq!(
        u64::from(fell_back),
        m.failed + m.timed_out + m.rejected + m.rejected_by_bulkhead,
        "the fallback answered each refusal and counted failure once: {m:?}"
    );
    assert_eq!(
        p.admitted,
        m.succeeded + m.failed + m.timed_out,
        "{p:?} {m:?}"
    );
}

#[breaker(name = "oe-hot-key", key = tenant, window_calls = 2, min_calls = 2)]
async fn per_tenant(tenant: &str, ok: bool) -> Result<(), DepError> {
    let _ = tenant;
    ok.then_some(()).ok_or(DepError::Down)
}

#[tokio::test(start_paused = true)]
async fn a_keyed_call_site_used_outside_a_scope_gives_the_scope_its_own_breaker() {
    // Used outside first, on this thread: the call site remembers the key it used last.
    for _ in 0..2 {
        let _ = per_tenant("acme", false).await;
    }
    let global = registry().breaker("oe-hot-key/acme").unwrap();
    assert_eq!(global.state(), State::Open);
    {
        let _scope = fusebox::testing::scope();
        assert_eq!(
            per_tenant("acme", true).await,
            Ok(()),
            "the scope's acme is fresh"
        );
        fusebox::testing::assert_calls("oe-hot-key/acme", 1, 0, 0);
        for _ in 0..2 {
            let _ = per_tenant("acme", false).await;
        }
        fusebox::testing::assert_state("oe-hot-key/acme", State::Open);
    }
    assert_eq!(
        global.metrics().calls,
        2,
        "nothing of the scope reached the global breaker"
    );
    global.reset();
    assert_eq!(
        per_tenant("acme", true).await,
        Ok(()),
        "outside again: the global one"
    );
    assert_eq!(global.metrics().succeeded, 1);
}

#[breaker(name = "oe-one-key", key = tenant, max_keys = 1, window = "1s", min_calls = 2)]
async fn one_key(tenant: &str) -> Result<(), DepError> {
    let _ = tenant;
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn a_key_evicted_as_idle_is_never_served_by_a_breaker_outside_the_registry() {
    one_key("a").await.unwrap();
    advance(secs(2)).await;
    one_key("b").await.unwrap(); // "a" is idle: it makes room
    assert!(registry().breaker("oe-one-key/a").is_none());
    assert!(registry().breaker("oe-one-key/b").is_some());
    // "a" again, from the thread that used it last: whichever breaker serves it is listed,
    // so an operator's force_open reaches it.
    one_key("a").await.unwrap();
    let family: Vec<Breaker> = registry()
        .breakers()
        .into_iter()
        .filter(|b| b.name().starts_with("oe-one-key/"))
        .collect();
    let total: u64 = family.iter().map(|b| b.metrics().calls).sum();
    assert_eq!(
        total, 2,
        "b once and a once, all in listed breakers: {family:?}"
    );
    for b in &family {
        b.force_open();
    }
    assert!(matches!(one_key("a").await, Err(DepError::Refused(_))));
}
