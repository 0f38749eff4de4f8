//! The stale cache of one `#[breaker(stale_for = ...)]` call site, and the bounds its keys and
//! values must meet, each with a `#[diagnostic::on_unimplemented]` message naming the bound.
//!
//! A `static` inside a function cannot name the function's generic parameters, `Self` or an
//! `impl Trait`, so the site keeps its cache type-erased and finds it by `TypeId`: the generated
//! code never writes the key or value types, and each instantiation of a generic function gets
//! a cache of its own.

use std::any::{Any, TypeId};
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use once_cell::sync::OnceCell;

use super::cache::{Stale, StaleCache};
use crate::breaker::core::bump;
use crate::breaker::Breaker;

type Erased = Arc<dyn Any + Send + Sync>;

/// The caches of one call site: the first instantiation's, then any others of a generic fn.
pub struct StaleSite {
    first: OnceCell<Erased>,
    more: Mutex<Vec<(TypeId, Erased)>>,
}

impl Default for StaleSite {
    fn default() -> Self {
        StaleSite::new()
    }
}

impl StaleSite {
    /// An empty site, for a `static`.
    pub const fn new() -> StaleSite {
        StaleSite {
            first: OnceCell::new(),
            more: Mutex::new(Vec::new()),
        }
    }

    /// This site's cache for keys `K` and values `V` (in a test scope, the scope's own),
    /// bounded by `capacity` entries and `max_bytes` of
    /// [`StaleCache::size_weight`].
    pub fn cache<K: StaleKey, V: StaleValue>(
        &'static self,
        max_age: Duration,
        capacity: usize,
        max_bytes: usize,
    ) -> StaleHandle<K, V> {
        StaleHandle {
            cache: self.find(max_age, capacity, max_bytes),
            put: |c, part, k, v| c.put_in(part, k, v.clone()),
            get: StaleCache::get_in,
        }
    }

    fn find<K: StaleKey, V: StaleValue>(
        &'static self,
        max_age: Duration,
        capacity: usize,
        max_bytes: usize,
    ) -> StaleRef<K, V> {
        let make = || {
            StaleCache::<K, V>::with_weigher(max_age, capacity, max_bytes, StaleCache::size_weight)
        };
        #[cfg(feature = "testing")]
        if let Some(scoped) = super::scoped::SCOPED.current() {
            let site = self as *const StaleSite as usize;
            return StaleRef::Shared(
                downcast(scoped.cache(site, TypeId::of::<StaleCache<K, V>>(), || Arc::new(make())))
                    .unwrap_or_else(|| Arc::new(make())),
            );
        }
        let first = self.first.get_or_init(|| Arc::new(make()));
        if let Some(c) = (**first).downcast_ref::<StaleCache<K, V>>() {
            return StaleRef::Cached(c);
        }
        // Another instantiation of a generic function.
        let id = TypeId::of::<StaleCache<K, V>>();
        let mut more = crate::sync::lock_std(&self.more);
        let erased = match more.iter().find(|(t, _)| *t == id) {
            Some((_, c)) => c.clone(),
            None => {
                let c: Erased = Arc::new(make());
                more.push((id, c.clone()));
                c
            }
        };
        // The id matched, so the downcast cannot fail; a fresh cache is the harmless answer if it did.
        StaleRef::Shared(downcast(erased).unwrap_or_else(|| Arc::new(make())))
    }
}

fn downcast<K: StaleKey, V: StaleValue>(c: Erased) -> Option<Arc<StaleCache<K, V>>> {
    c.downcast::<StaleCache<K, V>>().ok()
}

/// A call site's cache with its operations, made where the bounds were checked: the calls
/// that use it need no bounds of their own, so a type that does not fit is reported once.
pub struct StaleHandle<K: 'static, V: 'static> {
    cache: StaleRef<K, V>,
    put: fn(&StaleCache<K, V>, Arc<str>, K, &V),
    get: Getter<K, V>,
}

/// How a handle reads its cache: the value of `K` under the breaker key (`part`), if fresh.
type Getter<K, V> = fn(&StaleCache<K, V>, &str, &K) -> Option<Stale<V>>;

/// A call site's stale cache: its own (`'static`), or a shared one.
pub enum StaleRef<K: 'static, V: 'static> {
    /// The site's first cache.
    Cached(&'static StaleCache<K, V>),
    /// Another instantiation's, or a test scope's.
    Shared(Arc<StaleCache<K, V>>),
}

impl<K: 'static, V: 'static> std::ops::Deref for StaleRef<K, V> {
    type Target = StaleCache<K, V>;
    #[inline]
    fn deref(&self) -> &StaleCache<K, V> {
        match self {
            StaleRef::Cached(c) => c,
            StaleRef::Shared(c) => c,
        }
    }
}

/// Remembers the `Ok` value of a call under its key and the breaker that made it: a keyed
/// breaker's values (`name/tenant-a`) are never served to another key's calls.
#[inline]
pub fn stale_put<K, V>(site: &StaleHandle<K, V>, breaker: &Breaker, key: K, value: &V) {
    // The overflow breaker serves every key past `max_keys`: under its name, one tenant's
    // value would answer another's call (issue 18), so those keys keep no last good value.
    if breaker.0.config().is_overflow() {
        return;
    }
    (site.put)(&site.cache, breaker.0.config().name.clone(), key, value);
}

/// The value kept for `key` if it is younger than `stale_for`: counted in the breaker's
/// `stale_served` and logged at DEBUG with its age.
pub fn stale_get<K, V>(site: &StaleHandle<K, V>, key: &K, breaker: &Breaker) -> Option<Stale<V>> {
    if breaker.0.config().is_overflow() {
        return None; // nothing is kept under it: see `stale_put`
    }
    let stale = (site.get)(&site.cache, breaker.name(), key)?;
    bump(&breaker.0.counters.stale_served);
    tracing::debug!(
        breaker = breaker.name(),
        age = ?stale.age,
        "fusebox: answering with the last good value"
    );
    Some(stale)
}

/// One argument's part of the default stale key: the argument, owned (`&str` becomes `String`).
/// The bound is on the argument's own type, so rustc reports it at the argument.
#[inline]
pub fn stale_key_part<A: StaleKeyPart + ?Sized>(arg: &A) -> Part<<A as StaleKeyPart>::Owned> {
    Part::of(arg.owned())
}

/// One part of a stale key: an argument's owned copy with its `Hash`, `Eq` and `Clone`, taken
/// where [`stale_key_part`] checked them. A key made of parts is then `Hash + Eq + Clone`
/// whatever they are, so an argument missing a bound is one error, at the argument, not a
/// second one at the whole key.
pub struct Part<T> {
    value: T,
    hash: fn(&T, &mut dyn Hasher),
    eq: fn(&T, &T) -> bool,
    clone: fn(&T) -> T,
}

impl<T: StaleKey> Part<T> {
    fn of(value: T) -> Part<T> {
        Part {
            value,
            hash: |v, mut h| v.hash(&mut h),
            eq: |a, b| a == b,
            clone: T::clone,
        }
    }
}

impl<T> Hash for Part<T> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        (self.hash)(&self.value, state);
    }
}

impl<T> PartialEq for Part<T> {
    fn eq(&self, other: &Part<T>) -> bool {
        (self.eq)(&self.value, &other.value)
    }
}

impl<T> Eq for Part<T> {}

impl<T> Clone for Part<T> {
    fn clone(&self) -> Part<T> {
        Part {
            value: (self.clone)(&self.value),
            ..*self
        }
    }
}

/// What [`stale_key_part`] keeps of an argument.
#[diagnostic::on_unimplemented(
    message = "`stale_for` keeps the arguments as the key of the last good value, but `{Self}` is not `Hash + Eq + Clone`",
    label = "part of the stale key, so its type must be `Hash + Eq + Clone`",
    note = "derive `Clone, Hash, PartialEq, Eq` for `{Self}`, or choose the key with `stale_key = expr` (an expression over the arguments, like `stale_key = user.id`)"
)]
pub trait StaleKeyPart {
    /// The owned form kept in the key.
    type Owned: StaleKey;
    /// Makes it.
    fn owned(&self) -> Self::Owned;
}

// Not recommended: a type missing several of `Hash + Eq + Clone` is then one error, this
// trait's (which names all three), rather than one error per missing trait below.
#[diagnostic::do_not_recommend]
impl<T> StaleKeyPart for T
where
    T: StaleKeyClone + StaleKeyHash + StaleKeyEq + ?Sized,
    <T as StaleKeyClone>::Owned: StaleKey,
{
    type Owned = <T as StaleKeyClone>::Owned;
    fn owned(&self) -> Self::Owned {
        self.owned_copy()
    }
}

/// A stale key must be kept, so each argument in it is cloned (or, behind a reference, owned).
#[diagnostic::on_unimplemented(
    message = "`stale_for` keeps the arguments as the key of the last good value, but `{Self}` is not `Clone`",
    label = "part of the stale key, so its type must be `Clone`",
    note = "derive `Clone` for `{Self}`, or choose the key with `stale_key = expr` (an expression over the arguments, like `stale_key = user.id`)"
)]
pub trait StaleKeyClone {
    /// What the key keeps: the value itself, or the owned form of a borrowed one.
    type Owned;
    /// Makes the owned copy.
    fn owned_copy(&self) -> Self::Owned;
}

impl<T: Clone> StaleKeyClone for T {
    type Owned = T;
    fn owned_copy(&self) -> T {
        self.clone()
    }
}

impl StaleKeyClone for str {
    type Owned = String;
    fn owned_copy(&self) -> String {
        self.to_owned()
    }
}

impl<T: Clone> StaleKeyClone for [T] {
    type Owned = Vec<T>;
    fn owned_copy(&self) -> Vec<T> {
        self.to_vec()
    }
}

/// Stale keys are looked up in a hash map.
#[diagnostic::on_unimplemented(
    message = "`stale_for` keeps the last good value per arguments, but `{Self}` is not `Hash`",
    label = "part of the stale key, so its type must be `Hash`",
    note = "derive `Hash` (with `PartialEq, Eq`) for `{Self}`, or choose the key with `stale_key = expr` (like `stale_key = user.id`)"
)]
pub trait StaleKeyHash: Hash {}
impl<T: Hash + ?Sized> StaleKeyHash for T {}

/// Stale keys are compared, so two arguments never share a value by a hash collision.
#[diagnostic::on_unimplemented(
    message = "`stale_for` keeps the last good value per arguments, but `{Self}` is not `Eq`",
    label = "part of the stale key, so its type must be `Eq`",
    note = "derive `PartialEq, Eq` for `{Self}`, or choose the key with `stale_key = expr` (like `stale_key = user.id`)"
)]
pub trait StaleKeyEq: Eq {}
impl<T: Eq + ?Sized> StaleKeyEq for T {}

/// What a whole stale key must be.
#[diagnostic::on_unimplemented(
    message = "the stale key `{Self}` must be `Hash + Eq + Clone + Send + 'static`",
    label = "the key of the last good values",
    note = "with `stale_key = expr`, choose an owned key such as an id, a `String` or a tuple of them"
)]
pub trait StaleKey: Hash + Eq + Clone + Send + 'static {}
#[diagnostic::do_not_recommend]
impl<T: Hash + Eq + Clone + Send + 'static> StaleKey for T {}

/// What a served-again value must be.
#[diagnostic::on_unimplemented(
    message = "`stale_for` keeps a copy of every value the function returns, to serve it again, but `{Self}` is not `Clone` (and `Send`)",
    label = "the `Ok` value (or, without a `Result`, the value) of this function must be `Clone + Send`",
    note = "derive `Clone` for `{Self}`, or wrap it in an `Arc` to share one copy"
)]
pub trait StaleValue: Clone + Send + 'static {}
impl<T: Clone + Send + 'static> StaleValue for T {}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_site_keeps_one_cache_per_type_and_counts_what_it_serves() {
        static SITE: StaleSite = StaleSite::new();
        let b = Breaker::builder("stale-site").build_detached().unwrap();
        let ints = SITE.cache::<u32, u32>(Duration::from_secs(60), 10, usize::MAX);
        assert_eq!(ints.cache.len(), 0);
        stale_put(&ints, &b, 1, &10);
        // A second instantiation (a generic fn) gets its own cache at the same site.
        let strings = SITE.cache::<u32, String>(Duration::from_secs(60), 10, usize::MAX);
        assert!(stale_get(&strings, &1, &b).is_none());
        stale_put(&strings, &b, 1, &"ten".to_owned());
        let again = SITE.cache::<u32, u32>(Duration::from_secs(60), 10, usize::MAX);
        assert_eq!(stale_get(&again, &1, &b).map(|s| s.value), Some(10));
        let strings = SITE.cache::<u32, String>(Duration::from_secs(60), 10, usize::MAX);
        assert_eq!(stale_get(&strings, &1, &b).unwrap().value, "ten");
        assert_eq!(b.metrics().stale_served, 2);
    }

    #[tokio::test(start_paused = true)]
    async fn one_keys_values_are_never_served_to_another_key() {
        static SITE: StaleSite = StaleSite::new();
        let t = Breaker::builder("stale-tenants").config().unwrap();
        let a = crate::registry::registry().register(t.with_key("a"));
        let b = crate::registry::registry().register(t.with_key("b"));
        let cache = SITE.cache::<&str, u32>(Duration::from_secs(60), 10, usize::MAX);
        stale_put(&cache, &a, "item", &1);
        assert!(
            stale_get(&cache, &"item", &b).is_none(),
            "tenant b gets nothing of a's"
        );
        assert_eq!(stale_get(&cache, &"item", &a).unwrap().value, 1);
    }

    #[test]
    fn borrowed_arguments_are_owned_in_the_key() {
        let s: Part<String> = stale_key_part("berlin");
        let n: Part<u8> = stale_key_part(&3u8);
        assert_eq!((s.value.as_str(), n.value), ("berlin", 3));
    }

    #[test]
    fn parts_hash_compare_and_clone_as_their_values() {
        use std::collections::hash_map::DefaultHasher;
        let hash = |p: &Part<String>| {
            let mut h = DefaultHasher::new();
            p.hash(&mut h);
            h.finish()
        };
        let a = stale_key_part("berlin");
        let b = a.clone();
        assert!(a == b && a != stale_key_part("paris"));
        assert_eq!(hash(&a), hash(&b));
        let mut h = DefaultHasher::new();
        "berlin".to_owned().hash(&mut h);
        assert_eq!(hash(&a), h.finish(), "the value's own hash");
    }
}
