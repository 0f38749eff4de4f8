//! Recovery: half-open trials (a count or a share for a window), probes while open, and
//! the ramp that lets traffic back after trials pass.

use super::*;

impl Model {
    pub(super) fn judge_trials(&mut self) {
        match self.verdict() {
            Some(true) => self.close_on_trials(),
            Some(false) => self.go(State::Open),
            None => {}
        }
    }

    /// Trials passed: closed, and with a ramp, ramping (the open period's growth is kept
    /// until the ramp is done, so a relapse backs off as a failed half-open would).
    pub(super) fn close_on_trials(&mut self) {
        let kept = self.opened_in_a_row;
        self.go(State::Closed);
        if let Some(ramp) = self.cfg.ramp {
            self.opened_in_a_row = kept;
            self.ramp_until = Some(self.now + ramp);
            self.ramp_credit = 0;
        }
    }

    /// The ramp's share at `now`: linear from the half-open share (5 % under a count of
    /// trials) to all; `None` once the ramp is over.
    pub(super) fn ramp_share(&self) -> Option<f64> {
        let (until, ramp) = (self.ramp_until?, self.cfg.ramp?);
        if self.now >= until {
            return None;
        }
        let left = ((until - self.now) as f64 / ramp as f64).min(1.0);
        let start = match self.cfg.half_open {
            HalfOpen::Share { pct, .. } => pct as f64 / 100.0,
            HalfOpen::Calls(_) => 0.05,
        };
        Some(start + (1.0 - start) * (1.0 - left))
    }

    /// Whether the next closed caller is let in by the ramp (always once it is over).
    pub(super) fn ramp_admitted(&mut self) -> bool {
        if self.ramp_until.is_none() {
            return true;
        }
        let Some(share) = self.ramp_share() else {
            // Over: found by the first caller after its end, which forgets the growth.
            self.ramp_until = None;
            self.opened_in_a_row = 0;
            return true;
        };
        // Spread evenly in 1/65536ths, the first admitted: each caller adds its share to
        // the sum and goes in when the sum's ceiling grows (a whole call ends in its stretch).
        let s = ((share * 65536.0) as u64).min(65536);
        let before = self.ramp_credit;
        self.ramp_credit += s;
        (before + s).div_ceil(65536) > before.div_ceil(65536)
    }

    /// Whether the next half-open caller becomes a trial.
    pub(super) fn trial_admitted(&mut self) -> bool {
        let t = &mut self.trials;
        let yes = match self.cfg.half_open {
            HalfOpen::Calls(n) => t.granted < n,
            HalfOpen::Share { window, .. }
                if t.ok + t.failed == 0 && t.in_flight == 0 && self.now - t.started >= window =>
            {
                true // a quiet, elapsed window admits the next caller
            }
            HalfOpen::Share { .. } if t.owed > 0 => {
                t.owed -= 1;
                true // a freed trial's admission goes to the next caller
            }
            HalfOpen::Share { pct, .. } => {
                // Spread evenly, the first admitted: call k is a trial when ceil(k·pct/100) grows.
                let k = t.asked;
                (k + 1) * pct / 100 + u64::from((k + 1) * pct % 100 != 0)
                    > k * pct / 100 + u64::from(k * pct % 100 != 0)
            }
        };
        t.asked += 1;
        if yes {
            t.in_flight += 1;
            t.granted += 1;
            t.last_admit = self.now - t.started;
        }
        yes
    }

    /// A trial's (or probe's) timeout: the configured one, else a sampled half-open's window
    /// or, with `half_open_calls`, `open_for`.
    pub(super) fn trial_timeout(&self) -> u64 {
        self.cfg
            .half_open_timeout
            .or(self.cfg.timeout)
            .unwrap_or(match self.cfg.half_open {
                HalfOpen::Share { window, .. } => window,
                HalfOpen::Calls(_) => self.cfg.open_for,
            })
    }

    /// A probe ended: one that answered, not failed and not slow, starts half-open as its
    /// first passed trial; anything else (failed, slow, cancelled) changes nothing.
    pub(super) fn end_probe(&mut self, t: Ticket, result: Option<(bool, bool)>) {
        if t.gen != self.gen || self.state != State::Open || result != Some((false, false)) {
            return;
        }
        self.go(State::HalfOpen);
        self.trials.granted = 1;
        self.trials.ok = 1;
        self.judge_trials();
    }

    /// A trial in flight went past the slow bound: a slow answer from now, judged at once.
    pub(super) fn mark_trial(&mut self, t: Ticket) {
        if t.gen != self.gen || self.state != State::HalfOpen {
            return;
        }
        self.trials.marked += 1;
        self.judge_trials();
    }

    /// A trial ended (`marked`: it had been marked slow in flight); `None` when it was
    /// cancelled.
    pub(super) fn end_trial(&mut self, t: Ticket, result: Option<(bool, bool)>, marked: bool) {
        if t.probe {
            return self.end_probe(t, result);
        }
        if t.gen != self.gen || self.state != State::HalfOpen {
            return;
        }
        let tr = &mut self.trials;
        tr.in_flight -= 1;
        if marked {
            tr.marked -= 1;
        }
        match result {
            None => {
                tr.granted -= 1;
                tr.owed += 1;
            }
            Some((true, _)) => tr.failed += 1,
            Some((false, _)) => tr.ok += 1,
        }
        if let Some((_, true)) = result {
            tr.slow += 1;
        }
        self.judge_trials();
    }
}
