//! Layered settings: the code's checked settings with some keys given again as text.
//!
//! An override is read as if its key had been written in the attribute (or the builder) in
//! place of the code's own value of that key, and the whole is checked again by
//! [`RawSettings::check`]: the same table, the same rules between keys, the same words.
//! So `timeout = "2s"` over `#[breaker(timeout = "800ms")]` derives the window, the slow rule
//! and the recovery from 2 s, as `timeout = "2s"` in the attribute would; and a threshold
//! given over a derived detection turns the derivation off, as in the attribute.
//!
//! The code's keys are the ones it wrote, each with the value it checked to
//! (`Settings::as_written`, `written.rs`): a key written with its default or derived value
//! counts, as it does in the attribute (`failure_rate = 50` beside `timeout` derives no slow
//! rule, and keeps deriving none under `timeout = "1s"` given over it).

use std::fmt;
use std::time::Duration;

use crate::breaker::Settings;
use crate::bulkhead::{BulkheadSettings, PoolLimit, RawBulkheadSettings};
use crate::policies::{HalfOpenPolicy, SlowRule, WindowKind};
use crate::raw::RawSettings;
use crate::ConfigError;

/// Where the value of a setting in force came from.
///
/// ```
/// use fusebox::settings::Source;
/// assert_eq!(Source::Env.as_str(), "env");
/// assert_eq!("fleet".parse::<Source>(), Ok(Source::Fleet));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(rename_all = "snake_case")
)]
pub enum Source {
    /// The attribute's (or the builder's) value, or the default it left.
    #[default]
    Code,
    /// An override read from the environment at start.
    Env,
    /// An override read from a configuration file (any serde format) at start.
    File,
    /// A live change through the admin router.
    Admin,
    /// A live change fleet-wide, through Redis.
    Fleet,
}

impl Source {
    /// Every source.
    pub const ALL: [Source; 5] = [
        Source::Code,
        Source::Env,
        Source::File,
        Source::Admin,
        Source::Fleet,
    ];

    /// The lower-case name used in metrics, JSON and the admin API.
    pub const fn as_str(self) -> &'static str {
        match self {
            Source::Code => "code",
            Source::Env => "env",
            Source::File => "file",
            Source::Admin => "admin",
            Source::Fleet => "fleet",
        }
    }
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Source {
    type Err = ConfigError;
    fn from_str(s: &str) -> Result<Source, ConfigError> {
        Source::ALL
            .into_iter()
            .find(|x| x.as_str() == s)
            .ok_or_else(|| ConfigError::OutOfRange {
                field: "source",
                value: s.into(),
                expected: "one of code, env, file, admin, fleet",
            })
    }
}

/// A duration as the settings' text writes it, from the largest unit down (`"1m30s"`,
/// `"800ms"`, `"0ms"`), so [`parse_duration`](crate::parse_duration) reads it back exactly.
///
/// ```
/// use std::time::Duration;
/// use fusebox_settings::{duration_text, parse_duration};
/// assert_eq!(duration_text(Duration::from_millis(90_500)), "1m30s500ms");
/// let d = Duration::from_nanos(3_600_000_000_123);
/// assert_eq!(parse_duration(&duration_text(d)), Ok(d));
/// ```
pub fn duration_text(d: Duration) -> String {
    const UNITS: [(&str, u128); 6] = [
        ("h", 3_600_000_000_000),
        ("m", 60_000_000_000),
        ("s", 1_000_000_000),
        ("ms", 1_000_000),
        ("us", 1_000),
        ("ns", 1),
    ];
    let mut left = d.as_nanos();
    if left == 0 {
        return "0ms".into();
    }
    let mut out = String::new();
    for (unit, size) in UNITS {
        if left >= size {
            out.push_str(&format!("{}{unit}", left / size));
            left %= size;
        }
    }
    out
}

impl Settings {
    /// These settings with `pairs` given again as text, each as if written in the attribute
    /// instead of the code's value of that key; checked as a whole by
    /// [`RawSettings::check`]. Each value is refused on its own first with
    /// [`RawSettings::set_text`]'s error (an unknown key, a key given twice, a bad value).
    ///
    /// A key of one kind replaces the code's key of the other: `window` replaces
    /// `window_calls`, `slow` or a `trip_pNN` replaces the code's slow rule, `half_open_calls`
    /// replaces the half-open share and the other way round.
    ///
    /// ```
    /// use std::time::Duration;
    /// use fusebox_settings::{ConfigError, RawSettings, WindowKind};
    /// let ms = Duration::from_millis;
    /// let code = RawSettings::new().timeout(ms(800)).check().unwrap();
    /// let s = code.with_overrides([("timeout", "2s")]).unwrap();
    /// assert_eq!(s.timeout(), Some(ms(2000)));
    /// assert_eq!(s.slow().unwrap().bound, ms(1000), "derived from the new timeout");
    /// let s = code.with_overrides([("window", "10s")]).unwrap();
    /// assert_eq!(s.window(), WindowKind::Time(ms(10_000)));
    /// let e = code.with_overrides([("failure_rate", "0")]).unwrap_err();
    /// assert!(matches!(e, ConfigError::OutOfRange { field: "failure_rate", .. }));
    /// ```
    pub fn with_overrides<K, V>(
        &self,
        pairs: impl IntoIterator<Item = (K, V)>,
    ) -> Result<Settings, ConfigError>
    where
        K: AsRef<str>,
        V: AsRef<str>,
    {
        let mut given = RawSettings::new();
        for (k, v) in pairs {
            given.set_text(k.as_ref(), v.as_ref())?;
        }
        self.as_written().overlaid(&given).check()
    }

    /// Every setting in force as `(key, value)` text, in the table's order, as an override
    /// or the attribute would write it; keys that are off (no timeout, no slow rule, no
    /// probes) are left out. [`with_overrides`](Self::with_overrides) of these pairs on
    /// any settings gives these settings back (bar what was derived from `timeout`).
    ///
    /// ```
    /// use std::time::Duration;
    /// use fusebox_settings::RawSettings;
    /// let s = RawSettings::new().trip_p95(Duration::from_millis(500)).check().unwrap();
    /// let text = s.to_text();
    /// assert!(text.contains(&("trip_p95", "500ms".to_string())));
    /// assert!(text.contains(&("failure_rate", "50".to_string())));
    /// ```
    pub fn to_text(&self) -> Vec<(&'static str, String)> {
        let d = duration_text;
        let mut v: Vec<(&'static str, String)> =
            vec![("failure_rate", self.failure_rate.to_string())];
        match self.window {
            WindowKind::Time(w) => v.push(("window", d(w))),
            WindowKind::Calls(n) => v.push(("window_calls", n.to_string())),
        }
        v.push(("min_calls", self.min_calls.to_string()));
        if let Some(r) = self.slow {
            match trip_key(r) {
                Some(k) => v.push((k, d(r.bound))),
                None => {
                    v.push(("slow", d(r.bound)));
                    v.push(("slow_rate", r.rate.to_string()));
                }
            }
        }
        if let Some(t) = self.timeout {
            v.push(("timeout", d(t)));
        }
        if let Some(t) = self.half_open_timeout {
            v.push(("half_open_timeout", d(t)));
        }
        if let Some(t) = self.half_open_slow_given() {
            v.push(("half_open_slow", d(t)));
        }
        v.push(("open_for", d(self.open_for)));
        if self.backoff > 1.0 || self.open_for_max != self.open_for {
            v.push(("backoff", self.backoff.to_string()));
            v.push(("open_for_max", d(self.open_for_max)));
        }
        match self.half_open {
            HalfOpenPolicy::Share { pct, window } => {
                v.push(("half_open_pct", pct.to_string()));
                v.push(("half_open_window", d(window)));
            }
            HalfOpenPolicy::Calls(n) => v.push(("half_open_calls", n.to_string())),
        }
        v.push(("alert_after", d(self.alert_after)));
        v.push(("max_keys", self.max_keys.to_string()));
        if let Some(p) = self.probe_every() {
            v.push(("probe_every", d(p)));
        }
        if let Some(r) = self.ramp() {
            v.push(("ramp", d(r)));
        }
        v
    }
}

/// `trip_pNN` for a strict rule of a whole percentile.
fn trip_key(r: SlowRule) -> Option<&'static str> {
    if !r.strict {
        return None;
    }
    match 100 - u32::from(r.rate) {
        50 => Some("trip_p50"),
        90 => Some("trip_p90"),
        95 => Some("trip_p95"),
        99 => Some("trip_p99"),
        _ => None,
    }
}

impl RawSettings {
    /// The slow rule replaced by `rule` (a `trip_pNN` for a strict one).
    pub(crate) fn with_rule(self, rule: Option<SlowRule>) -> RawSettings {
        let mut raw = self.without_rule();
        if let Some(r) = rule {
            raw = if r.strict {
                raw.trip_percentile(100 - r.rate, r.bound)
            } else {
                raw.slow(r.bound, r.rate)
            };
        }
        raw
    }
}

impl BulkheadSettings {
    /// These settings with `pairs` given again as text, as
    /// [`Settings::with_overrides`]: each as if written in `#[bulkhead]` instead of the
    /// code's value, checked by [`RawBulkheadSettings::check`]. `limit = "fixed"` drops an
    /// adaptive pool's bounds.
    ///
    /// ```
    /// use std::time::Duration;
    /// use fusebox_settings::{ConfigError, RawBulkheadSettings};
    /// let code = RawBulkheadSettings::new().pool(10).check().unwrap();
    /// let s = code.with_overrides([("pool", "4"), ("max_wait", "50ms")]).unwrap();
    /// assert_eq!((s.pool(), s.max_wait()), (4, Duration::from_millis(50)));
    /// let e = code.with_overrides([("pool", "0")]).unwrap_err();
    /// assert!(matches!(e, ConfigError::OutOfRange { field: "pool", .. }));
    /// ```
    pub fn with_overrides<K, V>(
        &self,
        pairs: impl IntoIterator<Item = (K, V)>,
    ) -> Result<BulkheadSettings, ConfigError>
    where
        K: AsRef<str>,
        V: AsRef<str>,
    {
        let mut given = RawBulkheadSettings::new();
        for (k, v) in pairs {
            given.set_text(k.as_ref(), v.as_ref())?;
        }
        let mut raw = RawBulkheadSettings::new()
            .pool(self.pool)
            .max_wait(self.max_wait);
        if let PoolLimit::Adaptive { min_pool, max_pool } = self.limit {
            raw = raw.adaptive().min_pool(min_pool).max_pool(max_pool);
        }
        raw.overlaid(&given).check()
    }

    /// Every setting in force as `(key, value)` text: `pool`, `max_wait`, and for an adaptive
    /// pool `limit`, `min_pool` and `max_pool`.
    ///
    /// ```
    /// use fusebox_settings::RawBulkheadSettings;
    /// let s = RawBulkheadSettings::new().pool(8).check().unwrap();
    /// assert_eq!(s.to_text(), [("pool", "8".to_string()), ("max_wait", "0ms".to_string())]);
    /// ```
    pub fn to_text(&self) -> Vec<(&'static str, String)> {
        let mut v = vec![
            ("pool", self.pool.to_string()),
            ("max_wait", duration_text(self.max_wait)),
        ];
        if let PoolLimit::Adaptive { min_pool, max_pool } = self.limit {
            v.push(("limit", "adaptive".into()));
            v.push(("min_pool", min_pool.to_string()));
            v.push(("max_pool", max_pool.to_string()));
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn the_code_settings_are_recovered_exactly() {
        let cases = [
            RawSettings::new(),
            RawSettings::new().timeout(ms(800)),
            RawSettings::new().timeout(ms(800)).failure_rate(30),
            RawSettings::new().timeout(ms(800)).open_for(ms(5000)),
            RawSettings::new().window_calls(10).trip_p95(ms(500)),
            RawSettings::new()
                .slow(ms(300), 20)
                .half_open_calls(3)
                .backoff(2.0, ms(60_000)),
            RawSettings::new().probe_every(ms(1000)).ramp(ms(2000)),
        ];
        for raw in cases {
            let s = raw.check().unwrap();
            assert_eq!(s.as_written().check().unwrap(), s, "{raw:?}");
            assert_eq!(s.with_overrides::<&str, &str>([]).unwrap(), s, "{raw:?}");
        }
    }

    #[test]
    fn an_override_is_read_as_if_written_in_the_attribute() {
        let code = RawSettings::new().timeout(ms(800)).check().unwrap();
        let over = code.with_overrides([("timeout", "2s")]).unwrap();
        assert_eq!(over, RawSettings::new().timeout(ms(2000)).check().unwrap());
        let over = code.with_overrides([("failure_rate", "80")]).unwrap();
        let written = RawSettings::new().timeout(ms(800)).failure_rate(80);
        assert_eq!(over, written.check().unwrap());
    }

    #[test]
    fn a_key_of_one_kind_replaces_the_other() {
        let code = RawSettings::new()
            .window_calls(10)
            .slow(ms(300), 20)
            .check()
            .unwrap();
        let s = code
            .with_overrides([("window", "5s"), ("trip_p99", "1s")])
            .unwrap();
        assert_eq!(s.window(), WindowKind::Time(ms(5000)));
        assert_eq!(s.slow().unwrap().rate, 1);
        let s = code.with_overrides([("slow_rate", "50")]).unwrap();
        assert_eq!(
            s.slow().unwrap(),
            SlowRule {
                bound: ms(300),
                rate: 50,
                strict: false
            }
        );
        // And `slow` alone moves the bound, keeping the code's rate (a review: it was refused
        // for want of `slow_rate`, so loosening the bound took both keys).
        let s = code.with_overrides([("slow", "800ms")]).unwrap();
        assert_eq!(
            s.slow().unwrap(),
            SlowRule {
                bound: ms(800),
                rate: 20,
                strict: false
            }
        );
        // Over a percentile rule, `slow` is a rule of the other form: it needs its rate.
        let p95 = RawSettings::new().trip_p95(ms(300)).check().unwrap();
        assert!(p95.with_overrides([("slow", "800ms")]).is_err());
        assert_eq!(
            p95.with_overrides([("slow", "800ms"), ("slow_rate", "10")])
                .unwrap()
                .slow()
                .unwrap()
                .rate,
            10
        );
    }

    #[test]
    fn bad_overrides_get_the_tables_words() {
        let code = Settings::default();
        let e = code.with_overrides([("timeout", "fast")]).unwrap_err();
        assert_eq!(
            e,
            ConfigError::BadDuration {
                text: "fast".into()
            }
        );
        let e = code.with_overrides([("tiemout", "1s")]).unwrap_err();
        assert!(matches!(e, ConfigError::UnknownSetting { .. }));
        let e = code.with_overrides([("pool", "3")]).unwrap_err();
        assert!(matches!(e, ConfigError::UnknownSetting { .. }));
        let e = code.with_overrides([("slow", "1s")]).unwrap_err();
        assert!(matches!(
            e,
            ConfigError::OutOfRange {
                field: "slow_rate",
                ..
            }
        ));
    }

    #[test]
    fn to_text_round_trips() {
        for raw in [
            RawSettings::new().timeout(ms(800)),
            RawSettings::new()
                .window_calls(10)
                .trip_p95(ms(500))
                .half_open_calls(2),
            RawSettings::new().backoff(1.5, ms(90_000)).slow(ms(1), 3),
        ] {
            let s = raw.check().unwrap();
            let mut every = RawSettings::new();
            for (k, v) in s.to_text() {
                every.set_text(k, &v).unwrap();
            }
            assert_eq!(every.check().unwrap().to_text(), s.to_text());
        }
        let b = RawBulkheadSettings::new()
            .adaptive()
            .max_pool(50)
            .check()
            .unwrap();
        let over = b.with_overrides(b.to_text()).unwrap();
        assert_eq!(over, b);
        let fixed = b.with_overrides([("limit", "fixed")]).unwrap();
        assert_eq!(fixed.limit(), PoolLimit::Fixed);
    }
}
