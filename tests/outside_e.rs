//! The earlier rounds' issues 2, 4, 7, 8, 15 and 18 as a user reads them (the issue's text,
//! DESIGN.md, the README, the guides and the rustdoc), through the facade only: the state
//! machine and its policies, bulkheads, the registry and the snapshot, the exports and the admin
//! router, behaviour under cancellation, panics and bad input, test scopes and stale values,
//! half-open judged by latency, fallbacks that see the call, and the hardening of keys, stale
//! values, abandoned trials and forced states. Paused clock unless a test says otherwise.
#![cfg(all(feature = "testing", feature = "admin", feature = "serde"))]

use std::future::pending;
use std::sync::atomic::{AtomicU32, Ordering::SeqCst};
use std::sync::Arc;
use std::time::Duration;

use fusebox::events::Reason;
use fusebox::{breaker, bulkhead, registry, Breaker, Bulkhead, Error, Rejection, State};
use tokio::sync::Notify;
use tokio::time::advance;

mod common;
use common::{ms, secs};

/// A client's error as a service writes one.
#[derive(Debug, Clone, PartialEq)]
enum DepError {
    Down,
    Refused(Rejection),
}

impl From<Rejection> for DepError {
    fn from(r: Rejection) -> Self {
        DepError::Refused(r)
    }
}

/// A call through `b` that answers `ok` after `takes` of virtual time.
async fn call_for(b: &Breaker, takes: Duration, ok: bool) -> Result<(), Error<DepError>> {
    b.call(async move {
        if !takes.is_zero() {
            tokio::time::sleep(takes).await;
        }
        ok.then_some(()).ok_or(DepError::Down)
    })
    .await
}

/// Whether a call through `b` reached the dependency (it is made to succeed).
async fn admitted(b: &Breaker) -> bool {
    let ran = AtomicU32::new(0);
    let _ = b
        .call(async {
            ran.fetch_add(1, SeqCst);
            Ok::<(), DepError>(())
        })
        .await;
    ran.load(SeqCst) == 1
}

// --- Issue 2: the state machine -----------------------------------------------------------

#[tokio::test(start_paused = true)]
async fn five_failures_of_the_last_ten_at_fifty_percent_open_and_four_do_not() {
    let b = Breaker::builder("oe-rate")
        .window_calls(10)
        .min_calls(10)
        .failure_rate(50)
        .build()
        .unwrap();
    for ok in [
        true, true, true, true, true, true, false, false, false, false,
    ] {
        let _ = call_for(&b, Duration::ZERO, ok).await;
    }
    assert_eq!(b.state(), State::Closed, "4 of 10 is under 50 %");
    // The oldest success slides out: 5 of the last 10 failed.
    let _ = call_for(&b, Duration::ZERO, false).await;
    assert_eq!(b.state(), State::Open, "5 of the last 10 at 50 % opens");
    let m = b.metrics();
    assert_eq!((m.times_opened, m.failed, m.succeeded), (1, 5, 6));
}

#[tokio::test(start_paused = true)]
async fn min_calls_holds_any_judgement_until_the_window_has_that_many_calls() {
    let b = Breaker::builder("oe-min-calls")
        .window_calls(20)
        .min_calls(5)
        .build()
        .unwrap();
    for _ in 0..4 {
        let _ = call_for(&b, Duration::ZERO, false).await;
    }
    assert_eq!(
        b.state(),
        State::Closed,
        "4 calls, all failed, under min_calls"
    );
    let _ = call_for(&b, Duration::ZERO, false).await;
    assert_eq!(b.state(), State::Open);
}

#[tokio::test(start_paused = true)]
async fn trip_p95_opens_on_more_than_five_percent_slow_not_on_exactly_five() {
    let b = Breaker::builder("oe-p95")
        .window_calls(20)
        .min_calls(20)
        .trip_p95(ms(100))
        .build()
        .unwrap();
    for _ in 0..19 {
        call_for(&b, ms(1), true).await.unwrap();
    }
    call_for(&b, ms(200), true).await.unwrap();
    assert_eq!(
        b.state(),
        State::Closed,
        "1 slow call of 20 is 5 %: the p95 is not above the bound"
    );
    call_for(&b, ms(200), true).await.unwrap();
    assert_eq!(b.state(), State::Open, "2 of the last 20 slow: 10 % > 5 %");
    assert_eq!(b.metrics().slow, 2, "each slow call counted once");
}

#[tokio::test(start_paused = true)]
async fn calls_hanging_past_the_slow_bound_open_the_breaker_before_they_end() {
    let b = Breaker::builder("oe-hung")
        .window_calls(10)
        .min_calls(10)
        .trip_p95(ms(100))
        .build()
        .unwrap();
    let hung: Vec<_> = (0..10)
        .map(|_| {
            let b = b.clone();
            tokio::spawn(async move { b.call(pending::<Result<(), DepError>>()).await })
        })
        .collect();
    tokio::task::yield_now().await;
    advance(ms(90)).await;
    assert_eq!(
        b.state(),
        State::Closed,
        "under the bound, nothing is slow yet"
    );
    tokio::time::sleep(ms(20)).await;
    assert_eq!(
        b.state(),
        State::Open,
        "10 calls past the bound, none ended"
    );
    assert!(!admitted(&b).await);
    for h in &hung {
        h.abort();
    }
    for h in hung {
        let _ = h.await;
    }
    let m = b.metrics();
    assert_eq!((m.slow, m.cancelled, m.failed), (10, 10, 0), "{m:?}");
}

#[tokio::test(start_paused = true)]
async fn open_periods_grow_by_the_backoff_and_stop_at_the_cap() {
    let b = Breaker::builder("oe-backoff")
        .window_calls(2)
        .min_calls(2)
        .open_for(secs(1))
        .backoff(2.0, secs(3))
        .half_open_calls(1)
        .build()
        .unwrap();
    for _ in 0..2 {
        let _ = call_for(&b, Duration::ZERO, false).await;
    }
    for period in [1000, 2000, 3000, 3000, 3000] {
        assert_eq!(b.state(), State::Open);
        advance(ms(period - 1)).await;
        assert!(!admitted(&b).await, "still open 1 ms before {period} ms");
        advance(ms(1)).await;
        // The one trial fails: open again, for the next period.
        let ran = AtomicU32::new(0);
        let _ = b
            .call(async {
                ran.fetch_add(1, SeqCst);
                Err::<(), _>(DepError::Down)
            })
            .await;
        assert_eq!(ran.load(SeqCst), 1, "the trial after {period} ms ran");
    }
    assert_eq!(b.metrics().times_opened, 6);
}

#[tokio::test(start_paused = true)]
async fn half_open_admits_its_share_evenly_and_the_first_call_first() {
    let b = Breaker::builder("oe-share")
        .window_calls(2)
        .min_calls(2)
        .open_for(secs(1))
        .half_open_pct(25)
        .half_open_window(secs(10))
        .build()
        .unwrap();
    for _ in 0..2 {
        let _ = call_for(&b, Duration::ZERO, false).await;
    }
    advance(secs(1)).await;
    let mut seen = Vec::new();
    for _ in 0..100 {
        seen.push(admitted(&b).await);
    }
    assert!(seen[0], "the first call in half-open is a trial");
    assert_eq!(seen.iter().filter(|a| **a).count(), 25, "{seen:?}");
    assert!(
        seen.windows(2).all(|w| !(w[0] && w[1])),
        "spread, not a burst: {seen:?}"
    );
    assert_eq!(
        b.state(),
        State::HalfOpen,
        "judged after the window, not before"
    );
    advance(secs(10)).await;
    assert!(admitted(&b).await);
    assert_eq!(b.state(), State::Closed, "25 trials, all fine");
}

/// `n` callers of a half-open breaker at once: `b` is tripped (its window of 2 failed calls
/// opens it for 100 ms), then every task calls together; an admitted call counts itself in
/// `entered` and waits at `gate` until [`release`].
struct Stampede {
    entered: Arc<AtomicU32>,
    gate: Arc<Notify>,
    tasks: Vec<tokio::task::JoinHandle<Result<(), Error<DepError>>>>,
}

async fn stampede(b: &Breaker, n: usize) -> Stampede {
    for _ in 0..2 {
        let _ = call_for(b, Duration::ZERO, false).await;
    }
    // Real time: a multi-thread runtime cannot be paused; 150 ms is past the 100 ms open.
    tokio::time::sleep(ms(150)).await;
    let entered = Arc::new(AtomicU32::new(0));
    let gate = Arc::new(Notify::new());
    let start = Arc::new(tokio::sync::Barrier::new(n));
    let tasks = (0..n)
        .map(|_| {
            let (b, entered, gate, start) =
                (b.clone(), entered.clone(), gate.clone(), start.clone());
            tokio::spawn(async move {
                start.wait().await;
                b.call(async {
                    entered.fetch_add(1, SeqCst);
                    gate.notified().await;
                    Ok::<(), DepError>(())
                })
                .await
            })
        })
        .collect();
    Stampede {
        entered,
        gate,
        tasks,
    }
}

/// Lets every admitted call of a [`stampede`] finish (the trials may still be on their way to
/// the gate), until every task has.
async fn release<T>(gate: &Notify, tasks: &[tokio::task::JoinHandle<T>]) {
    while tasks.iter().filter(|t| t.is_finished()).count() < tasks.len() {
        gate.notify_waiters();
        tokio::task::yield_now().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn half_open_calls_admits_no_more_than_its_cap_to_a_hundred_concurrent_callers() {
    let b = Breaker::builder("oe-stampede")
        .window_calls(2)
        .min_calls(2)
        .open_for(ms(100))
        .half_open_calls(3)
        .build()
        .unwrap();
    let Stampede {
        entered,
        gate,
        tasks,
    } = stampede(&b, 100).await;
    // Every caller has asked once the 97 refusals are in.
    while b.metrics().rejected < 97 {
        tokio::task::yield_now().await;
    }
    assert_eq!(entered.load(SeqCst), 3);
    while b.metrics().rejected_by_reason.half_open < 97 {
        tokio::task::yield_now().await;
    }
    release(&gate, &tasks).await;
    let mut ok = 0;
    for t in tasks {
        ok += usize::from(t.await.unwrap().is_ok());
    }
    assert_eq!(ok, 3);
    assert_eq!(b.state(), State::Closed);
}

// --- Issue 2: cancellation, panics, bulkheads ------------------------------------------------

#[breaker(
    name = "oe-cancel",
    window_calls = 2,
    min_calls = 2,
    open_for = "1s",
    half_open_calls = 1
)]
#[bulkhead(name = "oe-cancel-pool", pool = 1)]
async fn guarded(gate: Arc<Notify>, ok: bool) -> Result<u32, DepError> {
    gate.notified().await;
    if ok {
        Ok(1)
    } else {
        Err(DepError::Down)
    }
}

#[tokio::test(start_paused = true)]
async fn a_cancelled_trial_frees_its_permit_and_its_slot_and_is_not_a_failure() {
    let open = Arc::new(Notify::new());
    for _ in 0..2 {
        open.notify_one();
        let _ = guarded(open.clone(), false).await;
    }
    let b = registry().breaker("oe-cancel").unwrap();
    let pool = registry().bulkhead("oe-cancel-pool").unwrap();
    assert_eq!(b.state(), State::Open);
    advance(secs(1)).await;
    // The one trial is dropped by its caller before it answers.
    let hang = Arc::new(Notify::new());
    let dropped = tokio::time::timeout(ms(10), guarded(hang, true)).await;
    assert!(dropped.is_err());
    assert_eq!(pool.in_flight(), 0, "the permit came back");
    let m = b.metrics();
    assert_eq!((m.cancelled, m.failed), (1, 2), "{m:?}");
    assert_eq!(
        b.state(),
        State::HalfOpen,
        "a cancelled trial is no verdict"
    );
    // Its slot went back: the next caller is the trial.
    let go = Arc::new(Notify::new());
    go.notify_one();
    assert_eq!(guarded(go, true).await, Ok(1));
    assert_eq!(b.state(), State::Closed);
}

#[breaker(name = "oe-panic", window_calls = 2, min_calls = 2)]
#[bulkhead(name = "oe-panic-pool", pool = 1)]
async fn panicky(boom: bool) -> Result<u32, DepError> {
    tokio::task::yield_now().await;
    if boom {
        panic!("the dependency's client panicked");
    }
    Ok(1)
}

#[tokio::test(start_paused = true)]
async fn a_panic_is_a_failure_and_frees_the_permit() {
    for _ in 0..2 {
        let j = tokio::spawn(panicky(true)).await;
        assert!(j.unwrap_err().is_panic());
    }
    let b = registry().breaker("oe-panic").unwrap();
    let m = b.metrics();
    assert_eq!(m.panicked, 2, "{m:?}");
    assert_eq!(b.state(), State::Open, "two panics of two calls open it");
    assert_eq!(registry().bulkhead("oe-panic-pool").unwrap().in_flight(), 0);
    assert!(matches!(
        panicky(false).await,
        Err(DepError::Refused(Rejection::Open { .. }))
    ));
}

#[tokio::test(start_paused = true)]
async fn a_bulkhead_waiter_gets_a_freed_slot_within_max_wait_and_is_refused_after_it() {
    let pool = Bulkhead::builder("oe-wait")
        .pool(1)
        .max_wait(ms(50))
        .build()
        .unwrap();
    let holder = {
        let pool = pool.clone();
        tokio::spawn(async move { pool.call(tokio::time::sleep(ms(30))).await })
    };
    tokio::task::yield_now().await;
    assert_eq!(pool.in_flight(), 1);
    // Waits 30 ms of its 50 ms, then runs.
    let t0 = tokio::time::Instant::now();
    assert!(pool.call(async { 7 }).await.is_ok());
    assert_eq!(t0.elapsed(), ms(30));
    holder.await.unwrap().unwrap();
    // A holder for 100 ms: the waiter gives up at 50 ms with `Full`.
    let holder = {
        let pool = pool.clone();
        tokio::spawn(async move { pool.call(tokio::time::sleep(ms(100))).await })
    };
    tokio::task::yield_now().await;
    let t0 = tokio::time::Instant::now();
    match pool.call(async { 7 }).await {
        Err(Rejection::Full { name, .. }) => assert_eq!(name.as_ref() as &str, "oe-wait"),
        other => panic!("expected Full, got {other:?}"),
    }
    assert_eq!(t0.elapsed(), ms(50));
    holder.await.unwrap().unwrap();
    let m = fusebox::metrics()
        .bulkheads
        .into_iter()
        .find(|m| m.name == "oe-wait")
        .unwrap();
    assert_eq!((m.pool, m.in_flight, m.peak, m.rejected), (1, 0, 1, 1));
}

#[test]
fn the_pool_sizing_helper_is_calls_per_second_times_latency_times_spare() {
    assert_eq!(fusebox::tune::pool_size(100.0, ms(200), 1.5), 30);
}

// --- Issue 2: registry, handles, snapshot, events --------------------------------------------

#[tokio::test(start_paused = true)]
async fn the_same_name_with_other_settings_keeps_the_first_and_counts_the_conflict() {
    let first = Breaker::builder("oe-conflict")
        .failure_rate(50)
        .build()
        .unwrap();
    let second = Breaker::builder("oe-conflict")
        .failure_rate(80)
        .build()
        .unwrap();
    assert!(first.ptr_eq(&second), "one breaker per name");
    assert_eq!(
        second.config().failure_rate(),
        50,
        "the first settings kept"
    );
    assert_eq!(first.metrics().conflicts, 1);
    let text = fusebox::metrics::prometheus();
    assert!(
        text.lines()
            .any(|l| l.contains("oe-conflict") && l.contains("conflict") && l.ends_with(" 1")),
        "the conflict is visible in Prometheus too"
    );
}

#[tokio::test(start_paused = true)]
async fn handles_force_open_force_close_and_reset_and_every_call_sees_it() {
    let b = Breaker::builder("oe-handles").build().unwrap();
    let same = registry().breaker("oe-handles").unwrap();
    b.force_open();
    assert_eq!(same.state(), State::ForcedOpen);
    match call_for(&same, Duration::ZERO, true).await {
        Err(Error::Rejected(r)) => {
            assert!(r.is_open());
            assert_eq!(r.name(), "oe-handles");
        }
        other => panic!("expected a rejection, got {other:?}"),
    }
    b.force_close();
    assert_eq!(same.state(), State::ForcedClosed);
    for _ in 0..50 {
        let _ = call_for(&same, Duration::ZERO, false).await;
    }
    assert_eq!(
        same.state(),
        State::ForcedClosed,
        "forced closed never opens"
    );
    b.reset();
    assert_eq!(same.state(), State::Closed);
    let m = same.metrics();
    assert_eq!(m.window_calls, 0, "reset empties the window");
    assert_eq!(m.rejected_by_reason.forced_open, 1);
}

#[tokio::test(start_paused = true)]
async fn the_snapshot_tells_time_in_state_latency_times_opened_and_stuck() {
    let b = Breaker::builder("oe-snapshot")
        .window_calls(10)
        .min_calls(10)
        .alert_after(secs(60))
        .open_for(secs(30))
        .half_open_calls(1)
        .build()
        .unwrap();
    for i in 0..10u64 {
        call_for(&b, ms(10 * (i + 1)), true).await.unwrap();
    }
    let m = b.metrics();
    let p50 = m.p50.unwrap();
    assert!(p50 >= ms(40) && p50 <= ms(70), "p50 of 10..100 ms: {p50:?}");
    assert!(m.p99.unwrap() >= ms(90), "{:?}", m.p99);
    assert!(m.p95.unwrap() >= p50);
    advance(secs(5)).await;
    assert!(b.metrics().time_in_state >= secs(5));
    for _ in 0..10 {
        let _ = call_for(&b, Duration::ZERO, false).await;
    }
    assert_eq!(b.state(), State::Open);
    assert_eq!(b.metrics().time_in_state, Duration::ZERO);
    // Open, then a failed trial, open again: away from closed longer than `alert_after`.
    advance(secs(30)).await;
    let _ = call_for(&b, Duration::ZERO, false).await;
    advance(secs(29)).await;
    assert!(!b.metrics().stuck, "59 s away from closed");
    advance(secs(2)).await;
    let m = b.metrics();
    assert!(
        m.stuck,
        "61 s away from closed, across an open/half-open cycle"
    );
    assert_eq!(m.times_opened, 2);
    assert!(fusebox::metrics::stuck_breakers()
        .iter()
        .any(|s| s.name == "oe-snapshot"));
}

#[tokio::test(start_paused = true)]
async fn a_subscriber_hears_each_transition_once_with_its_reason_and_rates() {
    let mut events = registry().subscribe();
    let b = Breaker::builder("oe-events")
        .window_calls(4)
        .min_calls(4)
        .open_for(secs(1))
        .half_open_calls(1)
        .build()
        .unwrap();
    for ok in [true, false, false, false] {
        let _ = call_for(&b, Duration::ZERO, ok).await;
    }
    advance(secs(1)).await;
    assert!(admitted(&b).await);
    let mut mine = Vec::new();
    while let Ok(t) = events.try_recv() {
        if &*t.name == "oe-events" {
            mine.push(t);
        }
    }
    let states: Vec<_> = mine.iter().map(|t| (t.from, t.to)).collect();
    assert_eq!(
        states,
        [
            (State::Closed, State::Open),
            (State::Open, State::HalfOpen),
            (State::HalfOpen, State::Closed)
        ]
    );
    match &mine[0].reason {
        Reason::FailureRate {
            rate,
            threshold,
            calls,
        } => assert_eq!((*rate, *threshold, *calls), (75.0, 50, 4)),
        other => panic!("opened for {other:?}"),
    }
    assert_eq!(mine[1].at - mine[0].at, secs(1));
}

#[tokio::test(start_paused = true)]
async fn every_call_is_counted_once_whatever_its_end() {
    let b = Breaker::builder("oe-ledger")
        .window_calls(1000)
        .timeout(ms(50))
        .failure_rate(100)
        .build()
        .unwrap();
    let pool = Bulkhead::builder("oe-ledger-pool").pool(2).build().unwrap();
    let hold = Arc::new(Notify::new());
    let held: Vec<_> = (0..2)
        .map(|_| {
            let (b, pool, hold) = (b.clone(), pool.clone(), hold.clone());
            tokio::spawn(async move {
                b.call_in(&pool, async move {
                    hold.notified().await;
                    Ok::<(), DepError>(())
                })
                .await
            })
        })
        .collect();
    tokio::task::yield_now().await;
    // Full bulkhead: refused by the bulkhead, not the breaker.
    assert!(matches!(
        b.call_in(&pool, async { Ok::<(), DepError>(()) }).await,
        Err(Error::Rejected(Rejection::Full { .. }))
    ));
    hold.notify_waiters();
    for h in held {
        h.await.unwrap().unwrap();
    }
    let _ = call_for(&b, ms(100), true).await; // timed out
    let _ = call_for(&b, Duration::ZERO, false).await; // failed
    let _ = tokio::time::timeout(ms(10), call_for(&b, ms(40), true)).await; // cancelled
    let m = b.metrics();
    assert_eq!(
        (
            m.succeeded,
            m.failed,
            m.timed_out,
            m.cancelled,
            m.rejected_by_bulkhead
        ),
        (2, 1, 1, 1, 1),
        "{m:?}"
    );
    assert_eq!(
        m.calls,
        m.succeeded
            + m.failed
            + m.ignored
            + m.timed_out
            + m.panicked
            + m.cancelled
            + m.rejected
            + m.rejected_by_bulkhead,
        "{m:?}"
    );
    assert_eq!(m.rejected_by_reason.bulkhead_full, 1);
    assert_eq!(m.rejected_by_reason.timed_out, 1);
}

// --- Issue 2: classification and trial timeouts ---------------------------------------------

fn never(_: &DepError) -> bool {
    false
}

#[breaker(name = "oe-timeouts-count", timeout = "50ms", failure = never, window_calls = 4, min_calls = 4)]
async fn slow_answer(takes: Duration) -> Result<(), DepError> {
    tokio::time::sleep(takes).await;
    Err(DepError::Down)
}

#[tokio::test(start_paused = true)]
async fn a_timeout_counts_even_when_the_failure_predicate_counts_no_error() {
    for _ in 0..4 {
        assert_eq!(slow_answer(Duration::ZERO).await, Err(DepError::Down));
    }
    let b = registry().breaker("oe-timeouts-count").unwrap();
    assert_eq!(
        b.state(),
        State::Closed,
        "errors the predicate refuses are no failures"
    );
    // Two timeouts in the last four calls: 50 %.
    for _ in 0..2 {
        match slow_answer(ms(100)).await {
            Err(DepError::Refused(Rejection::TimedOut { after, .. })) => assert_eq!(after, ms(50)),
            other => panic!("expected a timeout, got {other:?}"),
        }
    }
    let m = b.metrics();
    assert_eq!((m.timed_out, m.state), (2, State::Open), "{m:?}");
}

#[tokio::test(start_paused = true)]
async fn trial_calls_run_under_their_own_timeout() {
    let b = Breaker::builder("oe-trial-timeout")
        .window_calls(2)
        .min_calls(2)
        .timeout(ms(100))
        .half_open_timeout(secs(1))
        .open_for(secs(1))
        .half_open_calls(1)
        .build()
        .unwrap();
    for _ in 0..2 {
        assert!(matches!(
            call_for(&b, ms(500), true).await,
            Err(Error::Rejected(Rejection::TimedOut { .. }))
        ));
    }
    assert_eq!(b.state(), State::Open);
    advance(secs(1)).await;
    call_for(&b, ms(500), true)
        .await
        .expect("a 500 ms trial is within the 1 s trial timeout");
    assert_eq!(b.state(), State::Closed);
    assert!(
        call_for(&b, ms(500), true).await.is_err(),
        "closed again: the call's own 100 ms timeout"
    );
}

#[tokio::test(start_paused = true)]
async fn a_full_bulkhead_is_never_a_failure_of_the_dependency() {
    let b = Breaker::builder("oe-full-not-failure")
        .window_calls(2)
        .min_calls(2)
        .build()
        .unwrap();
    let pool = Bulkhead::builder("oe-full-not-failure")
        .pool(1)
        .build()
        .unwrap();
    let _permit = pool.acquire().await.unwrap();
    for _ in 0..10 {
        let r = b.call_in(&pool, async { Ok::<(), DepError>(()) }).await;
        assert!(matches!(r, Err(Error::Rejected(Rejection::Full { .. }))));
    }
    let m = b.metrics();
    assert_eq!(
        (m.state, m.failed, m.window_calls),
        (State::Closed, 0, 0),
        "{m:?}"
    );
    assert_eq!(m.rejected_by_bulkhead, 10);
}

#[tokio::test(start_paused = true)]
async fn an_open_breaker_takes_no_bulkhead_permit() {
    let b = Breaker::builder("oe-open-no-permit").build().unwrap();
    let pool = Bulkhead::builder("oe-open-no-permit")
        .pool(1)
        .build()
        .unwrap();
    b.force_open();
    let _ = b.call_in(&pool, async { Ok::<(), DepError>(()) }).await;
    let m = fusebox::metrics();
    let p = m
        .bulkheads
        .iter()
        .find(|p| p.name == "oe-open-no-permit")
        .unwrap();
    assert_eq!((p.admitted, p.peak, p.rejected), (0, 0, 0));
}

// --- Issue 4: exports ----------------------------------------------------------------------

#[breaker(name = "oe-prom", key = region, window_calls = 2, min_calls = 2)]
async fn by_region(region: &str, ok: bool) -> Result<(), DepError> {
    ok.then_some(()).ok_or(DepError::Down)
}

#[tokio::test(start_paused = true)]
async fn a_scrape_of_a_keyed_outage_parses_and_carries_the_values() {
    by_region("eu", true).await.unwrap();
    let _ = by_region("us", false).await;
    let _ = by_region("us", false).await;
    let _ = by_region("us", true).await; // refused: open
    let text = fusebox::metrics::prometheus();
    let lines: Vec<Result<String, std::io::Error>> =
        text.lines().map(|l| Ok(l.to_owned())).collect();
    let scrape = prometheus_parse::Scrape::parse(lines.into_iter()).expect("valid exposition");
    let value = |name: &str, want: &[(&str, &str)]| -> f64 {
        let hits: Vec<f64> = scrape
            .samples
            .iter()
            .filter(|s| s.metric == name && want.iter().all(|(k, v)| s.labels.get(k) == Some(*v)))
            .map(|s| match s.value {
                prometheus_parse::Value::Counter(v)
                | prometheus_parse::Value::Gauge(v)
                | prometheus_parse::Value::Untyped(v) => v,
                _ => f64::NAN,
            })
            .collect();
        assert_eq!(hits.len(), 1, "{name} {want:?} in\n{text}");
        hits[0]
    };
    let at = |key: &'static str, extra: &[(&'static str, &'static str)]| {
        let mut l = vec![("breaker", "oe-prom"), ("key", key)];
        l.extend_from_slice(extra);
        l
    };
    let expected = [
        ("fusebox_breaker_state", at("us", &[("state", "open")]), 1.0),
        (
            "fusebox_breaker_state",
            at("us", &[("state", "closed")]),
            0.0,
        ),
        (
            "fusebox_breaker_state",
            at("eu", &[("state", "closed")]),
            1.0,
        ),
        (
            "fusebox_breaker_calls_total",
            at("us", &[("outcome", "failed")]),
            2.0,
        ),
        (
            "fusebox_breaker_calls_total",
            at("eu", &[("outcome", "succeeded")]),
            1.0,
        ),
        (
            "fusebox_breaker_rejected_total",
            at("us", &[("reason", "open")]),
            1.0,
        ),
        ("fusebox_breaker_opened_total", at("us", &[]), 1.0),
        ("fusebox_breaker_failure_ratio", at("us", &[]), 1.0),
    ];
    for (metric, labels, want) in expected {
        assert_eq!(value(metric, &labels), want, "{metric} {labels:?}");
    }
}

#[tokio::test(start_paused = true)]
async fn the_json_snapshot_keeps_its_field_names() {
    let b = Breaker::builder("oe-json")
        .window_calls(4)
        .min_calls(4)
        .build()
        .unwrap();
    call_for(&b, ms(20), true).await.unwrap();
    let _ = call_for(&b, ms(20), false).await;
    let json: serde_json::Value = serde_json::from_str(&fusebox::metrics().to_json()).unwrap();
    let me = json["breakers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["name"] == "oe-json")
        .unwrap();
    assert_eq!(me["state"], "closed", "{me}");
    assert_eq!(me["failure_rate_pct"], 50.0);
    assert_eq!(me["failed"], 1);
    assert!(me["p95_s"].as_f64().unwrap() > 0.0);
    assert!(me["time_in_state_s"].is_number());
    assert_eq!(me["stuck"], false);
    assert_eq!(me["rejected_by_reason"]["open"], 0);
    assert!(json["bulkheads"].is_array());
}

// --- Issue 8: test scopes ------------------------------------------------------------------

#[breaker(name = "oe-scoped", window_calls = 2, min_calls = 2, open_for = "10s", stale_for = "1m", stale_key = item)]
#[bulkhead(name = "oe-scoped-pool", pool = 2)]
async fn scoped_price(item: u32, gate: Option<Arc<Notify>>, ok: bool) -> Result<u32, DepError> {
    if let Some(g) = gate {
        g.notified().await;
    }
    if ok {
        Ok(item * 10)
    } else {
        Err(DepError::Down)
    }
}

/// Two tests drive the same annotated breaker to opposite states, in parallel, many times.
async fn scoped_round(fail: bool) {
    let scope = fusebox::testing::scope();
    let mut rec = scope.recorder();
    // Listed in the scope before its first call, fresh.
    fusebox::testing::assert_state("oe-scoped", State::Closed);
    assert_eq!(fusebox::testing::metrics_of("oe-scoped").unwrap().calls, 0);
    for _ in 0..2 {
        let _ = scoped_price(1, None, !fail).await;
        tokio::task::yield_now().await;
    }
    if fail {
        fusebox::testing::assert_state("oe-scoped", State::Open);
        fusebox::testing::assert_calls("oe-scoped", 0, 2, 0);
        assert_eq!(rec.states_of("oe-scoped"), [State::Closed, State::Open]);
    } else {
        fusebox::testing::assert_state("oe-scoped", State::Closed);
        fusebox::testing::assert_calls("oe-scoped", 2, 0, 0);
        assert!(rec.transitions().is_empty());
    }
}

#[tokio::test(start_paused = true)]
async fn same_name_in_parallel_tests_failing_side() {
    for _ in 0..50 {
        scoped_round(true).await;
    }
}

#[tokio::test(start_paused = true)]
async fn same_name_in_parallel_tests_healthy_side() {
    for _ in 0..50 {
        scoped_round(false).await;
    }
}

#[tokio::test(start_paused = true)]
async fn a_scopes_last_good_values_and_bulkhead_vanish_with_it() {
    {
        let _scope = fusebox::testing::scope();
        assert_eq!(scoped_price(7, None, true).await, Ok(70));
        let gate = Arc::new(Notify::new());
        let held = tokio::spawn(scoped_price(8, Some(gate.clone()), true));
        tokio::task::yield_now().await;
        assert_eq!(fusebox::testing::in_flight_of("oe-scoped-pool"), Some(1));
        gate.notify_one();
        assert_eq!(held.await.unwrap(), Ok(80));
        assert_eq!(fusebox::testing::in_flight_of("oe-scoped-pool"), Some(0));
        registry().breaker("oe-scoped").unwrap().force_open();
        assert_eq!(
            scoped_price(7, None, true).await,
            Ok(70),
            "stale while open"
        );
    }
    let _scope = fusebox::testing::scope();
    registry().breaker("oe-scoped").unwrap().force_open();
    assert!(
        matches!(
            scoped_price(7, None, true).await,
            Err(DepError::Refused(Rejection::Open { .. }))
        ),
        "another scope never sees the first one's cached value"
    );
}

#[tokio::test(start_paused = true)]
async fn the_recorder_gives_each_transition_its_virtual_time() {
    let scope = fusebox::testing::scope();
    let mut rec = scope.recorder();
    advance(secs(3)).await;
    for _ in 0..2 {
        let _ = scoped_price(1, None, false).await;
    }
    advance(secs(10)).await;
    assert_eq!(scoped_price(2, None, true).await, Ok(20));
    // The default half-open (a share for a window) judges after its window.
    let states = rec.states_of("oe-scoped");
    assert_eq!(&states[..3], [State::Closed, State::Open, State::HalfOpen]);
    let at: Vec<Duration> = rec
        .timeline_of("oe-scoped")
        .iter()
        .map(|(_, t)| *t)
        .collect();
    assert_eq!(at[0], secs(3), "opened 3 s into the test");
    assert_eq!(at[1], secs(13), "half-open after the 10 s open period");
}

#[test]
fn a_failed_assertion_says_what_it_found() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap();
    let _scope = fusebox::testing::scope();
    rt.block_on(async {
        for _ in 0..2 {
            let _ = scoped_price(1, None, false).await;
        }
    });
    let msg = |r: std::thread::Result<()>| -> String {
        let e = r.unwrap_err();
        e.downcast_ref::<String>()
            .cloned()
            .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap()
    };
    let state = msg(std::panic::catch_unwind(|| {
        fusebox::testing::assert_state("oe-scoped", State::Closed)
    }));
    assert!(
        state.contains("oe-scoped") && state.to_lowercase().contains("open"),
        "{state}"
    );
    let calls = msg(std::panic::catch_unwind(|| {
        fusebox::testing::assert_calls("oe-scoped", 2, 0, 0)
    }));
    assert!(
        calls.contains("oe-scoped") && calls.contains("(0, 2, 0)"),
        "{calls}"
    );
    let missing = msg(std::panic::catch_unwind(|| {
        fusebox::testing::assert_state("oe-no-such", State::Closed)
    }));
    assert!(missing.contains("oe-no-such"), "{missing}");
    fusebox::testing::reset_all();
    fusebox::testing::assert_state("oe-scoped", State::Closed);
}

// --- Issue 8: stale values -------------------------------------------------------------------

static STALE_BODY: AtomicU32 = AtomicU32::new(0);

#[breaker(name = "oe-stale", stale_for = "10m", stale_key = sku.to_owned(), stale_capacity = 2, window_calls = 100)]
async fn stale_quote(sku: &str, up: bool) -> Result<String, DepError> {
    STALE_BODY.fetch_add(1, SeqCst);
    if up {
        Ok(format!("{sku}:{}", STALE_BODY.load(SeqCst)))
    } else {
        Err(DepError::Down)
    }
}

#[tokio::test(start_paused = true)]
async fn stale_values_are_per_argument_bounded_and_expire() {
    let a = stale_quote("a", true).await.unwrap();
    let b = stale_quote("b", true).await.unwrap();
    // A counted failure is answered with the same argument's value, never another's.
    assert_eq!(stale_quote("a", false).await.unwrap(), a);
    assert_eq!(stale_quote("b", false).await.unwrap(), b);
    assert_eq!(
        stale_quote("z", false).await,
        Err(DepError::Down),
        "nothing kept for z"
    );
    // A third key evicts the least recently used ("a": "b" was used last).
    let c = stale_quote("c", true).await.unwrap();
    assert_eq!(
        stale_quote("a", false).await,
        Err(DepError::Down),
        "a was evicted"
    );
    assert_eq!(stale_quote("c", false).await.unwrap(), c);
    let breaker = registry().breaker("oe-stale").unwrap();
    assert_eq!(breaker.metrics().stale_served, 3);
    // While open too, until the value is older than `stale_for`.
    breaker.force_open();
    advance(Duration::from_secs(9 * 60)).await;
    assert_eq!(stale_quote("c", true).await.unwrap(), c);
    advance(Duration::from_secs(61)).await;
    assert!(matches!(
        stale_quote("c", true).await,
        Err(DepError::Refused(Rejection::Open { .. }))
    ));
}

// --- Issue 7: bad input is a typed error or works, never a panic -----------------------------

#[tokio::test(start_paused = true)]
async fn the_longest_durations_are_refused_or_work_never_a_panic() {
    type Set = fn(fusebox::config::BreakerBuilder, Duration) -> fusebox::config::BreakerBuilder;
    let setters: [(&str, Set); 8] = [
        ("timeout", |b, d| b.timeout(d)),
        ("half_open_timeout", |b, d| b.half_open_timeout(d)),
        ("open_for", |b, d| b.open_for(d)),
        ("half_open_window", |b, d| b.half_open_window(d)),
        ("alert_after", |b, d| b.alert_after(d)),
        ("window", |b, d| b.window(d)),
        ("trip_p95", |b, d| b.trip_p95(d)),
        ("backoff", |b, d| b.backoff(2.0, d)),
    ];
    for (i, (key, set)) in setters.into_iter().enumerate() {
        for d in [
            Duration::MAX,
            Duration::from_secs(u64::MAX / 2),
            Duration::from_nanos(1),
        ] {
            let builder = set(
                Breaker::builder(format!("oe-huge-{i}-{}", d.as_nanos() % 7))
                    .window_calls(2)
                    .min_calls(2),
                d,
            );
            let Ok(b) = builder.build_detached() else {
                continue; // a typed error is fine
            };
            // Works: open it, wait, call, force for the longest time, read everything.
            for _ in 0..3 {
                let _ = call_for(&b, ms(1), false).await;
            }
            advance(secs(3600)).await;
            let _ = call_for(&b, ms(1), true).await;
            b.force_open_for(Duration::MAX);
            let _ = b.metrics();
            b.force_close_for(Duration::MAX);
            let _ = call_for(&b, Duration::ZERO, true).await;
            let _ = b.metrics();
            b.reset();
            let _ = (key, fusebox::metrics::prometheus());
        }
    }
}

#[tokio::test(start_paused = true)]
async fn text_settings_are_trimmed_bounded_and_refused_in_typed_errors() {
    use fusebox::config::BreakerBuilder;
    use fusebox::settings::ConfigError;
    let b = BreakerBuilder::from_settings("oe-text", [(" timeout ", " 800ms ")]).unwrap();
    assert_eq!(b.config().unwrap().timeout(), Some(ms(800)));
    assert!(matches!(
        BreakerBuilder::from_settings("oe-text", [("window", "2h")]),
        Err(ConfigError::OutOfRange {
            field: "window",
            ..
        })
    ));
    assert!(BreakerBuilder::from_settings("oe-text", [("window_calls", "2000000")]).is_err());
    assert!(BreakerBuilder::from_settings("oe-text", [("min_calls", "4294967295")]).is_err());
    assert!(matches!(
        BreakerBuilder::from_settings("oe-text", [("timout", "1s")]),
        Err(ConfigError::UnknownSetting { .. })
    ));
    assert!(matches!(
        BreakerBuilder::from_settings("oe-text", [("failure_rate", "101")]),
        Err(ConfigError::OutOfRange {
            field: "failure_rate",
            ..
        })
    ));
    let vars = [
        ("OE_TIMEOUT", "250ms"),
        ("OE_URL", "http://example.invalid"),
        ("OE_HALF_OPEN_PCT", " 10 "),
    ]
    .map(|(k, v)| (k.into(), v.into()));
    let b =
        BreakerBuilder::from_vars("oe-env", "OE", vars).expect("an unrelated OE_URL is ignored");
    let cfg = b.config().unwrap();
    assert_eq!(cfg.timeout(), Some(ms(250)));
    assert!(
        Breaker::builder("").build().is_err(),
        "an empty name is a typed error"
    );
    assert!(Bulkhead::builder("oe-pool0").pool(0).build().is_err());
    let e = fusebox::metrics::facade::report_every(Duration::ZERO).await;
    assert!(
        e.is_err(),
        "a zero period is a typed error, not tokio's panic"
    );
}

// --- Issue 15: rejections by reason, fallbacks that see the call -----------------------------

#[breaker(
    name = "oe-reasons",
    window_calls = 2,
    min_calls = 2,
    timeout = "100ms",
    open_for = "1s",
    half_open_calls = 1
)]
#[bulkhead(name = "oe-reasons-pool", pool = 1)]
async fn reasons(takes: Duration, ok: bool) -> Result<(), DepError> {
    tokio::time::sleep(takes).await;
    ok.then_some(()).ok_or(DepError::Down)
}

#[tokio::test(start_paused = true)]
async fn every_refusal_is_counted_under_its_reason_everywhere() {
    // bulkhead_full: one call holds the only slot.
    let held = tokio::spawn(reasons(ms(50), true));
    tokio::task::yield_now().await;
    assert!(matches!(
        reasons(Duration::ZERO, true).await,
        Err(DepError::Refused(Rejection::Full { .. }))
    ));
    held.await.unwrap().unwrap();
    // timed_out: with the held call's success, 1 of 2 failed: opens.
    let _ = reasons(ms(500), true).await;
    // open, twice
    for _ in 0..2 {
        let _ = reasons(Duration::ZERO, true).await;
    }
    // half_open: the one trial is in flight, the next caller is refused.
    advance(secs(1)).await;
    let trial = tokio::spawn(reasons(ms(50), true));
    tokio::task::yield_now().await;
    match reasons(Duration::ZERO, true).await {
        Err(DepError::Refused(Rejection::Open { state, .. })) => assert_eq!(state, State::HalfOpen),
        other => panic!("expected a half-open refusal, got {other:?}"),
    }
    trial.await.unwrap().unwrap();
    // forced_open
    registry().breaker("oe-reasons").unwrap().force_open();
    let _ = reasons(Duration::ZERO, true).await;
    let m = registry().breaker("oe-reasons").unwrap().metrics();
    let r = &m.rejected_by_reason;
    assert_eq!(
        (
            r.open,
            r.forced_open,
            r.half_open,
            r.bulkhead_full,
            r.timed_out
        ),
        (2, 1, 1, 1, 1),
        "{m:?}"
    );
    assert_eq!(m.rejected, 4, "the breaker's own refusals");
    let text = fusebox::metrics::prometheus();
    for (reason, n) in [
        ("open", 2),
        ("forced_open", 1),
        ("half_open", 1),
        ("bulkhead_full", 1),
        ("timed_out", 1),
    ] {
        let line = format!(
            r#"fusebox_breaker_rejected_total{{breaker="oe-reasons",reason="{reason}"}} {n}"#
        );
        assert!(text.lines().any(|l| l == line), "{line} in\n{text}");
    }
}

struct Shop {
    tenant: &'static str,
}

#[derive(Debug, PartialEq)]
enum Confirmation {
    Paid(u32),
    ByEmail {
        tenant: &'static str,
        order: u32,
        why: &'static str,
    },
}

impl Shop {
    #[breaker(name = "oe-shop", key = self.tenant, window_calls = 2, min_calls = 2, fallback = Self::by_email)]
    async fn pay(&self, order: &u32, up: bool) -> Result<Confirmation, DepError> {
        if up {
            Ok(Confirmation::Paid(*order))
        } else {
            Err(DepError::Down)
        }
    }

    async fn by_email(
        &self,
        order: &u32,
        up: &bool,
        err: Error<DepError>,
    ) -> Result<Confirmation, DepError> {
        let _ = up;
        let why = match err {
            Error::Rejected(_) => "refused",
            Error::Failed(_) => "failed",
        };
        Ok(Confirmation::ByEmail {
            tenant: self.tenant,
            order: *order,
            why,
        })
    }
}

#[tokio::test(start_paused = true)]
async fn a_keyed_methods_fallback_sees_self_and_the_order() {
    let acme = Shop { tenant: "acme" };
    let zeta = Shop { tenant: "zeta" };
    assert_eq!(acme.pay(&1, true).await, Ok(Confirmation::Paid(1)));
    // 1 of the last 2 failed: open.
    assert_eq!(
        acme.pay(&2, false).await,
        Ok(Confirmation::ByEmail {
            tenant: "acme",
            order: 2,
            why: "failed"
        })
    );
    assert_eq!(
        registry().breaker("oe-shop/acme").unwrap().state(),
        State::Open
    );
    assert_eq!(
        acme.pay(&4, true).await,
        Ok(Confirmation::ByEmail {
            tenant: "acme",
            order: 4,
            why: "refused"
        })
    );
    assert_eq!(
        zeta.pay(&5, true).await,
        Ok(Confirmation::Paid(5)),
        "another tenant's breaker"
    );
}

// --- Issue 18: keys, abandoned trials, sibling panics ----------------------------------------

#[breaker(name = "oe-hosts", key = host, max_keys = 100, window = "1s", min_calls = 2)]
async fn fetch(host: String, ok: bool) -> Result<(), DepError> {
    ok.then_some(()).ok_or(DepError::Down)
}

fn family(base: &str) -> Vec<String> {
    registry()
        .breakers()
        .into_iter()
        .map(|b| b.name().to_owned())
        .filter(|n| n.starts_with(&format!("{base}/")))
        .collect()
}

#[tokio::test(start_paused = true)]
async fn ten_thousand_hosts_all_go_through_on_at_most_a_hundred_and_one_breakers() {
    for i in 0..10_000 {
        fetch(format!("host-{i}.example"), true)
            .await
            .expect("never refused because of the cap");
        if i % 1000 == 0 {
            // A sick host keeps its own breaker through the stream.
            let _ = fetch("sick".into(), false).await;
        }
    }
    let names = family("oe-hosts");
    assert!(names.len() <= 101, "{} breakers", names.len());
    let m = fusebox::metrics();
    let keyed = m
        .keyed
        .iter()
        .find(|k| k.name == "oe-hosts")
        .expect("keyed figures");
    assert!(keyed.overflowed > 0, "{keyed:?}");
    // Idle keys make room once their window is empty: a new key gets its own breaker again.
    advance(secs(2)).await;
    fetch("fresh.example".into(), true).await.unwrap();
    assert!(registry().breaker("oe-hosts/fresh.example").is_some());
}

#[tokio::test(start_paused = true)]
async fn request_keys_never_reach_a_name_verbatim() {
    for key in ["a\nb", "x/open", "_overflow", "\u{1b}[31mred", "%2F"] {
        fetch(key.into(), true).await.unwrap();
    }
    let long = "k".repeat(300);
    fetch(long.clone(), true).await.unwrap();
    let names = family("oe-hosts");
    for n in &names {
        let key = &n["oe-hosts/".len()..];
        assert!(
            !key.contains('/') && !key.chars().any(char::is_control),
            "{n:?}"
        );
        assert!(key.len() <= 128, "{n:?} is {} bytes", key.len());
    }
    assert!(registry().breaker("oe-hosts/a%0Ab").is_some(), "{names:?}");
    assert!(
        registry().breaker("oe-hosts/x%2Fopen").is_some(),
        "{names:?}"
    );
    assert!(
        registry().breaker("oe-hosts/%5Foverflow").is_some(),
        "{names:?}"
    );
    assert!(registry().breaker("oe-hosts/%252F").is_some(), "{names:?}");
    assert!(names
        .iter()
        .any(|n| n.starts_with("oe-hosts/kkkk") && n.contains('~')));
}

#[breaker(
    name = "oe-hang",
    trip_p95 = "20ms",
    open_for = "1s",
    half_open_calls = 3,
    window_calls = 20,
    min_calls = 10
)]
async fn hangs() -> Result<(), DepError> {
    pending().await
}

#[tokio::test(start_paused = true)]
async fn trials_the_caller_abandons_are_judged_and_the_breaker_reopens() {
    let mut events = registry().subscribe();
    // 20 calls a second, each given up after 50 ms by its caller, for 10 s.
    for _ in 0..200 {
        let next = tokio::time::Instant::now() + ms(50);
        let _ = tokio::time::timeout(ms(50), hangs()).await;
        tokio::time::sleep_until(next).await;
    }
    let b = registry().breaker("oe-hang").unwrap();
    let m = b.metrics();
    let mut reopened = 0;
    while let Ok(t) = events.try_recv() {
        if &*t.name == "oe-hang" && t.from == State::HalfOpen && t.to == State::Open {
            reopened += 1;
        }
    }
    assert!(
        reopened >= 3,
        "abandoned slow trials reopen the breaker: {reopened}, {m:?}"
    );
    let let_through = m.cancelled;
    assert!(
        let_through < 60,
        "{let_through} of 200 calls let through: {m:?}"
    );
    assert_eq!(
        m.failed + m.timed_out,
        0,
        "dropped before the trial timeout: no failure"
    );
}

#[breaker(
    name = "oe-sibling",
    window_calls = 2,
    min_calls = 2,
    open_for = "1s",
    half_open_calls = 1
)]
async fn sibling_call(gate: Arc<Notify>) -> Result<(), DepError> {
    gate.notified().await;
    Ok(())
}

#[test]
fn a_siblings_panic_is_not_blamed_on_the_dependency() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap();
    let b = registry().breaker("oe-sibling").unwrap();
    rt.block_on(async {
        let r = tokio::spawn(async {
            let gate = Arc::new(Notify::new());
            let boom = async {
                tokio::task::yield_now().await;
                panic!("an unrelated branch panics");
            };
            let _: ((), Result<(), DepError>) = tokio::join!(boom, sibling_call(gate));
        })
        .await;
        assert!(r.unwrap_err().is_panic());
    });
    let m = b.metrics();
    assert_eq!((m.panicked, m.failed, m.cancelled), (0, 0, 1), "{m:?}");
}

// --- Issue 2: windows, refusals that say when, eviction, forced states ------------------------

#[tokio::test(start_paused = true)]
async fn a_time_window_forgets_calls_older_than_its_length() {
    let b = Breaker::builder("oe-time-window")
        .window(secs(10))
        .min_calls(5)
        .build()
        .unwrap();
    for _ in 0..4 {
        let _ = call_for(&b, Duration::ZERO, false).await;
    }
    advance(secs(11)).await;
    let _ = call_for(&b, Duration::ZERO, false).await;
    let m = b.metrics();
    assert_eq!((m.state, m.window_calls), (State::Closed, 1), "{m:?}");
    for _ in 0..4 {
        let _ = call_for(&b, Duration::ZERO, false).await;
    }
    assert_eq!(b.state(), State::Open, "5 failures within 10 s");
}

#[tokio::test(start_paused = true)]
async fn an_open_refusal_says_when_the_dependency_will_next_be_tried() {
    let b = Breaker::builder("oe-retry-in")
        .window_calls(2)
        .min_calls(2)
        .open_for(secs(10))
        .build()
        .unwrap();
    for _ in 0..2 {
        let _ = call_for(&b, Duration::ZERO, false).await;
    }
    advance(secs(3)).await;
    match call_for(&b, Duration::ZERO, true).await {
        Err(Error::Rejected(Rejection::Open {
            state, retry_in, ..
        })) => {
            assert_eq!(state, State::Open);
            assert_eq!(retry_in, Some(secs(7)));
        }
        other => panic!("expected an open refusal, got {other:?}"),
    }
    let err: Error<DepError> = Error::Rejected(Rejection::Open {
        name: "x".into(),
        state: State::Open,
        retry_in: None,
    });
    assert!(err.rejection().is_some());
}

#[breaker(name = "oe-zone", key = zone)]
async fn by_zone(zone: &str) -> Result<(), DepError> {
    let _ = zone;
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn only_keyed_entries_are_evicted() {
    let b = Breaker::builder("oe-evict").build().unwrap();
    assert!(!registry().evict("oe-evict"), "a static name stays");
    assert!(registry().breaker("oe-evict").unwrap().ptr_eq(&b));
    for zone in ["eu", "us", "ap"] {
        by_zone(zone).await.unwrap();
    }
    assert!(registry().evict("oe-zone/eu"));
    assert!(registry().breaker("oe-zone/eu").is_none());
    assert_eq!(registry().evict_keys("oe-zone"), 2);
    assert!(registry().breaker("oe-zone/us").is_none());
    // A key used again after eviction starts fresh.
    by_zone("us").await.unwrap();
    assert_eq!(registry().breaker("oe-zone/us").unwrap().metrics().calls, 1);
}

#[tokio::test(start_paused = true)]
async fn a_forced_state_given_a_duration_lapses_and_one_held_too_long_is_stuck() {
    let b = Breaker::builder("oe-forced-for")
        .alert_after(secs(60))
        .build()
        .unwrap();
    b.force_open_for(secs(600));
    assert_eq!(b.metrics().force_expires_in, Some(secs(600)));
    advance(secs(61)).await;
    assert!(b.metrics().stuck, "forced open past alert_after is stuck");
    advance(secs(540)).await;
    // Lapsed into half-open: trials decide, so a dependency still down is not hit by all traffic.
    assert!(
        admitted(&b).await,
        "the forced state lapsed after 10 minutes"
    );
    let m = b.metrics();
    assert_eq!((m.state, m.force_expires_in), (State::HalfOpen, None));
    b.reset();
    assert!(!b.metrics().stuck);
    b.force_close();
    advance(secs(61)).await;
    assert!(
        b.metrics().stuck,
        "forced closed past alert_after is stuck too"
    );
}

#[tokio::test(start_paused = true)]
async fn half_open_judges_its_share_by_the_failure_rate() {
    let b = Breaker::builder("oe-share-judged")
        .window_calls(4)
        .min_calls(4)
        .open_for(secs(1))
        .half_open_pct(100)
        .half_open_window(secs(5))
        .build()
        .unwrap();
    let open = |b: Breaker| async move {
        for _ in 0..4 {
            let _ = call_for(&b, Duration::ZERO, false).await;
        }
        assert_eq!(b.state(), State::Open);
        advance(secs(1)).await;
    };
    open(b.clone()).await;
    // 1 of 4 trials fails: 25 % is under 50 %.
    for ok in [true, false, true, true] {
        let _ = call_for(&b, Duration::ZERO, ok).await;
    }
    advance(secs(5)).await;
    assert!(admitted(&b).await);
    assert_eq!(b.state(), State::Closed);
    open(b.clone()).await;
    // 2 of 4 trials fail: 50 % reopens.
    for ok in [true, false, false, true] {
        let _ = call_for(&b, Duration::ZERO, ok).await;
    }
    advance(secs(5)).await;
    assert!(!admitted(&b).await);
    assert_eq!(b.state(), State::Open);
}

#[test]
fn errors_display_what_happened() {
    #[derive(Debug)]
    struct Declined;
    impl std::fmt::Display for Declined {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("card declined")
        }
    }
    impl std::error::Error for Declined {}
    let failed: Error<Declined> = Error::Failed(Declined);
    assert!(failed.to_string().contains("card declined"), "{failed}");
    let open: Error<Declined> = Error::Rejected(Rejection::Open {
        name: "payments".into(),
        state: State::Open,
        retry_in: Some(secs(7)),
    });
    let text = open.to_string();
    assert!(text.contains("payments") && text.contains("open"), "{text}");
    let full = Rejection::Full {
        name: "pool".into(),
        pool: 60,
    }
    .to_string();
    assert!(full.contains("pool") && full.contains("60"), "{full}");
    let _: &dyn std::error::Error = &failed;
}

// --- Issue 4 and 15: the admin router, as an operator uses it (real HTTP on loopback) ---------

const TOKEN: &str = "outside-e-token-0123456789";

#[derive(Debug, PartialEq)]
enum Quote {
    Live(u32),
    Cached,
}

#[breaker(name = "oe-admin", window_calls = 10, fallback = cached_quote)]
async fn admin_quote(n: u32) -> Result<Quote, DepError> {
    Ok(Quote::Live(n))
}

fn cached_quote(_: Error<DepError>) -> Result<Quote, DepError> {
    Ok(Quote::Cached)
}

#[breaker(name = "oe-admin-keyed", key = shard, fallback = cached_quote)]
async fn admin_shard(shard: &str) -> Result<Quote, DepError> {
    Ok(Quote::Live(shard.len() as u32))
}

#[breaker(name = "oe-admin-never-called")]
async fn never_called() -> Result<(), DepError> {
    Ok(())
}

async fn http(method: reqwest::Method, url: &str, token: Option<&str>) -> (u16, String) {
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap();
    let mut req = client.request(method, url);
    if let Some(t) = token {
        req = req.header("authorization", format!("Bearer {t}"));
    }
    let resp = req.send().await.unwrap();
    (resp.status().as_u16(), resp.text().await.unwrap())
}

#[tokio::test]
async fn an_operator_lists_forces_and_resets_through_the_router() {
    use reqwest::Method;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let app = fusebox::admin::router(TOKEN).unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });

    // No token, a wrong one, on a route that exists and one that does not: 401, nothing said.
    for path in ["/breakers", "/breakers/oe-admin", "/no-such-route"] {
        for token in [None, Some("outside-e-token-012345678"), Some("Bearer")] {
            let (status, body) = http(Method::GET, &format!("{base}{path}"), token).await;
            assert_eq!(
                (status, body.contains("oe-admin")),
                (401, false),
                "{path} {token:?}"
            );
        }
    }
    // Listed before its first call, with zero counts.
    let (status, body) = http(Method::GET, &format!("{base}/breakers"), Some(TOKEN)).await;
    assert_eq!(status, 200);
    let json: serde_json::Value = serde_json::from_str(&body).unwrap();
    let listed = json["breakers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["name"] == "oe-admin-never-called")
        .expect("listed before any call");
    assert_eq!(listed["calls"], 0);
    let _ = never_called;

    // The issue's routes: force open, a call gets the fallback; close; reset.
    assert_eq!(admin_quote(1).await, Ok(Quote::Live(1)));
    for (verb, state, answer) in [
        ("open", "forced_open", Quote::Cached),
        ("close", "forced_closed", Quote::Live(2)),
        ("reset", "closed", Quote::Live(2)),
    ] {
        let (status, body) = http(
            Method::POST,
            &format!("{base}/breakers/oe-admin/{verb}"),
            Some(TOKEN),
        )
        .await;
        assert_eq!(status, 200, "{verb}: {body}");
        let json: serde_json::Value = serde_json::from_str(&body).unwrap();
        assert_eq!(json["state"], state, "{verb}: {json}");
        assert_eq!(admin_quote(2).await, Ok(answer), "after {verb}");
    }
    // Keyed names, as is and percent-encoded; a key with a slash is one name segment.
    admin_shard("3").await.unwrap();
    admin_shard("a/b").await.unwrap();
    for path in [
        "/breakers/oe-admin-keyed/3",
        "/breakers/oe-admin-keyed%2F3",
        "/breakers/oe-admin-keyed/a%252Fb",
    ] {
        let (status, body) = http(Method::GET, &format!("{base}{path}"), Some(TOKEN)).await;
        assert_eq!(status, 200, "{path}: {body}");
    }
    let (status, _) = http(
        Method::POST,
        &format!("{base}/actions/open/oe-admin-keyed/3"),
        Some(TOKEN),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(admin_shard("3").await, Ok(Quote::Cached));
    assert_eq!(
        admin_shard("4").await,
        Ok(Quote::Live(1)),
        "other keys untouched"
    );
    // Unknown breaker 404, wrong method 405 naming what is allowed.
    let (status, _) = http(
        Method::POST,
        &format!("{base}/breakers/oe-nope/open"),
        Some(TOKEN),
    )
    .await;
    assert_eq!(status, 404);
    let client = reqwest::Client::new();
    let resp = client
        .delete(format!("{base}/breakers/oe-admin"))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 405);
    assert!(resp.headers().get("allow").is_some());
    // Prometheus text from the same router.
    let (status, text) = http(Method::GET, &format!("{base}/metrics"), Some(TOKEN)).await;
    assert_eq!(status, 200);
    assert!(
        text.contains(
            r#"fusebox_breaker_state{breaker="oe-admin-keyed",key="3",state="forced_open"} 1"#
        ),
        "{text}"
    );
}

// --- Issue 2 and 7: trials and permits under refusals, concurrency and a mixed load ----------

#[tokio::test(start_paused = true)]
async fn a_trial_refused_by_a_full_bulkhead_gives_its_slot_back() {
    let b = Breaker::builder("oe-trial-full")
        .window_calls(2)
        .min_calls(2)
        .open_for(secs(1))
        .half_open_calls(1)
        .build()
        .unwrap();
    let pool = Bulkhead::builder("oe-trial-full").pool(1).build().unwrap();
    for _ in 0..2 {
        let _ = call_for(&b, Duration::ZERO, false).await;
    }
    advance(secs(1)).await;
    let permit = pool.acquire().await.unwrap();
    let r = b.call_in(&pool, async { Ok::<(), DepError>(()) }).await;
    assert!(
        matches!(r, Err(Error::Rejected(Rejection::Full { .. }))),
        "{r:?}"
    );
    drop(permit);
    // The trial never ran: the next caller is the trial, and it closes the breaker.
    let r = b.call_in(&pool, async { Ok::<(), DepError>(()) }).await;
    assert!(r.is_ok(), "{r:?}");
    assert_eq!(b.state(), State::Closed);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_half_open_share_lets_no_stampede_through() {
    let b = Breaker::builder("oe-share-stampede")
        .window_calls(2)
        .min_calls(2)
        .open_for(ms(100))
        .half_open_pct(5)
        .half_open_window(secs(30))
        .build()
        .unwrap();
    let Stampede {
        entered,
        gate,
        tasks,
    } = stampede(&b, 200).await;
    while b.metrics().rejected + u64::from(entered.load(SeqCst)) < 200 {
        tokio::task::yield_now().await;
    }
    let n = entered.load(SeqCst);
    assert!(
        (1..=10).contains(&n),
        "5 % of 200 concurrent callers, got {n}"
    );
    release(&gate, &tasks).await;
}

#[breaker(name = "oe-static-site", window_calls = 2, min_calls = 2)]
async fn static_site() -> Result<(), DepError> {
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn a_scope_sees_its_own_breaker_at_a_call_site_already_cached_outside() {
    static_site().await.unwrap();
    let global = registry().breaker("oe-static-site").unwrap();
    global.force_open();
    {
        let _scope = fusebox::testing::scope();
        assert_eq!(static_site().await, Ok(()), "the scope's breaker is fresh");
        fusebox::testing::assert_calls("oe-static-site", 1, 0, 0);
    }
    assert!(
        matches!(static_site().await, Err(DepError::Refused(_))),
        "outside again"
    );
    assert_eq!(
        global.metrics().succeeded,
        1,
        "the scope's call was not the global's"
    );
    global.reset();
}

#[derive(Clone, Copy)]
enum Act {
    Ok,
    Fail,
    Slow,
    Cancel,
    Panic,
}

#[breaker(name = "oe-mix", timeout = "50ms", window_calls = 1000, failure_rate = 100,
          fallback = mix_fallback)]
#[bulkhead(name = "oe-mix-pool", pool = 16)]
async fn mixed(act: Act) -> Result<u32, DepError> {
    tokio::task::yield_now().await;
    match act {
        Act::Ok => Ok(1),
        Act::Fail => Err(DepError::Down),
        Act::Slow => {
            tokio::time::sleep(ms(100)).await;
            Ok(1)
        }
        Act::Cancel => {
            tokio::time::sleep(ms(20)).await;
            Ok(1)
        }
        Act::Panic => panic!("the client panicked"),
    }
}

fn mix_fallback(_: Error<DepError>) -> Result<u32, DepError> {
    Ok(0)
}

#[tokio::test(start_paused = true)]
async fn a_mixed_load_is_counted_exactly_and_leaves_no_permit_behind() {
    let acts = [
        Act::Ok,
        Act::Fail,
        Act::Slow,
        Act::Cancel,
        Act::Panic,
        Act::Ok,
        Act::Ok,
    ];
    let mut made = [0u64; 5];
    let mut tasks = Vec::new();
    for i in 0..3000usize {
        let act = acts[(i * 7 + i / 3) % acts.len()];
        made[act as usize] += 1;
        tasks.push(tokio::spawn(async move {
            match act {
                Act::Cancel => {
                    let _ = tokio::time::timeout(ms(10), mixed(act)).await;
                }
                _ => {
                    let _ = mixed(act).await;
                }
            }
        }));
    }
    for t in tasks {
        let _ = t.await;
    }
    let m = registry().breaker("oe-mix").unwrap().metrics();
    let pool = registry().bulkhead("oe-mix-pool").unwrap();
    assert_eq!(pool.in_flight(), 0, "no permit leaked");
    assert_eq!(m.calls, 3000, "{m:?}");
    assert_eq!(
        m.succeeded
            + m.failed
            + m.ignored
            + m.timed_out
            + m.panicked
            + m.cancelled
            + m.rejected
            + m.rejected_by_bulkhead,
        3000,
        "{m:?}"
    );
    let [_, fail, _, _, panic] = made;
    assert!(m.failed <= fail && m.panicked <= panic, "{m:?} {made:?}");
    assert_eq!(
        m.state,
        State::Closed,
        "failure_rate 100 never opens on a mix"
    );
}

// --- Issue 2: percentiles over the window, not over the breaker's life -------------------------

#[tokio::test(start_paused = true)]
async fn latency_percentiles_cover_the_window_only() {
    let count = Breaker::builder("oe-pct-count")
        .window_calls(10)
        .failure_rate(100)
        .build()
        .unwrap();
    let time = Breaker::builder("oe-pct-time")
        .window(secs(10))
        .failure_rate(100)
        .build()
        .unwrap();
    for b in [&count, &time] {
        for _ in 0..10 {
            call_for(b, ms(800), true).await.unwrap();
        }
        assert!(b.metrics().p50.unwrap() >= ms(700), "{:?}", b.metrics().p50);
    }
    // The count window: the last 10 calls are fast.
    for _ in 0..10 {
        call_for(&count, ms(5), true).await.unwrap();
    }
    let m = count.metrics();
    assert!(
        m.p99.unwrap() < ms(100),
        "the slow calls left the last 10: {:?}",
        m.p99
    );
    // The time window: 20 s later nothing is left, then only fast calls.
    advance(secs(20)).await;
    let m = time.metrics();
    assert_eq!((m.window_calls, m.p50), (0, None), "{m:?}");
    for _ in 0..10 {
        call_for(&time, ms(5), true).await.unwrap();
    }
    let m = time.metrics();
    assert!(m.p99.unwrap() < ms(100), "{:?}", m.p99);
}

// --- Issue 2: growth resets on close; late answers never judge a newer state ----------------

#[tokio::test(start_paused = true)]
async fn the_open_period_starts_again_from_open_for_after_the_breaker_closes() {
    let b = Breaker::builder("oe-backoff-reset")
        .window_calls(2)
        .min_calls(2)
        .open_for(secs(1))
        .backoff(2.0, secs(60))
        .half_open_calls(1)
        .build()
        .unwrap();
    let fail_twice = |b: Breaker| async move {
        for _ in 0..2 {
            let _ = call_for(&b, Duration::ZERO, false).await;
        }
        assert_eq!(b.state(), State::Open);
    };
    fail_twice(b.clone()).await;
    advance(secs(1)).await;
    let _ = call_for(&b, Duration::ZERO, false).await; // trial fails: open for 2 s
    advance(secs(2)).await;
    assert!(admitted(&b).await, "the trial after 2 s passes");
    assert_eq!(b.state(), State::Closed);
    fail_twice(b.clone()).await;
    advance(secs(1)).await;
    assert!(
        admitted(&b).await,
        "a fresh outage opens for open_for again, not 4 s"
    );
}

#[tokio::test(start_paused = true)]
async fn a_failed_trial_reopens_at_once_and_later_trials_do_not_close_it() {
    let b = Breaker::builder("oe-late-trials")
        .window_calls(2)
        .min_calls(2)
        .open_for(secs(1))
        .half_open_calls(3)
        .build()
        .unwrap();
    for _ in 0..2 {
        let _ = call_for(&b, Duration::ZERO, false).await;
    }
    advance(secs(1)).await;
    let slow_ok: Vec<_> = (0..2)
        .map(|_| {
            let b = b.clone();
            tokio::spawn(async move { call_for(&b, ms(500), true).await })
        })
        .collect();
    tokio::task::yield_now().await;
    let _ = call_for(&b, ms(10), false).await;
    assert_eq!(
        b.state(),
        State::Open,
        "one failed trial of three reopens at once"
    );
    for t in slow_ok {
        t.await.unwrap().unwrap();
    }
    assert_eq!(
        b.state(),
        State::Open,
        "answers from the old half-open change nothing"
    );
    assert!(!admitted(&b).await);
    assert_eq!(b.metrics().times_opened, 2);
}

#[tokio::test(start_paused = true)]
async fn a_call_admitted_before_the_breaker_opened_does_not_count_after() {
    let b = Breaker::builder("oe-stale-generation")
        .window_calls(4)
        .min_calls(4)
        .open_for(secs(10))
        .build()
        .unwrap();
    let early = {
        let b = b.clone();
        tokio::spawn(async move { call_for(&b, secs(1), false).await })
    };
    tokio::task::yield_now().await;
    for _ in 0..4 {
        let _ = call_for(&b, Duration::ZERO, false).await;
    }
    assert_eq!(b.state(), State::Open);
    let _ = early.await.unwrap();
    b.reset();
    let m = b.metrics();
    assert_eq!((m.state, m.window_calls), (State::Closed, 0), "{m:?}");
}

#[test]
fn min_calls_above_the_count_window_is_refused() {
    let e = Breaker::builder("oe-min-above")
        .window_calls(10)
        .min_calls(20)
        .build();
    assert!(e.is_err(), "{e:?}");
    let ok = Breaker::builder("oe-min-default")
        .window_calls(10)
        .build()
        .unwrap();
    assert_eq!(
        ok.config().min_calls(),
        10,
        "the default is capped at the window"
    );
}

#[tokio::test(start_paused = true)]
async fn a_trial_cancelled_while_waiting_for_a_slot_or_panicking_frees_its_trial_slot() {
    let b = Breaker::builder("oe-trial-wait")
        .window_calls(2)
        .min_calls(2)
        .open_for(secs(1))
        .half_open_calls(1)
        .build()
        .unwrap();
    let pool = Bulkhead::builder("oe-trial-wait")
        .pool(1)
        .max_wait(secs(1))
        .build()
        .unwrap();
    for _ in 0..2 {
        let _ = call_for(&b, Duration::ZERO, false).await;
    }
    advance(secs(1)).await;
    let permit = pool.acquire().await.unwrap();
    let waited =
        tokio::time::timeout(ms(100), b.call_in(&pool, async { Ok::<(), DepError>(()) })).await;
    assert!(waited.is_err(), "cancelled while waiting for a slot");
    drop(permit);
    assert_eq!(pool.in_flight(), 0);
    assert_eq!(b.state(), State::HalfOpen);
    // The trial slot came back: a trial that panics takes it, and the panic reopens.
    let b2 = b.clone();
    let j = tokio::spawn(async move {
        b2.call(async {
            tokio::task::yield_now().await;
            panic!("trial panics");
            #[allow(unreachable_code)]
            Ok::<(), DepError>(())
        })
        .await
    })
    .await;
    assert!(j.unwrap_err().is_panic());
    assert_eq!(
        b.state(),
        State::Open,
        "a panicking trial is a failed trial"
    );
    advance(secs(1)).await;
    assert!(
        admitted(&b).await,
        "and its slot is free for the next half-open"
    );
    assert_eq!(b.state(), State::Closed);
}

struct Counter {
    seen: u32,
    name: &'static str,
}

impl Counter {
    #[breaker(name = "oe-mut-self", window_calls = 2, min_calls = 2, fallback = Self::offline)]
    async fn bump(&mut self, by: u32, up: bool) -> Result<u32, DepError> {
        self.seen += by;
        if up {
            Ok(self.seen)
        } else {
            Err(DepError::Down)
        }
    }

    // `&mut self` is moved into the call, so the fallback starts at the next lent argument.
    fn offline(by: &u32, up: &bool, err: Error<DepError>) -> Result<u32, DepError> {
        let refused = matches!(err, Error::Rejected(_));
        Ok(1000 * u32::from(refused) + 100 * u32::from(*up) + *by)
    }
}

#[tokio::test(start_paused = true)]
async fn a_mut_self_methods_fallback_sees_the_lent_arguments() {
    let mut c = Counter { seen: 0, name: "c" };
    assert_eq!(c.bump(1, true).await, Ok(1));
    assert_eq!(
        c.bump(2, false).await,
        Ok(2),
        "failed: the fallback saw by = 2, up = false"
    );
    assert_eq!((c.seen, c.name), (3, "c"), "the body ran on self");
    registry().breaker("oe-mut-self").unwrap().force_open();
    assert_eq!(
        c.bump(5, true).await,
        Ok(1105),
        "refused: the body did not run"
    );
    assert_eq!(c.seen, 3);
}

#[tokio::test(start_paused = true)]
async fn in_a_scope_a_test_can_force_an_annotated_breaker_open_before_calling() {
    let _scope = fusebox::testing::scope();
    registry().breaker("oe-static-site").unwrap().force_open();
    assert!(matches!(
        static_site().await,
        Err(DepError::Refused(Rejection::Open { .. }))
    ));
    fusebox::testing::assert_calls("oe-static-site", 0, 0, 1);
}

// --- Issue 7: real load, real time -----------------------------------------------------------

#[breaker(name = "oe-real", timeout = "20ms", window_calls = 200, failure_rate = 100,
          fallback = real_fallback)]
#[bulkhead(name = "oe-real-pool", pool = 8, max_wait = "2ms")]
async fn real_call(i: u32) -> Result<u32, DepError> {
    match i % 10 {
        0 => Err(DepError::Down),
        1 => {
            tokio::time::sleep(ms(40)).await; // times out
            Ok(i)
        }
        _ => {
            tokio::time::sleep(Duration::from_micros(200 + u64::from(i % 7) * 100)).await;
            Ok(i)
        }
    }
}

fn real_fallback(_: Error<DepError>) -> Result<u32, DepError> {
    Ok(u32::MAX)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn under_real_load_the_pool_holds_and_every_call_is_counted_once() {
    let pool = registry().bulkhead("oe-real-pool").unwrap();
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let watcher = {
        let (pool, stop) = (pool.clone(), stop.clone());
        tokio::spawn(async move {
            let mut most = 0;
            while !stop.load(SeqCst) {
                most = most.max(pool.in_flight());
                tokio::task::yield_now().await;
            }
            most
        })
    };
    let started = std::time::Instant::now();
    let tasks: Vec<_> = (0..32u32)
        .map(|t| {
            tokio::spawn(async move {
                let mut fell_back = 0u32;
                for i in 0..150u32 {
                    let n = t * 1000 + i;
                    if real_call(n).await == Ok(u32::MAX) {
                        fell_back += 1;
                    }
                }
                fell_back
            })
        })
        .collect();
    let mut fell_back = 0;
    for t in tasks {
        fell_back += t.await.unwrap();
    }
    stop.store(true, SeqCst);
    let most = watcher.await.unwrap();
    assert!(started.elapsed() < secs(60), "bounded in time");
    assert!(most <= 8, "in flight never above the pool: {most}");
    let p = fusebox::metrics()
        .bulkheads
        .into_iter()
        .find(|b| b.name == "oe-real-pool")
        .unwrap();
    assert!(p.peak <= 8 && p.in_flight == 0, "{p:?}");
    let m = registry().breaker("oe-real").unwrap().metrics();
    let calls = 32 * 150;
    assert_eq!(m.calls, calls, "{m:?}");
    assert_eq!(
        m.succeeded
            + m.failed
            + m.timed_out
            + m.cancelled
            + m.panicked
            + m.ignored
            + m.rejected
            + m.rejected_by_bulkhead,
        calls,
        "{m:?}"
    );
    assert_eq!(
        u64::from(fell_back),
        m.failed + m.timed_out + m.rejected + m.rejected_by_bulkhead,
        "the fallback answered each refusal and counted failure once: {m:?}"
    );
    assert_eq!(
        p.admitted,
        m.succeeded + m.failed + m.timed_out,
        "{p:?} {m:?}"
    );
}

#[breaker(name = "oe-hot-key", key = tenant, window_calls = 2, min_calls = 2)]
async fn per_tenant(tenant: &str, ok: bool) -> Result<(), DepError> {
    let _ = tenant;
    ok.then_some(()).ok_or(DepError::Down)
}

#[tokio::test(start_paused = true)]
async fn a_keyed_call_site_used_outside_a_scope_gives_the_scope_its_own_breaker() {
    // Used outside first, on this thread: the call site remembers the key it used last.
    for _ in 0..2 {
        let _ = per_tenant("acme", false).await;
    }
    let global = registry().breaker("oe-hot-key/acme").unwrap();
    assert_eq!(global.state(), State::Open);
    {
        let _scope = fusebox::testing::scope();
        assert_eq!(
            per_tenant("acme", true).await,
            Ok(()),
            "the scope's acme is fresh"
        );
        fusebox::testing::assert_calls("oe-hot-key/acme", 1, 0, 0);
        for _ in 0..2 {
            let _ = per_tenant("acme", false).await;
        }
        fusebox::testing::assert_state("oe-hot-key/acme", State::Open);
    }
    assert_eq!(
        global.metrics().calls,
        2,
        "nothing of the scope reached the global breaker"
    );
    global.reset();
    assert_eq!(
        per_tenant("acme", true).await,
        Ok(()),
        "outside again: the global one"
    );
    assert_eq!(global.metrics().succeeded, 1);
}

#[breaker(name = "oe-one-key", key = tenant, max_keys = 1, window = "1s", min_calls = 2)]
async fn one_key(tenant: &str) -> Result<(), DepError> {
    let _ = tenant;
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn a_key_evicted_as_idle_is_never_served_by_a_breaker_outside_the_registry() {
    one_key("a").await.unwrap();
    advance(secs(2)).await;
    one_key("b").await.unwrap(); // "a" is idle: it makes room
    assert!(registry().breaker("oe-one-key/a").is_none());
    assert!(registry().breaker("oe-one-key/b").is_some());
    // "a" again, from the thread that used it last: whichever breaker serves it is listed,
    // so an operator's force_open reaches it.
    one_key("a").await.unwrap();
    let family: Vec<Breaker> = registry()
        .breakers()
        .into_iter()
        .filter(|b| b.name().starts_with("oe-one-key/"))
        .collect();
    let total: u64 = family.iter().map(|b| b.metrics().calls).sum();
    assert_eq!(
        total, 2,
        "b once and a once, all in listed breakers: {family:?}"
    );
    for b in &family {
        b.force_open();
    }
    assert!(matches!(one_key("a").await, Err(DepError::Refused(_))));
}

// --- DESIGN.md's own example, as a user copies it --------------------------------------------

mod design_card {
    use fusebox::{breaker, bulkhead, Error, Rejection};

    pub struct Order {
        pub cents: u64,
    }

    #[derive(Debug, PartialEq)]
    pub enum Verification {
        Verified,
        WillConfirmByEmail,
    }

    #[derive(Debug)]
    pub enum PayError {
        Declined,
        Unavailable(Rejection),
    }

    impl std::fmt::Display for PayError {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            match self {
                PayError::Declined => f.write_str("declined"),
                PayError::Unavailable(r) => write!(f, "unavailable: {r}"),
            }
        }
    }

    impl From<Rejection> for PayError {
        fn from(r: Rejection) -> Self {
            PayError::Unavailable(r)
        }
    }

    #[breaker(name = "oe-design-payments", trip_p95 = "500ms", half_open_pct = 5, fallback = confirm_by_email)]
    #[bulkhead(pool = 60)]
    pub async fn verify_payment(order: &Order) -> Result<Verification, PayError> {
        if order.cents > 0 {
            Ok(Verification::Verified)
        } else {
            Err(PayError::Declined)
        }
    }

    fn confirm_by_email(err: Error<PayError>) -> Result<Verification, PayError> {
        tracing::warn!(%err, "payment verification degraded");
        Ok(Verification::WillConfirmByEmail)
    }
}

#[tokio::test(start_paused = true)]
async fn designs_example_compiles_and_degrades_to_email() {
    use design_card::*;
    assert_eq!(
        verify_payment(&Order { cents: 100 }).await.unwrap(),
        Verification::Verified
    );
    assert_eq!(
        verify_payment(&Order { cents: 0 }).await.unwrap(),
        Verification::WillConfirmByEmail
    );
    registry()
        .breaker("oe-design-payments")
        .unwrap()
        .force_open();
    assert_eq!(
        verify_payment(&Order { cents: 100 }).await.unwrap(),
        Verification::WillConfirmByEmail
    );
}

#[tokio::test(start_paused = true)]
async fn inside_a_scope_metrics_and_prometheus_show_the_scopes_breakers_only() {
    let global = Breaker::builder("oe-global-only").build().unwrap();
    global.force_open();
    let _scope = fusebox::testing::scope();
    let m = fusebox::metrics();
    assert!(
        m.breakers.iter().all(|b| b.name != "oe-global-only"),
        "a global breaker leaked in"
    );
    let scoped = m
        .breakers
        .iter()
        .find(|b| b.name == "oe-scoped")
        .expect("annotated, listed");
    assert_eq!((scoped.state, scoped.calls), (State::Closed, 0));
    assert!(m.bulkheads.iter().any(|b| b.name == "oe-scoped-pool"));
    let text = fusebox::metrics::prometheus();
    assert!(!text.contains("oe-global-only"));
    assert!(text.contains(r#"fusebox_breaker_state{breaker="oe-scoped",state="closed"} 1"#));
    assert!(fusebox::metrics::stuck_breakers().is_empty());
}

#[tokio::test(start_paused = true)]
async fn a_trial_that_hangs_with_no_timeout_configured_never_holds_half_open() {
    let b = Breaker::builder("oe-hung-trial")
        .window_calls(2)
        .min_calls(2)
        .open_for(secs(1))
        .half_open_calls(1)
        .build()
        .unwrap();
    for _ in 0..2 {
        let _ = call_for(&b, Duration::ZERO, false).await;
    }
    advance(secs(1)).await;
    let hung = {
        let b = b.clone();
        tokio::spawn(async move { b.call(pending::<Result<(), DepError>>()).await })
    };
    tokio::task::yield_now().await;
    assert_eq!(b.state(), State::HalfOpen);
    // Whatever bound the trial gets, it is finite: the caller hears a timeout.
    let r = tokio::time::timeout(Duration::from_secs(3600), hung).await;
    let r = r.expect("the hung trial ended within an hour").unwrap();
    assert!(
        matches!(r, Err(Error::Rejected(Rejection::TimedOut { .. }))),
        "{r:?}"
    );
    assert_ne!(
        b.state(),
        State::HalfOpen,
        "not held half-open by the hung trial"
    );
    advance(secs(3600)).await;
    assert!(admitted(&b).await, "a later trial is admitted");
}

// --- Issue 18: no cross-tenant stale value, past the key cap too ------------------------------

#[breaker(name = "oe-ovf-stale", key = tenant, max_keys = 1, window_calls = 10, min_calls = 10,
          stale_for = "10m", stale_key = item)]
async fn tenant_item(tenant: &str, item: u32, up: bool) -> Result<String, DepError> {
    if up {
        Ok(format!("{tenant}'s item {item}"))
    } else {
        Err(DepError::Down)
    }
}

#[tokio::test(start_paused = true)]
async fn tenants_sharing_the_overflow_breaker_never_get_each_others_last_good_value() {
    // "a" holds the only key of its own (its window is not empty, so it never goes idle), and
    // keeps its last good value as before.
    tenant_item("a", 1, true).await.unwrap();
    registry().breaker("oe-ovf-stale/a").unwrap().force_open();
    assert_eq!(tenant_item("a", 1, false).await.unwrap(), "a's item 1");
    // "b" and "c" share `oe-ovf-stale/_overflow`.
    assert_eq!(tenant_item("b", 1, true).await.unwrap(), "b's item 1");
    let overflow = registry()
        .breaker("oe-ovf-stale/_overflow")
        .expect("b overflowed");
    overflow.force_open();
    // The overflow breaker cannot tell its tenants apart, so it keeps no last good values.
    assert!(matches!(
        tenant_item("b", 1, true).await,
        Err(DepError::Refused(Rejection::Open { .. }))
    ));
    assert_eq!(overflow.metrics().stale_served, 0);
    let c = tenant_item("c", 1, true).await;
    assert!(
        matches!(c, Err(DepError::Refused(Rejection::Open { .. }))),
        "tenant c must never get tenant b's value: {c:?}"
    );
}
