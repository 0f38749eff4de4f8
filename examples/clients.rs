//! Annotated client functions the way a service writes them, run against in-process fakes on a
//! paused clock (virtual time: the outage below takes a minute and runs in milliseconds).
//!
//! `cargo run --example clients`

use std::time::Duration;

use fusebox::{metrics, registry, State};
use tokio::time::advance;

/// The service's clients: one breaker (and one bulkhead) per dependency.
mod clients {
    use fusebox::{breaker, bulkhead, Error, Rejection};

    use crate::fakes::{AddressBook, Cache, Gateway};

    #[derive(Debug)]
    pub struct Order {
        pub id: u32,
        pub cents: u64,
    }

    #[derive(Debug, PartialEq)]
    pub enum Verification {
        Verified,
        Declined,
        /// The degraded answer: the order goes through and payment is confirmed later.
        WillConfirmByEmail,
    }

    #[derive(Debug)]
    pub enum PayError {
        Gateway(String),
        Unavailable(Rejection),
    }

    impl From<Rejection> for PayError {
        fn from(r: Rejection) -> Self {
            PayError::Unavailable(r)
        }
    }

    pub struct Payments {
        pub gateway: Gateway,
    }

    impl Payments {
        /// A slow gateway is as bad as a down one: trip on p95 latency, not only on errors.
        #[breaker(
            name = "payments",
            trip_p95 = "500ms",
            timeout = "800ms",
            window_calls = 20,
            open_for = "10s",
            half_open_pct = 50,
            half_open_window = "2s",
            fallback = confirm_by_email
        )]
        #[bulkhead(pool = 60)]
        pub async fn verify_payment(&self, order: &Order) -> Result<Verification, PayError> {
            self.gateway
                .verify(order.cents)
                .await
                .map_err(PayError::Gateway)
        }
    }

    fn confirm_by_email(err: Error<PayError>) -> Result<Verification, PayError> {
        tracing::warn!(%err, "payment verification degraded");
        Ok(Verification::WillConfirmByEmail)
    }

    impl std::fmt::Display for PayError {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            match self {
                PayError::Gateway(e) => write!(f, "gateway: {e}"),
                PayError::Unavailable(r) => write!(f, "{r}"),
            }
        }
    }

    /// Not a `Result`: the page renders without an address rather than failing.
    #[breaker(name = "address-lookup", timeout = "300ms", fallback = no_address)]
    pub async fn lookup_address(book: &AddressBook, customer: u32) -> String {
        book.find(customer).await
    }

    fn no_address(_: Error<std::convert::Infallible>) -> String {
        "(address unavailable)".to_owned()
    }

    #[derive(Debug)]
    pub enum CacheError {
        Down,
        Unavailable(Rejection),
    }

    impl From<Rejection> for CacheError {
        fn from(r: Rejection) -> Self {
            CacheError::Unavailable(r)
        }
    }

    /// One breaker per shard: shard 3 down must not stop reads from shard 4.
    #[breaker(name = "redis", key = shard, window_calls = 5, open_for = "5s")]
    pub async fn cache_get(
        cache: &Cache,
        shard: u16,
        key: &str,
    ) -> Result<Option<String>, CacheError> {
        cache.get(shard, key).await.map_err(|()| CacheError::Down)
    }
}

/// In-process dependencies whose latency and health the scenario changes.
mod fakes {
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
    use std::time::Duration;

    use tokio::time::sleep;

    use crate::clients::Verification;

    #[derive(Default)]
    pub struct Gateway {
        pub latency_ms: AtomicU64,
    }

    impl Gateway {
        pub async fn verify(&self, cents: u64) -> Result<Verification, String> {
            sleep(Duration::from_millis(self.latency_ms.load(Relaxed))).await;
            Ok(if cents > 1_000_000 {
                Verification::Declined
            } else {
                Verification::Verified
            })
        }
    }

    #[derive(Default)]
    pub struct AddressBook {
        pub hung: AtomicBool,
    }

    impl AddressBook {
        pub async fn find(&self, customer: u32) -> String {
            if self.hung.load(Relaxed) {
                sleep(Duration::from_secs(60)).await;
            }
            format!("{customer} Main St")
        }
    }

    #[derive(Default)]
    pub struct Cache {
        pub down_shard: AtomicU64,
    }

    impl Cache {
        pub async fn get(&self, shard: u16, key: &str) -> Result<Option<String>, ()> {
            sleep(Duration::from_millis(1)).await;
            if u64::from(shard) == self.down_shard.load(Relaxed) {
                Err(())
            } else {
                Ok(Some(format!("{key}@{shard}")))
            }
        }
    }
}

use clients::{cache_get, lookup_address, Order, Payments, Verification};
use std::sync::atomic::Ordering::Relaxed;

async fn pay_round(payments: &Payments, n: u32) -> (u32, u32) {
    let (mut verified, mut by_email) = (0, 0);
    for id in 0..n {
        let order = Order { id, cents: 4_200 };
        match payments.verify_payment(&order).await {
            Ok(Verification::Verified) => verified += 1,
            Ok(Verification::WillConfirmByEmail) => by_email += 1,
            other => println!("  order {}: {other:?}", order.id),
        }
    }
    (verified, by_email)
}

#[tokio::main(flavor = "current_thread", start_paused = true)]
async fn main() {
    let payments = Payments {
        gateway: fakes::Gateway::default(),
    };
    payments.gateway.latency_ms.store(40, Relaxed);
    let (ok, email) = pay_round(&payments, 20).await;
    println!("gateway healthy (40 ms):  {ok} verified, {email} by email");

    // The gateway answers, but at 600 ms: more than 5 % slower than 500 ms trips `trip_p95`.
    payments.gateway.latency_ms.store(600, Relaxed);
    let (ok, email) = pay_round(&payments, 20).await;
    let state = registry().breaker("payments").map(|b| b.state());
    println!("gateway slow (600 ms):    {ok} verified, {email} by email; breaker {state:?}");

    payments.gateway.latency_ms.store(40, Relaxed);
    advance(Duration::from_secs(10)).await;
    let (ok, email) = pay_round(&payments, 40).await;
    let state = registry().breaker("payments").map(|b| b.state());
    println!("recovered, half-open 50 %: {ok} verified, {email} by email; breaker {state:?}");
    advance(Duration::from_secs(2)).await;
    let (ok, email) = pay_round(&payments, 20).await;
    let state = registry().breaker("payments").map(|b| b.state());
    println!("after the half-open window: {ok} verified, {email} by email; breaker {state:?}");
    assert_eq!(state, Some(State::Closed));

    let book = fakes::AddressBook::default();
    println!("address: {}", lookup_address(&book, 7).await);
    book.hung.store(true, Relaxed);
    println!(
        "address (lookup hung):   {}",
        lookup_address(&book, 7).await
    );

    let cache = fakes::Cache::default();
    cache.down_shard.store(3, Relaxed);
    for _ in 0..5 {
        let _ = cache_get(&cache, 3, "session:1").await;
    }
    let shard3 = cache_get(&cache, 3, "session:1").await;
    let shard4 = cache_get(&cache, 4, "session:2").await;
    match shard3 {
        Err(clients::CacheError::Unavailable(r)) => println!("redis/3: rejected: {r}"),
        other => println!("redis/3: {other:?}"),
    }
    println!("redis/4: {shard4:?}");

    println!(
        "\n{:<16} {:<10} {:>6} {:>6} {:>6} {:>9}",
        "breaker", "state", "calls", "failed", "slow", "rejected"
    );
    for b in metrics().breakers {
        println!(
            "{:<16} {:<10} {:>6} {:>6} {:>6} {:>9}",
            b.name,
            format!("{:?}", b.state),
            b.calls,
            b.failures(),
            b.slow,
            b.rejected
        );
    }
}
