//! The sched suite's part of `hostbench run`: reflex's defaults (w 90, r 1 µs, half the
//! threads active) over a few thread counts from a pair to many a CPU; and two threads again
//! pinned to one CPU, since a pipe ping-pong's cost depends on where its two ends run.

use super::SchedConfig;
use crate::error::UsageError;
use crate::model::order::Order;
use crate::model::sched::confidence::ConfidenceRule;
use crate::model::sched::{
    SchedSettings, DEFAULT_ACTIVE, DEFAULT_CI_PCT, DEFAULT_COMPUTE_US, DEFAULT_THREADS,
    DEFAULT_WEIGHT,
};
use crate::suites::profile::{Profile, RunSetting, SuiteParts};

/// What a profile sets: seconds a run, the stopping rule's least and most runs, and the thread
/// counts as (fixed, per usable CPU) pairs: 2 + 0 × CPUs, 0 + 4 × CPUs, …
struct Size {
    seconds: u64,
    runs: (usize, usize),
    sweep: &'static [(usize, usize)],
}

fn size(profile: Profile) -> Size {
    match profile {
        Profile::Quick => Size {
            seconds: 1,
            runs: (2, 3),
            sweep: &[(2, 0), (0, 4), (0, 32)],
        },
        Profile::Standard => Size {
            seconds: 3,
            runs: (3, 5),
            sweep: &[(2, 0), (0, 4), (0, 16), (0, 64)],
        },
        Profile::Full => Size {
            seconds: 20,
            runs: (3, 10),
            sweep: &[(2, 0), (8, 0), (32, 0), (80, 0), (128, 0)],
        },
        Profile::Smoke => Size {
            seconds: 1,
            runs: (1, 1),
            sweep: &[(2, 0), (4, 0)],
        },
    }
}

/// The part at a setting over these thread counts, pinned or free.
fn config(setting: &RunSetting<'_>, pin: bool, sweep: &[usize]) -> Result<SchedConfig, UsageError> {
    let size = size(setting.profile);
    SchedConfig::new(
        SchedSettings {
            handoff_weight: DEFAULT_WEIGHT,
            compute_us: DEFAULT_COMPUTE_US,
            duration_s: size.seconds,
            rule: ConfidenceRule {
                target_pct: DEFAULT_CI_PCT,
                min_runs: size.runs.0,
                max_runs: size.runs.1,
            },
            pin,
            points: Vec::new(),
            order: Order::Blocks,
        },
        DEFAULT_THREADS,
        DEFAULT_ACTIVE,
        sweep,
    )
}

/// The profile's thread counts on this host, each even (the threads go in pairs).
fn sweep(setting: &RunSetting<'_>) -> Vec<usize> {
    size(setting.profile)
        .sweep
        .iter()
        .map(|&(fixed, per_cpu)| fixed + per_cpu * setting.cpus())
        .map(|c| c + c % 2)
        .collect()
}

pub fn run_parts(setting: &RunSetting<'_>) -> Result<SuiteParts, UsageError> {
    let free = config(setting, false, &sweep(setting))?;
    let pinned = config(setting, true, &[2])?;
    Ok(SuiteParts::free(free).with_pinned(pinned))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suites::profile::tests::{calibration, host, setting};
    use crate::suites::Part;

    #[test]
    fn every_point_plans_the_middle_of_its_runs() {
        let (h, c) = (host(2, None), calibration());
        let s = setting(Profile::Quick, &h, &c);
        let quick = config(&s, false, &sweep(&s)).unwrap();
        let plan = quick.plan();
        assert_eq!(plan.units.len(), quick.settings.points.len());
        assert!(plan.units.iter().all(|u| u.count == 2));
        let s = setting(Profile::Standard, &h, &c);
        assert!(config(&s, false, &sweep(&s)).unwrap().settings.points.len() >= 3);
        assert_eq!(quick.settings.order, Order::Blocks);
    }

    #[test]
    fn thread_counts_stay_even_on_odd_cpu_counts() {
        let (h, c) = (host(3, None), calibration());
        let s = setting(Profile::Standard, &h, &c);
        let standard = config(&s, false, &sweep(&s)).unwrap();
        assert!(standard.settings.points.iter().all(|p| p.0 % 2 == 0));
    }
}
