//! How a call through a breaker ends, as its caller gets it: the [`Completion`] the generated
//! code matches on, what it becomes for `Breaker::call` ([`Finish`]), and the recording of a
//! driven call's end that produces it (`settle`, `settle_classified`).

use super::core::Core;
use super::outcome::Outcome;
use super::permit::{Outcome as Ended, Permit};
use crate::error::{Error, Rejection};

/// How a call through fusebox ended, as the generated code needs to know it.
// `repr(u8)`: the tag in a byte of its own and every payload at an aligned offset. Niche-packed
// (the default), the tag shared a byte with the payloads' own tags and the bytes after it were
// an odd-sized run that every move of a `Completion` copied with overlapping 4-byte loads and
// stores, a store-forwarding stall on each `#[breaker]` call (issue 28).
#[derive(Debug)]
#[repr(u8)]
pub enum Completion<T, E> {
    /// The call succeeded.
    Ok(T),
    /// The call returned an error that was not counted as a failure (excluded by the failure
    /// predicate, or classified ignored): it goes back to the caller as is, without the
    /// fallback.
    Ignored(E),
    /// Rejected, timed out, or a counted failure: what a fallback handles.
    Failed(Error<E>),
}

impl<T, E> Completion<T, E> {
    /// Back to a plain `Result`, uncounted errors as `Error::Failed`.
    pub fn into_result(self) -> Result<T, Error<E>> {
        match self {
            Completion::Ok(v) => Ok(v),
            Completion::Ignored(e) => Err(Error::Failed(e)),
            Completion::Failed(e) => Err(e),
        }
    }
}

/// What a call's `Completion` becomes when it is handed back: itself ([`Same`]), or
/// `Breaker::call`'s `Result` ([`AsResult`]). A type, not a closure, so the call's future can
/// be named.
pub(crate) trait Finish<T, E> {
    type Output;
    fn finish(c: Completion<T, E>) -> Self::Output;
}

/// Hands the `Completion` back as it is.
pub(crate) struct Same;

impl<T, E> Finish<T, E> for Same {
    type Output = Completion<T, E>;
    #[inline]
    fn finish(c: Completion<T, E>) -> Completion<T, E> {
        c
    }
}

/// Hands back `Completion::into_result`.
pub(crate) struct AsResult;

impl<T, E> Finish<T, E> for AsResult {
    type Output = Result<T, Error<E>>;
    #[inline]
    fn finish(c: Completion<T, E>) -> Result<T, Error<E>> {
        c.into_result()
    }
}

/// Records how a driven call ended and turns it into its `Completion`.
#[inline]
pub(super) fn settle<T, E, C>(
    core: &Core,
    permit: Permit<'_>,
    ended: Result<Result<T, E>, std::time::Duration>,
    classify: Option<C>,
) -> Completion<T, E>
where
    C: FnOnce(&Result<T, E>) -> Outcome,
{
    let result = match ended {
        Ok(r) => r,
        Err(after) => {
            let shadow = core.shadow.watching().map(|s| (s, permit.started()));
            permit.finish(Ended::TimedOut);
            if let Some((s, started)) = shadow {
                s.judge(started, Ended::TimedOut);
            }
            return Completion::Failed(Error::Rejected(Rejection::TimedOut {
                name: core.config().name.clone(),
                after,
            }));
        }
    };
    let outcome = match classify {
        Some(classify) => classify(&result),
        None => unreachable!("a call is classified once"),
    };
    settle_classified(core, permit, result, outcome)
}

/// Records a call that answered, as `outcome` classified it, and turns it into its
/// `Completion`.
#[inline]
pub(super) fn settle_classified<T, E>(
    core: &Core,
    permit: Permit<'_>,
    result: Result<T, E>,
    outcome: Outcome,
) -> Completion<T, E> {
    let (ended, completion) = match (result, outcome) {
        // An `Ok` counted as a failure is still the caller's answer: no fallback.
        (Ok(v), o) => (
            match o {
                Outcome::Success => Ended::Success,
                Outcome::Failure => Ended::Failure,
                Outcome::Ignored => Ended::Ignored,
            },
            Completion::Ok(v),
        ),
        (Err(e), Outcome::Failure) => (Ended::Failure, Completion::Failed(Error::Failed(e))),
        (Err(e), Outcome::Success) => (Ended::Excluded, Completion::Ignored(e)),
        (Err(e), Outcome::Ignored) => (Ended::Ignored, Completion::Ignored(e)),
    };
    let shadow = core.shadow.watching().map(|s| (s, permit.started()));
    permit.finish(ended);
    if let Some((s, started)) = shadow {
        s.judge(started, ended);
    }
    completion
}
