//! Every kind of worker process, and the worker side of the conversation with the coordinator.

use std::io::{BufRead, Lines, StdinLock, StdoutLock, Write};

use anyhow::{anyhow, Context, Result};
use serde::{Deserialize, Serialize};

use crate::platform::sched;
use crate::suites::index::programs::{self, small};
use crate::suites::index::{native, registry, IndexWorkerSpec};
use crate::suites::interactive::worker::{self as interactive, BenchSpec, LoadWorkerSpec};

/// What a worker process is asked to be (its `__worker` argument, as JSON).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "lowercase")]
pub enum WorkerSpec {
    /// interactive: one simulated task, measured.
    Bench(BenchSpec),
    /// interactive: one background load.
    Load(LoadWorkerSpec),
    /// index: one copy of one test.
    Index(IndexWorkerSpec),
}

/// The worker's side: lines to the coordinator on standard output, commands from it on
/// standard input.
pub struct Channel {
    input: Lines<StdinLock<'static>>,
    output: StdoutLock<'static>,
}

impl Channel {
    pub fn stdio() -> Channel {
        Channel {
            input: std::io::stdin().lock().lines(),
            output: std::io::stdout().lock(),
        }
    }

    pub fn say(&mut self, line: &str) -> Result<()> {
        writeln!(self.output, "{line}")?;
        self.output.flush().context("writing to the coordinator")
    }

    pub fn report<T: Serialize>(&mut self, report: &T) -> Result<()> {
        self.say(&format!("report {}", serde_json::to_string(report)?))
    }

    /// Waits for the next command; false if it is not `word` or the coordinator is gone.
    pub fn wait_for(&mut self, word: &str) -> bool {
        matches!(self.input.next(), Some(Ok(line)) if line == word)
    }
}

/// Runs this process as the worker `spec` describes.
pub fn run(spec: WorkerSpec) -> Result<()> {
    match spec {
        WorkerSpec::Bench(s) => interactive::run_bench(s, &mut Channel::stdio()),
        WorkerSpec::Load(s) => interactive::run_load(s, &mut Channel::stdio()),
        WorkerSpec::Index(s) => run_index_copy(s),
    }
}

fn run_index_copy(spec: IndexWorkerSpec) -> Result<()> {
    let mut ch = Channel::stdio();
    if let Some(cpu) = spec.cpu {
        sched::pin_to_cpu(cpu).context("pinning the copy (--pin)")?;
    }
    let test = registry::find(&spec.test).ok_or_else(|| anyhow!("unknown test {}", spec.test))?;
    ch.say("ready")?;
    if !ch.wait_for("start") {
        return Ok(());
    }
    // The programs a copy runs work in the run's private directory (their files, the
    // looper's commands), as UnixBench's run in its tmp directory.
    std::env::set_current_dir(&spec.dir)
        .with_context(|| format!("entering {}", spec.dir.display()))?;
    if let Some(native) = &spec.native {
        let now = crate::platform::clock::monotonic_ns();
        let deadline = now + (spec.seconds * 1e9) as u64;
        if let (Some(args), Some(path)) = (
            native::arguments(test.program, spec.seconds, now, deadline),
            native::program_path(native, test.program),
        ) {
            drop(ch);
            let e = small::exec_program(&path, args);
            return Channel::stdio().say(&format!("error {e:#}"));
        }
    }
    if small::runs_small(test.program) {
        let now = crate::platform::clock::monotonic_ns();
        drop(ch);
        let e = small::exec(
            test.program,
            &spec.dir,
            now,
            now + (spec.seconds * 1e9) as u64,
        );
        return Channel::stdio().say(&format!("error {e:#}"));
    }
    // A write past the file-size limit then fails with EFBIG, like a full disk, instead of
    // killing the copy.
    // SAFETY: changing a signal's disposition to ignore.
    unsafe { libc::signal(libc::SIGXFSZ, libc::SIG_IGN) };
    match programs::run(test, spec.seconds, &spec.dir, spec.display.as_deref()) {
        Ok(report) => ch.report(&report),
        // The coordinator reports the failure; the test's own files are already removed.
        Err(e) => ch.say(&format!("error {e:#}")),
    }
}
