//! What each change found means: the levels either side, its interval and p, the tags that
//! changed with it and the host's account, from the stored runs.

use super::*;

/// The changes of every series, newest first.
///
/// A point is one result, or one `--repeat` group (its runs' mean, the runs kept). Free and
/// pinned figures have different keys, so they are different series. A change is kept when
/// its permutation p is at most `max_p` and its size (in points for a percentage) at least the
/// minimum: `--min-change`, or
/// by default the host's noise floor before the change — the median of the noise floors
/// (`RunResult::noise_floor_pct`, what `compare` uses for one result) of the results of the
/// level the change leaves. The level after is not asked: a change that made the host noisier
/// would otherwise raise its own bar.
pub fn changes(
    all: &[Series],
    runs: &[Run],
    settings: &Settings,
    min_change_pct: Option<f64>,
    recalls: Option<&[Recall]>,
) -> Findings {
    let stored = Stored {
        by_id: runs.iter().map(|r| (r.id, r)).collect(),
        min_change_pct,
    };
    let mut out = Vec::new();
    let mut suspected = Vec::new();
    let mut drifts = Vec::new();
    for (
        s,
        Found {
            points: mut found,
            suspect,
            drift,
        },
    ) in all.iter().zip(change_points(all, settings, recalls))
    {
        let values = s.judged_values();
        drifts.extend(drift.and_then(|d| stored.drift(s, d)));
        suspected.extend(suspect.and_then(|n| stored.suspect(s, &values, &found, &n, settings)));
        let size = |b: f64, a: f64| step_size(s.unit.raw(), b, a);
        drop_small(&values, &mut found, &size, &|from, c| {
            stored.least(&s.points[from..c])
        });
        out.extend((0..found.len()).map(|i| stored.change(s, &values, &found, i)));
    }
    out.sort_by(|x, y| {
        y.started_at
            .cmp(&x.started_at)
            .then_with(|| x.key.cmp(&y.key))
    });
    suspected.sort_by(|x, y| x.key.cmp(&y.key));
    Findings {
        changes: out,
        suspected,
        drifts,
    }
}

pub(super) fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

/// Whether going from `b` to `a` is worse for a figure that is better `better`.
pub(super) fn worse(better: Better, b: f64, a: f64) -> bool {
    match better {
        Better::Higher => a < b,
        Better::Lower => a > b,
    }
}

/// What the stored runs give each finding: their noise floors, tags and accounts, by id; and
/// the smallest change the user asked to keep, where they did.
pub(super) struct Stored<'a> {
    by_id: HashMap<i64, &'a Run>,
    min_change_pct: Option<f64>,
}

impl Stored<'_> {
    /// The median noise floor of these points' runs.
    fn floor_of(&self, points: &[Point]) -> f64 {
        let floors: Vec<f64> = points
            .iter()
            .flat_map(|p| &p.ids)
            .filter_map(|id| self.by_id.get(id)?.kept.noise_floor_pct)
            .collect();
        median(&floors).unwrap_or(0.0)
    }

    /// The smallest change kept from a level of these points: the user's, else their floor.
    fn least(&self, points: &[Point]) -> f64 {
        self.min_change_pct.unwrap_or_else(|| self.floor_of(points))
    }

    fn tags_of(&self, id: i64) -> BTreeMap<Text, Text> {
        self.by_id
            .get(&id)
            .map(|r| r.tags.clone())
            .unwrap_or_default()
    }

    /// The stored accounts of these points' runs.
    fn summaries<'p>(&'p self, points: &'p [Point]) -> Vec<&'p [(String, f64)]> {
        points
            .iter()
            .flat_map(|p| &p.ids)
            .filter_map(|id| Some(self.by_id.get(id)?.kept.account.as_slice()))
            .collect()
    }

    /// A slow drift of the series' newest points (their line's start, slope and length), kept
    /// where it moved the figure by at least the least change.
    fn drift(&self, s: &Series, (start, slope, n): (f64, f64, usize)) -> Option<Drift> {
        let end = start + slope * (n - 1) as f64;
        // Said as a percentage's points, or as a share of the line's first value.
        let (per_point, span) = if in_points(s.unit.raw()) {
            (slope, end - start)
        } else if start != 0.0 {
            (slope / start * 100.0, (end / start - 1.0) * 100.0)
        } else {
            (0.0, 0.0)
        };
        (span.abs() >= self.least(&s.points) && start != 0.0).then(|| Drift {
            key: s.key.clone(),
            name: s.name.clone(),
            unit: s.unit.clone(),
            from_result: s.points[0].ids[0],
            to_result: s.points[n - 1].ids[0],
            points: n,
            per_point,
            over_span: span,
            worse: worse(s.better, start, end),
        })
    }

    /// The newest points' suspected change, since the last change found, kept where it is at
    /// least the least change.
    fn suspect(
        &self,
        s: &Series,
        values: &[f64],
        found: &[ChangePoint],
        n: &newest::Newest,
        settings: &Settings,
    ) -> Option<Suspect> {
        let from = found.last().map_or(0, |c| c.index);
        let at = values.len() - n.k;
        let (b, a) = (mean(&values[from..at]), mean(&values[at..]));
        if b == 0.0 || step_size(s.unit.raw(), b, a) < self.least(&s.points[from..at]) {
            return None;
        }
        let point = &s.points[at];
        let max_p = settings.max_p * NEWEST_SHARE;
        Some(Suspect {
            key: s.key.clone(),
            name: s.name.clone(),
            unit: s.unit.clone(),
            result_id: point.ids[0],
            started_at: point.started_at,
            points_after: n.k,
            points_before: at - from,
            before: b,
            after: a,
            change_pct: (a / b - 1.0) * 100.0,
            worse: worse(s.better, b, a),
            p: n.shuffled.then_some(n.p),
            p_normal: n.p_normal,
            shuffle_bar: max_p,
            runs_to_certain: newest::runs_to_certain(&values[from..], n, max_p, settings.seed),
        })
    }

    /// The `i`th change kept: the levels either side of it (to the changes before and after),
    /// its interval, the tags that changed with it, and the host's account of both levels.
    fn change(&self, s: &Series, values: &[f64], found: &[ChangePoint], i: usize) -> Change {
        let c = &found[i];
        let from = if i == 0 { 0 } else { found[i - 1].index };
        let to = found.get(i + 1).map_or(values.len(), |n| n.index);
        let (before, after) = (&values[from..c.index], &values[c.index..to]);
        let (b, a) = (mean(before), mean(after));
        // From the test that found it: the newest test's pooled t for the newest points,
        // Welch's for a split (whose permutation p gives no interval of its own).
        let interval = if c.newest {
            newest::each_newest(&values[from..to], after.len())
                .get(after.len() - 1)
                .map(|l| l.interval())
        } else {
            welch_test(before, after).map(|w| (w.ci_low, w.ci_high))
        };
        let point = &s.points[c.index];
        let was = self.tags_of(s.points[c.index - 1].ids[0]);
        Change {
            key: s.key.clone(),
            name: s.name.clone(),
            unit: s.unit.clone(),
            point: c.index,
            result_id: point.ids[0],
            started_at: point.started_at,
            tags: self.tags_of(point.ids[0]),
            tags_changed: self
                .tags_of(point.ids[0])
                .into_iter()
                .filter(|(k, v)| was.get(k) != Some(v))
                .collect(),
            before: b,
            after: a,
            change_pct: (a / b - 1.0) * 100.0,
            interval_pct: interval.map(|(lo, hi)| (lo / b.abs() * 100.0, hi / b.abs() * 100.0)),
            worse: worse(s.better, b, a),
            p: c.p,
            min_change_pct: self.least(&s.points[from..c.index]),
            points_before: before.len(),
            points_after: after.len(),
            newest_runs: c.newest,
            account: crate::model::account::summary_verdicts(
                &self.summaries(&s.points[from..c.index]),
                &self.summaries(&s.points[c.index..to]),
            ),
            net: s.net,
        }
    }
}

/// Drops the changes of `found` too small to keep (`size` of the step from level b to a below
/// `least` of the level it leaves, from its first point to the change), the smallest first:
/// a change too small to keep is not a boundary of its neighbours' levels either, so the
/// levels are measured again after each, until every one left is kept.
pub(super) fn drop_small(
    values: &[f64],
    found: &mut Vec<ChangePoint>,
    size: &dyn Fn(f64, f64) -> f64,
    least: &dyn Fn(usize, usize) -> f64,
) {
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    loop {
        let small = (0..found.len())
            .filter_map(|i| {
                let from = if i == 0 { 0 } else { found[i - 1].index };
                let to = found.get(i + 1).map_or(values.len(), |n| n.index);
                let c = found[i].index;
                let (b, a) = (mean(&values[from..c]), mean(&values[c..to]));
                let pct = size(b, a);
                (pct < least(from, c) || b == 0.0).then_some((i, pct))
            })
            .min_by(|x, y| x.1.total_cmp(&y.1));
        match small {
            Some((i, _)) => {
                found.remove(i);
            }
            None => break,
        }
    }
}

/// The size of a change from level b to a: in points for a percentage (a percentile's "%
/// slower" from 3 to 11 is 8 points, not 267%), anything else in percent of b.
pub(super) fn step_size(unit: &str, b: f64, a: f64) -> f64 {
    if in_points(unit) {
        (a - b).abs()
    } else if b == 0.0 {
        0.0
    } else {
        (a / b - 1.0).abs() * 100.0
    }
}
