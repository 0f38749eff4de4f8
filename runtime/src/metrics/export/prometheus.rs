//! The Prometheus text exposition format (version 0.0.4), as a scraper reads it.

use std::fmt::Write as _;

use super::samples::{visit, Family, Kind, Num, Sink};
use crate::metrics::snapshot::Metrics;

impl Metrics {
    /// This snapshot in the Prometheus text exposition format.
    ///
    /// Names start with `fusebox_`; breakers carry a `breaker` label (the name without its key)
    /// and, when keyed, a `key` label; bulkheads a `bulkhead` label. Every family has its
    /// `# HELP` and `# TYPE` lines, durations are in seconds and shares in ratios from 0 to 1.
    ///
    /// ```
    /// use fusebox::Breaker;
    /// use fusebox::metrics::Metrics;
    /// let b = Breaker::builder("prometheus-doc").build_detached().unwrap();
    /// let mut m = Metrics::default();
    /// m.breakers.push(b.metrics());
    /// let text = m.to_prometheus();
    /// assert!(text.contains("# TYPE fusebox_breaker_state gauge\n"));
    /// assert!(text.contains(r#"fusebox_breaker_state{breaker="prometheus-doc",state="open"} 0"#));
    /// assert!(text.contains(r#"fusebox_breaker_stuck{breaker="prometheus-doc"} 0"#));
    /// ```
    pub fn to_prometheus(&self) -> String {
        let mut w = Text(String::with_capacity(
            256 + 2048 * (self.breakers.len() + self.bulkheads.len()),
        ));
        visit(self, &mut w);
        w.0
    }
}

struct Text(String);

impl Sink for Text {
    fn family(&mut self, f: &Family) {
        let kind = match f.kind {
            Kind::Counter => "counter",
            Kind::Gauge => "gauge",
        };
        // Writing to a String cannot fail.
        let _ = writeln!(self.0, "# HELP {} {}", f.name, escape_help(f.help));
        let _ = writeln!(self.0, "# TYPE {} {kind}", f.name);
    }

    fn sample(&mut self, f: &Family, labels: &[(&'static str, &str)], value: Num) {
        let out = &mut self.0;
        out.push_str(f.name);
        if !labels.is_empty() {
            out.push('{');
            for (i, (k, v)) in labels.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(k);
                out.push_str("=\"");
                escape_label_into(out, v);
                out.push('"');
            }
            out.push('}');
        }
        out.push(' ');
        let _ = match value {
            Num::Int(n) => write!(out, "{n}"),
            Num::Float(x) => write_float(out, x),
        };
        out.push('\n');
    }
}

/// Go's float syntax: `NaN`, `+Inf`, `-Inf`, otherwise Rust's shortest round-trip digits.
fn write_float(out: &mut String, x: f64) -> std::fmt::Result {
    if x.is_nan() {
        out.push_str("NaN");
        Ok(())
    } else if x.is_infinite() {
        out.push_str(if x > 0.0 { "+Inf" } else { "-Inf" });
        Ok(())
    } else {
        write!(out, "{x}")
    }
}

/// Label values escape backslash, double quote and line feed.
pub(crate) fn escape_label_into(out: &mut String, v: &str) {
    for c in v.chars() {
        match c {
            '\\' => out.push_str(r"\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str(r"\n"),
            c => out.push(c),
        }
    }
}

/// HELP text escapes backslash and line feed (not quotes).
fn escape_help(v: &str) -> String {
    v.replace('\\', r"\\").replace('\n', r"\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn label_values_escape_backslash_quote_and_newline() {
        let mut s = String::new();
        escape_label_into(&mut s, "a\\b\"c\nd");
        assert_eq!(s, r#"a\\b\"c\nd"#);
    }

    #[test]
    fn floats_use_go_spelling() {
        let mut s = String::new();
        for x in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 0.25, 1.0] {
            write_float(&mut s, x).unwrap();
            s.push(' ');
        }
        assert_eq!(s, "NaN +Inf -Inf 0.25 1 ");
    }
}
