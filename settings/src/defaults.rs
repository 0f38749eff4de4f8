//! The documented defaults, written once: [`Settings::default`](crate::Settings) and
//! [`RawSettings::check`](crate::RawSettings::check) both read them from here.
//!
//! ```
//! use fusebox_settings::{defaults, Settings};
//! assert_eq!(Settings::default().failure_rate(), defaults::FAILURE_RATE);
//! ```

use std::time::Duration;

/// Percent of failed calls that opens the breaker.
pub const FAILURE_RATE: u8 = 50;
/// The time-based window.
pub const WINDOW: Duration = Duration::from_secs(30);
/// Calls in the window before a rate is judged (or the count window's size if smaller).
pub const MIN_CALLS: u32 = 20;
/// Time open before half-open.
pub const OPEN_FOR: Duration = Duration::from_secs(30);
/// Growth factor of repeated open periods: none.
pub const BACKOFF: f64 = 1.0;
/// Share of traffic admitted in half-open, in percent.
pub const HALF_OPEN_PCT: u8 = 5;
/// How long half-open samples before judging.
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
