//! Issue 2: growth resets on close; late answers never judge a newer state.

use super::trials_under_load::static_site;
use super::*;

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
