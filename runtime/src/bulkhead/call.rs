//! A call through a bulkhead alone, as one future written by hand (`Bulkhead::call`, and
//! `#[bulkhead]` without a breaker): the caller's future stored once (nested `async fn`s store
//! it again at each level), a free slot taken at the first poll, and only a wait for one
//! (`max_wait`) boxed, so its state (a timeout and a `Notified`) is not in every call's future.

use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::task::{Context, Poll};

use pin_project_lite::pin_project;

use super::{Bulkhead, BulkheadPermit};
use crate::error::Rejection;

/// What a bulkhead call hands back: its output, or the refusal.
pub(crate) trait Answer<T> {
    type Output;
    fn ran(v: T) -> Self::Output;
    fn refused(r: Rejection) -> Self::Output;
}

/// `Bulkhead::call`'s answer: `Ok(output)` or `Err(Rejection::Full)`.
pub(crate) struct AsResult;

impl<T> Answer<T> for AsResult {
    type Output = Result<T, Rejection>;
    #[inline]
    fn ran(v: T) -> Result<T, Rejection> {
        Ok(v)
    }
    #[inline]
    fn refused(r: Rejection) -> Result<T, Rejection> {
        Err(r)
    }
}

type Waiting<'a> =
    Pin<Box<dyn Future<Output = Result<BulkheadPermit<'a>, Rejection>> + Send + Sync + 'a>>;

pin_project! {
    /// See the module's header.
    pub(crate) struct BulkheadCall<'a, F, A> {
        // First, so it is dropped before the slot it holds.
        #[pin]
        fut: Option<F>,
        bulkhead: Option<&'a Bulkhead>,
        slot: Option<BulkheadPermit<'a>>,
        waiting: Option<Waiting<'a>>,
        // The call was polled once: an adaptive pool times its slot from there.
        polled: bool,
        answer: PhantomData<A>,
    }
}

impl<'a, F, A> BulkheadCall<'a, F, A> {
    /// `fut` under a slot of `bulkhead` (no bulkhead: `fut` as it is).
    pub(crate) fn new(bulkhead: Option<&'a Bulkhead>, fut: F) -> Self {
        BulkheadCall {
            fut: Some(fut),
            bulkhead,
            slot: None,
            waiting: None,
            polled: false,
            answer: PhantomData,
        }
    }
}

impl<F: Future, A: Answer<F::Output>> Future for BulkheadCall<'_, F, A> {
    type Output = A::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<A::Output> {
        let mut this = self.project();
        if let (Some(b), None) = (*this.bulkhead, this.slot.as_ref()) {
            if this.waiting.is_none() {
                match b.try_acquire_now() {
                    Some(p) => *this.slot = Some(p),
                    // Fail fast: refused at once, nothing boxed.
                    None if !b.may_wait() => {
                        this.fut.set(None);
                        return Poll::Ready(A::refused(b.full()));
                    }
                    None => *this.waiting = Some(Box::pin(b.acquire_untimed())),
                }
            }
            if let Some(w) = this.waiting.as_mut() {
                let got = match w.as_mut().poll(cx) {
                    Poll::Pending => return Poll::Pending,
                    Poll::Ready(got) => got,
                };
                *this.waiting = None;
                match got {
                    Ok(p) => *this.slot = Some(p),
                    Err(r) => {
                        this.fut.set(None);
                        return Poll::Ready(A::refused(r));
                    }
                }
            }
        }
        let Some(fut) = this.fut.as_mut().as_pin_mut() else {
            panic!("a bulkhead call was polled after it completed");
        };
        match fut.poll(cx) {
            Poll::Ready(v) => {
                // The call ends, then its slot is freed, as when the caller drops it.
                this.fut.set(None);
                drop(this.slot.take());
                Poll::Ready(A::ran(v))
            }
            Poll::Pending => {
                if !std::mem::replace(this.polled, true) {
                    // Timed from the end of the first poll, as the breaker times its calls.
                    if let Some(s) = this.slot.as_ref() {
                        s.start();
                    }
                }
                Poll::Pending
            }
        }
    }
}
