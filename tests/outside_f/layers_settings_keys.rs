//! More of issues 16, 17 and 22, where the layers, the live settings and the keys meet.

use super::probes_and_ramp::open_then_pass_the_trial;
use super::*;

/// A keyed layer whose key function says `None` goes through the breaker `name` itself, as the
/// rustdoc of `Keyed` says.
#[tokio::test(start_paused = true)]
async fn a_request_without_a_key_goes_through_the_layers_own_name() {
    let layer = BreakerLayer::keyed(
        Breaker::builder("of-maybe-keyed")
            .window_calls(2)
            .min_calls(2),
        |host: &Option<&'static str>| *host,
    )
    .unwrap();
    let svc = layer.layer(service_fn(|_: Option<&'static str>| async {
        Err::<(), _>("down")
    }));
    for _ in 0..2 {
        let _ = svc.clone().oneshot(None).await;
    }
    let base = registry()
        .breaker("of-maybe-keyed")
        .expect("the name itself");
    assert_eq!(base.state(), State::Open);
    let r = svc.clone().oneshot(Some("a.example")).await.unwrap_err();
    assert!(
        matches!(r, Error::Failed("down")),
        "a key of its own: {r:?}"
    );
}

/// An adaptive bulkhead behind a tower layer learns from the calls' latency too, as the
/// attribute's does: a dependency that turns ten times slower shrinks the limit.
#[tokio::test(start_paused = true)]
async fn an_adaptive_bulkhead_layer_shrinks_when_the_service_slows() {
    let latency = Arc::new(AtomicU64::new(20));
    let l = latency.clone();
    let svc = BulkheadLayer::new(
        Bulkhead::builder("of-adaptive-layer")
            .adaptive()
            .max_pool(100),
    )
    .unwrap()
    .layer(service_fn(move |_: ()| {
        let ms_now = l.load(SeqCst);
        async move {
            tokio::time::sleep(ms(ms_now)).await;
            Ok::<_, Infallible>(())
        }
    }));
    let pool = registry().bulkhead("of-adaptive-layer").unwrap();
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    for _ in 0..40 {
        let (svc, stop) = (svc.clone(), stop.clone());
        tokio::spawn(async move {
            while !stop.load(SeqCst) {
                if svc.clone().oneshot(()).await.is_err() {
                    tokio::time::sleep(ms(1)).await;
                }
            }
        });
    }
    // The paused clock jumps from timer to timer, so each call takes its own latency.
    tokio::time::sleep(secs(3)).await;
    let before = pool.pool();
    latency.store(200, SeqCst);
    tokio::time::sleep(secs(10)).await;
    let after = pool.pool();
    stop.store(true, SeqCst);
    assert!(
        after * 2 <= before,
        "a tenfold latency at least halves the limit in 10 s: {before} -> {after}"
    );
    tokio::time::sleep(secs(1)).await;
}

/// `probe_every` given live (admin, fleet) to a breaker that is already open takes effect in
/// that open period: the operator turning it on mid-outage gets probes within seconds.
#[tokio::test(start_paused = true)]
async fn probe_every_given_live_to_an_open_breaker_probes_in_this_period() {
    let b = Breaker::builder("of-live-probe")
        .window_calls(2)
        .min_calls(2)
        .open_for(secs(60))
        .half_open_calls(1)
        .build()
        .unwrap();
    for _ in 0..2 {
        let _ = b.call(async { Err::<(), _>("down") }).await;
    }
    assert_eq!(b.state(), State::Open);
    advance(secs(5)).await;
    b.change_settings(
        [("probe_every", "1s")],
        fusebox::settings::Source::Admin,
        None,
    )
    .unwrap();
    let mut reached = 0;
    for _ in 0..5 {
        advance(secs(1)).await;
        if b.call(async { Ok::<_, &str>(()) }).await.is_ok() {
            reached += 1;
            break;
        }
    }
    assert_eq!(reached, 1, "a probe within 5 s of the change");
    assert_eq!(
        b.state(),
        State::Closed,
        "a passed probe with half_open_calls = 1 closes"
    );
}

#[breaker(
    name = "of-regional",
    key = region,
    window_calls = 2,
    min_calls = 2,
    open_for = "60s",
    probe_every = "2s",
    half_open_calls = 1,
    ramp = "10s"
)]
async fn regional(region: &str, up: bool) -> Result<(), DepError> {
    let _ = region;
    up.then_some(()).ok_or(DepError::Down)
}

/// Through the keyed attribute, each key probes and ramps on its own schedule.
#[tokio::test(start_paused = true)]
async fn each_key_of_an_annotated_breaker_probes_and_ramps_on_its_own() {
    for _ in 0..2 {
        let _ = regional("eu", false).await;
    }
    advance(secs(1)).await;
    for _ in 0..2 {
        let _ = regional("us", false).await;
    }
    let eu = registry().breaker("of-regional/eu").unwrap();
    let us = registry().breaker("of-regional/us").unwrap();
    assert_eq!((eu.state(), us.state()), (State::Open, State::Open));
    // eu's first probe is due 2 s after it opened, us's 1 s later.
    advance(secs(1)).await;
    assert!(regional("eu", true).await.is_ok(), "eu's probe");
    assert!(
        matches!(regional("us", true).await, Err(DepError::Refused(_))),
        "us's probe is not due yet"
    );
    assert_eq!(eu.state(), State::Closed);
    assert!(eu.ramp_share().is_some(), "eu ramps");
    assert_eq!(us.state(), State::Open);
    advance(secs(1)).await;
    assert!(regional("us", true).await.is_ok(), "us's probe");
    assert!(us.ramp_share().is_some());
    // eu's ramp ends 10 s after its probe passed, us's a second later.
    advance(ms(9_500)).await;
    assert_eq!(eu.ramp_share(), None);
    assert!(us.ramp_share().is_some(), "us ramps a second longer");
    advance(secs(1)).await;
    assert_eq!(us.ramp_share(), None);
}

/// Issue 16 under real load on loopback: 50 callers, 400 requests through a keyed breaker with
/// a pool of 8 behind it. The upstream never sees more than 8 at once; every request is
/// answered or refused as `Full`; the counts add up in `metrics()`; a full pool opens nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn under_real_load_the_layers_pool_bounds_the_upstream_and_the_counts_add_up() {
    use axum::http::{Request, StatusCode};
    use bytes::Bytes;
    use http_body_util::Empty;
    use hyper_util::client::legacy::Client;
    use hyper_util::rt::TokioExecutor;

    #[derive(Default)]
    struct Upstream {
        now: AtomicUsize,
        most: AtomicUsize,
        hits: AtomicUsize,
    }
    let up = Arc::new(Upstream::default());
    let seen = up.clone();
    let app = axum::Router::new().route(
        "/work",
        axum::routing::get(move || {
            let up = seen.clone();
            async move {
                let n = up.now.fetch_add(1, SeqCst) + 1;
                up.most.fetch_max(n, SeqCst);
                up.hits.fetch_add(1, SeqCst);
                // The upstream's own latency, not a wait for anything.
                tokio::time::sleep(ms(20)).await;
                up.now.fetch_sub(1, SeqCst);
                StatusCode::OK
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });

    type Body = Empty<Bytes>;
    let client = Client::builder(TokioExecutor::new()).build_http::<Body>();
    let pool = Bulkhead::builder("of-load-pool").pool(8).build().unwrap();
    let stack = BreakerLayer::keyed(
        Breaker::builder("of-load").timeout(secs(5)),
        |req: &Request<Body>| req.uri().host().map(str::to_owned),
    )
    .unwrap()
    .failure(
        |res: &Result<
            hyper::Response<hyper::body::Incoming>,
            hyper_util::client::legacy::Error,
        >| { res.as_ref().map_or(true, |r| r.status().is_server_error()) },
    )
    .bulkhead(pool.clone())
    .layer(client);

    let url = format!("http://{addr}/work");
    let (ok, full) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let tasks: Vec<_> = (0..50)
        .map(|_| {
            let (stack, url, ok, full) = (stack.clone(), url.clone(), ok.clone(), full.clone());
            tokio::spawn(async move {
                for _ in 0..8 {
                    let req = Request::get(&url).body(Body::new()).unwrap();
                    match stack.clone().oneshot(req).await {
                        Ok(res) => {
                            assert_eq!(res.status(), StatusCode::OK);
                            ok.fetch_add(1, SeqCst);
                        }
                        Err(Error::Rejected(Rejection::Full { .. })) => {
                            full.fetch_add(1, SeqCst);
                        }
                        Err(other) => panic!("{other:?}"),
                    }
                }
            })
        })
        .collect();
    for t in tasks {
        tokio::time::timeout(secs(60), t).await.unwrap().unwrap();
    }
    let (ok, full) = (ok.load(SeqCst), full.load(SeqCst));
    assert_eq!(ok + full, 400);
    assert!(ok >= 8 && full > 0, "{ok} answered, {full} refused");
    assert!(
        up.most.load(SeqCst) <= 8,
        "upstream saw {}",
        up.most.load(SeqCst)
    );
    assert_eq!(
        up.hits.load(SeqCst),
        ok,
        "a refused request never left the client"
    );

    let m = pool.metrics();
    assert_eq!((m.admitted, m.rejected), (ok as u64, full as u64));
    assert!(m.peak <= 8 && m.peak >= 1, "{m:?}");
    assert_eq!(m.in_flight, 0);
    let b = registry()
        .breaker(&format!("of-load/{}", addr.ip()))
        .expect("one breaker for the host");
    let bm = b.metrics();
    assert_eq!(
        b.state(),
        State::Closed,
        "a full pool is not the dependency failing"
    );
    assert_eq!(bm.succeeded, ok as u64);
    assert_eq!(bm.failed, 0);
    assert_eq!(bm.rejected_by_bulkhead, full as u64);
}

/// Settings from outside the code reach the layers' breakers and bulkheads as they reach the
/// attributes' (one settings table): a start override by pattern applies to the keys a keyed
/// layer makes afterwards, and one by name to a `BulkheadLayer`'s pool, with their source.
#[tokio::test(start_paused = true)]
async fn start_overrides_reach_a_keyed_layers_keys_and_a_bulkhead_layer() {
    use fusebox::settings::{Overrides, Source};

    let keyed = BreakerLayer::keyed(
        Breaker::builder("of-ovr-layer").timeout(secs(1)),
        |shard: &u32| Some(*shard),
    )
    .unwrap()
    .layer(service_fn(|_: u32| async { Err::<(), _>("down") }));
    let pooled = BulkheadLayer::new(Bulkhead::builder("of-ovr-pool").pool(8))
        .unwrap()
        .layer(service_fn(|d: Duration| async move {
            tokio::time::sleep(d).await;
            Ok::<_, Infallible>(())
        }));
    let overrides: Overrides = serde_json::from_value(serde_json::json!({
        "breakers": { "of-ovr-layer/*": { "window_calls": 2, "min_calls": 2 } },
        "bulkheads": { "of-ovr-pool": { "pool": 1 } }
    }))
    .unwrap();
    registry().apply_overrides(&overrides).unwrap();

    for _ in 0..2 {
        let _ = keyed.clone().oneshot(7).await;
    }
    let seven = registry().breaker("of-ovr-layer/7").unwrap();
    assert_eq!(
        seven.state(),
        State::Open,
        "two calls judged, as overridden"
    );
    let source = seven
        .settings_in_force()
        .iter()
        .find(|s| s.key == "min_calls")
        .map(|s| (s.value.clone(), s.source));
    assert_eq!(source, Some(("2".to_owned(), Source::File)));

    let held = tokio::spawn(pooled.clone().oneshot(secs(5)));
    tokio::task::yield_now().await;
    let refused = pooled.clone().oneshot(ms(1)).await.unwrap_err();
    assert!(
        matches!(refused, Error::Rejected(Rejection::Full { pool: 1, .. })),
        "{refused:?}"
    );
    advance(secs(5)).await;
    held.await.unwrap().unwrap();
}

/// The layer's trials run under `half_open_timeout`, as the attribute's do: a dependency that
/// answers in 500 ms fails every closed call (timeout 100 ms) yet passes its trial (3 s), and
/// the breaker closes.
#[tokio::test(start_paused = true)]
async fn a_layers_trial_runs_under_the_half_open_timeout() {
    let svc = BreakerLayer::new(
        Breaker::builder("of-layer-trial")
            .window_calls(2)
            .min_calls(2)
            .timeout(ms(100))
            .half_open_timeout(secs(3))
            .half_open_calls(1)
            .open_for(secs(1)),
    )
    .unwrap()
    .layer(service_fn(|_: ()| async {
        tokio::time::sleep(ms(500)).await;
        Ok::<_, Infallible>("warm")
    }));
    for _ in 0..2 {
        let r = svc.clone().oneshot(()).await.unwrap_err();
        assert!(
            matches!(r, Error::Rejected(Rejection::TimedOut { .. })),
            "{r:?}"
        );
    }
    let b = registry().breaker("of-layer-trial").unwrap();
    assert_eq!(b.state(), State::Open);
    advance(secs(1)).await;
    assert_eq!(
        svc.clone().oneshot(()).await.unwrap(),
        "warm",
        "the trial had 3 s"
    );
    assert_eq!(b.state(), State::Closed);
    let r = svc.clone().oneshot(()).await.unwrap_err();
    assert!(
        matches!(r, Error::Rejected(Rejection::TimedOut { after, .. }) if after == ms(100)),
        "closed again: the call timeout, {r:?}"
    );
}

/// During the ramp the whole rule judges the admitted calls, the slow-call rule included: a
/// dependency that answers, but slowly, reopens the breaker before the ramp ends.
#[tokio::test(start_paused = true)]
async fn a_slow_dependency_during_the_ramp_reopens_the_breaker() {
    let b = Breaker::builder("of-ramp-slow")
        .window_calls(4)
        .min_calls(4)
        .trip_p95(ms(200))
        .timeout(secs(2))
        .open_for(secs(5))
        .half_open_calls(1)
        .ramp(secs(20))
        .build()
        .unwrap();
    open_then_pass_the_trial(&b).await;
    assert!(b.ramp_share().is_some(), "ramping");
    let opened = b.metrics().times_opened;
    // Slow answers (500 ms, over the 200 ms bound) from the calls the ramp admits.
    let mut admitted = 0;
    let mut ramping = true;
    for _ in 0..400 {
        if b.state() != State::Closed {
            break;
        }
        ramping = b.ramp_share().is_some();
        let call = b.call(async {
            tokio::time::sleep(ms(500)).await;
            Ok::<_, &str>(())
        });
        let (r, _) = tokio::join!(call, advance(ms(500)));
        admitted += usize::from(r.is_ok());
    }
    assert_eq!(
        b.state(),
        State::Open,
        "reopened on slowness, {admitted} admitted"
    );
    assert!(ramping, "reopened while still ramping");
    assert_eq!(b.metrics().times_opened, opened + 1);
    assert!(admitted <= 5, "judged at min_calls: {admitted}");
}
