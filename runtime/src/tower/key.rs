//! Which breaker a request goes through: one for all, or one per key of the request.

use std::fmt;
use std::sync::Arc;

use crate::registry::registry;

use crate::breaker::Breaker;
use crate::state::State;

use crate::settings::BreakerConfig;

/// Picks the breaker for one request. [`Single`] and [`Keyed`] are the two kinds a
/// [`BreakerLayer`](super::BreakerLayer) is built with; the trait is public because it bounds
/// the service, not to be implemented elsewhere (an implementation must return a breaker of the
/// registry, or the admin router and metrics will not see it).
///
/// ```
/// use fusebox::tower::{BreakerLayer, Select};
/// use fusebox::Breaker;
///
/// let layer = BreakerLayer::keyed(Breaker::builder("select-doc"), |shard: &u32| Some(*shard))
///     .unwrap();
/// assert_eq!(layer.selector().select(&3).name(), "select-doc/3");
/// ```
pub trait Select<Req> {
    /// The breaker for `req` (the example above shows it for a keyed layer).
    fn select(&self, req: &Req) -> Breaker;

    /// Whether every request would be refused now (one breaker for all, open): the service's
    /// `poll_ready` then answers at once. `false` unless known (a keyed layer's breaker
    /// depends on the request).
    fn refusing(&self) -> bool {
        false
    }
}

/// The same breaker for every request.
///
/// ```
/// use fusebox::tower::{BreakerLayer, Select};
/// use fusebox::Breaker;
///
/// let layer = BreakerLayer::new(Breaker::builder("single-doc")).unwrap();
/// assert_eq!(Select::<()>::select(layer.selector(), &()).name(), "single-doc");
/// ```
#[derive(Debug, Clone)]
pub struct Single {
    pub(super) breaker: Breaker,
    /// Made by the registry from the layer's settings (`BreakerLayer::new`): inside a test
    /// scope, the scope's breaker of that name is used instead, as an attribute's call site
    /// does, so a layer built before the scope (a client fixture) follows it. A layer over a
    /// given breaker (`from_breaker`) always uses that one. Read only with feature `testing`.
    #[cfg_attr(not(feature = "testing"), allow(dead_code))]
    pub(super) by_name: bool,
}

impl Single {
    /// Inside a test scope, a layer built by name uses the scope's breaker of that name.
    #[inline]
    fn scoped(&self) -> bool {
        #[cfg(feature = "testing")]
        return self.by_name && registry().is_scoped();
        #[cfg(not(feature = "testing"))]
        false
    }
}

impl AsRef<Breaker> for Single {
    fn as_ref(&self) -> &Breaker {
        &self.breaker
    }
}

impl<Req> Select<Req> for Single {
    #[inline]
    fn select(&self, _: &Req) -> Breaker {
        if self.scoped() {
            return registry().register(self.breaker.config().clone());
        }
        self.breaker.clone()
    }

    #[inline]
    fn refusing(&self) -> bool {
        // A test scope's breaker of the name is looked up per call: not judged here.
        if self.scoped() {
            return false;
        }
        // The word first, so a closed breaker reads no clock; `state` applies a due change.
        let open = |s| matches!(s, State::Open | State::ForcedOpen);
        open(self.breaker.0.word().state()) && open(self.breaker.state())
    }
}

/// One breaker per key: `name/key`, created in the registry on first use with the layer's
/// settings, as `#[breaker(key = ...)]` does. A key of `None` goes through the breaker `name`.
/// The key function is any [`KeyFn`]: its key may borrow from the request.
///
/// The key function runs once per request, before the inner service sees it; keep the keys a
/// small set (hosts, routes, shards), never raw user input: each key is a breaker.
///
/// ```
/// use fusebox::tower::{BreakerLayer, Select};
/// use fusebox::Breaker;
///
/// let layer = BreakerLayer::keyed(Breaker::builder("keyed-doc"), |path: &&str| {
///     path.split('/').nth(1).map(str::to_owned)
/// })
/// .unwrap();
/// assert_eq!(layer.selector().select(&"/orders/17").name(), "keyed-doc/orders");
/// assert_eq!(layer.selector().select(&"").name(), "keyed-doc");
/// ```
pub struct Keyed<F> {
    /// Shared so its address stays put: the registry remembers it to skip the settings check.
    pub(super) template: Arc<BreakerConfig>,
    pub(super) key: F,
}

impl<F: Clone> Clone for Keyed<F> {
    fn clone(&self) -> Self {
        Keyed {
            template: self.template.clone(),
            key: self.key.clone(),
        }
    }
}

impl<F> fmt::Debug for Keyed<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Keyed")
            .field("name", &self.template.name())
            .finish_non_exhaustive()
    }
}

/// A [`Keyed`] layer's key function: any `Fn(&Req) -> Option<K>` with `K: Display`, where `K`
/// may borrow from the request (`Option<&str>` from `req.uri().host()`), so a warm key costs
/// no allocation. Implemented for every such function; not to be implemented by hand.
///
/// Stable Rust infers a closure's return type without the argument's lifetime, so a closure
/// returns an owned key (`.map(str::to_owned)`), and a key that borrows is written as a `fn`:
///
/// ```
/// use fusebox::tower::{BreakerLayer, Select};
/// use fusebox::Breaker;
///
/// fn tenant(req: &(String, u32)) -> Option<&str> {
///     Some(req.0.as_str())
/// }
/// let layer = BreakerLayer::keyed(Breaker::builder("key-fn-doc"), tenant).unwrap();
/// let req = ("acme".to_owned(), 7);
/// assert_eq!(layer.selector().select(&req).name(), "key-fn-doc/acme");
/// ```
pub trait KeyFn<'a, Req: 'a> {
    /// The key of one request.
    type Key: fmt::Display;
    /// The key of `req`, or `None` for the layer's own name.
    fn key_of(&self, req: &'a Req) -> Option<Self::Key>;
}

impl<'a, Req: 'a, F, K> KeyFn<'a, Req> for F
where
    F: Fn(&'a Req) -> Option<K>,
    K: fmt::Display,
{
    type Key = K;
    #[inline]
    fn key_of(&self, req: &'a Req) -> Option<K> {
        self(req)
    }
}

impl<Req, F> Select<Req> for Keyed<F>
where
    F: for<'a> KeyFn<'a, Req>,
{
    #[inline]
    fn select(&self, req: &Req) -> Breaker {
        match self.key.key_of(req) {
            Some(key) => registry().keyed(&self.template, &key),
            // Looked up per call, not cached, so a test scope entered later still applies.
            None => registry().register((*self.template).clone()),
        }
    }
}
