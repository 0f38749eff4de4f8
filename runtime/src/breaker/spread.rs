//! Spreading a share of callers evenly: half-open's trials and a ramp's admissions both let
//! through a share of the callers that ask, the first one included, one every `1 / share`.

/// Whether the `n`th caller (counted from 0) is let through when `num / den` of them are:
/// when `ceil(n × num / den)` grows. For 5 %, callers 0, 20, 40...
///
/// `n × num` must fit a `u64`: callers count in `u32` and shares are at most `den ≤ 2^16`.
#[inline]
pub(super) fn admits(n: u64, num: u64, den: u64) -> bool {
    crosses(n * num, num, den)
}

/// Whether the caller whose share is the stretch `(before, before + share]` of the callers'
/// summed shares (in `1 / den`ths of a call) is let through: when a whole call ends in it. A
/// share that moves between callers (the ramp's) is spread evenly only this way: with
/// [`admits`]'s `n x share`, a share growing by `d` a caller skips `n x d` of the line at each
/// step, and half-way through a ramp (where `share + n x d` nears a whole call) its phase
/// freezes, refusing or admitting dozens of callers in a row.
#[inline]
pub(super) fn crosses(before: u64, share: u64, den: u64) -> bool {
    (before + share).div_ceil(den) > before.div_ceil(den)
}

#[cfg(test)]
mod tests {
    use super::admits;

    #[test]
    fn a_share_admits_the_first_caller_then_one_in_every_1_over_share() {
        let five_pct: Vec<u64> = (0..100).filter(|n| admits(*n, 5, 100)).collect();
        assert_eq!(five_pct, [0, 20, 40, 60, 80]);
        assert_eq!((0..10).filter(|n| admits(*n, 100, 100)).count(), 10);
        assert_eq!((0..10).filter(|n| admits(*n, 0, 100)).count(), 0);
        // A quarter in 1/65536ths, as the ramp counts.
        assert_eq!((0..16).filter(|n| admits(*n, 1 << 14, 1 << 16)).count(), 4);
    }

    #[test]
    fn a_growing_share_summed_caller_by_caller_admits_what_it_says_and_never_bunches() {
        // A ramp from 20 % to 100 % over 400 callers, as `ramp.rs` sums it.
        let (one, n) = (1u64 << 16, 400u64);
        let mut before = 0;
        let admitted: Vec<bool> = (0..n)
            .map(|i| {
                let share = ((0.2 + 0.8 * i as f64 / n as f64) * one as f64) as u64;
                let admit = super::crosses(before, share, one);
                before += share;
                admit
            })
            .collect();
        assert!(admitted[0], "the first caller is let through");
        for (bin, calls) in admitted.chunks(50).enumerate() {
            let share = 0.2 + 0.8 * (50.0 * bin as f64 + 25.0) / n as f64;
            let got = calls.iter().filter(|a| **a).count() as f64 / 50.0;
            assert!((got - share).abs() <= 0.03, "bin {bin}: {got} for {share}");
        }
        // Past half, never two refusals in a row (`n x share` refused 14 in a row at 60 %).
        let refused_in_a_row = admitted[200..]
            .windows(2)
            .filter(|w| !w[0] && !w[1])
            .count();
        assert_eq!(refused_in_a_row, 0);
    }
}
