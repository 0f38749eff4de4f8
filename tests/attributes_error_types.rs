//! The error types users return, with no fallback: a rejection becomes the function's own
//! `Err` through `From<Rejection>`, which `std::io::Error` (fusebox's impl) and a boxed
//! `dyn Error` (std's blanket impl) both have, so neither needs a type of the user's own.

use std::error::Error as StdError;
use std::io;
use std::time::Duration;

use fusebox::{breaker, registry, Rejection};

#[breaker(name = "et-io", timeout = "1s")]
async fn read_file(wait: Duration) -> io::Result<String> {
    tokio::time::sleep(wait).await;
    Err(io::Error::new(io::ErrorKind::NotFound, "no such file"))
}

type BoxError = Box<dyn StdError + Send + Sync>;

#[breaker(name = "et-boxed")]
async fn fetch(fail: bool) -> Result<u32, BoxError> {
    if fail {
        return Err("upstream said no".into());
    }
    Ok(7)
}

fn rejection<'a>(e: &'a (dyn StdError + 'static)) -> &'a Rejection {
    e.downcast_ref::<Rejection>()
        .expect("the rejection is inside")
}

#[tokio::test(start_paused = true)]
async fn an_io_result_fn_gets_its_rejections_as_io_errors() {
    let own = read_file(Duration::ZERO).await.unwrap_err();
    assert_eq!(
        own.kind(),
        io::ErrorKind::NotFound,
        "the fn's own error, as it was"
    );

    let late = read_file(Duration::from_secs(5)).await.unwrap_err();
    assert_eq!(late.kind(), io::ErrorKind::TimedOut, "{late}");
    assert!(rejection(late.get_ref().unwrap()).is_timed_out());

    registry().breaker("et-io").unwrap().force_open();
    let refused = read_file(Duration::ZERO).await.unwrap_err();
    assert_eq!(refused.kind(), io::ErrorKind::Other);
    let r = rejection(refused.get_ref().unwrap());
    assert!(r.is_open() && r.name() == "et-io", "{r}");
    assert_eq!(
        refused.to_string(),
        r.to_string(),
        "it reads as the rejection"
    );
}

#[tokio::test(start_paused = true)]
async fn a_boxed_error_fn_gets_its_rejections_boxed() {
    assert_eq!(fetch(false).await.unwrap(), 7);
    assert_eq!(
        fetch(true).await.unwrap_err().to_string(),
        "upstream said no"
    );
    registry().breaker("et-boxed").unwrap().force_open();
    let refused = fetch(false).await.unwrap_err();
    assert!(rejection(refused.as_ref()).is_open(), "{refused}");
}
