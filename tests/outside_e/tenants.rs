//! Issue 18: no cross-tenant stale value, past the key cap too.

use super::*;

#[breaker(name = "oe-ovf-stale", key = tenant, max_keys = 1, window_calls = 10, min_calls = 10,
          stale_for = "10m", stale_key = item)]
async fn tenant_item(tenant: &str, item: u32, up: bool) -> Result<String, DepError> {
    if up {
        Ok(format!("{tenant}'s item {item}"))
    } else {
        Err(DepError::Down)
    }
}

#[tokio::test(start_paused = true)]
async fn tenants_sharing_the_overflow_breaker_never_get_each_others_last_good_value() {
    // "a" holds the only key of its own (its window is not empty, so it never goes idle), and
    // keeps its last good value as before.
    tenant_item("a", 1, true).await.unwrap();
    registry().breaker("oe-ovf-stale/a").unwrap().force_open();
    assert_eq!(tenant_item("a", 1, false).await.unwrap(), "a's item 1");
    // "b" and "c" share `oe-ovf-stale/_overflow`.
    assert_eq!(tenant_item("b", 1, true).await.unwrap(), "b's item 1");
    let overflow = registry()
        .breaker("oe-ovf-stale/_overflow")
        .expect("b overflowed");
    overflow.force_open();
    // The overflow breaker cannot tell its tenants apart, so it keeps no last good values.
    assert!(matches!(
        tenant_item("b", 1, true).await,
        Err(DepError::Refused(Rejection::Open { .. }))
    ));
    assert_eq!(overflow.metrics().stale_served, 0);
    let c = tenant_item("c", 1, true).await;
    assert!(
        matches!(c, Err(DepError::Refused(Rejection::Open { .. }))),
        "tenant c must never get tenant b's value: {c:?}"
    );
}
