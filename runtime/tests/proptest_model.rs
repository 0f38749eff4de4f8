//! Property test: the real breaker and the reference model in `model/` agree on every
//! admission and every state, over random configurations and random sequences of outcomes,
//! latencies, clock advances, cancellations, panics and operator commands, with and without
//! probes while open and a ramp after half-open (issue 22).
//!
//! Each case runs on its own current-thread runtime with a paused clock. 256 cases by default;
//! `PROPTEST_CASES=N` runs more.

mod model;

use std::future::{poll_fn, Future};
use std::pin::Pin;
use std::task::Poll;
use std::time::Duration;

use fusebox_runtime::{Breaker, BreakerBuilder, Completion, Error, Rejection};
use model::{Answer, Config, HalfOpen, Model, Seen};
use proptest::prelude::*;
use tokio::time::{advance, sleep};

#[derive(Debug, Clone)]
enum Op {
    Call(Answer, u64),
    /// Admit a call, poll it once, keep it pending.
    Hold,
    /// Drop the held call with this index (modulo the number held).
    Cancel(usize),
    Advance(u64),
    ForceOpen,
    ForceClose,
    Reset,
}

fn answer() -> impl Strategy<Value = Answer> {
    prop_oneof![
        4 => Just(Answer::Ok),
        4 => Just(Answer::Fail),
        1 => Just(Answer::Ignored),
        1 => Just(Answer::Panic),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        20 => (answer(), 1u64..80).prop_map(|(a, l)| Op::Call(a, l)),
        2 => Just(Op::Hold),
        2 => (0usize..8).prop_map(Op::Cancel),
        6 => (1u64..150).prop_map(Op::Advance),
        1 => Just(Op::ForceOpen),
        1 => Just(Op::ForceClose),
        1 => Just(Op::Reset),
    ]
}

fn config() -> impl Strategy<Value = Config> {
    let half_open = prop_oneof![
        (1u32..4).prop_map(HalfOpen::Calls),
        (1u64..=100, 1u64..100).prop_map(|(pct, window)| HalfOpen::Share { pct, window }),
    ];
    let slow = proptest::option::of((1u64..60, 1u64..100, any::<bool>()));
    (
        (1usize..7, 0.0f64..1.0, proptest::option::of(1u64..200)),
        prop_oneof![Just(1u64), Just(50), Just(100), 1u64..=100],
        slow,
        proptest::option::of(1u64..70),
        proptest::option::of(1u64..90),
        1u64..120,
        proptest::option::of(1u64..4),
        half_open,
        // Issue 22: probes (kept shorter than the first open period) and a ramp.
        (
            proptest::option::of(1u64..120),
            proptest::option::of(1u64..200),
        ),
    )
        .prop_map(
            |(
                (window, m, time_window),
                failure_rate,
                slow,
                timeout,
                hot,
                open_for,
                grow,
                half_open,
                (probe_every, ramp),
            )| Config {
                window,
                time_window,
                min_calls: 1 + (m * window as f64) as usize % window,
                failure_rate,
                slow,
                timeout,
                half_open_timeout: hot,
                open_for,
                backoff_max: grow.map(|g| open_for * (1 << g)),
                half_open,
                probe_every: probe_every.filter(|p| *p < open_for),
                ramp,
            },
        )
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn builder(c: &Config) -> BreakerBuilder {
    let mut b = Breaker::builder("proptest").min_calls(c.min_calls as u32);
    b = match c.time_window {
        Some(w) => b.window(ms(w)),
        None => b.window_calls(c.window as u32),
    };
    b = b
        .failure_rate(c.failure_rate as u8)
        .open_for(ms(c.open_for));
    if let Some((bound, rate, strict)) = c.slow {
        b = if strict {
            b.trip_percentile(100 - rate as u8, ms(bound))
        } else {
            b.slow(ms(bound), rate as u8)
        };
    }
    if let Some(t) = c.timeout {
        b = b.timeout(ms(t));
    }
    if let Some(t) = c.half_open_timeout {
        b = b.half_open_timeout(ms(t));
    }
    if let Some(max) = c.backoff_max {
        b = b.backoff(2.0, ms(max));
    }
    if let Some(p) = c.probe_every {
        b = b.probe_every(ms(p));
    }
    if let Some(r) = c.ramp {
        b = b.ramp(ms(r));
    }
    match c.half_open {
        HalfOpen::Calls(n) => b.half_open_calls(n),
        HalfOpen::Share { pct, window } => b.half_open_pct(pct as u8).half_open_window(ms(window)),
    }
}

#[derive(Debug)]
struct Boom;

type Held = Pin<Box<dyn Future<Output = Completion<(), Boom>>>>;

/// The same call through the real breaker.
async fn real_call(b: &Breaker, answer: Answer, latency: u64) -> Seen {
    let b2 = b.clone();
    let call = async move {
        b2.call_filtered(
            async move {
                sleep(ms(latency)).await;
                match answer {
                    Answer::Ok => Ok(()),
                    Answer::Fail => Err(true),
                    Answer::Ignored => Err(false),
                    Answer::Panic => panic!("injected panic"),
                }
            },
            |counted| *counted,
        )
        .await
    };
    // Spawned so that a panic unwinds through the breaker's guard as in production.
    match tokio::spawn(call).await {
        Err(e) if e.is_panic() => Seen::Panicked,
        Err(e) => panic!("task failed: {e}"),
        Ok(Completion::Ok(())) => Seen::Ok,
        Ok(Completion::Ignored(_)) => Seen::Ignored,
        Ok(Completion::Failed(Error::Failed(_))) => Seen::Failed,
        Ok(Completion::Failed(Error::Rejected(Rejection::TimedOut { .. }))) => Seen::TimedOut,
        Ok(Completion::Failed(Error::Rejected(_))) => Seen::Rejected,
    }
}

fn run_case(cfg: Config, ops: Vec<Op>) -> Result<(), TestCaseError> {
    quiet_panics();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap();
    rt.block_on(async move {
        let b = builder(&cfg)
            .build_detached()
            .expect("generated configs are valid");
        let mut m = Model::new(cfg);
        let mut held: Vec<(Held, model::Ticket)> = Vec::new();
        for (i, op) in ops.iter().enumerate() {
            match *op {
                Op::Call(answer, latency) => {
                    let real = real_call(&b, answer, latency).await;
                    let want = m.call(answer, latency);
                    prop_assert_eq!(real, want, "op {}: {:?}", i, op);
                }
                Op::Hold => {
                    let b2 = b.clone();
                    let mut fut: Held = Box::pin(async move {
                        b2.call_filtered(
                            async {
                                sleep(Duration::from_secs(1 << 20)).await;
                                Ok(())
                            },
                            |_: &Boom| true,
                        )
                        .await
                    });
                    let admitted =
                        poll_fn(|cx| Poll::Ready(fut.as_mut().poll(cx).is_pending())).await;
                    let want = m.admit();
                    prop_assert_eq!(admitted, want.is_some(), "op {}: hold admission", i);
                    if let Some(t) = want {
                        held.push((fut, t));
                    }
                }
                Op::Cancel(k) if !held.is_empty() => {
                    let (fut, t) = held.remove(k % held.len());
                    drop(fut);
                    m.cancel(t);
                }
                Op::Cancel(_) => {}
                Op::Advance(d) => {
                    advance(ms(d)).await;
                    m.advance(d);
                }
                Op::ForceOpen => {
                    b.force_open();
                    m.force_open();
                }
                Op::ForceClose => {
                    b.force_close();
                    m.force_close();
                }
                Op::Reset => {
                    b.reset();
                    m.reset();
                }
            }
            m.read();
            prop_assert_eq!(b.state(), m.state, "op {}: {:?}", i, op);
        }
        for (fut, t) in held.drain(..) {
            drop(fut);
            m.cancel(t);
        }
        let got = b.metrics();
        let c = m.counters;
        prop_assert_eq!(
            (
                got.succeeded,
                got.failed,
                got.ignored,
                got.timed_out,
                got.panicked
            ),
            (c.succeeded, c.failed, c.ignored, c.timed_out, c.panicked)
        );
        prop_assert_eq!((got.cancelled, got.rejected), (c.cancelled, c.rejected));
        prop_assert_eq!((got.slow, got.times_opened), (c.slow, c.times_opened));
        prop_assert_eq!(got.window_calls, m.window_calls());
        Ok(())
    })
}

proptest! {
    // 256 cases unless PROPTEST_CASES says otherwise.
    #![proptest_config(ProptestConfig {
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn breaker_agrees_with_the_model(cfg in config(), ops in proptest::collection::vec(op(), 1..80)) {
        run_case(cfg, ops)?;
    }
}

/// Keeps stderr readable: the panics the test injects on purpose are not printed.
fn quiet_panics() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let injected = info
                .payload()
                .downcast_ref::<&str>()
                .is_some_and(|s| *s == "injected panic");
            if !injected {
                default(info);
            }
        }));
    });
}
