//! p1bench's histogram of "% slower than the fastest run", whose bins widen with the value:
//! 0.1% wide below 1%, 1% wide from 1% to 20%, 10% wide above 20% (p1bench-readme.txt).

use serde::{Deserialize, Serialize};

/// p1bench's bucket count: the last bucket takes every larger value.
pub const BUCKETS: usize = 200;

/// The bin a "% slower" value falls in.
pub fn bin_index(slower_pct: f64) -> usize {
    let v = slower_pct.max(0.0);
    let idx = if v < 1.0 {
        (10.0 * v) as usize
    } else if v < 20.0 {
        10 + (v - 1.0) as usize
    } else {
        29 + ((v - 20.0) / 10.0) as usize
    };
    idx.min(BUCKETS - 1)
}

/// The lowest value of a bin.
pub fn bin_low_pct(idx: usize) -> f64 {
    if idx < 10 {
        idx as f64 / 10.0
    } else if idx < 29 {
        (idx - 9) as f64
    } else {
        (idx - 29) as f64 * 10.0 + 20.0
    }
}

/// One bin of the perturbation histogram.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Bin {
    /// Lowest "% slower" value in the bin.
    pub low_pct: f64,
    /// Start of the next bin; None for the last bin, which is open-ended.
    pub high_pct: Option<f64>,
    pub count: usize,
}

/// Bins from 0% up to the highest one holding a run, as p1bench prints them.
pub fn histogram(slower_pcts: &[f64]) -> Vec<Bin> {
    let mut counts = [0usize; BUCKETS];
    for &v in slower_pcts {
        counts[bin_index(v)] += 1;
    }
    let Some(top) = counts.iter().rposition(|&c| c > 0) else {
        return Vec::new();
    };
    (0..=top)
        .map(|i| Bin {
            low_pct: bin_low_pct(i),
            high_pct: (i + 1 < BUCKETS).then(|| bin_low_pct(i + 1)),
            count: counts[i],
        })
        .collect()
}

/// Length of a bin's star bar: 50 for the fullest bin, the others in proportion, rounded up so
/// that any non-empty bin shows at least one star (p1bench's rule).
pub fn bar_len(count: usize, max_count: usize) -> usize {
    if max_count == 0 {
        0
    } else {
        (50 * count).div_ceil(max_count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bin_edges() {
        assert_eq!(bin_index(0.0), 0);
        assert_eq!(bin_index(0.099), 0);
        assert_eq!(bin_index(0.1), 1);
        assert_eq!(bin_index(0.999), 9);
        assert_eq!(bin_index(1.0), 10);
        assert_eq!(bin_index(1.999), 10);
        assert_eq!(bin_index(2.0), 11);
        assert_eq!(bin_index(19.99), 28);
        assert_eq!(bin_index(20.0), 29);
        assert_eq!(bin_index(29.99), 29);
        assert_eq!(bin_index(30.0), 30);
        assert_eq!(bin_index(1e9), BUCKETS - 1);
        assert_eq!(bin_index(-0.5), 0);
    }

    #[test]
    fn bin_lower_bounds() {
        assert_eq!(bin_low_pct(0), 0.0);
        assert_eq!(bin_low_pct(9), 0.9);
        assert_eq!(bin_low_pct(10), 1.0);
        assert_eq!(bin_low_pct(28), 19.0);
        assert_eq!(bin_low_pct(29), 20.0);
        assert_eq!(bin_low_pct(30), 30.0);
        for i in 0..BUCKETS {
            assert_eq!(bin_index(bin_low_pct(i) + 1e-9), i, "bin {i}");
        }
    }

    #[test]
    fn histogram_runs_to_the_highest_populated_bin() {
        let h = histogram(&[0.0, 0.05, 0.999, 1.0, 19.99, 20.0]);
        assert_eq!(h.len(), 30);
        assert_eq!(h[0].count, 2);
        assert_eq!(h[9].count, 1);
        assert_eq!(h[10].count, 1);
        assert_eq!(h[28].count, 1);
        assert_eq!(h[29].count, 1);
        assert_eq!((h[29].low_pct, h[29].high_pct), (20.0, Some(30.0)));
        assert_eq!(h.iter().map(|b| b.count).sum::<usize>(), 6);
        assert!(histogram(&[]).is_empty());
        let last = histogram(&[5000.0]);
        assert_eq!(last.len(), BUCKETS);
        assert_eq!(last[BUCKETS - 1].high_pct, None);
    }

    #[test]
    fn bars_scale_to_fifty_and_round_up() {
        // From p1bench's sample output: the fullest bin (30) gets 50 stars, 11 gets 19, 1 gets 2.
        assert_eq!(bar_len(30, 30), 50);
        assert_eq!(bar_len(27, 30), 45);
        assert_eq!(bar_len(11, 30), 19);
        assert_eq!(bar_len(1, 30), 2);
        assert_eq!(bar_len(0, 30), 0);
        assert_eq!(bar_len(0, 0), 0);
    }
}
