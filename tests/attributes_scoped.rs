//! With feature `testing`, a call site that caches its breaker still honours test scopes.
#![cfg(feature = "testing")]

mod common;

use common::DepError;
use fusebox::{breaker, registry, testing, State};

#[breaker(name = "scoped-dep", window_calls = 2)]
async fn dependency(up: bool) -> Result<(), DepError> {
    if up {
        Ok(())
    } else {
        Err(DepError::Down)
    }
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
