//! Issue 16: tower layers on the same registry.

use super::*;

/// A test scope sees a layer's breakers (keyed ones per key), its transitions are recorded, and
/// nothing of it leaks into the process's registry.
#[tokio::test(start_paused = true)]
async fn a_test_scope_sees_the_layers_keyed_breakers_and_keeps_them_to_itself() {
    let scope = fusebox::testing::scope();
    let mut recorder = scope.recorder();
    let layer = BreakerLayer::keyed(
        Breaker::builder("of-scoped-upstream")
            .window_calls(2)
            .min_calls(2),
        |req: &(&'static str, bool)| Some(req.0),
    )
    .unwrap();
    let svc = layer.layer(service_fn(|(_, ok): (&'static str, bool)| async move {
        if ok {
            Ok(200u16)
        } else {
            Err(500u16)
        }
    }));
    for _ in 0..2 {
        let _ = svc.clone().oneshot(("a.example", false)).await;
    }
    assert_eq!(svc.clone().oneshot(("b.example", true)).await, Ok(200));
    fusebox::testing::assert_state("of-scoped-upstream/a.example", State::Open);
    fusebox::testing::assert_state("of-scoped-upstream/b.example", State::Closed);
    assert_eq!(
        recorder.states_of("of-scoped-upstream/a.example"),
        vec![State::Closed, State::Open]
    );
    drop(scope);
    assert!(registry().breaker("of-scoped-upstream/a.example").is_none());
    assert!(registry().breaker("of-scoped-upstream").is_none());
}

/// `FallbackLayer` with `Infallible` makes the stack axum-ready (the guide's words): it mounts
/// as a route service, and an open breaker answers through the fallback without reaching
/// the handler.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_breaker_stack_with_an_infallible_fallback_is_an_axum_route() {
    use axum::http::{Request, StatusCode};
    use axum::response::{IntoResponse, Response};

    let hits = Arc::new(AtomicUsize::new(0));
    let seen = hits.clone();
    let inner = service_fn(move |_req: Request<axum::body::Body>| {
        let seen = seen.clone();
        async move {
            seen.fetch_add(1, SeqCst);
            Err::<Response, StatusCode>(StatusCode::BAD_GATEWAY)
        }
    });
    let stack = tower::ServiceBuilder::new()
        .layer(FallbackLayer::new(|err: Error<StatusCode>| async move {
            Ok::<Response, Infallible>(err.into_response())
        }))
        .layer(
            BreakerLayer::new(
                Breaker::builder("of-axum-route")
                    .window_calls(2)
                    .min_calls(2)
                    .open_for(secs(30)),
            )
            .unwrap(),
        )
        .service(inner);
    let app = axum::Router::new().route_service("/dep", stack);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    let http = reqwest::Client::new();
    for _ in 0..2 {
        let r = http.get(format!("http://{addr}/dep")).send().await.unwrap();
        assert_eq!(r.status(), 502, "the handler's own error, as it answered");
    }
    let r = http.get(format!("http://{addr}/dep")).send().await.unwrap();
    assert_eq!(r.status(), 503);
    let wait: u64 = r.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((29..=30).contains(&wait), "Retry-After {wait}");
    assert_eq!(
        hits.load(SeqCst),
        2,
        "the open breaker never reached the handler"
    );
}

/// A `BulkheadLayer` alone: a ready service holds nothing, a full pool refuses with
/// `Rejection::Full` without calling, and the metrics show in flight, peak and rejected.
#[tokio::test(start_paused = true)]
async fn a_bulkhead_layer_alone_refuses_when_full_and_holds_nothing_when_only_ready() {
    let layer = BulkheadLayer::new(Bulkhead::builder("of-bulk-layer").pool(1)).unwrap();
    let calls = Arc::new(AtomicUsize::new(0));
    let seen = calls.clone();
    let svc = layer.layer(service_fn(move |d: Duration| {
        seen.fetch_add(1, SeqCst);
        async move {
            tokio::time::sleep(d).await;
            Ok::<_, &'static str>(d)
        }
    }));
    // Polled ready, then kept idle: no slot is taken.
    let mut idle = svc.clone();
    std::future::poll_fn(|cx| idle.poll_ready(cx))
        .await
        .unwrap();
    let b = registry().bulkhead("of-bulk-layer").unwrap();
    assert_eq!(b.in_flight(), 0);

    let long = tokio::spawn(svc.clone().oneshot(secs(5)));
    tokio::task::yield_now().await;
    assert_eq!(b.in_flight(), 1);
    let refused = svc.clone().oneshot(ms(1)).await.unwrap_err();
    assert!(
        matches!(refused, Error::Rejected(Rejection::Full { ref name, pool: 1 }) if &**name == "of-bulk-layer"),
        "{refused:?}"
    );
    assert_eq!(
        calls.load(SeqCst),
        1,
        "a refused request never reaches the service"
    );
    let m = b.metrics();
    assert_eq!((m.in_flight, m.peak, m.rejected), (1, 1, 1));
    advance(secs(5)).await;
    assert_eq!(long.await.unwrap().unwrap(), secs(5));
    assert_eq!(b.in_flight(), 0);
    drop(idle);
}

/// The key, `req.uri().host()`, borrowed from the request: a key function that
/// returns `Option<&str>` (a `fn`; stable Rust cannot infer a borrowing closure) picks one
/// breaker per host with no owned copy of the key.
#[tokio::test(start_paused = true)]
async fn a_key_borrowed_from_the_request_picks_one_breaker_per_host() {
    use axum::http::Request;

    fn host(req: &Request<u8>) -> Option<&str> {
        req.uri().host()
    }
    let svc = BreakerLayer::keyed(
        Breaker::builder("of-borrowed-host")
            .window_calls(2)
            .min_calls(2),
        host,
    )
    .unwrap()
    .layer(service_fn(|req: Request<u8>| async move {
        if *req.body() == 0 {
            Ok(200u16)
        } else {
            Err(500u16)
        }
    }));
    let req = |host: &str, fail: u8| Request::get(format!("http://{host}/")).body(fail).unwrap();
    for _ in 0..2 {
        let _ = svc.clone().oneshot(req("down.example", 1)).await;
    }
    assert_eq!(svc.clone().oneshot(req("up.example", 0)).await, Ok(200));
    let refused = svc
        .clone()
        .oneshot(req("down.example", 0))
        .await
        .unwrap_err();
    assert!(
        matches!(refused, Error::Rejected(Rejection::Open { .. })),
        "{refused:?}"
    );
    assert_eq!(
        registry()
            .breaker("of-borrowed-host/down.example")
            .unwrap()
            .state(),
        State::Open
    );
    let up = registry().breaker("of-borrowed-host/up.example").unwrap();
    assert_eq!(up.state(), State::Closed);
    // A key as the attribute's keys are: the operator's page groups them under the name.
    assert_eq!(up.metrics().key.as_deref(), Some("up.example"));
}

/// A keyed layer with `max_keys`: past the cap new keys share an overflow breaker, and no
/// request is ever refused for the cap (DESIGN's `max_keys` row, on the layer's settings).
#[tokio::test(start_paused = true)]
async fn a_keyed_layer_past_max_keys_refuses_nothing_for_the_cap() {
    let layer = BreakerLayer::keyed(
        Breaker::builder("of-capped-layer").max_keys(2),
        |host: &String| Some(host.clone()),
    )
    .unwrap();
    let svc = layer.layer(service_fn(|host: String| async move {
        Ok::<_, Infallible>(host.len())
    }));
    for i in 0..6 {
        let host = format!("host-{i}.example");
        assert_eq!(svc.clone().oneshot(host.clone()).await.unwrap(), host.len());
    }
    let keyed: Vec<String> = fusebox::metrics()
        .breakers
        .into_iter()
        .map(|b| b.name)
        .filter(|n| n.starts_with("of-capped-layer/"))
        .collect();
    assert!(
        keyed.len() <= 3,
        "two keys and an overflow at most: {keyed:?}"
    );
}

/// A layer built from bad settings is the typed `ConfigError` the builder gives, not a panic.
#[test]
fn a_layer_from_bad_settings_is_the_builders_typed_error() {
    let Err(err) = BreakerLayer::new(Breaker::builder("of-bad-layer").failure_rate(0)) else {
        panic!("a failure rate of 0 is refused");
    };
    assert!(err.to_string().contains("failure_rate"), "{err}");
    let Err(err) = BulkheadLayer::new(Bulkhead::builder("of-bad-pool").pool(0)) else {
        panic!("a pool of 0 is refused");
    };
    assert!(err.to_string().contains("pool"), "{err}");
}
