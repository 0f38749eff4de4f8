//! A metrics snapshot only reads. Every `#[tokio::test(start_paused = true)]` has a clock of
//! its own, and a test that slept an hour (auto-advanced in an instant) reads `metrics()` an
//! hour ahead of a test running beside it. Its snapshot must not age that test's time window
//! (whose later calls would then land behind the window's head and go unrecorded) nor end its
//! forced state early: both failed before the snapshot was made read-only.

use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use fusebox_runtime::{metrics, Breaker, State};
use tokio::time::advance;

fn paused() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap()
}

/// Reads `metrics()` on a paused clock an hour ahead, on a thread of its own.
fn snapshot_an_hour_ahead() {
    thread::spawn(|| {
        paused().block_on(async {
            advance(Duration::from_secs(3600)).await;
            let m = metrics();
            assert!(m.breaker("snap-window").is_some() && m.breaker("snap-forced").is_some());
        })
    })
    .join()
    .unwrap();
}

#[test]
fn a_snapshot_on_a_clock_ahead_leaves_a_breaker_on_its_own_clock_alone() {
    let (ready, go) = mpsc::channel::<()>();
    let (done, finished) = mpsc::channel::<()>();
    let owner = thread::spawn(move || {
        paused().block_on(async {
            let window = Breaker::builder("snap-window")
                .window(Duration::from_secs(30))
                .min_calls(4)
                .build()
                .unwrap();
            let forced = Breaker::builder("snap-forced").build().unwrap();
            forced.force_open_for(Duration::from_secs(60));
            ready.send(()).unwrap();
            finished.recv().unwrap();
            // This runtime's clock has not moved: the hold has 60 s left, and four failures
            // in the window open the breaker.
            assert_eq!(
                forced.state(),
                State::ForcedOpen,
                "the hold is this clock's"
            );
            for _ in 0..4 {
                let _ = window.call(async { Err::<(), _>("down") }).await;
            }
            assert_eq!(window.state(), State::Open, "the failures were recorded");
            advance(Duration::from_secs(61)).await;
            assert_eq!(forced.state(), State::HalfOpen, "and it ends on this clock");
        })
    });
    go.recv().unwrap();
    snapshot_an_hour_ahead();
    done.send(()).unwrap();
    owner.join().unwrap();
}
