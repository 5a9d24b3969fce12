//! The noise suite's part of `hostbench run`: p1bench's default CPU job, calibrated by
//! p1bench's rule (run's -l is interbench's, for the other parts), fewer runs when quick.

use super::NoiseConfig;
use crate::error::UsageError;
use crate::model::noise::{NoiseMode, NoiseSettings};
use crate::suites::profile::{Profile, RunSetting, SuiteParts};

/// The job's length (ms) and runs at a profile.
fn size(profile: Profile) -> (u64, u64) {
    match profile {
        Profile::Quick => (100, 30),
        Profile::Standard | Profile::Full => (100, 100),
        Profile::Smoke => (20, 5),
    }
}

/// The part at a setting.
pub fn config(setting: &RunSetting<'_>) -> Result<NoiseConfig, UsageError> {
    let (target_ms, runs_requested) = size(setting.profile);
    NoiseConfig::new(
        NoiseSettings {
            mode: NoiseMode::Cpu,
            target_ms,
            runs_requested,
        },
        None,
        Some(setting.host.memory_available_bytes),
    )
}

pub fn run_parts(setting: &RunSetting<'_>) -> Result<SuiteParts, UsageError> {
    Ok(SuiteParts::free(config(setting)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suites::profile::tests::{calibration, host, setting};
    use crate::suites::Part;

    #[test]
    fn the_part_plans_its_calibration_and_every_run() {
        let (h, c) = (host(2, None), calibration());
        let quick = config(&setting(Profile::Quick, &h, &c)).unwrap();
        let units: u64 = quick.plan().units.iter().map(|u| u.count).sum();
        assert_eq!(units, 1 + 30);
        let standard = config(&setting(Profile::Standard, &h, &c)).unwrap();
        assert_eq!(standard.settings.runs_requested, 100);
    }
}
