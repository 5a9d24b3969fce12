//! The interactive suite's result (interbench): the settings, every bench × load pair measured
//! with its latency and deadline figures, and what each load did. interbench's deadline
//! accounting, which those figures come from, is in `deadline`.

pub mod deadline;

use serde::{Deserialize, Serialize};

use super::figures::{batch_means_ms, Better, Figure, Placement, LATENCY_BATCHES};
use super::headline::{self, Column, Figure as HeadlineFigure};
use super::{SuiteData, SuiteResult};
use crate::calibration::{BurnCalibration, RateMeasurement};
use crate::platform::sched::Policy;
use crate::text::Text;
use deadline::DeadlineCounts;

/// A simulated interactive task.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Bench {
    Audio,
    Video,
    X,
    Gaming,
    Custom,
}

/// A background load.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Load {
    None,
    Video,
    X,
    Burn,
    Write,
    Read,
    Ring,
    Compile,
    Memload,
    Hack,
    Custom,
}

impl Bench {
    /// Every bench, in interbench's order.
    pub const ALL: [Bench; 5] = [
        Bench::Audio,
        Bench::Video,
        Bench::X,
        Bench::Gaming,
        Bench::Custom,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Bench::Audio => "Audio",
            Bench::Video => "Video",
            Bench::X => "X",
            Bench::Gaming => "Gaming",
            Bench::Custom => "Custom",
        }
    }

    /// Case-insensitive, as interbench matched names.
    pub fn parse(name: &str) -> Option<Bench> {
        Bench::ALL
            .into_iter()
            .find(|b| b.name().eq_ignore_ascii_case(name))
    }

    pub fn names() -> String {
        Bench::ALL.map(Bench::name).join(", ")
    }
}

impl Load {
    /// Every load, in interbench's order.
    pub const ALL: [Load; 11] = [
        Load::None,
        Load::Video,
        Load::X,
        Load::Burn,
        Load::Write,
        Load::Read,
        Load::Ring,
        Load::Compile,
        Load::Memload,
        Load::Hack,
        Load::Custom,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Load::None => "None",
            Load::Video => "Video",
            Load::X => "X",
            Load::Burn => "Burn",
            Load::Write => "Write",
            Load::Read => "Read",
            Load::Ring => "Ring",
            Load::Compile => "Compile",
            Load::Memload => "Memload",
            Load::Hack => "Hack",
            Load::Custom => "Custom",
        }
    }

    /// Case-insensitive, as interbench matched names.
    pub fn parse(name: &str) -> Option<Load> {
        Load::ALL
            .into_iter()
            .find(|l| l.name().eq_ignore_ascii_case(name))
    }

    pub fn names() -> String {
        Load::ALL.map(Load::name).join(", ")
    }

    /// The simulation this load runs, never measured under itself (Video is not measured
    /// under Video).
    pub fn same_as(self) -> Option<Bench> {
        match self {
            Load::Video => Some(Bench::Video),
            Load::X => Some(Bench::X),
            Load::Custom => Some(Bench::Custom),
            _ => None,
        }
    }

    /// Whether this load writes or reads the large files.
    pub fn uses_files(self) -> (bool, bool) {
        match self {
            Load::Write => (true, false),
            Load::Read => (false, true),
            Load::Compile => (true, true),
            _ => (false, false),
        }
    }
}

/// One bench measured under one load.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Measurement {
    pub bench: Bench,
    pub load: Load,
    pub wall_ns: u64,
    /// interbench's latency, one sample per period: the wake-up delay after the timer fired
    /// plus one whole interval for every deadline missed (Gaming: each frame's overrun).
    pub latency: LatencySummary,
    pub samples_ns: Vec<u64>,
    pub samples_truncated: bool,
    /// The pure wake-up latency, timer fired → task running, one sample per sleep; None for
    /// Gaming.
    pub wake: Option<LatencySummary>,
    pub wake_samples_ns: Vec<u64>,
    /// Deadline → task running, the timer's lateness included (cyclictest's figure).
    pub from_deadline: Option<LatencySummary>,
    pub counts: DeadlineCounts,
    /// interbench's % desired CPU: achieved / (achieved + missed) burns.
    pub desired_cpu_pct: f64,
    /// interbench's % deadlines met; None for Gaming, which has no deadlines.
    pub deadlines_met_pct: Option<f64>,
    /// CPU the bench process used, as % of one CPU over the window (`getrusage`).
    pub measured_cpu_pct: f64,
    /// CPU the bench asked for over the run, as % of one CPU (5 for Audio, 40 for Video, X's
    /// mean over the ramp steps it went through, 100 for Gaming).
    pub asked_cpu_pct: f64,
    pub task_policy: Policy,
    pub timer: Option<TimerStats>,
    pub memory_locked: bool,
    pub load_report: LoadReport,
    /// `--explain`: the pair's worst samples, explained from the kernel's trace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explained: Option<crate::model::explain::Explained>,
    /// The host's account of the pair: the bench worker's threads and their CPUs from the
    /// task's start to its stop; None in results stored before hostbench kept one, and with
    /// `HOSTBENCH_NO_ACCOUNT`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub account: Option<Box<super::account::Account>>,
}

/// An `interactive` run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InteractiveResult {
    pub settings: InteractiveSettings,
    pub calibration: BurnCalibration,
    /// loops_per_ms measured again after the last pair, to see whether the CPU's speed drifted.
    pub calibration_end: Option<RateMeasurement>,
    /// The burn loop's speed measured before the first pair, the start of that comparison.
    #[serde(default)]
    pub calibration_start: Option<RateMeasurement>,
    /// Whether the CPU's speed changed during the run beyond the noise of its measurement.
    #[serde(default)]
    pub drift: Option<DriftCheck>,
    /// Whether the timekeepers of benched tasks ran SCHED_FIFO.
    pub timekeeper_realtime: bool,
    /// Warnings about how this run differs from the intended method.
    pub notes: Vec<Text>,
    pub skipped: Vec<SkippedLoad>,
    pub planned_pairs: usize,
    pub measurements: Vec<Measurement>,
    /// The coordinator's own CPU time while the pairs ran (calibrations excluded), ns.
    pub coordinator_cpu_ns: u64,
    pub wall_ns: u64,
}

/// The burn loop's speed before the first pair and after the last: did the CPU's speed drift
/// while the run went on? A change counts as drift only beyond the noise of the two
/// measurements (three times their combined median absolute deviation, at least 1%), not at a
/// fixed 5%.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct DriftCheck {
    /// % change of the loop's speed, end against start; positive = slower at the end.
    pub slower_pct: f64,
    /// The change the two measurements' own noise allows, %.
    pub noise_pct: f64,
    pub drifted: bool,
}

/// The fleet's column of interbench's worst pair: the deadlines met by the bench × load pair
/// that met the fewest.
pub const WORST_PAIR: Column = Column {
    key: "interactive_worst",
    name: "interactive, worst pair",
    unit: "% deadlines met",
    bounds: (0.0, 100.0),
    better: Better::Higher,
    is_spread: false,
    of: |r| {
        let met = |m: &Measurement| m.deadlines_met_pct.unwrap_or(f64::INFINITY);
        let worst = headline::each(r, |s| match s {
            SuiteResult::Interactive(i) => Some(i),
            _ => None,
        })
        .filter_map(|i| i.worst_by_deadlines().map(|m| (i, m)))
        .min_by(|a, b| met(a.1).total_cmp(&met(b.1)))?;
        let (result, worst) = worst;
        Some(HeadlineFigure {
            value: worst.deadlines_met_pct?,
            kind: measured(&result.settings).into(),
            note: format!("{} under {}", worst.bench.name(), worst.load.name()).into(),
        })
    },
};

/// What the worst pair was the worst of, as the fleet compares results (the headline's kind):
/// the benches and loads run, and each setting that changes a pair's deadlines. Two results
/// compare only where these words are the same.
pub fn measured(s: &InteractiveSettings) -> String {
    let mut words = vec![
        format!(
            "the worst of {} benches × {} loads",
            s.benches.len(),
            s.loads.len()
        ),
        format!("-t {}", s.duration_s),
        format!("-L {}", s.burn_threads),
    ];
    let flags = [
        (s.realtime, "-r".to_string()),
        (s.bench_nice != 0, format!("-B {}", s.bench_nice)),
        (s.load_nice != 0, format!("-N {}", s.load_nice)),
        (s.pinned_cpu.is_some(), "-u".to_string()),
        (s.idle_hold, "idle hold".to_string()),
        (s.page_cache, "page cache".to_string()),
        (s.relative_sleep, "relative sleep".to_string()),
    ];
    words.extend(flags.into_iter().filter(|(on, _)| *on).map(|(_, w)| w));
    if let Some(c) = s.custom {
        words.push(format!("-C {} -I {}", c.cpu_pct, c.interval_us));
    }
    words.join(", ")
}

impl DriftCheck {
    pub fn of(start: &RateMeasurement, end: &RateMeasurement) -> DriftCheck {
        let slower_pct = 100.0 * (start.per_ms / end.per_ms - 1.0);
        let noise_pct = (3.0 * start.mad_pct.hypot(end.mad_pct)).max(1.0);
        DriftCheck {
            slower_pct,
            noise_pct,
            drifted: slower_pct.abs() > noise_pct,
        }
    }
}

impl InteractiveResult {
    /// How far the loop `-l` or the cache set is from this host's loop as measured at the end,
    /// %; positive = the host is slower than the figure used.
    pub fn given_gap_pct(&self) -> Option<f64> {
        let end = self.calibration_end?;
        Some(100.0 * (self.calibration.loops_per_ms as f64 / end.per_ms - 1.0))
    }

    /// The pair with the fewest deadlines met (Gaming has none).
    pub fn worst_by_deadlines(&self) -> Option<&Measurement> {
        self.measurements
            .iter()
            .filter_map(|m| Some((m, m.deadlines_met_pct?)))
            .min_by(|(_, a), (_, b)| a.total_cmp(b))
            .map(|(m, _)| m)
    }

    /// The worst pair: the fewest deadlines met or, when only Gaming (which has none) ran, the
    /// largest mean latency.
    pub fn worst(&self) -> Option<&Measurement> {
        self.worst_by_deadlines().or_else(|| {
            self.measurements
                .iter()
                .max_by(|a, b| a.latency.mean_ns.total_cmp(&b.latency.mean_ns))
        })
    }
}

/// X's steps per cycle: 0% to 100% in 1% (1 ms) steps (a row of X over fewer says so).
pub const X_STEPS: u64 = 101;

/// interbench's Hack load: hackbench's 50 groups of 20 senders and 20 receivers.
pub const DEFAULT_HACK_GROUPS: u32 = 50;

/// The settings of an interactive run, as stored with its result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InteractiveSettings {
    /// `-t`: seconds each bench × load pair is measured, rounded up to a multiple of 10 as
    /// interbench does (X's 0→100% ramp takes 10.1 s) unless `exact_time`.
    pub duration_s: u64,
    /// The `-t` given, when it was rounded up.
    #[serde(default)]
    pub requested_s: Option<u64>,
    /// `--exact-time`: keep `-t` as given (shorter pairs for `run` profiles and tests).
    #[serde(default)]
    pub exact_time: bool,
    /// `--idle-hold`: /dev/cpu_dma_latency held at 0 while measuring, as cyclictest does, so
    /// CPUs stay out of deep idle states.
    #[serde(default)]
    pub idle_hold: bool,
    /// `-L`: threads of the Burn and Ring loads.
    pub burn_threads: u32,
    /// `-B` and `-N`.
    pub bench_nice: i32,
    pub load_nice: i32,
    /// `-r`: benches run SCHED_FIFO, figures in µs.
    pub realtime: bool,
    /// `-u`: the CPU everything was pinned to.
    pub pinned_cpu: Option<usize>,
    pub custom: Option<CustomSpec>,
    pub benches: Vec<Bench>,
    pub loads: Vec<Load>,
    /// Size of the Write and Read files, bytes.
    pub file_bytes: u64,
    /// `--page-cache`: Write and Read go through the page cache as interbench v0.31's do (Read
    /// keeps its file cached, Write never waits for the device).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub page_cache: bool,
    /// `--relative-sleep`: timekeepers sleep as interbench v0.31's (a relative sleep from when
    /// the task's request reaches them), so a latency holds both hand-offs.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub relative_sleep: bool,
    /// Memload's size, MB (None: Memload not run).
    pub memload_mb: Option<u64>,
    pub hack_groups: u32,
    /// Time the load runs alone before the bench starts, ms (interbench: 1 s).
    pub settle_ms: u64,
    /// `-m`.
    pub comment: Option<Text>,
    /// `--explain N`: the N worst samples of each pair explained from the kernel's trace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explain: Option<u32>,
}

/// A load that will not run, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SkippedLoad {
    pub load: Load,
    pub reason: Text,
}

/// `-C` percent of CPU every `-I` microseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct CustomSpec {
    pub cpu_pct: u32,
    pub interval_us: u64,
}

/// The figures of a set of latency samples.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencySummary {
    pub count: u64,
    pub mean_ns: f64,
    /// The true sample standard deviation.
    pub sd_ns: f64,
    /// The "SD" interbench v0.31's `show_latencies` prints: the square root of
    /// `(Σx² − mean²/n) / (n − 1)` (docs/interactive.md shows both formulas); the table's
    /// `+/- SD` column. None in results stored before it was kept: see [`Self::interbench_sd`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interbench_sd_ns: Option<f64>,
    pub max_ns: u64,
    pub p50_ns: u64,
    pub p99_ns: u64,
    pub p999_ns: u64,
}

impl LatencySummary {
    /// interbench's SD of these samples, ns: as kept, or, for a result stored before it was,
    /// from the count, mean and true SD (Σx² = (n − 1)·sd² + n·mean²).
    pub fn interbench_sd(&self) -> f64 {
        if let Some(sd) = self.interbench_sd_ns {
            return sd;
        }
        let n = self.count as f64;
        let sum_sq = (n - 1.0) * self.sd_ns * self.sd_ns + n * self.mean_ns * self.mean_ns;
        interbench_sd(self.count, self.mean_ns, sum_sq)
    }
}

/// interbench v0.31's `show_latencies` "SD" of `n` samples with mean `mean` and sum of squares
/// `sum_sq`: `sqrt((sum_sq − mean²/n) / (n − 1))`, 0 for fewer than two samples. (It subtracts
/// mean²/n where the variance subtracts n·mean², so it comes out near the root mean square.)
pub fn interbench_sd(n: u64, mean: f64, sum_sq: f64) -> f64 {
    if n < 2 {
        return 0.0;
    }
    let n = n as f64;
    ((sum_sq - mean * mean / n) / (n - 1.0)).max(0.0).sqrt()
}

/// How the timer itself behaved: how late `clock_nanosleep` returned past each deadline, seen
/// by the timekeeper thread. It is kept apart from the task's latency, which starts when the
/// timer fired.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct TimerStats {
    pub wakeups: u64,
    pub mean_oversleep_ns: f64,
    pub max_oversleep_ns: u64,
    /// CPU time the timekeeper thread used, ns.
    pub cpu_ns: u64,
    /// The policy the timekeeper actually ran with (its own `sched_getscheduler`).
    pub policy: Option<Policy>,
}

/// What a load did while it ran.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LoadReport {
    pub threads: usize,
    /// The policy of every thread the load ran (load threads and any timekeeper).
    pub policies: Vec<Policy>,
    /// Write: bytes known to have reached the device (written out and waited for).
    pub bytes_written: u64,
    /// Write: bytes handed to `write()`.
    #[serde(default)]
    pub bytes_handed: u64,
    /// Write with `--page-cache`: passes over the file, each a new `O_TRUNC` open that wrote
    /// the whole file and closed it. Left out when 0, so that a result stored before there
    /// was such a count reads back byte for byte.
    #[serde(default, skip_serializing_if = "crate::model::is_zero")]
    pub write_passes: u64,
    pub bytes_read: u64,
    pub read_passes: u64,
    pub ring_wakeups: u64,
    pub hack_messages: u64,
    pub memload_mb_touched: u64,
    pub burn_loops: u64,
    /// The disk loads' block device, and the bytes it read and wrote while the load ran (all
    /// of the device's traffic, the load's and anyone else's); None without files or where the
    /// file system has no block device.
    #[serde(default)]
    pub device: Option<DeviceTraffic>,
}

/// What a block device did while a load ran.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceTraffic {
    pub name: Text,
    pub bytes_read: u64,
    pub bytes_written: u64,
}

impl SuiteData for InteractiveResult {
    fn name(&self) -> &'static str {
        "interactive"
    }

    fn stretches(&self) -> Vec<super::account::Stretches<'_>> {
        let pinned = if self.settings.pinned_cpu.is_some() {
            ", pinned"
        } else {
            ""
        };
        self.measurements
            .iter()
            .filter_map(|m| {
                Some(super::account::Stretches {
                    what: format!("{} under {}{pinned}", m.bench.name(), m.load.name()),
                    accounts: vec![m.account.as_ref()?],
                    own_waits: false,
                })
            })
            .collect()
    }

    fn calibration(&self) -> Option<&crate::calibration::BurnCalibration> {
        Some(&self.calibration)
    }

    fn settings(&self) -> serde_json::Value {
        // Memload's size is the host's free memory when it is not given (it differs from run
        // to run): whether Memload ran is the setting.
        let settings = InteractiveSettings {
            comment: None,
            memload_mb: self.settings.memload_mb.map(|_| 0),
            ..self.settings.clone()
        };
        serde_json::to_value(&settings).unwrap_or_default()
    }

    fn complete(&self) -> bool {
        self.measurements.len() >= self.planned_pairs
    }

    fn pinned(&self) -> bool {
        self.settings.pinned_cpu.is_some()
    }

    fn figures(&self, out: &mut Vec<Figure>) {
        let placement = Placement::of(self.pinned());
        for m in &self.measurements {
            interactive_figures(m, placement, out);
        }
    }
}

/// An interactive pair's figures.
fn interactive_figures(m: &Measurement, placement: Placement, out: &mut Vec<Figure>) {
    let what = format!(
        "{} under {}{}",
        m.bench.name(),
        m.load.name(),
        placement.name_suffix()
    );
    let key = format!(
        "interactive/{}/{}{}",
        m.bench.name(),
        m.load.name(),
        placement.key_suffix()
    );
    // A latency's change smaller than the timer's own lateness is the timer's.
    let resolution = m.timer.as_ref().map(|t| t.mean_oversleep_ns / 1e6);
    // A mean latency's samples: the means of a tenth of the run each.
    let mean = |figure: &str, name: &str, mean_ns: f64, samples_ns: &[u64]| Figure {
        key: format!("{key}/{figure}"),
        suite: "interactive".into(),
        name: format!("{what}: {name}"),
        unit: "ms".into(),
        better: Better::Lower,
        value: mean_ns / 1e6,
        samples: batch_means_ms(samples_ns, LATENCY_BATCHES),
        sample_kind: format!("mean of a tenth of the run ({LATENCY_BATCHES} batches)"),
        resolution,
        of_events: None,
        is_spread: false,
        accounts: m.account.iter().map(|a| (**a).clone()).collect(),
    };
    out.push(mean(
        "latency mean",
        "latency mean",
        m.latency.mean_ns,
        &m.samples_ns,
    ));
    if let Some(w) = &m.wake {
        out.push(mean(
            "wake mean",
            "wake-up latency mean",
            w.mean_ns,
            &m.wake_samples_ns,
        ));
    }
    single_figures(m, &key, &what, resolution, out);
}

/// A pair's p99 latencies and its two percentages, each its one value: a figure with no
/// samples of its own.
fn single_figures(
    m: &Measurement,
    key: &str,
    what: &str,
    resolution: Option<f64>,
    out: &mut Vec<Figure>,
) {
    // A percentage moves by one deadline, or one burn, at the least: 99.2% of 120 deadlines
    // and 100% differ by one missed frame, which is no change of the scheduler's.
    let one_in = |n: u64| (n > 0).then(|| 100.0 / n as f64);
    let c = &m.counts;
    let (deadlines, burns) = (
        c.deadlines_met + c.deadlines_missed,
        c.burns_achieved + c.burns_missed,
    );
    let single = [
        (
            "latency p99",
            "ms",
            Better::Lower,
            Some(m.latency.p99_ns as f64 / 1e6),
            resolution,
            None,
        ),
        (
            "wake p99",
            "ms",
            Better::Lower,
            m.wake.map(|w| w.p99_ns as f64 / 1e6),
            resolution,
            None,
        ),
        (
            "deadlines met",
            "%",
            Better::Higher,
            m.deadlines_met_pct,
            one_in(deadlines),
            Some(deadlines),
        ),
        (
            "desired CPU",
            "%",
            Better::Higher,
            Some(m.desired_cpu_pct),
            one_in(burns),
            Some(burns),
        ),
    ];
    for (figure, unit, better, value, resolution, events) in single {
        if let Some(v) = value {
            out.push(Figure {
                resolution,
                of_events: events.filter(|n| *n > 0),
                ..Figure::derived(
                    format!("{key}/{}", figure.to_lowercase()),
                    "interactive",
                    format!("{what}: {figure}"),
                    unit,
                    better,
                    v,
                )
            });
        }
    }
}

#[cfg(test)]
impl InteractiveSettings {
    /// interbench's settings with nothing selected yet: what tests start from.
    pub fn example() -> InteractiveSettings {
        InteractiveSettings {
            duration_s: 30,
            requested_s: None,
            exact_time: false,
            idle_hold: false,
            burn_threads: 4,
            bench_nice: 0,
            load_nice: 0,
            realtime: false,
            pinned_cpu: None,
            custom: None,
            benches: vec![],
            loads: vec![],
            file_bytes: 1 << 30,
            page_cache: false,
            relative_sleep: false,
            memload_mb: None,
            hack_groups: DEFAULT_HACK_GROUPS,
            settle_ms: 1000,
            comment: None,
            explain: None,
        }
    }
}

#[cfg(test)]
impl InteractiveResult {
    /// A run of interbench's settings at a given `-l`, with no pairs yet: what tests start from.
    pub fn example() -> InteractiveResult {
        InteractiveResult {
            settings: InteractiveSettings::example(),
            calibration: BurnCalibration {
                loops_per_ms: 1_000_000,
                burn_loop: crate::calibration::BurnLoop::Interbench,
                source: crate::calibration::CalibrationSource::Given,
                measurement: None,
                measured_at: None,
                key: String::new(),
                cache_check: None,
                unsure: None,
            },
            calibration_end: None,
            calibration_start: None,
            drift: None,
            timekeeper_realtime: true,
            notes: vec![],
            skipped: vec![],
            planned_pairs: 0,
            measurements: vec![],
            coordinator_cpu_ns: 0,
            wall_ns: 0,
        }
    }
}

#[cfg(test)]
impl Measurement {
    /// A Burn pair of `bench` with the figures of interbench's sample row: what tests start
    /// from.
    pub fn example(bench: Bench) -> Measurement {
        let gaming = bench == Bench::Gaming;
        let wake = LatencySummary {
            count: 300,
            mean_ns: 2_000_000.0,
            sd_ns: 1_000_000.0,
            interbench_sd_ns: None,
            max_ns: 9_000_000,
            p50_ns: 1_000_000,
            p99_ns: 5_000_000,
            p999_ns: 8_000_000,
        };
        Measurement {
            bench,
            load: Load::Burn,
            wall_ns: 1_000_000_000,
            latency: LatencySummary {
                count: 100,
                mean_ns: 27_900_000.0,
                // The SD interbench printed for that row (its formula's).
                sd_ns: 20_000_000.0,
                interbench_sd_ns: Some(28_100_000.0),
                max_ns: 3_335_000_000,
                p50_ns: 1_000_000,
                p99_ns: 250_000_000,
                p999_ns: 3_000_000_000,
            },
            samples_ns: vec![],
            samples_truncated: false,
            wake: (!gaming).then_some(wake),
            wake_samples_ns: vec![],
            from_deadline: None,
            counts: DeadlineCounts {
                periods: 300,
                ..DeadlineCounts::default()
            },
            desired_cpu_pct: 78.5,
            deadlines_met_pct: (bench != Bench::Gaming).then_some(44.0),
            measured_cpu_pct: 39.2,
            asked_cpu_pct: 40.0,
            task_policy: Policy::Other,
            timer: (!gaming).then_some(TimerStats {
                wakeups: 300,
                mean_oversleep_ns: 60_000.0,
                ..Default::default()
            }),
            memory_locked: true,
            load_report: LoadReport::default(),
            explained: None,
            account: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Results of other benches, loads or options never share a kind, so the fleet never
    /// ranges a real-time run's worst pair with a normal one's.
    #[test]
    fn the_kind_names_the_pairs_run_and_each_option_that_changes_the_deadlines() {
        let settings: InteractiveSettings = serde_json::from_value(serde_json::json!({
            "duration_s": 30, "burn_threads": 8, "bench_nice": 0, "load_nice": 0,
            "realtime": false, "pinned_cpu": null, "custom": null, "benches": [], "loads": [],
            "file_bytes": 1, "memload_mb": null, "hack_groups": 1, "settle_ms": 1000,
            "comment": null,
        }))
        .unwrap();
        assert_eq!(
            measured(&settings),
            "the worst of 0 benches × 0 loads, -t 30, -L 8"
        );
        let changed = InteractiveSettings {
            realtime: true,
            pinned_cpu: Some(0),
            bench_nice: 5,
            ..settings.clone()
        };
        assert_eq!(
            measured(&changed),
            "the worst of 0 benches × 0 loads, -t 30, -L 8, -r, -B 5, -u"
        );
    }

    #[test]
    fn the_worst_pair_is_the_fewest_deadlines_met_or_else_gamings_longest_latency() {
        let mut r = InteractiveResult::example();
        let mut video = Measurement::example(Bench::Video);
        video.deadlines_met_pct = Some(90.0);
        let mut audio = Measurement::example(Bench::Audio);
        audio.deadlines_met_pct = Some(99.0);
        let mut gaming = Measurement::example(Bench::Gaming);
        gaming.latency.mean_ns = 1e9;
        r.measurements = vec![audio, gaming.clone(), video];
        assert_eq!(r.worst().map(|m| m.bench), Some(Bench::Video));
        assert_eq!(r.worst_by_deadlines().map(|m| m.bench), Some(Bench::Video));
        // Gaming alone: no deadlines, so the longest mean latency.
        let mut quick = gaming.clone();
        quick.latency.mean_ns = 1e6;
        quick.load = Load::None;
        r.measurements = vec![quick, gaming];
        assert_eq!(r.worst().map(|m| m.load), Some(Load::Burn));
        assert!(r.worst_by_deadlines().is_none());
    }

    #[test]
    fn interbench_sd_is_its_formula_and_is_recovered_for_older_results() {
        // Samples 1, 2, 3, 4: mean 2.5, Σx² 30. interbench: sqrt((30 − 2.5²/4) / 3) = 3.0788;
        // the true SD: sqrt(5/3) = 1.2910.
        assert!((interbench_sd(4, 2.5, 30.0) - 3.078_826).abs() < 1e-6);
        assert_eq!(interbench_sd(1, 7.0, 49.0), 0.0);
        let older = LatencySummary {
            count: 4,
            mean_ns: 2.5,
            sd_ns: (5.0f64 / 3.0).sqrt(),
            interbench_sd_ns: None,
            ..LatencySummary::default()
        };
        assert!((older.interbench_sd() - 3.078_826).abs() < 1e-6);
        let kept = LatencySummary {
            interbench_sd_ns: Some(9.0),
            ..older
        };
        assert_eq!(kept.interbench_sd(), 9.0);
    }

    #[test]
    fn names_parse_case_insensitively() {
        assert_eq!(Bench::parse("audio"), Some(Bench::Audio));
        assert_eq!(Bench::parse("GAMING"), Some(Bench::Gaming));
        assert_eq!(Load::parse("memload"), Some(Load::Memload));
        assert_eq!(Load::parse("nope"), None);
        for b in Bench::ALL {
            assert_eq!(Bench::parse(b.name()), Some(b));
        }
        for l in Load::ALL {
            assert_eq!(Load::parse(l.name()), Some(l));
        }
        assert!(Load::names().starts_with("None, Video, X, Burn"));
    }
}
