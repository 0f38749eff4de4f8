//! Issue 31: half-open: ignored trials give their slot back, with and without a share, and
//! the half-open bound.

use super::*;

#[breaker(
    name = "oa-half-open-calls",
    window_calls = 2,
    min_calls = 2,
    open_for = "1s",
    half_open_calls = 3,
    ignore = invalid
)]
async fn trial(r: Result<u16, ApiError>) -> Result<u16, ApiError> {
    r
}

async fn open_then_half_open<F, Fut>(name: &str, call: F)
where
    F: Fn(Result<u16, ApiError>) -> Fut,
    Fut: std::future::Future<Output = Result<u16, ApiError>>,
{
    registry().breaker(name).unwrap().reset();
    call(Err(ApiError::Down)).await.unwrap_err();
    call(Err(ApiError::Down)).await.unwrap_err();
    assert_eq!(registry().breaker(name).unwrap().state(), State::Open);
    advance(secs(1)).await;
}

/// Ignored errors in half-open give their trial slot back: four of them leave it
/// half-open, as do three passed trials and an ignored one; the third passed trial closes.
#[tokio::test(start_paused = true)]
async fn ignored_trials_neither_pass_nor_fail_with_counted_trials() {
    let name = "oa-half-open-calls";
    open_then_half_open(name, trial).await;
    for _ in 0..4 {
        assert_eq!(trial(Err(ApiError::Invalid)).await, Err(ApiError::Invalid));
    }
    assert_eq!(metrics(name).state, State::HalfOpen);
    trial(Ok(200)).await.unwrap();
    trial(Ok(200)).await.unwrap();
    trial(Err(ApiError::Invalid)).await.unwrap_err();
    assert_eq!(metrics(name).state, State::HalfOpen);
    trial(Ok(200)).await.unwrap();
    assert_eq!(metrics(name).state, State::Closed);
}

#[breaker(
    name = "oa-half-open-share",
    window_calls = 2,
    min_calls = 2,
    open_for = "1s",
    half_open_pct = 100,
    half_open_window = "5s",
    ignore = invalid
)]
async fn share_trial(r: Result<u16, ApiError>) -> Result<u16, ApiError> {
    r
}

/// With a share, ignored calls are not judged: a half-open window of nothing but ignored
/// errors does not close the breaker, and a failure among them reopens it at 100 %.
#[tokio::test(start_paused = true)]
async fn ignored_trials_are_not_judged_with_a_share() {
    let name = "oa-half-open-share";
    open_then_half_open(name, share_trial).await;
    for _ in 0..10 {
        share_trial(Err(ApiError::Invalid)).await.unwrap_err();
        advance(ms(600)).await;
    }
    assert_eq!(metrics(name).state, State::HalfOpen, "nothing judged yet");
    share_trial(Err(ApiError::Down)).await.unwrap_err();
    share_trial(Err(ApiError::Invalid)).await.unwrap_err();
    assert_eq!(metrics(name).state, State::Open);
}

#[breaker(
    name = "oa-half-open-bound",
    window_calls = 2,
    min_calls = 2,
    open_for = "1s",
    half_open_calls = 3
)]
async fn bounded_trial(r: Result<u16, ApiError>) -> Result<u16, ApiError> {
    r
}

/// Fewer trials than `half_open_calls` within the bound (30 s): the breaker reopens, and
/// says so to whoever looks, not only to the next caller.
#[tokio::test(start_paused = true)]
async fn a_half_open_short_of_its_trials_reopens_at_the_bound() {
    let name = "oa-half-open-bound";
    open_then_half_open(name, bounded_trial).await;
    bounded_trial(Ok(200)).await.unwrap();
    advance(secs(29)).await;
    assert_eq!(registry().breaker(name).unwrap().state(), State::HalfOpen);
    advance(secs(1)).await;
    assert_eq!(registry().breaker(name).unwrap().state(), State::Open);
    assert_eq!(metrics(name).state, State::Open);
    assert_eq!(bounded_trial(Ok(200)).await, Err(ApiError::Refused));
}

#[breaker(
    name = "oa-half-open-long-trials",
    window_calls = 2,
    min_calls = 2,
    open_for = "1s",
    half_open_calls = 2,
    half_open_timeout = "45s"
)]
async fn long_trial(r: Result<u16, ApiError>) -> Result<u16, ApiError> {
    r
}

/// With a trial timeout longer than 30 s, the bound is the trial timeout: a trial admitted
/// first gets its whole time.
#[tokio::test(start_paused = true)]
async fn the_half_open_bound_is_the_trial_timeout_when_longer() {
    let name = "oa-half-open-long-trials";
    open_then_half_open(name, long_trial).await;
    long_trial(Ok(200)).await.unwrap();
    advance(secs(44)).await;
    assert_eq!(registry().breaker(name).unwrap().state(), State::HalfOpen);
    advance(secs(1)).await;
    assert_eq!(registry().breaker(name).unwrap().state(), State::Open);
}
