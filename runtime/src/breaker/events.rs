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
//! counted apart from "taken for delivery" ([`Queue::done`], [`Queue::next`]): a batch is
//! taken, then logged, recorded and broadcast outside the lock.
//!
//! Logged as its emitter would have: whichever thread delivers, the log line goes to the
//! emitter's subscriber (its thread's default, as a test's `set_default` captures), inside
//! the emitter's current span ([`Origin`]).

use std::cell::Cell;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Condvar, Mutex};

use once_cell::sync::Lazy;
use tokio::sync::broadcast;
use tokio::time::Instant;

use super::shadow::Sightings;
use crate::state::State;

/// Why a breaker changed state.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Reason {
    /// The window's failure rate reached the threshold.
    FailureRate {
        /// Failed share of the window, in percent.
        rate: f64,
        /// The configured threshold, in percent.
        threshold: u8,
        /// Calls in the window.
        calls: u64,
    },
    /// The window's slow-call rate reached the threshold.
    SlowRate {
        /// Slow share of the window, in percent.
        rate: f64,
        /// The configured threshold, in percent.
        threshold: u8,
        /// Calls in the window.
        calls: u64,
    },
    /// The open period ended.
    OpenElapsed,
    /// The half-open trials passed.
    TrialsPassed {
        /// Trials that succeeded.
        ok: u32,
        /// Trials that failed.
        failed: u32,
    },
    /// A probe let through while open (`probe_every`) passed: half-open starts early.
    ProbePassed,
    /// The half-open trials failed.
    TrialsFailed {
        /// Trials that succeeded.
        ok: u32,
        /// Trials that failed.
        failed: u32,
    },
    /// An operator forced the state.
    Forced,
    /// An operator reset the breaker.
    Reset,
    /// Enough of the fleet's live instances report this breaker open (feature `redis`,
    /// quorum opening): this closed one opens too, then probes on its own schedule.
    Quorum {
        /// Live instances that report it open on their own judgement.
        open: u32,
        /// Live instances that have this breaker, this one included.
        live: u32,
        /// The configured share, in percent.
        threshold: u8,
    },
    /// A forced state given a duration (`force_open_for`, `force_close_for`) ran out.
    ForceExpired,
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reason::FailureRate {
                rate,
                threshold,
                calls,
            } => write!(
                f,
                "failure rate {rate:.1}% >= {threshold}% over {calls} calls"
            ),
            Reason::SlowRate {
                rate,
                threshold,
                calls,
            } => write!(
                f,
                "slow-call rate {rate:.1}% over {threshold}% over {calls} calls"
            ),
            Reason::OpenElapsed => f.write_str("open period elapsed"),
            Reason::ProbePassed => f.write_str("a probe passed"),
            Reason::TrialsPassed { ok, failed } => {
                write!(f, "trials passed ({ok} ok, {failed} failed)")
            }
            // With no trial failed, only slowness reopens: say so, not "0 failed".
            Reason::TrialsFailed { ok, failed: 0 } => {
                write!(f, "trials too slow ({ok} ok in time, 0 failed)")
            }
            Reason::TrialsFailed { ok, failed } => {
                write!(f, "trials failed ({ok} ok, {failed} failed)")
            }
            Reason::Forced => f.write_str("forced by an operator"),
            Reason::Reset => f.write_str("reset by an operator"),
            Reason::Quorum {
                open,
                live,
                threshold,
            } => write!(
                f,
                "fleet quorum: {open} of {live} live instances open (>= {threshold}%)"
            ),
            Reason::ForceExpired => f.write_str("forced state expired"),
        }
    }
}

/// One state change of one breaker.
///
/// ```no_run
/// # async fn page(_: &str) {}
/// # async fn demo() {
/// let mut rx = fusebox::registry().subscribe();
/// while let Ok(t) = rx.recv().await {
///     if t.to == fusebox::State::Open {
///         page(&format!("{} opened: {}", t.name, t.reason)).await;
///     }
/// }
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct Transition {
    /// Registry name of the breaker.
    pub name: Arc<str>,
    /// State before.
    pub from: State,
    /// State after.
    pub to: State,
    /// When it happened (virtual time under a paused clock).
    pub at: Instant,
    /// Why.
    pub reason: Reason,
}

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

    /// Gives `t` its place in the registry's order; called under the breaker's lock, as the
    /// transition is made.
    pub(crate) fn pending(&self, t: Transition) -> Pending {
        let seq = match &*self.0 {
            Sink::Live(live) => live.issued.fetch_add(1, Relaxed),
            Sink::Shadow(_) => 0,
        };
        Pending {
            events: self.clone(),
            seq,
            t: Some(t),
        }
    }

    /// Delivers a transition once every one made before it in this registry was: logged at
    /// the level its seriousness deserves, recorded and broadcast. Called once the breaker's
    /// lock is released.
    pub(crate) fn emit(&self, mut p: Pending) {
        if let Some(t) = p.t.take() {
            self.queue(p.seq, t);
        }
    }

    fn queue(&self, seq: u64, t: Transition) {
        let live = match &*self.0 {
            Sink::Live(live) => live,
            Sink::Shadow(s) => return s.note(&t),
        };
        let origin = Origin::here();
        let mut q = crate::sync::lock_std(&live.queue);
        q.waiting.insert(seq, (t, origin));
        if q.delivering && DELIVERING.get() {
            // A subscriber's transition: this thread's turn delivers it next.
            return;
        }
        if !q.delivering {
            q = live.deliver_queue(q);
        }
        // Delivered by another caller's turn, or by the turn of whoever emits the ones made
        // before it.
        while q.done <= seq {
            q = live
                .delivered
                .wait(q)
                .unwrap_or_else(std::sync::PoisonError::into_inner);
        }
    }
}

thread_local! {
    /// This thread is delivering a registry's queue (its subscribers run under it).
    static DELIVERING: Cell<bool> = const { Cell::new(false) };
}

impl Live {
    /// Takes the delivering turn and delivers the queue in order until the next place is
    /// not there yet; gives the lock back.
    fn deliver_queue<'a>(
        &'a self,
        mut q: std::sync::MutexGuard<'a, Queue>,
    ) -> std::sync::MutexGuard<'a, Queue> {
        q.delivering = true;
        // A subscriber that panics must not leave the queue waiting for a deliverer forever.
        let mut turn = Turn {
            live: self,
            done: false,
            was_delivering: DELIVERING.replace(true),
        };
        loop {
            let mut batch = Vec::new();
            let q_ = &mut *q;
            while let Some(t) = q_.waiting.remove(&q_.next) {
                batch.push(t);
                q_.next += 1;
            }
            if batch.is_empty() {
                q.delivering = false;
                turn.done = true;
                return q;
            }
            drop(q);
            for (t, origin) in batch {
                self.deliver(t, &origin);
            }
            q = crate::sync::lock_std(&self.queue);
            // Only the deliverer moves `next`, so the batch taken ends there.
            q.done = q.next;
            self.delivered.notify_all();
        }
    }
}

/// The delivering turn: freed by its drop if a delivery unwound before the turn ended (a
/// subscriber panicked). Not `thread::panicking()`: an emit runs inside a call's unwind too
/// (a panicking call is recorded as it unwinds), where the queue's lock is still held.
struct Turn<'a> {
    live: &'a Live,
    done: bool,
    /// This thread's flag before the turn: a turn of another registry's queue may be under it.
    was_delivering: bool,
}

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        DELIVERING.set(self.was_delivering);
        if !self.done {
            let mut q = crate::sync::lock_std(&self.live.queue);
            q.delivering = false;
            // The batch a panicking subscriber cut short is given up, not waited for.
            q.done = q.next;
            self.live.delivered.notify_all();
        }
    }
}

/// The transitions of a registry emitted and not yet delivered.
#[derive(Default)]
struct Queue {
    /// The place of the next transition to take for delivery.
    next: u64,
    /// Every place before this one was delivered (logged, recorded, broadcast): what an
    /// emitter waits for. Behind `next` while a batch is being delivered.
    done: u64,
    /// Emitted ahead of their turn, by place.
    waiting: BTreeMap<u64, (Transition, Option<Origin>)>,
    /// A caller is delivering: the others only queue.
    delivering: bool,
}

/// A transition made, with its place in its registry's order, to emit once the breaker's
/// lock is released ([`Events::emit`]). One dropped unemitted is emitted by its drop, so a
/// place is never left empty (the ones after it would wait for it).
#[must_use = "emit it once the breaker's lock is released"]
pub(crate) struct Pending {
    events: Events,
    seq: u64,
    t: Option<Transition>,
}

impl Drop for Pending {
    fn drop(&mut self) {
        if let Some(t) = self.t.take() {
            self.events.queue(self.seq, t);
        }
    }
}

/// Where a transition was emitted, for its log line: the emitter's subscriber and span.
struct Origin {
    dispatch: tracing::Dispatch,
    span: tracing::Span,
}

impl Origin {
    /// `None` inside a subscriber's own callback (a layer that forces a breaker, or makes a
    /// call, as it sees an event), where tracing hands out its no-op dispatcher: the line is
    /// then logged by the deliverer, which delivers it once that callback has returned.
    fn here() -> Option<Origin> {
        let dispatch = tracing::dispatcher::get_default(Clone::clone);
        if dispatch.is::<tracing::subscriber::NoSubscriber>() {
            return None;
        }
        Some(Origin {
            dispatch,
            span: tracing::Span::current(),
        })
    }
}

impl Live {
    /// Logs `t` at the level its seriousness deserves, as its emitter would have (`origin`),
    /// records and broadcasts it.
    fn deliver(&self, t: Transition, origin: &Option<Origin>) {
        let live = self;
        match origin {
            Some(o) => tracing::dispatcher::with_default(&o.dispatch, || {
                let _in = o.span.enter();
                log(&t);
            }),
            None => log(&t),
        }
        #[cfg(feature = "testing")]
        crate::sync::lock_std(&live.taps).retain(|tap| {
            tap.upgrade()
                .map(|tap| crate::sync::lock_std(&tap).push(t.clone()))
                .is_some()
        });
        if live.tx.receiver_count() > 0 {
            // No receiver is not an error: subscribing is optional.
            let _ = live.tx.send(t);
        }
    }
}

fn log(t: &Transition) {
    match t.to {
        State::Open => tracing::warn!(
            breaker = %t.name, from = %t.from, to = %t.to, reason = %t.reason,
            "circuit breaker opened"
        ),
        State::ForcedOpen => tracing::warn!(
            breaker = %t.name, from = %t.from, to = %t.to, reason = %t.reason,
            "circuit breaker forced open"
        ),
        State::HalfOpen => tracing::info!(
            breaker = %t.name, from = %t.from, to = %t.to, reason = %t.reason,
            "circuit breaker half-open, sending trial calls"
        ),
        // Nothing protects the dependency while forced closed: worth a WARN, not an INFO.
        State::ForcedClosed => tracing::warn!(
            breaker = %t.name, from = %t.from, to = %t.to, reason = %t.reason,
            "circuit breaker forced closed: every call goes through, nothing trips"
        ),
        State::Closed => tracing::info!(
            breaker = %t.name, from = %t.from, to = %t.to, reason = %t.reason,
            "circuit breaker closed"
        ),
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::Reason;

    #[test]
    fn trials_that_reopen_on_slowness_alone_are_called_slow_not_failed() {
        let slow = Reason::TrialsFailed { ok: 0, failed: 0 };
        assert_eq!(slow.to_string(), "trials too slow (0 ok in time, 0 failed)");
        let failed = Reason::TrialsFailed { ok: 3, failed: 2 };
        assert_eq!(failed.to_string(), "trials failed (3 ok, 2 failed)");
    }
}
