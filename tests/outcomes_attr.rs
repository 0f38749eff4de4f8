//! Issue 31 through the attribute: `ignore = path` and `failure_if_ok = path`.

use std::time::Duration;

use fusebox::{breaker, registry, Error, Rejection, State};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Dep {
    Down,
    Invalid,
}

impl From<Rejection> for Dep {
    fn from(_: Rejection) -> Self {
        Dep::Down
    }
}

fn invalid(e: &Dep) -> bool {
    *e == Dep::Invalid
}

fn server_error(status: &u16) -> bool {
    *status >= 500
}

#[breaker(name = "attr-ignore", window_calls = 2, min_calls = 2, ignore = invalid)]
async fn fetch(r: Result<u16, Dep>) -> Result<u16, Dep> {
    r
}

#[tokio::test(start_paused = true)]
async fn ignored_errors_take_no_place_in_the_window() {
    fetch(Err(Dep::Down)).await.unwrap_err();
    for _ in 0..4 {
        assert_eq!(fetch(Err(Dep::Invalid)).await, Err(Dep::Invalid));
    }
    let m = registry().breaker("attr-ignore").unwrap().metrics();
    assert_eq!((m.state, m.window_calls, m.ignored), (State::Closed, 1, 4));
    fetch(Err(Dep::Down)).await.unwrap_err();
    assert_eq!(
        registry().breaker("attr-ignore").unwrap().state(),
        State::Open
    );
}

#[breaker(
    name = "attr-ok-failure",
    window_calls = 3,
    min_calls = 3,
    failure_if_ok = server_error,
    fallback = on_error
)]
async fn status(code: u16) -> Result<u16, Dep> {
    Ok(code)
}

fn on_error(_: Error<Dep>) -> Result<u16, Dep> {
    Ok(0)
}

#[tokio::test(start_paused = true)]
async fn an_ok_classified_as_failure_trips_and_is_returned_as_is() {
    for _ in 0..3 {
        // Counted as a failure, returned as is: the fallback answers only an `Err`.
        assert_eq!(status(503).await, Ok(503));
    }
    let b = registry().breaker("attr-ok-failure").unwrap();
    assert_eq!((b.state(), b.metrics().failed), (State::Open, 3));
    // Open: the rejection goes to the fallback.
    assert_eq!(status(200).await, Ok(0));
    tokio::time::advance(Duration::from_secs(60)).await;
}
