use fusebox::{breaker, Rejection};

#[breaker(timeout = "800ms")]
#[breaker(failure_rate = 20)]
async fn lookup() -> Result<u32, Rejection> {
    Ok(1)
}

fn main() {
    let _ = lookup();
}
