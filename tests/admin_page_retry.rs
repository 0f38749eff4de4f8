//! The operator page's retry rows in a real browser (headless chromium through chromedriver,
//! as `admin_page_browser.rs`): per name, calls, attempts, retries, budget refusals and
//! `retry_after` holds, the same figures as `metrics()`. Skips loudly without chromium (fails
//! under `CI`). Real sockets and a real browser run on real time; every wait is bounded.
#![cfg(feature = "admin")]

#[allow(dead_code)]
mod browser;

use std::io::Write;
use std::path::Path;
use std::time::Duration;

use browser::{chromium, connect, serve, start_driver, text_of, wait, which};
use fusebox::retry::{Backoff, BudgetConfig, Retry};
use fusebox::{Breaker, Error};

const TOKEN: &str = "t0ken-for-the-retry-page-test";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_shows_attempts_retries_refusals_and_holds_per_name() {
    let (Some(browser), Some(driver_exe)) = (chromium(), which("chromedriver")) else {
        let msg = "admin_page_retry: chromium or chromedriver is not installed; the browser test did not run";
        assert!(std::env::var_os("CI").is_none(), "{msg}");
        let _ = writeln!(std::io::stderr(), "\n!!!!!!!! SKIPPED: {msg} !!!!!!!!\n");
        return;
    };
    // A budget of 1 retry a second over 10 s and no share: 12 failing calls get 10 retries.
    let ms = Duration::from_millis(1);
    let retry = Retry::builder("page-retry")
        .attempts(2)
        .backoff(Backoff::new(ms, ms))
        .budget(BudgetConfig {
            share_pct: 0,
            floor_per_s: 1,
            window: Duration::from_secs(10),
        })
        .build()
        .unwrap();
    for _ in 0..12 {
        let r: Result<(), Error<&str>> = retry.run(|| async { Err(Error::Failed("down")) }).await;
        assert!(r.is_err());
    }
    // One answer with a server hint holds the breaker open.
    let breaker = Breaker::builder("page-retry").build().unwrap();
    let hinted: Result<(), Error<&str>> = retry
        .run_with_breaker(
            &breaker,
            || breaker.call(async { Err("429") }),
            |_| true,
            |_| Some(Duration::from_secs(5)),
        )
        .await;
    assert!(hinted.is_err());
    let m = fusebox::metrics();
    let want = m.retry("page-retry").unwrap();
    assert_eq!(
        (
            want.calls,
            want.attempts,
            want.retries,
            want.budget_exhausted,
            want.held_open
        ),
        (13, 23, 10, 3, 1)
    );

    let (admin, _stop) = serve(fusebox::admin::router(TOKEN).unwrap()).await;
    let out = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let profile = out.join(format!("chromium-retry-profile-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&profile);
    std::fs::create_dir_all(&profile).unwrap();
    let (driver, webdriver) = start_driver(&driver_exe);
    let c = connect(&webdriver, &browser, &profile).await;
    let run = tokio::spawn({
        let c = c.clone();
        async move {
            c.goto(&format!("{admin}/#token={TOKEN}")).await.unwrap();
            let row = r#"#r-rows tr[data-name="page-retry"]"#;
            wait(&c, row).await;
            let mut got = Vec::new();
            for n in 1..=6 {
                got.push(text_of(&c, &format!("{row} td:nth-child({n})")).await);
            }
            assert_eq!(got, ["page-retry", "13", "23", "10", "3", "1"]);
            let class = wait(&c, row).await.attr("class").await.unwrap();
            assert_eq!(class.as_deref(), Some("exhausted"), "refusals stand out");
            let title = text_of(&c, "#r-title").await;
            assert!(title.starts_with("Retries"), "{title}");
        }
    })
    .await;
    let _ = c.close().await;
    drop(driver);
    let _ = std::fs::remove_dir_all(&profile);
    if let Err(e) = run {
        std::panic::resume_unwind(e.into_panic());
    }
}
