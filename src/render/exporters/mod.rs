//! Rendering by format, behind one trait (as hyperfine's exporters): each format is one file
//! that says what it shows ([`Exporter::shows`]) — one result in full (`results show`,
//! `results export`), a comparison (`compare`), a report of several results and their
//! comparisons (`report`), a fleet (`report --fleet`) — and implements those, leaving the rest
//! to the trait's default, "not a format for this". The commands choose the format with one
//! `--format`, whose values are the formats that show what the command shows ([`formats`]),
//! and write with one `-o`.

pub(crate) mod csv;
pub mod html;
pub mod json;
mod markdown;
mod text;

use anyhow::Result;
use clap::builder::PossibleValue;
use clap::ValueEnum;

use crate::compare::Comparison;
use crate::fleet::Fleet;
use crate::history::Histories;
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

/// What a command shows, for the formats that show it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shown {
    Result,
    Comparison,
    Report,
    Fleet,
    History,
}

impl Shown {
    pub const ALL: &'static [Shown] = &[
        Shown::Result,
        Shown::Comparison,
        Shown::Report,
        Shown::Fleet,
        Shown::History,
    ];

    fn what(self) -> &'static str {
        match self {
            Shown::Result => "a result",
            Shown::Comparison => "a comparison",
            Shown::Report => "a report",
            Shown::Fleet => "a fleet",
            Shown::History => "a history",
        }
    }
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
    /// Hosts' figures over time and where they changed (`history`).
    History(&'a Histories),
}

impl Subject<'_> {
    pub fn shown(&self) -> Shown {
        match self {
            Subject::Result { .. } => Shown::Result,
            Subject::Comparison(_) => Shown::Comparison,
            Subject::Report { .. } => Shown::Report,
            Subject::Fleet { .. } => Shown::Fleet,
            Subject::History(_) => Shown::History,
        }
    }
}

/// A format's renderer: what it shows, and each of those rendered (the defaults, None, are for
/// what it does not show; a test holds `shows` to the methods each format implements).
pub trait Exporter {
    fn shows(&self) -> &'static [Shown];
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
    fn history(&self, _h: &Histories) -> Option<Result<String>> {
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
        Subject::History(h) => e.history(h),
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

/// Whether `format` shows `shown`: Err(Unsupported), naming the formats that do, when not —
/// for a command to say before it loads anything.
pub fn check(format: Format, shown: Shown) -> Result<(), Unsupported> {
    if exporter(format).shows().contains(&shown) {
        return Ok(());
    }
    Err(Unsupported {
        format: format.name(),
        what: shown.what(),
        supported: supported(shown).join(", "),
    })
}

/// Renders `subject` as `format`: Err(Unsupported) when the format does not show it (the
/// formats that do are named), else the text or the renderer's own error.
pub fn render(format: Format, subject: Subject) -> Result<Result<String>, Unsupported> {
    check(format, subject.shown())?;
    Ok(try_render(format, subject).unwrap_or_else(|| {
        Err(anyhow::anyhow!(
            "--format {} says it shows {} but has no renderer for it",
            format.name(),
            subject.shown().what()
        ))
    }))
}

/// The formats that show `shown`.
pub fn supported(shown: Shown) -> Vec<&'static str> {
    Format::ALL
        .into_iter()
        .filter(|&f| exporter(f).shows().contains(&shown))
        .map(Format::name)
        .collect()
}

/// The `--format` values of a command that shows `shown`: each format that shows one of them,
/// with its help.
pub fn formats(shown: &[Shown]) -> Vec<PossibleValue> {
    Format::ALL
        .into_iter()
        .filter(|&f| exporter(f).shows().iter().any(|s| shown.contains(s)))
        .filter_map(|f| f.to_possible_value())
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

    #[test]
    fn each_format_shows_what_it_renders_and_nothing_else() {
        let result: RunResult =
            serde_json::from_str(include_str!("../../../tests/fixtures/smoke-a.json")).unwrap();
        let results = vec![("A".to_string(), result.clone())];
        let c = crate::compare::compare("A", &result, "B", &result).unwrap();
        let fleet = crate::fleet::fleet(&results);
        let history = crate::history::Histories {
            fleet: false,
            hosts: vec![crate::history::history(
                &"h".into(),
                &[crate::history::Run::of(1, &result)],
                &[],
                &Default::default(),
                None,
            )],
            shared: Vec::new(),
        };
        let subjects = [
            Subject::Result {
                id: 1,
                result: &result,
            },
            Subject::Comparison(&c),
            Subject::Report {
                results: &results,
                comparisons: std::slice::from_ref(&c),
            },
            Subject::Fleet {
                fleet: &fleet,
                selection: "all",
            },
            Subject::History(&history),
        ];
        for f in Format::ALL {
            for s in subjects {
                assert_eq!(
                    exporter(f).shows().contains(&s.shown()),
                    try_render(f, s).is_some(),
                    "{f:?} and {:?}: its shows() and its renderers disagree",
                    s.shown()
                );
            }
        }
    }

    #[test]
    fn a_commands_formats_are_those_that_show_what_it_shows() {
        let names = |shown: &[Shown]| {
            formats(shown)
                .iter()
                .map(|v| v.get_name().to_string())
                .collect::<Vec<_>>()
                .join(" ")
        };
        assert_eq!(names(&[Shown::Result]), "text json csv markdown html");
        assert_eq!(names(&[Shown::Comparison]), "text json csv markdown");
        assert_eq!(names(&[Shown::Report]), "text json markdown html");
        assert_eq!(names(&[Shown::Fleet]), "text json csv html");
        assert_eq!(names(&[Shown::History]), "text json csv markdown html");
        assert_eq!(
            names(&[Shown::Report, Shown::Fleet]),
            "text json csv markdown html"
        );
        // The values keep their help.
        let csv = formats(&[Shown::Comparison]).into_iter().nth(2).unwrap();
        assert!(csv
            .get_help()
            .unwrap()
            .to_string()
            .contains("One row per measurement"));
    }
}
