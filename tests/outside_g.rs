//! `#[breaker]` and `#[bulkhead]` beside `#[tracing::instrument]`, as a service writes its
//! clients: in either order the breaker still guards the call (it opens and refuses without
//! reaching the dependency) and the user's span still wraps the body, with its fields. The
//! shapes themselves (and their warning-free expansion) are in tests/fixtures (`outside_g`).

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering::SeqCst};
use std::sync::{Arc, Mutex};

use fusebox::{breaker, bulkhead, registry, Rejection, State};
use tracing::span::{Attributes, Id};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;

#[derive(Debug, PartialEq)]
enum DepError {
    Down,
    Rejected(Rejection),
}

impl From<Rejection> for DepError {
    fn from(r: Rejection) -> Self {
        DepError::Rejected(r)
    }
}

/// A dependency per test (tests run in parallel): whether it is down, and the calls it got.
struct Dep {
    down: AtomicBool,
    calls: AtomicU32,
}

impl Dep {
    const fn new() -> Self {
        Dep {
            down: AtomicBool::new(false),
            calls: AtomicU32::new(0),
        }
    }
}

fn dependency(dep: &Dep) -> Result<u32, DepError> {
    tracing::info!("dependency called");
    let n = dep.calls.fetch_add(1, SeqCst) + 1;
    if dep.down.load(SeqCst) {
        Err(DepError::Down)
    } else {
        Ok(n)
    }
}

static OUTER: Dep = Dep::new();
static INNER: Dep = Dep::new();

#[tracing::instrument(fields(region = "eu"))]
#[breaker(
    name = "og-span-outer",
    window_calls = 2,
    min_calls = 2,
    open_for = "1m"
)]
async fn span_outside(order: u32) -> Result<u32, DepError> {
    dependency(&OUTER)
}

#[breaker(
    name = "og-span-inner",
    window_calls = 2,
    min_calls = 2,
    open_for = "1m"
)]
#[tracing::instrument(fields(region = "eu"))]
#[bulkhead(name = "og-span-inner-pool", pool = 4)]
async fn span_inside(order: u32) -> Result<u32, DepError> {
    dependency(&INNER)
}

/// Each event's span path (`outer>inner`) and each new span's recorded fields.
#[derive(Clone, Default)]
struct Seen {
    events: Arc<Mutex<Vec<String>>>,
    spans: Arc<Mutex<Vec<String>>>,
}

impl<S: tracing::Subscriber + for<'a> LookupSpan<'a>> Layer<S> for Seen {
    fn on_new_span(&self, attrs: &Attributes<'_>, _: &Id, _: Context<'_, S>) {
        struct Fields(String);
        impl tracing::field::Visit for Fields {
            fn record_debug(&mut self, f: &tracing::field::Field, v: &dyn std::fmt::Debug) {
                self.0 += &format!(" {}={v:?}", f.name());
            }
        }
        let mut fields = Fields(attrs.metadata().name().to_owned());
        attrs.record(&mut fields);
        self.spans.lock().unwrap().push(fields.0);
    }

    fn on_event(&self, event: &tracing::Event<'_>, ctx: Context<'_, S>) {
        let path: Vec<_> = ctx
            .event_scope(event)
            .into_iter()
            .flat_map(|s| s.from_root())
            .map(|s| s.name().to_owned())
            .collect();
        self.events.lock().unwrap().push(path.join(">"));
    }
}

/// Two failures open the breaker; the next call is refused without reaching the dependency,
/// and the body's event was inside the user's span with its fields.
async fn guarded_and_traced<F, Fut>(name: &str, span: &str, dep: &Dep, call: F)
where
    F: Fn(u32) -> Fut,
    Fut: std::future::Future<Output = Result<u32, DepError>>,
{
    let seen = Seen::default();
    let subscriber = tracing_subscriber::registry().with(seen.clone());
    let _default = tracing::subscriber::set_default(subscriber);
    dep.down.store(false, SeqCst);
    assert_eq!(call(7).await, Ok(1));
    assert_eq!(*seen.events.lock().unwrap(), vec![span.to_owned()]);
    assert!(
        seen.spans
            .lock()
            .unwrap()
            .contains(&format!("{span} order=7 region=\"eu\"")),
        "{:?}",
        seen.spans
    );
    dep.down.store(true, SeqCst);
    assert_eq!(call(1).await, Err(DepError::Down));
    // The window (2 calls) now holds one success and one failure: 50 %, the default rate.
    assert_eq!(
        registry().breaker(name).expect("listed").state(),
        State::Open
    );
    dep.down.store(false, SeqCst);
    let before = dep.calls.load(SeqCst);
    assert!(matches!(
        call(3).await,
        Err(DepError::Rejected(Rejection::Open { .. }))
    ));
    assert_eq!(
        dep.calls.load(SeqCst),
        before,
        "{name}: refused, yet called"
    );
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn instrument_above_the_breaker_keeps_the_span_and_the_guard() {
    guarded_and_traced("og-span-outer", "span_outside", &OUTER, span_outside).await;
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn instrument_between_breaker_and_bulkhead_keeps_the_span_and_both_guards() {
    guarded_and_traced("og-span-inner", "span_inside", &INNER, span_inside).await;
    let pool = registry().bulkhead("og-span-inner-pool").expect("listed");
    assert_eq!(pool.metrics().in_flight, 0, "every permit given back");
}
