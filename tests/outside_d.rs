//! `#[breaker]` and `#[bulkhead]` as DESIGN.md's contract and the attribute reference promise
//! them to a user, through the facade only: rejections counted by reason, the bulkhead's figures,
//! cancelled and panicking calls, an open breaker that takes no permit, generic functions with
//! fallbacks that borrow the arguments, the JSON and Prometheus forms of the snapshot, and the
//! paths of the contract and of earlier releases. Every test runs on a paused clock.

use std::future::pending;
use std::sync::atomic::{AtomicU32, Ordering::SeqCst};
use std::time::Duration;

use fusebox::{breaker, bulkhead, registry, Error, Rejection, State};
use tokio::time::advance;

mod common;
use common::ms;

#[derive(Debug, Clone, PartialEq)]
enum DepError {
    Down,
    Rejected(Rejection),
}

impl From<Rejection> for DepError {
    fn from(r: Rejection) -> Self {
        DepError::Rejected(r)
    }
}

fn breaker_metrics(name: &str) -> fusebox::metrics::BreakerMetrics {
    registry().breaker(name).expect("listed").metrics()
}

fn bulkhead_metrics(name: &str) -> fusebox::metrics::BulkheadMetrics {
    fusebox::metrics()
        .bulkheads
        .into_iter()
        .find(|b| b.name == name)
        .expect("listed")
}

/// 0: answers, 1: fails, 2: hangs.
#[breaker(
    name = "d-reasons",
    window_calls = 4,
    min_calls = 4,
    open_for = "10s",
    half_open_calls = 1,
    timeout = "100ms"
)]
#[bulkhead(name = "d-reasons-pool", pool = 1)]
async fn reasons(mode: u8) -> Result<u8, DepError> {
    match mode {
        0 => Ok(0),
        1 => Err(DepError::Down),
        _ => pending().await,
    }
}

#[tokio::test(start_paused = true)]
async fn every_rejection_is_counted_under_its_reason() {
    // A call holding the only slot makes the next one `Full`, counted as bulkhead_full.
    let held = tokio::spawn(reasons(2));
    tokio::task::yield_now().await;
    assert!(matches!(
        reasons(0).await,
        Err(DepError::Rejected(Rejection::Full { .. }))
    ));
    // The held call times out: a failure, counted as timed_out.
    assert!(matches!(
        held.await.unwrap(),
        Err(DepError::Rejected(Rejection::TimedOut { .. }))
    ));
    let m = breaker_metrics("d-reasons");
    assert_eq!(m.rejected_by_reason.bulkhead_full, 1, "{m:?}");
    assert_eq!(m.rejected_by_reason.timed_out, 1, "{m:?}");
    assert_eq!(m.timed_out, 1);

    // Three more failures fill the window of 4: open.
    for _ in 0..3 {
        assert_eq!(reasons(1).await, Err(DepError::Down));
    }
    assert_eq!(
        registry().breaker("d-reasons").unwrap().state(),
        State::Open
    );
    assert!(matches!(
        reasons(0).await,
        Err(DepError::Rejected(Rejection::Open {
            state: State::Open,
            ..
        }))
    ));
    assert_eq!(breaker_metrics("d-reasons").rejected_by_reason.open, 1);

    // Half-open with one trial: while it is in flight, the next call is refused as half_open.
    advance(Duration::from_secs(10)).await;
    let trial = tokio::spawn(reasons(2));
    tokio::task::yield_now().await;
    assert_eq!(
        registry().breaker("d-reasons").unwrap().state(),
        State::HalfOpen
    );
    assert!(matches!(
        reasons(0).await,
        Err(DepError::Rejected(Rejection::Open {
            state: State::HalfOpen,
            ..
        }))
    ));
    assert_eq!(breaker_metrics("d-reasons").rejected_by_reason.half_open, 1);
    // The hanging trial times out: a second timeout.
    let _ = trial.await;

    // Forced open: refused as forced_open, with that state.
    let b = registry().breaker("d-reasons").unwrap();
    b.force_open();
    assert!(matches!(
        reasons(0).await,
        Err(DepError::Rejected(Rejection::Open {
            state: State::ForcedOpen,
            ..
        }))
    ));
    let m = breaker_metrics("d-reasons");
    let r = &m.rejected_by_reason;
    assert_eq!((r.open, r.forced_open, r.half_open), (1, 1, 1), "{m:?}");
    assert_eq!((r.bulkhead_full, r.timed_out), (1, 2), "{m:?}");
    // `rejected` is this breaker's own refusals: open, forced open, half-open.
    assert_eq!((m.rejected, m.rejected_by_bulkhead), (3, 1), "{m:?}");
    // The bulkhead saw one refusal of its own and never more than one call in flight.
    let p = bulkhead_metrics("d-reasons-pool");
    assert_eq!(
        (p.pool, p.in_flight, p.peak, p.rejected),
        (1, 0, 1, 1),
        "{p:?}"
    );
}

#[breaker(
    name = "d-open-no-permit",
    window_calls = 2,
    min_calls = 2,
    open_for = "30s"
)]
#[bulkhead(name = "d-open-no-permit-pool", pool = 2)]
async fn behind_pool(fail: bool) -> Result<u8, DepError> {
    if fail {
        Err(DepError::Down)
    } else {
        Ok(1)
    }
}

#[tokio::test(start_paused = true)]
async fn an_open_breaker_takes_no_bulkhead_permit_and_a_full_pool_is_no_failure() {
    for _ in 0..2 {
        let _ = behind_pool(true).await;
    }
    let admitted = bulkhead_metrics("d-open-no-permit-pool").admitted;
    for _ in 0..5 {
        assert!(matches!(
            behind_pool(false).await,
            Err(DepError::Rejected(Rejection::Open { .. }))
        ));
    }
    let p = bulkhead_metrics("d-open-no-permit-pool");
    assert_eq!((p.admitted, p.rejected), (admitted, 0), "{p:?}");
}

#[breaker(name = "d-full-not-failure", window_calls = 2, min_calls = 2)]
#[bulkhead(name = "d-full-not-failure-pool", pool = 1)]
async fn narrow(hang: bool) -> Result<u8, DepError> {
    if hang {
        pending().await
    } else {
        Ok(1)
    }
}

#[tokio::test(start_paused = true)]
async fn bulkhead_refusals_never_open_the_breaker() {
    let held = tokio::spawn(narrow(true));
    tokio::task::yield_now().await;
    for _ in 0..10 {
        assert!(matches!(
            narrow(false).await,
            Err(DepError::Rejected(Rejection::Full { .. }))
        ));
    }
    let m = breaker_metrics("d-full-not-failure");
    assert_eq!((m.state, m.failed), (State::Closed, 0), "{m:?}");
    held.abort();
    let _ = held.await;
    // The aborted call gave its slot back and was not a failure.
    assert_eq!(narrow(false).await, Ok(1));
    let m = breaker_metrics("d-full-not-failure");
    assert_eq!((m.failed, m.cancelled), (0, 1), "{m:?}");
    assert_eq!(bulkhead_metrics("d-full-not-failure-pool").in_flight, 0);
}

#[breaker(name = "d-panics", window_calls = 2, min_calls = 2, open_for = "30s")]
#[bulkhead(name = "d-panics-pool", pool = 1)]
async fn panics(boom: bool) -> Result<u8, DepError> {
    if boom {
        panic!("the dependency's client panicked");
    }
    Ok(1)
}

#[tokio::test(start_paused = true)]
async fn a_panic_is_a_failure_and_frees_the_slot() {
    for _ in 0..2 {
        assert!(tokio::spawn(panics(true)).await.is_err());
    }
    // Panics are failures: the window of two is all failures and opens (counted apart from
    // `failed`, as the field's rustdoc says).
    let m = breaker_metrics("d-panics");
    assert_eq!(
        (m.state, m.panicked, m.failure_rate),
        (State::Open, 2, 100.0),
        "{m:?}"
    );
    assert_eq!(bulkhead_metrics("d-panics-pool").in_flight, 0);
}

static GENERIC_FALLBACKS: AtomicU32 = AtomicU32::new(0);

fn generic_offline<T: std::fmt::Display + ?Sized>(
    id: &T,
    up: &bool,
    err: Error<DepError>,
) -> Result<String, DepError> {
    GENERIC_FALLBACKS.fetch_add(1, SeqCst);
    assert!(!up);
    assert!(matches!(err, Error::Failed(DepError::Down)));
    Ok(format!("offline {id}"))
}

#[breaker(name = "d-generic-fallback", window_calls = 4, min_calls = 4, fallback = generic_offline)]
async fn describe<T: std::fmt::Display + Sync + ?Sized>(
    id: &T,
    up: bool,
) -> Result<String, DepError> {
    if up {
        Ok(format!("live {id}"))
    } else {
        Err(DepError::Down)
    }
}

#[tokio::test(start_paused = true)]
async fn a_generic_function_lends_its_arguments_to_the_fallback_in_order() {
    assert_eq!(describe(&7u32, true).await, Ok("live 7".into()));
    assert_eq!(describe("a", false).await, Ok("offline a".into()));
    assert_eq!(describe(&8u64, false).await, Ok("offline 8".into()));
    assert_eq!(GENERIC_FALLBACKS.load(SeqCst), 2);
}

struct Client {
    region: &'static str,
}

impl Client {
    #[breaker(key = self.region, max_keys = 2, window_calls = 2, min_calls = 2, fallback = Self::cached)]
    async fn quote(&self, item: &str) -> Result<String, DepError> {
        if self.region == "down" {
            Err(DepError::Down)
        } else {
            Ok(format!("{item} from {}", self.region))
        }
    }

    async fn cached(&self, item: &str, _err: Error<DepError>) -> Result<String, DepError> {
        Ok(format!("{item} cached for {}", self.region))
    }
}

#[tokio::test(start_paused = true)]
async fn a_keyed_method_past_max_keys_never_refuses_a_call() {
    for region in ["eu", "us", "ap", "sa", "down"] {
        let c = Client { region };
        for _ in 0..3 {
            let got = c.quote("tea").await.unwrap();
            if region == "down" {
                assert_eq!(got, "tea cached for down");
            } else {
                assert_eq!(got, format!("tea from {region}"));
            }
        }
    }
    let base = format!("{}::quote", module_path!());
    let names: Vec<String> = registry()
        .breakers()
        .into_iter()
        .map(|b| b.name().to_string())
        .filter(|n| n.starts_with(&format!("{base}/")))
        .collect();
    assert!(
        names.len() <= 3,
        "at most max_keys keys plus the overflow: {names:?}"
    );
}

#[cfg(feature = "serde")]
#[tokio::test(start_paused = true)]
async fn the_json_snapshot_names_every_figure_of_the_contract() {
    #[breaker(name = "d-json", window_calls = 2, min_calls = 2)]
    #[bulkhead(name = "d-json-pool", pool = 3)]
    async fn json_call() -> Result<u8, DepError> {
        Ok(1)
    }
    json_call().await.unwrap();
    let v = serde_json::to_value(fusebox::metrics()).unwrap();
    let b = v["breakers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["name"] == "d-json")
        .expect("breaker in JSON");
    // JSON carries the unit in the name, as the snapshot's rustdoc says.
    for field in [
        "state",
        "time_in_state_s",
        "calls",
        "failed",
        "slow",
        "rejected",
        "failure_rate_pct",
        "slow_rate_pct",
        "p50_s",
        "p95_s",
        "p99_s",
        "times_opened",
        "stuck",
    ] {
        assert!(b.get(field).is_some(), "{field} missing from {b}");
    }
    for reason in [
        "open",
        "forced_open",
        "half_open",
        "bulkhead_full",
        "timed_out",
    ] {
        assert!(
            b["rejected_by_reason"].get(reason).is_some(),
            "{reason} missing from {b}"
        );
    }
    assert_eq!(b["calls"], 1);
    let p = v["bulkheads"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["name"] == "d-json-pool")
        .expect("bulkhead in JSON");
    for field in ["pool", "in_flight", "peak", "rejected"] {
        assert!(p.get(field).is_some(), "{field} missing from {p}");
    }
    assert_eq!(p["pool"], 3);
}

#[tokio::test(start_paused = true)]
async fn prometheus_text_holds_the_rejection_reasons_and_the_pool() {
    #[breaker(name = "d-prom", window_calls = 2, min_calls = 2)]
    #[bulkhead(name = "d-prom-pool", pool = 4)]
    async fn prom_call() -> Result<u8, DepError> {
        Ok(1)
    }
    prom_call().await.unwrap();
    registry().breaker("d-prom").unwrap().force_open();
    let _ = prom_call().await;
    let text = fusebox::metrics().to_prometheus();
    // The two renderings agree on this test's names (other tests of the binary change theirs
    // in between, so the whole texts of two snapshots may differ).
    let ours = |t: &str| -> Vec<String> {
        t.lines()
            .filter(|l| l.contains("\"d-prom"))
            .map(str::to_owned)
            .collect()
    };
    assert!(!ours(&text).is_empty(), "no d-prom lines in\n{text}");
    assert_eq!(ours(&text), ours(&fusebox::metrics::prometheus()));
    let line = text
        .lines()
        .find(|l| l.contains("d-prom\"") && l.contains("forced_open") && l.contains("reject"))
        .unwrap_or_else(|| panic!("no forced_open rejection line for d-prom in\n{text}"));
    assert!(line.ends_with(" 1"), "{line}");
    assert!(
        text.lines()
            .any(|l| l.contains("d-prom-pool") && l.contains("pool") && l.ends_with(" 4")),
        "no pool size line for d-prom-pool in\n{text}"
    );
}

#[cfg(feature = "testing")]
#[tokio::test(start_paused = true)]
async fn a_testing_scope_lists_annotated_bulkheads_and_keeps_forced_states_inside() {
    #[breaker(name = "d-scoped", window_calls = 2, min_calls = 2)]
    #[bulkhead(name = "d-scoped-pool", pool = 2)]
    async fn scoped_call() -> Result<u8, DepError> {
        Ok(1)
    }
    {
        let _scope = fusebox::testing::scope();
        assert!(registry().bulkhead("d-scoped-pool").is_some());
        registry().breaker("d-scoped").unwrap().force_open();
        assert!(scoped_call().await.is_err());
        fusebox::testing::assert_state("d-scoped", State::ForcedOpen);
    }
    // Outside the scope the global breaker was never forced.
    assert_eq!(scoped_call().await, Ok(1));
    assert_eq!(
        registry().breaker("d-scoped").unwrap().state(),
        State::Closed
    );
}

#[test]
fn tune_answers_the_seeds_arithmetic() {
    assert_eq!(
        fusebox::tune::pool_size(20.0, Duration::from_secs(2), 1.5),
        60
    );
    let held = fusebox::tune::workers_held(400.0, ms(300));
    assert!((held - 120.0).abs() < 1e-9);
}

/// Every path DESIGN.md names, and the root paths of releases before 0.1, still compile.
#[test]
fn the_contracts_names_and_the_older_root_paths_compile() {
    use fusebox::config::{BreakerBuilder, BulkheadBuilder};
    let b: BreakerBuilder = fusebox::Breaker::builder("d-paths");
    let _: fusebox::Breaker = b.build_detached().unwrap();
    let _: BulkheadBuilder = fusebox::Bulkhead::builder("d-paths-pool");
    let _: fusebox::metrics::Metrics = fusebox::metrics();
    let _: &fusebox::registry::Registry = fusebox::registry();
    for s in [
        State::Closed,
        State::Open,
        State::HalfOpen,
        State::ForcedOpen,
        State::ForcedClosed,
    ] {
        let _ = s;
    }
    // Older root paths.
    let _: fusebox::BreakerBuilder = fusebox::Breaker::builder("d-paths-old");
    let _: Option<fusebox::BreakerMetrics> = None;
    let _: Option<fusebox::BulkheadMetrics> = None;
    let _: Option<fusebox::Metrics> = None;
    let _: Option<fusebox::Completion<u8, u8>> = None;
    let _: &fusebox::Registry = fusebox::registry();
    let _ = fusebox::export::prometheus();
    let _ = fusebox::SETTING_KEYS.len();
    let _ = fusebox::parse_duration("1s");
}

#[breaker(
    name = "d-dropped-trial",
    window_calls = 2,
    min_calls = 2,
    open_for = "5s",
    half_open_calls = 1
)]
async fn trial_call(mode: u8) -> Result<u8, DepError> {
    match mode {
        0 => Ok(0),
        1 => Err(DepError::Down),
        _ => pending().await,
    }
}

#[tokio::test(start_paused = true)]
async fn a_dropped_trial_gives_its_half_open_slot_back() {
    for _ in 0..2 {
        let _ = trial_call(1).await;
    }
    advance(Duration::from_secs(5)).await;
    // The only trial slot is taken by a call that the caller then drops.
    let trial = tokio::spawn(trial_call(2));
    tokio::task::yield_now().await;
    assert!(matches!(
        trial_call(0).await,
        Err(DepError::Rejected(Rejection::Open {
            state: State::HalfOpen,
            ..
        }))
    ));
    trial.abort();
    let _ = trial.await;
    // The slot is free again at once: the next call is the trial, passes, and closes.
    assert_eq!(trial_call(0).await, Ok(0));
    let m = breaker_metrics("d-dropped-trial");
    assert_eq!(
        (m.state, m.cancelled, m.failed),
        (State::Closed, 1, 2),
        "{m:?}"
    );
}

#[breaker(
    name = "d-alert",
    window_calls = 2,
    min_calls = 2,
    open_for = "10m",
    alert_after = "2s"
)]
async fn alerting() -> Result<u8, DepError> {
    Err(DepError::Down)
}

#[tokio::test(start_paused = true)]
async fn a_breaker_open_past_alert_after_is_stuck_and_not_before() {
    for _ in 0..2 {
        let _ = alerting().await;
    }
    assert!(!breaker_metrics("d-alert").stuck);
    advance(ms(1900)).await;
    assert!(!breaker_metrics("d-alert").stuck);
    advance(ms(200)).await;
    let m = breaker_metrics("d-alert");
    assert!(m.stuck && m.state == State::Open, "{m:?}");
    assert!(fusebox::metrics::stuck_breakers()
        .iter()
        .any(|b| b.name == "d-alert"));
}

#[breaker(name = "d-evict", key = tenant, window_calls = 2, min_calls = 2)]
async fn per_tenant(tenant: &str) -> Result<u8, DepError> {
    let _ = tenant;
    Ok(1)
}

#[tokio::test(start_paused = true)]
async fn an_evicted_key_comes_back_as_a_fresh_listed_breaker() {
    assert_eq!(per_tenant("a").await, Ok(1));
    assert_eq!(per_tenant("b").await, Ok(1));
    registry()
        .breaker("d-evict/a")
        .expect("listed once used")
        .force_open();
    assert!(per_tenant("a").await.is_err());

    // One key evicted: its next call makes a fresh breaker, listed again, not forced.
    assert!(registry().evict("d-evict/a"));
    assert!(registry().breaker("d-evict/a").is_none());
    assert_eq!(per_tenant("a").await, Ok(1));
    let again = registry().breaker("d-evict/a").expect("listed again");
    assert_eq!((again.state(), again.metrics().calls), (State::Closed, 1));

    // Every key evicted at once.
    assert_eq!(registry().evict_keys("d-evict"), 2);
    assert!(registry().breaker("d-evict/b").is_none());
    assert_eq!(per_tenant("b").await, Ok(1));
    assert_eq!(registry().breaker("d-evict/b").unwrap().metrics().calls, 1);
}

static SHARE_FALLBACKS: AtomicU32 = AtomicU32::new(0);

fn share_fallback(_: Error<DepError>) -> Result<u8, DepError> {
    SHARE_FALLBACKS.fetch_add(1, SeqCst);
    Ok(9)
}

#[breaker(name = "d-share", window_calls = 2, min_calls = 2, open_for = "5s", fallback = share_fallback)]
async fn shared(fail: bool) -> Result<u8, DepError> {
    if fail {
        Err(DepError::Down)
    } else {
        Ok(1)
    }
}

#[tokio::test(start_paused = true)]
async fn half_open_admits_about_five_percent_and_answers_the_rest_with_the_fallback() {
    for _ in 0..2 {
        assert_eq!(shared(true).await, Ok(9));
    }
    advance(Duration::from_secs(5)).await;
    SHARE_FALLBACKS.store(0, SeqCst);
    let mut live = 0;
    for _ in 0..400 {
        if shared(false).await == Ok(1) {
            live += 1;
        }
        advance(ms(10)).await;
    }
    // 4 s of half-open (under its 30 s window): about 5 % of 400 calls go through.
    assert_eq!(
        registry().breaker("d-share").unwrap().state(),
        State::HalfOpen
    );
    assert!((10..=30).contains(&live), "{live} of 400 admitted");
    assert_eq!(SHARE_FALLBACKS.load(SeqCst), 400 - live);
    assert_eq!(
        breaker_metrics("d-share").rejected_by_reason.half_open,
        400 - live as u64
    );
}

#[cfg(feature = "testing")]
#[tokio::test(start_paused = true)]
async fn the_recorder_sees_open_half_open_and_closed_in_order() {
    #[breaker(
        name = "d-recorded",
        window_calls = 2,
        min_calls = 2,
        open_for = "5s",
        half_open_calls = 1
    )]
    async fn recorded(fail: bool) -> Result<u8, DepError> {
        if fail {
            Err(DepError::Down)
        } else {
            Ok(1)
        }
    }
    let scope = fusebox::testing::scope();
    let mut rec = scope.recorder();
    for _ in 0..2 {
        let _ = recorded(true).await;
    }
    advance(Duration::from_secs(5)).await;
    assert_eq!(recorded(false).await, Ok(1));
    assert_eq!(
        rec.states_of("d-recorded"),
        vec![State::Closed, State::Open, State::HalfOpen, State::Closed]
    );
    fusebox::testing::assert_calls("d-recorded", 1, 2, 0);
}

mod clients {
    use super::DepError;
    use fusebox::breaker;

    pub struct Payments;
    pub struct Addresses;

    impl Payments {
        #[breaker(window_calls = 2, min_calls = 2)]
        pub async fn get(&self) -> Result<u8, DepError> {
            Err(DepError::Down)
        }
    }

    impl Addresses {
        #[breaker(window_calls = 2, min_calls = 2)]
        pub async fn get(&self) -> Result<u8, DepError> {
            Ok(1)
        }
    }
}

/// The default name leaves out a method's type (the attribute cannot see it), so two types'
/// `get` in one module share `outside_d::clients::get`. Nobody chose that: it is told at
/// ERROR and counted as a conflict from the start, before any call.
#[tokio::test(start_paused = true)]
async fn two_methods_sharing_a_default_name_are_a_counted_conflict() {
    let shared = registry()
        .breaker("outside_d::clients::get")
        .expect("listed");
    assert_eq!(shared.metrics().conflicts, 1);
    let _ = (clients::Payments, clients::Addresses);
}
