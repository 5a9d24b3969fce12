//! A result's headline figures — the few numbers a fleet of hosts is compared on (the index of
//! one copy and of N, interbench's worst pair, reflex's cost per round, p1bench's spread) — and
//! its noise floor, taken from the result once and kept beside it in the store (layout 7), so a
//! fleet of many stored results is drawn without reading each whole.

use serde::{Deserialize, Serialize};

use super::figures::Better;
use super::{RunResult, SuiteResult};

/// A headline figure: a column of the fleet's table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Column {
    /// UnixBench's System Benchmarks index of one copy.
    IndexOne,
    /// The index of the most copies run (usually one per CPU).
    IndexMany,
    /// interbench: the deadlines met by the worst bench × load pair.
    InteractiveWorst,
    /// reflex: microseconds per round at the point with the fewest threads.
    Sched,
    /// p1bench: the spread of the fixed job (the noise part, else the noise check).
    Noise,
}

impl Column {
    pub const ALL: [Column; 5] = [
        Column::IndexOne,
        Column::IndexMany,
        Column::InteractiveWorst,
        Column::Sched,
        Column::Noise,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Column::IndexOne => "index, 1 copy",
            Column::IndexMany => "index, N copies",
            Column::InteractiveWorst => "interactive, worst pair",
            Column::Sched => "sched",
            Column::Noise => "noise",
        }
    }

    pub fn unit(self) -> &'static str {
        match self {
            Column::IndexOne | Column::IndexMany => "index",
            Column::InteractiveWorst => "% deadlines met",
            Column::Sched => "us/round",
            Column::Noise => "% spread",
        }
    }

    /// The values the figure can take: a percentage of deadlines met lies in 0..=100, every
    /// other figure is at least 0. A range drawn around a median is cut to them.
    pub fn bounds(self) -> (f64, f64) {
        match self {
            Column::InteractiveWorst => (0.0, 100.0),
            _ => (0.0, f64::INFINITY),
        }
    }

    pub fn better(self) -> Better {
        match self {
            Column::IndexOne | Column::IndexMany | Column::InteractiveWorst => Better::Higher,
            Column::Sched | Column::Noise => Better::Lower,
        }
    }

    /// The figure in `r`: its value, what it measured (hosts are ranged only with those that
    /// measured the same), and a note for the table.
    pub fn of(self, r: &RunResult) -> Option<Figure> {
        let suites = r.suites.iter();
        match self {
            Column::IndexOne | Column::IndexMany => {
                let passes = suites.filter_map(|s| match s {
                    SuiteResult::Index(i) => Some(i.passes.iter()),
                    _ => None,
                });
                let mut passes = passes.flatten().filter(|p| p.system_index.is_some());
                let pass = if self == Column::IndexOne {
                    passes.find(|p| p.copies == 1)
                } else {
                    passes.filter(|p| p.copies > 1).max_by_key(|p| p.copies)
                }?;
                let partial = if pass.indexed < pass.index_tests {
                    format!(", partial: {} of {}", pass.indexed, pass.index_tests)
                } else {
                    String::new()
                };
                Some(Figure {
                    value: pass.system_index?,
                    kind: format!(
                        "{} cop{}, {} tests",
                        pass.copies,
                        plural_y(pass.copies),
                        pass.index_tests
                    ),
                    note: format!("{} cop{}{partial}", pass.copies, plural_y(pass.copies)),
                })
            }
            Column::InteractiveWorst => suites
                .filter_map(|s| match s {
                    SuiteResult::Interactive(i) => i.worst_by_deadlines(),
                    _ => None,
                })
                .min_by(|a, b| {
                    let met = |m: &super::interactive::Measurement| {
                        m.deadlines_met_pct.unwrap_or(f64::INFINITY)
                    };
                    met(a).total_cmp(&met(b))
                })
                .and_then(|m| {
                    Some(Figure {
                        value: m.deadlines_met_pct?,
                        kind: "the worst pair".into(),
                        note: format!("{} under {}", m.bench.name(), m.load.name()),
                    })
                }),
            Column::Sched => suites
                .filter_map(|s| match s {
                    SuiteResult::Sched(s) => Some((s.settings.pin, s.points.iter())),
                    _ => None,
                })
                .flat_map(|(pin, points)| points.map(move |p| (pin, p)))
                .filter(|(_, p)| !p.runs.is_empty())
                .min_by_key(|(pin, p)| (*pin, p.threads, p.active_sets))
                .map(|(pin, p)| {
                    let what = format!(
                        "c={} a={}{}",
                        p.threads,
                        p.active_sets,
                        if pin { " pinned" } else { "" }
                    );
                    Figure {
                        value: p.mean_us_per_round,
                        kind: what.clone(),
                        note: what,
                    }
                }),
            Column::Noise => {
                let part = r.suites.iter().find_map(|s| match s {
                    SuiteResult::Noise(n) => n.summary.as_ref().map(|sum| (n, sum)),
                    _ => None,
                });
                match part {
                    Some((n, sum)) => {
                        let job = super::noise::noise_job(&n.settings);
                        Some(Figure {
                            value: sum.verdict.spread_pct,
                            note: format!(
                                "p{} of {job}, {:?}",
                                sum.verdict.percentile, sum.verdict.level
                            )
                            .to_lowercase(),
                            kind: job,
                        })
                    }
                    None => r.noise_check.as_ref().map(|c| Figure {
                        value: c.spread_pct(),
                        kind: "noise check".into(),
                        note: "the noise check".into(),
                    }),
                }
            }
        }
    }
}

fn plural_y(n: usize) -> &'static str {
    if n == 1 {
        "y"
    } else {
        "ies"
    }
}

/// A headline figure of a result: its value, what it measured (hosts are compared only with
/// those that measured the same), and a note for a table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Figure {
    pub value: f64,
    pub kind: String,
    pub note: String,
}

/// What a fleet reads of a result besides its list columns: its noise floor and a figure a
/// column, in [`Column::ALL`] order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HeadlineFigures {
    pub noise_floor_pct: Option<f64>,
    pub values: Vec<Option<Figure>>,
}

impl HeadlineFigures {
    pub fn of(r: &RunResult) -> HeadlineFigures {
        HeadlineFigures {
            noise_floor_pct: r.noise_floor_pct(),
            values: Column::ALL.iter().map(|c| c.of(r)).collect(),
        }
    }

    /// As stored: None for what does not read back with a figure a column (a row of an earlier
    /// layout holds none; one edited by hand may hold anything).
    pub fn parse(json: &str) -> Option<HeadlineFigures> {
        serde_json::from_str::<HeadlineFigures>(json)
            .ok()
            .filter(|f| f.values.len() == Column::ALL.len())
    }
}
