//! Issue 2: registry, handles, snapshot, events.

use super::*;

#[tokio::test(start_paused = true)]
async fn the_same_name_with_other_settings_keeps_the_first_and_counts_the_conflict() {
    let first = Breaker::builder("oe-conflict")
        .failure_rate(50)
        .build()
        .unwrap();
    let second = Breaker::builder("oe-conflict")
        .failure_rate(80)
        .build()
        .unwrap();
    assert!(first.ptr_eq(&second), "one breaker per name");
    assert_eq!(
        second.config().failure_rate(),
        50,
        "the first settings kept"
    );
    assert_eq!(first.metrics().conflicts, 1);
    let text = fusebox::metrics::prometheus();
    assert!(
        text.lines()
            .any(|l| l.contains("oe-conflict") && l.contains("conflict") && l.ends_with(" 1")),
        "the conflict is visible in Prometheus too"
    );
}

#[tokio::test(start_paused = true)]
async fn handles_force_open_force_close_and_reset_and_every_call_sees_it() {
    let b = Breaker::builder("oe-handles").build().unwrap();
    let same = registry().breaker("oe-handles").unwrap();
    b.force_open();
    assert_eq!(same.state(), State::ForcedOpen);
    match call_for(&same, Duration::ZERO, true).await {
        Err(Error::Rejected(r)) => {
            assert!(r.is_open());
            assert_eq!(r.name(), "oe-handles");
        }
        other => panic!("expected a rejection, got {other:?}"),
    }
    b.force_close();
    assert_eq!(same.state(), State::ForcedClosed);
    for _ in 0..50 {
        let _ = call_for(&same, Duration::ZERO, false).await;
    }
    assert_eq!(
        same.state(),
        State::ForcedClosed,
        "forced closed never opens"
    );
    b.reset();
    assert_eq!(same.state(), State::Closed);
    let m = same.metrics();
    assert_eq!(m.window_calls, 0, "reset empties the window");
    assert_eq!(m.rejected_by_reason.forced_open, 1);
}

#[tokio::test(start_paused = true)]
async fn the_snapshot_tells_time_in_state_latency_times_opened_and_stuck() {
    let b = Breaker::builder("oe-snapshot")
        .window_calls(10)
        .min_calls(10)
        .alert_after(secs(60))
        .open_for(secs(30))
        .half_open_calls(1)
        .build()
        .unwrap();
    for i in 0..10u64 {
        call_for(&b, ms(10 * (i + 1)), true).await.unwrap();
    }
    let m = b.metrics();
    let p50 = m.p50.unwrap();
    assert!(p50 >= ms(40) && p50 <= ms(70), "p50 of 10..100 ms: {p50:?}");
    assert!(m.p99.unwrap() >= ms(90), "{:?}", m.p99);
    assert!(m.p95.unwrap() >= p50);
    advance(secs(5)).await;
    assert!(b.metrics().time_in_state >= secs(5));
    for _ in 0..10 {
        let _ = call_for(&b, Duration::ZERO, false).await;
    }
    assert_eq!(b.state(), State::Open);
    assert_eq!(b.metrics().time_in_state, Duration::ZERO);
    // Open, then a failed trial, open again: away from closed longer than `alert_after`.
    advance(secs(30)).await;
    let _ = call_for(&b, Duration::ZERO, false).await;
    advance(secs(29)).await;
    assert!(!b.metrics().stuck, "59 s away from closed");
    advance(secs(2)).await;
    let m = b.metrics();
    assert!(
        m.stuck,
        "61 s away from closed, across an open/half-open cycle"
    );
    assert_eq!(m.times_opened, 2);
    assert!(fusebox::metrics::stuck_breakers()
        .iter()
        .any(|s| s.name == "oe-snapshot"));
}

#[tokio::test(start_paused = true)]
async fn a_subscriber_hears_each_transition_once_with_its_reason_and_rates() {
    let mut events = registry().subscribe();
    let b = Breaker::builder("oe-events")
        .window_calls(4)
        .min_calls(4)
        .open_for(secs(1))
        .half_open_calls(1)
        .build()
        .unwrap();
    for ok in [true, false, false, false] {
        let _ = call_for(&b, Duration::ZERO, ok).await;
    }
    advance(secs(1)).await;
    assert!(admitted(&b).await);
    let mut mine = Vec::new();
    while let Ok(t) = events.try_recv() {
        if &*t.name == "oe-events" {
            mine.push(t);
        }
    }
    let states: Vec<_> = mine.iter().map(|t| (t.from, t.to)).collect();
    assert_eq!(
        states,
        [
            (State::Closed, State::Open),
            (State::Open, State::HalfOpen),
            (State::HalfOpen, State::Closed)
        ]
    );
    match &mine[0].reason {
        Reason::FailureRate {
            rate,
            threshold,
            calls,
        } => assert_eq!((*rate, *threshold, *calls), (75.0, 50, 4)),
        other => panic!("opened for {other:?}"),
    }
    assert_eq!(mine[1].at - mine[0].at, secs(1));
}

#[tokio::test(start_paused = true)]
async fn every_call_is_counted_once_whatever_its_end() {
    let b = Breaker::builder("oe-ledger")
        .window_calls(1000)
        .timeout(ms(50))
        .failure_rate(100)
        .build()
        .unwrap();
    let pool = Bulkhead::builder("oe-ledger-pool").pool(2).build().unwrap();
    let hold = Arc::new(Notify::new());
    let held: Vec<_> = (0..2)
        .map(|_| {
            let (b, pool, hold) = (b.clone(), pool.clone(), hold.clone());
            tokio::spawn(async move {
                b.call_in(&pool, async move {
                    hold.notified().await;
                    Ok::<(), DepError>(())
                })
                .await
            })
        })
        .collect();
    tokio::task::yield_now().await;
    // Full bulkhead: refused by the bulkhead, not the breaker.
    assert!(matches!(
        b.call_in(&pool, async { Ok::<(), DepError>(()) }).await,
        Err(Error::Rejected(Rejection::Full { .. }))
    ));
    hold.notify_waiters();
    for h in held {
        h.await.unwrap().unwrap();
    }
    let _ = call_for(&b, ms(100), true).await; // timed out
    let _ = call_for(&b, Duration::ZERO, false).await; // failed
    let _ = tokio::time::timeout(ms(10), call_for(&b, ms(40), true)).await; // cancelled
    let m = b.metrics();
    assert_eq!(
        (
            m.succeeded,
            m.failed,
            m.timed_out,
            m.cancelled,
            m.rejected_by_bulkhead
        ),
        (2, 1, 1, 1, 1),
        "{m:?}"
    );
    assert_eq!(
        m.calls,
        m.succeeded
            + m.failed
            + m.ignored
            + m.timed_out
            + m.panicked
            + m.cancelled
            + m.rejected
            + m.rejected_by_bulkhead,
        "{m:?}"
    );
    assert_eq!(m.rejected_by_reason.bulkhead_full, 1);
    assert_eq!(m.rejected_by_reason.timed_out, 1);
}
