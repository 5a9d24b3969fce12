//! The one-line headline of a result: what `results list` shows (the store keeps it in a
//! column of its own). Each suite's part of it is its renderer's (`SuiteView::headline`).
//! Rendered here, from the model; never stored in it.

use crate::model::{RunResult, SuiteResult};

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::noise::{summarize, NoiseMode, NoiseResult, NoiseRun, NoiseSettings};
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
