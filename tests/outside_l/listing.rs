//! DESIGN.md: every annotated breaker and bulkhead is listed before its first call, in an
//! `#[async_trait]` impl and a generic impl too.

use super::*;

#[async_trait::async_trait]
trait Payments: Send + Sync {
    async fn verify(&self, order: u32) -> Result<u32, ApiError>;
}

struct Provider;

#[async_trait::async_trait]
impl Payments for Provider {
    #[breaker(name = "ol-listed-trait")]
    #[bulkhead(name = "ol-listed-trait-pool", pool = 2)]
    async fn verify(&self, order: u32) -> Result<u32, ApiError> {
        Ok(order)
    }
}

struct Client<T>(T);

impl<T: Send + Sync> Client<T> {
    #[bulkhead(name = "ol-listed-generic-pool", pool = 4)]
    async fn send(&self, n: u32) -> Result<u32, ApiError> {
        Ok(n)
    }

    #[breaker(name = "ol-listed-generic", key = region, timeout = "1s")]
    async fn regional(&self, region: &str) -> Result<u32, ApiError> {
        let _ = region;
        Ok(1)
    }
}

/// DESIGN.md: "Every annotated breaker and bulkhead is listed from the start, before its first
/// call (keyed ones per key once used)": also inside an `#[async_trait]` impl (issue 20) and
/// in a generic type's impl, and an operator's force reaches the trait-object call.
#[tokio::test(start_paused = true)]
async fn breakers_of_trait_impls_and_generic_impls_are_listed_before_their_first_call() {
    let trait_breaker = registry()
        .breaker("ol-listed-trait")
        .expect("the async-trait method's breaker is listed");
    assert!(registry().bulkhead("ol-listed-trait-pool").is_some());
    let pool = registry()
        .bulkhead("ol-listed-generic-pool")
        .expect("the generic impl's bulkhead is listed");
    assert_eq!(pool.pool(), 4);
    let snapshot = fusebox::metrics();
    assert!(snapshot.breaker("ol-listed-trait").is_some());
    assert!(snapshot.bulkhead("ol-listed-generic-pool").is_some());
    assert!(
        fusebox::metrics::prometheus().contains("bulkhead=\"ol-listed-trait-pool\""),
        "in Prometheus before any call"
    );
    // A keyed breaker is listed per key once used.
    assert!(registry().breaker("ol-listed-generic/eu").is_none());
    let client = Client(());
    assert_eq!(client.regional("eu").await, Ok(1));
    assert_eq!(client.send(3).await, Ok(3));
    assert!(registry().breaker("ol-listed-generic/eu").is_some());

    trait_breaker.force_open();
    let provider: Box<dyn Payments> = Box::new(Provider);
    let r = provider.verify(9).await;
    assert!(
        matches!(
            r,
            Err(ApiError::Refused(Rejection::Open {
                state: State::ForcedOpen,
                ..
            }))
        ),
        "{r:?}"
    );
    trait_breaker.reset();
    assert_eq!(provider.verify(9).await, Ok(9));
}
