//! Issues 3 and 8: the call's path through the attributes (breaker admission, then the
//! bulkhead's permit, then the timeout), and what answers a function with no `Result` or a
//! call a full bulkhead refused.

use super::*;

// --- Issue 3: breaker admission, then bulkhead permit, then timeout, then the call ------------

#[breaker(name = "ok-order-bf", timeout = "100ms")]
#[bulkhead(name = "ok-order-bf-pool", pool = 1, max_wait = "1s")]
async fn breaker_first(takes: Duration) -> Result<(), DepError> {
    sleep(takes).await;
    Ok(())
}

#[bulkhead(name = "ok-order-hf-pool", pool = 1, max_wait = "1s")]
#[breaker(name = "ok-order-hf", timeout = "100ms")]
async fn bulkhead_first(takes: Duration) -> Result<(), DepError> {
    sleep(takes).await;
    Ok(())
}

/// The timeout starts after the bulkhead permit, whichever attribute is written first: calls
/// of 80 ms queued behind a pool of one wait up to 160 ms for their slot and none times out
/// under a 100 ms timeout.
#[tokio::test(start_paused = true)]
async fn the_timeout_starts_once_the_permit_is_held_in_either_order() {
    let queued: Vec<_> = (0..3)
        .map(|_| tokio::spawn(breaker_first(ms(80))))
        .chain((0..3).map(|_| tokio::spawn(bulkhead_first(ms(80)))))
        .collect();
    for call in queued {
        assert_eq!(call.await.unwrap(), Ok(()), "waited for a slot, then ran");
    }
    for name in ["ok-order-bf", "ok-order-hf"] {
        let m = registry().breaker(name).unwrap().metrics();
        assert_eq!((m.succeeded, m.timed_out), (3, 0), "{name}");
    }
    for pool in ["ok-order-bf-pool", "ok-order-hf-pool"] {
        let m = registry().bulkhead(pool).unwrap().metrics();
        assert_eq!((m.admitted, m.rejected, m.peak), (3, 0, 1), "{pool}");
    }
}

// --- Issue 3: a function that returns no `Result` ---------------------------------------------

static BANNER_FALLBACKS: AtomicU32 = AtomicU32::new(0);

fn plain_banner(_: Error<std::convert::Infallible>) -> String {
    BANNER_FALLBACKS.fetch_add(1, SeqCst);
    "default".into()
}

#[breaker(
    name = "ok-no-result",
    timeout = "100ms",
    window_calls = 2,
    min_calls = 2,
    failure_rate = 100,
    fallback = plain_banner
)]
async fn banner(takes: Duration) -> String {
    sleep(takes).await;
    "live".into()
}

/// "A function whose return type is not a `Result` is accepted only with a fallback
/// (timeouts and panics are then its failures)": two timeouts open it; the fallback answers
/// each of them and the refusals after.
#[tokio::test(start_paused = true)]
async fn a_functions_timeouts_are_its_failures_when_it_returns_no_result() {
    assert_eq!(banner(ms(1)).await, "live");
    assert_eq!(banner(secs(1)).await, "default");
    assert_eq!(banner(secs(1)).await, "default");
    let b = registry().breaker("ok-no-result").unwrap();
    assert_eq!(b.metrics().timed_out, 2);
    assert_eq!(b.state(), State::Open, "2 timeouts of the last 2");
    assert_eq!(banner(ms(1)).await, "default", "refused: the fallback");
    assert_eq!(BANNER_FALLBACKS.load(SeqCst), 3);
}

// --- Issue 8 and DESIGN's `stale_for`: a full bulkhead is a rejection too ---------------------

static PRICE_CALLS: AtomicU32 = AtomicU32::new(0);

#[breaker(name = "ok-stale-full", stale_for = "10m", stale_key = item)]
#[bulkhead(name = "ok-stale-full-pool", pool = 1)]
async fn price(item: u32, gate: Option<Arc<tokio::sync::Notify>>) -> Result<String, DepError> {
    PRICE_CALLS.fetch_add(1, SeqCst);
    if let Some(gate) = gate {
        gate.notified().await;
    }
    Ok(format!("price of {item}: {}", PRICE_CALLS.load(SeqCst)))
}

/// "While rejected or failing, answer with the last `Ok` value for the same arguments": a
/// call refused by the full bulkhead gets its item's last good price; an item never priced
/// gets the refusal.
#[tokio::test(start_paused = true)]
async fn a_call_refused_by_a_full_bulkhead_gets_the_last_good_value() {
    let fresh = price(7, None).await.unwrap();
    let gate = Arc::new(tokio::sync::Notify::new());
    let holder = tokio::spawn(price(8, Some(gate.clone())));
    tokio::task::yield_now().await;
    advance(secs(60)).await;
    assert_eq!(
        price(7, None).await,
        Ok(fresh),
        "stale, while the pool is full"
    );
    assert!(
        matches!(
            price(9, None).await,
            Err(DepError::Unavailable(Rejection::Full { .. }))
        ),
        "nothing saved for item 9"
    );
    gate.notify_one();
    holder.await.unwrap().unwrap();
    let m = registry().breaker("ok-stale-full").unwrap().metrics();
    assert_eq!(m.stale_served, 1);
    assert_eq!(PRICE_CALLS.load(SeqCst), 2, "the refused calls never ran");
}
