//! Renderers: they read the result model and return text. None of them measures anything.

pub mod environment;
pub mod json;
pub mod noise;
pub mod results;

use crate::model::{RunResult, SuiteResult};

/// The full text report of a stored result: environment, then each suite's report.
pub fn text_report(result: &RunResult) -> String {
    let mut out = environment::header(result);
    for suite in &result.suites {
        out.push('\n');
        match suite {
            SuiteResult::Noise(n) => out.push_str(&noise::report(n)),
        }
    }
    out
}
