//! fusebox against the bare call and the other Rust resilience crates, in one run.
//!
//! `cargo bench -p fusebox-benches --bench compare` (add `-- --quick` for a fast pass).
//! Each group compares like with like; BENCHMARKS.md explains the settings.
//!
//! One file per path: `closed`, `recovering` (open and half-open), `bulkhead`, `contention`,
//! `keyed`, and `issue_rows` (issue 28's table, single-thread and contended); `peers`
//! configures the breakers under test.

mod bulkhead;
mod closed;
mod contention;
mod issue_rows;
mod keyed;
mod peers;
mod recovering;

use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};

use bulkhead::bulkhead;
use closed::{closed_healthy, closed_ten_percent_failures, closed_timed};
use contention::contention;
use issue_rows::issue_rows;
use keyed::keyed;
use recovering::{half_open_admission, open_rejection};

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    targets = closed_healthy, closed_timed, closed_ten_percent_failures, open_rejection,
        half_open_admission, bulkhead, contention, keyed, issue_rows
}
criterion_main!(benches);
