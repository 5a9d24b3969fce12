//! E-divisive means (Matteson & James, "A Nonparametric Approach for Multiple Change Point
//! Analysis of Multivariate Data", JASA 2014), the method behind MongoDB's and Apache Otava's
//! change detection, for one series of figures in time order, and a search for stretches that
//! return to the level around them ([`stretches`]). docs/history.md tells how it works and how
//! it was checked; [`change_points`], `best_split` and `best_stretch` give the arithmetic.

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
    let s = prepared(s, s.max_p);
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
        let p = permutation_p(&series[a..b], q, &s, &mut rng, &mut scratch, split_q);
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

/// `s` as a test runs it, stopping above `stop` (its `max_p`, or a looser level): enough
/// shuffles that two of them may do as well and p still reach `s.max_p` (2/p − 1, rounded up:
/// with 199 at a max_p of 0.006, history's share for splits, none could and the test would
/// be one at 0.005; with 2/p rounded to the nearest, 332, one at 0.003), and at least two
/// points a side.
fn prepared(s: &Settings, stop: f64) -> Settings {
    Settings {
        max_p: stop,
        permutations: s
            .permutations
            .max(((2.0 / s.max_p - 1e-9).ceil() as usize).saturating_sub(1)),
        min_size: s.min_size.max(2),
        ..*s
    }
}

/// The stretches of `series` that stand apart from what surrounds them (a regression that was
/// fixed; a spell of a noisy neighbour), searched inside each segment between `cuts` (the
/// first points of new levels, as [`change_points`] gives them): a segment's best stretch (see
/// `best_stretch`, at most [`STRETCH_WIDEST`] points, at least `min_size` points each side)
/// is tested by permutation like a split and kept if p ≤ `max_p`. A kept stretch is two
/// changes, at its first point and at the first point after it, both with its p.
pub fn stretches(series: &[f64], cuts: &[usize], s: &Settings) -> Vec<ChangePoint> {
    let n = series.len();
    if series.iter().any(|x| !x.is_finite()) {
        return Vec::new();
    }
    let s = prepared(s, s.max_p);
    let mut scratch = Scratch::new(n);
    let mut rng = ChaCha8Rng::seed_from_u64(s.seed);
    let mut found = Vec::new();
    for w in bounds(n, cuts).windows(2) {
        let (a, z) = (w[0], &series[w[0]..w[1]]);
        scratch.rank(z);
        let Some((t, k, q)) = best_stretch(s.min_size, &mut scratch) else {
            continue;
        };
        let p = permutation_p(z, q, &s, &mut rng, &mut scratch, stretch_q);
        if !above(p, s.max_p) {
            for index in [a + t, a + t + k] {
                found.push(ChangePoint {
                    index,
                    q,
                    p,
                    newest: false,
                });
            }
        }
    }
    found
}

/// The bounds of the segments between `cuts` (indices of the first point of a new level) in a
/// series of `len` points: 0, each cut inside it, `len`, in order.
pub fn bounds(len: usize, cuts: &[usize]) -> Vec<usize> {
    let mut bounds = vec![0];
    bounds.extend(cuts.iter().copied().filter(|&c| c > 0 && c < len));
    bounds.push(len);
    bounds.sort_unstable();
    bounds.dedup();
    bounds
}

/// Each of `cuts` (in order) moved to the best split of the stretch between its neighbours,
/// once, first to last. A cut is found in the segment it was tested in, where a change nearby
/// (the other end of a dip; a step the split had not yet found) can pull it a point or two
/// off; between its neighbours it is the one change. Nothing is tested again: the cuts stay
/// as many, with their p.
pub fn refine(series: &[f64], cuts: &mut [ChangePoint], min_size: usize) {
    let n = series.len();
    let min = min_size.max(2);
    let mut scratch = Scratch::new(n);
    for i in 0..cuts.len() {
        let a = if i == 0 { 0 } else { cuts[i - 1].index };
        let b = cuts.get(i + 1).map_or(n, |c| c.index);
        if a < b && b <= n {
            if let Some((t, _)) = segment_best(&series[a..b], min, &mut scratch) {
                cuts[i].index = a + t;
            }
        }
    }
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
    let s = prepared(s, loose);
    let mut scratch = Scratch::new(series.len());
    let mut rng = ChaCha8Rng::seed_from_u64(s.seed);
    let (at, q) = segment_best(series, min, &mut scratch)?;
    let p = permutation_p(series, q, &s, &mut rng, &mut scratch, split_q);
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

/// The best split's Q̂ of the points at hand.
fn split_q(min: usize, scratch: &mut Scratch, reach: f64) -> Option<f64> {
    best_split_until(min, scratch, reach).map(|(_, q)| q)
}

/// The best stretch's Q̂ of the points at hand.
fn stretch_q(min: usize, scratch: &mut Scratch, reach: f64) -> Option<f64> {
    best_stretch_until(min, scratch, reach).map(|(_, _, q)| q)
}

/// The permutation p of a segment whose best `statistic` (a split's or a stretch's Q̂) is
/// `q`: the share of shuffles (counting the observed order) whose best reaches `q`. Stops once
/// p must exceed `max_p`, returning the p reached so far (already above it). A shuffle's
/// search stops at the first split or stretch that reaches `q`: whether its best does is all
/// the test asks, and the answer is the same.
fn permutation_p(
    z: &[f64],
    q: f64,
    s: &Settings,
    rng: &mut ChaCha8Rng,
    scratch: &mut Scratch,
    statistic: fn(usize, &mut Scratch, f64) -> Option<f64>,
) -> f64 {
    let total = (s.permutations + 1) as f64;
    scratch.rank(z);
    let mut reached = 1usize;
    for _ in 0..s.permutations {
        scratch.points.shuffle(rng);
        if statistic(s.min_size, scratch, q).is_some_and(|pq| pq >= q) {
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
    /// The sums within every stretch of one width, and of the two widths below it (the
    /// diagonals of the pairwise sums that the search over stretches walks along).
    width: [Vec<f64>; 3],
    /// Σ of the first j points' distances to all, and the sum within the last n − j points.
    to_prefix: Vec<f64>,
    right: Vec<f64>,
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
            width: [vec![0.0; n + 1], vec![0.0; n + 1], vec![0.0; n + 1]],
            to_prefix: vec![0.0; n + 1],
            right: vec![0.0; n + 1],
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
    best_split_until(min, scratch, f64::INFINITY)
}

/// [`best_split`], stopping at the first split whose Q̂ reaches `reach` (that split, the best
/// so far; `scratch.left` is then filled only up to it).
fn best_split_until(min: usize, scratch: &mut Scratch, reach: f64) -> Option<(usize, f64)> {
    let len = scratch.points.len();
    if len < 2 * min {
        return None;
    }
    let Scratch {
        points,
        tree,
        left,
        all,
        ..
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
                if q >= reach {
                    return best;
                }
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

/// The best stretch of the points at hand (τ, k, Q̂): Y = [τ, τ + k) the stretch and X the
/// points outside it, before and after, at least `min` of each. A dip in the middle of a long
/// segment is a level apart only from what surrounds it; no single split of the segment
/// separates it. None where the segment is too short for one.
///
/// The sums come from `left[j]` (within the first j points, from [`best_split`]), the same from
/// the other end, the prefix sums of each point's distance to all, and the sum within each
/// stretch [i, i + k), which comes from the two narrower widths (the pairs of [i, i+k−1) and
/// of [i+1, i+k), less those of [i+1, i+k−1) counted twice, plus the pair of its ends): every
/// width costs O(n), and each (τ, k) a few sums.
fn best_stretch(min: usize, scratch: &mut Scratch) -> Option<(usize, usize, f64)> {
    best_stretch_until(min, scratch, f64::INFINITY)
}

/// [`best_stretch`], stopping at the first stretch whose Q̂ reaches `reach` (that stretch, the
/// best so far).
fn best_stretch_until(
    min: usize,
    scratch: &mut Scratch,
    reach: f64,
) -> Option<(usize, usize, f64)> {
    best_split(min, scratch)?;
    let len = scratch.points.len();
    let widest = STRETCH_WIDEST.min(len.saturating_sub(2 * min));
    let mut best: Option<(usize, usize, f64)> = None;
    let Scratch {
        points,
        left,
        all,
        width,
        to_prefix,
        right,
        ..
    } = scratch;
    let all = *all;
    to_prefix[0] = 0.0;
    for t in 0..len {
        to_prefix[t + 1] = to_prefix[t] + points[t].to_all;
    }
    // Within [t, len): all pairs less those within [0, t) and those across t.
    for t in 0..=len {
        right[t] = all + left[t] - to_prefix[t];
    }
    let [two_below, one_below, this] = width;
    two_below[..=len].fill(0.0);
    one_below[..=len].fill(0.0);
    let pairs = |k: usize| (k * (k - 1) / 2) as f64;
    let lenf = len as f64;
    for k in 2..=widest {
        for i in 0..=len - k {
            this[i] = one_below[i] + one_below[i + 1] - two_below[i + 1]
                + (points[i].x - points[i + k - 1].x).abs();
        }
        if k >= min {
            let (m, kf) = ((len - k) as f64, k as f64);
            let (per_pair_x, per_pair_y) = (1.0 / pairs(len - k), 1.0 / pairs(k));
            for tau in min..=len - k - min {
                let kappa = tau + k;
                let within_y = this[tau];
                let cross = to_prefix[kappa] - to_prefix[tau] - 2.0 * within_y;
                // Before, after, and the pairs across the stretch (all pairs, less those
                // within [0, κ) and within [τ, len), which count the stretch's twice).
                let within_x = left[tau] + right[kappa] + all - left[kappa] - right[tau] + within_y;
                // Q̂ = m·k/n · (2·cross/(m·k) − within X/C(m,2) − within Y/C(k,2)), n the same
                // for every stretch (divided by below).
                let q = 2.0 * cross - m * kf * (within_x * per_pair_x + within_y * per_pair_y);
                if best.is_none_or(|(_, _, bq)| q > bq) {
                    best = Some((tau, k, q));
                    if q / lenf >= reach {
                        return Some((tau, k, q / lenf));
                    }
                }
            }
        }
        std::mem::swap(two_below, one_below);
        std::mem::swap(one_below, this);
    }
    best.map(|(tau, k, q)| (tau, k, q / lenf))
}

/// The widest stretch searched: a level that returns within this many runs (a regression
/// found and fixed) is a stretch; a wider one is two splits, which the split search finds. A
/// shuffle costs O(n · this), which bounds the cost in long series.
pub const STRETCH_WIDEST: usize = 64;

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
        q_of(x, y)
    }

    /// The best stretch (τ, k, Q̂) by the definition: Y = z[τ..τ+k], X the rest, at least
    /// `min` points before and after it and in it, at most `STRETCH_WIDEST` in it.
    fn stretch_by_definition(z: &[f64], min: usize) -> (usize, usize, f64) {
        let mut best = (0, 0, f64::MIN);
        for tau in min..z.len() {
            for k in min..=STRETCH_WIDEST {
                if tau + k + min > z.len() {
                    break;
                }
                let outside: Vec<f64> = [&z[..tau], &z[tau + k..]].concat();
                let q = q_of(&outside, &z[tau..tau + k]);
                if q > best.2 {
                    best = (tau, k, q);
                }
            }
        }
        best
    }

    /// Q̂ of two samples by the definition.
    fn q_of(x: &[f64], y: &[f64]) -> f64 {
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

    /// A shuffle's search may stop at the first split or stretch that reaches the observed
    /// Q̂: every p is the one the whole search gives, in series with and without changes,
    /// and at a level loose enough that many shuffles are taken.
    #[test]
    fn stopping_a_shuffle_at_the_first_reach_gives_the_same_p() {
        type Statistic = fn(usize, &mut Scratch, f64) -> Option<f64>;
        fn split_whole(min: usize, scratch: &mut Scratch, _: f64) -> Option<f64> {
            best_split(min, scratch).map(|(_, q)| q)
        }
        fn stretch_whole(min: usize, scratch: &mut Scratch, _: f64) -> Option<f64> {
            best_stretch(min, scratch).map(|(_, _, q)| q)
        }
        let series = [
            noisy(&[(80, 100.0)], 0.02, 1),
            noisy(&[(40, 100.0), (40, 104.0)], 0.02, 2),
            noisy(&[(30, 100.0), (10, 95.0), (30, 100.0)], 0.02, 3),
            noisy(&[(12, 100.0)], 0.05, 4),
        ];
        let mut compared = 0;
        for z in &series {
            for max_p in [0.002, 0.05, 0.5] {
                let s = prepared(&Settings::default(), max_p);
                let mut scratch = Scratch::new(z.len());
                scratch.rank(z);
                let whole: [Statistic; 2] = [split_whole, stretch_whole];
                let until: [Statistic; 2] = [split_q, stretch_q];
                for (whole, until) in whole.into_iter().zip(until) {
                    let Some(q) = whole(s.min_size, &mut scratch, f64::INFINITY) else {
                        continue;
                    };
                    let p = |f: Statistic| {
                        let mut rng = ChaCha8Rng::seed_from_u64(7);
                        let mut scratch = Scratch::new(z.len());
                        permutation_p(z, q, &s, &mut rng, &mut scratch, f)
                    };
                    assert_eq!(p(until).to_bits(), p(whole).to_bits(), "{z:?} at {max_p}");
                    compared += 1;
                }
            }
        }
        assert_eq!(compared, 24);
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
        assert!((q - bq).abs() < 1e-8 * bq.abs(), "{q} {bq}");
    }

    #[test]
    fn the_best_stretch_is_the_one_the_definition_finds() {
        // A dip in the middle, a tie, and far from zero: the sums along widths against the
        // pairs of each stretch and its outside, one by one.
        let mut z = noisy(&[(25, 100.0), (6, 91.0), (22, 100.0)], 0.02, 9);
        z[40] = z[3];
        let shifted: Vec<f64> = z.iter().map(|x| x + 1e6).collect();
        let mut scratch = Scratch::new(z.len());
        scratch.rank(&shifted);
        let (t, k, q) = best_stretch(3, &mut scratch).unwrap();
        let best = stretch_by_definition(&z, 3);
        assert_eq!((t, k), (best.0, best.1));
        assert_eq!((t, k), (25, 6));
        assert!((q - best.2).abs() < 1e-8 * best.2.abs(), "{q} {best:?}");
        // No split of the whole separates the dip as well.
        let plain = (3..=z.len() - 3)
            .map(|t| q_by_definition(&z, t))
            .fold(f64::MIN, f64::max);
        assert!(q > 2.0 * plain, "{q} against {plain}");
    }

    #[test]
    fn a_dip_that_is_fixed_is_two_changes() {
        // 10% lower for ten runs in the middle of 200, 1.7% noise: no split of the series is
        // kept, the stretch is, as its start and its end.
        for seed in 0..5 {
            let z = noisy(&[(95, 100.0), (10, 90.0), (95, 100.0)], 0.017, seed);
            let s = Settings::default();
            let cuts: Vec<usize> = change_points(&z, &s).iter().map(|c| c.index).collect();
            let at: Vec<usize> = stretches(&z, &cuts, &s).iter().map(|c| c.index).collect();
            assert_eq!(at.len(), 2, "seed {seed}: {cuts:?} {at:?}");
            assert!(
                (94..=96).contains(&at[0]) && (104..=106).contains(&at[1]),
                "seed {seed}: {at:?}"
            );
        }
    }

    #[test]
    fn noise_alone_rarely_makes_a_stretch() {
        let false_changes: usize = (0..100)
            .map(|seed| {
                stretches(
                    &noisy(&[(100, 100.0)], 0.03, seed),
                    &[],
                    &Settings::default(),
                )
                .len()
            })
            .sum();
        assert!(
            false_changes <= 8,
            "{false_changes} false changes (two a stretch) in 100 series"
        );
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
