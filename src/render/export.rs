//! `results export`: a result's figures as CSV (stable columns) or Markdown.

use anyhow::Result;

use super::compare::{md_cell, number};
use crate::model::figures::{Better, Figure};
use crate::stats::Summary;

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

fn better(b: Better) -> &'static str {
    match b {
        Better::Higher => "higher",
        Better::Lower => "lower",
    }
}

/// One row per figure.
pub fn figures_csv(id: i64, figures: &[Figure]) -> Result<String> {
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

pub fn figures_markdown(id: i64, figures: &[Figure]) -> String {
    let mut out = format!(
        "## hostbench result {id}\n\n| suite | measurement | value | unit | better | samples |\n|---|---|---:|---|---|---:|\n"
    );
    for f in figures {
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} |\n",
            f.suite,
            md_cell(&f.name),
            number(f.value),
            md_cell(&f.unit),
            better(f.better),
            f.samples.len()
        ));
    }
    out
}
