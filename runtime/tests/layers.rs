//! Keeps the runtime's stack true (ARCHITECTURE.md draws it): every top-level module imports
//! only from modules below it, by the module's own path (`crate::breaker::Breaker`, never a
//! `lib.rs` re-export like `crate::Breaker`); `lib.rs` holds only declarations and re-exports;
//! no source file grows past 600 lines.
//!
//! It reads the sources as text, so it needs no build of its own and fails with the file and
//! the path that broke the rule.

use std::fs;
use std::path::{Path, PathBuf};

/// The top-level modules, low to high, with their layer: a module may use those before it.
const STACK: &[(&str, &str)] = &[
    ("sync", "ground"),
    ("clock", "ground"),
    ("hashing", "ground"),
    ("local_name", "ground"),
    ("state", "ground"),
    ("error", "ground"),
    ("scope_hook", "ground"),
    ("settings", "settings"),
    ("window", "window"),
    ("bulkhead", "bulkhead"),
    ("retry", "retry"),
    ("breaker", "breaker"),
    ("stale", "stale"),
    ("registry", "registry"),
    ("metrics", "metrics"),
    ("testing", "glue"),
    ("call_site", "glue"),
    ("macro_support", "glue"),
    ("retry_after", "glue"),
    ("testing_hooks", "glue"),
    ("into_response", "top"),
    ("tower", "top"),
    ("fleet", "top"),
    ("admin", "top"),
    ("tune", "top"),
];

/// Outside the stack (none today: the simulator is the `fusebox-sim` crate, on the public API).
const OUTSIDE: &[&str] = &[];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The top-level module a file belongs to (`breaker/core.rs` -> `breaker`).
fn module_of(rel: &Path) -> String {
    let first = rel
        .components()
        .next()
        .unwrap()
        .as_os_str()
        .to_str()
        .unwrap();
    first.strip_suffix(".rs").unwrap_or(first).to_owned()
}

fn position(module: &str) -> Option<usize> {
    STACK.iter().position(|(m, _)| *m == module)
}

/// The code of a file without comment lines and without `#[cfg(test)] mod ... { }` blocks
/// (rustfmt puts their closing brace alone at column 0): tests may use the whole crate.
fn code(text: &str) -> String {
    let mut out = String::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        if line.trim() == "#[cfg(test)]" && lines.peek().is_some_and(|l| l.starts_with("mod ")) {
            for l in lines.by_ref() {
                if l == "}" {
                    break;
                }
            }
            continue;
        }
        if line.trim_start().starts_with("//") {
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

fn ident(s: &str) -> &str {
    let end = s
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(s.len());
    &s[..end]
}

/// Every `crate::` path in `code`: the name right after `crate::`, and whether a `::` follows
/// it (a module path) or not (an item reached through `lib.rs`). Groups count per member.
fn crate_paths(code: &str) -> Vec<(String, bool)> {
    let mut found = Vec::new();
    let mut rest = code;
    while let Some(i) = rest.find("crate::") {
        let before = rest[..i].chars().last();
        rest = &rest[i + "crate::".len()..];
        // `$crate::` is a path of a macro's expansion in the user's crate (`__private::site!`
        // names `$crate::__private`, the public path), not an import between layers.
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$') {
            continue;
        }
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            // Nested groups (`a::{b, c}`) only add members of a module already named.
            let mut depth = 0;
            let mut start = 0;
            let inner = &group[..end];
            for (j, c) in inner.char_indices().chain([(inner.len(), ',')]) {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        let member = inner[start..j].trim();
                        if !member.is_empty() {
                            let name = ident(member);
                            found.push((name.to_owned(), member[name.len()..].starts_with("::")));
                        }
                        start = j + 1;
                    }
                    _ => {}
                }
            }
            continue;
        }
        let name = ident(rest);
        found.push((name.to_owned(), rest[name.len()..].starts_with("::")));
    }
    found
}

#[test]
fn every_module_imports_only_from_below_by_its_own_path() {
    let root = src();
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    let mut broken = Vec::new();
    for file in &files {
        let rel = file.strip_prefix(&root).unwrap();
        let module = module_of(rel);
        if module == "lib" || OUTSIDE.contains(&module.as_str()) {
            continue;
        }
        let Some(at) = position(&module) else {
            broken.push(format!(
                "{}: module `{module}` has no place in STACK",
                rel.display()
            ));
            continue;
        };
        for (name, is_module) in crate_paths(&code(&fs::read_to_string(file).unwrap())) {
            if !is_module || position(&name).is_none() {
                broken.push(format!(
                    "{}: `crate::{name}` goes through lib.rs; name the module that defines it",
                    rel.display()
                ));
            } else if position(&name) > Some(at) {
                let upper = STACK[position(&name).unwrap()];
                broken.push(format!(
                    "{}: `{module}` ({}) imports `{name}`, which sits above it ({})",
                    rel.display(),
                    STACK[at].1,
                    upper.1
                ));
            }
        }
    }
    assert!(broken.is_empty(), "\n{}\n", broken.join("\n"));
}

#[test]
fn every_top_level_module_has_a_place_in_the_stack() {
    let lib = fs::read_to_string(src().join("lib.rs")).unwrap();
    for line in code(&lib).lines() {
        let line = line.trim();
        let Some(decl) = line
            .strip_prefix("pub mod ")
            .or_else(|| line.strip_prefix("mod "))
        else {
            continue;
        };
        let name = ident(decl);
        assert!(
            name == "__private" || position(name).is_some() || OUTSIDE.contains(&name),
            "lib.rs declares `{name}`: give it a place in STACK (and in ARCHITECTURE.md)"
        );
    }
}

#[test]
fn lib_rs_holds_only_declarations_and_re_exports() {
    let lib = fs::read_to_string(src().join("lib.rs")).unwrap();
    let text: String = code(&lib)
        .lines()
        .filter(|l| !l.trim_start().starts_with("#"))
        .map(|l| format!("{l}\n"))
        .collect();
    let mut rest = text.trim_start();
    while !rest.is_empty() {
        if let Some(inner) = rest.strip_prefix("pub mod __private {") {
            let end = inner.find("\n}").expect("__private closes at column 0");
            for stmt in inner[..end]
                .split(';')
                .map(str::trim)
                .filter(|s| !s.is_empty())
            {
                assert!(
                    stmt.starts_with("pub use "),
                    "__private holds only re-exports, found: {stmt}"
                );
            }
            rest = inner[end + 2..].trim_start();
            continue;
        }
        let end = rest.find(';').expect("a statement ends with `;`");
        let stmt = &rest[..end];
        assert!(
            stmt.starts_with("mod ")
                || stmt.starts_with("pub mod ")
                || stmt.starts_with("pub use "),
            "lib.rs holds only `mod` declarations and `pub use` re-exports, found: {stmt}"
        );
        rest = rest[end + 1..].trim_start();
    }
}

#[test]
fn no_source_file_is_over_600_lines() {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    for file in files {
        let lines = fs::read_to_string(&file).unwrap().lines().count();
        assert!(lines <= 600, "{}: {lines} lines", file.display());
    }
}

#[test]
fn the_checker_sees_what_it_must_refuse() {
    let code = code(
        "use crate::{Breaker, registry::registry};\n// crate::Hidden\nlet m = crate::metrics();\n",
    );
    assert_eq!(
        crate_paths(&code),
        [
            ("Breaker".to_owned(), false),
            ("registry".to_owned(), true),
            ("metrics".to_owned(), false),
        ]
    );
    let tests = code_of_tests();
    assert!(crate_paths(&tests).is_empty(), "{tests}");
}

fn code_of_tests() -> String {
    code("fn f() {}\n#[cfg(test)]\nmod tests {\n    use crate::Breaker;\n}\n")
}
