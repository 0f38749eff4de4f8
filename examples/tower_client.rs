//! A hyper-util client behind fusebox's tower layers, against an upstream this program serves
//! on loopback and breaks on purpose: healthy, then failing, then healthy again.
//!
//! ```sh
//! cargo run --example tower_client --features tower
//! ```
//!
//! The stack: `FallbackLayer` (a rejection answers "503 from fusebox") over a `BreakerLayer`
//! keyed by host, whose 5xx responses count as failures, with a bulkhead behind it.

use std::convert::Infallible;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Duration;

use axum::extract::State;
use axum::http::{Request, Response, StatusCode};
use axum::routing::get;
use axum::Router;
use bytes::Bytes;
use fusebox::tower::{BreakerLayer, FallbackLayer};
use fusebox::{registry, Breaker, Bulkhead, Error, Rejection};
use http_body_util::Empty;
use hyper::body::Incoming;
use hyper_util::client::legacy::{Client, Error as ClientError};
use hyper_util::rt::TokioExecutor;
use tower::{Layer, ServiceExt};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The upstream: answers 500 while `down` is set.
    let down = Arc::new(AtomicBool::new(false));
    let app = Router::new()
        .route(
            "/",
            get(|State(down): State<Arc<AtomicBool>>| async move {
                if down.load(Relaxed) {
                    StatusCode::INTERNAL_SERVER_ERROR
                } else {
                    StatusCode::OK
                }
            }),
        )
        .with_state(down.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}/", listener.local_addr()?);
    tokio::spawn(async move { axum::serve(listener, app).await });

    // The same settings table as `#[breaker(...)]`: one breaker per upstream host.
    let breaker = BreakerLayer::keyed(
        Breaker::builder("upstream")
            .window_calls(10)
            .timeout(Duration::from_millis(500))
            .open_for(Duration::from_millis(300))
            .half_open_calls(2),
        |req: &Request<Empty<Bytes>>| req.uri().host().map(str::to_owned),
    )?
    .failure(|res: &Result<Response<Incoming>, ClientError>| {
        res.as_ref().map_or(true, |r| r.status().is_server_error())
    })
    .bulkhead(Bulkhead::builder("upstream").pool(32).build()?);
    let fallback = FallbackLayer::new(|err: Error<ClientError>| async move {
        Ok::<_, Infallible>(match err {
            Error::Rejected(Rejection::Open { .. }) => "503 from fusebox (breaker open)".to_owned(),
            other => format!("error: {other}"),
        })
    });
    let client = Client::builder(TokioExecutor::new()).build_http::<Empty<Bytes>>();
    let stack = fallback.layer(
        breaker
            .layer(client)
            .map_response(|r| r.status().to_string()),
    );

    for round in 0..40 {
        // Down for rounds 10..20, then healed.
        down.store((10..20).contains(&round), Relaxed);
        let req = Request::get(&url).body(Empty::new())?;
        let answer = stack.clone().oneshot(req).await?;
        let state = registry().breaker("upstream/127.0.0.1").map(|b| b.state());
        println!("round {round:2}: {answer:<34} breaker {state:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let m = registry()
        .breaker("upstream/127.0.0.1")
        .expect("used")
        .metrics();
    println!(
        "calls {}, failed {}, rejected {}, opened {} times",
        m.calls, m.failed, m.rejected, m.times_opened
    );
    Ok(())
}
