//! `hostbench compare`: pairs the figures two results (or two sets of repeated runs) share and
//! says which differences are real.
//!
//! The evidence is the per-run figures whenever the two sides have more than one run between
//! them: on a shared host the largest variation is between runs (the CPU's speed drifts over
//! minutes, placement changes a ping-pong threefold), which samples taken within one run do not
//! see. The test is Welch's on the figures' logarithms (`stats::log_ratio_test`, where the
//! choice is explained), and its interval is that of the ratio B/A. With one run a side there
//! is nothing else: the samples within each run are tested as before, and the verdict says that
//! run-to-run variation is unknown and doubles the noise floor.

use serde::{Deserialize, Serialize};

use crate::error::UsageError;
use crate::model::figures::{figures, Better, Figure};
use crate::model::label::{self, printable};
use crate::model::RunResult;
use crate::stats::{log_ratio_test, welch_test, Summary};

/// The test behind verdicts on per-run figures, named in the output.
pub const RUNS_TEST: &str =
    "Welch's t-test on the logarithms of the per-run figures, 95% (interval: of the ratio B/A)";
/// The test behind verdicts on per-host figures.
pub const HOSTS_TEST: &str =
    "Welch's t-test on the logarithms of the per-host figures (each host's geometric mean over its runs), 95% (interval: of the ratio B/A)";
/// The test behind verdicts on samples within one run a side.
pub const WITHIN_RUN_TEST: &str =
    "Welch's two-sample t-test on the samples within each run, 95% (interval: of the change of the mean)";

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
}

/// Where a compared result came from, and its identity.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Side {
    /// "result 3" or a file name.
    pub source: String,
    pub hostname: String,
    pub started_at: String,
    pub tool_version: String,
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
        hostname: printable(&r.environment.host.hostname, label::MAX_HOST_LABEL),
        started_at: r.started_at.format("%Y-%m-%d %H:%M:%S UTC").to_string(),
        tool_version: r.tool_version.clone(),
        runs: runs.len(),
        hosts: by_host(runs).len(),
    }
}

/// The runs of a side by host (its --host-label, else its hostname), hosts in order of their
/// first run.
fn by_host(runs: &[RunResult]) -> Vec<Vec<usize>> {
    let mut hosts: Vec<(String, Vec<usize>)> = Vec::new();
    for (i, r) in runs.iter().enumerate() {
        let name = r
            .host_label
            .clone()
            .unwrap_or_else(|| r.environment.host.hostname.clone());
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
fn notes(a: &RunResult, b: &RunResult) -> Vec<String> {
    let (ea, eb) = (&a.environment, &b.environment);
    let mut notes = Vec::new();
    let mut differ = |what: &str, x: String, y: String| {
        if x != y {
            notes.push(format!("different {what}: {x} vs {y}"));
        }
    };
    let host = |e: &crate::model::Environment| printable(&e.host.hostname, label::MAX_HOST_LABEL);
    differ("hosts", host(ea), host(eb));
    differ(
        "kernels",
        ea.host.kernel_release.clone(),
        eb.host.kernel_release.clone(),
    );
    differ(
        "CPU models",
        ea.host.cpu_model.clone(),
        eb.host.cpu_model.clone(),
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
        a.tool_version.clone(),
        b.tool_version.clone(),
    );
    differ("compilers", ea.compiler.clone(), eb.compiler.clone());
    // UnixBench's scores depend on the language its tests run under (sort, grep, the shell).
    let language = |r: &RunResult| {
        r.suites.iter().find_map(|s| match s {
            crate::model::SuiteResult::Index(i) => Some(i.language.clone()),
            _ => None,
        })
    };
    if let (Some(la), Some(lb)) = (language(a), language(b)) {
        if la != lb {
            notes.push(format!(
                "different language settings for the index tests: {la} vs {lb}"
            ));
        }
    }
    for (name, r) in [("A", a), ("B", b)] {
        if r.incomplete {
            notes.push(format!("{name} is incomplete (the run was stopped)"));
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
    floor: Option<f64>,
) -> Verdict {
    if !significant {
        Verdict::NoSignificantDifference
    } else if floor.is_some_and(|f| change_pct.abs() <= f) {
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

/// A figure judged on its per-run values (`va`, `vb`: one per run that has it).
fn runs_row(fa: &Figure, va: &[f64], vb: &[f64], floor: Option<f64>) -> Row {
    let base = |a: f64, b: f64, change_pct: f64| Row {
        key: fa.key.clone(),
        suite: fa.suite.clone(),
        name: fa.name.clone(),
        unit: fa.unit.clone(),
        better: fa.better,
        a,
        b,
        change_pct,
        ci_pct: None,
        p_value: None,
        basis: Basis::Runs,
        samples_a: va.len(),
        samples_b: vb.len(),
        verdict: Verdict::NotTested,
        why_not_tested: None,
    };
    let positive = va.iter().chain(vb).all(|x| x.is_finite() && *x > 0.0);
    if !positive {
        // A figure that can be zero (deadlines missed, an overrun) has no ratio: the difference
        // of its means, in percent of A's.
        let mean = |v: &[f64]| Summary::of(v).map_or(0.0, |s| s.mean);
        let (ma, mb) = (mean(va), mean(vb));
        let change = if ma != 0.0 {
            (mb - ma) / ma.abs() * 100.0
        } else {
            0.0
        };
        let mut r = base(ma, mb, change);
        match welch_test(va, vb) {
            Some(t) => {
                r.p_value = Some(t.p_value);
                r.ci_pct = (ma != 0.0)
                    .then(|| [t.ci_low / ma.abs() * 100.0, t.ci_high / ma.abs() * 100.0]);
                r.verdict = verdict(
                    t.significant(),
                    change,
                    t.difference > 0.0,
                    fa.better,
                    floor,
                );
            }
            None => {
                r.why_not_tested = Some("fewer than two runs on a side".into());
            }
        }
        return r;
    }
    let (ga, gb) = (geometric_mean(va), geometric_mean(vb));
    let mut r = base(ga, gb, (gb / ga - 1.0) * 100.0);
    match log_ratio_test(va, vb) {
        Some(t) => {
            r.p_value = Some(t.p_value);
            r.ci_pct = Some([(t.ci_low - 1.0) * 100.0, (t.ci_high - 1.0) * 100.0]);
            r.verdict = verdict(
                t.significant(),
                r.change_pct,
                t.ratio > 1.0,
                fa.better,
                floor,
            );
        }
        None => r.why_not_tested = Some("fewer than two runs on a side".into()),
    }
    r
}

fn row(a: &Figure, b: &Figure, floor: Option<f64>) -> Row {
    let change_pct = if a.value != 0.0 {
        (b.value - a.value) / a.value * 100.0
    } else {
        0.0
    };
    let test = welch_test(&a.samples, &b.samples);
    let why_not_tested = match (&test, a.samples.is_empty() && b.samples.is_empty()) {
        (Some(_), _) => None,
        (None, true) => Some(format!("{}: no samples", a.sample_kind)),
        (None, false) => Some("fewer than two samples on a side".to_string()),
    };
    let mean_a = Summary::of(&a.samples).map_or(a.value, |s| s.mean);
    let verdict = match &test {
        None => Verdict::NotTested,
        Some(t) => verdict(
            t.significant(),
            change_pct,
            t.difference > 0.0,
            a.better,
            floor,
        ),
    };
    Row {
        key: a.key.clone(),
        suite: a.suite.clone(),
        name: a.name.clone(),
        unit: a.unit.clone(),
        better: a.better,
        a: a.value,
        b: b.value,
        change_pct,
        ci_pct: test
            .filter(|_| mean_a != 0.0)
            .map(|t| [t.ci_low / mean_a * 100.0, t.ci_high / mean_a * 100.0]),
        p_value: test.map(|t| t.p_value),
        basis: Basis::WithinRun,
        samples_a: a.samples.len(),
        samples_b: b.samples.len(),
        verdict,
        why_not_tested,
    }
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
    )
}

/// Compares two sides of one or more runs each (the runs of a `--repeat`, or results listed
/// as `A1,A2,A3`). With more than one run between them, every figure is judged on its per-run
/// values; with one run a side, on the samples within the runs.
pub fn compare_runs(
    a_source: &str,
    a: &[RunResult],
    b_source: &str,
    b: &[RunResult],
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
    let floor = match basis {
        Basis::Runs | Basis::Hosts => measured_floor,
        Basis::WithinRun => measured_floor.map(|f| 2.0 * f),
    };
    let each_run = |runs: &[Vec<Figure>], key: &str| -> Vec<Option<f64>> {
        runs.iter()
            .map(|figs| figs.iter().find(|f| f.key == key).map(|f| f.value))
            .collect()
    };
    let values = |runs: &[Vec<Figure>], key: &str| -> Vec<f64> {
        each_run(runs, key).into_iter().flatten().collect()
    };
    let rows: Vec<Row> = fa[0]
        .iter()
        .filter_map(|first| {
            let other = fb[0].iter().find(|f| f.key == first.key)?;
            Some(match basis {
                Basis::Runs => runs_row(
                    first,
                    &values(&fa, &first.key),
                    &values(&fb, &first.key),
                    floor,
                ),
                Basis::WithinRun => row(first, other, floor),
                Basis::Hosts => Row {
                    basis: Basis::Hosts,
                    ..runs_row(
                        first,
                        &per_host(&each_run(&fa, &first.key), &hosts_a),
                        &per_host(&each_run(&fb, &first.key), &hosts_b),
                        floor,
                    )
                },
            })
        })
        .collect();
    if rows.is_empty() {
        return Err(UsageError::new(format!(
            "{a_source} ({}) and {b_source} ({}) share no measurement to compare",
            a[0].suite_names(),
            b[0].suite_names()
        )));
    }
    let mut notes = notes(&a[0], &b[0]);
    for (name, side) in [("A", a), ("B", b)] {
        for r in &side[1..] {
            for n in self::notes(&side[0], r) {
                let n = format!("within {name}: {n}");
                if !notes.contains(&n) {
                    notes.push(n);
                }
            }
        }
    }
    notes.extend(noise_notes([("A", a), ("B", b)]));
    if basis == Basis::Hosts {
        notes.push(format!(
            "the sides span hosts (A: {} on {}, B: {} on {}): each host's runs count as one figure, their geometric mean, so the verdicts are of hosts; a side on one host has one figure, too few to test",
            plural(a.len(), "run"),
            plural(hosts_a.len(), "host"),
            plural(b.len(), "run"),
            plural(hosts_b.len(), "host")
        ));
    }
    if basis == Basis::WithinRun {
        notes.push(match measured_floor {
            Some(f) => format!(
                "one run a side: run-to-run variation is unknown, so the verdicts rest on the samples within each run and the noise floor is doubled (±{f:.1}% → ±{:.1}%); repeat the runs (--repeat N, or list results A1,A2,A3) to judge on per-run figures",
                2.0 * f
            ),
            None => "one run a side: run-to-run variation is unknown and the host's noise was not measured in both, so a verdict may call a difference between two runs a change; repeat the runs (--repeat N, or list results A1,A2,A3) to judge on per-run figures".into(),
        });
    }
    Ok(Comparison {
        test: match basis {
            Basis::Runs => RUNS_TEST,
            Basis::Hosts => HOSTS_TEST,
            Basis::WithinRun => WITHIN_RUN_TEST,
        }
        .into(),
        basis,
        a: side(a_source, a),
        b: side(b_source, b),
        noise_floor_pct: floor,
        notes,
        rows,
    })
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
        assert_eq!(row(&a, &b, Some(25.0)).verdict, Verdict::WithinNoise);
        assert_eq!(row(&a, &b, Some(5.0)).verdict, Verdict::Better);
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
}

#[cfg(test)]
mod host_tests {
    use super::*;
    use crate::model::noise::{summarize, NoiseMode, NoiseResult, NoiseRun, NoiseSettings};
    use crate::model::{Environment, SuiteResult};

    /// A noise result of host `host` whose job's mean run time is about `ms`.
    fn run_on(host: &str, ms: f64) -> RunResult {
        let runs: Vec<NoiseRun> = [0.999, 1.0, 1.001]
            .iter()
            .map(|f| NoiseRun {
                time_ns: (ms * f * 1e6) as u64,
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
                    runs_requested: 3,
                },
                calibration: None,
                summary: summarize(&runs, 1000),
                runs,
            }),
        );
        r.host_label = Some(host.into());
        r
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
        let c = compare_runs("A", &a, "B", &b).unwrap();
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
        let c = compare_runs("A", &relabel(&a, "x"), "B", &relabel(&b, "y")).unwrap();
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
        let c = compare_runs("A", &a, "B", &b).unwrap();
        assert_eq!((c.rows[0].samples_a, c.rows[0].samples_b), (3, 3));
        assert_eq!(c.rows[0].verdict, Verdict::Worse, "{:?}", c.rows[0]);
        assert!((c.rows[0].change_pct - 10.0).abs() < 1.0);
    }
}
