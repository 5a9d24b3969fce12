use std::path::Path;

use anyhow::Result;
use clap::Args;

use super::compare::load_result;
use super::output::{FormatArgs, Output};
use super::GlobalArgs;
use crate::compare::compare;
use crate::render::exporters::{Format, Subject};

/// Where `report` writes its page when -o is not given.
const DEFAULT_FILE: &str = "hostbench-report.html";

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Results: stored ids or result JSON files (with two or more, the first is compared with
    /// each other)
    #[arg(value_name = "ID", required = true)]
    pub results: Vec<String>,
    #[command(flatten)]
    pub output: FormatArgs,
}

pub fn exec(args: &ReportArgs, global: &GlobalArgs) -> Result<i32> {
    let results = args
        .results
        .iter()
        .map(|a| load_result(global, a))
        .collect::<Result<Vec<_>>>()?;
    let mut comparisons = Vec::new();
    if let Some(((a_label, a), rest)) = results.split_first() {
        for (b_label, b) in rest {
            // Results that share nothing are still shown; they have no table.
            if let Ok(c) = compare(a_label, a, b_label, b) {
                comparisons.push(c);
            }
        }
    }
    let format = args.output.format(global.json, Format::Html)?;
    let out = Output::new(global.json, global.quiet);
    let subject = Subject::Report {
        results: &results,
        comparisons: &comparisons,
    };
    // The page goes to a file unless -o says otherwise; other formats to standard output.
    let default_file = (format == Format::Html).then(|| Path::new(DEFAULT_FILE));
    if let Some(path) = args.output.emit(&out, format, subject, default_file)? {
        out.chatter(&format!("Report: {}\n", path.display()));
    }
    match out.stdout_error() {
        Some(e) => Err(anyhow::anyhow!("writing to standard output: {e}")),
        None => Ok(0),
    }
}
