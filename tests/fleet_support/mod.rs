//! Real processes for the fleet tests: a `redis-server` on a free loopback port in a temp
//! dir, and fleet instances that are this test binary re-run as a child (`fleet_child`).
//!
//! Everything here runs on real time against real processes: every wait has a deadline
//! and polls; nothing sleeps to wait for something.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// A `redis-server` of our own, stopped (and its directory removed) on drop.
pub struct RedisServer {
    child: Option<Child>,
    pub port: u16,
    pub dir: PathBuf,
}

impl RedisServer {
    /// Starts one, or `None` when `redis-server` is not installed (outside CI: the test is
    /// skipped with a note). In CI (`CI` set) a missing server fails the test.
    pub fn start(tag: &str) -> Option<RedisServer> {
        if Command::new("redis-server")
            .arg("--version")
            .stdout(Stdio::null())
            .status()
            .is_err()
        {
            let msg = "redis-server is not installed (Debian: apt-get install redis-server; .ci/run installs it)";
            if std::env::var_os("CI").is_some() {
                panic!("{msg}");
            }
            eprintln!("skipped: {msg}");
            return None;
        }
        let port = free_port();
        let dir =
            std::env::temp_dir().join(format!("fusebox-fleet-{tag}-{}-{port}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let mut s = RedisServer {
            child: None,
            port,
            dir,
        };
        s.restart();
        Some(s)
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    /// Starts the server (again) on the same port, empty: no persistence.
    pub fn restart(&mut self) {
        assert!(self.child.is_none(), "already running");
        let child = Command::new("redis-server")
            .args(["--port", &self.port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no", "--protected-mode", "no"])
            .arg("--dir")
            .arg(&self.dir)
            .arg("--logfile")
            .arg(self.dir.join("redis.log"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .spawn()
            .expect("spawn redis-server");
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(10);
        while !self.ping() {
            assert!(
                Instant::now() < deadline,
                "redis-server did not answer PING in 10 s"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn ping(&self) -> bool {
        let Ok(mut s) = TcpStream::connect(("127.0.0.1", self.port)) else {
            return false;
        };
        let _ = s.set_read_timeout(Some(Duration::from_millis(500)));
        let mut buf = [0u8; 7];
        s.write_all(b"PING\r\n").is_ok() && s.read_exact(&mut buf).is_ok() && &buf == b"+PONG\r\n"
    }

    /// SIGSTOP (`true`) or SIGCONT: a server that holds its connections and answers nothing,
    /// the way a partition or a stalled Redis looks to a client.
    pub fn freeze(&self, frozen: bool) {
        let pid = self.child.as_ref().expect("running").id().to_string();
        let signal = if frozen { "-STOP" } else { "-CONT" };
        let ok = Command::new("kill")
            .args([signal, &pid])
            .status()
            .expect("kill(1)");
        assert!(ok.success(), "kill {signal} {pid}");
    }

    /// SIGKILL: no goodbye to the clients.
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.kill();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// `redis-cli -p <port> <args...>` against `redis`: what the Redis's operator does (a
/// `CONFIG SET` of a password or of `min-replicas-to-write`, say). Fails the test if the
/// command fails; its output is dropped.
pub fn redis_cli(redis: &RedisServer, args: &[&str]) {
    let ok = Command::new("redis-cli")
        .args(["-p", &redis.port.to_string()])
        .args(args)
        .stdout(Stdio::null())
        .status()
        .expect("redis-cli");
    assert!(ok.success(), "redis-cli {args:?}");
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free loopback port")
}

/// A loopback URL nothing listens on (bound, then released): every connection is refused.
pub fn refused_url() -> String {
    format!("redis://127.0.0.1:{}/", free_port())
}

/// A server that accepts every connection and never answers: a Redis hung before its first
/// reply, as a client sees it. Its connections are held until it is dropped.
pub struct BlackHole {
    pub port: u16,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl BlackHole {
    pub fn start() -> BlackHole {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("addr").port();
        listener.set_nonblocking(true).expect("nonblocking");
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let done = stop.clone();
        std::thread::spawn(move || {
            let mut held = Vec::new();
            // Polls accept: a blocking accept could not see `stop` and would outlive the test.
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                match listener.accept() {
                    Ok((s, _)) => held.push(s),
                    Err(_) => std::thread::sleep(Duration::from_millis(5)),
                }
            }
        });
        BlackHole { port, stop }
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }
}

impl Drop for BlackHole {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
    }
}

/// One fleet instance: a child process that joined the fleet and answers commands on stdin
/// with one `FLEET ...` line on stdout each (see `fleet_child` in tests/fleet.rs).
pub struct Instance {
    pub id: String,
    child: Child,
    stdin: ChildStdin,
    lines: mpsc::Receiver<String>,
    pub log: PathBuf,
    /// What it printed right after `join` returned: `joined <state of payments>`.
    pub joined: String,
}

impl Instance {
    pub fn start(redis: &RedisServer, service: &str, id: &str) -> Instance {
        let log = redis.dir.join(format!("{id}-{}.log", now_ns()));
        let mut child = Command::new(std::env::current_exe().expect("test binary"))
            .args([
                "fleet_child",
                "--exact",
                "--ignored",
                "--nocapture",
                "--test-threads=1",
            ])
            .env("FUSEBOX_FLEET_CHILD", "1")
            .env("FLEET_URL", redis.url())
            .env("FLEET_SERVICE", service)
            .env("FLEET_INSTANCE", id)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&log).expect("log file"))
            .spawn()
            .expect("spawn fleet instance");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                // libtest's own "test fleet_child ... " may precede the first line.
                if let Some(at) = line.find("FLEET ") {
                    if tx.send(line[at + 6..].to_owned()).is_err() {
                        break;
                    }
                }
            }
        });
        let mut i = Instance {
            id: id.to_owned(),
            child,
            stdin,
            lines,
            log,
            joined: String::new(),
        };
        i.joined = i.next_line("join");
        i
    }

    fn next_line(&mut self, what: &str) -> String {
        match self.lines.recv_timeout(Duration::from_secs(15)) {
            Ok(l) => l,
            Err(_) => panic!(
                "instance {} gave no answer to `{what}` in 15 s; its log:\n{}",
                self.id,
                std::fs::read_to_string(&self.log).unwrap_or_default()
            ),
        }
    }

    /// Sends one command and returns its answer.
    pub fn ask(&mut self, cmd: &str) -> String {
        writeln!(self.stdin, "{cmd}").expect("instance stdin");
        self.stdin.flush().expect("flush");
        self.next_line(cmd)
    }

    pub fn state(&mut self, breaker: &str) -> String {
        self.ask(&format!("state {breaker}"))
    }

    /// This instance's stderr (its tracing output) so far.
    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn now_ns() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0)
}

/// Polls `probe` every 25 ms until it returns `Some`, or fails with `what` after `limit`.
pub fn within<T>(limit: Duration, what: &str, mut probe: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(v) = probe() {
            return v;
        }
        assert!(Instant::now() < deadline, "not within {limit:?}: {what}");
        std::thread::sleep(Duration::from_millis(25));
    }
}

/// One fleet per process: each test that joins one holds this while it is joined.
pub fn turn() -> std::sync::MutexGuard<'static, ()> {
    static TURN: std::sync::Mutex<()> = std::sync::Mutex::new(());
    TURN.lock().unwrap_or_else(|e| e.into_inner())
}

/// A two-worker runtime of its own for one fleet test (real time, real sockets).
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime")
}

/// The cause inside a `LinkDown`, or a failure naming what came instead.
pub fn link_down<T: std::fmt::Debug>(
    r: Result<T, fusebox::fleet::FleetError>,
) -> fusebox::fleet::LinkFault {
    match r {
        Err(fusebox::fleet::FleetError::LinkDown { cause }) => cause,
        other => panic!("expected FleetError::LinkDown, got {other:?}"),
    }
}
