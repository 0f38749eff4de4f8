//! `fusebox_runtime::retry` on a paused clock: what is retried, when, and how many.

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use fusebox_runtime::retry::{Backoff, BudgetConfig, Retry};
use fusebox_runtime::{Breaker, Bulkhead, Error, Rejection, State};
use tokio::time::{sleep, Instant};

const MS: Duration = Duration::from_millis(1);

#[derive(Debug, Clone, PartialEq)]
struct Down;

/// An attempt that fails with a counted failure and notes when it ran.
fn failing(
    log: &Rc<RefCell<Vec<Instant>>>,
) -> impl std::future::Future<Output = Result<(), Error<Down>>> {
    log.borrow_mut().push(Instant::now());
    async { Err(Error::Failed(Down)) }
}

#[tokio::test(start_paused = true)]
async fn under_a_failure_storm_retries_stay_within_the_share_and_the_floor_over_every_window() {
    let window = Duration::from_secs(10);
    let (share, floor) = (20u64, 2u64);
    let retry = Retry::builder("retry-storm")
        .attempts(4)
        .budget(BudgetConfig {
            share_pct: share as u8,
            floor_per_s: floor as u32,
            window,
        })
        .build()
        .unwrap();
    // 40 s of calls, 50 a second, every attempt failing: each call would make 3 retries.
    let calls: Rc<RefCell<Vec<Instant>>> = Rc::default();
    let retries: Rc<RefCell<Vec<Instant>>> = Rc::default();
    let local = tokio::task::LocalSet::new();
    local
        .run_until(async {
            let mut tasks = Vec::new();
            for _ in 0..2000 {
                let (retry, calls, retries) = (retry.clone(), calls.clone(), retries.clone());
                calls.borrow_mut().push(Instant::now());
                tasks.push(tokio::task::spawn_local(async move {
                    let mut first = true;
                    let _ = retry
                        .run(|| {
                            if !first {
                                retries.borrow_mut().push(Instant::now());
                            }
                            first = false;
                            async { Err::<(), _>(Error::Failed(Down)) }
                        })
                        .await;
                }));
                sleep(20 * MS).await;
            }
            for t in tasks {
                t.await.unwrap();
            }
        })
        .await;
    let (calls, retries) = (calls.borrow(), retries.borrow());
    let in_window = |v: &[Instant], end: Instant| {
        v.iter()
            .filter(|t| **t <= end && end.duration_since(**t) < window)
            .count() as u64
    };
    for r in retries.iter() {
        let made = in_window(&retries, *r);
        let allowed = in_window(&calls, *r) * share / 100 + floor * window.as_secs();
        assert!(
            made <= allowed,
            "{made} retries in the window ending at a retry, {allowed} allowed"
        );
    }
    // The budget binds (6000 retries were wanted) and still lets a real share through.
    let total = retries.len() as u64;
    assert!(
        total < 2000 * 3 / 4,
        "{total} retries: the budget did not bind"
    );
    assert!(
        total > 2000 * share / 100 / 2,
        "{total} retries: the budget starved"
    );
    let budget = retry.budget();
    assert_eq!(budget.retries(), total);
    assert!(budget.exhausted() > 0);
}

#[tokio::test(start_paused = true)]
async fn an_open_breaker_is_never_retried_into() {
    let breaker = Breaker::builder("retry-open").build_detached().unwrap();
    breaker.force_open();
    let retry = Retry::builder("retry-open").attempts(5).build().unwrap();
    let log = Rc::new(RefCell::new(Vec::new()));
    let started = Instant::now();
    let r = retry
        .run(|| {
            log.borrow_mut().push(Instant::now());
            breaker.call(async { Ok::<u32, Down>(1) })
        })
        .await;
    assert!(
        matches!(r, Err(Error::Rejected(Rejection::Open { .. }))),
        "{r:?}"
    );
    assert_eq!(log.borrow().len(), 1, "one attempt, refused");
    assert_eq!(
        started.elapsed(),
        Duration::ZERO,
        "the refusal returns at once"
    );
    assert_eq!(breaker.state(), State::ForcedOpen);
    assert_eq!(retry.budget().retries(), 0);
}

#[tokio::test(start_paused = true)]
async fn a_full_bulkhead_is_never_retried_into() {
    let breaker = Breaker::builder("retry-full").build_detached().unwrap();
    let pool = Bulkhead::builder("retry-full")
        .pool(1)
        .build_detached()
        .unwrap();
    let held = pool.acquire().await.unwrap();
    let retry = Retry::builder("retry-full").attempts(5).build().unwrap();
    let mut attempts = 0;
    let r = retry
        .run(|| {
            attempts += 1;
            breaker.call_in(&pool, async { Ok::<u32, Down>(1) })
        })
        .await;
    assert!(
        matches!(r, Err(Error::Rejected(Rejection::Full { .. }))),
        "{r:?}"
    );
    assert_eq!(attempts, 1);
    drop(held);
}

#[tokio::test(start_paused = true)]
async fn waits_grow_with_full_jitter_below_their_capped_ceilings() {
    let backoff = Backoff::new(100 * MS, 300 * MS);
    let (mut low, mut high) = (0, 0);
    for round in 0..50 {
        let retry = Retry::builder(format!("retry-jitter-{round}"))
            .attempts(5)
            .backoff(backoff)
            .build()
            .unwrap();
        let log = Rc::new(RefCell::new(Vec::new()));
        let r = retry.run(|| failing(&log)).await;
        assert_eq!(r, Err(Error::Failed(Down)));
        let at = log.borrow();
        assert_eq!(at.len(), 5, "every attempt made");
        for (n, pair) in at.windows(2).enumerate() {
            let waited = pair[1] - pair[0];
            let ceiling = backoff.ceiling(n as u32);
            // The paused timer fires on whole milliseconds, so a wait just under the
            // ceiling can read as the ceiling itself.
            assert!(waited <= ceiling, "retry {n} waited {waited:?}");
            low += usize::from(waited < ceiling / 2);
            high += usize::from(waited >= ceiling / 2);
        }
    }
    // Full jitter: waits spread over the whole range (200 waits, about half each side).
    assert!(low > 50 && high > 50, "{low} short waits, {high} long ones");
}

#[tokio::test(start_paused = true)]
async fn no_attempt_starts_that_could_not_finish_before_the_deadline() {
    let retry = Retry::builder("retry-deadline")
        .attempts(10)
        .backoff(Backoff::new(200 * MS, 200 * MS))
        .total(Duration::from_secs(2))
        .attempt_timeout(500 * MS)
        // Twenty rounds under one name: the deadline, not the budget, is under test.
        .unbudgeted()
        .build()
        .unwrap();
    for _ in 0..20 {
        let started = Instant::now();
        let log = Rc::new(RefCell::new(Vec::new()));
        let r = retry
            .run(|| {
                log.borrow_mut().push(Instant::now());
                async {
                    // Each attempt takes its whole timeout, then fails.
                    sleep(500 * MS).await;
                    Err::<(), _>(Error::Failed(Down))
                }
            })
            .await;
        assert!(r.is_err());
        for at in log.borrow().iter() {
            assert!(*at + 500 * MS <= started + Duration::from_secs(2));
        }
        assert!(
            started.elapsed() <= Duration::from_secs(2),
            "{:?}",
            started.elapsed()
        );
        assert!(log.borrow().len() >= 2, "a retry fitted");
    }
}

#[tokio::test(start_paused = true)]
async fn a_retry_still_running_at_the_deadline_is_dropped_there() {
    // No attempt bound is known (a breaker without `timeout`, or a retry admitted as a
    // half-open trial under its longer timeout): the retry that starts at 910 ms and would
    // answer at 1.81 s is dropped at the 1 s deadline, and the call returns the error it
    // retried. Its breaker counts it cancelled, not failed.
    let b = Breaker::builder("retry-deadline-cut")
        .build_detached()
        .unwrap();
    let retry = Retry::builder("retry-deadline-cut")
        .attempts(5)
        .backoff(Backoff::new(10 * MS, 10 * MS))
        .total(Duration::from_secs(1))
        .build()
        .unwrap();
    let started = Instant::now();
    let mut n = 0;
    let r = retry
        .run(|| {
            n += 1;
            let n = n;
            b.call(async move {
                sleep(900 * MS).await;
                Err::<(), _>(n)
            })
        })
        .await;
    assert_eq!(r, Err(Error::Failed(1)), "the error it was retrying");
    assert_eq!(
        started.elapsed(),
        Duration::from_secs(1),
        "not a moment past `total`"
    );
    assert_eq!(n, 2, "one retry started, with room for its wait");
    let m = b.metrics();
    assert_eq!((m.failed, m.cancelled), (1, 1));
}

#[tokio::test(start_paused = true)]
async fn a_total_or_a_hint_past_the_clocks_range_is_no_deadline_not_a_panic() {
    // A review: `total(Duration::MAX)` was accepted (as a breaker's `timeout` of that length
    // is), then the first retry panicked adding it to the call's start; a wait and an attempt
    // bound summed past the clock's range panicked too.
    let endless = Retry::builder("retry-huge-total")
        .attempts(3)
        .backoff(Backoff::new(10 * MS, 10 * MS))
        .total(Duration::MAX)
        .unbudgeted()
        .build()
        .unwrap();
    let mut n = 0;
    let r = endless
        .run(|| {
            n += 1;
            async { Err::<(), _>(Error::Failed(Down)) }
        })
        .await;
    assert_eq!(
        (r, n),
        (Err(Error::Failed(Down)), 3),
        "no deadline: every attempt"
    );
    let hour = Retry::builder("retry-huge-total")
        .total(Duration::from_secs(3600))
        .attempt_timeout(Duration::from_secs(1))
        .unbudgeted()
        .build()
        .unwrap();
    let started = Instant::now();
    let r: Result<(), Error<Down>> = hour
        .run_with(
            || async { Err(Error::Failed(Down)) },
            |_| true,
            |_| Some(Duration::MAX),
        )
        .await;
    assert_eq!(
        r,
        Err(Error::Failed(Down)),
        "a retry after that wait never fits"
    );
    assert_eq!(started.elapsed(), Duration::ZERO, "returned at once");
    for total in ["18446744073709551615ns", "5124095h"] {
        let r = Retry::from_settings("retry-huge-total", [("total", total), ("attempts", "2")]);
        assert!(
            r.is_ok(),
            "{total}: accepted, as a `timeout` as long is: {r:?}"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn retry_after_is_honoured() {
    let retry = Retry::builder("retry-after").attempts(3).build().unwrap();
    let log = Rc::new(RefCell::new(Vec::new()));
    let r = retry
        .run_with(|| failing(&log), |_| true, |_| Some(Duration::from_secs(3)))
        .await;
    assert!(r.is_err());
    let at = log.borrow();
    assert_eq!(at.len(), 3);
    assert!(at[1] - at[0] >= Duration::from_secs(3));
    assert!(at[2] - at[1] >= Duration::from_secs(3));
}

#[tokio::test(start_paused = true)]
async fn a_timeout_is_retried_only_when_the_call_is_idempotent() {
    let breaker = Breaker::builder("retry-timeout")
        .timeout(100 * MS)
        .build_detached()
        .unwrap();
    for (idempotent, expected) in [(false, 1), (true, 3)] {
        let retry = Retry::builder(format!("retry-timeout-{idempotent}"))
            .attempts(3)
            .idempotent(idempotent)
            .build()
            .unwrap();
        let mut attempts = 0;
        let r = retry
            .run(|| {
                attempts += 1;
                breaker.call(async {
                    sleep(Duration::from_secs(1)).await;
                    Ok::<u32, Down>(1)
                })
            })
            .await;
        assert!(
            matches!(r, Err(Error::Rejected(Rejection::TimedOut { .. }))),
            "{r:?}"
        );
        assert_eq!(attempts, expected, "idempotent: {idempotent}");
    }
}

#[tokio::test(start_paused = true)]
async fn failures_retry_on_refuses_are_returned_at_once() {
    let retry = Retry::builder("retry-on").attempts(3).build().unwrap();
    let log = Rc::new(RefCell::new(Vec::new()));
    let r = retry.run_with(|| failing(&log), |_| false, |_| None).await;
    assert_eq!(r, Err(Error::Failed(Down)));
    assert_eq!(log.borrow().len(), 1);
}

#[tokio::test(start_paused = true)]
async fn a_cancelled_call_stops_retrying() {
    let retry = Retry::builder("retry-cancel")
        .attempts(10)
        .backoff(Backoff::new(Duration::from_secs(1), Duration::from_secs(1)))
        .build()
        .unwrap();
    let log = Rc::new(RefCell::new(Vec::new()));
    let call = retry.run(|| failing(&log));
    // The caller gives up after 1.5 s: at most the first attempt and one retry ran.
    assert!(tokio::time::timeout(1500 * MS, call).await.is_err());
    let made = log.borrow().len();
    sleep(Duration::from_secs(30)).await;
    assert_eq!(log.borrow().len(), made, "no attempt after the caller left");
    assert!(made >= 1);
}

#[tokio::test(start_paused = true)]
async fn a_first_success_makes_no_retry_and_deposits_one_call() {
    let retry = Retry::builder("retry-first").build().unwrap();
    let r: Result<u32, Error<Down>> = retry.run(|| async { Ok(7) }).await;
    assert_eq!(r, Ok(7));
    assert_eq!((retry.budget().calls(), retry.budget().retries()), (1, 0));
}

#[tokio::test(start_paused = true)]
async fn attempts_retries_and_refusals_show_in_metrics_and_prometheus() {
    let retry = Retry::builder("retry-metrics")
        .attempts(3)
        .budget(BudgetConfig {
            share_pct: 0,
            floor_per_s: 1,
            window: Duration::from_secs(1),
        })
        .build()
        .unwrap();
    let log = Rc::new(RefCell::new(Vec::new()));
    // One retry granted by the floor, then refused: 2 attempts, 1 retry, 1 refusal.
    assert!(retry.run(|| failing(&log)).await.is_err());
    let m = fusebox_runtime::metrics();
    let r = m.retry("retry-metrics").unwrap();
    assert_eq!(
        (r.calls, r.attempts, r.retries, r.budget_exhausted),
        (1, 2, 1, 1)
    );
    let text = m.to_prometheus();
    for line in [
        "fusebox_retry_attempts_total{retry=\"retry-metrics\"} 2",
        "fusebox_retry_retries_total{retry=\"retry-metrics\"} 1",
        "fusebox_retry_budget_exhausted_total{retry=\"retry-metrics\"} 1",
    ] {
        assert!(text.lines().any(|l| l == line), "missing {line}");
    }
}

/// A hint never shortens the breaker's own open period (a failed trial's `open_for`): it
/// only holds a breaker whose open period ends sooner than the hint.
#[tokio::test(start_paused = true)]
async fn a_hint_does_not_shorten_an_open_period() {
    let b = Breaker::builder("retry-hint-open")
        .window_calls(2)
        .min_calls(2)
        .open_for(Duration::from_secs(10))
        .build()
        .unwrap();
    for _ in 0..2 {
        let _ = b.call(async { Err::<(), _>("down") }).await;
    }
    assert_eq!(b.state(), State::Open);
    assert!(
        !b.hold_open(Duration::from_secs(1)),
        "10 s left: not cut to 1 s"
    );
    assert_eq!(b.state(), State::Open);
    tokio::time::advance(Duration::from_millis(9500)).await;
    assert!(
        b.hold_open(Duration::from_secs(2)),
        "0.5 s left: held for the 2 s asked"
    );
    assert_eq!(b.state(), State::ForcedOpen);
    assert_eq!(b.metrics().force_expires_in, Some(Duration::from_secs(2)));
}
