//! Which keys the code wrote: what an override is laid over (`overrides.rs`).
//!
//! A key written with its default value, or with the value `timeout` would derive, checks
//! into the same settings as the key left out, but it does not mean the same under an
//! override: `failure_rate = 50` beside `timeout` keeps the slow rule from being derived, so
//! `timeout = "1s"` given over `#[breaker(failure_rate = 50)]` must derive none, as the two
//! written together would not. Settings rebuilt as the fewest keys that check back into them
//! lost that. So checked settings carry one bit per key the code wrote, and an override is
//! laid over exactly those keys, each with the value it checked to.
//!
//! The bits are how the settings were spelled, not what they are: two spellings of the same
//! settings compare equal ([`Written`]'s `PartialEq`), so a call site's settings match a
//! breaker's whichever way each was written.

use crate::breaker::Settings;
use crate::policies::{HalfOpenPolicy, WindowKind};
use crate::raw::RawSettings;

pub(crate) const FAILURE_RATE: u32 = 1 << 0;
pub(crate) const WINDOW: u32 = 1 << 1;
pub(crate) const WINDOW_CALLS: u32 = 1 << 2;
pub(crate) const MIN_CALLS: u32 = 1 << 3;
/// `slow` with `slow_rate`, or a `trip_pNN`: one rule.
pub(crate) const RULE: u32 = 1 << 4;
pub(crate) const TIMEOUT: u32 = 1 << 5;
pub(crate) const HALF_OPEN_TIMEOUT: u32 = 1 << 6;
pub(crate) const HALF_OPEN_SLOW: u32 = 1 << 7;
pub(crate) const OPEN_FOR: u32 = 1 << 8;
/// `backoff` with `open_for_max`: given together.
pub(crate) const BACKOFF: u32 = 1 << 9;
pub(crate) const HALF_OPEN_PCT: u32 = 1 << 10;
pub(crate) const HALF_OPEN_WINDOW: u32 = 1 << 11;
pub(crate) const HALF_OPEN_CALLS: u32 = 1 << 12;
pub(crate) const ALERT_AFTER: u32 = 1 << 13;
pub(crate) const MAX_KEYS: u32 = 1 << 14;
pub(crate) const PROBE_EVERY: u32 = 1 << 15;
pub(crate) const RAMP: u32 = 1 << 16;

/// The keys the code wrote, one bit each (the constants above). Equal to any other: see the
/// module's rustdoc.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Written(pub(crate) u32);

impl PartialEq for Written {
    fn eq(&self, _: &Written) -> bool {
        true
    }
}

impl Written {
    fn has(self, bit: u32) -> bool {
        self.0 & bit != 0
    }
}

impl Settings {
    /// The keys the code wrote, each with the value it checked to: checked, they give these
    /// settings back.
    pub(crate) fn as_written(&self) -> RawSettings {
        let (w, s) = (self.written, self);
        let mut raw = RawSettings::new();
        if w.has(FAILURE_RATE) {
            raw = raw.failure_rate(s.failure_rate);
        }
        match s.window {
            WindowKind::Time(d) if w.has(WINDOW) => raw = raw.window(d),
            WindowKind::Calls(n) if w.has(WINDOW_CALLS) => raw = raw.window_calls(n),
            _ => {}
        }
        if w.has(MIN_CALLS) {
            raw = raw.min_calls(s.min_calls);
        }
        if w.has(RULE) {
            raw = raw.with_rule(s.slow);
        }
        if let Some(t) = s.timeout.filter(|_| w.has(TIMEOUT)) {
            raw = raw.timeout(t);
        }
        if let Some(t) = s.half_open_timeout.filter(|_| w.has(HALF_OPEN_TIMEOUT)) {
            raw = raw.half_open_timeout(t);
        }
        if let Some(t) = s.half_open_slow_given().filter(|_| w.has(HALF_OPEN_SLOW)) {
            raw = raw.half_open_slow(t);
        }
        if w.has(OPEN_FOR) {
            raw = raw.open_for(s.open_for);
        }
        if w.has(BACKOFF) {
            raw = raw.backoff(s.backoff, s.open_for_max);
        }
        match s.half_open {
            HalfOpenPolicy::Share { pct, window } => {
                if w.has(HALF_OPEN_PCT) {
                    raw = raw.half_open_pct(pct);
                }
                if w.has(HALF_OPEN_WINDOW) {
                    raw = raw.half_open_window(window);
                }
            }
            HalfOpenPolicy::Calls(n) if w.has(HALF_OPEN_CALLS) => raw = raw.half_open_calls(n),
            HalfOpenPolicy::Calls(_) => {}
        }
        if w.has(ALERT_AFTER) {
            raw = raw.alert_after(s.alert_after);
        }
        if w.has(MAX_KEYS) {
            raw = raw.max_keys(s.max_keys);
        }
        if let Some(p) = s.probe_every().filter(|_| w.has(PROBE_EVERY)) {
            raw = raw.probe_every(p);
        }
        if let Some(r) = s.ramp().filter(|_| w.has(RAMP)) {
            raw = raw.ramp(r);
        }
        raw
    }

    /// These settings, written by the code as `bits` say (the bits of
    /// [`__written_bits`](Self::__written_bits)); generated code calls it when a key was
    /// written. Not a public API.
    #[doc(hidden)]
    pub const fn __with_written(mut self, bits: u32) -> Settings {
        self.written = Written(bits);
        self
    }

    /// The bits of the keys the code wrote, as `__with_written` takes them. Not a public API.
    #[doc(hidden)]
    pub fn __written_bits(&self) -> u32 {
        self.written.0
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn a_default_written_out_is_kept_under_an_override() {
        let code = RawSettings::new().failure_rate(50).check().unwrap();
        assert_eq!(code, Settings::default(), "the same settings either way");
        let over = code.with_overrides([("timeout", "1s")]).unwrap();
        let written = RawSettings::new()
            .failure_rate(50)
            .timeout(Duration::from_secs(1))
            .check()
            .unwrap();
        assert_eq!(
            over.slow(),
            None,
            "a threshold was written: nothing is derived"
        );
        assert_eq!(over, written);
    }

    #[test]
    fn every_key_written_checks_back_into_the_same_settings() {
        let ms = Duration::from_millis;
        let cases = [
            RawSettings::new(),
            RawSettings::new().timeout(ms(800)),
            RawSettings::new()
                .timeout(ms(800))
                .half_open_timeout(ms(3200)),
            RawSettings::new().timeout(ms(800)).window_calls(100),
            RawSettings::new().timeout(ms(800)).slow(ms(400), 50),
            RawSettings::new()
                .trip_percentile(95, ms(500))
                .half_open_slow(ms(900))
                .open_for(ms(5000))
                .backoff(2.0, ms(60_000))
                .half_open_pct(10)
                .half_open_window(ms(2000))
                .alert_after(ms(60_000))
                .max_keys(7)
                .probe_every(ms(1000))
                .ramp(ms(3000))
                .min_calls(5)
                .window(ms(10_000))
                .failure_rate(20),
            RawSettings::new().half_open_calls(3).window_calls(9),
        ];
        for raw in cases {
            let s = raw.check().unwrap();
            let back = s.as_written().check().unwrap();
            assert_eq!(back, s);
            assert_eq!(back.written.0, s.written.0, "{s:?}");
        }
    }
}
