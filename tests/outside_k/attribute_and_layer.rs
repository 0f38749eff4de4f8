//! Issue 16: an attribute and a tower layer of one name are one breaker, keyed or not, and
//! share one bulkhead.

use super::*;

// --- Issue 16: an attribute and a layer of one name are one breaker --------------------------

#[breaker(name = "ok-shared", window_calls = 4, min_calls = 4)]
async fn shared_call(ok: bool) -> Result<(), DepError> {
    ok.then_some(()).ok_or(DepError::Down)
}

/// "The same name used from an attribute and a layer is the same breaker": a layer built from
/// the attribute's settings is the attribute's breaker, with no conflict counted, and when
/// the attribute's calls open it, the layer refuses without calling its service.
#[tokio::test(start_paused = true)]
async fn an_attribute_and_a_layer_of_one_name_are_one_breaker() {
    let layer = BreakerLayer::new(Breaker::builder("ok-shared").window_calls(4).min_calls(4))
        .expect("the attribute's settings");
    let listed = registry().breaker("ok-shared").unwrap();
    assert!(layer.breaker().ptr_eq(&listed));
    assert_eq!(
        listed.metrics().conflicts,
        0,
        "the same settings: no conflict"
    );
    let reached = Arc::new(AtomicU32::new(0));
    let svc = {
        let reached = reached.clone();
        layer.layer(tower::service_fn(move |_: ()| {
            reached.fetch_add(1, SeqCst);
            async { Ok::<_, DepError>(()) }
        }))
    };
    svc.clone().oneshot(()).await.unwrap();
    for _ in 0..3 {
        let _ = shared_call(false).await;
    }
    assert_eq!(listed.metrics().calls, 4, "one window for both");
    assert_eq!(listed.state(), State::Open, "3 failures of 4");
    let err = svc.oneshot(()).await.unwrap_err();
    assert!(
        matches!(err, Error::Rejected(Rejection::Open { .. })),
        "the layer refuses: {err:?}"
    );
    assert_eq!(reached.load(SeqCst), 1, "the refused call never reached it");
}

// --- Issue 16: keyed, and bulkheads: one name from an attribute and a layer -------------------

#[breaker(name = "ok-shared-keyed", key = region, window_calls = 2, min_calls = 2)]
#[bulkhead(name = "ok-shared-pool", pool = 2)]
async fn regional_call(region: &str, ok: bool) -> Result<(), DepError> {
    let _ = region;
    ok.then_some(()).ok_or(DepError::Down)
}

/// A keyed layer from the attribute's settings reaches the attribute's breaker of each key (a
/// key the attribute opened is open for the layer, with no conflict counted), and a bulkhead
/// layer of the attribute's pool name shares its slots.
#[tokio::test(start_paused = true)]
async fn a_keyed_layer_and_a_bulkhead_layer_share_the_attributes_breakers_and_pool() {
    for _ in 0..2 {
        let _ = regional_call("eu", false).await;
    }
    let eu = registry().breaker("ok-shared-keyed/eu").unwrap();
    assert_eq!(eu.state(), State::Open);
    let layer = BreakerLayer::keyed(
        Breaker::builder("ok-shared-keyed")
            .window_calls(2)
            .min_calls(2),
        |region: &&'static str| Some(region.to_string()),
    )
    .expect("the attribute's settings");
    let svc = layer.layer(tower::service_fn(|_: &'static str| async {
        Ok::<_, DepError>(())
    }));
    let refused = svc.clone().oneshot("eu").await.unwrap_err();
    assert!(
        matches!(refused, Error::Rejected(Rejection::Open { .. })),
        "the attribute opened eu: {refused:?}"
    );
    svc.clone().oneshot("us").await.unwrap();
    let us = registry().breaker("ok-shared-keyed/us").unwrap();
    assert_eq!(us.metrics().calls, 1);
    regional_call("us", true).await.unwrap();
    assert_eq!(
        us.metrics().calls,
        2,
        "the attribute's call reached the layer's key"
    );
    assert_eq!((eu.metrics().conflicts, us.metrics().conflicts), (0, 0));

    let pool =
        fusebox::tower::BulkheadLayer::new(fusebox::Bulkhead::builder("ok-shared-pool").pool(2))
            .expect("the attribute's settings");
    let listed = registry().bulkhead("ok-shared-pool").unwrap();
    assert!(pool.bulkhead().ptr_eq(&listed));
    assert_eq!(listed.metrics().conflicts, 0);
}
