//! Scheduling policy, nice level, CPU affinity, memory locking and thread names. Every thread
//! that hostbench starts sets its policy explicitly (interbench's loads inherited SCHED_FIFO by
//! accident of start-up order), and each call that needs privilege reports failure to its
//! caller instead of carrying on as if it had worked.

use std::io;

use serde::{Deserialize, Serialize};

/// A thread's scheduling policy as hostbench sets and reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "policy", rename_all = "lowercase")]
pub enum Policy {
    /// SCHED_OTHER (CFS/EEVDF), the normal time-sharing policy.
    Other,
    /// SCHED_FIFO at a real-time priority 1..=99.
    Fifo { priority: i32 },
}

impl std::fmt::Display for Policy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Policy::Other => f.write_str("SCHED_OTHER"),
            Policy::Fifo { priority } => write!(f, "SCHED_FIFO {priority}"),
        }
    }
}

/// The timekeeper of a benchmarked task: above the task itself, as in interbench.
pub const TIMEKEEPER_PRIORITY: i32 = 96;
/// A benchmarked task under `-r`.
pub const RT_BENCH_PRIORITY: i32 = 95;

/// Sets the calling thread's policy.
pub fn set_current_thread_policy(policy: Policy) -> io::Result<()> {
    let (pol, prio) = match policy {
        Policy::Other => (libc::SCHED_OTHER, 0),
        Policy::Fifo { priority } => (libc::SCHED_FIFO, priority),
    };
    let param = libc::sched_param {
        sched_priority: prio,
    };
    // SAFETY: pthread_self is always valid; param is a valid sched_param.
    let rc = unsafe { libc::pthread_setschedparam(libc::pthread_self(), pol, &param) };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::from_raw_os_error(rc))
    }
}

/// The calling thread's policy as the kernel reports it.
pub fn current_thread_policy() -> Policy {
    let mut pol = 0;
    let mut param = libc::sched_param { sched_priority: 0 };
    // SAFETY: valid out-pointers.
    unsafe { libc::pthread_getschedparam(libc::pthread_self(), &mut pol, &mut param) };
    if pol == libc::SCHED_FIFO {
        Policy::Fifo {
            priority: param.sched_priority,
        }
    } else {
        Policy::Other
    }
}

/// Any thread's scheduling policy by its thread id, from `/proc/TID/stat` (field 41); None if
/// the thread is gone.
pub fn policy_name_of(tid: i32) -> Option<&'static str> {
    let policy: u32 = super::procfs::stat_field(tid as i64, 41)?.parse().ok()?;
    Some(match policy {
        0 => "SCHED_OTHER",
        1 => "SCHED_FIFO",
        2 => "SCHED_RR",
        3 => "SCHED_BATCH",
        5 => "SCHED_IDLE",
        6 => "SCHED_DEADLINE",
        7 => "SCHED_EXT",
        _ => "policy?",
    })
}

/// Whether this process may use SCHED_FIFO: tried on a short-lived thread, so the caller's own
/// policy is never touched.
pub fn can_use_fifo() -> bool {
    std::thread::spawn(|| set_current_thread_policy(Policy::Fifo { priority: 1 }).is_ok())
        .join()
        .unwrap_or(false)
}

/// The kernel's real-time throttle: RT tasks may use `runtime_us` of every `period_us`; None
/// when the throttle is off (`sched_rt_runtime_us` = -1), where a spinning RT task can take a
/// CPU for good.
pub fn rt_throttle() -> Option<(u64, u64)> {
    let read = |p: &str| std::fs::read_to_string(p).ok()?.trim().parse::<i64>().ok();
    let runtime = read("/proc/sys/kernel/sched_rt_runtime_us")?;
    let period = read("/proc/sys/kernel/sched_rt_period_us")?;
    (runtime >= 0 && period > 0).then_some((runtime as u64, period as u64))
}

/// The calling thread's id (its tid, as /proc/PID/task and the kernel's trace name it).
pub fn current_tid() -> u32 {
    // SAFETY: gettid has no arguments and cannot fail; a tid is positive.
    unsafe { libc::gettid() }.unsigned_abs()
}

/// Sets the nice level of the calling thread (Linux nice is per thread; threads started
/// afterwards inherit it).
pub fn set_nice(nice: i32) -> io::Result<()> {
    let tid = current_tid();
    // SAFETY: plain syscall on the calling thread.
    let rc = unsafe { libc::setpriority(libc::PRIO_PROCESS, tid, nice) };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// The CPU the calling thread is running on now; None where the kernel does not say.
pub fn current_cpu() -> Option<usize> {
    // SAFETY: no preconditions.
    let cpu = unsafe { libc::sched_getcpu() };
    usize::try_from(cpu).ok()
}

/// The first CPU of this process's affinity mask.
pub fn first_allowed_cpu() -> Option<usize> {
    allowed_cpus().first().copied()
}

/// Every CPU in this process's affinity mask, in order (CPU 0 if it cannot be read).
pub fn allowed_cpus() -> Vec<usize> {
    // SAFETY: cpu_set_t is plain data.
    let cpus: Vec<usize> = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            Vec::new()
        } else {
            (0..libc::CPU_SETSIZE as usize)
                .filter(|&c| libc::CPU_ISSET(c, &set))
                .collect()
        }
    };
    if cpus.is_empty() {
        vec![0]
    } else {
        cpus
    }
}

/// Pins the calling thread (and the threads and processes it starts later) to one CPU.
pub fn pin_to_cpu(cpu: usize) -> io::Result<()> {
    set_current_thread_cpus(&[cpu])
}

/// Puts the calling thread (and what it starts later) on these CPUs; those past
/// `CPU_SETSIZE` are left out.
pub fn set_current_thread_cpus(cpus: &[usize]) -> io::Result<()> {
    // SAFETY: cpu_set_t is plain data; CPU_SET stays within it for cpu < CPU_SETSIZE.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for &cpu in cpus.iter().filter(|&&c| c < libc::CPU_SETSIZE as usize) {
            libc::CPU_SET(cpu, &mut set);
        }
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) == 0 {
            Ok(())
        } else {
            Err(io::Error::last_os_error())
        }
    }
}

/// The calling thread's affinity mask as it was before [`pin_until_dropped`], put back when
/// this is dropped: a coordinator that pins itself for one suite (`interactive -u`) must not
/// leave the next suite of the same process (`hostbench run`, `--repeat`) on one CPU.
pub struct AffinityRestore {
    set: libc::cpu_set_t,
}

/// Pins the calling thread to one CPU, as [`pin_to_cpu`], until the returned guard is dropped.
pub fn pin_until_dropped(cpu: usize) -> io::Result<AffinityRestore> {
    // SAFETY: cpu_set_t is plain data.
    let set = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return Err(io::Error::last_os_error());
        }
        set
    };
    pin_to_cpu(cpu)?;
    Ok(AffinityRestore { set })
}

impl Drop for AffinityRestore {
    fn drop(&mut self) {
        // SAFETY: the mask was read from this thread; restoring it cannot fail for a mask the
        // thread had (a CPU taken offline meanwhile would leave the pin, which is all it can).
        unsafe {
            libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &self.set);
        }
    }
}

/// Locks current and future memory, so a real-time task never waits for a page fault.
pub fn lock_memory() -> io::Result<()> {
    // SAFETY: plain syscall.
    if unsafe { libc::mlockall(libc::MCL_CURRENT | libc::MCL_FUTURE) } == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Names the calling thread (visible in /proc/PID/task/TID/comm, top and perf): at most 15
/// bytes are kept.
pub fn name_current_thread(name: &str) {
    let mut buf = [0u8; 16];
    let n = name.len().min(15);
    buf[..n].copy_from_slice(&name.as_bytes()[..n]);
    // SAFETY: buf is NUL-terminated.
    unsafe { libc::prctl(libc::PR_SET_NAME, buf.as_ptr() as libc::c_ulong, 0, 0, 0) };
}

/// Sets the calling thread's timer slack: how much later than asked the kernel may fire its
/// timers, to batch wake-ups (50 µs by default for SCHED_OTHER threads, none for real-time
/// ones).
pub fn set_timer_slack_ns(ns: u64) {
    // SAFETY: plain prctl on the calling thread.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, ns as libc::c_ulong, 0, 0, 0) };
}

/// The calling thread's timer slack, ns.
pub fn timer_slack_ns() -> u64 {
    // SAFETY: plain prctl on the calling thread.
    unsafe { libc::prctl(libc::PR_GET_TIMERSLACK, 0, 0, 0, 0) as u64 }
}

/// A CPU list as the kernel and schbench write one ("0-3,8,10-11"): the CPUs in order, each
/// once. None for anything else (an empty list, a range that runs backwards, a CPU past
/// `CPU_SETSIZE`).
pub fn parse_cpu_list(text: &str) -> Option<Vec<usize>> {
    let mut cpus = std::collections::BTreeSet::new();
    for part in text.trim().split(',') {
        let (a, b) = match part.split_once('-') {
            Some((a, b)) => (
                a.trim().parse::<usize>().ok()?,
                b.trim().parse::<usize>().ok()?,
            ),
            None => {
                let c = part.trim().parse::<usize>().ok()?;
                (c, c)
            }
        };
        if a > b || b >= libc::CPU_SETSIZE as usize {
            return None;
        }
        cpus.extend(a..=b);
    }
    (!cpus.is_empty()).then(|| cpus.into_iter().collect())
}

/// The CPUs online now (`/sys/devices/system/cpu/online`); None where it cannot be read.
pub fn online_cpus() -> Option<Vec<usize>> {
    parse_cpu_list(&std::fs::read_to_string("/sys/devices/system/cpu/online").ok()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists_are_read_as_the_kernel_writes_them() {
        assert_eq!(
            parse_cpu_list("0-3,8,10-11"),
            Some(vec![0, 1, 2, 3, 8, 10, 11])
        );
        assert_eq!(parse_cpu_list("2,1,1"), Some(vec![1, 2]));
        assert_eq!(parse_cpu_list("0\n"), Some(vec![0]));
        for bad in ["", "3-1", "a", "1,,2", "-1", "0-99999"] {
            assert_eq!(parse_cpu_list(bad), None, "{bad:?}");
        }
        let online = online_cpus().unwrap();
        assert!(online.contains(&first_allowed_cpu().unwrap()));
    }

    #[test]
    fn timer_slack_is_set_per_thread() {
        std::thread::spawn(|| {
            set_timer_slack_ns(1);
            assert_eq!(timer_slack_ns(), 1);
        })
        .join()
        .unwrap();
    }

    #[test]
    fn policy_of_a_new_thread_is_other_and_can_be_set() {
        let fifo_ok = can_use_fifo();
        std::thread::spawn(move || {
            assert_eq!(current_thread_policy(), Policy::Other);
            if fifo_ok {
                set_current_thread_policy(Policy::Fifo { priority: 10 }).unwrap();
                assert_eq!(current_thread_policy(), Policy::Fifo { priority: 10 });
                set_current_thread_policy(Policy::Other).unwrap();
                assert_eq!(current_thread_policy(), Policy::Other);
            } else {
                assert!(set_current_thread_policy(Policy::Fifo { priority: 10 }).is_err());
            }
        })
        .join()
        .unwrap();
    }

    #[test]
    fn nice_is_per_thread() {
        std::thread::spawn(|| {
            set_nice(5).unwrap();
            // SAFETY: plain syscall on the calling thread.
            assert_eq!(
                unsafe { libc::getpriority(libc::PRIO_PROCESS, current_tid()) },
                5
            );
        })
        .join()
        .unwrap();
    }

    #[test]
    fn there_is_an_allowed_cpu() {
        assert!(first_allowed_cpu().is_some());
    }

    #[test]
    fn a_pin_for_a_scope_gives_the_mask_back() {
        // In a thread of its own, so that no other test's thread is pinned.
        std::thread::spawn(|| {
            let before = allowed_cpus();
            {
                let _pin = pin_until_dropped(before[0]).unwrap();
                assert_eq!(allowed_cpus(), [before[0]]);
            }
            assert_eq!(allowed_cpus(), before);
        })
        .join()
        .unwrap();
    }
}
