//! [`Settings`] in fusebox's JSON form (feature `serde`): seconds under `_s` names, nothing
//! of the internal layout (nanosecond fields, bits).

use std::time::Duration;

use crate::breaker::Settings;
use crate::policies::{HalfOpenPolicy, SlowRule, WindowKind};

/// `Settings` in fusebox's JSON form (see its rustdoc): seconds under `_s` names, nothing of
/// the internal layout (nanosecond fields, bits).
impl serde::Serialize for Settings {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let secs = |d: Duration| d.as_secs_f64();
        let opt = |d: Option<Duration>| d.map(secs);
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("failure_rate", &self.failure_rate)?;
        m.serialize_entry("window", &WindowJson::from(self.window))?;
        m.serialize_entry("min_calls", &self.min_calls)?;
        m.serialize_entry("slow", &self.slow.map(SlowJson::from))?;
        m.serialize_entry("timeout_s", &opt(self.timeout))?;
        m.serialize_entry("half_open_timeout_s", &opt(self.half_open_timeout()))?;
        m.serialize_entry("half_open_slow_s", &opt(self.half_open_slow()))?;
        m.serialize_entry("open_for_s", &secs(self.open_for))?;
        m.serialize_entry("backoff", &self.backoff)?;
        m.serialize_entry("open_for_max_s", &secs(self.open_for_max))?;
        m.serialize_entry("half_open", &HalfOpenJson::from(self.half_open))?;
        m.serialize_entry("alert_after_s", &secs(self.alert_after))?;
        m.serialize_entry("max_keys", &self.max_keys)?;
        m.serialize_entry("probe_every_s", &opt(self.probe_every()))?;
        m.serialize_entry("ramp_s", &opt(self.ramp()))?;
        m.end()
    }
}

/// The window in the JSON form: `{"calls":100}` or `{"time_s":30.0}`.
#[derive(serde::Serialize)]
#[serde(rename_all = "snake_case")]
enum WindowJson {
    Calls(u32),
    #[serde(rename = "time_s")]
    Time(f64),
}

impl From<WindowKind> for WindowJson {
    fn from(w: WindowKind) -> Self {
        match w {
            WindowKind::Calls(n) => WindowJson::Calls(n),
            WindowKind::Time(d) => WindowJson::Time(d.as_secs_f64()),
        }
    }
}

/// The half-open policy in the JSON form: `{"share":{"pct":5,"window_s":30.0}}` or
/// `{"calls":3}`.
#[derive(serde::Serialize)]
#[serde(rename_all = "snake_case")]
enum HalfOpenJson {
    Share { pct: u8, window_s: f64 },
    Calls(u32),
}

impl From<HalfOpenPolicy> for HalfOpenJson {
    fn from(h: HalfOpenPolicy) -> Self {
        match h {
            HalfOpenPolicy::Share { pct, window } => HalfOpenJson::Share {
                pct,
                window_s: window.as_secs_f64(),
            },
            HalfOpenPolicy::Calls(n) => HalfOpenJson::Calls(n),
        }
    }
}

/// A slow rule in the JSON form: `{"bound_s":0.5,"rate":5,"strict":true}`.
#[derive(serde::Serialize)]
struct SlowJson {
    bound_s: f64,
    rate: u8,
    strict: bool,
}

impl From<SlowRule> for SlowJson {
    fn from(r: SlowRule) -> Self {
        SlowJson {
            bound_s: r.bound.as_secs_f64(),
            rate: r.rate,
            strict: r.strict,
        }
    }
}
