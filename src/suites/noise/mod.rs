//! `noise`: p1bench. Times a fixed job (a CPU spin loop, or a memory read loop over a working
//! set) calibrated to a target length, many times, and characterises how much the run time
//! varies on this host.

mod check;
mod workload;

use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::{anyhow, Result};

pub use workload::{WorkingSet, Workload, CACHE_LINE};

use super::{Plan, Unit};
use crate::calibration::{
    burn_calibration, burn_loops, calibrate_to_target, measure_rate, BurnLoop, CalibrationOptions,
    RateBudget,
};
use crate::error::UsageError;
use crate::model::noise::{
    summarize, NoiseCalibration, NoiseMode, NoiseResult, NoiseRun, NoiseSettings,
};
use crate::platform::clock::monotonic_ns;
use crate::platform::rusage::Usage;

/// A validated noise configuration.
#[derive(Debug, Clone)]
pub struct NoiseConfig {
    pub settings: NoiseSettings,
    pub calibration: CalibrationOptions,
}

/// The most runs one invocation may ask for: the run times are kept in memory.
pub const MAX_RUNS: u64 = 10_000_000;

impl NoiseConfig {
    /// Checks the cross-option rules; `available_memory` is the host's MemAvailable in bytes.
    pub fn new(
        settings: NoiseSettings,
        calibration: CalibrationOptions,
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
            if calibration.given_loops_per_ms.is_some() {
                return Err(UsageError::new(
                    "-l sets the CPU spin loop's speed and cannot be used with -m (the memory loop is always calibrated)",
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
            calibration,
        })
    }
}

/// What a noise run reports while it works; the caller decides what to show.
pub trait NoiseObserver {
    fn calibrating(&mut self, _settings: &NoiseSettings) {}
    fn calibrated(&mut self, _calibration: &NoiseCalibration, _cache_warning: Option<&str>) {}
    /// After each run: its index (0-based), the runs planned, the run, the previous run and the
    /// fastest so far.
    fn run_done(
        &mut self,
        _index: usize,
        _planned: u64,
        _run: &NoiseRun,
        _previous: Option<&NoiseRun>,
        _fastest_ns: u64,
    ) {
    }
    /// After each run: `partial` makes the result of the runs so far, to store as it goes.
    fn checkpoint(&mut self, _partial: &dyn Fn() -> NoiseResult) {}
}

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

/// An observer that shows nothing.
pub struct Silent;
impl NoiseObserver for Silent {}

/// Calibrates the job and times it `runs_requested` times, or until `stop` is set. A stop
/// during calibration returns a result with no runs.
pub fn measure(
    config: &NoiseConfig,
    stop: &AtomicBool,
    observer: &mut dyn NoiseObserver,
) -> Result<NoiseResult> {
    let settings = config.settings;
    let target_ns = settings.target_ms * 1_000_000;
    observer.calibrating(&settings);

    let (workload, calibration, cache_warning) = match settings.mode {
        NoiseMode::Cpu => {
            let outcome = burn_calibration(&config.calibration, BurnLoop::Chain);
            let burn = outcome.calibration;
            let ballpark = burn.loops_per_ms.saturating_mul(settings.target_ms);
            let target = if config.calibration.given_loops_per_ms.is_some() {
                None
            } else {
                match calibrate_to_target(&mut burn_loops, ballpark, target_ns, stop) {
                    Some(t) => Some(t),
                    None => return Ok(empty(settings)),
                }
            };
            let calibration = NoiseCalibration {
                iterations: target.map_or(ballpark, |t| t.iterations),
                burn: Some(burn),
                memory_rate: None,
                target,
            };
            (Workload::Spin, calibration, outcome.cache_warning)
        }
        NoiseMode::Memory { working_set_mb } => {
            let ws = WorkingSet::new((working_set_mb as usize) << 20)?;
            // Ballpark timings long enough to sweep well beyond the caches.
            let budget = RateBudget {
                chunk_ms: 20.0,
                budget_ms: 100.0,
                min_samples: 3,
                max_samples: 20,
                rest_ms: 0.0,
            };
            let mut read = |n: u64| {
                std::hint::black_box(ws.read_lines(n));
            };
            let rate = measure_rate(&mut read, budget);
            let ballpark = (rate.per_ms * settings.target_ms as f64) as u64;
            let Some(target) = calibrate_to_target(&mut read, ballpark, target_ns, stop) else {
                return Ok(empty(settings));
            };
            let calibration = NoiseCalibration {
                iterations: target.iterations,
                burn: None,
                memory_rate: Some(rate),
                target: Some(target),
            };
            (Workload::Memory(ws), calibration, None)
        }
    };
    if calibration.iterations == 0 {
        return Err(anyhow!(
            "calibration found no iterations for {} ms",
            settings.target_ms
        ));
    }
    observer.calibrated(&calibration, cache_warning.as_deref());

    let planned = settings.runs_requested;
    let mut runs: Vec<NoiseRun> = Vec::with_capacity(planned as usize);
    let mut fastest_ns = u64::MAX;
    for index in 0..planned as usize {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let before = Usage::thread();
        let start = monotonic_ns();
        workload.run(calibration.iterations);
        let end = monotonic_ns();
        let used = Usage::thread().since(&before);
        let run = NoiseRun {
            time_ns: end - start,
            user_ns: used.user_ns,
            sys_ns: used.sys_ns,
            voluntary_csw: used.voluntary_csw,
            involuntary_csw: used.involuntary_csw,
        };
        fastest_ns = fastest_ns.min(run.time_ns);
        runs.push(run);
        observer.run_done(
            index,
            planned,
            &run,
            index.checked_sub(1).map(|i| &runs[i]),
            fastest_ns,
        );
        observer.checkpoint(&|| NoiseResult {
            settings,
            calibration: Some(calibration.clone()),
            runs: runs.clone(),
            summary: summarize(&runs, calibration.iterations),
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
