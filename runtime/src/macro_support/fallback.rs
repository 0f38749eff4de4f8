//! What `fallback = path` may name (a function of the error, or of the call's arguments and
//! the error) and return (the value, or a future of it), and its answer as one future.

use std::future::{ready, Future, Ready};
use std::pin::Pin;
use std::task::{Context, Poll};

use crate::error::Error;

/// Marks a fallback that takes the error only: `fn(Error<E>) -> R`.
pub struct ErrorOnly;
/// Marks a fallback that takes the call's arguments by reference, then the error.
pub struct WithArguments;

/// What `fallback = path` may name: a function of the error alone, or of the call's arguments
/// by reference (`&self` first for methods) and then the error, as resilience4j's fallback
/// methods are. `Args` is the tuple of references the call site lends; the marker `M` keeps the
/// two shapes apart and inference picks the one the function has, so a fallback of the error
/// alone is called exactly as before.
#[diagnostic::on_unimplemented(
    message = "this fallback does not fit: it must take the `fusebox::Error<E>` alone, or the call's arguments by reference and then the `fusebox::Error<E>`",
    label = "expected `fn(fusebox::Error<E>) -> R`, or e.g. `fn(&Order, fusebox::Error<E>) -> R` (`&self` first for methods), sync or async",
    note = "the call lends its arguments in order: references and `&self` as they are, numbers, `bool` and `char` as `&u32`...; other owned arguments are moved into the call, so take them by reference in the annotated function to let the fallback see them"
)]
pub trait Fallback<Args, E, M> {
    /// What the fallback returns (the value, or a future of it).
    type Output;
    /// Calls the fallback.
    fn call_fallback(self, args: Args, err: Error<E>) -> Self::Output;
}

impl<F, O, E, Args> Fallback<Args, E, ErrorOnly> for F
where
    F: FnOnce(Error<E>) -> O,
{
    type Output = O;
    #[inline]
    fn call_fallback(self, _: Args, err: Error<E>) -> O {
        self(err)
    }
}

macro_rules! with_arguments {
    ($($t:ident $a:ident $l:lifetime),+) => {
        impl<$($l,)+ F, O, E, $($t: ?Sized),+> Fallback<($(&$l $t,)+), E, WithArguments> for F
        where
            F: FnOnce($(&$l $t,)+ Error<E>) -> O,
        {
            type Output = O;
            #[inline]
            fn call_fallback(self, ($($a,)+): ($(&$l $t,)+), err: Error<E>) -> O {
                self($($a,)+ err)
            }
        }

        with_every_argument!($($t $a $l),+);
    };
}

/// Marks a fallback that takes the longer list of a [`Lent`], then the error.
pub struct WithEveryArgument;

/// What a call site lends when it kept more than the references every call can lend after
/// its body ran: those (`strict`), and the longer list (`every`). Under `#[retry]` the
/// by-value arguments are kept (each attempt takes clones), so `every` is every argument by
/// reference; a method taking `self: Arc<Self>` (or `Rc`) keeps a clone of its handle for a
/// fallback, so `every` starts with `&Self`.
pub struct Lent<S, A> {
    /// References, `&self` and `Copy` primitives: what every call site lends.
    pub strict: S,
    /// The longer list, in the arguments' order.
    pub every: A,
}

/// What `fallback = path` may name on a call site that lends a [`Lent`]: a [`Fallback`] of
/// the error alone or of the shorter list (so one written before the longer list existed keeps
/// compiling), or a function of the longer list and then the error (`fn(&Order, Error<E>)` for
/// a retried `order: Order`, `fn(&self, Error<E>)` for `self: Arc<Self>`). A trait of its own,
/// so [`Fallback`]'s impls stay one per shape and its mismatches stay precise.
#[diagnostic::on_unimplemented(
    message = "this fallback does not fit: it must take the `fusebox::Error<E>` alone, or the call's arguments by reference and then the `fusebox::Error<E>`",
    label = "expected `fn(fusebox::Error<E>) -> R`, or e.g. `fn(&Order, fusebox::Error<E>) -> R` (`&self` first for methods), sync or async",
    note = "this call lends two lists, and a fallback may take either (`EitherFallback<shorter, longer, ..>`): the longer adds what the call keeps for its fallback (under `#[retry]`, the arguments taken by value; with `self: Arc<Self>`, `&self`)"
)]
pub trait EitherFallback<S, A, E, M> {
    /// What the fallback returns (the value, or a future of it).
    type Output;
    /// Calls the fallback.
    fn call_either_fallback(self, lent: Lent<S, A>, err: Error<E>) -> Self::Output;
}

impl<F, S, A, E, M> EitherFallback<S, A, E, (M, S)> for F
where
    F: Fallback<S, E, M>,
{
    type Output = F::Output;
    #[inline]
    fn call_either_fallback(self, lent: Lent<S, A>, err: Error<E>) -> F::Output {
        self.call_fallback(lent.strict, err)
    }
}

macro_rules! with_every_argument {
    ($($t:ident $a:ident $l:lifetime),+) => {
        impl<$($l,)+ F, O, E, Strict, $($t: ?Sized),+> EitherFallback<Strict, ($(&$l $t,)+), E, WithEveryArgument> for F
        where
            F: FnOnce($(&$l $t,)+ Error<E>) -> O,
        {
            type Output = O;
            #[inline]
            fn call_either_fallback(self, lent: Lent<Strict, ($(&$l $t,)+)>, err: Error<E>) -> O {
                let ($($a,)+) = lent.every;
                self($($a,)+ err)
            }
        }
    };
}

for_each_arity!(with_arguments);

/// Calls a call site's fallback of either shape (see [`Fallback`]).
#[inline]
pub fn call_fallback<F, Args, E, M>(f: F, args: Args, err: Error<E>) -> F::Output
where
    F: Fallback<Args, E, M>,
{
    f.call_fallback(args, err)
}

/// Calls the fallback of a call site that lends a [`Lent`] (see [`EitherFallback`]).
#[inline]
pub fn call_either_fallback<F, S, A, E, M>(f: F, lent: Lent<S, A>, err: Error<E>) -> F::Output
where
    F: EitherFallback<S, A, E, M>,
{
    f.call_either_fallback(lent, err)
}

/// Marks a fallback that returns the value itself.
pub struct SyncFallback;
/// Marks a fallback that returns a future of the value (an `async fn`).
pub struct AsyncFallback;

/// What a fallback may return: the function's return type `R`, or a future of it. The marker
/// keeps the two impls apart; inference picks the one that fits.
#[diagnostic::on_unimplemented(
    message = "the fallback returns `{Self}`, but the annotated function returns `{R}`",
    label = "a fallback must return `{R}`, or be an `async fn` returning it",
    note = "a fallback is `fn(fusebox::Error<E>) -> R` or `async fn(fusebox::Error<E>) -> R` (optionally taking the call's arguments by reference first), where `R` is the annotated function's return type"
)]
pub trait FallbackReturn<R, M> {
    /// The future the generated code awaits.
    type Future: Future;
    /// Turns the fallback's result into a future.
    fn into_future(self) -> Self::Future;
    /// That future's output as `R` (it is `R`: the identity, named so the answer's type is
    /// `R` even where the bound is not met, see [`fallback_answer`]).
    fn output(out: <Self::Future as Future>::Output) -> R;
}

impl<R> FallbackReturn<R, SyncFallback> for R {
    type Future = Ready<R>;
    fn into_future(self) -> Ready<R> {
        ready(self)
    }
    fn output(out: R) -> R {
        out
    }
}

impl<R, F: Future<Output = R>> FallbackReturn<R, AsyncFallback> for F {
    type Future = F;
    fn into_future(self) -> F {
        self
    }
    fn output(out: R) -> R {
        out
    }
}

pin_project_lite::pin_project! {
    /// The future of a fallback's answer, resolving to the annotated function's return type.
    /// It polls its inner future through a function chosen where the bound was checked, so
    /// being a `Future` asks nothing of `F`: a fallback of the wrong type is one unmet bound
    /// at [`fallback_answer`], not a second "is not a future" where the answer is awaited.
    pub struct FallbackAnswer<F, R> {
        #[pin]
        fut: F,
        poll: fn(Pin<&mut F>, &mut Context<'_>) -> Poll<R>,
    }
}

impl<F, R> Future for FallbackAnswer<F, R> {
    type Output = R;
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<R> {
        let this = self.project();
        (*this.poll)(this.fut, cx)
    }
}

/// Polls a fallback's future as `R` (`FallbackAnswer::poll`).
fn poll_answer<R, M, T: FallbackReturn<R, M>>(
    fut: Pin<&mut T::Future>,
    cx: &mut Context<'_>,
) -> Poll<R> {
    fut.poll(cx).map(T::output)
}

/// The fallback's answer as a future of exactly `R`, whichever [`FallbackReturn`] it is: a
/// fallback of the wrong type is one unmet bound here, not a second "mismatched types" (or
/// "is not a future") where the generated code uses the answer.
///
/// A named future rather than an `async fn`: the generated future then holds a type that is
/// `Send` field by field (`Ready<R>` and a fn pointer for a sync fallback). An `async fn`'s
/// opaque future had its `Send` re-proved with lifetimes erased, which failed for every `R`
/// that borrows (`Result<&'static str, E>`): such an annotated fn could not be spawned.
pub fn fallback_answer<R, M, T: FallbackReturn<R, M>>(answer: T) -> FallbackAnswer<T::Future, R> {
    FallbackAnswer {
        fut: answer.into_future(),
        poll: poll_answer::<R, M, T>,
    }
}
