//! The tower layers end to end over real loopback HTTP: an axum upstream that the test turns
//! slow, then failing, then healthy; a hyper-util client with `BreakerLayer` (keyed by host,
//! 5xx classified as failures, a bulkhead behind it); a gateway route that answers a rejection
//! as `503` with `Retry-After`; and the admin router showing the breaker.
//!
//! Real sockets need real time (a paused clock would auto-advance while waiting on IO). Settings
//! are short (`open_for` 500 ms) and every wait is a bounded poll with a deadline.
#![cfg(all(feature = "tower", feature = "admin"))]

use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;
use std::time::Duration;

use axum::extract::State as AxumState;
use axum::http::{Request, Response, StatusCode};
use axum::response::IntoResponse;
use axum::routing::get;
use axum::Router;
use bytes::Bytes;
use fusebox::tower::{BreakerLayer, BreakerService, Keyed};
use fusebox::{registry, Breaker, Bulkhead, Error, Rejection, State};
use http_body_util::{BodyExt, Empty};
use hyper::body::Incoming;
use hyper_util::client::legacy::{connect::HttpConnector, Client};
use hyper_util::rt::TokioExecutor;
use tokio::net::TcpListener;
use tokio::time::{sleep, Instant};
use tower::{Layer, ServiceExt};

const HEALTHY: u8 = 0;
const SLOW: u8 = 1;
const FAILING: u8 = 2;
const NOT_FOUND: u8 = 3;
const TOKEN: &str = "e2e-t0ken-of-16-bytes";
const BREAKER: &str = "e2e-upstream";

/// The upstream's switchable behaviour and how many requests reached it.
#[derive(Default)]
struct Upstream {
    phase: AtomicU8,
    hits: AtomicUsize,
}

impl Upstream {
    fn set(&self, phase: u8) {
        self.phase.store(phase, SeqCst);
    }
    fn hits(&self) -> usize {
        self.hits.load(SeqCst)
    }
}

async fn upstream(AxumState(up): AxumState<Arc<Upstream>>) -> StatusCode {
    up.hits.fetch_add(1, SeqCst);
    match up.phase.load(SeqCst) {
        // The dependency's own latency, not a wait for anything: 300 ms is twice the slow bound.
        SLOW => {
            sleep(Duration::from_millis(300)).await;
            StatusCode::OK
        }
        FAILING => StatusCode::INTERNAL_SERVER_ERROR,
        NOT_FOUND => StatusCode::NOT_FOUND,
        _ => StatusCode::OK,
    }
}

async fn serve(app: Router) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{addr}")
}

type Body = Empty<Bytes>;
type HttpClient = Client<HttpConnector, Body>;
type KeyFn = fn(&Request<Body>) -> Option<String>;
type Classify = fn(&Result<Response<Incoming>, hyper_util::client::legacy::Error>) -> bool;
type Stack = BreakerService<HttpClient, Keyed<KeyFn>, Classify>;

fn host(req: &Request<Body>) -> Option<String> {
    req.uri().host().map(str::to_owned)
}

fn server_errors(res: &Result<Response<Incoming>, hyper_util::client::legacy::Error>) -> bool {
    res.as_ref().map_or(true, |r| r.status().is_server_error())
}

/// The client stack under test: one breaker per upstream host, built from the same settings
/// the attribute takes, with a bulkhead behind it.
fn stack() -> Stack {
    let settings = Breaker::builder(BREAKER)
        .window_calls(4)
        .slow(Duration::from_millis(150), 50)
        .timeout(Duration::from_secs(2))
        // Long enough that the open-state checks below never meet a half-open trial on a loaded
        // machine, short enough to keep the test around two seconds.
        .open_for(Duration::from_millis(500))
        .half_open_calls(2);
    let pool = Bulkhead::builder(BREAKER).pool(8).build().unwrap();
    let layer = BreakerLayer::keyed(settings, host as KeyFn)
        .unwrap()
        .failure(server_errors as Classify)
        .bulkhead(pool);
    let client = Client::builder(TokioExecutor::new()).build_http::<Body>();
    layer.layer(client)
}

fn get_req(url: &str) -> Request<Body> {
    Request::get(url).body(Body::new()).unwrap()
}

/// One request through the stack: the status, or the fusebox error.
async fn call(
    stack: &Stack,
    url: &str,
) -> Result<StatusCode, Error<hyper_util::client::legacy::Error>> {
    stack
        .clone()
        .oneshot(get_req(url))
        .await
        .map(|r| r.status())
}

/// A gateway route: the same stack inside a handler, a rejection answered by `IntoResponse`.
async fn gateway(AxumState((stack, url)): AxumState<(Stack, String)>) -> axum::response::Response {
    match stack.oneshot(get_req(&url)).await {
        Ok(res) => res.status().into_response(),
        Err(Error::Rejected(r)) => r.into_response(),
        Err(Error::Failed(e)) => (StatusCode::BAD_GATEWAY, e.to_string()).into_response(),
    }
}

/// Calls until `done` says so, pausing briefly between calls; panics past the deadline.
async fn until<F>(stack: &Stack, url: &str, what: &str, mut done: F) -> usize
where
    F: FnMut(&Result<StatusCode, Error<hyper_util::client::legacy::Error>>) -> bool,
{
    let deadline = Instant::now() + Duration::from_secs(10);
    for n in 1.. {
        let r = call(stack, url).await;
        if done(&r) {
            return n;
        }
        assert!(
            Instant::now() < deadline,
            "{what}: not within 10 s, last answer {r:?}"
        );
        sleep(Duration::from_millis(20)).await;
    }
    unreachable!()
}

fn plain_client() -> HttpClient {
    Client::builder(TokioExecutor::new()).build_http()
}

async fn text(
    client: &HttpClient,
    req: Request<Body>,
) -> (StatusCode, axum::http::HeaderMap, String) {
    let res = client.request(req).await.unwrap();
    let (parts, body) = res.into_parts();
    let body = body.collect().await.unwrap().to_bytes();
    (
        parts.status,
        parts.headers,
        String::from_utf8(body.to_vec()).unwrap(),
    )
}

#[tokio::test]
async fn the_breaker_opens_refuses_half_opens_and_closes_over_real_http() {
    let up = Arc::new(Upstream::default());
    let base = serve(
        Router::new()
            .route("/", get(upstream))
            .with_state(up.clone()),
    )
    .await;
    let url = format!("{base}/");
    let stack = stack();
    let gateway_url = serve(
        Router::new()
            .route("/", get(gateway))
            .with_state((stack.clone(), url.clone())),
    )
    .await;
    let name = format!("{BREAKER}/127.0.0.1");
    let mut transitions = registry().subscribe();

    // Healthy, then 404s: a 4xx is the dependency answering, not failing.
    assert_eq!(call(&stack, &url).await.unwrap(), StatusCode::OK);
    let breaker = registry()
        .breaker(&name)
        .expect("keyed by host, in the registry");
    up.set(NOT_FOUND);
    for _ in 0..8 {
        assert_eq!(call(&stack, &url).await.unwrap(), StatusCode::NOT_FOUND);
    }
    assert_eq!(breaker.state(), State::Closed);

    // Slow: 200 OK at 300 ms trips the 150 ms slow-call rule, as `slow = "150ms"` would.
    up.set(SLOW);
    let slow_calls = until(&stack, &url, "opening on slowness", |r| {
        matches!(r, Err(Error::Rejected(Rejection::Open { .. })))
    })
    .await;
    assert!(slow_calls <= 4, "opened after {slow_calls} calls");
    assert_eq!(breaker.state(), State::Open);

    // Open: refused without reaching the upstream; the gateway answers 503 with Retry-After.
    let hits = up.hits();
    match call(&stack, &url).await {
        Err(Error::Rejected(Rejection::Open { retry_in, .. })) => {
            assert!(retry_in.unwrap() <= Duration::from_millis(500))
        }
        other => panic!("expected a rejection, got {other:?}"),
    }
    let (status, headers, body) = text(&plain_client(), get_req(&gateway_url)).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert_eq!(headers["retry-after"], "1");
    // A public answer names nothing: no breaker, no host, no duration.
    assert!(!body.contains(&name), "{body}");
    assert_eq!(body, "Service Unavailable\n");
    assert_eq!(up.hits(), hits, "an open breaker calls nothing");

    // Failing: once open_for passes, a trial reaches the upstream, gets a 500, and reopens.
    up.set(FAILING);
    until(&stack, &url, "a half-open trial", |r| {
        matches!(r, Ok(StatusCode::INTERNAL_SERVER_ERROR))
    })
    .await;
    assert_eq!(breaker.state(), State::Open, "a failed trial reopens");

    // Healed: trials succeed and the breaker closes.
    up.set(HEALTHY);
    until(&stack, &url, "closing after healing", |_| {
        breaker.state() == State::Closed
    })
    .await;
    assert_eq!(call(&stack, &url).await.unwrap(), StatusCode::OK);

    let mut seen = Vec::new();
    while let Ok(t) = transitions.try_recv() {
        if *t.name == *name {
            seen.push(t.to);
        }
    }
    use State::{Closed, HalfOpen, Open};
    assert_eq!(seen, [Open, HalfOpen, Open, HalfOpen, Closed]);

    // The admin router shows the layer's breaker like any other.
    let admin = serve(fusebox::admin::router(TOKEN).unwrap()).await;
    let req = Request::get(format!("{admin}/breakers/{name}"))
        .header("authorization", format!("Bearer {TOKEN}"))
        .body(Body::new())
        .unwrap();
    let (status, _, body) = text(&plain_client(), req).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let json: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(json["name"], name.as_str());
    assert_eq!(json["state"], "closed");
    assert_eq!(json["times_opened"], 2);
    assert!(json["rejected"].as_u64().unwrap() >= 2);
}

#[fusebox::breaker(name = "e2e-shared")]
async fn annotated() -> Result<u16, Rejection> {
    Ok(200)
}

#[tokio::test]
async fn an_attribute_and_a_layer_of_one_name_are_one_breaker() {
    annotated().await.unwrap();
    let layer = BreakerLayer::new(Breaker::builder("e2e-shared")).unwrap();
    assert!(layer
        .breaker()
        .ptr_eq(&registry().breaker("e2e-shared").unwrap()));
    let svc = layer.layer(tower::service_fn(|_: ()| async { Ok::<_, Rejection>(200) }));
    svc.oneshot(()).await.unwrap();
    let m = registry().breaker("e2e-shared").unwrap().metrics();
    assert_eq!(
        (m.succeeded, m.conflicts),
        (2, 0),
        "same settings, one set of figures"
    );
}
