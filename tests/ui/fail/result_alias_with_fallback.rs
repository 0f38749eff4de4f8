// An alias of a `Result` named otherwise, with a fallback: taken by its name for a value, its
// `Err`s would silently count as successes. The expansion probes the type, so this is a
// compile error at the return type instead.
use fusebox::{breaker, Error};

#[derive(Debug)]
pub struct MyError;

pub type SearchResult = Result<Vec<String>, MyError>;

fn nothing(_: Error<std::convert::Infallible>) -> SearchResult {
    Ok(Vec::new())
}

#[breaker(timeout = "800ms", fallback = nothing)]
async fn search(query: &str) -> SearchResult {
    Ok(vec![query.to_owned()])
}

fn main() {}
