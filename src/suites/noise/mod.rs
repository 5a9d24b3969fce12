//! `noise`: p1bench. Times a fixed job (a CPU spin loop, or a memory read loop over a working
//! set) calibrated to a target length, many times, and characterises how much the run time
//! varies on this host.

pub mod event;
mod part;
pub use event::NoiseEvent;
pub use part::run_parts;
mod check;
pub(in crate::suites) mod workload;

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::{anyhow, Result};

pub use workload::{WorkingSet, Workload, CACHE_LINE};

use super::event::{Event, Events};
use super::{Plan, Unit};
use crate::calibration::calibrate_like_p1bench;
use crate::error::UsageError;
use crate::model::account::Account;
use crate::model::noise::{
    summarize, NoiseCalibration, NoiseMode, NoiseResult, NoiseRun, NoiseSettings,
};
use crate::model::SuiteResult;
use crate::platform::account::{self, Probe, Task};
use crate::platform::clock::monotonic_ns;
use crate::platform::rusage::Usage;
use crate::platform::sched;
use crate::suites::reference;

/// A validated noise configuration.
#[derive(Debug, Clone)]
pub struct NoiseConfig {
    pub settings: NoiseSettings,
    /// `-l`: the spin loop's iterations a millisecond, which fix the count (loops/ms × target)
    /// instead of p1bench's calibration. CPU job only.
    pub loops_per_ms: Option<u64>,
}

/// Runs between two readings of the host's speed (`suites::reference`): one run in ten has
/// them, at about 1% of the runs' time.
pub const REFERENCE_EVERY: usize = 10;

/// The most runs one invocation may ask for: the run times are kept in memory.
pub const MAX_RUNS: u64 = 10_000_000;

impl NoiseConfig {
    /// Checks the cross-option rules; `available_memory` is the host's MemAvailable in bytes.
    pub fn new(
        settings: NoiseSettings,
        loops_per_ms: Option<u64>,
        available_memory: Option<u64>,
    ) -> Result<Self, UsageError> {
        if settings.target_ms == 0 {
            return Err(UsageError::new("time_ms must be at least 1 ms (got 0)"));
        }
        if settings.target_ms > 3_600_000 {
            return Err(UsageError::new(format!(
                "time_ms must be at most 3600000 (one hour), got {}",
                settings.target_ms
            )));
        }
        if settings.runs_requested == 0 {
            return Err(UsageError::new("count must be at least 1 run (got 0)"));
        }
        if settings.runs_requested > MAX_RUNS {
            return Err(UsageError::new(format!(
                "count must be at most {MAX_RUNS}, got {}",
                settings.runs_requested
            )));
        }
        if let NoiseMode::Memory { working_set_mb } = settings.mode {
            if working_set_mb == 0 {
                return Err(UsageError::new("-m Mbytes must be at least 1 (got 0)"));
            }
            if loops_per_ms.is_some() {
                return Err(UsageError::new(
                    "-l fixes the CPU spin loop's count and cannot be used with -m (the memory loop is always calibrated)",
                ));
            }
            let bytes = working_set_mb.saturating_mul(1 << 20);
            if let Some(avail) = available_memory {
                if bytes > avail {
                    return Err(UsageError::new(format!(
                        "-m {working_set_mb}: the working set is larger than the {} MB of memory available",
                        avail >> 20
                    )));
                }
            }
        }
        Ok(NoiseConfig {
            settings,
            loops_per_ms,
        })
    }
}

/// How often a noise run's result so far is stored: its runs last a tenth of a second, and a
/// write between two of them could be seen in the next; every 30 s loses little.
pub const CHECKPOINT_EVERY: Duration = Duration::from_secs(30);

/// What a run measures: the calibration to the target length, then the runs, each a little
/// longer than the target for the timing around it.
pub fn plan(config: &NoiseConfig) -> Plan {
    let s = &config.settings;
    Plan {
        units: vec![
            Unit::new("calibration", 1, 2.0),
            Unit::new("run", s.runs_requested, s.target_ms as f64 / 1e3 * 1.05),
        ],
    }
}

/// p1bench's calibration for both jobs (find_count): the count of a 100 ms test run, timed
/// five times, scaled so that the fastest would take the target. With -l (CPU mode), the count
/// is that many spin-loop iterations a millisecond times the target, not tuned. None when a
/// stop came during it.
fn calibrate(
    config: &NoiseConfig,
    workload: &Workload,
    stop: &AtomicBool,
) -> Option<NoiseCalibration> {
    let settings = config.settings;
    let p1bench = match config.loops_per_ms {
        Some(_) => None,
        None => {
            let mut work = |n: u64| workload.run(n);
            Some(calibrate_like_p1bench(
                &mut work,
                settings.target_ms * 1_000_000,
                stop,
            )?)
        }
    };
    Some(NoiseCalibration {
        iterations: match (&p1bench, config.loops_per_ms) {
            (Some(p1), _) => p1.iterations,
            (None, per_ms) => per_ms.unwrap_or(0).saturating_mul(settings.target_ms),
        },
        burn: None,
        memory_rate: None,
        target: None,
        p1bench,
    })
}

/// One timed run of the job; with `probe`, the host's account of it (this thread's counters
/// and its CPU's, read just before and just after the timed call), and with `reference` the
/// host's speed on the thread's CPU around it.
fn time_run(
    workload: &Workload,
    iterations: u64,
    probe: Option<&Probe>,
    reference: bool,
) -> NoiseRun {
    let me = [Task::this_thread()];
    let reference_cpu = reference.then(sched::current_cpu).flatten();
    let ref_before = reference_cpu.and_then(|c| reference::read(&[c]));
    let opened = probe.map(|p| p.start(&me));
    let before = Usage::thread();
    let start = monotonic_ns();
    workload.run(iterations);
    let end = monotonic_ns();
    let used = Usage::thread().since(&before);
    let account = probe.zip(opened).map(|(p, o)| Account {
        reference_ns: reference_cpu
            .and_then(|c| reference::around(ref_before, reference::read(&[c]))),
        ..Account::of(p.end(o, &me))
    });
    NoiseRun {
        time_ns: end - start,
        user_ns: used.user_ns,
        sys_ns: used.sys_ns,
        voluntary_csw: used.voluntary_csw,
        involuntary_csw: used.involuntary_csw,
        account: account.map(Box::new),
    }
}

/// Calibrates the job and times it `runs_requested` times, or until `stop` is set. A stop
/// during calibration returns a result with no runs.
pub fn measure(
    config: &NoiseConfig,
    stop: &AtomicBool,
    events: &mut dyn Events,
) -> Result<NoiseResult> {
    let settings = config.settings;
    events.event(Event::Noise(NoiseEvent::Calibrating(&settings)));
    let units = settings.runs_requested + 1;
    events.event(Event::progress(0, units, &"calibrating"));

    let workload = match settings.mode {
        NoiseMode::Cpu => Workload::Spin,
        NoiseMode::Memory { working_set_mb } => {
            Workload::Memory(WorkingSet::new((working_set_mb as usize) << 20)?)
        }
    };
    let Some(calibration) = calibrate(config, &workload, stop) else {
        return Ok(empty(settings));
    };
    if calibration.iterations == 0 {
        return Err(anyhow!(
            "calibration found no iterations for {} ms",
            settings.target_ms
        ));
    }
    events.event(Event::Noise(NoiseEvent::Calibrated(&calibration)));

    // The host's account of each run: this thread's counters and its CPU's, read just before
    // and just after the timed call.
    let (probe, accounting) = (Probe::default(), account::enabled());
    let planned = settings.runs_requested;
    let mut runs: Vec<NoiseRun> = Vec::with_capacity(planned as usize);
    let mut fastest_ns = u64::MAX;
    for index in 0..planned as usize {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        // Every tenth run, the host's speed on this thread's CPU, just before and just after.
        let reference = accounting && index % REFERENCE_EVERY == 0;
        let run = time_run(
            &workload,
            calibration.iterations,
            accounting.then_some(&probe),
            reference,
        );
        fastest_ns = fastest_ns.min(run.time_ns);
        runs.push(run);
        events.event(Event::Noise(NoiseEvent::RunDone {
            index,
            planned,
            run: &runs[index],
            previous: index.checked_sub(1).map(|i| &runs[i]),
            fastest_ns,
        }));
        events.event(Event::progress(index as u64 + 2, units, &"timing runs"));
        events.event(Event::Partial {
            every: CHECKPOINT_EVERY,
            build: &|| {
                SuiteResult::Noise(NoiseResult {
                    settings,
                    calibration: Some(calibration.clone()),
                    runs: runs.clone(),
                    summary: summarize(&runs, calibration.iterations),
                })
            },
        });
    }
    let summary = summarize(&runs, calibration.iterations);
    Ok(NoiseResult {
        settings,
        calibration: Some(calibration),
        runs,
        summary,
    })
}

fn empty(settings: NoiseSettings) -> NoiseResult {
    NoiseResult {
        settings,
        calibration: None,
        runs: Vec::new(),
        summary: None,
    }
}

impl crate::suites::Part for NoiseConfig {
    fn plan(&self) -> Plan {
        plan(self)
    }

    fn suite(&self) -> &'static str {
        "noise"
    }

    fn measures(&self) -> String {
        let n = &self.settings;
        format!("{} runs of a {} ms CPU job", n.runs_requested, n.target_ms)
    }

    fn measure_part(
        &self,
        _with: &crate::suites::PartInputs<'_>,
        stop: &AtomicBool,
        events: &mut dyn Events,
    ) -> Result<(crate::model::SuiteResult, Option<String>)> {
        Ok((
            crate::model::SuiteResult::Noise(measure(self, stop, events)?),
            None,
        ))
    }
}
