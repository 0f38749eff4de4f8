//! fusebox-sim: the virtual-time outage simulator of fusebox. It proves the second job of a
//! breaker, letting a dependency back in, by replaying outages against the real breakers and
//! bulkheads, built only on `fusebox-runtime`'s public API (what a user's `fusebox::Breaker`
//! is). It is a crate of its own so that its tokio `test-util` (a paused clock) never reaches
//! a user's build; the `replay` example (`cargo run --release --example replay`) is this crate's.
//!
//! - [`Dependency`]: a simulated dependency with a scripted timeline of [`Phase`]s: healthy,
//!   down (refusing or hanging), slow, partly failing, and cold after a restart, warming only
//!   as it receives requests.
//! - [`Server`]: N workers and [`Route`]s of requests at given rates; each request holds a worker
//!   while it works and waits, and makes its [`Call`] through a real
//!   [`Breaker`](fusebox_runtime::Breaker) and [`Bulkhead`](fusebox_runtime::Bulkhead), on a
//!   paused tokio clock of its own; or through your own async function ([`Call::function`]),
//!   e.g. one annotated with `#[breaker]`.
//! - [`Report`]: utilization over time and per window, fallback share, calls sent to the
//!   dependency, breaker timelines and recovery times; [`svg`] draws it.
//! - [`replay`]: the four incident write-ups of the project, replayed; and
//!   [`replay::candidate`], a candidate configuration given as [`Overrides`] (settings pairs by
//!   breaker name, checked by the settings table) replayed beside the live one
//!   (`cargo run --release --example replay -- --set payments.trip_p95=500ms`).
//!
//! Layout, from the bottom up: `rng.rs` and `latency.rs` draw numbers; `dependency.rs` is the
//! scripted dependency; `server.rs` the model a user configures; `engine.rs` runs it (arrivals,
//! one request's life, watching the breakers' `state`/`state_since`); `meter.rs` integrates the
//! busy gauge exactly; `collect.rs` turns the run's book into `report.rs`'s [`Report`];
//! `svg.rs` draws reports with plotters; `overrides.rs` holds candidate settings by breaker
//! name; `replay/` holds one file per write-up, plus the comparison table
//! (`replay/summary.rs`) and the candidate replays (`replay/candidate.rs`). Tests: `tests/server.rs` (the model) and
//! `tests/replays.rs` (the replays' figures, with tolerances).
//!
//! ```
//! use std::time::Duration;
//! use fusebox_runtime::Breaker;
//! use fusebox_sim::{Call, Dependency, Latency, Phase, Route, Server};
//! let (ms, s) = (Duration::from_millis, Duration::from_secs);
//! // Down for two minutes from t = 60 s, then back, warm.
//! let dep = Dependency::builder("inventory", Latency::fixed(ms(20)))
//!     .phase(s(60), Phase::Refuse)
//!     .phase(s(180), Phase::Healthy)
//!     .build();
//! let breaker = Breaker::builder("inventory").timeout(ms(500)).window_calls(20)
//!     .open_for(s(10)).build_detached().unwrap();
//! let report = Server::new(50)
//!     .route(Route::new("orders", 20.0).call(Call::new(&dep).breaker(&breaker)))
//!     .run_for(s(600))
//!     .unwrap();
//! let timeline = report.breaker("inventory").unwrap();
//! assert!(timeline.first_open_after(s(60)).unwrap() < s(62));
//! // Healthy again at 180 s: at most one open period and two half-open windows later, closed.
//! let recovery = timeline.recovery_after(dep.up_again_at().unwrap()).unwrap();
//! assert!(recovery <= s(70), "{recovery:?}");
//! ```

mod collect;
mod dependency;
mod engine;
mod latency;
mod meter;
mod overrides;
pub mod replay;
mod report;
mod rng;
mod server;
pub mod svg;

pub use dependency::{Dependency, DependencyBuilder, DependencyStats, Phase, SimError};
pub use latency::Latency;
pub use overrides::{OverrideError, Overrides};
pub use report::{BreakerTimeline, Counts, Report, RouteReport, RouteWindow, Series, WindowReport};
pub use rng::Rng;
pub use server::{Call, Route, Server};
