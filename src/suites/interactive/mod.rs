//! `interactive`: interbench. Simulated interactive tasks (benches) are measured alone and
//! under background loads. For each bench × load pair the coordinator starts a load worker
//! process, waits for it to run, starts a bench worker process, lets both run `-t` seconds and
//! collects the bench's figures. See docs/interactive.md for the method.

pub mod benches;
mod config;
pub mod deadline;
mod run;
pub mod sim;
pub mod worker;

pub use config::{HostLimits, InteractiveConfig, InteractiveSettings, Selection};
pub use run::{plan, run, InteractiveObserver, InteractiveOutcome, Plan, SkippedLoad};

use serde::{Deserialize, Serialize};

use crate::calibration::{BurnCalibration, RateMeasurement};
use crate::loads::LoadReport;
use crate::platform::sched::Policy;
use benches::{Bench, Load};
use deadline::DeadlineCounts;
use sim::{LatencySummary, TimerStats};

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
    pub notes: Vec<String>,
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
            .filter(|m| m.deadlines_met_pct.is_some())
            .min_by(|a, b| {
                a.deadlines_met_pct
                    .partial_cmp(&b.deadlines_met_pct)
                    .unwrap_or(std::cmp::Ordering::Equal)
            })
    }

    pub fn headline(&self) -> String {
        match self.worst_by_deadlines() {
            Some(m) => format!(
                "{} pair{}; worst {} under {}: {:.1}% deadlines met, {:.1}% desired CPU",
                self.measurements.len(),
                if self.measurements.len() == 1 {
                    ""
                } else {
                    "s"
                },
                m.bench.name(),
                m.load.name(),
                m.deadlines_met_pct.unwrap_or(0.0),
                m.desired_cpu_pct
            ),
            None => format!("{} pair(s), none with deadlines", self.measurements.len()),
        }
    }
}
