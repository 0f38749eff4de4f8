//! Turning the book of a finished run into its [`Report`].

use std::time::Duration;

use super::engine::{per, Shared};
use super::report::{
    BreakerTimeline, Counts, Report, RouteReport, RouteWindow, Series, WindowReport,
};

impl Shared {
    /// The report of the run, which ended at `end` (ns since its start).
    pub(super) fn report(&self, end: u64) -> Report {
        self.observe_all();
        let mut b = self.book.borrow_mut();
        b.busy.advance(end);
        for m in &mut b.route_busy {
            m.advance(end);
        }
        let secs = |ns: u64| Duration::from_nanos(ns);
        let w = self.workers as f64;
        let routes = self
            .routes
            .iter()
            .enumerate()
            .map(|(i, r)| RouteReport {
                name: r.name.clone(),
                counts: b.counts[i],
                mean_busy: per(b.route_busy[i].total, end),
            })
            .collect();
        let windows = self
            .spans
            .iter()
            .enumerate()
            .map(|(k, s)| {
                let to = s.to.min(end).max(s.from);
                let len = to.saturating_sub(s.from);
                let acc = b.busy.windows[k];
                let mut counts = Counts::default();
                let per_route = self
                    .routes
                    .iter()
                    .enumerate()
                    .map(|(i, r)| {
                        counts.add(&b.window_counts[i][k]);
                        RouteWindow {
                            name: r.name.clone(),
                            counts: b.window_counts[i][k],
                            mean_busy: per(b.route_busy[i].windows[k].area, len),
                        }
                    })
                    .collect();
                WindowReport {
                    name: self.window_names[k].clone(),
                    from: secs(s.from),
                    to: secs(to),
                    utilization: per(acc.area, len) / w,
                    peak_busy: acc.peak,
                    full_after: acc.full_at.map(|t| secs(t - s.from)),
                    counts,
                    routes: per_route,
                }
            })
            .collect();
        let breakers: Vec<BreakerTimeline> = b
            .tracks
            .iter()
            .map(|t| {
                BreakerTimeline::new(
                    t.breaker.name(),
                    t.transitions
                        .iter()
                        .map(|(at, s)| (secs(*at), *s))
                        .collect(),
                )
            })
            .collect();
        let n_buckets = (end.div_ceil(self.bucket) as usize).min(b.bucket_counts.len());
        let step = secs(self.bucket);
        let mut series = Series {
            step,
            pool: b.pool.iter().copied().take(n_buckets).collect(),
            ..Series::default()
        };
        for k in 0..n_buckets {
            let from = k as u64 * self.bucket;
            let len = (from + self.bucket).min(end) - from;
            series.utilization.push(per(b.busy.buckets[k], len) / w);
            let c = &b.bucket_counts[k];
            series.fallback.push(c.fallback_share());
            series.shed.push(c.shed_share());
            let (a, z) = (secs(from), secs(from + len));
            let open: f64 = breakers
                .iter()
                .map(|t| t.not_closed_in(a, z).as_secs_f64())
                .sum();
            let denom = len as f64 / 1e9 * breakers.len().max(1) as f64;
            series
                .not_closed
                .push(if denom > 0.0 { open / denom } else { 0.0 });
        }
        Report {
            workers: self.workers as usize,
            duration: secs(end),
            utilization: per(b.busy.total, end) / w,
            routes,
            windows,
            breakers,
            series,
        }
    }
}
