//! With feature `testing`, a call site that caches its breaker still honours test scopes.
#![cfg(feature = "testing")]

mod common;

use common::DepError;
use fusebox::{breaker, registry, testing, State};

#[breaker(name = "scoped-dep", window_calls = 2)]
async fn dependency(up: bool) -> Result<(), DepError> {
    up.then_some(()).ok_or(DepError::Down)
}

#[breaker(name = "scoped-shard", key = shard, window_calls = 2)]
async fn shard_get(shard: u8, up: bool) -> Result<u8, DepError> {
    if up {
        Ok(shard)
    } else {
        Err(DepError::Down)
    }
}

#[tokio::test(start_paused = true)]
async fn each_scope_sees_its_own_breaker_at_a_cached_call_site() {
    {
        let _scope = testing::scope();
        for _ in 0..2 {
            assert_eq!(dependency(false).await, Err(DepError::Down));
            assert_eq!(shard_get(1, false).await, Err(DepError::Down));
        }
        testing::assert_state("scoped-dep", State::Open);
        testing::assert_state("scoped-shard/1", State::Open);
    }
    {
        let _scope = testing::scope();
        // A fresh scope: the same call sites start from closed breakers.
        assert_eq!(dependency(true).await, Ok(()));
        assert_eq!(shard_get(1, true).await, Ok(1));
        testing::assert_state("scoped-dep", State::Closed);
    }
    // The global registry lists the site from the start, and no scope's call reached it.
    assert_eq!(registry().breaker("scoped-dep").unwrap().metrics().calls, 0);
    assert!(registry().breaker("scoped-shard/1").is_none());
}

#[tokio::test(start_paused = true)]
async fn a_scope_lists_every_annotated_breaker_from_the_start_with_its_own_state() {
    let global = registry().breaker("scoped-dep").expect("listed globally");
    let _scope = testing::scope();
    let mine = registry()
        .breaker("scoped-dep")
        .expect("a scope lists the annotated sites too, before any call");
    assert!(!mine.ptr_eq(&global), "with its own state");
    mine.force_open();
    assert!(dependency(true).await.unwrap_err().is_open());
    assert_eq!(
        global.state(),
        State::Closed,
        "the global breaker is untouched"
    );
    // Keyed sites appear per key once used.
    assert!(registry().breaker("scoped-shard/9").is_none());
    shard_get(9, true).await.unwrap();
    assert!(registry().breaker("scoped-shard/9").is_some());
}

/// Fails once, then answers: one retry per call.
#[fusebox::retry(attempts = 2, backoff = "1ms", budget = 0, budget_floor = 1)]
#[breaker(name = "scoped-retry", window_calls = 100, min_calls = 100)]
async fn retried(n: &std::sync::atomic::AtomicU32) -> Result<u32, DepError> {
    if n.fetch_add(1, std::sync::atomic::Ordering::Relaxed) % 2 == 0 {
        Err(DepError::Down)
    } else {
        Ok(1)
    }
}

/// Each scope's retries draw on a budget of its own (in its registry), so one test's retry
/// storm never spends another's budget, and the process-wide budget sees neither.
#[tokio::test(start_paused = true)]
async fn each_scope_has_its_own_retry_budgets() {
    let n = std::sync::atomic::AtomicU32::new(0);
    for _ in 0..2 {
        let _scope = testing::scope();
        // A floor of 1 retry a second over 10 s: ten retries, then the budget refuses the
        // eleventh call's (the twelfth succeeds at once).
        for _ in 0..12 {
            let _ = retried(&n).await;
        }
        let m = fusebox::metrics();
        let r = m.retry("scoped-retry").expect("the scope's budget");
        assert_eq!((r.calls, r.retries, r.budget_exhausted), (12, 10, 1));
        assert!(registry().retry_budget("scoped-retry").is_some());
    }
    assert!(
        registry().retry_budget("scoped-retry").is_none(),
        "the process-wide registry never made one"
    );
    assert!(fusebox::retry::budget("scoped-retry").is_none());
}

#[breaker(name = "scoped-fresh", timeout = "1s")]
async fn scoped_fresh() -> Result<u32, DepError> {
    Ok(1)
}

#[tokio::test(start_paused = true)]
async fn a_scoped_breaker_counts_time_in_state_from_its_first_call() {
    // A review: in a scope, `time_in_state` of a fresh annotated breaker counted from the
    // scope's start, not from its first call as outside one.
    let _scope = testing::scope();
    tokio::time::advance(std::time::Duration::from_secs(10)).await;
    scoped_fresh().await.unwrap();
    let m = registry().breaker("scoped-fresh").unwrap().metrics();
    assert_eq!(m.time_in_state, std::time::Duration::ZERO);
}
