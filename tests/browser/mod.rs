//! WebDriver plumbing for the browser tests: find Debian's chromium and chromedriver, start the
//! driver on a free loopback port, open a headless session with a fresh profile, and bounded
//! waits on the DOM. Nothing here sleeps: every wait polls the page through WebDriver.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::{json, Value};

/// How long any one wait may take before the test fails.
pub const WAIT: Duration = Duration::from_secs(20);

/// chromedriver, killed and reaped when dropped (also when the test panics).
pub struct Driver(Child);

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The first `name` on `PATH`.
pub fn which(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
}

/// The browser binary itself: Debian's `/usr/bin/chromium` is a wrapper script around it.
pub fn chromium() -> Option<PathBuf> {
    let real = Path::new("/usr/lib/chromium/chromium");
    if real.is_file() {
        return Some(real.to_owned());
    }
    which("chromium").or_else(|| which("chromium-browser"))
}

/// Starts chromedriver on a free loopback port and waits (bounded) for its "started" line.
pub fn start_driver(exe: &Path) -> (Driver, String) {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut child = Command::new(exe)
        .arg(format!("--port={port}"))
        .arg("--allowed-ips=127.0.0.1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("chromedriver starts");
    let stdout = child.stdout.take().unwrap();
    let driver = Driver(child);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if line.contains("started successfully") {
                let _ = tx.send(());
            }
        }
    });
    rx.recv_timeout(WAIT)
        .expect("chromedriver says it started within 20 s");
    (driver, format!("http://127.0.0.1:{port}"))
}

pub async fn connect(webdriver: &str, browser: &Path, profile: &Path) -> Client {
    let args = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-dev-shm-usage",
        "--window-size=1280,900",
    ]
    .map(String::from)
    .into_iter()
    .chain([format!("--user-data-dir={}", profile.display())])
    .collect::<Vec<_>>();
    let caps = json!({
        "browserName": "chrome",
        "goog:chromeOptions": { "binary": browser, "args": args },
    });
    let Value::Object(caps) = caps else {
        unreachable!()
    };
    let connector = hyper_util::client::legacy::connect::HttpConnector::new();
    ClientBuilder::new(connector)
        .capabilities(caps)
        .connect(webdriver)
        .await
        .expect("a WebDriver session with headless chromium")
}

/// Serves a router on a free loopback port; the sender stops it gracefully.
pub async fn serve(app: axum::Router) -> (String, tokio::sync::oneshot::Sender<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        axum::serve(listener, app)
            .with_graceful_shutdown(async {
                let _ = stopped.await;
            })
            .await
    });
    (format!("http://{addr}"), stop)
}

/// Waits (bounded) until an element matching the CSS selector, or XPath if it starts with `//`, exists.
pub async fn wait(c: &Client, selector: &str) -> fantoccini::elements::Element {
    let loc = if selector.starts_with("//") {
        Locator::XPath(selector)
    } else {
        Locator::Css(selector)
    };
    c.wait()
        .at_most(WAIT)
        .for_element(loc)
        .await
        .unwrap_or_else(|e| panic!("{selector} within {WAIT:?}: {e}"))
}

pub async fn shown(c: &Client, id: &str) -> bool {
    let e = c.find(Locator::Id(id)).await.unwrap();
    e.is_displayed().await.unwrap()
}

pub async fn click(c: &Client, selector: &str) {
    wait(c, selector).await.click().await.unwrap();
}

pub async fn text_of(c: &Client, selector: &str) -> String {
    wait(c, selector).await.text().await.unwrap()
}
