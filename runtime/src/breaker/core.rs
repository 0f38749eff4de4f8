//! The shared state machine of one breaker: its fields and how they are read; admission and
//! judging the closed window are `admit.rs`'s, the transitions themselves `transition.rs`'s. Each other state keeps its own
//! fields and methods in a file of its own, each an `impl Core`: `open.rs` (the open period and its probes), `half_open/` (trials),
//! `ramp.rs` (traffic ramped back in after half-open), `forced.rs` (operator overrides),
//! `stuck.rs` (the `alert_after` alert). Two concepts that span states have theirs too:
//! `slowness.rs` (calls past the slow bound in flight, the slow bound, the episode of an opening
//! on slowness) and `reading.rs` (what a snapshot sees of the state, changing nothing).
//!
//! Invariants:
//! - `word` holds the state and a generation; every transition bumps the generation, under
//!   `rare`'s lock, so at most one caller performs (and logs) each transition.
//! - A state's own fields (`open`, `forced`, `ramp`...) and `state_since` are written before
//!   `word` turns to that state (a Release store), so an admitter that loads the word (Acquire)
//!   and sees the state reads that state's figures. An admitter holding a stale word may read
//!   the fields of the state after it: each state's file says what that costs (at worst, one
//!   call refused or admitted as the newer state would).
//! - The closed state never takes the lock: admission is one load, recording is a few
//!   relaxed atomics in the window; only a rate at the threshold takes the lock to trip.
//!   A ramping breaker, and a forced-closed one recording nothing, are their states under word
//!   codes of their own, so they take the slow path and plain closed stays one compare.
//! - Every read of the breaker's settings goes through [`Core::config`].
//!
//! Memory: a keyed breaker stays within 1 KiB (`benches/tests/memory.rs`), so fields are as
//! narrow as their meaning allows: counts under the lock and counts bounded by calls in flight
//! are `u32`, figures another field already holds are derived (a half-open episode and a ramp
//! begin when their state does: `state_since`), and the clock's base is the process's, not
//! copied into each breaker.

pub(crate) use super::counters::{bump, Counters};
use super::events::{Events, Reason};
use super::forced::Forced;
use super::half_open::Episode;
use super::live::{Config, Live};
use super::open::Open;
use super::ramp::Ramp;
use super::shadow::ShadowSlot;
use super::stuck::Stuck;
use super::usual::Usual;
use crate::clock::Clock;
use crate::settings::BreakerConfig;
use crate::state::{State, Word};
use crate::sync::atomic::{AtomicBool, AtomicU16, AtomicU32, AtomicU64, AtomicU8, Ordering::*};
use crate::sync::{lock, Mutex};
use crate::window::Window;

pub(crate) use super::admit::{pct, Admission};

/// A deadline that never comes, and `Stuck::since` of a healthy breaker.
pub(super) const NEVER: u64 = u64::MAX;

/// State only touched under the lock: transitions and half-open.
pub(super) struct Rare {
    /// The current half-open episode's trials (begun when `HalfOpen` was entered).
    pub(super) episode: Episode,
    /// Openings since the breaker was last healthy: grows the open period under `backoff`.
    /// Kept through a ramp, so a relapse during one backs off as a failed half-open does.
    /// `u16`, saturating: the period reaches `open_for_max` long before, and the two halves
    /// of a word keep `Rare` (and a keyed breaker) within its size.
    pub(super) opened_in_a_row: u16,
    /// The thread that made the last transition (`stuck::this_thread`): a snapshot taken on
    /// it may log the stuck alert (`Core::stuck_seen`).
    pub(super) moved_on: u16,
}

/// In declaration order (`repr(C)`), so that what every call reads and what every call
/// writes sit on different cache lines: the state word, each state's figures and the window's
/// head first (read by every call, written rarely), then the settings (read-only, 216 bytes:
/// wider than a cache line), then the lock and the lifetime counters (a success or a refusal
/// bumps one). Left to the compiler, the counters began 32 bytes after the window's head, and
/// every success's bump took the line the other cores read the head from.
#[repr(C)]
pub(crate) struct Core {
    pub(super) word: AtomicU64,
    /// When the current state began (virtual nanos). Also the start of a half-open episode and
    /// of a ramp, which begin with their state.
    pub(super) state_since: AtomicU64,
    pub(super) open: Open,
    pub(super) forced: Forced,
    pub(super) stuck: Stuck,
    pub(super) ramp: Ramp,
    /// This breaker's calls in flight already past the slow bound (marked slow in flight):
    /// a full bulkhead whose every slot is one of them refuses for slowness (issue 26).
    /// Bounded by calls in flight, so `u32`.
    pub(super) slow_in_flight: AtomicU32,
    /// Set from an opening on slowness alone until the breaker closes (through a ramp, until
    /// it ends): the dependency answered, slowly, so trials that would pass by answering are
    /// judged by the slow bound (`Core::trial_slow_bound`). A relapse while ramping keeps it
    /// as it was: a provider back cold from failures still warms by its trials (seed 000).
    /// Written under `rare`'s lock as states are entered; read by a trial as it ends. In
    /// what was `slow_in_flight`'s padding. One of [`episode`]'s codes: an opening on calls
    /// seen slow in flight is slowness only once one of them answers; if the first to end
    /// timed out instead, the dependency hung (`Core::episode_call_ended`).
    pub(super) slow_episode: AtomicU8,
    /// Whether this breaker's last call to end was slow (or timed out); written only under
    /// the slow rule derived from `timeout`. A full bulkhead whose slots slow calls just
    /// handed on to fresh ones refuses for slowness too (issue 26). In the same padding.
    pub(super) ended_slow: AtomicBool,
    /// Calls that waited (for a bulkhead slot, or pending after their first poll) and have not
    /// ended, modulo
    /// 2^16: a keyed breaker with any is not idle, however empty its window (the window
    /// records a call as it ends), so a hung key is not evicted at `max_keys` with its calls.
    /// Counted only for calls that wait (a permit's timing starts), never on the closed path
    /// of a call answered in its first poll. In the same padding, so `u16`: a key with
    /// 65 536 calls waiting at once reads as if it had none (far past any pool).
    waiting: AtomicU16,
    pub(crate) window: Window,
    /// A candidate configuration judged beside this one (issue 29, `shadow.rs`).
    pub(crate) shadow: ShadowSlot,
    /// Settings changed while running (issue 29, `live.rs`): read only while the word says so.
    pub(crate) live: Live,
    pub(super) events: Events,
    /// Read through [`Core::config`] only: the one place settings come from.
    config: BreakerConfig,
    pub(super) rare: Mutex<Rare>,
    /// The dependency's usual latency, learned under a slow rule derived from `timeout`
    /// (`usual.rs`): written by calls that waited, beside the counters they bump.
    pub(super) usual: Usual,
    pub(crate) counters: Counters,
}

impl Core {
    pub(crate) fn new(config: BreakerConfig, events: Events) -> Core {
        let now = Clock::new().now();
        Core {
            window: Window::new(config.window()),
            config,
            word: AtomicU64::new(Word::new(State::Closed, 0).0),
            state_since: AtomicU64::new(now),
            open: Open::default(),
            ramp: Ramp::default(),
            forced: Forced::default(),
            stuck: Stuck::default(),
            rare: Mutex::new(Rare {
                episode: Episode::default(),
                opened_in_a_row: 0,
                moved_on: 0,
            }),
            counters: Counters::default(),
            usual: Usual::default(),
            events,
            slow_in_flight: AtomicU32::new(0),
            slow_episode: AtomicU8::new(super::slowness::episode::NONE),
            ended_slow: AtomicBool::new(false),
            waiting: AtomicU16::new(0),
            shadow: ShadowSlot::default(),
            live: Live::new(),
        }
    }

    /// The breaker's settings in force: every read of them goes through here (a call's own
    /// reads go through its permit, which holds the ones that admitted it). The code's, or
    /// while live settings are set (issue 29, `live.rs`), theirs.
    #[inline]
    pub(crate) fn config(&self) -> Config<'_> {
        if !self.word().live() {
            return Config::Code(&self.config);
        }
        self.live_config()
    }

    /// The code's settings (the attribute's or the builder's), whatever is in force: what the
    /// registry compares a call site's settings with, and where the name comes from.
    #[inline]
    pub(crate) fn code_config(&self) -> &BreakerConfig {
        &self.config
    }

    /// The breaker's clock: the process's one base (`clock/mod.rs`), so no breaker keeps a copy.
    #[inline]
    pub(crate) fn clock(&self) -> Clock {
        Clock::new()
    }

    #[inline]
    pub(crate) fn word(&self) -> Word {
        Word(self.word.load(Acquire))
    }

    pub(crate) fn state(&self) -> State {
        self.word().state()
    }

    /// An open period that ended at `now` goes half-open, as the next caller would make it:
    /// a reader of the state sees what the breaker is (`Breaker::state`). False when it was
    /// not due or the word had moved on.
    pub(crate) fn open_elapsed(&self, w: Word, now: u64) -> bool {
        w.state() == State::Open
            && now >= self.open.deadline()
            && self.transition(Some(w), State::HalfOpen, Reason::OpenElapsed, now)
    }

    /// A caller's first use of this breaker (an annotated site's first call, or a lookup by
    /// name in the registry): if it was never used nor changed state, its closed state counts
    /// from now. Every annotated breaker is made when the registry is first used, on that
    /// caller's clock, which may be another test's paused clock, far from this caller's:
    /// `time_in_state` then counts on the clock of the test (or service) that uses it. Once
    /// only: a second function of the same name, or a second lookup, leaves it.
    pub(crate) fn first_used(&self) {
        let mut rare = lock(&self.rare);
        if rare.moved_on == 0 && self.counters.calls() == 0 {
            rare.moved_on = super::stuck::FIRST_USED;
            self.state_since.store(self.clock().now(), Relaxed);
        }
    }

    #[inline]
    pub(crate) fn state_since(&self) -> u64 {
        self.state_since.load(Relaxed)
    }

    /// Virtual nanos since the current state began.
    pub(super) fn in_state_for(&self, now: u64) -> u64 {
        now.saturating_sub(self.state_since())
    }

    /// This breaker's identity while borrowed: its address (a call holding anything under
    /// this id borrows the core, so the address is not reused meanwhile).
    pub(crate) fn id(&self) -> usize {
        self as *const Core as usize
    }

    /// A call began to wait (its permit's timing started).
    pub(super) fn waiting_added(&self) {
        self.waiting.fetch_add(1, Relaxed);
    }

    /// A call that waited ended.
    pub(super) fn waiting_ended(&self) {
        self.waiting.fetch_sub(1, Relaxed);
    }

    /// Whether calls that waited are still in flight (the keyed family's idle rule).
    pub(crate) fn has_waiting_calls(&self) -> bool {
        self.waiting.load(Relaxed) != 0
    }
}
