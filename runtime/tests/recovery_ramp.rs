//! Issue 22's `ramp`: after half-open passes, traffic comes back in a share that grows to all
//! of it, each admitted call judged by the whole rule; a breach reopens at once. A paused clock.

mod common;

use std::time::Duration;

use common::recovery::{admitted_of, breaker, retry_in, trip};
use common::{fail, is_rejected, ok, secs, MS};
use fusebox_runtime::{Breaker, Error, State};
use tokio::time::advance;

/// Trips `b`, waits out its open period, and passes half-open with successful trials: the
/// breaker is then closed, ramping.
async fn through_half_open(b: &Breaker) {
    trip(b).await;
    advance(secs(30)).await;
    assert_eq!(
        ok(b, MS).await,
        Ok(()),
        "the first half-open caller is a trial"
    );
    advance(secs(1)).await;
    // The next caller sees the verdict: closed.
    let _ = ok(b, MS).await;
    assert_eq!(b.state(), State::Closed);
}

#[tokio::test(start_paused = true)]
async fn the_ramp_grows_the_admitted_share_from_half_open_to_all() {
    let b = breaker("ramp-steps")
        .half_open_pct(20)
        .half_open_window(secs(1))
        .ramp(secs(10))
        .build_detached()
        .unwrap();
    through_half_open(&b).await;
    let mut last = 0;
    for second in 0..10 {
        let share = b.metrics().ramp_share.expect("ramping");
        let expected = 0.2 + 0.8 * f64::from(second) / 10.0;
        assert!((share - expected).abs() < 0.01, "{second} s: {share}");
        let through = admitted_of(&b, 100).await;
        assert!(
            (f64::from(through) - expected * 100.0).abs() <= 2.0,
            "{second} s: {through} of 100 admitted, share {expected}"
        );
        assert!(through >= last, "the share only grows");
        last = through;
        assert_eq!(b.state(), State::Closed, "closed all along");
        advance(secs(1)).await;
    }
    assert_eq!(admitted_of(&b, 100).await, 100);
    let m = b.metrics();
    assert_eq!(m.ramp_share, None, "ramp done");
    assert!(m.rejected_by_reason.ramp > 300, "{m:?}");
    assert_eq!(
        m.rejected,
        m.rejected_by_reason.ramp + m.rejected_by_reason.half_open
    );
}

#[tokio::test(start_paused = true)]
async fn under_half_open_calls_the_ramp_starts_at_five_percent() {
    let b = breaker("ramp-calls")
        .half_open_calls(1)
        .ramp(secs(20))
        .build_detached()
        .unwrap();
    trip(&b).await;
    advance(secs(30)).await;
    assert_eq!(ok(&b, MS).await, Ok(()));
    assert_eq!(b.state(), State::Closed);
    let share = b.metrics().ramp_share.unwrap();
    assert!((share - 0.05).abs() < 0.001, "{share}");
    assert_eq!(admitted_of(&b, 100).await, 5);
}

#[tokio::test(start_paused = true)]
async fn a_breach_during_the_ramp_reopens_at_once_and_backs_off() {
    let b = breaker("ramp-breach")
        .half_open_pct(50)
        .half_open_window(secs(1))
        .backoff(2.0, secs(120))
        .ramp(secs(20))
        .build_detached()
        .unwrap();
    through_half_open(&b).await;
    advance(secs(2)).await;
    // Half the calls are let in; the dependency fails again.
    let mut let_in = 0;
    while b.state() == State::Closed {
        if !is_rejected(&fail(&b, MS).await) {
            let_in += 1;
        }
        assert!(
            let_in <= 4,
            "judged by the whole rule: 4 calls, half failing"
        );
    }
    assert_eq!(b.state(), State::Open, "reopened 2 s into a 20 s ramp");
    assert_eq!(b.metrics().times_opened, 2);
    // A relapse continues the episode: the open period doubled.
    assert_eq!(retry_in(ok(&b, MS).await), Some(secs(60)));
}

#[tokio::test(start_paused = true)]
async fn once_the_ramp_is_done_the_backoff_is_forgotten() {
    let b = breaker("ramp-done")
        .half_open_pct(50)
        .half_open_window(secs(1))
        .backoff(2.0, secs(120))
        .ramp(secs(5))
        .build_detached()
        .unwrap();
    through_half_open(&b).await;
    advance(secs(5)).await;
    assert_eq!(admitted_of(&b, 10).await, 10);
    trip(&b).await;
    assert_eq!(retry_in(ok(&b, MS).await), Some(secs(30)));
}

#[tokio::test(start_paused = true)]
async fn a_call_admitted_during_the_ramp_is_judged_after_it_ends() {
    // The ramp's end is no transition: failures admitted before it still count after it.
    let b = breaker("ramp-inflight")
        .half_open_pct(100)
        .half_open_window(secs(1))
        .ramp(secs(2))
        .build_detached()
        .unwrap();
    through_half_open(&b).await;
    let slow: Vec<_> = (0..4)
        .map(|_| {
            let b = b.clone();
            tokio::spawn(async move { fail(&b, secs(3)).await })
        })
        .collect();
    tokio::task::yield_now().await;
    advance(secs(2)).await;
    assert_eq!(admitted_of(&b, 1).await, 1);
    assert_eq!(b.metrics().ramp_share, None, "ramp over");
    advance(secs(2)).await;
    for call in slow {
        assert!(!is_rejected(&call.await.unwrap()));
    }
    assert_eq!(b.state(), State::Open, "{:?}", b.metrics());
}

#[tokio::test(start_paused = true)]
async fn a_ramp_refusal_says_so() {
    let b = breaker("ramp-says")
        .half_open_calls(1)
        .ramp(secs(10))
        .build_detached()
        .unwrap();
    trip(&b).await;
    advance(secs(30)).await;
    assert_eq!(ok(&b, MS).await, Ok(()));
    assert!(b.ramp_share().is_some());
    let refused = loop {
        if let Err(Error::Rejected(r)) = ok(&b, MS).await {
            break r;
        }
    };
    let text = refused.to_string();
    assert!(text.contains("ramping traffic back in"), "{text}");
}

#[tokio::test(start_paused = true)]
async fn a_key_whose_ramp_ran_out_unseen_is_idle_again() {
    // Nobody called `a` during or after its ramp: the ramp is over all the same, so at the
    // cap `a` is idle and makes room instead of sending a new key to the overflow breaker.
    let template = breaker("ramp-idle")
        .probe_every(secs(1))
        .half_open_calls(1)
        .ramp(secs(5))
        .max_keys(2)
        .config()
        .unwrap();
    let reg = fusebox_runtime::registry();
    let a = reg.keyed(&template, &"a");
    trip(&a).await;
    advance(secs(1)).await;
    assert_eq!(ok(&a, MS).await, Ok(()), "the probe closes it, ramping");
    assert!(a.ramp_share().is_some());
    let b = reg.keyed(&template, &"b");
    assert_eq!(ok(&b, MS).await, Ok(()), "b is busy: not idle");
    advance(secs(6)).await;
    let c = reg.keyed(&template, &"c");
    assert_eq!(c.name(), "ramp-idle/c", "a made room");
}

/// A snapshot reports a half-open whose trials passed as closed (its next caller closes it);
/// it reports the ramp that closing starts too, not a breaker admitting everything.
#[tokio::test(start_paused = true)]
async fn a_snapshot_that_reports_passed_trials_as_closed_reports_the_ramp_they_start() {
    let explicit = breaker("snapshot-ramp")
        .half_open_pct(10)
        .half_open_window(secs(1))
        .open_for(secs(1))
        .ramp(secs(10))
        .build_detached()
        .unwrap();
    // The derived recovery: a 2 s half-open share, then a 5 s ramp from 5 %.
    let derived = Breaker::builder("snapshot-ramp-derived")
        .timeout(Duration::from_millis(800))
        .build_detached()
        .unwrap();
    for b in [explicit, derived] {
        while b.state() == State::Closed {
            let _ = fail(&b, MS).await;
            advance(MS * 10).await;
        }
        // Past the open period (the explicit one), or a probe that answers (the derived).
        advance(secs(1)).await;
        let _ = ok(&b, MS).await;
        assert_eq!(b.state(), State::HalfOpen, "{}", b.name());
        // Every call the half-open admits answers, for less than its window (1 s, 2 s)...
        for _ in 0..30 {
            let _ = ok(&b, MS).await;
            advance(MS * 25).await;
        }
        // ... and its verdict falls due with no caller.
        advance(secs(2)).await;
        let seen = b.metrics();
        assert_eq!(seen.state, State::Closed, "{}", b.name());
        let share = seen.ramp_share.expect("the ramp its closing starts");
        assert!(share < 0.2, "{}: {share}", b.name());
        // What the next caller sees agrees.
        assert_eq!(b.ramp_share(), Some(share), "{}", b.name());
    }
}
