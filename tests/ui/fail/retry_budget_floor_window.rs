use fusebox::{breaker, retry, Rejection};

#[derive(Debug)]
pub struct MyError;

impl From<Rejection> for MyError {
    fn from(_: Rejection) -> Self {
        MyError
    }
}

#[retry(budget_floor = 5000, budget_window = "2h")]
#[breaker(name = "ui-budget_floor_window")]
async fn lookup() -> Result<u32, MyError> {
    Ok(1)
}

fn main() {
    // The function still exists after the error: no "cannot find function" follows.
    let _ = lookup();
}
