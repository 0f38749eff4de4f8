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

/// Every event kept.
#[derive(Clone, Default)]
pub struct Log(Arc<Mutex<Vec<Kept>>>);

/// One event: its level, then its fields.
struct Kept {
    level: Level,
    fields: Fields,
}

#[derive(Default)]
struct Fields {
    /// The `breaker` or `bulkhead` field: what the event is about.
    owner: String,
    message: String,
    /// The other fields as a formatter writes them (` name=value` each).
    rest: String,
}

impl Visit for Fields {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        match field.name() {
            // A `&str` field recorded through `Debug` comes quoted.
            "breaker" | "bulkhead" => self.owner = format!("{value:?}").trim_matches('"').into(),
            "message" => self.message = format!("{value:?}"),
            // A `%`-field's `Debug` is its `Display`: what reaches a log line as it is.
            name => self.rest.push_str(&format!(" {name}={value:?}")),
        }
    }
}

impl<S: Subscriber> Layer<S> for Log {
    fn on_event(&self, event: &Event<'_>, _: Context<'_, S>) {
        let mut fields = Fields::default();
        event.record(&mut fields);
        let level = *event.metadata().level();
        self.0.lock().unwrap().push(Kept { level, fields });
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
            .filter(|e| e.level == level && e.fields.owner == owner)
            .filter(|e| e.fields.message.contains(needle))
            .count()
    }

    /// Every event of the breaker or bulkhead named `owner`: (level, message), for a failure
    /// message.
    pub fn of(&self, owner: &str) -> Vec<(Level, String)> {
        let events = self.0.lock().unwrap();
        events
            .iter()
            .filter(|e| e.fields.owner == owner)
            .map(|e| (e.level, e.fields.message.clone()))
            .collect()
    }

    /// The other fields (` name=value` each) of every event whose message contains `needle`
    /// and whose owner or fields contain `about`.
    pub fn fields(&self, needle: &str, about: &str) -> Vec<String> {
        let events = self.0.lock().unwrap();
        events
            .iter()
            .map(|e| &e.fields)
            .filter(|f| f.message.contains(needle))
            .filter(|f| f.owner == about || f.rest.contains(about))
            .map(|f| f.rest.clone())
            .collect()
    }
}
