//! `hostbench report`: one self-contained HTML page (inline CSS and SVG, no script, and a
//! Content-Security-Policy that forbids every request) with the environment of each result,
//! a plot per suite, and, for two or more results, the comparison of the first with each other.

use std::fmt::Write;

use crate::compare::Comparison;
use crate::model::interactive::explain::Culprit;
use crate::model::interactive::Measurement;
use crate::model::{RunResult, SuiteResult};
use crate::render::environment::host_lines;
use crate::render::noise::check_line;
use crate::render::svg::{
    bar_chart, esc, line_chart, timeline, BarRow, Series, TimelineBar, XScale,
};
use crate::text::Text;
use crate::units;

/// Points a latency CDF is drawn with, at most.
const CDF_POINTS: usize = 120;

/// The report pages' rules (the fleet page adds its own).
pub(crate) const STYLE: &str = "body{font-family:sans-serif;margin:2em;color:#222;max-width:70em}\
h1{font-size:1.6em}h2{font-size:1.3em;border-bottom:1px solid #ccc;margin-top:2em}\
h3{font-size:1.1em}table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;\
padding:2px 8px;text-align:left}td.n{text-align:right}figure{margin:1em 0}\
svg{background:#fff;border:1px solid #eee;font-size:11px}.title{text-anchor:middle;font-size:13px;\
font-weight:bold}.tick{text-anchor:middle;fill:#444}.ytick{text-anchor:end}.label{text-anchor:middle;\
fill:#222}.axis{stroke:#222}.grid{stroke:#eee}.reference{stroke:#000;stroke-dasharray:4 3}\
.reftext{text-anchor:start;font-size:11px}.legend{fill:#222}.better{color:#070}.worse{color:#b00}\
pre{background:#f6f6f6;padding:.5em}";

/// The whole page. `results` are (label, result) pairs in the order given.
pub fn html(results: &[(String, RunResult)], comparisons: &[Comparison]) -> String {
    let mut out = String::new();
    let labels: Vec<String> = results.iter().map(|(l, _)| l.clone()).collect();
    let _ = write!(
        out,
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">\
<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">\
<title>hostbench report: {}</title><style>{STYLE}</style></head><body><h1>hostbench report: {}</h1>",
        esc(&labels.join(", ")),
        esc(&labels.join(", "))
    );
    out.push_str("<h2>Environment</h2>");
    for (label, r) in results {
        let _ = write!(
            out,
            "<h3>{}: {}{}</h3><p>hostbench {}, started {} UTC. Command: <code>{}</code></p><pre>{}</pre><p>{}</p>",
            esc(label),
            esc(&r.suite_names()),
            if r.incomplete { " (incomplete)" } else { "" },
            esc(&r.tool_version.to_string()),
            r.started_at.format("%Y-%m-%d %H:%M:%S"),
            esc(&r.shown_command_line()),
            esc(&host_lines(&r.environment)),
            esc(&check_line(r).unwrap_or_else(|| "No noise check (--no-noise-check).".into()))
        );
    }
    if !comparisons.is_empty() {
        out.push_str("<h2>Comparison</h2>");
        for c in comparisons {
            out.push_str(&comparison_table(c));
        }
    }
    index_section(&mut out, results);
    interactive_section(&mut out, results);
    sched_section(&mut out, results);
    noise_section(&mut out, results);
    out.push_str("</body></html>\n");
    out
}

fn comparison_table(c: &Comparison) -> String {
    let mut out = format!(
        "<h3>{} → {}</h3><p>Verdicts from {}. {}</p><table><tr><th>measurement</th><th>unit</th><th>A</th><th>B</th><th>change</th><th>95% CI of change</th><th>verdict</th></tr>",
        esc(&c.a.source),
        esc(&c.b.source),
        esc(&c.test),
        esc(&c.notes.join("; "))
    );
    for r in &c.rows {
        let class = match r.verdict {
            crate::compare::Verdict::Better => "better",
            crate::compare::Verdict::Worse => "worse",
            _ => "",
        };
        let _ = write!(
            out,
            "<tr class=\"{class}\"><td>{}</td><td>{}</td><td class=\"n\">{:.4}</td><td class=\"n\">{:.4}</td><td class=\"n\">{}</td><td>{}</td><td class=\"{class}\">{}</td></tr>",
            esc(&r.name),
            esc(&r.unit),
            r.a,
            r.b,
            esc(&crate::render::compare::change(r)),
            esc(&crate::render::compare::ci(r)),
            esc(&crate::render::compare::verdict(r))
        );
    }
    out.push_str("</table>");
    out
}

/// Each result's suites of one kind, with the result's label; a suite that measured pinned
/// (`hostbench run`'s second pass over the ping-pongs) is labelled so, a series of its own.
fn suites<'a, T>(
    results: &'a [(String, RunResult)],
    pick: impl Fn(&'a SuiteResult) -> Option<&'a T>,
) -> Vec<(String, &'a T)> {
    let mut out = Vec::new();
    for (l, r) in results {
        for s in &r.suites {
            if let Some(t) = pick(s) {
                let label = if pinned(s) {
                    format!("{l}, pinned")
                } else {
                    l.clone()
                };
                out.push((label, t));
            }
        }
    }
    out
}

/// Whether a suite ran with its ping-pongs pinned to one CPU.
fn pinned(s: &SuiteResult) -> bool {
    s.data().pinned()
}

fn index_section(out: &mut String, results: &[(String, RunResult)]) {
    let all = suites(results, |s| match s {
        SuiteResult::Index(i) => Some(i),
        _ => None,
    });
    if all.is_empty() {
        return;
    }
    out.push_str("<h2>index (UnixBench)</h2><p>Index value per test: 10 × score / the baseline machine's score, so the baseline (George, a SPARCstation 20-61) scores 10.</p>");
    let series: Vec<String> = all.iter().map(|(l, _)| l.to_string()).collect();
    let mut copies: Vec<usize> = all
        .iter()
        .flat_map(|(_, i)| i.passes.iter().map(|p| p.copies))
        .collect();
    copies.sort();
    copies.dedup();
    for c in copies {
        let mut names: Vec<(Text, Text)> = Vec::new();
        for (_, i) in &all {
            for p in i.passes.iter().filter(|p| p.copies == c) {
                for t in p.tests.iter().filter(|t| t.index.is_some()) {
                    if !names.iter().any(|(n, _)| n == &t.name) {
                        names.push((t.name.clone(), t.msg.clone()));
                    }
                }
            }
        }
        let rows: Vec<BarRow> = names
            .iter()
            .map(|(name, msg)| BarRow {
                label: msg.to_string(),
                values: all
                    .iter()
                    .map(|(_, i)| {
                        i.passes
                            .iter()
                            .filter(|p| p.copies == c)
                            .flat_map(|p| p.tests.iter())
                            .find(|t| &t.name == name)
                            .and_then(|t| t.index)
                    })
                    .collect(),
            })
            .collect();
        let scores: Vec<String> = all
            .iter()
            .filter_map(|(l, i)| {
                i.passes
                    .iter()
                    .find(|p| p.copies == c)
                    .and_then(|p| p.system_index)
                    .map(|s| format!("{l}: {s:.1}"))
            })
            .collect();
        out.push_str(&bar_chart(
            "index",
            &format!(
                "Index per test, {c} cop{} (overall {})",
                if c == 1 { "y" } else { "ies" },
                scores.join(", ")
            ),
            "index value (baseline = 10)",
            &series,
            &rows,
            Some((10.0, "baseline 10")),
        ));
    }
}

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

fn interactive_section(out: &mut String, results: &[(String, RunResult)]) {
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
                    crate::render::interactive::ms((g.end_ns - g.start_ns) as f64)
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
                crate::render::interactive::ms(s.window_ns as f64)
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

fn sched_section(out: &mut String, results: &[(String, RunResult)]) {
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

fn noise_section(out: &mut String, results: &[(String, RunResult)]) {
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
            &format!("{label}: {}", super::headline::noise(n)),
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
    use crate::model::interactive::explain::{Explained, ExplainedSample, Part, Phase, Segment};
    use crate::model::interactive::{Bench, InteractiveResult};

    /// A Video under Burn pair whose worst sample waited 4 ms behind a task that named itself
    /// with markup and a terminal escape.
    fn explained_result() -> RunResult {
        let hostile = Culprit::Task {
            pid: 77,
            comm: "<b>\u{1b}]0;x".into(),
            prio: Some(120),
            policy: Some("SCHED_OTHER".into()),
        };
        let mut m = Measurement::example(Bench::Video);
        m.explained = Some(Explained {
            requested: 1,
            samples: vec![ExplainedSample {
                seq: 9,
                deadline_mono_ns: 1_000_000_000,
                window_ns: 4_050_000,
                fired_ns: 20_000,
                woken_ns: Some(50_000),
                task_pid: 12,
                timekeeper_pid: 13,
                woken_on_cpu: Some(1),
                ran_on_cpu: Some(1),
                parts: vec![
                    Part {
                        phase: Phase::Timer,
                        cpu: 0,
                        culprit: Culprit::Idle,
                        ns: 20_000,
                    },
                    Part {
                        phase: Phase::Wait,
                        cpu: 1,
                        culprit: hostile.clone(),
                        ns: 4_000_000,
                    },
                ],
                unaccounted_ns: 30_000,
                segments: vec![
                    Segment {
                        cpu: 0,
                        start_ns: 0,
                        end_ns: 4_050_000,
                        culprit: Culprit::Idle,
                    },
                    Segment {
                        cpu: 1,
                        start_ns: 0,
                        end_ns: 4_050_000,
                        culprit: hostile,
                    },
                ],
            }],
            events: 1000,
            overruns: 0,
            reader_cpu_ns: 1_000_000,
            explain_ns: 2_000_000,
        });
        let mut i = InteractiveResult::example();
        i.measurements = vec![m];
        let mut r = RunResult::example("host", false);
        r.suites = vec![SuiteResult::Interactive(i)];
        r
    }

    #[test]
    fn an_explained_sample_is_drawn_as_a_timeline_with_its_parts_and_names_escaped() {
        let page = html(&[("result 1".into(), explained_result())], &[]);
        assert!(
            page.contains(r#"data-plot="explain-timeline" data-points="2""#),
            "one bar per segment"
        );
        assert!(page.contains("sample 9: 4.050 ms from deadline to running"));
        for mark in ["deadline", "timer", "woken", "running"] {
            assert!(
                page.contains(&format!(r#"class="tick">{mark}</text>"#)),
                "{mark}"
            );
        }
        assert!(page.contains("<td>waiting to run</td><td class=\"n\">1</td>"));
        assert!(page.contains("unaccounted (no trace event)"));
        assert!(!page.contains("<b>"), "a task's name is text, not markup");
        assert!(page.contains("&lt;b&gt;"));
    }

    #[test]
    fn the_text_report_gives_each_phase_and_escapes_task_names() {
        let SuiteResult::Interactive(i) = &explained_result().suites[0] else {
            unreachable!()
        };
        let text = crate::render::interactive::explanations(i);
        assert!(
            text.contains("Why Video under Burn was late: its 1 worst"),
            "{text}"
        );
        assert!(text.contains("sample 9: 4.050 ms"), "{text}");
        assert!(text.contains("woken on CPU 1, ran on CPU 1"), "{text}");
        assert!(
            text.contains(
                "waiting to run  4.000 ms: <b>\\e]0;x [77] SCHED_OTHER nice 0 4.000 ms (CPU 1)"
            ),
            "{text}"
        );
        assert!(text.contains("unaccounted     0.030 ms"), "{text}");
        assert!(!text.contains('\u{1b}'), "no raw escape reaches a terminal");
    }
}
