//! The kernel's own counters around a measured stretch, read at its start and at its end only
//! (never inside a timed loop): each CPU's time by state (`/proc/stat`), each measured task's
//! CPU time, run-queue wait, timeslices, context switches, page faults and migrations
//! (`/proc/PID/task/TID/{schedstat,status,stat,sched}`), and each CPU's clock and thermal
//! throttles where sysfs has them. The model turns two readings into an account.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::counters::{Available, ClockCounts, HardwareCounts, Open};

/// Whether accounts are taken: yes unless `HOSTBENCH_NO_ACCOUNT` is set (for measuring what
/// taking them costs, `scripts/account-overhead.sh`).
pub fn enabled() -> bool {
    std::env::var_os("HOSTBENCH_NO_ACCOUNT").is_none()
}

/// One CPU's time by state, in clock ticks (`USER_HZ`), as `/proc/stat` counts it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CpuTicks {
    pub user: u64,
    pub nice: u64,
    pub system: u64,
    pub idle: u64,
    pub iowait: u64,
    pub irq: u64,
    pub softirq: u64,
    pub steal: u64,
}

impl CpuTicks {
    /// What was counted between `earlier` and `self`.
    pub fn since(&self, earlier: &CpuTicks) -> CpuTicks {
        CpuTicks {
            user: self.user.saturating_sub(earlier.user),
            nice: self.nice.saturating_sub(earlier.nice),
            system: self.system.saturating_sub(earlier.system),
            idle: self.idle.saturating_sub(earlier.idle),
            iowait: self.iowait.saturating_sub(earlier.iowait),
            irq: self.irq.saturating_sub(earlier.irq),
            softirq: self.softirq.saturating_sub(earlier.softirq),
            steal: self.steal.saturating_sub(earlier.steal),
        }
    }

    /// Every state together.
    pub fn total(&self) -> u64 {
        self.user
            + self.nice
            + self.system
            + self.idle
            + self.iowait
            + self.irq
            + self.softirq
            + self.steal
    }

    /// Each field added to `self`'s.
    pub fn add(&mut self, other: &CpuTicks) {
        self.user += other.user;
        self.nice += other.nice;
        self.system += other.system;
        self.idle += other.idle;
        self.iowait += other.iowait;
        self.irq += other.irq;
        self.softirq += other.softirq;
        self.steal += other.steal;
    }
}

/// Each CPU's line of `/proc/stat` (`cpuN user nice system idle iowait irq softirq steal …`);
/// the summary line `cpu` and everything else is skipped. A line with fewer fields (an old
/// kernel) counts the missing ones as 0.
pub fn parse_proc_stat(text: &str) -> Vec<(u32, CpuTicks)> {
    text.lines()
        .filter_map(|line| {
            let mut fields = line.split_whitespace();
            let cpu: u32 = fields.next()?.strip_prefix("cpu")?.parse().ok()?;
            let mut n = || {
                fields
                    .next()
                    .and_then(|f| f.parse::<u64>().ok())
                    .unwrap_or(0)
            };
            Some((
                cpu,
                CpuTicks {
                    user: n(),
                    nice: n(),
                    system: n(),
                    idle: n(),
                    iowait: n(),
                    irq: n(),
                    softirq: n(),
                    steal: n(),
                },
            ))
        })
        .collect()
}

/// One task's counters, as the kernel keeps them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TaskCounters {
    /// `schedstat`: time on a CPU, time runnable but waiting for one (run-queue wait), both ns,
    /// and the timeslices it ran.
    pub run_ns: u64,
    pub wait_ns: u64,
    pub slices: u64,
    /// `status`: context switches it asked for (blocking) and those forced on it (preemption).
    pub voluntary: u64,
    pub involuntary: u64,
    /// `stat` fields 10 and 12: page faults without and with I/O.
    pub minor_faults: u64,
    pub major_faults: u64,
    /// `stat` field 39: the CPU it last ran on.
    pub cpu: u32,
    /// `sched`'s `se.nr_migrations`: moves between CPUs; None where the kernel does not show it.
    pub migrations: Option<u64>,
}

/// `/proc/…/schedstat`: run ns, wait ns, slices.
pub fn parse_schedstat(text: &str) -> Option<(u64, u64, u64)> {
    let mut f = text.split_whitespace().map(|v| v.parse::<u64>().ok());
    Some((f.next()??, f.next()??, f.next()??))
}

/// The average run-queue wait of one slice of thread `tid` of this process, ns: its
/// `schedstat` wait over the slices it ran (schbench's "sched delay"). None when the thread
/// is gone or has not run.
pub fn wait_per_slice_ns(tid: u32) -> Option<u64> {
    let text = std::fs::read_to_string(format!("/proc/self/task/{tid}/schedstat")).ok()?;
    let (_, wait_ns, slices) = parse_schedstat(&text)?;
    wait_ns.checked_div(slices)
}

/// `/proc/…/status`'s two context-switch counts: (voluntary, involuntary).
pub fn parse_status_switches(text: &str) -> Option<(u64, u64)> {
    let value = |name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim_start_matches(':').trim().parse::<u64>().ok())
    };
    Some((
        value("voluntary_ctxt_switches")?,
        value("nonvoluntary_ctxt_switches")?,
    ))
}

/// `/proc/…/stat`'s minor faults, major faults and last CPU (fields 10, 12 and 39). The
/// command name (field 2) may hold spaces and parentheses: fields resume after the last ')'.
pub fn parse_stat_faults_cpu(text: &str) -> Option<(u64, u64, u32)> {
    let rest = &text[text.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // Field n (from 1) is fields[n - 3].
    let at = |n: usize| fields.get(n - 3).and_then(|v| v.parse::<u64>().ok());
    Some((at(10)?, at(12)?, u32::try_from(at(39)?).ok()?))
}

/// A counter of `/proc/…/sched` (`se.nr_migrations`, `nr_voluntary_switches`, …).
pub fn parse_sched_field(text: &str, name: &str) -> Option<u64> {
    text.lines()
        .find(|l| l.split(':').next().is_some_and(|k| k.trim() == name))
        .and_then(|l| l.rsplit(':').next())
        .and_then(|v| v.trim().parse().ok())
}

/// A measured task: a process and one of its threads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Task {
    pub pid: u32,
    pub tid: u32,
}

impl Task {
    /// The calling thread.
    pub fn this_thread() -> Task {
        Task {
            pid: std::process::id(),
            tid: super::sched::current_tid(),
        }
    }
}

/// Where the counters are read: `/proc` and `/sys`, or a copy of their layout (tests). Each
/// file read costs some 20-30 µs on a VM: the sysfs files that exist are found once, and a
/// task's switches come from its `sched` file where the kernel has one (one file fewer).
#[derive(Debug, Clone)]
pub struct Probe {
    proc: PathBuf,
    /// Each CPU's clock and throttle count files that exist.
    khz: Vec<(u32, PathBuf)>,
    throttles: Vec<(u32, PathBuf)>,
    /// The PMUs the host has: hardware counters, the msr clock counters.
    pmus: Available,
    /// Where the msr PMU does not count APERF and MPERF: each CPU's `/dev/cpu/N/msr`, opened
    /// once, where the msr driver is loaded and readable.
    msr: Vec<(u32, Arc<File>)>,
}

impl Default for Probe {
    fn default() -> Self {
        Probe::at(Path::new("/proc"), Path::new("/sys")).with_dev(Path::new("/dev"))
    }
}

/// The model-specific registers read through `/dev/cpu/N/msr` (the file offset is the
/// register's address): the time stamp counter, MPERF (the base clock's ticks while the CPU
/// runs), APERF (the clock's actual ticks while it runs).
const MSR_TSC: u64 = 0x10;
const MSR_MPERF: u64 = 0xE7;
const MSR_APERF: u64 = 0xE8;

/// One register of `/dev/cpu/N/msr`: 8 bytes at its address.
fn read_register(f: &File, at: u64) -> Option<u64> {
    let mut b = [0u8; 8];
    f.read_exact_at(&mut b, at).ok()?;
    Some(u64::from_le_bytes(b))
}

/// A CPU's APERF, MPERF and TSC at one moment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MsrClock {
    pub aperf: u64,
    pub mperf: u64,
    pub tsc: u64,
}

/// Everything read at one moment.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Reading {
    /// CLOCK_MONOTONIC, ns.
    pub at_ns: u64,
    pub cpus: Vec<(u32, CpuTicks)>,
    /// Each measured task's counters; None for one that is gone (or unreadable).
    pub tasks: Vec<Option<TaskCounters>>,
    /// Each CPU's clock, kHz (`cpufreq/scaling_cur_freq`), where sysfs has it.
    pub khz: Vec<(u32, u64)>,
    /// Each CPU's thermal throttle events (`thermal_throttle/core_throttle_count`), where
    /// sysfs has them.
    pub throttles: Vec<(u32, u64)>,
    /// At a stretch's end: the PMUs the host has, and the measured tasks' counts of each since
    /// the start (None where not counted). At its start: nothing.
    pub pmus: Option<Available>,
    pub hardware: Option<HardwareCounts>,
    pub clock: Option<ClockCounts>,
    /// Each CPU's APERF, MPERF and TSC from `/dev/cpu/N/msr`, for the CPUs the tasks were last
    /// seen on, where the msr PMU does not count them and the driver is readable.
    pub msr: Vec<(u32, MsrClock)>,
}

/// A stretch begun: its first reading, and the counters opened on its tasks.
#[derive(Debug)]
pub struct Start {
    reading: Reading,
    counters: Open,
}

impl Probe {
    /// Reads under `proc` and `sys` instead of `/proc` and `/sys`.
    pub fn at(proc: &Path, sys: &Path) -> Probe {
        let cpus = std::fs::read_to_string(proc.join("stat"))
            .map(|t| parse_proc_stat(&t))
            .unwrap_or_default();
        let existing = |file: &str| -> Vec<(u32, PathBuf)> {
            cpus.iter()
                .map(|&(cpu, _)| (cpu, sys.join(format!("devices/system/cpu/cpu{cpu}/{file}"))))
                .filter(|(_, path)| path.is_file())
                .collect()
        };
        Probe {
            proc: proc.to_path_buf(),
            khz: existing("cpufreq/scaling_cur_freq"),
            throttles: existing("thermal_throttle/core_throttle_count"),
            pmus: Available::at(sys),
            msr: Vec::new(),
        }
    }

    /// Reads APERF and MPERF from `dev`'s `cpu/N/msr` (`/dev`, or a copy of its layout in
    /// tests) where the msr PMU does not count them per task and the files open.
    pub fn with_dev(mut self, dev: &Path) -> Probe {
        if self.pmus.clock {
            return self;
        }
        let cpus = std::fs::read_to_string(self.proc.join("stat"))
            .map(|t| parse_proc_stat(&t))
            .unwrap_or_default();
        self.msr = cpus
            .iter()
            .filter_map(|&(cpu, _)| {
                let f = File::open(dev.join(format!("cpu/{cpu}/msr"))).ok()?;
                Some((cpu, Arc::new(f)))
            })
            .collect();
        self
    }

    /// The clock registers of the CPUs `tasks` were last seen on.
    fn msr_of(&self, tasks: &[Option<TaskCounters>]) -> Vec<(u32, MsrClock)> {
        if self.msr.is_empty() {
            return Vec::new();
        }
        let mut cpus: Vec<u32> = tasks.iter().flatten().map(|t| t.cpu).collect();
        cpus.sort_unstable();
        cpus.dedup();
        let read = read_register;
        self.msr
            .iter()
            .filter(|(cpu, _)| cpus.contains(cpu))
            .filter_map(|(cpu, f)| {
                Some((
                    *cpu,
                    MsrClock {
                        aperf: read(f, MSR_APERF)?,
                        mperf: read(f, MSR_MPERF)?,
                        tsc: read(f, MSR_TSC)?,
                    },
                ))
            })
            .collect()
    }

    /// Begins a stretch of `tasks`: reads their counters and the CPUs', then opens the PMUs'
    /// counters on the tasks (counting from zero).
    pub fn start(&self, tasks: &[Task]) -> Start {
        let reading = self.before(tasks);
        Start {
            reading,
            counters: Open::start(self.pmus, &tasks.iter().map(|t| t.tid).collect::<Vec<_>>()),
        }
    }

    /// Ends a stretch begun by [`Probe::start`]: the PMUs' counts first (they count the reading
    /// too), then the rest as [`Probe::after`]. The stretch's two readings.
    pub fn end(&self, start: Start, tasks: &[Task]) -> (Reading, Reading) {
        let Start {
            reading,
            mut counters,
        } = start;
        let (hardware, clock) = counters.read();
        drop(counters);
        let mut end = self.after(tasks);
        (end.pmus, end.hardware, end.clock) = (Some(self.pmus), hardware, clock);
        (reading, end)
    }

    /// The counters at the start of a stretch: the CPUs' first, the tasks' last (their
    /// run-queue wait the very last), and the time after all, so that little of the reading
    /// falls inside the stretch.
    pub fn before(&self, tasks: &[Task]) -> Reading {
        let (cpus, khz, throttles) = self.cpus();
        let tasks: Vec<_> = tasks
            .iter()
            .map(|t| self.task(*t, Order::WaitLast))
            .collect();
        let msr = self.msr_of(&tasks);
        Reading {
            at_ns: super::clock::monotonic_ns(),
            cpus,
            tasks,
            khz,
            throttles,
            msr,
            ..Reading::default()
        }
    }

    /// The counters at the end of a stretch: the time first, then the tasks' (their run-queue
    /// wait first), then the CPUs'. A wait of the reading itself (the thread preempted while it
    /// reads) then hardly falls inside the stretch.
    pub fn after(&self, tasks: &[Task]) -> Reading {
        let at_ns = super::clock::monotonic_ns();
        let tasks: Vec<_> = tasks
            .iter()
            .map(|t| self.task(*t, Order::WaitFirst))
            .collect();
        let msr = self.msr_of(&tasks);
        let (cpus, khz, throttles) = self.cpus();
        Reading {
            at_ns,
            cpus,
            tasks,
            khz,
            throttles,
            msr,
            ..Reading::default()
        }
    }

    /// The CPUs' times, clocks and throttle counts.
    #[allow(clippy::type_complexity)]
    fn cpus(&self) -> (Vec<(u32, CpuTicks)>, Vec<(u32, u64)>, Vec<(u32, u64)>) {
        let cpus = std::fs::read_to_string(self.proc.join("stat"))
            .map(|t| parse_proc_stat(&t))
            .unwrap_or_default();
        let per_cpu = |files: &[(u32, PathBuf)]| -> Vec<(u32, u64)> {
            files
                .iter()
                .filter_map(|(cpu, path)| {
                    let v = std::fs::read_to_string(path).ok()?.trim().parse().ok()?;
                    Some((*cpu, v))
                })
                .collect()
        };
        (cpus, per_cpu(&self.khz), per_cpu(&self.throttles))
    }

    /// Every thread of process `pid` now (none when it is gone).
    pub fn threads(&self, pid: u32) -> Vec<Task> {
        let Ok(dir) = std::fs::read_dir(self.proc.join(format!("{pid}/task"))) else {
            return Vec::new();
        };
        let mut tasks: Vec<Task> = dir
            .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
            .map(|tid| Task { pid, tid })
            .collect();
        tasks.sort_by_key(|t| t.tid);
        tasks
    }

    /// One task's counters; None when it is gone.
    pub fn task(&self, t: Task, order: Order) -> Option<TaskCounters> {
        let dir = self.proc.join(format!("{}/task/{}", t.pid, t.tid));
        let read = |name: &str| std::fs::read_to_string(dir.join(name)).ok();
        let (schedstat, sched, stat) = match order {
            Order::WaitFirst => {
                let schedstat = read("schedstat");
                (schedstat, read("sched"), read("stat"))
            }
            Order::WaitLast => {
                let (stat, sched) = (read("stat"), read("sched"));
                (read("schedstat"), sched, stat)
            }
        };
        let (run_ns, wait_ns, slices) = parse_schedstat(&schedstat?)?;
        let field = |name| sched.as_deref().and_then(|s| parse_sched_field(s, name));
        let (voluntary, involuntary) = match (
            field("nr_voluntary_switches"),
            field("nr_involuntary_switches"),
        ) {
            (Some(v), Some(i)) => (v, i),
            _ => parse_status_switches(&read("status")?)?,
        };
        let (minor_faults, major_faults, cpu) = parse_stat_faults_cpu(&stat?)?;
        Some(TaskCounters {
            run_ns,
            wait_ns,
            slices,
            voluntary,
            involuntary,
            minor_faults,
            major_faults,
            cpu,
            migrations: field("se.nr_migrations"),
        })
    }
}

/// Which of a task's files is read first: its run-queue wait (`schedstat`) at the end of a
/// stretch, last at its start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    WaitFirst,
    WaitLast,
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn proc_stat_gives_each_cpu_and_skips_the_summary() {
        let text = "cpu  10 1 5 100 2 0 3 4 0 0\ncpu0 6 1 3 50 1 0 2 4 0 0\ncpu1 4 0 2 50 1 0 1 0\nintr 5\n";
        let cpus = parse_proc_stat(text);
        assert_eq!(cpus.len(), 2);
        assert_eq!(cpus[0].0, 0);
        assert_eq!(cpus[0].1.steal, 4);
        assert_eq!(cpus[1].1.total(), 58);
        assert_eq!(
            cpus[0].1.since(&CpuTicks {
                user: 1,
                ..CpuTicks::default()
            }),
            CpuTicks {
                user: 5,
                ..cpus[0].1
            }
        );
    }

    #[test]
    fn a_tasks_files_give_its_counters() {
        assert_eq!(
            parse_schedstat("236411383 47042231 1379\n"),
            Some((236411383, 47042231, 1379))
        );
        assert_eq!(parse_schedstat("12 x 3"), None);
        let status = "Name:\tx\nvoluntary_ctxt_switches:\t7\nnonvoluntary_ctxt_switches:\t2\n";
        assert_eq!(parse_status_switches(status), Some((7, 2)));
        // A command name with spaces and a parenthesis does not shift the fields.
        let mut stat = String::from("42 (a) b) S");
        for n in 4..=52 {
            stat.push_str(&format!(" {n}"));
        }
        assert_eq!(parse_stat_faults_cpu(&stat), Some((10, 12, 39)));
        let sched = "x (1, #threads: 1)\n---\nse.exec_start : 1.5\nse.nr_migrations  :   17\nnr_switches : 9\nnr_voluntary_switches : 4\n";
        assert_eq!(parse_sched_field(sched, "se.nr_migrations"), Some(17));
        assert_eq!(parse_sched_field(sched, "nr_voluntary_switches"), Some(4));
        assert_eq!(parse_sched_field(sched, "nr_involuntary_switches"), None);
        assert_eq!(parse_sched_field("nothing", "nr_switches"), None);
    }

    #[test]
    fn this_threads_counters_are_read_and_grow_as_it_runs() {
        let probe = Probe::default();
        let me = Task::this_thread();
        let before = probe
            .task(me, Order::WaitLast)
            .expect("this thread's counters");
        // 30 ms on a CPU (not of the clock: the tests beside this one share the CPUs).
        let start = crate::platform::rusage::Usage::thread().cpu_ns();
        while crate::platform::rusage::Usage::thread().cpu_ns() < start + 30_000_000 {
            std::hint::spin_loop();
        }
        let after = probe.task(me, Order::WaitFirst).unwrap();
        assert!(
            after.run_ns >= before.run_ns + 20_000_000,
            "{before:?} {after:?}"
        );
        let (a, b) = (probe.before(&[me]), probe.after(&[me]));
        assert!(!a.cpus.is_empty() && a.tasks[0].is_some() && b.at_ns >= a.at_ns);
        let gone = Task {
            pid: u32::MAX,
            tid: u32::MAX,
        };
        assert_eq!(probe.after(&[gone]).tasks, vec![None]);
        // This process's threads: this one among them.
        let threads = probe.threads(me.pid);
        assert!(threads.contains(&me), "{threads:?}");
        assert!(probe.threads(u32::MAX).is_empty());
    }

    #[test]
    fn a_cpus_registers_are_read_at_their_address_where_the_driver_is() {
        let dir = tempfile::tempdir().unwrap();
        let (proc, sys, dev) = (
            dir.path().join("proc"),
            dir.path().join("sys"),
            dir.path().join("dev"),
        );
        std::fs::create_dir_all(&proc).unwrap();
        std::fs::create_dir_all(dev.join("cpu/1")).unwrap();
        std::fs::write(proc.join("stat"), "cpu0 1 0 1 1\ncpu1 1 0 1 1\n").unwrap();
        // A regular file holds one register at its address (the TSC's, 0x10).
        let msr = dev.join("cpu/1/msr");
        std::fs::write(&msr, [0u8; 0x10]).unwrap();
        std::fs::OpenOptions::new()
            .append(true)
            .open(&msr)
            .unwrap()
            .write_all(&123_456_789u64.to_le_bytes())
            .unwrap();
        let probe = Probe::at(&proc, &sys).with_dev(&dev);
        assert_eq!(probe.msr.iter().map(|m| m.0).collect::<Vec<_>>(), [1]);
        assert_eq!(read_register(&probe.msr[0].1, MSR_TSC), Some(123_456_789));
        // Past the file's end (APERF's address here): unreadable, no clock.
        assert_eq!(read_register(&probe.msr[0].1, MSR_APERF), None);
        let on_cpu = |cpu| {
            Some(TaskCounters {
                cpu,
                ..TaskCounters::default()
            })
        };
        assert!(probe.msr_of(&[on_cpu(1)]).is_empty());
        assert!(probe.msr_of(&[on_cpu(0)]).is_empty());
        // This host's own: none where the driver is not loaded (this VM), else every CPU's.
        let here = Probe::default();
        let me = here.task(Task::this_thread(), Order::WaitLast);
        let read = here.msr_of(&[me]);
        assert!(read.len() <= 1, "{read:?}");
    }

    #[test]
    fn clocks_and_throttles_are_read_where_sysfs_has_them() {
        let dir = tempfile::tempdir().unwrap();
        let (proc, sys) = (dir.path().join("proc"), dir.path().join("sys"));
        std::fs::create_dir_all(&proc).unwrap();
        std::fs::write(
            proc.join("stat"),
            "cpu0 1 0 1 1 0 0 0 0\ncpu1 1 0 1 1 0 0 0 0\n",
        )
        .unwrap();
        let cpu1 = sys.join("devices/system/cpu/cpu1");
        std::fs::create_dir_all(cpu1.join("cpufreq")).unwrap();
        std::fs::create_dir_all(cpu1.join("thermal_throttle")).unwrap();
        std::fs::write(cpu1.join("cpufreq/scaling_cur_freq"), "1800000\n").unwrap();
        std::fs::write(cpu1.join("thermal_throttle/core_throttle_count"), "3\n").unwrap();
        let r = Probe::at(&proc, &sys).before(&[]);
        assert_eq!(r.cpus.len(), 2);
        assert_eq!(r.khz, vec![(1, 1_800_000)]);
        assert_eq!(r.throttles, vec![(1, 3)]);
    }
}
