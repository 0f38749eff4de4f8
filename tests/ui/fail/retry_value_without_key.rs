use fusebox::retry;

#[retry(3)]
async fn get() -> Result<u32, String> {
    Ok(1)
}

#[retry("attempts" = 3)]
async fn quoted_key() -> Result<u32, String> {
    Ok(1)
}

#[retry(attempts = 3, "10ms")]
async fn second() -> Result<u32, String> {
    Ok(1)
}

fn main() {
    let _ = get();
    let _ = quoted_key();
    let _ = second();
}
