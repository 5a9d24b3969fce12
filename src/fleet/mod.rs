//! `hostbench report --fleet`: the headline figures of many hosts side by side, and which
//! hosts lie outside the group's range — "which machine in the rack is sick".

pub mod retired;
pub mod status;

use std::collections::{BTreeMap, HashMap};

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::model::figures::Better;
pub use crate::model::headline::Column;
use crate::model::headline::{Figure, HeadlineFigures};
use crate::model::label;
use crate::model::RunResult;
use crate::stats::{median, median_absolute_deviation};
use crate::store::{StoredEntry, StoredFigures};
use crate::text::Text;

/// Hosts a figure's range needs.
pub const MIN_HOSTS: usize = 3;
/// Robust standard deviations from the median a host may lie.
pub const SPREAD_FACTOR: f64 = 3.0;
/// Multiples of the hosts' own noise a host may lie from the median.
pub const NOISE_FACTOR: f64 = 2.0;
/// The smallest tolerance, percent: hosts of one type differ by that much without being sick.
pub const MIN_TOLERANCE_PCT: f64 = 1.0;
/// The MAD of a normal population times this is its standard deviation.
const MAD_TO_SD: f64 = 1.4826;

/// Which side of the range a figure lies on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outside {
    /// On the worse side: the host may be sick.
    Worse,
    /// On the better side: the host differs (another part, a setting), in its favour.
    Better,
}

/// One host's figure.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Cell {
    pub value: f64,
    /// What it measured: hosts are ranged only against those that measured the same.
    pub kind: Text,
    pub note: Text,
    /// The result it is from: `result ID` for a stored one, else its file.
    pub source: String,
    pub started_at: DateTime<Utc>,
    /// Outside the figure's range (None: within it, or no range for its kind).
    pub outside: Option<Outside>,
    /// Its distance from the median, percent of the median (None without a range).
    pub from_median_pct: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HostRow {
    /// Its `--host-label`, else its hostname.
    pub host: Text,
    pub hostname: Text,
    /// The tags of its latest result.
    pub tags: BTreeMap<Text, Text>,
    /// Its results the selection took.
    pub results: usize,
    /// A cell a column, in [`Column::all`] order.
    pub cells: Vec<Option<Cell>>,
    /// Its own noise: the median noise floor of the results its cells come from, percent.
    pub noise_floor_pct: Option<f64>,
}

impl HostRow {
    /// Its cells as headline figures, as a result's are (the OpenMetrics export of a fleet).
    pub fn figures(&self) -> HeadlineFigures {
        HeadlineFigures {
            noise_floor_pct: self.noise_floor_pct,
            values: self
                .cells
                .iter()
                .map(|c| {
                    c.as_ref().map(|c| Figure {
                        value: c.value,
                        kind: c.kind.clone(),
                        note: c.note.clone(),
                    })
                })
                .collect(),
        }
    }
}

/// A figure's range among the hosts that measured `kind`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Range {
    pub column: &'static Column,
    pub kind: Text,
    pub hosts: usize,
    pub median: f64,
    /// 1.4826 × the median absolute deviation, percent of the median.
    pub spread_pct: f64,
    /// The median of the hosts' own noise floors, percent (None: none measured its noise, or
    /// the figure is the noise spread itself).
    pub noise_pct: Option<f64>,
    /// The half-width of the range, percent of the median.
    pub tolerance_pct: f64,
    pub low: f64,
    pub high: f64,
}

/// A tag's value and the median of each figure over the hosts with a result of that tag (each
/// host's latest such result).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TagGroup {
    pub key: Text,
    pub value: Text,
    pub hosts: usize,
    /// A median a column, in [`Column::all`] order.
    pub medians: Vec<Option<f64>>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Fleet {
    pub columns: Vec<&'static Column>,
    pub rows: Vec<HostRow>,
    /// A range a column that has one, for the kind most hosts measured.
    pub ranges: Vec<Range>,
    pub tags: Vec<TagGroup>,
    /// What was left out, and why.
    pub notes: Vec<String>,
    /// The rule of the ranges, said once.
    pub rule: String,
}

impl Fleet {
    /// The hosts with a figure outside its range on the worse side.
    pub fn sick(&self) -> Vec<&Text> {
        self.sick_rows().into_iter().map(|(_, h)| h).collect()
    }

    /// [`sick`](Self::sick), each with its row's index in `rows`: the sickest first — the
    /// most figures outside on the worse side, then the farthest from its median (percent),
    /// then by name.
    pub fn sick_rows(&self) -> Vec<(usize, &Text)> {
        let mut sick: Vec<(usize, &HostRow, usize, f64)> = self
            .rows
            .iter()
            .enumerate()
            .filter_map(|(i, r)| {
                let worse: Vec<&Cell> = r
                    .cells
                    .iter()
                    .flatten()
                    .filter(|c| c.outside == Some(Outside::Worse))
                    .collect();
                let farthest = worse
                    .iter()
                    .filter_map(|c| c.from_median_pct)
                    .map(f64::abs)
                    .fold(0.0, f64::max);
                (!worse.is_empty()).then_some((i, r, worse.len(), farthest))
            })
            .collect();
        sick.sort_by(|a, b| {
            b.2.cmp(&a.2)
                .then(b.3.total_cmp(&a.3))
                .then(a.1.host.cmp(&b.1.host))
        });
        sick.into_iter().map(|(i, r, _, _)| (i, &r.host)).collect()
    }
}

/// What the fleet reads of one result: its host, time, tags, noise floor and headline figures,
/// taken from it once — or, for a stored result that no figure of the fleet can come from, from
/// the store's columns alone (`fleet_of_stored`), so that a fleet of 100,000 stored results
/// reads whole only the few it shows.
#[derive(Debug, Clone)]
pub struct Summary {
    /// `result ID` or a file: where a figure came from.
    source: String,
    /// Its label, else its hostname, as it may be shown (an older store may hold any text
    /// there: `label::printable`).
    host: Text,
    hostname: Text,
    started_at: DateTime<Utc>,
    incomplete: bool,
    /// As they may be shown.
    tags: BTreeMap<Text, Text>,
    noise_floor_pct: Option<f64>,
    /// A figure a column, in [`Column::all`] order.
    values: Vec<Option<Figure>>,
}

impl Summary {
    pub fn of(source: &str, r: &RunResult) -> Summary {
        let figures = HeadlineFigures::of(r);
        let name = r.host_name();
        Summary {
            source: source.to_string(),
            host: name.truncated(label::MAX_HOST_LABEL),
            hostname: r.environment.host.hostname.truncated(label::MAX_HOST_LABEL),
            started_at: r.started_at,
            incomplete: r.incomplete,
            tags: r
                .tags
                .iter()
                .map(|(k, v)| {
                    (
                        k.truncated(label::MAX_TAG_KEY),
                        v.truncated(label::MAX_TAG_VALUE),
                    )
                })
                .collect(),
            noise_floor_pct: figures.noise_floor_pct,
            values: figures.values,
        }
    }

    /// A stored result from its list row, tags and stored headline figures: what `of` would
    /// make of it, without reading it whole.
    fn stored(
        e: &StoredEntry,
        started_at: DateTime<Utc>,
        tags: &BTreeMap<String, String>,
        hostname: &str,
        figures: &HeadlineFigures,
    ) -> Summary {
        Summary {
            source: format!("result {}", e.id),
            host: e.host.truncated(label::MAX_HOST_LABEL),
            hostname: Text::from(hostname).truncated(label::MAX_HOST_LABEL),
            started_at,
            incomplete: e.incomplete,
            tags: shown_tags(tags),
            noise_floor_pct: figures.noise_floor_pct,
            values: figures.values.clone(),
        }
    }
}

/// Tags from a store, held as text that is shown escaped, cut to the labels' limits.
fn shown_tags(tags: &BTreeMap<String, String>) -> BTreeMap<Text, Text> {
    tags.iter()
        .map(|(k, v)| {
            (
                Text::from(k).truncated(label::MAX_TAG_KEY),
                Text::from(v).truncated(label::MAX_TAG_VALUE),
            )
        })
        .collect()
}

/// The latest of `results` that has the figure of column `i`.
fn latest<'a>(
    results: impl Iterator<Item = &'a Summary>,
    i: usize,
) -> Option<(&'a Summary, &'a Figure)> {
    results
        .filter_map(|e| e.values[i].as_ref().map(|v| (e, v)))
        .max_by_key(|(e, _)| e.started_at)
}

/// What a store holds of the results stored under one host name: their list rows, their
/// tags and their stored headline figures (the maps may hold other results too).
#[derive(Debug, Default)]
pub struct StoredHost {
    pub entries: Vec<StoredEntry>,
    pub tags: HashMap<i64, BTreeMap<String, String>>,
    pub figures: HashMap<i64, StoredFigures>,
}

/// The fleet of stored results, read one host at a time: `hosts` are the names the store
/// holds results under, `read` gives one name's results, and `load` reads a result whole —
/// only one stored before its figures were (layout 7). The same as [`fleet`] of all the
/// results, but what is held at once is one host's results and a row per host, however many
/// results the store has. Rows whose start time is malformed are left out, with a note.
/// Returns the fleet and how many stored results it was drawn from.
pub fn fleet_of_stored(
    hosts: &[Text],
    mut read: impl FnMut(&Text) -> anyhow::Result<StoredHost>,
    mut load: impl FnMut(i64) -> anyhow::Result<RunResult>,
) -> anyhow::Result<(Fleet, usize)> {
    // Lookalike spellings of one name (label::identity) are one host: read together.
    let mut names: BTreeMap<String, Vec<&Text>> = BTreeMap::new();
    for h in hosts {
        names.entry(label::identity(h.raw())).or_default().push(h);
    }
    let none = BTreeMap::new();
    let mut gathering = Gathering::default();
    let (mut listed, mut malformed) = (0, 0);
    let (mut unread, mut impossible) = (Vec::new(), Vec::new());
    for spellings in names.values() {
        let mut summaries = Vec::new();
        for &name in spellings {
            let StoredHost {
                entries,
                tags,
                figures,
            } = read(name)?;
            listed += entries.len();
            for e in &entries {
                let Some(t) = e.started_at else {
                    malformed += 1;
                    continue;
                };
                let stored = figures.get(&e.id);
                match stored.and_then(|s| s.figures.as_ref().map(|f| (s, f))) {
                    Some((s, f)) => summaries.push(Summary::stored(
                        e,
                        t,
                        tags.get(&e.id).unwrap_or(&none),
                        &s.hostname,
                        f,
                    )),
                    // A row that cannot be read (another host's, malformed) is left out, named
                    // in a note: it never breaks the page of the others.
                    None => match load(e.id) {
                        Ok(r) => summaries.push(Summary::of(&format!("result {}", e.id), &r)),
                        Err(why) => unread.push(format!(
                            "result {} left out: {}",
                            e.id,
                            crate::model::label::printable(&format!("{why:#}"), 200)
                        )),
                    },
                }
            }
        }
        impossible.extend(drop_impossible(&mut summaries));
        gathering.host(&summaries.iter().collect::<Vec<_>>());
    }
    let mut f = gathering.fleet();
    f.notes.extend(unread);
    f.notes.extend(impossible);
    if malformed > 0 {
        f.notes.push(format!(
            "{malformed} stored row{} with a malformed start time left out",
            if malformed == 1 { "" } else { "s" }
        ));
    }
    Ok((f, listed))
}

/// The fleet of `results` (a label, `result ID` or a file, and the result): incomplete
/// results are left out.
///
/// A host is its `--host-label`, else its hostname. Each of its headline figures comes from its
/// latest complete result that has it (a host may have run the index today and the standard
/// run last week). A figure's range is only drawn among the hosts whose figures measure the
/// same thing (the same index tests and copies, the same sched point, the same noise job); with
/// fewer than [`MIN_HOSTS`] such hosts there is no range. The range is the median ± a tolerance:
/// the largest of [`SPREAD_FACTOR`] times the hosts' robust spread (1.4826 × the median
/// absolute deviation, the standard deviation of a normal population), [`NOISE_FACTOR`] times
/// the median of the hosts' own noise floors (a result's run-to-run noise: two single runs of
/// one host differ by that much; not for the noise figure, itself a spread), and
/// [`MIN_TOLERANCE_PCT`].
pub fn fleet(results: &[(String, RunResult)]) -> Fleet {
    let mut summaries: Vec<Summary> = results.iter().map(|(s, r)| Summary::of(s, r)).collect();
    let notes = drop_impossible(&mut summaries);
    // Hosts by what their labels name: lookalike spellings are one host (label::identity).
    let mut by_host: BTreeMap<String, Vec<&Summary>> = BTreeMap::new();
    for e in &summaries {
        by_host
            .entry(label::identity(e.host.raw()))
            .or_default()
            .push(e);
    }
    let mut gathering = Gathering::default();
    for runs in by_host.values() {
        gathering.host(runs);
    }
    let mut f = gathering.fleet();
    f.notes.extend(notes);
    f
}

/// The largest headline figure a run can produce: index scores, percentages and µs per
/// round all lie far below it. A figure above it, negative or not finite (a row another host
/// wrote with 1e308) is no measurement and would stretch the fleet's ranges.
pub const MAX_FIGURE: f64 = 1e9;

/// Whether a headline figure is one a run can produce ([`MAX_FIGURE`]): the one rule of the
/// fleet page, its CSV and the OpenMetrics export, and layout 12's check on a fleet store
/// (`results_figures_possible`).
pub fn possible(value: f64) -> bool {
    value.is_finite() && (0.0..MAX_FIGURE).contains(&value)
}

/// Drops from `summaries` every headline figure no run can produce, and says which.
fn drop_impossible(summaries: &mut [Summary]) -> Vec<String> {
    let mut notes = Vec::new();
    for s in summaries.iter_mut() {
        for (i, v) in s.values.iter_mut().enumerate() {
            let bad = v.as_ref().is_some_and(|f| !possible(f.value));
            if bad {
                let value = v.take().map_or(0.0, |f| f.value);
                notes.push(format!(
                    "{}: {} = {value:e} is no measurement: left out",
                    s.source,
                    Column::all()[i].name
                ));
            }
        }
    }
    notes
}

/// The fleet as it is gathered, one host at a time (hosts in the order of their
/// `label::identity`): a row and a noise floor a host, and each tag's figures a host.
#[derive(Default)]
struct Gathering {
    rows: Vec<HostRow>,
    /// Each host's own noise: the median floor of the results its cells come from.
    floors: Vec<f64>,
    /// A tag's value: for each host with a complete result of it, the latest figure a column
    /// among those results.
    tags: BTreeMap<(Text, Text), Vec<Vec<Option<f64>>>>,
    incomplete: usize,
}

impl Gathering {
    /// One host's results (of every spelling of its name).
    fn host(&mut self, results: &[&Summary]) {
        self.incomplete += results.iter().filter(|r| r.incomplete).count();
        let runs: Vec<&Summary> = results.iter().copied().filter(|r| !r.incomplete).collect();
        let Some(newest) = runs.iter().max_by_key(|e| e.started_at) else {
            return;
        };
        let columns = Column::all().len();
        let picked: Vec<_> = (0..columns)
            .map(|i| latest(runs.iter().copied(), i))
            .collect();
        let own: Vec<f64> = picked
            .iter()
            .flatten()
            .filter_map(|(r, _)| r.noise_floor_pct)
            .collect();
        let floor = median(&own);
        self.floors.extend(floor);
        self.rows.push(HostRow {
            host: newest.host.clone(),
            hostname: newest.hostname.clone(),
            tags: newest.tags.clone(),
            results: runs.len(),
            cells: picked
                .into_iter()
                .map(|p| {
                    p.map(|(r, v)| Cell {
                        value: v.value,
                        kind: v.kind.clone(),
                        note: v.note.clone(),
                        source: r.source.clone(),
                        started_at: r.started_at,
                        outside: None,
                        from_median_pct: None,
                    })
                })
                .collect(),
            noise_floor_pct: floor,
        });
        let mut of_tag: BTreeMap<(&Text, &Text), Vec<&Summary>> = BTreeMap::new();
        for e in &runs {
            for (k, v) in &e.tags {
                of_tag.entry((k, v)).or_default().push(e);
            }
        }
        for ((k, v), tagged) in of_tag {
            let figures = (0..columns)
                .map(|i| latest(tagged.iter().copied(), i).map(|(_, f)| f.value))
                .collect();
            self.tags
                .entry((k.clone(), v.clone()))
                .or_default()
                .push(figures);
        }
    }

    /// The fleet of the hosts gathered: each figure's range, the cells outside it, and each
    /// tag's medians.
    fn fleet(self) -> Fleet {
        let Gathering {
            mut rows,
            floors,
            tags,
            incomplete,
        } = self;
        let noise_pct = median(&floors);
        let mut ranges = Vec::new();
        for (i, &column) in Column::all().iter().enumerate() {
            // The noise figure is itself a spread: how far one host's may lie from the others'
            // is what their spread of it says, not the run-to-run noise of a figure.
            let noise_pct = noise_pct.filter(|_| !column.is_spread);
            if let Some(range) = range_of(&mut rows, i, column, noise_pct) {
                ranges.push(range);
            }
        }
        let mut notes = Vec::new();
        if incomplete > 0 {
            notes.push(format!(
                "{incomplete} incomplete result{} left out",
                if incomplete == 1 { "" } else { "s" }
            ));
        }
        Fleet {
            columns: Column::all().to_vec(),
            rows,
            ranges,
            tags: tag_groups(tags),
            notes,
            rule: format!(
                "a figure's range is the median of the hosts that measured the same ± the largest of \
                 {SPREAD_FACTOR} × their robust spread (1.4826 × the median absolute deviation), \
                 {NOISE_FACTOR} × the median of the hosts' own noise floors (not for the noise figure, \
                 itself a spread), and {MIN_TOLERANCE_PCT}%; drawn with {MIN_HOSTS} hosts or more"
            ),
        }
    }
}

/// The rule of the range, on the figures of the hosts that measured alike (one a host) and
/// their noise floor: the median, the robust spread and the tolerance, both in percent of the
/// median. None without a positive median.
pub fn tolerance(values: &[f64], noise_pct: Option<f64>) -> Option<(f64, f64, f64)> {
    let m = median(values).filter(|m| *m > 0.0)?;
    let spread_pct = 100.0 * MAD_TO_SD * median_absolute_deviation(values)? / m;
    let tolerance_pct = (SPREAD_FACTOR * spread_pct)
        .max(noise_pct.map_or(0.0, |n| NOISE_FACTOR * n))
        .max(MIN_TOLERANCE_PCT);
    Some((m, spread_pct, tolerance_pct))
}

/// The range of column `i` among the hosts that measured its commonest kind, marking the
/// cells outside it.
fn range_of(
    rows: &mut [HostRow],
    i: usize,
    column: &'static Column,
    noise_pct: Option<f64>,
) -> Option<Range> {
    let mut kinds: BTreeMap<&str, usize> = BTreeMap::new();
    for c in rows.iter().filter_map(|r| r.cells[i].as_ref()) {
        *kinds.entry(c.kind.raw()).or_default() += 1;
    }
    let (kind, hosts) = kinds
        .into_iter()
        .max_by_key(|&(k, n)| (n, std::cmp::Reverse(k)))?;
    let kind = kind.to_string();
    if hosts < MIN_HOSTS {
        return None;
    }
    let values: Vec<f64> = rows
        .iter()
        .filter_map(|r| r.cells[i].as_ref())
        .filter(|c| c.kind == kind)
        .map(|c| c.value)
        .collect();
    let (m, spread_pct, tolerance_pct) = tolerance(&values, noise_pct)?;
    // Never past what the figure can be (no 111% of deadlines met, no negative spread).
    let (floor, ceiling) = column.bounds;
    let (low, high) = (
        (m * (1.0 - tolerance_pct / 100.0)).max(floor),
        (m * (1.0 + tolerance_pct / 100.0)).min(ceiling),
    );
    for cell in rows.iter_mut().filter_map(|r| r.cells[i].as_mut()) {
        if cell.kind != kind {
            continue;
        }
        cell.from_median_pct = Some(100.0 * (cell.value - m) / m);
        let above = cell.value > high;
        if above || cell.value < low {
            let better = above == (column.better == Better::Higher);
            cell.outside = Some(if better {
                Outside::Better
            } else {
                Outside::Worse
            });
        }
    }
    Some(Range {
        column,
        kind: kind.into(),
        hosts,
        median: m,
        spread_pct,
        noise_pct,
        tolerance_pct,
        low,
        high,
    })
}

/// Each tag's value and the median of each figure over the hosts with a result of that tag
/// (`Gathering::tags`).
fn tag_groups(tags: BTreeMap<(Text, Text), Vec<Vec<Option<f64>>>>) -> Vec<TagGroup> {
    tags.into_iter()
        .map(|((key, value), hosts)| TagGroup {
            key,
            value,
            hosts: hosts.len(),
            medians: (0..Column::all().len())
                .map(|i| {
                    let values: Vec<f64> = hosts.iter().filter_map(|h| h[i]).collect();
                    median(&values)
                })
                .collect(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::SuiteResult;

    /// The smoke fixture as host `host` with its 1-copy index scaled by `scale`.
    fn host(id: i64, host: &str, scale: f64, kernel: &str) -> (String, RunResult) {
        let mut r: RunResult =
            serde_json::from_str(include_str!("../../tests/fixtures/smoke-a.json")).unwrap();
        r.host_label = Some(host.into());
        r.tags.insert("kernel".into(), kernel.into());
        for s in &mut r.suites {
            if let SuiteResult::Index(i) = s {
                for p in &mut i.passes {
                    if p.copies == 1 {
                        p.system_index = p.system_index.map(|x| x * scale);
                    }
                }
            }
        }
        (format!("result {id}"), r)
    }

    #[test]
    fn a_figure_no_run_can_produce_is_left_out_of_the_ranges_and_said() {
        let mut results: Vec<_> = (0..6)
            .map(|i| host(i, &format!("n{i}"), 1.0, "6.1"))
            .collect();
        let f = fleet(&results);
        let range = |f: &Fleet| f.ranges.iter().map(|r| r.high).fold(0.0, f64::max);
        let honest = range(&f);
        // One host's stored figures say 1e308 for its index score.
        for s in &mut results[5].1.suites {
            if let SuiteResult::Index(i) = s {
                for p in &mut i.passes {
                    p.system_index = p.system_index.map(|_| 1e308);
                }
            }
        }
        let f = fleet(&results);
        assert!(range(&f) < 1e9, "{}", range(&f));
        assert!(
            (range(&f) - honest).abs() <= honest * 0.05,
            "{} vs {honest}",
            range(&f)
        );
        assert!(
            f.notes
                .iter()
                .any(|n| n.contains("result 5") && n.contains("no measurement")),
            "{:?}",
            f.notes
        );
    }

    #[test]
    fn the_sickest_host_is_named_first_not_the_first_by_name() {
        let mut results: Vec<_> = (0..8)
            .map(|i| host(i, &format!("n{i}"), 1.0 + 0.001 * i as f64, "A"))
            .collect();
        // z-far is 50% down, a-near 20% down: by name a-near would lead.
        results.push(host(8, "z-far", 0.5, "A"));
        results.push(host(9, "a-near", 0.8, "A"));
        let f = fleet(&results);
        assert_eq!(f.sick(), ["z-far", "a-near"]);
    }

    #[test]
    fn a_host_far_below_the_others_is_marked_worse_and_the_others_not() {
        let results = vec![
            host(1, "n1", 1.0, "A"),
            host(2, "n2", 1.01, "A"),
            host(3, "n3", 0.99, "B"),
            host(4, "n4", 0.6, "B"),
        ];
        let f = fleet(&results);
        assert_eq!(f.rows.len(), 4);
        assert_eq!(f.sick(), ["n4"]);
        let i = Column::all()
            .iter()
            .position(|c| c.key == "index_one")
            .unwrap();
        let range = f
            .ranges
            .iter()
            .find(|r| r.column.key == "index_one")
            .unwrap();
        assert_eq!(range.hosts, 4);
        let n4 = f.rows[3].cells[i].as_ref().unwrap();
        assert_eq!(n4.outside, Some(Outside::Worse));
        assert!(n4.from_median_pct.unwrap() < -30.0);
        // The same host far above is marked, on the better side.
        let mut results = results;
        results[3] = host(4, "n4", 1.6, "B");
        let f = fleet(&results);
        assert!(f.sick().is_empty());
        assert_eq!(
            f.rows[3].cells[i].as_ref().unwrap().outside,
            Some(Outside::Better)
        );
        // Each tag value's median over its hosts.
        let a = f.tags.iter().find(|t| t.value == "A").unwrap();
        assert_eq!(a.hosts, 2);
        let one = |id: usize| {
            results[id].1.suites.iter().find_map(|s| match s {
                SuiteResult::Index(ix) => ix.passes.iter().find(|p| p.copies == 1)?.system_index,
                _ => None,
            })
        };
        let expected = (one(0).unwrap() + one(1).unwrap()) / 2.0;
        assert!((a.medians[i].unwrap() - expected).abs() < 1e-9);
    }

    #[test]
    fn two_hosts_have_no_range_and_the_latest_result_of_a_host_is_its_row() {
        let mut older = host(1, "n1", 0.5, "A");
        older.1.started_at -= chrono::Duration::days(1);
        let results = vec![older, host(2, "n1", 1.0, "A"), host(3, "n2", 0.5, "A")];
        let f = fleet(&results);
        assert_eq!(f.rows.len(), 2);
        assert_eq!(f.rows[0].results, 2);
        let i = Column::all()
            .iter()
            .position(|c| c.key == "index_one")
            .unwrap();
        assert_eq!(f.rows[0].cells[i].as_ref().unwrap().source, "result 2");
        assert!(f.ranges.is_empty());
        assert!(f.sick().is_empty());
    }

    #[test]
    fn a_host_much_noisier_than_the_others_is_marked() {
        let mut results: Vec<(String, RunResult)> = (1..=4)
            .map(|i| host(i, &format!("n{i}"), 1.0, "A"))
            .collect();
        let spreads = [2.0, 2.1, 1.9, 9.0];
        for ((_, r), spread) in results.iter_mut().zip(spreads) {
            for s in &mut r.suites {
                if let SuiteResult::Noise(n) = s {
                    n.summary.as_mut().unwrap().verdict.spread_pct = spread;
                }
            }
        }
        let f = fleet(&results);
        let range = f.ranges.iter().find(|r| r.column.key == "noise").unwrap();
        assert_eq!(range.noise_pct, None);
        assert_eq!(f.sick(), ["n4"]);
    }

    #[test]
    fn the_tolerance_is_never_below_the_hosts_own_noise() {
        // Three identical hosts and one 1.5% off: within the smallest tolerance or the noise.
        let results = vec![
            host(1, "n1", 1.0, "A"),
            host(2, "n2", 1.0, "A"),
            host(3, "n3", 1.0, "A"),
            host(4, "n4", 0.985, "A"),
        ];
        let f = fleet(&results);
        let range = f
            .ranges
            .iter()
            .find(|r| r.column.key == "index_one")
            .unwrap();
        assert_eq!(range.spread_pct, 0.0);
        let noise = results[0].1.noise_floor_pct().unwrap();
        assert_eq!(range.noise_pct, Some(noise));
        assert_eq!(
            range.tolerance_pct,
            (NOISE_FACTOR * noise).max(MIN_TOLERANCE_PCT)
        );
        let expected: &[&str] = if range.tolerance_pct < 1.5 {
            &["n4"]
        } else {
            &[]
        };
        assert_eq!(f.sick(), expected);
    }

    #[test]
    fn a_range_never_leaves_what_its_figure_can_be() {
        let results = vec![
            host(1, "n1", 1.0, "A"),
            host(2, "n2", 1.01, "A"),
            host(3, "n3", 0.99, "B"),
        ];
        let f = fleet(&results);
        let worst = f
            .ranges
            .iter()
            .find(|r| r.column.key == "interactive_worst")
            .unwrap();
        // The fixture's worst pair meets all its deadlines: the median is 100%.
        assert_eq!(worst.median, 100.0);
        assert_eq!(worst.high, 100.0);
        assert!(worst.low < 100.0);
        assert!(f.ranges.iter().all(|r| r.low >= 0.0), "{:?}", f.ranges);
    }

    /// A stored fleet drawn from the stored figures is the fleet of all its results read whole.
    #[test]
    fn a_fleet_drawn_from_stored_figures_is_the_fleet_of_the_results_read_whole() {
        let mut results = Vec::new();
        let mut id = 0;
        for (h, host_name) in ["n1", "n2", "n3", "n4"].iter().enumerate() {
            for k in 0..6 {
                id += 1;
                let kernel = if k % 2 == 0 { "A" } else { "B" };
                let (label, mut r) = host(id, host_name, 1.0 + 0.01 * (h + k) as f64, kernel);
                r.started_at += chrono::Duration::minutes(id);
                // Some are noise runs alone, one is cut short, one has a second tag.
                if k == 4 {
                    r.suites.retain(|s| matches!(s, SuiteResult::Noise(_)));
                }
                if k == 5 && h == 1 {
                    r.incomplete = true;
                }
                if k == 0 {
                    r.tags.insert("rack".into(), format!("r{h}").into());
                }
                results.push((label, r));
            }
        }
        let entries: Vec<StoredEntry> = results
            .iter()
            .zip(1..)
            .map(|((_, r), id)| StoredEntry {
                id,
                started_at: Some(r.started_at),
                suites: r.suite_names().into(),
                host: r.host_label.clone().unwrap(),
                headline: Text::default(),
                incomplete: r.incomplete,
                owner: None,
                problem: None,
            })
            .collect();
        let tags: HashMap<i64, BTreeMap<String, String>> = entries
            .iter()
            .zip(&results)
            .map(|(e, (_, r))| {
                let tags = r.tags.iter();
                (
                    e.id,
                    tags.map(|(k, v)| (k.raw().into(), v.raw().into()))
                        .collect(),
                )
            })
            .collect();
        // The figures as a store keeps them (through their JSON), but for the first three
        // results: stored before figures were.
        let figures: HashMap<i64, StoredFigures> = entries
            .iter()
            .zip(&results)
            .map(|(e, (_, r))| {
                let json = serde_json::to_string(&HeadlineFigures::of(r)).unwrap();
                let stored = StoredFigures {
                    hostname: r.environment.host.hostname.raw().to_string(),
                    figures: (e.id > 3).then(|| HeadlineFigures::parse(&json).unwrap()),
                };
                (e.id, stored)
            })
            .collect();
        let mut read = Vec::new();
        let mut hosts: Vec<Text> = entries.iter().map(|e| e.host.clone()).collect();
        hosts.dedup();
        let mut asked = Vec::new();
        let (lazy, listed) = fleet_of_stored(
            &hosts,
            |h| {
                asked.push(h.clone());
                Ok(StoredHost {
                    entries: entries.iter().filter(|e| e.host == *h).cloned().collect(),
                    tags: tags.clone(),
                    figures: figures.clone(),
                })
            },
            |id| {
                read.push(id);
                Ok(results[id as usize - 1].1.clone())
            },
        )
        .unwrap();
        assert_eq!(listed, entries.len());
        assert_eq!(asked, hosts, "each host is read once");
        let whole = fleet(&results);
        assert_eq!(
            serde_json::to_value(&lazy).unwrap(),
            serde_json::to_value(&whole).unwrap()
        );
        assert!(!lazy.tags.is_empty() && lazy.ranges.len() >= 2);
        assert_eq!(
            read,
            [1, 2, 3],
            "only the results stored without their figures are read"
        );
    }
}

/// How often the range calls a healthy host sick, and finds a sick one, on seeded draws of
/// fleets: figures log-normal with a spread (CV) of 1%, 3% and 10% between hosts, the hosts'
/// noise floor unknown or equal to that spread, a fleet of 3 to 20 hosts; the sick host is 20%
/// worse. Run with `-- --nocapture` for the table in docs/fleet.md.
#[cfg(test)]
mod rates {
    use super::*;
    use rand::rngs::StdRng;
    use rand::SeedableRng;
    use rand_distr::{Distribution, LogNormal};

    #[test]
    fn false_flags_and_detections_on_seeded_fleets() {
        let mut rng = StdRng::seed_from_u64(16);
        let trials = 2000;
        for cv in [0.01, 0.03, 0.10] {
            let d = LogNormal::new(0.0, cv).unwrap();
            for noise in [None, Some(100.0 * cv)] {
                for n in [3usize, 5, 10, 20] {
                    let below = |v: &[f64]| {
                        let (m, _, t) = tolerance(v, noise).unwrap();
                        m * (1.0 - t / 100.0)
                    };
                    let (mut false_hosts, mut false_fleets, mut found) = (0, 0, 0);
                    for _ in 0..trials {
                        let mut v: Vec<f64> = (0..n).map(|_| d.sample(&mut rng)).collect();
                        let low = below(&v);
                        let flagged = v.iter().filter(|x| **x < low).count();
                        false_hosts += flagged;
                        false_fleets += usize::from(flagged > 0);
                        v[0] *= 0.8;
                        found += usize::from(v[0] < below(&v));
                    }
                    let per_host = 100.0 * false_hosts as f64 / (trials * n) as f64;
                    let found = 100.0 * found as f64 / trials as f64;
                    println!(
                        "spread {:>2}%, noise {:>9}, {n:>2} hosts: healthy hosts flagged {per_host:.2}%, \
                         fleets with a false flag {:.1}%, a 20% worse host found {found:.1}%",
                        100.0 * cv,
                        noise.map_or("unknown".into(), |x| format!("{x:.0}%")),
                        100.0 * false_fleets as f64 / trials as f64
                    );
                    assert!(per_host < 6.0, "{per_host}");
                    if noise.is_some() {
                        assert!(per_host < 1.5, "{per_host}");
                    }
                    if cv <= 0.03 && n >= 10 {
                        assert!(found > 95.0, "{found}");
                    }
                }
            }
        }
    }
}
