use fusebox::retry;

#[retry(attempts)]
async fn get() -> Result<u32, String> {
    Ok(1)
}

fn main() {
    let _ = get();
}
