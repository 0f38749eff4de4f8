//! `key = ...` of every kind names the same breaker its `Display` names: integers and text are
//! handed over without formatting (issue 28), anything else is formatted; a key that needs
//! encoding is encoded; and a repeated key finds its breaker again, also once a call tripped it.

mod common;

use std::fmt;

use common::DepError;
use fusebox::{breaker, registry, State};

#[breaker(name = "kf-int", key = shard, window_calls = 2)]
async fn by_int(shard: i64, up: bool) -> Result<i64, DepError> {
    if up {
        Ok(shard)
    } else {
        Err(DepError::Down)
    }
}

#[breaker(name = "kf-text", key = host, window_calls = 2)]
async fn by_text(host: String) -> Result<usize, DepError> {
    Ok(host.len())
}

#[breaker(name = "kf-str", key = host, window_calls = 2)]
async fn by_str(host: &str) -> Result<usize, DepError> {
    Ok(host.len())
}

/// A key that is only `Display`.
struct Tenant(u32);

impl fmt::Display for Tenant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "tenant-{}", self.0)
    }
}

#[breaker(name = "kf-display", key = tenant, window_calls = 2)]
async fn by_display(tenant: Tenant) -> Result<u32, DepError> {
    Ok(tenant.0)
}

#[breaker(name = "kf-generic", key = key, window_calls = 2)]
async fn by_generic<K: fmt::Display + Send + Sync>(key: K) -> Result<(), DepError> {
    drop(key);
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn every_kind_of_key_names_the_breaker_its_display_names() {
    for _ in 0..3 {
        by_int(-42, true).await.unwrap();
        by_int(i64::MAX, true).await.unwrap();
        by_text("db-1.internal:5432".to_owned()).await.unwrap();
        by_str("a/b").await.unwrap();
        by_str("_overflow").await.unwrap();
        by_display(Tenant(7)).await.unwrap();
        by_generic(3u8).await.unwrap();
        by_generic("x").await.unwrap();
    }
    let names = [
        "kf-int/-42",
        "kf-int/9223372036854775807",
        "kf-text/db-1.internal:5432",
        "kf-str/a%2Fb",
        "kf-str/%5Foverflow",
        "kf-display/tenant-7",
        "kf-generic/3",
        "kf-generic/x",
    ];
    for name in names {
        let b = registry().breaker(name).unwrap_or_else(|| panic!("{name}"));
        assert_eq!(b.metrics().calls, 3, "{name}: every call on one breaker");
    }
}

#[tokio::test(start_paused = true)]
async fn a_repeated_key_finds_its_tripped_breaker() {
    for _ in 0..3 {
        by_int(5, true).await.unwrap();
    }
    assert_eq!(by_int(5, false).await, Err(DepError::Down));
    let _ = by_int(5, false).await;
    assert_eq!(registry().breaker("kf-int/5").unwrap().state(), State::Open);
    assert!(by_int(5, true).await.unwrap_err().is_open());
    assert_eq!(by_int(6, true).await, Ok(6), "another key, another breaker");
}
