//! A tracing layer that keeps every event, for tests that assert what fusebox logs.
//!
//! One process-wide subscriber, installed once: tests run on parallel threads, and a
//! thread-local one (`set_default`) can miss an event whose callsite another thread registered
//! first with no subscriber. Each test counts only its own breaker's events.
#![allow(dead_code)]

use std::sync::{Arc, Mutex, OnceLock};

use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};

/// Every event: (level, breaker field, message).
#[derive(Clone, Default)]
pub struct Log(Arc<Mutex<Vec<(Level, String, String)>>>);

#[derive(Default)]
struct Fields {
    breaker: String,
    message: String,
}

impl Visit for Fields {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        match field.name() {
            "breaker" => self.breaker = format!("{value:?}"),
            "message" => self.message = format!("{value:?}"),
            _ => {}
        }
    }
}

impl<S: Subscriber> Layer<S> for Log {
    fn on_event(&self, event: &Event<'_>, _: Context<'_, S>) {
        let mut f = Fields::default();
        event.record(&mut f);
        let level = *event.metadata().level();
        self.0.lock().unwrap().push((level, f.breaker, f.message));
    }
}

/// The process-wide log, installed on first use.
pub fn log() -> Log {
    static LOG: OnceLock<Log> = OnceLock::new();
    LOG.get_or_init(|| {
        let log = Log::default();
        tracing::subscriber::set_global_default(tracing_subscriber::registry().with(log.clone()))
            .expect("no other global subscriber in this test binary");
        log
    })
    .clone()
}

impl Log {
    /// Events at `level` of the breaker named `breaker` whose message contains `needle`.
    pub fn count(&self, level: Level, breaker: &str, needle: &str) -> usize {
        let events = self.0.lock().unwrap();
        events
            .iter()
            .filter(|(l, b, m)| *l == level && b == breaker && m.contains(needle))
            .count()
    }
}
