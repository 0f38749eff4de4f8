//! Driving a call under its permit: its first poll untimed, then, once it waits, its latency
//! measured and its timers (the slow bound, which marks it slow in flight, then the timeout).
//! The caller keeps the [`Drive`] beside the pinned call, so the call's future is stored once.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use pin_project_lite::pin_project;
use tokio::time::{sleep_until, Instant, Sleep};

use super::Permit;

/// Where a driven call is, kept by the caller beside the call (see [`Permit::poll_drive`]).
pub(crate) enum Drive {
    /// Not polled yet.
    First,
    /// Waited in its first poll; no timeout and no slow bound to watch.
    Untimed,
    /// Waited in its first poll, under a timer. Boxed whole, not just its `Sleep` (the same one
    /// allocation): every call's future holds a `Drive`, two words so, against four.
    Timed(Pin<Box<Timer>>),
}

pin_project! {
    /// The timer of a call that waits: the slow bound first (if any), then the timeout.
    pub(crate) struct Timer {
        #[pin]
        sleep: Sleep,
        // Runs from the permit's `start`.
        timeout: Option<Duration>,
        watching_slow: bool,
        live: bool,
    }
}

impl Permit<'_> {
    /// Drives the call under its timeout and the slow-call watch, one poll at a time (the
    /// caller keeps `drive` beside the pinned call, so the call's future is stored once).
    ///
    /// Returns `Err(after)` when the timeout elapsed: the caller then drops the call.
    ///
    /// The clock is read only once the first poll of the call returns `Pending`: a call that
    /// answers within its first poll (a cache hit, a ready channel) never touches the clock
    /// here and is recorded with a latency of zero, and its timers are never created. For a
    /// call that waits, latency, slow bound and timeout run from the end of that first poll,
    /// so they leave out its synchronous part (normally microseconds; on a paused clock,
    /// nothing, since virtual time cannot move inside a poll). Like `tokio::time::timeout`,
    /// a future that answers when first polled is never timed out.
    pub(crate) fn poll_drive<F: Future>(
        &mut self,
        mut fut: Pin<&mut F>,
        drive: &mut Drive,
        cx: &mut Context<'_>,
    ) -> Poll<Result<F::Output, Duration>> {
        match drive {
            Drive::First => {
                if let Poll::Ready(v) = self.poll_call(fut, cx) {
                    return Poll::Ready(Ok(v));
                }
                self.waited(drive, cx)
            }
            Drive::Untimed => self.poll_call(fut, cx).map(Ok),
            Drive::Timed(t) => {
                if let Poll::Ready(v) = self.poll_call(fut.as_mut(), cx) {
                    return Poll::Ready(Ok(v));
                }
                self.poll_timer(t.as_mut(), cx)
            }
        }
    }

    /// The call returned `Pending` from its first poll: its timers start, and the timer is
    /// polled (the call was just polled and holds this task's waker).
    pub(crate) fn waited<T>(
        &mut self,
        drive: &mut Drive,
        cx: &mut Context<'_>,
    ) -> Poll<Result<T, Duration>> {
        *drive = self.start_timing();
        match drive {
            Drive::Timed(t) => self.poll_timer(t.as_mut(), cx),
            _ => Poll::Pending,
        }
    }

    /// The call waited in its first poll: its time runs from now, under its timers.
    fn start_timing(&mut self) -> Drive {
        let start = Instant::now();
        self.start = Some(start);
        self.begins_waiting();
        // A deadline past the clock's range is no deadline (`Instant + Duration` would panic).
        let within = |d: &Duration| start.checked_add(*d).is_some();
        let timeout = self.timeout().filter(within);
        let bound = self.sample_bound();
        self.slow_at = bound.unwrap_or_default();
        // A trial runs on to its end under `half_open_timeout` (trials are what warms a cold
        // dependency); past the trial bound it is marked slow in its episode, not cut off. A
        // probe, which has no episode, is judged when it ends.
        let slow = match (self.trial, self.probe) {
            (false, _) => bound,
            (true, false) => self.core.trial_slow_bound(self.config()),
            (true, true) => None,
        };
        let slow = slow
            .filter(within)
            .filter(|s| timeout.is_none_or(|t| *s < t));
        if slow.is_none() && timeout.is_none() {
            return Drive::Untimed;
        }
        let first = start + slow.or(timeout).unwrap_or_default();
        // Boxed: only a call that waits under a timer pays for it (an allocation beside a
        // call that waits), and the future every call moves stays smaller by a `Timer`.
        Drive::Timed(Box::pin(Timer {
            sleep: sleep_until(first),
            timeout,
            watching_slow: slow.is_some(),
            live: true,
        }))
    }

    /// Polls the call's timer: the slow bound marks the call slow in flight, the timeout
    /// ends it.
    fn poll_timer<T>(
        &mut self,
        t: Pin<&mut Timer>,
        cx: &mut Context<'_>,
    ) -> Poll<Result<T, Duration>> {
        let mut t = t.project();
        while *t.live && t.sleep.as_mut().poll(cx).is_ready() {
            if *t.watching_slow {
                *t.watching_slow = false;
                self.mark_slow_in_flight();
                match (*t.timeout, self.start) {
                    (Some(d), Some(start)) => t.sleep.as_mut().reset(start + d),
                    _ => *t.live = false,
                }
            } else if let Some(d) = *t.timeout {
                return Poll::Ready(Err(d));
            }
        }
        Poll::Pending
    }

    /// Polls the wrapped future with `in_poll` set; a panic skips the reset, so it stays set.
    fn poll_call<F: Future>(&mut self, fut: Pin<&mut F>, cx: &mut Context<'_>) -> Poll<F::Output> {
        self.in_poll = true;
        let r = fut.poll(cx);
        self.in_poll = false;
        r
    }
}
