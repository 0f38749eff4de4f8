//! Issue 29, fleet-wide settings changes against a real `redis-server`: two instances (this
//! test binary re-run as children, `fleet_child`) take one change and its expiry, also with
//! Redis gone, and its end asked on one of them. Real processes run on real time: every wait has a deadline and polls.
#![cfg(feature = "redis")]

mod fleet_support;

use std::time::{Duration, Instant};

use fleet_support::{within, Instance, RedisServer};

fn secs(s: f64) -> Duration {
    Duration::from_secs_f64(s)
}

fn fleet(redis: &RedisServer, service: &str) -> Vec<Instance> {
    let mut all: Vec<Instance> = ["a", "b"]
        .iter()
        .map(|id| Instance::start(redis, service, id))
        .collect();
    for i in &mut all {
        within(secs(10.0), "each sees both", || {
            (i.ask("status") == "link=up live=2").then_some(())
        });
    }
    all
}

/// Polls both instances until `cmd` answers `want` on each; returns when each did.
fn both(f: &mut [Instance], cmd: &str, want: &str, limit: Duration) -> Vec<Instant> {
    let mut seen: Vec<Option<Instant>> = vec![None; f.len()];
    within(limit, &format!("`{cmd}` = `{want}` on both"), || {
        for (i, s) in f.iter_mut().zip(seen.iter_mut()) {
            if s.is_none() && i.ask(cmd) == want {
                *s = Some(Instant::now());
            }
        }
        seen.iter().all(Option::is_some).then_some(())
    });
    seen.into_iter().flatten().collect()
}

const CODE: &str = "failure_rate=50/code timeout=300ms/code pool=4/code";
const CHANGED: &str = "failure_rate=80/fleet timeout=2s/fleet pool=4/code";

#[test]
fn two_instances_take_a_fleet_wide_settings_change_and_its_expiry() {
    let Some(redis) = RedisServer::start("settings") else {
        return;
    };
    let mut f = fleet(&redis, "settings");
    assert_eq!(f[0].ask("settings"), CODE);
    // Refused before it is sent: the table's words.
    let refused = f[0].ask("change breaker search failure_rate=0 3000 alice");
    assert!(
        refused.contains("`failure_rate` = 0 is out of range"),
        "{refused}"
    );

    let sent = Instant::now();
    assert_eq!(
        f[0].ask("change breaker search failure_rate=80,timeout=2s 3000 alice"),
        "sent"
    );
    both(&mut f, "settings", CHANGED, secs(3.0));
    // The next calls on each instance honour it: 500 ms is within 2 s.
    for i in &mut f {
        assert_eq!(i.ask("call search 500"), "ok", "on {}", i.id);
        let log = i.log_text();
        assert!(
            log.contains("fleet settings change applied") && log.contains("by=alice"),
            "{log}"
        );
    }
    for at in both(&mut f, "settings", CODE, secs(8.0)) {
        let after = at - sent;
        assert!(
            after >= secs(2.7) && after <= secs(4.5),
            "expired after {after:?}, not 3 s"
        );
    }
    assert_eq!(f[1].ask("call search 500"), "timed_out");

    // A bulkhead's pool, fleet-wide.
    assert_eq!(
        f[1].ask("change bulkhead search-pool pool=9 3000 bob"),
        "sent"
    );
    both(
        &mut f,
        "settings",
        "failure_rate=50/code timeout=300ms/code pool=9/fleet",
        secs(3.0),
    );
}

#[test]
fn a_fleet_settings_change_expires_on_time_with_redis_gone() {
    let Some(mut redis) = RedisServer::start("settings-down") else {
        return;
    };
    let mut f = fleet(&redis, "settings-down");
    let sent = Instant::now();
    assert_eq!(
        f[1].ask("change breaker search failure_rate=80,timeout=2s 4000 carol"),
        "sent"
    );
    both(&mut f, "settings", CHANGED, secs(3.0));
    redis.kill();
    for at in both(&mut f, "settings", CODE, secs(9.0)) {
        let after = at - sent;
        assert!(
            after >= secs(3.7) && after <= secs(5.5),
            "expired after {after:?}, not 4 s, with Redis down"
        );
    }
}

#[test]
fn a_fleet_settings_change_ended_on_one_instance_ends_on_every_instance() {
    let Some(redis) = RedisServer::start("settings-end") else {
        return;
    };
    let mut f = fleet(&redis, "settings-end");
    assert_eq!(
        f[0].ask("change breaker search failure_rate=80,timeout=2s 60000 erin"),
        "sent"
    );
    both(&mut f, "settings", CHANGED, secs(3.0));
    let ended = Instant::now();
    assert_eq!(f[1].ask("end breaker search erin"), "ended true");
    assert_eq!(
        f[1].ask("settings"),
        CODE,
        "ended at once where it was asked"
    );
    for at in both(&mut f, "settings", CODE, secs(3.0)) {
        assert!(at - ended <= secs(2.5), "ended after {:?}", at - ended);
    }
    assert!(f[0]
        .log_text()
        .contains("fleet settings change ended fleet-wide"));
    assert_eq!(f[0].ask("end breaker search erin"), "ended false");
    // Nothing comes back from Redis: a second read later, still the code's settings.
    std::thread::sleep(secs(1.5));
    both(&mut f, "settings", CODE, secs(1.0));
}

#[test]
#[ignore = "run by the tests above as a child process"]
fn fleet_child() {
    let (Ok(url), Ok(service), Ok(id)) = (
        std::env::var("FLEET_URL"),
        std::env::var("FLEET_SERVICE"),
        std::env::var("FLEET_INSTANCE"),
    ) else {
        panic!(
            "fleet_child is run by the fleet tests, with FLEET_URL, FLEET_SERVICE, FLEET_INSTANCE"
        );
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(child::run(url, service, id));
}

mod child {
    use std::time::Duration;

    use fusebox::fleet::{self, FleetConfig};
    use fusebox::settings::GuardKind;
    use fusebox::{registry, Breaker, Bulkhead, Error, Rejection};

    fn say(line: String) {
        println!("FLEET {line}");
    }

    fn value(s: &[fusebox::settings::SettingInForce], key: &str) -> String {
        s.iter()
            .find(|s| s.key == key)
            .map_or("none".into(), |s| format!("{key}={}/{}", s.value, s.source))
    }

    pub async fn run(url: String, service: String, id: String) {
        tracing_subscriber::fmt()
            .with_writer(std::io::stderr)
            .with_ansi(false)
            .init();
        let search = Breaker::builder("search")
            .timeout(Duration::from_millis(300))
            .window_calls(10)
            .failure_rate(50)
            .build()
            .expect("search");
        Bulkhead::builder("search-pool")
            .pool(4)
            .build()
            .expect("pool");
        let config = FleetConfig::new(url, service, id).reconnect_max(Duration::from_millis(800));
        let fleet = fleet::join(config).await.expect("join");
        say("joined".into());

        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        std::thread::spawn(move || {
            for line in std::io::stdin().lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        while let Some(line) = rx.recv().await {
            let words: Vec<&str> = line.split_whitespace().collect();
            let answer = match words.as_slice() {
                ["status"] => {
                    let s = fleet.status();
                    format!("link={} live={}", s.link.as_str(), s.live.len())
                }
                ["settings"] => {
                    let b = search.settings_in_force();
                    let h = registry()
                        .bulkhead("search-pool")
                        .expect("pool")
                        .settings_in_force();
                    format!(
                        "{} {} {}",
                        value(&b, "failure_rate"),
                        value(&b, "timeout"),
                        value(&h, "pool")
                    )
                }
                ["call", "search", ms] => {
                    let d = Duration::from_millis(ms.parse().unwrap_or(0));
                    let r: Result<(), Error<()>> = search
                        .call(async {
                            tokio::time::sleep(d).await;
                            Ok(())
                        })
                        .await;
                    match r {
                        Ok(()) => "ok".into(),
                        Err(Error::Rejected(Rejection::TimedOut { .. })) => "timed_out".into(),
                        Err(e) => format!("err {e:?}"),
                    }
                }
                ["change", kind, name, pairs, ms, by] => {
                    let kind = if *kind == "breaker" {
                        GuardKind::Breaker
                    } else {
                        GuardKind::Bulkhead
                    };
                    let pairs: Vec<(&str, &str)> =
                        pairs.split(',').filter_map(|p| p.split_once('=')).collect();
                    let for_ = Duration::from_millis(ms.parse().unwrap_or(1000));
                    match fleet.change_settings(kind, name, pairs, for_, by).await {
                        Ok(()) => "sent".into(),
                        Err(e) => format!("err {e}"),
                    }
                }
                ["end", kind, name, by] => {
                    let kind = if *kind == "breaker" {
                        GuardKind::Breaker
                    } else {
                        GuardKind::Bulkhead
                    };
                    match fleet.end_settings_change(kind, name, by).await {
                        Ok(ended) => format!("ended {ended}"),
                        Err(e) => format!("err {e}"),
                    }
                }
                _ => format!("unknown command {line}"),
            };
            say(answer);
        }
    }
}
