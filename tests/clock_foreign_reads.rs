//! A snapshot taken on another runtime's clock ends nothing of a breaker or bulkhead.
//!
//! Parallel `#[tokio::test(start_paused = true)]`s share the global registry, each on a frozen
//! clock of its own. A test that advances its clock by minutes and reads `metrics()` (or
//! `stuck_breakers()`, the Prometheus text) reads every breaker on that clock: a timed live
//! settings change of another test must not end there, early for that test's own calls, as
//! forced states, open periods and time windows already do not; nor a ramp, nor a shadow's
//! window; nor may it date a fresh breaker on the clock of whichever test came first. Each
//! test below plays the other test on a thread of its own, deterministically.

use std::time::Duration;

use fusebox::settings::Source;
use fusebox::{breaker, bulkhead, registry, Rejection, State};
use tokio::runtime::{Builder, Runtime};

#[derive(Debug)]
struct Down(#[allow(dead_code)] Rejection);

impl From<Rejection> for Down {
    fn from(r: Rejection) -> Self {
        Down(r)
    }
}

fn paused() -> Runtime {
    Builder::new_current_thread()
        .enable_all()
        .start_paused(true)
        .build()
        .unwrap()
}

/// Another test: advances its own paused clock, then reads every breaker and bulkhead.
fn another_test_reads_metrics_after(advance: Duration) {
    std::thread::spawn(move || {
        paused().block_on(async move {
            tokio::time::advance(advance).await;
            let _ = fusebox::metrics();
            let _ = fusebox::stuck_breakers();
        })
    })
    .join()
    .unwrap();
}

#[breaker(name = "foreign-read-live", open_for = "10s")]
async fn live() -> Result<(), Down> {
    Ok(())
}

#[test]
fn a_timed_settings_change_outlives_another_tests_metrics_read() {
    let rt = paused();
    rt.block_on(async {
        live().await.unwrap();
        let b = registry().breaker("foreign-read-live").unwrap();
        b.change_settings(
            [("open_for", "20s")],
            Source::Admin,
            Some(Duration::from_secs(60)),
        )
        .unwrap();
    });
    another_test_reads_metrics_after(Duration::from_secs(120));
    rt.block_on(async {
        let b = registry().breaker("foreign-read-live").unwrap();
        let m = b.metrics();
        assert_eq!(m.settings_change_expires_in, Some(Duration::from_secs(60)));
        assert_eq!(b.config_in_force().open_for(), Duration::from_secs(20));
        // On this test's own clock it ends when due: reported so by a snapshot at once.
        tokio::time::advance(Duration::from_secs(60)).await;
        let m = b.metrics();
        assert_eq!(m.settings_change_expires_in, None);
        let open_for = m.settings.iter().find(|s| s.key == "open_for").unwrap();
        assert_eq!(
            (open_for.value.as_str(), open_for.source),
            ("10s", Source::Code)
        );
        assert_eq!(b.config_in_force().open_for(), Duration::from_secs(10));
    });
}

#[bulkhead(name = "foreign-read-pool", pool = 1)]
async fn pooled() -> Result<(), Down> {
    Ok(())
}

#[test]
fn a_timed_bulkhead_change_outlives_another_tests_metrics_read() {
    let rt = paused();
    rt.block_on(async {
        pooled().await.unwrap();
        let b = registry().bulkhead("foreign-read-pool").unwrap();
        b.change_settings(
            [("pool", "5")],
            Source::Admin,
            Some(Duration::from_secs(60)),
        )
        .unwrap();
    });
    another_test_reads_metrics_after(Duration::from_secs(120));
    rt.block_on(async {
        let b = registry().bulkhead("foreign-read-pool").unwrap();
        assert_eq!(b.metrics().pool, 5);
        assert_eq!(b.pool(), 5);
        assert_eq!(b.config_in_force().pool(), 5);
        tokio::time::advance(Duration::from_secs(61)).await;
        let m = b.metrics();
        assert_eq!((m.pool, m.settings_change_expires_in), (1, None));
        assert_eq!(b.config_in_force().pool(), 1);
    });
}

#[breaker(
    name = "foreign-read-judged",
    window_calls = 4,
    min_calls = 4,
    failure_rate = 50,
    open_for = "10s"
)]
async fn judged(up: bool) -> Result<(), Down> {
    if up {
        Ok(())
    } else {
        Err(Down(Rejection::Full {
            name: "dependency".into(),
            pool: 0,
        }))
    }
}

#[test]
fn the_codes_threshold_returning_is_judged_on_the_breakers_clock_not_a_readers() {
    let rt = paused();
    rt.block_on(async {
        let b = registry().breaker("foreign-read-judged").unwrap();
        // Looser for a minute: three failures in four calls keep it closed.
        b.change_settings(
            [("failure_rate", "100")],
            Source::Admin,
            Some(Duration::from_secs(60)),
        )
        .unwrap();
        for up in [true, false, false, false] {
            let _ = judged(up).await;
        }
        assert_eq!(b.state(), State::Closed);
    });
    another_test_reads_metrics_after(Duration::from_secs(120));
    rt.block_on(async {
        let b = registry().breaker("foreign-read-judged").unwrap();
        assert_eq!(
            b.state(),
            State::Closed,
            "the change is still in force here"
        );
        assert!(judged(true).await.is_ok());
        tokio::time::advance(Duration::from_secs(60)).await;
        // The code's 50 % returns, judged at once on the window: three of the last four failed.
        assert_eq!(b.state(), State::Open);
    });
}

#[breaker(
    name = "foreign-read-ramp",
    window_calls = 2,
    min_calls = 2,
    open_for = "10s",
    half_open_calls = 1,
    ramp = "60s",
    backoff = 2.0,
    open_for_max = "5m"
)]
async fn ramped(up: bool) -> Result<(), Down> {
    if up {
        Ok(())
    } else {
        Err(Down(Rejection::Full {
            name: "dependency".into(),
            pool: 0,
        }))
    }
}

#[test]
fn a_ramp_and_its_episode_outlive_another_tests_metrics_read() {
    let rt = paused();
    rt.block_on(async {
        let _ = ramped(false).await;
        let _ = ramped(false).await;
        tokio::time::advance(Duration::from_secs(10)).await;
        ramped(true).await.unwrap(); // the one trial passes: closed, ramping for 60 s
    });
    another_test_reads_metrics_after(Duration::from_secs(3600));
    rt.block_on(async {
        let b = registry().breaker("foreign-read-ramp").unwrap();
        let share = b
            .ramp_share()
            .expect("0 s into a 60 s ramp on this test's clock");
        assert!(share < 0.1, "{share}");
        let mut refused = 0;
        for _ in 0..100 {
            if let Err(Down(r)) = ramped(true).await {
                assert!(r.is_ramp(), "{r:?}");
                refused += 1;
            }
        }
        assert!(
            refused >= 80,
            "the ramp admits its share only: {refused} of 100 refused"
        );
        // A relapse while ramping goes on with the episode: the open period has grown.
        while b.state() == State::Closed {
            let _ = ramped(false).await;
        }
        let m = b.metrics();
        assert_eq!(m.state, State::Open);
        match ramped(true).await {
            Err(Down(Rejection::Open { retry_in, .. })) => {
                assert_eq!(retry_in, Some(Duration::from_secs(20)))
            }
            other => panic!("{other:?}"),
        }
    });
}

#[breaker(name = "foreign-read-shadow", window_calls = 100, min_calls = 100)]
async fn shadowed() -> Result<(), Down> {
    Err(Down(Rejection::Full {
        name: "dependency".into(),
        pool: 0,
    }))
}

#[test]
fn a_shadows_time_window_outlives_another_tests_metrics_read() {
    let rt = paused();
    rt.block_on(async {
        let b = registry().breaker("foreign-read-shadow").unwrap();
        b.set_shadow([
            ("window", "10s"),
            ("min_calls", "4"),
            ("failure_rate", "50"),
        ])
        .unwrap();
        for _ in 0..3 {
            let _ = shadowed().await;
        }
    });
    another_test_reads_metrics_after(Duration::from_secs(3600));
    rt.block_on(async {
        let _ = shadowed().await; // the fourth failure within 10 s on this test's clock
        let s = registry()
            .breaker("foreign-read-shadow")
            .unwrap()
            .shadow()
            .unwrap();
        assert_eq!((s.state, s.window_calls), (State::Open, 4));
    });
}

#[breaker(name = "foreign-read-fresh")]
async fn fresh() -> Result<(), Down> {
    Ok(())
}

#[test]
fn a_fresh_breakers_time_in_state_counts_on_the_clock_of_its_calls() {
    let rt = paused(); // this test's runtime, made first: its clock is behind the other's
                       // Another test, an hour ahead, may be the first to touch the registry.
    another_test_reads_metrics_after(Duration::from_secs(3600));
    rt.block_on(async {
        fresh().await.unwrap();
        let b = registry().breaker("foreign-read-fresh").unwrap();
        assert!(b.state_since() <= tokio::time::Instant::now());
        let before = b.metrics().time_in_state;
        tokio::time::advance(Duration::from_secs(10)).await;
        assert_eq!(b.metrics().time_in_state - before, Duration::from_secs(10));
    });
}

#[breaker(name = "foreign-read-shared")]
async fn shared_one() -> Result<(), Down> {
    Ok(())
}

#[breaker(name = "foreign-read-shared")]
async fn shared_two() -> Result<(), Down> {
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn a_second_function_of_the_same_name_does_not_restart_time_in_state() {
    shared_one().await.unwrap();
    tokio::time::advance(Duration::from_secs(60)).await;
    shared_two().await.unwrap();
    let m = registry().breaker("foreign-read-shared").unwrap().metrics();
    assert!(
        m.time_in_state >= Duration::from_secs(60),
        "{:?}",
        m.time_in_state
    );
}

#[breaker(name = "foreign-read-looked-up")]
async fn looked_up() -> Result<(), Down> {
    Ok(())
}

#[test]
fn a_fresh_breaker_looked_up_by_name_counts_on_the_clock_of_its_test() {
    let rt = paused(); // this test's runtime, made first: its clock is behind the other's
                       // Another test, an hour ahead, may be the first to touch the registry.
    another_test_reads_metrics_after(Duration::from_secs(3600));
    rt.block_on(async {
        let b = registry().breaker("foreign-read-looked-up").unwrap();
        assert!(b.state_since() <= tokio::time::Instant::now());
        let before = b.metrics().time_in_state;
        tokio::time::advance(Duration::from_secs(10)).await;
        assert_eq!(
            registry()
                .breaker("foreign-read-looked-up")
                .unwrap()
                .metrics()
                .time_in_state
                - before,
            Duration::from_secs(10)
        );
        let _ = looked_up;
    });
}
