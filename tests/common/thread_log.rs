//! A tracing layer for one thread (`set_default`), for the tests whose point is which thread's
//! subscriber an event reaches: each event kept as `LEVEL name=value ...`, optionally slow to
//! write (a pipe, a busy disk) or acted on as it is seen (an operator's automation).
//!
//! One such test per binary: a thread-local subscriber can miss an event whose callsite
//! another thread registered first with none (`log.rs` is the process-wide one).
#![allow(dead_code)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tracing::field::{Field, Visit};
use tracing::subscriber::DefaultGuard;
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};

type Hook = Arc<dyn Fn(&str) + Send + Sync>;

/// The lines of the thread it is installed on.
#[derive(Clone, Default)]
pub struct ThreadLog {
    lines: Arc<Mutex<Vec<String>>>,
    slow: Duration,
    hook: Option<Hook>,
}

struct Line(String);

impl Visit for Line {
    fn record_debug(&mut self, f: &Field, v: &dyn std::fmt::Debug) {
        self.0.push_str(&format!(" {}={v:?}", f.name()));
    }
}

impl ThreadLog {
    /// Each line takes `d` (real time) to write.
    pub fn slow(d: Duration) -> ThreadLog {
        ThreadLog {
            slow: d,
            ..ThreadLog::default()
        }
    }

    /// `hook` runs on each line as it is written, inside the subscriber.
    pub fn on_line(hook: impl Fn(&str) + Send + Sync + 'static) -> ThreadLog {
        ThreadLog {
            hook: Some(Arc::new(hook)),
            ..ThreadLog::default()
        }
    }

    /// The default subscriber of this thread until the guard drops.
    pub fn install(&self) -> DefaultGuard {
        tracing::subscriber::set_default(tracing_subscriber::registry().with(self.clone()))
    }

    /// Every line so far.
    pub fn lines(&self) -> Vec<String> {
        self.lines.lock().unwrap().clone()
    }

    /// The lines that contain `needle`.
    pub fn count(&self, needle: &str) -> usize {
        self.lines().iter().filter(|l| l.contains(needle)).count()
    }
}

impl<S: tracing::Subscriber> Layer<S> for ThreadLog {
    fn on_event(&self, e: &tracing::Event<'_>, _: Context<'_, S>) {
        let mut line = Line(e.metadata().level().to_string());
        e.record(&mut line);
        self.lines.lock().unwrap().push(line.0.clone());
        if let Some(hook) = &self.hook {
            hook(&line.0);
        }
        std::thread::sleep(self.slow);
    }
}
