//! The one-line headline of a result and of each suite's part of it: what `results list`
//! shows (the store keeps it in a column of its own), what `run` says as each part ends, and
//! the report's line for a noise part. Rendered here, from the model; never stored in it.

use crate::model::index::IndexResult;
use crate::model::interactive::InteractiveResult;
use crate::model::noise::{NoiseMode, NoiseResult};
use crate::model::sched::{SchedPoint, SchedResult};
use crate::model::{RunResult, SuiteResult};
use crate::units;

/// The whole result: its suites' headlines, and its place in a repeat group.
pub fn run(r: &RunResult) -> String {
    let lines: Vec<String> = r.suites.iter().map(suite).collect();
    let repeat = match r.repeat {
        Some(r) => format!(" (run {} of {} in group g{})", r.run, r.of, r.group),
        None => String::new(),
    };
    lines.join("; ") + &repeat
}

/// One short figure that characterises a suite's result.
pub fn suite(s: &SuiteResult) -> String {
    super::view(s).headline()
}

/// A noise part: the job, its spread and its median.
pub fn noise(n: &NoiseResult) -> String {
    let what = match n.settings.mode {
        NoiseMode::Cpu => format!("{} ms CPU", n.settings.target_ms),
        NoiseMode::Memory { working_set_mb } => {
            format!("{} ms mem {working_set_mb} MB", n.settings.target_ms)
        }
    };
    match &n.summary {
        Some(s) => format!(
            "{what}: p{} +{:.2}%, median {:.3} ms",
            s.verdict.percentile,
            s.verdict.spread_pct,
            units::ms(s.median_ns as f64)
        ),
        None => format!("{what}: no runs"),
    }
}

/// An index part: each pass's System Benchmarks index.
pub fn index(i: &IndexResult) -> String {
    let parts: Vec<String> = i
        .passes
        .iter()
        .map(|p| match p.system_index {
            Some(i) => format!(
                "{} cop{}: {:.1}{}",
                p.copies,
                if p.copies == 1 { "y" } else { "ies" },
                i,
                if p.indexed < p.index_tests {
                    " (partial)"
                } else {
                    ""
                }
            ),
            None => format!(
                "{} cop{}: no index",
                p.copies,
                if p.copies == 1 { "y" } else { "ies" }
            ),
        })
        .collect();
    format!("index {}", parts.join(", "))
}

/// An interactive part: its pairs and the worst for deadlines.
pub fn interactive(i: &InteractiveResult) -> String {
    match i.worst_by_deadlines() {
        Some(m) => format!(
            "{} pair{}; worst {} under {}: {:.1}% deadlines met, {:.1}% desired CPU",
            i.measurements.len(),
            if i.measurements.len() == 1 { "" } else { "s" },
            m.bench.name(),
            m.load.name(),
            m.deadlines_met_pct.unwrap_or(0.0),
            m.desired_cpu_pct
        ),
        None => format!("{} pair(s), none with deadlines", i.measurements.len()),
    }
}

/// A sched part: its point, or its sweep's range.
pub fn sched(s: &SchedResult) -> String {
    let done: Vec<&SchedPoint> = s.points.iter().filter(|p| !p.runs.is_empty()).collect();
    match done.as_slice() {
        [] => "no run completed".into(),
        [p] => format!(
            "c={} a={}: {:.2} us/round",
            p.threads, p.active_sets, p.mean_us_per_round
        ),
        many => format!(
            "sweep c={}..{}: {:.2}..{:.2} us/round",
            many[0].threads,
            many[many.len() - 1].threads,
            many.iter()
                .map(|p| p.mean_us_per_round)
                .fold(f64::INFINITY, f64::min),
            many.iter().map(|p| p.mean_us_per_round).fold(0.0, f64::max)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::noise::{summarize, NoiseRun, NoiseSettings};
    use crate::model::{Environment, Repeat};

    fn noise_result(times_ms: &[u64]) -> RunResult {
        let runs: Vec<NoiseRun> = times_ms
            .iter()
            .map(|&ms| NoiseRun {
                time_ns: ms * 1_000_000,
                ..NoiseRun::default()
            })
            .collect();
        let noise = NoiseResult {
            settings: NoiseSettings {
                mode: NoiseMode::Cpu,
                target_ms: 10,
                runs_requested: runs.len() as u64,
            },
            calibration: None,
            summary: summarize(&runs, 1000),
            runs,
        };
        RunResult::finished(
            chrono::Utc::now(),
            vec!["hostbench".into()],
            false,
            Environment::default(),
            SuiteResult::Noise(noise),
        )
    }

    #[test]
    fn a_noise_run_says_its_job_spread_and_median() {
        let r = noise_result(&[10, 10, 10, 10, 10, 10, 10, 10, 10, 11, 12]);
        let line = run(&r);
        assert!(line.starts_with("10 ms CPU: p90 +"), "{line}");
        assert!(line.ends_with("median 10.000 ms"), "{line}");
        assert_eq!(run(&noise_result(&[])), "10 ms CPU: no runs");
    }

    #[test]
    fn a_repeated_run_says_its_place_in_the_group() {
        let mut r = noise_result(&[10, 11, 12]);
        r.repeat = Some(Repeat {
            group: 2,
            run: 2,
            of: 3,
        });
        assert!(run(&r).ends_with("(run 2 of 3 in group g2)"), "{}", run(&r));
    }
}
