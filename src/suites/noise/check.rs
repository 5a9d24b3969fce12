//! The noise check every measuring command makes around its work (unless `--no-noise-check`):
//! a short p1bench — the CPU spin loop, sized to [`JOB_MS`], timed [`RUNS`] times — before the
//! suite starts, and the same job (the same iteration count) timed again when it ends. The
//! first pass says how noisy the host was (its spread, as the noise suite computes it); the
//! second says whether the CPU's speed drifted while the suite ran. Both are stored with the
//! result, so `compare` can weigh every result's own noise and drift.

use std::sync::atomic::{AtomicBool, Ordering};

use chrono::Utc;

use super::Workload;
use crate::calibration::{burn_loops, measure_rate, RateBudget};
use crate::model::noise::{summarize, CheckPass, Drift, NoiseCheck, NoiseRun};
use crate::platform::clock::monotonic_ns;
use crate::stats::log_ratio_test;

/// The job's length: long enough that timer and cache effects are small, short enough that
/// [`RUNS`] of them take a fifth of a second.
pub const JOB_MS: u64 = 10;
/// Runs a pass: ten or more give the 90th percentile, the spread the noise suite reports for a
/// short run.
pub const RUNS: usize = 20;
/// The smallest change of the job's time that is called a drift, percent, when the change is
/// also significant and larger than both passes' own spreads: below it a drift is too small to
/// move a verdict.
pub const DRIFT_MIN_PCT: f64 = 2.0;

impl NoiseCheck {
    /// Sizes the job to [`JOB_MS`] and times the first pass. None when `stop` was set.
    pub fn before(stop: &AtomicBool) -> Option<NoiseCheck> {
        // The loop's speed in this thread's CPU time, as the calibration measures it: 30 ms.
        let budget = RateBudget {
            chunk_ms: 2.0,
            budget_ms: 30.0,
            min_samples: 5,
            max_samples: 15,
            rest_ms: 0.0,
        };
        let rate = measure_rate(&mut burn_loops, budget);
        let iterations = ((rate.per_ms * JOB_MS as f64) as u64).max(1);
        let before = pass(iterations, stop)?;
        Some(NoiseCheck {
            job_ms: JOB_MS,
            iterations,
            before,
            after: None,
            drift: None,
        })
    }

    /// Times the second pass and judges the drift. Leaves the check as it was when `stop` is
    /// set.
    pub fn finish(&mut self, stop: &AtomicBool) {
        let Some(after) = pass(self.iterations, stop) else {
            return;
        };
        self.drift = drift(&self.before, &after);
        self.after = Some(after);
    }

    /// The host's noise for `compare`: the first pass's spread.
    pub fn spread_pct(&self) -> f64 {
        self.before.spread_pct
    }

    /// The drift, percent, when it is large enough to be called one.
    pub fn drifted_pct(&self) -> Option<f64> {
        self.drift.filter(|d| d.drifted).map(|d| d.change_pct)
    }
}

/// The second pass against the first: Welch's test on the logarithms of their run times (the
/// test `compare` uses), whose interval is the ratio's. Significance alone is not enough: a
/// pass's runs are not independent (a busy stretch slows several in a row), and on this
/// project's VM 10 of 100 back-to-back checks came out significant and over 2%. A drift must
/// also exceed the spread of both passes: 0 of the same 100, and 0 of another 100 (docs/run.md
/// has the rates and how often it finds a 5% or 10% drift).
fn drift(before: &CheckPass, after: &CheckPass) -> Option<Drift> {
    let as_f64 = |p: &CheckPass| p.times_ns.iter().map(|&t| t as f64).collect::<Vec<_>>();
    log_ratio_test(&as_f64(before), &as_f64(after)).map(|t| {
        let change_pct = (t.ratio - 1.0) * 100.0;
        Drift {
            change_pct,
            ci_pct: [(t.ci_low - 1.0) * 100.0, (t.ci_high - 1.0) * 100.0],
            drifted: t.significant()
                && change_pct.abs() > DRIFT_MIN_PCT.max(before.spread_pct).max(after.spread_pct),
        }
    })
}

/// Times [`RUNS`] runs of the spin loop. None when `stop` is set before they are done.
fn pass(iterations: u64, stop: &AtomicBool) -> Option<CheckPass> {
    let at = Utc::now();
    let mut times_ns = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        if stop.load(Ordering::Relaxed) {
            return None;
        }
        let start = monotonic_ns();
        Workload::Burn.run(iterations);
        times_ns.push(monotonic_ns() - start);
    }
    let runs: Vec<NoiseRun> = times_ns
        .iter()
        .map(|&time_ns| NoiseRun {
            time_ns,
            ..NoiseRun::default()
        })
        .collect();
    let summary = summarize(&runs, iterations)?;
    Some(CheckPass {
        at,
        times_ns,
        median_ns: summary.median_ns,
        spread_pct: summary.verdict.spread_pct,
        cv_pct: summary.cv_pct,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_job_is_sized_and_both_passes_time_the_same_count() {
        let stop = AtomicBool::new(false);
        let mut check = NoiseCheck::before(&stop).unwrap();
        assert_eq!(check.before.times_ns.len(), RUNS);
        // Sized in CPU time to 10 ms: on a shared host a run takes at least about that.
        let median_ms = check.before.median_ns as f64 / 1e6;
        assert!(median_ms > 3.0 && median_ms < 200.0, "{median_ms} ms");
        assert!(check.before.spread_pct >= 0.0);
        check.finish(&stop);
        let after = check.after.as_ref().unwrap();
        assert_eq!(after.times_ns.len(), RUNS);
        let d = check.drift.unwrap();
        assert!(d.ci_pct[0] <= d.change_pct && d.change_pct <= d.ci_pct[1]);
    }

    #[test]
    fn a_stop_leaves_no_pass() {
        let stop = AtomicBool::new(true);
        assert!(NoiseCheck::before(&stop).is_none());
    }

    #[test]
    fn a_slower_second_pass_is_a_drift_and_a_like_one_is_not() {
        let pass_of = |times: Vec<u64>| CheckPass {
            at: Utc::now(),
            median_ns: times[times.len() / 2],
            times_ns: times,
            spread_pct: 1.0,
            cv_pct: 1.0,
        };
        let base: Vec<u64> = (0..20).map(|i| 10_000_000 + (i % 5) * 20_000).collect();
        let judge = |after: Vec<u64>| drift(&pass_of(base.clone()), &pass_of(after)).unwrap();
        // 8% slower at the end: a drift. The same times: none. 1% slower: real but too small.
        let d = judge(base.iter().map(|t| t * 108 / 100).collect());
        assert!(d.drifted && (d.change_pct - 8.0).abs() < 0.5, "{d:?}");
        assert!(!judge(base.clone()).drifted);
        let d = judge(base.iter().map(|t| t * 101 / 100).collect());
        assert!(!d.drifted && d.ci_pct[0] > 0.0, "{d:?}");
        // 4% slower, real, but within a first pass that spread by 5%: no drift.
        let noisy = CheckPass {
            spread_pct: 5.0,
            ..pass_of(base.clone())
        };
        let slower = pass_of(base.iter().map(|t| t * 104 / 100).collect());
        let d = drift(&noisy, &slower).unwrap();
        assert!(!d.drifted && d.ci_pct[0] > 0.0, "{d:?}");
        let check = NoiseCheck {
            job_ms: JOB_MS,
            iterations: 1,
            before: pass_of(base.clone()),
            after: Some(pass_of(base.clone())),
            drift: Some(Drift {
                change_pct: 8.0,
                ci_pct: [6.0, 10.0],
                drifted: true,
            }),
        };
        assert_eq!(check.drifted_pct(), Some(8.0));
    }
}
