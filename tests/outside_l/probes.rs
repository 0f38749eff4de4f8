//! Issues 22 x 31: a probe that ends ignored, or refused by a full bulkhead, is no trial and
//! gives its probe back; a failed one waits for the next period.

use super::*;

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
