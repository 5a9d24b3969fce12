//! Text for a terminal: a result's full report (the environment, then each suite as its
//! original printed it), `compare`'s table, and a report as those one after the other.

use anyhow::Result;

use crate::compare::Comparison;
use crate::model::RunResult;
use crate::render;

pub(super) fn fleet(fleet: &crate::fleet::Fleet, selection: &str) -> Result<String> {
    Ok(crate::render::fleet::text(fleet, selection))
}

pub(super) fn history(h: &crate::history::Histories) -> Result<String> {
    Ok(render::history::text(h))
}

pub(super) fn result(_id: i64, result: &RunResult) -> Result<String> {
    Ok(render::text_report(result))
}

pub(super) fn comparison(c: &Comparison) -> Result<String> {
    Ok(render::compare::text(c))
}

pub(super) fn report(
    results: &[(String, RunResult)],
    comparisons: &[Comparison],
) -> Result<String> {
    Ok(super::one_after_another(
        results,
        comparisons,
        |label, r| format!("=== {label} ===\n{}\n", render::text_report(r)),
        render::compare::text,
    ))
}
