//! The one list of exported figures: Prometheus text and the `metrics` facade both walk it,
//! so their names, labels and units cannot drift apart. The families themselves (name, kind,
//! help) are listed in `families.rs`; this file says what each one's samples are.

use std::time::Duration;

use super::families::*;
use crate::metrics::limit::AdaptiveMetrics;
use crate::metrics::retry::RetryMetrics;
use crate::metrics::snapshot::{BreakerMetrics, BulkheadMetrics, Metrics};
use crate::registry::KeyedNames;
use crate::state::State;

/// How a figure behaves over time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Only ever grows (lifetime totals).
    Counter,
    /// Goes up and down.
    Gauge,
}

/// A metric family: one name, one meaning, any number of labelled samples.
#[derive(Debug, PartialEq)]
pub(crate) struct Family {
    pub(crate) name: &'static str,
    pub(crate) kind: Kind,
    pub(crate) help: &'static str,
}

/// A sample's value: counters stay integers so the facade can publish them with `absolute`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Num {
    Int(u64),
    Float(f64),
}

/// Where the samples go.
pub(crate) trait Sink {
    /// Called once per family, before its samples (even when it has none).
    fn family(&mut self, family: &Family);
    /// One sample; labels in a fixed order, `breaker`/`bulkhead` first.
    fn sample(&mut self, family: &Family, labels: &[(&'static str, &str)], value: Num);
}

/// One sample of a family a higher layer owns (fleet mode's gauges), taken with the snapshot
/// by [`metrics()`](crate::metrics::snapshot::metrics) and walked after the others.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Extra {
    pub(crate) family: &'static Family,
    pub(crate) labels: Vec<(&'static str, String)>,
    pub(crate) value: Num,
}

/// The breaker label (the name without its key) and the key label, if keyed.
pub(crate) fn breaker_labels(b: &BreakerMetrics) -> Vec<(&'static str, &str)> {
    match &b.key {
        Some(key) => {
            let base = b
                .name
                .strip_suffix(key.as_str())
                .and_then(|s| s.strip_suffix('/'))
                .unwrap_or(&b.name);
            vec![("breaker", base), ("key", key)]
        }
        None => vec![("breaker", &b.name)],
    }
}

fn per_breaker(
    sink: &mut dyn Sink,
    m: &Metrics,
    f: &Family,
    mut each: impl FnMut(&BreakerMetrics, &mut dyn FnMut(Option<(&'static str, &str)>, Num)),
) {
    sink.family(f);
    for b in &m.breakers {
        let base = breaker_labels(b);
        each(b, &mut |extra, v| {
            let mut labels = base.clone();
            labels.extend(extra);
            sink.sample(f, &labels, v);
        });
    }
}

fn per_bulkhead(
    sink: &mut dyn Sink,
    m: &Metrics,
    f: &Family,
    value: impl Fn(&BulkheadMetrics) -> u64,
) {
    sink.family(f);
    for b in &m.bulkheads {
        sink.sample(f, &[("bulkhead", &b.name)], Num::Int(value(b)));
    }
}

fn int(v: impl TryInto<u64>) -> Num {
    Num::Int(v.try_into().unwrap_or(u64::MAX))
}

/// Walks every family of the snapshot, in a fixed order.
pub(crate) fn visit(m: &Metrics, sink: &mut dyn Sink) {
    per_breaker(sink, m, &STATE, |b, out| {
        for s in State::ALL {
            out(Some(("state", s.as_str())), int(u8::from(b.state == s)));
        }
    });
    per_breaker(sink, m, &TIME_IN_STATE, |b, out| {
        out(None, Num::Float(b.time_in_state.as_secs_f64()))
    });
    per_breaker(sink, m, &CALLS, |b, out| {
        for (outcome, n) in [
            ("succeeded", b.succeeded),
            ("failed", b.failed),
            ("ignored", b.ignored),
            ("timed_out", b.timed_out),
            ("panicked", b.panicked),
            ("cancelled", b.cancelled),
        ] {
            out(Some(("outcome", outcome)), int(n));
        }
    });
    per_breaker(sink, m, &REJECTED, |b, out| {
        let r = &b.rejected_by_reason;
        for (reason, n) in [
            ("open", r.open),
            ("forced_open", r.forced_open),
            ("half_open", r.half_open),
            ("ramp", r.ramp),
            ("bulkhead_full", r.bulkhead_full),
            ("timed_out", r.timed_out),
        ] {
            out(Some(("reason", reason)), int(n));
        }
    });
    per_breaker(sink, m, &RECORDING, |b, out| {
        out(None, int(u8::from(b.recording)))
    });
    per_breaker(sink, m, &SLOW, |b, out| out(None, int(b.slow)));
    per_breaker(sink, m, &OPENED, |b, out| out(None, int(b.times_opened)));
    per_breaker(sink, m, &WINDOW_CALLS, |b, out| {
        out(None, int(b.window_calls))
    });
    per_breaker(sink, m, &FAILURE_RATIO, |b, out| {
        out(None, Num::Float(b.failure_rate / 100.0))
    });
    per_breaker(sink, m, &SLOW_RATIO, |b, out| {
        out(None, Num::Float(b.slow_rate / 100.0))
    });
    per_breaker(sink, m, &LATENCY, |b, out| {
        for (q, d) in [("0.5", b.p50), ("0.95", b.p95), ("0.99", b.p99)] {
            if let Some(d) = d {
                out(Some(("quantile", q)), Num::Float(d.as_secs_f64()));
            }
        }
    });
    per_breaker(sink, m, &STUCK, |b, out| out(None, int(u8::from(b.stuck))));
    per_breaker(sink, m, &RAMP_SHARE, |b, out| {
        if let Some(share) = b.ramp_share {
            out(None, Num::Float(share));
        }
    });
    for (f, value) in [
        (
            &SLOW_BOUND,
            (|b| b.slow_bound) as fn(&BreakerMetrics) -> Option<Duration>,
        ),
        (&USUAL_LATENCY, |b| b.usual_latency),
    ] {
        per_breaker(sink, m, f, |b, out| {
            if let Some(d) = value(b) {
                out(None, Num::Float(d.as_secs_f64()));
            }
        });
    }
    per_breaker(sink, m, &CONFLICTS, |b, out| out(None, int(b.conflicts)));
    per_breaker(sink, m, &STALE, |b, out| out(None, int(b.stale_served)));
    for (f, value) in [
        (&KEYS, (|k| k.keys as u64) as fn(&KeyedNames) -> u64),
        (&MAX_KEYS, |k| k.max_keys as u64),
        (&KEYS_OVERFLOWED, |k| k.overflowed),
        (&KEYS_EVICTED, |k| k.evicted),
    ] {
        sink.family(f);
        for k in &m.keyed {
            sink.sample(f, &[("breaker", &k.name)], Num::Int(value(k)));
        }
    }
    per_bulkhead(sink, m, &POOL, |b| b.pool as u64);
    per_bulkhead(sink, m, &IN_FLIGHT, |b| b.in_flight as u64);
    per_bulkhead(sink, m, &PEAK, |b| b.peak as u64);
    per_bulkhead(sink, m, &ADMITTED, |b| b.admitted);
    per_bulkhead(sink, m, &FULL, |b| b.rejected);
    per_bulkhead(sink, m, &BULKHEAD_CONFLICTS, |b| b.conflicts);
    for (f, value) in [
        (
            &RETRY_ATTEMPTS,
            (|r| r.attempts) as fn(&RetryMetrics) -> u64,
        ),
        (&RETRY_RETRIES, |r| r.retries),
        (&RETRY_EXHAUSTED, |r| r.budget_exhausted),
        (&RETRY_HELD_OPEN, |r| r.held_open),
    ] {
        sink.family(f);
        for r in &m.retries {
            sink.sample(f, &[("retry", &r.name)], Num::Int(value(r)));
        }
    }
    per_adaptive(sink, m, &LIMIT_MIN, |a, out| out(None, int(a.min_pool)));
    per_adaptive(sink, m, &LIMIT_MAX, |a, out| out(None, int(a.max_pool)));
    per_adaptive(sink, m, &LIMIT_CHANGES, |a, out| out(None, int(a.changes)));
    per_adaptive(sink, m, &LIMIT_LATENCY, |a, out| {
        for (w, d) in [("short", a.short_latency), ("long", a.long_latency)] {
            if let Some(d) = d {
                out(Some(("window", w)), Num::Float(d.as_secs_f64()));
            }
        }
    });
    super::shadow::visit(m, sink);
    per_overridden(sink, m);
    per_extra(sink, m);
}

/// Issue 29: one sample per overridden setting, breakers then bulkheads.
fn per_overridden(sink: &mut dyn Sink, m: &Metrics) {
    sink.family(&OVERRIDDEN);
    for b in &m.breakers {
        for s in b.settings.iter().filter(|s| s.overridden()) {
            let mut labels = breaker_labels(b);
            labels.extend([("setting", s.key), ("source", s.source.as_str())]);
            sink.sample(&OVERRIDDEN, &labels, Num::Int(1));
        }
    }
    for h in &m.bulkheads {
        for s in h.settings.iter().filter(|s| s.overridden()) {
            let labels = [
                ("bulkhead", h.name.as_str()),
                ("setting", s.key),
                ("source", s.source.as_str()),
            ];
            sink.sample(&OVERRIDDEN, &labels, Num::Int(1));
        }
    }
}

/// The samples a higher layer added, each family announced once before its samples.
fn per_extra(sink: &mut dyn Sink, m: &Metrics) {
    let mut last: Option<&str> = None;
    for e in &m.extra {
        if last != Some(e.family.name) {
            sink.family(e.family);
            last = Some(e.family.name);
        }
        let labels: Vec<(&'static str, &str)> =
            e.labels.iter().map(|(k, v)| (*k, v.as_str())).collect();
        sink.sample(e.family, &labels, e.value);
    }
}

/// The samples of adaptive bulkheads only (a fixed pool has no bounds or latencies).
fn per_adaptive(
    sink: &mut dyn Sink,
    m: &Metrics,
    f: &Family,
    each: impl Fn(&AdaptiveMetrics, &mut dyn FnMut(Option<(&'static str, &str)>, Num)),
) {
    sink.family(f);
    for b in &m.bulkheads {
        if let Some(a) = &b.adaptive {
            each(a, &mut |extra, v| {
                let mut labels = vec![("bulkhead", b.name.as_str())];
                labels.extend(extra);
                sink.sample(f, &labels, v);
            });
        }
    }
}
