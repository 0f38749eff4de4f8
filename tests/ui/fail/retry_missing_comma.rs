use fusebox::retry;

#[retry(attempts = 3 backoff = "1ms")]
async fn get() -> Result<u32, String> {
    Ok(1)
}

#[retry(idempotent attempts = 3)]
async fn after_a_flag() -> Result<u32, String> {
    Ok(1)
}

fn main() {
    let _ = get();
    let _ = after_a_flag();
}
