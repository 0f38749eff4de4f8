use fusebox::{breaker, retry, Error};

fn transient(_: &u32) -> bool {
    true
}

fn cached(_: Error<std::convert::Infallible>) -> u32 {
    0
}

#[retry(attempts = 2, retry_on = transient)]
#[breaker(name = "ui-retry-on-not-result", timeout = "1s", fallback = cached)]
async fn get() -> u32 {
    1
}

fn main() {
    let _ = get();
}
