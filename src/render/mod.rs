//! Renderers: they read the result model and return text. None of them measures anything.

pub mod cformat;
pub mod compare;
pub mod environment;
pub mod exporters;
pub mod fleet;
pub mod headline;
pub mod index;
pub mod interactive;
pub mod noise;
pub mod report;
pub mod results;
pub mod sched;
pub mod standard;
pub mod svg;

use crate::model::{RunResult, SuiteResult};

/// What `--list` says of a unit: "runs here", or "not here: " and why.
pub fn runs_here(here: &Result<(), String>) -> String {
    match here {
        Ok(()) => "runs here".to_string(),
        Err(why) => format!("not here: {why}"),
    }
}

/// interbench's datestamp (YYYYMMDDHHMM) of a result's start, in UTC.
pub fn datestamp(result: &RunResult) -> String {
    result.started_at.format("%Y%m%d%H%M").to_string()
}

/// The full text report of a stored result: environment, then each suite's report.
pub fn text_report(result: &RunResult) -> String {
    let mut out = environment::header(result);
    for suite in &result.suites {
        out.push('\n');
        match suite {
            SuiteResult::Noise(n) => out.push_str(&noise::report(n)),
            SuiteResult::Interactive(i) => out.push_str(&interactive::report(
                i,
                &result.environment.host.kernel_release,
                &datestamp(result),
            )),
            SuiteResult::Sched(s) => out.push_str(&sched::report(s)),
            SuiteResult::Index(i) => out.push_str(&index::report(result, i)),
        }
    }
    out
}
