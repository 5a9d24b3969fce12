use anyhow::{Context, Result};
use clap::Args;

use crate::workers::roles::{self, WorkerSpec};

/// The hidden subcommand a coordinator starts its worker processes with.
#[derive(Debug, Args)]
pub struct WorkerArgs {
    /// The worker's spec, as JSON
    pub spec: String,
}

pub fn exec(args: &WorkerArgs) -> Result<i32> {
    let spec: WorkerSpec = serde_json::from_str(&args.spec).context("malformed worker spec")?;
    roles::run(spec)?;
    Ok(0)
}
