//! Issues 29 (settings outside the code: overrides, live changes, shadow settings) and 32
//! (fleet mode under faults), tested as a user reads them: through the facade's public API,
//! the admin router over real HTTP on loopback and a real `redis-server`.
//!
//! The tests share the process's registry (each uses names of its own) and one fleet per
//! process (the fleet tests take turns). Paused-clock tests make no IO; real sockets run on
//! real time, where every wait has a deadline and polls.
#![cfg(all(
    feature = "admin",
    feature = "redis",
    feature = "serde",
    feature = "metrics"
))]

mod fleet_support;

use std::time::{Duration, Instant};

use fleet_support::{link_down, runtime, turn, within, RedisServer};
use fusebox::fleet::{self, FleetConfig, FleetError, LinkFault};
use fusebox::settings::{GuardKind, Overrides, Source};
use fusebox::{breaker, bulkhead, registry, Breaker, Bulkhead, Rejection, State};
use reqwest::{Method, StatusCode};
use serde_json::Value;

#[derive(Debug, Clone, PartialEq)]
enum DepError {
    Refused(Rejection),
}

impl From<Rejection> for DepError {
    fn from(r: Rejection) -> Self {
        DepError::Refused(r)
    }
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// `(value, source)` of `key` among settings in force.
fn in_force(settings: &[fusebox::settings::SettingInForce], key: &str) -> (String, Source) {
    let s = settings
        .iter()
        .find(|s| s.key == key)
        .unwrap_or_else(|| panic!("no `{key}` in {settings:?}"));
    (s.value.clone(), s.source)
}

// ---------------------------------------------------------------------------------------------
// Issue 29: live changes over overrides given at start.

#[breaker(name = "ob-ship", timeout = "300ms")]
async fn ship(takes: Duration) -> Result<(), DepError> {
    tokio::time::sleep(takes).await;
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn a_live_change_that_expires_gives_back_the_start_overrides_not_the_codes_values() {
    let o = Overrides::from_vars([("FUSEBOX_BREAKER_SHIP", "ob-ship; timeout=1s")]).unwrap();
    registry().apply_overrides(&o).unwrap();
    let b = registry().breaker("ob-ship").unwrap();
    ship(ms(800)).await.unwrap();
    b.change_settings(
        [("timeout", "2s")],
        Source::Admin,
        Some(Duration::from_secs(10)),
    )
    .unwrap();
    assert_eq!(
        in_force(&b.settings_in_force(), "timeout"),
        ("2s".into(), Source::Admin)
    );
    ship(ms(1500)).await.unwrap();
    tokio::time::advance(Duration::from_secs(10)).await;
    // The change has lapsed: the environment's 1 s is back, not the code's 300 ms.
    assert!(matches!(
        ship(ms(1500)).await,
        Err(DepError::Refused(Rejection::TimedOut { .. }))
    ));
    ship(ms(800)).await.unwrap();
    assert_eq!(
        in_force(&b.settings_in_force(), "timeout"),
        ("1s".into(), Source::Env)
    );
    assert!(!b.clear_settings_change(), "nothing left to end");
    assert_eq!(b.config_in_force().timeout(), Some(Duration::from_secs(1)));
}

#[bulkhead(name = "ob-pool", pool = 1, max_wait = "5s")]
async fn pooled(takes: Duration) -> Result<(), DepError> {
    tokio::time::sleep(takes).await;
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn a_larger_pool_given_live_admits_a_waiter_at_once_and_the_codes_pool_returns_on_expiry() {
    let b = registry().bulkhead("ob-pool").unwrap();
    let holder = tokio::spawn(pooled(Duration::from_secs(60)));
    tokio::time::sleep(ms(1)).await;
    let started = tokio::time::Instant::now();
    let waiter = tokio::spawn(pooled(ms(10)));
    tokio::time::sleep(ms(100)).await;
    assert!(!waiter.is_finished(), "one slot, held: the second waits");
    b.change_settings(
        [("pool", "2")],
        Source::Admin,
        Some(Duration::from_secs(30)),
    )
    .unwrap();
    waiter.await.unwrap().unwrap();
    assert!(
        started.elapsed() < ms(200),
        "admitted when the pool grew, not after max_wait: {:?}",
        started.elapsed()
    );
    assert_eq!(b.pool(), 2);
    assert_eq!(
        in_force(&b.settings_in_force(), "pool"),
        ("2".into(), Source::Admin)
    );
    tokio::time::advance(Duration::from_secs(31)).await;
    tokio::task::yield_now().await;
    assert_eq!(b.pool(), 1, "the code's pool is back on expiry");
    assert_eq!(
        in_force(
            &fusebox::metrics().bulkhead("ob-pool").unwrap().settings,
            "pool"
        ),
        ("1".into(), Source::Code)
    );
    holder.abort();
}

#[tokio::test]
async fn one_override_that_gives_a_key_twice_is_refused_as_the_attribute_refuses_it() {
    Breaker::builder("ob-twice").build().unwrap();
    let o = Overrides::from_vars([("FUSEBOX_BREAKER", "ob-twice; timeout=1s; timeout=2s")]);
    let e = match o {
        Err(e) => e,
        Ok(o) => registry()
            .apply_overrides(&o)
            .expect_err("a key given twice: which one did the operator mean?"),
    };
    assert_eq!((e.name.as_str(), e.key.as_str()), ("ob-twice", "timeout"));
    let text = e.to_string();
    assert!(
        text.contains("ob-twice") && text.contains("timeout"),
        "{text}"
    );
}

// ---------------------------------------------------------------------------------------------
// Issue 29 through the admin router, over real HTTP on loopback.

const TOKEN: &str = "outside-b-token-0123456789";

async fn serve() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let app = fusebox::admin::router(TOKEN)
        .unwrap()
        .into_make_service_with_connect_info::<std::net::SocketAddr>();
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{addr}")
}

async fn http(method: Method, url: &str) -> (StatusCode, String) {
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap();
    let resp = client
        .request(method, url)
        .header("authorization", format!("Bearer {TOKEN}"))
        .send()
        .await
        .unwrap();
    let status = resp.status();
    (status, resp.text().await.unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_live_change_over_http_is_a_400_naming_the_key_the_value_and_the_reason() {
    Breaker::builder("ob-http-bad").build().unwrap();
    Bulkhead::builder("ob-http-bad-pool")
        .pool(4)
        .build()
        .unwrap();
    let base = serve().await;
    for (path, key, value, reason) in [
        (
            "breaker/ob-http-bad?timeout=soon",
            "timeout",
            "soon",
            "duration",
        ),
        (
            "breaker/ob-http-bad?failure_rate=0",
            "failure_rate",
            "0",
            "range",
        ),
        ("breaker/ob-http-bad?timout=2s", "timout", "", "unknown"),
        ("bulkhead/ob-http-bad-pool?pool=0", "pool", "0", "range"),
    ] {
        let (status, body) = http(Method::POST, &format!("{base}/settings/{path}")).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{path}: {body}");
        for word in [key, value, reason] {
            assert!(body.contains(word), "{path}: `{word}` in {body}");
        }
    }
    let b = registry().breaker("ob-http-bad").unwrap();
    assert!(
        b.settings_in_force()
            .iter()
            .all(|s| s.source == Source::Code),
        "a refused change changes nothing"
    );
    for (path, want) in [
        (
            "breaker/ob-http-bad?failure_rate=80&for=0s",
            StatusCode::BAD_REQUEST,
        ),
        (
            "breaker/ob-http-bad?failure_rate=80&for=later",
            StatusCode::BAD_REQUEST,
        ),
        (
            "breaker/ob-http-nobody?failure_rate=80",
            StatusCode::NOT_FOUND,
        ),
        ("breaker/ob-http-bad", StatusCode::BAD_REQUEST),
    ] {
        let (status, body) = http(Method::POST, &format!("{base}/settings/{path}")).await;
        assert_eq!(status, want, "{path}: {body}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shadow_promoted_over_http_is_in_force_and_the_answer_says_so() {
    let b = Breaker::builder("ob-http-shadow")
        .window_calls(10)
        .min_calls(5)
        .build()
        .unwrap();
    let base = serve().await;
    let (status, body) = http(
        Method::POST,
        &format!("{base}/shadow/set/ob-http-shadow?failure_rate=20&by=alice"),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    for i in 0..10 {
        let _ = b
            .call(async move {
                if i % 5 == 4 {
                    Err("boom")
                } else {
                    Ok(())
                }
            })
            .await;
    }
    assert_eq!(b.state(), State::Closed, "the live breaker refused nothing");
    let (_, shown) = http(Method::GET, &format!("{base}/breakers/ob-http-shadow")).await;
    let shown: Value = serde_json::from_str(&shown).unwrap();
    assert_eq!(shown["shadow"]["state"], "open", "{shown}");
    let (_, prom) = http(Method::GET, &format!("{base}/metrics")).await;
    assert!(
        prom.lines()
            .any(|l| l.starts_with("fusebox_shadow_") && l.contains("ob-http-shadow")),
        "{prom}"
    );

    let (status, body) = http(
        Method::POST,
        &format!("{base}/shadow/promote/ob-http-shadow?by=alice"),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(b.config_in_force().failure_rate(), 20);
    assert_eq!(
        in_force(&b.settings_in_force(), "failure_rate"),
        ("20".into(), Source::Admin)
    );
    // What the operator reads must match what happened.
    assert!(
        !body.contains("unchanged"),
        "the promote answer says the live settings are unchanged, yet they changed: {body}"
    );
    let answer: Value = serde_json::from_str(&body).unwrap();
    let rate = answer["settings"]
        .as_array()
        .and_then(|a| a.iter().find(|s| s["key"] == "failure_rate"))
        .unwrap_or_else(|| panic!("the settings now in force in {answer}"));
    assert_eq!(
        (&rate["value"], &rate["source"]),
        (&"20".into(), &"admin".into())
    );
    // The code's settings come back as after any live change.
    let (status, _) = http(
        Method::DELETE,
        &format!("{base}/settings/breaker/ob-http-shadow"),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(b.config_in_force().failure_rate(), 50);
}

// ---------------------------------------------------------------------------------------------
// Issue 32 (and 29's fleet side): fleet mode under faults, against a real redis-server.

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
        // send meets the fault before the link is marked down (the issue's first second).
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

// ---------------------------------------------------------------------------------------------
// Issue 29: what a live change does to calls in flight, thresholds and windows.

#[tokio::test(start_paused = true)]
async fn calls_in_flight_finish_under_the_timeout_that_admitted_them() {
    let b = Breaker::builder("ob-inflight")
        .timeout(ms(300))
        .build_detached()
        .unwrap();
    let admitted_short = {
        let b = b.clone();
        tokio::spawn(async move {
            b.call(async {
                tokio::time::sleep(ms(500)).await;
                Ok::<_, ()>(())
            })
            .await
        })
    };
    tokio::time::sleep(ms(10)).await;
    b.change_settings([("timeout", "2s")], Source::Admin, None)
        .unwrap();
    let admitted_long = {
        let b = b.clone();
        tokio::spawn(async move {
            b.call(async {
                tokio::time::sleep(ms(500)).await;
                Ok::<_, ()>(())
            })
            .await
        })
    };
    tokio::time::sleep(ms(10)).await;
    b.change_settings([("timeout", "100ms")], Source::Admin, None)
        .unwrap();
    assert!(matches!(
        admitted_short.await.unwrap(),
        Err(fusebox::Error::Rejected(Rejection::TimedOut { .. }))
    ));
    assert_eq!(admitted_long.await.unwrap(), Ok(()), "admitted under 2 s");
    // The next call is under 100 ms.
    let r = b
        .call(async {
            tokio::time::sleep(ms(150)).await;
            Ok::<_, ()>(())
        })
        .await;
    assert!(matches!(
        r,
        Err(fusebox::Error::Rejected(Rejection::TimedOut { .. }))
    ));
}

/// `ok` successes, then `n` failures.
async fn fail(b: &Breaker, n: usize, ok: usize) {
    for _ in 0..ok {
        let _ = b.call(async { Ok::<_, &str>(()) }).await;
    }
    for _ in 0..n {
        let _ = b.call(async { Err::<(), _>("down") }).await;
    }
}

#[tokio::test(start_paused = true)]
async fn a_new_threshold_is_judged_at_the_next_call_and_a_new_window_kind_starts_empty() {
    let b = Breaker::builder("ob-judge")
        .window_calls(10)
        .min_calls(10)
        .failure_rate(50)
        .build_detached()
        .unwrap();
    fail(&b, 4, 6).await;
    assert_eq!(b.state(), State::Closed, "40 % under 50 %");
    b.change_settings([("failure_rate", "30")], Source::Admin, None)
        .unwrap();
    assert_eq!(b.state(), State::Closed, "not judged until a call");
    fail(&b, 0, 1).await;
    assert_eq!(
        b.state(),
        State::Open,
        "judged at the next call: 40 % over 30 %"
    );

    // A change that ends gives back the code's stricter threshold, judged then too.
    let d = Breaker::builder("ob-judge-back")
        .window_calls(10)
        .min_calls(10)
        .failure_rate(50)
        .build_detached()
        .unwrap();
    d.change_settings(
        [("failure_rate", "80")],
        Source::Admin,
        Some(Duration::from_secs(10)),
    )
    .unwrap();
    fail(&d, 6, 4).await;
    assert_eq!(d.state(), State::Closed, "60 % under 80 %");
    tokio::time::advance(Duration::from_secs(10)).await;
    fail(&d, 0, 1).await;
    assert_eq!(
        d.state(),
        State::Open,
        "the code's 50 % is back: 60 % over it"
    );

    let c = Breaker::builder("ob-window")
        .window_calls(10)
        .min_calls(5)
        .failure_rate(50)
        .build_detached()
        .unwrap();
    fail(&c, 2, 3).await;
    assert_eq!(c.state(), State::Closed, "40 % under 50 %");
    c.change_settings([("window", "10s")], Source::Admin, None)
        .unwrap();
    // Had the old calls been kept, one more failure (3 of 6) would open it.
    fail(&c, 1, 0).await;
    assert_eq!(c.state(), State::Closed, "a new, empty window");
    assert_eq!(c.metrics().window_calls, 1);
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

// ---------------------------------------------------------------------------------------------
// Issue 29: bulkheads outside the code.

#[tokio::test(start_paused = true)]
async fn a_smaller_pool_given_live_lets_calls_keep_their_slots_and_refuses_new_ones() {
    let b = Bulkhead::builder("ob-shrink").pool(3).build().unwrap();
    let mut held = Vec::new();
    for _ in 0..3 {
        held.push(b.acquire().await.unwrap());
    }
    b.change_settings([("pool", "1")], Source::Admin, None)
        .unwrap();
    assert_eq!(b.in_flight(), 3, "calls holding a slot keep it");
    assert!(matches!(b.acquire().await, Err(Rejection::Full { .. })));
    held.pop();
    held.pop();
    assert!(
        matches!(b.acquire().await, Err(Rejection::Full { .. })),
        "one in flight: full"
    );
    held.pop();
    let again = b.acquire().await.unwrap();
    assert!(matches!(b.acquire().await, Err(Rejection::Full { .. })));
    drop(again);
    assert!(b.clear_settings_change());
    assert_eq!(b.pool(), 3);
}

#[tokio::test]
async fn a_bulkheads_limit_kind_is_the_codes_and_a_change_of_it_is_refused_with_that_reason() {
    let fixed = Bulkhead::builder("ob-kind").pool(4).build().unwrap();
    let e = fixed
        .change_settings([("limit", "adaptive")], Source::Admin, None)
        .unwrap_err()
        .to_string();
    assert!(e.contains("limit"), "{e}");
    assert_eq!(fixed.pool(), 4);
}

#[tokio::test(start_paused = true)]
async fn the_guides_toml_overrides_apply_to_a_keyed_breaker_and_a_bulkhead_with_source_file() {
    let file: Overrides = toml::from_str(
        r#"
[breakers."ob-tenant/*"]
failure_rate = 30
timeout = "2s"
[bulkheads.ob-db-pool]
pool = 40
"#,
    )
    .unwrap();
    Bulkhead::builder("ob-db-pool").pool(4).build().unwrap();
    let applied = registry().apply_overrides(&file).unwrap();
    assert!(
        applied.undeclared.iter().all(|u| u.name != "ob-db-pool"),
        "{applied:?}"
    );
    let pool = registry().bulkhead("ob-db-pool").unwrap();
    assert_eq!(pool.pool(), 40);
    assert_eq!(
        in_force(&pool.settings_in_force(), "pool"),
        ("40".into(), Source::File)
    );
    by_tenant("eu").await.unwrap();
    let eu = registry().breaker("ob-tenant/eu").unwrap();
    assert_eq!(
        in_force(&eu.settings_in_force(), "failure_rate"),
        ("30".into(), Source::File)
    );
    assert_eq!(eu.config_in_force().timeout(), Some(Duration::from_secs(2)));
}

#[breaker(name = "ob-tenant", key = tenant, timeout = "800ms")]
async fn by_tenant(tenant: &str) -> Result<(), DepError> {
    let _ = tenant;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_live_change_given_for_shows_when_it_ends_for_a_breaker_and_a_bulkhead_alike() {
    Breaker::builder("ob-exp").build().unwrap();
    Bulkhead::builder("ob-exp-pool").pool(4).build().unwrap();
    let base = serve().await;
    for path in [
        "breaker/ob-exp?failure_rate=80&for=10m&by=alice",
        "bulkhead/ob-exp-pool?pool=6&for=10m&by=alice",
    ] {
        let (status, body) = http(Method::POST, &format!("{base}/settings/{path}")).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let m: Value = serde_json::from_str(&body).unwrap();
        let left = m["settings_change_expires_in_s"]
            .as_f64()
            .unwrap_or_else(|| panic!("{path}: when it ends, in {m}"));
        assert!((590.0..=600.0).contains(&left), "{path}: {left}");
    }
    let (_, all) = http(Method::GET, &format!("{base}/breakers")).await;
    let all: Value = serde_json::from_str(&all).unwrap();
    let pool = all["bulkheads"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["name"] == "ob-exp-pool")
        .unwrap();
    assert!(
        pool["settings_change_expires_in_s"].as_f64().is_some(),
        "{pool}"
    );
    let (status, body) = http(
        Method::DELETE,
        &format!("{base}/settings/bulkhead/ob-exp-pool"),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let m: Value = serde_json::from_str(&body).unwrap();
    assert!(m["settings_change_expires_in_s"].is_null(), "{m}");
    assert_eq!(m["pool"], 4);
}

/// `redis-cli -p <port> <args...>`: what an operator of the Redis does.
fn redis_cli(redis: &RedisServer, args: &[&str]) {
    let ok = std::process::Command::new("redis-cli")
        .args(["-p", &redis.port.to_string()])
        .args(args)
        .stdout(std::process::Stdio::null())
        .status()
        .expect("redis-cli");
    assert!(ok.success(), "redis-cli {args:?}");
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

#[tokio::test(start_paused = true)]
async fn shadow_pairs_are_layered_on_the_settings_in_force_not_the_codes() {
    let b = Breaker::builder("ob-shadow-live").build_detached().unwrap();
    b.change_settings([("failure_rate", "80")], Source::Admin, None)
        .unwrap();
    b.set_shadow([("min_calls", "5")]).unwrap();
    let s = b.shadow().unwrap().settings;
    assert_eq!((s.failure_rate(), s.min_calls()), (80, 5));
    assert_eq!(b.metrics().shadow.unwrap().settings.failure_rate(), 80);
}

#[tokio::test(start_paused = true)]
async fn the_exact_name_wins_then_the_longer_pattern_then_the_last_given() {
    Breaker::builder("ob-prec-pay").build().unwrap();
    let o = Overrides::from_vars([
        ("FUSEBOX_BREAKER_A", "ob-prec-pay; failure_rate=30"),
        (
            "FUSEBOX_BREAKER_B",
            "ob-prec-*; failure_rate=40; timeout=2s; min_calls=7",
        ),
        (
            "FUSEBOX_BREAKER_C",
            "ob-pre*; timeout=3s; min_calls=8; open_for=9s",
        ),
        ("FUSEBOX_BREAKER_D", "ob-prec-*; min_calls=6"),
    ])
    .unwrap();
    registry().apply_overrides(&o).unwrap();
    let c = registry().breaker("ob-prec-pay").unwrap().config_in_force();
    assert_eq!(c.failure_rate(), 30, "the exact name");
    assert_eq!(
        c.timeout(),
        Some(Duration::from_secs(2)),
        "more literal characters"
    );
    assert_eq!(c.min_calls(), 6, "the same pattern given last");
    assert_eq!(
        c.open_for(),
        Duration::from_secs(9),
        "only the widest gives it"
    );
}

#[tokio::test(start_paused = true)]
async fn a_keyed_breakers_key_changes_live_over_its_start_pattern_and_returns_to_it() {
    let o = Overrides::new().breaker("ob-keyed/*", [("failure_rate", "30")], Source::File);
    registry().apply_overrides(&o).unwrap();
    keyed_call("eu").await.unwrap();
    keyed_call("us").await.unwrap();
    let eu = registry().breaker("ob-keyed/eu").unwrap();
    eu.change_settings(
        [("failure_rate", "90")],
        Source::Admin,
        Some(Duration::from_secs(5)),
    )
    .unwrap();
    let us = registry().breaker("ob-keyed/us").unwrap();
    assert_eq!(
        in_force(&us.settings_in_force(), "failure_rate"),
        ("30".into(), Source::File)
    );
    assert_eq!(
        in_force(&eu.settings_in_force(), "failure_rate"),
        ("90".into(), Source::Admin)
    );
    tokio::time::advance(Duration::from_secs(5)).await;
    assert_eq!(
        in_force(&eu.settings_in_force(), "failure_rate"),
        ("30".into(), Source::File)
    );
}

#[breaker(name = "ob-keyed", key = region, timeout = "800ms")]
async fn keyed_call(region: &str) -> Result<(), DepError> {
    let _ = region;
    Ok(())
}

#[tokio::test]
async fn a_breaker_key_given_to_a_bulkhead_is_refused_naming_the_bulkhead_and_the_key() {
    let e = Overrides::from_vars([("FUSEBOX_BULKHEAD_DB", "ob-db; pool=8; failure_rate=30")])
        .unwrap_err();
    assert_eq!(
        (e.target, e.name.as_str(), e.key.as_str(), e.value.as_str()),
        (GuardKind::Bulkhead, "ob-db", "failure_rate", "30")
    );
    let text = e.to_string();
    assert!(
        text.contains("bulkhead `ob-db`") && text.contains("failure_rate"),
        "{text}"
    );
    let e = Overrides::from_vars([("FUSEBOX_BREAKER", "ob-db; timeout")]).unwrap_err();
    assert!(e.to_string().contains("key=value"), "{e}");
}

#[tokio::test(start_paused = true)]
async fn a_bulkhead_change_that_ends_gives_back_the_start_override() {
    Bulkhead::builder("ob-start-pool").pool(4).build().unwrap();
    let o = Overrides::from_vars([("FUSEBOX_BULKHEAD", "ob-start-pool; pool=6")]).unwrap();
    registry().apply_overrides(&o).unwrap();
    let b = registry().bulkhead("ob-start-pool").unwrap();
    b.change_settings([("pool", "10")], Source::Admin, None)
        .unwrap();
    assert_eq!(b.pool(), 10);
    assert!(b.clear_settings_change());
    assert_eq!(b.pool(), 6);
    assert_eq!(
        in_force(&b.settings_in_force(), "pool"),
        ("6".into(), Source::Env)
    );
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

#[tokio::test(start_paused = true)]
async fn prometheus_shows_the_overridden_settings_as_the_guide_writes_them() {
    let o = Overrides::new()
        .breaker("ob-prom/*", [("failure_rate", "30")], Source::File)
        .bulkhead("ob-prom-pool", [("pool", "9")], Source::File);
    Bulkhead::builder("ob-prom-pool").pool(4).build().unwrap();
    registry().apply_overrides(&o).unwrap();
    prom_call("eu").await.unwrap();
    registry()
        .bulkhead("ob-prom-pool")
        .unwrap()
        .change_settings([("pool", "12")], Source::Admin, None)
        .unwrap();
    let text = fusebox::metrics::prometheus();
    for line in [
        r#"fusebox_setting_overridden{breaker="ob-prom",key="eu",setting="failure_rate",source="file"} 1"#,
        r#"fusebox_setting_overridden{bulkhead="ob-prom-pool",setting="pool",source="admin"} 1"#,
    ] {
        assert!(text.contains(line), "{line} in\n{text}");
    }
    assert!(
        !text.lines().any(
            |l| l.starts_with("fusebox_setting_overridden{breaker=\"ob-prom\"")
                && l.contains("setting=\"timeout\"")
        ),
        "settings at the code's value have no sample"
    );
}

#[breaker(name = "ob-prom", key = region, timeout = "800ms")]
async fn prom_call(region: &str) -> Result<(), DepError> {
    let _ = region;
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Issue 29 under real load: live changes (window kinds, timeouts, thresholds, expiries) while
// calls run on every worker. Real time, bounded: about two seconds.

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

#[tokio::test]
async fn a_bad_value_in_a_file_is_the_same_typed_error_as_from_the_environment() {
    Breaker::builder("ob-file-bad").build().unwrap();
    Bulkhead::builder("ob-file-bad-pool")
        .pool(2)
        .build()
        .unwrap();
    for (text, kind, name, key, value) in [
        (
            "[breakers.ob-file-bad]\ntimeout = \"soon\"\n",
            GuardKind::Breaker,
            "ob-file-bad",
            "timeout",
            "soon",
        ),
        (
            "[breakers.ob-file-bad]\nfailure_rate = 0\n",
            GuardKind::Breaker,
            "ob-file-bad",
            "failure_rate",
            "0",
        ),
        (
            "[bulkheads.ob-file-bad-pool]\npool = \"lots\"\n",
            GuardKind::Bulkhead,
            "ob-file-bad-pool",
            "pool",
            "lots",
        ),
    ] {
        let file: Overrides = toml::from_str(text).expect("the shape is right");
        let e = registry().apply_overrides(&file).unwrap_err();
        assert_eq!(
            (
                e.target,
                e.name.as_str(),
                e.key.as_str(),
                e.value.as_str(),
                e.source
            ),
            (kind, name, key, value, Source::File),
            "{text}"
        );
    }
    assert!(toml::from_str::<Overrides>("[breaker.ob-file-bad]\ntimeout = \"1s\"\n").is_err());
    assert_eq!(
        registry()
            .breaker("ob-file-bad")
            .unwrap()
            .config_in_force()
            .timeout(),
        None,
        "nothing applied"
    );
}

#[test]
fn the_simulator_replays_the_overrides_a_process_takes_at_start() {
    use fusebox_sim::replay::{candidate, Setup};
    let file: Overrides =
        toml::from_str("[breakers.\"red*\"]\nopen_for = \"30s\"\nhalf_open_timeout = \"50ms\"\n")
            .unwrap();
    let names = candidate::LIVE.map(|(name, _)| name);
    let o = fusebox_sim::Overrides::new().with_settings_overrides(&file, &names);
    assert_eq!(o.names(), ["redis"], "the pattern met one replay's breaker");
    let mut setup = Setup::default();
    (setup.semian.instances, setup.semian.cycles) = (6, 2);
    let runs = candidate::candidates(&setup, &o).unwrap();
    assert_eq!(runs.len(), 1);
    let shed = &runs[0].figures[0];
    assert_ne!(shed.live, shed.candidate, "{shed:?}");
    // A value the table refuses stops the replay, naming the breaker and the pair.
    let bad: Overrides = toml::from_str("[breakers.redis]\nopen_for = \"soon\"\n").unwrap();
    let o = fusebox_sim::Overrides::new().with_settings_overrides(&bad, &names);
    let e = candidate::candidates(&setup, &o).unwrap_err().to_string();
    assert!(
        e.contains("redis") && e.contains("open_for") && e.contains("soon"),
        "{e}"
    );
}
