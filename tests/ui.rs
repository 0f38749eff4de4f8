//! Compile-time behaviour of the attributes: every accepted shape builds, every mistake gets
//! the error in its `.stderr` file (regenerate with `TRYBUILD=overwrite`, then read each one).

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.pass("tests/ui/pass/*.rs");
    t.compile_fail("tests/ui/fail/*.rs");
}
