//! How a figure follows the host's speed over a host's earlier runs: the regression of the
//! figure's logarithm on the logarithm of the fixed-work reference read beside it. Where it
//! follows, a change between two runs can be told net of the host's change of speed, and
//! judged against the spread that is left.

use super::summary::Summary;
use super::RunSpread;

/// How a figure moved with the host's speed over its earlier runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Follows {
    /// The runs it was learnt from.
    pub runs: usize,
    /// d ln(figure) / d ln(reference): about −1 for a rate the host's speed sets alone (the
    /// reference is a time), +1 for such a time, 0 for a figure the host's speed does not
    /// move.
    pub slope: f64,
    /// The correlation of the two logarithms.
    pub r: f64,
    /// The figure's spread net of the host's speed: the residuals' standard deviation (n − 2
    /// degrees of freedom), widened for the slope's own error in a change between two more
    /// runs, and counted as n − 1 runs so that its bound's t has n − 2 degrees of freedom.
    pub net: RunSpread,
}

impl Follows {
    /// The fewest earlier runs a slope is learnt from.
    pub const MIN_RUNS: usize = 5;

    /// The most runs the slope and the rank test are learnt from (both look at every pair):
    /// a longer history is thinned evenly to this many.
    pub const MAX_RUNS: usize = 1000;

    /// From (figure, reference) pairs of earlier runs; the pairs with both positive and finite
    /// count. None with fewer than [`Follows::MIN_RUNS`] of them, or where Kendall's rank
    /// correlation is not significant at 5%: as far as the history can tell, the figure does
    /// not follow the host's speed, and its change is judged as measured.
    ///
    /// Ranks and the Theil–Sen slope (the median of the slopes between every two runs), not
    /// least squares: one run where the host was slow and the figure changed for its own
    /// reason on the same night (a job four times the work while the host ran half as fast)
    /// would otherwise set the slope alone (seen: slope +3 from that one run, and the change
    /// netted away). A point far out is one vote among the pairs here.
    pub fn of(pairs: &[(f64, f64)]) -> Option<Follows> {
        let all: Vec<(f64, f64)> = pairs
            .iter()
            .filter(|(v, h)| v.is_finite() && h.is_finite() && *v > 0.0 && *h > 0.0)
            .map(|(v, h)| (v.ln(), h.ln()))
            .collect();
        let logs = thinned(&all, Self::MAX_RUNS);
        let n = logs.len();
        if n < Self::MIN_RUNS {
            return None;
        }
        let ys: Vec<f64> = logs.iter().map(|p| p.0).collect();
        let xs: Vec<f64> = logs.iter().map(|p| p.1).collect();
        let (sy, sx) = (Summary::of(&ys)?, Summary::of(&xs)?);
        if sx.sd == 0.0 || sy.sd == 0.0 || !kendall_significant(&logs) {
            return None;
        }
        let sxy: f64 = logs
            .iter()
            .map(|(y, x)| (y - sy.mean) * (x - sx.mean))
            .sum::<f64>()
            / (n - 1) as f64;
        let r = (sxy / (sx.sd * sy.sd)).clamp(-1.0, 1.0);
        let slope = theil_sen(&logs)?;
        let offsets: Vec<f64> = logs.iter().map(|(y, x)| y - slope * x).collect();
        let intercept = super::median(&offsets)?;
        let residual_ss: f64 = logs
            .iter()
            .map(|(y, x)| (y - intercept - slope * x).powi(2))
            .sum();
        let df = (n - 2) as f64;
        // A change between two more runs: 2s² from the runs, and the slope's error times the
        // reference's change (typically √2 · its spread), s²·2/(n − 1) more.
        let residual_sd = (residual_ss / df).sqrt() * (1.0 + 1.0 / (n - 1) as f64).sqrt();
        Some(Follows {
            runs: n,
            slope,
            r,
            net: RunSpread {
                runs: n - 1,
                centre: sy.mean.exp(),
                sd: residual_sd,
                on_ratio: true,
            },
        })
    }

    /// The ratio B/A of a figure net of the host's speed, from its measured ratio and the
    /// reference's (B's over A's: above 1 where B's host ran slower).
    pub fn net_ratio(&self, ratio: f64, reference_ratio: f64) -> f64 {
        ratio / reference_ratio.powf(self.slope)
    }
}

/// `points` thinned evenly to at most `most` of them, the newest kept.
fn thinned(points: &[(f64, f64)], most: usize) -> Vec<(f64, f64)> {
    let n = points.len();
    if n <= most {
        return points.to_vec();
    }
    (0..most)
        .map(|i| points[n - 1 - i * (n - 1) / (most - 1)])
        .rev()
        .collect()
}

/// Whether Kendall's τ of the (y, x) pairs is significant at 5%, two-sided: the normal
/// approximation of S, the concordant pairs less the discordant, whose variance with no ties
/// is n(n − 1)(2n + 5)/18 (a tie counts neither way).
fn kendall_significant(points: &[(f64, f64)]) -> bool {
    let n = points.len();
    let mut s = 0i64;
    for (i, (yi, xi)) in points.iter().enumerate() {
        for (yj, xj) in &points[i + 1..] {
            let sign = ((yj - yi) * (xj - xi)).signum();
            if sign != 0.0 && sign.is_finite() {
                s += sign as i64;
            }
        }
    }
    let nf = n as f64;
    let var = nf * (nf - 1.0) * (2.0 * nf + 5.0) / 18.0;
    // S moves in steps of 2: the continuity correction takes one off its size.
    let z = ((s.abs() as f64) - 1.0).max(0.0) / var.sqrt();
    z >= 1.959_963_984_540_054
}

/// The Theil–Sen slope of y on x: the median of the slopes between every two points whose x
/// differ. None where no two do.
fn theil_sen(points: &[(f64, f64)]) -> Option<f64> {
    let mut slopes = Vec::with_capacity(points.len() * (points.len() - 1) / 2);
    for (i, (yi, xi)) in points.iter().enumerate() {
        for (yj, xj) in &points[i + 1..] {
            if xj != xi {
                slopes.push((yj - yi) / (xj - xi));
            }
        }
    }
    super::median(&slopes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_distr::{Distribution, StandardNormal};

    /// Runs of a rate that the host's speed sets (`slope` −1) with `noise` of its own: the
    /// reference (a time) moves by `host` sd, and reads it with 1% error.
    fn runs(n: usize, host: f64, noise: f64, seed: u64) -> Vec<(f64, f64)> {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let mut normal = move || -> f64 { StandardNormal.sample(&mut rng) };
        (0..n)
            .map(|_| {
                let speed = host * normal();
                let value = 1000.0 * (speed + noise * normal()).exp();
                let reference = 1.0 * (-speed + 0.01 * normal()).exp();
                (value, reference)
            })
            .collect()
    }

    #[test]
    fn a_figure_the_hosts_speed_moves_is_learnt_with_its_slope_and_what_is_left() {
        let f = Follows::of(&runs(20, 0.06, 0.01, 1)).expect("it follows");
        assert_eq!(f.runs, 20);
        assert!((f.slope + 1.0).abs() < 0.25, "slope {}", f.slope);
        assert!(f.r < -0.9, "r {}", f.r);
        // About √(1% ² + 1% ²) is left of a 6% spread.
        assert!(f.net.sd < 0.025, "net sd {}", f.net.sd);
        assert_eq!(f.net.runs, 19);
        // A host 8% slower and a rate 8% lower: nothing net of it.
        let net = f.net_ratio(1.0 / 1.08, 1.08);
        assert!((net - 1.0).abs() < 0.03, "net {net}");
    }

    #[test]
    fn a_figure_that_does_not_follow_the_hosts_speed_is_not_netted() {
        // The figure's own spread, the host's speed apart from it.
        let independent: Vec<(f64, f64)> = runs(20, 0.06, 0.01, 2)
            .into_iter()
            .zip(runs(20, 0.06, 0.01, 3))
            .map(|((v, _), (_, h))| (v, h))
            .collect();
        assert_eq!(Follows::of(&independent), None);
        // Too short a history, and a still reference.
        assert_eq!(Follows::of(&runs(4, 0.06, 0.01, 4)), None);
        let still: Vec<(f64, f64)> = (0..8).map(|i| (100.0 + i as f64, 1.0)).collect();
        assert_eq!(Follows::of(&still), None);
    }

    /// The net bound is a prediction bound: over many unchanged pairs of runs after a history
    /// of 8, the net change passes it about one time in twenty, not more.
    #[test]
    fn unchanged_runs_pass_the_net_bound_about_one_time_in_twenty() {
        let (mut judged, mut beyond) = (0, 0);
        for seed in 0..400 {
            let all = runs(10, 0.06, 0.02, 100 + seed);
            let Some(f) = Follows::of(&all[..8]) else {
                continue;
            };
            let ((va, ha), (vb, hb)) = (all[8], all[9]);
            let net = f.net_ratio(vb / va, hb / ha);
            let bound = f.net.bound(crate::stats::Grain::default());
            judged += 1;
            if !bound.holds((net - 1.0) * 100.0) {
                beyond += 1;
            }
        }
        let rate = beyond as f64 / judged as f64;
        assert!(judged > 300, "{judged} histories followed");
        assert!(rate <= 0.075, "{beyond} of {judged} beyond");
    }
}
