//! The server model: N workers, routes arriving at given rates, each request holding a worker
//! while it works and waits; driven on a paused tokio clock so hours replay in seconds.

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use tokio::task::LocalSet;
use tokio::time::{sleep, sleep_until, Instant};

use super::meter::{Meter, Span};
use super::report::{
    BreakerTimeline, Counts, Report, RouteReport, RouteWindow, Series, WindowReport,
};
use super::{Dependency, SimError};
use crate::breaker::Completion;
use crate::{Breaker, Bulkhead, Error, Rejection, State};

/// A call a route makes to a dependency, through an optional breaker and bulkhead.
///
/// Every failed or refused call is answered by a fallback that holds the worker for
/// `fallback_cost` (the lesson's "an open breaker answers in 1 ms").
///
/// ```
/// use std::time::Duration;
/// use fusebox_runtime::{Breaker, Bulkhead};
/// use fusebox_runtime::sim::{Call, Dependency, Latency};
/// let reports = Dependency::builder("reports", Latency::fixed(Duration::from_secs(2))).build();
/// let pool = Bulkhead::builder("reports").pool(60).build_detached().unwrap();
/// let call = Call::new(&reports).bulkhead(&pool).timeout(Duration::from_secs(5));
/// # let _ = call;
/// ```
#[derive(Debug, Clone)]
pub struct Call {
    dependency: Dependency,
    breaker: Option<Breaker>,
    bulkhead: Option<Bulkhead>,
    timeout: Option<Duration>,
    fallback_cost: Duration,
}

impl Call {
    /// A plain call to `dependency`: no breaker, no bulkhead, no timeout.
    pub fn new(dependency: &Dependency) -> Call {
        Call {
            dependency: dependency.clone(),
            breaker: None,
            bulkhead: None,
            timeout: None,
            fallback_cost: Duration::ZERO,
        }
    }
    /// Through this breaker (its own `timeout` applies).
    pub fn breaker(mut self, b: &Breaker) -> Call {
        self.breaker = Some(b.clone());
        self
    }
    /// Through this bulkhead (after the breaker admitted the call).
    pub fn bulkhead(mut self, b: &Bulkhead) -> Call {
        self.bulkhead = Some(b.clone());
        self
    }
    /// A timeout of the call itself, for calls without a breaker (a breaker brings its own).
    pub fn timeout(mut self, d: Duration) -> Call {
        self.timeout = Some(d);
        self
    }
    /// How long the fallback holds the worker (default zero).
    pub fn fallback_cost(mut self, d: Duration) -> Call {
        self.fallback_cost = d;
        self
    }
}

/// A kind of request the server receives, at a given rate.
///
/// ```
/// use std::time::Duration;
/// use fusebox_runtime::sim::Route;
/// // 50 order-status requests a second, 50 ms of work each, no call.
/// let status = Route::new("status", 50.0).work(Duration::from_millis(50));
/// // 20 statements a second, 60 from the 60th second on.
/// let statements = Route::new("statements", 20.0).rate_from(Duration::from_secs(60), 60.0);
/// # let _ = (status, statements);
/// ```
#[derive(Debug, Clone)]
pub struct Route {
    name: String,
    rates: Vec<(Duration, f64)>,
    offset: Duration,
    work: Duration,
    call: Option<Call>,
    patience: Option<Duration>,
}

impl Route {
    /// `per_s` requests per second, evenly spaced, from the start of the run.
    pub fn new(name: impl Into<String>, per_s: f64) -> Route {
        Route {
            name: name.into(),
            rates: vec![(Duration::ZERO, per_s)],
            offset: Duration::ZERO,
            work: Duration::ZERO,
            call: None,
            patience: None,
        }
    }
    /// From `at` on, `per_s` requests per second.
    pub fn rate_from(mut self, at: Duration, per_s: f64) -> Route {
        self.rates.push((at, per_s));
        self.rates.sort_by_key(|(t, _)| *t);
        self
    }
    /// Shifts the arrivals by `d` (so routes of the same rate do not arrive together).
    pub fn offset(mut self, d: Duration) -> Route {
        self.offset = d;
        self
    }
    /// Work each request does on its worker besides the call (before it).
    pub fn work(mut self, d: Duration) -> Route {
        self.work = d;
        self
    }
    /// The call each request makes.
    pub fn call(mut self, c: Call) -> Route {
        self.call = Some(c);
        self
    }
    /// A user waits at most `d`: an answer that takes longer counts as [`late`](super::Counts::late).
    pub fn patience(mut self, d: Duration) -> Route {
        self.patience = Some(d);
        self
    }
}

/// A server with `workers` workers, receiving its routes' requests in virtual time.
///
/// A request takes a free worker (or is shed at once when none is free), does its work,
/// makes its call and holds the worker until the answer or the fallback is done.
/// The breakers and bulkheads are the real runtime's, driven through the same code path the
/// attributes generate; the clock is a paused tokio clock, so a three-hour outage replays in
/// seconds of wall time.
///
/// Build the breakers and bulkheads of a run fresh for it (`build_detached`): their state
/// lives on the run's virtual clock.
///
/// ```
/// use std::time::Duration;
/// use fusebox_runtime::Breaker;
/// use fusebox_runtime::sim::{Call, Dependency, Latency, Phase, Route, Server};
/// let (ms, s) = (Duration::from_millis, Duration::from_secs);
/// let price = Dependency::builder("price", Latency::fixed(ms(50)))
///     .phase(s(10), Phase::Hang)
///     .build();
/// let breaker = Breaker::builder("price").timeout(ms(300)).window_calls(10)
///     .open_for(s(10)).half_open_calls(3).build_detached().unwrap();
/// let report = Server::new(200)
///     .route(Route::new("views", 400.0).call(
///         Call::new(&price).breaker(&breaker).fallback_cost(ms(1))))
///     .window("normal", s(0), s(10))
///     .window("down", s(10), s(20))
///     .run_for(s(20))
///     .unwrap();
/// // 400 views/s × 50 ms = 20 of 200 workers.
/// assert!((report.window("normal").unwrap().utilization - 0.10).abs() < 0.01);
/// // The breaker opens within a second of the outage.
/// let opened = report.breaker("price").unwrap().first_open_after(s(10)).unwrap();
/// assert!(opened < s(11));
/// ```
#[derive(Debug, Clone)]
pub struct Server {
    workers: usize,
    routes: Vec<Route>,
    windows: Vec<(String, Duration, Duration)>,
    sample: Duration,
    settle: Option<(Duration, Duration)>,
}

impl Server {
    /// A server with `workers` workers (at least one) and no routes yet.
    pub fn new(workers: usize) -> Server {
        Server {
            workers: workers.max(1),
            routes: Vec::new(),
            windows: Vec::new(),
            sample: Duration::from_secs(1),
            settle: None,
        }
    }
    /// Adds a route.
    pub fn route(mut self, r: Route) -> Server {
        self.routes.push(r);
        self
    }
    /// A named window `[from, to)` to report on (a phase of the replay).
    pub fn window(mut self, name: impl Into<String>, from: Duration, to: Duration) -> Server {
        self.windows.push((name.into(), from, to));
        self
    }
    /// Width of a bucket of the time series (default 1 s).
    pub fn sample_every(mut self, d: Duration) -> Server {
        if !d.is_zero() {
            self.sample = d;
        }
        self
    }
    /// Ends the run early once it is past `after` and every breaker has been closed for
    /// `settle` (checked at each sample bucket).
    pub fn stop_when_settled(mut self, after: Duration, settle: Duration) -> Server {
        self.settle = Some((after, settle));
        self
    }

    /// Runs the simulation for at most `horizon` of virtual time, on a paused clock of its
    /// own current-thread runtime. Call it from synchronous code (not inside a runtime).
    pub fn run_for(self, horizon: Duration) -> std::io::Result<Report> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .start_paused(true)
            .build()?;
        let local = LocalSet::new();
        Ok(local.block_on(&rt, self.drive(horizon)))
    }

    async fn drive(self, horizon: Duration) -> Report {
        let t0 = Instant::now();
        let shared = Rc::new(Shared::new(&self, horizon, t0));
        for r in &self.routes {
            if let Some(c) = &r.call {
                c.dependency.start();
            }
        }
        for i in 0..shared.routes.len() {
            tokio::task::spawn_local(arrivals(shared.clone(), i, horizon));
        }
        let end = watch(&shared, &self, horizon).await;
        shared.report(end)
    }
}

/// Sleeps bucket by bucket until the horizon or until the breakers settled; returns the end.
async fn watch(shared: &Rc<Shared>, server: &Server, horizon: Duration) -> u64 {
    let horizon_ns = nanos(horizon);
    let step = server.sample;
    let mut t = Duration::ZERO;
    loop {
        t = (t + step).min(horizon);
        sleep_until(shared.t0 + t).await;
        let now = nanos(t);
        if now >= horizon_ns {
            return horizon_ns;
        }
        if let Some((after, settle)) = server.settle {
            if t >= after && shared.settled(nanos(settle)) {
                return now;
            }
        }
    }
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// One route at run time: its call, and the index of its breaker's track.
struct RouteRt {
    name: String,
    work: Duration,
    call: Option<Call>,
    track: Option<usize>,
    rates: Vec<(Duration, f64)>,
    offset: Duration,
    patience: Option<u64>,
}

/// The breaker's state as last seen, with the transitions seen so far.
struct Track {
    breaker: Breaker,
    last: (State, u64),
    transitions: Vec<(u64, State)>,
}

struct Book {
    busy: Meter,
    route_busy: Vec<Meter>,
    counts: Vec<Counts>,
    window_counts: Vec<Vec<Counts>>,
    bucket_counts: Vec<Counts>,
    tracks: Vec<Track>,
}

struct Shared {
    t0: Instant,
    workers: u64,
    bucket: u64,
    spans: Vec<Span>,
    window_names: Vec<String>,
    routes: Vec<RouteRt>,
    book: RefCell<Book>,
}

#[derive(Clone, Copy)]
enum Outcome {
    Ok,
    Rejected,
    Failed,
}

impl Shared {
    fn new(server: &Server, horizon: Duration, t0: Instant) -> Shared {
        let bucket = nanos(server.sample).max(1);
        let n_buckets = (nanos(horizon) / bucket + 1) as usize;
        let spans: Vec<Span> = server
            .windows
            .iter()
            .map(|(_, a, b)| Span {
                from: nanos(*a),
                to: nanos(*b),
            })
            .collect();
        let mut tracks: Vec<Track> = Vec::new();
        let mut routes = Vec::new();
        for r in &server.routes {
            let track = r.call.as_ref().and_then(|c| c.breaker.as_ref()).map(|b| {
                match tracks.iter().position(|t| t.breaker.ptr_eq(b)) {
                    Some(i) => i,
                    None => {
                        let state = b.state();
                        tracks.push(Track {
                            breaker: b.clone(),
                            last: (state, b.0.state_since()),
                            transitions: vec![(0, state)],
                        });
                        tracks.len() - 1
                    }
                }
            });
            routes.push(RouteRt {
                name: r.name.clone(),
                work: r.work,
                call: r.call.clone(),
                track,
                rates: r.rates.clone(),
                offset: r.offset,
                patience: r.patience.map(nanos),
            });
        }
        let workers = server.workers as u64;
        let n = routes.len();
        Shared {
            t0,
            workers,
            bucket,
            book: RefCell::new(Book {
                busy: Meter::new(workers, bucket, n_buckets, &spans),
                route_busy: (0..n).map(|_| Meter::new(u64::MAX, 0, 0, &spans)).collect(),
                counts: vec![Counts::default(); n],
                window_counts: vec![vec![Counts::default(); spans.len()]; n],
                bucket_counts: vec![Counts::default(); n_buckets],
                tracks,
            }),
            window_names: server.windows.iter().map(|w| w.0.clone()).collect(),
            spans,
            routes,
        }
    }

    fn now(&self) -> u64 {
        nanos(Instant::now().saturating_duration_since(self.t0))
    }

    /// Takes a worker for route `r`, or `false` when all are busy.
    fn acquire(&self, r: usize, now: u64) -> bool {
        let mut b = self.book.borrow_mut();
        if b.busy.level() >= self.workers {
            return false;
        }
        b.busy.up(now);
        b.route_busy[r].up(now);
        true
    }

    fn release(&self, r: usize) {
        let now = self.now();
        let mut b = self.book.borrow_mut();
        b.busy.down(now);
        b.route_busy[r].down(now);
    }

    /// Counts one event of a request of route `r` that arrived at `arrived`.
    fn count(&self, r: usize, arrived: u64, f: impl Fn(&mut Counts)) {
        let mut b = self.book.borrow_mut();
        let b = &mut *b;
        f(&mut b.counts[r]);
        for (i, s) in self.spans.iter().enumerate() {
            if s.contains(arrived) {
                f(&mut b.window_counts[r][i]);
            }
        }
        if let Some(c) = b.bucket_counts.get_mut((arrived / self.bucket) as usize) {
            f(c);
        }
    }

    /// Counts an answer as late when it took longer than the route's patience.
    fn answered(&self, r: usize, arrived: u64) {
        if let Some(p) = self.routes[r].patience {
            if self.now().saturating_sub(arrived) > p {
                self.count(r, arrived, |c| c.late += 1);
            }
        }
    }

    /// Records a transition of the breaker of track `i` if it moved since last seen.
    fn observe(&self, i: usize) {
        let mut b = self.book.borrow_mut();
        let t = &mut b.tracks[i];
        let core = &t.breaker.0;
        let seen = (core.state(), core.state_since());
        if seen != t.last {
            t.last = seen;
            let at = core
                .clock
                .instant(seen.1)
                .saturating_duration_since(self.t0);
            t.transitions.push((nanos(at), seen.0));
        }
    }

    fn observe_all(&self) {
        let n = self.book.borrow().tracks.len();
        for i in 0..n {
            self.observe(i);
        }
    }

    fn settled(&self, settle: u64) -> bool {
        self.observe_all();
        let now = self.now();
        let b = self.book.borrow();
        b.tracks.iter().all(|t| {
            let (state, _) = t.last;
            let since = t.transitions.last().map_or(0, |(at, _)| *at);
            state == State::Closed && now.saturating_sub(since) >= settle
        })
    }

    fn report(&self, end: u64) -> Report {
        self.observe_all();
        let mut b = self.book.borrow_mut();
        b.busy.advance(end);
        for m in &mut b.route_busy {
            m.advance(end);
        }
        let secs = |ns: u64| Duration::from_nanos(ns);
        let w = self.workers as f64;
        let routes = self
            .routes
            .iter()
            .enumerate()
            .map(|(i, r)| RouteReport {
                name: r.name.clone(),
                counts: b.counts[i],
                mean_busy: per(b.route_busy[i].total, end),
            })
            .collect();
        let windows = self
            .spans
            .iter()
            .enumerate()
            .map(|(k, s)| {
                let to = s.to.min(end);
                let len = to.saturating_sub(s.from);
                let acc = b.busy.windows[k];
                let mut counts = Counts::default();
                let per_route = self
                    .routes
                    .iter()
                    .enumerate()
                    .map(|(i, r)| {
                        counts.add(&b.window_counts[i][k]);
                        RouteWindow {
                            name: r.name.clone(),
                            counts: b.window_counts[i][k],
                            mean_busy: per(b.route_busy[i].windows[k].area, len),
                        }
                    })
                    .collect();
                WindowReport {
                    name: self.window_names[k].clone(),
                    from: secs(s.from),
                    to: secs(to),
                    utilization: per(acc.area, len) / w,
                    peak_busy: acc.peak,
                    full_after: acc.full_at.map(|t| secs(t - s.from)),
                    counts,
                    routes: per_route,
                }
            })
            .collect();
        let breakers: Vec<BreakerTimeline> = b
            .tracks
            .iter()
            .map(|t| {
                BreakerTimeline::new(
                    t.breaker.name(),
                    t.transitions
                        .iter()
                        .map(|(at, s)| (secs(*at), *s))
                        .collect(),
                )
            })
            .collect();
        let n_buckets = (end.div_ceil(self.bucket) as usize).min(b.bucket_counts.len());
        let step = secs(self.bucket);
        let mut series = Series {
            step,
            ..Series::default()
        };
        for k in 0..n_buckets {
            let from = k as u64 * self.bucket;
            let len = (from + self.bucket).min(end) - from;
            series.utilization.push(per(b.busy.buckets[k], len) / w);
            let c = &b.bucket_counts[k];
            series.fallback.push(c.fallback_share());
            series.shed.push(c.shed_share());
            let (a, z) = (secs(from), secs(from + len));
            let open: f64 = breakers
                .iter()
                .map(|t| t.not_closed_in(a, z).as_secs_f64())
                .sum();
            let denom = len as f64 / 1e9 * breakers.len().max(1) as f64;
            series
                .not_closed
                .push(if denom > 0.0 { open / denom } else { 0.0 });
        }
        Report {
            workers: self.workers as usize,
            duration: secs(end),
            utilization: per(b.busy.total, end) / w,
            routes,
            windows,
            breakers,
            series,
        }
    }
}

/// `area` (level × ns) per ns of `len`: the mean level.
fn per(area: f64, len: u64) -> f64 {
    if len == 0 {
        0.0
    } else {
        area / len as f64
    }
}

/// Spawns route `r`'s requests at their arrival times until the horizon.
async fn arrivals(shared: Rc<Shared>, r: usize, horizon: Duration) {
    let rates = shared.routes[r].rates.clone();
    let offset = shared.routes[r].offset;
    for (k, (from, per_s)) in rates.iter().enumerate() {
        let to = rates.get(k + 1).map_or(horizon, |(t, _)| *t).min(horizon);
        if !(*per_s > 0.0 && per_s.is_finite()) || *from >= to {
            continue;
        }
        let gap = 1.0 / per_s;
        let start = (*from + offset).as_secs_f64();
        for j in 0u64.. {
            let Ok(at) = Duration::try_from_secs_f64(start + gap * j as f64) else {
                break;
            };
            if at >= to {
                break;
            }
            let when = shared.t0 + at;
            if when > Instant::now() {
                sleep_until(when).await;
            }
            tokio::task::spawn_local(request(shared.clone(), r, nanos(at)));
        }
    }
}

/// Frees the worker however the request ends (also when the run ends with it in flight).
struct Held<'a> {
    shared: &'a Shared,
    route: usize,
}

impl Drop for Held<'_> {
    fn drop(&mut self) {
        self.shared.release(self.route);
    }
}

/// One request: a worker, its work, its call, its fallback.
async fn request(shared: Rc<Shared>, r: usize, arrived: u64) {
    shared.count(r, arrived, |c| c.arrived += 1);
    if !shared.acquire(r, shared.now()) {
        shared.count(r, arrived, |c| c.shed += 1);
        return;
    }
    let _held = Held {
        shared: &shared,
        route: r,
    };
    let route = &shared.routes[r];
    if !route.work.is_zero() {
        sleep(route.work).await;
    }
    let Some(call) = &route.call else {
        shared.count(r, arrived, |c| c.ok += 1);
        shared.answered(r, arrived);
        return;
    };
    let outcome = perform(&shared, r, arrived, call).await;
    if let Some(t) = route.track {
        shared.observe(t);
    }
    match outcome {
        Outcome::Ok => shared.count(r, arrived, |c| c.ok += 1),
        Outcome::Rejected => shared.count(r, arrived, |c| c.rejected += 1),
        Outcome::Failed => shared.count(r, arrived, |c| c.failed += 1),
    }
    if !matches!(outcome, Outcome::Ok) && !call.fallback_cost.is_zero() {
        sleep(call.fallback_cost).await;
    }
    shared.answered(r, arrived);
}

/// The call through the real runtime: the code path `#[breaker]`/`#[bulkhead]` expand to.
async fn perform(shared: &Shared, r: usize, arrived: u64, call: &Call) -> Outcome {
    let track = shared.routes[r].track;
    if let Some(t) = track {
        shared.observe(t);
    }
    let dep = &call.dependency;
    let timeout = call.timeout;
    // Polled only once admitted: seeing the breaker here catches an open→half-open switch.
    let fut = async move {
        if let Some(t) = track {
            shared.observe(t);
        }
        shared.count(r, arrived, |c| c.sent += 1);
        match timeout {
            Some(d) => tokio::time::timeout(d, dep.call())
                .await
                .unwrap_or(Err(SimError::TimedOut)),
            None => dep.call().await,
        }
    };
    let done = crate::__private::run(
        call.breaker.as_ref(),
        call.bulkhead.as_ref(),
        fut,
        |_: &SimError| true,
    )
    .await;
    match done {
        Completion::Ok(()) => Outcome::Ok,
        Completion::Ignored(_) => Outcome::Failed,
        Completion::Failed(Error::Failed(_)) => Outcome::Failed,
        Completion::Failed(Error::Rejected(Rejection::TimedOut { .. })) => Outcome::Failed,
        Completion::Failed(Error::Rejected(_)) => Outcome::Rejected,
    }
}
