//! Every annotated breaker and bulkhead is in the registry from the start, before its first
//! call: listed with zero counts, reachable by an operator, the same one the call site uses.
// Users who forbid unsafe code can still use the attributes: the link-time list adds none.
#![forbid(unsafe_code)]

mod common;

use common::DepError;
use fusebox::{breaker, bulkhead, export, metrics, registry, Error, Rejection, State};

#[breaker(name = "prelisted-never-called", trip_p95 = "500ms")]
async fn never_called() -> Result<(), DepError> {
    Ok(())
}

#[breaker(name = "prelisted-forced", window_calls = 4)]
#[bulkhead(name = "prelisted-pool", pool = 3)]
async fn forced_before_traffic() -> Result<u8, DepError> {
    Ok(7)
}

fn degraded(_: Error<DepError>) -> Result<&'static str, DepError> {
    Ok("fallback")
}

#[breaker(name = "prelisted-generic", fallback = degraded)]
async fn generic<T: Send>(_t: T) -> Result<&'static str, DepError> {
    Ok("called")
}

#[tokio::test(start_paused = true)]
async fn an_annotated_breaker_is_listed_with_zero_counts_before_its_first_call() {
    let b = registry()
        .breaker("prelisted-never-called")
        .expect("listed before any call");
    assert_eq!(b.state(), State::Closed);
    assert_eq!(b.config().slow().unwrap().rate, 5, "with its own settings");
    let m = metrics();
    let snap = m.breaker("prelisted-never-called").unwrap();
    assert_eq!((snap.calls, snap.rejected), (0, 0));
    assert!(m.bulkhead("prelisted-pool").is_some());
    let text = export::prometheus();
    assert!(
        text.contains("fusebox_breaker_calls_total{breaker=\"prelisted-never-called\",outcome=\"succeeded\"} 0"),
        "{text}"
    );
    assert!(text.contains("fusebox_bulkhead_pool{bulkhead=\"prelisted-pool\"} 3"));
    let _ = never_called; // never called, on purpose
}

#[tokio::test(start_paused = true)]
async fn an_operator_can_force_it_open_before_any_traffic() {
    let b = registry().breaker("prelisted-forced").unwrap();
    b.force_open();
    match forced_before_traffic().await {
        Err(DepError::Unavailable(Rejection::Open { state, .. })) => {
            assert_eq!(state, State::ForcedOpen)
        }
        other => panic!("the first call is refused, got {other:?}"),
    }
    b.reset();
    assert_eq!(forced_before_traffic().await, Ok(7));
    // The call site uses the listed breaker: one name, one breaker.
    let after = registry().breaker("prelisted-forced").unwrap();
    assert!(after.ptr_eq(&b));
    let m = b.metrics();
    assert_eq!((m.rejected_by_reason.forced_open, m.succeeded), (1, 1));
    assert_eq!(
        registry()
            .bulkhead("prelisted-pool")
            .unwrap()
            .metrics()
            .admitted,
        1
    );
}

#[tokio::test(start_paused = true)]
async fn a_generic_function_has_one_listed_breaker_for_every_instance() {
    let b = registry().breaker("prelisted-generic").unwrap();
    b.force_open();
    assert_eq!(generic(1u8).await, Ok("fallback"));
    assert_eq!(generic("x").await, Ok("fallback"));
    assert_eq!(b.metrics().rejected, 2);
}
