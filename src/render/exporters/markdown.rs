//! Markdown: tables for a README or a pull request — a result's figures, a comparison in its
//! three sections, and a report as those one after the other.

use anyhow::Result;

use super::csv::better;
use crate::compare::Comparison;
use crate::model::figures::{figures, Figure};
use crate::model::RunResult;
use crate::render::compare::{
    change, ci, header_lines, headline, number, sections, totals, verdict,
};

pub(super) fn history(h: &crate::history::Histories) -> Result<String> {
    Ok(crate::render::history::markdown(h, md_cell))
}

pub(super) fn fleet(f: &crate::fleet::Fleet, selection: &str) -> Result<String> {
    Ok(crate::render::fleet::markdown(f, selection, md_cell))
}

pub(super) fn result(id: i64, result: &RunResult) -> Result<String> {
    Ok(figures_markdown(&format!("result {id}"), &figures(result)))
}

pub(super) fn comparison(c: &Comparison) -> Result<String> {
    Ok(comparison_md(c))
}

pub(super) fn report(
    results: &[(String, RunResult)],
    comparisons: &[Comparison],
) -> Result<String> {
    Ok(super::one_after_another(
        results,
        comparisons,
        |label, r| figures_markdown(label, &figures(r)) + "\n",
        |c| comparison_md(c) + "\n",
    ))
}

/// A table cell: a `|` would end it.
fn md_cell(s: &str) -> String {
    s.replace('|', "\\|")
}

fn figures_markdown(label: &str, figures: &[Figure]) -> String {
    let mut out = format!(
        "## hostbench {label}\n\n| suite | measurement | value | unit | better | samples |\n|---|---|---:|---|---|---:|\n"
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

fn comparison_md(c: &Comparison) -> String {
    let mut out = format!("## hostbench compare\n\n**{}**\n\n", md_cell(&headline(c)));
    for l in header_lines(c) {
        out.push_str(&format!("- {}\n", md_cell(&l)));
    }
    for (title, rows) in sections(c) {
        out.push_str(&format!(
            "\n### {}\n\n| measurement | unit | A | B | change | 95% CI of change | verdict |\n|---|---|---:|---:|---:|---|---|\n",
            md_cell(title)
        ));
        for r in &rows {
            out.push_str(&format!(
                "| {} | {} | {} | {} | {} | {} | {} |\n",
                md_cell(&r.name),
                md_cell(&r.unit),
                number(r.a),
                number(r.b),
                change(r),
                ci(r),
                md_cell(&verdict(r))
            ));
        }
        // What the host's accounts say beside each changed figure, under the table.
        let explained: Vec<&crate::compare::Row> =
            rows.into_iter().filter(|r| r.account.is_some()).collect();
        if !explained.is_empty() {
            out.push('\n');
        }
        for r in explained {
            if let Some(v) = &r.account {
                out.push_str(&format!(
                    "- {}: {}\n",
                    md_cell(&r.name),
                    md_cell(&crate::render::account::verdicts_text(v))
                ));
            }
        }
    }
    out.push_str(&format!("\n{}\n", totals(c)));
    out
}
