//! `self: Arc<Self>` (or `Rc<Self>`) and a `fallback = path`: the body takes the receiver, so a
//! fallback that takes `&self` needs a second handle kept from before the body ran, and one
//! that does not must not get it (inside the body, `Arc::try_unwrap(self)` would fail and
//! `strong_count` would be one higher). The macro cannot see the fallback's signature, so the
//! generated code asks the type system, in two steps that resolve the same way:
//!
//! 1. [`keep_probe`] builds a [`KeepProbe`] of the fallback and of the list it would take with
//!    `&self` first, and `(&probe).keep(&self)` picks by autoref: [`KeepsHandle`] (a clone of
//!    the handle) when the fallback takes that list, else [`KeepsNothing`] (`()`).
//! 2. [`answer_kept`] calls the fallback through what was kept: with `&*handle` first for a
//!    handle, or through [`Fallback`](super::Fallback) with the usual list for `()`, so a
//!    fallback that fits neither gets the usual errors.
//!
//! `self: &Arc<Self>` (or `&Rc`, `&Box`) keeps nothing and asks the other way round (`lend`):
//! does the fallback take the usual list, the receiver as written (`&Arc<Self>`)? Then it is
//! called as it always was, a fallback generic in its first parameter included (a fn item's
//! own bounds are not part of its `FnOnce`, so the probe cannot see them: asking about `&Self`
//! first would pick it for `fn fb<C: Describe>(c: &C, ..)` and then fail `Client: Describe`).
//! Otherwise the borrowed handle is lent, and the fallback gets `&Self` first.

use std::marker::PhantomData;
use std::rc::Rc;
use std::sync::Arc;

use crate::error::Error;

/// A fallback `F` and the argument list `A` (`&Self` first) it is asked about.
pub struct KeepProbe<F, A>(PhantomData<(fn() -> F, A)>);

/// The probe for `fallback` and the list it would take with `&self` first. Borrows nothing
/// past the statement: the list's references are only its type.
pub fn keep_probe<F, A>(_fallback: &F, _list: &A) -> KeepProbe<F, A> {
    KeepProbe(PhantomData)
}

/// The fallback takes `&self` first: the call keeps a clone of the handle.
pub trait KeepsHandle<E> {
    /// A second handle, for the fallback (`self: Arc<Self>`).
    fn keep<P: Clone>(&self, handle: &P) -> P {
        handle.clone()
    }
}

/// The fallback does not take `&self`: nothing is kept (the autoref fallback of
/// [`KeepsHandle`]).
pub trait KeepsNothing {
    /// Nothing.
    fn keep<P>(&self, _handle: &P) {}
}

impl<T> KeepsNothing for &T {}

/// `self: &Arc<Self>`: a fallback `F` and the usual list `Args` (the receiver as written).
pub struct LendProbe<F, Args>(PhantomData<(fn() -> F, Args)>);

/// The probe for `fallback` and the usual list of a `self: &Arc<Self>` method.
pub fn lend_probe<F, Args>(_fallback: &F, _list: &Args) -> LendProbe<F, Args> {
    LendProbe(PhantomData)
}

/// The fallback takes the usual list (or the error alone): nothing is lent beside it.
pub trait LendsNothing<E, M> {
    /// Nothing.
    fn lend<P>(&self, _handle: &P) {}
}

impl<F, Args, E, M> LendsNothing<E, M> for LendProbe<F, Args> where F: super::Fallback<Args, E, M> {}

/// The fallback does not take the receiver as written: the borrowed handle is lent, for its
/// `&Self` (the autoref fallback of [`LendsNothing`]).
pub trait LendsHandle {
    /// The borrowed handle.
    fn lend<'h, P>(&self, handle: &'h P) -> &'h P {
        handle
    }
}

impl<T> LendsHandle for &T {}

/// What [`answer_kept`] calls the fallback through: a handle (`&Self` first, then `Rest`) or
/// nothing (the usual list `Args`, through [`Fallback`](super::Fallback)).
pub trait KeptHandle<F, Args, Rest, E, M> {
    /// What the fallback returns.
    type Output;
    /// Calls the fallback.
    fn answer(self, f: F, args: Args, rest: Rest, err: Error<E>) -> Self::Output;
}

/// Marks a fallback called with the handle's `&Self` first.
pub struct WithKeptSelf;

macro_rules! unkept {
    ($($t:ty),*) => {$(
        impl<F, Args, Rest, E, M> KeptHandle<F, Args, Rest, E, M> for $t
        where
            F: super::Fallback<Args, E, M>,
        {
            type Output = F::Output;
            #[inline]
            fn answer(self, f: F, args: Args, _: Rest, err: Error<E>) -> F::Output {
                f.call_fallback(args, err)
            }
        }
    )*};
}

// `&()` where the handle would have been kept (`&kept`), `()` where it would have been lent.
unkept!((), &());

macro_rules! kept_handle {
    ($($t:ident $a:ident $l:lifetime),*) => {
        impl<'s, $($l,)* F, S: ?Sized, E, O $(, $t: ?Sized)*> KeepsHandle<E> for KeepProbe<F, (&'s S, $(&$l $t,)*)>
        where
            F: FnOnce(&'s S, $(&$l $t,)* Error<E>) -> O,
        {
        }

        kept_handle!(@answer Arc $($t $a $l),*);
        kept_handle!(@answer Rc $($t $a $l),*);
        kept_handle!(@answer Box $($t $a $l),*);
    };
    (@answer $p:ident $($t:ident $a:ident $l:lifetime),*) => {
        impl<'k, $($l,)* F, Args, S: ?Sized, E, O $(, $t: ?Sized)*> KeptHandle<F, Args, ($(&$l $t,)*), E, WithKeptSelf> for &'k $p<S>
        where
            F: FnOnce(&'k S, $(&$l $t,)* Error<E>) -> O,
        {
            type Output = O;
            #[inline]
            fn answer(self, f: F, _: Args, ($($a,)*): ($(&$l $t,)*), err: Error<E>) -> O {
                f(&**self, $($a,)* err)
            }
        }
    };
}

// `&self` alone, then `&self` and 1 to 8 more.
kept_handle!();
for_each_arity!(kept_handle);

/// Calls a `self: Arc<Self>` (or `self: &Arc<Self>`) method's fallback through what the call
/// kept (see the module): `args` is the usual list, `rest` what follows `&self` otherwise.
#[inline]
pub fn answer_kept<K, F, Args, Rest, E, M>(
    kept: K,
    f: F,
    args: Args,
    rest: Rest,
    err: Error<E>,
) -> K::Output
where
    K: KeptHandle<F, Args, Rest, E, M>,
{
    kept.answer(f, args, rest, err)
}
