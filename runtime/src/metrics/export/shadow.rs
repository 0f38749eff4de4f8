//! The `fusebox_shadow_*` families: a breaker's shadow settings (issue 29), walked by
//! `samples.rs` after the others of its own, so Prometheus and the `metrics` facade agree.

use super::samples::{breaker_labels, Family, Kind, Num, Sink};
use crate::metrics::snapshot::{BreakerMetrics, Metrics};
use crate::metrics::ShadowMetrics;
use crate::state::State;

const fn fam(name: &'static str, kind: Kind, help: &'static str) -> Family {
    Family { name, kind, help }
}

pub(crate) const STATE: Family = fam(
    "fusebox_shadow_state",
    Kind::Gauge,
    "While shadow settings are set: 1 for the state the shadow is in, 0 for the others.",
);
pub(crate) const SEEN: Family = fam(
    "fusebox_shadow_calls_seen_total",
    Kind::Counter,
    "Calls of the live breaker the shadow judged since it was set.",
);
pub(crate) const REFUSED: Family = fam(
    "fusebox_shadow_would_have_refused_total",
    Kind::Counter,
    "Calls the shadow settings would have refused (none was refused: the live settings decide).",
);
pub(crate) const OPENED: Family = fam(
    "fusebox_shadow_opened_total",
    Kind::Counter,
    "Times the shadow settings would have opened the breaker.",
);
pub(crate) const OPENED_AGO: Family = fam(
    "fusebox_shadow_opened_ago_seconds",
    Kind::Gauge,
    "Seconds since the shadow would have opened from closed, last (absent if it never would have).",
);
pub(crate) const CLOSED_AGO: Family = fam(
    "fusebox_shadow_closed_ago_seconds",
    Kind::Gauge,
    "Seconds since the shadow would have closed again after that (absent while it would still be open).",
);
pub(crate) const FAILURE_RATIO: Family = fam(
    "fusebox_shadow_failure_ratio",
    Kind::Gauge,
    "Failed share of the shadow's window, from 0 to 1.",
);
pub(crate) const SLOW_RATIO: Family = fam(
    "fusebox_shadow_slow_ratio",
    Kind::Gauge,
    "Slow share of the shadow's window (by the shadow's slow rule), from 0 to 1.",
);

type Each = fn(&ShadowMetrics, &mut dyn FnMut(Option<(&'static str, &str)>, Num));

/// Every family, announced even when no breaker has a shadow, as the others are.
pub(crate) fn visit(m: &Metrics, sink: &mut dyn Sink) {
    let families: [(&Family, Each); 8] = [
        (&STATE, |s, out| {
            for st in State::ALL {
                out(
                    Some(("state", st.as_str())),
                    Num::Int(u64::from(s.state == st)),
                );
            }
        }),
        (&SEEN, |s, out| out(None, Num::Int(s.calls_seen))),
        (&REFUSED, |s, out| out(None, Num::Int(s.would_have_refused))),
        (&OPENED, |s, out| out(None, Num::Int(s.openings))),
        (&OPENED_AGO, |s, out| {
            if let Some(d) = s.opened_ago {
                out(None, Num::Float(d.as_secs_f64()));
            }
        }),
        (&CLOSED_AGO, |s, out| {
            if let Some(d) = s.closed_ago {
                out(None, Num::Float(d.as_secs_f64()));
            }
        }),
        (&FAILURE_RATIO, |s, out| {
            out(None, Num::Float(s.failure_rate / 100.0))
        }),
        (&SLOW_RATIO, |s, out| {
            out(None, Num::Float(s.slow_rate / 100.0))
        }),
    ];
    for (f, each) in families {
        sink.family(f);
        for b in &m.breakers {
            if let Some(s) = &b.shadow {
                each(s, &mut |extra, v| sample(sink, f, b, extra, v));
            }
        }
    }
}

fn sample(
    sink: &mut dyn Sink,
    f: &Family,
    b: &BreakerMetrics,
    extra: Option<(&'static str, &str)>,
    v: Num,
) {
    let mut labels = breaker_labels(b);
    labels.extend(extra);
    sink.sample(f, &labels, v);
}
