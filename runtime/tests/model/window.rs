//! The window: the calls it holds (the last N, or ten slots of a tenth of the window each),
//! their rates and the verdict that opens a closed breaker; also the trials' verdict,
//! which is the same rule on the half-open sample.

use super::*;

impl Model {
    pub fn window_calls(&mut self) -> u64 {
        self.roll();
        self.window.len() as u64
    }

    /// Time windows: moves to the current slot and forgets calls ten slots old.
    pub(super) fn roll(&mut self) {
        let Some(w) = self.cfg.time_window else {
            return;
        };
        // Before the first recorded call the window is empty: no slot to move to.
        let Some(origin) = self.origin else {
            return;
        };
        let slot_ns = (w * 1_000_000 / 10).max(1);
        self.head = self.head.max((self.now - origin) * 1_000_000 / slot_ns);
        let head = self.head;
        self.window.retain(|e| e.slot + 10 > head);
    }

    /// The trials' verdict, if due: `Some(true)` closes, `Some(false)` reopens.
    pub(super) fn verdict(&self) -> Option<bool> {
        let t = &self.trials;
        // Past the bound in flight: the marked trials, or all once the bound has passed
        // since the last was admitted.
        let late = match self.cfg.slow {
            Some((b, _, _)) if self.now - t.started - t.last_admit >= b => t.in_flight,
            _ => t.marked,
        };
        match self.cfg.half_open {
            HalfOpen::Calls(_) if t.failed > 0 || t.slow > 0 || late > 0 => Some(false),
            HalfOpen::Calls(n) if t.ok >= n => Some(true),
            HalfOpen::Calls(_) => None,
            HalfOpen::Share { window, .. } => {
                let done = u64::from(t.ok + t.failed + late);
                if self.now - t.started < window || done == 0 {
                    None
                } else {
                    let slow = u64::from(t.slow + late);
                    let by_slow = self.cfg.slow.is_some_and(|(_, rate, strict)| {
                        if strict {
                            slow * 100 > rate * done
                        } else {
                            slow * 100 >= rate * done
                        }
                    });
                    Some(u64::from(t.failed) * 100 < self.cfg.failure_rate * done && !by_slow)
                }
            }
        }
    }

    /// Opens a closed breaker of generation `gen` when the window says so.
    pub(super) fn judge(&mut self, gen: u64) {
        self.roll();
        let calls = self.window.len() as u64;
        if calls < self.cfg.min_calls as u64 {
            return;
        }
        let failures = self.window.iter().filter(|e| e.failed).count() as u64;
        let slow = self.window.iter().filter(|e| e.slow).count() as u64;
        let by_failures = failures * 100 >= self.cfg.failure_rate * calls;
        let by_slow = self.cfg.slow.is_some_and(|(_, rate, strict)| {
            if strict {
                slow * 100 > rate * calls
            } else {
                slow * 100 >= rate * calls
            }
        });
        if (by_failures || by_slow) && self.state == State::Closed && self.gen == gen {
            self.go(State::Open);
        }
    }

    pub(super) fn push(&mut self, failed: bool, slow: bool) {
        self.origin.get_or_insert(self.now);
        self.roll();
        if self.cfg.time_window.is_none() && self.window.len() == self.cfg.window {
            self.window.pop_front();
        }
        let slot = self.head;
        self.window.push_back(Entry { failed, slow, slot });
    }
}
