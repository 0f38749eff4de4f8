//! The fleet's gauges, added to every snapshot of `metrics()`, so each Prometheus output (and
//! the `metrics` facade) carries them.

use super::{current, LinkState};
use crate::metrics::export::samples::{Extra, Family, Kind, Num};

static LINK_UP: Family = Family {
    name: "fusebox_fleet_link_up",
    kind: Kind::Gauge,
    help: "1 while this instance's link to the fleet's Redis is up (0 connecting or down).",
};
static LINK_STATE: Family = Family {
    name: "fusebox_fleet_link_state",
    kind: Kind::Gauge,
    help: "1 for the link's current state (connecting, up, down), 0 for the others.",
};
static LIVE: Family = Family {
    name: "fusebox_fleet_live_instances",
    kind: Kind::Gauge,
    help: "Live instances at the last successful read of the fleet, this one included (1 until the first read; frozen while the link is down).",
};
static OVERRIDES: Family = Family {
    name: "fusebox_fleet_overrides",
    kind: Kind::Gauge,
    help:
        "Fleet overrides held on this instance (each ends on this instance's clock, link or not).",
};

/// The gauges now, labelled `service` and `instance`; none unless this process is joined.
pub(crate) fn samples() -> Vec<Extra> {
    let Some(shared) = current() else {
        return Vec::new();
    };
    let st = shared.status();
    let labels = || {
        vec![
            ("service", st.service.clone()),
            ("instance", st.instance.clone()),
        ]
    };
    let gauge = |family, labels, value: usize| Extra {
        family,
        labels,
        value: Num::Int(value as u64),
    };
    let mut out = vec![gauge(
        &LINK_UP,
        labels(),
        usize::from(st.link == LinkState::Up),
    )];
    for s in [LinkState::Connecting, LinkState::Up, LinkState::Down] {
        let mut l = labels();
        l.push(("state", s.as_str().to_owned()));
        out.push(gauge(&LINK_STATE, l, usize::from(st.link == s)));
    }
    out.push(gauge(&LIVE, labels(), st.live.len()));
    out.push(gauge(&OVERRIDES, labels(), st.overrides.len()));
    out
}
