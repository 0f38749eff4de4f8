use fusebox::retry;

#[retry(attempts = )]
async fn get() -> Result<u32, String> {
    Ok(1)
}

#[retry(attempts = , backoff = "10ms")]
async fn other() -> Result<u32, String> {
    Ok(1)
}

fn main() {
    let _ = get();
    let _ = other();
}
