//! The breaker's live-settings API (issue 29): what is in force and where it came from, a
//! change while running (admin, fleet, `promote_shadow`), its end, and the start's overrides;
//! each builds a [`Layer`](super::Layer) and installs it through the core (`mod.rs`).

use std::sync::Arc;
use std::time::Duration;

use fusebox_settings::{ConfigError, Settings, Source};

use super::{is_change, start_layer, window_text, Layer};
use crate::breaker::core::NEVER;
use crate::breaker::Breaker;
use crate::clock::nanos;
use crate::settings::in_force::SettingInForce;
use crate::settings::BreakerConfig;

impl Breaker {
    /// Every setting in force, with the code's value and where the one in force came from
    /// (issue 29): the code, the start's overrides (environment, file), or a live change
    /// (admin, fleet).
    ///
    /// ```
    /// use fusebox::Breaker;
    /// use fusebox::settings::Source;
    /// let b = Breaker::builder("in-force-breaker-doc").build_detached().unwrap();
    /// b.change_settings([("failure_rate", "80")], Source::Admin, None).unwrap();
    /// let rate = b.settings_in_force().into_iter().find(|s| s.key == "failure_rate").unwrap();
    /// assert_eq!((rate.value.as_str(), rate.code.as_deref(), rate.source), ("80", Some("50"), Source::Admin));
    /// ```
    pub fn settings_in_force(&self) -> Vec<SettingInForce> {
        self.0.settings_in_force(self.0.clock().now()).to_vec()
    }

    /// The settings in force (the code's, or an override's), under the breaker's name.
    ///
    /// ```
    /// use fusebox::Breaker;
    /// use fusebox::settings::Source;
    /// let b = Breaker::builder("config-in-force-doc").build_detached().unwrap();
    /// b.change_settings([("timeout", "2s")], Source::Admin, None).unwrap();
    /// assert_eq!(b.config_in_force().timeout(), Some(std::time::Duration::from_secs(2)));
    /// assert_eq!(b.config().timeout(), None, "`config` stays the code's");
    /// ```
    pub fn config_in_force(&self) -> BreakerConfig {
        let core = &*self.0;
        core.lapse_live(core.clock().now());
        core.config().clone()
    }

    /// Changes settings while the breaker runs (issue 29): `pairs` as the attribute writes
    /// them, each read as if written in the attribute over the settings in force below this
    /// change (the start's overrides, else the code's), checked whole by the settings table;
    /// a bad one changes nothing and is the error. Replaces the previous live change, if any.
    /// `for_` lapses it (lazily, as a forced state's), and the settings below return.
    ///
    /// Calls in flight finish under the settings that admitted them; the state is kept; a new
    /// threshold is judged at the next call; a new window kind or size starts a new window.
    /// Logged at WARN. The admin router and the fleet call this.
    ///
    /// ```
    /// use std::time::Duration;
    /// use fusebox::Breaker;
    /// use fusebox::settings::{ConfigError, Source};
    /// let b = Breaker::builder("change-doc").timeout(Duration::from_millis(800)).build_detached().unwrap();
    /// let e = b.change_settings([("failure_rate", "0")], Source::Admin, None).unwrap_err();
    /// assert!(matches!(e, ConfigError::OutOfRange { field: "failure_rate", .. }));
    /// b.change_settings([("timeout", "2s")], Source::Admin, Some(Duration::from_secs(60))).unwrap();
    /// assert_eq!(b.config_in_force().timeout(), Some(Duration::from_secs(2)));
    /// b.clear_settings_change();
    /// assert_eq!(b.config_in_force().timeout(), Some(Duration::from_millis(800)));
    /// ```
    pub fn change_settings<K, V>(
        &self,
        pairs: impl IntoIterator<Item = (K, V)>,
        source: Source,
        for_: Option<Duration>,
    ) -> Result<(), ConfigError>
    where
        K: AsRef<str>,
        V: AsRef<str>,
    {
        let pairs: Vec<(String, String)> = crate::settings::text::trimmed_pairs(pairs);
        self.change_settings_to(pairs, None, source, for_)
    }

    /// [`change_settings`](Self::change_settings) with `pairs` naming what changed and, when
    /// given, `exact` the whole settings to put in force (a promoted shadow's).
    pub(crate) fn change_settings_to(
        &self,
        pairs: Vec<(String, String)>,
        exact: Option<&Settings>,
        source: Source,
        for_: Option<Duration>,
    ) -> Result<(), ConfigError> {
        let core = &*self.0;
        let now = core.clock().now();
        loop {
            core.lapse_live(now);
            let cur = core.live.get();
            let below = start_layer(&cur);
            let until = for_.map_or(NEVER, |d| now.saturating_add(nanos(d)));
            let layer = core.layer(below, &[], pairs.clone(), source, until, exact)?;
            let window = window_text(layer.config.window());
            if core.install(cur.as_ref(), Some(Arc::new(layer)), now) {
                tracing::warn!(
                    breaker = %core.code_config().name,
                    %source,
                    settings = ?pairs,
                    r#for = ?for_,
                    %window,
                    "circuit breaker settings changed while running"
                );
                return Ok(());
            }
        }
    }

    /// Ends the live change (admin or fleet), if any: the start's overrides, else the code's
    /// settings, return. Returns whether one was in force (the example of
    /// [`change_settings`](Self::change_settings) ends one).
    pub fn clear_settings_change(&self) -> bool {
        self.clear_change_where(is_change)
    }

    /// Ends the live change if it came from `source` (the fleet lifting its own).
    #[cfg_attr(not(feature = "redis"), allow(dead_code))]
    pub(crate) fn clear_change_from(&self, source: Source) -> bool {
        self.clear_change_where(|l| is_change(l) && l.source == source)
    }

    fn clear_change_where(&self, which: impl Fn(&Layer) -> bool) -> bool {
        let core = &*self.0;
        let now = core.clock().now();
        loop {
            let cur = core.live.get();
            let Some(l) = cur.as_ref().filter(|l| which(l)) else {
                return false;
            };
            if core.install(Some(l), l.below.clone(), now) {
                tracing::warn!(breaker = %core.code_config().name, "circuit breaker settings change ended");
                if l.below.is_none() {
                    core.judge_code_settings(now);
                }
                return true;
            }
        }
    }

    /// Sets the start's overrides (environment or file): the layer a live change lies on and
    /// returns to. A live change in force is made again over the new start layer.
    pub(crate) fn override_at_start(
        &self,
        pairs: Vec<(String, String)>,
        sources: Vec<(String, Source)>,
        source: Source,
    ) -> Result<(), ConfigError> {
        let core = &*self.0;
        let now = core.clock().now();
        loop {
            let cur = core.live.get();
            let start = if pairs.is_empty() {
                None
            } else {
                Some(Arc::new(core.layer(
                    None,
                    &sources,
                    pairs.clone(),
                    source,
                    NEVER,
                    None,
                )?))
            };
            let next = match cur.as_ref().filter(|l| is_change(l)) {
                Some(change) => Some(Arc::new(core.layer(
                    start,
                    &[],
                    change.given.clone(),
                    change.source,
                    change.until,
                    None,
                )?)),
                None => start,
            };
            if core.install(cur.as_ref(), next, now) {
                return Ok(());
            }
        }
    }

    /// A live change of `pairs` checked over the settings below it, without applying it.
    #[cfg_attr(not(feature = "redis"), allow(dead_code))]
    pub(crate) fn check_change(&self, pairs: &[(String, String)]) -> Result<(), ConfigError> {
        let below = start_layer(&self.0.live.get());
        let base = below
            .as_ref()
            .map_or(self.0.code_config().settings(), |b| b.config.settings());
        base.with_overrides(pairs.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .map(drop)
    }

    /// The pairs a start override would give, checked without applying them.
    pub(crate) fn check_overrides(&self, pairs: &[(String, String)]) -> Result<(), ConfigError> {
        super::refuse_code_only(pairs, self.0.code_config().max_keys())?;
        let pairs = pairs.iter().map(|(k, v)| (k.as_str(), v.as_str()));
        self.0
            .code_config()
            .settings()
            .with_overrides(pairs)
            .map(drop)
    }
}
