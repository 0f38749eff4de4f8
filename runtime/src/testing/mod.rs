//! Test support (feature `testing`): a registry per test, a transition recorder, and
//! assertions that read well.
//!
//! `cargo test` runs tests on parallel threads of one process, so two tests using the breaker
//! `"payments"` would share it through the global registry. A [`Scope`] gives the code on its
//! thread a registry of its own: breakers, bulkheads, metrics and transitions created or used
//! inside belong to the scope and vanish with it, even at call sites that cache their breaker.
//!
//! ```
//! use fusebox::{testing, Breaker, State};
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
//!     assert!(fusebox::registry().breaker("payments").is_none());
//! }
//! ```

mod recorder;
mod scope;

pub use recorder::{Recorded, Recorder};
pub use scope::{scope, Scope};

use crate::metrics::BreakerMetrics;
use crate::registry::registry;
use crate::state::State;

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
