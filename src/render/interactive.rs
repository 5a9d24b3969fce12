//! interbench's report: a table per bench, a row per load, in interbench's own format (its
//! latency includes whole missed intervals, its % desired CPU counts burns), with hostbench's
//! columns after interbench's: the pure wake-up latency's p50, p99 and p99.9, the timer's mean
//! lateness, and the CPU the bench process really used of what it asked for.

use std::fmt::Write;

use super::cformat::g;
use crate::calibration::CalibrationSource;
use crate::model::explain::Culprit;
use crate::model::interactive::Bench;
use crate::model::interactive::X_STEPS;
use crate::model::interactive::{
    DeviceTraffic, InteractiveResult, InteractiveSettings, LoadReport, Measurement,
};
use crate::model::{RunResult, SuiteResult};
use crate::platform::sched::Policy;
use crate::render::labelled::suites;
use crate::render::svg::{
    bar_chart, esc, line_chart, timeline, BarRow, Series, TimelineBar, XScale,
};
use crate::units;

/// interbench's opening lines.
pub fn run_header(
    settings: &InteractiveSettings,
    loops_per_ms: u64,
    kernel: &str,
    datestamp: &str,
) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "Load set to {} processors\n", settings.burn_threads);
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
    let _ = write!(cols, "\twake p50     p99   p99.9  timer late  CPU% used");
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
    let scale = if realtime {
        units::NS_PER_US
    } else {
        units::NS_PER_MS
    };
    let l = &m.latency;
    let mut s = format!(
        "{}\t{:>7} +/- {:<9}{:>7}\t\t{:>4}",
        m.load.name(),
        num(l.mean_ns / scale),
        num(l.interbench_sd() / scale),
        num(l.max_ns as f64 / scale),
        g(m.desired_cpu_pct, 3)
    );
    if let Some(d) = m.deadlines_met_pct {
        let _ = write!(s, "\t{:>11}", g(d, 3));
    }
    match (&m.wake, &m.timer) {
        (Some(w), Some(t)) => {
            let _ = write!(
                s,
                "\t{:>8} {:>7} {:>7} {:>11}",
                num(w.p50_ns as f64 / scale),
                num(w.p99_ns as f64 / scale),
                num(w.p999_ns as f64 / scale),
                num(t.mean_oversleep_ns / scale)
            );
        }
        _ => {
            let _ = write!(s, "\t{:>8} {:>7} {:>7} {:>11}", "-", "-", "-", "-");
        }
    }
    let _ = write!(
        s,
        "  {:>5} of {}",
        g(m.measured_cpu_pct, 3),
        g(m.asked_cpu_pct, 3)
    );
    if let Some(note) = x_ramp_note(m) {
        let _ = write!(s, "  ({note})");
    }
    s
}

/// For X: which part of its 0→100% ramp the pair went through, when not the whole of it.
pub fn x_ramp_note(m: &Measurement) -> Option<String> {
    if m.bench != Bench::X || m.counts.periods >= X_STEPS {
        return None;
    }
    Some(format!(
        "X ramp 0-{}% only",
        m.counts.periods.saturating_sub(1)
    ))
}

/// `--explain`: each pair's worst samples, a few lines each, like rtla timerlat's
/// auto-analysis: the window from the deadline to the task running, its three phases, and what
/// held the CPU in each (task names escaped: any task may name itself anything).
pub fn explanations(r: &InteractiveResult) -> String {
    let mut out = String::new();
    for m in &r.measurements {
        let Some(x) = &m.explained else { continue };
        super::explain::explained(
            &mut out,
            format_args!(
                "Why {} under {} was late: its {} worst of {} samples, deadline to running",
                m.bench.name(),
                m.load.name(),
                x.samples.len(),
                m.latency.count
            ),
            x,
            &super::explain::INTERACTIVE,
        );
    }
    out
}

/// `run --explain`'s summary: a line per explained pair, its worst sample and what held the
/// CPU longest in it.
pub fn worst_explained(r: &InteractiveResult) -> Vec<String> {
    r.measurements
        .iter()
        .filter_map(|m| {
            let s = m.explained.as_ref()?.samples.first()?;
            let main = super::explain::mostly(s);
            Some(format!(
                "{} under {}: worst {} from deadline to running, {main}",
                m.bench.name(),
                m.load.name(),
                units::ms_text(s.window_ns as f64)
            ))
        })
        .collect()
}

/// What hostbench adds after the tables: how the run went and how far to trust it.
pub fn footer(r: &InteractiveResult) -> String {
    let mut out = explanations(r);
    calibration_lines(&mut out, r);
    setting_lines(&mut out, r);
    rested_check_line(&mut out, r);
    overhead_lines(&mut out, r);
    out
}

/// The loop's speed, where it came from, and whether it held over the run.
fn calibration_lines(out: &mut String, r: &InteractiveResult) {
    let cal = &r.calibration;
    let source = match cal.source {
        CalibrationSource::Measured => "measured at the start",
        CalibrationSource::Cached => "from the calibration cache",
        CalibrationSource::Given => "given with -l",
    };
    let _ = writeln!(out, "\nloops_per_ms {} ({source}).", cal.loops_per_ms);
    for line in super::calibration::lines(cal) {
        let _ = writeln!(out, "{line}");
    }
    if let Some(d) = r.drift {
        let (how, much) = if d.slower_pct >= 0.0 {
            ("slower", d.slower_pct)
        } else {
            ("faster", -d.slower_pct)
        };
        let verdict = if d.drifted {
            "the CPU's speed drifted during the run: CPU shares and deadlines are less comparable than usual"
        } else {
            "within what the measurements' own noise allows"
        };
        let _ = writeln!(
            out,
            "Calibration re-checked: the loop ran {much:.1}% {how} after the last pair than before the first (noise ±{:.1}%): {verdict}.",
            d.noise_pct
        );
    }
    if let (CalibrationSource::Given, Some(gap)) = (cal.source, r.given_gap_pct()) {
        let _ = writeln!(
            out,
            "This host's own loop runs {:.0} loops/ms, {:.1}% {} than the -l value: every burn is sized by -l, as interbench's -l intends (the same work on another machine).",
            r.calibration_end.map_or(0.0, |e| e.per_ms),
            gap.abs(),
            if gap >= 0.0 { "slower" } else { "faster" }
        );
    }
}

/// How the run kept time: -t's rounding, the threads' policies and placement, the
/// timekeepers' sleep and the CPUs' idle states.
fn setting_lines(out: &mut String, r: &InteractiveResult) {
    if let Some(t) = r.settings.requested_s {
        let _ = writeln!(
            out,
            "-t {t} was rounded up to {} s, as interbench does: X's 0-100% ramp takes 10.1 s (--exact-time keeps -t as given).",
            r.settings.duration_s
        );
    }
    let _ = writeln!(
        out,
        "Timekeepers: {}; tasks: {} (each as the bench worker's own sched_getscheduler reported it); load threads: {} (a Video, X or Custom load's timekeeper among them); memory locked: {}; placement: {}.",
        policies(r.measurements.iter().filter_map(|m| m.timer.and_then(|t| t.policy))),
        policies(r.measurements.iter().map(|m| m.task_policy)),
        policies(
            r.measurements
                .iter()
                .flat_map(|m| m.load_report.policies.iter().copied())
        ),
        if r.measurements.iter().all(|m| m.memory_locked) {
            "yes"
        } else {
            "no"
        },
        r.settings
            .pinned_cpu
            .map_or("free (not pinned)".to_string(), |c| format!(
                "everything pinned to CPU {c} (-u) but the timekeepers, which put themselves back on every CPU the run had, as interbench's do"
            ))
    );
    let _ = writeln!(
        out,
        "Timekeepers' sleep: {}.",
        if r.settings.relative_sleep {
            "relative, from when the task's request reached them (--relative-sleep, as interbench v0.31): a latency holds the task → timekeeper hand-off too"
        } else {
            "to the absolute deadline (the task → timekeeper hand-off is not in the latency; --relative-sleep puts it there, as interbench v0.31)"
        }
    );
    let _ = writeln!(
        out,
        "CPU idle states: {}.",
        if r.settings.idle_hold {
            "kept shallow while measuring (/dev/cpu_dma_latency held at 0, --idle-hold, as cyclictest does)"
        } else {
            "left to the kernel, as interbench did (wake-ups from deep idle are part of the latency)"
        }
    );
}

/// interbench's calibration rule's check after a rest, where the loop was measured.
fn rested_check_line(out: &mut String, r: &InteractiveResult) {
    if let Some(c) = r
        .calibration
        .measurement
        .as_ref()
        .and_then(|m| m.rested_check)
    {
        let mut on = c.cpu.map_or(String::new(), |cpu| format!(" on CPU {cpu}"));
        if c.disturbed > 0 {
            on.push_str(&format!(
                " ({} timings in which other tasks had the CPU for over 5% did not count)",
                c.disturbed
            ));
        }
        let outcome = if c.accepted {
            format!(
                "the check after a {:.0} ms rest passed at try {}",
                c.rest_ms, c.checks
            )
        } else {
            format!(
                "no check after a {:.0} ms rest passed in {} tries, so loops_per_ms is their median speed (interbench would go on trying)",
                c.rest_ms, c.checks
            )
        };
        let _ = writeln!(
            out,
            "Calibration: interbench's rule (a 1 ms burn within 1%, then within 5% after a rest), {}{on}: {outcome}.",
            c.policy
        );
    }
}

/// The tool's own cost, what the disk loads did, what was skipped, the notes, and whether
/// every pair was measured.
fn overhead_lines(out: &mut String, r: &InteractiveResult) {
    let tk_cpu: u64 = r
        .measurements
        .iter()
        .filter_map(|m| m.timer.map(|t| t.cpu_ns))
        .sum();
    let measured_ns: u64 = r.measurements.iter().map(|m| m.wall_ns).sum();
    let _ = writeln!(
        out,
        "Tool overhead: timekeepers {:.1} ms of CPU over {:.0} s measured; coordinator {:.1} ms over the {:.0} s run.",
        units::ms(tk_cpu as f64),
        units::secs(measured_ns as f64),
        units::ms(r.coordinator_cpu_ns as f64),
        units::secs(r.wall_ns as f64)
    );
    out.push_str(&disk_lines(r));
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
}

/// What the disk loads did, over every pair that ran one: what the Write load handed to
/// `write()` and what reached the device; what the Read load read and what the device read.
fn disk_lines(r: &InteractiveResult) -> String {
    let mut out = String::new();
    let writes: Vec<&LoadReport> = r
        .measurements
        .iter()
        .filter(|m| m.load.uses_files().0)
        .map(|m| &m.load_report)
        .collect();
    if !writes.is_empty() && r.settings.page_cache {
        let _ = writeln!(
            out,
            "Write load: {} handed to write() through the page cache, never waited for, in {} whole passes, each a new open with O_TRUNC closed at its end (--page-cache, as interbench v0.31); {}.",
            units::bytes(writes.iter().map(|l| l.bytes_handed).sum()),
            writes.iter().map(|l| l.write_passes).sum::<u64>(),
            device_traffic(&writes, "wrote", |d| d.bytes_written)
        );
    } else if !writes.is_empty() {
        let _ = writeln!(
            out,
            "Write load: {} handed to write(), {} written out to the device and waited for; {}.",
            units::bytes(writes.iter().map(|l| l.bytes_handed).sum()),
            units::bytes(writes.iter().map(|l| l.bytes_written).sum()),
            device_traffic(&writes, "wrote", |d| d.bytes_written)
        );
    }
    let reads: Vec<&LoadReport> = r
        .measurements
        .iter()
        .filter(|m| m.load.uses_files().1)
        .map(|m| &m.load_report)
        .collect();
    if !reads.is_empty() {
        let _ = writeln!(
            out,
            "Read load: {} read, {}; {}.",
            units::bytes(reads.iter().map(|l| l.bytes_read).sum()),
            if r.settings.page_cache {
                "the file kept in the page cache (--page-cache, as interbench v0.31)"
            } else {
                "the file dropped from the page cache after every pass (posix_fadvise DONTNEED)"
            },
            device_traffic(&reads, "read", |d| d.bytes_read)
        );
    }
    out
}

/// "the device (vda) wrote 1.2 GiB during those pairs", from the loads' device counters.
fn device_traffic(reports: &[&LoadReport], verb: &str, bytes: fn(&DeviceTraffic) -> u64) -> String {
    let seen: Vec<&DeviceTraffic> = reports.iter().filter_map(|l| l.device.as_ref()).collect();
    match seen.first() {
        Some(d) => format!(
            "the device ({}) {verb} {} during those pairs",
            d.name,
            units::bytes(seen.iter().map(|d| bytes(d)).sum())
        ),
        None => "what the device did is not known (its file system has no block device)".into(),
    }
}

/// The distinct policies seen, as "SCHED_FIFO 96" or "SCHED_OTHER"; "none reported" without.
fn policies(seen: impl Iterator<Item = Policy>) -> String {
    let mut names: Vec<String> = Vec::new();
    for p in seen {
        let name = p.to_string();
        if !names.contains(&name) {
            names.push(name);
        }
    }
    if names.is_empty() {
        "none reported".into()
    } else {
        names.join(" and ")
    }
}

/// `run`'s summary line of an interactive part.
pub fn interactive_line(i: &InteractiveResult) -> String {
    match i.worst() {
        Some(m) => format!(
            "Worst interactive case{}: {} under {}: {}latency mean {}, p99 {}, max {}",
            if i.settings.pinned_cpu.is_some() {
                ", pinned"
            } else {
                ""
            },
            m.bench.name(),
            m.load.name(),
            m.deadlines_met_pct
                .map(|d| format!(
                    "{d:.1}% of deadlines met, {:.1}% desired CPU; ",
                    m.desired_cpu_pct
                ))
                .unwrap_or_default(),
            units::ms_text(m.latency.mean_ns),
            units::ms_text(m.latency.p99_ns as f64),
            units::ms_text(m.latency.max_ns as f64)
        ),
        None => "Interactive: nothing measured".into(),
    }
}

/// An interactive part: its pairs and the worst for deadlines.
pub fn headline(i: &InteractiveResult) -> String {
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

impl super::SuiteView for InteractiveResult {
    fn report(&self, run: &crate::model::RunResult) -> String {
        report(
            self,
            &run.environment.host.kernel_release.to_string(),
            &super::datestamp(run),
        )
    }

    fn headline(&self) -> String {
        headline(self)
    }

    fn summary_line(&self) -> String {
        interactive_line(self)
    }

    fn summary_notes(&self) -> Vec<String> {
        let mut out: Vec<String> = worst_explained(self)
            .into_iter()
            .map(|l| format!("  {l}"))
            .collect();
        if let Some(d) = self.drift.filter(|d| d.drifted) {
            out.push(format!(
                "Calibration drift: the burn loop ran {:.1}% {} after the interactive part than before it (noise ±{:.1}%): the CPU's speed changed during the run",
                d.slower_pct.abs(),
                if d.slower_pct >= 0.0 { "slower" } else { "faster" },
                d.noise_pct
            ));
        }
        out
    }

    fn skipped(&self) -> Vec<String> {
        self.skipped
            .iter()
            .map(|s| format!("interactive: the {} load ({})", s.load.name(), s.reason))
            .collect()
    }
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

/// One line of `interactive --list`.
#[derive(serde::Serialize)]
pub struct UnitRow {
    /// "bench" or "load".
    pub kind: &'static str,
    pub name: &'static str,
    pub about: &'static str,
    /// Part of a default run.
    pub default: bool,
    /// Runs here, or why not (`why_not_here` in JSON: null where it runs here).
    #[serde(rename = "why_not_here", serialize_with = "super::why_not_here")]
    pub here: Result<(), String>,
}

/// `interactive --list`: a line a bench or load.
pub fn unit_list(rows: &[UnitRow]) -> String {
    let width = rows.iter().map(|r| r.name.len()).max().unwrap_or(0);
    let mut out = String::new();
    for r in rows {
        let _ = writeln!(
            out,
            "{:<5}  {:width$}  {:<8}  {}; {}",
            r.kind,
            r.name,
            if r.default { "default" } else { "" },
            r.about,
            super::runs_here(&r.here)
        );
    }
    out
}

/// Points a latency CDF is drawn with, at most.
const CDF_POINTS: usize = 120;

/// The wake-up latency CDF of one measurement, in ms, from its raw samples (Gaming, which
/// never sleeps: its frames' overruns).
fn cdf(m: &Measurement) -> Vec<(f64, f64)> {
    let raw = if m.wake_samples_ns.is_empty() {
        &m.samples_ns
    } else {
        &m.wake_samples_ns
    };
    let mut s: Vec<u64> = raw.clone();
    s.sort_unstable();
    let n = s.len();
    if n == 0 {
        return Vec::new();
    }
    let step = n.div_ceil(CDF_POINTS).max(1);
    let mut pts: Vec<(f64, f64)> = (0..n)
        .step_by(step)
        .map(|i| (units::ms(s[i] as f64), (i + 1) as f64 / n as f64))
        .collect();
    if pts.last().map(|p| p.1) != Some(1.0) {
        pts.push((units::ms(s[n - 1] as f64), 1.0));
    }
    pts
}

/// Its section of `report`'s HTML page: latency CDFs and deadlines across `results`.
pub fn report_section(out: &mut String, results: &[(String, RunResult)]) {
    let all = suites(results, |s| match s {
        SuiteResult::Interactive(i) => Some(i),
        _ => None,
    });
    if all.is_empty() {
        return;
    }
    out.push_str("<h2>interactive (interbench)</h2><p>Wake-up latency of each simulated task, as the fraction of wake-ups within a latency (a cumulative distribution on a log scale of latency: further left is better), one line per background load; then the share of deadlines met.</p>");
    for (label, r) in &all {
        let mut benches: Vec<_> = r.measurements.iter().map(|m| m.bench).collect();
        benches.dedup();
        for b in benches {
            let series: Vec<Series> = r
                .measurements
                .iter()
                .filter(|m| m.bench == b)
                .map(|m| Series {
                    name: format!("under {}", m.load.name()),
                    points: cdf(m),
                })
                .collect();
            out.push_str(&line_chart(
                "interactive-latency",
                &format!("{label}: {} wake-up latency", b.name()),
                "wake-up latency (ms, log scale)",
                "fraction of wake-ups",
                &series,
                XScale::Log10,
            ));
        }
    }
    for (label, r) in &all {
        for m in &r.measurements {
            explained_section(out, label, m);
        }
    }
    let series: Vec<String> = all.iter().map(|(l, _)| l.to_string()).collect();
    let mut pairs: Vec<String> = Vec::new();
    for (_, r) in &all {
        for m in r
            .measurements
            .iter()
            .filter(|m| m.deadlines_met_pct.is_some())
        {
            let p = format!("{} under {}", m.bench.name(), m.load.name());
            if !pairs.contains(&p) {
                pairs.push(p);
            }
        }
    }
    let rows: Vec<BarRow> = pairs
        .iter()
        .map(|p| BarRow {
            label: p.clone(),
            values: all
                .iter()
                .map(|(_, r)| {
                    r.measurements
                        .iter()
                        .find(|m| &format!("{} under {}", m.bench.name(), m.load.name()) == p)
                        .and_then(|m| m.deadlines_met_pct)
                })
                .collect(),
        })
        .collect();
    out.push_str(&bar_chart(
        "interactive-deadlines",
        "Deadlines met",
        "deadlines met (%)",
        &series,
        &rows,
        None,
    ));
}

/// `--explain`: a timeline of each explained sample (one lane per CPU, a bar per stretch of
/// what ran, the deadline, the timer, the wake-up and the task running marked) and its parts.
fn explained_section(out: &mut String, run_label: &str, m: &Measurement) {
    let Some(x) = &m.explained else { return };
    let _ = write!(
        out,
        "<h3>{}: why {} under {} was late</h3><p>The {} worst samples, from the kernel's scheduling trace: each CPU's activity from the deadline to the task running (ms after the deadline).</p>",
        esc(run_label),
        m.bench.name(),
        m.load.name(),
        x.samples.len()
    );
    for s in &x.samples {
        // Keys: each distinct culprit, the task itself and its timekeeper named as such.
        let mut keys: Vec<String> = Vec::new();
        let mut key_of = |c: &Culprit| {
            let name = match c {
                Culprit::Task { pid, .. } if *pid == s.task_pid => "the task itself".to_string(),
                Culprit::Task { pid, .. } if *pid == s.timekeeper_pid => {
                    "its timekeeper".to_string()
                }
                // The legend has room for about 24 characters; the bars' hover text is whole.
                c => c.describe().cut(24).to_string(),
            };
            match keys.iter().position(|k| *k == name) {
                Some(i) => i,
                None => {
                    keys.push(name);
                    keys.len() - 1
                }
            }
        };
        let mut cpus: Vec<u32> = s.segments.iter().map(|g| g.cpu).collect();
        cpus.sort_unstable();
        cpus.dedup();
        let bars: Vec<TimelineBar> = s
            .segments
            .iter()
            .map(|g| TimelineBar {
                lane: cpus.iter().position(|&c| c == g.cpu).unwrap_or(0),
                start: g.start_ns as f64 / 1e6,
                end: g.end_ns as f64 / 1e6,
                key: key_of(&g.culprit),
                text: format!(
                    "CPU {}: {} for {}",
                    g.cpu,
                    g.culprit.describe(),
                    units::ms_text((g.end_ns - g.start_ns) as f64)
                ),
            })
            .collect();
        let mut marks = vec![
            (0.0, "deadline".to_string()),
            (s.fired_ns as f64 / 1e6, "timer".to_string()),
        ];
        if let Some(w) = s.woken_ns {
            marks.push((w as f64 / 1e6, "woken".to_string()));
        }
        marks.push((s.window_ns as f64 / 1e6, "running".to_string()));
        let lanes: Vec<String> = cpus.iter().map(|c| format!("CPU {c}")).collect();
        out.push_str(&timeline(
            "explain-timeline",
            &format!(
                "sample {}: {} from deadline to running",
                s.seq,
                units::ms_text(s.window_ns as f64)
            ),
            "ms after the deadline",
            &lanes,
            &bars,
            &marks,
            &keys,
        ));
        out.push_str("<table><tr><th>phase</th><th>CPU</th><th>what ran</th><th>ms</th></tr>");
        for p in &s.parts {
            let _ = write!(
                out,
                "<tr><td>{}</td><td class=\"n\">{}</td><td>{}</td><td class=\"n\">{:.3}</td></tr>",
                p.phase.name(),
                p.cpu,
                esc(&p.culprit.describe().to_string()),
                p.ns as f64 / 1e6
            );
        }
        if s.unaccounted_ns > 0 {
            let _ = write!(
                out,
                "<tr><td colspan=\"3\">unaccounted (no trace event)</td><td class=\"n\">{:.3}</td></tr>",
                s.unaccounted_ns as f64 / 1e6
            );
        }
        out.push_str("</table>");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_look_like_interbenchs() {
        // interbench's sample: "Burn\t   27.9 +/- 28.1        3335\t\t78.5\t         44"
        let r = row(&Measurement::example(Bench::X), false);
        assert!(
            r.starts_with("Burn\t   27.9 +/- 28.1        3335\t\t78.5\t         44\t"),
            "{r:?}"
        );
        // Then the wake-up latency's percentiles, the timer's mean lateness, the CPU used.
        assert!(
            r.ends_with("\t       1       5       8        0.06   39.2 of 40"),
            "{r:?}"
        );
        let gaming = row(&Measurement::example(Bench::Gaming), false);
        assert!(
            gaming.starts_with("Burn\t   27.9 +/- 28.1        3335\t\t78.5\t       -       - "),
            "{gaming:?}"
        );
        // X over fewer steps than its 101-step ramp says so.
        let mut short = Measurement::example(Bench::X);
        short.counts.periods = 30;
        assert!(row(&short, false).ends_with("of 40  (X ramp 0-29% only)"));
    }

    #[test]
    fn headers_name_the_bench_and_units() {
        let mut s = InteractiveSettings {
            comment: Some("test run".into()),
            ..InteractiveSettings::example()
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
        assert!(top.starts_with(&format!(
            "Load set to {} processors\n\nUsing 1234",
            s.burn_threads
        )));
        assert!(top.contains("Using 1234 loops per ms, running every load for 30 seconds"));
        assert!(top.contains("Benchmarking kernel 6.1.0 at datestamp 202611221700"));
        assert!(top.contains("Comment: test run"));
    }
}
