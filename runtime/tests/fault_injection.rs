//! Fault injection over real TCP on loopback: a small line-protocol dependency that the test
//! stops, restarts cold (slow until it has served K requests) and slows down, called through a
//! breaker. The breaker must open, serve the fallback, and close again after recovery:
//! half-open samples a share of traffic with a trial timeout longer than the normal one, so a
//! cold dependency warms up instead of being judged dead on one slow call.
//!
//! The breaker is built with the builder API (the attribute macros wrap the same `run`).
//! Real sockets need real time, so durations are short (timeouts of 100 ms, open for 200 ms);
//! conditions are reached by making calls at a steady rate, never by sleeping for them, and
//! every phase and the whole test are bounded in time.
// tokio has no `net` under `--cfg loom`.
#![cfg(not(loom))]

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use std::sync::Arc;
use std::time::Duration;

use fusebox_runtime::{Breaker, Error, Rejection, State};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::{JoinHandle, JoinSet};
use tokio::time::{interval, sleep, timeout, Instant};

const MS: Duration = Duration::from_millis(1);

/// How the dependency behaves; read by every connection at each request.
#[derive(Default)]
struct Ctl {
    delay_ms: AtomicU64,
    /// Requests still to be served slowly after a cold start.
    cold_left: AtomicU64,
    cold_delay_ms: AtomicU64,
    served: AtomicU64,
}

/// The dependency: answers each `get` line with `ok` after the current delay.
struct Dependency {
    addr: SocketAddr,
    ctl: Arc<Ctl>,
    server: Option<JoinHandle<()>>,
}

impl Dependency {
    async fn start() -> Dependency {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let ctl = Arc::new(Ctl::default());
        let server = Some(tokio::spawn(serve(listener, ctl.clone())));
        Dependency { addr, ctl, server }
    }

    /// Closes the listener and every connection: calls now fail to connect.
    async fn stop(&mut self) {
        if let Some(s) = self.server.take() {
            s.abort();
            let _ = s.await;
        }
    }

    /// Starts again on the same port, slow for the next `k` requests.
    async fn restart_cold(&mut self, k: u64, cold: Duration) {
        self.ctl.cold_left.store(k, SeqCst);
        self.ctl
            .cold_delay_ms
            .store(cold.as_millis() as u64, SeqCst);
        let listener = TcpListener::bind(self.addr).await.unwrap();
        self.server = Some(tokio::spawn(serve(listener, self.ctl.clone())));
    }

    fn set_delay(&self, d: Duration) {
        self.ctl.delay_ms.store(d.as_millis() as u64, SeqCst);
    }

    fn served(&self) -> u64 {
        self.ctl.served.load(SeqCst)
    }
}

async fn serve(listener: TcpListener, ctl: Arc<Ctl>) {
    // Owned here, so aborting the server also drops every open connection.
    let mut conns = JoinSet::new();
    loop {
        tokio::select! {
            Ok((s, _)) = listener.accept() => { conns.spawn(answer(s, ctl.clone())); }
            Some(_) = conns.join_next(), if !conns.is_empty() => {}
        }
    }
}

async fn answer(s: TcpStream, ctl: Arc<Ctl>) -> std::io::Result<()> {
    let (r, mut w) = s.into_split();
    let mut lines = BufReader::new(r).lines();
    while let Some(_req) = lines.next_line().await? {
        let cold = ctl.cold_left.load(SeqCst) > 0;
        let ms = if cold {
            ctl.cold_delay_ms.load(SeqCst)
        } else {
            ctl.delay_ms.load(SeqCst)
        };
        sleep(Duration::from_millis(ms)).await;
        // Serving is what warms it up, whether or not the client is still waiting.
        ctl.served.fetch_add(1, SeqCst);
        let _ = ctl
            .cold_left
            .fetch_update(SeqCst, SeqCst, |k| k.checked_sub(1));
        w.write_all(b"ok\n").await?;
    }
    Ok(())
}

/// The client: one request per connection.
async fn fetch(addr: SocketAddr) -> std::io::Result<String> {
    let mut s = TcpStream::connect(addr).await?;
    s.write_all(b"get\n").await?;
    let mut line = String::new();
    BufReader::new(s).read_line(&mut line).await?;
    match line.trim_end() {
        "" => Err(std::io::ErrorKind::UnexpectedEof.into()),
        l => Ok(l.to_owned()),
    }
}

/// What the caller got.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Got {
    Answer,
    /// The breaker refused: the fallback answered.
    Fallback,
    /// The call ran and failed (refused connection, timeout): the fallback answered too.
    Failed,
}

fn fallback(e: &Error<std::io::Error>) -> Got {
    match e {
        Error::Rejected(Rejection::Open { .. }) => Got::Fallback,
        _ => Got::Failed,
    }
}

async fn lookup(b: &Breaker, addr: SocketAddr) -> Got {
    match b.call(fetch(addr)).await {
        Ok(_) => Got::Answer,
        Err(e) => fallback(&e),
    }
}

/// Sends a call every 10 ms, each on its own task, until the breaker is in `want` (checked
/// between calls) or `max` calls were made; returns what the callers got.
async fn traffic_until(b: &Breaker, addr: SocketAddr, want: State, max: usize) -> Vec<Got> {
    let mut tick = interval(10 * MS);
    let mut calls = JoinSet::new();
    for _ in 0..max {
        if b.state() == want {
            break;
        }
        tick.tick().await;
        let b = b.clone();
        calls.spawn(async move { lookup(&b, addr).await });
    }
    calls.join_all().await
}

fn breaker(name: &str) -> Breaker {
    Breaker::builder(name)
        .window_calls(10)
        .min_calls(5)
        .failure_rate(50)
        .timeout(100 * MS)
        .open_for(200 * MS)
        .half_open_pct(50)
        .half_open_window(300 * MS)
        // Longer than a cold answer (250 ms): trials let the dependency warm up.
        .half_open_timeout(Duration::from_secs(1))
        .build_detached()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn breaker_opens_on_an_outage_serves_the_fallback_and_closes_after_a_cold_restart() {
    let test = async {
        let mut dep = Dependency::start().await;
        let b = breaker("fault-cold-restart");
        for _ in 0..10 {
            assert_eq!(lookup(&b, dep.addr).await, Got::Answer);
        }
        assert_eq!(b.state(), State::Closed);

        dep.stop().await;
        let got = traffic_until(&b, dep.addr, State::Open, 100).await;
        assert_eq!(b.state(), State::Open, "the outage opens the breaker");
        assert!(got.contains(&Got::Failed));
        let served = dep.served();
        assert_eq!(lookup(&b, dep.addr).await, Got::Fallback);
        assert_eq!(
            dep.served(),
            served,
            "an open breaker does not call the dependency"
        );

        dep.restart_cold(5, 250 * MS).await;
        let started = Instant::now();
        let got = traffic_until(&b, dep.addr, State::Closed, 400).await;
        assert_eq!(
            b.state(),
            State::Closed,
            "recovered after the cold start: {got:?}"
        );
        assert!(dep.served() >= 5, "the trials warmed the dependency up");
        assert!(
            got.contains(&Got::Fallback),
            "the rest of the traffic got the fallback"
        );
        let recovery = started.elapsed();
        assert!(
            recovery < Duration::from_secs(3),
            "recovery took {recovery:?}"
        );
        for _ in 0..10 {
            assert_eq!(lookup(&b, dep.addr).await, Got::Answer);
        }
        assert_eq!(b.metrics().cancelled, 0);
    };
    timeout(Duration::from_secs(20), test)
        .await
        .expect("fault injection test bounded in time");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn breaker_opens_on_a_slow_dependency_and_closes_when_it_is_fast_again() {
    let test = async {
        let dep = Dependency::start().await;
        let b = breaker("fault-slow-down");
        assert_eq!(lookup(&b, dep.addr).await, Got::Answer);

        dep.set_delay(300 * MS);
        let got = traffic_until(&b, dep.addr, State::Open, 100).await;
        assert_eq!(b.state(), State::Open, "timeouts open the breaker: {got:?}");
        assert!(b.metrics().timed_out >= 5);

        dep.set_delay(Duration::ZERO);
        traffic_until(&b, dep.addr, State::Closed, 300).await;
        assert_eq!(b.state(), State::Closed);
        assert_eq!(lookup(&b, dep.addr).await, Got::Answer);
    };
    timeout(Duration::from_secs(20), test)
        .await
        .expect("fault injection test bounded in time");
}
