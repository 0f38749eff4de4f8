//! Issue 2: the state machine.

use super::*;

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
pub(crate) struct Stampede {
    pub(crate) entered: Arc<AtomicU32>,
    pub(crate) gate: Arc<Notify>,
    pub(crate) tasks: Vec<tokio::task::JoinHandle<Result<(), Error<DepError>>>>,
}

pub(crate) async fn stampede(b: &Breaker, n: usize) -> Stampede {
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
pub(crate) async fn release<T>(gate: &Notify, tasks: &[tokio::task::JoinHandle<T>]) {
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
