//! Issue 22: recovery that follows the dependency. `probe_every` lets one real call through
//! while open, so a recovery is seen within seconds; `ramp` lets traffic back in gradually
//! after half-open passes, judged all along. All on a paused clock.

mod common;

use std::future::pending;
use std::sync::atomic::{AtomicU32, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Duration;

use common::{fail, is_rejected, ok, secs, MS};
use fusebox_runtime::{Breaker, BreakerBuilder, Error, Reason, Rejection, State};
use tokio::time::{advance, sleep, timeout};

/// Four calls in a row, half failing opens it; open 30 s.
fn breaker(name: &str) -> BreakerBuilder {
    Breaker::builder(name)
        .window_calls(4)
        .min_calls(4)
        .failure_rate(50)
        .open_for(secs(30))
}

/// The `retry_in` of a call refused while open.
fn retry_in(r: Result<(), Error<&'static str>>) -> Option<Duration> {
    match r {
        Err(Error::Rejected(Rejection::Open { retry_in, .. })) => retry_in,
        other => panic!("refused while open, got {other:?}"),
    }
}

async fn trip(b: &Breaker) {
    for _ in 0..4 {
        let _ = fail(b, MS).await;
    }
    assert_eq!(b.state(), State::Open);
}

/// A dependency whose answers are counted: `down` decides whether it fails.
#[derive(Clone, Default)]
struct Dep {
    reached: Arc<AtomicU32>,
}

impl Dep {
    async fn call(
        &self,
        b: &Breaker,
        fails: bool,
        latency: Duration,
    ) -> Result<(), Error<&'static str>> {
        let reached = self.reached.clone();
        b.call(async move {
            reached.fetch_add(1, Relaxed);
            sleep(latency).await;
            if fails {
                Err("down")
            } else {
                Ok(())
            }
        })
        .await
    }
    fn reached(&self) -> u32 {
        self.reached.load(Relaxed)
    }
}

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

/// `n` calls that answer at once; how many went through.
async fn admitted_of(b: &Breaker, n: u32) -> u32 {
    let mut through = 0;
    for _ in 0..n {
        match b.call(async { Ok::<(), &str>(()) }).await {
            Ok(()) => through += 1,
            Err(Error::Rejected(Rejection::Open { state, .. })) => {
                assert_eq!(state, State::Closed, "refused by the ramp")
            }
            Err(e) => panic!("{e:?}"),
        }
    }
    through
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
