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

/// Every event: (level, the `breaker` or `bulkhead` field it is about, message).
#[derive(Clone, Default)]
pub struct Log(Arc<Mutex<Vec<(Level, String, String)>>>);

#[derive(Default)]
struct Fields {
    owner: String,
    message: String,
}

impl Visit for Fields {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        match field.name() {
            // A `&str` field recorded through `Debug` comes quoted.
            "breaker" | "bulkhead" => self.owner = format!("{value:?}").trim_matches('"').into(),
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
        self.0.lock().unwrap().push((level, f.owner, f.message));
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
    /// Events at `level` of the breaker or bulkhead named `owner` whose message contains
    /// `needle`.
    pub fn count(&self, level: Level, owner: &str, needle: &str) -> usize {
        let events = self.0.lock().unwrap();
        events
            .iter()
            .filter(|(l, o, m)| *l == level && o == owner && m.contains(needle))
            .count()
    }

    /// Every event of the breaker or bulkhead named `owner`: (level, message), for a failure
    /// message.
    pub fn of(&self, owner: &str) -> Vec<(Level, String)> {
        let events = self.0.lock().unwrap();
        events
            .iter()
            .filter(|(_, o, _)| o == owner)
            .map(|(l, _, m)| (*l, m.clone()))
            .collect()
    }
}
