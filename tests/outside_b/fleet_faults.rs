//! Issue 32: fleet mode under faults, against a real `redis-server` killed, frozen or refusing
//! writes: every send is the one documented error, within one exchange, and calls and scrapes
//! never wait on it.

use super::*;
use fleet_support::redis_cli;

#[test]
fn every_kind_of_send_at_once_after_redis_is_killed_is_the_one_documented_error() {
    let _turn = turn();
    let Some(mut redis) = RedisServer::start("ob-kill") else {
        return;
    };
    runtime().block_on(async {
        Breaker::builder("ob-fleet-pay").build().unwrap();
        Bulkhead::builder("ob-fleet-pool").pool(4).build().unwrap();
        let base = serve().await;
        // A long heartbeat: the task does not look at Redis again during the test, so every
        // send meets the fault before the link is marked down (the first second).
        let config =
            FleetConfig::new(redis.url(), "obkill", "pod-1").heartbeat(Duration::from_secs(10));
        let fleet = fleet::join(config).await.unwrap();
        assert_eq!(fleet.status().link, fleet::LinkState::Up);
        redis.kill();
        let minute = Duration::from_secs(60);
        let t = Instant::now();
        let settings = fleet
            .change_settings(
                GuardKind::Breaker,
                "ob-fleet-pay",
                [("failure_rate", "80")],
                minute,
                "alice",
            )
            .await;
        link_down(settings);
        link_down(
            fleet
                .change_settings(
                    GuardKind::Bulkhead,
                    "ob-fleet-pool",
                    [("pool", "8")],
                    minute,
                    "alice",
                )
                .await,
        );
        link_down(
            fleet
                .end_settings_change(GuardKind::Breaker, "ob-fleet-pay", "alice")
                .await,
        );
        link_down(fleet.force_open("ob-fleet-pay", minute, "alice").await);
        link_down(fleet.reset("ob-fleet-pay", "alice").await);
        assert!(
            t.elapsed() < Duration::from_secs(6),
            "each bounded by one exchange"
        );
        // The admin router gives one answer for each: 503, the fleet is unreachable.
        for (method, path) in [
            (
                Method::POST,
                "actions/open/ob-fleet-pay?scope=fleet&for=1m&by=alice",
            ),
            (
                Method::POST,
                "settings/breaker/ob-fleet-pay?failure_rate=80&scope=fleet&for=1m",
            ),
            (Method::DELETE, "settings/breaker/ob-fleet-pay?scope=fleet"),
        ] {
            let (status, body) = http(method, &format!("{base}/{path}")).await;
            assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{path}: {body}");
            assert!(
                body.starts_with("the fleet is unreachable"),
                "{path}: {body}"
            );
        }
        // Nothing of it reached this instance either.
        let b = registry().breaker("ob-fleet-pay").unwrap();
        assert_eq!(b.state(), State::Closed);
        assert_eq!(b.config_in_force().failure_rate(), 50);
        drop(fleet);
    });
}

#[test]
fn a_send_to_a_frozen_redis_is_link_down_within_one_exchange_for_settings_too() {
    let _turn = turn();
    let Some(redis) = RedisServer::start("ob-frozen") else {
        return;
    };
    runtime().block_on(async {
        Breaker::builder("ob-frozen-pay").build().unwrap();
        let config =
            FleetConfig::new(redis.url(), "obfrz", "pod-1").heartbeat(Duration::from_secs(10));
        let fleet = fleet::join(config).await.unwrap();
        redis.freeze(true);
        let t = Instant::now();
        let cause = link_down(
            fleet
                .change_settings(
                    GuardKind::Breaker,
                    "ob-frozen-pay",
                    [("failure_rate", "80")],
                    Duration::from_secs(60),
                    "alice",
                )
                .await,
        );
        let took = t.elapsed();
        redis.freeze(false);
        assert!(matches!(cause, LinkFault::TimedOut { .. }), "{cause:?}");
        assert!(took < Duration::from_millis(1500), "{took:?}");
        fleet.leave().await;
    });
}

#[test]
fn a_redis_that_refuses_writes_is_link_down_with_its_error_reply() {
    let _turn = turn();
    let Some(redis) = RedisServer::start("ob-noreplicas") else {
        return;
    };
    runtime().block_on(async {
        Breaker::builder("ob-noreplicas-pay").build().unwrap();
        let config =
            FleetConfig::new(redis.url(), "obnorep", "pod-1").heartbeat(Duration::from_secs(10));
        let fleet = fleet::join(config).await.unwrap();
        // Writes now fail with NOREPLICAS: Redis answers, but cannot take the override.
        redis_cli(&redis, &["CONFIG", "SET", "min-replicas-to-write", "1"]);
        let cause = link_down(
            fleet
                .force_open("ob-noreplicas-pay", Duration::from_secs(60), "alice")
                .await,
        );
        assert!(matches!(cause, LinkFault::ErrorReply { .. }), "{cause:?}");
        let cause = link_down(
            fleet
                .change_settings(
                    GuardKind::Breaker,
                    "ob-noreplicas-pay",
                    [("failure_rate", "80")],
                    Duration::from_secs(60),
                    "alice",
                )
                .await,
        );
        assert!(matches!(cause, LinkFault::ErrorReply { .. }), "{cause:?}");
        redis_cli(&redis, &["CONFIG", "SET", "min-replicas-to-write", "0"]);
        fleet
            .force_open("ob-noreplicas-pay", Duration::from_secs(1), "alice")
            .await
            .unwrap();
        fleet.leave().await;
    });
}

#[test]
fn calls_and_scrapes_never_wait_on_a_frozen_redis() {
    let _turn = turn();
    let Some(redis) = RedisServer::start("ob-frozen-calls") else {
        return;
    };
    runtime().block_on(async {
        let b = Breaker::builder("ob-frozen-calls").build().unwrap();
        let fleet = fleet::join(FleetConfig::new(redis.url(), "obfc", "pod-1"))
            .await
            .unwrap();
        redis.freeze(true);
        // A send waits on the frozen Redis meanwhile, as an operator's would.
        let send = fleet.force_open("ob-frozen-calls", Duration::from_secs(60), "alice");
        let calls = async {
            let mut took = Vec::with_capacity(20_000);
            let mut slowest_scrape = Duration::ZERO;
            for i in 0..20_000u32 {
                let t = Instant::now();
                let _ = b.call(async { Ok::<_, ()>(()) }).await;
                took.push(t.elapsed());
                if i % 2_000 == 0 {
                    let t = Instant::now();
                    let text = fusebox::metrics::prometheus();
                    slowest_scrape = slowest_scrape.max(t.elapsed());
                    assert!(text.contains("fusebox_fleet_link_up"));
                    tokio::task::yield_now().await;
                }
            }
            took.sort_unstable();
            (took[took.len() * 99 / 100], slowest_scrape)
        };
        let (sent, (p99, scrape)) = tokio::join!(send, calls);
        redis.freeze(false);
        assert!(matches!(sent, Err(FleetError::LinkDown { .. })), "{sent:?}");
        eprintln!("frozen Redis: call p99 {p99:?}, slowest scrape {scrape:?}");
        assert!(
            p99 < Duration::from_micros(500),
            "calls waited: p99 {p99:?}"
        );
        assert!(
            scrape < Duration::from_millis(250),
            "a scrape waited: {scrape:?}"
        );
        assert_eq!(b.state(), State::Closed);
        fleet.leave().await;
    });
}
