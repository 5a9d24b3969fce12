//! The p1bench report, line for line, followed by what hostbench adds (the confidence interval
//! of the mean, the calibration's stability and a verdict).

use std::fmt::Write;

use crate::model::account::{self, Account};

use crate::calibration::{CalibrationSource, RateMeasurement};
use crate::model::noise::bins::{bar_len, BUCKETS};
use crate::model::noise::{
    NoiseCalibration, NoiseLevel, NoiseMode, NoiseResult, NoiseRun, NoiseSettings,
};
use crate::model::{RunResult, SuiteResult};

use crate::render::labelled::suites;
use crate::render::svg::{bar_chart, esc, BarRow};
use crate::units::ms;

/// How a rate was measured: its timings, their spread, and how much of the time the thread
/// did not run.
fn rate_detail(m: &RateMeasurement) -> String {
    format!(
        "median of {} timings in thread CPU time, ±{:.2}% MAD; not running {:.1}% of the wall time",
        m.samples,
        m.mad_pct,
        (100.0 * (1.0 - m.wall_per_ms / m.per_ms)).max(0.0)
    )
}

/// "Calibrating for 100 ms..." — printed before calibration starts.
pub fn calibrating_line(settings: &NoiseSettings) -> String {
    match settings.mode {
        NoiseMode::Cpu => format!("Calibrating for {} ms...", settings.target_ms),
        NoiseMode::Memory { working_set_mb } => format!(
            "Allocating {working_set_mb} Mbytes...\nCalibrating for {} ms...",
            settings.target_ms
        ),
    }
}

/// " (target iteration count: N)", completing the calibrating line.
pub fn calibrated_line(cal: &NoiseCalibration) -> String {
    format!(" (target iteration count: {})", cal.iterations)
}

/// One sentence on where the iteration count came from and how stable the timings were.
pub fn calibration_detail(cal: &NoiseCalibration) -> String {
    if let Some(p) = &cal.p1bench {
        let ms = |ns: &u64| format!("{:.2}", *ns as f64 / 1e6);
        let runs: Vec<String> = p.runs_ns.iter().map(ms).collect();
        return format!(
            "Calibration: p1bench's rule: {} iterations in a {:.0} ms test run, timed {} times ({} ms), scaled so that the fastest takes {:.0} ms: {} iterations.",
            p.test_count,
            p.test_ms,
            p.runs_ns.len(),
            runs.join(", "),
            p.target_ms,
            p.iterations
        );
    }
    if cal.burn.is_none() && cal.memory_rate.is_none() && cal.target.is_none() {
        return format!(
            "Calibration: {} iterations, given with -l (loops/ms × target), not tuned.",
            cal.iterations
        );
    }
    let base = match (&cal.burn, &cal.memory_rate) {
        (Some(b), _) => match (b.source, &b.measurement) {
            (CalibrationSource::Given, _) => {
                format!("spin loop {} loops/ms (given with -l)", b.loops_per_ms)
            }
            (source, Some(m)) => format!(
                "spin loop {} loops/ms ({}; {})",
                b.loops_per_ms,
                if source == CalibrationSource::Cached {
                    "cached"
                } else {
                    "measured now"
                },
                rate_detail(m)
            ),
            (_, None) => format!("spin loop {} loops/ms", b.loops_per_ms),
        },
        (None, Some(r)) => format!("memory loop {:.0} lines/ms ({})", r.per_ms, rate_detail(r)),
        (None, None) => String::from("no starting rate"),
    };
    match &cal.target {
        Some(t) => format!(
            "Calibration: {base}; tuned over {} timed runs at the target length (spread ±{:.2}% MAD) in {:.2} s.",
            t.timed_runs,
            t.mad_pct,
            t.elapsed_ms / 1e3
        ),
        None => format!("Calibration: {base}; the count is loops/ms × target, not tuned."),
    }
}

/// p1bench's live status line. The difference is shown against the previous run (as p1bench
/// did) and against the fastest run so far.
pub fn progress_line(
    index: usize,
    planned: u64,
    run: &NoiseRun,
    previous: Option<&NoiseRun>,
    fastest_ns: u64,
) -> String {
    let vs_prev = previous.map_or(0.0, |p| {
        100.0 * (run.time_ns as f64 / p.time_ns as f64 - 1.0)
    });
    let vs_fastest = 100.0 * (run.time_ns as f64 / fastest_ns as f64 - 1.0);
    format!(
        "Run {}/{planned}, Ctrl-C to stop ({vs_prev:+.2}% diff, {vs_fastest:+.2}% vs fastest)",
        index + 1
    )
}

/// The column header of `-v`.
pub fn verbose_header() -> &'static str {
    "run time(ms) usr_time(ms) sys_time(ms) involuntary_csw diff%"
}

/// One `-v` line per run, as p1bench prints it.
pub fn verbose_line(index: usize, run: &NoiseRun, previous: Option<&NoiseRun>) -> String {
    let diff = previous.map_or_else(
        || "-".to_string(),
        |p| {
            format!(
                "{:.1}",
                100.0 * (run.time_ns as f64 / p.time_ns as f64 - 1.0)
            )
        },
    );
    format!(
        "{} {:.2} {:.1} {:.1} {} {diff}",
        index + 1,
        ms(run.time_ns as f64),
        ms(run.user_ns as f64),
        ms(run.sys_ns as f64),
        run.involuntary_csw
    )
}

/// `run`'s summary line of a noise part.
pub fn noise_line(n: &NoiseResult) -> String {
    format!(
        "Noise: {}",
        crate::render::noise::verdict_line(n).trim_start_matches("Verdict: ")
    )
}

/// A noise part: the job, its spread and its median.
pub fn headline(n: &NoiseResult) -> String {
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
            ms(s.median_ns as f64)
        ),
        None => format!("{what}: no runs"),
    }
}

impl super::SuiteView for NoiseResult {
    fn report(&self, _run: &RunResult) -> String {
        report(self)
    }

    fn headline(&self) -> String {
        headline(self)
    }

    fn summary_line(&self) -> String {
        noise_line(self)
    }
}

/// The report of a finished (or stopped) noise run.
pub fn report(result: &NoiseResult) -> String {
    let mut out = String::new();
    let settings = &result.settings;
    let Some(s) = &result.summary else {
        let _ = writeln!(out, "No run completed: nothing to report.");
        return out;
    };
    if (s.runs as u64) < settings.runs_requested {
        let _ = writeln!(
            out,
            "Stopped after {} of {} runs: the result is marked incomplete.",
            s.runs, settings.runs_requested
        );
    }
    let what = match settings.mode {
        NoiseMode::Cpu => String::new(),
        NoiseMode::Memory { working_set_mb } => {
            format!(" (memory read loop, {working_set_mb} Mbyte working set)")
        }
    };
    let _ = writeln!(
        out,
        "\nPerturbation percent by count for {} ms runs{what}:",
        settings.target_ms
    );
    let _ = writeln!(
        out,
        "{:>9}  {:>6} {:>7} Histogram",
        "Slower%", "Count", "Count%"
    );
    let max_count = s.histogram.iter().map(|b| b.count).max().unwrap_or(0);
    for (i, bin) in s.histogram.iter().enumerate() {
        let line = format!(
            "{:8.1}%{} {:6} {:6.2}% {}",
            bin.low_pct,
            if i == BUCKETS - 1 { "+" } else { ":" },
            bin.count,
            100.0 * bin.count as f64 / s.runs as f64,
            "*".repeat(bar_len(bin.count, max_count))
        );
        let _ = writeln!(out, "{}", line.trim_end());
    }

    let pcts: Vec<String> = s
        .percentiles
        .iter()
        .map(|p| format!("{}th: {:.3}%", p.percentile, p.slower_pct))
        .collect();
    let _ = writeln!(out, "\nPercentiles: {}", pcts.join(", "));
    let _ = writeln!(
        out,
        "Fastest: {:.3} ms, 50th: {:.3} ms, mean: {:.3} ms, slowest: {:.3} ms",
        ms(s.fastest_ns as f64),
        ms(s.median_ns as f64),
        ms(s.mean_ns),
        ms(s.slowest_ns as f64)
    );
    let _ = writeln!(
        out,
        "Fastest rate: {:.0}/s, 50th: {:.0}/s, mean: {:.0}/s, slowest: {:.0}/s",
        s.rate_fastest, s.rate_median, s.rate_mean, s.rate_slowest
    );

    // What hostbench adds.
    let ci = s
        .mean_ci95_ns
        .map(|ci| {
            format!(
                ", 95% CI of the mean {:.3}–{:.3} ms",
                ms(ci.low),
                ms(ci.high)
            )
        })
        .unwrap_or_default();
    let _ = writeln!(
        out,
        "SD: {:.3} ms (CV {:.2}%){ci}; median {:+.2}% against the {} ms target",
        ms(s.sd_ns),
        s.cv_pct,
        100.0 * (s.median_ns as f64 / (settings.target_ms as f64 * 1e6) - 1.0),
        settings.target_ms
    );
    if let Some(cal) = &result.calibration {
        let _ = writeln!(out, "{}", calibration_detail(cal));
    }
    let _ = writeln!(out, "{}", verdict_line(result));
    if let Some(line) = slowest_line(result) {
        let _ = writeln!(out, "{line}");
    }
    out
}

/// What the host's accounts show of the slowest tenth of the runs (at least one) against the
/// others': the items that set them apart, largest first. None without accounts (results
/// stored before hostbench kept them) or with fewer than four runs.
pub fn slowest_line(result: &NoiseResult) -> Option<String> {
    let mut runs: Vec<&NoiseRun> = result.runs.iter().filter(|r| r.account.is_some()).collect();
    if runs.len() < 4 {
        return None;
    }
    runs.sort_by_key(|r| r.time_ns);
    let slow = (runs.len() / 10).max(1);
    let (rest, slowest) = runs.split_at(runs.len() - slow);
    fn accounts<'a>(rs: &[&'a NoiseRun]) -> Vec<&'a Account> {
        rs.iter().filter_map(|r| r.account.as_deref()).collect()
    }
    let moved = account::moved(&accounts(rest), &accounts(slowest));
    let which = if slow == 1 {
        "The slowest run".to_string()
    } else {
        format!("The {slow} slowest runs")
    };
    Some(if moved.is_empty() {
        format!("{which}: the host's account shows nothing the other runs' does not (the job itself, or what the kernel does not count).")
    } else {
        let items: Vec<String> = moved.iter().map(super::account::moved_text).collect();
        format!(
            "{which}, by the host's account: {} (the other runs' median in brackets).",
            items.join(", ")
        )
    })
}

/// hostbench's one-line reading of the spread.
pub fn verdict_line(result: &NoiseResult) -> String {
    let Some(s) = &result.summary else {
        return "Verdict: no runs.".into();
    };
    let v = &s.verdict;
    let job = match result.settings.mode {
        NoiseMode::Cpu => "CPU",
        NoiseMode::Memory { .. } => "memory",
    };
    let level = match v.level {
        NoiseLevel::Quiet => "quiet",
        NoiseLevel::Moderate => "moderately noisy",
        NoiseLevel::Noisy => "noisy",
    };
    let few = if v.percentile >= 100.0 {
        " (too few runs for a lower percentile)"
    } else {
        ""
    };
    format!(
        "Verdict: {level}. p{} spread {:.2}%{few}: for a {} ms {job} benchmark on this host, differences within ±{:.1}% are noise.",
        v.percentile,
        v.spread_pct,
        result.settings.target_ms,
        (v.spread_pct * 10.0).ceil() / 10.0
    )
}

/// The noise check's line for a command's report: how noisy the host was before the suite and
/// whether its speed drifted by the end. None when the result has no check.
pub fn check_line(result: &RunResult) -> Option<String> {
    let c = result.noise_check.as_ref()?;
    let mut line = format!(
        "Noise check: a {} ms CPU job timed {} times: p90 {:.2}% slower than the fastest",
        c.job_ms,
        c.before.times_ns.len(),
        c.before.spread_pct
    );
    match (&c.after, &c.drift) {
        (Some(_), Some(d)) => {
            let _ = write!(
                line,
                "; at the end {:+.1}% [{:+.1}, {:+.1}]: {}.",
                d.change_pct,
                d.ci_pct[0],
                d.ci_pct[1],
                if d.drifted {
                    "the host's speed drifted during the run"
                } else {
                    "no drift"
                }
            );
        }
        _ => line.push_str("; not checked again at the end (the run was stopped)."),
    }
    line.push('\n');
    Some(line)
}

/// Its section of `report`'s HTML page: the noise runs across `results`.
pub fn report_section(out: &mut String, results: &[(String, RunResult)]) {
    let all = suites(results, |s| match s {
        SuiteResult::Noise(n) => Some(n),
        _ => None,
    });
    if all.is_empty() {
        return;
    }
    out.push_str("<h2>noise (p1bench)</h2><p>How many runs of the fixed job were how much slower than the fastest run.</p>");
    for (label, n) in &all {
        let Some(s) = &n.summary else { continue };
        let rows: Vec<BarRow> = s
            .histogram
            .iter()
            .map(|b| BarRow {
                label: format!("{:.1}% slower", b.low_pct),
                values: vec![Some(b.count as f64)],
            })
            .collect();
        out.push_str(&bar_chart(
            "noise",
            &format!("{label}: {}", headline(n)),
            "runs",
            &[label.to_string()],
            &rows,
            None,
        ));
        out.push_str(&format!(
            "<p>{}</p>",
            esc(&crate::render::noise::verdict_line(n))
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::noise::{summarize, NoiseSettings};

    #[test]
    fn report_has_p1bench_lines_and_verdict() {
        let runs: Vec<NoiseRun> = [100.0, 100.5, 101.0, 102.0, 100.2]
            .iter()
            .map(|&ms| NoiseRun {
                time_ns: (ms * 1e6) as u64,
                ..NoiseRun::default()
            })
            .collect();
        let summary = summarize(&runs, 1000);
        let result = NoiseResult {
            settings: NoiseSettings {
                mode: NoiseMode::Cpu,
                target_ms: 100,
                runs_requested: 10,
            },
            calibration: None,
            runs,
            summary,
        };
        let text = report(&result);
        assert!(text.contains("Stopped after 5 of 10 runs"));
        assert!(text.contains("Perturbation percent by count for 100 ms runs:"));
        assert!(text.contains("  Slower%   Count  Count% Histogram"));
        // Slower%: 0.0, 0.2, 0.5, 1.0, 2.0 — one run per bin, so every bar is full.
        let stars = "*".repeat(50);
        assert!(text.contains(&format!("     0.0%:      1  20.00% {stars}\n")));
        assert!(text.contains("     0.1%:      0   0.00%\n"));
        assert!(text.contains(&format!("     2.0%:      1  20.00% {stars}\n")));
        assert!(!text.contains("     3.0%:"));
        // p1bench's 50th of five: sorted[5 * 50 / 100 - 1], the second (100.2 ms).
        assert!(text.contains("Percentiles: 50th: 0.200%, 100th: 2.000%"));
        assert!(text.contains("Fastest: 100.000 ms, 50th: 100.200 ms"));
        assert!(text.contains(
            "Verdict: moderately noisy. p100 spread 2.00% (too few runs for a lower percentile)"
        ));
    }

    #[test]
    fn verbose_and_progress_lines() {
        let a = NoiseRun {
            time_ns: 100_000_000,
            user_ns: 99_000_000,
            sys_ns: 1_000_000,
            voluntary_csw: 0,
            involuntary_csw: 3,
            account: None,
        };
        let b = NoiseRun {
            time_ns: 101_000_000,
            ..a.clone()
        };
        assert_eq!(verbose_line(0, &a, None), "1 100.00 99.0 1.0 3 -");
        assert_eq!(verbose_line(1, &b, Some(&a)), "2 101.00 99.0 1.0 3 1.0");
        assert_eq!(
            progress_line(1, 100, &b, Some(&a), a.time_ns),
            "Run 2/100, Ctrl-C to stop (+1.00% diff, +1.00% vs fastest)"
        );
    }
}
