//! A worker process a coordinator started (`hostbench __worker SPEC_JSON`). Dispatched before
//! the command line is parsed: it is no subcommand of the user's, so neither help nor the
//! completion scripts offer it. The spec's `role` says which suite's worker to run.

use anyhow::{Context, Result};
use serde::Deserialize;

use crate::suites::index::{self, IndexWorkerSpec};
use crate::suites::interactive::worker::{self as interactive, BenchSpec, LoadWorkerSpec};
use crate::workers::Channel;
pub use crate::workers::WORKER_SUBCOMMAND;

/// What a worker process is asked to be (its `__worker` argument, as JSON; see
/// `workers::spec_json`).
#[derive(Debug, Deserialize)]
#[serde(tag = "role", rename_all = "lowercase")]
enum WorkerSpec {
    /// interactive: one simulated task, measured.
    Bench(BenchSpec),
    /// interactive: one background load.
    Load(LoadWorkerSpec),
    /// index: one copy of one test.
    Index(IndexWorkerSpec),
}

/// Runs the worker `spec` (its JSON) describes.
pub fn exec(spec: &str) -> Result<i32> {
    let spec: WorkerSpec = serde_json::from_str(spec).context("malformed worker spec")?;
    match spec {
        WorkerSpec::Bench(s) => interactive::run_bench(s, &mut Channel::stdio())?,
        WorkerSpec::Load(s) => interactive::run_load(s, &mut Channel::stdio())?,
        WorkerSpec::Index(s) => index::run_copy(s)?,
    }
    Ok(0)
}
