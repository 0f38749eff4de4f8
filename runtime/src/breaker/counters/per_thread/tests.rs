//! The per-thread counts' tests: adds, take-overs and reads on threads of their own.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::Arc;

use super::slot::{new_slot, IDLE};
use super::*;

/// Runs `f` on a thread of its own (its own slot, stamps, notes and round robin), passing its
/// panic on. The slot is a fresh one, not one another test's thread gave back with its
/// entries still held.
fn on_new_thread<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::spawn(|| {
        MINE.with(|mine| mine.slot.set(Some(new_slot())));
        f()
    })
    .join()
    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}

/// Owners no live breaker has (counters are 8-aligned): odd addresses.
/// `n` of them from `first * 2 + 1` on, all in the first set.
fn owners(first: usize, n: usize) -> Vec<usize> {
    owners_in(0, first, n)
}

/// `n` owners from `first * 2 + 1` on whose set is `set`.
fn owners_in(set: usize, first: usize, n: usize) -> Vec<usize> {
    (first..)
        .map(|i| i * 2 + 1)
        .filter(|o| set_of(*o) == set)
        .take(n)
        .collect()
}

#[test]
fn a_thread_counts_here_for_as_many_breakers_as_entries_when_they_spread_over_the_sets() {
    on_new_thread(|| {
        let all: Vec<usize> = (0..SETS)
            .flat_map(|set| owners_in(set, 5000, WAYS))
            .collect();
        assert_eq!(all.len(), ENTRIES);
        for round in 0..3 {
            for o in &all {
                assert!(
                    add(*o, SUCCESS).here,
                    "round {round}: owner {o} counted here"
                );
            }
        }
        assert!(all.iter().all(|o| sum(*o) == [0, 0, 0, 0, 3]));
        all.iter().for_each(|o| forget(*o));
    });
}

#[test]
fn a_breaker_that_finds_no_entry_twice_in_a_row_takes_one_over_and_nothing_is_lost() {
    on_new_thread(|| {
        let kept = owners(1000, WAYS);
        for (i, o) in kept.iter().enumerate() {
            (0..=i).for_each(|_| assert!(add(*o, 0).here));
        }
        let late = owners(2000, 1)[0];
        assert!(!add(late, 0).here, "first miss: the shared counter");
        assert!(
            add(late, 1).here,
            "second miss in a row: an entry taken over"
        );
        assert!(add(late, 1).here, "then counted here");
        assert_eq!(sum(late), [0, 2, 0, 0, 0]);
        for (i, o) in kept.iter().enumerate() {
            assert_eq!(
                sum(*o),
                [i as u64 + 1, 0, 0, 0, 0],
                "owner {i} keeps its counts"
            );
        }
        // The evicted owner counts on (in the entry taken over next), its moved share kept.
        // (A `false` is the caller's to count on the shared line: not here.)
        assert!(!add(kept[0], 0).here);
        assert!(add(kept[0], 0).here);
        assert_eq!(sum(kept[0]), [2, 0, 0, 0, 0]);
        kept.iter().chain([&late]).for_each(|o| forget(*o));
        assert!(kept.iter().chain([&late]).all(|o| sum(*o) == [0; KINDS]));
    });
}

#[test]
fn breakers_in_turn_past_the_entries_never_evict() {
    on_new_thread(|| {
        let all = owners(3000, WAYS + 2);
        let counted_here: Vec<bool> = (0..3)
            .flat_map(|_| all.iter().map(|o| add(*o, 0).here).collect::<Vec<_>>())
            .collect();
        // The first `WAYS` take their set's entries; the rest miss every time, never twice
        // in a row.
        let expected: Vec<bool> = (0..3)
            .flat_map(|_| (0..all.len()).map(|i| i < WAYS))
            .collect();
        assert_eq!(counted_here, expected);
        all.iter().for_each(|o| forget(*o));
    });
}

#[test]
fn a_breaker_missing_among_others_that_count_here_never_takes_an_entry_over() {
    on_new_thread(|| {
        let all = owners(6000, WAYS + 1);
        for round in 0..4 {
            let counted_here: Vec<bool> = all.iter().map(|o| add(*o, SUCCESS).here).collect();
            let mut expected = vec![true; WAYS];
            expected.push(false);
            assert_eq!(counted_here, expected, "round {round}");
        }
        all.iter().for_each(|o| forget(*o));
    });
}

#[test]
fn a_breaker_whose_set_is_held_by_breakers_no_longer_called_takes_over_between_other_calls() {
    on_new_thread(|| {
        let stale = owners_in(0, 7000, WAYS);
        stale.iter().for_each(|o| assert!(add(*o, SUCCESS).here));
        let (a, b) = (owners_in(1, 7000, 1)[0], owners_in(0, 8000, 1)[0]);
        assert!(add(a, SUCCESS).here);
        assert!(!add(b, SUCCESS).here, "first miss: the shared counter");
        assert!(add(a, SUCCESS).here, "another set's hit");
        assert!(
            add(b, SUCCESS).here,
            "second miss in its set: an entry taken over"
        );
        assert_eq!(sum(b), [0, 0, 0, 0, 1]);
        assert_eq!(sum(a), [0, 0, 0, 0, 2]);
        assert_eq!(
            stale.iter().map(|o| sum(*o)[SUCCESS]).sum::<u64>(),
            WAYS as u64,
            "the stale owners' counts kept"
        );
        stale.iter().chain([&a, &b]).for_each(|o| forget(*o));
    });
}

#[test]
fn each_set_takes_its_ways_over_in_turn_whatever_the_other_sets_took() {
    on_new_thread(|| {
        let stale: Vec<usize> = (0..2).flat_map(|set| owners_in(set, 9000, WAYS)).collect();
        stale.iter().for_each(|o| assert!(add(*o, SUCCESS).here));
        let (a, b) = (owners_in(0, 10_000, 1)[0], owners_in(1, 10_000, 1)[0]);
        let c = owners_in(0, 11_000, 1)[0];
        // Each takes an entry over on its second call in a row.
        let counted = [a, a, b, b, c, c].map(|o| add(o, SUCCESS).here);
        assert_eq!(counted, [false, true, false, true, false, true]);
        let ways = MINE.with(|mine| {
            let slot = mine.slot.get().unwrap();
            [(0, 0), (1, 0), (0, 1)].map(|(set, way)| slot.set(set)[way].owner.load(Relaxed))
        });
        // Set 1's first take-over takes its first way, though set 0 took one before; set 0's
        // second takes its second way, not the first one's again.
        assert_eq!(ways, [a, b, c]);
        stale.iter().chain([&a, &b, &c]).for_each(|o| forget(*o));
    });
}

#[test]
fn keys_called_in_turn_take_over_entries_gone_quiet_whatever_is_called_between() {
    on_new_thread(|| {
        // Breakers of the set called once and no more (the rows before a benchmark's keyed
        // row), then keys of that set called in turn. The first takes an entry over on its
        // second miss (nothing else in the set is in use); the others, missing between keys
        // that count here, once the stale entries have sat out `IDLE` misses. Then all count
        // here, for good.
        let stale = owners_in(0, 12_000, WAYS);
        stale.iter().for_each(|o| assert!(add(*o, SUCCESS).here));
        let keys = owners_in(0, 13_000, 3);
        let turn = || -> Vec<bool> { keys.iter().map(|k| add(*k, SUCCESS).here).collect() };
        assert_eq!(turn(), [false, false, false], "first misses");
        assert!(
            turn()[0],
            "the first key's second miss: an entry taken over"
        );
        let mut rounds = 2;
        while turn() != [true, true, true] {
            rounds += 1;
            assert!(
                rounds <= 2 * IDLE as usize,
                "keys still miss after {rounds} rounds"
            );
        }
        for round in 0..20 {
            assert_eq!(turn(), [true, true, true], "round {round}: no key evicted");
        }
        assert_eq!(
            stale.iter().map(|o| sum(*o)[SUCCESS]).sum::<u64>(),
            WAYS as u64,
            "the stale owners' counts kept"
        );
        stale.iter().chain(&keys).for_each(|o| forget(*o));
    });
}

#[test]
fn more_keys_in_turn_than_a_set_has_ways_fill_its_stale_entries_and_stay() {
    on_new_thread(|| {
        // One key more than the ways: each key's note must outlive the other keys' misses.
        let stale = owners_in(0, 15_000, WAYS);
        stale.iter().for_each(|o| assert!(add(*o, SUCCESS).here));
        let keys = owners_in(0, 16_000, WAYS + 1);
        let turn = || keys.iter().filter(|k| add(**k, SUCCESS).here).count();
        let mut rounds = 1;
        while turn() < WAYS {
            rounds += 1;
            assert!(
                rounds <= 10,
                "the stale entries still held after {rounds} rounds"
            );
        }
        // The ways hold four of the keys; with every entry in use, the fifth takes none.
        let all_stale_gone = stale.iter().all(|o| {
            MINE.with(|m| {
                let slot = m.slot.get().unwrap();
                slot.set(0).iter().all(|e| e.owner.load(Relaxed) != *o)
            })
        });
        assert!(all_stale_gone, "every stale entry taken");
        for round in 0..20 {
            assert_eq!(turn(), WAYS, "round {round}");
        }
        stale.iter().chain(&keys).for_each(|o| forget(*o));
    });
}

#[test]
fn breakers_of_one_set_all_in_use_in_an_irregular_order_do_not_evict_each_other() {
    on_new_thread(|| {
        // Five breakers of one set, some called twice a round (`A B C A B C D E D E`): the
        // rule "not counted in since the breaker's last miss" alone took an entry over twice
        // a round, for good, each under the lock every read takes.
        let all = owners_in(0, 14_000, WAYS + 1);
        let order = [0, 1, 2, 0, 1, 2, 3, 4, 3, 4];
        let mut taken_over = 0;
        for _ in 0..50 {
            for i in order {
                let before = MINE.with(|m| m.misses[0].get());
                let here = add(all[i], SUCCESS).here;
                let missed = MINE.with(|m| m.misses[0].get()) > before;
                taken_over += usize::from(here && missed);
            }
        }
        assert_eq!(taken_over, 0, "take-overs in 50 rounds");
        all.iter().for_each(|o| forget(*o));
    });
}

#[test]
fn reads_during_evictions_never_go_back() {
    let owners = owners(4000, WAYS + 1);
    let per_thread = 20_000u64;
    let done = Arc::new(AtomicBool::new(false));
    let reader = {
        let (owners, done) = (owners.clone(), done.clone());
        std::thread::spawn(move || {
            let mut last = vec![0; owners.len()];
            while !done.load(Relaxed) {
                for (o, l) in owners.iter().zip(&mut last) {
                    let now = sum(*o)[0];
                    assert!(now >= *l, "{l} then {now}");
                    *l = now;
                }
            }
        })
    };
    let shared: Vec<_> = owners.iter().map(|_| AtomicU64::new(0)).collect();
    std::thread::scope(|s| {
        for t in 0..2 {
            let (owners, shared) = (&owners, &shared);
            s.spawn(move || {
                for i in 0..per_thread {
                    // Pairs of one owner, rotating: an eviction every other call.
                    let k = ((i / 2) as usize + t) % owners.len();
                    if !add(owners[k], 0).here {
                        shared[k].fetch_add(1, Relaxed);
                    }
                }
            });
        }
    });
    done.store(true, Relaxed);
    reader.join().unwrap();
    let total: u64 = owners
        .iter()
        .zip(&shared)
        .map(|(o, c)| sum(*o)[0] + c.load(Relaxed))
        .sum();
    assert_eq!(total, 2 * per_thread);
    owners.iter().for_each(|o| forget(*o));
}

#[test]
fn threads_that_start_one_after_another_get_numbers_one_apart() {
    // What the time window's lanes rely on: a runtime's workers, starting in turn, count in
    // different lanes. A thread's number is taken with its slot, by its first count. The
    // owners are no other test's (odd, and far above theirs), and forgotten at the end.
    let (a, b) = (usize::MAX - 2, usize::MAX - 4);
    let first = std::thread::spawn(move || add(a, SUCCESS).thread)
        .join()
        .unwrap();
    let second = std::thread::spawn(move || {
        let at_first_count = add(a, SUCCESS).thread;
        assert_eq!(
            add(b, 0).thread,
            at_first_count,
            "kept for the thread's life"
        );
        at_first_count
    })
    .join()
    .unwrap();
    forget(a);
    forget(b);
    // Other tests' threads may take slots in between, never the same number.
    assert!(second > first, "{first} then {second}");
}
