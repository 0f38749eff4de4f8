//! Issue 31's outcomes where they meet the fallback, `stale_for` and a shadow: only a counted
//! error is answered, and a shadow ignores what the live breaker ignores.

use super::*;

// --- Issue 31: what each outcome does to the fallback and to `stale_for` ------------------

static FALLBACKS: AtomicU32 = AtomicU32::new(0);

fn from_cache(_: Error<ApiError>) -> Result<u16, ApiError> {
    FALLBACKS.fetch_add(1, SeqCst);
    Ok(299)
}

fn server_error(status: &u16) -> bool {
    *status >= 500
}

#[breaker(
    name = "ol-outcome-fallback",
    ignore = client_side,
    failure = counted,
    failure_if_ok = server_error,
    stale_for = "10m",
    fallback = from_cache
)]
async fn status_of(id: u32) -> Result<u16, ApiError> {
    let _ = id;
    ANSWER.lock().unwrap().clone()
}

/// What `status_of` answers next (one test calls it).
static ANSWER: Mutex<Result<u16, ApiError>> = Mutex::new(Ok(200));

async fn status_answering(id: u32, answer: Result<u16, ApiError>) -> Result<u16, ApiError> {
    *ANSWER.lock().unwrap() = answer;
    status_of(id).await
}

/// The outcomes table of `#[breaker]`'s reference: the fallback and `stale_for` answer a
/// counted `Err` only. An ignored error and an error `failure` refuses go back unchanged, an
/// `Ok` that `failure_if_ok` counts is returned as is, and none of them calls the fallback or
/// serves the last good value, though one is there for the same arguments.
#[tokio::test(start_paused = true)]
async fn the_fallback_and_the_last_good_value_answer_counted_errors_only() {
    FALLBACKS.store(0, SeqCst);
    assert_eq!(
        status_answering(7, Ok(200)).await,
        Ok(200),
        "a good value to serve"
    );
    assert_eq!(
        status_answering(7, Err(ApiError::Invalid)).await,
        Err(ApiError::Invalid)
    );
    assert_eq!(
        status_answering(7, Err(ApiError::NotFound)).await,
        Err(ApiError::NotFound)
    );
    assert_eq!(status_answering(7, Ok(503)).await, Ok(503));
    assert_eq!(FALLBACKS.load(SeqCst), 0, "no fallback for any of them");
    // A counted error is answered by the last good value of these arguments (younger than
    // `stale_for`), and for other arguments by the fallback.
    assert_eq!(status_answering(7, Err(ApiError::Down)).await, Ok(200));
    assert_eq!(status_answering(8, Err(ApiError::Down)).await, Ok(299));
    assert_eq!(FALLBACKS.load(SeqCst), 1);
    let m = registry().breaker("ol-outcome-fallback").unwrap().metrics();
    assert_eq!(
        (
            m.ignored,
            m.succeeded,
            m.failed,
            m.window_calls,
            m.stale_served
        ),
        (1, 2, 3, 5, 1),
        "{m:?}"
    );
    tokio::time::advance(ms(1)).await;
}

// --- Issues 29 x 31: a shadow classifies as the live breaker does --------------------------

/// A shadow is "judged on the same calls beside the live one": the same outcomes too. Calls
/// the live breaker ignores take no place in the shadow's window either, so a strict shadow
/// (any failure of two calls) would not have opened on client-side errors, and does on two
/// counted failures.
#[tokio::test(start_paused = true)]
async fn a_shadow_ignores_what_the_live_breaker_ignores() {
    let b = Breaker::builder("ol-shadow-outcomes")
        .build_detached()
        .unwrap();
    b.set_shadow([
        ("window_calls", "2"),
        ("min_calls", "2"),
        ("failure_rate", "50"),
    ])
    .unwrap();
    for _ in 0..5 {
        let _ = b
            .call_classified(async { Err::<u16, _>(ApiError::Invalid) }, classify)
            .await;
    }
    let s = b.shadow().unwrap();
    assert_eq!(
        (s.calls_seen, s.window_calls, s.state),
        (5, 0, State::Closed),
        "{s:?}"
    );
    assert_eq!(s.would_have_opened_at, None);
    for _ in 0..2 {
        let _ = b
            .call_classified(async { Err::<u16, _>(ApiError::Down) }, classify)
            .await;
    }
    let s = b.shadow().unwrap();
    assert!(s.would_have_opened_at.is_some(), "{s:?}");
    assert_eq!(b.state(), State::Closed, "the live breaker refuses nothing");
}
