//! Issues 26 and 31 as a user reads them (the text, DESIGN.md, the README and the
//! rustdoc), through the facade only: outcomes (ignored errors, failures inside `Ok`, the
//! half-open bound, forced closed with and without recording) and the defaults a breaker
//! derives from its `timeout` alone. Every test runs on a paused clock.

use std::sync::atomic::{AtomicU16, AtomicU32, Ordering::SeqCst};
use std::time::Duration;

use fusebox::call::{Completion, Outcome};
use fusebox::{breaker, bulkhead, registry, Breaker, Error, Rejection, State};
use tokio::time::advance;

mod common;
use common::{ms, secs};

/// A client's error: the dependency failing, answering "not found", or a request refused
/// before it was sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ApiError {
    Down,
    NotFound,
    Invalid,
    Refused,
}

impl From<Rejection> for ApiError {
    fn from(_: Rejection) -> Self {
        ApiError::Refused
    }
}

fn invalid(e: &ApiError) -> bool {
    *e == ApiError::Invalid
}

fn server_error(status: &u16) -> bool {
    *status >= 500
}

fn metrics(name: &str) -> fusebox::metrics::BreakerMetrics {
    registry().breaker(name).unwrap().metrics()
}

// --- Issue 31: the closed window ---------------------------------------------------------

#[breaker(name = "oa-closed", window_calls = 2, min_calls = 2, ignore = invalid, fallback = down)]
async fn closed_call(r: Result<u16, ApiError>) -> Result<u16, ApiError> {
    r
}

static FALLBACKS: AtomicU32 = AtomicU32::new(0);

fn down(_: Error<ApiError>) -> Result<u16, ApiError> {
    FALLBACKS.fetch_add(1, SeqCst);
    Ok(0)
}

/// r4j's scenarios: a failure and an ignored error in a window of 2 stay closed, and the
/// failure rate is 100 %, not 50 %. The ignored error goes back to the caller as is: no
/// fallback for it.
#[tokio::test(start_paused = true)]
async fn an_ignored_error_is_neither_success_nor_failure_in_the_window() {
    assert_eq!(
        closed_call(Err(ApiError::Invalid)).await,
        Err(ApiError::Invalid)
    );
    assert_eq!(
        FALLBACKS.load(SeqCst),
        0,
        "an ignored error gets no fallback"
    );
    assert_eq!(closed_call(Err(ApiError::Down)).await, Ok(0));
    assert_eq!(
        FALLBACKS.load(SeqCst),
        1,
        "a counted failure gets the fallback"
    );
    let m = metrics("oa-closed");
    assert_eq!(
        (m.state, m.window_calls, m.ignored, m.failed),
        (State::Closed, 1, 1, 1)
    );
    assert_eq!(m.failure_rate, 100.0);
    for _ in 0..10 {
        closed_call(Err(ApiError::Invalid)).await.unwrap_err();
    }
    assert_eq!(
        metrics("oa-closed").state,
        State::Closed,
        "min_calls is not filled by ignored calls"
    );
    closed_call(Err(ApiError::Down)).await.unwrap();
    assert_eq!(metrics("oa-closed").state, State::Open);
}

/// `failure` keeps its meaning: an error it refuses counts as a success (a 404 is the
/// dependency answering), while `ignore` wins over it when both say yes.
#[breaker(
    name = "oa-both",
    window_calls = 4,
    min_calls = 4,
    failure = |e: &ApiError| *e != ApiError::NotFound,
    ignore = |e: &ApiError| *e == ApiError::Invalid
)]
async fn both_call(r: Result<u16, ApiError>) -> Result<u16, ApiError> {
    r
}

#[tokio::test(start_paused = true)]
async fn failure_excludes_as_a_success_and_ignore_comes_first() {
    both_call(Err(ApiError::NotFound)).await.unwrap_err();
    both_call(Err(ApiError::Invalid)).await.unwrap_err();
    both_call(Err(ApiError::Down)).await.unwrap_err();
    let m = metrics("oa-both");
    // NotFound: a call that did not fail; Invalid: no place; Down: a failure.
    assert_eq!((m.window_calls, m.failed, m.failure_rate), (2, 1, 50.0));
    both_call(Err(ApiError::NotFound)).await.unwrap_err();
    both_call(Err(ApiError::NotFound)).await.unwrap_err();
    // 1 failure in 4: below 50 %.
    assert_eq!(metrics("oa-both").state, State::Closed);
}

// --- Issue 31: an `Ok` that is a failure -------------------------------------------------

static STATUS: AtomicU16 = AtomicU16::new(200);

#[breaker(
    name = "oa-ok-failure",
    window_calls = 4,
    min_calls = 4,
    failure_if_ok = server_error,
    fallback = down_status
)]
async fn http_status() -> Result<u16, ApiError> {
    Ok(STATUS.load(SeqCst))
}

fn down_status(_: Error<ApiError>) -> Result<u16, ApiError> {
    Ok(0)
}

#[tokio::test(start_paused = true)]
async fn an_ok_classified_as_failure_trips_the_breaker_and_is_returned_as_is() {
    STATUS.store(503, SeqCst);
    for _ in 0..4 {
        assert_eq!(
            http_status().await,
            Ok(503),
            "returned as is, not the fallback's answer"
        );
    }
    let m = metrics("oa-ok-failure");
    assert_eq!((m.state, m.failed), (State::Open, 4));
    assert_eq!(http_status().await, Ok(0), "open: the fallback answers");
}

static STALE_STATUS: AtomicU16 = AtomicU16::new(200);

#[breaker(
    name = "oa-stale-ok-failure",
    window_calls = 10,
    failure_if_ok = server_error,
    stale_for = "10m"
)]
async fn page(id: u32) -> Result<u16, ApiError> {
    let _ = id;
    Ok(STALE_STATUS.load(SeqCst))
}

/// `stale_for` keeps the last *good* value: an `Ok` counted as a failure is not one, so it
/// is never what an open breaker answers with.
#[tokio::test(start_paused = true)]
async fn an_ok_classified_as_failure_is_not_kept_as_the_last_good_value() {
    assert_eq!(page(1).await, Ok(200));
    STALE_STATUS.store(503, SeqCst);
    assert_eq!(page(1).await, Ok(503));
    assert_eq!(page(2).await, Ok(503));
    registry()
        .breaker("oa-stale-ok-failure")
        .unwrap()
        .force_open();
    assert_eq!(page(1).await, Ok(200), "the last good value, not the 503");
    assert_eq!(
        page(2).await,
        Err(ApiError::Refused),
        "no good value kept for 2"
    );
}

static RETRIED: AtomicU32 = AtomicU32::new(0);

#[fusebox::retry(attempts = 3, backoff = "10ms")]
#[breaker(name = "oa-retry", window_calls = 2, min_calls = 2, ignore = invalid, failure_if_ok = server_error)]
async fn retried(r: Result<u16, ApiError>) -> Result<u16, ApiError> {
    RETRIED.fetch_add(1, SeqCst);
    r
}

/// Under `#[retry]` each attempt is classified as the call without a retry is: an ignored
/// error takes no place in the window (and, not a failure, is not retried); an `Ok` counted
/// as a failure is a failure.
#[tokio::test(start_paused = true)]
async fn a_retried_call_is_classified_like_a_single_one() {
    for _ in 0..3 {
        assert_eq!(
            retried(Err(ApiError::Invalid)).await,
            Err(ApiError::Invalid)
        );
    }
    assert_eq!(RETRIED.load(SeqCst), 3, "an ignored error is not retried");
    let m = metrics("oa-retry");
    assert_eq!(
        (m.state, m.window_calls, m.ignored, m.failed),
        (State::Closed, 0, 3, 0)
    );
    assert_eq!(retried(Ok(503)).await, Ok(503));
    assert_eq!(retried(Ok(503)).await, Ok(503));
    assert_eq!(metrics("oa-retry").state, State::Open);
}

// --- Issue 31: half-open -----------------------------------------------------------------

#[breaker(
    name = "oa-half-open-calls",
    window_calls = 2,
    min_calls = 2,
    open_for = "1s",
    half_open_calls = 3,
    ignore = invalid
)]
async fn trial(r: Result<u16, ApiError>) -> Result<u16, ApiError> {
    r
}

async fn open_then_half_open<F, Fut>(name: &str, call: F)
where
    F: Fn(Result<u16, ApiError>) -> Fut,
    Fut: std::future::Future<Output = Result<u16, ApiError>>,
{
    registry().breaker(name).unwrap().reset();
    call(Err(ApiError::Down)).await.unwrap_err();
    call(Err(ApiError::Down)).await.unwrap_err();
    assert_eq!(registry().breaker(name).unwrap().state(), State::Open);
    advance(secs(1)).await;
}

/// Ignored errors in half-open give their trial slot back: four of them leave it
/// half-open, as do three passed trials and an ignored one; the third passed trial closes.
#[tokio::test(start_paused = true)]
async fn ignored_trials_neither_pass_nor_fail_with_counted_trials() {
    let name = "oa-half-open-calls";
    open_then_half_open(name, trial).await;
    for _ in 0..4 {
        assert_eq!(trial(Err(ApiError::Invalid)).await, Err(ApiError::Invalid));
    }
    assert_eq!(metrics(name).state, State::HalfOpen);
    trial(Ok(200)).await.unwrap();
    trial(Ok(200)).await.unwrap();
    trial(Err(ApiError::Invalid)).await.unwrap_err();
    assert_eq!(metrics(name).state, State::HalfOpen);
    trial(Ok(200)).await.unwrap();
    assert_eq!(metrics(name).state, State::Closed);
}

#[breaker(
    name = "oa-half-open-share",
    window_calls = 2,
    min_calls = 2,
    open_for = "1s",
    half_open_pct = 100,
    half_open_window = "5s",
    ignore = invalid
)]
async fn share_trial(r: Result<u16, ApiError>) -> Result<u16, ApiError> {
    r
}

/// With a share, ignored calls are not judged: a half-open window of nothing but ignored
/// errors does not close the breaker, and a failure among them reopens it at 100 %.
#[tokio::test(start_paused = true)]
async fn ignored_trials_are_not_judged_with_a_share() {
    let name = "oa-half-open-share";
    open_then_half_open(name, share_trial).await;
    for _ in 0..10 {
        share_trial(Err(ApiError::Invalid)).await.unwrap_err();
        advance(ms(600)).await;
    }
    assert_eq!(metrics(name).state, State::HalfOpen, "nothing judged yet");
    share_trial(Err(ApiError::Down)).await.unwrap_err();
    share_trial(Err(ApiError::Invalid)).await.unwrap_err();
    assert_eq!(metrics(name).state, State::Open);
}

#[breaker(
    name = "oa-half-open-bound",
    window_calls = 2,
    min_calls = 2,
    open_for = "1s",
    half_open_calls = 3
)]
async fn bounded_trial(r: Result<u16, ApiError>) -> Result<u16, ApiError> {
    r
}

/// Fewer trials than `half_open_calls` within the bound (30 s): the breaker reopens, and
/// says so to whoever looks, not only to the next caller.
#[tokio::test(start_paused = true)]
async fn a_half_open_short_of_its_trials_reopens_at_the_bound() {
    let name = "oa-half-open-bound";
    open_then_half_open(name, bounded_trial).await;
    bounded_trial(Ok(200)).await.unwrap();
    advance(secs(29)).await;
    assert_eq!(registry().breaker(name).unwrap().state(), State::HalfOpen);
    advance(secs(1)).await;
    assert_eq!(registry().breaker(name).unwrap().state(), State::Open);
    assert_eq!(metrics(name).state, State::Open);
    assert_eq!(bounded_trial(Ok(200)).await, Err(ApiError::Refused));
}

#[breaker(
    name = "oa-half-open-long-trials",
    window_calls = 2,
    min_calls = 2,
    open_for = "1s",
    half_open_calls = 2,
    half_open_timeout = "45s"
)]
async fn long_trial(r: Result<u16, ApiError>) -> Result<u16, ApiError> {
    r
}

/// With a trial timeout longer than 30 s, the bound is the trial timeout: a trial admitted
/// first gets its whole time.
#[tokio::test(start_paused = true)]
async fn the_half_open_bound_is_the_trial_timeout_when_longer() {
    let name = "oa-half-open-long-trials";
    open_then_half_open(name, long_trial).await;
    long_trial(Ok(200)).await.unwrap();
    advance(secs(44)).await;
    assert_eq!(registry().breaker(name).unwrap().state(), State::HalfOpen);
    advance(secs(1)).await;
    assert_eq!(registry().breaker(name).unwrap().state(), State::Open);
}

// --- Issue 31: forced closed -------------------------------------------------------------

#[tokio::test(start_paused = true)]
async fn forced_closed_records_or_not_as_the_operator_chose() {
    let b = Breaker::builder("oa-forced")
        .window_calls(4)
        .min_calls(4)
        .build()
        .unwrap();
    let fail = || b.call(async { Err::<(), _>(ApiError::Down) });
    b.force_close();
    for _ in 0..4 {
        fail().await.unwrap_err();
    }
    let m = b.metrics();
    assert_eq!(
        (m.state, m.recording, m.window_calls),
        (State::ForcedClosed, true, 4)
    );
    assert!(fusebox::metrics::prometheus().contains("oa-forced"));

    b.reset();
    b.force_close_unrecorded();
    for _ in 0..4 {
        fail().await.unwrap_err();
    }
    let m = b.metrics();
    assert_eq!(
        (m.state, m.recording, m.window_calls),
        (State::ForcedClosed, false, 0)
    );
    assert_eq!(m.failed, 8, "counted all the same");
    b.reset();
    // Nothing from the unrecorded period is judged once released.
    for _ in 0..3 {
        fail().await.unwrap_err();
    }
    assert_eq!(b.state(), State::Closed);
}

/// A client per shard: `ignore` names an associated fn through `Self`, beside `key`.
struct Shards;

impl Shards {
    fn refused_locally(e: &ApiError) -> bool {
        *e == ApiError::Invalid
    }

    #[breaker(name = "oa-shard", key = shard, window_calls = 2, min_calls = 2, ignore = Self::refused_locally)]
    async fn get(&self, shard: u8, r: Result<u16, ApiError>) -> Result<u16, ApiError> {
        let _ = shard;
        r
    }
}

#[tokio::test(start_paused = true)]
async fn a_keyed_method_classifies_per_key() {
    let s = Shards;
    for _ in 0..3 {
        s.get(1, Err(ApiError::Invalid)).await.unwrap_err();
    }
    s.get(1, Err(ApiError::Down)).await.unwrap_err();
    s.get(2, Err(ApiError::Down)).await.unwrap_err();
    s.get(2, Err(ApiError::Down)).await.unwrap_err();
    let (one, two) = (metrics("oa-shard/1"), metrics("oa-shard/2"));
    assert_eq!(
        (one.state, one.window_calls, one.ignored),
        (State::Closed, 1, 3)
    );
    assert_eq!(two.state, State::Open);
}

/// A client behind a trait object, as `#[async_trait]` leaves it.
#[async_trait::async_trait]
trait Orders: Send + Sync {
    async fn status(&self, r: Result<u16, ApiError>) -> Result<u16, ApiError>;
}

struct HttpOrders;

#[async_trait::async_trait]
impl Orders for HttpOrders {
    #[breaker(
        name = "oa-dyn",
        window_calls = 2,
        min_calls = 2,
        ignore = invalid,
        failure_if_ok = server_error
    )]
    async fn status(&self, r: Result<u16, ApiError>) -> Result<u16, ApiError> {
        r
    }
}

#[tokio::test(start_paused = true)]
async fn a_trait_object_classifies_like_a_free_fn() {
    let orders: Box<dyn Orders> = Box::new(HttpOrders);
    for _ in 0..3 {
        orders.status(Err(ApiError::Invalid)).await.unwrap_err();
    }
    assert_eq!(orders.status(Ok(503)).await, Ok(503));
    let m = metrics("oa-dyn");
    assert_eq!(
        (m.state, m.window_calls, m.ignored, m.failed),
        (State::Closed, 1, 3, 1)
    );
    orders.status(Ok(500)).await.unwrap();
    assert_eq!(metrics("oa-dyn").state, State::Open);
}

// --- Issue 31: the builder and tower -----------------------------------------------------

fn classify(r: &Result<u16, ApiError>) -> Outcome {
    match r {
        Ok(s) if *s >= 500 => Outcome::Failure,
        Ok(_) => Outcome::Success,
        Err(ApiError::Invalid) => Outcome::Ignored,
        Err(ApiError::NotFound) => Outcome::Success,
        Err(_) => Outcome::Failure,
    }
}

#[tokio::test(start_paused = true)]
async fn the_builder_classifies_like_the_attribute() {
    let b = Breaker::builder("oa-builder")
        .window_calls(2)
        .min_calls(2)
        .build()
        .unwrap();
    let c = b
        .call_classified(async { Err(ApiError::Invalid) }, classify)
        .await;
    assert!(matches!(c, Completion::Ignored(ApiError::Invalid)));
    let c = b.call_classified(async { Ok(503) }, classify).await;
    assert!(matches!(c, Completion::Ok(503)));
    let m = b.metrics();
    assert_eq!(
        (m.window_calls, m.ignored, m.failed, m.state),
        (1, 1, 1, State::Closed)
    );
    b.call_classified(async { Ok(502) }, classify).await;
    assert_eq!(b.state(), State::Open);
}

/// The builder with a bulkhead classifies too, and a full bulkhead is never a failure.
#[tokio::test(start_paused = true)]
async fn the_builder_with_a_bulkhead_classifies_like_the_attribute() {
    let b = Breaker::builder("oa-builder-in")
        .window_calls(2)
        .min_calls(2)
        .build()
        .unwrap();
    let pool = fusebox::Bulkhead::builder("oa-builder-in")
        .pool(1)
        .build()
        .unwrap();
    let c = b
        .call_classified_in(&pool, async { Err(ApiError::Invalid) }, classify)
        .await;
    assert!(matches!(c, Completion::Ignored(ApiError::Invalid)));
    let held = pool.acquire().await.unwrap();
    let c = b
        .call_classified_in(&pool, async { Ok(503) }, classify)
        .await;
    assert!(matches!(
        c,
        Completion::Failed(Error::Rejected(Rejection::Full { .. }))
    ));
    drop(held);
    let m = b.metrics();
    assert_eq!(
        (m.window_calls, m.ignored, m.failed, m.rejected_by_bulkhead),
        (0, 1, 0, 1)
    );
    for _ in 0..2 {
        let c = b
            .call_classified_in(&pool, async { Ok(503) }, classify)
            .await;
        assert!(matches!(c, Completion::Ok(503)));
    }
    assert_eq!(b.state(), State::Open);
}

#[tokio::test(start_paused = true)]
async fn tower_classifies_like_the_attribute() {
    use fusebox::tower::{BreakerLayer, Classified};
    use tower::{service_fn, Layer, Service, ServiceExt};

    let layer = BreakerLayer::new(Breaker::builder("oa-tower").window_calls(2).min_calls(2))
        .unwrap()
        .failure(Classified(classify));
    let mut svc = layer.layer(service_fn(|r: Result<u16, ApiError>| async move { r }));
    for r in [Err(ApiError::Invalid), Err(ApiError::Invalid), Ok(503)] {
        let _ = svc.ready().await.unwrap().call(r).await;
    }
    let m = metrics("oa-tower");
    assert_eq!(
        (m.window_calls, m.ignored, m.failed, m.state),
        (1, 2, 1, State::Closed)
    );
    assert_eq!(svc.ready().await.unwrap().call(Ok(500)).await.unwrap(), 500);
    assert_eq!(metrics("oa-tower").state, State::Open);
}

/// The ignored outcome has its own lifetime counter in every output.
#[tokio::test(start_paused = true)]
async fn ignored_calls_are_in_prometheus_and_json() {
    let b = Breaker::builder("oa-export").build().unwrap();
    for _ in 0..3 {
        b.call_classified(async { Err::<u16, _>(ApiError::Invalid) }, classify)
            .await;
    }
    let text = fusebox::metrics::prometheus();
    let line = text
        .lines()
        .find(|l| l.contains("oa-export") && l.contains("ignored") && !l.starts_with('#'))
        .unwrap_or_else(|| panic!("no ignored series for oa-export in\n{text}"));
    assert!(line.ends_with(" 3"), "{line}");
    let json = serde_json::to_value(b.metrics()).unwrap();
    assert_eq!(json["ignored"], 3);
    assert_eq!(json["recording"], true);
}

// --- Issue 26: a breaker given only the dependency's timeout (or the card's line) --------

/// Where a call's answer came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Answer {
    Dependency,
    Fallback,
}

fn by_fallback(_: Error<ApiError>) -> Result<Answer, ApiError> {
    Ok(Answer::Fallback)
}

/// The dependency's latency for calls starting now, in milliseconds (one per test).
static CARD_DELAY: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(20);
static ALONE_DELAY: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(20);

async fn answer_after(delay: &std::sync::atomic::AtomicU64) -> Result<Answer, ApiError> {
    tokio::time::sleep(ms(delay.load(SeqCst))).await;
    Ok(Answer::Dependency)
}

#[breaker(name = "oa-card", trip_p95 = "300ms", timeout = "2s", fallback = by_fallback)]
#[bulkhead(name = "oa-card-pool", pool = 5)]
async fn pay_card() -> Result<Answer, ApiError> {
    answer_after(&CARD_DELAY).await
}

#[breaker(name = "oa-alone", timeout = "2s", fallback = by_fallback)]
#[bulkhead(name = "oa-alone-pool", pool = 5)]
async fn pay_alone() -> Result<Answer, ApiError> {
    answer_after(&ALONE_DELAY).await
}

/// Issue 26's real run on a paused clock: 50 calls a second, open loop; the dependency
/// answers in 20 ms, then in 8 s for 25 s, then in 20 ms again. Returns the time from the
/// slowdown to the breaker's first opening, and the time from the healing to the last call
/// the fallback answered (after it, all traffic is back).
async fn slowdown<F, Fut>(
    name: &str,
    delay: &'static std::sync::atomic::AtomicU64,
    call: F,
) -> (Duration, Duration)
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = Result<Answer, ApiError>> + Send + 'static,
{
    let breaker = registry().breaker(name).unwrap();
    let start = tokio::time::Instant::now();
    let (slow_at, heal_at, end) = (secs(10), secs(35), secs(60));
    let mut calls = Vec::new();
    let mut opened = None;
    let mut tick = tokio::time::interval(ms(20));
    loop {
        tick.tick().await;
        let t = start.elapsed();
        if t >= end {
            break;
        }
        delay.store(
            if (slow_at..heal_at).contains(&t) {
                8000
            } else {
                20
            },
            SeqCst,
        );
        if opened.is_none() && t >= slow_at && breaker.state() == State::Open {
            opened = Some(t - slow_at);
        }
        let fut = call();
        calls.push((t, tokio::spawn(fut)));
    }
    let mut last_fallback = None;
    for (t, h) in calls {
        let a = h.await.unwrap();
        assert!(
            t >= slow_at || a == Ok(Answer::Dependency),
            "healthy at {t:?}: {a:?}"
        );
        if a == Ok(Answer::Fallback) {
            last_fallback = Some(t);
        }
    }
    let back = last_fallback.map_or(Duration::ZERO, |t| t.saturating_sub(heal_at));
    let opened = opened.expect("never opened");
    eprintln!(
        "{name}: opened {opened:?} into the slowdown, all traffic back {back:?} after healing"
    );
    (opened, back)
}

/// The table: behind a pool of 5, open within 3 s, all traffic back within 15 s of
/// the healing, with the card's line and with the timeout alone.
#[tokio::test(start_paused = true)]
async fn slow_behind_a_small_bulkhead_opens_fast_and_comes_back_fast() {
    let (open, back) = slowdown("oa-card", &CARD_DELAY, pay_card).await;
    assert!(
        open <= secs(3) && back <= secs(15),
        "card's line: open {open:?}, back {back:?}"
    );
    let (open, back) = slowdown("oa-alone", &ALONE_DELAY, pay_alone).await;
    assert!(
        open <= secs(3) && back <= secs(15),
        "timeout alone: open {open:?}, back {back:?}"
    );
}

/// A tiny deterministic generator (xorshift), so the noise is the same on every run.
struct Noise(u64);

impl Noise {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

#[breaker(name = "oa-noise", timeout = "800ms")]
async fn noisy(latency: Duration, fail: bool) -> Result<Answer, ApiError> {
    tokio::time::sleep(latency).await;
    if fail {
        Err(ApiError::Down)
    } else {
        Ok(Answer::Dependency)
    }
}

/// The table's last row: an hour of a healthy dependency with 1 % random errors and ±20 %
/// latency jitter (100 ms usually) opens nothing, with the timeout alone.
#[tokio::test(start_paused = true)]
async fn an_hour_of_healthy_noise_opens_nothing() {
    let mut noise = Noise(0x9e37_79b9_7f4a_7c15);
    let mut tick = tokio::time::interval(ms(100));
    let mut calls = Vec::new();
    for _ in 0..36_000 {
        tick.tick().await;
        let latency = ms(80 + noise.next() % 41);
        let fail = noise.next() % 100 == 0;
        calls.push(tokio::spawn(noisy(latency, fail)));
        // Keep the spawned set small: each call is over within its 120 ms.
        if calls.len() >= 100 {
            for c in calls.drain(..) {
                let _ = c.await.unwrap();
            }
        }
    }
    for c in calls {
        let _ = c.await.unwrap();
    }
    let m = metrics("oa-noise");
    assert_eq!((m.times_opened, m.state), (0, State::Closed));
    assert!(m.failed > 300, "the noise was there: {} failures", m.failed);
}

static REACHED_WHILE_DOWN: AtomicU32 = AtomicU32::new(0);

#[breaker(name = "oa-down", timeout = "800ms", fallback = by_fallback)]
async fn sometimes_down(down: bool) -> Result<Answer, ApiError> {
    tokio::time::sleep(ms(30)).await;
    if down {
        REACHED_WHILE_DOWN.fetch_add(1, SeqCst);
        Err(ApiError::Down)
    } else {
        Ok(Answer::Dependency)
    }
}

/// DESIGN's "the obvious line is the right line" on a dependency that refuses for two
/// minutes at 20 calls a second: the timeout alone opens within 3 s (half of the last 100
/// calls failing), sends the dead dependency a few calls a second at most, and has all
/// traffic back within 10 s of the recovery (1 s probes, a 2 s half-open, a 5 s ramp).
#[tokio::test(start_paused = true)]
async fn a_failing_dependency_is_shed_within_seconds_and_back_within_seconds() {
    let breaker = registry().breaker("oa-down").unwrap();
    let start = tokio::time::Instant::now();
    let (down_at, up_at, end) = (secs(5), secs(125), secs(160));
    let mut tick = tokio::time::interval(ms(50));
    let (mut opened, mut calls) = (None, Vec::new());
    loop {
        tick.tick().await;
        let t = start.elapsed();
        if t >= end {
            break;
        }
        if opened.is_none() && breaker.state() == State::Open {
            opened = Some(t - down_at);
        }
        let down = (down_at..up_at).contains(&t);
        calls.push((t, tokio::spawn(sometimes_down(down))));
    }
    let mut last_fallback_after_up = Duration::ZERO;
    for (t, c) in calls {
        let a = c.await.unwrap().unwrap();
        if t >= up_at && a == Answer::Fallback {
            last_fallback_after_up = t - up_at;
        }
    }
    let opened = opened.expect("never opened");
    let reached = REACHED_WHILE_DOWN.load(SeqCst);
    eprintln!("oa-down: opened {opened:?} after the outage began, {reached} of 2400 calls reached it while down, all traffic back {last_fallback_after_up:?} after it ended");
    assert!(
        opened <= secs(3),
        "opened {opened:?} after the outage began"
    );
    // Those before it opened, then about one probe a second.
    assert!(
        reached <= 50 + 2 * 120,
        "{reached} calls reached the dead dependency"
    );
    assert!(
        last_fallback_after_up <= secs(10),
        "all traffic back {last_fallback_after_up:?} after the recovery"
    );
}
