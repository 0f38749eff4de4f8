//! What an instance publishes under its own key, and the keys of one service's namespace.

use serde::{Deserialize, Serialize};

use super::overrides::Action;
use super::LinkState;
use crate::state::State;

/// One instance's heartbeat: its breakers and what it sees of the fleet.
///
/// This is the JSON stored under `fusebox:{service}:instance:<id>` with the heartbeat's TTL,
/// and one entry of `GET /fleet`.
///
/// ```
/// # fn show(r: &fusebox::fleet::InstanceReport) {
/// for b in r.breakers.iter().filter(|b| b.votes_open) {
///     println!("{} sees {} open for {:.0} s", r.instance, b.name, b.time_in_state_s);
/// }
/// # }
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct InstanceReport {
    /// The instance id.
    pub instance: String,
    /// Its wall clock when it published, in Unix milliseconds (for display only).
    pub at_unix_ms: u64,
    /// Every breaker of its registry, sorted by name.
    pub breakers: Vec<BreakerReport>,
    /// What it sees.
    pub sees: Sees,
}

/// One breaker as an instance reports it.
///
/// ```
/// # fn show(b: &fusebox::fleet::BreakerReport) {
/// println!("{} {} ({:.1}% failing)", b.name, b.state, b.failure_rate_pct);
/// # }
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct BreakerReport {
    /// Registry name.
    pub name: String,
    /// `closed`, `open`, `half_open`, `forced_open` or `forced_closed`.
    pub state: String,
    /// Seconds since its last transition.
    pub time_in_state_s: f64,
    /// Failed share of its window, in percent.
    pub failure_rate_pct: f64,
    /// Slow share of its window, in percent.
    pub slow_rate_pct: f64,
    /// Calls in its window.
    pub window_calls: u64,
    /// Times it opened since the process started.
    pub times_opened: u64,
    /// Open or half-open on its own judgement: this is what quorums count. A breaker
    /// opened by a quorum or held by an override never votes, so no opinion echoes.
    pub votes_open: bool,
    /// `"override"` or `"quorum"` while the fleet put it in its state.
    pub by_fleet: Option<String>,
}

/// What an instance sees of the fleet.
///
/// ```
/// # fn show(s: &fusebox::fleet::Sees) {
/// println!("link {}, live: {}", s.link.as_str(), s.live.join(", "));
/// # }
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Sees {
    /// Its link to Redis.
    pub link: LinkState,
    /// The live instances it saw at its last read, itself included, sorted.
    pub live: Vec<String>,
    /// The fleet overrides it holds now.
    pub overrides: Vec<OverrideStatus>,
}

/// A fleet override as one instance holds it.
///
/// ```
/// # fn show(o: &fusebox::fleet::OverrideStatus) {
/// println!("{} {} by {} until {}", o.breaker, o.action.as_str(), o.by, o.until);
/// # }
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct OverrideStatus {
    /// The breaker.
    pub breaker: String,
    /// What was asked.
    pub action: Action,
    /// Who asked.
    pub by: String,
    /// Until when, as the asker's wall clock put it (RFC 3339, UTC).
    pub until: String,
    /// Seconds left on this instance's own clock.
    pub remaining_s: f64,
}

impl BreakerReport {
    /// The reported state, if it is one this version knows.
    ///
    /// ```
    /// # use fusebox::fleet::InstanceReport;
    /// # fn first(r: &InstanceReport) { let _ =
    /// r.breakers[0].state() == Some(fusebox::State::Open)
    /// # ; }
    /// ```
    pub fn state(&self) -> Option<State> {
        State::ALL.into_iter().find(|s| s.as_str() == self.state)
    }
}

/// The keys of one service; the `{service}` hash tag keeps them in one Redis Cluster slot.
#[derive(Debug, Clone)]
pub(crate) struct Keys {
    prefix: String,
}

impl Keys {
    pub(crate) fn new(service: &str) -> Keys {
        Keys {
            prefix: format!("fusebox:{{{service}}}:"),
        }
    }
    /// Sorted set of instance ids (score: last heartbeat, Unix ms); an index, the TTL'd keys are the truth.
    pub(crate) fn instances(&self) -> String {
        format!("{}instances", self.prefix)
    }
    pub(crate) fn instance(&self, id: &str) -> String {
        format!("{}instance:{id}", self.prefix)
    }
    /// Set of breaker names that have (or had) a fleet override.
    pub(crate) fn overrides(&self) -> String {
        format!("{}overrides", self.prefix)
    }
    pub(crate) fn override_of(&self, breaker: &str) -> String {
        format!("{}override:{breaker}", self.prefix)
    }
    /// Set of `breaker:<name>` / `bulkhead:<name>` that have (or had) a fleet settings change.
    pub(crate) fn settings(&self) -> String {
        format!("{}settings", self.prefix)
    }
    pub(crate) fn settings_of(&self, member: &str) -> String {
        format!("{}settings:{member}", self.prefix)
    }
}

/// Wall-clock milliseconds since the Unix epoch (display only; deadlines use `tokio::time`).
pub(crate) fn unix_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// `2026-12-03T08:15:00.250Z` from Unix milliseconds (civil-from-days, proleptic Gregorian).
pub(crate) fn rfc3339(ms: u64) -> String {
    let (secs, millis) = (ms / 1000, ms % 1000);
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{millis:03}Z",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_formats_known_instants() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(rfc3339(951_782_400_123), "2000-02-29T00:00:00.123Z");
        assert_eq!(rfc3339(1_796_288_130_000), "2026-12-03T08:55:30.000Z");
    }

    #[test]
    fn keys_share_one_hash_tag() {
        let k = Keys::new("checkout");
        assert_eq!(k.instance("pod-7"), "fusebox:{checkout}:instance:pod-7");
        assert_eq!(
            k.override_of("payments"),
            "fusebox:{checkout}:override:payments"
        );
    }
}
