//! The test `compare` uses on per-run figures: Welch's t-test on their logarithms.

use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF, StudentsT};

use super::{welch_test, Summary};

/// The ratio B/A of the geometric means, its 95% interval and the two-sided p-value.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RatioTest {
    pub ratio: f64,
    pub ci_low: f64,
    pub ci_high: f64,
    pub p_value: f64,
    pub degrees_of_freedom: f64,
}

impl RatioTest {
    /// Significant at the 5% level: the interval excludes a ratio of 1.
    pub fn significant(&self) -> bool {
        self.p_value < 0.05
    }

    /// The same test about another estimate of the same ratio (see `WelchTest::about`): the
    /// interval keeps its width in logarithms and is centred on `ratio`, which must be
    /// positive; the p-value is that estimate's.
    pub fn about(self, ratio: f64) -> RatioTest {
        let half = (self.ci_high / self.ratio).ln();
        RatioTest {
            ratio,
            ci_low: ratio * (-half).exp(),
            ci_high: ratio * half.exp(),
            p_value: super::welch::p_at(ratio.ln(), half, self.degrees_of_freedom),
            degrees_of_freedom: self.degrees_of_freedom,
        }
    }
}

/// Two or more values a side: Welch on the logarithms. One value on a side against two or
/// more on the other: that one run is tested as a new draw from the other side's spread (the
/// prediction interval, `se = s·√(1 + 1/n)`, n − 1 degrees of freedom), which assumes the single
/// run spreads as the others do. None when both sides have one value or a side none, or a
/// value is not a positive finite number (a ratio needs positive figures).
///
/// Why this one: per-run figures are few (3–10 a side) and skewed to the right (a run that a
/// neighbour slowed is far slower; none is far faster), and a change is a factor — a kernel that
/// makes pipes 10% faster does so at any pipe speed. On logarithms the skew shrinks and a factor
/// becomes a difference, so the interval of the difference of the mean logarithms, raised back
/// with `exp`, is the interval of the ratio B/A of the geometric means: a ratio's interval
/// computed as one, not a difference's interval divided by A's mean. Welch's form does not
/// assume the two sides spread alike (a noisy afternoon against a quiet night). A permutation
/// test would assume less, but with three runs a side it has only 20 orderings, so its smallest
/// two-sided p-value is 0.1: it could never call anything at 95%.
pub fn log_ratio_test(a: &[f64], b: &[f64]) -> Option<RatioTest> {
    if a.iter().chain(b).any(|x| !(x.is_finite() && *x > 0.0)) {
        return None;
    }
    let la: Vec<f64> = a.iter().map(|x| x.ln()).collect();
    let lb: Vec<f64> = b.iter().map(|x| x.ln()).collect();
    let (difference, ci_low, ci_high, p_value, df) = match (la.len(), lb.len()) {
        (1, n) | (n, 1) if n >= 2 => {
            let (single, many, sign) = if la.len() == 1 {
                (la[0], &lb, -1.0)
            } else {
                (lb[0], &la, 1.0)
            };
            let s = Summary::of(many)?;
            // B − A in logarithms, whichever side is the single run.
            let difference = sign * (single - s.mean);
            let df = (n - 1) as f64;
            let se = s.sd * (1.0 + 1.0 / n as f64).sqrt();
            if se == 0.0 {
                let p = if difference == 0.0 { 1.0 } else { 0.0 };
                (difference, difference, difference, p, df)
            } else {
                let t = StudentsT::new(0.0, 1.0, df).ok()?;
                let half = t.inverse_cdf(0.975) * se;
                let p = 2.0 * (1.0 - t.cdf((difference / se).abs()));
                (difference, difference - half, difference + half, p, df)
            }
        }
        _ => {
            let w = welch_test(&la, &lb)?;
            (
                w.difference,
                w.ci_low,
                w.ci_high,
                w.p_value,
                w.degrees_of_freedom,
            )
        }
    };
    Some(RatioTest {
        ratio: difference.exp(),
        ci_low: ci_low.exp(),
        ci_high: ci_high.exp(),
        p_value,
        degrees_of_freedom: df,
    })
}

/// Runs a side (at least 2, at most `max`) that [`log_ratio_test`] needs to find a change of
/// `change_pct` four times in five, when each run's figure is off by a factor of spread
/// `cv_pct` (the run-to-run coefficient of variation): the smallest n with
/// n ≥ 2·(t₀.₉₇₅ + t₀.₈₀)²·σ²/δ² on 2n − 2 degrees of freedom, σ and δ the spread and the change
/// in logarithms. None when even `max` runs are not enough.
pub fn runs_to_detect(cv_pct: f64, change_pct: f64, max: u32) -> Option<u32> {
    let sigma = (1.0 + cv_pct / 100.0).ln();
    let delta = (1.0 + change_pct / 100.0).ln().abs();
    if !(sigma.is_finite() && delta > 0.0) {
        return None;
    }
    (2..=max).find(|&n| {
        let Ok(t) = StudentsT::new(0.0, 1.0, (2 * n - 2) as f64) else {
            return false;
        };
        let z = t.inverse_cdf(0.975) + t.inverse_cdf(0.80);
        n as f64 >= 2.0 * z * z * sigma * sigma / (delta * delta)
    })
}

/// How far a figure moves between two runs on a host: the 95% bound of their change, in
/// percent, on the ratio's scale (`on_ratio`: B/A within 1/(1 + pct/100) and 1 + pct/100) or
/// on the difference's (|B − A| / |A| within pct/100).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunBound {
    pub pct: f64,
    pub on_ratio: bool,
}

impl RunBound {
    /// A bound on the difference, as a noise floor is.
    pub fn linear(pct: f64) -> RunBound {
        RunBound {
            pct,
            on_ratio: false,
        }
    }

    /// Whether a change of `change_pct` (percent of A) stays within the bound. On the ratio's
    /// scale a change to or through zero (B/A not positive) never does.
    pub fn holds(&self, change_pct: f64) -> bool {
        if self.on_ratio {
            let ratio = 1.0 + change_pct / 100.0;
            ratio > 0.0 && ratio.ln().abs() <= (1.0 + self.pct / 100.0).ln()
        } else {
            change_pct.abs() <= self.pct
        }
    }
}

/// A figure's run-to-run spread, learnt from the values of its earlier runs on a host: what
/// the bound of the change between two more runs is made from (`RunSpread::bound`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunSpread {
    /// The runs it was learnt from.
    pub runs: usize,
    /// The runs' centre: their geometric mean on the ratio's scale, else their mean.
    pub centre: f64,
    /// Their spread relative to the centre: the standard deviation of their logarithms on
    /// the ratio's scale, else the standard deviation over |mean|.
    pub sd: f64,
    /// All the values were positive: the bound is on the ratio's scale.
    pub on_ratio: bool,
}

impl RunSpread {
    /// From the values of at least three runs (the finite ones); None with fewer, or where a
    /// value is not positive and their mean is 0.
    pub fn of(values: &[f64]) -> Option<RunSpread> {
        let v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
        if v.len() < 3 {
            return None;
        }
        if v.iter().all(|x| *x > 0.0) {
            let logs: Vec<f64> = v.iter().map(|x| x.ln()).collect();
            let s = Summary::of(&logs)?;
            return Some(RunSpread {
                runs: v.len(),
                centre: s.mean.exp(),
                sd: s.sd,
                on_ratio: true,
            });
        }
        let s = Summary::of(&v)?;
        (s.mean != 0.0).then(|| RunSpread {
            runs: v.len(),
            centre: s.mean,
            sd: s.sd / s.mean.abs(),
            on_ratio: false,
        })
    }

    /// The 95% bound of the change between two more runs: the prediction interval of their
    /// ratio, exp(t · √2 · s) − 1 (on the difference's scale, t · √2 · s), where t is Student's
    /// quantile at k − 1 degrees of freedom (k runs: a short history makes a wide bound) and s
    /// the runs' spread, or the spread the figure's count has by chance where that is larger
    /// (`Grain::of_events`). Never narrower than one step of the figure's resolution
    /// (`Grain::step`).
    pub fn bound(&self, grain: Grain) -> RunBound {
        let w = self.widths(grain);
        RunBound {
            pct: w.scaled(w.t * w.pair).max(w.step * 100.0),
            on_ratio: self.on_ratio,
        }
    }

    /// The smallest change that two more runs, one a side, find beyond [`RunSpread::bound`]
    /// nine times in ten, in percent on the bound's scale (a factor 1 + F either way on the
    /// ratio's): the bound plus z₀.₉ · √2 · s, where s is the spread the bound is made of. A
    /// run of the changed host lands as far from its new level as the runs did from theirs, so
    /// a change just at the bound is found only half the time.
    pub fn smallest_found(&self, grain: Grain) -> f64 {
        /// The standard normal's 90% quantile.
        const Z90: f64 = 1.281_551_565_5;
        let w = self.widths(grain);
        let at_bound = if self.on_ratio {
            (w.t * w.pair).max((1.0 + w.step).ln())
        } else {
            (w.t * w.pair).max(w.step)
        };
        w.scaled(at_bound + Z90 * w.pair)
    }

    /// What the bound is made of: Student's t at k − 1 degrees of freedom, √2 · s (the spread
    /// of the change between two runs, in logarithms on the ratio's scale) and one step of the
    /// grain relative to the centre.
    fn widths(&self, grain: Grain) -> Widths {
        let t = StudentsT::new(0.0, 1.0, (self.runs - 1) as f64)
            .map_or(f64::INFINITY, |t| t.inverse_cdf(0.975));
        let centre = self.centre.abs();
        let step = grain
            .step
            .filter(|r| r.is_finite() && *r > 0.0)
            .unwrap_or(0.0)
            / centre;
        // The counting noise of a percentage of n events: the binomial spread of its share.
        let counting = grain
            .of_events
            .filter(|n| *n > 0.0)
            .map(|n| {
                let p = (self.centre / 100.0).clamp(0.0, 1.0);
                100.0 * (p * (1.0 - p) / n).sqrt() / centre
            })
            .unwrap_or(0.0);
        Widths {
            t,
            pair: 2f64.sqrt() * self.sd.max(counting),
            step,
            on_ratio: self.on_ratio,
        }
    }
}

/// The parts of a [`RunSpread`]'s bound.
struct Widths {
    t: f64,
    pair: f64,
    step: f64,
    on_ratio: bool,
}

impl Widths {
    /// A width in logarithms (on the ratio's scale) or relative to the centre, in percent.
    fn scaled(&self, x: f64) -> f64 {
        if self.on_ratio {
            (x.exp() - 1.0) * 100.0
        } else {
            x * 100.0
        }
    }
}

/// How finely a figure can move between runs, beside the spread its runs showed: what a
/// bound learnt from a few runs must not claim to see below.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Grain {
    /// The smallest difference that is a measurement, in the figure's unit (one deadline of
    /// the run, a timer's lateness): runs that landed on one value do not make a change of
    /// one step a change.
    pub step: Option<f64>,
    /// For a percentage of counted events (deadlines met, burns achieved): how many. Its
    /// share moves between runs by the count's binomial spread, √(p(1 − p) / n), however
    /// still a few runs happened to be: five runs that each missed one frame in 182 cannot
    /// tell a miss that always comes from one that comes by chance.
    pub of_events: Option<f64>,
}

#[cfg(test)]
impl RunSpread {
    /// The spread of `runs` runs around `centre` whose bound without a grain is ±`pct`%.
    pub fn bounded_at(runs: usize, pct: f64, centre: f64) -> RunSpread {
        let t = StudentsT::new(0.0, 1.0, (runs - 1) as f64)
            .unwrap()
            .inverse_cdf(0.975);
        RunSpread {
            runs,
            centre,
            sd: (1.0 + pct / 100.0).ln() / (t * 2f64.sqrt()),
            on_ratio: true,
        }
    }
}

/// The 95% bound of the change between two more runs of a figure whose runs so far gave
/// `values` (at least three) and grain is `grain` (`RunSpread::bound`). None
/// with fewer than three finite values.
pub fn two_run_bound(values: &[f64], grain: Grain) -> Option<RunBound> {
    RunSpread::of(values).map(|s| s.bound(grain))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::StdRng;
    use rand::SeedableRng;
    use rand_distr::{Distribution, LogNormal};

    #[test]
    fn a_hand_worked_ratio() {
        // ln of A: 0, ln 2 (mean ln √2); of B: ln 2, ln 4 (mean ln 2√2): the geometric means
        // are √2 and 2√2, ratio 2. Both sides' log-variance is (ln 2)²/2, so se = ln 2 · √(1/2)
        // and df = 2; t = ln 2 / (ln 2/√2) = √2, two-sided p of t(2) at √2 = 0.2929.
        let r = log_ratio_test(&[1.0, 2.0], &[2.0, 4.0]).unwrap();
        assert!((r.ratio - 2.0).abs() < 1e-12, "{r:?}");
        assert!((r.degrees_of_freedom - 2.0).abs() < 1e-9, "{r:?}");
        assert!((r.p_value - 0.2929).abs() < 1e-3, "{r:?}");
        // The interval is a ratio's: symmetric around it in logarithms, not in value.
        assert!(((r.ci_low * r.ci_high).sqrt() - 2.0).abs() < 1e-9, "{r:?}");
        assert!(r.ci_low < 1.0 && !r.significant());
        assert!(log_ratio_test(&[1.0, 0.0], &[2.0, 3.0]).is_none());
        assert!(log_ratio_test(&[1.0], &[2.0]).is_none());
        assert!(log_ratio_test(&[], &[2.0, 3.0]).is_none());
    }

    #[test]
    fn one_run_against_several_is_a_prediction() {
        // A: e^0, e^0.1, e^-0.1 (log mean 0, log sd 0.1); B: one run at e^0.5. se = 0.1·√(4/3)
        // = 0.11547, t = 0.5 / 0.11547 = 4.33 on 2 degrees of freedom: p = 0.0494.
        let a = [1.0, 0.1f64.exp(), (-0.1f64).exp()];
        let r = log_ratio_test(&a, &[0.5f64.exp()]).unwrap();
        assert!((r.ratio - 0.5f64.exp()).abs() < 1e-9, "{r:?}");
        assert!((r.degrees_of_freedom - 2.0).abs() < 1e-12);
        assert!((r.p_value - 0.0494).abs() < 1e-3, "{r:?}");
        // Either way round: the ratio is B/A.
        let r2 = log_ratio_test(&[0.5f64.exp()], &a).unwrap();
        assert!((r2.ratio * r.ratio - 1.0).abs() < 1e-9);
        assert!((r2.p_value - r.p_value).abs() < 1e-12);
        // A single run inside the others' spread is no change.
        assert!(!log_ratio_test(&a, &[1.05]).unwrap().significant());
    }

    /// Per-run figures of an unchanged host and of one changed by `factor`: `n` runs a side,
    /// each off by a log-normal factor of spread `cv`.
    fn draws(rng: &mut StdRng, n: usize, cv: f64, factor: f64) -> (Vec<f64>, Vec<f64>) {
        let noise = LogNormal::new(0.0, cv).unwrap();
        let a = (0..n).map(|_| 1000.0 * noise.sample(rng)).collect();
        let b = (0..n)
            .map(|_| 1000.0 * factor * noise.sample(rng))
            .collect();
        (a, b)
    }

    #[test]
    fn false_alarms_and_detections_on_seeded_draws() {
        // Five runs a side that spread by 5% (this VM's run-to-run spread on a quiet minute).
        let mut rng = StdRng::seed_from_u64(14);
        let false_alarms = (0..100)
            .filter(|_| {
                let (a, b) = draws(&mut rng, 5, 0.05, 1.0);
                log_ratio_test(&a, &b).unwrap().significant()
            })
            .count();
        assert!(
            false_alarms <= 5,
            "{false_alarms} false alarms in 100 A/A draws"
        );
        let found = (0..100)
            .filter(|_| {
                let (a, b) = draws(&mut rng, 5, 0.05, 1.2);
                let r = log_ratio_test(&a, &b).unwrap();
                r.significant() && r.ratio > 1.0
            })
            .count();
        assert!(found >= 90, "a 20% change found in {found} of 100 draws");
    }

    #[test]
    fn the_runs_it_takes_find_the_change_four_times_in_five() {
        // Twice the spread needs about four times the runs; a tiny spread needs the minimum.
        let n5 = runs_to_detect(5.0, 5.0, 100).unwrap();
        let n10 = runs_to_detect(10.0, 5.0, 100).unwrap();
        assert!((15..=20).contains(&n5), "{n5}");
        assert!(n10 >= 3 * n5, "{n5} {n10}");
        assert_eq!(runs_to_detect(0.1, 5.0, 100), Some(2));
        assert_eq!(runs_to_detect(50.0, 1.0, 100), None);
        // Simulated at that many runs a side, the test finds a 5% change about 80% of the time.
        let mut rng = StdRng::seed_from_u64(5);
        let sigma = 1.05f64.ln();
        let found = (0..200)
            .filter(|_| {
                let (a, b) = draws(&mut rng, n5 as usize, sigma, 1.05);
                log_ratio_test(&a, &b).unwrap().significant()
            })
            .count();
        assert!((140..=185).contains(&found), "{found} of 200");
    }

    /// Runs spread 5%; each trial: a history of k runs, then a run of the host as it was and
    /// one of the host changed by the smallest change the history says one run a side finds
    /// nine times in ten. The pair passes the bound in the change's direction about 90% of the
    /// time, and a change half that size far less often.
    #[test]
    fn the_smallest_change_found_is_found_nine_times_in_ten() {
        let mut rng = StdRng::seed_from_u64(90);
        let runs = LogNormal::new(0.0, 0.05).unwrap();
        for k in [5, 10, 20] {
            let trials = 4000;
            let mut found = [0usize; 2];
            for _ in 0..trials {
                let history: Vec<f64> = (0..k).map(|_| runs.sample(&mut rng)).collect();
                let spread = RunSpread::of(&history).unwrap();
                let bound = spread.bound(Grain::default());
                let f = spread.smallest_found(Grain::default());
                assert!(f > bound.pct, "{f} {bound:?}");
                let a = runs.sample(&mut rng);
                let noise = runs.sample(&mut rng);
                for (i, size) in [f, f / 2.0].into_iter().enumerate() {
                    let b = noise * (1.0 + size / 100.0);
                    let change = (b / a - 1.0) * 100.0;
                    if change > 0.0 && !bound.holds(change) {
                        found[i] += 1;
                    }
                }
            }
            let rate = |n: usize| n as f64 / trials as f64;
            assert!(
                (0.85..0.95).contains(&rate(found[0])),
                "k {k}: {}",
                rate(found[0])
            );
            assert!(rate(found[1]) < 0.5, "k {k}: {}", rate(found[1]));
        }
        // A still history of a counted figure: no less than the bound's step plus the count's.
        let spread = RunSpread::of(&[99.45, 99.45, 99.45]).unwrap();
        let grain = Grain {
            step: Some(100.0 / 182.0),
            of_events: Some(182.0),
        };
        assert!(spread.smallest_found(grain) > spread.bound(grain).pct);
    }

    /// Five runs that each missed one frame of 181 or 182 (99.451%, 99.448%): their spread is
    /// a few thousandths of a point, but one missed frame is 0.55 points and a count of one
    /// moves by about one between runs. The bound is no finer than that: a run that missed
    /// four frames is within it, one that missed ten is not.
    #[test]
    fn a_bound_from_a_still_history_is_no_finer_than_the_figures_grain() {
        let met = |missed: f64, of: f64| 100.0 * (of - missed) / of;
        let history = [
            met(1.0, 182.0),
            met(1.0, 181.0),
            met(1.0, 182.0),
            met(1.0, 182.0),
            met(1.0, 181.0),
        ];
        let step = 100.0 / 182.0;
        let change = |b: f64| (b / met(1.0, 182.0) - 1.0) * 100.0;
        let grain = Grain {
            step: Some(step),
            of_events: Some(182.0),
        };
        let bound = two_run_bound(&history, grain).unwrap();
        assert!(bound.holds(change(met(4.0, 182.0))), "{bound:?}");
        assert!(!bound.holds(change(met(10.0, 182.0))), "{bound:?}");
        // The step alone: never narrower than one step.
        let stepped = Grain {
            step: Some(step),
            of_events: None,
        };
        let bound = two_run_bound(&history, stepped).unwrap();
        assert!(bound.pct >= step / 99.45 * 100.0, "{bound:?}");
        // Without a grain, what the runs showed.
        assert!(two_run_bound(&history, Grain::default()).unwrap().pct < 0.01);
    }

    /// A percentage of about 182 counted frames, each missed by chance: over histories of 3 to
    /// 20 runs and counts of 0.2 to 10 misses a run, two more runs that differ by more than one
    /// frame fall outside the bound at most about one time in twenty.
    #[test]
    fn counted_figures_pass_their_bound_no_more_than_one_time_in_twenty() {
        use rand::Rng;
        use rand_distr::Binomial;
        let mut rng = StdRng::seed_from_u64(63);
        for misses in [0.2, 1.0, 3.0, 10.0] {
            for k in [3, 5, 10, 20] {
                let trials = 4000;
                let mut run = || {
                    let n = 181 + rng.gen_range(0..2u64);
                    let m = Binomial::new(n, misses / 182.0).unwrap().sample(&mut rng);
                    (100.0 * (n - m) as f64 / n as f64, n as f64)
                };
                let outside = (0..trials)
                    .filter(|_| {
                        let history: Vec<f64> = (0..k).map(|_| run().0).collect();
                        let ((a, n), (b, _)) = (run(), run());
                        let grain = Grain {
                            step: Some(100.0 / n),
                            of_events: Some(n),
                        };
                        let bound = two_run_bound(&history, grain).unwrap();
                        (b - a).abs() > 100.0 / n * 1.0001 && !bound.holds((b / a - 1.0) * 100.0)
                    })
                    .count();
                let rate = outside as f64 / trials as f64;
                assert!(rate <= 0.055, "{misses} misses, k {k}: {rate}");
            }
        }
    }

    #[test]
    fn two_runs_pass_the_bound_of_their_history_one_time_in_twenty() {
        // Runs spread 5% (lognormal); each trial: a history of k runs, then two more. The pair
        // differs by more than the history's bound about 5% of the time, for any k.
        let mut rng = StdRng::seed_from_u64(30);
        let runs = LogNormal::new(0.0, 0.05).unwrap();
        for k in [3, 6, 20] {
            let trials = 4000;
            let outside = (0..trials)
                .filter(|_| {
                    let history: Vec<f64> = (0..k).map(|_| runs.sample(&mut rng)).collect();
                    let bound = two_run_bound(&history, Grain::default()).unwrap();
                    let (a, b) = (runs.sample(&mut rng), runs.sample(&mut rng));
                    !bound.holds((b / a - 1.0) * 100.0)
                })
                .count();
            let rate = outside as f64 / trials as f64;
            assert!((0.035..0.065).contains(&rate), "k {k}: {rate}");
        }
        assert!(two_run_bound(&[1.0, 1.1], Grain::default()).is_none());
        // With a zero among them: the spread over the mean, on the difference's scale.
        let b = two_run_bound(&[0.0, 1.0, 2.0], Grain::default()).unwrap();
        assert!(!b.on_ratio, "{b:?}");
        assert!((b.pct - 4.303 * 2f64.sqrt() * 100.0).abs() < 1.0, "{b:?}");
    }

    #[test]
    fn a_bound_holds_a_change_on_its_own_scale() {
        // ×0.5–×2 on the ratio's scale: -50% and +100% hold, -60% and +110% do not.
        let r = RunBound {
            pct: 100.0,
            on_ratio: true,
        };
        assert!(r.holds(-50.0) && r.holds(100.0));
        assert!(!r.holds(-60.0) && !r.holds(110.0) && !r.holds(-100.0));
        // ±100% on the difference's: any fall short of -100% holds, +110% does not.
        let l = RunBound::linear(100.0);
        assert!(l.holds(-60.0) && l.holds(-100.0) && !l.holds(110.0));
    }
}
