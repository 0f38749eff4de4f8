//! Issue 32: the fleet's gauges in the admin router's metrics, the Prometheus text and the
//! `metrics` facade, and the link gauge following Redis down and back.

use super::*;

#[test]
fn the_fleet_gauges_are_in_the_admin_routers_metrics_while_joined_and_gone_after() {
    let _turn = turn();
    let Some(redis) = RedisServer::start("ob-gauges") else {
        return;
    };
    runtime().block_on(async {
        let base = serve().await;
        let fleet = fleet::join(FleetConfig::new(redis.url(), "obgau", "pod-1"))
            .await
            .unwrap();
        let l = r#"{service="obgau",instance="pod-1"}"#;
        let (status, text) = http(Method::GET, &format!("{base}/metrics")).await;
        assert_eq!(status, StatusCode::OK);
        for line in [
            format!("fusebox_fleet_link_up{l} 1"),
            format!("fusebox_fleet_live_instances{l} 1"),
            r#"fusebox_fleet_link_state{service="obgau",instance="pod-1",state="up"} 1"#.into(),
        ] {
            assert!(text.contains(&format!("{line}\n")), "{line} in\n{text}");
            assert!(fusebox::metrics::prometheus().contains(&line), "{line}");
        }
        fleet.leave().await;
        let (_, text) = http(Method::GET, &format!("{base}/metrics")).await;
        for t in [
            text,
            fusebox::metrics().to_prometheus(),
            fusebox::metrics::prometheus(),
        ] {
            assert!(!t.contains("obgau"), "no gauge of a fleet left:\n{t}");
        }
    });
}

#[test]
fn the_fleet_gauges_reach_the_metrics_facade_too() {
    let _turn = turn();
    let Some(redis) = RedisServer::start("ob-facade") else {
        return;
    };
    runtime().block_on(async {
        let fleet = fleet::join(FleetConfig::new(redis.url(), "obfac", "pod-1"))
            .await
            .unwrap();
        let recorder = metrics_util::debugging::DebuggingRecorder::new();
        let snap = recorder.snapshotter();
        metrics::with_local_recorder(&recorder, fusebox::metrics::facade::record);
        let seen: Vec<(String, Vec<String>)> = snap
            .snapshot()
            .into_vec()
            .into_iter()
            .map(|(k, _, _, _)| {
                let key = k.key();
                let labels = key
                    .labels()
                    .map(|l| format!("{}={}", l.key(), l.value()))
                    .collect();
                (key.name().to_owned(), labels)
            })
            .collect();
        for family in [
            "fusebox_fleet_link_up",
            "fusebox_fleet_link_state",
            "fusebox_fleet_live_instances",
            "fusebox_fleet_overrides",
        ] {
            assert!(
                seen.iter()
                    .any(|(n, l)| n == family && l.contains(&"service=obfac".to_owned())),
                "{family} through the facade: {seen:?}"
            );
        }
        fleet.leave().await;
    });
}

#[test]
fn the_link_gauge_reads_0_within_a_heartbeat_of_redis_dying_and_1_after_it_returns() {
    let _turn = turn();
    let Some(mut redis) = RedisServer::start("ob-link0") else {
        return;
    };
    runtime().block_on(async {
        let fleet = fleet::join(FleetConfig::new(redis.url(), "oblink", "pod-1"))
            .await
            .unwrap();
        let up = r#"fusebox_fleet_link_up{service="oblink",instance="pod-1"} 1"#;
        let down = r#"fusebox_fleet_link_up{service="oblink",instance="pod-1"} 0"#;
        assert!(fusebox::metrics::prometheus().contains(up));
        redis.kill();
        let killed = Instant::now();
        // One heartbeat (1 s) and the bound of its exchange.
        within(Duration::from_secs(3), "link_up 0 after the kill", || {
            fusebox::metrics::prometheus().contains(down).then_some(())
        });
        let took = killed.elapsed();
        assert!(took < Duration::from_millis(2500), "{took:?}");
        assert!(fusebox::metrics().to_prometheus().contains(down));
        redis.restart();
        within(
            Duration::from_secs(8),
            "link_up 1 after the restart",
            || fusebox::metrics::prometheus().contains(up).then_some(()),
        );
        fleet.leave().await;
    });
}
