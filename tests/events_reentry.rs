//! A transition made inside a tracing layer (an operator's automation: a dependency's breaker
//! opens, a layer forces its sibling open as it sees the WARN) is logged too. Inside a
//! subscriber's callback tracing hands out its no-op dispatcher: the sibling's line is logged
//! by the deliverer once the callback returns, to the same subscriber. One test in this
//! binary: it captures logs with a subscriber of its thread.

use fusebox::{registry, Breaker, State};

#[path = "common/thread_log.rs"]
mod thread_log;
use thread_log::ThreadLog;

#[derive(Debug)]
struct Down;

#[test]
fn a_transition_made_inside_a_layer_is_logged_to_the_same_subscriber() {
    let a = Breaker::builder("reentry-a")
        .window_calls(2)
        .min_calls(2)
        .build()
        .unwrap();
    let b = Breaker::builder("reentry-b").build().unwrap();
    // An operator's automation: seeing `reentry-a` open, it forces `reentry-b` open.
    let log = ThreadLog::on_line(|line| {
        if line.contains("reentry-a") && line.contains("opened") {
            registry().breaker("reentry-b").unwrap().force_open();
        }
    });
    let _g = log.install();
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(async {
            for _ in 0..2 {
                let _ = a.call(async { Err::<(), Down>(Down) }).await;
            }
        });
    assert_eq!((a.state(), b.state()), (State::Open, State::ForcedOpen));
    let lines = log.lines();
    assert!(
        lines
            .iter()
            .any(|l| l.contains("reentry-b") && l.contains("forced open")),
        "{lines:#?}"
    );
}
