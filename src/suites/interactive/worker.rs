//! The two worker roles of `interactive`: the bench worker (one simulated task, measured) and
//! the load worker (one background load). Each answers the coordinator's `start` and `stop`
//! (see `crate::workers`) and ends by printing its report.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use anyhow::{anyhow, Context, Result};
use serde::{Deserialize, Serialize};

use super::benches::Bench;
use super::deadline::DeadlineCounts;
use super::sim::{self, Burner, CustomSpec, LatencyRecorder, LatencySummary, Profile, TimerStats};
use crate::loads::{self, LoadReport, LoadSpec};
use crate::platform::clock::monotonic_ns;
use crate::platform::rusage::Usage;
use crate::platform::sched::{self, Policy, RT_BENCH_PRIORITY, TIMEKEEPER_PRIORITY};
use crate::workers::roles::Channel;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BenchSpec {
    pub bench: Bench,
    pub custom: Option<CustomSpec>,
    pub loops_per_ms: u64,
    /// `-r`: the task itself runs SCHED_FIFO.
    pub realtime: bool,
    /// The timekeeper runs SCHED_FIFO (false only where this host forbids it).
    pub timekeeper_fifo: bool,
    /// `-B`.
    pub nice: i32,
    /// The planned measuring time, to size the sample buffer before measuring.
    pub duration_ns: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LoadWorkerSpec {
    pub load: LoadSpec,
    /// `-N`.
    pub nice: i32,
}

/// What the bench worker measured.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BenchReport {
    pub counts: DeadlineCounts,
    pub latency: LatencySummary,
    pub samples_ns: Vec<u64>,
    pub samples_truncated: bool,
    /// The measuring window, from `start` to `stop`.
    pub wall_ns: u64,
    /// CPU time of the whole bench process over the window (`getrusage(RUSAGE_SELF)`).
    pub cpu_ns: u64,
    pub task_policy: Policy,
    /// The timekeeper's figures (None for Gaming, which never sleeps).
    pub timer: Option<TimerStats>,
    pub memory_locked: bool,
}

/// The load worker: starts its load on `start`, stops it on `stop`, reports.
pub fn run_load(spec: LoadWorkerSpec, ch: &mut Channel) -> Result<()> {
    if spec.nice != 0 {
        sched::set_nice(spec.nice).context("setting the load's nice level (-N)")?;
    }
    ch.say("ready")?;
    if !ch.wait_for("start") {
        return Ok(());
    }
    let handle = loads::start(&spec.load)?;
    ch.say("started")?;
    ch.wait_for("stop");
    let report: LoadReport = handle.stop()?;
    ch.report(&report)
}

/// The bench worker: runs its simulated task from `start` to `stop` and reports what it
/// measured.
pub fn run_bench(spec: BenchSpec, ch: &mut Channel) -> Result<()> {
    if spec.nice != 0 {
        sched::set_nice(spec.nice).context("setting the bench's nice level (-B)")?;
    }
    // A page fault in a real-time task is a latency the scheduler did not cause.
    let memory_locked = sched::lock_memory().is_ok();
    let capacity = sim::expected_samples(spec.bench, spec.custom, spec.duration_ns);
    let recorder = LatencyRecorder::new(capacity, 3_600_000_000_000)?;
    ch.say("ready")?;
    if !ch.wait_for("start") {
        return Ok(());
    }
    let stop = Arc::new(AtomicBool::new(false));
    let before = Usage::process();
    let start = monotonic_ns();
    let task = start_task(&spec, recorder, Arc::clone(&stop))?;
    ch.say("started")?;
    ch.wait_for("stop");
    stop.store(true, Ordering::SeqCst);
    let (recorder, counts, timer, task_policy) = task
        .join()
        .map_err(|_| anyhow!("the simulated task panicked"))??;
    let wall_ns = monotonic_ns() - start;
    let cpu_ns = Usage::process().since(&before).cpu_ns();
    let latency = recorder.summary();
    let (samples_ns, samples_truncated) = recorder.into_samples();
    ch.report(&BenchReport {
        counts,
        latency,
        samples_ns,
        samples_truncated,
        wall_ns,
        cpu_ns,
        task_policy,
        timer,
        memory_locked,
    })
}

type TaskOutcome = Result<(LatencyRecorder, DeadlineCounts, Option<TimerStats>, Policy)>;

/// Starts the simulated task's thread with its policy set before it does anything.
fn start_task(
    spec: &BenchSpec,
    mut recorder: LatencyRecorder,
    stop: Arc<AtomicBool>,
) -> Result<std::thread::JoinHandle<TaskOutcome>> {
    let spec = spec.clone();
    std::thread::Builder::new()
        .name("hb-bench".into())
        .spawn(move || {
            sched::name_current_thread("hb-bench");
            let policy = if spec.realtime {
                Policy::Fifo {
                    priority: RT_BENCH_PRIORITY,
                }
            } else {
                Policy::Other
            };
            sched::set_current_thread_policy(policy)
                .context("setting the simulated task's policy")?;
            let task_policy = sched::current_thread_policy();
            let burner = Burner {
                loops_per_ms: spec.loops_per_ms,
            };
            match Profile::of(spec.bench, spec.custom) {
                Some(profile) => {
                    let tk_policy = if spec.timekeeper_fifo {
                        Policy::Fifo {
                            priority: TIMEKEEPER_PRIORITY,
                        }
                    } else {
                        Policy::Other
                    };
                    let out = sim::run_periodic(profile, burner, &stop, tk_policy, &mut recorder)?;
                    Ok((recorder, out.counts, Some(out.timer), task_policy))
                }
                None => {
                    let counts = sim::run_gaming(burner, &stop, &mut recorder);
                    Ok((recorder, counts, None, task_policy))
                }
            }
        })
        .context("starting the simulated task")
}
