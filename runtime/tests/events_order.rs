//! Transitions reach subscribers (and the log, and test recorders) in the order they were
//! made. A review drove one breaker through thousands of transitions from two worker threads:
//! 15-30 events in 100 000 arrived after the one that followed them ("closed" delivered after
//! "opened"), since each is emitted once its breaker's lock is released.

use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Duration;

use fusebox_runtime::{registry, Breaker, State};
use tokio::sync::broadcast::error::RecvError;

#[test]
fn one_breakers_transitions_arrive_in_the_order_they_were_made() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let name = "events-order";
        let b = Breaker::builder(name)
            .window_calls(1)
            .min_calls(1)
            .open_for(Duration::from_micros(1))
            .half_open_calls(1)
            .build_detached()
            .unwrap();
        let mut rx = registry().subscribe();
        let stop = Arc::new(AtomicBool::new(false));
        let workers: Vec<_> = (0..2)
            .map(|w| {
                let (b, stop) = (b.clone(), stop.clone());
                tokio::spawn(async move {
                    let mut i = 0u64;
                    while !stop.load(Relaxed) {
                        i += 1;
                        let fail = (i + w) % 2 == 0;
                        let _ = b
                            .call(async move {
                                if fail {
                                    Err("down")
                                } else {
                                    Ok(())
                                }
                            })
                            .await;
                        if i % 64 == 0 {
                            tokio::task::yield_now().await;
                        }
                    }
                })
            })
            .collect();
        let checker = tokio::spawn(async move {
            let (mut last, mut checked, mut broken) = (None::<State>, 0u64, Vec::new());
            loop {
                match rx.recv().await {
                    Ok(t) if &*t.name == name => {
                        if let Some(prev) = last {
                            if t.from != prev {
                                broken.push((prev, t.from, t.to));
                            }
                        }
                        last = Some(t.to);
                        checked += 1;
                    }
                    Ok(_) => {}
                    // Fell behind: what was lost breaks no link of ours.
                    Err(RecvError::Lagged(_)) => last = None,
                    Err(RecvError::Closed) => return (checked, broken),
                }
                if checked >= 20_000 {
                    return (checked, broken);
                }
            }
        });
        let (checked, broken) = tokio::time::timeout(Duration::from_secs(20), checker)
            .await
            .expect("20 000 transitions within 20 s")
            .unwrap();
        stop.store(true, Relaxed);
        for w in workers {
            w.await.unwrap();
        }
        assert!(checked >= 20_000);
        assert!(
            broken.is_empty(),
            "{} of {checked} transitions arrived out of order, e.g. {:?}",
            broken.len(),
            &broken[..broken.len().min(3)]
        );
    });
}
