use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::platform::files;
pub use crate::platform::host::CgroupCpuLimit;
use crate::platform::host::{self, HostFacts};
use crate::text::Text;

/// The host a result was measured on: enough to tell a VM from bare metal, a throttled container
/// from a whole machine, and two kernels apart — the host's facts as `platform::host` reads
/// them, and the build of hostbench that measured it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Environment {
    /// Stored as fields of the environment itself (the JSON is as it always was).
    #[serde(flatten)]
    pub host: HostFacts,
    /// The compiler that built hostbench (`rustc --version`) and the build profile.
    pub compiler: Text,
    pub build_profile: Text,
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
            host,
            compiler: env!("HOSTBENCH_RUSTC_VERSION").into(),
            build_profile: env!("HOSTBENCH_BUILD_PROFILE").into(),
            steal_ms_during_run: None,
        }
    }

    /// The CPUs this process may really use: its affinity mask, and the cgroup quota rounded
    /// up, whichever is smaller. Never capped at a fixed count (UnixBench stopped at 16).
    pub fn usable_cpus(&self) -> usize {
        let quota = self
            .host
            .cgroup_cpu_limit
            .as_ref()
            .map_or(usize::MAX, |l| l.cpus().ceil().max(1.0) as usize);
        self.host.cpus_allowed.min(quota).max(1)
    }
}

/// What a suite's configuration and a load's `supported` need to know of the host: the CPUs
/// this process may use, the memory, and the room where its files go. Read from the run's
/// `Environment` (the host's facts, as stored with the result), not measured again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostLimits {
    /// CPUs this process may use (its affinity and cgroup quota).
    pub usable_cpus: usize,
    pub memory_total_bytes: u64,
    pub memory_available_bytes: u64,
    pub swap_bytes: u64,
    /// Free bytes in the directory the Write and Read files would go to, where it can be read.
    pub free_disk_bytes: Option<u64>,
}

impl HostLimits {
    /// The limits of the host `environment` describes, with its files in `workdir`.
    pub fn of(environment: &Environment, workdir: &Path) -> HostLimits {
        HostLimits {
            usable_cpus: environment.usable_cpus(),
            memory_total_bytes: environment.host.memory_total_bytes,
            memory_available_bytes: environment.host.memory_available_bytes,
            swap_bytes: environment.host.swap_total_bytes,
            free_disk_bytes: files::free_bytes(workdir).ok(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usable_cpus_are_the_mask_or_the_quota_rounded_up() {
        let mut env = Environment::collect();
        assert!(env.compiler.raw().starts_with("rustc"));
        env.host.cpus_allowed = 8;
        env.host.cgroup_cpu_limit = None;
        assert_eq!(env.usable_cpus(), 8);
        let limit = |quota_us| CgroupCpuLimit {
            quota_us,
            period_us: 100_000,
        };
        env.host.cgroup_cpu_limit = Some(limit(150_000));
        assert_eq!(env.usable_cpus(), 2);
        env.host.cgroup_cpu_limit = Some(limit(20_000));
        assert_eq!(env.usable_cpus(), 1);
        env.host.cgroup_cpu_limit = Some(limit(1_600_000));
        assert_eq!(env.usable_cpus(), 8);
    }
}
