//! What a tower layer holds and when: nothing between `poll_ready` and `call`, a permit freed
//! by a dropped call, a full bulkhead refusing without calling (within `max_wait`, the code's
//! or a live one), and an open breaker refusing at once over a client that is not ready.
//! All on a paused clock; every breaker has a name of its own.
#![cfg(feature = "tower")]

#[path = "tower/services.rs"]
mod services;
use services::{Dep, Gate};

use std::future::{poll_fn, Future};
use std::time::Duration;

use fusebox_runtime::tower::{BreakerLayer, BulkheadLayer};
use fusebox_runtime::{Breaker, Bulkhead, Error, Rejection, State};
use tower::{service_fn, Layer, Service, ServiceExt};

#[tokio::test(start_paused = true)]
async fn poll_ready_without_call_holds_no_permit_and_no_trial() {
    let pool = Bulkhead::builder("tl-honest").pool(1).build().unwrap();
    let layer = BreakerLayer::new(
        Breaker::builder("tl-honest")
            .window_calls(1)
            .open_for(Duration::from_millis(100))
            .half_open_calls(1),
    )
    .unwrap()
    .bulkhead(pool.clone());
    let breaker = layer.breaker().clone();
    let svc = layer.layer(Dep::new());
    // Ready, never called, kept alive: nothing is taken.
    let mut idle = svc.clone();
    poll_fn(|cx| idle.poll_ready(cx)).await.unwrap();
    assert_eq!(pool.in_flight(), 0);
    svc.clone().oneshot(200).await.unwrap();
    // The same in half-open: the one trial slot stays free for a real call.
    let _ = svc.clone().oneshot(0).await;
    assert_eq!(breaker.state(), State::Open);
    tokio::time::advance(Duration::from_millis(101)).await;
    let mut idle2 = svc.clone();
    poll_fn(|cx| idle2.poll_ready(cx)).await.unwrap();
    svc.clone().oneshot(200).await.unwrap();
    assert_eq!(breaker.state(), State::Closed);
    drop((idle, idle2));
}

#[tokio::test(start_paused = true)]
async fn a_dropped_call_frees_its_permit_and_is_not_a_failure() {
    let pool = Bulkhead::builder("tl-drop").pool(1).build().unwrap();
    let layer = BreakerLayer::new(Breaker::builder("tl-drop").window_calls(1))
        .unwrap()
        .bulkhead(pool.clone());
    let mut svc = layer.layer(service_fn(|_: ()| async {
        tokio::time::sleep(Duration::from_secs(60)).await;
        Ok::<_, &str>(200)
    }));
    let mut fut = Box::pin(svc.call(()));
    poll_fn(|cx| {
        assert!(fut.as_mut().poll(cx).is_pending());
        std::task::Poll::Ready(())
    })
    .await;
    assert_eq!(pool.in_flight(), 1, "held while the call runs");
    drop(fut);
    assert_eq!(pool.in_flight(), 0);
    let m = layer.breaker().metrics();
    assert_eq!((m.cancelled, m.failed, m.state), (1, 0, State::Closed));
}

#[tokio::test(start_paused = true)]
async fn a_full_bulkhead_rejects_without_calling_and_is_not_a_failure() {
    let pool = Bulkhead::builder("tl-full").pool(1).build().unwrap();
    let layer = BreakerLayer::new(Breaker::builder("tl-full").window_calls(2))
        .unwrap()
        .bulkhead(pool.clone());
    let dep = Dep::new();
    let svc = layer.layer(dep.clone());
    let held = pool.acquire().await.unwrap();
    for _ in 0..5 {
        let err = svc.clone().oneshot(200).await.unwrap_err();
        assert!(matches!(
            err,
            Error::Rejected(Rejection::Full { pool: 1, .. })
        ));
    }
    drop(held);
    assert_eq!(dep.calls(), 0);
    assert_eq!(layer.breaker().state(), State::Closed);
    assert_eq!(layer.breaker().metrics().rejected_by_bulkhead, 5);
    // The bulkhead alone: the same rejection, no breaker involved.
    let alone = BulkheadLayer::from_bulkhead(pool.clone()).layer(dep.clone());
    let _held = pool.acquire().await.unwrap();
    assert!(matches!(
        alone.oneshot(200).await,
        Err(Error::Rejected(Rejection::Full { .. }))
    ));
    assert_eq!(dep.calls(), 0);
}

#[tokio::test(start_paused = true)]
async fn a_bulkhead_with_max_wait_waits_for_a_slot_then_gives_up() {
    let layer = BulkheadLayer::new(
        Bulkhead::builder("tl-wait")
            .pool(1)
            .max_wait(Duration::from_millis(100)),
    )
    .unwrap();
    let pool = layer.bulkhead().clone();
    let dep = Dep::new();
    let svc = layer.layer(dep.clone());
    let held = pool.acquire().await.unwrap();
    // Freed within max_wait: the waiting call gets the slot.
    let waiting = tokio::spawn(svc.clone().oneshot(200));
    tokio::time::sleep(Duration::from_millis(50)).await;
    drop(held);
    assert_eq!(waiting.await.unwrap().unwrap(), 200);
    assert_eq!(pool.in_flight(), 0);
    // Not freed within max_wait: rejected, and the dependency never called.
    let _held = pool.acquire().await.unwrap();
    let before = dep.calls();
    let err = svc.oneshot(200).await.unwrap_err();
    assert!(matches!(err, Error::Rejected(Rejection::Full { .. })));
    assert_eq!(dep.calls(), before);
}

#[tokio::test(start_paused = true)]
async fn a_max_wait_set_live_on_a_fail_fast_bulkhead_layer_makes_it_wait() {
    // A review: the layer's fail-fast shortcut read the code's `max_wait` (0), not the one
    // in force, so a live change to 50 ms refused at once.
    let layer = BulkheadLayer::new(Bulkhead::builder("tl-live-wait").pool(1)).unwrap();
    let pool = layer.bulkhead().clone();
    pool.change_settings([("max_wait", "50ms")], fusebox_runtime::Source::Admin, None)
        .unwrap();
    let _held = pool.acquire().await.unwrap();
    let t = tokio::time::Instant::now();
    assert!(matches!(
        layer.layer(Dep::new()).oneshot(200).await,
        Err(Error::Rejected(Rejection::Full { .. }))
    ));
    assert_eq!(t.elapsed(), Duration::from_millis(50));
}

#[tokio::test(start_paused = true)]
async fn an_open_breaker_refuses_at_once_even_when_the_client_is_not_ready() {
    // A review: poll_ready only asked the inner service, so over a client that is not ready
    // (reconnecting to a dead host) an open breaker queued its callers instead of refusing.
    let gate = Gate::default();
    let layer = BreakerLayer::new(Breaker::builder("tl-open-unready")).unwrap();
    let svc = layer.layer(gate.clone());
    layer.breaker().force_open();
    let r = tokio::time::timeout(Duration::from_secs(5), svc.clone().oneshot(7)).await;
    assert!(
        matches!(r, Ok(Err(Error::Rejected(Rejection::Open { .. })))),
        "refused at once, not queued: {r:?}"
    );
    // Ready for an open breaker, then closed before the call: the call waits for the client.
    let mut svc2 = svc.clone();
    poll_fn(|cx| svc2.poll_ready(cx)).await.unwrap();
    layer.breaker().force_close();
    let call = tokio::spawn(svc2.call(9));
    tokio::task::yield_now().await;
    assert!(!call.is_finished(), "waits for the client's readiness");
    gate.open_now();
    let got = tokio::time::timeout(Duration::from_secs(1), call).await;
    assert!(matches!(got, Ok(Ok(Ok(9)))), "{got:?}");
}
