// A `Result` alias under `#[retry]`: the attribute sees names, not types; the error asks for
// the `Result` it stands for rather than a `Result` of it.
use fusebox::retry;

#[derive(Debug)]
pub struct Down;
pub type MyResult<T> = Result<T, Down>;

#[retry(attempts = 3)]
async fn price() -> MyResult<u32> {
    Ok(1)
}

fn main() {
    let _ = price();
}
