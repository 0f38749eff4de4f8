//! One shard of a keyed name's breakers: an immutable map that a lookup reads and a writer
//! replaces with a changed copy (the family's `Swap`). Every change is made here, so the rule
//! for keys whose hashes collide lives in one place.

use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::hash::BuildHasherDefault;
use std::sync::Arc;

use crate::breaker::Breaker;
pub(crate) use crate::hashing::KeyHasher;
use crate::hashing::Prehashed;

/// Shards per keyed name: a new key copies one shard, a sixteenth of the keys.
pub(crate) const SHARDS: usize = 16;

/// One shard: breakers by the hash of their key; keys whose 64-bit hash collides with
/// another's go to `collided` by their key.
#[derive(Clone, Default)]
pub(crate) struct Shard {
    by_hash: HashMap<u64, Breaker, BuildHasherDefault<Prehashed>>,
    collided: HashMap<Arc<str>, Breaker, KeyHasher>,
}

impl Shard {
    #[inline]
    pub(super) fn get(&self, hash: u64, key: &str) -> Option<&Breaker> {
        self.get_bytes(hash, key.as_bytes())
    }

    /// [`get`](Self::get) by the key's UTF-8 bytes.
    #[inline]
    pub(super) fn get_bytes(&self, hash: u64, key: &[u8]) -> Option<&Breaker> {
        match self.by_hash.get(&hash) {
            Some(b) if b.config().key().map(str::as_bytes) == Some(key) => Some(b),
            Some(_) => self.collided.get(std::str::from_utf8(key).ok()?),
            None => None,
        }
    }

    pub(super) fn iter(&self) -> impl Iterator<Item = &Breaker> {
        self.by_hash.values().chain(self.collided.values())
    }

    /// A copy with `b` added as `key`'s breaker (the caller checked it has none).
    pub(super) fn with(&self, hash: u64, key: &str, b: Breaker) -> Shard {
        let mut copy = self.clone();
        match copy.by_hash.entry(hash) {
            // Another key with the same hash holds the slot: this one goes by its name.
            Entry::Occupied(_) => {
                copy.collided.insert(key.into(), b);
            }
            Entry::Vacant(slot) => {
                slot.insert(b);
            }
        }
        copy
    }

    /// A copy without `key`'s breaker, or `None` when it has none. `hash_of` is the family's
    /// hash: a collided key moves up into the hash slot it now has to itself.
    pub(super) fn without(
        &self,
        hash: u64,
        key: &str,
        hash_of: impl Fn(&str) -> u64,
    ) -> Option<Shard> {
        self.get(hash, key)?;
        let mut copy = self.clone();
        if copy.collided.remove(key).is_none() {
            copy.by_hash.remove(&hash);
            if let Some(k) = copy.collided.keys().find(|k| hash_of(k) == hash).cloned() {
                if let Some(b) = copy.collided.remove(&k) {
                    copy.by_hash.insert(hash, b);
                }
            }
        }
        Some(copy)
    }

    /// A copy without the breakers `drop_it` picks, and how many went; `None` when none does.
    pub(super) fn without_any(&self, drop_it: impl Fn(&Breaker) -> bool) -> Option<(Shard, usize)> {
        if !self.iter().any(&drop_it) {
            return None;
        }
        let mut copy = Shard::default();
        let mut removed = 0;
        for (h, b) in &self.by_hash {
            if drop_it(b) {
                removed += 1;
            } else {
                copy.by_hash.insert(*h, b.clone());
            }
        }
        for (k, b) in &self.collided {
            if drop_it(b) {
                removed += 1;
            } else {
                copy.collided.insert(k.clone(), b.clone());
            }
        }
        Some((copy, removed))
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::breaker::events::Events;
    use crate::settings::BreakerBuilder;

    fn breaker(key: &str) -> Breaker {
        let config = BreakerBuilder::new("shard").config().unwrap().with_key(key);
        Breaker::with_events(config, Events::new())
    }

    fn keys(s: &Shard) -> Vec<String> {
        let mut k: Vec<String> = s.iter().map(|b| b.name().to_owned()).collect();
        k.sort();
        k
    }

    #[test]
    fn keys_whose_hashes_collide_are_kept_apart_and_one_moves_up_when_the_other_goes() {
        // Both keys "hash" to 7: the second goes by its name.
        let s = Shard::default()
            .with(7, "a", breaker("a"))
            .with(7, "b", breaker("b"));
        assert_eq!(s.get(7, "a").map(Breaker::name), Some("shard/a"));
        assert_eq!(s.get(7, "b").map(Breaker::name), Some("shard/b"));
        assert!(s.get(7, "c").is_none() && s.get(8, "a").is_none());

        let hash_of = |_: &str| 7;
        assert!(s.without(7, "c", hash_of).is_none(), "no such key");
        let s = s.without(7, "a", hash_of).unwrap();
        assert!(s.get(7, "a").is_none());
        assert_eq!(
            s.get(7, "b").map(Breaker::name),
            Some("shard/b"),
            "b holds the hash slot now"
        );
        assert_eq!(s.by_hash.len(), 1);
        assert!(s.collided.is_empty());
    }

    #[test]
    fn without_any_drops_what_it_picks_from_both_maps_and_counts_them() {
        let s = Shard::default()
            .with(1, "a", breaker("a"))
            .with(1, "b", breaker("b"))
            .with(2, "c", breaker("c"));
        assert!(s.without_any(|_| false).is_none(), "nothing to drop");
        let (kept, removed) = s.without_any(|b| b.name() != "shard/c").unwrap();
        assert_eq!(removed, 2);
        assert_eq!(keys(&kept), ["shard/c"]);
        assert_eq!(
            keys(&s),
            ["shard/a", "shard/b", "shard/c"],
            "the original is untouched"
        );
    }
}
