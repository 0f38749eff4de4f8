//! Each attempt a call of its own: a failing fn retried until it succeeds (its by-value
//! arguments cloned per attempt), `#[retry]` alone, and methods and generics through a bulkhead.

use super::*;

static FLAKY: AtomicU32 = AtomicU32::new(0);

/// By-value `String`: cloned for each attempt, so every attempt sees it whole.
#[retry(attempts = 3, backoff = "10ms")]
#[breaker(name = "rt-flaky")]
async fn flaky(label: String) -> Result<u32, DepError> {
    let n = FLAKY.fetch_add(1, Relaxed) + 1;
    assert_eq!(
        label, "order-7",
        "each attempt gets its own copy of the argument"
    );
    drop(label);
    outcome(n, 3)
}

#[tokio::test(start_paused = true)]
async fn a_failing_fn_is_retried_until_it_succeeds() {
    assert_eq!(flaky("order-7".to_owned()).await.unwrap(), 3);
    assert_eq!(FLAKY.load(Relaxed), 3);
    let b = registry().breaker("rt-flaky").unwrap();
    assert_eq!(b.metrics().failed, 2, "each attempt is a call of its own");
    let m = fusebox::metrics();
    let r = m.retry("rt-flaky").unwrap();
    assert_eq!((r.calls, r.retries), (1, 2));
}

static ALONE: AtomicU32 = AtomicU32::new(0);

/// Alone, every `Err` of the body is retried; a reference argument is copied.
#[retry(attempts = 4, backoff = "5ms")]
async fn alone(what: &str) -> Result<String, String> {
    let n = ALONE.fetch_add(1, Relaxed) + 1;
    if n < 4 {
        return Err(format!("{what} failed"));
    }
    Ok(format!("{what} #{n}"))
}

#[tokio::test(start_paused = true)]
async fn alone_it_retries_the_fns_errors() {
    assert_eq!(alone("fetch").await.unwrap(), "fetch #4");
}

struct Client {
    calls: AtomicU32,
}

impl Client {
    /// A generic method with a bulkhead: each attempt takes (and gives back) a slot.
    #[bulkhead(pool = 1, name = "rt-method")]
    #[retry(attempts = 2, backoff = "1ms")]
    async fn get<T: Clone + Send>(&self, v: T) -> Result<T, DepError> {
        if self.calls.fetch_add(1, Relaxed) == 0 {
            return Err(DepError::Down);
        }
        Ok(v)
    }
}

#[tokio::test(start_paused = true)]
async fn methods_and_generics_retry_through_the_bulkhead() {
    let c = Client {
        calls: AtomicU32::new(0),
    };
    assert_eq!(c.get(vec![1, 2]).await.unwrap(), vec![1, 2]);
    assert_eq!(c.calls.load(Relaxed), 2);
    assert_eq!(registry().bulkhead("rt-method").unwrap().in_flight(), 0);
    let m = fusebox::metrics();
    assert_eq!(m.retry("rt-method").unwrap().retries, 1);
}

static SLOW_ATTEMPTS: AtomicU32 = AtomicU32::new(0);

/// No `timeout` bounds an attempt: only `total` does.
#[retry(attempts = 5, backoff = "10ms", total = "1s")]
#[breaker(name = "rt-total")]
async fn slow_then_failing() -> Result<u32, DepError> {
    let n = SLOW_ATTEMPTS.fetch_add(1, Relaxed) + 1;
    tokio::time::sleep(Duration::from_millis(900)).await;
    outcome(n, 10)
}

#[tokio::test(start_paused = true)]
async fn total_is_a_deadline_even_without_a_timeout() {
    let started = tokio::time::Instant::now();
    assert_eq!(slow_then_failing().await, Err(DepError::Down));
    assert_eq!(
        started.elapsed(),
        Duration::from_secs(1),
        "returned at `total`"
    );
    assert_eq!(
        SLOW_ATTEMPTS.load(Relaxed),
        2,
        "the retry started, and was dropped"
    );
    let m = registry().breaker("rt-total").unwrap().metrics();
    assert_eq!(
        (m.failed, m.cancelled),
        (1, 1),
        "the dropped retry is no failure"
    );
}
