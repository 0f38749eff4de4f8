//! Quorum opening: a closed breaker opens here while enough of the fleet reports it open.

use std::collections::HashMap;

use super::config::QuorumRule;
use super::publish::InstanceReport;
use crate::breaker::events::Reason;
use crate::breaker::Breaker;
use crate::state::State;

/// Votes for `name` among the other live instances: (open on their own judgement, reporting it).
pub(crate) fn count(others: &[InstanceReport], name: &str) -> (u32, u32) {
    let mut votes = 0;
    let mut reporting = 0;
    for r in others {
        if let Some(b) = r.breakers.iter().find(|b| b.name == name) {
            reporting += 1;
            votes += u32::from(b.votes_open);
        }
    }
    (votes, reporting)
}

/// True when `votes` of `live` instances (this one included) meet the rule. Two votes at
/// least, whatever the share: one sick instance never opens the others.
pub(crate) fn reached(rule: &QuorumRule, votes: u32, live: u32) -> bool {
    votes >= 2
        && live >= rule.min_instances
        && u64::from(votes) * 100 >= u64::from(rule.percent) * u64::from(live)
}

/// The breakers this instance opened by quorum, with their `times_opened` right after, so a
/// later open of their own (failed trials) is told apart and votes again.
#[derive(Default)]
pub(crate) struct Tracker {
    opened: HashMap<String, u64>,
}

impl Tracker {
    /// Opens `b` if it is closed and the others' reports reach `rule`; returns whether it did.
    pub(crate) fn judge(
        &mut self,
        rule: &QuorumRule,
        b: &Breaker,
        others: &[InstanceReport],
    ) -> bool {
        if b.state() != State::Closed {
            return false;
        }
        let (votes, reporting) = count(others, b.name());
        let live = reporting + 1;
        if !reached(rule, votes, live) {
            return false;
        }
        let reason = Reason::Quorum {
            open: votes,
            live,
            threshold: rule.percent,
        };
        if b.open_from_closed(reason) {
            self.opened
                .insert(b.name().to_owned(), b.metrics().times_opened);
            return true;
        }
        false
    }

    /// True while `b` is still in the open period (or its trials) that a quorum started.
    pub(crate) fn holds(&mut self, b: &Breaker, times_opened: u64) -> bool {
        let Some(&at) = self.opened.get(b.name()) else {
            return false;
        };
        let ours = matches!(b.state(), State::Open | State::HalfOpen) && times_opened == at;
        if !ours {
            self.opened.remove(b.name());
        }
        ours
    }

    /// The breakers held open by quorum now.
    pub(crate) fn names(&self) -> Vec<String> {
        let mut v: Vec<String> = self.opened.keys().cloned().collect();
        v.sort();
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fleet::publish::{BreakerReport, Sees};
    use crate::fleet::LinkState;

    fn rule(percent: u8, min: u32) -> QuorumRule {
        QuorumRule {
            breaker: "p".into(),
            percent,
            min_instances: min,
        }
    }

    fn report(id: &str, open: bool) -> InstanceReport {
        InstanceReport {
            instance: id.into(),
            at_unix_ms: 0,
            breakers: vec![BreakerReport {
                name: "q-tracker".into(),
                state: if open { "open" } else { "closed" }.into(),
                time_in_state_s: 0.0,
                failure_rate_pct: 0.0,
                slow_rate_pct: 0.0,
                window_calls: 0,
                times_opened: 0,
                votes_open: open,
                by_fleet: None,
            }],
            sees: Sees {
                link: LinkState::Up,
                live: vec![],
                overrides: vec![],
            },
        }
    }

    #[test]
    fn share_minimum_and_two_votes_all_count() {
        assert!(reached(&rule(50, 3), 2, 3));
        assert!(!reached(&rule(50, 3), 1, 3), "1 of 3");
        assert!(
            !reached(&rule(50, 2), 1, 2),
            "one instance alone never opens another"
        );
        assert!(!reached(&rule(50, 5), 3, 4), "below min_instances");
        assert!(reached(&rule(75, 3), 3, 4));
        assert!(!reached(&rule(75, 3), 2, 4));
        assert!(!reached(&rule(100, 2), 2, 3));
    }

    #[tokio::test(start_paused = true)]
    async fn a_quorum_opened_breaker_does_not_vote_until_it_opens_on_its_own() {
        let b = Breaker::builder("q-tracker").build_detached().unwrap();
        let mut t = Tracker::default();
        let r = rule(50, 3);
        assert!(!t.judge(&r, &b, &[report("a", true), report("b", false)]));
        assert_eq!(b.state(), State::Closed);
        assert!(t.judge(&r, &b, &[report("a", true), report("b", true)]));
        assert_eq!(b.state(), State::Open);
        let opened = b.metrics().times_opened;
        assert!(t.holds(&b, opened));
        assert_eq!(t.names(), vec!["q-tracker".to_owned()]);
        assert!(
            !t.holds(&b, opened + 1),
            "opened again on its own judgement"
        );
        assert!(t.names().is_empty());
    }
}
