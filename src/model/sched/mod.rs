//! The sched suite's result (reflex): the settings, and every (threads, active sets) point with
//! its runs and what they add up to.

pub mod confidence;

use serde::{Deserialize, Serialize};

pub use confidence::{ConfidenceRule, Verdict};

pub use super::order::Order;

use super::figures::{Better, Figure, Placement};
use super::headline::{self, Column, Figure as HeadlineFigure, AT_LEAST_ZERO};
use super::{implausible_ns, SuiteData, SuiteResult};
use crate::calibration::BurnCalibration;
use crate::stats::{confidence_interval_95, Interval, Summary};

/// reflex's defaults, which `sched` and `run`'s sched part start from: `-w` (% of rounds that hand
/// the token on), `-r` (µs of computing a round), `-c` (threads), `-a` (active sets).
pub const DEFAULT_WEIGHT: u32 = 90;
pub const DEFAULT_COMPUTE_US: u64 = 1;
pub const DEFAULT_THREADS: usize = 80;
pub const DEFAULT_ACTIVE: usize = 40;
/// hostbench's: runs repeat until the 95% confidence interval is within this % of the mean.
pub const DEFAULT_CI_PCT: f64 = 5.0;

/// The settings of a sched run, as stored with its result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SchedSettings {
    /// `-w`: % chance that a round hands the token on rather than yielding.
    pub handoff_weight: u32,
    /// `-r`: compute time of a round, µs.
    pub compute_us: u64,
    /// `-t`: seconds per run.
    pub duration_s: u64,
    pub rule: ConfidenceRule,
    /// `--pin`: each active set on one CPU.
    pub pin: bool,
    /// The (threads, active sets) points: one, or a sweep.
    pub points: Vec<(usize, usize)>,
    /// `--order`: each point's runs in turn (reflex's), or in rounds.
    #[serde(default, skip_serializing_if = "Order::is_blocks")]
    pub order: Order,
}

/// One (threads, active sets) point: its runs and what they add up to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SchedPoint {
    pub threads: usize,
    pub active_sets: usize,
    pub runs: Vec<SchedRun>,
    pub mean_us_per_round: f64,
    pub sd_us_per_round: f64,
    pub ci95: Option<Interval>,
    /// None when the point was interrupted.
    pub verdict: Option<Verdict>,
}

impl SchedPoint {
    pub fn of(
        threads: usize,
        active_sets: usize,
        runs: Vec<SchedRun>,
        verdict: Option<Verdict>,
    ) -> Self {
        let values: Vec<f64> = runs.iter().map(|r| r.us_per_round).collect();
        let summary = Summary::of(&values);
        SchedPoint {
            threads,
            active_sets,
            mean_us_per_round: summary.map_or(0.0, |s| s.mean),
            sd_us_per_round: summary.map_or(0.0, |s| s.sd),
            ci95: summary.as_ref().and_then(confidence_interval_95),
            verdict,
            runs,
        }
    }
}

/// A sched result: every point of the run or sweep.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SchedResult {
    pub settings: SchedSettings,
    pub calibration: BurnCalibration,
    pub points: Vec<SchedPoint>,
}

/// What one run did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SchedRun {
    pub wall_ns: u64,
    pub total_rounds: u64,
    /// Wall-clock µs / total rounds: reflex's metric (lower is better).
    pub us_per_round: f64,
    pub rounds_per_thread: Vec<u64>,
    pub yields: u64,
    pub handoffs: u64,
    pub voluntary_csw: u64,
    pub involuntary_csw: u64,
    /// The most threads of one set seen holding its token at once: 1 when every set has
    /// exactly one token (a thread holds it from reading it until just before handing it on),
    /// so at most two threads of a set are ever holding or passing it.
    pub max_token_holders: u32,
    /// The host's account of the run's threads from the start to the stop; None in results
    /// stored before hostbench kept one, and with `HOSTBENCH_NO_ACCOUNT`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub account: Option<Box<super::account::Account>>,
}

/// The fleet's column of reflex's cost: microseconds per round at the point with the fewest
/// threads (free before pinned).
pub const PER_ROUND: Column = Column {
    key: "sched",
    name: "sched",
    unit: "us/round",
    bounds: AT_LEAST_ZERO,
    better: Better::Lower,
    is_spread: false,
    of: |r| {
        let results = headline::each(r, |s| match s {
            SuiteResult::Sched(s) => Some(s),
            _ => None,
        });
        let (pin, p) = results
            .flat_map(|s| s.points.iter().map(move |p| (s.settings.pin, p)))
            .filter(|(_, p)| !p.runs.is_empty())
            .min_by_key(|(pin, p)| (*pin, p.threads, p.active_sets))?;
        let what = format!(
            "c={} a={}{}",
            p.threads,
            p.active_sets,
            if pin { " pinned" } else { "" }
        );
        Some(HeadlineFigure {
            value: p.mean_us_per_round,
            kind: what.clone().into(),
            note: what.into(),
        })
    },
};

impl SuiteData for SchedResult {
    fn name(&self) -> &'static str {
        "sched"
    }

    fn stretches(&self) -> Vec<super::account::Stretches<'_>> {
        let pinned = if self.settings.pin { ", pinned" } else { "" };
        self.points
            .iter()
            .map(|p| super::account::Stretches {
                what: format!(
                    "{} threads, {} active sets{pinned}",
                    p.threads, p.active_sets
                ),
                accounts: p.runs.iter().filter_map(|r| r.account.as_deref()).collect(),
                // The threads wait for each other's tokens and for the CPUs by design.
                own_waits: true,
            })
            .filter(|s| !s.accounts.is_empty())
            .collect()
    }

    fn calibration(&self) -> Option<&crate::calibration::BurnCalibration> {
        Some(&self.calibration)
    }

    fn settings(&self) -> serde_json::Value {
        serde_json::to_value(&self.settings).unwrap_or_default()
    }

    /// Every point measured until its rule stopped it (a point a stop cut short has none).
    fn complete(&self) -> bool {
        self.points.len() >= self.settings.points.len()
            && self.points.iter().all(|p| p.verdict.is_some())
    }

    fn implausible(&self) -> Option<String> {
        for p in &self.points {
            for (i, r) in p.runs.iter().enumerate() {
                let rate_ok =
                    r.total_rounds == 0 || (r.us_per_round.is_finite() && r.us_per_round > 0.0);
                if implausible_ns(r.wall_ns) || !rate_ok {
                    return Some(format!(
                        "sched run {} at {} threads took {} ns for {} us/round",
                        i + 1,
                        p.threads,
                        r.wall_ns,
                        r.us_per_round
                    ));
                }
            }
        }
        None
    }

    fn pinned(&self) -> bool {
        self.settings.pin
    }

    fn figures(&self, out: &mut Vec<Figure>) {
        let placement = Placement::of(self.pinned());
        for p in &self.points {
            if p.runs.is_empty() {
                continue;
            }
            out.push(Figure {
                key: format!(
                    "sched/{} threads {} sets{}/us per round",
                    p.threads,
                    p.active_sets,
                    placement.key_suffix()
                ),
                suite: "sched".into(),
                name: format!(
                    "sched: {} threads in {} active sets{}",
                    p.threads,
                    p.active_sets,
                    placement.name_suffix()
                ),
                unit: "us/round".into(),
                better: Better::Lower,
                value: p.mean_us_per_round,
                samples: p.runs.iter().map(|r| r.us_per_round).collect(),
                sample_kind: "run".into(),
                resolution: None,
                of_events: None,
                is_spread: false,
                // Each run's account, where every run has one.
                accounts: p
                    .runs
                    .iter()
                    .map(|r| r.account.as_deref().cloned())
                    .collect::<Option<Vec<_>>>()
                    .unwrap_or_default(),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calibration::{BurnLoop, CalibrationSource};

    fn run(us: f64) -> SchedRun {
        SchedRun {
            wall_ns: 1_000_000_000,
            total_rounds: 1000,
            us_per_round: us,
            rounds_per_thread: vec![500, 500],
            yields: 100,
            handoffs: 900,
            voluntary_csw: 900,
            involuntary_csw: 0,
            max_token_holders: 1,
            account: None,
        }
    }

    /// A result is complete only when every planned point ran until its rule stopped it: a
    /// sweep in rounds that a stop cut short has every point, none with a verdict.
    #[test]
    fn a_point_without_a_verdict_leaves_the_result_incomplete() {
        let rule = ConfidenceRule {
            target_pct: 5.0,
            min_runs: 2,
            max_runs: 2,
        };
        let mut r = SchedResult {
            settings: SchedSettings {
                handoff_weight: 90,
                compute_us: 1,
                duration_s: 1,
                rule,
                pin: false,
                points: vec![(2, 1), (4, 2)],
                order: Order::Rounds,
            },
            calibration: BurnCalibration {
                loops_per_ms: 1000,
                burn_loop: BurnLoop::Chain,
                source: CalibrationSource::Given,
                measurement: None,
                measured_at: None,
                key: String::new(),
                cache_check: None,
                unsure: None,
            },
            points: vec![
                SchedPoint::of(2, 1, vec![run(5.0), run(5.1)], Some(Verdict::MaxRuns)),
                SchedPoint::of(4, 2, vec![run(6.0), run(6.1)], Some(Verdict::MaxRuns)),
            ],
        };
        assert!(r.complete());
        r.points[1].verdict = None;
        assert!(!r.complete());
        r.points.pop();
        assert!(!r.complete());
    }
}
