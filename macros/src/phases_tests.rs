//! The phases' dependencies go one way: each module names only modules before it in
//! [`STACK`] (parse, then validate, then expand), as thiserror-impl's ast → attr → valid →
//! expand. A new module needs a place here.

/// Every module, lowest first.
const STACK: &[&str] = &[
    // Shared by all phases.
    "tokens",
    // Phase 1, parse: the argument lists, the item, the attributes.
    "args",
    "checks",
    "breaker_args",
    "bulkhead_args",
    "retry_args",
    "ast",
    "attr",
    // Phase 2, validate.
    "shape",
    "signature",
    "retry_checks",
    "valid",
    // Phase 3, expand.
    "emit",
    "fallback",
    "stale",
    "setup",
    "retry_expand",
    "expand",
];

/// The sources, by module name (tests and `lib.rs` are not modules of a phase).
fn sources() -> Vec<(String, String)> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).expect("macros/src") {
        let path = entry.expect("an entry").path();
        let name = path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or_default();
        if name == "lib" || name.ends_with("_tests") {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("a source file");
        out.push((name.to_owned(), text));
    }
    out
}

/// The `crate::module` paths a source names.
fn named(text: &str) -> Vec<String> {
    text.match_indices("crate::")
        .map(|(i, _)| {
            text[i + 7..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect()
        })
        .collect()
}

#[test]
fn every_module_uses_only_the_ones_below_it() {
    let place = |m: &str| STACK.iter().position(|s| *s == m);
    for (module, text) in sources() {
        let at = place(&module).unwrap_or_else(|| panic!("`{module}` has no place in STACK"));
        for used in named(&text) {
            let below = place(&used).is_some_and(|u| u < at);
            assert!(
                below,
                "`{module}` uses `crate::{used}`, which is not below it in STACK"
            );
        }
    }
}
