use fusebox::retry;

#[retry(attempts = 2)]
async fn count() -> u32 {
    1
}

fn main() {
    let _ = count();
}
