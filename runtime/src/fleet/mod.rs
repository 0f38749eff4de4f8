//! Fleet mode on Redis (feature `redis`): one view of a service's instances, fleet-wide
//! overrides, quorum opening and warm restarts, with nothing on the call path.
//!
//! Each process that calls [`join`] runs one background task. Every heartbeat (1 s) it
//! publishes its breakers under its own key with a TTL (5 s), so a dead instance drops out by
//! itself, and reads the other instances and the fleet overrides. Calls never wait on Redis:
//! the task reads the registry and acts through [`Breaker`](crate::Breaker) handles.
//!
//! - **Overrides** ([`Fleet::force_open`], [`Fleet::force_close`], [`Fleet::reset`], the admin
//!   router's `?scope=fleet&for=10m`) reach every live instance at its next read, are logged
//!   with who asked and until when, and end on each instance's own clock, Redis or not.
//! - **Quorum opening** ([`FleetConfig::quorum`]): a closed breaker opens here while enough
//!   live instances report it open on their own judgement; it then probes on its own schedule.
//! - **Warm start**: [`join`] waits (at most 500 ms) for the first read, so a breaker under
//!   quorum starts open mid-outage.
//! - **Redis away**: one WARN, reconnection with backoff and jitter, a full resync on return;
//!   [`status`] and the `fusebox_fleet_link_up` gauge show the link.
//! - **Metrics**: while joined, every snapshot of `metrics()` holds the fleet's gauges, so
//!   `metrics().to_prometheus()` and `export::prometheus()` are one text (and the `metrics`
//!   facade publishes them too): `fusebox_fleet_link_up`, `fusebox_fleet_link_state{state}`,
//!   `fusebox_fleet_live_instances`, `fusebox_fleet_overrides`, labelled `service` and `instance`.
//!
//! ```no_run
//! use fusebox::fleet;
//! use fusebox::fleet::FleetConfig;
//! # #[tokio::main] async fn main() -> Result<(), fleet::FleetError> {
//! let fleet = fleet::join(
//!     FleetConfig::new("redis://:secret@redis.internal:6379/0", "checkout", "pod-7")
//!         .quorum("payments", 50, 3),
//! )
//! .await?;
//! // During an incident, from any one instance:
//! fleet.force_open("payments", std::time::Duration::from_secs(600), "alice").await?;
//! println!("{:?}", fleet::status());
//! fleet.leave().await;
//! # Ok(()) }
//! ```
//!
//! # The link's states
//!
//! [`LinkState`] is the link as the task last found it: it exchanges with Redis once per
//! heartbeat, each exchange bounded by half a heartbeat (at most 1 s). [`status`], `GET /fleet`
//! and the gauges show it. It starts `connecting`, becomes `up` or `down` when the first
//! exchange ends, then moves between those two; it never goes back to `connecting`. In every
//! state calls are the same few atomics: none waits on Redis or reads it.
//!
//! - **`connecting`**: no exchange with Redis has ended yet. [`join`] leaves it when Redis has
//!   not answered within [`FleetConfig::warm_start_wait`] (a Redis that accepts the connection
//!   but never answers); it turns `down` once that first attempt times out (within two
//!   bounds).
//!   *Overrides*: none read yet; a send fails at once with [`FleetError::LinkDown`].
//!   *Quorums*: none counted: every breaker judges on its own calls alone.
//!   *Gauges*: `link_up` 0, `link_state{state="connecting"}` 1, `live_instances` 1 (this one),
//!   `overrides` 0.
//! - **`up`**: the last exchange succeeded.
//!   *Overrides*: a send is written to Redis and applied by every live instance at its next
//!   read; those held here end on this instance's clock.
//!   *Quorums*: judged at every read, on the fresh view.
//!   *Gauges*: `link_up` 1, `link_state{state="up"}` 1, `live_instances` as read,
//!   `overrides` held here.
//! - **`down`**: the last connection or exchange failed (refused, reset, timed out, an error
//!   reply); one WARN per outage, reconnection with backoff and jitter (at most
//!   [`FleetConfig::reconnect_max`]), then INFO and a full resync when Redis answers again.
//!   *Overrides*: a send fails at once with [`FleetError::LinkDown`]; those held here still end
//!   on time; those others sent meanwhile are applied at the resync if still in force.
//!   *Quorums*: frozen: no quorum opens on a stale view; a breaker a quorum opened stays open
//!   for its open period, then probes on its own.
//!   *Gauges*: `link_up` 0, `link_state{state="down"}` 1, `live_instances` as at the last
//!   successful read, `overrides` held here (falling as they end).
//!
//! **One error for an unreachable fleet.** A send that does not reach Redis fails with
//! [`FleetError::LinkDown`] whatever the cause, [`LinkFault`] saying which: the link not up
//! (`NotUp`, with the task's last error: refused, timed out...), or, while it is still `up`
//! because the task has not yet noticed (up to one heartbeat), a connection that broke under
//! the send (`Broken`: Redis killed or restarted), no answer within the exchange's bound
//! (`TimedOut`: frozen or partitioned) or an error reply (`ErrorReply`). Match
//! `FleetError::LinkDown { .. }` and every one of them is caught, from the first send.

mod config;
mod error;
mod gauges;
mod link;
mod overrides;
mod publish;
mod quorum;
mod settings;
mod shared;
mod status;
mod sync;
mod task;

use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use tokio::sync::oneshot;
use tokio::task::JoinHandle;

pub use config::{FleetConfig, QuorumRule};
pub use error::{FleetError, LinkFault};
pub use link::LinkState;
pub use overrides::Action;
pub use publish::{BreakerReport, InstanceReport, OverrideStatus, Sees};
pub use status::{status, view, FleetStatus, FleetView};

use crate::registry::registry;
use shared::{lock, Shared};

/// The process's fleet, while joined: one per process.
static CURRENT: Mutex<Weak<Shared>> = Mutex::new(Weak::new());

pub(crate) fn current() -> Option<Arc<Shared>> {
    lock(&CURRENT).upgrade()
}

/// Joins the fleet: checks `config`, starts the background task and waits for the first read
/// of the fleet (at most [`FleetConfig::warm_start_wait`]), so overrides and quorums apply
/// before the caller serves. Redis being unreachable is not an error: the instance starts on
/// its own judgement and the task keeps reconnecting.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// use fusebox::fleet::{join, FleetConfig, FleetError};
/// let bad = join(FleetConfig::new("http://example.com", "svc", "pod-1")).await;
/// assert!(matches!(bad.err(), Some(FleetError::BadUrl { .. })));
/// # }
/// ```
pub async fn join(config: FleetConfig) -> Result<Fleet, FleetError> {
    config.validate()?;
    crate::metrics::export::add_to_snapshots(gauges::samples);
    let client = redis::Client::open(config.url.as_str()).map_err(|e| FleetError::BadUrl {
        reason: e.to_string(),
    })?;
    // rustls panics without a process-wide crypto provider; install ours unless one is there.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let runtime = tokio::runtime::Handle::try_current().map_err(|_| FleetError::NoRuntime)?;
    let wait = config.warm_start_wait;
    let shared = Arc::new(Shared::new(config, client));
    {
        let mut cur = lock(&CURRENT);
        if cur.upgrade().is_some() {
            return Err(FleetError::AlreadyJoined);
        }
        *cur = Arc::downgrade(&shared);
    }
    crate::retry_after::set_fleet_hook(hold_everywhere);
    let (stop, stop_rx) = oneshot::channel();
    let (first_tx, first_rx) = oneshot::channel();
    let task = runtime.spawn(task::run(shared.clone(), stop_rx, first_tx));
    let _ = tokio::time::timeout(wait, first_rx).await;
    Ok(Fleet {
        shared,
        stop: Some(stop),
        task: Some(task),
    })
}

/// A `retry_after` hold made on this instance, sent to every instance as a fleet override
/// (forced open with that expiry), so a dependency that asked one instance to stop is left
/// alone by all of them. Sent from a task of its own: the caller that read the hint never
/// waits on Redis. Outside a fleet, or with the link down, the hold stays local (one WARN).
fn hold_everywhere(breaker: &str, for_: Duration) {
    let (Some(shared), Ok(rt)) = (current(), tokio::runtime::Handle::try_current()) else {
        return;
    };
    let breaker = breaker.to_owned();
    let by = format!("retry_after@{}", shared.config.instance);
    rt.spawn(async move {
        if let Err(e) = shared.send(&breaker, Action::ForceOpen, for_, &by).await {
            tracing::warn!(breaker, error = %e, "retry_after hold not sent to the fleet: held here only");
        }
    });
}

/// This process's membership of a fleet. Dropping it (or [`leave`](Fleet::leave)) stops the
/// task and lifts the fleet overrides it holds here.
///
/// ```no_run
/// # use std::time::Duration;
/// # use fusebox::fleet::{join, FleetConfig};
/// # #[tokio::main] async fn main() -> Result<(), fusebox::fleet::FleetError> {
/// let fleet = join(FleetConfig::new("redis://127.0.0.1/", "checkout", "pod-7")).await?;
/// fleet.force_close("search", Duration::from_secs(300), "bob").await?;
/// assert!(fleet.status().live.contains(&"pod-7".to_owned()));
/// # Ok(()) }
/// ```
pub struct Fleet {
    shared: Arc<Shared>,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<()>>,
}

impl Fleet {
    /// Holds `breaker` open on every live instance for `for_`; `by` is logged everywhere.
    ///
    /// ```no_run
    /// # use std::time::Duration;
    /// # async fn demo(fleet: fusebox::fleet::Fleet) -> Result<(), fusebox::fleet::FleetError> {
    /// fleet.force_open("payments", Duration::from_secs(600), "alice").await?;
    /// # Ok(()) }
    /// ```
    pub async fn force_open(
        &self,
        breaker: &str,
        for_: Duration,
        by: &str,
    ) -> Result<(), FleetError> {
        self.send(breaker, Action::ForceOpen, for_, by).await
    }

    /// Holds `breaker` closed on every live instance for `for_`.
    ///
    /// ```no_run
    /// # use std::time::Duration;
    /// # async fn demo(fleet: fusebox::fleet::Fleet) -> Result<(), fusebox::fleet::FleetError> {
    /// fleet.force_close("payments", Duration::from_secs(60), "alice").await?;
    /// # Ok(()) }
    /// ```
    pub async fn force_close(
        &self,
        breaker: &str,
        for_: Duration,
        by: &str,
    ) -> Result<(), FleetError> {
        self.send(breaker, Action::ForceClose, for_, by).await
    }

    /// Resets `breaker` once on every instance live in the next two TTLs; it also replaces
    /// (ends) a fleet override of that breaker.
    ///
    /// ```no_run
    /// # use std::time::Duration;
    /// # async fn demo(fleet: fusebox::fleet::Fleet) -> Result<(), fusebox::fleet::FleetError> {
    /// fleet.reset("payments", "alice").await?;
    /// # Ok(()) }
    /// ```
    pub async fn reset(&self, breaker: &str, by: &str) -> Result<(), FleetError> {
        // `join` bounds the TTL; saturating all the same, so no config can make this panic.
        let ttl = self.shared.config.ttl_or_default().saturating_mul(2);
        self.send(breaker, Action::Reset, ttl, by).await
    }

    /// Sends any [`Action`] for `for_` (its Redis TTL). One override per breaker: a new one
    /// replaces the last. Fails with [`FleetError::LinkDown`] whenever it does not reach Redis
    /// (the link not up, a broken connection, no answer within half a heartbeat, an error
    /// reply): see [the link's states](self#the-links-states). It never waits longer than one
    /// exchange's bound.
    ///
    /// ```no_run
    /// # use std::time::Duration;
    /// # async fn demo(fleet: fusebox::fleet::Fleet) -> Result<(), fusebox::fleet::FleetError> {
    /// use fusebox::fleet::Action;
    /// fleet.send("payments", Action::ForceOpen, Duration::from_secs(600), "alice").await?;
    /// # Ok(()) }
    /// ```
    pub async fn send(
        &self,
        breaker: &str,
        action: Action,
        for_: Duration,
        by: &str,
    ) -> Result<(), FleetError> {
        self.shared.send(breaker, action, for_, by).await
    }

    /// The link, the live instances, and the overrides and quorums in effect here.
    ///
    /// ```no_run
    /// # use std::time::Duration;
    /// # async fn demo(fleet: fusebox::fleet::Fleet) -> Result<(), fusebox::fleet::FleetError> {
    /// let s = fleet.status();
    /// println!("{} sees {} live instances", s.instance, s.live.len());
    /// # Ok(()) }
    /// ```
    pub fn status(&self) -> FleetStatus {
        self.shared.status()
    }

    /// Every live instance's last heartbeat (this one's fresh), sorted by instance.
    ///
    /// ```no_run
    /// # use std::time::Duration;
    /// # async fn demo(fleet: fusebox::fleet::Fleet) -> Result<(), fusebox::fleet::FleetError> {
    /// for i in fleet.view().instances {
    ///     println!("{}: {} breakers", i.instance, i.breakers.len());
    /// }
    /// # Ok(()) }
    /// ```
    pub fn view(&self) -> FleetView {
        self.shared.view()
    }

    /// Leaves now: stops the task, removes this instance's heartbeat (so the others stop
    /// counting it at their next read rather than after the TTL) and lifts its overrides.
    ///
    /// ```no_run
    /// # use std::time::Duration;
    /// # async fn demo(fleet: fusebox::fleet::Fleet) -> Result<(), fusebox::fleet::FleetError> {
    /// fleet.leave().await;
    /// # Ok(()) }
    /// ```
    pub async fn leave(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            let _ = tokio::time::timeout(self.shared.op_timeout() * 4, task).await;
        }
        if let Some(mut conn) = self.shared.conn() {
            let keys = &self.shared.keys;
            let me = &self.shared.config.instance;
            let mut pipe = redis::pipe();
            pipe.cmd("DEL")
                .arg(keys.instance(me))
                .ignore()
                .cmd("ZREM")
                .arg(keys.instances())
                .arg(me)
                .ignore();
            let gone = pipe.query_async::<()>(&mut conn);
            let _ = tokio::time::timeout(self.shared.op_timeout(), gone).await;
        }
    }
}

impl Drop for Fleet {
    fn drop(&mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
        }
        let mut cur = lock(&CURRENT);
        if cur.as_ptr() == Arc::as_ptr(&self.shared) {
            *cur = Weak::new();
        }
        drop(cur);
        let mut inner = self.shared.inner();
        inner.overrides.release_all(|n| registry().breaker(n));
        inner.settings.release_all();
    }
}

impl std::fmt::Debug for Fleet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Fleet")
            .field("service", &self.shared.config.service)
            .field("instance", &self.shared.config.instance)
            .field("link", &self.shared.link())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A port nothing listens on: bound, then released.
    fn closed_port() -> u16 {
        std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .unwrap()
    }

    // Real time: connection attempts to a closed loopback port fail at once.
    #[tokio::test(flavor = "multi_thread", worker_threads = 1)]
    async fn without_redis_join_returns_promptly_on_its_own_and_tls_urls_do_not_panic() {
        for url in [
            format!("redis://127.0.0.1:{}/", closed_port()),
            format!("rediss://user:pw@127.0.0.1:{}/0", closed_port()),
        ] {
            let started = tokio::time::Instant::now();
            let fleet = join(FleetConfig::new(url, "unit", "pod-1")).await.unwrap();
            assert!(started.elapsed() < Duration::from_secs(2));
            assert_eq!(fleet.status().link, LinkState::Down);
            assert!(fleet.status().last_error.is_some());
            let err = fleet.force_open("x", Duration::from_secs(1), "me").await;
            assert!(
                matches!(
                    &err,
                    Err(FleetError::LinkDown {
                        cause: LinkFault::NotUp {
                            state: LinkState::Down,
                            last_error: Some(_)
                        }
                    })
                ),
                "{err:?}"
            );
            let text = crate::metrics::export::prometheus();
            assert!(text.contains("fusebox_fleet_link_up{service=\"unit\",instance=\"pod-1\"} 0"));
            drop(fleet);
            assert!(status().is_none());
        }
    }
}
