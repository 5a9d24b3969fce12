//! The host's own account of one measured stretch (a noise run, an index iteration, a sched run,
//! an interactive pair): what the CPUs the measurement used did besides it, and what the
//! measured tasks went through, from the kernel's counters at the stretch's start and end
//! (`platform::account`). Stored beside the stretch's figure, so that a change of the figure can
//! be read next to a change of its account.

use serde::{Deserialize, Serialize};

use crate::platform::account::{CpuTicks, Reading};
use crate::platform::counters::HardwareCounts;

/// What the host did during one stretch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Account {
    /// The stretch's length, ns.
    pub wall_ns: u64,
    /// The measured tasks read at both ends (a thread, a run's threads, an iteration's copies).
    #[serde(default)]
    pub tasks: u32,
    /// The CPUs the measured tasks were seen on, at the start or the end: the CPU time below
    /// is theirs.
    pub cpus: Vec<u32>,
    /// Those CPUs' clock ticks in the stretch (`/proc/stat`, usually 10 ms each): the
    /// resolution of the shares below.
    pub ticks: u64,
    /// Of those ticks, percent in each state: user (nice included), system, hardware and
    /// software interrupts, stolen by the hypervisor, waiting for I/O, idle.
    pub user_pct: f64,
    pub system_pct: f64,
    pub irq_pct: f64,
    pub softirq_pct: f64,
    pub steal_pct: f64,
    pub iowait_pct: f64,
    pub idle_pct: f64,
    /// The measured tasks together: time on a CPU (brought up to date by the kernel at its
    /// ticks while a task runs, so a stretch shorter than a tick may show none) and runnable
    /// but waiting for one (ns), the timeslices they ran, their context switches (asked for,
    /// forced), page faults (without, with I/O) and moves between CPUs (None where the kernel
    /// does not show them). The readings are not instantaneous: a task preempted while it
    /// reads its counters at the start brings that wait into the stretch (a window of some
    /// microseconds), so one stretch's wait may exceed its length; read medians over stretches.
    pub run_ns: u64,
    pub wait_ns: u64,
    pub slices: u64,
    pub voluntary: u64,
    pub involuntary: u64,
    pub minor_faults: u64,
    pub major_faults: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub migrations: Option<u64>,
    /// The clock, MHz: where the host has perf's msr PMU with APERF and MPERF, the mean clock
    /// the measured tasks ran at (`mhz_counted`); else, where `/dev/cpu/N/msr` is readable,
    /// the mean clock of their CPUs while busy, from the same registers read at both ends (also
    /// `mhz_counted`); else the mean of those CPUs' clocks at the start and the end
    /// (`scaling_cur_freq`), where sysfs has it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mhz: Option<f64>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub mhz_counted: bool,
    /// The measured tasks' hardware counters together (kernel time included), where the host
    /// has a CPU PMU; `no_pmu` when it has none (most VMs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hardware: Option<HardwareCounts>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub no_pmu: bool,
    /// Their thermal throttle events in the stretch, where sysfs counts them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub throttles: Option<u64>,
    /// The host's speed around the stretch: how long the fixed-work reference took on its
    /// CPUs just before and just after it (`suites::reference`: the geometric mean of the two
    /// readings), ns. Larger is slower. None where it was not read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference_ns: Option<f64>,
}

impl Account {
    /// The account of the stretch between two readings of the same tasks. A task gone by the
    /// end counts for nothing.
    pub fn between(start: &Reading, end: &Reading) -> Account {
        let mut cpus: Vec<u32> = start
            .tasks
            .iter()
            .chain(&end.tasks)
            .flatten()
            .map(|t| t.cpu)
            .collect();
        cpus.sort_unstable();
        cpus.dedup();
        let of = |r: &Reading, cpu: u32| r.cpus.iter().find(|c| c.0 == cpu).map(|c| c.1);
        let mut ticks = CpuTicks::default();
        for &cpu in &cpus {
            if let (Some(a), Some(b)) = (of(start, cpu), of(end, cpu)) {
                ticks.add(&b.since(&a));
            }
        }
        let total = ticks.total();
        let pct = |n: u64| {
            if total == 0 {
                0.0
            } else {
                100.0 * n as f64 / total as f64
            }
        };
        let pairs = || {
            start.tasks.iter().zip(&end.tasks).filter_map(|p| match p {
                (Some(a), Some(b)) => Some((a, b)),
                _ => None,
            })
        };
        let sum = |f: fn(&crate::platform::account::TaskCounters) -> u64| -> u64 {
            pairs().map(|(a, b)| f(b).saturating_sub(f(a))).sum()
        };
        let migrations = pairs()
            .map(|(a, b)| Some(b.migrations?.saturating_sub(a.migrations?)))
            .sum::<Option<u64>>()
            .filter(|_| pairs().next().is_some());
        let (mhz, counted_mhz) = clock_mhz(start, end, &cpus);
        let throttles = throttles(start, end, &cpus);
        Account {
            wall_ns: end.at_ns.saturating_sub(start.at_ns),
            tasks: pairs().count() as u32,
            cpus,
            ticks: total,
            user_pct: pct(ticks.user + ticks.nice),
            system_pct: pct(ticks.system),
            irq_pct: pct(ticks.irq),
            softirq_pct: pct(ticks.softirq),
            steal_pct: pct(ticks.steal),
            iowait_pct: pct(ticks.iowait),
            idle_pct: pct(ticks.idle),
            run_ns: sum(|t| t.run_ns),
            wait_ns: sum(|t| t.wait_ns),
            slices: sum(|t| t.slices),
            voluntary: sum(|t| t.voluntary),
            involuntary: sum(|t| t.involuntary),
            minor_faults: sum(|t| t.minor_faults),
            major_faults: sum(|t| t.major_faults),
            migrations,
            mhz,
            mhz_counted: counted_mhz,
            hardware: end.hardware,
            no_pmu: end.pmus.is_some_and(|p| !p.hardware),
            throttles,
            reference_ns: None,
        }
    }

    /// The account of a stretch from its two readings ([`crate::platform::account::Probe::end`]).
    pub fn of((start, end): (Reading, Reading)) -> Account {
        Account::between(&start, &end)
    }

    /// Run-queue wait per second of the stretch, ms/s: how long the measured tasks stood ready
    /// while something else had their CPU.
    pub fn wait_ms_per_s(&self) -> f64 {
        if self.wall_ns == 0 {
            0.0
        } else {
            self.wait_ns as f64 / 1e6 / (self.wall_ns as f64 / 1e9)
        }
    }
}

/// The middle value of `v` (the upper one of an even count), as every account median is read;
/// None when empty.
fn middle(mut v: Vec<f64>) -> Option<f64> {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied()
}

/// The middle value of `item` over `accounts` (the stretches that count it).
pub fn median_item(accounts: &[&Account], item: Item) -> Option<f64> {
    middle(accounts.iter().filter_map(|a| a.item(item)).collect())
}

/// An item of an account, as a rate or a share that stretches of any length can be compared on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Item {
    /// Run-queue wait of the measured tasks, ms per second of the stretch.
    Wait,
    /// Context switches forced on them (preemptions), per second.
    Involuntary,
    /// Context switches they asked for (blocking), per second.
    Voluntary,
    /// Their moves between CPUs, per second.
    Migrations,
    /// Their page faults without and with I/O, per second.
    MinorFaults,
    MajorFaults,
    /// Of the CPUs they used: % stolen by the hypervisor, in hardware and software interrupts,
    /// in the kernel, waiting for I/O.
    Steal,
    Irq,
    Softirq,
    System,
    Iowait,
    /// The CPUs' clock, MHz.
    Clock,
    /// Their thermal throttle events, per second.
    Throttles,
    /// The measured tasks' instructions per cycle, and their cache and branch misses per
    /// thousand instructions (hardware counters).
    Ipc,
    CacheMisses,
    BranchMisses,
    /// The host's speed around the stretch: the fixed-work reference's time, ms (larger is
    /// slower).
    Reference,
}

impl Item {
    pub const ALL: [Item; 17] = [
        Item::Wait,
        Item::Involuntary,
        Item::Voluntary,
        Item::Migrations,
        Item::MinorFaults,
        Item::MajorFaults,
        Item::Steal,
        Item::Irq,
        Item::Softirq,
        Item::System,
        Item::Iowait,
        Item::Clock,
        Item::Throttles,
        Item::Ipc,
        Item::CacheMisses,
        Item::BranchMisses,
        Item::Reference,
    ];

    /// Its name in a line of text, and its unit.
    pub fn name(self) -> (&'static str, &'static str) {
        match self {
            Item::Wait => ("run-queue wait", "ms/s"),
            Item::Involuntary => ("involuntary switches", "/s"),
            Item::Voluntary => ("voluntary switches", "/s"),
            Item::Migrations => ("migrations", "/s"),
            Item::MinorFaults => ("minor faults", "/s"),
            Item::MajorFaults => ("major faults", "/s"),
            Item::Steal => ("steal", "%"),
            Item::Irq => ("IRQ", "%"),
            Item::Softirq => ("softirq", "%"),
            Item::System => ("system", "%"),
            Item::Iowait => ("iowait", "%"),
            Item::Clock => ("clock", "MHz"),
            Item::Throttles => ("thermal throttles", "/s"),
            Item::Ipc => ("IPC", ""),
            Item::CacheMisses => ("cache misses", "/k instr"),
            Item::BranchMisses => ("branch misses", "/k instr"),
            Item::Reference => ("host reference", "ms"),
        }
    }

    /// The least change of the item that is more than the counters' own grain: a share moves
    /// by whole ticks (10 ms of a CPU), a rate by one event a stretch.
    pub fn grain(self, a: &Account) -> f64 {
        let per_s = |n: f64| {
            if a.wall_ns == 0 {
                f64::INFINITY
            } else {
                n / (a.wall_ns as f64 / 1e9)
            }
        };
        match self {
            Item::Steal | Item::Irq | Item::Softirq | Item::System | Item::Iowait => {
                if a.ticks == 0 {
                    f64::INFINITY
                } else {
                    100.0 / a.ticks as f64
                }
            }
            Item::Wait => per_s(0.1),
            Item::Clock => 50.0,
            // Two readings of the reference seconds apart on a quiet host differ by a few
            // percent.
            Item::Reference => a.reference_ns.map_or(f64::INFINITY, |r| r / 1e6 * 0.02),
            Item::Ipc => 0.01,
            Item::CacheMisses | Item::BranchMisses => match a.hardware {
                Some(h) if h.instructions > 0 => 1000.0 / h.instructions as f64,
                _ => f64::INFINITY,
            },
            _ => per_s(1.0),
        }
    }

    /// The least share of its earlier value by which the item must move to be named: half for
    /// counts and rates (their spread between quiet stretches is wide), a tenth for the clock
    /// and IPC (steady where nothing changes, and a 10% lower clock is a 10% slower job), a
    /// quarter for miss rates.
    pub fn least_share(self) -> f64 {
        match self {
            Item::Clock | Item::Ipc => 0.1,
            // The host's speed: a 5% slower host slows most figures by about that much.
            Item::Reference => 0.05,
            Item::CacheMisses | Item::BranchMisses => 0.25,
            _ => 0.5,
        }
    }

    /// The least change worth naming between results' summaries (history), in the item's
    /// unit: its level worth a look where it has one, else 50 MHz of clock, 0.05 IPC, 0.1 miss
    /// per thousand instructions, 1 a second or 1%.
    pub fn floor(self) -> f64 {
        self.busy_above().unwrap_or(match self {
            Item::Clock => 50.0,
            Item::Ipc => 0.05,
            Item::Reference => 0.02,
            Item::CacheMisses | Item::BranchMisses => 0.1,
            _ => 1.0,
        })
    }
}

impl Account {
    /// The item's value in this stretch; None where the host does not count it.
    pub fn item(&self, item: Item) -> Option<f64> {
        let per_s = |n: u64| (self.wall_ns > 0).then(|| n as f64 / (self.wall_ns as f64 / 1e9));
        match item {
            Item::Wait => Some(self.wait_ms_per_s()),
            Item::Involuntary => per_s(self.involuntary),
            Item::Voluntary => per_s(self.voluntary),
            Item::Migrations => per_s(self.migrations?),
            Item::MinorFaults => per_s(self.minor_faults),
            Item::MajorFaults => per_s(self.major_faults),
            Item::Steal => Some(self.steal_pct),
            Item::Irq => Some(self.irq_pct),
            Item::Softirq => Some(self.softirq_pct),
            Item::System => Some(self.system_pct),
            Item::Iowait => Some(self.iowait_pct),
            Item::Clock => self.mhz,
            Item::Reference => self.reference_ns.map(|r| r / 1e6),
            Item::Throttles => per_s(self.throttles?),
            Item::Ipc => {
                let h = self.hardware?;
                (h.cycles > 0).then(|| h.instructions as f64 / h.cycles as f64)
            }
            Item::CacheMisses | Item::BranchMisses => {
                let h = self.hardware?;
                let n = if item == Item::CacheMisses {
                    h.cache_misses
                } else {
                    h.branch_misses
                };
                (h.instructions > 0).then(|| n as f64 * 1000.0 / h.instructions as f64)
            }
        }
    }
}

impl Item {
    /// The value above which the item is worth a reader's look, whatever the figure did: a
    /// measured task that waits more than 5% of the time on the run queue (a quiet pinned copy
    /// beside other tests here: up to about 1%), is preempted more
    /// than 50 times a second (a quiet pinned copy here: about 10) or moved more than 10 times,
    /// faults with I/O at all; CPUs more than 1% stolen,
    /// in interrupts, or waiting for I/O; any thermal throttle. None for what has no such
    /// level (the kernel's own share, voluntary switches, minor faults, the clock): those are
    /// the job's own.
    pub fn busy_above(self) -> Option<f64> {
        match self {
            Item::Wait => Some(50.0),
            Item::Involuntary => Some(50.0),
            Item::Migrations => Some(10.0),
            Item::MajorFaults | Item::Throttles => Some(0.0),
            Item::Steal | Item::Irq | Item::Softirq | Item::Iowait => Some(1.0),
            Item::Voluntary
            | Item::MinorFaults
            | Item::System
            | Item::Clock
            | Item::Ipc
            | Item::CacheMisses
            | Item::BranchMisses
            | Item::Reference => None,
        }
    }
}

/// A suite's measured stretches of one kind (an index test's iterations, a sched point's runs,
/// an interactive pair, the noise runs) with their accounts.
#[derive(Debug, Clone)]
pub struct Stretches<'a> {
    /// What they measured ("dhry2reg, 1 copy").
    pub what: String,
    pub accounts: Vec<&'a Account>,
    /// Whether the measured tasks' waits and preemptions are the workload itself (sched's
    /// threads contend for the CPUs by design): then only the CPUs' items can be not quiet.
    pub own_waits: bool,
}

impl Item {
    /// Whether the item is the measured tasks' own (their waits, preemptions, moves), read per
    /// task: a point of 80 threads waits 80 times as long in all.
    pub fn per_task(self) -> bool {
        matches!(self, Item::Wait | Item::Involuntary | Item::Migrations)
    }
}

impl Account {
    /// The item's value, per measured task for the tasks' own items ([`Item::per_task`]).
    fn item_per_task(&self, item: Item) -> Option<f64> {
        let share = if item.per_task() {
            self.tasks.max(1) as f64
        } else {
            1.0
        };
        Some(self.item(item)? / share)
    }
}

/// The items whose median over `stretches` lies above their [`Item::busy_above`] level (per
/// task for the tasks' own items), with that median: what was not quiet while they were
/// measured.
pub fn not_quiet(stretches: &[&Account], own_waits: bool) -> Vec<(Item, f64)> {
    Item::ALL
        .iter()
        .filter_map(|&item| {
            let level = item.busy_above()?;
            if own_waits && item.per_task() {
                return None;
            }
            let v: Vec<f64> = stretches
                .iter()
                .filter_map(|a| a.item_per_task(item))
                .collect();
            let m = middle(v)?;
            (m > level).then_some((item, m))
        })
        .collect()
}

/// A result's account in a few numbers, for `history` (kept beside its figures, layout 9):
/// each item's median over all its measured stretches, per task for the task items (left out
/// where the tasks' waits are the workload's own), by the item's name. Empty without accounts.
pub fn summary(stretches: &[Stretches<'_>]) -> Vec<(String, f64)> {
    Item::ALL
        .iter()
        .filter_map(|&item| {
            let v: Vec<f64> = stretches
                .iter()
                .filter(|s| !(s.own_waits && item.per_task()))
                .flat_map(|s| s.accounts.iter())
                .filter_map(|a| a.item_per_task(item))
                .collect();
            Some((item.name().0.to_string(), middle(v)?))
        })
        .collect()
}

/// What the results' account summaries say beside a figure that changed between two sets of
/// results (a history's level before a change and after it): the items whose per-result values
/// differ by Welch's test at 95%, by the item's least share of the earlier median or more
/// ([`Item::least_share`]), and by more than its [`Item::floor`]. One result after (a nightly
/// job's newest) has no spread for Welch's test: its value must lie beyond every value before
/// instead (it is the most extreme of them by chance one time in as many results). None with
/// fewer than two results before, or none after, that have summaries.
pub fn summary_verdicts(
    before: &[&[(String, f64)]],
    after: &[&[(String, f64)]],
) -> Option<ItemVerdicts> {
    let before: Vec<_> = before.iter().filter(|s| !s.is_empty()).collect();
    let after: Vec<_> = after.iter().filter(|s| !s.is_empty()).collect();
    if before.len() < 2 || after.is_empty() {
        return None;
    }
    let values = |side: &[&&[(String, f64)]], name: &str| -> Vec<f64> {
        side.iter()
            .filter_map(|s| s.iter().find(|(n, _)| n == name).map(|(_, v)| *v))
            .collect()
    };
    let mut changed = Vec::new();
    let mut unchanged = Vec::new();
    for item in Item::ALL {
        let (name, unit) = item.name();
        let (a, b) = (values(&before, name), values(&after, name));
        if a.len() < 2 || b.is_empty() {
            continue;
        }
        let floor = item.floor();
        let (Some(ma), Some(mb)) = (middle(a.clone()), middle(b.clone())) else {
            continue;
        };
        let d = (mb - ma).abs();
        let significant = match b.as_slice() {
            [one] => a.iter().all(|x| one > x) || a.iter().all(|x| one < x),
            _ => crate::stats::welch_test(&a, &b).is_some_and(|t| t.significant()),
        };
        if significant && d > floor && d >= item.least_share() * ma.abs() {
            changed.push((
                (ma.max(mb) + floor) / (ma.min(mb) + floor),
                ItemChange {
                    item: name.into(),
                    unit: unit.into(),
                    a: ma,
                    b: mb,
                },
            ));
        } else {
            unchanged.push(name.to_string());
        }
    }
    changed.sort_by(|x, y| y.0.total_cmp(&x.0));
    Some(ItemVerdicts {
        changed: changed.into_iter().map(|(_, c)| c).collect(),
        unchanged,
    })
}

/// An item that differs between two sets of stretches: its median in each.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Moved {
    pub item: Item,
    pub typical: f64,
    pub these: f64,
}

/// The items whose median over `these` stretches differs from their median over `typical` ones
/// by more than twice the counters' grain and by the item's least share of the typical value
/// or more ([`Item::least_share`]: half for most), largest
/// change first (by the factor between them): what set these
/// stretches apart.
pub fn moved(typical: &[&Account], these: &[&Account]) -> Vec<Moved> {
    let median = median_item;
    let grain = |item: Item| -> f64 {
        middle(these.iter().map(|a| item.grain(a)).collect()).unwrap_or(f64::INFINITY)
    };
    let mut out: Vec<(f64, Moved)> = Item::ALL
        .iter()
        .filter_map(|&item| {
            let (t, h) = (median(typical, item)?, median(these, item)?);
            let d = (h - t).abs();
            if d <= 2.0 * grain(item) || d < item.least_share() * t.abs() {
                return None;
            }
            let size = (h.max(t) + grain(item)) / (h.min(t) + grain(item));
            Some((
                size,
                Moved {
                    item,
                    typical: t,
                    these: h,
                },
            ))
        })
        .collect();
    out.sort_by(|a, b| b.0.total_cmp(&a.0));
    out.into_iter().map(|(_, m)| m).collect()
}

/// What the accounts of two sets of stretches say beside a figure that changed between them:
/// the items that changed with it (significant by Welch's test at 95%, and moved as [`moved`]
/// requires), largest first, and those tested that did not.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ItemVerdicts {
    pub changed: Vec<ItemChange>,
    /// The items both sides count that did not change (their names).
    pub unchanged: Vec<String>,
}

/// An item that changed: its name, unit, and its median on each side.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ItemChange {
    pub item: String,
    pub unit: String,
    pub a: f64,
    pub b: f64,
}

/// Tests each item of the accounts of A's stretches against B's; None with fewer than two
/// stretches a side.
pub fn item_verdicts(a: &[&Account], b: &[&Account]) -> Option<ItemVerdicts> {
    if a.len() < 2 || b.len() < 2 {
        return None;
    }
    let values = |side: &[&Account], item: Item| -> Vec<f64> {
        side.iter().filter_map(|x| x.item(item)).collect()
    };
    let significant: Vec<Item> = Item::ALL
        .iter()
        .copied()
        .filter(|&item| {
            crate::stats::welch_test(&values(a, item), &values(b, item))
                .is_some_and(|t| t.significant())
        })
        .collect();
    let moved = moved(a, b);
    let changed: Vec<ItemChange> = moved
        .iter()
        .filter(|m| significant.contains(&m.item))
        .map(|m| {
            let (name, unit) = m.item.name();
            ItemChange {
                item: name.into(),
                unit: unit.into(),
                a: m.typical,
                b: m.these,
            }
        })
        .collect();
    let unchanged = Item::ALL
        .iter()
        .filter(|&&item| {
            !values(a, item).is_empty()
                && !values(b, item).is_empty()
                && !changed.iter().any(|c| c.item == item.name().0)
        })
        .map(|item| item.name().0.to_string())
        .collect();
    Some(ItemVerdicts { changed, unchanged })
}

/// Readings of these CPUs only.
fn on_cpus(v: &[(u32, u64)], cpus: &[u32]) -> Vec<(u32, u64)> {
    v.iter()
        .filter(|(c, _)| cpus.contains(c))
        .copied()
        .collect()
}

/// The CPUs' clock over a stretch, MHz, and whether it was counted: the measured tasks' APERF
/// and MPERF counters, else the CPUs' own registers (`/dev/cpu/N/msr`) at both ends, their
/// clock while they ran, whoever ran on them. Else the mean of the kernel's frequency readings
/// (`khz`) at both ends, not counted.
fn clock_mhz(start: &Reading, end: &Reading, cpus: &[u32]) -> (Option<f64>, bool) {
    let counted = end.clock.and_then(|c| c.mhz()).or_else(|| {
        let mut sum = crate::platform::counters::ClockCounts::default();
        for (cpu, b) in end.msr.iter().filter(|(c, _)| cpus.contains(c)) {
            let Some((_, a)) = start.msr.iter().find(|(c, _)| c == cpu) else {
                continue;
            };
            sum.aperf += b.aperf.wrapping_sub(a.aperf);
            sum.mperf += b.mperf.wrapping_sub(a.mperf);
            sum.tsc += b.tsc.wrapping_sub(a.tsc);
            sum.running_ns += end.at_ns.saturating_sub(start.at_ns);
        }
        sum.mhz()
    });
    if counted.is_some() {
        return (counted, true);
    }
    let (khz_a, khz_b) = (on_cpus(&start.khz, cpus), on_cpus(&end.khz, cpus));
    let mean = (!khz_a.is_empty() && !khz_b.is_empty()).then(|| {
        let all: Vec<u64> = khz_a.iter().chain(&khz_b).map(|k| k.1).collect();
        all.iter().sum::<u64>() as f64 / all.len() as f64 / 1000.0
    });
    (mean, false)
}

/// The CPUs' thermal throttle events over a stretch, where sysfs has them.
fn throttles(start: &Reading, end: &Reading, cpus: &[u32]) -> Option<u64> {
    let (thr_a, thr_b) = (
        on_cpus(&start.throttles, cpus),
        on_cpus(&end.throttles, cpus),
    );
    (!thr_b.is_empty()).then(|| {
        thr_b
            .iter()
            .map(|&(cpu, n)| {
                let before = thr_a.iter().find(|t| t.0 == cpu).map_or(n, |t| t.1);
                n.saturating_sub(before)
            })
            .sum()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::account::TaskCounters;

    fn ticks(user: u64, steal: u64, idle: u64) -> CpuTicks {
        CpuTicks {
            user,
            steal,
            idle,
            ..CpuTicks::default()
        }
    }

    fn task(cpu: u32, wait_ns: u64, involuntary: u64, migrations: Option<u64>) -> TaskCounters {
        TaskCounters {
            run_ns: 1_000,
            wait_ns,
            slices: 3,
            voluntary: 1,
            involuntary,
            minor_faults: 10,
            major_faults: 0,
            cpu,
            migrations,
        }
    }

    #[test]
    fn the_account_counts_the_cpus_the_tasks_used_and_their_changes() {
        let start = Reading {
            at_ns: 1_000_000_000,
            cpus: vec![
                (0, ticks(100, 10, 50)),
                (1, ticks(0, 0, 0)),
                (2, ticks(5, 5, 5)),
            ],
            tasks: vec![Some(task(0, 0, 0, Some(1))), Some(task(2, 0, 0, Some(0)))],
            khz: vec![(0, 2_000_000), (2, 1_000_000), (1, 9_000_000)],
            throttles: vec![(0, 4)],
            ..Reading::default()
        };
        let end = Reading {
            at_ns: 1_500_000_000,
            // CPU 0: 30 user, 10 steal; CPU 1 (unused) is busy and must not count; CPU 2:
            // 10 user, 50 idle.
            cpus: vec![
                (0, ticks(130, 20, 50)),
                (1, ticks(999, 999, 0)),
                (2, ticks(15, 5, 55)),
            ],
            tasks: vec![
                Some(task(0, 40_000_000, 7, Some(3))),
                Some(task(2, 10_000_000, 1, Some(0))),
            ],
            khz: vec![(0, 2_000_000), (2, 1_000_000)],
            throttles: vec![(0, 6)],
            ..Reading::default()
        };
        let a = Account::between(&start, &end);
        assert_eq!(a.cpus, vec![0, 2]);
        assert_eq!(a.wall_ns, 500_000_000);
        assert_eq!(a.ticks, 100);
        assert!((a.user_pct - 40.0).abs() < 1e-9);
        assert!((a.steal_pct - 10.0).abs() < 1e-9);
        assert!((a.idle_pct - 50.0).abs() < 1e-9);
        assert_eq!(
            (a.wait_ns, a.involuntary, a.migrations),
            (50_000_000, 8, Some(2))
        );
        assert!((a.wait_ms_per_s() - 100.0).abs() < 1e-9);
        assert_eq!(a.mhz, Some(1500.0));
        assert_eq!(a.throttles, Some(2));
    }

    #[test]
    fn a_task_gone_or_a_counter_not_shown_counts_for_nothing() {
        let start = Reading {
            tasks: vec![Some(task(0, 5, 1, None)), Some(task(1, 5, 1, Some(0)))],
            ..Reading::default()
        };
        let end = Reading {
            tasks: vec![Some(task(0, 15, 2, None)), None],
            ..Reading::default()
        };
        let a = Account::between(&start, &end);
        assert_eq!((a.wait_ns, a.involuntary), (10, 1));
        assert_eq!((a.migrations, a.mhz, a.throttles), (None, None, None));
        assert_eq!((a.ticks, a.steal_pct), (0, 0.0));
    }
}

#[cfg(test)]
mod stretch_tests {
    use super::*;

    pub fn stretch(wait_ms: u64, involuntary: u64, steal_pct: f64) -> Account {
        Account {
            wall_ns: 100_000_000,
            tasks: 1,
            cpus: vec![0],
            ticks: 10,
            user_pct: 100.0 - steal_pct,
            system_pct: 0.0,
            irq_pct: 0.0,
            softirq_pct: 0.0,
            steal_pct,
            iowait_pct: 0.0,
            idle_pct: 0.0,
            run_ns: 100_000_000,
            wait_ns: wait_ms * 1_000_000,
            slices: 1,
            voluntary: 0,
            involuntary,
            minor_faults: 0,
            major_faults: 0,
            migrations: Some(0),
            mhz: None,
            mhz_counted: false,
            hardware: None,
            no_pmu: false,
            throttles: None,
            reference_ns: None,
        }
    }

    #[test]
    fn the_items_that_set_slow_stretches_apart_are_named_largest_first() {
        let quiet: Vec<Account> = (0..9).map(|_| stretch(0, 0, 0.0)).collect();
        let slow = [stretch(40, 8, 0.0), stretch(50, 9, 0.0)];
        let typical: Vec<&Account> = quiet.iter().collect();
        let these: Vec<&Account> = slow.iter().collect();
        let m = moved(&typical, &these);
        let items: Vec<Item> = m.iter().map(|m| m.item).collect();
        // 500 ms/s of wait against 0, 90 switches/s against 0: both named, wait first.
        assert_eq!(items, [Item::Wait, Item::Involuntary]);
        assert!((m[0].these - 500.0).abs() < 1e-9 && m[0].typical == 0.0);
        // Within the grain (one tick of ten is 10%): a 10% steal is not named.
        let one_tick = [stretch(0, 0, 10.0)];
        let these: Vec<&Account> = one_tick.iter().collect();
        assert!(moved(&typical, &these).is_empty());
        // Steal of 50% of the CPU is.
        let stolen = [stretch(0, 0, 50.0)];
        let these: Vec<&Account> = stolen.iter().collect();
        assert_eq!(moved(&typical, &these)[0].item, Item::Steal);
    }

    #[test]
    fn an_item_changed_with_a_figure_only_when_significant_and_beyond_its_grain() {
        let quiet: Vec<Account> = (0..8).map(|i| stretch(i % 2, 0, 0.0)).collect();
        let waited: Vec<Account> = (0..8).map(|i| stretch(40 + i % 3, 0, 0.0)).collect();
        let a: Vec<&Account> = quiet.iter().collect();
        let b: Vec<&Account> = waited.iter().collect();
        let v = item_verdicts(&a, &b).unwrap();
        assert_eq!(v.changed.len(), 1, "{v:?}");
        assert_eq!(v.changed[0].item, "run-queue wait");
        assert!(v.changed[0].a <= 10.0 && v.changed[0].b >= 400.0, "{v:?}");
        assert!(v.unchanged.contains(&"steal".to_string()), "{v:?}");
        // Clock and throttles are not counted here: neither is said unchanged.
        assert!(!v
            .unchanged
            .iter()
            .any(|u| u == "clock" || u == "thermal throttles"));
        // The same stretches on both sides: nothing changed.
        let same = item_verdicts(&a, &a).unwrap();
        assert!(same.changed.is_empty());
        // One stretch a side is no test.
        assert_eq!(item_verdicts(&a[..1], &b), None);
    }
}

#[cfg(test)]
mod quiet_tests {
    use super::stretch_tests::stretch;
    use super::*;

    #[test]
    fn what_was_not_quiet_is_named_per_task() {
        let quiet = [stretch(0, 0, 0.0), stretch(0, 0, 0.0)];
        assert!(not_quiet(&quiet.iter().collect::<Vec<_>>(), false).is_empty());
        // 40 ms of 100 waited: 400 ms/s, over the 50 ms/s level; 30% stolen.
        let busy = [stretch(40, 0, 30.0), stretch(40, 0, 30.0)];
        let items: Vec<Item> = not_quiet(&busy.iter().collect::<Vec<_>>(), false)
            .into_iter()
            .map(|(i, _)| i)
            .collect();
        assert_eq!(items, [Item::Wait, Item::Steal]);
        // The same wait over 80 threads is 5 ms/s each: quiet.
        let mut many = stretch(40, 0, 0.0);
        many.tasks = 80;
        assert!(not_quiet(&[&many], false).is_empty());
        // Where waiting is the workload's own, only the CPUs' items count.
        let items: Vec<Item> = not_quiet(&busy.iter().collect::<Vec<_>>(), true)
            .into_iter()
            .map(|(i, _)| i)
            .collect();
        assert_eq!(items, [Item::Steal]);
    }
}

#[cfg(test)]
mod planted_tests {
    use super::*;
    use crate::platform::account::{Probe, Task};

    /// A fake /proc and /sys: CPU 0's ticks, one task on CPU 0, CPU 0's clock.
    struct FakeHost {
        _dir: tempfile::TempDir,
        proc: std::path::PathBuf,
        sys: std::path::PathBuf,
    }

    impl FakeHost {
        fn new() -> FakeHost {
            let dir = tempfile::tempdir().unwrap();
            let (proc, sys) = (dir.path().join("proc"), dir.path().join("sys"));
            std::fs::create_dir_all(proc.join("7/task/7")).unwrap();
            std::fs::create_dir_all(sys.join("devices/system/cpu/cpu0/cpufreq")).unwrap();
            let host = FakeHost {
                _dir: dir,
                proc,
                sys,
            };
            host.set(0, 0, 0, 2_600_000);
            host
        }

        /// The counters so far: user and steal ticks of CPU 0, the task's run ns, the clock.
        fn set(&self, user: u64, steal: u64, run_ns: u64, khz: u64) {
            let w = |p: std::path::PathBuf, s: String| std::fs::write(p, s).unwrap();
            w(
                self.proc.join("stat"),
                format!("cpu0 {user} 0 0 0 0 0 0 {steal}\n"),
            );
            let task = self.proc.join("7/task/7");
            w(task.join("schedstat"), format!("{run_ns} 0 1\n"));
            w(
                task.join("status"),
                "voluntary_ctxt_switches:\t0\nnonvoluntary_ctxt_switches:\t0\n".into(),
            );
            let mut stat = String::from("7 (job) R");
            for n in 4..=52 {
                stat.push_str(&format!(" {}", if n == 39 { 0 } else { 1 }));
            }
            w(task.join("stat"), stat);
            w(
                self.sys
                    .join("devices/system/cpu/cpu0/cpufreq/scaling_cur_freq"),
                format!("{khz}\n"),
            );
        }
    }

    /// Eight stretches of 10 ticks each on the fake host, each with `steal` of them stolen
    /// and the clock at `khz`.
    fn stretches(host: &FakeHost, steal: u64, khz: u64) -> Vec<Account> {
        let probe = Probe::at(&host.proc, &host.sys);
        let task = [Task { pid: 7, tid: 7 }];
        let (mut user, mut stolen, mut run) = (0, 0, 0);
        (0..8)
            .map(|i| {
                host.set(user, stolen, run, khz);
                let a = probe.before(&task);
                user += 10 - steal + i % 2;
                stolen += steal;
                run += 100_000_000;
                host.set(user, stolen, run, khz);
                Account::between(&a, &probe.after(&task))
            })
            .collect()
    }

    #[test]
    fn a_steal_jump_and_a_lower_clock_are_named_from_the_kernels_files() {
        let host = FakeHost::new();
        let quiet = stretches(&host, 0, 2_600_000);
        let stolen = stretches(&host, 4, 1_200_000);
        let v = item_verdicts(
            &quiet.iter().collect::<Vec<_>>(),
            &stolen.iter().collect::<Vec<_>>(),
        )
        .unwrap();
        let named: Vec<&str> = v.changed.iter().map(|c| c.item.as_str()).collect();
        assert!(named.contains(&"steal"), "{v:?}");
        assert!(named.contains(&"clock"), "{v:?}");
        let clock = v.changed.iter().find(|c| c.item == "clock").unwrap();
        assert_eq!((clock.a, clock.b), (2600.0, 1200.0));
        let steal = v.changed.iter().find(|c| c.item == "steal").unwrap();
        assert!(steal.a == 0.0 && steal.b >= 35.0, "{steal:?}");
        // The same host unchanged: nothing named.
        let again = stretches(&host, 0, 2_600_000);
        let same = item_verdicts(
            &quiet.iter().collect::<Vec<_>>(),
            &again.iter().collect::<Vec<_>>(),
        )
        .unwrap();
        assert!(same.changed.is_empty(), "{same:?}");
    }

    /// Eight stretches on the fake host whose tasks' PMU counts (which no file can fake: the
    /// kernel gives them through `perf_event_open`) are as [`Probe::end`] puts them: `ipc`
    /// instructions a cycle, and the clock they ran at, from APERF over MPERF at a 2 GHz TSC.
    fn counted(host: &FakeHost, ipc: f64, mhz: f64, pmu: bool) -> Vec<Account> {
        use crate::platform::counters::{Available, ClockCounts, HardwareCounts};
        let probe = Probe::at(&host.proc, &host.sys);
        let task = [Task { pid: 7, tid: 7 }];
        (0..8u64)
            .map(|i| {
                host.set(0, 0, 0, 2_600_000);
                let a = probe.before(&task);
                host.set(10, 0, 100_000_000, 2_600_000);
                let mut b = probe.after(&task);
                let cycles = 200_000_000 + i * 1_000_000;
                b.pmus = Some(Available {
                    hardware: pmu,
                    clock: true,
                });
                b.hardware = pmu.then_some(HardwareCounts {
                    instructions: (cycles as f64 * ipc) as u64,
                    cycles,
                    cache_misses: (cycles as f64 * ipc) as u64 / 1_000,
                    branch_misses: (cycles as f64 * ipc) as u64 / 200,
                });
                b.clock = Some(ClockCounts {
                    aperf: (200_000_000.0 * mhz / 2000.0) as u64 + i,
                    mperf: 200_000_000,
                    tsc: 200_000_000,
                    running_ns: 100_000_000,
                });
                Account::between(&a, &b)
            })
            .collect()
    }

    /// Six stretches of at least 20 ms on the fake host whose CPU 0 ran at `ratio` of its
    /// 2.6 GHz base, by its APERF, MPERF and TSC as `/dev/cpu/0/msr` gives them (a regular
    /// file cannot stand in for it: its registers are 8 bytes wide a byte apart; the reading
    /// itself is `platform::account`'s test).
    fn by_registers(host: &FakeHost, ratio: f64) -> Vec<Account> {
        use crate::platform::account::MsrClock;
        let probe = Probe::at(&host.proc, &host.sys);
        let task = [Task { pid: 7, tid: 7 }];
        (0..6)
            .map(|_| {
                let mut a = probe.before(&task);
                a.msr = vec![(
                    0,
                    MsrClock {
                        aperf: 1_000,
                        mperf: 1_000,
                        tsc: 1_000,
                    },
                )];
                std::thread::sleep(std::time::Duration::from_millis(20));
                let mut b = probe.after(&task);
                let ticks = (b.at_ns - a.at_ns) as f64 * 2.6;
                b.msr = vec![(
                    0,
                    MsrClock {
                        aperf: 1_000 + (ticks * ratio) as u64,
                        mperf: 1_000 + ticks as u64,
                        tsc: 1_000 + ticks as u64,
                    },
                )];
                Account::between(&a, &b)
            })
            .collect()
    }

    #[test]
    fn a_lower_clock_is_read_from_the_cpus_registers_where_the_msr_driver_is() {
        let host = FakeHost::new();
        let full = by_registers(&host, 1.0);
        let slow = by_registers(&host, 0.6);
        let m = |a: &[Account]| median_item(&a.iter().collect::<Vec<_>>(), Item::Clock).unwrap();
        assert!((m(&full) - 2_600.0).abs() < 1.0, "{full:?}");
        assert!((m(&slow) - 1_560.0).abs() < 1.0, "{slow:?}");
        assert!(full[0].mhz_counted);
        let v = item_verdicts(
            &full.iter().collect::<Vec<_>>(),
            &slow.iter().collect::<Vec<_>>(),
        )
        .unwrap();
        assert_eq!(v.changed[0].item, "clock", "{v:?}");
        // Without the files: sysfs's 2600 MHz, not counted.
        let sampled = stretches(&host, 0, 2_600_000);
        assert!(!sampled[0].mhz_counted && sampled[0].mhz == Some(2_600.0));
    }

    #[test]
    fn a_lower_ipc_and_a_lower_counted_clock_are_named_and_a_vm_says_it_has_no_pmu() {
        let host = FakeHost::new();
        let before = counted(&host, 2.0, 2_600.0, true);
        assert!(before[0].mhz_counted && !before[0].no_pmu);
        // The counted clock wins over sysfs's (2600 MHz there too, but from APERF/MPERF here).
        assert!(
            (before[0].mhz.unwrap() - 2_600.0).abs() < 1.0,
            "{:?}",
            before[0]
        );
        assert!((before[0].item(Item::Ipc).unwrap() - 2.0).abs() < 1e-3);
        let slower = counted(&host, 1.2, 2_100.0, true);
        let v = item_verdicts(
            &before.iter().collect::<Vec<_>>(),
            &slower.iter().collect::<Vec<_>>(),
        )
        .unwrap();
        let named: Vec<&str> = v.changed.iter().map(|c| c.item.as_str()).collect();
        // IPC by 40%, the clock by 19%: both past their tenth, the larger factor first; the
        // miss rates per thousand instructions stayed.
        assert_eq!(named, ["IPC", "clock"], "{v:?}");
        // The same counts again: nothing named.
        let again = counted(&host, 2.0, 2_600.0, true);
        let same = item_verdicts(
            &before.iter().collect::<Vec<_>>(),
            &again.iter().collect::<Vec<_>>(),
        )
        .unwrap();
        assert!(same.changed.is_empty(), "{same:?}");
        assert!(same.unchanged.contains(&"IPC".to_string()), "{same:?}");
        // A host without a CPU PMU: no IPC, not tested, and the account says why.
        let vm = counted(&host, 2.0, 2_600.0, false);
        assert!(vm[0].no_pmu && vm[0].hardware.is_none());
        let v = item_verdicts(
            &vm.iter().collect::<Vec<_>>(),
            &vm.iter().collect::<Vec<_>>(),
        )
        .unwrap();
        assert!(!v.unchanged.iter().any(|i| i == "IPC"), "{v:?}");
    }
}

#[cfg(test)]
mod summary_tests {
    use super::stretch_tests::stretch;
    use super::*;

    #[test]
    fn a_results_summary_and_the_items_that_moved_at_a_change() {
        let quiet = [stretch(0, 0, 0.0), stretch(1, 0, 0.0), stretch(0, 0, 0.0)];
        let s = summary(&[Stretches {
            what: "x".into(),
            accounts: quiet.iter().collect(),
            own_waits: false,
        }]);
        assert_eq!(s[0], ("run-queue wait".to_string(), 0.0));
        // A workload's own waits are left out.
        let own = summary(&[Stretches {
            what: "x".into(),
            accounts: quiet.iter().collect(),
            own_waits: true,
        }]);
        assert!(own.iter().all(|(n, _)| n != "run-queue wait"));
        let with = |wait: f64| vec![("run-queue wait".to_string(), wait), ("steal".into(), 0.0)];
        let before = [with(0.0), with(0.5), with(0.2)];
        let after = [with(400.0), with(420.0), with(390.0)];
        let refs = |v: &[Vec<(String, f64)>]| -> Vec<Vec<(String, f64)>> { v.to_vec() };
        let (b, a) = (refs(&before), refs(&after));
        let b: Vec<&[(String, f64)]> = b.iter().map(Vec::as_slice).collect();
        let a: Vec<&[(String, f64)]> = a.iter().map(Vec::as_slice).collect();
        let v = summary_verdicts(&b, &a).unwrap();
        assert_eq!(v.changed.len(), 1);
        assert_eq!(v.changed[0].item, "run-queue wait");
        assert_eq!(v.unchanged, ["steal"]);
        // One result before, or results without summaries: nothing to say.
        assert_eq!(summary_verdicts(&b[..1], &a), None);
        assert_eq!(summary_verdicts(&[&[], &[]], &a), None);
        // One newest result (a nightly job's) counts where it lies beyond every one before.
        let one = summary_verdicts(&b, &a[..1]).unwrap();
        assert_eq!(one.changed[0].item, "run-queue wait");
        let within = [with(0.3)];
        let w: Vec<&[(String, f64)]> = within.iter().map(Vec::as_slice).collect();
        assert!(summary_verdicts(&b, &w).unwrap().changed.is_empty());
    }
}
