// `#[retry]` beside a bulkhead on a function that does not return a `Result`: one error, the
// bulkhead's.
use fusebox::{bulkhead, retry};

#[retry(attempts = 3)]
#[bulkhead(pool = 4)]
async fn price() -> u32 {
    1
}

fn main() {
    let _ = price();
}
