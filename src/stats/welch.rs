//! Welch's two-sample t-test: whether two sets of samples have different means, without
//! assuming equal variances.

use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF, StudentsT};

use super::{RatioTest, Summary};

/// The difference of means B − A with its 95% confidence interval and the two-sided p-value.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct WelchTest {
    pub difference: f64,
    pub ci_low: f64,
    pub ci_high: f64,
    pub p_value: f64,
    pub degrees_of_freedom: f64,
}

impl WelchTest {
    /// Significant at the 5% level: the interval excludes zero.
    pub fn significant(&self) -> bool {
        self.p_value < 0.05
    }

    /// The same test about another estimate of the same difference (a figure's own value
    /// where the samples' mean is not it: an index score, a run whose samples were cut short):
    /// the interval keeps its width and is centred on `difference`, and the p-value is that
    /// estimate's at the samples' standard error, so the interval always holds its estimate.
    pub fn about(self, difference: f64) -> WelchTest {
        let half = self.ci_high - self.difference;
        WelchTest {
            difference,
            ci_low: difference - half,
            ci_high: difference + half,
            p_value: p_at(difference, half, self.degrees_of_freedom),
            degrees_of_freedom: self.degrees_of_freedom,
        }
    }
}

/// The two-sided p-value of an estimate `x` (of 0 under the null) whose 95% interval has the
/// half-width `half` on `df` degrees of freedom.
pub(super) fn p_at(x: f64, half: f64, df: f64) -> f64 {
    let t = match StudentsT::new(0.0, 1.0, df) {
        Ok(t) if half > 0.0 && half.is_finite() => t,
        // No spread: the estimate differs exactly when it is not 0.
        _ => return if x == 0.0 { 1.0 } else { 0.0 },
    };
    let se = half / t.inverse_cdf(0.975);
    2.0 * (1.0 - t.cdf((x / se).abs()))
}

/// None when either side has fewer than two samples.
pub fn welch_test(a: &[f64], b: &[f64]) -> Option<WelchTest> {
    let (sa, sb) = (Summary::of(a)?, Summary::of(b)?);
    if sa.count < 2 || sb.count < 2 {
        return None;
    }
    let (va, vb) = (
        sa.sd * sa.sd / sa.count as f64,
        sb.sd * sb.sd / sb.count as f64,
    );
    let difference = sb.mean - sa.mean;
    let se = (va + vb).sqrt();
    if se == 0.0 {
        // Both sides constant: they differ exactly when their values do.
        return Some(WelchTest {
            difference,
            ci_low: difference,
            ci_high: difference,
            p_value: if difference == 0.0 { 1.0 } else { 0.0 },
            degrees_of_freedom: (sa.count + sb.count - 2) as f64,
        });
    }
    let df =
        (va + vb).powi(2) / (va * va / (sa.count - 1) as f64 + vb * vb / (sb.count - 1) as f64);
    let t = StudentsT::new(0.0, 1.0, df).ok()?;
    let p_value = 2.0 * (1.0 - t.cdf((difference / se).abs()));
    let half = t.inverse_cdf(0.975) * se;
    Some(WelchTest {
        difference,
        ci_low: difference - half,
        ci_high: difference + half,
        p_value,
        degrees_of_freedom: df,
    })
}

/// Welch's test on the ratio of the means, mean(b) / mean(a), of two sets of samples that
/// cannot be negative: the delta method on its logarithm, whose standard error is
/// √(var_a / (n_a·mean_a²) + var_b / (n_b·mean_b²)), with Welch's degrees of freedom. Its
/// interval is the ratio's, so it never reaches below zero (a change below -100%), which the
/// difference's interval over mean(a) does for a noisy latency. None with fewer than two
/// samples a side, a negative sample, or a mean of 0.
pub fn ratio_of_means_test(a: &[f64], b: &[f64]) -> Option<RatioTest> {
    if a.iter().chain(b).any(|x| !x.is_finite() || *x < 0.0) {
        return None;
    }
    let w = welch_test(a, b)?;
    let (sa, sb) = (Summary::of(a)?, Summary::of(b)?);
    if sa.mean <= 0.0 || sb.mean <= 0.0 {
        return None;
    }
    let ratio = sb.mean / sa.mean;
    let se = (sa.sd * sa.sd / (sa.count as f64 * sa.mean * sa.mean)
        + sb.sd * sb.sd / (sb.count as f64 * sb.mean * sb.mean))
        .sqrt();
    let df = w.degrees_of_freedom.max(1.0);
    if se == 0.0 {
        return Some(RatioTest {
            ratio,
            ci_low: ratio,
            ci_high: ratio,
            p_value: if ratio == 1.0 { 1.0 } else { 0.0 },
            degrees_of_freedom: df,
        });
    }
    let t = StudentsT::new(0.0, 1.0, df).ok()?;
    let half = t.inverse_cdf(0.975) * se;
    Some(RatioTest {
        ratio,
        ci_low: ratio * (-half).exp(),
        ci_high: ratio * half.exp(),
        p_value: 2.0 * (1.0 - t.cdf((ratio.ln() / se).abs())),
        degrees_of_freedom: df,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_a_hand_worked_example() {
        // A: mean 20, variance 2.5 (n 5); B: mean 22, variance 2.5 (n 5).
        // se = sqrt(0.5 + 0.5) = 1, t = 2, df = 1 / (0.25/4 + 0.25/4) = 8.
        let a = [18.0, 19.0, 20.0, 21.0, 22.0];
        let b = [20.0, 21.0, 22.0, 23.0, 24.0];
        let w = welch_test(&a, &b).unwrap();
        assert!((w.difference - 2.0).abs() < 1e-12);
        assert!((w.degrees_of_freedom - 8.0).abs() < 1e-9);
        // t(8) two-sided p for t = 2 is 0.0805; the 97.5% quantile of t(8) is 2.306.
        assert!((w.p_value - 0.0805).abs() < 1e-3, "{w:?}");
        assert!((w.ci_high - (2.0 + 2.306)).abs() < 1e-3, "{w:?}");
        assert!(!w.significant());
    }

    #[test]
    fn a_clear_difference_is_significant_and_equal_constants_are_not() {
        let a = [10.0, 10.2, 9.9, 10.1, 10.0, 9.8];
        let b = [12.0, 12.1, 11.9, 12.2, 11.8, 12.0];
        assert!(welch_test(&a, &b).unwrap().significant());
        assert!(!welch_test(&[1.0, 1.0], &[1.0, 1.0]).unwrap().significant());
        assert!(welch_test(&[1.0, 1.0], &[2.0, 2.0]).unwrap().significant());
        assert!(welch_test(&[1.0], &[2.0, 3.0]).is_none());
    }

    #[test]
    fn a_ratio_interval_stays_positive_where_the_differences_does_not() {
        // A tail latency: A about 1, B spread from 1 to 30. The difference's interval over
        // A's mean reaches far below -100%; the ratio's stays above 0 and holds B/A, and its
        // verdict agrees with it.
        let a = [1.0, 1.1, 0.9, 1.0, 1.05];
        let b = [1.0, 30.0, 2.0, 25.0, 1.5];
        let w = welch_test(&a, &b).unwrap();
        assert!(w.ci_low / 1.01 < -1.0, "{w:?}");
        let r = ratio_of_means_test(&a, &b).unwrap();
        let ratio = (59.5 / 5.0) / (5.05 / 5.0);
        assert!((r.ratio - ratio).abs() < 1e-9);
        assert!(
            r.ci_low > 0.0 && r.ci_low < ratio && ratio < r.ci_high,
            "{r:?}"
        );
        assert_eq!(r.significant(), r.ci_low > 1.0 || r.ci_high < 1.0, "{r:?}");
        // The same samples: a ratio of 1, not significant.
        let same = ratio_of_means_test(&a, &a).unwrap();
        assert!(!same.significant() && same.ci_low < 1.0 && same.ci_high > 1.0);
        // A zero sample is fine (a latency below the timer's); a negative one or a zero mean
        // is not a ratio's.
        assert!(ratio_of_means_test(&[0.0, 1.0, 2.0], &[1.0, 2.0, 3.0]).is_some());
        assert_eq!(ratio_of_means_test(&[-1.0, 1.0], &[1.0, 2.0]), None);
        assert_eq!(ratio_of_means_test(&[0.0, 0.0], &[1.0, 2.0]), None);
    }
}
