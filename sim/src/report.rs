//! What a simulation run measured: utilization, outcomes, breaker timelines, series.

use std::time::Duration;

use fusebox_runtime::State;

/// How the requests of a route (or of a whole window) ended.
///
/// Requests are counted in the window and sample bucket of their arrival.
///
/// ```
/// use fusebox_sim::Counts;
/// let mut c = Counts::default();
/// c.arrived = 10;
/// c.ok = 6;
/// c.rejected = 3;
/// c.failed = 1;
/// assert_eq!(c.fallback(), 4);
/// assert!((c.fallback_share() - 0.4).abs() < 1e-12);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Counts {
    /// Requests that arrived.
    pub arrived: u64,
    /// Refused at the door: no free worker (the server is saturated).
    pub shed: u64,
    /// Answered normally (the dependency answered `Ok`, or the route calls none).
    pub ok: u64,
    /// Refused by a breaker or a bulkhead, answered by the fallback.
    pub rejected: u64,
    /// The dependency failed or timed out; answered by the fallback.
    pub failed: u64,
    /// Calls that reached the dependency.
    pub sent: u64,
    /// Answers (normal or fallback) that took longer than the route's patience.
    pub late: u64,
}

impl Counts {
    /// Requests answered by the fallback: rejected plus failed.
    pub fn fallback(&self) -> u64 {
        self.rejected + self.failed
    }
    /// Share of arrived requests answered by the fallback (0..=1).
    pub fn fallback_share(&self) -> f64 {
        ratio(self.fallback(), self.arrived)
    }
    /// Share of arrived requests shed for want of a worker (0..=1).
    pub fn shed_share(&self) -> f64 {
        ratio(self.shed, self.arrived)
    }
    /// Adds another set of counts to this one.
    pub fn add(&mut self, o: &Counts) {
        self.arrived += o.arrived;
        self.shed += o.shed;
        self.ok += o.ok;
        self.rejected += o.rejected;
        self.failed += o.failed;
        self.sent += o.sent;
        self.late += o.late;
    }
    /// Share of arrived requests answered, normally or by the fallback, within the route's
    /// patience (0..=1).
    pub fn answered_in_time_share(&self) -> f64 {
        let answered = (self.ok + self.fallback()).saturating_sub(self.late);
        ratio(answered, self.arrived)
    }
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

/// One route over one window: see [`WindowReport::route`].
///
/// ```
/// use std::time::Duration;
/// use fusebox_sim::{Route, Server};
/// let r = Server::new(10)
///     .route(Route::new("a", 10.0).work(Duration::from_millis(100)))
///     .window("w", Duration::ZERO, Duration::from_secs(10))
///     .run_for(Duration::from_secs(10))
///     .unwrap();
/// let a = r.window("w").unwrap().route("a").unwrap();
/// assert_eq!(a.counts.arrived, 100);
/// assert!((a.mean_busy - 1.0).abs() < 0.02); // 10/s × 100 ms
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct RouteWindow {
    /// Route name.
    pub name: String,
    /// Its requests that arrived in the window.
    pub counts: Counts,
    /// Workers it held on average over the window.
    pub mean_busy: f64,
}

/// The figures of one named window of time (a phase of the replay).
///
/// ```
/// use std::time::Duration;
/// use fusebox_sim::{Route, Server};
/// let s = Duration::from_secs;
/// let r = Server::new(4)
///     .route(Route::new("calm", 1.0).work(s(1)))
///     .route(Route::new("rush", 0.0).rate_from(s(10), 10.0).work(s(1)))
///     .window("calm", s(0), s(10))
///     .window("rush", s(10), s(20))
///     .run_for(s(20))
///     .unwrap();
/// let rush = r.window("rush").unwrap();
/// assert_eq!(rush.peak_busy, 4);
/// assert!(rush.full_after.unwrap() < s(1));
/// assert!(rush.counts.shed_share() > 0.5);
/// assert!(rush.mean_busy_without("rush") < 1.1);
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct WindowReport {
    /// Its name.
    pub name: String,
    /// Start, since the start of the run.
    pub from: Duration,
    /// End (exclusive).
    pub to: Duration,
    /// Mean share of busy workers (0..=1): worker-seconds held over worker-seconds available.
    pub utilization: f64,
    /// Most workers busy at once.
    pub peak_busy: u64,
    /// When, after the window's start, every worker was busy for the first time.
    pub full_after: Option<Duration>,
    /// Every route's requests together.
    pub counts: Counts,
    /// Per route.
    pub routes: Vec<RouteWindow>,
}

impl WindowReport {
    /// One route's figures.
    pub fn route(&self, name: &str) -> Option<&RouteWindow> {
        self.routes.iter().find(|r| r.name == name)
    }
    /// The requests of every route but `route`, added up: the rest of the service.
    ///
    /// ```
    /// use std::time::Duration;
    /// use fusebox_sim::{Route, Server};
    /// let r = Server::new(4)
    ///     .route(Route::new("a", 2.0))
    ///     .route(Route::new("b", 3.0))
    ///     .window("all", Duration::ZERO, Duration::from_secs(10))
    ///     .run_for(Duration::from_secs(10))
    ///     .unwrap();
    /// assert_eq!(r.window("all").unwrap().counts_without("a").arrived, 30);
    /// ```
    pub fn counts_without(&self, route: &str) -> Counts {
        let mut c = Counts::default();
        for r in self.routes.iter().filter(|r| r.name != route) {
            c.add(&r.counts);
        }
        c
    }
    /// Workers held on average by every route but `route`.
    pub fn mean_busy_without(&self, route: &str) -> f64 {
        self.routes
            .iter()
            .filter(|r| r.name != route)
            .map(|r| r.mean_busy)
            .sum()
    }
}

/// One route over the whole run: see [`Report::route`].
///
/// ```
/// use std::time::Duration;
/// use fusebox_sim::{Route, Server};
/// let r = Server::new(1).route(Route::new("a", 2.0)).run_for(Duration::from_secs(5)).unwrap();
/// assert_eq!(r.route("a").unwrap().counts.ok, 10);
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct RouteReport {
    /// Route name.
    pub name: String,
    /// Its requests.
    pub counts: Counts,
    /// Workers it held on average.
    pub mean_busy: f64,
}

/// The states one breaker went through, with the virtual time of each transition.
///
/// ```
/// use std::time::Duration;
/// use fusebox_sim::BreakerTimeline;
/// use fusebox_runtime::State;
/// let s = Duration::from_secs;
/// let t = BreakerTimeline::new("x", vec![
///     (s(0), State::Closed), (s(5), State::Open), (s(35), State::HalfOpen), (s(65), State::Closed),
/// ]);
/// assert_eq!(t.first_open_after(s(1)), Some(s(5)));
/// assert_eq!(t.recovery_after(s(20)), Some(s(45)));
/// assert_eq!(t.not_closed_in(s(0), s(100)), s(60));
/// assert_eq!(t.state_at(s(40)), State::HalfOpen);
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct BreakerTimeline {
    /// Breaker name.
    pub name: String,
    /// `(when, new state)`, in time order; the first entry is the state at the start.
    pub transitions: Vec<(Duration, State)>,
}

impl BreakerTimeline {
    /// A timeline from its transitions (sorted by time).
    pub fn new(name: impl Into<String>, transitions: Vec<(Duration, State)>) -> BreakerTimeline {
        BreakerTimeline {
            name: name.into(),
            transitions,
        }
    }

    /// The state at `t`.
    pub fn state_at(&self, t: Duration) -> State {
        let i = self.transitions.partition_point(|(at, _)| *at <= t);
        self.transitions
            .get(i.wrapping_sub(1))
            .map_or(State::Closed, |(_, s)| *s)
    }

    /// The first time it opened at or after `t`.
    pub fn first_open_after(&self, t: Duration) -> Option<Duration> {
        self.transitions
            .iter()
            .find(|(at, s)| *at >= t && *s == State::Open)
            .map(|(at, _)| *at)
    }

    /// How many times it opened.
    pub fn times_opened(&self) -> usize {
        self.transitions
            .iter()
            .filter(|(_, s)| *s == State::Open)
            .count()
    }

    /// Recovery time: from `up` (the dependency healthy again) until the breaker closed and
    /// stayed closed to the end of the run. `None` if it is not closed at the end.
    pub fn recovery_after(&self, up: Duration) -> Option<Duration> {
        let (at, state) = self.transitions.last()?;
        if !state.admits_all() {
            return None;
        }
        // The start of the final closed stretch (consecutive closed entries count as one).
        let start = self
            .transitions
            .iter()
            .rev()
            .take_while(|(_, s)| s.admits_all())
            .last()
            .map_or(*at, |(t, _)| *t);
        Some(start.saturating_sub(up))
    }

    /// Time spent away from closed between `from` and `to`.
    pub fn not_closed_in(&self, from: Duration, to: Duration) -> Duration {
        let mut total = Duration::ZERO;
        for (i, (at, s)) in self.transitions.iter().enumerate() {
            if s.admits_all() {
                continue;
            }
            let end = self.transitions.get(i + 1).map_or(to, |(t, _)| *t);
            let (a, b) = ((*at).max(from), end.min(to));
            if b > a {
                total += b - a;
            }
        }
        total
    }
}

/// Time series of a run, one value per sample bucket (each a share, 0..=1): what
/// [`svg::timeline`](super::svg::timeline) draws.
///
/// ```
/// use std::time::Duration;
/// use fusebox_sim::{Route, Server};
/// let r = Server::new(10)
///     .route(Route::new("a", 10.0).work(Duration::from_millis(500)))
///     .sample_every(Duration::from_secs(2))
///     .run_for(Duration::from_secs(20))
///     .unwrap();
/// assert_eq!(r.series.utilization.len(), 10);
/// assert!((r.series.utilization[5] - 0.5).abs() < 0.01);
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct Series {
    /// Width of a bucket.
    pub step: Duration,
    /// Mean share of busy workers.
    pub utilization: Vec<f64>,
    /// Share of the bucket's arrivals answered by the fallback.
    pub fallback: Vec<f64>,
    /// Share of the bucket's arrivals shed for want of a worker.
    pub shed: Vec<f64>,
    /// Share of time the breakers were away from closed (averaged over the breakers).
    pub not_closed: Vec<f64>,
    /// The first bulkhead's slots (its adaptive limit) at the end of each bucket; empty
    /// when no route calls through a bulkhead.
    pub pool: Vec<usize>,
}

/// Everything one [`Server::run_for`](super::Server::run_for) measured.
///
/// ```
/// use std::time::Duration;
/// use fusebox_sim::{Route, Server};
/// let r = Server::new(2).route(Route::new("a", 1.0).work(Duration::from_secs(1)))
///     .run_for(Duration::from_secs(10)).unwrap();
/// assert!((r.utilization - 0.5).abs() < 0.01);
/// assert_eq!(r.counts().arrived, 10);
/// assert!(r.breakers.is_empty());
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Report {
    /// Worker count of the server.
    pub workers: usize,
    /// Virtual time simulated.
    pub duration: Duration,
    /// Mean share of busy workers over the run.
    pub utilization: f64,
    /// Per route.
    pub routes: Vec<RouteReport>,
    /// Per named window, in the order they were declared.
    pub windows: Vec<WindowReport>,
    /// Every breaker the routes call through, in order of first use.
    pub breakers: Vec<BreakerTimeline>,
    /// The time series.
    pub series: Series,
}

impl Report {
    /// A window by name.
    pub fn window(&self, name: &str) -> Option<&WindowReport> {
        self.windows.iter().find(|w| w.name == name)
    }
    /// A route by name.
    pub fn route(&self, name: &str) -> Option<&RouteReport> {
        self.routes.iter().find(|r| r.name == name)
    }
    /// A breaker's timeline by name.
    pub fn breaker(&self, name: &str) -> Option<&BreakerTimeline> {
        self.breakers.iter().find(|b| b.name == name)
    }
    /// Every route's requests together.
    pub fn counts(&self) -> Counts {
        let mut c = Counts::default();
        for r in &self.routes {
            c.add(&r.counts);
        }
        c
    }
}
