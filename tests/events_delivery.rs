//! A transition reaches its own test: received when the call that made it returns, and logged
//! to the subscriber of the thread that made it, whichever thread delivers it.
//!
//! Transitions are delivered in the registry's order, by one caller at a time. Another test
//! whose subscriber writes slowly (a pipe, a busy disk) holds that turn while this test's
//! breaker opens: this test's call must still return only once its transition is out, and
//! its WARN must go to this test's subscriber, not the other's. Real time: the other test's
//! sink takes 300 ms a line, and this test trips its breaker 100 ms into it. One test in this
//! binary: it captures logs with a subscriber of its thread.

use std::time::Duration;

use fusebox::{breaker, registry, Rejection, State};
use tokio::runtime::Builder;

#[path = "common/thread_log.rs"]
mod thread_log;
use thread_log::ThreadLog;

#[derive(Debug)]
struct Down(#[allow(dead_code)] Option<Rejection>);

impl From<Rejection> for Down {
    fn from(r: Rejection) -> Self {
        Down(Some(r))
    }
}

fn paused() -> tokio::runtime::Runtime {
    Builder::new_current_thread()
        .enable_all()
        .start_paused(true)
        .build()
        .unwrap()
}

#[breaker(
    name = "delivery-other",
    window_calls = 1,
    min_calls = 1,
    open_for = "30s"
)]
async fn other() -> Result<(), Down> {
    Err(Down(None))
}

#[breaker(
    name = "delivery-mine",
    window_calls = 1,
    min_calls = 1,
    open_for = "30s"
)]
async fn mine() -> Result<(), Down> {
    Err(Down(None))
}

#[test]
fn a_transition_is_received_when_its_call_returns_and_logged_to_its_own_thread() {
    let my_log = ThreadLog::default();
    let _g = my_log.install();
    let rt = paused();
    let mut rx = registry().subscribe();
    let theirs = std::thread::spawn(|| {
        let log = ThreadLog::slow(Duration::from_millis(300));
        let _g = log.install();
        paused().block_on(async {
            let _ = other().await;
        });
        log
    });
    // Its transition is being written to its slow sink.
    std::thread::sleep(Duration::from_millis(100));
    rt.block_on(async {
        let _ = mine().await;
        assert_eq!(
            registry().breaker("delivery-mine").unwrap().state(),
            State::Open
        );
    });
    let mut received = vec![];
    while let Ok(t) = rx.try_recv() {
        received.push(t.name.to_string());
    }
    assert!(
        received.iter().any(|n| n == "delivery-mine"),
        "not received when the call returned: {received:?}"
    );
    let theirs = theirs.join().unwrap();
    assert_eq!(
        (my_log.count("delivery-mine"), theirs.count("delivery-mine")),
        (1, 0),
        "this test's WARN on its own thread, not the other's"
    );
}
