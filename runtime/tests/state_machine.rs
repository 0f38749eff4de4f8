//! Every transition of the breaker, on a paused clock.

mod common;
use common::*;

use fusebox_runtime::{Breaker, Error, Reason, Rejection, State};
use tokio::time::advance;

fn lesson(name: &str) -> Breaker {
    // A small breaker: 5 failures of the last 10 calls open it, 10 s open, 3 trial calls.
    Breaker::builder(name)
        .window_calls(10)
        .failure_rate(50)
        .open_for(secs(10))
        .half_open_calls(3)
        .build()
        .unwrap()
}

#[tokio::test(start_paused = true)]
async fn five_of_the_last_ten_opens() {
    let b = lesson("sm-five-of-ten");
    for _ in 0..5 {
        ok(&b, MS).await.unwrap();
    }
    for _ in 0..4 {
        assert!(fail(&b, MS).await.is_err());
    }
    assert_eq!(b.state(), State::Closed, "4 of 9 is below 50 %");
    fail(&b, MS).await.unwrap_err();
    assert_eq!(b.state(), State::Open, "5 of 10 is 50 %: open");
    let r = ok(&b, MS).await;
    match r {
        Err(Error::Rejected(Rejection::Open {
            name,
            state,
            retry_in,
        })) => {
            assert_eq!(&*name, "sm-five-of-ten");
            assert_eq!(state, State::Open);
            assert!(retry_in.unwrap() <= secs(10));
        }
        other => panic!("expected an Open rejection, got {other:?}"),
    }
}

#[tokio::test(start_paused = true)]
async fn min_calls_holds_judgement() {
    let b = Breaker::builder("sm-min-calls")
        .min_calls(20)
        .build()
        .unwrap();
    for _ in 0..19 {
        let _ = fail(&b, MS).await;
    }
    assert_eq!(b.state(), State::Closed, "19 failures are below min_calls");
    let _ = fail(&b, MS).await;
    assert_eq!(b.state(), State::Open);
}

#[tokio::test(start_paused = true)]
async fn time_window_rolls_over() {
    let b = Breaker::builder("sm-time-window")
        .window(secs(10))
        .min_calls(4)
        .build()
        .unwrap();
    for _ in 0..3 {
        let _ = fail(&b, MS).await;
    }
    advance(secs(11)).await;
    // The three old failures have left the window: one new failure of four calls is 25 %.
    let _ = fail(&b, MS).await;
    for _ in 0..3 {
        ok(&b, MS).await.unwrap();
    }
    assert_eq!(b.state(), State::Closed);
    assert_eq!(b.metrics().window_calls, 4);
}

#[tokio::test(start_paused = true)]
async fn half_open_calls_all_succeed_then_close() {
    let b = lesson("sm-calls-close");
    for _ in 0..10 {
        let _ = fail(&b, MS).await;
    }
    assert_eq!(b.state(), State::Open);
    advance(secs(10)).await;
    ok(&b, MS).await.unwrap();
    assert_eq!(b.state(), State::HalfOpen);
    ok(&b, MS).await.unwrap();
    ok(&b, MS).await.unwrap();
    assert_eq!(b.state(), State::Closed);
    assert_eq!(b.metrics().window_calls, 0, "closing starts a fresh window");
}

#[tokio::test(start_paused = true)]
async fn half_open_failure_reopens() {
    let b = lesson("sm-calls-reopen");
    for _ in 0..10 {
        let _ = fail(&b, MS).await;
    }
    advance(secs(10)).await;
    ok(&b, MS).await.unwrap();
    fail(&b, MS).await.unwrap_err();
    assert_eq!(b.state(), State::Open);
    assert_eq!(b.metrics().times_opened, 2);
}

#[tokio::test(start_paused = true)]
async fn half_open_share_admits_a_spread_and_judges_the_rate() {
    let b = Breaker::builder("sm-share")
        .window_calls(10)
        .open_for(secs(30))
        .half_open_pct(10)
        .half_open_window(secs(30))
        .build()
        .unwrap();
    for _ in 0..10 {
        let _ = fail(&b, MS).await;
    }
    advance(secs(30)).await;
    // 100 calls over the sampling window: 10 % become trials, the first one included.
    let mut admitted = Vec::new();
    for i in 0..100 {
        let r = ok(&b, MS).await;
        if r.is_ok() {
            admitted.push(i);
        }
        advance(secs(29) / 100).await;
    }
    assert_eq!(admitted, (0..100).step_by(10).collect::<Vec<_>>());
    assert_eq!(
        b.state(),
        State::HalfOpen,
        "judged only when the window ends"
    );
    advance(secs(2)).await;
    ok(&b, MS).await.unwrap();
    assert_eq!(b.state(), State::Closed);
}

#[tokio::test(start_paused = true)]
async fn half_open_share_with_failing_trials_reopens_after_the_window() {
    let b = Breaker::builder("sm-share-reopen")
        .window_calls(10)
        .half_open_pct(50)
        .half_open_window(secs(5))
        .build()
        .unwrap();
    for _ in 0..10 {
        let _ = fail(&b, MS).await;
    }
    advance(secs(30)).await;
    for _ in 0..10 {
        let _ = fail(&b, MS).await;
        advance(secs(1)).await;
    }
    assert_eq!(b.state(), State::Open);
}

#[tokio::test(start_paused = true)]
async fn open_period_is_fixed_unless_asked_and_capped() {
    let grow = Breaker::builder("sm-backoff")
        .window_calls(2)
        .open_for(secs(30))
        .backoff(2.0, secs(60))
        .half_open_calls(1)
        .build()
        .unwrap();
    let mut periods = Vec::new();
    let _ = fail(&grow, MS).await;
    let _ = fail(&grow, MS).await;
    for _ in 0..4 {
        let Err(Error::Rejected(Rejection::Open {
            retry_in: Some(d), ..
        })) = ok(&grow, MS).await
        else {
            panic!("expected open");
        };
        periods.push(d.as_secs_f64().round() as u64);
        advance(d).await;
        // The trial fails: open again.
        let _ = fail(&grow, MS).await;
    }
    assert_eq!(periods, vec![30, 60, 60, 60]);
}

#[tokio::test(start_paused = true)]
async fn forced_states_and_reset() {
    let b = lesson("sm-forced");
    b.force_open();
    assert_eq!(b.state(), State::ForcedOpen);
    advance(secs(3600)).await;
    assert!(matches!(
        ok(&b, MS).await,
        Err(Error::Rejected(Rejection::Open {
            state: State::ForcedOpen,
            ..
        }))
    ));
    b.force_close();
    for _ in 0..20 {
        let _ = fail(&b, MS).await;
    }
    assert_eq!(b.state(), State::ForcedClosed, "forced closed never trips");
    b.reset();
    assert_eq!(b.state(), State::Closed);
    assert_eq!(b.metrics().window_calls, 0);
}

#[tokio::test(start_paused = true)]
async fn a_flapping_breaker_is_stuck_and_every_transition_is_broadcast() {
    let mut rx = fusebox_runtime::registry().subscribe();
    let b = Breaker::builder("sm-stuck")
        .window_calls(2)
        .open_for(secs(60))
        .half_open_calls(1)
        .alert_after(secs(300))
        .build()
        .unwrap();
    let _ = fail(&b, MS).await;
    let _ = fail(&b, MS).await;
    // Open, half-open, open again... for six minutes: away from closed the whole time.
    for _ in 0..6 {
        advance(secs(60)).await;
        let _ = fail(&b, MS).await;
    }
    let m = b.metrics();
    assert!(
        m.stuck,
        "open/half-open cycling for 6 minutes must be stuck"
    );
    assert_eq!(
        fusebox_runtime::stuck_breakers()
            .iter()
            .filter(|s| s.name == "sm-stuck")
            .count(),
        1
    );
    b.reset();
    assert!(!b.metrics().stuck);

    let mut seen = Vec::new();
    while let Ok(t) = rx.try_recv() {
        if &*t.name == "sm-stuck" {
            seen.push((t.from, t.to));
            if t.to == State::Open && t.from == State::Closed {
                assert!(matches!(t.reason, Reason::FailureRate { .. }));
            }
        }
    }
    assert_eq!(seen.first(), Some(&(State::Closed, State::Open)));
    assert_eq!(seen.get(1), Some(&(State::Open, State::HalfOpen)));
    assert_eq!(seen.get(2), Some(&(State::HalfOpen, State::Open)));
    assert_eq!(seen.last(), Some(&(State::Open, State::Closed)));
    assert_eq!(seen.len(), 1 + 6 * 2 + 1);
}

#[tokio::test(start_paused = true)]
async fn an_open_period_that_ended_reads_half_open_without_a_call() {
    // Two reviews: past `open_for` an idle breaker still read `Open` until its next call,
    // where a lapsed forced state and a due half-open verdict were applied on a read.
    let b = Breaker::builder("open-elapsed-read")
        .window_calls(1)
        .min_calls(1)
        .half_open_calls(1)
        .open_for(std::time::Duration::from_secs(5))
        .build_detached()
        .unwrap();
    let _ = b.call(async { Err::<(), _>("down") }).await;
    assert_eq!(b.state(), State::Open);
    advance(std::time::Duration::from_millis(4_999)).await;
    assert_eq!((b.state(), b.metrics().state), (State::Open, State::Open));
    advance(std::time::Duration::from_millis(1)).await;
    assert_eq!(b.metrics().state, State::HalfOpen, "reported as it becomes");
    assert_eq!(b.state(), State::HalfOpen);
    // The half-open is the one a caller would have found: its trial closes it.
    b.call(async { Ok::<(), ()>(()) }).await.unwrap();
    assert_eq!(b.state(), State::Closed);
}
