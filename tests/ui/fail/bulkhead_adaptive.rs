use fusebox::{bulkhead, Rejection};

#[derive(Debug)]
pub struct MyError;

impl From<Rejection> for MyError {
    fn from(_: Rejection) -> Self {
        MyError
    }
}

#[bulkhead(limit = "elastic")]
async fn word() -> Result<u32, MyError> {
    Ok(1)
}

#[bulkhead(pool = 60, max_pool = 80)]
async fn bounds_without_adaptive() -> Result<u32, MyError> {
    Ok(1)
}

#[bulkhead(limit = "adaptive", min_pool = 30, max_pool = 20)]
async fn crossed() -> Result<u32, MyError> {
    Ok(1)
}

#[bulkhead(limit = adaptive)]
async fn not_a_string() -> Result<u32, MyError> {
    Ok(1)
}

fn main() {}
