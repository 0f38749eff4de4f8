//! The last good value per arguments, served while a breaker is open (`stale_for`).
//!
//! While the breaker is open, the caller gets either an error or the last value it saved;
//! this is the saved value. Bounded in entries, least recently used evicted first.

use std::collections::{BTreeMap, HashMap};
use std::hash::Hash;
use std::time::Duration;

use tokio::time::Instant;

use crate::sync::{lock, Mutex};

/// A value served from the stale cache, with its age: what `#[breaker(stale_fallback = f)]`
/// passes to `f`, together with the error that made the call fall back.
///
/// ```
/// use fusebox_runtime::{Error, Stale};
/// # #[derive(Debug)] struct Forecast { text: String }
/// fn as_of(stale: Stale<Forecast>, _why: Error<std::io::Error>) -> std::io::Result<Forecast> {
///     let minutes = stale.age.as_secs() / 60;
///     Ok(Forecast { text: format!("{} (as of {minutes} min ago)", stale.value.text) })
/// }
/// let s = Stale { value: Forecast { text: "sunny".into() }, age: std::time::Duration::from_secs(180) };
/// let f = as_of(s, Error::Failed(std::io::Error::other("down"))).unwrap();
/// assert_eq!(f.text, "sunny (as of 3 min ago)");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stale<T> {
    /// The last `Ok` value for the same arguments.
    pub value: T,
    /// How long ago it was fresh.
    pub age: Duration,
}

struct Entry<V> {
    value: V,
    at: Instant,
    tick: u64,
}

struct Inner<K, V> {
    map: HashMap<K, Entry<V>>,
    /// Use order: the smallest tick is the least recently used.
    order: BTreeMap<u64, K>,
    tick: u64,
}

/// Last `Ok` values by key, at most `capacity` of them.
///
/// ```
/// use std::time::Duration;
/// use fusebox_runtime::StaleCache;
/// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
/// let cache = StaleCache::new(Duration::from_secs(600), 2);
/// cache.put("berlin", 21);
/// tokio::time::advance(Duration::from_secs(60)).await;
/// let s = cache.get(&"berlin").unwrap();
/// assert_eq!((s.value, s.age), (21, Duration::from_secs(60)));
/// tokio::time::advance(Duration::from_secs(600)).await;
/// assert!(cache.get(&"berlin").is_none(), "older than stale_for");
/// # }
/// ```
pub struct StaleCache<K, V> {
    max_age: Duration,
    capacity: usize,
    inner: Mutex<Inner<K, V>>,
}

impl<K: Hash + Eq + Clone, V: Clone> StaleCache<K, V> {
    /// A cache serving values younger than `max_age`, holding at most `capacity` keys.
    pub fn new(max_age: Duration, capacity: usize) -> Self {
        StaleCache {
            max_age,
            capacity: capacity.max(1),
            inner: Mutex::new(Inner {
                map: HashMap::new(),
                order: BTreeMap::new(),
                tick: 0,
            }),
        }
    }

    /// Remembers a fresh value for `key`.
    pub fn put(&self, key: K, value: V) {
        let mut g = lock(&self.inner);
        let inner = &mut *g;
        inner.tick += 1;
        let tick = inner.tick;
        if let Some(old) = inner.map.insert(
            key.clone(),
            Entry {
                value,
                at: Instant::now(),
                tick,
            },
        ) {
            inner.order.remove(&old.tick);
        }
        inner.order.insert(tick, key);
        while inner.map.len() > self.capacity {
            match inner.order.pop_first() {
                Some((_, lru)) => {
                    inner.map.remove(&lru);
                }
                None => break,
            }
        }
    }

    /// The value for `key` if one younger than `max_age` is kept.
    pub fn get(&self, key: &K) -> Option<Stale<V>> {
        let mut g = lock(&self.inner);
        let inner = &mut *g;
        let age = inner.map.get(key)?.at.elapsed();
        if age >= self.max_age {
            if let Some(old) = inner.map.remove(key) {
                inner.order.remove(&old.tick);
            }
            return None;
        }
        inner.tick += 1;
        let tick = inner.tick;
        let e = inner.map.get_mut(key)?;
        let old_tick = std::mem::replace(&mut e.tick, tick);
        let value = e.value.clone();
        inner.order.remove(&old_tick);
        inner.order.insert(tick, key.clone());
        Some(Stale { value, age })
    }

    /// Keys kept now.
    pub fn len(&self) -> usize {
        lock(&self.inner).map.len()
    }

    /// True when nothing is kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn capacity_evicts_the_least_recently_used() {
        let c = StaleCache::new(Duration::from_secs(60), 2);
        c.put(1, "a");
        c.put(2, "b");
        assert!(
            c.get(&1).is_some(),
            "touch 1: now 2 is the least recently used"
        );
        c.put(3, "c");
        assert_eq!(c.len(), 2);
        assert!(c.get(&2).is_none());
        assert_eq!(c.get(&1).unwrap().value, "a");
        assert_eq!(c.get(&3).unwrap().value, "c");
    }

    #[tokio::test(start_paused = true)]
    async fn values_are_per_key_and_expire() {
        let c = StaleCache::new(Duration::from_secs(10), 100);
        c.put("a", 1);
        c.put("b", 2);
        c.put("a", 3);
        assert_eq!(c.get(&"a").unwrap().value, 3);
        assert_eq!(c.get(&"b").unwrap().value, 2);
        tokio::time::advance(Duration::from_secs(10)).await;
        assert!(c.get(&"a").is_none());
        assert_eq!(c.len(), 1, "expired entries are dropped when found");
    }
}
