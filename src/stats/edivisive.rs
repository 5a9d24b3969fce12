//! E-divisive means (Matteson & James, "A Nonparametric Approach for Multiple Change Point
//! Analysis of Multivariate Data", JASA 2014), the method behind MongoDB's and Apache Otava's
//! change detection, for one series of figures in time order. docs/history.md tells how it
//! works and how it was checked; [`change_points`] and `best_split` give the arithmetic.

use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// How the search runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Settings {
    /// A split is kept if its permutation p is at most this.
    pub max_p: f64,
    /// Shuffles of a permutation test (p is at least 1 / (permutations + 1)); raised to what
    /// `max_p` needs.
    pub permutations: usize,
    pub seed: u64,
    /// Fewest points on either side of a split.
    pub min_size: usize,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            max_p: 0.01,
            permutations: 199,
            seed: 1,
            min_size: 3,
        }
    }
}

/// A change: the index of the first point of the new level.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChangePoint {
    pub index: usize,
    /// The split's Q̂ in the segment it was found in (for a change in the newest points,
    /// `stats::newest`'s t).
    pub q: f64,
    /// Its permutation p.
    pub p: f64,
    /// Found by `stats::newest` (the newest points against those before), not by a split.
    pub newest: bool,
}

/// The change points of `series`, in order.
///
/// For a split of a segment into X (before) and Y (after), the energy statistic with α = 1
///
/// ```text
/// Ê(X, Y) = 2/(m·k) Σ|x−y| − Σ_{i<j}|x_i−x_j| / C(m,2) − Σ_{i<j}|y_i−y_j| / C(k,2)
/// Q̂(X, Y) = m·k/(m+k) · Ê(X, Y)
/// ```
///
/// is large when the two sides' distributions differ. Hierarchically: the split with the
/// largest Q̂ over every segment found so far is tested by permutation (the segment's points
/// shuffled, the largest Q̂ of each shuffle compared with the observed one; seeded, so the same
/// series gives the same answer), kept if p ≤ `max_p`, and the segment split in two; the first
/// split that fails ends the search. A permutation test stops as soon as its p can no longer
/// reach `max_p` (a series without a change is dismissed after a few shuffles).
pub fn change_points(series: &[f64], s: &Settings) -> Vec<ChangePoint> {
    let n = series.len();
    let min = s.min_size.max(2);
    if n < 2 * min || series.iter().any(|x| !x.is_finite()) {
        return Vec::new();
    }
    let s = Settings {
        // Enough shuffles that two of them may do as well and p still reach max_p: with 199
        // at a max_p of 0.008 (history's share beside its newest-runs test) only one could,
        // and the test would be one at 0.005.
        permutations: s
            .permutations
            .max(((2.0 / s.max_p).round() as usize).saturating_sub(1)),
        min_size: min,
        ..*s
    };
    let mut scratch = Scratch::new(n);
    let mut rng = ChaCha8Rng::seed_from_u64(s.seed);
    // The segments [a, b) long enough to split, each with its best split (absolute index, Q̂).
    let mut segments: Vec<Segment> = Vec::new();
    let add = |a: usize, b: usize, scratch: &mut Scratch, segs: &mut Vec<Segment>| {
        if let Some((t, q)) = segment_best(&series[a..b], min, scratch) {
            segs.push(Segment { a, b, at: a + t, q });
        }
    };
    add(0, n, &mut scratch, &mut segments);
    let mut changes = Vec::new();
    while let Some(si) =
        (0..segments.len()).max_by(|&i, &j| segments[i].q.total_cmp(&segments[j].q))
    {
        let Segment { a, b, at, q } = segments.swap_remove(si);
        let p = permutation_p(&series[a..b], q, &s, &mut rng, &mut scratch);
        if above(p, s.max_p) {
            break;
        }
        changes.push(ChangePoint {
            index: at,
            q,
            p,
            newest: false,
        });
        add(a, at, &mut scratch, &mut segments);
        add(at, b, &mut scratch, &mut segments);
    }
    changes.sort_by_key(|c| c.index);
    changes
}

/// Whether a permutation p is above `max_p`: a share of whole shuffles such as 2/250 and a
/// level such as 0.8 × 0.01 may differ in their last bit while equal.
fn above(p: f64, max_p: f64) -> bool {
    p > max_p * (1.0 + 1e-9)
}

/// The best split of the whole `series` and its permutation p, measured up to `loose` (a
/// level above `s.max_p`: the test stops once p is above it, and the p returned is then only
/// known to be above `loose`). What `history` shows as the closest call where it kept nothing.
/// None where the series is too short to split.
pub fn closest_split(series: &[f64], s: &Settings, loose: f64) -> Option<ChangePoint> {
    let min = s.min_size.max(2);
    if series.len() < 2 * min || series.iter().any(|x| !x.is_finite()) {
        return None;
    }
    let s = Settings {
        max_p: loose,
        permutations: s
            .permutations
            .max(((2.0 / s.max_p).round() as usize).saturating_sub(1)),
        min_size: min,
        ..*s
    };
    let mut scratch = Scratch::new(series.len());
    let mut rng = ChaCha8Rng::seed_from_u64(s.seed);
    let (at, q) = segment_best(series, min, &mut scratch)?;
    let p = permutation_p(series, q, &s, &mut rng, &mut scratch);
    Some(ChangePoint {
        index: at,
        q,
        p,
        newest: false,
    })
}

/// A stretch [a, b) of the series and its best split.
struct Segment {
    a: usize,
    b: usize,
    at: usize,
    q: f64,
}

/// The best split of one segment: ranks the points, then [`best_split`].
fn segment_best(z: &[f64], min: usize, scratch: &mut Scratch) -> Option<(usize, f64)> {
    scratch.rank(z);
    best_split(min, scratch)
}

/// The permutation p of a segment whose best split has statistic `q`: the share of shuffles
/// (counting the observed order) whose best split reaches `q`. Stops once p must exceed
/// `max_p`, returning the p reached so far (already above it).
fn permutation_p(
    z: &[f64],
    q: f64,
    s: &Settings,
    rng: &mut ChaCha8Rng,
    scratch: &mut Scratch,
) -> f64 {
    let total = (s.permutations + 1) as f64;
    scratch.rank(z);
    let mut reached = 1usize;
    for _ in 0..s.permutations {
        scratch.points.shuffle(rng);
        if best_split(s.min_size, scratch).is_some_and(|(_, pq)| pq >= q) {
            reached += 1;
            if above(reached as f64 / total, s.max_p) {
                break;
            }
        }
    }
    reached as f64 / total
}

/// Working memory for one series: the points of the segment at hand (value, rank among them,
/// and summed distance to all of them, in the order being tried), a Fenwick tree's counts and
/// sums over ranks, and the sums of distances within each prefix.
struct Scratch {
    points: Vec<Point>,
    tree: Vec<(f64, f64)>,
    left: Vec<f64>,
    /// Σ over the segment's pairs of |x_i − x_j|.
    all: f64,
}

#[derive(Debug, Clone, Copy, Default)]
struct Point {
    x: f64,
    rank: usize,
    /// Σ_j |x − x_j| over the whole segment: the same in every order of it.
    to_all: f64,
}

impl Scratch {
    fn new(n: usize) -> Scratch {
        Scratch {
            points: Vec::with_capacity(n),
            tree: vec![(0.0, 0.0); n + 1],
            left: vec![0.0; n + 1],
            all: 0.0,
        }
    }

    /// `z` as the points at hand, in its order: each one's rank (1-based; ties ranked in order
    /// of place, which changes no distance) and its summed distance to all the others, from
    /// the sorted values in O(n log n).
    fn rank(&mut self, z: &[f64]) {
        let n = z.len();
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by(|&i, &j| z[i].total_cmp(&z[j]).then(i.cmp(&j)));
        // Distances do not change with a shift: centred, the sums below stay small.
        let mean = z.iter().sum::<f64>() / n as f64;
        let total: f64 = z.iter().map(|x| x - mean).sum();
        self.points.clear();
        self.points.resize(n, Point::default());
        self.all = 0.0;
        let mut below = 0.0;
        for (r, &i) in order.iter().enumerate() {
            let x = z[i] - mean;
            // r points below x, n − r − 1 above.
            let above = total - below - x;
            let to_all = x * r as f64 - below + above - x * (n - r - 1) as f64;
            self.points[i] = Point {
                x,
                rank: r + 1,
                to_all,
            };
            self.all += to_all / 2.0;
            below += x;
        }
    }
}

/// The split of the points at hand with the largest Q̂: (points before it, Q̂).
///
/// The figures are numbers (one dimension), so the sums of distances need no matrix: with the
/// points ranked once, Σ_{i<t}|x_t − x_i| over the points before t is
/// `x_t·(below − above) − sum(below) + sum(above)`, the counts and sums read from a Fenwick
/// tree over the ranks in O(log n). Q̂ at every split of a segment of n points costs O(n log n)
/// and O(n) memory, exactly, where the matrix cost O(n²) of both, which is why Otava searches
/// a long series in windows of 50 points. A window bounds the cost but also the evidence: a
/// change is then judged on the few points each side that share its window, and testing each
/// window is many tests (an earlier version here, in windows of 60, missed most 10% steps in
/// 12% noise and, at p ≤ 0.01 a window, would call a change in one 500-point series of six
/// without any). Here every split is judged on the whole segment it lies in, by one test.
fn best_split(min: usize, scratch: &mut Scratch) -> Option<(usize, f64)> {
    let len = scratch.points.len();
    if len < 2 * min {
        return None;
    }
    let Scratch {
        points,
        tree,
        left,
        all,
    } = scratch;
    tree[..=len].fill((0.0, 0.0));
    left[0] = 0.0;
    // Σ over the first t points of their distance to all.
    let mut to_all = 0.0;
    let mut total = 0.0;
    let pairs = |k: usize| (k * (k - 1) / 2) as f64;
    let mut best: Option<(usize, f64)> = None;
    for t in 0..len {
        if t >= min && len - t >= min {
            // X = the first t points, Y = the rest. Σ_{x∈X} to_all = 2·within(X) + cross.
            let within_x = left[t];
            let cross = to_all - 2.0 * within_x;
            let within_y = *all - within_x - cross;
            let (m, k) = (t as f64, (len - t) as f64);
            let e = 2.0 * cross / (m * k) - within_x / pairs(t) - within_y / pairs(len - t);
            let q = m * k / (m + k) * e;
            if best.is_none_or(|(_, bq)| q > bq) {
                best = Some((t, q));
            }
        }
        let Point { x, rank, to_all: d } = points[t];
        // The points so far at or below this rank: how many, and their sum.
        let (mut below, mut below_sum, mut i) = (0.0, 0.0, rank);
        while i > 0 {
            below += tree[i].0;
            below_sum += tree[i].1;
            i &= i - 1;
        }
        let above = t as f64 - below;
        left[t + 1] = left[t] + x * (below - above) - below_sum + (total - below_sum);
        let mut i = rank;
        while i <= len {
            tree[i].0 += 1.0;
            tree[i].1 += x;
            i += i & i.wrapping_neg();
        }
        total += x;
        to_all += d;
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

    /// Q̂ at every split by the definition, pair by pair (O(n²)).
    fn q_by_definition(z: &[f64], t: usize) -> f64 {
        let (x, y) = z.split_at(t);
        let within = |v: &[f64]| {
            let mut s = 0.0;
            for i in 0..v.len() {
                for j in i + 1..v.len() {
                    s += (v[i] - v[j]).abs();
                }
            }
            s / (v.len() * (v.len() - 1) / 2) as f64
        };
        let cross: f64 = x
            .iter()
            .flat_map(|a| y.iter().map(move |b| (a - b).abs()))
            .sum();
        let (m, k) = (x.len() as f64, y.len() as f64);
        m * k / (m + k) * (2.0 * cross / (m * k) - within(x) - within(y))
    }

    #[test]
    fn the_statistic_is_matteson_and_james_energy_distance() {
        // X = [0, 0, 0], Y = [1, 1, 1]: cross Σ|x−y| = 9, within sums 0:
        // Ê = 2·9/9 = 2, Q̂ = 3·3/6 · 2 = 3.
        let mut scratch = Scratch::new(6);
        let (t, q) = segment_best(&[0.0, 0.0, 0.0, 1.0, 1.0, 1.0], 2, &mut scratch).unwrap();
        assert_eq!(t, 3);
        assert!((q - 3.0).abs() < 1e-12, "{q}");
    }

    #[test]
    fn the_ranked_sums_find_the_split_the_pairwise_definition_finds() {
        // With ties, negative values and a step: the O(n log n) sums against the definition.
        let mut z = noisy(&[(20, 100.0), (17, 93.0)], 0.03, 5);
        z[4] = z[9];
        z[30] = -12.5;
        let mut scratch = Scratch::new(z.len());
        // Far from zero: the sums are centred, so the offset costs no precision.
        let shifted: Vec<f64> = z.iter().map(|x| x + 1e9).collect();
        let (t, q) = segment_best(&shifted, 2, &mut scratch).unwrap();
        let (bt, bq) = (2..=z.len() - 2)
            .map(|t| (t, q_by_definition(&z, t)))
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .unwrap();
        assert_eq!(t, bt);
        assert!((q - bq).abs() < 1e-9 * bq.abs(), "{q} {bq}");
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
    fn two_steps_in_a_long_series_are_both_found() {
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
    fn a_small_step_is_found_on_the_evidence_of_the_whole_series() {
        // A 10% step in 12% noise, 250 points each side: hopeless on a window of 30 a side
        // (t ≈ 3), plain on the whole (t ≈ 9). Where, is less sure in such noise.
        let z = noisy(&[(250, 100.0), (250, 110.0)], 0.12, 17);
        let c = change_points(&z, &Settings::default());
        assert_eq!(c.len(), 1, "{c:?}");
        assert!((220..=280).contains(&c[0].index), "{c:?}");
    }

    #[test]
    fn noise_alone_rarely_makes_a_change() {
        // 100 series of 100 points with no change: at p <= 0.01, about one false change in
        // 100 tests is expected; allow for the luck of the draw.
        let false_changes: usize = (0..100)
            .map(|seed| {
                change_points(&noisy(&[(100, 100.0)], 0.03, seed), &Settings::default()).len()
            })
            .sum();
        eprintln!("{false_changes} false changes in 100 series of 100 points");
        assert!(
            false_changes <= 4,
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
    fn too_short_a_series_has_no_change() {
        assert!(change_points(&[1.0, 2.0, 3.0, 4.0, 5.0], &Settings::default()).is_empty());
        assert!(change_points(&[], &Settings::default()).is_empty());
    }
}
