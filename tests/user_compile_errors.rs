//! One mistake, one error, as a user's own crate sees it. trybuild (`tests/ui.rs`) showed one
//! error for a fallback of the wrong return type while `cargo check` in a user's crate showed
//! two (the second, "`Option<u32>` is not a future", where the answer was awaited): something in
//! trybuild's collection drops it. So these cases are also checked the way a user meets them: a
//! fresh crate depending on `fusebox` by path, `cargo check --offline` with the workspace's
//! lockfile, every compiler error counted.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The UI cases whose mistake is the fallback's return type, plus the same mistake under
/// `#[retry]`, whose expansion awaits the answer in another place.
const CASES: &[&str] = &[
    "fallback_wrong_return",
    "fallback_args_wrong_return",
    "fallback_async_wrong_return",
    "fallback_method_wrong_return",
    "fallback_plain_wrong_return",
    "fallback_closure_wrong_return",
];

/// What every case below starts with: an error type fusebox can answer with.
const PRELUDE: &str = r#"
use fusebox::{breaker, retry, Error, Rejection};
#[derive(Debug, Clone)]
pub struct MyError;
impl From<Rejection> for MyError {
    fn from(_: Rejection) -> Self {
        MyError
    }
}
fn main() {}
"#;

const UNDER_RETRY: &str = r#"
#[breaker(fallback = cached)]
#[retry(attempts = 3)]
async fn lookup(id: u32) -> Result<u32, MyError> {
    Ok(id)
}
fn cached(_: &u32, _: Error<MyError>) -> Option<u32> {
    Some(0)
}
"#;

/// The same under `#[retry]` with an argument taken by value, lent through `Lent` and
/// `EitherFallback` (one more trait between the fallback and its answer).
const UNDER_RETRY_BY_VALUE: &str = r#"
#[derive(Debug, Clone)]
pub struct Order;
#[breaker(fallback = cached)]
#[retry(attempts = 3)]
async fn lookup(order: Order, id: u32) -> Result<u32, MyError> {
    let _ = order;
    Ok(id)
}
fn cached(_: &Order, _: &u32, _: Error<MyError>) -> Option<u32> {
    Some(0)
}
"#;

/// A user's crate in the test's scratch directory, depending on this workspace's facade.
fn user_crate() -> PathBuf {
    user_crate_as("user-crate", "fusebox = { path = PATH }")
}

/// A user's crate in `name`, depending on the facade by `dependency`, a `Cargo.toml` line
/// whose `PATH` is the facade's (a renamed dependency: `fb = { package = "fusebox", .. }`).
fn user_crate_as(name: &str, dependency: &str) -> PathBuf {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    std::fs::create_dir_all(dir.join("src")).unwrap();
    let path = format!("{:?}", workspace.display().to_string());
    let manifest = format!(
        "[package]\nname = \"user-crate\"\nversion = \"0.1.0\"\nedition = \"2021\"\npublish = false\n\n\
         [dependencies]\n{}\n\n[workspace]\n",
        dependency.replace("PATH", &path)
    );
    std::fs::write(dir.join("Cargo.toml"), manifest).unwrap();
    std::fs::copy(workspace.join("Cargo.lock"), dir.join("Cargo.lock")).unwrap();
    dir
}

/// The compiler's errors for `source` as the crate's `main.rs`.
fn errors(dir: &Path, source: &str) -> Vec<String> {
    std::fs::write(dir.join("src/main.rs"), source).unwrap();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", dir.join("target"))
        .env_remove("RUSTFLAGS")
        .args(["check", "--offline", "--quiet", "--message-format=json"])
        .output()
        .expect("cargo runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let errors: Vec<String> = stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|m| m["reason"] == "compiler-message" && m["message"]["level"] == "error")
        .map(|m| {
            m["message"]["message"]
                .as_str()
                .unwrap_or_default()
                .to_owned()
        })
        .collect();
    assert!(
        !out.status.success(),
        "the case compiled: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        !errors.is_empty(),
        "no compiler error, so cargo itself failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    errors
}

#[test]
fn a_fallback_of_the_wrong_return_type_is_one_error_in_a_users_crate() {
    let dir = user_crate();
    let ui = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/ui/fail");
    let mut cases: Vec<(String, String)> = CASES
        .iter()
        .map(|c| {
            let source = std::fs::read_to_string(ui.join(format!("{c}.rs"))).unwrap();
            (c.to_string(), source)
        })
        .collect();
    cases.push(("under #[retry]".into(), format!("{PRELUDE}{UNDER_RETRY}")));
    cases.push((
        "under #[retry], by value".into(),
        format!("{PRELUDE}{UNDER_RETRY_BY_VALUE}"),
    ));
    for (case, source) in cases {
        let errors = errors(&dir, &source);
        assert_eq!(errors.len(), 1, "{case}: {errors:#?}");
        assert!(
            errors[0].contains("fallback") || errors[0].contains("resolves to"),
            "{case}: {errors:#?}"
        );
    }
}

/// trybuild links the facade as `fusebox`, so `tests/ui/fail/bad_crate.rs` can only give a wrong
/// `crate = ".."`; a dependency renamed in `Cargo.toml` and no `crate =` is checked here: one
/// error, at the attribute, whose note says to name the crate with `crate =`.
#[test]
fn a_renamed_dependency_without_crate_is_one_error_in_a_users_crate() {
    let dir = user_crate_as(
        "user-crate-renamed",
        r#"fb = { package = "fusebox", path = PATH }"#,
    );
    let source = r#"
use fb::{breaker, bulkhead, Rejection};
#[breaker(name = "renamed", timeout = "1s")]
#[bulkhead(pool = 2)]
async fn lookup() -> Result<u32, Rejection> {
    Ok(1)
}
fn main() {
    let _ = lookup();
}
"#;
    let errors = errors(&dir, source);
    assert_eq!(errors.len(), 1, "{errors:#?}");
    assert!(
        errors[0].contains("unresolved import `fusebox`"),
        "{errors:#?}"
    );
}
