//! Rendering by format: each format is one file of renderers, one for each subject it shows (a
//! result, a comparison, a report, a fleet, a history). One table, [`TABLE`], says which format
//! shows which subject with which renderer, so every command's `--format` values ([`formats`])
//! and refusals come from one place.

pub(crate) mod csv;
pub mod html;
pub mod json;
mod markdown;
pub mod openmetrics;
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
    /// Prometheus' exposition format: a result's headline figures, or a history's nightly gate
    /// (with --fail-on), as gauges
    Openmetrics,
}

impl Format {
    pub fn name(self) -> &'static str {
        match self {
            Format::Text => "text",
            Format::Json => "json",
            Format::Csv => "csv",
            Format::Markdown => "markdown",
            Format::Html => "html",
            Format::Openmetrics => "openmetrics",
        }
    }

    const ALL: [Format; 6] = [
        Format::Text,
        Format::Json,
        Format::Csv,
        Format::Markdown,
        Format::Html,
        Format::Openmetrics,
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

/// Results with their labels ("result 3", a file's name), as a report takes them.
pub type LabelledResults = [(String, RunResult)];

/// A renderer of one subject in one format. Its type says what it renders, so a row of
/// [`TABLE`] cannot pair a format with a renderer of something else.
#[derive(Clone, Copy)]
pub enum Renderer {
    Result(fn(i64, &RunResult) -> Result<String>),
    Comparison(fn(&Comparison) -> Result<String>),
    Report(fn(&LabelledResults, &[Comparison]) -> Result<String>),
    Fleet(fn(&Fleet, &str) -> Result<String>),
    History(fn(&Histories) -> Result<String>),
}

impl Renderer {
    fn shows(self) -> Shown {
        match self {
            Renderer::Result(_) => Shown::Result,
            Renderer::Comparison(_) => Shown::Comparison,
            Renderer::Report(_) => Shown::Report,
            Renderer::Fleet(_) => Shown::Fleet,
            Renderer::History(_) => Shown::History,
        }
    }
}

/// Which format shows which subject, and how: declared once. A command's `--format` values,
/// their help and the refusal of a pair not here all come from this table.
pub const TABLE: &[(Format, Renderer)] = &[
    (Format::Text, Renderer::Result(text::result)),
    (Format::Text, Renderer::Comparison(text::comparison)),
    (Format::Text, Renderer::Report(text::report)),
    (Format::Text, Renderer::Fleet(text::fleet)),
    (Format::Text, Renderer::History(text::history)),
    (Format::Json, Renderer::Result(json::result)),
    (Format::Json, Renderer::Comparison(json::comparison)),
    (Format::Json, Renderer::Report(json::report)),
    (Format::Json, Renderer::Fleet(json::fleet)),
    (Format::Json, Renderer::History(json::history)),
    (Format::Csv, Renderer::Result(csv::result)),
    (Format::Csv, Renderer::Comparison(csv::comparison)),
    (Format::Csv, Renderer::Report(csv::report)),
    (Format::Csv, Renderer::Fleet(csv::fleet)),
    (Format::Csv, Renderer::History(csv::history)),
    (Format::Markdown, Renderer::Result(markdown::result)),
    (Format::Markdown, Renderer::Comparison(markdown::comparison)),
    (Format::Markdown, Renderer::Report(markdown::report)),
    (Format::Markdown, Renderer::Fleet(markdown::fleet)),
    (Format::Markdown, Renderer::History(markdown::history)),
    (Format::Html, Renderer::Result(html::result)),
    (Format::Html, Renderer::Report(html::report)),
    (Format::Html, Renderer::Fleet(html::fleet)),
    (Format::Html, Renderer::History(html::history)),
    (Format::Openmetrics, Renderer::Result(openmetrics::result)),
    (Format::Openmetrics, Renderer::History(openmetrics::history)),
];

/// The table's renderer of `shown` in `format`, where it has one.
fn renderer(format: Format, shown: Shown) -> Option<Renderer> {
    TABLE
        .iter()
        .find(|(f, r)| *f == format && r.shows() == shown)
        .map(|&(_, r)| r)
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
    match renderer(format, shown) {
        Some(_) => Ok(()),
        None => Err(Unsupported {
            format: format.name(),
            what: shown.what(),
            supported: supported(shown).join(", "),
        }),
    }
}

/// Renders `subject` as `format`: Err(Unsupported) when the format does not show it (the
/// formats that do are named), else the text or the renderer's own error.
pub fn render(format: Format, subject: Subject) -> Result<Result<String>, Unsupported> {
    check(format, subject.shown())?;
    let r = renderer(format, subject.shown()).expect("checked above");
    Ok(match (r, subject) {
        (Renderer::Result(f), Subject::Result { id, result }) => f(id, result),
        (Renderer::Comparison(f), Subject::Comparison(c)) => f(c),
        (
            Renderer::Report(f),
            Subject::Report {
                results,
                comparisons,
            },
        ) => f(results, comparisons),
        (Renderer::Fleet(f), Subject::Fleet { fleet, selection }) => f(fleet, selection),
        (Renderer::History(f), Subject::History(h)) => f(h),
        // `renderer` found it by the subject's kind: the pair always matches.
        _ => unreachable!(
            "a renderer of {} found for another subject",
            subject.shown().what()
        ),
    })
}

/// The formats that show `shown`, in `Format`'s order.
pub fn supported(shown: Shown) -> Vec<&'static str> {
    Format::ALL
        .into_iter()
        .filter(|&f| renderer(f, shown).is_some())
        .map(Format::name)
        .collect()
}

/// The `--format` values of a command that shows `shown`: each format that shows every one of
/// them, with its help. A format that cannot show all a command shows is not offered, so clap
/// refuses it before the command runs.
pub fn formats(shown: &[Shown]) -> Vec<PossibleValue> {
    Format::ALL
        .into_iter()
        .filter(|&f| shown.iter().all(|&s| renderer(f, s).is_some()))
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
    fn a_command_is_offered_only_the_formats_that_show_all_it_shows() {
        let names = |shown: &[Shown]| -> Vec<String> {
            formats(shown)
                .iter()
                .map(|v| v.get_name().to_string())
                .collect()
        };
        // html shows a result but not a comparison: a command showing both is not offered it.
        assert!(names(&[Shown::Result]).contains(&"html".to_string()));
        assert!(!names(&[Shown::Result, Shown::Comparison]).contains(&"html".to_string()));
        assert_eq!(
            names(&[Shown::Report, Shown::Fleet]),
            ["text", "json", "csv", "markdown", "html"]
        );
    }

    #[test]
    fn every_row_of_the_table_renders_and_no_pair_is_declared_twice() {
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
                false,
                // With the nightly gate judged, as every format of a history can show it.
                Some(&crate::history::gate::Gate {
                    window: 5,
                    max_p: 0.002,
                    host_shifts: false,
                }),
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
                let rows = TABLE
                    .iter()
                    .filter(|(tf, r)| *tf == f && r.shows() == s.shown())
                    .count();
                assert!(rows <= 1, "{f:?} shows {:?} twice", s.shown());
                let out = render(f, s);
                assert_eq!(rows == 1, out.is_ok(), "{f:?} and {:?}", s.shown());
                if let Ok(text) = out {
                    assert!(!text.unwrap().is_empty(), "{f:?} of {:?}", s.shown());
                }
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
        assert_eq!(
            names(&[Shown::Result]),
            "text json csv markdown html openmetrics"
        );
        assert_eq!(names(&[Shown::Comparison]), "text json csv markdown");
        assert_eq!(names(&[Shown::Report]), "text json csv markdown html");
        assert_eq!(names(&[Shown::Fleet]), "text json csv markdown html");
        assert_eq!(
            names(&[Shown::History]),
            "text json csv markdown html openmetrics"
        );
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
