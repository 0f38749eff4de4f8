//! Issue 29's fleet side: a fleet-wide settings change, checked before it is sent, in force
//! here from `fleet` with its expiry, lifted on leave, and reaching a keyed breaker's key.

use super::*;

#[test]
fn a_bad_fleet_settings_change_is_refused_before_it_is_sent_naming_key_and_value() {
    let _turn = turn();
    let Some(redis) = RedisServer::start("ob-bad") else {
        return;
    };
    runtime().block_on(async {
        Breaker::builder("ob-fleet-bad").build().unwrap();
        let base = serve().await;
        let fleet = fleet::join(FleetConfig::new(redis.url(), "obbad", "pod-1"))
            .await
            .unwrap();
        let (status, body) = http(
            Method::POST,
            &format!("{base}/settings/breaker/ob-fleet-bad?timeout=soon&scope=fleet&for=1m"),
        )
        .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        assert!(body.contains("timeout") && body.contains("soon"), "{body}");
        let e = fleet
            .change_settings(
                GuardKind::Breaker,
                "ob-fleet-bad",
                [("failure_rate", "101")],
                Duration::from_secs(60),
                "alice",
            )
            .await
            .unwrap_err();
        assert!(matches!(e, FleetError::BadSettings { .. }), "{e:?}");
        let text = e.to_string();
        assert!(
            text.contains("ob-fleet-bad") && text.contains("failure_rate") && text.contains("101"),
            "{text}"
        );
        fleet.leave().await;
    });
}

#[test]
fn a_fleet_wide_settings_change_is_in_force_here_from_fleet_with_its_expiry_and_lifted_on_leave() {
    let _turn = turn();
    let Some(redis) = RedisServer::start("ob-fleet-here") else {
        return;
    };
    runtime().block_on(async {
        let b = Breaker::builder("ob-fleet-here").build().unwrap();
        let fleet = fleet::join(FleetConfig::new(redis.url(), "obhere", "pod-1"))
            .await
            .unwrap();
        fleet
            .change_settings(
                GuardKind::Breaker,
                "ob-fleet-here",
                [("failure_rate", "80")],
                Duration::from_secs(600),
                "alice",
            )
            .await
            .unwrap();
        within(
            Duration::from_secs(4),
            "applied here at the next read",
            || {
                (in_force(&b.settings_in_force(), "failure_rate") == ("80".into(), Source::Fleet))
                    .then_some(())
            },
        );
        let left = b.metrics().settings_change_expires_in.expect("its expiry");
        assert!(
            left > Duration::from_secs(590) && left <= Duration::from_secs(600),
            "{left:?}"
        );
        fleet.leave().await;
        assert_eq!(
            in_force(&b.settings_in_force(), "failure_rate"),
            ("50".into(), Source::Code),
            "lifted when the instance leaves"
        );
    });
}

#[test]
fn a_keyed_breakers_key_takes_a_fleet_wide_change_and_an_admin_change_by_its_name() {
    let _turn = turn();
    let Some(redis) = RedisServer::start("ob-keyed") else {
        return;
    };
    runtime().block_on(async {
        keyed_call("ap").await.unwrap();
        let ap = registry().breaker("ob-keyed/ap").unwrap();
        let base = serve().await;
        let (status, body) = http(
            Method::POST,
            &format!("{base}/settings/breaker/ob-keyed%2Fap?min_calls=9"),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(ap.config_in_force().min_calls(), 9);
        let fleet = fleet::join(FleetConfig::new(redis.url(), "obkeyed", "pod-1"))
            .await
            .unwrap();
        fleet
            .change_settings(
                GuardKind::Breaker,
                "ob-keyed/ap",
                [("min_calls", "7")],
                Duration::from_secs(60),
                "alice",
            )
            .await
            .unwrap();
        within(
            Duration::from_secs(4),
            "the key takes the fleet's change",
            || {
                (in_force(&ap.settings_in_force(), "min_calls") == ("7".into(), Source::Fleet))
                    .then_some(())
            },
        );
        let (status, body) = http(
            Method::DELETE,
            &format!("{base}/settings/breaker/ob-keyed/ap?scope=fleet&by=alice"),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let answer: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(answer["ended"], true, "{answer}");
        assert_eq!(ap.config_in_force().min_calls(), ap.config().min_calls());
        fleet.leave().await;
    });
}
