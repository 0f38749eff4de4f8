//! Issues 2 and 8: transitions are loud (WARN on open, INFO on close) and the recorder keeps
//! every one of them.

use super::*;

// --- Issue 2: loud transitions ---------------------------------------------------------------

/// Every event of the process: (level, every field as `name=value`, joined).
#[derive(Clone, Default)]
struct Log(Arc<Mutex<Vec<(tracing::Level, String)>>>);

struct Fields(String);

impl tracing::field::Visit for Fields {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        self.0.push_str(&format!("{}={:?} ", field.name(), value));
    }
}

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Log {
    fn on_event(&self, event: &tracing::Event<'_>, _: tracing_subscriber::layer::Context<'_, S>) {
        let mut f = Fields(String::new());
        event.record(&mut f);
        self.0
            .lock()
            .unwrap()
            .push((*event.metadata().level(), f.0));
    }
}

/// The process-wide log, installed once (tests run on parallel threads).
fn log() -> Log {
    use tracing_subscriber::layer::SubscriberExt;
    static LOG: OnceLock<Log> = OnceLock::new();
    LOG.get_or_init(|| {
        let log = Log::default();
        tracing::subscriber::set_global_default(tracing_subscriber::registry().with(log.clone()))
            .expect("the only subscriber of this test binary");
        log
    })
    .clone()
}

impl Log {
    /// The events at `level` whose fields name breaker `name` and contain `needle`.
    fn lines(&self, level: tracing::Level, name: &str, needle: &str) -> Vec<String> {
        let me = format!("breaker={name} ");
        self.0
            .lock()
            .unwrap()
            .iter()
            .filter(|(l, f)| *l == level && f.contains(&me) && f.contains(needle))
            .map(|(_, f)| f.clone())
            .collect()
    }
}

/// WARN on open with the reason and the rates, INFO on close, each once.
#[tokio::test(start_paused = true)]
async fn opening_warns_with_the_reason_and_the_rates_and_closing_informs() {
    let log = log();
    let b = Breaker::builder("ok-loud")
        .window_calls(4)
        .min_calls(4)
        .open_for(secs(5))
        .half_open_calls(1)
        .build()
        .unwrap();
    for ok in [true, true, false, false] {
        let _ = call_for(&b, ms(1), ok).await;
    }
    assert_eq!(b.state(), State::Open);
    let warns = log.lines(tracing::Level::WARN, "ok-loud", "opened");
    assert_eq!(warns.len(), 1, "one WARN for one opening: {warns:?}");
    assert!(
        warns[0].contains("50.0%") && warns[0].contains("failure rate"),
        "the WARN tells why and at what rate: {}",
        warns[0]
    );
    advance(secs(5)).await;
    call_for(&b, ms(1), true).await.unwrap();
    assert_eq!(b.state(), State::Closed);
    let closed = "message=circuit breaker closed";
    let infos = log.lines(tracing::Level::INFO, "ok-loud", closed);
    assert_eq!(infos.len(), 1, "one INFO for one closing: {infos:?}");
    assert!(log
        .lines(tracing::Level::WARN, "ok-loud", closed)
        .is_empty());
}

// --- Issue 8: the recorder sees every transition ------------------------------------------------

/// "A recorder of transitions to assert the exact sequence": a breaker that flaps through many
/// cycles before the test reads the recorder (a long outage simulated in one step, an operator
/// toggling it) still reads back every transition, in order.
#[tokio::test(start_paused = true)]
async fn the_recorder_keeps_every_transition_of_a_long_flapping_run() {
    let scope = fusebox::testing::scope();
    let mut recorder = scope.recorder();
    let b = Breaker::builder("ok-flapping").build().unwrap();
    for _ in 0..1500 {
        b.force_open();
        advance(ms(10)).await;
        b.force_close();
    }
    let states = recorder.states_of("ok-flapping");
    assert_eq!(states.len(), 3001, "every one of the 3 000 transitions");
    assert_eq!(
        states[..3],
        [State::Closed, State::ForcedOpen, State::ForcedClosed]
    );
    let timeline = recorder.timeline_of("ok-flapping");
    assert_eq!(timeline[0], (State::ForcedOpen, Duration::ZERO));
    assert_eq!(timeline[2998], (State::ForcedOpen, ms(10 * 1499)));
}
