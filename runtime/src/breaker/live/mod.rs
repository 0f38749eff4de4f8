//! Live settings (issue 29): a breaker's settings changed while it runs, over the code's.
//!
//! The code's [`BreakerConfig`] stays in `Core::config` (the registry compares call sites with
//! it, so an override is never a "registered twice" conflict). An override is a [`Layer`]: the
//! settings in force, checked whole, each setting's source, and what returns when it lapses
//! (the start's overrides under a live change, or the code's). While a layer is set, the state
//! word carries `Word::LIVE`, so admission leaves the plain-closed fast path; the slow path
//! marks the admission, the caller (`call.rs`) holds an `Arc` of the layer for the call, and
//! the permit reads its settings by reference, so the call is measured (timeout, slow bound)
//! under the settings that admitted it to its end.
//!
//! What a change does, documented for users in `docs/guide/settings.md`:
//! - the state is kept (an open breaker stays open until its deadline; the next open period
//!   is the new `open_for`);
//! - a new threshold (`failure_rate`, `min_calls`, the slow rule's rate) is judged at the next
//!   call to end, on the window as it is (`Layer::first_to_end`; the code's settings, back
//!   when a change ends, are judged then: `judge_code_settings`);
//! - a new window kind or size starts a new, empty window; calls still in flight from before
//!   record into the window that admitted them, which no longer judges anything;
//! - calls in flight finish under the timeout and slow bound that admitted them.
//!
//! A live change given `for` a time lapses lazily, as a forced state does: on admission (a
//! layered breaker always takes the slow path) and when its settings are read through the
//! breaker. A metrics snapshot reports it lapsed without ending it (`Core::live_seen_at`).
//!
//! This file is the mechanism (the layer, its storage, how the core reads and installs it);
//! `changes.rs` is the breaker's API that asks for a change.

mod changes;

use std::sync::Arc;
use std::time::Duration;

use fusebox_settings::{ConfigError, Settings, Source, WindowKind};

use super::core::{Admission, Core, NEVER};
use crate::settings::in_force::{self, SettingInForce};
use crate::settings::BreakerConfig;
use crate::state::{State, Word};
use crate::sync::atomic::{AtomicBool, Ordering::*};
use crate::sync::{lock, same};
use crate::window::Window;

/// The settings in force over the code's, and where each came from.
pub(crate) struct Layer {
    /// The settings in force, under the code's name.
    pub(crate) config: BreakerConfig,
    /// A window of its own when the window's kind or size is not the code's.
    pub(crate) window: Option<Arc<Window>>,
    /// Every setting in force with its source.
    pub(crate) settings: Arc<[SettingInForce]>,
    /// The pairs this layer gave over the one below, and their source.
    pub(crate) given: Vec<(String, String)>,
    pub(crate) source: Source,
    /// When this layer lapses (clock nanoseconds), `NEVER` when held.
    pub(crate) until: u64,
    /// What returns when it lapses: the start's overrides, or `None` for the code's.
    pub(crate) below: Option<Arc<Layer>>,
    /// Whether a call ended under this layer since it was put in force: the first one judges
    /// the window as it is, success or not, so a new threshold is judged at the next call
    /// (a success alone is not judged otherwise: under fixed settings it cannot raise a rate).
    judged: AtomicBool,
}

impl Layer {
    /// True for the first call to end since this layer was put in force (one load after).
    #[inline]
    pub(crate) fn first_to_end(&self) -> bool {
        !self.judged.load(Relaxed) && !self.judged.swap(true, AcqRel)
    }
}

/// A breaker's live settings: the layer in force, if any. 8 bytes, no allocation while none
/// is set (a null pointer), so a keyed breaker stays within its memory budget.
pub(crate) struct Live {
    #[cfg(not(loom))]
    layer: arc_swap::ArcSwapOption<Layer>,
    // Under loom a mutex, so the model sees every swap.
    #[cfg(loom)]
    layer: crate::sync::Mutex<Option<Arc<Layer>>>,
}

impl Live {
    pub(crate) fn new() -> Live {
        Live {
            #[cfg(not(loom))]
            layer: arc_swap::ArcSwapOption::const_empty(),
            #[cfg(loom)]
            layer: crate::sync::Mutex::new(None),
        }
    }
    /// The layer in force.
    pub(crate) fn get(&self) -> Option<Arc<Layer>> {
        #[cfg(not(loom))]
        return self.layer.load_full();
        #[cfg(loom)]
        return lock(&self.layer).clone();
    }
    fn set(&self, next: Option<Arc<Layer>>) {
        #[cfg(not(loom))]
        self.layer.store(next);
        #[cfg(loom)]
        {
            *lock(&self.layer) = next;
        }
    }
}

/// Time left of `layer` if given a duration.
fn expires_in(layer: &Option<Arc<Layer>>, now: u64) -> Option<Duration> {
    let l = layer.as_ref()?;
    (l.until != NEVER).then(|| Duration::from_nanos(l.until.saturating_sub(now)))
}

/// A snapshot's view of the settings at its time (`Core::live_seen_at`).
pub(crate) struct LiveSeen<'a> {
    pub(crate) settings: Arc<[SettingInForce]>,
    pub(crate) expires_in: Option<Duration>,
    pub(crate) window: &'a Window,
    pub(crate) config: &'a BreakerConfig,
    /// When the code's settings return, if a lapse due is what brings them back: the
    /// breaker's next call judges them at once (`judge_code_settings`).
    pub(crate) code_returns: Option<u64>,
}

/// The settings a reader acts on: the code's, or a layer's it holds.
pub(crate) enum Config<'a> {
    Code(&'a BreakerConfig),
    Live(Arc<Layer>),
}

impl std::ops::Deref for Config<'_> {
    type Target = BreakerConfig;
    fn deref(&self) -> &BreakerConfig {
        match self {
            Config::Code(c) => c,
            Config::Live(l) => &l.config,
        }
    }
}

/// Set in an admission's generation by the slow path while live settings are in force: a
/// generation never reaches bit 63 (it is the state word shifted right), and a mark in it keeps
/// `Admission` the size it was, so the closed path moves nothing more.
const LIVE_MARK: u64 = 1 << 63;

impl Admission {
    /// This admission, marked as made under live settings.
    pub(crate) fn marked_live(self) -> Admission {
        match self {
            Admission::Normal(g) => Admission::Normal(g | LIVE_MARK),
            Admission::Trial(g) => Admission::Trial(g | LIVE_MARK),
            Admission::Warming(g) => Admission::Warming(g | LIVE_MARK),
            Admission::Probe(g) => Admission::Probe(g | LIVE_MARK),
            Admission::Unrecorded(g) => Admission::Unrecorded(g | LIVE_MARK),
        }
    }

    /// The admission without its mark, and whether it had one.
    #[inline]
    pub(crate) fn take_live(self) -> (Admission, bool) {
        let strip = |g: u64| g & !LIVE_MARK;
        let live = match self {
            Admission::Normal(g)
            | Admission::Trial(g)
            | Admission::Warming(g)
            | Admission::Probe(g)
            | Admission::Unrecorded(g) => g & LIVE_MARK != 0,
        };
        if !live {
            return (self, false);
        }
        let a = match self {
            Admission::Normal(g) => Admission::Normal(strip(g)),
            Admission::Trial(g) => Admission::Trial(strip(g)),
            Admission::Warming(g) => Admission::Warming(strip(g)),
            Admission::Probe(g) => Admission::Probe(strip(g)),
            Admission::Unrecorded(g) => Admission::Unrecorded(strip(g)),
        };
        (a, true)
    }
}

impl Core {
    /// The settings in force while the word says live ones are (`Core::config`'s slow side).
    #[cold]
    pub(crate) fn live_config(&self) -> Config<'_> {
        match self.live.get() {
            Some(l) => Config::Live(l),
            None => Config::Code(self.code_config()),
        }
    }

    /// The window calls are judged in now.
    pub(crate) fn with_window<R>(&self, f: impl FnOnce(&Window) -> R) -> R {
        if !self.word().live() {
            return f(&self.window);
        }
        match self.live.get().and_then(|l| l.window.clone()) {
            Some(w) => f(&w),
            None => f(&self.window),
        }
    }

    /// Every setting in force at `now` (a change past its time lapses first).
    pub(crate) fn settings_in_force(&self, now: u64) -> Arc<[SettingInForce]> {
        self.lapse_live(now);
        match self.live.get() {
            Some(l) => l.settings.clone(),
            None => in_force::of_code(self.code_config().settings()),
        }
    }

    /// What a snapshot reads at `now`, read only: the layer in force once any change past its
    /// time lapsed (what `lapse_live` would put in force), its settings, time left, and the
    /// window calls are judged in. A snapshot may be taken on another runtime's clock (a
    /// parallel test's paused clock, ahead of this breaker's): ending the change there would
    /// end it early for the breaker's own calls, so, as a forced state's expiry, the change
    /// is reported as lapsed and ended by the breaker's next call (or a read of its settings).
    pub(crate) fn live_seen_at<R>(&self, now: u64, f: impl FnOnce(LiveSeen<'_>) -> R) -> R {
        let cur = self.live.get();
        let mut at = cur.clone();
        // When the last layer walked past lapsed: the code's settings return then if none is left.
        let mut lapsed_at = None;
        while let Some(l) = at.as_ref().filter(|l| l.until <= now) {
            lapsed_at = Some(l.until);
            at = l.below.clone();
        }
        let settings = match &at {
            Some(l) => l.settings.clone(),
            None => in_force::of_code(self.code_config().settings()),
        };
        let expires_in = expires_in(&at, now);
        let code_returns = lapsed_at.filter(|_| at.is_none());
        let window_of = |l: &Option<Arc<Layer>>| l.as_ref().and_then(|l| l.window.clone());
        let (now_w, at_w) = (window_of(&cur), window_of(&at));
        let fresh;
        let window = match (&now_w, &at_w) {
            (_, Some(w)) => &**w,
            // Back to the code's window from one of a layer's own: `install` empties it.
            (Some(_), None) => {
                fresh = Window::new(self.code_config().window());
                &fresh
            }
            (None, None) => &self.window,
        };
        let config = match &at {
            Some(l) => &l.config,
            None => self.code_config(),
        };
        f(LiveSeen {
            settings,
            expires_in,
            window,
            config,
            code_returns,
        })
    }

    /// Ends a layer past its `until` (lazily, as forced states lapse): its `below` returns.
    pub(crate) fn lapse_live(&self, now: u64) {
        let Some(l) = self.live.get() else { return };
        if l.until > now {
            return;
        }
        tracing::warn!(
            breaker = %self.code_config().name,
            source = %l.source,
            settings = ?l.given,
            "circuit breaker settings change lapsed; the settings below it return"
        );
        if self.install(Some(&l), l.below.clone(), now) && l.below.is_none() {
            self.judge_code_settings(now);
        }
    }

    /// The code's settings are back (no layer left): judged at once on the window as it is.
    /// Calls under them take the plain closed path, which judges only a call that can raise a
    /// rate, so a threshold stricter than the change's would otherwise wait for a failure.
    pub(crate) fn judge_code_settings(&self, now: u64) {
        let w = self.word();
        if w.state() == State::Closed && !w.live() {
            self.judge(w.generation(), self.window.totals(now));
        }
    }

    /// Puts `next` in force if the layer is still `expected` (by address).
    fn install(&self, expected: Option<&Arc<Layer>>, next: Option<Arc<Layer>>, now: u64) -> bool {
        let _rare = lock(&self.rare);
        let cur = self.live.get();
        if !same(cur.as_ref(), expected) {
            return false;
        }
        let window_of = |l: &Option<Arc<Layer>>| l.as_ref().and_then(|l| l.window.clone());
        let (old, new) = (window_of(&cur), window_of(&next));
        if !same(old.as_ref(), new.as_ref()) {
            // A new window kind or size starts a new window.
            if new.is_none() {
                self.window.reset(now);
            }
        }
        // Put in force again (a lapse back to the start's layer): judged again at the next call.
        if let Some(l) = &next {
            l.judged.store(false, Relaxed);
        }
        let live = next.is_some();
        self.live.set(next);
        // Under the lock, as transitions store the word: none can overwrite the flag.
        if live {
            self.word.fetch_or(Word::LIVE, AcqRel);
        } else {
            self.word.fetch_and(!Word::LIVE, AcqRel);
        }
        true
    }

    /// A layer of `pairs` from `source` over `below` (or the code's), checked whole.
    #[allow(clippy::too_many_arguments)]
    fn layer(
        &self,
        below: Option<Arc<Layer>>,
        sources: &[(String, Source)],
        pairs: Vec<(String, String)>,
        source: Source,
        until: u64,
        exact: Option<&Settings>,
    ) -> Result<Layer, ConfigError> {
        refuse_code_only(&pairs, self.code_config().max_keys())?;
        let keyed = crate::settings::in_force::by_key(&pairs, source, sources);
        let base = below
            .as_ref()
            .map_or(self.code_config().settings(), |b| b.config.settings());
        // `exact`: settings already checked whole (a promoted shadow's), which text layered
        // on `base` could not carry (a setting turned off has no text).
        let settings = match exact {
            Some(s) => s.clone(),
            None => base.with_overrides(pairs.iter().map(|(k, v)| (k.as_str(), v.as_str())))?,
        };
        let config = BreakerConfig {
            settings: Arc::new(settings),
            ..self.code_config().clone()
        };
        let kind = config.window();
        let window = if kind == self.code_config().window() {
            None
        } else {
            // Kept when the layer in force or the one below already judges in a window of
            // this kind and size: only a new kind or size starts a new window.
            let same = |l: &Arc<Layer>| (l.config.window() == kind).then(|| l.window.clone());
            let reuse = self
                .live
                .get()
                .and_then(|l| same(&l))
                .or_else(|| below.as_ref().and_then(same))
                .flatten();
            Some(reuse.unwrap_or_else(|| Arc::new(Window::new(kind))))
        };
        let code = self.code_config().settings().to_text();
        let settings = in_force::attribute(
            &code,
            below.as_ref().map(|b| &b.settings[..]),
            config.settings().to_text(),
            &keyed,
            source,
        );
        Ok(Layer {
            config,
            window,
            settings: settings.into(),
            given: pairs,
            source,
            until,
            below,
            judged: AtomicBool::new(false),
        })
    }
}

/// The window kind of `kind`, as an operator reads it in a log line.
fn window_text(kind: WindowKind) -> String {
    match kind {
        WindowKind::Time(d) => format!("window = {}", fusebox_settings::duration_text(d)),
        WindowKind::Calls(n) => format!("window_calls = {n}"),
    }
}

/// A live change (admin, fleet) rather than the start's overrides.
fn is_change(l: &Layer) -> bool {
    matches!(l.source, Source::Admin | Source::Fleet)
}

/// The start's layer under `cur`: `cur` itself when it is the start's, else its `below`.
fn start_layer(cur: &Option<Arc<Layer>>) -> Option<Arc<Layer>> {
    match cur {
        Some(l) if is_change(l) => l.below.clone(),
        other => other.clone(),
    }
}

/// Refuses what no override can change: `max_keys` is one cap for all of a keyed name's keys,
/// held by the name's family when its first key is called, so a key's own settings cannot
/// move it; an override of it to another value than the code's is an error rather than shown
/// in force and ignored. (The code's own value passes: a promoted shadow gives every key.)
pub(crate) fn refuse_code_only(
    pairs: &[(String, String)],
    code_max_keys: u32,
) -> Result<(), ConfigError> {
    let moved = |(k, v): &&(String, String)| {
        k == "max_keys" && v.trim().parse::<u32>().ok() != Some(code_max_keys)
    };
    match pairs.iter().find(moved) {
        Some((_, v)) => Err(ConfigError::OutOfRange {
            field: "max_keys",
            value: v.clone(),
            expected: "no override: a keyed breaker's `max_keys` is the code's, one cap for all its keys set where it is declared",
        }),
        None => Ok(()),
    }
}
