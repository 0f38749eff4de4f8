use fusebox::retry;

#[retry(budget = 20%)]
async fn get() -> Result<u32, String> {
    Ok(1)
}

#[retry(budget = 20 %, attempts = 2)]
async fn spaced() -> Result<u32, String> {
    Ok(1)
}

fn main() {
    // The functions still exist after the error: no "cannot find function" follows.
    let _ = get();
    let _ = spaced();
}
