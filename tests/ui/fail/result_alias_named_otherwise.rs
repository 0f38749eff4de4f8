// A `Result` is recognised by its path (`Result`, `std::result::Result`, `io::Result`), not
// by a name ending in `Result`: an alias under another name is not seen through, and the
// error says to write the `Result` it stands for.
use fusebox::{breaker, Rejection};

#[derive(Debug)]
pub struct MyError;

impl From<Rejection> for MyError {
    fn from(_: Rejection) -> Self {
        MyError
    }
}

pub type SearchResult = Result<Vec<String>, MyError>;

#[breaker(timeout = "800ms")]
async fn search(query: &str) -> SearchResult {
    Ok(vec![query.to_owned()])
}

fn main() {}
