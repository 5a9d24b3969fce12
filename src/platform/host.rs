//! Facts about the host, read from /proc, /sys and uname. Each reader tolerates a missing file
//! (containers hide some of them) and returns None or a default rather than failing the run.

use std::fs;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::text::Text;

/// What this host is, as read now: plain facts, which the result model wraps into its
/// `Environment` (and suites ask whether a unit can run here).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HostFacts {
    pub hostname: Text,
    pub kernel_release: Text,
    pub kernel_version: Text,
    pub arch: Text,
    pub cpu_model: Text,
    /// CPUs online on the host.
    pub cpus_online: usize,
    /// CPUs in this process's affinity mask.
    pub cpus_allowed: usize,
    /// The cgroup CPU quota, if one limits this process.
    pub cgroup_cpu_limit: Option<CgroupCpuLimit>,
    pub memory_total_bytes: u64,
    pub memory_available_bytes: u64,
    pub swap_total_bytes: u64,
    pub clocksource: Option<Text>,
    pub cpu_governor: Option<Text>,
    /// `LANG` as the process saw it (None when unset).
    pub lang: Option<Text>,
    /// `/etc/machine-id`: the host's identity, which a new hostname does not change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine_id: Option<Text>,
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

/// Reads the host's facts.
pub fn facts() -> HostFacts {
    let uts = uname();
    let meminfo = fs::read_to_string("/proc/meminfo").unwrap_or_default();
    HostFacts {
        hostname: uts.nodename.into(),
        kernel_release: uts.release.into(),
        kernel_version: uts.version.into(),
        arch: uts.machine.into(),
        cpu_model: cpu_model().into(),
        cpus_online: cpus_online(),
        cpus_allowed: cpus_allowed(),
        cgroup_cpu_limit: cgroup_cpu_limit(),
        memory_total_bytes: meminfo_bytes(&meminfo, "MemTotal").unwrap_or(0),
        memory_available_bytes: meminfo_bytes(&meminfo, "MemAvailable").unwrap_or(0),
        swap_total_bytes: meminfo_bytes(&meminfo, "SwapTotal").unwrap_or(0),
        clocksource: read_trimmed(
            "/sys/devices/system/clocksource/clocksource0/current_clocksource",
        )
        .map(Text::from),
        cpu_governor: read_trimmed("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor")
            .map(Text::from),
        lang: std::env::var("LANG").ok().map(Text::from),
        machine_id: read_trimmed("/etc/machine-id").map(Text::from),
    }
}

struct Uname {
    nodename: String,
    release: String,
    version: String,
    machine: String,
}

fn uname() -> Uname {
    // SAFETY: utsname is plain old data; uname fills it with NUL-terminated strings.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    unsafe { libc::uname(&mut u) };
    let field = |f: &[libc::c_char]| {
        let bytes: Vec<u8> = f
            .iter()
            .take_while(|&&c| c != 0)
            .map(|&c| c as u8)
            .collect();
        String::from_utf8_lossy(&bytes).into_owned()
    };
    Uname {
        nodename: field(&u.nodename),
        release: field(&u.release),
        version: field(&u.version),
        machine: field(&u.machine),
    }
}

/// The running sched_ext scheduler's name, or "disabled" (none, or no sched_ext in the
/// kernel): what schbench's JSON says.
pub fn sched_ext() -> String {
    let state = fs::read_to_string("/sys/kernel/sched_ext/state").unwrap_or_default();
    if state.trim().is_empty() || state.trim() == "disabled" {
        return "disabled".into();
    }
    match fs::read_to_string("/sys/kernel/sched_ext/root/ops") {
        Ok(ops) if !ops.trim().is_empty() => ops.trim_end().to_string(),
        _ => "disabled".into(),
    }
}

/// The host name, as results and report file names use it.
pub fn hostname() -> String {
    uname().nodename
}

/// The CPU model name from /proc/cpuinfo ("model name" on x86, "CPU part"-less arm hosts fall
/// back to "Hardware" or "unknown").
pub fn cpu_model() -> String {
    let text = fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    parse_cpu_model(&text).unwrap_or_else(|| "unknown".into())
}

fn parse_cpu_model(cpuinfo: &str) -> Option<String> {
    ["model name", "Hardware", "cpu model", "Processor"]
        .iter()
        .find_map(|key| {
            cpuinfo.lines().find_map(|line| {
                let (k, v) = line.split_once(':')?;
                (k.trim() == *key).then(|| v.trim().to_string())
            })
        })
}

pub fn cpus_online() -> usize {
    // SAFETY: sysconf has no memory-safety preconditions.
    let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    usize::try_from(n).unwrap_or(1).max(1)
}

/// CPUs this process may run on (its affinity mask).
pub fn cpus_allowed() -> usize {
    super::sched::allowed_cpus().len()
}

/// The cgroup CPU quota of this process, from cgroup v2 `cpu.max` or v1 `cpu.cfs_quota_us`.
pub fn cgroup_cpu_limit() -> Option<CgroupCpuLimit> {
    let cgroup = fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
    for line in cgroup.lines() {
        // v2: "0::/path"; v1: "N:cpu,cpuacct:/path".
        let mut parts = line.splitn(3, ':');
        let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        if controllers.is_empty() {
            let file = Path::new("/sys/fs/cgroup")
                .join(path.trim_start_matches('/'))
                .join("cpu.max");
            if let Some(limit) = fs::read_to_string(file)
                .ok()
                .and_then(|t| parse_cpu_max(&t))
            {
                return Some(limit);
            }
        } else if controllers.split(',').any(|c| c == "cpu") {
            for root in ["/sys/fs/cgroup/cpu,cpuacct", "/sys/fs/cgroup/cpu"] {
                let dir = Path::new(root).join(path.trim_start_matches('/'));
                let quota = read_trimmed(dir.join("cpu.cfs_quota_us"));
                let period = read_trimmed(dir.join("cpu.cfs_period_us"));
                if let (Some(q), Some(p)) = (quota, period) {
                    if let Some(limit) = parse_cpu_max(&format!("{q} {p}")) {
                        return Some(limit);
                    }
                }
            }
        }
    }
    // A container often sees its own cgroup as the root.
    fs::read_to_string("/sys/fs/cgroup/cpu.max")
        .ok()
        .and_then(|t| parse_cpu_max(&t))
}

/// Parses "QUOTA PERIOD" (`cpu.max`); "max" or a negative quota (v1's -1) means no limit.
fn parse_cpu_max(text: &str) -> Option<CgroupCpuLimit> {
    let mut it = text.split_whitespace();
    let quota = it.next()?.parse::<i64>().ok()?;
    let period = it.next()?.parse::<u64>().ok()?;
    (quota > 0 && period > 0).then_some(CgroupCpuLimit {
        quota_us: quota as u64,
        period_us: period,
    })
}

/// A `/proc/meminfo` field in bytes (the file gives kB).
fn meminfo_bytes(meminfo: &str, key: &str) -> Option<u64> {
    meminfo.lines().find_map(|line| {
        let (k, v) = line.split_once(':')?;
        if k != key {
            return None;
        }
        let kb: u64 = v.split_whitespace().next()?.parse().ok()?;
        Some(kb * 1024)
    })
}

/// Memory the kernel says can be allocated without swapping, in bytes.
pub fn memory_available_bytes() -> Option<u64> {
    let meminfo = fs::read_to_string("/proc/meminfo").ok()?;
    meminfo_bytes(&meminfo, "MemAvailable")
}

fn read_trimmed(path: impl AsRef<Path>) -> Option<String> {
    let s = fs::read_to_string(path).ok()?;
    let s = s.trim();
    (!s.is_empty()).then(|| s.to_string())
}

/// The steal time counter of /proc/stat, to report how much CPU a hypervisor took during a run.
pub struct StealClock {
    start_ticks: Option<u64>,
}

impl StealClock {
    pub fn start() -> Self {
        StealClock {
            start_ticks: steal_ticks(),
        }
    }

    /// Milliseconds of steal summed over all CPUs since `start`.
    pub fn elapsed_ms(&self) -> Option<f64> {
        let (start, now) = (self.start_ticks?, steal_ticks()?);
        // SAFETY: sysconf has no memory-safety preconditions.
        let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
        Some(now.saturating_sub(start) as f64 * 1000.0 / hz)
    }
}

fn steal_ticks() -> Option<u64> {
    super::procfs::read_cpu_times().ok().map(|t| t.steal)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_cpu_max() {
        assert_eq!(parse_cpu_max("max 100000\n"), None);
        assert_eq!(parse_cpu_max("-1 100000"), None);
        let l = parse_cpu_max("150000 100000\n").unwrap();
        assert_eq!((l.quota_us, l.period_us), (150_000, 100_000));
        assert_eq!(l.cpus(), 1.5);
    }

    #[test]
    fn parses_meminfo_fields_in_bytes() {
        let m = "MemTotal:       24576000 kB\nMemAvailable:   20000000 kB\nSwapTotal:             0 kB\n";
        assert_eq!(meminfo_bytes(m, "MemTotal"), Some(24_576_000 * 1024));
        assert_eq!(meminfo_bytes(m, "SwapTotal"), Some(0));
        assert_eq!(meminfo_bytes(m, "Nope"), None);
    }

    #[test]
    fn parses_cpu_model_and_steal() {
        let info = "processor\t: 0\nmodel name\t: AMD EPYC 7B13\nflags\t: fpu\n";
        assert_eq!(parse_cpu_model(info).as_deref(), Some("AMD EPYC 7B13"));
        let stat = "cpu  10 0 5 100 1 0 2 37 0 0\ncpu0 5 0 2 50 0 0 1 20 0 0\n";
        let times = super::super::procfs::parse_cpu_times(stat);
        assert_eq!(times.map(|t| t.steal), Some(37));
    }

    #[test]
    fn facts_of_this_host_are_plausible() {
        let host = facts();
        assert!(!host.kernel_release.is_empty());
        assert!(host.cpus_online >= 1 && host.cpus_allowed >= 1);
        assert!(host.cpus_allowed <= host.cpus_online);
        assert!(host.memory_total_bytes > 0);
    }
}
