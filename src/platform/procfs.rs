//! What `/proc/ID/stat` says of a process or thread: its start time, which tells a live process
//! apart from a later one that reused its pid, and its scheduling policy; and what
//! `/proc/stat` says of the CPUs' time, busy and idle.

/// A process's start time in clock ticks since boot (field 22 of `/proc/PID/stat`).
pub fn process_start_ticks(pid: u32) -> Option<u64> {
    stat_field(pid as i64, 22)?.parse().ok()
}

/// Field `n` (from 1, as proc(5) numbers them; 3 or later) of `/proc/ID/stat`, for a process or
/// a thread; None if it is gone.
pub fn stat_field(id: i64, n: usize) -> Option<String> {
    let stat = std::fs::read_to_string(format!("/proc/{id}/stat")).ok()?;
    // The command name (field 2) may hold spaces and parentheses: fields resume after the last ')'.
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace()
        .nth(n.checked_sub(3)?)
        .map(str::to_string)
}

/// The CPUs' time since boot, all of them together, in clock ticks (the first line of
/// `/proc/stat`): every kind summed, idle, and stolen by the hypervisor.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CpuTimes {
    pub total: u64,
    pub idle: u64,
    pub steal: u64,
}

impl CpuTimes {
    /// How busy the CPUs were from this reading to `later`, % (100 less the idle share, as
    /// schbench's `-A` reads it); 0 when no time passed.
    pub fn busy_pct_until(&self, later: &CpuTimes) -> f64 {
        let total = later.total.saturating_sub(self.total);
        if total == 0 {
            return 0.0;
        }
        100.0 - later.idle.saturating_sub(self.idle) as f64 / total as f64 * 100.0
    }
}

/// Reads [`CpuTimes`] now.
pub fn read_cpu_times() -> std::io::Result<CpuTimes> {
    let stat = std::fs::read_to_string("/proc/stat")?;
    parse_cpu_times(&stat).ok_or_else(|| {
        std::io::Error::new(std::io::ErrorKind::InvalidData, "no cpu line in /proc/stat")
    })
}

pub fn parse_cpu_times(stat: &str) -> Option<CpuTimes> {
    let mut fields = stat.lines().next()?.split_whitespace();
    if fields.next()? != "cpu" {
        return None;
    }
    let values: Vec<u64> = fields.map(|f| f.parse().ok()).collect::<Option<_>>()?;
    // user nice system idle iowait irq softirq steal ...
    Some(CpuTimes {
        total: values.iter().sum(),
        idle: *values.get(3)?,
        steal: values.get(7).copied().unwrap_or(0),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_times_are_read_and_give_a_busy_share() {
        let t = parse_cpu_times("cpu  100 0 50 800 50 0 0 0 0 0\ncpu0 1 2 3 4\n").unwrap();
        assert_eq!(
            t,
            CpuTimes {
                total: 1000,
                idle: 800,
                steal: 0
            }
        );
        let later = CpuTimes {
            total: 1100,
            idle: 875,
            steal: 0,
        };
        assert!((t.busy_pct_until(&later) - 25.0).abs() < 1e-9);
        assert_eq!(parse_cpu_times("intr 1 2\n"), None);
        let now = read_cpu_times().unwrap();
        assert!(now.total >= now.idle && now.total > 0);
    }

    #[test]
    fn the_start_time_of_this_process_is_read() {
        let t = process_start_ticks(std::process::id()).unwrap();
        assert!(t > 0);
        assert_eq!(process_start_ticks(std::process::id()), Some(t));
        // A pid that cannot exist has none.
        assert_eq!(process_start_ticks(u32::MAX), None);
    }
}
