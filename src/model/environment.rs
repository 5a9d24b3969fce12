use serde::{Deserialize, Serialize};

/// The host a result was measured on: enough to tell a VM from bare metal, a throttled container
/// from a whole machine, and two kernels apart.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Environment {
    pub hostname: String,
    pub kernel_release: String,
    pub kernel_version: String,
    pub arch: String,
    pub cpu_model: String,
    /// CPUs online on the host.
    pub cpus_online: usize,
    /// CPUs in this process's affinity mask.
    pub cpus_allowed: usize,
    /// The cgroup CPU quota, if one limits this process.
    pub cgroup_cpu_limit: Option<CgroupCpuLimit>,
    pub memory_total_bytes: u64,
    pub memory_available_bytes: u64,
    pub swap_total_bytes: u64,
    pub clocksource: Option<String>,
    pub cpu_governor: Option<String>,
    /// `LANG` as the process saw it (None when unset).
    pub lang: Option<String>,
    /// The compiler that built hostbench (`rustc --version`) and the build profile.
    pub compiler: String,
    pub build_profile: String,
    /// CPU time stolen by the hypervisor from all CPUs while the run lasted, in ms (from
    /// /proc/stat); None when the kernel does not report it.
    pub steal_ms_during_run: Option<f64>,
}

/// A cgroup CPU bandwidth limit: `quota_us` of CPU time every `period_us`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CgroupCpuLimit {
    pub quota_us: u64,
    pub period_us: u64,
}

impl CgroupCpuLimit {
    /// The limit expressed in CPUs (quota / period).
    pub fn cpus(&self) -> f64 {
        self.quota_us as f64 / self.period_us as f64
    }
}

impl Environment {
    /// The CPUs this process may really use: its affinity mask, and the cgroup quota rounded
    /// up, whichever is smaller. Never capped at a fixed count (UnixBench stopped at 16).
    pub fn usable_cpus(&self) -> usize {
        let quota = self
            .cgroup_cpu_limit
            .as_ref()
            .map_or(usize::MAX, |l| l.cpus().ceil().max(1.0) as usize);
        self.cpus_allowed.min(quota).max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usable_cpus_are_the_mask_or_the_quota_rounded_up() {
        let mut env = crate::platform::host::collect_environment();
        env.cpus_allowed = 8;
        env.cgroup_cpu_limit = None;
        assert_eq!(env.usable_cpus(), 8);
        let limit = |quota_us| CgroupCpuLimit {
            quota_us,
            period_us: 100_000,
        };
        env.cgroup_cpu_limit = Some(limit(150_000));
        assert_eq!(env.usable_cpus(), 2);
        env.cgroup_cpu_limit = Some(limit(20_000));
        assert_eq!(env.usable_cpus(), 1);
        env.cgroup_cpu_limit = Some(limit(1_600_000));
        assert_eq!(env.usable_cpus(), 8);
    }
}
