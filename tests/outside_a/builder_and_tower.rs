//! Issue 31: the builder (alone and with a bulkhead) and the tower layer classify as the
//! attribute does, and the ignored count is in every output.

use super::*;

fn classify(r: &Result<u16, ApiError>) -> Outcome {
    match r {
        Ok(s) if *s >= 500 => Outcome::Failure,
        Ok(_) => Outcome::Success,
        Err(ApiError::Invalid) => Outcome::Ignored,
        Err(ApiError::NotFound) => Outcome::Success,
        Err(_) => Outcome::Failure,
    }
}

#[tokio::test(start_paused = true)]
async fn the_builder_classifies_like_the_attribute() {
    let b = Breaker::builder("oa-builder")
        .window_calls(2)
        .min_calls(2)
        .build()
        .unwrap();
    let c = b
        .call_classified(async { Err(ApiError::Invalid) }, classify)
        .await;
    assert!(matches!(c, Completion::Ignored(ApiError::Invalid)));
    let c = b.call_classified(async { Ok(503) }, classify).await;
    assert!(matches!(c, Completion::Ok(503)));
    let m = b.metrics();
    assert_eq!(
        (m.window_calls, m.ignored, m.failed, m.state),
        (1, 1, 1, State::Closed)
    );
    b.call_classified(async { Ok(502) }, classify).await;
    assert_eq!(b.state(), State::Open);
}

/// The builder with a bulkhead classifies too, and a full bulkhead is never a failure.
#[tokio::test(start_paused = true)]
async fn the_builder_with_a_bulkhead_classifies_like_the_attribute() {
    let b = Breaker::builder("oa-builder-in")
        .window_calls(2)
        .min_calls(2)
        .build()
        .unwrap();
    let pool = fusebox::Bulkhead::builder("oa-builder-in")
        .pool(1)
        .build()
        .unwrap();
    let c = b
        .call_classified_in(&pool, async { Err(ApiError::Invalid) }, classify)
        .await;
    assert!(matches!(c, Completion::Ignored(ApiError::Invalid)));
    let held = pool.acquire().await.unwrap();
    let c = b
        .call_classified_in(&pool, async { Ok(503) }, classify)
        .await;
    assert!(matches!(
        c,
        Completion::Failed(Error::Rejected(Rejection::Full { .. }))
    ));
    drop(held);
    let m = b.metrics();
    assert_eq!(
        (m.window_calls, m.ignored, m.failed, m.rejected_by_bulkhead),
        (0, 1, 0, 1)
    );
    for _ in 0..2 {
        let c = b
            .call_classified_in(&pool, async { Ok(503) }, classify)
            .await;
        assert!(matches!(c, Completion::Ok(503)));
    }
    assert_eq!(b.state(), State::Open);
}

#[tokio::test(start_paused = true)]
async fn tower_classifies_like_the_attribute() {
    use fusebox::tower::{BreakerLayer, Classified};
    use tower::{service_fn, Layer, Service, ServiceExt};

    let layer = BreakerLayer::new(Breaker::builder("oa-tower").window_calls(2).min_calls(2))
        .unwrap()
        .failure(Classified(classify));
    let mut svc = layer.layer(service_fn(|r: Result<u16, ApiError>| async move { r }));
    for r in [Err(ApiError::Invalid), Err(ApiError::Invalid), Ok(503)] {
        let _ = svc.ready().await.unwrap().call(r).await;
    }
    let m = metrics("oa-tower");
    assert_eq!(
        (m.window_calls, m.ignored, m.failed, m.state),
        (1, 2, 1, State::Closed)
    );
    assert_eq!(svc.ready().await.unwrap().call(Ok(500)).await.unwrap(), 500);
    assert_eq!(metrics("oa-tower").state, State::Open);
}

/// The ignored outcome has its own lifetime counter in every output.
#[tokio::test(start_paused = true)]
async fn ignored_calls_are_in_prometheus_and_json() {
    let b = Breaker::builder("oa-export").build().unwrap();
    for _ in 0..3 {
        b.call_classified(async { Err::<u16, _>(ApiError::Invalid) }, classify)
            .await;
    }
    let text = fusebox::metrics::prometheus();
    let line = text
        .lines()
        .find(|l| l.contains("oa-export") && l.contains("ignored") && !l.starts_with('#'))
        .unwrap_or_else(|| panic!("no ignored series for oa-export in\n{text}"));
    assert!(line.ends_with(" 3"), "{line}");
    let json = serde_json::to_value(b.metrics()).unwrap();
    assert_eq!(json["ignored"], 3);
    assert_eq!(json["recording"], true);
}
