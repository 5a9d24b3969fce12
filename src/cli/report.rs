use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;

use super::compare::load_result;
use super::GlobalArgs;
use crate::compare::compare;
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
    let store = global.open_store()?;
    let results = args
        .results
        .iter()
        .map(|a| load_result(&store, a))
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
    std::fs::write(&args.output, page)
        .with_context(|| format!("writing {}", args.output.display()))?;
    if !global.quiet {
        println!("Report: {}", args.output.display());
    }
    Ok(0)
}
