//! Running a [`Server`]: the book-keeping of a run and the life of one request, on the
//! current-thread runtime `Server::run_for` builds (hence `Rc` and `RefCell`, not locks).

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use tokio::time::{sleep, sleep_until, Instant};

use super::meter::{Meter, Span};
use super::report::{Counts, Report};
use super::server::{Call, CallFn, Server};
use super::SimError;
use fusebox_runtime::{Breaker, Bulkhead, Error, Rejection, State};

/// Runs `server` to the horizon (or until settled) and reports.
pub(super) async fn drive(server: Server, horizon: Duration) -> Report {
    let t0 = Instant::now();
    let shared = Rc::new(Shared::new(&server, horizon, t0));
    for r in &server.routes {
        if let Some(c) = &r.call {
            c.dependency.start();
        }
    }
    for i in 0..shared.routes.len() {
        tokio::task::spawn_local(arrivals(shared.clone(), i, horizon));
    }
    let end = watch(&shared, &server, horizon).await;
    shared.report(end)
}

/// Sleeps bucket by bucket until the horizon or until the breakers settled; returns the end.
async fn watch(shared: &Rc<Shared>, server: &Server, horizon: Duration) -> u64 {
    let horizon_ns = nanos(horizon);
    let step = server.sample;
    let mut t = Duration::ZERO;
    loop {
        t = (t + step).min(horizon);
        sleep_until(shared.t0 + t).await;
        if let Some(b) = &shared.bulkhead {
            shared.book.borrow_mut().pool.push(b.pool());
        }
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
pub(super) struct RouteRt {
    pub(super) name: String,
    pub(super) work: Duration,
    pub(super) call: Option<Call>,
    pub(super) track: Option<usize>,
    pub(super) rates: Vec<(Duration, f64)>,
    pub(super) offset: Duration,
    pub(super) patience: Option<u64>,
}

/// The breaker's state as last seen, with the transitions seen so far.
pub(super) struct Track {
    pub(super) breaker: Breaker,
    pub(super) last: (State, Instant),
    pub(super) transitions: Vec<(u64, State)>,
}

pub(super) struct Book {
    pub(super) busy: Meter,
    pub(super) route_busy: Vec<Meter>,
    pub(super) counts: Vec<Counts>,
    pub(super) window_counts: Vec<Vec<Counts>>,
    pub(super) bucket_counts: Vec<Counts>,
    pub(super) tracks: Vec<Track>,
    /// The first bulkhead's slots at the end of each bucket.
    pub(super) pool: Vec<usize>,
}

pub(super) struct Shared {
    pub(super) t0: Instant,
    pub(super) workers: u64,
    pub(super) bucket: u64,
    pub(super) spans: Vec<Span>,
    pub(super) window_names: Vec<String>,
    pub(super) routes: Vec<RouteRt>,
    pub(super) book: RefCell<Book>,
    /// The first bulkhead a route calls through, sampled into the series.
    pub(super) bulkhead: Option<Bulkhead>,
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
            let watched = r
                .call
                .as_ref()
                .and_then(|c| c.breaker.as_ref().or(c.watched.as_ref()));
            let track = watched.map(|b| match tracks.iter().position(|t| t.breaker.ptr_eq(b)) {
                Some(i) => i,
                None => {
                    let state = b.state();
                    tracks.push(Track {
                        breaker: b.clone(),
                        last: (state, b.state_since()),
                        transitions: vec![(0, state)],
                    });
                    tracks.len() - 1
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
        let bulkhead = server
            .routes
            .iter()
            .find_map(|r| r.call.as_ref().and_then(|c| c.bulkhead.clone()));
        Shared {
            t0,
            bulkhead,
            workers,
            bucket,
            book: RefCell::new(Book {
                busy: Meter::new(workers, bucket, n_buckets, &spans),
                route_busy: (0..n).map(|_| Meter::new(u64::MAX, 0, 0, &spans)).collect(),
                counts: vec![Counts::default(); n],
                window_counts: vec![vec![Counts::default(); spans.len()]; n],
                bucket_counts: vec![Counts::default(); n_buckets],
                tracks,
                pool: Vec::new(),
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
        let seen = (t.breaker.state(), t.breaker.state_since());
        if seen != t.last {
            t.last = seen;
            let at = seen.1.saturating_duration_since(self.t0);
            t.transitions.push((nanos(at), seen.0));
        }
    }

    pub(super) fn observe_all(&self) {
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
}

/// `area` (level × ns) per ns of `len`: the mean level.
pub(super) fn per(area: f64, len: u64) -> f64 {
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
    let outcome = match &call.function {
        Some(f) => perform_function(&shared, r, arrived, call, f).await,
        None => perform(&shared, r, arrived, call).await,
    };
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

/// A call made by the user's function (an annotated one, say); the dependency tells when
/// it receives the call, so the report still counts what was sent.
async fn perform_function(
    shared: &Rc<Shared>,
    r: usize,
    arrived: u64,
    call: &Call,
    f: &CallFn,
) -> Outcome {
    let track = shared.routes[r].track;
    if let Some(t) = track {
        shared.observe(t);
    }
    let s = shared.clone();
    let tap: Rc<dyn Fn()> = Rc::new(move || {
        if let Some(t) = track {
            s.observe(t);
        }
        s.count(r, arrived, |c| c.sent += 1);
    });
    match f(call.dependency.tapped(tap)).await {
        Ok(()) => Outcome::Ok,
        Err(SimError::Rejected) => Outcome::Rejected,
        Err(_) => Outcome::Failed,
    }
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
    // Every error counts, as in a `#[breaker]` without a `failure` predicate.
    let done = match (&call.breaker, &call.bulkhead) {
        (Some(b), Some(h)) => b.call_in(h, fut).await,
        (Some(b), None) => b.call(fut).await,
        (None, Some(h)) => match h.call(fut).await {
            Ok(r) => r.map_err(Error::Failed),
            Err(r) => Err(Error::Rejected(r)),
        },
        (None, None) => fut.await.map_err(Error::Failed),
    };
    match done {
        Ok(()) => Outcome::Ok,
        Err(Error::Failed(_)) => Outcome::Failed,
        // A timed-out call reached the dependency: a failure of it, not a refusal.
        Err(Error::Rejected(Rejection::TimedOut { .. })) => Outcome::Failed,
        Err(Error::Rejected(_)) => Outcome::Rejected,
    }
}
