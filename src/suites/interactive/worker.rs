//! The two worker roles of `interactive`: the bench worker (one simulated task, measured) and
//! the load worker (one background load). Each answers the coordinator's `start` and `stop`
//! (see `crate::workers`) and ends by printing its report.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use anyhow::{anyhow, Context, Result};
use serde::{Deserialize, Serialize};

use crate::calibration::Burner;
use crate::loads::sim::{self, LatencyRecorder, Profile};
use crate::loads::{self, LoadSpec};
use crate::model::interactive::deadline::DeadlineCounts;
use crate::model::interactive::{Bench, CustomSpec, LatencySummary, LoadReport, TimerStats};
use crate::platform::clock::monotonic_ns;
use crate::platform::rusage::Usage;
use crate::platform::sched::{self, Policy, RT_BENCH_PRIORITY};
use crate::platform::sem::Semaphore;
use crate::workers::Channel;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BenchSpec {
    pub bench: Bench,
    pub custom: Option<CustomSpec>,
    pub loops_per_ms: u64,
    /// `-r`: the task itself runs SCHED_FIFO.
    pub realtime: bool,
    /// How its timekeeper runs (SCHED_FIFO 96 unless this host forbids it; with `-u`, on the
    /// whole mask).
    pub timekeeping: sim::Timekeeping,
    /// `-B`.
    pub nice: i32,
    /// The planned measuring time, to size the sample buffer before measuring.
    pub duration_ns: u64,
    /// `--explain`: the trace instance's marker file, written after each sample.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_marker: Option<std::path::PathBuf>,
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
    /// interbench's latency, a sample per period (Gaming: per frame).
    pub latency: LatencySummary,
    pub samples_ns: Vec<u64>,
    pub samples_truncated: bool,
    /// The pure wake-up latency (timer fired → task running), a sample per sleep; None for
    /// Gaming, which never sleeps.
    pub wake: Option<LatencySummary>,
    pub wake_samples_ns: Vec<u64>,
    /// Deadline → task running (the timer's lateness included).
    pub from_deadline: Option<LatencySummary>,
    /// The CPU the task asked for over the run, % of one CPU.
    pub asked_cpu_pct: f64,
    /// The measuring window, from `start` to `stop`.
    pub wall_ns: u64,
    /// CPU time of the whole bench process over the window (`getrusage(RUSAGE_SELF)`).
    pub cpu_ns: u64,
    /// The task's policy, as its own `sched_getscheduler` reported it.
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
    // The load's threads are made now and wait, as interbench's load process makes its load's
    // thread before the benched process is forked: where the kernel first puts them decides
    // where they run beside the bench's (docs/interactive.md, "Where the threads start").
    let mut handle = loads::prepare(&spec.load)?;
    ch.say("ready")?;
    if !ch.wait_for("start") {
        return handle.stop().map(|_| ());
    }
    handle.go();
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
    let marker = match &spec.trace_marker {
        Some(path) => Some(
            crate::platform::tracefs::open_marker(path)
                .with_context(|| format!("opening the trace marker {}", path.display()))?,
        ),
        None => None,
    };
    let capacity = sim::expected_samples(spec.bench, spec.custom, spec.duration_ns);
    let recorders = Recorders {
        latency: LatencyRecorder::new(capacity, HISTOGRAM_MAX_NS)?,
        wake: LatencyRecorder::new(capacity, HISTOGRAM_MAX_NS)?,
        from_deadline: LatencyRecorder::new(0, HISTOGRAM_MAX_NS)?,
    };
    // The task's thread and its timekeeper are made now and wait for `start`, as interbench's
    // benched process makes both before it tells main it is ready: where the kernel first puts
    // them decides where they run beside the load's threads.
    let stop = Arc::new(AtomicBool::new(false));
    let (gate, arrived) = StartGate::new()?;
    let go = Arc::clone(&gate.go);
    let task = start_task(&spec, recorders, marker, Arc::clone(&stop), gate)?;
    if arrived.recv().is_err() {
        // The thread ended before it reached the gate: its error.
        return match task.join() {
            Ok(Err(e)) => Err(e),
            _ => Err(anyhow!("the simulated task ended before it started")),
        };
    }
    ch.say("ready")?;
    if !ch.wait_for("start") {
        stop.store(true, Ordering::SeqCst);
        go.post();
        let _ = task.join();
        return Ok(());
    }
    let before = Usage::process();
    let start = monotonic_ns();
    go.post();
    ch.say("started")?;
    ch.wait_for("stop");
    stop.store(true, Ordering::SeqCst);
    let done = task
        .join()
        .map_err(|_| anyhow!("the simulated task panicked"))??;
    let wall_ns = monotonic_ns() - start;
    let cpu_ns = Usage::process().since(&before).cpu_ns();
    let r = done.recorders;
    let latency = r.latency.summary();
    let periodic = done.timer.is_some();
    let wake = periodic.then(|| r.wake.summary());
    let from_deadline = periodic.then(|| r.from_deadline.summary());
    let (samples_ns, samples_truncated) = r.latency.into_samples();
    let (wake_samples_ns, _) = r.wake.into_samples();
    ch.report(&BenchReport {
        counts: done.counts,
        latency,
        samples_ns,
        samples_truncated,
        wake,
        wake_samples_ns,
        from_deadline,
        asked_cpu_pct: done.asked_cpu_pct,
        wall_ns,
        cpu_ns,
        task_policy: done.task_policy,
        timer: done.timer,
        memory_locked,
    })
}

/// The histograms reach an hour: a latency beyond it is recorded at an hour.
const HISTOGRAM_MAX_NS: u64 = 3_600_000_000_000;

struct Recorders {
    latency: LatencyRecorder,
    wake: LatencyRecorder,
    from_deadline: LatencyRecorder,
}

/// What the simulated task's thread hands back.
struct TaskDone {
    recorders: Recorders,
    counts: DeadlineCounts,
    timer: Option<TimerStats>,
    task_policy: Policy,
    asked_cpu_pct: f64,
}

/// Where the simulated task waits, made and set up, for the worker's `start`.
struct StartGate {
    /// Told once the task (and its timekeeper) wait at the gate.
    arrived: std::sync::mpsc::Sender<()>,
    /// Posted to let the task go.
    go: Arc<Semaphore>,
}

impl StartGate {
    fn new() -> Result<(StartGate, std::sync::mpsc::Receiver<()>)> {
        let (arrived, at_gate) = std::sync::mpsc::channel();
        let go = Arc::new(Semaphore::new(0).context("the task's start gate")?);
        Ok((StartGate { arrived, go }, at_gate))
    }

    /// Says the task is at the gate and waits there.
    fn wait(&self) {
        let _ = self.arrived.send(());
        self.go.wait();
    }
}

/// Starts the simulated task's thread with its policy set before it does anything; it waits
/// at `gate` (its timekeeper made and set up) until the worker lets it go.
fn start_task(
    spec: &BenchSpec,
    mut recorders: Recorders,
    marker: Option<std::fs::File>,
    stop: Arc<AtomicBool>,
    gate: StartGate,
) -> Result<std::thread::JoinHandle<Result<TaskDone>>> {
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
            let burner = Burner::interbench(spec.loops_per_ms);
            match Profile::of(spec.bench, spec.custom) {
                Some(profile) => {
                    let r = &mut recorders;
                    let out = sim::run_periodic(
                        profile,
                        burner,
                        &stop,
                        spec.timekeeping.clone(),
                        sim::PeriodicRecorders {
                            latency: &mut r.latency,
                            wake: &mut r.wake,
                            from_deadline: &mut r.from_deadline,
                            marker: marker.as_ref(),
                        },
                        &|| gate.wait(),
                    )?;
                    Ok(TaskDone {
                        recorders,
                        counts: out.counts,
                        timer: Some(out.timer),
                        task_policy,
                        asked_cpu_pct: sim::cpu_pct(out.asked_ns, out.span_ns),
                    })
                }
                None => {
                    gate.wait();
                    let counts = sim::run_gaming(burner, &stop, &mut recorders.latency);
                    Ok(TaskDone {
                        recorders,
                        counts,
                        timer: None,
                        task_policy,
                        asked_cpu_pct: 100.0,
                    })
                }
            }
        })
        .context("starting the simulated task")
}
