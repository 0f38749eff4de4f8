//! Issue 30 where it meets the rest: `retry_on` follows what the breaker counts, a bulkhead
//! alone names the budget, and a call dropped mid-retry frees everything.

use super::*;

// --- Issues 30 x 31: `retry_on` defaults to what the breaker counts as a failure ---------

static OUTCOME_ATTEMPTS: AtomicU32 = AtomicU32::new(0);

#[retry(attempts = 3, backoff = "1ms", budget = 100, budget_floor = 100)]
#[breaker(name = "ol-retry-outcomes", failure = counted, ignore = client_side)]
async fn classified(answer: ApiError) -> Result<u32, ApiError> {
    OUTCOME_ATTEMPTS.fetch_add(1, SeqCst);
    Err(answer)
}

/// Issue 30: `retry_on` is "by default, what the breaker counts as a failure"; issue 31 adds
/// two outcomes that are not failures: an error `failure` refuses (a success) and an ignored
/// one. Neither is retried; a counted failure is, up to `attempts`.
#[tokio::test(start_paused = true)]
async fn only_what_the_breaker_counts_as_a_failure_is_retried() {
    for (answer, attempts) in [
        (ApiError::Invalid, 1),
        (ApiError::NotFound, 1),
        (ApiError::Down, 3),
    ] {
        OUTCOME_ATTEMPTS.store(0, SeqCst);
        assert_eq!(classified(answer.clone()).await, Err(answer.clone()));
        assert_eq!(OUTCOME_ATTEMPTS.load(SeqCst), attempts, "{answer:?}");
    }
    // `ignored` is the ignored outcome's own; the excluded error is a success, in the window
    // as a call that did not fail (the ignored one is not there).
    let m = registry().breaker("ol-retry-outcomes").unwrap().metrics();
    assert_eq!(
        (m.ignored, m.succeeded, m.failed, m.window_calls),
        (1, 1, 3, 4),
        "{m:?}"
    );
}

// --- Issue 30 with `#[bulkhead]` alone: the budget is the bulkhead's name ------------------

static POOLED_ATTEMPTS: AtomicU32 = AtomicU32::new(0);
static POOLED_GATE: tokio::sync::Notify = tokio::sync::Notify::const_new();

#[retry(attempts = 3, backoff = "1ms", budget = 100, budget_floor = 100)]
#[bulkhead(name = "ol-retry-pool", pool = 1)]
async fn pooled(wait: bool) -> Result<u32, ApiError> {
    POOLED_ATTEMPTS.fetch_add(1, SeqCst);
    if wait {
        POOLED_GATE.notified().await;
        return Ok(0);
    }
    Err(ApiError::Down)
}

/// `#[retry]` beside a bulkhead alone: every `Err` is retried (no breaker to ask), the
/// budget and its counts go by the bulkhead's name, and a refusal by the full pool is never
/// retried (it never reached the dependency).
#[tokio::test(start_paused = true)]
async fn beside_a_bulkhead_alone_errors_are_retried_and_a_full_pool_is_not() {
    assert_eq!(pooled(false).await, Err(ApiError::Down));
    assert_eq!(POOLED_ATTEMPTS.swap(0, SeqCst), 3);
    let holder = tokio::spawn(pooled(true));
    tokio::task::yield_now().await;
    assert_eq!(POOLED_ATTEMPTS.swap(0, SeqCst), 1);
    let r = pooled(false).await;
    assert!(
        matches!(r, Err(ApiError::Refused(Rejection::Full { .. }))),
        "{r:?}"
    );
    assert_eq!(
        POOLED_ATTEMPTS.load(SeqCst),
        0,
        "refused before any attempt ran"
    );
    POOLED_GATE.notify_one();
    assert_eq!(holder.await.unwrap(), Ok(0));
    let m = fusebox::metrics();
    let r = m
        .retry("ol-retry-pool")
        .expect("counted under the bulkhead's name");
    assert_eq!((r.calls, r.retries), (3, 2), "{r:?}");
}

// --- DESIGN.md x issue 30: a call dropped during a retry's attempt frees everything --------

static DROPPED_ATTEMPTS: AtomicU32 = AtomicU32::new(0);

#[retry(attempts = 3, backoff = "1ms", budget = 100, budget_floor = 100)]
#[breaker(name = "ol-retry-dropped")]
#[bulkhead(name = "ol-retry-dropped-pool", pool = 1)]
async fn hangs_on_retry() -> Result<u32, ApiError> {
    if DROPPED_ATTEMPTS.fetch_add(1, SeqCst) == 0 {
        return Err(ApiError::Down);
    }
    std::future::pending().await
}

/// "A dropped (cancelled) call frees its bulkhead permit ... and is not a failure", also when
/// it is dropped in its second attempt: the slot is free at once, the first attempt is the
/// one failure, the second is cancelled, and no third attempt starts.
#[tokio::test(start_paused = true)]
async fn a_call_dropped_in_its_second_attempt_frees_its_slot_and_counts_no_failure() {
    let call = tokio::spawn(hangs_on_retry());
    for _ in 0..10 {
        advance(ms(5)).await;
    }
    assert_eq!(DROPPED_ATTEMPTS.load(SeqCst), 2, "in its second attempt");
    let pool = registry().bulkhead("ol-retry-dropped-pool").unwrap();
    assert_eq!(pool.in_flight(), 1);
    call.abort();
    let _ = call.await;
    assert_eq!(pool.in_flight(), 0, "the slot is back");
    advance(secs(5)).await;
    assert_eq!(
        DROPPED_ATTEMPTS.load(SeqCst),
        2,
        "no attempt after the drop"
    );
    let m = registry().breaker("ol-retry-dropped").unwrap().metrics();
    assert_eq!((m.failed, m.cancelled, m.window_calls), (1, 1, 1), "{m:?}");
}
