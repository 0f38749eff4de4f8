//! A time-integrated gauge: busy workers, integrated exactly over virtual time into sample
//! buckets and named windows (no sampling error, whatever the request rate).

/// One named span of time the report summarises.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Span {
    pub(crate) from: u64,
    pub(crate) to: u64,
}

impl Span {
    pub(crate) fn contains(&self, t: u64) -> bool {
        self.from <= t && t < self.to
    }
    fn overlap(&self, a: u64, b: u64) -> u64 {
        b.min(self.to).saturating_sub(a.max(self.from))
    }
}

/// What a meter gathered over one window.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct WindowAcc {
    /// Level × nanoseconds.
    pub(crate) area: f64,
    pub(crate) peak: u64,
    /// First time the level reached the cap inside the window.
    pub(crate) full_at: Option<u64>,
}

pub(crate) struct Meter {
    level: u64,
    last: u64,
    cap: u64,
    bucket: u64,
    /// Level × nanoseconds per bucket; empty when the meter keeps no series.
    pub(crate) buckets: Vec<f64>,
    spans: Vec<Span>,
    pub(crate) windows: Vec<WindowAcc>,
    pub(crate) total: f64,
}

impl Meter {
    /// `bucket == 0` keeps no series.
    pub(crate) fn new(cap: u64, bucket: u64, n_buckets: usize, spans: &[Span]) -> Meter {
        Meter {
            level: 0,
            last: 0,
            cap,
            bucket,
            buckets: if bucket == 0 {
                Vec::new()
            } else {
                vec![0.0; n_buckets]
            },
            spans: spans.to_vec(),
            windows: vec![WindowAcc::default(); spans.len()],
            total: 0.0,
        }
    }

    pub(crate) fn level(&self) -> u64 {
        self.level
    }

    pub(crate) fn up(&mut self, now: u64) {
        self.advance(now);
        self.level += 1;
        for (s, w) in self.spans.iter().zip(&mut self.windows) {
            if s.contains(now) {
                w.peak = w.peak.max(self.level);
                if self.level >= self.cap && w.full_at.is_none() {
                    w.full_at = Some(now);
                }
            }
        }
    }

    pub(crate) fn down(&mut self, now: u64) {
        self.advance(now);
        self.level = self.level.saturating_sub(1);
    }

    /// Integrates the current level up to `now`.
    pub(crate) fn advance(&mut self, now: u64) {
        if now <= self.last {
            return;
        }
        let (a, b) = (self.last, now);
        self.last = now;
        if self.level == 0 {
            return;
        }
        let lvl = self.level as f64;
        self.total += lvl * (b - a) as f64;
        for (s, w) in self.spans.iter().zip(&mut self.windows) {
            let o = s.overlap(a, b);
            if o > 0 {
                w.area += lvl * o as f64;
            }
        }
        if self.bucket == 0 {
            return;
        }
        let mut t = a;
        while t < b {
            let i = (t / self.bucket) as usize;
            let end = ((i as u64 + 1) * self.bucket).min(b);
            if let Some(slot) = self.buckets.get_mut(i) {
                *slot += lvl * (end - t) as f64;
            } else {
                break;
            }
            t = end;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integrates_exactly_across_buckets_and_windows() {
        let spans = [Span { from: 0, to: 10 }, Span { from: 10, to: 20 }];
        let mut m = Meter::new(2, 5, 4, &spans);
        m.up(3); // 1 from 3
        m.up(8); // 2 from 8: full
        m.down(12); // 1 from 12
        m.down(17); // 0 from 17
        m.advance(20);
        assert_eq!(m.buckets, vec![2.0, 3.0 + 4.0, 4.0 + 3.0, 2.0]);
        assert_eq!(m.windows[0].area, 5.0 + 4.0);
        assert_eq!(m.windows[1].area, 4.0 + 5.0);
        assert_eq!(m.windows[0].full_at, Some(8));
        assert_eq!(m.windows[0].peak, 2);
        assert_eq!(m.windows[1].full_at, None);
        assert_eq!(m.total, 18.0);
    }
}
