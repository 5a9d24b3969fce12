use std::path::PathBuf;

use anyhow::Result;
use clap::Args;

use super::compare::load_result;
use super::output::Output;
use super::GlobalArgs;
use crate::compare::compare;
use crate::error::UsageError;
use crate::platform::files;
use crate::render;

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Results: stored ids or result JSON files (with two or more, the first is compared with
    /// each other)
    #[arg(value_name = "ID", required = true)]
    pub results: Vec<String>,
    /// The HTML file to write
    #[arg(
        short = 'o',
        long = "output",
        value_name = "FILE.html",
        default_value = "hostbench-report.html"
    )]
    pub output: PathBuf,
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
    let page = render::report::html(&results, &comparisons);
    // The output path is the user's: one that cannot be written is theirs to fix (exit 2).
    files::write_replacing(&args.output, page.as_bytes())
        .map_err(|e| UsageError::new(format!("cannot write the report: {e:#}")))?;
    let out = Output::new(global.json, global.quiet);
    out.chatter(&format!("Report: {}\n", args.output.display()));
    Ok(0)
}
