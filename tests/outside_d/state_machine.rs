//! What calls do to the breaker's states: a panic is a failure, a dropped trial gives its slot
//! back, an open breaker past `alert_after` is stuck, half-open admits its share, and the
//! recorder sees it all in order.

use super::*;

#[breaker(name = "d-panics", window_calls = 2, min_calls = 2, open_for = "30s")]
#[bulkhead(name = "d-panics-pool", pool = 1)]
async fn panics(boom: bool) -> Result<u8, DepError> {
    if boom {
        panic!("the dependency's client panicked");
    }
    Ok(1)
}

#[tokio::test(start_paused = true)]
async fn a_panic_is_a_failure_and_frees_the_slot() {
    for _ in 0..2 {
        assert!(tokio::spawn(panics(true)).await.is_err());
    }
    // Panics are failures: the window of two is all failures and opens (counted apart from
    // `failed`, as the field's rustdoc says).
    let m = breaker_metrics("d-panics");
    assert_eq!(
        (m.state, m.panicked, m.failure_rate),
        (State::Open, 2, 100.0),
        "{m:?}"
    );
    assert_eq!(bulkhead_metrics("d-panics-pool").in_flight, 0);
}

#[breaker(
    name = "d-dropped-trial",
    window_calls = 2,
    min_calls = 2,
    open_for = "5s",
    half_open_calls = 1
)]
async fn trial_call(mode: u8) -> Result<u8, DepError> {
    match mode {
        0 => Ok(0),
        1 => Err(DepError::Down),
        _ => pending().await,
    }
}

#[tokio::test(start_paused = true)]
async fn a_dropped_trial_gives_its_half_open_slot_back() {
    for _ in 0..2 {
        let _ = trial_call(1).await;
    }
    advance(Duration::from_secs(5)).await;
    // The only trial slot is taken by a call that the caller then drops.
    let trial = tokio::spawn(trial_call(2));
    tokio::task::yield_now().await;
    assert!(matches!(
        trial_call(0).await,
        Err(DepError::Rejected(Rejection::Open {
            state: State::HalfOpen,
            ..
        }))
    ));
    trial.abort();
    let _ = trial.await;
    // The slot is free again at once: the next call is the trial, passes, and closes.
    assert_eq!(trial_call(0).await, Ok(0));
    let m = breaker_metrics("d-dropped-trial");
    assert_eq!(
        (m.state, m.cancelled, m.failed),
        (State::Closed, 1, 2),
        "{m:?}"
    );
}

#[breaker(
    name = "d-alert",
    window_calls = 2,
    min_calls = 2,
    open_for = "10m",
    alert_after = "2s"
)]
async fn alerting() -> Result<u8, DepError> {
    Err(DepError::Down)
}

#[tokio::test(start_paused = true)]
async fn a_breaker_open_past_alert_after_is_stuck_and_not_before() {
    for _ in 0..2 {
        let _ = alerting().await;
    }
    assert!(!breaker_metrics("d-alert").stuck);
    advance(ms(1900)).await;
    assert!(!breaker_metrics("d-alert").stuck);
    advance(ms(200)).await;
    let m = breaker_metrics("d-alert");
    assert!(m.stuck && m.state == State::Open, "{m:?}");
    assert!(fusebox::metrics::stuck_breakers()
        .iter()
        .any(|b| b.name == "d-alert"));
}

static SHARE_FALLBACKS: AtomicU32 = AtomicU32::new(0);

fn share_fallback(_: Error<DepError>) -> Result<u8, DepError> {
    SHARE_FALLBACKS.fetch_add(1, SeqCst);
    Ok(9)
}

#[breaker(name = "d-share", window_calls = 2, min_calls = 2, open_for = "5s", fallback = share_fallback)]
async fn shared(fail: bool) -> Result<u8, DepError> {
    if fail {
        Err(DepError::Down)
    } else {
        Ok(1)
    }
}

#[tokio::test(start_paused = true)]
async fn half_open_admits_about_five_percent_and_answers_the_rest_with_the_fallback() {
    for _ in 0..2 {
        assert_eq!(shared(true).await, Ok(9));
    }
    advance(Duration::from_secs(5)).await;
    SHARE_FALLBACKS.store(0, SeqCst);
    let mut live = 0;
    for _ in 0..400 {
        if shared(false).await == Ok(1) {
            live += 1;
        }
        advance(ms(10)).await;
    }
    // 4 s of half-open (under its 30 s window): about 5 % of 400 calls go through.
    assert_eq!(
        registry().breaker("d-share").unwrap().state(),
        State::HalfOpen
    );
    assert!((10..=30).contains(&live), "{live} of 400 admitted");
    assert_eq!(SHARE_FALLBACKS.load(SeqCst), 400 - live);
    assert_eq!(
        breaker_metrics("d-share").rejected_by_reason.half_open,
        400 - live as u64
    );
}

#[cfg(feature = "testing")]
#[tokio::test(start_paused = true)]
async fn the_recorder_sees_open_half_open_and_closed_in_order() {
    #[breaker(
        name = "d-recorded",
        window_calls = 2,
        min_calls = 2,
        open_for = "5s",
        half_open_calls = 1
    )]
    async fn recorded(fail: bool) -> Result<u8, DepError> {
        if fail {
            Err(DepError::Down)
        } else {
            Ok(1)
        }
    }
    let scope = fusebox::testing::scope();
    let mut rec = scope.recorder();
    for _ in 0..2 {
        let _ = recorded(true).await;
    }
    advance(Duration::from_secs(5)).await;
    assert_eq!(recorded(false).await, Ok(1));
    assert_eq!(
        rec.states_of("d-recorded"),
        vec![State::Closed, State::Open, State::HalfOpen, State::Closed]
    );
    fusebox::testing::assert_calls("d-recorded", 1, 2, 0);
}
