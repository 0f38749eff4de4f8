//! Issue 2: classification and trial timeouts.

use super::*;

fn never(_: &DepError) -> bool {
    false
}

#[breaker(name = "oe-timeouts-count", timeout = "50ms", failure = never, window_calls = 4, min_calls = 4)]
async fn slow_answer(takes: Duration) -> Result<(), DepError> {
    tokio::time::sleep(takes).await;
    Err(DepError::Down)
}

#[tokio::test(start_paused = true)]
async fn a_timeout_counts_even_when_the_failure_predicate_counts_no_error() {
    for _ in 0..4 {
        assert_eq!(slow_answer(Duration::ZERO).await, Err(DepError::Down));
    }
    let b = registry().breaker("oe-timeouts-count").unwrap();
    assert_eq!(
        b.state(),
        State::Closed,
        "errors the predicate refuses are no failures"
    );
    // Two timeouts in the last four calls: 50 %.
    for _ in 0..2 {
        match slow_answer(ms(100)).await {
            Err(DepError::Refused(Rejection::TimedOut { after, .. })) => assert_eq!(after, ms(50)),
            other => panic!("expected a timeout, got {other:?}"),
        }
    }
    let m = b.metrics();
    assert_eq!((m.timed_out, m.state), (2, State::Open), "{m:?}");
}

#[tokio::test(start_paused = true)]
async fn trial_calls_run_under_their_own_timeout() {
    let b = Breaker::builder("oe-trial-timeout")
        .window_calls(2)
        .min_calls(2)
        .timeout(ms(100))
        .half_open_timeout(secs(1))
        .open_for(secs(1))
        .half_open_calls(1)
        .build()
        .unwrap();
    for _ in 0..2 {
        assert!(matches!(
            call_for(&b, ms(500), true).await,
            Err(Error::Rejected(Rejection::TimedOut { .. }))
        ));
    }
    assert_eq!(b.state(), State::Open);
    advance(secs(1)).await;
    call_for(&b, ms(500), true)
        .await
        .expect("a 500 ms trial is within the 1 s trial timeout");
    assert_eq!(b.state(), State::Closed);
    assert!(
        call_for(&b, ms(500), true).await.is_err(),
        "closed again: the call's own 100 ms timeout"
    );
}

#[tokio::test(start_paused = true)]
async fn a_full_bulkhead_is_never_a_failure_of_the_dependency() {
    let b = Breaker::builder("oe-full-not-failure")
        .window_calls(2)
        .min_calls(2)
        .build()
        .unwrap();
    let pool = Bulkhead::builder("oe-full-not-failure")
        .pool(1)
        .build()
        .unwrap();
    let _permit = pool.acquire().await.unwrap();
    for _ in 0..10 {
        let r = b.call_in(&pool, async { Ok::<(), DepError>(()) }).await;
        assert!(matches!(r, Err(Error::Rejected(Rejection::Full { .. }))));
    }
    let m = b.metrics();
    assert_eq!(
        (m.state, m.failed, m.window_calls),
        (State::Closed, 0, 0),
        "{m:?}"
    );
    assert_eq!(m.rejected_by_bulkhead, 10);
}

#[tokio::test(start_paused = true)]
async fn an_open_breaker_takes_no_bulkhead_permit() {
    let b = Breaker::builder("oe-open-no-permit").build().unwrap();
    let pool = Bulkhead::builder("oe-open-no-permit")
        .pool(1)
        .build()
        .unwrap();
    b.force_open();
    let _ = b.call_in(&pool, async { Ok::<(), DepError>(()) }).await;
    let m = fusebox::metrics();
    let p = m
        .bulkheads
        .iter()
        .find(|p| p.name == "oe-open-no-permit")
        .unwrap();
    assert_eq!((p.admitted, p.peak, p.rejected), (0, 0, 0));
}
