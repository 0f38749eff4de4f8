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

/// [`lock`] for the std mutexes that stay std under loom: in statics (loom's exist only inside
/// a model) and around state no model checks. Same reason to recover from poisoning.
pub(crate) fn lock_std<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Reads a std `RwLock`, recovering from poisoning as [`lock`] does.
pub(crate) fn read<T>(l: &std::sync::RwLock<T>) -> std::sync::RwLockReadGuard<'_, T> {
    l.read().unwrap_or_else(|e| e.into_inner())
}

/// Writes a std `RwLock`, recovering from poisoning as [`lock`] does.
pub(crate) fn write<T>(l: &std::sync::RwLock<T>) -> std::sync::RwLockWriteGuard<'_, T> {
    l.write().unwrap_or_else(|e| e.into_inner())
}

/// Whether two optional shared values are the same one (by address), or both absent: which
/// layer of settings is in force, whether a window was kept.
pub(crate) fn same<T>(a: Option<&std::sync::Arc<T>>, b: Option<&std::sync::Arc<T>>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => std::sync::Arc::ptr_eq(a, b),
        (None, None) => true,
        _ => false,
    }
}

/// A shared value replaced whole (read-copy-update): readers load it without waiting on a
/// writer. `arc-swap` in a normal build; under loom a mutex, so the model sees every swap.
pub(crate) struct Swap<T>(
    #[cfg(not(loom))] arc_swap::ArcSwap<T>,
    #[cfg(loom)] Mutex<std::sync::Arc<T>>,
);

impl<T> Swap<T> {
    pub(crate) fn new(value: T) -> Swap<T> {
        #[cfg(not(loom))]
        return Swap(arc_swap::ArcSwap::from_pointee(value));
        #[cfg(loom)]
        return Swap(Mutex::new(std::sync::Arc::new(value)));
    }

    /// The current value; holding it never blocks a writer.
    #[inline]
    pub(crate) fn load(&self) -> impl std::ops::Deref<Target = std::sync::Arc<T>> + '_ {
        #[cfg(not(loom))]
        return self.0.load();
        #[cfg(loom)]
        return Box::new(lock(&self.0).clone());
    }

    /// Replaces the value; the old one is dropped by its last reader.
    pub(crate) fn store(&self, value: std::sync::Arc<T>) {
        #[cfg(not(loom))]
        self.0.store(value);
        #[cfg(loom)]
        {
            let old = std::mem::replace(&mut *lock(&self.0), value);
            drop(old);
        }
    }
}
