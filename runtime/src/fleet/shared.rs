//! The state one process's fleet task shares with its handle, the admin router and metrics.

use std::sync::atomic::{AtomicU64, AtomicU8, Ordering::Relaxed};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use redis::aio::MultiplexedConnection;
use tokio::time::Instant;

use super::config::FleetConfig;
use super::overrides::{Action, Record, Table};
use super::publish::{rfc3339, unix_ms, BreakerReport, InstanceReport, Keys, Sees};
use super::quorum::Tracker;
use super::{FleetError, FleetStatus, FleetView, LinkFault, LinkState};
use crate::registry::key_name::loggable;
use crate::registry::registry;
use crate::state::State;

/// Longest fleet override: a forgotten one must still end.
pub(crate) const MAX_OVERRIDE: Duration = Duration::from_secs(7 * 24 * 3600);

pub(crate) struct Shared {
    pub(crate) config: FleetConfig,
    pub(crate) keys: Keys,
    pub(crate) client: redis::Client,
    link: AtomicU8,
    /// A clone of the task's connection while the link is up, for sending overrides.
    conn: Mutex<Option<MultiplexedConnection>>,
    inner: Mutex<Inner>,
    pub(super) seq: AtomicU64,
}

#[derive(Default)]
pub(crate) struct Inner {
    pub(crate) overrides: Table,
    /// Fleet-wide settings changes applied here (issue 29).
    pub(crate) settings: super::settings::Applied,
    pub(crate) quorum: Tracker,
    /// The other live instances at the last successful read.
    pub(crate) others: Vec<InstanceReport>,
    pub(crate) last_sync: Option<Instant>,
    pub(crate) last_error: Option<String>,
}

pub(crate) use crate::sync::lock_std as lock;

impl Shared {
    pub(crate) fn new(config: FleetConfig, client: redis::Client) -> Shared {
        Shared {
            keys: Keys::new(&config.service),
            config,
            client,
            link: AtomicU8::new(LinkState::Connecting.code()),
            conn: Mutex::new(None),
            inner: Mutex::new(Inner::default()),
            seq: AtomicU64::new(0),
        }
    }

    pub(crate) fn inner(&self) -> MutexGuard<'_, Inner> {
        lock(&self.inner)
    }

    /// Bound on one exchange with Redis: half a heartbeat, at most one second.
    pub(crate) fn op_timeout(&self) -> Duration {
        (self.config.heartbeat / 2).min(Duration::from_secs(1))
    }

    pub(crate) fn link(&self) -> LinkState {
        LinkState::from_code(self.link.load(Relaxed))
    }

    pub(crate) fn up(&self, conn: MultiplexedConnection) {
        // The connection first: a send that sees the link up finds it.
        *lock(&self.conn) = Some(conn);
        let was = self.link.swap(LinkState::Up.code(), Relaxed);
        self.inner().last_error = None;
        if was == LinkState::Down.code() {
            tracing::info!(
                service = %self.config.service,
                instance = %self.config.instance,
                "fleet link to Redis is back; resynced"
            );
        }
    }

    /// Marks the link down; only the first failure of an outage logs a WARN.
    pub(crate) fn down(&self, error: String) {
        let was = self.link.swap(LinkState::Down.code(), Relaxed);
        *lock(&self.conn) = None;
        if was != LinkState::Down.code() {
            tracing::warn!(
                service = %self.config.service,
                instance = %self.config.instance,
                %error,
                "fleet link to Redis is down; calls are unaffected, reconnecting with backoff"
            );
        } else {
            tracing::debug!(%error, "fleet reconnection failed");
        }
        self.inner().last_error = Some(error);
    }

    pub(crate) fn conn(&self) -> Option<MultiplexedConnection> {
        lock(&self.conn).clone()
    }

    /// Ends the overrides due now; the task calls it on time, whatever the link does.
    pub(crate) fn expire(&self) {
        self.inner()
            .overrides
            .expire(Instant::now(), |n| registry().breaker(n));
    }

    pub(crate) fn next_expiry(&self) -> Option<Instant> {
        self.inner().overrides.next_expiry()
    }

    /// This instance's heartbeat: every breaker of the registry and what it sees.
    pub(crate) fn own_report(&self) -> InstanceReport {
        let now = Instant::now();
        let mut inner = self.inner();
        let inner = &mut *inner;
        let breakers = registry()
            .breakers()
            .iter()
            .map(|b| {
                let m = b.metrics();
                let quorum = inner.quorum.holds(b, m.times_opened);
                let by_fleet = if quorum {
                    Some("quorum".to_owned())
                } else if inner.overrides.holds(&m.name, m.state) {
                    Some("override".to_owned())
                } else {
                    None
                };
                BreakerReport {
                    votes_open: matches!(m.state, State::Open | State::HalfOpen) && !quorum,
                    state: m.state.as_str().to_owned(),
                    time_in_state_s: m.time_in_state.as_secs_f64(),
                    failure_rate_pct: m.failure_rate,
                    slow_rate_pct: m.slow_rate,
                    window_calls: m.window_calls,
                    times_opened: m.times_opened,
                    by_fleet,
                    name: m.name,
                }
            })
            .collect();
        InstanceReport {
            instance: self.config.instance.clone(),
            at_unix_ms: unix_ms(),
            breakers,
            sees: Sees {
                link: self.link(),
                live: live(&self.config.instance, &inner.others),
                overrides: inner.overrides.status(now),
            },
        }
    }

    pub(crate) fn status(&self) -> FleetStatus {
        let now = Instant::now();
        let inner = self.inner();
        FleetStatus {
            service: self.config.service.clone(),
            instance: self.config.instance.clone(),
            link: self.link(),
            last_error: inner.last_error.clone(),
            last_sync_age_s: inner
                .last_sync
                .map(|t| now.saturating_duration_since(t).as_secs_f64()),
            live: live(&self.config.instance, &inner.others),
            overrides: inner.overrides.status(now),
            quorum_open: inner.quorum.names(),
        }
    }

    pub(crate) fn view(&self) -> FleetView {
        let mut instances = vec![self.own_report()];
        instances.extend(self.inner().others.iter().cloned());
        instances.sort_by(|a, b| a.instance.cmp(&b.instance));
        FleetView {
            status: self.status(),
            instances,
        }
    }

    /// Writes a fleet override: every live instance applies it at its next read.
    pub(crate) async fn send(
        &self,
        breaker: &str,
        action: Action,
        for_: Duration,
        by: &str,
    ) -> Result<(), FleetError> {
        super::config::name("breaker", breaker)?;
        if for_ < Duration::from_millis(1) || for_ > MAX_OVERRIDE {
            return Err(FleetError::BadDuration {
                field: "override expiry",
                expected: "1ms..=7 days",
            });
        }
        let by = match by.trim() {
            "" => "unknown",
            s => s,
        };
        let Some(mut conn) = self.conn() else {
            return Err(FleetError::LinkDown {
                cause: LinkFault::NotUp {
                    state: self.link(),
                    last_error: self.inner().last_error.clone(),
                },
            });
        };
        let until_unix_ms = unix_ms().saturating_add(for_.as_millis() as u64);
        let seq = self.seq.fetch_add(1, Relaxed);
        let record = Record {
            breaker: breaker.to_owned(),
            action,
            by: by.chars().take(200).collect(),
            id: format!("{}:{}:{seq}", self.config.instance, unix_ms()),
            until_unix_ms,
        };
        // A record of strings and numbers always serializes.
        let json = serde_json::to_string(&record).unwrap_or_default();
        let key = self.keys.override_of(breaker);
        let mut pipe = redis::pipe();
        pipe.atomic()
            .cmd("SET")
            .arg(&key)
            .arg(json)
            .arg("PX")
            .arg(for_.as_millis().max(1) as u64)
            .ignore()
            .cmd("SADD")
            .arg(self.keys.overrides())
            .arg(breaker)
            .ignore();
        let bound = self.op_timeout();
        match tokio::time::timeout(bound, pipe.query_async::<()>(&mut conn)).await {
            Ok(Ok(())) => {
                tracing::warn!(
                    breaker,
                    action = action.as_str(),
                    by = %loggable(&record.by),
                    until = %rfc3339(until_unix_ms),
                    "fleet override sent to every instance"
                );
                // This instance holds it at once, not at its next read of Redis (the read
                // then finds the same id, already applied): the operator who sent it sees it
                // in force here, and it holds here if the link drops right after.
                let find = |n: &str| registry().breaker(n);
                self.inner()
                    .overrides
                    .apply(record, for_, Instant::now(), find);
                Ok(())
            }
            // Whatever failed, the fleet task would mark the link down for it: one error.
            Ok(Err(e)) => Err(FleetError::LinkDown {
                cause: LinkFault::of(&e, bound),
            }),
            Err(_) => Err(FleetError::LinkDown {
                cause: LinkFault::TimedOut { after: bound },
            }),
        }
    }
}

fn live(me: &str, others: &[InstanceReport]) -> Vec<String> {
    let mut v: Vec<String> = others.iter().map(|r| r.instance.clone()).collect();
    v.push(me.to_owned());
    v.sort();
    v
}
