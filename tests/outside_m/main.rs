//! Issues 17 (adaptive bulkhead), 22 (probes while open, a ramp on close) and 16 (tower layers on
//! the registry in a real service), checked where their promises are about time and load: a
//! real dependency on loopback (axum), real clients (reqwest, a hyper-util tower stack),
//! open-loop load, real clocks and real scheduling jitter. Their paused-clock tests are
//! runtime/tests/adaptive.rs, adaptive_stall.rs and recovery_probes.rs / recovery_ramp.rs; these check that the same
//! promises hold on real sockets.
//!
//! Real sockets need real time (a paused clock would jump while tasks wait on IO). Each test
//! takes 10 to 20 s; every bound is the or the rustdoc's own number with room for a
//! loaded 2-core machine, never tighter. Every test prints its figures.
//!
//! The loopback dependency, the open-loop load and the admin client are here; one module per
//! promise: `adaptive_limit` and `stall_guard` (issue 17), `probes_and_ramp` (issues 22 and 16).
#![cfg(all(feature = "tower", feature = "admin"))]

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU16, AtomicU64, AtomicUsize, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::State as Shared;
use axum::http::{Request, StatusCode};
use axum::routing::get;
use axum::Router;
use bytes::Bytes;
use fusebox::tower::{BreakerLayer, FallbackLayer};
use fusebox::{breaker, bulkhead, registry, Breaker, Bulkhead, Error, Rejection, State};
use http_body_util::Empty;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio::time::{interval, sleep, sleep_until, Instant, MissedTickBehavior};
use tower::{Layer, ServiceExt};
use tracing::Level;

#[path = "../common/mod.rs"]
mod common;
#[path = "../common/log.rs"]
mod log;
use common::{ms, percentile, secs, DepError};
use log::log;

const TOKEN: &str = "outside-m-t0ken-of-16-bytes";

// ---- A dependency on loopback, and what it received ----

/// The dependency: answers `status` after `delay_ms`, and notes when each request arrived.
struct Dep {
    status: AtomicU16,
    delay_ms: AtomicU64,
    hits: Mutex<Vec<Instant>>,
}

impl Dep {
    fn new(delay_ms: u64) -> Arc<Dep> {
        Arc::new(Dep {
            status: AtomicU16::new(200),
            delay_ms: AtomicU64::new(delay_ms),
            hits: Mutex::new(Vec::new()),
        })
    }
    fn fail(&self, failing: bool) {
        self.status.store(if failing { 500 } else { 200 }, SeqCst);
    }
    fn delay(&self, ms: u64) {
        self.delay_ms.store(ms, SeqCst);
    }
    /// Requests that arrived in `from..to`.
    fn hits_in(&self, from: Instant, to: Instant) -> Vec<Instant> {
        let hits = self.hits.lock().unwrap();
        hits.iter()
            .copied()
            .filter(|t| *t >= from && *t < to)
            .collect()
    }
}

async fn answer(Shared(dep): Shared<Arc<Dep>>) -> StatusCode {
    dep.hits.lock().unwrap().push(Instant::now());
    sleep(ms(dep.delay_ms.load(SeqCst))).await;
    StatusCode::from_u16(dep.status.load(SeqCst)).unwrap()
}

async fn serve(app: Router) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{addr}")
}

async fn dependency(dep: &Arc<Dep>) -> String {
    let url = serve(
        Router::new()
            .route("/", get(answer))
            .with_state(dep.clone()),
    )
    .await;
    format!("{url}/")
}

/// The dependency's client as a service writes it: a 5xx or a broken connection fails.
async fn fetch(client: &reqwest::Client, url: &str) -> Result<(), DepError> {
    let res = client.get(url).send().await.map_err(|_| DepError::Down)?;
    if res.status().is_server_error() {
        return Err(DepError::Down);
    }
    res.bytes().await.map_err(|_| DepError::Down)?;
    Ok(())
}

// ---- Open-loop load ----

type Call = Arc<dyn Fn() -> Pin<Box<dyn Future<Output = ()> + Send>> + Send + Sync>;

/// Open-loop load: `call` every `every`, whatever the previous calls are doing, until `stop`.
/// Returns the send times and a count of the calls that finished.
struct Load {
    sent: Arc<Mutex<Vec<Instant>>>,
    done: Arc<AtomicUsize>,
    task: tokio::task::JoinHandle<()>,
}

fn open_loop(every: Duration, stop: Arc<AtomicBool>, call: Call) -> Load {
    let sent = Arc::new(Mutex::new(Vec::new()));
    let done = Arc::new(AtomicUsize::new(0));
    let task = {
        let (sent, done) = (sent.clone(), done.clone());
        tokio::spawn(async move {
            let mut tick = interval(every);
            tick.set_missed_tick_behavior(MissedTickBehavior::Skip);
            while !stop.load(SeqCst) {
                tick.tick().await;
                sent.lock().unwrap().push(Instant::now());
                let (call, done) = (call.clone(), done.clone());
                tokio::spawn(async move {
                    call().await;
                    done.fetch_add(1, SeqCst);
                });
            }
        })
    };
    Load { sent, done, task }
}

impl Load {
    /// Waits for the loop to stop and every call it sent to finish (bounded).
    async fn drain(self) -> Vec<Instant> {
        self.task.await.unwrap();
        let deadline = Instant::now() + secs(10);
        let sent = self.sent.lock().unwrap().clone();
        while self.done.load(SeqCst) < sent.len() {
            assert!(
                Instant::now() < deadline,
                "calls unanswered 10 s after the load stopped"
            );
            sleep(ms(20)).await;
        }
        sent
    }
}

// ---- The admin router over HTTP ----

async fn admin_get(client: &reqwest::Client, base: &str, path: &str) -> String {
    client
        .get(format!("{base}{path}"))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap()
}

/// The admin JSON's row of the bulkhead `name`.
async fn admin_bulkhead(client: &reqwest::Client, base: &str, name: &str) -> serde_json::Value {
    let all: serde_json::Value =
        serde_json::from_str(&admin_get(client, base, "/breakers").await).unwrap();
    all["bulkheads"]
        .as_array()
        .expect("bulkheads in the admin JSON")
        .iter()
        .find(|b| b["name"] == name)
        .unwrap_or_else(|| panic!("{name} in the admin JSON"))
        .clone()
}

/// One Prometheus sample's value: the line of `family` that names `name`.
fn gauge(text: &str, family: &str, name: &str) -> f64 {
    let line = text
        .lines()
        .find(|l| l.starts_with(&format!("{family}{{")) && l.contains(&format!("\"{name}\"")))
        .unwrap_or_else(|| panic!("{family} of {name} in Prometheus"));
    line.rsplit(' ').next().unwrap().parse().unwrap()
}

// One module per issue, each headed by the promise it checks.
mod adaptive_limit;
mod probes_and_ramp;
mod stall_guard;
