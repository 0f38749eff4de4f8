//! Issue 29: overrides given at start, from the environment and from a TOML file: which one
//! wins, what is refused and how, and where they show (Prometheus, the simulator's replay).

use super::*;

#[tokio::test]
async fn one_override_that_gives_a_key_twice_is_refused_as_the_attribute_refuses_it() {
    Breaker::builder("ob-twice").build().unwrap();
    let o = Overrides::from_vars([("FUSEBOX_BREAKER", "ob-twice; timeout=1s; timeout=2s")]);
    let e = match o {
        Err(e) => e,
        Ok(o) => registry()
            .apply_overrides(&o)
            .expect_err("a key given twice: which one did the operator mean?"),
    };
    assert_eq!((e.name.as_str(), e.key.as_str()), ("ob-twice", "timeout"));
    let text = e.to_string();
    assert!(
        text.contains("ob-twice") && text.contains("timeout"),
        "{text}"
    );
}

#[tokio::test(start_paused = true)]
async fn the_exact_name_wins_then_the_longer_pattern_then_the_last_given() {
    Breaker::builder("ob-prec-pay").build().unwrap();
    let o = Overrides::from_vars([
        ("FUSEBOX_BREAKER_A", "ob-prec-pay; failure_rate=30"),
        (
            "FUSEBOX_BREAKER_B",
            "ob-prec-*; failure_rate=40; timeout=2s; min_calls=7",
        ),
        (
            "FUSEBOX_BREAKER_C",
            "ob-pre*; timeout=3s; min_calls=8; open_for=9s",
        ),
        ("FUSEBOX_BREAKER_D", "ob-prec-*; min_calls=6"),
    ])
    .unwrap();
    registry().apply_overrides(&o).unwrap();
    let c = registry().breaker("ob-prec-pay").unwrap().config_in_force();
    assert_eq!(c.failure_rate(), 30, "the exact name");
    assert_eq!(
        c.timeout(),
        Some(Duration::from_secs(2)),
        "more literal characters"
    );
    assert_eq!(c.min_calls(), 6, "the same pattern given last");
    assert_eq!(
        c.open_for(),
        Duration::from_secs(9),
        "only the widest gives it"
    );
}

#[tokio::test]
async fn a_breaker_key_given_to_a_bulkhead_is_refused_naming_the_bulkhead_and_the_key() {
    let e = Overrides::from_vars([("FUSEBOX_BULKHEAD_DB", "ob-db; pool=8; failure_rate=30")])
        .unwrap_err();
    assert_eq!(
        (e.target, e.name.as_str(), e.key.as_str(), e.value.as_str()),
        (GuardKind::Bulkhead, "ob-db", "failure_rate", "30")
    );
    let text = e.to_string();
    assert!(
        text.contains("bulkhead `ob-db`") && text.contains("failure_rate"),
        "{text}"
    );
    let e = Overrides::from_vars([("FUSEBOX_BREAKER", "ob-db; timeout")]).unwrap_err();
    assert!(e.to_string().contains("key=value"), "{e}");
}

#[tokio::test(start_paused = true)]
async fn the_guides_toml_overrides_apply_to_a_keyed_breaker_and_a_bulkhead_with_source_file() {
    let file: Overrides = toml::from_str(
        r#"
[breakers."ob-tenant/*"]
failure_rate = 30
timeout = "2s"
[bulkheads.ob-db-pool]
pool = 40
"#,
    )
    .unwrap();
    Bulkhead::builder("ob-db-pool").pool(4).build().unwrap();
    let applied = registry().apply_overrides(&file).unwrap();
    assert!(
        applied.undeclared.iter().all(|u| u.name != "ob-db-pool"),
        "{applied:?}"
    );
    let pool = registry().bulkhead("ob-db-pool").unwrap();
    assert_eq!(pool.pool(), 40);
    assert_eq!(
        in_force(&pool.settings_in_force(), "pool"),
        ("40".into(), Source::File)
    );
    by_tenant("eu").await.unwrap();
    let eu = registry().breaker("ob-tenant/eu").unwrap();
    assert_eq!(
        in_force(&eu.settings_in_force(), "failure_rate"),
        ("30".into(), Source::File)
    );
    assert_eq!(eu.config_in_force().timeout(), Some(Duration::from_secs(2)));
}

#[breaker(name = "ob-tenant", key = tenant, timeout = "800ms")]
async fn by_tenant(tenant: &str) -> Result<(), DepError> {
    let _ = tenant;
    Ok(())
}

#[tokio::test]
async fn a_bad_value_in_a_file_is_the_same_typed_error_as_from_the_environment() {
    Breaker::builder("ob-file-bad").build().unwrap();
    Bulkhead::builder("ob-file-bad-pool")
        .pool(2)
        .build()
        .unwrap();
    for (text, kind, name, key, value) in [
        (
            "[breakers.ob-file-bad]\ntimeout = \"soon\"\n",
            GuardKind::Breaker,
            "ob-file-bad",
            "timeout",
            "soon",
        ),
        (
            "[breakers.ob-file-bad]\nfailure_rate = 0\n",
            GuardKind::Breaker,
            "ob-file-bad",
            "failure_rate",
            "0",
        ),
        (
            "[bulkheads.ob-file-bad-pool]\npool = \"lots\"\n",
            GuardKind::Bulkhead,
            "ob-file-bad-pool",
            "pool",
            "lots",
        ),
    ] {
        let file: Overrides = toml::from_str(text).expect("the shape is right");
        let e = registry().apply_overrides(&file).unwrap_err();
        assert_eq!(
            (
                e.target,
                e.name.as_str(),
                e.key.as_str(),
                e.value.as_str(),
                e.source
            ),
            (kind, name, key, value, Source::File),
            "{text}"
        );
    }
    assert!(toml::from_str::<Overrides>("[breaker.ob-file-bad]\ntimeout = \"1s\"\n").is_err());
    assert_eq!(
        registry()
            .breaker("ob-file-bad")
            .unwrap()
            .config_in_force()
            .timeout(),
        None,
        "nothing applied"
    );
}

#[tokio::test(start_paused = true)]
async fn prometheus_shows_the_overridden_settings_as_the_guide_writes_them() {
    let o = Overrides::new()
        .breaker("ob-prom/*", [("failure_rate", "30")], Source::File)
        .bulkhead("ob-prom-pool", [("pool", "9")], Source::File);
    Bulkhead::builder("ob-prom-pool").pool(4).build().unwrap();
    registry().apply_overrides(&o).unwrap();
    prom_call("eu").await.unwrap();
    registry()
        .bulkhead("ob-prom-pool")
        .unwrap()
        .change_settings([("pool", "12")], Source::Admin, None)
        .unwrap();
    let text = fusebox::metrics::prometheus();
    for line in [
        r#"fusebox_setting_overridden{breaker="ob-prom",key="eu",setting="failure_rate",source="file"} 1"#,
        r#"fusebox_setting_overridden{bulkhead="ob-prom-pool",setting="pool",source="admin"} 1"#,
    ] {
        assert!(text.contains(line), "{line} in\n{text}");
    }
    assert!(
        !text.lines().any(
            |l| l.starts_with("fusebox_setting_overridden{breaker=\"ob-prom\"")
                && l.contains("setting=\"timeout\"")
        ),
        "settings at the code's value have no sample"
    );
}

#[breaker(name = "ob-prom", key = region, timeout = "800ms")]
async fn prom_call(region: &str) -> Result<(), DepError> {
    let _ = region;
    Ok(())
}

#[test]
fn the_simulator_replays_the_overrides_a_process_takes_at_start() {
    use fusebox_sim::replay::{candidate, Setup};
    let file: Overrides =
        toml::from_str("[breakers.\"red*\"]\nopen_for = \"30s\"\nhalf_open_timeout = \"50ms\"\n")
            .unwrap();
    let names = candidate::LIVE.map(|(name, _)| name);
    let o = fusebox_sim::Overrides::new().with_settings_overrides(&file, &names);
    assert_eq!(o.names(), ["redis"], "the pattern met one replay's breaker");
    let mut setup = Setup::default();
    (setup.semian.instances, setup.semian.cycles) = (6, 2);
    let runs = candidate::candidates(&setup, &o).unwrap();
    assert_eq!(runs.len(), 1);
    let shed = &runs[0].figures[0];
    assert_ne!(shed.live, shed.candidate, "{shed:?}");
    // A value the table refuses stops the replay, naming the breaker and the pair.
    let bad: Overrides = toml::from_str("[breakers.redis]\nopen_for = \"soon\"\n").unwrap();
    let o = fusebox_sim::Overrides::new().with_settings_overrides(&bad, &names);
    let e = candidate::candidates(&setup, &o).unwrap_err().to_string();
    assert!(
        e.contains("redis") && e.contains("open_for") && e.contains("soon"),
        "{e}"
    );
}
