use fusebox::{bulkhead, retry};

// A `%` after a key that takes no percent (or that the attribute does not have): one error,
// at the `%`.
#[bulkhead(pool = 5%)]
async fn pooled() -> Result<u32, String> {
    Ok(1)
}

#[retry(backoff = 5%)]
async fn backed_off() -> Result<u32, String> {
    Ok(1)
}

#[retry(failure_rate = 50%)]
async fn not_a_retry_key() -> Result<u32, String> {
    Ok(1)
}

fn main() {
    let _ = pooled();
    let _ = backed_off();
    let _ = not_a_retry_key();
}
