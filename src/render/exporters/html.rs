//! HTML: `report`'s self-contained page (see `render::report`) for a report or one result, and
//! the one HTML escape every page and plot uses.

use anyhow::Result;

use crate::compare::Comparison;
use crate::model::RunResult;
use crate::render::report;

/// The one HTML escape, kept beside the SVG builder (which every page uses) so that the
/// renderers that need it need nothing of the exporters.
pub use crate::render::svg::esc;

pub(super) fn history(h: &crate::history::Histories) -> Result<String> {
    Ok(crate::render::history::html(h))
}

pub(super) fn fleet(fleet: &crate::fleet::Fleet, selection: &str) -> Result<String> {
    Ok(crate::render::fleet::html(fleet, selection))
}

pub(super) fn result(id: i64, result: &RunResult) -> Result<String> {
    Ok(report::html(
        &[(format!("result {id}"), result.clone())],
        &[],
    ))
}

pub(super) fn report(
    results: &[(String, RunResult)],
    comparisons: &[Comparison],
) -> Result<String> {
    Ok(report::html(results, comparisons))
}
