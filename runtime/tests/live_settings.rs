//! Issue 29: what a live settings change does to calls in flight, the window and the state,
//! on a paused clock (the guide `settings.md` documents each).

use std::time::Duration;

use fusebox_runtime::{Breaker, Error, Rejection, Source, State};

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

async fn ok(b: &Breaker) {
    let r: Result<(), Error<()>> = b.call(async { Ok(()) }).await;
    r.unwrap();
}

async fn fail(b: &Breaker) {
    let _: Result<(), Error<()>> = b.call(async { Err(()) }).await;
}

async fn takes(b: &Breaker, d: Duration) -> Result<(), Error<()>> {
    b.call(async move {
        tokio::time::sleep(d).await;
        Ok(())
    })
    .await
}

#[tokio::test(start_paused = true)]
async fn a_new_threshold_is_judged_at_the_next_call() {
    let b = Breaker::builder("live-threshold")
        .window_calls(10)
        .min_calls(10)
        .failure_rate(50)
        .build_detached()
        .unwrap();
    for _ in 0..6 {
        fail(&b).await;
    }
    for _ in 0..3 {
        ok(&b).await;
    }
    b.change_settings([("failure_rate", "80")], Source::Admin, None)
        .unwrap();
    // 6 failures in 10 calls: 60 %, under the new 80 %.
    ok(&b).await;
    assert_eq!(b.state(), State::Closed);
    assert_eq!(b.metrics().window_calls, 10, "the window is kept");
    b.change_settings([("failure_rate", "60")], Source::Admin, None)
        .unwrap();
    assert_eq!(b.state(), State::Closed, "nothing is judged until a call");
    fail(&b).await;
    assert_eq!(b.state(), State::Open);
}

#[tokio::test(start_paused = true)]
async fn the_state_is_kept_and_the_next_open_period_is_the_new_one() {
    let b = Breaker::builder("live-state")
        .window_calls(2)
        .open_for(ms(10_000))
        .build_detached()
        .unwrap();
    fail(&b).await;
    fail(&b).await;
    assert_eq!(b.state(), State::Open);
    b.change_settings(
        [("open_for", "1s"), ("half_open_calls", "1")],
        Source::Admin,
        None,
    )
    .unwrap();
    assert_eq!(b.state(), State::Open, "still open");
    tokio::time::advance(ms(9_999)).await;
    assert!(
        takes(&b, Duration::ZERO).await.is_err(),
        "until its deadline"
    );
    tokio::time::advance(ms(1)).await;
    // One trial (the new half-open policy) that fails: open again for the new 1 s.
    fail(&b).await;
    assert_eq!(b.state(), State::Open);
    tokio::time::advance(ms(1_000)).await;
    ok(&b).await;
    assert_eq!(b.state(), State::Closed);
}

#[tokio::test(start_paused = true)]
async fn a_new_window_kind_starts_a_new_window_and_the_codes_returns_empty() {
    let b = Breaker::builder("live-window")
        .window_calls(10)
        .min_calls(4)
        .build_detached()
        .unwrap();
    for _ in 0..3 {
        fail(&b).await;
    }
    assert_eq!(b.metrics().window_calls, 3);
    b.change_settings([("window", "10s")], Source::Admin, None)
        .unwrap();
    assert_eq!(b.metrics().window_calls, 0, "a new, empty window");
    // The three failures before the change are not in it: one more does not trip.
    fail(&b).await;
    ok(&b).await;
    assert_eq!((b.state(), b.metrics().window_calls), (State::Closed, 2));
    // The same kind and size again (a threshold only): the window is kept.
    b.change_settings(
        [("window", "10s"), ("failure_rate", "90")],
        Source::Admin,
        None,
    )
    .unwrap();
    assert_eq!(b.metrics().window_calls, 2);
    assert!(b.clear_settings_change());
    assert_eq!(
        b.metrics().window_calls,
        0,
        "the code's window starts again"
    );
    // Lifetime counters never go down across windows.
    let m = b.metrics();
    assert_eq!((m.succeeded, m.failed), (1, 4));
}

#[tokio::test(start_paused = true)]
async fn calls_in_flight_finish_under_the_settings_that_admitted_them() {
    let b = Breaker::builder("live-in-flight")
        .timeout(ms(100))
        .build_detached()
        .unwrap();
    let early = tokio::spawn({
        let b = b.clone();
        async move { takes(&b, ms(150)).await }
    });
    tokio::task::yield_now().await;
    b.change_settings([("timeout", "1s")], Source::Admin, None)
        .unwrap();
    let late = takes(&b, ms(150)).await;
    match early.await.unwrap() {
        Err(Error::Rejected(Rejection::TimedOut { after, .. })) => assert_eq!(after, ms(100)),
        other => panic!("admitted under 100 ms: {other:?}"),
    }
    late.unwrap();
}

#[tokio::test(start_paused = true)]
async fn a_change_given_a_duration_lapses_and_the_codes_settings_return() {
    let b = Breaker::builder("live-lapse")
        .timeout(ms(100))
        .build_detached()
        .unwrap();
    b.change_settings([("timeout", "1s")], Source::Fleet, Some(ms(5_000)))
        .unwrap();
    assert_eq!(b.metrics().settings_change_expires_in, Some(ms(5_000)));
    takes(&b, ms(500)).await.unwrap();
    tokio::time::advance(ms(4_500)).await;
    // The next call finds the change due: it runs under the code's 100 ms.
    assert!(matches!(
        takes(&b, ms(500)).await,
        Err(Error::Rejected(Rejection::TimedOut { .. }))
    ));
    assert!(b
        .settings_in_force()
        .iter()
        .all(|s| s.source == Source::Code));
}

#[tokio::test(start_paused = true)]
async fn a_bulkheads_pool_grows_for_waiters_and_shrinks_as_slots_free() {
    use std::sync::Arc;
    use tokio::sync::Semaphore;

    let h = fusebox_runtime::Bulkhead::builder("live-pool")
        .pool(1)
        .max_wait(ms(1_000))
        .build_detached()
        .unwrap();
    let gate = Arc::new(Semaphore::new(0));
    let hold = |h: fusebox_runtime::Bulkhead, gate: Arc<Semaphore>| async move {
        h.call(async move {
            let _ = gate.acquire().await;
        })
        .await
    };
    let first = tokio::spawn(hold(h.clone(), gate.clone()));
    tokio::task::yield_now().await;
    let waiting = tokio::spawn(hold(h.clone(), gate.clone()));
    tokio::task::yield_now().await;
    assert_eq!(h.in_flight(), 1, "the second waits");
    h.change_settings([("pool", "2")], Source::Admin, None)
        .unwrap();
    tokio::task::yield_now().await;
    assert_eq!(h.in_flight(), 2, "a waiter takes the new slot at once");
    h.change_settings([("pool", "1")], Source::Admin, None)
        .unwrap();
    assert_eq!(h.in_flight(), 2, "calls holding a slot keep it");
    // Two held, one slot now: a new call waits its `max_wait` and is refused.
    assert!(matches!(
        h.call(async {}).await,
        Err(Rejection::Full { pool: 1, .. })
    ));
    gate.add_permits(2);
    first.await.unwrap().unwrap();
    waiting.await.unwrap().unwrap();
    assert_eq!((h.in_flight(), h.pool()), (0, 1));
}

#[tokio::test(start_paused = true)]
async fn a_metrics_read_that_ends_a_change_is_all_of_the_settings_that_return() {
    // A review: the read that ended a change filled some fields before ending it, so one
    // snapshot said `Closed` under the code's 50 % with 60 % of the window failing.
    let b = Breaker::builder("live-snapshot-expiry")
        .window_calls(10)
        .min_calls(10)
        .failure_rate(50)
        .build_detached()
        .unwrap();
    b.change_settings([("failure_rate", "90")], Source::Admin, Some(ms(5_000)))
        .unwrap();
    for _ in 0..6 {
        fail(&b).await;
    }
    for _ in 0..4 {
        ok(&b).await;
    }
    assert_eq!(b.state(), State::Closed, "60 % is under the change's 90 %");
    tokio::time::advance(ms(5_000)).await;
    let m = b.metrics();
    assert_eq!(m.state, State::Open, "the code's 50 %, judged at once");
    assert_eq!(m.settings_change_expires_in, None);
    assert!(m.settings.iter().all(|s| s.source == Source::Code));
}

#[tokio::test(start_paused = true)]
async fn a_bulkhead_snapshot_after_a_change_ends_agrees_with_itself() {
    let h = fusebox_runtime::Bulkhead::builder("live-snapshot-pool")
        .pool(2)
        .build_detached()
        .unwrap();
    h.change_settings([("pool", "4")], Source::Admin, Some(ms(10_000)))
        .unwrap();
    tokio::time::advance(ms(11_000)).await;
    let m = h.metrics();
    let pool = m.settings.iter().find(|s| s.key == "pool").unwrap();
    assert_eq!((m.pool, pool.value.as_str()), (2, "2"));
}

#[test]
fn a_bulkhead_call_the_pool_would_refuse_ends_a_change_that_ran_out() {
    // Made outside a runtime, the change has no timer to end it: the first look after it
    // does, and a call the changed pool would refuse looks (real time: no runtime's clock).
    let h = fusebox_runtime::Bulkhead::builder("live-refusal-looks")
        .pool(2)
        .build_detached()
        .unwrap();
    h.change_settings([("pool", "1")], Source::Admin, Some(ms(50)))
        .unwrap();
    std::thread::sleep(ms(100));
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    rt.block_on(async {
        let held = h.acquire().await.unwrap();
        // The change's one slot is taken; the code's second is there once it ends.
        let second = h.acquire().await;
        assert!(second.is_ok(), "{:?}", second.err());
        assert_eq!(h.pool(), 2);
        drop(held);
    });
}

/// A review: with the code's `max_wait` 0 (fail fast), a `max_wait` set from outside the code
/// was in force by every read (`config_in_force`, metrics) yet every call path but `acquire`
/// refused at once: the fail-fast shortcut read the code's config.
#[tokio::test(start_paused = true)]
async fn a_max_wait_set_live_on_a_fail_fast_bulkhead_holds_on_every_call_path() {
    let h = fusebox_runtime::Bulkhead::builder("live-max-wait-from-zero")
        .pool(1)
        .build_detached()
        .unwrap();
    let b = Breaker::builder("live-max-wait-from-zero")
        .build_detached()
        .unwrap();
    h.change_settings([("max_wait", "50ms")], Source::Admin, None)
        .unwrap();
    assert_eq!(h.config_in_force().max_wait(), ms(50));
    let held = h.acquire().await.unwrap();
    let t = tokio::time::Instant::now();
    assert!(matches!(
        h.call(async {}).await,
        Err(Rejection::Full { .. })
    ));
    assert_eq!(
        t.elapsed(),
        ms(50),
        "Bulkhead::call waited the live max_wait"
    );
    let t = tokio::time::Instant::now();
    let r = b.call_in(&h, async { Ok::<_, ()>(1) }).await;
    assert!(matches!(r, Err(Error::Rejected(Rejection::Full { .. }))));
    assert_eq!(t.elapsed(), ms(50), "Breaker::call_in waited too");
    // A slot freed within the wait is taken.
    let call = tokio::spawn({
        let h = h.clone();
        async move { h.call(async { 7 }).await }
    });
    tokio::time::advance(ms(20)).await;
    drop(held);
    assert_eq!(call.await.unwrap().unwrap(), 7);
    // Back to the code's fail fast: refused at once.
    h.change_settings([("max_wait", "0ms")], Source::Admin, None)
        .unwrap();
    let _held = h.acquire().await.unwrap();
    let t = tokio::time::Instant::now();
    assert!(h.call(async {}).await.is_err());
    assert_eq!(t.elapsed(), Duration::ZERO);
}
