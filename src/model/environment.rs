use serde::{Deserialize, Serialize};

pub use crate::platform::host::CgroupCpuLimit;
use crate::platform::host::{self, HostFacts};

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

impl Environment {
    /// The environment of this run, read at its start (the steal time is filled in at its end).
    pub fn collect() -> Environment {
        Environment::of(host::facts())
    }

    /// The host's facts, and the build of hostbench that measured it.
    pub fn of(host: HostFacts) -> Environment {
        Environment {
            hostname: host.hostname,
            kernel_release: host.kernel_release,
            kernel_version: host.kernel_version,
            arch: host.arch,
            cpu_model: host.cpu_model,
            cpus_online: host.cpus_online,
            cpus_allowed: host.cpus_allowed,
            cgroup_cpu_limit: host.cgroup_cpu_limit,
            memory_total_bytes: host.memory_total_bytes,
            memory_available_bytes: host.memory_available_bytes,
            swap_total_bytes: host.swap_total_bytes,
            clocksource: host.clocksource,
            cpu_governor: host.cpu_governor,
            lang: host.lang,
            compiler: env!("HOSTBENCH_RUSTC_VERSION").to_string(),
            build_profile: env!("HOSTBENCH_BUILD_PROFILE").to_string(),
            steal_ms_during_run: None,
        }
    }

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
        let mut env = Environment::collect();
        assert!(env.compiler.starts_with("rustc"));
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
