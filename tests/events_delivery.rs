//! A transition reaches its own test: received when the call that made it returns, and logged
//! to the subscriber of the thread that made it, whichever thread delivers it.
//!
//! Transitions are delivered in the registry's order, by one caller at a time. Another test
//! whose subscriber writes slowly (a pipe, a busy disk) holds that turn while this test's
//! breaker opens: this test's call must still return only once its transition is out, and
//! its WARN must go to this test's subscriber, not the other's. Real time: the other test's
//! sink takes 300 ms a line, and this test trips its breaker 100 ms into it. One test in this
//! binary: it captures logs with a subscriber of its thread.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use fusebox::{breaker, registry, Rejection, State};
use tokio::runtime::Builder;
use tracing::field::{Field, Visit};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};

#[derive(Debug)]
struct Down(#[allow(dead_code)] Option<Rejection>);

impl From<Rejection> for Down {
    fn from(r: Rejection) -> Self {
        Down(Some(r))
    }
}

/// Every event of its thread's default subscriber, each taking `slow` to write.
#[derive(Clone, Default)]
struct Logs(Arc<Mutex<Vec<String>>>, Duration);

struct Line(String);

impl Visit for Line {
    fn record_debug(&mut self, f: &Field, v: &dyn std::fmt::Debug) {
        self.0.push_str(&format!("{}={v:?} ", f.name()));
    }
}

impl<S: tracing::Subscriber> Layer<S> for Logs {
    fn on_event(&self, e: &tracing::Event<'_>, _: Context<'_, S>) {
        let mut line = Line(String::new());
        e.record(&mut line);
        self.0.lock().unwrap().push(line.0);
        std::thread::sleep(self.1);
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
    let my_logs = Logs::default();
    let _g = tracing::subscriber::set_default(tracing_subscriber::registry().with(my_logs.clone()));
    let rt = paused();
    let mut rx = registry().subscribe();
    let theirs = std::thread::spawn(|| {
        let logs = Logs(Arc::default(), Duration::from_millis(300));
        let _g =
            tracing::subscriber::set_default(tracing_subscriber::registry().with(logs.clone()));
        paused().block_on(async {
            let _ = other().await;
        });
        let lines = logs.0.lock().unwrap().clone();
        lines
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
    let count = |lines: &[String]| lines.iter().filter(|l| l.contains("delivery-mine")).count();
    let mine_logged = count(&my_logs.0.lock().unwrap());
    assert_eq!(
        (mine_logged, count(&theirs)),
        (1, 0),
        "this test's WARN on its own thread, not the other's"
    );
}
