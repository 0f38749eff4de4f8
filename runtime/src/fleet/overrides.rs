//! Fleet overrides: the record in Redis, and each instance's table of the ones it applied,
//! timed on its own clock so they end on time even while Redis is away.

use std::collections::HashMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::time::Instant;

use super::publish::{rfc3339, OverrideStatus};
use crate::breaker::Breaker;
use crate::registry::key_name::loggable;
use crate::state::State;

/// What a fleet override does to a breaker on every instance.
///
/// ```
/// use fusebox::fleet::Action;
/// assert_eq!("force_open".parse::<Action>(), Ok(Action::ForceOpen));
/// assert_eq!(Action::Reset.as_str(), "reset");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// Hold it open on every instance until the override expires.
    ForceOpen,
    /// Hold it closed on every instance until the override expires.
    ForceClose,
    /// Reset it once on every instance that sees the override before it expires.
    Reset,
}

impl Action {
    /// `force_open`, `force_close` or `reset`.
    pub fn as_str(self) -> &'static str {
        match self {
            Action::ForceOpen => "force_open",
            Action::ForceClose => "force_close",
            Action::Reset => "reset",
        }
    }

    /// The state this action holds, if it holds one.
    fn holds(self) -> Option<State> {
        match self {
            Action::ForceOpen => Some(State::ForcedOpen),
            Action::ForceClose => Some(State::ForcedClosed),
            Action::Reset => None,
        }
    }
}

impl std::str::FromStr for Action {
    type Err = ();
    /// Also the admin router's verbs: `open`, `close`, `reset`.
    fn from_str(s: &str) -> Result<Action, ()> {
        match s {
            "force_open" | "open" => Ok(Action::ForceOpen),
            "force_close" | "close" => Ok(Action::ForceClose),
            "reset" => Ok(Action::Reset),
            _ => Err(()),
        }
    }
}

/// The JSON under `fusebox:{service}:override:<breaker>`; the key's TTL is the expiry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Record {
    pub(crate) breaker: String,
    pub(crate) action: Action,
    pub(crate) by: String,
    /// Unique per request: an instance applies each id once.
    pub(crate) id: String,
    pub(crate) until_unix_ms: u64,
}

struct Applied {
    record: Record,
    until: Instant,
    /// Expired here, kept until Redis stops listing it, so it is never applied twice.
    done: bool,
}

/// The overrides this instance applied, by breaker name.
#[derive(Default)]
pub(crate) struct Table {
    by_breaker: HashMap<String, Applied>,
}

impl Table {
    /// Applies `record` (seen with `remaining` TTL) unless already applied; returns whether it did.
    /// A breaker not registered yet is left for a later read.
    pub(crate) fn apply(
        &mut self,
        record: Record,
        remaining: Duration,
        now: Instant,
        find: impl Fn(&str) -> Option<Breaker>,
    ) -> bool {
        if self
            .by_breaker
            .get(&record.breaker)
            .is_some_and(|a| a.record.id == record.id)
        {
            return false;
        }
        let Some(b) = find(&record.breaker) else {
            return false;
        };
        match record.action {
            Action::ForceOpen => b.force_open(),
            Action::ForceClose => b.force_close(),
            Action::Reset => b.reset(),
        }
        let until = now + remaining;
        tracing::warn!(
            breaker = %record.breaker,
            action = record.action.as_str(),
            by = %loggable(&record.by),
            until = %rfc3339(record.until_unix_ms),
            remaining = ?remaining,
            id = %record.id,
            "fleet override applied"
        );
        self.by_breaker.insert(
            record.breaker.clone(),
            Applied {
                record,
                until,
                done: false,
            },
        );
        true
    }

    /// Ends every override due by `now`: a breaker still in the state it was put in goes back
    /// to its own judgement (`reset`); one an operator changed since is left alone.
    pub(crate) fn expire(&mut self, now: Instant, find: impl Fn(&str) -> Option<Breaker>) {
        for a in self.by_breaker.values_mut() {
            if a.done || a.until > now {
                continue;
            }
            a.done = true;
            let Some(held) = a.record.action.holds() else {
                continue;
            };
            if let Some(b) = find(&a.record.breaker).filter(|b| b.state() == held) {
                b.reset();
                tracing::info!(
                    breaker = %a.record.breaker,
                    action = a.record.action.as_str(),
                    by = %loggable(&a.record.by),
                    "fleet override expired; the breaker is back to its own judgement"
                );
            }
        }
    }

    /// Forgets expired entries Redis no longer lists (`listed`: breaker → current id).
    pub(crate) fn prune(&mut self, listed: &HashMap<String, String>) {
        self.by_breaker
            .retain(|name, a| !a.done || listed.get(name) == Some(&a.record.id));
    }

    /// Lifts every held override now (the instance leaves the fleet).
    pub(crate) fn release_all(&mut self, find: impl Fn(&str) -> Option<Breaker>) {
        for a in self.by_breaker.values_mut() {
            a.until = Instant::now();
        }
        self.expire(Instant::now(), find);
    }

    /// The earliest pending expiry.
    pub(crate) fn next_expiry(&self) -> Option<Instant> {
        self.by_breaker
            .values()
            .filter(|a| !a.done)
            .map(|a| a.until)
            .min()
    }

    /// True while an override holds `name` in `state`.
    pub(crate) fn holds(&self, name: &str, state: State) -> bool {
        self.by_breaker
            .get(name)
            .is_some_and(|a| !a.done && a.record.action.holds() == Some(state))
    }

    /// The overrides in effect, sorted by breaker.
    pub(crate) fn status(&self, now: Instant) -> Vec<OverrideStatus> {
        let mut v: Vec<OverrideStatus> = self
            .by_breaker
            .values()
            .filter(|a| !a.done)
            .map(|a| OverrideStatus {
                breaker: a.record.breaker.clone(),
                action: a.record.action,
                by: a.record.by.clone(),
                until: rfc3339(a.record.until_unix_ms),
                remaining_s: a.until.saturating_duration_since(now).as_secs_f64(),
            })
            .collect();
        v.sort_by(|a, b| a.breaker.cmp(&b.breaker));
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(breaker: &str, action: Action, id: &str) -> Record {
        Record {
            breaker: breaker.into(),
            action,
            by: "alice".into(),
            id: id.into(),
            until_unix_ms: 0,
        }
    }

    #[tokio::test(start_paused = true)]
    async fn an_override_holds_until_its_local_expiry_then_returns_the_breaker() {
        let b = Breaker::builder("ov-table").build_detached().unwrap();
        let find = |_: &str| Some(b.clone());
        let mut t = Table::default();
        let ttl = Duration::from_secs(10);
        assert!(t.apply(
            rec("ov-table", Action::ForceOpen, "1"),
            ttl,
            Instant::now(),
            find
        ));
        assert!(
            !t.apply(
                rec("ov-table", Action::ForceOpen, "1"),
                ttl,
                Instant::now(),
                find
            ),
            "once per id"
        );
        assert_eq!(b.state(), State::ForcedOpen);
        assert_eq!(t.next_expiry(), Some(Instant::now() + ttl));
        tokio::time::advance(Duration::from_secs(9)).await;
        t.expire(Instant::now(), find);
        assert_eq!(b.state(), State::ForcedOpen);
        tokio::time::advance(Duration::from_secs(1)).await;
        t.expire(Instant::now(), find);
        assert_eq!(b.state(), State::Closed);
        assert_eq!(t.next_expiry(), None);
        // Redis still lists it for a moment: the tombstone keeps it from applying again.
        assert!(!t.apply(
            rec("ov-table", Action::ForceOpen, "1"),
            ttl,
            Instant::now(),
            find
        ));
        t.prune(&HashMap::new());
        assert!(t.status(Instant::now()).is_empty());
    }

    #[tokio::test(start_paused = true)]
    async fn expiry_leaves_a_breaker_an_operator_changed_since() {
        let b = Breaker::builder("ov-changed").build_detached().unwrap();
        let find = |_: &str| Some(b.clone());
        let mut t = Table::default();
        t.apply(
            rec("x", Action::ForceClose, "1"),
            Duration::from_secs(1),
            Instant::now(),
            find,
        );
        assert!(t.holds("x", State::ForcedClosed));
        b.force_open();
        tokio::time::advance(Duration::from_secs(1)).await;
        t.expire(Instant::now(), find);
        assert_eq!(b.state(), State::ForcedOpen);
    }

    #[tokio::test(start_paused = true)]
    async fn a_new_id_replaces_and_an_unknown_breaker_waits() {
        let b = Breaker::builder("ov-replace").build_detached().unwrap();
        let mut t = Table::default();
        let none = |_: &str| None;
        assert!(!t.apply(
            rec("x", Action::ForceOpen, "1"),
            Duration::from_secs(5),
            Instant::now(),
            none
        ));
        let find = |_: &str| Some(b.clone());
        assert!(t.apply(
            rec("x", Action::ForceOpen, "1"),
            Duration::from_secs(5),
            Instant::now(),
            find
        ));
        assert!(t.apply(
            rec("x", Action::Reset, "2"),
            Duration::from_secs(5),
            Instant::now(),
            find
        ));
        assert_eq!(b.state(), State::Closed);
        assert!(!t.holds("x", State::ForcedOpen));
    }
}
