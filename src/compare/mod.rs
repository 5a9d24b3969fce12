//! `hostbench compare`: pairs the figures two results (or two sets of repeated runs) share and
//! says which differences are real.

use serde::{Deserialize, Serialize};

mod net;
mod side;
mod spread;

pub use net::HostChange;
pub use side::SideArg;
pub use spread::{host_of, host_spread, HostSpread};

use crate::error::UsageError;
use crate::text::Text;

use crate::model::account::{item_verdicts, Account, ItemVerdicts};
use crate::model::figures::{figures, Better, Figure, HOST_REFERENCE_KEY};
use crate::model::label::{self, printable};
use crate::model::RunResult;
use crate::stats::{
    batch_means, log_ratio_test, ratio_of_means_test, welch_test, RunBound, Summary,
};

/// The test behind verdicts on per-run figures, named in the output.
pub const RUNS_TEST: &str =
    "Welch's t-test on the logarithms of the per-run figures, 95% (interval: of the ratio B/A)";
/// The test behind verdicts on per-host figures.
pub const HOSTS_TEST: &str =
    "Welch's t-test on the logarithms of the per-host figures (each host's geometric mean over its runs), 95% (interval: of the ratio B/A)";
/// The test behind verdicts on samples within one run a side.
pub const WITHIN_RUN_TEST: &str =
    "Welch's t-test on the samples within each run (the means of 10 stretches of a run where it has 20 samples or more): on the ratio of their means where no sample is negative (delta method on its logarithm), else on the difference; 95% (interval: of that ratio, else of the change of the mean)";

/// What a row's samples were.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Basis {
    /// One figure per run: run-to-run variation is in the test.
    Runs,
    /// The samples within one run a side (iterations, batches): run-to-run variation is not.
    WithinRun,
    /// One figure per host (the geometric mean of its runs' figures), where a side spans
    /// several hosts: the verdict is of hosts, and one host's many runs weigh as one.
    Hosts,
    /// One run a side, and a figure without samples enough to test (a derived score, a
    /// percentile, a percentage; one iteration a side): the change is judged against the
    /// figure's own run-to-run spread from the host's earlier runs (`HostSpread`).
    History,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Better,
    Worse,
    /// Significant, but no larger than the host's own run-to-run noise (see `noise_floor`).
    WithinNoise,
    NoSignificantDifference,
    /// Too few samples on a side, or a derived figure: shown, not judged.
    NotTested,
}

impl Verdict {
    pub fn label(self) -> &'static str {
        match self {
            Verdict::Better => "better",
            Verdict::Worse => "worse",
            Verdict::WithinNoise => "within the host's noise",
            Verdict::NoSignificantDifference => "no significant difference",
            Verdict::NotTested => "not tested",
        }
    }
}

/// One figure of both results.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Row {
    pub key: String,
    pub suite: String,
    pub name: String,
    pub unit: String,
    pub better: Better,
    pub a: f64,
    pub b: f64,
    /// (B − A) / A, percent; on per-run figures, of their geometric means.
    pub change_pct: f64,
    /// 95% confidence interval of the change, percent: on per-run figures the ratio's interval
    /// (minus 1); within runs, of the change of the samples' mean over A's mean.
    pub ci_pct: Option<[f64; 2]>,
    pub p_value: Option<f64>,
    /// What the samples were, and how many each side had.
    pub basis: Basis,
    pub samples_a: usize,
    pub samples_b: usize,
    pub verdict: Verdict,
    /// Why a row is not tested.
    pub why_not_tested: Option<String>,
    /// The noise floor this figure was judged against, percent, where it is its own: one run a
    /// side, the 95% bound of the change between two runs of it on this host, from the host's
    /// earlier runs (`Comparison::spread_runs`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub floor_pct: Option<f64>,
    /// Whether that floor is on the ratio's scale (B/A within ×1/(1 + f) to ×(1 + f), for a
    /// figure whose history was all positive), not on the difference's (±f% of A).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub floor_on_ratio: bool,
    /// Where that floor is the host's history: the smallest change of this figure that one run
    /// a side finds nine times in ten on this host, percent on the floor's scale
    /// (`HostSpread::smallest_found`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub found_pct: Option<f64>,
    /// For a figure called better or worse whose stretches have the host's account (two or
    /// more a side): the items that changed with it and those that did not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub account: Option<ItemVerdicts>,
    /// One run a side, for a figure that follows the host's speed on this host (its history
    /// says so) and was measured beside the fixed-work reference in both runs: the reference's
    /// change, the figure's change net of it, and whether the verdict is on that.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<HostChange>,
}

/// Where a compared result came from, and its identity.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Side {
    /// "result 3" or a file name.
    pub source: String,
    pub hostname: Text,
    pub started_at: String,
    pub tool_version: Text,
    /// The runs on this side (a result each).
    pub runs: usize,
    /// The hosts they ran on (by --host-label, else hostname).
    #[serde(default)]
    pub hosts: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// The test behind the verdicts (per-run figures, or samples within one run a side).
    pub test: String,
    pub basis: Basis,
    pub a: Side,
    pub b: Side,
    /// The largest spread (percent) the results' noise parts or noise checks measured, or drift
    /// their checks found, when every result has one: significant changes no larger than this
    /// are "within the host's noise". Doubled when there is one run a side (the two runs' own
    /// offsets are unknown).
    pub noise_floor_pct: Option<f64>,
    /// One run a side: how many earlier runs of the host (the same figures) gave each figure
    /// its own noise floor (`Row::floor_pct`); None where there were not enough.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spread_runs: Option<usize>,
    /// Differences in where and how the two were measured.
    pub notes: Vec<String>,
    pub rows: Vec<Row>,
}

impl Comparison {
    pub fn count(&self, verdict: Verdict) -> usize {
        self.rows.iter().filter(|r| r.verdict == verdict).count()
    }

    /// Significant regressions larger than `pct` percent.
    pub fn regressions_over(&self, pct: f64) -> Vec<&Row> {
        self.rows
            .iter()
            .filter(|r| r.verdict == Verdict::Worse && r.change_pct.abs() > pct)
            .collect()
    }
}

/// A side: its first run's identity and how many runs it has.
fn side(source: &str, runs: &[RunResult]) -> Side {
    let r = &runs[0];
    Side {
        source: printable(source, 200),
        hostname: r.environment.host.hostname.truncated(label::MAX_HOST_LABEL),
        started_at: r.started_at.format("%Y-%m-%d %H:%M:%S UTC").to_string(),
        tool_version: r.tool_version.clone(),
        runs: runs.len(),
        hosts: by_host(runs).len(),
    }
}

/// The runs of a side by host (its --host-label, else its hostname), hosts in order of their
/// first run.
fn by_host(runs: &[RunResult]) -> Vec<Vec<usize>> {
    let mut hosts: Vec<(Text, Vec<usize>)> = Vec::new();
    for (i, r) in runs.iter().enumerate() {
        let name = r.host_name().clone();
        match hosts.iter_mut().find(|(h, _)| *h == name) {
            Some((_, idx)) => idx.push(i),
            None => hosts.push((name, vec![i])),
        }
    }
    hosts.into_iter().map(|(_, idx)| idx).collect()
}

/// One figure a host: the geometric mean of its runs' figures (the mean where one is not
/// positive).
fn per_host(values: &[Option<f64>], hosts: &[Vec<usize>]) -> Vec<f64> {
    hosts
        .iter()
        .filter_map(|idx| {
            let v: Vec<f64> = idx.iter().filter_map(|&i| values[i]).collect();
            if v.is_empty() {
                return None;
            }
            let n = v.len() as f64;
            Some(if v.iter().all(|x| *x > 0.0) {
                (v.iter().map(|x| x.ln()).sum::<f64>() / n).exp()
            } else {
                v.iter().sum::<f64>() / n
            })
        })
        .collect()
}

/// What differs between the two results' circumstances.
/// What the result's suites' figures depend on beyond their settings: the first suite's value
/// of each condition.
fn conditions(r: &RunResult) -> Vec<(&'static str, &Text)> {
    let mut seen: Vec<(&'static str, &Text)> = Vec::new();
    for (name, value) in r.suites.iter().flat_map(|s| s.data().conditions()) {
        if !seen.iter().any(|(n, _)| *n == name) {
            seen.push((name, value));
        }
    }
    seen
}

fn notes(a: &RunResult, b: &RunResult) -> Vec<String> {
    let (ea, eb) = (&a.environment, &b.environment);
    let mut notes = Vec::new();
    let mut differ = |what: &str, x: String, y: String| {
        if x != y {
            notes.push(format!("different {what}: {x} vs {y}"));
        }
    };
    let cut = |t: &Text| t.cut(label::MAX_HOST_LABEL).to_string();
    differ("hosts", cut(&ea.host.hostname), cut(&eb.host.hostname));
    differ(
        "kernels",
        ea.host.kernel_release.to_string(),
        eb.host.kernel_release.to_string(),
    );
    differ(
        "CPU models",
        ea.host.cpu_model.to_string(),
        eb.host.cpu_model.to_string(),
    );
    differ(
        "CPU counts",
        format!(
            "{} online, {} allowed",
            ea.host.cpus_online, ea.host.cpus_allowed
        ),
        format!(
            "{} online, {} allowed",
            eb.host.cpus_online, eb.host.cpus_allowed
        ),
    );
    differ(
        "hostbench versions",
        a.tool_version.to_string(),
        b.tool_version.to_string(),
    );
    differ(
        "compilers",
        ea.compiler.to_string(),
        eb.compiler.to_string(),
    );
    // What a suite's figures depend on beyond its settings, where the two differ.
    let theirs = conditions(b);
    for (name, la) in conditions(a) {
        if let Some((_, lb)) = theirs.iter().find(|(n, _)| *n == name) {
            if la != *lb {
                notes.push(format!("different {name}: {la} vs {lb}"));
            }
        }
    }
    for (name, r) in [("A", a), ("B", b)] {
        if r.incomplete {
            notes.push(format!("{name} is incomplete (the run was stopped)"));
        }
        for s in &r.suites {
            if let Some(why) = s.data().calibration().and_then(|c| c.unsure.as_ref()) {
                notes.push(format!(
                    "{name}'s {} calibration was unsure ({}): its CPU shares may be off",
                    s.name(),
                    why.cut(200)
                ));
            }
        }
    }
    notes
}

fn plural(n: usize, what: &str) -> String {
    format!("{n} {what}{}", if n == 1 { "" } else { "s" })
}

/// The noise floor of a comparison, when every result measured its noise: the largest of
/// their own (`RunResult::noise_floor_pct`).
fn noise_floor<'a>(results: impl IntoIterator<Item = &'a RunResult>) -> Option<f64> {
    results
        .into_iter()
        .try_fold(0.0f64, |floor, r| Some(floor.max(r.noise_floor_pct()?)))
}

/// How many runs a side `compare` would need to find a change, from one result's noise.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RepeatAdvice {
    pub change_pct: f64,
    /// The result's noise floor (its noise part's spread, else its noise check's, raised to a
    /// drift), percent: a change no larger is "within the host's noise" however many runs
    /// there are; below it, it is taken as the figures' run-to-run spread.
    pub floor_pct: f64,
    /// Runs a side to find the change four times in five (None: over 100).
    pub runs: Option<u32>,
}

/// The advice for a change of `change_pct`, from the result's noise floor. One run cannot
/// measure how its figures spread from run to run; the floor is the spread the host's CPU job
/// showed, which the index figures of a 2-CPU VM matched in an A/A test (docs/run.md).
pub fn repeats_to_detect(r: &RunResult, change_pct: f64) -> Option<RepeatAdvice> {
    let floor_pct = noise_floor(std::iter::once(r))?;
    Some(RepeatAdvice {
        change_pct,
        floor_pct,
        runs: crate::stats::runs_to_detect(floor_pct, change_pct, 100),
    })
}

/// Samples within one run a side, as Welch's test takes them: the means of
/// [`WITHIN_RUN_BATCHES`] consecutive stretches where there are enough (`stats::batch_means`:
/// successive samples of one run are not independent), else the samples themselves (each an
/// index iteration or a sched run of seconds already).
fn within_run(samples: &[f64]) -> std::borrow::Cow<'_, [f64]> {
    if samples.len() >= 2 * WITHIN_RUN_BATCHES {
        batch_means(samples, WITHIN_RUN_BATCHES).into()
    } else {
        samples.into()
    }
}

/// Batches a run's samples are tested in, where it has at least two a batch.
pub const WITHIN_RUN_BATCHES: usize = 10;

/// The fewest samples a side for the test within one run a side to judge a figure the host's
/// history also knows: with two, Welch's test has about two degrees of freedom and misses all
/// but huge changes, while the history's two-run bound is made for exactly this comparison.
pub const WITHIN_RUN_MIN_SAMPLES: usize = 3;

/// Whether a change between `a` and `b` (the two sides' values of one figure) is no larger
/// than the figure's resolution on either side (a latency's timer lateness): the largest of
/// them, when it is.
fn below_resolution(fa: &Figure, fb: Option<&Figure>, a: f64, b: f64) -> Option<f64> {
    let res = fa
        .resolution
        .into_iter()
        .chain(fb.and_then(|f| f.resolution))
        .reduce(f64::max)?;
    // (A change of exactly one deadline of a percentage, 100/n, is within it also after the
    // rounding of subtracting it from 100.)
    ((b - a).abs() <= res * (1.0 + 1e-9)).then_some(res)
}

/// What the sides' noise checks say: a run without one, a run whose host drifted.
fn noise_notes(sides: [(&str, &[RunResult]); 2]) -> Vec<String> {
    let mut notes = Vec::new();
    for (name, runs) in sides {
        for (i, r) in runs.iter().enumerate() {
            let which = if runs.len() > 1 {
                format!("{name} run {}", i + 1)
            } else {
                name.to_string()
            };
            if r.noise_spread_pct().is_none() {
                notes.push(format!(
                    "{which} has no noise check (--no-noise-check, or an older result) and no noise part: the host's noise during it is unknown, so no noise floor is applied"
                ));
            }
            if let Some(d) = r.noise_check.as_ref().and_then(|c| c.drifted_pct()) {
                notes.push(format!(
                    "{which} drifted: its check job ran {:.1}% {} at the end than at the start, so the host's speed changed while it ran; the noise floor is at least that",
                    d.abs(),
                    if d > 0.0 { "slower" } else { "faster" }
                ));
            }
        }
    }
    notes
}

/// The verdict of a test that found `significant` a change of `change_pct` in the direction
/// `up`, given the noise floor.
fn verdict(
    significant: bool,
    change_pct: f64,
    up: bool,
    better: Better,
    floor: Option<RunBound>,
) -> Verdict {
    if !significant {
        Verdict::NoSignificantDifference
    } else if floor.is_some_and(|f| f.holds(change_pct)) {
        Verdict::WithinNoise
    } else {
        match (up, better) {
            (true, Better::Higher) | (false, Better::Lower) => Verdict::Better,
            _ => Verdict::Worse,
        }
    }
}

fn geometric_mean(v: &[f64]) -> f64 {
    (v.iter().map(|x| x.ln()).sum::<f64>() / v.len() as f64).exp()
}

/// The change from `a` to `b` in percent of A's size (0 where A is 0): its sign is the
/// direction of the change whatever A's sign.
fn change_pct(a: f64, b: f64) -> f64 {
    if a != 0.0 {
        (b - a) / a.abs() * 100.0
    } else {
        0.0
    }
}

impl Row {
    /// A row of figure `f` with its two values, not yet tested: each way of judging fills in
    /// what its test found.
    fn untested(f: &Figure, a: f64, b: f64, basis: Basis, samples: [usize; 2]) -> Row {
        Row {
            key: f.key.clone(),
            suite: f.suite.clone(),
            name: f.name.clone(),
            unit: f.unit.clone(),
            better: f.better,
            a,
            b,
            change_pct: change_pct(a, b),
            ci_pct: None,
            p_value: None,
            basis,
            samples_a: samples[0],
            samples_b: samples[1],
            verdict: Verdict::NotTested,
            why_not_tested: None,
            floor_pct: None,
            floor_on_ratio: false,
            found_pct: None,
            account: None,
            host: None,
        }
    }
}

/// A figure judged on its per-run values (`va`, `vb`: one per run that has it; `fb`, the
/// figure in B's first run).
fn runs_row(fa: &Figure, fb: Option<&Figure>, va: &[f64], vb: &[f64], floor: Option<f64>) -> Row {
    let base = |a: f64, b: f64| Row::untested(fa, a, b, Basis::Runs, [va.len(), vb.len()]);
    // A percentage changes in points: its ratio means nothing near 0 (a percentile's % slower
    // than the fastest run: 2% and 60% are a factor 30 apart in two quiet runs).
    let positive = fa.unit != "%" && va.iter().chain(vb).all(|x| x.is_finite() && *x > 0.0);
    if !positive {
        // A figure that can be zero (deadlines missed, an overrun) or a percentage has no
        // ratio: the difference of its means, in percent of A's.
        let mean = |v: &[f64]| Summary::of(v).map_or(0.0, |s| s.mean);
        let (ma, mb) = (mean(va), mean(vb));
        let mut r = base(ma, mb);
        match welch_test(va, vb) {
            Some(t) => {
                r.p_value = Some(t.p_value);
                r.ci_pct = (ma != 0.0)
                    .then(|| [t.ci_low / ma.abs() * 100.0, t.ci_high / ma.abs() * 100.0]);
                r.verdict = verdict(
                    t.significant(),
                    r.change_pct,
                    t.difference > 0.0,
                    fa.better,
                    floor.map(RunBound::linear),
                );
            }
            None => {
                r.why_not_tested = Some("fewer than two runs on a side".into());
            }
        }
        return at_resolution(r, fa, fb);
    }
    let (ga, gb) = (geometric_mean(va), geometric_mean(vb));
    let mut r = base(ga, gb);
    match log_ratio_test(va, vb) {
        Some(t) => {
            r.p_value = Some(t.p_value);
            r.ci_pct = Some([(t.ci_low - 1.0) * 100.0, (t.ci_high - 1.0) * 100.0]);
            r.verdict = verdict(
                t.significant(),
                r.change_pct,
                t.ratio > 1.0,
                fa.better,
                floor.map(RunBound::linear),
            );
        }
        None => r.why_not_tested = Some("fewer than two runs on a side".into()),
    }
    at_resolution(r, fa, fb)
}

/// A change called better or worse that is no larger than the figure's resolution (a
/// latency's timer lateness) is within the noise.
fn at_resolution(mut r: Row, fa: &Figure, fb: Option<&Figure>) -> Row {
    if matches!(r.verdict, Verdict::Better | Verdict::Worse)
        && below_resolution(fa, fb, r.a, r.b).is_some()
    {
        r.verdict = Verdict::WithinNoise;
    }
    r
}

/// A figure of one run a side, judged on the samples within each (`within_run`). The change
/// is the figures' own (an index score, a latency mean over the whole run), which need not be
/// the samples' mean (a score over the best iterations, samples cut short in a long run): the
/// samples give the test its spread, and the interval is centred on the figures' change, so it
/// always holds it.
fn row(a: &Figure, b: &Figure, floor: Option<RunBound>) -> Row {
    let (sa, sb) = (within_run(&a.samples), within_run(&b.samples));
    let mut r = Row::untested(a, a.value, b.value, Basis::WithinRun, [sa.len(), sb.len()]);
    let test = welch_test(&sa, &sb);
    r.why_not_tested = match (&test, a.samples.is_empty() && b.samples.is_empty()) {
        (Some(_), _) => None,
        (None, true) => Some(format!("{}: no samples", a.sample_kind)),
        (None, false) => Some("fewer than two samples on a side".to_string()),
    };
    // A figure that cannot be negative is tested on the ratio of its means, whose interval
    // never reaches below -100%; one that can, on their difference over A's value.
    let ratio = ratio_of_means_test(&sa, &sb).filter(|_| a.value > 0.0 && b.value > 0.0);
    let (significant, up) = match (test, ratio) {
        (_, Some(t)) => {
            let t = t.about(b.value / a.value);
            r.ci_pct = Some([(t.ci_low - 1.0) * 100.0, (t.ci_high - 1.0) * 100.0]);
            r.p_value = Some(t.p_value);
            (t.significant(), t.ratio > 1.0)
        }
        (Some(t), None) => {
            let t = t.about(b.value - a.value);
            r.ci_pct = (a.value != 0.0).then(|| {
                let of_a = |x: f64| x / a.value.abs() * 100.0;
                [of_a(t.ci_low), of_a(t.ci_high)]
            });
            r.p_value = Some(t.p_value);
            (t.significant(), t.difference > 0.0)
        }
        (None, None) => return at_resolution(r, a, Some(b)),
    };
    r.verdict = verdict(significant, r.change_pct, up, a.better, floor);
    at_resolution(r, a, Some(b))
}

/// A figure of one run a side that its samples cannot test, judged against its own run-to-run
/// spread on this host (`bound`: the 95% bound of the change between two of its runs): a
/// change beyond it, on the bound's scale (B/A above 1 + bound or below 1 / (1 + bound) where
/// the history was all positive), is better or worse; one within it is within the host's noise.
fn history_row(a: &Figure, b: &Figure, bound: RunBound) -> Row {
    let mut r = Row {
        floor_pct: Some(bound.pct),
        floor_on_ratio: bound.on_ratio,
        ..Row::untested(
            a,
            a.value,
            b.value,
            Basis::History,
            [a.samples.len(), b.samples.len()],
        )
    };
    // The bound is the test: a change it holds is within the host's noise.
    r.verdict = verdict(true, r.change_pct, b.value > a.value, a.better, Some(bound));
    at_resolution(r, a, Some(b))
}

/// Pairs the figures present in both results, in A's order. Results that share no figure are
/// the user's mistake.
pub fn compare(
    a_source: &str,
    a: &RunResult,
    b_source: &str,
    b: &RunResult,
) -> Result<Comparison, UsageError> {
    compare_runs(
        a_source,
        std::slice::from_ref(a),
        b_source,
        std::slice::from_ref(b),
        None,
    )
}

/// Compares two sides of one or more runs each (the runs of a `--repeat`, or results listed
/// as `A1,A2,A3`). With more than one run between them, every figure is judged on its per-run
/// values; with one run a side, on the samples within the runs, each figure against its own
/// run-to-run spread where `spread` has the host's earlier runs (else the doubled noise floor).
///
/// The evidence is the per-run figures whenever the two sides have more than one run between
/// them: on a shared host the largest variation is between runs (the CPU's speed drifts over
/// minutes, placement changes a ping-pong threefold), which samples taken within one run do not
/// see. The test is Welch's on the figures' logarithms (`stats::log_ratio_test`, where the
/// choice is explained), and its interval is that of the ratio B/A. With one run a side the
/// samples within each run are tested (as the means of ten stretches where there are enough,
/// since successive samples are not independent), each figure against its own run-to-run
/// spread where the host's earlier runs give one (`HostSpread`), else against the doubled
/// noise floor, with a note that run-to-run variation is unknown.
pub fn compare_runs(
    a_source: &str,
    a: &[RunResult],
    b_source: &str,
    b: &[RunResult],
    spread: Option<&HostSpread>,
) -> Result<Comparison, UsageError> {
    if a.is_empty() || b.is_empty() {
        return Err(UsageError::new("compare needs at least one result a side"));
    }
    let fa: Vec<Vec<Figure>> = a.iter().map(figures).collect();
    let fb: Vec<Vec<Figure>> = b.iter().map(figures).collect();
    let (hosts_a, hosts_b) = (by_host(a), by_host(b));
    let basis = if hosts_a.len() > 1 || hosts_b.len() > 1 {
        Basis::Hosts
    } else if a.len() + b.len() > 2 {
        Basis::Runs
    } else {
        Basis::WithinRun
    };
    let measured_floor = noise_floor(a.iter().chain(b));
    let judge = Judge {
        sides: [&fa, &fb],
        hosts: [&hosts_a, &hosts_b],
        basis,
        floor: match basis {
            Basis::Runs | Basis::Hosts => measured_floor,
            Basis::WithinRun | Basis::History => measured_floor.map(|f| 2.0 * f),
        },
        // One run a side: each figure's own run-to-run spread, where the host has history.
        spread: spread.filter(|s| basis == Basis::WithinRun && s.usable()),
    };
    let mut rows: Vec<Row> = fa[0]
        .iter()
        .filter_map(|first| Some(judge.row(first, fb[0].iter().find(|f| f.key == first.key)?)))
        .collect();
    // One run a side: the figures that follow the host's speed here, net of it.
    let moved = judge
        .spread
        .and_then(|s| net::reference_moved(s, &fa[0], &fb[0]));
    if let Some(s) = judge.spread {
        rows = rows
            .into_iter()
            .map(|r| match (find(&fa[0], &r.key), find(&fb[0], &r.key)) {
                (Some(x), Some(y)) => net::net_of_host(r, x, y, s, moved.is_some()),
                _ => r,
            })
            .collect();
    }
    // Beside each figure that changed, what the host's accounts of its stretches say: the
    // items that changed with it, and those that did not.
    for r in rows
        .iter_mut()
        .filter(|r| matches!(r.verdict, Verdict::Better | Verdict::Worse))
    {
        r.account = item_verdicts(&accounts(&fa, &r.key), &accounts(&fb, &r.key));
    }
    // The host's own speed is beside the measurements, not one of them.
    if rows.iter().all(|r| r.key == HOST_REFERENCE_KEY) {
        return Err(UsageError::new(format!(
            "{a_source} ({}) and {b_source} ({}) share no measurement to compare",
            a[0].suite_names(),
            b[0].suite_names()
        )));
    }
    let mut notes = side_notes(a, b, basis, [hosts_a.len(), hosts_b.len()]);
    if basis == Basis::WithinRun {
        notes.push(one_run_note(
            &a[0],
            measured_floor,
            judge.spread,
            spread.map(|s| s.runs),
        ));
    }
    notes.extend(net::note(&rows, moved));
    notes.extend(resolution_notes(&rows, &fa[0], &fb[0]));
    Ok(Comparison {
        test: match basis {
            Basis::Runs => RUNS_TEST,
            Basis::Hosts => HOSTS_TEST,
            Basis::WithinRun | Basis::History => WITHIN_RUN_TEST,
        }
        .into(),
        basis,
        a: side(a_source, a),
        b: side(b_source, b),
        noise_floor_pct: judge.floor,
        spread_runs: judge.spread.map(|s| s.runs),
        notes,
        rows,
    })
}

/// The figure of this key among a run's.
fn find<'a>(figures: &'a [Figure], key: &str) -> Option<&'a Figure> {
    figures.iter().find(|f| f.key == key)
}

/// The host's accounts of a figure's stretches, over a side's runs.
fn accounts<'a>(runs: &'a [Vec<Figure>], key: &str) -> Vec<&'a Account> {
    runs.iter()
        .filter_map(|figs| find(figs, key))
        .flat_map(|f| f.accounts.iter())
        .collect()
}

/// How a comparison judges each figure: the two sides' runs' figures, their runs by host, the
/// basis, the noise floor, and the host's own run-to-run spread where one run a side has it.
struct Judge<'a> {
    sides: [&'a [Vec<Figure>]; 2],
    hosts: [&'a [Vec<usize>]; 2],
    basis: Basis,
    floor: Option<f64>,
    spread: Option<&'a HostSpread>,
}

impl Judge<'_> {
    /// A figure's value in each run of a side (None where a run lacks it).
    fn each_run(runs: &[Vec<Figure>], key: &str) -> Vec<Option<f64>> {
        runs.iter()
            .map(|figs| find(figs, key).map(|f| f.value))
            .collect()
    }

    /// A figure's values over a side's runs that have it.
    fn values(runs: &[Vec<Figure>], key: &str) -> Vec<f64> {
        Self::each_run(runs, key).into_iter().flatten().collect()
    }

    /// The row of a figure present in both sides' first runs.
    fn row(&self, first: &Figure, other: &Figure) -> Row {
        // A figure that is itself the host's noise is not judged against it.
        let floor = self.floor.filter(|_| !first.is_spread);
        let [fa, fb] = self.sides;
        let key = &first.key;
        match self.basis {
            Basis::Runs => runs_row(
                first,
                Some(other),
                &Self::values(fa, key),
                &Self::values(fb, key),
                floor,
            ),
            // (A comparison's basis is never History: that is a row's.)
            Basis::WithinRun | Basis::History => self.within_run_row(first, other, floor),
            Basis::Hosts => Row {
                basis: Basis::Hosts,
                ..runs_row(
                    first,
                    Some(other),
                    &per_host(&Self::each_run(fa, key), self.hosts[0]),
                    &per_host(&Self::each_run(fb, key), self.hosts[1]),
                    floor,
                )
            },
        }
    }

    /// One run a side: the samples within the runs, against the figure's own run-to-run
    /// spread where the host's history gives one, else against the doubled floor.
    fn within_run_row(&self, first: &Figure, other: &Figure, floor: Option<f64>) -> Row {
        let Some(f) = self.spread.and_then(|s| s.bound(first, other)) else {
            return row(first, other, floor.map(RunBound::linear));
        };
        let found_pct = self.spread.and_then(|s| s.smallest_found(first, other));
        let r = match row(first, other, Some(f)) {
            // Nothing within the runs to test, or too little for the test to mean much: the
            // host's history judges it.
            r if r.verdict == Verdict::NotTested
                || first.samples.len().min(other.samples.len()) < WITHIN_RUN_MIN_SAMPLES =>
            {
                history_row(first, other, f)
            }
            r => Row {
                floor_pct: Some(f.pct),
                floor_on_ratio: f.on_ratio,
                ..r
            },
        };
        Row { found_pct, ..r }
    }
}

/// What differs between the sides' runs (and within each side), what their noise checks say,
/// and, for sides that span hosts, how their verdicts are made.
fn side_notes(a: &[RunResult], b: &[RunResult], basis: Basis, hosts: [usize; 2]) -> Vec<String> {
    let mut out = notes(&a[0], &b[0]);
    for (name, side) in [("A", a), ("B", b)] {
        for r in &side[1..] {
            for n in notes(&side[0], r) {
                let n = format!("within {name}: {n}");
                if !out.contains(&n) {
                    out.push(n);
                }
            }
        }
    }
    out.extend(noise_notes([("A", a), ("B", b)]));
    if basis == Basis::Hosts {
        out.push(format!(
            "the sides span hosts (A: {} on {}, B: {} on {}): each host's runs count as one figure, their geometric mean, so the verdicts are of hosts; a side on one host has one figure, too few to test",
            plural(a.len(), "run"),
            plural(hosts[0], "host"),
            plural(b.len(), "run"),
            plural(hosts[1], "host")
        ));
    }
    out
}

/// One run a side: what the verdicts rest on, the floor they are judged against, and how many
/// runs would do better. `looked_up`: the host's earlier runs found, where they were sought.
fn one_run_note(
    a: &RunResult,
    measured_floor: Option<f64>,
    spread: Option<&HostSpread>,
    looked_up: Option<usize>,
) -> String {
    let advice = repeats_to_detect(a, 5.0)
        .and_then(|r| r.runs)
        .map_or(String::new(), |n| {
            format!(" (at this host's noise, {n} runs a side find a 5% change four times in five)")
        });
    let history = match (spread, looked_up) {
        (Some(s), _) => format!(
            "; each figure's noise floor is its own run-to-run spread on this host, from {} earlier runs with the same figures: a change is called only beyond the 95% bound of the change between two of its runs",
            s.runs
        ),
        (None, Some(found)) => format!(
            "; with {} earlier runs of this host with the same figures stored ({found} now), each figure's own run-to-run spread would be its floor",
            HostSpread::MIN_RUNS
        ),
        (None, None) => String::new(),
    };
    match (measured_floor, spread) {
        (_, Some(_)) => format!(
            "one run a side{history}; figures without such history are judged on the samples within each run against the doubled noise floor; repeat the runs (--repeat N, or list results A1,A2,A3) to judge on per-run figures{advice}"
        ),
        (Some(f), None) => format!(
            "one run a side: run-to-run variation is unknown, so the verdicts rest on the samples within each run and the noise floor is doubled (±{f:.1}% → ±{:.1}%){history}; repeat the runs (--repeat N, or list results A1,A2,A3) to judge on per-run figures{advice}",
            2.0 * f
        ),
        (None, None) => format!("one run a side: run-to-run variation is unknown and the host's noise was not measured in both, so a verdict may call a difference between two runs a change{history}; repeat the runs (--repeat N, or list results A1,A2,A3) to judge on per-run figures{advice}"),
    }
}

/// Changes no larger than what the figure can resolve, by unit: latencies (ms), against the
/// timer's lateness; percentages (%), against one deadline or burn.
fn resolution_notes(rows: &[Row], fa: &[Figure], fb: &[Figure]) -> Vec<String> {
    let below = |unit: &str| {
        rows.iter()
            .filter(|r| r.verdict == Verdict::WithinNoise && r.unit == unit)
            .filter_map(|r| below_resolution(find(fa, &r.key)?, find(fb, &r.key), r.a, r.b))
            .collect::<Vec<f64>>()
    };
    let largest = |v: &[f64]| v.iter().fold(0.0f64, |m, x| m.max(*x));
    let mut notes = Vec::new();
    let timed = below("ms");
    if !timed.is_empty() {
        notes.push(format!(
            "{} latenc{} changed by no more than the timer's own mean lateness in its pair (up to {:.3} ms): within the noise, the timer's rather than the scheduler's",
            timed.len(),
            if timed.len() == 1 { "y" } else { "ies" },
            largest(&timed)
        ));
    }
    let counted = below("%");
    if !counted.is_empty() {
        notes.push(format!(
            "{} percentage{} changed by no more than one deadline or one burn of its run (up to {:.2} pt): within the noise",
            counted.len(),
            if counted.len() == 1 { "" } else { "s" },
            largest(&counted)
        ));
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn figure(better: Better, samples: &[f64]) -> Figure {
        Figure {
            key: "k".into(),
            suite: "s".into(),
            name: "n".into(),
            unit: "u".into(),
            better,
            value: samples.iter().sum::<f64>() / samples.len().max(1) as f64,
            samples: samples.to_vec(),
            sample_kind: "run".into(),
            resolution: None,
            of_events: None,
            is_spread: false,
            accounts: Vec::new(),
        }
    }

    #[test]
    fn verdicts_honour_each_figures_direction() {
        let low = [10.0, 10.1, 9.9, 10.0];
        let high = [12.0, 12.1, 11.9, 12.0];
        // Latency rising is worse; a score rising is better.
        let r = row(
            &figure(Better::Lower, &low),
            &figure(Better::Lower, &high),
            None,
        );
        assert_eq!(r.verdict, Verdict::Worse);
        assert!((r.change_pct - 20.0).abs() < 1e-9);
        let [lo, hi] = r.ci_pct.unwrap();
        assert!(lo > 0.0 && lo < 20.0 && hi > 20.0, "{lo} {hi}");
        let r = row(
            &figure(Better::Higher, &low),
            &figure(Better::Higher, &high),
            None,
        );
        assert_eq!(r.verdict, Verdict::Better);
        // The same 20% change on a host whose runs spread by 25%: real, but within its noise;
        // on a host that spreads by 5%, better.
        let (a, b) = (figure(Better::Higher, &low), figure(Better::Higher, &high));
        assert_eq!(
            row(&a, &b, Some(RunBound::linear(25.0))).verdict,
            Verdict::WithinNoise
        );
        assert_eq!(
            row(&a, &b, Some(RunBound::linear(5.0))).verdict,
            Verdict::Better
        );
        // The same samples: no difference.
        let r = row(
            &figure(Better::Higher, &low),
            &figure(Better::Higher, &low),
            None,
        );
        assert_eq!(r.verdict, Verdict::NoSignificantDifference);
        // One sample: shown, not judged.
        let r = row(
            &figure(Better::Higher, &[1.0]),
            &figure(Better::Higher, &high),
            None,
        );
        assert_eq!(r.verdict, Verdict::NotTested);
        assert!(r.why_not_tested.unwrap().contains("fewer than two"));
    }

    /// Two runs of one unchanged host whose successive samples follow each other (AR(1),
    /// φ = 0.6, as a latency follows the one before): Welch's test on the samples calls a
    /// change in many pairs, on the means of ten stretches near the 5% it promises.
    #[test]
    fn correlated_samples_are_tested_as_batch_means() {
        use rand::SeedableRng;
        use rand_distr::{Distribution, Normal};
        let mut rng = rand::rngs::StdRng::seed_from_u64(30);
        let noise = Normal::new(0.0, 1.0).unwrap();
        let mut run = || {
            let mut x = 0.0;
            (0..200)
                .map(|_| {
                    x = 0.6 * x + noise.sample(&mut rng);
                    100.0 + x
                })
                .collect::<Vec<f64>>()
        };
        let (mut raw, mut batched) = (0, 0);
        let pairs = 400;
        for _ in 0..pairs {
            let (a, b) = (figure(Better::Lower, &run()), figure(Better::Lower, &run()));
            raw += welch_test(&a.samples, &b.samples).is_some_and(|t| t.significant()) as usize;
            let r = row(&a, &b, None);
            assert_eq!(r.samples_a, WITHIN_RUN_BATCHES);
            batched += matches!(r.verdict, Verdict::Better | Verdict::Worse) as usize;
        }
        let (raw, batched) = (raw as f64 / pairs as f64, batched as f64 / pairs as f64);
        assert!(raw > 0.15, "raw samples: {raw}");
        assert!(batched < 0.09, "batch means: {batched}");
        // Few samples (index iterations, sched runs): tested as they are.
        assert_eq!(within_run(&[1.0, 2.0, 3.0]).len(), 3);
    }

    /// The interval of a row is of its own change, whatever the samples' mean: the change is
    /// the figures' (a latency mean over a whole run, a score over the best iterations) and
    /// the samples give only its spread. Over ratios from 1/1000 to 1000, spreads from 0.1% to
    /// 200%, figures off their samples' mean by up to a factor 10 and samples that may be
    /// negative, every interval holds its estimate, on both tests within one run and per run.
    #[test]
    fn an_interval_always_holds_its_own_estimate() {
        use rand::{Rng, SeedableRng};
        use rand_distr::{Distribution, LogNormal, Normal};
        let mut rng = rand::rngs::StdRng::seed_from_u64(63);
        let holds = |r: &Row| {
            let Some([lo, hi]) = r.ci_pct else {
                return true;
            };
            let slack = 1e-9 * (1.0 + r.change_pct.abs());
            lo - slack <= r.change_pct && r.change_pct <= hi + slack
        };
        for trial in 0..4000 {
            let ratio = 10f64.powf(rng.gen_range(-3.0..3.0));
            let cv = 10f64.powf(rng.gen_range(-3.0..0.3));
            let n = rng.gen_range(2..40);
            let signed = trial % 4 == 0;
            let mut draw = |centre: f64| -> Vec<f64> {
                if signed {
                    let d = Normal::new(centre, centre.abs() * cv * 5.0).unwrap();
                    (0..n).map(|_| d.sample(&mut rng)).collect()
                } else {
                    let d = LogNormal::new(centre.ln(), cv).unwrap();
                    (0..n).map(|_| d.sample(&mut rng)).collect()
                }
            };
            let (sa, sb) = (draw(50.0), draw(50.0 * ratio));
            let off = |rng: &mut rand::rngs::StdRng| 10f64.powf(rng.gen_range(-1.0..1.0));
            let (oa, ob) = (off(&mut rng), off(&mut rng));
            let mut fa = figure(Better::Lower, &sa);
            let mut fb = figure(Better::Lower, &sb);
            fa.value *= oa;
            fb.value *= ob;
            let r = row(&fa, &fb, None);
            assert!(holds(&r), "within runs, trial {trial}: {r:?}");
            let r = runs_row(&fa, Some(&fb), &sa, &sb, None);
            assert!(holds(&r), "per run, trial {trial}: {r:?}");
        }
        // The case seen in a quick run: a latency mean whose batches covered only the
        // beginning of a long run, far below the whole run's mean.
        let a = figure(Better::Lower, &[1.0, 1.1, 0.9, 1.0, 1.05]);
        let b = Figure {
            value: 3.56,
            ..figure(Better::Lower, &[37.0, 30.0, 45.0, 40.0, 35.0])
        };
        let r = row(&a, &b, None);
        let [lo, hi] = r.ci_pct.unwrap();
        assert!(lo <= r.change_pct && r.change_pct <= hi, "{r:?}");
        assert_eq!(r.verdict, Verdict::Worse);
    }

    /// A latency of a few microseconds that fell by 75%: smaller than the timer's own lateness
    /// in the pair, so within the noise; a change of 0.4 ms is the scheduler's.
    #[test]
    fn a_latency_change_below_the_timers_lateness_is_within_the_noise() {
        let with_timer = |samples: &[f64]| Figure {
            resolution: Some(0.05),
            ..figure(Better::Lower, samples)
        };
        let tiny = row(
            &with_timer(&[0.004, 0.0041, 0.0039, 0.004]),
            &with_timer(&[0.001, 0.0011, 0.0009, 0.001]),
            None,
        );
        assert!(tiny.change_pct < -70.0);
        assert_eq!(tiny.verdict, Verdict::WithinNoise);
        let real = row(
            &with_timer(&[0.1, 0.11, 0.09, 0.1]),
            &with_timer(&[0.5, 0.51, 0.49, 0.5]),
            None,
        );
        assert_eq!(real.verdict, Verdict::Worse);
        // Per-run figures too.
        let a = with_timer(&[0.004]);
        let r = runs_row(
            &a,
            Some(&a),
            &[0.004, 0.0041, 0.0039],
            &[0.001, 0.0011, 0.0009],
            None,
        );
        assert_eq!(r.verdict, Verdict::WithinNoise);
    }
}

#[cfg(test)]
mod host_tests {
    use super::*;
    use crate::model::figures::Kept;
    use crate::model::noise::{summarize, NoiseMode, NoiseResult, NoiseRun, NoiseSettings};
    use crate::model::{Environment, SuiteResult};

    /// A noise result of host `host` whose job's mean run time is about `ms`.
    fn run_on(host: &str, ms: f64) -> RunResult {
        run_with(host, &[ms * 0.999, ms, ms * 1.001])
    }

    /// A noise result of these run times (ms).
    fn run_with(host: &str, times_ms: &[f64]) -> RunResult {
        let runs: Vec<NoiseRun> = times_ms
            .iter()
            .map(|ms| NoiseRun {
                time_ns: (ms * 1e6) as u64,
                ..NoiseRun::default()
            })
            .collect();
        let mut r = RunResult::finished(
            chrono::Utc::now(),
            vec!["hostbench".into()],
            false,
            Environment::default(),
            SuiteResult::Noise(NoiseResult {
                settings: NoiseSettings {
                    mode: NoiseMode::Cpu,
                    target_ms: 10,
                    runs_requested: times_ms.len() as u64,
                },
                calibration: None,
                summary: summarize(&runs, 1000),
                runs,
            }),
        );
        r.host_label = Some(host.into());
        r
    }

    /// What the store keeps of a run: its figures.
    fn kept(host: &str, ms: f64) -> Kept {
        Kept::of(&run_on(host, ms))
    }

    /// One run a side: a 3% slower job, tight within each run, is a change by the samples;
    /// on a host whose earlier runs of the same job spread by about 5%, within its noise, and
    /// the comparison says from how many runs. A 40% change is worse against either.
    #[test]
    fn one_run_a_side_is_judged_against_each_figures_own_spread_on_the_host() {
        let history: Vec<Kept> = [10.0, 10.6, 9.5, 10.3, 9.8]
            .iter()
            .map(|&ms| kept("h1", ms))
            .collect();
        let spread = HostSpread::of(&history.iter().collect::<Vec<_>>());
        assert_eq!(spread.runs, 5);
        let key = figures(&run_on("h1", 10.0))[0].key.clone();
        let first = &figures(&run_on("h1", 10.0))[0];
        let bound = spread.bound(first, first).unwrap();
        assert!(bound.on_ratio, "{bound:?}");
        let bound = bound.pct;
        assert!(bound > 10.0 && bound < 40.0, "{bound}");
        let (a, b) = ([run_on("h1", 10.0)], [run_on("h1", 10.3)]);
        let plain = compare_runs("A", &a, "B", &b, None).unwrap();
        assert_eq!(plain.rows[0].verdict, Verdict::Worse, "{plain:?}");
        assert_eq!(plain.spread_runs, None);
        let c = compare_runs("A", &a, "B", &b, Some(&spread)).unwrap();
        let row = c.rows.iter().find(|r| r.key == key).unwrap();
        assert_eq!(row.verdict, Verdict::WithinNoise, "{row:?}");
        assert_eq!(row.floor_pct, Some(bound));
        assert_eq!(c.spread_runs, Some(5));
        assert!(
            c.notes.iter().any(|n| n.contains("from 5 earlier runs")),
            "{:?}",
            c.notes
        );
        let worse = compare_runs("A", &a, "B", &[run_on("h1", 14.0)], Some(&spread)).unwrap();
        let row = worse.rows.iter().find(|r| r.key == key).unwrap();
        assert_eq!(row.verdict, Verdict::Worse, "{row:?}");
        // Two earlier runs are not enough: today's rule, and the comparison says so.
        let short = HostSpread::of(&history.iter().take(2).collect::<Vec<_>>());
        let c = compare_runs("A", &a, "B", &b, Some(&short)).unwrap();
        assert_eq!(c.spread_runs, None);
        assert_eq!(c.rows[0].floor_pct, None);
        assert!(
            c.notes.iter().any(|n| n.contains("(2 now)")),
            "{:?}",
            c.notes
        );
        // Groups are judged on their own runs: the spread is not theirs to use.
        let c = compare_runs(
            "A",
            &many("h1", 10.0, 3),
            "B",
            &many("h1", 10.3, 3),
            Some(&spread),
        )
        .unwrap();
        assert_eq!(c.spread_runs, None);
    }

    /// Two samples a side: Welch's test cannot tell 11.5 ms from 14.75 ms (+28%) with a spread
    /// of 1.8 ms a side, but a host whose runs spread by about 5% can: worse, by the history.
    /// Without the history the same pair is no significant difference.
    #[test]
    fn two_samples_a_side_are_judged_by_the_history() {
        let history: Vec<Kept> = [10.0, 10.6, 9.5, 10.3, 9.8]
            .iter()
            .map(|&ms| Kept::of(&run_with("h1", &[ms, ms])))
            .collect();
        let spread = HostSpread::of(&history.iter().collect::<Vec<_>>());
        let (a, b) = (
            [run_with("h1", &[10.0, 13.0])],
            [run_with("h1", &[13.5, 16.0])],
        );
        let key = figures(&a[0])[0].key.clone();
        let plain = compare_runs("A", &a, "B", &b, None).unwrap();
        let row = plain.rows.iter().find(|r| r.key == key).unwrap();
        assert_eq!(row.verdict, Verdict::NoSignificantDifference, "{row:?}");
        let c = compare_runs("A", &a, "B", &b, Some(&spread)).unwrap();
        let row = c.rows.iter().find(|r| r.key == key).unwrap();
        assert_eq!(row.basis, Basis::History, "{row:?}");
        assert_eq!(row.verdict, Verdict::Worse, "{row:?}");
        // Three samples a side are the samples' to judge.
        let three = compare_runs(
            "A",
            &[run_with("h1", &[10.0, 13.0, 11.5])],
            "B",
            &[run_with("h1", &[13.5, 16.0, 14.75])],
            Some(&spread),
        )
        .unwrap();
        let row = three.rows.iter().find(|r| r.key == key).unwrap();
        assert_eq!(row.basis, Basis::WithinRun, "{row:?}");
    }

    /// A derived figure (a score, a percentile): a value and no samples.
    fn derived(better: Better, value: f64) -> Figure {
        Figure {
            key: "k".into(),
            suite: "s".into(),
            name: "n".into(),
            unit: "u".into(),
            better,
            value,
            samples: Vec::new(),
            sample_kind: "derived".into(),
            resolution: None,
            of_events: None,
            is_spread: false,
            accounts: Vec::new(),
        }
    }

    /// A figure with no samples a side is judged against its run-to-run spread on the host,
    /// on the ratio's scale: with a bound of 10%, a score 30% up is better, 5% up within the
    /// noise, and a latency from 100 to 70 (B/A 0.70, below 1/1.1) better. A bound learnt
    /// from a history with a zero in it is on the difference's scale.
    #[test]
    fn a_figure_without_samples_is_judged_against_its_history() {
        let on_ratio = |pct| RunBound {
            pct,
            on_ratio: true,
        };
        let judged =
            |better, a, b| history_row(&derived(better, a), &derived(better, b), on_ratio(10.0));
        let r = judged(Better::Higher, 100.0, 130.0);
        assert_eq!(r.verdict, Verdict::Better, "{r:?}");
        assert_eq!(r.basis, Basis::History);
        assert_eq!(r.floor_pct, Some(10.0));
        assert!(r.floor_on_ratio);
        // ×0.5–×2: a latency from 100 to 40 is better; ±100% of A: within the noise.
        let wide = |bound| {
            history_row(
                &derived(Better::Lower, 100.0),
                &derived(Better::Lower, 40.0),
                bound,
            )
        };
        assert_eq!(wide(on_ratio(100.0)).verdict, Verdict::Better);
        let r = wide(RunBound::linear(100.0));
        assert_eq!(r.verdict, Verdict::WithinNoise, "{r:?}");
        assert!(!r.floor_on_ratio);
        // A history that always met every deadline (a bound of 0): one missed frame of 120
        // is within the figure's resolution; two are worse.
        let met = |v| Figure {
            resolution: Some(100.0 / 120.0),
            ..derived(Better::Higher, v)
        };
        let frames = |missed: f64| {
            history_row(
                &met(100.0),
                &met(100.0 - missed * 100.0 / 120.0),
                on_ratio(0.0),
            )
        };
        assert_eq!(frames(1.0).verdict, Verdict::WithinNoise);
        assert_eq!(frames(2.0).verdict, Verdict::Worse);
        assert!(r.why_not_tested.is_none());
        for (better, a, b, verdict) in [
            (Better::Higher, 100.0, 105.0, Verdict::WithinNoise),
            (Better::Lower, 100.0, 70.0, Verdict::Better),
            // 100 to 91: -9%, but B/A 0.91 is within 1/1.1 (0.909): the noise.
            (Better::Lower, 100.0, 91.0, Verdict::WithinNoise),
            // A figure that can be zero is judged on its change in percent of A.
            (Better::Lower, 0.0, 0.0, Verdict::WithinNoise),
        ] {
            let r = judged(better, a, b);
            assert_eq!(r.verdict, verdict, "{r:?}");
        }
    }

    fn many(host: &str, ms: f64, n: usize) -> Vec<RunResult> {
        (0..n)
            .map(|i| run_on(host, ms * (1.0 + 0.001 * i as f64)))
            .collect()
    }

    /// Two hosts a side, one of them with ten runs: judged on runs, the ten would make B's
    /// slow host look like a real change; judged on hosts (one figure each), two hosts a side
    /// that disagree are no evidence.
    #[test]
    fn a_side_spanning_hosts_counts_each_host_once() {
        let mut a = many("h1", 10.0, 10);
        a.push(run_on("h2", 10.0));
        let mut b = many("h3", 11.0, 10);
        b.push(run_on("h4", 9.0));
        let c = compare_runs("A", &a, "B", &b, None).unwrap();
        assert_eq!(c.basis, Basis::Hosts);
        assert_eq!(c.test, HOSTS_TEST);
        assert_eq!((c.a.hosts, c.b.hosts), (2, 2));
        let row = &c.rows[0];
        assert_eq!(row.basis, Basis::Hosts);
        assert_eq!((row.samples_a, row.samples_b), (2, 2));
        assert_eq!(row.verdict, Verdict::NoSignificantDifference, "{row:?}");
        assert!(c
            .notes
            .iter()
            .any(|n| n.contains("each host's runs count as one")));
        // The same runs under one host each side are judged on runs, and the ten decide.
        let relabel = |runs: &[RunResult], h: &str| -> Vec<RunResult> {
            runs.iter()
                .cloned()
                .map(|mut r| {
                    r.host_label = Some(h.into());
                    r
                })
                .collect()
        };
        let c = compare_runs("A", &relabel(&a, "x"), "B", &relabel(&b, "y"), None).unwrap();
        assert_eq!(c.basis, Basis::Runs);
        assert_eq!(c.rows[0].samples_a, 11);
        assert_eq!(c.rows[0].verdict, Verdict::Worse, "{:?}", c.rows[0]);
        // Three hosts a side, each 10% slower in B: a real change, found on hosts.
        let a: Vec<RunResult> = ["p", "q", "r"]
            .iter()
            .enumerate()
            .flat_map(|(i, h)| many(h, 10.0 + 0.05 * i as f64, 2))
            .collect();
        let b: Vec<RunResult> = ["p", "q", "r"]
            .iter()
            .enumerate()
            .flat_map(|(i, h)| many(h, 11.0 + 0.05 * i as f64, 2))
            .collect();
        let c = compare_runs("A", &a, "B", &b, None).unwrap();
        assert_eq!((c.rows[0].samples_a, c.rows[0].samples_b), (3, 3));
        assert_eq!(c.rows[0].verdict, Verdict::Worse, "{:?}", c.rows[0]);
        assert!((c.rows[0].change_pct - 10.0).abs() < 1.0);
    }

    #[test]
    fn an_unsure_calibration_is_noted_for_its_side() {
        let sure = RunResult::example("h1", false);
        let mut i = crate::model::interactive::InteractiveResult::example();
        i.calibration.unsure =
            Some("no check after a 1000 ms rest passed in 9 tries within 20 s".into());
        let mut unsure = RunResult::example("h1", false);
        unsure.suites = vec![SuiteResult::Interactive(i)];
        let n = notes(&sure, &unsure);
        assert!(
            n.iter().any(|n| n
                .starts_with("B's interactive calibration was unsure (no check after a 1000 ms")),
            "{n:?}"
        );
        assert!(!notes(&sure, &sure).iter().any(|n| n.contains("unsure")));
    }
}
