//! `stale_for`: the last good value per arguments, served on a rejection or a counted failure,
//! driven on a paused clock and checked through the breaker's metrics.

mod common;

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering::SeqCst};
use std::time::Duration;

use common::{counts, DepError};
use fusebox::{breaker, registry, Error, Rejection, Stale, State};
use tokio::time::{advance, sleep};

const MIN: Duration = Duration::from_secs(60);

/// A dependency whose answers change with every call, so a stale answer is recognisable.
struct Dep {
    up: AtomicBool,
    calls: AtomicU32,
}

impl Dep {
    const fn new() -> Dep {
        Dep {
            up: AtomicBool::new(true),
            calls: AtomicU32::new(0),
        }
    }
    fn set_up(&self, up: bool) {
        self.up.store(up, SeqCst);
    }
    fn answer(&self, item: &str) -> Result<String, DepError> {
        let n = self.calls.fetch_add(1, SeqCst) + 1;
        if self.up.load(SeqCst) {
            Ok(format!("{item}#{n}"))
        } else {
            Err(DepError::Down)
        }
    }
    fn calls(&self) -> u32 {
        self.calls.load(SeqCst)
    }
}

fn stale_served(name: &str) -> u64 {
    registry().breaker(name).unwrap().metrics().stale_served
}

static PRICES: Dep = Dep::new();

#[breaker(
    name = "stale-prices",
    window_calls = 2,
    open_for = "30s",
    stale_for = "10m"
)]
async fn price(item: &str) -> Result<String, DepError> {
    PRICES.answer(item)
}

#[tokio::test(start_paused = true)]
async fn the_last_good_value_is_served_while_open_and_counted() {
    assert_eq!(price("apple").await, Ok("apple#1".into()));
    PRICES.set_up(false);
    // One failure in the last two calls is 50 %: the breaker opens, and the failed call is
    // answered with the last good value.
    assert_eq!(price("apple").await, Ok("apple#1".into()));
    let b = registry().breaker("stale-prices").unwrap();
    assert_eq!(b.state(), State::Open);
    let m = b.metrics();
    assert_eq!((m.failed, m.stale_served), (1, 1));
    // Open: the dependency is not called, and the answer is still the last good one.
    let before = PRICES.calls();
    for _ in 0..3 {
        assert_eq!(price("apple").await, Ok("apple#1".into()));
    }
    assert_eq!(PRICES.calls(), before);
    let m = b.metrics();
    assert_eq!((m.rejected, m.stale_served), (3, 4));
}

static QUOTES: Dep = Dep::new();

#[breaker(name = "stale-quotes", stale_for = "10m", fallback = no_quote)]
async fn quote(item: &str) -> Result<String, DepError> {
    QUOTES.answer(item)
}

fn no_quote(err: Error<DepError>) -> Result<String, DepError> {
    match err {
        Error::Rejected(Rejection::Open { .. }) => Ok("no quote (open)".into()),
        _ => Ok("no quote".into()),
    }
}

#[tokio::test(start_paused = true)]
async fn a_value_older_than_stale_for_falls_to_the_fallback() {
    assert_eq!(quote("pear").await, Ok("pear#1".into()));
    let b = registry().breaker("stale-quotes").unwrap();
    b.force_open();
    advance(10 * MIN - Duration::from_millis(1)).await;
    assert_eq!(quote("pear").await, Ok("pear#1".into()), "just younger");
    advance(Duration::from_millis(1)).await;
    assert_eq!(quote("pear").await, Ok("no quote (open)".into()), "10m old");
    assert_eq!(b.metrics().stale_served, 1);
    // Closed again, a fresh value starts a new ten minutes.
    b.force_close();
    assert_eq!(quote("pear").await, Ok("pear#2".into()));
    b.force_open();
    assert_eq!(quote("pear").await, Ok("pear#2".into()));
}

static STOCK: Dep = Dep::new();

#[breaker(name = "stale-stock", stale_for = "10m")]
async fn stock(warehouse: u32, item: String) -> Result<String, DepError> {
    STOCK.answer(&format!("{warehouse}/{item}"))
}

#[tokio::test(start_paused = true)]
async fn values_are_kept_per_arguments_and_never_mixed() {
    assert_eq!(stock(1, "nut".into()).await, Ok("1/nut#1".into()));
    assert_eq!(stock(2, "nut".into()).await, Ok("2/nut#2".into()));
    assert_eq!(stock(1, "bolt".into()).await, Ok("1/bolt#3".into()));
    registry().breaker("stale-stock").unwrap().force_open();
    assert_eq!(stock(2, "nut".into()).await, Ok("2/nut#2".into()));
    assert_eq!(stock(1, "bolt".into()).await, Ok("1/bolt#3".into()));
    assert_eq!(stock(1, "nut".into()).await, Ok("1/nut#1".into()));
    // Never seen: nothing to serve, so the rejection as before.
    match stock(2, "bolt".into()).await {
        Err(DepError::Unavailable(Rejection::Open { state, .. })) => {
            assert_eq!(state, State::ForcedOpen)
        }
        other => panic!("expected the rejection, got {other:?}"),
    }
    assert_eq!(stale_served("stale-stock"), 3);
}

static LOOKUPS: Dep = Dep::new();

#[breaker(name = "stale-capacity", stale_for = "10m", stale_capacity = 2)]
async fn lookup(id: u32) -> Result<String, DepError> {
    LOOKUPS.answer(&id.to_string())
}

#[tokio::test(start_paused = true)]
async fn the_capacity_bound_evicts_the_least_recently_used() {
    let b = registry().breaker("stale-capacity");
    assert!(b.is_some(), "listed from the start, before the first call");
    assert_eq!(lookup(1).await, Ok("1#1".into()));
    assert_eq!(lookup(2).await, Ok("2#2".into()));
    let b = registry().breaker("stale-capacity").unwrap();
    // Served once, 1 is now more recently used than 2.
    b.force_open();
    assert_eq!(lookup(1).await, Ok("1#1".into()));
    b.force_close();
    // A third value: 2 is evicted, the two most recently used stay.
    assert_eq!(lookup(3).await, Ok("3#3".into()));
    b.force_open();
    assert!(lookup(2).await.unwrap_err().is_open(), "evicted");
    assert_eq!(lookup(1).await, Ok("1#1".into()));
    assert_eq!(lookup(3).await, Ok("3#3".into()));
}

static ACCOUNTS: Dep = Dep::new();
static ACCOUNTS_SLOW: AtomicBool = AtomicBool::new(false);
static ACCOUNTS_CLOSED: AtomicBool = AtomicBool::new(false);

#[breaker(
    name = "stale-accounts",
    timeout = "1s",
    failure = counts,
    stale_for = "5m"
)]
async fn account(id: &str) -> Result<String, DepError> {
    if ACCOUNTS_CLOSED.load(SeqCst) {
        return Err(DepError::NotFound);
    }
    if ACCOUNTS_SLOW.load(SeqCst) {
        sleep(Duration::from_secs(2)).await;
    }
    ACCOUNTS.answer(id)
}

#[tokio::test(start_paused = true)]
async fn counted_failures_and_timeouts_serve_stale_but_uncounted_errors_do_not() {
    assert_eq!(account("ada").await, Ok("ada#1".into()));
    ACCOUNTS.set_up(false);
    // Breaker closed: a counted failure is answered with the last good value.
    assert_eq!(account("ada").await, Ok("ada#1".into()));
    let m = registry().breaker("stale-accounts").unwrap().metrics();
    assert_eq!((m.state, m.failed, m.stale_served), (State::Closed, 1, 1));
    // A timeout is a counted failure too.
    ACCOUNTS_SLOW.store(true, SeqCst);
    let call = tokio::spawn(account("ada"));
    advance(Duration::from_secs(1)).await;
    assert_eq!(call.await.unwrap(), Ok("ada#1".into()));
    let m = registry().breaker("stale-accounts").unwrap().metrics();
    assert_eq!((m.timed_out, m.stale_served), (1, 2));
    // `failure = counts`: NotFound is the dependency answering, returned as is, never stale.
    ACCOUNTS_SLOW.store(false, SeqCst);
    ACCOUNTS.set_up(true);
    assert_eq!(account("ada").await, Ok("ada#3".into()));
    ACCOUNTS_CLOSED.store(true, SeqCst);
    assert_eq!(account("ada").await, Err(DepError::NotFound));
    let m = registry().breaker("stale-accounts").unwrap().metrics();
    // Counted a success (the dependency answered), not an ignored call.
    assert_eq!((m.succeeded, m.ignored, m.stale_served), (3, 0, 2));
}

static WEATHER: Dep = Dep::new();

#[breaker(name = "stale-weather", stale_for = "10m", stale_fallback = as_of)]
async fn weather(city: &str) -> Result<String, DepError> {
    WEATHER.answer(city)
}

/// A fallback that wants the age: it says how old the answer is.
fn as_of(stale: Stale<String>, err: Error<DepError>) -> Result<String, DepError> {
    let why = match err {
        Error::Rejected(_) => "rejected",
        Error::Failed(_) => "failed",
    };
    Ok(format!(
        "{} ({}s old, {why})",
        stale.value,
        stale.age.as_secs()
    ))
}

#[tokio::test(start_paused = true)]
async fn stale_fallback_sees_the_age_of_the_value_and_why() {
    assert_eq!(weather("oslo").await, Ok("oslo#1".into()));
    advance(3 * MIN).await;
    WEATHER.set_up(false);
    assert_eq!(
        weather("oslo").await,
        Ok("oslo#1 (180s old, failed)".into())
    );
    registry().breaker("stale-weather").unwrap().force_open();
    advance(MIN).await;
    assert_eq!(
        weather("oslo").await,
        Ok("oslo#1 (240s old, rejected)".into())
    );
    assert_eq!(stale_served("stale-weather"), 2);
    // Nothing kept for this city: without `fallback`, the error as before.
    assert!(weather("rome").await.unwrap_err().is_open());
}

#[derive(Debug, Clone, PartialEq)]
struct Request {
    user: u64,
    /// Not `Hash`, and not part of the key.
    deadline: f64,
}

static PROFILES: Dep = Dep::new();

#[breaker(name = "stale-profiles", stale_key = req.user, stale_for = "1m")]
async fn profile(req: Request) -> Result<String, DepError> {
    let _ = req.deadline;
    PROFILES.answer(&req.user.to_string())
}

#[tokio::test(start_paused = true)]
async fn stale_key_chooses_the_key() {
    let req = |user, deadline| Request { user, deadline };
    assert_eq!(profile(req(7, 0.5)).await, Ok("7#1".into()));
    registry().breaker("stale-profiles").unwrap().force_open();
    assert_eq!(profile(req(7, 9.0)).await, Ok("7#1".into()), "same user");
    assert!(profile(req(8, 0.5)).await.unwrap_err().is_open());
}

/// Not a `Result`: the fallback answers when no good value is kept.
#[derive(Debug, Clone, PartialEq)]
enum Banner {
    Live(String),
    Default,
}

static BANNERS: Dep = Dep::new();

#[breaker(name = "stale-banner", stale_for = "10m", fallback = default_banner)]
async fn banner(page: u8) -> Banner {
    Banner::Live(BANNERS.answer(&page.to_string()).unwrap_or_default())
}

fn default_banner(_: Error<std::convert::Infallible>) -> Banner {
    Banner::Default
}

#[tokio::test(start_paused = true)]
async fn a_non_result_function_serves_stale_before_its_fallback() {
    assert_eq!(banner(1).await, Banner::Live("1#1".into()));
    registry().breaker("stale-banner").unwrap().force_open();
    assert_eq!(banner(1).await, Banner::Live("1#1".into()));
    assert_eq!(banner(2).await, Banner::Default);
}

static GENERIC: Dep = Dep::new();

#[breaker(name = "stale-generic", stale_for = "10m")]
async fn describe<T: std::fmt::Display + Clone + std::hash::Hash + Eq + Send + 'static>(
    what: T,
) -> Result<String, DepError> {
    GENERIC.answer(&what.to_string())
}

#[tokio::test(start_paused = true)]
async fn each_instantiation_of_a_generic_function_keeps_its_own_values() {
    assert_eq!(describe(1u8).await, Ok("1#1".into()));
    assert_eq!(describe("1".to_owned()).await, Ok("1#2".into()));
    registry().breaker("stale-generic").unwrap().force_open();
    assert_eq!(describe(1u8).await, Ok("1#1".into()));
    assert_eq!(describe("1".to_owned()).await, Ok("1#2".into()));
    assert!(describe(1u16).await.unwrap_err().is_open(), "never seen");
}

struct Client {
    tenant: &'static str,
    dep: Dep,
}

impl Client {
    // A method must name its stale key: the default one cannot see `self.tenant`.
    #[breaker(name = "stale-client", key = self.tenant, stale_for = "10m", stale_key = (self.tenant, path))]
    async fn get(&self, path: &str) -> Result<String, DepError> {
        self.dep.answer(&format!("{}{path}", self.tenant))
    }

    // Even a stale key that forgets the tenant cannot leak: the breaker's own key
    // (`stale-forgetful/eu`) is always part of it.
    #[breaker(name = "stale-forgetful", key = self.tenant, stale_for = "10m", stale_key = path)]
    async fn forgetful(&self, path: &str) -> Result<String, DepError> {
        self.dep.answer(&format!("{}{path}", self.tenant))
    }
}

#[tokio::test(start_paused = true)]
async fn one_tenants_last_good_value_is_never_served_to_another() {
    let a = Client {
        tenant: "eu",
        dep: Dep::new(),
    };
    let b = Client {
        tenant: "us",
        dep: Dep::new(),
    };
    assert_eq!(a.get("/x").await, Ok("eu/x#1".into()));
    assert_eq!(a.forgetful("/x").await, Ok("eu/x#2".into()));
    for name in ["stale-client", "stale-forgetful"] {
        // Open for tenant `us` (registered on its first call, then forced open).
        let _ = registry().keyed(&fusebox::Breaker::builder(name).config().unwrap(), &"us");
        registry()
            .breaker(&format!("{name}/us"))
            .unwrap()
            .force_open();
    }
    // Tenant `us` asks for the same path while its breaker is open: the rejection, not eu's value.
    assert!(b.get("/x").await.unwrap_err().is_open());
    assert!(b.forgetful("/x").await.unwrap_err().is_open());
    assert_eq!(stale_served("stale-client/us"), 0);
    // Tenant `eu` still gets its own.
    registry().breaker("stale-client/eu").unwrap().force_open();
    assert_eq!(a.get("/x").await, Ok("eu/x#1".into()));
}

/// A free function keyed by tenant, whose stale key leaves the tenant out.
static ORDERS: Dep = Dep::new();

#[breaker(name = "stale-orders", key = tenant, stale_for = "10m", stale_key = order)]
async fn order_status(tenant: &str, order: u32) -> Result<String, DepError> {
    ORDERS.answer(&format!("{tenant}:{order}"))
}

#[tokio::test(start_paused = true)]
async fn the_breakers_key_is_always_part_of_the_stale_key() {
    assert_eq!(order_status("acme", 7).await, Ok("acme:7#1".into()));
    let template = fusebox::Breaker::builder("stale-orders").config().unwrap();
    registry().keyed(&template, &"globex").force_open();
    assert!(
        order_status("globex", 7).await.unwrap_err().is_open(),
        "no acme value for globex"
    );
    registry().keyed(&template, &"acme").force_open();
    assert_eq!(order_status("acme", 7).await, Ok("acme:7#1".into()));
}

static BIG: Dep = Dep::new();

#[breaker(name = "stale-bytes", stale_for = "10m", stale_max_bytes = 1000)]
async fn big(id: u32) -> Result<String, DepError> {
    BIG.answer(&id.to_string())
}

#[tokio::test(start_paused = true)]
async fn stale_max_bytes_bounds_the_cache_by_weight() {
    // Each entry weighs its key and value in memory plus 128 bytes of bookkeeping: ~156 bytes,
    // so 1000 bytes keep the six most recently used.
    for id in 0..20 {
        big(id).await.unwrap();
    }
    registry().breaker("stale-bytes").unwrap().force_open();
    assert!(big(0).await.unwrap_err().is_open(), "evicted by weight");
    assert_eq!(big(19).await, Ok("19#20".into()));
}

#[cfg(feature = "testing")]
mod scoped {
    use super::*;
    use fusebox::testing;

    static NEWS: Dep = Dep::new();

    #[breaker(name = "stale-scoped", stale_for = "10m")]
    async fn news(topic: &str) -> Result<String, DepError> {
        NEWS.answer(topic)
    }

    #[tokio::test(start_paused = true)]
    async fn a_test_scope_keeps_its_own_last_good_values() {
        {
            let _scope = testing::scope();
            assert_eq!(news("rust").await, Ok("rust#1".into()));
            registry().breaker("stale-scoped").unwrap().force_open();
            assert_eq!(news("rust").await, Ok("rust#1".into()));
        }
        // A new scope sees neither the open breaker nor the value kept in the first one.
        let _scope = testing::scope();
        NEWS.set_up(false);
        assert_eq!(news("rust").await, Err(DepError::Down));
        assert_eq!(testing::metrics_of("stale-scoped").unwrap().stale_served, 0);
    }
}
