//! Issues 30 (retries) and 31 (outcomes) end to end, as a user checks them: a real HTTP
//! dependency on loopback (axum), real clients (reqwest, tower), open-loop load from many
//! tasks, real time. Every other test of these issues runs on a paused clock; these count what
//! the dependency really receives, server-side, and when.
//!
//! Real sockets need real time (a paused clock would jump while tasks wait on IO). Each test
//! takes a few seconds; every bound leaves room for a loaded 2-core machine (a late request,
//! a slow scheduler) without letting the promised behaviour slip through.
//!
//! The dependency and the client as a user writes it are here; one module per promise:
//! `retry_after`, `slow_dependency`, `tower_retry` (issue 30) and `outcomes` (issue 31).
#![cfg(feature = "tower")]

use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::State as AxumState;
use axum::http::{header::RETRY_AFTER, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::Router;
use fusebox::call::Outcome;
use fusebox::retry::{Backoff, Retry};
use fusebox::tower::{BreakerLayer, Classified, RetryLayer};
use fusebox::{breaker, bulkhead, registry, retry, Breaker, Error, Rejection, State};
use reqwest::Client;
use tokio::net::TcpListener;
use tower::{service_fn, ServiceBuilder, ServiceExt};

#[path = "../common/mod.rs"]
mod common;
use common::{ms, secs};

// --- The dependency ----------------------------------------------------------------------

/// What the dependency answers to a request for `path` arriving `at` into the test: a status,
/// a `Retry-After` in seconds, and how long it takes.
type Script = dyn Fn(Duration, &str) -> (u16, Option<u64>, Duration) + Send + Sync;

/// A dependency on loopback that counts what it receives, when, and how many at once.
struct Upstream {
    started: Instant,
    script: Box<Script>,
    /// Every request: when it arrived, its path, the status it got.
    hits: Mutex<Vec<(Duration, String, u16)>>,
    in_flight: AtomicUsize,
    peak: AtomicUsize,
}

impl Upstream {
    /// Starts serving on a free loopback port; returns it and its base URL.
    async fn start(
        script: impl Fn(Duration, &str) -> (u16, Option<u64>, Duration) + Send + Sync + 'static,
    ) -> (Arc<Upstream>, String) {
        let up = Arc::new(Upstream {
            started: Instant::now(),
            script: Box::new(script),
            hits: Mutex::new(Vec::new()),
            in_flight: AtomicUsize::new(0),
            peak: AtomicUsize::new(0),
        });
        let app = Router::new().fallback(answer).with_state(up.clone());
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await });
        (up, format!("http://{addr}"))
    }

    /// Time since the dependency started: the test's clock.
    fn now(&self) -> Duration {
        self.started.elapsed()
    }

    /// Requests received in `[from, to)`, on paths starting with `path`.
    fn hits_between(&self, path: &str, from: Duration, to: Duration) -> Vec<(Duration, u16)> {
        let hits = self.hits.lock().unwrap();
        hits.iter()
            .filter(|(at, p, _)| p.starts_with(path) && *at >= from && *at < to)
            .map(|(at, _, s)| (*at, *s))
            .collect()
    }

    fn count(&self, path: &str) -> usize {
        self.hits_between(path, Duration::ZERO, Duration::MAX).len()
    }

    /// Resets the peak of concurrent requests.
    fn reset_peak(&self) {
        self.peak.store(self.in_flight.load(SeqCst), SeqCst);
    }
}

/// Decrements the in-flight count when a request ends (or its client went away).
struct InFlight<'a>(&'a AtomicUsize);

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, SeqCst);
    }
}

async fn answer(AxumState(up): AxumState<Arc<Upstream>>, uri: Uri) -> Response {
    let at = up.now();
    let path = uri.path().to_owned();
    let (status, retry_after, delay) = (up.script)(at, &path);
    up.hits.lock().unwrap().push((at, path, status));
    let now = up.in_flight.fetch_add(1, SeqCst) + 1;
    up.peak.fetch_max(now, SeqCst);
    let _flight = InFlight(&up.in_flight);
    if !delay.is_zero() {
        // The dependency's own latency.
        tokio::time::sleep(delay).await;
    }
    let mut res = StatusCode::from_u16(status).unwrap().into_response();
    if let Some(s) = retry_after {
        res.headers_mut().insert(RETRY_AFTER, s.into());
    }
    res
}

// --- The client, as a user writes it -----------------------------------------------------

/// A client's error: a status it treats as an error (with its `Retry-After`), the transport,
/// or fusebox's refusal.
#[derive(Debug, Clone)]
#[allow(dead_code)] // The fields are read by `Debug`, in failure messages.
enum HttpError {
    Status(u16, Option<Duration>),
    Transport(String),
    Refused(Rejection),
}

impl From<Rejection> for HttpError {
    fn from(r: Rejection) -> Self {
        HttpError::Refused(r)
    }
}

/// `retry_after = ..`: the `Retry-After` the dependency sent with its error.
fn server_hint(e: &HttpError) -> Option<Duration> {
    match e {
        HttpError::Status(_, after) => *after,
        _ => None,
    }
}

/// GET `url`: a 2xx is `Ok(status)`, any other status an error carrying its `Retry-After`.
async fn get(client: &Client, url: &str) -> Result<u16, HttpError> {
    let res = client
        .get(url)
        .send()
        .await
        .map_err(|e| HttpError::Transport(e.to_string()))?;
    let status = res.status().as_u16();
    if res.status().is_success() {
        return Ok(status);
    }
    let after = res
        .headers()
        .get(RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .and_then(|s| s.parse().ok())
        .map(Duration::from_secs);
    Err(HttpError::Status(status, after))
}

fn client() -> Client {
    Client::builder().build().unwrap()
}

/// Where an answer came from.
#[derive(Debug, Clone, PartialEq)]
enum Answer {
    /// The dependency's status.
    Dep(u16),
    /// The fallback, for a refusal (open breaker, full bulkhead).
    Refused,
    /// The fallback, for a counted failure (after the retries gave up).
    Failed,
}

fn degraded(e: Error<HttpError>) -> Result<Answer, HttpError> {
    Ok(match e {
        Error::Rejected(Rejection::Open { .. } | Rejection::Full { .. }) => Answer::Refused,
        _ => Answer::Failed,
    })
}

/// The 95th percentile of how long `calls` took: the bound for "at once", which one stall of
/// a loaded machine's scheduler must not decide.
fn p95<'a, T: 'a>(calls: impl IntoIterator<Item = &'a Record<T>>) -> Duration {
    let mut took: Vec<Duration> = calls.into_iter().map(|(_, took, _)| *took).collect();
    took.sort();
    took.get(took.len() * 95 / 100).copied().unwrap_or_default()
}

/// One call of the load: when it started, how long it took, what it got.
type Record<T> = (Duration, Duration, T);

/// Open-loop load: `per_s` calls a second for `for_`, each on a task of its own whatever the
/// others are doing (callers do not wait for each other), then waits for every call to end.
async fn open_loop<T, F, Fut>(up: &Upstream, per_s: u64, for_: Duration, call: F) -> Vec<Record<T>>
where
    T: Send + 'static,
    F: Fn() -> Fut,
    Fut: Future<Output = T> + Send + 'static,
{
    let mut tick = tokio::time::interval(Duration::from_micros(1_000_000 / per_s));
    let mut tasks = Vec::new();
    let end = up.now() + for_;
    while up.now() < end {
        tick.tick().await;
        let fut = call();
        let started = up.now();
        let t0 = Instant::now();
        tasks.push(tokio::spawn(async move {
            let r = fut.await;
            (started, t0.elapsed(), r)
        }));
    }
    let mut out = Vec::new();
    for t in tasks {
        out.push(t.await.unwrap());
    }
    out
}

// One module per issue, each headed by the promise it checks.
mod outcomes;
mod retry_after;
mod slow_dependency;
mod tower_retry;
