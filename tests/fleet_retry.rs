//! `retry_after` in fleet mode, against a real `redis-server`: a hint one instance reads holds
//! the breaker open on every instance (the IP-ban case: every instance must stop, not one),
//! until the time the dependency gave, and then each is back to its own judgement.
//!
//! Each instance is this test binary re-run as a child (`fleet_child`, as in `fleet.rs`).
//! Real processes run on real time: every wait below has a deadline and polls.
#![cfg(feature = "redis")]

mod fleet_support;

use std::time::{Duration, Instant};

use fleet_support::{within, Instance, RedisServer};

#[test]
fn a_retry_after_read_on_one_instance_holds_the_breaker_open_on_every_instance() {
    let Some(redis) = RedisServer::start("retry-after") else {
        return;
    };
    let mut a = Instance::start(&redis, "ban", "a");
    let mut b = Instance::start(&redis, "ban", "b");
    for i in [&mut a, &mut b] {
        within(Duration::from_secs(10), "both instances live", || {
            (i.ask("status") == "link=up live=2").then_some(())
        });
        assert_eq!(i.state("partner"), "closed");
    }

    // `a` is told: no calls for 4 s.
    let told = Instant::now();
    assert_eq!(a.ask("call 4000"), "busy");
    assert_eq!(
        a.state("partner"),
        "forced_open",
        "held at once where it was read"
    );
    within(Duration::from_secs(3), "`b` holds it too", || {
        (b.state("partner") == "forced_open").then_some(())
    });
    assert!(told.elapsed() < Duration::from_secs(3));
    // `b` never called the dependency and still refuses it.
    assert_eq!(b.ask("call 4000"), "refused");
    assert!(
        b.ask("overrides")
            .starts_with("partner:force_open:retry_after@a"),
        "the fleet override names the hint's instance"
    );
    assert_eq!(
        b.ask("held"),
        "0",
        "the hold is counted where the hint was read"
    );
    assert_eq!(a.ask("held"), "1");

    // After the 4 s, both are back to their own judgement (half-open or closed: not forced).
    for i in [&mut a, &mut b] {
        within(Duration::from_secs(8), "the hold lapses", || {
            (i.state("partner") != "forced_open").then_some(())
        });
    }
    assert!(
        told.elapsed() >= Duration::from_millis(3900),
        "held until the time given"
    );
}

/// A fleet instance, run as a child by the test above: it joins the fleet named by its
/// environment, prints `FLEET joined ..`, then answers one `FLEET ...` line per command.
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
    use fusebox::{breaker, registry, retry, Rejection};

    #[derive(Debug)]
    pub enum ApiError {
        /// HTTP 429 with `Retry-After` in milliseconds.
        TooMany(u64),
        Refused,
    }

    impl From<Rejection> for ApiError {
        fn from(_: Rejection) -> Self {
            ApiError::Refused
        }
    }

    fn after(e: &ApiError) -> Option<Duration> {
        match e {
            ApiError::TooMany(ms) => Some(Duration::from_millis(*ms)),
            ApiError::Refused => None,
        }
    }

    /// The partner API answers 429 with the given `Retry-After`.
    #[retry(attempts = 1, retry_after = after)]
    #[breaker(name = "partner", open_for = "30s")]
    async fn partner(ms: u64) -> Result<u32, ApiError> {
        Err(ApiError::TooMany(ms))
    }

    fn say(line: String) {
        println!("FLEET {line}");
    }

    pub async fn run(url: String, service: String, id: String) {
        tracing_subscriber::fmt()
            .with_writer(std::io::stderr)
            .with_ansi(false)
            .init();
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
                ["state", n] => registry()
                    .breaker(n)
                    .map_or("none".into(), |b| b.metrics().state.to_string()),
                ["call", ms] => match partner(ms.parse().unwrap_or(1000)).await {
                    Ok(_) => "ok".into(),
                    Err(ApiError::TooMany(_)) => "busy".into(),
                    Err(ApiError::Refused) => "refused".into(),
                },
                ["held"] => fusebox::metrics()
                    .retry("partner")
                    .map_or(0, |r| r.held_open)
                    .to_string(),
                ["status"] => {
                    let s = fleet.status();
                    format!("link={} live={}", s.link.as_str(), s.live.len())
                }
                ["overrides"] => fleet
                    .status()
                    .overrides
                    .iter()
                    .map(|o| format!("{}:{}:{}", o.breaker, o.action.as_str(), o.by))
                    .collect::<Vec<_>>()
                    .join(","),
                _ => format!("unknown command {line}"),
            };
            say(answer);
        }
    }
}
