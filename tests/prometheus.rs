//! The Prometheus text after a scripted sequence of calls on a paused clock: it parses (with
//! `prometheus-parse` and with a strict reading of the format) and carries the expected figures.

use std::collections::{BTreeMap, HashSet};
use std::time::Duration;

use fusebox::{registry, Breaker, Bulkhead, Completion, Error, State};
use tokio::time::{advance, sleep, Instant};

const MS: Duration = Duration::from_millis(1);

type Labels = BTreeMap<String, String>;

fn valid_name(n: &str) -> bool {
    !n.is_empty()
        && !n.starts_with(|c: char| c.is_ascii_digit())
        && n.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':')
}

/// Parses `k="v",k2="v2"}` (what follows the `{`): the labels, and what follows the `}`.
fn parse_labels<'a>(mut s: &'a str, line: &str) -> (Labels, &'a str) {
    let mut labels = Labels::new();
    loop {
        let eq = s.find('=').unwrap_or_else(|| panic!("no = in {line}"));
        let key = &s[..eq];
        assert!(valid_name(key), "label name {key:?} in {line}");
        s = s[eq + 1..].strip_prefix('"').expect("quoted label value");
        let mut value = String::new();
        let mut chars = s.char_indices();
        let end = loop {
            let (i, c) = chars.next().expect("label value is closed");
            match c {
                '"' => break i,
                '\\' => match chars.next().map(|(_, e)| e) {
                    Some('\\') => value.push('\\'),
                    Some('"') => value.push('"'),
                    Some('n') => value.push('\n'),
                    e => panic!("bad escape {e:?} in {line}"),
                },
                c => value.push(c),
            }
        };
        assert!(labels.insert(key.to_owned(), value).is_none(), "{line}");
        s = &s[end + 1..];
        if let Some(r) = s.strip_prefix(',') {
            s = r;
            continue;
        }
        let r = s
            .strip_prefix('}')
            .unwrap_or_else(|| panic!("unclosed labels in {line}"));
        return (labels, r);
    }
}

/// A strict reader of the text format 0.0.4: every family has HELP then TYPE before its
/// samples, families are contiguous and declared once, names are valid, label values use
/// only the three escapes, no series repeats. Returns `(name, labels, value)` per sample.
fn strict_parse(text: &str) -> Vec<(String, Labels, f64)> {
    let mut out = Vec::new();
    let mut declared = HashSet::new();
    let mut series = HashSet::new();
    let (mut help, mut current): (Option<String>, Option<String>) = (None, None);
    assert!(text.ends_with('\n'), "the text ends with a line feed");
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("# HELP ") {
            let (name, _) = rest.split_once(' ').expect("HELP has a text");
            assert!(valid_name(name), "{line}");
            help = Some(name.to_owned());
            continue;
        }
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, kind) = rest.split_once(' ').unwrap();
            assert_eq!(
                help.as_deref(),
                Some(name),
                "HELP right before TYPE: {line}"
            );
            assert!(matches!(kind, "counter" | "gauge"), "{line}");
            assert!(
                declared.insert(name.to_owned()),
                "family declared twice: {name}"
            );
            current = Some(name.to_owned());
            continue;
        }
        assert!(
            !line.starts_with('#') && !line.is_empty(),
            "stray line {line:?}"
        );
        let name_end = line.find(['{', ' ']).expect("a sample has a value");
        let name = &line[..name_end];
        assert_eq!(
            Some(name),
            current.as_deref(),
            "sample outside its family: {line}"
        );
        let mut rest = &line[name_end..];
        let mut labels = Labels::new();
        if let Some(r) = rest.strip_prefix('{') {
            (labels, rest) = parse_labels(r, line);
        }
        let value = rest.strip_prefix(' ').expect("one space before the value");
        let v: f64 = match value {
            "NaN" => f64::NAN,
            "+Inf" => f64::INFINITY,
            "-Inf" => f64::NEG_INFINITY,
            v => v.parse().unwrap_or_else(|_| panic!("bad value in {line}")),
        };
        assert!(
            series.insert(format!("{name}{labels:?}")),
            "series repeated: {line}"
        );
        out.push((name.to_owned(), labels, v));
    }
    out
}

/// The one sample of `name` whose labels include all of `want`.
fn value(samples: &[(String, Labels, f64)], name: &str, want: &[(&str, &str)]) -> f64 {
    let found: Vec<f64> = samples
        .iter()
        .filter(|(n, l, _)| {
            n == name
                && want
                    .iter()
                    .all(|(k, v)| l.get(*k).map(String::as_str) == Some(*v))
        })
        .map(|s| s.2)
        .collect();
    assert_eq!(found.len(), 1, "{name} {want:?}: {found:?}");
    found[0]
}

async fn ok(b: &Breaker, latency: Duration) -> Result<(), Error<&'static str>> {
    b.call(async move {
        sleep(latency).await;
        Ok(())
    })
    .await
}

async fn fail(b: &Breaker, latency: Duration) -> Result<(), Error<&'static str>> {
    b.call(async move {
        sleep(latency).await;
        Err("boom")
    })
    .await
}

#[tokio::test(start_paused = true)]
async fn a_scripted_outage_reads_back_from_the_scrape() {
    let b = Breaker::builder("prom-script")
        .window_calls(20)
        .min_calls(8)
        .failure_rate(50)
        .timeout(200 * MS)
        .slow(100 * MS, 90)
        .open_for(Duration::from_secs(120))
        .alert_after(Duration::from_secs(60))
        .build()
        .unwrap();
    for _ in 0..3 {
        ok(&b, 10 * MS).await.unwrap();
    }
    let ignored = b
        .call_filtered(
            async {
                sleep(10 * MS).await;
                Err::<(), u16>(404)
            },
            |s| *s >= 500,
        )
        .await;
    assert!(matches!(ignored, Completion::Ignored(404)));
    // Dropped by its caller after 5 ms: cancelled, not a failure.
    assert!(tokio::time::timeout(5 * MS, ok(&b, Duration::from_secs(1)))
        .await
        .is_err());
    // Cut off by the breaker's 200 ms timeout: a failure, and slow.
    assert!(matches!(
        ok(&b, Duration::from_secs(1)).await,
        Err(Error::Rejected(fusebox::Rejection::TimedOut { .. }))
    ));
    let panicker = b.clone();
    let joined = tokio::spawn(async move {
        let _: Result<(), Error<()>> = panicker.call(async { panic!("scripted panic") }).await;
    })
    .await;
    assert!(joined.unwrap_err().is_panic());
    // Window: 3 ok + 1 ignored + 1 timed out + 1 panicked; two more failures make 4 of 8.
    fail(&b, 10 * MS).await.unwrap_err();
    assert_eq!(b.state(), State::Closed);
    fail(&b, 10 * MS).await.unwrap_err();
    assert_eq!(b.state(), State::Open);
    let opened_at = Instant::now();
    for _ in 0..3 {
        assert!(matches!(ok(&b, MS).await, Err(Error::Rejected(_))));
    }

    // A bulkhead of one, held by a call in flight, refuses the next.
    let guarded = Breaker::builder("prom-guarded").build().unwrap();
    let pool = Bulkhead::builder("prom-pool").pool(1).build().unwrap();
    let (g, p) = (guarded.clone(), pool.clone());
    let holder = tokio::spawn(async move {
        g.call_in(&p, async {
            sleep(Duration::from_secs(300)).await;
            Ok::<_, ()>(())
        })
        .await
    });
    sleep(MS).await;
    let refused: Result<(), Error<()>> = guarded.call_in(&pool, async { Ok(()) }).await;
    assert!(matches!(
        refused,
        Err(Error::Rejected(fusebox::Rejection::Full { .. }))
    ));

    advance(Duration::from_secs(61)).await;
    let in_state = Instant::now() - opened_at;

    let text = fusebox::export::prometheus();
    let s = strict_parse(&text);
    let me = [("breaker", "prom-script")];
    let with = |extra: (&'static str, &'static str)| [me[0], extra];
    for (state, v) in [
        ("closed", 0.0),
        ("open", 1.0),
        ("half_open", 0.0),
        ("forced_open", 0.0),
        ("forced_closed", 0.0),
    ] {
        assert_eq!(
            value(&s, "fusebox_breaker_state", &with(("state", state))),
            v,
            "{state}"
        );
    }
    for (outcome, n) in [
        // The 404 the predicate excludes is a success (the dependency answered).
        ("succeeded", 4.0),
        ("failed", 2.0),
        ("ignored", 0.0),
        ("timed_out", 1.0),
        ("panicked", 1.0),
        ("cancelled", 1.0),
    ] {
        let got = value(
            &s,
            "fusebox_breaker_calls_total",
            &with(("outcome", outcome)),
        );
        assert_eq!(got, n, "{outcome}");
    }
    let rejected = |reason| {
        value(
            &s,
            "fusebox_breaker_rejected_total",
            &with(("reason", reason)),
        )
    };
    assert_eq!(rejected("open"), 3.0);
    assert_eq!(rejected("bulkhead_full"), 0.0);
    assert_eq!(value(&s, "fusebox_breaker_opened_total", &me), 1.0);
    assert_eq!(value(&s, "fusebox_breaker_slow_calls_total", &me), 1.0);
    assert_eq!(value(&s, "fusebox_breaker_window_calls", &me), 8.0);
    assert_eq!(value(&s, "fusebox_breaker_failure_ratio", &me), 0.5);
    assert_eq!(value(&s, "fusebox_breaker_slow_ratio", &me), 0.125);
    assert_eq!(
        value(&s, "fusebox_breaker_time_in_state_seconds", &me),
        in_state.as_secs_f64()
    );
    assert_eq!(
        value(&s, "fusebox_breaker_stuck", &me),
        1.0,
        "open 61 s > alert_after 60 s"
    );
    let p50 = value(
        &s,
        "fusebox_breaker_latency_seconds",
        &with(("quantile", "0.5")),
    );
    let p99 = value(
        &s,
        "fusebox_breaker_latency_seconds",
        &with(("quantile", "0.99")),
    );
    // Quantiles are read from half-octave buckets: never below the truth, at most 1.5x above.
    assert!(
        (0.010..=0.015).contains(&p50),
        "most calls took 10 ms: {p50}"
    );
    assert!(
        (0.2..=0.3).contains(&p99),
        "the slowest ran into the 200 ms timeout: {p99}"
    );
    assert_eq!(value(&s, "fusebox_breaker_conflicts_total", &me), 0.0);

    let g = [("breaker", "prom-guarded")];
    let gr = [g[0], ("reason", "bulkhead_full")];
    assert_eq!(value(&s, "fusebox_breaker_rejected_total", &gr), 1.0);
    let pl = [("bulkhead", "prom-pool")];
    assert_eq!(value(&s, "fusebox_bulkhead_pool", &pl), 1.0);
    assert_eq!(value(&s, "fusebox_bulkhead_in_flight", &pl), 1.0);
    assert_eq!(value(&s, "fusebox_bulkhead_peak", &pl), 1.0);
    assert_eq!(value(&s, "fusebox_bulkhead_admitted_total", &pl), 1.0);
    assert_eq!(value(&s, "fusebox_bulkhead_rejected_total", &pl), 1.0);

    // The same text through the prometheus-parse crate: types and values agree.
    let scrape = prometheus_parse::Scrape::parse(text.lines().map(|l| Ok(l.to_owned()))).unwrap();
    let find = |metric: &str, labels: &[(&str, &str)]| {
        scrape
            .samples
            .iter()
            .find(|x| x.metric == metric && labels.iter().all(|(k, v)| x.labels.get(k) == Some(*v)))
            .unwrap_or_else(|| panic!("{metric} {labels:?}"))
            .value
            .clone()
    };
    use prometheus_parse::Value as V;
    assert_eq!(
        find("fusebox_breaker_calls_total", &with(("outcome", "failed"))),
        V::Counter(2.0)
    );
    assert_eq!(
        find("fusebox_breaker_state", &with(("state", "open"))),
        V::Gauge(1.0)
    );
    assert_eq!(find("fusebox_breaker_stuck", &me), V::Gauge(1.0));
    assert_eq!(
        find("fusebox_bulkhead_rejected_total", &pl),
        V::Counter(1.0)
    );
    assert!(
        scrape.docs.contains_key("fusebox_breaker_stuck"),
        "HELP lines are read"
    );
    holder.abort();
}

#[tokio::test(start_paused = true)]
async fn keyed_breakers_get_a_key_label_and_odd_names_are_escaped() {
    let template = Breaker::builder(r#"prom "odd" \ name"#).config().unwrap();
    let shard = registry().keyed(&template, &r#"q"uote\back"#);
    ok(&shard, MS).await.unwrap();
    // A control character in a key is percent-encoded in the name itself (issue 18).
    let newline = registry().keyed(&template, &"line\nbreak");
    ok(&newline, MS).await.unwrap();
    let text = fusebox::export::prometheus();
    assert!(
        text.contains(r#"breaker="prom \"odd\" \\ name",key="q\"uote\\back""#),
        "escaped in the text itself"
    );
    assert!(
        text.contains(r#"breaker="prom \"odd\" \\ name",key="line%0Abreak""#),
        "a newline never reaches the text"
    );
    let s = strict_parse(&text);
    let labels = [
        ("breaker", r#"prom "odd" \ name"#),
        ("key", r#"q"uote\back"#),
    ];
    let ok_calls = [labels[0], labels[1], ("outcome", "succeeded")];
    assert_eq!(value(&s, "fusebox_breaker_calls_total", &ok_calls), 1.0);
    let closed = [labels[0], labels[1], ("state", "closed")];
    assert_eq!(value(&s, "fusebox_breaker_state", &closed), 1.0);

    let plain = Breaker::builder("prom-plain").build().unwrap();
    ok(&plain, MS).await.unwrap();
    let s = strict_parse(&fusebox::export::prometheus());
    let (_, l, _) = s
        .iter()
        .find(|(n, l, _)| n == "fusebox_breaker_stuck" && l["breaker"] == "prom-plain")
        .unwrap();
    assert!(
        !l.contains_key("key"),
        "an unkeyed breaker has no key label"
    );
}

#[test]
fn an_empty_snapshot_still_declares_every_family() {
    let text = fusebox::Metrics::default().to_prometheus();
    assert!(strict_parse(&text).is_empty());
    for family in [
        "fusebox_breaker_state",
        "fusebox_breaker_stuck",
        "fusebox_bulkhead_in_flight",
    ] {
        assert!(
            text.contains(&format!("# TYPE {family} gauge\n")),
            "{family}"
        );
    }
    assert!(text.contains("# TYPE fusebox_breaker_calls_total counter\n"));
}
