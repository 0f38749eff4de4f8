//! The clauses beside the main scenarios of issues 2, 3, 4, 8, 13 to 18 and DESIGN.md's
//! semantics, as a user reads them, through the facade only: every `trip_pNN`, the slow bound
//! itself, the log lines of transitions, half-open judged by the general slow rule, one breaker
//! for an attribute and a layer of the same name, and what is listed before the first call.
//! Every test runs on a paused clock.
#![cfg(all(feature = "testing", feature = "tower"))]

use std::sync::atomic::{AtomicU32, Ordering::SeqCst};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use fusebox::tower::BreakerLayer;
use fusebox::{breaker, bulkhead, registry, Breaker, Error, Rejection, State};
use tokio::time::{advance, sleep};
use tower::{Layer, ServiceExt};

mod common;
use common::{ms, secs, DepError};

/// A call through `b` that answers `ok` after `takes` of virtual time.
async fn call_for(b: &Breaker, takes: Duration, ok: bool) -> Result<(), Error<DepError>> {
    b.call(async move {
        if !takes.is_zero() {
            sleep(takes).await;
        }
        ok.then_some(()).ok_or(DepError::Down)
    })
    .await
}

// --- Issue 2 and DESIGN's table: `trip_pNN` is the slow rule with rate 100 - NN ------------

#[breaker(
    name = "ok-p99",
    window_calls = 100,
    min_calls = 100,
    trip_p99 = "100ms"
)]
async fn p99_call(takes: Duration) -> Result<(), DepError> {
    sleep(takes).await;
    Ok(())
}

#[breaker(name = "ok-p50", window_calls = 10, min_calls = 10, trip_p50 = "100ms")]
async fn p50_call(takes: Duration) -> Result<(), DepError> {
    sleep(takes).await;
    Ok(())
}

/// `trip_p99 = "100ms"` opens when more than 1 % of the window is slower than 100 ms: one
/// slow call of 100 is exactly 1 % (the p99 is not above the bound), two are 2 %.
#[tokio::test(start_paused = true)]
async fn trip_p99_opens_on_more_than_one_percent_slow() {
    for _ in 0..99 {
        p99_call(ms(1)).await.unwrap();
    }
    p99_call(ms(150)).await.unwrap();
    let b = registry().breaker("ok-p99").unwrap();
    assert_eq!(b.state(), State::Closed, "1 slow of 100: the p99 is 1 ms");
    p99_call(ms(150)).await.unwrap();
    assert_eq!(b.state(), State::Open, "2 slow of 100: the p99 is 150 ms");
    assert_eq!(b.metrics().slow, 2);
}

/// `trip_p50 = "100ms"` opens when more than half the window is slower than 100 ms.
#[tokio::test(start_paused = true)]
async fn trip_p50_opens_on_more_than_half_slow() {
    for _ in 0..5 {
        p50_call(ms(1)).await.unwrap();
    }
    for _ in 0..5 {
        p50_call(ms(150)).await.unwrap();
    }
    let b = registry().breaker("ok-p50").unwrap();
    assert_eq!(
        b.state(),
        State::Closed,
        "5 slow of 10: the median is not above"
    );
    p50_call(ms(150)).await.unwrap();
    assert_eq!(b.state(), State::Open, "6 slow of the last 10");
}

/// The builder's `trip_p90` is the same rule with rate 10.
#[tokio::test(start_paused = true)]
async fn trip_p90_opens_on_more_than_ten_percent_slow() {
    let b = Breaker::builder("ok-p90")
        .window_calls(10)
        .min_calls(10)
        .trip_p90(ms(100))
        .build()
        .unwrap();
    for _ in 0..9 {
        call_for(&b, ms(1), true).await.unwrap();
    }
    call_for(&b, ms(150), true).await.unwrap();
    assert_eq!(b.state(), State::Closed, "1 slow of 10 is 10 %, not more");
    call_for(&b, ms(150), true).await.unwrap();
    assert_eq!(b.state(), State::Open);
}

// --- Issue 2: loud transitions ---------------------------------------------------------------

/// Every event of the process: (level, every field as `name=value`, joined).
#[derive(Clone, Default)]
struct Log(Arc<Mutex<Vec<(tracing::Level, String)>>>);

struct Fields(String);

impl tracing::field::Visit for Fields {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        self.0.push_str(&format!("{}={:?} ", field.name(), value));
    }
}

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Log {
    fn on_event(&self, event: &tracing::Event<'_>, _: tracing_subscriber::layer::Context<'_, S>) {
        let mut f = Fields(String::new());
        event.record(&mut f);
        self.0
            .lock()
            .unwrap()
            .push((*event.metadata().level(), f.0));
    }
}

/// The process-wide log, installed once (tests run on parallel threads).
fn log() -> Log {
    use tracing_subscriber::layer::SubscriberExt;
    static LOG: OnceLock<Log> = OnceLock::new();
    LOG.get_or_init(|| {
        let log = Log::default();
        tracing::subscriber::set_global_default(tracing_subscriber::registry().with(log.clone()))
            .expect("the only subscriber of this test binary");
        log
    })
    .clone()
}

impl Log {
    /// The events at `level` whose fields name breaker `name` and contain `needle`.
    fn lines(&self, level: tracing::Level, name: &str, needle: &str) -> Vec<String> {
        let me = format!("breaker={name} ");
        self.0
            .lock()
            .unwrap()
            .iter()
            .filter(|(l, f)| *l == level && f.contains(&me) && f.contains(needle))
            .map(|(_, f)| f.clone())
            .collect()
    }
}

/// WARN on open with the reason and the rates, INFO on close, each once.
#[tokio::test(start_paused = true)]
async fn opening_warns_with_the_reason_and_the_rates_and_closing_informs() {
    let log = log();
    let b = Breaker::builder("ok-loud")
        .window_calls(4)
        .min_calls(4)
        .open_for(secs(5))
        .half_open_calls(1)
        .build()
        .unwrap();
    for ok in [true, true, false, false] {
        let _ = call_for(&b, ms(1), ok).await;
    }
    assert_eq!(b.state(), State::Open);
    let warns = log.lines(tracing::Level::WARN, "ok-loud", "opened");
    assert_eq!(warns.len(), 1, "one WARN for one opening: {warns:?}");
    assert!(
        warns[0].contains("50.0%") && warns[0].contains("failure rate"),
        "the WARN tells why and at what rate: {}",
        warns[0]
    );
    advance(secs(5)).await;
    call_for(&b, ms(1), true).await.unwrap();
    assert_eq!(b.state(), State::Closed);
    let closed = "message=circuit breaker closed";
    let infos = log.lines(tracing::Level::INFO, "ok-loud", closed);
    assert_eq!(infos.len(), 1, "one INFO for one closing: {infos:?}");
    assert!(log
        .lines(tracing::Level::WARN, "ok-loud", closed)
        .is_empty());
}

// --- Issue 15: half-open judged by the general slow rule (`slow`, `slow_rate`) ---------------

/// The card's 2 s provider behind `slow = "500ms", slow_rate = 20` instead of `trip_p95`:
/// every answer is correct and under the 3 s timeout, but slow; half-open must not close on
/// it, and once the provider answers fast again the breaker closes.
#[tokio::test(start_paused = true)]
async fn half_open_judges_trials_by_the_general_slow_rule_too() {
    let b = Breaker::builder("ok-slow-rule")
        .window_calls(10)
        .min_calls(10)
        .slow(ms(500), 20)
        .timeout(secs(3))
        .open_for(secs(20))
        .half_open_pct(50)
        .half_open_window(secs(10))
        .build()
        .unwrap();
    let latency = Arc::new(std::sync::atomic::AtomicU64::new(2000));
    let traffic = {
        let b = b.clone();
        let latency = latency.clone();
        tokio::spawn(async move {
            loop {
                let b = b.clone();
                let l = ms(latency.load(SeqCst));
                tokio::spawn(async move { call_for(&b, l, true).await });
                sleep(ms(100)).await;
            }
        })
    };
    let start = tokio::time::Instant::now();
    while b.state() != State::Open {
        advance(ms(100)).await;
        assert!(start.elapsed() < secs(10), "the slow provider opens it");
    }
    let mut seen = Vec::new();
    for _ in 0..120 {
        advance(ms(500)).await;
        seen.push(b.state());
    }
    assert!(seen.contains(&State::HalfOpen), "half-open was tried");
    assert!(
        !seen.contains(&State::Closed),
        "60 s of 2 s answers never closed it: {seen:?}"
    );
    // It heals as the breaker opens again, so no trial of the slow provider is in the
    // window that judges it.
    while b.state() != State::Open {
        advance(ms(100)).await;
    }
    latency.store(10, SeqCst);
    let healed = tokio::time::Instant::now();
    while b.state() != State::Closed {
        advance(ms(100)).await;
        assert!(
            healed.elapsed() <= secs(20 + 10 + 1),
            "closed within one open period plus one half-open window of the healing"
        );
    }
    // It stays closed on the healthy provider.
    advance(secs(30)).await;
    traffic.abort();
    assert_eq!(b.state(), State::Closed);
}

// --- Issue 16: an attribute and a layer of one name are one breaker --------------------------

#[breaker(name = "ok-shared", window_calls = 4, min_calls = 4)]
async fn shared_call(ok: bool) -> Result<(), DepError> {
    ok.then_some(()).ok_or(DepError::Down)
}

/// "The same name used from an attribute and a layer is the same breaker": a layer built from
/// the attribute's settings is the attribute's breaker, with no conflict counted, and when
/// the attribute's calls open it, the layer refuses without calling its service.
#[tokio::test(start_paused = true)]
async fn an_attribute_and_a_layer_of_one_name_are_one_breaker() {
    let layer = BreakerLayer::new(Breaker::builder("ok-shared").window_calls(4).min_calls(4))
        .expect("the attribute's settings");
    let listed = registry().breaker("ok-shared").unwrap();
    assert!(layer.breaker().ptr_eq(&listed));
    assert_eq!(
        listed.metrics().conflicts,
        0,
        "the same settings: no conflict"
    );
    let reached = Arc::new(AtomicU32::new(0));
    let svc = {
        let reached = reached.clone();
        layer.layer(tower::service_fn(move |_: ()| {
            reached.fetch_add(1, SeqCst);
            async { Ok::<_, DepError>(()) }
        }))
    };
    svc.clone().oneshot(()).await.unwrap();
    for _ in 0..3 {
        let _ = shared_call(false).await;
    }
    assert_eq!(listed.metrics().calls, 4, "one window for both");
    assert_eq!(listed.state(), State::Open, "3 failures of 4");
    let err = svc.oneshot(()).await.unwrap_err();
    assert!(
        matches!(err, Error::Rejected(Rejection::Open { .. })),
        "the layer refuses: {err:?}"
    );
    assert_eq!(reached.load(SeqCst), 1, "the refused call never reached it");
}

// --- Issue 15: listed before the first call --------------------------------------------------

struct Inventory;

impl Inventory {
    #[breaker(name = "ok-method", window_calls = 4)]
    async fn stock(&self, _item: u32) -> Result<u32, DepError> {
        Ok(3)
    }
}

#[bulkhead(
    name = "ok-adaptive-alone",
    limit = "adaptive",
    min_pool = 2,
    max_pool = 40
)]
async fn adaptive_alone() -> Result<(), DepError> {
    Ok(())
}

/// A method's breaker and a bulkhead given only `limit = "adaptive"` are listed, and in the
/// snapshot and the scrape, before any call.
#[tokio::test(start_paused = true)]
async fn a_methods_breaker_and_an_adaptive_bulkhead_are_listed_before_any_call() {
    let b = registry()
        .breaker("ok-method")
        .expect("listed before a call");
    assert_eq!(b.metrics().calls, 0);
    let pool = registry()
        .bulkhead("ok-adaptive-alone")
        .expect("listed before a call");
    assert_eq!(pool.in_flight(), 0);
    let m = fusebox::metrics();
    assert!(m.breaker("ok-method").is_some());
    let limit = m
        .bulkhead("ok-adaptive-alone")
        .expect("in the snapshot")
        .pool;
    assert!(
        (2..=40).contains(&limit),
        "the adaptive limit starts within its bounds: {limit}"
    );
    let text = m.to_prometheus();
    assert!(text.contains(r#"breaker="ok-method""#));
    assert!(text.contains(r#"bulkhead="ok-adaptive-alone""#));
    // The same ones the calls then use.
    Inventory.stock(1).await.unwrap();
    adaptive_alone().await.unwrap();
    assert_eq!(b.metrics().calls, 1);
    assert_eq!(pool.metrics().admitted, 1);
}

// --- Issue 3: a function that returns no `Result` ---------------------------------------------

static BANNER_FALLBACKS: AtomicU32 = AtomicU32::new(0);

fn plain_banner(_: Error<std::convert::Infallible>) -> String {
    BANNER_FALLBACKS.fetch_add(1, SeqCst);
    "default".into()
}

#[breaker(
    name = "ok-no-result",
    timeout = "100ms",
    window_calls = 2,
    min_calls = 2,
    failure_rate = 100,
    fallback = plain_banner
)]
async fn banner(takes: Duration) -> String {
    sleep(takes).await;
    "live".into()
}

/// "A function whose return type is not a `Result` is accepted only with a fallback
/// (timeouts and panics are then its failures)": two timeouts open it; the fallback answers
/// each of them and the refusals after.
#[tokio::test(start_paused = true)]
async fn a_functions_timeouts_are_its_failures_when_it_returns_no_result() {
    assert_eq!(banner(ms(1)).await, "live");
    assert_eq!(banner(secs(1)).await, "default");
    assert_eq!(banner(secs(1)).await, "default");
    let b = registry().breaker("ok-no-result").unwrap();
    assert_eq!(b.metrics().timed_out, 2);
    assert_eq!(b.state(), State::Open, "2 timeouts of the last 2");
    assert_eq!(banner(ms(1)).await, "default", "refused: the fallback");
    assert_eq!(BANNER_FALLBACKS.load(SeqCst), 3);
}

// --- Issue 3: breaker admission, then bulkhead permit, then timeout, then the call ------------

#[breaker(name = "ok-order-bf", timeout = "100ms")]
#[bulkhead(name = "ok-order-bf-pool", pool = 1, max_wait = "1s")]
async fn breaker_first(takes: Duration) -> Result<(), DepError> {
    sleep(takes).await;
    Ok(())
}

#[bulkhead(name = "ok-order-hf-pool", pool = 1, max_wait = "1s")]
#[breaker(name = "ok-order-hf", timeout = "100ms")]
async fn bulkhead_first(takes: Duration) -> Result<(), DepError> {
    sleep(takes).await;
    Ok(())
}

/// The timeout starts after the bulkhead permit, whichever attribute is written first: calls
/// of 80 ms queued behind a pool of one wait up to 160 ms for their slot and none times out
/// under a 100 ms timeout.
#[tokio::test(start_paused = true)]
async fn the_timeout_starts_once_the_permit_is_held_in_either_order() {
    let queued: Vec<_> = (0..3)
        .map(|_| tokio::spawn(breaker_first(ms(80))))
        .chain((0..3).map(|_| tokio::spawn(bulkhead_first(ms(80)))))
        .collect();
    for call in queued {
        assert_eq!(call.await.unwrap(), Ok(()), "waited for a slot, then ran");
    }
    for name in ["ok-order-bf", "ok-order-hf"] {
        let m = registry().breaker(name).unwrap().metrics();
        assert_eq!((m.succeeded, m.timed_out), (3, 0), "{name}");
    }
    for pool in ["ok-order-bf-pool", "ok-order-hf-pool"] {
        let m = registry().bulkhead(pool).unwrap().metrics();
        assert_eq!((m.admitted, m.rejected, m.peak), (3, 0, 1), "{pool}");
    }
}

// --- Issue 8 and DESIGN's `stale_for`: a full bulkhead is a rejection too ---------------------

static PRICE_CALLS: AtomicU32 = AtomicU32::new(0);

#[breaker(name = "ok-stale-full", stale_for = "10m", stale_key = item)]
#[bulkhead(name = "ok-stale-full-pool", pool = 1)]
async fn price(item: u32, gate: Option<Arc<tokio::sync::Notify>>) -> Result<String, DepError> {
    PRICE_CALLS.fetch_add(1, SeqCst);
    if let Some(gate) = gate {
        gate.notified().await;
    }
    Ok(format!("price of {item}: {}", PRICE_CALLS.load(SeqCst)))
}

/// "While rejected or failing, answer with the last `Ok` value for the same arguments": a
/// call refused by the full bulkhead gets its item's last good price; an item never priced
/// gets the refusal.
#[tokio::test(start_paused = true)]
async fn a_call_refused_by_a_full_bulkhead_gets_the_last_good_value() {
    let fresh = price(7, None).await.unwrap();
    let gate = Arc::new(tokio::sync::Notify::new());
    let holder = tokio::spawn(price(8, Some(gate.clone())));
    tokio::task::yield_now().await;
    advance(secs(60)).await;
    assert_eq!(
        price(7, None).await,
        Ok(fresh),
        "stale, while the pool is full"
    );
    assert!(
        matches!(
            price(9, None).await,
            Err(DepError::Unavailable(Rejection::Full { .. }))
        ),
        "nothing saved for item 9"
    );
    gate.notify_one();
    holder.await.unwrap().unwrap();
    let m = registry().breaker("ok-stale-full").unwrap().metrics();
    assert_eq!(m.stale_served, 1);
    assert_eq!(PRICE_CALLS.load(SeqCst), 2, "the refused calls never ran");
}

// --- Issue 18 and DESIGN's `max_keys`: the documented default bound ---------------------------

#[breaker(name = "ok-default-cap", key = host)]
async fn fetch_host(host: u32) -> Result<(), DepError> {
    let _ = host;
    Ok(())
}

/// A keyed breaker given no `max_keys` is bounded by the default (1 000): 3 000 distinct keys
/// all go through, on at most 1 001 breakers of that name.
#[tokio::test(start_paused = true)]
async fn a_keyed_breaker_without_max_keys_is_bounded_by_the_default() {
    for host in 0..3000 {
        fetch_host(host).await.expect("never refused for the cap");
    }
    let family = registry()
        .breakers()
        .iter()
        .filter(|b| b.name().starts_with("ok-default-cap/"))
        .count();
    assert!(family <= 1001, "{family} breakers for one keyed name");
}

// --- Issue 8: the recorder sees every transition ------------------------------------------------

/// "A recorder of transitions to assert the exact sequence": a breaker that flaps through many
/// cycles before the test reads the recorder (a long outage simulated in one step, an operator
/// toggling it) still reads back every transition, in order.
#[tokio::test(start_paused = true)]
async fn the_recorder_keeps_every_transition_of_a_long_flapping_run() {
    let scope = fusebox::testing::scope();
    let mut recorder = scope.recorder();
    let b = Breaker::builder("ok-flapping").build().unwrap();
    for _ in 0..1500 {
        b.force_open();
        advance(ms(10)).await;
        b.force_close();
    }
    let states = recorder.states_of("ok-flapping");
    assert_eq!(states.len(), 3001, "every one of the 3 000 transitions");
    assert_eq!(
        states[..3],
        [State::Closed, State::ForcedOpen, State::ForcedClosed]
    );
    let timeline = recorder.timeline_of("ok-flapping");
    assert_eq!(timeline[0], (State::ForcedOpen, Duration::ZERO));
    assert_eq!(timeline[2998], (State::ForcedOpen, ms(10 * 1499)));
}

// --- Issue 2 and DESIGN's table: a `half_open_timeout` shorter than `timeout` ----------------

#[breaker(
    name = "ok-short-trials",
    timeout = "3s",
    half_open_timeout = "200ms",
    window_calls = 2,
    min_calls = 2,
    open_for = "10s",
    half_open_calls = 1
)]
async fn short_trials(takes: Duration, ok: bool) -> Result<(), DepError> {
    sleep(takes).await;
    ok.then_some(()).ok_or(DepError::Down)
}

/// "Shorter to waste less": a trial is cut at `half_open_timeout` even though the call's own
/// `timeout` is longer, counts as failed and reopens the breaker; a quick trial closes it,
/// and closed calls run under `timeout` again.
#[tokio::test(start_paused = true)]
async fn a_half_open_timeout_shorter_than_timeout_cuts_trials_only() {
    for _ in 0..2 {
        let _ = short_trials(ms(1), false).await;
    }
    let b = registry().breaker("ok-short-trials").unwrap();
    assert_eq!(b.state(), State::Open);
    advance(secs(10)).await;
    let start = tokio::time::Instant::now();
    assert!(matches!(
        short_trials(secs(1), true).await,
        Err(DepError::Unavailable(Rejection::TimedOut { .. }))
    ));
    assert_eq!(start.elapsed(), ms(200), "cut at the trial timeout");
    assert_eq!(b.state(), State::Open, "a timed-out trial failed");
    advance(secs(10)).await;
    short_trials(ms(100), true).await.unwrap();
    assert_eq!(b.state(), State::Closed);
    short_trials(secs(1), true)
        .await
        .expect("closed: a 1 s call is within the 3 s timeout");
    assert_eq!(b.metrics().timed_out, 1);
}

// --- Issue 2: half-open's share judged against the failure threshold, at its boundary ---------

/// "Judges the trial calls' success rate against the failure threshold: close, or open
/// again", as the closed state judges: a failure rate at the threshold reopens, below it closes.
#[tokio::test(start_paused = true)]
async fn half_open_reopens_at_the_failure_threshold_and_closes_below_it() {
    let b = Breaker::builder("ok-share-edge")
        .window_calls(2)
        .min_calls(2)
        .failure_rate(50)
        .open_for(secs(5))
        .half_open_pct(100)
        .half_open_window(secs(10))
        .build()
        .unwrap();
    for _ in 0..2 {
        let _ = call_for(&b, ms(1), false).await;
    }
    assert_eq!(b.state(), State::Open);
    advance(secs(5)).await;
    // 1 failed of 2 trials: 50 %, at the threshold.
    call_for(&b, ms(1), true).await.unwrap();
    let _ = call_for(&b, ms(1), false).await;
    advance(secs(10)).await;
    let _ = call_for(&b, ms(1), true).await;
    assert_eq!(b.state(), State::Open, "50 % of the trials failed");
    advance(secs(5)).await;
    // 1 failed of 3 trials: 33 %, below.
    call_for(&b, ms(1), true).await.unwrap();
    call_for(&b, ms(1), true).await.unwrap();
    let _ = call_for(&b, ms(1), false).await;
    advance(secs(10)).await;
    call_for(&b, ms(1), true).await.unwrap();
    assert_eq!(b.state(), State::Closed, "33 % is below the threshold");
}

// --- Issue 16: keyed, and bulkheads: one name from an attribute and a layer -------------------

#[breaker(name = "ok-shared-keyed", key = region, window_calls = 2, min_calls = 2)]
#[bulkhead(name = "ok-shared-pool", pool = 2)]
async fn regional_call(region: &str, ok: bool) -> Result<(), DepError> {
    let _ = region;
    ok.then_some(()).ok_or(DepError::Down)
}

/// A keyed layer from the attribute's settings reaches the attribute's breaker of each key (a
/// key the attribute opened is open for the layer, with no conflict counted), and a bulkhead
/// layer of the attribute's pool name shares its slots.
#[tokio::test(start_paused = true)]
async fn a_keyed_layer_and_a_bulkhead_layer_share_the_attributes_breakers_and_pool() {
    for _ in 0..2 {
        let _ = regional_call("eu", false).await;
    }
    let eu = registry().breaker("ok-shared-keyed/eu").unwrap();
    assert_eq!(eu.state(), State::Open);
    let layer = BreakerLayer::keyed(
        Breaker::builder("ok-shared-keyed")
            .window_calls(2)
            .min_calls(2),
        |region: &&'static str| Some(region.to_string()),
    )
    .expect("the attribute's settings");
    let svc = layer.layer(tower::service_fn(|_: &'static str| async {
        Ok::<_, DepError>(())
    }));
    let refused = svc.clone().oneshot("eu").await.unwrap_err();
    assert!(
        matches!(refused, Error::Rejected(Rejection::Open { .. })),
        "the attribute opened eu: {refused:?}"
    );
    svc.clone().oneshot("us").await.unwrap();
    let us = registry().breaker("ok-shared-keyed/us").unwrap();
    assert_eq!(us.metrics().calls, 1);
    regional_call("us", true).await.unwrap();
    assert_eq!(
        us.metrics().calls,
        2,
        "the attribute's call reached the layer's key"
    );
    assert_eq!((eu.metrics().conflicts, us.metrics().conflicts), (0, 0));

    let pool =
        fusebox::tower::BulkheadLayer::new(fusebox::Bulkhead::builder("ok-shared-pool").pool(2))
            .expect("the attribute's settings");
    let listed = registry().bulkhead("ok-shared-pool").unwrap();
    assert!(pool.bulkhead().ptr_eq(&listed));
    assert_eq!(listed.metrics().conflicts, 0);
}
