//! Recording a scope's transitions, with the virtual time of each.

use std::time::Duration;

use tokio::time::Instant;

use crate::breaker::events::Tap;
use crate::state::State;
use crate::sync::lock_std;

/// One recorded transition, with the virtual time since the recorder started.
#[derive(Debug, Clone, PartialEq)]
pub struct Recorded {
    /// Breaker name.
    pub name: String,
    /// State before.
    pub from: State,
    /// State after.
    pub to: State,
    /// Time since the recorder started (virtual under a paused clock).
    pub at: Duration,
}

/// Collects the transitions of the registry it was started in.
#[derive(Debug)]
pub struct Recorder {
    /// Fed by the registry on every transition, unbounded: a broadcast receiver would lag
    /// behind a long run and lose its oldest transitions, which a test asserts on.
    tap: Tap,
    started: Instant,
    seen: Vec<Recorded>,
}

impl Recorder {
    pub(super) fn new(tap: Tap) -> Recorder {
        Recorder {
            tap,
            started: Instant::now(),
            seen: Vec::new(),
        }
    }

    fn drain(&mut self) {
        let new = std::mem::take(&mut *lock_std(&self.tap));
        self.seen.extend(new.into_iter().map(|t| Recorded {
            name: t.name.to_string(),
            from: t.from,
            to: t.to,
            at: t.at.saturating_duration_since(self.started),
        }));
    }

    /// Every transition so far.
    pub fn transitions(&mut self) -> &[Recorded] {
        self.drain();
        &self.seen
    }

    /// The states a breaker went through, starting with the one it left first:
    /// `[Closed, Open, HalfOpen, Closed]`.
    pub fn states_of(&mut self, name: &str) -> Vec<State> {
        self.drain();
        let mut out = Vec::new();
        for t in self.seen.iter().filter(|t| t.name == name) {
            if out.is_empty() {
                out.push(t.from);
            }
            out.push(t.to);
        }
        out
    }

    /// `(state entered, virtual time)` for each transition of a breaker.
    pub fn timeline_of(&mut self, name: &str) -> Vec<(State, Duration)> {
        self.drain();
        self.seen
            .iter()
            .filter(|t| t.name == name)
            .map(|t| (t.to, t.at))
            .collect()
    }
}
