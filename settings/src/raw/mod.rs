//! [`RawSettings`]: a breaker's settings as given, and the one check that validates them.

mod check;

use crate::written::{self, Written};
use std::time::Duration;

use crate::keys::{self, Key, Value};
use crate::{ConfigError, Settings};

/// A breaker's settings as given, from typed setters (the builder), from text (a settings
/// file, the environment) or from an attribute's literals, each key at most once.
/// [`check`](Self::check) is the one verdict for all of them.
///
/// Typed setters store the value and leave every check to `check`; [`set_text`](Self::set_text)
/// also refuses a value that is bad on its own at once, with the same error `check` gives.
///
/// ```
/// use std::time::Duration;
/// use fusebox_settings::{ConfigError, RawSettings};
/// let raw = RawSettings::new().window(Duration::from_secs(10)).window_calls(20);
/// assert_eq!(
///     raw.check(),
///     Err(ConfigError::Conflict { first: "window", second: "window_calls" })
/// );
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq)]
#[must_use]
pub struct RawSettings {
    failure_rate: Option<u64>,
    window: Option<Duration>,
    window_calls: Option<u64>,
    min_calls: Option<u64>,
    slow: Option<Duration>,
    slow_rate: Option<u64>,
    /// `trip_pNN` as (percentile, bound).
    trip: Option<(u64, Duration)>,
    /// Slow-call rules given (`slow`, `trip_p*`): more than one is a conflict.
    rules: u8,
    timeout: Option<Duration>,
    half_open_timeout: Option<Duration>,
    half_open_slow: Option<Duration>,
    open_for: Option<Duration>,
    backoff: Option<f64>,
    open_for_max: Option<Duration>,
    half_open_pct: Option<u64>,
    half_open_window: Option<Duration>,
    half_open_calls: Option<u64>,
    alert_after: Option<Duration>,
    max_keys: Option<u64>,
    probe_every: Option<Duration>,
    ramp: Option<Duration>,
    /// Keys given as text, one bit per key of `Key::all()`, to refuse a key given twice.
    texts: u32,
}

impl RawSettings {
    /// No setting given: [`check`](Self::check) returns the defaults.
    pub fn new() -> Self {
        Self::default()
    }

    /// Percent of failed calls in the window that opens the breaker (1..=100, default 50).
    pub fn failure_rate(mut self, pct: u8) -> Self {
        self.failure_rate = Some(pct.into());
        self
    }
    /// Time-based sliding window (default 30 s).
    pub fn window(mut self, d: Duration) -> Self {
        self.window = Some(d);
        self
    }
    /// Count-based window: the last `n` calls (1..=1 000 000).
    pub fn window_calls(mut self, n: u32) -> Self {
        self.window_calls = Some(n.into());
        self
    }
    /// Calls in the window before any rate is judged (default 20, or the window size if smaller).
    pub fn min_calls(mut self, n: u32) -> Self {
        self.min_calls = Some(n.into());
        self
    }
    /// A call at least `bound` long is slow; `rate` percent slow calls open the breaker.
    pub fn slow(mut self, bound: Duration, rate: u8) -> Self {
        self.rules = self.rules.saturating_add(1);
        self.slow = Some(bound);
        self.slow_rate = Some(rate.into());
        self
    }
    /// Open when the latency percentile `pct` (1..=99) exceeds `bound`.
    pub fn trip_percentile(mut self, pct: u8, bound: Duration) -> Self {
        self.rules = self.rules.saturating_add(1);
        self.trip = Some((pct.into(), bound));
        self
    }
    /// `trip_percentile(50, bound)`.
    pub fn trip_p50(self, bound: Duration) -> Self {
        self.trip_percentile(50, bound)
    }
    /// `trip_percentile(90, bound)`.
    pub fn trip_p90(self, bound: Duration) -> Self {
        self.trip_percentile(90, bound)
    }
    /// `trip_percentile(95, bound)`.
    pub fn trip_p95(self, bound: Duration) -> Self {
        self.trip_percentile(95, bound)
    }
    /// `trip_percentile(99, bound)`.
    pub fn trip_p99(self, bound: Duration) -> Self {
        self.trip_percentile(99, bound)
    }
    /// Per-call timeout. The settings left unset are derived from it: see
    /// [`defaults`](crate::defaults)' `DERIVED_*` and [`check`](Self::check).
    pub fn timeout(mut self, d: Duration) -> Self {
        self.timeout = Some(d);
        self
    }
    /// Timeout of trial calls in half-open (default: 4 × `timeout` when no recovery setting
    /// is given, at most twice an explicit slow rule's trial bound and never under
    /// `timeout`; otherwise `timeout`).
    pub fn half_open_timeout(mut self, d: Duration) -> Self {
        self.half_open_timeout = Some(d);
        self
    }
    /// The latency at which a half-open trial counts as slow (default: the slow rule's bound):
    /// a looser bound lets a dependency that warms up by serving requests recover, while one
    /// still slow keeps the breaker open. Needs a slow rule (`slow`, `trip_pNN`).
    pub fn half_open_slow(mut self, d: Duration) -> Self {
        self.half_open_slow = Some(d);
        self
    }
    /// For a keyed breaker: at most `n` keys get a breaker of their own (1..=1000000,
    /// default 1000); past that, idle keys make room or new keys share `name/_overflow`.
    pub fn max_keys(mut self, n: u32) -> Self {
        self.max_keys = Some(n.into());
        self
    }
    /// While open, let one real call through as a probe every `d` (off by default; derived
    /// from `timeout` when no recovery setting is given, backing off: see
    /// [`defaults::DERIVED_PROBE_EVERY`](crate::defaults::DERIVED_PROBE_EVERY)): a probe
    /// that passes (answers, not slow by the trial bound) starts half-open at once, so the
    /// breaker learns of a recovery within `d` rather than at the end of the open period. A
    /// failed probe changes nothing: `open_for` stays the upper bound. Must be shorter than
    /// the longest open period (`open_for`, or `open_for_max` with `backoff`).
    pub fn probe_every(mut self, d: Duration) -> Self {
        self.probe_every = Some(d);
        self
    }
    /// After half-open passes, grow the admitted share from the half-open share to 100 %
    /// linearly over `d` (off by default: all traffic at once; 5 s derived from `timeout` when
    /// no recovery setting is given), judged by the whole rule all
    /// along; a breach reopens at once.
    pub fn ramp(mut self, d: Duration) -> Self {
        self.ramp = Some(d);
        self
    }
    /// Time open before half-open (default 30 s).
    pub fn open_for(mut self, d: Duration) -> Self {
        self.open_for = Some(d);
        self
    }
    /// Grow repeated open periods by `factor`, never beyond `max`.
    pub fn backoff(mut self, factor: f64, max: Duration) -> Self {
        self.backoff = Some(factor);
        self.open_for_max = Some(max);
        self
    }
    /// Share of traffic admitted in half-open, in percent (default 5).
    pub fn half_open_pct(mut self, pct: u8) -> Self {
        self.half_open_pct = Some(pct.into());
        self
    }
    /// How long half-open samples before judging (default 30 s).
    pub fn half_open_window(mut self, d: Duration) -> Self {
        self.half_open_window = Some(d);
        self
    }
    /// Instead of a share: `n` trial calls, all of which must succeed.
    pub fn half_open_calls(mut self, n: u32) -> Self {
        self.half_open_calls = Some(n.into());
        self
    }
    /// A breaker away from closed longer than this is `stuck` (default 5 min).
    pub fn alert_after(mut self, d: Duration) -> Self {
        self.alert_after = Some(d);
        self
    }

    /// Sets `key` from text: `"800ms"` for durations, integers for percentages and counts,
    /// a number for `backoff`. Refuses an unknown key, a key given twice, and a value that
    /// is bad on its own; rules between keys wait for [`check`](Self::check). Key and value
    /// are trimmed first: in `timeout = 800ms ` or `TIMEOUT=" 800ms"` the spaces are the
    /// file's or the shell's layout, not part of the value.
    ///
    /// ```
    /// use fusebox_settings::{ConfigError, RawSettings};
    /// let mut raw = RawSettings::new();
    /// raw.set_text("half_open_pct", "10").unwrap();
    /// assert!(matches!(raw.set_text("windows", "30s"), Err(ConfigError::UnknownSetting { .. })));
    /// assert!(matches!(raw.set_text("timeout", "800"), Err(ConfigError::BadDuration { .. })));
    /// raw.set_text(" timeout ", " 800ms ").unwrap();
    /// ```
    pub fn set_text(&mut self, key: &str, text: &str) -> Result<(), ConfigError> {
        let (key, text) = keys::text_pair(key, text);
        let k = Key::from_name(key)
            .filter(|k| keys::BREAKER_KEYS.contains(&k.name()))
            .ok_or_else(|| ConfigError::UnknownSetting { key: key.into() })?;
        let bit = 1u32 << Key::all().iter().position(|a| *a == k).unwrap_or(31);
        if self.texts & bit != 0 {
            return Err(ConfigError::Conflict {
                first: k.name(),
                second: k.name(),
            });
        }
        let v = k.parse(text)?;
        self.texts |= bit;
        let (int, dur, float) = match v {
            Value::Int(n) => (Some(n), None, None),
            Value::Duration(d) => (None, Some(d), None),
            Value::Float(f) => (None, None, Some(f)),
            Value::Word(_) => (None, None, None),
        };
        let trip = |pct| Some((pct, dur.unwrap_or_default()));
        match k {
            Key::FailureRate => self.failure_rate = int,
            Key::Window => self.window = dur,
            Key::WindowCalls => self.window_calls = int,
            Key::MinCalls => self.min_calls = int,
            Key::Slow => {
                self.rules = self.rules.saturating_add(1);
                self.slow = dur;
            }
            Key::SlowRate => self.slow_rate = int,
            Key::TripP50 | Key::TripP90 | Key::TripP95 | Key::TripP99 => {
                self.rules = self.rules.saturating_add(1);
                self.trip = trip(match k {
                    Key::TripP50 => 50,
                    Key::TripP90 => 90,
                    Key::TripP95 => 95,
                    _ => 99,
                });
            }
            Key::Timeout => self.timeout = dur,
            Key::HalfOpenTimeout => self.half_open_timeout = dur,
            Key::HalfOpenSlow => self.half_open_slow = dur,
            Key::OpenFor => self.open_for = dur,
            Key::Backoff => self.backoff = float,
            Key::OpenForMax => self.open_for_max = dur,
            Key::HalfOpenPct => self.half_open_pct = int,
            Key::HalfOpenWindow => self.half_open_window = dur,
            Key::HalfOpenCalls => self.half_open_calls = int,
            Key::AlertAfter => self.alert_after = dur,
            Key::MaxKeys => self.max_keys = int,
            Key::ProbeEvery => self.probe_every = dur,
            Key::Ramp => self.ramp = dur,
            // Filtered to breaker keys above: the others belong to other attributes.
            Key::Pool
            | Key::MaxWait
            | Key::Limit
            | Key::MinPool
            | Key::MaxPool
            | Key::Attempts
            | Key::RetryBackoff
            | Key::BackoffMax
            | Key::Budget
            | Key::BudgetFloor
            | Key::BudgetWindow
            | Key::Total => {}
        }
        Ok(())
    }

    /// Every `(key, value)` pair through [`set_text`](Self::set_text), then
    /// [`check`](Self::check): the first error in the order given, else the settings.
    ///
    /// ```
    /// use fusebox_settings::RawSettings;
    /// let s = RawSettings::from_text([("slow", "1s"), ("slow_rate", "20")]).unwrap();
    /// assert_eq!(s.slow().unwrap().rate, 20);
    /// ```
    pub fn from_text<K, V>(pairs: impl IntoIterator<Item = (K, V)>) -> Result<Settings, ConfigError>
    where
        K: AsRef<str>,
        V: AsRef<str>,
    {
        let mut raw = RawSettings::new();
        for (k, v) in pairs {
            raw.set_text(k.as_ref(), v.as_ref())?;
        }
        raw.check()
    }
}

impl RawSettings {
    /// The keys given, as [`Written`] bits (`written.rs`).
    pub(crate) fn written(&self) -> Written {
        let given = [
            (self.failure_rate.is_some(), written::FAILURE_RATE),
            (self.window.is_some(), written::WINDOW),
            (self.window_calls.is_some(), written::WINDOW_CALLS),
            (self.min_calls.is_some(), written::MIN_CALLS),
            (
                self.slow.is_some() || self.slow_rate.is_some() || self.trip.is_some(),
                written::RULE,
            ),
            (self.timeout.is_some(), written::TIMEOUT),
            (self.half_open_timeout.is_some(), written::HALF_OPEN_TIMEOUT),
            (self.half_open_slow.is_some(), written::HALF_OPEN_SLOW),
            (self.open_for.is_some(), written::OPEN_FOR),
            (
                self.backoff.is_some() || self.open_for_max.is_some(),
                written::BACKOFF,
            ),
            (self.half_open_pct.is_some(), written::HALF_OPEN_PCT),
            (self.half_open_window.is_some(), written::HALF_OPEN_WINDOW),
            (self.half_open_calls.is_some(), written::HALF_OPEN_CALLS),
            (self.alert_after.is_some(), written::ALERT_AFTER),
            (self.max_keys.is_some(), written::MAX_KEYS),
            (self.probe_every.is_some(), written::PROBE_EVERY),
            (self.ramp.is_some(), written::RAMP),
        ];
        Written(
            given
                .iter()
                .filter(|(g, _)| *g)
                .fold(0, |w, (_, bit)| w | bit),
        )
    }
}

// Layering (`overrides.rs`): kept here, beside the fields it reads.
impl RawSettings {
    /// `self` with every key `over` holds written over it; a key of one kind drops the
    /// other kind's (see `Settings::with_overrides`).
    pub(crate) fn overlaid(mut self, over: &RawSettings) -> RawSettings {
        macro_rules! take {
            ($($f:ident),*) => {$( if over.$f.is_some() { self.$f = over.$f; } )*};
        }
        if over.window.is_some() || over.window_calls.is_some() {
            self.window = None;
            self.window_calls = None;
        }
        if over.rules > 0 {
            // `slow` alone over the code's `slow` + `slow_rate` moves the bound and keeps the
            // rate, as `slow_rate` alone keeps the bound: each is one setting of the rule.
            let general = over.trip.is_none() && self.trip.is_none() && self.slow.is_some();
            let rate = self
                .slow_rate
                .filter(|_| general && over.slow_rate.is_none());
            self = self.without_rule();
            self.rules = over.rules;
            self.slow_rate = rate;
        }
        if over.half_open_calls.is_some() {
            self.half_open_pct = None;
            self.half_open_window = None;
        }
        if over.half_open_pct.is_some() || over.half_open_window.is_some() {
            self.half_open_calls = None;
        }
        take!(
            failure_rate,
            window,
            window_calls,
            min_calls,
            slow,
            slow_rate,
            trip,
            timeout,
            half_open_timeout,
            half_open_slow,
            open_for,
            backoff,
            open_for_max,
            half_open_pct,
            half_open_window,
            half_open_calls,
            alert_after,
            max_keys,
            probe_every,
            ramp
        );
        self
    }

    /// No slow rule given.
    pub(crate) fn without_rule(mut self) -> RawSettings {
        self.slow = None;
        self.slow_rate = None;
        self.trip = None;
        self.rules = 0;
        self
    }
}
