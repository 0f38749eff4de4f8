//! A transition made inside a tracing layer (an operator's automation: a dependency's breaker
//! opens, a layer forces its sibling open as it sees the WARN) is logged too. Inside a
//! subscriber's callback tracing hands out its no-op dispatcher: the sibling's line is logged
//! by the deliverer once the callback returns, to the same subscriber. One test in this
//! binary: it captures logs with a subscriber of its thread.

use std::sync::{Arc, Mutex};

use fusebox::{registry, Breaker, State};
use tracing::field::{Field, Visit};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};

#[derive(Debug)]
struct Down;

struct Line(String);

impl Visit for Line {
    fn record_debug(&mut self, f: &Field, v: &dyn std::fmt::Debug) {
        self.0.push_str(&format!("{}={v:?} ", f.name()));
    }
}

/// Keeps every line; forces `reentry-b` open when it sees `reentry-a` open.
#[derive(Clone, Default)]
struct Automation(Arc<Mutex<Vec<String>>>);

impl<S: tracing::Subscriber> Layer<S> for Automation {
    fn on_event(&self, e: &tracing::Event<'_>, _: Context<'_, S>) {
        let mut line = Line(String::new());
        e.record(&mut line);
        let opened_a = line.0.contains("reentry-a") && line.0.contains("opened");
        self.0.lock().unwrap().push(line.0);
        if opened_a {
            registry().breaker("reentry-b").unwrap().force_open();
        }
    }
}

#[test]
fn a_transition_made_inside_a_layer_is_logged_to_the_same_subscriber() {
    let a = Breaker::builder("reentry-a")
        .window_calls(2)
        .min_calls(2)
        .build()
        .unwrap();
    let b = Breaker::builder("reentry-b").build().unwrap();
    let lines = Automation::default();
    let _g = tracing::subscriber::set_default(tracing_subscriber::registry().with(lines.clone()));
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
    let lines = lines.0.lock().unwrap().clone();
    assert!(
        lines
            .iter()
            .any(|l| l.contains("reentry-b") && l.contains("forced open")),
        "{lines:#?}"
    );
}
