//! Hashing of keys that come from outside (a request's key, a call's arguments): the hasher
//! every keyed map uses, and the map hasher for keys hashed once already.

use std::hash::Hasher;

/// Keys come from requests: SipHash, seeded per map. Under loom a fixed seed, since the model
/// must take the same path on every run.
#[cfg(not(loom))]
pub(crate) type KeyHasher = std::collections::hash_map::RandomState;
#[cfg(loom)]
pub(crate) type KeyHasher =
    std::hash::BuildHasherDefault<std::collections::hash_map::DefaultHasher>;

/// For a map keyed by a `KeyHasher` hash already computed (outside a lock, or once per
/// lookup): its `u64` is used as it is, so a key is hashed once.
#[derive(Default)]
pub(crate) struct Prehashed(u64);

impl Hasher for Prehashed {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, _: &[u8]) {}
    fn write_u64(&mut self, h: u64) {
        self.0 = h;
    }
}
