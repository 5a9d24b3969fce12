//! E-divisive means (Matteson & James, "A Nonparametric Approach for Multiple Change Point
//! Analysis of Multivariate Data", JASA 2014), the method behind MongoDB's and Apache Otava's
//! change detection, for one series of figures in time order.
//!
//! For a split of a segment into X (before) and Y (after), the energy statistic with α = 1
//!
//! ```text
//! Ê(X, Y) = 2/(m·k) Σ|x−y| − Σ_{i<j}|x_i−x_j| / C(m,2) − Σ_{i<j}|y_i−y_j| / C(k,2)
//! Q̂(X, Y) = m·k/(m+k) · Ê(X, Y)
//! ```
//!
//! is large when the two sides' distributions differ. Hierarchically: the split with the
//! largest Q̂ over every segment found so far is tested by permutation (the segment's points
//! shuffled, the largest Q̂ of each shuffle compared with the observed one; seeded, so the same
//! series gives the same answer), kept if p ≤ `max_p`, and the segment split in two; the first
//! split that fails ends the search. A permutation test stops as soon as its p can no longer
//! reach `max_p` (a series without a change is dismissed after a few shuffles).
//!
//! Cost: a segment of n points costs O(n²) a shuffle. A long series is searched in windows of
//! `window` points overlapping by half (as Otava bounds its cost), so the whole costs
//! O(series × window × shuffles), growing with the series' length, not its square.
//!
//! Searching k windows is k tests: at p ≤ 0.01 each, a 500-point series without a change
//! would show one in about one series of six. So each window is tested at `max_p / k`
//! (Bonferroni), with enough shuffles to reach it, and a change's p is its window's times k:
//! the chance that a series without any change shows one anywhere stays at most `max_p`.

use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// How the search runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Settings {
    /// A split is kept if its permutation p is at most this.
    pub max_p: f64,
    /// Shuffles of a permutation test (p is at least 1 / (permutations + 1)).
    pub permutations: usize,
    pub seed: u64,
    /// Fewest points on either side of a split.
    pub min_size: usize,
    /// Points searched together; a longer series is searched in windows of this many.
    pub window: usize,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            max_p: 0.01,
            permutations: 199,
            seed: 1,
            min_size: 3,
            window: 60,
        }
    }
}

/// A change: the index of the first point of the new level.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChangePoint {
    pub index: usize,
    /// The split's Q̂ (in the window it was found in).
    pub q: f64,
    /// Its permutation p.
    pub p: f64,
}

/// The change points of `series`, in order.
pub fn change_points(series: &[f64], s: &Settings) -> Vec<ChangePoint> {
    let n = series.len();
    let window = s.window.max(4 * s.min_size.max(2));
    let step = window / 2;
    let windows = if n <= window {
        1
    } else {
        (n - window).div_ceil(step) + 1
    };
    // Each window at max_p / windows, with shuffles enough to reach it.
    let per_window = Settings {
        max_p: s.max_p / windows as f64,
        permutations: s
            .permutations
            .max((2.0 * windows as f64 / s.max_p).ceil() as usize),
        ..*s
    };
    let series_p = |c: ChangePoint| ChangePoint {
        p: (c.p * windows as f64).min(1.0),
        ..c
    };
    let mut found: Vec<ChangePoint> = Vec::new();
    if n <= window {
        found = detect(series, &per_window, s.seed)
            .into_iter()
            .map(series_p)
            .collect();
    } else {
        let mut start = 0;
        loop {
            let end = (start + window).min(n);
            let seed = s.seed ^ (start as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
            for c in detect(&series[start..end], &per_window, seed) {
                found.push(series_p(ChangePoint {
                    index: start + c.index,
                    ..c
                }));
            }
            if end == n {
                break;
            }
            start += step;
        }
        // Overlapping windows find one change twice, perhaps a point apart: keep the surer.
        found.sort_by_key(|c| c.index);
        let mut merged: Vec<ChangePoint> = Vec::new();
        for c in found {
            match merged.last_mut() {
                Some(last) if c.index - last.index <= s.min_size => {
                    if (c.p, -c.q) < (last.p, -last.q) {
                        *last = c;
                    }
                }
                _ => merged.push(c),
            }
        }
        found = merged;
    }
    found.sort_by_key(|c| c.index);
    found
}

/// Hierarchical E-divisive on one window.
fn detect(z: &[f64], s: &Settings, seed: u64) -> Vec<ChangePoint> {
    let n = z.len();
    let min = s.min_size.max(2);
    if n < 2 * min {
        return Vec::new();
    }
    let d: Vec<f64> = (0..n * n).map(|k| (z[k / n] - z[k % n]).abs()).collect();
    let mut scratch = Scratch::new(n);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut segments = vec![(0usize, n)];
    let mut changes = Vec::new();
    loop {
        // The best split over every segment.
        let mut best: Option<(usize, usize, f64)> = None;
        for (si, &(a, b)) in segments.iter().enumerate() {
            let order: Vec<usize> = (a..b).collect();
            if let Some((t, q)) = best_split(&d, n, &order, min, &mut scratch) {
                if best.is_none_or(|(_, _, bq)| q > bq) {
                    best = Some((si, a + t, q));
                }
            }
        }
        let Some((si, at, q)) = best else { break };
        let (a, b) = segments[si];
        let p = permutation_p(&d, n, a, b, q, min, s, &mut rng, &mut scratch);
        if p > s.max_p {
            break;
        }
        changes.push(ChangePoint { index: at, q, p });
        segments[si] = (a, at);
        segments.push((at, b));
    }
    changes
}

/// The permutation p of a split with statistic `q` in segment [a, b): the share of shuffles
/// (counting the observed order) whose best split reaches `q`. Stops once p must exceed
/// `max_p`, returning the p reached so far (already above it).
#[allow(clippy::too_many_arguments)]
fn permutation_p(
    d: &[f64],
    n: usize,
    a: usize,
    b: usize,
    q: f64,
    min: usize,
    s: &Settings,
    rng: &mut ChaCha8Rng,
    scratch: &mut Scratch,
) -> f64 {
    let total = (s.permutations + 1) as f64;
    let mut order: Vec<usize> = (a..b).collect();
    let mut reached = 1usize;
    for _ in 0..s.permutations {
        order.shuffle(rng);
        if best_split(d, n, &order, min, scratch).is_some_and(|(_, pq)| pq >= q) {
            reached += 1;
            if reached as f64 / total > s.max_p {
                break;
            }
        }
    }
    reached as f64 / total
}

struct Scratch {
    left: Vec<f64>,
    right: Vec<f64>,
}

impl Scratch {
    fn new(n: usize) -> Scratch {
        Scratch {
            left: vec![0.0; n + 1],
            right: vec![0.0; n + 1],
        }
    }
}

/// The split of the points `order` (indices into the n×n distance matrix `d`) with the largest
/// Q̂: (points before it, Q̂). O(len²).
fn best_split(
    d: &[f64],
    n: usize,
    order: &[usize],
    min: usize,
    scratch: &mut Scratch,
) -> Option<(usize, f64)> {
    let len = order.len();
    if len < 2 * min {
        return None;
    }
    let dist = |i: usize, j: usize| d[order[i] * n + order[j]];
    // left[t]: Σ over pairs within the first t points; right[t]: within the points from t on.
    let (left, right) = (&mut scratch.left, &mut scratch.right);
    left[0] = 0.0;
    for t in 0..len {
        let row: f64 = (0..t).map(|i| dist(i, t)).sum();
        left[t + 1] = left[t] + row;
    }
    right[len] = 0.0;
    for t in (0..len).rev() {
        let row: f64 = (t + 1..len).map(|j| dist(t, j)).sum();
        right[t] = right[t + 1] + row;
    }
    let all = left[len];
    let pairs = |k: usize| (k * (k - 1) / 2) as f64;
    let mut best: Option<(usize, f64)> = None;
    for t in min..=len - min {
        let (m, k) = (t as f64, (len - t) as f64);
        let cross = all - left[t] - right[t];
        let e = 2.0 * cross / (m * k) - left[t] / pairs(t) - right[t] / pairs(len - t);
        let q = m * k / (m + k) * e;
        if best.is_none_or(|(_, bq)| q > bq) {
            best = Some((t, q));
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_distr::{Distribution, Normal};

    fn noisy(levels: &[(usize, f64)], sd: f64, seed: u64) -> Vec<f64> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let noise = Normal::new(0.0, sd).unwrap();
        levels
            .iter()
            .flat_map(|&(len, level)| (0..len).map(|_| level).collect::<Vec<_>>())
            .map(|x| x * (1.0 + noise.sample(&mut rng)))
            .collect()
    }

    #[test]
    fn a_clear_step_is_found_where_it_is() {
        // 30 points at 100, then 30 at 110, 2% noise: a 10% step, five SDs.
        let z = noisy(&[(30, 100.0), (30, 110.0)], 0.02, 7);
        let c = change_points(&z, &Settings::default());
        assert_eq!(c.len(), 1, "{c:?}");
        assert!((29..=31).contains(&c[0].index), "{c:?}");
        assert!(c[0].p <= 0.01);
    }

    #[test]
    fn two_steps_in_a_long_series_are_both_found_through_the_windows() {
        let z = noisy(&[(100, 100.0), (80, 90.0), (120, 105.0)], 0.02, 3);
        let c = change_points(&z, &Settings::default());
        let at: Vec<usize> = c.iter().map(|c| c.index).collect();
        assert_eq!(at.len(), 2, "{c:?}");
        assert!(
            (99..=101).contains(&at[0]) && (179..=181).contains(&at[1]),
            "{at:?}"
        );
    }

    #[test]
    fn noise_alone_rarely_makes_a_change() {
        // 100 series of 100 points with no change: at p <= 0.01, about one false change in
        // 100 tests is expected; windows test more than once, so allow a few.
        let false_changes: usize = (0..100)
            .map(|seed| {
                change_points(&noisy(&[(100, 100.0)], 0.03, seed), &Settings::default()).len()
            })
            .sum();
        eprintln!("{false_changes} false changes in 100 series of 100 points");
        assert!(
            false_changes <= 5,
            "{false_changes} false changes in 100 series"
        );
    }

    #[test]
    fn the_same_series_and_seed_give_the_same_answer() {
        let z = noisy(&[(20, 100.0), (20, 104.0)], 0.02, 11);
        let s = Settings::default();
        assert_eq!(change_points(&z, &s), change_points(&z, &s));
    }

    #[test]
    fn the_statistic_is_matteson_and_james_energy_distance() {
        // X = [0, 0, 0], Y = [1, 1, 1]: cross Σ|x−y| = 9, within sums 0:
        // Ê = 2·9/9 = 2, Q̂ = 3·3/6 · 2 = 3.
        let z: [f64; 6] = [0.0, 0.0, 0.0, 1.0, 1.0, 1.0];
        let d: Vec<f64> = (0..36).map(|k| (z[k / 6] - z[k % 6]).abs()).collect();
        let order: Vec<usize> = (0..6).collect();
        let (t, q) = best_split(&d, 6, &order, 2, &mut Scratch::new(6)).unwrap();
        assert_eq!(t, 3);
        assert!((q - 3.0).abs() < 1e-12, "{q}");
    }

    #[test]
    fn too_short_a_series_has_no_change() {
        assert!(change_points(&[1.0, 2.0, 3.0, 4.0, 5.0], &Settings::default()).is_empty());
        assert!(change_points(&[], &Settings::default()).is_empty());
    }
}
