//! Issue 31: an `Ok` that is a failure (`failure_if_ok`): it trips the breaker, is returned as
//! is, is never kept as the last good value, and is classified alike under `#[retry]`.

use super::*;

static STATUS: AtomicU16 = AtomicU16::new(200);

#[breaker(
    name = "oa-ok-failure",
    window_calls = 4,
    min_calls = 4,
    failure_if_ok = server_error,
    fallback = down_status
)]
async fn http_status() -> Result<u16, ApiError> {
    Ok(STATUS.load(SeqCst))
}

fn down_status(_: Error<ApiError>) -> Result<u16, ApiError> {
    Ok(0)
}

#[tokio::test(start_paused = true)]
async fn an_ok_classified_as_failure_trips_the_breaker_and_is_returned_as_is() {
    STATUS.store(503, SeqCst);
    for _ in 0..4 {
        assert_eq!(
            http_status().await,
            Ok(503),
            "returned as is, not the fallback's answer"
        );
    }
    let m = metrics("oa-ok-failure");
    assert_eq!((m.state, m.failed), (State::Open, 4));
    assert_eq!(http_status().await, Ok(0), "open: the fallback answers");
}

static STALE_STATUS: AtomicU16 = AtomicU16::new(200);

#[breaker(
    name = "oa-stale-ok-failure",
    window_calls = 10,
    failure_if_ok = server_error,
    stale_for = "10m"
)]
async fn page(id: u32) -> Result<u16, ApiError> {
    let _ = id;
    Ok(STALE_STATUS.load(SeqCst))
}

/// `stale_for` keeps the last *good* value: an `Ok` counted as a failure is not one, so it
/// is never what an open breaker answers with.
#[tokio::test(start_paused = true)]
async fn an_ok_classified_as_failure_is_not_kept_as_the_last_good_value() {
    assert_eq!(page(1).await, Ok(200));
    STALE_STATUS.store(503, SeqCst);
    assert_eq!(page(1).await, Ok(503));
    assert_eq!(page(2).await, Ok(503));
    registry()
        .breaker("oa-stale-ok-failure")
        .unwrap()
        .force_open();
    assert_eq!(page(1).await, Ok(200), "the last good value, not the 503");
    assert_eq!(
        page(2).await,
        Err(ApiError::Refused),
        "no good value kept for 2"
    );
}

static RETRIED: AtomicU32 = AtomicU32::new(0);

#[fusebox::retry(attempts = 3, backoff = "10ms")]
#[breaker(name = "oa-retry", window_calls = 2, min_calls = 2, ignore = invalid, failure_if_ok = server_error)]
async fn retried(r: Result<u16, ApiError>) -> Result<u16, ApiError> {
    RETRIED.fetch_add(1, SeqCst);
    r
}

/// Under `#[retry]` each attempt is classified as the call without a retry is: an ignored
/// error takes no place in the window (and, not a failure, is not retried); an `Ok` counted
/// as a failure is a failure.
#[tokio::test(start_paused = true)]
async fn a_retried_call_is_classified_like_a_single_one() {
    for _ in 0..3 {
        assert_eq!(
            retried(Err(ApiError::Invalid)).await,
            Err(ApiError::Invalid)
        );
    }
    assert_eq!(RETRIED.load(SeqCst), 3, "an ignored error is not retried");
    let m = metrics("oa-retry");
    assert_eq!(
        (m.state, m.window_calls, m.ignored, m.failed),
        (State::Closed, 0, 3, 0)
    );
    assert_eq!(retried(Ok(503)).await, Ok(503));
    assert_eq!(retried(Ok(503)).await, Ok(503));
    assert_eq!(metrics("oa-retry").state, State::Open);
}
