//! Issues 17 (adaptive bulkhead), 22 (probes while open, a ramp on close) and 16 (tower layers on
//! the registry in a real service), checked where their promises are about time and load: a
//! real dependency on loopback (axum), real clients (reqwest, a hyper-util tower stack),
//! open-loop load, real clocks and real scheduling jitter. Their paused-clock tests are
//! runtime/tests/adaptive.rs, adaptive_stall.rs and recovery.rs; these check that the same
//! promises hold on real sockets.
//!
//! Real sockets need real time (a paused clock would jump while tasks wait on IO). Each test
//! takes 10 to 20 s; every bound is the or the rustdoc's own number with room for a
//! loaded 2-core machine, never tighter. Every test prints its figures.
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

mod common;
#[path = "common/log.rs"]
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

// =============================================================================================
// Issue 17: "when the dependency slows, the limit shrinks before the callers' workers fill;
// when it recovers, the limit grows back" (within 30 s), visible while it moves.

/// A report dependency behind a timeout and an adaptive limit (the breaker never opens here:
/// `min_calls` is out of reach, so only the bulkhead acts).
#[breaker(
    name = "om-report",
    timeout = "3s",
    window_calls = 1000,
    min_calls = 1000
)]
#[bulkhead(
    name = "om-report-pool",
    limit = "adaptive",
    min_pool = 2,
    max_pool = 40,
    pool = 20
)]
async fn report(client: &reqwest::Client, url: &str) -> Result<(), DepError> {
    fetch(client, url).await
}

/// The service: 20 workers (say, database connections) that every request holds for its whole
/// duration, shared by `/report` (which calls the dependency) and `/fast` (which does not).
struct Service {
    workers: Semaphore,
    in_use: AtomicUsize,
    peak: AtomicUsize,
    client: reqwest::Client,
    dep_url: String,
}

const WORKERS: usize = 20;

/// A worker held, counted while held.
struct Worker<'a> {
    svc: &'a Service,
    _permit: tokio::sync::SemaphorePermit<'a>,
}

impl Service {
    async fn worker(&self) -> Worker<'_> {
        let permit = self.workers.acquire().await.unwrap();
        let n = self.in_use.fetch_add(1, SeqCst) + 1;
        self.peak.fetch_max(n, SeqCst);
        Worker {
            svc: self,
            _permit: permit,
        }
    }
}

impl Drop for Worker<'_> {
    fn drop(&mut self) {
        self.svc.in_use.fetch_sub(1, SeqCst);
    }
}

async fn report_route(Shared(svc): Shared<Arc<Service>>) -> StatusCode {
    let _w = svc.worker().await;
    match report(&svc.client, &svc.dep_url).await {
        Ok(()) => StatusCode::OK,
        Err(_) => StatusCode::SERVICE_UNAVAILABLE,
    }
}

async fn fast_route(Shared(svc): Shared<Arc<Service>>) -> StatusCode {
    let _w = svc.worker().await;
    sleep(ms(2)).await;
    StatusCode::OK
}

/// GETs `url` every `every` until `stop`, keeping how long each answer took and whether it was
/// a 200.
fn http_load(
    client: reqwest::Client,
    url: String,
    every: Duration,
    stop: Arc<AtomicBool>,
    answers: Arc<Mutex<Vec<(Duration, bool)>>>,
) -> Load {
    open_loop(
        every,
        stop,
        Arc::new(move || {
            let (client, url, answers) = (client.clone(), url.clone(), answers.clone());
            Box::pin(async move {
                let at = Instant::now();
                let ok =
                    matches!(client.get(&url).send().await, Ok(r) if r.status() == StatusCode::OK);
                answers.lock().unwrap().push((at.elapsed(), ok));
            })
        }),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_adaptive_limit_shrinks_before_the_workers_fill_and_grows_back_within_30_s() {
    let log = log();
    let dep = Dep::new(40);
    let svc = Arc::new(Service {
        workers: Semaphore::new(WORKERS),
        in_use: AtomicUsize::new(0),
        peak: AtomicUsize::new(0),
        client: reqwest::Client::new(),
        dep_url: dependency(&dep).await,
    });
    let app = Router::new()
        .route("/report", get(report_route))
        .route("/fast", get(fast_route))
        .with_state(svc.clone())
        .nest("/fusebox", fusebox::admin::router(TOKEN).unwrap());
    let base = serve(app).await;
    let admin = format!("{base}/fusebox");
    let pool = registry()
        .bulkhead("om-report-pool")
        .expect("listed before its first call");
    let client = reqwest::Client::new();

    let t0 = Instant::now();
    let stop = Arc::new(AtomicBool::new(false));
    // The limit as the process sees it, and as an operator sees it over the admin JSON.
    let seen = Arc::new(Mutex::new(Vec::<(Instant, usize)>::new()));
    let seen_http = Arc::new(Mutex::new(Vec::<(Instant, usize)>::new()));
    let watchers = [
        tokio::spawn({
            let (pool, seen, stop) = (pool.clone(), seen.clone(), stop.clone());
            async move {
                while !stop.load(SeqCst) {
                    seen.lock().unwrap().push((Instant::now(), pool.pool()));
                    sleep(ms(10)).await;
                }
            }
        }),
        tokio::spawn({
            let (client, admin, seen, stop) = (
                client.clone(),
                admin.clone(),
                seen_http.clone(),
                stop.clone(),
            );
            async move {
                while !stop.load(SeqCst) {
                    let row = admin_bulkhead(&client, &admin, "om-report-pool").await;
                    let limit = row["pool"].as_u64().unwrap() as usize;
                    seen.lock().unwrap().push((Instant::now(), limit));
                    sleep(ms(100)).await;
                }
            }
        }),
    ];
    let (reports, fasts) = (Arc::default(), Arc::new(Mutex::new(Vec::new())));
    let loads = [
        http_load(
            client.clone(),
            format!("{base}/report"),
            ms(10),
            stop.clone(),
            reports,
        ),
        http_load(
            client.clone(),
            format!("{base}/fast"),
            ms(10),
            stop.clone(),
            fasts.clone(),
        ),
    ];

    // Healthy for 3 s (about 30 windows: the long-term latency is learnt), then 20 times
    // slower: at 100 calls/s, 800 ms calls would need 80 workers of the 20 there are.
    sleep_until(t0 + secs(3)).await;
    let slow_at = Instant::now();
    dep.delay(800);
    sleep_until(slow_at + secs(5)).await;
    // The plateau: the limit at min_pool, the same in metrics(), the JSON and Prometheus.
    let before = pool.pool();
    let text = admin_get(&client, &admin, "/metrics").await;
    let json_row = admin_bulkhead(&client, &admin, "om-report-pool").await;
    let after = pool.pool();
    let m = pool.metrics();
    sleep_until(slow_at + secs(6)).await;
    let healed_at = Instant::now();
    dep.delay(40);
    // Until the full limit is back (the issue: within 30 s of the recovery), and a second more.
    let mut back_at = None;
    while healed_at.elapsed() < secs(30) {
        if pool.pool() >= 20 {
            back_at = Some(Instant::now());
            break;
        }
        sleep(ms(10)).await;
    }
    sleep(secs(1)).await;
    stop.store(true, SeqCst);
    for w in watchers {
        w.await.unwrap();
    }
    for load in loads {
        load.drain().await;
    }
    let history = pool.metrics().adaptive.expect("adaptive").history;

    let seen = std::mem::take(&mut *seen.lock().unwrap());
    let seen_http = std::mem::take(&mut *seen_http.lock().unwrap());
    let during = |from: Instant, to: Instant, xs: &[(Instant, usize)]| -> Vec<usize> {
        xs.iter()
            .filter(|(t, _)| *t >= from && *t < to)
            .map(|(_, l)| *l)
            .collect()
    };
    let first_at_most = |limit: usize| {
        seen.iter()
            .find(|(t, l)| *t >= slow_at && *l <= limit)
            .map(|(t, _)| *t - slow_at)
    };
    let healthy = during(t0 + secs(1), slow_at, &seen);
    let fast = std::mem::take(&mut *fasts.lock().unwrap());
    let fast_ok = fast.iter().filter(|(_, ok)| *ok).count();
    let fast_p99 = percentile(fast.iter().map(|(d, _)| *d).collect(), 0.99);
    let back_in = back_at.map(|t| t - healed_at);
    let peak = svc.peak.load(SeqCst);
    eprintln!(
        "issue 17 real run: healthy limit {:?}..={:?}; after the slowdown: halved in {:?}, \
         min_pool in {:?}; workers peak {peak}/{WORKERS} (bulkhead peak {}); /fast {fast_ok}/{} \
         answered, p99 {fast_p99:?}; full limit back {back_in:?} after the recovery; \
         admin JSON saw {:?}; history {:?}",
        healthy.iter().min(),
        healthy.iter().max(),
        first_at_most(10),
        first_at_most(2),
        m.peak,
        fast.len(),
        seen_http.iter().map(|(_, l)| *l).collect::<Vec<_>>(),
        history.iter().map(|c| c.limit).collect::<Vec<_>>(),
    );

    // Slowed: the limit shrinks before the callers' workers fill. Not one moment with all 20
    // workers taken, so the route that never calls the dependency kept answering at once.
    assert!(peak < WORKERS, "all {WORKERS} workers were taken");
    assert_eq!(fast_ok, fast.len(), "/fast not all answered");
    assert!(fast_p99 <= ms(250), "/fast p99 {fast_p99:?}");
    // Halved within 4 windows of the new latency (the rustdoc's bound), a window being at least
    // one 800 ms call long; then down to min_pool while the dependency stays slow.
    let halved = first_at_most(10).expect("the limit never halved");
    assert!(halved <= ms(4 * 800), "halved {halved:?} into the slowdown");
    assert!(
        first_at_most(2).is_some(),
        "never down to min_pool while 20x slower"
    );
    // Visible while it moves: at the plateau the process, the admin JSON and Prometheus agree.
    assert_eq!((before, after), (2, 2), "at min_pool 5 s into the slowdown");
    assert_eq!(m.pool, 2);
    assert_eq!(json_row["pool"], 2, "{json_row}");
    assert_eq!(json_row["adaptive"]["min_pool"], 2, "{json_row}");
    assert_eq!(gauge(&text, "fusebox_bulkhead_pool", "om-report-pool"), 2.0);
    assert_eq!(
        gauge(&text, "fusebox_bulkhead_limit_min", "om-report-pool"),
        2.0
    );
    assert!(
        gauge(
            &text,
            "fusebox_bulkhead_limit_changes_total",
            "om-report-pool"
        ) >= 2.0
    );
    // An operator polling the admin JSON saw it go down and come back.
    assert!(
        during(slow_at, healed_at, &seen_http).contains(&2),
        "{seen_http:?}"
    );
    assert!(seen_http.last().unwrap().1 >= 20, "{seen_http:?}");
    // Recovered: the full limit back within 30 s of the dependency's recovery.
    let back_in =
        back_in.unwrap_or_else(|| panic!("limit {} 30 s after the recovery", pool.pool()));
    assert!(back_in <= secs(30), "{back_in:?}");
    // Its recent history shows the fall to min_pool and the climb back, step by step.
    let limits: Vec<usize> = history.iter().map(|c| c.limit).collect();
    let low = limits
        .iter()
        .rposition(|l| *l == 2)
        .expect("min_pool in the history");
    let climb = &limits[low..];
    assert!(
        climb.windows(2).all(|w| w[1] > w[0]) && climb.len() >= 3 && *climb.last().unwrap() >= 20,
        "a climb from 2 back to 20 in steps: {limits:?}"
    );
    // Logged: every change at DEBUG, the collapse to min_pool at WARN.
    assert!(log.count(Level::WARN, "om-report-pool", "collapsed to min_pool") >= 1);
    let debug = log.count(Level::DEBUG, "om-report-pool", "bulkhead limit");
    assert!(
        debug >= 2,
        "{debug} DEBUG lines: {:?}",
        log.of("om-report-pool")
    );
}

// ---------------------------------------------------------------------------------------------
// Issue 17's stall guard (the `Bulkhead` rustdoc's "Adaptive limit"): calls that keep starting
// while none ends are cut to the calls in flight; slow calls that keep ending never trip it.

/// A dependency that will stop answering (its calls end at the 2 s timeout).
#[breaker(
    name = "om-hang",
    timeout = "2s",
    window_calls = 1000,
    min_calls = 1000
)]
#[bulkhead(name = "om-hang-pool", limit = "adaptive")]
async fn hanging(client: &reqwest::Client, url: &str) -> Result<(), DepError> {
    fetch(client, url).await
}

/// A dependency that is slow from the start, and stays so.
#[breaker(
    name = "om-steady",
    timeout = "2s",
    window_calls = 1000,
    min_calls = 1000
)]
#[bulkhead(name = "om-steady-pool", limit = "adaptive")]
async fn steady(client: &reqwest::Client, url: &str) -> Result<(), DepError> {
    fetch(client, url).await
}

/// `call(client, url)` every 20 ms (50 calls/s) until `stop`, counting refusals by the pool.
fn calls_at_50_a_second<F, Fut>(
    f: F,
    url: String,
    stop: Arc<AtomicBool>,
    refused: Arc<AtomicUsize>,
) -> Load
where
    F: Fn(reqwest::Client, String) -> Fut + Send + Sync + Copy + 'static,
    Fut: Future<Output = Result<(), DepError>> + Send + 'static,
{
    let client = reqwest::Client::new();
    open_loop(
        ms(20),
        stop,
        Arc::new(move || {
            let (client, url, refused) = (client.clone(), url.clone(), refused.clone());
            Box::pin(async move {
                if let Err(DepError::Unavailable(Rejection::Full { .. })) = f(client, url).await {
                    refused.fetch_add(1, SeqCst);
                }
            })
        }),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dependency_that_stops_answering_holds_a_handful_of_slots_and_slow_calls_none() {
    let log = log();
    let (hang, slow) = (Dep::new(20), Dep::new(300));
    let (hang_url, slow_url) = (dependency(&hang).await, dependency(&slow).await);
    let hang_pool = registry().bulkhead("om-hang-pool").unwrap();
    let slow_pool = registry().bulkhead("om-steady-pool").unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let (hang_refused, slow_refused) =
        (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let loads = [
        calls_at_50_a_second(
            |c, u| async move { hanging(&c, &u).await },
            hang_url,
            stop.clone(),
            hang_refused.clone(),
        ),
        calls_at_50_a_second(
            |c, u| async move { steady(&c, &u).await },
            slow_url,
            stop.clone(),
            slow_refused.clone(),
        ),
    ];
    let slow_lowest = Arc::new(AtomicUsize::new(usize::MAX));
    let watch = tokio::spawn({
        let (pool, lowest, stop) = (slow_pool.clone(), slow_lowest.clone(), stop.clone());
        async move {
            while !stop.load(SeqCst) {
                lowest.fetch_min(pool.pool(), SeqCst);
                sleep(ms(10)).await;
            }
        }
    });

    // Healthy for 2 s, then the dependency stops answering for 3 s (every call waits out its
    // 2 s timeout), then answers in 20 ms again.
    sleep(secs(2)).await;
    let before = hang_pool.metrics().peak;
    hang.delay(10_000);
    sleep(secs(3)).await;
    let peak = hang_pool.metrics().peak;
    let cut_to = hang_pool.pool();
    hang.delay(20);
    let healed_at = Instant::now();
    let mut back_in = None;
    while healed_at.elapsed() < secs(30) {
        if hang_pool.pool() >= 20 {
            back_in = Some(healed_at.elapsed());
            break;
        }
        sleep(ms(10)).await;
    }
    stop.store(true, SeqCst);
    watch.await.unwrap();
    for load in loads {
        load.drain().await;
    }
    let history: Vec<usize> = hang_pool
        .metrics()
        .adaptive
        .unwrap()
        .history
        .iter()
        .map(|c| c.limit)
        .collect();
    let slow_m = slow_pool.metrics();
    eprintln!(
        "stall guard real run: peak in flight {before} healthy, {peak} once it stopped answering \
         (limit {cut_to} 3 s in, {} refused); full limit back {back_in:?} after; history {history:?}; \
         steady 300 ms: lowest limit {}, {} refused, peak {}, limit now {}",
        hang_refused.load(SeqCst),
        slow_lowest.load(SeqCst),
        slow_refused.load(SeqCst),
        slow_m.peak,
        slow_m.pool,
    );

    // Stopped answering: after 100 ms without an end (5 calls at 50/s, 6 or 7 with the calls
    // that were answering), no more calls are let in than are already waiting. A loaded
    // machine may deliver a few late ticks at once: at most half of the limit, never the limit.
    assert!(before <= 5, "healthy peak {before}");
    assert!(
        peak <= 10,
        "{peak} calls in flight into a dependency that stopped answering"
    );
    assert!(
        log.count(Level::DEBUG, "om-hang-pool", "cut to the calls in flight") >= 1,
        "the guard's cut is logged at DEBUG"
    );
    assert!(
        cut_to < 20,
        "the limit stays cut while the dependency hangs: {cut_to}"
    );
    // Answering again: the full limit is back within 30 s (the bound).
    let back_in = back_in.unwrap_or_else(|| panic!("limit {} 30 s on", hang_pool.pool()));
    assert!(back_in <= secs(30), "{back_in:?}");
    // Slow calls that keep ending (300 ms from the start, 15 in flight of 20) are no stall:
    // not one refused, the limit never below where it started.
    assert_eq!(slow_refused.load(SeqCst), 0, "steady slow calls refused");
    assert!(
        slow_lowest.load(SeqCst) >= 20,
        "steady slow calls cut the limit"
    );
    assert_eq!(
        log.count(Level::DEBUG, "om-steady-pool", "cut to the calls in flight"),
        0
    );
}

// =============================================================================================
// Issue 22: probes at `probe_every` while open, a passed probe starting half-open, the ramp's
// share growing to 100 % over `ramp`, a breach during the ramp reopening at once; through
// `#[breaker]` and through the tower layer in a real gateway.

/// What a caller got.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Answer {
    /// The dependency's own answer.
    Real,
    /// The fallback (a refusal, or a failure the fallback answered).
    Fallback,
    /// The dependency's failure, passed through.
    Failed,
}

/// The recovery settings, for the attribute and the layer alike: open after 10 calls of which
/// half failed; open 20 s at most, but a probe every 500 ms; half-open lets 20 % through for 1 s;
/// then a ramp from 20 % to 100 % over 4 s.
#[breaker(
    name = "om-recover-attr",
    timeout = "1s",
    window_calls = 20,
    min_calls = 10,
    failure_rate = 50,
    open_for = "20s",
    probe_every = "500ms",
    half_open_pct = 20,
    half_open_window = "1s",
    ramp = "4s",
    fallback = answer_later
)]
async fn lookup(client: &reqwest::Client, url: &str) -> Result<Answer, DepError> {
    fetch(client, url).await.map(|()| Answer::Real)
}

fn answer_later(_: Error<DepError>) -> Result<Answer, DepError> {
    Ok(Answer::Fallback)
}

const PROBE_EVERY: Duration = ms(500);
const RAMP: Duration = secs(4);
const RAMP_START: f64 = 0.2;

fn recovery_settings(name: &str) -> fusebox::config::BreakerBuilder {
    Breaker::builder(name)
        .timeout(secs(1))
        .window_calls(20)
        .min_calls(10)
        .failure_rate(50)
        .open_for(secs(20))
        .probe_every(PROBE_EVERY)
        .half_open_pct(20)
        .half_open_window(secs(1))
        .ramp(RAMP)
}

/// When the test changed the dependency.
struct Marks {
    fail1: Instant,
    heal1: Instant,
    fail2: Instant,
    heal2: Instant,
    fail3: Instant,
}

/// Everything one recovery run saw.
struct Recovery {
    marks: Marks,
    sent: Vec<Instant>,
    answers: Vec<(Instant, Answer)>,
    transitions: Vec<fusebox::events::Transition>,
    /// `(when, state, ramp_share)` read every 10 ms.
    seen: Vec<(Instant, State, Option<f64>)>,
}

async fn wait_for(b: &Breaker, what: &str, within: Duration, done: impl Fn(&Breaker) -> bool) {
    let deadline = Instant::now() + within;
    while !done(b) {
        assert!(
            Instant::now() < deadline,
            "{what}: not within {within:?} ({:?}, ramp {:?})",
            b.state(),
            b.ramp_share()
        );
        sleep(ms(5)).await;
    }
}

/// 100 calls a second through `call`; the dependency fails for 3 s, heals, fails again once all
/// traffic is back, heals, and fails a third time 1 s into the ramp.
async fn recovery_run(
    b: &Breaker,
    dep: &Dep,
    call: Arc<dyn Fn() -> Pin<Box<dyn Future<Output = Answer> + Send>> + Send + Sync>,
) -> Recovery {
    let name = b.name().to_owned();
    let mut events = registry().subscribe();
    let stop = Arc::new(AtomicBool::new(false));
    let answers = Arc::new(Mutex::new(Vec::new()));
    let load = open_loop(
        ms(10),
        stop.clone(),
        Arc::new({
            let answers = answers.clone();
            move || {
                let (call, answers) = (call.clone(), answers.clone());
                Box::pin(async move {
                    let a = call().await;
                    answers.lock().unwrap().push((Instant::now(), a));
                })
            }
        }),
    );
    let seen = Arc::new(Mutex::new(Vec::new()));
    let watch = tokio::spawn({
        let (b, seen, stop) = (b.clone(), seen.clone(), stop.clone());
        async move {
            while !stop.load(SeqCst) {
                let (state, share) = (b.state(), b.ramp_share());
                seen.lock().unwrap().push((Instant::now(), state, share));
                sleep(ms(10)).await;
            }
        }
    });

    sleep(secs(1)).await;
    let fail1 = Instant::now();
    dep.fail(true);
    sleep_until(fail1 + secs(3)).await;
    let heal1 = Instant::now();
    dep.fail(false);
    wait_for(b, "half-open after the first healing", secs(5), |b| {
        b.state() != State::Open
    })
    .await;
    wait_for(b, "all traffic back", secs(10), |b| {
        b.state() == State::Closed && b.ramp_share().is_none()
    })
    .await;
    sleep(ms(700)).await;
    let fail2 = Instant::now();
    dep.fail(true);
    wait_for(b, "open again", secs(3), |b| b.state() == State::Open).await;
    sleep(secs(1)).await;
    let heal2 = Instant::now();
    dep.fail(false);
    wait_for(b, "ramping again", secs(5), |b| b.ramp_share().is_some()).await;
    sleep(secs(1)).await;
    let fail3 = Instant::now();
    dep.fail(true);
    wait_for(b, "a breach during the ramp", secs(3), |b| {
        b.state() == State::Open
    })
    .await;
    sleep(ms(200)).await;
    stop.store(true, SeqCst);
    watch.await.unwrap();
    let sent = load.drain().await;
    dep.fail(false);

    let mut transitions = Vec::new();
    while let Ok(t) = events.try_recv() {
        if *t.name == *name {
            transitions.push(t);
        }
    }
    let answers = std::mem::take(&mut *answers.lock().unwrap());
    let seen = std::mem::take(&mut *seen.lock().unwrap());
    Recovery {
        marks: Marks {
            fail1,
            heal1,
            fail2,
            heal2,
            fail3,
        },
        sent,
        answers,
        transitions,
        seen,
    }
}

/// Checks one run against the issue, printing its figures.
fn check_recovery(what: &str, r: &Recovery, dep: &Dep) {
    use fusebox::events::Reason;
    let m = &r.marks;
    let first = |after: Instant, to: State| {
        r.transitions
            .iter()
            .find(|t| t.at >= after && t.to == to)
            .unwrap_or_else(|| {
                panic!(
                    "{what}: no {to:?} after {:?}: {:?}",
                    after - m.fail1,
                    r.transitions
                        .iter()
                        .map(|t| (t.at - m.fail1, t.to, t.reason.clone()))
                        .collect::<Vec<_>>()
                )
            })
    };
    let share_in = |from: Instant, to: Instant| {
        let sent = r.sent.iter().filter(|t| **t >= from && **t < to).count();
        let reached = dep.hits_in(from, to).len();
        (reached as f64 / sent.max(1) as f64, reached, sent)
    };

    let open1 = first(m.fail1, State::Open).at;
    let probes = dep.hits_in(open1 + ms(50), m.heal1);
    let gaps: Vec<Duration> = probes.windows(2).map(|w| w[1] - w[0]).collect();
    let half1 = first(m.heal1, State::HalfOpen);
    let close1 = first(half1.at, State::Closed);
    let bins: Vec<(f64, f64)> = (0..8)
        .map(|i| {
            let from = close1.at + ms(500 * i);
            let model = RAMP_START + (1.0 - RAMP_START) * (0.5 * i as f64 + 0.25) / 4.0;
            (share_in(from, from + ms(500)).0, model)
        })
        .collect();
    let after_ramp = share_in(close1.at + RAMP + ms(200), m.fail2);
    let shares: Vec<f64> = r
        .seen
        .iter()
        .filter(|(t, _, _)| *t >= close1.at + ms(50) && *t < close1.at + RAMP - ms(100))
        .map(|(_, _, s)| s.unwrap_or(f64::NAN))
        .collect();
    let ramp_gone = r
        .seen
        .iter()
        .find(|(t, _, s)| *t >= close1.at && s.is_none())
        .map(|(t, _, _)| *t - close1.at);
    let open2 = first(m.fail2, State::Open).at;
    let half2 = first(m.heal2, State::HalfOpen);
    let close2 = first(half2.at, State::Closed).at;
    let open3 = first(m.fail3, State::Open);
    let count = |a: Answer| r.answers.iter().filter(|(_, x)| *x == a).count();
    eprintln!(
        "issue 22 real run, {what}: opened {:?} after failing; {} probes while open ({:?} open), \
         gaps {gaps:?}; half-open {:?} after healing ({:?}), closed {:?} later ({:?}); ramp \
         share per 500 ms (seen, model) {bins:?}; ramp_share gone {ramp_gone:?} after closing; \
         after the ramp {after_ramp:?}; reopened {:?} after failing; second half-open {:?} after \
         healing; breach {:?} into the second ramp reopened {:?} after failing ({:?}); answers: \
         {} real, {} fallback, {} failed of {} sent",
        open1 - m.fail1,
        probes.len(),
        m.heal1 - open1,
        half1.at - m.heal1,
        half1.reason,
        close1.at - half1.at,
        close1.reason,
        open2 - m.fail2,
        half2.at - m.heal2,
        m.fail3 - close2,
        open3.at - m.fail3,
        open3.reason,
        count(Answer::Real),
        count(Answer::Fallback),
        count(Answer::Failed),
        r.sent.len(),
    );

    // Every call answered.
    assert_eq!(r.answers.len(), r.sent.len(), "{what}: calls unanswered");
    // Opens on the failures, then one real call per `probe_every` reaches the dependency while
    // open, none bunched; failed probes change nothing (no transition until the healing).
    assert!(
        open1 - m.fail1 <= secs(1),
        "{what}: opened {:?} in",
        open1 - m.fail1
    );
    let due = ((m.heal1 - open1).as_secs_f64() / PROBE_EVERY.as_secs_f64()) as usize;
    assert!(
        (due.saturating_sub(1)..=due + 1).contains(&probes.len()) && probes.len() >= 3,
        "{what}: {} probes in {:?} open at one per {PROBE_EVERY:?}",
        probes.len(),
        m.heal1 - open1
    );
    assert!(
        gaps.iter().all(|g| *g >= PROBE_EVERY - ms(150)),
        "{what}: probes bunched: {gaps:?}"
    );
    assert!(
        !r.transitions.iter().any(|t| t.at > open1 && t.at < m.heal1),
        "{what}: a failed probe changed the state"
    );
    // Healed: the next probe passes and starts half-open at once, within one interval (and
    // room for a loaded machine), 20 s before `open_for` would have let anyone look.
    assert_eq!(half1.reason, Reason::ProbePassed, "{what}");
    assert!(
        half1.at - m.heal1 <= PROBE_EVERY + secs(1),
        "{what}: half-open late"
    );
    assert!(
        matches!(close1.reason, Reason::TrialsPassed { .. }),
        "{what}"
    );
    // The ramp: the share reaching the dependency grows linearly from 20 % to 100 % over 4 s,
    // then all of it; `ramp_share` says so as it goes, and the ramp's end is no transition.
    for (i, (seen, model)) in bins.iter().enumerate() {
        assert!(
            (seen - model).abs() <= 0.1,
            "{what}: {:.0} % reached the dependency {}-{} ms into the ramp, the ramp says {:.0} %",
            seen * 100.0,
            500 * i,
            500 * (i + 1),
            model * 100.0
        );
    }
    assert!(
        after_ramp.0 >= 0.97,
        "{what}: after the ramp {after_ramp:?}"
    );
    assert!(
        !shares.is_empty()
            && shares[0] <= RAMP_START + 0.1
            && shares.windows(2).all(|w| w[1] >= w[0])
            && *shares.last().unwrap() >= 0.9,
        "{what}: ramp_share while ramping {shares:?}"
    );
    let ramp_gone = ramp_gone.expect("the ramp ends");
    assert!(
        ramp_gone >= RAMP - ms(100) && ramp_gone <= RAMP + ms(500),
        "{what}: ramp over {ramp_gone:?} after closing"
    );
    assert!(
        !r.transitions
            .iter()
            .any(|t| t.at > close1.at && t.at < m.fail2),
        "{what}: the ramp's end was a transition"
    );
    // Again: open, a probe passes, half-open.
    assert!(open2 - m.fail2 <= secs(1), "{what}");
    assert_eq!(half2.reason, Reason::ProbePassed, "{what}");
    assert!(half2.at - m.heal2 <= PROBE_EVERY + secs(1), "{what}");
    // A breach during the ramp reopens at once: from closed (ramping), on the rule, long
    // before the ramp would have ended.
    assert_eq!(open3.from, State::Closed, "{what}");
    assert!(
        matches!(open3.reason, Reason::FailureRate { .. }),
        "{what}: {:?}",
        open3.reason
    );
    assert!(
        open3.at - m.fail3 <= secs(1),
        "{what}: reopened {:?} in",
        open3.at - m.fail3
    );
    assert!(
        open3.at < close2 + RAMP - ms(500),
        "{what}: only after the ramp"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn through_the_attribute_probes_find_the_recovery_and_the_ramp_lets_traffic_back() {
    let dep = Dep::new(0);
    let url = dependency(&dep).await;
    let b = registry()
        .breaker("om-recover-attr")
        .expect("listed from the start");
    let client = reqwest::Client::new();
    let r = recovery_run(
        &b,
        &dep,
        Arc::new(move || {
            let (client, url) = (client.clone(), url.clone());
            Box::pin(async move {
                match lookup(&client, &url).await {
                    Ok(a) => a,
                    Err(_) => Answer::Failed,
                }
            })
        }),
    )
    .await;
    check_recovery("#[breaker]", &r, &dep);
    // The fallback answered every refusal and failure: no caller saw an error.
    assert!(r.answers.iter().all(|(_, a)| *a != Answer::Failed));
}

type GatewayBody = Empty<Bytes>;
type HyperError = hyper_util::client::legacy::Error;

fn server_errors(res: &Result<StatusCode, HyperError>) -> bool {
    res.as_ref().map_or(true, |s| s.is_server_error())
}

/// The gateway's upstream stack, as a service writes it: a fallback over the registry's breaker
/// (with an adaptive bulkhead behind it) over a hyper-util client; a 5xx is a failure.
fn upstream_stack(
    name: &str,
) -> (
    impl tower::Service<
            Request<GatewayBody>,
            Response = StatusCode,
            Error = Infallible,
            Future = impl Future<Output = Result<StatusCode, Infallible>> + Send,
        > + Clone
        + Send
        + 'static,
    Bulkhead,
) {
    let pool = Bulkhead::builder(format!("{name}-pool"))
        .adaptive()
        .build()
        .unwrap();
    let breaker = BreakerLayer::new(recovery_settings(name))
        .unwrap()
        .failure(server_errors as fn(&Result<StatusCode, HyperError>) -> bool)
        .bulkhead(pool.clone());
    let fallback = FallbackLayer::new(|err: Error<HyperError>| async move {
        Ok::<_, Infallible>(match err {
            Error::Rejected(_) => StatusCode::SERVICE_UNAVAILABLE,
            Error::Failed(_) => StatusCode::BAD_GATEWAY,
        })
    });
    let client = Client::builder(TokioExecutor::new()).build_http::<GatewayBody>();
    let statuses = tower::util::MapResponseLayer::new(|r: axum::http::Response<_>| r.status());
    (fallback.layer(breaker.layer(statuses.layer(client))), pool)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn through_a_tower_gateway_probes_find_the_recovery_and_the_ramp_lets_traffic_back() {
    const NAME: &str = "om-recover-tower";
    let dep = Dep::new(0);
    let dep_url = dependency(&dep).await;
    let (stack, pool) = upstream_stack(NAME);
    let gateway = {
        let (stack, dep_url) = (stack.clone(), dep_url.clone());
        get(move || {
            let (stack, url) = (stack.clone(), dep_url.clone());
            async move {
                let req = Request::get(url).body(GatewayBody::new()).unwrap();
                match stack.oneshot(req).await {
                    Ok(status) => status,
                    Err(never) => match never {},
                }
            }
        })
    };
    let base = serve(
        Router::new()
            .route("/", gateway)
            .nest("/fusebox", fusebox::admin::router(TOKEN).unwrap()),
    )
    .await;
    let b = registry()
        .breaker(NAME)
        .expect("the layer's breaker is the registry's");
    let client = reqwest::Client::new();

    // An operator polls the admin JSON all along.
    let stop = Arc::new(AtomicBool::new(false));
    let polled = Arc::new(Mutex::new(Vec::<(Instant, String, Option<f64>)>::new()));
    let poll = tokio::spawn({
        let (client, base, polled, stop) =
            (client.clone(), base.clone(), polled.clone(), stop.clone());
        async move {
            while !stop.load(SeqCst) {
                let body = admin_get(
                    &client,
                    &format!("{base}/fusebox"),
                    &format!("/breakers/{NAME}"),
                )
                .await;
                let json: serde_json::Value = serde_json::from_str(&body).unwrap();
                let state = json["state"].as_str().unwrap_or("?").to_owned();
                polled
                    .lock()
                    .unwrap()
                    .push((Instant::now(), state, json["ramp_share"].as_f64()));
                sleep(ms(100)).await;
            }
        }
    });
    let url = format!("{base}/");
    let r = recovery_run(
        &b,
        &dep,
        Arc::new(move || {
            let (client, url) = (client.clone(), url.clone());
            Box::pin(async move {
                match client.get(&url).send().await.map(|r| r.status()) {
                    Ok(StatusCode::OK) => Answer::Real,
                    Ok(StatusCode::SERVICE_UNAVAILABLE) => Answer::Fallback,
                    Ok(StatusCode::INTERNAL_SERVER_ERROR) => Answer::Failed,
                    other => panic!("the gateway answered {other:?}"),
                }
            })
        }),
    )
    .await;
    stop.store(true, SeqCst);
    poll.await.unwrap();
    check_recovery("tower layer", &r, &dep);

    // The admin JSON showed the ramp as it went: closed, its share rising, then gone.
    let polled = std::mem::take(&mut *polled.lock().unwrap());
    let close1 = r
        .transitions
        .iter()
        .find(|t| t.at > r.marks.heal1 && t.to == State::Closed)
        .unwrap()
        .at;
    let ramp_json: Vec<(String, Option<f64>)> = polled
        .iter()
        .filter(|(t, _, _)| *t > close1 + ms(100) && *t < close1 + RAMP - ms(200))
        .map(|(_, s, r)| (s.clone(), *r))
        .collect();
    eprintln!("tower gateway: admin JSON during the ramp {ramp_json:?}");
    assert!(ramp_json.len() >= 10, "{ramp_json:?}");
    assert!(
        ramp_json.iter().all(|(s, r)| s == "closed" && r.is_some())
            && ramp_json.windows(2).all(|w| w[1].1 >= w[0].1),
        "{ramp_json:?}"
    );
    let after: Vec<Option<f64>> = polled
        .iter()
        .filter(|(t, _, _)| *t > close1 + RAMP + ms(300) && *t < r.marks.fail2)
        .map(|(_, _, r)| *r)
        .collect();
    assert!(
        !after.is_empty() && after.iter().all(Option::is_none),
        "{after:?}"
    );
    // The adaptive bulkhead behind the breaker refused nothing: probes and the ramp only ever
    // let through calls it had room for.
    let pm = pool.metrics();
    eprintln!(
        "tower gateway: bulkhead limit {}, peak {}, rejected {}",
        pm.pool, pm.peak, pm.rejected
    );
    assert_eq!(pm.rejected, 0);
}

/// The real runs above showed the ramp's share lagging half-way through (44 % admitted where
/// the ramp said 55 %); the cause is exact, so a paused clock pins it: callers evenly spaced in
/// time (50 a second through a 4 s ramp) are admitted in the share the ramp says, second by
/// second, never refused in runs. The old spread (`n x share` with a growing share) admitted
/// 1 caller of 20 at 60 %, then every one.
#[tokio::test(start_paused = true)]
async fn callers_evenly_spaced_through_a_ramp_are_admitted_in_its_share_all_along() {
    let b = Breaker::builder("om-ramp-spread")
        .window_calls(4)
        .min_calls(4)
        .failure_rate(50)
        .open_for(secs(30))
        .half_open_pct(20)
        .half_open_window(secs(1))
        .ramp(RAMP)
        .build_detached()
        .unwrap();
    for _ in 0..4 {
        let _ = b.call(async { Err::<(), &str>("down") }).await;
    }
    assert_eq!(b.state(), State::Open);
    tokio::time::advance(secs(30)).await;
    assert_eq!(
        b.call(async { Ok::<(), &str>(()) }).await,
        Ok(()),
        "a trial"
    );
    tokio::time::advance(secs(1)).await;
    // From here on, a caller every 20 ms: the first one sees the verdict and starts the ramp.
    let mut admitted = Vec::new();
    for _ in 0..200 {
        let through = match b.call(async { Ok::<(), &str>(()) }).await {
            Ok(()) => true,
            Err(Error::Rejected(r)) if r.is_ramp() => false,
            other => panic!("{other:?}"),
        };
        admitted.push(through);
        tokio::time::advance(ms(20)).await;
    }
    assert_eq!(b.ramp_share(), None, "the ramp is over");
    let per_second: Vec<usize> = admitted
        .chunks(50)
        .map(|s| s.iter().filter(|a| **a).count())
        .collect();
    let shown: String = admitted
        .iter()
        .map(|a| if *a { 'x' } else { '.' })
        .collect();
    for (second, n) in per_second.iter().enumerate() {
        let share = RAMP_START + (1.0 - RAMP_START) * (second as f64 + 0.5) / 4.0;
        assert!(
            (*n as f64 - 50.0 * share).abs() <= 2.0,
            "second {second}: {n} of 50 admitted, the ramp says {:.0} %: {shown}",
            share * 100.0
        );
    }
    // Once the ramp admits half or more, no two callers in a row are refused.
    assert!(!shown[100..].contains(".."), "refused in runs: {shown}");
}
