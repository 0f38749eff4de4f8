//! Generic functions and methods under the attributes: a fallback that borrows the arguments,
//! a keyed method past `max_keys`, an evicted key, and two methods sharing a default name.

use super::*;

static GENERIC_FALLBACKS: AtomicU32 = AtomicU32::new(0);

fn generic_offline<T: std::fmt::Display + ?Sized>(
    id: &T,
    up: &bool,
    err: Error<DepError>,
) -> Result<String, DepError> {
    GENERIC_FALLBACKS.fetch_add(1, SeqCst);
    assert!(!up);
    assert!(matches!(err, Error::Failed(DepError::Down)));
    Ok(format!("offline {id}"))
}

#[breaker(name = "d-generic-fallback", window_calls = 4, min_calls = 4, fallback = generic_offline)]
async fn describe<T: std::fmt::Display + Sync + ?Sized>(
    id: &T,
    up: bool,
) -> Result<String, DepError> {
    if up {
        Ok(format!("live {id}"))
    } else {
        Err(DepError::Down)
    }
}

#[tokio::test(start_paused = true)]
async fn a_generic_function_lends_its_arguments_to_the_fallback_in_order() {
    assert_eq!(describe(&7u32, true).await, Ok("live 7".into()));
    assert_eq!(describe("a", false).await, Ok("offline a".into()));
    assert_eq!(describe(&8u64, false).await, Ok("offline 8".into()));
    assert_eq!(GENERIC_FALLBACKS.load(SeqCst), 2);
}

struct Client {
    region: &'static str,
}

impl Client {
    #[breaker(key = self.region, max_keys = 2, window_calls = 2, min_calls = 2, fallback = Self::cached)]
    async fn quote(&self, item: &str) -> Result<String, DepError> {
        if self.region == "down" {
            Err(DepError::Down)
        } else {
            Ok(format!("{item} from {}", self.region))
        }
    }

    async fn cached(&self, item: &str, _err: Error<DepError>) -> Result<String, DepError> {
        Ok(format!("{item} cached for {}", self.region))
    }
}

#[tokio::test(start_paused = true)]
async fn a_keyed_method_past_max_keys_never_refuses_a_call() {
    for region in ["eu", "us", "ap", "sa", "down"] {
        let c = Client { region };
        for _ in 0..3 {
            let got = c.quote("tea").await.unwrap();
            if region == "down" {
                assert_eq!(got, "tea cached for down");
            } else {
                assert_eq!(got, format!("tea from {region}"));
            }
        }
    }
    let base = format!("{}::quote", module_path!());
    let names: Vec<String> = registry()
        .breakers()
        .into_iter()
        .map(|b| b.name().to_string())
        .filter(|n| n.starts_with(&format!("{base}/")))
        .collect();
    assert!(
        names.len() <= 3,
        "at most max_keys keys plus the overflow: {names:?}"
    );
}

#[breaker(name = "d-evict", key = tenant, window_calls = 2, min_calls = 2)]
async fn per_tenant(tenant: &str) -> Result<u8, DepError> {
    let _ = tenant;
    Ok(1)
}

#[tokio::test(start_paused = true)]
async fn an_evicted_key_comes_back_as_a_fresh_listed_breaker() {
    assert_eq!(per_tenant("a").await, Ok(1));
    assert_eq!(per_tenant("b").await, Ok(1));
    registry()
        .breaker("d-evict/a")
        .expect("listed once used")
        .force_open();
    assert!(per_tenant("a").await.is_err());

    // One key evicted: its next call makes a fresh breaker, listed again, not forced.
    assert!(registry().evict("d-evict/a"));
    assert!(registry().breaker("d-evict/a").is_none());
    assert_eq!(per_tenant("a").await, Ok(1));
    let again = registry().breaker("d-evict/a").expect("listed again");
    assert_eq!((again.state(), again.metrics().calls), (State::Closed, 1));

    // Every key evicted at once.
    assert_eq!(registry().evict_keys("d-evict"), 2);
    assert!(registry().breaker("d-evict/b").is_none());
    assert_eq!(per_tenant("b").await, Ok(1));
    assert_eq!(registry().breaker("d-evict/b").unwrap().metrics().calls, 1);
}

/// The default name leaves out a method's type (the attribute cannot see it), so two types'
/// `get` in one module share `outside_d::clients::get`. Nobody chose that: it is told at
/// ERROR and counted as a conflict from the start, before any call.
#[tokio::test(start_paused = true)]
async fn two_methods_sharing_a_default_name_are_a_counted_conflict() {
    let shared = registry()
        .breaker("outside_d::clients::get")
        .expect("listed");
    assert_eq!(shared.metrics().conflicts, 1);
    let _ = (clients::Payments, clients::Addresses);
}
