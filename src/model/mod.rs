//! The result model: one serde structure that every suite fills, the store saves, and every
//! renderer reads. Raw samples are kept so analysis can be redone later.

mod environment;
pub mod figures;

pub use environment::{CgroupCpuLimit, Environment};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::suites::index::IndexResult;
use crate::suites::interactive::InteractiveResult;
use crate::suites::noise::NoiseResult;
use crate::suites::sched::SchedResult;

/// Bumped whenever a stored result's shape changes incompatibly.
pub const SCHEMA_VERSION: u32 = 1;

/// One invocation of hostbench: what ran, where, when, and what it measured.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunResult {
    pub schema_version: u32,
    pub tool_version: String,
    pub started_at: DateTime<Utc>,
    pub finished_at: DateTime<Utc>,
    /// The command line as given (argv, program name first).
    pub command_line: Vec<String>,
    /// True when the run was stopped (signal, error) before it did everything it planned.
    pub incomplete: bool,
    pub environment: Environment,
    pub suites: Vec<SuiteResult>,
}

/// The data of one suite. Tagged by suite name in JSON: `{"suite": "noise", ...}`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "suite", rename_all = "lowercase")]
pub enum SuiteResult {
    Noise(NoiseResult),
    Interactive(InteractiveResult),
    Sched(SchedResult),
    Index(IndexResult),
}

impl SuiteResult {
    pub fn name(&self) -> &'static str {
        match self {
            SuiteResult::Noise(_) => "noise",
            SuiteResult::Interactive(_) => "interactive",
            SuiteResult::Sched(_) => "sched",
            SuiteResult::Index(_) => "index",
        }
    }

    /// Whether the suite did everything its settings planned (a stop or an error leaves it
    /// short).
    pub fn complete(&self) -> bool {
        match self {
            SuiteResult::Noise(n) => n.runs.len() as u64 >= n.settings.runs_requested,
            SuiteResult::Index(i) => {
                let ran: usize = i
                    .passes
                    .iter()
                    .map(|p| p.tests.len() + p.skipped.len())
                    .sum();
                ran >= i.settings.copies.len() * i.settings.tests.len()
            }
            SuiteResult::Interactive(i) => i.measurements.len() >= i.planned_pairs,
            SuiteResult::Sched(s) => s.points.len() >= s.settings.points.len(),
        }
    }

    /// One short figure that characterises the result, for `results list`.
    pub fn headline(&self) -> String {
        match self {
            SuiteResult::Noise(n) => n.headline(),
            SuiteResult::Interactive(i) => i.headline(),
            SuiteResult::Sched(s) => s.headline(),
            SuiteResult::Index(i) => i.headline(),
        }
    }
}

impl RunResult {
    /// A result of this build of hostbench, finished now. `cut_short`: a stop or an error
    /// ended the run; it is also incomplete when a suite did less than it planned.
    pub fn finished(
        started_at: DateTime<Utc>,
        command_line: Vec<String>,
        cut_short: bool,
        environment: Environment,
        suite: SuiteResult,
    ) -> Self {
        Self::finished_suites(
            started_at,
            command_line,
            cut_short,
            environment,
            vec![suite],
        )
    }

    /// A result of several suites (`hostbench run`), finished now.
    pub fn finished_suites(
        started_at: DateTime<Utc>,
        command_line: Vec<String>,
        cut_short: bool,
        environment: Environment,
        suites: Vec<SuiteResult>,
    ) -> Self {
        let incomplete = cut_short || !suites.iter().all(SuiteResult::complete);
        RunResult {
            schema_version: SCHEMA_VERSION,
            tool_version: env!("CARGO_PKG_VERSION").to_string(),
            started_at,
            finished_at: Utc::now(),
            command_line,
            incomplete,
            environment,
            suites,
        }
    }

    /// Suite names joined with '+', as `results list` shows them.
    pub fn suite_names(&self) -> String {
        let names: Vec<&str> = self.suites.iter().map(SuiteResult::name).collect();
        names.join("+")
    }

    pub fn headline(&self) -> String {
        let lines: Vec<String> = self.suites.iter().map(SuiteResult::headline).collect();
        lines.join("; ")
    }
}
