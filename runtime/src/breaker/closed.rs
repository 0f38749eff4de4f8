//! The closed path, the common case written out (issue 28): a call admitted by a plain closed
//! word with no bulkhead is polled before any permit is built, and a success in that first
//! poll is recorded without one. Everything here is what the general path (`call.rs`'s
//! `Call`, `permit.rs`'s `Permit`) does for that case, step for step; anything unusual (a
//! transition since admission, live settings, a shadow, a call that waits) is handed to it.
//!
//! Why a path of its own: a call through a healthy breaker is the one every user pays for on
//! every request, and the permit's general bookkeeping (trials, probes, timers, live layers)
//! cost it ~200 instructions it never used (BENCHMARKS.md).

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use super::call::{settle, settle_classified, Completion, Stage};
use super::core::{Admission, Core};
use super::outcome::Outcome;
use super::permit::{record_at_once, Drive, Outcome as Ended, Permit};

/// The closed path, the common case written out: a call admitted by a plain closed word of
/// generation `gen` (one load), with no bulkhead. Polled first without a permit; one that
/// answers then is settled without one (`success_at_once` for a success), and only a call that
/// waits builds its permit and timers into `stage`, as `Permit::poll_drive` would have at that
/// point.
///
/// Inlined into the call's `poll` (itself inlined into the caller's): a success comes back in
/// registers. Everything else is out of line (`answered_otherwise`, `waits`), so a returned
/// `Completion` is never written to memory and read back whole on the common path, which
/// stalled every move of it.
#[inline(always)]
pub(super) fn closed_first_poll<'a, T, E, F, C>(
    core: &'a Core,
    gen: u64,
    mut fut: Pin<&mut Option<F>>,
    classify: &mut Option<C>,
    stage: &mut Stage<'a>,
    cx: &mut Context<'_>,
) -> Poll<Completion<T, E>>
where
    F: Future<Output = Result<T, E>>,
    C: FnOnce(&Result<T, E>) -> Outcome,
{
    let Some(call) = fut.as_mut().as_pin_mut() else {
        unreachable!("a call's future is there until it ends");
    };
    // A panic in this poll unwinds through the guard, which records it as the permit would.
    let guard = PanicGuard { core, gen };
    let polled = call.poll(cx);
    std::mem::forget(guard);
    let Poll::Ready(result) = polled else {
        return waits(core, gen, fut, classify, stage, cx);
    };
    fut.set(None);
    let Some(classify) = classify.take() else {
        unreachable!("a call is classified once");
    };
    let outcome = classify(&result);
    match (result, outcome) {
        (Ok(v), Outcome::Success) if core.shadow.watching().is_none() => {
            success_at_once(core, gen);
            Poll::Ready(Completion::Ok(v))
        }
        (result, outcome) => Poll::Ready(answered_otherwise(core, gen, result, outcome)),
    }
}

/// The first poll of the closed path without a permit: the call's completion if it answered,
/// settled on `core`; `None` if it waits, with nothing recorded yet (the caller builds its
/// permit with [`waits`], on a `core` that may be borrowed for longer: a keyed call's
/// breaker is lent for this poll only, `keyed_call.rs`). `closed_first_poll` writes the same
/// steps out rather than calling this: through the `Option`, `#[breaker]`'s call took 14
/// instructions more (callgrind), its `Completion` moved once more.
#[inline(always)]
pub(super) fn answered_at_once<T, E, F, C>(
    core: &Core,
    gen: u64,
    mut fut: Pin<&mut Option<F>>,
    classify: &mut Option<C>,
    cx: &mut Context<'_>,
) -> Option<Completion<T, E>>
where
    F: Future<Output = Result<T, E>>,
    C: FnOnce(&Result<T, E>) -> Outcome,
{
    let Some(call) = fut.as_mut().as_pin_mut() else {
        unreachable!("a call's future is there until it ends");
    };
    // A panic in this poll unwinds through the guard, which records it as the permit would.
    let guard = PanicGuard { core, gen };
    let polled = call.poll(cx);
    std::mem::forget(guard);
    let Poll::Ready(result) = polled else {
        return None;
    };
    fut.set(None);
    let Some(classify) = classify.take() else {
        unreachable!("a call is classified once");
    };
    let outcome = classify(&result);
    match (result, outcome) {
        (Ok(v), Outcome::Success) if core.shadow.watching().is_none() => {
            success_at_once(core, gen);
            Some(Completion::Ok(v))
        }
        (result, outcome) => Some(answered_otherwise(core, gen, result, outcome)),
    }
}

/// A first poll that answered with anything but a plain success: recorded by the permit.
#[inline(never)]
fn answered_otherwise<T, E>(
    core: &Core,
    gen: u64,
    result: Result<T, E>,
    outcome: Outcome,
) -> Completion<T, E> {
    let permit = Permit::new(core, Admission::Normal(gen));
    settle_classified(core, permit, result, outcome)
}

/// A first poll that waits: its permit and timers go into `stage`, unless its timer ended it
/// at once.
#[inline(never)]
pub(super) fn waits<'a, T, E, F, C>(
    core: &'a Core,
    gen: u64,
    mut fut: Pin<&mut Option<F>>,
    classify: &mut Option<C>,
    stage: &mut Stage<'a>,
    cx: &mut Context<'_>,
) -> Poll<Completion<T, E>>
where
    C: FnOnce(&Result<T, E>) -> Outcome,
{
    let mut permit = Permit::new(core, Admission::Normal(gen));
    let mut drive = Drive::First;
    match permit.waited::<std::convert::Infallible>(&mut drive, cx) {
        Poll::Ready(Err(after)) => {
            fut.set(None);
            Poll::Ready(settle(core, permit, Err(after), classify.take()))
        }
        Poll::Ready(Ok(never)) => match never {},
        Poll::Pending => {
            *stage = Stage::Running {
                permit,
                slot: None,
                drive,
            };
            Poll::Pending
        }
    }
}

/// The closed path without a permit (`call.rs`): a normal call admitted by a plain closed
/// word of generation `gen` that succeeded within its first poll. What `record` does for it
/// (`record_answered_at_once`) while the word is still that plain closed generation, without
/// building a permit; anything else (a transition, live settings since) takes the permit's path.
#[inline]
pub(crate) fn success_at_once(core: &Core, gen: u64) {
    let w = core.word();
    // Latency zero is slow only under a zero bound, which the settings refuse (`zero_ok:
    // false` on every slow key and on `timeout`); a derived one could round to zero.
    let zero_slow = || {
        let slow = core.code_config().settings().slow();
        slow.is_some_and(|r| r.bound.is_zero())
    };
    if !w.plain_closed() || w.generation() != gen || zero_slow() {
        return success_by_permit(core, gen);
    }
    let thread = core.counters.succeed();
    record_at_once(core, &core.window, false, gen, false, thread);
}

/// `success_at_once` when the word moved since admission: the permit's path, out of line so
/// that the common case keeps a small frame.
#[cold]
#[inline(never)]
fn success_by_permit(core: &Core, gen: u64) {
    Permit::new(core, Admission::Normal(gen)).finish(Ended::Success);
}

/// Records a panic of a call polled without a permit (`call.rs`'s closed path), as the
/// permit's `Drop` would: armed across the call's first poll only, so an unwind through it is
/// the call's own panic. Disarmed by `mem::forget` once the poll returns.
pub(crate) struct PanicGuard<'a> {
    pub(crate) core: &'a Core,
    pub(crate) gen: u64,
}

impl Drop for PanicGuard<'_> {
    fn drop(&mut self) {
        Permit::new(self.core, Admission::Normal(self.gen)).finish(Ended::Panicked);
    }
}
