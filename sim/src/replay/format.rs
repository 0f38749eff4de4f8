//! How the summary writes its figures: table rows, durations as the write-ups do, JSON numbers.

/// One row of the comparison table.
pub(super) fn row(a: &str, b: &str, c: String, d: &str) -> [String; 4] {
    [a.to_owned(), b.to_owned(), c, d.to_owned()]
}

/// `3h 02m 10s`-style, or `never` for `None`.
pub(super) fn dur(s: Option<f64>) -> String {
    let Some(s) = s else {
        return "never".to_owned();
    };
    let t = s.round() as u64;
    let (h, m, s) = (t / 3600, t / 60 % 60, t % 60);
    if h > 0 {
        format!("{h}h {m:02}m {s:02}s")
    } else if m > 0 {
        format!("{m}m {s:02}s")
    } else {
        format!("{s}s")
    }
}

/// A JSON number rounded to three decimals, or `null`.
pub(super) fn json_number(v: Option<f64>) -> String {
    match v {
        Some(x) if x.is_finite() => {
            let r = (x * 1000.0).round() / 1000.0;
            format!("{r}")
        }
        _ => "null".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_like_the_write_up() {
        assert_eq!(dur(Some(10_771.0)), "2h 59m 31s");
        assert_eq!(dur(Some(61.0)), "1m 01s");
        assert_eq!(dur(Some(9.4)), "9s");
        assert_eq!(dur(None), "never");
        assert_eq!(json_number(None), "null");
        assert_eq!(json_number(Some(2.0)), "2");
        assert_eq!(json_number(Some(262.5)), "262.5");
    }
}
