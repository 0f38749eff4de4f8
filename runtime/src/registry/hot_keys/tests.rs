//! The recent keys' tests: lookups at a site, take-in on the second miss, loans and
//! the misses deferred while a breaker is lent.

use super::*;
use crate::breaker::Loan;
use crate::registry::keyed::KeyedSite;
use crate::registry::{registry, Key};
use crate::settings::{BreakerBuilder, BreakerConfig};
use std::sync::Arc;

/// A call at `site` with an integer key, as generated code makes it.
fn call(site: &'static KeyedSite, key: u64) -> Breaker {
    let key = Key {
        form: crate::registry::key_form::KeyForm::Unsigned(key),
        display: &key,
    };
    registry().keyed_site(site, key)
}

/// Three calls: the key is taken in on its second miss, so the third is answered here.
fn warm(site: &'static KeyedSite, key: u64) -> Breaker {
    let b = call(site, key);
    for _ in 0..2 {
        assert!(call(site, key).ptr_eq(&b));
    }
    b
}

/// A call at `site` with a text key handed over as it is.
fn call_text(site: &'static KeyedSite, key: &str) -> Breaker {
    let key = Key {
        form: crate::registry::key_form::KeyForm::Str(key),
        display: &key,
    };
    registry().keyed_site(site, key)
}

#[test]
fn text_keys_are_remembered_plain_and_an_encoded_key_never_matches() {
    fn template() -> BreakerConfig {
        BreakerBuilder::new("hk-text").config().unwrap()
    }
    static SITE: KeyedSite = KeyedSite::new(template);
    let host = call_text(&SITE, "db-1:5432");
    for _ in 0..3 {
        assert!(call_text(&SITE, "db-1:5432").ptr_eq(&host));
    }
    assert!(
        call(&SITE, 5).ptr_eq(&call_text(&SITE, "5")),
        "the integer 5 and the text 5 are one key"
    );
    for _ in 0..3 {
        assert_eq!(call_text(&SITE, "a/b").name(), "hk-text/a%2Fb");
    }
    // The name form of `a/b`, given as a key, is a key of its own.
    for _ in 0..3 {
        assert_eq!(call_text(&SITE, "a%2Fb").name(), "hk-text/a%252Fb");
    }
}

#[test]
fn an_evicted_key_gets_a_fresh_breaker_not_the_remembered_one() {
    fn template() -> BreakerConfig {
        BreakerBuilder::new("hk-evict").config().unwrap()
    }
    static SITE: KeyedSite = KeyedSite::new(template);
    let old = warm(&SITE, 1);
    assert!(registry().evict("hk-evict/1"));
    let fresh = call(&SITE, 1);
    assert!(!fresh.ptr_eq(&old));
    let listed = registry().breaker("hk-evict/1").expect("listed");
    assert!(listed.ptr_eq(&fresh));
    assert!(warm(&SITE, 1).ptr_eq(&fresh));
}

#[test]
fn a_key_swept_at_max_keys_is_not_answered_from_memory() {
    fn template() -> BreakerConfig {
        BreakerBuilder::new("hk-sweep")
            .max_keys(1)
            .config()
            .unwrap()
    }
    static SITE: KeyedSite = KeyedSite::new(template);
    let old = warm(&SITE, 1);
    // Key 2 finds the cap: idle key 1 is swept to make room.
    let two = call(&SITE, 2);
    assert_eq!(two.name(), "hk-sweep/2");
    assert!(registry().breaker("hk-sweep/1").is_none(), "swept");
    let again = call(&SITE, 1);
    assert!(!again.ptr_eq(&old), "not the swept breaker");
    let listed = registry().breaker(again.name()).expect("listed");
    assert!(listed.ptr_eq(&again));
}

#[test]
fn overflowing_keys_and_conflicts_are_counted_on_every_call() {
    fn template() -> BreakerConfig {
        BreakerBuilder::new("hk-full").max_keys(1).config().unwrap()
    }
    static SITE: KeyedSite = KeyedSite::new(template);
    warm(&SITE, 1).force_open();
    for _ in 0..5 {
        assert_eq!(call(&SITE, 2).name(), "hk-full/_overflow");
    }
    let names = registry().keyed_names();
    let full = names.iter().find(|k| k.name == "hk-full").unwrap();
    assert_eq!(full.overflowed, 5);

    fn other() -> BreakerConfig {
        BreakerBuilder::new("hk-conflict")
            .window_calls(5)
            .config()
            .unwrap()
    }
    static OTHER: KeyedSite = KeyedSite::new(other);
    let first = BreakerBuilder::new("hk-conflict")
        .window_calls(3)
        .config()
        .unwrap();
    let kept = registry().keyed(&first, &7);
    for _ in 0..4 {
        assert!(call(&OTHER, 7).ptr_eq(&kept), "the first settings are kept");
    }
    assert_eq!(
        kept.0
            .counters
            .conflicts
            .load(std::sync::atomic::Ordering::Relaxed),
        4
    );
}

/// Two misses of `key` at `site` with generation `gen`: taken in (a key is on its second miss).
fn take_in(site: usize, gen: u64, key: Probe<'_>, b: &Breaker) {
    missed(site, gen, key, b);
    missed(site, gen, key, b);
}

/// The first `n` integer keys that share key 0's set at `site`.
fn int_keys_of_one_set(site: usize, n: usize) -> Vec<u64> {
    let at = |k: u64| place(site, Probe::Int(k, false)).1;
    (0..100_000).filter(|k| at(*k) == at(0)).take(n).collect()
}

fn breaker(key: &str) -> Breaker {
    Breaker::detached(
        BreakerBuilder::new("hot-keys")
            .config()
            .unwrap()
            .with_key(key),
    )
}

#[test]
fn a_key_is_found_at_its_site_and_generation_only() {
    let a = breaker("a");
    let key = Probe::Text(b"a");
    missed(1, 7, key, &a);
    assert!(get(1, 7, key).is_none(), "taken in on its second miss");
    missed(1, 7, key, &a);
    assert!(get(1, 7, key).is_some_and(|b| b.ptr_eq(&a)));
    assert!(get(1, 8, key).is_none(), "a later generation");
    assert!(get(2, 7, key).is_none(), "another site");
    assert!(get(1, 7, Probe::Text(b"b")).is_none(), "another key");
    let seven = breaker("-7");
    take_in(1, 7, Probe::Int(7, true), &seven);
    assert!(get(1, 7, Probe::Int(7, true)).is_some_and(|b| b.ptr_eq(&seven)));
    assert!(get(1, 7, Probe::Int(7, false)).is_none(), "7 is not -7");
}

#[test]
fn keys_that_differ_in_a_digit_land_in_different_sets() {
    for site in [0x5555_5555_8000, 0x7f12_3456_7890, 0x1234_5678] {
        let text: Vec<String> = (0..8).map(|i| format!("t{i}")).collect();
        let mut pairs: Vec<usize> = text
            .iter()
            .map(|k| place(site, Probe::Text(k.as_bytes())).1)
            .chain((0..8).map(|n| place(site, Probe::Int(n, false)).1))
            .collect();
        let (a, b) = pairs.split_at_mut(8);
        for half in [a, b] {
            half.sort_unstable();
            assert!(half.windows(2).all(|w| w[0] != w[1]), "{site:#x}: {half:?}");
        }
        let hosts: Vec<String> = (0..8).map(|i| format!("db-{i}.internal:5432")).collect();
        let sets: Vec<usize> = hosts
            .iter()
            .map(|k| place(site, Probe::Text(k.as_bytes())).1)
            .collect();
        for s in &sets {
            let n = sets.iter().filter(|x| *x == s).count();
            assert!(n <= WAYS, "{site:#x}: {sets:?}");
        }
    }
}

#[test]
fn keys_of_one_set_missing_in_turn_are_all_taken_in_and_kept() {
    let at = |k: &String| place(3, Probe::Text(k.as_bytes())).1;
    let first = "0".to_owned();
    let keys: Vec<String> = (0..100_000)
        .map(|n: u32| n.to_string())
        .filter(|k| at(k) == at(&first))
        .take(WAYS)
        .collect();
    assert_eq!(keys.len(), WAYS, "keys of one set");
    let breakers: Vec<Breaker> = keys.iter().map(|k| breaker(k)).collect();
    // In turn, as a site calls its keys: each misses twice, interleaved with the others.
    for _ in 0..2 {
        for (k, b) in keys.iter().zip(&breakers) {
            missed(3, 1, Probe::Text(k.as_bytes()), b);
        }
    }
    for (k, b) in keys.iter().zip(&breakers) {
        let found = get(3, 1, Probe::Text(k.as_bytes()));
        assert!(found.is_some_and(|x| x.ptr_eq(b)), "{k}");
    }
}

#[test]
fn a_lent_breaker_is_the_remembered_one_and_no_reference_is_taken() {
    let a = breaker("51");
    let key = Probe::Int(51, false);
    assert!(lend(5, 1, key).is_none(), "not taken in yet");
    take_in(5, 1, key, &a);
    let count = Arc::strong_count(&a.0);
    let loan = lend(5, 1, key).expect("remembered");
    assert!(std::ptr::eq(loan.core(), &*a.0));
    assert_eq!(Arc::strong_count(&a.0), count, "lent, not cloned");
    let own = loan.breaker();
    assert!(own.ptr_eq(&a));
    assert_eq!(
        Arc::strong_count(&a.0),
        count + 1,
        "the caller's own, counted"
    );
    drop((own, loan));
    assert_eq!(Arc::strong_count(&a.0), count);
    assert!(lend(5, 2, key).is_none(), "a later generation");
    assert!(lend(6, 1, key).is_none(), "another site");
    // Only integer keys are lent: a text key's breaker is kept when its call is made.
    let text = Probe::Text(b"51");
    take_in(5, 1, text, &a);
    assert!(get(5, 1, text).is_some_and(|b| b.ptr_eq(&a)), "remembered");
    assert!(lend(5, 1, text).is_none(), "a text key, not lent");
}

#[test]
fn misses_while_lent_are_applied_when_the_last_loan_ends() {
    let (outer, inner) = (breaker("71"), breaker("inner"));
    let (ko, ki) = (Probe::Int(71, false), Probe::Text(b"inner"));
    take_in(7, 1, ko, &outer);
    let first = lend(7, 1, ko).expect("remembered");
    // A keyed call inside the lent one, lent too (a keyed fn calling another).
    let nested = lend(7, 1, ko).expect("lent again");
    assert!(std::ptr::eq(nested.core(), first.core()));
    take_in(7, 1, ki, &inner);
    assert!(get(7, 1, ki).is_none(), "deferred while lent");
    drop(nested);
    assert!(get(7, 1, ki).is_none(), "a loan is still out");
    drop(first);
    assert!(
        get(7, 1, ki).is_some_and(|b| b.ptr_eq(&inner)),
        "taken in when the last loan ended, as if missed then"
    );
    assert!(get(7, 1, ko).is_some_and(|b| b.ptr_eq(&outer)));
}

#[test]
fn a_lent_breaker_outlives_misses_that_displace_it_until_the_loan_ends() {
    // The lent key and WAYS more keys of its set: taken in during the loan, they would
    // push it out of the table, which holds the only reference to it.
    let keys = int_keys_of_one_set(8, WAYS + 1);
    assert_eq!(keys.len(), WAYS + 1, "keys of one set");
    let lent = breaker(&keys[0].to_string());
    let gone = Arc::downgrade(&lent.0);
    take_in(8, 1, Probe::Int(keys[0], false), &lent);
    drop(lent);
    let loan = lend(8, 1, Probe::Int(keys[0], false)).expect("remembered");
    for k in &keys[1..] {
        let other = breaker(&k.to_string());
        take_in(8, 1, Probe::Int(*k, false), &other);
    }
    let alive = gone.upgrade().expect("still held by the table while lent");
    assert!(std::ptr::eq(loan.core(), &*alive));
    assert_eq!(loan.core().code_config().key(), Some("0"));
    drop(alive);
    drop(loan);
    assert!(gone.upgrade().is_none(), "displaced once the loan ended");
    for k in &keys[1..] {
        assert!(get(8, 1, Probe::Int(*k, false)).is_some(), "{k}");
    }
}

#[test]
fn a_key_missed_again_and_again_during_a_loan_is_taken_in_once() {
    let (outer, key) = (breaker("91"), breaker("k2"));
    let (ko, kk) = (Probe::Int(91, false), Probe::Text(b"k2"));
    take_in(9, 1, ko, &outer);
    let loan = lend(9, 1, ko).expect("remembered");
    for _ in 0..5 {
        missed(9, 1, kk, &key);
    }
    drop(loan);
    let (tag, set) = place(9, kk);
    let copies = HOT.with(|h| {
        let table = h.table.borrow();
        let n = table[set]
            .slots
            .iter()
            .flatten()
            .filter(|s| s.tag == tag)
            .count();
        n
    });
    assert_eq!(copies, 1, "one slot, not one per miss");
    assert!(get(9, 1, kk).is_some_and(|b| b.ptr_eq(&key)));
    assert!(
        get(9, 1, ko).is_some_and(|b| b.ptr_eq(&outer)),
        "the lent key stays"
    );
}

#[test]
fn a_sets_tags_follow_its_slots_as_keys_come_and_go() {
    // Twice as many integer keys of one set as it has ways: each taken in pushes the oldest
    // out, and a lend finds exactly the ones still held, by their tags.
    let at = |n: u64| place(10, Probe::Int(n, false)).1;
    let keys = int_keys_of_one_set(10, 2 * WAYS);
    assert_eq!(keys.len(), 2 * WAYS, "keys of one set");
    let breakers: Vec<Breaker> = keys.iter().map(|k| breaker(&k.to_string())).collect();
    for (k, b) in keys.iter().zip(&breakers) {
        take_in(10, 1, Probe::Int(*k, false), b);
        let lent = lend(10, 1, Probe::Int(*k, false)).expect("just taken in");
        assert!(std::ptr::eq(lent.core(), &*b.0));
    }
    HOT.with(|h| {
        let table = h.table.borrow();
        let set = &table[at(0)];
        for (tag, slot) in set.tags.iter().zip(&set.slots) {
            assert_eq!(*tag, slot.as_ref().map_or(0, |s| s.tag));
        }
    });
    for (k, b) in keys.iter().zip(&breakers) {
        let lent = lend(10, 1, Probe::Int(*k, false));
        let newest = keys[WAYS..].contains(k);
        assert_eq!(lent.is_some(), newest, "key {k}");
        if let Some(l) = lent {
            assert!(std::ptr::eq(l.core(), &*b.0), "key {k}: its own breaker");
        }
    }
}
