//! `retry_in` of an open refusal is what is left on the caller's clock, whichever runtime's
//! clock opened the breaker: paused tests run in parallel share an annotated breaker, each on
//! a frozen clock of its own, and one may have advanced far ahead of another.

mod common;
use common::*;

use fusebox_runtime::{Breaker, Error, Rejection, State};
use tokio::runtime::{Builder, Runtime};
use tokio::time::advance;

fn paused() -> Runtime {
    Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap()
}

async fn call(b: &Breaker, up: bool) -> Result<(), Error<&'static str>> {
    b.call(async move {
        if up {
            Ok(())
        } else {
            Err("down")
        }
    })
    .await
}

fn refused_open(r: &Result<(), Error<&'static str>>) -> Option<std::time::Duration> {
    match r {
        Err(Error::Rejected(Rejection::Open {
            state: State::Open,
            retry_in,
            ..
        })) => *retry_in,
        _ => None,
    }
}

#[test]
fn waiting_out_retry_in_on_a_clock_behind_the_one_that_opened_it_lets_the_call_in() {
    let b = Breaker::builder("retry-in-clocks")
        .window_calls(2)
        .min_calls(2)
        .failure_rate(50)
        .open_for(secs(10))
        .build_detached()
        .unwrap();
    // One test's clock, 60 s on, opens it: the period ends 70 s after both runtimes began.
    paused().block_on(async {
        advance(secs(60)).await;
        call(&b, false).await.unwrap_err();
        call(&b, false).await.unwrap_err();
        assert_eq!(b.state(), State::Open);
    });
    // Another's clock, at its start: about 70 s are left on it.
    paused().block_on(async {
        let first = refused_open(&call(&b, true).await).expect("refused while open");
        assert!(
            first > secs(60),
            "retry_in {first:?}: what is left on this clock"
        );
        advance(first).await;
        let r = call(&b, true).await;
        assert_eq!(
            refused_open(&r),
            None,
            "waited retry_in, refused again: {r:?}"
        );
    });
}
