//! Renderers: they read the result model and return text. None of them measures anything.

pub mod account;
pub mod calibration;
pub mod cformat;
pub mod compare;
pub mod environment;
pub mod explain;
pub mod exporters;
pub mod fleet;
pub mod headline;
pub mod history;
pub mod index;
pub mod interactive;
pub mod labelled;
pub mod noise;
pub mod report;
pub mod results;
pub mod sched;
pub mod standard;
pub mod svg;
pub mod wakeup;
pub mod wakeup_json;

use crate::model::{RunResult, SuiteResult};

/// What `--list` says of a unit: "runs here", or "not here: " and why.
pub fn runs_here(here: &Result<(), String>) -> String {
    match here {
        Ok(()) => "runs here".to_string(),
        Err(why) => format!("not here: {why}"),
    }
}

/// A `--list` unit's `here` in JSON: null where it runs here, else why not.
pub fn why_not_here<S: serde::Serializer>(
    here: &Result<(), String>,
    s: S,
) -> Result<S::Ok, S::Error> {
    match here {
        Ok(()) => s.serialize_none(),
        Err(why) => s.serialize_some(why),
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
        out.push_str(&view(suite).report(result));
    }
    out.push_str(&account::text_section(result));
    out
}

/// How each suite's result is shown, so that code over any result names no suite: a suite
/// implements it beside its renderers.
pub trait SuiteView {
    /// Its part of the text report of `run`, the result it is in.
    fn report(&self, run: &RunResult) -> String;
    /// One short figure that characterises it (`results list`, `run`'s "done in" lines).
    fn headline(&self) -> String;
    /// Its line in `run`'s summary.
    fn summary_line(&self) -> String;
    /// The lines under it in the summary (the worst samples explained, a drift).
    fn summary_notes(&self) -> Vec<String> {
        Vec::new()
    }
    /// What failed in it (`run`'s summary), each with its error.
    fn failed(&self) -> Vec<String> {
        Vec::new()
    }
    /// What it left out on this host (`run`'s summary), each with why.
    fn skipped(&self) -> Vec<String> {
        Vec::new()
    }
}

/// Each suite's section of `report`'s HTML page, in the page's order: its plots across the
/// results (a section whose suite none of them has writes nothing).
pub const REPORT_SECTIONS: &[report::ReportSection] = &[
    index::report_section,
    interactive::report_section,
    sched::report_section,
    noise::report_section,
    wakeup::report_section,
];

/// A suite's result, as it is shown.
pub fn view(suite: &SuiteResult) -> &dyn SuiteView {
    match suite {
        SuiteResult::Noise(n) => n,
        SuiteResult::Interactive(i) => i,
        SuiteResult::Sched(s) => s,
        SuiteResult::Index(i) => i,
        SuiteResult::Wakeup(w) => w,
    }
}
