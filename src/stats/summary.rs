use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF, StudentsT};

/// Count, mean, sample standard deviation, min and max of a set of samples.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub count: usize,
    pub mean: f64,
    /// The sample standard deviation (n − 1 in the denominator): the true spread around the
    /// mean, not interbench's root-mean-square figure.
    pub sd: f64,
    pub min: f64,
    pub max: f64,
}

impl Summary {
    /// None for no samples. Uses Welford's method, which stays accurate for large sample counts
    /// of nearly equal values (nanosecond timings of a fixed job are exactly that).
    pub fn of(samples: &[f64]) -> Option<Summary> {
        let first = *samples.first()?;
        let (mut mean, mut m2, mut min, mut max) = (0.0, 0.0, first, first);
        for (i, &x) in samples.iter().enumerate() {
            let delta = x - mean;
            mean += delta / (i + 1) as f64;
            m2 += delta * (x - mean);
            min = min.min(x);
            max = max.max(x);
        }
        let n = samples.len();
        let sd = if n > 1 {
            (m2 / (n - 1) as f64).sqrt()
        } else {
            0.0
        };
        Some(Summary {
            count: n,
            mean,
            sd,
            min,
            max,
        })
    }

    /// Coefficient of variation in percent (SD / mean × 100).
    pub fn cv_pct(&self) -> f64 {
        if self.mean == 0.0 {
            0.0
        } else {
            100.0 * self.sd / self.mean
        }
    }
}

/// A closed interval `[low, high]`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    pub low: f64,
    pub high: f64,
}

impl Interval {
    /// Half the width relative to the centre, in percent: "±x%".
    pub fn half_width_pct(&self) -> f64 {
        let centre = (self.low + self.high) / 2.0;
        if centre == 0.0 {
            0.0
        } else {
            100.0 * (self.high - self.low) / 2.0 / centre.abs()
        }
    }
}

/// The 95% confidence interval of the mean, from Student's t with n − 1 degrees of freedom.
/// None for fewer than two samples, where no interval can be estimated.
pub fn confidence_interval_95(s: &Summary) -> Option<Interval> {
    if s.count < 2 {
        return None;
    }
    let t = StudentsT::new(0.0, 1.0, (s.count - 1) as f64)
        .ok()?
        .inverse_cdf(0.975);
    let half = t * s.sd / (s.count as f64).sqrt();
    Some(Interval {
        low: s.mean - half,
        high: s.mean + half,
    })
}

/// The means of `batches` consecutive, equal stretches of `samples` (the remainder left out);
/// empty when there are fewer than two samples a batch. Successive samples of one run are not
/// independent (a VM's speed wanders over seconds, a latency follows the one before), and
/// Welch's test on them is far too sure; the means of long enough stretches are nearly
/// independent (the method of batch means, as simulation output is analysed).
pub fn batch_means(samples: &[f64], batches: usize) -> Vec<f64> {
    let size = samples.len() / batches.max(1);
    if size < 2 {
        return Vec::new();
    }
    samples
        .chunks_exact(size)
        .take(batches)
        .map(|c| c.iter().sum::<f64>() / c.len() as f64)
        .collect()
}

/// The median of unsorted samples (mean of the middle two for an even count); None when empty.
pub fn median(samples: &[f64]) -> Option<f64> {
    if samples.is_empty() {
        return None;
    }
    let mut v = samples.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

/// The median absolute deviation from the median: a spread figure that a few outliers (a
/// preempted timing on a shared host) do not move.
pub fn median_absolute_deviation(samples: &[f64]) -> Option<f64> {
    let m = median(samples)?;
    let deviations: Vec<f64> = samples.iter().map(|x| (x - m).abs()).collect();
    median(&deviations)
}

/// The p-th percentile (0 < p ≤ 100) of ascending-sorted samples as p1bench reads it:
/// `sorted[n * p / 100 - 1]` in integer arithmetic, the rank rounded down (the nearest-rank
/// rule rounds it up: for n = 3 the 50th is the fastest here, the middle one there). Where the
/// rank is 0 (fewer runs than p1bench prints the percentile for), the first.
pub fn percentile_p1bench<T: Copy>(sorted: &[T], p: u32) -> Option<T> {
    if sorted.is_empty() || !(1..=100).contains(&p) {
        return None;
    }
    let rank = sorted.len() * p as usize / 100;
    Some(sorted[rank.max(1) - 1])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9 * b.abs().max(1.0)
    }

    #[test]
    fn summary_of_known_data() {
        // 2,4,4,4,5,5,7,9: mean 5, sample variance 32/7.
        let s = Summary::of(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]).unwrap();
        assert_eq!(s.count, 8);
        assert!(close(s.mean, 5.0));
        assert!(close(s.sd, (32.0f64 / 7.0).sqrt()));
        assert_eq!((s.min, s.max), (2.0, 9.0));
        assert!(Summary::of(&[]).is_none());
        assert_eq!(Summary::of(&[3.0]).unwrap().sd, 0.0);
    }

    #[test]
    fn sd_is_not_the_root_mean_square() {
        // Constant latency: SD is 0 while the RMS is the value itself.
        let s = Summary::of(&[10.0; 50]).unwrap();
        assert_eq!(s.sd, 0.0);
    }

    #[test]
    fn confidence_interval_matches_the_t_table() {
        // n = 10, mean 100, sd 10: t(0.975, 9) = 2.2622, half width = 2.2622 * 10 / sqrt(10).
        let s = Summary {
            count: 10,
            mean: 100.0,
            sd: 10.0,
            min: 80.0,
            max: 120.0,
        };
        let ci = confidence_interval_95(&s).unwrap();
        let half = 2.262_157 * 10.0 / 10f64.sqrt();
        assert!((ci.low - (100.0 - half)).abs() < 1e-3);
        assert!((ci.high - (100.0 + half)).abs() < 1e-3);
        assert!((ci.half_width_pct() - half).abs() < 1e-3);
        assert!(confidence_interval_95(&Summary { count: 1, ..s }).is_none());
    }

    #[test]
    fn median_and_mad() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(median(&[]), None);
        // |x - 2| = 1, 1, 0, 0, 98 -> median 1: the outlier does not move it.
        assert_eq!(
            median_absolute_deviation(&[1.0, 3.0, 2.0, 2.0, 100.0]),
            Some(1.0)
        );
    }

    #[test]
    fn p1bench_percentiles_round_the_rank_down() {
        // n = 3: 3 * 50 / 100 = 1, the first (nearest rank: the second).
        let three = [10, 20, 30];
        assert_eq!(percentile_p1bench(&three, 50), Some(10));
        assert_eq!(percentile_p1bench(&three, 100), Some(30));
        // n = 10: the 50th is the 5th, the 90th the 9th, the 100th the last.
        let ten: Vec<u32> = (1..=10).collect();
        assert_eq!(percentile_p1bench(&ten, 50), Some(5));
        assert_eq!(percentile_p1bench(&ten, 90), Some(9));
        assert_eq!(percentile_p1bench(&ten, 100), Some(10));
        // n = 15: 15 * 90 / 100 = 13, the 13th (nearest rank: the 14th).
        let fifteen: Vec<u32> = (1..=15).collect();
        assert_eq!(percentile_p1bench(&fifteen, 90), Some(13));
        // n = 100, the 99th: the 99th sample.
        let hundred: Vec<u32> = (1..=100).collect();
        assert_eq!(percentile_p1bench(&hundred, 99), Some(99));
        assert_eq!(percentile_p1bench::<u32>(&[], 50), None);
        assert_eq!(percentile_p1bench(&three, 0), None);
        assert_eq!(percentile_p1bench(&[7], 50), Some(7));
    }
}
