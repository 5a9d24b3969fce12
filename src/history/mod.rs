//! `hostbench history`: each figure's series over the stored results of one host, in time
//! order, and the runs where it changed, found by E-divisive means (`stats::edivisive`).

use std::collections::{BTreeMap, HashMap};

use chrono::{DateTime, Utc};
use serde::Serialize;
use statrs::distribution::{ContinuousCDF, StudentsT};

use crate::model::figures::{Better, FigureValue, Kept, HOST_REFERENCE_KEY};
use crate::model::stored::StoredEntry;
use crate::model::RunResult;
use crate::stats::edivisive::{self, ChangePoint, Settings};
use crate::stats::newest::{self, Newest};
use crate::stats::{median, welch_test, Follows};
use crate::store::{Filter, ResultStore};
use crate::text::Text;

mod changes;
mod find;
pub mod gate;
pub mod memo;
mod series_csv;

use memo::Recall;

pub use changes::*;
pub use find::*;
pub use series_csv::*;

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
        let found = find(&values, settings, None);
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

/// A host's history.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct History {
    pub host: Text,
    /// Results read (runs), and the points they made.
    pub results: usize,
    pub points: usize,
    pub series: usize,
    /// When the newest result read started (None: none was read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub newest_at: Option<DateTime<Utc>>,
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
pub fn series<'a>(runs: &'a [Run], patterns: &[String]) -> Vec<Series> {
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
    // Each key's series, by its place in `all`; sorted by key at the end.
    let mut index: HashMap<&str, usize> = HashMap::new();
    let mut all: Vec<Series> = Vec::new();
    let mut series_of = |f: &'a FigureValue| -> usize {
        *index.entry(f.key.raw()).or_insert_with(|| {
            all.push(Series {
                key: f.key.clone(),
                name: f.name.clone(),
                unit: f.unit.clone(),
                better: f.better,
                points: Vec::new(),
                net: None,
                spread: f.spread,
            });
            all.len() - 1
        })
    };
    let mut placed: Vec<(usize, Point)> = Vec::new();
    for runs in &points {
        let started_at = runs.iter().map(|r| r.started_at).min().expect("runs");
        // A point of one run (no repeat group): its figures as they are, gathered nowhere.
        if let [r] = runs.as_slice() {
            for f in r.kept.figures.iter().filter(|f| wanted(&f.key)) {
                if !f.value.is_finite() {
                    continue;
                }
                let i = series_of(f);
                placed.push((i, one_run_point(r.id, started_at, f)));
            }
            continue;
        }
        let mut values: BTreeMap<&str, (usize, Gathered)> = BTreeMap::new();
        for r in runs {
            for f in r.kept.figures.iter().filter(|f| wanted(&f.key)) {
                if !f.value.is_finite() {
                    continue;
                }
                let i = series_of(f);
                let (_, v) = values
                    .entry(f.key.raw())
                    .or_insert_with(|| (i, Gathered::default()));
                v.values.push(f.value);
                v.ids.push(r.id);
                v.hosts.push(f.host_ms);
            }
        }
        for (i, g) in values.into_values() {
            placed.push((i, g.point(started_at)));
        }
    }
    for (i, p) in placed {
        all[i].points.push(p);
    }
    all.sort_by(|a, b| a.key.raw().cmp(b.key.raw()));
    all
}

/// The point of one run's figure: what [`Gathered::point`] makes of it, without gathering.
fn one_run_point(id: i64, started_at: DateTime<Utc>, f: &FigureValue) -> Point {
    Point {
        ids: vec![id],
        started_at,
        value: f.value,
        values: vec![f.value],
        // As the geometric mean of one, to the last bit.
        host_ms: f.host_ms.filter(|h| *h > 0.0).map(|h| (h.ln() / 1.0).exp()),
        net: None,
    }
}

impl Gathered {
    /// The point of a group's runs: their mean, and the geometric mean of the host's speed
    /// where every run read it.
    fn point(self, started_at: DateTime<Utc>) -> Point {
        let Gathered {
            values,
            mut ids,
            hosts,
        } = self;
        ids.sort_unstable();
        let host_ms = hosts
            .iter()
            .map(|h| h.filter(|h| *h > 0.0).map(f64::ln))
            .sum::<Option<f64>>()
            .map(|sum| (sum / hosts.len() as f64).exp());
        Point {
            ids,
            started_at,
            value: values.iter().sum::<f64>() / values.len() as f64,
            values,
            host_ms,
            net: None,
        }
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
    let ask = Ask {
        patterns,
        settings,
        min_change_pct,
        every_series,
        gate: asked_gate,
    };
    history_recalled(host, runs, &ask, None).0
}

/// What a history is asked for: the figures (`patterns`), the search's settings, the least
/// change kept, whether every series is kept whole (not only the changed), and the gate.
pub struct Ask<'a> {
    pub patterns: &'a [String],
    pub settings: &'a Settings,
    pub min_change_pct: Option<f64>,
    pub every_series: bool,
    pub gate: Option<&'a gate::Gate>,
}

/// [`history`], taking the searches an earlier run kept of this host's series (`history
/// --state`, [`memo`]) where they stand for this run's: with them, also what to keep for the
/// next run and how many series were searched whole.
pub fn history_recalled(
    host: &Text,
    runs: &[Run],
    ask: &Ask,
    before: Option<&HashMap<String, memo::Kept>>,
) -> (History, Option<memo::HostKept>) {
    let Ask {
        patterns,
        settings,
        min_change_pct,
        every_series,
        gate: asked_gate,
    } = *ask;
    let mut all = series(runs, patterns);
    let reference = series(runs, &[HOST_REFERENCE_KEY.to_string()])
        .into_iter()
        .find(|s| s.key.raw() == HOST_REFERENCE_KEY);
    let reference_moved_at = net_of_host(&mut all, reference.as_ref(), settings);
    let recalls: Option<Vec<Recall>> = before.map(|kept| {
        all.iter()
            .map(|s| {
                let ids: Vec<i64> = s.points.iter().map(|p| p.ids[0]).collect();
                Recall::new(kept.get(s.key.raw()), &ids, s.key.raw())
            })
            .collect()
    });
    let Findings {
        changes,
        suspected,
        drifts,
    } = changes(&all, runs, settings, min_change_pct, recalls.as_deref());
    // Only the series kept in the history are copied (a fleet's: the changed ones).
    let is_changed = |s: &&Series| changes.iter().any(|c| c.key == s.key);
    let changed: Vec<Series> = all.iter().filter(is_changed).cloned().collect();
    let unchanged: Vec<Series> = if every_series {
        all.iter().filter(|s| !is_changed(s)).cloned().collect()
    } else {
        Vec::new()
    };
    // A drifting series' best cut is no close call: its drift is reported.
    let closest = if changes.is_empty() {
        let steady: Vec<Series> = all
            .iter()
            .filter(|s| drifts.iter().all(|d| d.key != s.key))
            .cloned()
            .collect();
        let by_key: HashMap<&str, &Recall> = match &recalls {
            Some(r) => all.iter().map(|s| s.key.raw()).zip(r).collect(),
            None => HashMap::new(),
        };
        closest(&steady, settings, |key| by_key.get(key).copied())
    } else {
        Vec::new()
    };
    let kept = recalls.map(|recalls| {
        let mut tally = memo::Tally::default();
        let kept = all
            .iter()
            .zip(recalls)
            .map(|(s, r)| {
                let (kept, whole) = r.into_kept();
                tally.add(whole);
                (s.key.raw().to_string(), kept)
            })
            .collect();
        (kept, tally)
    });
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
    let h = History {
        host: host.truncated(crate::model::label::MAX_HOST_LABEL),
        results: runs.len(),
        points: all.iter().map(|s| s.points.len()).max().unwrap_or(0),
        series: all.len(),
        newest_at: runs.iter().map(|r| r.started_at).max(),
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
    };
    (h, kept)
}

#[cfg(test)]
impl History {
    /// A host's history of `n` results of one series, with nothing in it.
    pub fn quiet(host: &str, n: usize) -> History {
        History {
            host: host.into(),
            results: n,
            points: n,
            series: 1,
            newest_at: None,
            max_p: 0.01,
            min_change_pct: None,
            noise_floor_pct: None,
            reference_moved_at: None,
            changes: Vec::new(),
            suspected: Vec::new(),
            closest: Vec::new(),
            drifts: Vec::new(),
            changed: Vec::new(),
            unchanged: Vec::new(),
            gate: None,
        }
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod newest_outlier;
