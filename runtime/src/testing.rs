//! Test support (feature `testing`): a registry per test, a transition recorder, and
//! assertions that read well.
//!
//! `cargo test` runs tests on parallel threads of one process, so two tests using the breaker
//! `"payments"` would share it through the global registry. A [`Scope`] gives the code on its
//! thread a registry of its own: breakers, bulkheads, metrics and transitions created or used
//! inside belong to the scope and vanish with it, even at call sites that cache their breaker.
//!
//! ```
//! use fusebox_runtime::{testing, Breaker, State};
//!
//! #[tokio::main(flavor = "current_thread", start_paused = true)]
//! async fn main() {
//!     let scope = testing::scope();
//!     let mut rec = scope.recorder();
//!     let b = Breaker::builder("payments").window_calls(2).build().unwrap();
//!     for _ in 0..2 {
//!         let _ = b.call(async { Err::<(), _>("down") }).await;
//!     }
//!     testing::assert_state("payments", State::Open);
//!     assert_eq!(rec.states_of("payments"), [State::Closed, State::Open]);
//!     drop(scope);
//!     assert!(fusebox_runtime::registry().breaker("payments").is_none());
//! }
//! ```

use std::cell::RefCell;
use std::marker::PhantomData;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::broadcast::{self, error::TryRecvError};
use tokio::time::Instant;

use crate::events::Events;
use crate::registry::Maps;
use crate::{registry, BreakerMetrics, State, Transition};

thread_local! {
    static CURRENT: RefCell<Vec<Arc<Maps>>> = const { RefCell::new(Vec::new()) };
}

/// The innermost scope entered on this thread.
pub(crate) fn current() -> Option<Arc<Maps>> {
    CURRENT.with(|c| c.borrow().last().cloned())
}

/// A registry of the current thread's own, entered on creation and left on drop.
///
/// A `#[tokio::test]` runs every task of its (current-thread) runtime on the test's thread,
/// so all of them see the scope. Scopes nest; dropping one restores the one outside it.
#[must_use = "the scope ends when this guard is dropped"]
pub struct Scope {
    maps: Arc<Maps>,
    // Entered on one thread, left on the same one.
    _not_send: PhantomData<*const ()>,
}

/// Enters a fresh, empty registry for the code on this thread.
pub fn scope() -> Scope {
    let maps = Arc::new(Maps::new(Events::new()));
    CURRENT.with(|c| c.borrow_mut().push(maps.clone()));
    Scope {
        maps,
        _not_send: PhantomData,
    }
}

impl Scope {
    /// Starts recording this scope's transitions.
    pub fn recorder(&self) -> Recorder {
        Recorder {
            rx: self.maps.subscribe(),
            started: Instant::now(),
            seen: Vec::new(),
        }
    }
}

impl Drop for Scope {
    fn drop(&mut self) {
        CURRENT.with(|c| {
            let mut stack = c.borrow_mut();
            if let Some(i) = stack.iter().rposition(|m| Arc::ptr_eq(m, &self.maps)) {
                stack.remove(i);
            }
        });
    }
}

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

/// Resets every breaker of the current registry to closed with an empty window.
pub fn reset_all() {
    for b in registry().breakers() {
        b.reset();
    }
}

/// The state of a breaker, if it exists in the current registry.
pub fn state_of(name: &str) -> Option<State> {
    registry().breaker(name).map(|b| b.state())
}

/// The metrics of a breaker, if it exists in the current registry.
pub fn metrics_of(name: &str) -> Option<BreakerMetrics> {
    registry().breaker(name).map(|b| b.metrics())
}

/// Calls in flight in a bulkhead, if it exists in the current registry.
pub fn in_flight_of(bulkhead: &str) -> Option<usize> {
    registry().bulkhead(bulkhead).map(|b| b.in_flight())
}

/// Panics with a readable message unless breaker `name` is in `state`.
#[track_caller]
pub fn assert_state(name: &str, state: State) {
    match state_of(name) {
        Some(s) if s == state => {}
        Some(s) => panic!("breaker `{name}` is {s}, expected {state}"),
        None => panic!(
            "no breaker `{name}` in this registry (known: {:?})",
            registry()
                .breakers()
                .iter()
                .map(|b| b.name().to_owned())
                .collect::<Vec<_>>()
        ),
    }
}

/// Panics with a readable message unless breaker `name` counted these outcomes.
#[track_caller]
pub fn assert_calls(name: &str, succeeded: u64, failed: u64, rejected: u64) {
    let Some(m) = metrics_of(name) else {
        panic!("no breaker `{name}` in this registry");
    };
    let got = (m.succeeded, m.failures(), m.rejected);
    assert_eq!(
        got,
        (succeeded, failed, rejected),
        "breaker `{name}`: (succeeded, failed, rejected) = {got:?}"
    );
}
