// `#[retry]` beside a breaker without `fallback` on a function that does not return a
// `Result`: one error, the breaker's (a `Result`, or a fallback), not one from each.
use fusebox::{breaker, retry};

#[retry(attempts = 3)]
#[breaker(name = "ui-retry-breaker-non-result")]
async fn price() -> u32 {
    1
}

fn main() {
    let _ = price();
}
