//! A worker process a coordinator started (`hostbench __worker SPEC_JSON`). Dispatched before
//! the command line is parsed: it is no subcommand of the user's, so neither help nor the
//! completion scripts offer it.

use anyhow::{Context, Result};

use crate::workers::roles::{self, WorkerSpec};
pub use crate::workers::WORKER_SUBCOMMAND;

/// Runs the worker `spec` (its JSON) describes.
pub fn exec(spec: &str) -> Result<i32> {
    let spec: WorkerSpec = serde_json::from_str(spec).context("malformed worker spec")?;
    roles::run(spec)?;
    Ok(0)
}
