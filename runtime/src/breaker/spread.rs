//! Spreading a share of callers evenly: half-open's trials and a ramp's admissions both let
//! through a share of the callers that ask, the first one included, one every `1 / share`.

/// Whether the `n`th caller (counted from 0) is let through when `num / den` of them are:
/// when `ceil(n × num / den)` grows. For 5 %, callers 0, 20, 40...
///
/// `n × num` must fit a `u64`: callers count in `u32` and shares are at most `den ≤ 2^16`.
#[inline]
pub(super) fn admits(n: u64, num: u64, den: u64) -> bool {
    ((n + 1) * num).div_ceil(den) > (n * num).div_ceil(den)
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
}
