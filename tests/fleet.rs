//! Fleet mode against a real `redis-server`, with every instance a separate process.
//!
//! Each test starts its own Redis on a free loopback port and its own instances: this test
//! binary re-run as a child (`fleet_child`), which joins the fleet and answers commands.
//! Real processes run on real time: every wait below has a deadline and polls.
#![cfg(feature = "redis")]

mod fleet_support;

use std::time::{Duration, Instant};

use fleet_support::{within, Instance, RedisServer};

fn secs(s: f64) -> Duration {
    Duration::from_secs_f64(s)
}

/// Starts `ids` and waits until each sees all of them live.
fn fleet(redis: &RedisServer, service: &str, ids: &[&str]) -> Vec<Instance> {
    let mut all: Vec<Instance> = ids
        .iter()
        .map(|id| Instance::start(redis, service, id))
        .collect();
    let want = format!("link=up live={}", ids.len());
    for i in &mut all {
        within(
            secs(10.0),
            &format!("{} sees the whole fleet", i.id),
            || (i.ask("status") == want).then_some(()),
        );
    }
    all
}

/// Polls every instance until `breaker` is in `state` on all; returns when each was seen so.
fn all_reach(fleet: &mut [Instance], breaker: &str, state: &str, limit: Duration) -> Vec<Instant> {
    let mut seen: Vec<Option<Instant>> = vec![None; fleet.len()];
    within(
        limit,
        &format!("`{breaker}` {state} on every instance"),
        || {
            for (i, s) in fleet.iter_mut().zip(seen.iter_mut()) {
                if s.is_none() && i.state(breaker) == state {
                    *s = Some(Instant::now());
                }
            }
            seen.iter().all(Option::is_some).then_some(())
        },
    );
    seen.into_iter().flatten().collect()
}

#[test]
fn an_override_reaches_three_instances_within_two_seconds_and_expires_on_time() {
    let Some(redis) = RedisServer::start("override") else {
        return;
    };
    let mut f = fleet(&redis, "ovr", &["a", "b", "c"]);
    let sent = Instant::now();
    assert_eq!(f[0].ask("send search force_open 4000 alice"), "sent");
    all_reach(&mut f, "search", "forced_open", secs(2.0));
    for i in &mut f {
        assert_eq!(i.ask("overrides"), "search:force_open:alice", "on {}", i.id);
        // Who asked and until when, in each instance's own log.
        let log = i.log_text();
        assert!(
            log.contains("fleet override applied")
                && log.contains("by=alice")
                && log.contains("until=20"),
            "{log}"
        );
    }
    for at in all_reach(&mut f, "search", "closed", secs(8.0)) {
        let after = at - sent;
        assert!(
            after >= secs(3.7) && after <= secs(5.5),
            "expired after {after:?}, not 4 s"
        );
    }
    assert_eq!(f[1].ask("overrides"), "");
}

#[test]
fn two_of_three_open_give_quorum_on_the_third_one_does_not_and_a_restart_starts_open() {
    let Some(redis) = RedisServer::start("quorum") else {
        return;
    };
    let mut f = fleet(&redis, "quo", &["a", "b", "c"]);
    assert_eq!(f[0].ask("fail payments 4"), "open");
    within(secs(5.0), "c counts a's vote", || {
        (f[2].ask("votes payments") == "votes=1 live=3").then_some(())
    });
    // 1 of 3 is below 50 %: c stays closed through two more heartbeats.
    let watch = Instant::now();
    while watch.elapsed() < secs(2.2) {
        assert_eq!(f[2].state("payments"), "closed", "1 of 3 opened c");
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(f[1].ask("fail payments 4"), "open");
    let quorum = Instant::now();
    within(secs(3.0), "c opens under a 2-of-3 quorum", || {
        (f[2].state("payments") == "open").then_some(())
    });
    assert!(quorum.elapsed() <= secs(3.0));
    let log = f[2].log_text();
    assert!(
        log.contains("fleet quorum: 2 of 3 live instances open"),
        "{log}"
    );
    // A quorum-opened breaker does not vote: a still counts only b's vote, not c's echo.
    within(secs(3.0), "a sees c's quorum open as no vote", || {
        (f[0].ask("report c payments") == "open votes_open=false by_fleet=quorum").then_some(())
    });
    assert_eq!(f[0].ask("votes payments"), "votes=1 live=3");

    // c restarts mid-outage under the same id: it starts open, before it serves a call.
    f.pop();
    let c = Instance::start(&redis, "quo", "c");
    assert_eq!(
        c.joined, "joined open",
        "a restarted instance starts open under quorum"
    );
}

#[test]
fn killing_redis_leaves_calls_unaffected_and_the_fleet_resyncs_after_it_returns() {
    let Some(mut redis) = RedisServer::start("kill") else {
        return;
    };
    let mut f = fleet(&redis, "kil", &["a", "b"]);
    assert_eq!(f[0].ask("calls orders 2000"), "ok=2000 slow=0");
    let sent = Instant::now();
    assert_eq!(f[1].ask("send search force_open 3000 bob"), "sent");
    all_reach(&mut f, "search", "forced_open", secs(2.0));

    redis.kill();
    for i in &mut f {
        // Every call goes through at once, with Redis gone, while the task notices.
        assert_eq!(i.ask("calls orders 2000"), "ok=2000 slow=0", "on {}", i.id);
        within(secs(5.0), "the link shows down", || {
            i.ask("status").starts_with("link=down").then_some(())
        });
        assert_eq!(i.ask("calls orders 2000"), "ok=2000 slow=0", "on {}", i.id);
        assert_eq!(
            i.ask("send search reset 1000 bob").split(':').next(),
            Some("err the fleet is unreachable")
        );
    }
    // The override ends on each instance's own clock with Redis down.
    for at in all_reach(&mut f, "search", "closed", secs(6.0)) {
        let after = at - sent;
        assert!(
            after >= secs(2.7) && after <= secs(4.5),
            "expired after {after:?}, not 3 s"
        );
    }

    redis.restart();
    for i in &mut f {
        within(secs(10.0), &format!("{} resyncs", i.id), || {
            (i.ask("status") == "link=up live=2").then_some(())
        });
        let log = i.log_text();
        assert_eq!(
            log.matches("fleet link to Redis is down").count(),
            1,
            "one WARN per outage: {log}"
        );
        assert!(
            log.contains("fleet link to Redis is back; resynced"),
            "{log}"
        );
    }
    assert_eq!(f[0].ask("send search force_close 5000 carol"), "sent");
    all_reach(&mut f, "search", "forced_closed", secs(2.0));
}

#[test]
fn a_frozen_redis_leaves_calls_unaffected_and_the_link_recovers_when_it_answers_again() {
    let Some(redis) = RedisServer::start("frozen") else {
        return;
    };
    let mut f = fleet(&redis, "frz", &["a", "b"]);
    redis.freeze(true);
    for i in &mut f {
        assert_eq!(i.ask("calls orders 2000"), "ok=2000 slow=0", "on {}", i.id);
        // No error from the socket here: only the task's timeouts can tell.
        within(secs(5.0), "the link shows down", || {
            i.ask("status").starts_with("link=down").then_some(())
        });
        assert_eq!(i.ask("calls orders 2000"), "ok=2000 slow=0", "on {}", i.id);
    }
    redis.freeze(false);
    for i in &mut f {
        within(secs(10.0), &format!("{} resyncs", i.id), || {
            (i.ask("status") == "link=up live=2").then_some(())
        });
    }
    assert_eq!(f[1].ask("send search force_open 5000 dan"), "sent");
    all_reach(&mut f, "search", "forced_open", secs(2.0));
}

/// A fleet instance, run as a child by the tests above: it joins the fleet named by its
/// environment, prints `FLEET joined <state of payments>`, then answers one `FLEET ...` line
/// per command on stdin.
#[test]
#[ignore = "a fleet instance: run as a child process by this file's tests"]
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
    use fusebox::{registry, Breaker};
    use tokio::time::Instant;

    fn say(line: String) {
        println!("FLEET {line}");
    }

    pub async fn run(url: String, service: String, id: String) {
        tracing_subscriber::fmt()
            .with_writer(std::io::stderr)
            .with_ansi(false)
            .init();
        let payments = Breaker::builder("payments")
            .window_calls(4)
            .min_calls(4)
            .failure_rate(50)
            .open_for(Duration::from_secs(60))
            .build()
            .expect("payments");
        Breaker::builder("search").build().expect("search");
        Breaker::builder("orders").build().expect("orders");
        let config = FleetConfig::new(url, service, id.clone())
            .quorum("payments", 50, 3)
            .reconnect_max(Duration::from_millis(800));
        let fleet = fleet::join(config).await.expect("join");
        say(format!("joined {}", payments.state()));

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
            let b = |n: &str| registry().breaker(n).expect("a known breaker");
            let answer = match words.as_slice() {
                ["state", n] => b(n).state().to_string(),
                ["fail", n, k] => {
                    for _ in 0..k.parse::<u32>().unwrap_or(0) {
                        let _ = b(n).call(async { Err::<(), _>("down") }).await;
                    }
                    b(n).state().to_string()
                }
                // Calls on the hot path; "slow" counts any over 20 ms (a wait on Redis would be
                // hundreds of milliseconds: its timeouts are half a heartbeat).
                ["calls", n, k] => {
                    let (mut ok, mut slow) = (0, 0);
                    let breaker = b(n);
                    for _ in 0..k.parse::<u32>().unwrap_or(0) {
                        let t = Instant::now();
                        let r = breaker.call(async { Ok::<_, ()>(1) }).await;
                        ok += u32::from(r.is_ok());
                        slow += u32::from(t.elapsed() > Duration::from_millis(20));
                    }
                    format!("ok={ok} slow={slow}")
                }
                ["status"] => {
                    let s = fleet.status();
                    format!("link={} live={}", s.link.as_str(), s.live.len())
                }
                ["votes", n] => {
                    let v = fleet.view();
                    let others = v.instances.iter().filter(|r| r.instance != id);
                    let reports: Vec<_> = others
                        .filter_map(|r| r.breakers.iter().find(|b| b.name == *n))
                        .collect();
                    let votes = reports.iter().filter(|b| b.votes_open).count();
                    format!("votes={votes} live={}", reports.len() + 1)
                }
                ["report", who, n] => {
                    let v = fleet.view();
                    match v
                        .instances
                        .iter()
                        .find(|r| r.instance == *who)
                        .and_then(|r| r.breakers.iter().find(|b| b.name == *n))
                    {
                        Some(b) => format!(
                            "{} votes_open={} by_fleet={}",
                            b.state,
                            b.votes_open,
                            b.by_fleet.as_deref().unwrap_or("none")
                        ),
                        None => "none".into(),
                    }
                }
                ["overrides"] => fleet
                    .status()
                    .overrides
                    .iter()
                    .map(|o| format!("{}:{}:{}", o.breaker, o.action.as_str(), o.by))
                    .collect::<Vec<_>>()
                    .join(","),
                ["send", n, action, ms, by] => {
                    let action = action.parse().expect("an action");
                    let for_ = Duration::from_millis(ms.parse().unwrap_or(1000));
                    match fleet.send(n, action, for_, by).await {
                        Ok(()) => "sent".into(),
                        Err(e) => format!("err {e}"),
                    }
                }
                _ => format!("unknown command {line}"),
            };
            say(answer);
        }
    }
}
