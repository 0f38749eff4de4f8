use fusebox::{breaker, bulkhead, Error, Rejection};

#[derive(Debug)]
pub enum MyError {
    NotFound,
    Unavailable(Rejection),
}

impl From<Rejection> for MyError {
    fn from(r: Rejection) -> Self {
        MyError::Unavailable(r)
    }
}

pub struct Shard {
    id: u16,
}

impl Shard {
    #[breaker(name = "cache", key = self.id, window_calls = 10)]
    pub async fn get(&self, k: &str) -> Result<Option<String>, MyError> {
        Ok(Some(k.to_owned()))
    }
}

#[breaker(name = "by-host", key = host)]
async fn fetch(host: &str, path: String) -> Result<String, MyError> {
    Ok(format!("{host}{path}"))
}

#[bulkhead(pool = 4)]
async fn limited() -> Result<u8, MyError> {
    Ok(1)
}

#[bulkhead(pool = 4, max_wait = "10ms", name = "reports")]
async fn report() -> Result<u8, MyError> {
    Ok(1)
}

#[breaker(name = "both-breaker-first", trip_p95 = "500ms")]
#[bulkhead(pool = 60)]
async fn breaker_first() -> Result<u8, MyError> {
    Ok(1)
}

#[bulkhead(pool = 60, name = "both-bulkhead-first")]
#[fusebox::breaker(name = "both-bulkhead-first", fallback = zero)]
async fn bulkhead_first() -> Result<u8, MyError> {
    Ok(1)
}

fn zero(_: Error<MyError>) -> Result<u8, MyError> {
    Ok(0)
}

#[breaker(
    name = "every-setting",
    timeout = "800ms",
    half_open_timeout = "3s",
    failure_rate = 40,
    window = "1m30s",
    min_calls = 5,
    slow = "250ms",
    slow_rate = 30,
    open_for = "10s",
    backoff = 2.0,
    open_for_max = "2m",
    half_open_pct = 10,
    half_open_window = "500us",
    alert_after = "2h"
)]
async fn everything() -> Result<u8, MyError> {
    Ok(1)
}

#[breaker(name = "trial-calls", half_open_calls = 3, window_calls = 20, trip_p99 = "1s")]
async fn trials() -> Result<u8, MyError> {
    Ok(1)
}

fn main() {
    let _ = Shard { id: 3 }.get("k");
    let _ = fetch("a", String::new());
    let _ = limited();
    let _ = report();
    let _ = breaker_first();
    let _ = bulkhead_first();
    let _ = everything();
    let _ = trials();
}
