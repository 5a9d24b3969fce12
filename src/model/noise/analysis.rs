//! Turns the raw run times into p1bench's figures and hostbench's verdict. Pure: it can be
//! recomputed from a stored result at any time.

use serde::{Deserialize, Serialize};

use super::bins::{self, Bin};
use super::NoiseRun;
use crate::stats::{confidence_interval_95, percentile_p1bench, Interval, Summary};

/// A percentile of the run times, as time and as "% slower than the fastest".
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PercentilePoint {
    pub percentile: f64,
    pub time_ns: u64,
    pub slower_pct: f64,
}

/// The figures of a noise result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NoiseSummary {
    pub runs: usize,
    pub fastest_ns: u64,
    /// p1bench's 50th percentile (`sorted[n * 50 / 100 - 1]`), which its report calls "50th".
    pub median_ns: u64,
    pub mean_ns: f64,
    pub slowest_ns: u64,
    pub sd_ns: f64,
    pub cv_pct: f64,
    /// 95% confidence interval of the mean run time (None below two runs).
    pub mean_ci95_ns: Option<Interval>,
    /// p1bench's percentiles: the 50th from 3 runs, 90th from 10, 99th from 100, the 100th always.
    pub percentiles: Vec<PercentilePoint>,
    pub histogram: Vec<Bin>,
    /// Iterations per second at the fastest, median, mean and slowest run time.
    pub rate_fastest: f64,
    pub rate_median: f64,
    pub rate_mean: f64,
    pub rate_slowest: f64,
    pub verdict: Verdict,
}

/// How noisy the host is for a job of this length: the highest trustworthy percentile of "%
/// slower than the fastest" is the size of a difference that noise alone produces.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    pub percentile: f64,
    pub spread_pct: f64,
    pub level: NoiseLevel,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NoiseLevel {
    /// Under 1%: fine for micro-benchmarks.
    Quiet,
    /// 1% to 5%: differences of a few percent are not to be trusted.
    Moderate,
    /// Over 5%: find another host for fine comparisons.
    Noisy,
}

impl NoiseLevel {
    fn of(spread_pct: f64) -> Self {
        if spread_pct < 1.0 {
            NoiseLevel::Quiet
        } else if spread_pct <= 5.0 {
            NoiseLevel::Moderate
        } else {
            NoiseLevel::Noisy
        }
    }
}

/// The runs needed before p1bench prints each percentile.
const PERCENTILES: [(u32, usize); 4] = [(50, 3), (90, 10), (99, 100), (100, 1)];

/// None when there are no runs.
pub fn summarize(runs: &[NoiseRun], iterations: u64) -> Option<NoiseSummary> {
    let mut times: Vec<u64> = runs.iter().map(|r| r.time_ns).collect();
    times.sort_unstable();
    let fastest = *times.first()?;
    let slowest = *times.last()?;
    let slower = |t: u64| 100.0 * (t as f64 / fastest as f64 - 1.0);

    let as_f64: Vec<f64> = times.iter().map(|&t| t as f64).collect();
    let summary = Summary::of(&as_f64)?;
    let median = percentile_p1bench(&times, 50)?;
    let percentiles: Vec<PercentilePoint> = PERCENTILES
        .iter()
        .filter(|(_, min_runs)| times.len() >= *min_runs)
        .filter_map(|&(p, _)| {
            let t = percentile_p1bench(&times, p)?;
            Some(PercentilePoint {
                percentile: f64::from(p),
                time_ns: t,
                slower_pct: slower(t),
            })
        })
        .collect();
    let slower_pcts: Vec<f64> = times.iter().map(|&t| slower(t)).collect();
    // The verdict uses the 99th (or, with fewer than 100 runs, the 90th) percentile, so a
    // single preempted run does not define the host; below 10 runs only the maximum is left.
    let basis = percentiles
        .iter()
        .rev()
        .find(|p| p.percentile == 99.0 || p.percentile == 90.0)
        .or(percentiles.last())
        .copied()?;
    let rate = |t: f64| iterations as f64 * 1e9 / t;
    Some(NoiseSummary {
        runs: times.len(),
        fastest_ns: fastest,
        median_ns: median,
        mean_ns: summary.mean,
        slowest_ns: slowest,
        sd_ns: summary.sd,
        cv_pct: summary.cv_pct(),
        mean_ci95_ns: confidence_interval_95(&summary),
        percentiles,
        histogram: bins::histogram(&slower_pcts),
        rate_fastest: rate(fastest as f64),
        rate_median: rate(median as f64),
        rate_mean: rate(summary.mean),
        rate_slowest: rate(slowest as f64),
        verdict: Verdict {
            percentile: basis.percentile,
            spread_pct: basis.slower_pct,
            level: NoiseLevel::of(basis.slower_pct),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runs(times_ms: &[f64]) -> Vec<NoiseRun> {
        times_ms
            .iter()
            .map(|&ms| NoiseRun {
                time_ns: (ms * 1e6) as u64,
                ..NoiseRun::default()
            })
            .collect()
    }

    #[test]
    fn figures_of_hand_made_runs() {
        // 100 runs: 100.0, 100.1, ..., 109.9 ms.
        let times: Vec<f64> = (0..100).map(|i| 100.0 + i as f64 / 10.0).collect();
        let s = summarize(&runs(&times), 1_000_000).unwrap();
        assert_eq!(s.runs, 100);
        assert_eq!(s.fastest_ns, 100_000_000);
        assert_eq!(s.slowest_ns, 109_900_000);
        assert_eq!(s.median_ns, 104_900_000);
        let ps: Vec<f64> = s.percentiles.iter().map(|p| p.percentile).collect();
        assert_eq!(ps, vec![50.0, 90.0, 99.0, 100.0]);
        assert!((s.percentiles[2].slower_pct - 9.8).abs() < 1e-6);
        assert!((s.mean_ns - 104_950_000.0).abs() < 1.0);
        // Rate at the fastest run: 1e6 iterations in 0.1 s.
        assert!((s.rate_fastest - 1e7).abs() < 1e-3);
        assert!(s.rate_fastest > s.rate_median && s.rate_median > s.rate_slowest);
        assert_eq!(s.verdict.percentile, 99.0);
        assert_eq!(s.verdict.level, NoiseLevel::Noisy);
        assert_eq!(s.histogram.iter().map(|b| b.count).sum::<usize>(), 100);
        let ci = s.mean_ci95_ns.unwrap();
        assert!(ci.low < s.mean_ns && s.mean_ns < ci.high);
    }

    #[test]
    fn percentiles_need_enough_runs() {
        let s = summarize(&runs(&[10.0, 10.1]), 1).unwrap();
        assert_eq!(s.percentiles.len(), 1);
        assert_eq!(s.percentiles[0].percentile, 100.0);
        assert_eq!(s.verdict.percentile, 100.0);
        let s = summarize(&runs(&[10.0; 10]), 1).unwrap();
        let ps: Vec<f64> = s.percentiles.iter().map(|p| p.percentile).collect();
        assert_eq!(ps, vec![50.0, 90.0, 100.0]);
        assert_eq!(s.verdict.level, NoiseLevel::Quiet);
        // Three runs: p1bench's 50th is sorted[3 * 50 / 100 - 1], the fastest.
        let s = summarize(&runs(&[12.0, 10.0, 11.0]), 1).unwrap();
        assert_eq!(s.percentiles[0].percentile, 50.0);
        assert_eq!(s.percentiles[0].time_ns, 10_000_000);
        assert_eq!(s.median_ns, 10_000_000);
        assert!(summarize(&[], 1).is_none());
    }
}
