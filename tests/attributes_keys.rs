//! `key = ...` with `max_keys`: a key taken from requests cannot grow the registry without bound.

use fusebox::{breaker, registry, Rejection, OVERFLOW_KEY};

#[derive(Debug, PartialEq)]
enum FetchError {
    Unavailable(Rejection),
}

impl From<Rejection> for FetchError {
    fn from(r: Rejection) -> Self {
        FetchError::Unavailable(r)
    }
}

#[breaker(name = "keys-fetch", key = host, max_keys = 100)]
async fn fetch(host: &str) -> Result<usize, FetchError> {
    Ok(host.len())
}

#[tokio::test(start_paused = true)]
async fn ten_thousand_distinct_hosts_all_go_through_on_at_most_101_breakers() {
    for i in 0..10_000 {
        let host = format!("h{i}.example");
        assert_eq!(
            fetch(&host).await,
            Ok(host.len()),
            "never refused by the cap"
        );
    }
    let mine: Vec<_> = registry()
        .breakers()
        .into_iter()
        .filter(|b| b.name().starts_with("keys-fetch/"))
        .collect();
    assert!(mine.len() <= 101, "{}", mine.len());
    assert!(mine.iter().any(|b| b.config().key() == Some(OVERFLOW_KEY)));
    assert_eq!(mine[0].config().max_keys(), 100);
}
