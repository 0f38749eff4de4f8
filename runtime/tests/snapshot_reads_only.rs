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

/// A review: a snapshot reported the state a breaker was due to move to, but its time in
/// state, and its count of openings, of the state before (HalfOpen "for 15 s" 5 s after its
/// 10 s open period ended; Open with the reopening not counted). Each now dates a due
/// transition when it fell due.
#[test]
fn a_due_transition_is_reported_with_its_own_time_and_opening() {
    paused().block_on(async {
        let s = Duration::from_secs;
        let b = Breaker::builder("snapshot-due-times")
            .window_calls(2)
            .min_calls(2)
            .open_for(s(10))
            .half_open_calls(3)
            .build_detached()
            .unwrap();
        for _ in 0..2 {
            let _ = b.call(async { Err::<(), _>("down") }).await;
        }
        advance(s(15)).await;
        let m = b.metrics();
        assert_eq!(
            (m.state, m.time_in_state, m.times_opened),
            (State::HalfOpen, s(5), 1)
        );
        // Applied by a look: half-open begins now (its trials' episode starts with traffic).
        assert_eq!(b.state(), State::HalfOpen);
        let _ = b.call(async { Ok::<(), &str>(()) }).await;
        // Short of its 3 trials 30 s in: due to reopen, counted and dated at the bound.
        advance(s(31)).await;
        let m = b.metrics();
        assert_eq!(
            (m.state, m.time_in_state, m.times_opened),
            (State::Open, s(1), 2)
        );
        assert_eq!(b.state(), State::Open);
        assert_eq!(b.metrics().times_opened, 2, "counted once when applied");
        // A forced state that lapsed unobserved: dated at its expiry.
        let f = Breaker::builder("snapshot-due-forced")
            .build_detached()
            .unwrap();
        f.force_open_for(s(60));
        advance(s(100)).await;
        let m = f.metrics();
        assert_eq!((m.state, m.time_in_state), (State::HalfOpen, s(40)));
    });
}

/// A review: a snapshot racing a transition on another thread panicked (`clamp` with crossed
/// bounds: the new state's start read after the reader's `now`), after about 7 600 reads on
/// the real clock. A scrape or the admin page must never panic. Bounded real time: at most
/// 300 000 reads or 3 s, whichever ends first.
#[test]
fn a_snapshot_racing_transitions_on_another_thread_never_panics() {
    use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
    use std::sync::Arc;
    let b = Breaker::builder("snap-race").build_detached().unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let mover = {
        let (b, stop) = (b.clone(), stop.clone());
        thread::spawn(move || {
            while !stop.load(SeqCst) {
                b.force_open_for(Duration::from_nanos(1));
                b.force_close();
                b.reset();
            }
        })
    };
    let began = std::time::Instant::now();
    let read = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let mut n = 0u32;
        while n < 300_000 && began.elapsed() < Duration::from_secs(3) {
            let m = b.metrics();
            assert!(m.time_in_state < Duration::from_secs(3600));
            n += 1;
        }
    }));
    stop.store(true, SeqCst);
    mover.join().unwrap();
    assert!(read.is_ok(), "a snapshot panicked");
}
