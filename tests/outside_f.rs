//! The earlier rounds' issues 16 (tower layers), 17 (adaptive bulkheads), 19 (the operator's
//! page), 21 (fleet mode) and 22 (probes and the ramp), tested again as a user reads them (the
//! issues' text, DESIGN.md, the README, the guides and the rustdoc), through the facade only,
//! after this round's rewrites of the core, the settings and the macros.
//!
//! Paused-clock tests make no IO; the ones on real sockets run on real time, where every wait
//! has a deadline and polls. Each test uses names of its own: they share the process's registry.
#![cfg(all(
    feature = "admin",
    feature = "tower",
    feature = "testing",
    feature = "serde",
    feature = "redis"
))]

use std::convert::Infallible;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;
use std::time::Duration;

#[allow(dead_code)]
mod browser;
mod fleet_support;

use fusebox::tower::{BreakerLayer, BulkheadLayer, FallbackLayer};
use fusebox::{breaker, bulkhead, registry, Breaker, Bulkhead, Error, Rejection, State};
use tokio::time::advance;
use tower::{service_fn, Layer, Service, ServiceExt};

mod common;
use common::{ms, secs};

/// A dependency's error, the way a client writes one.
#[derive(Debug, Clone, PartialEq)]
enum DepError {
    Down,
    Refused(Rejection),
}

impl From<Rejection> for DepError {
    fn from(r: Rejection) -> Self {
        DepError::Refused(r)
    }
}

// ---------------------------------------------------------------------------------------------
// Issue 16: tower layers on the same registry.

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

/// The issue's key, `req.uri().host()`, borrowed from the request: a key function that
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

// ---------------------------------------------------------------------------------------------
// Issue 17: adaptive bulkheads.

/// Bounds that cannot hold are typed errors naming what is wrong; a start given outside the
/// bounds is one too, and the default start is brought within them.
#[test]
fn adaptive_bounds_that_cannot_hold_are_refused_or_kept() {
    assert!(Bulkhead::builder("of-ad-bad")
        .adaptive()
        .min_pool(10)
        .max_pool(4)
        .build_detached()
        .is_err());
    assert!(Bulkhead::builder("of-ad-zero")
        .adaptive()
        .min_pool(0)
        .build_detached()
        .is_err());
    // The default start (20) is brought within a smaller max_pool.
    let b = Bulkhead::builder("of-ad-start")
        .adaptive()
        .max_pool(8)
        .build_detached()
        .unwrap();
    assert_eq!(b.pool(), 8);
    // A start given outside the bounds is refused, naming it.
    let Err(e) = Bulkhead::builder("of-ad-low")
        .adaptive()
        .pool(2)
        .min_pool(4)
        .build_detached()
    else {
        panic!("a start below min_pool is refused");
    };
    assert!(
        matches!(
            e,
            fusebox::settings::ConfigError::OutOfRange { field: "pool", .. }
        ),
        "{e}"
    );
    // A fixed pool takes no adaptive bounds.
    assert!(Bulkhead::builder("of-fixed-bounds")
        .pool(4)
        .max_pool(8)
        .build_detached()
        .is_err());
}

#[derive(Debug, Clone, PartialEq)]
struct ReportError;

impl From<Rejection> for ReportError {
    fn from(_: Rejection) -> Self {
        ReportError
    }
}

static REPORT_LATENCY_MS: AtomicU64 = AtomicU64::new(50);

/// A report dependency behind a timeout and an adaptive pool, as the lesson's step 5 has it.
#[breaker(
    name = "of-report",
    timeout = "1s",
    min_calls = 1000,
    window_calls = 1000
)]
#[bulkhead(
    name = "of-report-pool",
    limit = "adaptive",
    min_pool = 2,
    max_pool = 40,
    pool = 20
)]
async fn report() -> Result<(), ReportError> {
    tokio::time::sleep(ms(REPORT_LATENCY_MS.load(SeqCst))).await;
    Ok(())
}

/// `callers` workers calling in a loop until `stop` is set.
fn workers(callers: usize, stop: &Arc<std::sync::atomic::AtomicBool>) {
    for _ in 0..callers {
        let stop = stop.clone();
        tokio::spawn(async move {
            while !stop.load(SeqCst) {
                if report().await.is_err() {
                    tokio::time::sleep(ms(10)).await;
                }
            }
        });
    }
}

/// The issue's promise through the attributes: a stuck dependency (every call ends at the
/// breaker's timeout) shrinks the limit to `min_pool`; when it answers again, the full limit is
/// back within 30 s. The limit and its history show in `metrics()` and Prometheus.
#[tokio::test(start_paused = true)]
async fn an_adaptive_pool_behind_a_timeout_collapses_when_stuck_and_is_back_within_30s() {
    let pool = registry()
        .bulkhead("of-report-pool")
        .expect("listed before any call");
    assert_eq!(pool.pool(), 20);
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    workers(30, &stop);
    for _ in 0..50 {
        advance(ms(100)).await;
    }
    let healthy = pool.pool();
    assert!(
        healthy >= 20,
        "steady fast calls do not lower the limit: {healthy}"
    );

    REPORT_LATENCY_MS.store(60_000, SeqCst);
    let mut collapsed = None;
    for step in 0..600 {
        advance(ms(100)).await;
        if pool.pool() == 2 {
            collapsed = Some(step);
            break;
        }
    }
    assert!(
        collapsed.is_some(),
        "stuck for a minute, limit {}",
        pool.pool()
    );

    REPORT_LATENCY_MS.store(50, SeqCst);
    let mut back = None;
    for step in 1..=300 {
        advance(ms(100)).await;
        if pool.pool() >= healthy {
            back = Some(ms(100 * step));
            break;
        }
    }
    stop.store(true, SeqCst);
    let back = back.unwrap_or_else(|| panic!("limit {} after 30 s", pool.pool()));
    assert!(back <= secs(30), "{back:?}");

    let m = pool.metrics();
    let adaptive = m.adaptive.expect("an adaptive pool says so");
    assert_eq!((adaptive.min_pool, adaptive.max_pool), (2, 40));
    assert!(
        adaptive.history.iter().any(|c| c.limit == 2),
        "{:?}",
        adaptive.history
    );
    let text = fusebox::metrics().to_prometheus();
    let gauge = |family: &str| -> f64 {
        let line = text
            .lines()
            .find(|l| l.starts_with(family) && l.contains(r#""of-report-pool""#))
            .unwrap_or_else(|| panic!("{family} of of-report-pool in Prometheus"));
        line.rsplit(' ').next().unwrap().parse().unwrap()
    };
    assert_eq!(
        gauge("fusebox_bulkhead_pool{"),
        pool.pool() as f64,
        "the limit now"
    );
    assert_eq!(gauge("fusebox_bulkhead_limit_min{"), 2.0);
    assert_eq!(gauge("fusebox_bulkhead_limit_max{"), 40.0);
    advance(secs(2)).await;
}

/// The limit's history starts with the start value, taken when the bulkhead was made: its
/// `ago` is the bulkhead's age, in `metrics()` and the JSON alike (it said about a week).
#[tokio::test(start_paused = true)]
async fn an_adaptive_pools_history_starts_when_the_pool_was_made() {
    let pool = Bulkhead::builder("of-ad-history")
        .adaptive()
        .pool(12)
        .build()
        .unwrap();
    advance(secs(5)).await;
    let m = pool.metrics();
    let history = m.adaptive.expect("adaptive").history;
    assert_eq!(history.len(), 1, "{history:?}");
    assert_eq!(history[0].limit, 12);
    assert!(
        (secs(5)..secs(6)).contains(&history[0].ago),
        "made 5 s ago: {:?}",
        history[0].ago
    );
    let json = serde_json::to_value(fusebox::metrics()).unwrap();
    let row = json["bulkheads"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["name"] == "of-ad-history")
        .unwrap()
        .clone();
    let ago = row["adaptive"]["history"][0]["ago_s"].as_f64().unwrap();
    assert!((5.0..6.0).contains(&ago), "{row}");
}

// ---------------------------------------------------------------------------------------------
// Issue 22: probes while open, then a ramp.

static LOOKUP_MS: AtomicU64 = AtomicU64::new(10);
static LOOKUP_DOWN: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
static LOOKUP_HITS: AtomicUsize = AtomicUsize::new(0);

/// What the lookup answered: the dependency (1) or the fallback (0).
const LIVE: u8 = 1;

fn later(_: Error<DepError>) -> Result<u8, DepError> {
    Ok(0)
}

/// The recovery guide's breaker, with a share-based half-open.
#[breaker(
    name = "of-lookup",
    timeout = "800ms",
    trip_p95 = "500ms",
    window_calls = 20,
    min_calls = 10,
    open_for = "60s",
    probe_every = "1s",
    half_open_window = "5s",
    half_open_pct = 50,
    ramp = "10s",
    fallback = later
)]
async fn lookup() -> Result<u8, DepError> {
    LOOKUP_HITS.fetch_add(1, SeqCst);
    tokio::time::sleep(ms(LOOKUP_MS.load(SeqCst))).await;
    if LOOKUP_DOWN.load(SeqCst) {
        Err(DepError::Down)
    } else {
        Ok(LIVE)
    }
}

/// Ten calls a second from ten callers for `span`: (answered live, answered by the fallback).
async fn traffic(span: Duration) -> (usize, usize) {
    let mut live = 0;
    let mut fallback = 0;
    let end = tokio::time::Instant::now() + span;
    while tokio::time::Instant::now() < end {
        let calls: Vec<_> = (0..10).map(|_| tokio::spawn(lookup())).collect();
        advance(ms(100)).await;
        for c in calls {
            // A call still running is cut at its timeout: give it that long.
            match tokio::time::timeout(secs(1), c).await.unwrap().unwrap() {
                Ok(LIVE) => live += 1,
                Ok(_) => fallback += 1,
                Err(e) => panic!("the fallback answers every refusal: {e:?}"),
            }
        }
    }
    (live, fallback)
}

/// The "slow under the timeout" case with probing on: probes that are slow by the rule never
/// pass, so the breaker stays open while the dependency stays slow, then follows it back in
/// seconds (well before `open_for`), through half-open and a ramp, with no relapse.
#[tokio::test(start_paused = true)]
async fn probing_never_closes_on_a_dependency_slow_under_its_timeout_and_follows_it_back() {
    let b = registry().breaker("of-lookup").unwrap();
    LOOKUP_MS.store(700, SeqCst);
    traffic(secs(3)).await;
    assert_eq!(
        b.state(),
        State::Open,
        "700 ms calls breach trip_p95 = 500ms"
    );
    let opened = b.metrics().times_opened;

    // Slow for 40 s under the 800 ms timeout: probes go through, none passes.
    let hits = LOOKUP_HITS.load(SeqCst);
    for _ in 0..40 {
        traffic(secs(1)).await;
        assert_eq!(b.state(), State::Open, "a slow probe never passes");
    }
    let probes = LOOKUP_HITS.load(SeqCst) - hits;
    assert!(
        (30..=41).contains(&probes),
        "about one probe a second: {probes}"
    );
    assert_eq!(
        b.metrics().times_opened,
        opened,
        "no relapse, no new period"
    );

    // Healthy again (40 s in, 20 s before open_for ends): half-open within a probe or two,
    // then the ramp, then all traffic, well before open_for would have let anyone look.
    LOOKUP_MS.store(10, SeqCst);
    let mut closed_at = None;
    let mut plain_at = None;
    for s in 1..=18 {
        traffic(secs(1)).await;
        if closed_at.is_none() && b.state() == State::Closed {
            closed_at = Some(s);
        }
        if closed_at.is_some() && b.ramp_share().is_none() {
            plain_at = Some(s);
            break;
        }
    }
    let closed_at = closed_at.expect("closed within 18 s of the recovery");
    assert!(closed_at <= 8, "closed {closed_at} s after the recovery");
    assert!(plain_at.is_some(), "the ramp is over within 18 s");
    assert_eq!(b.metrics().times_opened, opened, "no relapse");
    let (live, fallback) = traffic(secs(2)).await;
    assert!(
        live >= 150 && fallback == 0,
        "all traffic back: {live} live, {fallback} fallbacks"
    );
}

/// While a breaker ramps, `ramp_share` is in `metrics()`, the JSON and Prometheus, it reads
/// `closed`, and a refused call is answered by the fallback as a `Closed` rejection.
/// Opens `b` (a window of 4, all failed), waits out its 5 s open period and passes its one
/// trial: closed again, ramping if it has a ramp.
async fn open_then_pass_the_trial(b: &Breaker) {
    for _ in 0..4 {
        let _ = b.call(async { Err::<(), _>("down") }).await;
    }
    assert_eq!(b.state(), State::Open);
    advance(secs(5)).await;
    b.call(async { Ok::<_, &str>(()) }).await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn a_ramping_breaker_shows_its_share_everywhere_and_refuses_as_closed() {
    let b = Breaker::builder("of-ramp-show")
        .window_calls(4)
        .min_calls(4)
        .open_for(secs(5))
        .half_open_calls(1)
        .ramp(secs(100))
        .build()
        .unwrap();
    open_then_pass_the_trial(&b).await;
    assert_eq!(b.state(), State::Closed);
    let share = b.ramp_share().expect("ramping");
    assert!((0.0..0.2).contains(&share), "{share}");

    let mut refused = 0;
    for _ in 0..20 {
        match b.call(async { Ok::<_, &str>(()) }).await {
            Err(Error::Rejected(r)) => {
                assert!(r.is_ramp(), "{r:?}");
                assert!(
                    matches!(
                        r,
                        Rejection::Open {
                            state: State::Closed,
                            ..
                        }
                    ),
                    "{r:?}"
                );
                refused += 1;
            }
            other => assert!(other.is_ok(), "{other:?}"),
        }
    }
    assert!(
        refused >= 15,
        "a ramp at ~5 % refuses most calls: {refused}"
    );
    assert_eq!(b.metrics().rejected_by_reason.ramp, refused);

    let json = serde_json::to_value(fusebox::metrics()).unwrap();
    let row = json["breakers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "of-ramp-show")
        .unwrap()
        .clone();
    assert_eq!(row["state"], "closed");
    assert!(row["ramp_share"].as_f64().is_some(), "{row}");
    let text = fusebox::metrics().to_prometheus();
    let line = text
        .lines()
        .find(|l| l.starts_with("fusebox_breaker_ramp_share") && l.contains("of-ramp-show"))
        .expect("the ramp gauge");
    let v: f64 = line.rsplit(' ').next().unwrap().parse().unwrap();
    assert!((0.0..0.2).contains(&v), "{line}");

    // The ramp ends by itself after its span, even with no call in between.
    advance(secs(101)).await;
    assert_eq!(b.ramp_share(), None);
    assert_eq!(b.metrics().ramp_share, None);
}

// ---------------------------------------------------------------------------------------------
// DESIGN's fallback row, met by the composed attributes of issues 16-22: an annotated fn is an
// ordinary `Send` future whatever it returns, so it can be spawned.

fn static_answer(_: Error<DepError>) -> Result<&'static str, DepError> {
    Ok("from the fallback")
}

async fn static_answer_async(_: Error<DepError>) -> Result<&'static str, DepError> {
    Ok("from the fallback")
}

fn static_answer_for(_region: &u32, _: Error<DepError>) -> Result<&'static str, DepError> {
    Ok("from the fallback")
}

#[breaker(name = "of-static-sync", fallback = static_answer)]
async fn static_sync(down: bool) -> Result<&'static str, DepError> {
    if down {
        Err(DepError::Down)
    } else {
        Ok("live")
    }
}

#[breaker(name = "of-static-async", fallback = static_answer_async)]
async fn static_async() -> Result<&'static str, DepError> {
    Err(DepError::Down)
}

#[fusebox::retry(attempts = 2, backoff = "10ms")]
#[breaker(name = "of-static-args", fallback = static_answer_for, stale_for = "1m")]
#[bulkhead(name = "of-static-pool", pool = 2)]
async fn static_composed(region: u32) -> Result<&'static str, DepError> {
    let _ = region;
    Err(DepError::Down)
}

/// A fallback returning a borrowed `'static` value (`&'static str`) used to make the annotated
/// future fail `tokio::spawn`'s `Send` check ("`FallbackReturn` is not general enough").
#[tokio::test(start_paused = true)]
async fn an_annotated_fn_whose_fallback_returns_a_static_str_can_be_spawned() {
    assert_eq!(tokio::spawn(static_sync(false)).await.unwrap(), Ok("live"));
    assert_eq!(
        tokio::spawn(static_sync(true)).await.unwrap(),
        Ok("from the fallback")
    );
    assert_eq!(
        tokio::spawn(static_async()).await.unwrap(),
        Ok("from the fallback")
    );
    assert_eq!(
        tokio::spawn(static_composed(7)).await.unwrap(),
        Ok("from the fallback")
    );
}

// ---------------------------------------------------------------------------------------------
// Issue 19: the operator's page, in a real headless chromium.

const PAGE_TOKEN: &str = "outside-f-page-t0ken";

/// What the page's table shows for a breaker that opened on its own (state as text, time in
/// state, failure rate, refusals by reason, stuck, the sparkline) and for bulkheads (pool, in
/// flight, peak, rejected; an adaptive one's bounds), refreshed without a reload.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_shows_what_an_operator_needs_of_an_open_breaker_and_of_bulkheads() {
    use browser::{chromium, connect, serve, start_driver, text_of, wait, which};
    let (Some(chrome), Some(driver_exe)) = (chromium(), which("chromedriver")) else {
        let msg = "outside_f: chromium or chromedriver is not installed \
                   (apt-get install -y chromium chromium-driver); the browser test did not run";
        assert!(std::env::var_os("CI").is_none(), "{msg}");
        use std::io::Write;
        let _ = writeln!(std::io::stderr(), "\n!!!!!!!! SKIPPED: {msg} !!!!!!!!\n");
        return;
    };
    let tripped = Breaker::builder("of-page-tripped")
        .window_calls(2)
        .min_calls(2)
        .open_for(secs(600))
        .alert_after(secs(1))
        .build()
        .unwrap();
    for _ in 0..2 {
        let _ = tripped.call(async { Err::<(), _>("down") }).await;
    }
    assert_eq!(tripped.state(), State::Open);
    for _ in 0..3 {
        assert!(tripped.call(async { Ok::<_, &str>(()) }).await.is_err());
    }
    let pool = Bulkhead::builder("of-page-pool").pool(3).build().unwrap();
    let held: Vec<_> = [
        pool.acquire().await,
        pool.acquire().await,
        pool.acquire().await,
    ]
    .into_iter()
    .map(Result::unwrap)
    .collect();
    assert!(matches!(
        pool.call(async {}).await,
        Err(Rejection::Full { .. })
    ));
    Bulkhead::builder("of-page-adaptive")
        .adaptive()
        .min_pool(2)
        .max_pool(50)
        .build()
        .unwrap();

    let (admin, _stop) = serve(fusebox::admin::router(PAGE_TOKEN).unwrap()).await;
    let out = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"));
    let profile = out.join(format!("chromium-profile-of-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&profile);
    std::fs::create_dir_all(&profile).unwrap();
    let (driver, webdriver) = start_driver(&driver_exe);
    let c = connect(&webdriver, &chrome, &profile).await;
    let scenario = {
        let c = c.clone();
        tokio::spawn(async move {
            c.goto(&format!("{admin}/#token={PAGE_TOKEN}"))
                .await
                .unwrap();
            let row = r#"#b-rows tr[data-name="of-page-tripped"]"#;
            wait(&c, &format!(r#"{row}[data-state="open"]"#)).await;
            assert_eq!(text_of(&c, &format!("{row} .state")).await, "open");
            let cells = |n: usize| format!("{row} td:nth-child({n})");
            let in_state = text_of(&c, &cells(3)).await;
            assert!(
                in_state.ends_with(" s") || in_state.ends_with(" ms"),
                "{in_state}"
            );
            assert_eq!(text_of(&c, &cells(5)).await, "100 %", "failure rate");
            let rejected = text_of(&c, &cells(8)).await;
            assert!(
                rejected.starts_with('3') && rejected.contains("open 3"),
                "refusals with their reason: {rejected}"
            );
            // Open past alert_after (1 s): stuck, said in words, without a reload.
            let stuck = text_of(&c, &format!("{row} .stuck")).await;
            assert_eq!(stuck, "STUCK");
            // The history: a state band and the rates' lines once two samples are in.
            wait(&c, &format!("{row} svg.spark rect.band.b-open")).await;
            wait(&c, &format!("{row} svg.spark polyline")).await;

            let pool_row = r#"#h-rows tr[data-name="of-page-pool"]"#;
            let cell = |n: usize| format!("{pool_row} td:nth-child({n})");
            wait(&c, pool_row).await;
            assert_eq!(text_of(&c, &cell(2)).await, "3", "pool");
            assert_eq!(text_of(&c, &cell(3)).await, "3", "in flight");
            assert_eq!(text_of(&c, &cell(4)).await, "3", "peak");
            assert_eq!(text_of(&c, &cell(6)).await, "1", "rejected");
            let adaptive = r#"#h-rows tr[data-name="of-page-adaptive"] td:nth-child(2)"#;
            assert_eq!(text_of(&c, adaptive).await, "20 (adaptive 2..50)");
            c
        })
    };
    let c2 = match scenario.await {
        Ok(c) => c,
        Err(e) => {
            let _ = c.close().await;
            drop(driver);
            std::panic::resume_unwind(e.into_panic());
        }
    };
    // The slots given back show within a refresh; the peak stays.
    drop(held);
    let pool_row = r#"#h-rows tr[data-name="of-page-pool"]"#;
    let freed = c2
        .wait()
        .at_most(browser::WAIT)
        .for_element(fantoccini::Locator::XPath(
            r#"//tbody[@id="h-rows"]/tr[@data-name="of-page-pool"]/td[3][text()="0"]"#,
        ))
        .await
        .is_ok();
    let peak = text_of(&c2, &format!("{pool_row} td:nth-child(4)")).await;
    let _ = c2.close().await;
    drop(driver);
    let _ = std::fs::remove_dir_all(&profile);
    assert!(freed, "in flight back to 0 on the page");
    assert_eq!(peak, "3");
}

// ---------------------------------------------------------------------------------------------
// More of issues 16, 17 and 22, where the layers, the live settings and the keys meet.

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

// ---------------------------------------------------------------------------------------------
// Issue 21: fleet mode on Redis, behind a password (the issue's "auth").

/// `redis-cli -p <port> <args...>`: what the Redis's operator does.
fn redis_cli(redis: &fleet_support::RedisServer, args: &[&str]) {
    let ok = std::process::Command::new("redis-cli")
        .args(["-p", &redis.port.to_string()])
        .args(args)
        .stdout(std::process::Stdio::null())
        .status()
        .expect("redis-cli");
    assert!(ok.success(), "redis-cli {args:?}");
}

/// A Redis with `requirepass`: the right password in the URL joins and carries an override;
/// a wrong one leaves the instance on its own judgement, the link not up, the reason said
/// (the password itself never), and a send refused as link down.
#[test]
fn a_fleet_behind_a_redis_password_works_with_it_and_says_why_without_it() {
    use fleet_support::{link_down, runtime, turn, within, RedisServer};
    use fusebox::fleet::{self, FleetConfig, LinkState};
    const PASSWORD: &str = "of-s3cret-pass";

    let _turn = turn();
    let Some(redis) = RedisServer::start("of-auth") else {
        return;
    };
    redis_cli(&redis, &["CONFIG", "SET", "requirepass", PASSWORD]);
    let rt = runtime();
    let b = Breaker::builder("of-auth-pay").build().unwrap();

    let wrong = format!("redis://:not-the-password@127.0.0.1:{}/", redis.port);
    let fleet = rt
        .block_on(fleet::join(
            FleetConfig::new(wrong, "ofauth", "pod-1").heartbeat(ms(200)),
        ))
        .expect("an unreachable fleet is not an error");
    let status = within(secs(5), "the link down with its reason", || {
        let s = fleet.status();
        (s.link == LinkState::Down && s.last_error.is_some()).then_some(s)
    });
    let reason = status.last_error.unwrap();
    assert!(
        !reason.contains("not-the-password"),
        "the password stays out of the status: {reason}"
    );
    assert!(
        reason.to_lowercase().contains("auth") || reason.contains("WRONGPASS"),
        "says it is the password: {reason}"
    );
    link_down(rt.block_on(fleet.force_open("of-auth-pay", secs(60), "alice")));
    assert_eq!(
        b.state(),
        State::Closed,
        "calls go on, on its own judgement"
    );
    rt.block_on(fleet.leave());

    let right = format!("redis://:{PASSWORD}@127.0.0.1:{}/", redis.port);
    let fleet = rt
        .block_on(fleet::join(
            FleetConfig::new(right, "ofauth", "pod-1").heartbeat(ms(200)),
        ))
        .unwrap();
    within(secs(5), "the link up", || {
        (fleet.status().link == LinkState::Up).then_some(())
    });
    rt.block_on(fleet.force_open("of-auth-pay", secs(60), "alice"))
        .unwrap();
    within(secs(2), "the override applied", || {
        (b.state() == State::ForcedOpen).then_some(())
    });
    assert!(fleet.status().live.contains(&"pod-1".to_owned()));
    rt.block_on(fleet.leave());
    assert_eq!(b.state(), State::Closed, "lifted on leave");
}

/// A `redis-server` that speaks TLS only, with a self-signed certificate for 127.0.0.1 made by
/// `openssl`; stopped (and its directory removed) on drop.
struct TlsRedis {
    child: std::process::Child,
    port: u16,
    dir: std::path::PathBuf,
}

impl TlsRedis {
    /// `None` (the test skips, loudly, outside CI) without openssl or a TLS-capable server.
    fn start(password: &str) -> Option<TlsRedis> {
        use std::process::{Command, Stdio};
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let dir =
            std::env::temp_dir().join(format!("fusebox-of-tls-{}-{port}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        // A CA of the test's own and a leaf for 127.0.0.1 it signs (rustls refuses a CA
        // certificate used as the server's own).
        std::fs::write(
            dir.join("leaf.ext"),
            "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\n",
        )
        .unwrap();
        let openssl = |args: &[&str]| {
            Command::new("openssl")
                .args(args)
                .current_dir(&dir)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        };
        let made = openssl(&[
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "2",
            "-keyout",
            "ca.key",
            "-out",
            "ca.pem",
            "-subj",
            "/CN=fusebox outside_f test CA",
        ]) && openssl(&[
            "req",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            "key.pem",
            "-out",
            "leaf.csr",
            "-subj",
            "/CN=127.0.0.1",
        ]) && openssl(&[
            "x509",
            "-req",
            "-in",
            "leaf.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-days",
            "2",
            "-out",
            "cert.pem",
            "-extfile",
            "leaf.ext",
        ]);
        let skip = |msg: &str| {
            assert!(std::env::var_os("CI").is_none(), "{msg}");
            eprintln!("skipped: {msg}");
            None
        };
        if !made {
            return skip("openssl could not make a certificate");
        }
        let child = Command::new("redis-server")
            .args([
                "--port",
                "0",
                "--tls-port",
                &port.to_string(),
                "--bind",
                "127.0.0.1",
            ])
            .args(["--tls-cert-file", "cert.pem", "--tls-key-file", "key.pem"])
            .args(["--tls-ca-cert-file", "ca.pem", "--tls-auth-clients", "no"])
            .args([
                "--requirepass",
                password,
                "--save",
                "",
                "--appendonly",
                "no",
            ])
            .args(["--logfile", "redis.log"])
            .current_dir(&dir)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .spawn();
        let Ok(child) = child else {
            return skip("redis-server is not installed");
        };
        let server = TlsRedis { child, port, dir };
        let deadline = std::time::Instant::now() + secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            if std::time::Instant::now() > deadline {
                return skip("redis-server did not listen with TLS within 10 s");
            }
            std::thread::sleep(ms(20));
        }
        Some(server)
    }

    /// The CA that signed the server's certificate.
    fn ca(&self) -> std::path::PathBuf {
        self.dir.join("ca.pem")
    }
}

impl Drop for TlsRedis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// `rediss://` for real: a server whose certificate the process does not trust is link down
/// with the certificate named as the reason (no panic for want of a crypto provider); once the
/// certificate is trusted (`SSL_CERT_FILE`, read by the platform's verifier), the same URL
/// with its password joins and carries an override.
#[test]
fn a_fleet_over_rediss_checks_the_certificate_and_works_once_it_is_trusted() {
    use fleet_support::{runtime, turn, within};
    use fusebox::fleet::{self, FleetConfig, LinkState};
    const PASSWORD: &str = "of-tls-s3cret";

    let _turn = turn();
    let Some(redis) = TlsRedis::start(PASSWORD) else {
        return;
    };
    let rt = runtime();
    let b = Breaker::builder("of-tls-pay").build().unwrap();
    let url = format!("rediss://:{PASSWORD}@127.0.0.1:{}/", redis.port);

    let fleet = rt
        .block_on(fleet::join(
            FleetConfig::new(url.clone(), "oftls", "pod-1").heartbeat(ms(200)),
        ))
        .expect("an unreachable fleet is not an error");
    let reason = within(secs(5), "the link down with its reason", || {
        let s = fleet.status();
        (s.link == LinkState::Down)
            .then_some(s.last_error)
            .flatten()
    });
    assert!(
        reason.to_lowercase().contains("certificate"),
        "says it is the certificate: {reason}"
    );
    assert!(!reason.contains(PASSWORD), "{reason}");
    rt.block_on(fleet.leave());

    std::env::set_var("SSL_CERT_FILE", redis.ca());
    let joined = rt.block_on(fleet::join(
        FleetConfig::new(url, "oftls", "pod-1").heartbeat(ms(200)),
    ));
    let up = joined.map(|fleet| {
        let up = (0..200).any(|_| {
            std::thread::sleep(ms(25));
            fleet.status().link == LinkState::Up
        });
        (fleet, up)
    });
    std::env::remove_var("SSL_CERT_FILE");
    let (fleet, up) = up.unwrap();
    assert!(up, "link up over TLS: {:?}", fleet.status());
    rt.block_on(fleet.force_open("of-tls-pay", secs(60), "alice"))
        .unwrap();
    within(secs(2), "the override applied", || {
        (b.state() == State::ForcedOpen).then_some(())
    });
    rt.block_on(fleet.leave());
    assert_eq!(b.state(), State::Closed);
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
