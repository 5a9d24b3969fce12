//! `hostbench history`: each figure's series over the stored results of one host, in time
//! order, and the runs where it changed, found by E-divisive means (`stats::edivisive`).

use std::collections::{BTreeMap, HashMap};

use chrono::{DateTime, Utc};
use serde::Serialize;
use statrs::distribution::{ContinuousCDF, StudentsT};

use crate::model::figures::{Better, Kept, HOST_REFERENCE_KEY};
use crate::model::stored::StoredEntry;
use crate::model::RunResult;
use crate::stats::edivisive::{self, ChangePoint, Settings};
use crate::stats::newest::{self, Newest};
use crate::stats::{median, welch_test, Follows};
use crate::store::{Filter, ResultStore};
use crate::text::Text;

pub mod gate;

/// One stored result as a history reads it: what the store keeps beside it (layout 9), its
/// time and its tags.
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    pub id: i64,
    pub started_at: DateTime<Utc>,
    pub tags: BTreeMap<Text, Text>,
    pub kept: Kept,
}

impl Run {
    /// A result read whole (one stored before layout 9 could not be filled in).
    pub fn of(id: i64, r: &RunResult) -> Run {
        Run {
            id,
            started_at: r.started_at,
            tags: r.tags.clone(),
            kept: Kept::of(r),
        }
    }
}

/// One point of a series: a result, or the runs of one `--repeat` group.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Point {
    /// The stored ids of its runs (one, or a group's).
    pub ids: Vec<i64>,
    pub started_at: DateTime<Utc>,
    /// The runs' mean.
    pub value: f64,
    pub values: Vec<f64>,
    /// The host's speed beside the figure (the geometric mean of its runs' `host_ms`), where
    /// every run read it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host_ms: Option<f64>,
    /// The value net of the host's speed, where its series is judged so (`Series::net`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub net: Option<f64>,
}

/// One figure over time.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Series {
    pub key: Text,
    pub name: Text,
    pub unit: Text,
    pub better: Better,
    pub points: Vec<Point>,
    /// Where the series followed the host's speed over this history: how, and its changes are
    /// found in its values net of that speed ([`net_of_host`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub net: Option<NetOfHost>,
    /// A spread of runs (a maximum or upper percentile of them): its noise has a long tail
    /// toward larger, so one point far out is no sign of a change.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub spread: bool,
}

/// How a series followed the fixed-work reference read beside its runs (`stats::Follows`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct NetOfHost {
    /// d ln(figure) / d ln(reference), and the correlation.
    pub slope: f64,
    pub r: f64,
}

impl Series {
    /// The values its changes are looked for in: net of the host's speed where it is judged
    /// so, else as measured.
    pub fn judged_values(&self) -> Vec<f64> {
        self.points
            .iter()
            .map(|p| p.net.unwrap_or(p.value))
            .collect()
    }
}

/// Judges each series that followed the host's speed over this history on its values net of
/// it: each point's value over (its reference / the series' typical reference)^slope, so the
/// net values stay on the figure's scale. A series follows where every point read the
/// reference and `stats::Follows` finds the correlation significant. Nothing is netted where
/// the reference's own series (`reference`) changed or drifted: the host's speed then moved
/// as a kernel's mitigations or a governor move it, which taking out would hide. Returns the
/// first result of the reference's new level (or its drift's first) in that case.
pub fn net_of_host(
    all: &mut [Series],
    reference: Option<&Series>,
    settings: &Settings,
) -> Option<i64> {
    if let Some(r) = reference {
        let values = r.judged_values();
        let found = find(&values, settings);
        if found.drift.is_some() {
            return Some(r.points[0].ids[0]);
        }
        if let Some(at) = stepped_for_good(&values, &found.points) {
            return Some(r.points[at].ids[0]);
        }
    }
    // A percentage (deadlines met, a spread in points) is no time or rate that the host's
    // speed scales: dividing it by the speed's ratio makes far points of near ones.
    for s in all
        .iter_mut()
        .filter(|s| s.key.raw() != HOST_REFERENCE_KEY && !in_points(s.unit.raw()))
    {
        let Some((net, follows)) = net_values(&s.points) else {
            continue;
        };
        for (p, v) in s.points.iter_mut().zip(net) {
            p.net = Some(v);
        }
        s.net = Some(NetOfHost {
            slope: follows.slope,
            r: follows.r,
        });
    }
    None
}

/// `points`' values net of the host's speed, and how they followed it: None where a point
/// lacks the reference or the figure does not follow it (`stats::Follows`).
fn net_values(points: &[Point]) -> Option<(Vec<f64>, Follows)> {
    let pairs: Vec<(f64, f64)> = points
        .iter()
        .map(|p| Some((p.value, p.host_ms?)))
        .collect::<Option<_>>()?;
    let follows = Follows::of(&pairs)?;
    let typical = (pairs.iter().map(|(_, h)| h.ln()).sum::<f64>() / pairs.len() as f64).exp();
    let net = pairs
        .iter()
        .map(|(v, h)| v / (h / typical).powf(follows.slope))
        .collect();
    Some((net, follows))
}

/// Where the reference's steps (`points`, in order) left it at a new level for good: the
/// first step, where its newest level differs from its first by more than half its largest
/// step. A host slowed for a stretch and back (a neighbour's burst) steps there and back,
/// which netting is for; a kernel's mitigations step once and stay.
fn stepped_for_good(values: &[f64], points: &[ChangePoint]) -> Option<usize> {
    let first = points.first()?;
    let mut cuts: Vec<usize> = vec![0];
    cuts.extend(points.iter().map(|c| c.index));
    cuts.push(values.len());
    let levels: Vec<f64> = cuts
        .windows(2)
        .map(|w| values[w[0]..w[1]].iter().sum::<f64>() / (w[1] - w[0]) as f64)
        .collect();
    let largest = levels
        .windows(2)
        .map(|w| (w[1] / w[0]).ln().abs())
        .fold(0.0, f64::max);
    let stayed = (levels[levels.len() - 1] / levels[0]).ln().abs();
    (stayed > largest / 2.0).then_some(first.index)
}

/// Where a series changed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Change {
    pub key: Text,
    pub name: Text,
    pub unit: Text,
    /// The first point of the new level: its place in the series, its result (the first run of
    /// a group), time and tags.
    pub point: usize,
    pub result_id: i64,
    pub started_at: DateTime<Utc>,
    pub tags: BTreeMap<Text, Text>,
    /// The tags of that result whose value the point before did not have (a new kernel, not
    /// the `fleet=lab` every result carries): what `--fleet` groups shared changes by.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tags_changed: BTreeMap<Text, Text>,
    /// The mean of the points since the change before (or the start) and up to the next.
    pub before: f64,
    pub after: f64,
    pub change_pct: f64,
    /// 95% interval of the change, % of `before`, from the test that found it: for a change in
    /// the newest points the newest test's pooled t, else Welch's over the two sides' points
    /// (None when a side has one point).
    pub interval_pct: Option<(f64, f64)>,
    pub worse: bool,
    pub p: f64,
    /// The smallest change that would have been kept here, %: in points for a percentage
    /// ([`in_points`]), whose change is said in points too.
    pub min_change_pct: f64,
    /// Points on each side.
    pub points_before: usize,
    pub points_after: usize,
    /// Found by the newest-runs test (`stats::newest`: the newest points against the level
    /// before them), not by a split.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub newest_runs: bool,
    /// What the host's account says beside the change: the items whose per-result summaries
    /// changed at the same point, and those that did not; None where fewer than two results a
    /// side kept one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub account: Option<crate::model::account::ItemVerdicts>,
    /// Where the series was judged net of the host's speed: how it followed it. `before` and
    /// `after` are then the net levels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub net: Option<NetOfHost>,
}

/// Newest runs that would be a change if the noise were normal, but are not yet one by the
/// test (which assumes no shape of noise): one newest run of forty is the most extreme of them
/// one time in forty, however far it lies.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Suspect {
    pub key: Text,
    pub name: Text,
    pub unit: Text,
    /// The first of the newest runs at the new level: its result, time and tags.
    pub result_id: i64,
    pub started_at: DateTime<Utc>,
    /// How many newest points are at the new level.
    pub points_after: usize,
    pub points_before: usize,
    pub before: f64,
    pub after: f64,
    pub change_pct: f64,
    pub worse: bool,
    /// The test's p (no shape of noise assumed; None where Student's t missed the bar the
    /// shuffles are run at, `shuffle_bar`), and Student's t's (normal noise).
    pub p: Option<f64>,
    pub p_normal: f64,
    /// The bar Student's p must clear, times the newest counts tried, for the shuffles to run.
    pub shuffle_bar: f64,
    /// More runs at the new level that would make it a change; None: more than
    /// `stats::newest::MAX_NEWEST` points would be needed.
    pub runs_to_certain: Option<usize>,
}

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
fn closest(all: &[Series], settings: &Settings) -> Vec<Closest> {
    let loose = (settings.max_p * CLOSEST_P).min(1.0);
    let mut found: Vec<Closest> = all
        .iter()
        .filter_map(|s| {
            let values = s.judged_values();
            let c = edivisive::closest_split(&values, settings, loose)
                .filter(|c| c.p <= loose * (1.0 + 1e-9))?;
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
struct Found {
    points: Vec<ChangePoint>,
    suspect: Option<Newest>,
    /// The line: its value at the first point, its slope a point, and the points it was
    /// fitted to (the first ones: not the newest that a newest step or suspicion covers).
    drift: Option<(f64, f64, usize)>,
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
fn find(values: &[f64], settings: &Settings) -> Found {
    let mut steps = search(values, settings);
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
fn find_body(values: &[f64], steps: Found, settings: &Settings) -> Found {
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
        on_line = search(&rest, settings);
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
const DRIFT_SLOPE_P: f64 = 0.05;

/// The slope common to the stretches between `cuts` (as `common_slope`) and the two-sided p of
/// Student's t on it (its standard error from the spread about each stretch's line).
fn slope_within(values: &[f64], cuts: &[usize]) -> (f64, f64) {
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
fn common_slope(values: &[f64], cuts: &[usize]) -> f64 {
    fit_slope(values, cuts).slope
}

/// The least-squares line with one slope and a level a stretch: the sums about each stretch's
/// means (of its places and of its values) and the slope they give.
struct SlopeFit {
    slope: f64,
    sxx: f64,
    sxy: f64,
    syy: f64,
    stretches: usize,
}

fn fit_slope(values: &[f64], cuts: &[usize]) -> SlopeFit {
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
fn segment_means(values: &[f64], cuts: &[usize]) -> Vec<f64> {
    let bounds = edivisive::bounds(values.len(), cuts);
    bounds
        .windows(2)
        .map(|w| values[w[0]..w[1]].iter().sum::<f64>() / (w[1] - w[0]) as f64)
        .collect()
}

/// The squares of each point's distance from its stretch's mean, summed.
fn rss(values: &[f64], cuts: &[usize]) -> f64 {
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
fn lag_slope(values: &[f64]) -> f64 {
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
fn search(values: &[f64], settings: &Settings) -> Found {
    let mut points = levels(values, settings);
    let mut from = points.last().map_or(0, |c| c.index);
    let max_p = settings.max_p * NEWEST_SHARE;
    if from > 0 {
        let head = levels(&values[..from], settings);
        let head_from = head.last().map_or(0, |c| c.index);
        let judged = newest::newest(&values[head_from..], max_p, settings.seed);
        let newer = values.len() - from;
        let newest_made_it = |n: &Newest| {
            if newer <= newest::MAX_NEWEST {
                return (n.p <= max_p || n.p_normal <= max_p) && n.k < newer;
            }
            n.p <= max_p
                && n.k < newer
                && !levels(&values[..values.len() - n.k], settings)
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
fn levels(values: &[f64], settings: &Settings) -> Vec<ChangePoint> {
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

/// A host's history.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct History {
    pub host: Text,
    /// Results read (runs), and the points they made.
    pub results: usize,
    pub points: usize,
    pub series: usize,
    pub max_p: f64,
    /// `--min-change`, or None: each change against the noise floor of the level it leaves.
    pub min_change_pct: Option<f64>,
    /// The median noise floor of all the results read (None: none had a noise check).
    pub noise_floor_pct: Option<f64>,
    /// Where the host's fixed-work reference itself changed or drifted in this history: the
    /// first result of its new level (no series is then judged net of the host's speed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference_moved_at: Option<i64>,
    /// Newest first.
    pub changes: Vec<Change>,
    /// Newest runs suspected of a change that the test does not make certain yet.
    pub suspected: Vec<Suspect>,
    /// Where no change was kept: the figures whose best cut came nearest, nearest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub closest: Vec<Closest>,
    /// Series that drifted steadily rather than stepped, each reported once.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub drifts: Vec<Drift>,
    /// The series that changed, whole (for plots).
    pub changed: Vec<Series>,
    /// The series that did not, whole, where asked for (the HTML page draws every series).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unchanged: Vec<Series>,
    /// The nightly gate's verdicts (`--fail-on`): the figures worse in the newest results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate: Option<Vec<gate::Worse>>,
}

/// What `history` shows: one host's history, or with `--fleet` each host's and the changes
/// seen on several hosts at one tag.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Histories {
    pub fleet: bool,
    pub hosts: Vec<History>,
    /// `--fleet`: changes of one figure in one direction at results carrying one tag, on two
    /// hosts or more (a kernel that slowed the fleet, not one host), most hosts first.
    pub shared: Vec<Shared>,
}

/// A change seen on several hosts at one tag.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Shared {
    pub key: Text,
    pub name: Text,
    /// `KEY=VALUE`, the tag of the results where the new level starts.
    pub tag: String,
    pub worse: bool,
    /// The hosts, and each one's change there (%).
    pub hosts: Vec<(Text, f64)>,
}

/// The changes seen on two hosts or more at the same tag, in the same direction: a tag that
/// changed at the change (one every result carries explains nothing).
pub fn shared(hosts: &[History]) -> Vec<Shared> {
    let mut by: BTreeMap<(Text, String, bool), Shared> = BTreeMap::new();
    for h in hosts {
        for c in &h.changes {
            for (k, v) in &c.tags_changed {
                let tag = format!("{k}={v}");
                let s = by
                    .entry((c.key.clone(), tag.clone(), c.worse))
                    .or_insert_with(|| Shared {
                        key: c.key.clone(),
                        name: c.name.clone(),
                        tag,
                        worse: c.worse,
                        hosts: Vec::new(),
                    });
                if !s.hosts.iter().any(|(name, _)| *name == h.host) {
                    s.hosts.push((h.host.clone(), c.change_pct));
                }
            }
        }
    }
    let mut out: Vec<Shared> = by.into_values().filter(|s| s.hosts.len() >= 2).collect();
    out.sort_by(|a, b| b.hosts.len().cmp(&a.hosts.len()).then(a.key.cmp(&b.key)));
    out
}

/// One figure's readings within one point: each run's value, id and host reference.
#[derive(Default)]
struct Gathered {
    values: Vec<f64>,
    ids: Vec<i64>,
    hosts: Vec<Option<f64>>,
}

/// The series of `runs` (one host's, any order): each figure whose key contains one of
/// `patterns` (all figures when none is given), points in time order.
pub fn series(runs: &[Run], patterns: &[String]) -> Vec<Series> {
    // Points: a result alone, or the results of a repeat group together.
    let mut groups: BTreeMap<i64, Vec<&Run>> = BTreeMap::new();
    for r in runs {
        groups
            .entry(r.kept.repeat_group.unwrap_or(r.id))
            .or_default()
            .push(r);
    }
    let mut points: Vec<Vec<&Run>> = groups.into_values().collect();
    points.sort_by_key(|runs| {
        runs.iter()
            .map(|r| r.started_at)
            .min()
            .expect("a group has runs")
    });
    let wanted = |key: &Text| patterns.is_empty() || patterns.iter().any(|p| key.raw().contains(p));
    let mut by_key: BTreeMap<&str, Series> = BTreeMap::new();
    for runs in &points {
        let mut values: BTreeMap<&str, Gathered> = BTreeMap::new();
        let started_at = runs.iter().map(|r| r.started_at).min().expect("runs");
        for r in runs {
            for f in r.kept.figures.iter().filter(|f| wanted(&f.key)) {
                if !f.value.is_finite() {
                    continue;
                }
                by_key.entry(f.key.raw()).or_insert_with(|| Series {
                    key: f.key.clone(),
                    name: f.name.clone(),
                    unit: f.unit.clone(),
                    better: f.better,
                    points: Vec::new(),
                    net: None,
                    spread: f.spread,
                });
                let v = values.entry(f.key.raw()).or_default();
                v.values.push(f.value);
                v.ids.push(r.id);
                v.hosts.push(f.host_ms);
            }
        }
        for (
            key,
            Gathered {
                values: vals,
                mut ids,
                hosts,
            },
        ) in values
        {
            ids.sort_unstable();
            let s = by_key.get_mut(key).expect("made above");
            let host_ms = hosts
                .iter()
                .map(|h| h.filter(|h| *h > 0.0).map(f64::ln))
                .sum::<Option<f64>>()
                .map(|sum| (sum / hosts.len() as f64).exp());
            s.points.push(Point {
                ids,
                started_at,
                value: vals.iter().sum::<f64>() / vals.len() as f64,
                values: vals,
                host_ms,
                net: None,
            });
        }
    }
    by_key.into_values().collect()
}

/// The change points of each series, the series shared among the CPUs (each one's search is
/// seeded alike, so the answer does not depend on how they were shared).
fn change_points(all: &[Series], settings: &Settings) -> Vec<Found> {
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
                        done.push((i, find(&s.judged_values(), settings)));
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
    ) in all.iter().zip(change_points(all, settings))
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

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

/// Whether going from `b` to `a` is worse for a figure that is better `better`.
fn worse(better: Better, b: f64, a: f64) -> bool {
    match better {
        Better::Higher => a < b,
        Better::Lower => a > b,
    }
}

/// What the stored runs give each finding: their noise floors, tags and accounts, by id; and
/// the smallest change the user asked to keep, where they did.
struct Stored<'a> {
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
fn drop_small(
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
fn step_size(unit: &str, b: f64, a: f64) -> f64 {
    if in_points(unit) {
        (a - b).abs()
    } else if b == 0.0 {
        0.0
    } else {
        (a / b - 1.0).abs() * 100.0
    }
}

/// What [`changes`] found in every series.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Findings {
    /// Newest first.
    pub changes: Vec<Change>,
    pub suspected: Vec<Suspect>,
    pub drifts: Vec<Drift>,
}

/// A series that drifted steadily rather than stepped (`find`): reported once, with its rate.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Drift {
    pub key: Text,
    pub name: Text,
    pub unit: Text,
    /// The results of its first and last points.
    pub from_result: i64,
    pub to_result: i64,
    pub points: usize,
    /// The line's rise a point and over the whole series: in points for a percentage, else
    /// in percent of the line's first value.
    pub per_point: f64,
    pub over_span: f64,
    pub worse: bool,
}

/// Whether a series of this unit changes in points: a percentage, as `compare` says it.
pub fn in_points(unit: &str) -> bool {
    unit == "%"
}

/// The host's noise floor: the median of the results' own noise floors (None when none had a
/// noise check).
pub fn noise_floor_pct(runs: &[Run]) -> Option<f64> {
    let floors: Vec<f64> = runs.iter().filter_map(|r| r.kept.noise_floor_pct).collect();
    median(&floors)
}

/// Each host's runs among `entries` (the rows of `store` that `filter` selected), in the
/// order of `hosts`: the complete, readable ones, each from the figures kept beside it (one
/// small row), or read whole where none were kept. A row that cannot be read (another host's,
/// malformed) is handed to `left_out` and skipped: it never breaks the others' history.
pub fn stored_runs(
    store: &dyn ResultStore,
    filter: &Filter,
    entries: &[StoredEntry],
    hosts: &[&Text],
    left_out: &mut dyn FnMut(i64, anyhow::Error),
) -> anyhow::Result<Vec<Vec<Run>>> {
    let mut kept = store.kept(filter)?;
    let mut tags = store.tags(filter)?;
    let mut each = Vec::with_capacity(hosts.len());
    for host in hosts {
        let mut runs = Vec::new();
        for e in entries
            .iter()
            .filter(|e| &e.host == *host && !e.incomplete && e.problem.is_none())
        {
            let Some(started_at) = e.started_at else {
                continue;
            };
            match kept.remove(&e.id) {
                Some(k) => runs.push(Run {
                    id: e.id,
                    started_at,
                    tags: tags
                        .remove(&e.id)
                        .unwrap_or_default()
                        .into_iter()
                        .map(|(k, v)| (Text::from(k), Text::from(v)))
                        .collect(),
                    kept: k,
                }),
                None => match store.load(e.id) {
                    Ok(Some(r)) => runs.push(Run::of(e.id, &r)),
                    Ok(None) => left_out(e.id, anyhow::anyhow!("it is no longer stored")),
                    Err(why) => left_out(e.id, why),
                },
            }
        }
        each.push(runs);
    }
    Ok(each)
}

/// The most points `--series` takes in one series: the search's time grows with points ×
/// changes (30,000 points took 27 s), and 10,000 nightly results are 27 years of them.
pub const MAX_SERIES_POINTS: usize = 10_000;
/// The longest series name `--series` takes.
pub const MAX_SERIES_NAME: usize = 256;

/// The change points of each series of a CSV text (`history --series FILE`: a header
/// `series,value` or `series,value,floor`, then rows of a series' name, a value and its noise
/// floor, each series' values in order): the indices of the first point of each new level.
/// A change is kept as a store's history keeps it: at least `min_change_pct`, or else the
/// median floor of the level it leaves (any size where the file has no floors). How the
/// method is checked against synthetic series and other tools (docs/history.md). Err says
/// what is wrong with the text.
pub fn series_change_points(
    csv_text: &[u8],
    settings: &Settings,
    min_change_pct: Option<f64>,
) -> Result<BTreeMap<String, Vec<usize>>, String> {
    let all = read_series_csv(csv_text)?;
    Ok(all
        .into_iter()
        .map(|(name, (values, floors))| {
            let mut found = find(&values, settings).points;
            let least = |from: usize, c: usize| {
                min_change_pct
                    .unwrap_or_else(|| floors.get(from..c).and_then(median).unwrap_or(0.0))
            };
            drop_small(&values, &mut found, &|b, a| step_size("", b, a), &least);
            (name, found.into_iter().map(|c| c.index).collect())
        })
        .collect())
}

/// One series of a `--series` file: its values, and the noise floor of each (empty where the
/// file has no `floor` column).
type SeriesColumns = (Vec<f64>, Vec<f64>);

/// The series of a `--series` CSV text, by name.
fn read_series_csv(csv_text: &[u8]) -> Result<BTreeMap<String, SeriesColumns>, String> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(true)
        .from_reader(csv_text);
    // The header says what the columns are: without it the first row would be taken for one.
    let header: Vec<String> = reader
        .headers()
        .map_err(|e| e.to_string())?
        .iter()
        .map(|h| h.trim().to_string())
        .collect();
    let with_floor = match header.as_slice() {
        [s, v] if s == "series" && v == "value" => false,
        [s, v, f] if s == "series" && v == "value" && f == "floor" => true,
        _ => {
            return Err(format!(
                "the first row must be the header series,value or series,value,floor (it is {})",
                crate::model::label::printable(&header.join(","), 60)
            ))
        }
    };
    let mut all: BTreeMap<String, SeriesColumns> = Default::default();
    for (i, row) in reader.records().enumerate() {
        let bad = |why: String| format!("row {}: {why}", i + 2);
        let row = row.map_err(|e| bad(e.to_string()))?;
        let number = |at: usize| -> Result<f64, String> {
            let text = row.get(at).unwrap_or_default();
            text.trim()
                .parse()
                .ok()
                .filter(|v: &f64| v.is_finite())
                .ok_or_else(|| bad(format!("{text:?} is not a number")))
        };
        let (Some(name), Some(_)) = (row.get(0), row.get(1)) else {
            return Err(bad("not `series,value`".into()));
        };
        let value = number(1)?;
        let floor = if with_floor { Some(number(2)?) } else { None };
        if name.chars().count() > MAX_SERIES_NAME {
            return Err(bad(format!(
                "a series name has at most {MAX_SERIES_NAME} characters"
            )));
        }
        let (points, floors) = all.entry(name.to_string()).or_default();
        if points.len() == MAX_SERIES_POINTS {
            return Err(bad(format!(
                "series {} has more than {MAX_SERIES_POINTS} points",
                crate::model::label::printable(name, 60)
            )));
        }
        points.push(value);
        floors.extend(floor);
    }
    Ok(all)
}

/// The whole history of one host's `runs`.
pub fn history(
    host: &Text,
    runs: &[Run],
    patterns: &[String],
    settings: &Settings,
    min_change_pct: Option<f64>,
    every_series: bool,
    asked_gate: Option<&gate::Gate>,
) -> History {
    let mut all = series(runs, patterns);
    let reference = series(runs, &[HOST_REFERENCE_KEY.to_string()])
        .into_iter()
        .find(|s| s.key.raw() == HOST_REFERENCE_KEY);
    let reference_moved_at = net_of_host(&mut all, reference.as_ref(), settings);
    let Findings {
        changes,
        suspected,
        drifts,
    } = changes(&all, runs, settings, min_change_pct);
    let (changed, unchanged): (Vec<Series>, Vec<Series>) = all
        .iter()
        .cloned()
        .partition(|s| changes.iter().any(|c| c.key == s.key));
    let unchanged = if every_series { unchanged } else { Vec::new() };
    // A drifting series' best cut is no close call: its drift is reported.
    let closest = if changes.is_empty() {
        let steady: Vec<Series> = all
            .iter()
            .filter(|s| drifts.iter().all(|d| d.key != s.key))
            .cloned()
            .collect();
        closest(&steady, settings)
    } else {
        Vec::new()
    };
    let gate = asked_gate.map(|g| {
        let cx = gate::Context {
            runs,
            settings,
            min_change: min_change_pct,
            gate: g,
            continuing: false,
        };
        gate::tonight(&all, reference.as_ref(), &cx)
    });
    History {
        host: host.truncated(crate::model::label::MAX_HOST_LABEL),
        results: runs.len(),
        points: all.iter().map(|s| s.points.len()).max().unwrap_or(0),
        series: all.len(),
        max_p: settings.max_p,
        min_change_pct,
        noise_floor_pct: noise_floor_pct(runs),
        reference_moved_at,
        changes,
        suspected,
        closest,
        drifts,
        changed,
        unchanged,
        gate,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Repeat;

    /// A noise result whose only figure, the run time, is `ms` (ten runs of it).
    fn result(id: i64, minute: u32, ms: f64, repeat: Option<Repeat>) -> Run {
        let mut r = RunResult::example("h", false);
        r.started_at = chrono::TimeZone::with_ymd_and_hms(&Utc, 2026, 11, 1, 0, minute, 0).unwrap();
        r.repeat = repeat;
        if let crate::model::SuiteResult::Noise(n) = &mut r.suites[0] {
            n.runs = (0..10)
                .map(|_| crate::model::noise::NoiseRun {
                    time_ns: (ms * 1e6) as u64,
                    ..Default::default()
                })
                .collect();
            n.summary = crate::model::noise::summarize(&n.runs, 1000);
        }
        Run::of(id, &r)
    }

    /// As [`result`], each run read beside a fixed-work reference of `reference_ms`.
    fn beside(id: i64, minute: u32, ms: f64, reference_ms: f64) -> Run {
        let mut r = RunResult::example("h", false);
        r.started_at = chrono::TimeZone::with_ymd_and_hms(&Utc, 2026, 11, 1, 0, minute, 0).unwrap();
        let account: crate::model::account::Account = serde_json::from_value(serde_json::json!({
            "wall_ns": 1_000_000_000u64, "cpus": [0], "ticks": 100, "user_pct": 100.0,
            "system_pct": 0.0, "irq_pct": 0.0, "softirq_pct": 0.0, "steal_pct": 0.0,
            "iowait_pct": 0.0, "idle_pct": 0.0, "run_ns": 1_000_000_000u64, "wait_ns": 0,
            "slices": 1, "voluntary": 0, "involuntary": 0, "minor_faults": 0, "major_faults": 0,
            "reference_ns": reference_ms * 1e6,
        }))
        .unwrap();
        if let crate::model::SuiteResult::Noise(n) = &mut r.suites[0] {
            n.runs = (0..10)
                .map(|_| crate::model::noise::NoiseRun {
                    time_ns: (ms * 1e6) as u64,
                    account: Some(Box::new(account.clone())),
                    ..Default::default()
                })
                .collect();
            n.summary = crate::model::noise::summarize(&n.runs, 1000);
        }
        Run::of(id, &r)
    }

    /// The host ran 6% slower for ten runs of thirty, and the job with it: as measured, two
    /// changes; net of the host's speed, none. Where the reference itself stepped for good
    /// (a kernel's mitigations), nothing is netted and the job's step is found as measured.
    #[test]
    fn a_series_that_follows_the_hosts_speed_is_judged_net_of_it() {
        let wobble = |i: i64| 1.0 + 0.004 * ((i % 5) as f64 - 2.0);
        let slow = |i: i64| if (10..20).contains(&i) { 1.06 } else { 1.0 };
        let runs: Vec<Run> = (0..30)
            .map(|i| beside(i + 1, i as u32, 10.0 * slow(i) * wobble(i), 0.3 * slow(i)))
            .collect();
        let of = |runs: &[Run]| {
            history(
                &"h".into(),
                runs,
                &["run time".into()],
                &Settings::default(),
                Some(3.0),
                false,
                None,
            )
        };
        let measured: Vec<Run> = (0..30)
            .map(|i| result(i + 1, i as u32, 10.0 * slow(i) * wobble(i), None))
            .collect();
        assert_eq!(
            of(&measured).changes.len(),
            2,
            "{:?}",
            of(&measured).changes
        );
        let h = of(&runs);
        assert!(h.changes.is_empty(), "{:?}", h.changes);
        assert_eq!(h.reference_moved_at, None);
        let all = series(&runs, &["run time".into()]);
        let mut netted = all.clone();
        assert_eq!(net_of_host(&mut netted, None, &Settings::default()), None);
        let n = netted[0].net.expect("it follows");
        assert!((n.slope - 1.0).abs() < 0.05 && n.r > 0.95, "{n:?}");
        // The net values are on the figure's scale, at the host's typical speed.
        let net = netted[0].judged_values();
        assert!(net.iter().all(|v| (v / 10.0 - 1.0).abs() < 0.03), "{net:?}");
        // A reference that stepped for good, with the job.
        let kernel = |i: i64| if i >= 15 { 1.10 } else { 1.0 };
        let runs: Vec<Run> = (0..30)
            .map(|i| {
                beside(
                    i + 1,
                    i as u32,
                    10.0 * kernel(i) * wobble(i),
                    0.3 * kernel(i),
                )
            })
            .collect();
        let h = of(&runs);
        assert_eq!(h.reference_moved_at, Some(16));
        assert_eq!(h.changes.len(), 1, "{:?}", h.changes);
        assert_eq!((h.changes[0].result_id, h.changes[0].net), (16, None));
    }

    /// Run times and references of a real series (tests/history.rs on a busy 2-vCPU VM):
    /// fifteen 5 ms jobs, the last on a host 40% slower, then one of four times the work on a
    /// host 90% slower. By least squares the figure "followed" the host with slope +3 and the
    /// fourfold job was netted to +15%: nothing found. Learnt from ranks and the median of the
    /// pairs' slopes, the one far run cannot set the slope, and the newest is far beyond.
    #[test]
    fn one_run_far_out_on_both_axes_does_not_teach_the_slope() {
        let measured = [
            (5.110, 0.549),
            (4.937, 0.555),
            (4.877, 0.541),
            (5.121, 0.557),
            (4.865, 0.559),
            (4.842, 0.541),
            (4.869, 0.553),
            (4.869, 0.542),
            (4.834, 0.542),
            (4.873, 0.541),
            (4.903, 0.556),
            (4.808, 0.560),
            (5.267, 0.589),
            (4.997, 0.564),
            (8.320, 0.779),
            (36.361, 1.037),
        ];
        let runs: Vec<Run> = (0..16)
            .map(|i| beside(i as i64 + 1, i as u32, measured[i].0, measured[i].1))
            .collect();
        let mut all = series(&runs, &["run time".into()]);
        net_of_host(&mut all, None, &Settings::default());
        let judged = all[0].judged_values();
        let before = median(&judged[..15]).unwrap();
        assert!(judged[15] > 2.5 * before, "{:?} {judged:?}", all[0].net);
        if let Some(n) = all[0].net {
            assert!(n.slope < 1.5, "{n:?}");
        }
    }

    #[test]
    fn a_repeat_group_is_one_point_in_time_order() {
        let g = |run| {
            Some(Repeat {
                group: 2,
                run,
                of: 2,
            })
        };
        // Stored out of time order; 2 and 3 are one --repeat group.
        let results = vec![
            result(3, 5, 12.0, g(2)),
            result(1, 1, 10.0, None),
            result(2, 4, 14.0, g(1)),
            result(4, 9, 20.0, None),
        ];
        let s = series(&results, &["run time".into()]);
        assert_eq!(s.len(), 1);
        let p = &s[0].points;
        assert_eq!(p.len(), 3);
        assert_eq!(p[0].ids, vec![1]);
        assert_eq!(p[1].ids, vec![2, 3]);
        assert!((p[1].value - 13.0).abs() < 1e-9, "{:?}", p[1]);
        assert_eq!(p[2].ids, vec![4]);
        // A pattern that matches nothing: no series.
        assert!(series(&results, &["no such figure".into()]).is_empty());
    }

    #[test]
    fn a_step_gives_one_change_with_its_levels_and_direction() {
        let results: Vec<_> = (0..30)
            .map(|i| {
                let level = if i < 15 { 10.0 } else { 12.0 };
                // 1% wobble, the same every run.
                result(
                    i + 1,
                    i as u32,
                    level * (1.0 + 0.01 * ((i % 3) as f64 - 1.0)),
                    None,
                )
            })
            .collect();
        let h = history(
            &"h".into(),
            &results,
            &["run time".into()],
            &Settings::default(),
            Some(5.0),
            false,
            None,
        );
        assert_eq!(h.changes.len(), 1, "{h:?}");
        let c = &h.changes[0];
        assert_eq!(c.result_id, 16);
        assert!((c.change_pct - 20.0).abs() < 1.0, "{c:?}");
        assert!(c.worse, "a longer run time is worse");
        assert_eq!((c.points_before, c.points_after), (15, 15));
        let (lo, hi) = c.interval_pct.unwrap();
        assert!(lo < 20.0 && hi > 20.0 && lo > 15.0, "{c:?}");
        // Smaller than --min-change: not kept.
        let h = history(
            &"h".into(),
            &results,
            &["run time".into()],
            &Settings::default(),
            Some(25.0),
            false,
            None,
        );
        assert!(h.changes.is_empty());
    }

    /// A noise result whose ten runs take 100 ms but the last two, `pct` % slower: its p90
    /// run is that much slower than the fastest.
    fn spread(id: i64, minute: u32, pct: f64) -> Run {
        let mut r = RunResult::example("h", false);
        r.started_at = chrono::TimeZone::with_ymd_and_hms(&Utc, 2026, 11, 1, 0, minute, 0).unwrap();
        if let crate::model::SuiteResult::Noise(n) = &mut r.suites[0] {
            n.runs = (0..10)
                .map(|i| crate::model::noise::NoiseRun {
                    time_ns: if i < 8 {
                        100_000_000
                    } else {
                        (1e8 * (1.0 + pct / 100.0)) as u64
                    },
                    ..Default::default()
                })
                .collect();
            n.summary = crate::model::noise::summarize(&n.runs, 1000);
        }
        Run::of(id, &r)
    }

    #[test]
    fn a_percentage_changes_in_points() {
        let step = |low: f64, high: f64| -> Vec<Run> {
            (0..30)
                .map(|i| {
                    let level = if i < 15 { low } else { high };
                    spread(i + 1, i as u32, level + 0.02 * (i % 3) as f64)
                })
                .collect()
        };
        let p90 = ["p90 slower".to_string()];
        // 3% → 11% slower: 8 points, kept from 5 points.
        let h = history(
            &"h".into(),
            &step(3.0, 11.0),
            &p90,
            &Settings::default(),
            Some(5.0),
            false,
            None,
        );
        assert_eq!(h.changes.len(), 1, "{h:?}");
        let c = &h.changes[0];
        assert_eq!((c.unit.raw(), c.result_id, c.worse), ("%", 16, true));
        assert!((c.after - c.before - 8.0).abs() < 0.1, "{c:?}");
        // 0.2% → 0.6% slower is +200% of the level but 0.4 points: not kept from 1 point.
        let h = history(
            &"h".into(),
            &step(0.2, 0.6),
            &p90,
            &Settings::default(),
            Some(1.0),
            false,
            None,
        );
        assert!(h.changes.is_empty(), "{h:?}");
    }

    #[test]
    fn a_change_too_small_to_keep_does_not_cut_its_neighbours_level() {
        // 10 → 12 at point 15, then 12 → 12.6 (5%) at point 30, kept only from 4%.
        let results: Vec<_> = (0..45)
            .map(|i| {
                let level = match i {
                    0..15 => 10.0,
                    15..30 => 12.0,
                    _ => 12.6,
                };
                result(
                    i + 1,
                    i as u32,
                    level * (1.0 + 0.005 * ((i % 3) as f64 - 1.0)),
                    None,
                )
            })
            .collect();
        let run_time = ["run time".to_string()];
        let both = history(
            &"h".into(),
            &results,
            &run_time,
            &Settings::default(),
            Some(4.0),
            false,
            None,
        );
        assert_eq!(both.changes.len(), 2, "{both:?}");
        let h = history(
            &"h".into(),
            &results,
            &run_time,
            &Settings::default(),
            Some(8.0),
            false,
            None,
        );
        assert_eq!(h.changes.len(), 1, "{h:?}");
        let c = &h.changes[0];
        assert_eq!(c.result_id, 16);
        // The level after runs to the end: the dropped change is no boundary.
        assert_eq!((c.points_before, c.points_after), (15, 30));
        assert!((c.after - 12.3).abs() < 0.05, "{c:?}");
    }

    /// 200 points: a level of 100 that rises by `drift` percent over the series, with a step
    /// of `step` percent at point 120, in 1% noise (seeded).
    fn drifting(drift: f64, step: f64, seed: u64) -> Vec<f64> {
        drifting_in(drift, step, 0.01, seed)
    }

    pub(super) fn drifting_in(drift: f64, step: f64, sd: f64, seed: u64) -> Vec<f64> {
        use rand::SeedableRng;
        use rand_distr::{Distribution, Normal};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let noise = Normal::new(0.0, sd).unwrap();
        (0..200)
            .map(|i| {
                let level = 100.0 * (1.0 + drift / 100.0 * i as f64 / 199.0);
                let level = if i >= 120 {
                    level * (1.0 + step / 100.0)
                } else {
                    level
                };
                level * (1.0 + noise.sample(&mut rng))
            })
            .collect()
    }

    #[test]
    fn a_drift_is_one_drift_a_step_a_step_and_a_step_on_a_drift_both() {
        let settings = Settings::default();
        for seed in 1..=3 {
            // A +5% drift: a line, no step (a step search alone cuts it into a staircase).
            let staircase = search(&drifting(5.0, 0.0, seed), &settings);
            assert!(!staircase.points.is_empty(), "seed {seed}");
            let d = find(&drifting(5.0, 0.0, seed), &settings);
            assert!(d.points.is_empty(), "seed {seed}: {:?}", d.points);
            let (start, slope, _) = d.drift.expect("a drift");
            assert!(
                (slope * 199.0 / start - 0.05).abs() < 0.01,
                "{start} {slope}"
            );
            // A 10% step alone: a step, no drift.
            let s = find(&drifting(0.0, 10.0, seed), &settings);
            assert!(s.drift.is_none(), "seed {seed}");
            assert_eq!(s.points.iter().map(|c| c.index).collect::<Vec<_>>(), [120]);
            // A 10% step on the drift: both, the step where it is.
            let b = find(&drifting(5.0, 10.0, seed), &settings);
            assert!(b.drift.is_some(), "seed {seed}");
            assert!(
                b.points.iter().any(|c| c.index.abs_diff(120) <= 1),
                "seed {seed}: {:?}",
                b.points
            );
            assert!(b.points.len() <= 2, "seed {seed}: {:?}", b.points);
        }
    }

    #[test]
    fn a_drift_cut_once_is_a_drift() {
        // A +5% drift in 3% noise: the step search cuts nearly every such series once. A lone
        // step that a line alone fits better is the drift it is. (Judged by the levels' own
        // slope only, 18 of these 40 kept their step: the levels the cut leaves look flat, since
        // that is where it was put.)
        let settings = Settings::default();
        let (mut once, mut stepped) = (0, 0);
        for seed in 1..=40 {
            let z = drifting_in(5.0, 0.0, 0.03, seed);
            once += usize::from(search(&z, &settings).points.len() == 1);
            let d = find(&z, &settings);
            if !d.points.is_empty() {
                stepped += 1;
            } else {
                assert!(d.drift.is_some(), "seed {seed}");
            }
        }
        assert!(once >= 30, "{once} of 40 cut once");
        assert!(stepped <= 6, "{stepped} of 40 drifts kept a step");
        // A lone step on flat levels stays a step (its levels do not slope).
        for seed in 1..=5 {
            let s = find(&drifting_in(0.0, 5.0, 0.025, seed), &settings);
            assert!(s.drift.is_none(), "seed {seed}");
            assert_eq!(s.points.len(), 1, "seed {seed}: {:?}", s.points);
        }
    }
}
#[cfg(test)]
mod newest_outlier {
    use super::*;

    /// Fifteen runs of about 5 ms that creep up by 2%, then one of 20 ms (a CI run of
    /// tests/history.rs): the newest run is suspected, and no drift is read through it.
    #[test]
    fn one_far_newest_point_is_suspected_not_a_drift() {
        let v = [
            4.960, 4.912, 4.886, 4.901, 4.953, 4.964, 5.022, 4.989, 5.039, 5.040, 5.031, 5.058,
            5.043, 5.049, 5.031, 19.928,
        ];
        let f = find(&v, &Settings::default());
        assert_eq!(f.drift, None);
        assert_eq!(f.suspect.map(|s| s.k), Some(1));
    }

    #[test]
    fn a_far_newest_point_after_a_small_rise_is_suspected_not_cut() {
        // From a CI run: the last three of fifteen runs 1.5% up, then one four times as long.
        // E-divisive alone cut the last three points off at p 0.003, and the line through
        // them all was read as a drift of +9.6 ms a run.
        let v = [
            4.900, 4.973, 4.923, 4.880, 4.900, 4.915, 4.903, 4.917, 4.911, 4.907, 4.896, 4.914,
            4.952, 4.987, 4.997, 19.554,
        ];
        let f = find(&v, &Settings::default());
        assert!(f.points.is_empty(), "{:?}", f.points);
        assert_eq!(f.drift, None);
        assert_eq!(f.suspect.map(|s| s.k), Some(1));
    }

    #[test]
    fn a_series_file_keeps_changes_as_a_store_does() {
        let mut text = String::from("series,value,floor\n");
        for i in 0..40 {
            let v = if i >= 20 { 102.0 } else { 100.0 } + (i % 3) as f64 * 0.01;
            text.push_str(&format!("a,{v},1.0\n"));
        }
        let settings = Settings::default();
        // A 2% step above a 1% floor is kept, below a 5% one it is not.
        let kept = series_change_points(text.as_bytes(), &settings, None).unwrap();
        assert_eq!(kept["a"], vec![20]);
        let big = text.replace(",1.0\n", ",5.0\n");
        assert!(series_change_points(big.as_bytes(), &settings, None).unwrap()["a"].is_empty());
        assert!(
            series_change_points(text.as_bytes(), &settings, Some(3.0)).unwrap()["a"].is_empty()
        );
        // Without floors, any size; a bad header says what it must be.
        let plain = text
            .replace("series,value,floor", "series,value")
            .replace(",1.0\n", "\n");
        assert_eq!(
            series_change_points(plain.as_bytes(), &settings, None).unwrap()["a"],
            vec![20]
        );
        let bad = series_change_points(b"series,value,x\na,1,1\n", &settings, None).unwrap_err();
        assert!(bad.contains("series,value,floor"), "{bad}");
    }

    #[test]
    fn a_drift_is_fitted_without_a_newest_step() {
        let mut v = super::tests::drifting_in(5.0, 0.0, 0.005, 7);
        for x in &mut v[197..] {
            *x *= 1.15;
        }
        let f = find(&v, &Settings::default());
        let (start, slope, n) = f.drift.expect("a drift");
        assert_eq!(n, 197, "{f:?}");
        let span = slope * (n - 1) as f64 / start * 100.0;
        assert!((3.0..7.0).contains(&span), "{span}% over {n}");
        assert!(
            f.points.last().is_some_and(|c| c.index == 197),
            "{:?}",
            f.points
        );
    }

    #[test]
    fn a_cut_a_newest_rise_made_gives_way_to_the_newest_test() {
        // A 2% rise at point 30 that the series without its newest two does not show (at
        // this seed), then 12% in the newest two: E-divisive alone cuts where the small rise
        // starts, nine points from the end ("+3.7% from result 31" for a step at result 38).
        use rand::SeedableRng;
        use rand_distr::{Distribution, Normal};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(30);
        let noise = Normal::new(0.0, 0.01).unwrap();
        let v: Vec<f64> = (0..39)
            .map(|i| {
                let level = match i {
                    0..=29 => 100.0,
                    30..=36 => 102.0,
                    _ => 112.0,
                };
                level * (1.0 + noise.sample(&mut rng))
            })
            .collect();
        let settings = Settings::default();
        let alone: Vec<usize> = levels(&v, &settings).iter().map(|c| c.index).collect();
        assert_eq!(alone, vec![30], "the case");
        assert!(levels(&v[..37], &settings)
            .iter()
            .all(|c| c.index.abs_diff(30) > 1));
        let f = find(&v, &settings);
        let at: Vec<(usize, bool)> = f.points.iter().map(|c| (c.index, c.newest)).collect();
        assert_eq!(at, vec![(37, true)], "{f:?}");
    }
}
