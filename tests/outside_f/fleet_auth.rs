//! Issue 21: fleet mode on Redis, behind a password (the "auth").

use super::*;
use fleet_support::redis_cli;

/// A Redis with `requirepass`: the right password in the URL joins and carries an override;
/// a wrong one leaves the instance on its own judgement, the link not up, the reason said
/// (the password itself never), and a send refused as link down.
#[test]
fn a_fleet_behind_a_redis_password_works_with_it_and_says_why_without_it() {
    use fleet_support::{link_down, runtime, turn, within, RedisServer};
    use fusebox::fleet::{self, FleetConfig, LinkState};
    const PASSWORD: &str = "of-s3cret-pass";

    let _turn = turn();
    let Some(redis) = RedisServer::start("of-auth") else {
        return;
    };
    redis_cli(&redis, &["CONFIG", "SET", "requirepass", PASSWORD]);
    let rt = runtime();
    let b = Breaker::builder("of-auth-pay").build().unwrap();

    let wrong = format!("redis://:not-the-password@127.0.0.1:{}/", redis.port);
    let fleet = rt
        .block_on(fleet::join(
            FleetConfig::new(wrong, "ofauth", "pod-1").heartbeat(ms(200)),
        ))
        .expect("an unreachable fleet is not an error");
    let status = within(secs(5), "the link down with its reason", || {
        let s = fleet.status();
        (s.link == LinkState::Down && s.last_error.is_some()).then_some(s)
    });
    let reason = status.last_error.unwrap();
    assert!(
        !reason.contains("not-the-password"),
        "the password stays out of the status: {reason}"
    );
    assert!(
        reason.to_lowercase().contains("auth") || reason.contains("WRONGPASS"),
        "says it is the password: {reason}"
    );
    link_down(rt.block_on(fleet.force_open("of-auth-pay", secs(60), "alice")));
    assert_eq!(
        b.state(),
        State::Closed,
        "calls go on, on its own judgement"
    );
    rt.block_on(fleet.leave());

    let right = format!("redis://:{PASSWORD}@127.0.0.1:{}/", redis.port);
    let fleet = rt
        .block_on(fleet::join(
            FleetConfig::new(right, "ofauth", "pod-1").heartbeat(ms(200)),
        ))
        .unwrap();
    within(secs(5), "the link up", || {
        (fleet.status().link == LinkState::Up).then_some(())
    });
    rt.block_on(fleet.force_open("of-auth-pay", secs(60), "alice"))
        .unwrap();
    within(secs(2), "the override applied", || {
        (b.state() == State::ForcedOpen).then_some(())
    });
    assert!(fleet.status().live.contains(&"pod-1".to_owned()));
    rt.block_on(fleet.leave());
    assert_eq!(b.state(), State::Closed, "lifted on leave");
}

/// A `redis-server` that speaks TLS only, with a self-signed certificate for 127.0.0.1 made by
/// `openssl`; stopped (and its directory removed) on drop.
struct TlsRedis {
    child: std::process::Child,
    port: u16,
    dir: std::path::PathBuf,
}

impl TlsRedis {
    /// `None` (the test skips, loudly, outside CI) without openssl or a TLS-capable server.
    fn start(password: &str) -> Option<TlsRedis> {
        use std::process::{Command, Stdio};
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let dir =
            std::env::temp_dir().join(format!("fusebox-of-tls-{}-{port}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        // A CA of the test's own and a leaf for 127.0.0.1 it signs (rustls refuses a CA
        // certificate used as the server's own).
        std::fs::write(
            dir.join("leaf.ext"),
            "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\n",
        )
        .unwrap();
        let openssl = |args: &[&str]| {
            Command::new("openssl")
                .args(args)
                .current_dir(&dir)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        };
        let made = openssl(&[
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "2",
            "-keyout",
            "ca.key",
            "-out",
            "ca.pem",
            "-subj",
            "/CN=fusebox outside_f test CA",
        ]) && openssl(&[
            "req",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            "key.pem",
            "-out",
            "leaf.csr",
            "-subj",
            "/CN=127.0.0.1",
        ]) && openssl(&[
            "x509",
            "-req",
            "-in",
            "leaf.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-days",
            "2",
            "-out",
            "cert.pem",
            "-extfile",
            "leaf.ext",
        ]);
        let skip = |msg: &str| {
            assert!(std::env::var_os("CI").is_none(), "{msg}");
            eprintln!("skipped: {msg}");
            None
        };
        if !made {
            return skip("openssl could not make a certificate");
        }
        let child = Command::new("redis-server")
            .args([
                "--port",
                "0",
                "--tls-port",
                &port.to_string(),
                "--bind",
                "127.0.0.1",
            ])
            .args(["--tls-cert-file", "cert.pem", "--tls-key-file", "key.pem"])
            .args(["--tls-ca-cert-file", "ca.pem", "--tls-auth-clients", "no"])
            .args([
                "--requirepass",
                password,
                "--save",
                "",
                "--appendonly",
                "no",
            ])
            .args(["--logfile", "redis.log"])
            .current_dir(&dir)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .spawn();
        let Ok(child) = child else {
            return skip("redis-server is not installed");
        };
        let server = TlsRedis { child, port, dir };
        let deadline = std::time::Instant::now() + secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            if std::time::Instant::now() > deadline {
                return skip("redis-server did not listen with TLS within 10 s");
            }
            std::thread::sleep(ms(20));
        }
        Some(server)
    }

    /// The CA that signed the server's certificate.
    fn ca(&self) -> std::path::PathBuf {
        self.dir.join("ca.pem")
    }
}

impl Drop for TlsRedis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// `rediss://` for real: a server whose certificate the process does not trust is link down
/// with the certificate named as the reason (no panic for want of a crypto provider); once the
/// certificate is trusted (`SSL_CERT_FILE`, read by the platform's verifier), the same URL
/// with its password joins and carries an override.
#[test]
fn a_fleet_over_rediss_checks_the_certificate_and_works_once_it_is_trusted() {
    use fleet_support::{runtime, turn, within};
    use fusebox::fleet::{self, FleetConfig, LinkState};
    const PASSWORD: &str = "of-tls-s3cret";

    let _turn = turn();
    let Some(redis) = TlsRedis::start(PASSWORD) else {
        return;
    };
    let rt = runtime();
    let b = Breaker::builder("of-tls-pay").build().unwrap();
    let url = format!("rediss://:{PASSWORD}@127.0.0.1:{}/", redis.port);

    let fleet = rt
        .block_on(fleet::join(
            FleetConfig::new(url.clone(), "oftls", "pod-1").heartbeat(ms(200)),
        ))
        .expect("an unreachable fleet is not an error");
    let reason = within(secs(5), "the link down with its reason", || {
        let s = fleet.status();
        (s.link == LinkState::Down)
            .then_some(s.last_error)
            .flatten()
    });
    assert!(
        reason.to_lowercase().contains("certificate"),
        "says it is the certificate: {reason}"
    );
    assert!(!reason.contains(PASSWORD), "{reason}");
    rt.block_on(fleet.leave());

    std::env::set_var("SSL_CERT_FILE", redis.ca());
    let joined = rt.block_on(fleet::join(
        FleetConfig::new(url, "oftls", "pod-1").heartbeat(ms(200)),
    ));
    let up = joined.map(|fleet| {
        let up = (0..200).any(|_| {
            std::thread::sleep(ms(25));
            fleet.status().link == LinkState::Up
        });
        (fleet, up)
    });
    std::env::remove_var("SSL_CERT_FILE");
    let (fleet, up) = up.unwrap();
    assert!(up, "link up over TLS: {:?}", fleet.status());
    rt.block_on(fleet.force_open("of-tls-pay", secs(60), "alice"))
        .unwrap();
    within(secs(2), "the override applied", || {
        (b.state() == State::ForcedOpen).then_some(())
    });
    rt.block_on(fleet.leave());
    assert_eq!(b.state(), State::Closed);
}
