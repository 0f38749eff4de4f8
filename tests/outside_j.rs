//! Issues 30 (retries) and 31 (outcomes) end to end, as a user checks them: a real HTTP
//! dependency on loopback (axum), real clients (reqwest, tower), open-loop load from many
//! tasks, real time. Every other test of these issues runs on a paused clock; these count what
//! the dependency really receives, server-side, and when.
//!
//! Real sockets need real time (a paused clock would jump while tasks wait on IO). Each test
//! takes a few seconds; every bound leaves room for a loaded 2-core machine (a late request,
//! a slow scheduler) without letting the promised behaviour slip through.
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

// --- Issue 30: `retry_after` holds the breaker open for every caller ---------------------

#[retry(attempts = 4, retry_after = server_hint)]
#[breaker(
    name = "oj-ban",
    timeout = "1s",
    open_for = "3s",
    half_open_calls = 2,
    fallback = degraded
)]
async fn banned(client: &Client, url: &str) -> Result<Answer, HttpError> {
    get(client, url).await.map(Answer::Dep)
}

/// The dependency answers `503` with `Retry-After: 2` for two seconds (from 1 s to 3 s into
/// the test), under 300 calls a second from as many tasks. The first `503` holds the breaker
/// open for the 2 s it asked for: the dependency receives no call during them (only the
/// requests already on the wire when the first answer came); every caller meanwhile gets the
/// fallback at once, never retried; then calls resume and the breaker closes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retry_after_holds_the_breaker_open_under_real_load() {
    // Every answer takes 40 ms: about a dozen calls are in flight when the first 503 lands.
    let (up, base) = Upstream::start(|at, _| {
        if at >= ms(1000) && at < ms(3000) {
            (503, Some(2), ms(40))
        } else {
            (200, None, ms(40))
        }
    })
    .await;
    let http = client();
    let url = format!("{base}/ban");
    let calls = open_loop(&up, 300, ms(5000), || {
        let (http, url) = (http.clone(), url.clone());
        async move { banned(&http, &url).await }
    })
    .await;

    let told = up.hits_between("/ban", ms(1000), ms(3000));
    let first = told
        .first()
        .expect("the dependency answered 503 at least once")
        .0;
    // Requests already on the wire when the first 503 came back may still land; 300 ms is
    // room for a loaded machine. After that, nothing until the 2 s are over.
    let late = first + ms(300);
    let quiet = up.hits_between("/ban", late, ms(3000));
    assert!(
        quiet.is_empty(),
        "the dependency was called while it had asked for no calls: {quiet:?} (first 503 at {first:?})"
    );
    assert!(
        told.len() <= 64,
        "only the calls in flight were told: {}",
        told.len()
    );
    // Calls resume once the hold lapses: trials, then all traffic.
    let resumed = up.hits_between("/ban", ms(3000), ms(5000)).len();
    eprintln!(
        "oj-ban: first 503 at {first:?}, {} told, {resumed} calls in the 2 s after",
        told.len()
    );
    assert!(
        resumed >= 300,
        "calls resumed after the hold: {resumed} of ~600"
    );
    assert_eq!(registry().breaker("oj-ban").unwrap().state(), State::Closed);

    // Every call that started during the hold was refused, answered by the fallback at once,
    // and never retried (the dependency saw none of them).
    let during: Vec<_> = calls
        .iter()
        .filter(|(at, _, _)| *at >= late && *at < ms(2900))
        .collect();
    assert!(
        during.len() >= 300,
        "{} calls during the hold (~480 offered)",
        during.len()
    );
    for (at, _, r) in &during {
        assert_eq!(r.as_ref().unwrap(), &Answer::Refused, "call at {at:?}");
    }
    let at_once = p95(during.iter().copied());
    assert!(
        at_once < ms(300),
        "the fallback answered at once, not after {at_once:?}"
    );
    let m = fusebox::metrics();
    let rm = m.retry("oj-ban").unwrap();
    assert!(rm.held_open >= 1, "{rm:?}");
    assert!(
        rm.retries as usize <= told.len(),
        "only the told callers retried: {rm:?}, {} told",
        told.len()
    );
}

#[retry(attempts = 4, retry_after = server_hint, total = "3s")]
#[breaker(
    name = "oj-cap",
    timeout = "1s",
    open_for = "1s",
    half_open_calls = 2,
    fallback = degraded
)]
async fn rate_limited(client: &Client, url: &str) -> Result<Answer, HttpError> {
    get(client, url).await.map(Answer::Dep)
}

/// A hint longer than the breaker's longest open period (`open_for` = 1 s, no growth) holds
/// it only that long: the dependency asks for 30 s, other callers are back after ~1 s; the
/// told callers, whose `total` (3 s) cannot fit a 30 s wait, get the fallback at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_hint_holds_the_breaker_only_up_to_its_cap() {
    let (up, base) = Upstream::start(|at, _| {
        if at >= ms(1000) && at < ms(1600) {
            (429, Some(30), Duration::ZERO)
        } else {
            (200, None, Duration::ZERO)
        }
    })
    .await;
    let http = client();
    let url = format!("{base}/cap");
    let calls = open_loop(&up, 200, ms(4000), || {
        let (http, url) = (http.clone(), url.clone());
        async move { rate_limited(&http, &url).await }
    })
    .await;

    let told = up.hits_between("/cap", ms(1000), ms(1600));
    let first = told.first().expect("the dependency answered 429").0;
    let quiet = up.hits_between("/cap", first + ms(300), first + ms(950));
    assert!(
        quiet.is_empty(),
        "called during the hold: {quiet:?} (first 429 at {first:?})"
    );
    // Held for the cap (1 s), not the 30 s asked: back well before the test ends.
    let back = up
        .hits_between("/cap", first + ms(1000), first + ms(2000))
        .len();
    eprintln!(
        "oj-cap: first 429 at {first:?}, {} told, {back} calls in the second after the cap",
        told.len()
    );
    assert!(back >= 50, "calls resumed after the cap: {back}");
    assert_eq!(registry().breaker("oj-cap").unwrap().state(), State::Closed);
    for (at, took, r) in &calls {
        assert!(
            *took < secs(5),
            "no caller waited the 30 s: {took:?} at {at:?} ({r:?})"
        );
    }
    let told_callers = calls
        .iter()
        .filter(|(_, _, r)| r.as_ref().unwrap() == &Answer::Failed)
        .count();
    assert!(
        told_callers >= 1 && told_callers <= told.len(),
        "{told_callers} of {}",
        told.len()
    );
    assert_eq!(fusebox::metrics().retry("oj-cap").unwrap().retries, 0);
}

#[retry(attempts = 1, retry_after = server_hint)]
#[breaker(name = "oj-short-hint", open_for = "3s", half_open_calls = 1, fallback = degraded)]
async fn short_hint(client: &Client, url: &str) -> Result<Answer, HttpError> {
    get(client, url).await.map(Answer::Dep)
}

/// A hint shorter than the breaker's own open period does not shorten it: "open until then"
/// is at least until then. The dependency keeps answering `503` with `Retry-After: 1`; the
/// first answer holds the breaker 1 s, the trial after it fails and the breaker opens for its
/// `open_for` (3 s), which the trial's own 1 s hint must not cut to 1 s: one caller calling
/// every 20 ms reaches the dependency at about 0, 1 and 4 s, not every second.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_short_hint_does_not_shorten_the_breakers_own_open_period() {
    let (up, base) = Upstream::start(|_, _| (503, Some(1), Duration::ZERO)).await;
    let http = client();
    let url = format!("{base}/short");
    while up.now() < ms(5500) {
        let _ = short_hint(&http, &url).await;
        tokio::time::sleep(ms(20)).await;
    }
    let hits: Vec<_> = up.hits_between("/short", Duration::ZERO, Duration::MAX);
    eprintln!(
        "oj-short-hint: calls at {:?}",
        hits.iter().map(|h| h.0).collect::<Vec<_>>()
    );
    assert!(hits.len() >= 3, "{hits:?}");
    let gap = hits[2].0 - hits[1].0;
    assert!(
        gap >= ms(2900),
        "the failed trial's open period was cut to {gap:?}: {hits:?}"
    );
    assert_eq!(hits.len(), 3, "{hits:?}");
}

#[retry(attempts = 3, retry_after = server_hint, hold_open = false, budget = 100)]
#[breaker(name = "oj-paced", window_calls = 1000, min_calls = 1000)]
async fn paced(client: &Client, url: &str) -> Result<u16, HttpError> {
    get(client, url).await
}

/// `hold_open = false` paces only the caller that was told, and a caller that gives up while
/// it waits makes no more attempts: every call answered `503, Retry-After: 1` is dropped by
/// its caller 300 ms later (a deadline of its own). Under 100 calls a second the dependency
/// keeps receiving every new call (nothing held), and exactly one per call (no retry was
/// made, and the budget was given back the retries it granted: with `budget = 100` it
/// refuses few or none while they come back).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_caller_that_gives_up_during_the_wait_makes_no_more_attempts() {
    let (up, base) = Upstream::start(|_, _| (503, Some(1), Duration::ZERO)).await;
    let http = client();
    let url = format!("{base}/paced");
    let calls = open_loop(&up, 100, ms(2000), || {
        let (http, url) = (http.clone(), url.clone());
        async move { tokio::time::timeout(ms(300), paced(&http, &url)).await }
    })
    .await;
    tokio::time::sleep(ms(1200)).await;
    // Each caller gave up, or had its 503 at once where the budget refused the retry.
    let answered = calls.iter().filter(|(_, _, r)| r.is_ok()).count();
    eprintln!(
        "oj-paced: {} calls, {answered} refused a retry by the budget",
        calls.len()
    );
    assert_eq!(up.count("/paced"), calls.len(), "one attempt per call");
    for quarter in 0..8 {
        let from = ms(250 * quarter);
        let n = up.hits_between("/paced", from, from + ms(250)).len();
        assert!(n >= 10, "{n} calls in [{from:?}, +250ms): held?");
    }
    let m = fusebox::metrics();
    let rm = m.retry("oj-paced").unwrap();
    assert_eq!(
        (rm.calls, rm.retries, rm.held_open),
        (calls.len() as u64, 0, 0),
        "{rm:?}"
    );
    assert_eq!(rm.budget_exhausted, answered as u64, "{rm:?}");
    assert!(
        answered < calls.len() / 10,
        "{answered} refused by the budget: {rm:?}"
    );
    assert_eq!(
        registry().breaker("oj-paced").unwrap().state(),
        State::Closed
    );
}

// --- Issue 30: seed 002, a dependency that turns slow ------------------------------------

#[retry(attempts = 3, idempotent)]
#[breaker(
    name = "oj-slow-read",
    timeout = "500ms",
    window_calls = 1000,
    min_calls = 1000
)]
async fn slow_read(client: &Client, url: &str) -> Result<u16, HttpError> {
    get(client, url).await
}

#[retry(attempts = 3)]
#[breaker(
    name = "oj-slow-pay",
    timeout = "500ms",
    window_calls = 1000,
    min_calls = 1000
)]
async fn slow_pay(client: &Client, url: &str) -> Result<u16, HttpError> {
    get(client, url).await
}

fn timed_out(r: &Result<u16, HttpError>) -> bool {
    matches!(r, Err(HttpError::Refused(Rejection::TimedOut { .. })))
}

/// Seed 002 for real: the dependency answers after 3 s, callers time out at 500 ms and ask for
/// 3 attempts, 40 requests a second for 3 s (the breaker is set not to open, so only the
/// budget stands between the callers and 3x the load). An idempotent read retries within the
/// budget (20 % of the name's calls over 10 s plus 1 a second: 10 in the window) and the
/// dependency receives far fewer than 3 calls per request; a payment (not idempotent) is
/// never retried after a timeout: exactly one call per request.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_dependency_gets_retries_only_within_the_budget() {
    let (up, base) = Upstream::start(|_, _| (200, None, secs(3))).await;
    let http = client();
    let (read, pay) = (format!("{base}/read"), format!("{base}/pay"));
    let (reads, pays) = tokio::join!(
        open_loop(&up, 40, ms(3000), || {
            let (http, url) = (http.clone(), read.clone());
            async move { slow_read(&http, &url).await }
        }),
        open_loop(&up, 40, ms(3000), || {
            let (http, url) = (http.clone(), pay.clone());
            async move { slow_pay(&http, &url).await }
        }),
    );
    // Every attempt was sent before its 500 ms ran out; give the last ones time to land.
    tokio::time::sleep(ms(300)).await;
    let m = fusebox::metrics();

    // The payment: one call per request, each timed out after one timeout, not three.
    let rm = m.retry("oj-slow-pay").unwrap();
    assert_eq!(rm.calls as usize, pays.len());
    assert_eq!((rm.retries, rm.attempts), (0, rm.calls), "{rm:?}");
    assert_eq!(up.count("/pay"), pays.len(), "one call per payment");
    for (at, _, r) in &pays {
        assert!(timed_out(r), "{r:?} at {at:?}");
    }
    let once = p95(&pays);
    assert!(once < ms(1000), "not retried: answered in {once:?} (p95)");

    // The read: retried, within the budget.
    let rm = m.retry("oj-slow-read").unwrap();
    let calls = reads.len() as u64;
    assert_eq!(rm.calls, calls);
    let bound = calls * 20 / 100 + 10;
    assert!(
        rm.retries >= 10 && rm.retries <= bound,
        "{} retries for {calls} calls, budget {bound}: {rm:?}",
        rm.retries
    );
    assert!(rm.budget_exhausted > 0, "{rm:?}");
    let received = up.count("/read") as u64;
    assert!(
        received <= rm.attempts && received + 2 >= rm.attempts,
        "the dependency received {received}, {rm:?}"
    );
    let per_request = received as f64 / calls as f64;
    eprintln!(
        "oj-slow-read: {calls} requests, {received} received ({per_request:.2} each), {rm:?}"
    );
    assert!(
        per_request <= 1.35,
        "{per_request:.2} calls per request (3 without a budget)"
    );
    assert!(reads.iter().all(|(_, _, r)| timed_out(r)));
    let b = registry().breaker("oj-slow-read").unwrap().metrics();
    assert_eq!(
        b.timed_out, rm.attempts,
        "each attempt a call of the breaker"
    );
}

#[retry(attempts = 3, idempotent, total = "1200ms", budget = 100)]
#[breaker(
    name = "oj-deadline",
    timeout = "500ms",
    window_calls = 1000,
    min_calls = 1000
)]
async fn within_deadline(client: &Client, url: &str) -> Result<u16, HttpError> {
    get(client, url).await
}

/// `total` under real load: with 500 ms attempts and a 1.2 s deadline, a second attempt fits
/// and a third never starts (it could not end in time), whatever the budget allows: the
/// dependency (answering in 3 s) receives at most two calls per request and every caller has
/// its answer within the deadline.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_attempt_starts_that_could_not_end_before_the_deadline() {
    let (up, base) = Upstream::start(|_, _| (200, None, secs(3))).await;
    let http = client();
    let url = format!("{base}/deadline");
    let calls = open_loop(&up, 40, ms(2000), || {
        let (http, url) = (http.clone(), url.clone());
        async move { within_deadline(&http, &url).await }
    })
    .await;
    tokio::time::sleep(ms(300)).await;
    let received = up.count("/deadline");
    let m = fusebox::metrics();
    let rm = m.retry("oj-deadline").unwrap();
    eprintln!(
        "oj-deadline: {} requests, {received} received, {rm:?}",
        calls.len()
    );
    assert!(
        received <= 2 * calls.len(),
        "{received} calls for {} requests",
        calls.len()
    );
    assert!(
        rm.retries >= calls.len() as u64 / 2,
        "a second attempt fits: {rm:?}"
    );
    for (at, _, r) in &calls {
        assert!(timed_out(r), "{r:?} at {at:?}");
    }
    // Within the deadline (plus a scheduler's slack): three attempts would take 1.5 s.
    let within = p95(&calls);
    assert!(within < ms(1400), "answered after {within:?} (p95)");
}

#[retry(attempts = 3, budget = 100)]
#[breaker(name = "oj-pool", timeout = "1s", window_calls = 20, fallback = degraded)]
#[bulkhead(pool = 4)]
async fn pooled(client: &Client, url: &str) -> Result<Answer, HttpError> {
    get(client, url).await.map(Answer::Dep)
}

/// A full bulkhead is never retried and never a failure: a healthy dependency that takes
/// 200 ms, behind a pool of 4, under 100 calls a second. It never has more than 4 calls at
/// once, the calls the pool refuses get the fallback at once, no retry is ever asked of the
/// budget, and the breaker stays closed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_bulkhead_is_never_retried() {
    let (up, base) = Upstream::start(|_, _| (200, None, ms(200))).await;
    let http = client();
    let url = format!("{base}/pool");
    let calls = open_loop(&up, 100, ms(2000), || {
        let (http, url) = (http.clone(), url.clone());
        async move { pooled(&http, &url).await }
    })
    .await;
    let refused: Vec<_> = calls
        .iter()
        .filter(|(_, _, r)| r.as_ref().unwrap() == &Answer::Refused)
        .collect();
    let served = calls.len() - refused.len();
    eprintln!(
        "oj-pool: {} calls, {served} served, peak {}",
        calls.len(),
        up.peak.load(SeqCst)
    );
    assert!(
        up.peak.load(SeqCst) <= 4,
        "in flight at once: {}",
        up.peak.load(SeqCst)
    );
    assert_eq!(
        up.count("/pool"),
        served,
        "every call that reached it was served"
    );
    assert!(
        refused.len() >= calls.len() / 2,
        "{} refused of {}",
        refused.len(),
        calls.len()
    );
    let at_once = p95(refused.iter().copied());
    assert!(
        at_once < ms(150),
        "refused at once, not after {at_once:?} (p95)"
    );
    let m = fusebox::metrics();
    let rm = m.retry("oj-pool").unwrap();
    assert_eq!((rm.retries, rm.budget_exhausted), (0, 0), "{rm:?}");
    let b = registry().breaker("oj-pool").unwrap();
    assert_eq!((b.state(), b.metrics().failed), (State::Closed, 0));
    assert_eq!(
        b.metrics().rejected_by_bulkhead,
        refused.len() as u64,
        "each refusal once"
    );
}

// --- Issue 31: outcomes of real responses ------------------------------------------------

/// An answer as the scenario sees it, from the attribute or from tower.
#[derive(Debug, PartialEq)]
enum Reply {
    Status(u16),
    Refused,
}

/// The dependency: each path answers its status, `/slow-bad` a 400 after 500 ms.
async fn statuses() -> (Arc<Upstream>, String) {
    Upstream::start(|_, path| match path {
        "/ok" => (200, None, Duration::ZERO),
        "/missing" => (404, None, Duration::ZERO),
        "/bad" => (400, None, Duration::ZERO),
        "/busy" => (429, None, Duration::ZERO),
        "/slow-bad" => (400, None, ms(500)),
        _ => (503, None, Duration::ZERO),
    })
    .await
}

/// Issue 31's outcomes, through whichever client `call` is, against real responses:
/// 404 a success, 400 and 429 ignored, a 503 the client returns as `Ok` a failure. The
/// breaker (`window_calls = 10`, `min_calls = 10`, 50 %, `open_for = 1s`,
/// `half_open_calls = 3`) opens exactly when the rule says, and ignored calls in half-open,
/// many at once, neither close nor reopen it and give their trial slots back.
async fn outcomes_scenario<F, Fut>(name: &str, up: &Upstream, excluded_404: bool, call: F)
where
    F: Fn(&'static str) -> Fut,
    Fut: Future<Output = Reply> + Send + 'static,
{
    let b = registry().breaker(name).unwrap();
    let burst = |path: &'static str, n: usize| {
        let calls: Vec<_> = (0..n).map(|_| tokio::spawn(call(path))).collect();
        async move {
            let mut out = Vec::new();
            for c in calls {
                out.push(c.await.unwrap());
            }
            out
        }
    };
    // A stream of 404s, 64 at once: the dependency answering, never a failure.
    for _ in 0..4 {
        let r = burst("/missing", 64).await;
        assert!(r.iter().all(|r| *r == Reply::Status(404)), "{r:?}");
    }
    let m = b.metrics();
    assert_eq!((m.state, m.failed, m.window_calls), (State::Closed, 0, 10));
    // Ignored 400s and 429s: no place in the window, whatever their number.
    for path in ["/bad", "/busy", "/bad", "/busy"] {
        let r = burst(path, 64).await;
        assert!(
            r.iter().all(|r| matches!(r, Reply::Status(400 | 429))),
            "{r:?}"
        );
    }
    let m = b.metrics();
    assert_eq!(
        (m.state, m.failed, m.window_calls, m.failure_rate),
        (State::Closed, 0, 10, 0.0)
    );
    let ignored_before = m.ignored;

    // 503s handed back as `Ok`: the fifth makes the last ten calls 50 % failures and opens
    // the breaker; each caller still gets its 503.
    for n in 1..=5 {
        assert_eq!(call("/down").await, Reply::Status(503), "503 number {n}");
        let expected = if n < 5 { State::Closed } else { State::Open };
        assert_eq!(b.state(), expected, "after {n} 503s");
    }
    assert_eq!(call("/down").await, Reply::Refused);
    assert_eq!(
        up.count("/down"),
        5,
        "open: the sixth never reached the dependency"
    );

    // Half-open after `open_for`. 64 slow ignored calls at once: at most 3 trials reach the
    // dependency at a time, the rest are refused; none is judged.
    tokio::time::sleep(ms(1100)).await;
    up.reset_peak();
    let r = burst("/slow-bad", 64).await;
    let reached = r.iter().filter(|r| **r == Reply::Status(400)).count();
    assert!(
        (1..=3).contains(&reached),
        "{reached} trials at once: {r:?}"
    );
    assert!(
        up.peak.load(SeqCst) <= 3,
        "trials in flight: {}",
        up.peak.load(SeqCst)
    );
    assert_eq!(up.count("/slow-bad"), reached);
    assert_eq!(
        b.state(),
        State::HalfOpen,
        "ignored trials neither pass nor fail"
    );
    // Their slots came back: 20 ignored calls one after another each get one.
    for _ in 0..20 {
        assert_eq!(call("/bad").await, Reply::Status(400));
    }
    assert_eq!(b.state(), State::HalfOpen);
    // Three counted trials pass (a 404 is one): closed.
    assert_eq!(call("/ok").await, Reply::Status(200));
    assert_eq!(call("/missing").await, Reply::Status(404));
    assert_eq!(b.state(), State::HalfOpen);
    assert_eq!(call("/ok").await, Reply::Status(200));
    assert_eq!(b.state(), State::Closed);

    // Every class in its counter: metrics and Prometheus agree.
    let m = b.metrics();
    assert_eq!(m.failed, 5);
    // An `Err` the `failure` predicate excludes (the attribute's 404) is counted with the
    // ignored ones, as `BreakerMetrics::ignored` says; tower's 404 is an `Ok`.
    let excluded = u64::from(excluded_404);
    assert_eq!(m.ignored - ignored_before, reached as u64 + 20 + excluded);
    let text = fusebox::metrics().to_prometheus();
    for (outcome, n) in [
        ("failed", m.failed),
        ("ignored", m.ignored),
        ("succeeded", m.succeeded),
    ] {
        let line =
            format!("fusebox_breaker_calls_total{{breaker=\"{name}\",outcome=\"{outcome}\"}} {n}");
        assert!(text.contains(&line), "{line} not in:\n{text}");
    }
}

/// What the client treats as which outcome.
#[derive(Debug, Clone)]
#[allow(dead_code)] // The fields are read by `Debug`, in failure messages.
enum ApiError {
    NotFound,
    Invalid(u16),
    Other(HttpError),
    Refused(Rejection),
}

impl From<Rejection> for ApiError {
    fn from(r: Rejection) -> Self {
        ApiError::Refused(r)
    }
}

/// `failure = ..`: a 404 is the dependency answering.
fn counts(e: &ApiError) -> bool {
    !matches!(e, ApiError::NotFound)
}

/// `ignore = ..`: a request the dependency refused as malformed or throttled says nothing of
/// its health.
fn client_side(e: &ApiError) -> bool {
    matches!(e, ApiError::Invalid(_))
}

/// `failure_if_ok = ..`: this client hands 5xx back as `Ok`.
fn server_error(status: &u16) -> bool {
    *status >= 500
}

/// GET `url`: 2xx and 5xx as `Ok(status)`, 404 and 400/429 as errors.
async fn api_get(client: &Client, url: &str) -> Result<u16, ApiError> {
    let res = client
        .get(url)
        .send()
        .await
        .map_err(|e| ApiError::Other(HttpError::Transport(e.to_string())))?;
    match res.status().as_u16() {
        404 => Err(ApiError::NotFound),
        s @ (400 | 429) => Err(ApiError::Invalid(s)),
        s => Ok(s),
    }
}

#[breaker(
    name = "oj-outcomes",
    failure = counts,
    ignore = client_side,
    failure_if_ok = server_error,
    window_calls = 10,
    min_calls = 10,
    failure_rate = 50,
    open_for = "1s",
    half_open_calls = 3
)]
async fn classified(client: &Client, url: &str) -> Result<u16, ApiError> {
    api_get(client, url).await
}

fn reply(r: Result<u16, ApiError>) -> Reply {
    match r {
        Ok(s) => Reply::Status(s),
        Err(ApiError::NotFound) => Reply::Status(404),
        Err(ApiError::Invalid(s)) => Reply::Status(s),
        Err(ApiError::Refused(Rejection::Open { .. })) => Reply::Refused,
        Err(e) => panic!("unexpected: {e:?}"),
    }
}

/// The attribute's `failure`, `ignore` and `failure_if_ok` on real responses, under bursts.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_attribute_classifies_real_responses() {
    let (up, base) = statuses().await;
    let http = client();
    outcomes_scenario("oj-outcomes", &up, true, |path| {
        let (http, url) = (http.clone(), format!("{base}{path}"));
        async move { reply(classified(&http, &url).await) }
    })
    .await;
}

/// The status of a real response, or the transport's error.
type Http = Result<u16, reqwest::Error>;

/// The tower classifier: one function for the three outcomes, as `Classified` takes it.
fn outcome_of(r: &Http) -> Outcome {
    match r {
        Ok(404) => Outcome::Success,
        Ok(400 | 429) => Outcome::Ignored,
        Ok(s) if *s >= 500 => Outcome::Failure,
        Ok(_) => Outcome::Success,
        Err(_) => Outcome::Failure,
    }
}

/// The same scenario through a tower stack: `BreakerLayer` with `Classified` in front of a
/// real HTTP client whose every status is an `Ok`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tower_layer_classifies_real_responses() {
    let (up, base) = statuses().await;
    let http = client();
    let settings = Breaker::builder("oj-tower-outcomes")
        .window_calls(10)
        .min_calls(10)
        .failure_rate(50)
        .open_for(secs(1))
        .half_open_calls(3);
    let svc = ServiceBuilder::new()
        .layer(
            BreakerLayer::new(settings)
                .unwrap()
                .failure(Classified(outcome_of as fn(&Http) -> Outcome)),
        )
        .service(service_fn(move |url: String| {
            let http = http.clone();
            async move { http.get(url).send().await.map(|r| r.status().as_u16()) }
        }));
    outcomes_scenario("oj-tower-outcomes", &up, false, |path| {
        let (svc, url) = (svc.clone(), format!("{base}{path}"));
        async move {
            match svc.oneshot(url).await {
                Ok(s) => Reply::Status(s),
                Err(Error::Rejected(Rejection::Open { .. })) => Reply::Refused,
                Err(e) => panic!("unexpected: {e:?}"),
            }
        }
    })
    .await;
}

// --- Issue 30: the tower `RetryLayer` on the same server and budget ----------------------

/// Statuses as errors, for a retry to see: a tower client that maps non-2xx to `Err`.
fn tower_retry_on(e: &HttpError) -> bool {
    matches!(e, HttpError::Status(s, _) if *s >= 500 || *s == 429)
}

#[retry(
    attempts = 3,
    backoff = "10ms",
    budget = 0,
    budget_floor = 1,
    budget_window = "4s"
)]
#[breaker(name = "oj-shared", window_calls = 1000, min_calls = 1000)]
async fn shared(client: &Client, url: &str) -> Result<u16, HttpError> {
    get(client, url).await
}

/// The tower `RetryLayer` with hints in front of `BreakerLayer` of the attribute's name, on
/// the same real dependency: one budget (here the floor alone, 4 retries in 4 s) for both,
/// each attempt a call of the one breaker; and a `Retry-After` read by the layer holds that
/// breaker open for the attribute's callers too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tower_retry_layer_shares_the_attributes_budget_and_hold() {
    let (up, base) = Upstream::start(|_, path| match path {
        "/throttle" => (503, Some(1), Duration::ZERO),
        _ => (503, None, Duration::ZERO),
    })
    .await;
    let http = client();
    let url = format!("{base}/down");
    // The attribute takes 2 retries of the 4 (two calls of 3 attempts would want 4).
    assert!(matches!(
        shared(&http, &url).await,
        Err(HttpError::Status(503, None))
    ));
    assert_eq!(up.count("/down"), 3);

    let tower_http = http.clone();
    let svc = ServiceBuilder::new()
        .layer(
            RetryLayer::new(
                Retry::builder("oj-shared")
                    .attempts(3)
                    .backoff(Backoff::new(ms(10), ms(20)))
                    .build()
                    .unwrap(),
            )
            .hints(tower_retry_on, server_hint),
        )
        .layer(
            BreakerLayer::new(
                Breaker::builder("oj-shared")
                    .window_calls(1000)
                    .min_calls(1000),
            )
            .unwrap(),
        )
        .service(service_fn(move |url: String| {
            let http = tower_http.clone();
            async move { get(&http, &url).await }
        }));
    // The layer takes the 2 retries left, then the budget refuses.
    for _ in 0..2 {
        let r = svc.clone().oneshot(url.clone()).await;
        assert!(
            matches!(r, Err(Error::Failed(HttpError::Status(503, None)))),
            "{r:?}"
        );
    }
    assert_eq!(up.count("/down"), 3 + 3 + 1);
    let m = fusebox::metrics();
    let rm = m.retry("oj-shared").unwrap();
    assert_eq!((rm.calls, rm.retries), (3, 4), "{rm:?}");
    assert!(rm.budget_exhausted >= 1, "{rm:?}");
    let b = registry().breaker("oj-shared").unwrap();
    assert_eq!(
        b.metrics().failed,
        7,
        "every attempt a call of the one breaker"
    );

    // A throttle hint read by the layer holds the breaker open for the attribute's callers.
    let r = svc.clone().oneshot(format!("{base}/throttle")).await;
    assert!(r.is_err(), "{r:?}");
    assert_eq!(b.state(), State::ForcedOpen);
    let before = up.count("");
    let r = shared(&http, &url).await;
    assert!(
        matches!(r, Err(HttpError::Refused(Rejection::Open { .. }))),
        "{r:?}"
    );
    assert_eq!(
        up.count(""),
        before,
        "held: the attribute's call never left"
    );
    tokio::time::sleep(ms(1100)).await;
    assert_ne!(
        b.state(),
        State::ForcedOpen,
        "the hold lapsed after the 1 s asked"
    );
}

/// The key of a request: its URL's host and port. A key function takes `&Request`, and the
/// request is a `String` here.
#[allow(clippy::ptr_arg)]
fn authority(url: &String) -> Option<String> {
    url.split('/').nth(2).map(str::to_owned)
}

/// A tower client keyed by host (`BreakerLayer::keyed`) with a `RetryLayer` reading
/// `Retry-After`, against two real dependencies under 100 calls a second each: the one that
/// rate-limits (429, `Retry-After: 2`, from 0.5 s to 2.5 s) is held for the 2 s it asked and
/// receives nothing meanwhile, then calls resume; the other one never stops being called.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tower_hint_holds_only_the_host_that_gave_it() {
    let (limited, limited_base) = Upstream::start(|at, _| {
        if at >= ms(500) && at < ms(2500) {
            (429, Some(2), Duration::ZERO)
        } else {
            (200, None, Duration::ZERO)
        }
    })
    .await;
    let (other, other_base) = Upstream::start(|_, _| (200, None, Duration::ZERO)).await;
    let http = client();
    let svc = ServiceBuilder::new()
        .layer(
            RetryLayer::new(
                Retry::builder("oj-tower-hosts")
                    .attempts(3)
                    .build()
                    .unwrap(),
            )
            .hints(tower_retry_on, server_hint),
        )
        .layer(
            BreakerLayer::keyed(
                Breaker::builder("oj-tower-hosts")
                    .open_for(secs(5))
                    .half_open_calls(2),
                authority as fn(&String) -> Option<String>,
            )
            .unwrap(),
        )
        .service(service_fn(move |url: String| {
            let http = http.clone();
            async move { get(&http, &url).await }
        }));
    let (l, o) = (
        format!("{limited_base}/limited"),
        format!("{other_base}/other"),
    );
    let (svc2, l2) = (svc.clone(), l.clone());
    let (to_limited, _) = tokio::join!(
        open_loop(&limited, 100, ms(4000), move || svc2
            .clone()
            .oneshot(l2.clone())),
        open_loop(&other, 100, ms(4000), move || svc
            .clone()
            .oneshot(o.clone())),
    );
    let first = limited.hits_between("/limited", ms(500), ms(2500))[0].0;
    let quiet = limited.hits_between("/limited", first + ms(300), ms(2500));
    assert!(
        quiet.is_empty(),
        "called while held: {quiet:?} (first 429 at {first:?})"
    );
    let back = limited.hits_between("/limited", ms(2500), ms(4000)).len();
    assert!(back >= 50, "calls resumed after the hold: {back}");
    // The other host: called all along, while the limited one was held too (about 100 calls
    // a second; held, it would have had none).
    let meanwhile = other
        .hits_between("/other", first + ms(300), ms(2500))
        .len();
    assert!(
        meanwhile >= 100,
        "{meanwhile} calls to the other host during the hold"
    );
    let refused = to_limited
        .iter()
        .filter(|(_, _, r)| matches!(r, Err(Error::Rejected(Rejection::Open { .. }))))
        .count();
    assert!(
        refused >= 100,
        "{refused} calls to the limited host refused while held"
    );
    let key = format!("oj-tower-hosts/{}", authority(&limited_base).unwrap());
    assert_eq!(registry().breaker(&key).unwrap().state(), State::Closed);
}

/// The tower `RetryLayer` retries what the breaker counts as a failure, as the attribute does:
/// not an error the classifier calls a success (a 404 is the dependency answering) or ignores
/// (a request it refused as malformed).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tower_retry_layer_does_not_retry_what_the_breaker_does_not_count() {
    let (up, base) = statuses().await;
    let http = client();
    fn classify(r: &Result<u16, HttpError>) -> Outcome {
        match r {
            Ok(_) | Err(HttpError::Status(404, _)) => Outcome::Success,
            Err(HttpError::Status(400 | 429, _)) => Outcome::Ignored,
            Err(_) => Outcome::Failure,
        }
    }
    let svc = ServiceBuilder::new()
        .layer(RetryLayer::new(
            Retry::builder("oj-tower-counted")
                .attempts(3)
                .backoff(Backoff::new(ms(10), ms(20)))
                .build()
                .unwrap(),
        ))
        .layer(
            BreakerLayer::new(
                Breaker::builder("oj-tower-counted")
                    .window_calls(1000)
                    .min_calls(1000),
            )
            .unwrap()
            .failure(Classified(
                classify as fn(&Result<u16, HttpError>) -> Outcome,
            )),
        )
        .service(service_fn(move |url: String| {
            let http = http.clone();
            async move { get(&http, &url).await }
        }));
    for (path, attempts) in [("/missing", 1), ("/bad", 1), ("/down", 3)] {
        let r = svc.clone().oneshot(format!("{base}{path}")).await;
        assert!(
            matches!(r, Err(Error::Failed(HttpError::Status(..)))),
            "{r:?}"
        );
        assert_eq!(up.count(path), attempts, "{path}");
    }
}
