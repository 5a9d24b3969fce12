//! CSV: one row per measurement with stable column names — a result's figures, or a
//! comparison's rows.

use anyhow::Result;

use super::{Exporter, Shown};
use crate::compare::Comparison;
use crate::model::figures::{figures, Better, Figure};
use crate::model::RunResult;
use crate::stats::Summary;

pub struct Csv;

impl Exporter for Csv {
    fn shows(&self) -> &'static [Shown] {
        &[
            Shown::Result,
            Shown::Comparison,
            Shown::Fleet,
            Shown::History,
        ]
    }

    fn history(&self, h: &crate::history::Histories) -> Option<Result<String>> {
        Some(crate::render::history::csv(h))
    }

    fn fleet(&self, fleet: &crate::fleet::Fleet, _selection: &str) -> Option<Result<String>> {
        Some(fleet_csv(fleet))
    }

    fn result(&self, id: i64, result: &RunResult) -> Option<Result<String>> {
        Some(figures_csv(id, &figures(result)))
    }

    fn comparison(&self, c: &Comparison) -> Option<Result<String>> {
        Some(comparison_csv(c))
    }
}

/// The stable CSV columns of `results export --format csv`.
pub const CSV_COLUMNS: [&str; 13] = [
    "result_id",
    "suite",
    "key",
    "name",
    "unit",
    "better",
    "value",
    "samples",
    "sample_mean",
    "sample_sd",
    "sample_min",
    "sample_max",
    "sample_kind",
];

pub(super) fn better(b: Better) -> &'static str {
    match b {
        Better::Higher => "higher",
        Better::Lower => "lower",
    }
}

/// One row per figure.
fn figures_csv(id: i64, figures: &[Figure]) -> Result<String> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(CSV_COLUMNS)?;
    for f in figures {
        let s = Summary::of(&f.samples);
        let opt = |x: Option<f64>| x.map(|v| v.to_string()).unwrap_or_default();
        w.write_record([
            id.to_string(),
            f.suite.clone(),
            f.key.clone(),
            f.name.clone(),
            f.unit.clone(),
            better(f.better).to_string(),
            f.value.to_string(),
            f.samples.len().to_string(),
            opt(s.map(|s| s.mean)),
            opt(s.filter(|s| s.count > 1).map(|s| s.sd)),
            opt(s.map(|s| s.min)),
            opt(s.map(|s| s.max)),
            f.sample_kind.clone(),
        ])?;
    }
    Ok(String::from_utf8(w.into_inner()?)?)
}

/// The stable CSV columns of `compare --format csv`.
pub const COMPARE_COLUMNS: [&str; 15] = [
    "key",
    "suite",
    "name",
    "unit",
    "better",
    "a",
    "b",
    "change_pct",
    "ci_low_pct",
    "ci_high_pct",
    "p_value",
    "samples_a",
    "samples_b",
    "verdict",
    "why_not_tested",
];

/// One row per compared figure.
fn comparison_csv(c: &Comparison) -> Result<String> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(COMPARE_COLUMNS)?;
    for r in &c.rows {
        let opt = |x: Option<f64>| x.map(|v| v.to_string()).unwrap_or_default();
        w.write_record([
            r.key.clone(),
            r.suite.clone(),
            r.name.clone(),
            r.unit.clone(),
            better(r.better).to_string(),
            r.a.to_string(),
            r.b.to_string(),
            r.change_pct.to_string(),
            opt(r.ci_pct.map(|c| c[0])),
            opt(r.ci_pct.map(|c| c[1])),
            opt(r.p_value),
            r.samples_a.to_string(),
            r.samples_b.to_string(),
            r.verdict.label().to_string(),
            r.why_not_tested.clone().unwrap_or_default(),
        ])?;
    }
    Ok(String::from_utf8(w.into_inner()?)?)
}

/// The stable CSV columns of `report --fleet --format csv`.
pub const FLEET_COLUMNS: [&str; 8] = [
    "host",
    "figure",
    "unit",
    "value",
    "measured_as",
    "source",
    "outside",
    "from_median_pct",
];

/// A text cell as a spreadsheet will not take it for a formula: one that begins with `=`,
/// `+`, `-`, `@`, a tab or a carriage return gets a leading `'` (OWASP's advice on CSV
/// injection). Numbers are written as they are; this is for names and labels.
pub(super) fn text_cell(s: &str) -> String {
    if s.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        format!("'{s}")
    } else {
        s.to_string()
    }
}

/// One row per host and figure it has.
fn fleet_csv(f: &crate::fleet::Fleet) -> Result<String> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(FLEET_COLUMNS)?;
    for row in &f.rows {
        for (c, cell) in f.columns.iter().zip(&row.cells) {
            let Some(cell) = cell else { continue };
            w.write_record([
                text_cell(&row.host),
                crate::render::fleet::key(*c).to_string(),
                c.unit().to_string(),
                cell.value.to_string(),
                cell.kind.clone(),
                text_cell(&cell.source),
                match cell.outside {
                    Some(crate::fleet::Outside::Worse) => "worse",
                    Some(crate::fleet::Outside::Better) => "better",
                    None => "",
                }
                .to_string(),
                cell.from_median_pct
                    .map_or(String::new(), |p| format!("{p:.3}")),
            ])?;
        }
    }
    Ok(String::from_utf8(w.into_inner()?)?)
}
