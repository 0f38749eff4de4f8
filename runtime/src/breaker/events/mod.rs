//! Transition events: every state change is logged and broadcast to subscribers.
//!
//! In the order they were made. A transition is made under its breaker's lock and emitted
//! after it is released (a subscriber's or a log layer's code never runs under it), so two
//! transitions of one breaker could reach the log, the recorders and the subscribers in the
//! wrong order: "closed" after "opened" while it is open. Each one therefore takes its place
//! in its registry's order under the lock ([`Pending`]), and is delivered only after every
//! one before it: whoever emits queues its transition, and the one caller delivering at a
//! time delivers the queue in order, outside every lock (a transition a subscriber causes
//! while being told of another is queued behind it, never a deadlock).
//!
//! An emitter returns only once its transition was delivered, as when each caller sent its
//! own: a test that makes a call and then reads its receiver, or a recorder, finds the
//! transition there whatever other tests' breakers were doing. It waits (no lock held) while
//! another caller delivers it, or until the transitions before it were emitted; never on its
//! own thread's delivery, which a subscriber's transition is queued behind. "Delivered" is
//! counted apart from "taken for delivery" (`Queue::done`, `Queue::next`, in `delivery.rs`): a batch is
//! taken, then logged, recorded and broadcast outside the lock.
//!
//! Logged as its emitter would have: whichever thread delivers, the log line goes to the
//! emitter's subscriber (its thread's default, as a test's `set_default` captures), inside
//! the emitter's current span (`Origin`).
//!
//! `transition.rs`: what a transition is and the level it is logged at; `delivery.rs`: the
//! ordered queue, its one deliverer at a time, and the emitter's wait.

mod delivery;
mod transition;

use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Condvar, Mutex};

use once_cell::sync::Lazy;
use tokio::sync::broadcast;

pub(crate) use delivery::Pending;
use delivery::Queue;
pub use transition::{Reason, Transition};

use super::shadow::Sightings;

const CAPACITY: usize = 1024;

/// A registry's transition channel. Each registry (the global one, or a test scope's) has its
/// own, so a subscriber only hears the breakers it can see. Behind one pointer, so a breaker
/// stays within 1 KiB whichever sink it has.
#[derive(Clone)]
pub(crate) struct Events(Arc<Sink>);

enum Sink {
    Live(Live),
    /// A shadow's (`shadow.rs`): its transitions go to its own record and log lines, never
    /// to subscribers nor the live breaker's log.
    Shadow(Arc<Sightings>),
}

/// A live registry's listeners.
struct Live {
    /// The next place in this registry's order of transitions.
    issued: AtomicU64,
    /// The transitions emitted and not yet delivered, by place.
    queue: Mutex<Queue>,
    /// Told after each delivered batch: an emitter waits on it for its transition.
    delivered: Condvar,
    tx: broadcast::Sender<Transition>,
    /// The test recorders' records (`testing::Recorder`): each keeps every transition however
    /// many come before it is read, where a broadcast receiver lags and loses the oldest.
    #[cfg(feature = "testing")]
    taps: std::sync::Mutex<Vec<std::sync::Weak<std::sync::Mutex<Vec<Transition>>>>>,
}

/// An unbounded record of every transition of one registry, from [`Events::tap`].
#[cfg(feature = "testing")]
pub(crate) type Tap = Arc<std::sync::Mutex<Vec<Transition>>>;

static GLOBAL: Lazy<Events> = Lazy::new(Events::new);

impl Events {
    pub(crate) fn new() -> Events {
        Events(Arc::new(Sink::Live(Live {
            issued: AtomicU64::new(0),
            queue: Mutex::default(),
            delivered: Condvar::new(),
            tx: broadcast::channel(CAPACITY).0,
            #[cfg(feature = "testing")]
            taps: std::sync::Mutex::default(),
        })))
    }

    /// The sink of a shadow's core: transitions are noted in `sightings`, never broadcast.
    pub(crate) fn shadow(sightings: Arc<Sightings>) -> Events {
        Events(Arc::new(Sink::Shadow(sightings)))
    }

    /// The channel of the process-wide registry (also used by detached breakers).
    pub(crate) fn global() -> Events {
        GLOBAL.clone()
    }

    /// A receiver of every transition from now on.
    pub(crate) fn subscribe(&self) -> broadcast::Receiver<Transition> {
        match &*self.0 {
            Sink::Live(live) => live.tx.subscribe(),
            // Only registries subscribe, and theirs are live: a shadow's hears nothing.
            Sink::Shadow(_) => broadcast::channel(1).1,
        }
    }

    /// A record of every transition from now on, kept until its last holder drops it.
    #[cfg(feature = "testing")]
    pub(crate) fn tap(&self) -> Tap {
        let tap = Tap::default();
        if let Sink::Live(live) = &*self.0 {
            crate::sync::lock_std(&live.taps).push(Arc::downgrade(&tap));
        }
        tap
    }

    /// False for a shadow's core: its own log lines (`stuck`, the ramp's) are not the live
    /// breaker's, so they are left out.
    pub(crate) fn is_live(&self) -> bool {
        matches!(&*self.0, Sink::Live(_))
    }
}
