//! Running a call through a breaker (and optionally a bulkhead), always in one order:
//! breaker admission, then bulkhead permit, then timeout, then the call. So an open breaker
//! never takes a bulkhead slot, and a full bulkhead is not a failure of the dependency
//! (ARCHITECTURE.md follows one call along this path). A probe (while open) that finds the
//! pool full with an earlier probe of its breaker holding a slot goes without one.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use pin_project_lite::pin_project;

use super::closed::closed_first_poll;
use super::core::{Admission, Core};
use super::outcome::Outcome;
use super::permit::{Drive, Outcome as Ended, Permit};
use crate::bulkhead::{Bulkhead, BulkheadPermit};
use crate::error::{Error, Rejection};

pub use super::completion::Completion;
pub(super) use super::completion::{settle, settle_classified};
pub(crate) use super::completion::{AsResult, Finish, Same};

/// A call whose errors count as failures when `is_failure` says so, and as successes
/// otherwise (today's `failure` predicate).
/// `finish` says what the `Completion` becomes ([`Same`] or [`AsResult`]).
pub(crate) fn run<'a, T, E, F, C, M>(
    core: &'a Core,
    bulkhead: Option<&'a Bulkhead>,
    fut: F,
    is_failure: C,
    finish: M,
) -> Call<'a, F, impl FnOnce(&Result<T, E>) -> Outcome, M>
where
    F: Future<Output = Result<T, E>>,
    C: FnOnce(&E) -> bool,
{
    let classify = |r: &Result<T, E>| match r {
        Err(e) if is_failure(e) => Outcome::Failure,
        _ => Outcome::Success,
    };
    Call::new(core, bulkhead, fut, classify, finish)
}

/// The one code path every call takes: builder API and generated code alike.
pub(crate) fn run_classified<'a, T, E, F, C>(
    core: &'a Core,
    bulkhead: Option<&'a Bulkhead>,
    fut: F,
    classify: C,
) -> Call<'a, F, C, Same>
where
    F: Future<Output = Result<T, E>>,
    C: FnOnce(&Result<T, E>) -> Outcome,
{
    Call::new(core, bulkhead, fut, classify, Same)
}

/// Waiting for a bulkhead slot: boxed, so its state (a timeout and a `Notified`, 240 bytes)
/// sits only in the calls that wait, not in every call's future.
type Waiting<'a> =
    Pin<Box<dyn Future<Output = Result<BulkheadPermit<'a>, Rejection>> + Send + Sync + 'a>>;

/// Where a call is.
pub(super) enum Stage<'a> {
    /// Not polled yet: admission comes at the first poll.
    Admit,
    /// Admitted by the breaker, waiting for a bulkhead slot (`max_wait`).
    Waiting(Permit<'a>, Waiting<'a>),
    /// Running: it waited in its first poll.
    Running {
        permit: Permit<'a>,
        slot: Option<BulkheadPermit<'a>>,
        drive: Drive,
    },
    /// Handed back.
    Done,
}

pin_project! {
    /// One call through a breaker (and maybe a bulkhead), written as a future by hand rather
    /// than as nested `async fn`s: each of those stored the caller's future again (a 1 KB
    /// future came back as a 10 KB one), and every call moves what it returns. Here the
    /// caller's future is stored once, beside the permit and its timer state.
    ///
    /// Order of one call: breaker admission, then bulkhead slot, then timeout, then the call.
    /// A call that answers in its first poll is admitted, run and recorded in that poll
    /// without storing its permit.
    #[project = CallProj]
    pub(crate) struct Call<'a, F, C, M> {
        // First, so it is dropped first: a dropped call ends before its outcome is recorded
        // (the permit's `Drop`), as with a call dropped while it waits.
        #[pin]
        fut: Option<F>,
        core: &'a Core,
        bulkhead: Option<&'a Bulkhead>,
        classify: Option<C>,
        stage: Stage<'a>,
        finish: std::marker::PhantomData<M>,
    }
}

impl<'a, F, C, M> Call<'a, F, C, M> {
    fn new(core: &'a Core, bulkhead: Option<&'a Bulkhead>, fut: F, classify: C, _: M) -> Self {
        Call {
            fut: Some(fut),
            core,
            bulkhead,
            classify: Some(classify),
            stage: Stage::Admit,
            finish: std::marker::PhantomData,
        }
    }
}

impl<T, E, F, C, M> Future for Call<'_, F, C, M>
where
    F: Future<Output = Result<T, E>>,
    C: FnOnce(&Result<T, E>) -> Outcome,
    M: Finish<T, E>,
{
    type Output = M::Output;

    /// The common cases are written out here and inlined into the caller's poll: a plain
    /// closed breaker's call (`closed.rs`), and the refusal while open or forced open. A `Completion` an
    /// out-of-line `poll` returned was written to memory field by field and read back whole by
    /// the caller, a store-forwarding stall on every call (issue 28); inlined, a success and a
    /// refusal come back in registers. Everything else is [`Call::poll_general`].
    #[inline(always)]
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<M::Output> {
        let this = self.as_mut().project();
        let core = *this.core;
        if matches!(this.stage, Stage::Admit) {
            let w = core.word();
            if w.plain_closed() && this.bulkhead.is_none() {
                // Done while it is polled, as on the general path: a call polled again after
                // its panic was caught says so rather than running twice. (`Admit` holds
                // nothing: forgotten, no drop glue.)
                std::mem::forget(std::mem::replace(this.stage, Stage::Done));
                let (gen, fut, classify) = (w.generation(), this.fut, this.classify);
                return closed_first_poll(core, gen, fut, classify, this.stage, cx).map(M::finish);
            }
            if let Some(r) = core.refuse_at_once(w) {
                return Poll::Ready(M::finish(refused(core, this.fut, r)));
            }
        }
        self.poll_general(cx)
    }
}

impl<T, E, F, C, M> Call<'_, F, C, M>
where
    F: Future<Output = Result<T, E>>,
    C: FnOnce(&Result<T, E>) -> Outcome,
    M: Finish<T, E>,
{
    /// Every other poll: admission in any state, bulkhead slots, a call that waits.
    #[inline(never)]
    fn poll_general(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<M::Output> {
        let this = self.project();
        poll_general::<T, E, F, C, M>(
            this.core,
            this.bulkhead,
            this.fut,
            this.classify,
            this.stage,
            cx,
        )
    }
}

/// A call's every other poll, on its parts (a [`Call`]'s, or a keyed call's once its breaker
/// is kept, `keyed_call.rs`): admission in any state, bulkhead slots, a call that waits.
#[inline(always)]
pub(super) fn poll_general<'a, T, E, F, C, M>(
    core: &'a Core,
    bulkhead: &Option<&'a Bulkhead>,
    mut fut: Pin<&mut Option<F>>,
    classify: &mut Option<C>,
    stage: &mut Stage<'a>,
    cx: &mut Context<'_>,
) -> Poll<M::Output>
where
    F: Future<Output = Result<T, E>>,
    C: FnOnce(&Result<T, E>) -> Outcome,
    M: Finish<T, E>,
{
    loop {
        // Polled in place, not moved out for the poll: a panic in the call leaves the
        // permit and the slot in the call, dropped after the call's future (field order).
        if let Stage::Running {
            permit,
            slot,
            drive,
        } = &mut *stage
        {
            // Polled again after its panic was caught: as an `async fn` would, say so
            // rather than poll the future that panicked.
            assert!(
                !permit.panicked(),
                "a breaker call was polled after it panicked"
            );
            let first = matches!(drive, Drive::First);
            let Some(call) = fut.as_mut().as_pin_mut() else {
                unreachable!("a call's future is there until it ends");
            };
            let ended = match permit.poll_drive(call, drive, cx) {
                Poll::Ready(ended) => ended,
                Poll::Pending => {
                    if let (true, Some(s)) = (first, &*slot) {
                        // An adaptive pool times its slot from here, as the permit does.
                        s.start();
                    }
                    return Poll::Pending;
                }
            };
            let Stage::Running { permit, slot, .. } = std::mem::replace(stage, Stage::Done) else {
                unreachable!("matched above");
            };
            fut.set(None);
            let c = settle(core, permit, ended, classify.take());
            drop(slot);
            return Poll::Ready(M::finish(c));
        }
        if matches!(stage, Stage::Admit) {
            // `Admit` holds nothing: forgotten, so no drop glue runs for it.
            std::mem::forget(std::mem::replace(stage, Stage::Done));
            {
                // Live settings (`live.rs`) go with the permit for the call; `None` on the
                // plain closed path.
                let (admission, live) = match core.admit() {
                    Ok(a) => a.take_live(),
                    Err(r) => return Poll::Ready(M::finish(refused(core, fut.as_mut(), r))),
                };
                let layer = if live { core.live.get() } else { None };
                // A probe (one call at a time while open, spaced and backing off while
                // probes hang) takes a free slot; a full pool that an earlier probe of this
                // breaker holds a slot of lets it through without one (another breaker's
                // or key's probe is any other call): while open only its probes enter, and
                // probes started just before the healing held its slots (an adaptive
                // limit the outage shrank to one), keeping every later probe out until
                // they ended: 10 s after healing in a real run, 1 s without the pool. A
                // pool full of other calls refuses (or queues) the probe as any call.
                let probe = matches!(admission, Admission::Probe(_));
                let mut permit = Permit::under(core, admission, layer);
                // An open breaker returned above, so it never takes a bulkhead slot.
                let slot = match bulkhead {
                    None => None,
                    Some(b) => match b.try_acquire_now() {
                        Some(mut slot) => {
                            if probe {
                                slot.held_by_probe(core.id());
                            }
                            Some(slot)
                        }
                        None if probe && b.holds_a_probe_of(core.id()) => None,
                        // A full fail-fast pool refuses at once: nothing boxed.
                        None if !b.may_wait() => {
                            fut.set(None);
                            let r = b.full();
                            refused_by_bulkhead(core, bulkhead, permit);
                            return Poll::Ready(M::finish(Completion::Failed(Error::Rejected(r))));
                        }
                        None => {
                            // A key whose call queues here is not idle (`Core::waiting`).
                            permit.begins_waiting();
                            *stage = Stage::Waiting(permit, Box::pin(b.acquire_untimed()));
                            continue;
                        }
                    },
                };
                if slot.is_some() {
                    // Polled in place from here, so that a panic in the call leaves the slot
                    // with the call, released when the call is dropped, not before.
                    *stage = Stage::Running {
                        permit,
                        slot,
                        drive: Drive::First,
                    };
                    continue;
                }
                // Whole in this poll without a slot: nothing stored if it answers now.
                let mut drive = Drive::First;
                let Some(call) = fut.as_mut().as_pin_mut() else {
                    unreachable!("a call's future is there until it ends");
                };
                match permit.poll_drive(call, &mut drive, cx) {
                    Poll::Ready(ended) => {
                        if matches!(drive, Drive::First) {
                            // Nothing to drop (no timer): skips the drop glue's call.
                            std::mem::forget(drive);
                        }
                        fut.set(None);
                        let c = settle(core, permit, ended, classify.take());
                        return Poll::Ready(M::finish(c));
                    }
                    Poll::Pending => {
                        *stage = Stage::Running {
                            permit,
                            slot: None,
                            drive,
                        };
                        return Poll::Pending;
                    }
                }
            }
        }
        match std::mem::replace(stage, Stage::Done) {
            Stage::Waiting(permit, mut waiting) => match waiting.as_mut().poll(cx) {
                Poll::Pending => {
                    *stage = Stage::Waiting(permit, waiting);
                    return Poll::Pending;
                }
                Poll::Ready(Ok(mut slot)) => {
                    drop(waiting);
                    if permit.is_probe() {
                        slot.held_by_probe(core.id());
                    }
                    *stage = Stage::Running {
                        permit,
                        slot: Some(slot),
                        drive: Drive::First,
                    };
                }
                Poll::Ready(Err(r)) => {
                    drop(waiting);
                    fut.set(None);
                    refused_by_bulkhead(core, bulkhead, permit);
                    return Poll::Ready(M::finish(Completion::Failed(Error::Rejected(r))));
                }
            },
            Stage::Admit | Stage::Running { .. } => {
                unreachable!("admitted above, or polled in place")
            }
            Stage::Done => panic!("a breaker call was polled after it completed"),
        }
    }
}

/// Refused by the breaker: the call is dropped unpolled, and a shadow hears of the refusal.
#[inline(always)]
pub(super) fn refused<F, T, E>(
    core: &Core,
    mut fut: Pin<&mut Option<F>>,
    r: Rejection,
) -> Completion<T, E> {
    fut.set(None);
    if let Some(shadow) = core.shadow.watching() {
        shadow.refused();
    }
    Completion::Failed(Error::Rejected(r))
}

/// Admitted by the breaker, refused by a full bulkhead: recorded as such (never a failure).
fn refused_by_bulkhead(core: &Core, bulkhead: &Option<&Bulkhead>, permit: Permit<'_>) {
    // Every slot held by one of our calls already slow, or just handed on by one: the refusal
    // is slowness the window would otherwise never see (issue 26, derived slow rule only).
    let behind_slow = permit.config().settings().refusals_count_as_slow()
        && bulkhead.is_some_and(|b| core.full_behind_slow(b.pool()));
    permit.finish(if behind_slow {
        Ended::FullBehindSlow
    } else {
        Ended::BulkheadFull
    });
}
