//! The cold-start replay once more, with its three breakers written as attributes: the replay
//! then runs the code `#[breaker]` generates, not only the builder API.

use std::io;
use std::time::Duration;

use fusebox::breaker;
use fusebox::registry;
use fusebox_sim::replay::cold_start::{self, ColdStartSetup};
use fusebox_sim::{Call, Dependency, SimError};

/// The write-up's configuration: one trial, open 30 s doubling up to 30 minutes.
#[breaker(
    name = "address-lookup",
    key = "old",
    window_calls = 20,
    failure_rate = 50,
    timeout = "800ms",
    open_for = "30s",
    backoff = 2.0,
    open_for_max = "30m",
    half_open_calls = 1
)]
pub async fn lookup_old(provider: Dependency) -> Result<(), SimError> {
    provider.call().await
}

/// fusebox's: 5 % of traffic for 30 s, 4 s trial timeout, open 60 s, no doubling.
#[breaker(
    name = "address-lookup",
    key = "new",
    window_calls = 20,
    failure_rate = 50,
    timeout = "800ms",
    half_open_timeout = "4s",
    half_open_pct = 5,
    half_open_window = "30s",
    open_for = "60s"
)]
pub async fn lookup_new(provider: Dependency) -> Result<(), SimError> {
    provider.call().await
}

/// fusebox following the provider back (issue 22): the new configuration, probing every
/// second while open, a 5 s half-open window and a 5 s ramp.
#[breaker(
    name = "address-lookup",
    key = "follow",
    window_calls = 20,
    failure_rate = 50,
    timeout = "800ms",
    half_open_timeout = "4s",
    half_open_pct = 5,
    half_open_window = "5s",
    open_for = "60s",
    probe_every = "1s",
    ramp = "5s"
)]
pub async fn lookup_follow(provider: Dependency) -> Result<(), SimError> {
    provider.call().await
}

/// What the annotated replay measured.
#[derive(Debug)]
pub struct Annotated {
    /// Recovery of the old and the new configuration.
    pub recovery: (Option<Duration>, Option<Duration>),
    /// Recovery of the follow configuration (probe + ramp).
    pub follow: Option<Duration>,
    /// Registrations whose settings differed from the builder's: 0 when the attributes
    /// configure exactly the breakers the builder-based replay uses.
    pub conflicts: u64,
}

/// Runs the three annotated functions through the cold-start replay. Call once per process: the
/// attributes' breakers live in the global registry.
pub fn cold_start(setup: &ColdStartSetup) -> io::Result<Annotated> {
    // Registered up front with the builder's settings, so the run can watch them; the
    // attributes find them under the same `name/key`, and count a conflict if they differ.
    let old_cfg = cold_start::old_breaker()
        .config()
        .map_err(io::Error::other)?;
    let new_cfg = cold_start::new_breaker()
        .config()
        .map_err(io::Error::other)?;
    let follow_cfg = cold_start::follow_breaker()
        .config()
        .map_err(io::Error::other)?;
    let old = registry().keyed(&old_cfg, &"old");
    let follow = registry().keyed(&follow_cfg, &"follow");
    let new = registry().keyed(&new_cfg, &"new");
    let (_, old_recovery) =
        cold_start::run_call(setup, |dep| Call::function(dep, lookup_old).watch(&old))?;
    let (_, new_recovery) =
        cold_start::run_call(setup, |dep| Call::function(dep, lookup_new).watch(&new))?;
    let (_, follow_recovery) = cold_start::run_call(setup, |dep| {
        Call::function(dep, lookup_follow).watch(&follow)
    })?;
    Ok(Annotated {
        recovery: (old_recovery, new_recovery),
        follow: follow_recovery,
        conflicts: old.metrics().conflicts + new.metrics().conflicts + follow.metrics().conflicts,
    })
}
