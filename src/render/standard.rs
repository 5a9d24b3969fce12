//! `hostbench run`: the plan shown before it starts and the summary at its end.

use crate::compare::{HostSpread, RepeatAdvice};
use crate::model::label::printable;
use crate::model::part::PartPlan;
use crate::model::RunResult;
use crate::stats::{Grain, RunBound};

/// "45 s", "3 min 05 s", "1 h 02 min".
pub fn duration(seconds: f64) -> String {
    let s = seconds.max(0.0).round() as u64;
    match s {
        0..=59 => format!("{s} s"),
        60..=3599 => format!("{} min {:02} s", s / 60, s % 60),
        _ => format!("{} h {:02} min", s / 3600, s % 3600 / 60),
    }
}

/// The plan: one line a part, and the total.
pub fn plan(profile: &str, cpus: usize, parts: &[PartPlan], skipped: &[String]) -> String {
    let total: f64 = parts.iter().map(|p| p.estimate_s).sum();
    let mut out = format!(
        "hostbench run, profile {profile}: {} parts, about {} on this host ({cpus} usable CPU{})\n",
        parts.len(),
        duration(total),
        if cpus == 1 { "" } else { "s" }
    );
    for (i, p) in parts.iter().enumerate() {
        out.push_str(&format!(
            "  {}. {:<12} {:<60} about {}\n",
            i + 1,
            p.suite,
            p.measures,
            duration(p.estimate_s)
        ));
    }
    for s in skipped {
        out.push_str(&format!("  skipped: {s}\n"));
    }
    out
}

/// The plan as JSON (`--json run --dry-run`): the profile, the usable CPUs, the estimate, and
/// each part with its suite, what it measures and its estimate, and what is skipped.
pub fn plan_json(profile: &str, cpus: usize, parts: &[PartPlan], skipped: &[String]) -> String {
    let total: f64 = parts.iter().map(|p| p.estimate_s).sum();
    serde_json::json!({
        "profile": profile,
        "usable_cpus": cpus,
        "estimate_s": total,
        "parts": parts
            .iter()
            .map(|p| serde_json::json!({
                "suite": p.suite,
                "measures": p.measures,
                "estimate_s": p.estimate_s,
            }))
            .collect::<Vec<_>>(),
        "skipped": skipped,
    })
    .to_string()
}

/// The line shown when a part starts.
pub fn part_line(index: usize, count: usize, part: &PartPlan) -> String {
    format!(
        "[{}/{count}] {}: {}, about {}",
        index + 1,
        part.suite,
        part.measures,
        duration(part.estimate_s)
    )
}

/// What failed in the suites (index tests, with their errors), from their results.
pub fn failed_in(result: &RunResult) -> Vec<String> {
    result
        .suites
        .iter()
        .flat_map(|s| super::view(s).failed())
        .collect()
}

/// What the suites left out on this host, from their results.
pub fn skipped_in(result: &RunResult) -> Vec<String> {
    result
        .suites
        .iter()
        .flat_map(|s| super::view(s).skipped())
        .collect()
}

/// The end of a standard run: the headline figure of each suite, what was skipped, and what to
/// do next.
pub fn summary(
    result: &RunResult,
    id: Option<i64>,
    store: &str,
    skipped: &[String],
    failure: Option<&str>,
    spread: Option<&HostSpread>,
) -> String {
    let elapsed = (result.finished_at - result.started_at).num_milliseconds() as f64 / 1e3;
    let mut out = format!(
        "\nSummary of {} ({}{}):\n",
        match id {
            Some(id) => format!("result {id}"),
            None => "the run".to_string(),
        },
        duration(elapsed),
        if result.incomplete {
            ", incomplete"
        } else {
            ""
        }
    );
    for suite in &result.suites {
        let line = super::view(suite).summary_line();
        out.push_str(&format!("  {line}\n"));
        for line in super::view(suite).summary_notes() {
            out.push_str(&format!("  {line}\n"));
        }
    }
    if let Some(line) = crate::render::noise::check_line(result) {
        out.push_str(&format!("  {line}"));
    }
    if let Some(line) = spread.and_then(|s| spread_line(result, s)) {
        out.push_str(&format!("  {line}\n"));
    }
    if let Some(a) = crate::compare::repeats_to_detect(result, 5.0) {
        out.push_str(&format!("  {}\n", repeat_advice(&a)));
    }
    for s in skipped {
        out.push_str(&format!("  Skipped: {s}\n"));
    }
    if let Some(f) = failure {
        out.push_str(&format!("  Stopped by an error in {f}\n"));
    }
    if let Some(id) = id {
        let db = store;
        out.push_str(&format!(
            "Stored as result {id} in {db}.\nReport: hostbench report {id} -o hostbench-{id}.html\nCompare with another run: hostbench compare OTHER_ID {id} (hostbench results list shows the ids)\n"
        ));
    }
    out
}

/// How much this run's figures move between runs on this host, from its earlier runs of the
/// same plan: the index scores and the three that move most, each with the 95% bound of the
/// change between two runs. None before the host has a first such run stored.
pub fn spread_line(result: &RunResult, spread: &HostSpread) -> Option<String> {
    if spread.runs == 0 {
        return None;
    }
    if spread.runs < HostSpread::MIN_RUNS {
        return Some(format!(
            "Between runs on this host: not known yet ({} earlier run{} like this one stored; from {}, each figure's run-to-run spread is shown here and used by compare of one run a side).",
            spread.runs,
            if spread.runs == 1 { "" } else { "s" },
            HostSpread::MIN_RUNS
        ));
    }
    let figures = crate::model::figures::figures(result);
    let named: Vec<(&str, RunBound)> = figures
        .iter()
        .filter_map(|f| Some((f.name.as_str(), spread.bound(f, f)?)))
        .collect();
    if named.is_empty() {
        return None;
    }
    let show = |(name, bound): &(&str, RunBound)| {
        format!(
            "{} {}",
            printable(name, 80),
            crate::render::compare::spread(*bound)
        )
    };
    // The index scores, each with the smallest change one run a side finds on this host.
    let index: Vec<String> = figures
        .iter()
        .filter(|f| f.name.starts_with("System Benchmarks Index Score"))
        .filter_map(|f| {
            let bound = spread.bound(f, f)?;
            // Net of the host's speed where the figure follows it here: what compare judges.
            let (net, found) = match spread.follows(f) {
                Some(follows) => (
                    format!(
                        ", net of the host's speed {}",
                        crate::render::compare::spread(follows.net.bound(Grain::default()))
                    ),
                    follows.net.smallest_found(Grain::default()),
                ),
                None => (String::new(), spread.smallest_found(f, f)?),
            };
            let found = RunBound {
                pct: found,
                ..bound
            };
            Some(format!(
                "{}{net} (one run a side finds {} 9 times in 10)",
                show(&(f.name.as_str(), bound)),
                crate::render::compare::spread(found).trim_start_matches('±')
            ))
        })
        .collect();
    let mut most = named.clone();
    most.sort_by(|a, b| b.1.pct.total_cmp(&a.1.pct));
    let most: Vec<String> = most.iter().take(3).map(show).collect();
    Some(format!(
        "Between runs on this host (from {} earlier runs like this one), figures move by up to: {}{}the most: {} — a change between two runs within that is the host's, not a change (compare of one run a side judges each figure so).",
        spread.runs,
        index.join(", "),
        if index.is_empty() { "" } else { "; " },
        most.join(", ")
    ))
}

/// How many `--repeat` runs `compare` needs to find a change on this host.
pub fn repeat_advice(a: &RepeatAdvice) -> String {
    let change = a.change_pct;
    if a.floor_pct >= change {
        return format!(
            "Repeats: a {change:.0}% change is within this host's noise (±{:.1}%): compare would call it within the noise however many runs it had.",
            a.floor_pct
        );
    }
    match a.runs {
        Some(n) => format!(
            "Repeats: to find a {change:.0}% change four times in five, compare needs about {n} runs a side (--repeat {n}) for figures that spread from run to run as this host's noise (±{:.1}%); the free ping-pongs and latencies spread more.",
            a.floor_pct
        ),
        None => format!(
            "Repeats: a {change:.0}% change needs over 100 runs a side to be found here (noise ±{:.1}%).",
            a.floor_pct
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::RunSpread;

    #[test]
    fn durations_read_as_people_say_them() {
        assert_eq!(duration(44.6), "45 s");
        assert_eq!(duration(185.0), "3 min 05 s");
        assert_eq!(duration(3720.0), "1 h 02 min");
        assert_eq!(duration(-3.0), "0 s");
    }

    #[test]
    fn the_repeat_advice_names_the_runs_or_the_floor() {
        let a = RepeatAdvice {
            change_pct: 5.0,
            floor_pct: 2.0,
            runs: Some(5),
        };
        assert!(repeat_advice(&a).contains("about 5 runs a side (--repeat 5)"));
        // A floor at or above the change: no number of runs helps.
        let noisy = RepeatAdvice {
            floor_pct: 7.5,
            ..a
        };
        let line = repeat_advice(&noisy);
        assert!(line.contains("within this host's noise (±7.5%)"), "{line}");
        assert!(!line.contains("--repeat"));
    }

    #[test]
    fn the_spread_line_names_the_index_and_the_figures_that_move_most() {
        let r: RunResult =
            serde_json::from_str(include_str!("../../tests/fixtures/smoke-a.json")).unwrap();
        let figures = crate::model::figures::figures(&r);
        let noisy = figures
            .iter()
            .find(|f| f.key.starts_with("sched/"))
            .unwrap();
        let spreads = figures
            .iter()
            .map(|f| {
                // A latency whose timer's lateness is many times its value moves within that
                // (×16 in this fixture): the noisy figure moves more.
                let pct = if f.key == noisy.key { 5000.0 } else { 2.0 };
                (f.key.clone(), RunSpread::bounded_at(5, pct, f.value))
            })
            .collect();
        let spread = HostSpread {
            runs: 5,
            spreads,
            ..HostSpread::default()
        };
        let line = spread_line(&r, &spread).unwrap();
        assert!(line.contains("from 5 earlier runs"), "{line}");
        assert!(
            line.contains("System Benchmarks Index Score, 1 copy, free ±2.0% (one run a side finds 2.9% 9 times in 10)"),
            "{line}"
        );
        assert!(
            line.contains(&format!("the most: {} ×1.96e-2–×51", noisy.name)),
            "{line}"
        );
        // Too few runs: said, with how many it takes; none: nothing.
        let two = HostSpread {
            runs: 2,
            ..HostSpread::default()
        };
        assert!(spread_line(&r, &two)
            .unwrap()
            .contains("not known yet (2 earlier runs"));
        assert_eq!(spread_line(&r, &HostSpread::default()), None);
    }
}
