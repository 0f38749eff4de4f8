//! Test scopes: parallel tests using the same breaker name never see each other.
#![cfg(feature = "testing")]

use std::time::Duration;

use fusebox_runtime::__private::{static_breaker, OnceCell};
use fusebox_runtime::{registry, testing, Breaker, BreakerConfig, State};

/// A call site the way the attribute generates it: a `static` cache of its breaker.
async fn payments_call(fail: bool) -> Result<(), fusebox_runtime::Error<&'static str>> {
    static SITE: OnceCell<Breaker> = OnceCell::new();
    let b = static_breaker(&SITE, || config("payments"));
    b.call(async move {
        if fail {
            Err("down")
        } else {
            Ok(())
        }
    })
    .await
}

fn config(name: &str) -> BreakerConfig {
    Breaker::builder(name).window_calls(4).config().unwrap()
}

/// One test's body: trip "payments" or keep it healthy, and check nothing leaked in.
async fn body(trip: bool) {
    let scope = testing::scope();
    let mut rec = scope.recorder();
    for _ in 0..4 {
        let _ = payments_call(trip).await;
        tokio::task::yield_now().await;
    }
    let expected = if trip { State::Open } else { State::Closed };
    testing::assert_state("payments", expected);
    testing::assert_calls(
        "payments",
        if trip { 0 } else { 4 },
        if trip { 4 } else { 0 },
        0,
    );
    let states = rec.states_of("payments");
    if trip {
        assert_eq!(states, [State::Closed, State::Open]);
    } else {
        assert!(
            states.is_empty(),
            "a healthy breaker has no transitions: {states:?}"
        );
    }
}

macro_rules! pair {
    ($($trip:ident $heal:ident),*) => {$(
        #[tokio::test(start_paused = true)]
        async fn $trip() { body(true).await }
        #[tokio::test(start_paused = true)]
        async fn $heal() { body(false).await }
    )*};
}

pair!(trip_0 heal_0, trip_1 heal_1, trip_2 heal_2, trip_3 heal_3, trip_4 heal_4, trip_5 heal_5);

#[test]
fn the_pair_passes_many_times_on_parallel_threads() {
    for round in 0..50 {
        let threads: Vec<_> = (0..4)
            .map(|i| {
                std::thread::spawn(move || {
                    tokio::runtime::Builder::new_current_thread()
                        .enable_time()
                        .start_paused(true)
                        .build()
                        .unwrap()
                        .block_on(body(i % 2 == 0))
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap_or_else(|_| panic!("round {round} failed"));
        }
    }
}

#[tokio::test(start_paused = true)]
async fn a_scope_vanishes_with_its_breakers_and_metrics() {
    {
        let _scope = testing::scope();
        Breaker::builder("scoped-only").build().unwrap();
        assert!(registry().is_scoped());
        assert!(fusebox_runtime::metrics().breaker("scoped-only").is_some());
    }
    assert!(!registry().is_scoped());
    assert!(registry().breaker("scoped-only").is_none());
    assert!(fusebox_runtime::metrics().breaker("scoped-only").is_none());
}

#[tokio::test(start_paused = true)]
async fn the_recorder_sees_every_transition_with_its_virtual_time() {
    let scope = testing::scope();
    let mut rec = scope.recorder();
    let b = Breaker::builder("recorded")
        .window_calls(2)
        .open_for(Duration::from_secs(10))
        .half_open_calls(1)
        .build()
        .unwrap();
    for _ in 0..2 {
        let _ = b.call(async { Err::<(), _>("down") }).await;
    }
    tokio::time::advance(Duration::from_secs(10)).await;
    b.call(async { Ok::<_, ()>(()) }).await.unwrap();
    assert_eq!(
        rec.states_of("recorded"),
        [State::Closed, State::Open, State::HalfOpen, State::Closed]
    );
    let times: Vec<u64> = rec
        .timeline_of("recorded")
        .iter()
        .map(|(_, t)| t.as_secs())
        .collect();
    assert_eq!(times, [0, 10, 10]);
    b.force_open();
    testing::reset_all();
    assert_eq!(
        rec.states_of("recorded")[4..],
        [State::ForcedOpen, State::Closed]
    );
    assert_eq!(testing::in_flight_of("none"), None);
}

/// A tower layer built before the scope (a client fixture) follows it, as the attribute's
/// call site does: the scope's breaker of the layer's name; one over a given breaker keeps it.
#[cfg(feature = "tower")]
#[tokio::test(start_paused = true)]
async fn a_breaker_layer_built_before_a_scope_follows_it() {
    use tower::{service_fn, Layer, ServiceExt};
    let failing = || service_fn(|_: ()| async { Err::<(), _>("down") });
    let builder = || {
        Breaker::builder("scoped-layer")
            .window_calls(2)
            .min_calls(2)
    };
    let by_name = fusebox_runtime::tower::BreakerLayer::new(builder())
        .unwrap()
        .layer(failing());
    let given = Breaker::builder("scoped-layer-given")
        .build_detached()
        .unwrap();
    let over_given =
        fusebox_runtime::tower::BreakerLayer::from_breaker(given.clone()).layer(failing());
    let global = registry().breaker("scoped-layer").unwrap();
    let scope = testing::scope();
    for _ in 0..2 {
        let _ = by_name.clone().oneshot(()).await;
        let _ = over_given.clone().oneshot(()).await;
    }
    let scoped = registry()
        .breaker("scoped-layer")
        .expect("made in the scope");
    assert_eq!((scoped.metrics().failed, scoped.state()), (2, State::Open));
    assert_eq!(global.metrics().failed, 0, "the global breaker saw nothing");
    assert_eq!(
        given.metrics().failed,
        2,
        "a layer over a given breaker keeps it"
    );
    drop(scope);
    assert_eq!(global.state(), State::Closed);
}

/// The same for a bulkhead layer: a full pool in one scope is not full in another.
#[cfg(feature = "tower")]
#[tokio::test(start_paused = true)]
async fn a_bulkhead_layer_built_before_a_scope_follows_it() {
    use fusebox_runtime::Bulkhead;
    use tower::{service_fn, Layer, ServiceExt};
    let layer =
        fusebox_runtime::tower::BulkheadLayer::new(Bulkhead::builder("scoped-pool").pool(1))
            .unwrap();
    let slow = layer.layer(service_fn(|_: ()| async {
        tokio::time::sleep(Duration::from_secs(60)).await;
        Ok::<_, ()>(())
    }));
    let global = registry().bulkhead("scoped-pool").unwrap();
    let scope = testing::scope();
    let held = tokio::spawn(slow.clone().oneshot(()));
    tokio::task::yield_now().await;
    let scoped = registry()
        .bulkhead("scoped-pool")
        .expect("made in the scope");
    assert_eq!(scoped.metrics().in_flight, 1);
    assert_eq!(
        global.metrics().in_flight,
        0,
        "the global pool is not taken"
    );
    held.abort();
    drop(scope);
}
