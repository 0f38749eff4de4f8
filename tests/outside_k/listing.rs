//! Issues 15 and 18: what the registry lists: a method's breaker and an adaptive bulkhead
//! before any call, and a keyed name bounded by the default `max_keys`.

use super::*;

// --- Issue 15: listed before the first call --------------------------------------------------

struct Inventory;

impl Inventory {
    #[breaker(name = "ok-method", window_calls = 4)]
    async fn stock(&self, _item: u32) -> Result<u32, DepError> {
        Ok(3)
    }
}

#[bulkhead(
    name = "ok-adaptive-alone",
    limit = "adaptive",
    min_pool = 2,
    max_pool = 40
)]
async fn adaptive_alone() -> Result<(), DepError> {
    Ok(())
}

/// A method's breaker and a bulkhead given only `limit = "adaptive"` are listed, and in the
/// snapshot and the scrape, before any call.
#[tokio::test(start_paused = true)]
async fn a_methods_breaker_and_an_adaptive_bulkhead_are_listed_before_any_call() {
    let b = registry()
        .breaker("ok-method")
        .expect("listed before a call");
    assert_eq!(b.metrics().calls, 0);
    let pool = registry()
        .bulkhead("ok-adaptive-alone")
        .expect("listed before a call");
    assert_eq!(pool.in_flight(), 0);
    let m = fusebox::metrics();
    assert!(m.breaker("ok-method").is_some());
    let limit = m
        .bulkhead("ok-adaptive-alone")
        .expect("in the snapshot")
        .pool;
    assert!(
        (2..=40).contains(&limit),
        "the adaptive limit starts within its bounds: {limit}"
    );
    let text = m.to_prometheus();
    assert!(text.contains(r#"breaker="ok-method""#));
    assert!(text.contains(r#"bulkhead="ok-adaptive-alone""#));
    // The same ones the calls then use.
    Inventory.stock(1).await.unwrap();
    adaptive_alone().await.unwrap();
    assert_eq!(b.metrics().calls, 1);
    assert_eq!(pool.metrics().admitted, 1);
}

// --- Issue 18 and DESIGN's `max_keys`: the documented default bound ---------------------------

#[breaker(name = "ok-default-cap", key = host)]
async fn fetch_host(host: u32) -> Result<(), DepError> {
    let _ = host;
    Ok(())
}

/// A keyed breaker given no `max_keys` is bounded by the default (1 000): 3 000 distinct keys
/// all go through, on at most 1 001 breakers of that name.
#[tokio::test(start_paused = true)]
async fn a_keyed_breaker_without_max_keys_is_bounded_by_the_default() {
    for host in 0..3000 {
        fetch_host(host).await.expect("never refused for the cap");
    }
    let family = registry()
        .breakers()
        .iter()
        .filter(|b| b.name().starts_with("ok-default-cap/"))
        .count();
    assert!(family <= 1001, "{family} breakers for one keyed name");
}
