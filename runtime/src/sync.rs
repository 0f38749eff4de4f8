//! Atomics and locks, swapped for loom's under `--cfg loom` so the model checker sees them.

#[cfg(loom)]
pub(crate) use loom::sync::{atomic, Mutex, MutexGuard};
#[cfg(not(loom))]
pub(crate) use std::sync::{atomic, Mutex, MutexGuard};

/// Locks, recovering from poisoning: a panic in user code never runs under our locks,
/// so a poisoned lock still holds consistent data and must not turn into a second panic.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
