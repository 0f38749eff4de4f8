//! Recording a scope's transitions, with the virtual time of each.

use std::time::Duration;

use tokio::sync::broadcast::{self, error::TryRecvError};
use tokio::time::Instant;

use crate::breaker::events::Transition;
use crate::state::State;

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
    rx: broadcast::Receiver<Transition>,
    started: Instant,
    seen: Vec<Recorded>,
}

impl Recorder {
    pub(super) fn new(rx: broadcast::Receiver<Transition>) -> Recorder {
        Recorder {
            rx,
            started: Instant::now(),
            seen: Vec::new(),
        }
    }

    fn drain(&mut self) {
        loop {
            match self.rx.try_recv() {
                Ok(t) => self.seen.push(Recorded {
                    name: t.name.to_string(),
                    from: t.from,
                    to: t.to,
                    at: t.at.saturating_duration_since(self.started),
                }),
                Err(TryRecvError::Lagged(_)) => continue,
                Err(TryRecvError::Empty | TryRecvError::Closed) => return,
            }
        }
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
