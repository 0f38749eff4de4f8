//! Issue 31: the closed window: an ignored error is neither a success nor a failure, and
//! `ignore` comes before `failure`.

use super::*;

#[breaker(name = "oa-closed", window_calls = 2, min_calls = 2, ignore = invalid, fallback = down)]
async fn closed_call(r: Result<u16, ApiError>) -> Result<u16, ApiError> {
    r
}

static FALLBACKS: AtomicU32 = AtomicU32::new(0);

fn down(_: Error<ApiError>) -> Result<u16, ApiError> {
    FALLBACKS.fetch_add(1, SeqCst);
    Ok(0)
}

/// r4j's scenarios: a failure and an ignored error in a window of 2 stay closed, and the
/// failure rate is 100 %, not 50 %. The ignored error goes back to the caller as is: no
/// fallback for it.
#[tokio::test(start_paused = true)]
async fn an_ignored_error_is_neither_success_nor_failure_in_the_window() {
    assert_eq!(
        closed_call(Err(ApiError::Invalid)).await,
        Err(ApiError::Invalid)
    );
    assert_eq!(
        FALLBACKS.load(SeqCst),
        0,
        "an ignored error gets no fallback"
    );
    assert_eq!(closed_call(Err(ApiError::Down)).await, Ok(0));
    assert_eq!(
        FALLBACKS.load(SeqCst),
        1,
        "a counted failure gets the fallback"
    );
    let m = metrics("oa-closed");
    assert_eq!(
        (m.state, m.window_calls, m.ignored, m.failed),
        (State::Closed, 1, 1, 1)
    );
    assert_eq!(m.failure_rate, 100.0);
    for _ in 0..10 {
        closed_call(Err(ApiError::Invalid)).await.unwrap_err();
    }
    assert_eq!(
        metrics("oa-closed").state,
        State::Closed,
        "min_calls is not filled by ignored calls"
    );
    closed_call(Err(ApiError::Down)).await.unwrap();
    assert_eq!(metrics("oa-closed").state, State::Open);
}

/// `failure` keeps its meaning: an error it refuses counts as a success (a 404 is the
/// dependency answering), while `ignore` wins over it when both say yes.
#[breaker(
    name = "oa-both",
    window_calls = 4,
    min_calls = 4,
    failure = |e: &ApiError| *e != ApiError::NotFound,
    ignore = |e: &ApiError| *e == ApiError::Invalid
)]
async fn both_call(r: Result<u16, ApiError>) -> Result<u16, ApiError> {
    r
}

#[tokio::test(start_paused = true)]
async fn failure_excludes_as_a_success_and_ignore_comes_first() {
    both_call(Err(ApiError::NotFound)).await.unwrap_err();
    both_call(Err(ApiError::Invalid)).await.unwrap_err();
    both_call(Err(ApiError::Down)).await.unwrap_err();
    let m = metrics("oa-both");
    // NotFound: a call that did not fail; Invalid: no place; Down: a failure.
    assert_eq!((m.window_calls, m.failed, m.failure_rate), (2, 1, 50.0));
    both_call(Err(ApiError::NotFound)).await.unwrap_err();
    both_call(Err(ApiError::NotFound)).await.unwrap_err();
    // 1 failure in 4: below 50 %.
    assert_eq!(metrics("oa-both").state, State::Closed);
}
