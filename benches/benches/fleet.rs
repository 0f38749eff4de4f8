//! The closed path with fleet mode joined vs not: joining must not change a call's cost.
//!
//! `cargo bench -p fusebox-benches --features fleet --bench fleet`. With `redis-server`
//! installed the bench starts one on a free loopback port and the fleet task heartbeats
//! against it every 50 ms (20 times the default rate, to make any interference visible);
//! without it the task runs its reconnect loop against a closed port instead.

use std::process::{Child, Command, Stdio};
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use fusebox::fleet::{self, FleetConfig};
use fusebox_benches::{block_on, dependency};
use fusebox_runtime::Breaker;

/// A throwaway `redis-server`, killed on drop.
struct Server(Option<Child>);

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(c) = self.0.as_mut() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

fn redis() -> (Server, String) {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port");
    let child = Command::new("redis-server")
        .args([
            "--port",
            &port.to_string(),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
        ])
        .args(["--appendonly", "no"])
        .stdout(Stdio::null())
        .spawn()
        .ok();
    if child.is_none() {
        eprintln!("redis-server not installed: joining a closed port (reconnect loop running)");
    } else {
        // Listening takes a moment; the bench's own wait, bounded.
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err()
            && std::time::Instant::now() < deadline
        {
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    (Server(child), format!("redis://127.0.0.1:{port}/"))
}

fn closed_fleet(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("runtime");
    let _in_runtime = rt.enter();
    let b = Breaker::builder("bench-fleet")
        .build()
        .expect("valid settings");
    let mut i = 0u64;
    let mut next = move || {
        i = i.wrapping_add(1);
        i
    };
    let mut g = c.benchmark_group("closed_fleet");
    g.bench_function("Breaker::call, not joined", |bench| {
        bench.iter(|| block_on(b.call(dependency(next(), false))))
    });
    let (_server, url) = redis();
    let config = FleetConfig::new(url, "bench", "bench-1")
        .heartbeat(Duration::from_millis(50))
        .ttl(Duration::from_millis(500));
    let joined = rt
        .block_on(fleet::join(config))
        .expect("valid fleet settings");
    eprintln!("fleet link: {}", joined.status().link.as_str());
    g.bench_function("Breaker::call, fleet joined", |bench| {
        bench.iter(|| block_on(b.call(dependency(next(), false))))
    });
    g.finish();
    drop(joined);
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    targets = closed_fleet
}
criterion_main!(benches);
