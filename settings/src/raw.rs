//! [`RawSettings`]: a breaker's settings as given, and the one check that validates them.

use crate::written::Given;
use std::time::Duration;

use crate::defaults;
use crate::keys::{self, Key, Value};
use crate::{ConfigError, HalfOpenPolicy, Settings, SlowRule, WindowKind};

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
        let (key, text) = (key.trim(), text.trim());
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

    /// Checks every setting and every rule between them; the first problem is the error.
    ///
    /// With a `timeout`, the settings left unset are derived (issue 26): a window of the last
    /// 100 calls (no window, `window_calls` or `min_calls` given); a slow rule at half the
    /// timeout, 50 % (nor `failure_rate` nor a slow rule given); and, when no recovery setting
    /// is given (`open_for`, `backoff`, `open_for_max`, `half_open_pct`, `half_open_window`,
    /// `half_open_calls`, `probe_every`, `ramp`), the trial timeout, probes that back off, a
    /// 2 s half-open window, a 5 s ramp and open periods doubling up to an hour.
    ///
    /// ```
    /// use std::time::Duration;
    /// use fusebox_settings::{RawSettings, WindowKind};
    /// let ms = Duration::from_millis;
    /// let derived = RawSettings::new().timeout(ms(800)).check().unwrap();
    /// assert_eq!(derived.window(), WindowKind::Calls(100));
    /// assert_eq!(derived.slow().unwrap().bound, ms(400));
    /// assert_eq!(derived.half_open_timeout(), Some(ms(3200)));
    /// // A recovery setting given: the rest of recovery is today's, trials under `timeout`.
    /// let chosen = RawSettings::new().timeout(ms(800)).open_for(ms(60_000)).check().unwrap();
    /// assert_eq!((chosen.probe_every(), chosen.ramp()), (None, None));
    /// assert_eq!(chosen.half_open_timeout(), Some(ms(800)));
    /// ```
    pub fn check(&self) -> Result<Settings, ConfigError> {
        self.pairs()?;
        let failure_rate = pct(Key::FailureRate, self.failure_rate, defaults::FAILURE_RATE)?;
        let window = match (self.window, self.window_calls) {
            (Some(_), Some(_)) => return Err(conflict("window", "window_calls")),
            (_, Some(n)) => WindowKind::Calls(count(Key::WindowCalls, n)?),
            (w, None) => WindowKind::Time(positive(Key::Window, w.unwrap_or(defaults::WINDOW))?),
        };
        // Given a call `timeout` and no window, judge the last calls: see
        // `defaults::DERIVED_WINDOW_CALLS`.
        let window_given =
            self.window.is_some() || self.window_calls.is_some() || self.min_calls.is_some();
        let window = match self.timeout {
            Some(_) if !window_given => WindowKind::Calls(defaults::DERIVED_WINDOW_CALLS),
            _ => window,
        };
        let min_calls = match (self.min_calls, window) {
            (Some(n), w) => {
                let n = count(Key::MinCalls, n)?;
                if matches!(w, WindowKind::Calls(size) if n > size) {
                    return Err(ConfigError::OutOfRange {
                        field: "min_calls",
                        value: n.to_string(),
                        expected: "at most `window_calls`, or the breaker could never judge",
                    });
                }
                n
            }
            (None, WindowKind::Calls(size)) => defaults::MIN_CALLS.min(size),
            (None, WindowKind::Time(_)) => defaults::MIN_CALLS,
        };
        if self.rules > 1 {
            return Err(conflict("slow", "trip_pNN"));
        }
        let given_rule = self.slow_rule()?;
        let timeout = opt_positive(Key::Timeout, self.timeout)?;
        let derived = timeout.map(Derived::of);
        // Detection and recovery are each derived as a whole, and only when none of their
        // settings was given: a user who chose a window, a threshold, an open period or a
        // half-open policy keeps exactly today's behaviour for the rest of it.
        let detection = derived.filter(|_| !window_given && self.failure_rate.is_none());
        let recovery = derived.filter(|_| !self.recovery_given());
        let slow = given_rule.or(detection.map(|d| d.slow));
        let given_half_open_slow = opt_positive(Key::HalfOpenSlow, self.half_open_slow)?;
        let half_open_timeout = match (
            opt_positive(Key::HalfOpenTimeout, self.half_open_timeout)?,
            recovery,
        ) {
            (Some(t), _) => Some(t),
            (None, None) => None,
            (None, Some(d)) => Some(match given_rule {
                None => d.trial_timeout,
                // Judged slow at its trial bound anyway: no longer than twice that bound,
                // never shorter than a normal call's (its caller still wants the answer).
                Some(r) => d
                    .trial_timeout
                    .min(given_half_open_slow.unwrap_or(r.bound).saturating_mul(2))
                    .max(timeout.unwrap_or_default()),
            }),
        };
        let trials_answer =
            given_half_open_slow.is_none() && given_rule.is_none() && slow.is_some();
        let half_open_slow = match given_half_open_slow {
            Some(t) if slow.is_none() => {
                return Err(ConfigError::OutOfRange {
                    field: "half_open_slow",
                    value: format!("{t:?}"),
                    expected: "a slow-call rule for it to loosen (like `trip_p95 = \"500ms\"`, or `slow` with `slow_rate`); add one or remove `half_open_slow`",
                })
            }
            // A derived slow rule judges trials by answering at all within the trial
            // timeout, so a provider that warms by serving requests recovers (seed 000).
            // (The runtime judges them by the slow bound after an opening on slowness alone:
            // `Settings::trials_pass_by_answering`.)
            None if trials_answer => ns(half_open_timeout.or(timeout)),
            t => ns(t),
        };
        let open_for = positive(Key::OpenFor, self.open_for.unwrap_or(defaults::OPEN_FOR))?;
        let (backoff, open_for_max) = match (self.backoff, self.open_for_max) {
            (Some(f), Some(max)) => {
                Key::Backoff.check(Value::Float(f))?;
                let max = positive(Key::OpenForMax, max)?;
                if max < open_for {
                    return Err(ConfigError::OutOfRange {
                        field: "open_for_max",
                        value: format!("{max:?}"),
                        expected: "at least `open_for`",
                    });
                }
                (f, max)
            }
            (None, None) if recovery.is_some() => (
                defaults::DERIVED_BACKOFF,
                defaults::DERIVED_OPEN_FOR_MAX.max(open_for),
            ),
            _ => (defaults::BACKOFF, open_for),
        };
        let half_open = match (self.half_open_calls, self.half_open_pct) {
            (Some(_), Some(_)) => return Err(conflict("half_open_calls", "half_open_pct")),
            (Some(_), None) if self.half_open_window.is_some() => {
                return Err(conflict("half_open_calls", "half_open_window"))
            }
            (Some(n), None) => HalfOpenPolicy::Calls(count(Key::HalfOpenCalls, n)?),
            (None, p) => HalfOpenPolicy::Share {
                pct: pct(Key::HalfOpenPct, p, defaults::HALF_OPEN_PCT)?,
                window: positive(
                    Key::HalfOpenWindow,
                    self.half_open_window.unwrap_or(match recovery {
                        Some(_) => defaults::DERIVED_HALF_OPEN_WINDOW,
                        None => defaults::HALF_OPEN_WINDOW,
                    }),
                )?,
            },
        };
        let alert_after = positive(
            Key::AlertAfter,
            self.alert_after.unwrap_or(defaults::ALERT_AFTER),
        )?;
        let max_keys = count(
            Key::MaxKeys,
            self.max_keys.unwrap_or(defaults::KEYS_PER_NAME.into()),
        )?;
        let probe_every = match opt_positive(Key::ProbeEvery, self.probe_every)? {
            Some(p) if p >= open_for_max => {
                return Err(ConfigError::OutOfRange {
                    field: "probe_every",
                    value: format!("{p:?}"),
                    expected: "shorter than the open period (`open_for`, or `open_for_max` with `backoff`): probes are only sent while open",
                })
            }
            Some(p) => ns(Some(p)),
            // Derived probes only where they fit in the open period.
            None => ns(recovery
                .map(|_| defaults::DERIVED_PROBE_EVERY)
                .filter(|p| *p < open_for_max)),
        };
        let probes_back_off = self.probe_every.is_none() && probe_every != 0;
        let derived = u8::from(probes_back_off) * crate::types::PROBES_BACK_OFF
            + u8::from(given_rule.is_none() && slow.is_some()) * crate::types::REFUSALS_COUNT
            + u8::from(trials_answer) * crate::types::TRIALS_PASS_BY_ANSWERING;
        let ramp =
            ns(opt_positive(Key::Ramp, self.ramp)?.or(recovery.map(|_| defaults::DERIVED_RAMP)));
        Ok(Settings {
            failure_rate,
            window,
            min_calls,
            slow,
            timeout,
            half_open_timeout,
            half_open_slow,
            open_for,
            backoff,
            open_for_max,
            half_open,
            alert_after,
            max_keys,
            probe_every,
            ramp,
            written: self.written(),
            derived,
        })
    }

    /// Which keys are given (`written.rs`).
    pub(crate) fn given(&self) -> Given {
        Given {
            failure_rate: self.failure_rate.is_some(),
            window: self.window.is_some(),
            window_calls: self.window_calls.is_some(),
            min_calls: self.min_calls.is_some(),
            rule: self.slow.is_some() || self.slow_rate.is_some() || self.trip.is_some(),
            timeout: self.timeout.is_some(),
            half_open_timeout: self.half_open_timeout.is_some(),
            half_open_slow: self.half_open_slow.is_some(),
            open_for: self.open_for.is_some(),
            backoff: self.backoff.is_some() || self.open_for_max.is_some(),
            half_open_pct: self.half_open_pct.is_some(),
            half_open_window: self.half_open_window.is_some(),
            half_open_calls: self.half_open_calls.is_some(),
            alert_after: self.alert_after.is_some(),
            max_keys: self.max_keys.is_some(),
            probe_every: self.probe_every.is_some(),
            ramp: self.ramp.is_some(),
        }
    }

    /// Whether any setting of the recovery policy was given: the open period, its growth,
    /// the half-open policy, probes or the ramp.
    fn recovery_given(&self) -> bool {
        self.open_for.is_some()
            || self.backoff.is_some()
            || self.open_for_max.is_some()
            || self.half_open_pct.is_some()
            || self.half_open_window.is_some()
            || self.half_open_calls.is_some()
            || self.probe_every.is_some()
            || self.ramp.is_some()
    }

    /// The settings that only make sense together (text gives them one by one).
    fn pairs(&self) -> Result<(), ConfigError> {
        let given = |k: &str| match k {
            "slow" => self.slow.is_some(),
            "slow_rate" => self.slow_rate.is_some(),
            "backoff" => self.backoff.is_some(),
            _ => self.open_for_max.is_some(),
        };
        for n in &keys::NEEDS {
            if given(n.by) && !given(n.missing) {
                return Err(keys::missing(n.missing));
            }
        }
        Ok(())
    }

    fn slow_rule(&self) -> Result<Option<SlowRule>, ConfigError> {
        if let Some((p, bound)) = self.trip {
            positive(Key::TripP95, bound)?;
            if !(1..=99).contains(&p) {
                return Err(ConfigError::OutOfRange {
                    field: "trip_pNN",
                    value: p.to_string(),
                    expected: "a percentile from 1 to 99",
                });
            }
            return Ok(Some(SlowRule {
                bound,
                rate: 100 - p as u8,
                strict: true,
            }));
        }
        match (self.slow, self.slow_rate) {
            (Some(bound), Some(rate)) => Ok(Some(SlowRule {
                bound: positive(Key::Slow, bound)?,
                rate: pct(Key::SlowRate, Some(rate), 0)?,
                strict: false,
            })),
            _ => Ok(None),
        }
    }
}

/// What a call `timeout` alone implies for the settings left unset (`defaults::DERIVED_*`).
#[derive(Clone, Copy)]
struct Derived {
    slow: SlowRule,
    trial_timeout: Duration,
}

impl Derived {
    fn of(timeout: Duration) -> Derived {
        Derived {
            slow: SlowRule {
                bound: timeout / defaults::DERIVED_SLOW_DIVISOR,
                rate: defaults::DERIVED_SLOW_RATE,
                strict: false,
            },
            trial_timeout: timeout.saturating_mul(defaults::DERIVED_TRIAL_FACTOR),
        }
    }
}

/// Nanoseconds, 0 when unset: 8 bytes, not 16, so a keyed breaker keeps its memory budget.
fn ns(d: Option<Duration>) -> u64 {
    d.map_or(0, crate::nanos)
}

fn conflict(first: &'static str, second: &'static str) -> ConfigError {
    ConfigError::Conflict { first, second }
}

fn pct(key: Key, v: Option<u64>, default: u8) -> Result<u8, ConfigError> {
    match v {
        None => Ok(default),
        Some(n) => key.check(Value::Int(n)).map(|()| n as u8),
    }
}

fn count(key: Key, n: u64) -> Result<u32, ConfigError> {
    key.check(Value::Int(n)).map(|()| n as u32)
}

fn positive(key: Key, d: Duration) -> Result<Duration, ConfigError> {
    key.check(Value::Duration(d)).map(|()| d)
}

fn opt_positive(key: Key, d: Option<Duration>) -> Result<Option<Duration>, ConfigError> {
    d.map(|d| positive(key, d)).transpose()
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
            self = self.without_rule();
            self.rules = over.rules;
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
