//! The wakeup suite's part of `hostbench run`: schbench's workload at a fixed, light rate, a
//! worker a CPU.

use super::{Options, WakeupConfig};
use crate::error::UsageError;
use crate::suites::profile::{Profile, RunSetting, SuiteParts};

/// The part's requests a second, each CPU: with schbench's default request (about 2.5 ms of
/// math on this project's test host) the CPUs are about an eighth busy, so the part measures
/// the wakeup latency of a host that is mostly idle, the case the scheduler's wakeup path
/// serves most; a saturating run is `hostbench wakeup`'s default.
pub const RPS_PER_CPU: u64 = 50;

/// Seconds of the workload at a profile. At least 2: the workers take the first second's batch
/// as they start, without sleeping, so only the second batch gives wakeup latencies.
fn seconds(profile: Profile) -> u64 {
    match profile {
        Profile::Quick => 3,
        Profile::Standard => 10,
        Profile::Full => 30,
        Profile::Smoke => 2,
    }
}

/// The part at a setting.
pub fn config(setting: &RunSetting<'_>) -> Result<WakeupConfig, UsageError> {
    let cpus = setting.cpus();
    WakeupConfig::on(
        &Options {
            workers: Some(cpus),
            runtime_s: seconds(setting.profile),
            rps: Some(RPS_PER_CPU * cpus as u64),
            explain: setting.explain,
            ..Options::default()
        },
        &(0..cpus).collect::<Vec<_>>(),
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
    fn one_run_at_50_requests_a_second_a_cpu() {
        let (h, c) = (host(2, None), calibration());
        let quick = config(&setting(Profile::Quick, &h, &c)).unwrap();
        let plan = quick.plan();
        assert_eq!(plan.units.len(), 1);
        assert_eq!(quick.settings.rps, 100);
        assert_eq!(quick.settings.workers, 2);
        assert!(plan.estimate_s() >= 3.0);
    }
}
