//! The likely intended key of a misspelt one: the attributes and text settings suggest the
//! same key in the same words ("did you mean `timeout`?").

/// The closest of `valid` to a misspelt `wrong`, if it is close enough to be a typo (at most
/// two edits, or a third of the key's length for long keys).
///
/// ```
/// use fusebox_settings::suggest;
/// let valid = ["timeout", "half_open_pct", "fallback"];
/// assert_eq!(suggest("timout", &valid), Some("timeout"));
/// assert_eq!(suggest("half_open_percent", &valid), Some("half_open_pct"));
/// assert_eq!(suggest("TIMEOUT", &valid), Some("timeout"));
/// assert_eq!(suggest("colour", &valid), None);
/// ```
pub fn suggest<'a>(wrong: &str, valid: &[&'a str]) -> Option<&'a str> {
    // Case is a typo too: `TIMEOUT` means `timeout`.
    let wrong = wrong.to_ascii_lowercase();
    valid
        .iter()
        .map(|v| (distance(&wrong, v), *v))
        .filter(|(d, v)| *d <= 2.max(v.len() / 3))
        .min_by_key(|(d, _)| *d)
        .map(|(_, v)| v)
}

/// The suggestion as both messages end it: ` (did you mean `key`?)`, or nothing.
pub(crate) fn hint(wrong: &str, valid: &[&str]) -> String {
    match suggest(wrong, valid) {
        Some(s) => format!(" (did you mean `{s}`?)"),
        None => String::new(),
    }
}

/// Levenshtein distance; keys are short, so the quadratic version is fine.
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            cur.push(sub.min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}
