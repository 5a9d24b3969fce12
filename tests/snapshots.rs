//! Snapshot tests of the text, Markdown and HTML renderings (insta): two stored results of a
//! real `run --profile smoke` (tests/fixtures/), imported into a private store and rendered by
//! the real binary through `results show`, `compare` and `report`. A change of any rendering
//! shows up as a diff against tests/snapshots/; review it and accept it with
//! `INSTA_UPDATE=always cargo test --test snapshots` (or `cargo insta review`).

mod common;

use common::Sandbox;

const A: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/smoke-a.json");
const B: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/smoke-b.json");

/// A sandbox whose store holds the two fixtures as results 1 and 2.
fn store() -> Sandbox {
    let s = Sandbox::new();
    s.cmd().args(["results", "import", A, B]).assert().success();
    s
}

fn stdout(s: &Sandbox, args: &[&str]) -> String {
    let out = s.cmd().args(args).assert().success();
    String::from_utf8(out.get_output().stdout.clone()).unwrap()
}

#[test]
fn a_result_as_text() {
    let s = store();
    insta::assert_snapshot!(stdout(&s, &["results", "show", "1"]));
}

#[test]
fn a_result_as_markdown() {
    let s = store();
    insta::assert_snapshot!(stdout(
        &s,
        &["results", "show", "1", "--format", "markdown"]
    ));
}

#[test]
fn a_result_as_html() {
    let s = store();
    insta::assert_snapshot!(stdout(&s, &["results", "show", "1", "--format", "html"]));
}

#[test]
fn a_comparison_as_text() {
    let s = store();
    insta::assert_snapshot!(stdout(&s, &["compare", "1", "2"]));
}

#[test]
fn a_comparison_as_markdown() {
    let s = store();
    insta::assert_snapshot!(stdout(&s, &["compare", "1", "2", "--format", "markdown"]));
}

#[test]
fn a_report_as_html() {
    let s = store();
    insta::assert_snapshot!(stdout(&s, &["report", "1", "2", "-o", "-"]));
}

#[test]
fn a_report_as_markdown() {
    let s = store();
    insta::assert_snapshot!(stdout(&s, &["report", "1", "2", "--format", "markdown"]));
}
