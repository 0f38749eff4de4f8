//! The one list of exported figures: Prometheus text and the `metrics` facade both walk it,
//! so their names, labels and units cannot drift apart.

use std::time::Duration;

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

const fn fam(name: &'static str, kind: Kind, help: &'static str) -> Family {
    Family { name, kind, help }
}

pub(crate) const STATE: Family = fam(
    "fusebox_breaker_state",
    Kind::Gauge,
    "1 for the breaker's current state, 0 for the others.",
);
pub(crate) const TIME_IN_STATE: Family = fam(
    "fusebox_breaker_time_in_state_seconds",
    Kind::Gauge,
    "Seconds since the breaker's last transition.",
);
pub(crate) const CALLS: Family = fam(
    "fusebox_breaker_calls_total",
    Kind::Counter,
    "Calls that ran through the breaker, by outcome (rejected calls are in fusebox_breaker_rejected_total); ignored: calls classified ignored (no place in the window) plus errors the failure predicate excluded (recorded in the window as calls that did not fail).",
);
pub(crate) const RECORDING: Family = fam(
    "fusebox_breaker_recording",
    Kind::Gauge,
    "1 when calls go into the window; 0 only while forced closed without recording.",
);
pub(crate) const REJECTED: Family = fam(
    "fusebox_breaker_rejected_total",
    Kind::Counter,
    "Calls refused, by reason: open, forced_open, half_open (not admitted as a trial), ramp (closed, outside the ramp's share), bulkhead_full; timed_out counts calls cut off by the timeout (also in fusebox_breaker_calls_total).",
);
pub(crate) const SLOW: Family = fam(
    "fusebox_breaker_slow_calls_total",
    Kind::Counter,
    "Calls slower than the slow bound, including hung calls counted while in flight.",
);
pub(crate) const OPENED: Family = fam(
    "fusebox_breaker_opened_total",
    Kind::Counter,
    "Times the breaker opened.",
);
pub(crate) const WINDOW_CALLS: Family = fam(
    "fusebox_breaker_window_calls",
    Kind::Gauge,
    "Calls in the breaker's current window.",
);
pub(crate) const FAILURE_RATIO: Family = fam(
    "fusebox_breaker_failure_ratio",
    Kind::Gauge,
    "Failed share of the window's calls, from 0 to 1.",
);
pub(crate) const SLOW_RATIO: Family = fam(
    "fusebox_breaker_slow_ratio",
    Kind::Gauge,
    "Slow share of the window's calls, from 0 to 1.",
);
pub(crate) const LATENCY: Family = fam(
    "fusebox_breaker_latency_seconds",
    Kind::Gauge,
    "Latency quantiles over the window, in seconds (absent while the window is empty).",
);
pub(crate) const STUCK: Family = fam(
    "fusebox_breaker_stuck",
    Kind::Gauge,
    "1 when the breaker has been away from closed longer than alert_after: page someone.",
);
pub(crate) const RAMP_SHARE: Family = fam(
    "fusebox_breaker_ramp_share",
    Kind::Gauge,
    "While closed and ramping traffic back in after half-open passed: the share of calls admitted now, 0 to 1 (absent otherwise).",
);
pub(crate) const SLOW_BOUND: Family = fam(
    "fusebox_breaker_slow_bound_seconds",
    Kind::Gauge,
    "Latency from which a call starting now counts as slow, in seconds (absent without a slow rule).",
);
pub(crate) const USUAL_LATENCY: Family = fam(
    "fusebox_breaker_usual_latency_seconds",
    Kind::Gauge,
    "Under the slow rule derived from timeout alone: the dependency's usual latency as learned (90th percentile estimate), in seconds (absent until learned).",
);
pub(crate) const CONFLICTS: Family = fam(
    "fusebox_breaker_conflicts_total",
    Kind::Counter,
    "Registrations of this name with other settings (ignored; the first settings are kept).",
);
pub(crate) const STALE: Family = fam(
    "fusebox_breaker_stale_served_total",
    Kind::Counter,
    "Rejected or failed calls answered with the last good value (stale_for).",
);
pub(crate) const POOL: Family = fam(
    "fusebox_bulkhead_pool",
    Kind::Gauge,
    "Most calls the bulkhead lets in flight at once.",
);
pub(crate) const IN_FLIGHT: Family = fam(
    "fusebox_bulkhead_in_flight",
    Kind::Gauge,
    "Calls holding a bulkhead slot now.",
);
pub(crate) const PEAK: Family = fam(
    "fusebox_bulkhead_peak",
    Kind::Gauge,
    "Most calls ever in flight at once.",
);
pub(crate) const ADMITTED: Family = fam(
    "fusebox_bulkhead_admitted_total",
    Kind::Counter,
    "Calls that got a bulkhead slot.",
);
pub(crate) const FULL: Family = fam(
    "fusebox_bulkhead_rejected_total",
    Kind::Counter,
    "Calls refused because the pool was full.",
);
pub(crate) const BULKHEAD_CONFLICTS: Family = fam(
    "fusebox_bulkhead_conflicts_total",
    Kind::Counter,
    "Registrations of this name with other settings (ignored; the first settings are kept).",
);
pub(crate) const LIMIT_MIN: Family = fam(
    "fusebox_bulkhead_limit_min",
    Kind::Gauge,
    "The lowest an adaptive bulkhead's limit goes (min_pool); fusebox_bulkhead_pool is the limit now.",
);
pub(crate) const LIMIT_MAX: Family = fam(
    "fusebox_bulkhead_limit_max",
    Kind::Gauge,
    "The highest an adaptive bulkhead's limit goes (max_pool).",
);
pub(crate) const LIMIT_CHANGES: Family = fam(
    "fusebox_bulkhead_limit_changes_total",
    Kind::Counter,
    "Times an adaptive bulkhead's limit changed.",
);
pub(crate) const LIMIT_LATENCY: Family = fam(
    "fusebox_bulkhead_latency_seconds",
    Kind::Gauge,
    "An adaptive bulkhead's latencies: the last window's average (short) and the long-term average it is compared with (long).",
);

pub(crate) const KEYS: Family = fam(
    "fusebox_breaker_keys",
    Kind::Gauge,
    "Keys of a keyed breaker with a breaker of their own (at most max_keys).",
);
pub(crate) const MAX_KEYS: Family = fam(
    "fusebox_breaker_max_keys",
    Kind::Gauge,
    "The max_keys cap of a keyed breaker.",
);
pub(crate) const KEYS_OVERFLOWED: Family = fam(
    "fusebox_breaker_keys_overflowed_total",
    Kind::Counter,
    "Lookups of a new key sent to name/_overflow because the keyed breaker was at max_keys: raise max_keys or key by fewer values.",
);
pub(crate) const KEYS_EVICTED: Family = fam(
    "fusebox_breaker_keys_evicted_total",
    Kind::Counter,
    "Keys removed from a keyed breaker: idle ones at max_keys, and evicted by hand.",
);

pub(crate) const RETRY_ATTEMPTS: Family = fam(
    "fusebox_retry_attempts_total",
    Kind::Counter,
    "Attempts made by retries of this name: first attempts and retries.",
);
pub(crate) const RETRY_RETRIES: Family = fam(
    "fusebox_retry_retries_total",
    Kind::Counter,
    "Retries the name's budget granted.",
);
pub(crate) const RETRY_EXHAUSTED: Family = fam(
    "fusebox_retry_budget_exhausted_total",
    Kind::Counter,
    "Retries the name's budget refused (the failure was returned without another attempt).",
);
pub(crate) const RETRY_HELD_OPEN: Family = fam(
    "fusebox_retry_held_open_total",
    Kind::Counter,
    "Server hints (retry_after) that held the name's breaker open until the time they gave.",
);

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

pub(crate) const OVERRIDDEN: Family = fam(
    "fusebox_setting_overridden",
    Kind::Gauge,
    "1 for each setting of a breaker or bulkhead whose value in force is not the code's, labelled by the setting and where its value came from (env, file, admin, fleet); settings at the code's value have no sample.",
);

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
