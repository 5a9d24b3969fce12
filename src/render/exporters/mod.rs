//! Rendering by format, behind one trait (as hyperfine's exporters): each format is one file
//! that implements what it supports — one result in full (`results show`, `results export`), a
//! comparison (`compare`), a report of several results and their comparisons (`report`) — and
//! leaves the rest to the trait's default, "not a format for this". The commands choose the
//! format with one `--format` and write with one `-o`.

mod csv;
pub mod html;
pub mod json;
mod markdown;
mod text;

use anyhow::Result;

use crate::compare::Comparison;
use crate::fleet::Fleet;
use crate::model::RunResult;

/// The formats of `results show`, `results export`, `compare` and `report`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// For a terminal
    Text,
    /// The whole result or comparison, as stored or computed
    Json,
    /// One row per measurement, stable column names
    Csv,
    /// Tables for a README or a pull request
    Markdown,
    /// A self-contained page with plots
    Html,
}

impl Format {
    pub fn name(self) -> &'static str {
        match self {
            Format::Text => "text",
            Format::Json => "json",
            Format::Csv => "csv",
            Format::Markdown => "markdown",
            Format::Html => "html",
        }
    }

    const ALL: [Format; 5] = [
        Format::Text,
        Format::Json,
        Format::Csv,
        Format::Markdown,
        Format::Html,
    ];
}

/// What is rendered.
#[derive(Clone, Copy)]
pub enum Subject<'a> {
    /// One result and its stored id.
    Result { id: i64, result: &'a RunResult },
    /// Two sides compared.
    Comparison(&'a Comparison),
    /// Results (label, result) and the first's comparisons with each of the others.
    Report {
        results: &'a [(String, RunResult)],
        comparisons: &'a [Comparison],
    },
    /// Many hosts' headline figures (`report --fleet`), and which results they are of.
    Fleet {
        fleet: &'a Fleet,
        selection: &'a str,
    },
}

impl Subject<'_> {
    fn what(&self) -> &'static str {
        match self {
            Subject::Result { .. } => "a result",
            Subject::Comparison(_) => "a comparison",
            Subject::Report { .. } => "a report",
            Subject::Fleet { .. } => "a fleet",
        }
    }
}

/// A format's renderer: None for a subject it does not render.
pub trait Exporter {
    fn result(&self, _id: i64, _result: &RunResult) -> Option<Result<String>> {
        None
    }
    fn comparison(&self, _c: &Comparison) -> Option<Result<String>> {
        None
    }
    fn report(
        &self,
        _results: &[(String, RunResult)],
        _comparisons: &[Comparison],
    ) -> Option<Result<String>> {
        None
    }
    fn fleet(&self, _fleet: &Fleet, _selection: &str) -> Option<Result<String>> {
        None
    }
}

fn exporter(format: Format) -> &'static dyn Exporter {
    match format {
        Format::Text => &text::Text,
        Format::Json => &json::Json,
        Format::Csv => &csv::Csv,
        Format::Markdown => &markdown::Markdown,
        Format::Html => &html::Html,
    }
}

fn try_render(format: Format, subject: Subject) -> Option<Result<String>> {
    let e = exporter(format);
    match subject {
        Subject::Result { id, result } => e.result(id, result),
        Subject::Comparison(c) => e.comparison(c),
        Subject::Report {
            results,
            comparisons,
        } => e.report(results, comparisons),
        Subject::Fleet { fleet, selection } => e.fleet(fleet, selection),
    }
}

/// A report as each result and then each comparison, one after another (the text formats).
fn one_after_another(
    results: &[(String, RunResult)],
    comparisons: &[Comparison],
    result: impl Fn(&str, &RunResult) -> String,
    comparison: impl Fn(&Comparison) -> String,
) -> String {
    let mut out: String = results.iter().map(|(l, r)| result(l, r)).collect();
    out.extend(comparisons.iter().map(comparison));
    out
}

/// A format that does not render the subject.
#[derive(Debug, thiserror::Error)]
#[error("--format {format} cannot show {what}; it can be shown as {supported}")]
pub struct Unsupported {
    pub format: &'static str,
    pub what: &'static str,
    pub supported: String,
}

/// Renders `subject` as `format`: Err(Unsupported) when the format does not render it (the
/// formats that do are named), else the text or the renderer's own error.
pub fn render(format: Format, subject: Subject) -> Result<Result<String>, Unsupported> {
    try_render(format, subject).ok_or_else(|| Unsupported {
        format: format.name(),
        what: subject.what(),
        supported: supported(subject).join(", "),
    })
}

/// The formats that render `subject`.
pub fn supported(subject: Subject) -> Vec<&'static str> {
    Format::ALL
        .into_iter()
        // Rendering is cheap next to a benchmark, and only done here on a refusal.
        .filter(|&f| try_render(f, subject).is_some())
        .map(Format::name)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_format_renders_something_and_a_refusal_names_the_others() {
        let result: RunResult =
            serde_json::from_str(include_str!("../../../tests/fixtures/smoke-a.json")).unwrap();
        let results = vec![("A".to_string(), result.clone())];
        for f in Format::ALL {
            let any = [
                Subject::Result {
                    id: 1,
                    result: &result,
                },
                Subject::Report {
                    results: &results,
                    comparisons: &[],
                },
            ]
            .into_iter()
            .any(|s| render(f, s).is_ok());
            assert!(any, "{f:?} renders nothing");
        }
        let c = crate::compare::compare("A", &result, "B", &result).unwrap();
        let err = render(Format::Html, Subject::Comparison(&c)).unwrap_err();
        assert_eq!(
            err.to_string(),
            "--format html cannot show a comparison; it can be shown as text, json, csv, markdown"
        );
    }
}
