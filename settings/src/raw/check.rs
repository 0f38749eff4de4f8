//! [`RawSettings::check`]: the one verdict on a breaker's settings, whichever way they were
//! given, and what a call `timeout` alone derives for the settings left unset.

use std::time::Duration;

use super::RawSettings;
use crate::defaults;
use crate::keys::{self, Key, Value};
use crate::{ConfigError, HalfOpenPolicy, Settings, SlowRule, WindowKind};

impl RawSettings {
    /// Checks every setting and every rule between them; the first problem is the error.
    ///
    /// With a `timeout`, the settings left unset are derived (issue 26): a window of the last
    /// 100 calls (no window, `window_calls` or `min_calls` given); a slow rule at half the
    /// timeout, 50 % (nor `failure_rate` nor a slow rule given); and, when no recovery setting
    /// is given (`open_for`, `backoff`, `open_for_max`, `half_open_window`, `half_open_calls`,
    /// `probe_every`, `ramp`; `half_open_pct` is kept as the half-open share), the trial
    /// timeout, trials that pass by answering, probes that back off, a 2 s half-open window, a
    /// 5 s ramp and open periods doubling up to an hour. Without a `timeout`, a slow rule given
    /// scales the same derivation as the timeout that would derive it (twice its bound).
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
    /// // The design card's line, no timeout: scaled from its bound as from a 1 s timeout.
    /// let card = RawSettings::new().trip_p95(ms(500)).half_open_pct(5).check().unwrap();
    /// assert_eq!(card.window(), WindowKind::Calls(100));
    /// assert_eq!((card.half_open_timeout(), card.probe_every()), (Some(ms(4000)), Some(ms(1000))));
    /// assert_eq!(card.timeout(), None);
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
        // A latency to scale from: the call's `timeout`, else a slow rule's bound.
        let scaled = self.timeout.is_some() || self.rules > 0;
        let window = match scaled {
            true if !window_given => WindowKind::Calls(defaults::DERIVED_WINDOW_CALLS),
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
            // Two percentile rules, or `slow` beside one: the message names what was written.
            let first = if self.slow.is_some() {
                "slow"
            } else {
                "trip_pNN"
            };
            return Err(conflict(first, "trip_pNN"));
        }
        let given_rule = self.slow_rule()?;
        let timeout = opt_positive(Key::Timeout, self.timeout)?;
        // Without a `timeout`, a given slow rule sets the scale: the timeout that would
        // derive it (twice its bound), so the card's line without one (`trip_p95 = "500ms"`)
        // is judged on its last calls and recovers as the obvious line does.
        let scale =
            timeout.or(given_rule.map(|r| r.bound.saturating_mul(defaults::DERIVED_SLOW_DIVISOR)));
        let derived = scale.map(Derived::of);
        // Detection and recovery are each derived as a whole, and only when none of their
        // settings was given: a user who chose a window, a threshold, an open period or a
        // half-open policy keeps exactly today's behaviour for the rest of it.
        let detection = derived.filter(|_| !window_given && self.failure_rate.is_none());
        let recovery = derived.filter(|_| !self.recovery_given());
        let slow = given_rule.or(detection.map(|d| d.slow));
        let given_half_open_slow = opt_positive(Key::HalfOpenSlow, self.half_open_slow)?;
        // Trials pass by answering within the trial timeout (the runtime holds them to the
        // slow rule after an opening on slowness alone) unless a trial bound was given: under
        // a derived slow rule, and under a given one whose recovery is derived (the card's
        // line, `trip_p95` with `timeout`: a provider back cold after failures answers slowly
        // until the traffic it gets warms it, seed 000).
        let trials_answer = given_half_open_slow.is_none()
            && slow.is_some()
            && (given_rule.is_none() || recovery.is_some());
        let half_open_timeout = match (
            opt_positive(Key::HalfOpenTimeout, self.half_open_timeout)?,
            recovery,
        ) {
            (Some(t), _) => Some(t),
            (None, None) => None,
            (None, Some(d)) => Some(match given_half_open_slow {
                None => d.trial_timeout,
                // Judged slow at the given trial bound anyway: no longer than twice that
                // bound, never shorter than a normal call's (its caller still wants the answer).
                Some(b) => d
                    .trial_timeout
                    .min(b.saturating_mul(2))
                    .max(timeout.unwrap_or_default()),
            }),
        };
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
        let derived = u8::from(probes_back_off) * crate::breaker::PROBES_BACK_OFF
            + u8::from(given_rule.is_none() && slow.is_some()) * crate::breaker::REFUSALS_COUNT
            + u8::from(trials_answer) * crate::breaker::TRIALS_PASS_BY_ANSWERING;
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

    /// Whether any setting of the recovery policy was given: the open period, its growth,
    /// the half-open policy, probes or the ramp.
    fn recovery_given(&self) -> bool {
        // Not `half_open_pct`: the derived recovery admits a share in half-open too, and
        // takes the one given (the card's `half_open_pct = 5`).
        self.open_for.is_some()
            || self.backoff.is_some()
            || self.open_for_max.is_some()
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
