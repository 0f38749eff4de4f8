//! Model checking of the core's races with loom.
//!
//! Run: `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=3 cargo test -p fusebox-runtime --release
//! --test loom --target-dir target/loom`. Under `--cfg loom` the runtime's atomics and its lock
//! are loom's (see `src/sync.rs`), so every interleaving of them is explored.
#![cfg(loom)]

use std::time::Duration;

use fusebox_runtime::testing_hooks::{self as hooks, CountWindow, TimeWindow};
use fusebox_runtime::{registry, Breaker, Bulkhead, State};
use loom::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use loom::sync::Arc;
use loom::thread;

const HOUR: Duration = Duration::from_secs(3600);

/// `loom::model`, printing how many interleavings it explored (`--nocapture` shows them).
fn model<F: Fn() + Sync + Send + 'static>(name: &str, f: F) {
    use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
    let runs = std::sync::Arc::new(AtomicU64::new(0));
    let counter = runs.clone();
    let mut builder = loom::model::Builder::new();
    // A time window's slots carry 40-bucket histograms: expiring one is ~50 atomic steps.
    builder.max_branches = 20_000;
    builder.check(move || {
        counter.fetch_add(1, Relaxed);
        f()
    });
    println!("loom: {name}: {} interleavings", runs.load(Relaxed));
}

/// A breaker that opens at the first failure and stays open (no clock needed).
fn breaker(name: &str, trials: u32) -> Breaker {
    Breaker::builder(name)
        .window_calls(2)
        .min_calls(1)
        .failure_rate(50)
        .open_for(HOUR)
        .half_open_calls(trials)
        .build_detached()
        .unwrap()
}

/// Transitions of `name` to `to` received since `rx` subscribed.
fn events(
    rx: &mut tokio::sync::broadcast::Receiver<fusebox_runtime::Transition>,
    name: &str,
    to: State,
) -> usize {
    let mut n = 0;
    while let Ok(t) = rx.try_recv() {
        n += usize::from(&*t.name == name && t.to == to);
    }
    n
}

#[test]
fn two_failures_racing_open_the_breaker_exactly_once() {
    model("closed->open race", || {
        let b = breaker("loom-trip", 1);
        let mut rx = registry().subscribe();
        let g0 = hooks::generation(&b);
        let threads: Vec<_> = (0..2)
            .map(|_| {
                let b = b.clone();
                thread::spawn(move || {
                    // Rejected when the other failure opened it first.
                    if let Ok(c) = hooks::admit(&b) {
                        c.fail()
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(b.state(), State::Open);
        assert_eq!(hooks::generation(&b), g0 + 1, "one transition");
        assert_eq!(b.metrics().times_opened, 1);
        assert_eq!(events(&mut rx, "loom-trip", State::Open), 1, "one event");
    });
}

/// Three callers race for `cap` trials; each trial ends as `ends[i]` says.
fn half_open_race(name: &'static str, cap: u32, ends: [End; 3]) {
    model(name, move || {
        let b = breaker(name, cap);
        hooks::admit(&b).unwrap().fail();
        hooks::half_open(&b);
        let in_flight = Arc::new(AtomicUsize::new(0));
        let threads: Vec<_> = ends
            .into_iter()
            .map(|end| {
                let (b, in_flight) = (b.clone(), in_flight.clone());
                thread::spawn(move || {
                    let Ok(call) = hooks::admit(&b) else { return };
                    if !call.is_trial() {
                        // The trials already closed the breaker: a normal call.
                        return call.succeed();
                    }
                    let n = in_flight.fetch_add(1, SeqCst) + 1;
                    assert!(n <= cap as usize, "{n} trials in flight, cap {cap}");
                    in_flight.fetch_sub(1, SeqCst);
                    match end {
                        End::Ok => call.succeed(),
                        End::Fail => call.fail(),
                        End::Cancel => drop(call),
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        match b.state() {
            State::Closed | State::Open => {}
            State::HalfOpen => {
                let next = hooks::admit(&b).expect("half-open with no trial running admits one");
                assert!(next.is_trial());
            }
            s => panic!("unexpected state {s}"),
        }
    });
}

#[derive(Clone, Copy, Debug)]
enum End {
    Ok,
    Fail,
    Cancel,
}

#[test]
fn half_open_never_admits_more_trials_than_the_cap() {
    half_open_race("loom-ho-1", 1, [End::Ok, End::Ok, End::Ok]);
}

#[test]
fn half_open_with_cancelled_trials_is_never_stuck() {
    half_open_race("loom-ho-2", 2, [End::Cancel, End::Ok, End::Cancel]);
}

#[test]
fn half_open_failure_racing_successes_reopens_or_closes() {
    half_open_race("loom-ho-3", 2, [End::Ok, End::Fail, End::Cancel]);
}

#[test]
fn bulkhead_never_exceeds_its_pool_and_frees_every_slot() {
    model("bulkhead slots", || {
        let bh = Bulkhead::builder("loom-bulkhead")
            .pool(2)
            .build_detached()
            .unwrap();
        let holders = Arc::new(AtomicUsize::new(0));
        let threads: Vec<_> = (0..3)
            .map(|_| {
                let (bh, holders) = (bh.clone(), holders.clone());
                thread::spawn(move || {
                    if let Some(p) = hooks::try_acquire(&bh) {
                        let n = holders.fetch_add(1, SeqCst) + 1;
                        assert!(n <= 2 && bh.in_flight() <= 2);
                        holders.fetch_sub(1, SeqCst);
                        drop(p);
                        true
                    } else {
                        false
                    }
                })
            })
            .collect();
        let got = threads
            .into_iter()
            .map(|t| t.join().unwrap())
            .filter(|g| *g)
            .count();
        assert!(got >= 2, "a pool of 2 serves at least 2 of 3 callers");
        let m = bh.metrics();
        assert_eq!(m.in_flight, 0, "no slot leaked");
        assert_eq!(m.admitted, got as u64);
        assert!(m.peak <= 2);
    });
}

#[test]
fn force_open_racing_a_trip_ends_forced_open() {
    model("force_open vs trip", || {
        let b = breaker("loom-force-trip", 1);
        let tripper = {
            let b = b.clone();
            thread::spawn(move || {
                if let Ok(c) = hooks::admit(&b) {
                    c.fail();
                }
            })
        };
        b.force_open();
        tripper.join().unwrap();
        assert_eq!(b.state(), State::ForcedOpen);
    });
}

#[test]
fn force_open_racing_a_half_open_verdict_ends_forced_open() {
    for fail in [false, true] {
        model("force_open vs verdict", move || {
            let b = breaker("loom-force-verdict", 1);
            hooks::admit(&b).unwrap().fail();
            hooks::half_open(&b);
            let trial = {
                let b = b.clone();
                thread::spawn(move || {
                    if let Ok(c) = hooks::admit(&b) {
                        if fail {
                            c.fail()
                        } else {
                            c.succeed()
                        }
                    }
                })
            };
            b.force_open();
            trial.join().unwrap();
            assert_eq!(b.state(), State::ForcedOpen);
        });
    }
}

#[test]
fn count_window_totals_equal_its_contents_after_racing_records() {
    model("count window records", || {
        let w = Arc::new(CountWindow::new(2));
        w.record(true, false);
        let threads: Vec<_> = [(true, true), (false, true), (true, false)]
            .into_iter()
            .map(|(failed, slow)| {
                let w = w.clone();
                thread::spawn(move || w.record(failed, slow))
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(w.totals(), w.contents());
        assert_eq!(w.totals().0, 2, "a full window of 2");
    });
}

#[test]
fn count_window_reset_racing_records_stays_consistent() {
    model("count window reset", || {
        let w = Arc::new(CountWindow::new(2));
        w.record(true, true);
        let writer = {
            let w = w.clone();
            thread::spawn(move || {
                w.record(true, false);
                w.record(false, true);
            })
        };
        w.reset();
        writer.join().unwrap();
        assert_eq!(w.totals(), w.contents());
    });
}

#[test]
fn time_window_totals_equal_its_slots_across_a_slot_turnover() {
    model("time window turnover", || {
        // Slots of 10 ns. The head is moved to slot 9 first, so that the record at 105 expires
        // only slot 0 (time 0..10), the one the racing record at 8 writes to.
        let w = Arc::new(TimeWindow::new(100));
        w.record(5, true);
        w.record(95, false);
        let threads: Vec<_> = [(8, false), (105, true)]
            .into_iter()
            .map(|(at, failed)| {
                let w = w.clone();
                thread::spawn(move || w.record(at, failed))
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let (calls, failures) = w.totals(105);
        assert_eq!((calls, failures), w.contents());
        // The racing call at 8 may be expired with its slot or survive the turnover, never
        // count twice: slot 9's call and the new one stay, slot 0's first call is gone.
        assert!((2..=3).contains(&calls), "{calls} calls");
        assert!(failures >= 1, "the call at 105 failed");
    });
}

/// A keyed template with a count window (a time window's slots would multiply the states).
fn keyed_template(name: &str, max_keys: u32) -> fusebox_runtime::BreakerConfig {
    Breaker::builder(name)
        .window_calls(2)
        .min_calls(1)
        .max_keys(max_keys)
        .config()
        .unwrap()
}

fn keyed_count(r: &fusebox_runtime::Registry, base: &str) -> usize {
    let prefix = format!("{base}/");
    r.breakers()
        .iter()
        .filter(|b| b.name().starts_with(&prefix))
        .count()
}

#[test]
fn a_new_key_looked_up_twice_at_once_gets_one_breaker() {
    model("keyed insert race", || {
        let r = Arc::new(hooks::registry());
        let t = Arc::new(keyed_template("loom-keyed", 10));
        let (r2, t2) = (r.clone(), t.clone());
        let other = thread::spawn(move || r2.keyed(&t2, &"a"));
        let mine = r.keyed(&t, &"a");
        let theirs = other.join().unwrap();
        assert!(mine.ptr_eq(&theirs), "one key, one breaker");
        assert_eq!(keyed_count(&r, "loom-keyed"), 1);
        assert_eq!(r.keyed_names()[0].keys, 1);
    });
}

#[test]
fn keys_racing_at_the_cap_stay_within_max_keys_plus_overflow() {
    model("keyed cap race", || {
        let r = Arc::new(hooks::registry());
        let t = Arc::new(keyed_template("loom-cap", 1));
        // Busy, so the cap cannot make room by evicting it.
        let first = r.keyed(&t, &"first");
        first.force_open();
        let (r2, t2) = (r.clone(), t.clone());
        let other = thread::spawn(move || r2.keyed(&t2, &"b").name().to_owned());
        let mine = r.keyed(&t, &"c").name().to_owned();
        let theirs = other.join().unwrap();
        assert_eq!(mine, "loom-cap/_overflow");
        assert_eq!(theirs, "loom-cap/_overflow");
        assert_eq!(
            keyed_count(&r, "loom-cap"),
            2,
            "first and the overflow breaker"
        );
        let k = &r.keyed_names()[0];
        assert_eq!((k.keys, k.overflowed), (1, 2));
    });
}

#[test]
fn evicting_a_key_racing_its_lookup_leaves_the_count_right() {
    model("keyed insert/evict race", || {
        let r = Arc::new(hooks::registry());
        let t = Arc::new(keyed_template("loom-evict", 4));
        r.keyed(&t, &"a");
        let r2 = r.clone();
        let evicted = thread::spawn(move || r2.evict("loom-evict/a"));
        let b = r.keyed(&t, &"b");
        let again = r.keyed(&t, &"a");
        assert!(evicted.join().unwrap());
        assert_eq!(b.name(), "loom-evict/b");
        assert_eq!(again.name(), "loom-evict/a");
        // `a` is either the first breaker (looked up before the eviction, then gone) or a
        // fresh one; the count always matches what the registry lists.
        let listed = keyed_count(&r, "loom-evict");
        assert_eq!(r.keyed_names()[0].keys, listed);
        assert!(listed == 1 || listed == 2, "{listed}");
    });
}

#[test]
fn stale_cache_puts_and_gets_racing_stay_bounded_and_never_mix_keys() {
    model("stale cache race", || {
        let c = Arc::new(fusebox_runtime::StaleCache::new(HOUR, 1));
        let c2 = c.clone();
        let other = thread::spawn(move || {
            c2.put(2u8, 20u8);
            c2.get(&1)
        });
        c.put(1u8, 10u8);
        let mine = c.get(&2);
        let theirs = other.join().unwrap();
        assert!(theirs.is_none_or(|s| s.value == 10), "1 only ever holds 10");
        assert!(mine.is_none_or(|s| s.value == 20), "2 only ever holds 20");
        assert_eq!(c.len(), 1, "capacity 1");
        assert_eq!(
            c.bytes(),
            fusebox_runtime::StaleCache::<u8, u8>::size_weight(&0, &0)
        );
    });
}
