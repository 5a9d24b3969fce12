//! JSON: a result as stored (what `--json` prints and `results import` reads), a comparison as
//! computed, and a report as `{"results": [...], "comparisons": [...]}`.

use anyhow::Result;
use serde::Serialize;

use super::{Exporter, Shown};
use crate::compare::Comparison;
use crate::model::RunResult;

pub struct Json;

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

impl Exporter for Json {
    fn shows(&self) -> &'static [Shown] {
        Shown::ALL
    }

    fn fleet(&self, fleet: &crate::fleet::Fleet, _selection: &str) -> Option<Result<String>> {
        Some(to_json(fleet))
    }

    fn history(&self, h: &crate::history::Histories) -> Option<Result<String>> {
        Some(to_json(h))
    }

    fn result(&self, _id: i64, result: &RunResult) -> Option<Result<String>> {
        Some(to_json(result))
    }

    fn comparison(&self, c: &Comparison) -> Option<Result<String>> {
        Some(to_json(c))
    }

    fn report(
        &self,
        results: &[(String, RunResult)],
        comparisons: &[Comparison],
    ) -> Option<Result<String>> {
        let results = results
            .iter()
            .map(|(label, result)| Labelled { label, result })
            .collect();
        Some(to_json(&Report {
            results,
            comparisons,
        }))
    }
}
