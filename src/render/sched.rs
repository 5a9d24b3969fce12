//! reflex's outputs: `-o 0` for people, `-o 1` one line per run, `-o 2` one `c, a, us/round` line
//! per point as in reflex's sample (`80, 40, 50.65`); and a table for a sweep.

use std::fmt::Write;

use crate::model::sched::confidence::Verdict;
use crate::model::sched::SchedRun;
use crate::model::sched::{Order, SchedPoint, SchedResult, SchedSettings};
use crate::model::{RunResult, SuiteResult};
use crate::render::labelled::suites;
use crate::render::svg::{line_chart, Series, XScale};
use crate::units;

/// `-o 1`: one line per run.
pub fn run_line_o1(threads: usize, active_sets: usize, index: usize, run: &SchedRun) -> String {
    format!(
        "{threads}, {active_sets}, {}, {:.2}",
        index + 1,
        run.us_per_round
    )
}

/// `-o 2`: reflex's sample format.
pub fn point_line_o2(p: &SchedPoint) -> String {
    format!(
        "{}, {}, {:.2}",
        p.threads, p.active_sets, p.mean_us_per_round
    )
}

/// `-o 0`: a run as it completes.
pub fn run_line_human(threads: usize, active_sets: usize, index: usize, run: &SchedRun) -> String {
    let rounds = run.total_rounds.max(1) as f64;
    format!(
        "c={threads} a={active_sets} run {}: {:.2} us/round ({} rounds, {:.0}% hand-offs, {:.0}% yields)",
        index + 1,
        run.us_per_round,
        run.total_rounds,
        100.0 * run.handoffs as f64 / rounds,
        100.0 * run.yields as f64 / rounds
    )
}

/// `-o 0`: what a point adds up to.
pub fn point_human(p: &SchedPoint, s: &SchedSettings) -> String {
    let mut out = String::new();
    let ci = p
        .ci95
        .map(|ci| format!(" ± {:.2}% (95% CI)", ci.half_width_pct()))
        .unwrap_or_default();
    let verdict = match p.verdict {
        Some(Verdict::TargetMet) => format!("target ±{}% met", s.rule.target_pct),
        Some(Verdict::MaxRuns) => {
            format!("target ±{}% NOT met after --max-runs", s.rule.target_pct)
        }
        None => "interrupted".into(),
    };
    let _ = writeln!(
        out,
        "{} threads, {} active sets, w={}, r={} us, t={} s: {:.2} us/round{ci} over {} run{}; {verdict}",
        p.threads,
        p.active_sets,
        s.handoff_weight,
        s.compute_us,
        s.duration_s,
        p.mean_us_per_round,
        p.runs.len(),
        if p.runs.len() == 1 { "" } else { "s" }
    );
    if let Some(f) = fairness(p) {
        let _ = writeln!(out, "  {f}");
    }
    out
}

/// Rounds per thread (min / mean / max over all runs) and the context switches per second.
fn fairness(p: &SchedPoint) -> Option<String> {
    let all: Vec<u64> = p
        .runs
        .iter()
        .flat_map(|r| r.rounds_per_thread.iter().copied())
        .collect();
    let (min, max) = (*all.iter().min()?, *all.iter().max()?);
    let mean = all.iter().sum::<u64>() as f64 / all.len() as f64;
    let secs: f64 = p.runs.iter().map(|r| units::secs(r.wall_ns as f64)).sum();
    let vol: u64 = p.runs.iter().map(|r| r.voluntary_csw).sum();
    let invol: u64 = p.runs.iter().map(|r| r.involuntary_csw).sum();
    let holders = p
        .runs
        .iter()
        .map(|r| r.max_token_holders)
        .max()
        .unwrap_or(0);
    Some(format!(
        "rounds per thread per run: min {min}, mean {mean:.0}, max {max}; context switches per second: {:.0} voluntary, {:.0} involuntary; most token holders in a set: {holders}",
        vol as f64 / secs,
        invol as f64 / secs
    ))
}

/// The sweep's table.
pub fn sweep_table(r: &SchedResult) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\n{:>7} {:>7} {:>10} {:>8} {:>5}  {:<8} {:>24}",
        "threads", "active", "us/round", "±95%CI", "runs", "target", "rounds/thread min-max"
    );
    for p in &r.points {
        let all = p
            .runs
            .iter()
            .flat_map(|r| r.rounds_per_thread.iter().copied());
        let (min, max) = all.fold((u64::MAX, 0), |(lo, hi), n| (lo.min(n), hi.max(n)));
        let _ = writeln!(
            out,
            "{:>7} {:>7} {:>10.2} {:>7.2}% {:>5}  {:<8} {:>24}",
            p.threads,
            p.active_sets,
            p.mean_us_per_round,
            p.ci95.map_or(0.0, |c| c.half_width_pct()),
            p.runs.len(),
            match p.verdict {
                Some(Verdict::TargetMet) => "met",
                Some(Verdict::MaxRuns) => "not met",
                None => "stopped",
            },
            if p.runs.is_empty() {
                "-".to_string()
            } else {
                format!("{min}-{max}")
            }
        );
    }
    out
}

/// `run`'s summary line of a sched part.
pub fn sched_line(s: &SchedResult) -> String {
    let points: Vec<String> = s
        .points
        .iter()
        .filter(|p| !p.runs.is_empty())
        .map(|p| format!("{} threads {:.2}", p.threads, p.mean_us_per_round))
        .collect();
    let pinned = if s.settings.pin { ", pinned" } else { "" };
    format!("Scheduler{pinned}, us/round: {}", points.join(", "))
}

/// A sched part: its point, or its sweep's range.
pub fn headline(s: &SchedResult) -> String {
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

impl super::SuiteView for SchedResult {
    fn report(&self, _run: &crate::model::RunResult) -> String {
        report(self)
    }

    fn headline(&self) -> String {
        headline(self)
    }

    fn summary_line(&self) -> String {
        sched_line(self)
    }
}

/// The full report of a stored result.
pub fn report(r: &SchedResult) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "reflex: w={} r={} us t={} s, loops_per_ms {}, placement {}{}",
        r.settings.handoff_weight,
        r.settings.compute_us,
        r.settings.duration_s,
        r.calibration.loops_per_ms,
        placement(&r.settings),
        match r.settings.order {
            Order::Blocks => "",
            Order::Rounds => ", points in rounds",
        }
    );
    for line in super::calibration::lines(&r.calibration) {
        let _ = writeln!(out, "{line}");
    }
    for p in &r.points {
        out.push_str(&point_human(p, &r.settings));
    }
    if r.points.len() > 1 {
        out.push_str(&sweep_table(r));
    }
    out
}

pub fn placement(s: &SchedSettings) -> &'static str {
    if s.pin {
        "pinned (each active set on one CPU)"
    } else {
        "free (not pinned)"
    }
}

/// Its section of `report`'s HTML page: the sched sweep across `results`.
pub fn report_section(out: &mut String, results: &[(String, RunResult)]) {
    let all = suites(results, |s| match s {
        SuiteResult::Sched(x) => Some(x),
        _ => None,
    });
    if all.is_empty() {
        return;
    }
    out.push_str("<h2>sched (reflex)</h2><p>Scheduler cost per round against the number of threads (log scale); lower is better.</p>");
    let series: Vec<Series> = all
        .iter()
        .map(|(l, s)| Series {
            name: l.to_string(),
            points: s
                .points
                .iter()
                .filter(|p| !p.runs.is_empty())
                .map(|p| (p.threads as f64, p.mean_us_per_round))
                .collect(),
        })
        .collect();
    out.push_str(&line_chart(
        "sched",
        "Cost per round against threads",
        "threads",
        "us per round",
        &series,
        XScale::Log2,
    ));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::sched::confidence::ConfidenceRule;

    fn run(us: f64) -> SchedRun {
        SchedRun {
            wall_ns: 1_000_000_000,
            total_rounds: 100,
            us_per_round: us,
            rounds_per_thread: vec![40, 60],
            yields: 10,
            handoffs: 90,
            voluntary_csw: 1000,
            involuntary_csw: 10,
            max_token_holders: 1,
            account: None,
        }
    }

    #[test]
    fn machine_formats() {
        let p = SchedPoint {
            threads: 80,
            active_sets: 40,
            runs: vec![run(50.65)],
            mean_us_per_round: 50.65,
            sd_us_per_round: 0.0,
            ci95: None,
            verdict: Some(Verdict::MaxRuns),
        };
        assert_eq!(point_line_o2(&p), "80, 40, 50.65");
        assert_eq!(run_line_o1(80, 40, 0, &run(50.651)), "80, 40, 1, 50.65");
        let s = SchedSettings {
            handoff_weight: 90,
            compute_us: 1,
            duration_s: 40,
            rule: ConfidenceRule {
                target_pct: 5.0,
                min_runs: 3,
                max_runs: 1,
            },
            pin: false,
            points: vec![(80, 40)],
            order: Order::Blocks,
        };
        let h = point_human(&p, &s);
        assert!(h.contains("80 threads, 40 active sets, w=90, r=1 us, t=40 s: 50.65 us/round over 1 run; target ±5% NOT met"), "{h}");
        assert!(h.contains("min 40, mean 50, max 60"), "{h}");
    }
}
