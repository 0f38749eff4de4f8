//! What this process knows of its fleet, for operators: [`FleetStatus`] (the link, the live
//! instances, the overrides in force) and [`FleetView`] (every live instance's heartbeat, what
//! `GET /fleet` answers), through the joined [`Fleet`](super::Fleet) or the process-wide
//! [`status`] and [`view`].

use super::current;
use super::link::LinkState;
use super::publish::{InstanceReport, OverrideStatus};

/// What this instance knows of its fleet now.
///
/// ```
/// if let Some(s) = fusebox::fleet::status() {
///     println!("link {}, {} live, {} overrides", s.link.as_str(), s.live.len(), s.overrides.len());
/// }
/// ```
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[non_exhaustive]
pub struct FleetStatus {
    /// The service (key namespace).
    pub service: String,
    /// This instance's id.
    pub instance: String,
    /// The link to Redis.
    pub link: LinkState,
    /// The last error of the link, while it is not up.
    pub last_error: Option<String>,
    /// Seconds since the last successful read of the fleet.
    pub last_sync_age_s: Option<f64>,
    /// Live instances at the last read, this one included, sorted.
    pub live: Vec<String>,
    /// Fleet overrides held here.
    pub overrides: Vec<OverrideStatus>,
    /// Breakers held open here by a quorum.
    pub quorum_open: Vec<String>,
}

/// `GET /fleet`: this instance's status and every live instance's heartbeat.
///
/// ```
/// if let Some(v) = fusebox::fleet::view() {
///     let open = v.instances.iter().filter(|i| i.breakers.iter().any(|b| b.votes_open)).count();
///     println!("{open} of {} instances have a breaker open", v.instances.len());
/// }
/// ```
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[non_exhaustive]
pub struct FleetView {
    /// What this instance knows.
    pub status: FleetStatus,
    /// Every live instance, this one included, sorted by id.
    pub instances: Vec<InstanceReport>,
}

/// The process's fleet status, if it joined one.
///
/// ```
/// assert!(fusebox::fleet::status().is_none());
/// ```
pub fn status() -> Option<FleetStatus> {
    current().map(|s| s.status())
}

/// The process's fleet view (what `GET /fleet` answers), if it joined one.
///
/// ```
/// assert!(fusebox::fleet::view().is_none());
/// ```
pub fn view() -> Option<FleetView> {
    current().map(|s| s.view())
}
