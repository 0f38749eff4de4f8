//! What an instance needs to join: where Redis is, who it is, and which breakers follow a quorum.

use std::time::Duration;

use super::FleetError;

/// Where the fleet lives and who this instance is; built with [`FleetConfig::new`] and setters,
/// checked by [`join`](super::join).
///
/// ```
/// use std::time::Duration;
/// use fusebox::fleet::FleetConfig;
/// let config = FleetConfig::new("rediss://:secret@redis.internal:6380/0", "checkout", "pod-7")
///     .quorum("payments", 50, 3)
///     .heartbeat(Duration::from_secs(1));
/// assert_eq!(config.service(), "checkout");
/// ```
#[derive(Debug, Clone)]
pub struct FleetConfig {
    pub(crate) url: String,
    pub(crate) service: String,
    pub(crate) instance: String,
    pub(crate) heartbeat: Duration,
    pub(crate) ttl: Option<Duration>,
    pub(crate) warm_start_wait: Duration,
    pub(crate) reconnect_max: Duration,
    pub(crate) quorum: Vec<QuorumRule>,
}

/// Opt-in quorum opening for one breaker (or every key of a keyed one): while it is closed here
/// and at least `percent` of the live instances that have it report it open on their own
/// judgement, with at least `min_instances` live and never fewer than two voting, it opens here.
///
/// ```
/// use fusebox::fleet::FleetConfig;
/// let c = FleetConfig::new("redis://127.0.0.1/", "checkout", "pod-7").quorum("payments", 50, 3);
/// assert_eq!(c.quorum_rules()[0].percent, 50);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct QuorumRule {
    /// Registry name, or the base name of a keyed breaker.
    pub breaker: String,
    /// Share of live instances, 1..=100.
    pub percent: u8,
    /// Live instances needed before the quorum counts at all (at least 2).
    pub min_instances: u32,
}

impl QuorumRule {
    pub(crate) fn covers(&self, name: &str) -> bool {
        name == self.breaker
            || name
                .strip_prefix(self.breaker.as_str())
                .is_some_and(|rest| rest.starts_with('/'))
    }
}

const MAX_HEARTBEAT: Duration = Duration::from_secs(60);

/// The longest `ttl`: an hour of silence is an instance gone for any purpose, and a reset's
/// override, which lasts two TTLs, stays far inside an override's longest expiry (7 days).
const MAX_TTL: Duration = Duration::from_secs(3600);

impl FleetConfig {
    /// `url`: `redis://[:password@]host[:port][/db]`, `rediss://` for TLS (user names too, as
    /// `redis://user:password@host`); `service`: the key namespace shared by the fleet;
    /// `instance`: this process's id, unique in the fleet (a pod name). Heartbeat 1 s, TTL 5 s,
    /// warm start waits at most 500 ms.
    pub fn new(
        url: impl Into<String>,
        service: impl Into<String>,
        instance: impl Into<String>,
    ) -> FleetConfig {
        FleetConfig {
            url: url.into(),
            service: service.into(),
            instance: instance.into(),
            heartbeat: Duration::from_secs(1),
            ttl: None,
            warm_start_wait: Duration::from_millis(500),
            reconnect_max: Duration::from_secs(5),
            quorum: Vec::new(),
        }
    }

    /// Opens `breaker` here while `percent` of the fleet's live instances (at least
    /// `min_instances` of them live) report it open. See [`QuorumRule`].
    pub fn quorum(mut self, breaker: impl Into<String>, percent: u8, min_instances: u32) -> Self {
        self.quorum.push(QuorumRule {
            breaker: breaker.into(),
            percent,
            min_instances,
        });
        self
    }

    /// How often this instance publishes and reads the fleet (default 1 s, at most 60 s);
    /// overrides reach it within about one period.
    pub fn heartbeat(mut self, every: Duration) -> Self {
        self.heartbeat = every;
        self
    }

    /// How long a silent instance stays in the view (default five heartbeats; more than two
    /// heartbeats, at most 1 h).
    pub fn ttl(mut self, ttl: Duration) -> Self {
        self.ttl = Some(ttl);
        self
    }

    /// How long `join` waits for the fleet's view before returning (default 500 ms, at most 10 s).
    pub fn warm_start_wait(mut self, wait: Duration) -> Self {
        self.warm_start_wait = wait;
        self
    }

    /// The longest pause between reconnection attempts (default 5 s).
    pub fn reconnect_max(mut self, max: Duration) -> Self {
        self.reconnect_max = max;
        self
    }

    /// The service name (key namespace).
    pub fn service(&self) -> &str {
        &self.service
    }

    /// This instance's id.
    ///
    /// ```
    /// # use fusebox::fleet::FleetConfig;
    /// assert_eq!(FleetConfig::new("redis://h/", "svc", "pod-7").instance(), "pod-7");
    /// ```
    pub fn instance(&self) -> &str {
        &self.instance
    }

    /// The quorum rules, in the order given.
    ///
    /// ```
    /// # use fusebox::fleet::FleetConfig;
    /// assert!(FleetConfig::new("redis://h/", "svc", "pod-7").quorum_rules().is_empty());
    /// ```
    pub fn quorum_rules(&self) -> &[QuorumRule] {
        &self.quorum
    }

    /// The heartbeat's TTL in Redis.
    pub(crate) fn ttl_or_default(&self) -> Duration {
        // Saturating: `validate` bounds both, but this is read before it too.
        self.ttl.unwrap_or(self.heartbeat.saturating_mul(5))
    }

    /// Each check with its own typed error; the URL is checked by the client in `join`.
    pub(crate) fn validate(&self) -> Result<(), FleetError> {
        name("service", &self.service)?;
        name("instance", &self.instance)?;
        if self.heartbeat < Duration::from_millis(10) || self.heartbeat > MAX_HEARTBEAT {
            return Err(FleetError::BadDuration {
                field: "heartbeat",
                expected: "10ms..=60s",
            });
        }
        let ttl = self.ttl_or_default();
        if ttl <= self.heartbeat.saturating_mul(2) || ttl > MAX_TTL {
            return Err(FleetError::BadDuration {
                field: "ttl",
                expected: "more than two heartbeats, at most 1h",
            });
        }
        if self.warm_start_wait > Duration::from_secs(10) {
            return Err(FleetError::BadDuration {
                field: "warm_start_wait",
                expected: "at most 10s",
            });
        }
        if self.reconnect_max < Duration::from_millis(10) {
            return Err(FleetError::BadDuration {
                field: "reconnect_max",
                expected: "at least 10ms",
            });
        }
        for rule in &self.quorum {
            let bad = |reason| FleetError::BadQuorum {
                breaker: rule.breaker.clone(),
                reason,
            };
            if rule.breaker.is_empty() {
                return Err(bad("empty breaker name"));
            }
            if !(1..=100).contains(&rule.percent) {
                return Err(bad("percent must be 1..=100"));
            }
            if rule.min_instances < 2 {
                return Err(bad(
                    "min_instances must be at least 2: one instance never opens the others",
                ));
            }
            if self
                .quorum
                .iter()
                .filter(|r| r.breaker == rule.breaker)
                .count()
                > 1
            {
                return Err(bad("two rules for the same breaker"));
            }
        }
        Ok(())
    }
}

/// Names end up inside Redis keys: no empty ones, no whitespace or control characters.
pub(crate) fn name(field: &'static str, value: &str) -> Result<(), FleetError> {
    if value.is_empty() {
        return Err(FleetError::BadName {
            field,
            reason: "empty",
        });
    }
    if value.len() > 200 {
        return Err(FleetError::BadName {
            field,
            reason: "longer than 200 bytes",
        });
    }
    if value.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(FleetError::BadName {
            field,
            reason: "contains whitespace or a control character",
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> FleetConfig {
        FleetConfig::new("redis://127.0.0.1/", "svc", "pod-1")
    }

    #[test]
    fn each_bad_setting_has_its_own_error() {
        assert!(cfg().validate().is_ok());
        let e = |c: FleetConfig| c.validate().unwrap_err();
        assert!(matches!(
            e(FleetConfig::new("r", "svc", "")),
            FleetError::BadName {
                field: "instance",
                ..
            }
        ));
        assert!(matches!(
            e(FleetConfig::new("r", "s v", "i")),
            FleetError::BadName {
                field: "service",
                ..
            }
        ));
        assert!(matches!(
            e(cfg().heartbeat(Duration::ZERO)),
            FleetError::BadDuration {
                field: "heartbeat",
                ..
            }
        ));
        assert!(matches!(
            e(cfg().ttl(Duration::from_secs(2))),
            FleetError::BadDuration { field: "ttl", .. }
        ));
        for ttl in [MAX_TTL + Duration::from_millis(1), Duration::MAX] {
            assert!(matches!(
                e(cfg().ttl(ttl)),
                FleetError::BadDuration { field: "ttl", .. }
            ));
        }
        assert!(cfg().ttl(MAX_TTL).validate().is_ok());
        assert!(matches!(
            e(cfg().heartbeat(Duration::MAX)),
            FleetError::BadDuration {
                field: "heartbeat",
                ..
            }
        ));
        assert!(matches!(
            e(cfg().quorum("p", 0, 3)),
            FleetError::BadQuorum { .. }
        ));
        assert!(matches!(
            e(cfg().quorum("p", 101, 3)),
            FleetError::BadQuorum { .. }
        ));
        assert!(matches!(
            e(cfg().quorum("p", 50, 1)),
            FleetError::BadQuorum { .. }
        ));
        assert!(matches!(
            e(cfg().quorum("p", 50, 3).quorum("p", 60, 3)),
            FleetError::BadQuorum { .. }
        ));
    }

    #[test]
    fn a_rule_covers_its_name_and_its_keys_only() {
        let r = &cfg().quorum("redis", 50, 2).quorum[0];
        assert!(r.covers("redis"));
        assert!(r.covers("redis/3"));
        assert!(!r.covers("redis-cache"));
        assert!(!r.covers("redi"));
    }
}
