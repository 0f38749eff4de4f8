//! Half-open's trials as a user sees them: a trial that ends with nothing to judge (ignored,
//! cancelled early) gives its slot to the next caller with a share as with `half_open_calls`;
//! without any timeout, trials are cut at the documented bound (`open_for` with
//! `half_open_calls`, the window with a share) so none can hold half-open, and
//! `half_open_calls`' wait is 30 s whatever `open_for` is.

use std::time::Duration;

use fusebox_runtime::{Breaker, BreakerBuilder, Completion, Error, Outcome, Rejection, State};
use tokio::time::{advance, sleep};

const fn s(n: u64) -> Duration {
    Duration::from_secs(n)
}

/// `Err("ignore")` is ignored; any other `Err` is a failure.
fn classify(r: &Result<u16, &'static str>) -> Outcome {
    Outcome::of(r, |e| *e == "ignore", |_| true, |_| false)
}

async fn call(b: &Breaker, r: Result<u16, &'static str>) -> Completion<u16, &'static str> {
    b.call_classified(async move { r }, classify).await
}

/// Opened by two failures, then `open_for` (10 s) advanced: half-open.
async fn half_open(b: BreakerBuilder) -> Breaker {
    let b = b
        .window_calls(2)
        .min_calls(2)
        .open_for(s(10))
        .build_detached()
        .unwrap();
    call(&b, Err("down")).await;
    call(&b, Err("down")).await;
    advance(s(10)).await;
    assert_eq!(b.state(), State::HalfOpen);
    b
}

fn refused(c: &Completion<u16, &'static str>) -> bool {
    matches!(
        c,
        Completion::Failed(Error::Rejected(Rejection::Open { .. }))
    )
}

#[tokio::test(start_paused = true)]
async fn with_a_share_an_ignored_trial_gives_its_slot_to_the_next_caller() {
    let b = half_open(
        Breaker::builder("slots-share-ignored")
            .half_open_pct(20)
            .half_open_window(s(5)),
    )
    .await;
    // The first caller is a trial; it ends ignored, so the next one takes its place.
    assert!(matches!(
        call(&b, Err("ignore")).await,
        Completion::Ignored(_)
    ));
    assert!(matches!(call(&b, Ok(200)).await, Completion::Ok(200)));
    // Then one caller in five, as before: 20 % of the traffic is tried, no more.
    let tried = {
        let mut n = 0;
        for _ in 0..20 {
            n += usize::from(!refused(&call(&b, Ok(200)).await));
        }
        n
    };
    assert_eq!(tried, 4);
    advance(s(5)).await;
    call(&b, Ok(200)).await;
    assert_eq!(b.state(), State::Closed);
    assert_eq!(b.metrics().ignored, 1);
}

#[tokio::test(start_paused = true)]
async fn with_a_share_a_trial_cancelled_early_gives_its_slot_to_the_next_caller() {
    let b = half_open(
        Breaker::builder("slots-share-cancelled")
            .half_open_pct(20)
            .half_open_window(s(5)),
    )
    .await;
    // The first caller's trial is dropped while it waits, well before any bound.
    let hung = b.call(async {
        sleep(s(60)).await;
        Ok::<u16, &str>(200)
    });
    assert!(
        tokio::time::timeout(Duration::from_millis(10), hung)
            .await
            .is_err(),
        "the trial was admitted and waited"
    );
    assert!(matches!(call(&b, Ok(200)).await, Completion::Ok(200)));
    assert!(refused(&call(&b, Ok(200)).await));
    assert_eq!(b.state(), State::HalfOpen);
}

#[tokio::test(start_paused = true)]
async fn without_any_timeout_a_trial_of_half_open_calls_is_cut_at_open_for() {
    let b = half_open(Breaker::builder("slots-calls-untimed").half_open_calls(1)).await;
    assert_eq!(b.config().half_open_timeout(), None);
    // The documented bound with no timeout at all: `open_for` (10 s), a timed-out failure.
    let r = b
        .call(async {
            sleep(s(12)).await;
            Ok::<u16, &str>(200)
        })
        .await;
    assert!(
        matches!(r, Err(Error::Rejected(Rejection::TimedOut { after, .. })) if after == s(10)),
        "{r:?}"
    );
    assert_eq!(b.state(), State::Open);
}

#[tokio::test(start_paused = true)]
async fn without_any_timeout_half_open_calls_reopens_30_s_in_whatever_open_for_is() {
    let b = Breaker::builder("slots-calls-bound")
        .window_calls(2)
        .min_calls(2)
        .open_for(s(60))
        .half_open_calls(3)
        .build_detached()
        .unwrap();
    call(&b, Err("down")).await;
    call(&b, Err("down")).await;
    advance(s(60)).await;
    call(&b, Ok(200)).await;
    assert_eq!(b.state(), State::HalfOpen);
    advance(s(29)).await;
    assert_eq!(b.state(), State::HalfOpen);
    // The documented bound: 30 s after half-open began (no trial timeout to wait longer for).
    advance(s(1)).await;
    assert_eq!(b.state(), State::Open);
}

#[tokio::test(start_paused = true)]
async fn without_any_timeout_a_sampled_half_open_still_ends_when_its_trials_hang() {
    let b = half_open(
        Breaker::builder("slots-share-hung")
            .half_open_pct(100)
            .half_open_window(s(5)),
    )
    .await;
    // The dependency hangs: the only trial is cut at the half-open window, a timed-out
    // failure, so the breaker reopens rather than wait as long as the call would.
    let r = b
        .call(async {
            sleep(s(3600)).await;
            Ok::<u16, &str>(200)
        })
        .await;
    assert!(
        matches!(r, Err(Error::Rejected(Rejection::TimedOut { after, .. })) if after == s(5)),
        "{r:?}"
    );
    assert_eq!(b.state(), State::Open);
}
