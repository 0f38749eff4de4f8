//! The server model: N workers, routes arriving at given rates, each request holding a worker
//! while it works and waits; driven on a paused tokio clock so hours replay in seconds.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::time::Duration;

use tokio::task::LocalSet;

use super::{engine, Dependency, Report, SimError};
use fusebox_runtime::{Breaker, Bulkhead};

/// A call a route makes to a dependency, through an optional breaker and bulkhead.
///
/// Every failed or refused call is answered by a fallback that holds the worker for
/// `fallback_cost` (the lesson's "an open breaker answers in 1 ms").
///
/// ```
/// use std::time::Duration;
/// use fusebox_runtime::{Breaker, Bulkhead};
/// use fusebox_sim::{Call, Dependency, Latency};
/// let reports = Dependency::builder("reports", Latency::fixed(Duration::from_secs(2))).build();
/// let pool = Bulkhead::builder("reports").pool(60).build_detached().unwrap();
/// let call = Call::new(&reports).bulkhead(&pool).timeout(Duration::from_secs(5));
/// # let _ = call;
/// ```
#[derive(Clone)]
pub struct Call {
    pub(super) dependency: Dependency,
    pub(super) breaker: Option<Breaker>,
    pub(super) bulkhead: Option<Bulkhead>,
    pub(super) timeout: Option<Duration>,
    pub(super) fallback_cost: Duration,
    pub(super) function: Option<CallFn>,
    pub(super) watched: Option<Breaker>,
}

/// A user function making the call (for example one annotated with `#[breaker]`).
pub(super) type CallFn =
    Rc<dyn Fn(Dependency) -> Pin<Box<dyn Future<Output = Result<(), SimError>>>>>;

impl fmt::Debug for Call {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Call")
            .field("dependency", &self.dependency.name())
            .field("breaker", &self.breaker)
            .field("bulkhead", &self.bulkhead)
            .field("timeout", &self.timeout)
            .field("fallback_cost", &self.fallback_cost)
            .field("function", &self.function.is_some())
            .field("watched", &self.watched)
            .finish()
    }
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
            function: None,
            watched: None,
        }
    }

    /// A call made by your own async function, given the dependency: for example a function
    /// annotated with `#[breaker]` and `#[bulkhead]`, so a replay runs the generated code.
    /// `Err(SimError::Rejected)` (what `From<Rejection>` gives) counts as refused, any other
    /// `Err` as failed. [`watch`](Self::watch) the breaker it uses to get its timeline.
    ///
    /// ```
    /// use std::time::Duration;
    /// use fusebox_runtime::{Breaker, Error};
    /// use fusebox_sim::{Call, Dependency, Latency, Phase, Route, Server, SimError};
    /// let s = Duration::from_secs;
    /// let dep = Dependency::builder("d", Latency::fixed(Duration::from_millis(10)))
    ///     .phase(s(5), Phase::Refuse)
    ///     .build();
    /// let b = Breaker::builder("d").window_calls(10).open_for(s(60)).build_detached().unwrap();
    /// let through = b.clone();
    /// // What `#[breaker]` on `async fn lookup(dep: Dependency) -> Result<(), SimError>` does.
    /// let call = Call::function(&dep, move |dep| {
    ///     let b = through.clone();
    ///     async move {
    ///         b.call(async move { dep.call().await }).await.map_err(|e| match e {
    ///             Error::Rejected(r) => SimError::from(r),
    ///             Error::Failed(e) => e,
    ///         })
    ///     }
    /// })
    /// .watch(&b);
    /// let r = Server::new(10).route(Route::new("r", 20.0).call(call)).run_for(s(20)).unwrap();
    /// assert!(r.breaker("d").unwrap().first_open_after(s(5)).unwrap() < s(6));
    /// let c = r.route("r").unwrap().counts;
    /// assert!(c.rejected > 250 && c.sent < 120, "{c:?}");
    /// ```
    pub fn function<F, Fut>(dependency: &Dependency, f: F) -> Call
    where
        F: Fn(Dependency) -> Fut + 'static,
        Fut: Future<Output = Result<(), SimError>> + 'static,
    {
        let f: CallFn = Rc::new(move |d| Box::pin(f(d)));
        Call {
            function: Some(f),
            ..Call::new(dependency)
        }
    }
    /// Records this breaker's timeline in the report (for [`function`](Self::function) calls;
    /// a call [`through`](Self::breaker) a breaker is watched already).
    pub fn watch(mut self, b: &Breaker) -> Call {
        self.watched = Some(b.clone());
        self
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
/// use fusebox_sim::Route;
/// // 50 order-status requests a second, 50 ms of work each, no call.
/// let status = Route::new("status", 50.0).work(Duration::from_millis(50));
/// // 20 statements a second, 60 from the 60th second on.
/// let statements = Route::new("statements", 20.0).rate_from(Duration::from_secs(60), 60.0);
/// # let _ = (status, statements);
/// ```
#[derive(Debug, Clone)]
pub struct Route {
    pub(super) name: String,
    pub(super) rates: Vec<(Duration, f64)>,
    pub(super) offset: Duration,
    pub(super) work: Duration,
    pub(super) call: Option<Call>,
    pub(super) patience: Option<Duration>,
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
/// use fusebox_sim::{Call, Dependency, Latency, Phase, Route, Server};
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
    pub(super) workers: usize,
    pub(super) routes: Vec<Route>,
    pub(super) windows: Vec<(String, Duration, Duration)>,
    pub(super) sample: Duration,
    pub(super) settle: Option<(Duration, Duration)>,
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
        // Blocking inside a runtime would panic; say so instead.
        if tokio::runtime::Handle::try_current().is_ok() {
            return Err(std::io::Error::other(
                "Server::run_for runs its own runtime: call it outside of one (e.g. in spawn_blocking)",
            ));
        }
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .start_paused(true)
            .build()?;
        let local = LocalSet::new();
        Ok(local.block_on(&rt, engine::drive(self, horizon)))
    }
}
