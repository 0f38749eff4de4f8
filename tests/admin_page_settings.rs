//! Issue 29 on the operator page, in a real browser (headless chromium through chromedriver,
//! as `admin_page_browser.rs`): the settings not at the code's are listed with where each came
//! from, and the form changes one (refused ones show the settings table's reason).
//!
//! Real sockets and a real browser run on real time; every wait is a bounded WebDriver wait.
#![cfg(feature = "admin")]

// Shared with admin_page_browser.rs, which uses all of it.
#[allow(dead_code)]
mod browser;

use std::io::Write;
use std::path::Path;

use browser::{chromium, click, connect, serve, start_driver, text_of, wait, which};
use fantoccini::{Client, Locator};
use fusebox::settings::{Overrides, Source};
use fusebox::{registry, Breaker};

const TOKEN: &str = "t0ken-for-the-settings-page";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_lists_overridden_settings_and_changes_one() {
    let (Some(browser), Some(driver_exe)) = (chromium(), which("chromedriver")) else {
        let msg = "admin_page_settings: chromium or chromedriver is not installed; the browser test did not run";
        assert!(std::env::var_os("CI").is_none(), "{msg}");
        let _ = writeln!(std::io::stderr(), "\n!!!!!!!! SKIPPED: {msg} !!!!!!!!\n");
        return;
    };
    let b = Breaker::builder("page-payments")
        .window_calls(10)
        .build()
        .unwrap();
    let o = Overrides::new().breaker("page-payments", [("min_calls", "5")], Source::Env);
    registry().apply_overrides(&o).unwrap();
    let (admin, _stop) = serve(fusebox::admin::router(TOKEN).unwrap()).await;

    let out = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let profile = out.join(format!("chromium-settings-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&profile);
    std::fs::create_dir_all(&profile).unwrap();
    let (driver, webdriver) = start_driver(&driver_exe);
    let client = connect(&webdriver, &browser, &profile).await;
    let run = tokio::spawn(scenario(client.clone(), admin, b));
    let run = run.await;
    let _ = client.close().await;
    drop(driver);
    let _ = std::fs::remove_dir_all(&profile);
    if let Err(e) = run {
        std::panic::resume_unwind(e.into_panic());
    }
}

async fn fill(c: &Client, id: &str, text: &str) {
    let e = c.find(Locator::Id(id)).await.unwrap();
    e.clear().await.unwrap();
    e.send_keys(text).await.unwrap();
}

async fn scenario(c: Client, admin: String, b: Breaker) {
    c.goto(&format!("{admin}/#token={TOKEN}")).await.unwrap();
    // The start's override is listed: setting, value, the code's, and where it came from.
    let row = wait(
        &c,
        "//tbody[@id='cfg-rows']/tr[td[2]='page-payments' and td[3]='min_calls']",
    )
    .await;
    let text = row.text().await.unwrap();
    assert!(
        text.contains('5') && text.contains("10") && text.contains("env"),
        "{text}"
    );

    // The form changes one; the row appears, from `admin`, and the breaker has it.
    fill(&c, "cfg-name", "page-payments").await;
    fill(&c, "cfg-key", "failure_rate").await;
    fill(&c, "cfg-value", "80").await;
    fill(&c, "cfg-for", "10m").await;
    click(&c, "#cfg-form button[type=submit]").await;
    let row = wait(
        &c,
        "//tbody[@id='cfg-rows']/tr[td[3]='failure_rate' and td[4]='80' and starts-with(td[6],'admin')]",
    )
    .await;
    let text = row.text().await.unwrap();
    assert!(text.contains("ends in"), "{text}");
    assert_eq!(b.config_in_force().failure_rate(), 80);

    // A bad value is refused with the table's words, and nothing changes.
    fill(&c, "cfg-value", "0").await;
    click(&c, "#cfg-form button[type=submit]").await;
    c.wait()
        .at_most(std::time::Duration::from_secs(10))
        .for_element(Locator::XPath(
            "//p[@id='flash' and contains(., 'out of range')]",
        ))
        .await
        .expect("the refusal shown");
    let flash = text_of(&c, "#flash").await;
    assert!(flash.contains("`failure_rate` = 0"), "{flash}");
    assert_eq!(b.config_in_force().failure_rate(), 80);
}
