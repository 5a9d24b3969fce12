//! UnixBench's arithmetic (its Run script, combinePassResults and indexResults): a pass sums the
//! counts of its parallel copies and averages their times; a test drops the worst third of its
//! passes (lowest counts) and takes the geometric mean of the rest; each test's index value is
//! 10 × score / baseline; a category's index is the geometric mean of its index values.

use serde::{Deserialize, Serialize};

/// One pass (iteration) of a test: all its copies together.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Pass {
    /// The copies' counts, summed.
    pub count: f64,
    /// The copies' elapsed times, averaged, seconds.
    pub time_s: f64,
}

impl Pass {
    /// The pass's rate: count / (time / timebase), or the count itself when `timebase` is 0
    /// (the program reported a rate).
    pub fn rate(&self, timebase: f64) -> f64 {
        if timebase > 0.0 && self.time_s > 0.0 {
            self.count / (self.time_s / timebase)
        } else {
            self.count
        }
    }
}

/// What one copy of a test program reports.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CopyReport {
    /// Work done (loops, KB, frames), or a rate when `timebase` is 0.
    pub count: f64,
    /// Seconds the count is expressed per (1: per second, 60: per minute, 0: `count` is a rate).
    pub timebase: f64,
    pub time_s: f64,
}

/// Sums a pass's copies (counts added, times averaged), as runOnePass does.
pub fn combine_copies(copies: &[CopyReport]) -> Pass {
    let n = copies.len().max(1) as f64;
    Pass {
        count: copies.iter().map(|c| c.count).sum(),
        time_s: copies.iter().map(|c| c.time_s).sum::<f64>() / n,
    }
}

/// A test's score from its passes.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct TestScore {
    pub score: f64,
    /// Mean time of the passes kept, s.
    pub time_s: f64,
    /// Passes kept.
    pub iterations: usize,
    /// Passes dropped as the worst third.
    pub dropped: usize,
}

/// The passes a test's score keeps: all but the worst third (the lowest counts), as the Run
/// script's combinePassResults drops them. The spread shown beside a score and the samples
/// `compare` tests are these, so both describe the same set as the score.
pub fn kept(passes: &[Pass]) -> Vec<Pass> {
    kept_indices(passes)
        .into_iter()
        .map(|i| passes[i])
        .collect()
}

/// Where the passes [`kept`] keeps are among `passes`, in its order.
pub fn kept_indices(passes: &[Pass]) -> Vec<usize> {
    let mut sorted: Vec<usize> = (0..passes.len()).collect();
    sorted.sort_by(|&a, &b| passes[a].count.total_cmp(&passes[b].count));
    let dropped = sorted.len() / 3;
    sorted.split_off(dropped)
}

/// Drops the worst third of the passes (lowest counts) and returns the geometric mean of the
/// others' rates: count / (time / timebase), or the count itself when `timebase` is 0.
pub fn score(passes: &[Pass], timebase: f64) -> Option<TestScore> {
    let kept = kept(passes);
    let dropped = passes.len() - kept.len();
    if kept.is_empty() {
        return None;
    }
    let log_sum: f64 = kept
        .iter()
        .map(|p| p.rate(timebase).max(f64::MIN_POSITIVE).ln())
        .sum();
    Some(TestScore {
        score: (log_sum / kept.len() as f64).exp(),
        time_s: kept.iter().map(|p| p.time_s).sum::<f64>() / kept.len() as f64,
        iterations: kept.len(),
        dropped,
    })
}

/// A test's index value: 10 × score / baseline.
pub fn index_value(score: f64, baseline: f64) -> f64 {
    10.0 * score / baseline
}

/// The geometric mean of index values (the overall index of a category).
pub fn overall_index(values: &[f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let log_sum: f64 = values.iter().map(|v| (v / 10.0).max(1e-6).ln()).sum();
    Some(10.0 * (log_sum / values.len() as f64).exp())
}

/// Iterations of a test: `-i N` for fast tests, int((N + 1) / 3) and at least 1 for slow ones
/// (the Run script's rule; N = 10 gives 3).
pub fn iterations(requested: usize, slow: bool) -> usize {
    if slow {
        ((requested + 1) / 3).max(1)
    } else {
        requested.max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(count: f64, time_s: f64) -> Pass {
        Pass { count, time_s }
    }

    #[test]
    fn copies_add_counts_and_average_times() {
        let pass = combine_copies(&[
            CopyReport {
                count: 100.0,
                timebase: 1.0,
                time_s: 10.0,
            },
            CopyReport {
                count: 50.0,
                timebase: 1.0,
                time_s: 12.0,
            },
        ]);
        assert_eq!(pass, p(150.0, 11.0));
    }

    #[test]
    fn the_worst_third_is_dropped_and_the_rest_geometrically_averaged() {
        // 10 passes: the 3 lowest counts go. Rates of the rest (timebase 1, 10 s each):
        // 40, 40, 40, 40, 40, 40, 160 -> geomean = 40 * 4^(1/7).
        let mut passes = vec![p(10.0, 10.0), p(20.0, 10.0), p(30.0, 10.0)];
        passes.extend(std::iter::repeat_n(p(400.0, 10.0), 6));
        passes.push(p(1600.0, 10.0));
        let s = score(&passes, 1.0).unwrap();
        assert_eq!((s.iterations, s.dropped), (7, 3));
        assert!(
            (s.score - 40.0 * 4f64.powf(1.0 / 7.0)).abs() < 1e-9,
            "{}",
            s.score
        );
        assert!((s.time_s - 10.0).abs() < 1e-12);
    }

    #[test]
    fn timebases() {
        // Loops per minute: 30 loops in 60 s is 30 lpm; in 30 s it is 60 lpm.
        let lpm = score(&[p(30.0, 60.0), p(30.0, 30.0)], 60.0).unwrap();
        assert_eq!(lpm.dropped, 0);
        assert!((lpm.score - (30.0f64 * 60.0).sqrt()).abs() < 1e-9);
        // A rate (MWIPS) is taken as it is.
        let rate = score(&[p(2000.0, 10.0)], 0.0).unwrap();
        assert!((rate.score - 2000.0).abs() < 1e-9);
        assert!(score(&[], 1.0).is_none());
    }

    #[test]
    fn index_values_and_overall_index() {
        // dhry2reg baseline 116700 lps: 11670000 lps is 100 times George, index 1000.
        assert!((index_value(11_670_000.0, 116_700.0) - 1000.0).abs() < 1e-9);
        // Geometric mean of 100 and 1000 index values: 316.2.
        let o = overall_index(&[100.0, 1000.0]).unwrap();
        assert!((o - 316.227_766).abs() < 1e-3);
        assert!(overall_index(&[]).is_none());
    }

    #[test]
    fn iteration_counts() {
        assert_eq!(iterations(10, false), 10);
        assert_eq!(iterations(10, true), 3);
        assert_eq!(iterations(1, true), 1);
        assert_eq!(iterations(5, true), 2);
    }
}
