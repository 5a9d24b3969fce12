//! `sched`, after reflex: the scheduler's cost per round with a tunable number of runnable
//! threads and a mix of yields and block/wake hand-offs. Runs repeat until the 95% interval of
//! µs/round is tight, and a sweep measures several thread counts into one result (docs/sched.md).

pub mod event;
mod part;
pub use event::SchedEvent;
pub use part::run_parts;
pub mod ring;

use std::sync::atomic::AtomicBool;

use anyhow::Result;

use super::event::{Event, Events, EVERY_UNIT};
use super::{Plan, Unit};
use crate::calibration::BurnCalibration;
use crate::error::UsageError;
use crate::model::sched::{Order, SchedPoint, SchedResult, SchedRun, SchedSettings, Verdict};
use crate::model::SuiteResult;
use ring::{run_once, RingSpec};

/// Most threads of one point (`-c`): beyond this the run measures thread creation and memory,
/// not the scheduler, and stopping it takes seconds.
pub const MAX_THREADS: usize = 16_384;
/// Most µs of computing in a round (`-r`): one second; a round is computed in slices of at most
/// a millisecond between looks at the stop flag, so Ctrl-C still ends a run at once.
pub const MAX_COMPUTE_US: u64 = 1_000_000;
/// Most seconds of one run (`-t`): a day.
pub const MAX_DURATION_S: u64 = 86_400;
/// Most runs of one point (`--max-runs`).
pub const MAX_RUNS: usize = 1_000;

/// A validated sched configuration.
#[derive(Debug, Clone)]
pub struct SchedConfig {
    pub settings: SchedSettings,
}

impl SchedConfig {
    /// Each thread has a pipe (two descriptors) and counts against the user's process limit and
    /// the kernel's thread limit: checked before starting.
    pub fn check_limits(&self) -> Result<(), UsageError> {
        let threads = self.max_threads();
        let needed = ring::fds_needed(threads);
        if let Err(most) = crate::platform::limits::ensure_open_files(needed) {
            return Err(UsageError::new(format!(
                "{threads} threads need {needed} file descriptors, and this process may open {most} (ulimit -n): raise the limit or use fewer threads"
            )));
        }
        let room = |limit: u64| limit.saturating_sub(64) >= threads as u64;
        if let Some(l) = crate::platform::limits::process_limit().filter(|&l| !room(l)) {
            return Err(UsageError::new(format!(
                "{threads} threads do not fit in this user's process limit of {l} (ulimit -u): raise it or use fewer threads"
            )));
        }
        if let Some(l) = crate::platform::limits::system_thread_limit().filter(|&l| !room(l / 2)) {
            return Err(UsageError::new(format!(
                "{threads} threads are over half the kernel's limit of {l} threads (kernel.threads-max): use fewer threads"
            )));
        }
        Ok(())
    }

    /// `sweep`: thread counts to run instead of `threads`, each with the same ratio of active
    /// sets to threads as `active_sets / threads`.
    pub fn new(
        mut settings: SchedSettings,
        threads: usize,
        active_sets: usize,
        sweep: &[usize],
    ) -> Result<Self, UsageError> {
        if settings.handoff_weight > 100 {
            return Err(UsageError::new(format!(
                "-w must be from 0 to 100 (got {})",
                settings.handoff_weight
            )));
        }
        if settings.duration_s == 0 || settings.duration_s > MAX_DURATION_S {
            return Err(UsageError::new(format!(
                "-t must be from 1 to {MAX_DURATION_S} seconds (got {})",
                settings.duration_s
            )));
        }
        if settings.compute_us > MAX_COMPUTE_US {
            return Err(UsageError::new(format!(
                "-r must be at most {MAX_COMPUTE_US} microseconds of computing a round (got {})",
                settings.compute_us
            )));
        }
        let r = &settings.rule;
        if !r.target_pct.is_finite() || r.target_pct <= 0.0 {
            return Err(UsageError::new("--ci must be a finite percentage above 0"));
        }
        if r.min_runs == 0 || r.max_runs == 0 || r.min_runs > r.max_runs || r.max_runs > MAX_RUNS {
            return Err(UsageError::new(format!(
                "--min-runs ({}) must be at least 1 and at most --max-runs ({}), which must be from 1 to {MAX_RUNS}",
                r.min_runs, r.max_runs
            )));
        }
        check_point(threads, active_sets)?;
        let mut seen = std::collections::BTreeSet::new();
        if let Some(c) = sweep.iter().find(|&&c| !seen.insert(c)) {
            return Err(UsageError::new(format!(
                "--sweep names {c} threads twice; give each thread count once"
            )));
        }
        settings.points = if sweep.is_empty() {
            vec![(threads, active_sets)]
        } else {
            sweep
                .iter()
                .map(|&c| {
                    // In u128: a sweep's counts are the user's and may be anything.
                    let a = (c as u128 * active_sets as u128 / threads as u128).max(1);
                    let a = usize::try_from(a).unwrap_or(usize::MAX);
                    check_point(c, a).map(|_| (c, a))
                })
                .collect::<Result<_, _>>()?
        };
        Ok(SchedConfig { settings })
    }

    pub fn max_threads(&self) -> usize {
        self.settings.points.iter().map(|p| p.0).max().unwrap_or(0)
    }
}

fn check_point(c: usize, a: usize) -> Result<(), UsageError> {
    if c > MAX_THREADS {
        return Err(UsageError::new(format!(
            "-c must be at most {MAX_THREADS} threads (got {c})"
        )));
    }
    if c < 2 || !c.is_multiple_of(2) {
        return Err(UsageError::new(format!(
            "-c must be an even number of threads, at least 2 (got {c})"
        )));
    }
    if a == 0 || a > c {
        return Err(UsageError::new(format!(
            "-a must be from 1 to the thread count {c} (got {a})"
        )));
    }
    if !c.is_multiple_of(a) {
        return Err(UsageError::new(format!(
            "{c} threads cannot form {a} equal active sets: -a must divide -c"
        )));
    }
    Ok(())
}

/// What a run measures: every (threads, active sets) point, each about as many runs as the
/// middle of the stopping rule's range, each run its `-t` seconds and the threads' start.
pub fn plan(config: &SchedConfig) -> Plan {
    let s = &config.settings;
    let runs = (s.rule.min_runs + s.rule.max_runs) as u64 / 2;
    Plan {
        units: s
            .points
            .iter()
            .map(|&(threads, active)| {
                Unit::new(
                    format!("{threads} threads, {active} active sets"),
                    runs,
                    s.duration_s as f64 + 0.2,
                )
            })
            .collect(),
    }
}

/// One point of a run: its ring, and the runs it has had.
struct PointRun {
    spec: RingSpec,
    runs: Vec<SchedRun>,
    verdict: Option<Verdict>,
}

impl PointRun {
    fn point(&self) -> SchedPoint {
        let (threads, active_sets) = (self.spec.threads, self.spec.active_sets);
        SchedPoint::of(threads, active_sets, self.runs.clone(), self.verdict)
    }
}

/// Measures every point: runs of `duration_s` repeated until the confidence rule stops them,
/// each point's in turn (reflex's order) or in rounds (every point's next run in turn). A stop
/// (signal) ends the run with the runs already complete; a point it cut short has no verdict,
/// and a point that had no run is left out.
pub fn measure(
    config: &SchedConfig,
    calibration: BurnCalibration,
    stop: &AtomicBool,
    events: &mut dyn Events,
) -> Result<SchedResult> {
    let s = &config.settings;
    let mut points: Vec<PointRun> = s
        .points
        .iter()
        .map(|&(threads, active_sets)| PointRun {
            spec: RingSpec {
                threads,
                active_sets,
                handoff_weight: s.handoff_weight,
                compute_us: s.compute_us,
                duration_ns: s.duration_s * 1_000_000_000,
                loops_per_ms: calibration.loops_per_ms,
                pin: s.pin,
            },
            runs: Vec::new(),
            verdict: None,
        })
        .collect();
    // The host's account of each run's threads.
    let probe = crate::platform::account::enabled().then(crate::platform::account::Probe::default);
    let mut measuring = Measuring {
        settings: s,
        calibration: &calibration,
        probe: probe.as_ref(),
        stop,
    };
    let blocks = s.order == Order::Blocks;
    'rounds: loop {
        let mut ran = false;
        for k in 0..points.len() {
            // In blocks, a point's runs until its rule stops them; in rounds, one.
            while points[k].verdict.is_none() {
                ran = true;
                if !measuring.step(&mut points, k, events)? {
                    break 'rounds;
                }
                if !blocks {
                    break;
                }
            }
        }
        if !ran {
            break;
        }
    }
    Ok(SchedResult {
        settings: s.clone(),
        calibration,
        points: measured(&points),
    })
}

/// The points that have had a run, as the result keeps them.
fn measured(points: &[PointRun]) -> Vec<SchedPoint> {
    points
        .iter()
        .filter(|p| !p.runs.is_empty())
        .map(PointRun::point)
        .collect()
}

/// What every run of a sched part needs.
struct Measuring<'a> {
    settings: &'a SchedSettings,
    calibration: &'a BurnCalibration,
    probe: Option<&'a crate::platform::account::Probe>,
    stop: &'a AtomicBool,
}

impl Measuring<'_> {
    /// One run of point `k`, its rule's verdict, and a checkpoint. False when a stop came.
    fn step(&mut self, points: &mut [PointRun], k: usize, events: &mut dyn Events) -> Result<bool> {
        let Some(run) = run_once(points[k].spec, self.stop, self.probe)? else {
            return Ok(false);
        };
        let p = &mut points[k];
        events.event(Event::Sched(SchedEvent::RunDone {
            threads: p.spec.threads,
            active_sets: p.spec.active_sets,
            index: p.runs.len(),
            run: &run,
        }));
        p.runs.push(run);
        let values: Vec<f64> = p.runs.iter().map(|r| r.us_per_round).collect();
        p.verdict = self.settings.rule.check(&values);
        if p.verdict.is_some() {
            events.event(Event::Sched(SchedEvent::PointDone(&p.point())));
        }
        let (threads, runs) = (p.spec.threads, p.runs.len());
        let us = p.runs[runs - 1].us_per_round;
        let done = points.iter().filter(|p| p.verdict.is_some()).count();
        events.event(Event::progress(
            done as u64,
            points.len() as u64,
            &format_args!("{threads} threads, run {runs}: {us:.2} us/round"),
        ));
        events.event(Event::Partial {
            every: EVERY_UNIT,
            build: &|| {
                SuiteResult::Sched(SchedResult {
                    settings: self.settings.clone(),
                    calibration: self.calibration.clone(),
                    points: measured(points),
                })
            },
        });
        Ok(true)
    }
}

impl crate::suites::Part for SchedConfig {
    fn plan(&self) -> Plan {
        plan(self)
    }

    fn suite(&self) -> &'static str {
        "sched"
    }

    fn measures(&self) -> String {
        let s = &self.settings;
        format!(
            "{}{} threads, {} s runs, {} to {} runs each{}",
            crate::suites::placement(s.pin),
            crate::suites::listed(s.points.iter().map(|p| p.0)),
            s.duration_s,
            s.rule.min_runs,
            s.rule.max_runs,
            match s.order {
                Order::Blocks => "",
                Order::Rounds => ", in rounds",
            }
        )
    }

    /// A part of `run` calibrates the chain loop first (`sched` alone is given its
    /// calibration by the command).
    fn measure_part(
        &self,
        with: &crate::suites::PartInputs<'_>,
        stop: &AtomicBool,
        events: &mut dyn Events,
    ) -> Result<(crate::model::SuiteResult, Option<String>)> {
        let burn = crate::calibration::burn_calibration(
            with.calibration,
            crate::calibration::BurnLoop::Chain,
            &mut |_| {},
        );
        events.event(Event::BurnCalibrated {
            calibration: &burn.calibration,
            cache_warning: burn.cache_warning.as_deref(),
        });
        Ok((
            crate::model::SuiteResult::Sched(measure(self, burn.calibration, stop, events)?),
            None,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::sched::ConfidenceRule;

    fn settings() -> SchedSettings {
        SchedSettings {
            handoff_weight: 90,
            compute_us: 1,
            duration_s: 1,
            rule: ConfidenceRule {
                target_pct: 5.0,
                min_runs: 3,
                max_runs: 10,
            },
            pin: false,
            points: vec![],
            order: Order::Blocks,
        }
    }

    #[test]
    fn points_and_sweeps() {
        let c = SchedConfig::new(settings(), 80, 40, &[]).unwrap();
        assert_eq!(c.settings.points, vec![(80, 40)]);
        let c = SchedConfig::new(settings(), 8, 4, &[2, 4, 16, 256]).unwrap();
        assert_eq!(c.settings.points, vec![(2, 1), (4, 2), (16, 8), (256, 128)]);
        assert_eq!(c.max_threads(), 256);
    }

    #[test]
    fn bad_values_are_refused() {
        let err = |s: SchedSettings, c, a, sweep: &[usize]| {
            SchedConfig::new(s, c, a, sweep).unwrap_err().to_string()
        };
        assert!(err(settings(), 7, 1, &[]).contains("even"));
        assert!(err(settings(), 8, 9, &[]).contains("-a"));
        assert!(err(settings(), 8, 3, &[]).contains("divide"));
        assert!(err(settings(), 8, 0, &[]).contains("-a"));
        assert!(err(
            SchedSettings {
                handoff_weight: 101,
                ..settings()
            },
            8,
            4,
            &[]
        )
        .contains("-w"));
        assert!(err(
            SchedSettings {
                duration_s: 0,
                ..settings()
            },
            8,
            4,
            &[]
        )
        .contains("-t"));
        assert!(err(settings(), 8, 4, &[3]).contains("even"));
    }
}
