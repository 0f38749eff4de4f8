//! The few query parameters the admin routes take (`scope`, `for`, `by`), percent-decoded.

/// `a=1&b=x%20y` as pairs. The routes parse with `parse_once`, which refuses a key given twice;
/// `parse` alone (its tests) keeps the first value.
pub(super) struct Query(Vec<(String, String)>);

impl Query {
    pub(super) fn parse(raw: Option<&str>) -> Query {
        let pairs = raw
            .unwrap_or("")
            .split('&')
            .filter(|p| !p.is_empty())
            .map(|p| {
                let (k, v) = p.split_once('=').unwrap_or((p, ""));
                (decode(k), decode(v))
            })
            .collect();
        Query(pairs)
    }

    /// Every key given, in order.
    pub(super) fn keys(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(|(k, _)| k.as_str())
    }

    /// Every pair given, in order (a repeated key too).
    pub(super) fn pairs(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// The request's query, unless it gives a key twice: `?for=10m&for=1h` says two things,
    /// and reading one of them would act on a guess. The error (a 400's body) names the key.
    pub(super) fn parse_once(raw: Option<&str>) -> Result<Query, String> {
        let q = Query::parse(raw);
        let twice =
            q.0.iter()
                .enumerate()
                .find(|(i, (k, _))| q.0[..*i].iter().any(|(seen, _)| seen == k));
        match twice {
            Some((_, (k, _))) => Err(format!("`{k}` is given twice: give each key once\n")),
            None => Ok(q),
        }
    }

    pub(super) fn get(&self, key: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

/// `+` and `%XX` decoding; a malformed escape stays as written.
fn decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        match b[i] {
            b'+' => out.push(b' '),
            b'%' => match (
                b.get(i + 1).and_then(|&c| hex(c)),
                b.get(i + 2).and_then(|&c| hex(c)),
            ) {
                (Some(h), Some(l)) => {
                    out.push((h * 16 + l) as u8);
                    i += 2;
                }
                _ => out.push(b'%'),
            },
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_pairs_and_keeps_the_first_of_a_repeated_key() {
        let q = Query::parse(Some(
            "scope=fleet&for=10m&by=alice%40ops+team&for=1s&bad=%zz&flag",
        ));
        assert_eq!(q.get("scope"), Some("fleet"));
        assert_eq!(q.get("for"), Some("10m"));
        assert_eq!(q.get("by"), Some("alice@ops team"));
        assert_eq!(q.get("bad"), Some("%zz"));
        assert_eq!(q.get("flag"), Some(""));
        assert_eq!(q.get("none"), None);
        assert_eq!(Query::parse(None).get("scope"), None);
    }
}
