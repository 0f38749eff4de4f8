//! Issue 26: what a breaker given only its call's `timeout` derives, as a user sees it on a
//! paused clock: a slow rule that opens on a slow dependency, probes that keep their pace
//! while the dependency refuses at once and back off while it hangs, and explicit settings
//! that keep today's behaviour.

use std::sync::atomic::{AtomicU32, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Duration;

use fusebox_runtime::{Breaker, State};
use tokio::time::{advance, sleep};

const MS: Duration = Duration::from_millis(1);

/// How the dependency misbehaves after the breaker opened.
#[derive(Clone, Copy)]
enum Down {
    /// Refuses at once.
    Refuses,
    /// Never answers.
    Hangs,
}

/// Opens `b` with fast failures, then offers one call every 100 ms for `secs` seconds to a
/// dependency that is `down`; returns how many calls reached it after the opening.
async fn reached_while_down(b: &Breaker, down: Down, secs: u64) -> u32 {
    while b.state() != State::Open {
        let _ = b.call(async { Err::<(), _>("refused") }).await;
        advance(10 * MS).await;
    }
    let reached = Arc::new(AtomicU32::new(0));
    for _ in 0..secs * 10 {
        let (b, reached) = (b.clone(), reached.clone());
        tokio::spawn(async move {
            let _ = b
                .call(async move {
                    reached.fetch_add(1, Relaxed);
                    if let Down::Hangs = down {
                        sleep(Duration::from_secs(3600)).await;
                    }
                    Err::<(), _>("down")
                })
                .await;
        });
        advance(100 * MS).await;
    }
    reached.load(Relaxed)
}

#[tokio::test(start_paused = true)]
async fn derived_probes_keep_their_pace_while_the_dependency_refuses() {
    let b = Breaker::builder("derived-refuses")
        .timeout(100 * MS)
        .build_detached()
        .unwrap();
    let reached = reached_while_down(&b, Down::Refuses, 600).await;
    // One probe a second for ten minutes (plus the backstop's few trials): a refusal is free.
    assert!(reached >= 550, "{reached} calls reached it");
    assert!(reached <= 700, "{reached} calls reached it");
}

#[tokio::test(start_paused = true)]
async fn derived_probes_back_off_while_the_dependency_hangs() {
    let b = Breaker::builder("derived-hangs")
        .timeout(100 * MS)
        .build_detached()
        .unwrap();
    let reached = reached_while_down(&b, Down::Hangs, 600).await;
    // Each probe holds its caller for the trial timeout (400 ms): the next waits an eighth of
    // the time since the opening, so ten minutes cost tens of calls, not six hundred.
    assert!(reached <= 100, "{reached} calls reached it");
    assert!(reached >= 20, "still probed: {reached}");
}

#[tokio::test(start_paused = true)]
async fn a_probe_interval_given_keeps_its_pace_while_the_dependency_hangs() {
    let b = Breaker::builder("given-hangs")
        .timeout(100 * MS)
        .probe_every(Duration::from_secs(1))
        .build_detached()
        .unwrap();
    assert!(!b.config().settings().probe_backs_off());
    let reached = reached_while_down(&b, Down::Hangs, 120).await;
    // Open 30 s, half-open 30 s, twice: a probe each second of the open minute, plus trials.
    assert!(reached >= 60, "{reached} calls reached it");
    let derived = Breaker::builder("derived-hangs-2m")
        .timeout(100 * MS)
        .build_detached()
        .unwrap();
    let backed_off = reached_while_down(&derived, Down::Hangs, 120).await;
    assert!(
        backed_off * 2 < reached,
        "derived {backed_off}, given {reached}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_timeout_alone_opens_on_a_dependency_slow_under_its_timeout() {
    // 2 s answers under a 3 s timeout never fail: only the derived slow rule (1.5 s) sees them.
    let b = Breaker::builder("derived-slow")
        .timeout(Duration::from_secs(3))
        .build_detached()
        .unwrap();
    for _ in 0..100 {
        let b = b.clone();
        tokio::spawn(async move {
            let _ = b
                .call(async {
                    sleep(Duration::from_secs(2)).await;
                    Ok::<(), ()>(())
                })
                .await;
        });
        advance(50 * MS).await;
    }
    advance(2 * Duration::from_secs(1)).await;
    assert_eq!(b.state(), State::Open);
    // With a window given, no slow rule is derived: today's behaviour, failures only.
    let given = Breaker::builder("given-window")
        .timeout(Duration::from_secs(3))
        .window(Duration::from_secs(30))
        .build_detached()
        .unwrap();
    assert!(given.config().slow().is_none());
}

#[tokio::test(start_paused = true)]
async fn a_timeout_alone_stays_open_while_answers_stay_slow_under_it_then_closes_once_fast() {
    // Issue 26's "slow under the timeout": 2 s answers under a 3 s timeout, 20 calls a second.
    // Opened on slowness alone, the derived trials (which pass by answering, for a provider
    // that warms) are judged by the slow bound, so the breaker never closes while slow.
    let b = Breaker::builder("derived-slow-stays-open")
        .timeout(Duration::from_secs(3))
        .build_detached()
        .unwrap();
    let slow = Arc::new(std::sync::atomic::AtomicBool::new(true));
    let offer = |b: &Breaker| {
        let (b, slow) = (b.clone(), slow.clone());
        tokio::spawn(async move {
            let _ = b
                .call(async move {
                    let d = if slow.load(Relaxed) { 2000 } else { 20 };
                    sleep(d * MS).await;
                    Ok::<(), ()>(())
                })
                .await;
        });
    };
    let (mut opened, mut closed_while_slow) = (false, 0);
    let mut last = b.state();
    for _ in 0..20 * 180 {
        offer(&b);
        advance(50 * MS).await;
        let now = b.state();
        opened |= now == State::Open;
        if opened && now == State::Closed && last != State::Closed {
            closed_while_slow += 1;
        }
        last = now;
    }
    assert!(opened, "2 s answers open a breaker given a 3 s timeout");
    assert_eq!(closed_while_slow, 0, "closed while every answer was slow");
    // Fast again: the trials pass by the slow bound and the breaker closes.
    slow.store(false, Relaxed);
    let mut back = None;
    for tick in 0..20 * 120 {
        offer(&b);
        advance(50 * MS).await;
        if b.state() == State::Closed {
            back = Some(tick as f64 / 20.0);
            break;
        }
    }
    let back = back.expect("closed within two minutes of healing");
    assert!(back <= 60.0, "closed {back} s after healing");
}
