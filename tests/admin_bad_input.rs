//! Bad input to the admin router over raw HTTP on loopback: malformed paths, bad tokens, huge
//! bodies and garbage requests are answered with a 4xx (or refused by the HTTP layer), never a
//! panic, and the server goes on answering (issue 7). Raw bytes, because a real client refuses to
//! send most of these. Every request is bounded by a timeout; nothing sleeps to wait.
#![cfg(feature = "admin")]

use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::time::Duration;

use std::io::{Read, Write};
use std::net::TcpStream;

const TOKEN: &str = "t0ken-for-bad-input";

static PANICS: AtomicUsize = AtomicUsize::new(0);

/// Counts every panic in this test binary (a handler's panic would only drop its connection).
fn count_panics() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            PANICS.fetch_add(1, SeqCst);
            default(info);
        }));
    });
}

async fn serve() -> std::net::SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let app = fusebox::admin::router(TOKEN).unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    addr
}

/// Sends raw bytes, then reads the answer to the end; the status code, or `None` when the
/// server closed without answering. Blocking std sockets (on a blocking thread) with 10 s
/// timeouts: the server runs on the test's runtime meanwhile.
async fn raw(addr: std::net::SocketAddr, request: &[u8]) -> Option<u16> {
    let request = request.to_vec();
    let answer = tokio::task::spawn_blocking(move || {
        let mut s = TcpStream::connect(addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        s.set_write_timeout(Some(Duration::from_secs(10))).unwrap();
        // The server may answer and close before reading everything: a failed write is fine.
        let _ = s.write_all(&request);
        let mut answer = Vec::new();
        let mut buf = [0u8; 4096];
        loop {
            match s.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => answer.extend_from_slice(&buf[..n]),
                Err(e)
                    if e.kind() == std::io::ErrorKind::WouldBlock
                        || e.kind() == std::io::ErrorKind::TimedOut =>
                {
                    panic!("no answer within 10 s")
                }
                Err(_) => break,
            }
            if answer.len() > 1 << 20 {
                break;
            }
        }
        answer
    })
    .await
    .expect("the server answers or closes within 10 s");
    let text = String::from_utf8_lossy(&answer);
    let status = text.strip_prefix("HTTP/1.1 ")?.get(..3)?;
    status.parse().ok()
}

fn get(path: &str, auth: Option<&[u8]>) -> Vec<u8> {
    let mut r = format!("GET {path} HTTP/1.1\r\nhost: x\r\nconnection: close\r\n").into_bytes();
    if let Some(a) = auth {
        r.extend_from_slice(b"authorization: ");
        r.extend_from_slice(a);
        r.extend_from_slice(b"\r\n");
    }
    r.extend_from_slice(b"\r\n");
    r
}

fn bearer() -> Vec<u8> {
    format!("Bearer {TOKEN}").into_bytes()
}

async fn still_answers(addr: std::net::SocketAddr) {
    assert_eq!(
        raw(addr, &get("/breakers", Some(&bearer()))).await,
        Some(200)
    );
}

#[tokio::test]
async fn malformed_paths_are_client_errors() {
    count_panics();
    let addr = serve().await;
    let long = format!("/breakers/{}", "a".repeat(60_000));
    let paths = [
        "/breakers/%zz",
        "/breakers/%",
        "/breakers/%FF%FE",
        "/breakers/%00",
        "/breakers/%2e%2e/%2e%2e/etc/passwd",
        "/breakers/../../etc/passwd",
        "/breakers//",
        "/breakers/x/open/extra/segments",
        "////",
        "/breakers/%F0%9F%92%A3",
        "*",
        long.as_str(),
    ];
    for path in paths {
        let status = raw(addr, &get(path, Some(&bearer()))).await;
        if let Some(s) = status {
            assert!((400..500).contains(&s), "{path:.60}: {s}");
        }
        still_answers(addr).await;
    }
    assert_eq!(PANICS.load(SeqCst), 0);
}

#[tokio::test]
async fn bad_tokens_are_refused_with_401() {
    count_panics();
    let addr = serve().await;
    let long = format!("Bearer {}", "t".repeat(16_000));
    let wrong: [&[u8]; 11] = [
        b"Bearer wrong",
        b"Bearer",
        b"Bearer ",
        b"bearer t0ken-for-bad-input-but-longer",
        b"Basic dDBrZW46",
        b"Bearer t0ken-for-bad-inpu",
        b"Bearer t0ken-for-bad-input-extra",
        b"Bearer \xff\xfe\xfd",
        b"Bearer  t0ken-for-bad-input ",
        b"\x7f",
        long.as_bytes(),
    ];
    for auth in wrong {
        let status = raw(addr, &get("/breakers", Some(auth))).await;
        match status {
            Some(401) => {}
            // The HTTP layer may refuse a header it cannot parse or that is too large.
            Some(s) if (400..500).contains(&s) => {}
            other => panic!("{:?}: {other:?}", String::from_utf8_lossy(auth)),
        }
        still_answers(addr).await;
    }
    assert_eq!(raw(addr, &get("/breakers", None)).await, Some(401));
    let twice = b"GET /breakers HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\
        authorization: Bearer wrong\r\nauthorization: Bearer t0ken-for-bad-input\r\n\r\n";
    let s = raw(addr, twice).await;
    assert!(s.is_none_or(|s| s != 200 && s < 500), "{s:?}");
    assert_eq!(PANICS.load(SeqCst), 0);
}

#[tokio::test]
async fn huge_bodies_and_garbage_requests_do_not_hurt_the_server() {
    count_panics();
    let addr = serve().await;
    let auth = format!("authorization: Bearer {TOKEN}\r\n");
    let mut huge = format!(
        "POST /breakers/admin-bad-input/reset HTTP/1.1\r\nhost: x\r\n{auth}\
         content-length: 1000000000\r\nconnection: close\r\n\r\n"
    )
    .into_bytes();
    huge.extend(std::iter::repeat_n(b'x', 256 * 1024));
    let mut chunked = format!(
        "POST /breakers/admin-bad-input/open HTTP/1.1\r\nhost: x\r\n{auth}\
         transfer-encoding: chunked\r\nconnection: close\r\n\r\n"
    )
    .into_bytes();
    for _ in 0..64 {
        chunked.extend_from_slice(b"1000\r\n");
        chunked.extend(std::iter::repeat_n(b'y', 0x1000));
        chunked.extend_from_slice(b"\r\n");
    }
    let requests: Vec<Vec<u8>> = vec![
        huge,
        chunked,
        b"\x00\x01\x02garbage\r\n\r\n".to_vec(),
        b"GET\r\n\r\n".to_vec(),
        b"GET /breakers HTTP/9.9\r\n\r\n".to_vec(),
        b"BREW /breakers HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n".to_vec(),
        format!(
            "GET /breakers HTTP/1.1\r\nhost: x\r\nconnection: close\r\n{auth}x-big: {}\r\n\r\n",
            "z".repeat(500_000)
        )
        .into_bytes(),
        b"POST /breakers/x/open HTTP/1.1\r\nhost: x\r\nconnection: close\r\ncontent-length: -5\r\n\r\n"
            .to_vec(),
    ];
    for r in &requests {
        if let Some(s) = raw(addr, r).await {
            assert!(
                (400..500).contains(&s),
                "{:?}: {s}",
                String::from_utf8_lossy(&r[..40.min(r.len())])
            );
        }
        still_answers(addr).await;
    }
    assert_eq!(PANICS.load(SeqCst), 0);
}
