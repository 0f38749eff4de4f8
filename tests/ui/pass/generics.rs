use fusebox::{breaker, Error, Rejection};

#[derive(Debug)]
pub enum MyError {
    NotFound,
    Unavailable(Rejection),
}

impl From<Rejection> for MyError {
    fn from(r: Rejection) -> Self {
        MyError::Unavailable(r)
    }
}

use std::fmt::Display;

#[breaker(name = "generic")]
async fn show<T: Display + Send>(value: T) -> Result<String, MyError> {
    Ok(value.to_string())
}

#[breaker(name = "where-clause")]
async fn first<T>(items: Vec<T>) -> Result<T, MyError>
where
    T: Clone,
{
    items.into_iter().next().ok_or(MyError::NotFound)
}

#[breaker(name = "impl-trait-arg")]
async fn len(items: impl IntoIterator<Item = u8>) -> Result<usize, MyError> {
    Ok(items.into_iter().count())
}

#[breaker(name = "lifetimes")]
async fn longest<'a>(a: &'a str, b: &'a str) -> Result<&'a str, MyError> {
    Ok(if a.len() >= b.len() { a } else { b })
}

#[breaker(name = "elided")]
async fn trim(s: &str) -> Result<&str, MyError> {
    Ok(s.trim())
}

#[breaker(name = "cfg-param")]
async fn configured(#[cfg(any())] hidden: u32, shown: u32) -> Result<u32, MyError> {
    Ok(shown)
}

pub struct Wrapper<T>(T);

impl<T: Clone + Send + Sync> Wrapper<T> {
    #[breaker(name = "generic-impl")]
    pub async fn get(&self) -> Result<T, MyError> {
        Ok(self.0.clone())
    }
}

/// A `Result` alias: `io::Error` has no `From<Rejection>`, so a fallback answers rejections.
#[breaker(name = "io-result", fallback = io_fallback)]
async fn io_alias() -> std::io::Result<u8> {
    Ok(1)
}

fn io_fallback(e: Error<std::io::Error>) -> std::io::Result<u8> {
    match e {
        Error::Failed(e) => Err(e),
        Error::Rejected(r) => Err(std::io::Error::other(r)),
    }
}

/// A crate's own `Result` alias, by the convention of `io::Result`: a `Result` is recognised by
/// its path, whose last segment is `Result` (an alias named otherwise, like `MyResult<T>`, is
/// not seen through: `tests/ui/fail/result_alias_named_otherwise.rs`).
mod errors {
    pub type Result<T> = std::result::Result<T, super::MyError>;
}

#[breaker(name = "my-result")]
async fn my_alias() -> errors::Result<u8> {
    Ok(1)
}

#[breaker(name = "std-result")]
async fn std_path() -> ::std::result::Result<u8, MyError> {
    Ok(1)
}

fn main() {
    let _ = show(1);
    let _ = first(vec![1]);
    let _ = len(vec![1u8]);
    let _ = longest("a", "bb");
    let _ = trim(" a ");
    let _ = configured(1);
    let _ = Wrapper(1).get();
    let _ = io_alias();
    let _ = my_alias();
    let _ = std_path();
}
