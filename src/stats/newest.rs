//! A change in the newest points of a series: the last 1 to [`MAX_NEWEST`] points against all
//! the points before them. E-divisive needs a few points on each side of a split and weighs a
//! split by both sides' sizes, so a step in last night's run or the last three nights' is found
//! late or not at all; this test asks that question alone. docs/history.md tells how it is
//! judged and what it costs the rest of the search.

use rand::Rng;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use statrs::distribution::{ContinuousCDF, StudentsT};

/// The most newest points tested as a new level.
pub const MAX_NEWEST: usize = 5;

/// The fewest points before the newest ones: fewer say too little of the level left.
pub const MIN_BEFORE: usize = 5;

/// The newest points that differ from those before them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Newest {
    /// How many of the newest points are the new level (1 to [`MAX_NEWEST`]).
    pub k: usize,
    /// Their Student t against the points before: the difference of the means over its
    /// standard error, from the spread within both (pooled).
    pub t: f64,
    /// The permutation p (no shape of noise assumed): how often a random draw of the points
    /// as the newest ones stands out as far (the largest |t| over every k). 1 where the
    /// shuffles were not run: Student's t found no candidate (below). Where p is above
    /// `max_p`, k is the one Student's t finds most (a suspicion).
    pub p: f64,
    /// The p of that t by Student's t distribution: what it would be if the noise were normal.
    pub p_normal: f64,
    /// Whether the shuffles ran (`p` is then theirs; else it is 1 untested).
    pub shuffled: bool,
}

/// Tests whether the newest points of `series` are a new level, at `max_p`. None where the
/// series is too short (fewer than [`MIN_BEFORE`] + 1 points) or not all finite.
///
/// For each k, t_k of the newest k points against the rest. Where Student's t gives no k a p
/// within `max_p` / kmax (Bonferroni over the k), the newest points are no change even for
/// normal noise and the shuffles are skipped (most series, at a few operations each).
/// Otherwise the newest places are filled with random draws of the points, 20 / `max_p` times
/// (seeded: the same series gives the same answer), and p is the share of draws whose largest
/// |t| over every k is as large as the observed one, so that trying five k costs no false
/// alarms.
pub fn newest(series: &[f64], max_p: f64, seed: u64) -> Option<Newest> {
    let n = series.len();
    if n <= MIN_BEFORE || series.iter().any(|x| !x.is_finite()) {
        return None;
    }
    let kmax = MAX_NEWEST.min(n - MIN_BEFORE);
    // Centred, the sums of squares below keep their precision at any scale.
    let mean = series.iter().sum::<f64>() / n as f64;
    let mut z: Vec<f64> = series.iter().rev().map(|x| x - mean).collect();
    let sum: f64 = z.iter().sum();
    let squares: f64 = z.iter().map(|x| x * x).sum();
    let mut t = [0.0; MAX_NEWEST];
    t_each(&z[..kmax], n, sum, squares, &mut t);
    let student = StudentsT::new(0.0, 1.0, (n - 2) as f64).ok()?;
    let p_normal = |t: f64| {
        if t.is_infinite() {
            0.0
        } else {
            2.0 * (1.0 - student.cdf(t.abs()))
        }
    };
    let (normal_k, normal) = (0..kmax)
        .map(|i| (i, p_normal(t[i])))
        .min_by(|a, b| a.1.total_cmp(&b.1))?;
    let largest = |t: &[f64; MAX_NEWEST]| {
        (0..kmax)
            .max_by(|&a, &b| t[a].abs().total_cmp(&t[b].abs()))
            .unwrap_or(0)
    };
    let k = largest(&t);
    let mut p = 1.0;
    let shuffled = normal * kmax as f64 <= max_p;
    if shuffled {
        let observed = t[k].abs();
        let shuffles = ((20.0 / max_p).ceil() as usize).clamp(999, 200_000);
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut drawn = [0.0; MAX_NEWEST];
        let mut reached = 1usize;
        for _ in 0..shuffles {
            // A partial Fisher-Yates: the first kmax places get a uniform draw of the points.
            for i in 0..kmax {
                let j = rng.gen_range(i..n);
                z.swap(i, j);
            }
            t_each(&z[..kmax], n, sum, squares, &mut drawn);
            if drawn[largest(&drawn)].abs() >= observed {
                reached += 1;
            }
        }
        p = reached as f64 / (shuffles + 1) as f64;
    }
    // Not a change: the k that Student's t finds most, as a suspicion is said.
    let k = if p <= max_p { k } else { normal_k };
    Some(Newest {
        k: k + 1,
        t: t[k],
        p,
        p_normal: p_normal(t[k]),
        shuffled,
    })
}

/// The newest k points of a series against the points before them, for one k.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NewestLevel {
    pub k: usize,
    /// The newest k points' mean, and the mean of those before.
    pub after: f64,
    pub before: f64,
    /// Student's t of `after - before` (the spread within both, pooled), and its standard
    /// error: the same test gives the p and the interval.
    pub t: f64,
    pub se: f64,
    /// Degrees of freedom: the points less two means.
    pub df: f64,
}

impl NewestLevel {
    /// The one-sided p of Student's t toward `sign` (+1: the newest higher, −1: lower).
    pub fn p_toward(&self, sign: f64) -> f64 {
        let t = self.t * sign;
        if t.is_infinite() {
            return if t > 0.0 { 0.0 } else { 1.0 };
        }
        StudentsT::new(0.0, 1.0, self.df).map_or(1.0, |d| 1.0 - d.cdf(t))
    }

    /// The 95% interval of `after - before` from the same t.
    pub fn interval(&self) -> (f64, f64) {
        let q = StudentsT::new(0.0, 1.0, self.df).map_or(f64::INFINITY, |d| d.inverse_cdf(0.975));
        let d = self.after - self.before;
        (d - q * self.se, d + q * self.se)
    }
}

/// Each k of 1 to `kmax` (at most [`MAX_NEWEST`], and leaving [`MIN_BEFORE`] points before):
/// the newest k points against the rest. Empty where the series is too short or not finite.
pub fn each_newest(series: &[f64], kmax: usize) -> Vec<NewestLevel> {
    let n = series.len();
    if n <= MIN_BEFORE || series.iter().any(|x| !x.is_finite()) {
        return Vec::new();
    }
    let kmax = kmax.min(MAX_NEWEST).min(n - MIN_BEFORE);
    let mean = series.iter().sum::<f64>() / n as f64;
    let z: Vec<f64> = series.iter().rev().map(|x| x - mean).collect();
    let sum: f64 = z.iter().sum();
    let squares: f64 = z.iter().map(|x| x * x).sum();
    let mut t = [0.0; MAX_NEWEST];
    t_each(&z[..kmax], n, sum, squares, &mut t);
    (0..kmax)
        .map(|i| {
            let k = i + 1;
            let after = series[n - k..].iter().sum::<f64>() / k as f64;
            let before = series[..n - k].iter().sum::<f64>() / (n - k) as f64;
            let d = after - before;
            let se = if t[i].is_finite() && t[i] != 0.0 {
                (d / t[i]).abs()
            } else {
                0.0
            };
            NewestLevel {
                k,
                after,
                before,
                t: t[i],
                se,
                df: (n - 2) as f64,
            }
        })
        .collect()
}

/// Whether `level`'s most extreme point toward `sign` (+1: highest, −1: lowest) lies further
/// from its mean, in standard deviations, than normal noise puts the most extreme of that many
/// points one time in 1/`alpha` (Grubbs' test, one-sided): its noise has a heavier tail than
/// Student's t assumes. False for fewer than three points or no spread.
pub fn heavy_tailed(level: &[f64], sign: f64, alpha: f64) -> bool {
    let n = level.len();
    if n < 3 {
        return false;
    }
    let nf = n as f64;
    let mean = level.iter().sum::<f64>() / nf;
    let sd = (level.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (nf - 1.0)).sqrt();
    if sd <= 0.0 || !sd.is_finite() {
        return false;
    }
    let g = level
        .iter()
        .map(|x| (x - mean) * sign / sd)
        .fold(f64::NEG_INFINITY, f64::max);
    let Ok(student) = StudentsT::new(0.0, 1.0, nf - 2.0) else {
        return false;
    };
    let t = student.inverse_cdf(1.0 - alpha / nf);
    let critical = (nf - 1.0) / nf.sqrt() * (t * t / (nf - 2.0 + t * t)).sqrt();
    g > critical
}

/// Whether some stretch of `k` consecutive points of `level` stands out from the rest of
/// `level` toward `sign` (+1: higher, −1: lower) by Student's t (pooled, as [`each_newest`]) at
/// least as far as `t`: the level's own noise has already done, without a change, what the
/// newest points do. Heavy-tailed figures (a spread, a tail latency) show it often; their
/// far newest points are then not taken for a change on normal noise's word.
pub fn level_has_seen(level: &[f64], k: usize, t: f64, sign: f64) -> bool {
    let m = level.len();
    if k == 0 || m < k + 2 {
        return false;
    }
    let mean = level.iter().sum::<f64>() / m as f64;
    let z: Vec<f64> = level.iter().map(|x| x - mean).collect();
    let sum: f64 = z.iter().sum();
    let squares: f64 = z.iter().map(|x| x * x).sum();
    let (mut block, mut block_sq) = (0.0, 0.0);
    for (i, x) in z.iter().enumerate() {
        block += x;
        block_sq += x * x;
        if i >= k {
            let old = z[i - k];
            block -= old;
            block_sq -= old * old;
        }
        if i + 1 < k {
            continue;
        }
        // No spread at all within the level and the stretch: no t to compare (0, not ±∞).
        let tb = Some(pooled_t(block, block_sq, k, sum, squares, m)).filter(|t| t.is_finite());
        if tb.unwrap_or(0.0) * sign >= t * sign {
            return true;
        }
    }
    false
}

/// The t of the newest k points (k = 1 to `newest.len()`) against the rest, into `out[k - 1]`.
/// `newest` is newest first; `sum` and `squares` are over all `n` points.
fn t_each(newest: &[f64], n: usize, sum: f64, squares: f64, out: &mut [f64; MAX_NEWEST]) {
    let (mut tail, mut tail_sq) = (0.0, 0.0);
    for (i, x) in newest.iter().enumerate() {
        tail += x;
        tail_sq += x * x;
        out[i] = pooled_t(tail, tail_sq, i + 1, sum, squares, n);
    }
}

/// Student's t of a block of `k` of `n` points (their sum and sum of squares, `block` and
/// `block_sq`) against the other points, from the sum and sum of squares of all (`sum`,
/// `squares`; all about one centre). Pooled: a new level is one level, so block points far
/// apart from each other (a slow run next to the new level) weaken the case for it. ±∞ where
/// neither side has any spread but their means differ.
fn pooled_t(block: f64, block_sq: f64, k: usize, sum: f64, squares: f64, n: usize) -> f64 {
    let (kf, m) = (k as f64, (n - k) as f64);
    let others = sum - block;
    let within = ((squares - block_sq) - others * others / m) + (block_sq - block * block / kf);
    let var = within.max(0.0) / (n as f64 - 2.0);
    let diff = block / kf - others / m;
    if var > 0.0 {
        diff / (var * (1.0 / kf + 1.0 / m)).sqrt()
    } else if diff != 0.0 {
        diff.signum() * f64::INFINITY
    } else {
        0.0
    }
}

/// How many more points at the newest level would make `series`' newest points a change at
/// `max_p` (at most [`MAX_NEWEST`] - k more): None where even that many would not.
pub fn runs_to_certain(series: &[f64], found: &Newest, max_p: f64, seed: u64) -> Option<usize> {
    let level = series[series.len() - found.k..].iter().sum::<f64>() / found.k as f64;
    let mut longer = series.to_vec();
    for more in 1..=MAX_NEWEST - found.k {
        longer.push(level);
        if newest(&longer, max_p, seed).is_some_and(|n| n.p <= max_p) {
            return Some(more);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_distr::{Distribution, Normal};

    fn noisy(n: usize, sd: f64, seed: u64) -> Vec<f64> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let d = Normal::new(100.0, sd).unwrap();
        (0..n).map(|_| d.sample(&mut rng)).collect()
    }

    #[test]
    fn a_step_in_the_newest_three_of_forty_is_found_as_three() {
        let mut s = noisy(40, 3.0, 7);
        for x in &mut s[37..] {
            *x *= 1.10;
        }
        let n = newest(&s, 0.002, 1).unwrap();
        assert_eq!(n.k, 3, "{n:?}");
        assert!(n.t > 0.0 && n.p <= 0.002, "{n:?}");
    }

    #[test]
    fn one_newest_point_of_forty_is_never_certain_but_can_be_suspected() {
        // Any one point of forty is the most extreme one time in forty: the permutation p
        // cannot go below 1/40, however far the point lies. Normal noise would call it.
        let mut s = noisy(40, 3.0, 8);
        s[39] = 150.0;
        let n = newest(&s, 0.002, 1).unwrap();
        assert_eq!(n.k, 1, "{n:?}");
        assert!(n.p >= 1.0 / 40.0 - 0.005, "{n:?}");
        assert!(n.p_normal < 1e-6, "{n:?}");
        // One or two more nights at that level make it a change: both newest of 41 are a
        // random pair one time in 820, about as often again some k stands out as far, so p is
        // near 0.002; three of 42 are a random triple one time in 11,480.
        assert!(
            matches!(runs_to_certain(&s, &n, 0.002, 1), Some(1 | 2)),
            "{n:?}"
        );
    }

    #[test]
    fn noise_alone_is_called_a_change_at_about_the_rate_asked() {
        let calls = (0..400)
            .filter(|&seed| newest(&noisy(30, 5.0, 1000 + seed), 0.05, seed).unwrap().p <= 0.05)
            .count();
        // 5% of 400 is 20; binomial sd about 4.4.
        assert!((6..=34).contains(&calls), "{calls} of 400");
    }

    #[test]
    fn the_same_series_and_seed_give_the_same_answer_at_any_scale() {
        let s = noisy(25, 2.0, 3);
        assert_eq!(newest(&s, 0.01, 5), newest(&s, 0.01, 5));
        // Centring keeps t exact for values far from zero (ns figures of a second).
        let far: Vec<f64> = s.iter().map(|x| x * 1e7).collect();
        let (a, b) = (newest(&s, 0.01, 5).unwrap(), newest(&far, 0.01, 5).unwrap());
        assert_eq!(a.k, b.k);
        assert!((a.t - b.t).abs() < 1e-6 * a.t.abs().max(1.0), "{a:?} {b:?}");
    }

    #[test]
    fn too_short_or_broken_series_are_not_tested() {
        assert!(newest(&[1.0; 5], 0.01, 1).is_none());
        assert!(newest(&[1.0, 2.0, f64::NAN, 3.0, 4.0, 5.0, 6.0], 0.01, 1).is_none());
        // A flat series has no change; one flat series that jumps at the end has.
        let flat = newest(&[1.0; 8], 0.01, 1).unwrap();
        assert_eq!(flat.t, 0.0);
        let mut jump = vec![1.0; 30];
        jump.extend([2.0; 3]);
        let j = newest(&jump, 0.01, 1).unwrap();
        // (Centring leaves a rounding error in the flat points' spread: t is huge, not ∞.)
        assert!(j.k == 3 && j.t > 1e6 && j.p <= 0.01, "{j:?}");
    }

    #[test]
    fn each_newest_gives_the_pooled_t_its_p_and_interval() {
        let mut s = noisy(30, 1.0, 21);
        s.push(110.0);
        let each = each_newest(&s, 5);
        assert_eq!(each.len(), 5);
        let one = each[0];
        assert_eq!(one.k, 1);
        assert!((one.after - 110.0).abs() < 1e-9 && (one.before - 100.0).abs() < 1.0);
        let (lo, hi) = one.interval();
        assert!(
            lo > 5.0 && hi < 15.0 && lo < one.after - one.before,
            "{one:?}"
        );
        assert!(
            one.p_toward(1.0) < 1e-6 && one.p_toward(-1.0) > 0.99,
            "{one:?}"
        );
        assert!(each_newest(&s[..5], 5).is_empty());
    }

    #[test]
    fn a_heavy_tail_is_told_from_normal_noise() {
        let calm = noisy(30, 1.0, 22);
        assert!(!heavy_tailed(&calm, 1.0, 0.05));
        let mut spiky = calm.clone();
        spiky[7] = 112.0;
        assert!(heavy_tailed(&spiky, 1.0, 0.05));
        // Only the tail asked about counts.
        assert!(!heavy_tailed(&spiky, -1.0, 0.05));
    }

    #[test]
    fn a_level_that_did_it_before_is_seen() {
        let mut level = noisy(30, 1.0, 23);
        let t = |level: &[f64]| {
            let mut s = level.to_vec();
            s.push(105.0);
            each_newest(&s, 1)[0].t
        };
        let newest_t = t(&level);
        assert!(!level_has_seen(&level, 1, newest_t, 1.0));
        level[10] = 108.0;
        assert!(level_has_seen(&level, 1, newest_t, 1.0));
        // A stretch as far the other way is not the same thing.
        level[10] = 92.0;
        assert!(!level_has_seen(&level, 1, newest_t, 1.0));
    }
}
