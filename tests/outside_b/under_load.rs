//! Issue 29 under real load: live changes (window kinds, timeouts, thresholds, expiries) and
//! shadows while calls run on every worker. Real time, bounded: about two seconds.

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_changes_and_shadows_under_load_lose_no_call_and_leave_every_figure_consistent() {
    let b = Breaker::builder("ob-load")
        .window_calls(50)
        .timeout(ms(200))
        .build()
        .unwrap();
    let pool = Bulkhead::builder("ob-load-pool").pool(8).build().unwrap();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut workers = Vec::new();
    for w in 0..6u64 {
        let (b, pool, stop) = (b.clone(), pool.clone(), stop.clone());
        workers.push(tokio::spawn(async move {
            let mut made = 0u64;
            let mut i = w;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                i += 1;
                let _ = b
                    .call_in(&pool, async move {
                        match i % 7 {
                            0 => Err("down"),
                            1 => {
                                tokio::time::sleep(ms(3)).await;
                                Ok(())
                            }
                            _ => Ok(()),
                        }
                    })
                    .await;
                made += 1;
                if i % 16 == 0 {
                    tokio::task::yield_now().await;
                }
            }
            made
        }));
    }
    let changes = [
        vec![("window", "1s"), ("failure_rate", "90")],
        vec![("window_calls", "20"), ("timeout", "2ms")],
        vec![("failure_rate", "95"), ("min_calls", "40")],
        vec![("window", "500ms"), ("slow", "1ms"), ("slow_rate", "100")],
    ];
    let started = Instant::now();
    let mut n = 0usize;
    while started.elapsed() < Duration::from_secs(2) {
        let pairs = &changes[n % changes.len()];
        let for_ = (n % 3 == 0).then_some(ms(5));
        if let Err(e) = b.change_settings(pairs.iter().copied(), Source::Admin, for_) {
            panic!(
                "change {n} {pairs:?}: {e:?}; in force {:?}",
                b.settings_in_force()
            );
        }
        pool.change_settings(
            [("pool", if n % 2 == 0 { "2" } else { "8" })],
            Source::Admin,
            for_,
        )
        .unwrap();
        // A shadow beside it, set, promoted or dropped as an operator would.
        match n % 4 {
            0 => b
                .set_shadow([("failure_rate", "10"), ("min_calls", "5")])
                .unwrap(),
            1 => drop(b.promote_shadow()),
            2 => b.set_shadow([("window_calls", "100")]).unwrap(),
            _ => drop(b.drop_shadow()),
        }
        if n % 5 == 0 {
            b.clear_settings_change();
            b.reset();
        }
        n += 1;
        tokio::time::sleep(ms(7)).await;
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let mut made = 0;
    for w in workers {
        made += w.await.expect("no worker panicked");
    }
    b.clear_settings_change();
    pool.clear_settings_change();
    let m = b.metrics();
    assert_eq!(m.calls, made, "every call counted once: {m:?}");
    assert!(m.window_calls <= 50, "{m:?}");
    assert_eq!(pool.in_flight(), 0, "every slot back");
    assert_eq!(pool.pool(), 8);
    assert!(b
        .settings_in_force()
        .iter()
        .all(|s| s.source == Source::Code));
    b.reset();
    assert_eq!(b.call(async { Ok::<_, ()>(()) }).await, Ok(()));
    eprintln!("{made} calls under {n} changes");
}
