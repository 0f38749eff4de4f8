//! The loan of a breaker of this thread's table (`hot_keys`) to one call's first poll: a
//! pointer to its core, no reference count taken (`breaker/keyed_call.rs` says why). The
//! runtime's one `unsafe`, argued at [`Lent`].

use std::marker::PhantomData;
use std::sync::Arc;

use super::{place, Kept, Probe, HOT};
use crate::breaker::core::Core;
use crate::breaker::{Breaker, Loan};

/// The breaker this thread found last for the integer `key` at `site` (as [`get`]), lent:
/// with no reference count taken, for as long as the [`Lent`] lives (within one poll of one
/// call). Only integer keys are lent (a text key's breaker is kept when its call is made), so
/// the scan compares integers only: with no text comparison in it, the thread-local access is
/// small enough to inline into the call's poll.
#[inline(always)]
pub(crate) fn lend(site: usize, generation: u64, key: Probe<'_>) -> Option<Lent> {
    let Probe::Int(n, minus) = key else {
        return None;
    };
    let (tag, set) = place(site, key);
    let kept = Kept::Int(n, minus);
    HOT.try_with(|hot| {
        let table = hot.table.try_borrow().ok()?;
        let slot = table[set]
            .tagged(tag)
            .filter(|s| s.site == site && s.generation == generation && s.key == kept)?;
        let core = Arc::as_ptr(&slot.breaker.0);
        hot.loans.set(hot.loans.get() + 1);
        Some(Lent {
            core,
            thread: PhantomData,
        })
    })
    .ok()
    .flatten()
}

/// A breaker of this thread's table, lent to one call's first poll (`breaker/keyed_call.rs`
/// says why): a pointer to its core, valid while the loan lives.
///
/// Why it is valid: the table's slot holds a strong reference to the core. A slot's breaker is
/// dropped only when a miss replaces it (`missed`, `apply_deferred`) or when the thread's table
/// is destroyed. While any loan is counted (`Hot::loans`), misses are deferred, not applied.
/// The table is destroyed only by the thread's thread-local destructors, one at a time: a poll
/// that took a loan runs to its end (dropping the loan) before the next destructor starts, and
/// once the table's destructor has begun `try_with` fails, so no loan is taken from it. A loan
/// lives in a frame of that poll (it is never stored in a future), and `Lent` is neither
/// `Send` nor `Sync`, so it never leaves the thread that counted it.
/// `a_lent_breaker_outlives_misses_that_displace_it_until_the_loan_ends` fails if a miss
/// replaced a lent slot.
pub(crate) struct Lent {
    core: *const Core,
    thread: PhantomData<*const ()>,
}

impl Loan for Lent {
    #[inline(always)]
    fn core(&self) -> &Core {
        // SAFETY: the core is alive while the loan is (see `Lent`), and `&self` ends before
        // the loan does.
        #[allow(unsafe_code)]
        unsafe {
            &*self.core
        }
    }

    fn breaker(&self) -> Breaker {
        // SAFETY: `core` came from `Arc::as_ptr` of a breaker that holds a strong reference
        // while the loan lives (see `Lent`); taking one more for the new `Arc` keeps the
        // count equal to the `Arc`s there are.
        #[allow(unsafe_code)]
        unsafe {
            Arc::increment_strong_count(self.core);
            Breaker(Arc::from_raw(self.core))
        }
    }
}

impl Drop for Lent {
    #[inline(always)]
    fn drop(&mut self) {
        let _ = HOT.try_with(|hot| {
            let left = hot.loans.get() - 1;
            hot.loans.set(left);
            if left == 0 && hot.deferred.try_borrow().is_ok_and(|d| !d.is_empty()) {
                super::apply_deferred(hot);
            }
        });
    }
}
