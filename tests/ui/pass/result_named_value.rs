// A value type whose name ends in `Result` is a value, not a `Result`: with a fallback it is
// guarded and answered like any other value.
use fusebox::{breaker, Error};

#[derive(Debug, Default)]
pub struct SearchResult {
    pub hits: Vec<String>,
}

fn empty(_: Error<std::convert::Infallible>) -> SearchResult {
    SearchResult::default()
}

#[breaker(timeout = "800ms", fallback = empty)]
async fn search(query: &str) -> SearchResult {
    SearchResult {
        hits: vec![query.to_owned()],
    }
}

fn main() {
    let _ = search("fusebox");
}

/// Generic, and behind an `impl Trait`: still a value, with nothing to probe in the way.
pub struct PageResult<T>(pub Vec<T>);

fn empty_page<T>(_: Error<std::convert::Infallible>) -> PageResult<T> {
    PageResult(Vec::new())
}

#[breaker(timeout = "800ms", fallback = empty_page)]
async fn page<T: Clone + Send>(items: Vec<T>) -> PageResult<T> {
    PageResult(items)
}

#[breaker(timeout = "800ms", fallback = |_| PageResult(Vec::new()))]
async fn opaque(n: u8) -> PageResult<impl std::fmt::Debug> {
    PageResult(vec![n])
}

fn _uses() {
    let _ = page(vec![1u8]);
    let _ = opaque(1);
}
