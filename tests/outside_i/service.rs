//! The service, as its author writes it: the payment provider's client behind each breaker
//! line, the checkout whose every request holds a database connection, and the payment
//! dependency.

use super::*;

/// The payment provider's client.
pub(crate) struct Payments {
    pub(crate) client: reqwest::Client,
    pub(crate) url: String,
}

impl Payments {
    async fn verify(&self) -> Result<Verification, PayError> {
        self.client
            .get(&self.url)
            .send()
            .await?
            .error_for_status()?
            .text()
            .await?;
        Ok(Verification::Verified)
    }
}

// The design card's line.
#[breaker(name = "outside-i-card", trip_p95 = "300ms", timeout = "2s", fallback = confirm_by_email)]
#[bulkhead(pool = 5, name = "outside-i-card-pool")]
async fn verify_card(pay: &Payments) -> Result<Verification, PayError> {
    pay.verify().await
}

// The dependency's timeout and nothing else: every other setting is fusebox's default.
#[breaker(name = "outside-i-defaults", timeout = "2s", fallback = confirm_by_email)]
#[bulkhead(pool = 5, name = "outside-i-defaults-pool")]
async fn verify_defaults(pay: &Payments) -> Result<Verification, PayError> {
    pay.verify().await
}

// The card's line with an adaptive limit, not told the pool.
#[breaker(name = "outside-i-adaptive", trip_p95 = "300ms", timeout = "2s", fallback = confirm_by_email)]
#[bulkhead(limit = "adaptive", name = "outside-i-adaptive-pool")]
async fn verify_adaptive(pay: &Payments) -> Result<Verification, PayError> {
    pay.verify().await
}

#[derive(Clone, Copy, Debug)]
pub(crate) enum Variant {
    Card,
    Defaults,
    /// The card's line with `limit = "adaptive"` in place of the pool of 5.
    Adaptive,
}

impl Variant {
    pub(crate) fn breaker(self) -> &'static str {
        match self {
            Variant::Card => "outside-i-card",
            Variant::Defaults => "outside-i-defaults",
            Variant::Adaptive => "outside-i-adaptive",
        }
    }

    async fn verify(self, pay: &Payments) -> Result<Verification, PayError> {
        match self {
            Variant::Card => verify_card(pay).await,
            Variant::Defaults => verify_defaults(pay).await,
            Variant::Adaptive => verify_adaptive(pay).await,
        }
    }
}

pub(crate) struct Shop {
    /// The 20 database connections every request holds for its whole duration.
    pub(crate) db: Semaphore,
    pub(crate) pay: Payments,
    pub(crate) variant: Variant,
    pub(crate) orders: AtomicU64,
}

/// Holds a connection 2-5 ms; no payment call.
pub(crate) async fn orders(Shared(shop): Shared<Arc<Shop>>) -> &'static str {
    let _conn = shop.db.acquire().await.expect("the pool is never closed");
    let n = shop.orders.fetch_add(1, Relaxed);
    sleep(ms(2 + n % 4)).await;
    "orders"
}

pub(crate) async fn checkout(Shared(shop): Shared<Arc<Shop>>) -> (StatusCode, &'static str) {
    let _conn = shop.db.acquire().await.expect("the pool is never closed");
    match shop.variant.verify(&shop.pay).await {
        Ok(Verification::Verified) => (StatusCode::OK, "verified"),
        Ok(Verification::WillConfirmByEmail) => (StatusCode::OK, "email"),
        // The fallback answers every failure and refusal: never expected here.
        Err(PayError::Http(e)) => {
            eprintln!("checkout failed: {e}");
            (StatusCode::INTERNAL_SERVER_ERROR, "error")
        }
        Err(PayError::Unavailable(r)) => {
            eprintln!("checkout refused: {r}");
            (StatusCode::SERVICE_UNAVAILABLE, "refused")
        }
    }
}

/// The payment dependency: answers after the delay of the moment, in milliseconds.
pub(crate) async fn pay(Shared(delay): Shared<Arc<AtomicU64>>) -> &'static str {
    sleep(ms(delay.load(Relaxed))).await;
    "paid"
}

pub(crate) async fn serve(app: Router) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{addr}")
}
