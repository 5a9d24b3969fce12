//! The nightly gate (`history --fail-on`): is the newest result, or the newest few (at most
//! `--window`), worse than the level before it beyond this host's noise, for the first time? The
//! gate keeps no state: it judges the earlier nights of the new level again from the same store,
//! so a rerun of a night gives the same answer and a read-only login can run it.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use serde::Serialize;

use super::{in_points, levels, Point, Run, Series};
use crate::model::account::{summary_verdicts, Item, ItemVerdicts};
use crate::model::figures::{Better, HOST_REFERENCE_KEY};
use crate::stats::edivisive::Settings;
use crate::stats::median;
use crate::stats::newest::{
    each_newest, heavy_tailed, level_has_seen, newest, NewestLevel, MAX_NEWEST,
};
use crate::text::Text;

/// The most newest results a new level may hold and still fail the job.
pub const MAX_WINDOW: usize = MAX_NEWEST;

/// The most points of the level before whose own stretches are checked against the newest
/// (`stats::newest::level_has_seen`): its newest 200.
const MAX_GUARD: usize = 200;

/// How unlikely under normal noise the level's most extreme result must be for the level to
/// count as heavy-tailed (`stats::newest::heavy_tailed`).
const HEAVY_P: f64 = 0.05;
/// The host's fixed-work reference, a time: slower is larger.
const REFERENCE: Shape<'static> = Shape {
    better: Better::Lower,
    unit: "ms",
    spread: false,
};

/// What the gate asks.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Gate {
    /// A new level of at most this many newest results fails the job (1 to [`MAX_WINDOW`]).
    pub window: usize,
    /// Student's one-sided p of the newest results' mean against the level before, times the
    /// number of newest counts tried, at most this.
    pub max_p: f64,
    /// Fail also where the host's own speed moved the figure.
    pub host_shifts: bool,
}

/// A figure the gate found worse in the newest results.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Worse {
    pub key: Text,
    pub name: Text,
    pub unit: Text,
    /// Which way the figure improves: `change` is signed as the values moved.
    pub better: Better,
    /// The first result of the new level, and its time.
    pub result_id: i64,
    pub started_at: DateTime<Utc>,
    pub points_after: usize,
    pub points_before: usize,
    pub before: f64,
    pub after: f64,
    /// The change: in points for a percentage, else in % of `before`; and its 95% interval
    /// from the same t as `p`.
    pub change: f64,
    pub interval: (f64, f64),
    /// Student's one-sided p, times `tried` (the newest counts tested); or, where the level
    /// before is heavy-tailed (`normal` false), the shuffles' p (no shape of noise assumed).
    pub p: f64,
    pub normal: bool,
    /// Whether the account named a cause in the newest results (another task on the
    /// figure's CPUs), so that Student's t spoke without the guards against the figure's own
    /// noise.
    pub named: bool,
    pub tried: usize,
    /// The smallest change the gate fails on here: `--min-change`, or the noise floor of the
    /// level before.
    pub least: f64,
    /// The newest result of the earliest earlier night on which the gate already found this
    /// level worse: it then does not fail again.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub found_on: Option<i64>,
    /// Where `found_on` is another figure's night: that figure (the same event).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub found_with: Option<Text>,
    /// Where the host's own speed moved the figure: how that is known. It then fails only
    /// with `--fail-on-host`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// What the host's account says beside it (two results a side at least).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub account: Option<ItemVerdicts>,
    /// Whether it fails the job tonight: not found before, and not the host's own (or
    /// `--fail-on-host`).
    pub fails: bool,
}

#[cfg(test)]
impl Worse {
    /// A figure found worse on its first night: `change` % from 100 ms (a time, lower is
    /// better), at p 0.001, from result 16 on.
    pub fn first_night(key: &str, change: f64) -> Worse {
        Worse {
            key: key.into(),
            name: key.into(),
            unit: "ms".into(),
            better: Better::Lower,
            result_id: 16,
            started_at: DateTime::from_timestamp(1_700_000_000, 0).expect("a valid time"),
            points_after: 1,
            points_before: 15,
            before: 100.0,
            after: 100.0 + change,
            change,
            interval: (change / 2.0, change * 1.5),
            p: 0.001,
            normal: true,
            named: false,
            tried: 1,
            least: 2.0,
            found_on: None,
            found_with: None,
            host: None,
            account: None,
            fails: true,
        }
    }
}

/// What the gate needs besides a series.
pub struct Context<'a> {
    pub runs: &'a [Run],
    pub settings: &'a Settings,
    pub min_change: Option<f64>,
    pub gate: &'a Gate,
    /// Judging a level already found on an earlier night, to show it: Student's t alone
    /// for two newest results or more (it never fails the job).
    pub continuing: bool,
}

impl Context<'_> {
    /// The noise floor of `points`: the median of their results' own floors.
    fn floor(&self, by_id: &HashMap<i64, &Run>, points: &[Point]) -> f64 {
        let floors: Vec<f64> = points
            .iter()
            .flat_map(|p| &p.ids)
            .filter_map(|id| by_id.get(id)?.kept.noise_floor_pct)
            .collect();
        median(&floors).unwrap_or(0.0)
    }
}

/// A new level found in the newest points of one series of values.
#[derive(Debug, Clone, Copy)]
struct Hit {
    from: usize,
    level: NewestLevel,
    change: f64,
    interval: (f64, f64),
    p: f64,
    tried: usize,
    least: f64,
    /// Whether `p` is Student's (normal noise assumed), not the shuffles'.
    normal: bool,
    /// Whether the account named a cause, so the guards were not asked.
    named: bool,
}

/// What kind of figure a series is, as the gate judges it.
#[derive(Debug, Clone, Copy)]
struct Shape<'a> {
    better: Better,
    unit: &'a str,
    /// A spread of runs (`Series::spread`).
    spread: bool,
}

impl<'a> Shape<'a> {
    fn of(s: &'a Series) -> Self {
        Shape {
            better: s.better,
            unit: s.unit.raw(),
            spread: s.spread,
        }
    }
}

/// The worse newest level of `values` (the series' points' values, up to tonight), if any:
/// the most certain of the newest counts that pass (`Tonight::judge`).
fn hit(
    values: &[f64],
    points: &[Point],
    shape: Shape,
    cx: &Context,
    by_id: &HashMap<i64, &Run>,
    caused: &dyn Fn(usize, usize) -> bool,
) -> Option<Hit> {
    let n = values.len();
    let head = n.checked_sub(cx.gate.window)?;
    let from = if head >= 2 * cx.settings.min_size {
        levels(&values[..head], cx.settings, None)
            .last()
            .map_or(0, |c| c.index)
    } else {
        0
    };
    let tested = each_newest(&values[from..], cx.gate.window);
    let tried = tested.len();
    let sign = match shape.better {
        Better::Lower => 1.0,
        Better::Higher => -1.0,
    };
    let night = Tonight {
        values,
        points,
        from,
        tried,
        sign,
        in_points: in_points(shape.unit),
        spread: shape.spread,
        // A level with a heavier tail toward worse than normal noise has is judged by the
        // shuffles alone (no shape assumed): one newest result can then not be certain.
        heavy: heavy_tailed(&values[from..n - tried.min(n - from)], sign, HEAVY_P),
        shuffles: std::cell::OnceCell::new(),
        cx,
        by_id,
        caused,
    };
    tested
        .iter()
        .filter_map(|l| night.judge(l))
        .min_by(|a, b| a.p.total_cmp(&b.p).then(a.level.k.cmp(&b.level.k)))
}

/// One series' night, as [`hit`] judges each newest count of it.
struct Tonight<'a> {
    values: &'a [f64],
    points: &'a [Point],
    /// The first point of the level before.
    from: usize,
    /// The newest counts tested.
    tried: usize,
    /// +1 where larger is worse, −1 where smaller is.
    sign: f64,
    in_points: bool,
    /// A spread of runs: judged as a heavy-tailed level always.
    spread: bool,
    heavy: bool,
    /// The newest test's shuffles, run once where asked.
    shuffles: std::cell::OnceCell<Option<crate::stats::newest::Newest>>,
    cx: &'a Context<'a>,
    by_id: &'a HashMap<i64, &'a Run>,
    caused: &'a dyn Fn(usize, usize) -> bool,
}

impl Tonight<'_> {
    /// The shuffles' verdict on the newest points, where it leans worse.
    fn shuffled(&self) -> Option<crate::stats::newest::Newest> {
        *self.shuffles.get_or_init(|| {
            newest(
                &self.values[self.from..],
                self.cx.gate.max_p,
                self.cx.settings.seed,
            )
            .filter(|s| s.shuffled && s.t * self.sign > 0.0)
        })
    }

    /// The smallest change the newest `k` fail on: `--min-change`, or the level's floor. One
    /// newest result has no spread of its new level for the t to pool: its own runs' spread
    /// (its noise floor) stands in, so the change must pass that too, unless the account
    /// names a cause (`named`: a task beside the job spreads its runs as it slows them).
    fn least(&self, k: usize, named: bool) -> f64 {
        let n = self.values.len();
        self.cx.min_change.unwrap_or_else(|| {
            let before = self.cx.floor(self.by_id, &self.points[self.from..n - k]);
            if k == 1 && !named {
                before.max(self.cx.floor(self.by_id, &self.points[n - 1..]))
            } else {
                before
            }
        })
    }

    /// The p of the newest `l.k` and whether it is Student's; None where the shuffles must
    /// speak and do not lean worse. Where the account names a cause (another task on the
    /// figure's CPUs, beyond any result of the level before), the account decides: Student's
    /// t alone. A heavy-tailed level is the shuffles' (unless one newest result lies far
    /// beyond it), and so is a spread of runs always: a maximum of runs has a long tail by
    /// construction, one point far out is what it does; two newest results or more must pass the shuffles too. (Where they cannot
    /// reach the bar, k newest of N being the k farthest by chance one time in C(N, k), the
    /// level waits for more nights.) A level already found (`Context::continuing`) is
    /// Student's.
    fn p(&self, l: &NewestLevel, named: bool) -> Option<(f64, bool)> {
        let n = self.values.len();
        let student = (l.p_toward(self.sign) * self.tried as f64).min(1.0);
        let far = l.k == 1
            && far_beyond(
                &self.values[self.from..n - 1],
                self.values[n - 1],
                self.sign,
            );
        Some(if named || self.cx.continuing {
            (student, true)
        } else if self.spread || (self.heavy && !far) {
            (self.shuffled().filter(|s| s.k == l.k)?.p, false)
        } else if l.k >= 2 {
            (student.max(self.shuffled()?.p), true)
        } else {
            (student, true)
        })
    }

    /// The newest `l.k` points' verdict: big enough, past the bar (`--p` whole where the
    /// account names a cause), and beyond anything the level's own stretches did.
    fn judge(&self, l: &NewestLevel) -> Option<Hit> {
        let n = self.values.len();
        let scale = if self.in_points {
            1.0
        } else {
            l.before.abs() / 100.0
        };
        if scale == 0.0 {
            return None;
        }
        let change = (l.after - l.before) / scale;
        let named = (self.caused)(self.from, l.k);
        let least = self.least(l.k, named);
        if change * self.sign < least {
            return None;
        }
        // The account decides where it names a cause: its own test (the item beyond every
        // result of the level before, or Welch's) is the evidence, and the figure need only
        // be worse by its floor.
        let bar = if named { 1.0 } else { self.cx.gate.max_p };
        let (p, normal) = self.p(l, named)?;
        let level = &self.values[self.from..n - l.k];
        let seen = || {
            let guarded = &level[level.len().saturating_sub(MAX_GUARD)..];
            level_has_seen(guarded, l.k, l.t, self.sign)
        };
        if p > bar || (!named && !self.heavy && seen()) {
            return None;
        }
        let (lo, hi) = l.interval();
        Some(Hit {
            from: self.from,
            level: *l,
            change,
            interval: (lo / scale, hi / scale),
            p,
            tried: self.tried,
            least,
            normal,
            named,
        })
    }
}

/// How many times as far from a heavy-tailed level's median as its farthest result one newest
/// result must lie to be judged by Student's t all the same (a job four times as slow, beside
/// a level with one run a third slower).
const FAR_BEYOND: f64 = 3.0;

/// Whether `newest` lies further from `level`'s median toward `sign` than [`FAR_BEYOND`] times
/// the farthest result of the level does.
fn far_beyond(level: &[f64], newest: f64, sign: f64) -> bool {
    let Some(mid) = median(level) else {
        return false;
    };
    let farthest = level.iter().map(|x| (x - mid) * sign).fold(0.0, f64::max);
    (newest - mid) * sign > FAR_BEYOND * farthest
}

/// The earliest of `s`' nights from its `first` point (the series up to and with it) to the
/// night before tonight on which the gate found it worse: the newest result of that night.
/// Each night is judged on the values that night's history had: net of the host's speed as
/// learnt up to that night where tonight's are net (`as_measured`: tonight found it in the
/// values as measured).
fn found_since(
    s: &Series,
    first: usize,
    as_measured: bool,
    cx: &Context,
    by_id: &HashMap<i64, &Run>,
) -> Option<i64> {
    let n = s.points.len();
    (first.max(1)..n)
        .find(|&m| {
            let points = &s.points[..m];
            let raw = || points.iter().map(|p| p.value).collect::<Vec<f64>>();
            let values = if as_measured || s.net.is_none() {
                raw()
            } else {
                super::net_values(points).map_or_else(raw, |(net, _)| net)
            };
            judge(s, &values, points, cx, by_id).is_some()
        })
        .map(|m| s.points[m - 1].ids[0])
}

/// The gate on one series' `values` at `points` (the series up to one night).
fn judge(
    s: &Series,
    values: &[f64],
    points: &[Point],
    cx: &Context,
    by_id: &HashMap<i64, &Run>,
) -> Option<Hit> {
    let caused = |from: usize, k: usize| competed(verdicts(by_id, points, from, k).as_ref());
    hit(values, points, Shape::of(s), cx, by_id, &caused)
}

/// What the account says of `points`' newest k results against those from `from`.
fn verdicts(
    by_id: &HashMap<i64, &Run>,
    points: &[Point],
    from: usize,
    k: usize,
) -> Option<ItemVerdicts> {
    let n = points.len();
    summary_verdicts(
        &summaries(by_id, &points[from..n - k]),
        &summaries(by_id, &points[n - k..]),
    )
}

/// Tonight's worse figures among `all` (the history's series, judged as it judges them), the
/// host's fixed-work reference aside.
///
/// A change found on an earlier night, or older than the window, does not fail again.
pub fn tonight(all: &[Series], reference: Option<&Series>, cx: &Context) -> Vec<Worse> {
    let by_id: HashMap<i64, &Run> = cx.runs.iter().map(|r| (r.id, r)).collect();
    let reference_at: HashMap<i64, f64> = reference
        .map(|r| r.points.iter().map(|p| (p.ids[0], p.value)).collect())
        .unwrap_or_default();
    let mut out: Vec<Worse> = all
        .iter()
        .filter(|s| s.key.raw() != HOST_REFERENCE_KEY)
        .filter_map(|s| one(s, &reference_at, cx, &by_id))
        .collect();
    // The job fails once an event: where another figure was found worse on one of the
    // window's earlier nights, tonight's new one is that event's too.
    if out.iter().any(|w| w.fails) {
        let earlier = all
            .iter()
            .filter(|s| s.key.raw() != HOST_REFERENCE_KEY)
            .filter_map(|s| {
                let n = s.points.len();
                let at = found_since(s, n.saturating_sub(cx.gate.window - 1), false, cx, &by_id)?;
                Some((at, s.name.clone()))
            })
            .min_by_key(|(at, _)| *at);
        if let Some((at, name)) = earlier {
            for w in out.iter_mut().filter(|w| w.fails) {
                w.fails = false;
                w.found_on = Some(at);
                w.found_with = Some(name.clone());
            }
        }
    }
    out.sort_by(|a, b| {
        b.fails
            .cmp(&a.fails)
            .then(in_points(a.unit.raw()).cmp(&in_points(b.unit.raw())))
            .then(a.p.total_cmp(&b.p))
            .then(a.key.cmp(&b.key))
    });
    out
}

/// One series' verdict: judged as the history judges it (net of the host's speed where it
/// follows it); as measured too where it is netted, so that a worsening the host's speed made
/// is said. Whose it is, the host's speed's or the figure's, the account decides where it
/// names a cause: another task on the figure's CPUs (run-queue wait, preemptions) makes it
/// the figure's, even where the reference, on the same CPUs, slowed with it.
fn one(
    s: &Series,
    reference_at: &HashMap<i64, f64>,
    cx: &Context,
    by_id: &HashMap<i64, &Run>,
) -> Option<Worse> {
    let judged = s.judged_values();
    let raw = || -> Vec<f64> { s.points.iter().map(|p| p.value).collect() };
    let found = judge(s, &judged, &s.points, cx, by_id)
        .map(|f| (judged.clone(), f, false))
        .or_else(|| {
            s.net.as_ref()?;
            let raw = raw();
            let f = judge(s, &raw, &s.points, cx, by_id)?;
            Some((raw, f, true))
        });
    let (values, found, netted_away) = found.or_else(|| continuing(s, &judged, cx, by_id))?;
    // Found before: on an earlier night of the new level, or of the window.
    let n = values.len();
    let since = (n - found.level.k + 1).min(n.saturating_sub(cx.gate.window - 1));
    let found_on = found_since(s, since, netted_away, cx, by_id);
    let first = n - found.level.k;
    let account = verdicts(by_id, &s.points, found.from, found.level.k);
    let host = if competed(account.as_ref()) {
        None
    } else if netted_away {
        Some("net of the host's speed it is within noise (the figure follows the fixed-work reference)".to_string())
    } else {
        host_moved(s, reference_at, account.as_ref(), cx, by_id)
    };
    let at = &s.points[first];
    Some(Worse {
        key: s.key.clone(),
        name: s.name.clone(),
        unit: s.unit.clone(),
        better: s.better,
        result_id: at.ids[0],
        started_at: at.started_at,
        points_after: found.level.k,
        points_before: first - found.from,
        before: found.level.before,
        after: found.level.after,
        change: found.change,
        interval: found.interval,
        p: found.p,
        normal: found.normal,
        named: found.named,
        tried: found.tried,
        least: found.least,
        fails: found_on.is_none() && (host.is_none() || cx.gate.host_shifts),
        found_on,
        found_with: None,
        host,
        account,
    })
}

/// The account summaries of `points`' results.
fn summaries<'a>(by_id: &HashMap<i64, &'a Run>, points: &[Point]) -> Vec<&'a [(String, f64)]> {
    points
        .iter()
        .flat_map(|p| &p.ids)
        .filter_map(|id| Some(by_id.get(id)?.kept.account.as_slice()))
        .collect()
}

/// A level that tonight's test does not find (two newest results, too few for the shuffles)
/// but an earlier night of the window did: found again by Student's t alone, so that it is
/// shown as found already rather than gone.
fn continuing(
    s: &Series,
    judged: &[f64],
    cx: &Context,
    by_id: &HashMap<i64, &Run>,
) -> Option<(Vec<f64>, Hit, bool)> {
    if cx.continuing {
        return None;
    }
    let relaxed = Context {
        continuing: true,
        ..*cx
    };
    let found = judge(s, judged, &s.points, &relaxed, by_id)?;
    let n = s.points.len();
    found_since(s, n.saturating_sub(cx.gate.window - 1), false, cx, by_id)?;
    Some((judged.to_vec(), found, false))
}

/// Whether the account says another task took the figure's CPUs in the newest results: more
/// run-queue wait or more preemptions.
fn competed(account: Option<&ItemVerdicts>) -> bool {
    let items = [Item::Wait.name().0, Item::Involuntary.name().0];
    account.is_some_and(|v| {
        v.changed
            .iter()
            .any(|c| items.contains(&c.item.as_str()) && c.b > c.a)
    })
}

/// Whether the host's own speed made a worsening not netted of it: the fixed-work reference
/// read beside the figure was slower over the same newest results, by the gate's own test; or
/// the account says the hypervisor took more of the CPU (steal) or the reference slowed.
fn host_moved(
    s: &Series,
    reference_at: &HashMap<i64, f64>,
    account: Option<&ItemVerdicts>,
    cx: &Context,
    by_id: &HashMap<i64, &Run>,
) -> Option<String> {
    let reference: Option<Vec<f64>> = s
        .points
        .iter()
        .map(|p| reference_at.get(&p.ids[0]).copied())
        .collect();
    if let Some(r) = reference {
        // The reference is a time: slower is larger.
        if let Some(h) = hit(&r, &s.points, REFERENCE, cx, by_id, &|_, _| false) {
            return Some(format!(
                "the host's fixed-work reference was {:+.1}% slower over the newest {}",
                h.change, h.level.k
            ));
        }
    }
    let host_items = [Item::Steal.name().0, Item::Reference.name().0];
    account?
        .changed
        .iter()
        .find(|c| host_items.contains(&c.item.as_str()) && c.b > c.a)
        .map(|c| {
            format!(
                "the host's account: {} from {:.2} to {:.2} {}",
                c.item, c.a, c.b, c.unit
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_distr::{Distribution, Normal};

    fn noisy(n: usize, sd_pct: f64, seed: u64) -> Vec<f64> {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let d = Normal::new(100.0, sd_pct).unwrap();
        (0..n).map(|_| d.sample(&mut rng)).collect()
    }

    fn series(values: &[f64], better: Better, net: Option<&[f64]>) -> Series {
        Series {
            key: "noise/cpu 20 ms/run time".into(),
            name: "run time".into(),
            unit: "ms".into(),
            better,
            spread: false,
            points: values
                .iter()
                .enumerate()
                .map(|(i, v)| Point {
                    ids: vec![i as i64 + 1],
                    started_at: DateTime::UNIX_EPOCH + chrono::Duration::days(i as i64),
                    value: *v,
                    values: vec![*v],
                    host_ms: None,
                    net: net.map(|n| n[i]),
                })
                .collect(),
            net: net.map(|_| super::super::NetOfHost { slope: 1.0, r: 0.9 }),
        }
    }

    fn gate(window: usize, host_shifts: bool) -> Gate {
        Gate {
            window,
            max_p: 0.002,
            host_shifts,
        }
    }

    fn judged(s: &Series, g: &Gate) -> Vec<Worse> {
        let settings = Settings::default();
        let cx = Context {
            runs: &[],
            settings: &settings,
            min_change: Some(3.0),
            gate: g,
            continuing: false,
        };
        tonight(std::slice::from_ref(s), None, &cx)
    }

    #[test]
    fn a_step_fails_on_its_first_night_and_not_again() {
        let mut v = noisy(38, 1.0, 3);
        v.extend([111.0, 110.5, 111.5]);
        let g = gate(5, false);
        let first = judged(&series(&v[..39], Better::Lower, None), &g);
        assert_eq!(first.len(), 1, "{first:?}");
        let w = &first[0];
        assert!(w.fails && w.found_on.is_none(), "{w:?}");
        assert_eq!((w.result_id, w.points_after, w.points_before), (39, 1, 38));
        assert!(w.change > 8.0 && w.interval.0 < w.change && w.change < w.interval.1);
        // The next two nights see the same level: found on night 39 already.
        for n in [40, 41] {
            let later = judged(&series(&v[..n], Better::Lower, None), &g);
            assert_eq!(later.len(), 1, "{later:?}");
            assert_eq!(later[0].found_on, Some(39), "{later:?}");
            assert!(!later[0].fails);
        }
    }

    #[test]
    fn noise_alone_seldom_fails_and_an_old_change_never() {
        let g = gate(5, false);
        let failed = (0..200)
            .filter(|&seed| {
                judged(
                    &series(&noisy(40, 1.0, 100 + seed), Better::Lower, None),
                    &g,
                )
                .iter()
                .any(|w| w.fails)
            })
            .count();
        // A bar of 0.002 on each of 200 series, and a change of 3% at sd 1%.
        assert!(failed <= 4, "{failed} of 200");
        // A step eight nights old is older than the window: never red.
        let mut v = noisy(32, 1.0, 5);
        v.extend([112.0; 8]);
        assert!(judged(&series(&v, Better::Lower, None), &g).is_empty());
    }

    #[test]
    fn the_worse_way_is_the_figures_own() {
        let mut v = noisy(30, 1.0, 9);
        v.push(88.0);
        let g = gate(3, false);
        assert!(judged(&series(&v, Better::Lower, None), &g).is_empty());
        let w = judged(&series(&v, Better::Higher, None), &g);
        assert!(w.len() == 1 && w[0].change < -8.0, "{w:?}");
    }

    #[test]
    fn a_worsening_net_of_the_hosts_speed_is_the_hosts() {
        let mut v = noisy(30, 1.0, 11);
        let flat = v.clone();
        v.push(112.0);
        let mut net = flat;
        net.push(100.5);
        let s = series(&v, Better::Lower, Some(&net));
        let w = judged(&s, &gate(5, false));
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].host.is_some() && !w[0].fails, "{w:?}");
        assert!(judged(&s, &gate(5, true))[0].fails);
    }

    #[test]
    fn a_figure_whose_level_did_as_much_before_does_not_fail_on_one_night() {
        // Steady but for two spikes as far out as the newest: its own noise, not a change.
        let mut v = noisy(36, 1.0, 13);
        v[12] = 111.0;
        v[25] = 112.0;
        v.push(111.0);
        let g = gate(5, false);
        assert!(judged(&series(&v, Better::Lower, None), &g).is_empty());
        // Without them it fails. (Spikes a third as far would make the level heavy-tailed by
        // Grubbs' test at 5%: judged by the shuffles alone, one night could not fail either.)
        v[12] = 100.0;
        v[25] = 100.0;
        let w = judged(&series(&v, Better::Lower, None), &g);
        assert!(w.len() == 1 && w[0].fails, "{w:?}");
    }

    #[test]
    fn a_spread_of_runs_waits_for_a_second_night() {
        // One night far out: a run time fails, a maximum of runs does not (its tail is long
        // by construction); two nights at the new level fail both.
        let mut v = noisy(36, 1.0, 17);
        v.push(115.0);
        let g = gate(5, false);
        let mut s = series(&v, Better::Lower, None);
        assert!(judged(&s, &g).iter().any(|w| w.fails));
        s.spread = true;
        assert!(
            !judged(&s, &g).iter().any(|w| w.fails),
            "{:?}",
            judged(&s, &g)
        );
        // The second night at the new level fails it, once.
        v.push(114.0);
        let mut s = series(&v, Better::Lower, None);
        s.spread = true;
        let w = judged(&s, &g);
        assert!(
            w.len() == 1 && w[0].fails && w[0].points_after == 2,
            "{w:?}"
        );
    }
}
