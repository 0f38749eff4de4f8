//! Virtual-time outage simulator (feature `sim`): proves the second job of a breaker, letting a
//! dependency back in, by replaying outages against the real breakers and bulkheads.
//!
//! - [`Dependency`]: a simulated dependency with a scripted timeline of [`Phase`]s: healthy,
//!   down (refusing or hanging), slow, partly failing, and cold after a restart, warming only
//!   as it receives requests.
//! - [`Server`]: N workers and [`Route`]s of requests at given rates; each request holds a worker
//!   while it works and waits, and makes its [`Call`] through a real [`Breaker`](crate::Breaker)
//!   and [`Bulkhead`](crate::Bulkhead), on a paused tokio clock of its own; or through your own
//!   async function ([`Call::function`]), e.g. one annotated with `#[breaker]`.
//! - [`Report`]: utilization over time and per window, fallback share, calls sent to the
//!   dependency, breaker timelines and recovery times; [`svg`] draws it.
//! - [`replay`]: the four incident write-ups of the project, replayed.
//!
//! ```
//! use std::time::Duration;
//! use fusebox_runtime::Breaker;
//! use fusebox_runtime::sim::{Call, Dependency, Latency, Phase, Route, Server};
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
pub mod replay;
mod report;
mod rng;
mod server;
pub mod svg;

pub use dependency::{Dependency, DependencyBuilder, DependencyStats, Phase, SimError};
pub use latency::Latency;
pub use report::{BreakerTimeline, Counts, Report, RouteReport, RouteWindow, Series, WindowReport};
pub use rng::Rng;
pub use server::{Call, Route, Server};
