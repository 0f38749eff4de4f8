use std::sync::Arc;

use fusebox::{breaker, bulkhead, Error, Rejection, Stale};

#[derive(Debug)]
pub struct MyError;

impl From<Rejection> for MyError {
    fn from(_: Rejection) -> Self {
        MyError
    }
}

/// Borrowed arguments are owned in the key: `(String, Vec<u8>, u32)`.
#[breaker(stale_for = "10m")]
async fn borrowed(name: &str, bytes: &[u8], mut n: u32) -> Result<String, MyError> {
    n += 1;
    Ok(format!("{name}{}{n}", bytes.len()))
}

/// The body consumes its argument: the key was cloned before it ran.
#[breaker(stale_for = "10m")]
async fn consume(s: String) -> Result<String, MyError> {
    Ok(s)
}

/// No arguments: one last good value.
#[breaker(stale_for = "30s", stale_capacity = 1)]
async fn singleton() -> Result<Arc<Vec<u8>>, MyError> {
    Ok(Arc::new(vec![1]))
}

pub struct Client {
    region: String,
}

impl Client {
    /// `self` is not in the default key; `stale_key` can put it there.
    #[breaker(stale_for = "1m", stale_key = (self.region, path))]
    pub async fn get(&self, path: &str) -> Result<String, MyError> {
        Ok(format!("{}{path}", self.region))
    }

    /// A method names its key; here the id alone says which value it is.
    #[breaker(name = "client-by-id", stale_for = "1m", stale_key = id)]
    pub async fn by_id(&mut self, id: u64) -> Result<u64, MyError> {
        Ok(id)
    }
}

/// Generic: one cache per instantiation.
#[breaker(stale_for = "10m")]
async fn generic<T: Clone + std::hash::Hash + Eq + Send + 'static>(t: T) -> Result<T, MyError> {
    Ok(t)
}

/// Keyed breaker, a bulkhead, a fallback and a stale fallback together.
#[breaker(
    key = shard,
    stale_for = "5m",
    fallback = empty,
    stale_fallback = mark_stale
)]
#[bulkhead(pool = 4)]
async fn shard_get(shard: u8, id: u64) -> Result<(u64, bool), MyError> {
    Ok((id + u64::from(shard), false))
}

fn empty(_: Error<MyError>) -> Result<(u64, bool), MyError> {
    Ok((0, false))
}

async fn mark_stale(s: Stale<(u64, bool)>, _: Error<MyError>) -> Result<(u64, bool), MyError> {
    Ok((s.value.0, true))
}

/// Not a `Result`: with a fallback, the value itself is kept.
#[breaker(stale_for = "10m", fallback = no_address, stale_fallback = |s: Stale<String>, _| s.value)]
async fn address(id: u32) -> String {
    id.to_string()
}

fn no_address(_: Error<std::convert::Infallible>) -> String {
    String::new()
}

fn main() {
    let _ = borrowed("a", b"b", 1);
    let _ = singleton();
    let _ = consume(String::new());
    let mut c = Client { region: "eu".into() };
    let _ = c.get("/x");
    let _ = c.by_id(1);
    let _ = generic(1u8);
    let _ = shard_get(1, 2);
    let _ = address(3);
}
