//! interbench's report: a table per bench, a row per load, in interbench's own format, with
//! hostbench's columns (p50, p99 and p99.9 latency, the CPU the bench process really used)
//! after interbench's.

use std::fmt::Write;

use super::cformat::g;
use crate::calibration::CalibrationSource;
use crate::suites::interactive::benches::Bench;
use crate::suites::interactive::{InteractiveResult, InteractiveSettings, Measurement};

/// interbench's opening lines.
pub fn run_header(
    settings: &InteractiveSettings,
    loops_per_ms: u64,
    kernel: &str,
    datestamp: &str,
) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Using {loops_per_ms} loops per ms, running every load for {} seconds",
        settings.duration_s
    );
    let _ = writeln!(out, "Benchmarking kernel {kernel} at datestamp {datestamp}");
    if let Some(c) = &settings.comment {
        let _ = writeln!(out, "Comment: {c}");
    }
    out
}

/// The title and column header of one bench's table.
pub fn bench_header(bench: Bench, settings: &InteractiveSettings) -> String {
    let mut title = format!("--- Benchmarking simulated cpu of {} ", bench.name());
    if settings.realtime {
        title.push_str("real time ");
    } else if settings.bench_nice != 0 {
        let _ = write!(title, "nice {} ", settings.bench_nice);
    }
    title.push_str("in the presence of simulated ");
    if settings.load_nice != 0 {
        let _ = write!(title, "nice {} ", settings.load_nice);
    }
    title.push_str("---");
    let unit = if settings.realtime { "us" } else { "ms" };
    let mut cols = format!("Load\tLatency +/- SD ({unit})  Max Latency   % Desired CPU");
    if bench != Bench::Gaming {
        cols.push_str("  % Deadlines Met");
    }
    let _ = write!(cols, "\t    p50     p99   p99.9  CPU% used");
    format!("\n{title}\n{cols}\n")
}

/// interbench's number style: no decimals from 100 up, else 3 significant digits.
fn num(x: f64) -> String {
    if x >= 100.0 {
        format!("{x:.0}")
    } else {
        g(x, 3)
    }
}

/// One row, as interbench's show_latencies printed it, then hostbench's columns.
pub fn row(m: &Measurement, realtime: bool) -> String {
    let scale = if realtime { 1e3 } else { 1e6 };
    let l = &m.latency;
    let mut s = format!(
        "{}\t{:>7} +/- {:<9}{:>7}\t\t{:>4}",
        m.load.name(),
        num(l.mean_ns / scale),
        num(l.sd_ns / scale),
        num(l.max_ns as f64 / scale),
        g(m.desired_cpu_pct, 3)
    );
    if let Some(d) = m.deadlines_met_pct {
        let _ = write!(s, "\t{:>11}", g(d, 3));
    }
    let _ = write!(
        s,
        "\t{:>7} {:>7} {:>7}  {:>5} of {}",
        num(l.p50_ns as f64 / scale),
        num(l.p99_ns as f64 / scale),
        num(l.p999_ns as f64 / scale),
        g(m.measured_cpu_pct, 3),
        g(m.asked_cpu_pct, 3)
    );
    s
}

/// What hostbench adds after the tables: how the run went and how far to trust it.
pub fn footer(r: &InteractiveResult) -> String {
    let mut out = String::new();
    let cal = &r.calibration;
    let source = match cal.source {
        CalibrationSource::Measured => "measured at the start",
        CalibrationSource::Cached => "from the calibration cache",
        CalibrationSource::Given => "given with -l",
    };
    let _ = writeln!(out, "\nloops_per_ms {} ({source}).", cal.loops_per_ms);
    if let (Some(end), Some(drift)) = (r.calibration_end, r.drift_pct()) {
        let flag = if drift.abs() > 5.0 {
            " — the CPU's speed drifted: CPU shares and deadlines are less comparable than usual"
        } else {
            ""
        };
        let _ = writeln!(
            out,
            "Re-measured after the run: {:.0} loops/ms, the CPU now {:.1}% {}{flag}.",
            end.per_ms,
            drift.abs(),
            if drift >= 0.0 { "slower" } else { "faster" }
        );
    }
    let _ = writeln!(
        out,
        "Timekeepers: {}; memory locked: {}; placement: {}.",
        if r.timekeeper_realtime {
            "SCHED_FIFO 96"
        } else {
            "SCHED_OTHER (not real-time)"
        },
        if r.measurements.iter().all(|m| m.memory_locked) {
            "yes"
        } else {
            "no"
        },
        r.settings
            .pinned_cpu
            .map_or("free (not pinned)".to_string(), |c| format!(
                "everything pinned to CPU {c} (-u)"
            ))
    );
    let tk_cpu: u64 = r
        .measurements
        .iter()
        .filter_map(|m| m.timer.map(|t| t.cpu_ns))
        .sum();
    let measured_ns: u64 = r.measurements.iter().map(|m| m.wall_ns).sum();
    let _ = writeln!(
        out,
        "Tool overhead: timekeepers {:.1} ms of CPU over {:.0} s measured; coordinator {:.1} ms over the {:.0} s run.",
        tk_cpu as f64 / 1e6,
        measured_ns as f64 / 1e9,
        r.coordinator_cpu_ns as f64 / 1e6,
        r.wall_ns as f64 / 1e9
    );
    if r.measurements.iter().any(|m| m.load.uses_files().1) {
        let _ = writeln!(out, "Read load: the file is dropped from the page cache after every pass (posix_fadvise DONTNEED).");
    }
    for s in &r.skipped {
        let _ = writeln!(out, "{} skipped: {}", s.load.name(), s.reason);
    }
    for n in &r.notes {
        let _ = writeln!(out, "Note: {n}");
    }
    if r.measurements.len() < r.planned_pairs {
        let _ = writeln!(
            out,
            "Incomplete: {} of {} pairs measured.",
            r.measurements.len(),
            r.planned_pairs
        );
    }
    out
}

/// The whole report of a stored result.
pub fn report(r: &InteractiveResult, kernel: &str, datestamp: &str) -> String {
    let mut out = run_header(&r.settings, r.calibration.loops_per_ms, kernel, datestamp);
    let mut current = None;
    for m in &r.measurements {
        if current != Some(m.bench) {
            out.push_str(&bench_header(m.bench, &r.settings));
            current = Some(m.bench);
        }
        out.push_str(&row(m, r.settings.realtime));
        out.push('\n');
    }
    out.push_str(&footer(r));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::loads::LoadReport;
    use crate::platform::sched::Policy;
    use crate::suites::interactive::benches::Load;
    use crate::suites::interactive::deadline::DeadlineCounts;
    use crate::suites::interactive::sim::LatencySummary;

    fn measurement(bench: Bench) -> Measurement {
        Measurement {
            bench,
            load: Load::Burn,
            wall_ns: 1_000_000_000,
            latency: LatencySummary {
                count: 100,
                mean_ns: 27_900_000.0,
                sd_ns: 28_100_000.0,
                max_ns: 3_335_000_000,
                p50_ns: 1_000_000,
                p99_ns: 250_000_000,
                p999_ns: 3_000_000_000,
            },
            samples_ns: vec![],
            samples_truncated: false,
            counts: DeadlineCounts::default(),
            desired_cpu_pct: 78.5,
            deadlines_met_pct: (bench != Bench::Gaming).then_some(44.0),
            measured_cpu_pct: 39.2,
            asked_cpu_pct: 40.0,
            task_policy: Policy::Other,
            timer: None,
            memory_locked: true,
            load_report: LoadReport::default(),
        }
    }

    #[test]
    fn rows_look_like_interbenchs() {
        // interbench's sample: "Burn\t   27.9 +/- 28.1        3335\t\t78.5\t         44"
        let r = row(&measurement(Bench::X), false);
        assert!(
            r.starts_with("Burn\t   27.9 +/- 28.1        3335\t\t78.5\t         44\t"),
            "{r:?}"
        );
        assert!(r.ends_with("      1     250    3000   39.2 of 40"), "{r:?}");
        let gaming = row(&measurement(Bench::Gaming), false);
        assert!(
            gaming.starts_with("Burn\t   27.9 +/- 28.1        3335\t\t78.5\t      1 "),
            "{gaming:?}"
        );
    }

    #[test]
    fn headers_name_the_bench_and_units() {
        let mut s = InteractiveSettings {
            duration_s: 30,
            burn_threads: 4,
            bench_nice: 0,
            load_nice: 0,
            realtime: false,
            pinned_cpu: None,
            custom: None,
            benches: vec![],
            loads: vec![],
            file_bytes: 1 << 30,
            memload_mb: None,
            hack_groups: 50,
            settle_ms: 1000,
            comment: Some("test run".into()),
        };
        let h = bench_header(Bench::X, &s);
        assert!(h.contains("--- Benchmarking simulated cpu of X in the presence of simulated ---"));
        assert!(
            h.contains("Load\tLatency +/- SD (ms)  Max Latency   % Desired CPU  % Deadlines Met")
        );
        assert!(!bench_header(Bench::Gaming, &s).contains("Deadlines"));
        s.realtime = true;
        assert!(bench_header(Bench::Audio, &s).contains("of Audio real time in the presence"));
        assert!(bench_header(Bench::Audio, &s).contains("(us)"));
        let top = run_header(&s, 1234, "6.1.0", "202611221700");
        assert!(top.contains("Using 1234 loops per ms, running every load for 30 seconds"));
        assert!(top.contains("Benchmarking kernel 6.1.0 at datestamp 202611221700"));
        assert!(top.contains("Comment: test run"));
    }
}
