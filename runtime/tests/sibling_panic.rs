//! Issue 18 item 4: only a panic that leaves the wrapped future's own `poll` is the
//! dependency's; a call dropped while something else unwinds (a `join!` sibling, a `block_on`
//! caller) was cancelled.

use std::future::pending;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::Duration;

use fusebox_runtime::{Breaker, Error, State};

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap()
}

/// A breaker that a single counted failure in half-open would reopen.
fn half_open_breaker(name: &str) -> Breaker {
    Breaker::builder(name)
        .window_calls(2)
        .min_calls(1)
        .open_for(Duration::from_secs(1))
        .half_open_calls(1)
        .build_detached()
        .unwrap()
}

#[test]
fn a_join_sibling_panicking_while_our_call_is_pending_is_a_cancellation() {
    let b = Breaker::builder("sibling-join").build_detached().unwrap();
    let rt = runtime();
    let caught = catch_unwind(AssertUnwindSafe(|| {
        // `block_on` holds the joined future on its stack: the unwind drops our call with it.
        rt.block_on(async {
            let ours = b.call::<(), &str, _>(pending());
            let sibling = async {
                tokio::task::yield_now().await;
                panic!("a bug in the handler, not in the dependency");
            };
            tokio::join!(ours, sibling)
        })
    }));
    assert!(caught.is_err(), "the sibling's panic reached the caller");
    let m = b.metrics();
    assert_eq!((m.panicked, m.cancelled), (0, 1), "{m:?}");
    assert_eq!(m.failures(), 0);
}

#[test]
fn a_sibling_panic_does_not_reopen_a_half_open_breaker() {
    let b = half_open_breaker("sibling-half-open");
    let rt = runtime();
    rt.block_on(async {
        let _ = b.call::<(), _, _>(async { Err("down") }).await;
        assert_eq!(b.state(), State::Open);
        tokio::time::advance(Duration::from_secs(1)).await;
    });
    let caught = catch_unwind(AssertUnwindSafe(|| {
        rt.block_on(async {
            let trial = b.call::<(), &str, _>(pending());
            let sibling = async {
                tokio::task::yield_now().await;
                panic!("unrelated");
            };
            tokio::join!(trial, sibling)
        })
    }));
    assert!(caught.is_err());
    // The trial slot was freed, not judged: the next caller is the trial, and it closes.
    assert_eq!(b.state(), State::HalfOpen, "{:?}", b.metrics());
    rt.block_on(async {
        let r: Result<(), Error<&str>> = b.call(async { Ok(()) }).await;
        r.unwrap();
    });
    assert_eq!(b.state(), State::Closed);
}

#[tokio::test(start_paused = true)]
async fn a_panic_inside_our_future_is_a_panic_and_a_failure() {
    for timeout in [None, Some(Duration::from_secs(1))] {
        let mut builder = Breaker::builder("sibling-own-panic");
        if let Some(t) = timeout {
            builder = builder.timeout(t);
        }
        let b = builder.build_detached().unwrap();
        let task = {
            let b = b.clone();
            tokio::spawn(async move {
                b.call::<(), &str, _>(async {
                    tokio::task::yield_now().await;
                    panic!("the dependency's client crashed")
                })
                .await
            })
        };
        assert!(task.await.unwrap_err().is_panic());
        let m = b.metrics();
        assert_eq!(
            (m.panicked, m.cancelled),
            (1, 0),
            "timeout {timeout:?}: {m:?}"
        );
        assert_eq!(m.failures(), 1);
    }
}

#[test]
fn a_panic_inside_our_future_under_block_on_is_a_panic() {
    let b = half_open_breaker("sibling-own-block-on");
    let rt = runtime();
    let caught = catch_unwind(AssertUnwindSafe(|| {
        rt.block_on(b.call::<(), &str, _>(async { panic!("crash") }))
    }));
    assert!(caught.is_err());
    let m = b.metrics();
    assert_eq!((m.panicked, m.cancelled), (1, 0), "{m:?}");
    assert_eq!(m.state, State::Open, "a panic is a failure");
}
