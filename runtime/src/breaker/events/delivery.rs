//! Ordered delivery: each transition takes its place in its registry's order under its
//! breaker's lock ([`Pending`]) and is delivered (logged, recorded, broadcast) after every one
//! before it, by one caller at a time, outside every lock; its emitter waits until it is
//! delivered. The design is the module's above ([`super`]).

use std::cell::Cell;
use std::collections::BTreeMap;
use std::sync::atomic::Ordering::Relaxed;

use super::transition::log;
use super::{Events, Live, Sink, Transition};

impl Events {
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
pub(super) struct Queue {
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
