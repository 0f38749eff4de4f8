//! Clauses of issues 19-32 and of DESIGN.md's contract that sit beside the main scenario each
//! earlier test pinned, checked through the public `fusebox` facade as a user would: where two
//! features meet (a retry and an ignored error, a fallback and `failure_if_ok`, a ramp and a
//! keyed breaker, a live change and the derived defaults). Every test runs on a paused clock.
#![cfg(all(
    feature = "tower",
    feature = "serde",
    feature = "testing",
    feature = "admin",
    feature = "metrics"
))]

use std::sync::atomic::{AtomicU32, Ordering::SeqCst};
use std::sync::Mutex;

use fusebox::call::{Completion, Outcome};
use fusebox::{breaker, bulkhead, registry, retry, Breaker, Bulkhead, Error, Rejection, State};
use tokio::time::advance;

mod common;
use common::{ms, secs};

/// A client's error: the dependency failing, answering "not found", a request refused before
/// it was sent, or fusebox refusing.
#[derive(Debug, Clone, PartialEq, Eq)]
enum ApiError {
    Down,
    NotFound,
    Invalid,
    Refused(Rejection),
}

impl From<Rejection> for ApiError {
    fn from(r: Rejection) -> Self {
        ApiError::Refused(r)
    }
}

/// `failure = counted`: a "not found" is the dependency answering.
fn counted(e: &ApiError) -> bool {
    !matches!(e, ApiError::NotFound)
}

/// `ignore = client_side`: refused before the dependency was reached.
fn client_side(e: &ApiError) -> bool {
    matches!(e, ApiError::Invalid)
}

// --- Issues 30 x 31: `retry_on` defaults to what the breaker counts as a failure ---------

static OUTCOME_ATTEMPTS: AtomicU32 = AtomicU32::new(0);

#[retry(attempts = 3, backoff = "1ms", budget = 100, budget_floor = 100)]
#[breaker(name = "ol-retry-outcomes", failure = counted, ignore = client_side)]
async fn classified(answer: ApiError) -> Result<u32, ApiError> {
    OUTCOME_ATTEMPTS.fetch_add(1, SeqCst);
    Err(answer)
}

/// Issue 30: `retry_on` is "by default, what the breaker counts as a failure"; issue 31 adds
/// two outcomes that are not failures: an error `failure` refuses (a success) and an ignored
/// one. Neither is retried; a counted failure is, up to `attempts`.
#[tokio::test(start_paused = true)]
async fn only_what_the_breaker_counts_as_a_failure_is_retried() {
    for (answer, attempts) in [
        (ApiError::Invalid, 1),
        (ApiError::NotFound, 1),
        (ApiError::Down, 3),
    ] {
        OUTCOME_ATTEMPTS.store(0, SeqCst);
        assert_eq!(classified(answer.clone()).await, Err(answer.clone()));
        assert_eq!(OUTCOME_ATTEMPTS.load(SeqCst), attempts, "{answer:?}");
    }
    // `ignored` counts both outcomes that are no failure (its rustdoc); the window holds the
    // excluded error as a call that did not fail, and not the ignored one.
    let m = registry().breaker("ol-retry-outcomes").unwrap().metrics();
    assert_eq!((m.ignored, m.failed, m.window_calls), (2, 3, 4), "{m:?}");
}

// --- Issue 31: what each outcome does to the fallback and to `stale_for` ------------------

static FALLBACKS: AtomicU32 = AtomicU32::new(0);

fn from_cache(_: Error<ApiError>) -> Result<u16, ApiError> {
    FALLBACKS.fetch_add(1, SeqCst);
    Ok(299)
}

fn server_error(status: &u16) -> bool {
    *status >= 500
}

#[breaker(
    name = "ol-outcome-fallback",
    ignore = client_side,
    failure = counted,
    failure_if_ok = server_error,
    stale_for = "10m",
    fallback = from_cache
)]
async fn status_of(id: u32) -> Result<u16, ApiError> {
    let _ = id;
    ANSWER.lock().unwrap().clone()
}

/// What `status_of` answers next (one test calls it).
static ANSWER: Mutex<Result<u16, ApiError>> = Mutex::new(Ok(200));

async fn status_answering(id: u32, answer: Result<u16, ApiError>) -> Result<u16, ApiError> {
    *ANSWER.lock().unwrap() = answer;
    status_of(id).await
}

/// The outcomes table of `#[breaker]`'s reference: the fallback and `stale_for` answer a
/// counted `Err` only. An ignored error and an error `failure` refuses go back unchanged, an
/// `Ok` that `failure_if_ok` counts is returned as is, and none of them calls the fallback or
/// serves the last good value, though one is there for the same arguments.
#[tokio::test(start_paused = true)]
async fn the_fallback_and_the_last_good_value_answer_counted_errors_only() {
    FALLBACKS.store(0, SeqCst);
    assert_eq!(
        status_answering(7, Ok(200)).await,
        Ok(200),
        "a good value to serve"
    );
    assert_eq!(
        status_answering(7, Err(ApiError::Invalid)).await,
        Err(ApiError::Invalid)
    );
    assert_eq!(
        status_answering(7, Err(ApiError::NotFound)).await,
        Err(ApiError::NotFound)
    );
    assert_eq!(status_answering(7, Ok(503)).await, Ok(503));
    assert_eq!(FALLBACKS.load(SeqCst), 0, "no fallback for any of them");
    // A counted error is answered by the last good value of these arguments (younger than
    // `stale_for`), and for other arguments by the fallback.
    assert_eq!(status_answering(7, Err(ApiError::Down)).await, Ok(200));
    assert_eq!(status_answering(8, Err(ApiError::Down)).await, Ok(299));
    assert_eq!(FALLBACKS.load(SeqCst), 1);
    let m = registry().breaker("ol-outcome-fallback").unwrap().metrics();
    assert_eq!(
        (m.ignored, m.failed, m.window_calls, m.stale_served),
        (2, 3, 5, 1),
        "{m:?}"
    );
    tokio::time::advance(ms(1)).await;
}

// --- Issues 22 x 31: a probe that ends ignored is no trial ------------------------------

/// A breaker that opened on two failures and probes every second while open.
async fn probing(name: &str) -> Breaker {
    let b = Breaker::builder(name)
        .window_calls(2)
        .min_calls(2)
        .open_for(secs(60))
        .probe_every(secs(1))
        .build_detached()
        .unwrap();
    for _ in 0..2 {
        let _ = b.call(async { Err::<(), _>(ApiError::Down) }).await;
    }
    assert_eq!(b.state(), State::Open);
    b
}

fn classify(r: &Result<u16, ApiError>) -> Outcome {
    match r {
        Err(ApiError::Invalid) => Outcome::Ignored,
        Err(_) => Outcome::Failure,
        Ok(_) => Outcome::Success,
    }
}

/// Issue 22: a probe's "answer counts as a trial"; issue 31: "an ignored call takes no place
/// in the window and is not a trial: its trial slot is given back". A probe that ends ignored
/// (refused by the client before it reached the dependency) tells nothing of the dependency:
/// the breaker stays open (no half-open on a client-side error), and the probe it used is
/// given back, so the next caller probes at once rather than a period later.
#[tokio::test(start_paused = true)]
async fn a_probe_that_ends_ignored_is_no_trial_and_gives_its_probe_back() {
    let b = probing("ol-probe-ignored").await;
    advance(ms(1_001)).await;
    let c = b
        .call_classified(async { Err::<u16, _>(ApiError::Invalid) }, classify)
        .await;
    assert!(matches!(c, Completion::Ignored(ApiError::Invalid)), "{c:?}");
    assert_eq!(b.state(), State::Open, "an ignored probe proves nothing");
    assert_eq!(b.metrics().ignored, 1);
    // The next caller is the probe: it answers, and half-open begins with it as a passed trial.
    let c = b
        .call_classified(async { Ok::<u16, ApiError>(200) }, classify)
        .await;
    assert!(matches!(c, Completion::Ok(200)), "{c:?}");
    assert_ne!(
        b.state(),
        State::Open,
        "the passed probe ends the open period"
    );
}

/// DESIGN.md: "a bulkhead rejection is not a failure" and "a trial refused by a full pool
/// gives its trial slot back". A probe refused by a full bulkhead never reached the
/// dependency: the breaker stays open and the next caller, once a slot is free, probes.
#[tokio::test(start_paused = true)]
async fn a_probe_refused_by_a_full_bulkhead_gives_its_probe_back() {
    let b = probing("ol-probe-full").await;
    let pool = Bulkhead::builder("ol-probe-full-pool")
        .pool(1)
        .build_detached()
        .unwrap();
    advance(ms(1_001)).await;
    let held = pool.acquire().await.unwrap();
    let r = b.call_in(&pool, async { Ok::<u16, ApiError>(200) }).await;
    assert!(
        matches!(r, Err(Error::Rejected(Rejection::Full { .. }))),
        "{r:?}"
    );
    assert_eq!(b.state(), State::Open);
    drop(held);
    let r = b.call_in(&pool, async { Ok::<u16, ApiError>(200) }).await;
    assert_eq!(r.ok(), Some(200), "the next caller probes");
    assert_ne!(b.state(), State::Open);
    assert_eq!(b.metrics().failed, 2, "the refusal was no failure");
}

/// The same probe through a failing answer: a failed probe changes nothing, and the next
/// probe is a period later (the contrast that makes the test above mean something).
#[tokio::test(start_paused = true)]
async fn a_failed_probe_leaves_the_breaker_open_until_the_next_period() {
    let b = probing("ol-probe-failed").await;
    advance(ms(1_001)).await;
    let c = b
        .call_classified(async { Err::<u16, _>(ApiError::Down) }, classify)
        .await;
    assert!(
        matches!(c, Completion::Failed(Error::Failed(ApiError::Down))),
        "{c:?}"
    );
    let c = b
        .call_classified(async { Ok::<u16, ApiError>(200) }, classify)
        .await;
    assert!(
        matches!(
            c,
            Completion::Failed(Error::Rejected(Rejection::Open { .. }))
        ),
        "{c:?}"
    );
    assert_eq!(b.state(), State::Open);
}

// --- Issue 27: responses that leak nothing -----------------------------------------------

async fn body(res: axum::response::Response) -> String {
    let bytes = axum::body::to_bytes(res.into_body(), 1 << 16)
        .await
        .unwrap();
    String::from_utf8(bytes.to_vec()).unwrap()
}

/// A keyed breaker's refusal as an HTTP answer: 503, `Retry-After` in whole seconds rounded
/// up, and a body that names neither the breaker nor the tenant's key nor a duration; with
/// `response::Named` (the opt-in) the name is there, in whole seconds too.
#[tokio::test(start_paused = true)]
async fn a_keyed_refusal_answers_503_in_whole_seconds_and_names_nothing() {
    use axum::response::IntoResponse;
    let template = Breaker::builder("ol-public")
        .window_calls(2)
        .min_calls(2)
        .open_for(ms(29_500))
        .config()
        .unwrap();
    let b = registry().keyed(&template, &"tenant-secret");
    for _ in 0..2 {
        let _ = b.call(async { Err::<(), _>(ApiError::Down) }).await;
    }
    advance(ms(200)).await;
    let Err(err) = b.call(async { Ok::<(), ApiError>(()) }).await else {
        panic!("refused while open");
    };
    let Error::Rejected(r) = err else {
        panic!("refused, not failed: {err:?}")
    };
    let res = r.clone().into_response();
    assert_eq!(res.status(), 503);
    assert_eq!(res.headers()["retry-after"], "30", "29.3 s rounds up");
    let text = body(res).await;
    assert!(
        !text.contains("tenant-secret") && !text.contains("ol-public") && !text.contains('.'),
        "{text}"
    );
    let named = body(fusebox::response::Named(r).into_response()).await;
    assert!(named.contains("ol-public/tenant-secret"), "{named}");
    assert!(named.contains("30 s"), "{named}");
}

// --- Issues 30 x DESIGN's `stale_for`: retries first, then the last good value ------------

static QUOTE_ATTEMPTS: AtomicU32 = AtomicU32::new(0);
static QUOTE_UP: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(true);

#[retry(attempts = 3, backoff = "1ms", budget = 100, budget_floor = 100)]
#[breaker(name = "ol-retry-stale", stale_for = "10m")]
async fn quote(sku: u32) -> Result<u32, ApiError> {
    QUOTE_ATTEMPTS.fetch_add(1, SeqCst);
    if QUOTE_UP.load(SeqCst) {
        Ok(sku * 10)
    } else {
        Err(ApiError::Down)
    }
}

/// `stale_for` answers "while rejected or failing" and `#[retry]` sits outermost: a failing
/// call is retried (each attempt reaches the dependency) before the last good value of the
/// same arguments answers it, once, at the end; other arguments get the error.
#[tokio::test(start_paused = true)]
async fn a_failing_call_is_retried_before_its_last_good_value_answers() {
    QUOTE_UP.store(true, SeqCst);
    assert_eq!(quote(4).await, Ok(40));
    QUOTE_UP.store(false, SeqCst);
    QUOTE_ATTEMPTS.store(0, SeqCst);
    assert_eq!(quote(4).await, Ok(40), "the last good value");
    assert_eq!(QUOTE_ATTEMPTS.load(SeqCst), 3, "after every attempt");
    assert_eq!(quote(5).await, Err(ApiError::Down));
    let m = registry().breaker("ol-retry-stale").unwrap().metrics();
    assert_eq!((m.failed, m.stale_served), (6, 1), "{m:?}");
}

// --- DESIGN.md: every annotated breaker and bulkhead is listed before its first call -------

#[async_trait::async_trait]
trait Payments: Send + Sync {
    async fn verify(&self, order: u32) -> Result<u32, ApiError>;
}

struct Provider;

#[async_trait::async_trait]
impl Payments for Provider {
    #[breaker(name = "ol-listed-trait")]
    #[bulkhead(name = "ol-listed-trait-pool", pool = 2)]
    async fn verify(&self, order: u32) -> Result<u32, ApiError> {
        Ok(order)
    }
}

struct Client<T>(T);

impl<T: Send + Sync> Client<T> {
    #[bulkhead(name = "ol-listed-generic-pool", pool = 4)]
    async fn send(&self, n: u32) -> Result<u32, ApiError> {
        Ok(n)
    }

    #[breaker(name = "ol-listed-generic", key = region, timeout = "1s")]
    async fn regional(&self, region: &str) -> Result<u32, ApiError> {
        let _ = region;
        Ok(1)
    }
}

/// DESIGN.md: "Every annotated breaker and bulkhead is listed from the start, before its first
/// call (keyed ones per key once used)": also inside an `#[async_trait]` impl (issue 20) and
/// in a generic type's impl, and an operator's force reaches the trait-object call.
#[tokio::test(start_paused = true)]
async fn breakers_of_trait_impls_and_generic_impls_are_listed_before_their_first_call() {
    let trait_breaker = registry()
        .breaker("ol-listed-trait")
        .expect("the async-trait method's breaker is listed");
    assert!(registry().bulkhead("ol-listed-trait-pool").is_some());
    let pool = registry()
        .bulkhead("ol-listed-generic-pool")
        .expect("the generic impl's bulkhead is listed");
    assert_eq!(pool.pool(), 4);
    let snapshot = fusebox::metrics();
    assert!(snapshot.breaker("ol-listed-trait").is_some());
    assert!(snapshot.bulkhead("ol-listed-generic-pool").is_some());
    assert!(
        fusebox::metrics::prometheus().contains("bulkhead=\"ol-listed-trait-pool\""),
        "in Prometheus before any call"
    );
    // A keyed breaker is listed per key once used.
    assert!(registry().breaker("ol-listed-generic/eu").is_none());
    let client = Client(());
    assert_eq!(client.regional("eu").await, Ok(1));
    assert_eq!(client.send(3).await, Ok(3));
    assert!(registry().breaker("ol-listed-generic/eu").is_some());

    trait_breaker.force_open();
    let provider: Box<dyn Payments> = Box::new(Provider);
    let r = provider.verify(9).await;
    assert!(
        matches!(
            r,
            Err(ApiError::Refused(Rejection::Open {
                state: State::ForcedOpen,
                ..
            }))
        ),
        "{r:?}"
    );
    trait_breaker.reset();
    assert_eq!(provider.verify(9).await, Ok(9));
}

// --- Issue 29: bulkheads have a text and an environment form, with the attribute's verdict --

mod cases {
    #![allow(dead_code)]
    include!("common/settings_cases.rs");
}

/// Issue 29: "Bulkheads have no text or environment form at all", now they do:
/// `BulkheadBuilder::from_settings` (and `from_vars`, the environment's form) give every case
/// of the shared table the verdict and the words `#[bulkhead]` gives it at compile time.
#[test]
fn a_bulkheads_text_and_environment_forms_give_the_attributes_verdict_and_words() {
    use fusebox::config::BulkheadBuilder;
    use std::ffi::OsString;
    for (source, want) in cases::BULKHEAD_CASES {
        let pairs = cases::as_text(source);
        let text = BulkheadBuilder::from_settings("ol-text-pool", pairs.clone())
            .and_then(|b| b.config())
            .err()
            .map(|e| e.to_string());
        assert_eq!(text.as_deref(), *want, "text: {source}");
        let vars = pairs.iter().map(|(k, v)| {
            (
                OsString::from(format!("OLPOOL_{}", k.to_uppercase())),
                OsString::from(v),
            )
        });
        let env = BulkheadBuilder::from_vars("ol-env-pool", "OLPOOL", vars)
            .and_then(|b| b.config())
            .err()
            .map(|e| e.to_string());
        assert_eq!(env.as_deref(), *want, "environment: {source}");
    }
    let b = BulkheadBuilder::from_settings("ol-text-built", [("pool", "3"), ("max_wait", "20ms")])
        .unwrap()
        .build_detached()
        .unwrap();
    assert_eq!((b.pool(), b.config().max_wait()), (3, ms(20)));
}

// --- DESIGN.md `stale_for` x `#[bulkhead]`: a full pool is a rejection too -----------------

static STOCK_GATE: tokio::sync::Notify = tokio::sync::Notify::const_new();

#[breaker(name = "ol-stale-pool", stale_for = "10m")]
#[bulkhead(name = "ol-stale-pool-slots", pool = 1)]
async fn stock(sku: u32, wait: bool) -> Result<u32, ApiError> {
    if wait {
        STOCK_GATE.notified().await;
    }
    Ok(sku + 1)
}

/// `stale_for`: "while rejected or failing, answer with the last `Ok` value for the same
/// arguments if younger". A full bulkhead rejects: the same arguments get their last good
/// value; arguments with none get the rejection; and the breaker counts no failure.
#[tokio::test(start_paused = true)]
async fn a_full_bulkhead_serves_the_last_good_value_of_the_same_arguments() {
    assert_eq!(stock(1, false).await, Ok(2));
    let holder = tokio::spawn(stock(9, true));
    tokio::task::yield_now().await;
    assert_eq!(
        registry()
            .bulkhead("ol-stale-pool-slots")
            .unwrap()
            .in_flight(),
        1
    );
    // The stale key is every argument: (1, false) has a good value, (2, false) has none.
    assert_eq!(stock(1, false).await, Ok(2), "the last good value");
    let r = stock(2, false).await;
    assert!(
        matches!(r, Err(ApiError::Refused(Rejection::Full { .. }))),
        "{r:?}"
    );
    STOCK_GATE.notify_one();
    assert_eq!(holder.await.unwrap(), Ok(10));
    let m = registry().breaker("ol-stale-pool").unwrap().metrics();
    assert_eq!(
        (m.failed, m.stale_served, m.rejected_by_reason.bulkhead_full),
        (0, 1, 2),
        "{m:?}"
    );
}

// --- Issue 29 x DESIGN's default name: a module pattern reaches default-named guards ------

mod ol_billing {
    use super::ApiError;
    use fusebox::{breaker, bulkhead};

    #[breaker(timeout = "800ms")]
    #[bulkhead(pool = 2)]
    pub async fn charge() -> Result<u32, ApiError> {
        Ok(1)
    }
}

/// DESIGN.md: a breaker's name defaults to "module path + fn name"; issue 29: overrides by
/// name "and by pattern". A pattern over the module (`*::ol_billing::*`) reaches a breaker
/// and a bulkhead whose names were left to their default, before their first call, each
/// setting in force with its source, and every derived setting follows the new timeout.
#[tokio::test(start_paused = true)]
async fn a_module_pattern_overrides_default_named_guards_before_their_first_call() {
    use fusebox::settings::{Overrides, Source};
    let name = registry()
        .breakers()
        .into_iter()
        .map(|b| b.name().to_owned())
        .find(|n| n.ends_with("ol_billing::charge"))
        .expect("listed by its default name before any call");
    let o = Overrides::new()
        .breaker("*::ol_billing::*", [("timeout", "2s")], Source::File)
        .bulkhead("*::ol_billing::*", [("pool", "5")], Source::File);
    let applied = registry().apply_overrides(&o).unwrap();
    assert!(applied.undeclared.is_empty(), "{:?}", applied.undeclared);
    let b = registry().breaker(&name).unwrap();
    let now = b.config_in_force();
    assert_eq!(now.timeout(), Some(secs(2)));
    assert_eq!(
        now.slow().map(|s| s.bound),
        Some(secs(1)),
        "derived from the new timeout"
    );
    let pool = registry()
        .bulkheads()
        .into_iter()
        .find(|p| p.name().ends_with("ol_billing::charge"))
        .expect("the bulkhead, by its default name");
    assert_eq!(pool.pool(), 5);
    let in_force = pool.settings_in_force();
    let p = in_force.iter().find(|s| s.key == "pool").unwrap();
    assert_eq!((p.value.as_str(), p.source), ("5", Source::File));
    assert_eq!(ol_billing::charge().await, Ok(1));
}

// --- Issue 30 with `#[bulkhead]` alone: the budget is the bulkhead's name ------------------

static POOLED_ATTEMPTS: AtomicU32 = AtomicU32::new(0);
static POOLED_GATE: tokio::sync::Notify = tokio::sync::Notify::const_new();

#[retry(attempts = 3, backoff = "1ms", budget = 100, budget_floor = 100)]
#[bulkhead(name = "ol-retry-pool", pool = 1)]
async fn pooled(wait: bool) -> Result<u32, ApiError> {
    POOLED_ATTEMPTS.fetch_add(1, SeqCst);
    if wait {
        POOLED_GATE.notified().await;
        return Ok(0);
    }
    Err(ApiError::Down)
}

/// `#[retry]` beside a bulkhead alone: every `Err` is retried (no breaker to ask), the
/// budget and its counts go by the bulkhead's name, and a refusal by the full pool is never
/// retried (it never reached the dependency).
#[tokio::test(start_paused = true)]
async fn beside_a_bulkhead_alone_errors_are_retried_and_a_full_pool_is_not() {
    assert_eq!(pooled(false).await, Err(ApiError::Down));
    assert_eq!(POOLED_ATTEMPTS.swap(0, SeqCst), 3);
    let holder = tokio::spawn(pooled(true));
    tokio::task::yield_now().await;
    assert_eq!(POOLED_ATTEMPTS.swap(0, SeqCst), 1);
    let r = pooled(false).await;
    assert!(
        matches!(r, Err(ApiError::Refused(Rejection::Full { .. }))),
        "{r:?}"
    );
    assert_eq!(
        POOLED_ATTEMPTS.load(SeqCst),
        0,
        "refused before any attempt ran"
    );
    POOLED_GATE.notify_one();
    assert_eq!(holder.await.unwrap(), Ok(0));
    let m = fusebox::metrics();
    let r = m
        .retry("ol-retry-pool")
        .expect("counted under the bulkhead's name");
    assert_eq!((r.calls, r.retries), (3, 2), "{r:?}");
}

// --- Issues 29, 30, 31 x the `metrics` facade: "every metrics output" --------------------

#[retry(attempts = 2, backoff = "1ms", budget = 100, budget_floor = 100)]
#[breaker(name = "ol-facade-retry")]
async fn facade_retried() -> Result<u32, ApiError> {
    Err(ApiError::Down)
}

/// Issue 31: the ignored outcome is "counted in its own lifetime counter, in every metrics
/// output"; issue 30: retry counts "in every metrics output"; issue 29: a shadow "shows in the
/// metrics". One snapshot with all of them (an ignored call, a retried name, a shadow, a
/// ramping breaker, a bulkhead) is rendered as Prometheus text and published through the
/// `metrics` crate facade: every series of the text, with its labels, reaches the facade.
#[tokio::test(start_paused = true)]
async fn every_series_of_the_prometheus_text_reaches_the_metrics_facade() {
    use metrics_util::debugging::DebuggingRecorder;
    use std::collections::BTreeSet;

    // An ignored call, a shadow, and retries under their own name.
    let b = Breaker::builder("ol-facade")
        .window_calls(4)
        .min_calls(4)
        .build()
        .unwrap();
    b.set_shadow([("failure_rate", "10")]).unwrap();
    let _ = b
        .call_classified(async { Err::<u16, _>(ApiError::Invalid) }, classify)
        .await;
    let _ = b.call(async { Err::<u16, _>(ApiError::Down) }).await;
    assert_eq!(facade_retried().await, Err(ApiError::Down));
    let _ = Bulkhead::builder("ol-facade-pool").pool(2).build().unwrap();

    let m = fusebox::metrics();
    let text = m.to_prometheus();
    let series = |name: &str, labels: Vec<(String, String)>| {
        let mut labels = labels;
        labels.sort();
        format!("{name}{labels:?}")
    };
    let mut in_text = BTreeSet::new();
    for line in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
    {
        let sample = line.rsplit_once(' ').unwrap().0;
        let (name, labels) = match sample.split_once('{') {
            Some((n, rest)) => (n, rest.trim_end_matches('}')),
            None => (sample, ""),
        };
        let labels = labels
            .split("\",")
            .filter(|l| !l.is_empty())
            .map(|l| {
                let (k, v) = l.split_once('=').unwrap();
                (k.to_owned(), v.trim_matches('"').to_owned())
            })
            .collect();
        in_text.insert(series(name, labels));
    }
    let recorder = DebuggingRecorder::new();
    let snap = recorder.snapshotter();
    metrics::with_local_recorder(&recorder, || fusebox::metrics::facade::record_snapshot(&m));
    let in_facade: BTreeSet<String> = snap
        .snapshot()
        .into_vec()
        .into_iter()
        .map(|(k, _, _, _)| {
            let key = k.key();
            let labels = key
                .labels()
                .map(|l| (l.key().to_owned(), l.value().to_owned()))
                .collect();
            series(key.name(), labels)
        })
        .collect();
    let missing: Vec<&String> = in_text.difference(&in_facade).collect();
    assert!(
        missing.is_empty(),
        "in the Prometheus text, not in the facade: {missing:#?}"
    );
    for needle in ["outcome\", \"ignored", "ol-facade-retry", "shadow"] {
        assert!(
            in_facade.iter().any(|s| s.contains(needle)),
            "{needle} not in the facade"
        );
    }
}

// --- DESIGN.md x issue 30: a call dropped during a retry's attempt frees everything --------

static DROPPED_ATTEMPTS: AtomicU32 = AtomicU32::new(0);

#[retry(attempts = 3, backoff = "1ms", budget = 100, budget_floor = 100)]
#[breaker(name = "ol-retry-dropped")]
#[bulkhead(name = "ol-retry-dropped-pool", pool = 1)]
async fn hangs_on_retry() -> Result<u32, ApiError> {
    if DROPPED_ATTEMPTS.fetch_add(1, SeqCst) == 0 {
        return Err(ApiError::Down);
    }
    std::future::pending().await
}

/// "A dropped (cancelled) call frees its bulkhead permit ... and is not a failure", also when
/// it is dropped in its second attempt: the slot is free at once, the first attempt is the
/// one failure, the second is cancelled, and no third attempt starts.
#[tokio::test(start_paused = true)]
async fn a_call_dropped_in_its_second_attempt_frees_its_slot_and_counts_no_failure() {
    let call = tokio::spawn(hangs_on_retry());
    for _ in 0..10 {
        advance(ms(5)).await;
    }
    assert_eq!(DROPPED_ATTEMPTS.load(SeqCst), 2, "in its second attempt");
    let pool = registry().bulkhead("ol-retry-dropped-pool").unwrap();
    assert_eq!(pool.in_flight(), 1);
    call.abort();
    let _ = call.await;
    assert_eq!(pool.in_flight(), 0, "the slot is back");
    advance(secs(5)).await;
    assert_eq!(
        DROPPED_ATTEMPTS.load(SeqCst),
        2,
        "no attempt after the drop"
    );
    let m = registry().breaker("ol-retry-dropped").unwrap().metrics();
    assert_eq!((m.failed, m.cancelled, m.window_calls), (1, 1, 1), "{m:?}");
}

// --- Issues 29 x 31: a shadow classifies as the live breaker does --------------------------

/// A shadow is "judged on the same calls beside the live one": the same outcomes too. Calls
/// the live breaker ignores take no place in the shadow's window either, so a strict shadow
/// (any failure of two calls) would not have opened on client-side errors, and does on two
/// counted failures.
#[tokio::test(start_paused = true)]
async fn a_shadow_ignores_what_the_live_breaker_ignores() {
    let b = Breaker::builder("ol-shadow-outcomes")
        .build_detached()
        .unwrap();
    b.set_shadow([
        ("window_calls", "2"),
        ("min_calls", "2"),
        ("failure_rate", "50"),
    ])
    .unwrap();
    for _ in 0..5 {
        let _ = b
            .call_classified(async { Err::<u16, _>(ApiError::Invalid) }, classify)
            .await;
    }
    let s = b.shadow().unwrap();
    assert_eq!(
        (s.calls_seen, s.window_calls, s.state),
        (5, 0, State::Closed),
        "{s:?}"
    );
    assert_eq!(s.would_have_opened_at, None);
    for _ in 0..2 {
        let _ = b
            .call_classified(async { Err::<u16, _>(ApiError::Down) }, classify)
            .await;
    }
    let s = b.shadow().unwrap();
    assert!(s.would_have_opened_at.is_some(), "{s:?}");
    assert_eq!(b.state(), State::Closed, "the live breaker refuses nothing");
}

/// The environment forms take their prefix with or without its `_`: `"OLT"` and `"OLT_"` both
/// read `OLT_POOL` and `OLT_TIMEOUT`. Written with its separator, the prefix matched nothing,
/// and a bulkhead from the environment failed with "`pool` is missing".
#[test]
fn an_environment_prefix_may_be_written_with_its_underscore() {
    use fusebox::config::{BreakerBuilder, BulkheadBuilder};
    use std::ffi::OsString;
    let vars = || {
        [("OLT_POOL", "3"), ("OLT_TIMEOUT", "2s")]
            .map(|(k, v)| (OsString::from(k), OsString::from(v)))
    };
    for prefix in ["OLT", "OLT_"] {
        let pool = BulkheadBuilder::from_vars("ol-prefix-pool", prefix, vars())
            .and_then(|b| b.build_detached())
            .unwrap_or_else(|e| panic!("{prefix}: {e}"));
        assert_eq!(pool.pool(), 3, "{prefix}");
        let config = BreakerBuilder::from_vars("ol-prefix", prefix, vars())
            .and_then(|b| b.config())
            .unwrap();
        assert_eq!(config.timeout(), Some(secs(2)), "{prefix}");
    }
}
