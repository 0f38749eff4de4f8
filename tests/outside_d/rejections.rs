//! Rejections counted under their reason, an open breaker that takes no bulkhead permit, and
//! a full pool that is never a failure.

use super::*;

/// 0: answers, 1: fails, 2: hangs.
#[breaker(
    name = "d-reasons",
    window_calls = 4,
    min_calls = 4,
    open_for = "10s",
    half_open_calls = 1,
    timeout = "100ms"
)]
#[bulkhead(name = "d-reasons-pool", pool = 1)]
async fn reasons(mode: u8) -> Result<u8, DepError> {
    match mode {
        0 => Ok(0),
        1 => Err(DepError::Down),
        _ => pending().await,
    }
}

#[tokio::test(start_paused = true)]
async fn every_rejection_is_counted_under_its_reason() {
    // A call holding the only slot makes the next one `Full`, counted as bulkhead_full.
    let held = tokio::spawn(reasons(2));
    tokio::task::yield_now().await;
    assert!(matches!(
        reasons(0).await,
        Err(DepError::Rejected(Rejection::Full { .. }))
    ));
    // The held call times out: a failure, counted as timed_out.
    assert!(matches!(
        held.await.unwrap(),
        Err(DepError::Rejected(Rejection::TimedOut { .. }))
    ));
    let m = breaker_metrics("d-reasons");
    assert_eq!(m.rejected_by_reason.bulkhead_full, 1, "{m:?}");
    assert_eq!(m.rejected_by_reason.timed_out, 1, "{m:?}");
    assert_eq!(m.timed_out, 1);

    // Three more failures fill the window of 4: open.
    for _ in 0..3 {
        assert_eq!(reasons(1).await, Err(DepError::Down));
    }
    assert_eq!(
        registry().breaker("d-reasons").unwrap().state(),
        State::Open
    );
    assert!(matches!(
        reasons(0).await,
        Err(DepError::Rejected(Rejection::Open {
            state: State::Open,
            ..
        }))
    ));
    assert_eq!(breaker_metrics("d-reasons").rejected_by_reason.open, 1);

    // Half-open with one trial: while it is in flight, the next call is refused as half_open.
    advance(Duration::from_secs(10)).await;
    let trial = tokio::spawn(reasons(2));
    tokio::task::yield_now().await;
    assert_eq!(
        registry().breaker("d-reasons").unwrap().state(),
        State::HalfOpen
    );
    assert!(matches!(
        reasons(0).await,
        Err(DepError::Rejected(Rejection::Open {
            state: State::HalfOpen,
            ..
        }))
    ));
    assert_eq!(breaker_metrics("d-reasons").rejected_by_reason.half_open, 1);
    // The hanging trial times out: a second timeout.
    let _ = trial.await;

    // Forced open: refused as forced_open, with that state.
    let b = registry().breaker("d-reasons").unwrap();
    b.force_open();
    assert!(matches!(
        reasons(0).await,
        Err(DepError::Rejected(Rejection::Open {
            state: State::ForcedOpen,
            ..
        }))
    ));
    let m = breaker_metrics("d-reasons");
    let r = &m.rejected_by_reason;
    assert_eq!((r.open, r.forced_open, r.half_open), (1, 1, 1), "{m:?}");
    assert_eq!((r.bulkhead_full, r.timed_out), (1, 2), "{m:?}");
    // `rejected` is this breaker's own refusals: open, forced open, half-open.
    assert_eq!((m.rejected, m.rejected_by_bulkhead), (3, 1), "{m:?}");
    // The bulkhead saw one refusal of its own and never more than one call in flight.
    let p = bulkhead_metrics("d-reasons-pool");
    assert_eq!(
        (p.pool, p.in_flight, p.peak, p.rejected),
        (1, 0, 1, 1),
        "{p:?}"
    );
}

#[breaker(
    name = "d-open-no-permit",
    window_calls = 2,
    min_calls = 2,
    open_for = "30s"
)]
#[bulkhead(name = "d-open-no-permit-pool", pool = 2)]
async fn behind_pool(fail: bool) -> Result<u8, DepError> {
    if fail {
        Err(DepError::Down)
    } else {
        Ok(1)
    }
}

#[tokio::test(start_paused = true)]
async fn an_open_breaker_takes_no_bulkhead_permit_and_a_full_pool_is_no_failure() {
    for _ in 0..2 {
        let _ = behind_pool(true).await;
    }
    let admitted = bulkhead_metrics("d-open-no-permit-pool").admitted;
    for _ in 0..5 {
        assert!(matches!(
            behind_pool(false).await,
            Err(DepError::Rejected(Rejection::Open { .. }))
        ));
    }
    let p = bulkhead_metrics("d-open-no-permit-pool");
    assert_eq!((p.admitted, p.rejected), (admitted, 0), "{p:?}");
}

#[breaker(name = "d-full-not-failure", window_calls = 2, min_calls = 2)]
#[bulkhead(name = "d-full-not-failure-pool", pool = 1)]
async fn narrow(hang: bool) -> Result<u8, DepError> {
    if hang {
        pending().await
    } else {
        Ok(1)
    }
}

#[tokio::test(start_paused = true)]
async fn bulkhead_refusals_never_open_the_breaker() {
    let held = tokio::spawn(narrow(true));
    tokio::task::yield_now().await;
    for _ in 0..10 {
        assert!(matches!(
            narrow(false).await,
            Err(DepError::Rejected(Rejection::Full { .. }))
        ));
    }
    let m = breaker_metrics("d-full-not-failure");
    assert_eq!((m.state, m.failed), (State::Closed, 0), "{m:?}");
    held.abort();
    let _ = held.await;
    // The aborted call gave its slot back and was not a failure.
    assert_eq!(narrow(false).await, Ok(1));
    let m = breaker_metrics("d-full-not-failure");
    assert_eq!((m.failed, m.cancelled), (0, 1), "{m:?}");
    assert_eq!(bulkhead_metrics("d-full-not-failure-pool").in_flight, 0);
}
