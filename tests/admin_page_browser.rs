//! The operator page in a real browser: headless Debian `chromium` driven through `chromedriver`
//! (WebDriver, via fantoccini) against the real `examples/service.rs` on free loopback ports.
//!
//! It lists the service's breakers with their states, a confirmed "force open" turns a row open
//! and the service's next request on that path gets the fallback, "reset" (by keyboard) brings it
//! back, a wrong token shows the message, and a stopped admin port shows "not answering".
//! Screenshots go to `target/tmp/`. Without chromium and chromedriver the test says so; it fails
//! when `CI` is set (`.ci/run` installs both) and skips loudly otherwise.
//!
//! Real sockets and a real browser run on real time; every wait is a bounded WebDriver wait
//! that polls the DOM, nothing sleeps to wait.
#![cfg(feature = "admin")]

#[path = "../examples/service.rs"]
#[allow(dead_code)]
mod service;

mod browser;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use browser::{chromium, click, connect, serve, shown, start_driver, text_of, wait, which};
use fantoccini::key::Key;
use fantoccini::{Client, Locator};
use fusebox::{registry, State};
use serde_json::json;

const TOKEN: &str = "t0ken-for-the-browser-test";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_shows_the_breakers_and_toggles_them_in_a_real_browser() {
    let (Some(browser), Some(driver_exe)) = (chromium(), which("chromedriver")) else {
        let msg = "admin_page_browser: chromium or chromedriver is not installed \
                   (apt-get install -y chromium chromium-driver); the browser test did not run";
        assert!(std::env::var_os("CI").is_none(), "{msg}");
        // Straight to stderr: libtest hides a passing test's `eprintln!`, and a skip must show.
        let _ = writeln!(std::io::stderr(), "\n!!!!!!!! SKIPPED: {msg} !!!!!!!!\n");
        return;
    };
    let (service_router, admin_router) = service::routers(TOKEN.to_owned()).await.unwrap();
    let (svc, _svc_stop) = serve(service_router).await;
    let (admin, admin_stop) = serve(admin_router).await;

    let out = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let profile = out.join(format!("chromium-profile-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&profile);
    std::fs::create_dir_all(&profile).unwrap();
    let (driver, webdriver) = start_driver(&driver_exe);
    let client = connect(&webdriver, &browser, &profile).await;

    // The scenario runs in its own task so a failed assertion still closes the browser.
    let run = tokio::spawn(scenario(
        client.clone(),
        svc,
        admin,
        admin_stop,
        out.to_owned(),
    ))
    .await;
    let _ = client.close().await;
    drop(driver);
    let _ = std::fs::remove_dir_all(&profile);
    if let Err(e) = run {
        std::panic::resume_unwind(e.into_panic());
    }
}

async fn scenario(
    c: Client,
    svc: String,
    admin: String,
    admin_stop: tokio::sync::oneshot::Sender<()>,
    out: PathBuf,
) {
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap();
    // Some traffic, so the figures are not all zero.
    for region in ["eu", "us", "eu", "us", "eu"] {
        let r = http
            .get(format!("{svc}/quote/{region}"))
            .send()
            .await
            .unwrap();
        assert!(r.status().is_success());
    }

    // The token arrives once in the fragment and leaves the address bar at once.
    c.goto(&format!("{admin}/#token={TOKEN}")).await.unwrap();
    let us = r#"#b-rows tr[data-name="quotes/us"]"#;
    wait(&c, &format!(r#"{us}[data-state="closed"]"#)).await;
    wait(
        &c,
        r#"#b-rows tr[data-name="quotes/eu"][data-state="closed"]"#,
    )
    .await;
    let url = c.current_url().await.unwrap();
    assert_eq!(
        url.fragment(),
        None,
        "the token left the address bar: {url}"
    );
    assert_eq!(url.query(), None);
    let stored = c
        .execute(
            "return [sessionStorage.getItem('fusebox-admin-token'), document.cookie]",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(stored, json!([TOKEN, ""]), "sessionStorage, never a cookie");
    assert!(
        !shown(&c, "login").await,
        "no token form once the token works"
    );
    assert!(!shown(&c, "auth-msg").await);
    assert!(shown(&c, "main").await);

    // Keyed breakers are grouped under their name with a count; the bulkhead has its own table.
    let group = wait(&c, r#"#b-rows tr[data-group="quotes"]"#).await;
    let text = group.text().await.unwrap();
    assert!(text.contains("quotes") && text.contains("2 keys"), "{text}");
    let state = text_of(&c, &format!("{us} .state")).await;
    assert_eq!(state, "closed", "state as text, not colour alone");
    let bound = text_of(&c, &format!("{us} .bound")).await;
    assert_eq!(
        bound, "from 200 ms",
        "the slow column says from when a call is slow"
    );
    let pool = text_of(&c, r#"#h-rows tr[data-name="quotes"] td:nth-child(2)"#).await;
    assert_eq!(pool, "32");

    // Calls per second come from two samples' counters; then the screenshot at 1280 px.
    for region in ["eu", "us", "eu"] {
        http.get(format!("{svc}/quote/{region}"))
            .send()
            .await
            .unwrap();
    }
    wait(&c, r#"#b-rows tr[data-name="quotes/eu"][data-rated]"#).await;

    // Force open, with a confirmation and an expiry.
    click(&c, &format!(r#"{us} button[data-verb="open"]"#)).await;
    wait(&c, "dialog#confirm[open]").await;
    let title = text_of(&c, "#c-title").await;
    assert_eq!(title, "Force open quotes/us?");
    c.find(Locator::Id("c-for"))
        .await
        .unwrap()
        .send_keys("10m")
        .await
        .unwrap();
    click(&c, "#c-ok").await;
    wait(&c, &format!(r#"{us}[data-state="forced_open"]"#)).await;
    assert_eq!(text_of(&c, &format!("{us} .state")).await, "forced open");
    assert_eq!(
        registry().breaker("quotes/us").unwrap().state(),
        State::ForcedOpen
    );
    let r = http.get(format!("{svc}/quote/us")).send().await.unwrap();
    assert_eq!(
        r.headers().get("x-fusebox-fallback").map(|v| v.as_bytes()),
        Some(&b"1"[..]),
        "the service's next request gets the fallback"
    );
    let flash = text_of(&c, "#flash").await;
    assert!(flash.contains("quotes/us is now forced open"), "{flash}");
    c.screenshot()
        .await
        .map(|png| std::fs::write(out.join("admin-page.png"), png).unwrap())
        .unwrap();

    // Escape cancels: nothing changes.
    click(
        &c,
        r#"#b-rows tr[data-name="quotes/eu"] button[data-verb="open"]"#,
    )
    .await;
    wait(&c, "dialog#confirm[open]").await;
    c.active_element()
        .await
        .unwrap()
        .send_keys(&Key::Escape)
        .await
        .unwrap();
    wait(&c, "dialog#confirm:not([open])").await;
    assert_eq!(
        registry().breaker("quotes/eu").unwrap().state(),
        State::Closed
    );

    // Reset by keyboard alone: Enter on the button, focus starts on Cancel, Tab, Enter.
    let reset = wait(&c, &format!(r#"{us} button[data-verb="reset"]"#)).await;
    reset.send_keys(&Key::Enter).await.unwrap();
    wait(&c, "dialog#confirm[open]").await;
    let focused = c.active_element().await.unwrap();
    assert_eq!(
        focused.text().await.unwrap(),
        "Cancel",
        "the safe choice has focus"
    );
    focused.send_keys(&Key::Tab).await.unwrap();
    let ok = c.active_element().await.unwrap();
    assert_eq!(ok.text().await.unwrap(), "Reset");
    ok.send_keys(&Key::Enter).await.unwrap();
    wait(&c, &format!(r#"{us}[data-state="closed"]"#)).await;
    let r = http.get(format!("{svc}/quote/us")).send().await.unwrap();
    assert!(r.headers().get("x-fusebox-fallback").is_none());
    assert!(
        r.text().await.unwrap().starts_with("us: "),
        "a live quote again"
    );

    // The filter box narrows the table.
    c.find(Locator::Id("filter"))
        .await
        .unwrap()
        .send_keys("eu")
        .await
        .unwrap();
    assert!(c.find_all(Locator::Css(us)).await.unwrap().is_empty());
    assert_eq!(text_of(&c, "#b-count").await, "(1 of 2)");
    c.find(Locator::Id("filter"))
        .await
        .unwrap()
        .clear()
        .await
        .unwrap();
    c.execute(
        "document.getElementById('filter').dispatchEvent(new Event('input'))",
        vec![],
    )
    .await
    .unwrap();
    wait(&c, us).await;

    // Names are data, never markup.
    let markup = "page-test <b>not bold</b>";
    fusebox::Breaker::builder(markup).build().unwrap();
    wait(&c, &format!(r#"//td[text()="{markup}"]"#)).await;
    assert!(c
        .find_all(Locator::Css("#b-rows b"))
        .await
        .unwrap()
        .is_empty());

    // Issue 22: a breaker ramping traffic back in reads "closed" and says how far.
    let ramping = fusebox::Breaker::builder("page-test-ramping")
        .half_open_calls(1)
        .ramp(Duration::from_secs(3600))
        .build()
        .unwrap();
    // Forced open for 1 ns, then one passed trial closes it, ramping (bounded, no sleep).
    ramping.force_open_for(Duration::from_nanos(1));
    for _ in 0..1000 {
        let _ = ramping.call(async { Ok::<_, ()>(()) }).await;
        if ramping.metrics().ramp_share.is_some() {
            break;
        }
    }
    assert!(
        ramping.metrics().ramp_share.is_some(),
        "{:?}",
        ramping.metrics()
    );
    let row = r#"tr[data-name="page-test-ramping"]"#;
    wait(&c, &format!("{row} .ramp")).await;
    assert_eq!(text_of(&c, &format!("{row} .state")).await, "closed");
    let ramp = text_of(&c, &format!("{row} .ramp")).await;
    assert!(
        ramp.starts_with("ramping ") && ramp.ends_with(" %"),
        "{ramp}"
    );

    // A force with an expiry says when it lapses, beside the state it forces.
    let lapsing = fusebox::Breaker::builder("page-test-lapsing")
        .build()
        .unwrap();
    lapsing.force_open_for(Duration::from_secs(600));
    let row = r#"tr[data-name="page-test-lapsing"]"#;
    wait(&c, &format!("{row} .expires")).await;
    assert_eq!(text_of(&c, &format!("{row} .state")).await, "forced open");
    let ends = text_of(&c, &format!("{row} .expires")).await;
    assert!(
        ends == "ends in 10 m 0 s" || (ends.starts_with("ends in 9 m ") && ends.ends_with(" s")),
        "{ends}"
    );
    assert!(
        c.find_all(Locator::Css(
            r#"tr[data-name="page-test-ramping"] .expires"#
        ))
        .await
        .unwrap()
        .is_empty(),
        "no expiry shown for a breaker that is not forced"
    );

    // At 1280 px the breakers' table fits without a horizontal scroll bar, long names and all.
    let fits = c
        .execute(
            "const s = document.querySelector('#breakers').parentElement; \
             return s.scrollWidth <= s.clientWidth",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(fits, json!(true), "the table overflows at 1280 px");

    // Phone width: still every figure, as labelled cards.
    c.set_window_size(390, 844).await.unwrap();
    c.screenshot()
        .await
        .map(|png| std::fs::write(out.join("admin-page-phone.png"), png).unwrap())
        .unwrap();
    c.set_window_size(1280, 900).await.unwrap();

    // A wrong token typed in: a clear message, not a blank table.
    click(&c, "#logout").await;
    let input = wait(&c, "#login:not([hidden]) #token").await;
    input.send_keys("not-the-token-at-all").await.unwrap();
    input.send_keys(&Key::Enter).await.unwrap();
    let msg = wait(&c, "#auth-msg:not([hidden])").await;
    wait(&c, "#main[hidden]").await;
    let msg = msg.text().await.unwrap();
    assert!(msg.contains("refused this token"), "{msg}");
    c.screenshot()
        .await
        .map(|png| std::fs::write(out.join("admin-page-wrong-token.png"), png).unwrap())
        .unwrap();

    // The right one again, then the admin port stops: the page says the service is not answering.
    let input = wait(&c, "#token").await;
    input.send_keys(TOKEN).await.unwrap();
    input.send_keys(&Key::Enter).await.unwrap();
    wait(&c, &format!(r#"{us}[data-state="closed"]"#)).await;
    let _ = admin_stop.send(());
    let down = wait(&c, "#down:not([hidden])").await;
    wait(&c, "#main.stale").await;
    let down = down.text().await.unwrap();
    assert!(down.contains("Service not answering"), "{down}");
    c.screenshot()
        .await
        .map(|png| std::fs::write(out.join("admin-page-down.png"), png).unwrap())
        .unwrap();
}
