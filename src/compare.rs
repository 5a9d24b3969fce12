//! `hostbench compare`: pairs the figures two results share and says, from their samples,
//! which differences are real.

use serde::{Deserialize, Serialize};

use crate::error::UsageError;
use crate::model::figures::{figures, Better, Figure};
use crate::model::RunResult;
use crate::stats::welch_test;

/// The test behind every verdict, named in the output.
pub const TEST_NAME: &str = "Welch's two-sample t-test, 95%";

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
    /// (B − A) / A, percent.
    pub change_pct: f64,
    /// 95% confidence interval of the change of the samples' mean, percent of A's mean.
    pub ci_pct: Option<[f64; 2]>,
    pub p_value: Option<f64>,
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
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    pub test: String,
    pub a: Side,
    pub b: Side,
    /// The larger run-to-run spread (percent) the two results' noise parts measured, when both
    /// have one: significant changes no larger than this are "within the host's noise".
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

fn side(source: &str, r: &RunResult) -> Side {
    Side {
        source: source.to_string(),
        hostname: r.environment.hostname.clone(),
        started_at: r.started_at.format("%Y-%m-%d %H:%M:%S UTC").to_string(),
        tool_version: r.tool_version.clone(),
    }
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
    differ("hosts", ea.hostname.clone(), eb.hostname.clone());
    differ(
        "kernels",
        ea.kernel_release.clone(),
        eb.kernel_release.clone(),
    );
    differ("CPU models", ea.cpu_model.clone(), eb.cpu_model.clone());
    differ(
        "CPU counts",
        format!("{} online, {} allowed", ea.cpus_online, ea.cpus_allowed),
        format!("{} online, {} allowed", eb.cpus_online, eb.cpus_allowed),
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

/// The p-spread of a result's noise part ("differences within ±X% are noise"), if it has one.
fn noise_spread(r: &RunResult) -> Option<f64> {
    r.suites.iter().find_map(|s| match s {
        crate::model::SuiteResult::Noise(n) => n.summary.as_ref().map(|s| s.verdict.spread_pct),
        _ => None,
    })
}

/// The noise floor of a comparison: the larger of the two results' noise spreads, when both
/// measured one (a `hostbench run` does).
pub fn noise_floor(a: &RunResult, b: &RunResult) -> Option<f64> {
    Some(noise_spread(a)?.max(noise_spread(b)?))
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
    let mean_a = if a.samples.is_empty() {
        a.value
    } else {
        a.samples.iter().sum::<f64>() / a.samples.len() as f64
    };
    let verdict = match &test {
        None => Verdict::NotTested,
        Some(t) if !t.significant() => Verdict::NoSignificantDifference,
        Some(_) if floor.is_some_and(|f| change_pct.abs() <= f) => Verdict::WithinNoise,
        Some(t) => match (t.difference > 0.0, a.better) {
            (true, Better::Higher) | (false, Better::Lower) => Verdict::Better,
            _ => Verdict::Worse,
        },
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
    let fb = figures(b);
    let floor = noise_floor(a, b);
    let rows: Vec<Row> = figures(a)
        .iter()
        .filter_map(|fa| {
            fb.iter()
                .find(|f| f.key == fa.key)
                .map(|f| row(fa, f, floor))
        })
        .collect();
    if rows.is_empty() {
        return Err(UsageError::new(format!(
            "{a_source} ({}) and {b_source} ({}) share no measurement to compare",
            a.suite_names(),
            b.suite_names()
        )));
    }
    Ok(Comparison {
        test: TEST_NAME.into(),
        a: side(a_source, a),
        b: side(b_source, b),
        noise_floor_pct: floor,
        notes: notes(a, b),
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
