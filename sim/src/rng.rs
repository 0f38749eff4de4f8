//! A small seeded generator: simulations must replay the same way on every machine.

/// SplitMix64: tiny, fast, and good enough to draw latencies and failures.
///
/// ```
/// use fusebox_sim::Rng;
/// let (mut a, mut b) = (Rng::new(7), Rng::new(7));
/// assert_eq!(a.next_u64(), b.next_u64());
/// let x = a.next_f64();
/// assert!((0.0..1.0).contains(&x));
/// ```
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator that always yields the same sequence for the same seed.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// A generator for one named part of a simulation, independent of the others'.
    ///
    /// ```
    /// use fusebox_sim::Rng;
    /// assert_ne!(Rng::derived(1, "a").next_u64(), Rng::derived(1, "b").next_u64());
    /// ```
    pub fn derived(seed: u64, name: &str) -> Rng {
        // FNV-1a of the name, so that each dependency draws its own stream.
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in name.bytes() {
            h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
        Rng(seed ^ h)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A uniform draw from `[0, 1)`.
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// True with probability `p`.
    ///
    /// ```
    /// use fusebox_sim::Rng;
    /// let mut r = Rng::new(1);
    /// assert!(!r.chance(0.0));
    /// assert!(r.chance(1.0));
    /// ```
    pub fn chance(&mut self, p: f64) -> bool {
        self.next_f64() < p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_are_uniform_enough() {
        let mut r = Rng::new(42);
        let n = 100_000;
        let mean = (0..n).map(|_| r.next_f64()).sum::<f64>() / n as f64;
        assert!((mean - 0.5).abs() < 0.01, "mean {mean}");
        let hits = (0..n).filter(|_| r.chance(0.05)).count();
        assert!((4_500..5_500).contains(&hits), "hits {hits}");
    }
}
