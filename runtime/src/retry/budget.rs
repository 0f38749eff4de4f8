//! [`RetryBudget`]: how many retries one name may make, shared by every retry of that name.
//!
//! Design (Finagle's `RetryBudget`, in the terms of gRPC's retry throttling):
//! - Every call that starts (its first attempt) deposits one: a relaxed `fetch_add` on one
//!   counter, no clock, no lock, so a call that succeeds at once pays almost nothing.
//! - A retry withdraws one, if the retries already made in the last `window` stay below
//!   `share` percent of the calls counted in it plus `floor` per second of the window. The
//!   floor is Finagle's `minRetriesPerSec`: a name with little traffic can still retry a few
//!   calls; the share is its `percentCanRetry`: under a failure storm, retries add at most that
//!   share to the load. gRPC's throttling (A6) keeps a token count that failures drain and
//!   successes refill; both end where this one does, retries bounded by a share of traffic.
//! - The window is ten slots of a tenth each, kept by the retry path alone under a lock (a
//!   retry is already the slow path: it waits its backoff). A slot records the calls counter
//!   when it opens, so the calls of the window are "counter now minus counter at the oldest
//!   slot". Slots open only when a retry asks, so the calls counted are those since the oldest
//!   slot that saw a retry: never more than the window really held (a share is never
//!   over-estimated), and fewer right after a quiet spell, when the floor covers the first
//!   retries.
//!
//! - Retries are summed over one slot more than calls are counted over: the eleven slots cover
//!   every span of `window` that ends now, while the ten newest start inside it.
//!
//! Invariant: whenever a retry is granted, the retries of the last `window` (it included) are at
//! most share × the calls of the last `window` + floor × `window`.

use std::collections::VecDeque;
use std::time::Duration;

use fusebox_settings::defaults;

use crate::clock::{nanos, Clock};
use crate::sync::atomic::{AtomicU64, Ordering::Relaxed};
use crate::sync::{lock, Mutex};

/// Slots in a budget's window.
const SLOTS: u64 = 10;

/// What a budget allows: `share` percent of calls over `window`, plus `floor` per second.
///
/// The default: 20 % of the calls of the last 10 s (Finagle's share), plus 1 retry a second.
/// Finagle's floor is 10 a second, sized for its busy RPC clients; for a dependency called 20
/// times a second that alone would let retries add half the load while it struggles (the
/// retry replay), so the floor here is one a second: enough for a quiet name's occasional retry.
///
/// ```
/// use std::time::Duration;
/// use fusebox::retry::BudgetConfig;
/// let b = BudgetConfig::default();
/// assert_eq!((b.share_pct, b.floor_per_s, b.window), (20, 1, Duration::from_secs(10)));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BudgetConfig {
    /// Retries allowed as a percentage of the calls in the window (0 to 100).
    pub share_pct: u8,
    /// Retries allowed per second of the window whatever the traffic.
    pub floor_per_s: u32,
    /// How far back calls and retries are counted.
    pub window: Duration,
}

impl Default for BudgetConfig {
    fn default() -> Self {
        BudgetConfig {
            share_pct: defaults::BUDGET_SHARE,
            floor_per_s: defaults::BUDGET_FLOOR,
            window: defaults::BUDGET_WINDOW,
        }
    }
}

/// One slot of the window: which tenth it is, the calls counter when it opened, its retries.
#[derive(Debug, Clone, Copy)]
struct Slot {
    index: u64,
    calls_at_start: u64,
    retries: u64,
}

/// The retry budget of one name: deposits by calls, withdrawals by retries (see the module).
///
/// ```
/// use fusebox::retry::{BudgetConfig, RetryBudget};
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// let budget = RetryBudget::new(BudgetConfig { share_pct: 50, floor_per_s: 0, ..Default::default() });
/// // The window starts counting calls at its first retry: before it, only the floor is sure.
/// assert!(!budget.try_withdraw(), "no floor, no calls counted yet");
/// for _ in 0..4 {
///     budget.deposit();
/// }
/// assert!(budget.try_withdraw());
/// assert!(budget.try_withdraw());
/// assert!(!budget.try_withdraw(), "half of four calls");
/// assert_eq!((budget.calls(), budget.retries(), budget.exhausted()), (4, 2, 2));
/// # }
/// ```
#[derive(Debug)]
pub struct RetryBudget {
    config: BudgetConfig,
    clock: Clock,
    calls: AtomicU64,
    retries: AtomicU64,
    exhausted: AtomicU64,
    /// Hints (`retry_after`) that held the breaker open.
    held_open: AtomicU64,
    slots: Mutex<VecDeque<Slot>>,
    /// `false` for [`RetryBudget::unlimited`]: every retry is granted (and still counted).
    limited: bool,
}

impl RetryBudget {
    /// A budget with nothing deposited yet.
    pub fn new(config: BudgetConfig) -> RetryBudget {
        RetryBudget {
            config,
            clock: Clock::new(),
            calls: AtomicU64::new(0),
            retries: AtomicU64::new(0),
            exhausted: AtomicU64::new(0),
            held_open: AtomicU64::new(0),
            slots: Mutex::new(VecDeque::with_capacity(SLOTS as usize + 1)),
            limited: true,
        }
    }

    /// A budget that grants every retry: what retrying without fusebox does, kept for
    /// comparisons (the replay's "no budget" runs). Its calls and retries are still counted.
    pub fn unlimited() -> RetryBudget {
        RetryBudget {
            limited: false,
            ..RetryBudget::new(BudgetConfig::default())
        }
    }

    /// Whether it refuses retries past its allowance.
    pub fn is_limited(&self) -> bool {
        self.limited
    }

    /// Its settings.
    pub fn config(&self) -> BudgetConfig {
        self.config
    }

    /// A call started: it adds `share` percent of a retry to the budget.
    pub fn deposit(&self) {
        self.calls.fetch_add(1, Relaxed);
    }

    /// Takes one retry from the budget if the window allows it; `false` (and counted as
    /// exhausted) if not.
    pub fn try_withdraw(&self) -> bool {
        self.withdraw().is_some()
    }

    /// [`try_withdraw`](Self::try_withdraw), returning the slot the retry was counted in, so a
    /// retry that is never made (its call dropped during the backoff) can be
    /// [`refund`](Self::refund)ed.
    pub(crate) fn withdraw(&self) -> Option<u64> {
        if !self.limited {
            self.retries.fetch_add(1, Relaxed);
            return Some(u64::MAX);
        }
        let slot_len = (nanos(self.config.window) / SLOTS).max(1);
        let index = self.clock.now() / slot_len;
        let mut slots = lock(&self.slots);
        while slots.front().is_some_and(|s| s.index + SLOTS < index) {
            slots.pop_front();
        }
        let calls = self.calls.load(Relaxed);
        if slots.back().is_none_or(|s| s.index != index) {
            slots.push_back(Slot {
                index,
                calls_at_start: calls,
                retries: 0,
            });
        }
        // Calls from the oldest slot that starts inside the window (the newest is always one).
        let since = slots
            .iter()
            .find(|s| s.index + SLOTS > index)
            .map_or(calls, |s| s.calls_at_start);
        let counted = calls - since;
        let made: u64 = slots.iter().map(|s| s.retries).sum();
        if made < self.allowance(counted) {
            if let Some(s) = slots.back_mut() {
                s.retries += 1;
            }
            self.retries.fetch_add(1, Relaxed);
            Some(index)
        } else {
            self.exhausted.fetch_add(1, Relaxed);
            None
        }
    }

    /// Gives back a retry granted in slot `index` that was never made: it leaves the counts
    /// (metrics say attempts made) and, if its slot is still in the window, the allowance.
    pub(crate) fn refund(&self, index: u64) {
        self.retries.fetch_sub(1, Relaxed);
        if !self.limited {
            return;
        }
        let mut slots = lock(&self.slots);
        if let Some(s) = slots.iter_mut().find(|s| s.index == index) {
            s.retries = s.retries.saturating_sub(1);
        }
    }

    /// Retries the window allows for `calls` calls: the share, plus the floor over the window.
    fn allowance(&self, calls: u64) -> u64 {
        let share = calls.saturating_mul(u64::from(self.config.share_pct)) / 100;
        let floor = (f64::from(self.config.floor_per_s) * self.config.window.as_secs_f64()) as u64;
        share.saturating_add(floor)
    }

    /// Calls that deposited, over the budget's life.
    pub fn calls(&self) -> u64 {
        self.calls.load(Relaxed)
    }

    /// Retries the budget granted, over its life.
    pub fn retries(&self) -> u64 {
        self.retries.load(Relaxed)
    }

    /// A `retry_after` hint held the breaker open.
    pub(crate) fn count_held_open(&self) {
        self.held_open.fetch_add(1, Relaxed);
    }

    /// `retry_after` hints that held the breaker open, over its life.
    pub fn held_open(&self) -> u64 {
        self.held_open.load(Relaxed)
    }

    /// Retries the budget refused, over its life.
    pub fn exhausted(&self) -> u64 {
        self.exhausted.load(Relaxed)
    }
}
