//! Issue 19: the operator's page, in a real headless chromium.

use super::*;

const PAGE_TOKEN: &str = "outside-f-page-t0ken";

/// What the page's table shows for a breaker that opened on its own (state as text, time in
/// state, failure rate, refusals by reason, stuck, the sparkline) and for bulkheads (pool, in
/// flight, peak, rejected; an adaptive one's bounds), refreshed without a reload.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_shows_what_an_operator_needs_of_an_open_breaker_and_of_bulkheads() {
    use browser::{chromium, connect, serve, start_driver, text_of, wait, which};
    let (Some(chrome), Some(driver_exe)) = (chromium(), which("chromedriver")) else {
        let msg = "outside_f: chromium or chromedriver is not installed \
                   (apt-get install -y chromium chromium-driver); the browser test did not run";
        assert!(std::env::var_os("CI").is_none(), "{msg}");
        use std::io::Write;
        let _ = writeln!(std::io::stderr(), "\n!!!!!!!! SKIPPED: {msg} !!!!!!!!\n");
        return;
    };
    let tripped = Breaker::builder("of-page-tripped")
        .window_calls(2)
        .min_calls(2)
        .open_for(secs(600))
        .alert_after(secs(1))
        .build()
        .unwrap();
    for _ in 0..2 {
        let _ = tripped.call(async { Err::<(), _>("down") }).await;
    }
    assert_eq!(tripped.state(), State::Open);
    for _ in 0..3 {
        assert!(tripped.call(async { Ok::<_, &str>(()) }).await.is_err());
    }
    let pool = Bulkhead::builder("of-page-pool").pool(3).build().unwrap();
    let held: Vec<_> = [
        pool.acquire().await,
        pool.acquire().await,
        pool.acquire().await,
    ]
    .into_iter()
    .map(Result::unwrap)
    .collect();
    assert!(matches!(
        pool.call(async {}).await,
        Err(Rejection::Full { .. })
    ));
    Bulkhead::builder("of-page-adaptive")
        .adaptive()
        .min_pool(2)
        .max_pool(50)
        .build()
        .unwrap();

    let (admin, _stop) = serve(fusebox::admin::router(PAGE_TOKEN).unwrap()).await;
    let out = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"));
    let profile = out.join(format!("chromium-profile-of-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&profile);
    std::fs::create_dir_all(&profile).unwrap();
    let (driver, webdriver) = start_driver(&driver_exe);
    let c = connect(&webdriver, &chrome, &profile).await;
    let scenario = {
        let c = c.clone();
        tokio::spawn(async move {
            c.goto(&format!("{admin}/#token={PAGE_TOKEN}"))
                .await
                .unwrap();
            let row = r#"#b-rows tr[data-name="of-page-tripped"]"#;
            wait(&c, &format!(r#"{row}[data-state="open"]"#)).await;
            assert_eq!(text_of(&c, &format!("{row} .state")).await, "open");
            let cells = |n: usize| format!("{row} td:nth-child({n})");
            let in_state = text_of(&c, &cells(3)).await;
            assert!(
                in_state.ends_with(" s") || in_state.ends_with(" ms"),
                "{in_state}"
            );
            assert_eq!(text_of(&c, &cells(5)).await, "100 %", "failure rate");
            let rejected = text_of(&c, &cells(8)).await;
            assert!(
                rejected.starts_with('3') && rejected.contains("open 3"),
                "refusals with their reason: {rejected}"
            );
            // Open past alert_after (1 s): stuck, said in words, without a reload.
            let stuck = text_of(&c, &format!("{row} .stuck")).await;
            assert_eq!(stuck, "STUCK");
            // The history: a state band and the rates' lines once two samples are in.
            wait(&c, &format!("{row} svg.spark rect.band.b-open")).await;
            wait(&c, &format!("{row} svg.spark polyline")).await;

            let pool_row = r#"#h-rows tr[data-name="of-page-pool"]"#;
            let cell = |n: usize| format!("{pool_row} td:nth-child({n})");
            wait(&c, pool_row).await;
            assert_eq!(text_of(&c, &cell(2)).await, "3", "pool");
            assert_eq!(text_of(&c, &cell(3)).await, "3", "in flight");
            assert_eq!(text_of(&c, &cell(4)).await, "3", "peak");
            assert_eq!(text_of(&c, &cell(6)).await, "1", "rejected");
            let adaptive = r#"#h-rows tr[data-name="of-page-adaptive"] td:nth-child(2)"#;
            assert_eq!(text_of(&c, adaptive).await, "20 (adaptive 2..50)");
            c
        })
    };
    let c2 = match scenario.await {
        Ok(c) => c,
        Err(e) => {
            let _ = c.close().await;
            drop(driver);
            std::panic::resume_unwind(e.into_panic());
        }
    };
    // The slots given back show within a refresh; the peak stays.
    drop(held);
    let pool_row = r#"#h-rows tr[data-name="of-page-pool"]"#;
    let freed = c2
        .wait()
        .at_most(browser::WAIT)
        .for_element(fantoccini::Locator::XPath(
            r#"//tbody[@id="h-rows"]/tr[@data-name="of-page-pool"]/td[3][text()="0"]"#,
        ))
        .await
        .is_ok();
    let peak = text_of(&c2, &format!("{pool_row} td:nth-child(4)")).await;
    let _ = c2.close().await;
    drop(driver);
    let _ = std::fs::remove_dir_all(&profile);
    assert!(freed, "in flight back to 0 on the page");
    assert_eq!(peak, "3");
}
