//! Issue 8: stale values.

use super::*;

static STALE_BODY: AtomicU32 = AtomicU32::new(0);

#[breaker(name = "oe-stale", stale_for = "10m", stale_key = sku.to_owned(), stale_capacity = 2, window_calls = 100)]
async fn stale_quote(sku: &str, up: bool) -> Result<String, DepError> {
    STALE_BODY.fetch_add(1, SeqCst);
    if up {
        Ok(format!("{sku}:{}", STALE_BODY.load(SeqCst)))
    } else {
        Err(DepError::Down)
    }
}

#[tokio::test(start_paused = true)]
async fn stale_values_are_per_argument_bounded_and_expire() {
    let a = stale_quote("a", true).await.unwrap();
    let b = stale_quote("b", true).await.unwrap();
    // A counted failure is answered with the same argument's value, never another's.
    assert_eq!(stale_quote("a", false).await.unwrap(), a);
    assert_eq!(stale_quote("b", false).await.unwrap(), b);
    assert_eq!(
        stale_quote("z", false).await,
        Err(DepError::Down),
        "nothing kept for z"
    );
    // A third key evicts the least recently used ("a": "b" was used last).
    let c = stale_quote("c", true).await.unwrap();
    assert_eq!(
        stale_quote("a", false).await,
        Err(DepError::Down),
        "a was evicted"
    );
    assert_eq!(stale_quote("c", false).await.unwrap(), c);
    let breaker = registry().breaker("oe-stale").unwrap();
    assert_eq!(breaker.metrics().stale_served, 3);
    // While open too, until the value is older than `stale_for`.
    breaker.force_open();
    advance(Duration::from_secs(9 * 60)).await;
    assert_eq!(stale_quote("c", true).await.unwrap(), c);
    advance(Duration::from_secs(61)).await;
    assert!(matches!(
        stale_quote("c", true).await,
        Err(DepError::Refused(Rejection::Open { .. }))
    ));
}
