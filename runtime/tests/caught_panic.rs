//! A panic that the caller catches (tower-http's `CatchPanic`, `FutureExt::catch_unwind`) is
//! still a panic for the breaker: the guard drops while the call's future unwinds.

use std::time::Duration;

use fusebox_runtime::Breaker;

fn secs(s: u64) -> Duration {
    Duration::from_secs(s)
}

/// Polls `fut` once inside `catch_unwind`, as tower-http's `CatchPanic` or
/// `futures::FutureExt::catch_unwind` do; the future is dropped later, after unwinding.
async fn poll_once_catching<F: std::future::Future + Unpin>(fut: &mut F) -> bool {
    use std::panic::{catch_unwind, AssertUnwindSafe};
    std::future::poll_fn(|cx| {
        let r = catch_unwind(AssertUnwindSafe(|| std::pin::Pin::new(&mut *fut).poll(cx)));
        std::task::Poll::Ready(r.is_err())
    })
    .await
}

#[tokio::test(start_paused = true)]
async fn a_panic_caught_by_the_caller_counts_as_a_panic_not_a_cancellation() {
    for timeout in [None, Some(secs(1))] {
        let mut b = Breaker::builder("reg-caught-panic");
        if let Some(t) = timeout {
            b = b.timeout(t);
        }
        let b = b.build_detached().unwrap();
        let mut call = Box::pin(b.call(async {
            if true {
                panic!("dependency client bug");
            }
            Ok::<(), ()>(())
        }));
        assert!(
            poll_once_catching(&mut call).await,
            "the panic reached the caller"
        );
        drop(call);
        let m = b.metrics();
        assert_eq!((m.panicked, m.cancelled), (1, 0), "timeout {timeout:?}");
    }
}

/// A call through a breaker and a bulkhead that panics after waiting, caught by the caller:
/// the bulkhead slot stays with the call until the caller drops it (the call's future, which
/// may still hold the dependency's connection, is dropped then too), and the panic is counted.
#[tokio::test(start_paused = true)]
async fn a_caught_panic_keeps_the_bulkhead_slot_until_the_call_is_dropped() {
    use fusebox_runtime::Bulkhead;
    for first_poll in [true, false] {
        let b = Breaker::builder("reg-caught-panic-slot")
            .build_detached()
            .unwrap();
        let pool = Bulkhead::builder("reg-caught-panic-slot")
            .pool(2)
            .build_detached()
            .unwrap();
        let mut call = Box::pin(b.call_in(&pool, async move {
            if !first_poll {
                tokio::task::yield_now().await;
            }
            if true {
                panic!("dependency client bug");
            }
            Ok::<(), ()>(())
        }));
        let mut panicked = poll_once_catching(&mut call).await;
        if !first_poll {
            assert!(!panicked, "the first poll waits");
            assert_eq!(pool.in_flight(), 1, "a waiting call holds its slot");
            panicked = poll_once_catching(&mut call).await;
        }
        assert!(panicked, "the panic reached the caller");
        assert_eq!(
            pool.in_flight(),
            1,
            "the slot is the call's until it is dropped (first poll: {first_poll})"
        );
        drop(call);
        assert_eq!(pool.in_flight(), 0, "dropping the call frees its slot");
        let m = b.metrics();
        assert_eq!(
            (m.panicked, m.cancelled),
            (1, 0),
            "first poll: {first_poll}"
        );
    }
}

/// A call polled again after its panic was caught is not run a second time: it says it was
/// polled after it completed, and the breaker counted the one panic.
#[tokio::test(start_paused = true)]
async fn a_call_polled_again_after_a_caught_panic_does_not_run_twice() {
    use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
    let b = Breaker::builder("reg-caught-panic-again")
        .build_detached()
        .unwrap();
    for first_poll in [true, false] {
        let runs = AtomicUsize::new(0);
        let mut call = Box::pin(b.call(async {
            if !first_poll {
                tokio::task::yield_now().await;
            }
            runs.fetch_add(1, SeqCst);
            if true {
                panic!("dependency client bug");
            }
            Ok::<(), ()>(())
        }));
        if !first_poll {
            assert!(!poll_once_catching(&mut call).await, "the first poll waits");
        }
        assert!(poll_once_catching(&mut call).await);
        assert!(
            poll_once_catching(&mut call).await,
            "polled again, it says so"
        );
        assert_eq!(runs.load(SeqCst), 1, "the wrapped future ran once");
        drop(call);
    }
    let m = b.metrics();
    assert_eq!((m.panicked, m.cancelled, m.calls), (2, 0, 2));
}
