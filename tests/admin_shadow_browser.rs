//! Issue 29: the operator page's shadow panel in a real browser (headless `chromium` through
//! `chromedriver`) against the admin router on a free loopback port: a shadow that would have
//! opened is listed with its state and refusals, one is set through the form, one is promoted
//! and one dropped, each after a confirmation. Without chromium and chromedriver the test says
//! so; it fails when `CI` is set and skips loudly otherwise.
//!
//! Real sockets and a real browser on real time; every wait is a bounded WebDriver wait.
#![cfg(feature = "admin")]

// Shared with admin_page_browser.rs, which uses all of it.
#[allow(dead_code)]
mod browser;

use std::io::Write;
use std::path::Path;

use browser::{chromium, click, connect, serve, start_driver, text_of, wait, which};
use fantoccini::{Client, Locator};
use fusebox::{Breaker, Error, State};
use serde_json::json;

const TOKEN: &str = "t0ken-for-the-shadow-browser-test";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_shadow_panel_lists_sets_promotes_and_drops_shadows_in_a_real_browser() {
    let (Some(browser), Some(driver_exe)) = (chromium(), which("chromedriver")) else {
        let msg = "admin_shadow_browser: chromium or chromedriver is not installed \
                   (apt-get install -y chromium chromium-driver); the browser test did not run";
        assert!(std::env::var_os("CI").is_none(), "{msg}");
        let _ = writeln!(std::io::stderr(), "\n!!!!!!!! SKIPPED: {msg} !!!!!!!!\n");
        return;
    };
    let (admin, _stop) = serve(fusebox::admin::router(TOKEN).unwrap()).await;
    let out = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let profile = out.join(format!("chromium-shadow-profile-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&profile);
    std::fs::create_dir_all(&profile).unwrap();
    let (driver, webdriver) = start_driver(&driver_exe);
    let client = connect(&webdriver, &browser, &profile).await;
    let run = tokio::spawn(scenario(client.clone(), admin, out.to_owned())).await;
    let _ = client.close().await;
    drop(driver);
    let _ = std::fs::remove_dir_all(&profile);
    if let Err(e) = run {
        std::panic::resume_unwind(e.into_panic());
    }
}

async fn scenario(c: Client, admin: String, out: std::path::PathBuf) {
    let strict = Breaker::builder("shadow-page-payments")
        .window_calls(10)
        .build()
        .unwrap();
    strict
        .set_shadow([
            ("window_calls", "10"),
            ("min_calls", "5"),
            ("failure_rate", "20"),
        ])
        .unwrap();
    for i in 0..10 {
        let _: Result<(), Error<&str>> = strict
            .call(async move {
                if i % 5 == 4 {
                    Err("boom")
                } else {
                    Ok(())
                }
            })
            .await;
    }
    let other = Breaker::builder("shadow-page-search").build().unwrap();

    c.goto(&format!("{admin}/#token={TOKEN}")).await.unwrap();
    let row = r#"#s-rows tr[data-name="shadow-page-payments"]"#;
    wait(&c, &format!(r#"{row}[data-state="open"]"#)).await;
    let text = text_of(&c, row).await;
    assert!(text.contains("failure ≥ 20 %"), "{text}");
    assert!(text.contains("live: closed"), "{text}");
    assert_eq!(text_of(&c, &format!("{row} td:nth-child(6)")).await, "5");
    assert!(text_of(&c, &format!("{row} td:nth-child(7)"))
        .await
        .starts_with("10 in"));
    c.screenshot()
        .await
        .map(|png| std::fs::write(out.join("admin-shadow-panel.png"), png).unwrap())
        .unwrap();

    // The form sets a shadow on another breaker.
    c.find(Locator::Id("s-name"))
        .await
        .unwrap()
        .send_keys("shadow-page-search")
        .await
        .unwrap();
    c.find(Locator::Id("s-settings"))
        .await
        .unwrap()
        .send_keys("trip_p95=500ms, failure_rate=20")
        .await
        .unwrap();
    click(&c, r#"#s-form button[type="submit"]"#).await;
    wait(
        &c,
        r#"#s-rows tr[data-name="shadow-page-search"][data-state="closed"]"#,
    )
    .await;
    let cand = text_of(
        &c,
        r#"#s-rows tr[data-name="shadow-page-search"] td:nth-child(2)"#,
    )
    .await;
    assert!(cand.contains("slow ≥ 500 ms at 5 %"), "{cand}");
    assert_eq!(other.shadow().unwrap().settings.failure_rate(), 20);

    // Declining the confirmation changes nothing; accepting it promotes.
    c.execute("window.confirm = () => false", vec![])
        .await
        .unwrap();
    click(&c, &format!(r#"{row} button[data-shadow="promote"]"#)).await;
    // A request would have started at once with a message (`shadowAct` writes it first).
    let flash = text_of(&c, "#flash").await;
    assert!(!flash.contains("shadow-page-payments"), "declined: {flash}");
    assert!(strict.shadow().is_some(), "declined: still there");
    c.execute("window.confirm = () => true", vec![])
        .await
        .unwrap();
    click(&c, &format!(r#"{row} button[data-shadow="promote"]"#)).await;
    wait(
        &c,
        "//p[@id='flash'][contains(., 'Promoted the shadow of shadow-page-payments')]",
    )
    .await;
    wait(
        &c,
        r#"#s-rows:not(:has(tr[data-name="shadow-page-payments"]))"#,
    )
    .await;
    assert!(strict.shadow().is_none());
    assert_eq!(strict.state(), State::Closed);

    click(
        &c,
        r#"#s-rows tr[data-name="shadow-page-search"] button[data-shadow="drop"]"#,
    )
    .await;
    wait(&c, "#s-empty:not([hidden])").await;
    assert!(other.shadow().is_none());
    let left = c
        .execute(
            "return document.querySelectorAll('#s-rows tr').length",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(left, json!(0));
}
