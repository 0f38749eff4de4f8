//! Issue 22's `probe_every`: one real call lets through while open, so a recovery is seen
//! within seconds (the ramp that follows half-open: `recovery_ramp.rs`). A paused clock.

mod common;

use std::future::pending;
use std::time::Duration;

use common::recovery::{admitted_of, breaker, retry_in, trip, Dep};
use common::{is_rejected, ok, secs, MS};
use fusebox_runtime::{BreakerBuilder, Error, Reason, Rejection, State};
use tokio::time::{advance, timeout};

#[tokio::test(start_paused = true)]
async fn while_open_one_call_per_interval_reaches_the_dependency() {
    let b = breaker("probe-rate")
        .probe_every(secs(1))
        .build_detached()
        .unwrap();
    trip(&b).await;
    let dep = Dep::default();
    // Ten callers a second for ten seconds, the dependency still down.
    for _ in 0..100 {
        let _ = dep.call(&b, true, MS).await;
        advance(99 * MS).await;
    }
    // The first probe waits one interval after opening, then one a second.
    assert!(
        (9..=10).contains(&dep.reached()),
        "{} probes",
        dep.reached()
    );
    assert_eq!(b.state(), State::Open);
    let m = b.metrics();
    assert_eq!(m.calls - m.rejected, 4 + u64::from(dep.reached()), "{m:?}");
}

#[tokio::test(start_paused = true)]
async fn without_probe_every_nothing_reaches_an_open_breaker() {
    let b = breaker("probe-off").build_detached().unwrap();
    trip(&b).await;
    let dep = Dep::default();
    for _ in 0..50 {
        assert!(is_rejected(&dep.call(&b, false, MS).await));
        advance(500 * MS).await;
    }
    assert_eq!(dep.reached(), 0);
}

#[tokio::test(start_paused = true)]
async fn a_failed_probe_never_extends_the_open_period() {
    let b = breaker("probe-fail")
        .probe_every(secs(1))
        .build_detached()
        .unwrap();
    trip(&b).await;
    let dep = Dep::default();
    // Probes fail all through the open period (the last one at 29 s).
    for _ in 0..29 {
        advance(secs(1)).await;
        let _ = dep.call(&b, true, MS).await;
    }
    assert!(dep.reached() >= 28, "{} probes", dep.reached());
    assert_eq!(b.state(), State::Open);
    let retry_in = retry_in(dep.call(&b, false, MS).await);
    // 30 s from opening, whatever the probes said.
    assert!(retry_in.unwrap() <= secs(1), "{retry_in:?}");
    advance(secs(1)).await;
    assert!(ok(&b, MS).await.is_ok());
    assert_eq!(
        b.state(),
        State::HalfOpen,
        "half-open at the end of open_for"
    );
    assert_eq!(b.metrics().times_opened, 1);
}

#[tokio::test(start_paused = true)]
async fn a_passed_probe_starts_half_open_at_once_and_counts_as_a_trial() {
    let b = breaker("probe-pass")
        .probe_every(secs(1))
        .half_open_calls(2)
        .build_detached()
        .unwrap();
    let mut rx = fusebox_runtime::registry().subscribe();
    trip(&b).await;
    advance(secs(3)).await;
    // The dependency is back: the probe's caller gets its answer.
    assert_eq!(ok(&b, 10 * MS).await, Ok(()));
    assert_eq!(b.state(), State::HalfOpen, "27 s before open_for ends");
    // The probe was the first of the two trials: one more closes it.
    assert_eq!(ok(&b, 10 * MS).await, Ok(()));
    assert_eq!(b.state(), State::Closed);
    let mine: Vec<_> = std::iter::from_fn(|| rx.try_recv().ok())
        .filter(|t| &*t.name == "probe-pass")
        .map(|t| (t.to, t.reason))
        .collect();
    assert_eq!(mine[1], (State::HalfOpen, Reason::ProbePassed), "{mine:?}");
    assert_eq!(
        mine[2],
        (State::Closed, Reason::TrialsPassed { ok: 2, failed: 0 })
    );
}

#[tokio::test(start_paused = true)]
async fn a_probe_that_is_all_half_open_asks_for_closes_the_breaker() {
    let b = breaker("probe-one")
        .probe_every(secs(2))
        .half_open_calls(1)
        .build_detached()
        .unwrap();
    trip(&b).await;
    advance(secs(2)).await;
    assert_eq!(ok(&b, MS).await, Ok(()));
    assert_eq!(b.state(), State::Closed);
}

#[tokio::test(start_paused = true)]
async fn a_probe_slow_by_the_trial_bound_does_not_pass() {
    // Slow but under the timeout (issue 15's case): the probe answers, yet stays open.
    let b = breaker("probe-slow")
        .trip_p95(100 * MS)
        .timeout(secs(2))
        .probe_every(secs(1))
        .build_detached()
        .unwrap();
    trip(&b).await;
    for _ in 0..10 {
        advance(secs(1)).await;
        assert_eq!(
            ok(&b, 300 * MS).await,
            Ok(()),
            "the probe's caller gets the answer"
        );
        assert_eq!(b.state(), State::Open);
    }
    // Answering fast again, the next probe passes.
    advance(secs(1)).await;
    assert_eq!(ok(&b, 10 * MS).await, Ok(()));
    assert_eq!(b.state(), State::HalfOpen);
}

#[tokio::test(start_paused = true)]
async fn a_probe_past_the_trial_timeout_fails_and_its_caller_is_answered() {
    let b = breaker("probe-timeout")
        .timeout(200 * MS)
        .probe_every(secs(1))
        .build_detached()
        .unwrap();
    trip(&b).await;
    advance(secs(1)).await;
    let r: Result<(), Error<&str>> = b.call(pending()).await;
    assert!(
        matches!(r, Err(Error::Rejected(Rejection::TimedOut { .. }))),
        "{r:?}"
    );
    assert_eq!(b.state(), State::Open);
}

#[tokio::test(start_paused = true)]
async fn a_cancelled_probe_changes_nothing_and_does_not_free_another() {
    let b = breaker("probe-cancel")
        .probe_every(secs(1))
        .build_detached()
        .unwrap();
    trip(&b).await;
    advance(secs(1)).await;
    let dep = Dep::default();
    // The probe's caller gives up after 10 ms, long before it is late.
    assert!(timeout(10 * MS, dep.call(&b, false, secs(1)))
        .await
        .is_err());
    assert_eq!(dep.reached(), 1);
    assert_eq!(b.state(), State::Open);
    assert_eq!(b.metrics().cancelled, 1);
    // Callers that give up do not raise the probe rate: the next probe is a second later.
    assert!(is_rejected(&dep.call(&b, false, MS).await));
    advance(990 * MS).await;
    assert_eq!(dep.call(&b, false, MS).await, Ok(()));
    assert_eq!((dep.reached(), b.state()), (2, State::HalfOpen));
}

#[tokio::test(start_paused = true)]
async fn probe_and_ramp_together_recover_in_seconds() {
    let b = breaker("probe-ramp")
        .probe_every(secs(1))
        .half_open_pct(10)
        .half_open_window(secs(2))
        .ramp(secs(5))
        .build()
        .unwrap();
    trip(&b).await;
    advance(secs(1)).await;
    assert_eq!(ok(&b, 10 * MS).await, Ok(()), "the probe passes");
    assert_eq!(b.state(), State::HalfOpen);
    advance(secs(2)).await;
    let _ = ok(&b, MS).await;
    assert_eq!(b.state(), State::Closed);
    let text = fusebox_runtime::export::prometheus();
    let line = text
        .lines()
        .find(|l| l.starts_with("fusebox_breaker_ramp_share{breaker=\"probe-ramp\"}"))
        .unwrap_or_else(|| panic!("{text}"));
    let share: f64 = line.rsplit(' ').next().unwrap().parse().unwrap();
    assert!((share - 0.1).abs() < 0.01, "{line}");
    advance(secs(5)).await;
    assert_eq!(admitted_of(&b, 10).await, 10);
    assert!(!fusebox_runtime::export::prometheus().contains("ramp_share{breaker=\"probe-ramp\"}"));
}

#[test]
fn bad_values_are_typed_errors() {
    use fusebox_runtime::ConfigError;
    let field = |r: Result<_, ConfigError>| match r {
        Err(ConfigError::OutOfRange { field, .. }) | Err(ConfigError::ZeroDuration { field }) => {
            field
        }
        other => panic!("{other:?}"),
    };
    assert_eq!(
        field(breaker("x").probe_every(secs(30)).config()),
        "probe_every"
    );
    assert_eq!(
        field(breaker("x").probe_every(Duration::ZERO).config()),
        "probe_every"
    );
    assert_eq!(field(breaker("x").ramp(Duration::ZERO).config()), "ramp");
    // With backoff the longest open period bounds it.
    let grows = breaker("x").backoff(2.0, secs(120)).probe_every(secs(60));
    assert_eq!(grows.config().unwrap().probe_every(), Some(secs(60)));
    let s = BreakerBuilder::from_settings("x", [("probe_every", "2s"), ("ramp", "20s")])
        .unwrap()
        .config()
        .unwrap();
    assert_eq!((s.probe_every(), s.ramp()), (Some(secs(2)), Some(secs(20))));
}

#[tokio::test(start_paused = true)]
async fn each_key_probes_and_ramps_on_its_own() {
    let template = breaker("probe-keyed")
        .probe_every(secs(1))
        .half_open_calls(1)
        .ramp(secs(10))
        .config()
        .unwrap();
    let eu = fusebox_runtime::registry().keyed(&template, &"eu");
    let us = fusebox_runtime::registry().keyed(&template, &"us");
    trip(&eu).await;
    trip(&us).await;
    advance(secs(1)).await;
    assert_eq!(ok(&eu, MS).await, Ok(()), "eu's probe");
    assert_eq!((eu.state(), us.state()), (State::Closed, State::Open));
    assert!(eu.metrics().ramp_share.is_some());
    assert_eq!(ok(&us, MS).await, Ok(()), "us has a probe of its own");
    assert_eq!(us.state(), State::Closed);
}

#[tokio::test(start_paused = true)]
async fn a_probe_runs_under_the_trial_timeout_not_the_call_timeout() {
    // A cold dependency answering in 1 s: too slow for the 100 ms call timeout, in time for
    // the 2 s `half_open_timeout` that trials (and so probes) run under.
    let b = breaker("probe-trial-timeout")
        .timeout(100 * MS)
        .half_open_timeout(secs(2))
        .probe_every(secs(1))
        .half_open_calls(1)
        .build_detached()
        .unwrap();
    trip(&b).await;
    advance(secs(1)).await;
    assert_eq!(
        ok(&b, secs(1)).await,
        Ok(()),
        "the probe waited for the answer"
    );
    assert_eq!(b.state(), State::Closed);
    let r = ok(&b, secs(1)).await;
    assert!(
        matches!(r, Err(Error::Rejected(Rejection::TimedOut { .. }))),
        "{r:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_forced_open_breaker_sends_no_probes() {
    let b = breaker("probe-forced")
        .probe_every(secs(1))
        .build_detached()
        .unwrap();
    b.force_open();
    let dep = Dep::default();
    for _ in 0..20 {
        advance(secs(1)).await;
        assert!(is_rejected(&dep.call(&b, false, MS).await));
    }
    assert_eq!(dep.reached(), 0, "an operator's hold is not probed");
}
