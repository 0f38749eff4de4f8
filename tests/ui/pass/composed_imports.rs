//! Both attributes imported and used only together: neither import is reported unused.
#![deny(warnings)]

use fusebox::{breaker, bulkhead, Rejection};

#[breaker(name = "composed")]
#[bulkhead(pool = 8)]
async fn both() -> Result<u8, Rejection> {
    Ok(1)
}

fn assert_send<F: Send>(_: F) {}

#[breaker(name = "composed-keyed", key = shard)]
async fn keyed(shard: u16) -> Result<u16, Rejection> {
    Ok(shard)
}

fn main() {
    // The generated futures stay `Send` when the body is, so they can be spawned.
    assert_send(both());
    assert_send(keyed(3));
}
