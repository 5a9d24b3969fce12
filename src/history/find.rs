//! Finding where a series changed: E-divisive's change points, the newest points' step or
//! suspicion, a slow drift, and the closest calls left out.

use super::*;

/// Where nothing was kept: a figure's best cut, how near it came (`History::closest`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Closest {
    pub key: Text,
    pub name: Text,
    pub unit: Text,
    /// The first point of the level after the cut: its result and time.
    pub result_id: i64,
    pub started_at: DateTime<Utc>,
    pub before: f64,
    pub after: f64,
    pub change_pct: f64,
    /// Its permutation p (at most [`CLOSEST_P`] × `--p`: a cut further off is no close call).
    pub p: f64,
}

/// How far above `--p` a closest call's p is measured (5: up to 0.05 at the default 0.01).
pub const CLOSEST_P: f64 = 5.0;

/// The most closest calls a history shows.
pub const CLOSEST_SHOWN: usize = 3;

/// Where no change was kept: each series' best cut of the whole series whose p is within
/// `CLOSEST_P` × `max_p`, the nearest [`CLOSEST_SHOWN`] of them, nearest first.
/// `recall`: each series' kept searches, by key (`history --state`), for its closest call's.
pub(super) fn closest<'r>(
    all: &[Series],
    settings: &Settings,
    recall: impl Fn(&str) -> Option<&'r Recall<'r>>,
) -> Vec<Closest> {
    let loose = (settings.max_p * CLOSEST_P).min(1.0);
    let mut found: Vec<Closest> = all
        .iter()
        .filter_map(|s| {
            let values = s.judged_values();
            let recall = recall(s.key.raw());
            let c = match recall.and_then(Recall::recall_closest) {
                Some(kept) => kept,
                None => {
                    let c = edivisive::closest_split(&values, settings, loose);
                    if let Some(r) = recall {
                        r.closest_searched(c);
                    }
                    c
                }
            };
            let c = c.filter(|c| c.p <= loose * (1.0 + 1e-9) && c.index < values.len())?;
            let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
            let (b, a) = (mean(&values[..c.index]), mean(&values[c.index..]));
            let point = &s.points[c.index];
            Some(Closest {
                key: s.key.clone(),
                name: s.name.clone(),
                unit: s.unit.clone(),
                result_id: point.ids[0],
                started_at: point.started_at,
                before: b,
                after: a,
                change_pct: if b == 0.0 { 0.0 } else { (a / b - 1.0) * 100.0 },
                p: c.p,
            })
        })
        .collect();
    found.sort_by(|x, y| x.p.total_cmp(&y.p).then_with(|| x.key.cmp(&y.key)));
    found.truncate(CLOSEST_SHOWN);
    found
}

/// The share of `--p` the newest-runs test (`stats::newest`) is judged at; the stretch
/// search (`edivisive::stretches`) gets [`STRETCH_SHARE`] and the split search the rest, so
/// a series without a change is called changed at most `--p` of the time.
pub const NEWEST_SHARE: f64 = 0.2;
pub const STRETCH_SHARE: f64 = 0.2;

/// What the search found in one series: the change points (a change in the newest points
/// last, where there is one), newest points that are only suspected, and a steady drift where
/// one explains the series better than steps do (its line: value at the first point, slope a
/// point).
#[derive(Debug, Clone, Default)]
pub(super) struct Found {
    pub(super) points: Vec<ChangePoint>,
    pub(super) suspect: Option<Newest>,
    /// The line: its value at the first point, its slope a point, and the points it was
    /// fitted to (the first ones: not the newest that a newest step or suspicion covers).
    pub(super) drift: Option<(f64, f64, usize)>,
}

/// The change points of one series, and whether they are a drift.
///
/// A series that drifts (a clock that slows a little each night) has no step, but a step
/// search cuts it into a staircase, or once. So where two or more steps were found and all go
/// one way, where the one step found fits worse than a line alone, or where the levels between
/// the steps found themselves slope (`slope_within`), the series is also read as a straight
/// line plus steps on what the line leaves (searched the same way),
/// and the one with the smaller Bayesian information criterion is kept: n ln(RSS/n) + k ln n,
/// k counting a mean a level and a start a step, and the line's slope. A step is sharper than a line and keeps its steps; a drift is
/// reported once, as a drift, with any step on top of it.
pub(super) fn find(values: &[f64], settings: &Settings, recall: Option<&Recall>) -> Found {
    let mut steps = search(values, settings, recall);
    // Newest points suspected of a new level, or found one by the newest test, are judged as
    // such, not read into a line: one far newest point would otherwise tilt a line through
    // the whole series and be taken for a drift (seen: fifteen runs of 5 ms, then one of
    // 20 ms, read as +10% a run), and a step in the newest three would steepen it (seen:
    // "+7.7% over 40 points" where the 37 before it rose 3.5%).
    let newest_step = steps
        .points
        .last()
        .filter(|c| {
            (c.newest || values.len() - c.index <= newest::MAX_NEWEST) && steps.suspect.is_none()
        })
        .copied();
    if newest_step.is_some() {
        steps.points.pop();
    }
    let tail = steps
        .suspect
        .as_ref()
        .map(|s| s.k)
        .or(newest_step.map(|c| values.len() - c.index))
        .unwrap_or(0);
    let mut found = find_body(&values[..values.len() - tail], steps, settings);
    found.points.extend(newest_step);
    found
}

/// [`find`] on the series less its newest points that the newest test judged.
pub(super) fn find_body(values: &[f64], steps: Found, settings: &Settings) -> Found {
    let n = values.len();
    if steps.points.is_empty() || n < 4 || steps.points.iter().any(|c| c.index >= n) {
        return steps;
    }
    let cuts = |f: &Found| -> Vec<usize> { f.points.iter().map(|c| c.index).collect() };
    let levels = segment_means(values, &cuts(&steps));
    let rising = levels.windows(2).all(|w| w[1] > w[0]);
    let falling = levels.windows(2).all(|w| w[1] < w[0]);
    // A staircase of two or more steps one way may be a drift. So may one step that a line
    // fits better, and steps whose levels themselves slope: a drift where a stretch of it
    // was taken for a dip (a drifting level is no level, so a stretch of it stands apart).
    let bic = |rss: f64, k: usize| {
        let nf = n as f64;
        nf * (rss.max(f64::MIN_POSITIVE) / nf).ln() + k as f64 * nf.ln()
    };
    let line_slope = common_slope(values, &[]);
    let line: Vec<f64> = values
        .iter()
        .enumerate()
        .map(|(i, v)| v - line_slope * i as f64)
        .collect();
    // One step against the line alone: the same criterion, each with its parameters (two
    // means and the step's start; a start and a slope). A drift cut once is a line more often
    // than its levels slope on their own (those levels were picked to look flat).
    let line_beats_one_step =
        steps.points.len() == 1 && bic(rss(&line, &[]), 2) < bic(rss(values, &cuts(&steps)), 3);
    if !(steps.points.len() >= 2 && (rising || falling))
        && !line_beats_one_step
        && slope_within(values, &cuts(&steps)).1 > DRIFT_SLOPE_P
    {
        return steps;
    }
    // A slope a step hardly tilts (the median rise over a tenth of the series: few such
    // pairs straddle a step), the steps on what that line leaves, then the slope with those
    // steps held apart and the steps once more.
    let mut slope = lag_slope(values);
    let mut on_line = Found::default();
    for _ in 0..2 {
        let rest: Vec<f64> = values
            .iter()
            .enumerate()
            .map(|(i, v)| v - slope * i as f64)
            .collect();
        on_line = search(&rest, settings, None);
        slope = common_slope(values, &cuts(&on_line));
    }
    let rest: Vec<f64> = values
        .iter()
        .enumerate()
        .map(|(i, v)| v - slope * i as f64)
        .collect();
    // Parameters: a mean a level and a start a step; the line adds its slope. The line alone
    // is a reading too: steps found on what a slope estimated off the mark leaves are the
    // slope's error, not steps.
    let staircase = bic(rss(values, &cuts(&steps)), 2 * steps.points.len() + 1);
    let (rest, slope, on_line) = if bic(rss(&line, &[]), 2)
        <= bic(rss(&rest, &cuts(&on_line)), 2 * on_line.points.len() + 2)
    {
        (line, line_slope, Found::default())
    } else {
        (rest, slope, on_line)
    };
    let drift = bic(rss(&rest, &cuts(&on_line)), 2 * on_line.points.len() + 2);
    if drift < staircase {
        // The line through the first level's points, with the common slope.
        let first = cuts(&on_line).first().copied().unwrap_or(n);
        let start = rest[..first].iter().sum::<f64>() / first as f64;
        Found {
            drift: Some((start, slope, n)),
            suspect: steps.suspect,
            ..on_line
        }
    } else {
        steps
    }
}

/// How sure the levels between steps must slope before the series is also read as a drift: the
/// p of Student's t on that slope (`slope_within`). Steps on flat levels pass it one time in
/// twenty, and are then nearly always kept as steps by the information criterion (measured:
/// docs/evidence/history-accuracy.md, "A drift cut once").
pub(super) const DRIFT_SLOPE_P: f64 = 0.05;

/// The slope common to the stretches between `cuts` (as `common_slope`) and the two-sided p of
/// Student's t on it (its standard error from the spread about each stretch's line).
pub(super) fn slope_within(values: &[f64], cuts: &[usize]) -> (f64, f64) {
    let fit = fit_slope(values, cuts);
    // A mean a stretch and the common slope.
    let df = values.len() as f64 - fit.stretches as f64 - 1.0;
    let rss = fit.syy - fit.slope * fit.sxy;
    if df < 1.0 || fit.sxx <= 0.0 || rss <= 0.0 {
        return (fit.slope, 1.0);
    }
    let t = fit.slope / (rss / df / fit.sxx).sqrt();
    let p = StudentsT::new(0.0, 1.0, df).map_or(1.0, |d| 2.0 * (1.0 - d.cdf(t.abs())));
    (fit.slope, p)
}

/// The slope a point common to every stretch between `cuts`, each with its own level (least
/// squares).
pub(super) fn common_slope(values: &[f64], cuts: &[usize]) -> f64 {
    fit_slope(values, cuts).slope
}

/// The least-squares line with one slope and a level a stretch: the sums about each stretch's
/// means (of its places and of its values) and the slope they give.
pub(super) struct SlopeFit {
    slope: f64,
    sxx: f64,
    sxy: f64,
    syy: f64,
    stretches: usize,
}

pub(super) fn fit_slope(values: &[f64], cuts: &[usize]) -> SlopeFit {
    let bounds = edivisive::bounds(values.len(), cuts);
    let (mut sxx, mut sxy, mut syy) = (0.0, 0.0, 0.0);
    for w in bounds.windows(2) {
        let part = &values[w[0]..w[1]];
        let m = part.len() as f64;
        let mx = (m - 1.0) / 2.0;
        let my = part.iter().sum::<f64>() / m;
        for (j, v) in part.iter().enumerate() {
            let (dx, dy) = (j as f64 - mx, v - my);
            sxx += dx * dx;
            sxy += dx * dy;
            syy += dy * dy;
        }
    }
    SlopeFit {
        slope: if sxx > 0.0 { sxy / sxx } else { 0.0 },
        sxx,
        sxy,
        syy,
        stretches: bounds.len() - 1,
    }
}

/// The mean of each stretch between `cuts` (indices of the first point of a new level).
pub(super) fn segment_means(values: &[f64], cuts: &[usize]) -> Vec<f64> {
    let bounds = edivisive::bounds(values.len(), cuts);
    bounds
        .windows(2)
        .map(|w| values[w[0]..w[1]].iter().sum::<f64>() / (w[1] - w[0]) as f64)
        .collect()
}

/// The squares of each point's distance from its stretch's mean, summed.
pub(super) fn rss(values: &[f64], cuts: &[usize]) -> f64 {
    let bounds = edivisive::bounds(values.len(), cuts);
    bounds
        .windows(2)
        .map(|w| {
            let part = &values[w[0]..w[1]];
            let mean = part.iter().sum::<f64>() / part.len() as f64;
            part.iter().map(|v| (v - mean).powi(2)).sum::<f64>()
        })
        .sum()
}

/// The median of (y[i + d] − y[i]) / d over the series, d a tenth of its length: a slope that
/// a step moves little, as only the pairs across it (about a tenth) see it.
pub(super) fn lag_slope(values: &[f64]) -> f64 {
    let d = (values.len() / 10).max(1);
    let rises: Vec<f64> = values
        .windows(d + 1)
        .map(|w| (w[d] - w[0]) / d as f64)
        .collect();
    median(&rises).unwrap_or(0.0)
}

/// The steps of one series: E-divisive's splits, the stretches that stand apart inside the
/// levels they leave, then the newest points of the last level against the rest of that
/// level, each at its share of `max_p`.
///
/// A step among the newest [`newest::MAX_NEWEST`] points is the newest test's to find: one far
/// newest point makes E-divisive cut a short last level of it and the points just before
/// (seen: fifteen runs of 5 ms that rose 1.5% over the last three, then one of 20 ms: a cut
/// three points from the end at p 0.003), where the newest test, made for the newest points,
/// only suspects it. So where the newest test, run on the level before such a cut, finds
/// fewer newest points a change or a suspect than the cut left after it, the steps are those
/// of the series up to the cut, and the newest points the newest test's.
///
/// A cut that leaves more points than that is checked too where the newest test finds a
/// change in fewer: a small shift of the host's followed by a larger newest rise is cut where
/// the shift starts (seen: "+3.7% from result 31" for a step at result 38). The cut stands
/// only where the series without those newest points still has it (within a point).
pub(super) fn search(values: &[f64], settings: &Settings, recall: Option<&Recall>) -> Found {
    let mut points = levels(values, settings, recall);
    let mut from = points.last().map_or(0, |c| c.index);
    let max_p = settings.max_p * NEWEST_SHARE;
    if from > 0 {
        let head = levels(&values[..from], settings, recall);
        let head_from = head.last().map_or(0, |c| c.index);
        let judged = newest::newest(&values[head_from..], max_p, settings.seed);
        let newer = values.len() - from;
        let newest_made_it = |n: &Newest| {
            if newer <= newest::MAX_NEWEST {
                return (n.p <= max_p || n.p_normal <= max_p) && n.k < newer;
            }
            n.p <= max_p
                && n.k < newer
                && !levels(&values[..values.len() - n.k], settings, recall)
                    .iter()
                    .any(|c| c.index.abs_diff(from) <= 1)
        };
        if judged.is_some_and(|n| newest_made_it(&n)) {
            (points, from) = (head, head_from);
        }
    }
    let mut suspect = None;
    if let Some(n) = newest::newest(&values[from..], max_p, settings.seed) {
        if n.p <= max_p {
            points.push(ChangePoint {
                index: values.len() - n.k,
                q: n.t,
                p: n.p,
                newest: true,
            });
        } else if n.p_normal <= max_p {
            suspect = Some(n);
        }
    }
    Found {
        points,
        suspect,
        drift: None,
    }
}

/// The levels of a series: E-divisive's splits and the stretches that stand apart inside the
/// levels they leave, each at its share of `max_p`, refined.
pub(super) fn levels(
    values: &[f64],
    settings: &Settings,
    recall: Option<&Recall>,
) -> Vec<ChangePoint> {
    if let Some(kept) = recall.and_then(|r| r.recall(values.len())) {
        return kept;
    }
    let points = levels_searched(values, settings);
    if let Some(r) = recall {
        r.searched(values.len(), &points);
    }
    points
}

/// [`levels`] searched: the splits, then the stretches between them, each cut refined.
fn levels_searched(values: &[f64], settings: &Settings) -> Vec<ChangePoint> {
    let split = Settings {
        max_p: settings.max_p * (1.0 - NEWEST_SHARE - STRETCH_SHARE),
        ..*settings
    };
    let mut points = edivisive::change_points(values, &split);
    let cuts: Vec<usize> = points.iter().map(|c| c.index).collect();
    let stretch = Settings {
        max_p: settings.max_p * STRETCH_SHARE,
        ..*settings
    };
    points.extend(edivisive::stretches(values, &cuts, &stretch));
    points.sort_by_key(|c| c.index);
    edivisive::refine(values, &mut points, settings.min_size);
    points
}

/// The change points of each series, the series shared among the CPUs (each one's search is
/// seeded alike, so the answer does not depend on how they were shared).
pub(super) fn change_points(
    all: &[Series],
    settings: &Settings,
    recalls: Option<&[Recall]>,
) -> Vec<Found> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let next = AtomicUsize::new(0);
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(all.len())
        .max(1);
    let mut found: Vec<Found> = vec![Found::default(); all.len()];
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut done = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(s) = all.get(i) else { break };
                        let recall = recalls.and_then(|r| r.get(i));
                        done.push((i, find(&s.judged_values(), settings, recall)));
                    }
                    done
                })
            })
            .collect();
        for w in workers {
            for (i, c) in w.join().expect("a change-point search panicked") {
                found[i] = c;
            }
        }
    });
    found
}
