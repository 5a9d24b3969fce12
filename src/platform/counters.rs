//! Counters the CPU keeps for each measured task over a stretch, through `perf_event_open`:
//! the hardware counters of the CPU's PMU (instructions, cycles, cache misses, branch misses:
//! IPC) and the clock counters of perf's `msr` PMU (APERF and MPERF: the clock a task really
//! ran at; TSC: the rate MPERF counts at). Each is opened on a task at a stretch's start
//! (counting from zero, kernel time included) and read once at its end; a host without the PMU
//! (most VMs, this project's machine among them) counts none, and the account says so.

use std::io;
use std::path::Path;

use perf_event::events::x86::{Msr, MsrId};
use perf_event::events::Hardware;
use perf_event::{Builder, Counter, Group};

/// Which counters the host has, found once from sysfs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Available {
    /// A CPU PMU (`bus/event_source/devices/cpu`, or `cpu_core` on a hybrid CPU).
    pub hardware: bool,
    /// The `msr` PMU with its `aperf`, `mperf` and `tsc` events.
    pub clock: bool,
}

impl Available {
    /// What `sys` (`/sys`, or a copy of its layout in tests) shows.
    pub fn at(sys: &Path) -> Available {
        let pmus = sys.join("bus/event_source/devices");
        let msr = pmus.join("msr/events");
        Available {
            hardware: ["cpu", "cpu_core"]
                .iter()
                .any(|p| pmus.join(p).join("type").is_file()),
            clock: ["aperf", "mperf", "tsc"]
                .iter()
                .all(|e| msr.join(e).is_file()),
        }
    }
}

/// The hardware counters of the measured tasks together, each scaled up for the share of the
/// stretch the PMU counted it (when more groups than counters took turns). Kept as they are in
/// a stretch's account.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct HardwareCounts {
    pub instructions: u64,
    pub cycles: u64,
    pub cache_misses: u64,
    pub branch_misses: u64,
}

/// The clock counters of the measured tasks together, counted only while they ran: APERF ticks
/// at the clock the CPU ran at, MPERF and the TSC at its fixed base rate; `running_ns` is how
/// long they counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ClockCounts {
    pub aperf: u64,
    pub mperf: u64,
    pub tsc: u64,
    pub running_ns: u64,
}

impl ClockCounts {
    /// The mean clock the tasks ran at, MHz: the TSC's rate over their running time, times
    /// APERF over MPERF. None when nothing was counted.
    pub fn mhz(&self) -> Option<f64> {
        if self.running_ns == 0 || self.mperf == 0 {
            return None;
        }
        let tsc_mhz = self.tsc as f64 / self.running_ns as f64 * 1000.0;
        Some(tsc_mhz * self.aperf as f64 / self.mperf as f64)
    }
}

/// One task's open group and its members, in the order they were added.
struct Opened {
    group: Group,
    members: Vec<Counter>,
}

impl Opened {
    /// A group on thread `tid` of the events `each` builds, enabled: None if any will not
    /// open (the thread is gone, or the PMU refuses one).
    fn on(tid: u32, events: &[Builder<'_>]) -> Option<Opened> {
        let pid = i32::try_from(tid).ok()?;
        let mut group = Group::builder()
            .observe_pid(pid)
            .any_cpu()
            .include_kernel()
            .build_group()
            .ok()?;
        let members = events
            .iter()
            .map(|b| group.add(b))
            .collect::<io::Result<Vec<_>>>()
            .ok()?;
        group.enable().ok()?;
        Some(Opened { group, members })
    }

    /// Each member's count, scaled for multiplexing, and the time the group ran.
    fn read(&mut self) -> Option<(Vec<u64>, u64)> {
        let data = self.group.read().ok()?;
        let enabled = data.time_enabled()?.as_nanos() as f64;
        let running = data.time_running()?.as_nanos() as f64;
        let scale = if running > 0.0 {
            enabled / running
        } else {
            0.0
        };
        let counts = self
            .members
            .iter()
            .map(|m| Some((data.get(m)?.value() as f64 * scale).round() as u64))
            .collect::<Option<Vec<u64>>>()?;
        Some((counts, running as u64))
    }
}

/// The counters open on a stretch's tasks, from its start to its end.
#[derive(Default)]
pub struct Open {
    hardware: Vec<Opened>,
    clock: Vec<Opened>,
}

impl std::fmt::Debug for Open {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Open {{ hardware: {}, clock: {} }}",
            self.hardware.len(),
            self.clock.len()
        )
    }
}

/// A builder for one member of a group on task `pid`, counting kernel time too (the msr PMU
/// cannot leave it out). The member is made enabled, so that it counts from the moment its
/// disabled leader is enabled (as `perf stat` does): a member made disabled and enabled with
/// the group's ioctl may, on a running task, start only when the task is next scheduled in
/// (seen on Linux 6.18: a task clock member counting 0-18 of 20 ms while its leader ran them
/// all).
fn event<E: perf_event::events::Event>(e: E, pid: i32) -> Builder<'static> {
    let mut b = Builder::new(e);
    b.observe_pid(pid)
        .any_cpu()
        .include_kernel()
        .exclude_hv(false)
        .enabled(true);
    b
}

impl Open {
    /// Opens what `available` has on each of the threads `tids`. A thread whose counters will
    /// not open leaves that kind uncounted for the stretch (a sum over some would mislead).
    pub fn start(available: Available, tids: &[u32]) -> Open {
        let on_all = |events: &dyn Fn(i32) -> Option<Vec<Builder<'static>>>| -> Vec<Opened> {
            let opened: Option<Vec<Opened>> = tids
                .iter()
                .map(|&tid| Opened::on(tid, &events(i32::try_from(tid).ok()?)?))
                .collect();
            opened.unwrap_or_default()
        };
        let hardware = if available.hardware {
            on_all(&|pid| {
                Some(
                    [
                        Hardware::INSTRUCTIONS,
                        Hardware::CPU_CYCLES,
                        Hardware::CACHE_MISSES,
                        Hardware::BRANCH_MISSES,
                    ]
                    .into_iter()
                    .map(|h| event(h, pid))
                    .collect(),
                )
            })
        } else {
            Vec::new()
        };
        let clock = if available.clock {
            on_all(&|pid| {
                [MsrId::APERF, MsrId::MPERF, MsrId::TSC]
                    .into_iter()
                    .map(|id| Some(event(Msr::new(id).ok()?, pid)))
                    .collect()
            })
        } else {
            Vec::new()
        };
        Open { hardware, clock }
    }

    /// The counts since the start, summed over the tasks; None for a kind not counted.
    pub fn read(&mut self) -> (Option<HardwareCounts>, Option<ClockCounts>) {
        let sum = |groups: &mut Vec<Opened>| -> Option<(Vec<u64>, u64)> {
            if groups.is_empty() {
                return None;
            }
            let mut total: Option<(Vec<u64>, u64)> = None;
            for g in groups.iter_mut() {
                let (counts, running) = g.read()?;
                match &mut total {
                    None => total = Some((counts, running)),
                    Some((t, r)) => {
                        t.iter_mut().zip(&counts).for_each(|(a, b)| *a += b);
                        *r += running;
                    }
                }
            }
            total
        };
        let hardware = sum(&mut self.hardware).map(|(c, _)| HardwareCounts {
            instructions: c[0],
            cycles: c[1],
            cache_misses: c[2],
            branch_misses: c[3],
        });
        let clock = sum(&mut self.clock).map(|(c, running_ns)| ClockCounts {
            aperf: c[0],
            mperf: c[1],
            tsc: c[2],
            running_ns,
        });
        (hardware, clock)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The calling thread's id.
    fn me() -> u32 {
        crate::platform::sched::current_tid()
    }

    #[test]
    fn sysfs_says_which_pmus_the_host_has() {
        let dir = tempfile::tempdir().unwrap();
        let pmus = dir.path().join("bus/event_source/devices");
        std::fs::create_dir_all(pmus.join("msr/events")).unwrap();
        std::fs::write(pmus.join("msr/events/tsc"), "event=0x00\n").unwrap();
        assert_eq!(Available::at(dir.path()), Available::default());
        std::fs::create_dir_all(pmus.join("cpu_core")).unwrap();
        std::fs::write(pmus.join("cpu_core/type"), "4\n").unwrap();
        std::fs::write(pmus.join("msr/events/aperf"), "event=0x01\n").unwrap();
        std::fs::write(pmus.join("msr/events/mperf"), "event=0x02\n").unwrap();
        assert_eq!(
            Available::at(dir.path()),
            Available {
                hardware: true,
                clock: true
            }
        );
    }

    #[test]
    fn the_clock_is_the_tsc_rate_times_aperf_over_mperf() {
        // 2 s of running at a 2 GHz TSC; APERF counted 3/4 of MPERF: 1.5 GHz.
        let c = ClockCounts {
            aperf: 3_000_000_000,
            mperf: 4_000_000_000,
            tsc: 4_000_000_000,
            running_ns: 2_000_000_000,
        };
        assert!((c.mhz().unwrap() - 1500.0).abs() < 1e-6);
        assert_eq!(ClockCounts::default().mhz(), None);
    }

    #[test]
    fn a_host_without_the_pmus_counts_nothing_and_a_gone_task_leaves_them_uncounted() {
        let me = me();
        let mut none = Open::start(Available::default(), &[me]);
        assert_eq!(none.read(), (None, None));
        let gone = u32::MAX >> 1;
        let all = Available {
            hardware: true,
            clock: true,
        };
        assert_eq!(Open::start(all, &[me, gone]).read(), (None, None));
    }

    /// A group on this thread counts its running time (a software clock), and the TSC of the
    /// msr PMU where the host lists it: the opening, enabling and reading work on this kernel.
    #[test]
    fn a_group_on_a_task_counts_while_it_runs() {
        let me = me();
        let pid = i32::try_from(me).unwrap();
        let mut events = vec![event(perf_event::events::Software::TASK_CLOCK, pid)];
        let tsc = Path::new("/sys/bus/event_source/devices/msr/events/tsc").is_file();
        if tsc {
            events.push(event(Msr::new(MsrId::TSC).unwrap(), pid));
        }
        let mut opened = Opened::on(me, &events).expect("a software group opens");
        let start = crate::platform::rusage::Usage::thread().cpu_ns();
        while crate::platform::rusage::Usage::thread().cpu_ns() < start + 20_000_000 {
            std::hint::spin_loop();
        }
        let (counts, running) = opened.read().unwrap();
        // The group counts while its thread is on the CPU, and the member counts from the
        // enabling on: all of the 20 ms of CPU time the thread spun (a member that started
        // late counted 0 of them here).
        assert!(counts[0] >= 19_000_000, "task clock {counts:?} {running}");
        assert!(running >= 19_000_000, "{running}");
        if tsc {
            // The TSC over the task's clock: between 100 MHz and 10 GHz.
            let ghz = counts[1] as f64 / counts[0] as f64;
            assert!(ghz > 0.1 && ghz < 10.0, "{counts:?} {running}");
        }
    }

    /// This host's own PMUs, where it has them: the counts grow with the work done. On a host
    /// without them (this project's VM) the test checks that nothing is counted.
    #[test]
    fn this_hosts_counters_count_a_spin() {
        let available = Available::at(Path::new("/sys"));
        let me = me();
        let spin = |n: u64| {
            let mut open = Open::start(available, &[me]);
            let mut x = 0u64;
            for i in 0..n {
                x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(i));
            }
            open.read()
        };
        let (short, long) = (spin(1_000_000), spin(20_000_000));
        match (short.0, long.0) {
            (Some(s), Some(l)) => {
                assert!(l.instructions > 5 * s.instructions, "{s:?} {l:?}");
                assert!(l.cycles > 0);
            }
            (s, l) => assert!(
                !available.hardware && s.is_none() && l.is_none(),
                "{available:?} {s:?} {l:?}"
            ),
        }
        match (short.1, long.1) {
            (Some(s), Some(l)) => {
                assert!(l.tsc > s.tsc && l.running_ns > s.running_ns, "{s:?} {l:?}");
                let mhz = l.mhz().unwrap();
                assert!(mhz > 100.0 && mhz < 10_000.0, "{mhz}");
            }
            (s, l) => assert!(
                !available.clock && s.is_none() && l.is_none(),
                "{available:?} {s:?} {l:?}"
            ),
        }
    }
}
