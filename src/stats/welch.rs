//! Welch's two-sample t-test: whether two sets of samples have different means, without
//! assuming equal variances.

use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF, StudentsT};

use super::Summary;

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
}
