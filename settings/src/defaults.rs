//! The documented defaults, written once: [`Settings::default`](crate::Settings) and
//! [`RawSettings::check`](crate::RawSettings::check) both read them from here.
//!
//! Two kinds (issue 26). The plain ones (`FAILURE_RATE`, `WINDOW`, `OPEN_FOR`...) apply to a
//! breaker given neither a `timeout` nor a slow-call rule. A breaker given its call's
//! `timeout` derives the settings left unset from it, the `DERIVED_*` constants below, each
//! justified by the replays (`cargo run --release --example replay`, table "the defaults"):
//! detection (a window of the last calls, a slow rule at half the timeout) unless a window,
//! threshold or slow rule was given, and recovery (trial timeout, probes that back off, short
//! half-open, ramp, growing open periods) unless a recovery setting other than
//! `half_open_pct` was given. Without a `timeout`, a slow rule given (`trip_p95 = "500ms"`,
//! the design card's line) sets the scale as the timeout that would derive it, twice its bound.
//! A setting given is never changed.
//!
//! ```
//! use std::time::Duration;
//! use fusebox_settings::{defaults, RawSettings, Settings, WindowKind};
//! assert_eq!(Settings::default().failure_rate(), defaults::FAILURE_RATE);
//! let derived = RawSettings::new().timeout(Duration::from_secs(2)).check().unwrap();
//! assert_eq!(derived.window(), WindowKind::Calls(defaults::DERIVED_WINDOW_CALLS));
//! assert_eq!(derived.probe_every(), Some(defaults::DERIVED_PROBE_EVERY));
//! ```

use std::time::Duration;

/// Percent of failed calls that opens the breaker.
pub const FAILURE_RATE: u8 = 50;
/// The time-based window (without a `timeout`: see [`DERIVED_WINDOW_CALLS`]).
pub const WINDOW: Duration = Duration::from_secs(30);
/// Calls in the window before a rate is judged (or the count window's size if smaller).
pub const MIN_CALLS: u32 = 20;
/// Time open before half-open (also the first period with a `timeout`, then growing: see
/// [`DERIVED_OPEN_FOR_MAX`]).
pub const OPEN_FOR: Duration = Duration::from_secs(30);
/// Growth factor of repeated open periods: none.
pub const BACKOFF: f64 = 1.0;
/// Share of traffic admitted in half-open, in percent.
pub const HALF_OPEN_PCT: u8 = 5;
/// How long half-open samples before judging (with a `timeout`: see
/// [`DERIVED_HALF_OPEN_WINDOW`]).
pub const HALF_OPEN_WINDOW: Duration = Duration::from_secs(30);
/// A breaker away from closed longer than this is `stuck`.
pub const ALERT_AFTER: Duration = Duration::from_secs(300);
/// How long a call waits for a bulkhead slot: not at all (fail fast).
pub const MAX_WAIT: Duration = Duration::ZERO;
/// The largest count-based window: one word per call is allocated up front.
pub const MAX_WINDOW_CALLS: u32 = 1_000_000;
/// The largest `min_calls` and `half_open_calls`: like `window_calls`, counted in `u32`s.
pub const MAX_COUNT: u32 = 1_000_000;
/// How many keys of a keyed breaker get a breaker of their own, by default.
pub const KEYS_PER_NAME: u32 = 1000;
/// The most keys one keyed breaker may hold (each is about 1 KiB plus its metrics series).
pub const MAX_KEYS: u32 = 1_000_000;
/// The longest time window: each tenth of it counts its calls in a `u32`, which a six-minute
/// slot still holds at ten million calls a second.
pub const MAX_WINDOW: Duration = Duration::from_secs(3600);
/// The largest bulkhead pool: tokio's `Semaphore::MAX_PERMITS` on a 32-bit target, so a
/// pool valid on one machine is valid on every one.
pub const MAX_POOL: u32 = u32::MAX >> 3;
/// Where an adaptive limit starts when `pool` is not given: Netflix concurrency-limits'
/// `initialLimit` (Gradient2, Vegas and AIMD all start at 20).
pub const ADAPTIVE_START: u32 = 20;
/// The lowest an adaptive limit goes unless told: one call, so a stuck dependency holds
/// as few workers as the algorithm's own floor (its queue allowance) lets it.
pub const MIN_POOL: u32 = 1;
/// The highest an adaptive limit goes unless told: Gradient2's `maxConcurrency`.
pub const MAX_POOL_ADAPTIVE: u32 = 200;

// What a breaker given its call's `timeout` (and nothing else it needs) derives from it.
// Each figure is measured on the replays (`cargo run --release --example replay`, "defaults").

/// Given only a `timeout`, the breaker keeps the last this many calls (`window_calls`).
///
/// A count window reacts at the speed of the traffic: in lesson step 3 (a price server that
/// hangs under 400 calls a second) it opens 0.27 s after the hang, where a 30 s time window
/// holding 12 000 healthy calls needs 15 s; behind a pool of 5 (issue 26's real run) the six
/// slow calls that breach a p95 rule open it 2.3 s in, where the 30 s window took 14 s (10.4 s
/// in the issue's real run). A hundred calls keep a 1 % error rate and ±20 % jitter far from
/// 50 % (healthy with noise: no false opening in an hour).
pub const DERIVED_WINDOW_CALLS: u32 = 100;
/// Given a `timeout` and no slow rule, a call taking half its timeout is slow...
///
/// An answer at half the timeout is already spending the caller's budget: seed 002's 8 s
/// answers (80 ms usually) hold a worker each, and issue 15's 2 s answers under a 3 s
/// timeout never fail at all; a breaker counting only failures never trips on either. With
/// it, a timeout alone opens on the latter (replay "slow under the timeout").
///
/// Half of seed 002's own 30 s timeout is still more than its 8 s answers, so the runtime
/// also learns the dependency's usual latency (the 90th percentile of the answers that were
/// not slow, once a hundred have come) and counts a call slow from five times it when that is
/// shorter, never under 100 ms ([`DERIVED_USUAL_FACTOR`], [`DERIVED_USUAL_FLOOR`],
/// [`DERIVED_USUAL_WARM`]; `BreakerMetrics::usual_latency`): the timeout alone then
/// trips 2.9 s into seed 002's slowdown at 20 calls a second, and stays open while it lasts.
/// In a steady state only a tenth of the answers are above that estimate, so half of the
/// window past five times it is never noise (an hour of healthy noise: no opening).
///
/// That is with every call reaching the breaker. When callers first wait in a pool of the
/// service's own (seed 002's twenty database connections, held across the call), only as many
/// calls a second reach it as that pool frees (20 / 8 s = 2.5 a second once it is full), and
/// half of the last 100 calls turn slow in about 17 s (a real run on loopback). Put the
/// breaker in front of that pool, or a `#[bulkhead]` smaller than it (its refusals behind slow
/// calls count as slow), or give a slow rule whose share is lower (`trip_p95 = "500ms"`, the
/// card's line: 5 % of the window slow, 0.76 s in the same run).
pub const DERIVED_SLOW_DIVISOR: u32 = 2;
/// Under a slow rule derived from `timeout`, a call is also slow from this many times the
/// dependency's usual latency (the runtime's estimate of the 90th percentile of its answers that
/// were not slow), when that is shorter than half the timeout: seed 002's 8 s answers, 80 ms
/// usually, under a 30 s timeout. Five: in a steady state a tenth of the answers are above the
/// estimate whatever the latency's shape, so half of the window past five times it is a change
/// of the dependency (replay: an hour of healthy noise, no opening; 2.9 s into seed 002).
pub const DERIVED_USUAL_FACTOR: u32 = 5;
/// The learned bound is never shorter than this: a dependency answering in microseconds (a
/// loopback call, a paused test clock) is not slow at a scheduling hiccup of a few milliseconds.
pub const DERIVED_USUAL_FLOOR: Duration = Duration::from_millis(100);
/// Answers that teach the usual latency before it judges: the derived window's size, so the
/// breaker judges by it only once it has seen a window of the dependency's answers.
pub const DERIVED_USUAL_WARM: u32 = DERIVED_WINDOW_CALLS;
/// ... and half the window slow opens it (`slow_rate`), as half of it failing does
/// (`failure_rate`): the healthy tail is far from half the timeout, a sick dependency is
/// past it on nearly every call.
pub const DERIVED_SLOW_RATE: u8 = 50;
/// Given a `timeout` and no recovery setting, a trial (and a probe) gets this many times it
/// (`half_open_timeout`): seed 000's provider comes back cold and answers its first calls in
/// 1.5–3 s against an 800 ms timeout; trials cut at 800 ms kept it cold for three hours,
/// trials allowed 3.2 s warm it. So under a given slow rule too (the card's line,
/// `trip_p95` with `timeout`): held to 500 ms, its trials never let a provider back cold
/// after failures in (the simulator: never back; now 9.4 s). With a `half_open_slow` given, a
/// trial is judged slow at that bound anyway, so it gets at most twice it, and never less
/// than `timeout` (its caller still wants the answer).
pub const DERIVED_TRIAL_FACTOR: u32 = 4;
/// Given a `timeout`, one real call probes the dependency this often while open
/// (`probe_every`): seed 000's provider was back after 2 minutes and the breaker learns it
/// within a second. A probe that fails fast (refused) costs nothing and keeps this pace; a
/// probe that was slow or timed out backs off (see [`PROBE_BACKOFF_SHARE`]).
pub const DERIVED_PROBE_EVERY: Duration = Duration::from_secs(1);
/// A derived probe that was slow or timed out pushes the next one to an eighth of the time
/// the breaker has been away from closed (never beyond the open period cap): seed 003's 42
/// hanging Redis instances on 2 threads then waste 2.9 % in steady state (the tuned
/// configuration: 3.5 %), while a dependency slow for 25 s (issue 26's real run) is probed
/// again within about 4 s of healing, and one slow for 10 minutes (seed 002) within 75 s.
pub const PROBE_BACKOFF_SHARE: u32 = 8;
/// Given a `timeout`, half-open samples this long (`half_open_window`) after a probe passed:
/// the probe already showed the dependency answering; seed 000's tuned run needed 5 s.
pub const DERIVED_HALF_OPEN_WINDOW: Duration = Duration::from_secs(2);
/// Given a `timeout`, traffic comes back over this long (`ramp`): seed 000's provider warms
/// by serving requests (12 here) and all of its traffic at once would meet it cold. With the
/// 1 s probes, the 2 s half-open window and this ramp, a timeout alone has all of seed 000's
/// traffic back 9.7 s after the provider returns, no relapse, 1.2 % fallback after (the tuned
/// configuration: 12.2 s, 0, 1.5 %).
pub const DERIVED_RAMP: Duration = Duration::from_secs(5);
/// Given a `timeout`, repeated open periods grow by this factor (`backoff`)...
pub const DERIVED_BACKOFF: f64 = 2.0;
/// ... up to this long (`open_for_max`): with probes on, the open period is only the
/// backstop, and each one ending in half-open costs a dead dependency a few trials; an hour
/// keeps seed 003's 42 dead instances under 4 % of 2 threads.
pub const DERIVED_OPEN_FOR_MAX: Duration = Duration::from_secs(3600);

/// `#[retry]`: attempts at most, the first included, unless told (one call, two retries).
pub const RETRY_ATTEMPTS: u32 = 3;
/// `#[retry]`: the most attempts: past a handful, retrying only adds load.
pub const MAX_ATTEMPTS: u32 = 10;
/// `#[retry]`: the ceiling of the first retry's wait (a lost packet, a restarted connection).
pub const RETRY_BACKOFF: Duration = Duration::from_millis(50);
/// `#[retry]`: the highest ceiling of a wait, however many retries came before.
pub const RETRY_BACKOFF_MAX: Duration = Duration::from_secs(2);
/// `#[retry]`: the retry budget's share of the name's calls, in percent (Finagle's).
pub const BUDGET_SHARE: u8 = 20;
/// `#[retry]`: retries a second the budget allows whatever the traffic. Finagle's is 10, sized
/// for busy RPC clients; for a dependency called 20 times a second that alone would let
/// retries add half the load while it struggles (the retry replay).
pub const BUDGET_FLOOR: u32 = 1;
/// `#[retry]`: the largest floor: a thousand retries a second is no longer a floor.
pub const MAX_BUDGET_FLOOR: u32 = 1000;
/// `#[retry]`: how far back the budget counts calls and retries.
pub const BUDGET_WINDOW: Duration = Duration::from_secs(10);
