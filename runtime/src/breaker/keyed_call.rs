//! A keyed call (`#[breaker(key = ...)]`) whose breaker is lent for its first poll (issue 28).
//!
//! Each thread keeps the keys it used last at each keyed call site (`registry/hot_keys/`).
//! Handing the key's breaker out of that table as an owned `Breaker` took its reference count
//! and dropped it on every call: two atomic read-modify-writes on a count every task calling
//! the key shares, about half of what a keyed call cost over a static name on one thread
//! (BENCHMARKS.md). Yet a call that answers in its first poll (a healthy dependency's fast
//! answer, every refusal while open) needs its breaker during that poll only.
//!
//! So the first poll borrows the breaker where it is ([`Lend::lend`]: the table keeps a
//! reference of its own and replaces no slot while a loan is out), and runs `Call::poll`'s
//! common cases on it: a plain closed breaker without a bulkhead, the refusal while open or
//! forced open. Only a call that goes on past them keeps a breaker ([`Lend::keep`]): one that
//! waits, or one in any other state or with a bulkhead. It is kept in a cell its caller owns
//! (`registry::KeyedBreaker`, a local of the generated fn), which outlives the call's future,
//! and taken while the loan is still out; the permit of a call that waits is built on the kept
//! breaker (`closed::waits`), so nothing the future stores points at the loan.
//!
//! Why a loan and not a borrow inside the table's `with` closure (safe code throughout): the
//! call's answer then came back through the closure and `try_with`'s `Result`, written to memory
//! field by field and copied whole several times: 108 ns a keyed call against 82 with the
//! reference count (BENCHMARKS.md). The loan is one pointer in a register.

use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::task::{Context, Poll};

use pin_project_lite::pin_project;

use super::call::{poll_general, refused, Finish, Stage};
use super::closed::{answered_at_once, waits};
use super::core::Core;
use super::outcome::Outcome;
use super::Breaker;
use crate::bulkhead::Bulkhead;

/// Where a keyed call's breaker comes from (the registry's `KeyedBreaker`).
pub(crate) trait Lend {
    /// A breaker lent for a while (this thread's recent keys: `registry/hot_keys/`).
    type Loan: Loan;

    /// The key's breaker, lent with no reference count taken, or `None` when only a lookup
    /// (or the breaker kept already) has it.
    fn lend(&self) -> Option<Self::Loan>;

    /// The breaker kept already, if any. Once [`keep`](Self::keep) has returned, this is
    /// that same breaker for as long as `self` lives: a keyed call past its first poll finds
    /// its breaker here.
    fn kept(&self) -> Option<&Breaker>;

    /// The key's breaker, kept for as long as `self`: the loan's, or looked up. Kept once:
    /// later calls return the same breaker.
    fn keep(&self, lent: Option<&Self::Loan>) -> &Breaker;
}

/// A lent breaker, for as long as the loan lives: dropped before the poll that took it
/// returns.
pub(crate) trait Loan {
    /// The lent breaker's core.
    fn core(&self) -> &Core;
    /// The lent breaker, as one of the caller's own (its reference count taken).
    fn breaker(&self) -> Breaker;
}

pin_project! {
    /// One keyed call: a [`Call`](super::call::Call) whose breaker is found at its first poll,
    /// and kept only if the call goes on past it.
    pub(crate) struct KeyedCall<'a, S, F, C, M> {
        // First, so it is dropped first: a dropped call ends before its outcome is recorded.
        #[pin]
        fut: Option<F>,
        // Past the first poll, the breaker kept then is `source.kept()`'s: not a field of its
        // own, as every keyed call's future carries this struct.
        source: &'a S,
        bulkhead: Option<&'a Bulkhead>,
        classify: Option<C>,
        stage: Stage<'a>,
        finish: PhantomData<M>,
    }
}

/// A keyed call whose `Err` values count as failures when `is_failure` says so.
pub(crate) fn run_keyed<'a, S, T, E, F, C, M>(
    source: &'a S,
    bulkhead: Option<&'a Bulkhead>,
    fut: F,
    is_failure: C,
    finish: M,
) -> KeyedCall<'a, S, F, impl FnOnce(&Result<T, E>) -> Outcome, M>
where
    F: Future<Output = Result<T, E>>,
    C: FnOnce(&E) -> bool,
{
    let classify = |r: &Result<T, E>| match r {
        Err(e) if is_failure(e) => Outcome::Failure,
        _ => Outcome::Success,
    };
    run_keyed_classified(source, bulkhead, fut, classify, finish)
}

/// A keyed call whose results `classify` judges.
pub(crate) fn run_keyed_classified<'a, S, T, E, F, C, M>(
    source: &'a S,
    bulkhead: Option<&'a Bulkhead>,
    fut: F,
    classify: C,
    _: M,
) -> KeyedCall<'a, S, F, C, M>
where
    F: Future<Output = Result<T, E>>,
    C: FnOnce(&Result<T, E>) -> Outcome,
{
    KeyedCall {
        fut: Some(fut),
        source,
        bulkhead,
        classify: Some(classify),
        stage: Stage::Admit,
        finish: PhantomData,
    }
}

impl<'a, T, E, S, F, C, M> Future for KeyedCall<'a, S, F, C, M>
where
    S: Lend,
    F: Future<Output = Result<T, E>>,
    C: FnOnce(&Result<T, E>) -> Outcome,
    M: Finish<T, E>,
{
    type Output = M::Output;

    /// The first poll on the lent breaker when it answers then (`Call::poll`'s common cases);
    /// everything else on the kept one.
    #[inline(always)]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<M::Output> {
        let this = self.project();
        if !matches!(this.stage, Stage::Admit) {
            // A call past its first poll kept its breaker then. One that completed in it kept
            // none (a loan's: it says so here) or kept one (the general path's `Done` says
            // so): either way, polled after it completed.
            let Some(b) = this.source.kept() else {
                panic!("a breaker call was polled after it completed");
            };
            return poll_kept::<T, E, F, C, M>(
                &b.0,
                this.bulkhead,
                this.fut,
                this.classify,
                this.stage,
                cx,
            );
        }
        let (source, bulkhead) = (*this.source, *this.bulkhead);
        let (mut fut, classify, stage) = (this.fut, this.classify, this.stage);
        // Lent (an integer key this thread used lately), or kept already (a text key, looked
        // up when the call was made): either way the first poll runs here, inlined.
        let loan = source.lend();
        let core = match &loan {
            Some(l) => Some(l.core()),
            None => source.kept().map(|b| &*b.0),
        };
        if let Some(core) = core {
            // Set when the first poll is left to the general path: a flag beside the answer
            // rather than an `Option` around it, which was written field by field and copied
            // whole (issue 28).
            let mut general = false;
            let p = first_poll::<T, E, F, C, M>(
                core,
                || source.keep(loan.as_ref()),
                bulkhead,
                fut.as_mut(),
                classify,
                stage,
                cx,
                &mut general,
            );
            if !general {
                return p;
            }
        }
        drop(loan);
        unlent::<T, E, S, F, C, M>(source, bulkhead, fut, classify, stage, cx)
    }
}

/// The first poll on `b`, lent or kept: `Call::poll`'s common cases (a plain closed breaker
/// without a bulkhead, the refusal while open or forced open), else `general` set (and
/// `Pending`, which means nothing then) with the breaker kept for the general path.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn first_poll<'a, T, E, F, C, M>(
    core: &Core,
    keep: impl FnOnce() -> &'a Breaker,
    bulkhead: Option<&'a Bulkhead>,
    mut fut: Pin<&mut Option<F>>,
    classify: &mut Option<C>,
    stage: &mut Stage<'a>,
    cx: &mut Context<'_>,
    general: &mut bool,
) -> Poll<M::Output>
where
    F: Future<Output = Result<T, E>>,
    C: FnOnce(&Result<T, E>) -> Outcome,
    M: Finish<T, E>,
{
    let w = core.word();
    if w.plain_closed() && bulkhead.is_none() {
        // Done while it is polled, as `Call::poll` does. (`Admit` holds nothing.)
        std::mem::forget(std::mem::replace(stage, Stage::Done));
        let gen = w.generation();
        if let Some(c) = answered_at_once(core, gen, fut.as_mut(), classify, cx) {
            return Poll::Ready(M::finish(c));
        }
        // It waits: its permit goes on the kept breaker (the same one).
        let core: &'a Core = &keep().0;
        return waits(core, gen, fut, classify, stage, cx).map(M::finish);
    }
    if let Some(r) = core.refuse_at_once(w) {
        std::mem::forget(std::mem::replace(stage, Stage::Done));
        return Poll::Ready(M::finish(refused(core, fut, r)));
    }
    // Any other state: the general path, on the kept breaker.
    keep();
    *general = true;
    Poll::Pending
}

/// A first poll that found nothing to borrow and nothing kept (an integer key this thread has
/// not taken in, or under a test scope's registry), or a breaker in another state: on the kept
/// breaker.
#[inline(never)]
fn unlent<'a, T, E, S, F, C, M>(
    source: &'a S,
    bulkhead: Option<&'a Bulkhead>,
    mut fut: Pin<&mut Option<F>>,
    classify: &mut Option<C>,
    stage: &mut Stage<'a>,
    cx: &mut Context<'_>,
) -> Poll<M::Output>
where
    S: Lend,
    F: Future<Output = Result<T, E>>,
    C: FnOnce(&Result<T, E>) -> Outcome,
    M: Finish<T, E>,
{
    let core = match source.kept() {
        Some(b) => &b.0,
        None => {
            let b = source.keep(None);
            let mut general = false;
            let first = first_poll::<T, E, F, C, M>(
                &b.0,
                || b,
                bulkhead,
                fut.as_mut(),
                classify,
                stage,
                cx,
                &mut general,
            );
            if !general {
                return first;
            }
            &b.0
        }
    };
    poll_general::<T, E, F, C, M>(core, &bulkhead, fut, classify, stage, cx)
}

/// Every poll on the kept breaker: the general path, out of line.
#[inline(never)]
fn poll_kept<'a, T, E, F, C, M>(
    core: &'a Core,
    bulkhead: &Option<&'a Bulkhead>,
    fut: Pin<&mut Option<F>>,
    classify: &mut Option<C>,
    stage: &mut Stage<'a>,
    cx: &mut Context<'_>,
) -> Poll<M::Output>
where
    F: Future<Output = Result<T, E>>,
    C: FnOnce(&Result<T, E>) -> Outcome,
    M: Finish<T, E>,
{
    poll_general::<T, E, F, C, M>(core, bulkhead, fut, classify, stage, cx)
}
