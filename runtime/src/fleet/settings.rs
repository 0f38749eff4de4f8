//! Fleet-wide settings changes (issue 29): a TTL'd record in Redis per breaker or bulkhead,
//! applied by every instance as a live change from [`Source::Fleet`] timed on its own clock
//! (the change's `for` is the TTL left when read), so it ends on time even with Redis away.
//!
//! Keys: `fusebox:{service}:settings` (the set of `breaker:<name>` / `bulkhead:<name>`) and
//! `fusebox:{service}:settings:<kind>:<name>`, whose JSON is a [`SettingsRecord`] and whose
//! TTL is the change's expiry. A new change of one name replaces the last.

use std::collections::HashMap;
use std::sync::atomic::Ordering::Relaxed;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::publish::{rfc3339, unix_ms};
use super::shared::{Shared, MAX_OVERRIDE};
use super::{FleetError, LinkFault};
use crate::registry::key_name::loggable;
use crate::registry::registry;
use crate::settings::{GuardKind, Overrides};
use fusebox_settings::Source;

/// The JSON of one fleet-wide settings change.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct SettingsRecord {
    pub(crate) target: String,
    pub(crate) name: String,
    pub(crate) pairs: Vec<(String, String)>,
    pub(crate) by: String,
    /// Unique per request: an instance applies each id once.
    pub(crate) id: String,
    pub(crate) until_unix_ms: u64,
}

/// The member of the settings set for `kind` and `name`.
pub(crate) fn member(kind: GuardKind, name: &str) -> String {
    format!("{kind}:{name}")
}

/// The ids this instance applied, by member.
#[derive(Default)]
pub(crate) struct Applied {
    ids: HashMap<String, String>,
}

impl Applied {
    /// Applies each record not applied yet (a name not registered here waits for a later
    /// read), then forgets members Redis no longer lists.
    pub(crate) fn apply(&mut self, records: Vec<(SettingsRecord, Duration)>) {
        let mut listed = HashMap::new();
        for (r, remaining) in records {
            let m = match r.target.as_str() {
                "breaker" => member(GuardKind::Breaker, &r.name),
                "bulkhead" => member(GuardKind::Bulkhead, &r.name),
                _ => continue,
            };
            listed.insert(m.clone(), r.id.clone());
            if self.ids.get(&m) == Some(&r.id) {
                continue;
            }
            let pairs = r.pairs.iter().map(|(k, v)| (k.as_str(), v.as_str()));
            let done = match r.target.as_str() {
                "breaker" => registry()
                    .breaker(&r.name)
                    .map(|b| b.change_settings(pairs, Source::Fleet, Some(remaining))),
                _ => registry()
                    .bulkhead(&r.name)
                    .map(|b| b.change_settings(pairs, Source::Fleet, Some(remaining))),
            };
            match done {
                None => continue,
                Some(Ok(())) => tracing::warn!(
                    kind = %r.target,
                    name = %r.name,
                    settings = ?r.pairs,
                    by = %loggable(&r.by),
                    until = %rfc3339(r.until_unix_ms),
                    remaining = ?remaining,
                    "fleet settings change applied"
                ),
                Some(Err(e)) => tracing::error!(
                    kind = %r.target,
                    name = %r.name,
                    settings = ?r.pairs,
                    by = %loggable(&r.by),
                    error = %e,
                    "fleet settings change refused here; this instance keeps its settings"
                ),
            }
            self.ids.insert(m, r.id);
        }
        // A change Redis no longer lists was ended fleet-wide (`Fleet::end_settings_change`,
        // `DELETE ...?scope=fleet`) or has expired: it ends here too (an expired one has ended,
        // or ends now, on this instance's clock within a read of its TTL).
        for (m, _) in self.ids.iter().filter(|(m, _)| !listed.contains_key(*m)) {
            if end_here(m) {
                tracing::warn!(member = %m, "fleet settings change ended fleet-wide");
            }
        }
        self.ids.retain(|m, id| listed.get(m) == Some(id));
    }
}

/// Ends the fleet's settings change of `member` on this instance, if one is in force.
fn end_here(member: &str) -> bool {
    match member.split_once(':') {
        Some(("breaker", name)) => registry()
            .breaker(name)
            .is_some_and(|b| b.clear_change_from(Source::Fleet)),
        Some((_, name)) => registry()
            .bulkhead(name)
            .is_some_and(|b| b.clear_change_from(Source::Fleet)),
        None => false,
    }
}

impl Applied {
    /// Ends every fleet settings change in force here (the instance leaves the fleet): the
    /// settings below each return.
    pub(crate) fn release_all(&mut self) {
        for m in self.ids.keys() {
            if end_here(m) {
                tracing::info!(member = %m, "fleet settings change lifted: this instance left the fleet");
            }
        }
        self.ids.clear();
    }
}

impl Shared {
    /// Writes a fleet-wide settings change: every live instance applies it at its next read.
    /// Checked first: by the settings table, key by key, and whole against this instance's
    /// breaker or bulkhead of that name when it has one.
    pub(crate) async fn send_settings(
        &self,
        kind: GuardKind,
        name: &str,
        pairs: Vec<(String, String)>,
        for_: Duration,
        by: &str,
    ) -> Result<(), FleetError> {
        super::config::name(
            match kind {
                GuardKind::Breaker => "breaker",
                GuardKind::Bulkhead => "bulkhead",
            },
            name,
        )?;
        if for_ < Duration::from_millis(1) || for_ > MAX_OVERRIDE {
            return Err(FleetError::BadDuration {
                field: "settings change expiry",
                expected: "1ms..=7 days",
            });
        }
        let bad = |error| FleetError::BadSettings {
            name: name.to_owned(),
            error,
        };
        let text = match kind {
            GuardKind::Breaker => Overrides::new().breaker(name, pairs.clone(), Source::Fleet),
            GuardKind::Bulkhead => Overrides::new().bulkhead(name, pairs.clone(), Source::Fleet),
        };
        text.check_text().map_err(|e| bad(e.reason))?;
        match kind {
            GuardKind::Breaker => registry()
                .breaker(name)
                .map(|b| b.check_change(&pairs))
                .transpose(),
            GuardKind::Bulkhead => registry()
                .bulkhead(name)
                .map(|b| b.check_overrides(&pairs))
                .transpose(),
        }
        .map_err(bad)?;
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
        let m = member(kind, name);
        let record = SettingsRecord {
            target: kind.to_string(),
            name: name.to_owned(),
            pairs,
            by: by.chars().take(200).collect(),
            id: format!(
                "{}:{}:s{}",
                self.config.instance,
                unix_ms(),
                self.next_seq()
            ),
            until_unix_ms,
        };
        let json = serde_json::to_string(&record).unwrap_or_default();
        let mut pipe = redis::pipe();
        pipe.atomic()
            .cmd("SET")
            .arg(self.keys.settings_of(&m))
            .arg(json)
            .arg("PX")
            .arg(for_.as_millis().max(1) as u64)
            .ignore()
            .cmd("SADD")
            .arg(self.keys.settings())
            .arg(&m)
            .ignore();
        let bound = self.op_timeout();
        match tokio::time::timeout(bound, pipe.query_async::<()>(&mut conn)).await {
            Ok(Ok(())) => {
                tracing::warn!(
                    %kind,
                    name,
                    settings = ?record.pairs,
                    by = %loggable(&record.by),
                    until = %rfc3339(until_unix_ms),
                    "fleet settings change sent to every instance"
                );
                Ok(())
            }
            Ok(Err(e)) => Err(FleetError::LinkDown {
                cause: LinkFault::of(&e, bound),
            }),
            Err(_) => Err(FleetError::LinkDown {
                cause: LinkFault::TimedOut { after: bound },
            }),
        }
    }
}

impl Shared {
    /// Ends the fleet-wide settings change of `name`: its record leaves Redis, and every
    /// instance ends it at its next read (this one at once). True if a change was listed.
    pub(crate) async fn end_settings(
        &self,
        kind: GuardKind,
        name: &str,
        by: &str,
    ) -> Result<bool, FleetError> {
        let Some(mut conn) = self.conn() else {
            return Err(FleetError::LinkDown {
                cause: LinkFault::NotUp {
                    state: self.link(),
                    last_error: self.inner().last_error.clone(),
                },
            });
        };
        let m = member(kind, name);
        let mut pipe = redis::pipe();
        pipe.atomic()
            .cmd("DEL")
            .arg(self.keys.settings_of(&m))
            .cmd("SREM")
            .arg(self.keys.settings())
            .arg(&m)
            .ignore();
        let bound = self.op_timeout();
        let listed = match tokio::time::timeout(bound, pipe.query_async::<(u64,)>(&mut conn)).await
        {
            Ok(Ok((deleted,))) => deleted > 0,
            Ok(Err(e)) => {
                return Err(FleetError::LinkDown {
                    cause: LinkFault::of(&e, bound),
                })
            }
            Err(_) => {
                return Err(FleetError::LinkDown {
                    cause: LinkFault::TimedOut { after: bound },
                })
            }
        };
        let here = end_here(&m);
        tracing::warn!(
            %kind,
            name,
            by = %loggable(by.trim()),
            listed,
            ended_here = here,
            "fleet settings change ended on every instance"
        );
        Ok(listed || here)
    }
}

impl super::Fleet {
    /// Ends the fleet-wide settings change of `name` (a breaker or a bulkhead) before its
    /// expiry: its record leaves Redis, this instance's settings below it return at once and
    /// every other live instance's at its next read (within the fleet's sync interval). True if
    /// a change was in force; `Ok(false)` when there was none to end.
    ///
    /// ```no_run
    /// # async fn demo(fleet: fusebox::fleet::Fleet) -> Result<(), fusebox::fleet::FleetError> {
    /// use fusebox::settings::GuardKind;
    /// let ended = fleet.end_settings_change(GuardKind::Breaker, "payments", "alice").await?;
    /// # Ok(()) }
    /// ```
    pub async fn end_settings_change(
        &self,
        kind: GuardKind,
        name: &str,
        by: &str,
    ) -> Result<bool, FleetError> {
        self.shared.end_settings(kind, name, by).await
    }
}

impl super::Fleet {
    /// Changes settings of `name` (a breaker or a bulkhead) on every live instance for `for_`
    /// (its Redis TTL; each instance times it on its own clock, so it ends even with Redis
    /// away), as [`Breaker::change_settings`](crate::Breaker::change_settings) with
    /// [`Source::Fleet`]. Checked before it is sent ([`FleetError::BadSettings`]); a new change
    /// of one name replaces the last.
    ///
    /// ```no_run
    /// # use std::time::Duration;
    /// # async fn demo(fleet: fusebox::fleet::Fleet) -> Result<(), fusebox::fleet::FleetError> {
    /// use fusebox::settings::GuardKind;
    /// fleet
    ///     .change_settings(GuardKind::Breaker, "payments", [("failure_rate", "80")], Duration::from_secs(600), "alice")
    ///     .await?;
    /// # Ok(()) }
    /// ```
    pub async fn change_settings<K, V>(
        &self,
        kind: GuardKind,
        name: &str,
        pairs: impl IntoIterator<Item = (K, V)>,
        for_: Duration,
        by: &str,
    ) -> Result<(), FleetError>
    where
        K: AsRef<str>,
        V: AsRef<str>,
    {
        let pairs = crate::settings::text::trimmed_pairs(pairs);
        self.shared.send_settings(kind, name, pairs, for_, by).await
    }
}

impl Shared {
    fn next_seq(&self) -> u64 {
        self.seq.fetch_add(1, Relaxed)
    }
}
