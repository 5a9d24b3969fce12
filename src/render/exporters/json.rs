//! JSON: a result as stored (what `--json` prints and `results import` reads), a comparison as
//! computed, and a report as `{"results": [...], "comparisons": [...]}`.

use anyhow::Result;
use serde::Serialize;

use crate::compare::Comparison;
use crate::model::RunResult;

/// Pretty-printed, with a final newline.
pub fn to_json<T: Serialize + ?Sized>(value: &T) -> Result<String> {
    Ok(serde_json::to_string_pretty(value)? + "\n")
}

#[derive(Serialize)]
struct Report<'a> {
    results: Vec<Labelled<'a>>,
    comparisons: &'a [Comparison],
}

#[derive(Serialize)]
struct Labelled<'a> {
    label: &'a str,
    result: &'a RunResult,
}

pub(super) fn fleet(fleet: &crate::fleet::Fleet, _selection: &str) -> Result<String> {
    to_json(fleet)
}

pub(super) fn history(h: &crate::history::Histories) -> Result<String> {
    to_json(h)
}

pub(super) fn result(_id: i64, result: &RunResult) -> Result<String> {
    to_json(result)
}

pub(super) fn comparison(c: &Comparison) -> Result<String> {
    to_json(c)
}

pub(super) fn report(
    results: &[(String, RunResult)],
    comparisons: &[Comparison],
) -> Result<String> {
    let results = results
        .iter()
        .map(|(label, result)| Labelled { label, result })
        .collect();
    to_json(&Report {
        results,
        comparisons,
    })
}
