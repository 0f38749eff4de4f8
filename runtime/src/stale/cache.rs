//! The last good value per arguments, served while a breaker is open (`stale_for`).
//!
//! While the breaker is open, the caller gets either an error or the last value it saved;
//! this is the saved value. Bounded in entries and in bytes (a weigher), least recently used
//! evicted first, expired values dropped; the values of one breaker key are never served to
//! another (`part`).

use std::collections::{BTreeMap, HashMap};
use std::hash::{BuildHasher, BuildHasherDefault, Hash, Hasher};
use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use crate::hashing::{KeyHasher, Prehashed};
use crate::sync::{lock, Mutex};

/// A value served from the stale cache, with its age: what `#[breaker(stale_fallback = f)]`
/// passes to `f`, together with the error that made the call fall back.
///
/// ```
/// use fusebox::Error;
/// use fusebox::stale::Stale;
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

/// Bytes of bookkeeping per entry: the slot, its two order entries and the `Arc` header.
const ENTRY_OVERHEAD: usize = 128;

struct Slot<K, V> {
    /// The breaker whose calls made the value (`name/key`): part of the key.
    part: Arc<str>,
    key: K,
    /// Shared so a `get` clones it after the cache's lock is released; the mutex makes it
    /// `Sync` for values that are only `Send` (held just while one reader clones it).
    value: Arc<Mutex<V>>,
    at: Instant,
    used: u64,
    born: u64,
    weight: usize,
}

struct Inner<K, V> {
    /// By the hash of `(part, key)`, computed before the lock; a different key with the same
    /// 64-bit hash replaces the entry (never served in its place: `get` compares the key).
    map: HashMap<u64, Slot<K, V>, BuildHasherDefault<Prehashed>>,
    /// Use order: the smallest tick is the least recently used.
    used: BTreeMap<u64, u64>,
    /// Put order, which is age order: the smallest tick is the oldest value.
    born: BTreeMap<u64, u64>,
    tick: u64,
    bytes: usize,
}

impl<K, V> Inner<K, V> {
    fn remove(&mut self, hash: u64) -> Option<Slot<K, V>> {
        let slot = self.map.remove(&hash)?;
        self.used.remove(&slot.used);
        self.born.remove(&slot.born);
        self.bytes -= slot.weight;
        Some(slot)
    }

    /// Drops (into `out`) every value at least `max_age` old: none outlives `stale_for`
    /// by more than the time to the cache's next use.
    fn expire(&mut self, now: Instant, max_age: Duration, out: &mut Vec<Slot<K, V>>) {
        while let Some((_, &hash)) = self.born.first_key_value() {
            match self.map.get(&hash) {
                Some(s) if now.saturating_duration_since(s.at) < max_age => break,
                _ => out.extend(self.remove(hash)),
            }
        }
    }
}

/// Last `Ok` values by key, at most `capacity` of them and `max_bytes` by their weight.
///
/// The user's code (the key's `Hash`, the value's `Clone` and `Drop`) never runs under the
/// cache's lock: keys are hashed before it is taken, values are kept in an `Arc` and cloned
/// after it is released, and evicted entries are dropped after it too. Only the key's `Eq`
/// runs under it, to tell a hash collision from a hit. Expired values are dropped on every
/// `put` and `get`.
///
/// ```
/// use std::time::Duration;
/// use fusebox::stale::StaleCache;
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
    max_bytes: usize,
    weigher: fn(&K, &V) -> usize,
    hasher: KeyHasher,
    inner: Mutex<Inner<K, V>>,
}

impl<K: Hash + Eq, V: Clone> StaleCache<K, V> {
    /// What a stale entry weighs by default: its key and value as laid out in memory, plus the
    /// bookkeeping around them. Heap data a value points to (a `String`'s text) is not seen; give
    /// [`with_weigher`](Self::with_weigher) a weigher that counts it when values vary in size.
    pub fn size_weight(_: &K, _: &V) -> usize {
        std::mem::size_of::<K>() + std::mem::size_of::<V>() + ENTRY_OVERHEAD
    }

    /// A cache serving values younger than `max_age`, holding at most `capacity` keys
    /// (and at most `usize::MAX` bytes: see [`with_weigher`](Self::with_weigher)).
    pub fn new(max_age: Duration, capacity: usize) -> Self {
        Self::with_weigher(max_age, capacity, usize::MAX, Self::size_weight)
    }

    /// As [`new`](Self::new), and the entries' weights (by `weigher`) stay at most
    /// `max_bytes`: the least recently used go first. An entry heavier than `max_bytes` is
    /// not kept at all.
    ///
    /// ```
    /// use std::time::Duration;
    /// use fusebox::stale::StaleCache;
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
    /// let by_len = |_: &u32, v: &String| v.len();
    /// let cache = StaleCache::with_weigher(Duration::from_secs(60), 100, 10, by_len);
    /// cache.put(1, "12345".to_owned());
    /// cache.put(2, "123456".to_owned());
    /// assert!(cache.get(&1).is_none(), "11 bytes: the least recently used went");
    /// assert_eq!(cache.get(&2).unwrap().value, "123456");
    /// # }
    /// ```
    pub fn with_weigher(
        max_age: Duration,
        capacity: usize,
        max_bytes: usize,
        weigher: fn(&K, &V) -> usize,
    ) -> Self {
        StaleCache {
            max_age,
            capacity: capacity.max(1),
            max_bytes,
            weigher,
            hasher: KeyHasher::default(),
            inner: Mutex::new(Inner {
                map: HashMap::default(),
                used: BTreeMap::new(),
                born: BTreeMap::new(),
                tick: 0,
                bytes: 0,
            }),
        }
    }

    fn hash(&self, part: &str, key: &K) -> u64 {
        let mut h = self.hasher.build_hasher();
        part.hash(&mut h);
        key.hash(&mut h);
        h.finish()
    }

    /// Remembers a fresh value for `key`.
    pub fn put(&self, key: K, value: V) {
        self.put_in(Arc::from(""), key, value)
    }

    /// Remembers a fresh value for `key` made by the breaker `part` (its `name/key`).
    pub(crate) fn put_in(&self, part: Arc<str>, key: K, value: V) {
        let hash = self.hash(&part, &key);
        let weight = (self.weigher)(&key, &value);
        let mut dropped = Vec::new();
        if weight > self.max_bytes {
            // Heavier than the whole cache: not kept, and an older value must not stay either.
            let mut g = lock(&self.inner);
            let stale = g
                .map
                .get(&hash)
                .is_some_and(|s| s.part == part && s.key == key);
            if stale {
                dropped.extend(g.remove(hash));
            }
            drop(g);
            return;
        }
        let value = Arc::new(Mutex::new(value));
        let now = Instant::now();
        let mut g = lock(&self.inner);
        let inner = &mut *g;
        dropped.extend(inner.remove(hash));
        inner.tick += 1;
        let tick = inner.tick;
        inner.map.insert(
            hash,
            Slot {
                part,
                key,
                value,
                at: now,
                used: tick,
                born: tick,
                weight,
            },
        );
        inner.used.insert(tick, hash);
        inner.born.insert(tick, hash);
        inner.bytes += weight;
        inner.expire(now, self.max_age, &mut dropped);
        while inner.map.len() > self.capacity || inner.bytes > self.max_bytes {
            match inner.used.first_key_value() {
                Some((_, &lru)) => dropped.extend(inner.remove(lru)),
                None => break,
            }
        }
        drop(g);
        drop(dropped);
    }

    /// The value for `key` if one younger than `max_age` is kept.
    pub fn get(&self, key: &K) -> Option<Stale<V>> {
        self.get_in("", key)
    }

    /// The value for `key` made by the breaker `part`, if one younger than `max_age` is kept.
    pub(crate) fn get_in(&self, part: &str, key: &K) -> Option<Stale<V>> {
        let hash = self.hash(part, key);
        let now = Instant::now();
        let mut dropped = Vec::new();
        let mut g = lock(&self.inner);
        let inner = &mut *g;
        inner.expire(now, self.max_age, &mut dropped);
        let found = match inner.map.get_mut(&hash) {
            Some(s) if &*s.part == part && s.key == *key => {
                inner.tick += 1;
                let old = std::mem::replace(&mut s.used, inner.tick);
                let found = (s.value.clone(), now.saturating_duration_since(s.at));
                inner.used.remove(&old);
                inner.used.insert(inner.tick, hash);
                Some(found)
            }
            _ => None,
        };
        drop(g);
        drop(dropped);
        let (value, age) = found?;
        let value = V::clone(&lock(&value));
        Some(Stale { value, age })
    }

    /// Keys kept now.
    pub fn len(&self) -> usize {
        lock(&self.inner).map.len()
    }

    /// The weight of what is kept now, by the cache's weigher.
    pub fn bytes(&self) -> usize {
        lock(&self.inner).bytes
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
        assert_eq!(
            c.len(),
            0,
            "every expired value is dropped, not only the one asked for"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn no_value_outlives_stale_for_in_memory() {
        let c = StaleCache::new(Duration::from_secs(10), 100);
        for i in 0..50 {
            c.put(i, i);
        }
        tokio::time::advance(Duration::from_secs(10)).await;
        c.put(1000, 0);
        assert_eq!(c.len(), 1, "a put drops what expired");
    }

    #[tokio::test(start_paused = true)]
    async fn bytes_are_bounded_and_an_oversized_value_is_not_kept() {
        let c =
            StaleCache::with_weigher(Duration::from_secs(60), 100, 100, |_: &u8, v: &Vec<u8>| {
                v.len()
            });
        c.put(1, vec![0; 60]);
        c.put(2, vec![0; 30]);
        assert_eq!(c.bytes(), 90);
        c.put(3, vec![0; 30]);
        assert!(c.get(&1).is_none(), "the least recently used made room");
        assert_eq!(c.bytes(), 60);
        c.put(2, vec![0; 101]);
        assert!(
            c.get(&2).is_none(),
            "too heavy to keep, and the older value went with it"
        );
    }

    /// A key whose `Hash` and a value whose `Clone` check that the cache's lock is free.
    struct Probe(u32);
    static CACHE: std::sync::OnceLock<StaleCache<Probe, Probe>> = std::sync::OnceLock::new();
    fn unlocked() -> bool {
        CACHE.get().is_none_or(|c| c.inner.try_lock().is_ok())
    }
    impl Hash for Probe {
        fn hash<H: Hasher>(&self, h: &mut H) {
            assert!(unlocked(), "user Hash ran under the cache's lock");
            self.0.hash(h);
        }
    }
    impl PartialEq for Probe {
        fn eq(&self, o: &Probe) -> bool {
            self.0 == o.0
        }
    }
    impl Eq for Probe {}
    impl Clone for Probe {
        fn clone(&self) -> Probe {
            assert!(unlocked(), "user Clone ran under the cache's lock");
            Probe(self.0)
        }
    }

    #[tokio::test(start_paused = true)]
    async fn user_hash_and_clone_run_outside_the_lock() {
        let c = CACHE.get_or_init(|| StaleCache::new(Duration::from_secs(60), 1));
        c.put(Probe(1), Probe(10));
        assert_eq!(c.get(&Probe(1)).unwrap().value.0, 10);
        c.put(Probe(2), Probe(20));
        assert!(c.get(&Probe(1)).is_none());
    }
}
