//! When to stop repeating runs: reflex repeated its runs "till the primary metric reaches a 95%
//! confidence level" without saying how tight. hostbench's rule: after at least `min_runs`, stop
//! once the half-width of the 95% confidence interval of the mean µs/round (Student t) is
//! within `target_pct` of the mean; otherwise stop at `max_runs` and say the target was missed.

use serde::{Deserialize, Serialize};

use crate::stats::{confidence_interval_95, Summary};

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ConfidenceRule {
    pub target_pct: f64,
    pub min_runs: usize,
    pub max_runs: usize,
}

/// Why the runs stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The confidence interval is within the target.
    TargetMet,
    /// `max_runs` were done and the interval is still wider than the target.
    MaxRuns,
}

impl ConfidenceRule {
    /// None to go on; Some(verdict) to stop after these samples.
    pub fn check(&self, samples: &[f64]) -> Option<Verdict> {
        let n = samples.len();
        if n >= self.min_runs.max(2) {
            if let Some(ci) = Summary::of(samples)
                .as_ref()
                .and_then(confidence_interval_95)
            {
                if ci.half_width_pct() <= self.target_pct {
                    return Some(Verdict::TargetMet);
                }
            }
        }
        (n >= self.max_runs).then_some(Verdict::MaxRuns)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RULE: ConfidenceRule = ConfidenceRule {
        target_pct: 5.0,
        min_runs: 3,
        max_runs: 10,
    };

    #[test]
    fn stops_early_when_runs_agree() {
        assert_eq!(RULE.check(&[50.0, 50.1]), None, "fewer than min_runs");
        assert_eq!(RULE.check(&[50.0, 50.1, 49.9]), Some(Verdict::TargetMet));
    }

    #[test]
    fn goes_on_while_noisy_and_gives_up_at_max() {
        let noisy = [40.0, 60.0, 45.0];
        assert_eq!(RULE.check(&noisy), None);
        let many: Vec<f64> = (0..10)
            .map(|i| if i % 2 == 0 { 30.0 } else { 70.0 })
            .collect();
        assert_eq!(RULE.check(&many), Some(Verdict::MaxRuns));
    }

    #[test]
    fn the_target_is_a_half_width_of_the_mean() {
        // mean 100, sd 10, n 4: half width = t(3) 3.182 * 10 / 2 = 15.9%.
        let s = [90.0, 110.0, 90.0, 110.0];
        let sd = Summary::of(&s).unwrap().sd;
        assert!((sd - 11.547).abs() < 1e-3);
        let loose = ConfidenceRule {
            target_pct: 20.0,
            ..RULE
        };
        assert_eq!(loose.check(&s), Some(Verdict::TargetMet));
        let tight = ConfidenceRule {
            target_pct: 15.0,
            ..RULE
        };
        assert_eq!(tight.check(&s), None);
    }
}
