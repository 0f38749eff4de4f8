//! A thread's own copy of a breaker's or bulkhead's name, for the refusals it hands out
//! (issue 28: the open refusal, contended).
//!
//! A refusal carries its breaker's name as an `Arc<str>` (`Rejection`'s public `name` field).
//! Cloning the breaker's own `Arc`, and dropping the clone with the refusal, writes its count
//! twice: a cache line every refusing thread writes, which under contention costs more than
//! the rest of the refusal. So each thread keeps copies of the names it refuses with most: an
//! equal `str` in an allocation of its own, whose count only that thread writes (unless a
//! refusal is sent to another thread and dropped there, which is correct too). Users see the
//! same name: `Rejection`'s `PartialEq`, `Display` and `name()` compare and show the text.
//!
//! Invariants:
//! - An entry holds the original `Arc` beside its copy, so the address it is found by stays
//!   that name's while the entry lives: a freed name's address reused by another never finds a
//!   stale copy. (A name dropped with its breaker lives on while an entry holds it: at most
//!   `ENTRIES` names per thread.)
//! - A name is copied on its first miss while the thread has a free entry, so a refusal
//!   allocates once per thread and name, the first time. Once every entry is taken, a copy
//!   replaces the oldest only on a name's second miss in a row (the thread's last miss is
//!   remembered by address): a thread refusing for more breakers than entries, in turn,
//!   allocates nothing more and clones the original, as before.
//! - Under loom (the models' threads are not the process's) and while the thread's locals are
//!   torn down, the original is cloned.

// Under loom only the fallback is built.
#![cfg_attr(loom, allow(dead_code, unused_imports))]

use std::cell::RefCell;
use std::sync::Arc;

/// Names kept per thread: a service refuses for a few breakers at once in an outage. Looked
/// up by address, eight compares.
const ENTRIES: usize = 8;

/// One thread's copies: `(original, copy)`, newest at `next - 1`, and its last miss.
struct Copies {
    entries: [Option<(Arc<str>, Arc<str>)>; ENTRIES],
    next: usize,
    last_miss: usize,
}

#[cfg(not(loom))]
thread_local! {
    static COPIES: RefCell<Copies> = const {
        RefCell::new(Copies { entries: [const { None }; ENTRIES], next: 0, last_miss: 0 })
    };
}

/// `name`, as a refusal made on this thread should carry it: equal to it, and from this
/// thread's copy once the name is refused often here.
#[inline]
pub(crate) fn for_refusal(name: &Arc<str>) -> Arc<str> {
    #[cfg(not(loom))]
    if let Ok(Some(copy)) = COPIES.try_with(|c| c.try_borrow_mut().ok().map(|mut c| c.get(name))) {
        return copy;
    }
    Arc::clone(name)
}

impl Copies {
    #[inline]
    fn get(&mut self, name: &Arc<str>) -> Arc<str> {
        for (original, copy) in self.entries.iter().flatten() {
            if Arc::ptr_eq(original, name) {
                return Arc::clone(copy);
            }
        }
        self.miss(name)
    }

    #[cold]
    fn miss(&mut self, name: &Arc<str>) -> Arc<str> {
        let at = Arc::as_ptr(name).cast::<u8>() as usize;
        let again = std::mem::replace(&mut self.last_miss, at) == at;
        if self.entries[self.next].is_some() && !again {
            return Arc::clone(name);
        }
        let copy: Arc<str> = Arc::from(&**name);
        self.entries[self.next] = Some((Arc::clone(name), Arc::clone(&copy)));
        self.next = (self.next + 1) % ENTRIES;
        copy
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn a_name_is_copied_once_and_equal() {
        let name: Arc<str> = Arc::from("payments");
        let first = for_refusal(&name);
        assert!(
            !Arc::ptr_eq(&first, &name),
            "a copy, from the first refusal"
        );
        assert_eq!(first, name);
        let second = for_refusal(&name);
        assert!(Arc::ptr_eq(&second, &first), "then the same copy");
    }

    #[test]
    fn once_full_only_a_name_missed_twice_in_a_row_is_copied() {
        let names: Vec<Arc<str>> = (0..ENTRIES + 4)
            .map(|i| Arc::from(format!("b{i}")))
            .collect();
        let (kept, rest) = names.split_at(ENTRIES);
        let copies: Vec<Arc<str>> = kept.iter().map(for_refusal).collect();
        for _ in 0..3 {
            for n in rest {
                let got = for_refusal(n);
                assert!(Arc::ptr_eq(&got, n), "{n}: names in turn are not copied");
            }
            for (n, c) in kept.iter().zip(&copies) {
                assert!(Arc::ptr_eq(&for_refusal(n), c), "{n}: kept");
            }
        }
        let _ = for_refusal(&rest[0]);
        let copied = for_refusal(&rest[0]);
        assert!(
            !Arc::ptr_eq(&copied, &rest[0]),
            "missed twice in a row: copied"
        );
        assert_eq!(copied, rest[0]);
    }

    #[test]
    fn a_freed_name_never_answers_for_another_at_its_address() {
        for i in 0..100 {
            let name: Arc<str> = Arc::from(format!("n{i}"));
            let _ = for_refusal(&name);
            assert_eq!(&*for_refusal(&name), &*format!("n{i}"));
            drop(name);
        }
    }
}
