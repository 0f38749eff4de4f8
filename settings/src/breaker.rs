//! The validated settings of one breaker ([`Settings`]); the small types they are made of are
//! in `policies.rs`, their JSON form in `json.rs`.

use crate::written::Written;
use std::time::Duration;

use crate::defaults;
use crate::policies::{HalfOpenPolicy, SlowRule, WindowKind};

/// [`Settings`]' derived bit: the probes were derived from `timeout` and back off.
pub(crate) const PROBES_BACK_OFF: u8 = 1;
/// [`Settings`]' derived bit: the slow rule was derived from `timeout`, and a full bulkhead's
/// refusal behind slow calls counts as slow.
pub(crate) const REFUSALS_COUNT: u8 = 2;
/// [`Settings`]' derived bit: `half_open_slow` was derived (the trial timeout), so trials pass
/// by answering, except after an opening on slowness alone (the runtime's slow episode).
pub(crate) const TRIALS_PASS_BY_ANSWERING: u8 = 4;

/// The validated settings of one breaker: made by [`RawSettings::check`](crate::RawSettings::check)
/// (or [`Default`], the documented defaults), so a `Settings` is always one the runtime honours.
///
/// ```
/// use std::time::Duration;
/// use fusebox::settings::Settings;
/// use fusebox::Breaker;
/// let plain = Breaker::builder("settings-doc").config().unwrap();
/// assert_eq!(*plain.settings(), Settings::default());
/// let p95 = Breaker::builder("settings-doc").trip_p95(Duration::from_millis(500));
/// let config = p95.config().unwrap();
/// assert_eq!(config.settings().slow().unwrap().rate, 5);
/// ```
///
/// With feature `serde` it serializes as the rest of fusebox's JSON does: durations in
/// seconds under an `_s` name (`open_for_s`, `timeout_s`, `slow.bound_s`), a setting that is
/// off as `null` (`serde_json`): `{"failure_rate":50,"window":{"time_s":30.0},"min_calls":20,
/// "slow":null,"timeout_s":null, .., "half_open":{"share":{"pct":5,"window_s":30.0}}, ..}`.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    pub(crate) failure_rate: u8,
    pub(crate) window: WindowKind,
    pub(crate) min_calls: u32,
    pub(crate) slow: Option<SlowRule>,
    pub(crate) timeout: Option<Duration>,
    pub(crate) half_open_timeout: Option<Duration>,
    /// `half_open_slow` in nanoseconds, 0 when unset (8 bytes, not 16: a keyed breaker stays
    /// within its memory budget).
    pub(crate) half_open_slow: u64,
    pub(crate) open_for: Duration,
    pub(crate) backoff: f64,
    pub(crate) open_for_max: Duration,
    pub(crate) half_open: HalfOpenPolicy,
    pub(crate) alert_after: Duration,
    pub(crate) max_keys: u32,
    /// `probe_every` in nanoseconds, 0 when off.
    pub(crate) probe_every: u64,
    /// `ramp` in nanoseconds, 0 when off.
    pub(crate) ramp: u64,
    /// What was derived from `timeout` that the runtime treats apart: bit [`PROBES_BACK_OFF`]
    /// (the probes are derived, so a slow or timed-out one backs the next off) and bit
    /// [`REFUSALS_COUNT`] (the slow rule is derived, so a full bulkhead's refusal behind slow
    /// calls counts as slow) and bit [`TRIALS_PASS_BY_ANSWERING`] (`half_open_slow` is derived:
    /// see [`trials_pass_by_answering`](Self::trials_pass_by_answering)).
    pub(crate) derived: u8,
    /// The keys the code wrote (`written.rs`): what an override is laid over. In padding.
    pub(crate) written: Written,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            failure_rate: defaults::FAILURE_RATE,
            window: WindowKind::Time(defaults::WINDOW),
            min_calls: defaults::MIN_CALLS,
            slow: None,
            timeout: None,
            half_open_timeout: None,
            half_open_slow: 0,
            open_for: defaults::OPEN_FOR,
            backoff: defaults::BACKOFF,
            open_for_max: defaults::OPEN_FOR,
            half_open: HalfOpenPolicy::Share {
                pct: defaults::HALF_OPEN_PCT,
                window: defaults::HALF_OPEN_WINDOW,
            },
            alert_after: defaults::ALERT_AFTER,
            max_keys: defaults::KEYS_PER_NAME,
            probe_every: 0,
            ramp: 0,
            derived: 0,
            written: Written(0),
        }
    }
}

impl Settings {
    /// Failure-rate threshold in percent.
    pub fn failure_rate(&self) -> u8 {
        self.failure_rate
    }
    /// The closed-state window.
    pub fn window(&self) -> WindowKind {
        self.window
    }
    /// Calls in the window before a rate is judged.
    pub fn min_calls(&self) -> u32 {
        self.min_calls
    }
    /// The slow-call rule, if any.
    pub fn slow(&self) -> Option<SlowRule> {
        self.slow
    }
    /// Timeout of a normal call.
    pub fn timeout(&self) -> Option<Duration> {
        self.timeout
    }
    /// Timeout of a half-open trial call (falls back to `timeout`; derived by
    /// [`RawSettings::check`](crate::RawSettings::check) when unset, see its rustdoc).
    pub fn half_open_timeout(&self) -> Option<Duration> {
        self.half_open_timeout.or(self.timeout)
    }
    /// `half_open_timeout` as checked (given, or derived from `timeout`), without the
    /// fall-back to `timeout`.
    pub fn half_open_timeout_given(&self) -> Option<Duration> {
        self.half_open_timeout
    }
    /// The latency at which a half-open trial counts as slow: `half_open_slow`, else the slow
    /// rule's bound (`None` without a slow rule: trials are then judged on failures only).
    pub fn half_open_slow(&self) -> Option<Duration> {
        self.slow.map(|r| match self.half_open_slow {
            0 => r.bound,
            n => Duration::from_nanos(n),
        })
    }
    /// `half_open_slow` as given (nanoseconds, 0 when unset), without the fall-back.
    pub fn half_open_slow_given(&self) -> Option<Duration> {
        (self.half_open_slow != 0).then(|| Duration::from_nanos(self.half_open_slow))
    }
    /// The first open period.
    pub fn open_for(&self) -> Duration {
        self.open_for
    }
    /// Growth factor of repeated open periods (1.0: no growth).
    pub fn backoff(&self) -> f64 {
        self.backoff
    }
    /// The cap of growing open periods (`open_for` without `backoff`).
    pub fn open_for_max(&self) -> Duration {
        self.open_for_max
    }
    /// The half-open policy.
    pub fn half_open(&self) -> HalfOpenPolicy {
        self.half_open
    }
    /// How long a breaker may stay away from closed before it is `stuck`.
    pub fn alert_after(&self) -> Duration {
        self.alert_after
    }
    /// For a keyed breaker: how many keys get a breaker of their own.
    pub fn max_keys(&self) -> u32 {
        self.max_keys
    }

    /// While open, how often one call is let through as a probe (`None`: no probes).
    pub fn probe_every(&self) -> Option<Duration> {
        (self.probe_every != 0).then(|| Duration::from_nanos(self.probe_every))
    }
    /// Whether a probe that was slow or timed out backs the next one off: only the probes
    /// derived from `timeout` do (see `defaults::PROBE_BACKOFF_SHARE`); a `probe_every` given
    /// keeps its pace.
    ///
    /// ```
    /// use std::time::Duration;
    /// use fusebox::Breaker;
    /// let derived = Breaker::builder("settings-doc").timeout(Duration::from_secs(1)).config().unwrap();
    /// assert!(derived.settings().probe_backs_off());
    /// let given = Breaker::builder("settings-doc")
    ///     .timeout(Duration::from_secs(1))
    ///     .probe_every(Duration::from_secs(1))
    ///     .config()
    ///     .unwrap();
    /// assert!(!given.settings().probe_backs_off());
    /// ```
    pub fn probe_backs_off(&self) -> bool {
        self.derived & PROBES_BACK_OFF != 0
    }
    /// Whether a call a full bulkhead refuses while every one of its slots is held by this
    /// breaker's calls already past the slow bound, or while the last of its calls to end was
    /// slow (slow calls that time out hand their slots to fresh calls not yet past the bound),
    /// counts as a slow call: only under the slow rule derived from `timeout`. Behind a small
    /// pool, few slow calls reach the window (the rest are refused), so without this a timeout
    /// alone behind `pool = 5` opened 19 s into issue 26's slowdown; counting only the first
    /// case, 2 s at 50 calls a second but 3.1 s at 45; with both, 2.0-2.8 s from 50 down to 30
    /// calls a second. A slow rule given keeps today's count.
    ///
    /// ```
    /// use std::time::Duration;
    /// use fusebox::Breaker;
    /// let s = Breaker::builder("settings-doc").timeout(Duration::from_secs(2)).config().unwrap();
    /// assert!(s.settings().refusals_count_as_slow());
    /// let card = Breaker::builder("settings-doc")
    ///     .timeout(Duration::from_secs(2))
    ///     .trip_p95(Duration::from_millis(300))
    ///     .config()
    ///     .unwrap();
    /// assert!(!card.settings().refusals_count_as_slow());
    /// ```
    pub fn refusals_count_as_slow(&self) -> bool {
        self.derived & REFUSALS_COUNT != 0
    }
    /// Whether the slow rule was derived from `timeout` (none given, nor a window or a
    /// threshold): besides counting refusals behind slow calls
    /// ([`refusals_count_as_slow`](Self::refusals_count_as_slow)), the runtime then learns the
    /// dependency's usual latency and counts a call slow from five times it when that is
    /// shorter than the rule's bound (`BreakerMetrics::slow_bound`).
    ///
    /// ```
    /// use std::time::Duration;
    /// use fusebox::Breaker;
    /// let s = Breaker::builder("derived-doc").timeout(Duration::from_secs(30)).config().unwrap();
    /// assert!(s.settings().slow_rule_derived());
    /// assert_eq!(s.slow().unwrap().bound, Duration::from_secs(15));
    /// ```
    pub fn slow_rule_derived(&self) -> bool {
        self.derived & REFUSALS_COUNT != 0
    }
    /// Whether `half_open_slow` was derived from `timeout` (the trial timeout): trials then
    /// pass by answering at all, so a provider that warms by serving requests gets the traffic
    /// it needs (seed 000, back cold after an outage). So it is under a slow rule derived from
    /// `timeout`, and under a given one (`trip_p95` with `timeout`, the card's line) whose
    /// recovery is derived. The runtime makes one exception: after the breaker opened on
    /// slowness alone (its slow-call rate, not failures), the dependency was answering, only
    /// slowly, so its trials are judged by the slow rule's own bound until the breaker closes
    /// (a relapse while ramping back in keeps the episode what its first opening made it: cold
    /// answers after failures do not make it a slow one). Without it, 2 s answers under a 3 s
    /// timeout passed every trial and the breaker closed while slow again and again (issue
    /// 26's "slow under the timeout"). "Answering": the first call of the opening to end
    /// answered; if it timed out (a hung outage: calls are seen slow in flight at half the
    /// timeout, before they time out), the dependency was down, and trials are those of an
    /// outage, so a provider back cold passes them (answers past the timeout look the same:
    /// such a dependency is let back at growing intervals, as after a refusing outage). A
    /// `half_open_slow` given is always the trials' bound, and a recovery setting given keeps
    /// trials under the slow rule as before.
    ///
    /// ```
    /// use std::time::Duration;
    /// use fusebox::Breaker;
    /// let s = Breaker::builder("settings-doc").timeout(Duration::from_secs(3)).config().unwrap();
    /// assert!(s.settings().trials_pass_by_answering());
    /// let card = Breaker::builder("settings-doc")
    ///     .timeout(Duration::from_secs(3))
    ///     .trip_p95(Duration::from_millis(500));
    /// assert!(card.clone().config().unwrap().settings().trials_pass_by_answering());
    /// let chosen = card.open_for(Duration::from_secs(30)).config().unwrap();
    /// assert!(!chosen.settings().trials_pass_by_answering());
    /// ```
    pub fn trials_pass_by_answering(&self) -> bool {
        self.derived & TRIALS_PASS_BY_ANSWERING != 0
    }
    /// Settings rebuilt by [`__validated`](Self::__validated) with what `check` derived from
    /// `timeout` (the bits of [`__derived_bits`](Self::__derived_bits)); generated code calls
    /// it only when some were derived. Not a public API.
    #[doc(hidden)]
    pub const fn __with_derived(mut self, bits: u8) -> Settings {
        self.derived = bits;
        self
    }
    /// The bits of what was derived from `timeout`, as `__with_derived` takes them.
    #[doc(hidden)]
    pub fn __derived_bits(&self) -> u8 {
        self.derived
    }
    /// Over how long the admitted share grows back to 100 % after half-open passes (`None`:
    /// all traffic at once).
    pub fn ramp(&self) -> Option<Duration> {
        (self.ramp != 0).then(|| Duration::from_nanos(self.ramp))
    }
    /// The share the ramp starts from: the half-open share (`half_open_pct`), or the default
    /// 5 % under `half_open_calls`, which admits a count rather than a share.
    pub fn ramp_start(&self) -> f64 {
        match self.half_open {
            HalfOpenPolicy::Share { pct, .. } => f64::from(pct) / 100.0,
            HalfOpenPolicy::Calls(_) => f64::from(defaults::HALF_OPEN_PCT) / 100.0,
        }
    }

    /// The open period after `opened_before` consecutive openings: `open_for × backoff^n`, capped.
    ///
    /// ```
    /// use std::time::Duration;
    /// use fusebox::Breaker;
    /// let s = Breaker::builder("settings-doc").backoff(2.0, Duration::from_secs(60)).config().unwrap();
    /// assert_eq!(s.settings().open_period(0), Duration::from_secs(30));
    /// assert_eq!(s.settings().open_period(5), Duration::from_secs(60));
    /// ```
    pub fn open_period(&self, opened_before: u32) -> Duration {
        if self.backoff <= 1.0 {
            return self.open_for.min(self.open_for_max);
        }
        let factor = self.backoff.powi(opened_before.min(64) as i32);
        let secs = self.open_for.as_secs_f64() * factor;
        let max = self.open_for_max.as_secs_f64();
        if secs.is_finite() && secs < max {
            Duration::from_secs_f64(secs)
        } else {
            self.open_for_max
        }
    }
}
