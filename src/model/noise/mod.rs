//! The noise suite's result (p1bench): the settings, the calibration, every run, and the
//! figures derived from them (`analysis`, recomputable from the runs); and the noise check every
//! measuring command stores with its result.

pub mod analysis;
pub mod bins;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

pub use analysis::{summarize, NoiseLevel, NoiseSummary, PercentilePoint, Verdict};

use super::figures::{Better, Figure};
use super::headline::{self, Column, Figure as HeadlineFigure, AT_LEAST_ZERO};
use super::{implausible_ns, SuiteData, SuiteResult};
use crate::calibration::{BurnCalibration, P1benchCalibration, RateMeasurement, TargetCalibration};

/// The job: p1bench's CPU spin loop, or (`-m`) its memory read loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum NoiseMode {
    Cpu,
    Memory { working_set_mb: u64 },
}

/// Settings of a noise run, as stored with its result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct NoiseSettings {
    pub mode: NoiseMode,
    pub target_ms: u64,
    pub runs_requested: u64,
}

/// One timed run of the fixed job.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NoiseRun {
    pub time_ns: u64,
    pub user_ns: u64,
    pub sys_ns: u64,
    pub voluntary_csw: u64,
    pub involuntary_csw: u64,
    /// The host's account of the run (its CPU's time, the run's waits, faults and moves); None
    /// in results stored before hostbench kept one, and with `HOSTBENCH_NO_ACCOUNT`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub account: Option<Box<super::account::Account>>,
}

/// How the iteration count of each run was chosen.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NoiseCalibration {
    /// Iterations per run (spin loops, or cache lines read).
    pub iterations: u64,
    /// The shared burn loop's speed, the starting point in CPU mode (results stored before
    /// the noise suite ran p1bench's own spin loop).
    pub burn: Option<BurnCalibration>,
    /// The memory loop's speed, the starting point in memory mode (likewise).
    pub memory_rate: Option<RateMeasurement>,
    /// The tuning at the target length; None when `-l` fixed the count. (Results stored
    /// before p1bench's own rule; newer ones have `p1bench`.)
    pub target: Option<TargetCalibration>,
    /// p1bench's calibration (`find_count`); None when `-l` fixed the count, and in results
    /// stored before hostbench followed it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p1bench: Option<P1benchCalibration>,
}

/// A noise result: settings, calibration, every run, and the figures derived from them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NoiseResult {
    pub settings: NoiseSettings,
    pub calibration: Option<NoiseCalibration>,
    pub runs: Vec<NoiseRun>,
    pub summary: Option<NoiseSummary>,
}

/// One pass of the check: the run times and what they say.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckPass {
    pub at: DateTime<Utc>,
    pub times_ns: Vec<u64>,
    pub median_ns: u64,
    /// The noise suite's verdict on these runs: how much slower than the fastest the 90th
    /// percentile run was, percent.
    pub spread_pct: f64,
    pub cv_pct: f64,
}

/// How much slower (positive) or faster the job ran at the end than at the start.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Drift {
    /// Change of the job's time, end over start, percent (of the geometric means).
    pub change_pct: f64,
    /// Its 95% interval, percent.
    pub ci_pct: [f64; 2],
    /// Significant, and larger than [`DRIFT_MIN_PCT`] and than either pass's spread: the host's
    /// speed changed during the run by more than its noise.
    pub drifted: bool,
}

/// The check's record, stored with the result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NoiseCheck {
    pub job_ms: u64,
    /// Spin loops a run, the same in both passes.
    pub iterations: u64,
    pub before: CheckPass,
    /// None when the run was stopped before the end.
    pub after: Option<CheckPass>,
    pub drift: Option<Drift>,
}

/// A noise part's fixed job, as its figures name it: `cpu 10 ms`, `memory 64 MB 10 ms`.
pub fn noise_job(settings: &NoiseSettings) -> String {
    match settings.mode {
        NoiseMode::Cpu => format!("cpu {} ms", settings.target_ms),
        NoiseMode::Memory { working_set_mb } => {
            format!("memory {working_set_mb} MB {} ms", settings.target_ms)
        }
    }
}

/// The fleet's column of p1bench's spread: the noise part's, else the run's noise check's.
pub const SPREAD: Column = Column {
    key: "noise",
    name: "noise",
    unit: "% spread",
    bounds: AT_LEAST_ZERO,
    better: Better::Lower,
    is_spread: true,
    of: |r| {
        let part = headline::each(r, |s| match s {
            SuiteResult::Noise(n) => Some(n),
            _ => None,
        })
        .find_map(|n| n.summary.as_ref().map(|sum| (n, sum)));
        match part {
            Some((n, sum)) => {
                let job = noise_job(&n.settings);
                Some(HeadlineFigure {
                    value: sum.verdict.spread_pct,
                    note: format!(
                        "p{} of {job}, {:?}",
                        sum.verdict.percentile, sum.verdict.level
                    )
                    .to_lowercase()
                    .into(),
                    kind: job.into(),
                })
            }
            None => r.noise_check.as_ref().map(|c| HeadlineFigure {
                value: c.spread_pct(),
                kind: "noise check".into(),
                note: "the noise check".into(),
            }),
        }
    },
};

impl SuiteData for NoiseResult {
    fn name(&self) -> &'static str {
        "noise"
    }

    fn settings(&self) -> serde_json::Value {
        serde_json::to_value(self.settings).unwrap_or_default()
    }

    fn complete(&self) -> bool {
        self.runs.len() as u64 >= self.settings.runs_requested
    }

    fn stretches(&self) -> Vec<super::account::Stretches<'_>> {
        let accounts: Vec<_> = self
            .runs
            .iter()
            .filter_map(|r| r.account.as_deref())
            .collect();
        if accounts.is_empty() {
            return Vec::new();
        }
        vec![super::account::Stretches {
            what: format!("{} runs", noise_job(&self.settings)),
            accounts,
            own_waits: false,
        }]
    }

    fn implausible(&self) -> Option<String> {
        let (i, r) = self
            .runs
            .iter()
            .enumerate()
            .find(|(_, r)| implausible_ns(r.time_ns))?;
        Some(format!("noise run {} took {} ns", i + 1, r.time_ns))
    }

    fn figures(&self, out: &mut Vec<Figure>) {
        let job = noise_job(&self.settings);
        let samples: Vec<f64> = self.runs.iter().map(|r| r.time_ns as f64 / 1e6).collect();
        if let Some(s) = &self.summary {
            // Each run's account, where every run has one: the run time's and the
            // percentiles', which all the runs make.
            let accounts: Vec<_> = self
                .runs
                .iter()
                .map(|r| r.account.as_deref().cloned())
                .collect::<Option<Vec<_>>>()
                .unwrap_or_default();
            out.push(Figure {
                key: format!("noise/{job}/run time"),
                suite: "noise".into(),
                name: format!("noise: run time of the {job} job"),
                unit: "ms".into(),
                better: Better::Lower,
                value: s.mean_ns / 1e6,
                samples,
                sample_kind: "run".into(),
                resolution: None,
                of_events: None,
                is_spread: false,
                accounts: accounts.clone(),
            });
            // p1bench's output, its perturbation: each percentile it prints, as % slower than
            // the fastest run (a noisier host has larger ones).
            for p in &s.percentiles {
                // p1bench's percentile is sorted[n * p / 100 - 1]: where that is the fastest
                // run itself (the 50th of three runs) it is no measurement of the spread.
                if (s.runs as f64 * p.percentile / 100.0) < 2.0 {
                    continue;
                }
                let which = if p.percentile >= 100.0 {
                    "max".to_string()
                } else {
                    format!("p{}", p.percentile)
                };
                out.push(Figure {
                    is_spread: true,
                    accounts: accounts.clone(),
                    ..Figure::derived(
                        format!("noise/{job}/{which} slower"),
                        "noise",
                        format!("noise: {which} run, % slower than the fastest, {job} job"),
                        "%",
                        Better::Lower,
                        p.slower_pct,
                    )
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(times_ms: &[u64]) -> NoiseResult {
        let runs: Vec<NoiseRun> = times_ms
            .iter()
            .map(|&ms| NoiseRun {
                time_ns: ms * 1_000_000,
                ..NoiseRun::default()
            })
            .collect();
        NoiseResult {
            settings: NoiseSettings {
                mode: NoiseMode::Cpu,
                target_ms: 10,
                runs_requested: runs.len() as u64,
            },
            calibration: None,
            summary: summarize(&runs, 1000),
            runs,
        }
    }

    #[test]
    fn the_percentiles_p1bench_prints_are_figures_beside_the_run_time() {
        let r = result(&[100, 101, 102, 103, 104, 105, 106, 107, 110, 150]);
        let mut figures = Vec::new();
        r.figures(&mut figures);
        let keys: Vec<&str> = figures.iter().map(|f| f.key.as_str()).collect();
        // Ten runs: p1bench prints the 50th, the 90th and the maximum, not the 99th.
        assert_eq!(
            keys,
            [
                "noise/cpu 10 ms/run time",
                "noise/cpu 10 ms/p50 slower",
                "noise/cpu 10 ms/p90 slower",
                "noise/cpu 10 ms/max slower",
            ]
        );
        let value = |k: &str| figures.iter().find(|f| f.key.ends_with(k)).unwrap();
        // p1bench's 50th is sorted[n * 50 / 100 - 1], the 5th of 10: 104 ms, 4% slower.
        assert!((value("p50 slower").value - 4.0).abs() < 1e-9);
        assert!((value("p90 slower").value - 10.0).abs() < 1e-9);
        assert!((value("max slower").value - 50.0).abs() < 1e-9);
        let max = value("max slower");
        assert_eq!((max.unit.as_str(), max.better), ("%", Better::Lower));
        assert!(max.samples.is_empty() && max.is_spread);
        assert!(!value("run time").is_spread);
        // Three runs: p1bench's 50th is the fastest run itself, no figure; the maximum is.
        let mut three = Vec::new();
        result(&[100, 101, 120]).figures(&mut three);
        let keys: Vec<&str> = three.iter().map(|f| f.key.as_str()).collect();
        assert_eq!(
            keys,
            ["noise/cpu 10 ms/run time", "noise/cpu 10 ms/max slower"]
        );
        // With the runs' accounts, every figure carries all of them: the percentiles are made
        // by all the runs, so compare tests their accounts beside a percentile that changed.
        let mut accounted = result(&[100, 101, 102, 103, 104, 105, 106, 107, 110, 150]);
        let account: crate::model::account::Account = serde_json::from_str(
            r#"{"wall_ns":1,"cpus":[0],"ticks":0,"user_pct":0,"system_pct":0,"irq_pct":0,
            "softirq_pct":0,"steal_pct":0,"iowait_pct":0,"idle_pct":0,"run_ns":0,"wait_ns":0,
            "slices":0,"voluntary":0,"involuntary":0,"minor_faults":0,"major_faults":3}"#,
        )
        .unwrap();
        accounted
            .runs
            .iter_mut()
            .for_each(|r| r.account = Some(Box::new(account.clone())));
        let mut figures = Vec::new();
        accounted.figures(&mut figures);
        assert!(
            figures.iter().all(|f| f.accounts.len() == 10),
            "{figures:?}"
        );
    }
}
