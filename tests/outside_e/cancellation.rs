//! Issue 2: cancellation, panics, bulkheads.

use super::*;

#[breaker(
    name = "oe-cancel",
    window_calls = 2,
    min_calls = 2,
    open_for = "1s",
    half_open_calls = 1
)]
#[bulkhead(name = "oe-cancel-pool", pool = 1)]
async fn guarded(gate: Arc<Notify>, ok: bool) -> Result<u32, DepError> {
    gate.notified().await;
    if ok {
        Ok(1)
    } else {
        Err(DepError::Down)
    }
}

#[tokio::test(start_paused = true)]
async fn a_cancelled_trial_frees_its_permit_and_its_slot_and_is_not_a_failure() {
    let open = Arc::new(Notify::new());
    for _ in 0..2 {
        open.notify_one();
        let _ = guarded(open.clone(), false).await;
    }
    let b = registry().breaker("oe-cancel").unwrap();
    let pool = registry().bulkhead("oe-cancel-pool").unwrap();
    assert_eq!(b.state(), State::Open);
    advance(secs(1)).await;
    // The one trial is dropped by its caller before it answers.
    let hang = Arc::new(Notify::new());
    let dropped = tokio::time::timeout(ms(10), guarded(hang, true)).await;
    assert!(dropped.is_err());
    assert_eq!(pool.in_flight(), 0, "the permit came back");
    let m = b.metrics();
    assert_eq!((m.cancelled, m.failed), (1, 2), "{m:?}");
    assert_eq!(
        b.state(),
        State::HalfOpen,
        "a cancelled trial is no verdict"
    );
    // Its slot went back: the next caller is the trial.
    let go = Arc::new(Notify::new());
    go.notify_one();
    assert_eq!(guarded(go, true).await, Ok(1));
    assert_eq!(b.state(), State::Closed);
}

#[breaker(name = "oe-panic", window_calls = 2, min_calls = 2)]
#[bulkhead(name = "oe-panic-pool", pool = 1)]
async fn panicky(boom: bool) -> Result<u32, DepError> {
    tokio::task::yield_now().await;
    if boom {
        panic!("the dependency's client panicked");
    }
    Ok(1)
}

#[tokio::test(start_paused = true)]
async fn a_panic_is_a_failure_and_frees_the_permit() {
    for _ in 0..2 {
        let j = tokio::spawn(panicky(true)).await;
        assert!(j.unwrap_err().is_panic());
    }
    let b = registry().breaker("oe-panic").unwrap();
    let m = b.metrics();
    assert_eq!(m.panicked, 2, "{m:?}");
    assert_eq!(b.state(), State::Open, "two panics of two calls open it");
    assert_eq!(registry().bulkhead("oe-panic-pool").unwrap().in_flight(), 0);
    assert!(matches!(
        panicky(false).await,
        Err(DepError::Refused(Rejection::Open { .. }))
    ));
}

#[tokio::test(start_paused = true)]
async fn a_bulkhead_waiter_gets_a_freed_slot_within_max_wait_and_is_refused_after_it() {
    let pool = Bulkhead::builder("oe-wait")
        .pool(1)
        .max_wait(ms(50))
        .build()
        .unwrap();
    let holder = {
        let pool = pool.clone();
        tokio::spawn(async move { pool.call(tokio::time::sleep(ms(30))).await })
    };
    tokio::task::yield_now().await;
    assert_eq!(pool.in_flight(), 1);
    // Waits 30 ms of its 50 ms, then runs.
    let t0 = tokio::time::Instant::now();
    assert!(pool.call(async { 7 }).await.is_ok());
    assert_eq!(t0.elapsed(), ms(30));
    holder.await.unwrap().unwrap();
    // A holder for 100 ms: the waiter gives up at 50 ms with `Full`.
    let holder = {
        let pool = pool.clone();
        tokio::spawn(async move { pool.call(tokio::time::sleep(ms(100))).await })
    };
    tokio::task::yield_now().await;
    let t0 = tokio::time::Instant::now();
    match pool.call(async { 7 }).await {
        Err(Rejection::Full { name, .. }) => assert_eq!(name.as_ref() as &str, "oe-wait"),
        other => panic!("expected Full, got {other:?}"),
    }
    assert_eq!(t0.elapsed(), ms(50));
    holder.await.unwrap().unwrap();
    let m = fusebox::metrics()
        .bulkheads
        .into_iter()
        .find(|m| m.name == "oe-wait")
        .unwrap();
    assert_eq!((m.pool, m.in_flight, m.peak, m.rejected), (1, 0, 1, 1));
}

#[test]
fn the_pool_sizing_helper_is_calls_per_second_times_latency_times_spare() {
    assert_eq!(fusebox::tune::pool_size(100.0, ms(200), 1.5), 30);
}
