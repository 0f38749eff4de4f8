//! On the real clock, a success that answered at once is put in its slot by the coarse clock
//! (`runtime/src/clock/coarse.rs`) rather than by an exact read: the window must still hold
//! the calls of its last window of real time, each in the slot of an instant between its start
//! and its end. Bounded real time (about 1.5 s); nothing in this binary pauses a clock (one
//! paused clock turns the coarse clock off for the process).

use std::time::{Duration, Instant};

use fusebox_runtime::{Breaker, Error, Rejection, State};

async fn ok_now(b: &Breaker) -> Result<(), Error<&'static str>> {
    b.call(async { Ok(()) }).await
}

async fn fail_now(b: &Breaker) -> Result<(), Error<&'static str>> {
    b.call(async { Err("boom") }).await
}

/// A second of window (ten 100 ms slots), so that the test crosses many slot edges.
const WINDOW: Duration = Duration::from_millis(1000);
const SLOT: Duration = Duration::from_millis(100);
/// The window's slots count from its first call, which begins within this of the test's
/// origin; a call is counted in the slot of some instant between its start and its end.
const EDGE: Duration = Duration::from_millis(3);

#[test]
fn the_window_holds_the_last_second_of_real_time_calls() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let b = Breaker::builder("coarse-clock-real")
        .window(WINDOW)
        .min_calls(1_000_000)
        .build_detached()
        .unwrap();
    let slot_of = |t: Duration| (t.as_nanos() / SLOT.as_nanos()) as u32;
    rt.block_on(async {
        let origin = Instant::now();
        // (start, end) of every call, from the origin.
        let mut calls: Vec<(Duration, Duration)> = Vec::new();
        let mut checks = 0;
        while origin.elapsed() < Duration::from_millis(1500) {
            let start = origin.elapsed();
            ok_now(&b).await.unwrap();
            calls.push((start, origin.elapsed()));
            if calls.len() % 25 == 0 {
                let before = origin.elapsed();
                let seen = b.metrics().window_calls;
                let after = origin.elapsed();
                if slot_of(before) != slot_of(after + EDGE)
                    || slot_of(before) != slot_of(before.saturating_sub(EDGE))
                {
                    continue; // read across a slot's edge: either count would be right
                }
                // The oldest slot still in the window starts here.
                let from = SLOT * slot_of(before).saturating_sub(9);
                let surely = calls.iter().filter(|(s, _)| *s >= from + EDGE).count() as u64;
                let maybe = calls.iter().filter(|(_, e)| *e + EDGE >= from).count() as u64;
                assert!(
                    (surely..=maybe).contains(&seen),
                    "at {before:?}: the window holds {seen} calls, expected {surely}..={maybe}"
                );
                checks += 1;
            }
            // A call every ~0.2 ms: every slot's edge is crossed by many.
            std::thread::sleep(Duration::from_micros(200));
        }
        assert!(checks > 20, "only {checks} checks");
    });
}

/// An open period refused on the coarse clock: never after its deadline, and `retry_in`
/// never more than the period nor less than what is left.
#[test]
fn an_open_period_refuses_until_its_deadline_and_no_longer() {
    const OPEN_FOR: Duration = Duration::from_millis(300);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let b = Breaker::builder("coarse-clock-open")
        .window_calls(2)
        .min_calls(2)
        .failure_rate(50)
        .open_for(OPEN_FOR)
        .build_detached()
        .unwrap();
    rt.block_on(async {
        for round in 0..3 {
            let _ = fail_now(&b).await;
            // The period starts within the second failure: its deadline lies `OPEN_FOR`
            // after some instant between `start` and `start + gap`.
            let start = Instant::now();
            let _ = fail_now(&b).await;
            let gap = start.elapsed();
            assert_eq!(b.state(), State::Open, "round {round}");
            let mut refused = 0;
            let let_in = loop {
                let before = start.elapsed();
                match ok_now(&b).await {
                    Err(Error::Rejected(Rejection::Open { retry_in, .. })) => {
                        let after = start.elapsed();
                        let retry_in = retry_in.expect("an open refusal says when");
                        assert!(retry_in <= OPEN_FOR, "round {round}: retry_in {retry_in:?}");
                        assert!(
                            after + retry_in >= OPEN_FOR,
                            "round {round}: refused at {after:?}, retry_in {retry_in:?} ends early"
                        );
                        assert!(
                            before < OPEN_FOR + gap,
                            "round {round}: refused at {before:?}, after the deadline"
                        );
                        refused += 1;
                    }
                    _ => break (before, start.elapsed()),
                }
                std::thread::sleep(Duration::from_micros(300));
            };
            assert!(refused > 20, "round {round}: only {refused} refusals");
            // Refused until the deadline (each refusal above began before it), let in after.
            assert!(
                let_in.1 >= OPEN_FOR,
                "round {round}: let in {let_in:?} after opening"
            );
            // Half-open: close it again for the next round.
            b.reset();
        }
    });
}

/// A timed force open on the real clock (judged on the exact clock: the forced-open fast path
/// takes only held forces): refused until it lapses and no longer, `retry_in` never more than
/// the force nor less than what is left, and every refusal counted as forced open.
#[test]
fn a_timed_force_open_refuses_until_it_lapses_and_no_longer() {
    const FORCED_FOR: Duration = Duration::from_millis(300);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let b = Breaker::builder("coarse-clock-forced")
        .build_detached()
        .unwrap();
    rt.block_on(async {
        for round in 0..3 {
            let counted_before = b.metrics().rejected_by_reason.forced_open;
            // The force starts within this gap: it lapses `FORCED_FOR` after some instant in it.
            let start = Instant::now();
            b.force_open_for(FORCED_FOR);
            let gap = start.elapsed();
            let mut refused = 0;
            let let_in = loop {
                let before = start.elapsed();
                match ok_now(&b).await {
                    Err(Error::Rejected(Rejection::Open {
                        retry_in, state, ..
                    })) => {
                        let after = start.elapsed();
                        assert_eq!(state, State::ForcedOpen, "round {round}");
                        let retry_in = retry_in.expect("a timed force says when it lapses");
                        assert!(
                            retry_in <= FORCED_FOR,
                            "round {round}: retry_in {retry_in:?}"
                        );
                        assert!(
                            after + retry_in + gap >= FORCED_FOR,
                            "round {round}: refused at {after:?}, retry_in {retry_in:?} ends early"
                        );
                        assert!(
                            before < FORCED_FOR + gap,
                            "round {round}: refused at {before:?}, after the lapse"
                        );
                        refused += 1;
                    }
                    _ => break (before, start.elapsed()),
                }
                std::thread::sleep(Duration::from_micros(300));
            };
            assert!(refused > 20, "round {round}: only {refused} refusals");
            assert!(
                let_in.1 >= FORCED_FOR,
                "round {round}: let in {let_in:?} after the force"
            );
            assert_eq!(
                b.metrics().rejected_by_reason.forced_open - counted_before,
                refused,
                "round {round}: every refusal counted as forced open"
            );
            b.reset();
        }
    });
}

/// A force open held until changed (the forced-open fast path, on the coarse clock): refused
/// with no `retry_in`, every refusal counted, and let in at once after a reset.
#[test]
fn a_held_force_open_refuses_without_retry_in_until_reset() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let b = Breaker::builder("coarse-clock-held")
        .build_detached()
        .unwrap();
    rt.block_on(async {
        b.force_open();
        for _ in 0..1000 {
            match ok_now(&b).await {
                Err(Error::Rejected(Rejection::Open {
                    retry_in: None,
                    state: State::ForcedOpen,
                    ..
                })) => {}
                other => panic!("held open, got {other:?}"),
            }
        }
        assert_eq!(b.metrics().rejected_by_reason.forced_open, 1000);
        b.reset();
        ok_now(&b).await.expect("let in after a reset");
    });
}
