//! Issue 31 on methods: a keyed method naming its classifier through `Self`, and a trait
//! object as `#[async_trait]` leaves it, classify as a free fn does.

use super::*;

/// A client per shard: `ignore` names an associated fn through `Self`, beside `key`.
struct Shards;

impl Shards {
    fn refused_locally(e: &ApiError) -> bool {
        *e == ApiError::Invalid
    }

    #[breaker(name = "oa-shard", key = shard, window_calls = 2, min_calls = 2, ignore = Self::refused_locally)]
    async fn get(&self, shard: u8, r: Result<u16, ApiError>) -> Result<u16, ApiError> {
        let _ = shard;
        r
    }
}

#[tokio::test(start_paused = true)]
async fn a_keyed_method_classifies_per_key() {
    let s = Shards;
    for _ in 0..3 {
        s.get(1, Err(ApiError::Invalid)).await.unwrap_err();
    }
    s.get(1, Err(ApiError::Down)).await.unwrap_err();
    s.get(2, Err(ApiError::Down)).await.unwrap_err();
    s.get(2, Err(ApiError::Down)).await.unwrap_err();
    let (one, two) = (metrics("oa-shard/1"), metrics("oa-shard/2"));
    assert_eq!(
        (one.state, one.window_calls, one.ignored),
        (State::Closed, 1, 3)
    );
    assert_eq!(two.state, State::Open);
}

/// A client behind a trait object, as `#[async_trait]` leaves it.
#[async_trait::async_trait]
trait Orders: Send + Sync {
    async fn status(&self, r: Result<u16, ApiError>) -> Result<u16, ApiError>;
}

struct HttpOrders;

#[async_trait::async_trait]
impl Orders for HttpOrders {
    #[breaker(
        name = "oa-dyn",
        window_calls = 2,
        min_calls = 2,
        ignore = invalid,
        failure_if_ok = server_error
    )]
    async fn status(&self, r: Result<u16, ApiError>) -> Result<u16, ApiError> {
        r
    }
}

#[tokio::test(start_paused = true)]
async fn a_trait_object_classifies_like_a_free_fn() {
    let orders: Box<dyn Orders> = Box::new(HttpOrders);
    for _ in 0..3 {
        orders.status(Err(ApiError::Invalid)).await.unwrap_err();
    }
    assert_eq!(orders.status(Ok(503)).await, Ok(503));
    let m = metrics("oa-dyn");
    assert_eq!(
        (m.state, m.window_calls, m.ignored, m.failed),
        (State::Closed, 1, 3, 1)
    );
    orders.status(Ok(500)).await.unwrap();
    assert_eq!(metrics("oa-dyn").state, State::Open);
}
