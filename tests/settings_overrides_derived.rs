//! Issue 29, settings outside the code: an override is read as if written in the attribute.
//! What a `timeout` (or, without one, a slow rule) derives follows the override as it follows
//! the attribute, and takes the source of the key it follows. The tests of this binary share
//! the global registry: each uses names of its own.

mod common;

use std::time::Duration;

use common::DepError;
use fusebox::settings::{Overrides, Source};
use fusebox::{breaker, registry};

fn setting(settings: &[fusebox::settings::SettingInForce], key: &str) -> (String, Source) {
    let s = settings
        .iter()
        .find(|s| s.key == key)
        .unwrap_or_else(|| panic!("no `{key}` in {settings:?}"));
    (s.value.clone(), s.source)
}

#[breaker(name = "ov-derived", timeout = "800ms")]
async fn derived() -> Result<(), DepError> {
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn an_override_is_read_as_if_written_in_the_attribute() {
    derived().await.unwrap();
    let b = registry().breaker("ov-derived").unwrap();
    let code = b.config().clone();
    assert_eq!(
        code.slow().unwrap().bound,
        Duration::from_millis(400),
        "derived"
    );
    // A new timeout: everything it derives follows it.
    let o = Overrides::new().breaker("ov-derived", [("timeout", "2s")], Source::File);
    registry().apply_overrides(&o).unwrap();
    let now = b.config_in_force();
    assert_eq!(now.slow().unwrap().bound, Duration::from_secs(1));
    let s = b.settings_in_force();
    assert_eq!(setting(&s, "slow"), ("1s".into(), Source::File));
    // A threshold given ends the derived detection, as in the attribute: shown as `off`.
    let o = Overrides::new().breaker("ov-derived", [("failure_rate", "80")], Source::Env);
    registry().apply_overrides(&o).unwrap();
    let now = b.config_in_force();
    assert_eq!(
        (now.failure_rate(), now.timeout()),
        (80, Some(Duration::from_secs(2)))
    );
    assert_eq!(now.slow(), None);
    let s = b.settings_in_force();
    assert_eq!(setting(&s, "slow"), ("off".into(), Source::Env));
    assert_eq!(setting(&s, "timeout"), ("2s".into(), Source::File));
}

#[breaker(name = "ov-written-default", failure_rate = 50)]
async fn written_default() -> Result<(), DepError> {
    Ok(())
}

#[breaker(
    name = "ov-written-derived",
    timeout = "800ms",
    half_open_timeout = "3200ms"
)]
async fn written_derived() -> Result<(), DepError> {
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn a_key_written_with_its_default_or_derived_value_stays_written_under_an_override() {
    // `failure_rate = 50` is the default, and `3200ms` is what `800ms` derives: the same
    // settings as leaving them out, but not the same meaning under an override. A threshold
    // written keeps `timeout` from deriving a slow rule; a trial timeout written does not
    // follow a new `timeout`. They were dropped before the override was laid over the code.
    written_default().await.unwrap();
    written_derived().await.unwrap();
    let o = Overrides::new()
        .breaker("ov-written-default", [("timeout", "1s")], Source::Env)
        .and(Overrides::new().breaker("ov-written-derived", [("timeout", "2s")], Source::Env));
    registry().apply_overrides(&o).unwrap();
    let now = registry()
        .breaker("ov-written-default")
        .unwrap()
        .config_in_force();
    assert_eq!(now.timeout(), Some(Duration::from_secs(1)));
    assert_eq!(
        now.slow(),
        None,
        "as `failure_rate = 50, timeout = \"1s\"` written"
    );
    let now = registry()
        .breaker("ov-written-derived")
        .unwrap()
        .config_in_force();
    assert_eq!(now.half_open_timeout(), Some(Duration::from_millis(3200)));
    // The builder's settings remember what was written too.
    let b = fusebox::Breaker::builder("ov-written-builder")
        .failure_rate(50)
        .build()
        .unwrap();
    let o = Overrides::new().breaker("ov-written-builder", [("timeout", "1s")], Source::File);
    registry().apply_overrides(&o).unwrap();
    assert_eq!(b.config_in_force().slow(), None);
}

#[tokio::test(start_paused = true)]
async fn a_derived_value_has_the_source_of_the_key_it_follows() {
    let b = fusebox::Breaker::builder("ov-derived-source")
        .timeout(Duration::from_millis(800))
        .build()
        .unwrap();
    // The file gives the timeout the slow rule follows; the environment, a key of its own,
    // last. The slow rule was attributed to the last entry (env).
    let file = Overrides::new().breaker("ov-derived-source", [("timeout", "2s")], Source::File);
    let env = Overrides::new().breaker("ov-derived-source", [("alert_after", "10m")], Source::Env);
    registry().apply_overrides(&file.and(env)).unwrap();
    let s = b.settings_in_force();
    assert_eq!(setting(&s, "slow"), ("1s".into(), Source::File));
    assert_eq!(setting(&s, "alert_after"), ("10m".into(), Source::Env));
    // Turned off by a threshold from the environment: the environment's.
    let file = Overrides::new().breaker("ov-derived-source", [("timeout", "2s")], Source::File);
    let env = Overrides::new().breaker("ov-derived-source", [("failure_rate", "80")], Source::Env);
    registry().apply_overrides(&file.and(env)).unwrap();
    assert_eq!(
        setting(&b.settings_in_force(), "slow"),
        ("off".into(), Source::Env)
    );
}

#[breaker(name = "ov-scale")]
async fn unscaled() -> Result<(), DepError> {
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn a_slow_rule_given_without_a_timeout_scales_the_derived_settings_and_lends_them_its_source()
{
    unscaled().await.unwrap();
    let b = registry().breaker("ov-scale").unwrap();
    assert_eq!(
        b.config_in_force().probe_every(),
        None,
        "nothing to scale from"
    );
    let o = Overrides::new().breaker("ov-scale", [("trip_p95", "500ms")], Source::Env);
    registry().apply_overrides(&o).unwrap();
    let c = b.config_in_force();
    // As from a 1 s timeout: trials under 4 s, a probe a second; calls themselves not timed out.
    assert_eq!(c.probe_every(), Some(Duration::from_secs(1)));
    assert_eq!(c.half_open_timeout(), Some(Duration::from_secs(4)));
    assert_eq!(c.timeout(), None);
    let s = b.settings_in_force();
    assert_eq!(setting(&s, "probe_every"), ("1s".into(), Source::Env));
    assert_eq!(setting(&s, "window_calls"), ("100".into(), Source::Env));
}
