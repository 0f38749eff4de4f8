//! A small real HTTP service whose handlers call a flaky dependency through fusebox, with the
//! admin router on a second port. The dependency is served on loopback by this same program.
//!
//! ```sh
//! FUSEBOX_ADMIN_TOKEN=change-me-to-16-bytes-or-more cargo run --example service --features admin
//! curl -s 127.0.0.1:8080/quote/eu
//! curl -s -H "Authorization: Bearer change-me-to-16-bytes-or-more" 127.0.0.1:9091/breakers
//! xdg-open 'http://127.0.0.1:9091/#token=change-me-to-16-bytes-or-more'   # the operator's page
//! ```
//!
//! Environment: `FUSEBOX_SERVICE_ADDR` (default `127.0.0.1:8080`), `FUSEBOX_ADMIN_ADDR`
//! (default `127.0.0.1:9091`), `FUSEBOX_ADMIN_TOKEN` (required).
//!
//! The client call is an annotated function, as a service writes it: `#[breaker]` with one
//! keyed breaker per region (`quotes/eu`, `quotes/us`), `#[bulkhead]` with one shared pool,
//! and a fallback that sees the call's arguments (the region it could not quote).

use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use fusebox::{breaker, bulkhead, registry, Breaker, Error};
use tokio::net::TcpListener;
use tokio::time::{sleep, Instant};

/// The regions the service knows: a fixed list, so user input never creates breakers.
const REGIONS: [&str; 2] = ["eu", "us"];
/// The dependency's `eu` side cycles through healthy, failing and slow phases of this length.
const CYCLE_SECS: u64 = 60;

struct App {
    client: reqwest::Client,
    dependency: String,
}

#[tokio::main]
async fn main() -> ExitCode {
    tracing_subscriber::fmt().with_target(false).init();
    match run().await {
        Ok(()) => ExitCode::SUCCESS,
        Err(msg) => {
            eprintln!("service: {msg}");
            ExitCode::from(2)
        }
    }
}

async fn run() -> Result<(), String> {
    let token = std::env::var("FUSEBOX_ADMIN_TOKEN").map_err(|_| {
        "FUSEBOX_ADMIN_TOKEN is not set: the admin port needs a bearer token, \
         e.g. FUSEBOX_ADMIN_TOKEN=$(openssl rand -hex 16)"
            .to_owned()
    })?;
    let service_addr = addr("FUSEBOX_SERVICE_ADDR", "127.0.0.1:8080")?;
    let admin_addr = addr("FUSEBOX_ADMIN_ADDR", "127.0.0.1:9091")?;
    if !admin_addr.ip().is_loopback() {
        tracing::warn!(%admin_addr, "the admin router is reachable beyond this machine");
    }
    let (service, admin) = routers(token).await?;

    let service_listener = bind(service_addr).await?;
    let admin_listener = bind(admin_addr).await?;
    tracing::info!(
        service = %service_addr,
        admin = %admin_addr,
        "serving; the eu dependency fails 40-50 s and is slow 50-60 s of every minute"
    );
    tracing::info!("operator page: http://{admin_addr}/ (type the token, or append #token=...)");
    let shutdown = || async {
        let _ = tokio::signal::ctrl_c().await;
    };
    let service = axum::serve(service_listener, service).with_graceful_shutdown(shutdown());
    let admin = axum::serve(admin_listener, admin).with_graceful_shutdown(shutdown());
    tokio::try_join!(async { service.await }, async { admin.await })
        .map(|_| ())
        .map_err(|e| format!("server error: {e}"))
}

/// The service's router and the admin router, with the breakers registered and the dependency
/// served; binding them is the caller's (`tests/admin_page_browser.rs` calls this too).
pub async fn routers(token: String) -> Result<(Router, Router), String> {
    let admin =
        fusebox::admin::router(token).map_err(|e| format!("FUSEBOX_ADMIN_TOKEN refused: {e}"))?;
    let dependency = serve_dependency().await?;
    // The same settings as `fetch_quote`'s attribute: keyed breakers appear per key once used,
    // so the two known regions are registered up front for the admin router to list them.
    let template = Breaker::builder("quotes")
        .timeout(Duration::from_millis(300))
        .trip_p95(Duration::from_millis(200))
        .min_calls(10)
        .open_for(Duration::from_secs(10))
        .half_open_pct(20)
        .half_open_window(Duration::from_secs(5))
        .alert_after(Duration::from_secs(60))
        .config()
        .map_err(|e| e.to_string())?;
    for region in REGIONS {
        registry().keyed(&template, &region);
    }
    let app = Arc::new(App {
        client: reqwest::Client::new(),
        dependency,
    });
    let service = Router::new()
        .route("/quote/{region}", get(quote))
        .route("/healthz", get(healthz))
        .with_state(app);
    Ok((service, admin))
}

fn addr(var: &str, default: &str) -> Result<SocketAddr, String> {
    let s = std::env::var(var).unwrap_or_else(|_| default.to_owned());
    s.parse()
        .map_err(|e| format!("{var}={s:?} is not an address like {default}: {e}"))
}

async fn bind(addr: SocketAddr) -> Result<TcpListener, String> {
    TcpListener::bind(addr)
        .await
        .map_err(|e| format!("cannot listen on {addr}: {e}"))
}

/// `GET /quote/{region}`: the dependency's answer through the region's breaker and the pool.
async fn quote(State(app): State<Arc<App>>, Path(region): Path<String>) -> Response {
    if !REGIONS.contains(&region.as_str()) {
        return (StatusCode::NOT_FOUND, "unknown region\n").into_response();
    }
    match fetch_quote(&app, &region).await {
        Ok(Quote::Live(quote)) => quote.into_response(),
        Ok(Quote::Yesterday) | Err(_) => (
            StatusCode::OK,
            [("x-fusebox-fallback", "1")],
            "no live quote right now; prices as of yesterday apply\n",
        )
            .into_response(),
    }
}

/// A live quote, or the fallback's "prices as of yesterday".
enum Quote {
    Live(String),
    Yesterday,
}

/// One quote from the dependency, through the region's breaker and the shared pool.
#[breaker(name = "quotes", key = region, timeout = "300ms", trip_p95 = "200ms", min_calls = 10,
          open_for = "10s", half_open_pct = 20, half_open_window = "5s", alert_after = "60s",
          fallback = yesterday)]
#[bulkhead(name = "quotes", pool = 32)]
async fn fetch_quote(app: &App, region: &str) -> Result<Quote, String> {
    let url = format!("{}/quote/{region}", app.dependency);
    let resp = app
        .client
        .get(url)
        .send()
        .await
        .map_err(|e| e.to_string())?;
    if !resp.status().is_success() {
        return Err(format!("dependency answered {}", resp.status()));
    }
    resp.text()
        .await
        .map(Quote::Live)
        .map_err(|e| e.to_string())
}

/// What the user gets while the dependency is failing or its breaker is open; it sees the
/// call's arguments, so the log says which region is degraded.
fn yesterday(_app: &App, region: &str, err: Error<String>) -> Result<Quote, String> {
    tracing::warn!(%err, region, "quote degraded");
    Ok(Quote::Yesterday)
}

/// The breakers whose being stuck makes this instance unfit for traffic. Not every breaker:
/// one tenant's or one region's dependency stuck is every instance's problem (they share it),
/// and ejecting instances for it would take the whole service down. Name yours here.
const CRITICAL: [&str; 1] = ["quotes/us"];

/// `GET /healthz`: readiness. 503 while a breaker in [`CRITICAL`] is stuck, so a load balancer
/// stops sending traffic; the body names no breaker (this is the public port), the log does.
async fn healthz() -> Response {
    readiness(&CRITICAL)
}

fn readiness(critical: &[&str]) -> Response {
    let stuck: Vec<String> = critical
        .iter()
        .filter_map(|name| registry().breaker(name))
        .map(|b| b.metrics())
        .filter(|m| m.stuck)
        .map(|m| m.name)
        .collect();
    if stuck.is_empty() {
        "ok\n".into_response()
    } else {
        tracing::warn!(?stuck, "not ready: critical breakers stuck");
        (StatusCode::SERVICE_UNAVAILABLE, "not ready\n").into_response()
    }
}

/// Serves the flaky dependency on an ephemeral loopback port; returns its base URL.
async fn serve_dependency() -> Result<String, String> {
    let listener = bind(SocketAddr::from(([127, 0, 0, 1], 0))).await?;
    let url = format!(
        "http://{}",
        listener.local_addr().map_err(|e| e.to_string())?
    );
    let started = Instant::now();
    let dep = Router::new()
        .route("/quote/{region}", get(dependency_quote))
        .with_state(started);
    tokio::spawn(async move { axum::serve(listener, dep).await });
    Ok(url)
}

/// The dependency: `us` is always healthy; `eu` is healthy, then failing, then slow.
async fn dependency_quote(State(started): State<Instant>, Path(region): Path<String>) -> Response {
    let phase = started.elapsed().as_secs() % CYCLE_SECS;
    if region == "eu" && (40..50).contains(&phase) {
        return (StatusCode::INTERNAL_SERVER_ERROR, "database unavailable\n").into_response();
    }
    let latency = if region == "eu" && phase >= 50 {
        800
    } else {
        20
    };
    sleep(Duration::from_millis(latency)).await;
    format!("{region}: 1 EUR = 1.08 USD\n").into_response()
}

// In a test scope (feature `testing`): this file is also compiled into the browser test,
// whose page counts the breakers of the process-wide registry.
#[cfg(all(test, feature = "testing"))]
mod tests {
    use super::*;

    async fn answer(critical: &[&str]) -> (StatusCode, String) {
        let resp = readiness(critical);
        let status = resp.status();
        let body = axum::body::to_bytes(resp.into_body(), 1024).await.unwrap();
        (status, String::from_utf8(body.to_vec()).unwrap())
    }

    #[tokio::test(start_paused = true)]
    async fn readiness_watches_only_the_critical_breakers_and_names_none() {
        let _scope = fusebox::testing::scope();
        let template = Breaker::builder("health")
            .alert_after(Duration::from_secs(60))
            .config()
            .unwrap();
        let tenant = registry().keyed(&template, &"tenant-7");
        let core = registry().keyed(&template, &"core");
        tenant.force_open();
        tokio::time::advance(Duration::from_secs(61)).await;
        assert!(tenant.metrics().stuck);
        // One tenant's breaker stuck: still ready (before: 503 for every instance).
        assert_eq!(
            answer(&["health/core"]).await,
            (StatusCode::OK, "ok\n".into())
        );
        core.force_open();
        tokio::time::advance(Duration::from_secs(61)).await;
        let (status, body) = answer(&["health/core"]).await;
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
        assert!(
            !body.contains("health"),
            "no breaker names on the public port: {body}"
        );
    }
}
